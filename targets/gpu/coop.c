/* targets/gpu/coop.c — the cooperative schedule (docs/targets/gpu.md,
 * "Sequential kernels"): a kernel whose outer loop is sequential (RNN, GRU,
 * LSTM's time loop) but whose body holds data-parallel nests runs on one
 * block of T threads, or one block per iteration of its outer PARALLEL loops
 * (the lowering's tasks: direction x batch row).
 *
 *     for bx < B gpu.block.x { for tx < T gpu.thread.x { task = bx; S(body) } }
 *
 * S, at the sequential level, which every thread runs alike ("uniform"):
 *  - a phase (a perfect nest of independent loops, flattened to N
 *    iterations; schedule.c's test with LOCAL stores allowed, and every
 *    buffer it both reads and writes accessed at one index) is split across
 *    the threads, thread tx taking g = tx, tx + T, ...:
 *        for m < ceil(N/T) { g = m*T + tx; if (g < N) { i0 = g / s0; ...; body } }
 *    (N <= T: `if (tx < N) { g = tx; ... }`);
 *  - a loop or if holding phases stays, its extent or condition uniform;
 *  - a statement storing to memory outside phases runs on thread 0 only
 *    (`if (tx == 0)`); LETs and ASSIGNs run in every thread (uniform values);
 *  - a barrier goes before a statement when it may race with what the
 *    threads did since the last barrier (below), before a loop when its
 *    body's first accesses (up to the body's first barrier) do, and at the
 *    end of a loop body when the body's last accesses race with its first
 *    ones (the next iteration's);
 *  - an if whose branches hold barriers at their top level only has them
 *    moved out, so that both paths meet the same barriers (barriers_out).
 * T = the widest phase rounded up to a warp, at most o->coop_threads.  A
 * statement outside the phases that stores and assigns a variable bound
 * outside it (thread 0 alone would update it) leaves one thread per block.
 *
 * Races: two accesses to one buffer (aliases resolved to their root), one a
 * store, unless both are thread 0's, or both are phase accesses at index
 * off + v of the phase variable v < n (single-loop phases) that no two
 * threads share: thread (v mod T) touches element off + v, so they are the
 * same thread's when the ranges [off, off + n) are disjoint or the offsets
 * are congruent modulo T.  Anything else (another index, a statement of
 * every thread) may be any thread's.  Inputs and constants are never stored
 * and not tracked.
 *
 * The block's LOCAL buffers are its shared memory; more than
 * o->shared_bytes of them become per-block slices of a workspace buffer. */
#include "targets/gpu/gpu_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { WHO_ALL, WHO_T0, WHO_OWN };   /* any thread / thread 0 / thread (v mod T) of element off + v */

typedef struct Acc {
    int buf;                 /* root buffer */
    int store, who;
    int64_t off, n;          /* WHO_OWN: elements [off, off + n), element off + v by thread v mod T */
} Acc;

typedef struct Set {
    Acc *a;
    int n, cap;
} Set;

/* The accesses since the first barrier of a loop body, while none was put at its top level. */
typedef struct Frame {
    Set first;
    int open;
    LoopStmt *top;           /* the loop body's block */
    struct Frame *up;
} Frame;

typedef struct Co {
    LoopProgram *p;
    const TgtGpuOptions *o;
    int64_t T;               /* threads of the block */
    int tx;                  /* thread variable */
    int64_t widest;          /* scan: the widest phase */
    int bad;                 /* scan: the kernel cannot take this schedule */
    int oom;
    Frame *frame;
    /* collecting a unit's accesses */
    Set *into;
    int who, pvar;
    int64_t pn;
} Co;

static LoopExpr *I(Co *c, int64_t v) { return loop_int(c->p, v); }
static LoopExpr *V(Co *c, int var) { return loop_var(c->p, var); }
static LoopExpr *B2(Co *c, LoopBinOp op, LoopExpr *a, LoopExpr *b) { return loop_bin(c->p, op, a, b); }

static void add(Co *c, LoopStmt *blk, LoopStmt *s)
{
    if (!s || !blk || loop_block_add(c->p, blk, s) != 0)
        c->oom = 1;
}

static int root(const LoopProgram *p, int b)
{
    for (int i = 0; i < p->n_bufs && p->bufs[b].alias_of >= 0; i++)
        b = p->bufs[b].alias_of;
    return b;
}

/* ------------------------------------------------------------ access sets */

static void set_push(Co *c, Set *s, const Acc *a)
{
    for (int i = 0; i < s->n; i++)
        if (!memcmp(&s->a[i], a, sizeof *a))
            return;
    if (s->n == s->cap) {
        int cap = s->cap ? s->cap * 2 : 16;
        Acc *n = realloc(s->a, (size_t)cap * sizeof *n);
        if (!n) {
            c->oom = 1;
            return;
        }
        s->a = n;
        s->cap = cap;
    }
    s->a[s->n++] = *a;
}

static void set_union(Co *c, Set *into, const Set *s)
{
    for (int i = 0; i < s->n; i++)
        set_push(c, into, &s->a[i]);
}

static void set_free(Set *s)
{
    free(s->a);
    *s = (Set){ 0 };
}

static int race(const Acc *a, const Acc *b, int64_t T)
{
    if (a->buf != b->buf || !(a->store || b->store))
        return 0;
    if (a->who == WHO_T0 && b->who == WHO_T0)
        return 0;
    if (a->who == WHO_OWN && b->who == WHO_OWN)
        return a->off < b->off + b->n && b->off < a->off + a->n && (a->off - b->off) % T != 0;
    return 1;
}

static int races(const Set *a, const Set *b, int64_t T)
{
    for (int i = 0; i < a->n; i++)
        for (int j = 0; j < b->n; j++)
            if (race(&a->a[i], &b->a[j], T))
                return 1;
    return 0;
}

/* index = v or v + off (either order) for the phase variable v */
static int owned(const LoopExpr *e, int v, int64_t *off)
{
    if (e->kind == LOOP_E_VAR && e->u.var == v) {
        *off = 0;
        return 1;
    }
    if (e->kind != LOOP_E_BIN || e->u.bin.op != LOOP_ADD)
        return 0;
    const LoopExpr *a = e->u.bin.a, *b = e->u.bin.b;
    if (a->kind == LOOP_E_INT && b->kind == LOOP_E_VAR && b->u.var == v) {
        *off = a->u.i;
        return 1;
    }
    if (b->kind == LOOP_E_INT && a->kind == LOOP_E_VAR && a->u.var == v) {
        *off = b->u.i;
        return 1;
    }
    return 0;
}

static void collect(void *ctx, int *buf, LoopExpr **index, int store)
{
    Co *c = ctx;
    LoopStorage st = c->p->bufs[*buf].storage;
    if (st == LOOP_ST_INPUT || st == LOOP_ST_CONST)
        return;
    Acc a = { root(c->p, *buf), store, c->who, 0, 0 };
    if (a.who == WHO_OWN) {
        if (c->pvar >= 0 && owned(*index, c->pvar, &a.off))
            a.n = c->pn;
        else
            a.who = WHO_ALL;
    }
    set_push(c, c->into, &a);
}

/* The accesses of s (or of expression e alone) made by `who`. */
static void unit_of(Co *c, Set *into, LoopStmt *s, LoopExpr *e, int who, int pvar, int64_t pn)
{
    LoopStmt let = { .kind = LOOP_S_LET };
    if (e) {
        let.u.let.value = e;
        s = &let;
    }
    c->into = into;
    c->who = who;
    c->pvar = pvar;
    c->pn = pn;
    loop_stmt_accesses(s, collect, c);
}

/* ------------------------------------------------------------ analysis */

typedef struct Same {
    const LoopProgram *p;
    unsigned char *stored;   /* per root buffer: stored in the loop */
    int buf;                 /* the buffer whose accesses are compared */
    const LoopExpr *index;   /* ... the first one's index */
    int ok;
} Same;

static void mark_stored(void *ctx, int *buf, LoopExpr **index, int store)
{
    (void)index;
    Same *s = ctx;
    if (store)
        s->stored[root(s->p, *buf)] = 1;
}

static void same_index(void *ctx, int *buf, LoopExpr **index, int store)
{
    (void)store;
    Same *s = ctx;
    if (root(s->p, *buf) != s->buf)
        return;
    if (!s->index)
        s->index = *index;
    else if (!loop_expr_equal(s->index, *index))
        s->ok = 0;
}

/* Every buffer loop both stores and loads is accessed at one index (the
 * stores mention the loop variable: each element belongs to one iteration). */
static int one_index(Co *c, LoopStmt *loop)
{
    Same s = { c->p, calloc((size_t)c->p->n_bufs + 1, 1), -1, NULL, 1 };
    if (!s.stored) {
        c->oom = 1;
        return 0;
    }
    loop_stmt_accesses(loop, mark_stored, &s);
    for (int b = 0; s.ok && b < c->p->n_bufs; b++)
        if (s.stored[b]) {
            s.buf = b;
            s.index = NULL;
            loop_stmt_accesses(loop, same_index, &s);
        }
    free(s.stored);
    return s.ok;
}

/* The phase starting at s: its perfect nest of independent loops
 * chain[0..n), or 0. */
static int phase(Co *c, LoopStmt *s, LoopStmt **chain)
{
    int n = 0;
    while (s && n < IR_MAX_RANK * 2 && tgt_gpu_independent(c->p, s, 1) && one_index(c, s)) {
        chain[n++] = s;
        s = tgt_gpu_single(s->u.loop.body);
    }
    return n;
}

static int64_t phase_size(LoopStmt *const *chain, int n)
{
    int64_t N = 1;
    for (int i = 0; i < n; i++)
        if (util_mul_overflow_i64(N, chain[i]->u.loop.extent->u.i, &N))
            return -1;
    return N;
}

static int has_phase(Co *c, LoopStmt *s)
{
    LoopStmt *chain[IR_MAX_RANK * 2];
    if (!s)
        return 0;
    switch (s->kind) {
    case LOOP_S_FOR: return phase(c, s, chain) > 0 || has_phase(c, s->u.loop.body);
    case LOOP_S_IF: return has_phase(c, s->u.cond.then_) || has_phase(c, s->u.cond.else_);
    case LOOP_S_BLOCK:
        for (int i = 0; i < s->u.block.n; i++)
            if (has_phase(c, s->u.block.items[i]))
                return 1;
        return 0;
    default: return 0;
    }
}

/* Does s store, assign a variable bound outside it, hold a barrier or a GPU loop? */
typedef struct Eff {
    unsigned char *bound;
    int store, assign_out, gpu;
} Eff;

static void eff_scan(Eff *e, const LoopStmt *s)
{
    if (!s)
        return;
    switch (s->kind) {
    case LOOP_S_FOR:
        e->gpu |= s->u.loop.kind >= LOOP_GPU_BLOCK_X && s->u.loop.kind <= LOOP_GPU_THREAD_Z;
        eff_scan(e, s->u.loop.body);
        break;
    case LOOP_S_ASSIGN: e->assign_out |= !e->bound[s->u.assign.var]; break;
    case LOOP_S_STORE: e->store = 1; break;
    case LOOP_S_BARRIER: e->gpu = 1; break;
    case LOOP_S_IF: eff_scan(e, s->u.cond.then_); eff_scan(e, s->u.cond.else_); break;
    case LOOP_S_BLOCK:
        for (int i = 0; i < s->u.block.n; i++)
            eff_scan(e, s->u.block.items[i]);
        break;
    default: break;
    }
}

static Eff effects(Co *c, const LoopStmt *s)
{
    Eff e = { calloc((size_t)c->p->n_vars + 1, 1), 0, 0, 0 };
    if (!e.bound) {
        c->oom = 1;
        return e;
    }
    tgt_gpu_mark_bound(s, e.bound);
    eff_scan(&e, s);
    free(e.bound);
    e.bound = NULL;
    return e;
}

/* The widest phase; c->bad when a statement outside the phases both stores
 * and assigns a variable bound outside it (it would run on thread 0 only,
 * leaving the variable different in the other threads), or the kernel holds
 * GPU loops or barriers already. */
static void scan(Co *c, LoopStmt *s)
{
    LoopStmt *chain[IR_MAX_RANK * 2];
    if (!s || c->bad)
        return;
    int n = s->kind == LOOP_S_FOR ? phase(c, s, chain) : 0;
    if (n) {
        int64_t N = phase_size(chain, n);
        Eff e = effects(c, s);
        c->bad |= N < 0 || e.gpu;
        if (N > c->widest)
            c->widest = N;
        return;
    }
    if (s->kind == LOOP_S_BLOCK) {
        for (int i = 0; i < s->u.block.n; i++)
            scan(c, s->u.block.items[i]);
        return;
    }
    if ((s->kind == LOOP_S_FOR || s->kind == LOOP_S_IF) && has_phase(c, s)) {
        if (s->kind == LOOP_S_FOR) {
            scan(c, s->u.loop.body);
        } else {
            scan(c, s->u.cond.then_);
            scan(c, s->u.cond.else_);
        }
        return;
    }
    Eff e = effects(c, s);
    c->bad |= e.gpu || (e.store && e.assign_out);
}

/* ------------------------------------------------------------ rewriting */

static void barrier(Co *c, LoopStmt *out, Set *pending)
{
    add(c, out, loop_barrier(c->p));
    set_free(pending);
    for (Frame *f = c->frame; f; f = f->up)
        if (f->top == out)
            f->open = 0;
}

/* A unit's accesses u join the pending ones, after a barrier when they race. */
static void unit(Co *c, LoopStmt *out, Set *pending, Set *u)
{
    if (races(pending, u, c->T))
        barrier(c, out, pending);
    set_union(c, pending, u);
    for (Frame *f = c->frame; f; f = f->up)
        if (f->open)
            set_union(c, &f->first, u);
    set_free(u);
}

/* The phase chain[0..n) split across the threads. */
static LoopStmt *distribute(Co *c, LoopStmt *const *chain, int n)
{
    LoopProgram *p = c->p;
    int64_t N = phase_size(chain, n), T = c->T;
    int gi = loop_add_var(p, "g", IR_DT_I64);
    LoopStmt *in = loop_block(p);
    if (gi < 0 || !in) {
        c->oom = 1;
        return NULL;
    }
    int64_t stride = N;
    for (int i = 0; i < n; i++) {
        int64_t e = chain[i]->u.loop.extent->u.i;
        stride /= e;
        LoopExpr *v = stride > 1 ? B2(c, LOOP_DIV, V(c, gi), I(c, stride)) : V(c, gi);
        if (i > 0)
            v = B2(c, LOOP_MOD, v, I(c, e));
        add(c, in, loop_let(p, chain[i]->u.loop.var, v, 0));
    }
    add(c, in, chain[n - 1]->u.loop.body);
    LoopStmt *body = loop_block(p);
    if (N <= T) {
        add(c, body, loop_let(p, gi, V(c, c->tx), 0));
        add(c, body, loop_if(p, B2(c, LOOP_LT, V(c, gi), I(c, N)), in, NULL));
        return body;
    }
    int m = loop_add_var(p, "m", IR_DT_I64);
    if (m < 0) {
        c->oom = 1;
        return NULL;
    }
    add(c, body, loop_let(p, gi, B2(c, LOOP_ADD, B2(c, LOOP_MUL, V(c, m), I(c, T)), V(c, c->tx)), 0));
    add(c, body, loop_if(p, B2(c, LOOP_LT, V(c, gi), I(c, N)), in, NULL));
    return loop_for(p, m, I(c, (N + T - 1) / T), LOOP_SERIAL, body);
}

static void rewrite(Co *c, LoopStmt *s, LoopStmt *out, Set *pending);

/* Barriers of b: at its top level (*top), deeper (return value). */
static int deep_barriers(const LoopStmt *b, int *top)
{
    int deep = 0;
    for (int i = 0; b && i < b->u.block.n; i++) {
        const LoopStmt *it = b->u.block.items[i];
        if (it->kind == LOOP_S_BARRIER)
            *top = 1;
        else
            deep |= tgt_gpu_has_barrier(it);
    }
    return deep;
}

static LoopExpr *zero(Co *c, IrDType t)
{
    if (ir_dtype_is_float(t))
        return loop_float(c->p, t, 0);
    LoopExpr *e = loop_int(c->p, 0);
    if (e && t == IR_DT_BOOL)
        e->type = IR_DT_BOOL;
    return !e || t == IR_DT_I64 || t == IR_DT_BOOL ? e : loop_cast(c->p, t, e);
}

/* The top-level LETs of branch b declared before the if (mutable, zero) and
 * assigned where they were. */
static void hoist_lets(Co *c, LoopStmt *b, LoopStmt *out)
{
    for (int i = 0; b && i < b->u.block.n; i++) {
        LoopStmt *it = b->u.block.items[i];
        if (it->kind != LOOP_S_LET)
            continue;
        int var = it->u.let.var;
        LoopExpr *v = it->u.let.value;
        add(c, out, loop_let(c->p, var, zero(c, c->p->vars[var].type), 1));
        it->kind = LOOP_S_ASSIGN;
        it->u.assign.var = var;
        it->u.assign.value = v;
    }
}

/* The next piece of branch b from item *at up to a barrier (a block); *more
 * when a barrier ended it. */
static LoopStmt *piece(Co *c, const LoopStmt *b, int *at, int *more)
{
    LoopStmt *pc = loop_block(c->p);
    if (!pc)
        c->oom = 1;
    for (; b && *at < b->u.block.n; (*at)++) {
        LoopStmt *it = b->u.block.items[*at];
        if (it->kind == LOOP_S_BARRIER) {
            (*at)++;
            *more = 1;
            break;
        }
        add(c, pc, it);
    }
    return pc;
}

/* A uniform if whose branches t, e (rewritten) hold barriers at their top
 * level only: the barriers move out of it, so that every thread meets every
 * barrier on either path and the emulation keeps its interleaving
 * (emulate.c):
 *     if (c) { a; barrier; b } else { d }
 *  →  cv = c; if (cv) { a } else { d }; barrier; if (cv) { b }
 * (the branches' top-level LETs declared before).  0 when it does not
 * apply. */
static int barriers_out(Co *c, LoopExpr *cond, LoopStmt *t, LoopStmt *e, LoopStmt *out)
{
    int top = 0;
    if (deep_barriers(t, &top) | deep_barriers(e, &top) || !top)
        return 0;
    int cv = loop_add_var(c->p, "cond", IR_DT_BOOL);
    if (cv < 0) {
        c->oom = 1;
        return 1;
    }
    add(c, out, loop_let(c->p, cv, cond, 0));
    hoist_lets(c, t, out);
    hoist_lets(c, e, out);
    int ti = 0, ei = 0, more = 1;
    while (more && !c->oom) {
        more = 0;
        LoopStmt *a = piece(c, t, &ti, &more), *b = piece(c, e, &ei, &more);
        if (a && b && (a->u.block.n || b->u.block.n))
            add(c, out, loop_if(c->p, V(c, cv), a, b->u.block.n ? b : NULL));
        if (more)
            add(c, out, loop_barrier(c->p));
    }
    return 1;
}

static void rewrite_items(Co *c, LoopStmt *s, LoopStmt *out, Set *pending)
{
    if (s && s->kind == LOOP_S_BLOCK) {
        for (int i = 0; i < s->u.block.n && !c->oom; i++)
            rewrite_items(c, s->u.block.items[i], out, pending);
    } else {
        rewrite(c, s, out, pending);
    }
}

/* A loop holding phases: its body with a frame of its own; barriers before
 * it and at the end of its body where iterations would race. */
static void rewrite_loop(Co *c, LoopStmt *s, LoopStmt *out, Set *pending)
{
    Set u = { 0 };
    unit_of(c, &u, NULL, s->u.loop.extent, WHO_ALL, -1, 0);
    unit(c, out, pending, &u);
    LoopStmt *body = loop_block(c->p);
    if (!body) {
        c->oom = 1;
        return;
    }
    Frame f = { { 0 }, 1, body, c->frame };
    Set last = { 0 };
    c->frame = &f;
    rewrite_items(c, s->u.loop.body, body, &last);
    c->frame = f.up;
    if (races(pending, &f.first, c->T))
        barrier(c, out, pending);
    if (races(&last, &f.first, c->T))
        barrier(c, body, &last);
    set_union(c, pending, &last);
    for (Frame *g = c->frame; g; g = g->up)
        if (g->open)
            set_union(c, &g->first, &f.first);
    set_free(&last);
    set_free(&f.first);
    add(c, out, loop_for(c->p, s->u.loop.var, s->u.loop.extent, LOOP_SERIAL, body));
}

static void rewrite(Co *c, LoopStmt *s, LoopStmt *out, Set *pending)
{
    LoopStmt *chain[IR_MAX_RANK * 2];
    Set u = { 0 };
    int n = s->kind == LOOP_S_FOR ? phase(c, s, chain) : 0;
    if (n) {                                         /* a phase: split across the threads */
        unit_of(c, &u, s, NULL, WHO_OWN, n == 1 ? s->u.loop.var : -1, s->u.loop.extent->u.i);
        unit(c, out, pending, &u);
        add(c, out, distribute(c, chain, n));
        return;
    }
    if (s->kind == LOOP_S_FOR && has_phase(c, s)) {
        rewrite_loop(c, s, out, pending);
        return;
    }
    if (s->kind == LOOP_S_IF && has_phase(c, s)) {   /* a uniform condition */
        unit_of(c, &u, NULL, s->u.cond.cond, WHO_ALL, -1, 0);
        unit(c, out, pending, &u);
        LoopStmt *t = loop_block(c->p), *e = s->u.cond.else_ ? loop_block(c->p) : NULL;
        Set pe = { 0 };
        set_union(c, &pe, pending);
        rewrite_items(c, s->u.cond.then_, t, pending);
        if (e)
            rewrite_items(c, s->u.cond.else_, e, &pe);
        set_union(c, pending, &pe);
        set_free(&pe);
        if (!barriers_out(c, s->u.cond.cond, t, e, out))
            add(c, out, loop_if(c->p, s->u.cond.cond, t, e));
        return;
    }
    Eff e = effects(c, s);
    int t0 = e.store && c->T > 1;                    /* stores: thread 0 alone */
    unit_of(c, &u, s, NULL, t0 ? WHO_T0 : WHO_ALL, -1, 0);
    unit(c, out, pending, &u);
    add(c, out, t0 ? loop_if(c->p, B2(c, LOOP_EQ, V(c, c->tx), I(c, 0)), s, NULL) : s);
}

/* LOOP_PARALLEL loops left inside become serial (the GPU has no other use for them). */
static void serial(LoopStmt *s)
{
    if (!s)
        return;
    switch (s->kind) {
    case LOOP_S_FOR:
        if (s->u.loop.kind == LOOP_PARALLEL)
            s->u.loop.kind = LOOP_SERIAL;
        serial(s->u.loop.body);
        break;
    case LOOP_S_IF: serial(s->u.cond.then_); serial(s->u.cond.else_); break;
    case LOOP_S_BLOCK:
        for (int i = 0; i < s->u.block.n; i++)
            serial(s->u.block.items[i]);
        break;
    default: break;
    }
}

typedef struct Locals {
    const LoopProgram *p;
    unsigned char *used;
    int64_t bytes;
} Locals;

static void local_bytes(void *ctx, int buf, int store)
{
    (void)store;
    Locals *l = ctx;
    if (l->p->bufs[buf].storage == LOOP_ST_LOCAL && !l->used[buf]) {
        l->used[buf] = 1;
        l->bytes += l->p->bufs[buf].bytes;
    }
}

/* More than o->shared_bytes of LOCAL buffers: each becomes a slice per block
 * of a workspace buffer (bx the block variable, nb blocks). */
static void spill_locals(Co *c, LoopStmt *k, int bx, int64_t nb)
{
    LoopProgram *p = c->p;
    Locals l = { p, calloc((size_t)p->n_bufs + 1, 1), 0 };
    if (!l.used) {
        c->oom = 1;
        return;
    }
    loop_stmt_buffers(k, local_bytes, &l);
    int n_bufs = p->n_bufs;
    int64_t most = c->o->shared_bytes > 0 ? c->o->shared_bytes : 48 << 10;
    for (int b = 0; l.bytes > most && b < n_bufs && !c->oom; b++) {
        if (!l.used[b])
            continue;
        int64_t elems = p->bufs[b].bytes / (int64_t)ir_dtype_size(p->bufs[b].dtype);
        IrShape sh = { .rank = 1, .dims = { elems * nb } };
        char name[256];
        snprintf(name, sizeof name, "%s_blocks", p->bufs[b].name);
        int w = loop_add_buf(p, name, p->bufs[b].dtype, &sh, LOOP_ST_WORKSPACE);
        LoopExpr *shift = B2(c, LOOP_MUL, V(c, bx), I(c, elems));
        if (w < 0 || !shift || loop_stmt_rebase(p, k, b, w, shift))
            c->oom = 1;
    }
    free(l.used);
}

LoopStmt *tgt_gpu_coop(LoopProgram *p, const TgtGpuOptions *o, LoopStmt *body)
{
    Co c = { .p = p, .o = o };
    /* the outer PARALLEL loops: one block per iteration */
    LoopStmt *tasks[IR_MAX_RANK * 2], *s = tgt_gpu_single(body);
    int nt = 0;
    int64_t nb = 1;
    while (s && nt < IR_MAX_RANK * 2 && s->kind == LOOP_S_FOR && s->u.loop.kind == LOOP_PARALLEL &&
           s->u.loop.extent->kind == LOOP_E_INT && s->u.loop.extent->u.i >= 1) {
        if (util_mul_overflow_i64(nb, s->u.loop.extent->u.i, &nb) || nb > 0x7fffffff)
            return body;
        tasks[nt++] = s;
        s = tgt_gpu_single(s->u.loop.body);
    }
    LoopStmt *inner = nt ? tasks[nt - 1]->u.loop.body : body;
    scan(&c, inner);
    if (c.oom)
        return NULL;
    if (nt == 0 && (c.bad || c.widest < 2))
        return body;
    int64_t most = o->coop_threads > 0 ? o->coop_threads : 512;
    c.T = c.bad || c.widest < 2 ? 1 : (c.widest + 31) / 32 * 32;     /* bad: a thread per task */
    if (c.T > most)
        c.T = most;
    int bx = loop_add_var(p, "bx", IR_DT_I64);
    c.tx = loop_add_var(p, "tx", IR_DT_I64);
    LoopStmt *tb = loop_block(p);
    if (bx < 0 || c.tx < 0 || !tb)
        return NULL;
    int64_t stride = nb;
    for (int i = 0; i < nt; i++) {                   /* task variables from the block index */
        int64_t e = tasks[i]->u.loop.extent->u.i;
        stride /= e;
        LoopExpr *v = stride > 1 ? B2(&c, LOOP_DIV, V(&c, bx), I(&c, stride)) : V(&c, bx);
        add(&c, tb, loop_let(p, tasks[i]->u.loop.var, i > 0 ? B2(&c, LOOP_MOD, v, I(&c, e)) : v, 0));
    }
    if (c.T > 1) {
        Set pending = { 0 };
        rewrite_items(&c, inner, tb, &pending);
        set_free(&pending);
    } else {
        add(&c, tb, inner);
    }
    serial(tb);
    LoopStmt *k = loop_for(p, bx, I(&c, nb), LOOP_GPU_BLOCK_X, loop_for(p, c.tx, I(&c, c.T), LOOP_GPU_THREAD_X, tb));
    if (!k)
        return NULL;
    spill_locals(&c, k, bx, nb);
    return c.oom ? NULL : k;
}
