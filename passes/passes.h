/* passes/ — graph-level passes.  Prefix: pass_.
 * Today: type/shape inference with compile-time value propagation, the entry
 * every frontend's output goes through before anything else runs. */
#ifndef DLCC_PASSES_H
#define DLCC_PASSES_H

#include "ir/ir.h"
#include "ir/loop/loop.h"

/* Values of at most this many elements are computed at compile time when all
 * inputs of their node are known (shape arithmetic: Shape → Gather → Concat). */
#define PASS_PROPAGATE_MAX_ELEMENTS 65536

/* Orders the graph topologically, infers every tensor's dtype and shape, and
 * computes small values whose inputs are all known; then verifies the graph.
 * Errors name the offending node or tensor. */
int pass_infer(IrGraph *g, UtilDiag *d);

/* ------------------------------------------------------------ lowering */

/* Per-target scheduling choices, as data.  Lowering emits plain serial
 * loops; pass_apply_schedule rewrites loop kinds according to these. */
typedef struct PassSchedule {
    const char *target;      /* "cpu", ...: named in diagnostics */
    int vector_bits;         /* SIMD register width (0 = no vectorization) */
    int vectorize;           /* mark innermost contiguous loops VECTORIZED (lanes = vector_bits / element bits) */
    int parallel;            /* mark each kernel's outermost independent loop PARALLEL */
    int unroll_max;          /* fully unroll reduction loops of constant extent <= this (0 = never) */
} PassSchedule;

/* The CPU schedule for SIMD registers of vector_bits (128 SSE/NEON, 256 AVX2,
 * 512 AVX-512; 0 = scalar). */
PassSchedule pass_schedule_cpu(int vector_bits);

/* Lowers inferred graph g (pass_infer ran) to a loop program: one kernel
 * per node that computes something at run time (nodes whose outputs are all
 * known at compile time produce none), graph inputs / outputs / weights /
 * intermediates as INPUT / OUTPUT / CONST / WORKSPACE buffers, view
 * operators (Identity, Reshape, Flatten, Squeeze, Unsqueeze) as aliases.
 * s may be NULL (the CPU schedule); its target names unsupported operators
 * in the diagnostic.  The program is verified; workspace offsets are not
 * planned yet (pass_plan_memory).  NULL with a diagnostic on failure. */
LoopProgram *pass_lower(const IrGraph *g, const PassSchedule *s, UtilDiag *d);
/* 1 if operator op has a lowering (compiles for the CPU target). */
int pass_lower_supports(IrOp op);

/* Applies schedule s to every kernel of p (loop kinds and factors only). */
void pass_apply_schedule(LoopProgram *p, const PassSchedule *s);

/* Memory planning (passes/memplan.c): every workspace buffer gets a 64-byte
 * aligned offset in one workspace, by liveness over kernel order, largest
 * first, first fit; an elementwise kernel's output reuses an input that dies
 * there when their shapes and dtypes match (in place).  Aliases follow their
 * buffer.  Sets p->workspace_bytes and p->workspace_align (64).  g is the
 * graph p was lowered from (kernels name their nodes). */
int pass_plan_memory(LoopProgram *p, const IrGraph *g, UtilDiag *d);

/* Max over kernel order of the total (64-byte aligned) size of the
 * workspace buffers live at once: no plan can be smaller (without in-place
 * reuse).  For reports. */
int64_t pass_workspace_lower_bound(const LoopProgram *p);

#endif
