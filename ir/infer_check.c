/* ir/infer_check.c — the checks of operands that shape rules of several
 * families share (ir/infer_impl.h): dtypes, ranks and shapes, scalar and
 * per-channel operands, dtype attributes. */
#include "ir/infer_impl.h"

#include <stdio.h>
#include <string.h>

int ir_infer_need_float(IrGraph *g, IrNode *n, int i, UtilDiag *d)
{
    const IrTensor *t = ir_in(g, n, i);
    if (t && !ir_dtype_is_float(t->v.dtype))
        return ir_node_error(g, n, d, "input '%s' is %s; a floating-point tensor is required", t->name,
                             ir_dtype_name(t->v.dtype));
    return 0;
}

int ir_infer_need_numeric(IrGraph *g, IrNode *n, int i, UtilDiag *d)
{
    const IrTensor *t = ir_in(g, n, i);
    if (t && !ir_dtype_is_float(t->v.dtype) && !ir_dtype_is_int(t->v.dtype))
        return ir_node_error(g, n, d, "input '%s' is %s; a numeric tensor is required", t->name,
                             ir_dtype_name(t->v.dtype));
    return 0;
}

int ir_infer_same_dtype(IrGraph *g, IrNode *n, int i, int j, UtilDiag *d)
{
    const IrTensor *a = ir_in(g, n, i), *b = ir_in(g, n, j);
    if (a && b && a->v.dtype != b->v.dtype)
        return ir_node_error(g, n, d, "inputs '%s' (%s) and '%s' (%s) must have the same dtype", a->name,
                             ir_dtype_name(a->v.dtype), b->name, ir_dtype_name(b->v.dtype));
    return 0;
}

/* A 1-D input of exactly `c` elements (per-channel parameters). */
int ir_infer_need_channels(IrGraph *g, IrNode *n, int i, const char *what, int64_t c, UtilDiag *d)
{
    const IrTensor *t = ir_in(g, n, i);
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
int ir_infer_unidir(IrGraph *g, IrNode *n, const IrShape *a, const IrShape *b, UtilDiag *d)
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

int ir_infer_need_int(IrGraph *g, IrNode *n, int i, const char *what, UtilDiag *d)
{
    const IrTensor *t = ir_in(g, n, i);
    if (t && !ir_dtype_is_int(t->v.dtype))
        return ir_node_error(g, n, d, "the %s input '%s' is %s; an integer tensor is required", what, t->name,
                             ir_dtype_name(t->v.dtype));
    return 0;
}

/* Input i (present) must be 1-D with `len` elements. */
int ir_infer_need_vec(IrGraph *g, IrNode *n, int i, const char *what, int64_t len, UtilDiag *d)
{
    const IrTensor *t = ir_in(g, n, i);
    if (t && (t->v.shape.rank != 1 || t->v.shape.dims[0] != len))
        return ir_node_error(g, n, d, "the %s input '%s' must be 1-D with %lld elements", what, t->name,
                             (long long)len);
    return 0;
}

/* A scalar operand known at compile time (rank 0 or one element). */
int ir_infer_const_scalar(IrGraph *g, IrNode *n, int i, const char *what, int64_t *v, UtilDiag *d)
{
    const IrTensor *t = ir_in(g, n, i);
    if (!t)
        return ir_node_error(g, n, d, "the %s input is missing", what);
    if (ir_shape_numel(&t->v.shape) != 1)
        return ir_node_error(g, n, d, "the %s input '%s' must hold exactly one value", what, t->name);
    if (!t->v.data) {
        g->need_value = n->in[i];
        return ir_node_error(g, n, d, "the %s input '%s' must be a constant or computable at compile time "
                             "(dlcc compiles static shapes)", what, t->name);
    }
    *v = ir_load_i64(t->v.dtype, t->v.data, 0);          /* floats truncate; NaN reads 0 */
    return 0;
}

/* An optional input that is ir_infer_present. */
int ir_infer_present(const IrNode *n, int i)
{
    return i < n->n_in && n->in[i] >= 0;
}

/* An ONNX TensorProto data type attribute (EyeLike dtype, window
 * output_datatype); dflt when absent. */
IrDType ir_infer_onnx_dtype_attr(IrGraph *g, IrNode *n, IrAttrKey key, IrDType dflt, UtilDiag *d)
{
    if (!ir_has_attr(n, key))
        return dflt;
    int64_t v = ir_attr_int(n, key);
    IrDType t = v > 0 && v < 1000 ? ir_dtype_from_onnx((int)v) : IR_DT_UNDEF;
    if (t == IR_DT_UNDEF)
        ir_node_error(g, n, d, "%s %lld is not a supported data type", ir_attr_name(key), (long long)v);
    return t;
}

const char *ir_infer_shape_s(const IrShape *s, char *buf, size_t cap)
{
    ir_shape_str(s, buf, cap);
    return buf;
}

/* t must have exactly shape want; `what` names the operand. */
int ir_infer_expect_shape(const IrGraph *g, const IrNode *n, const IrTensor *t, const char *what, const IrShape *want,
                        UtilDiag *d)
{
    if (ir_shape_equal(&t->v.shape, want))
        return 0;
    char a[160], b[160];
    return ir_node_error(g, n, d, "%s '%s' has shape %s; expected %s", what, t->name, ir_infer_shape_s(&t->v.shape, a, sizeof a),
                         ir_infer_shape_s(want, b, sizeof b));
}

int ir_infer_expect_dtype(const IrGraph *g, const IrNode *n, const IrTensor *t, const char *what, IrDType want,
                        UtilDiag *d)
{
    if (t->v.dtype == want)
        return 0;
    return ir_node_error(g, n, d, "%s '%s' has dtype %s; expected %s", what, t->name, ir_dtype_name(t->v.dtype),
                         ir_dtype_name(want));
}

int ir_infer_expect_float(const IrGraph *g, const IrNode *n, const IrTensor *t, const char *what, UtilDiag *d)
{
    if (ir_dtype_is_float(t->v.dtype))
        return 0;
    return ir_node_error(g, n, d, "%s '%s' has dtype %s; %s takes float types", what, t->name,
                         ir_dtype_name(t->v.dtype), ir_op_name(n->op));
}

int ir_infer_expect_bool_attr(const IrGraph *g, const IrNode *n, IrAttrKey k, UtilDiag *d)
{
    int64_t v = ir_attr_int(n, k);
    if (v == 0 || v == 1)
        return 0;
    return ir_node_error(g, n, d, "%s must be 0 or 1, got %lld", ir_attr_name(k), (long long)v);
}

/* Indices must be int32/int64; when their values are known and dims is not
 * NULL, element i must lie in [-dim, dim) for dim = dims[i % m]. */
int ir_infer_check_indices(IrGraph *g, IrNode *n, const IrTensor *ind, const int64_t *dims, int64_t m, UtilDiag *d)
{
    if (ind->v.dtype != IR_DT_I32 && ind->v.dtype != IR_DT_I64)
        return ir_node_error(g, n, d, "indices '%s' must be int32 or int64, not %s", ind->name,
                             ir_dtype_name(ind->v.dtype));
    if (!ind->v.data || !dims)
        return 0;
    int64_t cnt = ir_shape_numel(&ind->v.shape);
    for (int64_t i = 0; i < cnt; i++) {
        int64_t v = ir_load_i64(ind->v.dtype, ind->v.data, i), dim = dims[i % m];
        if (v < -dim || v >= dim)
            return ir_node_error(g, n, d, "index %lld is out of range for an axis of size %lld", (long long)v,
                                 (long long)dim);
    }
    return 0;
}
