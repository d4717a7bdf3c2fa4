/* passes/dce.c — dead code elimination: a node none of whose outputs is
 * used by a live node or is a graph output is removed, back to front so
 * that whole dead chains go in one sweep.  Unreferenced tensors (initializers
 * nobody reads any more) are dropped with them. */
#include "passes/pass_impl.h"

#include <stdlib.h>

int pass_dce(IrGraph *g, UtilDiag *d)
{
    int changes = 0;
    if (ir_build_uses(g))
        return util_error(d, util_loc_file(g->file), "out of memory");
    int *uses = malloc(((size_t)g->n_tensors + 1) * sizeof *uses);
    if (!uses)
        return util_error(d, util_loc_file(g->file), "out of memory");
    for (int t = 0; t < g->n_tensors; t++)
        uses[t] = ir_use_count(g, t);
    for (int i = g->n_nodes - 1; i >= 0; i--) {
        IrNode *n = &g->nodes[i];
        if (n->dead)
            continue;
        int used = 0;
        for (int k = 0; k < n->n_out; k++)
            used |= n->out[k] >= 0 && uses[n->out[k]] > 0;
        if (used)
            continue;
        n->dead = 1;
        changes++;
        for (int k = 0; k < n->n_in; k++)
            if (n->in[k] >= 0)
                uses[n->in[k]]--;
    }
    free(uses);
    g->uses_valid = 0;
    /* tensors no live node refers to go even when no node died (a pass
     * before may have left replaced initializers behind) */
    int before = g->n_tensors;
    ir_compact(g);
    if (ir_toposort(g, d))
        return -1;
    return changes + (g->n_tensors != before);
}
