/* ir/infer_norm.c — shape and dtype rules of the normalizations: BatchNormalization, Instance- and
 * LayerNormalization, RMSNormalization, GroupNormalization (opset 21: scale
 * and bias per channel), LRN, MeanVarianceNormalization and Swish
 * (ONNX opset 21 semantics; ir/infer_impl.h). */
#include "ir/infer_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------- normalization */

int ir_infer_batchnorm(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = ir_in(g, n, 0);
    const IrShape *s = &x->v.shape;
    static const char *const what[] = { "", "scale", "B", "mean", "var" };
    int64_t training = ir_attr_int(n, IR_A_training_mode);
    if (training != 0 && training != 1)
        return ir_node_error(g, n, d, "training_mode must be 0 or 1, not %lld", (long long)training);
    if (n->n_out > 1 && !training)
        return ir_node_error(g, n, d, "the running_mean / running_var outputs exist only in training mode "
                             "(training_mode=1)");
    if (ir_infer_need_float(g, n, 0, d))
        return -1;
    if (s->rank < 2)
        return ir_node_error(g, n, d, "input '%s' must have rank >= 2 (N, C, ...), not %d", x->name, s->rank);
    for (int i = 1; i < 5; i++) {
        if (!ir_in(g, n, i))
            return ir_node_error(g, n, d, "the %s input is missing", what[i]);
        if (ir_infer_need_channels(g, n, i, what[i], s->dims[1], d))
            return -1;
    }
    if (ir_attr_float(n, IR_A_epsilon) < 0)
        return ir_node_error(g, n, d, "epsilon must not be negative");
    ir_infer_set(g, n, 0, x->v.dtype, s);
    IrShape c = { .rank = 1, .dims = { s->dims[1] } };
    for (int k = 1; k < n->n_out; k++)          /* training: running_mean, running_var */
        ir_infer_set(g, n, k, ir_in(g, n, 2 + k)->v.dtype, &c);
    return 0;
}

int ir_infer_layernorm(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = ir_in(g, n, 0);
    const IrShape *s = &x->v.shape;
    if (ir_infer_need_float(g, n, 0, d))
        return -1;
    if (s->rank == 0)
        return ir_node_error(g, n, d, "input '%s' must have rank >= 1", x->name);
    int a = ir_norm_axis(g, n, ir_attr_int(n, IR_A_axis), s->rank, d);
    if (a < 0)
        return -1;
    IrShape inner = { .rank = s->rank - a };
    memcpy(inner.dims, s->dims + a, (size_t)inner.rank * sizeof(int64_t));
    for (int i = 1; i < n->n_in; i++) {
        const IrTensor *t = ir_in(g, n, i);
        if (t && (ir_infer_same_dtype(g, n, 0, i, d) || ir_infer_unidir(g, n, &inner, &t->v.shape, d)))
            return -1;
    }
    int64_t st = ir_attr_int(n, IR_A_stash_type);
    IrDType sdt = st > 0 && st < 1000 ? ir_dtype_from_onnx((int)st) : IR_DT_UNDEF;
    if (!ir_dtype_is_float(sdt))
        return ir_node_error(g, n, d, "stash_type %lld is not a floating-point type", (long long)st);
    IrShape stat = *s;
    for (int i = a; i < s->rank; i++)
        stat.dims[i] = 1;
    ir_infer_set(g, n, 0, x->v.dtype, s);
    ir_infer_set(g, n, 1, sdt, &stat);
    ir_infer_set(g, n, 2, sdt, &stat);
    return 0;
}

static int need_stash(IrGraph *g, IrNode *n, UtilDiag *d)
{
    int64_t st = ir_attr_int(n, IR_A_stash_type);
    IrDType dt = st > 0 && st < 1000 ? ir_dtype_from_onnx((int)st) : IR_DT_UNDEF;
    if (!ir_dtype_is_float(dt))
        return ir_node_error(g, n, d, "stash_type %lld is not a floating-point type", (long long)st);
    return 0;
}

/* ------------------------------------------------------------ normalizations */

int ir_infer_rmsnorm(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = ir_in(g, n, 0), *sc = ir_in(g, n, 1);
    if (ir_infer_need_float(g, n, 0, d) || ir_infer_same_dtype(g, n, 0, 1, d) || need_stash(g, n, d))
        return -1;
    const IrShape *s = &x->v.shape;
    if (s->rank == 0)
        return ir_node_error(g, n, d, "input '%s' must have rank >= 1", x->name);
    if (ir_norm_axis(g, n, ir_attr_int(n, IR_A_axis), s->rank, d) < 0)
        return -1;
    IrShape o;
    if (ir_broadcast_shapes(g, n, s, &sc->v.shape, &o, d))
        return -1;
    if (!ir_shape_equal(&o, s))
        return ir_node_error(g, n, d, "scale '%s' does not broadcast to the input shape", sc->name);
    ir_infer_set(g, n, 0, x->v.dtype, s);
    return 0;
}

int ir_infer_groupnorm(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = ir_in(g, n, 0);
    if (ir_infer_need_float(g, n, 0, d) || ir_infer_same_dtype(g, n, 0, 1, d) || ir_infer_same_dtype(g, n, 0, 2, d) || need_stash(g, n, d))
        return -1;
    const IrShape *s = &x->v.shape;
    if (s->rank < 2)
        return ir_node_error(g, n, d, "input '%s' must have rank >= 2 (N, C, ...)", x->name);
    if (!ir_has_attr(n, IR_A_num_groups))
        return ir_node_error(g, n, d, "attribute 'num_groups' is required");
    int64_t ng = ir_attr_int(n, IR_A_num_groups), c = s->dims[1];
    if (ng <= 0 || c % ng)
        return ir_node_error(g, n, d, "num_groups %lld must be positive and divide the %lld channels",
                             (long long)ng, (long long)c);
    for (int i = 1; i <= 2; i++) {
        const IrTensor *t = ir_in(g, n, i);
        if (t->v.shape.rank == 1 && t->v.shape.dims[0] == ng && ng != c)
            return ir_node_error(g, n, d, "the %s input has one value per group (GroupNormalization-18 form); "
                                 "opset 21 needs one per channel (%lld)", i == 1 ? "scale" : "bias",
                                 (long long)c);
        if (ir_infer_need_vec(g, n, i, i == 1 ? "scale" : "bias", c, d))
            return -1;
    }
    ir_infer_set(g, n, 0, x->v.dtype, s);
    return 0;
}

/* LRN, MeanVarianceNormalization, Swish: float in, same dtype and shape out. */
int ir_infer_floatsame(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = ir_in(g, n, 0);
    const IrShape *s = &x->v.shape;
    if (ir_infer_need_float(g, n, 0, d))
        return -1;
    if (n->op == IR_OP_LRN) {
        if (s->rank < 3)
            return ir_node_error(g, n, d, "input '%s' must have rank >= 3 (N, C, spatial...)", x->name);
        if (!ir_has_attr(n, IR_A_size) || ir_attr_int(n, IR_A_size) <= 0)
            return ir_node_error(g, n, d, "attribute 'size' is required and must be positive");
    } else if (n->op == IR_OP_MeanVarianceNormalization) {
        const int64_t *axes;
        int na = ir_attr_ints(n, IR_A_axes, &axes);
        int seen[IR_MAX_RANK] = { 0 };
        if (!ir_has_attr(n, IR_A_axes) && s->rank < 4)
            return ir_node_error(g, n, d, "the default axes [0, 2, 3] need rank >= 4; input '%s' has rank %d",
                                 x->name, s->rank);
        for (int i = 0; i < na; i++) {
            int a = ir_norm_axis(g, n, axes[i], s->rank, d);
            if (a < 0)
                return -1;
            if (seen[a]++)
                return ir_node_error(g, n, d, "axis %lld is repeated in axes", (long long)axes[i]);
        }
    }
    ir_infer_set(g, n, 0, x->v.dtype, s);
    return 0;
}
