/* interp/k_data.c — data-movement kernels.  They move whole elements with
 * memcpy by element size, so every dtype works without arithmetic.  Most
 * share one loop (move_by_index) that walks the output and asks a per-operator
 * function for the flat source index of each element (-1 = fill value). */
#include "interp/kernels.h"

#include <string.h>

typedef struct MoveCtx {
    IrShape in, out;
    int64_t st[IR_MAX_RANK];      /* input strides */
    int64_t a[IR_MAX_RANK];       /* per-axis operand: perm, slice first, pad begin */
    int64_t b[IR_MAX_RANK];       /* per-axis operand: slice step */
    int pad_mode;                 /* 0 constant, 1 reflect, 2 edge, 3 wrap */
    int64_t blk;                  /* DepthToSpace / SpaceToDepth block size */
    int crd;                      /* DepthToSpace CRD mode */
} MoveCtx;

typedef int64_t (*SrcIndex)(const MoveCtx *c, const int64_t *o);

static void move_by_index(const IrArray *src, IrArray *dst, SrcIndex f, const MoveCtx *c, const void *fill)
{
    size_t es = ir_dtype_size(dst->dtype);
    int64_t cnt = ir_array_numel(dst), idx[IR_MAX_RANK] = { 0 };
    char *o = dst->data;
    const char *in = src->data;
    for (int64_t i = 0; i < cnt; i++, interp_next_index(&dst->shape, idx)) {
        int64_t s = f(c, idx);
        memcpy(o + (size_t)i * es, s < 0 ? fill : in + (size_t)s * es, es);
    }
}

/* Optional input k: NULL when absent or beyond the node's input count. */
static const IrArray *opt_in(const IrNode *n, const IrArray *const *in, int k)
{
    return k < n->n_in ? in[k] : NULL;
}

static void ctx_init(MoveCtx *c, const IrArray *in, const IrArray *out)
{
    memset(c, 0, sizeof *c);
    c->in = in->shape;
    c->out = out->shape;
    interp_strides(&c->in, c->st);
}

int interp_k_copy(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out, UtilDiag *d)
{
    size_t bytes = ir_array_bytes(out[0]);
    if (ir_array_bytes(in[0]) != bytes)
        return ir_node_error(g, n, d, "input and output sizes differ");
    if (bytes)
        memcpy(out[0]->data, in[0]->data, bytes);
    return 0;
}

static int64_t src_transpose(const MoveCtx *c, const int64_t *o)
{
    int64_t s = 0;
    for (int k = 0; k < c->out.rank; k++)
        s += o[k] * c->st[c->a[k]];
    return s;
}

int interp_k_transpose(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out,
                       UtilDiag *d)
{
    (void)g; (void)d;
    MoveCtx c;
    ctx_init(&c, in[0], out[0]);
    const int64_t *perm;
    int cnt = ir_attr_ints(n, IR_A_perm, &perm);
    for (int k = 0; k < c.in.rank; k++)
        c.a[k] = cnt == c.in.rank ? perm[k] : c.in.rank - 1 - k;
    move_by_index(in[0], out[0], src_transpose, &c, NULL);
    return 0;
}

/* Concat (join != 0) and Split: copy contiguous chunks around `axis`; part p
 * spans len[p] along the axis (data[p] NULL: an absent Split output). */
static void chunk_copy(const IrArray *whole, char *const *data, const int64_t *len, int nparts, int axis, int join)
{
    size_t es = ir_dtype_size(whole->dtype);
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < axis; i++)
        outer *= whole->shape.dims[i];
    for (int i = axis + 1; i < whole->shape.rank; i++)
        inner *= whole->shape.dims[i];
    char *w = whole->data;
    size_t off = 0;
    for (int64_t o = 0; o < outer; o++)
        for (int p = 0; p < nparts; p++) {
            size_t bytes = (size_t)(len[p] * inner) * es;
            if (bytes && data[p]) {
                char *pd = data[p] + (size_t)o * bytes;
                memcpy(join ? w + off : pd, join ? pd : w + off, bytes);
            }
            off += bytes;
        }
}

int interp_k_concat(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out, UtilDiag *d)
{
    int axis = ir_norm_axis(g, n, ir_attr_int(n, IR_A_axis), out[0]->shape.rank, d);
    if (axis < 0)
        return -1;
    char *data[IR_VARIADIC];
    int64_t len[IR_VARIADIC];
    for (int k = 0; k < n->n_in; k++) {
        data[k] = (char *)in[k]->data;
        len[k] = in[k]->shape.dims[axis];
    }
    chunk_copy(out[0], data, len, n->n_in, axis, 1);
    return 0;
}

int interp_k_split(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out, UtilDiag *d)
{
    int axis = ir_norm_axis(g, n, ir_attr_int(n, IR_A_axis), in[0]->shape.rank, d);
    if (axis < 0)
        return -1;
    int nout = n->n_out;
    int64_t dim = in[0]->shape.dims[axis], chunk = ir_has_attr(n, IR_A_num_outputs) ? (dim + nout - 1) / nout
                                                                                    : dim / nout;
    char *data[IR_VARIADIC];
    int64_t len[IR_VARIADIC];
    for (int k = 0; k < nout; k++) {
        data[k] = out[k] ? out[k]->data : NULL;
        if (out[k])
            len[k] = out[k]->shape.dims[axis];            /* an absent output still spans its chunk */
        else if (opt_in(n, in, 1) && ir_array_numel(in[1]) > 0)
            len[k] = ir_load_i64(in[1]->dtype, in[1]->data, k);
        else
            len[k] = k == nout - 1 ? dim - chunk * (nout - 1) : chunk;
    }
    chunk_copy(in[0], data, len, nout, axis, 0);
    return 0;
}

static int64_t src_slice(const MoveCtx *c, const int64_t *o)
{
    int64_t s = 0;
    for (int k = 0; k < c->out.rank; k++)
        s += (c->a[k] + o[k] * c->b[k]) * c->st[k];
    return s;
}

int interp_k_slice(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out, UtilDiag *d)
{
    (void)g; (void)d;
    MoveCtx c;
    ctx_init(&c, in[0], out[0]);
    const IrArray *axes = opt_in(n, in, 3), *steps = opt_in(n, in, 4);
    int r = c.in.rank, cnt = (int)ir_array_numel(in[1]);
    for (int k = 0; k < r; k++)
        c.b[k] = 1;
    for (int i = 0; i < cnt; i++) {
        int64_t ax = axes ? ir_load_i64(axes->dtype, axes->data, i) : i;
        int a = (int)(ax < 0 ? ax + r : ax);
        int64_t step = steps ? ir_load_i64(steps->dtype, steps->data, i) : 1, count;
        ir_slice_axis(c.in.dims[a], ir_load_i64(in[1]->dtype, in[1]->data, i),
                      ir_load_i64(in[2]->dtype, in[2]->data, i), step, &c.a[a], &count);
        c.b[a] = step;
    }
    move_by_index(in[0], out[0], src_slice, &c, NULL);
    return 0;
}

int interp_load_index(const IrGraph *g, const IrNode *n, const IrArray *ind, int64_t i, int64_t dim, int64_t *v,
                      UtilDiag *d)
{
    *v = ir_load_i64(ind->dtype, ind->data, i);
    if (*v < -dim || *v >= dim)
        return ir_node_error(g, n, d, "index %lld is out of range for an axis of size %lld", (long long)*v,
                             (long long)dim);
    if (*v < 0)
        *v += dim;
    return 0;
}

int interp_k_gather(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out, UtilDiag *d)
{
    const IrArray *x = in[0], *ind = in[1];
    int axis = ir_norm_axis(g, n, ir_attr_int(n, IR_A_axis), x->shape.rank, d);
    if (axis < 0)
        return -1;
    size_t es = ir_dtype_size(x->dtype);
    int64_t outer = 1, inner = 1, dim = x->shape.dims[axis], ni = ir_array_numel(ind);
    for (int i = 0; i < axis; i++)
        outer *= x->shape.dims[i];
    for (int i = axis + 1; i < x->shape.rank; i++)
        inner *= x->shape.dims[i];
    size_t len = (size_t)inner * es;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t j = 0; j < ni; j++) {
            int64_t v;
            if (interp_load_index(g, n, ind, j, dim, &v, d))
                return -1;
            if (len)
                memcpy((char *)out[0]->data + (size_t)(o * ni + j) * len,
                       (const char *)x->data + (size_t)(o * dim + v) * len, len);
        }
    return 0;
}

int interp_elements_walk(const IrGraph *g, const IrNode *n, const IrShape *data, const IrArray *ind, int axis,
                         InterpElementFn fn, void *ctx, UtilDiag *d)
{
    int64_t st[IR_MAX_RANK], idx[IR_MAX_RANK] = { 0 }, cnt = ir_array_numel(ind);
    interp_strides(data, st);
    for (int64_t i = 0; i < cnt; i++, interp_next_index(&ind->shape, idx)) {
        int64_t v, s = 0;
        if (interp_load_index(g, n, ind, i, data->dims[axis], &v, d))
            return -1;
        for (int k = 0; k < data->rank; k++)
            s += (k == axis ? v : idx[k]) * st[k];
        fn(ctx, i, s);
    }
    return 0;
}

typedef struct GatherCtx {
    const IrArray *x;
    IrArray *y;
} GatherCtx;

static void gather_element(void *ctx, int64_t i, int64_t off)
{
    GatherCtx *c = ctx;
    size_t es = ir_dtype_size(c->x->dtype);
    memcpy((char *)c->y->data + (size_t)i * es, (const char *)c->x->data + (size_t)off * es, es);
}

int interp_k_gatherelements(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out,
                            UtilDiag *d)
{
    const IrArray *x = in[0], *ind = in[1];
    int axis = ir_norm_axis(g, n, ir_attr_int(n, IR_A_axis), x->shape.rank, d);
    if (axis < 0)
        return -1;
    GatherCtx c = { x, out[0] };
    return interp_elements_walk(g, n, &x->shape, ind, axis, gather_element, &c, d);
}

int interp_k_gathernd(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out,
                      UtilDiag *d)
{
    const IrArray *x = in[0], *ind = in[1];
    int b = (int)ir_attr_int(n, IR_A_batch_dims), q = ind->shape.rank;
    int64_t m = ind->shape.dims[q - 1], batches = 1, tuples = 1, slice = 1, st[IR_MAX_RANK];
    for (int i = 0; i < b; i++)
        batches *= x->shape.dims[i];
    for (int i = b; i < q - 1; i++)
        tuples *= ind->shape.dims[i];
    for (int i = b + (int)m; i < x->shape.rank; i++)
        slice *= x->shape.dims[i];
    interp_strides(&x->shape, st);
    size_t es = ir_dtype_size(x->dtype), len = (size_t)slice * es;
    int64_t per_batch = b ? st[b - 1] : 0;
    for (int64_t bi = 0; bi < batches; bi++)
        for (int64_t t = 0; t < tuples; t++) {
            int64_t s = bi * per_batch, row = (bi * tuples + t) * m;
            for (int64_t k = 0; k < m; k++) {
                int64_t v;
                if (interp_load_index(g, n, ind, row + k, x->shape.dims[b + k], &v, d))
                    return -1;
                s += v * st[b + k];
            }
            if (len)
                memcpy((char *)out[0]->data + (size_t)(bi * tuples + t) * len,
                       (const char *)x->data + (size_t)s * es, len);
        }
    return 0;
}

int interp_k_shape(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out, UtilDiag *d)
{
    (void)g; (void)d;
    if (n->op == IR_OP_Size) {
        ir_store_i64(IR_DT_I64, out[0]->data, 0, ir_array_numel(in[0]));
        return 0;
    }
    int64_t r = in[0]->shape.rank, start = ir_attr_int(n, IR_A_start);
    if (start < 0)
        start += r;
    start = start < 0 ? 0 : start > r ? r : start;
    for (int64_t i = 0; i < out[0]->shape.dims[0]; i++)
        ir_store_i64(IR_DT_I64, out[0]->data, i, in[0]->shape.dims[start + i]);
    return 0;
}

int interp_k_constant(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out,
                      UtilDiag *d)
{
    (void)in;
    IrArray *y = out[0];
    const IrAttr *a;
    if ((a = ir_attr(n, IR_A_value)) != NULL) {
        if (ir_array_bytes(a->v.tensor) != ir_array_bytes(y))
            return ir_node_error(g, n, d, "the value attribute does not match the output");
        if (ir_array_bytes(y))
            memcpy(y->data, a->v.tensor->data, ir_array_bytes(y));
    } else if ((a = ir_attr(n, IR_A_value_float)) != NULL) {
        ir_store_f64(y->dtype, y->data, 0, a->kind == IR_AK_INT ? (double)a->v.i : a->v.f);
    } else if ((a = ir_attr(n, IR_A_value_floats)) != NULL) {
        for (int i = 0; i < a->n; i++)
            ir_store_f64(y->dtype, y->data, i, a->v.floats[i]);
    } else if ((a = ir_attr(n, IR_A_value_int)) != NULL) {
        ir_store_i64(y->dtype, y->data, 0, a->v.i);
    } else if ((a = ir_attr(n, IR_A_value_ints)) != NULL) {
        for (int i = 0; i < a->n; i++)
            ir_store_i64(y->dtype, y->data, i, a->v.ints[i]);
    } else {
        return ir_node_error(g, n, d, "no supported value attribute");
    }
    return 0;
}

int interp_k_constantofshape(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out,
                             UtilDiag *d)
{
    (void)g; (void)in; (void)d;
    const IrAttr *a = ir_attr(n, IR_A_value);
    if (!a)
        return 0;                                         /* float32 zeros: already zeroed */
    size_t es = ir_dtype_size(out[0]->dtype);
    int64_t cnt = ir_array_numel(out[0]);
    for (int64_t i = 0; i < cnt; i++)
        memcpy((char *)out[0]->data + (size_t)i * es, a->v.tensor->data, es);
    return 0;
}

/* Maps a padded coordinate to the input for reflect / edge / wrap (dim > 0). */
static int64_t pad_map(int mode, int64_t i, int64_t dim)
{
    if (i >= 0 && i < dim)
        return i;
    if (mode == 2)
        return i < 0 ? 0 : dim - 1;
    if (mode == 3)
        return ((i % dim) + dim) % dim;
    if (dim == 1)
        return 0;
    int64_t period = 2 * (dim - 1), p = ((i % period) + period) % period;
    return p < dim ? p : period - p;
}

static int64_t src_pad(const MoveCtx *c, const int64_t *o)
{
    int64_t s = 0;
    for (int k = 0; k < c->out.rank; k++) {
        int64_t i = o[k] - c->a[k], dim = c->in.dims[k];
        if (i < 0 || i >= dim) {
            if (c->pad_mode == 0)
                return -1;
            i = pad_map(c->pad_mode, i, dim);
        }
        s += i * c->st[k];
    }
    return s;
}

int interp_k_pad(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out, UtilDiag *d)
{
    (void)g; (void)d;
    MoveCtx c;
    ctx_init(&c, in[0], out[0]);
    const char *mode = ir_attr_str(n, IR_A_mode);
    c.pad_mode = !strcmp(mode, "reflect") ? 1 : !strcmp(mode, "edge") ? 2 : !strcmp(mode, "wrap") ? 3 : 0;
    const IrArray *axes = opt_in(n, in, 3), *value = opt_in(n, in, 2);
    int r = c.in.rank, nax = axes ? (int)ir_array_numel(axes) : r;
    for (int i = 0; i < nax; i++) {
        int64_t ax = axes ? ir_load_i64(axes->dtype, axes->data, i) : i;
        c.a[ax < 0 ? ax + r : ax] = ir_load_i64(in[1]->dtype, in[1]->data, i);
    }
    unsigned char zero[16] = { 0 };
    const void *fill = value && ir_array_numel(value) == 1 ? value->data : zero;
    move_by_index(in[0], out[0], src_pad, &c, fill);
    return 0;
}

static int64_t src_expand(const MoveCtx *c, const int64_t *o)
{
    return interp_bcast_index(&c->in, o, c->out.rank);
}

int interp_k_expand(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out,
                    UtilDiag *d)
{
    (void)g; (void)n; (void)d;
    MoveCtx c;
    ctx_init(&c, in[0], out[0]);
    move_by_index(in[0], out[0], src_expand, &c, NULL);
    return 0;
}

static int64_t src_tile(const MoveCtx *c, const int64_t *o)
{
    int64_t s = 0;
    for (int k = 0; k < c->out.rank; k++)
        s += (o[k] % c->in.dims[k]) * c->st[k];
    return s;
}

int interp_k_tile(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out, UtilDiag *d)
{
    (void)g; (void)n; (void)d;
    MoveCtx c;
    ctx_init(&c, in[0], out[0]);
    move_by_index(in[0], out[0], src_tile, &c, NULL);
    return 0;
}

int interp_k_range(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out, UtilDiag *d)
{
    (void)g; (void)n; (void)d;
    IrDType dt = out[0]->dtype;
    int64_t cnt = ir_array_numel(out[0]);
    for (int64_t i = 0; i < cnt; i++) {
        if (ir_dtype_is_float(dt)) {
            double v = ir_load_f64(dt, in[0]->data, 0) + (double)i * ir_load_f64(dt, in[2]->data, 0);
            ir_store_f64(dt, out[0]->data, i, v);
        } else {                                          /* wraps instead of overflowing; stays in range */
            uint64_t v = (uint64_t)ir_load_i64(dt, in[0]->data, 0) +
                         (uint64_t)i * (uint64_t)ir_load_i64(dt, in[2]->data, 0);
            ir_store_i64(dt, out[0]->data, i, (int64_t)v);
        }
    }
    return 0;
}

/* DepthToSpace: out[n][c][h*b+i][w*b+j] = in[n][ch][h][w] with
 * ch = (i*b+j)*C' + c (DCR) or c*b*b + i*b + j (CRD). */
static int64_t src_d2s(const MoveCtx *c, const int64_t *o)
{
    int64_t b = c->blk, oc = c->out.dims[1];
    int64_t i = o[2] % b, j = o[3] % b;
    int64_t ch = c->crd ? o[1] * b * b + i * b + j : (i * b + j) * oc + o[1];
    return o[0] * c->st[0] + ch * c->st[1] + (o[2] / b) * c->st[2] + (o[3] / b) * c->st[3];
}

/* SpaceToDepth: out[n][(i*b+j)*C + c][h][w] = in[n][c][h*b+i][w*b+j]. */
static int64_t src_s2d(const MoveCtx *c, const int64_t *o)
{
    int64_t b = c->blk, ic = c->in.dims[1];
    int64_t blk = o[1] / ic, ch = o[1] % ic, i = blk / b, j = blk % b;
    return o[0] * c->st[0] + ch * c->st[1] + (o[2] * b + i) * c->st[2] + (o[3] * b + j) * c->st[3];
}

static int block_move(const IrNode *n, const IrArray *const *in, IrArray *const *out, SrcIndex f)
{
    MoveCtx c;
    ctx_init(&c, in[0], out[0]);
    c.blk = ir_attr_int(n, IR_A_blocksize);
    c.crd = !strcmp(ir_attr_str(n, IR_A_mode), "CRD");
    move_by_index(in[0], out[0], f, &c, NULL);
    return 0;
}

int interp_k_depthtospace(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out,
                          UtilDiag *d)
{
    (void)g; (void)d;
    return block_move(n, in, out, src_d2s);
}

int interp_k_spacetodepth(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out,
                          UtilDiag *d)
{
    (void)g; (void)d;
    return block_move(n, in, out, src_s2d);
}
