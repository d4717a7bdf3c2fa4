/* ir/infer_sample.c — shape and dtype rules of the sampling and window-geometry operators: CenterCropPad,
 * MaxUnpool, Col2Im, GridSample and AffineGrid
 * (ONNX opset 21 semantics; ir/infer_impl.h). */
#include "ir/infer_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* CenterCropPad: the normalized axes (attribute or all) into ax; count. */
int ir_centercrop_axes(const IrGraph *g, const IrNode *n, int rank, int *ax, UtilDiag *d)
{
    const int64_t *axes;
    int cnt = ir_attr_ints(n, IR_A_axes, &axes);
    if (!ir_has_attr(n, IR_A_axes)) {
        for (int i = 0; i < rank; i++)
            ax[i] = i;
        return rank;
    }
    if (cnt > rank)
        return ir_node_error(g, n, d, "axes has %d entries; the input has rank %d", cnt, rank);
    for (int i = 0; i < cnt; i++) {
        if ((ax[i] = ir_norm_axis(g, n, axes[i], rank, d)) < 0)
            return -1;
        for (int j = 0; j < i; j++)
            if (ax[j] == ax[i])
                return ir_node_error(g, n, d, "axes names axis %d more than once", ax[i]);
    }
    return cnt;
}

int ir_infer_centercroppad(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = ir_in(g, n, 0);
    int ax[IR_MAX_RANK];
    int64_t sh[IR_MAX_RANK];
    int na = ir_centercrop_axes(g, n, x->v.shape.rank, ax, d);
    if (na < 0)
        return -1;
    int cnt = ir_infer_const_ints(g, n, 1, "shape", sh, IR_MAX_RANK, d);
    if (cnt < 0)
        return -1;
    if (cnt != na)
        return ir_node_error(g, n, d, "shape has %d values for %d axes", cnt, na);
    IrShape o = x->v.shape;
    for (int i = 0; i < na; i++) {
        if (sh[i] < 0)
            return ir_node_error(g, n, d, "shape value %lld is negative", (long long)sh[i]);
        o.dims[ax[i]] = sh[i];
    }
    ir_infer_set(g, n, 0, x->v.dtype, &o);
    return 0;
}

/* MaxUnpool: the spatial geometry; inferred[] is the unpooled shape from the
 * attributes (the shape the indices address). */
int ir_maxunpool_shape(const IrGraph *g, const IrNode *n, const IrShape *x, IrShape *inferred, UtilDiag *d)
{
    int sp = x->rank - 2;
    const int64_t *k, *p, *st;
    int nk = ir_attr_ints(n, IR_A_kernel_shape, &k), np = ir_attr_ints(n, IR_A_pads, &p);
    int ns = ir_attr_ints(n, IR_A_strides, &st);
    if (sp < 1)
        return ir_node_error(g, n, d, "input must have rank >= 3 (N, C, spatial...), not %d", x->rank);
    if (nk != sp)
        return ir_node_error(g, n, d, "kernel_shape must have %d values (one per spatial axis), not %d", sp, nk);
    if (np && np != 2 * sp)
        return ir_node_error(g, n, d, "pads must have %d values, not %d", 2 * sp, np);
    if (ns && ns != sp)
        return ir_node_error(g, n, d, "strides must have %d values, not %d", sp, ns);
    *inferred = *x;
    for (int i = 0; i < sp; i++) {
        int64_t s = ns ? st[i] : 1, pb = np ? p[i] : 0, pe = np ? p[i + sp] : 0;
        if (k[i] < 1 || s < 1 || pb < 0 || pe < 0)
            return ir_node_error(g, n, d, "kernel_shape and strides must be positive and pads non-negative");
        int64_t v = (x->dims[i + 2] - 1) * s - pb - pe + k[i];
        if (v < 0 || v > IR_MAX_ELEMENTS)
            return ir_node_error(g, n, d, "the unpooled size of spatial axis %d is invalid (%lld)", i,
                                 (long long)v);
        inferred->dims[i + 2] = v;
    }
    return 0;
}

int ir_infer_maxunpool(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = ir_in(g, n, 0), *ind = ir_in(g, n, 1);
    IrShape inf, o;
    if (ir_maxunpool_shape(g, n, &x->v.shape, &inf, d))
        return -1;
    if (ind->v.dtype != IR_DT_I64 || !ir_shape_equal(&ind->v.shape, &x->v.shape))
        return ir_node_error(g, n, d, "indices '%s' must be int64 with the shape of the input", ind->name);
    o = inf;
    if (ir_infer_present(n, 2)) {
        int64_t sh[IR_MAX_RANK];
        int cnt = ir_infer_const_ints(g, n, 2, "output_shape", sh, IR_MAX_RANK, d);
        if (cnt < 0)
            return -1;
        if (cnt != x->v.shape.rank)
            return ir_node_error(g, n, d, "output_shape has %d values; the input has rank %d", cnt,
                                 x->v.shape.rank);
        for (int i = 0; i < cnt; i++) {
            if (sh[i] < inf.dims[i])
                return ir_node_error(g, n, d, "output_shape value %lld on axis %d is smaller than the unpooled "
                                     "size %lld", (long long)sh[i], i, (long long)inf.dims[i]);
            o.dims[i] = sh[i];
        }
    }
    ir_infer_set(g, n, 0, x->v.dtype, &o);
    return 0;
}

int ir_col2im_geometry(const IrGraph *g, const IrNode *n, const IrShape *x, const int64_t *img,
                       const int64_t *blk, int sp, IrColGeom *c, UtilDiag *d)
{
    const int64_t *dl, *p, *st;
    int ndl = ir_attr_ints(n, IR_A_dilations, &dl), np = ir_attr_ints(n, IR_A_pads, &p);
    int ns = ir_attr_ints(n, IR_A_strides, &st);
    if (x->rank != 3)
        return ir_node_error(g, n, d, "input must be 3-D [N, C * prod(block_shape), L], not rank %d", x->rank);
    if (sp < 1 || sp + 2 > IR_MAX_RANK)
        return ir_node_error(g, n, d, "image_shape must have 1 to %d values", IR_MAX_RANK - 2);
    if ((ndl && ndl != sp) || (ns && ns != sp) || (np && np != 2 * sp))
        return ir_node_error(g, n, d, "dilations and strides need %d values and pads %d", sp, 2 * sp);
    c->rank = sp;
    int64_t kprod = 1, blocks = 1;
    for (int i = 0; i < sp; i++) {
        c->img[i] = img[i];
        c->blk[i] = blk[i];
        c->dil[i] = ndl ? dl[i] : 1;
        c->stride[i] = ns ? st[i] : 1;
        c->pad[i] = np ? p[i] : 0;
        int64_t pe = np ? p[i + sp] : 0;
        if (img[i] < 1 || blk[i] < 1 || c->dil[i] < 1 || c->stride[i] < 1 || c->pad[i] < 0 || pe < 0)
            return ir_node_error(g, n, d, "image_shape, block_shape, dilations and strides must be positive "
                                 "and pads non-negative");
        int64_t span = c->dil[i] * (blk[i] - 1) + 1;
        c->cnt[i] = (img[i] + c->pad[i] + pe - span) / c->stride[i] + 1;
        if (img[i] + c->pad[i] + pe < span)
            return ir_node_error(g, n, d, "block_shape is larger than the padded image on axis %d", i);
        if (util_mul_overflow_i64(kprod, blk[i], &kprod) || util_mul_overflow_i64(blocks, c->cnt[i], &blocks))
            return ir_node_error(g, n, d, "block_shape or image_shape is too large");
    }
    if (x->dims[1] % kprod != 0)
        return ir_node_error(g, n, d, "input dimension 1 (%lld) is not divisible by prod(block_shape) = %lld",
                             (long long)x->dims[1], (long long)kprod);
    if (x->dims[2] != blocks)
        return ir_node_error(g, n, d, "input dimension 2 (%lld) must be the number of blocks %lld",
                             (long long)x->dims[2], (long long)blocks);
    c->channels = x->dims[1] / kprod;
    c->kprod = kprod;
    c->blocks = blocks;
    return 0;
}

int ir_infer_col2im(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = ir_in(g, n, 0);
    int64_t img[IR_MAX_RANK], blk[IR_MAX_RANK];
    int ni = ir_infer_const_ints(g, n, 1, "image_shape", img, IR_MAX_RANK - 2, d);
    if (ni < 0)
        return -1;
    int nb = ir_infer_const_ints(g, n, 2, "block_shape", blk, IR_MAX_RANK - 2, d);
    if (nb < 0)
        return -1;
    if (nb != ni)
        return ir_node_error(g, n, d, "image_shape has %d values but block_shape %d", ni, nb);
    IrColGeom c;
    if (ir_col2im_geometry(g, n, &x->v.shape, img, blk, ni, &c, d))
        return -1;
    IrShape o = { .rank = ni + 2, .dims = { x->v.shape.dims[0], c.channels } };
    for (int i = 0; i < ni; i++)
        o.dims[i + 2] = img[i];
    ir_infer_set(g, n, 0, x->v.dtype, &o);
    return 0;
}

/* GridSample mode: 0 nearest, 1 linear, 2 cubic; padding 0 zeros, 1 border,
 * 2 reflection.  -1 (with a diagnostic) on an unknown value. */
int ir_gridsample_modes(const IrGraph *g, const IrNode *n, int *mode, int *pad, UtilDiag *d)
{
    const char *m = ir_attr_str(n, IR_A_mode), *p = ir_attr_str(n, IR_A_padding_mode);
    if (!strcmp(m, "nearest"))
        *mode = 0;
    else if (!strcmp(m, "linear") || !strcmp(m, "bilinear"))
        *mode = 1;
    else if (!strcmp(m, "cubic") || !strcmp(m, "bicubic"))
        *mode = 2;
    else
        return ir_node_error(g, n, d, "mode must be \"nearest\", \"linear\" (\"bilinear\") or \"cubic\" "
                             "(\"bicubic\"), not \"%s\"", m);
    if (!strcmp(p, "zeros"))
        *pad = 0;
    else if (!strcmp(p, "border"))
        *pad = 1;
    else if (!strcmp(p, "reflection"))
        *pad = 2;
    else
        return ir_node_error(g, n, d, "padding_mode must be \"zeros\", \"border\" or \"reflection\", not \"%s\"", p);
    return 0;
}

int ir_infer_gridsample(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = ir_in(g, n, 0), *gr = ir_in(g, n, 1);
    const IrShape *s = &x->v.shape, *gs = &gr->v.shape;
    int mode, pad;
    if (ir_gridsample_modes(g, n, &mode, &pad, d) || ir_infer_need_float(g, n, 1, d))
        return -1;
    if (x->v.dtype == IR_DT_BOOL)
        return ir_node_error(g, n, d, "input '%s' must be numeric, not bool", x->name);
    int sp = s->rank - 2;
    char a[160], b[160];
    ir_shape_str(s, a, sizeof a);
    ir_shape_str(gs, b, sizeof b);
    if (sp < 1)
        return ir_node_error(g, n, d, "input %s must have rank >= 3 (N, C, spatial...)", a);
    if (gs->rank != s->rank || gs->dims[0] != s->dims[0] || gs->dims[gs->rank - 1] != sp)
        return ir_node_error(g, n, d, "grid %s must be [N, spatial..., %d] for input %s", b, sp, a);
    IrShape o = { .rank = s->rank, .dims = { s->dims[0], s->dims[1] } };
    for (int i = 0; i < sp; i++)
        o.dims[i + 2] = gs->dims[i + 1];
    ir_infer_set(g, n, 0, x->v.dtype, &o);
    return 0;
}

int ir_infer_affinegrid(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *th = ir_in(g, n, 0);
    int64_t sz[IR_MAX_RANK];
    if (ir_infer_need_float(g, n, 0, d))
        return -1;
    int cnt = ir_infer_const_ints(g, n, 1, "size", sz, IR_MAX_RANK, d);
    if (cnt < 0)
        return -1;
    if (cnt != 4 && cnt != 5)
        return ir_node_error(g, n, d, "size must have 4 values (N, C, H, W) or 5 (N, C, D, H, W), not %d", cnt);
    int sp = cnt - 2;
    const IrShape *ts = &th->v.shape;
    if (ts->rank != 3 || ts->dims[0] != sz[0] || ts->dims[1] != sp || ts->dims[2] != sp + 1)
        return ir_node_error(g, n, d, "theta '%s' must be [N, %d, %d] with N = %lld", th->name, sp, sp + 1,
                             (long long)sz[0]);
    IrShape o = { .rank = sp + 2, .dims = { sz[0] } };
    for (int i = 0; i < sp; i++) {
        if (sz[i + 2] < 0)
            return ir_node_error(g, n, d, "size value %lld is negative", (long long)sz[i + 2]);
        o.dims[i + 1] = sz[i + 2];
    }
    o.dims[sp + 1] = sp;
    ir_infer_set(g, n, 0, th->v.dtype, &o);
    return 0;
}
