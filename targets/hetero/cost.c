/* targets/hetero/cost.c — the cost model (docs/targets/hetero.md "Cost
 * model") and the partitioner's driver: the CPU target's loop program
 * grouped into tasks, each task's time on each device (CPU and GPU: a
 * roofline over its kernels' flops and bytes; FPGA: the FPGA target's own
 * estimate of the same nodes), the data that crosses between tasks, then
 * the MIP (solve.c) and the plan. */
#include "targets/hetero/hetero_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A task being built: kernels [k0, k0 + nk), nodes [lo, hi). */
typedef struct Span {
    int k0, nk, lo, hi;
} Span;

/* Tasks from the CPU program: consecutive kernels whose nodes overlap (a
 * node's helper kernels: halo fills, packed copies) form one task. */
static int cpu_tasks(const LoopProgram *p, Span *sp)
{
    int n = 0;
    for (int k = 0; k < p->n_kernels; k++) {
        const LoopKernel *kn = &p->kernels[k];
        int lo = kn->first_node, hi = kn->first_node + (kn->n_nodes > 0 ? kn->n_nodes : 1);
        if (n > 0 && (lo < 0 || (lo < sp[n - 1].hi && hi > sp[n - 1].lo))) {
            sp[n - 1].nk++;
            if (lo >= 0) {
                sp[n - 1].lo = lo < sp[n - 1].lo ? lo : sp[n - 1].lo;
                sp[n - 1].hi = hi > sp[n - 1].hi ? hi : sp[n - 1].hi;
            }
            continue;
        }
        sp[n++] = (Span){ k, 1, lo, lo < 0 ? lo : hi };
    }
    return n;
}

/* The task holding node i, else (next) the first task after it; -1: none. */
static int task_at(const Span *sp, int n, int node, int next)
{
    for (int t = 0; t < n; t++)
        if (sp[t].hi > node)
            return next || sp[t].lo <= node ? t : -1;
    return -1;
}

/* Merges tasks that one FPGA kernel computes together (a ReLU folded into
 * the layer before it): consecutive tasks, so the order stays topological. */
static int fpga_merge(Span *sp, int n, const TgtFpgaKernelCost *fk, int nfk)
{
    for (int i = 0; i < nfk; i++) {
        if (fk[i].first_node < 0 || fk[i].n_nodes < 2)
            continue;
        int a = task_at(sp, n, fk[i].first_node, 0), b = task_at(sp, n, fk[i].first_node + fk[i].n_nodes - 1, 0);
        if (a < 0 || b <= a)
            continue;
        for (int t = a + 1; t <= b; t++) {
            sp[a].nk += sp[t].nk;
            sp[a].hi = sp[t].hi > sp[a].hi ? sp[t].hi : sp[a].hi;
        }
        memmove(&sp[a + 1], &sp[b + 1], (size_t)(n - b - 1) * sizeof *sp);
        n -= b - a;
    }
    return n;
}

/* Bytes kernel k moves: the buffers it touches; a data-movement kernel
 * (halo fill, copy) at most 8 per element it stores (read and written, 4
 * bytes each: a halo fill touches a few bytes of a large buffer).  -1 out
 * of memory. */
static int64_t kernel_bytes(const LoopProgram *p, const LoopKernel *k)
{
    int64_t b = loop_kernel_bytes(p, k);
    if (b >= 0 && k->moves && b > 8 * k->flops)
        b = 8 * k->flops;
    return b;
}

static double roofline(const TgtDevice *dv, const LoopProgram *p, const Span *s, int *oom)
{
    double t = 0;
    for (int k = s->k0; k < s->k0 + s->nk; k++) {
        int64_t bytes = kernel_bytes(p, &p->kernels[k]);
        *oom |= bytes < 0;
        double c = (double)p->kernels[k].flops / (dv->peak_gflops * 1e9), m = (double)bytes / (dv->bandwidth_gbs * 1e9);
        t += (c > m ? c : m) + dv->launch_us * 1e-6;
    }
    return t;
}

/* One access of a task to a buffer, for the items. */
typedef struct Acc {
    int root, task, buf, store;
} Acc;

typedef struct Walk {
    const LoopProgram *p;
    Acc *acc;
    size_t n, cap;
    int task, oom;
} Walk;

static int root_of(const LoopProgram *p, int b)
{
    while (p->bufs[b].alias_of >= 0)
        b = p->bufs[b].alias_of;
    return b;
}

static void access_fn(void *ctx, int buf, int store)
{
    Walk *w = ctx;
    int r = root_of(w->p, buf);
    LoopStorage st = w->p->bufs[r].storage;
    if (st == LOOP_ST_CONST || st == LOOP_ST_LOCAL || w->oom)
        return;                                              /* weights stay on every device; scratch is private */
    if (w->n == w->cap) {
        size_t cap = 2 * w->cap + 64;
        Acc *a = realloc(w->acc, cap * sizeof *a);
        if (!a) {
            w->oom = 1;
            return;
        }
        w->acc = a;
        w->cap = cap;
    }
    w->acc[w->n++] = (Acc){ r, w->task, buf, store };
}

static int acc_cmp(const void *x, const void *y)
{
    const Acc *a = x, *b = y;
    if (a->root != b->root)
        return a->root < b->root ? -1 : 1;
    if (a->task != b->task)
        return a->task < b->task ? -1 : 1;
    if (a->store != b->store)
        return a->store < b->store ? -1 : 1;
    return a->buf < b->buf ? -1 : a->buf > b->buf;
}

/* Items: for each root buffer, what each writing task (or the host, for a
 * graph input) produces in it and which later tasks read it.  Several
 * writers (slices of a Concat computed in place) give an item each, of the
 * bytes of the views they store to.  item_buf[i]: item i's root buffer.
 * -1 out of memory. */
static int build_items(const LoopProgram *p, const Span *sp, int n, TgtHtProblem *pb, int **item_buf)
{
    Walk w = { .p = p };
    for (int t = 0; t < n; t++) {
        w.task = t;
        for (int k = sp[t].k0; k < sp[t].k0 + sp[t].nk; k++)
            loop_stmt_buffers(p->kernels[k].body, access_fn, &w);
    }
    size_t cap = 16;
    pb->items = calloc(cap, sizeof *pb->items);
    *item_buf = malloc(cap * sizeof **item_buf);
    int *readers = malloc(((size_t)n + 1) * sizeof *readers), rc = -1;
    unsigned char *io = calloc((size_t)p->n_bufs + 1, 1);   /* per root: 1 a graph input, 2 an output (views too) */
    if (w.oom || !pb->items || !*item_buf || !readers || !io)
        goto done;
    qsort(w.acc, w.n, sizeof *w.acc, acc_cmp);
    for (int b = 0; b < p->n_bufs; b++)
        io[root_of(p, b)] |= (p->bufs[b].storage == LOOP_ST_INPUT) | (p->bufs[b].storage == LOOP_ST_OUTPUT) << 1;
    for (size_t i = 0; i < w.n;) {
        size_t j = i;
        int R = w.acc[i].root, nr = 0;
        while (j < w.n && w.acc[j].root == R)
            j++;
        for (size_t k = i; k < j; k++)                       /* readers, each task once */
            if (!w.acc[k].store && (nr == 0 || readers[nr - 1] != w.acc[k].task))
                readers[nr++] = w.acc[k].task;
        for (size_t k = i; k <= j; k++) {
            int src;                                         /* each writer once, then the host's input */
            double bytes = 0;
            if (k < j) {
                if (!w.acc[k].store || (k > i && w.acc[k - 1].store && w.acc[k - 1].task == w.acc[k].task))
                    continue;
                src = w.acc[k].task;
                for (size_t q = k; q < j && w.acc[q].task == src && w.acc[q].store; q++)
                    if (q == k || w.acc[q].buf != w.acc[q - 1].buf)
                        bytes += (double)p->bufs[w.acc[q].buf].bytes;
                if (bytes > (double)p->bufs[R].bytes)
                    bytes = (double)p->bufs[R].bytes;
            } else {
                if (!(io[R] & 1))
                    break;
                src = -1;
                bytes = (double)p->bufs[R].bytes;
            }
            if ((size_t)pb->n_items == cap) {
                cap *= 2;
                TgtHtItem *it = realloc(pb->items, cap * sizeof *it);
                if (it)
                    pb->items = it;
                int *ib = it ? realloc(*item_buf, cap * sizeof *ib) : NULL;
                if (!ib)
                    goto done;
                *item_buf = ib;
            }
            TgtHtItem *it = &pb->items[pb->n_items];
            *it = (TgtHtItem){ .src = src, .bytes = bytes, .to_host = src >= 0 && (io[R] & 2),
                               .cons = malloc(((size_t)nr + 1) * sizeof *it->cons) };
            if (!it->cons)
                goto done;
            for (int q = 0; q < nr; q++)
                if (readers[q] > src)
                    it->cons[it->n_cons++] = readers[q];
            (*item_buf)[pb->n_items++] = R;
        }
        i = j;
    }
    rc = 0;
done:
    free(readers);
    free(io);
    free(w.acc);
    return rc;
}

/* ------------------------------------------------------------- the plan */

static void add_note(TgtHeteroPlan *pl, char *buf, size_t n, const char *text)
{
    size_t len = strlen(buf);
    snprintf(buf + len, n - len, "%s%s", len ? "; " : "", text);
    pl->note = buf;
}

static int make_plan(const TgtHtProblem *pb, const TgtHtResult *r, const Span *sp, const int *item_buf,
                     TgtHeteroPlan *pl)
{
    int n = pb->n_tasks, m = pb->n_devs;
    UtilArena *A = &pl->arena;
    pl->tasks = util_arena_array(A, (size_t)n + 1, sizeof *pl->tasks);
    pl->device_busy_s = util_arena_array(A, (size_t)m, sizeof *pl->device_busy_s);
    pl->link_busy_s = util_arena_array(A, (size_t)pl->n_links + 1, sizeof *pl->link_busy_s);
    double *start = util_arena_array(A, (size_t)n + 1, sizeof *start);
    if (!pl->tasks || !pl->device_busy_s || !pl->link_busy_s || !start)
        return -1;
    pl->n_tasks = n;
    if (pl->objective == TGT_HETERO_LATENCY)
        tgt_ht_makespan(pb, r->assign, r->order, start);
    tgt_ht_bottleneck(pb, r->assign, pl->device_busy_s, pl->link_busy_s);
    pl->value_s = r->value;
    pl->status = r->status;
    pl->solve_s = r->seconds;
    pl->gap = r->gap;
    pl->rows = r->rows;
    pl->cols = r->cols;
    pl->integers = r->integers;
    for (int t = 0; t < n; t++) {
        TgtHeteroTask *tk = &pl->tasks[t];
        tk->first_kernel = sp[t].k0;
        tk->n_kernels = sp[t].nk;
        tk->first_node = sp[t].lo;
        tk->n_nodes = sp[t].lo >= 0 ? sp[t].hi - sp[t].lo : 0;
        tk->device = r->assign[t];
        tk->start_s = pl->objective == TGT_HETERO_LATENCY ? start[t] : -1;
        tk->time_s = pb->cost[(size_t)t * m + tk->device];
        tk->option_s = util_arena_array(A, (size_t)m, sizeof *tk->option_s);
        if (!tk->option_s)
            return -1;
        memcpy(tk->option_s, &pb->cost[(size_t)t * m], (size_t)m * sizeof *tk->option_s);
        for (int i = tk->first_node; i >= 0 && i < tk->first_node + tk->n_nodes && i < pl->n_nodes; i++)
            pl->node_task[i] = t;
    }
    size_t cap = 16;
    pl->transfers = malloc(cap * sizeof *pl->transfers);
    if (!pl->transfers)
        return -1;
    for (int v = 0; v < pb->n_items; v++) {
        const TgtHtItem *it = &pb->items[v];
        int a = it->src < 0 ? pb->host : r->assign[it->src];
        for (int b = 0; b < m; b++) {
            int first = -1;
            for (int c = 0; c < it->n_cons && first < 0; c++)
                if (r->assign[it->cons[c]] == b)
                    first = it->cons[c];
            if (b == a || (first < 0 && !(it->to_host && b == pb->host)))
                continue;
            if ((size_t)pl->n_transfers == cap) {
                cap *= 2;
                TgtHeteroTransfer *x = realloc(pl->transfers, cap * sizeof *x);
                if (!x)
                    return -1;
                pl->transfers = x;
            }
            const LoopBuf *bf = &pl->program->bufs[item_buf[v]];
            pl->transfers[pl->n_transfers++] = (TgtHeteroTransfer){
                .buf = item_buf[v], .tensor = bf->tensor, .from_task = it->src, .to_task = first,
                .from_device = a, .to_device = b, .bytes = (int64_t)it->bytes,
                .time_s = tgt_ht_xfer(pb, it->bytes, a, b) };
        }
    }
    return 0;
}

void tgt_hetero_plan_free(TgtHeteroPlan *p)
{
    if (!p)
        return;
    if (p->program)
        loop_program_free(p->program);
    free(p->transfers);
    util_arena_free(&p->arena);
    free(p);
}

/* The FPGA's time for each task: the cycles of the FPGA kernels of its
 * nodes at the device's clock, plus one launch; < 0 where the HLS C
 * generator refuses one of them. */
static void fpga_costs(const TgtDevice *dv, const Span *sp, int n, const TgtFpgaKernelCost *fk, int nfk,
                       double *cost, int m, int d)
{
    for (int t = 0; t < n; t++)
        cost[(size_t)t * m + d] = dv->launch_us * 1e-6;
    for (int i = 0; i < nfk; i++) {
        if (fk[i].first_node < 0)
            continue;                                        /* an input's staging copy: the transfer's part */
        int t = task_at(sp, n, fk[i].first_node, 1);        /* a node no CPU kernel computes: the next task */
        if (t < 0)
            t = n - 1;
        if (t < 0)
            continue;                                        /* no task at all */
        double *c = &cost[(size_t)t * m + d];
        if (!fk[i].ok)
            *c = -1;
        else if (*c >= 0)
            *c += (double)fk[i].latency_cycles / (dv->clock_mhz * 1e6);
    }
}

/* The plan's devices (ids[0..m) of the file, copied into its arena) and
 * the links between them, for the plan and the problem.  -1 out of memory. */
static int plan_devices(TgtHeteroPlan *pl, const TgtDeviceFile *f, const int *ids, int m, int host, TgtHtProblem *pb)
{
    pl->n_devices = m;
    pl->devices = util_arena_array(&pl->arena, (size_t)m, sizeof *pl->devices);
    pl->links = util_arena_array(&pl->arena, (size_t)f->n_links + 1, sizeof *pl->links);
    pb->links = calloc((size_t)f->n_links + 1, sizeof *pb->links);
    if (!pl->devices || !pl->links || !pb->links)
        return -1;
    for (int i = 0; i < m; i++) {
        TgtDevice *dv = &pl->devices[i];
        *dv = f->devices[ids[i]];                            /* strings into the plan's arena */
        dv->name = util_arena_strdup(&pl->arena, dv->name);
        dv->part = dv->part ? util_arena_strdup(&pl->arena, dv->part) : NULL;
        dv->note = dv->note ? util_arena_strdup(&pl->arena, dv->note) : NULL;
        if (!dv->name || (f->devices[ids[i]].part && !dv->part) || (f->devices[ids[i]].note && !dv->note))
            return -1;
        if (ids[i] == host)
            pl->host = i;
    }
    for (int l = 0; l < f->n_links; l++) {
        int a = -1, b = -1;
        for (int i = 0; i < m; i++) {
            a = ids[i] == f->links[l].from ? i : a;
            b = ids[i] == f->links[l].to ? i : b;
        }
        if (a < 0 || b < 0)
            continue;                                        /* a link of devices not in the plan */
        TgtLink *L = &pl->links[pl->n_links];
        *L = f->links[l];
        L->from = a;
        L->to = b;
        L->note = L->note ? util_arena_strdup(&pl->arena, L->note) : NULL;
        pb->links[pl->n_links++] = (TgtHtLink){ a, b, L->bandwidth_gbs * 1e9, L->latency_us * 1e-6 };
    }
    pb->n_links = pl->n_links;
    return 0;
}

int tgt_hetero_partition(const IrGraph *g, const TgtHeteroOptions *o, TgtHeteroPlan **out, UtilDiag *d)
{
    *out = NULL;
    TgtDeviceFile f;
    int ids[TGT_HT_MAX_DEVICES], n_ids = 0, host = -1, rc = -1;
    TgtHtProblem pb;
    memset(&pb, 0, sizeof pb);
    TgtFpgaKernelCost *fk = NULL;
    int nfk = 0, *item_buf = NULL;
    Span *sp = NULL;
    TgtHtResult res = { 0 };
    char *note = NULL;
    TgtHeteroPlan *pl = calloc(1, sizeof *pl);
    if (!pl)
        return util_error(d, util_loc_file(g->file), "out of memory");
    util_arena_init(&pl->arena);
    if (tgt_hetero_load_devices(o->device_file, &f, d) ||
        tgt_hetero_pick_devices(&f, o->devices, ids, TGT_HT_MAX_DEVICES - 1, &n_ids, &host, d))
        goto done;
    note = util_arena_alloc(&pl->arena, 512);
    if (!note)
        goto oom;
    int host_only = 1;
    for (int i = 0; i < n_ids; i++)
        host_only &= ids[i] != host;
    if (host_only) {
        char t[160];
        snprintf(t, sizeof t, "the host '%s' holds the inputs and outputs and runs no task", f.devices[host].name);
        add_note(pl, note, 512, t);
        ids[n_ids++] = host;
    }
    int m = n_ids;
    if (plan_devices(pl, &f, ids, m, host, &pb))
        goto oom;

    TgtOptions to = { .name = "partition", .opt_level = o->opt_level,
                    .fpga_io_parallel = 1 };     /* as the FPGA partitions are compiled (compile.c) */
    pl->program = tgt_cpu_program(g, &to, 0, d);
    if (!pl->program)
        goto done;
    const LoopProgram *p = pl->program;
    pl->objective = o->objective;
    pl->n_nodes = g->n_nodes;
    pl->node_task = util_arena_array(&pl->arena, (size_t)g->n_nodes + 1, sizeof *pl->node_task);
    sp = calloc((size_t)p->n_kernels + 1, sizeof *sp);
    if (!pl->node_task || !sp)
        goto oom;
    for (int i = 0; i < g->n_nodes; i++)
        pl->node_task[i] = -1;
    int has_fpga = 0;
    for (int i = 0; i < m; i++)
        has_fpga |= pl->devices[i].kind == TGT_DEV_FPGA && i != pl->host;
    int fpga_failed = 0;
    if (has_fpga) {
        UtilDiag fd;
        util_diag_init(&fd);
        if (tgt_fpga_estimate(g, &to, &fk, &nfk, &fd)) {
            char t[UTIL_DIAG_MSG + 64];
            snprintf(t, sizeof t, "no task runs on the FPGA: its pipeline failed (%s)", fd.msg);
            add_note(pl, note, 512, t);
            fpga_failed = 1;
        }
    }
    int n = cpu_tasks(p, sp);
    n = fpga_merge(sp, n, fk, nfk);

    pb.n_tasks = n;
    pb.n_devs = m;
    pb.host = pl->host;
    pb.cost = malloc(((size_t)n * m + 1) * sizeof *pb.cost);
    if (!pb.cost)
        goto oom;
    int oom = 0;
    for (int dv = 0; dv < m; dv++) {
        const TgtDevice *D = &pl->devices[dv];
        if (D->kind == TGT_DEV_FPGA && !fpga_failed && dv != pl->host) {
            fpga_costs(D, sp, n, fk, nfk, pb.cost, m, dv);
            continue;
        }
        for (int t = 0; t < n; t++)
            pb.cost[(size_t)t * m + dv] = D->kind == TGT_DEV_FPGA || (host_only && dv == pl->host)
                                              ? -1 : roofline(D, p, &sp[t], &oom);
    }
    if (oom || build_items(p, sp, n, &pb, &item_buf))
        goto oom;
    for (int t = 0; t < n; t++) {
        int any = 0;
        for (int dv = 0; dv < m; dv++)
            any |= pb.cost[(size_t)t * m + dv] >= 0;
        if (!any) {
            util_error(d, util_loc_file(g->file), "kernel '%s' (node '%s') can run on none of the devices given "
                       "(the FPGA target refuses it)", p->kernels[sp[t].k0].name,
                       sp[t].lo >= 0 ? g->nodes[sp[t].lo].name : "");
            goto done;
        }
    }
    int bad_a = -1, bad_b = -1;
    int pr = tgt_ht_prepare(&pb, &bad_a, &bad_b);
    if (pr == -2) {
        util_error(d, util_loc_file(f.path), "no link from '%s' to '%s'%s%s%s, which this plan may need",
                   pl->devices[bad_a].name, pl->devices[bad_b].name,
                   bad_a != pl->host && bad_b != pl->host ? " (nor through the host '" : "",
                   bad_a != pl->host && bad_b != pl->host ? pl->devices[pl->host].name : "",
                   bad_a != pl->host && bad_b != pl->host ? "')" : "");
        goto done;
    }
    res.assign = malloc(((size_t)n + 1) * sizeof *res.assign);
    res.order = malloc(((size_t)n + 1) * sizeof *res.order);
    if (pr || !res.assign || !res.order)
        goto oom;
    if (tgt_ht_solve(&pb, o->objective, o->time_limit_s, &res, d))
        goto done;
    if (res.status == TGT_HETERO_GREEDY && res.cols == 0 && n > 0) {
        char t[160];
        snprintf(t, sizeof t, "the MIP would have %d rows, more than the partitioner builds: greedy plan", res.rows);
        add_note(pl, note, 512, t);
    }
    if (make_plan(&pb, &res, sp, item_buf, pl))
        goto oom;
    rc = 0;
    goto done;
oom:
    util_error(d, util_loc_file(g->file), "out of memory");
done:
    tgt_hetero_devices_free(&f);
    tgt_ht_free(&pb);
    free(fk);
    free(sp);
    free(item_buf);
    free(res.assign);
    free(res.order);
    if (rc)
        tgt_hetero_plan_free(pl);
    else
        *out = pl;
    return rc;
}
