/* targets/fpga/schedule.c — the HLS schedule as loop-IR rewrites, and the
 * resource / latency model the report uses.
 *
 * Rules (docs/targets/fpga.md):
 *  - pipeline: walking down from each kernel's top, the first loop whose
 *    body costs at most budget * TGT_FPGA_MAX_REUSE innermost-loop
 *    iterations (the products of the extents of the loops inside it, summed)
 *    becomes LOOP_HLS_PIPELINE and every loop inside it LOOP_UNROLLED
 *    (factor 0), at target II = ceil(cost / budget): the reuse factor.  A
 *    dense layer of K inputs gets min(K, budget) multipliers, each used
 *    ceil(K / budget) times per output (the tool shares operators across
 *    the II cycles);
 *  - partition: the accesses of one pipelined iteration to each on-chip
 *    buffer are enumerated (unrolled loop variables take all their values,
 *    outer ones 0 — a cyclic partition's bank pattern only rotates with the
 *    base address); the smallest cyclic factor that puts at most two
 *    distinct addresses in one bank (dual-port BRAM) becomes
 *    LoopBuf.partition (complete when that is the whole array). */
#include "targets/fpga/fpga_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------- loop marking */

static int64_t stmt_cost(const LoopStmt *s)
{
    if (!s)
        return 0;
    switch (s->kind) {
    case LOOP_S_FOR: {
        int64_t e = s->u.loop.extent->kind == LOOP_E_INT ? s->u.loop.extent->u.i : ((int64_t)1 << 40);
        int64_t b = stmt_cost(s->u.loop.body);
        b = b > 1 ? b : 1;
        return e > 0 && b > ((int64_t)1 << 40) / e ? ((int64_t)1 << 40) : e * b;
    }
    case LOOP_S_BLOCK: {
        int64_t t = 0;
        for (int i = 0; i < s->u.block.n; i++)
            t += stmt_cost(s->u.block.items[i]);
        return t;
    }
    case LOOP_S_IF: return stmt_cost(s->u.cond.then_) + stmt_cost(s->u.cond.else_);
    default: return 0;
    }
}

static void unroll_all(LoopStmt *s)
{
    if (!s)
        return;
    switch (s->kind) {
    case LOOP_S_FOR:
        s->u.loop.kind = LOOP_UNROLLED;
        s->u.loop.factor = 0;
        unroll_all(s->u.loop.body);
        break;
    case LOOP_S_BLOCK:
        for (int i = 0; i < s->u.block.n; i++)
            unroll_all(s->u.block.items[i]);
        break;
    case LOOP_S_IF: unroll_all(s->u.cond.then_); unroll_all(s->u.cond.else_); break;
    default: break;
    }
}

void tgt_fpga_pipeline(LoopStmt *loop, int ii)
{
    loop->u.loop.kind = LOOP_HLS_PIPELINE;
    loop->u.loop.factor = ii;
    unroll_all(loop->u.loop.body);
}

static int has_pipeline(const LoopStmt *s)
{
    if (!s)
        return 0;
    switch (s->kind) {
    case LOOP_S_FOR: return s->u.loop.kind == LOOP_HLS_PIPELINE || has_pipeline(s->u.loop.body);
    case LOOP_S_BLOCK:
        for (int i = 0; i < s->u.block.n; i++)
            if (has_pipeline(s->u.block.items[i]))
                return 1;
        return 0;
    case LOOP_S_IF: return has_pipeline(s->u.cond.then_) || has_pipeline(s->u.cond.else_);
    default: return 0;
    }
}

static void mark(LoopStmt *s, int budget)
{
    if (!s)
        return;
    switch (s->kind) {
    case LOOP_S_FOR:
        if (s->u.loop.kind == LOOP_HLS_PIPELINE)
            return;                      /* scheduled already (line buffers, pixel-order element-wise) */
        int64_t c = stmt_cost(s->u.loop.body);          /* 0: no inner loop */
        if (s->u.loop.extent->kind == LOOP_E_INT && c <= (int64_t)budget * TGT_FPGA_MAX_REUSE &&
            !has_pipeline(s->u.loop.body)) {
            tgt_fpga_pipeline(s, c <= budget ? 1 : (int)((c + budget - 1) / budget));
        } else {
            mark(s->u.loop.body, budget);
        }
        break;
    case LOOP_S_BLOCK:
        for (int i = 0; i < s->u.block.n; i++)
            mark(s->u.block.items[i], budget);
        break;
    case LOOP_S_IF: mark(s->u.cond.then_, budget); mark(s->u.cond.else_, budget); break;
    default: break;
    }
}

/* ------------------------------------------------ access enumeration */

typedef struct Acc {
    int buf;          /* root */
    int64_t off;      /* element offset (valid when known) */
    int known;
} Acc;

typedef struct Enum {
    const LoopProgram *p;
    int64_t *env;
    unsigned char *set;
    Acc *acc;
    int n, cap;
} Enum;

static int eval(Enum *E, const LoopExpr *e, int64_t *v)
{
    int64_t a, b;
    switch (e->kind) {
    case LOOP_E_INT: *v = e->u.i; return 1;
    case LOOP_E_VAR:
        if (!E->set[e->u.var])
            return 0;
        *v = E->env[e->u.var];
        return 1;
    case LOOP_E_CAST: return !ir_dtype_is_float(e->u.cast.a->type) && eval(E, e->u.cast.a, v);
    case LOOP_E_SELECT:
        if (!eval(E, e->u.sel.cond, &a))
            return 0;
        return eval(E, a ? e->u.sel.a : e->u.sel.b, v);
    case LOOP_E_BIN:
        if (ir_dtype_is_float(e->u.bin.a->type) || !eval(E, e->u.bin.a, &a) || !eval(E, e->u.bin.b, &b))
            return 0;
        switch (e->u.bin.op) {
        case LOOP_ADD: *v = a + b; return 1;
        case LOOP_SUB: *v = a - b; return 1;
        case LOOP_MUL: *v = a * b; return 1;
        case LOOP_DIV:
            if (b == 0)
                return 0;
            *v = a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
            return 1;
        case LOOP_MOD:
            if (b == 0)
                return 0;
            *v = a % b;
            if (*v != 0 && ((*v < 0) != (b < 0)))
                *v += b;
            return 1;
        case LOOP_MIN: *v = a < b ? a : b; return 1;
        case LOOP_MAX: *v = a > b ? a : b; return 1;
        case LOOP_LT: *v = a < b; return 1;
        case LOOP_LE: *v = a <= b; return 1;
        case LOOP_EQ: *v = a == b; return 1;
        case LOOP_NE: *v = a != b; return 1;
        case LOOP_AND: *v = a && b; return 1;
        case LOOP_OR: *v = a || b; return 1;
        default: return 0;
        }
    default: return 0;
    }
}

static void add_acc(Enum *E, int buf, const LoopExpr *index)
{
    if (E->n == E->cap) {
        int nc = E->cap ? E->cap * 2 : 64;
        Acc *q = realloc(E->acc, (size_t)nc * sizeof *q);
        if (!q)
            return;
        E->acc = q;
        E->cap = nc;
    }
    Acc *a = &E->acc[E->n++];
    a->buf = cg_c_root(E->p, buf);
    a->known = eval(E, index, &a->off);
}

static void enum_expr(Enum *E, const LoopExpr *e)
{
    if (!e)
        return;
    switch (e->kind) {
    case LOOP_E_LOAD: add_acc(E, e->u.load.buf, e->u.load.index); enum_expr(E, e->u.load.index); break;
    case LOOP_E_BIN: enum_expr(E, e->u.bin.a); enum_expr(E, e->u.bin.b); break;
    case LOOP_E_UN: enum_expr(E, e->u.un.a); break;
    case LOOP_E_SELECT: enum_expr(E, e->u.sel.cond); enum_expr(E, e->u.sel.a); enum_expr(E, e->u.sel.b); break;
    case LOOP_E_CALL:
        for (int i = 0; i < e->u.call.n && i < 3; i++)
            enum_expr(E, e->u.call.args[i]);
        break;
    case LOOP_E_CAST: enum_expr(E, e->u.cast.a); break;
    default: break;
    }
}

static void enum_stmt(Enum *E, const LoopStmt *s)
{
    if (!s)
        return;
    switch (s->kind) {
    case LOOP_S_FOR: {
        int v = s->u.loop.var;
        int64_t n = s->u.loop.extent->kind == LOOP_E_INT ? s->u.loop.extent->u.i : 1;
        E->set[v] = 1;
        for (int64_t i = 0; i < n && E->n < 100000; i++) {
            E->env[v] = i;
            enum_stmt(E, s->u.loop.body);
        }
        E->set[v] = 0;
        break;
    }
    case LOOP_S_LET:
        enum_expr(E, s->u.let.value);
        if (!ir_dtype_is_float(s->u.let.value->type) && !s->u.let.mutable_)
            E->set[s->u.let.var] = (unsigned char)eval(E, s->u.let.value, &E->env[s->u.let.var]);
        break;
    case LOOP_S_ASSIGN: enum_expr(E, s->u.assign.value); break;
    case LOOP_S_STORE:
        add_acc(E, s->u.store.buf, s->u.store.index);
        enum_expr(E, s->u.store.index);
        enum_expr(E, s->u.store.value);
        break;
    case LOOP_S_IF:
        enum_expr(E, s->u.cond.cond);
        enum_stmt(E, s->u.cond.then_);
        enum_stmt(E, s->u.cond.else_);
        break;
    case LOOP_S_BLOCK:
        for (int i = 0; i < s->u.block.n; i++)
            enum_stmt(E, s->u.block.items[i]);
        break;
    default: break;
    }
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* Distinct known offsets of buf among the accesses (sorted, deduplicated)
 * into offs; returns their count; *unknown = accesses with unknown offsets. */
static int offsets_of(const Enum *E, int buf, int64_t *offs, int *unknown)
{
    int n = 0;
    *unknown = 0;
    for (int i = 0; i < E->n; i++) {
        if (E->acc[i].buf != buf)
            continue;
        if (E->acc[i].known)
            offs[n++] = E->acc[i].off;
        else
            (*unknown)++;
    }
    qsort(offs, (size_t)n, sizeof *offs, cmp_i64);
    int m = 0;
    for (int i = 0; i < n; i++)
        if (m == 0 || offs[m - 1] != offs[i])
            offs[m++] = offs[i];
    return m;
}

/* Most distinct addresses in one bank of a cyclic partition by f. */
/* The most accesses of buf at one known offset (and all of them when it has
 * no lanes: every access of a one-FIFO stream has index 0). */
static int max_same(const Enum *E, int buf)
{
    int best = 0, unknown = 0;
    for (int i = 0; i < E->n; i++) {
        if (E->acc[i].buf != buf)
            continue;
        if (!E->acc[i].known) {
            unknown++;
            continue;
        }
        int c = 0;
        for (int j = 0; j < E->n; j++)
            c += E->acc[j].buf == buf && E->acc[j].known && E->acc[j].off == E->acc[i].off;
        best = c > best ? c : best;
    }
    return best > 0 ? best : unknown;
}

static int max_bank(const int64_t *offs, int n, int64_t f, int *count)
{
    int worst = 0;
    if (f <= 1)
        return n;
    for (int64_t b = 0; b < f && b < 4096; b++)
        count[b] = 0;
    for (int i = 0; i < n; i++) {
        int64_t bank = ((offs[i] % f) + f) % f;
        if (bank < 4096 && ++count[bank] > worst)
            worst = count[bank];
    }
    return worst;
}

static int on_chip(const LoopBuf *b)
{
    return (b->storage == LOOP_ST_CONST || b->storage == LOOP_ST_WORKSPACE || b->storage == LOOP_ST_LOCAL) &&
           !b->offchip && !b->stream;
}

typedef struct Walk {
    LoopProgram *p;
    Enum E;
    int64_t *offs;
    int *count;
    int ii;                   /* cost mode: worst II found */
    int decide;               /* 1: collect partition needs; 0: measure II */
    struct Need *needs;
    int n_needs, cap_needs;
} Walk;

/* The II one pipelined iteration needs, given the current partitions
 * (and, when deciding, raises partitions to reach II=1). */
/* One pipelined loop's demand on a buffer: these offsets in one iteration,
 * at most 2 * target of them per bank. */
typedef struct Need {
    int buf, target, n;
    int64_t *offs;
} Need;

static void add_need(Walk *W, int buf, const int64_t *offs, int n, int target)
{
    if (W->n_needs == W->cap_needs) {
        int nc = W->cap_needs ? 2 * W->cap_needs : 16;
        Need *q = realloc(W->needs, (size_t)nc * sizeof *q);
        if (!q)
            return;
        W->needs = q;
        W->cap_needs = nc;
    }
    int64_t *copy = malloc((size_t)n * sizeof *copy);
    if (!copy)
        return;
    memcpy(copy, offs, (size_t)n * sizeof *copy);
    W->needs[W->n_needs++] = (Need){ buf, target, n, copy };
}

/* Per buffer, the smallest cyclic factor meeting every loop's need
 * (complete when only the whole array does; the best found beyond 4096). */
static void settle_partitions(Walk *W)
{
    for (int b = 0; b < W->p->n_bufs; b++) {
        LoopBuf *bf = &W->p->bufs[b];
        int64_t numel = ir_shape_numel(&bf->shape), lo = 1;
        int any = 0;
        for (int i = 0; i < W->n_needs; i++)
            if (W->needs[i].buf == b) {
                int64_t m = (W->needs[i].n + 2 * W->needs[i].target - 1) / (2 * W->needs[i].target);
                lo = m > lo ? m : lo;
                any = 1;
            }
        if (!any)
            continue;
        int64_t f;
        for (f = lo; f < numel && f <= 4096; f++) {
            int ok = 1;
            for (int i = 0; i < W->n_needs && ok; i++)
                ok = W->needs[i].buf != b ||
                     max_bank(W->needs[i].offs, W->needs[i].n, f, W->count) <= 2 * W->needs[i].target;
            if (ok)
                break;
        }
        if (f > 4096 || f >= numel)
            f = numel;
        if (f > 1 && f > bf->partition)
            bf->partition = (int)(f < 1 << 30 ? f : 1 << 30);
    }
}

static int pipeline_ii(Walk *W, const LoopStmt *loop)
{
    Enum *E = &W->E;
    E->n = 0;
    memset(E->set, 1, (size_t)W->p->n_vars);       /* outer variables: 0 */
    memset(E->env, 0, (size_t)W->p->n_vars * sizeof *E->env);
    enum_stmt(E, loop->u.loop.body);
    int target = loop->u.loop.factor > 1 ? loop->u.loop.factor : 1;   /* II asked for */
    int ii = target;
    for (int b = 0; b < W->p->n_bufs; b++) {
        LoopBuf *bf = &W->p->bufs[b];
        if (bf->alias_of >= 0)
            continue;
        int unknown, n = offsets_of(E, b, W->offs, &unknown);
        if (n + unknown == 0)
            continue;
        if (bf->stream) {
            /* a FIFO: one element per cycle; with lanes, one per lane (the index is the lane) */
            int per = max_same(E, b) + (bf->stream_lanes > 1 ? unknown : 0);
            if (per > ii)
                ii = per;
            continue;
        }
        if (!on_chip(bf)) {
            /* AXI port: one element per cycle */
            if (n + unknown > ii)
                ii = n + unknown;
            continue;
        }
        int64_t numel = ir_shape_numel(&bf->shape);
        if (W->decide && n + unknown > 2 * target && unknown == 0)
            add_need(W, b, W->offs, n, target);
        int worst = bf->partition >= numel ? 1 : max_bank(W->offs, n, bf->partition, W->count) + unknown;
        int need = (worst + 1) / 2;
        if (need > ii)
            ii = need;
    }
    return ii;
}

static void walk_pipelines(Walk *W, LoopStmt *s)
{
    if (!s)
        return;
    switch (s->kind) {
    case LOOP_S_FOR:
        if (s->u.loop.kind == LOOP_HLS_PIPELINE) {
            int ii = pipeline_ii(W, s);
            if (ii > W->ii)
                W->ii = ii;
        } else {
            walk_pipelines(W, s->u.loop.body);
        }
        break;
    case LOOP_S_BLOCK:
        for (int i = 0; i < s->u.block.n; i++)
            walk_pipelines(W, s->u.block.items[i]);
        break;
    case LOOP_S_IF: walk_pipelines(W, s->u.cond.then_); walk_pipelines(W, s->u.cond.else_); break;
    default: break;
    }
}

static int walk_init(Walk *W, LoopProgram *p)
{
    memset(W, 0, sizeof *W);
    W->p = p;
    W->E.p = p;
    W->E.env = calloc((size_t)p->n_vars + 1, sizeof *W->E.env);
    W->E.set = calloc((size_t)p->n_vars + 1, 1);
    W->offs = malloc(100001 * sizeof *W->offs);
    W->count = malloc(4096 * sizeof *W->count);
    return W->E.env && W->E.set && W->offs && W->count ? 0 : -1;
}

static void walk_free(Walk *W)
{
    for (int i = 0; i < W->n_needs; i++)
        free(W->needs[i].offs);
    free(W->needs);
    free(W->E.env);
    free(W->E.set);
    free(W->E.acc);
    free(W->offs);
    free(W->count);
}

/* ------------------------------------------------------ input staging */

typedef struct Retarget {
    CgCWalk w;
    int from, to;
} Retarget;

static void retarget_load(CgCWalk *w, LoopExpr *e)
{
    Retarget *r = (Retarget *)w;
    if (e->u.load.buf == r->from)
        e->u.load.buf = r->to;
}

static void retarget_store(CgCWalk *w, LoopStmt *s)
{
    Retarget *r = (Retarget *)w;
    if (s->u.store.buf == r->from)
        s->u.store.buf = r->to;
}

void tgt_fpga_retarget(LoopStmt *body, int from, int to, int stores)
{
    Retarget r = { { retarget_load, stores ? retarget_store : NULL, NULL }, from, to };
    cg_c_walk(body, &r.w);
}

/* Each model input is copied into an on-chip buffer by a first kernel
 * (one AXI burst, a pipelined loop), so the layers read it from
 * partitionable BRAM instead of the AXI port (one element per cycle). */
static int stage_inputs(LoopProgram *p)
{
    int nb = p->n_bufs;
    for (int b = 0; b < nb; b++) {
        if (p->bufs[b].storage != LOOP_ST_INPUT || p->bufs[b].alias_of >= 0 ||
            ir_shape_numel(&p->bufs[b].shape) > TGT_FPGA_TILE_ELEMS)
            continue;           /* a large input is read from its port (an image: once, by a line buffer) */
        char name[200];
        snprintf(name, sizeof name, "%s_local", p->bufs[b].name);
        IrShape shape = p->bufs[b].shape;
        int nbuf = loop_add_buf(p, name, p->bufs[b].dtype, &shape, LOOP_ST_WORKSPACE);
        if (nbuf < 0)
            return -1;
        p->bufs[nbuf].tensor = p->bufs[b].tensor;
        for (int k = 0; k < p->n_kernels; k++)
            tgt_fpga_retarget(p->kernels[k].body, b, nbuf, 0);
        for (int a = 0; a < p->n_bufs; a++)
            if (p->bufs[a].alias_of == b)
                p->bufs[a].alias_of = nbuf;
        int v = loop_add_var(p, "i", IR_DT_I64);
        if (v < 0)
            return -1;
        LoopStmt *copy = loop_for(p, v, loop_int(p, ir_shape_numel(&shape)), LOOP_SERIAL,
                                  loop_store(p, nbuf, loop_var(p, v), loop_load(p, b, loop_var(p, v))));
        snprintf(name, sizeof name, "load_%s", p->bufs[b].name);
        int k = copy ? loop_add_kernel(p, name, copy) : -1;
        if (k < 0)
            return -1;
        LoopKernel kn = p->kernels[k];
        kn.first_node = -1;
        kn.n_nodes = 0;
        kn.flops = 0;
        memmove(&p->kernels[1], &p->kernels[0], (size_t)k * sizeof *p->kernels);
        p->kernels[0] = kn;
    }
    return 0;
}

/* ------------------------------------------------------ read-backs */

/* A kernel that reads back what it wrote into an intermediate or output
 * (a softmax normalizing its exponentials in place) works on a local copy
 * instead and writes the result once, at its end:
 *     body[b]  →  body[l]; for i < n: b[i] = l[i]
 * (the same values: l has b's tensor, so its format).  b then has one
 * writer that does not read it, which DATAFLOW and streams need. */
static int private_readbacks(LoopProgram *p)
{
    int nb = p->n_bufs;
    unsigned char *used = malloc((size_t)nb + 1);
    int *writers = calloc((size_t)nb + 1, sizeof *writers);
    if (!used || !writers) {
        free(used);
        free(writers);
        return -1;
    }
    for (int k = 0; k < p->n_kernels; k++) {
        cg_c_kernel_uses(p, k, used);
        for (int b = 0; b < nb; b++)
            writers[b] += (used[b] & 2) != 0;
    }
    int rc = 0;
    for (int k = 0; k < p->n_kernels && !rc; k++) {
        cg_c_kernel_uses(p, k, used);
        for (int b = 0; b < nb && !rc; b++) {
            const LoopBuf *bf = &p->bufs[b];
            int aliased = 0;
            for (int a = 0; a < p->n_bufs; a++)
                aliased |= p->bufs[a].alias_of == b;
            if (used[b] != 3 || writers[b] != 1 || aliased || bf->alias_of >= 0 || bf->offchip ||
                (bf->storage != LOOP_ST_WORKSPACE && bf->storage != LOOP_ST_OUTPUT) ||
                ir_shape_numel(&bf->shape) > TGT_FPGA_TILE_ELEMS)
                continue;
            char name[200];
            snprintf(name, sizeof name, "%s_work", bf->name);
            IrShape shape = bf->shape;
            int l = loop_add_buf(p, name, bf->dtype, &shape, LOOP_ST_LOCAL);
            int v = loop_add_var(p, "i", IR_DT_I64);
            if (l < 0 || v < 0) {
                rc = -1;
                break;
            }
            p->bufs[l].tensor = p->bufs[b].tensor;
            tgt_fpga_retarget(p->kernels[k].body, b, l, 1);
            LoopStmt *copy = loop_for(p, v, loop_int(p, ir_shape_numel(&shape)), LOOP_SERIAL,
                                      loop_store(p, b, loop_var(p, v), loop_load(p, l, loop_var(p, v))));
            LoopStmt *blk = loop_block(p);
            if (!copy || !blk || loop_block_add(p, blk, p->kernels[k].body) || loop_block_add(p, blk, copy)) {
                rc = -1;
                break;
            }
            p->kernels[k].body = blk;
        }
    }
    free(used);
    free(writers);
    return rc;
}

/* -------------------------------------------------------- ReLU fusion */

typedef struct Fuse {
    CgCWalk w;
    LoopProgram *p;
    int from, to, err;
} Fuse;

/* STORE from[i] = v  →  { let t = v; STORE to[i] = t < 0 ? 0 : t } (in place) */
static void fuse_store(CgCWalk *w, LoopStmt *s)
{
    Fuse *f = (Fuse *)w;
    if (s->u.store.buf != f->from)
        return;
    LoopProgram *p = f->p;
    LoopExpr *v = s->u.store.value;
    int t = loop_add_var(p, "act", v->type);
    LoopStmt *blk = loop_block(p);
    LoopExpr *zero = ir_dtype_is_float(v->type) ? loop_float(p, v->type, 0) : loop_cast(p, v->type, loop_int(p, 0));
    LoopExpr *zero2 = zero ? loop_expr_copy(p, zero) : NULL;
    LoopExpr *val = zero2 ? loop_select(p, loop_bin(p, LOOP_LT, loop_var(p, t), zero), zero2, loop_var(p, t)) : NULL;
    LoopStmt *st = val ? loop_store(p, f->to, s->u.store.index, val) : NULL;
    if (t < 0 || !blk || !st || loop_block_add(p, blk, loop_let(p, t, v, 0)) || loop_block_add(p, blk, st)) {
        f->err = 1;
        return;
    }
    *s = *blk;
}

/* A ReLU kernel that only reads the output A of the kernel before it (A
 * read by nothing else, written only there) is folded into that kernel's
 * stores: the producer writes max(v, 0) into the ReLU's output B directly
 * and the ReLU kernel and its pass over A disappear (hls4ml merges
 * activations into the layer the same way).  Returns how many were fused. */
int tgt_fpga_fuse_relu(LoopProgram *p, const IrGraph *g)
{
    int n = p->n_bufs ? p->n_bufs : 1, fused = 0;
    unsigned char *ur = malloc((size_t)n), *uk = malloc((size_t)n), *uo = malloc((size_t)n);
    for (int r = 1; ur && uk && uo && r < p->n_kernels; r++) {
        const LoopKernel *kr = &p->kernels[r];
        if (kr->n_nodes != 1 || kr->first_node < 0 || g->nodes[kr->first_node].op != IR_OP_Relu)
            continue;
        cg_c_kernel_uses(p, r, ur);
        int a = -1, b = -1, other = 0;
        for (int i = 0; i < p->n_bufs; i++) {
            if (!ur[i])
                continue;
            if (ur[i] == 1 && a < 0)
                a = i;
            else if (ur[i] == 2 && b < 0)
                b = i;
            else
                other = 1;
        }
        if (other || a < 0 || b < 0 || p->bufs[a].storage != LOOP_ST_WORKSPACE || p->bufs[a].dtype != p->bufs[b].dtype ||
            ir_shape_numel(&p->bufs[a].shape) != ir_shape_numel(&p->bufs[b].shape))
            continue;
        int aliased = 0;
        for (int i = 0; i < p->n_bufs; i++)
            aliased |= p->bufs[i].alias_of == a;
        cg_c_kernel_uses(p, r - 1, uk);
        int ok = !aliased && uk[a] == 2 && !uk[b];
        for (int k = 0; ok && k < p->n_kernels; k++) {
            if (k == r || k == r - 1)
                continue;
            cg_c_kernel_uses(p, k, uo);
            ok = !uo[a];
        }
        if (!ok)
            continue;
        Fuse f = { { NULL, fuse_store, NULL }, p, a, b, 0 };
        cg_c_walk(p->kernels[r - 1].body, &f.w);
        if (f.err)
            break;
        /* A is dead now: no workspace slice for it (a planned workspace, built for the host, may be
         * smaller than A) */
        p->bufs[a].storage = LOOP_ST_LOCAL;
        LoopKernel *kp = &p->kernels[r - 1];
        if (kp->first_node >= 0 && kp->first_node + kp->n_nodes == kr->first_node)
            kp->n_nodes++;
        kp->flops += kr->flops;
        memmove(&p->kernels[r], &p->kernels[r + 1], (size_t)(p->n_kernels - r - 1) * sizeof *p->kernels);
        p->n_kernels--;
        r--;
        fused++;
    }
    free(ur);
    free(uk);
    free(uo);
    return fused;
}

/* ------------------------------------------------ element-wise unrolling */

typedef struct Subst {
    CgCWalk w;
    LoopProgram *p;
    int var, err;
    const LoopExpr *by;
} Subst;

/* Rewrites each VAR node in place (trees: every occurrence is its own node). */
static void subst_var(CgCWalk *w, LoopExpr *e)
{
    Subst *s = (Subst *)w;
    if (e->kind != LOOP_E_VAR || e->u.var != s->var)
        return;
    LoopExpr *c = loop_expr_copy(s->p, s->by);
    if (c)
        *e = *c;
    else
        s->err = 1;
}

int tgt_fpga_subst(LoopProgram *p, LoopStmt *body, int var, const LoopExpr *by)
{
    Subst s = { { NULL, NULL, subst_var }, p, var, 0, by };
    cg_c_walk(body, &s.w);
    return s.err ? -1 : 0;
}

typedef struct Ports {
    CgCWalk w;
    const LoopProgram *p;
    int axi;
} Ports;

static void port_load(CgCWalk *w, LoopExpr *e)
{
    Ports *q = (Ports *)w;
    const LoopBuf *b = &q->p->bufs[cg_c_root(q->p, e->u.load.buf)];
    q->axi |= b->storage == LOOP_ST_INPUT || b->offchip || b->stream;
}

static void port_store(CgCWalk *w, LoopStmt *s)
{
    Ports *q = (Ports *)w;
    const LoopBuf *b = &q->p->bufs[cg_c_root(q->p, s->u.store.buf)];
    q->axi |= b->storage == LOOP_ST_OUTPUT || b->offchip || b->stream;
}

/* An innermost loop of E >= 64 iterations over on-chip arrays (element-wise
 * layers, copies) becomes for io < E/U { for ii < U } with U = 8, 4 or 2
 * dividing E, so the schedule pipelines io with U lanes unrolled: U elements
 * per cycle instead of one.  Loops touching an AXI port or a stream stay (one
 * element per cycle there anyway). */
static LoopStmt *lanes(LoopProgram *p, LoopStmt *s)
{
    if (!s)
        return s;
    if (s->kind == LOOP_S_BLOCK) {
        for (int i = 0; i < s->u.block.n; i++)
            s->u.block.items[i] = lanes(p, s->u.block.items[i]);
        return s;
    }
    if (s->kind != LOOP_S_FOR)
        return s;
    if (stmt_cost(s->u.loop.body) > 0) {
        s->u.loop.body = lanes(p, s->u.loop.body);
        return s;
    }
    int64_t e = s->u.loop.extent->kind == LOOP_E_INT ? s->u.loop.extent->u.i : 0, u = 8;
    while (u > 1 && e % u)
        u /= 2;
    Ports q = { { port_load, port_store, NULL }, p, 0 };
    cg_c_walk(s, &q.w);
    if (e < 64 || u < 2 || q.axi || s->u.loop.kind != LOOP_SERIAL)
        return s;
    int outer = loop_add_var(p, "io", IR_DT_I64), inner = loop_add_var(p, "ii", IR_DT_I64);
    if (outer < 0 || inner < 0)
        return s;
    /* var := outer * lanes + inner */
    LoopExpr *by = loop_bin(p, LOOP_ADD, loop_bin(p, LOOP_MUL, loop_var(p, outer), loop_int(p, u)), loop_var(p, inner));
    if (!by || tgt_fpga_subst(p, s->u.loop.body, s->u.loop.var, by))
        return s;
    LoopStmt *in = loop_for(p, inner, loop_int(p, u), LOOP_SERIAL, s->u.loop.body);
    LoopStmt *out = in ? loop_for(p, outer, loop_int(p, e / u), LOOP_SERIAL, in) : NULL;
    return out ? out : s;
}

int tgt_fpga_kernel_budget(const LoopProgram *p, int k, int budget, const int *node_budget)
{
    int n = p->kernels[k].first_node;
    return node_budget && n >= 0 && node_budget[n] > 0 ? node_budget[n] : budget;
}

int tgt_fpga_schedule(LoopProgram *p, int budget, const int *node_budget, int streams)
{
    if (stage_inputs(p) || (streams && (private_readbacks(p) || tgt_fpga_streams(p, NULL))))
        return -1;
    for (int k = 0; k < p->n_kernels; k++)
        p->kernels[k].body = lanes(p, p->kernels[k].body);
    Walk W;
    if (walk_init(&W, p)) {
        walk_free(&W);
        return -1;
    }
    W.decide = 1;
    for (int k = 0; k < p->n_kernels; k++) {
        mark(p->kernels[k].body, tgt_fpga_kernel_budget(p, k, budget, node_budget));
        walk_pipelines(&W, p->kernels[k].body);
    }
    settle_partitions(&W);
    walk_free(&W);
    return 0;
}

/* --------------------------------------------------------- cost model */

typedef struct Cost {
    const LoopProgram *p;
    const CgFixed *fmt;
    Walk *W;
    TgtHlsCost *c;
} Cost;

static int opnd_bits(const Cost *C, const LoopExpr *e)
{
    if (!C->fmt)
        return 32;
    if (e->kind == LOOP_E_LOAD) {
        int r = cg_c_root(C->p, e->u.load.buf);
        return C->fmt[r].w > 0 ? C->fmt[r].w : 32;
    }
    return 32;
}

/* Operators of e, each counted `copies` times: DSPs and LUTs. */
static void ops_expr(Cost *C, const LoopExpr *e, int64_t copies)
{
    if (!e)
        return;
    int fl = 0;
    switch (e->kind) {
    case LOOP_E_BIN:
        fl = ir_dtype_is_float(e->u.bin.a->type);
        ops_expr(C, e->u.bin.a, copies);
        ops_expr(C, e->u.bin.b, copies);
        if (!fl) {
            C->c->lut += copies * 8;      /* index arithmetic, mostly folded */
            break;
        }
        switch (e->u.bin.op) {
        case LOOP_MUL:
            C->c->mults += copies;
            if (C->fmt) {
                int a = opnd_bits(C, e->u.bin.a), b = opnd_bits(C, e->u.bin.b);
                if (a < b) {
                    int t = a;
                    a = b;
                    b = t;
                }
                C->c->dsp += copies * ((a + 26) / 27) * ((b + 17) / 18);
                C->c->lut += copies * 40;
            } else {
                C->c->dsp += copies * 3;
                C->c->lut += copies * 100;
            }
            break;
        case LOOP_ADD: case LOOP_SUB:
            if (C->fmt) {
                C->c->lut += copies * 32;
            } else {
                C->c->dsp += copies * 2;
                C->c->lut += copies * 250;
            }
            break;
        case LOOP_DIV: case LOOP_TDIV: case LOOP_MOD: case LOOP_TMOD:
            C->c->lut += copies * (C->fmt ? 1200 : 800);
            break;
        default: C->c->lut += copies * (C->fmt ? 32 : 60); break;
        }
        break;
    case LOOP_E_CALL:
        for (int i = 0; i < e->u.call.n && i < 3; i++)
            ops_expr(C, e->u.call.args[i], copies);
        if (e->u.call.fn == LOOP_I_isnan || e->u.call.fn == LOOP_I_isinf) {
            C->c->lut += C->fmt ? 0 : copies * 16;      /* fixed point has no NaN */
            break;
        }
        if (C->fmt && cg_fx_lut_fn(e->u.call.fn)) {
            /* lookup table (codegen/c_emit.c): the interpolation's 31 x 18-bit multiply (2 DSPs), exp's
             * x * log2(e) (32 x 31 bits: 4 more); the table as LUTRAM (31-bit entries / 64) and ~200
             * LUTs of shifts and adds */
            int exp = e->u.call.fn == LOOP_I_exp;
            C->c->dsp += copies * (exp ? 6 : 2);
            C->c->lut += copies * (200 + (cg_fx_lut_last(e->u.call.fn) + 1) * 31 / 64 + (exp ? 160 : 0));
            C->c->mults += copies * (exp ? 2 : 1);
            break;
        }
        C->c->lut += copies * (C->fmt ? 3000 : 1500);     /* a (double / float) core */
        C->c->dsp += copies * (C->fmt ? 20 : 8);
        break;
    case LOOP_E_LOAD: ops_expr(C, e->u.load.index, copies); break;
    case LOOP_E_UN: ops_expr(C, e->u.un.a, copies); C->c->lut += copies * 32; break;
    case LOOP_E_SELECT:
        ops_expr(C, e->u.sel.cond, copies);
        ops_expr(C, e->u.sel.a, copies);
        ops_expr(C, e->u.sel.b, copies);
        C->c->lut += copies * 32;
        break;
    case LOOP_E_CAST: ops_expr(C, e->u.cast.a, copies); C->c->lut += copies * 16; break;
    default: break;
    }
}

static void ops_stmt(Cost *C, const LoopStmt *s, int64_t copies)
{
    if (!s)
        return;
    switch (s->kind) {
    case LOOP_S_FOR: {
        int64_t e = s->u.loop.extent->kind == LOOP_E_INT ? s->u.loop.extent->u.i : 1;
        C->c->lut += 30;
        if (s->u.loop.kind == LOOP_HLS_PIPELINE && s->u.loop.factor > 1) {
            /* II = R: the tool shares each operator among R operations */
            TgtHlsCost *outer = C->c, mine;
            memset(&mine, 0, sizeof mine);
            C->c = &mine;
            ops_stmt(C, s->u.loop.body, copies);
            C->c = outer;
            int64_t r = s->u.loop.factor;
            outer->dsp += (mine.dsp + r - 1) / r;
            outer->lut += (mine.lut + r - 1) / r;
            outer->mults += (mine.mults + r - 1) / r;
            break;
        }
        ops_stmt(C, s->u.loop.body, s->u.loop.kind == LOOP_UNROLLED ? copies * (e > 0 ? e : 1) : copies);
        break;
    }
    case LOOP_S_LET: ops_expr(C, s->u.let.value, copies); break;
    case LOOP_S_ASSIGN: ops_expr(C, s->u.assign.value, copies); break;
    case LOOP_S_STORE: ops_expr(C, s->u.store.index, copies); ops_expr(C, s->u.store.value, copies); break;
    case LOOP_S_IF:
        ops_expr(C, s->u.cond.cond, copies);
        ops_stmt(C, s->u.cond.then_, copies);
        ops_stmt(C, s->u.cond.else_, copies);
        break;
    case LOOP_S_BLOCK:
        for (int i = 0; i < s->u.block.n; i++)
            ops_stmt(C, s->u.block.items[i], copies);
        break;
    default: break;
    }
}

/* Does s (inside a pipelined loop) carry a float accumulator from one
 * iteration to the next (an ASSIGN of a float variable declared outside)? */
static int carries_float(const LoopStmt *s, const unsigned char *inside)
{
    if (!s)
        return 0;
    switch (s->kind) {
    case LOOP_S_FOR: return carries_float(s->u.loop.body, inside);
    case LOOP_S_ASSIGN: return ir_dtype_is_float(s->u.assign.value->type) && !inside[s->u.assign.var];
    case LOOP_S_IF: return carries_float(s->u.cond.then_, inside) || carries_float(s->u.cond.else_, inside);
    case LOOP_S_BLOCK:
        for (int i = 0; i < s->u.block.n; i++)
            if (carries_float(s->u.block.items[i], inside))
                return 1;
        return 0;
    default: return 0;
    }
}

static void mark_lets(const LoopStmt *s, unsigned char *inside)
{
    if (!s)
        return;
    switch (s->kind) {
    case LOOP_S_FOR: mark_lets(s->u.loop.body, inside); break;
    case LOOP_S_LET: inside[s->u.let.var] = 1; break;
    case LOOP_S_IF: mark_lets(s->u.cond.then_, inside); mark_lets(s->u.cond.else_, inside); break;
    case LOOP_S_BLOCK:
        for (int i = 0; i < s->u.block.n; i++)
            mark_lets(s->u.block.items[i], inside);
        break;
    default: break;
    }
}

/* Pipeline depth: a load, the multiplier, an adder tree over the unrolled
 * statement instances, the store. */
static int64_t depth(const Cost *C, const LoopStmt *loop)
{
    int64_t n = stmt_cost(loop->u.loop.body), lg = 0;
    while (((int64_t)1 << lg) < n)
        lg++;
    return C->fmt ? 4 + lg : 8 + 4 * lg;
}

/* The pipelined loop at the bottom of a perfect nest of serial loops with
 * constant extents starting at s (each body one loop), with *iters = the
 * nest's iterations down to it (s included); NULL if none.  Vitis HLS
 * flattens such a nest into one pipeline. */
static const LoopStmt *perfect_nest(const LoopStmt *s, int64_t *iters)
{
    *iters = 1;
    while (s && s->kind == LOOP_S_FOR && s->u.loop.kind == LOOP_SERIAL && s->u.loop.extent->kind == LOOP_E_INT) {
        *iters *= s->u.loop.extent->u.i;
        s = s->u.loop.body;
        while (s && s->kind == LOOP_S_BLOCK && s->u.block.n == 1)
            s = s->u.block.items[0];
    }
    return s && s->kind == LOOP_S_FOR && s->u.loop.kind == LOOP_HLS_PIPELINE && *iters > 1 &&
           s->u.loop.extent->kind == LOOP_E_INT && s->u.loop.extent->u.i > 1 ? s : NULL;
}

static int64_t latency(Cost *C, const LoopStmt *s)
{
    if (!s)
        return 0;
    switch (s->kind) {
    case LOOP_S_FOR: {
        int64_t e = s->u.loop.extent->kind == LOOP_E_INT ? s->u.loop.extent->u.i : 1, outer;
        const LoopStmt *pipe = perfect_nest(s, &outer);
        if (pipe) {                  /* flattened: one pipeline over the whole nest */
            int64_t inner = latency(C, pipe), pe = pipe->u.loop.extent->kind == LOOP_E_INT ? pipe->u.loop.extent->u.i : 1;
            int64_t d = depth(C, pipe), ii = pe > 1 ? (inner - d) / (pe - 1) : 1;
            return (outer * pe - 1) * (ii > 0 ? ii : 1) + d;
        }
        if (s->u.loop.kind == LOOP_HLS_PIPELINE) {
            int ii = pipeline_ii(C->W, s);
            unsigned char *inside = calloc((size_t)C->p->n_vars + 1, 1);
            if (inside) {
                mark_lets(s->u.loop.body, inside);
                if (!C->fmt && carries_float(s->u.loop.body, inside) && ii < 4)
                    ii = 4;           /* float add latency on the loop-carried accumulator */
                free(inside);
            }
            if (ii > C->c->ii)
                C->c->ii = ii;
            return (e > 0 ? (e - 1) * ii : 0) + depth(C, s);
        }
        return e * (latency(C, s->u.loop.body) + 1);
    }
    case LOOP_S_BLOCK: {
        int64_t t = 0;
        for (int i = 0; i < s->u.block.n; i++)
            t += latency(C, s->u.block.items[i]);
        return t;
    }
    case LOOP_S_IF: {
        int64_t a = latency(C, s->u.cond.then_), b = latency(C, s->u.cond.else_);
        return a > b ? a : b;
    }
    default: return 1;
    }
}

int64_t tgt_fpga_buf_bits(const LoopProgram *p, const CgFixed *fmt, int b)
{
    const LoopBuf *bf = &p->bufs[b];
    int w = fmt && ir_dtype_is_float(bf->dtype) && fmt[b].w > 0 ? fmt[b].w : (int)ir_dtype_size(bf->dtype) * 8;
    return ir_shape_numel(&bf->shape) * w;
}

static void memory(const LoopProgram *p, const CgFixed *fmt, int dataflow, int k, TgtHlsCost *c)
{
    unsigned char *used = malloc((size_t)(p->n_bufs ? p->n_bufs : 1));
    int *readers = malloc((size_t)(p->n_bufs ? p->n_bufs : 1) * sizeof *readers);
    if (used && readers) {
        cg_c_kernel_uses(p, k, used);
        cg_c_const_readers(p, readers);
        for (int b = 0; b < p->n_bufs; b++) {
            const LoopBuf *bf = &p->bufs[b];
            int mine = (bf->storage == LOOP_ST_CONST && readers[b] == k && used[b]) ||
                       (bf->storage == LOOP_ST_WORKSPACE && (used[b] & 2)) ||
                       (bf->storage == LOOP_ST_LOCAL && used[b]);
            if (!mine || bf->alias_of >= 0 || bf->offchip)
                continue;                           /* external memory is not counted */
            int copies = bf->storage == LOOP_ST_WORKSPACE && dataflow ? 2 : 1;   /* ping-pong */
            int64_t bits = tgt_fpga_buf_bits(p, fmt, b) * copies;
            if (bf->stream)                                /* FIFOs (one per lane) of `stream` elements */
                bits = tgt_fpga_buf_bits(p, fmt, b) / (ir_shape_numel(&bf->shape) > 0 ? ir_shape_numel(&bf->shape) : 1) *
                       bf->stream * (bf->stream_lanes > 1 ? bf->stream_lanes : 1);
            int64_t banks = bf->partition > 1 ? bf->partition : 1, per = bits / banks;
            c->bram_bytes += (bits + 7) / 8;
            if (per < 1024)
                c->lut += (per + 63) / 64 * banks;          /* LUTRAM / registers */
            else
                c->bram18k += (per + 18431) / 18432 * banks;
        }
    }
    free(used);
    free(readers);
}

void tgt_fpga_cost(const LoopProgram *p, const CgFixed *fmt, int dataflow, int k, TgtHlsCost *c)
{
    memset(c, 0, sizeof *c);
    Walk W;
    if (walk_init(&W, (LoopProgram *)p) == 0) {
        W.decide = 0;
        Cost C = { p, fmt, &W, c };
        c->lut += 100;
        ops_stmt(&C, p->kernels[k].body, 1);
        c->latency = latency(&C, p->kernels[k].body);
        memory(p, fmt, dataflow, k, c);
    }
    walk_free(&W);
}
