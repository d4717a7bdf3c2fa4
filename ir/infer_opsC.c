/* ir/infer_opsC.c — shape rules of the recurrent (RNN, GRU, LSTM),
 * quantized (QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear,
 * MatMulInteger, ConvInteger, QLinearMatMul, QLinearConv) and detection
 * (RoiAlign, DeformConv, NonMaxSuppression) operators, and what their kernels
 * share with them: RNN activation resolution and NonMaxSuppression's
 * selection (whose output size depends on values, so the rule runs it when
 * the inputs are known at compile time).
 *
 * Quantization parameters (scale, zero point) follow ONNX: one element =
 * per tensor; a 1-D tensor along `axis` = per axis; with block_size > 0 a
 * tensor of x's rank whose `axis` dim is ceil(D / block_size) = blocked.
 * dlcc has no float8 / float4 / 4-bit integer dtypes: those quantized types
 * are rejected with an error naming the type. */
#include "ir/infer_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ helpers */

static const char *shape_s(const IrShape *s, char *buf, size_t cap)
{
    ir_shape_str(s, buf, cap);
    return buf;
}

/* t must have exactly shape want; `what` names the operand. */
static int expect_shape(const IrGraph *g, const IrNode *n, const IrTensor *t, const char *what, const IrShape *want,
                        UtilDiag *d)
{
    if (ir_shape_equal(&t->v.shape, want))
        return 0;
    char a[160], b[160];
    return ir_node_error(g, n, d, "%s '%s' has shape %s; expected %s", what, t->name, shape_s(&t->v.shape, a, sizeof a),
                         shape_s(want, b, sizeof b));
}

static int expect_dtype(const IrGraph *g, const IrNode *n, const IrTensor *t, const char *what, IrDType want,
                        UtilDiag *d)
{
    if (t->v.dtype == want)
        return 0;
    return ir_node_error(g, n, d, "%s '%s' has dtype %s; expected %s", what, t->name, ir_dtype_name(t->v.dtype),
                         ir_dtype_name(want));
}

static int expect_float(const IrGraph *g, const IrNode *n, const IrTensor *t, const char *what, UtilDiag *d)
{
    if (ir_dtype_is_float(t->v.dtype))
        return 0;
    return ir_node_error(g, n, d, "%s '%s' has dtype %s; %s takes float types", what, t->name,
                         ir_dtype_name(t->v.dtype), ir_op_name(n->op));
}

static int expect_q8(const IrGraph *g, const IrNode *n, const IrTensor *t, const char *what, UtilDiag *d)
{
    if (t->v.dtype == IR_DT_I8 || t->v.dtype == IR_DT_U8)
        return 0;
    return ir_node_error(g, n, d, "%s '%s' has dtype %s; %s takes int8 or uint8", what, t->name,
                         ir_dtype_name(t->v.dtype), ir_op_name(n->op));
}

static int expect_bool_attr(const IrGraph *g, const IrNode *n, IrAttrKey k, UtilDiag *d)
{
    int64_t v = ir_attr_int(n, k);
    if (v == 0 || v == 1)
        return 0;
    return ir_node_error(g, n, d, "%s must be 0 or 1, got %lld", ir_attr_name(k), (long long)v);
}

static IrShape shape3(int64_t a, int64_t b, int64_t c)
{
    IrShape s = { .rank = 3, .dims = { a, b, c } };
    return s;
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

/* ---------------------------------------------------- RNN, GRU, LSTM */

static int ieq(const char *a, const char *b)
{
    for (; *a && *b; a++, b++) {
        char x = *a >= 'A' && *a <= 'Z' ? (char)(*a - 'A' + 'a') : *a;
        char y = *b >= 'A' && *b <= 'Z' ? (char)(*b - 'A' + 'a') : *b;
        if (x != y)
            return 0;
    }
    return *a == *b;
}

int ir_rnn_directions(const IrGraph *g, const IrNode *n, UtilDiag *d)
{
    const char *s = ir_attr_str(n, IR_A_direction);
    if (!strcmp(s, "forward") || !strcmp(s, "reverse"))
        return 1;
    if (!strcmp(s, "bidirectional"))
        return 2;
    return ir_node_error(g, n, d, "unknown direction '%s' (expected forward, reverse or bidirectional)", s);
}

static int acts_per_dir(IrOp op) { return op == IR_OP_LSTM ? 3 : op == IR_OP_GRU ? 2 : 1; }

int ir_rnn_activations(const IrGraph *g, const IrNode *n, int dirs, IrRnnActFn *fns, UtilDiag *d)
{
    /* name, kind, uses alpha, uses beta, default alpha, default beta */
    static const struct {
        const char *name;
        IrRnnAct kind;
        int na, nb;
        double a, b;
    } table[] = {
        { "Relu", IR_RNN_RELU, 0, 0, 0, 0 },          { "Tanh", IR_RNN_TANH, 0, 0, 0, 0 },
        { "Sigmoid", IR_RNN_SIGMOID, 0, 0, 0, 0 },    { "Affine", IR_RNN_AFFINE, 1, 1, 1.0, 0.0 },
        { "LeakyRelu", IR_RNN_LEAKYRELU, 1, 0, 0.01, 0 },
        { "ThresholdedRelu", IR_RNN_THRESHOLDEDRELU, 1, 0, 1.0, 0 },
        { "ScaledTanh", IR_RNN_SCALEDTANH, 1, 1, 1.0, 1.0 },
        { "HardSigmoid", IR_RNN_HARDSIGMOID, 1, 1, 0.2, 0.5 },
        { "Elu", IR_RNN_ELU, 1, 0, 1.0, 0 },          { "Softsign", IR_RNN_SOFTSIGN, 0, 0, 0, 0 },
        { "Softplus", IR_RNN_SOFTPLUS, 0, 0, 0, 0 },
    };
    static const char *const defaults[3][3] = { { "Tanh" }, { "Sigmoid", "Tanh" }, { "Sigmoid", "Tanh", "Tanh" } };
    int per = acts_per_dir(n->op), want = per * dirs;
    const IrAttr *a = ir_attr(n, IR_A_activations);
    const char *names[IR_RNN_MAX_ACTS];
    if (a && a->kind == IR_AK_STRINGS) {
        /* one set per direction; a single set (or ONNX's RNN default of two)
         * for one direction uses the first */
        if (a->n != want && !(dirs == 1 && a->n == 2 * per))
            return ir_node_error(g, n, d, "activations has %d names; %s with %d direction%s needs %d", a->n,
                                 ir_op_name(n->op), dirs, dirs > 1 ? "s" : "", want);
        for (int i = 0; i < want; i++)
            names[i] = a->v.strings[i];
    } else
        for (int i = 0; i < want; i++)
            names[i] = defaults[per - 1][i % per];
    /* alpha/beta are consumed in order by the activations that take them */
    const double *al, *be;
    int nal = ir_attr_floats(n, IR_A_activation_alpha, &al), nbe = ir_attr_floats(n, IR_A_activation_beta, &be);
    int ia = 0, ib = 0;
    for (int i = 0; i < want; i++) {
        size_t k = 0;
        while (k < sizeof table / sizeof table[0] && !ieq(table[k].name, names[i]))
            k++;
        if (k == sizeof table / sizeof table[0])
            return ir_node_error(g, n, d, "activations: unknown activation function '%s'", names[i]);
        fns[i].kind = table[k].kind;
        fns[i].alpha = table[k].na && ia < nal ? al[ia++] : table[k].a;
        fns[i].beta = table[k].nb && ib < nbe ? be[ib++] : table[k].b;
    }
    if (ia < nal || ib < nbe)
        return ir_node_error(g, n, d, "activation_alpha/activation_beta have %d/%d values but the activations take "
                             "only %d/%d", nal, nbe, ia, ib);
    return 0;
}

int ir_infer_rnn(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = ir_in(g, n, 0), *w = ir_in(g, n, 1), *r = ir_in(g, n, 2), *b = ir_in(g, n, 3);
    const IrTensor *sl = ir_in(g, n, 4), *h0 = ir_in(g, n, 5), *c0 = ir_in(g, n, 6), *p = ir_in(g, n, 7);
    int gates = n->op == IR_OP_LSTM ? 4 : n->op == IR_OP_GRU ? 3 : 1;
    if (expect_float(g, n, x, "input X", d) || expect_dtype(g, n, w, "weight W", x->v.dtype, d) ||
        expect_dtype(g, n, r, "recurrence R", x->v.dtype, d))
        return -1;
    int64_t layout = ir_attr_int(n, IR_A_layout);
    if (layout != 0 && layout != 1)
        return ir_node_error(g, n, d, "layout must be 0 or 1, got %lld", (long long)layout);
    int dirs = ir_rnn_directions(g, n, d);
    if (dirs < 0)
        return -1;
    char xs[160];
    if (x->v.shape.rank != 3)
        return ir_node_error(g, n, d, "input X %s must have rank 3", shape_s(&x->v.shape, xs, sizeof xs));
    if (r->v.shape.rank != 3)
        return ir_node_error(g, n, d, "recurrence R %s must have rank 3", shape_s(&r->v.shape, xs, sizeof xs));
    int64_t seq = x->v.shape.dims[layout ? 1 : 0], batch = x->v.shape.dims[layout ? 0 : 1];
    int64_t isz = x->v.shape.dims[2], hs = r->v.shape.dims[2];
    if (ir_has_attr(n, IR_A_hidden_size)) {
        int64_t h = ir_attr_int(n, IR_A_hidden_size);
        if (h <= 0)
            return ir_node_error(g, n, d, "hidden_size must be positive, got %lld", (long long)h);
        hs = h;
    }
    int64_t gh, gh2;
    if (hs <= 0 || util_mul_overflow_i64(hs, gates, &gh) || util_mul_overflow_i64(gh, 2, &gh2))
        return ir_node_error(g, n, d, "hidden size %lld is invalid", (long long)hs);
    IrShape want = shape3(dirs, gh, isz);
    if (expect_shape(g, n, w, "weight W", &want, d))
        return -1;
    want = shape3(dirs, gh, hs);
    if (expect_shape(g, n, r, "recurrence R", &want, d))
        return -1;
    if (b) {
        IrShape bw = { .rank = 2, .dims = { dirs, gh2 } };
        if (expect_dtype(g, n, b, "bias B", x->v.dtype, d) || expect_shape(g, n, b, "bias B", &bw, d))
            return -1;
    }
    if (sl) {
        IrShape sw = { .rank = 1, .dims = { batch } };
        if (expect_dtype(g, n, sl, "sequence_lens", IR_DT_I32, d) || expect_shape(g, n, sl, "sequence_lens", &sw, d))
            return -1;
        for (int64_t i = 0; sl->v.data && i < batch; i++) {
            int64_t v = ir_load_i64(sl->v.dtype, sl->v.data, i);
            if (v < 0 || v > seq)
                return ir_node_error(g, n, d, "sequence_lens[%lld] = %lld is outside [0, %lld]", (long long)i,
                                     (long long)v, (long long)seq);
        }
    }
    IrShape hsh = layout ? shape3(batch, dirs, hs) : shape3(dirs, batch, hs);
    if (h0 && (expect_dtype(g, n, h0, "initial_h", x->v.dtype, d) || expect_shape(g, n, h0, "initial_h", &hsh, d)))
        return -1;
    if (c0 && (expect_dtype(g, n, c0, "initial_c", x->v.dtype, d) || expect_shape(g, n, c0, "initial_c", &hsh, d)))
        return -1;
    if (p) {
        IrShape pw = { .rank = 2, .dims = { dirs, 3 * hs } };
        if (expect_dtype(g, n, p, "peepholes P", x->v.dtype, d) || expect_shape(g, n, p, "peepholes P", &pw, d))
            return -1;
    }
    if (ir_has_attr(n, IR_A_clip) && !(ir_attr_float(n, IR_A_clip) > 0))
        return ir_node_error(g, n, d, "clip must be positive, got %g", ir_attr_float(n, IR_A_clip));
    if ((n->op == IR_OP_GRU && expect_bool_attr(g, n, IR_A_linear_before_reset, d)) ||
        (n->op == IR_OP_LSTM && expect_bool_attr(g, n, IR_A_input_forget, d)))
        return -1;
    IrRnnActFn fns[IR_RNN_MAX_ACTS];
    if (ir_rnn_activations(g, n, dirs, fns, d))
        return -1;
    IrShape y = { .rank = 4, .dims = { seq, dirs, batch, hs } };
    if (layout) {
        y.dims[0] = batch;
        y.dims[1] = seq;
        y.dims[2] = dirs;
    }
    ir_infer_set(g, n, 0, x->v.dtype, &y);
    ir_infer_set(g, n, 1, x->v.dtype, &hsh);
    ir_infer_set(g, n, 2, x->v.dtype, &hsh);
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
    if (zp && !ir_shape_equal(&zp->v.shape, s)) {
        char zs[160];
        return ir_node_error(g, n, d, "zero point '%s' has shape %s but the scale has %s", zp->name,
                             shape_s(&zp->v.shape, zs, sizeof zs), shape_s(s, ss, sizeof ss));
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
                                 shape_s(s, ss, sizeof ss), shape_s(xsh, xs, sizeof xs), axis,
                                 (long long)xsh->dims[axis]);
        return 0;
    }
    int ok = s->rank == xsh->rank;
    for (int i = 0; ok && i < s->rank; i++)
        ok = i == axis ? s->dims[i] == (xsh->dims[i] + bs - 1) / bs : s->dims[i] == xsh->dims[i];
    if (!ok)
        return ir_node_error(g, n, d, "scale '%s' has shape %s; blocked quantization of %s on axis %d with "
                             "block_size %lld needs the input's shape with ceil(%lld / %lld) on that axis",
                             scale->name, shape_s(s, ss, sizeof ss), shape_s(xsh, xs, sizeof xs), axis,
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
    if (expect_bool_attr(g, n, IR_A_saturate, d) || check_qparams(g, n, x, scale, zp, d))
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
    if (zp && expect_dtype(g, n, zp, "zero point", x->v.dtype, d))
        return -1;
    if (expect_float(g, n, scale, "x_scale", d))
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
    if (expect_dtype(g, n, x, "input", IR_DT_F32, d))
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
                             shape_s(a, sa, sizeof sa), shape_s(b, sb, sizeof sb), (long long)ka, (long long)kb);
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
                             what, p->name, shape_s(&p->v.shape, a, sizeof a), is_a ? "a" : "b",
                             shape_s(xs, b, sizeof b), is_a ? "row" : "column");
    }
    return 0;
}

int ir_infer_matmulinteger(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *a = ir_in(g, n, 0), *b = ir_in(g, n, 1), *az = ir_in(g, n, 2), *bz = ir_in(g, n, 3);
    if (expect_q8(g, n, a, "A", d) || expect_q8(g, n, b, "B", d) ||
        (az && expect_dtype(g, n, az, "a_zero_point", a->v.dtype, d)) ||
        (bz && expect_dtype(g, n, bz, "b_zero_point", b->v.dtype, d)) ||
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
    if (dt == IR_DT_UNDEF ? expect_float(g, n, t, what, d) : expect_dtype(g, n, t, what, dt, d))
        return -1;
    if (!scalar_like(t)) {
        char s[160];
        return ir_node_error(g, n, d, "%s '%s' has shape %s; it must have one element", what, t->name,
                             shape_s(&t->v.shape, s, sizeof s));
    }
    return 0;
}

int ir_infer_qlinearmatmul(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *a = ir_in(g, n, 0), *as = ir_in(g, n, 1), *az = ir_in(g, n, 2);
    const IrTensor *b = ir_in(g, n, 3), *bs = ir_in(g, n, 4), *bz = ir_in(g, n, 5), *yz = ir_in(g, n, 7);
    if (expect_q8(g, n, a, "a", d) || expect_q8(g, n, b, "b", d) || expect_q8(g, n, yz, "y_zero_point", d) ||
        expect_float(g, n, as, "a_scale", d) || expect_float(g, n, bs, "b_scale", d) ||
        expect_dtype(g, n, az, "a_zero_point", a->v.dtype, d) || expect_dtype(g, n, bz, "b_zero_point", b->v.dtype, d) ||
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
                         what, t->name, shape_s(&t->v.shape, s, sizeof s), (long long)m);
}

int ir_infer_convinteger(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = ir_in(g, n, 0), *w = ir_in(g, n, 1), *wz = ir_in(g, n, 3);
    IrWindow win;
    if (expect_q8(g, n, x, "x", d) || expect_q8(g, n, w, "w", d) ||
        check_scalar(g, n, 2, "x_zero_point", x->v.dtype, d) ||
        (wz && expect_dtype(g, n, wz, "w_zero_point", w->v.dtype, d)) ||
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
        expect_dtype(g, n, ws, "w_scale", IR_DT_F32, d) ||
        expect_dtype(g, n, ir_in(g, n, 5), "w_zero_point", w->v.dtype, d) ||
        check_scalar(g, n, 6, "y_scale", IR_DT_F32, d) || check_scalar(g, n, 7, "y_zero_point", yz->v.dtype, d) ||
        ir_window(g, n, &x->v.shape, &w->v.shape, &win, d) ||
        check_per_channel(g, n, 4, "w_scale", win.channels_out, d) ||
        check_per_channel(g, n, 5, "w_zero_point", win.channels_out, d))
        return -1;
    if (bias) {
        IrShape bw = { .rank = 1, .dims = { win.channels_out } };
        if (expect_dtype(g, n, bias, "bias B", IR_DT_I32, d) || expect_shape(g, n, bias, "bias B", &bw, d))
            return -1;
    }
    IrShape y;
    ir_infer_window_shape(&win, &y);
    ir_infer_set(g, n, 0, yz->v.dtype, &y);
    return 0;
}

/* ------------------------------------------------------- detection */

int ir_infer_roialign(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = ir_in(g, n, 0), *rois = ir_in(g, n, 1), *bi = ir_in(g, n, 2);
    char s[160];
    if (expect_float(g, n, x, "input X", d) || expect_dtype(g, n, rois, "rois", x->v.dtype, d) ||
        expect_dtype(g, n, bi, "batch_indices", IR_DT_I64, d))
        return -1;
    if (x->v.shape.rank != 4)
        return ir_node_error(g, n, d, "input X %s must have rank 4 (N, C, H, W)", shape_s(&x->v.shape, s, sizeof s));
    if (rois->v.shape.rank != 2 || rois->v.shape.dims[1] != 4)
        return ir_node_error(g, n, d, "rois %s must have shape [num_rois, 4]", shape_s(&rois->v.shape, s, sizeof s));
    int64_t nr = rois->v.shape.dims[0];
    IrShape bw = { .rank = 1, .dims = { nr } };
    if (expect_shape(g, n, bi, "batch_indices", &bw, d))
        return -1;
    for (int64_t i = 0; bi->v.data && i < nr; i++) {
        int64_t v = ir_load_i64(bi->v.dtype, bi->v.data, i);
        if (v < 0 || v >= x->v.shape.dims[0])
            return ir_node_error(g, n, d, "batch_indices[%lld] = %lld is outside [0, %lld)", (long long)i,
                                 (long long)v, (long long)x->v.shape.dims[0]);
    }
    int64_t oh = ir_attr_int(n, IR_A_output_height), ow = ir_attr_int(n, IR_A_output_width);
    if (oh <= 0 || ow <= 0)
        return ir_node_error(g, n, d, "output_height and output_width must be positive, got %lld and %lld",
                             (long long)oh, (long long)ow);
    if (ir_attr_int(n, IR_A_sampling_ratio) < 0)
        return ir_node_error(g, n, d, "sampling_ratio must be non-negative, got %lld",
                             (long long)ir_attr_int(n, IR_A_sampling_ratio));
    const char *mode = ir_attr_str(n, IR_A_mode), *ctm = ir_attr_str(n, IR_A_coordinate_transformation_mode);
    if (strcmp(mode, "avg") && strcmp(mode, "max"))
        return ir_node_error(g, n, d, "unknown mode '%s' (expected avg or max)", mode);
    if (strcmp(ctm, "half_pixel") && strcmp(ctm, "output_half_pixel"))
        return ir_node_error(g, n, d, "unknown coordinate_transformation_mode '%s' (expected half_pixel or "
                             "output_half_pixel)", ctm);
    IrShape y = { .rank = 4, .dims = { nr, x->v.shape.dims[1], oh, ow } };
    ir_infer_set(g, n, 0, x->v.dtype, &y);
    return 0;
}

int ir_infer_deformconv(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = ir_in(g, n, 0), *w = ir_in(g, n, 1), *off = ir_in(g, n, 2), *b = ir_in(g, n, 3);
    const IrTensor *mask = ir_in(g, n, 4);
    IrWindow win;
    if (expect_float(g, n, x, "input X", d) || expect_dtype(g, n, w, "weight W", x->v.dtype, d) ||
        expect_dtype(g, n, off, "offset", x->v.dtype, d) || ir_window(g, n, &x->v.shape, &w->v.shape, &win, d))
        return -1;
    int64_t og = ir_attr_int(n, IR_A_offset_group), taps = 1;
    if (og <= 0 || win.channels_in % og)
        return ir_node_error(g, n, d, "offset_group %lld must be positive and divide the %lld input channels",
                             (long long)og, (long long)win.channels_in);
    for (int i = 0; i < win.rank; i++)
        taps *= win.kernel[i];
    IrShape want;
    ir_infer_window_shape(&win, &want);
    int64_t ogt;
    if (util_mul_overflow_i64(og, taps, &ogt) || util_mul_overflow_i64(ogt, win.rank, &want.dims[1]))
        return ir_node_error(g, n, d, "offset channel count overflows");
    if (expect_shape(g, n, off, "offset", &want, d))
        return -1;
    if (b) {
        IrShape bw = { .rank = 1, .dims = { win.channels_out } };
        if (expect_dtype(g, n, b, "bias B", x->v.dtype, d) || expect_shape(g, n, b, "bias B", &bw, d))
            return -1;
    }
    if (mask) {
        want.dims[1] = ogt;
        if (expect_dtype(g, n, mask, "mask", x->v.dtype, d) || expect_shape(g, n, mask, "mask", &want, d))
            return -1;
    }
    IrShape y;
    ir_infer_window_shape(&win, &y);
    ir_infer_set(g, n, 0, x->v.dtype, &y);
    return 0;
}

typedef struct NmsCand {
    float score;
    int64_t box;
} NmsCand;

static int nms_cmp(const void *pa, const void *pb)
{
    const NmsCand *a = pa, *b = pb;
    int na = a->score != a->score, nb = b->score != b->score;      /* NaN scores sort last */
    if (na != nb)
        return na - nb;
    if (!na && a->score != b->score)
        return a->score > b->score ? -1 : 1;            /* higher score first */
    return a->box < b->box ? -1 : a->box > b->box;      /* then lower index */
}

/* Corners (y1, x1, y2, x2 with y1 <= y2, x1 <= x2) of box k of batch bt. */
static void nms_box(const IrArray *boxes, int64_t base, int center, float c[4])
{
    float v[4];
    for (int i = 0; i < 4; i++)
        v[i] = (float)ir_load_f64(boxes->dtype, boxes->data, base + i);
    if (center) {                                       /* [x_center, y_center, width, height] */
        c[0] = v[1] - v[3] / 2;
        c[2] = v[1] + v[3] / 2;
        c[1] = v[0] - v[2] / 2;
        c[3] = v[0] + v[2] / 2;
    } else {                                            /* [y1, x1, y2, x2], any diagonal */
        c[0] = v[0] < v[2] ? v[0] : v[2];
        c[2] = v[0] < v[2] ? v[2] : v[0];
        c[1] = v[1] < v[3] ? v[1] : v[3];
        c[3] = v[1] < v[3] ? v[3] : v[1];
    }
}

/* IoU(a, b) > threshold, computed in float like onnxruntime. */
static int nms_suppresses(const float a[4], const float b[4], float thr)
{
    float iy1 = a[0] > b[0] ? a[0] : b[0], iy2 = a[2] < b[2] ? a[2] : b[2];
    float ix1 = a[1] > b[1] ? a[1] : b[1], ix2 = a[3] < b[3] ? a[3] : b[3];
    if (ix2 <= ix1 || iy2 <= iy1)
        return 0;
    float inter = (ix2 - ix1) * (iy2 - iy1);
    float area_a = (a[2] - a[0]) * (a[3] - a[1]), area_b = (b[2] - b[0]) * (b[3] - b[1]);
    float uni = area_a + area_b - inter;
    if (inter <= 0 || area_a <= 0 || area_b <= 0 || uni <= 0)
        return 0;
    return inter / uni > thr;
}

int64_t ir_nms(const IrArray *boxes, const IrArray *scores, int64_t max_per_class, double iou_threshold,
               const double *score_threshold, int center_point_box, int64_t *sel)
{
    int64_t nb = boxes->shape.dims[0], nbox = boxes->shape.dims[1], nc = scores->shape.dims[1], count = 0;
    if (max_per_class <= 0 || nbox == 0)
        return 0;
    NmsCand *cand = malloc((size_t)nbox * sizeof *cand);
    float(*corner)[4] = malloc((size_t)nbox * sizeof *corner);
    int64_t *kept = malloc((size_t)nbox * sizeof *kept);
    if (!cand || !corner || !kept) {
        free(cand);
        free(corner);
        free(kept);
        return -1;
    }
    float thr = (float)iou_threshold;
    for (int64_t bt = 0; bt < nb; bt++) {
        for (int64_t k = 0; k < nbox; k++)
            nms_box(boxes, (bt * nbox + k) * 4, center_point_box, corner[k]);
        for (int64_t c = 0; c < nc; c++) {
            int64_t ncand = 0, nk = 0;
            for (int64_t k = 0; k < nbox; k++) {
                float s = (float)ir_load_f64(scores->dtype, scores->data, (bt * nc + c) * nbox + k);
                if (!score_threshold || s > (float)*score_threshold)
                    cand[ncand++] = (NmsCand){ s, k };
            }
            qsort(cand, (size_t)ncand, sizeof *cand, nms_cmp);
            for (int64_t i = 0; i < ncand && nk < max_per_class; i++) {
                int keep = 1;
                for (int64_t j = 0; j < nk && keep; j++)
                    keep = !nms_suppresses(corner[kept[j]], corner[cand[i].box], thr);
                if (!keep)
                    continue;
                kept[nk++] = cand[i].box;
                if (sel) {
                    sel[count * 3] = bt;
                    sel[count * 3 + 1] = c;
                    sel[count * 3 + 2] = cand[i].box;
                }
                count++;
            }
        }
    }
    free(cand);
    free(corner);
    free(kept);
    return count;
}

int ir_infer_nms(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *boxes = ir_in(g, n, 0), *scores = ir_in(g, n, 1);
    char s[160], t[160];
    if (expect_float(g, n, boxes, "boxes", d) || expect_float(g, n, scores, "scores", d))
        return -1;
    const IrShape *bs = &boxes->v.shape, *ss = &scores->v.shape;
    if (bs->rank != 3 || bs->dims[2] != 4)
        return ir_node_error(g, n, d, "boxes %s must have shape [batches, boxes, 4]", shape_s(bs, s, sizeof s));
    if (ss->rank != 3 || ss->dims[0] != bs->dims[0] || ss->dims[2] != bs->dims[1])
        return ir_node_error(g, n, d, "scores %s must have shape [batches, classes, boxes] matching boxes %s",
                             shape_s(ss, s, sizeof s), shape_s(bs, t, sizeof t));
    int64_t cpb = ir_attr_int(n, IR_A_center_point_box);
    if (cpb != 0 && cpb != 1)
        return ir_node_error(g, n, d, "center_point_box must be 0 or 1, got %lld", (long long)cpb);
    static const char *const what[] = { NULL, NULL, "max_output_boxes_per_class", "iou_threshold", "score_threshold" };
    double v[5] = { 0 };
    int have[5] = { 0 };
    for (int i = 2; i < n->n_in; i++) {
        const IrTensor *p = ir_in(g, n, i);
        if (!p)
            continue;
        if (i == 2 ? expect_dtype(g, n, p, what[i], IR_DT_I64, d) : expect_float(g, n, p, what[i], d))
            return -1;
        int64_t cnt = ir_shape_numel(&p->v.shape);
        if (cnt > 1)
            return ir_node_error(g, n, d, "%s '%s' must have one element", what[i], p->name);
        if (cnt == 1 && p->v.data) {
            have[i] = 1;
            v[i] = i == 2 ? (double)ir_load_i64(p->v.dtype, p->v.data, 0) : ir_load_f64(p->v.dtype, p->v.data, 0);
        }
    }
    for (int i = 0; i < n->n_in; i++) {
        const IrTensor *p = ir_in(g, n, i);
        if (p && !p->v.data && ir_shape_numel(&p->v.shape) > 0)
            return ir_node_error(g, n, d, "data-dependent output shape is not supported by a static compiler: the "
                                 "number of selected boxes depends on the input values: '%s' must be a constant or "
                                 "computable at compile time", p->name);
    }
    if (have[3] && (v[3] < 0 || v[3] > 1))
        return ir_node_error(g, n, d, "iou_threshold must be in [0, 1], got %g", v[3]);
    int64_t maxc = have[2] ? ir_load_i64(IR_DT_I64, ir_in(g, n, 2)->v.data, 0) : 0;
    int64_t cnt = ir_nms(&boxes->v, &scores->v, maxc, v[3], have[4] ? &v[4] : NULL, (int)cpb, NULL);
    if (cnt < 0)
        return ir_node_error(g, n, d, "out of memory");
    IrShape y = { .rank = 2, .dims = { cnt, 3 } };
    ir_infer_set(g, n, 0, IR_DT_I64, &y);
    return 0;
}
