/* interp/k_reduce.c — reference kernels of the reductions: Reduce* over an
 * axes input, ArgMax/ArgMin, and Softmax/LogSoftmax/Hardmax along one axis
 * (opset 13+ semantics).
 *
 * A reduction over an empty set gives the identity of the operation: 0 for
 * sums, 1 for products, -inf (or the dtype's minimum) for ReduceMax, +inf (or
 * the dtype's maximum) for ReduceMin, NaN for a float ReduceMean, -inf for
 * ReduceLogSum and ReduceLogSumExp. */
#include "interp/kernels.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Splits shape s around axis a: outer = prod dims < a, inner = prod dims > a. */
static void split_axis(const IrShape *s, int a, int64_t *outer, int64_t *len, int64_t *inner)
{
    *outer = *inner = 1;
    for (int i = 0; i < a; i++)
        *outer *= s->dims[i];
    for (int i = a + 1; i < s->rank; i++)
        *inner *= s->dims[i];
    *len = s->rank ? s->dims[a] : 1;
}

static int norm_axis(int64_t axis, int rank) { return (int)(axis < 0 ? axis + rank : axis); }

/* Extremes of an integer dtype, as int64 bit patterns (uint64 max is -1);
 * 0 (bool: 0 and 1) for other dtypes, whose reductions do not use them. */
static int64_t int_min(IrDType t)
{
    if (!ir_dtype_is_int(t) || !ir_dtype_is_signed(t))
        return 0;
    return t == IR_DT_I64 ? INT64_MIN : -((int64_t)1 << (8 * ir_dtype_size(t) - 1));
}

static int64_t int_max(IrDType t)
{
    if (!ir_dtype_is_int(t))
        return t == IR_DT_BOOL;
    if (t == IR_DT_I64)
        return INT64_MAX;
    if (t == IR_DT_U64)
        return -1;
    return ((int64_t)1 << (8 * ir_dtype_size(t) - (ir_dtype_is_signed(t) ? 1 : 0))) - 1;
}

static int ilt(int uns, int64_t a, int64_t b) { return uns ? (uint64_t)a < (uint64_t)b : a < b; }

/* ------------------------------------------------------------ Reduce* */

/* Operators computed exactly on integers; the others go through double. */
static int reduce_has_int(IrOp op)
{
    return op == IR_OP_ReduceSum || op == IR_OP_ReduceMean || op == IR_OP_ReduceMax || op == IR_OP_ReduceMin ||
           op == IR_OP_ReduceProd || op == IR_OP_ReduceL1 || op == IR_OP_ReduceSumSquare;
}

static double red_init_f(IrOp op)
{
    switch (op) {
    case IR_OP_ReduceProd: return 1.0;
    case IR_OP_ReduceMax: return -INFINITY;
    case IR_OP_ReduceMin: return INFINITY;
    default: return 0.0;
    }
}

static double red_step_f(IrOp op, double acc, double v, double shift)
{
    switch (op) {
    case IR_OP_ReduceProd: return acc * v;
    case IR_OP_ReduceMax: return isnan(acc) || isnan(v) ? NAN : v > acc ? v : acc;
    case IR_OP_ReduceMin: return isnan(acc) || isnan(v) ? NAN : v < acc ? v : acc;
    case IR_OP_ReduceL1: return acc + fabs(v);
    case IR_OP_ReduceL2: case IR_OP_ReduceSumSquare: return acc + v * v;
    case IR_OP_ReduceLogSumExp: return acc + exp(v - shift);
    default: return acc + v;       /* Sum, Mean, LogSum */
    }
}

static double red_final_f(IrOp op, double acc, int64_t count, double shift)
{
    switch (op) {
    case IR_OP_ReduceMean: return acc / (double)count;
    case IR_OP_ReduceL2: return sqrt(acc);
    case IR_OP_ReduceLogSum: return log(acc);
    case IR_OP_ReduceLogSumExp: return log(acc) + shift;
    default: return acc;
    }
}

static int64_t red_step_i(IrOp op, int uns, int64_t acc, int64_t v)
{
    uint64_t ua = (uint64_t)acc, uv = (uint64_t)v;
    switch (op) {
    case IR_OP_ReduceProd: return (int64_t)(ua * uv);
    case IR_OP_ReduceMax: return ilt(uns, acc, v) ? v : acc;
    case IR_OP_ReduceMin: return ilt(uns, v, acc) ? v : acc;
    case IR_OP_ReduceL1: return (int64_t)(ua + (!uns && v < 0 ? 0 - uv : uv));
    case IR_OP_ReduceSumSquare: return (int64_t)(ua + uv * uv);
    default: return (int64_t)(ua + uv);
    }
}

int interp_k_reduce(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out, UtilDiag *d)
{
    const IrArray *x = in[0], *ax = n->n_in > 1 ? in[1] : NULL;
    IrArray *y = out[0];
    IrOp op = n->op;
    int64_t na = ax ? ir_array_numel(ax) : 0;
    int rank = x->shape.rank, red[IR_MAX_RANK] = { 0 };
    if (na == 0 && ir_attr_int(n, IR_A_noop_with_empty_axes)) {
        memcpy(y->data, x->data, ir_array_bytes(y));
        return 0;
    }
    for (int i = 0; i < rank; i++)
        red[i] = na == 0;
    for (int64_t k = 0; k < na; k++) {
        int a = norm_axis(ir_load_i64(ax->dtype, ax->data, k), rank);
        if (a < 0 || a >= rank)
            return ir_node_error(g, n, d, "axis out of range");
        red[a] = 1;
    }
    /* output strides in the keepdims layout (reduced dims have size 1) */
    IrShape ks = x->shape;
    int64_t kst[IR_MAX_RANK], count = 1;
    for (int i = 0; i < rank; i++)
        if (red[i]) {
            count *= ks.dims[i];
            ks.dims[i] = 1;
        }
    interp_strides(&ks, kst);
    int64_t on = ir_array_numel(y), xn = ir_array_numel(x);
    int is_int = (ir_dtype_is_int(x->dtype) || x->dtype == IR_DT_BOOL) && reduce_has_int(op);
    int uns = !ir_dtype_is_signed(x->dtype);
    double *acc = malloc((size_t)(on ? on : 1) * sizeof *acc);
    double *shift = calloc((size_t)(on ? on : 1), sizeof *shift);
    int64_t *iacc = malloc((size_t)(on ? on : 1) * sizeof *iacc);
    if (!acc || !shift || !iacc) {
        free(acc); free(shift); free(iacc);
        return ir_node_error(g, n, d, "out of memory");
    }
    for (int64_t o = 0; o < on; o++) {
        acc[o] = red_init_f(op);
        iacc[o] = op == IR_OP_ReduceProd ? 1 : op == IR_OP_ReduceMax ? int_min(x->dtype)
                : op == IR_OP_ReduceMin ? int_max(x->dtype) : 0;
        if (op == IR_OP_ReduceLogSumExp)
            shift[o] = -INFINITY;
    }
    for (int pass = op == IR_OP_ReduceLogSumExp ? 0 : 1; pass < 2; pass++) {
        int64_t idx[IR_MAX_RANK] = { 0 };
        for (int64_t i = 0; i < xn; i++) {
            int64_t o = 0;
            for (int k = 0; k < rank; k++)
                if (!red[k])
                    o += idx[k] * kst[k];
            if (is_int)
                iacc[o] = red_step_i(op, uns, iacc[o], ir_load_i64(x->dtype, x->data, i));
            else if (pass == 0)      /* LogSumExp: the max, subtracted for stability */
                shift[o] = red_step_f(IR_OP_ReduceMax, shift[o], ir_load_f64(x->dtype, x->data, i), 0);
            else
                acc[o] = red_step_f(op, acc[o], ir_load_f64(x->dtype, x->data, i), shift[o]);
            interp_next_index(&x->shape, idx);
        }
        if (pass == 0)
            for (int64_t o = 0; o < on; o++)
                if (!isfinite(shift[o]))
                    shift[o] = isnan(shift[o]) ? shift[o] : 0.0;
    }
    for (int64_t o = 0; o < on; o++) {
        if (is_int)
            ir_store_i64(y->dtype, y->data, o,
                         op == IR_OP_ReduceMean ? (count ? iacc[o] / count : 0) : iacc[o]);
        else
            ir_store_f64(y->dtype, y->data, o, red_final_f(op, acc[o], count, shift[o]));
    }
    free(acc);
    free(shift);
    free(iacc);
    return 0;
}

/* ---------------------------------------------------------- ArgMax/Min */

int interp_k_argreduce(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out,
                       UtilDiag *d)
{
    (void)g;
    (void)d;
    const IrArray *x = in[0];
    int a = norm_axis(ir_attr_int(n, IR_A_axis), x->shape.rank);
    int last = ir_attr_int(n, IR_A_select_last_index) != 0, want_max = n->op == IR_OP_ArgMax;
    int is_int = ir_dtype_is_int(x->dtype) || x->dtype == IR_DT_BOOL, uns = !ir_dtype_is_signed(x->dtype);
    int64_t outer, len, inner;
    split_axis(&x->shape, a, &outer, &len, &inner);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t j = 0; j < inner; j++) {
            int64_t best = 0, base = o * len * inner + j;
            for (int64_t k = 1; k < len; k++) {
                int64_t ib = base + best * inner, ik = base + k * inner;
                int better, equal;
                if (is_int) {
                    int64_t vb = ir_load_i64(x->dtype, x->data, ib), vk = ir_load_i64(x->dtype, x->data, ik);
                    better = want_max ? ilt(uns, vb, vk) : ilt(uns, vk, vb);
                    equal = vb == vk;
                } else {
                    double vb = ir_load_f64(x->dtype, x->data, ib), vk = ir_load_f64(x->dtype, x->data, ik);
                    /* as numpy: a NaN wins over numbers, the first NaN over later ones */
                    better = isnan(vb) ? 0 : isnan(vk) || (want_max ? vk > vb : vk < vb);
                    equal = vb == vk;
                }
                if (better || (last && equal))
                    best = k;
            }
            ir_store_i64(IR_DT_I64, out[0]->data, o * inner + j, best);
        }
    return 0;
}

/* ------------------------------------------------------------ Softmax */

int interp_k_softmax(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out,
                     UtilDiag *d)
{
    (void)g;
    (void)d;
    const IrArray *x = in[0];
    IrArray *y = out[0];
    int a = norm_axis(ir_attr_int(n, IR_A_axis), x->shape.rank);
    int64_t outer, len, inner;
    split_axis(&x->shape, a, &outer, &len, &inner);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t j = 0; j < inner; j++) {
            int64_t base = o * len * inner + j, arg = 0;
            double mx = -INFINITY, sum = 0.0;
            for (int64_t k = 0; k < len; k++) {
                double v = ir_load_f64(x->dtype, x->data, base + k * inner);
                if (v > mx || (k == 0 && isnan(v))) {
                    mx = v;
                    arg = k;
                }
            }
            if (n->op == IR_OP_Hardmax) {
                for (int64_t k = 0; k < len; k++)
                    ir_store_f64(y->dtype, y->data, base + k * inner, k == arg ? 1.0 : 0.0);
                continue;
            }
            double shift = isfinite(mx) ? mx : 0.0;
            for (int64_t k = 0; k < len; k++)
                sum += exp(ir_load_f64(x->dtype, x->data, base + k * inner) - shift);
            for (int64_t k = 0; k < len; k++) {
                double v = ir_load_f64(x->dtype, x->data, base + k * inner) - shift;
                ir_store_f64(y->dtype, y->data, base + k * inner,
                             n->op == IR_OP_LogSoftmax ? v - log(sum) : exp(v) / sum);
            }
        }
    return 0;
}
