/* lower/data.c — compute templates of the data-movement operators:
 * Transpose, Concat, Split, Slice, Gather, GatherElements, GatherND, Pad
 * (constant / reflect / edge / wrap), Expand, Tile, DepthToSpace,
 * SpaceToDepth, ConstantOfShape, Range, Resize.
 *
 * Most are output-driven (low_map): each output element loads the input
 * element a per-operator index function names.  Operand tensors (perm,
 * starts, pads, repeats, ...) are compile-time values.
 *
 * Runtime indices (Gather, GatherElements, GatherND) are normalized
 * (negative counts from the end) and checked: an index outside [-dim, dim)
 * yields 0 (the load itself reads element 0 of the input instead, so no
 * kernel reads out of bounds; the interpreter reports such an index as an
 * error). */
#include "lower/lower_impl.h"

#include <math.h>
#include <string.h>

/* cond ? buf[flat] : fill, loading at index 0 when cond is false. */
static LoopExpr *guarded_load(Low *L, int buf, LoopExpr *flat, LoopExpr *cond, LoopExpr *fill, IrDType t)
{
    if (!cond)
        return low_load(L, buf, flat, t);
    LoopExpr *safe = loop_select(L->p, cond, flat, low_i(L, 0));
    return loop_select(L->p, loop_expr_copy(L->p, cond), low_load(L, buf, safe, t), fill);
}

static IrDType out_t(Low *L) { return low_buf(L, low_out(L, 0))->dtype; }

/* ------------------------------------------------------------ Transpose */

typedef struct Perm { int64_t perm[IR_MAX_RANK]; } Perm;

static LoopExpr *transpose_elem(Low *L, void *ctx, const int *v, LoopStmt *body)
{
    (void)body;
    const Perm *pm = ctx;
    int x = low_in(L, 0);
    LoopExpr *idx[IR_MAX_RANK];
    for (int k = 0; k < low_buf(L, x)->shape.rank; k++)
        idx[pm->perm[k]] = low_v(L, v[k]);
    return low_load(L, x, low_index(L, x, idx), out_t(L));
}

int low_transpose(Low *L)
{
    Perm pm;
    const int64_t *perm;
    int r = low_buf(L, low_in(L, 0))->shape.rank;
    int cnt = ir_attr_ints(L->n, IR_A_perm, &perm);
    for (int k = 0; k < r; k++)
        pm.perm[k] = cnt == r ? (perm[k] < 0 ? perm[k] + r : perm[k]) : r - 1 - k;
    return low_map(L, low_out(L, 0), transpose_elem, &pm);
}

/* ------------------------------------------------------- Concat / Split */

/* Copies the part of shape `shape_of` from src to dst, the axis index
 * shifted by src_off in src and dst_off in dst. */
static int copy_shifted(Low *L, LoopStmt *k, int dst, int src, int shape_of, int axis, int64_t dst_off,
                        int64_t src_off)
{
    const LoopBuf *sb = low_buf(L, shape_of);
    int r = sb->shape.rank, v[IR_MAX_RANK];
    if (low_vars(L, r, "i", v))
        return low_oom(L);
    LoopExpr *si[IR_MAX_RANK], *di[IR_MAX_RANK];
    for (int i = 0; i < r; i++) {
        si[i] = low_v(L, v[i]);
        di[i] = low_v(L, v[i]);
    }
    if (src_off)
        si[axis] = low_bin(L, LOOP_ADD, si[axis], low_i(L, src_off));
    if (dst_off)
        di[axis] = low_bin(L, LOOP_ADD, di[axis], low_i(L, dst_off));
    LoopStmt *st = low_store(L, dst, low_index(L, dst, di), low_load(L, src, low_index(L, src, si), low_buf(L, dst)->dtype));
    return low_add(L, k, low_nest(L, r, v, sb->shape.dims, st)) ? low_oom(L) : 0;
}

int low_concat(Low *L)
{
    int y = low_out(L, 0), r = low_buf(L, y)->shape.rank;
    int64_t ax = ir_attr_int(L->n, IR_A_axis);
    int axis = (int)(ax < 0 ? ax + r : ax);
    LoopStmt *k = loop_block(L->p);
    int64_t off = 0;
    int copies = 0;
    for (int i = 0; i < L->n->n_in; i++) {
        int x = low_in(L, i);
        if (x < 0)
            continue;
        /* an input written in place as a slice of y (Concat in place, lower.c) */
        const LoopBuf *xb = low_buf(L, x);
        int here = xb->alias_of == y && xb->base == off * low_buf(L, y)->strides[axis];
        if (!here && copy_shifted(L, k, y, x, x, axis, off, 0))
            return -1;
        copies += !here;
        off += xb->shape.dims[axis];
    }
    return copies ? low_kernel(L, k) : 0;
}

int low_split(Low *L)
{
    int x = low_in(L, 0), r = low_buf(L, x)->shape.rank;
    int64_t ax = ir_attr_int(L->n, IR_A_axis);
    int axis = (int)(ax < 0 ? ax + r : ax);
    /* chunk lengths: the outputs' dims; an absent output spans its chunk */
    int nout = L->n->n_out;
    int64_t dim = low_buf(L, x)->shape.dims[axis], sizes[IR_VARIADIC];
    int ns = low_has(L, 1) ? low_known_ints(L, 1, sizes, IR_VARIADIC) : 0;
    int64_t chunk = ir_has_attr(L->n, IR_A_num_outputs) ? (dim + nout - 1) / nout : dim / nout;
    LoopStmt *k = loop_block(L->p);
    int64_t off = 0;
    for (int i = 0; i < nout; i++) {
        int y = low_out(L, i);
        int64_t len = y >= 0 ? low_buf(L, y)->shape.dims[axis] : ns > i ? sizes[i] : i == nout - 1 ? dim - chunk * (nout - 1) : chunk;
        if (y >= 0 && copy_shifted(L, k, y, x, y, axis, 0, off))
            return -1;
        off += len;
    }
    return low_kernel(L, k);
}

/* ---------------------------------------------------------------- Slice */

typedef struct Affine { int64_t first[IR_MAX_RANK], step[IR_MAX_RANK]; } Affine;

static LoopExpr *slice_elem(Low *L, void *ctx, const int *v, LoopStmt *body)
{
    (void)body;
    const Affine *a = ctx;
    int x = low_in(L, 0);
    LoopExpr *idx[IR_MAX_RANK];
    for (int k = 0; k < low_buf(L, x)->shape.rank; k++) {
        idx[k] = low_v(L, v[k]);
        if (a->step[k] != 1)
            idx[k] = low_bin(L, LOOP_MUL, idx[k], low_i(L, a->step[k]));
        if (a->first[k])
            idx[k] = low_bin(L, LOOP_ADD, idx[k], low_i(L, a->first[k]));
    }
    return low_load(L, x, low_index(L, x, idx), out_t(L));
}

int low_slice(Low *L)
{
    const IrShape *xs = &low_buf(L, low_in(L, 0))->shape;
    int r = xs->rank;
    int64_t st[IR_MAX_RANK], en[IR_MAX_RANK], axes[IR_MAX_RANK], steps[IR_MAX_RANK];
    int cs = low_known_ints(L, 1, st, IR_MAX_RANK), ce = low_known_ints(L, 2, en, IR_MAX_RANK);
    int ca = low_has(L, 3) ? low_known_ints(L, 3, axes, IR_MAX_RANK) : 0;
    int cp = low_has(L, 4) ? low_known_ints(L, 4, steps, IR_MAX_RANK) : 0;
    if (cs < 0 || ce < 0 || ca < 0 || cp < 0)
        return ir_node_error(L->g, L->n, L->d, "starts, ends, axes and steps must be known at compile time");
    Affine a;
    for (int k = 0; k < r; k++) {
        a.first[k] = 0;
        a.step[k] = 1;
    }
    for (int i = 0; i < cs && i < ce; i++) {
        int64_t axv = i < ca ? axes[i] : i;
        int ax = (int)(axv < 0 ? axv + r : axv);
        int64_t step = i < cp ? steps[i] : 1, count;
        ir_slice_axis(xs->dims[ax], st[i], en[i], step, &a.first[ax], &count);
        a.step[ax] = step;
    }
    return low_map(L, low_out(L, 0), slice_elem, &a);
}

/* ------------------------------------------------------------- Gathers */

/* Runtime index j (any integer dtype) of an axis of size dim: the LET of
 * its normalized value; *ok gets the range check. */
static int norm_index(Low *L, LoopStmt *body, LoopExpr *j, int64_t dim, LoopExpr **ok)
{
    int jv = low_let(L, body, "j", low_convert(L, j, IR_DT_I64), 0);
    if (jv < 0)
        return -1;
    LoopExpr *n = loop_select(L->p, low_bin(L, LOOP_LT, low_v(L, jv), low_i(L, 0)),
                              low_bin(L, LOOP_ADD, low_v(L, jv), low_i(L, dim)), low_v(L, jv));
    int nv = low_let(L, body, "jn", n, 0);
    if (nv < 0)
        return -1;
    *ok = low_and(L, *ok, low_in_range(L, low_v(L, nv), 0, dim));
    return nv;
}

static LoopExpr *gather_elem(Low *L, void *ctx, const int *v, LoopStmt *body)
{
    int axis = *(const int *)ctx;
    int x = low_in(L, 0), ind = low_in(L, 1);
    const LoopBuf *xb = low_buf(L, x), *ib = low_buf(L, ind);
    int q = ib->shape.rank;
    LoopExpr *ii[IR_MAX_RANK], *xi[IR_MAX_RANK], *ok = NULL;
    for (int k = 0; k < q; k++)
        ii[k] = low_v(L, v[axis + k]);
    int j = norm_index(L, body, low_load(L, ind, low_index(L, ind, ii), ib->dtype), xb->shape.dims[axis], &ok);
    if (j < 0)
        return NULL;
    for (int k = 0; k < xb->shape.rank; k++)
        xi[k] = k < axis ? low_v(L, v[k]) : k == axis ? low_v(L, j) : low_v(L, v[k + q - 1]);
    return guarded_load(L, x, low_index(L, x, xi), ok, low_const(L, out_t(L), 0), out_t(L));
}

/* A table of 256 bytes read at the bytes of an 8-bit tensor (passes/lut.c;
 * the indices' Cast to int32 skipped, and the Cast to 8 bits before it,
 * lower/lower.c): entry (uint8) q, which for an int8 q < 0 is Gather's
 * index counted from the end, 256 + q.  Always in range: no check.  The load is one the vectorizer reads with byte
 * permutes (loop_load_is_table). */
static LoopExpr *table_elem(Low *L, void *ctx, const int *v, LoopStmt *body)
{
    (void)body;
    int x = low_in(L, 0), ind = low_in(L, 1);
    const LoopBuf *ib = low_buf(L, ind);
    LoopExpr *q = low_load(L, ind, low_v(L, v[0]), ib->dtype);   /* one flat loop: the index carries over */
    q = low_convert(L, low_convert(L, q, *(const IrDType *)ctx), IR_DT_U8);
    return low_load(L, x, low_convert(L, q, IR_DT_I64), out_t(L));
}

/* The 8-bit type a table Gather's indices pass through: the indices'
 * buffer's own, or for a float32 buffer (both Casts before the Gather
 * skipped, lower/lower.c) the type of the first Cast; else IR_DT_UNDEF. */
static IrDType table_via(Low *L)
{
    const IrGraph *g = L->g;
    IrDType bt = low_buf(L, low_in(L, 1))->dtype;
    if (bt == IR_DT_I8 || bt == IR_DT_U8)
        return bt;
    int p = g->tensors[L->n->in[1]].producer;
    IrDType via = p >= 0 && g->nodes[p].op == IR_OP_Cast ? g->tensors[g->nodes[p].in[0]].v.dtype : IR_DT_UNDEF;
    return bt == IR_DT_F32 && (via == IR_DT_I8 || via == IR_DT_U8) ? via : IR_DT_UNDEF;
}

int low_gather(Low *L)
{
    int r = low_buf(L, low_in(L, 0))->shape.rank;
    int64_t ax = ir_attr_int(L->n, IR_A_axis);
    int axis = (int)(ax < 0 ? ax + r : ax);
    const LoopBuf *xb = low_buf(L, low_in(L, 0)), *ib = low_buf(L, low_in(L, 1));
    IrDType via = table_via(L);
    if (r == 1 && xb->shape.dims[0] == 256 && ir_dtype_size(xb->dtype) == 1 && xb->storage == LOOP_ST_CONST &&
        via != IR_DT_UNDEF && !loop_buf_has_halo(ib) && !loop_buf_has_halo(low_buf(L, low_out(L, 0))))
        return low_map_flat(L, low_out(L, 0), table_elem, &via);
    return low_map(L, low_out(L, 0), gather_elem, &axis);
}

static LoopExpr *gatherelements_elem(Low *L, void *ctx, const int *v, LoopStmt *body)
{
    int axis = *(const int *)ctx;
    int x = low_in(L, 0), ind = low_in(L, 1);
    const LoopBuf *xb = low_buf(L, x), *ib = low_buf(L, ind);
    LoopExpr *ii[IR_MAX_RANK], *xi[IR_MAX_RANK], *ok = NULL;
    for (int k = 0; k < ib->shape.rank; k++)
        ii[k] = low_v(L, v[k]);
    int j = norm_index(L, body, low_load(L, ind, low_index(L, ind, ii), ib->dtype), xb->shape.dims[axis], &ok);
    if (j < 0)
        return NULL;
    for (int k = 0; k < xb->shape.rank; k++)
        xi[k] = low_v(L, k == axis ? j : v[k]);
    return guarded_load(L, x, low_index(L, x, xi), ok, low_const(L, out_t(L), 0), out_t(L));
}

int low_gatherelements(Low *L)
{
    int r = low_buf(L, low_in(L, 0))->shape.rank;
    int64_t ax = ir_attr_int(L->n, IR_A_axis);
    int axis = (int)(ax < 0 ? ax + r : ax);
    return low_map(L, low_out(L, 0), gatherelements_elem, &axis);
}

static LoopExpr *gathernd_elem(Low *L, void *ctx, const int *v, LoopStmt *body)
{
    int b = *(const int *)ctx;
    int x = low_in(L, 0), ind = low_in(L, 1);
    const LoopBuf *xb = low_buf(L, x), *ib = low_buf(L, ind);
    int q = ib->shape.rank;
    int64_t m = ib->shape.dims[q - 1];
    LoopExpr *xi[IR_MAX_RANK], *ok = NULL;
    for (int k = 0; k < b; k++)
        xi[k] = low_v(L, v[k]);
    for (int64_t t = 0; t < m; t++) {
        LoopExpr *ii[IR_MAX_RANK];
        for (int k = 0; k < q - 1; k++)
            ii[k] = low_v(L, v[k]);
        ii[q - 1] = low_i(L, t);
        int j = norm_index(L, body, low_load(L, ind, low_index(L, ind, ii), ib->dtype), xb->shape.dims[b + t], &ok);
        if (j < 0)
            return NULL;
        xi[b + t] = low_v(L, j);
    }
    for (int k = b + (int)m; k < xb->shape.rank; k++)
        xi[k] = low_v(L, v[q - 1 + k - b - (int)m]);
    return guarded_load(L, x, low_index(L, x, xi), ok, low_const(L, out_t(L), 0), out_t(L));
}

int low_gathernd(Low *L)
{
    int b = (int)ir_attr_int(L->n, IR_A_batch_dims);
    return low_map(L, low_out(L, 0), gathernd_elem, &b);
}

/* ------------------------------------------------------------------ Pad */

typedef struct PadCtx {
    int64_t begin[IR_MAX_RANK];
    int mode;              /* 0 constant, 1 reflect, 2 edge, 3 wrap */
    double value;
    int value_buf;         /* runtime scalar fill, or -1 */
} PadCtx;

/* Input coordinate of padded coordinate i on an axis of size dim (reflect, edge, wrap). */
static LoopExpr *pad_map(Low *L, int mode, LoopExpr *i, int64_t dim)
{
    if (mode == 2 || dim == 1)
        return low_bin(L, LOOP_MIN, low_bin(L, LOOP_MAX, i, low_i(L, 0)), low_i(L, dim - 1));
    if (mode == 3)
        return low_bin(L, LOOP_MOD, i, low_i(L, dim));
    int64_t period = 2 * (dim - 1);
    LoopExpr *p = low_bin(L, LOOP_MOD, i, low_i(L, period));
    return loop_select(L->p, low_bin(L, LOOP_LT, p, low_i(L, dim)), loop_expr_copy(L->p, p),
                       low_bin(L, LOOP_SUB, low_i(L, period), loop_expr_copy(L->p, p)));
}

static LoopExpr *pad_elem(Low *L, void *ctx, const int *v, LoopStmt *body)
{
    const PadCtx *c = ctx;
    int x = low_in(L, 0);
    const LoopBuf *xb = low_buf(L, x);
    LoopExpr *xi[IR_MAX_RANK], *ok = NULL;
    for (int k = 0; k < xb->shape.rank; k++) {
        int64_t dim = xb->shape.dims[k];
        LoopExpr *i = low_v(L, v[k]);
        if (c->begin[k])
            i = low_bin(L, LOOP_SUB, i, low_i(L, c->begin[k]));
        if (c->begin[k] == 0 && low_buf(L, low_out(L, 0))->shape.dims[k] <= dim) {
            xi[k] = i;                                   /* never outside on this axis */
            continue;
        }
        int iv = low_let(L, body, "p", i, 0);
        if (iv < 0)
            return NULL;
        if (c->mode == 0 || dim == 0) {
            ok = low_and(L, ok, low_in_range(L, low_v(L, iv), 0, dim));
            xi[k] = low_v(L, iv);
        } else {
            xi[k] = pad_map(L, c->mode, low_v(L, iv), dim);
        }
    }
    IrDType t = out_t(L);
    LoopExpr *fill = c->value_buf >= 0 ? low_load(L, c->value_buf, low_i(L, 0), t) : low_const(L, t, c->value);
    return guarded_load(L, x, low_index(L, x, xi), ok, fill, t);
}

int low_pad(Low *L)
{
    const IrShape *xs = &low_buf(L, low_in(L, 0))->shape;
    int r = xs->rank;
    PadCtx c = { .value_buf = -1 };
    const char *mode = ir_attr_str(L->n, IR_A_mode);
    c.mode = !strcmp(mode, "reflect") ? 1 : !strcmp(mode, "edge") ? 2 : !strcmp(mode, "wrap") ? 3 : 0;
    int64_t pads[2 * IR_MAX_RANK], axes[IR_MAX_RANK];
    int np = low_known_ints(L, 1, pads, 2 * IR_MAX_RANK);
    int na = low_has(L, 3) ? low_known_ints(L, 3, axes, IR_MAX_RANK) : r;
    if (np < 0 || na < 0)
        return ir_node_error(L->g, L->n, L->d, "pads and axes must be known at compile time");
    for (int i = 0; i < na; i++) {
        int64_t ax = low_has(L, 3) ? axes[i] : i;
        c.begin[ax < 0 ? ax + r : ax] = pads[i];
    }
    const IrArray *val = low_known(L, 2);
    if (val && ir_array_numel(val) == 1)
        c.value = ir_load_f64(val->dtype, val->data, 0);
    else if (!val && low_has(L, 2))
        c.value_buf = low_in(L, 2);
    return low_map(L, low_out(L, 0), pad_elem, &c);
}

/* --------------------------------------------------------- Expand, Tile */

static LoopExpr *expand_elem(Low *L, void *ctx, const int *v, LoopStmt *body)
{
    (void)ctx;
    (void)body;
    int x = low_in(L, 0);
    return low_load(L, x, low_bcast(L, x, v, low_buf(L, low_out(L, 0))->shape.rank), out_t(L));
}

int low_expand(Low *L) { return low_map(L, low_out(L, 0), expand_elem, NULL); }

static LoopExpr *tile_elem(Low *L, void *ctx, const int *v, LoopStmt *body)
{
    (void)ctx;
    (void)body;
    int x = low_in(L, 0), y = low_out(L, 0);
    const LoopBuf *xb = low_buf(L, x);
    LoopExpr *xi[IR_MAX_RANK];
    for (int k = 0; k < xb->shape.rank; k++)
        xi[k] = xb->shape.dims[k] == low_buf(L, y)->shape.dims[k] ? low_v(L, v[k])
              : low_bin(L, LOOP_MOD, low_v(L, v[k]), low_i(L, xb->shape.dims[k]));
    return low_load(L, x, low_index(L, x, xi), out_t(L));
}

int low_tile(Low *L) { return low_map(L, low_out(L, 0), tile_elem, NULL); }

/* ---------------------------------------- DepthToSpace / SpaceToDepth */

static LoopExpr *d2s_elem(Low *L, void *ctx, const int *v, LoopStmt *body)
{
    (void)ctx;
    (void)body;
    int x = low_in(L, 0), y = low_out(L, 0);
    int64_t b = ir_attr_int(L->n, IR_A_blocksize);
    LoopExpr *xi[4];
    xi[0] = low_v(L, v[0]);
    if (L->n->op == IR_OP_DepthToSpace) {
        /* out[n][c][h*b+i][w*b+j] = in[n][ch][h][w], ch = (i*b+j)*C' + c (DCR) or c*b*b + i*b + j (CRD) */
        int64_t oc = low_buf(L, y)->shape.dims[1];
        LoopExpr *i = low_bin(L, LOOP_MOD, low_v(L, v[2]), low_i(L, b)), *j = low_bin(L, LOOP_MOD, low_v(L, v[3]), low_i(L, b));
        LoopExpr *ij = low_bin(L, LOOP_ADD, low_bin(L, LOOP_MUL, i, low_i(L, b)), j);
        xi[1] = !strcmp(ir_attr_str(L->n, IR_A_mode), "CRD")
                    ? low_bin(L, LOOP_ADD, low_bin(L, LOOP_MUL, low_v(L, v[1]), low_i(L, b * b)), ij)
                    : low_bin(L, LOOP_ADD, low_bin(L, LOOP_MUL, ij, low_i(L, oc)), low_v(L, v[1]));
        xi[2] = low_bin(L, LOOP_DIV, low_v(L, v[2]), low_i(L, b));
        xi[3] = low_bin(L, LOOP_DIV, low_v(L, v[3]), low_i(L, b));
    } else {
        /* out[n][(i*b+j)*C + c][h][w] = in[n][c][h*b+i][w*b+j] */
        int64_t ic = low_buf(L, x)->shape.dims[1];
        LoopExpr *blk = low_bin(L, LOOP_DIV, low_v(L, v[1]), low_i(L, ic));
        xi[1] = low_bin(L, LOOP_MOD, low_v(L, v[1]), low_i(L, ic));
        xi[2] = low_bin(L, LOOP_ADD, low_bin(L, LOOP_MUL, low_v(L, v[2]), low_i(L, b)),
                        low_bin(L, LOOP_DIV, blk, low_i(L, b)));
        xi[3] = low_bin(L, LOOP_ADD, low_bin(L, LOOP_MUL, low_v(L, v[3]), low_i(L, b)),
                        low_bin(L, LOOP_MOD, loop_expr_copy(L->p, blk), low_i(L, b)));
    }
    return low_load(L, x, low_index(L, x, xi), out_t(L));
}

int low_depthtospace(Low *L) { return low_map(L, low_out(L, 0), d2s_elem, NULL); }

/* ------------------------------------------------ ConstantOfShape, Range */

static LoopExpr *fill_elem(Low *L, void *ctx, const int *v, LoopStmt *body)
{
    (void)v;
    (void)body;
    const IrArray *val = ctx;
    IrDType t = out_t(L);
    if (!val)
        return low_const(L, t, 0);
    if (ir_dtype_is_float(t))
        return low_const(L, t, ir_load_f64(val->dtype, val->data, 0));
    return low_const(L, t, (double)ir_load_i64(val->dtype, val->data, 0));
}

int low_constantofshape(Low *L)
{
    const IrAttr *a = ir_attr(L->n, IR_A_value);
    return low_map(L, low_out(L, 0), fill_elem, a ? a->v.tensor : NULL);
}

/* A scalar input: its compile-time value as a constant, else a load. */
static LoopExpr *scalar_in(Low *L, int k, IrDType t)
{
    const IrArray *a = low_known(L, k);
    if (a)
        return low_const(L, t, ir_dtype_is_float(t) ? ir_load_f64(a->dtype, a->data, 0)
                                                    : (double)ir_load_i64(a->dtype, a->data, 0));
    return low_load(L, low_in(L, k), low_i(L, 0), t);
}

static LoopExpr *range_elem(Low *L, void *ctx, const int *v, LoopStmt *body)
{
    (void)ctx;
    (void)body;
    IrDType t = low_ctype(out_t(L));
    return low_bin(L, LOOP_ADD, scalar_in(L, 0, t), low_bin(L, LOOP_MUL, low_convert(L, low_v(L, v[0]), t),
                                                             scalar_in(L, 2, t)));
}

int low_range(Low *L) { return low_map(L, low_out(L, 0), range_elem, NULL); }

/* --------------------------------------------------------------- Resize */

/* Each axis gets compile-time tap tables: for output coordinate o, `cap`
 * (input index, weight) pairs (zero weights pad short rows); an output
 * element is the sum over the product of its axes' taps.  Tables are
 * constant buffers of the program. */
typedef struct RzTab {
    int64_t cap;
    int idx, w;            /* const buffers [out][cap] */
    int outside;           /* const buffer [out] of bool (tf_crop_and_resize), or -1 */
    int same;              /* the identity (output o reads input o, weight 1): no table, one tap */
} RzTab;

typedef struct RzCtx {
    int r;
    RzTab tab[IR_MAX_RANK];
    double extrap;
    IrDType t;
} RzCtx;

static double rz_coord(const char *m, double o, double scale, int64_t lin, int64_t lout, double r0, double r1)
{
    /* ONNX divides by the resized length scale * lin (not always whole),
     * not by the output size, for align_corners and tf_crop_and_resize */
    double len = scale * (double)lin - 1;
    if (!strcmp(m, "asymmetric"))
        return o / scale;
    if (!strcmp(m, "align_corners"))
        return lout == 1 ? 0.0 : o * (double)(lin - 1) / len;
    if (!strcmp(m, "pytorch_half_pixel"))
        return lout > 1 ? (o + 0.5) / scale - 0.5 : 0.0;
    if (!strcmp(m, "tf_crop_and_resize"))
        return lout > 1 ? r0 * (double)(lin - 1) + o * (r1 - r0) * (double)(lin - 1) / len
                        : 0.5 * (r0 + r1) * (double)(lin - 1);
    if (!strcmp(m, "half_pixel_symmetric")) {
        double adj = (double)lout / (scale * (double)lin), center = (double)lin / 2;
        return center * (1 - adj) + (o + 0.5) / scale - 0.5;
    }
    return (o + 0.5) / scale - 0.5;
}

static double rz_filter(int mode, double a, double t)
{
    t = fabs(t);
    if (mode == 1)
        return t < 1 ? 1 - t : 0;
    if (t <= 1)
        return ((a + 2) * t - (a + 3)) * t * t + 1;
    return t < 2 ? ((a * t - 5 * a) * t + 8 * a) * t - 4 * a : 0;
}

/* Longest output axis of a Resize: its index and weight tables (up to 4
 * taps of 16 bytes per position) stay below 256 MiB. */
#define RZ_MAX_AXIS ((int64_t)1 << 22)

static int64_t rz_clamp(int64_t v, int64_t n) { return v < 0 ? 0 : v >= n ? n - 1 : v; }

static int rz_table(Low *L, RzTab *tb, int mode, const char *coord, const char *nearest, double a, int excl,
                    int aa, double scale, int64_t lin, int64_t lout, double r0, double r1, IrDType t)
{
    /* taps left + first .. left + 1 - first; antialias (downscaling) widens
     * the filter by 1/scale and normalizes its weights */
    double support = mode == 1 ? 1 : 2, fs = aa && scale < 1 ? scale : 1;
    int64_t first = mode == 0 ? 0 : fs < 1 ? (int64_t)floor(-support / fs) + 1 : mode == 1 ? 0 : -1;
    if (first < -64)
        return -2;
    tb->cap = mode == 0 ? 1 : 2 - 2 * first;
    int tf = !strcmp(coord, "tf_crop_and_resize");
    size_t n = (size_t)(lout * tb->cap);
    int64_t *idx = util_arena_alloc(&L->p->arena, n * sizeof *idx + 1);
    void *w = util_arena_alloc(&L->p->arena, n * ir_dtype_size(t) + 1);
    unsigned char *out = tf ? util_arena_alloc(&L->p->arena, (size_t)lout + 1) : NULL;
    if (!idx || !w || (tf && !out))
        return -1;
    int same = lin == lout && !tf;
    for (int64_t o = 0; o < lout; o++) {
        double x = rz_coord(coord, (double)o, scale, lin, lout, r0, r1), ws[132] = { 0 }, sum = 0;
        int64_t is[132] = { 0 }, far = 4 - first;
        if (tf)
            out[o] = x < 0 || x > (double)(lin - 1);
        if (x < (double)-far)
            x = (double)-far;
        if (x > (double)(lin + far))
            x = (double)(lin + far);
        if (mode == 0) {
            double v = !strcmp(nearest, "floor") ? floor(x) : !strcmp(nearest, "ceil") ? ceil(x)
                     : !strcmp(nearest, "round_prefer_ceil") ? floor(x + 0.5) : ceil(x - 0.5);
            is[0] = rz_clamp((int64_t)v, lin);
            ws[0] = 1;
        } else {
            int64_t left = (int64_t)floor(x);
            for (int64_t k = 0; k < tb->cap; k++) {
                int64_t j = left + first + k;
                ws[k] = rz_filter(mode, a, fs * ((double)j - x));
                if (excl && (j < 0 || j >= lin))
                    ws[k] = 0;
                is[k] = rz_clamp(j, lin);
                sum += ws[k];
            }
            if ((excl || aa) && sum != 0)
                for (int64_t k = 0; k < tb->cap; k++)
                    ws[k] /= sum;
        }
        for (int64_t k = 0; k < tb->cap; k++) {
            idx[o * tb->cap + k] = is[k];
            ir_store_f64(t, w, o * tb->cap + k, ws[k]);
            same &= ws[k] == 0 || (ws[k] == 1 && is[k] == o);
        }
    }
    /* an axis the Resize leaves as it is (N and C of an image's, linear
     * or cubic: 2 or 4 taps of weights 1, 0, ...): one tap at o instead of
     * every tap of the table (fpn_small's bilinear Resizes of [1, 64, h, w]
     * computed 16 taps an element instead of 4) */
    if (same) {
        tb->cap = 1;
        tb->same = 1;
        tb->idx = tb->w = tb->outside = -1;
        return 0;
    }
    IrShape s2 = { .rank = 2, .dims = { lout, tb->cap } }, s1 = { .rank = 1, .dims = { lout } };
    tb->idx = loop_add_buf(L->p, "rz_idx", IR_DT_I64, &s2, LOOP_ST_CONST);
    tb->w = loop_add_buf(L->p, "rz_w", t, &s2, LOOP_ST_CONST);
    tb->outside = tf ? loop_add_buf(L->p, "rz_out", IR_DT_BOOL, &s1, LOOP_ST_CONST) : -1;
    if (tb->idx < 0 || tb->w < 0 || (tf && tb->outside < 0))
        return -1;
    L->p->bufs[tb->idx].data = idx;
    L->p->bufs[tb->w].data = w;
    if (tf)
        L->p->bufs[tb->outside].data = out;
    return 0;
}

static LoopExpr *resize_elem(Low *L, void *ctx, const int *v, LoopStmt *body)
{
    const RzCtx *c = ctx;
    int x = low_in(L, 0), tv[IR_MAX_RANK];
    IrDType t = c->t;
    if (low_vars(L, c->r, "t", tv))
        return NULL;
    /* sum over the taps of every axis of prod(weights) * x[taps] */
    int acc = low_let(L, body, "acc", low_const(L, t, 0), 1);
    LoopStmt *in = loop_block(L->p);
    if (acc < 0 || !in)
        return NULL;
    LoopExpr *xi[IR_MAX_RANK], *w = NULL, *outside = NULL;
    int64_t caps[IR_MAX_RANK];
    for (int a = 0; a < c->r; a++) {
        const RzTab *tb = &c->tab[a];
        caps[a] = tb->cap;
        if (tb->same) {
            xi[a] = low_v(L, v[a]);
            continue;
        }
        LoopExpr *ti[2] = { low_v(L, v[a]), low_v(L, tv[a]) };
        LoopExpr *ti2[2] = { low_v(L, v[a]), low_v(L, tv[a]) };
        xi[a] = low_load(L, tb->idx, low_index(L, tb->idx, ti), IR_DT_I64);
        LoopExpr *wa = low_load(L, tb->w, low_index(L, tb->w, ti2), t);
        w = w ? low_bin(L, LOOP_MUL, w, wa) : wa;
        if (tb->outside >= 0) {
            LoopExpr *o1[1] = { low_v(L, v[a]) };
            LoopExpr *oa = low_load(L, tb->outside, low_index(L, tb->outside, o1), IR_DT_BOOL);
            outside = outside ? low_bin(L, LOOP_OR, outside, oa) : oa;
        }
    }
    LoopExpr *term = low_bin(L, LOOP_MUL, w ? w : low_const(L, t, 1), low_load(L, x, low_index(L, x, xi), t));
    if (low_add(L, in, loop_assign(L->p, acc, low_bin(L, LOOP_ADD, low_v(L, acc), term))) ||
        low_add(L, body, low_nest(L, c->r, tv, caps, in)))
        return NULL;
    if (outside)
        return loop_select(L->p, outside, low_const(L, t, c->extrap), low_v(L, acc));
    return low_v(L, acc);
}

int low_resize(Low *L)
{
    const IrNode *n = L->n;
    int x = low_in(L, 0), y = low_out(L, 0);
    const IrShape *xs = &low_buf(L, x)->shape, *ys = &low_buf(L, y)->shape;
    int r = xs->rank;
    const char *mode = ir_attr_str(n, IR_A_mode), *coord = ir_attr_str(n, IR_A_coordinate_transformation_mode);
    int m = !strcmp(mode, "linear") ? 1 : !strcmp(mode, "cubic") ? 2 : 0;
    /* geometry as the shape rule: scales or sizes on axes */
    int64_t axes[IR_MAX_RANK], sizes[IR_MAX_RANK];
    double scales[IR_MAX_RANK], scale[IR_MAX_RANK], r0[IR_MAX_RANK], r1[IR_MAX_RANK];
    const int64_t *ax;
    int nax = ir_attr_ints(n, IR_A_axes, &ax);
    if (!ir_has_attr(n, IR_A_axes))
        nax = r;
    for (int i = 0; i < nax; i++)
        axes[i] = ir_has_attr(n, IR_A_axes) ? (ax[i] < 0 ? ax[i] + r : ax[i]) : i;
    const IrArray *roi = low_known(L, 1), *sc = low_known(L, 2), *sz = low_known(L, 3);
    if ((low_has(L, 1) && !roi) || (low_has(L, 2) && !sc) || (low_has(L, 3) && !sz))
        return ir_node_error(L->g, n, L->d, "roi, scales and sizes must be known at compile time");
    int use_scales = sc && ir_array_numel(sc) > 0;
    for (int i = 0; i < nax; i++) {
        if (use_scales)
            scales[i] = ir_load_f64(sc->dtype, sc->data, i);
        else if (sz)
            sizes[i] = ir_load_i64(sz->dtype, sz->data, i);
    }
    const char *pol = ir_attr_str(n, IR_A_keep_aspect_ratio_policy);
    int policy = !strcmp(pol, "not_larger") ? 1 : !strcmp(pol, "not_smaller") ? 2 : 0;
    IrShape o;
    ir_resize_geometry(xs, use_scales ? scales : NULL, use_scales ? NULL : sizes, nax, axes, policy, scale, &o);
    for (int a = 0; a < r; a++) {
        r0[a] = 0;
        r1[a] = 1;
    }
    if (roi && ir_array_numel(roi) == 2 * nax)
        for (int i = 0; i < nax; i++) {
            r0[axes[i]] = ir_load_f64(roi->dtype, roi->data, i);
            r1[axes[i]] = ir_load_f64(roi->dtype, roi->data, nax + i);
        }
    for (int a = 0; a < r; a++)     /* the tables are built at compile time, per output position */
        if (ys->dims[a] > RZ_MAX_AXIS)
            return ir_node_error(L->g, n, L->d, "output axis %d has %lld positions; Resize on target cpu allows at "
                                 "most %lld per axis", a, (long long)ys->dims[a], (long long)RZ_MAX_AXIS);
    RzCtx c = { .r = r, .extrap = ir_attr_float(n, IR_A_extrapolation_value), .t = low_ctype(low_buf(L, y)->dtype) };
    if (!ir_dtype_is_float(c.t))
        c.t = IR_DT_F64;
    for (int a = 0; a < r; a++) {
        int rc = rz_table(L, &c.tab[a], m, coord, ir_attr_str(n, IR_A_nearest_mode), ir_attr_float(n, IR_A_cubic_coeff_a),
                          ir_attr_int(n, IR_A_exclude_outside) != 0, ir_attr_int(n, IR_A_antialias) != 0, scale[a],
                          xs->dims[a], ys->dims[a], r0[a], r1[a], c.t);
        if (rc == -2)
            return ir_node_error(L->g, n, L->d, "the antialiasing filter is too wide (downscaling by more than 32)");
        if (rc != 0)
            return low_oom(L);
    }
    return low_map(L, y, resize_elem, &c);
}

/* ------------------------------------------- Trilu, EyeLike, OneHot */

/* Trilu: x where col - row >= k (upper) or <= k (lower), else 0. */
static LoopExpr *trilu_elem(Low *L, void *ctx, const int *v, LoopStmt *body)
{
    (void)ctx;
    (void)body;
    int x = low_in(L, 0), r = low_buf(L, x)->shape.rank;
    IrDType t = out_t(L);
    LoopExpr *k = low_has(L, 1) ? scalar_in(L, 1, IR_DT_I64) : low_i(L, 0);
    LoopExpr *d = low_bin(L, LOOP_SUB, low_v(L, v[r - 1]), low_v(L, v[r - 2]));
    LoopExpr *keep = ir_attr_int(L->n, IR_A_upper) ? low_bin(L, LOOP_LE, k, d) : low_bin(L, LOOP_LE, d, k);
    LoopExpr *idx[IR_MAX_RANK];
    for (int i = 0; i < r; i++)
        idx[i] = low_v(L, v[i]);
    return loop_select(L->p, keep, low_load(L, x, low_index(L, x, idx), t), low_const(L, t, 0));
}

int low_trilu(Low *L) { return low_map(L, low_out(L, 0), trilu_elem, NULL); }

/* EyeLike: 1 where col - row == k. */
static LoopExpr *eyelike_elem(Low *L, void *ctx, const int *v, LoopStmt *body)
{
    (void)ctx;
    (void)body;
    IrDType t = out_t(L);
    LoopExpr *d = low_bin(L, LOOP_SUB, low_v(L, v[1]), low_v(L, v[0]));
    return loop_select(L->p, low_bin(L, LOOP_EQ, d, low_i(L, ir_attr_int(L->n, IR_A_k))), low_const(L, t, 1),
                       low_const(L, t, 0));
}

int low_eyelike(Low *L) { return low_map(L, low_out(L, 0), eyelike_elem, NULL); }

/* OneHot: values[1] where the depth axis index equals the (wrapped) index,
 * else values[0]; an index outside [-depth, depth) matches nothing. */
static LoopExpr *onehot_elem(Low *L, void *ctx, const int *v, LoopStmt *body)
{
    int axis = *(const int *)ctx;
    int ind = low_in(L, 0), vals = low_in(L, 2), y = low_out(L, 0);
    int r = low_buf(L, y)->shape.rank;
    int64_t depth = low_buf(L, y)->shape.dims[axis];
    IrDType t = out_t(L);
    LoopExpr *ii[IR_MAX_RANK];
    for (int k = 0, j = 0; k < r; k++)
        if (k != axis)
            ii[j++] = low_v(L, v[k]);
    int j = low_let(L, body, "j", low_convert(L, low_load(L, ind, low_index(L, ind, ii), low_buf(L, ind)->dtype),
                                              IR_DT_I64), 0);
    if (j < 0)
        return NULL;
    LoopExpr *jn = loop_select(L->p, low_bin(L, LOOP_LT, low_v(L, j), low_i(L, 0)),
                               low_bin(L, LOOP_ADD, low_v(L, j), low_i(L, depth)), low_v(L, j));
    return loop_select(L->p, low_bin(L, LOOP_EQ, jn, low_v(L, v[axis])), low_load(L, vals, low_i(L, 1), t),
                       low_load(L, vals, low_i(L, 0), t));
}

int low_onehot(Low *L)
{
    int r = low_buf(L, low_out(L, 0))->shape.rank;
    int64_t a = ir_attr_int(L->n, IR_A_axis);
    int axis = (int)(a < 0 ? a + r : a);
    return low_map(L, low_out(L, 0), onehot_elem, &axis);
}

/* -------------------------------------- ReverseSequence, CenterCropPad */

/* y[.., t, .., b, ..] = x[.., len[b] - 1 - t, .., b, ..] for t < len[b], else
 * x itself; len is clamped to [0, T] (the interpreter rejects it outside). */
static LoopExpr *revseq_elem(Low *L, void *ctx, const int *v, LoopStmt *body)
{
    (void)ctx;
    int x = low_in(L, 0), lens = low_in(L, 1);
    const LoopBuf *xb = low_buf(L, x);
    int ba = (int)ir_attr_int(L->n, IR_A_batch_axis), ta = (int)ir_attr_int(L->n, IR_A_time_axis);
    int64_t T = xb->shape.dims[ta];
    LoopExpr *len = low_bin(L, LOOP_MIN, low_bin(L, LOOP_MAX, low_load(L, lens, low_v(L, v[ba]), IR_DT_I64), low_i(L, 0)),
                            low_i(L, T));
    int lv = low_let(L, body, "len", len, 0);
    if (lv < 0)
        return NULL;
    LoopExpr *idx[IR_MAX_RANK];
    for (int i = 0; i < xb->shape.rank; i++)
        idx[i] = low_v(L, v[i]);
    idx[ta] = loop_select(L->p, low_bin(L, LOOP_LT, low_v(L, v[ta]), low_v(L, lv)),
                          low_bin(L, LOOP_SUB, low_bin(L, LOOP_SUB, low_v(L, lv), low_i(L, 1)), low_v(L, v[ta])),
                          low_v(L, v[ta]));
    return low_load(L, x, low_index(L, x, idx), out_t(L));
}

int low_reversesequence(Low *L) { return low_map(L, low_out(L, 0), revseq_elem, NULL); }

/* CenterCropPad: y[o] = x[o + (dx - dy) / 2 per axis] when inside x, else 0
 * (the shift truncates toward zero, as the interpreter). */
static LoopExpr *ccp_elem(Low *L, void *ctx, const int *v, LoopStmt *body)
{
    (void)ctx;
    (void)body;
    int x = low_in(L, 0);
    const LoopBuf *xb = low_buf(L, x), *yb = low_buf(L, low_out(L, 0));
    LoopExpr *idx[IR_MAX_RANK], *ok = NULL;
    for (int i = 0; i < xb->shape.rank; i++) {
        int64_t diff = xb->shape.dims[i] - yb->shape.dims[i], sh = diff >= 0 ? diff / 2 : -((-diff) / 2);
        idx[i] = sh ? low_bin(L, LOOP_ADD, low_v(L, v[i]), low_i(L, sh)) : low_v(L, v[i]);
        if (sh < 0 || sh + yb->shape.dims[i] > xb->shape.dims[i]) {
            ok = low_and(L, ok, low_in_range(L, idx[i], 0, xb->shape.dims[i]));
            idx[i] = loop_expr_copy(L->p, idx[i]);
        }
    }
    return guarded_load(L, x, low_index(L, x, idx), ok, low_const(L, out_t(L), 0), out_t(L));
}

int low_centercroppad(Low *L) { return low_map(L, low_out(L, 0), ccp_elem, NULL); }

/* ------------------------------------------- ScatterElements, ScatterND */

/* One kernel: y = data (a copy nest), then, serially in index order, each
 * update combined into y at its runtime position (reduction none / add /
 * mul / max / min).  An index outside [-dim, dim) skips its update (the
 * interpreter reports it). */
static LoopExpr *combine(Low *L, int red, LoopExpr *a, LoopExpr *b)
{
    switch (red) {
    case 1: return low_bin(L, LOOP_ADD, a, b);
    case 2: return low_bin(L, LOOP_MUL, a, b);
    case 3: return loop_select(L->p, low_bin(L, LOOP_LT, a, b), loop_expr_copy(L->p, b), loop_expr_copy(L->p, a));
    case 4: return loop_select(L->p, low_bin(L, LOOP_LT, b, a), loop_expr_copy(L->p, b), loop_expr_copy(L->p, a));
    default: return b;
    }
}

static int scatter_kernel(Low *L, LoopStmt *k, int nd)
{
    int x = low_in(L, 0), ind = low_in(L, 1), upd = low_in(L, 2), y = low_out(L, 0);
    const LoopBuf *xb = low_buf(L, x), *ib = low_buf(L, ind), *ub = low_buf(L, upd);
    int red = ir_scatter_reduction(L->n);
    if (red < 0)
        return ir_node_error(L->g, L->n, L->d, "unknown reduction '%s'", ir_attr_str(L->n, IR_A_reduction));
    IrDType t = xb->dtype, ct = ir_dtype_is_float(t) ? low_ctype(t) : t;
    if (low_copy_into(L, k, y, x) != 0)
        return -1;
    /* loops over the updates */
    int ur = ub->shape.rank, v[IR_MAX_RANK];
    if (low_vars(L, ur, "u", v))
        return low_oom(L);
    LoopStmt *b = loop_block(L->p);
    LoopExpr *ui[IR_MAX_RANK], *yi[IR_MAX_RANK], *ok = NULL;
    for (int i = 0; i < ur; i++)
        ui[i] = low_v(L, v[i]);
    if (!nd) {
        int64_t a = ir_attr_int(L->n, IR_A_axis);
        int axis = (int)(a < 0 ? a + xb->shape.rank : a);
        int j = norm_index(L, b, low_load(L, ind, low_index(L, ind, ui), ib->dtype), xb->shape.dims[axis], &ok);
        if (j < 0)
            return low_oom(L);
        for (int i = 0; i < ur; i++)
            yi[i] = low_v(L, i == axis ? j : v[i]);
    } else {
        int q = ib->shape.rank;
        int64_t m = ib->shape.dims[q - 1];
        for (int64_t jj = 0; jj < m; jj++) {
            LoopExpr *ii[IR_MAX_RANK];
            for (int i = 0; i < q - 1; i++)
                ii[i] = low_v(L, v[i]);
            ii[q - 1] = low_i(L, jj);
            int j = norm_index(L, b, low_load(L, ind, low_index(L, ind, ii), ib->dtype), xb->shape.dims[jj], &ok);
            if (j < 0)
                return low_oom(L);
            yi[jj] = low_v(L, j);
        }
        for (int i = (int)m; i < xb->shape.rank; i++)
            yi[i] = low_v(L, v[q - 1 + i - (int)m]);
    }
    int at = low_let(L, b, "at", low_index(L, y, yi), 0);
    if (at < 0)
        return low_oom(L);
    LoopExpr *val = combine(L, red, low_load(L, y, low_v(L, at), ct), low_load(L, upd, low_index(L, upd, ui), ct));
    LoopStmt *st = low_store(L, y, low_v(L, at), val);
    /* the position is only formed from in-range indices under the IF */
    if (low_add(L, b, ok ? loop_if(L->p, ok, st, NULL) : st) || low_add(L, k, low_nest(L, ur, v, ub->shape.dims, b)))
        return low_oom(L);
    return 0;
}

int low_scatterelements(Low *L)
{
    LoopStmt *k = loop_block(L->p);
    return !k ? low_oom(L) : scatter_kernel(L, k, 0) ? -1 : low_kernel(L, k);
}

int low_scatternd(Low *L)
{
    LoopStmt *k = loop_block(L->p);
    return !k ? low_oom(L) : scatter_kernel(L, k, 1) ? -1 : low_kernel(L, k);
}

/* ------------------------------------------------ windows, MaxUnpool */

/* Hann / Hamming / Blackman: y[i] from t = 2 pi i / N (N = size when
 * periodic, else size - 1; a single symmetric tap is 1), in float64. */
static LoopExpr *window_elem(Low *L, void *ctx, const int *v, LoopStmt *body)
{
    (void)ctx;
    (void)body;
    IrDType t = IR_DT_F64;
    int64_t size = low_buf(L, low_out(L, 0))->shape.dims[0];
    double N = (double)(ir_attr_int(L->n, IR_A_periodic) ? size : size - 1);
    if (N == 0)
        return low_const(L, t, 1);
    int tv = low_let(L, body, "t", low_bin(L, LOOP_MUL, low_convert(L, low_v(L, v[0]), t), low_const(L, t, 2 * M_PI / N)), 0);
    if (tv < 0)
        return NULL;
#define COS(k) loop_call(L->p, LOOP_I_cos, 1, (LoopExpr *[]){ low_bin(L, LOOP_MUL, low_const(L, t, k), low_v(L, tv)) })
    switch (L->n->op) {
    case IR_OP_HannWindow: {
        LoopExpr *s = loop_call(L->p, LOOP_I_sin, 1, (LoopExpr *[]){ low_bin(L, LOOP_MUL, low_const(L, t, 0.5), low_v(L, tv)) });
        return low_bin(L, LOOP_MUL, s, loop_expr_copy(L->p, s));
    }
    case IR_OP_HammingWindow:
        return low_bin(L, LOOP_SUB, low_const(L, t, 25.0 / 46.0), low_bin(L, LOOP_MUL, low_const(L, t, 21.0 / 46.0), COS(1)));
    default:
        return low_bin(L, LOOP_ADD, low_bin(L, LOOP_SUB, low_const(L, t, 0.42), low_bin(L, LOOP_MUL, low_const(L, t, 0.5), COS(1))),
                       low_bin(L, LOOP_MUL, low_const(L, t, 0.08), COS(2)));
    }
#undef COS
}

int low_window_fn(Low *L) { return low_map(L, low_out(L, 0), window_elem, NULL); }

static LoopExpr *zero_elem(Low *L, void *ctx, const int *v, LoopStmt *body)
{
    (void)ctx;
    (void)v;
    (void)body;
    return low_const(L, out_t(L), 0);
}

/* MaxUnpool: y = 0, then x[i] at the flat position indices[i] of the
 * default-shaped unpooled tensor, unflattened and placed in y (which
 * output_shape may make larger).  An index out of range is skipped. */
int low_maxunpool(Low *L)
{
    int x = low_in(L, 0), ind = low_in(L, 1), y = low_out(L, 0);
    const LoopBuf *xb = low_buf(L, x), *yb = low_buf(L, y);
    IrShape inf;
    if (ir_maxunpool_shape(L->g, L->n, &xb->shape, &inf, L->d))
        return -1;
    int64_t total = ir_shape_numel(&inf), n = ir_shape_numel(&xb->shape);
    LoopStmt *k = loop_block(L->p), *b = loop_block(L->p);
    int iv;
    if (!k || low_map_into(L, k, y, zero_elem, NULL) || low_vars(L, 1, "i", &iv))
        return k ? -1 : low_oom(L);
    int v = low_let(L, b, "j", low_load(L, ind, low_v(L, iv), IR_DT_I64), 0);
    if (v < 0)
        return low_oom(L);
    LoopExpr *off = NULL;
    int64_t inner = 1;
    for (int d = inf.rank - 1; d >= 0; d--) {
        LoopExpr *c = low_bin(L, LOOP_MOD, low_bin(L, LOOP_DIV, low_v(L, v), low_i(L, inner)), low_i(L, inf.dims[d]));
        LoopExpr *term = low_bin(L, LOOP_MUL, c, low_i(L, yb->strides[d]));
        off = off ? low_bin(L, LOOP_ADD, off, term) : term;
        inner *= inf.dims[d];
    }
    LoopStmt *st = low_store(L, y, off ? off : low_i(L, 0), low_load(L, x, low_v(L, iv), yb->dtype));
    if (low_add(L, b, loop_if(L->p, low_in_range(L, low_v(L, v), 0, total), st, NULL)) ||
        low_add(L, k, loop_for(L->p, iv, low_i(L, n), LOOP_SERIAL, b)))
        return low_oom(L);
    return low_kernel(L, k);
}

/* ------------------------------------------------------ RotaryEmbedding */

/* y = x with the first rotary_embedding_dim elements of each head rotated in
 * pairs (e, e + half), or (2j, 2j + 1) when interleaved, by the cos / sin
 * cache row of the position (position_ids[b, s], clamped into the cache, or
 * b * seq + s).  Output-driven: every index below is clamped, so both arms
 * of each select load inside their buffers. */
typedef struct Rope {
    int r3;
    int64_t nh, seq, hs, rd, half, rows;
    int inter;
} Rope;

static LoopExpr *rope_elem(Low *L, void *ctx, const int *v, LoopStmt *body)
{
    const Rope *c = ctx;
    int x = low_in(L, 0), cc = low_in(L, 1), sc = low_in(L, 2), pos = low_in(L, 3), y = low_out(L, 0);
    IrDType t = low_ctype(low_buf(L, x)->dtype);
    int r = low_buf(L, y)->shape.rank;
    LoopExpr *idx[IR_MAX_RANK];
    for (int i = 0; i < r; i++)
        idx[i] = low_v(L, v[i]);
    int flat = low_let(L, body, "f", low_index(L, y, idx), 0);
    int e = low_let(L, body, "e", c->r3 ? low_bin(L, LOOP_MOD, low_v(L, v[2]), low_i(L, c->hs)) : low_v(L, v[3]), 0);
    if (flat < 0 || e < 0)
        return NULL;
    LoopExpr *xe = low_load(L, x, low_v(L, flat), t);
    if (c->half == 0)
        return xe;
    int bv = v[0], sv = c->r3 ? v[1] : v[2];
    LoopExpr *row = low_bin(L, LOOP_ADD, low_bin(L, LOOP_MUL, low_v(L, bv), low_i(L, c->seq)), low_v(L, sv));
    if (pos >= 0)
        row = low_bin(L, LOOP_MIN, low_bin(L, LOOP_MAX, low_load(L, pos, row, IR_DT_I64), low_i(L, 0)), low_i(L, c->rows - 1));
    int rv = low_let(L, body, "row", row, 0);
    LoopExpr *first = c->inter ? low_bin(L, LOOP_EQ, low_bin(L, LOOP_MOD, low_v(L, e), low_i(L, 2)), low_i(L, 0))
                               : low_bin(L, LOOP_LT, low_v(L, e), low_i(L, c->half));
    int fv = low_let(L, body, "first", first, 0);
    if (rv < 0 || fv < 0)
        return NULL;
    LoopExpr *j = c->inter ? low_bin(L, LOOP_DIV, low_v(L, e), low_i(L, 2))
                           : loop_select(L->p, low_v(L, fv), low_v(L, e), low_bin(L, LOOP_SUB, low_v(L, e), low_i(L, c->half)));
    int jv = low_let(L, body, "j", low_bin(L, LOOP_MIN, j, low_i(L, c->half - 1)), 0);
    int64_t step = c->inter ? 1 : c->half;
    LoopExpr *partner = loop_select(L->p, low_v(L, fv), low_bin(L, LOOP_ADD, low_v(L, e), low_i(L, step)),
                                    low_bin(L, LOOP_SUB, low_v(L, e), low_i(L, step)));
    int pv = low_let(L, body, "p", low_bin(L, LOOP_MIN, low_bin(L, LOOP_MAX, partner, low_i(L, 0)), low_i(L, c->hs - 1)), 0);
    if (jv < 0 || pv < 0)
        return NULL;
    LoopExpr *ci = low_bin(L, LOOP_ADD, low_bin(L, LOOP_MUL, low_v(L, rv), low_i(L, c->half)), low_v(L, jv));
    int cosv = low_let(L, body, "cs", low_load(L, cc, ci, t), 0);
    int sinv = low_let(L, body, "sn", low_load(L, sc, loop_expr_copy(L->p, ci), t), 0);
    int xv = low_let(L, body, "xe", xe, 0);
    int xp = low_let(L, body, "xp", low_load(L, x, low_bin(L, LOOP_ADD, low_bin(L, LOOP_SUB, low_v(L, flat), low_v(L, e)),
                                                           low_v(L, pv)), t), 0);
    if (cosv < 0 || sinv < 0 || xv < 0 || xp < 0)
        return NULL;
    LoopExpr *rot = loop_select(L->p, low_v(L, fv),
                                low_bin(L, LOOP_SUB, low_bin(L, LOOP_MUL, low_v(L, cosv), low_v(L, xv)),
                                        low_bin(L, LOOP_MUL, low_v(L, sinv), low_v(L, xp))),
                                low_bin(L, LOOP_ADD, low_bin(L, LOOP_MUL, low_v(L, sinv), low_v(L, xp)),
                                        low_bin(L, LOOP_MUL, low_v(L, cosv), low_v(L, xv))));
    return loop_select(L->p, low_bin(L, LOOP_LT, low_v(L, e), low_i(L, c->rd)), rot, low_v(L, xv));
}

int low_rotary(Low *L)
{
    const LoopBuf *xb = low_buf(L, low_in(L, 0)), *cb = low_buf(L, low_in(L, 1));
    Rope c = { .r3 = xb->shape.rank == 3, .inter = ir_attr_int(L->n, IR_A_interleaved) != 0, .rows = cb->shape.dims[0] };
    if (c.r3) {
        c.nh = ir_attr_int(L->n, IR_A_num_heads);
        c.seq = xb->shape.dims[1];
        c.hs = xb->shape.dims[2] / (c.nh ? c.nh : 1);
    } else {
        c.nh = xb->shape.dims[1];
        c.seq = xb->shape.dims[2];
        c.hs = xb->shape.dims[3];
    }
    c.rd = ir_attr_int(L->n, IR_A_rotary_embedding_dim);
    if (c.rd == 0)
        c.rd = c.hs;
    c.half = c.rd / 2;
    return low_map(L, low_out(L, 0), rope_elem, &c);
}

/* ------------------------------------------------ TensorScatter, AffineGrid */

/* TensorScatter: y = past_cache, then update[b, .., s, ..] written at
 * position write_indices[b] + s along axis (circular: modulo the cache
 * length).  A linear write past the cache is skipped (the interpreter
 * reports it). */
int low_tensorscatter(Low *L)
{
    int c = low_in(L, 0), u = low_in(L, 1), w = low_in(L, 2), y = low_out(L, 0);
    const LoopBuf *yb = low_buf(L, y), *ub = low_buf(L, u);
    int r = yb->shape.rank;
    int64_t a = ir_attr_int(L->n, IR_A_axis);
    int axis = (int)(a < 0 ? a + r : a), circular = !strcmp(ir_attr_str(L->n, IR_A_mode), "circular");
    int64_t max = yb->shape.dims[axis];
    LoopStmt *k = loop_block(L->p), *b = loop_block(L->p);
    int v[IR_MAX_RANK];
    if (!k || low_copy_into(L, k, y, c) || low_vars(L, r, "u", v))
        return k ? -1 : low_oom(L);
    LoopExpr *start = w >= 0 ? low_load(L, w, low_v(L, v[0]), IR_DT_I64) : low_i(L, 0);
    LoopExpr *pos = low_bin(L, LOOP_ADD, start, low_v(L, v[axis]));
    if (circular && max > 0)
        pos = low_bin(L, LOOP_MOD, pos, low_i(L, max));
    int pv = low_let(L, b, "pos", pos, 0);
    if (pv < 0)
        return low_oom(L);
    LoopExpr *yi[IR_MAX_RANK], *ui[IR_MAX_RANK];
    for (int i = 0; i < r; i++) {
        yi[i] = low_v(L, i == axis ? pv : v[i]);
        ui[i] = low_v(L, v[i]);
    }
    LoopStmt *st = low_store(L, y, low_index(L, y, yi), low_load(L, u, low_index(L, u, ui), yb->dtype));
    if (!(circular && max > 0))
        st = loop_if(L->p, low_in_range(L, low_v(L, pv), 0, max), st, NULL);
    if (low_add(L, b, st) || low_add(L, k, low_nest(L, r, v, ub->shape.dims, b)))
        return low_oom(L);
    return low_kernel(L, k);
}

/* AffineGrid: y[n, p.., j] = sum_k theta[n, j, k] * h_k with h the
 * normalized output position (x first; align_corners or pixel centres) and
 * h_sp = 1, in float64. */
static LoopExpr *affinegrid_elem(Low *L, void *ctx, const int *v, LoopStmt *body)
{
    (void)ctx;
    (void)body;
    int th = low_in(L, 0);
    const LoopBuf *yb = low_buf(L, low_out(L, 0));
    int sp = yb->shape.rank - 2, align = ir_attr_int(L->n, IR_A_align_corners) != 0;
    IrDType t = IR_DT_F64;
    LoopExpr *row = low_bin(L, LOOP_MUL, low_bin(L, LOOP_ADD, low_bin(L, LOOP_MUL, low_v(L, v[0]), low_i(L, sp)),
                                                 low_v(L, v[sp + 1])), low_i(L, sp + 1));
    LoopExpr *acc = low_load(L, th, low_bin(L, LOOP_ADD, row, low_i(L, sp)), t);
    for (int i = 0; i < sp; i++) {
        double len = (double)yb->shape.dims[sp - i];
        LoopExpr *kk = low_convert(L, low_v(L, v[sp - i]), t), *h;
        if (align)
            h = len > 1 ? low_bin(L, LOOP_ADD, low_const(L, t, -1), low_bin(L, LOOP_MUL, kk, low_const(L, t, 2 / (len - 1))))
                        : low_const(L, t, -1);
        else
            h = low_bin(L, LOOP_ADD, low_const(L, t, -1),
                        low_bin(L, LOOP_DIV, low_bin(L, LOOP_ADD, low_bin(L, LOOP_MUL, kk, low_const(L, t, 2)), low_const(L, t, 1)),
                                low_const(L, t, len)));
        LoopExpr *ti = low_bin(L, LOOP_ADD, loop_expr_copy(L->p, row), low_i(L, i));
        acc = low_bin(L, LOOP_ADD, acc, low_bin(L, LOOP_MUL, low_load(L, th, ti, t), h));
    }
    return acc;
}

int low_affinegrid(Low *L) { return low_map(L, low_out(L, 0), affinegrid_elem, NULL); }
