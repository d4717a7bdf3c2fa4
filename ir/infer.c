/* ir/infer.c — dispatch of shape/dtype rules and the helpers they share,
 * and the limits every tensor and integer attribute must respect before and
 * after a rule runs (docs/limits.md). */
#include "ir/infer_impl.h"

#include <stdio.h>
#include <string.h>

typedef int (*InferFn)(IrGraph *, IrNode *, UtilDiag *);

static const InferFn infer_table[IR_OP_COUNT] = {
#define OP(name, mi, ma, mo, mao, inf, ev, low, fl, doc) [IR_OP_##name] = ir_infer_##inf,
#include "ir/ops.def"
#undef OP
};

int ir_check_tensor(const IrGraph *g, const IrNode *n, int ti, UtilDiag *d)
{
    const IrTensor *t = &g->tensors[ti];
    char sh[160], what[200];
    int64_t numel = ir_shape_numel(&t->v.shape), bytes;
    if (numel >= 0 && !util_mul_overflow_i64(numel, (int64_t)ir_dtype_size(t->v.dtype), &bytes) &&
        bytes <= IR_MAX_TENSOR_BYTES)
        return 0;
    ir_shape_str(&t->v.shape, sh, sizeof sh);
    snprintf(what, sizeof what, "%s '%s' has shape %s", t->kind == IR_TK_INPUT ? "input" : t->kind == IR_TK_CONST ?
             "initializer" : n ? "output" : "tensor", t->name, sh);
    for (int i = 0; numel < 0 && i < t->v.shape.rank; i++)
        if (t->v.shape.dims[i] < 0)
            return n ? ir_node_error(g, n, d, "%s with a negative dimension", what)
                     : util_error(d, t->loc, "%s with a negative dimension", what);
    char lim[120];
    if (numel < 0)
        snprintf(lim, sizeof lim, "more than the " IR_MAX_ELEMENTS_TEXT " elements");
    else
        snprintf(lim, sizeof lim, "%lld elements of %s, more than the " IR_MAX_TENSOR_BYTES_TEXT, (long long)numel,
                 ir_dtype_name(t->v.dtype));
    if (n)
        return ir_node_error(g, n, d, "%s: %s a tensor may have (docs/limits.md)", what, lim);
    return util_error(d, t->loc, "%s: %s a tensor may have (docs/limits.md)", what, lim);
}

/* Integer attributes that are values rather than sizes, positions or
 * counts: any int64 is valid (docs/limits.md).  Every other integer
 * attribute is within +-IR_MAX_ATTR_INT before a shape rule reads it. */
static int value_attr(IrAttrKey k)
{
    static const IrAttrKey keys[] = {
        IR_A_value_int, IR_A_value_ints,   /* Constant's data */
        IR_A_seed,                         /* Dropout's random seed */
        IR_A_ignore_index,                 /* a class label the losses compare with, never an index */
        IR_A_k,                            /* EyeLike's diagonal: compared with i - j */
        IR_A_start, IR_A_end,              /* Shape's: clamped to the rank */
        IR_A_starts, IR_A_ends,            /* legacy Slice's (fe_upgrade makes them inputs): clamped */
        IR_A_consumed_inputs,              /* legacy, ignored */
    };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (keys[i] == k)
            return 1;
    return 0;
}

static int check_attrs(const IrGraph *g, const IrNode *n, UtilDiag *d)
{
    for (int a = 0; a < n->n_attrs; a++) {
        const IrAttr *at = &n->attrs[a];
        IrAttrKind want = ir_op_attr_kind(n->op, at->key);     /* an INT may stand for a FLOAT: a value */
        int cnt = want != IR_AK_INT && want != IR_AK_INTS ? 0 : at->kind == IR_AK_INT ? 1
                  : at->kind == IR_AK_INTS ? at->n : 0;
        const int64_t *v = at->kind == IR_AK_INT ? &at->v.i : at->v.ints;
        for (int i = 0; i < cnt && !value_attr(at->key); i++)
            if (v[i] > IR_MAX_ATTR_INT || v[i] < -IR_MAX_ATTR_INT)
                return ir_node_error(g, n, d, "attribute %s holds %lld, beyond the +-" IR_MAX_ELEMENTS_TEXT
                                     " an integer attribute may hold (docs/limits.md)", ir_attr_name(at->key),
                                     (long long)v[i]);
    }
    return 0;
}

int ir_infer_node(IrGraph *g, int node, UtilDiag *d)
{
    IrNode *n = &g->nodes[node];
    const IrOpInfo *info = ir_op_info(n->op);
    if (!info)
        return ir_node_error(g, n, d, "invalid operator");
    if (n->n_in < info->min_in || n->n_in > info->max_in)
        return ir_node_error(g, n, d, "has %d inputs; %s takes %d to %d", n->n_in, info->name,
                             info->min_in, info->max_in);
    if (n->n_out < info->min_out || n->n_out > info->max_out)
        return ir_node_error(g, n, d, "has %d outputs; %s gives %d to %d", n->n_out, info->name,
                             info->min_out, info->max_out);
    for (int i = 0; i < n->n_in; i++) {
        const IrTensor *t = ir_in(g, n, i);
        if (t && !t->shape_known)
            return ir_node_error(g, n, d, "input '%s' has no known type or shape", t->name);
    }
    /* required inputs (below min_in) must be present */
    for (int i = 0; i < info->min_in && i < n->n_in; i++)
        if (n->in[i] < 0)
            return ir_node_error(g, n, d, "required input %d is missing", i + 1);
    if (n->n_out > 0 && n->out[0] < 0 && info->min_out > 0)    /* RNN, GRU, LSTM: all outputs optional */
        return ir_node_error(g, n, d, "the first output is missing");
    if (check_attrs(g, n, d) || infer_table[n->op](g, n, d))
        return -1;
    for (int k = 0; k < n->n_out; k++) {
        IrTensor *t = ir_out(g, n, k);
        if (t && !t->shape_known)
            return ir_node_error(g, n, d, "output '%s' has no inferred type", t->name);
        if (t && ir_check_tensor(g, n, n->out[k], d))
            return -1;
    }
    return 0;
}

void ir_infer_set(IrGraph *g, IrNode *n, int k, IrDType dt, const IrShape *s)
{
    if (k < n->n_out && n->out[k] >= 0)
        ir_set_type(g, n->out[k], dt, s);
}

int ir_norm_axis(const IrGraph *g, const IrNode *n, int64_t axis, int rank, UtilDiag *d)
{
    if (axis < -rank || axis >= (rank ? rank : 1) || (rank == 0 && axis != 0 && axis != -1))
        return ir_node_error(g, n, d, "axis %lld is out of range for rank %d", (long long)axis, rank);
    return (int)(axis < 0 ? axis + rank : axis);
}

int ir_broadcast_shapes(const IrGraph *g, const IrNode *n, const IrShape *a, const IrShape *b,
                        IrShape *out, UtilDiag *d)
{
    int r = a->rank > b->rank ? a->rank : b->rank;
    IrShape o = { .rank = r };
    for (int i = 0; i < r; i++) {
        int ia = i - (r - a->rank), ib = i - (r - b->rank);
        int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
        if (da == db || db == 1)
            o.dims[i] = da;
        else if (da == 1)
            o.dims[i] = db;
        else {
            char sa[128], sb[128];
            ir_shape_str(a, sa, sizeof sa);
            ir_shape_str(b, sb, sizeof sb);
            return ir_node_error(g, n, d, "shapes %s and %s cannot be broadcast together", sa, sb);
        }
    }
    *out = o;
    return 0;
}

static int const_operand(IrGraph *g, IrNode *n, int i, const char *what, UtilDiag *d, const IrTensor **tp)
{
    const IrTensor *t = ir_in(g, n, i);
    if (!t)
        return ir_node_error(g, n, d, "the %s input is missing", what);
    if (!t->v.data) {
        g->need_value = n->in[i];
        return ir_node_error(g, n, d, "the %s input '%s' must be a constant or computable at compile time "
                             "(dlcc compiles static shapes)", what, t->name);
    }
    if (t->v.shape.rank > 1)
        return ir_node_error(g, n, d, "the %s input '%s' must be a 1-D tensor", what, t->name);
    *tp = t;
    return 0;
}

int ir_infer_const_ints(IrGraph *g, IrNode *n, int i, const char *what, int64_t *vals, int max, UtilDiag *d)
{
    const IrTensor *t;
    if (const_operand(g, n, i, what, d, &t))
        return -1;
    if (!ir_dtype_is_int(t->v.dtype))
        return ir_node_error(g, n, d, "the %s input '%s' must be an integer tensor", what, t->name);
    int64_t cnt = ir_shape_numel(&t->v.shape);
    if (cnt > max)
        return ir_node_error(g, n, d, "the %s input '%s' has %lld elements; at most %d are allowed", what,
                             t->name, (long long)cnt, max);
    for (int64_t k = 0; k < cnt; k++)
        vals[k] = ir_load_i64(t->v.dtype, t->v.data, k);
    return (int)cnt;
}

int ir_infer_const_floats(IrGraph *g, IrNode *n, int i, const char *what, double *vals, int max, UtilDiag *d)
{
    const IrTensor *t;
    if (const_operand(g, n, i, what, d, &t))
        return -1;
    int64_t cnt = ir_shape_numel(&t->v.shape);
    if (cnt > max)
        return ir_node_error(g, n, d, "the %s input '%s' has %lld elements; at most %d are allowed", what,
                             t->name, (long long)cnt, max);
    for (int64_t k = 0; k < cnt; k++)
        vals[k] = ir_load_f64(t->v.dtype, t->v.data, k);
    return (int)cnt;
}
