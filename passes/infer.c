/* passes/infer.c — topological order, shape inference, value propagation. */
#include "passes/passes.h"
#include "interp/interp.h"

static int all_inputs_known(const IrGraph *g, const IrNode *n)
{
    if (ir_op_info(n->op)->flags & IR_OPF_SHAPEVAL)
        return 1;                      /* Shape, Size: the value is the input's (known) shape */
    for (int k = 0; k < n->n_in; k++)
        if (n->in[k] >= 0 && !g->tensors[n->in[k]].v.data)
            return 0;
    return 1;
}

static int outputs_small(const IrGraph *g, const IrNode *n)
{
    int64_t total = 0;
    for (int k = 0; k < n->n_out; k++) {
        const IrTensor *t = ir_out(g, n, k);
        if (t)
            total += ir_shape_numel(&t->v.shape);
    }
    return total <= PASS_PROPAGATE_MAX_ELEMENTS;
}

int pass_infer(IrGraph *g, UtilDiag *d)
{
    if (ir_toposort(g, d))
        return -1;
    for (int t = 0; t < g->n_tensors; t++)          /* the tensor limits (docs/limits.md); outputs: ir_infer_node */
        if (g->tensors[t].kind != IR_TK_VALUE && g->tensors[t].shape_known && ir_check_tensor(g, NULL, t, d))
            return -1;
    for (int i = 0; i < g->n_nodes; i++) {
        if (ir_infer_node(g, i, d))
            return -1;
        const IrNode *n = &g->nodes[i];
        if (all_inputs_known(g, n) && outputs_small(g, n) && interp_eval_node(g, i, d))
            return -1;
    }
    for (int o = 0; o < g->n_outputs; o++) {
        const IrTensor *t = &g->tensors[g->outputs[o]];
        if (!t->shape_known)
            return util_error(d, t->loc, "graph output '%s' is never produced", t->name);
    }
    return ir_verify(g, d);
}
