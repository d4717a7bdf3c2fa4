/* STUB: to be replaced by the implementation. */
#include "ir/infer_impl.h"

int ir_infer_conv(IrGraph *g, IrNode *n, UtilDiag *d) { (void)g; return ir_node_error(g, n, d, "shape rule not implemented"); }
int ir_infer_convtranspose(IrGraph *g, IrNode *n, UtilDiag *d) { (void)g; return ir_node_error(g, n, d, "shape rule not implemented"); }
int ir_infer_pool(IrGraph *g, IrNode *n, UtilDiag *d) { (void)g; return ir_node_error(g, n, d, "shape rule not implemented"); }
int ir_infer_globalpool(IrGraph *g, IrNode *n, UtilDiag *d) { (void)g; return ir_node_error(g, n, d, "shape rule not implemented"); }
