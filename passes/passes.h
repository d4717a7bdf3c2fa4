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
    int64_t parallel_min_flops;   /* ... in kernels of at least this much work: flops, or bytes touched
                                     when more (schedule.c kernel_work; moving a kernel's input to the
                                     other cores costs microseconds) */
    int64_t parallel_min_model_flops;   /* ... in programs of at least this much in all */
    int unroll_max;          /* fully unroll reduction loops of constant extent <= this (0 = never) */
    int tile_mr, tile_nr;    /* float32 Conv / MatMul / Gemm as register blocks of tile_mr rows x tile_nr
                                lanes (passes/lower_tile.c); tile_nr 0 = the plain loop nests */
    int prefetch;            /* register blocks fetch into L2 the weights (GEMM panels, pointwise rows,
                                Winograd positions) and inputs they read next (lower_tile.c
                                tile_prefetch, lower_winograd.c) */
    int threads;             /* tasks the parallel loops will be split into (1: none); a kernel whose
                                outer loop would be too short for them may split its work otherwise */
} PassSchedule;

/* The CPU schedule for SIMD registers of vector_bits (128 SSE/NEON, 256 AVX2,
 * 512 AVX-512; 0 = scalar): elementwise loops vectorized by 256 bits (or
 * wider), register blocks of 6 rows x 2 registers when there is SIMD. */
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
/* reuse 0 (-O0): no two buffers share bytes, no in-place outputs. */
int pass_plan_memory_opt(LoopProgram *p, const IrGraph *g, int reuse, UtilDiag *d);

/* Max over kernel order of the total size (each 64-byte aligned) of the
 * intermediate tensors of the graph live at once, at their plain size: the
 * bound a plan is measured against (kernel scratch such as padded copies and
 * halos is what a plan adds to it; in-place reuse may take it below).  For
 * reports. */
int64_t pass_workspace_lower_bound(const LoopProgram *p);

/* ------------------------------------------------- graph optimization */

/* Folding keeps a node when its outputs would exceed this many bytes (a
 * ConstantOfShape / Expand / Tile of a huge tensor stays a kernel). */
#define PASS_FOLD_MAX_BYTES ((int64_t)16 << 20)

/* Each optimization pass takes an inferred graph in topological order and
 * leaves one (dead nodes and unreferenced tensors dropped, every tensor
 * typed); it returns the number of rewrites it made, or -1 with a
 * diagnostic.  docs/passes.md describes them and the pipeline. */
int pass_fold_constants(IrGraph *g, UtilDiag *d);  /* nodes with constant inputs → initializers */
int pass_dce(IrGraph *g, UtilDiag *d);             /* nodes whose outputs nobody uses */
int pass_cse(IrGraph *g, UtilDiag *d);             /* equal constants; same op, inputs, attributes */
int pass_remove_identity(IrGraph *g, UtilDiag *d); /* Identity, inference-mode Dropout */
int pass_simplify(IrGraph *g, UtilDiag *d);        /* the algebraic rule table (passes/rules.def) */
int pass_fold_batchnorm(IrGraph *g, UtilDiag *d);  /* inference BatchNormalization → x * s + t */
int pass_fold_weights(IrGraph *g, UtilDiag *d);    /* constant scale / shift into Conv, Gemm, MatMul */
int pass_recognize(IrGraph *g, UtilDiag *d);       /* decomposed LayerNorm, Softmax, Gelu → one node */
int pass_fuse(IrGraph *g, UtilDiag *d);            /* fused groups: contiguous, members IrNode.fused = 1 */

/* Fusion rules (passes/fuse.c), shared with the lowering that re-checks a
 * group before honouring it. */
int pass_fuse_elementwise(IrOp op);  /* op can be a fused member: it lowers through an elementwise
                                      * template (passes/lower.c) */
int pass_fuse_anchor(IrOp op);       /* Conv, ConvTranspose, MatMul, Gemm */
/* n can head a group: an anchor with a float output or an elementwise op,
 * computing one runtime output. */
int pass_fuse_head(const IrGraph *g, const IrNode *n);
/* m can follow in head's group reading the chain value tensor `chain`:
 * elementwise, one runtime output of head's dtype and shape.  (The chain
 * value must also be read by m only and be no graph output.) */
int pass_fuse_member(const IrGraph *g, const IrNode *head, const IrNode *m, int chain);

typedef struct PassInfo {
    const char *name;        /* "fold-constants": --print-after names it */
    int (*run)(IrGraph *g, UtilDiag *d);
    const char *doc;         /* one line */
} PassInfo;

/* Every pass, in a fixed order; *n receives the count. */
const PassInfo *pass_list(int *n);
/* The pass named `name`, or NULL. */
const PassInfo *pass_find(const char *name);
/* The passes -O`level` runs, in order (NULL-terminated; level 0 is empty). */
const PassInfo *const *pass_pipeline(int level);

typedef struct PassOptions {
    int opt_level;           /* 0..3 */
    const char *print_after; /* print the graph after each run of this pass (NULL: never) */
    int print_after_all;     /* print the graph after every pass */
    int time_passes;         /* per-pass wall time and node counts at the end */
    int verify;              /* ir_verify and a type re-check after every pass */
    UtilBuf *log;            /* where printing and timing go; NULL = stderr */
} PassOptions;

/* Defaults for -O`level`: nothing printed; verify on unless NDEBUG. */
PassOptions pass_options(int level);

/* Runs the -O pipeline on inferred graph g.  An unknown --print-after name
 * is an error listing the passes. */
int pass_run_pipeline(IrGraph *g, const PassOptions *o, UtilDiag *d);

/* Runs one pass, then the checks pass_run_pipeline makes between passes
 * (verification and type re-inference); returns its rewrite count or -1. */
int pass_run_checked(IrGraph *g, const PassInfo *p, UtilDiag *d);

/* The graph checks run between passes: ir_verify, then re-inference of every
 * node must reproduce each output's dtype and shape (a rewrite that changed a
 * type is a bug, named here). */
int pass_check(IrGraph *g, const char *after, UtilDiag *d);

/* The simplifier's rules, for documentation: name and algebra of rule i
 * (0 <= i < count); returns the count. */
int pass_simplify_rule(int i, const char **name, const char **algebra);

#endif
