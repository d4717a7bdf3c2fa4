/* ir/verify.c — structural invariants of a graph after inference. */
#include "ir/ir.h"

#include <stdlib.h>
#include <string.h>

static int check_attr(const IrGraph *g, const IrNode *n, const IrAttr *a, UtilDiag *d)
{
    IrAttrKind want = ir_op_attr_kind(n->op, a->key);
    if (want == IR_AK_NONE)
        return ir_node_error(g, n, d, "%s has no attribute '%s'", ir_op_name(n->op), ir_attr_name(a->key));
    /* an INT attribute may stand where a FLOAT is declared (docs/model-format.md) */
    if (a->kind != want && !(want == IR_AK_FLOAT && a->kind == IR_AK_INT))
        return ir_node_error(g, n, d, "attribute '%s' must be of kind %s, not %s", ir_attr_name(a->key),
                             ir_attr_kind_name(want), ir_attr_kind_name(a->kind));
    return 0;
}

int ir_verify(const IrGraph *g, UtilDiag *d)
{
    int nt = g->n_tensors;
    int *def = malloc(((size_t)nt + 1) * sizeof(int));     /* node defining each tensor, in order */
    if (!def)
        return util_error(d, util_loc_file(g->file), "out of memory");
    for (int t = 0; t < nt; t++) {
        const IrTensor *x = &g->tensors[t];
        def[t] = x->kind == IR_TK_VALUE ? -2 : -1;          /* -2: not yet defined */
        if (x->kind == IR_TK_CONST && !x->v.data) {
            free(def);
            return util_error(d, x->loc, "initializer '%s' has no data", x->name);
        }
    }
    int rc = 0;
    for (int i = 0; i < g->n_nodes && !rc; i++) {
        const IrNode *n = &g->nodes[i];
        const IrOpInfo *info = ir_op_info(n->op);
        if (n->dead)
            continue;
        if (!info) {
            rc = ir_node_error(g, n, d, "invalid operator");
            break;
        }
        if (n->n_in < info->min_in || n->n_in > info->max_in || n->n_out < info->min_out ||
            n->n_out > info->max_out) {
            rc = ir_node_error(g, n, d, "wrong number of inputs or outputs (%d, %d)", n->n_in, n->n_out);
            break;
        }
        for (int k = 0; k < n->n_in && !rc; k++) {
            int t = n->in[k];
            if (t < -1 || t >= nt)
                rc = ir_node_error(g, n, d, "input %d refers to no tensor", k + 1);
            else if (t >= 0 && def[t] == -2)
                rc = ir_node_error(g, n, d, "input '%s' is used before it is defined (or never defined)",
                                   g->tensors[t].name);
        }
        for (int k = 0; k < n->n_out && !rc; k++) {
            int t = n->out[k];
            if (t < -1 || t >= nt)
                rc = ir_node_error(g, n, d, "output %d refers to no tensor", k + 1);
            else if (t >= 0 && def[t] != -2)
                rc = ir_node_error(g, n, d, "output '%s' is defined twice (or is a graph input or initializer)",
                                   g->tensors[t].name);
            else if (t >= 0) {
                def[t] = i;
                if (!g->tensors[t].shape_known)
                    rc = ir_node_error(g, n, d, "output '%s' has no inferred type", g->tensors[t].name);
            }
        }
        for (int a = 0; a < n->n_attrs && !rc; a++)
            rc = check_attr(g, n, &n->attrs[a], d);
    }
    for (int o = 0; o < g->n_outputs && !rc; o++) {
        int t = g->outputs[o];
        if (t < 0 || t >= nt || def[t] == -2)
            rc = util_error(d, util_loc_file(g->file), "graph output '%s' is never produced",
                            t >= 0 && t < nt ? g->tensors[t].name : "?");
    }
    for (int i = 0; i < g->n_inputs && !rc; i++) {
        const IrTensor *x = &g->tensors[g->inputs[i]];
        if (!x->shape_known || x->v.dtype == IR_DT_UNDEF)
            rc = util_error(d, x->loc, "graph input '%s' has no dtype or shape", x->name);
    }
    free(def);
    return rc;
}
