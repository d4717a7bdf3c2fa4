/* targets/cpu/schedule.c — the CPU schedule as data, applied to the plain
 * serial loop nests lowering emits.
 *
 * Three rewrites, each a rule over loop shapes:
 *  - unroll:    a reduction loop (its body assigns an accumulator declared
 *               outside it) of constant extent <= unroll_max whose inner loops
 *               are all unrolled  →  UNROLLED (factor 0 = full);
 *  - vectorize: an innermost serial loop of constant extent E, lanes W | E
 *               (the target's, else the widest of at least 128 bits), with no IF, no reduction, and every load /
 *               store index linear in the loop variable with coefficient 0
 *               or 1 (a load also 2 to 4 when the buffer's slack or the
 *               load's spare covers the k-1 elements past its last lane)
 *               →  for io < E/W { for i < W VECTORIZED } with
 *               i := io*W + i substituted in the body; where no W divides
 *               E, a body of LETs and one STORE of at least MASK_MIN_OPS
 *               operations with loads of coefficient 0 or 1 runs in vectors
 *               of W lanes, the last partly masked (masked);
 *  - parallel:  each top-level loop nest of a kernel, descending through
 *               loops of extent 1, whose body assigns no outer accumulator,
 *               stores at no position read from memory (scatters), and uses
 *               kernel-local buffers only if no other part of the kernel
 *               does (per-block scratch, private to a thread)  →  PARALLEL.
 * Lowering puts a kernel's output loops outermost, so a parallel loop's
 * iterations write disjoint elements. */
#include "targets/targets.h"

#include <stdlib.h>

LowSchedule tgt_cpu_schedule(int vector_bits)
{
    int simd = vector_bits >= 128 ? vector_bits : 0;
    return (LowSchedule){ .target = "cpu", .vector_bits = vector_bits > 256 ? vector_bits : 256 * (vector_bits > 0),
                           .vectorize = vector_bits > 0, .parallel = 1, .parallel_min_flops = 1 << 17,
                           .parallel_min_model_flops = 1 << 25, .unroll_max = 7,
                           .tile_mr = simd ? 6 : 0, .tile_nr = simd ? 2 * simd / 32 : 0,
                           .prefetch = simd > 0,
                           /* the masked moves of an x86 this wide (AVX-512BW, AVX2); tgt_cpu_program
                            * sets the target's own */
                           .mask_bytes = vector_bits >= 512 ? 1 : vector_bits >= 256 ? 4 : 0 };
}

/* ------------------------------------------------------------ analysis */

typedef struct Sched {
    LoopProgram *p;
    const LowSchedule *s;
    unsigned char *local;     /* per var: bound inside the statement being examined */
    int cap;                  /* entries of local */
} Sched;

/* Keeps c->local as long as the program's variable table; -1 on OOM. */
static int grow_local(Sched *c)
{
    if (c->p->n_vars <= c->cap)
        return 0;
    int nc = c->p->n_vars * 2;
    unsigned char *q = realloc(c->local, (size_t)nc);
    if (!q)
        return -1;
    for (int i = c->cap; i < nc; i++)
        q[i] = 0;
    c->local = q;
    c->cap = nc;
    return 0;
}

static void mark_bound(Sched *c, const LoopStmt *s, int on)
{
    if (!s)
        return;
    switch (s->kind) {
    case LOOP_S_FOR:
        c->local[s->u.loop.var] = (unsigned char)on;
        mark_bound(c, s->u.loop.body, on);
        break;
    case LOOP_S_LET: c->local[s->u.let.var] = (unsigned char)on; break;
    case LOOP_S_IF:
        mark_bound(c, s->u.cond.then_, on);
        mark_bound(c, s->u.cond.else_, on);
        break;
    case LOOP_S_BLOCK:
        for (int i = 0; i < s->u.block.n; i++)
            mark_bound(c, s->u.block.items[i], on);
        break;
    default: break;
    }
}

/* Does any statement in the tree s satisfy pred?  (Visits in order.) */
typedef int (*StmtPred)(Sched *c, const LoopStmt *s);

static int any_stmt(Sched *c, const LoopStmt *s, StmtPred pred)
{
    if (!s)
        return 0;
    if (pred(c, s))
        return 1;
    switch (s->kind) {
    case LOOP_S_FOR: return any_stmt(c, s->u.loop.body, pred);
    case LOOP_S_IF: return any_stmt(c, s->u.cond.then_, pred) || any_stmt(c, s->u.cond.else_, pred);
    case LOOP_S_BLOCK:
        for (int i = 0; i < s->u.block.n; i++)
            if (any_stmt(c, s->u.block.items[i], pred))
                return 1;
        return 0;
    default: return 0;
    }
}

/* An assignment to a variable not bound inside the statement examined
 * (needs c->local marked). */
static int assigns_outer(Sched *c, const LoopStmt *s)
{
    return s->kind == LOOP_S_ASSIGN && !c->local[s->u.assign.var];
}

static int is_loop(Sched *c, const LoopStmt *s)
{
    (void)c;
    return s->kind == LOOP_S_FOR;
}

static int is_rolled_loop(Sched *c, const LoopStmt *s)
{
    (void)c;
    return s->kind == LOOP_S_FOR && s->u.loop.kind != LOOP_UNROLLED;
}

/* A store into a kernel-local buffer (state shared by iterations). */
static int is_reduction(Sched *c, const LoopStmt *loop)
{
    mark_bound(c, loop, 1);
    int r = any_stmt(c, loop->u.loop.body, assigns_outer);
    mark_bound(c, loop, 0);
    return r;
}

/* Coefficient of var in index expression e when e is linear in it with
 * integer coefficient; -1 when not (or when a LET-bound variable of the
 * loop body, marked local, appears). */
static int64_t coef(Sched *c, const LoopExpr *e, int var)
{
    switch (e->kind) {
    case LOOP_E_INT: return 0;
    case LOOP_E_VAR: return e->u.var == var ? 1 : c->local[e->u.var] ? -1 : 0;
    case LOOP_E_BIN: {
        int64_t a = coef(c, e->u.bin.a, var), b = coef(c, e->u.bin.b, var);
        if (a < 0 || b < 0)
            return -1;
        switch (e->u.bin.op) {
        case LOOP_ADD: return a + b;
        case LOOP_SUB: return b == 0 ? a : -1;
        case LOOP_MUL:
            if (a == 0 && b == 0)
                return 0;
            if (a && e->u.bin.b->kind == LOOP_E_INT && e->u.bin.b->u.i >= 0)
                return a * e->u.bin.b->u.i;
            if (b && e->u.bin.a->kind == LOOP_E_INT && e->u.bin.a->u.i >= 0)
                return b * e->u.bin.a->u.i;
            return -1;
        default: return a == 0 && b == 0 ? 0 : -1;
        }
    }
    default: return -1;
    }
}

/* Elements of buffer b move under a mask as one instruction (LowSchedule.mask_bytes). */
static int maskable_buf(const Sched *c, int b)
{
    return c->s->mask_bytes > 0 && ir_dtype_size(c->p->bufs[b].dtype) >= (size_t)c->s->mask_bytes;
}

/* Every load in e has an index with coefficient 0 or 1; unless `unit` (a
 * masked vector body: masked loads, codegen/vector.c, so those of
 * coefficient 1 only from buffers whose elements the target masks), also a
 * table load where the target permutes bytes, or every k-th element (k <=
 * 4) where the k-1 past the last lane may be read: one wide load and a
 * shuffle. */
static int loads_ok(Sched *c, const LoopExpr *e, int var, int unit)
{
    if (!e)
        return 1;
    switch (e->kind) {
    case LOOP_E_LOAD: {
        if (!unit && c->s->byte_permute && loop_load_is_table(c->p, e))
            return loads_ok(c, e->u.load.index, var, unit);
        int64_t k = coef(c, e->u.load.index, var);
        if (unit && k == 1 && !maskable_buf(c, e->u.load.buf))
            return 0;
        return k == 0 || k == 1 || (!unit && k >= 2 && k <= 4 && loop_load_widens(c->p, e, k));
    }
    case LOOP_E_BIN: return loads_ok(c, e->u.bin.a, var, unit) && loads_ok(c, e->u.bin.b, var, unit);
    case LOOP_E_UN: return loads_ok(c, e->u.un.a, var, unit);
    case LOOP_E_SELECT:
        return loads_ok(c, e->u.sel.cond, var, unit) && loads_ok(c, e->u.sel.a, var, unit) &&
               loads_ok(c, e->u.sel.b, var, unit);
    case LOOP_E_CALL:
        for (int i = 0; i < e->u.call.n; i++)
            if (!loads_ok(c, e->u.call.args[i], var, unit))
                return 0;
        return 1;
    case LOOP_E_CAST: return loads_ok(c, e->u.cast.a, var, unit);
    default: return 1;
    }
}

/* Straight-line body (LET / STORE / BLOCK only) with contiguous stores;
 * *bytes gets the widest stored element size. */
static int vector_body(Sched *c, const LoopStmt *s, int var, size_t *bytes)
{
    switch (s->kind) {
    case LOOP_S_LET: return loads_ok(c, s->u.let.value, var, 0);
    case LOOP_S_STORE: {
        size_t b = ir_dtype_size(c->p->bufs[s->u.store.buf].dtype);
        if (b > *bytes)
            *bytes = b;
        return coef(c, s->u.store.index, var) == 1 && loads_ok(c, s->u.store.value, var, 0);
    }
    case LOOP_S_BLOCK:
        for (int i = 0; i < s->u.block.n; i++)
            if (!vector_body(c, s->u.block.items[i], var, bytes))
                return 0;
        return 1;
    default: return 0;
    }
}

/* ------------------------------------------------------------ rewrites */

static void subst_expr(LoopProgram *p, LoopExpr *e, int var, const LoopExpr *by)
{
    if (!e)
        return;
    switch (e->kind) {
    case LOOP_E_VAR:
        if (e->u.var == var) {
            LoopExpr *c = loop_expr_copy(p, by);
            if (c)
                *e = *c;
        }
        break;
    case LOOP_E_LOAD: subst_expr(p, e->u.load.index, var, by); break;
    case LOOP_E_BIN:
        subst_expr(p, e->u.bin.a, var, by);
        subst_expr(p, e->u.bin.b, var, by);
        break;
    case LOOP_E_UN: subst_expr(p, e->u.un.a, var, by); break;
    case LOOP_E_SELECT:
        subst_expr(p, e->u.sel.cond, var, by);
        subst_expr(p, e->u.sel.a, var, by);
        subst_expr(p, e->u.sel.b, var, by);
        break;
    case LOOP_E_CALL:
        for (int i = 0; i < e->u.call.n; i++)
            subst_expr(p, e->u.call.args[i], var, by);
        break;
    case LOOP_E_CAST: subst_expr(p, e->u.cast.a, var, by); break;
    default: break;
    }
}

static void subst_stmt(LoopProgram *p, LoopStmt *s, int var, const LoopExpr *by)
{
    switch (s->kind) {
    case LOOP_S_LET: subst_expr(p, s->u.let.value, var, by); break;
    case LOOP_S_STORE:
        subst_expr(p, s->u.store.index, var, by);
        subst_expr(p, s->u.store.value, var, by);
        break;
    case LOOP_S_BLOCK:
        for (int i = 0; i < s->u.block.n; i++)
            subst_stmt(p, s->u.block.items[i], var, by);
        break;
    default: break;
    }
}

/* Operations (not loads, variables or constants) in e. */
static int ops_in(const LoopExpr *e)
{
    if (!e)
        return 0;
    switch (e->kind) {
    case LOOP_E_BIN: return 1 + ops_in(e->u.bin.a) + ops_in(e->u.bin.b);
    case LOOP_E_UN: return 1 + ops_in(e->u.un.a);
    case LOOP_E_SELECT: return 1 + ops_in(e->u.sel.cond) + ops_in(e->u.sel.a) + ops_in(e->u.sel.b);
    case LOOP_E_CALL: {
        int n = 1;
        for (int i = 0; i < e->u.call.n; i++)
            n += ops_in(e->u.call.args[i]);
        return n;
    }
    case LOOP_E_CAST: return 1 + ops_in(e->u.cast.a);
    default: return 0;
    }
}

/* The fewest operations an element for which a masked vector beats scalar
 * code on short rows: on Zen 5 a float32 scale of rows of 7 and 14 (one
 * product an element) ran 2-3x slower masked than LLVM's scalar loop, the
 * requantizing chains of the same rows (about ten) 13% faster for the
 * model (MobileNetV3 int8). */
enum { MASK_MIN_OPS = 6 };

/* A body of LETs ending with its one STORE (or that STORE alone), every
 * load of coefficient 0 or 1, of at least MASK_MIN_OPS operations; the
 * store and the contiguous loads of elements the target masks (AVX2 has no
 * masked byte moves: LLVM made each a branch and an insert per lane, and
 * MobileNetV2 int8 on Zen 3 spent 40% of its time in them). */
static int maskable(Sched *c, LoopStmt *b, int var)
{
    LoopStmt **items = b->kind == LOOP_S_BLOCK ? b->u.block.items : &b;
    int n = b->kind == LOOP_S_BLOCK ? b->u.block.n : 1, ops = 0;
    for (int i = 0; i < n; i++) {
        const LoopStmt *t = items[i];
        const LoopExpr *v = t->kind == LOOP_S_LET && !t->u.let.mutable_ && i < n - 1 ? t->u.let.value
                          : t->kind == LOOP_S_STORE && i == n - 1                  ? t->u.store.value
                                                                                   : NULL;
        if (!v || !loads_ok(c, v, var, 1) || (t->kind == LOOP_S_STORE && !maskable_buf(c, t->u.store.buf)))
            return 0;
        ops += ops_in(v);
    }
    return n > 0 && ops >= MASK_MIN_OPS;
}

/* Loop s (extent ext, vectorizable, no lane count of at least 128 bits
 * divides it: rows of 7, 14 or 28 under a broadcast) in vectors of W lanes,
 * the last one partly masked: for io < ceil(E/W) { for i < W VECTORIZED {
 * if (io*W + i < E) body } }, W the target's lanes or the smallest power of
 * two from 4 that holds E.  Only a body of LETs and one STORE whose loads
 * are contiguous or uniform (masked loads and a masked store). */
static void masked(Sched *c, LoopStmt *s, int64_t ext, int64_t full)
{
    LoopProgram *p = c->p;
    int var = s->u.loop.var;
    int64_t lanes = 4;
    while (lanes < full && lanes < ext)
        lanes *= 2;
    if (ext < 4 || lanes < 4 || !maskable(c, s->u.loop.body, var))
        return;
    int64_t n = (ext + lanes - 1) / lanes;
    int io = n > 1 ? loop_add_var(p, p->vars[var].name, IR_DT_I64) : -1;
    if ((n > 1 && io < 0) || (io >= 0 && grow_local(c) != 0))
        return;
    LoopExpr *by = io < 0 ? loop_var(p, var)
                          : loop_bin(p, LOOP_ADD, loop_bin(p, LOOP_MUL, loop_var(p, io), loop_int(p, lanes)),
                                     loop_var(p, var));
    LoopExpr *cond = by ? loop_bin(p, LOOP_LT, loop_expr_copy(p, by), loop_int(p, ext)) : NULL;
    LoopStmt *guard = cond ? loop_if(p, cond, s->u.loop.body, NULL) : NULL;
    LoopStmt *inner = guard ? loop_for(p, var, loop_int(p, lanes), LOOP_VECTORIZED, guard) : NULL;
    LoopExpr *outer_ext = loop_int(p, n);
    if (!inner || !outer_ext)
        return;                               /* out of memory: leave the loop serial */
    if (io >= 0)
        subst_stmt(p, s->u.loop.body, var, by);
    inner->u.loop.factor = (int)lanes;
    if (io < 0) {
        *s = *inner;
        return;
    }
    s->u.loop.var = io;
    s->u.loop.extent = outer_ext;
    s->u.loop.body = inner;
}

/* Tries to strip-mine and vectorize innermost loop s in place. */
static void vectorize(Sched *c, LoopStmt *s)
{
    if (s->u.loop.kind != LOOP_SERIAL || s->u.loop.extent->kind != LOOP_E_INT || any_stmt(c, s->u.loop.body, is_loop) ||
        is_reduction(c, s))
        return;
    int64_t ext = s->u.loop.extent->u.i;
    size_t bytes = 0;
    mark_bound(c, s->u.loop.body, 1);
    int ok = vector_body(c, s->u.loop.body, s->u.loop.var, &bytes);
    mark_bound(c, s->u.loop.body, 0);
    if (!ok || bytes == 0)
        return;
    /* the target's width, or for a loop it does not divide a narrower
     * vector down to 128 bits (8 floats of a 16-lane target): ResNet-8's
     * gather of an 8 x 8 plane every other pixel 0.52 -> 0.31 us, the
     * encoder layer 4.92 -> 4.72 us */
    int64_t lanes = (int64_t)((size_t)c->s->vector_bits / (8 * bytes)), full = lanes;
    while (lanes * (int64_t)bytes > 16 && ext % lanes)
        lanes /= 2;
    LoopProgram *p = c->p;
    int var = s->u.loop.var;
    if (lanes < 2 || ext < lanes || ext % lanes) {
        masked(c, s, ext, full);
        return;
    }
    if (ext == lanes) {
        s->u.loop.kind = LOOP_VECTORIZED;
        s->u.loop.factor = (int)lanes;
        return;
    }
    int io = loop_add_var(p, p->vars[var].name, IR_DT_I64);
    if (io >= 0 && grow_local(c) != 0)
        return;
    LoopExpr *by = io < 0 ? NULL : loop_bin(p, LOOP_ADD, loop_bin(p, LOOP_MUL, loop_var(p, io), loop_int(p, lanes)),
                                             loop_var(p, var));
    LoopStmt *inner = by ? loop_for(p, var, loop_int(p, lanes), LOOP_VECTORIZED, s->u.loop.body) : NULL;
    LoopExpr *outer_ext = loop_int(p, ext / lanes);
    if (!inner || !outer_ext)
        return;                               /* out of memory: leave the loop serial */
    subst_stmt(p, s->u.loop.body, var, by);
    inner->u.loop.factor = (int)lanes;
    s->u.loop.var = io;
    s->u.loop.extent = outer_ext;
    s->u.loop.body = inner;
}

/* Bottom-up: unrolling, then vectorizing innermost loops. */
static void walk(Sched *c, LoopStmt *s)
{
    if (!s)
        return;
    switch (s->kind) {
    case LOOP_S_FOR: {
        walk(c, s->u.loop.body);
        const LoopExpr *e = s->u.loop.extent;
        if (c->s->unroll_max > 0 && s->u.loop.kind == LOOP_SERIAL && e->kind == LOOP_E_INT && e->u.i > 1 &&
            e->u.i <= c->s->unroll_max && !any_stmt(c, s->u.loop.body, is_rolled_loop) && is_reduction(c, s)) {
            s->u.loop.kind = LOOP_UNROLLED;
            s->u.loop.factor = 0;
        } else if (c->s->vectorize && c->s->vector_bits > 0) {
            vectorize(c, s);
        }
        break;
    }
    case LOOP_S_IF:
        walk(c, s->u.cond.then_);
        walk(c, s->u.cond.else_);
        break;
    case LOOP_S_BLOCK:
        for (int i = 0; i < s->u.block.n; i++)
            walk(c, s->u.block.items[i]);
        break;
    default: break;
    }
}

/* Does e read memory, or a variable marked in dd (bound to such a value)? */
static int data_dependent(const Sched *c, const LoopExpr *e)
{
    if (!e)
        return 0;
    switch (e->kind) {
    case LOOP_E_LOAD: return 1;
    case LOOP_E_VAR: return c->local[e->u.var] == 2;
    case LOOP_E_BIN: return data_dependent(c, e->u.bin.a) || data_dependent(c, e->u.bin.b);
    case LOOP_E_UN: return data_dependent(c, e->u.un.a);
    case LOOP_E_SELECT:
        return data_dependent(c, e->u.sel.cond) || data_dependent(c, e->u.sel.a) || data_dependent(c, e->u.sel.b);
    case LOOP_E_CALL:
        for (int i = 0; i < e->u.call.n; i++)
            if (data_dependent(c, e->u.call.args[i]))
                return 1;
        return 0;
    case LOOP_E_CAST: return data_dependent(c, e->u.cast.a);
    default: return 0;
    }
}

/* A store at a position computed from memory contents (a scatter:
 * iterations may hit the same element).  Marks data-dependent LET
 * variables with 2 in c->local on the way (cleared by is_scatter). */
static int scatters(Sched *c, const LoopStmt *s)
{
    if (s->kind == LOOP_S_LET && data_dependent(c, s->u.let.value))
        c->local[s->u.let.var] = 2;
    if (s->kind == LOOP_S_ASSIGN && data_dependent(c, s->u.assign.value))
        c->local[s->u.assign.var] = 2;       /* (a position counted from data, as TopK's rank) */
    return s->kind == LOOP_S_STORE && data_dependent(c, s->u.store.index);
}

static int is_scatter(Sched *c, const LoopStmt *s)
{
    int r = any_stmt(c, s, scatters);
    mark_bound(c, s, 0);
    return r;
}

/* used[buf] = 1 for each LOCAL buffer a statement touches (loop_stmt_buffers). */
typedef struct Locals { const LoopProgram *p; unsigned char *used; } Locals;

static void local_use(void *ctx, int buf, int store)
{
    (void)store;
    Locals *l = ctx;
    if (l->p->bufs[buf].storage == LOOP_ST_LOCAL)
        l->used[buf] = 1;
}

static void locals_stmt(const Sched *c, const LoopStmt *s, unsigned char *used)
{
    Locals l = { c->p, used };
    loop_stmt_buffers(s, local_use, &l);
}

/* Are the LOCAL buffers loop s uses touched nowhere else in the kernel?
 * Then every iteration writes them before it reads them (the lowering's
 * blocks: scratch per output block), and a thread running some iterations
 * may have its own copy. */
static int locals_private(const Sched *c, const LoopStmt *s, const LoopStmt *kernel)
{
    size_t n = (size_t)c->p->n_bufs + 1;
    unsigned char *in = calloc(n, 1), *all = calloc(n, 1);
    int ok = in && all;
    if (ok) {
        locals_stmt(c, s, in);
        /* uses outside s: everything in the kernel minus s's own */
        const LoopStmt *const *items = kernel->kind == LOOP_S_BLOCK ? (const LoopStmt *const *)kernel->u.block.items
                                                                    : &kernel;
        int ni = kernel->kind == LOOP_S_BLOCK ? kernel->u.block.n : 1;
        for (int i = 0; i < ni; i++) {
            unsigned char *u = calloc(n, 1);
            if (!u) {
                ok = 0;
                break;
            }
            locals_stmt(c, items[i], u);
            int contains = 0;                 /* is s inside items[i]? then s's top-level nest */
            for (const LoopStmt *q = items[i]; q; ) {
                if (q == s) {
                    contains = 1;
                    break;
                }
                if (q->kind == LOOP_S_FOR)
                    q = q->u.loop.body;
                else if (q->kind == LOOP_S_BLOCK && q->u.block.n == 1)
                    q = q->u.block.items[0];
                else
                    break;
            }
            if (!contains)
                for (size_t b = 0; b < n; b++)
                    all[b] |= u[b];
            free(u);
        }
        for (size_t b = 0; ok && b < n; b++)
            if (in[b] && all[b])
                ok = 0;
    }
    free(in);
    free(all);
    return ok;
}

/* A parallel loop of E iterations split into T tasks of ⌈E/T⌉ or ⌊E/T⌋
 * leaves a thread idle for up to one iteration; when E is short and not a
 * multiple of T (3 blocks of output channels on 2 threads: one does 2) and
 * its body is LETs then one serial loop of constant extent E2 whose
 * iterations are independent, the two loops become one of E·E2 iterations
 * (the tasks then differ by at most one inner iteration):
 *
 *     for i < E { lets; for j < E2 { body } }
 *   = for ij < E·E2 { let i = ij / E2; let j = ij mod E2; lets; body }
 *
 * (the same iterations in the same order; lets are recomputed per inner
 * iteration). */
static void collapse(Sched *c, LoopStmt *s)
{
    int T = c->s->threads;
    const LoopExpr *ext = s->u.loop.extent;
    if (T < 2 || ext->kind != LOOP_E_INT || ext->u.i % T == 0 || ext->u.i >= 16 * (int64_t)T)
        return;
    LoopStmt *b = s->u.loop.body, *in = b;
    int n_lets = 0;
    if (b->kind == LOOP_S_BLOCK) {
        if (b->u.block.n < 1)
            return;
        for (; n_lets < b->u.block.n - 1; n_lets++)
            if (b->u.block.items[n_lets]->kind != LOOP_S_LET || b->u.block.items[n_lets]->u.let.mutable_)
                return;
        in = b->u.block.items[n_lets];
    }
    if (in->kind != LOOP_S_FOR || in->u.loop.kind != LOOP_SERIAL || in->u.loop.extent->kind != LOOP_E_INT ||
        in->u.loop.extent->u.i < 2 || is_reduction(c, in) || is_scatter(c, in))
        return;
    int64_t E2 = in->u.loop.extent->u.i;
    int ij = loop_add_var(c->p, "ij", IR_DT_I64);
    if (ij < 0 || grow_local(c) != 0)
        return;
    LoopStmt *nb = loop_block(c->p);
    LoopStmt *li = loop_let(c->p, s->u.loop.var, loop_bin(c->p, LOOP_DIV, loop_var(c->p, ij), loop_int(c->p, E2)), 0);
    LoopStmt *lj = loop_let(c->p, in->u.loop.var, loop_bin(c->p, LOOP_MOD, loop_var(c->p, ij), loop_int(c->p, E2)), 0);
    LoopExpr *ne = loop_int(c->p, ext->u.i * E2);
    if (!nb || !li || !lj || !ne || loop_block_add(c->p, nb, li) || loop_block_add(c->p, nb, lj))
        return;                               /* out of memory: the loop stays as it was (still correct) */
    for (int k = 0; k < n_lets; k++)
        if (loop_block_add(c->p, nb, b->u.block.items[k]))
            return;
    if (loop_block_add(c->p, nb, in->u.loop.body))
        return;
    s->u.loop.var = ij;
    s->u.loop.extent = ne;
    s->u.loop.body = nb;
}

/* The loop to parallelize in top-level nest s (of kernel body `kernel`):
 * skip extent-1 loops. */
static void parallelize(Sched *c, LoopStmt *s, const LoopStmt *kernel)
{
    while (s && s->kind == LOOP_S_FOR && s->u.loop.kind == LOOP_SERIAL && s->u.loop.extent->kind == LOOP_E_INT &&
           s->u.loop.extent->u.i == 1) {
        LoopStmt *b = s->u.loop.body;
        if (b->kind == LOOP_S_BLOCK && b->u.block.n == 1)
            b = b->u.block.items[0];
        if (b->kind != LOOP_S_FOR)
            break;
        s = b;
    }
    if (s && s->kind == LOOP_S_FOR && s->u.loop.kind == LOOP_SERIAL && !is_reduction(c, s) &&
        locals_private(c, s, kernel) && !is_scatter(c, s) &&
        !(s->u.loop.extent->kind == LOOP_E_INT && s->u.loop.extent->u.i <= 1)) {
        collapse(c, s);
        s->u.loop.kind = LOOP_PARALLEL;
    }
}

/* A kernel's work for the parallel threshold: its flops, or the bytes it
 * touches when more (pools, depthwise layers: memory-bound, their flops
 * understate them); a data-movement kernel: 4 per element it stores (a
 * halo fill touches a few bytes of a large buffer). */
static int64_t kernel_work(const LoopProgram *p, const LoopKernel *k)
{
    if (k->moves)
        return 4 * k->flops;
    int64_t bytes = loop_kernel_bytes(p, k);                 /* -1: out of memory, the flops then */
    return bytes > k->flops ? bytes : k->flops;
}

/* Is kernel k worth splitting between threads?  With enough work, or when
 * it prepares the input of a later kernel of its node that is: a halo fill
 * split by channels like its producer, each task filling the halo of the
 * channels its own task of the producer writes and its consumer reads,
 * instead of one task writing every channel's halo, half of them lines the
 * other core holds (MobileNetV2's expansions: 0.6-2 us at 1 thread, 3-9 us
 * serial at 2); a gathered or packed copy, which one task made while the
 * other waited (ResNet-18's strided 1x1 gather 17 us at 1 thread, 32 at 2;
 * a padded copy, tile_pad_input). */
static int worth_threads(const LoopProgram *p, const LowSchedule *s, int k)
{
    if (kernel_work(p, &p->kernels[k]) >= s->parallel_min_flops)
        return 1;
    for (int j = k + 1; p->kernels[k].prepares && j < p->n_kernels &&
                        p->kernels[j].first_node == p->kernels[k].first_node; j++)
        if (kernel_work(p, &p->kernels[j]) >= s->parallel_min_flops)
            return 1;
    return 0;
}

#define PAR_MIN_KERNEL_BYTES (2 << 20)

void tgt_cpu_apply_schedule(LoopProgram *p, const LowSchedule *s)
{
    LowSchedule dflt = tgt_cpu_schedule(0);
    if (!s)
        s = &dflt;
    Sched c = { .p = p, .s = s };
    if (grow_local(&c) != 0 || (!c.local && !(c.local = calloc(1, 1))))
        return;                               /* out of memory: the program stays serial (still correct) */
    /* a program of less than parallel_min_model_flops (33.5 MFLOP: ResNet-8
     * at 25 ran 0.141 ms serial, 0.173 ms on 2 threads) stays serial: its
     * kernels' few microseconds each do not pay for moving their inputs
     * between the cores' caches; unless a kernel reads PAR_MIN_KERNEL_BYTES
     * or more (an MLP's matrix-vector products at batch 1: bound by reading
     * their weights, tens of microseconds each, which two cores read at
     * twice the rate) */
    int64_t total = 0, widest = 0;
    for (int k = 0; k < p->n_kernels; k++) {
        int64_t bytes = loop_kernel_bytes(p, &p->kernels[k]);
        total += p->kernels[k].flops;
        widest = bytes > widest ? bytes : widest;
    }
    int threads = s->parallel && (total >= s->parallel_min_model_flops || widest >= PAR_MIN_KERNEL_BYTES);
    for (int k = 0; k < p->n_kernels; k++) {
        LoopStmt *b = p->kernels[k].body;
        walk(&c, b);
        if (!threads || !worth_threads(p, s, k))
            continue;
        if (b->kind == LOOP_S_BLOCK) {
            for (int i = 0; i < b->u.block.n; i++)
                if (b->u.block.items[i]->kind == LOOP_S_FOR)
                    parallelize(&c, b->u.block.items[i], b);
        } else {
            parallelize(&c, b, b);
        }
    }
    free(c.local);
}
