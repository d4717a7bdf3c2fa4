/* targets/gpu/gpu_impl.h — private to the GPU target (targets/gpu/): its
 * schedule, the shared-memory tiles of matrix products, the cooperative
 * schedule of sequential kernels and the barrier split of --gpu-emulate. */
#ifndef DLCC_TGT_GPU_IMPL_H
#define DLCC_TGT_GPU_IMPL_H

#include "targets/targets.h"

/* GPU scheduling choices. */
typedef struct TgtGpuOptions {
    int block_size;           /* threads per block of flat data-parallel mappings (256) */
    int tile;                 /* shared-memory tile edge of matrix products (16); 0 = no tiles */
    int coop_threads;         /* most threads of a cooperative block (0: 512) */
    int64_t shared_bytes;     /* most bytes of LOCAL buffers a cooperative block keeps in shared
                                 memory (0: 48 KB, the static limit) */
} TgtGpuOptions;

/* Binds every kernel's loops to GPU blocks and threads (schedule.c). */
int tgt_gpu_schedule(LoopProgram *p, const TgtGpuOptions *o, UtilDiag *d);
/* Iterations of loop are independent (schedule.c): a constant extent, no
 * assignment to a variable bound outside it, every store's index mentions
 * its variable, no barrier, and no store to a LOCAL buffer unless local. */
int tgt_gpu_independent(const LoopProgram *p, const LoopStmt *loop, int local);
/* The statement itself, or the only item of a one-item block (schedule.c). */
LoopStmt *tgt_gpu_single(LoopStmt *s);
/* Marks bound[v] for every variable a FOR or LET in s binds (schedule.c). */
void tgt_gpu_mark_bound(const LoopStmt *s, unsigned char *bound);
/* Does s hold a barrier (emulate.c)? */
int tgt_gpu_has_barrier(const LoopStmt *s);
/* The cooperative schedule of a kernel with no data-parallel outer nest
 * (coop.c): body itself when it does not apply, NULL out of memory. */
LoopStmt *tgt_gpu_coop(LoopProgram *p, const TgtGpuOptions *o, LoopStmt *body);
/* Shared-memory tiling of a matrix-product nest chain[0..n) (tile.c);
 * NULL when the nest is not a product this handles. */
LoopStmt *tgt_gpu_tile_product(LoopProgram *p, const TgtGpuOptions *o, LoopStmt *const *chain, int n);
/* For --gpu-emulate: rewrites thread loops containing barriers into
 * consecutive thread loops, one per barrier-free segment, with values that
 * live across a barrier kept per thread in LOCAL arrays (emulate.c). */
int tgt_gpu_split_barriers(LoopProgram *p, UtilDiag *d);

#endif
