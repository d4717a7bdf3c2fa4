/* interp/k_resize.c — Resize (opset 21): nearest / linear / cubic, every
 * coordinate_transformation_mode, nearest_mode, keep_aspect_ratio_policy,
 * axes.  Separable: each axis gets a table of (input index, weight) taps per
 * output coordinate; an output element sums the product of its axes' taps.
 * Computes in double.  antialias=1 stretches the linear / cubic filter by
 * 1/scale when downscaling and normalizes its weights (ONNX opset 18). */
#include "interp/kernels.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct RzAxis {
    int64_t cap;         /* taps per output coordinate (table row length) */
    int64_t *idx;        /* [out_len][cap] */
    double *w;
    int64_t *ntaps;      /* per output coordinate; 0 = outside (tf_crop_and_resize) */
} RzAxis;

typedef struct RzParams {
    int mode;            /* 0 nearest, 1 linear, 2 cubic */
    const char *coord, *nearest;
    double cubic_a;
    int exclude_outside, antialias;
} RzParams;

/* Input coordinate of output coordinate o (ONNX coordinate_transformation_mode). */
static double rz_coord(const char *m, double o, double scale, int64_t lin, int64_t lout, double r0, double r1)
{
    if (!strcmp(m, "asymmetric"))
        return o / scale;
    /* align_corners and tf_crop_and_resize use the resized length scale *
     * lin, which is not a whole number for some scales: ONNX's reference
     * (and its test data) divide by that, not by the integer output size. */
    double lres = scale * (double)lin;
    if (!strcmp(m, "align_corners"))
        return lout == 1 ? 0.0 : o * (double)(lin - 1) / (lres - 1);
    if (!strcmp(m, "pytorch_half_pixel"))
        return lout > 1 ? (o + 0.5) / scale - 0.5 : 0.0;
    if (!strcmp(m, "tf_crop_and_resize"))
        return lout > 1 ? r0 * (double)(lin - 1) + o * (r1 - r0) * (double)(lin - 1) / (lres - 1)
                        : 0.5 * (r0 + r1) * (double)(lin - 1);
    if (!strcmp(m, "half_pixel_symmetric")) {
        double adj = (double)lout / (scale * (double)lin), center = (double)lin / 2;
        return center * (1 - adj) + (o + 0.5) / scale - 0.5;
    }
    return (o + 0.5) / scale - 0.5;                       /* half_pixel */
}

static double rz_nearest(const char *m, double x)
{
    if (!strcmp(m, "floor"))
        return floor(x);
    if (!strcmp(m, "ceil"))
        return ceil(x);
    if (!strcmp(m, "round_prefer_ceil"))
        return floor(x + 0.5);
    return ceil(x - 0.5);                                 /* round_prefer_floor */
}

/* Keys cubic convolution weight of the tap at distance t (|t| <= 2). */
static double rz_cubic(double a, double t)
{
    t = fabs(t);
    if (t <= 1)
        return ((a + 2) * t - (a + 3)) * t * t + 1;
    if (t < 2)
        return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a;
    return 0;
}

static int64_t clampi(int64_t v, int64_t lin) { return v < 0 ? 0 : v >= lin ? lin - 1 : v; }

/* First tap offset (relative to the left neighbour) of the filter on an axis
 * of this scale: -1 for cubic, 0 for linear; antialias widens both by
 * 1/scale when downscaling.  The filter has 2 - 2*first taps. */
static int64_t rz_first_tap(const RzParams *p, double scale)
{
    if (p->mode == 0)
        return 0;
    double support = p->mode == 1 ? 1 : 2;
    if (!p->antialias || scale >= 1)
        return p->mode == 1 ? 0 : -1;
    return (int64_t)floor(-support / scale) + 1;          /* scale >= 1/len: bounded by 2*len */
}

/* Fills the taps of one output coordinate x (input coordinates) on an axis
 * of length lin; returns the tap count (at most 2 - 2*first). */
static int64_t rz_taps(const RzParams *p, double x, int64_t lin, double scale, int64_t first, int64_t *idx,
                       double *w)
{
    double far = (double)(4 - first);                     /* beyond this, every tap is an edge tap */
    if (x < -far)
        x = -far;
    if (x > (double)lin + far)
        x = (double)lin + far;
    if (p->mode == 0) {
        idx[0] = clampi((int64_t)rz_nearest(p->nearest, x), lin);
        w[0] = 1;
        return 1;
    }
    /* taps left + first .. left + 1 - first around x, weight = filter(distance) */
    double s = p->antialias && scale < 1 ? scale : 1, sum = 0;
    int64_t left = (int64_t)floor(x), k = 0;
    for (int64_t i = first; i <= 1 - first; i++, k++) {
        int64_t j = left + i;
        double dist = s * ((double)j - x);
        w[k] = p->mode == 1 ? fmax(0.0, 1 - fabs(dist)) : rz_cubic(p->cubic_a, dist);
        if (p->exclude_outside && (j < 0 || j >= lin))
            w[k] = 0;
        idx[k] = clampi(j, lin);
        sum += w[k];
    }
    if ((p->exclude_outside || p->antialias) && sum != 0)
        for (int64_t j = 0; j < k; j++)
            w[j] /= sum;
    int64_t kept = 0;                                     /* drop zero taps: cheaper, same sum */
    for (int64_t j = 0; j < k; j++)
        if (w[j] != 0) {
            idx[kept] = idx[j];
            w[kept++] = w[j];
        }
    if (!kept) {
        w[0] = 0;
        kept = 1;
    }
    return kept;
}

static const IrArray *opt_in(const IrNode *n, const IrArray *const *in, int k)
{
    return k < n->n_in ? in[k] : NULL;
}

static void rz_free(RzAxis *ax, int r)
{
    for (int a = 0; a < r; a++) {
        free(ax[a].idx);
        free(ax[a].w);
        free(ax[a].ntaps);
    }
}

int interp_k_resize(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out,
                    UtilDiag *d)
{
    const IrArray *x = in[0];
    IrArray *y = out[0];
    int r = x->shape.rank;
    RzParams p = {
        .coord = ir_attr_str(n, IR_A_coordinate_transformation_mode),
        .nearest = ir_attr_str(n, IR_A_nearest_mode),
        .cubic_a = ir_attr_float(n, IR_A_cubic_coeff_a),
        .exclude_outside = ir_attr_int(n, IR_A_exclude_outside) != 0,
        .antialias = ir_attr_int(n, IR_A_antialias) != 0,
    };
    const char *mode = ir_attr_str(n, IR_A_mode), *pol = ir_attr_str(n, IR_A_keep_aspect_ratio_policy);
    p.mode = !strcmp(mode, "linear") ? 1 : !strcmp(mode, "cubic") ? 2 : 0;
    int policy = !strcmp(pol, "not_larger") ? 1 : !strcmp(pol, "not_smaller") ? 2 : 0;

    /* geometry: same computation as the shape rule */
    int64_t axes[IR_MAX_RANK], sizes[IR_MAX_RANK];
    double scales[IR_MAX_RANK], scale[IR_MAX_RANK], r0[IR_MAX_RANK], r1[IR_MAX_RANK];
    const int64_t *ax;
    int nax = ir_attr_ints(n, IR_A_axes, &ax);
    if (!ir_has_attr(n, IR_A_axes))
        nax = r;
    for (int i = 0; i < nax; i++)
        axes[i] = ir_has_attr(n, IR_A_axes) ? (ax[i] < 0 ? ax[i] + r : ax[i]) : i;
    const IrArray *roi = opt_in(n, in, 1), *sc = opt_in(n, in, 2), *sz = opt_in(n, in, 3);
    int use_scales = sc && ir_array_numel(sc) > 0;
    if (!use_scales && !sz)
        return ir_node_error(g, n, d, "neither scales nor sizes is given");
    for (int i = 0; i < nax; i++) {
        if (use_scales)
            scales[i] = ir_load_f64(sc->dtype, sc->data, i);
        else
            sizes[i] = ir_load_i64(sz->dtype, sz->data, i);
    }
    IrShape o;
    ir_resize_geometry(&x->shape, use_scales ? scales : NULL, use_scales ? NULL : sizes, nax, axes, policy, scale,
                       &o);
    if (!ir_shape_equal(&o, &y->shape))
        return ir_node_error(g, n, d, "the output shape does not match the resize geometry");
    for (int a = 0; a < r; a++) {
        r0[a] = 0;
        r1[a] = 1;
    }
    if (roi && ir_array_numel(roi) == 2 * nax)
        for (int i = 0; i < nax; i++) {
            r0[axes[i]] = ir_load_f64(roi->dtype, roi->data, i);
            r1[axes[i]] = ir_load_f64(roi->dtype, roi->data, nax + i);
        }

    if (ir_array_numel(y) == 0)     /* nothing to compute; an axis may still be huge */
        return 0;
    /* per-axis tap tables */
    RzAxis tab[IR_MAX_RANK];
    memset(tab, 0, sizeof tab);
    int tf = !strcmp(p.coord, "tf_crop_and_resize");
    for (int a = 0; a < r; a++) {
        int64_t lin = x->shape.dims[a], lout = y->shape.dims[a];
        int64_t first = rz_first_tap(&p, scale[a]);
        size_t cnt = (size_t)(lout ? lout : 1), cap = (size_t)(2 - 2 * first);
        tab[a].cap = (int64_t)cap;
        if (cnt > SIZE_MAX / sizeof(double) / cap) {
            rz_free(tab, a);
            return ir_node_error(g, n, d, "the resampling filter is too large");
        }
        tab[a].idx = malloc(cnt * cap * sizeof(int64_t));
        tab[a].w = malloc(cnt * cap * sizeof(double));
        tab[a].ntaps = malloc(cnt * sizeof(int64_t));
        if (!tab[a].idx || !tab[a].w || !tab[a].ntaps) {
            rz_free(tab, a + 1);
            return ir_node_error(g, n, d, "out of memory");
        }
        for (int64_t oc = 0; oc < lout; oc++) {
            double xc = rz_coord(p.coord, (double)oc, scale[a], lin, lout, r0[a], r1[a]);
            if (tf && (xc < 0 || xc > (double)(lin - 1)))
                tab[a].ntaps[oc] = 0;
            else
                tab[a].ntaps[oc] = rz_taps(&p, xc, lin, scale[a], first, tab[a].idx + oc * tab[a].cap,
                                           tab[a].w + oc * tab[a].cap);
        }
    }

    /* each output element: sum over the product of its axes' taps */
    int64_t st[IR_MAX_RANK], idx[IR_MAX_RANK] = { 0 }, total = ir_array_numel(y);
    double extrap = ir_attr_float(n, IR_A_extrapolation_value);
    interp_strides(&x->shape, st);
    for (int64_t e = 0; e < total; e++, interp_next_index(&y->shape, idx)) {
        int outside = 0;
        int64_t t[IR_MAX_RANK] = { 0 };
        for (int a = 0; a < r; a++)
            outside |= tab[a].ntaps[idx[a]] == 0;
        double acc = 0;
        if (outside)
            acc = extrap;
        else
            for (;;) {
                double w = 1;
                int64_t s = 0;
                for (int a = 0; a < r; a++) {
                    int64_t k = idx[a] * tab[a].cap + t[a];
                    w *= tab[a].w[k];
                    s += tab[a].idx[k] * st[a];
                }
                acc += w * ir_load_f64(x->dtype, x->data, s);
                int a = r - 1;
                while (a >= 0 && ++t[a] == tab[a].ntaps[idx[a]])
                    t[a--] = 0;
                if (a < 0)
                    break;
            }
        ir_store_f64(y->dtype, y->data, e, acc);
    }
    rz_free(tab, r);
    return 0;
}
