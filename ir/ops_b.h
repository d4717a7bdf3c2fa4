/* ir/ops_b.h — operand arithmetic shared by the shape rules (ir/infer_opsB.c)
 * and the reference kernels (interp/k_scatter.c, k_sample.c, k_signal.c) of
 * the scatter, indexing, sampling and signal operators, so both resolve
 * attributes and geometry the same way.  Each returns -1 with a diagnostic
 * naming the node on invalid operands. */
#ifndef DLCC_IR_OPS_B_H
#define DLCC_IR_OPS_B_H

#include "ir/ir.h"

/* ScatterElements / ScatterND reduction: 0 none, 1 add, 2 mul, 3 max, 4 min;
 * -1 if unknown (Scatter: always 0). */
int ir_scatter_reduction(const IrNode *n);

/* Compress: number of true values of cond (bool, 1-D) selecting an element of
 * an axis of length dim; a true value beyond dim is an error. */
int64_t ir_compress_count(const IrGraph *g, const IrNode *n, const IrArray *cond, int64_t dim, UtilDiag *d);

/* CenterCropPad: normalized axes (attribute, or 0..rank-1) into ax; count. */
int ir_centercrop_axes(const IrGraph *g, const IrNode *n, int rank, int *ax, UtilDiag *d);

/* MaxUnpool: the unpooled shape implied by kernel_shape/strides/pads (the
 * shape the flat indices address). */
int ir_maxunpool_shape(const IrGraph *g, const IrNode *n, const IrShape *x, IrShape *inferred, UtilDiag *d);

/* Col2Im geometry: image position of block element k at block position b on
 * axis i is  b * stride[i] - pad[i] + k * dil[i]. */
typedef struct IrColGeom {
    int rank;                          /* spatial axes */
    int64_t channels, kprod, blocks;   /* C, prod(block_shape), L */
    int64_t img[IR_MAX_RANK], blk[IR_MAX_RANK], dil[IR_MAX_RANK], stride[IR_MAX_RANK], pad[IR_MAX_RANK];
    int64_t cnt[IR_MAX_RANK];          /* blocks along each axis */
} IrColGeom;
int ir_col2im_geometry(const IrGraph *g, const IrNode *n, const IrShape *x, const int64_t *img,
                       const int64_t *blk, int sp, IrColGeom *c, UtilDiag *d);

/* GridSample: mode 0 nearest, 1 linear, 2 cubic; pad 0 zeros, 1 border,
 * 2 reflection (opset-16 names bilinear/bicubic accepted). */
int ir_gridsample_modes(const IrGraph *g, const IrNode *n, int *mode, int *pad, UtilDiag *d);

/* Longest DFT / STFT frame: k * t products of the direct sum stay in int64. */
#define IR_MAX_DFT_LENGTH ((int64_t)1 << 31)

/* DFT: the transformed axis and the DFT length (len / axis_in may be NULL or
 * empty: axis -2; DFT-17's axis attribute is read when fe_upgrade has not
 * moved it to input 3). */
int ir_dft_params(const IrGraph *g, const IrNode *n, const IrArray *x, const IrArray *len, const IrArray *axis_in,
                  int *axis, int64_t *length, UtilDiag *d);

/* STFT: output shape [batch, frames, bins, 2] from the signal shape, hop,
 * window shape (or NULL) and frame length (or NULL). */
int ir_stft_params(const IrGraph *g, const IrNode *n, const IrShape *x, int64_t step, const IrShape *win,
                   const int64_t *frame_len, IrShape *out, UtilDiag *d);

#endif
