/* ir/infer_nn.c — shape rules of convolution and pooling, and the window
 * geometry (ir_window) their kernels share.
 *
 * Output sizes per spatial dim (dk = (kernel - 1) * dilation + 1):
 *   explicit pads / VALID (pads 0): floor((in + pb + pe - dk) / s) + 1, or with
 *     ceil_mode (pools) ceil(...) + 1, minus one when that last window would
 *     start in the right padding ((out - 1) * s >= in + pb), as PyTorch and
 *     onnxruntime do;
 *   SAME_UPPER / SAME_LOWER: ceil(in / s), total padding
 *     max(0, (out - 1) * s + dk - in), the odd one at the end / the beginning;
 *   ConvTranspose: s * (in - 1) + output_padding + dk - pb - pe; with
 *     output_shape (or SAME_*, out = in * s) the total padding
 *     s * (in - 1) + output_padding + dk - out is split by the ONNX formula:
 *     SAME_UPPER pb = floor(total / 2), otherwise pe = floor(total / 2), the
 *     rest on the other side (a negative total extends the output, e.g. ONNX's
 *     test_convtranspose_output_shape). */
#include "ir/infer_impl.h"

#include <stdio.h>
#include <string.h>

typedef enum { PAD_NOTSET, PAD_SAME_UPPER, PAD_SAME_LOWER, PAD_VALID } AutoPad;

/* Checked arithmetic: the first overflow sets *ovf, later results are junk. */
static int64_t cadd(int *ovf, int64_t a, int64_t b)
{
    int64_t r;
    if (util_add_overflow_i64(a, b, &r)) {
        *ovf = 1;
        return 0;
    }
    return r;
}

static int64_t cmul(int *ovf, int64_t a, int64_t b)
{
    int64_t r;
    if (util_mul_overflow_i64(a, b, &r)) {
        *ovf = 1;
        return 0;
    }
    return r;
}

static int64_t floor_div(int64_t a, int64_t b)    /* b > 0 */
{
    int64_t q = a / b;
    return (a % b != 0 && a < 0) ? q - 1 : q;
}

static void ints_str(const int64_t *v, int n, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = 0;
    for (int i = 0; i < n && len + 24 < cap; i++)
        len += (size_t)snprintf(buf + len, cap - len, "%s%lld", i ? "," : "[", (long long)v[i]);
    snprintf(buf + len, cap - len, "%s", n ? "]" : "[]");
}

/* Reads an INTS attribute of exactly `want` values, each >= min, into v;
 * fills `def` when absent.  `what` names it in errors. */
static int read_ints(const IrGraph *g, const IrNode *n, IrAttrKey key, int want, int64_t min, int64_t def,
                     int64_t *v, UtilDiag *d)
{
    const int64_t *a;
    int cnt = ir_attr_ints(n, key, &a);
    if (!ir_has_attr(n, key)) {
        for (int i = 0; i < want; i++)
            v[i] = def;
        return 0;
    }
    if (cnt != want)
        return ir_node_error(g, n, d, "%s has %d values; expected %d for %d spatial dims", ir_attr_name(key), cnt,
                             want, key == IR_A_pads ? want / 2 : want);
    for (int i = 0; i < cnt; i++) {
        if (a[i] < min)
            return ir_node_error(g, n, d, "%s must be %s, got %lld", ir_attr_name(key),
                                 min > 0 ? "positive" : "non-negative", (long long)a[i]);
        v[i] = a[i];
    }
    return 0;
}

static int read_auto_pad(const IrGraph *g, const IrNode *n, AutoPad *ap, UtilDiag *d)
{
    const char *s = ir_attr_str(n, IR_A_auto_pad);
    if (ir_op_attr_kind(n->op, IR_A_auto_pad) == IR_AK_NONE) {   /* DeformConv has explicit pads only */
        *ap = PAD_NOTSET;
        return 0;
    }
    static const char *const names[] = { "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID" };
    for (int i = 0; i < 4; i++)
        if (!strcmp(s, names[i])) {
            *ap = (AutoPad)i;
            return 0;
        }
    return ir_node_error(g, n, d, "unknown auto_pad '%s' (expected NOTSET, SAME_UPPER, SAME_LOWER or VALID)", s);
}

/* Channel counts, group and kernel shape of Conv / ConvTranspose from W. */
static int read_weight(const IrGraph *g, const IrNode *n, const IrShape *x, const IrShape *w, IrWindow *win,
                       UtilDiag *d)
{
    int tr = n->op == IR_OP_ConvTranspose;
    char ws[160], xs[160];
    ir_shape_str(w, ws, sizeof ws);
    ir_shape_str(x, xs, sizeof xs);
    if (w->rank != x->rank)
        return ir_node_error(g, n, d, "weight %s has rank %d; the input %s has rank %d", ws, w->rank, xs, x->rank);
    int64_t G = ir_attr_int(n, IR_A_group);
    if (G <= 0)
        return ir_node_error(g, n, d, "group must be positive, got %lld", (long long)G);
    for (int i = 0; i < w->rank; i++)
        if (w->dims[i] <= 0)
            return ir_node_error(g, n, d, "weight %s has an empty dimension", ws);
    int64_t C = x->dims[1];
    if (C % G)
        return ir_node_error(g, n, d, "input channels %lld are not divisible by group %lld", (long long)C,
                             (long long)G);
    win->group = G;
    if (!tr) {
        int64_t M = w->dims[0];
        if (w->dims[1] * G != C)
            return ir_node_error(g, n, d, "channel mismatch: input %s has %lld channels but weight %s with group "
                                 "%lld expects %lld", xs, (long long)C, ws, (long long)G,
                                 (long long)(w->dims[1] * G));
        if (M % G)
            return ir_node_error(g, n, d, "output channels %lld are not divisible by group %lld", (long long)M,
                                 (long long)G);
        win->channels_out = M;
    } else {
        if (w->dims[0] != C)
            return ir_node_error(g, n, d, "channel mismatch: input %s has %lld channels but weight %s expects %lld",
                                 xs, (long long)C, ws, (long long)w->dims[0]);
        int ovf = 0;
        win->channels_out = cmul(&ovf, w->dims[1], G);
        if (ovf)
            return ir_node_error(g, n, d, "output channel count overflows");
    }
    const int64_t *ks;
    int nk = ir_attr_ints(n, IR_A_kernel_shape, &ks);
    if (ir_has_attr(n, IR_A_kernel_shape)) {
        int ok = nk == win->rank;
        for (int i = 0; ok && i < nk; i++)
            ok = ks[i] == w->dims[i + 2];
        if (!ok) {
            char kstr[160];
            ints_str(ks, nk, kstr, sizeof kstr);
            return ir_node_error(g, n, d, "kernel_shape %s does not match the weight %s", kstr, ws);
        }
    }
    for (int i = 0; i < win->rank; i++)
        win->kernel[i] = w->dims[i + 2];
    return 0;
}

/* Splits total padding `tot` so that SAME_UPPER puts the odd one at the end. */
static void split_pad(AutoPad ap, int64_t tot, int64_t *b, int64_t *e)
{
    int64_t half = floor_div(tot, 2);
    if (ap == PAD_SAME_UPPER) {
        *b = half;
        *e = tot - half;
    } else {
        *e = half;
        *b = tot - half;
    }
}

int ir_window(const IrGraph *g, const IrNode *n, const IrShape *x, const IrShape *w, IrWindow *win, UtilDiag *d)
{
    memset(win, 0, sizeof *win);
    char xs[160];
    ir_shape_str(x, xs, sizeof xs);
    if (x->rank < 3)
        return ir_node_error(g, n, d, "input %s must have rank >= 3 (N, C, spatial...)", xs);
    int S = x->rank - 2;
    win->rank = S;
    win->batch = x->dims[0];
    win->channels_in = x->dims[1];
    win->channels_out = x->dims[1];
    win->group = 1;
    for (int i = 0; i < S; i++) {
        win->in[i] = x->dims[i + 2];
        if (win->in[i] <= 0)
            return ir_node_error(g, n, d, "input %s has an empty spatial dimension", xs);
    }
    int tr = n->op == IR_OP_ConvTranspose;
    if (w) {
        if (read_weight(g, n, x, w, win, d))
            return -1;
    } else {
        if (!ir_has_attr(n, IR_A_kernel_shape))
            return ir_node_error(g, n, d, "kernel_shape is required");
        if (read_ints(g, n, IR_A_kernel_shape, S, 1, 1, win->kernel, d))
            return -1;
    }
    int64_t pads[2 * IR_MAX_RANK], opad[IR_MAX_RANK] = { 0 };
    AutoPad ap = PAD_NOTSET;
    if (read_ints(g, n, IR_A_strides, S, 1, 1, win->stride, d) ||
        read_ints(g, n, IR_A_dilations, S, 1, 1, win->dilation, d) ||
        read_ints(g, n, IR_A_pads, 2 * S, 0, 0, pads, d) || read_auto_pad(g, n, &ap, d))
        return -1;
    int ceil_mode = 0;
    if (n->op == IR_OP_MaxPool || n->op == IR_OP_AveragePool || n->op == IR_OP_LpPool) {
        int64_t cm = ir_attr_int(n, IR_A_ceil_mode);
        if (cm != 0 && cm != 1)
            return ir_node_error(g, n, d, "ceil_mode must be 0 or 1, got %lld", (long long)cm);
        ceil_mode = (int)cm;
    }
    const int64_t *os = NULL;
    int nos = 0;
    if (tr) {
        if (read_ints(g, n, IR_A_output_padding, S, 0, 0, opad, d))
            return -1;
        nos = ir_attr_ints(n, IR_A_output_shape, &os);
        if (ir_has_attr(n, IR_A_output_shape)) {
            if (nos != S && nos != S + 2)
                return ir_node_error(g, n, d, "output_shape has %d values; expected %d (spatial) or %d", nos, S,
                                     S + 2);
            os += nos - S;
            for (int i = 0; i < S; i++)
                if (os[i] <= 0)
                    return ir_node_error(g, n, d, "output_shape must be positive, got %lld", (long long)os[i]);
        } else
            os = NULL;
    }
    int ovf = 0;
    for (int i = 0; i < S; i++) {
        int64_t in = win->in[i], s = win->stride[i];
        int64_t dk = cadd(&ovf, cmul(&ovf, win->kernel[i] - 1, win->dilation[i]), 1);   /* dilated extent */
        int64_t pb = pads[i], pe = pads[S + i], out;
        if (ap == PAD_VALID)
            pb = pe = 0;
        if (tr) {
            /* natural size with pads = 0 */
            int64_t full = cadd(&ovf, cadd(&ovf, cmul(&ovf, s, in - 1), opad[i]), dk);
            if (os || ap == PAD_SAME_UPPER || ap == PAD_SAME_LOWER) {
                out = os ? os[i] : cmul(&ovf, in, s);
                split_pad(ap, cadd(&ovf, full, -out), &pb, &pe);
            } else
                out = cadd(&ovf, full, -cadd(&ovf, pb, pe));
        } else if (ap == PAD_SAME_UPPER || ap == PAD_SAME_LOWER) {
            out = cadd(&ovf, in, s - 1) / s;
            int64_t tot = cadd(&ovf, cadd(&ovf, cmul(&ovf, out - 1, s), dk), -in);
            split_pad(ap, tot > 0 ? tot : 0, &pb, &pe);
        } else {
            int64_t span = cadd(&ovf, cadd(&ovf, in, cadd(&ovf, pb, pe)), -dk);
            if (!ovf && span < 0)
                return ir_node_error(g, n, d, "kernel larger than padded input in spatial dim %d: dilated kernel "
                                     "extent %lld > %lld (input %lld + pads %lld + %lld)", i, (long long)dk,
                                     (long long)(in + pb + pe), (long long)in, (long long)pb, (long long)pe);
            out = (ceil_mode ? cadd(&ovf, span, s - 1) : span) / s + 1;
            /* the last window must start inside the input or the left padding */
            if (ceil_mode && out > 1 && (out - 1) * s >= in + pb)
                out--;
        }
        if (ovf)
            return ir_node_error(g, n, d, "window arithmetic overflows in spatial dim %d", i);
        if (out <= 0)
            return ir_node_error(g, n, d, "kernel larger than padded input: output size %lld in spatial dim %d",
                                 (long long)out, i);
        win->pad_begin[i] = pb;
        win->pad_end[i] = pe;
        win->out[i] = out;
    }
    return 0;
}

static int check_float(const IrGraph *g, const IrNode *n, const IrTensor *t, const char *what, int allow_i8,
                       UtilDiag *d)
{
    IrDType dt = t->v.dtype;
    if (ir_dtype_is_float(dt) || (allow_i8 && (dt == IR_DT_I8 || dt == IR_DT_U8)))
        return 0;
    return ir_node_error(g, n, d, "%s '%s' has dtype %s; %s takes %s", what, t->name, ir_dtype_name(dt),
                         ir_op_name(n->op), allow_i8 ? "float, int8 or uint8" : "float types");
}

void ir_infer_window_shape(const IrWindow *win, IrShape *y)
{
    y->rank = win->rank + 2;
    y->dims[0] = win->batch;
    y->dims[1] = win->channels_out;
    for (int i = 0; i < win->rank; i++)
        y->dims[i + 2] = win->out[i];
}

static int infer_conv_common(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = ir_in(g, n, 0), *w = ir_in(g, n, 1), *b = ir_in(g, n, 2);
    if (check_float(g, n, x, "input", 0, d))
        return -1;
    if (w->v.dtype != x->v.dtype)
        return ir_node_error(g, n, d, "weight '%s' has dtype %s but the input has %s", w->name,
                             ir_dtype_name(w->v.dtype), ir_dtype_name(x->v.dtype));
    IrWindow win;
    if (ir_window(g, n, &x->v.shape, &w->v.shape, &win, d))
        return -1;
    if (b) {
        if (b->v.dtype != x->v.dtype)
            return ir_node_error(g, n, d, "bias '%s' has dtype %s but the input has %s", b->name,
                                 ir_dtype_name(b->v.dtype), ir_dtype_name(x->v.dtype));
        if (b->v.shape.rank != 1 || b->v.shape.dims[0] != win.channels_out) {
            char bs[160];
            ir_shape_str(&b->v.shape, bs, sizeof bs);
            return ir_node_error(g, n, d, "bias '%s' has shape %s; expected [%lld] (output channels)", b->name, bs,
                                 (long long)win.channels_out);
        }
    }
    IrShape y;
    ir_infer_window_shape(&win, &y);
    ir_infer_set(g, n, 0, x->v.dtype, &y);
    return 0;
}

int ir_infer_conv(IrGraph *g, IrNode *n, UtilDiag *d)
{
    return infer_conv_common(g, n, d);
}

int ir_infer_convtranspose(IrGraph *g, IrNode *n, UtilDiag *d)
{
    return infer_conv_common(g, n, d);
}

int ir_infer_pool(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = ir_in(g, n, 0);
    if (check_float(g, n, x, "input", n->op == IR_OP_MaxPool, d))
        return -1;
    if (n->op == IR_OP_MaxPool) {
        int64_t so = ir_attr_int(n, IR_A_storage_order);
        if (so != 0 && so != 1)
            return ir_node_error(g, n, d, "storage_order must be 0 or 1, got %lld", (long long)so);
    } else if (n->op == IR_OP_AveragePool) {
        int64_t cip = ir_attr_int(n, IR_A_count_include_pad);
        if (cip != 0 && cip != 1)
            return ir_node_error(g, n, d, "count_include_pad must be 0 or 1, got %lld", (long long)cip);
    } else if (ir_attr_int(n, IR_A_p) <= 0)
        return ir_node_error(g, n, d, "p must be positive, got %lld", (long long)ir_attr_int(n, IR_A_p));
    IrWindow win;
    if (ir_window(g, n, &x->v.shape, NULL, &win, d))
        return -1;
    IrShape y;
    ir_infer_window_shape(&win, &y);
    ir_infer_set(g, n, 0, x->v.dtype, &y);
    ir_infer_set(g, n, 1, IR_DT_I64, &y);          /* MaxPool Indices */
    return 0;
}

int ir_infer_globalpool(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = ir_in(g, n, 0);
    char xs[160];
    ir_shape_str(&x->v.shape, xs, sizeof xs);
    if (check_float(g, n, x, "input", 0, d))
        return -1;
    if (x->v.shape.rank < 3)
        return ir_node_error(g, n, d, "input %s must have rank >= 3 (N, C, spatial...)", xs);
    if (n->op == IR_OP_GlobalLpPool && ir_attr_int(n, IR_A_p) <= 0)
        return ir_node_error(g, n, d, "p must be positive, got %lld", (long long)ir_attr_int(n, IR_A_p));
    IrShape y = x->v.shape;
    for (int i = 2; i < y.rank; i++) {
        if (y.dims[i] <= 0)
            return ir_node_error(g, n, d, "input %s has an empty spatial dimension", xs);
        y.dims[i] = 1;
    }
    ir_infer_set(g, n, 0, x->v.dtype, &y);
    return 0;
}
