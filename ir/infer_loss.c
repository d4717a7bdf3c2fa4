/* ir/infer_loss.c — shape and dtype rules of the losses: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss
 * (ONNX opset 21 semantics; ir/infer_impl.h). */
#include "ir/infer_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* -------------------------------------------------------------------- losses */

int ir_infer_loss(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = ir_in(g, n, 0), *t = ir_in(g, n, 1);
    const IrShape *s = &x->v.shape, *ts = &t->v.shape;
    if (ir_infer_need_float(g, n, 0, d) || ir_infer_need_int(g, n, 1, "target", d) || ir_infer_same_dtype(g, n, 0, 2, d))
        return -1;
    if (s->rank < 2)
        return ir_node_error(g, n, d, "input '%s' must have rank >= 2 (N, C, ...)", x->name);
    int ok = ts->rank == s->rank - 1 && ts->dims[0] == s->dims[0];
    for (int i = 1; ok && i < ts->rank; i++)
        ok = ts->dims[i] == s->dims[i + 1];
    if (!ok)
        return ir_node_error(g, n, d, "target '%s' must have the input's shape without dim 1 (C)", t->name);
    if (n->n_in > 2 && n->in[2] >= 0 && ir_infer_need_vec(g, n, 2, "weight", s->dims[1], d))
        return -1;
    const char *red = ir_attr_str(n, IR_A_reduction);
    IrShape scalar = { .rank = 0 };
    if (!strcmp(red, "none"))
        ir_infer_set(g, n, 0, x->v.dtype, ts);
    else if (!strcmp(red, "sum") || !strcmp(red, "mean"))
        ir_infer_set(g, n, 0, x->v.dtype, &scalar);
    else
        return ir_node_error(g, n, d, "reduction '%s' must be none, sum or mean", red);
    ir_infer_set(g, n, 1, x->v.dtype, s);
    return 0;
}
