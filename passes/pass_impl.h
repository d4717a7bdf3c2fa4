/* passes/pass_impl.h — private to passes/: the graph rewriting helpers the
 * optimization passes share (passes/rewrite.c).
 *
 * A pass marks nodes dead and appends new ones; node order is restored and
 * dead nodes / unreferenced tensors are dropped by pass_finish at the end of
 * the pass.  Pointers into g->nodes / g->tensors die when a node or tensor
 * is added: hold indices. */
#ifndef DLCC_PASS_IMPL_H
#define DLCC_PASS_IMPL_H

#include "passes/passes.h"

/* The value of tensor t when known at compile time (initializer or
 * propagated value), else NULL. */
const IrArray *pass_value(const IrGraph *g, int t);
/* 1 when t is known and every element equals v (compared in double). */
int pass_value_is(const IrGraph *g, int t, double v);
/* 1 when t is known and all its elements are equal; stores that value. */
int pass_value_uniform(const IrGraph *g, int t, double *v);

/* A new CONST tensor (fresh name from hint) of dtype/shape with zeroed
 * data; -1 on out of memory. */
int pass_new_const(IrGraph *g, const char *hint, IrDType dt, const IrShape *s);
/* A 1-D int64 constant holding v[0..n). */
int pass_const_ints(IrGraph *g, const char *hint, int n, const int64_t *v);
/* A rank-0 constant of dtype dt holding v. */
int pass_const_scalar(IrGraph *g, const char *hint, IrDType dt, double v);

/* Appends node op(in[0..n_in)) with n_out fresh outputs named after hint,
 * copying the attributes of node attrs_from (-1: none), and infers it.  When
 * all inputs are known and the outputs are small, the node is evaluated at
 * once and its outputs become initializers (the node is not kept).  Returns
 * the first output tensor, or -1 with a diagnostic. */
int pass_emit(IrGraph *g, IrOp op, const char *hint, int n_in, const int *in, int n_out, int attrs_from,
              UtilLoc loc, UtilDiag *d);
/* Like pass_emit but returns the node index (so attributes can be set
 * before pass_emit_done infers and maybe folds it). */
int pass_emit_node(IrGraph *g, IrOp op, const char *hint, int n_in, const int *in, int n_out, int attrs_from,
                   UtilLoc loc);
int pass_emit_done(IrGraph *g, int node, UtilDiag *d);

/* Replaces every use of tensor `from` by `to` (same dtype and shape).  When
 * `from` is a graph output its name is kept: the producer of `to` writes
 * `from` instead, or `from` becomes a copy of `to`'s known value.  Returns 0,
 * or -1 when that is impossible (`to` is a graph input or output): nothing
 * changed then.  The caller kills from's producer. */
int pass_replace(IrGraph *g, int from, int to);

/* A rewrite's end: tensor `old` replaced by `y` (pass_replace) and the nodes
 * dead[0..n) killed (-1 entries skipped), when y has old's dtype and shape
 * and the replacement is possible: 1.  Otherwise every node added since
 * index first_new dies and nothing else changes: 0. */
int pass_commit(IrGraph *g, int old, int y, int first_new, const int *dead, int n);

/* 1 when t is consumed by exactly one live node input and is no graph output. */
int pass_single_use(IrGraph *g, int t);

/* Evaluates node i (all inputs known) and turns its outputs into
 * initializers; the node dies.  0, or -1 with a diagnostic. */
int pass_fold_node(IrGraph *g, int i, UtilDiag *d);
/* 1 when node i has only known inputs (or only needs input shapes) and its
 * outputs fit PASS_FOLD_MAX_BYTES. */
int pass_foldable(const IrGraph *g, int i);

/* End of a pass: drop dead nodes and unreferenced tensors, restore the
 * topological order.  Returns `changes`, or -1 with a diagnostic. */
int pass_finish(IrGraph *g, int changes, UtilDiag *d);

#endif
