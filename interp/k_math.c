/* STUB: to be replaced by the implementation. */
#include "interp/kernels.h"

int interp_k_unary(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out, UtilDiag *d) { (void)in; (void)out; return ir_node_error(g, n, d, "kernel not implemented"); }
int interp_k_clip(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out, UtilDiag *d) { (void)in; (void)out; return ir_node_error(g, n, d, "kernel not implemented"); }
int interp_k_cast(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out, UtilDiag *d) { (void)in; (void)out; return ir_node_error(g, n, d, "kernel not implemented"); }
int interp_k_dropout(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out, UtilDiag *d) { (void)in; (void)out; return ir_node_error(g, n, d, "kernel not implemented"); }
int interp_k_binary(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out, UtilDiag *d) { (void)in; (void)out; return ir_node_error(g, n, d, "kernel not implemented"); }
int interp_k_variadic(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out, UtilDiag *d) { (void)in; (void)out; return ir_node_error(g, n, d, "kernel not implemented"); }
int interp_k_where(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out, UtilDiag *d) { (void)in; (void)out; return ir_node_error(g, n, d, "kernel not implemented"); }
int interp_k_reduce(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out, UtilDiag *d) { (void)in; (void)out; return ir_node_error(g, n, d, "kernel not implemented"); }
int interp_k_argreduce(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out, UtilDiag *d) { (void)in; (void)out; return ir_node_error(g, n, d, "kernel not implemented"); }
int interp_k_softmax(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out, UtilDiag *d) { (void)in; (void)out; return ir_node_error(g, n, d, "kernel not implemented"); }
int interp_k_batchnorm(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out, UtilDiag *d) { (void)in; (void)out; return ir_node_error(g, n, d, "kernel not implemented"); }
int interp_k_instancenorm(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out, UtilDiag *d) { (void)in; (void)out; return ir_node_error(g, n, d, "kernel not implemented"); }
int interp_k_layernorm(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out, UtilDiag *d) { (void)in; (void)out; return ir_node_error(g, n, d, "kernel not implemented"); }
int interp_k_lpnorm(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out, UtilDiag *d) { (void)in; (void)out; return ir_node_error(g, n, d, "kernel not implemented"); }
int interp_k_matmul(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out, UtilDiag *d) { (void)in; (void)out; return ir_node_error(g, n, d, "kernel not implemented"); }
int interp_k_gemm(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out, UtilDiag *d) { (void)in; (void)out; return ir_node_error(g, n, d, "kernel not implemented"); }
