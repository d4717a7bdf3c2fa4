/* lower/fused.c — the output-driven template every elementwise and
 * data-movement kernel is built from (low_map), and the store of a kernel's
 * result through the members of its fused group (low_fused_store: each
 * member's scalar function, lower/scalar.c, applied in the head's loop
 * nest; docs/passes.md, "Fusion"); flat copies. */
#include "lower/lower_impl.h"

#include <string.h>

static int map_impl(Low *L, LoopStmt *kblock, int out, int flat, LowElemFn f, void *ctx)
{
    const IrShape osh = low_buf(L, out)->shape;   /* a copy: f and the fused store may add buffers */
    int64_t numel = ir_shape_numel(&osh);
    int r = flat ? 1 : osh.rank, vars[IR_MAX_RANK];
    LoopStmt *body = loop_block(L->p);
    if (low_vars(L, r, "i", vars) != 0 || !body)
        return low_oom(L);
    LoopExpr *v = f(L, ctx, vars, body);
    if (!v)
        return low_oom(L);
    LoopExpr *idx[IR_MAX_RANK];
    for (int i = 0; i < r; i++)
        idx[i] = low_v(L, vars[i]);
    LoopStmt *st;
    if (L->n && L->fuse_n && out == low_out(L, 0))      /* a fused group's head: its epilogue */
        st = flat ? low_fused_store_flat(L, low_v(L, vars[0]), v) : low_fused_store(L, 0, idx, v);
    else
        st = low_store(L, out, flat ? low_v(L, vars[0]) : low_index(L, out, idx), v);
    if (low_add(L, body, st) != 0 ||
        low_add(L, kblock, low_nest(L, r, vars, flat ? &numel : osh.dims, body)) != 0)
        return low_oom(L);
    return 0;
}

int low_map_into(Low *L, LoopStmt *kblock, int out, LowElemFn f, void *ctx)
{
    return map_impl(L, kblock, out, 0, f, ctx);
}

int low_map_flat(Low *L, int out, LowElemFn f, void *ctx)
{
    LoopStmt *k = loop_block(L->p);
    if (!k)
        return low_oom(L);
    if (map_impl(L, k, out, 1, f, ctx) != 0)
        return -1;
    return low_kernel(L, k);
}

int low_map(Low *L, int out, LowElemFn f, void *ctx)
{
    LoopStmt *k = loop_block(L->p);
    if (!k)
        return low_oom(L);
    if (low_map_into(L, k, out, f, ctx) != 0)
        return -1;
    return low_kernel(L, k);
}

/* ---------------------------------------------------------- fusion */

/* The group's chain applied to value in blk: each member's scalar
 * function, its operands read at idx (or flat).  The variable holding the
 * last member's result, -1 when out of memory. */
static int chain_apply(Low *L, LoopStmt *blk, LoopExpr *const *idx, const LoopExpr *flat, LoopExpr *value)
{
    const IrNode *head = L->n;
    int node = L->node, rank = low_buf(L, low_out(L, 0))->shape.rank, chain = head->out[0];
    int var = blk ? low_let(L, blk, "f", value, 0) : -1;
    for (int m = 1; var >= 0 && m <= L->fuse_n; m++) {
        L->node = node + m;                      /* the member's operands and attributes */
        L->n = &L->g->nodes[node + m];
        var = low_let(L, blk, "f", low_ew_member(L, blk, chain, var, idx, rank, flat), 0);
        chain = L->n->out[0];
    }
    L->n = head;
    L->node = node;
    return var;
}

/* The group's chain: value, then each member's scalar function, stored
 * into the last member's buffer at idx (or flat). */
static LoopStmt *fused_chain(Low *L, LoopExpr *const *idx, const LoopExpr *flat, LoopExpr *value)
{
    int y = low_out(L, 0), rank = low_buf(L, y)->shape.rank;
    LoopStmt *blk = loop_block(L->p);
    int var = chain_apply(L, blk, idx, flat, value);
    if (var < 0)
        return NULL;
    LoopExpr *at;
    if (flat) {
        at = loop_expr_copy(L->p, flat);
    } else {
        LoopExpr *cp[IR_MAX_RANK];
        for (int i = 0; i < rank; i++)
            cp[i] = loop_expr_copy(L->p, idx[i]);
        at = low_index(L, y, cp);
    }
    L->fused_stores++;
    return low_add(L, blk, low_store(L, y, at, low_v(L, var))) ? NULL : blk;
}

LoopStmt *low_fused_store(Low *L, int out_k, LoopExpr *const *idx, LoopExpr *value)
{
    int y = low_out(L, out_k);
    if (out_k != 0 || !L->fuse_n) {
        const LoopBuf *yb = low_buf(L, y);
        LoopExpr *cp[IR_MAX_RANK];
        for (int i = 0; i < yb->shape.rank; i++)
            cp[i] = loop_expr_copy(L->p, idx[i]);
        return low_store(L, y, low_index(L, y, cp), value);
    }
    return fused_chain(L, idx, NULL, value);
}

LoopStmt *low_fused_store_flat(Low *L, LoopExpr *flat, LoopExpr *value)
{
    if (!L->fuse_n)
        return low_store(L, low_out(L, 0), flat, value);
    return fused_chain(L, NULL, flat, value);
}

int low_fused_early_ok(Low *L)
{
    return L->fuse_n && !low_fused_reads_tensor(L) && low_buf(L, low_out(L, 0))->dtype == IR_DT_F32 &&
           L->g->tensors[L->n->out[0]].v.dtype == IR_DT_F32;
}

LoopExpr *low_fused_value(Low *L, LoopStmt *blk, LoopExpr *value)
{
    LoopExpr *zero = low_i(L, 0);      /* the members' operands all have one element: read at 0 */
    int var = zero ? chain_apply(L, blk, NULL, zero, value) : -1;
    return var < 0 ? NULL : low_convert(L, low_v(L, var), IR_DT_F32);
}

LoopStmt *low_fused_store_done(Low *L, LoopExpr *flat, LoopExpr *value)
{
    L->fused_stores++;
    return low_store(L, low_out(L, 0), flat, value);
}

int low_fused_flat_ok(Low *L)
{
    const IrShape *ys = &low_buf(L, low_out(L, 0))->shape;
    int chain = L->n->out[0];
    for (int m = 1; m <= L->fuse_n; m++) {
        const IrNode *mn = &L->g->nodes[L->node + m];
        for (int k = 0; k < mn->n_in; k++) {
            const IrTensor *t = mn->in[k] >= 0 && mn->in[k] != chain ? &L->g->tensors[mn->in[k]] : NULL;
            if (t && !ir_shape_equal(&t->v.shape, ys) && ir_shape_numel(&t->v.shape) != 1)
                return 0;
            int b = t ? L->tbuf[mn->in[k]] : -1;          /* a halo'd operand: rows apart by more */
            if (b >= 0 && loop_buf_has_halo(&L->p->bufs[b]))
                return 0;
        }
        chain = mn->out[0];
    }
    return 1;
}

int low_fused_reads_tensor(Low *L)
{
    int chain = L->n->out[0];
    for (int m = 1; m <= L->fuse_n; m++) {
        const IrNode *mn = &L->g->nodes[L->node + m];
        for (int k = 0; k < mn->n_in; k++)
            if (mn->in[k] >= 0 && mn->in[k] != chain && ir_shape_numel(&L->g->tensors[mn->in[k]].v.shape) != 1)
                return 1;
        chain = mn->out[0];
    }
    return 0;
}

/* Flat copy: element i of dst (row-major) = element i of src. */
typedef struct CopyCtx { int src, dst; } CopyCtx;

static LoopExpr *copy_elem(Low *L, void *ctx, const int *vars, LoopStmt *body)
{
    (void)body;
    const CopyCtx *c = ctx;
    /* one flat loop; same element count, both row-major: the index carries over */
    return low_load(L, c->src, low_v(L, vars[0]), low_buf(L, c->src)->dtype);
}

int low_copy_bufs(Low *L, int dst, int src, const char *name)
{
    CopyCtx c = { src, dst };
    LoopStmt *k = loop_block(L->p);
    if (!k)
        return low_oom(L);
    if (map_impl(L, k, dst, 1, copy_elem, &c) != 0)
        return -1;
    return low_kernel_named(L, name, k, -1);
}

int low_copy_into(Low *L, LoopStmt *kblock, int dst, int src)
{
    CopyCtx c = { src, dst };
    return map_impl(L, kblock, dst, 1, copy_elem, &c);
}

int low_copy(Low *L)
{
    return low_copy_bufs(L, low_out(L, 0), low_in(L, 0),
                         L->n->name && *L->n->name ? L->n->name : ir_op_name(L->n->op));
}
