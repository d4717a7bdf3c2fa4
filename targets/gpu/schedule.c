/* targets/gpu/schedule.c — the GPU schedule: binds each kernel's loops to
 * CUDA blocks and threads, a rewrite of the lowered loop program.
 *
 *  - One GPU kernel per loop-IR kernel.  A kernel whose body is a sequence of
 *    independent loop nests (no LET/ASSIGN between them, no LOCAL buffer used
 *    by two of them) is first split into one kernel per nest, in order (a
 *    launch boundary is the only grid-wide barrier CUDA has).
 *  - Data-parallel loops: the perfect nest of outermost loops whose
 *    iterations are independent (constant extent, no assignment to an outer
 *    accumulator, every store's index mentions the loop variable) is
 *    flattened and split by the block size:
 *        for bx < ceil(N/T) gpu.block.x { for tx < T gpu.thread.x {
 *          let g = bx*T + tx; if (g < N) { let i0 = g / s0; let i1 = g / s1 mod e1; ...; body } } }
 *    The tail is guarded by the if.
 *  - Matrix products (a nest [.., M, N] whose body is `acc = init; for k < K:
 *    acc = acc + A(.., m, k) * B(.., k, n); store y = f(acc)`, the form
 *    lowering gives MatMul, Gemm and — with k running over the window —
 *    Conv) get shared-memory tiles: see tile_product below.
 *  - A kernel with none of these whose sequential outer loop (RNN/GRU/LSTM's
 *    time loop, a top-level LET) holds data-parallel loops takes the
 *    cooperative schedule (coop.c): one block per outer PARALLEL iteration,
 *    its threads sharing each inner nest, barriers between.
 *  - A kernel with none of these at all (a reduction to a scalar) stays as
 *    it is and runs on one thread (grid 1, block 1).
 */
#include "targets/gpu/gpu_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ analysis */

typedef struct Scan {
    const LoopProgram *p;
    unsigned char *bound;      /* per var: bound inside the statement scanned */
    int var;                   /* the candidate parallel loop variable */
    int local;                 /* stores to LOCAL buffers allowed */
    int ok;
} Scan;

void tgt_gpu_mark_bound(const LoopStmt *s, unsigned char *bound)
{
    if (!s)
        return;
    switch (s->kind) {
    case LOOP_S_FOR: bound[s->u.loop.var] = 1; tgt_gpu_mark_bound(s->u.loop.body, bound); break;
    case LOOP_S_LET: bound[s->u.let.var] = 1; break;
    case LOOP_S_IF: tgt_gpu_mark_bound(s->u.cond.then_, bound); tgt_gpu_mark_bound(s->u.cond.else_, bound); break;
    case LOOP_S_BLOCK:
        for (int i = 0; i < s->u.block.n; i++)
            tgt_gpu_mark_bound(s->u.block.items[i], bound);
        break;
    default: break;
    }
}

/* Iterations of the loop over sc->var are independent: no assignment to a
 * variable bound outside, every store's index mentions the variable (so two
 * iterations write different elements), no store to a LOCAL buffer unless
 * sc->local, no barrier. */
static void check_parallel(Scan *sc, const LoopStmt *s)
{
    if (!s || !sc->ok)
        return;
    switch (s->kind) {
    case LOOP_S_FOR: check_parallel(sc, s->u.loop.body); break;
    case LOOP_S_ASSIGN:
        if (!sc->bound[s->u.assign.var])
            sc->ok = 0;
        break;
    case LOOP_S_STORE:
        if (!loop_expr_uses(s->u.store.index, sc->var) ||
            (!sc->local && sc->p->bufs[s->u.store.buf].storage == LOOP_ST_LOCAL))
            sc->ok = 0;
        break;
    case LOOP_S_IF: check_parallel(sc, s->u.cond.then_); check_parallel(sc, s->u.cond.else_); break;
    case LOOP_S_BLOCK:
        for (int i = 0; i < s->u.block.n; i++)
            check_parallel(sc, s->u.block.items[i]);
        break;
    case LOOP_S_BARRIER: sc->ok = 0; break;
    default: break;
    }
}

int tgt_gpu_independent(const LoopProgram *p, const LoopStmt *loop, int local)
{
    if (loop->kind != LOOP_S_FOR || loop->u.loop.extent->kind != LOOP_E_INT || loop->u.loop.extent->u.i < 1 ||
        (loop->u.loop.kind != LOOP_SERIAL && loop->u.loop.kind != LOOP_PARALLEL))
        return 0;
    Scan sc = { p, calloc((size_t)p->n_vars + 1, 1), loop->u.loop.var, local, 1 };
    if (!sc.bound)
        return 0;
    tgt_gpu_mark_bound(loop->u.loop.body, sc.bound);
    check_parallel(&sc, loop->u.loop.body);
    free(sc.bound);
    return sc.ok;
}

static int is_parallel(const LoopProgram *p, const LoopStmt *loop) { return tgt_gpu_independent(p, loop, 0); }

/* The statement itself, or the only item of a one-item block. */
LoopStmt *tgt_gpu_single(LoopStmt *s)
{
    while (s && s->kind == LOOP_S_BLOCK && s->u.block.n == 1)
        s = s->u.block.items[0];
    return s;
}

/* ------------------------------------------------------------ rewrites */

typedef struct Gs {
    LoopProgram *p;
    const TgtGpuOptions *o;
    UtilDiag *d;
} Gs;

static LoopExpr *I(Gs *g, int64_t v) { return loop_int(g->p, v); }
static LoopExpr *V(Gs *g, int var) { return loop_var(g->p, var); }
static LoopExpr *B2(Gs *g, LoopBinOp op, LoopExpr *a, LoopExpr *b) { return loop_bin(g->p, op, a, b); }

/* block of the given statements (NULLs skipped) */
static LoopStmt *seq(Gs *g, LoopStmt *const *items, int n)
{
    LoopStmt *b = loop_block(g->p);
    for (int i = 0; b && i < n; i++)
        if (items[i] && loop_block_add(g->p, b, items[i]) != 0)
            return NULL;
    return b;
}

/* Straight-line body (immutable LETs and float32 STOREs) that a 4-lane
 * VECTORIZED loop can carry. */
static int vec4_body(const LoopProgram *p, const LoopStmt *s)
{
    switch (s->kind) {
    case LOOP_S_LET: return !s->u.let.mutable_;
    case LOOP_S_STORE: return p->bufs[s->u.store.buf].dtype == IR_DT_F32;
    case LOOP_S_BLOCK:
        for (int i = 0; i < s->u.block.n; i++)
            if (!vec4_body(p, s->u.block.items[i]))
                return 0;
        return s->u.block.n > 0;
    default: return 0;
    }
}

/* Copy of straight-line s with variable var replaced by `by`. */
static LoopStmt *subst_stmt(Gs *g, const LoopStmt *s, int var, LoopExpr *by)
{
    LoopProgram *p = g->p;
    switch (s->kind) {
    case LOOP_S_LET:
        return loop_let(p, s->u.let.var, loop_expr_subst(p, s->u.let.value, &var, &by, 1), 0);
    case LOOP_S_STORE:
        return loop_store(p, s->u.store.buf, loop_expr_subst(p, s->u.store.index, &var, &by, 1),
                          loop_expr_subst(p, s->u.store.value, &var, &by, 1));
    case LOOP_S_BLOCK: {
        LoopStmt *b = loop_block(p);
        for (int i = 0; b && i < s->u.block.n; i++) {
            LoopStmt *c = subst_stmt(g, s->u.block.items[i], var, by);
            if (!c || loop_block_add(p, b, c) != 0)
                return NULL;
        }
        return b;
    }
    default: return NULL;
    }
}

/* Flattened data-parallel mapping of chain[0..n) (see the file comment).
 * When the innermost extent is a multiple of 4 and the body is straight
 * line, each thread takes 4 consecutive innermost elements in a 4-lane
 * VECTORIZED loop (ld.global.v4.f32 / st.global.v4.f32 where contiguous). */
static LoopStmt *map_flat(Gs *g, LoopStmt *const *chain, int n, LoopStmt *inner)
{
    LoopProgram *p = g->p;
    int64_t total = 1, ext[IR_MAX_RANK * 2];
    for (int i = 0; i < n; i++) {
        ext[i] = chain[i]->u.loop.extent->u.i;
        if (util_mul_overflow_i64(total, ext[i], &total))
            return NULL;
    }
    int lv[IR_MAX_RANK * 2];                   /* the variable each mapped index binds */
    for (int i = 0; i < n; i++)
        lv[i] = chain[i]->u.loop.var;
    int vec = ext[n - 1] % 4 == 0 && ext[n - 1] >= 4 && vec4_body(p, inner);
    if (vec) {
        int lane = loop_add_var(p, "lane", IR_DT_I64), v4 = loop_add_var(p, "v4", IR_DT_I64);
        if (lane < 0 || v4 < 0)
            return NULL;
        /* innermost index = v4 * 4 + lane; v4 takes the innermost LET's place */
        LoopExpr *by = B2(g, LOOP_ADD, B2(g, LOOP_MUL, V(g, v4), I(g, 4)), V(g, lane));
        LoopStmt *body = subst_stmt(g, inner, chain[n - 1]->u.loop.var, by);
        LoopStmt *vl = body ? loop_for(p, lane, I(g, 4), LOOP_VECTORIZED, body) : NULL;
        if (!vl)
            return NULL;
        vl->u.loop.factor = 4;
        lv[n - 1] = v4;                         /* the mapping binds v4 instead */
        ext[n - 1] /= 4;
        total /= 4;
        inner = vl;
    }
    int64_t T = g->o->block_size;
    if (total < T)
        T = (total + 31) / 32 * 32;
    int64_t nb = (total + T - 1) / T;
    if (nb > 0x7fffffff)
        return NULL;
    int bx = loop_add_var(p, "bx", IR_DT_I64), tx = loop_add_var(p, "tx", IR_DT_I64);
    int gi = loop_add_var(p, "g", IR_DT_I64);
    if (bx < 0 || tx < 0 || gi < 0)
        return NULL;
    LoopStmt *items[IR_MAX_RANK * 2 + 1];
    int64_t stride = total;
    for (int i = 0; i < n; i++) {
        stride /= ext[i];
        LoopExpr *v = B2(g, LOOP_DIV, V(g, gi), I(g, stride));
        if (i > 0)
            v = B2(g, LOOP_MOD, v, I(g, ext[i]));
        items[i] = loop_let(p, lv[i], v, 0);
    }
    items[n] = inner;
    LoopStmt *guarded = loop_if(p, B2(g, LOOP_LT, V(g, gi), I(g, total)), seq(g, items, n + 1), NULL);
    LoopStmt *tbody[2] = { loop_let(p, gi, B2(g, LOOP_ADD, B2(g, LOOP_MUL, V(g, bx), I(g, T)), V(g, tx)), 0),
                           guarded };
    LoopStmt *tl = loop_for(p, tx, I(g, T), LOOP_GPU_THREAD_X, seq(g, tbody, 2));
    return loop_for(p, bx, I(g, nb), LOOP_GPU_BLOCK_X, tl);
}

static void loads_of(const LoopExpr *e, unsigned char *set)
{
    if (!e)
        return;
    switch (e->kind) {
    case LOOP_E_LOAD: set[e->u.load.buf] = 1; loads_of(e->u.load.index, set); break;
    case LOOP_E_BIN: loads_of(e->u.bin.a, set); loads_of(e->u.bin.b, set); break;
    case LOOP_E_UN: loads_of(e->u.un.a, set); break;
    case LOOP_E_SELECT: loads_of(e->u.sel.cond, set); loads_of(e->u.sel.a, set); loads_of(e->u.sel.b, set); break;
    case LOOP_E_CALL:
        for (int i = 0; i < e->u.call.n && i < 3; i++)
            loads_of(e->u.call.args[i], set);
        break;
    case LOOP_E_CAST: loads_of(e->u.cast.a, set); break;
    default: break;
    }
}

static void stores_of(const LoopStmt *s, unsigned char *set)
{
    if (!s)
        return;
    switch (s->kind) {
    case LOOP_S_FOR: stores_of(s->u.loop.body, set); break;
    case LOOP_S_STORE: set[s->u.store.buf] = 1; break;
    case LOOP_S_IF: stores_of(s->u.cond.then_, set); stores_of(s->u.cond.else_, set); break;
    case LOOP_S_BLOCK:
        for (int i = 0; i < s->u.block.n; i++)
            stores_of(s->u.block.items[i], set);
        break;
    default: break;
    }
}

/* A chain loop whose body is `let x = e ...; for j ...` (immutable lets, an
 * independent loop, the lets reading no buffer the loop writes): the lets
 * move into the inner loop's body — each thread recomputes them, e.g. the
 * per-channel scale of BatchNormalization — and the inner loop joins the
 * chain.  Returns the inner loop, or NULL. */
static LoopStmt *sink_lets(Gs *g, LoopStmt *parent)
{
    LoopStmt *b = parent->u.loop.body;
    if (b->kind != LOOP_S_BLOCK || b->u.block.n < 2)
        return NULL;
    int n = b->u.block.n;
    LoopStmt *f = tgt_gpu_single(b->u.block.items[n - 1]);
    for (int i = 0; i < n - 1; i++)
        if (b->u.block.items[i]->kind != LOOP_S_LET || b->u.block.items[i]->u.let.mutable_)
            return NULL;
    if (!f || !is_parallel(g->p, f))
        return NULL;
    unsigned char *st = calloc((size_t)g->p->n_bufs * 2 + 2, 1);
    if (!st)
        return NULL;
    unsigned char *ld = st + g->p->n_bufs + 1;
    stores_of(f, st);
    for (int i = 0; i < n - 1; i++)
        loads_of(b->u.block.items[i]->u.let.value, ld);
    int clash = 0;
    for (int i = 0; i < g->p->n_bufs; i++)
        clash |= st[i] && ld[i];
    free(st);
    LoopStmt *nb = clash ? NULL : loop_block(g->p);
    if (!nb)
        return NULL;
    for (int i = 0; i < n - 1; i++)
        loop_block_add(g->p, nb, b->u.block.items[i]);
    if (loop_block_add(g->p, nb, f->u.loop.body) != 0)
        return NULL;
    f->u.loop.body = nb;
    parent->u.loop.body = f;
    return f;
}

/* Maps one kernel body; returns the new body (the old one when nothing
 * applies), NULL on out-of-memory. */
static LoopStmt *map_kernel(Gs *g, LoopStmt *body)
{
    LoopStmt *chain[IR_MAX_RANK * 2];
    int n = 0;
    LoopStmt *s = tgt_gpu_single(body);
    while (s && n < IR_MAX_RANK * 2 && is_parallel(g->p, s)) {
        chain[n++] = s;
        LoopStmt *inner = n < IR_MAX_RANK * 2 ? sink_lets(g, s) : NULL;
        s = inner ? inner : tgt_gpu_single(s->u.loop.body);
    }
    if (n == 0)
        return tgt_gpu_coop(g->p, g->o, body);     /* a sequential outer loop (coop.c) */
    LoopStmt *r = tgt_gpu_tile_product(g->p, g->o, chain, n);
    if (r)
        return r;
    r = map_flat(g, chain, n, chain[n - 1]->u.loop.body);
    return r ? r : body;
}

typedef struct LocalUse {
    const LoopProgram *p;
    int *owner;             /* per buffer: the first item using it, or -1 */
    int item;
    int shared;             /* a LOCAL buffer is used by two items */
} LocalUse;

static void local_use(void *ctx, int buf, int store)
{
    (void)store;
    LocalUse *u = ctx;
    if (u->p->bufs[buf].storage != LOOP_ST_LOCAL)
        return;
    if (u->owner[buf] < 0)
        u->owner[buf] = u->item;
    else if (u->owner[buf] != u->item)
        u->shared = 1;
}

/* Number of kernels body splits into: its items when it is a block of
 * independent nests, else 1.  Values may flow between the items only through
 * global memory (model buffers, the workspace), which outlives a launch.  A
 * LET or ASSIGN at the top level binds a value for the later items, and a
 * LOCAL buffer (shared memory on the device, a stack array of the kernel
 * function under --gpu-emulate) starts undefined in every kernel: two items
 * using one — RNN/GRU/LSTM's state, initialised by one nest and read by the
 * time loop and the final Y_h / Y_c store after it, when a batch of 1 and no
 * sequence_lens leave these nests at the top level — must stay in one
 * kernel, or the later ones read uninitialised memory.  -1: out of memory. */
static int split_parts(const LoopProgram *p, const LoopStmt *b)
{
    if (b->kind != LOOP_S_BLOCK || b->u.block.n < 2)
        return 1;
    for (int i = 0; i < b->u.block.n; i++)
        if (b->u.block.items[i]->kind == LOOP_S_LET || b->u.block.items[i]->kind == LOOP_S_ASSIGN)
            return 1;
    LocalUse u = { p, malloc((size_t)(p->n_bufs > 0 ? p->n_bufs : 1) * sizeof *u.owner), 0, 0 };
    if (!u.owner)
        return -1;
    for (int i = 0; i < p->n_bufs; i++)
        u.owner[i] = -1;
    for (u.item = 0; u.item < b->u.block.n && !u.shared; u.item++)
        loop_stmt_buffers(b->u.block.items[u.item], local_use, &u);
    free(u.owner);
    return u.shared ? 1 : b->u.block.n;
}

/* Splits kernels made of independent top-level nests (split_parts). */
static int split_kernels(LoopProgram *p)
{
    int n = p->n_kernels, total = 0;
    if (n <= 0)
        return 0;
    int *parts = malloc((size_t)n * sizeof *parts);
    if (!parts)
        return -1;
    for (int k = 0; k < n; k++) {
        if ((parts[k] = split_parts(p, p->kernels[k].body)) < 0) {
            free(parts);
            return -1;
        }
        total += parts[k];
    }
    if (total == n) {
        free(parts);
        return 0;
    }
    LoopKernel *old = malloc((size_t)n * sizeof *old);
    if (!old) {
        free(parts);
        return -1;
    }
    memcpy(old, p->kernels, (size_t)n * sizeof *old);
    p->n_kernels = 0;
    for (int k = 0; k < n; k++) {
        LoopStmt *b = old[k].body;
        for (int i = 0; i < parts[k]; i++) {
            char name[256];
            snprintf(name, sizeof name, parts[k] > 1 ? "%s_%d" : "%s", old[k].name, i);
            int id = loop_add_kernel(p, name, parts[k] > 1 ? b->u.block.items[i] : b);
            if (id < 0) {
                free(old);
                free(parts);
                return -1;
            }
            p->kernels[id].first_node = old[k].first_node;
            p->kernels[id].n_nodes = old[k].n_nodes;
            p->kernels[id].flops = i == 0 ? old[k].flops : 0;
        }
    }
    free(old);
    free(parts);
    return 0;
}

int tgt_gpu_schedule(LoopProgram *p, const TgtGpuOptions *o, UtilDiag *d)
{
    Gs g = { p, o, d };
    if (split_kernels(p) != 0)
        return util_error(d, util_loc_file(NULL), "out of memory while scheduling '%s' for the GPU", p->name);
    for (int k = 0; k < p->n_kernels; k++) {
        LoopStmt *b = map_kernel(&g, p->kernels[k].body);
        if (!b)
            return util_error(d, util_loc_file(NULL), "out of memory while scheduling '%s' for the GPU", p->name);
        p->kernels[k].body = b;
    }
    return 0;
}
