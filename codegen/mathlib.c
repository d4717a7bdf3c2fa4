/* codegen/mathlib.c — the math of the loop IR's intrinsics as internal
 * functions of the generated module, for CgOptions.no_libm (firmware that
 * links no libm).  Every function is straight-line LLVM IR (selects, no
 * branches), computes in double and rounds once to the argument's type:
 *
 *   exp    x = k ln2 + r (|r| <= ln2/2, ln2 split in two), Taylor to r^11,
 *          times 2^k built from the exponent bits (in two halves, so that
 *          results down to the subnormals come out right)
 *   log    x = 2^e m (m in [sqrt(1/2), sqrt(2))), s = (m-1)/(m+1),
 *          log m = 2 atanh s, odd series to s^15
 *   sqrt   Newton's iteration from the halved exponent (4 steps)
 *   sin cos tan   x = k pi/2 + r (pi/2 in two parts), Taylor series of sin
 *          and cos to r^17 / r^18, the quadrant from k mod 4
 *   atan   1/x for |x| > 1, then atan t = pi/6 + atan((sqrt3 t - 1)/(t + sqrt3))
 *          for t > tan(pi/12), odd series to u^23
 *   erf    Taylor series (67 terms, Horner in x^2) for |x| < 3.9, else +-1
 *   the others from these: tanh, sinh, cosh from exp; asinh, acosh, atanh
 *          from log and sqrt; asin, acos from atan and sqrt; pow from exp
 *          and log (negative bases with integral exponents keep their sign);
 *          floor, ceil, round_even, trunc and fmod through a 64-bit integer
 *          conversion (exact while |x| < 2^52; fmod exact while |a/b| < 2^29)
 *
 * Accuracy on float32 arguments: within 1e-6 relative of the correctly
 * rounded result (tests/unit/test_mathlib.c; sin/cos/tan for |x| < 1e5).
 * float64 arguments get about 1e-12 relative, except erf (float accuracy
 * beyond |x| = 3.9).  On targets without a double-precision FPU the double
 * arithmetic goes through the compiler's runtime helpers (__aeabi_d*,
 * __adddf3, ...), which are not libm. */
#include "codegen/cg_impl.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct M {
    CgCtx *c;
    LLVMBuilderRef B;
    LLVMTypeRef d, i64, i1;
} M;

/* ------------------------------------------------------------ helpers */

static LLVMValueRef D(M *m, double v) { return LLVMConstReal(m->d, v); }
static LLVMValueRef I64(M *m, long long v) { return LLVMConstInt(m->i64, (unsigned long long)v, 1); }
static LLVMValueRef add(M *m, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildFAdd(m->B, a, b, ""); }
static LLVMValueRef sub(M *m, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildFSub(m->B, a, b, ""); }
static LLVMValueRef mul(M *m, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildFMul(m->B, a, b, ""); }
static LLVMValueRef dvd(M *m, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildFDiv(m->B, a, b, ""); }
static LLVMValueRef neg(M *m, LLVMValueRef a) { return LLVMBuildFNeg(m->B, a, ""); }
static LLVMValueRef sel(M *m, LLVMValueRef k, LLVMValueRef a, LLVMValueRef b)
{
    return LLVMBuildSelect(m->B, k, a, b, "");
}
static LLVMValueRef cmp(M *m, LLVMRealPredicate p, LLVMValueRef a, LLVMValueRef b)
{
    return LLVMBuildFCmp(m->B, p, a, b, "");
}
static LLVMValueRef lt(M *m, LLVMValueRef a, double b) { return cmp(m, LLVMRealOLT, a, D(m, b)); }
static LLVMValueRef gt(M *m, LLVMValueRef a, double b) { return cmp(m, LLVMRealOGT, a, D(m, b)); }
static LLVMValueRef is_nan(M *m, LLVMValueRef a) { return cmp(m, LLVMRealUNO, a, a); }
static LLVMValueRef fabs_(M *m, LLVMValueRef a) { return sel(m, lt(m, a, 0), neg(m, a), a); }
/* b with the sign of a (a < 0 only; -0 stays +) */
static LLVMValueRef signed_like(M *m, LLVMValueRef a, LLVMValueRef b) { return sel(m, lt(m, a, 0), neg(m, b), b); }
static LLVMValueRef nan_(M *m) { return D(m, NAN); }

/* sum c[i] x^i, Horner */
static LLVMValueRef poly(M *m, LLVMValueRef x, const double *c, int n)
{
    LLVMValueRef r = D(m, c[n - 1]);
    for (int i = n - 2; i >= 0; i--)
        r = add(m, mul(m, r, x), D(m, c[i]));
    return r;
}

/* Round half away from zero to an i64 (the caller keeps |x| < 2^62). */
static LLVMValueRef round_i64(M *m, LLVMValueRef x)
{
    return LLVMBuildFPToSI(m->B, add(m, x, sel(m, lt(m, x, 0), D(m, -0.5), D(m, 0.5))), m->i64, "");
}

/* An internal function `dlcc.NAME` of n doubles returning double, built once
 * per module by body(). */
typedef LLVMValueRef (*BodyFn)(M *m, LLVMValueRef *x);

static LLVMValueRef get_fn(M *m, const char *name, unsigned n, BodyFn body);
static LLVMValueRef call(M *m, const char *name, BodyFn body, LLVMValueRef *x, unsigned n)
{
    LLVMValueRef f = get_fn(m, name, n, body);
    LLVMTypeRef ps[3] = { m->d, m->d, m->d };
    return LLVMBuildCall2(m->B, LLVMFunctionType(m->d, ps, n, 0), f, x, n, "");
}

/* ------------------------------------------------------------ cores */

static LLVMValueRef exp_body(M *m, LLVMValueRef *a)
{
    static const double c[12] = { 1.0, 1.0, 1.0 / 2, 1.0 / 6, 1.0 / 24, 1.0 / 120, 1.0 / 720, 1.0 / 5040,
                                  1.0 / 40320, 1.0 / 362880, 1.0 / 3628800, 1.0 / 39916800 };
    LLVMValueRef x = a[0];
    LLVMValueRef xs = sel(m, is_nan(m, x), D(m, 0), sel(m, gt(m, x, 710), D(m, 710), sel(m, lt(m, x, -746), D(m, -746), x)));
    LLVMValueRef k = round_i64(m, mul(m, xs, D(m, 1.4426950408889634074)));
    LLVMValueRef kf = LLVMBuildSIToFP(m->B, k, m->d, "");
    LLVMValueRef r = sub(m, sub(m, xs, mul(m, kf, D(m, 6.93147180369123816490e-01))),
                         mul(m, kf, D(m, 1.90821492927058770002e-10)));
    LLVMValueRef p = poly(m, r, c, 12);
    /* 2^k = 2^k1 * 2^(k-k1), k1 = k/2: each factor a normal double */
    LLVMValueRef k1 = LLVMBuildSDiv(m->B, k, I64(m, 2), "");
    LLVMValueRef k2 = LLVMBuildSub(m->B, k, k1, "");
    LLVMValueRef s1 = LLVMBuildBitCast(m->B, LLVMBuildShl(m->B, LLVMBuildAdd(m->B, k1, I64(m, 1023), ""),
                                                          I64(m, 52), ""), m->d, "");
    LLVMValueRef s2 = LLVMBuildBitCast(m->B, LLVMBuildShl(m->B, LLVMBuildAdd(m->B, k2, I64(m, 1023), ""),
                                                          I64(m, 52), ""), m->d, "");
    LLVMValueRef y = mul(m, mul(m, p, s1), s2);
    y = sel(m, gt(m, x, 709.8), D(m, INFINITY), sel(m, lt(m, x, -745.2), D(m, 0), y));
    return sel(m, is_nan(m, x), x, y);
}

static LLVMValueRef exp_d(M *m, LLVMValueRef x) { return call(m, "exp.core", exp_body, &x, 1); }

static LLVMValueRef log_body(M *m, LLVMValueRef *a)
{
    static const double c[8] = { 2.0, 2.0 / 3, 2.0 / 5, 2.0 / 7, 2.0 / 9, 2.0 / 11, 2.0 / 13, 2.0 / 15 };
    LLVMValueRef x = a[0];
    /* subnormal doubles: scale by 2^64 first */
    LLVMValueRef tiny = lt(m, x, 0x1p-1000);
    LLVMValueRef xn = sel(m, tiny, mul(m, x, D(m, 0x1p64)), x);
    LLVMValueRef bits = LLVMBuildBitCast(m->B, xn, m->i64, "");
    LLVMValueRef e = LLVMBuildSub(m->B, LLVMBuildAnd(m->B, LLVMBuildLShr(m->B, bits, I64(m, 52), ""), I64(m, 0x7ff), ""),
                                  I64(m, 1023), "");
    LLVMValueRef mant = LLVMBuildBitCast(m->B, LLVMBuildOr(m->B, LLVMBuildAnd(m->B, bits, I64(m, 0xfffffffffffffLL), ""),
                                                            I64(m, 1023LL << 52), ""), m->d, "");
    LLVMValueRef big = gt(m, mant, 1.41421356237309504880);
    mant = sel(m, big, mul(m, mant, D(m, 0.5)), mant);
    LLVMValueRef ef = add(m, LLVMBuildSIToFP(m->B, e, m->d, ""), sel(m, big, D(m, 1), D(m, 0)));
    ef = sub(m, ef, sel(m, tiny, D(m, 64), D(m, 0)));
    LLVMValueRef s = dvd(m, sub(m, mant, D(m, 1)), add(m, mant, D(m, 1)));
    LLVMValueRef lm = mul(m, s, poly(m, mul(m, s, s), c, 8));
    LLVMValueRef y = add(m, mul(m, ef, D(m, 6.93147180369123816490e-01)),
                         add(m, lm, mul(m, ef, D(m, 1.90821492927058770002e-10))));
    y = sel(m, cmp(m, LLVMRealOEQ, x, D(m, INFINITY)), x, y);
    y = sel(m, cmp(m, LLVMRealOEQ, x, D(m, 0)), D(m, -INFINITY), y);
    return sel(m, cmp(m, LLVMRealUGE, x, D(m, 0)), sel(m, is_nan(m, x), x, y), nan_(m));   /* x < 0: NaN */
}

static LLVMValueRef log_d(M *m, LLVMValueRef x) { return call(m, "log.core", log_body, &x, 1); }

static LLVMValueRef sqrt_body(M *m, LLVMValueRef *a)
{
    LLVMValueRef x = a[0];
    LLVMValueRef ok = gt(m, x, 0);
    LLVMValueRef xs = sel(m, ok, sel(m, lt(m, x, 0x1p-1000), mul(m, x, D(m, 0x1p100)), x), D(m, 1));
    LLVMValueRef bits = LLVMBuildBitCast(m->B, xs, m->i64, "");
    LLVMValueRef y = LLVMBuildBitCast(m->B, LLVMBuildAdd(m->B, LLVMBuildLShr(m->B, bits, I64(m, 1), ""),
                                                         I64(m, 0x1ff7a3bea91d9b1bLL), ""), m->d, "");
    for (int i = 0; i < 5; i++)
        y = mul(m, D(m, 0.5), add(m, y, dvd(m, xs, y)));
    y = sel(m, lt(m, x, 0x1p-1000), mul(m, y, D(m, 0x1p-50)), y);
    y = sel(m, cmp(m, LLVMRealOEQ, x, D(m, INFINITY)), x, y);
    y = sel(m, ok, y, x);                                              /* +-0 and NaN: x */
    return sel(m, lt(m, x, 0), nan_(m), y);
}

static LLVMValueRef sqrt_d(M *m, LLVMValueRef x) { return call(m, "sqrt.core", sqrt_body, &x, 1); }

/* sin(x) (cos = 0) or cos(x) (cos = 1) or tan(x) (cos = 2) */
static LLVMValueRef trig(M *m, LLVMValueRef x, int which)
{
    static const double cs[9] = { 1.0, -1.0 / 6, 1.0 / 120, -1.0 / 5040, 1.0 / 362880, -1.0 / 39916800,
                                  1.0 / 6227020800.0, -1.0 / 1307674368000.0, 1.0 / 355687428096000.0 };
    static const double cc[10] = { 1.0, -1.0 / 2, 1.0 / 24, -1.0 / 720, 1.0 / 40320, -1.0 / 3628800,
                                   1.0 / 479001600.0, -1.0 / 87178291200.0, 1.0 / 20922789888000.0,
                                   -1.0 / 6402373705728000.0 };
    LLVMValueRef fin = lt(m, fabs_(m, x), 0x1p60);
    LLVMValueRef xs = sel(m, fin, x, D(m, 0));
    LLVMValueRef k = round_i64(m, mul(m, xs, D(m, 6.36619772367581382433e-01)));
    LLVMValueRef kf = LLVMBuildSIToFP(m->B, k, m->d, "");
    LLVMValueRef r = sub(m, sub(m, xs, mul(m, kf, D(m, 1.57079632673412561417e+00))),
                         mul(m, kf, D(m, 6.07710050650619224932e-11)));
    LLVMValueRef z = mul(m, r, r);
    LLVMValueRef sp = mul(m, r, poly(m, z, cs, 9)), cp = poly(m, z, cc, 10);
    LLVMValueRef q = LLVMBuildAnd(m->B, k, I64(m, 3), "");
    LLVMValueRef odd = LLVMBuildICmp(m->B, LLVMIntNE, LLVMBuildAnd(m->B, q, I64(m, 1), ""), I64(m, 0), "");
    LLVMValueRef hi = LLVMBuildICmp(m->B, LLVMIntUGE, q, I64(m, 2), "");
    LLVMValueRef y;
    if (which == 2) {
        y = sel(m, odd, neg(m, dvd(m, cp, sp)), dvd(m, sp, cp));
    } else if (which == 0) {   /* q: 0 sin, 1 cos, 2 -sin, 3 -cos */
        y = sel(m, odd, cp, sp);
        y = sel(m, hi, neg(m, y), y);
    } else {                   /* q: 0 cos, 1 -sin, 2 -cos, 3 sin */
        y = sel(m, odd, sp, cp);
        y = sel(m, LLVMBuildXor(m->B, odd, hi, ""), neg(m, y), y);
    }
    return sel(m, fin, y, nan_(m));   /* inf, NaN (and |x| >= 2^60): NaN */
}

static LLVMValueRef atan_body(M *m, LLVMValueRef *a)
{
    static const double c[12] = { 1.0, -1.0 / 3, 1.0 / 5, -1.0 / 7, 1.0 / 9, -1.0 / 11, 1.0 / 13, -1.0 / 15,
                                  1.0 / 17, -1.0 / 19, 1.0 / 21, -1.0 / 23 };
    LLVMValueRef x = a[0], ax = fabs_(m, x);
    LLVMValueRef inv = gt(m, ax, 1);
    LLVMValueRef t = sel(m, inv, dvd(m, D(m, 1), ax), ax);
    LLVMValueRef big = gt(m, t, 0.26794919243112270647);
    const double s3 = 1.73205080756887729353;
    LLVMValueRef u = sel(m, big, dvd(m, sub(m, mul(m, t, D(m, s3)), D(m, 1)), add(m, t, D(m, s3))), t);
    LLVMValueRef r = mul(m, u, poly(m, mul(m, u, u), c, 12));
    r = add(m, r, sel(m, big, D(m, 0.52359877559829887308), D(m, 0)));
    r = sel(m, inv, sub(m, D(m, 1.57079632679489661923), r), r);
    return sel(m, is_nan(m, x), x, signed_like(m, x, r));
}

static LLVMValueRef atan_d(M *m, LLVMValueRef x) { return call(m, "atan.core", atan_body, &x, 1); }

/* ------------------------------------------------------------ the intrinsics */

static LLVMValueRef f_exp(M *m, LLVMValueRef *a) { return exp_d(m, a[0]); }
static LLVMValueRef f_log(M *m, LLVMValueRef *a) { return log_d(m, a[0]); }
static LLVMValueRef f_sqrt(M *m, LLVMValueRef *a) { return sqrt_d(m, a[0]); }
static LLVMValueRef f_sin(M *m, LLVMValueRef *a) { return trig(m, a[0], 0); }
static LLVMValueRef f_cos(M *m, LLVMValueRef *a) { return trig(m, a[0], 1); }
static LLVMValueRef f_tan(M *m, LLVMValueRef *a) { return trig(m, a[0], 2); }
static LLVMValueRef f_atan(M *m, LLVMValueRef *a) { return atan_d(m, a[0]); }

/* f(|x|) with x's sign, x itself where |x| < 1e-5 (odd functions with
 * f(x) = x + O(x^3)) and for NaN */
static LLVMValueRef odd_small(M *m, LLVMValueRef x, LLVMValueRef fa)
{
    LLVMValueRef ax = fabs_(m, x);
    return sel(m, cmp(m, LLVMRealUGE, ax, D(m, 1e-5)), signed_like(m, x, fa), x);
}

static LLVMValueRef f_tanh(M *m, LLVMValueRef *a)
{
    LLVMValueRef ax = fabs_(m, a[0]);
    LLVMValueRef e = exp_d(m, mul(m, D(m, 2), sel(m, gt(m, ax, 20), D(m, 20), ax)));
    return odd_small(m, a[0], dvd(m, sub(m, e, D(m, 1)), add(m, e, D(m, 1))));
}

static LLVMValueRef f_sinh(M *m, LLVMValueRef *a)
{
    LLVMValueRef e = exp_d(m, fabs_(m, a[0]));
    return odd_small(m, a[0], mul(m, D(m, 0.5), sub(m, e, dvd(m, D(m, 1), e))));
}

static LLVMValueRef f_cosh(M *m, LLVMValueRef *a)
{
    LLVMValueRef e = exp_d(m, fabs_(m, a[0]));
    return mul(m, D(m, 0.5), add(m, e, dvd(m, D(m, 1), e)));
}

static LLVMValueRef f_asinh(M *m, LLVMValueRef *a)
{
    LLVMValueRef ax = fabs_(m, a[0]);
    return odd_small(m, a[0], log_d(m, add(m, ax, sqrt_d(m, add(m, mul(m, ax, ax), D(m, 1))))));
}

static LLVMValueRef f_acosh(M *m, LLVMValueRef *a)
{
    LLVMValueRef x = a[0];
    LLVMValueRef y = log_d(m, add(m, x, sqrt_d(m, sub(m, mul(m, x, x), D(m, 1)))));
    return sel(m, lt(m, x, 1), nan_(m), y);
}

static LLVMValueRef f_atanh(M *m, LLVMValueRef *a)
{
    LLVMValueRef ax = fabs_(m, a[0]);
    LLVMValueRef y = mul(m, D(m, 0.5), log_d(m, dvd(m, add(m, D(m, 1), ax), sub(m, D(m, 1), ax))));
    return sel(m, gt(m, ax, 1), nan_(m), odd_small(m, a[0], y));
}

static LLVMValueRef f_asin(M *m, LLVMValueRef *a)
{
    LLVMValueRef x = a[0];
    LLVMValueRef y = atan_d(m, dvd(m, x, sqrt_d(m, sub(m, D(m, 1), mul(m, x, x)))));
    return sel(m, gt(m, fabs_(m, x), 1), nan_(m), y);
}

static LLVMValueRef f_acos(M *m, LLVMValueRef *a)
{
    LLVMValueRef x = a[0];
    LLVMValueRef y = mul(m, D(m, 2), atan_d(m, sqrt_d(m, dvd(m, sub(m, D(m, 1), x), add(m, D(m, 1), x)))));
    return sel(m, gt(m, fabs_(m, x), 1), nan_(m), y);
}

static LLVMValueRef f_erf(M *m, LLVMValueRef *a)
{
    enum { N = 67 };
    double c[N], fact = 1;
    for (int n = 0; n < N; n++) {
        if (n)
            fact *= n;
        c[n] = (n % 2 ? -1.0 : 1.0) / (fact * (2 * n + 1)) * 1.12837916709551257390;
    }
    LLVMValueRef x = a[0], ax = fabs_(m, x);
    LLVMValueRef xs = sel(m, lt(m, ax, 3.9), x, D(m, 0));
    LLVMValueRef y = mul(m, xs, poly(m, mul(m, xs, xs), c, N));
    return sel(m, cmp(m, LLVMRealUGE, ax, D(m, 3.9)), sel(m, is_nan(m, x), x, signed_like(m, x, D(m, 1))), y);
}

/* trunc for |x| < 2^52, x otherwise (also inf and NaN) */
static LLVMValueRef trunc_d(M *m, LLVMValueRef x)
{
    LLVMValueRef t = LLVMBuildSIToFP(m->B, LLVMBuildFPToSI(m->B, x, m->i64, ""), m->d, "");
    return sel(m, lt(m, fabs_(m, x), 0x1p52), t, x);
}

static LLVMValueRef f_trunc(M *m, LLVMValueRef *a) { return trunc_d(m, a[0]); }

static LLVMValueRef f_floor(M *m, LLVMValueRef *a)
{
    LLVMValueRef t = trunc_d(m, a[0]);
    return sel(m, cmp(m, LLVMRealOGT, t, a[0]), sub(m, t, D(m, 1)), t);
}

static LLVMValueRef f_ceil(M *m, LLVMValueRef *a)
{
    LLVMValueRef t = trunc_d(m, a[0]);
    return sel(m, cmp(m, LLVMRealOLT, t, a[0]), add(m, t, D(m, 1)), t);
}

static LLVMValueRef f_round_even(M *m, LLVMValueRef *a)
{
    LLVMValueRef x = a[0];
    LLVMValueRef h = add(m, x, D(m, 0.5));
    LLVMValueRef fl = f_floor(m, &h);
    /* a tie (fl - x == 0.5) rounding up to an odd number goes down instead */
    LLVMValueRef tie = cmp(m, LLVMRealOEQ, sub(m, fl, x), D(m, 0.5));
    LLVMValueRef half = mul(m, fl, D(m, 0.5));
    LLVMValueRef odd = cmp(m, LLVMRealONE, trunc_d(m, half), half);
    LLVMValueRef r = sel(m, LLVMBuildAnd(m->B, tie, odd, ""), sub(m, fl, D(m, 1)), fl);
    return sel(m, lt(m, fabs_(m, x), 0x1p52), r, x);
}

static LLVMValueRef f_fmod(M *m, LLVMValueRef *a)
{
    LLVMValueRef q = dvd(m, a[0], a[1]);
    LLVMValueRef r = sub(m, a[0], mul(m, trunc_d(m, q), a[1]));
    /* a finite and b infinite: a; b == 0, a infinite, NaN: NaN (from the division) */
    LLVMValueRef binf = cmp(m, LLVMRealOEQ, fabs_(m, a[1]), D(m, INFINITY));
    LLVMValueRef ainf = cmp(m, LLVMRealOEQ, fabs_(m, a[0]), D(m, INFINITY));
    r = sel(m, LLVMBuildAnd(m->B, binf, LLVMBuildNot(m->B, ainf, ""), ""), a[0], r);
    return sel(m, cmp(m, LLVMRealOEQ, a[1], D(m, 0)), nan_(m), r);
}

static LLVMValueRef f_pow(M *m, LLVMValueRef *a)
{
    LLVMValueRef x = a[0], y = a[1], ax = fabs_(m, x);
    LLVMValueRef r = exp_d(m, mul(m, y, log_d(m, ax)));
    /* x < 0: defined for integral y, negative for odd y */
    LLVMValueRef yint = cmp(m, LLVMRealOEQ, trunc_d(m, y), y);
    LLVMValueRef hy = mul(m, y, D(m, 0.5));
    LLVMValueRef yodd = LLVMBuildAnd(m->B, yint, cmp(m, LLVMRealONE, trunc_d(m, hy), hy), "");
    LLVMValueRef rn = sel(m, yint, sel(m, yodd, neg(m, r), r), nan_(m));
    r = sel(m, lt(m, x, 0), rn, r);
    r = sel(m, cmp(m, LLVMRealOEQ, x, D(m, 1)), D(m, 1), r);    /* 1^y = 1, even for NaN y */
    return sel(m, cmp(m, LLVMRealOEQ, y, D(m, 0)), D(m, 1), r); /* x^0 = 1, even for NaN x */
}

static LLVMValueRef f_fma(M *m, LLVMValueRef *a) { return add(m, mul(m, a[0], a[1]), a[2]); }

static const struct {
    const char *name;
    unsigned n;
    BodyFn body;
} funcs[] = {
    { "exp", 1, f_exp }, { "log", 1, f_log }, { "sqrt", 1, f_sqrt }, { "tanh", 1, f_tanh }, { "erf", 1, f_erf },
    { "sin", 1, f_sin }, { "cos", 1, f_cos }, { "tan", 1, f_tan }, { "asin", 1, f_asin }, { "acos", 1, f_acos },
    { "atan", 1, f_atan }, { "sinh", 1, f_sinh }, { "cosh", 1, f_cosh }, { "asinh", 1, f_asinh },
    { "acosh", 1, f_acosh }, { "atanh", 1, f_atanh }, { "floor", 1, f_floor }, { "ceil", 1, f_ceil },
    { "round_even", 1, f_round_even }, { "pow", 2, f_pow }, { "fma", 3, f_fma }, { "trunc", 1, f_trunc },
    { "fmod", 2, f_fmod },
};

/* ------------------------------------------------------------ functions */

static LLVMValueRef get_fn(M *m, const char *name, unsigned n, BodyFn body)
{
    char full[64];
    snprintf(full, sizeof full, "dlcc.%s.f64", name);
    LLVMValueRef f = LLVMGetNamedFunction(m->c->mod, full);
    if (f)
        return f;
    LLVMTypeRef ps[3] = { m->d, m->d, m->d };
    f = LLVMAddFunction(m->c->mod, full, LLVMFunctionType(m->d, ps, n, 0));
    LLVMSetLinkage(f, LLVMInternalLinkage);
    cg_add_fn_attr(m->c, f, "nounwind", 0);
    cg_add_fn_attr(m->c, f, "willreturn", 0);
    cg_add_fn_attr(m->c, f, "memory", 0);
    M inner = *m;
    inner.B = LLVMCreateBuilderInContext(m->c->ctx);
    LLVMPositionBuilderAtEnd(inner.B, LLVMAppendBasicBlockInContext(m->c->ctx, f, "entry"));
    LLVMValueRef x[3];
    for (unsigned i = 0; i < n; i++)
        x[i] = LLVMGetParam(f, i);
    LLVMBuildRet(inner.B, body(&inner, x));
    LLVMDisposeBuilder(inner.B);
    return f;
}

LLVMValueRef cg_math(CgCtx *c, const char *name, LLVMValueRef *args, unsigned n)
{
    size_t k = 0;
    while (k < sizeof funcs / sizeof *funcs && strcmp(funcs[k].name, name))
        k++;
    if (k == sizeof funcs / sizeof *funcs || funcs[k].n != n) {
        cg_fail(c, "internal error: no built-in math function %s/%u", name, n);
        return NULL;
    }
    M m = { .c = c, .B = c->b, .d = c->t_f64, .i64 = c->t_i64, .i1 = c->t_i1 };
    c->math_calls++;
    LLVMTypeRef t = LLVMTypeOf(args[0]);
    LLVMValueRef x[3];
    for (unsigned i = 0; i < n; i++)
        x[i] = t == c->t_f64 ? args[i] : LLVMBuildFPExt(c->b, args[i], c->t_f64, "");
    LLVMValueRef r = call(&m, name, funcs[k].body, x, n);
    return t == c->t_f64 ? r : LLVMBuildFPTrunc(c->b, r, t, "");
}
