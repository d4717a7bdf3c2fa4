/* STUB: to be replaced by the implementation. */
#include "interp/kernels.h"

int interp_k_conv(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out, UtilDiag *d) { (void)in; (void)out; return ir_node_error(g, n, d, "kernel not implemented"); }
int interp_k_convtranspose(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out, UtilDiag *d) { (void)in; (void)out; return ir_node_error(g, n, d, "kernel not implemented"); }
int interp_k_maxpool(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out, UtilDiag *d) { (void)in; (void)out; return ir_node_error(g, n, d, "kernel not implemented"); }
int interp_k_avgpool(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out, UtilDiag *d) { (void)in; (void)out; return ir_node_error(g, n, d, "kernel not implemented"); }
int interp_k_lppool(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out, UtilDiag *d) { (void)in; (void)out; return ir_node_error(g, n, d, "kernel not implemented"); }
int interp_k_globalpool(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out, UtilDiag *d) { (void)in; (void)out; return ir_node_error(g, n, d, "kernel not implemented"); }
