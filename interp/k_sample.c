/* interp/k_sample.c — resampling and spatial-layout kernels: GridSample
 * (nearest / linear / cubic, zeros / border / reflection padding, any number
 * of spatial axes for nearest and linear), AffineGrid (2-D and 3-D),
 * Col2Im (N-D), MaxUnpool and CenterCropPad.  Arithmetic in double. */
#include "interp/kernels.h"

#include <math.h>
#include <string.h>

/* ---- GridSample ---------------------------------------------------------- */

typedef struct GsCtx {
    int sp, pad, align;
    const int64_t *len;                 /* spatial sizes of the input */
    const IrArray *x;
    int64_t base;                       /* flat offset of x[n, c] */
    int64_t st[IR_MAX_RANK];            /* strides of the spatial axes */
} GsCtx;

/* Folds v into [lo, hi] by reflecting at the borders (PyTorch's rule). */
static double gs_reflect(double v, double lo, double hi)
{
    double rng = hi - lo;
    if (rng <= 0)
        return lo;
    if (v < lo || v > hi) {
        double dx = v < lo ? lo - v : v - hi;
        double k = floor(dx / rng), r = dx - k * rng;
        int even = fmod(k, 2.0) == 0;
        v = v < lo ? (even ? lo + r : hi - r) : (even ? hi - r : lo + r);
    }
    return v;
}

static double gs_lo(const GsCtx *c) { return c->align ? 0.0 : -0.5; }
static double gs_hi(const GsCtx *c, int i) { return c->align ? (double)c->len[i] - 1 : (double)c->len[i] - 0.5; }

/* Index actually read for integer position p on spatial axis i; -1 = zero. */
static int64_t gs_index(const GsCtx *c, int i, int64_t p)
{
    int64_t n = c->len[i];
    if (c->pad == 0 || n <= 0)                  /* (an empty axis has nothing to clamp to: zero) */
        return p >= 0 && p < n ? p : -1;
    if (c->pad == 2)
        p = (int64_t)gs_reflect((double)p, gs_lo(c), gs_hi(c, i));
    return p < 0 ? 0 : p >= n ? n - 1 : p;
}

/* x[n, c] at integer position p (per axis), after padding. */
static double gs_pixel(const GsCtx *c, const int64_t *p)
{
    int64_t off = c->base;
    for (int i = 0; i < c->sp; i++) {
        int64_t q = gs_index(c, i, p[i]);
        if (q < 0)
            return 0.0;
        off += q * c->st[i];
    }
    return ir_load_f64(c->x->dtype, c->x->data, off);
}

static void cubic_coeffs(double t, double *w)
{
    const double a = -0.75;
    double x;
    x = t + 1; w[0] = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
    x = t;     w[1] = ((a + 2) * x - (a + 3)) * x * x + 1;
    x = 1 - t; w[2] = ((a + 2) * x - (a + 3)) * x * x + 1;
    x = 2 - t; w[3] = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
}

/* Value at continuous position pos (per axis, input pixel units). */
static double gs_sample(const GsCtx *c, int mode, const double *pos)
{
    int64_t p[IR_MAX_RANK];
    if (mode == 0) {
        for (int i = 0; i < c->sp; i++)
            p[i] = (int64_t)pos[i];
        return gs_pixel(c, p);
    }
    int taps = mode == 1 ? 2 : 4, first = mode == 1 ? 0 : -1;
    double w[IR_MAX_RANK][4];
    int64_t p0[IR_MAX_RANK], k[IR_MAX_RANK] = { 0 };
    for (int i = 0; i < c->sp; i++) {
        p0[i] = (int64_t)floor(pos[i]);
        double t = pos[i] - (double)p0[i];
        if (mode == 1) {
            w[i][0] = 1 - t;
            w[i][1] = t;
        } else {
            cubic_coeffs(t, w[i]);
        }
    }
    double acc = 0;
    IrShape taps_shape = { .rank = c->sp };
    for (int i = 0; i < c->sp; i++)
        taps_shape.dims[i] = taps;
    do {
        double wt = 1;
        for (int i = 0; i < c->sp; i++) {
            p[i] = p0[i] + first + k[i];
            wt *= w[i][k[i]];
        }
        acc += wt * gs_pixel(c, p);
    } while (interp_next_index(&taps_shape, k));
    return acc;
}

int interp_k_gridsample(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out,
                        UtilDiag *d)
{
    const IrArray *x = in[0], *grid = in[1];
    IrArray *y = out[0];
    GsCtx c = { .sp = x->shape.rank - 2, .align = ir_attr_int(n, IR_A_align_corners) != 0,
                .len = &x->shape.dims[2], .x = x };
    int mode;
    if (ir_gridsample_modes(g, n, &mode, &c.pad, d))
        return -1;
    int64_t xst[IR_MAX_RANK], idx[IR_MAX_RANK] = { 0 }, cnt = ir_array_numel(y), gst[IR_MAX_RANK];
    interp_strides(&x->shape, xst);
    interp_strides(&grid->shape, gst);
    for (int i = 0; i < c.sp; i++)
        c.st[i] = xst[i + 2];
    for (int64_t o = 0; o < cnt; o++, interp_next_index(&y->shape, idx)) {
        double pos[IR_MAX_RANK];
        int64_t goff = idx[0] * gst[0];
        for (int i = 0; i < c.sp; i++)
            goff += idx[i + 2] * gst[i + 1];
        for (int i = 0; i < c.sp; i++) {
            /* grid's last axis lists coordinates innermost first (x, y, z) */
            double v = ir_load_f64(grid->dtype, grid->data, goff + c.sp - 1 - i), len = (double)c.len[i];
            v = c.align ? (v + 1) / 2 * (len - 1) : ((v + 1) * len - 1) / 2;
            if (mode == 0)
                v = nearbyint(v);                           /* ties to even */
            if (v < gs_lo(&c) || v > gs_hi(&c, i)) {
                if (c.pad == 1)
                    v = v < 0 ? 0 : v > len - 1 ? len - 1 : v;
                else if (c.pad == 2)
                    v = gs_reflect(v, gs_lo(&c), gs_hi(&c, i));
            }
            if (!isfinite(v) || fabs(v) > 1e15)
                v = -2;                                     /* far outside: reads padding */
            pos[i] = v;
        }
        c.base = idx[0] * xst[0] + idx[1] * xst[1];
        ir_store_f64(y->dtype, y->data, o, gs_sample(&c, mode, pos));
    }
    return 0;
}

/* ---- AffineGrid ---------------------------------------------------------- */

int interp_k_affinegrid(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out,
                        UtilDiag *d)
{
    (void)g; (void)d;
    const IrArray *th = in[0];
    IrArray *y = out[0];
    int sp = y->shape.rank - 2, align = ir_attr_int(n, IR_A_align_corners) != 0;
    IrShape pts = { .rank = sp + 1 };                       /* [N, spatial...] */
    for (int i = 0; i <= sp; i++)
        pts.dims[i] = y->shape.dims[i];
    int64_t cnt = ir_shape_numel(&pts), idx[IR_MAX_RANK] = { 0 };
    for (int64_t p = 0; p < cnt; p++, interp_next_index(&pts, idx)) {
        double h[4];                                        /* homogeneous (x, y, [z,] 1) */
        for (int i = 0; i < sp; i++) {
            double len = (double)pts.dims[sp - i], k = (double)idx[sp - i];
            h[i] = align ? (len > 1 ? -1 + 2 * k / (len - 1) : -1) : -1 + (2 * k + 1) / len;
        }
        h[sp] = 1;
        for (int j = 0; j < sp; j++) {
            double acc = 0;
            for (int k = 0; k <= sp; k++)
                acc += ir_load_f64(th->dtype, th->data, (idx[0] * sp + j) * (sp + 1) + k) * h[k];
            ir_store_f64(y->dtype, y->data, p * sp + j, acc);
        }
    }
    return 0;
}

/* ---- Col2Im -------------------------------------------------------------- */

int interp_k_col2im(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out,
                    UtilDiag *d)
{
    const IrArray *x = in[0];
    IrArray *y = out[0];
    int sp = y->shape.rank - 2;
    int64_t img[IR_MAX_RANK], blk[IR_MAX_RANK];
    for (int i = 0; i < sp; i++) {
        img[i] = ir_load_i64(in[1]->dtype, in[1]->data, i);
        blk[i] = ir_load_i64(in[2]->dtype, in[2]->data, i);
    }
    IrColGeom c;
    if (ir_col2im_geometry(g, n, &x->shape, img, blk, sp, &c, d))
        return -1;
    IrShape kshape = { .rank = sp }, bshape = { .rank = sp };
    memcpy(kshape.dims, c.blk, sizeof(int64_t) * (size_t)sp);
    memcpy(bshape.dims, c.cnt, sizeof(int64_t) * (size_t)sp);
    int64_t plane = 1;
    for (int i = 0; i < sp; i++)
        plane *= c.img[i];
    for (int64_t b = 0; b < y->shape.dims[0]; b++)
        for (int64_t ch = 0; ch < c.channels; ch++) {
            int64_t k[IR_MAX_RANK] = { 0 };
            for (int64_t kf = 0; kf < c.kprod; kf++, interp_next_index(&kshape, k)) {
                int64_t bl[IR_MAX_RANK] = { 0 };
                int64_t row = (b * x->shape.dims[1] + ch * c.kprod + kf) * c.blocks;
                for (int64_t bf = 0; bf < c.blocks; bf++, interp_next_index(&bshape, bl)) {
                    int64_t off = 0, inside = 1;
                    for (int i = 0; i < sp; i++) {
                        int64_t p = bl[i] * c.stride[i] - c.pad[i] + k[i] * c.dil[i];
                        inside &= p >= 0 && p < c.img[i];
                        off = off * c.img[i] + p;
                    }
                    if (!inside)
                        continue;
                    off += (b * c.channels + ch) * plane;
                    ir_store_f64(y->dtype, y->data, off, ir_load_f64(y->dtype, y->data, off) +
                                                          ir_load_f64(x->dtype, x->data, row + bf));
                }
            }
        }
    return 0;
}

/* ---- MaxUnpool ----------------------------------------------------------- */

int interp_k_maxunpool(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out,
                       UtilDiag *d)
{
    const IrArray *x = in[0], *ind = in[1];
    IrArray *y = out[0];
    IrShape inf;
    if (ir_maxunpool_shape(g, n, &x->shape, &inf, d))
        return -1;
    int64_t total = ir_shape_numel(&inf), cnt = ir_array_numel(x), yst[IR_MAX_RANK];
    interp_strides(&y->shape, yst);
    size_t es = ir_dtype_size(x->dtype);
    for (int64_t i = 0; i < cnt; i++) {
        int64_t v = ir_load_i64(ind->dtype, ind->data, i), rest = v, off = 0;
        if (v < 0 || v >= total)
            return ir_node_error(g, n, d, "index %lld is out of range for the unpooled tensor of %lld elements",
                                 (long long)v, (long long)total);
        for (int k = inf.rank - 1; k >= 0; k--) {            /* unflatten in inf, place in y */
            off += (rest % inf.dims[k]) * yst[k];
            rest /= inf.dims[k];
        }
        memcpy((char *)y->data + (size_t)off * es, (const char *)x->data + (size_t)i * es, es);
    }
    return 0;
}

/* ---- CenterCropPad ------------------------------------------------------- */

int interp_k_centercroppad(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out,
                           UtilDiag *d)
{
    const IrArray *x = in[0];
    IrArray *y = out[0];
    int ax[IR_MAX_RANK];
    if (ir_centercrop_axes(g, n, x->shape.rank, ax, d) < 0)
        return -1;
    int64_t shift[IR_MAX_RANK], xst[IR_MAX_RANK], idx[IR_MAX_RANK] = { 0 }, cnt = ir_array_numel(y);
    for (int i = 0; i < x->shape.rank; i++) {
        int64_t diff = x->shape.dims[i] - y->shape.dims[i];     /* crop > 0, pad < 0 */
        shift[i] = diff >= 0 ? diff / 2 : -((-diff) / 2);
    }
    interp_strides(&x->shape, xst);
    size_t es = ir_dtype_size(x->dtype);
    for (int64_t o = 0; o < cnt; o++, interp_next_index(&y->shape, idx)) {
        int64_t off = 0;
        int inside = 1;
        for (int i = 0; i < x->shape.rank; i++) {
            int64_t p = idx[i] + shift[i];
            inside &= p >= 0 && p < x->shape.dims[i];
            off += p * xst[i];
        }
        if (inside)
            memcpy((char *)y->data + (size_t)o * es, (const char *)x->data + (size_t)off * es, es);
    }
    return 0;
}
