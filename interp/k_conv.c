/* interp/k_conv.c — Conv and ConvTranspose kernels.
 *
 * Both relate a "unit-side" position u (Conv: output, ConvTranspose: input)
 * to a "strided-side" position u * stride + k * dilation - pad_begin (Conv:
 * input, ConvTranspose: output) for each kernel tap k (see IrWindow in
 * ir/ir.h).  float32 runs a direct convolution over whole rows: for each
 * (output channel, input channel, kernel tap, row) the innermost loop walks the
 * unit-side row contiguously, over the precomputed range of positions whose
 * partner lies inside the tensor, so no bounds test is left in it.  Other
 * float types take a naive per-element path accumulating in double. */
#include "interp/kernels.h"

#include <stdlib.h>
#include <string.h>

static int64_t floor_div(int64_t a, int64_t b)    /* b > 0 */
{
    int64_t q = a / b;
    return (a % b != 0 && a < 0) ? q - 1 : q;
}

/* The geometry of one direction: unit/strided spatial sizes and the valid
 * unit-side range [lo, hi) for every dim and tap. */
typedef struct ConvPlan {
    const IrWindow *win;
    int S;
    int64_t usize[IR_MAX_RANK], ssize[IR_MAX_RANK];        /* spatial dims */
    int64_t ustride[IR_MAX_RANK], sstride[IR_MAX_RANK];    /* row-major strides within a plane */
    int64_t uplane, splane, kplane;                         /* elements per plane / per kernel */
    int64_t koff[IR_MAX_RANK + 1];                          /* start of dim d's taps in lo/hi */
    int64_t *lo, *hi;
} ConvPlan;

static int plan_init(ConvPlan *p, const IrWindow *win, int transposed)
{
    memset(p, 0, sizeof *p);
    p->win = win;
    p->S = win->rank;
    p->uplane = p->splane = p->kplane = 1;
    int64_t taps = 0;
    for (int i = p->S - 1; i >= 0; i--) {
        p->usize[i] = transposed ? win->in[i] : win->out[i];
        p->ssize[i] = transposed ? win->out[i] : win->in[i];
        p->ustride[i] = p->uplane;
        p->sstride[i] = p->splane;
        p->uplane *= p->usize[i];
        p->splane *= p->ssize[i];
        p->kplane *= win->kernel[i];
    }
    for (int i = 0; i < p->S; i++) {
        p->koff[i] = taps;
        taps += win->kernel[i];
    }
    p->koff[p->S] = taps;
    p->lo = malloc((size_t)taps * sizeof(int64_t));
    p->hi = malloc((size_t)taps * sizeof(int64_t));
    if (!p->lo || !p->hi) {
        free(p->lo);
        free(p->hi);
        return -1;
    }
    for (int i = 0; i < p->S; i++)
        for (int64_t k = 0; k < win->kernel[i]; k++) {
            int64_t off = k * win->dilation[i] - win->pad_begin[i], s = win->stride[i];
            int64_t lo = -floor_div(off, s), hi = floor_div(p->ssize[i] - 1 - off, s) + 1;
            if (lo < 0)
                lo = 0;
            if (hi > p->usize[i])
                hi = p->usize[i];
            p->lo[p->koff[i] + k] = lo;
            p->hi[p->koff[i] + k] = hi > lo ? hi : lo;
        }
    return 0;
}

static void plan_free(ConvPlan *p)
{
    free(p->lo);
    free(p->hi);
}

/* Adds the contribution of one (unit plane, strided plane) pair through the
 * kernel w (kplane taps).  Conv: y = unit plane, x = strided plane;
 * ConvTranspose: x = unit plane, y = strided plane. */
static void conv_planes_f32(const ConvPlan *p, float *restrict y, const float *restrict x,
                            const float *restrict w, int transposed)
{
    const IrWindow *win = p->win;
    int L = p->S - 1;
    int64_t kL = win->kernel[L], sL = win->stride[L];
    const int64_t *loL = p->lo + p->koff[L], *hiL = p->hi + p->koff[L];
    int64_t k[IR_MAX_RANK] = { 0 }, u[IR_MAX_RANK];
    for (int64_t kf = 0; kf < p->kplane; kf += kL) {
        /* the outer unit-side dims run over the valid range of their tap */
        int empty = 0;
        for (int i = 0; i < L; i++) {
            u[i] = p->lo[p->koff[i] + k[i]];
            empty |= u[i] >= p->hi[p->koff[i] + k[i]];
        }
        while (!empty) {
            int64_t uo = 0, so = 0;
            for (int i = 0; i < L; i++) {
                uo += u[i] * p->ustride[i];
                so += (u[i] * win->stride[i] + k[i] * win->dilation[i] - win->pad_begin[i]) * p->sstride[i];
            }
            for (int64_t kl = 0; kl < kL; kl++) {
                float wv = w[kf + kl];
                int64_t off = kl * win->dilation[L] - win->pad_begin[L], lo = loL[kl], hi = hiL[kl];
                if (!transposed) {
                    float *restrict yr = y + uo;
                    const float *restrict xr = x + so;
                    if (sL == 1)
                        for (int64_t j = lo; j < hi; j++)
                            yr[j] += wv * xr[j + off];
                    else
                        for (int64_t j = lo; j < hi; j++)
                            yr[j] += wv * xr[j * sL + off];
                } else {
                    float *restrict yr = y + so;
                    const float *restrict xr = x + uo;
                    if (sL == 1)
                        for (int64_t j = lo; j < hi; j++)
                            yr[j + off] += wv * xr[j];
                    else
                        for (int64_t j = lo; j < hi; j++)
                            yr[j * sL + off] += wv * xr[j];
                }
            }
            int i = L - 1;
            for (; i >= 0; i--) {
                if (++u[i] < p->hi[p->koff[i] + k[i]])
                    break;
                u[i] = p->lo[p->koff[i] + k[i]];
            }
            if (i < 0)
                break;
        }
        for (int i = L - 1; i >= 0; i--) {
            if (++k[i] < win->kernel[i])
                break;
            k[i] = 0;
        }
    }
}

static void conv_f32(const ConvPlan *p, const IrArray *x, const IrArray *w, const IrArray *b, IrArray *y,
                     int transposed)
{
    const IrWindow *win = p->win;
    const float *xd = x->data, *wd = w->data, *bd = b ? b->data : NULL;
    float *yd = y->data;
    int64_t C = win->channels_in, M = win->channels_out, G = win->group, cg = C / G, mg = M / G;
    int64_t xplane = transposed ? p->uplane : p->splane, yplane = transposed ? p->splane : p->uplane;
    for (int64_t nb = 0; nb < win->batch; nb++)
        for (int64_t m = 0; m < M; m++) {
            float *yp = yd + (nb * M + m) * yplane;
            if (bd)
                for (int64_t i = 0; i < yplane; i++)
                    yp[i] = bd[m];
            int64_t gi = m / mg, mm = m % mg;
            for (int64_t cc = 0; cc < cg; cc++) {
                int64_t c = gi * cg + cc;
                /* Conv W: [M, C/G, k...]; ConvTranspose W: [C, M/G, k...] */
                const float *wp = wd + (transposed ? c * mg + mm : m * cg + cc) * p->kplane;
                conv_planes_f32(p, yp, xd + (nb * C + c) * xplane, wp, transposed);
            }
        }
}

/* Naive path for float16 / bfloat16 / float64: every (unit position, tap,
 * channel pair) in double. */
static int conv_generic(const ConvPlan *p, const IrArray *x, const IrArray *w, const IrArray *b, IrArray *y,
                        int transposed)
{
    const IrWindow *win = p->win;
    int64_t C = win->channels_in, M = win->channels_out, G = win->group, cg = C / G, mg = M / G;
    int64_t xplane = transposed ? p->uplane : p->splane, yplane = transposed ? p->splane : p->uplane;
    double *acc = malloc((size_t)yplane * sizeof(double));
    if (!acc)
        return -1;
    IrShape ushape = { .rank = p->S }, kshape = { .rank = p->S };
    memcpy(ushape.dims, p->usize, sizeof p->usize);
    memcpy(kshape.dims, win->kernel, sizeof win->kernel);
    for (int64_t nb = 0; nb < win->batch; nb++)
        for (int64_t m = 0; m < M; m++) {
            double bias = b ? ir_load_f64(b->dtype, b->data, m) : 0.0;
            for (int64_t i = 0; i < yplane; i++)
                acc[i] = bias;
            int64_t gi = m / mg, mm = m % mg;
            for (int64_t cc = 0; cc < cg; cc++) {
                int64_t c = gi * cg + cc, xbase = (nb * C + c) * xplane;
                int64_t wbase = (transposed ? c * mg + mm : m * cg + cc) * p->kplane;
                int64_t u[IR_MAX_RANK] = { 0 };
                for (int64_t uf = 0; uf < p->uplane; uf++, interp_next_index(&ushape, u)) {
                    int64_t k[IR_MAX_RANK] = { 0 };
                    for (int64_t kf = 0; kf < p->kplane; kf++, interp_next_index(&kshape, k)) {
                        int64_t sf = 0;
                        int inside = 1;
                        for (int i = 0; i < p->S && inside; i++) {
                            int64_t pos = u[i] * win->stride[i] + k[i] * win->dilation[i] - win->pad_begin[i];
                            inside = pos >= 0 && pos < p->ssize[i];
                            sf += pos * p->sstride[i];
                        }
                        if (!inside)
                            continue;
                        double wv = ir_load_f64(w->dtype, w->data, wbase + kf);
                        if (!transposed)
                            acc[uf] += wv * ir_load_f64(x->dtype, x->data, xbase + sf);
                        else
                            acc[sf] += wv * ir_load_f64(x->dtype, x->data, xbase + uf);
                    }
                }
            }
            for (int64_t i = 0; i < yplane; i++)
                ir_store_f64(y->dtype, y->data, (nb * M + m) * yplane + i, acc[i]);
        }
    free(acc);
    return 0;
}

static int conv_kernel(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out,
                       UtilDiag *d, int transposed)
{
    IrWindow win;
    if (ir_window(g, n, &in[0]->shape, &in[1]->shape, &win, d))
        return -1;
    ConvPlan p;
    if (plan_init(&p, &win, transposed))
        return ir_node_error(g, n, d, "out of memory");
    int rc = 0;
    const IrArray *b = n->n_in > 2 ? in[2] : NULL;
    if (in[0]->dtype == IR_DT_F32)
        conv_f32(&p, in[0], in[1], b, out[0], transposed);
    else if (conv_generic(&p, in[0], in[1], b, out[0], transposed))
        rc = ir_node_error(g, n, d, "out of memory");
    plan_free(&p);
    return rc;
}

int interp_k_conv(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out, UtilDiag *d)
{
    return conv_kernel(g, n, in, out, d, 0);
}

int interp_k_convtranspose(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out,
                           UtilDiag *d)
{
    return conv_kernel(g, n, in, out, d, 1);
}
