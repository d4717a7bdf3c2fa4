/* interp/k_scatter.c — scatter and index-generating kernels: ScatterElements
 * (and its opset-9 name Scatter), ScatterND, TensorScatter, OneHot, EyeLike, Compress,
 * NonZero, ReverseSequence.  Runtime indices are bounds-checked; elements are
 * combined in double (float types) or int64 (integers, wrapping). */
#include "interp/kernels.h"
#include <stdlib.h>

#include <string.h>

/* y[di] = y[di] (red) u[ui]; red as ir_scatter_reduction. */
static void combine(IrArray *y, int64_t di, const IrArray *u, int64_t ui, int red)
{
    if (ir_dtype_is_float(y->dtype)) {
        double a = ir_load_f64(y->dtype, y->data, di), b = ir_load_f64(u->dtype, u->data, ui);
        double r = red == 1 ? a + b : red == 2 ? a * b : red == 3 ? (b > a ? b : a) : red == 4 ? (b < a ? b : a) : b;
        ir_store_f64(y->dtype, y->data, di, r);
    } else {
        int64_t a = ir_load_i64(y->dtype, y->data, di), b = ir_load_i64(u->dtype, u->data, ui);
        /* uint64 values above INT64_MAX load negative: compare them unsigned */
        int b_gt = y->dtype == IR_DT_U64 ? (uint64_t)b > (uint64_t)a : b > a;
        int64_t r = red == 1 ? (int64_t)((uint64_t)a + (uint64_t)b)
                  : red == 2 ? (int64_t)((uint64_t)a * (uint64_t)b)
                  : red == 3 ? (b_gt ? b : a) : red == 4 ? (b_gt || a == b ? a : b) : b;
        ir_store_i64(y->dtype, y->data, di, r);
    }
}

static void copy_data(IrArray *y, const IrArray *x)
{
    size_t bytes = ir_array_bytes(x);
    if (bytes)
        memcpy(y->data, x->data, bytes);
}

typedef struct ScatterCtx {
    IrArray *y;
    const IrArray *u;
    int red;
} ScatterCtx;

static void scatter_element(void *ctx, int64_t i, int64_t off)
{
    ScatterCtx *c = ctx;
    combine(c->y, off, c->u, i, c->red);
}

int interp_k_scatterelements(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out,
                             UtilDiag *d)
{
    const IrArray *x = in[0];
    int axis = ir_norm_axis(g, n, ir_attr_int(n, IR_A_axis), x->shape.rank, d);
    if (axis < 0)
        return -1;
    copy_data(out[0], x);
    ScatterCtx c = { out[0], in[2], ir_scatter_reduction(n) };
    return interp_elements_walk(g, n, &x->shape, in[1], axis, scatter_element, &c, d);
}

int interp_k_scatternd(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out,
                       UtilDiag *d)
{
    const IrArray *x = in[0], *ind = in[1], *u = in[2];
    IrArray *y = out[0];
    int q = ind->shape.rank, red = ir_scatter_reduction(n);
    int64_t k = ind->shape.dims[q - 1], tuples = ir_array_numel(ind) / (k ? k : 1), slice = 1, st[IR_MAX_RANK];
    for (int i = (int)k; i < x->shape.rank; i++)
        slice *= x->shape.dims[i];
    interp_strides(&x->shape, st);
    copy_data(y, x);
    for (int64_t t = 0; t < tuples; t++) {
        int64_t base = 0;
        for (int64_t j = 0; j < k; j++) {
            int64_t v;
            if (interp_load_index(g, n, ind, t * k + j, x->shape.dims[j], &v, d))
                return -1;
            base += v * st[j];
        }
        for (int64_t e = 0; e < slice; e++)
            combine(y, base + e, u, t * slice + e, red);
    }
    return 0;
}

int interp_k_onehot(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out,
                    UtilDiag *d)
{
    const IrArray *ind = in[0], *dep = in[1], *vals = in[2];
    IrArray *y = out[0];
    int r = y->shape.rank, axis = (int)ir_attr_int(n, IR_A_axis);
    if (axis < 0)
        axis += r;
    int64_t depth = ir_load_i64(dep->dtype, dep->data, 0);     /* floats truncate, as the shape rule */
    if (depth != y->shape.dims[axis])
        return ir_node_error(g, n, d, "depth %lld differs from the compile-time depth %lld", (long long)depth,
                             (long long)y->shape.dims[axis]);
    size_t es = ir_dtype_size(y->dtype);
    const char *off = vals->data, *on = (const char *)vals->data + es;
    int64_t idx[IR_MAX_RANK] = { 0 }, cnt = ir_array_numel(y), ist[IR_MAX_RANK];
    interp_strides(&ind->shape, ist);
    for (int64_t i = 0; i < cnt; i++, interp_next_index(&y->shape, idx)) {
        int64_t s = 0;
        for (int k = 0, j = 0; k < r; k++)
            if (k != axis)
                s += idx[k] * ist[j++];
        int64_t v = ir_load_i64(ind->dtype, ind->data, s);         /* float indices cast to int64 */
        if (v < 0)
            v += depth;                      /* out of [-depth, depth) never matches: all off */
        memcpy((char *)y->data + (size_t)i * es, v == idx[axis] ? on : off, es);
    }
    return 0;
}

int interp_k_eyelike(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out,
                     UtilDiag *d)
{
    (void)g; (void)in; (void)d;
    IrArray *y = out[0];
    int64_t rows = y->shape.dims[0], cols = y->shape.dims[1], k = ir_attr_int(n, IR_A_k);
    if (k >= cols || k <= -rows)         /* the diagonal misses the matrix (and i + k could overflow) */
        return 0;
    for (int64_t i = 0; i < rows; i++)
        if (i + k >= 0 && i + k < cols)
            ir_store_i64(y->dtype, y->data, i * cols + i + k, 1);
    return 0;
}

int interp_k_compress(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out,
                      UtilDiag *d)
{
    const IrArray *x = in[0], *c = in[1];
    IrArray *y = out[0];
    int64_t outer = 1, dim = ir_array_numel(x), inner = 1;
    if (ir_has_attr(n, IR_A_axis)) {
        int axis = ir_norm_axis(g, n, ir_attr_int(n, IR_A_axis), x->shape.rank, d);
        if (axis < 0)
            return -1;
        dim = x->shape.dims[axis];
        for (int i = 0; i < axis; i++)
            outer *= x->shape.dims[i];
        for (int i = axis + 1; i < x->shape.rank; i++)
            inner *= x->shape.dims[i];
    }
    int64_t cnt = ir_compress_count(g, n, c, dim, d), clen = ir_array_numel(c);
    if (cnt < 0)
        return -1;
    if (cnt * outer * inner != ir_array_numel(y))
        return ir_node_error(g, n, d, "condition selects %lld slices; the compile-time shape has a different "
                             "count", (long long)cnt);
    size_t es = ir_dtype_size(x->dtype), len = (size_t)inner * es;
    char *o = y->data;
    for (int64_t a = 0; a < outer; a++)
        for (int64_t i = 0; i < dim && i < clen; i++)
            if (ir_load_i64(c->dtype, c->data, i) && len) {
                memcpy(o, (const char *)x->data + (size_t)(a * dim + i) * len, len);
                o += len;
            }
    return 0;
}

int interp_k_nonzero(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out,
                     UtilDiag *d)
{
    const IrArray *x = in[0];
    IrArray *y = out[0];
    int64_t cnt = ir_array_numel(x), total = y->shape.dims[1], idx[IR_MAX_RANK] = { 0 }, j = 0;
    int r = x->shape.rank;
    for (int64_t i = 0; i < cnt; i++, interp_next_index(&x->shape, idx)) {
        int nz = ir_dtype_is_float(x->dtype) ? ir_load_f64(x->dtype, x->data, i) != 0
                                             : ir_load_i64(x->dtype, x->data, i) != 0;
        if (!nz)
            continue;
        if (j >= total)
            return ir_node_error(g, n, d, "the input has more nonzero values than the compile-time shape allows "
                                 "(data-dependent output shape is not supported by a static compiler)");
        for (int k = 0; k < (r ? r : 1); k++)
            ir_store_i64(IR_DT_I64, y->data, k * total + j, r ? idx[k] : 0);
        j++;
    }
    if (j != total)
        return ir_node_error(g, n, d, "the input has fewer nonzero values than the compile-time shape "
                             "(data-dependent output shape is not supported by a static compiler)");
    return 0;
}

int interp_k_unique(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out,
                    UtilDiag *d)
{
    const IrArray *x = in[0];
    int axis = -1;
    if (ir_has_attr(n, IR_A_axis)) {
        int64_t a = ir_attr_int(n, IR_A_axis);
        axis = (int)(a < 0 ? a + x->shape.rank : a);
    }
    int64_t nsl = axis < 0 ? ir_array_numel(x) : x->shape.dims[axis];
    int64_t *first = malloc(((size_t)nsl + 1) * sizeof *first);
    if (!first)
        return ir_node_error(g, n, d, "out of memory");
    int64_t *inverse = n->n_out > 2 && out[2] ? out[2]->data : NULL, *counts = n->n_out > 3 && out[3] ? out[3]->data : NULL;
    int64_t u = ir_unique(x, axis, ir_attr_int(n, IR_A_sorted) != 0, first, inverse, counts);
    IrArray *y = out[0];
    int64_t want = axis < 0 ? y->shape.dims[0] : y->shape.dims[axis];
    if (u != want) {
        free(first);
        return u < 0 ? ir_node_error(g, n, d, "out of memory")
                     : ir_node_error(g, n, d, "the input has %lld distinct values, the compile-time shape %lld (%s)",
                                     (long long)u, (long long)want,
                                     "data-dependent output shape is not supported by a static compiler");
    }
    /* y: the first occurrence of each distinct slice, as [outer, u, inner] */
    int64_t outer = 1, inner = 1;
    for (int k = 0; axis >= 0 && k < x->shape.rank; k++)
        if (k < axis)
            outer *= x->shape.dims[k];
        else if (k > axis)
            inner *= x->shape.dims[k];
    size_t es = ir_dtype_size(x->dtype), row = (size_t)inner * es;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t j = 0; j < u && row; j++)
            memcpy((char *)y->data + (size_t)(o * u + j) * row, (const char *)x->data + (size_t)(o * nsl + first[j]) * row,
                   row);
    if (n->n_out > 1 && out[1])
        memcpy(out[1]->data, first, (size_t)u * sizeof *first);
    free(first);
    return 0;
}

int interp_k_reversesequence(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out,
                             UtilDiag *d)
{
    const IrArray *x = in[0], *lens = in[1];
    IrArray *y = out[0];
    int ba = (int)ir_attr_int(n, IR_A_batch_axis), ta = (int)ir_attr_int(n, IR_A_time_axis);
    int64_t st[IR_MAX_RANK], idx[IR_MAX_RANK] = { 0 }, cnt = ir_array_numel(x), tdim = x->shape.dims[ta];
    size_t es = ir_dtype_size(x->dtype);
    interp_strides(&x->shape, st);
    for (int64_t b = 0; b < x->shape.dims[ba]; b++) {
        int64_t l = ir_load_i64(lens->dtype, lens->data, b);
        if (l < 0 || l > tdim)
            return ir_node_error(g, n, d, "sequence_lens[%lld] = %lld is out of range 0..%lld", (long long)b,
                                 (long long)l, (long long)tdim);
    }
    for (int64_t i = 0; i < cnt; i++, interp_next_index(&x->shape, idx)) {
        int64_t l = ir_load_i64(lens->dtype, lens->data, idx[ba]), t = idx[ta];
        int64_t src = i + (t < l ? (l - 1 - 2 * t) * st[ta] : 0);
        memcpy((char *)y->data + (size_t)i * es, (const char *)x->data + (size_t)src * es, es);
    }
    return 0;
}

int interp_k_tensorscatter(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out,
                           UtilDiag *d)
{
    const IrArray *u = in[1], *w = n->n_in > 2 ? in[2] : NULL;
    IrArray *y = out[0];
    int axis = ir_norm_axis(g, n, ir_attr_int(n, IR_A_axis), y->shape.rank, d);
    if (axis < 0)
        return -1;
    int circular = !strcmp(ir_attr_str(n, IR_A_mode), "circular");
    int64_t max = y->shape.dims[axis], st[IR_MAX_RANK], idx[IR_MAX_RANK] = { 0 }, cnt = ir_array_numel(u);
    size_t es = ir_dtype_size(y->dtype);
    interp_strides(&y->shape, st);
    copy_data(y, in[0]);
    for (int64_t i = 0; i < cnt; i++, interp_next_index(&u->shape, idx)) {
        int64_t start = w ? ir_load_i64(w->dtype, w->data, idx[0]) : 0, pos;
        if (circular && max > 0) {
            pos = (start % max + idx[axis] % max) % max;     /* no overflow: both terms below max */
            pos = pos < 0 ? pos + max : pos;
        } else if (start < 0 || start > max - idx[axis] - 1) {
            return ir_node_error(g, n, d, "write index %lld + %lld is outside the cache's sequence length %lld "
                                 "(mode \"linear\")", (long long)start, (long long)idx[axis], (long long)max);
        } else {
            pos = start + idx[axis];
        }
        int64_t off = 0;
        for (int k = 0; k < y->shape.rank; k++)
            off += (k == axis ? pos : idx[k]) * st[k];
        memcpy((char *)y->data + (size_t)off * es, (const char *)u->data + (size_t)i * es, es);
    }
    return 0;
}
