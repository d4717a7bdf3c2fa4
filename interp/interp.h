/* interp/ — the reference interpreter: naive, obviously-correct execution of
 * the graph IR, one kernel per operator family.  It is `dlcc run`'s default
 * backend, the evaluator behind compile-time value propagation, and the oracle
 * every target is checked against.  Prefix: interp_.
 */
#ifndef DLCC_INTERP_H
#define DLCC_INTERP_H

#include "ir/ir.h"

/* Runs graph g (types inferred, nodes in topological order).
 * inputs[i] corresponds to g->inputs[i]; dtype and shape must match exactly.
 * outputs[i] receives g->outputs[i]: dtype/shape set and data malloc'd
 * (free each with interp_array_free).  Returns 0 or -1 with a diagnostic. */
int interp_run(const IrGraph *g, const IrArray *inputs, IrArray *outputs, UtilDiag *d);

/* Evaluates one node whose inputs all have known data (tensor v.data),
 * storing each output's value into the graph (arena-allocated data). */
int interp_eval_node(IrGraph *g, int node, UtilDiag *d);

void interp_array_free(IrArray *a);

#endif
