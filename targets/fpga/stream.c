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

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The replay's work cap: traces longer than this many runs keep arrays. */
#define MAX_RUNS ((int64_t)1 << 22)
/* The evaluator's work cap (flops of the whole program). */
#define MAX_FLOPS ((int64_t)400 << 20)

/* ----------------------------------------------- data-independent kernels */

/* Does e read a buffer, or a variable marked in dvar (NULL: none)? */
static int expr_has_data(const LoopExpr *e, const unsigned char *dvar)
{
    if (!e)
        return 0;
    switch (e->kind) {
    case LOOP_E_LOAD: return 1;
    case LOOP_E_VAR: return dvar && dvar[e->u.var];
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

/* Does s contain a FOR? */
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

/* Does s ASSIGN a variable not declared inside it (a value carried across
 * iterations)?  local: the variables declared so far. */
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
 *     for n < N, h < H: for w < W (PIPELINE II=1): for c < C (unrolled) { ... i = ((n·C + c)·H + h)·W + w }
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
    Flat f = { { NULL, flat_store, NULL }, p, s->u.loop.var, 1, -1 };
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
    if (!e || tgt_fpga_subst(p, s->u.loop.body, s->u.loop.var, e))
        return -1;
    LoopStmt *lc = loop_for(p, vc, loop_int(p, C), LOOP_SERIAL, s->u.loop.body);
    LoopStmt *lw = lc ? loop_for(p, vw, loop_int(p, W), LOOP_SERIAL, lc) : NULL;
    if (!lw)
        return -1;
    tgt_fpga_pipeline(lw, 1);             /* a pixel per cycle: its channels unrolled, one lane each */
    LoopStmt *lh = loop_for(p, vh, loop_int(p, H), LOOP_SERIAL, lw);
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
    int from, n_to, err;
    const int *copies;
} Dup;

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

/* ------------------------------------------------------------- lanes
 *
 * A stream of a 4-D [N, C, H, W] tensor is an array of C FIFOs, one per
 * channel: element a goes to lane (a / (H·W)) mod C.  Producer and consumer
 * each see the channels' subsequences of the same sequence, so the split is
 * valid whenever the stream is; what it needs is each access's lane as an
 * expression the HLS compiler resolves after unrolling: a loop variable.
 * Candidates are the variables whose coefficient in the access's affine
 * index (tgt_fpga_affine) is H·W; the trace keeps those equal to the lane at
 * every access. */

#define MAX_CAND 4

typedef struct Site {
    const void *at;            /* the LOAD expression or STORE statement */
    int stream, n;
    int var[MAX_CAND];         /* candidates still equal to the lane */
} Site;

static int cmp_site(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)((const Site *)a)->at, y = (uintptr_t)((const Site *)b)->at;
    return x < y ? -1 : x > y;
}

/* ------------------------------------------------------------- tracing */

typedef struct Trace {
    const LoopProgram *p;
    int *sid;            /* per root buffer: stream index, -1 */
    int n;               /* candidate streams */
    int *buf, *writer, *reader;
    int64_t **seq, *len, *cap, *pos;
    unsigned char *fail;
    int64_t *hw, *lanes; /* per stream: H·W and C of a 4-D tensor (lanes 1: one FIFO) */
    int *base;           /* per stream: its first FIFO id; n_fifos in all */
    int n_fifos;
    Site *sites;
    int n_sites, cap_sites;
    unsigned char *lane_bad;
    TgtFpgaRun **runs;   /* per kernel, over FIFO ids */
    int64_t *n_runs, *cap_runs, total_runs;
    int oom;
} Trace;

static void add_run(Trace *T, int k, int fifo, int write)
{
    if (T->n_runs[k] > 0) {
        TgtFpgaRun *r = &T->runs[k][T->n_runs[k] - 1];
        if (r->stream == fifo && r->write == write) {
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
    T->runs[k][T->n_runs[k]++] = (TgtFpgaRun){ fifo, write, 1 };
    T->total_runs++;
}

static Site *find_site(const Trace *T, const void *at)
{
    Site key = { .at = at };
    return T->n_sites ? bsearch(&key, T->sites, (size_t)T->n_sites, sizeof key, cmp_site) : NULL;
}

static void on_access(void *ctx, int k, int b, int64_t x, int store, const void *at, const int64_t *vars)
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
    int64_t lane = 0;
    if (T->lanes[s] > 1) {
        lane = x / T->hw[s] % T->lanes[s];
        Site *st = find_site(T, at);
        int j = 0;
        for (int i = 0; st && i < st->n; i++)
            if (vars[st->var[i]] == lane)
                st->var[j++] = st->var[i];
        if (st)
            st->n = j;
        if (!st || j == 0)
            T->lane_bad[s] = 1;
    }
    add_run(T, k, T->base[s] + (int)lane, store);
}

typedef struct Collect {
    CgCWalk w;
    Trace *T;
    unsigned char *all, *none;   /* per variable: 1, 0 (the affine form over every variable) */
    int64_t *coef;
    int err;
} Collect;

static void add_site(Collect *c, const void *at, int buf, const LoopExpr *index)
{
    Trace *T = c->T;
    int s = T->sid[cg_c_root(T->p, buf)];
    if (s < 0 || T->lanes[s] < 2)
        return;
    if (T->n_sites == T->cap_sites) {
        int nc = T->cap_sites ? 2 * T->cap_sites : 64;
        Site *q = realloc(T->sites, (size_t)nc * sizeof *q);
        if (!q) {
            c->err = 1;
            return;
        }
        T->sites = q;
        T->cap_sites = nc;
    }
    Site *st = &T->sites[T->n_sites++];
    *st = (Site){ .at = at, .stream = s };
    int nv = T->p->n_vars;
    memset(c->coef, 0, (size_t)nv * sizeof *c->coef);
    TgtFpgaAff A = { c->all, c->none, c->coef, 0, 1 };
    if (tgt_fpga_affine(&A, index, 1, nv))
        for (int v = 0; v < nv && st->n < MAX_CAND; v++)
            if (c->coef[v] == T->hw[s])
                st->var[st->n++] = v;
}

static void collect_load(CgCWalk *w, LoopExpr *e) { add_site((Collect *)w, e, e->u.load.buf, e->u.load.index); }
static void collect_store(CgCWalk *w, LoopStmt *s) { add_site((Collect *)w, s, s->u.store.buf, s->u.store.index); }

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

/* Smallest depth (>= 2) per stream, the same for all its lanes, with which
 * the replay finishes, one stream at a time: 0, 1 when even full-size FIFOs
 * deadlock (cannot happen for kernels in program order), -1 on OOM. */
static int fifo_depths(TgtFpgaFifos *f)
{
    for (int i = 0; i < f->n; i++)
        f->depth[i] = f->count[i] > 2 ? f->count[i] : 2;
    int r = tgt_fpga_fifo_sim(f, f->depth);
    if (r != 1)
        return r < 0 ? -1 : 1;
    for (int i = 0; i < f->n; i++) {
        if (i > 0 && f->buf[i] == f->buf[i - 1])
            continue;                            /* the stream's first lane sets all of them */
        int j = i;
        int64_t hi = 2;
        while (j < f->n && f->buf[j] == f->buf[i])
            hi = f->depth[j] > hi ? f->depth[j] : hi, j++;
        int64_t lo = 2;
        while (lo < hi) {
            int64_t mid = lo + (hi - lo) / 2;
            for (int l = i; l < j; l++)
                f->depth[l] = mid;
            r = tgt_fpga_fifo_sim(f, f->depth);
            if (r < 0)
                return -1;
            if (r)
                hi = mid;
            else
                lo = mid + 1;
        }
        for (int l = i; l < j; l++)
            f->depth[l] = hi;
    }
    return 0;
}

/* ------------------------------------------- indices a FIFO does not need */

typedef struct Strip {
    CgCWalk w;
    LoopProgram *p;
    const Trace *T;
    int *count;          /* per variable: uses */
    int err;
} Strip;

/* A stream access's index becomes its lane: the surviving candidate
 * variable, or 0 for a single FIFO. */
static LoopExpr *lane_index(Strip *t, const void *at)
{
    const Site *st = find_site(t->T, at);
    LoopExpr *e = st && st->n > 0 ? loop_var(t->p, st->var[0]) : loop_int(t->p, 0);
    if (!e)
        t->err = 1;
    return e;
}

static void strip_load(CgCWalk *w, LoopExpr *e)
{
    Strip *t = (Strip *)w;
    const LoopBuf *b = &t->p->bufs[cg_c_root(t->p, e->u.load.buf)];
    if (b->stream)
        e->u.load.index = b->stream_lanes > 1 ? lane_index(t, e) : loop_int(t->p, 0);
}

static void strip_store(CgCWalk *w, LoopStmt *s)
{
    Strip *t = (Strip *)w;
    const LoopBuf *b = &t->p->bufs[cg_c_root(t->p, s->u.store.buf)];
    if (b->stream)
        s->u.store.index = b->stream_lanes > 1 ? lane_index(t, s) : loop_int(t->p, 0);
}

static void count_var(CgCWalk *w, LoopExpr *e)
{
    if (e->kind == LOOP_E_VAR)
        ((Strip *)w)->count[e->u.var]++;
}

/* Removes the LETs of index arithmetic nobody reads (the stripped indices'
 * row and column); a LET that reads a buffer stays (a stream read, used or not). */
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
            if (it->kind == LOOP_S_LET && count[it->u.let.var] == 0 && !expr_has_data(it->u.let.value, NULL)) {
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

/* Every stream's loads and stores index its lane (the FIFO's order is the
 * element's position; the evaluator reads and writes a stream in order too). */
static int strip_indices(LoopProgram *p, const Trace *T)
{
    int *count = malloc(((size_t)p->n_vars + 1) * sizeof *count);
    if (!count)
        return -1;
    Strip t = { { strip_load, strip_store, NULL }, p, T, count, 0 };
    for (int k = 0; k < p->n_kernels && !t.err; k++) {
        cg_c_walk(p->kernels[k].body, &t.w);
        for (int it = 0; it < 8; it++) {
            memset(count, 0, ((size_t)p->n_vars + 1) * sizeof *count);
            Strip c = { { NULL, NULL, count_var }, p, T, count, 0 };
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

/* Can the program be one DATAFLOW region once every tensor read by several
 * kernels has a copy per reader?  (cg_hls_dataflow_ok's rule, with several
 * readers allowed for intermediates that have no views, and the intermediates
 * with their copies within TGT_FPGA_STACK_BYTES, as placement keeps them.)
 * 1 yes, 0 no, -1 OOM. */
static int dataflow_after_copies(const LoopProgram *p)
{
    int nb = p->n_bufs, K = p->n_kernels, ok = 1;
    int64_t onchip = 0;              /* the intermediates' bytes with one copy per reader */
    unsigned char *u = uses_of(p);
    int *writers = calloc((size_t)nb + 1, sizeof *writers), *readers = calloc((size_t)nb + 1, sizeof *readers);
    if (!u || !writers || !readers)
        ok = -1;
    for (int k = 0; ok == 1 && k < K; k++)
        for (int b = 0; ok == 1 && b < nb; b++) {
            int x = u[(size_t)k * nb + b];
            const LoopBuf *bf = &p->bufs[b];
            if (!x || bf->storage == LOOP_ST_CONST || bf->storage == LOOP_ST_LOCAL)
                continue;
            if ((bf->offchip && bf->storage == LOOP_ST_WORKSPACE) || x == 3)
                ok = 0;
            writers[b] += (x & 2) != 0;
            readers[b] += (x & 1) != 0;
        }
    for (int b = 0; ok == 1 && b < nb; b++) {
        const LoopBuf *bf = &p->bufs[b];
        if (bf->alias_of >= 0 || bf->storage == LOOP_ST_CONST || bf->storage == LOOP_ST_LOCAL)
            continue;
        if ((bf->storage == LOOP_ST_INPUT && readers[b] > 1) ||
            (bf->storage == LOOP_ST_OUTPUT && (writers[b] > 1 || readers[b] > 0)))
            ok = 0;
        if (bf->storage != LOOP_ST_WORKSPACE || (writers[b] == 0 && readers[b] == 0))
            continue;
        if (writers[b] != 1)
            ok = 0;
        for (int a = 0; readers[b] > 1 && a < nb; a++)
            if (p->bufs[a].alias_of == b)
                ok = 0;              /* a view would need a copy of its own */
        onchip += bf->bytes * (readers[b] > 1 ? readers[b] : 1);
    }
    if (ok == 1 && onchip > TGT_FPGA_STACK_BYTES)
        ok = 0;                      /* the copies, should they stay arrays, would not fit on chip */
    free(u);
    free(writers);
    free(readers);
    return ok;
}

/* Gives each further reader of a multi-reader intermediate its own copy,
 * written by the producer beside the original.  0, or -1 on OOM. */
static int copy_forks(LoopProgram *p)
{
    int nb0 = p->n_bufs, K = p->n_kernels, rc = 0;
    unsigned char *u = uses_of(p);
    if (!u)
        return -1;
    for (int b = 0; b < nb0 && !rc; b++) {
        const LoopBuf *bf = &p->bufs[b];
        if (bf->alias_of >= 0 || bf->storage != LOOP_ST_WORKSPACE)
            continue;
        int w = -1, nr = 0;
        for (int k = 0; k < K; k++) {
            w = u[(size_t)k * nb0 + b] & 2 ? k : w;
            nr += (u[(size_t)k * nb0 + b] & 1) != 0;
        }
        if (nr < 2 || w < 0)
            continue;
        int *copies = malloc((size_t)nr * sizeof *copies), j = 0;
        if (!copies)
            rc = -1;
        for (int k = 0; !rc && k < K; k++) {
            if (k == w || !(u[(size_t)k * nb0 + b] & 1) || j++ == 0)
                continue;               /* the first reader keeps the original */
            char name[200];
            snprintf(name, sizeof name, "%s_s%d", p->bufs[b].name, j - 1);
            IrShape shape = p->bufs[b].shape;
            int c = loop_add_buf(p, name, p->bufs[b].dtype, &shape, LOOP_ST_WORKSPACE);
            if (c < 0) {
                rc = -1;
                break;
            }
            p->bufs[c].tensor = p->bufs[b].tensor;
            copies[j - 2] = c;
            tgt_fpga_retarget(p->kernels[k].body, b, c, 0);
        }
        if (!rc) {
            Dup ds = { { NULL, dup_store, NULL }, p, b, nr - 1, 0, copies };
            cg_c_walk(p->kernels[w].body, &ds.w);
            rc = ds.err ? -1 : 0;
        }
        free(copies);
    }
    free(u);
    return rc;
}

/* Zero-filled model inputs for a trace (NULL on OOM); free with free_inputs. */
static IrArray *zero_inputs(const LoopProgram *p)
{
    IrArray *in = calloc((size_t)p->n_inputs + 1, sizeof *in);
    for (int b = 0; in && b < p->n_bufs; b++) {
        const LoopBuf *bf = &p->bufs[b];
        if (bf->storage != LOOP_ST_INPUT || bf->alias_of >= 0 || bf->index < 0 || bf->index >= p->n_inputs)
            continue;
        in[bf->index].dtype = bf->dtype;
        in[bf->index].shape = bf->shape;
        if (!(in[bf->index].data = calloc((size_t)ir_shape_numel(&bf->shape) * ir_dtype_size(bf->dtype) + 8, 1))) {
            for (int i = 0; i < p->n_inputs; i++)
                free(in[i].data);
            free(in);
            return NULL;
        }
    }
    return in;
}

static void free_inputs(const LoopProgram *p, IrArray *in)
{
    for (int i = 0; in && i < p->n_inputs; i++)
        free(in[i].data);
    free(in);
}

/* pipo[w * K + k] = 1 when kernel k reads an intermediate array (not a
 * stream: skip[b]) kernel w writes: k starts once w has finished. */
static void pipo_deps(const LoopProgram *p, const unsigned char *u, const unsigned char *skip, unsigned char *pipo)
{
    int K = p->n_kernels, nb = p->n_bufs;
    for (int b = 0; b < nb; b++) {
        const LoopBuf *bf = &p->bufs[b];
        if (bf->alias_of >= 0 || bf->storage != LOOP_ST_WORKSPACE || skip[b])
            continue;
        int w = -1;
        for (int k = 0; k < K; k++)
            w = u[(size_t)k * nb + b] & 2 ? k : w;
        for (int k = 0; w >= 0 && k < K; k++)
            if (k != w && (u[(size_t)k * nb + b] & 1))
                pipo[(size_t)w * K + k] = 1;
    }
}

static void trace_free(Trace *T, int K)
{
    for (int s = 0; T->seq && s < T->n; s++)
        free(T->seq[s]);
    for (int k = 0; T->runs && k < K; k++)
        free(T->runs[k]);
    free(T->sid);
    free(T->buf);
    free(T->writer);
    free(T->reader);
    free(T->seq);
    free(T->len);
    free(T->cap);
    free(T->pos);
    free(T->fail);
    free(T->hw);
    free(T->lanes);
    free(T->base);
    free(T->sites);
    free(T->lane_bad);
    free(T->runs);
    free(T->n_runs);
    free(T->cap_runs);
}

/* The candidates (one writer, one later reader, both data-independent, no
 * load inside an expression) and their access sites.  0, or -1 on OOM. */
static int candidates(LoopProgram *p, Trace *T)
{
    int nb = p->n_bufs, K = p->n_kernels, rc = -1;
    size_t n1 = (size_t)nb + 1;
    unsigned char *indep = malloc((size_t)K + 1), *bad = calloc(n1, 1), *u = uses_of(p);
    T->sid = malloc(n1 * sizeof *T->sid);
    T->buf = malloc(n1 * sizeof *T->buf);
    T->writer = malloc(n1 * sizeof *T->writer);
    T->reader = malloc(n1 * sizeof *T->reader);
    T->seq = calloc(n1, sizeof *T->seq);
    T->len = calloc(n1, sizeof *T->len);
    T->cap = calloc(n1, sizeof *T->cap);
    T->pos = calloc(n1, sizeof *T->pos);
    T->fail = calloc(n1, 1);
    T->hw = calloc(n1, sizeof *T->hw);
    T->lanes = calloc(n1, sizeof *T->lanes);
    T->base = calloc(n1, sizeof *T->base);
    T->lane_bad = calloc(n1, 1);
    T->runs = calloc((size_t)K + 1, sizeof *T->runs);
    T->n_runs = calloc((size_t)K + 1, sizeof *T->n_runs);
    T->cap_runs = calloc((size_t)K + 1, sizeof *T->cap_runs);
    if (!indep || !bad || !u || !T->sid || !T->buf || !T->writer || !T->reader || !T->seq || !T->len || !T->cap ||
        !T->pos || !T->fail || !T->hw || !T->lanes || !T->base || !T->lane_bad || !T->runs || !T->n_runs ||
        !T->cap_runs || kernel_forms(p, indep, bad))
        goto out;
    for (int b = 0; b < nb; b++)
        T->sid[b] = -1;
    for (int b = 0; b < nb; b++) {
        const LoopBuf *bf = &p->bufs[b];
        if (bf->alias_of >= 0 || bf->storage != LOOP_ST_WORKSPACE || bad[b])
            continue;
        int w = -1, r = -1, nw = 0, nr = 0;
        for (int k = 0; k < K; k++) {
            int x = u[(size_t)k * nb + b];
            if (x & 2)
                w = k, nw++;
            if (x & 1)
                r = k, nr++;
        }
        if (nw != 1 || nr != 1 || r <= w || !indep[w] || !indep[r])
            continue;
        int64_t n = ir_shape_numel(&bf->shape);
        if (!(T->seq[T->n] = malloc((size_t)(n > 0 ? n : 1) * sizeof **T->seq)))
            goto out;
        int s = T->n++;
        T->cap[s] = n;
        T->buf[s] = b;
        T->writer[s] = w;
        T->reader[s] = r;
        T->sid[b] = s;
        int four = bf->shape.rank == 4 && bf->shape.dims[1] > 1 && bf->shape.dims[2] * bf->shape.dims[3] > 0;
        T->lanes[s] = four ? bf->shape.dims[1] : 1;
        T->hw[s] = four ? bf->shape.dims[2] * bf->shape.dims[3] : 1;
        T->base[s] = T->n_fifos;
        T->n_fifos += (int)T->lanes[s];
    }
    size_t nv = (size_t)p->n_vars + 1;
    Collect c = { { collect_load, collect_store, NULL }, T, malloc(nv), calloc(nv, 1), malloc(nv * sizeof *c.coef), 0 };
    if (c.all)
        memset(c.all, 1, nv);
    for (int k = 0; c.all && c.none && c.coef && k < K; k++)
        cg_c_walk(p->kernels[k].body, &c.w);
    int cerr = c.err || !c.all || !c.none || !c.coef;
    free(c.all);
    free(c.none);
    free(c.coef);
    if (cerr)
        goto out;
    if (T->n_sites)
        qsort(T->sites, (size_t)T->n_sites, sizeof *T->sites, cmp_site);
    rc = 0;
out:
    free(indep);
    free(bad);
    free(u);
    return rc;
}

/* The passing streams' FIFOs (a stream whose lanes failed is one FIFO),
 * their runs and the ping-pong dependencies; LoopBuf.stream_lanes set.
 * 0, or -1 on OOM. */
static int fifos(LoopProgram *p, Trace *T, TgtFpgaFifos *F)
{
    int K = p->n_kernels, nb = p->n_bufs;
    int *map = malloc(((size_t)T->n_fifos + 1) * sizeof *map);
    unsigned char *u = uses_of(p), *is_stream = calloc((size_t)nb + 1, 1);
    F->n_kernels = K;
    F->buf = malloc(((size_t)T->n_fifos + 1) * sizeof *F->buf);
    F->count = calloc((size_t)T->n_fifos + 1, sizeof *F->count);
    F->depth = malloc(((size_t)T->n_fifos + 1) * sizeof *F->depth);
    F->runs = calloc((size_t)K + 1, sizeof *F->runs);
    F->n_runs = calloc((size_t)K + 1, sizeof *F->n_runs);
    F->pipo = calloc((size_t)K * K + 1, 1);
    int rc = -1;
    if (!map || !u || !is_stream || !F->buf || !F->count || !F->depth || !F->runs || !F->n_runs || !F->pipo)
        goto out;
    for (int s = 0; s < T->n; s++) {
        int ok = !T->fail[s] && T->len[s] > 0 && T->pos[s] == T->len[s];
        int lanes = ok && T->lanes[s] > 1 && !T->lane_bad[s];
        for (int i = 0; i < T->n_sites && lanes; i++)
            lanes = T->sites[i].stream != s || T->sites[i].n > 0;
        for (int l = 0; l < T->lanes[s]; l++) {
            map[T->base[s] + l] = !ok ? -1 : lanes || l == 0 ? F->n : F->n - 1;
            if (ok && (lanes || l == 0))
                F->buf[F->n++] = T->buf[s];
        }
        if (ok) {
            is_stream[T->buf[s]] = 1;
            p->bufs[T->buf[s]].stream_lanes = lanes ? (int)T->lanes[s] : 0;
        }
    }
    for (int k = 0; k < K; k++) {
        if (!(F->runs[k] = malloc(((size_t)T->n_runs[k] + 1) * sizeof **F->runs)))
            goto out;
        for (int64_t i = 0; i < T->n_runs[k]; i++) {
            const TgtFpgaRun *r = &T->runs[k][i];
            int f = map[r->stream];
            if (f < 0)
                continue;
            if (r->write)
                F->count[f] += r->n;
            TgtFpgaRun *last = F->n_runs[k] ? &F->runs[k][F->n_runs[k] - 1] : NULL;
            if (last && last->stream == f && last->write == r->write)
                last->n += r->n;
            else
                F->runs[k][F->n_runs[k]++] = (TgtFpgaRun){ f, r->write, r->n };
        }
    }
    pipo_deps(p, u, is_stream, F->pipo);
    rc = 0;
out:
    free(map);
    free(u);
    free(is_stream);
    return rc;
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
    int df = dataflow_after_copies(p);
    if (df <= 0)
        return df;                             /* streams need the layers to run concurrently */
    Trace T = { .p = p };
    TgtFpgaFifos F = { 0 };
    IrArray *inputs = NULL;
    unsigned char *watch = NULL, *indep = malloc((size_t)p->n_kernels + 1), *bad = calloc((size_t)p->n_bufs + 1, 1);
    int rc = -1, K = p->n_kernels;
    if (!indep || !bad || kernel_forms(p, indep, bad))
        goto done;
    for (int k = 0; k < K; k++)                /* element-wise kernels in pixel order */
        if (indep[k] && pixel_major(p, k) < 0)
            goto done;
    if (copy_forks(p) || candidates(p, &T))
        goto done;
    rc = 0;
    if (T.n == 0)
        goto done;
    /* the trace, on zero inputs (the kernels are data-independent) */
    watch = calloc((size_t)p->n_bufs + 1, 1);
    inputs = zero_inputs(p);
    rc = -1;
    if (!watch || !inputs)
        goto done;
    for (int s = 0; s < T.n; s++)
        watch[T.buf[s]] = 1;
    UtilDiag d;
    util_diag_init(&d);
    if (tgt_fpga_eval_trace(p, inputs, watch, on_access, &T, &d) || T.oom) {
        rc = 0;                                /* arrays (the design reports an evaluation error itself) */
        goto done;
    }
    if (fifos(p, &T, &F))
        goto done;
    int dr = F.n ? fifo_depths(&F) : 1;
    if (dr < 0)
        goto done;
    rc = 0;
    if (dr) {
        for (int b = 0; b < p->n_bufs; b++)
            p->bufs[b].stream_lanes = 0;
        goto done;
    }
    for (int i = 0; i < F.n; i++)
        p->bufs[F.buf[i]].stream = F.depth[i];
    if (strip_indices(p, &T)) {
        rc = -1;
        goto done;
    }
    if (out) {
        *out = F;
        memset(&F, 0, sizeof F);
    }
done:
    free_inputs(p, inputs);
    free(watch);
    free(indep);
    free(bad);
    trace_free(&T, K);
    tgt_fpga_fifos_free(&F);
    return rc;
}

/* ------------------------------------------------------- overlapped latency
 *
 * With streams the layers of one inference overlap.  The estimate replays
 * the streamed program's accesses element by element: kernel k spends
 * cycles[k] / (its stream accesses) cycles per access, a read waits for the
 * write of its element, a write for the read that frees its slot (depth
 * elements earlier), and a kernel reading a ping-pong array starts once its
 * producer has finished.  The makespan is the design's latency. */

typedef struct Timed {
    const LoopProgram *p;
    int *fifo_of;            /* per root buffer: its first FIFO id, -1 */
    int n_fifos;
    int **ev;                /* per kernel: FIFO id * 2 + write, in order */
    int64_t *n_ev, *cap_ev;
    int oom;
} Timed;

static void on_timed(void *ctx, int k, int b, int64_t x, int store, const void *at, const int64_t *vars)
{
    (void)at;
    (void)vars;
    Timed *T = ctx;
    const LoopBuf *bf = &T->p->bufs[b];
    if (T->oom || T->fifo_of[b] < 0)
        return;
    int64_t L = bf->stream_lanes > 1 ? bf->stream_lanes : 1, lane = L > 1 ? x / (ir_shape_numel(&bf->shape) / L) : 0;
    if (T->n_ev[k] == T->cap_ev[k]) {
        int64_t nc = T->cap_ev[k] ? 2 * T->cap_ev[k] : 256;
        int *q = realloc(T->ev[k], (size_t)nc * sizeof *q);
        if (!q || nc > MAX_RUNS) {
            T->oom = 1;
            return;
        }
        T->ev[k] = q;
        T->cap_ev[k] = nc;
    }
    T->ev[k][T->n_ev[k]++] = (T->fifo_of[b] + (int)lane) * 2 + store;
}

int64_t tgt_fpga_stream_latency(const LoopProgram *p, const int64_t *cycles)
{
    int K = p->n_kernels, nb = p->n_bufs;
    int64_t result = -1;
    Timed T = { .p = p };
    T.fifo_of = malloc(((size_t)nb + 1) * sizeof *T.fifo_of);
    T.ev = calloc((size_t)K + 1, sizeof *T.ev);
    T.n_ev = calloc((size_t)K + 1, sizeof *T.n_ev);
    T.cap_ev = calloc((size_t)K + 1, sizeof *T.cap_ev);
    unsigned char *watch = calloc((size_t)nb + 1, 1), *u = uses_of(p), *pipo = calloc((size_t)K * K + 1, 1);
    IrArray *inputs = zero_inputs(p);
    double **wt = NULL, **rt = NULL, *clock = NULL, *start = NULL;
    int64_t *wn = NULL, *rn = NULL, *depth = NULL, *at = NULL, *cap = NULL;
    int *done = NULL;
    if (!T.fifo_of || !T.ev || !T.n_ev || !T.cap_ev || !watch || !u || !pipo || !inputs)
        goto out;
    for (int b = 0; b < nb; b++) {
        T.fifo_of[b] = -1;
        if (p->bufs[b].stream && p->bufs[b].alias_of < 0) {
            T.fifo_of[b] = T.n_fifos;
            T.n_fifos += p->bufs[b].stream_lanes > 1 ? p->bufs[b].stream_lanes : 1;
            watch[b] = 1;
        }
    }
    if (T.n_fifos == 0)
        goto out;
    pipo_deps(p, u, watch, pipo);                /* watch[b]: b is a stream */
    UtilDiag d;
    util_diag_init(&d);
    if (tgt_fpga_eval_trace(p, inputs, watch, on_timed, &T, &d) || T.oom)
        goto out;
    size_t nf = (size_t)T.n_fifos + 1;
    wt = calloc(nf, sizeof *wt), rt = calloc(nf, sizeof *rt), wn = calloc(nf, sizeof *wn), rn = calloc(nf, sizeof *rn);
    depth = calloc(nf, sizeof *depth), cap = calloc(nf, sizeof *cap);
    at = calloc((size_t)K + 1, sizeof *at), clock = calloc((size_t)K + 1, sizeof *clock);
    start = calloc((size_t)K + 1, sizeof *start);
    done = calloc((size_t)K + 1, sizeof *done);
    if (!wt || !rt || !wn || !rn || !depth || !cap || !at || !clock || !start || !done)
        goto out;
    for (int b = 0; b < nb; b++)
        for (int l = 0; T.fifo_of[b] >= 0 && l < (p->bufs[b].stream_lanes > 1 ? p->bufs[b].stream_lanes : 1); l++)
            depth[T.fifo_of[b] + l] = p->bufs[b].stream;
    for (int k = 0; k < K; k++)
        for (int64_t i = 0; i < T.n_ev[k]; i++)
            cap[T.ev[k][i] / 2] += T.ev[k][i] & 1;
    for (size_t f = 0; f + 1 < nf; f++)
        if (!(wt[f] = malloc(((size_t)cap[f] + 1) * sizeof **wt)) || !(rt[f] = malloc(((size_t)cap[f] + 1) * sizeof **rt)))
            goto out;
    int left = K;
    for (int progress = 1; progress && left;) {
        progress = 0;
        for (int k = 0; k < K; k++) {
            if (done[k])
                continue;
            if (!done[k] && at[k] == 0 && start[k] == 0) {   /* not started: its ping-pong inputs first */
                double t0 = 1;
                int ready = 1;
                for (int j = 0; j < K && ready; j++)
                    if (pipo[(size_t)j * K + k]) {
                        ready = done[j];
                        t0 = ready && clock[j] > t0 ? clock[j] : t0;
                    }
                if (!ready)
                    continue;
                start[k] = clock[k] = t0;
            }
            double dt = T.n_ev[k] ? (double)cycles[k] / (double)T.n_ev[k] : 0;
            while (at[k] < T.n_ev[k]) {
                int e = T.ev[k][at[k]], f = e / 2;
                double t = clock[k] + dt;
                if (e & 1) {                          /* write: a free slot */
                    if (wn[f] >= depth[f]) {
                        if (rn[f] <= wn[f] - depth[f])
                            break;
                        double freed = rt[f][wn[f] - depth[f]] + 1;
                        t = freed > t ? freed : t;
                    }
                    wt[f][wn[f]++] = t;
                } else {                              /* read: its element written */
                    if (rn[f] >= wn[f])
                        break;
                    double ready = wt[f][rn[f]] + 1;
                    t = ready > t ? ready : t;
                    rt[f][rn[f]++] = t;
                }
                clock[k] = t;
                at[k]++;
                progress = 1;
            }
            if (at[k] == T.n_ev[k]) {         /* no sooner than the kernel alone */
                double fin = start[k] + (double)cycles[k];
                clock[k] = fin > clock[k] ? fin : clock[k];
                done[k] = 1;
                left--;
                progress = 1;
            }
        }
    }
    if (left == 0) {
        double mx = 0;
        for (int k = 0; k < K; k++)
            mx = clock[k] > mx ? clock[k] : mx;
        result = (int64_t)ceil(mx);
    }
out:
    for (int k = 0; T.ev && k < K; k++)
        free(T.ev[k]);
    for (size_t f = 0; wt && rt && f < (size_t)T.n_fifos; f++) {
        free(wt[f]);
        free(rt[f]);
    }
    free_inputs(p, inputs);
    free(T.fifo_of);
    free(T.ev);
    free(T.n_ev);
    free(T.cap_ev);
    free(watch);
    free(u);
    free(pipo);
    free(wt);
    free(rt);
    free(wn);
    free(rn);
    free(depth);
    free(cap);
    free(at);
    free(clock);
    free(start);
    free(done);
    return result;
}
