/* targets/fpga/fpga_impl.h — private to the FPGA target (targets/fpga/). */
#ifndef DLCC_FPGA_IMPL_H
#define DLCC_FPGA_IMPL_H

#include "targets/targets.h"
#include "codegen/c_emit.h"

/* Loop bodies executing at most this many statement instances per
 * iteration are unrolled completely under a pipelined loop (docs/targets/fpga.md). */
#define TGT_FPGA_UNROLL_BUDGET 64
/* The share of a known part's DSPs and LUTs the chosen parallelism may fill. */
#define TGT_FPGA_FILL 0.7
/* ... and bodies up to this many times larger, at II = cost / budget. */
#define TGT_FPGA_MAX_REUSE 16

/* Intermediates on chip are the top function's local arrays: C simulation
 * keeps them within this many bytes of stack (targets/fpga/place.c). */
#define TGT_FPGA_STACK_BYTES ((int64_t)4 << 20)
/* The largest on-chip tile of an off-chip weight array, in elements. */
#define TGT_FPGA_TILE_ELEMS 32768

/* The affine form of an index (targets/fpga/place.c): adds scale * e into A
 * as base + sum coef_v * v over the variables marked inner (ids below nv);
 * 1, or 0 when e is not of that form or mentions a forbidden variable. */
typedef struct TgtFpgaAff {
    const unsigned char *inner;   /* variables the decomposition is over */
    const unsigned char *forbid;  /* variables that may not appear at all */
    int64_t *coef;                /* per variable */
    int64_t c0;                   /* constant term (only meaningful when `exact`) */
    int exact;                    /* every non-inner part is a constant */
} TgtFpgaAff;
int tgt_fpga_affine(TgtFpgaAff *A, const LoopExpr *e, int64_t scale, int nv);

/* Every VAR `var` in body becomes a copy of `by` (in place); -1 on OOM
 * (targets/fpga/schedule.c). */
int tgt_fpga_subst(LoopProgram *p, LoopStmt *body, int var, const LoopExpr *by);

/* Placement (targets/fpga/place.c): marks LoopBuf.offchip on the largest
 * weight arrays, then intermediates, until the rest (sized in the formats
 * fmt, NULL = float32) fits `budget` bytes and the intermediates on chip
 * TGT_FPGA_STACK_BYTES; returns how many moved, -1 on OOM. */
int tgt_fpga_place(LoopProgram *p, const CgFixed *fmt, int64_t budget);
/* Reads of off-chip weight arrays go through on-chip tiles of at most cap
 * elements copied in bursts (targets/fpga/place.c).  0, or -1 on OOM. */
int tgt_fpga_tile(LoopProgram *p, int64_t cap);
/* Would every kernel reading weight array b get a tile of at most half of it? */
int tgt_fpga_tileable(LoopProgram *p, int b);
/* The default on-chip budget for part `part`: half its block RAM. */
int64_t tgt_fpga_onchip_budget(const char *part);

/* HLS schedule (targets/fpga/schedule.c): stages the model inputs on chip;
 * with `streams`, connects layers by FIFOs where it can (tgt_fpga_streams);
 * marks, in every kernel, the outermost loop whose body costs at most
 * budget * TGT_FPGA_MAX_REUSE innermost iterations as LOOP_HLS_PIPELINE
 * (II = ceil(cost / budget)) and every loop inside it LOOP_UNROLLED; then gives
 * every on-chip buffer accessed more than 2*II times per pipelined iteration
 * a cyclic partition (LoopBuf.partition) that puts at most 2*II of those
 * accesses in one bank (BRAM is dual-ported).  -1 on OOM. */
int tgt_fpga_schedule(LoopProgram *p, int budget, const int *node_budget, int streams);

/* Makes every load (and with `stores`, every store) of buffer `from` in
 * body use buffer `to` (targets/fpga/schedule.c). */
void tgt_fpga_retarget(LoopStmt *body, int from, int to, int stores);

/* Folds each ReLU kernel into the kernel that produces its input when
 * that input has no other reader (targets/fpga/schedule.c); returns the count. */
int tgt_fpga_fuse_relu(LoopProgram *p, const IrGraph *g);

/* Marks loop LOOP_HLS_PIPELINE with target II `ii` and every loop inside it
 * LOOP_UNROLLED. */
void tgt_fpga_pipeline(LoopStmt *loop, int ii);

/* Line-buffer rewrite of 2-D convolutions (targets/fpga/conv.c), pipelined
 * per pixel with about `budget` multipliers; with `pointwise` (a streaming
 * design), 1x1 convolutions and max / average pools too; returns how many
 * kernels were rewritten, -1 on OOM. */
int tgt_fpga_line_buffers(LoopProgram *p, const IrGraph *g, int budget, const int *node_budget, int pointwise,
                          UtilDiag *d);
/* Kernel k's budget: node_budget[its first node] when set (non-NULL, > 0), else budget. */
int tgt_fpga_kernel_budget(const LoopProgram *p, int k, int budget, const int *node_budget);

/* Estimated cost of one kernel (the model in docs/targets/fpga.md). */
typedef struct TgtHlsCost {
    int64_t latency;          /* cycles */
    int ii;                   /* worst achieved II of its pipelined loops (0: none) */
    int64_t dsp, lut, bram18k;
    int64_t bram_bytes;       /* on-chip bytes: weights ROM + output / local buffers */
    int64_t mults;            /* instantiated multipliers */
} TgtHlsCost;

/* Bits of buffer b in its format (fmt NULL or w == 0: its dtype). */
int64_t tgt_fpga_buf_bits(const LoopProgram *p, const CgFixed *fmt, int b);

void tgt_fpga_cost(const LoopProgram *p, const CgFixed *fmt, int dataflow, int k, TgtHlsCost *c);

/* Precision (targets/fpga/precision.c): per-buffer storage formats (NULL when
 * everything is float32) and per-kernel register fraction bits. */
int tgt_fpga_precision(const IrGraph *g, const LoopProgram *p, const TgtOptions *o, CgFixed **fmt, int **frac,
                       UtilDiag *d);

/* The precision file's parallelism knob: per_node[n] = the "multipliers" of
 * node n's "layers" entry (0: none), *global = the file's own (0: none). */
int tgt_fpga_multipliers(const IrGraph *g, const TgtOptions *o, int *per_node, int *global, UtilDiag *d);

/* Evaluation of the loop program (targets/fpga/eval.c), in double or in the
 * fixed-point arithmetic of codegen/c_emit.h (fmt != NULL): fills every
 * buffer; vals[b] (malloc'd, numel doubles) holds root buffer b's values
 * after the run.  Inputs are given in float. */
int tgt_fpga_eval(const LoopProgram *p, const CgFixed *fmt, const int *frac, const IrArray *inputs, double **vals,
                  UtilDiag *d);

/* The same run in double precision, reporting every load (store 0) and
 * store (store 1) of each root buffer b with watch[b] set, in execution
 * order, to on(ctx, kernel, b, flat index, store, site, vars): site is the
 * LOAD expression or the STORE statement, vars[v] the integer variables'
 * values at that point; the values are dropped. */
typedef void (*TgtFpgaTraceFn)(void *ctx, int kernel, int buf, int64_t index, int store, const void *site,
                               const int64_t *vars);
int tgt_fpga_eval_trace(const LoopProgram *p, const IrArray *inputs, const unsigned char *watch, TgtFpgaTraceFn on,
                        void *ctx, UtilDiag *d);

/* Streams (targets/fpga/stream.c): what the FIFO replay works on.  Per
 * kernel, its reads and writes of the streams in execution order, as runs
 * of one stream and one direction; pipo[j * n_kernels + k]: kernel k reads
 * an array (ping-pong buffer) kernel j writes, so it starts once j is done. */
typedef struct TgtFpgaRun {
    int stream, write;
    int64_t n;
} TgtFpgaRun;
typedef struct TgtFpgaFifos {
    int n;                     /* FIFOs: one per stream, or one per lane (channel) of a stream */
    int *buf;                  /* per FIFO: its stream's buffer (a stream's lanes are consecutive) */
    int64_t *count, *depth;    /* per FIFO: elements passed; the depth chosen (the same for all lanes) */
    int n_kernels;
    TgtFpgaRun **runs;
    int64_t *n_runs;
    unsigned char *pipo;
} TgtFpgaFifos;
/* In a program that can be one DATAFLOW region with its intermediates on
 * chip: element-wise kernels over 4-D tensors iterate pixel by pixel, a
 * tensor read by several kernels gets one copy per reader, and every
 * intermediate its reader reads in the order its writer writes it becomes
 * a stream (LoopBuf.stream = its FIFO depth: the smallest that does not
 * deadlock, at least 2).  out (may be NULL) receives the replay's data.
 * 0, or -1 on OOM. */
int tgt_fpga_streams(LoopProgram *p, TgtFpgaFifos *out);
/* Replays the runs with FIFOs of these depths: 1 when every kernel
 * finishes, 0 on a deadlock, -1 on OOM. */
int tgt_fpga_fifo_sim(const TgtFpgaFifos *f, const int64_t *depth);
void tgt_fpga_fifos_free(TgtFpgaFifos *f);
/* The latency of one inference of a streamed program whose kernel k takes
 * cycles[k] alone: its layers overlap (a replay of its stream accesses at
 * each kernel's rate); -1 when it has no streams (or on OOM). */
int64_t tgt_fpga_stream_latency(const LoopProgram *p, const int64_t *cycles);

/* An FPGA part's resources (targets/fpga/parts.c). */
typedef struct TgtFpgaPart {
    const char *prefix;       /* the part names it covers: "xcu50-" */
    const char *board;
    int64_t dsp, lut, ff, bram18k, uram;
} TgtFpgaPart;
/* The known part whose prefix begins `name`, or NULL. */
const TgtFpgaPart *tgt_fpga_part(const char *name);

#endif
