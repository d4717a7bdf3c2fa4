/* interp/k_signal.c — signal-processing kernels: HannWindow, HammingWindow,
 * BlackmanWindow, DFT (forward / inverse, onesided, dft_length), STFT and
 * MelWeightMatrix.  Transforms are the direct O(n^2) sums in double: the
 * reference is meant to be obviously right, not fast. */
#include "interp/kernels.h"

#include <math.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

int interp_k_window(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out,
                    UtilDiag *d)
{
    (void)g; (void)in; (void)d;
    IrArray *y = out[0];
    int64_t size = y->shape.dims[0];
    double N = (double)(ir_attr_int(n, IR_A_periodic) ? size : size - 1);
    for (int64_t i = 0; i < size; i++) {
        double t = 2 * M_PI * (double)i / N, v;
        if (n->op == IR_OP_HannWindow)
            v = sin(t / 2) * sin(t / 2);
        else if (n->op == IR_OP_HammingWindow)
            v = 25.0 / 46.0 - 21.0 / 46.0 * cos(t);
        else
            v = 0.42 - 0.5 * cos(t) + 0.08 * cos(2 * t);
        if (N == 0)
            v = 1;                          /* size 1, symmetric: the single tap (as PyTorch) */
        ir_store_f64(y->dtype, y->data, i, v);
    }
    return 0;
}

/* One transform: out[k] = scale * sum_{t < cnt} in[t] * e^(sign 2 pi i k t / len),
 * k < nout.  in[t] is at x + t * xs (real, then imaginary when cplx); out[k]
 * at y + k * ys (real, imaginary). */
typedef struct Dft {
    const IrArray *x;
    IrArray *y;
    int64_t xs, ys, cnt, nout, len;
    int cplx;
    double sign, scale;
    const IrArray *w;                   /* STFT window (or NULL) */
} Dft;

static void dft_one(const Dft *p, int64_t x0, int64_t y0)
{
    for (int64_t k = 0; k < p->nout; k++) {
        double re = 0, im = 0;
        for (int64_t t = 0; t < p->cnt; t++) {
            double a = ir_load_f64(p->x->dtype, p->x->data, x0 + t * p->xs);
            double b = p->cplx ? ir_load_f64(p->x->dtype, p->x->data, x0 + t * p->xs + 1) : 0;
            if (p->w) {
                double wt = ir_load_f64(p->w->dtype, p->w->data, t);
                a *= wt;
                b *= wt;
            }
            double ang = p->sign * 2 * M_PI * (double)((k * t) % p->len) / (double)p->len;
            double c = cos(ang), s = sin(ang);
            re += a * c - b * s;
            im += a * s + b * c;
        }
        ir_store_f64(p->y->dtype, p->y->data, y0 + k * p->ys, re * p->scale);
        ir_store_f64(p->y->dtype, p->y->data, y0 + k * p->ys + 1, im * p->scale);
    }
}

int interp_k_dft(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out, UtilDiag *d)
{
    const IrArray *x = in[0];
    IrArray *y = out[0];
    int axis;
    int64_t len;
    if (ir_dft_params(g, n, x, n->n_in > 1 ? in[1] : NULL, n->n_in > 2 ? in[2] : NULL, &axis, &len, d))
        return -1;
    int inverse = ir_attr_int(n, IR_A_inverse) != 0, r = x->shape.rank;
    int64_t xst[IR_MAX_RANK], yst[IR_MAX_RANK], idx[IR_MAX_RANK] = { 0 };
    interp_strides(&x->shape, xst);
    interp_strides(&y->shape, yst);
    Dft p = { .x = x, .y = y, .xs = xst[axis], .ys = yst[axis], .len = len, .nout = y->shape.dims[axis],
              .cplx = x->shape.dims[r - 1] == 2, .sign = inverse ? 1 : -1,
              .scale = inverse ? 1.0 / (double)len : 1.0 };
    p.cnt = x->shape.dims[axis] < len ? x->shape.dims[axis] : len;      /* zero-pad or truncate */
    IrShape outer = x->shape;                                          /* every axis but these two */
    outer.dims[axis] = 1;
    outer.dims[r - 1] = 1;
    if (ir_shape_numel(&outer) == 0)
        return 0;
    do {
        int64_t x0 = 0, y0 = 0;
        for (int i = 0; i < r; i++) {
            x0 += idx[i] * xst[i];
            y0 += idx[i] * yst[i];
        }
        dft_one(&p, x0, y0);
    } while (interp_next_index(&outer, idx));
    return 0;
}

int interp_k_stft(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out,
                  UtilDiag *d)
{
    const IrArray *x = in[0], *w = n->n_in > 2 ? in[2] : NULL;
    IrArray *y = out[0];
    int64_t step = ir_load_i64(in[1]->dtype, in[1]->data, 0), fl = 0;
    int has_fl = n->n_in > 3 && in[3];
    if (has_fl)
        fl = ir_load_i64(in[3]->dtype, in[3]->data, 0);
    IrShape o;
    if (ir_stft_params(g, n, &x->shape, step, w ? &w->shape : NULL, has_fl ? &fl : NULL, &o, d))
        return -1;
    int64_t frames = o.dims[1], bins = o.dims[2], c = x->shape.dims[2];
    fl = has_fl ? fl : w ? w->shape.dims[0] : x->shape.dims[1];
    Dft p = { .x = x, .y = y, .xs = c, .ys = 2, .cnt = fl, .nout = bins, .len = fl, .cplx = c == 2,
              .sign = -1, .scale = 1, .w = w };
    for (int64_t b = 0; b < o.dims[0]; b++)
        for (int64_t f = 0; f < frames; f++)
            dft_one(&p, (b * x->shape.dims[1] + f * step) * c, (b * frames + f) * bins * 2);
    return 0;
}

int interp_k_melweightmatrix(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out,
                             UtilDiag *d)
{
    IrArray *y = out[0];
    int64_t bins = ir_load_i64(in[0]->dtype, in[0]->data, 0), len = ir_load_i64(in[1]->dtype, in[1]->data, 0);
    int64_t rate = ir_load_i64(in[2]->dtype, in[2]->data, 0), rows = len / 2 + 1;
    double lo = ir_load_f64(in[3]->dtype, in[3]->data, 0), hi = ir_load_f64(in[4]->dtype, in[4]->data, 0);
    if (bins != y->shape.dims[1] || rows != y->shape.dims[0])
        return ir_node_error(g, n, d, "num_mel_bins or dft_length differ from their compile-time values");
    if (rate <= 0 || lo < 0 || hi < lo)
        return ir_node_error(g, n, d, "sample_rate must be positive and 0 <= lower_edge_hertz <= upper_edge_hertz");
    double mlo = 2595 * log10(1 + lo / 700), mhi = 2595 * log10(1 + hi / 700);
    double step = (mhi - mlo) / (double)(bins + 2);
    int64_t edge[3];
    for (int64_t m = 0; m < bins; m++) {
        for (int k = 0; k < 3; k++) {              /* left, center, right FFT bins */
            double hz = 700 * (pow(10, ((double)(m + k) * step + mlo) / 2595) - 1);
            double e = floor((double)(len + 1) * hz / (double)rate);
            if (!(e >= 0 && e < (double)rows))                     /* NaN too */
                return ir_node_error(g, n, d, "upper_edge_hertz maps beyond the %lld spectrogram bins",
                                     (long long)rows);
            edge[k] = (int64_t)e;
        }
        if (edge[1] == edge[0])
            ir_store_f64(y->dtype, y->data, edge[1] * bins + m, 1);
        for (int64_t j = edge[0]; j <= edge[1] && edge[1] > edge[0]; j++)
            ir_store_f64(y->dtype, y->data, j * bins + m, (double)(j - edge[0]) / (double)(edge[1] - edge[0]));
        for (int64_t j = edge[1]; j < edge[2]; j++)
            ir_store_f64(y->dtype, y->data, j * bins + m, (double)(edge[2] - j) / (double)(edge[2] - edge[1]));
    }
    return 0;
}
