/* targets/ — the target drivers: each turns an inferred graph into the files
 * a user gets for one kind of device, running the pipeline stages in order.
 * Prefix: tgt_ / Tgt.  The generated C header and the JSON report are shared
 * by every target (DESIGN.md §5). */
#ifndef DLCC_TARGETS_H
#define DLCC_TARGETS_H

#include "ir/ir.h"
#include "ir/loop/loop.h"

enum {
    TGT_EMIT_OBJ = 1 << 0,
    TGT_EMIT_ASM = 1 << 1,
    TGT_EMIT_LLVM = 1 << 2,
    TGT_EMIT_HEADER = 1 << 3,
    TGT_EMIT_GRAPH = 1 << 4,
    TGT_EMIT_REPORT = 1 << 5,
    TGT_EMIT_C = 1 << 6,      /* fpga: NAME.c */
    TGT_EMIT_HLS = 1 << 7,    /* fpga: NAME.c, NAME_tb.c, NAME.tcl */
    TGT_EMIT_DEFAULT_CPU = TGT_EMIT_OBJ | TGT_EMIT_HEADER | TGT_EMIT_REPORT,
    TGT_EMIT_DEFAULT_FPGA = TGT_EMIT_HLS | TGT_EMIT_HEADER | TGT_EMIT_REPORT,
};

typedef struct TgtOptions {
    const char *name;         /* C identifier of the model (prefix of every symbol) */
    const char *triple;       /* NULL = host */
    const char *cpu;          /* NULL = generic (portable); "native" = this machine's CPU */
    const char *features;     /* LLVM feature string or NULL */
    int opt_level;            /* 0..3 */
    unsigned emit;            /* TGT_EMIT_* */
    /* -t fpga (targets/fpga.c) */
    const char *precision;    /* "float32" (NULL) or "fixed<W,I>" */
    const char *precision_file;   /* JSON per-tensor / per-layer precision, or NULL */
    const char *fpga_part;    /* NULL = TGT_FPGA_DEFAULT_PART */
    double fpga_clock_mhz;    /* 0 = 200 */
    const char *model_file;   /* for diagnostics */
    /* Firmware (docs/firmware.md). */
    const char *weights_section;    /* section of the weights; NULL = .rodata */
    int static_workspace;           /* NAME_run accepts workspace == NULL (non-reentrant) */
    const char *workspace_section;  /* section of that static workspace; NULL = .bss */
    int no_libm;                    /* the object carries its own math functions */
} TgtOptions;

/* One generated file: name (plain file name) and contents. */
typedef struct TgtFile {
    char *name;
    UtilBuf data;
} TgtFile;

#define TGT_MAX_FILES 8
typedef struct TgtFiles {
    int n;
    TgtFile f[TGT_MAX_FILES];
} TgtFiles;

void tgt_files_free(TgtFiles *fs);

/* The CPU pipeline: lower → schedule → simplify → plan memory → verify →
 * LLVM code generation; fills `out` with NAME.o, NAME.h, NAME.report.json
 * (and .s / .ll / .dot as asked).  g must be inferred (pass_infer). */
int tgt_cpu_compile(const IrGraph *g, const TgtOptions *o, TgtFiles *out, UtilDiag *d);

/* The FPGA pipeline: lower → HLS schedule (pipeline, unroll, partition) →
 * precision → HLS C; fills `out` with NAME.c, NAME.h, NAME_tb.c, NAME.tcl and
 * NAME.report.json (docs/targets/fpga.md).  g must be inferred. */
#define TGT_FPGA_DEFAULT_PART "xcu50-fsvh2104-2-e"
int tgt_fpga_compile(const IrGraph *g, const TgtOptions *o, TgtFiles *out, UtilDiag *d);

/* Unique C field names of the model's inputs (outputs != 0: outputs) in the
 * NAME_inputs / NAME_outputs structs of the header; free with
 * tgt_io_names_free. */
char **tgt_io_names(const IrGraph *g, int outputs);
void tgt_io_names_free(char **names, int n);
/* Worst-case stack bytes of NAME_run when the code generator cannot tell
 * (CgResult.stack_bytes < 0, e.g. targets without an LLVM object): every LOCAL
 * buffer (as if all kernels were inlined into one frame) rounded up to its
 * 64-byte alignment, plus TGT_STACK_MARGIN for saved registers, spills and
 * called functions. */
#define TGT_STACK_MARGIN 1024
int64_t tgt_stack_estimate(const LoopProgram *p);

/* A model compiled for the host and loaded into this process (LLVM's ORC
 * JIT): the same pipeline as tgt_cpu_compile, for `dlcc run --backend cpu`
 * and differential tests.  tgt_host_run has interp_run's contract: inputs in
 * graph-input order with matching dtype/shape, outputs malloc'd. */
typedef struct TgtHostModel TgtHostModel;
int  tgt_cpu_jit(const IrGraph *g, const TgtOptions *o, TgtHostModel **out, UtilDiag *d);
int  tgt_host_run(TgtHostModel *m, const IrArray *inputs, IrArray *outputs, UtilDiag *d);
void tgt_host_free(TgtHostModel *m);

/* NAME.h: sizes, shapes, the input/output structs and the entry points.
 * stack_bytes: the code generator's worst-case stack of NAME_run, or -1
 * for tgt_stack_estimate's (the header says which). */
int  tgt_emit_header(const IrGraph *g, const LoopProgram *p, const TgtOptions *o, int64_t stack_bytes,
                     UtilBuf *out, UtilDiag *d);
/* NAME.report.json: workspace (planned and lower bound), weights, stack
 * (as the header), per-kernel FLOPs, target. */
int  tgt_emit_report(const IrGraph *g, const LoopProgram *p, const TgtOptions *o, int64_t stack_bytes,
                     const char *target, UtilBuf *out, UtilDiag *d);

#endif
