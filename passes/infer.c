/* passes/infer.c — topological order, shape inference, value propagation. */
#include "passes/passes.h"
#include "interp/interp.h"

#include <stdlib.h>
#include <string.h>

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

int pass_infer_bound(IrGraph *g, const IrArray *values, char *bound, UtilDiag *d)
{
    int ni = g->n_inputs, rc = -1;
    int *orig = malloc(((size_t)ni + 1) * sizeof *orig);
    char *mark = malloc((size_t)g->n_tensors + 1);
    if (!orig || !mark) {
        free(orig);
        free(mark);
        return util_error(d, util_loc_file(g->file), "out of memory");
    }
    memcpy(orig, g->inputs, (size_t)ni * sizeof *orig);
    memset(bound, 0, (size_t)ni);
    for (;;) {                          /* each round binds at least one input: at most ni + 1 rounds */
        g->need_value = -1;
        if (!pass_infer(g, d)) {
            rc = 0;
            break;
        }
        if (g->need_value < 0)
            break;
        memset(mark, 0, (size_t)g->n_tensors);
        ir_mark_ancestors(g, g->need_value, mark);
        int more = 0;
        for (int i = 0; i < ni; i++)
            if (!bound[i] && values[i].data && mark[orig[i]]) {
                UtilDiag d2;
                util_diag_init(&d2);
                if (ir_bind_input(g, orig[i], &values[i], &d2)) {
                    *d = d2;
                    goto out;
                }
                bound[i] = 1;
                more = 1;
            }
        if (!more)
            break;                      /* d says which value was needed */
        util_diag_init(d);
    }
out:
    free(orig);
    free(mark);
    return rc;
}
