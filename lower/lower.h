/* lower/ — graph IR → loop IR.  Prefix: low_ / Low.
 *
 * One loop nest (a kernel) per node or fused group, built from per-family
 * compute templates (elementwise.c, reduce.c, window.c, matmul.c, data.c,
 * quant.c, rnn.c, attention.c, signal.c; the register-blocked float32
 * templates in lower/tile/), then memory planning (memplan.c).  Lowering is
 * the same for every target: the target's schedule (targets/<target>/)
 * rewrites loop kinds afterwards, and the few template choices that depend
 * on the target (register blocks, prefetch, threads) come in LowSchedule.
 * docs/architecture.md, docs/loop-ir.md. */
#ifndef DLCC_LOWER_H
#define DLCC_LOWER_H

#include "ir/ir.h"
#include "ir/loop/loop.h"

/* Per-target scheduling choices, as data.  Lowering emits plain serial
 * loops (register-blocked ones when tile_nr is set); the target's schedule
 * (tgt_cpu_apply_schedule) rewrites loop kinds according to these. */
typedef struct LowSchedule {
    const char *target;      /* "cpu", "gpu", "fpga": named in diagnostics */
    int vector_bits;         /* SIMD register width (0 = no vectorization) */
    int vectorize;           /* mark innermost contiguous loops VECTORIZED (lanes = vector_bits / element bits) */
    int parallel;            /* mark each kernel's outermost independent loop PARALLEL */
    int64_t parallel_min_flops;   /* ... in kernels of at least this much work: flops, or bytes touched
                                     when more (targets/cpu/schedule.c kernel_work; moving a kernel's
                                     input to the other cores costs microseconds) */
    int64_t parallel_min_model_flops;   /* ... in programs of at least this much in all */
    int unroll_max;          /* fully unroll reduction loops of constant extent <= this (0 = never) */
    int tile_mr, tile_nr;    /* float32 Conv / MatMul / Gemm as register blocks of tile_mr rows x tile_nr
                                lanes (lower/tile/); tile_nr 0 = the plain loop nests */
    int dot_i8;              /* widest 8-bit dot product (the loop IR's dot4 as one instruction: x86
                                VPDPBUSD, AArch64 USDOT or SDOT) in bits, 0 none: QLinearConv as register
                                blocks of int32 words (lower/tile/qconv.c) when at least 128 */
    int dot_i16;             /* widest dot product of two 16-bit pairs (dot2: x86 VPMADDWD) in bits, 0 none:
                                QLinearConv on words of two int16 when dot_i8 is 0 and this at least 256 */
    int bf16;                /* --precision bf16: float32 Conv / MatMul / Gemm products by constant weights on
                                bfloat16 words (dot2bf, lower/tile/qconv.c) in blocks of this many bits (the
                                target's VDPBF16PS, or emulated lanes); 0: float32 */
    int mask_bytes;          /* narrowest element masked loads and stores move as one instruction (1
                                AVX-512BW, 4 AVX / AVX2), 0 none: the CPU schedule's masked rows
                                (targets/cpu/schedule.c) only where every access is at least this wide */
    int byte_permute;        /* widest permute of bytes across two registers (x86 VPERMI2B) in bits, 0 none:
                                loops of table loads (loop_load_is_table) are vectorized */
    int prefetch;            /* register blocks fetch into L2 the weights (GEMM panels, pointwise rows,
                                Winograd positions) and inputs they read next (tile_prefetch) */
    int threads;             /* tasks the parallel loops will be split into (1: none); a kernel whose
                                outer loop would be too short for them may split its work otherwise */
    int rnn_threads;         /* CPU: the threads of the object (--threads), even for a model too small
                                for `threads`: a recurrent layer's steps are split between them
                                (lower/rnn.c, the split form: its time is the steps' latency) */
    int rnn_tasks;           /* RNN, GRU, LSTM in the GPU form (lower/rnn.c): one PARALLEL task per
                                direction x batch row, and with packed weights the input projection as
                                a GEMM kernel of its own and one dot product per packed column a step */
} LowSchedule;

/* Lowers inferred graph g (pass_infer ran) to a loop program: one kernel
 * per node that computes something at run time (nodes whose outputs are all
 * known at compile time produce none), graph inputs / outputs / weights /
 * intermediates as INPUT / OUTPUT / CONST / WORKSPACE buffers, view
 * operators (Identity, Reshape, Flatten, Squeeze, Unsqueeze) as aliases.
 * s may be NULL (plain loop nests); its target names unsupported operators
 * in the diagnostic.  The program is simplified and verified; workspace
 * offsets are not planned yet (low_plan_memory).  NULL with a diagnostic on
 * failure. */
LoopProgram *low_graph(const IrGraph *g, const LowSchedule *s, UtilDiag *d);
/* 1 if operator op has a lowering (compiles for every target). */
int low_supports(IrOp op);

/* Memory planning (memplan.c): every workspace buffer gets a 64-byte
 * aligned offset in one workspace, by liveness over kernel order, largest
 * first, first fit; an elementwise kernel's output reuses an input that dies
 * there when their shapes and dtypes match (in place).  Aliases follow their
 * buffer.  Sets p->workspace_bytes and p->workspace_align (64).  g is the
 * graph p was lowered from (kernels name their nodes). */
int low_plan_memory(LoopProgram *p, const IrGraph *g, UtilDiag *d);
/* reuse 0 (-O0): no two buffers share bytes, no in-place outputs. */
int low_plan_memory_opt(LoopProgram *p, const IrGraph *g, int reuse, UtilDiag *d);

/* Max over kernel order of the total size (each 64-byte aligned) of the
 * intermediate tensors of the graph live at once, at their plain size: the
 * bound a plan is measured against (kernel scratch such as padded copies and
 * halos is what a plan adds to it; in-place reuse may take it below).  For
 * reports. */
int64_t low_workspace_lower_bound(const LoopProgram *p);

#endif
