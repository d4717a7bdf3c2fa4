/* lower/scalar.c — the scalar function of each elementwise operator
 * (LowEw): unary functions, binary / comparison / logical operators,
 * variadic Min/Max/Sum/Mean, Where, Clip, Cast/CastLike.  The elementwise
 * templates (elementwise.c) compute it per output element, a fused group's
 * head applies its members' in its epilogue (fused.c, low_ew_member), and
 * the recurrent cells use the unary ones for their activations (rnn.c).
 *
 * Semantics follow the reference interpreter: floats compute in their
 * compute type (float16/bfloat16 in float32); integers compute in their own
 * type for the operators with an integer form (Abs Neg Sign Relu Not Clip,
 * all binary operators) and through float64 otherwise.  Integer division
 * and modulo by zero give 0 (loop IR semantics; the interpreter reports an
 * error), INT_MIN / -1 wraps: no kernel traps. */
#include "lower/lower_impl.h"

#include <string.h>

static int int_like(IrDType t) { return ir_dtype_is_int(t) || t == IR_DT_BOOL; }

/* ---------------------------------------------------------------- unary */

static LoopExpr *call1(Low *L, LoopIntrinsic fn, LoopExpr *a) { return loop_call(L->p, fn, 1, &a); }

/* ln(1 + e^x), without overflow for large x. */
static LoopExpr *softplus(Low *L, IrDType ct, int x)
{
    LoopExpr *one = low_const(L, ct, 1);
    LoopExpr *pos = low_bin(L, LOOP_ADD, low_v(L, x),
                            call1(L, LOOP_I_log, low_bin(L, LOOP_ADD, one,
                                                         call1(L, LOOP_I_exp, loop_un(L->p, LOOP_NEG, low_v(L, x))))));
    LoopExpr *neg = call1(L, LOOP_I_log, low_bin(L, LOOP_ADD, low_const(L, ct, 1), call1(L, LOOP_I_exp, low_v(L, x))));
    return loop_select(L->p, low_bin(L, LOOP_LT, low_const(L, ct, 0), low_v(L, x)), pos, neg);
}

/* e^x - 1 */
static LoopExpr *em1(Low *L, IrDType ct, LoopExpr *x)
{
    return low_bin(L, LOOP_SUB, call1(L, LOOP_I_exp, x), low_const(L, ct, 1));
}

LoopExpr *low_unary_expr(Low *L, IrOp op, IrDType ct, int x, double alpha, double beta)
{
    const IrNode *n = L->n;
#define X low_v(L, x)
#define C(v) low_const(L, ct, (v))
#define B(op, a, b) low_bin(L, LOOP_##op, a, b)
#define SEL(c, a, b) loop_select(L->p, c, a, b)
    switch (op) {
    case IR_OP_Abs: return ir_dtype_is_int(ct) && !ir_dtype_is_signed(ct) ? X : loop_un(L->p, LOOP_ABS, X);
    case IR_OP_Neg: return loop_un(L->p, LOOP_NEG, X);
    case IR_OP_Reciprocal: return B(DIV, C(1), X);
    case IR_OP_Sqrt: return call1(L, LOOP_I_sqrt, X);
    case IR_OP_Exp: return call1(L, LOOP_I_exp, X);
    case IR_OP_Log: return call1(L, LOOP_I_log, X);
    case IR_OP_Erf: return call1(L, LOOP_I_erf, X);
    case IR_OP_Tanh: return call1(L, LOOP_I_tanh, X);
    case IR_OP_Sigmoid: return B(DIV, C(1), B(ADD, C(1), call1(L, LOOP_I_exp, loop_un(L->p, LOOP_NEG, X))));
    case IR_OP_Relu: return SEL(B(LT, X, C(0)), C(0), X);
    case IR_OP_LeakyRelu: return SEL(B(LT, X, C(0)), B(MUL, C(alpha), X), X);
    case IR_OP_Elu: return SEL(B(LT, X, C(0)), B(MUL, C(alpha), em1(L, ct, X)), X);
    case IR_OP_Selu:
        return B(MUL, C(ir_attr_float(n, IR_A_gamma)), SEL(B(LE, X, C(0)), B(MUL, C(alpha), em1(L, ct, X)), X));
    case IR_OP_Celu:
        return B(ADD, B(MAX, C(0), X), B(MIN, C(0), B(MUL, C(alpha), em1(L, ct, B(DIV, X, C(alpha))))));
    case IR_OP_ThresholdedRelu: return SEL(B(LT, C(alpha), X), X, C(0));
    case IR_OP_HardSigmoid: return B(MAX, C(0), B(MIN, C(1), B(ADD, B(MUL, C(alpha), X), C(beta))));
    case IR_OP_HardSwish: return B(MUL, X, B(MAX, C(0), B(MIN, C(1), B(ADD, B(DIV, X, C(6)), C(0.5)))));
    case IR_OP_Softplus: return softplus(L, ct, x);
    case IR_OP_Softsign: return B(DIV, X, B(ADD, C(1), loop_un(L->p, LOOP_ABS, X)));
    case IR_OP_Gelu:
        if (!strcmp(ir_attr_str(n, IR_A_approximate), "tanh")) {
            LoopExpr *inner = B(MUL, C(0.79788456080286535588), B(ADD, X, B(MUL, B(MUL, B(MUL, C(0.044715), X), X), X)));
            return B(MUL, B(MUL, C(0.5), X), B(ADD, C(1), call1(L, LOOP_I_tanh, inner)));
        }
        return B(MUL, B(MUL, C(0.5), X), B(ADD, C(1), call1(L, LOOP_I_erf, B(MUL, X, C(0.70710678118654752440)))));
    case IR_OP_Mish: return B(MUL, X, call1(L, LOOP_I_tanh, softplus(L, ct, x)));
    case IR_OP_Shrink: {
        double lambd = ir_attr_float(n, IR_A_lambd), bias = ir_attr_float(n, IR_A_bias);
        return SEL(B(LT, X, C(-lambd)), B(ADD, X, C(bias)), SEL(B(LT, C(lambd), X), B(SUB, X, C(bias)), C(0)));
    }
    case IR_OP_Floor: return call1(L, LOOP_I_floor, X);
    case IR_OP_Ceil: return call1(L, LOOP_I_ceil, X);
    case IR_OP_Round: return call1(L, LOOP_I_round_even, X);
    case IR_OP_Sign: return SEL(B(LT, C(0), X), C(1), SEL(B(LT, X, C(0)), C(-1), ir_dtype_is_float(ct) ? X : C(0)));
    case IR_OP_Sin: return call1(L, LOOP_I_sin, X);
    case IR_OP_Cos: return call1(L, LOOP_I_cos, X);
    case IR_OP_Tan: return call1(L, LOOP_I_tan, X);
    case IR_OP_Asin: return call1(L, LOOP_I_asin, X);
    case IR_OP_Acos: return call1(L, LOOP_I_acos, X);
    case IR_OP_Atan: return call1(L, LOOP_I_atan, X);
    case IR_OP_Sinh: return call1(L, LOOP_I_sinh, X);
    case IR_OP_Cosh: return call1(L, LOOP_I_cosh, X);
    case IR_OP_Asinh: return call1(L, LOOP_I_asinh, X);
    case IR_OP_Acosh: return call1(L, LOOP_I_acosh, X);
    case IR_OP_Atanh: return call1(L, LOOP_I_atanh, X);
    case IR_OP_Not: return B(EQ, X, low_const(L, IR_DT_BOOL, 0));
    case IR_OP_BitwiseNot: return loop_un(L->p, LOOP_NOT, X);
    case IR_OP_Swish: return B(DIV, X, B(ADD, C(1), call1(L, LOOP_I_exp, B(MUL, C(-alpha), X))));
    case IR_OP_IsNaN: return call1(L, LOOP_I_isnan, X);
    case IR_OP_IsInf: {
        int pos = ir_attr_int(n, IR_A_detect_positive) != 0, neg = ir_attr_int(n, IR_A_detect_negative) != 0;
        if (!pos && !neg)
            return low_const(L, IR_DT_BOOL, 0);
        LoopExpr *inf = call1(L, LOOP_I_isinf, X);
        if (pos && neg)
            return inf;
        return B(AND, inf, pos ? B(LT, C(0), X) : B(LT, X, C(0)));
    }
    default: return X;
    }
}

static LoopExpr *unary_expr(Low *L, const LowEw *e, const int *xs)
{
    return low_unary_expr(L, e->op, e->ct, xs[0], ir_attr_float(L->n, IR_A_alpha), ir_attr_float(L->n, IR_A_beta));
}

/* Clip: x < lo ? lo : x, then hi < x ? hi : x (NaN stays NaN) */
static LoopExpr *clip_expr(Low *L, const LowEw *e, const int *xs)
{
    IrDType ct = e->ct;
    LoopExpr *v = low_v(L, xs[0]);
    if (e->has_lo || e->buf[1] >= 0) {
        LoopExpr *lo = e->has_lo ? C(e->lo) : low_v(L, xs[1]);
        v = SEL(B(LT, v, lo), loop_expr_copy(L->p, lo), loop_expr_copy(L->p, v));
    }
    if (e->has_hi || e->buf[2] >= 0) {
        LoopExpr *hi = e->has_hi ? C(e->hi) : low_v(L, xs[2]);
        v = SEL(B(LT, hi, v), loop_expr_copy(L->p, hi), loop_expr_copy(L->p, v));
    }
    return v;
}

/* Operators computed on integers without going through float64. */
static int unary_has_int(IrOp op)
{
    return op == IR_OP_Abs || op == IR_OP_Neg || op == IR_OP_Sign || op == IR_OP_Relu || op == IR_OP_Not ||
           op == IR_OP_Clip || op == IR_OP_BitwiseNot;
}

static IrDType unary_ctype(IrOp op, IrDType t)
{
    if (int_like(t))
        return unary_has_int(op) ? t : IR_DT_F64;
    return low_ctype(t);
}

/* Each family's setup fills an LowEw for node L->n: operands, the type each
 * is loaded as, the compute type and the scalar function.  Kernels run it
 * with ew_run; a fused member applies it in its group's store
 * (low_ew_member). */
static void unary_setup(Low *L, LowEw *e)
{
    *e = (LowEw){ .op = L->n->op, .n = 1, .buf = { low_in(L, 0) }, .fn = unary_expr };
    e->ct = e->ty[0] = unary_ctype(e->op, low_buf(L, e->buf[0])->dtype);
}

static void clip_setup(Low *L, LowEw *e)
{
    *e = (LowEw){ .op = IR_OP_Clip, .n = 3, .buf = { low_in(L, 0), -1, -1 }, .fn = clip_expr };
    e->ct = unary_ctype(IR_OP_Clip, low_buf(L, e->buf[0])->dtype);
    for (int k = 0; k < 3; k++)
        e->ty[k] = e->ct;
    for (int k = 1; k < 3; k++) {
        const IrArray *a = low_known(L, k);
        if (a && ir_array_numel(a) > 0) {
            double v = ir_load_f64(a->dtype, a->data, 0);
            *(k == 1 ? &e->lo : &e->hi) = v;
            *(k == 1 ? &e->has_lo : &e->has_hi) = 1;
        } else if (!a) {
            e->buf[k] = low_in(L, k);         /* runtime scalar bound, or absent (-1) */
        }
    }
}

/* --------------------------------------------------------------- binary */

static LoopExpr *binary_expr(Low *L, const LowEw *e, const int *x)
{
    IrDType ct = e->ct;
    int a = x[0], b = x[1], is_f = ir_dtype_is_float(ct);
#define A low_v(L, a)
#define BB low_v(L, b)
    switch (e->op) {
    case IR_OP_Add: return B(ADD, A, BB);
    case IR_OP_Sub: return B(SUB, A, BB);
    case IR_OP_Mul: return B(MUL, A, BB);
    case IR_OP_Div: return low_bin(L, is_f ? LOOP_DIV : LOOP_TDIV, A, BB);
    case IR_OP_Pow: {
        LoopExpr *args[2] = { A, BB };
        return loop_call(L->p, LOOP_I_pow, 2, args);
    }
    case IR_OP_Mod: {
        int fmod_ = ir_attr_int(L->n, IR_A_fmod) != 0;
        if (!is_f)
            return low_bin(L, fmod_ ? LOOP_TMOD : LOOP_MOD, A, BB);
        LoopExpr *r = B(TMOD, A, BB);
        if (fmod_)
            return r;
        /* the result takes the divisor's sign: r != 0 && (r < 0) != (b < 0) ? r + b : r */
        LoopExpr *fix = B(AND, B(NE, r, C(0)), B(NE, B(LT, loop_expr_copy(L->p, r), C(0)), B(LT, BB, C(0))));
        return SEL(fix, B(ADD, loop_expr_copy(L->p, r), BB), loop_expr_copy(L->p, r));
    }
    case IR_OP_PRelu:
        if (ir_dtype_is_int(ct) && !ir_dtype_is_signed(ct))
            return A;
        return SEL(B(LT, A, C(0)), B(MUL, A, BB), A);
    case IR_OP_BitShift:    /* a shift by the width or more gives 0 (loop IR semantics, as the interpreter) */
        return low_bin(L, !strcmp(ir_attr_str(L->n, IR_A_direction), "LEFT") ? LOOP_SHL : LOOP_SHR, A, BB);
    case IR_OP_Equal: return B(EQ, A, BB);
    case IR_OP_Less: return B(LT, A, BB);
    case IR_OP_LessOrEqual: return B(LE, A, BB);
    case IR_OP_Greater: return B(LT, BB, A);
    case IR_OP_GreaterOrEqual: return B(LE, BB, A);
    case IR_OP_And: return B(AND, A, BB);
    case IR_OP_Or: return B(OR, A, BB);
    case IR_OP_Xor:
    case IR_OP_BitwiseXor: return B(XOR, A, BB);
    case IR_OP_BitwiseAnd: return B(AND, A, BB);
    case IR_OP_BitwiseOr: return B(OR, A, BB);
    default: return NULL;
    }
}

static int is_logical(IrOp op) { return op == IR_OP_And || op == IR_OP_Or || op == IR_OP_Xor; }

static void binary_setup(Low *L, LowEw *e)
{
    IrOp op = L->n->op;
    *e = (LowEw){ .op = op, .n = 2, .buf = { low_in(L, 0), low_in(L, 1) }, .fn = binary_expr };
    IrDType ta = low_buf(L, e->buf[0])->dtype;
    if (is_logical(op))
        e->ct = IR_DT_BOOL;
    else if (op == IR_OP_Pow && int_like(ta))
        e->ct = IR_DT_F64;                      /* exact for every result below 2^53 */
    else if (ta == IR_DT_BOOL)
        e->ct = IR_DT_I64;                      /* comparisons of bools */
    else
        e->ct = int_like(ta) ? ta : low_ctype(ta);
    e->ty[0] = e->ty[1] = e->ct;
}

/* ------------------------------------------------------------- variadic */

static LoopExpr *variadic_expr(Low *L, const LowEw *e, const int *x)
{
    IrDType ct = e->ct;
    LoopBinOp op = e->op == IR_OP_Min ? LOOP_MIN : e->op == IR_OP_Max ? LOOP_MAX : LOOP_ADD;
    LoopExpr *v = low_v(L, x[0]);
    for (int i = 1; i < e->n; i++)
        v = low_bin(L, op, v, low_v(L, x[i]));
    if (e->op == IR_OP_Mean)
        v = ir_dtype_is_float(ct) ? B(DIV, v, C(e->n)) : B(TDIV, v, C(e->n));
    return v;
}

static void variadic_setup(Low *L, LowEw *e)
{
    *e = (LowEw){ .op = L->n->op, .n = L->n->n_in, .fn = variadic_expr };
    IrDType t = L->g->tensors[L->n->out[0]].v.dtype;
    e->ct = t == IR_DT_BOOL ? IR_DT_I64 : low_ctype(t);
    for (int i = 0; i < e->n; i++) {
        e->buf[i] = low_in(L, i);
        e->ty[i] = e->ct;
    }
}

/* ---------------------------------------------- Where, Cast, Dropout */

static LoopExpr *where_expr(Low *L, const LowEw *e, const int *x)
{
    (void)e;
    return loop_select(L->p, low_v(L, x[0]), low_v(L, x[1]), low_v(L, x[2]));
}

static void where_setup(Low *L, LowEw *e)
{
    *e = (LowEw){ .op = IR_OP_Where, .n = 3, .buf = { low_in(L, 0), low_in(L, 1), low_in(L, 2) }, .fn = where_expr };
    e->ct = L->g->tensors[L->n->out[0]].v.dtype;
    e->ty[0] = IR_DT_BOOL;
    e->ty[1] = e->ty[2] = e->ct;
}

LoopExpr *low_ew_identity(Low *L, const LowEw *e, const int *x)
{
    (void)e;
    return low_v(L, x[0]);
}

/* Cast / CastLike: the conversion happens in the store (low_store). */
static void cast_setup(Low *L, LowEw *e)
{
    *e = (LowEw){ .op = L->n->op, .n = 1, .buf = { low_in(L, 0) }, .fn = low_ew_identity };
    e->ct = e->ty[0] = low_buf(L, e->buf[0])->dtype;
}

/* The setup of elementwise node L->n's family. */
/* The setup of each family of ir/ops.def's elementwise templates (its
 * lower column: clip, binary, variadic, where, cast; unary the rest). */
void low_ew_setup(Low *L, LowEw *e)
{
    switch (L->n->op) {
    case IR_OP_Clip: clip_setup(L, e); break;
    case IR_OP_Add: case IR_OP_Sub: case IR_OP_Mul: case IR_OP_Div: case IR_OP_Pow: case IR_OP_Mod:
    case IR_OP_PRelu: case IR_OP_BitShift: case IR_OP_Equal: case IR_OP_Less: case IR_OP_LessOrEqual:
    case IR_OP_Greater: case IR_OP_GreaterOrEqual: case IR_OP_And: case IR_OP_Or: case IR_OP_Xor:
    case IR_OP_BitwiseAnd: case IR_OP_BitwiseOr: case IR_OP_BitwiseXor: binary_setup(L, e); break;
    case IR_OP_Min: case IR_OP_Max: case IR_OP_Sum: case IR_OP_Mean: variadic_setup(L, e); break;
    case IR_OP_Where: where_setup(L, e); break;
    case IR_OP_Cast: case IR_OP_CastLike: cast_setup(L, e); break;
    default: unary_setup(L, e); break;
    }
}

/* Flat index of buffer b at the output multi-index idx (rank), numpy
 * broadcasting (b's dims right-aligned, size-1 dims at 0); idx copied. */
static LoopExpr *bcast_at(Low *L, int b, LoopExpr *const *idx, int rank)
{
    const LoopBuf *bf = low_buf(L, b);
    LoopExpr *bi[IR_MAX_RANK];
    int off = rank - bf->shape.rank;
    for (int i = 0; i < bf->shape.rank; i++)
        bi[i] = bf->shape.dims[i] == 1 ? low_i(L, 0) : loop_expr_copy(L->p, idx[off + i]);
    return low_index(L, b, bi);
}

LoopExpr *low_ew_member(Low *L, LoopStmt *blk, int chain, int chain_var, LoopExpr *const *idx, int rank,
                        const LoopExpr *flat)
{
    LowEw e;
    low_ew_setup(L, &e);
    IrDType cdt = L->g->tensors[chain].v.dtype;
    int x[IR_VARIADIC];
    for (int i = 0; i < e.n; i++) {
        LoopExpr *v = NULL;
        x[i] = -1;
        if (i < L->n->n_in && L->n->in[i] == chain) {
            /* the value as the unfused kernel would read it: stored as the
             * intermediate's dtype, loaded as this operand's type */
            v = low_convert(L, low_convert(L, low_v(L, chain_var), cdt), e.ty[i]);
        } else if (e.buf[i] >= 0) {
            LoopExpr *at = !flat ? bcast_at(L, e.buf[i], idx, rank)
                         : ir_shape_numel(&low_buf(L, e.buf[i])->shape) == 1 ? low_i(L, 0)
                         : loop_expr_copy(L->p, flat);
            v = low_load(L, e.buf[i], at, e.ty[i]);
        } else {
            continue;
        }
        if ((x[i] = low_let(L, blk, "v", v, 0)) < 0)
            return NULL;
    }
    return e.fn(L, &e, x);
}
