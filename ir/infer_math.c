/* STUB: to be replaced by the implementation. */
#include "ir/infer_impl.h"

int ir_infer_unary(IrGraph *g, IrNode *n, UtilDiag *d) { (void)g; return ir_node_error(g, n, d, "shape rule not implemented"); }
int ir_infer_tobool(IrGraph *g, IrNode *n, UtilDiag *d) { (void)g; return ir_node_error(g, n, d, "shape rule not implemented"); }
int ir_infer_cast(IrGraph *g, IrNode *n, UtilDiag *d) { (void)g; return ir_node_error(g, n, d, "shape rule not implemented"); }
int ir_infer_castlike(IrGraph *g, IrNode *n, UtilDiag *d) { (void)g; return ir_node_error(g, n, d, "shape rule not implemented"); }
int ir_infer_dropout(IrGraph *g, IrNode *n, UtilDiag *d) { (void)g; return ir_node_error(g, n, d, "shape rule not implemented"); }
int ir_infer_broadcast(IrGraph *g, IrNode *n, UtilDiag *d) { (void)g; return ir_node_error(g, n, d, "shape rule not implemented"); }
int ir_infer_pow(IrGraph *g, IrNode *n, UtilDiag *d) { (void)g; return ir_node_error(g, n, d, "shape rule not implemented"); }
int ir_infer_compare(IrGraph *g, IrNode *n, UtilDiag *d) { (void)g; return ir_node_error(g, n, d, "shape rule not implemented"); }
int ir_infer_where(IrGraph *g, IrNode *n, UtilDiag *d) { (void)g; return ir_node_error(g, n, d, "shape rule not implemented"); }
int ir_infer_reduce(IrGraph *g, IrNode *n, UtilDiag *d) { (void)g; return ir_node_error(g, n, d, "shape rule not implemented"); }
int ir_infer_argreduce(IrGraph *g, IrNode *n, UtilDiag *d) { (void)g; return ir_node_error(g, n, d, "shape rule not implemented"); }
int ir_infer_batchnorm(IrGraph *g, IrNode *n, UtilDiag *d) { (void)g; return ir_node_error(g, n, d, "shape rule not implemented"); }
int ir_infer_layernorm(IrGraph *g, IrNode *n, UtilDiag *d) { (void)g; return ir_node_error(g, n, d, "shape rule not implemented"); }
int ir_infer_matmul(IrGraph *g, IrNode *n, UtilDiag *d) { (void)g; return ir_node_error(g, n, d, "shape rule not implemented"); }
int ir_infer_gemm(IrGraph *g, IrNode *n, UtilDiag *d) { (void)g; return ir_node_error(g, n, d, "shape rule not implemented"); }
