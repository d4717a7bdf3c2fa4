/* targets/gpu/emulate.c — barrier semantics for --gpu-emulate, where block
 * and thread loops run serially on the host.
 *
 * A thread nest (perfectly nested GPU_THREAD_* loops) whose body holds
 * barriers is rewritten into consecutive thread nests, one per barrier-free
 * segment, so every thread finishes a segment before any starts the next —
 * what bar.sync guarantees on the device.  Within a nest the threads run one
 * after another, so a thread that reads what another writes before the next
 * barrier sees the old value: a missing barrier gives a wrong result.
 *
 * A serial loop or an if holding a barrier is uniform (its extent or
 * condition is the same in every thread: the schedules put barriers under
 * no other), so it moves outside the thread loops, its extent or condition
 * evaluated as thread 0's.  A loop is rotated (rotate) so that a thread's
 * code still runs from barrier to barrier across the loop's boundaries, as
 * on the device — the code after the body's last barrier with the next
 * iteration's code before its first, the code before the loop with the
 * first iteration's, the code after it with the last's:
 *
 *     for ty, tx { a; for kt < n { b; barrier; c; barrier }; d }
 *  →  for kt < n + 1 { for ty, tx { if (kt == 0) a; if (kt < n) b; if (kt == n) d }
 *                      if (kt < n) { for ty, tx { c } } }
 *
 * At an if the threads meet (the cooperative schedule moves barriers out of
 * the ifs it can):
 *
 *     for tx { a; if (c) { b; barrier; d } else { e } }
 *  →  for tx { a }  if (c[tx := 0]) { for tx { b }  for tx { d } } else { for tx { e } }
 *
 * Values a thread keeps across a barrier — the LETs at the split levels,
 * accumulators included — become LOCAL arrays with one element per thread
 * of the block (LET and ASSIGN store to them, uses load; a bool as a 0/1
 * byte).  Each copy of the thread loops gets fresh variables (a variable is
 * bound once in a program). */
#include "targets/gpu/gpu_impl.h"

#include <stdlib.h>

static int is_thread(const LoopStmt *s)
{
    return s->kind == LOOP_S_FOR && s->u.loop.kind >= LOOP_GPU_THREAD_X && s->u.loop.kind <= LOOP_GPU_THREAD_Z;
}

int tgt_gpu_has_barrier(const LoopStmt *s)
{
    if (!s)
        return 0;
    switch (s->kind) {
    case LOOP_S_BARRIER: return 1;
    case LOOP_S_FOR: return tgt_gpu_has_barrier(s->u.loop.body);
    case LOOP_S_IF: return tgt_gpu_has_barrier(s->u.cond.then_) || tgt_gpu_has_barrier(s->u.cond.else_);
    case LOOP_S_BLOCK:
        for (int i = 0; i < s->u.block.n; i++)
            if (tgt_gpu_has_barrier(s->u.block.items[i]))
                return 1;
        return 0;
    default: return 0;
    }
}

typedef struct Em {
    LoopProgram *p;
    UtilDiag *d;
    const LoopStmt *thr[3];   /* the thread nest, outermost first */
    int n_thr;
    int *promo;               /* per var: LOCAL buffer holding it per thread, or -1 */
    int *ren;                 /* per var: replacement variable while copying a segment, or -1 */
    int rot;                  /* the loop variable being rotated, or -1 */
    struct Nest { LoopStmt *body; int fresh[3]; } *nests;   /* rotated loops' thread nests, renamed last */
    int n_nests, cap_nests;
    int oom;
} Em;

/* Linear thread id over the nest, in the current variables. */
static LoopExpr *tid(Em *m)
{
    LoopExpr *e = loop_int(m->p, 0);
    for (int i = 0; i < m->n_thr; i++)
        e = loop_bin(m->p, LOOP_ADD, loop_bin(m->p, LOOP_MUL, e, loop_expr_copy(m->p, m->thr[i]->u.loop.extent)),
                     loop_var(m->p, m->thr[i]->u.loop.var));
    return e;
}

static int64_t n_threads(Em *m)
{
    int64_t n = 1;
    for (int i = 0; i < m->n_thr; i++)
        n *= m->thr[i]->u.loop.extent->u.i;
    return n;
}

/* Calls f on every VAR node of e (f may rewrite the node in place). */
static void each_var(Em *m, LoopExpr *e, void (*f)(Em *, LoopExpr *))
{
    if (!e)
        return;
    switch (e->kind) {
    case LOOP_E_VAR: f(m, e); break;
    case LOOP_E_LOAD: each_var(m, e->u.load.index, f); break;
    case LOOP_E_BIN: each_var(m, e->u.bin.a, f); each_var(m, e->u.bin.b, f); break;
    case LOOP_E_UN: each_var(m, e->u.un.a, f); break;
    case LOOP_E_SELECT:
        each_var(m, e->u.sel.cond, f);
        each_var(m, e->u.sel.a, f);
        each_var(m, e->u.sel.b, f);
        break;
    case LOOP_E_CALL:
        for (int i = 0; i < e->u.call.n && i < 3; i++)
            each_var(m, e->u.call.args[i], f);
        break;
    case LOOP_E_CAST: each_var(m, e->u.cast.a, f); break;
    default: break;
    }
}

/* A promoted variable becomes a load of its per-thread slot (a bool's holds 0 or 1). */
static void promoted_load(Em *m, LoopExpr *e)
{
    if (m->promo[e->u.var] < 0)
        return;
    LoopExpr *l = loop_load(m->p, m->promo[e->u.var], tid(m));
    if (l && e->type == IR_DT_BOOL)
        l = loop_cast(m->p, IR_DT_BOOL, l);
    if (!l)
        m->oom = 1;
    else
        *e = *l;
}

static void rw_expr(Em *m, LoopExpr *e) { each_var(m, e, promoted_load); }

static void rw_stmt(Em *m, LoopStmt *s)
{
    if (!s)
        return;
    switch (s->kind) {
    case LOOP_S_FOR: rw_expr(m, s->u.loop.extent); rw_stmt(m, s->u.loop.body); break;
    case LOOP_S_LET:
    case LOOP_S_ASSIGN: {
        int var = s->kind == LOOP_S_LET ? s->u.let.var : s->u.assign.var;
        LoopExpr *v = s->kind == LOOP_S_LET ? s->u.let.value : s->u.assign.value;
        rw_expr(m, v);
        if (m->promo[var] >= 0) {
            if (v->type == IR_DT_BOOL)
                v = loop_cast(m->p, IR_DT_U8, v);
            LoopStmt *st = v ? loop_store(m->p, m->promo[var], tid(m), v) : NULL;
            if (!st)
                m->oom = 1;
            else
                *s = *st;
        }
        break;
    }
    case LOOP_S_STORE: rw_expr(m, s->u.store.index); rw_expr(m, s->u.store.value); break;
    case LOOP_S_IF: rw_expr(m, s->u.cond.cond); rw_stmt(m, s->u.cond.then_); rw_stmt(m, s->u.cond.else_); break;
    case LOOP_S_BLOCK:
        for (int i = 0; i < s->u.block.n; i++)
            rw_stmt(m, s->u.block.items[i]);
        break;
    default: break;
    }
}

/* Marks the LETs at the split levels (the nest's body and the bodies of
 * barrier-holding loops) for promotion. */
static int promote(Em *m, LoopStmt *s)
{
    LoopStmt **items = s->kind == LOOP_S_BLOCK ? s->u.block.items : &s;
    int n = s->kind == LOOP_S_BLOCK ? s->u.block.n : 1;
    for (int i = 0; i < n; i++) {
        LoopStmt *it = items[i];
        if (it->kind == LOOP_S_LET && m->promo[it->u.let.var] < 0) {
            const LoopVar *v = &m->p->vars[it->u.let.var];
            IrShape sh = { .rank = 1, .dims = { n_threads(m) } };
            int b = loop_add_buf(m->p, v->name, v->type == IR_DT_BOOL ? IR_DT_U8 : v->type, &sh, LOOP_ST_LOCAL);
            if (b < 0)
                return -1;
            m->promo[it->u.let.var] = b;
        } else if (it->kind == LOOP_S_FOR && tgt_gpu_has_barrier(it)) {
            if (promote(m, it->u.loop.body))
                return -1;
        } else if (it->kind == LOOP_S_IF && tgt_gpu_has_barrier(it)) {
            if (promote(m, it->u.cond.then_) || (it->u.cond.else_ && promote(m, it->u.cond.else_)))
                return -1;
        } else if (it->kind == LOOP_S_BLOCK && tgt_gpu_has_barrier(it)) {
            if (promote(m, it))
                return -1;
        }
    }
    return 0;
}

/* Renames the thread variables in place (segments are moved, not copied). */
static void renamed(Em *m, LoopExpr *e)
{
    if (m->ren[e->u.var] >= 0)
        e->u.var = m->ren[e->u.var];
}

static void ren_expr(Em *m, LoopExpr *e) { each_var(m, e, renamed); }

static void ren_stmt(Em *m, LoopStmt *s)
{
    if (!s)
        return;
    switch (s->kind) {
    case LOOP_S_FOR: ren_expr(m, s->u.loop.extent); ren_stmt(m, s->u.loop.body); break;
    case LOOP_S_LET: ren_expr(m, s->u.let.value); break;
    case LOOP_S_ASSIGN: ren_expr(m, s->u.assign.value); break;
    case LOOP_S_STORE: ren_expr(m, s->u.store.index); ren_expr(m, s->u.store.value); break;
    case LOOP_S_IF: ren_expr(m, s->u.cond.cond); ren_stmt(m, s->u.cond.then_); ren_stmt(m, s->u.cond.else_); break;
    case LOOP_S_BLOCK:
        for (int i = 0; i < s->u.block.n; i++)
            ren_stmt(m, s->u.block.items[i]);
        break;
    default: break;
    }
}

/* A fresh copy of the thread nest around body; the new variables in fresh[]
 * (the body is renamed to them by rename_nest). */
static LoopStmt *thread_nest(Em *m, LoopStmt *body, int *fresh)
{
    LoopStmt *s = body;
    for (int i = m->n_thr - 1; i >= 0 && s; i--) {
        const LoopStmt *t = m->thr[i];
        fresh[i] = loop_add_var(m->p, m->p->vars[t->u.loop.var].name, IR_DT_I64);
        s = fresh[i] < 0 ? NULL : loop_for(m->p, fresh[i], loop_expr_copy(m->p, t->u.loop.extent), t->u.loop.kind, s);
    }
    if (!s)
        m->oom = 1;
    return s;
}

static void rename_nest(Em *m, LoopStmt *body, const int *fresh)
{
    for (int i = 0; i < m->n_thr; i++)
        m->ren[m->thr[i]->u.loop.var] = fresh[i];
    ren_stmt(m, body);
    for (int i = 0; i < m->n_thr; i++)
        m->ren[m->thr[i]->u.loop.var] = -1;
}

/* The code every thread runs before the next barrier: a block not placed
 * yet, or one already inside a thread nest (a rotated loop's, below). */
typedef struct Seg {
    LoopStmt *blk;
    int placed;
} Seg;

/* Ends seg at a barrier: a block not placed yet is wrapped in a fresh copy
 * of the thread nest and appended to out. */
static void close_seg(Em *m, LoopStmt *out, Seg *seg)
{
    if (seg->blk && !seg->placed && seg->blk->u.block.n) {
        int fresh[3];
        LoopStmt *t = thread_nest(m, seg->blk, fresh);
        if (t) {
            rename_nest(m, seg->blk, fresh);
            if (loop_block_add(m->p, out, t) != 0)
                m->oom = 1;
        }
    }
    *seg = (Seg){ NULL, 0 };
}

static void seg_add(Em *m, Seg *seg, LoopStmt *s)
{
    if (!seg->blk && !(seg->blk = loop_block(m->p)))
        m->oom = 1;
    else if (loop_block_add(m->p, seg->blk, s) != 0)
        m->oom = 1;
}

/* e (an extent or a condition, promoted values rewritten) as thread 0 sees
 * it, outside the thread loops. */
static LoopExpr *uniform(Em *m, const LoopExpr *e)
{
    int vars[3];
    LoopExpr *zero[3];
    for (int i = 0; i < m->n_thr; i++) {
        vars[i] = m->thr[i]->u.loop.var;
        zero[i] = loop_int(m->p, 0);
    }
    LoopExpr *r = loop_expr_subst(m->p, e, vars, zero, m->n_thr);
    if (!r)
        m->oom = 1;
    return r;
}

static void split(Em *m, LoopStmt *body, LoopStmt *out, Seg *seg);

/* A block of the segments of s, each thread nest closed (NULL stays NULL). */
static LoopStmt *split_block(Em *m, LoopStmt *s)
{
    if (!s)
        return NULL;
    LoopStmt *b = loop_block(m->p);
    Seg seg = { NULL, 0 };
    if (!b)
        m->oom = 1;
    else
        split(m, s, b, &seg);
    close_seg(m, b, &seg);
    return b;
}

/* s - 1 for the rotated loop's variable (m->rot) in the tail's code. */
static void prev_iteration(Em *m, LoopExpr *e)
{
    if (e->u.var != m->rot)
        return;
    LoopExpr *d = loop_bin(m->p, LOOP_SUB, loop_var(m->p, m->rot), loop_int(m->p, 1));
    if (!d)
        m->oom = 1;
    else
        *e = *d;
}

static void prev_stmt(Em *m, LoopStmt *s)
{
    if (!s)
        return;
    switch (s->kind) {
    case LOOP_S_FOR: each_var(m, s->u.loop.extent, prev_iteration); prev_stmt(m, s->u.loop.body); break;
    case LOOP_S_LET: each_var(m, s->u.let.value, prev_iteration); break;
    case LOOP_S_ASSIGN: each_var(m, s->u.assign.value, prev_iteration); break;
    case LOOP_S_STORE:
        each_var(m, s->u.store.index, prev_iteration);
        each_var(m, s->u.store.value, prev_iteration);
        break;
    case LOOP_S_IF:
        each_var(m, s->u.cond.cond, prev_iteration);
        prev_stmt(m, s->u.cond.then_);
        prev_stmt(m, s->u.cond.else_);
        break;
    case LOOP_S_BLOCK:
        for (int i = 0; i < s->u.block.n; i++)
            prev_stmt(m, s->u.block.items[i]);
        break;
    default: break;
    }
}

static LoopStmt *guarded(Em *m, LoopBinOp op, LoopExpr *a, LoopExpr *b, LoopStmt *then_)
{
    LoopStmt *s = loop_if(m->p, loop_bin(m->p, op, a, b), then_, NULL);
    if (!s)
        m->oom = 1;
    return s;
}

/* A uniform loop `for s < n { body }` holding barriers, rotated so that a
 * thread's code runs from barrier to barrier across iterations, as on the
 * device (body = H; barrier; ...; barrier; Z, the open segment P before it):
 *
 *     for s < n + 1 {
 *       for tx { if (s == 0) P; if (0 < s) Z[s := s - 1]; if (s < n) H; if (s == n) (what follows) }
 *       if (s < n) { the thread nests between H and Z }
 *     }
 *
 * so a barrier missing at the top or the bottom of the body, before or after
 * the loop, shows in the emulated result.  (An open segment already placed
 * in another rotated loop's nest, or a body ending in one, closes there:
 * then those threads meet at that boundary.) */
static void rotate(Em *m, LoopStmt *loop, LoopStmt *out, Seg *seg)
{
    LoopProgram *p = m->p;
    int s = loop->u.loop.var;
    LoopExpr *n = uniform(m, loop->u.loop.extent);
    LoopStmt *x = loop_block(p), *head = loop_block(p), *exit = loop_block(p);
    LoopStmt *mid = loop_block(p), *ib = loop_block(p);
    if (!n || !x || !head || !exit || !mid || !ib) {
        m->oom = 1;
        return;
    }
    LoopStmt *pre = seg->blk && !seg->placed && seg->blk->u.block.n ? seg->blk : NULL;
    *seg = (Seg){ NULL, 0 };
    if (m->n_nests == m->cap_nests) {
        int cap = m->cap_nests ? m->cap_nests * 2 : 8;
        struct Nest *nn = realloc(m->nests, (size_t)cap * sizeof *nn);
        if (!nn) {
            m->oom = 1;
            return;
        }
        m->nests = nn;
        m->cap_nests = cap;
    }
    struct Nest *nest = &m->nests[m->n_nests++];
    nest->body = x;                                  /* renamed once what follows the loop is in */
    LoopStmt *tn = thread_nest(m, x, nest->fresh);
    Seg body = { head, 1 };
    split(m, loop->u.loop.body, mid, &body);
    if (pre)
        loop_block_add(p, x, guarded(m, LOOP_EQ, loop_var(p, s), loop_int(p, 0), pre));
    if (body.blk && !body.placed && body.blk->u.block.n) {   /* Z: the next iteration's nest runs it */
        m->rot = s;
        prev_stmt(m, body.blk);
        m->rot = -1;
        loop_block_add(p, x, guarded(m, LOOP_LT, loop_int(p, 0), loop_var(p, s), body.blk));
    }
    loop_block_add(p, x, guarded(m, LOOP_LT, loop_var(p, s), loop_expr_copy(p, loop->u.loop.extent), head));
    loop_block_add(p, x, guarded(m, LOOP_EQ, loop_var(p, s), loop_expr_copy(p, loop->u.loop.extent), exit));
    loop_block_add(p, ib, tn);
    loop_block_add(p, ib, guarded(m, LOOP_LT, loop_var(p, s), loop_expr_copy(p, n), mid));
    LoopStmt *f = loop_for(p, s, loop_bin(p, LOOP_ADD, n, loop_int(p, 1)), LOOP_SERIAL, ib);
    if (!f || loop_block_add(p, out, f) != 0)
        m->oom = 1;
    *seg = (Seg){ exit, 1 };
}

/* Appends to out the thread nests of body's barrier-free segments, the
 * uniform loops and ifs holding barriers in between; seg is the code still
 * to run before the next barrier, in and out. */
static void split(Em *m, LoopStmt *body, LoopStmt *out, Seg *seg)
{
    LoopStmt **items = body->kind == LOOP_S_BLOCK ? body->u.block.items : &body;
    int n = body->kind == LOOP_S_BLOCK ? body->u.block.n : 1;
    for (int i = 0; i < n && !m->oom; i++) {
        LoopStmt *it = items[i];
        if (it->kind == LOOP_S_BARRIER) {
            close_seg(m, out, seg);
        } else if (it->kind == LOOP_S_BLOCK && tgt_gpu_has_barrier(it)) {
            split(m, it, out, seg);
        } else if (it->kind == LOOP_S_FOR && tgt_gpu_has_barrier(it)) {
            rotate(m, it, out, seg);
        } else if (it->kind == LOOP_S_IF && tgt_gpu_has_barrier(it)) {   /* the threads meet before and after */
            close_seg(m, out, seg);
            LoopStmt *t = split_block(m, it->u.cond.then_), *e = split_block(m, it->u.cond.else_);
            LoopExpr *cond = uniform(m, it->u.cond.cond);
            LoopStmt *f = t && cond && (e || !it->u.cond.else_) ? loop_if(m->p, cond, t, e) : NULL;
            if (!f || loop_block_add(m->p, out, f) != 0)
                m->oom = 1;
        } else {
            seg_add(m, seg, it);
        }
    }
}

/* Finds thread nests holding barriers under s and rewrites them in place. */
static int walk(Em *m, LoopStmt *s)
{
    if (!s)
        return 0;
    if (is_thread(s)) {
        if (!tgt_gpu_has_barrier(s))
            return 0;
        m->n_thr = 0;
        LoopStmt *b = s;
        while (is_thread(b) && m->n_thr < 3) {
            if (b->u.loop.extent->kind != LOOP_E_INT)
                return util_error(m->d, util_loc_file(NULL), "GPU emulation needs constant thread extents");
            m->thr[m->n_thr++] = b;
            b = b->u.loop.body;
            while (b->kind == LOOP_S_BLOCK && b->u.block.n == 1 && is_thread(b->u.block.items[0]))
                b = b->u.block.items[0];
        }
        for (int v = 0; v < m->p->n_vars; v++)
            m->promo[v] = -1;
        if (promote(m, b))
            return -1;
        rw_stmt(m, b);
        LoopStmt *out = loop_block(m->p);
        if (!out)
            return -1;
        Seg seg = { NULL, 0 };
        m->n_nests = 0;
        split(m, b, out, &seg);
        close_seg(m, out, &seg);
        for (int i = 0; i < m->n_nests; i++)
            rename_nest(m, m->nests[i].body, m->nests[i].fresh);
        if (m->oom)
            return -1;
        *s = *out;
        return 0;
    }
    switch (s->kind) {
    case LOOP_S_FOR: return walk(m, s->u.loop.body);
    case LOOP_S_IF: return walk(m, s->u.cond.then_) || walk(m, s->u.cond.else_) ? -1 : 0;
    case LOOP_S_BLOCK:
        for (int i = 0; i < s->u.block.n; i++)
            if (walk(m, s->u.block.items[i]))
                return -1;
        return 0;
    default: return 0;
    }
}

int tgt_gpu_split_barriers(LoopProgram *p, UtilDiag *d)
{
    Em m = { .p = p, .d = d, .rot = -1 };
    int rc = 0;
    for (int k = 0; rc == 0 && k < p->n_kernels; k++) {
        if (!tgt_gpu_has_barrier(p->kernels[k].body))
            continue;
        /* variables are added while rewriting: size the tables generously */
        size_t cap = (size_t)p->n_vars * 2 + 64;
        free(m.promo);
        free(m.ren);
        m.promo = malloc(cap * sizeof *m.promo);
        m.ren = malloc(cap * sizeof *m.ren);
        if (!m.promo || !m.ren) {
            rc = -1;
            break;
        }
        for (size_t v = 0; v < cap; v++)
            m.promo[v] = m.ren[v] = -1;
        rc = walk(&m, p->kernels[k].body);
        if (rc)   /* first error wins: a more specific one stays */
            util_error(d, util_loc_file(NULL), "out of memory while splitting GPU barriers in '%s'", p->name);
    }
    free(m.promo);
    free(m.ren);
    free(m.nests);
    return rc;
}
