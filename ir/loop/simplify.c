/* ir/loop/simplify.c — algebraic simplification of loop programs.
 *
 * Index arithmetic is int64 with two's-complement wrap-around.  Rules come in
 * two families:
 *
 *  - Ring identities (hold modulo 2^64, so they are exact whatever the
 *    operands' values): constant folding of + - * (only when the folded
 *    constant itself does not overflow), x+0, x*1, x*0, x-x, reassociation
 *    and collection of constants and like terms.  These are done by turning
 *    a sum into a linear form  c1*t1 + ... + cn*tn + k  (t: non-linear
 *    "atoms" such as variables, loads, divisions, products of two
 *    non-constants) and rebuilding it: terms in first-appearance order,
 *    coefficient last in a product, constant last in a sum; and
 *    c*(y / c) + y % c = y, a quotient and remainder of the same kind.
 *
 *  - Order facts (floor division, modulo, comparisons, min/max), which are
 *    only true of the mathematical integers.  They are applied only when
 *    range analysis proves that every intermediate value of the expression
 *    fits in int64, so the machine value equals the mathematical one.
 *    Ranges come from loop extents (a loop variable lies in [0, extent)),
 *    immutable lets (the range of the value) and types (bool, int8...).
 *    A variable is bound once in a valid program (loop_verify), so its range
 *    is a program-wide fact.
 *
 * Floating-point expressions are never folded or reassociated (x+0.0 is not
 * x for x = -0.0, x*0.0 is not 0.0 for NaN); only their integer
 * sub-expressions (load indices, conditions) are simplified.  Division or
 * modulo by zero and INT64_MIN / -1 are never folded.
 *
 * Statements: loops with an extent <= 0 vanish; serial, parallel,
 * vectorized and unrolled loops of extent 1 become their body (the variable
 * is the constant 0 there); ifs with a constant condition become the taken
 * branch; immutable lets of a constant are propagated and dropped; nested
 * blocks are flattened and empty ones dropped.
 */
#include "ir/loop/loop.h"

#include <stdlib.h>
#include <string.h>

typedef struct Rng { int ok; int64_t lo, hi; } Rng;

static const Rng UNKNOWN = { 0, 0, 0 };
static Rng rng(int64_t lo, int64_t hi) { return (Rng){ 1, lo, hi }; }

typedef struct Simp {
    LoopProgram *p;
    Rng *var;        /* per variable: its range, when known */
    int *nbind;      /* per variable: how many FOR/LET bind it */
} Simp;

/* ------------------------------------------------------ int64 arithmetic */

static int add_ov(int64_t a, int64_t b, int64_t *r) { return __builtin_add_overflow(a, b, r); }
static int sub_ov(int64_t a, int64_t b, int64_t *r) { return __builtin_sub_overflow(a, b, r); }
static int mul_ov(int64_t a, int64_t b, int64_t *r) { return __builtin_mul_overflow(a, b, r); }

/* Floor division and modulo; callers exclude b == 0 and INT64_MIN / -1. */
static int64_t floordiv(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

static int64_t floormod(int64_t a, int64_t b)
{
    if (b == -1)
        return 0;
    int64_t r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

/* Arithmetic shift right as floor(a / 2^s), 0 <= s <= 63, without relying on
 * implementation-defined >> of negative numbers. */
static int64_t shr_floor(int64_t a, int s) { return a >= 0 ? a >> s : ~(~a >> s); }

/* The folding table for integer constants: `op` on a and b of type t (I64 or
 * BOOL); returns 1 with *r set, 0 when folding would overflow, divide by
 * zero, or shift out of range. */
static int fold_bin(LoopBinOp op, int64_t a, int64_t b, int64_t *r)
{
    switch (op) {
    case LOOP_ADD: return !add_ov(a, b, r);
    case LOOP_SUB: return !sub_ov(a, b, r);
    case LOOP_MUL: return !mul_ov(a, b, r);
    case LOOP_DIV:   /* floor(a / b) */
        if (b == 0 || (a == INT64_MIN && b == -1))
            return 0;
        *r = floordiv(a, b);
        return 1;
    case LOOP_TDIV:  /* trunc(a / b), C's / */
        if (b == 0 || (a == INT64_MIN && b == -1))
            return 0;
        *r = a / b;
        return 1;
    case LOOP_MOD:   /* a - b*floor(a/b): sign of b */
        if (b == 0)
            return 0;
        *r = floormod(a, b);
        return 1;
    case LOOP_TMOD:  /* a - b*trunc(a/b): sign of a, C's % */
        if (b == 0)
            return 0;
        *r = b == -1 ? 0 : a % b;
        return 1;
    case LOOP_MIN: *r = a < b ? a : b; return 1;
    case LOOP_MAX: *r = a > b ? a : b; return 1;
    case LOOP_LT: *r = a < b; return 1;
    case LOOP_LE: *r = a <= b; return 1;
    case LOOP_EQ: *r = a == b; return 1;
    case LOOP_NE: *r = a != b; return 1;
    case LOOP_AND: *r = a & b; return 1;
    case LOOP_OR: *r = a | b; return 1;
    case LOOP_XOR: *r = a ^ b; return 1;
    case LOOP_SHL:   /* a * 2^b, only when that fits */
        if (b < 0 || b > 62)
            return 0;
        return !mul_ov(a, (int64_t)1 << b, r);
    case LOOP_SHR:   /* floor(a / 2^b), arithmetic */
        if (b < 0 || b > 63)
            return 0;
        *r = shr_floor(a, (int)b);
        return 1;
    }
    return 0;
}

/* ------------------------------------------------------------- builders */

static LoopExpr *mk_int(Simp *S, IrDType t, int64_t v)
{
    LoopExpr *e = loop_int(S->p, v);
    if (e)
        e->type = t;
    return e;
}

static int is_int(const LoopExpr *e, int64_t v) { return e->kind == LOOP_E_INT && e->u.i == v; }
static int is_const(const LoopExpr *e) { return e->kind == LOOP_E_INT; }

/* ------------------------------------------------------------- ranges */

static Rng type_range(IrDType t)
{
    switch (t) {
    case IR_DT_BOOL: return rng(0, 1);
    case IR_DT_U8: return rng(0, UINT8_MAX);
    case IR_DT_I8: return rng(INT8_MIN, INT8_MAX);
    case IR_DT_U16: return rng(0, UINT16_MAX);
    case IR_DT_I16: return rng(INT16_MIN, INT16_MAX);
    case IR_DT_U32: return rng(0, UINT32_MAX);
    case IR_DT_I32: return rng(INT32_MIN, INT32_MAX);
    default: return UNKNOWN;
    }
}

/* r when it is known and fits type t (so no wrap-around happened), else the
 * range of t itself. */
static Rng fit(Rng r, IrDType t)
{
    if (!r.ok)
        return type_range(t);
    if (t == IR_DT_I64)
        return r;
    Rng tr = type_range(t);
    return tr.ok && r.lo >= tr.lo && r.hi <= tr.hi ? r : tr;
}

static Rng r_add(Rng a, Rng b)
{
    Rng r = { a.ok && b.ok, 0, 0 };
    if (r.ok && (add_ov(a.lo, b.lo, &r.lo) || add_ov(a.hi, b.hi, &r.hi)))
        r.ok = 0;
    return r;
}

static Rng r_neg(Rng a)
{
    if (!a.ok || a.lo == INT64_MIN)
        return UNKNOWN;
    return rng(-a.hi, -a.lo);
}

static Rng r_mulc(Rng a, int64_t c)
{
    int64_t x, y;
    if (!a.ok || mul_ov(a.lo, c, &x) || mul_ov(a.hi, c, &y))
        return UNKNOWN;
    return x <= y ? rng(x, y) : rng(y, x);
}

static Rng r_mul(Rng a, Rng b)
{
    if (!a.ok || !b.ok)
        return UNKNOWN;
    int64_t v[4];
    if (mul_ov(a.lo, b.lo, &v[0]) || mul_ov(a.lo, b.hi, &v[1]) || mul_ov(a.hi, b.lo, &v[2]) ||
        mul_ov(a.hi, b.hi, &v[3]))
        return UNKNOWN;
    Rng r = rng(v[0], v[0]);
    for (int i = 1; i < 4; i++) {
        r.lo = v[i] < r.lo ? v[i] : r.lo;
        r.hi = v[i] > r.hi ? v[i] : r.hi;
    }
    return r;
}

/* a / b for a divisor range not containing 0: both floor and truncating
 * division are monotone in a, and in b for a fixed sign of a, so the
 * extremes are at the corners. */
static Rng r_div(Rng a, Rng b, int floor_)
{
    if (!a.ok || !b.ok || (b.lo <= 0 && b.hi >= 0))
        return UNKNOWN;
    if ((a.lo == INT64_MIN) && (b.lo == -1 || b.hi == -1))
        return UNKNOWN;
    int64_t c[4] = { a.lo, a.lo, a.hi, a.hi }, d[4] = { b.lo, b.hi, b.lo, b.hi };
    Rng r = UNKNOWN;
    for (int i = 0; i < 4; i++) {
        int64_t q = floor_ ? floordiv(c[i], d[i]) : c[i] / d[i];
        r = r.ok ? rng(q < r.lo ? q : r.lo, q > r.hi ? q : r.hi) : rng(q, q);
    }
    return r;
}

static Rng range(const Simp *S, const LoopExpr *e);

static Rng range_bin(const Simp *S, const LoopExpr *e)
{
    LoopBinOp op = e->u.bin.op;
    if (loop_binop_is_compare(op))
        return rng(0, 1);
    if (!ir_dtype_is_int(e->type) && e->type != IR_DT_BOOL)
        return UNKNOWN;
    Rng a = range(S, e->u.bin.a), b = range(S, e->u.bin.b), r = UNKNOWN;
    switch (op) {
    case LOOP_ADD: r = r_add(a, b); break;
    case LOOP_SUB: r = r_add(a, r_neg(b)); break;
    case LOOP_MUL: r = r_mul(a, b); break;
    case LOOP_DIV: r = r_div(a, b, 1); break;
    case LOOP_TDIV: r = r_div(a, b, 0); break;
    case LOOP_MOD:
        if (b.ok && b.lo > 0) {
            /* a within one period [q*c, q*c + c) of a constant c: a - q*c */
            int64_t q;
            if (a.ok && b.lo == b.hi && floordiv(a.lo, b.lo) == floordiv(a.hi, b.lo) &&
                !mul_ov(floordiv(a.lo, b.lo), b.lo, &q)) {
                r = rng(a.lo - q, a.hi - q);
            } else {
                r = rng(0, b.hi - 1);
            }
        } else if (b.ok && b.hi < 0) {
            r = rng(b.lo + 1, 0);
        }
        break;
    case LOOP_TMOD:
        if (b.ok && b.lo > 0) {  /* sign of a, magnitude below b */
            int64_t m = b.hi - 1;
            if (a.ok && a.lo >= 0)
                r = rng(0, a.hi < m ? a.hi : m);
            else if (a.ok && a.hi <= 0)
                r = rng(a.lo > -m ? a.lo : -m, 0);
            else
                r = rng(-m, m);
        }
        break;
    case LOOP_MIN:
        if (a.ok && b.ok)
            r = rng(a.lo < b.lo ? a.lo : b.lo, a.hi < b.hi ? a.hi : b.hi);
        break;
    case LOOP_MAX:
        if (a.ok && b.ok)
            r = rng(a.lo > b.lo ? a.lo : b.lo, a.hi > b.hi ? a.hi : b.hi);
        break;
    case LOOP_AND:   /* x & m with m >= 0 lies in [0, m] */
        if (e->type == IR_DT_BOOL)
            r = rng(0, 1);
        else if (a.ok && a.lo >= 0)
            r = rng(0, a.hi);
        else if (b.ok && b.lo >= 0)
            r = rng(0, b.hi);
        break;
    case LOOP_SHR:
        if (a.ok && b.ok && b.lo == b.hi && b.lo >= 0 && b.lo <= 63)
            r = rng(shr_floor(a.lo, (int)b.lo), shr_floor(a.hi, (int)b.lo));
        break;
    default:
        break;
    }
    return fit(r, e->type);
}

static Rng range(const Simp *S, const LoopExpr *e)
{
    switch (e->kind) {
    case LOOP_E_INT: return rng(e->u.i, e->u.i);
    case LOOP_E_VAR:
        if (e->u.var >= 0 && e->u.var < S->p->n_vars && S->var[e->u.var].ok)
            return fit(S->var[e->u.var], e->type);
        return type_range(e->type);
    case LOOP_E_BIN: return range_bin(S, e);
    case LOOP_E_UN: {
        Rng a = range(S, e->u.un.a);
        if (e->type == IR_DT_BOOL || !ir_dtype_is_int(e->type))
            return type_range(e->type);
        switch (e->u.un.op) {
        case LOOP_NEG: return fit(r_neg(a), e->type);
        case LOOP_NOT: return fit(a.ok ? rng(~a.hi, ~a.lo) : UNKNOWN, e->type);
        case LOOP_ABS:
            if (!a.ok || a.lo == INT64_MIN)
                return type_range(e->type);
            if (a.lo >= 0)
                return a;
            if (a.hi <= 0)
                return fit(rng(-a.hi, -a.lo), e->type);
            return fit(rng(0, -a.lo > a.hi ? -a.lo : a.hi), e->type);
        }
        return type_range(e->type);
    }
    case LOOP_E_SELECT: {
        Rng a = range(S, e->u.sel.a), b = range(S, e->u.sel.b);
        if (!a.ok || !b.ok)
            return type_range(e->type);
        return rng(a.lo < b.lo ? a.lo : b.lo, a.hi > b.hi ? a.hi : b.hi);
    }
    case LOOP_E_CAST: {
        const LoopExpr *a = e->u.cast.a;
        if (ir_dtype_is_int(a->type) || a->type == IR_DT_BOOL)
            return fit(range(S, a), e->type);
        return type_range(e->type);
    }
    default: return type_range(e->type);
    }
}

/* --------------------------------------------------------- linear forms */

#define MAX_TERMS 16

/* sum coef[i] * atom[i] + k over the int64 ring. */
typedef struct Lin {
    int n;
    LoopExpr *atom[MAX_TERMS];
    int64_t coef[MAX_TERMS];
    int64_t k;
} Lin;

static int lin_term(Lin *L, LoopExpr *atom, int64_t c)
{
    for (int i = 0; i < L->n; i++)
        if (loop_expr_equal(L->atom[i], atom))
            return add_ov(L->coef[i], c, &L->coef[i]) ? -1 : 0;
    if (L->n == MAX_TERMS)
        return -1;
    L->atom[L->n] = atom;
    L->coef[L->n++] = c;
    return 0;
}

/* Adds m * e to L; -1 when a coefficient would overflow or there are too
 * many terms (the caller then leaves the expression alone). */
static int linearize(Lin *L, LoopExpr *e, int64_t m)
{
    int64_t t;
    if (e->type != IR_DT_I64)
        return lin_term(L, e, m);
    switch (e->kind) {
    case LOOP_E_INT:   /* k += m*v */
        return mul_ov(m, e->u.i, &t) || add_ov(L->k, t, &L->k) ? -1 : 0;
    case LOOP_E_BIN:
        switch (e->u.bin.op) {
        case LOOP_ADD:   /* m*(a + b) = m*a + m*b */
            return linearize(L, e->u.bin.a, m) || linearize(L, e->u.bin.b, m) ? -1 : 0;
        case LOOP_SUB:   /* m*(a - b) = m*a + (-m)*b */
            return m == INT64_MIN || linearize(L, e->u.bin.a, m) || linearize(L, e->u.bin.b, -m) ? -1 : 0;
        case LOOP_MUL:   /* m*(a*c) = (m*c)*a */
            if (is_const(e->u.bin.b))
                return mul_ov(m, e->u.bin.b->u.i, &t) ? -1 : linearize(L, e->u.bin.a, t);
            if (is_const(e->u.bin.a))
                return mul_ov(m, e->u.bin.a->u.i, &t) ? -1 : linearize(L, e->u.bin.b, t);
            return lin_term(L, e, m);
        default: return lin_term(L, e, m);
        }
    case LOOP_E_UN:   /* m*(-a) = (-m)*a */
        if (e->u.un.op == LOOP_NEG)
            return m == INT64_MIN ? -1 : linearize(L, e->u.un.a, -m);
        return lin_term(L, e, m);
    default: return lin_term(L, e, m);
    }
}

/* Is a the quotient y / c of the same semantics as modulo op (floor: DIV
 * with MOD; trunc: TDIV with TMOD)?  Also when y is x / c1 and a is
 * x / (c1*c), the form (x / c1) / c takes once simplified. */
static int quotient_of(const LoopExpr *a, LoopBinOp mod_op, const LoopExpr *y, int64_t c)
{
    LoopBinOp div_op = mod_op == LOOP_MOD ? LOOP_DIV : LOOP_TDIV;
    int64_t cc;
    if (a->kind != LOOP_E_BIN || a->u.bin.op != div_op || !is_const(a->u.bin.b))
        return 0;
    if (a->u.bin.b->u.i == c && loop_expr_equal(a->u.bin.a, y))
        return 1;
    return div_op == LOOP_DIV && y->kind == LOOP_E_BIN && y->u.bin.op == LOOP_DIV && is_const(y->u.bin.b) &&
           y->u.bin.b->u.i > 0 && !mul_ov(y->u.bin.b->u.i, c, &cc) && a->u.bin.b->u.i == cc &&
           loop_expr_equal(a->u.bin.a, y->u.bin.a);
}

/* k*c*(y / c) + k*(y % c) = k*y, c > 0 (both floor or both trunc): a
 * position unflattened and flattened again, as a store through a
 * multi-index writes (pos / W)*W + pos % W.  A ring identity: y = c*q + r
 * holds for the mathematical q and r, and the machine's + and * wrap
 * modulo 2^64.  Repeated while pairs are found, so nested unflattenings
 * fold from the inside out. */
static void lin_divmod(Lin *L)
{
    for (int found = 1; found;) {
        found = 0;
        for (int j = 0; j < L->n && !found; j++) {
            LoopExpr *m = L->atom[j];
            int64_t k = L->coef[j], kc;
            if (k == 0 || m->kind != LOOP_E_BIN || (m->u.bin.op != LOOP_MOD && m->u.bin.op != LOOP_TMOD) ||
                !is_const(m->u.bin.b) || m->u.bin.b->u.i <= 0 || mul_ov(k, m->u.bin.b->u.i, &kc))
                continue;
            for (int i = 0; i < L->n && !found; i++) {
                if (i == j || L->coef[i] != kc || !quotient_of(L->atom[i], m->u.bin.op, m->u.bin.a, m->u.bin.b->u.i))
                    continue;
                Lin T = *L;
                T.coef[i] = T.coef[j] = 0;
                if (linearize(&T, m->u.bin.a, k) == 0) {
                    *L = T;
                    found = 1;
                }
            }
        }
    }
}

/* Range of L from its atoms' ranges (unknown if any atom's is or a bound
 * overflows). */
static Rng lin_range(const Simp *S, const Lin *L)
{
    Rng r = rng(L->k, L->k);
    for (int i = 0; i < L->n && r.ok; i++)
        if (L->coef[i])
            r = r_add(r, r_mulc(range(S, L->atom[i]), L->coef[i]));
    return r;
}

/* Canonical expression of L: terms in order, a coefficient of 1 or -1
 * written as + or -, the constant last, as "- c" when negative. */
static LoopExpr *lin_build(Simp *S, const Lin *L)
{
    LoopProgram *p = S->p;
    LoopExpr *acc = NULL;
    for (int i = 0; i < L->n; i++) {
        int64_t c = L->coef[i];
        LoopExpr *a = L->atom[i];
        if (c == 0)
            continue;
        if (!acc) {
            acc = c == 1 ? a : c == -1 ? loop_un(p, LOOP_NEG, a) : loop_bin(p, LOOP_MUL, a, loop_int(p, c));
        } else if (c > 0 || c == INT64_MIN) {
            acc = loop_bin(p, LOOP_ADD, acc, c == 1 ? a : loop_bin(p, LOOP_MUL, a, loop_int(p, c)));
        } else {
            acc = loop_bin(p, LOOP_SUB, acc, c == -1 ? a : loop_bin(p, LOOP_MUL, a, loop_int(p, -c)));
        }
        if (!acc)
            return NULL;
    }
    if (!acc)
        return loop_int(p, L->k);
    if (L->k > 0 || L->k == INT64_MIN)
        return loop_bin(p, LOOP_ADD, acc, loop_int(p, L->k));
    if (L->k < 0)
        return loop_bin(p, LOOP_SUB, acc, loop_int(p, -L->k));
    return acc;
}

/* --------------------------------------------------------- expressions */

static LoopExpr *simp(Simp *S, LoopExpr *e);

/* a / c and a % c for floor semantics, c > 0, a of type I64.  With
 * a = c*Q + R, where Q collects the terms whose coefficient c divides (and
 * floor(k/c)) and R the rest (and k mod c), if every value of R lies in one
 * period [t*c, t*c + c):
 *     a / c = Q + t        a % c = R - t*c
 * Only when a's own range is known (no wrap-around in evaluating it). */
static LoopExpr *divmod_split(Simp *S, LoopExpr *a, int64_t c, int want_div)
{
    Lin L = { 0 };
    if (!range(S, a).ok || linearize(&L, a, 1) != 0)
        return NULL;
    Lin Q = { 0 }, R = { 0 };
    for (int i = 0; i < L.n; i++) {
        if (L.coef[i] == 0)
            continue;
        if (L.coef[i] % c == 0)
            Q.atom[Q.n] = L.atom[i], Q.coef[Q.n++] = L.coef[i] / c;
        else
            R.atom[R.n] = L.atom[i], R.coef[R.n++] = L.coef[i];
    }
    Q.k = floordiv(L.k, c);
    R.k = floormod(L.k, c);
    Rng rr = lin_range(S, &R);
    if (!rr.ok || floordiv(rr.lo, c) != floordiv(rr.hi, c))
        return NULL;
    int64_t t = floordiv(rr.lo, c), tc;
    if (want_div)
        return add_ov(Q.k, t, &Q.k) ? NULL : lin_build(S, &Q);
    return mul_ov(t, c, &tc) || sub_ov(R.k, tc, &R.k) ? NULL : lin_build(S, &R);
}

/* Sign of a - b for integers a, b, from the ranges: -1 (a < b), 0 (a == b),
 * 1 (a > b), -2 (a <= b), 2 (a >= b), or 9 unknown. */
static int compare(Simp *S, LoopExpr *a, LoopExpr *b)
{
    Lin L = { 0 };
    if (a->type != IR_DT_I64 || linearize(&L, a, 1) != 0 || linearize(&L, b, -1) != 0)
        return 9;
    int all_cancel = 1;
    for (int i = 0; i < L.n; i++)
        all_cancel &= L.coef[i] == 0;
    /* a - b == k exactly (mod 2^64), so equality is decided even if a or b
     * wrapped; the order needs a and b's ranges to be known. */
    if (all_cancel && L.k == 0)
        return 0;
    if (!range(S, a).ok || !range(S, b).ok) {
        return all_cancel ? 8 : 9;   /* 8: different, order unknown */
    }
    Rng r = lin_range(S, &L);
    if (!r.ok)
        return 9;
    if (r.lo == 0 && r.hi == 0)
        return 0;
    if (r.hi < 0)
        return -1;
    if (r.lo > 0)
        return 1;
    if (r.hi <= 0)
        return -2;
    if (r.lo >= 0)
        return 2;
    return 9;
}

static int is_commutative(LoopBinOp op)
{
    return op == LOOP_ADD || op == LOOP_MUL || op == LOOP_MIN || op == LOOP_MAX || op == LOOP_EQ ||
           op == LOOP_NE || op == LOOP_AND || op == LOOP_OR || op == LOOP_XOR;
}

static LoopExpr *simp_bin(Simp *S, LoopExpr *e)
{
    LoopProgram *p = S->p;
    LoopBinOp op = e->u.bin.op;
    LoopExpr *a = e->u.bin.a, *b = e->u.bin.b;
    int64_t v;
    if (a->type != IR_DT_I64 && a->type != IR_DT_BOOL) {
        /* floats and narrow integers: only min(x, x) = max(x, x) = x */
        if ((op == LOOP_MIN || op == LOOP_MAX) && loop_expr_equal(a, b))
            return a;
        return e;
    }
    /* bool: only the logical operations (anything else is rejected by the
     * verifier, and must not be folded into a bool-typed 2) */
    if (a->type == IR_DT_BOOL && !(op == LOOP_AND || op == LOOP_OR || op == LOOP_XOR || op == LOOP_EQ ||
                                   op == LOOP_NE))
        return e;
    /* Constant folding (the table in fold_bin). */
    if (is_const(a) && is_const(b) && fold_bin(op, a->u.i, b->u.i, &v))
        return mk_int(S, e->type, v);
    /* c op x -> x op c for commutative op: constants on the right. */
    if (is_commutative(op) && is_const(a) && !is_const(b)) {
        e->u.bin.a = b;
        e->u.bin.b = a;
        a = e->u.bin.a;
        b = e->u.bin.b;
    }
    int cmp;
    switch (op) {
    case LOOP_ADD: case LOOP_SUB: case LOOP_MUL: {
        if (a->type != IR_DT_I64)
            return e;
        /* Linear form: x+0 = x, x*1 = x, x*0 = 0, x-x = 0, (x+c1)+c2 =
         * x+(c1+c2), (x*c1)*c2 = x*(c1*c2), (x+c)*d = x*d + c*d, like terms
         * collected. */
        Lin L = { 0 };
        if (linearize(&L, e, 1) != 0)
            return e;
        lin_divmod(&L);
        LoopExpr *r = lin_build(S, &L);
        return r ? r : e;
    }
    case LOOP_DIV: case LOOP_MOD: case LOOP_TDIV: case LOOP_TMOD: {
        if (a->type != IR_DT_I64 || !is_const(b) || b->u.i == 0)
            return e;
        int64_t c = b->u.i;
        int is_div = op == LOOP_DIV || op == LOOP_TDIV;
        if (c == 1)   /* x / 1 = x;  x % 1 = 0 (both semantics) */
            return is_div ? a : loop_int(p, 0);
        if (c < 0)
            return e;
        if (op == LOOP_TDIV || op == LOOP_TMOD) {
            /* trunc = floor when the dividend is >= 0 (c > 0 here) */
            Rng ra = range(S, a);
            if (!ra.ok || ra.lo < 0)
                return e;
            op = e->u.bin.op = op == LOOP_TDIV ? LOOP_DIV : LOOP_MOD;
        }
        /* (x / c1) / c2 = x / (c1*c2) for c1, c2 > 0 */
        if (op == LOOP_DIV && a->kind == LOOP_E_BIN && a->u.bin.op == LOOP_DIV && is_const(a->u.bin.b) &&
            a->u.bin.b->u.i > 0 && !mul_ov(a->u.bin.b->u.i, c, &v)) {
            e->u.bin.a = a->u.bin.a;
            e->u.bin.b = loop_int(p, v);
            return simp_bin(S, e);
        }
        /* (x % c1) % c2 = x % c2 when c2 divides c1 */
        if (op == LOOP_MOD && a->kind == LOOP_E_BIN && a->u.bin.op == LOOP_MOD && is_const(a->u.bin.b) &&
            a->u.bin.b->u.i > 0 && a->u.bin.b->u.i % c == 0) {
            e->u.bin.a = a->u.bin.a;
            return simp_bin(S, e);
        }
        /* (c*Q + R) / c = Q + t, (c*Q + R) % c = R - t*c, R in [t*c, t*c + c) */
        LoopExpr *r = divmod_split(S, a, c, op == LOOP_DIV);
        return r ? r : e;
    }
    case LOOP_MIN: case LOOP_MAX:
        /* min(a, b) = a when a <= b, b when a >= b; max the other way */
        cmp = compare(S, a, b);
        if (cmp == 0 || cmp == -1 || cmp == -2)
            return op == LOOP_MIN ? a : b;
        if (cmp == 1 || cmp == 2)
            return op == LOOP_MIN ? b : a;
        /* min(min(x, c1), c2) = min(x, min(c1, c2)), same for max */
        if (is_const(b) && a->kind == LOOP_E_BIN && a->u.bin.op == op && is_const(a->u.bin.b)) {
            fold_bin(op, a->u.bin.b->u.i, b->u.i, &v);
            e->u.bin.a = a->u.bin.a;
            e->u.bin.b = loop_int(p, v);
        }
        return e;
    case LOOP_LT: case LOOP_LE: case LOOP_EQ: case LOOP_NE: {
        /* decided by the sign of a - b */
        cmp = a->type == IR_DT_BOOL ? (loop_expr_equal(a, b) ? 0 : 9) : compare(S, a, b);
        int r = -1;
        switch (op) {
        case LOOP_LT: r = cmp == -1 ? 1 : (cmp == 0 || cmp == 1 || cmp == 2) ? 0 : -1; break;
        case LOOP_LE: r = (cmp == -1 || cmp == 0 || cmp == -2) ? 1 : cmp == 1 ? 0 : -1; break;
        case LOOP_EQ: r = cmp == 0 ? 1 : (cmp == 1 || cmp == -1 || cmp == 8) ? 0 : -1; break;
        case LOOP_NE: r = cmp == 0 ? 0 : (cmp == 1 || cmp == -1 || cmp == 8) ? 1 : -1; break;
        default: break;
        }
        return r >= 0 ? mk_int(S, IR_DT_BOOL, r) : e;
    }
    case LOOP_AND:   /* x & 0 = 0, x & -1 = x; bool: x & false = false, x & true = x */
        if (is_const(b))
            return b->u.i == 0 ? b : (b->u.i == -1 || (e->type == IR_DT_BOOL && b->u.i == 1)) ? a : e;
        return loop_expr_equal(a, b) ? a : e;   /* x & x = x */
    case LOOP_OR:    /* x | 0 = x; bool: x | true = true */
        if (is_const(b))
            return b->u.i == 0 ? a : (b->u.i == -1 || (e->type == IR_DT_BOOL && b->u.i == 1)) ? b : e;
        return loop_expr_equal(a, b) ? a : e;   /* x | x = x */
    case LOOP_XOR:   /* x ^ 0 = x; bool: x ^ true = !x; x ^ x = 0 */
        if (is_const(b) && b->u.i == 0)
            return a;
        if (is_const(b) && e->type == IR_DT_BOOL)
            return simp(S, loop_un(p, LOOP_NOT, a));
        return loop_expr_equal(a, b) ? mk_int(S, e->type, 0) : e;
    case LOOP_SHL: case LOOP_SHR:   /* x << 0 = x >> 0 = x */
        return is_int(b, 0) ? a : e;
    }
    return e;
}

static LoopExpr *simp_un(Simp *S, LoopExpr *e)
{
    LoopExpr *a = e->u.un.a;
    switch (e->u.un.op) {
    case LOOP_NEG:
        /* -(-x) = x, exact for integers (mod 2^64) and IEEE floats */
        if (a->kind == LOOP_E_UN && a->u.un.op == LOOP_NEG)
            return a->u.un.a;
        if (is_const(a) && e->type == IR_DT_I64 && a->u.i != INT64_MIN)
            return loop_int(S->p, -a->u.i);
        if (e->type == IR_DT_I64) {   /* -(x + c) = -x - c, via the linear form */
            Lin L = { 0 };
            LoopExpr *r = linearize(&L, e, 1) == 0 ? lin_build(S, &L) : NULL;
            return r ? r : e;
        }
        return e;
    case LOOP_NOT:
        /* !!x = x, ~~x = x; !c and ~c folded */
        if (a->kind == LOOP_E_UN && a->u.un.op == LOOP_NOT)
            return a->u.un.a;
        if (is_const(a))
            return mk_int(S, e->type, e->type == IR_DT_BOOL ? !a->u.i : ~a->u.i);
        return e;
    case LOOP_ABS:
        /* abs(x) = x when x >= 0; abs(c) folded (not INT64_MIN) */
        if (e->type == IR_DT_I64) {
            Rng r = range(S, a);
            if (r.ok && r.lo >= 0)
                return a;
            if (is_const(a) && a->u.i != INT64_MIN)
                return loop_int(S->p, a->u.i < 0 ? -a->u.i : a->u.i);
        }
        return e;
    }
    return e;
}

static LoopExpr *simp(Simp *S, LoopExpr *e)
{
    if (!e)
        return NULL;
    switch (e->kind) {
    case LOOP_E_INT: case LOOP_E_FLOAT:
        return e;
    case LOOP_E_VAR: {
        /* a variable whose range is one value c is c (loop of extent 1, let
         * of a constant) */
        if (e->type != IR_DT_I64 && e->type != IR_DT_BOOL)
            return e;
        Rng r = range(S, e);
        return r.ok && r.lo == r.hi ? mk_int(S, e->type, r.lo) : e;
    }
    case LOOP_E_LOAD:
        e->u.load.index = simp(S, e->u.load.index);
        return e;
    case LOOP_E_BIN:
        e->u.bin.a = simp(S, e->u.bin.a);
        e->u.bin.b = simp(S, e->u.bin.b);
        if (!e->u.bin.a || !e->u.bin.b)
            return e;
        return simp_bin(S, e);
    case LOOP_E_UN:
        e->u.un.a = simp(S, e->u.un.a);
        return e->u.un.a ? simp_un(S, e) : e;
    case LOOP_E_SELECT:
        e->u.sel.cond = simp(S, e->u.sel.cond);
        e->u.sel.a = simp(S, e->u.sel.a);
        e->u.sel.b = simp(S, e->u.sel.b);
        if (e->u.sel.cond && is_const(e->u.sel.cond))   /* true ? a : b = a, false ? a : b = b */
            return e->u.sel.cond->u.i ? e->u.sel.a : e->u.sel.b;
        if (loop_expr_equal(e->u.sel.a, e->u.sel.b))     /* c ? a : a = a */
            return e->u.sel.a;
        return e;
    case LOOP_E_CALL:
        for (int i = 0; i < e->u.call.n && i < 3; i++)
            e->u.call.args[i] = simp(S, e->u.call.args[i]);
        return e;
    case LOOP_E_CAST: {
        LoopExpr *a = e->u.cast.a = simp(S, e->u.cast.a);
        if (!a)
            return e;
        if (a->type == e->type)   /* T(x : T) = x */
            return a;
        if (is_const(a)) {
            /* bool <-> int64 constants; small integers are exact in float32/64 */
            if (e->type == IR_DT_I64 || e->type == IR_DT_BOOL)
                return mk_int(S, e->type, e->type == IR_DT_BOOL ? a->u.i != 0 : a->u.i);
            if ((e->type == IR_DT_F32 || e->type == IR_DT_F64) && a->u.i >= -(1 << 24) && a->u.i <= (1 << 24))
                return loop_float(S->p, e->type, (double)a->u.i);
        }
        return e;
    }
    }
    return e;
}

/* ---------------------------------------------------------- statements */

static int valid_var(const Simp *S, int var) { return var >= 0 && var < S->p->n_vars; }

/* Calls fn on every FOR and LET under s, in program order. */
static void each_binding(Simp *S, const LoopStmt *s, void (*fn)(Simp *S, const LoopStmt *s))
{
    if (!s)
        return;
    switch (s->kind) {
    case LOOP_S_FOR:
        fn(S, s);
        each_binding(S, s->u.loop.body, fn);
        break;
    case LOOP_S_LET: fn(S, s); break;
    case LOOP_S_IF:
        each_binding(S, s->u.cond.then_, fn);
        each_binding(S, s->u.cond.else_, fn);
        break;
    case LOOP_S_BLOCK:
        for (int i = 0; i < s->u.block.n; i++)
            each_binding(S, s->u.block.items[i], fn);
        break;
    default:
        break;
    }
}

static void count_binding(Simp *S, const LoopStmt *s)
{
    int var = s->kind == LOOP_S_FOR ? s->u.loop.var : s->u.let.var;
    if (valid_var(S, var))
        S->nbind[var]++;
}

/* Records the range of a variable at its (single) binding. */
static void bind_for(Simp *S, const LoopStmt *s)
{
    int var = s->u.loop.var;
    if (!valid_var(S, var) || S->nbind[var] != 1 || !s->u.loop.extent)
        return;
    Rng r = range(S, s->u.loop.extent);
    /* 0 <= var < extent <= INT64_MAX */
    S->var[var] = r.ok ? rng(0, r.hi > 1 ? r.hi - 1 : 0) : rng(0, INT64_MAX - 1);
}

static void bind_let(Simp *S, const LoopStmt *s)
{
    int var = s->u.let.var;
    if (!valid_var(S, var) || S->nbind[var] != 1 || s->u.let.mutable_ || !s->u.let.value)
        return;
    IrDType t = S->p->vars[var].type;
    if (s->u.let.value->type == t && (t == IR_DT_I64 || t == IR_DT_BOOL || ir_dtype_is_int(t)))
        S->var[var] = range(S, s->u.let.value);
}

/* Range collection without rewriting, for loop_simplify_expr. */
static void collect(Simp *S, const LoopStmt *s)
{
    if (s->kind == LOOP_S_FOR)
        bind_for(S, s);
    else
        bind_let(S, s);
}

static int is_empty(const LoopStmt *s) { return s->kind == LOOP_S_BLOCK && s->u.block.n == 0; }

static LoopStmt *simp_stmt(Simp *S, LoopStmt *s);

static LoopStmt *simp_block(Simp *S, LoopStmt *s)
{
    LoopStmt *out = loop_block(S->p);
    if (!out)
        return s;
    for (int i = 0; i < s->u.block.n; i++) {
        LoopStmt *t = simp_stmt(S, s->u.block.items[i]);
        if (t->kind == LOOP_S_BLOCK) {   /* flatten: var ids are unique, so widening a let's scope is harmless */
            for (int j = 0; j < t->u.block.n; j++)
                if (loop_block_add(S->p, out, t->u.block.items[j]) != 0)
                    return s;
        } else if (loop_block_add(S->p, out, t) != 0) {
            return s;
        }
    }
    return out;
}

static LoopStmt *simp_stmt(Simp *S, LoopStmt *s)
{
    if (!s)
        return s;
    switch (s->kind) {
    case LOOP_S_FOR: {
        s->u.loop.extent = simp(S, s->u.loop.extent);
        bind_for(S, s);
        Rng ext = range(S, s->u.loop.extent);
        s->u.loop.body = simp_stmt(S, s->u.loop.body);
        if (ext.ok && ext.hi <= 0) {   /* no iteration */
            LoopStmt *empty = loop_block(S->p);
            return empty ? empty : s;
        }
        LoopForKind k = s->u.loop.kind;
        int plain = k == LOOP_SERIAL || k == LOOP_PARALLEL || k == LOOP_VECTORIZED || k == LOOP_UNROLLED;
        if (plain && is_empty(s->u.loop.body))
            return s->u.loop.body;
        /* one iteration: the body, where the variable was replaced by 0 */
        if (plain && ext.ok && ext.lo == 1 && ext.hi == 1 && S->nbind[s->u.loop.var] == 1)
            return s->u.loop.body;
        return s;
    }
    case LOOP_S_LET: {
        s->u.let.value = simp(S, s->u.let.value);
        bind_let(S, s);
        int var = s->u.let.var;
        /* an immutable let of a constant: every use becomes the constant */
        if (valid_var(S, var) && S->nbind[var] == 1 && !s->u.let.mutable_ && S->var[var].ok &&
            S->var[var].lo == S->var[var].hi &&
            (S->p->vars[var].type == IR_DT_I64 || S->p->vars[var].type == IR_DT_BOOL)) {
            LoopStmt *empty = loop_block(S->p);
            return empty ? empty : s;
        }
        return s;
    }
    case LOOP_S_ASSIGN:
        s->u.assign.value = simp(S, s->u.assign.value);
        return s;
    case LOOP_S_STORE:
        s->u.store.index = simp(S, s->u.store.index);
        s->u.store.value = simp(S, s->u.store.value);
        return s;
    case LOOP_S_IF: {
        s->u.cond.cond = simp(S, s->u.cond.cond);
        s->u.cond.then_ = simp_stmt(S, s->u.cond.then_);
        s->u.cond.else_ = simp_stmt(S, s->u.cond.else_);
        if (s->u.cond.cond && is_const(s->u.cond.cond)) {   /* if true / if false */
            LoopStmt *t = s->u.cond.cond->u.i ? s->u.cond.then_ : s->u.cond.else_;
            if (!t)
                t = loop_block(S->p);
            return t ? t : s;
        }
        return s;
    }
    case LOOP_S_BLOCK: return simp_block(S, s);
    case LOOP_S_PREFETCH:
        s->u.prefetch.index = simp(S, s->u.prefetch.index);
        return s;
    case LOOP_S_BARRIER: return s;
    }
    return s;
}

static int simp_init(Simp *S, LoopProgram *p)
{
    size_t n = p->n_vars > 0 ? (size_t)p->n_vars : 1;
    S->p = p;
    S->var = calloc(n, sizeof *S->var);
    S->nbind = calloc(n, sizeof *S->nbind);
    if (!S->var || !S->nbind) {
        free(S->var);
        free(S->nbind);
        return -1;
    }
    for (int k = 0; k < p->n_kernels; k++)
        each_binding(S, p->kernels[k].body, count_binding);
    return 0;
}

static void simp_free(Simp *S)
{
    free(S->var);
    free(S->nbind);
}

LoopExpr *loop_simplify_expr(LoopProgram *p, LoopExpr *e)
{
    Simp S;
    if (simp_init(&S, p) != 0)
        return e;
    for (int k = 0; k < p->n_kernels; k++)
        each_binding(&S, p->kernels[k].body, collect);
    e = simp(&S, e);
    simp_free(&S);
    return e;
}

void loop_simplify(LoopProgram *p)
{
    Simp S;
    if (simp_init(&S, p) != 0)
        return;
    for (int k = 0; k < p->n_kernels; k++)
        p->kernels[k].body = simp_stmt(&S, p->kernels[k].body);
    simp_free(&S);
}
