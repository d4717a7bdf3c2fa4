/* ir/infer_quant.c — shape and dtype rules of the quantized operators: QuantizeLinear, DequantizeLinear,
 * DynamicQuantizeLinear, MatMulInteger, ConvInteger, QLinearMatMul and
 * QLinearConv
 * (ONNX opset 21 semantics; ir/infer_impl.h). */
#include "ir/infer_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int expect_q8(const IrGraph *g, const IrNode *n, const IrTensor *t, const char *what, UtilDiag *d)
{
    if (t->v.dtype == IR_DT_I8 || t->v.dtype == IR_DT_U8)
        return 0;
    return ir_node_error(g, n, d, "%s '%s' has dtype %s; %s takes int8 or uint8", what, t->name,
                         ir_dtype_name(t->v.dtype), ir_op_name(n->op));
}

static int scalar_like(const IrTensor *t) { return ir_shape_numel(&t->v.shape) == 1; }

/* ONNX element types dlcc cannot represent, by TensorProto code. */
static const char *onnx_type_name(int64_t code)
{
    static const char *const names[] = {
        [8] = "string", [14] = "complex64", [15] = "complex128", [17] = "float8e4m3fn",
        [18] = "float8e4m3fnuz", [19] = "float8e5m2", [20] = "float8e5m2fnuz", [21] = "uint4",
        [22] = "int4", [23] = "float4e2m1", [24] = "float8e8m0",
    };
    return code > 0 && code < (int64_t)(sizeof names / sizeof names[0]) && names[code] ? names[code] : NULL;
}

/* An ONNX dtype attribute (output_dtype, precision) as an IrDType; errors
 * name the attribute and say why an ONNX type is unsupported. */
static int dtype_attr(const IrGraph *g, const IrNode *n, IrAttrKey k, IrDType *out, UtilDiag *d)
{
    int64_t code = ir_attr_int(n, k);
    IrDType t = ir_dtype_from_onnx((int)code);
    if (code != (int)code || t == IR_DT_UNDEF) {
        const char *nm = onnx_type_name(code);
        if (nm)
            return ir_node_error(g, n, d, "%s %s (%lld) is not supported: dlcc has no float8, float4, 4-bit integer, "
                                 "string or complex dtypes", ir_attr_name(k), nm, (long long)code);
        return ir_node_error(g, n, d, "%s %lld is not a known ONNX element type", ir_attr_name(k), (long long)code);
    }
    *out = t;
    return 0;
}

/* ------------------------------------------------- quantization */

/* Validates scale (and zero point) of QuantizeLinear / DequantizeLinear
 * against x: per tensor, per axis or blocked. */
static int check_qparams(const IrGraph *g, const IrNode *n, const IrTensor *x, const IrTensor *scale,
                         const IrTensor *zp, UtilDiag *d)
{
    char xs[160], ss[160];
    const IrShape *s = &scale->v.shape, *xsh = &x->v.shape;
    int64_t bs = ir_attr_int(n, IR_A_block_size);
    if (bs < 0)
        return ir_node_error(g, n, d, "block_size must be non-negative, got %lld", (long long)bs);
    /* equal shapes, as the specification asks, or one value each: ONNX
     * Runtime's quantize_static writes a bias's zero point as a scalar and its
     * scale as [1], and ONNX Runtime runs it */
    if (zp && !ir_shape_equal(&zp->v.shape, s) && !(scalar_like(zp) && scalar_like(scale))) {
        char zs[160];
        return ir_node_error(g, n, d, "zero point '%s' has shape %s but the scale has %s", zp->name,
                             ir_infer_shape_s(&zp->v.shape, zs, sizeof zs), ir_infer_shape_s(s, ss, sizeof ss));
    }
    if (scalar_like(scale))
        return 0;                                          /* per tensor */
    int axis = ir_norm_axis(g, n, ir_attr_int(n, IR_A_axis), xsh->rank, d);
    if (axis < 0)
        return -1;
    if (bs == 0) {
        if (s->rank != 1 || s->dims[0] != xsh->dims[axis])
            return ir_node_error(g, n, d, "scale '%s' has shape %s; per-axis quantization of %s on axis %d needs "
                                 "[%lld] (or one element per tensor, or block_size for blocks)", scale->name,
                                 ir_infer_shape_s(s, ss, sizeof ss), ir_infer_shape_s(xsh, xs, sizeof xs), axis,
                                 (long long)xsh->dims[axis]);
        return 0;
    }
    int ok = s->rank == xsh->rank;
    for (int i = 0; ok && i < s->rank; i++)
        ok = i == axis ? s->dims[i] == (xsh->dims[i] + bs - 1) / bs : s->dims[i] == xsh->dims[i];
    if (!ok)
        return ir_node_error(g, n, d, "scale '%s' has shape %s; blocked quantization of %s on axis %d with "
                             "block_size %lld needs the input's shape with ceil(%lld / %lld) on that axis",
                             scale->name, ir_infer_shape_s(s, ss, sizeof ss), ir_infer_shape_s(xsh, xs, sizeof xs), axis,
                             (long long)bs, (long long)xsh->dims[axis], (long long)bs);
    return 0;
}

static int is_qint(IrDType t) { return t == IR_DT_I8 || t == IR_DT_U8 || t == IR_DT_I16 || t == IR_DT_U16; }

int ir_infer_quantize(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = ir_in(g, n, 0), *scale = ir_in(g, n, 1), *zp = ir_in(g, n, 2);
    if ((!ir_dtype_is_float(x->v.dtype) && x->v.dtype != IR_DT_I32) ||
        (!ir_dtype_is_float(scale->v.dtype) && scale->v.dtype != IR_DT_I32) || scale->v.dtype == IR_DT_F64)
        return ir_node_error(g, n, d, "x (%s) and y_scale (%s) must be float32, float16, bfloat16 or int32",
                             ir_dtype_name(x->v.dtype), ir_dtype_name(scale->v.dtype));
    IrDType out = zp ? zp->v.dtype : IR_DT_U8;
    if (ir_attr_int(n, IR_A_output_dtype)) {
        IrDType od;
        if (dtype_attr(g, n, IR_A_output_dtype, &od, d))
            return -1;
        if (zp && od != zp->v.dtype)
            return ir_node_error(g, n, d, "output_dtype %s differs from the zero point's dtype %s",
                                 ir_dtype_name(od), ir_dtype_name(zp->v.dtype));
        out = od;
    }
    if (!is_qint(out))
        return ir_node_error(g, n, d, "cannot quantize to %s: the target must be int8, uint8, int16 or uint16",
                             ir_dtype_name(out));
    if (ir_attr_int(n, IR_A_precision)) {
        IrDType p;
        if (dtype_attr(g, n, IR_A_precision, &p, d))
            return -1;
        if (!ir_dtype_is_float(p))
            return ir_node_error(g, n, d, "precision must be a float type, got %s", ir_dtype_name(p));
    }
    if (ir_infer_expect_bool_attr(g, n, IR_A_saturate, d) || check_qparams(g, n, x, scale, zp, d))
        return -1;
    ir_infer_set(g, n, 0, out, &x->v.shape);
    return 0;
}

int ir_infer_dequantize(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = ir_in(g, n, 0), *scale = ir_in(g, n, 1), *zp = ir_in(g, n, 2);
    if (!is_qint(x->v.dtype) && x->v.dtype != IR_DT_I32)
        return ir_node_error(g, n, d, "x '%s' has dtype %s; DequantizeLinear takes int8, uint8, int16, uint16 or "
                             "int32", x->name, ir_dtype_name(x->v.dtype));
    if (zp && ir_infer_expect_dtype(g, n, zp, "zero point", x->v.dtype, d))
        return -1;
    if (ir_infer_expect_float(g, n, scale, "x_scale", d))
        return -1;
    IrDType out = scale->v.dtype;
    if (ir_attr_int(n, IR_A_output_dtype) && dtype_attr(g, n, IR_A_output_dtype, &out, d))
        return -1;
    if (out != IR_DT_F32 && out != IR_DT_F16 && out != IR_DT_BF16)
        return ir_node_error(g, n, d, "output dtype %s is not float32, float16 or bfloat16", ir_dtype_name(out));
    if (check_qparams(g, n, x, scale, zp, d))
        return -1;
    ir_infer_set(g, n, 0, out, &x->v.shape);
    return 0;
}

int ir_infer_dynquantize(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = ir_in(g, n, 0);
    if (ir_infer_expect_dtype(g, n, x, "input", IR_DT_F32, d))
        return -1;
    IrShape sc = { .rank = 0 };
    ir_infer_set(g, n, 0, IR_DT_U8, &x->v.shape);
    ir_infer_set(g, n, 1, IR_DT_F32, &sc);
    ir_infer_set(g, n, 2, IR_DT_U8, &sc);
    return 0;
}

/* numpy matmul output shape of a @ b. */
static int matmul_shape(const IrGraph *g, const IrNode *n, const IrShape *a, const IrShape *b, IrShape *o,
                        UtilDiag *d)
{
    char sa[160], sb[160];
    if (a->rank < 1 || b->rank < 1)
        return ir_node_error(g, n, d, "matrix operands must have rank >= 1");
    int64_t ka = a->dims[a->rank - 1], kb = b->rank == 1 ? b->dims[0] : b->dims[b->rank - 2];
    if (ka != kb)
        return ir_node_error(g, n, d, "inner dimensions of %s and %s differ (%lld vs %lld)",
                             ir_infer_shape_s(a, sa, sizeof sa), ir_infer_shape_s(b, sb, sizeof sb), (long long)ka, (long long)kb);
    IrShape ba = { .rank = a->rank > 2 ? a->rank - 2 : 0 }, bb = { .rank = b->rank > 2 ? b->rank - 2 : 0 };
    memcpy(ba.dims, a->dims, (size_t)ba.rank * sizeof(int64_t));
    memcpy(bb.dims, b->dims, (size_t)bb.rank * sizeof(int64_t));
    if (ir_broadcast_shapes(g, n, &ba, &bb, o, d))
        return -1;
    if (a->rank >= 2)
        o->dims[o->rank++] = a->dims[a->rank - 2];
    if (b->rank >= 2)
        o->dims[o->rank++] = b->dims[b->rank - 1];
    return 0;
}

/* A matmul quantization parameter (zero point or scale) of operand x: one
 * element, per row of a ([M] or [..., M, 1]) or per column of b ([N] or
 * [..., 1, N]), broadcastable to x and constant along the reduced dim. */
static int check_mm_param(const IrGraph *g, const IrNode *n, const IrTensor *x, const IrTensor *p, int is_a,
                          const char *what, UtilDiag *d)
{
    if (!p || scalar_like(p))
        return 0;
    IrShape s = p->v.shape;
    const IrShape *xs = &x->v.shape;
    if (is_a && s.rank == 1 && xs->rank >= 2) {        /* [M] -> [M, 1] */
        s.rank = 2;
        s.dims[1] = 1;
    }
    int ok = s.rank <= xs->rank;
    for (int i = 0; ok && i < s.rank; i++) {
        int xi = i + xs->rank - s.rank;
        int reduced = is_a ? xi == xs->rank - 1 : (xs->rank == 1 || xi == xs->rank - 2);
        ok = s.dims[i] == 1 || (!reduced && s.dims[i] == xs->dims[xi]);
    }
    if (!ok) {
        char a[160], b[160];
        return ir_node_error(g, n, d, "%s '%s' has shape %s; for %s %s it must have one element or one per %s",
                             what, p->name, ir_infer_shape_s(&p->v.shape, a, sizeof a), is_a ? "a" : "b",
                             ir_infer_shape_s(xs, b, sizeof b), is_a ? "row" : "column");
    }
    return 0;
}

int ir_infer_matmulinteger(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *a = ir_in(g, n, 0), *b = ir_in(g, n, 1), *az = ir_in(g, n, 2), *bz = ir_in(g, n, 3);
    if (expect_q8(g, n, a, "A", d) || expect_q8(g, n, b, "B", d) ||
        (az && ir_infer_expect_dtype(g, n, az, "a_zero_point", a->v.dtype, d)) ||
        (bz && ir_infer_expect_dtype(g, n, bz, "b_zero_point", b->v.dtype, d)) ||
        check_mm_param(g, n, a, az, 1, "a_zero_point", d) || check_mm_param(g, n, b, bz, 0, "b_zero_point", d))
        return -1;
    IrShape o;
    if (matmul_shape(g, n, &a->v.shape, &b->v.shape, &o, d))
        return -1;
    ir_infer_set(g, n, 0, IR_DT_I32, &o);
    return 0;
}

/* The scalar (one-element) parameter `what` at input i of dtype dt (or any
 * float when dt is IR_DT_UNDEF). */
static int check_scalar(const IrGraph *g, const IrNode *n, int i, const char *what, IrDType dt, UtilDiag *d)
{
    const IrTensor *t = ir_in(g, n, i);
    if (!t)
        return 0;
    if (dt == IR_DT_UNDEF ? ir_infer_expect_float(g, n, t, what, d) : ir_infer_expect_dtype(g, n, t, what, dt, d))
        return -1;
    if (!scalar_like(t)) {
        char s[160];
        return ir_node_error(g, n, d, "%s '%s' has shape %s; it must have one element", what, t->name,
                             ir_infer_shape_s(&t->v.shape, s, sizeof s));
    }
    return 0;
}

int ir_infer_qlinearmatmul(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *a = ir_in(g, n, 0), *as = ir_in(g, n, 1), *az = ir_in(g, n, 2);
    const IrTensor *b = ir_in(g, n, 3), *bs = ir_in(g, n, 4), *bz = ir_in(g, n, 5), *yz = ir_in(g, n, 7);
    if (expect_q8(g, n, a, "a", d) || expect_q8(g, n, b, "b", d) || expect_q8(g, n, yz, "y_zero_point", d) ||
        ir_infer_expect_float(g, n, as, "a_scale", d) || ir_infer_expect_float(g, n, bs, "b_scale", d) ||
        ir_infer_expect_dtype(g, n, az, "a_zero_point", a->v.dtype, d) || ir_infer_expect_dtype(g, n, bz, "b_zero_point", b->v.dtype, d) ||
        check_scalar(g, n, 6, "y_scale", IR_DT_UNDEF, d) || check_scalar(g, n, 7, "y_zero_point", yz->v.dtype, d) ||
        check_mm_param(g, n, a, as, 1, "a_scale", d) || check_mm_param(g, n, a, az, 1, "a_zero_point", d) ||
        check_mm_param(g, n, b, bs, 0, "b_scale", d) || check_mm_param(g, n, b, bz, 0, "b_zero_point", d))
        return -1;
    IrShape o;
    if (matmul_shape(g, n, &a->v.shape, &b->v.shape, &o, d))
        return -1;
    ir_infer_set(g, n, 0, yz->v.dtype, &o);
    return 0;
}

/* Per-output-channel parameter at input i: one element or [M]. */
static int check_per_channel(const IrGraph *g, const IrNode *n, int i, const char *what, int64_t m, UtilDiag *d)
{
    const IrTensor *t = ir_in(g, n, i);
    if (!t || scalar_like(t) || (t->v.shape.rank == 1 && t->v.shape.dims[0] == m))
        return 0;
    char s[160];
    return ir_node_error(g, n, d, "%s '%s' has shape %s; it must have one element or [%lld] (per output channel)",
                         what, t->name, ir_infer_shape_s(&t->v.shape, s, sizeof s), (long long)m);
}

int ir_infer_convinteger(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = ir_in(g, n, 0), *w = ir_in(g, n, 1), *wz = ir_in(g, n, 3);
    IrWindow win;
    if (expect_q8(g, n, x, "x", d) || expect_q8(g, n, w, "w", d) ||
        check_scalar(g, n, 2, "x_zero_point", x->v.dtype, d) ||
        (wz && ir_infer_expect_dtype(g, n, wz, "w_zero_point", w->v.dtype, d)) ||
        ir_window(g, n, &x->v.shape, &w->v.shape, &win, d) ||
        check_per_channel(g, n, 3, "w_zero_point", win.channels_out, d))
        return -1;
    IrShape y;
    ir_infer_window_shape(&win, &y);
    ir_infer_set(g, n, 0, IR_DT_I32, &y);
    return 0;
}

int ir_infer_qlinearconv(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = ir_in(g, n, 0), *w = ir_in(g, n, 3), *ws = ir_in(g, n, 4), *yz = ir_in(g, n, 7);
    const IrTensor *bias = ir_in(g, n, 8);
    IrWindow win;
    if (expect_q8(g, n, x, "x", d) || expect_q8(g, n, w, "w", d) || expect_q8(g, n, yz, "y_zero_point", d) ||
        check_scalar(g, n, 1, "x_scale", IR_DT_F32, d) || check_scalar(g, n, 2, "x_zero_point", x->v.dtype, d) ||
        ir_infer_expect_dtype(g, n, ws, "w_scale", IR_DT_F32, d) ||
        ir_infer_expect_dtype(g, n, ir_in(g, n, 5), "w_zero_point", w->v.dtype, d) ||
        check_scalar(g, n, 6, "y_scale", IR_DT_F32, d) || check_scalar(g, n, 7, "y_zero_point", yz->v.dtype, d) ||
        ir_window(g, n, &x->v.shape, &w->v.shape, &win, d) ||
        check_per_channel(g, n, 4, "w_scale", win.channels_out, d) ||
        check_per_channel(g, n, 5, "w_zero_point", win.channels_out, d))
        return -1;
    if (bias) {
        IrShape bw = { .rank = 1, .dims = { win.channels_out } };
        if (ir_infer_expect_dtype(g, n, bias, "bias B", IR_DT_I32, d) || ir_infer_expect_shape(g, n, bias, "bias B", &bw, d))
            return -1;
    }
    IrShape y;
    ir_infer_window_shape(&win, &y);
    ir_infer_set(g, n, 0, yz->v.dtype, &y);
    return 0;
}
