/* ir/infer_math.c — shape/dtype rules of the math families: elementwise
 * unary and binary operators, casts, reductions, normalizations and matrix
 * products (ONNX opset 21 semantics). */
#include "ir/infer_impl.h"

#include <string.h>

static const IrTensor *in_t(IrGraph *g, IrNode *n, int i) { return ir_in(g, n, i); }

static int need_float(IrGraph *g, IrNode *n, int i, UtilDiag *d)
{
    const IrTensor *t = in_t(g, n, i);
    if (t && !ir_dtype_is_float(t->v.dtype))
        return ir_node_error(g, n, d, "input '%s' is %s; a floating-point tensor is required", t->name,
                             ir_dtype_name(t->v.dtype));
    return 0;
}

static int need_numeric(IrGraph *g, IrNode *n, int i, UtilDiag *d)
{
    const IrTensor *t = in_t(g, n, i);
    if (t && !ir_dtype_is_float(t->v.dtype) && !ir_dtype_is_int(t->v.dtype))
        return ir_node_error(g, n, d, "input '%s' is %s; a numeric tensor is required", t->name,
                             ir_dtype_name(t->v.dtype));
    return 0;
}

static int same_dtype(IrGraph *g, IrNode *n, int i, int j, UtilDiag *d)
{
    const IrTensor *a = in_t(g, n, i), *b = in_t(g, n, j);
    if (a && b && a->v.dtype != b->v.dtype)
        return ir_node_error(g, n, d, "inputs '%s' (%s) and '%s' (%s) must have the same dtype", a->name,
                             ir_dtype_name(a->v.dtype), b->name, ir_dtype_name(b->v.dtype));
    return 0;
}

/* An optional input that, when present, must be a scalar (or one element). */
static int need_scalar(IrGraph *g, IrNode *n, int i, const char *what, UtilDiag *d)
{
    const IrTensor *t = in_t(g, n, i);
    if (t && (t->v.shape.rank > 1 || ir_shape_numel(&t->v.shape) != 1))
        return ir_node_error(g, n, d, "the %s input '%s' must be a scalar", what, t->name);
    return 0;
}

/* A 1-D input of exactly `c` elements (per-channel parameters). */
static int need_vec(IrGraph *g, IrNode *n, int i, const char *what, int64_t c, UtilDiag *d)
{
    const IrTensor *t = in_t(g, n, i);
    if (!t)
        return 0;
    if (t->v.shape.rank != 1 || t->v.shape.dims[0] != c) {
        char s[128];
        ir_shape_str(&t->v.shape, s, sizeof s);
        return ir_node_error(g, n, d, "the %s input '%s' has shape %s; expected [%lld]", what, t->name, s,
                             (long long)c);
    }
    if (!ir_dtype_is_float(t->v.dtype))
        return ir_node_error(g, n, d, "the %s input '%s' must be floating-point", what, t->name);
    return 0;
}

/* b broadcasts unidirectionally to a: broadcast(a, b) == a. */
static int unidir(IrGraph *g, IrNode *n, const IrShape *a, const IrShape *b, UtilDiag *d)
{
    IrShape o;
    if (ir_broadcast_shapes(g, n, a, b, &o, d))
        return -1;
    if (!ir_shape_equal(&o, a)) {
        char sa[128], sb[128];
        ir_shape_str(a, sa, sizeof sa);
        ir_shape_str(b, sb, sizeof sb);
        return ir_node_error(g, n, d, "shape %s cannot be broadcast to %s", sb, sa);
    }
    return 0;
}

static int bcast_inputs(IrGraph *g, IrNode *n, int first, IrShape *out, UtilDiag *d)
{
    *out = in_t(g, n, first)->v.shape;
    for (int i = first + 1; i < n->n_in; i++) {
        const IrTensor *t = in_t(g, n, i);
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
    const IrTensor *x = in_t(g, n, 0);
    const IrShape *s = &x->v.shape;
    if (n->op == IR_OP_Not) {
        if (x->v.dtype != IR_DT_BOOL)
            return ir_node_error(g, n, d, "input '%s' is %s; Not needs bool", x->name, ir_dtype_name(x->v.dtype));
    } else if (n->op != IR_OP_Identity) {
        if (unary_int_ok(n->op) ? need_numeric(g, n, 0, d) : need_float(g, n, 0, d))
            return -1;
    }
    switch (n->op) {
    case IR_OP_Clip:
        for (int i = 1; i < n->n_in; i++)
            if (need_scalar(g, n, i, i == 1 ? "min" : "max", d) || same_dtype(g, n, 0, i, d))
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
        if (need_vec(g, n, 1, "scale", s->dims[1], d) || need_vec(g, n, 2, "B", s->dims[1], d))
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
    if (need_float(g, n, 0, d))
        return -1;
    ir_infer_set(g, n, 0, IR_DT_BOOL, &in_t(g, n, 0)->v.shape);
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
    ir_infer_set(g, n, 0, dt, &in_t(g, n, 0)->v.shape);
    return 0;
}

int ir_infer_castlike(IrGraph *g, IrNode *n, UtilDiag *d)
{
    (void)d;
    ir_infer_set(g, n, 0, in_t(g, n, 1)->v.dtype, &in_t(g, n, 0)->v.shape);
    return 0;
}

int ir_infer_dropout(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = in_t(g, n, 0);
    if (need_float(g, n, 0, d) || need_scalar(g, n, 1, "ratio", d) || need_scalar(g, n, 2, "training_mode", d))
        return -1;
    const IrTensor *r = in_t(g, n, 1), *tm = in_t(g, n, 2);
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
    const IrTensor *x = in_t(g, n, 0);
    IrDType dt = x->v.dtype;
    IrShape out;
    if (n->op == IR_OP_PRelu) {
        if (need_numeric(g, n, 0, d) || same_dtype(g, n, 0, 1, d) ||
            unidir(g, n, &x->v.shape, &in_t(g, n, 1)->v.shape, d))
            return -1;
        ir_infer_set(g, n, 0, dt, &x->v.shape);
        return 0;
    }
    for (int i = 1; i < n->n_in; i++)
        if (!in_t(g, n, i))
            return ir_node_error(g, n, d, "input %d is missing", i + 1);
        else if (same_dtype(g, n, 0, i, d))
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
        if (need_numeric(g, n, 0, d))
            return -1;
        if (ir_dtype_is_float(dt) && ir_attr_int(n, IR_A_fmod) != 1)
            return ir_node_error(g, n, d, "fmod must be 1 for floating-point inputs");
        break;
    default:
        if (need_numeric(g, n, 0, d))
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
    if (need_numeric(g, n, 0, d) || need_numeric(g, n, 1, d) || bcast_inputs(g, n, 0, &out, d))
        return -1;
    ir_infer_set(g, n, 0, in_t(g, n, 0)->v.dtype, &out);
    return 0;
}

int ir_infer_compare(IrGraph *g, IrNode *n, UtilDiag *d)
{
    IrShape out;
    if (same_dtype(g, n, 0, 1, d) || (n->op != IR_OP_Equal && need_numeric(g, n, 0, d)) ||
        bcast_inputs(g, n, 0, &out, d))
        return -1;
    ir_infer_set(g, n, 0, IR_DT_BOOL, &out);
    return 0;
}

int ir_infer_where(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *c = in_t(g, n, 0);
    IrShape out;
    if (c->v.dtype != IR_DT_BOOL)
        return ir_node_error(g, n, d, "the condition '%s' must be bool, not %s", c->name,
                             ir_dtype_name(c->v.dtype));
    if (same_dtype(g, n, 1, 2, d) || bcast_inputs(g, n, 0, &out, d))
        return -1;
    ir_infer_set(g, n, 0, in_t(g, n, 1)->v.dtype, &out);
    return 0;
}

/* ------------------------------------------------------- reductions */

int ir_infer_reduce(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = in_t(g, n, 0);
    const IrShape *s = &x->v.shape;
    int64_t axes[IR_MAX_RANK];
    int na = 0;
    /* bool is accepted by ReduceMax/ReduceMin (opset 20) */
    if (!(x->v.dtype == IR_DT_BOOL && (n->op == IR_OP_ReduceMax || n->op == IR_OP_ReduceMin)) &&
        need_numeric(g, n, 0, d))
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
    const IrTensor *x = in_t(g, n, 0);
    const IrShape *s = &x->v.shape;
    if (need_numeric(g, n, 0, d))
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

/* ---------------------------------------------------- normalization */

int ir_infer_batchnorm(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = in_t(g, n, 0);
    const IrShape *s = &x->v.shape;
    static const char *const what[] = { "", "scale", "B", "mean", "var" };
    if (ir_attr_int(n, IR_A_training_mode))
        return ir_node_error(g, n, d, "training_mode=1 is not supported (dlcc compiles inference graphs)");
    if (n->n_out > 1)
        return ir_node_error(g, n, d, "the running_mean / running_var outputs exist only in training mode, "
                             "which is not supported (dlcc compiles inference graphs)");
    if (need_float(g, n, 0, d))
        return -1;
    if (s->rank < 2)
        return ir_node_error(g, n, d, "input '%s' must have rank >= 2 (N, C, ...), not %d", x->name, s->rank);
    for (int i = 1; i < 5; i++) {
        if (!in_t(g, n, i))
            return ir_node_error(g, n, d, "the %s input is missing", what[i]);
        if (need_vec(g, n, i, what[i], s->dims[1], d))
            return -1;
    }
    if (ir_attr_float(n, IR_A_epsilon) < 0)
        return ir_node_error(g, n, d, "epsilon must not be negative");
    ir_infer_set(g, n, 0, x->v.dtype, s);
    return 0;
}

int ir_infer_layernorm(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = in_t(g, n, 0);
    const IrShape *s = &x->v.shape;
    if (need_float(g, n, 0, d))
        return -1;
    if (s->rank == 0)
        return ir_node_error(g, n, d, "input '%s' must have rank >= 1", x->name);
    int a = ir_norm_axis(g, n, ir_attr_int(n, IR_A_axis), s->rank, d);
    if (a < 0)
        return -1;
    IrShape inner = { .rank = s->rank - a };
    memcpy(inner.dims, s->dims + a, (size_t)inner.rank * sizeof(int64_t));
    for (int i = 1; i < n->n_in; i++) {
        const IrTensor *t = in_t(g, n, i);
        if (t && (same_dtype(g, n, 0, i, d) || unidir(g, n, &inner, &t->v.shape, d)))
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

/* -------------------------------------------------- matrix products */

int ir_infer_matmul(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrShape *a = &in_t(g, n, 0)->v.shape, *b = &in_t(g, n, 1)->v.shape;
    if (need_numeric(g, n, 0, d) || same_dtype(g, n, 0, 1, d))
        return -1;
    if (a->rank < 1 || b->rank < 1)
        return ir_node_error(g, n, d, "MatMul operands must have rank >= 1");
    int64_t ka = a->dims[a->rank - 1], kb = b->rank == 1 ? b->dims[0] : b->dims[b->rank - 2];
    if (ka != kb) {
        char sa[128], sb[128];
        ir_shape_str(a, sa, sizeof sa);
        ir_shape_str(b, sb, sizeof sb);
        return ir_node_error(g, n, d, "inner dimensions of %s and %s differ (%lld vs %lld)", sa, sb,
                             (long long)ka, (long long)kb);
    }
    IrShape ba = { .rank = a->rank > 2 ? a->rank - 2 : 0 }, bb = { .rank = b->rank > 2 ? b->rank - 2 : 0 }, o;
    memcpy(ba.dims, a->dims, (size_t)ba.rank * sizeof(int64_t));
    memcpy(bb.dims, b->dims, (size_t)bb.rank * sizeof(int64_t));
    if (ir_broadcast_shapes(g, n, &ba, &bb, &o, d))
        return -1;
    if (a->rank >= 2)
        o.dims[o.rank++] = a->dims[a->rank - 2];
    if (b->rank >= 2)
        o.dims[o.rank++] = b->dims[b->rank - 1];
    ir_infer_set(g, n, 0, in_t(g, n, 0)->v.dtype, &o);
    return 0;
}

int ir_infer_gemm(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrShape *a = &in_t(g, n, 0)->v.shape, *b = &in_t(g, n, 1)->v.shape;
    if (need_numeric(g, n, 0, d) || same_dtype(g, n, 0, 1, d))
        return -1;
    if (a->rank != 2 || b->rank != 2)
        return ir_node_error(g, n, d, "Gemm needs 2-D A and B (got rank %d and %d)", a->rank, b->rank);
    int ta = ir_attr_int(n, IR_A_transA) != 0, tb = ir_attr_int(n, IR_A_transB) != 0;
    int64_t m = a->dims[ta], k = a->dims[!ta], kb = b->dims[tb], nn = b->dims[!tb];
    if (k != kb)
        return ir_node_error(g, n, d, "inner dimensions differ (%lld vs %lld)", (long long)k, (long long)kb);
    IrShape o = { .rank = 2, .dims = { m, nn } };
    const IrTensor *c = in_t(g, n, 2);
    if (c && (same_dtype(g, n, 0, 2, d) || unidir(g, n, &o, &c->v.shape, d)))
        return -1;
    ir_infer_set(g, n, 0, in_t(g, n, 0)->v.dtype, &o);
    return 0;
}
