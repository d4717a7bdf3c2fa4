/* targets/hetero/model.c — the assignment problem's timing model
 * (docs/targets/hetero.md "Cost model"): routes and transfer times, the
 * latency model (a schedule of the tasks in a given order), the throughput
 * model (the busiest device or link) and the greedy plan, which the MIP of
 * solve.c is checked against and falls back to. */
#include "targets/hetero/hetero_impl.h"

#include <stdlib.h>
#include <string.h>

void tgt_ht_free(TgtHtProblem *pb)
{
    for (int i = 0; pb->items && i < pb->n_items; i++)
        free(pb->items[i].cons);
    free(pb->items);
    free(pb->cost);
    free(pb->links);
    free(pb->route);
    free(pb->edge_src);
    free(pb->edge_dst);
    free(pb->in_first);
    free(pb->edge_delay);
    free(pb->in_delay);
    free(pb->out_delay);
    free(pb->reach);
    memset(pb, 0, sizeof *pb);
}

static int can_run(const TgtHtProblem *pb, int t, int d)
{
    return pb->cost[(size_t)t * pb->n_devs + d] >= 0;
}

double tgt_ht_xfer(const TgtHtProblem *pb, double bytes, int a, int b)
{
    if (a == b)
        return 0;
    const int *r = &pb->route[((size_t)a * pb->n_devs + b) * 2];
    if (r[0] < 0)
        return -1;
    double t = 0;
    for (int h = 0; h < 2 && r[h] >= 0; h++)
        t += bytes / pb->links[r[h]].bps + pb->links[r[h]].lat;
    return t;
}

static int find_link(const TgtHtProblem *pb, int a, int b)
{
    for (int l = 0; l < pb->n_links; l++)
        if (pb->links[l].from == a && pb->links[l].to == b)
            return l;
    return -1;
}

/* Can some assignment need a transfer from a to b that has no route? */
static int check_route(const TgtHtProblem *pb, int src, int dst, int *bad_from, int *bad_to)
{
    int m = pb->n_devs;
    for (int a = 0; a < m; a++)
        for (int b = 0; b < m; b++) {
            int a_ok = src < 0 ? a == pb->host : can_run(pb, src, a);
            int b_ok = dst < 0 ? b == pb->host : can_run(pb, dst, b);
            if (a != b && a_ok && b_ok && pb->route[((size_t)a * m + b) * 2] < 0) {
                *bad_from = a;
                *bad_to = b;
                return -2;
            }
        }
    return 0;
}

typedef struct Pair {
    int src, dst, item;
} Pair;

static int pair_cmp(const void *x, const void *y)
{
    const Pair *a = x, *b = y;
    if (a->dst != b->dst)
        return a->dst < b->dst ? -1 : 1;
    if (a->src != b->src)
        return a->src < b->src ? -1 : 1;
    return a->item < b->item ? -1 : a->item > b->item;
}

int tgt_ht_prepare(TgtHtProblem *pb, int *bad_from, int *bad_to)
{
    int m = pb->n_devs, n = pb->n_tasks;
    size_t mm = (size_t)m * m;
    pb->route = malloc(mm * 2 * sizeof *pb->route);
    pb->in_delay = calloc((size_t)n * m + 1, sizeof *pb->in_delay);
    pb->out_delay = calloc((size_t)n * m + 1, sizeof *pb->out_delay);
    pb->in_first = calloc((size_t)n + 1, sizeof *pb->in_first);
    pb->reach = calloc((size_t)n * n + 1, 1);
    size_t n_pairs = 0;
    for (int i = 0; i < pb->n_items; i++)
        n_pairs += (size_t)pb->items[i].n_cons;
    Pair *pairs = malloc((n_pairs + 1) * sizeof *pairs);
    if (!pb->route || !pb->in_delay || !pb->out_delay || !pb->in_first || !pb->reach || !pairs) {
        free(pairs);
        return -1;
    }
    for (int a = 0; a < m; a++)                               /* the direct link, else through the host */
        for (int b = 0; b < m; b++) {
            int *r = &pb->route[((size_t)a * m + b) * 2];
            r[0] = r[1] = -1;
            if (a == b)
                continue;
            r[0] = find_link(pb, a, b);
            if (r[0] < 0 && a != pb->host && b != pb->host) {
                int h1 = find_link(pb, a, pb->host), h2 = find_link(pb, pb->host, b);
                if (h1 >= 0 && h2 >= 0) {
                    r[0] = h1;
                    r[1] = h2;
                }
            }
        }
    n_pairs = 0;
    for (int i = 0; i < pb->n_items; i++) {
        const TgtHtItem *it = &pb->items[i];
        for (int c = 0; c < it->n_cons; c++) {
            int r = it->cons[c];
            if (check_route(pb, it->src, r, bad_from, bad_to)) {
                free(pairs);
                return -2;
            }
            if (it->src < 0) {
                for (int d = 0; d < m; d++) {
                    double t = tgt_ht_xfer(pb, it->bytes, pb->host, d);   /* < 0: no route, r not on d */
                    pb->in_delay[(size_t)r * m + d] += t > 0 ? t : 0;
                }
            } else if (r > it->src) {
                pairs[n_pairs++] = (Pair){ it->src, r, i };
            }
        }
        if (it->to_host && it->src >= 0) {
            if (check_route(pb, it->src, -1, bad_from, bad_to)) {
                free(pairs);
                return -2;
            }
            for (int d = 0; d < m; d++)
                if (can_run(pb, it->src, d))
                    pb->out_delay[(size_t)it->src * m + d] += tgt_ht_xfer(pb, it->bytes, d, pb->host);
        }
    }
    qsort(pairs, n_pairs, sizeof *pairs, pair_cmp);
    int ne = 0;
    for (size_t k = 0; k < n_pairs; k++)
        ne += k == 0 || pairs[k].src != pairs[k - 1].src || pairs[k].dst != pairs[k - 1].dst;
    pb->edge_src = malloc(((size_t)ne + 1) * sizeof *pb->edge_src);
    pb->edge_dst = malloc(((size_t)ne + 1) * sizeof *pb->edge_dst);
    pb->edge_delay = calloc((size_t)ne * mm + 1, sizeof *pb->edge_delay);
    if (!pb->edge_src || !pb->edge_dst || !pb->edge_delay) {
        free(pairs);
        return -1;
    }
    int e = -1;
    for (size_t k = 0; k < n_pairs; k++) {
        if (k == 0 || pairs[k].src != pairs[k - 1].src || pairs[k].dst != pairs[k - 1].dst) {
            e++;
            pb->edge_src[e] = pairs[k].src;
            pb->edge_dst[e] = pairs[k].dst;
            pb->in_first[pairs[k].dst + 1] = e + 1;
        }
        double bytes = pb->items[pairs[k].item].bytes;
        for (int a = 0; a < m; a++)
            for (int b = 0; b < m; b++) {
                double t = tgt_ht_xfer(pb, bytes, a, b);
                pb->edge_delay[(size_t)e * mm + (size_t)a * m + b] += t > 0 ? t : 0;
            }
    }
    pb->n_edges = ne;
    for (int t = 0; t < n; t++)                              /* in_first: running maximum */
        if (pb->in_first[t + 1] < pb->in_first[t])
            pb->in_first[t + 1] = pb->in_first[t];
    free(pairs);
    for (int t = n - 1; t >= 0; t--)                         /* reach: edges go forward */
        for (int u = t + 1; u < n; u++)
            for (int k = pb->in_first[u]; k < pb->in_first[u + 1]; k++) {
                int p = pb->edge_src[k];
                if (p == t || (p > t && pb->reach[(size_t)t * n + p])) {
                    pb->reach[(size_t)t * n + u] = 1;
                    break;
                }
            }
    return 0;
}

double tgt_ht_makespan(const TgtHtProblem *pb, const int *assign, const int *order, double *start)
{
    int m = pb->n_devs, n = pb->n_tasks;
    size_t mm = (size_t)m * m;
    double *fin = calloc((size_t)n + 1, sizeof *fin), *free_at = calloc((size_t)m, sizeof *free_at), span = 0;
    if (!fin || !free_at) {
        free(fin);
        free(free_at);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        int t = order ? order[i] : i, d = assign[t];
        double s = free_at[d];
        if (pb->in_delay[(size_t)t * m + d] > s)
            s = pb->in_delay[(size_t)t * m + d];
        for (int e = pb->in_first[t]; e < pb->in_first[t + 1]; e++) {
            int p = pb->edge_src[e];
            double ready = fin[p] + pb->edge_delay[(size_t)e * mm + (size_t)assign[p] * m + d];
            if (ready > s)
                s = ready;
        }
        if (start)
            start[t] = s;
        fin[t] = s + pb->cost[(size_t)t * m + d];
        free_at[d] = fin[t];
        double done = fin[t] + pb->out_delay[(size_t)t * m + d];
        if (done > span)
            span = done;
    }
    free(fin);
    free(free_at);
    return span;
}

double tgt_ht_bottleneck(const TgtHtProblem *pb, const int *assign, double *busy, double *link_busy)
{
    int m = pb->n_devs;
    double dev[TGT_HT_MAX_DEVICES] = { 0 }, worst = 0;
    double *lb = calloc((size_t)pb->n_links + 1, sizeof *lb);
    if (!lb)
        return -1;
    for (int t = 0; t < pb->n_tasks; t++)
        if (assign[t] >= 0)
            dev[assign[t]] += pb->cost[(size_t)t * m + assign[t]];
    for (int i = 0; i < pb->n_items; i++) {
        const TgtHtItem *it = &pb->items[i];
        int a = it->src < 0 ? pb->host : assign[it->src];
        if (a < 0)
            continue;
        unsigned char need[TGT_HT_MAX_DEVICES] = { 0 };
        for (int c = 0; c < it->n_cons; c++)
            if (assign[it->cons[c]] >= 0)
                need[assign[it->cons[c]]] = 1;
        if (it->to_host)
            need[pb->host] = 1;
        for (int b = 0; b < m; b++) {
            if (!need[b] || b == a)
                continue;
            const int *r = &pb->route[((size_t)a * m + b) * 2];
            for (int h = 0; h < 2 && r[h] >= 0; h++)
                lb[r[h]] += it->bytes / pb->links[r[h]].bps + pb->links[r[h]].lat;
        }
    }
    for (int d = 0; d < m; d++) {
        worst = dev[d] > worst ? dev[d] : worst;
        if (busy)
            busy[d] = dev[d];
    }
    for (int l = 0; l < pb->n_links; l++) {
        worst = lb[l] > worst ? lb[l] : worst;
        if (link_busy)
            link_busy[l] = lb[l];
    }
    free(lb);
    return worst;
}

void tgt_ht_greedy(const TgtHtProblem *pb, TgtHeteroObjective obj, int *assign, int *order)
{
    int m = pb->n_devs, n = pb->n_tasks;
    double *start = malloc(((size_t)n + 1) * sizeof *start);
    for (int t = 0; t < n; t++) {
        order[t] = t;
        assign[t] = -1;
    }
    for (int t = 0; t < n; t++) {
        double best = -1;
        int pick = -1;
        for (int d = 0; d < m; d++) {
            if (!can_run(pb, t, d))
                continue;
            assign[t] = d;
            double v;
            if (obj == TGT_HETERO_THROUGHPUT) {
                v = tgt_ht_bottleneck(pb, assign, NULL, NULL);
            } else {                                         /* when t is done, its outputs' transfers included */
                TgtHtProblem head = *pb;
                head.n_tasks = t + 1;
                v = tgt_ht_makespan(&head, assign, order, start);
                if (start)
                    v = start[t] + pb->cost[(size_t)t * m + d] + pb->out_delay[(size_t)t * m + d];
            }
            if (pick < 0 || v < best) {
                best = v;
                pick = d;
            }
        }
        assign[t] = pick;
    }
    free(start);
}
