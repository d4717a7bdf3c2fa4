/* passes/ — graph → graph passes.  Prefix: pass_.
 * Type and shape inference with compile-time value propagation (the entry
 * every frontend's output goes through before anything else runs), and the
 * -O pipeline of optimization passes, each a graph → graph rewrite with the
 * graph verifier between them (docs/passes.md).  Lowering to loops is the
 * next stage, lower/. */
#ifndef DLCC_PASSES_H
#define DLCC_PASSES_H

#include "ir/ir.h"

/* Values of at most this many elements are computed at compile time when all
 * inputs of their node are known (shape arithmetic: Shape → Gather → Concat). */
#define PASS_PROPAGATE_MAX_ELEMENTS 65536

/* Orders the graph topologically, infers every tensor's dtype and shape, and
 * computes small values whose inputs are all known; then verifies the graph.
 * Errors name the offending node or tensor. */
int pass_infer(IrGraph *g, UtilDiag *d);
/* pass_infer for a caller that knows the values of the runtime inputs
 * (`dlcc run`): values[i] is g->inputs[i]'s as the graph lists them on entry
 * (data NULL: unknown).  When inference needs a value at compile time that is
 * computed from runtime inputs (a Reshape's shape, Resize's scales, a
 * NonZero's input; IrGraph.need_value), the inputs it depends on are bound to
 * their values (ir_bind_input) and inference runs again: the model runs as
 * given, as ONNX Runtime runs it.  bound[i] = 1 for each input bound. */
int pass_infer_bound(IrGraph *g, const IrArray *values, char *bound, UtilDiag *d);

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
int pass_qdq(IrGraph *g, UtilDiag *d);             /* DQ → Conv / MatMul / Gemm → Q as QLinear ops */
int pass_qdq_int8(IrGraph *g, UtilDiag *d);        /* the same, the 8-bit tensors kept (--precision int8) */
int pass_qdq_dot(IrGraph *g, UtilDiag *d);         /* qdq, with the Convs 8-bit dot products take as QLinearConv */
/* Post-training quantization (--calibrate): QuantizeLinear / DequantizeLinear
 * around the products, Adds and pools of float graph g as ONNX Runtime's
 * quantize_static writes them by default, activation ranges (min-max, or
 * cut at that percentile of |x| when percentile > 0) from running the
 * interpreter on samples[0..n) (each one array per graph input),
 * per-channel int8 weights, int32 biases (passes/quantize.c).  With rep,
 * the quantized graph (still float, Q / DQ as operators) runs on the
 * samples again and rep compares its output 0 with the float graph's.
 * Returns the number of tensors quantized, or -1 with a diagnostic. */
typedef struct PassQuantReport {
    int n_samples;
    int top1_same;           /* samples whose output 0 has the float output's arg max */
    double max_rel_err;      /* max |int8 - float| / max |float| over output 0 */
} PassQuantReport;
int pass_quantize(IrGraph *g, const IrArray *samples, int n_samples, double percentile, PassQuantReport *rep,
                  UtilDiag *d);
int pass_lut(IrGraph *g, UtilDiag *d);             /* elementwise functions of one 8-bit tensor → Gather of a table */
int pass_recognize(IrGraph *g, UtilDiag *d);       /* decomposed LayerNorm, Softmax, Gelu → one node */
int pass_fuse(IrGraph *g, UtilDiag *d);            /* fused groups: contiguous, members IrNode.fused = 1 */

/* Fusion rules (passes/fuse.c), shared with the lowering that re-checks a
 * group before honouring it. */
int pass_fuse_elementwise(IrOp op);  /* op can be a fused member (IR_OPF_FUSE in ir/ops.def) */
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
    int int8;                /* --precision int8: a quantized model's 8-bit tensors stay in memory (qdq-int8
                                instead of qdq at -O2) */
    int dot_i8;              /* the target runs QLinearConv on dot products of 8-bit values (x86 VNNI,
                                AArch64 DotProd, LowSchedule.dot_i8; without it int16 pairs on AVX2 /
                                AVX512BW VPMADDWD,
                                LowSchedule.dot_i16): qdq-dot instead of qdq at -O2 */
} PassOptions;

/* The passes pass_run_pipeline runs for o: pass_pipeline(o->opt_level),
 * with qdq-int8 in qdq's place when o->int8, else qdq-dot when o->dot_i8. */
const PassInfo *const *pass_pipeline_of(const PassOptions *o);

/* Defaults for -O`level`: nothing printed; the checks between passes on. */
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
