/* ir/infer_impl.h — private to ir/: the shape-rule functions named in ops.def.
 * Each takes the node (its inputs' dtypes/shapes, and data where known) and
 * sets its outputs' dtype and shape with ir_set_type, or records an error
 * naming the node. */
#ifndef DLCC_IR_INFER_IMPL_H
#define DLCC_IR_INFER_IMPL_H

#include "ir/ir.h"

#define OP(name, mi, ma, mo, mao, inf, ev, low, fl, doc) int ir_infer_##inf(IrGraph *g, IrNode *n, UtilDiag *d);
#include "ir/ops.def"
#undef OP

/* Shared helpers for rule implementations (ir/infer.c). */

/* Input i must be present with a known value: fills vals (int64) and count.
 * `what` names the operand in the error. Returns count or -1. */
int ir_infer_const_ints(IrGraph *g, IrNode *n, int i, const char *what, int64_t *vals, int max,
                        UtilDiag *d);
/* Same for float operands (scales). */
int ir_infer_const_floats(IrGraph *g, IrNode *n, int i, const char *what, double *vals, int max,
                          UtilDiag *d);
/* Output shape [N, M, spatial out...] of a Conv-like window (ir/infer_nn.c). */
void ir_infer_window_shape(const IrWindow *win, IrShape *y);
/* Sets output k to dtype/shape. */
void ir_infer_set(IrGraph *g, IrNode *n, int k, IrDType dt, const IrShape *s);

#endif
