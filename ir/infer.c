/* ir/infer.c — dispatch of shape/dtype rules and the helpers they share. */
#include "ir/infer_impl.h"

#include <stdio.h>
#include <string.h>

typedef int (*InferFn)(IrGraph *, IrNode *, UtilDiag *);

static const InferFn infer_table[IR_OP_COUNT] = {
#define OP(name, mi, ma, mo, mao, inf, ev, low, fl, doc) [IR_OP_##name] = ir_infer_##inf,
#include "ir/ops.def"
#undef OP
};

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
    if (infer_table[n->op](g, n, d))
        return -1;
    for (int k = 0; k < n->n_out; k++) {
        IrTensor *t = ir_out(g, n, k);
        if (t && (!t->shape_known || ir_shape_numel(&t->v.shape) < 0))
            return ir_node_error(g, n, d, "output '%s' has an invalid or too large shape", t->name);
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
    if (!t->v.data)
        return ir_node_error(g, n, d, "the %s input '%s' must be a constant or computable at compile time "
                             "(dlcc compiles static shapes)", what, t->name);
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
