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

/* The checks of operands that rules of several families make
 * (ir/infer_check.c): each returns 0, or -1 with an error naming the node.
 * need_float / need_numeric / need_int: input i, when present, has such a
 * dtype; same_dtype: inputs i and j agree; need_channels: a 1-D
 * floating-point input of c elements (per-channel parameters); need_vec: a
 * 1-D input of len elements; unidir: b broadcasts to a; const_scalar: input
 * i is a known one-element integer; present: input i is given;
 * onnx_dtype_attr: an ONNX TensorProto dtype attribute (dflt when absent);
 * shape_s: a shape as text for messages; expect_*: tensor t (operand
 * `what`) has that shape / dtype / a float dtype, attribute k is 0 or 1. */
int ir_infer_need_float(IrGraph *g, IrNode *n, int i, UtilDiag *d);
int ir_infer_need_numeric(IrGraph *g, IrNode *n, int i, UtilDiag *d);
int ir_infer_same_dtype(IrGraph *g, IrNode *n, int i, int j, UtilDiag *d);
int ir_infer_need_channels(IrGraph *g, IrNode *n, int i, const char *what, int64_t c, UtilDiag *d);
int ir_infer_unidir(IrGraph *g, IrNode *n, const IrShape *a, const IrShape *b, UtilDiag *d);
int ir_infer_need_int(IrGraph *g, IrNode *n, int i, const char *what, UtilDiag *d);
int ir_infer_need_vec(IrGraph *g, IrNode *n, int i, const char *what, int64_t len, UtilDiag *d);
int ir_infer_const_scalar(IrGraph *g, IrNode *n, int i, const char *what, int64_t *v, UtilDiag *d);
int ir_infer_present(const IrNode *n, int i);
IrDType ir_infer_onnx_dtype_attr(IrGraph *g, IrNode *n, IrAttrKey key, IrDType dflt, UtilDiag *d);
const char *ir_infer_shape_s(const IrShape *s, char *buf, size_t cap);
int ir_infer_expect_shape(const IrGraph *g, const IrNode *n, const IrTensor *t, const char *what, const IrShape *want,
                        UtilDiag *d);
int ir_infer_expect_dtype(const IrGraph *g, const IrNode *n, const IrTensor *t, const char *what, IrDType want,
                        UtilDiag *d);
int ir_infer_expect_float(const IrGraph *g, const IrNode *n, const IrTensor *t, const char *what, UtilDiag *d);
int ir_infer_expect_bool_attr(const IrGraph *g, const IrNode *n, IrAttrKey k, UtilDiag *d);
/* Indices ind must be int32/int64; when their values are known (a constant
 * index is checked at compile time; a runtime one is the kernel's) and dims
 * is not NULL, element i must lie in [-dim, dim) for dim = dims[i % m]. */
int ir_infer_check_indices(IrGraph *g, IrNode *n, const IrTensor *ind, const int64_t *dims, int64_t m, UtilDiag *d);

#endif
