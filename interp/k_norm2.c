/* interp/k_norm2.c — reference kernels of RMSNormalization,
 * GroupNormalization (opset 21: scale and bias per channel; the frontend
 * upgrades the opset-18 per-group form), LRN, MeanVarianceNormalization and
 * Swish.  Statistics are computed in double (at least as precise as any
 * stash_type); variances are population variances. */
#include "interp/kernels.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static double ld(const IrArray *a, int64_t i) { return ir_load_f64(a->dtype, a->data, i); }

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
                for (int64_t k = ch - lo; k <= ch + hi; k++)
                    if (k >= 0 && k < c)
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

int interp_k_swish(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out, UtilDiag *d)
{
    double alpha = ir_attr_float(n, IR_A_alpha);
    (void)g;
    (void)d;
    for (int64_t i = 0, nx = ir_array_numel(in[0]); i < nx; i++) {
        double v = ld(in[0], i);
        ir_store_f64(out[0]->dtype, out[0]->data, i, v / (1.0 + exp(-alpha * v)));
    }
    return 0;
}
