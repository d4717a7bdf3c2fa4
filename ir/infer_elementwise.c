/* ir/infer_elementwise.c — shape and dtype rules of the elementwise operators: unary functions, IsNaN / IsInf, casts,
 * Dropout (inference), binary operators with numpy broadcasting, Pow, the
 * comparisons, Where and the bitwise operators
 * (ONNX opset 21 semantics; ir/infer_impl.h). */
#include "ir/infer_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An optional input that, when present, must be a scalar (or one element). */
static int need_scalar(IrGraph *g, IrNode *n, int i, const char *what, UtilDiag *d)
{
    const IrTensor *t = ir_in(g, n, i);
    if (t && (t->v.shape.rank > 1 || ir_shape_numel(&t->v.shape) != 1))
        return ir_node_error(g, n, d, "the %s input '%s' must be a scalar", what, t->name);
    return 0;
}

static int bcast_inputs(IrGraph *g, IrNode *n, int first, IrShape *out, UtilDiag *d)
{
    *out = ir_in(g, n, first)->v.shape;
    for (int i = first + 1; i < n->n_in; i++) {
        const IrTensor *t = ir_in(g, n, i);
        if (!t)
            return ir_node_error(g, n, d, "input %d is missing", i + 1);
        if (ir_broadcast_shapes(g, n, out, &t->v.shape, out, d))
            return -1;
    }
    return 0;
}

/* ------------------------------------------------------------ unary */

static int unary_int_ok(IrOp op)
{
    switch (op) {
    case IR_OP_Abs: case IR_OP_Neg: case IR_OP_Sign: case IR_OP_Relu: case IR_OP_Identity: case IR_OP_Clip:
    case IR_OP_Shrink:
        return 1;
    default:
        return 0;
    }
}

int ir_infer_unary(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = ir_in(g, n, 0);
    const IrShape *s = &x->v.shape;
    if (n->op == IR_OP_Not) {
        if (x->v.dtype != IR_DT_BOOL)
            return ir_node_error(g, n, d, "input '%s' is %s; Not needs bool", x->name, ir_dtype_name(x->v.dtype));
    } else if (n->op != IR_OP_Identity) {
        if (unary_int_ok(n->op) ? ir_infer_need_numeric(g, n, 0, d) : ir_infer_need_float(g, n, 0, d))
            return -1;
    }
    switch (n->op) {
    case IR_OP_Clip:
        for (int i = 1; i < n->n_in; i++)
            if (need_scalar(g, n, i, i == 1 ? "min" : "max", d) || ir_infer_same_dtype(g, n, 0, i, d))
                return -1;
        break;
    case IR_OP_Softmax: case IR_OP_LogSoftmax: case IR_OP_Hardmax: case IR_OP_LpNormalization:
        if (ir_norm_axis(g, n, ir_attr_int(n, IR_A_axis), s->rank, d) < 0)
            return -1;
        if (n->op == IR_OP_LpNormalization && ir_attr_int(n, IR_A_p) != 1 && ir_attr_int(n, IR_A_p) != 2)
            return ir_node_error(g, n, d, "p must be 1 or 2, not %lld", (long long)ir_attr_int(n, IR_A_p));
        break;
    case IR_OP_InstanceNormalization:
        if (s->rank < 3)
            return ir_node_error(g, n, d, "input '%s' must have rank >= 3 (N, C, spatial...), not %d", x->name,
                                 s->rank);
        if (ir_infer_need_channels(g, n, 1, "scale", s->dims[1], d) || ir_infer_need_channels(g, n, 2, "B", s->dims[1], d))
            return -1;
        break;
    case IR_OP_Gelu: {
        const char *a = ir_attr_str(n, IR_A_approximate);
        if (strcmp(a, "none") && strcmp(a, "tanh"))
            return ir_node_error(g, n, d, "approximate must be \"none\" or \"tanh\", not \"%s\"", a);
        break;
    }
    default:
        break;
    }
    ir_infer_set(g, n, 0, x->v.dtype, s);
    return 0;
}

int ir_infer_tobool(IrGraph *g, IrNode *n, UtilDiag *d)
{
    if (ir_infer_need_float(g, n, 0, d))
        return -1;
    ir_infer_set(g, n, 0, IR_DT_BOOL, &ir_in(g, n, 0)->v.shape);
    return 0;
}

int ir_infer_cast(IrGraph *g, IrNode *n, UtilDiag *d)
{
    if (!ir_has_attr(n, IR_A_to))
        return ir_node_error(g, n, d, "attribute 'to' is required");
    int64_t to = ir_attr_int(n, IR_A_to);
    IrDType dt = to > 0 && to < 1000 ? ir_dtype_from_onnx((int)to) : IR_DT_UNDEF;
    if (dt == IR_DT_UNDEF)
        return ir_node_error(g, n, d, "cannot cast to ONNX data type %lld (unsupported by dlcc)", (long long)to);
    ir_infer_set(g, n, 0, dt, &ir_in(g, n, 0)->v.shape);
    return 0;
}

int ir_infer_castlike(IrGraph *g, IrNode *n, UtilDiag *d)
{
    (void)d;
    ir_infer_set(g, n, 0, ir_in(g, n, 1)->v.dtype, &ir_in(g, n, 0)->v.shape);
    return 0;
}

int ir_infer_dropout(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = ir_in(g, n, 0);
    if (ir_infer_need_float(g, n, 0, d) || need_scalar(g, n, 1, "ratio", d) || need_scalar(g, n, 2, "training_mode", d))
        return -1;
    const IrTensor *r = ir_in(g, n, 1), *tm = ir_in(g, n, 2);
    if (r && r->v.data) {
        double ratio = ir_load_f64(r->v.dtype, r->v.data, 0);
        if (!(ratio >= 0.0 && ratio < 1.0))
            return ir_node_error(g, n, d, "ratio must be in [0, 1), not %g", ratio);
    }
    if (tm && tm->v.dtype != IR_DT_BOOL)
        return ir_node_error(g, n, d, "the training_mode input '%s' must be bool", tm->name);
    if (tm && tm->v.data && ir_load_i64(tm->v.dtype, tm->v.data, 0))
        return ir_node_error(g, n, d, "training mode is not supported (dlcc compiles inference graphs)");
    ir_infer_set(g, n, 0, x->v.dtype, &x->v.shape);
    ir_infer_set(g, n, 1, IR_DT_BOOL, &x->v.shape);
    return 0;
}

/* -------------------------------------------------------- broadcast */

int ir_infer_broadcast(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = ir_in(g, n, 0);
    IrDType dt = x->v.dtype;
    IrShape out;
    if (n->op == IR_OP_PRelu) {
        if (ir_infer_need_numeric(g, n, 0, d) || ir_infer_same_dtype(g, n, 0, 1, d) ||
            ir_infer_unidir(g, n, &x->v.shape, &ir_in(g, n, 1)->v.shape, d))
            return -1;
        ir_infer_set(g, n, 0, dt, &x->v.shape);
        return 0;
    }
    for (int i = 1; i < n->n_in; i++)
        if (!ir_in(g, n, i))
            return ir_node_error(g, n, d, "input %d is missing", i + 1);
        else if (ir_infer_same_dtype(g, n, 0, i, d))
            return -1;
    switch (n->op) {
    case IR_OP_And: case IR_OP_Or: case IR_OP_Xor:
        if (dt != IR_DT_BOOL)
            return ir_node_error(g, n, d, "inputs are %s; %s needs bool", ir_dtype_name(dt), ir_op_name(n->op));
        break;
    case IR_OP_BitShift: {
        if (!ir_dtype_is_int(dt) || ir_dtype_is_signed(dt))
            return ir_node_error(g, n, d, "inputs are %s; BitShift needs unsigned integers", ir_dtype_name(dt));
        const char *dir = ir_attr_str(n, IR_A_direction);
        if (strcmp(dir, "LEFT") && strcmp(dir, "RIGHT"))
            return ir_node_error(g, n, d, "direction must be \"LEFT\" or \"RIGHT\", not \"%s\"", dir);
        break;
    }
    case IR_OP_Mod:
        if (ir_infer_need_numeric(g, n, 0, d))
            return -1;
        if (ir_dtype_is_float(dt) && ir_attr_int(n, IR_A_fmod) != 1)
            return ir_node_error(g, n, d, "fmod must be 1 for floating-point inputs");
        break;
    default:
        if (ir_infer_need_numeric(g, n, 0, d))
            return -1;
        break;
    }
    if (bcast_inputs(g, n, 0, &out, d))
        return -1;
    ir_infer_set(g, n, 0, dt, &out);
    return 0;
}

int ir_infer_pow(IrGraph *g, IrNode *n, UtilDiag *d)
{
    IrShape out;
    if (ir_infer_need_numeric(g, n, 0, d) || ir_infer_need_numeric(g, n, 1, d) || bcast_inputs(g, n, 0, &out, d))
        return -1;
    ir_infer_set(g, n, 0, ir_in(g, n, 0)->v.dtype, &out);
    return 0;
}

int ir_infer_compare(IrGraph *g, IrNode *n, UtilDiag *d)
{
    IrShape out;
    if (ir_infer_same_dtype(g, n, 0, 1, d) || (n->op != IR_OP_Equal && ir_infer_need_numeric(g, n, 0, d)) ||
        bcast_inputs(g, n, 0, &out, d))
        return -1;
    ir_infer_set(g, n, 0, IR_DT_BOOL, &out);
    return 0;
}

int ir_infer_where(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *c = ir_in(g, n, 0);
    IrShape out;
    if (c->v.dtype != IR_DT_BOOL)
        return ir_node_error(g, n, d, "the condition '%s' must be bool, not %s", c->name,
                             ir_dtype_name(c->v.dtype));
    if (ir_infer_same_dtype(g, n, 1, 2, d) || bcast_inputs(g, n, 0, &out, d))
        return -1;
    ir_infer_set(g, n, 0, ir_in(g, n, 1)->v.dtype, &out);
    return 0;
}

int ir_infer_bitwise(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = ir_in(g, n, 0);
    if (!ir_dtype_is_int(x->v.dtype))
        return ir_node_error(g, n, d, "input '%s' is %s; %s needs integers", x->name, ir_dtype_name(x->v.dtype),
                             ir_op_name(n->op));
    if (n->op == IR_OP_BitwiseNot) {
        ir_infer_set(g, n, 0, x->v.dtype, &x->v.shape);
        return 0;
    }
    IrShape o;
    if (ir_infer_same_dtype(g, n, 0, 1, d) ||
        ir_broadcast_shapes(g, n, &x->v.shape, &ir_in(g, n, 1)->v.shape, &o, d))
        return -1;
    ir_infer_set(g, n, 0, x->v.dtype, &o);
    return 0;
}
