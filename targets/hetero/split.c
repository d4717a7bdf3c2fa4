/* targets/hetero/split.c — a partition plan cut into models of their own
 * (docs/targets/hetero.md, "Compiling the partitions"): consecutive tasks on
 * one device form a partition; each partition's graph nodes, the views and
 * compile-time values they read through and the weights they use become a
 * subgraph whose inputs are the tensors it reads from other partitions (or
 * the model's inputs) and whose outputs are the tensors other partitions or
 * the caller read.  Each subgraph then compiles with its device's own target
 * (compile.c), so every partition has the ordinary NAME_pK_run_ptrs. */
#include "targets/hetero/hetero_impl.h"
#include "passes/passes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A value known at compile time: a weight, or a computed constant. */
static int known(const IrGraph *g, int t)
{
    return g->tensors[t].kind == IR_TK_CONST || (g->tensors[t].kind == IR_TK_VALUE && g->tensors[t].v.data);
}

/* Adds t to the list (a[0..*n), at most cap) unless it is there. */
static void add_once(int *a, int *n, int t)
{
    for (int i = 0; i < *n; i++)
        if (a[i] == t)
            return;
    a[(*n)++] = t;
}

/* Pulls into partition `in` (a flag per node) every node without a kernel
 * that node i reads through, transitively (a Flatten before a Gemm). */
static void pull_views(const IrGraph *g, const int *home, unsigned char *in, int i)
{
    const IrNode *n = &g->nodes[i];
    for (int k = 0; k < n->n_in; k++) {
        int t = n->in[k];
        if (t < 0 || known(g, t))
            continue;
        int p = g->tensors[t].producer;
        if (p >= 0 && home[p] < 0 && !in[p] && !g->nodes[p].dead) {
            in[p] = 1;
            pull_views(g, home, in, p);
        }
    }
}

/* The partition that computes what node i (without a kernel) reads: the
 * nearest producer with a kernel up its first input that is not a value
 * known at compile time; 0 when that chain starts at a model input. */
static int upstream(const IrGraph *g, const int *home, int i)
{
    for (int guard = 0; guard <= g->n_nodes; guard++) {
        const IrNode *n = &g->nodes[i];
        int next = -1;
        for (int k = 0; k < n->n_in && next < 0; k++)
            if (n->in[k] >= 0 && !known(g, n->in[k]))
                next = g->tensors[n->in[k]].producer;
        if (next < 0)
            return 0;
        if (home[next] >= 0)
            return home[next];
        i = next;
    }
    return 0;
}

/* Tensor t of g in the subgraph s (added as `kind` the first time); -1 out
 * of memory. */
static int sub_tensor(IrGraph *s, const IrGraph *g, int t, IrTensorKind kind, int *map, UtilDiag *d)
{
    if (map[t] >= 0)
        return map[t];
    const IrTensor *x = &g->tensors[t];
    map[t] = ir_add_tensor(s, x->name, kind, x->loc, d);
    if (map[t] < 0)
        return -1;
    if (kind != IR_TK_VALUE)
        ir_set_type(s, map[t], x->v.dtype, &x->v.shape);
    if (kind == IR_TK_CONST)
        s->tensors[map[t]].v.data = x->v.data;   /* shared: g outlives s */
    return map[t];
}

/* Node i of g added to s with its attributes; -1 out of memory. */
static int sub_node(IrGraph *s, const IrGraph *g, int i, int *map, UtilDiag *d)
{
    const IrNode *n = &g->nodes[i];
    int *ins = malloc(((size_t)n->n_in + 1) * sizeof *ins), *outs = malloc(((size_t)n->n_out + 1) * sizeof *outs);
    int j = ins && outs ? 0 : -1;
    for (int k = 0; j == 0 && k < n->n_in; k++) {
        int t = n->in[k];
        ins[k] = t < 0 ? -1 : sub_tensor(s, g, t, known(g, t) ? IR_TK_CONST : IR_TK_VALUE, map, d);
        j = t >= 0 && ins[k] < 0 ? -1 : 0;
    }
    for (int k = 0; j == 0 && k < n->n_out; k++) {
        int t = n->out[k];
        outs[k] = t < 0 ? -1 : sub_tensor(s, g, t, IR_TK_VALUE, map, d);
        j = t >= 0 && outs[k] < 0 ? -1 : 0;
    }
    if (j == 0)
        j = ir_add_node(s, n->op, n->name, n->n_in, ins, n->n_out, outs, n->loc);
    free(ins);
    free(outs);
    for (int a = 0; j >= 0 && a < n->n_attrs; a++)
        if (ir_set_attr(s, j, &n->attrs[a]))
            j = -1;
    if (j < 0)
        return -1;
    s->nodes[j].fused = n->fused;
    return 0;
}

/* The subgraph of partition P: the nodes flagged in `in`, in graph order;
 * inferred (pass_infer). */
static IrGraph *subgraph(const IrGraph *g, const unsigned char *in, const TgtHtPart *P, const int *data, int *map,
                         UtilDiag *d)
{
    IrGraph *s = ir_graph_new(g->name, g->file);
    int ok = s != NULL;
    for (int t = 0; t < g->n_tensors; t++)
        map[t] = -1;
    for (int k = 0; ok && k < P->n_in; k++)
        ok = sub_tensor(s, g, data[P->in[k]], IR_TK_INPUT, map, d) >= 0 && ir_add_input(s, map[data[P->in[k]]]) == 0;
    for (int i = 0; ok && i < g->n_nodes; i++)
        ok = !in[i] || sub_node(s, g, i, map, d) == 0;
    for (int k = 0; ok && k < P->n_out; k++)
        ok = map[data[P->out[k]]] >= 0 && ir_add_output(s, map[data[P->out[k]]]) == 0;
    if (!ok) {
        if (!d->has_error)
            util_error(d, util_loc_file(g->file), "out of memory");
        ir_graph_free(s);
        return NULL;
    }
    if (pass_infer(s, d)) {
        ir_graph_free(s);
        return NULL;
    }
    return s;
}

void tgt_ht_split_free(TgtHtSplit *s)
{
    for (int k = 0; s->parts && k < s->n_parts; k++) {
        ir_graph_free(s->parts[k].g);
        free(s->parts[k].in);
        free(s->parts[k].out);
    }
    free(s->parts);
    free(s->data);
    memset(s, 0, sizeof *s);
}

/* The index of tensor t in the data list, added at the end when absent. */
static int data_id(TgtHtSplit *s, int t)
{
    for (int i = 0; i < s->n_data; i++)
        if (s->data[i] == t)
            return i;
    s->data[s->n_data] = t;
    return s->n_data++;
}

int tgt_ht_split(const IrGraph *g, const TgtHeteroPlan *plan, TgtHtSplit *s, UtilDiag *d)
{
    memset(s, 0, sizeof *s);
    int n = g->n_nodes, rc = -1;
    int *home = malloc(((size_t)n + 1) * sizeof *home), *part_of = malloc(((size_t)plan->n_tasks + 1) * sizeof *part_of);
    int *map = malloc(((size_t)g->n_tensors + 1) * sizeof *map), *prod = malloc(((size_t)g->n_tensors + 1) * sizeof *prod);
    int *list = malloc(((size_t)g->n_tensors + 1) * sizeof *list);
    unsigned char *in = NULL;
    s->data = malloc(((size_t)g->n_tensors + 1) * sizeof *s->data);
    s->parts = calloc((size_t)plan->n_tasks + 1, sizeof *s->parts);
    if (!home || !part_of || !map || !prod || !list || !s->data || !s->parts)
        goto oom;
    for (int t = 0; t < plan->n_tasks; t++) {                /* consecutive tasks on one device */
        if (t == 0 || plan->tasks[t].device != plan->tasks[t - 1].device)
            s->parts[s->n_parts++] = (TgtHtPart){ .device = plan->tasks[t].device, .first_task = t };
        TgtHtPart *P = &s->parts[s->n_parts - 1];
        P->n_tasks++;
        P->time_s += plan->tasks[t].time_s;
        part_of[t] = s->n_parts - 1;
    }
    if (s->n_parts == 0) {
        util_error(d, util_loc_file(g->file), "the model computes nothing at run time (no kernel): nothing to "
                   "partition");
        goto done;
    }
    int np = s->n_parts;
    in = calloc((size_t)np * (size_t)n + 1, 1);              /* in[P * n + i]: node i is computed by P */
    if (!in)
        goto oom;
    for (int i = 0; i < n; i++) {
        home[i] = !g->nodes[i].dead && i < plan->n_nodes && plan->node_task[i] >= 0 ? part_of[plan->node_task[i]] : -1;
        if (home[i] >= 0)
            in[(size_t)home[i] * n + i] = 1;
    }
    for (int t = 0; t < g->n_tensors; t++)
        prod[t] = g->tensors[t].producer >= 0 ? home[g->tensors[t].producer] : -1;
    for (int k = 0; k < g->n_outputs; k++) {                 /* a model output computed by a view: whose */
        int t = g->outputs[k], p = g->tensors[t].producer;
        if (known(g, t) || p < 0) {
            util_error(d, util_loc_file(g->file), "model output '%s' is %s: nothing computes it (-t hetero "
                       "compiles models whose outputs some node computes)", g->tensors[t].name,
                       known(g, t) ? "a value known at compile time" : "a model input");
            goto done;
        }
        for (int j = 0; j < k; j++)
            if (g->outputs[j] == t) {
                util_error(d, util_loc_file(g->file), "model output '%s' is listed twice (-t hetero needs "
                           "distinct outputs)", g->tensors[t].name);
                goto done;
            }
        if (prod[t] < 0) {
            prod[t] = upstream(g, home, p);
            in[(size_t)prod[t] * n + p] = 1;
        }
    }
    for (int P = 0; P < np; P++)
        for (int i = 0; i < n; i++)
            if (in[(size_t)P * n + i] && home[i] >= 0)
                pull_views(g, home, &in[(size_t)P * n], i);
    for (int i = 0; i < n; i++)                              /* views pulled in for model outputs read too */
        for (int P = 0; P < np; P++)
            if (in[(size_t)P * n + i] && home[i] < 0)
                pull_views(g, home, &in[(size_t)P * n], i);

    /* the data the runtime handles: model inputs, model outputs, then tensors crossing partitions */
    for (int k = 0; k < g->n_inputs; k++)
        data_id(s, g->inputs[k]);
    for (int k = 0; k < g->n_outputs; k++)
        data_id(s, g->outputs[k]);
    for (int P = 0; P < np; P++) {                           /* inputs: read here, computed elsewhere */
        int m = 0;
        for (int i = 0; i < n; i++) {
            if (!in[(size_t)P * n + i])
                continue;
            const IrNode *nd = &g->nodes[i];
            for (int k = 0; k < nd->n_in; k++) {
                int t = nd->in[k];
                if (t < 0 || known(g, t) || (g->tensors[t].producer >= 0 && in[(size_t)P * n + g->tensors[t].producer]))
                    continue;
                if (g->tensors[t].kind != IR_TK_INPUT && !(prod[t] >= 0 && prod[t] < P)) {
                    util_error(d, util_loc_file(g->file), "internal error: partition %d reads '%s', which "
                               "partition %d computes after it", P, g->tensors[t].name, prod[t]);
                    goto done;
                }
                add_once(list, &m, t);
            }
        }
        TgtHtPart *Pp = &s->parts[P];
        Pp->in = malloc(((size_t)m + 1) * sizeof *Pp->in);
        if (!Pp->in)
            goto oom;
        for (int k = 0; k < m; k++)
            Pp->in[Pp->n_in++] = data_id(s, list[k]);
    }
    for (int P = 0; P < np; P++) {                           /* outputs: computed here, read elsewhere */
        int m = 0;
        for (int i = 0; i < s->n_data; i++) {
            int t = s->data[i], read = 0;
            if (prod[t] != P)
                continue;
            for (int k = 0; k < g->n_outputs; k++)
                read |= g->outputs[k] == t;
            for (int Q = 0; Q < np && !read; Q++)
                for (int k = 0; Q != P && k < s->parts[Q].n_in; k++)
                    read |= s->parts[Q].in[k] == i;
            if (read)
                list[m++] = i;
        }
        TgtHtPart *Pp = &s->parts[P];
        Pp->out = malloc(((size_t)m + 1) * sizeof *Pp->out);
        if (!Pp->out)
            goto oom;
        memcpy(Pp->out, list, (size_t)m * sizeof *list);
        Pp->n_out = m;
    }
    for (int P = 0; P < np; P++) {
        if (s->parts[P].n_out == 0) {
            util_error(d, util_loc_file(g->file), "internal error: partition %d computes nothing that is read", P);
            goto done;
        }
        s->parts[P].g = subgraph(g, &in[(size_t)P * n], &s->parts[P], s->data, map, d);
        if (!s->parts[P].g)
            goto done;
    }
    rc = 0;
    goto done;
oom:
    util_error(d, util_loc_file(g->file), "out of memory");
done:
    free(home);
    free(part_of);
    free(map);
    free(prod);
    free(list);
    free(in);
    if (rc)
        tgt_ht_split_free(s);
    return rc;
}
