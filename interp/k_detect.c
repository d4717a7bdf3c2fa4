/* interp/k_detect.c — detection kernels: RoiAlign, DeformConv,
 * NonMaxSuppression (its selection is ir_nms, shared with the shape rule).
 *
 * RoiAlign follows onnxruntime (and ONNX's reference): sample points
 * outside [-1, size] contribute 0; mode=max takes the max over sample
 * points of the max of the four weighted corner values; output_half_pixel
 * forces rois to at least 1x1.
 * DeformConv gathers, per batch image, every (input channel, kernel tap,
 * output position) sample — multilinear interpolation at the offset
 * position, zero outside the input, times the mask — into a column buffer,
 * then contracts it with the weights group by group.  Any number of spatial
 * dims; geometry from ir_window like Conv. */
#include "interp/kernels.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ RoiAlign */

/* Adaptive sampling (sampling_ratio 0) of a huge roi would take forever. */
#define RA_MAX_SAMPLES (IR_ROIALIGN_MAX_SIDE * IR_ROIALIGN_MAX_SIDE)

/* Bilinear sample of plane (H x W) at (y, x) under onnxruntime's rules;
 * with `max`, the largest weighted corner instead of their sum. */
static double roi_sample(const IrArray *x, int64_t base, int64_t H, int64_t W, double y, double xx, int max)
{
    if (!(y >= -1.0 && y <= (double)H && xx >= -1.0 && xx <= (double)W) || H == 0 || W == 0)
        return 0.0;                                   /* outside, NaN, or an empty plane */
    y = y < 0 ? 0 : y;
    xx = xx < 0 ? 0 : xx;
    int64_t y0 = (int64_t)y, x0 = (int64_t)xx, y1, x1;
    if (y0 >= H - 1) {
        y0 = y1 = H - 1;
        y = (double)y0;
    } else
        y1 = y0 + 1;
    if (x0 >= W - 1) {
        x0 = x1 = W - 1;
        xx = (double)x0;
    } else
        x1 = x0 + 1;
    double ly = y - (double)y0, lx = xx - (double)x0, hy = 1 - ly, hx = 1 - lx;
    double v[4] = { hy * hx * ir_load_f64(x->dtype, x->data, base + y0 * W + x0),
                    hy * lx * ir_load_f64(x->dtype, x->data, base + y0 * W + x1),
                    ly * hx * ir_load_f64(x->dtype, x->data, base + y1 * W + x0),
                    ly * lx * ir_load_f64(x->dtype, x->data, base + y1 * W + x1) };
    if (!max)
        return v[0] + v[1] + v[2] + v[3];
    double m = v[0];
    for (int i = 1; i < 4; i++)
        m = v[i] > m ? v[i] : m;
    return m;
}

int interp_k_roialign(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out, UtilDiag *d)
{
    const IrArray *x = in[0], *rois = in[1], *bi = in[2];
    IrArray *y = out[0];
    int64_t N = x->shape.dims[0], C = x->shape.dims[1], H = x->shape.dims[2], W = x->shape.dims[3];
    int64_t R = y->shape.dims[0], OH = y->shape.dims[2], OW = y->shape.dims[3];
    int max = !strcmp(ir_attr_str(n, IR_A_mode), "max");
    int half = !strcmp(ir_attr_str(n, IR_A_coordinate_transformation_mode), "half_pixel");
    double scale = ir_attr_float(n, IR_A_spatial_scale), off = half ? 0.5 : 0.0;
    int64_t sr = ir_attr_int(n, IR_A_sampling_ratio);
    for (int64_t r = 0; r < R; r++) {
        int64_t b = ir_load_i64(bi->dtype, bi->data, r);
        if (b < 0 || b >= N)
            return ir_node_error(g, n, d, "batch_indices[%lld] = %lld is outside [0, %lld)", (long long)r,
                                 (long long)b, (long long)N);
        double c4[4];
        for (int i = 0; i < 4; i++)
            c4[i] = ir_load_f64(rois->dtype, rois->data, r * 4 + i) * scale - off;   /* x1 y1 x2 y2 */
        double rw = c4[2] - c4[0], rh = c4[3] - c4[1];
        if (!half) {
            rw = rw > 1 ? rw : 1;
            rh = rh > 1 ? rh : 1;
        }
        double bh = rh / (double)OH, bw = rw / (double)OW;
        double ghd = sr > 0 ? (double)sr : ceil(bh), gwd = sr > 0 ? (double)sr : ceil(bw);
        if (!(ghd * gwd <= (double)RA_MAX_SAMPLES))
            return ir_node_error(g, n, d, "roi %lld needs %g x %g samples per bin (at most %d in all are supported); "
                                 "set sampling_ratio", (long long)r, ghd, gwd, RA_MAX_SAMPLES);
        int64_t gh = ghd > 0 ? (int64_t)ghd : 0, gw = gwd > 0 ? (int64_t)gwd : 0;
        int64_t cnt = gh * gw > 1 ? gh * gw : 1;
        for (int64_t c = 0; c < C; c++) {
            int64_t base = (b * C + c) * H * W;
            for (int64_t ph = 0; ph < OH; ph++)
                for (int64_t pw = 0; pw < OW; pw++) {
                    double acc = 0.0;
                    int first = 1;
                    for (int64_t iy = 0; iy < gh; iy++) {
                        double yy = c4[1] + (double)ph * bh + ((double)iy + 0.5) * bh / (double)gh;
                        for (int64_t ix = 0; ix < gw; ix++) {
                            double xx = c4[0] + (double)pw * bw + ((double)ix + 0.5) * bw / (double)gw;
                            double v = roi_sample(x, base, H, W, yy, xx, max);
                            if (!max)
                                acc += v;
                            else if (first || v > acc)
                                acc = v;
                            first = 0;
                        }
                    }
                    ir_store_f64(y->dtype, y->data, ((r * C + c) * OH + ph) * OW + pw, max ? acc : acc / (double)cnt);
                }
        }
    }
    return 0;
}

/* ---------------------------------------------------------- DeformConv */

/* Multilinear interpolation of one input plane at real position pos (S
 * dims); corners outside the plane count as 0. */
static double deform_sample(const IrArray *x, int64_t base, const IrWindow *win, const double *pos)
{
    int S = win->rank;
    int64_t lo[IR_MAX_RANK];
    double fr[IR_MAX_RANK], sum = 0.0;
    for (int i = 0; i < S; i++) {
        double f = floor(pos[i]);
        if (!(f > -2.0 && f < (double)win->in[i]))       /* both corners outside (or NaN) */
            return 0.0;
        lo[i] = (int64_t)f;
        fr[i] = pos[i] - f;
    }
    for (int corner = 0; corner < (1 << S); corner++) {
        double wgt = 1.0;
        int64_t off = 0;
        int inside = 1;
        for (int i = 0; i < S && inside; i++) {
            int hi = (corner >> (S - 1 - i)) & 1;
            int64_t q = lo[i] + hi;
            inside = q >= 0 && q < win->in[i];
            wgt *= hi ? fr[i] : 1.0 - fr[i];
            off = off * win->in[i] + q;
        }
        if (inside && wgt != 0.0)
            sum += wgt * ir_load_f64(x->dtype, x->data, base + off);
    }
    return sum;
}

int interp_k_deformconv(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out, UtilDiag *d)
{
    const IrArray *x = in[0], *w = in[1], *offs = in[2];
    const IrArray *bias = n->n_in > 3 ? in[3] : NULL, *mask = n->n_in > 4 ? in[4] : NULL;
    IrArray *y = out[0];
    IrWindow win;
    if (ir_window(g, n, &x->shape, &w->shape, &win, d))
        return -1;
    int S = win.rank;
    int64_t C = win.channels_in, M = win.channels_out, G = win.group, cg = C / G, mg = M / G;
    int64_t og = ir_attr_int(n, IR_A_offset_group), cpo = C / og, taps = 1, iplane = 1, oplane = 1;
    IrShape ks = { .rank = S }, os = { .rank = S };
    for (int i = 0; i < S; i++) {
        taps *= win.kernel[i];
        iplane *= win.in[i];
        oplane *= win.out[i];
        ks.dims[i] = win.kernel[i];
        os.dims[i] = win.out[i];
    }
    double *col = malloc((size_t)(C * taps * oplane) * sizeof *col);
    if (!col)
        return ir_node_error(g, n, d, "out of memory");
    for (int64_t b = 0; b < win.batch; b++) {
        /* col[(c * taps + k) * oplane + o] = mask * x[b, c] sampled at tap k of position o */
        for (int64_t c = 0; c < C; c++) {
            int64_t gi = c / cpo, kidx[IR_MAX_RANK] = { 0 };
            for (int64_t k = 0; k < taps; k++, interp_next_index(&ks, kidx)) {
                int64_t o[IR_MAX_RANK] = { 0 };
                for (int64_t of = 0; of < oplane; of++, interp_next_index(&os, o)) {
                    double pos[IR_MAX_RANK];
                    for (int i = 0; i < S; i++) {
                        int64_t ch = ((b * og + gi) * taps + k) * S + i;
                        pos[i] = (double)(o[i] * win.stride[i] - win.pad_begin[i] + kidx[i] * win.dilation[i]) +
                                 ir_load_f64(offs->dtype, offs->data, ch * oplane + of);
                    }
                    double v = deform_sample(x, (b * C + c) * iplane, &win, pos);
                    if (mask)
                        v *= ir_load_f64(mask->dtype, mask->data, ((b * og + gi) * taps + k) * oplane + of);
                    col[(c * taps + k) * oplane + of] = v;
                }
            }
        }
        for (int64_t m = 0; m < M; m++) {
            int64_t gi = m / mg;
            for (int64_t of = 0; of < oplane; of++) {
                double acc = bias ? ir_load_f64(bias->dtype, bias->data, m) : 0.0;
                for (int64_t cc = 0; cc < cg; cc++)
                    for (int64_t k = 0; k < taps; k++)
                        acc += ir_load_f64(w->dtype, w->data, (m * cg + cc) * taps + k) *
                               col[((gi * cg + cc) * taps + k) * oplane + of];
                ir_store_f64(y->dtype, y->data, (b * M + m) * oplane + of, acc);
            }
        }
    }
    free(col);
    return 0;
}

/* ---------------------------------------------------- NonMaxSuppression */

int interp_k_nms(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out, UtilDiag *d)
{
    const IrArray *p[5] = { NULL };
    for (int i = 0; i < n->n_in && i < 5; i++)
        p[i] = in[i] && ir_array_numel(in[i]) == 1 ? in[i] : NULL;
    int64_t maxc = p[2] ? ir_load_i64(p[2]->dtype, p[2]->data, 0) : 0;
    double iou = p[3] ? ir_load_f64(p[3]->dtype, p[3]->data, 0) : 0.0;
    double st = p[4] ? ir_load_f64(p[4]->dtype, p[4]->data, 0) : 0.0;
    int64_t cnt = ir_nms(in[0], in[1], maxc, iou, p[4] ? &st : NULL, (int)ir_attr_int(n, IR_A_center_point_box),
                         NULL);
    if (cnt < 0)
        return ir_node_error(g, n, d, "out of memory");
    if (cnt != out[0]->shape.dims[0])
        return ir_node_error(g, n, d, "data-dependent output shape is not supported by a static compiler: %lld boxes "
                             "selected but the output was inferred with %lld", (long long)cnt,
                             (long long)out[0]->shape.dims[0]);
    if (ir_nms(in[0], in[1], maxc, iou, p[4] ? &st : NULL, (int)ir_attr_int(n, IR_A_center_point_box),
               out[0]->data) < 0)
        return ir_node_error(g, n, d, "out of memory");
    return 0;
}
