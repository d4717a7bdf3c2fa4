/* targets/gpu/emulate.c — barrier semantics for --gpu-emulate, where block
 * and thread loops run serially on the host.
 *
 * A thread nest (perfectly nested GPU_THREAD_* loops) whose body holds
 * barriers is rewritten into consecutive thread nests, one per barrier-free
 * segment, so every thread finishes a segment before any starts the next —
 * what bar.sync guarantees on the device:
 *
 *     for ty, tx { a; for kt { b; barrier; c; barrier } ; d }
 *  →  for ty, tx { a }  for kt { for ty, tx { b }  for ty, tx { c } }  for ty, tx { d }
 *
 * A serial loop containing a barrier is uniform (its extent does not depend
 * on the thread), so it moves outside the thread loops.  Values a thread
 * keeps across a barrier — the LETs at the split levels, accumulators
 * included — become LOCAL arrays with one element per thread of the block
 * (LET and ASSIGN store to them, uses load).  Each copy of the thread loops
 * gets fresh variables (a variable is bound once in a program). */
#include "targets/gpu/gpu_impl.h"

#include <stdlib.h>

static int is_thread(const LoopStmt *s)
{
    return s->kind == LOOP_S_FOR && s->u.loop.kind >= LOOP_GPU_THREAD_X && s->u.loop.kind <= LOOP_GPU_THREAD_Z;
}

static int has_barrier(const LoopStmt *s)
{
    if (!s)
        return 0;
    switch (s->kind) {
    case LOOP_S_BARRIER: return 1;
    case LOOP_S_FOR: return has_barrier(s->u.loop.body);
    case LOOP_S_IF: return has_barrier(s->u.cond.then_) || has_barrier(s->u.cond.else_);
    case LOOP_S_BLOCK:
        for (int i = 0; i < s->u.block.n; i++)
            if (has_barrier(s->u.block.items[i]))
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

/* A promoted variable becomes a load of its per-thread slot. */
static void promoted_load(Em *m, LoopExpr *e)
{
    if (m->promo[e->u.var] < 0)
        return;
    LoopExpr *l = loop_load(m->p, m->promo[e->u.var], tid(m));
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
            LoopStmt *st = loop_store(m->p, m->promo[var], tid(m), v);
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
            if (b < 0 || v->type == IR_DT_BOOL)   /* a bool across a barrier: not produced by the schedule */
                return util_error(m->d, util_loc_file(NULL), "GPU emulation cannot keep '%s' across a barrier",
                                  v->name);
            m->promo[it->u.let.var] = b;
        } else if (it->kind == LOOP_S_FOR && has_barrier(it)) {
            if (promote(m, it->u.loop.body))
                return -1;
        } else if (it->kind == LOOP_S_IF && has_barrier(it)) {
            return util_error(m->d, util_loc_file(NULL),
                              "GPU emulation: a barrier under a condition is not supported");
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

/* Wraps seg in a fresh copy of the thread nest and appends it to out. */
static void flush(Em *m, LoopStmt *out, LoopStmt **seg)
{
    if (!*seg || (*seg)->u.block.n == 0)
        return;
    int fresh[3];
    for (int i = 0; i < m->n_thr; i++) {
        int v = m->thr[i]->u.loop.var;
        fresh[i] = loop_add_var(m->p, m->p->vars[v].name, IR_DT_I64);
        if (fresh[i] < 0) {
            m->oom = 1;
            return;
        }
        m->ren[v] = fresh[i];
    }
    ren_stmt(m, *seg);
    LoopStmt *s = *seg;
    for (int i = m->n_thr - 1; i >= 0; i--) {
        const LoopStmt *t = m->thr[i];
        m->ren[t->u.loop.var] = -1;
        s = loop_for(m->p, fresh[i], loop_expr_copy(m->p, t->u.loop.extent), t->u.loop.kind, s);
    }
    if (!s || loop_block_add(m->p, out, s) != 0)
        m->oom = 1;
    *seg = NULL;
}

static void split(Em *m, LoopStmt *body, LoopStmt *out)
{
    LoopStmt **items = body->kind == LOOP_S_BLOCK ? body->u.block.items : &body;
    int n = body->kind == LOOP_S_BLOCK ? body->u.block.n : 1;
    LoopStmt *seg = NULL;
    for (int i = 0; i < n && !m->oom; i++) {
        LoopStmt *it = items[i];
        if (it->kind == LOOP_S_BARRIER) {
            flush(m, out, &seg);
        } else if (it->kind == LOOP_S_FOR && has_barrier(it)) {
            flush(m, out, &seg);
            LoopStmt *inner = loop_block(m->p);
            if (!inner) {
                m->oom = 1;
                return;
            }
            split(m, it->u.loop.body, inner);
            LoopStmt *f = loop_for(m->p, it->u.loop.var, it->u.loop.extent, LOOP_SERIAL, inner);
            if (!f || loop_block_add(m->p, out, f) != 0)
                m->oom = 1;
        } else {
            if (!seg && !(seg = loop_block(m->p))) {
                m->oom = 1;
                return;
            }
            if (loop_block_add(m->p, seg, it) != 0)
                m->oom = 1;
        }
    }
    flush(m, out, &seg);
}

/* Finds thread nests holding barriers under s and rewrites them in place. */
static int walk(Em *m, LoopStmt *s)
{
    if (!s)
        return 0;
    if (is_thread(s)) {
        if (!has_barrier(s))
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
        split(m, b, out);
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
    Em m = { .p = p, .d = d };
    int rc = 0;
    for (int k = 0; rc == 0 && k < p->n_kernels; k++) {
        if (!has_barrier(p->kernels[k].body))
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
    return rc;
}
