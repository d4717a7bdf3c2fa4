/* targets/report.c — NAME.report.json: what a compiled model costs. */
#include "targets/targets.h"
#include "codegen/codegen.h"
#include "lower/lower.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

int tgt_emit_report(const IrGraph *g, const LoopProgram *p, const TgtOptions *o, int64_t stack_bytes,
                    const char *target, UtilBuf *out, UtilDiag *d)
{
    json_t *root = json_object();
    json_t *kernels = json_array();
    int64_t weights = 0, flops = 0;
    for (int b = 0; b < p->n_bufs; b++)
        if (p->bufs[b].storage == LOOP_ST_CONST)
            weights += p->bufs[b].bytes;
    for (int k = 0; k < p->n_kernels; k++) {
        const LoopKernel *kn = &p->kernels[k];
        json_t *e = json_object();
        json_t *nodes = json_array(), *ops = json_array();
        for (int i = kn->first_node; i >= 0 && i < kn->first_node + kn->n_nodes && i < g->n_nodes; i++) {
            json_array_append_new(nodes, json_string(g->nodes[i].name[0] ? g->nodes[i].name
                                                                           : ir_op_name(g->nodes[i].op)));
            json_array_append_new(ops, json_string(ir_op_name(g->nodes[i].op)));
        }
        json_object_set_new(e, "name", json_string(kn->name));
        json_object_set_new(e, "nodes", nodes);      /* more than one: a fused group (passes/fuse.c) */
        json_object_set_new(e, "ops", ops);
        json_object_set_new(e, "flops", json_integer(kn->flops));
        json_array_append_new(kernels, e);
        flops += kn->flops;
    }
    json_object_set_new(root, "name", json_string(o->name));
    json_object_set_new(root, "model", json_string(g->name));
    json_object_set_new(root, "target", json_string(target));
    json_object_set_new(root, "triple", o->triple ? json_string(o->triple) : json_string("host"));
    json_object_set_new(root, "cpu", json_string(o->cpu ? o->cpu : "generic"));
    json_object_set_new(root, "features", json_string(o->features ? o->features : ""));
    json_object_set_new(root, "opt_level", json_integer(o->opt_level));
    json_object_set_new(root, "workspace_bytes", json_integer(p->workspace_bytes));
    json_object_set_new(root, "workspace_lower_bound", json_integer(low_workspace_lower_bound(p)));
    json_object_set_new(root, "weights_bytes", json_integer(weights));
    json_object_set_new(root, "stack_bytes", json_integer(stack_bytes >= 0 ? stack_bytes : tgt_stack_estimate(p)));
    json_object_set_new(root, "stack_bytes_from", json_string(stack_bytes >= 0 ? "llvm" : "estimate"));
    json_object_set_new(root, "static_workspace", json_boolean(o->static_workspace));
    json_object_set_new(root, "no_libm", json_boolean(o->no_libm));
    if (o->bf16) {                  /* --precision bf16: what ran the bfloat16 products (emulated: labelled) */
        CgOptions cgo = { .triple = o->triple, .cpu = o->cpu, .features = o->features };
        json_object_set_new(root, "precision", json_string("bf16"));
        json_object_set_new(root, "bf16_products",
                            json_string(cg_dot_bf16_bits(&cgo, 0) ? "VDPBF16PS (AVX512-BF16)"
                                                                  : "emulated (no AVX512-BF16 on the target: float32 "
                                                                    "multiply-adds of the rounded values)"));
    }
    json_object_set_new(root, "flops", json_integer(flops));
    json_object_set_new(root, "kernels", kernels);
    char *s = json_dumps(root, JSON_INDENT(2) | JSON_SORT_KEYS);
    json_decref(root);
    if (!s)
        return util_error(d, util_loc_file(g->file), "out of memory writing the report");
    util_buf_put(out, s, strlen(s));
    util_buf_put(out, "\n", 1);
    free(s);
    return 0;
}
