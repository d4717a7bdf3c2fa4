/* ir/infer_opsB.c — shape rules of the scatter, indexing, sampling, signal and
 * bitwise operators (ScatterElements ... TensorScatter in ops.def's opsB
 * section), opset 21 semantics.  Shape operands (depth, shape, image and block
 * shapes, window sizes, DFT lengths) must be known at compile time.  Compress
 * and NonZero have value-dependent output shapes: they are supported when the
 * operand that decides the shape is known at compile time. */
#include "ir/infer_impl.h"

#include <stdio.h>
#include <string.h>

static int need_int_indices(IrGraph *g, IrNode *n, int i, UtilDiag *d)
{
    const IrTensor *t = ir_in(g, n, i);
    if (t->v.dtype != IR_DT_I64 && t->v.dtype != IR_DT_I32)
        return ir_node_error(g, n, d, "indices '%s' are %s; int32 or int64 is required", t->name,
                             ir_dtype_name(t->v.dtype));
    return 0;
}

static int need_float(IrGraph *g, IrNode *n, int i, UtilDiag *d)
{
    const IrTensor *t = ir_in(g, n, i);
    if (!ir_dtype_is_float(t->v.dtype))
        return ir_node_error(g, n, d, "input '%s' is %s; a floating-point type is required", t->name,
                             ir_dtype_name(t->v.dtype));
    return 0;
}

static int same_dtype(IrGraph *g, IrNode *n, int i, int j, UtilDiag *d)
{
    const IrTensor *a = ir_in(g, n, i), *b = ir_in(g, n, j);
    if (a->v.dtype != b->v.dtype)
        return ir_node_error(g, n, d, "input '%s' is %s but input '%s' is %s; they must match", b->name,
                             ir_dtype_name(b->v.dtype), a->name, ir_dtype_name(a->v.dtype));
    return 0;
}

/* A scalar operand known at compile time (rank 0 or one element). */
static int const_scalar(IrGraph *g, IrNode *n, int i, const char *what, int64_t *v, UtilDiag *d)
{
    const IrTensor *t = ir_in(g, n, i);
    if (!t)
        return ir_node_error(g, n, d, "the %s input is missing", what);
    if (ir_shape_numel(&t->v.shape) != 1)
        return ir_node_error(g, n, d, "the %s input '%s' must hold exactly one value", what, t->name);
    if (!t->v.data)
        return ir_node_error(g, n, d, "the %s input '%s' must be a constant or computable at compile time "
                             "(dlcc compiles static shapes)", what, t->name);
    *v = ir_load_i64(t->v.dtype, t->v.data, 0);          /* floats truncate; NaN reads 0 */
    return 0;
}

/* An optional input that is present. */
static int present(const IrNode *n, int i)
{
    return i < n->n_in && n->in[i] >= 0;
}

/* "reduction" of ScatterElements / ScatterND: 0 none, 1 add, 2 mul, 3 max, 4 min. */
int ir_scatter_reduction(const IrNode *n)
{
    if (n->op == IR_OP_Scatter)
        return 0;
    static const char *const names[] = { "none", "add", "mul", "max", "min" };
    const char *r = ir_attr_str(n, IR_A_reduction);
    for (int i = 0; i < 5; i++)
        if (!strcmp(r, names[i]))
            return i;
    return -1;
}

static int check_reduction(IrGraph *g, IrNode *n, UtilDiag *d)
{
    if (ir_scatter_reduction(n) < 0)
        return ir_node_error(g, n, d, "reduction must be \"none\", \"add\", \"mul\", \"max\" or \"min\", not \"%s\"",
                             ir_attr_str(n, IR_A_reduction));
    return 0;
}

int ir_infer_scatterelements(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = ir_in(g, n, 0), *ind = ir_in(g, n, 1), *u = ir_in(g, n, 2);
    const IrShape *s = &x->v.shape, *is = &ind->v.shape;
    if (check_reduction(g, n, d) || need_int_indices(g, n, 1, d) || same_dtype(g, n, 0, 2, d))
        return -1;
    char a[160], b[160];
    ir_shape_str(s, a, sizeof a);
    ir_shape_str(is, b, sizeof b);
    if (s->rank < 1)
        return ir_node_error(g, n, d, "data %s must have rank >= 1", a);
    int axis = ir_norm_axis(g, n, ir_attr_int(n, IR_A_axis), s->rank, d);
    if (axis < 0)
        return -1;
    if (is->rank != s->rank)
        return ir_node_error(g, n, d, "indices %s must have the rank of the data %s", b, a);
    if (!ir_shape_equal(is, &u->v.shape)) {
        char c[160];
        ir_shape_str(&u->v.shape, c, sizeof c);
        return ir_node_error(g, n, d, "updates %s must have the shape of the indices %s", c, b);
    }
    for (int i = 0; i < s->rank; i++)            /* along axis, indices may repeat positions */
        if (i != axis && is->dims[i] > s->dims[i] && ir_shape_numel(is) > 0)
            return ir_node_error(g, n, d, "indices %s exceed the data %s on axis %d", b, a, i);
    ir_infer_set(g, n, 0, x->v.dtype, s);
    return 0;
}

int ir_infer_scatternd(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = ir_in(g, n, 0), *ind = ir_in(g, n, 1), *u = ir_in(g, n, 2);
    const IrShape *s = &x->v.shape, *is = &ind->v.shape, *us = &u->v.shape;
    if (check_reduction(g, n, d) || same_dtype(g, n, 0, 2, d))
        return -1;
    if (ind->v.dtype != IR_DT_I64)
        return ir_node_error(g, n, d, "indices '%s' are %s; int64 is required", ind->name,
                             ir_dtype_name(ind->v.dtype));
    char a[160], b[160], c[160];
    ir_shape_str(s, a, sizeof a);
    ir_shape_str(is, b, sizeof b);
    ir_shape_str(us, c, sizeof c);
    int r = s->rank, q = is->rank;
    if (r < 1 || q < 1)
        return ir_node_error(g, n, d, "data %s and indices %s must have rank >= 1", a, b);
    int64_t k = is->dims[q - 1];
    if (k < 1 || k > r)
        return ir_node_error(g, n, d, "the last dimension of indices %s is %lld; it must be in 1..%d", b,
                             (long long)k, r);
    int urank = q - 1 + r - (int)k;
    int ok = us->rank == urank;
    for (int i = 0; ok && i < q - 1; i++)
        ok = us->dims[i] == is->dims[i];
    for (int i = 0; ok && i < r - (int)k; i++)
        ok = us->dims[q - 1 + i] == s->dims[k + i];
    if (!ok)
        return ir_node_error(g, n, d, "updates %s must have shape indices.shape[:-1] + data.shape[%lld:] "
                             "for data %s and indices %s", c, (long long)k, a, b);
    ir_infer_set(g, n, 0, x->v.dtype, s);
    return 0;
}

int ir_infer_onehot(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *ind = ir_in(g, n, 0), *vals = ir_in(g, n, 2);
    const IrShape *s = &ind->v.shape;
    if (ind->v.dtype == IR_DT_BOOL)
        return ir_node_error(g, n, d, "indices '%s' must be numeric, not bool", ind->name);
    if (ir_shape_numel(&vals->v.shape) != 2 || vals->v.shape.rank != 1)
        return ir_node_error(g, n, d, "values '%s' must be a 1-D tensor of two elements [off, on]", vals->name);
    int64_t depth;
    if (const_scalar(g, n, 1, "depth", &depth, d))
        return -1;
    if (depth < 1)
        return ir_node_error(g, n, d, "depth %lld must be positive", (long long)depth);
    if (s->rank + 1 > IR_MAX_RANK)
        return ir_node_error(g, n, d, "the output would have rank %d; at most %d is supported", s->rank + 1,
                             IR_MAX_RANK);
    int64_t axis = ir_attr_int(n, IR_A_axis);
    int r = s->rank + 1;
    if (axis < -r || axis >= r)
        return ir_node_error(g, n, d, "axis %lld is out of range for output rank %d", (long long)axis, r);
    if (axis < 0)
        axis += r;
    IrShape o = { .rank = r };
    for (int i = 0, k = 0; i < r; i++)
        o.dims[i] = i == axis ? depth : s->dims[k++];
    ir_infer_set(g, n, 0, vals->v.dtype, &o);
    return 0;
}

/* An ONNX TensorProto data type attribute (EyeLike dtype, window
 * output_datatype); dflt when absent. */
static IrDType onnx_dtype_attr(IrGraph *g, IrNode *n, IrAttrKey key, IrDType dflt, UtilDiag *d)
{
    if (!ir_has_attr(n, key))
        return dflt;
    int64_t v = ir_attr_int(n, key);
    IrDType t = v > 0 && v < 1000 ? ir_dtype_from_onnx((int)v) : IR_DT_UNDEF;
    if (t == IR_DT_UNDEF)
        ir_node_error(g, n, d, "%s %lld is not a supported data type", ir_attr_name(key), (long long)v);
    return t;
}

int ir_infer_eyelike(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = ir_in(g, n, 0);
    if (x->v.shape.rank != 2)
        return ir_node_error(g, n, d, "input '%s' must be 2-D, not rank %d", x->name, x->v.shape.rank);
    IrDType t = onnx_dtype_attr(g, n, IR_A_dtype, x->v.dtype, d);
    if (t == IR_DT_UNDEF)
        return -1;
    ir_infer_set(g, n, 0, t, &x->v.shape);
    return 0;
}

static const char data_dependent[] = "data-dependent output shape is not supported by a static compiler";

/* Number of true values of Compress's condition that select an element of an
 * axis of length dim; -1 with a diagnostic if one lies beyond it. */
int64_t ir_compress_count(const IrGraph *g, const IrNode *n, const IrArray *cond, int64_t dim, UtilDiag *d)
{
    int64_t cnt = 0, len = ir_array_numel(cond);
    for (int64_t i = 0; i < len; i++)
        if (ir_load_i64(cond->dtype, cond->data, i)) {
            if (i >= dim)
                return ir_node_error(g, n, d, "condition is true at position %lld, beyond the axis length %lld",
                                     (long long)i, (long long)dim);
            cnt++;
        }
    return cnt;
}

int ir_infer_compress(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = ir_in(g, n, 0), *c = ir_in(g, n, 1);
    const IrShape *s = &x->v.shape;
    if (c->v.dtype != IR_DT_BOOL || c->v.shape.rank != 1)
        return ir_node_error(g, n, d, "condition '%s' must be a 1-D bool tensor", c->name);
    if (!c->v.data)
        return ir_node_error(g, n, d, "the condition input '%s' must be a constant or computable at compile time "
                             "(%s)", c->name, data_dependent);
    IrShape o;
    int axis = -1;
    if (ir_has_attr(n, IR_A_axis)) {
        if (s->rank < 1)
            return ir_node_error(g, n, d, "input '%s' is a scalar; axis needs rank >= 1", x->name);
        if ((axis = ir_norm_axis(g, n, ir_attr_int(n, IR_A_axis), s->rank, d)) < 0)
            return -1;
        o = *s;
    } else {
        o = (IrShape){ .rank = 1, .dims = { ir_shape_numel(s) } };
        axis = 0;
    }
    int64_t cnt = ir_compress_count(g, n, &c->v, o.dims[axis], d);
    if (cnt < 0)
        return -1;
    o.dims[axis] = cnt;
    ir_infer_set(g, n, 0, x->v.dtype, &o);
    return 0;
}

int ir_infer_nonzero(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = ir_in(g, n, 0);
    if (!x->v.data)
        return ir_node_error(g, n, d, "the input '%s' must be a constant or computable at compile time (%s)",
                             x->name, data_dependent);
    int64_t cnt = 0, len = ir_shape_numel(&x->v.shape);
    for (int64_t i = 0; i < len; i++)
        cnt += ir_dtype_is_float(x->v.dtype) ? ir_load_f64(x->v.dtype, x->v.data, i) != 0
                                             : ir_load_i64(x->v.dtype, x->v.data, i) != 0;
    IrShape o = { .rank = 2, .dims = { x->v.shape.rank ? x->v.shape.rank : 1, cnt } };
    ir_infer_set(g, n, 0, IR_DT_I64, &o);
    return 0;
}

int ir_infer_reversesequence(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = ir_in(g, n, 0), *l = ir_in(g, n, 1);
    const IrShape *s = &x->v.shape;
    if (s->rank < 2)
        return ir_node_error(g, n, d, "input '%s' must have rank >= 2", x->name);
    int64_t ba = ir_attr_int(n, IR_A_batch_axis), ta = ir_attr_int(n, IR_A_time_axis);
    if ((ba != 0 && ba != 1) || (ta != 0 && ta != 1) || ba == ta)
        return ir_node_error(g, n, d, "batch_axis %lld and time_axis %lld must be 0 and 1 in some order",
                             (long long)ba, (long long)ta);
    if (l->v.dtype != IR_DT_I64 && l->v.dtype != IR_DT_I32)
        return ir_node_error(g, n, d, "sequence_lens '%s' must be int32 or int64", l->name);
    if (l->v.shape.rank != 1 || l->v.shape.dims[0] != s->dims[ba])
        return ir_node_error(g, n, d, "sequence_lens '%s' must be 1-D of the batch size %lld", l->name,
                             (long long)s->dims[ba]);
    ir_infer_set(g, n, 0, x->v.dtype, s);
    return 0;
}

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
    if (present(n, 2)) {
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
    if (ir_gridsample_modes(g, n, &mode, &pad, d) || need_float(g, n, 1, d))
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
    if (need_float(g, n, 0, d))
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

int ir_infer_bitwise(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = ir_in(g, n, 0);
    if (!ir_dtype_is_int(x->v.dtype))
        return ir_node_error(g, n, d, "input '%s' is %s; %s needs integers", x->name, ir_dtype_name(x->v.dtype),
                             ir_op_name(n->op));
    if (n->op == IR_OP_BitwiseNot) {
        ir_infer_set(g, n, 0, x->v.dtype, &x->v.shape);
        return 0;
    }
    IrShape o;
    if (same_dtype(g, n, 0, 1, d) ||
        ir_broadcast_shapes(g, n, &x->v.shape, &ir_in(g, n, 1)->v.shape, &o, d))
        return -1;
    ir_infer_set(g, n, 0, x->v.dtype, &o);
    return 0;
}

int ir_infer_window(IrGraph *g, IrNode *n, UtilDiag *d)
{
    int64_t size;
    if (const_scalar(g, n, 0, "size", &size, d))
        return -1;
    if (!ir_dtype_is_int(ir_in(g, n, 0)->v.dtype))
        return ir_node_error(g, n, d, "size must be an integer");
    if (size < 0 || size > IR_MAX_ELEMENTS)
        return ir_node_error(g, n, d, "size %lld is out of range", (long long)size);
    IrDType t = onnx_dtype_attr(g, n, IR_A_output_datatype, IR_DT_F32, d);
    if (t == IR_DT_UNDEF)
        return -1;
    if (t == IR_DT_BOOL)
        return ir_node_error(g, n, d, "output_datatype bool is not a numeric type");
    IrShape o = { .rank = 1, .dims = { size } };
    ir_infer_set(g, n, 0, t, &o);
    return 0;
}

int ir_dft_params(const IrGraph *g, const IrNode *n, const IrArray *x, const IrArray *len, const IrArray *axis_in,
                  int *axis, int64_t *length, UtilDiag *d)
{
    int r = x->shape.rank;
    if (r < 2 || (x->shape.dims[r - 1] != 1 && x->shape.dims[r - 1] != 2))
        return ir_node_error(g, n, d, "input must have rank >= 2 with a last dimension of 1 (real) or 2 (complex)");
    int64_t a;
    if (axis_in && ir_array_numel(axis_in) > 0) {
        if (!axis_in->data)
            return ir_node_error(g, n, d, "the axis input must be known at compile time");
        a = ir_load_i64(axis_in->dtype, axis_in->data, 0);
    } else {
        /* DFT-17's axis attribute (default 1) is moved to input 3 by fe_upgrade */
        a = ir_has_attr(n, IR_A_axis) ? ir_attr_int(n, IR_A_axis) : -2;
    }
    int64_t na = a < 0 ? a + r : a;
    if (na < 0 || na >= r - 1)
        return ir_node_error(g, n, d, "axis %lld must name a signal axis (not the last, real/imaginary one) of "
                             "rank %d", (long long)a, r);
    *axis = (int)na;
    *length = x->shape.dims[*axis];
    if (len && ir_array_numel(len) > 0) {
        if (!len->data)
            return ir_node_error(g, n, d, "the dft_length input must be known at compile time");
        *length = ir_load_i64(len->dtype, len->data, 0);
        if (*length < 1 || *length > IR_MAX_DFT_LENGTH)
            return ir_node_error(g, n, d, "dft_length %lld must be in 1..%lld", (long long)*length,
                                 (long long)IR_MAX_DFT_LENGTH);
    }
    return 0;
}

int ir_infer_dft(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = ir_in(g, n, 0), *l = present(n, 1) ? ir_in(g, n, 1) : NULL;
    const IrTensor *ax = present(n, 2) ? ir_in(g, n, 2) : NULL;
    if (need_float(g, n, 0, d))
        return -1;
    if ((l && (!ir_dtype_is_int(l->v.dtype) || ir_shape_numel(&l->v.shape) > 1)) ||
        (ax && (!ir_dtype_is_int(ax->v.dtype) || ir_shape_numel(&ax->v.shape) > 1)))
        return ir_node_error(g, n, d, "dft_length and axis must be integer scalars");
    const IrTensor *operands[2] = { l, ax };
    static const char *const what[2] = { "dft_length", "axis" };
    for (int i = 0; i < 2; i++)
        if (operands[i] && !operands[i]->v.data && ir_shape_numel(&operands[i]->v.shape) > 0)
            return ir_node_error(g, n, d, "the %s input '%s' must be a constant or computable at compile time "
                                 "(dlcc compiles static shapes)", what[i], operands[i]->name);
    int axis;
    int64_t len;
    if (ir_dft_params(g, n, &x->v, l ? &l->v : NULL, ax ? &ax->v : NULL, &axis, &len, d))
        return -1;
    if (ir_attr_int(n, IR_A_onesided) && x->v.shape.dims[x->v.shape.rank - 1] == 2)
        return ir_node_error(g, n, d, "onesided=1 needs a real input (last dimension 1); a complex input has no "
                             "one-sided spectrum");
    IrShape o = x->v.shape;
    o.dims[axis] = ir_attr_int(n, IR_A_onesided) ? len / 2 + 1 : len;
    o.dims[o.rank - 1] = 2;
    ir_infer_set(g, n, 0, x->v.dtype, &o);
    return 0;
}

int ir_stft_params(const IrGraph *g, const IrNode *n, const IrShape *x, int64_t step, const IrShape *win,
                   const int64_t *frame_len, IrShape *out, UtilDiag *d)
{
    if (x->rank != 3 || (x->dims[2] != 1 && x->dims[2] != 2))
        return ir_node_error(g, n, d, "signal must be [batch, length, 1 or 2]");
    if (step < 1)
        return ir_node_error(g, n, d, "frame_step %lld must be positive", (long long)step);
    if (win && win->rank != 1)
        return ir_node_error(g, n, d, "window must be 1-D");
    int64_t fl = frame_len ? *frame_len : win ? win->dims[0] : x->dims[1];
    if (fl < 1 || fl > x->dims[1])
        return ir_node_error(g, n, d, "frame_length %lld must be in 1..%lld (the signal length)", (long long)fl,
                             (long long)x->dims[1]);
    if (fl > IR_MAX_DFT_LENGTH)
        return ir_node_error(g, n, d, "frame_length %lld exceeds %lld", (long long)fl, (long long)IR_MAX_DFT_LENGTH);
    if (win && win->dims[0] != fl)
        return ir_node_error(g, n, d, "window length %lld differs from frame_length %lld", (long long)win->dims[0],
                             (long long)fl);
    int onesided = ir_attr_int(n, IR_A_onesided) != 0;
    if (onesided && x->dims[2] == 2)
        return ir_node_error(g, n, d, "onesided=1 needs a real signal (last dimension 1)");
    *out = (IrShape){ .rank = 4, .dims = { x->dims[0], 1 + (x->dims[1] - fl) / step,
                                            onesided ? fl / 2 + 1 : fl, 2 } };
    return 0;
}

int ir_infer_stft(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = ir_in(g, n, 0), *w = present(n, 2) ? ir_in(g, n, 2) : NULL;
    int64_t step, fl;
    int has_fl = present(n, 3);
    if (need_float(g, n, 0, d) || const_scalar(g, n, 1, "frame_step", &step, d) ||
        (has_fl && const_scalar(g, n, 3, "frame_length", &fl, d)))
        return -1;
    if (w && same_dtype(g, n, 0, 2, d))
        return -1;
    IrShape o;
    if (ir_stft_params(g, n, &x->v.shape, step, w ? &w->v.shape : NULL, has_fl ? &fl : NULL, &o, d))
        return -1;
    ir_infer_set(g, n, 0, x->v.dtype, &o);
    return 0;
}

int ir_infer_melweightmatrix(IrGraph *g, IrNode *n, UtilDiag *d)
{
    int64_t bins, len;
    if (const_scalar(g, n, 0, "num_mel_bins", &bins, d) || const_scalar(g, n, 1, "dft_length", &len, d))
        return -1;
    for (int i = 0; i < 3; i++)
        if (!ir_dtype_is_int(ir_in(g, n, i)->v.dtype))
            return ir_node_error(g, n, d, "num_mel_bins, dft_length and sample_rate must be integers");
    for (int i = 3; i < 5; i++)
        if (ir_shape_numel(&ir_in(g, n, i)->v.shape) != 1 || !ir_dtype_is_float(ir_in(g, n, i)->v.dtype))
            return ir_node_error(g, n, d, "lower_edge_hertz and upper_edge_hertz must be float scalars");
    if (bins < 1 || len < 1)
        return ir_node_error(g, n, d, "num_mel_bins (%lld) and dft_length (%lld) must be positive",
                             (long long)bins, (long long)len);
    IrDType t = onnx_dtype_attr(g, n, IR_A_output_datatype, IR_DT_F32, d);
    if (t == IR_DT_UNDEF)
        return -1;
    IrShape o = { .rank = 2, .dims = { len / 2 + 1, bins } };
    ir_infer_set(g, n, 0, t, &o);
    return 0;
}

int ir_infer_tensorscatter(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *c = ir_in(g, n, 0), *u = ir_in(g, n, 1);
    const IrShape *s = &c->v.shape, *us = &u->v.shape;
    const char *mode = ir_attr_str(n, IR_A_mode);
    if (strcmp(mode, "linear") && strcmp(mode, "circular"))
        return ir_node_error(g, n, d, "mode must be \"linear\" or \"circular\", not \"%s\"", mode);
    if (same_dtype(g, n, 0, 1, d))
        return -1;
    if (s->rank < 2)
        return ir_node_error(g, n, d, "past_cache '%s' must have rank >= 2 (batch and sequence axes)", c->name);
    int axis = ir_norm_axis(g, n, ir_attr_int(n, IR_A_axis), s->rank, d);
    if (axis < 0)
        return -1;
    if (axis == 0)
        return ir_node_error(g, n, d, "axis must not be 0 (the batch axis)");
    char a[160], b[160];
    ir_shape_str(s, a, sizeof a);
    ir_shape_str(us, b, sizeof b);
    int ok = us->rank == s->rank;
    for (int i = 0; ok && i < s->rank; i++)
        ok = i == axis ? us->dims[i] <= s->dims[i] : us->dims[i] == s->dims[i];
    if (!ok)
        return ir_node_error(g, n, d, "update %s must match past_cache %s except for a sequence length on axis %d "
                             "no longer than the cache's", b, a, axis);
    if (present(n, 2)) {
        const IrTensor *w = ir_in(g, n, 2);
        if (!ir_dtype_is_int(w->v.dtype) || w->v.shape.rank != 1 || w->v.shape.dims[0] != s->dims[0])
            return ir_node_error(g, n, d, "write_indices '%s' must be a 1-D integer tensor of the batch size %lld",
                                 w->name, (long long)s->dims[0]);
    }
    ir_infer_set(g, n, 0, c->v.dtype, s);
    return 0;
}
