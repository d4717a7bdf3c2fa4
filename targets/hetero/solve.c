/* targets/hetero/solve.c — the assignment as a mixed-integer program solved
 * by GLPK (docs/targets/hetero.md "The MIP" writes out the variables and
 * constraints this file builds).  Times in the MIP are in microseconds.
 *
 * latency:    x[t,d] binary, s[t] start, C makespan; z[e,a,b] >= x[p,a] +
 *             x[r,b] - 1 marks an edge's transfer; precedence with transfer
 *             delays; for every pair of tasks no path orders, o[t,u] binary
 *             and two big-M disjunctions per device both may run on; C >=
 *             finish + outputs' transfers.  min C.
 * throughput: x[t,d] binary, T bottleneck; y[v,a,b] >= x[src,a] + x[r,b] - 1
 *             marks item v crossing from a to b; T >= each device's busy
 *             time and each link's transfer time.  min T.
 *
 * The greedy plan (model.c) is GLPK's first incumbent (glp_ios_heur_sol)
 * and the horizon H of the big-M constraints; when the time limit stops
 * GLPK, its best integer solution is the plan, or the greedy one when it
 * found nothing better — the plan's status says which. */
#include "targets/hetero/hetero_impl.h"

#include <glpk.h>
#include <float.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define US 1e6                        /* seconds → the MIP's microseconds */
#define MAX_ROWS 200000               /* a bigger MIP is not built: the greedy plan (the note says so) */

typedef struct Mip {
    const TgtHtProblem *pb;
    glp_prob *P;
    int *x;                           /* [t * n_devs + d]: column of x[t,d], 0 where t cannot run on d */
    int *s;                           /* latency: column of s[t] */
    double *inc;                      /* [col]: the greedy plan's value of each column (1-based) */
    int n_inc, cap_inc;
    int *ind;                         /* the row being built (1-based, as GLPK wants) */
    double *val;
    int n, cap;
    int oom;
} Mip;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A new column: kind GLP_CV or GLP_BV, bounds [lo, hi], its value in the
 * greedy plan. */
static int col(Mip *M, int kind, double lo, double hi, double inc)
{
    if (M->oom)
        return 0;
    int j = glp_add_cols(M->P, 1);
    glp_set_col_kind(M->P, j, kind);
    if (kind == GLP_CV)
        glp_set_col_bnds(M->P, j, lo < hi ? GLP_DB : GLP_FX, lo, hi);
    if (j >= M->cap_inc) {
        int cap = 2 * j + 16;
        double *p = realloc(M->inc, (size_t)cap * sizeof *p);
        if (!p) {
            M->oom = 1;
            return j;
        }
        M->inc = p;
        M->cap_inc = cap;
    }
    M->inc[j] = inc;
    M->n_inc = j;
    return j;
}

static void term(Mip *M, int j, double v)
{
    if (!j || v == 0 || M->oom)
        return;
    for (int i = 1; i <= M->n; i++)
        if (M->ind[i] == j) {                                /* GLPK refuses a column twice in a row */
            M->val[i] += v;
            return;
        }
    if (M->n + 2 > M->cap) {
        int cap = 2 * M->cap + 16;
        int *ind = realloc(M->ind, (size_t)cap * sizeof *ind);
        if (ind)
            M->ind = ind;
        double *val = ind ? realloc(M->val, (size_t)cap * sizeof *val) : NULL;
        if (!val) {
            M->oom = 1;
            return;
        }
        M->val = val;
        M->cap = cap;
    }
    M->n++;
    M->ind[M->n] = j;
    M->val[M->n] = v;
}

/* Adds the row built with term(): sum >= lo (eq: == lo); starts the next. */
static void row(Mip *M, double lo, int eq)
{
    if (!M->oom) {
        int i = glp_add_rows(M->P, 1);
        glp_set_row_bnds(M->P, i, eq ? GLP_FX : GLP_LO, lo, lo);
        glp_set_mat_row(M->P, i, M->n, M->ind, M->val);
    }
    M->n = 0;
}

static int xcol(const Mip *M, int t, int d)
{
    return M->x[(size_t)t * M->pb->n_devs + d];
}

/* x[t,d] and sum_d x[t,d] = 1. */
static void assignment(Mip *M, const int *g_assign)
{
    const TgtHtProblem *pb = M->pb;
    for (int t = 0; t < pb->n_tasks; t++) {
        for (int d = 0; d < pb->n_devs; d++)
            if (pb->cost[(size_t)t * pb->n_devs + d] >= 0)
                M->x[(size_t)t * pb->n_devs + d] = col(M, GLP_BV, 0, 1, g_assign[t] == d);
        for (int d = 0; d < pb->n_devs; d++)
            term(M, xcol(M, t, d), 1);
        row(M, 1, 1);
    }
}

/* term()s of task t's time on its device, times `sign`. */
static void task_time(Mip *M, int t, double sign, const double *extra)
{
    const TgtHtProblem *pb = M->pb;
    for (int d = 0; d < pb->n_devs; d++) {
        size_t k = (size_t)t * pb->n_devs + d;
        if (pb->cost[k] >= 0)
            term(M, xcol(M, t, d), sign * US * (pb->cost[k] + (extra ? extra[k] : 0)));
    }
}

static int pairs_and_rows(const TgtHtProblem *pb, long *n_rows)
{
    int m = pb->n_devs, n = pb->n_tasks;
    long rows = n + (long)pb->n_edges * (1 + m * m) + 2L * n;
    for (int t = 0; t < n; t++)
        for (int u = t + 1; u < n; u++)
            if (!pb->reach[(size_t)t * n + u])
                for (int d = 0; d < m; d++)
                    rows += 2 * (pb->cost[(size_t)t * m + d] >= 0 && pb->cost[(size_t)u * m + d] >= 0);
    *n_rows = rows;
    return rows <= MAX_ROWS;
}

static void latency_mip(Mip *M, const int *ga, const int *gorder, const double *gstart, double H)
{
    const TgtHtProblem *pb = M->pb;
    int m = pb->n_devs, n = pb->n_tasks;
    size_t mm = (size_t)m * m;
    int *pos = malloc(((size_t)n + 1) * sizeof *pos);
    if (!pos) {
        M->oom = 1;
        return;
    }
    for (int i = 0; i < n; i++)
        pos[gorder[i]] = i;
    assignment(M, ga);
    double span = 0;
    for (int t = 0; t < n; t++) {
        double f = gstart[t] + pb->cost[(size_t)t * m + ga[t]] + pb->out_delay[(size_t)t * m + ga[t]];
        span = f > span ? f : span;
    }
    int C = col(M, GLP_CV, 0, H, US * span);
    glp_set_obj_coef(M->P, C, 1);
    for (int t = 0; t < n; t++)
        M->s[t] = col(M, GLP_CV, 0, H, US * gstart[t]);
    for (int t = 0; t < n; t++) {
        term(M, C, 1);                                       /* C >= s[t] + time + outputs' transfers */
        term(M, M->s[t], -1);
        task_time(M, t, -1, pb->out_delay);
        row(M, 0, 0);
        term(M, M->s[t], 1);                                 /* s[t] >= the graph inputs' transfers */
        for (int d = 0; d < m; d++)
            term(M, xcol(M, t, d), -US * pb->in_delay[(size_t)t * m + d]);
        row(M, 0, 0);
    }
    for (int d = 0; d < m; d++) {                            /* C >= the device's tasks, one after another: */
        term(M, C, 1);                                       /* implied, but it makes the LP bound tight */
        for (int t = 0; t < n; t++)
            term(M, xcol(M, t, d), -US * pb->cost[(size_t)t * m + d]);
        row(M, 0, 0);
    }
    for (int e = 0; e < pb->n_edges; e++) {                  /* s[r] >= s[p] + time[p] + transfers */
        int p = pb->edge_src[e], r = pb->edge_dst[e];
        term(M, M->s[r], 1);
        term(M, M->s[p], -1);
        task_time(M, p, -1, NULL);
        int zc[TGT_HT_MAX_DEVICES * TGT_HT_MAX_DEVICES] = { 0 };
        for (int a = 0; a < m; a++)
            for (int b = 0; b < m; b++) {
                double dl = pb->edge_delay[(size_t)e * mm + (size_t)a * m + b];
                if (a != b && dl > 0 && xcol(M, p, a) && xcol(M, r, b)) {
                    zc[a * m + b] = col(M, GLP_CV, 0, 1, ga[p] == a && ga[r] == b);
                    term(M, zc[a * m + b], -US * dl);
                }
            }
        row(M, 0, 0);
        for (int k = 0; k < m * m; k++)                     /* z[e,a,b] >= x[p,a] + x[r,b] - 1 */
            if (zc[k]) {
                term(M, zc[k], 1);
                term(M, xcol(M, p, k / m), -1);
                term(M, xcol(M, r, k % m), -1);
                row(M, -1, 0);
            }
    }
    for (int t = 0; t < n; t++)                              /* one task at a time on a device */
        for (int u = t + 1; u < n; u++) {
            if (pb->reach[(size_t)t * n + u])
                continue;                                    /* ordered by a path already */
            int o = 0;
            for (int d = 0; d < m; d++) {
                if (!xcol(M, t, d) || !xcol(M, u, d))
                    continue;
                if (!o)
                    o = col(M, GLP_BV, 0, 1, pos[t] < pos[u]);
                /* o = 1: u after t:  s[u] >= s[t] + time[t] - H (1 - o) - H (2 - x[t,d] - x[u,d]) */
                term(M, M->s[u], 1);
                term(M, M->s[t], -1);
                task_time(M, t, -1, NULL);
                term(M, o, -H);
                term(M, xcol(M, t, d), -H);
                term(M, xcol(M, u, d), -H);
                row(M, -3 * H, 0);
                /* o = 0: t after u:  s[t] >= s[u] + time[u] - H o - H (2 - x[t,d] - x[u,d]) */
                term(M, M->s[t], 1);
                term(M, M->s[u], -1);
                task_time(M, u, -1, NULL);
                term(M, o, H);
                term(M, xcol(M, t, d), -H);
                term(M, xcol(M, u, d), -H);
                row(M, -2 * H, 0);
            }
        }
    free(pos);
}

static void throughput_mip(Mip *M, const int *ga, double H)
{
    const TgtHtProblem *pb = M->pb;
    int m = pb->n_devs, n = pb->n_tasks;
    assignment(M, ga);
    double busy[TGT_HT_MAX_DEVICES];
    double worst = tgt_ht_bottleneck(pb, ga, busy, NULL);
    int T = col(M, GLP_CV, 0, H, US * worst);
    glp_set_obj_coef(M->P, T, 1);
    for (int d = 0; d < m; d++) {                            /* T >= the device's tasks */
        term(M, T, 1);
        for (int t = 0; t < n; t++)
            if (xcol(M, t, d))
                term(M, xcol(M, t, d), -US * pb->cost[(size_t)t * m + d]);
        row(M, 0, 0);
    }
    /* y[v,a,b]: item v crosses from a to b; each link's rows collect them */
    int *ycol = calloc((size_t)pb->n_items * m * m + 1, sizeof *ycol);
    if (!ycol) {
        M->oom = 1;
        return;
    }
    for (int v = 0; v < pb->n_items; v++) {
        const TgtHtItem *it = &pb->items[v];
        for (int a = 0; a < m; a++) {
            if (it->src < 0 ? a != pb->host : !xcol(M, it->src, a))
                continue;
            int ga_src = it->src < 0 ? pb->host : ga[it->src];
            for (int b = 0; b < m; b++) {
                if (a == b)
                    continue;
                int need = it->to_host && b == pb->host, g_need = need;
                for (int c = 0; c < it->n_cons; c++) {
                    need |= xcol(M, it->cons[c], b) != 0;
                    g_need |= ga[it->cons[c]] == b;
                }
                if (!need)
                    continue;
                int y = ycol[((size_t)v * m + a) * m + b] = col(M, GLP_CV, 0, 1, ga_src == a && g_need);
                for (int c = 0; c < it->n_cons; c++) {       /* y >= x[src,a] + x[r,b] - 1 */
                    if (!xcol(M, it->cons[c], b))
                        continue;
                    term(M, y, 1);
                    term(M, xcol(M, it->cons[c], b), -1);
                    if (it->src >= 0)
                        term(M, xcol(M, it->src, a), -1);
                    row(M, it->src >= 0 ? -1 : 0, 0);
                }
                if (it->to_host && b == pb->host && it->src >= 0) {   /* y >= x[src,a] */
                    term(M, y, 1);
                    term(M, xcol(M, it->src, a), -1);
                    row(M, 0, 0);
                }
            }
        }
    }
    for (int l = 0; l < pb->n_links; l++) {                  /* T >= the link's transfers */
        term(M, T, 1);
        for (int v = 0; v < pb->n_items; v++)
            for (int a = 0; a < m; a++)
                for (int b = 0; b < m; b++) {
                    int y = ycol[((size_t)v * m + a) * m + b];
                    const int *r = &pb->route[((size_t)a * m + b) * 2];
                    if (y && (r[0] == l || r[1] == l))
                        term(M, y, -US * (pb->items[v].bytes / pb->links[l].bps + pb->links[l].lat));
                }
        row(M, 0, 0);
    }
    free(ycol);
}

typedef struct Cb {
    Mip *M;
    int offered;
    double gap;
} Cb;

/* GLPK's callback: the greedy plan as the first incumbent; the gap. */
static void callback(glp_tree *T, void *info)
{
    Cb *cb = info;
    int why = glp_ios_reason(T);
    if (why == GLP_IHEUR && !cb->offered) {
        cb->offered = 1;
        glp_ios_heur_sol(T, cb->M->inc);
    }
    if (why == GLP_ISELECT || why == GLP_IBINGO) {
        double g = glp_ios_mip_gap(T);
        if (g >= 0 && g < 1e30)
            cb->gap = g;
    }
}

/* The devices' order of tasks from the MIP's start times: a topological
 * order taking, of the tasks whose edges are all satisfied, the earliest. */
static void order_by_start(const TgtHtProblem *pb, const double *s, int *order)
{
    int n = pb->n_tasks;
    unsigned char *done = calloc((size_t)n + 1, 1);
    for (int i = 0; i < n; i++) {
        int pick = -1;
        for (int t = 0; t < n && done; t++) {
            if (done[t])
                continue;
            int ready = 1;
            for (int e = pb->in_first[t]; e < pb->in_first[t + 1] && ready; e++)
                ready = done[pb->edge_src[e]];
            if (ready && (pick < 0 || s[t] < s[pick]))
                pick = t;
        }
        if (pick < 0) {                                      /* out of memory: the tasks' own order */
            for (int t = 0; t < n; t++)
                order[t] = t;
            break;
        }
        order[i] = pick;
        done[pick] = 1;
    }
    free(done);
}

static double evaluate(const TgtHtProblem *pb, TgtHeteroObjective obj, const int *assign, const int *order)
{
    return obj == TGT_HETERO_LATENCY ? tgt_ht_makespan(pb, assign, order, NULL)
                                     : tgt_ht_bottleneck(pb, assign, NULL, NULL);
}

int tgt_ht_solve(const TgtHtProblem *pb, TgtHeteroObjective obj, double time_limit_s, TgtHtResult *r,
                 UtilDiag *d)
{
    int n = pb->n_tasks, m = pb->n_devs;
    double t0 = now_s();
    r->status = TGT_HETERO_OPTIMAL;
    r->gap = 0;
    r->rows = r->cols = r->integers = 0;
    tgt_ht_greedy(pb, obj, r->assign, r->order);             /* the fallback and the first incumbent */
    double greedy = evaluate(pb, obj, r->assign, r->order);
    r->value = greedy;
    r->seconds = 0;
    if (n == 0)
        return 0;
    long n_rows = 0;
    if (obj == TGT_HETERO_LATENCY && !pairs_and_rows(pb, &n_rows)) {
        r->status = TGT_HETERO_GREEDY;                       /* the caller's note says why */
        r->rows = (int)(n_rows < 0x7fffffff ? n_rows : 0x7fffffff);
        return 0;
    }
    double *gstart = malloc(((size_t)n + 1) * sizeof *gstart);
    Mip M = { .pb = pb, .P = glp_create_prob(), .x = calloc((size_t)n * m + 1, sizeof *M.x),
              .s = calloc((size_t)n + 1, sizeof *M.s) };
    int rc = -1;
    if (!gstart || !M.x || !M.s)
        goto oom;
    tgt_ht_makespan(pb, r->assign, r->order, gstart);
    glp_set_obj_dir(M.P, GLP_MIN);
    double H = US * greedy * (1 + 1e-9) + 1e-6;              /* the horizon: no optimal plan is slower */
    if (obj == TGT_HETERO_LATENCY)
        latency_mip(&M, r->assign, r->order, gstart, H);
    else
        throughput_mip(&M, r->assign, H);
    if (M.oom)
        goto oom;
    r->rows = glp_get_num_rows(M.P);
    r->cols = glp_get_num_cols(M.P);
    r->integers = glp_get_num_bin(M.P);

    double limit = time_limit_s > 0 ? time_limit_s : 10;
    glp_smcp sp;
    glp_init_smcp(&sp);
    sp.msg_lev = GLP_MSG_OFF;
    sp.tm_lim = limit * 1000 < 1 ? 1 : (int)(limit * 1000 < 2e9 ? limit * 1000 : 2e9);
    int lp = glp_simplex(M.P, &sp);                          /* the LP relaxation glp_intopt starts from */
    int lp_ok = lp == 0 && glp_get_status(M.P) == GLP_OPT;
    Cb cb = { .M = &M };
    if (lp_ok) {
        glp_iocp ip;
        glp_init_iocp(&ip);
        ip.msg_lev = GLP_MSG_OFF;
        ip.cb_func = callback;
        ip.cb_info = &cb;
        ip.mir_cuts = GLP_ON;
        double left = limit - (now_s() - t0);
        ip.tm_lim = left * 1000 < 1 ? 1 : (int)(left * 1000 < 2e9 ? left * 1000 : 2e9);
        glp_intopt(M.P, &ip);                                /* its outcome: glp_mip_status */
    }
    int st = lp_ok ? glp_mip_status(M.P) : GLP_UNDEF;
    if (st == GLP_OPT || st == GLP_FEAS) {
        int *assign = malloc(((size_t)n + 1) * sizeof *assign), *order = malloc(((size_t)n + 1) * sizeof *order);
        double *s = calloc((size_t)n + 1, sizeof *s);
        if (!assign || !order || !s) {
            free(assign);
            free(order);
            free(s);
            goto oom;
        }
        for (int t = 0; t < n; t++) {
            assign[t] = -1;
            for (int dv = 0; dv < m; dv++)
                if (xcol(&M, t, dv) && glp_mip_col_val(M.P, xcol(&M, t, dv)) > 0.5)
                    assign[t] = dv;
            if (obj == TGT_HETERO_LATENCY)
                s[t] = glp_mip_col_val(M.P, M.s[t]);
        }
        int ok = 1;
        for (int t = 0; t < n; t++)
            ok &= assign[t] >= 0;
        if (obj == TGT_HETERO_LATENCY)
            order_by_start(pb, s, order);
        else
            for (int t = 0; t < n; t++)
                order[t] = t;
        double v = ok ? evaluate(pb, obj, assign, order) : greedy;
        if (ok && v <= greedy) {                             /* (an optimum within GLPK's tolerance of the
                                                                greedy plan's value may evaluate above it) */
            memcpy(r->assign, assign, (size_t)n * sizeof *assign);
            memcpy(r->order, order, (size_t)n * sizeof *order);
            r->value = v;
        }
        r->status = st == GLP_OPT ? TGT_HETERO_OPTIMAL : v < greedy ? TGT_HETERO_TIME_LIMIT : TGT_HETERO_GREEDY;
        free(assign);
        free(order);
        free(s);
    } else {
        r->status = TGT_HETERO_GREEDY;                       /* stopped before any integer solution */
    }
    if (r->status != TGT_HETERO_OPTIMAL)
        r->gap = cb.gap;
    rc = 0;
    goto done;
oom:
    util_error(d, util_loc_file(NULL), "out of memory building the partitioning MIP");
done:
    r->seconds = now_s() - t0;
    glp_delete_prob(M.P);
    free(M.x);
    free(M.s);
    free(M.inc);
    free(M.ind);
    free(M.val);
    free(gstart);
    return rc;
}
