/* passes/fold.c — constant folding: every node whose inputs are all known at
 * compile time (initializers, values pass_infer propagated, or only input
 * shapes for Shape / Size) is evaluated by the reference interpreter and its
 * outputs become initializers.  Shape arithmetic (Shape → Gather → Concat →
 * Reshape's shape operand) and ConstantOfShape weights fold away; outputs
 * over PASS_FOLD_MAX_BYTES stay kernels.  A node the interpreter cannot
 * evaluate (an operator or dtype its kernels refuse) stays too: folding is an
 * optimization, and the target may still support the node. */
#include "passes/pass_impl.h"

int pass_fold_constants(IrGraph *g, UtilDiag *d)
{
    int changes = 0;
    for (int i = 0; i < g->n_nodes; i++) {          /* topological: folds propagate forward */
        if (!pass_foldable(g, i))
            continue;
        UtilDiag e;
        util_diag_init(&e);
        if (pass_fold_node(g, i, &e))
            continue;
        changes++;
    }
    return pass_finish(g, changes, d);
}
