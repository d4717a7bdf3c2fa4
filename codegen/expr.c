/* codegen/expr.c — loop IR expressions to LLVM IR: types, arithmetic with
 * the loop IR's integer semantics (floor division, no undefined behaviour),
 * casts, and intrinsics (LLVM intrinsics where LLVM has them, libm calls
 * otherwise). */
#include "codegen/cg_impl.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

LLVMTypeRef cg_reg_type(CgCtx *c, IrDType t)
{
    switch (t) {
    case IR_DT_F16: case IR_DT_BF16: case IR_DT_F32: return c->t_f32;   /* half types compute in float */
    case IR_DT_F64: return c->t_f64;
    case IR_DT_BOOL: return c->t_i1;
    case IR_DT_I8: case IR_DT_U8: return c->t_i8;
    case IR_DT_I16: case IR_DT_U16: return c->t_i16;
    case IR_DT_I32: case IR_DT_U32: return c->t_i32;
    case IR_DT_I64: case IR_DT_U64: return c->t_i64;
    default: return NULL;
    }
}

LLVMTypeRef cg_mem_type(CgCtx *c, IrDType t)
{
    switch (t) {
    case IR_DT_F16: return c->t_half;
    case IR_DT_BF16: return c->t_bf16;
    case IR_DT_BOOL: return c->t_i8;
    default: return cg_reg_type(c, t);
    }
}

LLVMValueRef cg_from_mem(CgCtx *c, IrDType t, LLVMValueRef v)
{
    if (t == IR_DT_F16 || t == IR_DT_BF16)
        return LLVMBuildFPExt(c->b, v, c->t_f32, "");
    if (t == IR_DT_BOOL)
        return LLVMBuildICmp(c->b, LLVMIntNE, v, LLVMConstInt(c->t_i8, 0, 0), "");
    return v;
}

/* float32 → bfloat16, rounded to nearest even, NaN kept quiet, in integer
 * operations: LLVM lowers `fptrunc float to bfloat` to a call of
 * __truncsfbf2 on targets without a conversion instruction (x86 before
 * AVX512-BF16, Cortex-M), which GCC's libgcc has only from GCC 13 on, so
 * the object would not link (nor JIT) against Debian 12's toolchain.
 *   b = bits(v);  NaN: (b >> 16) | 0x40;  else (b + 0x7fff + ((b >> 16) & 1)) >> 16 */
static LLVMValueRef f32_to_bf16(CgCtx *c, LLVMValueRef v)
{
    LLVMBuilderRef B = c->b;
    LLVMValueRef b = LLVMBuildBitCast(B, v, c->t_i32, "");
    LLVMValueRef hi = LLVMBuildLShr(B, b, LLVMConstInt(c->t_i32, 16, 0), "");
    LLVMValueRef odd = LLVMBuildAnd(B, hi, LLVMConstInt(c->t_i32, 1, 0), "");
    LLVMValueRef bias = LLVMBuildAdd(B, odd, LLVMConstInt(c->t_i32, 0x7fff, 0), "");
    LLVMValueRef rounded = LLVMBuildLShr(B, LLVMBuildAdd(B, b, bias, ""), LLVMConstInt(c->t_i32, 16, 0), "");
    LLVMValueRef quiet = LLVMBuildOr(B, hi, LLVMConstInt(c->t_i32, 0x40, 0), "");
    LLVMValueRef nan = LLVMBuildFCmp(B, LLVMRealUNO, v, v, "");
    LLVMValueRef r = LLVMBuildSelect(B, nan, quiet, rounded, "");
    return LLVMBuildBitCast(B, LLVMBuildTrunc(B, r, c->t_i16, ""), c->t_bf16, "");
}

LLVMValueRef cg_to_mem(CgCtx *c, IrDType t, LLVMValueRef v)
{
    if (t == IR_DT_BF16)
        return f32_to_bf16(c, v);
    if (t == IR_DT_F16)
        return LLVMBuildFPTrunc(c->b, v, cg_mem_type(c, t), "");
    if (t == IR_DT_BOOL)
        return LLVMBuildZExt(c->b, v, c->t_i8, "");
    return v;
}

/* ------------------------------------------------------------ calls */

LLVMValueRef cg_call_intrinsic(CgCtx *c, const char *name, LLVMTypeRef *ovl, size_t n_ovl, LLVMValueRef *args,
                               unsigned n)
{
    unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
    if (id == 0) {
        cg_fail(c, "internal error: LLVM has no intrinsic %s", name);
        return NULL;
    }
    LLVMValueRef f = LLVMGetIntrinsicDeclaration(c->mod, id, ovl, n_ovl);
    LLVMTypeRef ft = LLVMIntrinsicGetType(c->ctx, id, ovl, n_ovl);
    return LLVMBuildCall2(c->b, ft, f, args, n, "");
}

/* name + "f" for float (tanhf), name for double (tanh).  Declared as not
 * touching memory: the generated code never reads errno. */
static LLVMValueRef call_libm(CgCtx *c, const char *base, LLVMTypeRef t, LLVMValueRef *args, unsigned n)
{
    char name[40];   /* on the GPU, libdevice's __nv_ functions */
    snprintf(name, sizeof name, "%s%s%s", c->gpu ? "__nv_" : "", base, t == c->t_f32 ? "f" : "");
    LLVMTypeRef params[3] = { t, t, t };
    LLVMTypeRef ft = LLVMFunctionType(t, params, n, 0);
    LLVMValueRef f = LLVMGetNamedFunction(c->mod, name);
    if (!f) {
        f = LLVMAddFunction(c->mod, name, ft);
        cg_add_fn_attr(c, f, "nounwind", 0);
        cg_add_fn_attr(c, f, "willreturn", 0);
        cg_add_fn_attr(c, f, "memory", 0);   /* memory(none) */
    }
    return LLVMBuildCall2(c->b, ft, f, args, n, "");
}

static LLVMValueRef fabs_of(CgCtx *c, LLVMValueRef a)
{
    LLVMTypeRef t = LLVMTypeOf(a);
    return cg_call_intrinsic(c, "llvm.fabs", &t, 1, &a, 1);
}

/* round_even without a library: where the target has no rounding
 * instruction, LLVM lowers llvm.roundeven to a call of roundevenf, which
 * C99 libraries such as newlib lack (a Cortex-M4 firmware would not link).
 * For |x| < 2^(p-1) (p: the significand's bits), |x| + 2^(p-1) lies in
 * [2^(p-1), 2^p), where the spacing is 1, so the add rounds |x| to an
 * integer under the default round-to-nearest-even, and subtracting
 * 2^(p-1) again is exact; the sign is put back (-0.3 gives -0).  Larger
 * magnitudes, infinities and NaN are already integers or stay as they are. */
static LLVMValueRef round_even_inline(CgCtx *c, LLVMValueRef x)
{
    LLVMTypeRef t = LLVMTypeOf(x);
    LLVMTypeRef et = LLVMGetTypeKind(t) == LLVMVectorTypeKind ? LLVMGetElementType(t) : t;
    double big = et == c->t_f32 ? 0x1p23 : 0x1p52;
    LLVMValueRef k = LLVMConstReal(et, big);
    if (et != t) {
        unsigned n = LLVMGetVectorSize(t);
        LLVMValueRef lanes[64];
        if (n > 64)
            return cg_call_intrinsic(c, "llvm.roundeven", &t, 1, &x, 1);
        for (unsigned i = 0; i < n; i++)
            lanes[i] = k;
        k = LLVMConstVector(lanes, n);
    }
    LLVMValueRef m = fabs_of(c, x);
    LLVMValueRef r = LLVMBuildFSub(c->b, LLVMBuildFAdd(c->b, m, k, ""), k, "");
    LLVMValueRef args[2] = { r, x };
    r = cg_call_intrinsic(c, "llvm.copysign", &t, 1, args, 2);
    return LLVMBuildSelect(c->b, LLVMBuildFCmp(c->b, LLVMRealOLT, m, k, ""), r, x, "");
}

static LLVMValueRef intrinsic(CgCtx *c, const LoopExpr *e)
{
    LLVMValueRef a[3];
    for (int i = 0; i < e->u.call.n && i < 3; i++)
        if (!(a[i] = cg_expr(c, e->u.call.args[i])))
            return NULL;
    return cg_intrinsic(c, e->u.call.fn, a, (unsigned)e->u.call.n);
}

/* A vector of w copies of a float32 / int32 constant. */
static LLVMValueRef lanes_f32(CgCtx *c, unsigned w, double v)
{
    LLVMValueRef e[64];
    for (unsigned i = 0; i < w && i < 64; i++)
        e[i] = LLVMConstReal(c->t_f32, v);
    return LLVMConstVector(e, w);
}

static LLVMValueRef lanes_i32(CgCtx *c, unsigned w, long long v)
{
    LLVMValueRef e[64];
    for (unsigned i = 0; i < w && i < 64; i++)
        e[i] = LLVMConstInt(c->t_i32, (unsigned long long)v, 1);
    return LLVMConstVector(e, w);
}

/* p(u) by Horner's rule, coefficients from the highest degree down (float32 lanes). */
static LLVMValueRef horner_lanes(CgCtx *c, LLVMValueRef u, const double *k, int n)
{
    LLVMTypeRef vt = LLVMTypeOf(u);
    unsigned w = LLVMGetVectorSize(vt);
    LLVMValueRef p = lanes_f32(c, w, k[0]);
    for (int i = 1; i < n; i++) {
        LLVMValueRef args[3] = { p, u, lanes_f32(c, w, k[i]) };
        p = cg_call_intrinsic(c, "llvm.fmuladd", &vt, 1, args, 3);
    }
    return p;
}

/* exp of a float32 vector inline, where llvm.exp would become one libm
 * call per lane (a VECTORIZED loop's softmax, sigmoid, SiLU):
 *   x clamped to [LO, HI] (max and min: one instruction each, NaN to LO);
 *   x = n ln2 + r, n = round(x log2e), |r| <= ln2/2 (ln2 in two parts);
 *   e^r by a degree-6 polynomial fitted to e^r's relative error on
 *   [-ln2/2, ln2/2] (reweighted least squares at Chebyshev nodes: 1.9e-9;
 *   evaluated in float32 within 0.6 ulp);
 *   2^n added to e^r's exponent bits as an integer (n << 23): over
 *   [LO, HI] n is in [-126, 128] and the result stays a normal float (at n =
 *   -126, r >= 0 so e^r >= 1; at n = 128, r < 0 so e^r < 1);
 * x > HI gives +inf (e^x past FLT_MAX), x < LO gives 0 (below the smallest
 * normal float), NaN stays NaN.  Within a few ulp of expf
 * (tests/unit/test_codegen.c).  22 instructions a vector instead of 30
 * (the Taylor series to r^7, 2^n built as a float with n = 128 scaled in
 * two steps, the out-of-range lanes replaced before and after): SiLU, a
 * division and this, took a third of EfficientNet-B0's time. */
#define EXP_LO -87.33654022216797          /* n >= -126 */
#define EXP_HI 88.72283172607422           /* the largest float below 128 ln2 */
static LLVMValueRef exp_f32_lanes(CgCtx *c, LLVMValueRef x)
{
    static const double coef[] = { 0.0013836842974339683, 0.008374815789579326, 0.041668225624455144,
                                   0.16666420170085927, 0.49999992079566713, 1.0000000363231247,
                                   1.000000000554182 };
    LLVMBuilderRef B = c->b;
    LLVMTypeRef vt = LLVMTypeOf(x);
    unsigned w = LLVMGetVectorSize(vt);
    LLVMTypeRef it = LLVMVectorType(c->t_i32, w);
    LLVMValueRef lo = lanes_f32(c, w, EXP_LO), hi = lanes_f32(c, w, EXP_HI);
    /* x > LO ? x : LO, then < HI: maxps, minps (NaN becomes LO: no NaN reaches fptosi) */
    LLVMValueRef xc = LLVMBuildSelect(B, LLVMBuildFCmp(B, LLVMRealOGT, x, lo, ""), x, lo, "");
    xc = LLVMBuildSelect(B, LLVMBuildFCmp(B, LLVMRealOLT, xc, hi, ""), xc, hi, "");
    LLVMTypeRef ovl = vt;
    LLVMValueRef t = LLVMBuildFMul(B, xc, lanes_f32(c, w, 1.4426950408889634), "");
    LLVMValueRef nf = cg_call_intrinsic(c, "llvm.roundeven", &ovl, 1, &t, 1);
    LLVMValueRef r1[3] = { nf, lanes_f32(c, w, -0.693145751953125), xc };
    LLVMValueRef r = cg_call_intrinsic(c, "llvm.fmuladd", &ovl, 1, r1, 3);
    LLVMValueRef r2[3] = { nf, lanes_f32(c, w, -1.428606765330187e-06), r };
    r = cg_call_intrinsic(c, "llvm.fmuladd", &ovl, 1, r2, 3);
    LLVMValueRef p = horner_lanes(c, r, coef, (int)(sizeof coef / sizeof *coef));
    LLVMValueRef sh = LLVMBuildShl(B, LLVMBuildFPToSI(B, nf, it, ""), lanes_i32(c, w, 23), "");
    LLVMValueRef y = LLVMBuildBitCast(B, LLVMBuildAdd(B, LLVMBuildBitCast(B, p, it, ""), sh, ""), vt, "");
    y = LLVMBuildSelect(B, LLVMBuildFCmp(B, LLVMRealOLT, x, lo, ""), LLVMConstNull(vt), y, "");
    y = LLVMBuildSelect(B, LLVMBuildFCmp(B, LLVMRealOGT, x, hi, ""), lanes_f32(c, w, INFINITY), y, "");
    return LLVMBuildSelect(B, LLVMBuildFCmp(B, LLVMRealUNO, x, x, ""), x, y, "");
}

/* x P(x^2) / Q(x^2) for x clamped to [-lim, lim], the result clamped to
 * [-1, 1] (tanh, erf: odd, saturating); P has np coefficients, Q nq, from
 * the highest degree down.  NaN stays NaN (no clamp catches it). */
static LLVMValueRef odd_rational_lanes(CgCtx *c, LLVMValueRef x, double lim, const double *P, int np, const double *Q,
                                       int nq)
{
    LLVMBuilderRef B = c->b;
    LLVMTypeRef vt = LLVMTypeOf(x);
    unsigned w = LLVMGetVectorSize(vt);
    LLVMValueRef lo = lanes_f32(c, w, -lim), hi = lanes_f32(c, w, lim);
    LLVMValueRef xc = LLVMBuildSelect(B, LLVMBuildFCmp(B, LLVMRealOLT, x, lo, ""), lo,
                                      LLVMBuildSelect(B, LLVMBuildFCmp(B, LLVMRealOGT, x, hi, ""), hi, x, ""), "");
    LLVMValueRef u = LLVMBuildFMul(B, xc, xc, "");
    LLVMValueRef y = LLVMBuildFDiv(B, LLVMBuildFMul(B, xc, horner_lanes(c, u, P, np), ""),
                                   horner_lanes(c, u, Q, nq), "");
    LLVMValueRef one = lanes_f32(c, w, 1), mone = lanes_f32(c, w, -1);
    y = LLVMBuildSelect(B, LLVMBuildFCmp(B, LLVMRealOGT, y, one, ""), one, y, "");
    return LLVMBuildSelect(B, LLVMBuildFCmp(B, LLVMRealOLT, y, mone, ""), mone, y, "");   /* (NaN: neither) */
}

/* tanh of a float32 vector as a rational function (libm's tanhf has no
 * vector form): tanh(x) ~ x P(x^2) / Q(x^2) for x clamped to [-9, 9], the
 * result clamped to [-1, 1]; P of degree 5 and Q of degree 3 in x^2, fitted
 * to tanh's relative error on [0, 9] (linearized least squares, reweighted
 * towards minimax): at most 4.1e-7 from tanh in float32.  NaN stays NaN. */
static LLVMValueRef tanh_f32_lanes(CgCtx *c, LLVMValueRef x)
{
    static const double P[] = { 1.9689944119605229e-11, -1.3378718884907853e-08, 9.4772982826643197e-06,
                                0.0029444825821741574, 0.12941549784376016, 0.99999998338252905 };
    static const double Q[] = { 0.00023133701510789871, 0.02386104934996424, 0.46274862331949435, 1 };
    return odd_rational_lanes(c, x, 9, P, 6, Q, 4);
}

/* erf of a float32 vector (libm's erff has no vector form) as a rational
 * function, as tanh: erf(x) ~ x P(x^2) / Q(x^2) for x clamped to [-4, 4],
 * the result clamped to [-1, 1] (erf(4) = 1 - 1.5e-8); P and Q of degree 5
 * in x^2, fitted to erf's absolute error on [0, 4] (linearized least
 * squares, reweighted towards minimax): 2.1e-8 from erf, 2.7e-7 evaluated
 * in float32.  NaN stays NaN.  17 instructions a vector; the Abramowitz and
 * Stegun form before (a Taylor series below 0.5, else 7.1.26 with an exp
 * and a division, both computed and one selected) took about 50, and
 * vit_tiny's erf-GELU MatMuls ran at 58-65 GFLOPS against 87-98 for the
 * MatMuls without it (Zen 3, AVX2). */
static LLVMValueRef erf_f32_lanes(CgCtx *c, LLVMValueRef x)
{
    static const double P[] = { 1.974827170653226e-06, 0.00028804054055234576, 0.004003624586088762,
                                0.05346740772934398, 0.19624852982205962, 1.1283789764476375 };
    static const double Q[] = { 3.748078882488681e-05, 0.0012163540872916784, 0.015444378332286991,
                                0.11647623139909216, 0.5072518902539369, 1 };
    return odd_rational_lanes(c, x, 4, P, 6, Q, 6);
}

/* sum + the E consecutive elements of p (E*w int32 products) that make
 * each of its w lanes (a scalar sum when !vec). */
static LLVMValueRef add_groups(CgCtx *c, LLVMValueRef sum, LLVMValueRef p, int vec, unsigned w, unsigned E)
{
    for (unsigned j = 0; j < E; j++) {
        LLVMValueRef part;
        if (vec) {
            LLVMValueRef m[64];
            for (unsigned l = 0; l < w && l < 64; l++)
                m[l] = LLVMConstInt(c->t_i32, E * l + j, 0);
            part = LLVMBuildShuffleVector(c->b, p, LLVMGetPoison(LLVMTypeOf(p)), LLVMConstVector(m, w), "");
        } else {
            part = LLVMBuildExtractElement(c->b, p, LLVMConstInt(c->t_i32, j, 0), "");
        }
        sum = LLVMBuildAdd(c->b, sum, part, "");
    }
    return sum;
}

/* AArch64's dot4 on 4 (or 2) lanes: USDOT (I8MM), the same unsigned by
 * signed bytes; with SDOT only, signed bytes on both sides:
 *     sum_j u_j b_j = sum_j (u_j - 128) b_j + 128 sum_j b_j
 *                   = sdot(acc, u ^ 0x80, b) - sdot(0, 0x80808080, b),
 * u ^ 0x80 being the signed byte u - 128 and 0x80 the byte -128 (when b is
 * one word broadcast, as the register blocks' weights are, LLVM computes
 * the second SDOT once for every vector that shares b). */
static LLVMValueRef a64_dot4(CgCtx *c, LLVMValueRef *a, unsigned w, LLVMTypeRef bt)
{
    LLVMBuilderRef B = c->b;
    LLVMTypeRef over[2] = { LLVMTypeOf(a[0]), bt };
    LLVMValueRef x = LLVMBuildBitCast(B, a[1], bt, ""), y = LLVMBuildBitCast(B, a[2], bt, "");
    if (c->a64_dot == 2)
        return cg_call_intrinsic(c, "llvm.aarch64.neon.usdot", over, 2, (LLVMValueRef[]){ a[0], x, y }, 3);
    LLVMValueRef m[16];
    for (unsigned i = 0; i < 4 * w; i++)
        m[i] = LLVMConstInt(c->t_i8, 0x80, 0);
    LLVMValueRef bias = LLVMConstVector(m, 4 * w);
    LLVMValueRef s = cg_call_intrinsic(c, "llvm.aarch64.neon.sdot", over, 2,
                                       (LLVMValueRef[]){ a[0], LLVMBuildXor(B, x, bias, ""), y }, 3);
    LLVMValueRef k = cg_call_intrinsic(c, "llvm.aarch64.neon.sdot", over, 2,
                                       (LLVMValueRef[]){ LLVMConstNull(over[0]), bias, y }, 3);
    return LLVMBuildSub(B, s, k, "");
}

/* dot4(acc, a, b) = acc + sum_j ubyte_j(a) * sbyte_j(b) on int32 words,
 * lane by lane: VPDPBUSD, USDOT or SDOT where the target has one for this
 * many lanes, else the bytes widened, multiplied and summed (any target). */
static LLVMValueRef dot4(CgCtx *c, LLVMValueRef *a)
{
    LLVMBuilderRef B = c->b;
    LLVMTypeRef t = LLVMTypeOf(a[0]);
    int vec = LLVMGetTypeKind(t) == LLVMVectorTypeKind;
    unsigned w = vec ? LLVMGetVectorSize(t) : 1;
    if (vec && w * 32 <= (unsigned)c->x86_dot_i8 && (w == 4 || w == 8 || w == 16)) {
        const char *name = w == 16 ? "llvm.x86.avx512.vpdpbusd.512"
                           : w == 8 ? "llvm.x86.avx512.vpdpbusd.256" : "llvm.x86.avx512.vpdpbusd.128";
        return cg_call_intrinsic(c, name, NULL, 0, a, 3);
    }
    LLVMTypeRef bt = LLVMVectorType(c->t_i8, 4 * w), wt = LLVMVectorType(c->t_i32, 4 * w);
    if (vec && c->a64_dot && (w == 2 || w == 4))
        return a64_dot4(c, a, w, bt);
    LLVMValueRef x = LLVMBuildZExt(B, LLVMBuildBitCast(B, a[1], bt, ""), wt, "");
    LLVMValueRef y = LLVMBuildSExt(B, LLVMBuildBitCast(B, a[2], bt, ""), wt, "");
    return add_groups(c, a[0], LLVMBuildMul(B, x, y, ""), vec, w, 4);
}

/* dot2(acc, a, b) = acc + lo(a) lo(b) + hi(a) hi(b), the signed 16-bit
 * halves of int32 words, lane by lane: VPMADDWD and an add where the target
 * has it for this many lanes, else the halves widened, multiplied and
 * summed (any target). */
static LLVMValueRef dot2(CgCtx *c, LLVMValueRef *a)
{
    LLVMBuilderRef B = c->b;
    LLVMTypeRef t = LLVMTypeOf(a[0]);
    int vec = LLVMGetTypeKind(t) == LLVMVectorTypeKind;
    unsigned w = vec ? LLVMGetVectorSize(t) : 1;
    LLVMTypeRef ht = LLVMVectorType(LLVMInt16TypeInContext(c->ctx), 2 * w), wt = LLVMVectorType(c->t_i32, 2 * w);
    LLVMValueRef x = LLVMBuildBitCast(B, a[1], ht, ""), y = LLVMBuildBitCast(B, a[2], ht, "");
    if (vec && w * 32 <= (unsigned)c->x86_dot_i16 && (w == 4 || w == 8 || w == 16)) {
        const char *name = w == 16 ? "llvm.x86.avx512.pmaddw.d.512"
                           : w == 8 ? "llvm.x86.avx2.pmadd.wd" : "llvm.x86.sse2.pmadd.wd";
        LLVMValueRef args[2] = { x, y };
        return LLVMBuildAdd(B, a[0], cg_call_intrinsic(c, name, NULL, 0, args, 2), "");
    }
    return add_groups(c, a[0], LLVMBuildMul(B, LLVMBuildSExt(B, x, wt, ""), LLVMBuildSExt(B, y, wt, ""), ""), vec, w, 2);
}

/* An integer constant of x's type (scalar or vector) with value v in every lane. */
static LLVMValueRef int_like(LLVMValueRef x, unsigned long long v)
{
    LLVMTypeRef t = LLVMTypeOf(x);
    if (LLVMGetTypeKind(t) != LLVMVectorTypeKind)
        return LLVMConstInt(t, v, 0);
    unsigned w = LLVMGetVectorSize(t);
    LLVMValueRef e[64];
    for (unsigned i = 0; i < w && i < 64; i++)
        e[i] = LLVMConstInt(LLVMGetElementType(t), v, 0);
    return LLVMConstVector(e, w);
}

/* The type of x with its elements (or x) of type et. */
static LLVMTypeRef same_shape(LLVMValueRef x, LLVMTypeRef et)
{
    LLVMTypeRef t = LLVMTypeOf(x);
    return LLVMGetTypeKind(t) == LLVMVectorTypeKind ? LLVMVectorType(et, LLVMGetVectorSize(t)) : et;
}

/* float32 x rounded to bfloat16 (nearest even; a NaN stays a quiet NaN):
 * its 16 bits in the low half of an int32. */
static LLVMValueRef bf16_bits(CgCtx *c, LLVMValueRef x)
{
    LLVMBuilderRef B = c->b;
    LLVMValueRef b = LLVMBuildBitCast(B, x, same_shape(x, c->t_i32), "");
    LLVMValueRef odd = LLVMBuildAnd(B, LLVMBuildLShr(B, b, int_like(b, 16), ""), int_like(b, 1), "");
    LLVMValueRef r = LLVMBuildLShr(B, LLVMBuildAdd(B, LLVMBuildAdd(B, b, int_like(b, 0x7fff), ""), odd, ""),
                                   int_like(b, 16), "");
    LLVMValueRef q = LLVMBuildOr(B, LLVMBuildLShr(B, b, int_like(b, 16), ""), int_like(b, 0x40), "");
    return LLVMBuildSelect(B, LLVMBuildFCmp(B, LLVMRealUNO, x, x, ""), q, r, "");
}

/* Lanes [i*n, i*n + n) of vector x. */
static LLVMValueRef lanes_of(CgCtx *c, LLVMValueRef x, unsigned i, unsigned n)
{
    LLVMValueRef m[16];
    for (unsigned l = 0; l < n; l++)
        m[l] = LLVMConstInt(c->t_i32, i * n + l, 0);
    return LLVMBuildShuffleVector(c->b, x, LLVMGetPoison(LLVMTypeOf(x)), LLVMConstVector(m, n), "");
}

/* f over the k operands a (vectors of w lanes, w = 2, 4 or 8 times the
 * target's n) piece by piece, n lanes at a time, the pieces joined:
 * a 32-lane bfloat16 block (the pointwise template's two registers) runs
 * as two VDPBF16PS, not as the float32 emulation.  NULL when w is not so
 * (a scalar, or no bfloat16 instructions: n under 4). */
static LLVMValueRef by_pieces(CgCtx *c, LLVMValueRef (*f)(CgCtx *, LLVMValueRef *), LLVMValueRef *a, unsigned k,
                              unsigned w, unsigned n)
{
    if (n < 4 || w <= n || w % n || w / n > 8 || ((w / n) & (w / n - 1)))
        return NULL;
    LLVMValueRef part[8];
    for (unsigned i = 0; i < w / n; i++) {
        LLVMValueRef b[3];
        for (unsigned j = 0; j < k; j++)
            b[j] = lanes_of(c, a[j], i, n);
        part[i] = f(c, b);
    }
    for (unsigned len = 1; len < w / n; len *= 2)         /* join pairs: n, 2n, 4n lanes ... */
        for (unsigned i = 0; i + len < w / n; i += 2 * len) {
            unsigned have = n * len;
            LLVMValueRef m[128];
            for (unsigned l = 0; l < 2 * have; l++)
                m[l] = LLVMConstInt(c->t_i32, l, 0);
            part[i] = LLVMBuildShuffleVector(c->b, part[i], part[i + len], LLVMConstVector(m, 2 * have), "");
        }
    return part[0];
}

/* bf16pack(lo, hi): the two rounded halves of one word.  Where the target
 * has AVX512-BF16 for this many lanes, VCVTNE2PS2BF16 (the same rounding
 * and quiet NaN; a denormal becomes a zero of its sign, which VDPBF16PS
 * would make of it anyway) and the halves interleaved into words: two
 * instructions where the integer rounding took fifteen (ResNet-18's 7x7
 * pack on AVX-512). */
static LLVMValueRef bf16pack(CgCtx *c, LLVMValueRef *a)
{
    LLVMTypeRef t = LLVMTypeOf(a[0]);
    unsigned w = LLVMGetTypeKind(t) == LLVMVectorTypeKind ? LLVMGetVectorSize(t) : 1;
    if (w * 32 <= (unsigned)c->x86_dot_bf16 && (w == 4 || w == 8 || w == 16)) {
        const char *name = w == 16 ? "llvm.x86.avx512bf16.cvtne2ps2bf16.512"
                           : w == 8 ? "llvm.x86.avx512bf16.cvtne2ps2bf16.256" : "llvm.x86.avx512bf16.cvtne2ps2bf16.128";
        LLVMValueRef args[2] = { a[1], a[0] };     /* the result's first w halves convert the second operand */
        LLVMValueRef h = cg_call_intrinsic(c, name, NULL, 0, args, 2), m[32];
        for (unsigned i = 0; i < w; i++) {
            m[2 * i] = LLVMConstInt(c->t_i32, i, 0);
            m[2 * i + 1] = LLVMConstInt(c->t_i32, w + i, 0);
        }
        LLVMValueRef pairs = LLVMBuildShuffleVector(c->b, h, LLVMGetUndef(LLVMTypeOf(h)), LLVMConstVector(m, 2 * w), "");
        return LLVMBuildBitCast(c->b, pairs, LLVMVectorType(c->t_i32, w), "");
    }
    LLVMValueRef wide = by_pieces(c, bf16pack, a, 2, w, (unsigned)c->x86_dot_bf16 / 32);
    if (wide)
        return wide;
    LLVMValueRef lo = bf16_bits(c, a[0]), hi = bf16_bits(c, a[1]);
    return LLVMBuildOr(c->b, lo, LLVMBuildShl(c->b, hi, int_like(hi, 16), ""), "");
}

/* dot2bf(acc, a, b): VDPBF16PS where the target has it for this many lanes,
 * else acc + hi(a) hi(b), then + lo(a) lo(b) (its order; the products of
 * two bfloat16 are exact in float32). */
static LLVMValueRef dot2bf(CgCtx *c, LLVMValueRef *a)
{
    LLVMBuilderRef B = c->b;
    LLVMTypeRef t = LLVMTypeOf(a[0]);
    int vec = LLVMGetTypeKind(t) == LLVMVectorTypeKind;
    unsigned w = vec ? LLVMGetVectorSize(t) : 1;
    if (vec && w * 32 <= (unsigned)c->x86_dot_bf16 && (w == 4 || w == 8 || w == 16)) {
        const char *name = w == 16 ? "llvm.x86.avx512bf16.dpbf16ps.512"
                           : w == 8 ? "llvm.x86.avx512bf16.dpbf16ps.256" : "llvm.x86.avx512bf16.dpbf16ps.128";
        LLVMTypeRef bt = LLVMVectorType(LLVMBFloatTypeInContext(c->ctx), 2 * w);
        LLVMValueRef args[3] = { a[0], LLVMBuildBitCast(B, a[1], bt, ""), LLVMBuildBitCast(B, a[2], bt, "") };
        return cg_call_intrinsic(c, name, NULL, 0, args, 3);
    }
    LLVMValueRef wide = by_pieces(c, dot2bf, a, 3, w, (unsigned)c->x86_dot_bf16 / 32);
    if (wide)
        return wide;
    LLVMTypeRef ft = same_shape(a[1], c->t_f32);
    LLVMValueRef hm = int_like(a[1], 0xffff0000u), sh = int_like(a[1], 16);
    LLVMValueRef ah = LLVMBuildBitCast(B, LLVMBuildAnd(B, a[1], hm, ""), ft, "");
    LLVMValueRef bh = LLVMBuildBitCast(B, LLVMBuildAnd(B, a[2], hm, ""), ft, "");
    LLVMValueRef al = LLVMBuildBitCast(B, LLVMBuildShl(B, a[1], sh, ""), ft, "");
    LLVMValueRef bl = LLVMBuildBitCast(B, LLVMBuildShl(B, a[2], sh, ""), ft, "");
    LLVMValueRef r = LLVMBuildFAdd(B, a[0], LLVMBuildFMul(B, ah, bh, ""), "");
    return LLVMBuildFAdd(B, r, LLVMBuildFMul(B, al, bl, ""), "");
}

LLVMValueRef cg_intrinsic(CgCtx *c, LoopIntrinsic fn, LLVMValueRef *a, unsigned n)
{
    LLVMTypeRef t = LLVMTypeOf(a[0]);
    if (fn == LOOP_I_dot4)
        return dot4(c, a);
    if (fn == LOOP_I_bf16pack)
        return bf16pack(c, a);
    if (fn == LOOP_I_dot2bf)
        return dot2bf(c, a);
    if (fn == LOOP_I_dot2)
        return dot2(c, a);
    if (c->gpu)   /* NVPTX does not lower llvm.exp/log/sin/cos/pow: libdevice does them */
        switch (fn) {
        case LOOP_I_exp: case LOOP_I_log: case LOOP_I_sin: case LOOP_I_cos: case LOOP_I_pow:
            return call_libm(c, loop_intrinsic_name(fn), t, a, n);
        default: break;
        }
    if (c->o.no_libm && fn != LOOP_I_isnan && fn != LOOP_I_isinf)
        return cg_math(c, loop_intrinsic_name(fn), a, n);
    switch (fn) {
    case LOOP_I_exp:
        if (LLVMGetTypeKind(t) == LLVMVectorTypeKind && LLVMGetElementType(t) == c->t_f32)
            return exp_f32_lanes(c, a[0]);
        return cg_call_intrinsic(c, "llvm.exp", &t, 1, a, n);
    case LOOP_I_log: return cg_call_intrinsic(c, "llvm.log", &t, 1, a, n);
    case LOOP_I_sqrt: return cg_call_intrinsic(c, "llvm.sqrt", &t, 1, a, n);
    case LOOP_I_sin: return cg_call_intrinsic(c, "llvm.sin", &t, 1, a, n);
    case LOOP_I_cos: return cg_call_intrinsic(c, "llvm.cos", &t, 1, a, n);
    case LOOP_I_floor: return cg_call_intrinsic(c, "llvm.floor", &t, 1, a, n);
    case LOOP_I_ceil: return cg_call_intrinsic(c, "llvm.ceil", &t, 1, a, n);
    case LOOP_I_round_even:
        return c->bare_metal ? round_even_inline(c, a[0]) : cg_call_intrinsic(c, "llvm.roundeven", &t, 1, a, n);
    case LOOP_I_pow: return cg_call_intrinsic(c, "llvm.pow", &t, 1, a, n);
    case LOOP_I_fma: return cg_call_intrinsic(c, "llvm.fma", &t, 1, a, n);
    case LOOP_I_isnan: return LLVMBuildFCmp(c->b, LLVMRealUNO, a[0], a[0], "");
    case LOOP_I_isinf: {
        LLVMValueRef m = fabs_of(c, a[0]);
        return m ? LLVMBuildFCmp(c->b, LLVMRealOEQ, m, LLVMConstReal(t, INFINITY), "") : NULL;
    }
    case LOOP_I_tanh: case LOOP_I_erf:
        if (LLVMGetTypeKind(t) == LLVMVectorTypeKind && LLVMGetElementType(t) == c->t_f32)
            return fn == LOOP_I_tanh ? tanh_f32_lanes(c, a[0]) : erf_f32_lanes(c, a[0]);
        return call_libm(c, loop_intrinsic_name(fn), t, a, n);
    default:   /* tan asin acos atan sinh cosh asinh acosh atanh: libm */
        return call_libm(c, loop_intrinsic_name(fn), t, a, n);
    }
}

/* ------------------------------------------------------------ arithmetic */

static LLVMValueRef cint(LLVMTypeRef t, long long v) { return LLVMConstInt(t, (unsigned long long)v, 1); }

/* Integer division and remainder, floor (DIV, MOD) or truncating (TDIV,
 * TMOD).  b == 0 gives 0; signed a / -1 is computed as 0 - a (wrapping), so
 * nothing is undefined. */
static LLVMValueRef int_div(CgCtx *c, LoopBinOp op, int sgn, LLVMValueRef a, LLVMValueRef b)
{
    LLVMBuilderRef B = c->b;
    LLVMTypeRef t = LLVMTypeOf(a);
    LLVMValueRef zero = cint(t, 0), one = cint(t, 1);
    int is_div = op == LOOP_DIV || op == LOOP_TDIV;
    LLVMValueRef b0 = LLVMBuildICmp(B, LLVMIntEQ, b, zero, "");
    LLVMValueRef bm1 = sgn ? LLVMBuildICmp(B, LLVMIntEQ, b, cint(t, -1), "") : NULL;
    LLVMValueRef bad = sgn ? LLVMBuildOr(B, b0, bm1, "") : b0;
    LLVMValueRef bs = LLVMBuildSelect(B, bad, one, b, "");
    LLVMValueRef q = sgn ? LLVMBuildSDiv(B, a, bs, "") : LLVMBuildUDiv(B, a, bs, "");
    LLVMValueRef r = sgn ? LLVMBuildSRem(B, a, bs, "") : LLVMBuildURem(B, a, bs, "");
    if (sgn && (op == LOOP_DIV || op == LOOP_MOD)) {
        /* floor: when the remainder is nonzero and its sign differs from b's */
        LLVMValueRef nz = LLVMBuildICmp(B, LLVMIntNE, r, zero, "");
        LLVMValueRef diff = LLVMBuildICmp(B, LLVMIntSLT, LLVMBuildXor(B, r, b, ""), zero, "");
        LLVMValueRef adj = LLVMBuildAnd(B, nz, diff, "");
        q = LLVMBuildSelect(B, adj, LLVMBuildSub(B, q, one, ""), q, "");
        r = LLVMBuildSelect(B, adj, LLVMBuildAdd(B, r, b, ""), r, "");
    }
    LLVMValueRef res = is_div ? q : r;
    if (sgn)
        res = LLVMBuildSelect(B, bm1, is_div ? LLVMBuildSub(B, zero, a, "") : zero, res, "");
    return LLVMBuildSelect(B, b0, zero, res, "");
}

static LLVMValueRef int_shift(CgCtx *c, LoopBinOp op, int sgn, LLVMValueRef a, LLVMValueRef b)
{
    LLVMBuilderRef B = c->b;
    LLVMTypeRef t = LLVMTypeOf(a);
    unsigned w = LLVMGetIntTypeWidth(t);
    LLVMValueRef oob = LLVMBuildICmp(B, LLVMIntUGE, b, cint(t, w), "");
    if (op == LOOP_SHL)
        return LLVMBuildSelect(B, oob, cint(t, 0), LLVMBuildShl(B, a, b, ""), "");
    if (sgn)
        return LLVMBuildAShr(B, a, LLVMBuildSelect(B, oob, cint(t, w - 1), b, ""), "");
    return LLVMBuildSelect(B, oob, cint(t, 0), LLVMBuildLShr(B, a, b, ""), "");
}

static LLVMValueRef int_bin(CgCtx *c, LoopBinOp op, IrDType t, LLVMValueRef a, LLVMValueRef b)
{
    LLVMBuilderRef B = c->b;
    int sgn = t == IR_DT_I64 || ir_dtype_is_signed(t);
    switch (op) {
    case LOOP_ADD: return LLVMBuildAdd(B, a, b, "");
    case LOOP_SUB: return LLVMBuildSub(B, a, b, "");
    case LOOP_MUL: return LLVMBuildMul(B, a, b, "");
    case LOOP_DIV: case LOOP_TDIV: case LOOP_MOD: case LOOP_TMOD: return int_div(c, op, sgn, a, b);
    case LOOP_MIN: case LOOP_MAX: {
        LLVMValueRef lt = LLVMBuildICmp(B, sgn ? LLVMIntSLT : LLVMIntULT, a, b, "");
        return op == LOOP_MIN ? LLVMBuildSelect(B, lt, a, b, "") : LLVMBuildSelect(B, lt, b, a, "");
    }
    case LOOP_LT: return LLVMBuildICmp(B, sgn ? LLVMIntSLT : LLVMIntULT, a, b, "");
    case LOOP_LE: return LLVMBuildICmp(B, sgn ? LLVMIntSLE : LLVMIntULE, a, b, "");
    case LOOP_EQ: return LLVMBuildICmp(B, LLVMIntEQ, a, b, "");
    case LOOP_NE: return LLVMBuildICmp(B, LLVMIntNE, a, b, "");
    case LOOP_AND: return LLVMBuildAnd(B, a, b, "");
    case LOOP_OR: return LLVMBuildOr(B, a, b, "");
    case LOOP_XOR: return LLVMBuildXor(B, a, b, "");
    case LOOP_SHL: case LOOP_SHR: return int_shift(c, op, sgn, a, b);
    }
    return NULL;
}

/* (a > b ? a : b) for MAX, (a < b ? a : b) for MIN, on a vector of float32
 * filling an x86 SIMD register: exactly what MAXPS / MINPS compute (b when
 * either is NaN or they are equal), as that instruction.  LLVM would fold the
 * select with the NaN test cg_float_bin adds into two compares, a mask OR and
 * a blend, all on the result's dependency chain (a max pool's running
 * maximum); with the instruction the NaN test of a is off the chain.  NULL
 * elsewhere (then the compare and select). */
static LLVMValueRef x86_minmax(CgCtx *c, LoopBinOp op, LLVMValueRef a, LLVMValueRef b)
{
    LLVMTypeRef t = LLVMTypeOf(a);
    if (!c->x86_simd || LLVMGetTypeKind(t) != LLVMVectorTypeKind || LLVMGetElementType(t) != c->t_f32)
        return NULL;
    unsigned bits = LLVMGetVectorSize(t) * 32;
    int mx = op == LOOP_MAX;
    if (bits == 512 && c->x86_simd >= 512) {
        LLVMValueRef args[3] = { a, b, LLVMConstInt(c->t_i32, 4, 0) };    /* 4: the current rounding */
        return cg_call_intrinsic(c, mx ? "llvm.x86.avx512.max.ps.512" : "llvm.x86.avx512.min.ps.512", NULL, 0,
                                 args, 3);
    }
    LLVMValueRef args[2] = { a, b };
    if (bits == 256 && c->x86_simd >= 256)
        return cg_call_intrinsic(c, mx ? "llvm.x86.avx.max.ps.256" : "llvm.x86.avx.min.ps.256", NULL, 0, args, 2);
    if (bits == 128)
        return cg_call_intrinsic(c, mx ? "llvm.x86.sse.max.ps" : "llvm.x86.sse.min.ps", NULL, 0, args, 2);
    return NULL;
}

/* frem is a libm call (fmodf) on most targets */
static LLVMValueRef fmod_of(CgCtx *c, LLVMValueRef a, LLVMValueRef b)
{
    if (!c->o.no_libm)
        return LLVMBuildFRem(c->b, a, b, "");
    LLVMValueRef ab[2] = { a, b };
    return cg_math(c, "fmod", ab, 2);
}

LLVMValueRef cg_float_bin(CgCtx *c, LoopBinOp op, LLVMValueRef a, LLVMValueRef b)
{
    LLVMBuilderRef B = c->b;
    LLVMTypeRef t = LLVMTypeOf(a);
    switch (op) {
    case LOOP_ADD: return LLVMBuildFAdd(B, a, b, "");
    case LOOP_SUB: return LLVMBuildFSub(B, a, b, "");
    case LOOP_MUL: return LLVMBuildFMul(B, a, b, "");
    case LOOP_DIV: return LLVMBuildFDiv(B, a, b, "");
    case LOOP_TDIV: {   /* trunc(a / b) */
        LLVMValueRef q = LLVMBuildFDiv(B, a, b, "");
        return c->o.no_libm ? cg_math(c, "trunc", &q, 1) : cg_call_intrinsic(c, "llvm.trunc", &t, 1, &q, 1);
    }
    case LOOP_TMOD: return fmod_of(c, a, b);
    case LOOP_MOD: {    /* fmod, moved to the divisor's sign (numpy's mod) */
        LLVMValueRef r = fmod_of(c, a, b), z = LLVMConstReal(t, 0.0);
        LLVMValueRef nz = LLVMBuildFCmp(B, LLVMRealONE, r, z, "");
        LLVMValueRef diff = LLVMBuildXor(B, LLVMBuildFCmp(B, LLVMRealOLT, r, z, ""),
                                         LLVMBuildFCmp(B, LLVMRealOLT, b, z, ""), "");
        return LLVMBuildSelect(B, LLVMBuildAnd(B, nz, diff, ""), LLVMBuildFAdd(B, r, b, ""), r, "");
    }
    case LOOP_MIN: case LOOP_MAX: {   /* NaN in either operand gives NaN: b when b is, a when a is */
        LLVMValueRef r = x86_minmax(c, op, a, b);
        if (!r) {
            LLVMValueRef a_wins = op == LOOP_MIN ? LLVMBuildFCmp(B, LLVMRealOLT, a, b, "")
                                                 : LLVMBuildFCmp(B, LLVMRealOGT, a, b, "");
            r = LLVMBuildSelect(B, a_wins, a, b, "");
        }
        return LLVMBuildSelect(B, LLVMBuildFCmp(B, LLVMRealUNO, a, a, ""), a, r, "");
    }
    case LOOP_LT: return LLVMBuildFCmp(B, LLVMRealOLT, a, b, "");
    case LOOP_LE: return LLVMBuildFCmp(B, LLVMRealOLE, a, b, "");
    case LOOP_EQ: return LLVMBuildFCmp(B, LLVMRealOEQ, a, b, "");
    case LOOP_NE: return LLVMBuildFCmp(B, LLVMRealUNE, a, b, "");
    default: return NULL;
    }
}

/* ------------------------------------------------------------ contraction */

/* Float a*b + z, z + a*b, a*b - z and z - a*b are contracted into one
 * multiply-add, fused where the target has FMA instructions (as C compilers
 * do with FP_CONTRACT on): *m is the product, *z the addend, *neg_m / *neg_z
 * say which is subtracted. */
int cg_contractible(const LoopExpr *e, const LoopExpr **m, const LoopExpr **z, int *neg_m, int *neg_z)
{
    if (e->kind != LOOP_E_BIN || (e->u.bin.op != LOOP_ADD && e->u.bin.op != LOOP_SUB) ||
        (e->type != IR_DT_F32 && e->type != IR_DT_F64))
        return 0;
    const LoopExpr *a = e->u.bin.a, *b = e->u.bin.b;
    int sub = e->u.bin.op == LOOP_SUB;
    if (a->kind == LOOP_E_BIN && a->u.bin.op == LOOP_MUL && a->type == e->type) {
        *m = a, *z = b, *neg_m = 0, *neg_z = sub;
        return 1;
    }
    if (b->kind == LOOP_E_BIN && b->u.bin.op == LOOP_MUL && b->type == e->type) {
        *m = b, *z = a, *neg_m = sub, *neg_z = 0;
        return 1;
    }
    return 0;
}

LLVMValueRef cg_muladd(CgCtx *c, LLVMValueRef x, LLVMValueRef y, LLVMValueRef z, int neg_m, int neg_z)
{
    if (neg_m)
        x = LLVMBuildFNeg(c->b, x, "");
    if (neg_z)
        z = LLVMBuildFNeg(c->b, z, "");
    LLVMValueRef a[3] = { x, y, z };
    LLVMTypeRef t = LLVMTypeOf(x);
    return cg_call_intrinsic(c, "llvm.fmuladd", &t, 1, a, 3);
}

/* ------------------------------------------------------------ casts */

/* A float register value rounded to what float16 / bfloat16 can hold. */
static LLVMValueRef round_half(CgCtx *c, IrDType to, LLVMValueRef v)
{
    if (to != IR_DT_F16 && to != IR_DT_BF16)
        return v;
    return cg_from_mem(c, to, cg_to_mem(c, to, v));
}

/* float v (scalar or vector) to integer type `to`, saturating: out of
 * range clamps, NaN gives 0, as llvm.fptosi.sat / fptoui.sat.  For 8- and
 * 16-bit results, whose bounds float32 holds exactly, as that: the clamp,
 * a conversion to int32, a truncation and the NaN lanes set to 0, on x86
 * (whose backend scalarized the intrinsic on vectors of bytes: a
 * QuantizeLinear's Cast on MobileNetV2's 56x56 maps ran at 1.7 G elements
 * a second, and every requantizing store of the 8-bit dot-product blocks
 * with it); elsewhere the intrinsic (Arm's VCVT and SSAT do it in two). */
LLVMValueRef cg_float_to_int_sat(CgCtx *c, IrDType to, LLVMValueRef v)
{
    LLVMBuilderRef B = c->b;
    LLVMTypeRef ft = LLVMTypeOf(v), et = cg_reg_type(c, to);
    int vec = LLVMGetTypeKind(ft) == LLVMVectorTypeKind;
    unsigned w = vec ? LLVMGetVectorSize(ft) : 1;
    LLVMTypeRef tt = vec ? LLVMVectorType(et, w) : et;
    int sgn = ir_dtype_is_signed(to);
    if ((to != IR_DT_I8 && to != IR_DT_U8 && to != IR_DT_I16 && to != IR_DT_U16) || w > 64 || c->x86_simd <= 0) {
        LLVMTypeRef ovl[2] = { tt, ft };
        return cg_call_intrinsic(c, sgn ? "llvm.fptosi.sat" : "llvm.fptoui.sat", ovl, 2, &v, 1);
    }
    int bits = to == IR_DT_I8 || to == IR_DT_U8 ? 8 : 16;
    double lo = sgn ? -(double)(1 << (bits - 1)) : 0, hi = sgn ? (double)((1 << (bits - 1)) - 1) : (double)((1 << bits) - 1);
    LLVMTypeRef sft = vec ? LLVMGetElementType(ft) : ft;
    LLVMValueRef lov = LLVMConstReal(sft, lo), hiv = LLVMConstReal(sft, hi);
    if (vec) {
        LLVMValueRef l[64], h[64];
        for (unsigned i = 0; i < w; i++) {
            l[i] = LLVMConstReal(sft, lo);
            h[i] = LLVMConstReal(sft, hi);
        }
        lov = LLVMConstVector(l, w);
        hiv = LLVMConstVector(h, w);
    }
    /* compares and selects, not minnum / maxnum (libm calls without an FPU);
     * a NaN lane converts to poison, which the last select does not pick */
    LLVMValueRef m = LLVMBuildSelect(B, LLVMBuildFCmp(B, LLVMRealOGT, v, hiv, ""), hiv, v, "");
    m = LLVMBuildSelect(B, LLVMBuildFCmp(B, LLVMRealOLT, m, lov, ""), lov, m, "");
    LLVMTypeRef it = vec ? LLVMVectorType(c->t_i32, w) : c->t_i32;
    LLVMValueRef i = LLVMBuildTrunc(B, LLVMBuildFPToSI(B, m, it, ""), tt, "");
    return LLVMBuildSelect(B, LLVMBuildFCmp(B, LLVMRealUNO, v, v, ""), LLVMConstNull(tt), i, "");
}

LLVMValueRef cg_cast(CgCtx *c, IrDType from, IrDType to, LLVMValueRef v)
{
    LLVMBuilderRef B = c->b;
    LLVMTypeRef tt = cg_reg_type(c, to), ft = cg_reg_type(c, from);
    if (from == to)
        return v;
    int ff = ir_dtype_is_float(from), tf = ir_dtype_is_float(to);
    if (to == IR_DT_BOOL)
        return ff ? LLVMBuildFCmp(B, LLVMRealUNE, v, LLVMConstReal(ft, 0.0), "")
                  : LLVMBuildICmp(B, LLVMIntNE, v, LLVMConstInt(ft, 0, 0), "");
    if (from == IR_DT_BOOL)
        return tf ? LLVMBuildUIToFP(B, v, tt, "") : LLVMBuildZExt(B, v, tt, "");
    if (ff && tf)
        return round_half(c, to, LLVMBuildFPCast(B, v, tt, ""));
    if (ff)     /* saturating: out of range clamps, NaN gives 0 */
        return cg_float_to_int_sat(c, to, v);
    int sgn = ir_dtype_is_signed(from);
    if (tf)
        return round_half(c, to, sgn ? LLVMBuildSIToFP(B, v, tt, "") : LLVMBuildUIToFP(B, v, tt, ""));
    return LLVMBuildIntCast2(B, v, tt, sgn, "");
}

/* ------------------------------------------------------------ expressions */

/* Element idx of buffer buf, converted from its memory type. */
static LLVMValueRef load_at(CgCtx *c, int buf, LLVMValueRef idx)
{
    const LoopBuf *b = &c->p->bufs[buf];
    if (!c->bufptr[buf])
        return NULL;
    LLVMTypeRef mt = cg_mem_type(c, b->dtype);
    LLVMValueRef v = LLVMBuildLoad2(c->b, mt, LLVMBuildInBoundsGEP2(c->b, mt, c->bufptr[buf], &idx, 1, ""), "");
    LLVMSetAlignment(v, (unsigned)ir_dtype_size(b->dtype));
    return cg_from_mem(c, b->dtype, v);
}

LLVMValueRef cg_expr(CgCtx *c, const LoopExpr *e)
{
    LLVMBuilderRef B = c->b;
    switch (e->kind) {
    case LOOP_E_INT:
        return LLVMConstInt(cg_reg_type(c, e->type), (unsigned long long)e->u.i, 1);
    case LOOP_E_FLOAT:
        return LLVMConstReal(cg_reg_type(c, e->type), e->u.f);
    case LOOP_E_VAR: {
        LLVMValueRef v = c->var[e->u.var];
        if (!v) {
            cg_fail(c, "internal error: variable '%s' has no value", c->p->vars[e->u.var].name);
            return NULL;
        }
        return c->var_mut[e->u.var] ? LLVMBuildLoad2(B, cg_reg_type(c, e->type), v, c->p->vars[e->u.var].name) : v;
    }
    case LOOP_E_LOAD: {
        LLVMValueRef idx = cg_expr(c, e->u.load.index);
        return idx ? load_at(c, e->u.load.buf, idx) : NULL;
    }
    case LOOP_E_BIN: {
        const LoopExpr *m, *z;
        int neg_m, neg_z;
        if (cg_contractible(e, &m, &z, &neg_m, &neg_z)) {
            LLVMValueRef x = cg_expr(c, m->u.bin.a), y = x ? cg_expr(c, m->u.bin.b) : NULL;
            LLVMValueRef w = y ? cg_expr(c, z) : NULL;
            return w ? cg_muladd(c, x, y, w, neg_m, neg_z) : NULL;
        }
        LLVMValueRef a = cg_expr(c, e->u.bin.a), b = a ? cg_expr(c, e->u.bin.b) : NULL;
        if (!b)
            return NULL;
        IrDType t = e->u.bin.a->type;
        LLVMValueRef r = ir_dtype_is_float(t) ? cg_float_bin(c, e->u.bin.op, a, b) : int_bin(c, e->u.bin.op, t, a, b);
        if (!r && !c->d->has_error)
            cg_fail(c, "binary operation %d not defined on %s", (int)e->u.bin.op, ir_dtype_name(t));
        return r;
    }
    case LOOP_E_UN: {
        LLVMValueRef a = cg_expr(c, e->u.un.a);
        if (!a)
            return NULL;
        int is_f = ir_dtype_is_float(e->type);
        switch (e->u.un.op) {
        case LOOP_NEG: return is_f ? LLVMBuildFNeg(B, a, "") : LLVMBuildNeg(B, a, "");
        case LOOP_NOT: return LLVMBuildNot(B, a, "");
        case LOOP_ABS:
            if (is_f)
                return fabs_of(c, a);
            if (!ir_dtype_is_signed(e->type) && e->type != IR_DT_I64)
                return a;
            LLVMTypeRef t = LLVMTypeOf(a);
            LLVMValueRef args[2] = { a, LLVMConstInt(c->t_i1, 0, 0) };
            return cg_call_intrinsic(c, "llvm.abs", &t, 1, args, 2);
        }
        break;
    }
    case LOOP_E_SELECT: {
        LLVMValueRef k = cg_expr(c, e->u.sel.cond);
        if (k && e->u.sel.a->kind == LOOP_E_LOAD) {   /* a guarded load: element 0 read when not taken */
            const LoopExpr *ld = e->u.sel.a;
            LLVMValueRef idx = cg_expr(c, ld->u.load.index), b = idx ? cg_expr(c, e->u.sel.b) : NULL;
            LLVMValueRef v = b ? load_at(c, ld->u.load.buf, LLVMBuildSelect(B, k, idx, LLVMConstNull(LLVMTypeOf(idx)), ""))
                               : NULL;
            return v ? LLVMBuildSelect(B, k, v, b, "") : NULL;
        }
        LLVMValueRef a = k ? cg_expr(c, e->u.sel.a) : NULL, b = a ? cg_expr(c, e->u.sel.b) : NULL;
        return b ? LLVMBuildSelect(B, k, a, b, "") : NULL;
    }
    case LOOP_E_CALL:
        return intrinsic(c, e);
    case LOOP_E_CAST: {
        LLVMValueRef a = cg_expr(c, e->u.cast.a);
        return a ? cg_cast(c, e->u.cast.a->type, e->type, a) : NULL;
    }
    }
    cg_fail(c, "unknown expression kind %d", (int)e->kind);
    return NULL;
}
