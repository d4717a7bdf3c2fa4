/* targets/fpga/place.c — which tensors live off chip, and on-chip tiles of
 * the off-chip weights (docs/targets/fpga.md, "Off-chip memory").
 *
 * Placement.  Every weight array and intermediate of the design is on chip
 * unless that is more than the on-chip budget: then the largest weight
 * arrays (single reader, at least 1 KB, and either more than
 * TGT_FPGA_TILE_ELEMS elements or with a tile of at most half of them: else
 * the array would come back on chip whole) move to external memory (DDR /
 * HBM, an m_axi port of NAME_top) one by one, largest first, until the rest
 * fits; only when no weight is left to move do the largest intermediates (at
 * least 1 KB) follow.
 * Intermediates on chip are NAME_top's local arrays, so C simulation puts them
 * on the stack: they are also kept within TGT_FPGA_STACK_BYTES.
 *
 * Tiles.  A kernel reading an off-chip weight array B directly would take one
 * element per cycle from the port.  Instead, at the outermost loop L whose one
 * iteration reads at most TGT_FPGA_TILE_ELEMS consecutive-range elements of
 * B, the first statement of L's body copies that range into a local array
 * (one burst), and every read of B inside L reads the local array:
 *
 *   for m < M:                              for m < M:
 *     for oh, ow:                             for t < S: tile[t] = B[base(m) + lo + t]
 *       ... B[m*S + c*9 + kh*3 + kw] ...  =>  for oh, ow:
 *                                               ... tile[c*9 + kh*3 + kw - lo] ...
 *
 * The algebra: inside L every index of B is base + sum_v coef_v * v over the
 * loop variables v of the loops inside L (extent E_v), base not depending on
 * them; so the addresses lie in [base + lo, base + hi] with
 * lo = sum min(0, coef_v (E_v - 1)), hi = sum max(0, coef_v (E_v - 1)), and
 * S = hi - lo + 1.  When base's range over the enclosing loops cannot be
 * shown to keep [base + lo, base + hi] inside B, the copy clamps its index
 * (the clamped elements are never read).  The kernel level (L = the whole
 * kernel: base constant) is tried first.  S is at most half of B: a tile of
 * all of B would save nothing on chip. */
#include "targets/fpga/fpga_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ placement */

static int64_t bytes_of(const LoopProgram *p, const CgFixed *fmt, int b)
{
    return (tgt_fpga_buf_bits(p, fmt, b) + 7) / 8;
}

int tgt_fpga_place(LoopProgram *p, const CgFixed *fmt, int64_t budget)
{
    int n = p->n_bufs ? p->n_bufs : 1, moved = 0;
    unsigned char *used = calloc((size_t)n, 1), *one = malloc((size_t)n), *no = calloc((size_t)n, 1);
    int *readers = malloc((size_t)n * sizeof *readers);
    if (!used || !one || !no || !readers) {
        free(used);
        free(one);
        free(no);
        free(readers);
        return -1;
    }
    for (int k = 0; k < p->n_kernels; k++) {
        cg_c_kernel_uses(p, k, one);
        for (int b = 0; b < p->n_bufs; b++)
            used[b] |= one[b];
    }
    cg_c_const_readers(p, readers);
    int64_t total = 0, acts = 0;
    for (int b = 0; b < p->n_bufs; b++) {
        const LoopBuf *bf = &p->bufs[b];
        if (bf->alias_of >= 0 || !used[b] || bf->offchip)
            continue;
        if (bf->storage == LOOP_ST_CONST)
            total += bytes_of(p, fmt, b);
        else if (bf->storage == LOOP_ST_WORKSPACE) {
            total += bytes_of(p, fmt, b);
            acts += bytes_of(p, fmt, b);
        }
    }
    for (int pass = 0; pass < 2; pass++) {
        LoopStorage st = pass ? LOOP_ST_WORKSPACE : LOOP_ST_CONST;
        for (;;) {
            if (total <= budget && (pass == 0 || acts <= TGT_FPGA_STACK_BYTES))
                break;
            int best = -1;
            int64_t bb = 0;
            for (int b = 0; b < p->n_bufs; b++) {
                const LoopBuf *bf = &p->bufs[b];
                if (bf->alias_of >= 0 || !used[b] || bf->offchip || bf->storage != st || no[b] ||
                    (st == LOOP_ST_CONST && readers[b] < 0))
                    continue;
                if (st == LOOP_ST_CONST && ir_shape_numel(&bf->shape) <= TGT_FPGA_TILE_ELEMS && !tgt_fpga_tileable(p, b)) {
                    no[b] = 1;    /* it would come back on chip whole, as its own tile */
                    continue;
                }
                int64_t s = bytes_of(p, fmt, b);
                if (s >= 1024 && s > bb) {
                    bb = s;
                    best = b;
                }
            }
            if (best < 0)
                break;
            p->bufs[best].offchip = 1;
            total -= bb;
            if (st == LOOP_ST_WORKSPACE)
                acts -= bb;
            moved++;
        }
    }
    free(used);
    free(one);
    free(no);
    free(readers);
    return moved;
}

/* ---------------------------------------------------------------- tiles */

/* Does e mention a variable marked in mask (ids below nv)? */
static int mentions(const LoopExpr *e, const unsigned char *mask, int nv)
{
    if (!e)
        return 0;
    switch (e->kind) {
    case LOOP_E_VAR: return e->u.var < nv && mask[e->u.var];
    case LOOP_E_LOAD: return mentions(e->u.load.index, mask, nv);
    case LOOP_E_BIN: return mentions(e->u.bin.a, mask, nv) || mentions(e->u.bin.b, mask, nv);
    case LOOP_E_UN: return mentions(e->u.un.a, mask, nv);
    case LOOP_E_SELECT:
        return mentions(e->u.sel.cond, mask, nv) || mentions(e->u.sel.a, mask, nv) || mentions(e->u.sel.b, mask, nv);
    case LOOP_E_CALL:
        for (int i = 0; i < e->u.call.n && i < 3; i++)
            if (mentions(e->u.call.args[i], mask, nv))
                return 1;
        return 0;
    case LOOP_E_CAST: return mentions(e->u.cast.a, mask, nv);
    default: return 0;
    }
}

int tgt_fpga_affine(TgtFpgaAff *A, const LoopExpr *e, int64_t scale, int nv)
{
    switch (e->kind) {
    case LOOP_E_INT: A->c0 += scale * e->u.i; return 1;
    case LOOP_E_VAR:
        if (e->u.var >= nv || A->forbid[e->u.var])
            return 0;
        if (A->inner[e->u.var])
            A->coef[e->u.var] += scale;
        else
            A->exact = 0;
        return 1;
    case LOOP_E_BIN:
        if (ir_dtype_is_float(e->u.bin.a->type))
            return 0;
        switch (e->u.bin.op) {
        case LOOP_ADD: return tgt_fpga_affine(A, e->u.bin.a, scale, nv) && tgt_fpga_affine(A, e->u.bin.b, scale, nv);
        case LOOP_SUB: return tgt_fpga_affine(A, e->u.bin.a, scale, nv) && tgt_fpga_affine(A, e->u.bin.b, -scale, nv);
        case LOOP_MUL:
            if (e->u.bin.b->kind == LOOP_E_INT)
                return tgt_fpga_affine(A, e->u.bin.a, scale * e->u.bin.b->u.i, nv);
            if (e->u.bin.a->kind == LOOP_E_INT)
                return tgt_fpga_affine(A, e->u.bin.b, scale * e->u.bin.a->u.i, nv);
            break;
        default: break;
        }
        break;
    default: break;
    }
    /* anything else: part of the base, when it does not depend on the inner loops */
    if (mentions(e, A->inner, nv) || mentions(e, A->forbid, nv))
        return 0;
    A->exact = 0;
    return 1;
}

typedef struct Tile {
    LoopProgram *p;
    int buf;                      /* the off-chip weight array */
    int64_t cap;
    int nv;
    unsigned char *inner, *forbid, *outer;
    int64_t *ext, *coef;
    /* while collecting the loads of one candidate loop */
    int n_loads, bad;
    LoopExpr *base;               /* the first load's base (inner variables at 0) */
    int64_t lo, hi;
    int err, made;
    int dry;                      /* only find out whether a tile scope exists */
} Tile;

/* Marks the variables bound inside s: FOR variables with a constant extent
 * are `inner` (with their extent), every other binding `forbid`. */
static void bound_inside(Tile *T, const LoopStmt *s)
{
    if (!s)
        return;
    switch (s->kind) {
    case LOOP_S_FOR:
        if (s->u.loop.var >= T->nv) {
            T->bad = 1;                     /* a variable made after T: a copy loop of ours */
        } else if (s->u.loop.extent->kind == LOOP_E_INT) {
            T->inner[s->u.loop.var] = 1;
            T->ext[s->u.loop.var] = s->u.loop.extent->u.i;
        } else {
            T->forbid[s->u.loop.var] = 1;
        }
        bound_inside(T, s->u.loop.body);
        break;
    case LOOP_S_LET:
        if (s->u.let.var < T->nv)
            T->forbid[s->u.let.var] = 1;
        else
            T->bad = 1;
        break;
    case LOOP_S_IF: bound_inside(T, s->u.cond.then_); bound_inside(T, s->u.cond.else_); break;
    case LOOP_S_BLOCK:
        for (int i = 0; i < s->u.block.n; i++)
            bound_inside(T, s->u.block.items[i]);
        break;
    default: break;
    }
}

/* One load of T->buf inside the candidate: its range, and the common base. */
static void measure(void *ctx, int *buf, LoopExpr **index, int store)
{
    Tile *T = ctx;
    if (store || *buf != T->buf || T->bad)
        return;
    memset(T->coef, 0, (size_t)T->nv * sizeof *T->coef);
    TgtFpgaAff A = { T->inner, T->forbid, T->coef, 0, 1 };
    if (!tgt_fpga_affine(&A, *index, 1, T->nv)) {
        T->bad = 1;
        return;
    }
    int64_t lo = 0, hi = 0;
    for (int v = 0; v < T->nv; v++) {
        if (!T->inner[v] || !T->coef[v])
            continue;
        int64_t span = T->coef[v] * (T->ext[v] > 0 ? T->ext[v] - 1 : 0);
        if (span < 0)
            lo += span;
        else
            hi += span;
    }
    /* the base: the index with the inner variables at 0 */
    int vars[64], nvs = 0;
    LoopExpr *zeros[64];
    for (int v = 0; v < T->nv; v++)
        if (T->inner[v] && loop_expr_uses(*index, v)) {
            if (nvs == 64) {
                T->bad = 1;
                return;
            }
            vars[nvs] = v;
            zeros[nvs++] = loop_int(T->p, 0);
        }
    LoopExpr *base = loop_expr_subst(T->p, *index, vars, zeros, nvs);
    if (!base) {
        T->err = 1;
        return;
    }
    base = loop_simplify_expr(T->p, base);
    if (T->n_loads == 0) {
        T->base = base;
        T->lo = lo;
        T->hi = hi;
    } else if (!loop_expr_equal(base, T->base)) {
        T->bad = 1;
        return;
    } else {
        T->lo = lo < T->lo ? lo : T->lo;
        T->hi = hi > T->hi ? hi : T->hi;
    }
    T->n_loads++;
}

/* The rewrite of each load: tile[sum coef_v v - lo]. */
typedef struct Swap {
    Tile *T;
    int tile;
} Swap;

static void swap(void *ctx, int *buf, LoopExpr **index, int store)
{
    Swap *S = ctx;
    Tile *T = S->T;
    if (store || *buf != T->buf)
        return;
    memset(T->coef, 0, (size_t)T->nv * sizeof *T->coef);
    TgtFpgaAff A = { T->inner, T->forbid, T->coef, 0, 1 };
    tgt_fpga_affine(&A, *index, 1, T->nv);                    /* succeeded in measure() */
    LoopExpr *e = loop_int(T->p, -T->lo);
    for (int v = 0; v < T->nv && e; v++)
        if (T->inner[v] && T->coef[v])
            e = loop_bin(T->p, LOOP_ADD, e, loop_bin(T->p, LOOP_MUL, loop_var(T->p, v), loop_int(T->p, T->coef[v])));
    if (!e) {
        T->err = 1;
        return;
    }
    *buf = S->tile;
    *index = loop_simplify_expr(T->p, e);
}

/* Can base + [lo, hi] be shown inside the buffer over the enclosing loops? */
static int provably_inside(Tile *T)
{
    int64_t *c = calloc((size_t)T->nv + 1, sizeof *c);
    int ok = 0;
    if (c) {
        /* base over the enclosing constant-extent loops, nothing else */
        unsigned char *forbid = malloc((size_t)T->nv + 1);
        if (forbid) {
            for (int v = 0; v < T->nv; v++)
                forbid[v] = !T->outer[v];
            TgtFpgaAff A = { T->outer, forbid, c, 0, 1 };
            if (tgt_fpga_affine(&A, T->base, 1, T->nv) && A.exact) {
                int64_t mn = A.c0, mx = A.c0;
                for (int v = 0; v < T->nv; v++) {
                    int64_t span = c[v] * (T->ext[v] > 0 ? T->ext[v] - 1 : 0);
                    if (span < 0)
                        mn += span;
                    else
                        mx += span;
                }
                ok = mn + T->lo >= 0 && mx + T->hi < ir_shape_numel(&T->p->bufs[T->buf].shape);
            }
            free(forbid);
        }
    }
    free(c);
    return ok;
}

/* Tries loop body `body` (the statements one iteration of L runs, or the whole
 * kernel) as the tile's scope; on success inserts the copy in front of it and
 * returns the new statement (a block), else NULL. */
static LoopStmt *try_scope(Tile *T, LoopStmt *body, const char *kname)
{
    LoopProgram *p = T->p;
    memset(T->inner, 0, (size_t)T->nv);
    memset(T->forbid, 0, (size_t)T->nv);
    T->n_loads = 0;
    T->bad = 0;
    T->base = NULL;
    bound_inside(T, body);
    if (!T->bad)
        loop_stmt_accesses(body, measure, T);
    if (T->err || T->bad || T->n_loads == 0)
        return NULL;
    int64_t S = T->hi - T->lo + 1;
    if (S > T->cap || S < 1)
        return NULL;
    if (T->dry) {
        T->made++;
        return body;
    }
    char name[200];
    snprintf(name, sizeof name, "%s_%s_tile", kname, p->bufs[T->buf].name);
    IrShape ts = { 1, { S } };
    int tile = loop_add_buf(p, name, p->bufs[T->buf].dtype, &ts, LOOP_ST_LOCAL);
    int vt = loop_add_var(p, "t", IR_DT_I64);
    if (tile < 0 || vt < 0) {
        T->err = 1;
        return NULL;
    }
    p->bufs[tile].tensor = p->bufs[T->buf].tensor;   /* the weight's precision (precision.c) */
    /* vt grew n_vars: the masks are only read for ids below T->nv */
    LoopExpr *src = loop_bin(p, LOOP_ADD, loop_bin(p, LOOP_ADD, loop_expr_copy(p, T->base), loop_int(p, T->lo)),
                             loop_var(p, vt));
    if (src && !provably_inside(T)) {
        int64_t last = ir_shape_numel(&p->bufs[T->buf].shape) - 1;
        src = loop_bin(p, LOOP_MIN, loop_bin(p, LOOP_MAX, src, loop_int(p, 0)), loop_int(p, last));
    }
    LoopStmt *copy = src ? loop_for(p, vt, loop_int(p, S), LOOP_SERIAL,
                                    loop_store(p, tile, loop_var(p, vt), loop_load(p, T->buf, loop_simplify_expr(p, src))))
                         : NULL;
    Swap sw = { T, tile };
    loop_stmt_accesses(body, swap, &sw);
    LoopStmt *blk = loop_block(p);
    if (!copy || !blk || T->err || loop_block_add(p, blk, copy) || loop_block_add(p, blk, body)) {
        T->err = 1;
        return NULL;
    }
    T->made++;
    return blk;
}

typedef struct Reads {
    int buf, found;
} Reads;

static void reads_one(void *ctx, int *buf, LoopExpr **index, int store)
{
    (void)index;
    Reads *r = ctx;
    r->found |= !store && *buf == r->buf;
}

static int reads(LoopStmt *s, int buf)
{
    Reads r = { buf, 0 };
    loop_stmt_accesses(s, reads_one, &r);
    return r.found;
}

/* Walks down from s (outside any pipelined loop), tiling at the outermost
 * loop that admits it; the enclosing loops' variables are T->outer. */
static LoopStmt *descend(Tile *T, LoopStmt *s, const char *kname)
{
    if (!s || T->err || !reads(s, T->buf))
        return s;
    switch (s->kind) {
    case LOOP_S_FOR: {
        if (s->u.loop.kind == LOOP_HLS_PIPELINE || s->u.loop.extent->kind != LOOP_E_INT)
            return s;
        int v = s->u.loop.var;
        T->outer[v] = 1;
        T->ext[v] = s->u.loop.extent->u.i;
        LoopStmt *b = try_scope(T, s->u.loop.body, kname);
        if (b)
            s->u.loop.body = b;
        else
            s->u.loop.body = descend(T, s->u.loop.body, kname);
        T->outer[v] = 0;
        return s;
    }
    case LOOP_S_BLOCK:
        for (int i = 0; i < s->u.block.n; i++)
            s->u.block.items[i] = descend(T, s->u.block.items[i], kname);
        return s;
    case LOOP_S_IF:
        s->u.cond.then_ = descend(T, s->u.cond.then_, kname);
        s->u.cond.else_ = descend(T, s->u.cond.else_, kname);
        return s;
    default: return s;
    }
}

/* Tiles every read of weight b (or, dry, counts the kernels that read it and
 * those that would get a tile); -1 on OOM. */
static int tile_buf(LoopProgram *p, int b, int64_t cap, int dry, int *readers, int *tiled)
{
    *readers = *tiled = 0;
    int64_t n = ir_shape_numel(&p->bufs[b].shape);
    cap = cap < n / 2 ? cap : n / 2;          /* a tile of the whole array saves nothing on chip */
    for (int k = 0; k < p->n_kernels; k++) {
        if (!reads(p->kernels[k].body, b))
            continue;
        Tile T = { .p = p, .buf = b, .cap = cap, .nv = p->n_vars, .dry = dry };
        T.inner = calloc((size_t)T.nv + 1, 1);
        T.forbid = calloc((size_t)T.nv + 1, 1);
        T.outer = calloc((size_t)T.nv + 1, 1);
        T.ext = calloc((size_t)T.nv + 1, sizeof *T.ext);
        T.coef = calloc((size_t)T.nv + 1, sizeof *T.coef);
        int rc = 0;
        if (!T.inner || !T.forbid || !T.outer || !T.ext || !T.coef) {
            rc = -1;
        } else {
            LoopStmt *top = try_scope(&T, p->kernels[k].body, p->kernels[k].name);
            if (top)
                p->kernels[k].body = top;
            else
                p->kernels[k].body = descend(&T, p->kernels[k].body, p->kernels[k].name);
            rc = T.err ? -1 : 0;
        }
        (*readers)++;
        *tiled += T.made > 0;
        free(T.inner);
        free(T.forbid);
        free(T.outer);
        free(T.ext);
        free(T.coef);
        if (rc)
            return -1;
    }
    return 0;
}

int tgt_fpga_tileable(LoopProgram *p, int b)
{
    int readers, tiled;
    return tile_buf(p, b, TGT_FPGA_TILE_ELEMS, 1, &readers, &tiled) == 0 && readers > 0 && tiled == readers;
}

int tgt_fpga_tile(LoopProgram *p, int64_t cap)
{
    int nb = p->n_bufs;
    for (int b = 0; b < nb; b++) {
        int readers, tiled;
        if (!p->bufs[b].offchip || p->bufs[b].storage != LOOP_ST_CONST || p->bufs[b].alias_of >= 0)
            continue;
        if (tile_buf(p, b, cap, 0, &readers, &tiled))
            return -1;
    }
    return 0;
}
