/* targets/gpu/tile.c — shared-memory tiles for matrix products (MatMul,
 * Gemm, and Conv as an implicit GEMM), the classic two-tile scheme.
 *
 * Recognised (the form lowering gives them): a nest of independent output
 * loops whose body is
 *
 *     let acc = init (mutable); [other lets]
 *     for r1 < R1 { ... for rj < Rj { [if (cond)] acc = acc + X * Y } }
 *     rest (stores of f(acc))
 *
 * where X does not mention some output variables (the N side: spatial /
 * column variables) and Y does not mention others (the M side: output
 * channel / row variables); variables both use are batch.  With T = tile:
 *
 *     for bz < batch gpu.block.z, by < ceil(M/T) gpu.block.y, bx < ceil(N/T) gpu.block.x
 *      for ty < T gpu.thread.y, tx < T gpu.thread.x
 *       mf = by*T + ty; nf = bx*T + tx             (M / N side variables from min(mf, M-1) ...)
 *       let acc = init
 *       for kt < ceil(R/T) {                       (R = R1*...*Rj, the flattened reduction)
 *         As[ty][tx] = kt*T+tx < R [& cond] ? X(r := kt*T+tx) : 0
 *         Bs[ty][tx] = kt*T+ty < R [& cond] ? Y(r := kt*T+ty) : 0
 *         barrier
 *         for kk < T: acc = acc + As[ty][kk] * Bs[kk][tx]
 *         barrier
 *       }
 *       if (mf < M & nf < N) rest
 *
 * Threads past the edge compute with clamped indices (every load stays in
 * bounds) and store nothing; zero padding of the last k tile adds 0*0.  The
 * sum runs over k in the original order, so results match the untiled
 * kernel.  Each thread reads 2*T shared values per 2 global loads. */
#include "targets/gpu/gpu_impl.h"

#define MAXV (IR_MAX_RANK * 2)

typedef struct Prod {
    int acc;
    LoopExpr *x, *y, *cond;
    int rv[MAXV], nr;
    int64_t re[MAXV];
} Prod;

static LoopStmt *only(LoopStmt *s)
{
    while (s && s->kind == LOOP_S_BLOCK && s->u.block.n == 1)
        s = s->u.block.items[0];
    return s;
}

/* for r1 { ... [if (cond)] acc = acc + X * Y } */
static int match_reduction(LoopStmt *s, Prod *pr)
{
    pr->nr = 0;
    s = only(s);
    while (s && s->kind == LOOP_S_FOR) {
        if (pr->nr == MAXV || s->u.loop.kind != LOOP_SERIAL || s->u.loop.extent->kind != LOOP_E_INT)
            return 0;
        pr->rv[pr->nr] = s->u.loop.var;
        pr->re[pr->nr++] = s->u.loop.extent->u.i;
        s = only(s->u.loop.body);
    }
    pr->cond = NULL;
    if (s && s->kind == LOOP_S_IF && !s->u.cond.else_) {
        pr->cond = s->u.cond.cond;
        s = only(s->u.cond.then_);
    }
    if (!s || s->kind != LOOP_S_ASSIGN || pr->nr == 0)
        return 0;
    LoopExpr *v = s->u.assign.value;
    if (v->kind != LOOP_E_BIN || v->u.bin.op != LOOP_ADD || v->u.bin.a->kind != LOOP_E_VAR ||
        v->u.bin.a->u.var != s->u.assign.var)
        return 0;
    LoopExpr *m = v->u.bin.b;
    if (m->kind != LOOP_E_BIN || m->u.bin.op != LOOP_MUL)
        return 0;
    pr->acc = s->u.assign.var;
    pr->x = m->u.bin.a;
    pr->y = m->u.bin.b;
    return ir_dtype_is_float(pr->x->type) && ir_dtype_is_float(pr->y->type);
}

/* Only chain and reduction variables appear in e. */
static int vars_known(const LoopExpr *e, const int *ok, int n_ok)
{
    if (!e)
        return 1;
    switch (e->kind) {
    case LOOP_E_VAR:
        for (int i = 0; i < n_ok; i++)
            if (ok[i] == e->u.var)
                return 1;
        return 0;
    case LOOP_E_LOAD: return vars_known(e->u.load.index, ok, n_ok);
    case LOOP_E_BIN: return vars_known(e->u.bin.a, ok, n_ok) && vars_known(e->u.bin.b, ok, n_ok);
    case LOOP_E_UN: return vars_known(e->u.un.a, ok, n_ok);
    case LOOP_E_SELECT:
        return vars_known(e->u.sel.cond, ok, n_ok) && vars_known(e->u.sel.a, ok, n_ok) &&
               vars_known(e->u.sel.b, ok, n_ok);
    case LOOP_E_CALL:
        for (int i = 0; i < e->u.call.n && i < 3; i++)
            if (!vars_known(e->u.call.args[i], ok, n_ok))
                return 0;
        return 1;
    case LOOP_E_CAST: return vars_known(e->u.cast.a, ok, n_ok);
    default: return 1;
    }
}

typedef struct Tb {
    LoopProgram *p;
    int64_t T;
    LoopStmt *blk;
    int oom;
} Tb;

static LoopExpr *I(Tb *t, int64_t v) { return loop_int(t->p, v); }
static LoopExpr *V(Tb *t, int v) { return loop_var(t->p, v); }
static LoopExpr *B2(Tb *t, LoopBinOp op, LoopExpr *a, LoopExpr *b) { return loop_bin(t->p, op, a, b); }

static void add(Tb *t, LoopStmt *blk, LoopStmt *s)
{
    if (!s || !blk || loop_block_add(t->p, blk, s) != 0)
        t->oom = 1;
}

/* let vars[i] = (flat / stride_i) mod ext_i, row-major over ext[0..n). */
static void unflatten(Tb *t, LoopStmt *blk, LoopExpr *flat, const int *vars, const int64_t *ext, int n)
{
    int64_t stride = 1;
    for (int i = 0; i < n; i++)
        stride *= ext[i];
    for (int i = 0; i < n; i++) {
        stride /= ext[i];
        LoopExpr *v = B2(t, LOOP_MOD, B2(t, LOOP_DIV, loop_expr_copy(t->p, flat), I(t, stride)), I(t, ext[i]));
        add(t, blk, loop_let(t->p, vars[i], v, 0));
    }
}

/* The reduction variables as expressions of a flat index k. */
static void reduction_exprs(Tb *t, const Prod *pr, LoopExpr *k, LoopExpr **out)
{
    int64_t stride = 1;
    for (int i = 0; i < pr->nr; i++)
        stride *= pr->re[i];
    for (int i = 0; i < pr->nr; i++) {
        stride /= pr->re[i];
        out[i] = B2(t, LOOP_MOD, B2(t, LOOP_DIV, loop_expr_copy(t->p, k), I(t, stride)), I(t, pr->re[i]));
    }
}

/* tile[ty*T + tx] = k < R [& cond] ? e(r := k) : 0, as an if (no load runs out of range). */
static LoopStmt *fill(Tb *t, const Prod *pr, int tile, const LoopExpr *e, const LoopExpr *cond, LoopExpr *k,
                      int64_t R, LoopExpr *slot)
{
    LoopExpr *r[MAXV];
    reduction_exprs(t, pr, k, r);
    LoopExpr *in = B2(t, LOOP_LT, loop_expr_copy(t->p, k), I(t, R));
    if (cond)
        in = B2(t, LOOP_AND, in, loop_expr_subst(t->p, cond, pr->rv, r, pr->nr));
    LoopExpr *val = loop_expr_subst(t->p, e, pr->rv, r, pr->nr);
    IrDType dt = t->p->bufs[tile].dtype;
    return loop_if(t->p, in, loop_store(t->p, tile, slot, val),
                   loop_store(t->p, tile, loop_expr_copy(t->p, slot), loop_float(t->p, dt, 0.0)));
}

LoopStmt *tgt_gpu_tile_product(LoopProgram *p, const TgtGpuOptions *o, LoopStmt *const *chain, int n)
{
    int64_t T = o->tile;
    if (T < 2 || T * T > 1024 || n > MAXV)
        return NULL;
    LoopStmt *inner = chain[n - 1]->u.loop.body;
    LoopStmt **items = inner->kind == LOOP_S_BLOCK ? inner->u.block.items : &inner;
    int n_items = inner->kind == LOOP_S_BLOCK ? inner->u.block.n : 1;
    int ri = 0;
    while (ri < n_items && items[ri]->kind == LOOP_S_LET)
        ri++;
    Prod pr;
    if (ri == n_items || items[ri]->kind != LOOP_S_FOR || !match_reduction(items[ri], &pr))
        return NULL;
    int acc_ok = 0;
    for (int i = 0; i < ri; i++)
        acc_ok |= items[i]->u.let.var == pr.acc && items[i]->u.let.mutable_;
    if (!acc_ok)
        return NULL;

    /* classify the output variables */
    int known[MAXV * 2], nk = 0;
    int mv[MAXV], nv[MAXV], bv[MAXV], nm = 0, nn = 0, nb = 0;
    int64_t me[MAXV], ne[MAXV], be[MAXV], M = 1, N = 1, NB = 1, R = 1;
    for (int i = 0; i < n; i++) {
        int v = chain[i]->u.loop.var;
        int64_t e = chain[i]->u.loop.extent->u.i;
        known[nk++] = v;
        int ux = loop_expr_uses(pr.x, v), uy = loop_expr_uses(pr.y, v);
        if (ux && !uy) {
            mv[nm] = v, me[nm++] = e, M *= e;
        } else if (uy && !ux) {
            nv[nn] = v, ne[nn++] = e, N *= e;
        } else {
            bv[nb] = v, be[nb++] = e, NB *= e;
        }
    }
    for (int i = 0; i < pr.nr; i++) {
        known[nk++] = pr.rv[i];
        R *= pr.re[i];
    }
    if (nm == 0 || nn == 0 || M < 2 || N < 2 || NB > 65535 || !vars_known(pr.x, known, nk) ||
        !vars_known(pr.y, known, nk) || !vars_known(pr.cond, known, nk))
        return NULL;
    /* the guard goes to the tile whose side it can be evaluated on */
    int cond_m = 0, cond_n = 0;
    for (int i = 0; i < nm; i++)
        cond_m |= loop_expr_uses(pr.cond, mv[i]);
    for (int i = 0; i < nn; i++)
        cond_n |= loop_expr_uses(pr.cond, nv[i]);
    if (cond_m && cond_n)
        return NULL;
    int64_t gy = (M + T - 1) / T, gx = (N + T - 1) / T;
    if (gy > 65535 || gx > 0x7fffffff)
        return NULL;

    Tb t = { p, T, NULL, 0 };
    IrShape sh = { .rank = 2, .dims = { T, T } };
    int As = loop_add_buf(p, "As", pr.x->type, &sh, LOOP_ST_LOCAL);
    int Bs = loop_add_buf(p, "Bs", pr.y->type, &sh, LOOP_ST_LOCAL);
    int bz = loop_add_var(p, "bz", IR_DT_I64), by = loop_add_var(p, "by", IR_DT_I64);
    int bx = loop_add_var(p, "bx", IR_DT_I64), ty = loop_add_var(p, "ty", IR_DT_I64);
    int tx = loop_add_var(p, "tx", IR_DT_I64), mf = loop_add_var(p, "mf", IR_DT_I64);
    int nf = loop_add_var(p, "nf", IR_DT_I64), kt = loop_add_var(p, "kt", IR_DT_I64);
    int kk = loop_add_var(p, "kk", IR_DT_I64);
    if (As < 0 || Bs < 0 || bz < 0 || by < 0 || bx < 0 || ty < 0 || tx < 0 || mf < 0 || nf < 0 || kt < 0 || kk < 0)
        return NULL;

    LoopStmt *body = loop_block(p);
    add(&t, body, loop_let(p, mf, B2(&t, LOOP_ADD, B2(&t, LOOP_MUL, V(&t, by), I(&t, T)), V(&t, ty)), 0));
    add(&t, body, loop_let(p, nf, B2(&t, LOOP_ADD, B2(&t, LOOP_MUL, V(&t, bx), I(&t, T)), V(&t, tx)), 0));
    if (nb)
        unflatten(&t, body, V(&t, bz), bv, be, nb);
    unflatten(&t, body, B2(&t, LOOP_MIN, V(&t, mf), I(&t, M - 1)), mv, me, nm);
    unflatten(&t, body, B2(&t, LOOP_MIN, V(&t, nf), I(&t, N - 1)), nv, ne, nn);
    for (int i = 0; i < ri; i++)
        add(&t, body, items[i]);

    LoopExpr *slot = B2(&t, LOOP_ADD, B2(&t, LOOP_MUL, V(&t, ty), I(&t, T)), V(&t, tx));
    LoopExpr *ka = B2(&t, LOOP_ADD, B2(&t, LOOP_MUL, V(&t, kt), I(&t, T)), V(&t, tx));
    LoopExpr *kb = B2(&t, LOOP_ADD, B2(&t, LOOP_MUL, V(&t, kt), I(&t, T)), V(&t, ty));
    LoopStmt *step = loop_block(p);
    add(&t, step, fill(&t, &pr, As, pr.x, cond_m ? pr.cond : NULL, ka, R, slot));
    add(&t, step, fill(&t, &pr, Bs, pr.y, cond_m ? NULL : pr.cond, kb, R, slot));
    add(&t, step, loop_barrier(p));
    LoopExpr *a = loop_load(p, As, B2(&t, LOOP_ADD, B2(&t, LOOP_MUL, V(&t, ty), I(&t, T)), V(&t, kk)));
    LoopExpr *b = loop_load(p, Bs, B2(&t, LOOP_ADD, B2(&t, LOOP_MUL, V(&t, kk), I(&t, T)), V(&t, tx)));
    add(&t, step, loop_for(p, kk, I(&t, T), LOOP_UNROLLED,
                           loop_assign(p, pr.acc, B2(&t, LOOP_ADD, V(&t, pr.acc), B2(&t, LOOP_MUL, a, b)))));
    add(&t, step, loop_barrier(p));
    add(&t, body, loop_for(p, kt, I(&t, (R + T - 1) / T), LOOP_SERIAL, step));

    LoopStmt *rest = loop_block(p);
    for (int i = ri + 1; i < n_items; i++)
        add(&t, rest, items[i]);
    LoopExpr *in = B2(&t, LOOP_AND, B2(&t, LOOP_LT, V(&t, mf), I(&t, M)), B2(&t, LOOP_LT, V(&t, nf), I(&t, N)));
    add(&t, body, loop_if(p, in, rest, NULL));

    LoopStmt *s = loop_for(p, tx, I(&t, T), LOOP_GPU_THREAD_X, body);
    s = loop_for(p, ty, I(&t, T), LOOP_GPU_THREAD_Y, s);
    s = loop_for(p, bx, I(&t, gx), LOOP_GPU_BLOCK_X, s);
    s = loop_for(p, by, I(&t, gy), LOOP_GPU_BLOCK_Y, s);
    s = loop_for(p, bz, I(&t, NB), LOOP_GPU_BLOCK_Z, s);
    return t.oom ? NULL : s;
}
