/* targets/gpu/gpu_impl.h — private to the GPU target (targets/gpu/): its
 * schedule, the shared-memory tiles of matrix products and the barrier split
 * of --gpu-emulate. */
#ifndef DLCC_TGT_GPU_IMPL_H
#define DLCC_TGT_GPU_IMPL_H

#include "targets/targets.h"

/* GPU scheduling choices. */
typedef struct TgtGpuOptions {
    int block_size;           /* threads per block of flat data-parallel mappings (256) */
    int tile;                 /* shared-memory tile edge of matrix products (16); 0 = no tiles */
} TgtGpuOptions;

/* Binds every kernel's loops to GPU blocks and threads (schedule.c). */
int tgt_gpu_schedule(LoopProgram *p, const TgtGpuOptions *o, UtilDiag *d);
/* Shared-memory tiling of a matrix-product nest chain[0..n) (tile.c);
 * NULL when the nest is not a product this handles. */
LoopStmt *tgt_gpu_tile_product(LoopProgram *p, const TgtGpuOptions *o, LoopStmt *const *chain, int n);
/* For --gpu-emulate: rewrites thread loops containing barriers into
 * consecutive thread loops, one per barrier-free segment, with values that
 * live across a barrier kept per thread in LOCAL arrays (emulate.c). */
int tgt_gpu_split_barriers(LoopProgram *p, UtilDiag *d);

#endif
