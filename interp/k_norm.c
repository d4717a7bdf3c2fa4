/* interp/k_norm.c — reference kernels of the normalizations:
 * BatchNormalization (inference), InstanceNormalization, LayerNormalization
 * (with its optional Mean and InvStdDev outputs), LpNormalization,
 * RMSNormalization, GroupNormalization (opset 21: scale and bias per
 * channel; the frontend upgrades the opset-18 per-group form), LRN and
 * MeanVarianceNormalization.  Statistics are computed in double whatever
 * stash_type says (at least as precise as float32); variances are
 * population variances. */
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

/* Mean and (biased) variance of channel c of x viewed as [N, C, inner]:
 * BatchNormalization's statistics in training mode. */
static void batch_stats(const IrArray *x, int64_t outer, int64_t ch, int64_t inner, int64_t c, double *mean,
                        double *var)
{
    double s = 0.0, v = 0.0, cnt = (double)(outer * inner);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t k = 0; k < inner; k++)
            s += ld(x, (o * ch + c) * inner + k);
    *mean = cnt > 0 ? s / cnt : 0.0;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t k = 0; k < inner; k++) {
            double t = ld(x, (o * ch + c) * inner + k) - *mean;
            v += t * t;
        }
    *var = cnt > 0 ? v / cnt : 0.0;
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
            if (n->op == IR_OP_BatchNormalization && ir_attr_int(n, IR_A_training_mode)) {
                batch_stats(x, outer, ch, inner, c, &mean, &inv);
                inv = 1.0 / sqrt(inv + eps);
            } else if (n->op == IR_OP_BatchNormalization) {
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
    if (channel_norm(g, n, in, out[0], d))
        return -1;
    /* training mode: running statistics = input * momentum + the batch's * (1 - momentum) */
    const IrArray *x = in[0];
    int64_t outer = x->shape.dims[0], ch = x->shape.dims[1], inner = prod_dims(&x->shape, 2, x->shape.rank);
    double mom = ir_attr_float(n, IR_A_momentum);
    for (int k = 1; k < n->n_out && k < 3; k++)
        for (int64_t c = 0; out[k] && c < ch; c++) {
            double mean, var;
            batch_stats(x, outer, ch, inner, c, &mean, &var);
            ir_store_f64(out[k]->dtype, out[k]->data, c, ld(in[2 + k], c) * mom + (k == 1 ? mean : var) * (1 - mom));
        }
    return 0;
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

/* Statistics over the axes marked in `red`: for every element of x, its
 * statistics slot is its index with the reduced dims zeroed (shape st).
 * mean[slot] and var[slot] get the mean and the population variance. */
static int moments(const IrArray *x, const int *red, IrShape *st, double **mean, double **var)
{
    *st = x->shape;
    for (int i = 0; i < st->rank; i++)
        if (red[i])
            st->dims[i] = 1;
    int64_t ns = ir_shape_numel(st), nx = ir_array_numel(x), cnt = ns ? nx / ns : 0;
    *mean = calloc((size_t)ns + 1, sizeof(double));
    *var = calloc((size_t)ns + 1, sizeof(double));
    if (!*mean || !*var) {
        free(*mean);
        free(*var);
        return -1;
    }
    int64_t idx[IR_MAX_RANK] = { 0 };
    for (int pass = 0; pass < 2 && nx > 0; pass++) {
        memset(idx, 0, sizeof idx);
        int64_t i = 0;
        do {
            int64_t s = interp_bcast_index(st, idx, x->shape.rank);
            double v = ld(x, i++);
            if (pass == 0)
                (*mean)[s] += v;
            else
                (*var)[s] += (v - (*mean)[s]) * (v - (*mean)[s]);
        } while (interp_next_index(&x->shape, idx));
        for (int64_t s = 0; s < ns; s++)
            (pass == 0 ? *mean : *var)[s] /= (double)(cnt ? cnt : 1);
    }
    return 0;
}

int interp_k_rmsnorm(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out,
                     UtilDiag *d)
{
    const IrArray *x = in[0], *sc = in[1];
    int rank = x->shape.rank, a = (int)ir_attr_int(n, IR_A_axis);
    if (a < 0)
        a += rank;
    int64_t inner = 1, nx = ir_array_numel(x);
    for (int i = a; i < rank; i++)
        inner *= x->shape.dims[i];
    double eps = ir_attr_float(n, IR_A_epsilon);
    int64_t idx[IR_MAX_RANK] = { 0 };
    (void)g;
    (void)d;
    for (int64_t o = 0; o < (inner ? nx / inner : 0); o++) {
        double ms = 0.0;
        for (int64_t k = 0; k < inner; k++)
            ms += ld(x, o * inner + k) * ld(x, o * inner + k);
        double inv = 1.0 / sqrt(ms / (double)inner + eps);
        for (int64_t k = 0; k < inner; k++) {
            double w = ld(sc, interp_bcast_index(&sc->shape, idx, rank));
            ir_store_f64(out[0]->dtype, out[0]->data, o * inner + k, ld(x, o * inner + k) * inv * w);
            interp_next_index(&x->shape, idx);
        }
    }
    return 0;
}

int interp_k_groupnorm(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out,
                       UtilDiag *d)
{
    const IrArray *x = in[0];
    int64_t nb = x->shape.dims[0], c = x->shape.dims[1], ng = ir_attr_int(n, IR_A_num_groups), sp = 1;
    for (int i = 2; i < x->shape.rank; i++)
        sp *= x->shape.dims[i];
    /* view x as [N, G, C/G * spatial]: the statistics are those of each (n, group) row */
    IrArray v = *x;
    v.shape = (IrShape){ .rank = 3, .dims = { nb, ng, c / ng * sp } };
    IrShape st;
    double *mean, *var;
    if (moments(&v, (const int[]){ 0, 0, 1 }, &st, &mean, &var))
        return ir_node_error(g, n, d, "out of memory");
    double eps = ir_attr_float(n, IR_A_epsilon);
    for (int64_t b = 0; b < nb; b++)
        for (int64_t ch = 0; ch < c; ch++) {
            int64_t grp = b * ng + ch / (c / ng);
            double inv = 1.0 / sqrt(var[grp] + eps), w = ld(in[1], ch), bias = ld(in[2], ch);
            for (int64_t s = 0, base = (b * c + ch) * sp; s < sp; s++)
                ir_store_f64(out[0]->dtype, out[0]->data, base + s, (ld(x, base + s) - mean[grp]) * inv * w + bias);
        }
    free(mean);
    free(var);
    return 0;
}

int interp_k_lrn(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out, UtilDiag *d)
{
    const IrArray *x = in[0];
    int64_t nb = x->shape.dims[0], c = x->shape.dims[1], sp = 1, size = ir_attr_int(n, IR_A_size);
    for (int i = 2; i < x->shape.rank; i++)
        sp *= x->shape.dims[i];
    double alpha = ir_attr_float(n, IR_A_alpha), beta = ir_attr_float(n, IR_A_beta);
    double bias = ir_attr_float(n, IR_A_bias);
    int64_t lo = (size - 1) / 2, hi = size / 2;             /* floor((size-1)/2), ceil((size-1)/2) */
    (void)g;
    (void)d;
    for (int64_t b = 0; b < nb; b++)
        for (int64_t ch = 0; ch < c; ch++)
            for (int64_t s = 0; s < sp; s++) {
                double sq = 0.0;
                for (int64_t k = ch - lo < 0 ? 0 : ch - lo; k <= ch + hi && k < c; k++)   /* size may be huge */
                    sq += ld(x, (b * c + k) * sp + s) * ld(x, (b * c + k) * sp + s);
                int64_t i = (b * c + ch) * sp + s;
                ir_store_f64(out[0]->dtype, out[0]->data, i, ld(x, i) / pow(bias + alpha / (double)size * sq, beta));
            }
    return 0;
}

int interp_k_mvn(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out, UtilDiag *d)
{
    const IrArray *x = in[0];
    int red[IR_MAX_RANK] = { 0 }, rank = x->shape.rank;
    const int64_t *axes;
    int na = ir_attr_ints(n, IR_A_axes, &axes);
    if (!ir_has_attr(n, IR_A_axes))
        red[0] = red[2] = red[3] = 1;
    for (int i = 0; i < na; i++)
        red[axes[i] < 0 ? axes[i] + rank : axes[i]] = 1;
    IrShape st;
    double *mean, *var;
    if (moments(x, red, &st, &mean, &var))
        return ir_node_error(g, n, d, "out of memory");
    int64_t idx[IR_MAX_RANK] = { 0 }, i = 0;
    if (ir_array_numel(x) > 0)
        do {
            int64_t s = interp_bcast_index(&st, idx, rank);
            /* the ONNX function body: (x - E[x]) / (sqrt(E[x^2] - E[x]^2) + 1e-9) */
            ir_store_f64(out[0]->dtype, out[0]->data, i, (ld(x, i) - mean[s]) / (sqrt(var[s]) + 1e-9));
            i++;
        } while (interp_next_index(&x->shape, idx));
    free(mean);
    free(var);
    return 0;
}
