/* frontend/upgrade_rules.c — the legacy-form rewrites, one small function
 * per change of semantics, each saying what the old form meant and what it
 * becomes.  The table at the end says which operator and opsets each
 * applies to. */
#include "frontend/upgrade_impl.h"

#include <stdio.h>
#include <string.h>

#define NODE(u, i) (&(u)->g->nodes[i])

/* Reduce* (ReduceSum < 13, the others < 18), Squeeze/Unsqueeze (< 13):
 *   old: attribute axes (INTS)       new: input 2 axes (int64 1-D).
 * Absent axes stays absent (reduce over all / squeeze every 1). */
static int up_axes(FeUp *u, int n) { return fe_up_ints_to_input(u, n, IR_A_axes, 1); }

/* Split < 18:
 *   old (< 13): attribute split   new: input 2 split (int64 1-D);
 *   old (< 18): no split → equal parts, one per output
 *   new: no split input requires attribute num_outputs (= number of outputs). */
static int up_split(FeUp *u, int n)
{
    if (fe_up_ints_to_input(u, n, IR_A_split, 1))
        return -1;
    const IrNode *x = NODE(u, n);
    if ((x->n_in < 2 || x->in[1] < 0) && !ir_has_attr(x, IR_A_num_outputs))
        return fe_up_set_int(u, n, IR_A_num_outputs, x->n_out);
    return 0;
}

/* Clip < 11:
 *   old: attributes min, max (float; absent = unbounded)
 *   new: optional inputs 2 and 3, scalars of the input's type. */
static int up_clip(FeUp *u, int n)
{
    static const IrAttrKey keys[2] = { IR_A_min, IR_A_max };
    for (int k = 0; k < 2; k++) {
        const IrNode *x = NODE(u, n);
        if (!ir_has_attr(x, keys[k]))
            continue;
        int t = fe_up_scalar_like(u, n, ir_attr_name(keys[k]), ir_attr_float(x, keys[k]), x->in[0]);
        if (t < 0 || fe_up_set_input(u, n, 1 + k, t))
            return -1;
        ir_remove_attr(u->g, n, keys[k]);
    }
    return 0;
}

/* Pad < 11:
 *   old: attributes pads (INTS), value (float, default 0)
 *   new: input 2 pads (int64), optional input 3 constant_value (input's type). */
static int up_pad(FeUp *u, int n)
{
    if (fe_up_ints_to_input(u, n, IR_A_pads, 1))
        return -1;
    const IrNode *x = NODE(u, n);
    if (ir_has_attr(x, IR_A_value)) {
        int t = fe_up_scalar_like(u, n, "value", ir_attr_float(x, IR_A_value), x->in[0]);
        if (t < 0 || fe_up_set_input(u, n, 2, t))
            return -1;
        ir_remove_attr(u->g, n, IR_A_value);
    }
    return 0;
}

/* Slice < 10:
 *   old: attributes starts, ends, axes (INTS)
 *   new: inputs 2, 3, 4 (int64); steps (input 5) absent = 1. */
static int up_slice(FeUp *u, int n)
{
    return fe_up_ints_to_input(u, n, IR_A_starts, 1) || fe_up_ints_to_input(u, n, IR_A_ends, 2) ||
           fe_up_ints_to_input(u, n, IR_A_axes, 3) ? -1 : 0;
}

/* Dropout < 12:
 *   old: attribute ratio (and is_test < 7, which only chose training mode)
 *   new: optional input 2 ratio (float scalar); inference is the identity either way. */
static int up_dropout(FeUp *u, int n)
{
    const IrNode *x = NODE(u, n);
    ir_remove_attr(u->g, n, IR_A_is_test);
    if (!ir_has_attr(x, IR_A_ratio))
        return 0;
    int t = fe_up_scalar_like(u, n, "ratio", ir_attr_float(x, IR_A_ratio), -1);
    if (t < 0 || fe_up_set_input(u, n, 1, t))
        return -1;
    ir_remove_attr(u->g, n, IR_A_ratio);
    return 0;
}

/* Reshape < 5:  old: attribute shape (INTS)   new: input 2 shape (int64). */
static int up_reshape(FeUp *u, int n) { return fe_up_ints_to_input(u, n, IR_A_shape, 1); }

/* B' = B with k trailing 1-dims, k = rank(A) - axis - rank(B): the old
 * "broadcast B at axis" expressed in numpy broadcasting.  With ranks known
 * before inference this is Unsqueeze(B, [rB .. rB+k-1]); otherwise the shape
 * is computed in the graph (folded at compile time by pass_infer):
 *   Reshape(B, Concat(Shape(B), ConstantOfShape(rank(A) - rank(B) - axis, 1))). */
static int trailing_ones(FeUp *u, int n, int a, int b, int64_t axis)
{
    int ra = fe_up_rank(u, a), rb = fe_up_rank(u, b), known = 0;
    int64_t k = 0;
    if (axis < -IR_MAX_RANK || axis > IR_MAX_RANK)     /* no rank reaches it (and -axis below stays defined) */
        return ir_node_error(u->g, NODE(u, n), u->d, "legacy broadcast axis %lld is out of range", (long long)axis);
    if (axis < 0 && ra >= 0)
        axis += ra;
    if (axis < 0 && rb >= 0) {
        k = -axis - rb;                 /* counted from the end: rank(A) cancels */
        known = 1;
    } else if (axis >= 0 && ra >= 0 && rb >= 0) {
        k = (int64_t)ra - axis - rb;
        known = 1;
    }
    if (known) {
        if (k < 0)
            return ir_node_error(u->g, NODE(u, n), u->d, "legacy broadcast axis %lld does not fit input ranks "
                                 "%d and %d", (long long)axis, ra, rb);
        if (k == 0)
            return 0;
        int64_t axes[IR_MAX_RANK];
        if (rb + k > IR_MAX_RANK)
            return ir_node_error(u->g, NODE(u, n), u->d, "legacy broadcast needs rank %lld", (long long)(rb + k));
        for (int i = 0; i < k; i++)
            axes[i] = rb + i;
        int c = fe_up_const_i64(u, n, "bcast_axes", (int)k, axes, 1);
        int in[2] = { b, c };
        int nb = c < 0 ? -1 : fe_up_add(u, n, IR_OP_Unsqueeze, 2, in, -1, NULL);
        return nb < 0 ? -1 : fe_up_set_input(u, n, 1, nb);
    }
    if (axis < 0)
        return ir_node_error(u->g, NODE(u, n), u->d, "legacy broadcast with a negative axis needs inputs of known "
                             "rank");
    int sa = fe_up_add(u, n, IR_OP_Shape, 1, &a, -1, NULL);
    int ra_t = sa < 0 ? -1 : fe_up_add(u, n, IR_OP_Shape, 1, &sa, -1, NULL);
    int sb = ra_t < 0 ? -1 : fe_up_add(u, n, IR_OP_Shape, 1, &b, -1, NULL);
    int rb_t = sb < 0 ? -1 : fe_up_add(u, n, IR_OP_Shape, 1, &sb, -1, NULL);
    int c_axis = rb_t < 0 ? -1 : fe_up_const_i64(u, n, "bcast_axis", 1, &axis, 1);
    if (c_axis < 0)
        return -1;
    int in1[2] = { ra_t, rb_t };
    int d1 = fe_up_add(u, n, IR_OP_Sub, 2, in1, -1, NULL);
    int in2[2] = { d1, c_axis };
    int kt = d1 < 0 ? -1 : fe_up_add(u, n, IR_OP_Sub, 2, in2, -1, NULL);
    int cn, cs;
    int ones = kt < 0 ? -1 : fe_up_add(u, n, IR_OP_ConstantOfShape, 1, &kt, -1, &cn);
    if (ones < 0)
        return -1;
    int64_t one = 1;
    IrArray v = { .dtype = IR_DT_I64, .shape = { .rank = 1, .dims = { 1 } }, .data = &one };
    IrAttr av = { .key = IR_A_value, .kind = IR_AK_TENSOR, .v.tensor = &v };
    if (ir_set_attr(u->g, cn, &av))
        return fe_up_oom(u, n);
    int in3[2] = { sb, ones };
    int ns = fe_up_add(u, n, IR_OP_Concat, 2, in3, -1, &cs);
    if (ns < 0 || fe_up_set_int(u, cs, IR_A_axis, 0))
        return -1;
    int in4[2] = { b, ns };
    int nb = fe_up_add(u, n, IR_OP_Reshape, 2, in4, -1, NULL);
    return nb < 0 ? -1 : fe_up_set_input(u, n, 1, nb);
}

/* Add Sub Mul Div Pow And Or Xor Equal Less Greater < 7:
 *   old: same shapes, or broadcast=1: B's shape matches a contiguous run of
 *        A's dims starting at `axis` (default: the trailing dims)
 *   new: numpy broadcasting; the axis form becomes B with trailing 1-dims. */
static int up_broadcast(FeUp *u, int n)
{
    const IrNode *x = NODE(u, n);
    int bc = (int)ir_attr_int(x, IR_A_broadcast), has_axis = ir_has_attr(x, IR_A_axis);
    int64_t axis = ir_attr_int(x, IR_A_axis);
    ir_remove_attr(u->g, n, IR_A_broadcast);
    ir_remove_attr(u->g, n, IR_A_axis);
    x = NODE(u, n);
    if (!bc || !has_axis || x->n_in < 2 || x->in[0] < 0 || x->in[1] < 0)
        return 0;
    return trailing_ones(u, n, x->in[0], x->in[1], axis);
}

/* PRelu < 7:
 *   old: slope of shape [C] applies per channel (axis 1), as PyTorch exports it
 *   new: slope broadcasts numpy-style (trailing dims) → slope as [C,1,...,1]. */
static int up_prelu(FeUp *u, int n)
{
    const IrNode *x = NODE(u, n);
    if (x->n_in < 2 || x->in[1] < 0 || fe_up_rank(u, x->in[1]) != 1)
        return 0;
    int rx = fe_up_rank(u, x->in[0]);
    if (rx >= 0 && rx < 3)
        return 0;
    return trailing_ones(u, n, x->in[0], x->in[1], 1);
}

/* Gemm < 7:  old: broadcast=1 allowed C to broadcast (else C is [M,N])
 *   new: C always broadcasts (unidirectionally): drop the attribute. */
static int up_gemm(FeUp *u, int n)
{
    ir_remove_attr(u->g, n, IR_A_broadcast);
    return 0;
}

/* BatchNormalization < 9:
 *   is_test (< 7): test mode is the only inference semantics: dropped;
 *   outputs 2-5 (running/saved statistics, training) are refused;
 *   spatial=0 (< 9): statistics per element (scale, B, mean, var of shape
 *   [C, D1, ...]) → y = (x - mean) / sqrt(var + eps) * scale + B in elementwise
 *   operators, which broadcast [C, D1, ...] against [N, C, D1, ...]. */
static int up_batchnorm(FeUp *u, int n)
{
    const IrNode *x = NODE(u, n);
    for (int k = 1; k < x->n_out; k++)
        if (x->out[k] >= 0)
            return ir_node_error(u->g, x, u->d, "the running/saved statistics outputs of BatchNormalization "
                                 "(training mode) are not supported; export the model for inference");
    if (x->n_out > 1)
        u->g->nodes[n].n_out = 1;
    ir_remove_attr(u->g, n, IR_A_is_test);
    int spatial = (int)ir_attr_int(x, IR_A_spatial);
    ir_remove_attr(u->g, n, IR_A_spatial);
    if (spatial || x->n_in != 5)
        return 0;
    int X = x->in[0], scale = x->in[1], bias = x->in[2], mean = x->in[3], var = x->in[4];
    int eps = fe_up_scalar_like(u, n, "epsilon", ir_attr_float(x, IR_A_epsilon), var);
    int i1[2] = { X, mean }, t1 = eps < 0 ? -1 : fe_up_add(u, n, IR_OP_Sub, 2, i1, -1, NULL);
    int i2[2] = { var, eps }, t2 = t1 < 0 ? -1 : fe_up_add(u, n, IR_OP_Add, 2, i2, -1, NULL);
    int t3 = t2 < 0 ? -1 : fe_up_add(u, n, IR_OP_Sqrt, 1, &t2, -1, NULL);
    int i4[2] = { t1, t3 }, t4 = t3 < 0 ? -1 : fe_up_add(u, n, IR_OP_Div, 2, i4, -1, NULL);
    int i5[2] = { t4, scale }, t5 = t4 < 0 ? -1 : fe_up_add(u, n, IR_OP_Mul, 2, i5, -1, NULL);
    if (t5 < 0)
        return -1;
    IrNode *y = &u->g->nodes[n];                /* the node itself becomes the final Add */
    y->op = IR_OP_Add;
    y->n_attrs = 0;
    int i6[2] = { t5, bias };
    return ir_set_inputs(u->g, n, 2, i6) ? fe_up_oom(u, n) : 0;
}

/* Softmax, LogSoftmax, Hardmax < 13:
 *   old: the input is coerced to 2-D [prod(d0..d(axis-1)), prod(d(axis)..)],
 *        the operator applies along the second dim, the result takes the
 *        input's shape back; axis defaults to 1
 *   new: applies along one axis (default -1).
 * When axis is the last dim the two agree; otherwise
 *   y = Reshape(op(Flatten(x, axis), axis=1), Shape(x)). */
static int up_softmax(FeUp *u, int n)
{
    const IrNode *x = NODE(u, n);
    int64_t axis = ir_has_attr(x, IR_A_axis) ? ir_attr_int(x, IR_A_axis) : 1;
    int X = x->in[0], r = fe_up_rank(u, X);
    if (r >= 0 && (axis == r - 1 || axis == -1))
        return fe_up_set_int(u, n, IR_A_axis, -1);
    int s = fe_up_add(u, n, IR_OP_Shape, 1, &X, -1, NULL);
    int fn, f = s < 0 ? -1 : fe_up_add(u, n, IR_OP_Flatten, 1, &X, -1, &fn);
    if (f < 0 || fe_up_set_int(u, fn, IR_A_axis, axis) || fe_up_set_int(u, n, IR_A_axis, 1) || fe_up_set_input(u, n, 0, f))
        return -1;
    char hint[300];
    int Y = NODE(u, n)->out[0];
    snprintf(hint, sizeof hint, "%.200s_2d", u->g->tensors[Y].name);
    int tmp = ir_add_temp(u->g, hint);
    if (tmp < 0)
        return fe_up_oom(u, n);
    NODE(u, n)->out[0] = tmp;
    u->g->tensors[tmp].producer = n;
    fe_up_set_rank(u, tmp, 2);
    int in[2] = { tmp, s };
    if (fe_up_add(u, n, IR_OP_Reshape, 2, in, Y, NULL) < 0)
        return -1;
    fe_up_set_rank(u, Y, r);
    return 0;
}

/* Resize < 13:
 *   Resize-10: inputs (X, scales), only `mode`; output coordinate i maps to
 *     i / scale and nearest rounds down → inputs (X, -, scales),
 *     coordinate_transformation_mode=asymmetric, nearest_mode=floor.
 *   Resize-11/12: roi and scales are required inputs, given as empty tensors
 *     when unused → absent inputs. */
static int up_resize(FeUp *u, int n)
{
    const IrNode *x = NODE(u, n);
    if (u->g->opset < 11) {
        if (x->n_in != 2)
            return 0;
        int scales = x->in[1];
        if (fe_up_set_input(u, n, 1, -1) || fe_up_set_input(u, n, 2, scales) ||
            fe_up_set_str(u, n, IR_A_coordinate_transformation_mode, "asymmetric") ||
            fe_up_set_str(u, n, IR_A_nearest_mode, "floor"))
            return -1;
        return 0;
    }
    for (int slot = 1; slot <= 2; slot++) {
        x = NODE(u, n);
        const IrArray *c = slot < x->n_in ? fe_up_const(u, x->in[slot]) : NULL;
        int sizes_given = x->n_in > 3 && x->in[3] >= 0;
        if (c && ir_array_numel(c) == 0 && (slot == 1 || sizes_given) && fe_up_set_input(u, n, slot, -1))
            return -1;
    }
    return 0;
}

/* Concat < 4:  old: axis optional, default 1   new: axis required. */
static int up_concat(FeUp *u, int n)
{
    return ir_has_attr(NODE(u, n), IR_A_axis) ? 0 : fe_up_set_int(u, n, IR_A_axis, 1);
}

/* Tile < 6:
 *   old: inputs (x, tiles, axis): repeat x `tiles` times along `axis`
 *   new: inputs (x, repeats) with one count per dim. */
static int up_tile(FeUp *u, int n)
{
    const IrNode *x = NODE(u, n);
    if (x->n_in != 3)
        return 0;
    const IrArray *tiles = fe_up_const(u, x->in[1]), *axis = fe_up_const(u, x->in[2]);
    int r = fe_up_rank(u, x->in[0]);
    if (!tiles || !axis || r < 0 || ir_array_numel(tiles) != 1 || ir_array_numel(axis) != 1 ||
        !ir_dtype_is_int(tiles->dtype) || !ir_dtype_is_int(axis->dtype))
        return ir_node_error(u->g, x, u->d, "Tile-1 (tiles, axis inputs) is supported only with constant scalar "
                             "tiles and axis and an input of known rank");
    int64_t a = ir_load_i64(axis->dtype, axis->data, 0), rep[IR_MAX_RANK];
    if (a < 0)
        a += r;
    if (a < 0 || a >= r)
        return ir_node_error(u->g, x, u->d, "Tile-1 axis %lld is out of range for rank %d", (long long)a, r);
    for (int i = 0; i < r; i++)
        rep[i] = i == a ? ir_load_i64(tiles->dtype, tiles->data, 0) : 1;
    int c = fe_up_const_i64(u, n, "repeats", r, rep, 1);
    int in[2] = { x->in[0], c };
    return c < 0 || ir_set_inputs(u->g, n, 2, in) ? -1 : 0;
}

/* DFT < 20:  old: attribute axis (default 1)   new: input 3 axis (int64
 * scalar, default -2), so the opset-17 default survives the upgrade. */
static int up_dft(FeUp *u, int n)
{
    const IrNode *x = NODE(u, n);
    int64_t axis = ir_has_attr(x, IR_A_axis) ? ir_attr_int(x, IR_A_axis) : 1;
    int t = fe_up_const_i64(u, n, "axis", 1, &axis, 0);
    if (t < 0 || fe_up_set_input(u, n, 2, t))
        return -1;
    ir_remove_attr(u->g, n, IR_A_axis);
    return 0;
}

/* TopK < 10:  old: attribute k   new: input 2 K (int64 1-D of one element). */
static int up_topk(FeUp *u, int n)
{
    const IrNode *x = NODE(u, n);
    if (!ir_has_attr(x, IR_A_k))
        return ir_node_error(u->g, x, u->d, "TopK-1 needs the attribute k");
    int64_t k = ir_attr_int(x, IR_A_k);
    int t = fe_up_const_i64(u, n, "k", 1, &k, 1);
    if (t < 0 || fe_up_set_input(u, n, 1, t))
        return -1;
    ir_remove_attr(u->g, n, IR_A_k);
    return 0;
}

const FeUpRule fe_up_rules[] = {
    { IR_OP_TopK, 10, up_topk },
    { IR_OP_ReduceSum, 13, up_axes },
    { IR_OP_ReduceMean, 18, up_axes },
    { IR_OP_ReduceMax, 18, up_axes },
    { IR_OP_ReduceMin, 18, up_axes },
    { IR_OP_ReduceProd, 18, up_axes },
    { IR_OP_ReduceL1, 18, up_axes },
    { IR_OP_ReduceL2, 18, up_axes },
    { IR_OP_ReduceSumSquare, 18, up_axes },
    { IR_OP_ReduceLogSum, 18, up_axes },
    { IR_OP_ReduceLogSumExp, 18, up_axes },
    { IR_OP_Squeeze, 13, up_axes },
    { IR_OP_Unsqueeze, 13, up_axes },
    { IR_OP_Split, 18, up_split },
    { IR_OP_Clip, 11, up_clip },
    { IR_OP_Pad, 11, up_pad },
    { IR_OP_Slice, 10, up_slice },
    { IR_OP_Dropout, 12, up_dropout },
    { IR_OP_Reshape, 5, up_reshape },
    { IR_OP_Add, 7, up_broadcast },
    { IR_OP_Sub, 7, up_broadcast },
    { IR_OP_Mul, 7, up_broadcast },
    { IR_OP_Div, 7, up_broadcast },
    { IR_OP_Pow, 7, up_broadcast },
    { IR_OP_And, 7, up_broadcast },
    { IR_OP_Or, 7, up_broadcast },
    { IR_OP_Xor, 7, up_broadcast },
    { IR_OP_Equal, 7, up_broadcast },
    { IR_OP_Less, 7, up_broadcast },
    { IR_OP_Greater, 7, up_broadcast },
    { IR_OP_PRelu, 7, up_prelu },
    { IR_OP_Gemm, 7, up_gemm },
    { IR_OP_BatchNormalization, 9, up_batchnorm },
    { IR_OP_Softmax, 13, up_softmax },
    { IR_OP_LogSoftmax, 13, up_softmax },
    { IR_OP_Hardmax, 13, up_softmax },
    { IR_OP_Resize, 13, up_resize },
    { IR_OP_Concat, 4, up_concat },
    { IR_OP_Tile, 6, up_tile },
    { IR_OP_DFT, 20, up_dft },
};
const int fe_up_n_rules = (int)(sizeof fe_up_rules / sizeof fe_up_rules[0]);
