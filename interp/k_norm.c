/* interp/k_norm.c — reference kernels of the normalizations:
 * BatchNormalization (inference), InstanceNormalization, LayerNormalization
 * (with its optional Mean and InvStdDev outputs) and LpNormalization.
 * Statistics are computed in double whatever stash_type says (at least as
 * precise as float32); variances are population variances. */
#include "interp/kernels.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static double ld(const IrArray *a, int64_t i) { return ir_load_f64(a->dtype, a->data, i); }

/* y[o, c, s] = x[o, c, s] * mul[c] + add[c] for the (outer, channels, inner) view of x. */
static void affine_channels(const IrArray *x, IrArray *y, int64_t outer, int64_t ch, int64_t inner,
                            const double *mul, const double *add)
{
    for (int64_t o = 0; o < outer; o++)
        for (int64_t c = 0; c < ch; c++) {
            int64_t base = (o * ch + c) * inner;
            if (x->dtype == IR_DT_F32 && y->dtype == IR_DT_F32) {
                const float *xs = (const float *)x->data + base;
                float *ys = (float *)y->data + base;
                for (int64_t s = 0; s < inner; s++)
                    ys[s] = (float)(xs[s] * mul[o * ch + c] + add[o * ch + c]);
            } else {
                for (int64_t s = 0; s < inner; s++)
                    ir_store_f64(y->dtype, y->data, base + s, ld(x, base + s) * mul[o * ch + c] + add[o * ch + c]);
            }
        }
}

static int64_t prod_dims(const IrShape *s, int from, int to)
{
    int64_t p = 1;
    for (int i = from; i < to; i++)
        p *= s->dims[i];
    return p;
}

/* Mean and 1/sqrt(var + eps) of `len` elements of x starting at base. */
static void stats(const IrArray *x, int64_t base, int64_t len, double eps, double *mean, double *inv)
{
    double s = 0.0, v = 0.0;
    for (int64_t k = 0; k < len; k++)
        s += ld(x, base + k);
    *mean = len ? s / (double)len : 0.0;
    for (int64_t k = 0; k < len; k++) {
        double t = ld(x, base + k) - *mean;
        v += t * t;
    }
    *inv = 1.0 / sqrt((len ? v / (double)len : 0.0) + eps);
}

/* Per-channel affine normalization of x viewed as [N, C, inner]:
 * y = scale[c] * (x - mean) * inv + B[c], with mean/var the BatchNormalization
 * inputs, or the statistics of each (n, c) instance for InstanceNormalization. */
static int channel_norm(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *y, UtilDiag *d)
{
    const IrArray *x = in[0];
    int64_t outer = x->shape.dims[0], ch = x->shape.dims[1], inner = prod_dims(&x->shape, 2, x->shape.rank);
    double eps = ir_attr_float(n, IR_A_epsilon);
    double *mul = malloc(((size_t)(outer * ch) + 1) * 2 * sizeof(double));
    if (!mul)
        return ir_node_error(g, n, d, "out of memory");
    double *add = mul + outer * ch;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t c = 0; c < ch; c++) {
            double mean, inv;
            if (n->op == IR_OP_BatchNormalization) {
                mean = ld(in[3], c);
                inv = 1.0 / sqrt(ld(in[4], c) + eps);
            } else {
                stats(x, (o * ch + c) * inner, inner, eps, &mean, &inv);
            }
            mul[o * ch + c] = ld(in[1], c) * inv;
            add[o * ch + c] = ld(in[2], c) - mean * mul[o * ch + c];
        }
    affine_channels(x, y, outer, ch, inner, mul, add);
    free(mul);
    return 0;
}

int interp_k_batchnorm(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out,
                       UtilDiag *d)
{
    if (ir_attr_int(n, IR_A_training_mode))
        return ir_node_error(g, n, d, "training_mode=1 is not supported (dlcc compiles inference graphs)");
    return channel_norm(g, n, in, out[0], d);
}

int interp_k_instancenorm(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out,
                          UtilDiag *d)
{
    return channel_norm(g, n, in, out[0], d);
}

/* An optional LayerNorm parameter broadcast to the normalized shape (dims
 * from axis on), expanded into `dst` (inner elements); `dflt` when absent. */
static void expand_param(const IrArray *p, const IrShape *inner_shape, int64_t inner, double dflt, double *dst)
{
    int64_t idx[IR_MAX_RANK] = { 0 };
    for (int64_t j = 0; j < inner; j++) {
        dst[j] = p ? ld(p, interp_bcast_index(&p->shape, idx, inner_shape->rank)) : dflt;
        interp_next_index(inner_shape, idx);
    }
}

int interp_k_layernorm(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out,
                       UtilDiag *d)
{
    const IrArray *x = in[0];
    IrArray *y = out[0];
    int rank = x->shape.rank;
    int64_t ax = ir_attr_int(n, IR_A_axis);
    int a = (int)(ax < 0 ? ax + rank : ax);
    int64_t outer = prod_dims(&x->shape, 0, a), inner = prod_dims(&x->shape, a, rank);
    IrShape ishape = { .rank = rank - a };
    memcpy(ishape.dims, x->shape.dims + a, (size_t)ishape.rank * sizeof(int64_t));
    double eps = ir_attr_float(n, IR_A_epsilon);
    double *sc = malloc((size_t)(inner ? inner : 1) * 2 * sizeof(double));
    if (!sc)
        return ir_node_error(g, n, d, "out of memory");
    double *bias = sc + inner;
    expand_param(n->n_in > 1 ? in[1] : NULL, &ishape, inner, 1.0, sc);
    expand_param(n->n_in > 2 ? in[2] : NULL, &ishape, inner, 0.0, bias);
    for (int64_t o = 0; o < outer; o++) {
        double mean, inv;
        stats(x, o * inner, inner, eps, &mean, &inv);
        for (int64_t j = 0; j < inner; j++)
            ir_store_f64(y->dtype, y->data, o * inner + j, (ld(x, o * inner + j) - mean) * inv * sc[j] + bias[j]);
        if (n->n_out > 1 && out[1])
            ir_store_f64(out[1]->dtype, out[1]->data, o, mean);
        if (n->n_out > 2 && out[2])
            ir_store_f64(out[2]->dtype, out[2]->data, o, inv);
    }
    free(sc);
    return 0;
}

int interp_k_lpnorm(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out,
                    UtilDiag *d)
{
    (void)g;
    (void)d;
    const IrArray *x = in[0];
    IrArray *y = out[0];
    int rank = x->shape.rank;
    int64_t ax = ir_attr_int(n, IR_A_axis);
    int a = (int)(ax < 0 ? ax + rank : ax), p = (int)ir_attr_int(n, IR_A_p);
    int64_t outer = prod_dims(&x->shape, 0, a), len = rank ? x->shape.dims[a] : 1;
    int64_t inner = prod_dims(&x->shape, a + 1, rank);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t j = 0; j < inner; j++) {
            int64_t base = o * len * inner + j;
            double norm = 0.0;
            for (int64_t k = 0; k < len; k++) {
                double v = ld(x, base + k * inner);
                norm += p == 1 ? fabs(v) : v * v;
            }
            if (p != 1)
                norm = sqrt(norm);
            for (int64_t k = 0; k < len; k++)     /* x / 0: NaN for a zero vector, as ONNX computes */
                ir_store_f64(y->dtype, y->data, base + k * inner, ld(x, base + k * inner) / norm);
        }
    return 0;
}
