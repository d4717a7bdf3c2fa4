/* passes/identity.c — removes operators that compute nothing at inference:
 * Identity (y = x) and Dropout whose training_mode is absent or a known
 * false (y = x; a used mask output becomes a constant all-true tensor).
 * A node whose output is a graph output and whose input is a graph input
 * stays: the output needs its own buffer and name. */
#include "passes/pass_impl.h"

#include <string.h>

static int inference_dropout(const IrGraph *g, const IrNode *n)
{
    if (n->n_in < 3 || n->in[2] < 0)
        return 1;
    return pass_value_is(g, n->in[2], 0.0);
}

int pass_remove_identity(IrGraph *g, UtilDiag *d)
{
    int changes = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        IrNode *n = &g->nodes[i];
        if (n->dead || (n->op != IR_OP_Identity && !(n->op == IR_OP_Dropout && inference_dropout(g, n))))
            continue;
        int x = n->in[0], y = n->out[0], mask = n->n_out > 1 ? n->out[1] : -1;
        int mask_used = 0;
        if (mask >= 0) {
            if (ir_build_uses(g))
                return util_error(d, util_loc_file(g->file), "out of memory");
            mask_used = ir_use_count(g, mask) > 0;
            if (mask_used && (int64_t)ir_array_bytes(&g->tensors[mask].v) > PASS_FOLD_MAX_BYTES)
                continue;
        }
        if (pass_replace(g, y, x))
            continue;
        if (mask_used) {
            /* the mask of inference Dropout is all true (bool) */
            IrShape s = g->tensors[mask].v.shape;
            int c = pass_new_const(g, g->tensors[mask].name, g->tensors[mask].v.dtype, &s);
            if (c < 0)
                return util_error(d, util_loc_file(g->file), "out of memory");
            memset(g->tensors[c].v.data, 1, ir_array_bytes(&g->tensors[c].v));
            pass_replace(g, mask, c);               /* never fails: c is a fresh constant */
        }
        g->nodes[i].dead = 1;
        changes++;
    }
    return pass_finish(g, changes, d);
}
