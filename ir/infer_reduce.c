/* ir/infer_reduce.c — shape and dtype rules of the reductions: Reduce* (axes as an input) and ArgMax / ArgMin
 * (ONNX opset 21 semantics; ir/infer_impl.h). */
#include "ir/infer_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------- reductions */

int ir_infer_reduce(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = ir_in(g, n, 0);
    const IrShape *s = &x->v.shape;
    int64_t axes[IR_MAX_RANK];
    int na = 0;
    /* bool is accepted by ReduceMax/ReduceMin (opset 20) */
    if (!(x->v.dtype == IR_DT_BOOL && (n->op == IR_OP_ReduceMax || n->op == IR_OP_ReduceMin)) &&
        ir_infer_need_numeric(g, n, 0, d))
        return -1;
    if (n->n_in > 1 && n->in[1] >= 0 && (na = ir_infer_const_ints(g, n, 1, "axes", axes, IR_MAX_RANK, d)) < 0)
        return -1;
    if (na == 0 && ir_attr_int(n, IR_A_noop_with_empty_axes)) {
        ir_infer_set(g, n, 0, x->v.dtype, s);
        return 0;
    }
    int red[IR_MAX_RANK] = { 0 };
    for (int k = 0; k < na; k++) {
        int a = ir_norm_axis(g, n, axes[k], s->rank, d);
        if (a < 0)
            return -1;
        if (red[a])
            return ir_node_error(g, n, d, "axis %lld appears twice in axes", (long long)axes[k]);
        red[a] = 1;
    }
    IrShape o = { .rank = 0 };
    int keep = ir_attr_int(n, IR_A_keepdims) != 0;
    for (int i = 0; i < s->rank; i++) {
        if (na == 0 || red[i]) {
            if (keep)
                o.dims[o.rank++] = 1;
        } else {
            o.dims[o.rank++] = s->dims[i];
        }
    }
    ir_infer_set(g, n, 0, x->v.dtype, &o);
    return 0;
}

int ir_infer_argreduce(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = ir_in(g, n, 0);
    const IrShape *s = &x->v.shape;
    if (ir_infer_need_numeric(g, n, 0, d))
        return -1;
    int a = ir_norm_axis(g, n, ir_attr_int(n, IR_A_axis), s->rank, d);
    if (a < 0)
        return -1;
    if (s->rank == 0)
        return ir_node_error(g, n, d, "input '%s' must have rank >= 1", x->name);
    if (s->dims[a] == 0)
        return ir_node_error(g, n, d, "cannot take %s over an empty axis", ir_op_name(n->op));
    IrShape o = { .rank = 0 };
    for (int i = 0; i < s->rank; i++)
        if (i != a)
            o.dims[o.rank++] = s->dims[i];
        else if (ir_attr_int(n, IR_A_keepdims))
            o.dims[o.rank++] = 1;
    ir_infer_set(g, n, 0, IR_DT_I64, &o);
    return 0;
}
