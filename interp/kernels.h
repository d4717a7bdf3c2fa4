/* interp/kernels.h — private to interp/: the kernels named in ir/ops.def.
 *
 * A kernel reads in[i] (NULL for an absent optional input) and writes out[k],
 * whose dtype and shape the graph's inference has already set and whose data
 * is allocated and zeroed (out[k] is NULL for an absent optional output).
 * Kernels read attributes through ir_attr_*; errors go through
 * ir_node_error(g, n, d, ...).  They never allocate outputs themselves. */
#ifndef DLCC_INTERP_KERNELS_H
#define DLCC_INTERP_KERNELS_H

#include "ir/ir.h"

typedef int (*InterpKernel)(const IrGraph *g, const IrNode *n, const IrArray *const *in,
                            IrArray *const *out, UtilDiag *d);

#define OP(name, mi, ma, mo, mao, inf, ev, low, fl, doc) \
    int interp_k_##ev(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out, \
                      UtilDiag *d);
#include "ir/ops.def"
#undef OP

/* Row-major strides of a shape (elements). */
void interp_strides(const IrShape *s, int64_t *strides);
/* Flat index into `src` (shape src) of the element at multi-index idx of a
 * broadcast output of rank out_rank (numpy rules, src right-aligned). */
int64_t interp_bcast_index(const IrShape *src, const int64_t *idx, int out_rank);
/* Advances a multi-index over shape s; returns 0 after the last element. */
int interp_next_index(const IrShape *s, int64_t *idx);
/* Runtime index operand: element i of ind resolved against an axis of size
 * dim (negative counts from the end) into *v; out of range is an error
 * naming the node (interp/k_data.c). */
int interp_load_index(const IrGraph *g, const IrNode *n, const IrArray *ind, int64_t i, int64_t dim, int64_t *v,
                      UtilDiag *d);
/* GatherElements / ScatterElements addressing: for each element i of ind
 * (rank of data), calls fn(ctx, i, off) with off the flat index into data of
 * element i's position with its axis coordinate replaced by ind[i] (checked
 * with interp_load_index). */
typedef void (*InterpElementFn)(void *ctx, int64_t i, int64_t off);
int interp_elements_walk(const IrGraph *g, const IrNode *n, const IrShape *data, const IrArray *ind, int axis,
                         InterpElementFn fn, void *ctx, UtilDiag *d);

#endif
