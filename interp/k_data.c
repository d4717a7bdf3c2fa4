/* STUB: to be replaced by the implementation. */
#include "interp/kernels.h"

int interp_k_copy(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out, UtilDiag *d) { (void)in; (void)out; return ir_node_error(g, n, d, "kernel not implemented"); }
int interp_k_transpose(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out, UtilDiag *d) { (void)in; (void)out; return ir_node_error(g, n, d, "kernel not implemented"); }
int interp_k_concat(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out, UtilDiag *d) { (void)in; (void)out; return ir_node_error(g, n, d, "kernel not implemented"); }
int interp_k_split(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out, UtilDiag *d) { (void)in; (void)out; return ir_node_error(g, n, d, "kernel not implemented"); }
int interp_k_slice(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out, UtilDiag *d) { (void)in; (void)out; return ir_node_error(g, n, d, "kernel not implemented"); }
int interp_k_gather(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out, UtilDiag *d) { (void)in; (void)out; return ir_node_error(g, n, d, "kernel not implemented"); }
int interp_k_gatherelements(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out, UtilDiag *d) { (void)in; (void)out; return ir_node_error(g, n, d, "kernel not implemented"); }
int interp_k_gathernd(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out, UtilDiag *d) { (void)in; (void)out; return ir_node_error(g, n, d, "kernel not implemented"); }
int interp_k_shape(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out, UtilDiag *d) { (void)in; (void)out; return ir_node_error(g, n, d, "kernel not implemented"); }
int interp_k_constant(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out, UtilDiag *d) { (void)in; (void)out; return ir_node_error(g, n, d, "kernel not implemented"); }
int interp_k_constantofshape(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out, UtilDiag *d) { (void)in; (void)out; return ir_node_error(g, n, d, "kernel not implemented"); }
int interp_k_pad(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out, UtilDiag *d) { (void)in; (void)out; return ir_node_error(g, n, d, "kernel not implemented"); }
int interp_k_expand(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out, UtilDiag *d) { (void)in; (void)out; return ir_node_error(g, n, d, "kernel not implemented"); }
int interp_k_tile(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out, UtilDiag *d) { (void)in; (void)out; return ir_node_error(g, n, d, "kernel not implemented"); }
int interp_k_range(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out, UtilDiag *d) { (void)in; (void)out; return ir_node_error(g, n, d, "kernel not implemented"); }
int interp_k_depthtospace(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out, UtilDiag *d) { (void)in; (void)out; return ir_node_error(g, n, d, "kernel not implemented"); }
int interp_k_spacetodepth(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out, UtilDiag *d) { (void)in; (void)out; return ir_node_error(g, n, d, "kernel not implemented"); }
int interp_k_resize(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out, UtilDiag *d) { (void)in; (void)out; return ir_node_error(g, n, d, "kernel not implemented"); }
