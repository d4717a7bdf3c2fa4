/* targets/hetero/plan.c — a partition plan as text or JSON (`dlcc
 * partition`, docs/cli.md; the fields are described in
 * docs/targets/hetero.md "The plan"). */
#include "targets/hetero/hetero_impl.h"

#include <glpk.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

static const char *const status_names[] = { "optimal", "time_limit", "greedy" };

static const char *status_text(const TgtHeteroPlan *p)
{
    switch (p->status) {
    case TGT_HETERO_OPTIMAL: return "optimal";
    case TGT_HETERO_TIME_LIMIT: return "NOT proven optimal: the time limit stopped GLPK; its best plan";
    default: return p->cols ? "FALLBACK: the time limit stopped GLPK before it found a better plan than the greedy one"
                            : "FALLBACK: the greedy plan, no MIP was solved";
    }
}

/* A node's name for people: its own, else OP#index. */
static void node_name(const IrGraph *g, int i, char *buf, size_t n)
{
    const IrNode *nd = &g->nodes[i];
    if (nd->name && nd->name[0])
        snprintf(buf, n, "%s", nd->name);
    else
        snprintf(buf, n, "%s#%d", ir_op_name(nd->op), i);
}

static const char *tensor_name(const IrGraph *g, const TgtHeteroPlan *p, const TgtHeteroTransfer *x)
{
    return x->tensor >= 0 && x->tensor < g->n_tensors ? g->tensors[x->tensor].name : p->program->bufs[x->buf].name;
}

static void task_ref(const TgtHeteroPlan *p, int t, int input, char *buf, size_t n)
{
    if (t >= 0)
        snprintf(buf, n, "task %d", t);
    else
        snprintf(buf, n, "%s", input ? "graph input" : "graph output");
    (void)p;
}

/* ------------------------------------------------------------------ text */

static void text(const IrGraph *g, const TgtHeteroPlan *p, UtilBuf *o)
{
    int m = p->n_devices;
    const char *obj = p->objective == TGT_HETERO_LATENCY ? "latency" : "throughput";
    util_buf_printf(o, "model: %s\nobjective: %s (%s)\n", g->name ? g->name : "", obj,
                    p->objective == TGT_HETERO_LATENCY ? "the makespan of one input"
                                                       : "the busiest device or link per input of a stream");
    util_buf_printf(o, "devices:");
    for (int d = 0; d < m; d++)
        util_buf_printf(o, "%s %s (%s%s)", d ? "," : "", p->devices[d].name, tgt_hetero_kind_name(p->devices[d].kind),
                        d == p->host ? ", host" : "");
    if (p->cols)
        util_buf_printf(o, "\nsolver: GLPK %s MIP, %d rows, %d columns (%d binary), %.3f s: %s\n", glp_version(),
                        p->rows, p->cols, p->integers, p->solve_s, status_text(p));
    else
        util_buf_printf(o, "\nsolver: no MIP solved: %s\n", p->n_tasks ? status_text(p) : "nothing to place");
    if (p->status == TGT_HETERO_TIME_LIMIT)
        util_buf_printf(o, "gap: %.3g%% between that plan and GLPK's bound when it stopped\n", 100 * p->gap);
    if (p->note)
        util_buf_printf(o, "note: %s\n", p->note);
    if (p->objective == TGT_HETERO_LATENCY)
        util_buf_printf(o, "predicted latency: %.3f us\n", p->value_s * 1e6);
    else
        util_buf_printf(o, "predicted interval: %.3f us per input (%.1f inputs/s)\n", p->value_s * 1e6,
                        p->value_s > 0 ? 1 / p->value_s : 0.0);

    util_buf_printf(o, "\ntasks (time on each device in us, '-' where it cannot run, '*' the device chosen):\n");
    util_buf_printf(o, "  %4s  %-12s %10s %10s", "task", "device", "start_us", "time_us");
    for (int d = 0; d < m; d++)
        util_buf_printf(o, " %12.12s", p->devices[d].name);
    util_buf_printf(o, "  kernels: nodes\n");
    for (int t = 0; t < p->n_tasks; t++) {
        const TgtHeteroTask *tk = &p->tasks[t];
        char start[32] = "-";
        if (tk->start_s >= 0)
            snprintf(start, sizeof start, "%.3f", tk->start_s * 1e6);
        util_buf_printf(o, "  %4d  %-12s %10s %10.3f", t, p->devices[tk->device].name, start, tk->time_s * 1e6);
        for (int d = 0; d < m; d++) {
            char c[32] = "-";
            if (tk->option_s[d] >= 0)
                snprintf(c, sizeof c, "%s%.3f", d == tk->device ? "*" : "", tk->option_s[d] * 1e6);
            util_buf_printf(o, " %12s", c);
        }
        util_buf_printf(o, "  ");
        for (int k = tk->first_kernel; k < tk->first_kernel + tk->n_kernels; k++)
            util_buf_printf(o, "%s%s", k > tk->first_kernel ? ", " : "", p->program->kernels[k].name);
        util_buf_printf(o, ":");
        for (int i = tk->first_node; i >= 0 && i < tk->first_node + tk->n_nodes; i++) {
            char nm[256];
            node_name(g, i, nm, sizeof nm);
            util_buf_printf(o, " %s", nm);
        }
        util_buf_printf(o, "\n");
    }

    util_buf_printf(o, "\ntransfers (%d):\n", p->n_transfers);
    for (int i = 0; i < p->n_transfers; i++) {
        const TgtHeteroTransfer *x = &p->transfers[i];
        char from[32], to[32];
        task_ref(p, x->from_task, 1, from, sizeof from);
        task_ref(p, x->to_task, 0, to, sizeof to);
        util_buf_printf(o, "  %-24s %10lld bytes  %s -> %s  %10.3f us  (%s -> %s)\n", tensor_name(g, p, x),
                        (long long)x->bytes, p->devices[x->from_device].name, p->devices[x->to_device].name,
                        x->time_s * 1e6, from, to);
    }
    util_buf_printf(o, "\nbusy per input (us):");
    for (int d = 0; d < m; d++)
        util_buf_printf(o, "%s %s %.3f", d ? "," : "", p->devices[d].name, p->device_busy_s[d] * 1e6);
    for (int l = 0; l < p->n_links; l++)
        if (p->link_busy_s[l] > 0)
            util_buf_printf(o, ", %s->%s %.3f", p->devices[p->links[l].from].name, p->devices[p->links[l].to].name,
                            p->link_busy_s[l] * 1e6);
    util_buf_printf(o, "\n\nnodes:\n");
    for (int i = 0; i < p->n_nodes && i < g->n_nodes; i++) {
        if (g->nodes[i].dead)
            continue;
        char nm[256];
        node_name(g, i, nm, sizeof nm);
        int t = p->node_task[i];
        util_buf_printf(o, "  %-32s %-20s %s\n", nm, ir_op_name(g->nodes[i].op),
                        t >= 0 ? p->devices[p->tasks[t].device].name : "- (no kernel)");
    }
}

/* ------------------------------------------------------------------ JSON */

static json_t *us(double s)
{
    return json_real(s * 1e6);
}

json_t *tgt_ht_plan_json(const IrGraph *g, const TgtHeteroPlan *p)
{
    int m = p->n_devices;
    json_t *root = json_object(), *devs = json_array(), *links = json_array(), *tasks = json_array(),
           *xfers = json_array(), *nodes = json_array(), *solver = json_object();
    json_object_set_new(root, "model", json_string(g->name ? g->name : ""));
    json_object_set_new(root, "objective",
                        json_string(p->objective == TGT_HETERO_LATENCY ? "latency" : "throughput"));
    json_object_set_new(root, "value_us", us(p->value_s));
    json_object_set_new(root, "status", json_string(status_names[p->status]));
    json_object_set_new(root, "optimal", json_boolean(p->status == TGT_HETERO_OPTIMAL));
    json_object_set_new(root, "note", p->note ? json_string(p->note) : json_null());
    json_object_set_new(solver, "name", json_string("GLPK"));
    json_object_set_new(solver, "version", json_string(glp_version()));
    json_object_set_new(solver, "seconds", json_real(p->solve_s));
    json_object_set_new(solver, "rows", json_integer(p->rows));
    json_object_set_new(solver, "columns", json_integer(p->cols));
    json_object_set_new(solver, "binaries", json_integer(p->integers));
    json_object_set_new(solver, "gap", p->status == TGT_HETERO_TIME_LIMIT ? json_real(p->gap) : json_null());
    json_object_set_new(root, "solver", solver);
    for (int d = 0; d < m; d++) {
        const TgtDevice *v = &p->devices[d];
        json_t *e = json_pack("{s:s, s:s, s:b, s:o}", "name", v->name, "kind", tgt_hetero_kind_name(v->kind),
                              "host", d == p->host, "busy_us", us(p->device_busy_s[d]));
        json_array_append_new(devs, e);
    }
    for (int l = 0; l < p->n_links; l++) {
        json_t *e = json_pack("{s:s, s:s, s:o, s:f, s:f}", "from", p->devices[p->links[l].from].name, "to",
                              p->devices[p->links[l].to].name, "busy_us", us(p->link_busy_s[l]), "bandwidth_gbs",
                              p->links[l].bandwidth_gbs, "latency_us", p->links[l].latency_us);
        json_array_append_new(links, e);
    }
    for (int t = 0; t < p->n_tasks; t++) {
        const TgtHeteroTask *tk = &p->tasks[t];
        json_t *ks = json_array(), *ns = json_array(), *opt = json_object();
        for (int k = tk->first_kernel; k < tk->first_kernel + tk->n_kernels; k++)
            json_array_append_new(ks, json_string(p->program->kernels[k].name));
        for (int i = tk->first_node; i >= 0 && i < tk->first_node + tk->n_nodes; i++) {
            char nm[256];
            node_name(g, i, nm, sizeof nm);
            json_array_append_new(ns, json_string(nm));
        }
        for (int d = 0; d < m; d++)
            json_object_set_new(opt, p->devices[d].name, tk->option_s[d] >= 0 ? us(tk->option_s[d]) : json_null());
        json_t *e = json_pack("{s:i, s:s, s:o, s:o, s:o, s:o, s:o}", "task", t, "device",
                              p->devices[tk->device].name, "start_us",
                              tk->start_s >= 0 ? us(tk->start_s) : json_null(), "time_us", us(tk->time_s),
                              "options_us", opt, "kernels", ks, "nodes", ns);
        json_array_append_new(tasks, e);
    }
    for (int i = 0; i < p->n_transfers; i++) {
        const TgtHeteroTransfer *x = &p->transfers[i];
        json_t *e = json_pack("{s:s, s:I, s:s, s:s, s:o, s:o, s:o}", "tensor", tensor_name(g, p, x), "bytes",
                              (json_int_t)x->bytes, "from", p->devices[x->from_device].name, "to",
                              p->devices[x->to_device].name, "from_task",
                              x->from_task >= 0 ? json_integer(x->from_task) : json_null(), "to_task",
                              x->to_task >= 0 ? json_integer(x->to_task) : json_null(), "time_us", us(x->time_s));
        json_array_append_new(xfers, e);
    }
    for (int i = 0; i < p->n_nodes && i < g->n_nodes; i++) {
        if (g->nodes[i].dead)
            continue;
        char nm[256];
        node_name(g, i, nm, sizeof nm);
        int t = p->node_task[i];
        json_t *e = json_pack("{s:s, s:s, s:o, s:o}", "name", nm, "op", ir_op_name(g->nodes[i].op), "task",
                              t >= 0 ? json_integer(t) : json_null(), "device",
                              t >= 0 ? json_string(p->devices[p->tasks[t].device].name) : json_null());
        json_array_append_new(nodes, e);
    }
    json_object_set_new(root, "devices", devs);
    json_object_set_new(root, "links", links);
    json_object_set_new(root, "tasks", tasks);
    json_object_set_new(root, "transfers", xfers);
    json_object_set_new(root, "nodes", nodes);
    return root;
}

int tgt_hetero_render(const IrGraph *g, const TgtHeteroPlan *p, int json, UtilBuf *out, UtilDiag *d)
{
    if (!json) {
        text(g, p, out);
    } else {
        json_t *root = tgt_ht_plan_json(g, p);
        char *s = root ? json_dumps(root, JSON_SORT_KEYS | JSON_INDENT(2) | JSON_REAL_PRECISION(9)) : NULL;
        json_decref(root);
        if (!s)
            return util_error(d, util_loc_file(g->file), "cannot build the JSON plan (out of memory, or a name that "
                              "is not UTF-8)");
        util_buf_printf(out, "%s\n", s);
        free(s);
    }
    if (out->oom)
        return util_error(d, util_loc_file(g->file), "out of memory");
    return 0;
}
