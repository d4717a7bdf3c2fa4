/* STUB: to be replaced by the implementation. */
#include "ir/infer_impl.h"

int ir_infer_reshape(IrGraph *g, IrNode *n, UtilDiag *d) { (void)g; return ir_node_error(g, n, d, "shape rule not implemented"); }
int ir_infer_flatten(IrGraph *g, IrNode *n, UtilDiag *d) { (void)g; return ir_node_error(g, n, d, "shape rule not implemented"); }
int ir_infer_squeeze(IrGraph *g, IrNode *n, UtilDiag *d) { (void)g; return ir_node_error(g, n, d, "shape rule not implemented"); }
int ir_infer_unsqueeze(IrGraph *g, IrNode *n, UtilDiag *d) { (void)g; return ir_node_error(g, n, d, "shape rule not implemented"); }
int ir_infer_transpose(IrGraph *g, IrNode *n, UtilDiag *d) { (void)g; return ir_node_error(g, n, d, "shape rule not implemented"); }
int ir_infer_concat(IrGraph *g, IrNode *n, UtilDiag *d) { (void)g; return ir_node_error(g, n, d, "shape rule not implemented"); }
int ir_infer_split(IrGraph *g, IrNode *n, UtilDiag *d) { (void)g; return ir_node_error(g, n, d, "shape rule not implemented"); }
int ir_infer_slice(IrGraph *g, IrNode *n, UtilDiag *d) { (void)g; return ir_node_error(g, n, d, "shape rule not implemented"); }
int ir_infer_gather(IrGraph *g, IrNode *n, UtilDiag *d) { (void)g; return ir_node_error(g, n, d, "shape rule not implemented"); }
int ir_infer_gatherelements(IrGraph *g, IrNode *n, UtilDiag *d) { (void)g; return ir_node_error(g, n, d, "shape rule not implemented"); }
int ir_infer_gathernd(IrGraph *g, IrNode *n, UtilDiag *d) { (void)g; return ir_node_error(g, n, d, "shape rule not implemented"); }
int ir_infer_shape(IrGraph *g, IrNode *n, UtilDiag *d) { (void)g; return ir_node_error(g, n, d, "shape rule not implemented"); }
int ir_infer_size(IrGraph *g, IrNode *n, UtilDiag *d) { (void)g; return ir_node_error(g, n, d, "shape rule not implemented"); }
int ir_infer_constant(IrGraph *g, IrNode *n, UtilDiag *d) { (void)g; return ir_node_error(g, n, d, "shape rule not implemented"); }
int ir_infer_constantofshape(IrGraph *g, IrNode *n, UtilDiag *d) { (void)g; return ir_node_error(g, n, d, "shape rule not implemented"); }
int ir_infer_pad(IrGraph *g, IrNode *n, UtilDiag *d) { (void)g; return ir_node_error(g, n, d, "shape rule not implemented"); }
int ir_infer_expand(IrGraph *g, IrNode *n, UtilDiag *d) { (void)g; return ir_node_error(g, n, d, "shape rule not implemented"); }
int ir_infer_tile(IrGraph *g, IrNode *n, UtilDiag *d) { (void)g; return ir_node_error(g, n, d, "shape rule not implemented"); }
int ir_infer_range(IrGraph *g, IrNode *n, UtilDiag *d) { (void)g; return ir_node_error(g, n, d, "shape rule not implemented"); }
int ir_infer_depthtospace(IrGraph *g, IrNode *n, UtilDiag *d) { (void)g; return ir_node_error(g, n, d, "shape rule not implemented"); }
int ir_infer_spacetodepth(IrGraph *g, IrNode *n, UtilDiag *d) { (void)g; return ir_node_error(g, n, d, "shape rule not implemented"); }
int ir_infer_resize(IrGraph *g, IrNode *n, UtilDiag *d) { (void)g; return ir_node_error(g, n, d, "shape rule not implemented"); }
