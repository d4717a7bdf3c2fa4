/* interp/k_elementwise.c — reference kernels of the elementwise operators:
 * unary functions, Clip, Cast, Dropout (inference), the binary operators with
 * numpy broadcasting, the variadic Min/Max/Sum/Mean, Where and Swish.
 *
 * Floating-point values are computed in double, integers in int64 (exact,
 * wrapping like C unsigned arithmetic), bool as 0/1.  Every binary and
 * variadic operator goes through one broadcasting loop (bcast_loop) that
 * switches on the operator for the scalar function. */
#include "interp/kernels.h"

#include <math.h>
#include <string.h>

static int dtype_int_like(IrDType t) { return ir_dtype_is_int(t) || t == IR_DT_BOOL; }

/* ------------------------------------------------------------ unary */

typedef struct UnaryParams {
    IrOp op;
    double alpha, beta, gamma, lambd, bias, lo, hi;
    int64_t ilo, ihi;
    int tanh_gelu, det_pos, det_neg;
} UnaryParams;

/* Round half to even without depending on the floating-point environment. */
static double round_even(double x)
{
    double r = floor(x), diff = x - r;
    if (diff > 0.5 || (diff == 0.5 && fmod(r, 2.0) != 0.0))
        r += 1.0;
    return r;
}

static double softplus(double x) { return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x)); }

static double unary_f(const UnaryParams *p, double x)
{
    switch (p->op) {
    case IR_OP_Abs: return fabs(x);
    case IR_OP_Neg: return -x;
    case IR_OP_Reciprocal: return 1.0 / x;
    case IR_OP_Sqrt: return sqrt(x);
    case IR_OP_Exp: return exp(x);
    case IR_OP_Log: return log(x);
    case IR_OP_Erf: return erf(x);
    case IR_OP_Tanh: return tanh(x);
    case IR_OP_Sigmoid: return x >= 0 ? 1.0 / (1.0 + exp(-x)) : exp(x) / (1.0 + exp(x));
    case IR_OP_Relu: return x < 0 ? 0.0 : x;
    case IR_OP_LeakyRelu: return x < 0 ? p->alpha * x : x;
    case IR_OP_Elu: return x < 0 ? p->alpha * expm1(x) : x;
    case IR_OP_Selu: return p->gamma * (x <= 0 ? p->alpha * expm1(x) : x);
    case IR_OP_Celu: return fmax(0.0, x) + fmin(0.0, p->alpha * expm1(x / p->alpha));
    case IR_OP_ThresholdedRelu: return x > p->alpha ? x : 0.0;
    case IR_OP_HardSigmoid: return fmax(0.0, fmin(1.0, p->alpha * x + p->beta));
    case IR_OP_HardSwish: return x * fmax(0.0, fmin(1.0, x / 6.0 + 0.5));
    case IR_OP_Softplus: return softplus(x);
    case IR_OP_Softsign: return x / (1.0 + fabs(x));
    case IR_OP_Gelu:
        if (p->tanh_gelu)
            return 0.5 * x * (1.0 + tanh(0.79788456080286535588 /* sqrt(2/pi) */ * (x + 0.044715 * x * x * x)));
        return 0.5 * x * (1.0 + erf(x / sqrt(2.0)));
    case IR_OP_Mish: return x * tanh(softplus(x));
    case IR_OP_Shrink: return x < -p->lambd ? x + p->bias : x > p->lambd ? x - p->bias : 0.0;
    case IR_OP_Floor: return floor(x);
    case IR_OP_Ceil: return ceil(x);
    case IR_OP_Round: return round_even(x);
    case IR_OP_Sign: return x > 0 ? 1.0 : x < 0 ? -1.0 : x;
    case IR_OP_Sin: return sin(x);
    case IR_OP_Cos: return cos(x);
    case IR_OP_Tan: return tan(x);
    case IR_OP_Asin: return asin(x);
    case IR_OP_Acos: return acos(x);
    case IR_OP_Atan: return atan(x);
    case IR_OP_Sinh: return sinh(x);
    case IR_OP_Cosh: return cosh(x);
    case IR_OP_Asinh: return asinh(x);
    case IR_OP_Acosh: return acosh(x);
    case IR_OP_Atanh: return atanh(x);
    case IR_OP_Not: return x == 0.0;
    case IR_OP_IsNaN: return isnan(x);
    case IR_OP_IsInf: return isinf(x) && ((x > 0 && p->det_pos) || (x < 0 && p->det_neg));
    case IR_OP_Clip:
        if (x < p->lo)
            x = p->lo;
        if (x > p->hi)
            x = p->hi;
        return x;
    default: return x;
    }
}

/* Integer forms (exact); only for the operators that accept integers
 * without going through double. */
static int unary_has_int(IrOp op)
{
    return op == IR_OP_Abs || op == IR_OP_Neg || op == IR_OP_Sign || op == IR_OP_Relu || op == IR_OP_Not ||
           op == IR_OP_Clip;
}

static int64_t unary_i(const UnaryParams *p, int64_t x)
{
    switch (p->op) {
    case IR_OP_Abs: return x < 0 ? (int64_t)(0 - (uint64_t)x) : x;
    case IR_OP_Neg: return (int64_t)(0 - (uint64_t)x);
    case IR_OP_Sign: return x > 0 ? 1 : x < 0 ? -1 : 0;
    case IR_OP_Relu: return x < 0 ? 0 : x;
    case IR_OP_Not: return x == 0;
    case IR_OP_Clip:
        if (x < p->ilo)
            x = p->ilo;
        if (x > p->ihi)
            x = p->ihi;
        return x;
    default: return x;
    }
}

static void unary_apply(const UnaryParams *p, const IrArray *x, IrArray *y)
{
    int64_t cnt = ir_array_numel(y);
    int is_int = dtype_int_like(x->dtype) && unary_has_int(p->op);
    if (!is_int && x->dtype == IR_DT_F32 && y->dtype == IR_DT_F32) {
        const float *xs = x->data;
        float *ys = y->data;
        for (int64_t i = 0; i < cnt; i++)
            ys[i] = (float)unary_f(p, xs[i]);
        return;
    }
    for (int64_t i = 0; i < cnt; i++) {
        if (is_int)
            ir_store_i64(y->dtype, y->data, i, unary_i(p, ir_load_i64(x->dtype, x->data, i)));
        else
            ir_store_f64(y->dtype, y->data, i, unary_f(p, ir_load_f64(x->dtype, x->data, i)));
    }
}

int interp_k_unary(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out, UtilDiag *d)
{
    (void)g;
    (void)d;
    UnaryParams p = {
        .op = n->op, .alpha = ir_attr_float(n, IR_A_alpha), .beta = ir_attr_float(n, IR_A_beta),
        .gamma = ir_attr_float(n, IR_A_gamma), .lambd = ir_attr_float(n, IR_A_lambd),
        .bias = ir_attr_float(n, IR_A_bias), .tanh_gelu = !strcmp(ir_attr_str(n, IR_A_approximate), "tanh"),
        .det_pos = ir_attr_int(n, IR_A_detect_positive) != 0,
        .det_neg = ir_attr_int(n, IR_A_detect_negative) != 0,
    };
    unary_apply(&p, in[0], out[0]);
    return 0;
}

int interp_k_clip(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out, UtilDiag *d)
{
    (void)g;
    (void)d;
    const IrArray *lo = n->n_in > 1 ? in[1] : NULL, *hi = n->n_in > 2 ? in[2] : NULL;
    UnaryParams p = { .op = IR_OP_Clip, .lo = -INFINITY, .hi = INFINITY, .ilo = INT64_MIN, .ihi = INT64_MAX };
    if (lo) {
        p.lo = ir_load_f64(lo->dtype, lo->data, 0);
        p.ilo = ir_load_i64(lo->dtype, lo->data, 0);
    }
    if (hi) {
        p.hi = ir_load_f64(hi->dtype, hi->data, 0);
        p.ihi = ir_load_i64(hi->dtype, hi->data, 0);
    }
    unary_apply(&p, in[0], out[0]);
    return 0;
}

int interp_k_cast(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out, UtilDiag *d)
{
    (void)g;
    (void)n;
    (void)d;
    const IrArray *x = in[0];
    IrArray *y = out[0];
    int64_t cnt = ir_array_numel(y);
    if (x->dtype == y->dtype) {
        memcpy(y->data, x->data, ir_array_bytes(y));
        return 0;
    }
    for (int64_t i = 0; i < cnt; i++) {
        if (ir_dtype_is_float(x->dtype))
            ir_store_f64(y->dtype, y->data, i, ir_load_f64(x->dtype, x->data, i));   /* truncates to ints */
        else if (x->dtype == IR_DT_U64 && ir_dtype_is_float(y->dtype))
            ir_store_f64(y->dtype, y->data, i, (double)(uint64_t)ir_load_i64(x->dtype, x->data, i));
        else
            ir_store_i64(y->dtype, y->data, i, ir_load_i64(x->dtype, x->data, i));
    }
    return 0;
}

int interp_k_dropout(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out,
                     UtilDiag *d)
{
    const IrArray *tm = n->n_in > 2 ? in[2] : NULL;
    if (tm && ir_load_i64(tm->dtype, tm->data, 0))
        return ir_node_error(g, n, d, "training mode is not supported (dlcc compiles inference graphs)");
    memcpy(out[0]->data, in[0]->data, ir_array_bytes(out[0]));
    if (n->n_out > 1 && out[1])
        memset(out[1]->data, 1, ir_array_bytes(out[1]));
    return 0;
}

/* ----------------------------------------------------------- binary */

typedef struct BinCtx {
    const IrGraph *g;
    const IrNode *n;
    UtilDiag *d;
    IrOp op;            /* the scalar function (Sum and Mean use Add) */
    int python_mod;     /* Mod with fmod=0: result takes the divisor's sign */
    int shift_left;
    int uns;            /* unsigned integer operands */
} BinCtx;

static int64_t ipow(int64_t a, int64_t b)
{
    if (b < 0)
        return a == 1 ? 1 : a == -1 ? (b % 2 ? -1 : 1) : 0;   /* 1/a^|b| truncated */
    uint64_t r = 1, base = (uint64_t)a, e = (uint64_t)b;
    while (e) {
        if (e & 1)
            r *= base;
        base *= base;
        e >>= 1;
    }
    return (int64_t)r;
}

/* Integer scalar function; returns -1 (diagnostic) on division by zero. */
static int bin_i(const BinCtx *c, int64_t a, int64_t b, int64_t *r)
{
    uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
    int lt = c->uns ? ua < ub : a < b;
    switch (c->op) {
    case IR_OP_Add: *r = (int64_t)(ua + ub); return 0;
    case IR_OP_Sub: *r = (int64_t)(ua - ub); return 0;
    case IR_OP_Mul: *r = (int64_t)(ua * ub); return 0;
    case IR_OP_Div:
    case IR_OP_Mod:
        if (b == 0)
            return ir_node_error(c->g, c->n, c->d, "integer %s by zero",
                                 c->op == IR_OP_Div ? "division" : "modulo");
        if (c->uns)
            *r = (int64_t)(c->op == IR_OP_Div ? ua / ub : ua % ub);
        else if (b == -1)
            *r = c->op == IR_OP_Div ? (int64_t)(0 - ua) : 0;
        else if (c->op == IR_OP_Div)
            *r = a / b;                                   /* C truncates toward zero */
        else {
            *r = a % b;
            if (c->python_mod && *r != 0 && ((*r < 0) != (b < 0)))
                *r += b;
        }
        return 0;
    case IR_OP_Pow:
        if (a == 0 && b < 0)
            return ir_node_error(c->g, c->n, c->d, "integer 0 raised to a negative power");
        *r = ipow(a, b);
        return 0;
    case IR_OP_PRelu: *r = !c->uns && a < 0 ? (int64_t)(ua * ub) : a; return 0;
    case IR_OP_BitShift:
        *r = ub >= 64 ? 0 : (int64_t)(c->shift_left ? ua << ub : ua >> ub);
        return 0;
    case IR_OP_Equal: *r = a == b; return 0;
    case IR_OP_Less: *r = lt; return 0;
    case IR_OP_LessOrEqual: *r = lt || a == b; return 0;
    case IR_OP_Greater: *r = !lt && a != b; return 0;
    case IR_OP_GreaterOrEqual: *r = !lt; return 0;
    case IR_OP_And: *r = a && b; return 0;
    case IR_OP_Or: *r = a || b; return 0;
    case IR_OP_Xor: *r = !a != !b; return 0;
    case IR_OP_Min: *r = lt ? a : b; return 0;
    case IR_OP_Max: *r = lt ? b : a; return 0;
    default: return ir_node_error(c->g, c->n, c->d, "no integer form of %s", ir_op_name(c->op));
    }
}

static double bin_f(const BinCtx *c, double a, double b)
{
    switch (c->op) {
    case IR_OP_Add: return a + b;
    case IR_OP_Sub: return a - b;
    case IR_OP_Mul: return a * b;
    case IR_OP_Div: return a / b;
    case IR_OP_Pow: return pow(a, b);
    case IR_OP_Mod: {
        double r = fmod(a, b);
        if (c->python_mod && r != 0 && ((r < 0) != (b < 0)))
            r += b;
        return r;
    }
    case IR_OP_PRelu: return a < 0 ? a * b : a;
    case IR_OP_Equal: return a == b;
    case IR_OP_Less: return a < b;
    case IR_OP_LessOrEqual: return a <= b;
    case IR_OP_Greater: return a > b;
    case IR_OP_GreaterOrEqual: return a >= b;
    case IR_OP_Min: return isnan(a) || isnan(b) ? NAN : a < b ? a : b;
    case IR_OP_Max: return isnan(a) || isnan(b) ? NAN : a < b ? b : a;
    default: return NAN;
    }
}

/* y = a op b with numpy broadcasting; y may alias a when a has y's shape. */
static int bcast_loop(const BinCtx *c, const IrArray *a, const IrArray *b, IrArray *y)
{
    int64_t cnt = ir_array_numel(y), idx[IR_MAX_RANK] = { 0 };
    int same_a = ir_shape_equal(&a->shape, &y->shape), same_b = ir_shape_equal(&b->shape, &y->shape);
    int is_int = dtype_int_like(a->dtype) && (c->op != IR_OP_Pow || dtype_int_like(b->dtype));
    int f32 = !is_int && a->dtype == IR_DT_F32 && b->dtype == IR_DT_F32 && y->dtype == IR_DT_F32;
    for (int64_t i = 0; i < cnt; i++) {
        int64_t ia = same_a ? i : interp_bcast_index(&a->shape, idx, y->shape.rank);
        int64_t ib = same_b ? i : interp_bcast_index(&b->shape, idx, y->shape.rank);
        if (f32) {
            ((float *)y->data)[i] = (float)bin_f(c, ((const float *)a->data)[ia], ((const float *)b->data)[ib]);
        } else if (is_int) {
            int64_t r;
            if (bin_i(c, ir_load_i64(a->dtype, a->data, ia), ir_load_i64(b->dtype, b->data, ib), &r))
                return -1;
            ir_store_i64(y->dtype, y->data, i, r);
        } else {
            ir_store_f64(y->dtype, y->data, i,
                         bin_f(c, ir_load_f64(a->dtype, a->data, ia), ir_load_f64(b->dtype, b->data, ib)));
        }
        if (!same_a || !same_b)
            interp_next_index(&y->shape, idx);
    }
    return 0;
}

static BinCtx bin_ctx(const IrGraph *g, const IrNode *n, IrOp op, IrDType dt, UtilDiag *d)
{
    BinCtx c = {
        .g = g, .n = n, .d = d, .op = op,
        .python_mod = n->op == IR_OP_Mod && !ir_attr_int(n, IR_A_fmod),
        .shift_left = n->op == IR_OP_BitShift && !strcmp(ir_attr_str(n, IR_A_direction), "LEFT"),
        .uns = ir_dtype_is_int(dt) && !ir_dtype_is_signed(dt),
    };
    return c;
}

int interp_k_binary(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out, UtilDiag *d)
{
    BinCtx c = bin_ctx(g, n, n->op, in[0]->dtype, d);
    return bcast_loop(&c, in[0], in[1], out[0]);
}

int interp_k_variadic(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out,
                      UtilDiag *d)
{
    IrArray *y = out[0];
    IrOp op = n->op == IR_OP_Sum || n->op == IR_OP_Mean ? IR_OP_Add : n->op;
    BinCtx c = bin_ctx(g, n, op, y->dtype, d);
    if (n->n_in == 1)
        memcpy(y->data, in[0]->data, ir_array_bytes(y));
    else if (bcast_loop(&c, in[0], in[1], y))
        return -1;
    for (int k = 2; k < n->n_in; k++)
        if (bcast_loop(&c, y, in[k], y))
            return -1;
    if (n->op == IR_OP_Mean) {
        int64_t cnt = ir_array_numel(y);
        for (int64_t i = 0; i < cnt; i++) {
            if (dtype_int_like(y->dtype))
                ir_store_i64(y->dtype, y->data, i, ir_load_i64(y->dtype, y->data, i) / n->n_in);
            else
                ir_store_f64(y->dtype, y->data, i, ir_load_f64(y->dtype, y->data, i) / n->n_in);
        }
    }
    return 0;
}

int interp_k_where(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out, UtilDiag *d)
{
    (void)g;
    (void)n;
    (void)d;
    IrArray *y = out[0];
    size_t es = ir_dtype_size(y->dtype);
    int64_t cnt = ir_array_numel(y), idx[IR_MAX_RANK] = { 0 };
    for (int64_t i = 0; i < cnt; i++) {
        int64_t ic = interp_bcast_index(&in[0]->shape, idx, y->shape.rank);
        const IrArray *src = ir_load_i64(in[0]->dtype, in[0]->data, ic) ? in[1] : in[2];
        int64_t is = interp_bcast_index(&src->shape, idx, y->shape.rank);
        memcpy((char *)y->data + (size_t)i * es, (const char *)src->data + (size_t)is * es, es);
        interp_next_index(&y->shape, idx);
    }
    return 0;
}

/* Swish (opset 24): y = x * sigmoid(alpha * x). */
int interp_k_swish(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out, UtilDiag *d)
{
    double alpha = ir_attr_float(n, IR_A_alpha);
    (void)g;
    (void)d;
    for (int64_t i = 0, nx = ir_array_numel(in[0]); i < nx; i++) {
        double v = ir_load_f64(in[0]->dtype, in[0]->data, i);
        ir_store_f64(out[0]->dtype, out[0]->data, i, v / (1.0 + exp(-alpha * v)));
    }
    return 0;
}
