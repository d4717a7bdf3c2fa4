/* ir/infer_resize.c — the Resize shape rule (opset 21: roi, scales or sizes,
 * axes, keep_aspect_ratio_policy) and the geometry it shares with the
 * interpreter's kernel. */
#include "ir/infer_impl.h"

#include <math.h>
#include <string.h>

static int64_t to_dim(double v)
{
    return v > (double)IR_MAX_ELEMENTS ? IR_MAX_ELEMENTS + 1 : (int64_t)v;
}

void ir_resize_geometry(const IrShape *x, const double *scales, const int64_t *sizes, int n,
                        const int64_t *axes, int policy, double *scale, IrShape *out)
{
    *out = *x;
    for (int i = 0; i < x->rank; i++)
        scale[i] = 1.0;
    double common = policy == 1 ? INFINITY : 0.0;
    for (int k = 0; k < n; k++) {
        int a = (int)(axes ? axes[k] : k);
        if (scales) {
            scale[a] = scales[k];
            out->dims[a] = to_dim(floor((double)x->dims[a] * scales[k]));
        } else {
            double r = x->dims[a] ? (double)sizes[k] / (double)x->dims[a] : 1.0;
            scale[a] = r;
            out->dims[a] = sizes[k];
            common = policy == 1 ? fmin(common, r) : fmax(common, r);
        }
    }
    if (scales || policy == 0)
        return;
    for (int k = 0; k < n; k++) {
        int a = (int)(axes ? axes[k] : k);
        scale[a] = common;
        out->dims[a] = to_dim(rint(common * (double)x->dims[a]));   /* round half to even, as numpy */
    }
}

static int one_of(const char *s, const char *const *names)
{
    for (int i = 0; names[i]; i++)
        if (!strcmp(s, names[i]))
            return i;
    return -1;
}

static const char *const modes[] = { "nearest", "linear", "cubic", NULL };
static const char *const coords[] = { "half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
                                      "asymmetric", "tf_crop_and_resize", NULL };
static const char *const nearests[] = { "round_prefer_floor", "round_prefer_ceil", "floor", "ceil", NULL };
static const char *const policies[] = { "stretch", "not_larger", "not_smaller", NULL };

static int check_choice(IrGraph *g, IrNode *n, IrAttrKey key, const char *const *names, int *val, UtilDiag *d)
{
    const char *s = ir_attr_str(n, key);
    *val = one_of(s, names);
    if (*val < 0)
        return ir_node_error(g, n, d, "%s '%s' is not supported", ir_attr_name(key), s);
    return 0;
}

int ir_infer_resize(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = ir_in(g, n, 0);
    const IrShape *s = &x->v.shape;
    int r = s->rank, mode, coord, nearest, policy;
    if (check_choice(g, n, IR_A_mode, modes, &mode, d) ||
        check_choice(g, n, IR_A_coordinate_transformation_mode, coords, &coord, d) ||
        check_choice(g, n, IR_A_nearest_mode, nearests, &nearest, d) ||
        check_choice(g, n, IR_A_keep_aspect_ratio_policy, policies, &policy, d))
        return -1;
    if (r == 0)
        return ir_node_error(g, n, d, "cannot resize a scalar (rank 0)");
    int64_t axes[IR_MAX_RANK];
    const int64_t *ax;
    int nax = r;
    if (ir_has_attr(n, IR_A_axes)) {
        nax = ir_attr_ints(n, IR_A_axes, &ax);
        if (nax > r)
            return ir_node_error(g, n, d, "axes has %d values but the input has rank %d", nax, r);
        for (int i = 0; i < nax; i++) {
            if (ax[i] < -r || ax[i] >= r)
                return ir_node_error(g, n, d, "axes value %lld is out of range for rank %d", (long long)ax[i], r);
            axes[i] = ax[i] < 0 ? ax[i] + r : ax[i];
            for (int j = 0; j < i; j++)
                if (axes[j] == axes[i])
                    return ir_node_error(g, n, d, "axes names axis %lld more than once", (long long)axes[i]);
        }
    } else {
        for (int i = 0; i < r; i++)
            axes[i] = i;
    }
    const IrTensor *roi = ir_in(g, n, 1), *sc = ir_in(g, n, 2), *sz = ir_in(g, n, 3);
    int has_sc = sc && ir_shape_numel(&sc->v.shape) > 0, has_sz = sz && ir_shape_numel(&sz->v.shape) > 0;
    if (has_sc == has_sz)
        return ir_node_error(g, n, d, "exactly one of the scales and sizes inputs must be given");
    if (coord == 5 && roi && ir_shape_numel(&roi->v.shape) > 0) {
        double rv[2 * IR_MAX_RANK];
        int cr = ir_infer_const_floats(g, n, 1, "roi", rv, 2 * IR_MAX_RANK, d);
        if (cr < 0)
            return -1;
        if (cr != 2 * nax)
            return ir_node_error(g, n, d, "roi has %d values; %d are needed (start and end for %d axes)", cr,
                                 2 * nax, nax);
    }
    double scales[IR_MAX_RANK], scale[IR_MAX_RANK];
    int64_t sizes[IR_MAX_RANK];
    IrShape o;
    if (has_sc) {
        if (!ir_dtype_is_float(sc->v.dtype))
            return ir_node_error(g, n, d, "scales must be a float tensor, not %s", ir_dtype_name(sc->v.dtype));
        int cnt = ir_infer_const_floats(g, n, 2, "scales", scales, IR_MAX_RANK, d);
        if (cnt < 0)
            return -1;
        if (cnt != nax)
            return ir_node_error(g, n, d, "scales has %d values but %d axes are resized", cnt, nax);
        for (int i = 0; i < cnt; i++)
            if (!(scales[i] > 0) || isinf(scales[i]))
                return ir_node_error(g, n, d, "scale %g must be positive", scales[i]);
        ir_resize_geometry(s, scales, NULL, nax, axes, policy, scale, &o);
    } else {
        int cnt = ir_infer_const_ints(g, n, 3, "sizes", sizes, IR_MAX_RANK, d);
        if (cnt < 0)
            return -1;
        if (cnt != nax)
            return ir_node_error(g, n, d, "sizes has %d values but %d axes are resized", cnt, nax);
        for (int i = 0; i < cnt; i++) {
            if (sizes[i] <= 0)
                return ir_node_error(g, n, d, "size %lld must be positive", (long long)sizes[i]);
            if (s->dims[axes[i]] == 0)
                return ir_node_error(g, n, d, "cannot resize the empty axis %lld", (long long)axes[i]);
        }
        ir_resize_geometry(s, NULL, sizes, nax, axes, policy, scale, &o);
    }
    ir_infer_set(g, n, 0, x->v.dtype, &o);
    return 0;
}
