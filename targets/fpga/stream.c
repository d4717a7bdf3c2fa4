/* targets/fpga/stream.c — layers connected by hls::stream FIFOs
 * (docs/targets/fpga.md, "Streams").
 *
 * An intermediate becomes a stream when its consumer kernel reads it in
 * exactly the order its producer kernel writes it: then a FIFO carries it
 * and neither kernel needs the whole tensor on chip.  The order is not
 * derived symbolically: the program is run once by the evaluator
 * (targets/fpga/eval.c) with every load and store of the candidates traced,
 * and a candidate passes when the consumer's sequence of flat indices equals
 * the producer's.  That is exact for kernels whose indices and control flow
 * do not depend on loaded values (checked first), whatever their inputs.
 *
 * A tensor with several consumer kernels is written by its producer into one
 * copy per consumer (stream duplication), so every buffer has one producer
 * and one consumer and the design keeps DATAFLOW (residual adds, concats).
 *
 * FIFO depths.  The kernels of a DATAFLOW region with blocking FIFOs are a
 * Kahn process network, and with each bounded FIFO modelled as a data
 * channel plus a channel of free slots it stays one, so whether it finishes
 * or deadlocks does not depend on timing.  Each kernel's trace, compressed
 * into runs of reads or writes of one stream, is replayed with bounded
 * FIFOs (a ping-pong array is read only once its producer has finished);
 * each stream's depth is the smallest that still lets the replay finish
 * (binary search: a deeper FIFO never causes a deadlock), at least 2.  A
 * fork whose short branch joins a long one (a residual block) gets a depth
 * near the long branch's latency in elements; a chain gets 2. */
#include "targets/fpga/fpga_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The replay's work cap: traces longer than this many runs keep arrays. */
#define MAX_RUNS ((int64_t)1 << 22)
/* The evaluator's work cap (flops of the whole program). */
#define MAX_FLOPS ((int64_t)400 << 20)

/* ----------------------------------------------- data-independent kernels */

static int expr_has_data(const LoopExpr *e, const unsigned char *dvar)
{
    if (!e)
        return 0;
    switch (e->kind) {
    case LOOP_E_LOAD: return 1;
    case LOOP_E_VAR: return dvar[e->u.var];
    case LOOP_E_BIN: return expr_has_data(e->u.bin.a, dvar) || expr_has_data(e->u.bin.b, dvar);
    case LOOP_E_UN: return expr_has_data(e->u.un.a, dvar);
    case LOOP_E_SELECT:
        return expr_has_data(e->u.sel.cond, dvar) || expr_has_data(e->u.sel.a, dvar) || expr_has_data(e->u.sel.b, dvar);
    case LOOP_E_CALL: {
        int r = 0;
        for (int i = 0; i < e->u.call.n; i++)
            r |= expr_has_data(e->u.call.args[i], dvar);
        return r;
    }
    case LOOP_E_CAST: return expr_has_data(e->u.cast.a, dvar);
    default: return 0;
    }
}

/* An index or a condition built from loop variables and constants only. */
static int expr_is_index(const LoopExpr *e, const unsigned char *dvar)
{
    return !expr_has_data(e, dvar);
}

/* Marks the variables whose values come from loaded data (dvar); returns
 * whether anything changed. */
static int mark_data(const LoopStmt *s, unsigned char *dvar)
{
    if (!s)
        return 0;
    int ch = 0;
    switch (s->kind) {
    case LOOP_S_FOR: return mark_data(s->u.loop.body, dvar);
    case LOOP_S_LET:
        if (!dvar[s->u.let.var] && expr_has_data(s->u.let.value, dvar))
            dvar[s->u.let.var] = ch = 1;
        return ch;
    case LOOP_S_ASSIGN:
        if (!dvar[s->u.assign.var] && expr_has_data(s->u.assign.value, dvar))
            dvar[s->u.assign.var] = ch = 1;
        return ch;
    case LOOP_S_IF: return mark_data(s->u.cond.then_, dvar) | mark_data(s->u.cond.else_, dvar);
    case LOOP_S_BLOCK:
        for (int i = 0; i < s->u.block.n; i++)
            ch |= mark_data(s->u.block.items[i], dvar);
        return ch;
    default: return 0;
    }
}

/* Loads of a candidate buffer must be whole LET / ASSIGN values (read once
 * per execution of the statement, whatever the C compiler does with
 * expressions), and no index, extent or condition may depend on data. */
typedef struct Form {
    const LoopProgram *p;
    const unsigned char *dvar;
    unsigned char *bad;        /* per root buffer: accessed in a form a stream cannot take */
    int dependent;             /* the kernel's control flow or indexing depends on data */
} Form;

static void form_expr(Form *f, const LoopExpr *e, int whole)
{
    if (!e)
        return;
    switch (e->kind) {
    case LOOP_E_LOAD:
        if (!whole)
            f->bad[cg_c_root(f->p, e->u.load.buf)] = 1;
        if (!expr_is_index(e->u.load.index, f->dvar))
            f->dependent = 1;
        form_expr(f, e->u.load.index, 0);
        break;
    case LOOP_E_BIN: form_expr(f, e->u.bin.a, 0); form_expr(f, e->u.bin.b, 0); break;
    case LOOP_E_UN: form_expr(f, e->u.un.a, 0); break;
    case LOOP_E_SELECT:
        form_expr(f, e->u.sel.cond, 0);
        form_expr(f, e->u.sel.a, 0);
        form_expr(f, e->u.sel.b, 0);
        break;
    case LOOP_E_CALL:
        for (int i = 0; i < e->u.call.n; i++)
            form_expr(f, e->u.call.args[i], 0);
        break;
    case LOOP_E_CAST: form_expr(f, e->u.cast.a, 0); break;
    default: break;
    }
}

static void form_stmt(Form *f, const LoopStmt *s)
{
    if (!s)
        return;
    switch (s->kind) {
    case LOOP_S_FOR:
        if (!expr_is_index(s->u.loop.extent, f->dvar))
            f->dependent = 1;
        form_stmt(f, s->u.loop.body);
        break;
    case LOOP_S_LET: form_expr(f, s->u.let.value, 1); break;
    case LOOP_S_ASSIGN: form_expr(f, s->u.assign.value, 1); break;
    case LOOP_S_STORE:
        if (!expr_is_index(s->u.store.index, f->dvar))
            f->dependent = 1;
        form_expr(f, s->u.store.index, 0);
        form_expr(f, s->u.store.value, 0);
        break;
    case LOOP_S_IF:
        if (!expr_is_index(s->u.cond.cond, f->dvar))
            f->dependent = 1;
        form_expr(f, s->u.cond.cond, 0);
        form_stmt(f, s->u.cond.then_);
        form_stmt(f, s->u.cond.else_);
        break;
    case LOOP_S_BLOCK:
        for (int i = 0; i < s->u.block.n; i++)
            form_stmt(f, s->u.block.items[i]);
        break;
    default: break;
    }
}

/* Per kernel: whether its indexing and control flow are data-independent
 * (indep[k]), and per root buffer whether some kernel reads it inside an
 * expression (bad[b]). */
static int kernel_forms(const LoopProgram *p, unsigned char *indep, unsigned char *bad)
{
    unsigned char *dvar = malloc((size_t)p->n_vars + 1);
    if (!dvar)
        return -1;
    for (int k = 0; k < p->n_kernels; k++) {
        memset(dvar, 0, (size_t)p->n_vars + 1);
        for (int it = 0; it < 8 && mark_data(p->kernels[k].body, dvar); it++)
            ;
        Form f = { p, dvar, bad, 0 };
        form_stmt(&f, p->kernels[k].body);
        indep[k] = !f.dependent;
    }
    free(dvar);
    return 0;
}

/* ------------------------------------------- pixel-major element-wise order */

typedef struct Flat {
    CgCWalk w;
    LoopProgram *p;
    int var, ok, stored;
    LoopExpr *by;           /* the new flat index */
    int assign_outside;
} Flat;

static void flat_store(CgCWalk *w, LoopStmt *s)
{
    Flat *f = (Flat *)w;
    const LoopExpr *i = s->u.store.index;
    if (i->kind != LOOP_E_VAR || i->u.var != f->var)
        f->ok = 0;
    if (f->stored < 0)
        f->stored = cg_c_root(f->p, s->u.store.buf);
    else if (f->stored != cg_c_root(f->p, s->u.store.buf))
        f->ok = 0;
}

static void flat_subst(CgCWalk *w, LoopExpr *e)
{
    Flat *f = (Flat *)w;
    if (e->kind != LOOP_E_VAR || e->u.var != f->var)
        return;
    LoopExpr *c = loop_expr_copy(f->p, f->by);
    if (c)
        *e = *c;
    else
        f->ok = 0;
}

/* Does s contain a FOR, or an ASSIGN to a variable not declared inside s? */
static int has_loop(const LoopStmt *s)
{
    if (!s)
        return 0;
    switch (s->kind) {
    case LOOP_S_FOR: return 1;
    case LOOP_S_IF: return has_loop(s->u.cond.then_) || has_loop(s->u.cond.else_);
    case LOOP_S_BLOCK:
        for (int i = 0; i < s->u.block.n; i++)
            if (has_loop(s->u.block.items[i]))
                return 1;
        return 0;
    default: return 0;
    }
}

static int assigns_outer(const LoopStmt *s, unsigned char *local)
{
    if (!s)
        return 0;
    switch (s->kind) {
    case LOOP_S_LET: local[s->u.let.var] = 1; return 0;
    case LOOP_S_ASSIGN: return !local[s->u.assign.var];
    case LOOP_S_IF: return assigns_outer(s->u.cond.then_, local) || assigns_outer(s->u.cond.else_, local);
    case LOOP_S_BLOCK:
        for (int i = 0; i < s->u.block.n; i++)
            if (assigns_outer(s->u.block.items[i], local))
                return 1;
        return 0;
    default: return 0;
    }
}

/* An element-wise kernel `for i < N·C·H·W { ... out[i] = ... }` over a 4-D
 * intermediate or output (C > 1, H·W > 1) becomes
 *     for n < N, h < H, w < W: for c < C (PIPELINE II=1) { ... with i = ((n·C + c)·H + h)·W + w }
 * the order the line buffers write and read (one pixel, all its channels):
 * its iterations are independent (each writes its own element and reads
 * nothing it writes), so any order computes the same values. */
static int pixel_major(LoopProgram *p, int k)
{
    LoopStmt *s = p->kernels[k].body;
    if (s && s->kind == LOOP_S_BLOCK && s->u.block.n == 1)
        s = s->u.block.items[0];
    if (!s || s->kind != LOOP_S_FOR || s->u.loop.extent->kind != LOOP_E_INT || s->u.loop.kind != LOOP_SERIAL ||
        has_loop(s->u.loop.body))
        return 0;
    Flat f = { { NULL, flat_store, NULL }, p, s->u.loop.var, 1, -1, NULL, 0 };
    cg_c_walk(s->u.loop.body, &f.w);
    if (!f.ok || f.stored < 0)
        return 0;
    const LoopBuf *ob = &p->bufs[f.stored];
    if ((ob->storage != LOOP_ST_WORKSPACE && ob->storage != LOOP_ST_OUTPUT) || ob->shape.rank != 4 || ob->offchip)
        return 0;
    int64_t N = ob->shape.dims[0], C = ob->shape.dims[1], H = ob->shape.dims[2], W = ob->shape.dims[3];
    if (C < 2 || H * W < 2 || N * C * H * W != s->u.loop.extent->u.i)
        return 0;
    unsigned char *local = calloc((size_t)p->n_vars + 1, 1);
    if (!local)
        return -1;
    int outer = assigns_outer(s->u.loop.body, local);
    free(local);
    if (outer)
        return 0;
    int vn = loop_add_var(p, "n", IR_DT_I64), vh = loop_add_var(p, "h", IR_DT_I64);
    int vw = loop_add_var(p, "w", IR_DT_I64), vc = loop_add_var(p, "c", IR_DT_I64);
    if (vn < 0 || vh < 0 || vw < 0 || vc < 0)
        return -1;
    LoopExpr *e = loop_bin(p, LOOP_ADD, loop_bin(p, LOOP_MUL, loop_var(p, vn), loop_int(p, C)), loop_var(p, vc));
    e = loop_bin(p, LOOP_ADD, loop_bin(p, LOOP_MUL, e, loop_int(p, H)), loop_var(p, vh));
    e = loop_bin(p, LOOP_ADD, loop_bin(p, LOOP_MUL, e, loop_int(p, W)), loop_var(p, vw));
    if (!e)
        return -1;
    f.w = (CgCWalk){ NULL, NULL, flat_subst };
    f.by = e;
    cg_c_walk(s->u.loop.body, &f.w);
    if (!f.ok)
        return -1;
    LoopStmt *lc = loop_for(p, vc, loop_int(p, C), LOOP_SERIAL, s->u.loop.body);
    if (!lc)
        return -1;
    tgt_fpga_pipeline(lc, 1);
    LoopStmt *lw = loop_for(p, vw, loop_int(p, W), LOOP_SERIAL, lc);
    LoopStmt *lh = lw ? loop_for(p, vh, loop_int(p, H), LOOP_SERIAL, lw) : NULL;
    LoopStmt *ln = lh ? loop_for(p, vn, loop_int(p, N), LOOP_SERIAL, lh) : NULL;
    if (!ln)
        return -1;
    p->kernels[k].body = ln;
    return 1;
}

/* ------------------------------------------------------ stream duplication */

typedef struct Dup {
    CgCWalk w;
    LoopProgram *p;
    int from, to, n_to, err;
    const int *copies;
} Dup;

static void dup_load(CgCWalk *w, LoopExpr *e)
{
    Dup *d = (Dup *)w;
    if (e->u.load.buf == d->from)
        e->u.load.buf = d->to;
}

/* STORE b[i] = v  →  { let t = v; STORE b[i] = t; STORE copy_j[i] = t ... } */
static void dup_store(CgCWalk *w, LoopStmt *s)
{
    Dup *d = (Dup *)w;
    if (s->u.store.buf != d->from)
        return;
    LoopProgram *p = d->p;
    int t = loop_add_var(p, "fork", s->u.store.value->type);
    LoopStmt *blk = loop_block(p);
    if (t < 0 || !blk || loop_block_add(p, blk, loop_let(p, t, s->u.store.value, 0))) {
        d->err = 1;
        return;
    }
    for (int j = -1; j < d->n_to; j++) {
        int b = j < 0 ? d->from : d->copies[j];
        LoopExpr *i = j < 0 ? s->u.store.index : loop_expr_copy(p, s->u.store.index);
        LoopStmt *st = i ? loop_store(p, b, i, loop_var(p, t)) : NULL;
        if (!st || loop_block_add(p, blk, st)) {
            d->err = 1;
            return;
        }
    }
    *s = *blk;
}

/* ------------------------------------------------------------- tracing */

typedef struct Trace {
    const LoopProgram *p;
    int *sid;            /* per root buffer: stream index, -1 */
    int n;               /* streams */
    int *buf, *writer, *reader;
    int64_t **seq, *len, *cap, *pos;
    unsigned char *fail;
    TgtFpgaRun **runs;   /* per kernel */
    int64_t *n_runs, *cap_runs, total_runs;
    int oom;
} Trace;

static void add_run(Trace *T, int k, int s, int write)
{
    if (T->n_runs[k] > 0) {
        TgtFpgaRun *r = &T->runs[k][T->n_runs[k] - 1];
        if (r->stream == s && r->write == write) {
            r->n++;
            return;
        }
    }
    if (T->total_runs >= MAX_RUNS) {
        T->oom = 1;
        return;
    }
    if (T->n_runs[k] == T->cap_runs[k]) {
        int64_t nc = T->cap_runs[k] ? 2 * T->cap_runs[k] : 64;
        TgtFpgaRun *q = realloc(T->runs[k], (size_t)nc * sizeof *q);
        if (!q) {
            T->oom = 1;
            return;
        }
        T->runs[k] = q;
        T->cap_runs[k] = nc;
    }
    T->runs[k][T->n_runs[k]++] = (TgtFpgaRun){ s, write, 1 };
    T->total_runs++;
}

static void on_access(void *ctx, int k, int b, int64_t x, int store)
{
    Trace *T = ctx;
    int s = T->sid[b];
    if (s < 0 || T->fail[s] || T->oom)
        return;
    if (store) {
        if (k != T->writer[s] || T->len[s] >= T->cap[s]) {
            T->fail[s] = 1;
            return;
        }
        T->seq[s][T->len[s]++] = x;
    } else {
        if (k != T->reader[s] || T->pos[s] >= T->len[s] || T->seq[s][T->pos[s]] != x) {
            T->fail[s] = 1;
            return;
        }
        T->pos[s]++;
    }
    add_run(T, k, s, store);
}

/* -------------------------------------------------------- FIFO replay */

int tgt_fpga_fifo_sim(const TgtFpgaFifos *f, const int64_t *depth)
{
    int K = f->n_kernels;
    int64_t *at = calloc((size_t)K + 1, sizeof *at), *done_n = calloc((size_t)K + 1, sizeof *done_n);
    int64_t *occ = calloc((size_t)f->n + 1, sizeof *occ);
    unsigned char *started = calloc((size_t)K + 1, 1), *done = calloc((size_t)K + 1, 1);
    int ok = -1;
    if (!at || !done_n || !occ || !started || !done)
        goto out;
    for (int progress = 1; progress;) {
        progress = 0;
        for (int k = 0; k < K; k++) {
            if (done[k])
                continue;
            if (!started[k]) {
                int ready = 1;          /* a ping-pong input is read once its producer has finished */
                for (int j = 0; j < K && ready; j++)
                    ready = !f->pipo[(size_t)j * K + k] || done[j];
                if (!ready)
                    continue;
                started[k] = 1;
                progress = 1;
            }
            while (at[k] < f->n_runs[k]) {
                const TgtFpgaRun *r = &f->runs[k][at[k]];
                int64_t left = r->n - done_n[k];
                int64_t can = r->write ? depth[r->stream] - occ[r->stream] : occ[r->stream];
                if (can > left)
                    can = left;
                if (can <= 0)
                    break;
                occ[r->stream] += r->write ? can : -can;
                done_n[k] += can;
                progress = 1;
                if (done_n[k] == r->n) {
                    at[k]++;
                    done_n[k] = 0;
                }
            }
            if (at[k] == f->n_runs[k]) {
                done[k] = 1;
                progress = 1;
            }
        }
    }
    ok = 1;
    for (int k = 0; k < K; k++)
        ok &= done[k];
out:
    free(at);
    free(done_n);
    free(occ);
    free(started);
    free(done);
    return ok;
}

void tgt_fpga_fifos_free(TgtFpgaFifos *f)
{
    if (!f)
        return;
    for (int k = 0; f->runs && k < f->n_kernels; k++)
        free(f->runs[k]);
    free(f->runs);
    free(f->n_runs);
    free(f->buf);
    free(f->count);
    free(f->depth);
    free(f->pipo);
    memset(f, 0, sizeof *f);
}

/* Smallest depths (>= 2) with which the replay finishes, one stream at a
 * time; 0 on success, 1 when even full-size FIFOs deadlock (cannot happen
 * for kernels in program order), -1 on OOM. */
static int fifo_depths(TgtFpgaFifos *f)
{
    for (int s = 0; s < f->n; s++)
        f->depth[s] = f->count[s] > 2 ? f->count[s] : 2;
    int r = tgt_fpga_fifo_sim(f, f->depth);
    if (r != 1)
        return r < 0 ? -1 : 1;
    for (int s = 0; s < f->n; s++) {
        int64_t lo = 2, hi = f->depth[s];        /* hi finishes */
        while (lo < hi) {
            int64_t mid = lo + (hi - lo) / 2;
            f->depth[s] = mid;
            r = tgt_fpga_fifo_sim(f, f->depth);
            if (r < 0)
                return -1;
            if (r)
                hi = mid;
            else
                lo = mid + 1;
        }
        f->depth[s] = hi;
    }
    return 0;
}

/* ------------------------------------------- indices a FIFO does not need */

typedef struct Strip {
    CgCWalk w;
    LoopProgram *p;
    int *count;          /* per variable: uses */
    int err;
} Strip;

static void strip_load(CgCWalk *w, LoopExpr *e)
{
    Strip *t = (Strip *)w;
    if (t->p->bufs[cg_c_root(t->p, e->u.load.buf)].stream && !(e->u.load.index = loop_int(t->p, 0)))
        t->err = 1;
}

static void strip_store(CgCWalk *w, LoopStmt *s)
{
    Strip *t = (Strip *)w;
    if (t->p->bufs[cg_c_root(t->p, s->u.store.buf)].stream && !(s->u.store.index = loop_int(t->p, 0)))
        t->err = 1;
}

static void count_var(CgCWalk *w, LoopExpr *e)
{
    if (e->kind == LOOP_E_VAR)
        ((Strip *)w)->count[e->u.var]++;
}

/* Removes the LETs nobody reads (the stripped indices' row and column). */
static int drop_dead(LoopStmt *s, const int *count)
{
    if (!s)
        return 0;
    int n = 0;
    switch (s->kind) {
    case LOOP_S_FOR: return drop_dead(s->u.loop.body, count);
    case LOOP_S_IF: return drop_dead(s->u.cond.then_, count) + drop_dead(s->u.cond.else_, count);
    case LOOP_S_BLOCK: {
        int j = 0;
        for (int i = 0; i < s->u.block.n; i++) {
            LoopStmt *it = s->u.block.items[i];
            if (it->kind == LOOP_S_LET && count[it->u.let.var] == 0) {
                n++;
                continue;
            }
            n += drop_dead(it, count);
            s->u.block.items[j++] = it;
        }
        s->u.block.n = j;
        return n;
    }
    default: return 0;
    }
}

/* A stream's loads and stores keep no index (the FIFO's order is the
 * index; the evaluator reads and writes a stream in order too). */
static int strip_indices(LoopProgram *p)
{
    int *count = malloc(((size_t)p->n_vars + 1) * sizeof *count);
    if (!count)
        return -1;
    Strip t = { { strip_load, strip_store, NULL }, p, count, 0 };
    for (int k = 0; k < p->n_kernels && !t.err; k++) {
        cg_c_walk(p->kernels[k].body, &t.w);
        for (int it = 0; it < 8; it++) {
            memset(count, 0, ((size_t)p->n_vars + 1) * sizeof *count);
            Strip c = { { NULL, NULL, count_var }, p, count, 0 };
            cg_c_walk(p->kernels[k].body, &c.w);
            if (!drop_dead(p->kernels[k].body, count))
                break;
        }
    }
    free(count);
    return t.err ? -1 : 0;
}

/* ------------------------------------------------------------ the pass */

/* uses[k * n_bufs + b]: cg_c_kernel_uses of every kernel (NULL on OOM). */
static unsigned char *uses_of(const LoopProgram *p)
{
    size_t nb = (size_t)p->n_bufs;
    unsigned char *u = malloc((size_t)p->n_kernels * nb + 1);
    for (int k = 0; u && k < p->n_kernels; k++)
        cg_c_kernel_uses(p, k, u + (size_t)k * nb);
    return u;
}

int tgt_fpga_streams(LoopProgram *p, TgtFpgaFifos *out)
{
    if (out)
        memset(out, 0, sizeof *out);
    int64_t flops = 0;
    for (int k = 0; k < p->n_kernels; k++)
        flops += p->kernels[k].flops;
    if (flops > MAX_FLOPS || p->n_kernels < 2)
        return 0;
    int nb0 = p->n_bufs, K = p->n_kernels, rc = -1;
    unsigned char *used = malloc((size_t)nb0 + 1), *indep = malloc((size_t)K + 1), *bad = calloc((size_t)nb0 + 1, 1);
    int *writers = calloc((size_t)nb0 + 1, sizeof *writers), *readers = calloc((size_t)nb0 + 1, sizeof *readers);
    int *wk = malloc(((size_t)nb0 + 1) * sizeof *wk);
    Trace T = { .p = p };
    TgtFpgaFifos F = { 0 };
    IrArray *inputs = NULL;
    unsigned char *watch = NULL, *u2 = NULL;
    if (!used || !indep || !bad || !writers || !readers || !wk || kernel_forms(p, indep, bad))
        goto done;
    /* DATAFLOW first: streams need the kernels to run concurrently */
    for (int k = 0; k < K; k++) {
        cg_c_kernel_uses(p, k, used);
        for (int b = 0; b < nb0; b++) {
            if (!used[b])
                continue;
            const LoopBuf *bf = &p->bufs[b];
            if (bf->offchip && bf->storage == LOOP_ST_WORKSPACE)
                goto none;
            if (used[b] == 3 && (bf->storage == LOOP_ST_WORKSPACE || bf->storage == LOOP_ST_INPUT ||
                                 bf->storage == LOOP_ST_OUTPUT))
                goto none;
            if (used[b] & 2) {
                writers[b]++;
                wk[b] = k;
            }
            if (used[b] & 1)
                readers[b]++;
        }
    }
    for (int b = 0; b < nb0; b++) {
        const LoopBuf *bf = &p->bufs[b];
        if (bf->alias_of >= 0 || bf->storage == LOOP_ST_CONST || bf->storage == LOOP_ST_LOCAL)
            continue;
        if ((bf->storage == LOOP_ST_INPUT && readers[b] > 1) ||
            (bf->storage == LOOP_ST_OUTPUT && (writers[b] > 1 || readers[b] > 0)))
            goto none;
        if (bf->storage != LOOP_ST_WORKSPACE || (writers[b] == 0 && readers[b] == 0))
            continue;
        if (writers[b] != 1)
            goto none;
        if (readers[b] > 1) {           /* duplicated: no views, streamable forms in every reader */
            for (int a = 0; a < nb0; a++)
                if (p->bufs[a].alias_of == b)
                    goto none;
        }
    }
    /* element-wise kernels in pixel order */
    for (int k = 0; k < K; k++)
        if (indep[k] && pixel_major(p, k) < 0)
            goto done;
    /* one copy per further consumer */
    for (int b = 0; b < nb0; b++) {
        const LoopBuf *bf = &p->bufs[b];
        if (bf->alias_of >= 0 || bf->storage != LOOP_ST_WORKSPACE || readers[b] < 2)
            continue;
        int ncp = readers[b] - 1, *copies = malloc((size_t)ncp * sizeof *copies), j = 0;
        if (!copies)
            goto done;
        for (int k = 0; k < K; k++) {
            cg_c_kernel_uses(p, k, used);
            if (k == wk[b] || !(used[b] & 1))
                continue;
            if (j++ == 0)
                continue;               /* the first reader keeps the original */
            char name[200];
            snprintf(name, sizeof name, "%s_s%d", p->bufs[b].name, j - 1);
            IrShape shape = p->bufs[b].shape;
            int c = loop_add_buf(p, name, p->bufs[b].dtype, &shape, LOOP_ST_WORKSPACE);
            if (c < 0) {
                free(copies);
                goto done;
            }
            p->bufs[c].tensor = p->bufs[b].tensor;
            copies[j - 2] = c;
            Dup dl = { { dup_load, NULL, NULL }, p, b, c, 0, 0, NULL };
            cg_c_walk(p->kernels[k].body, &dl.w);
        }
        Dup ds = { { NULL, dup_store, NULL }, p, b, -1, ncp, 0, copies };
        cg_c_walk(p->kernels[wk[b]].body, &ds.w);
        free(copies);
        if (ds.err)
            goto done;
    }
    /* candidates: one writer, one reader, data-independent both, loads as whole values */
    int nb = p->n_bufs;
    unsigned char *bad2 = realloc(bad, (size_t)nb + 1);
    if (!bad2)
        goto done;
    bad = bad2;
    memset(bad, 0, (size_t)nb + 1);
    if (kernel_forms(p, indep, bad))
        goto done;
    T.sid = malloc(((size_t)nb + 1) * sizeof *T.sid);
    T.buf = malloc(((size_t)nb + 1) * sizeof *T.buf);
    T.writer = malloc(((size_t)nb + 1) * sizeof *T.writer);
    T.reader = malloc(((size_t)nb + 1) * sizeof *T.reader);
    T.seq = calloc((size_t)nb + 1, sizeof *T.seq);
    T.len = calloc((size_t)nb + 1, sizeof *T.len);
    T.cap = calloc((size_t)nb + 1, sizeof *T.cap);
    T.pos = calloc((size_t)nb + 1, sizeof *T.pos);
    T.fail = calloc((size_t)nb + 1, 1);
    T.runs = calloc((size_t)K + 1, sizeof *T.runs);
    T.n_runs = calloc((size_t)K + 1, sizeof *T.n_runs);
    T.cap_runs = calloc((size_t)K + 1, sizeof *T.cap_runs);
    watch = calloc((size_t)nb + 1, 1);
    u2 = uses_of(p);
    if (!T.sid || !T.buf || !T.writer || !T.reader || !T.seq || !T.len || !T.cap || !T.pos || !T.fail || !T.runs ||
        !T.n_runs || !T.cap_runs || !watch || !u2) {
        goto done;
    }
    for (int b = 0; b < nb; b++)
        T.sid[b] = -1;
    for (int b = 0; b < nb; b++) {
        const LoopBuf *bf = &p->bufs[b];
        if (bf->alias_of >= 0 || bf->storage != LOOP_ST_WORKSPACE || bad[b])
            continue;
        int w = -1, r = -1, nw = 0, nr = 0;
        for (int k = 0; k < K; k++) {
            int u = u2[(size_t)k * nb + b];
            if (u & 2) {
                w = k;
                nw++;
            }
            if (u & 1) {
                r = k;
                nr++;
            }
        }
        if (nw != 1 || nr != 1 || r <= w || !indep[w] || !indep[r])
            continue;
        int64_t n = ir_shape_numel(&bf->shape);
        if (!(T.seq[T.n] = malloc((size_t)(n > 0 ? n : 1) * sizeof **T.seq))) {
            goto done;
        }
        T.cap[T.n] = n;
        T.buf[T.n] = b;
        T.writer[T.n] = w;
        T.reader[T.n] = r;
        T.sid[b] = T.n++;
        watch[b] = 1;
    }
    if (T.n == 0) {
        rc = 0;
        goto done;
    }
    /* the trace, on zero inputs (the kernels are data-independent) */
    inputs = calloc((size_t)p->n_inputs + 1, sizeof *inputs);
    if (!inputs) {
        goto done;
    }
    for (int b = 0; b < nb; b++) {
        const LoopBuf *bf = &p->bufs[b];
        if (bf->storage != LOOP_ST_INPUT || bf->alias_of >= 0 || bf->index < 0 || bf->index >= p->n_inputs)
            continue;
        inputs[bf->index].dtype = bf->dtype;
        inputs[bf->index].shape = bf->shape;
        if (!(inputs[bf->index].data = calloc((size_t)ir_shape_numel(&bf->shape) * ir_dtype_size(bf->dtype) + 8, 1))) {
            goto done;
        }
    }
    UtilDiag d;
    util_diag_init(&d);
    int er = tgt_fpga_eval_trace(p, inputs, watch, on_access, &T, &d);
    if (er || T.oom) {
        rc = T.oom && !er ? 0 : -1;      /* too long a trace: arrays; an evaluation error: the caller's */
        if (er)
            rc = 0;                      /* the design itself reports it later; keep arrays */
        goto done;
    }
    /* the streams that passed, their runs, and the ping-pong dependencies */
    int *map = malloc(((size_t)T.n + 1) * sizeof *map);
    if (!map)
        goto done;
    F.n_kernels = K;
    F.buf = malloc(((size_t)T.n + 1) * sizeof *F.buf);
    F.count = malloc(((size_t)T.n + 1) * sizeof *F.count);
    F.depth = malloc(((size_t)T.n + 1) * sizeof *F.depth);
    F.runs = calloc((size_t)K + 1, sizeof *F.runs);
    F.n_runs = calloc((size_t)K + 1, sizeof *F.n_runs);
    F.pipo = calloc((size_t)K * K + 1, 1);
    if (!F.buf || !F.count || !F.depth || !F.runs || !F.n_runs || !F.pipo) {
        free(map);
        goto done;
    }
    for (int s = 0; s < T.n; s++) {
        map[s] = -1;
        if (T.fail[s] || T.len[s] == 0 || T.pos[s] != T.len[s])
            continue;
        map[s] = F.n;
        F.buf[F.n] = T.buf[s];
        F.count[F.n] = T.len[s];
        F.n++;
    }
    for (int k = 0; k < K; k++) {
        F.runs[k] = malloc(((size_t)T.n_runs[k] + 1) * sizeof **F.runs);
        if (!F.runs[k]) {
            free(map);
            goto done;
        }
        for (int64_t i = 0; i < T.n_runs[k]; i++) {
            const TgtFpgaRun *r = &T.runs[k][i];
            int s = map[r->stream];
            if (s < 0)
                continue;
            TgtFpgaRun *last = F.n_runs[k] ? &F.runs[k][F.n_runs[k] - 1] : NULL;
            if (last && last->stream == s && last->write == r->write)
                last->n += r->n;
            else
                F.runs[k][F.n_runs[k]++] = (TgtFpgaRun){ s, r->write, r->n };
        }
    }
    free(map);
    unsigned char *is_stream = calloc((size_t)nb + 1, 1);
    if (!is_stream) {
        goto done;
    }
    for (int s = 0; s < F.n; s++)
        is_stream[F.buf[s]] = 1;
    for (int b = 0; b < nb; b++) {      /* ping-pong arrays: producer -> consumer */
        const LoopBuf *bf = &p->bufs[b];
        if (bf->alias_of >= 0 || bf->storage != LOOP_ST_WORKSPACE || is_stream[b])
            continue;
        int w = -1;
        for (int k = 0; k < K; k++)
            if (u2[(size_t)k * nb + b] & 2)
                w = k;
        for (int k = 0; w >= 0 && k < K; k++)
            if (k != w && (u2[(size_t)k * nb + b] & 1))
                F.pipo[(size_t)w * K + k] = 1;
    }
    free(is_stream);
    int dr = F.n ? fifo_depths(&F) : 0;
    if (dr < 0)
        goto done;
    if (dr == 0)
        for (int s = 0; s < F.n; s++)
            p->bufs[F.buf[s]].stream = F.depth[s];
    if (dr == 0 && F.n && strip_indices(p))
        goto done;
    if (out && dr == 0) {
        *out = F;
        memset(&F, 0, sizeof F);
    }
    rc = 0;
    goto done;
none:
    rc = 0;
done:
    free(watch);
    free(u2);
    for (int i = 0; inputs && i < p->n_inputs; i++)
        free(inputs[i].data);
    free(inputs);
    for (int s = 0; T.seq && s < T.n; s++)
        free(T.seq[s]);
    for (int k = 0; T.runs && k < K; k++)
        free(T.runs[k]);
    free(T.sid);
    free(T.buf);
    free(T.writer);
    free(T.reader);
    free(T.seq);
    free(T.len);
    free(T.cap);
    free(T.pos);
    free(T.fail);
    free(T.runs);
    free(T.n_runs);
    free(T.cap_runs);
    tgt_fpga_fifos_free(&F);
    free(used);
    free(indep);
    free(bad);
    free(writers);
    free(readers);
    free(wk);
    return rc;
}
