/* tools/cmd_info.c — dlcc info: inputs, outputs, operator histogram before
 * and after the -O pipeline, parameter count and bytes, FLOPs estimate, the
 * kernels (with the operators each computes: fused groups) and the planned
 * workspace of the optimized graph, as text or as one JSON object.  The statistics other than the *_before ones describe the
 * optimized graph (what compiling would build). */
#include "tools/tools.h"
#include "passes/passes.h"
#include "targets/targets.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct InfoStats {
    int nodes;
    int op_count[IR_OP_COUNT];
    int order[IR_OP_COUNT];     /* ops present: by count, descending, then name */
    int n_ops;
    int64_t params, weights_bytes, flops;
    int initializers;
} InfoStats;

static int64_t add_sat(int64_t a, int64_t b)
{
    int64_t r;
    return b < 0 ? a : util_add_overflow_i64(a, b, &r) ? INT64_MAX : r;
}

static void info_collect(const IrGraph *g, InfoStats *s)
{
    memset(s, 0, sizeof *s);
    for (int i = 0; i < g->n_nodes; i++) {
        const IrNode *n = &g->nodes[i];
        if (n->dead || n->op <= IR_OP_INVALID || n->op >= IR_OP_COUNT)
            continue;
        s->nodes++;
        s->op_count[n->op]++;
        s->flops = add_sat(s->flops, ir_node_flops(g, n));
    }
    for (int t = 0; t < g->n_tensors; t++) {
        const IrTensor *x = &g->tensors[t];
        if (x->kind != IR_TK_CONST)
            continue;
        s->initializers++;
        s->params = add_sat(s->params, ir_array_numel(&x->v));
        s->weights_bytes = add_sat(s->weights_bytes, (int64_t)ir_array_bytes(&x->v));
    }
    for (int op = 1; op < IR_OP_COUNT; op++) {
        if (!s->op_count[op])
            continue;
        int k = s->n_ops++;
        while (k > 0) {
            int prev = s->order[k - 1];
            int before = s->op_count[prev] > s->op_count[op] ||
                         (s->op_count[prev] == s->op_count[op] && strcmp(ir_op_name(prev), ir_op_name(op)) < 0);
            if (before)
                break;
            s->order[k] = prev;
            k--;
        }
        s->order[k] = op;
    }
}

/* g's loop program as `dlcc MODEL` compiles it by default (the CPU target's
 * pipeline for the host's triple, generic CPU: its SIMD width decides the
 * register-blocked kernels and their padded-input buffers), so
 * workspace_bytes is the default object's NAME_WORKSPACE_SIZE; NULL when
 * that does not succeed for this model (its diagnostic is dropped). */
static LoopProgram *planned(const IrGraph *g, int opt_level)
{
    UtilDiag d;
    util_diag_init(&d);
    TgtOptions o = { .name = "info", .opt_level = opt_level };
    return tgt_cpu_program(g, &o, 0, &d);
}

/* The kernels of the optimized graph: name and the operators it computes
 * (more than one: a fused group, passes/fuse.c). */
static json_t *kernel_list(const IrGraph *g, const LoopProgram *p)
{
    json_t *arr = json_array();
    for (int k = 0; k < p->n_kernels; k++) {
        const LoopKernel *kn = &p->kernels[k];
        json_t *ops = json_array();
        for (int i = kn->first_node; i >= 0 && i < kn->first_node + kn->n_nodes && i < g->n_nodes; i++)
            json_array_append_new(ops, json_string(ir_op_name(g->nodes[i].op)));
        json_t *item = json_pack("{s:s, s:o}", "name", kn->name, "ops", ops);
        if (!item || json_array_append_new(arr, item)) {
            json_decref(arr);
            return NULL;
        }
    }
    return arr;
}

static int fused_nodes(const IrGraph *g)
{
    int n = 0;
    for (int i = 0; i < g->n_nodes; i++)
        n += !g->nodes[i].dead && g->nodes[i].fused;
    return n;
}

/* ------------------------------------------------------------------ JSON */

static json_t *tensor_list(const IrGraph *g, const int *idx, int n)
{
    json_t *arr = json_array();
    for (int i = 0; i < n; i++) {
        const IrTensor *t = &g->tensors[idx[i]];
        json_t *shape = json_array();
        for (int k = 0; k < t->v.shape.rank; k++)
            json_array_append_new(shape, json_integer(t->v.shape.dims[k]));
        json_t *item = json_pack("{s:s, s:s, s:o}", "name", t->name, "dtype", ir_dtype_name(t->v.dtype),
                                 "shape", shape);
        if (!item || json_array_append_new(arr, item)) {
            json_decref(arr);
            return NULL;                    /* not UTF-8, or out of memory */
        }
    }
    return arr;
}

static json_t *histogram(const InfoStats *s)
{
    json_t *ops = json_object();
    for (int k = 0; k < s->n_ops; k++)
        json_object_set_new(ops, ir_op_name(s->order[k]), json_integer(s->op_count[s->order[k]]));
    return ops;
}

static int info_json(const IrGraph *g, const InfoStats *before, const InfoStats *s, const LoopProgram *p,
                     int opt_level, UtilBuf *out, UtilDiag *d)
{
    int64_t workspace = p ? p->workspace_bytes : -1;
    json_t *ops = histogram(s);
    json_t *root = json_pack("{s:s, s:i, s:i, s:o, s:o, s:i, s:o, s:I, s:i, s:I, s:I}",
                             "name", g->name ? g->name : "", "opset", g->opset, "opt_level", opt_level,
                             "inputs", tensor_list(g, g->inputs, g->n_inputs),
                             "outputs", tensor_list(g, g->outputs, g->n_outputs),
                             "nodes", s->nodes, "ops", ops, "params", (json_int_t)s->params,
                             "initializers", s->initializers, "weights_bytes", (json_int_t)s->weights_bytes,
                             "flops", (json_int_t)s->flops);
    if (root) {
        json_object_set_new(root, "nodes_before", json_integer(before->nodes));
        json_object_set_new(root, "nodes_after", json_integer(s->nodes));
        json_object_set_new(root, "ops_before", histogram(before));
        json_object_set_new(root, "ops_after", histogram(s));
        json_object_set_new(root, "fused_nodes", json_integer(fused_nodes(g)));
        if (workspace >= 0) {
            json_object_set_new(root, "workspace_bytes", json_integer((json_int_t)workspace));
            /* the most bytes of intermediate tensors live at one time: no plan is smaller */
            json_object_set_new(root, "workspace_lower_bound", json_integer((json_int_t)low_workspace_lower_bound(p)));
        }
        if (p) {
            json_object_set_new(root, "kernels_after", json_integer(p->n_kernels));
            json_object_set_new(root, "kernels", kernel_list(g, p));
        }
    }
    char *text = root ? json_dumps(root, JSON_SORT_KEYS | JSON_INDENT(2)) : NULL;
    json_decref(root);
    if (!text)
        return util_error(d, util_loc_file(g->file), "cannot build the JSON summary (out of memory, or a name "
                          "that is not UTF-8)");
    util_buf_printf(out, "%s\n", text);
    free(text);
    return 0;
}

/* ------------------------------------------------------------------ text */

static void text_tensors(UtilBuf *out, const IrGraph *g, const char *title, const int *idx, int n)
{
    util_buf_printf(out, "%s:\n", title);
    for (int i = 0; i < n; i++) {
        const IrTensor *t = &g->tensors[idx[i]];
        char shape[256];
        ir_shape_str(&t->v.shape, shape, sizeof shape);
        util_buf_printf(out, "  %s: %s %s\n", t->name, ir_dtype_name(t->v.dtype), shape);
    }
}

static void info_text(const IrGraph *g, const InfoStats *before, const InfoStats *s, const LoopProgram *p,
                      int opt_level, UtilBuf *out)
{
    int64_t workspace = p ? p->workspace_bytes : -1;
    util_buf_printf(out, "model: %s (opset %d)\n", g->name ? g->name : "", g->opset);
    util_buf_printf(out, "opt level: -O%d\n", opt_level);
    text_tensors(out, g, "inputs", g->inputs, g->n_inputs);
    text_tensors(out, g, "outputs", g->outputs, g->n_outputs);
    util_buf_printf(out, "nodes: %d", s->nodes);
    if (before->nodes != s->nodes)
        util_buf_printf(out, " (%d before optimization)", before->nodes);
    util_buf_printf(out, "\nops:\n");
    for (int k = 0; k < s->n_ops; k++) {
        int op = s->order[k];
        util_buf_printf(out, "  %-24s %d", ir_op_name(op), s->op_count[op]);
        if (before->op_count[op] != s->op_count[op])
            util_buf_printf(out, " (%d before optimization)", before->op_count[op]);
        util_buf_printf(out, "\n");
    }
    for (int op = 1; op < IR_OP_COUNT; op++)
        if (before->op_count[op] && !s->op_count[op])
            util_buf_printf(out, "  %-24s 0 (%d before optimization)\n", ir_op_name(op), before->op_count[op]);
    util_buf_printf(out, "params: %lld in %d initializers (%lld bytes)\n", (long long)s->params,
                    s->initializers, (long long)s->weights_bytes);
    util_buf_printf(out, "flops: %lld (%.3g)\n", (long long)s->flops, (double)s->flops);
    if (p)
        util_buf_printf(out, "kernels: %d (%d nodes fused into another node's kernel)\n", p->n_kernels,
                        fused_nodes(g));
    if (workspace >= 0)
        util_buf_printf(out, "workspace: %lld bytes (lower bound %lld)\n", (long long)workspace,
                        (long long)low_workspace_lower_bound(p));
}

int dlcc_info_render(IrGraph *g, int opt_level, int json, UtilBuf *out, UtilDiag *d)
{
    InfoStats *s = malloc(2 * sizeof *s);
    if (!s)
        return util_error(d, util_loc_file(g->file), "out of memory");
    info_collect(g, &s[0]);
    PassOptions po = pass_options(opt_level);
    if (pass_run_pipeline(g, &po, d)) {
        free(s);
        return -1;
    }
    info_collect(g, &s[1]);
    LoopProgram *p = planned(g, opt_level);
    int rc = 0;
    if (json)
        rc = info_json(g, &s[0], &s[1], p, opt_level, out, d);
    else
        info_text(g, &s[0], &s[1], p, opt_level, out);
    if (p)
        loop_program_free(p);
    free(s);
    if (!rc && out->oom)
        rc = util_error(d, util_loc_file(g->file), "out of memory");
    return rc;
}

int dlcc_cmd_info(int argc, char **argv)
{
    int json = 0, level = 2;
    DlccArgs a;
    dlcc_args_init(&a, argc, argv, "info");
    for (; a.i < argc && !a.status; a.i++) {
        if (dlcc_arg_common(&a))
            continue;
        else if (dlcc_arg_flag(&a, "--json"))
            json = 1;
        else if (dlcc_arg_opt_level(argv[a.i]) >= 0)
            level = dlcc_arg_opt_level(argv[a.i]);
        else
            dlcc_arg_unknown(&a);
    }
    IrGraph *g;
    int status = dlcc_args_load(&a, &g);
    if (status)
        return status;
    UtilDiag d;
    util_diag_init(&d);
    UtilBuf out;
    util_buf_init(&out);
    int rc = dlcc_info_render(g, level, json, &out, &d);
    if (!rc)
        rc = dlcc_write_stdout(&out, &d);
    util_buf_free(&out);
    ir_graph_free(g);
    return rc ? dlcc_report(&d) : 0;
}
