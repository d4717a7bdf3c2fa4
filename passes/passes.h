/* passes/ — graph-level passes.  Prefix: pass_.
 * Today: type/shape inference with compile-time value propagation, the entry
 * every frontend's output goes through before anything else runs. */
#ifndef DLCC_PASSES_H
#define DLCC_PASSES_H

#include "ir/ir.h"

/* Values of at most this many elements are computed at compile time when all
 * inputs of their node are known (shape arithmetic: Shape → Gather → Concat). */
#define PASS_PROPAGATE_MAX_ELEMENTS 65536

/* Orders the graph topologically, infers every tensor's dtype and shape, and
 * computes small values whose inputs are all known; then verifies the graph.
 * Errors name the offending node or tensor. */
int pass_infer(IrGraph *g, UtilDiag *d);

#endif
