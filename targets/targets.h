/* targets/ — the target drivers: each turns an inferred graph into the files
 * a user gets for one kind of device, running the pipeline stages in order.
 * Prefix: tgt_ / Tgt.  The generated C header and the JSON report are shared
 * by every target (docs/generated-code.md). */
#ifndef DLCC_TARGETS_H
#define DLCC_TARGETS_H

#include "ir/ir.h"
#include "ir/loop/loop.h"
#include "lower/lower.h"

enum {
    TGT_EMIT_OBJ = 1 << 0,
    TGT_EMIT_ASM = 1 << 1,
    TGT_EMIT_LLVM = 1 << 2,
    TGT_EMIT_HEADER = 1 << 3,
    TGT_EMIT_GRAPH = 1 << 4,
    TGT_EMIT_REPORT = 1 << 5,
    TGT_EMIT_C = 1 << 6,      /* fpga: NAME.c */
    TGT_EMIT_HLS = 1 << 7,    /* fpga: NAME.c, NAME_tb.c, NAME.tcl (.cpp in fixed point) */
    TGT_EMIT_DEFAULT_CPU = TGT_EMIT_OBJ | TGT_EMIT_HEADER | TGT_EMIT_REPORT,
    TGT_EMIT_DEFAULT_FPGA = TGT_EMIT_HLS | TGT_EMIT_HEADER | TGT_EMIT_REPORT,
    TGT_EMIT_PTX = 1 << 8,    /* gpu: NAME.ptx */
    TGT_EMIT_DEFAULT_GPU = TGT_EMIT_OBJ | TGT_EMIT_HEADER | TGT_EMIT_REPORT | TGT_EMIT_PTX,
};

typedef struct TgtOptions {
    const char *name;         /* C identifier of the model (prefix of every symbol) */
    const char *triple;       /* NULL = host */
    const char *cpu;          /* NULL = generic (portable); "native" = this machine's CPU */
    const char *features;     /* LLVM feature string or NULL */
    int opt_level;            /* 0..3 */
    unsigned emit;            /* TGT_EMIT_* */
    const char *gpu_arch;     /* -t gpu: sm_XX (NULL = sm_80) */
    int gpu_emulate;          /* -t gpu --gpu-emulate: the GPU kernels built for the host */
    /* -t fpga (targets/fpga/fpga.c) */
    const char *precision;    /* "float32" (NULL) or "fixed<W,I>" */
    int bf16;                 /* -t cpu --precision bf16: Conv / MatMul / Gemm by constant weights in bfloat16
                                 (LowSchedule.bf16) */
    const char *precision_file;   /* JSON per-tensor / per-layer precision, or NULL */
    const char *fpga_part;    /* NULL = TGT_FPGA_DEFAULT_PART */
    double fpga_clock_mhz;    /* 0 = 200 */
    int fpga_multipliers;     /* -t fpga: multipliers per layer (the unroll budget); 0 = chosen to fit the part */
    int64_t fpga_onchip_bytes; /* -t fpga: on-chip memory for weights and intermediates before they move
                                  off chip (0 = half the part's block RAM; docs/targets/fpga.md) */
    int fpga_io_parallel;     /* -t fpga: --fpga-io parallel: every intermediate an array, no hls::stream
                                 (hls4ml's io_parallel); 0 = streams where the order allows (io_stream) */
    int fpga_emulate;         /* -t fpga: the FPGA-scheduled kernels built for the host (NAME.o, the CPU's header:
                                 HLS loops serial, intermediates in a planned workspace; -t hetero --emulate) */
    const char *model_file;   /* for diagnostics */
    /* Firmware (docs/firmware.md). */
    const char *weights_section;    /* section of the weights; NULL = .rodata */
    int static_workspace;           /* NAME_run accepts workspace == NULL (non-reentrant) */
    const char *workspace_section;  /* section of that static workspace; NULL = .bss */
    int no_libm;                    /* the object carries its own math functions */
    int kernel_symbols;             /* profiling: kernels not inlined (CgOptions.kernel_symbols) */
    int threads;                    /* -t cpu: parallel loops split into this many tasks run by the
                                       Halide runtime's thread pool (halide_do_par_for); <= 1: none */
} TgtOptions;

/* The CPU schedule (targets/cpu/schedule.c) for SIMD registers of
 * vector_bits (128 SSE/NEON, 256 AVX2, 512 AVX-512; 0 = scalar):
 * elementwise loops vectorized by 256 bits (or wider), register blocks of 6
 * rows x 2 registers when there is SIMD. */
LowSchedule tgt_cpu_schedule(int vector_bits);
/* Applies schedule s to every kernel of p (loop kinds and factors only). */
void tgt_cpu_apply_schedule(LoopProgram *p, const LowSchedule *s);

/* One generated file: name (plain file name) and contents. */
typedef struct TgtFile {
    char *name;
    UtilBuf data;
} TgtFile;

/* The files of one compilation ({0} is empty), and the NAME_WORKSPACE_SIZE
 * of the entry points they hold (set by the drivers: the -t hetero target
 * lays out its partitions' workspaces from it). */
typedef struct TgtFiles {
    int n, cap;
    TgtFile *f;
    int64_t workspace_bytes;
} TgtFiles;

void tgt_files_free(TgtFiles *fs);
/* Adds NAME + ext holding a copy of buf. */
int tgt_add_file(TgtFiles *fs, const char *name, const char *ext, const UtilBuf *buf, UtilDiag *d);
/* Adds NAME + ext taking buf's contents (buf is empty afterwards). */
int tgt_take_file(TgtFiles *fs, const char *name, const char *ext, UtilBuf *buf, UtilDiag *d);
/* What NAME.h says of a target's entry points beyond the program's own
 * sizes (tgt_emit_header). */
typedef struct TgtHeader {
    int64_t stack_bytes;      /* the code generator's worst-case stack of NAME_run; -1: tgt_stack_estimate's
                                 (the header says which) */
    int64_t workspace_bytes;  /* NAME_WORKSPACE_SIZE when the target's workspace is not the program's (the GPU's
                                 device state); -1: the program's */
    unsigned codes;           /* return codes besides NAME_OK and NAME_ERR_NULL: bits 1 << -DLCC_ERR_* */
    const char *note;         /* comment lines after the codes (the workspace's use, what to link), or NULL */
    const char *reentrant;    /* what NAME_run's comment says after "Reentrant: "; NULL: "no global state." */
    int release;              /* declares NAME_release, which frees the workspace's device state */
    const char *release_doc;  /* the comment before NAME_release; NULL: the GPU's (device buffers, kernels) */
    const char *stack_note;   /* NAME_STACK_SIZE's comment when the target says what stack_bytes is; NULL: the
                                 code generator's or the estimate's */
    const char *extra;        /* declarations after the entry points (-t hetero: NAME_submit, NAME_wait), or NULL */
} TgtHeader;
#define TGT_HEADER_CPU(stack) ((TgtHeader){ .stack_bytes = (stack), .workspace_bytes = -1 })

/* Adds the files every target writes, as o->emit asks: NAME.h, NAME.dot,
 * NAME.report.json for `target` (h->stack_bytes is the report's too). */
int tgt_add_common_files(const IrGraph *g, const LoopProgram *p, const TgtOptions *o, const char *target,
                         const TgtHeader *h, TgtFiles *out, UtilDiag *d);

/* ---------------------------------------------------------- the loop pipeline */

/* What a target asks of the loop pipeline (targets/pipeline.c). */
typedef struct TgtPipeline {
    const char *name;             /* the program's name (its symbols: NAME_run, NAME_run_ptrs) */
    const LowSchedule *lowering;  /* lowering's choices; NULL: plain loop nests */
    /* The target's schedule: loop kinds, binding to blocks and threads,
     * kernels split or rewritten.  0, or -1 with a diagnostic; NULL: none. */
    int (*schedule)(LoopProgram *p, const IrGraph *g, const void *arg, UtilDiag *d);
    /* A second schedule step, on the simplified program (the FPGA's HLS
     * pragmas: pipelines, unrolling, partitions); NULL: none. */
    int (*finish)(LoopProgram *p, const IrGraph *g, const void *arg, UtilDiag *d);
    const void *arg;
    const char *schedule_name;    /* names the schedule in a verifier's diagnostic: "the CPU schedule" */
    const char *finish_name;      /* ... and its second step */
    int plan_memory;              /* workspace offsets by low_plan_memory_opt (0: the target lays out its own) */
    int reuse;                    /* ... buffers may share bytes (-O1 and up) */
} TgtPipeline;

/* The loop pipeline of every target: lower → the target's schedule →
 * simplify (→ the schedule's second step) → plan memory, the loop verifier
 * after every step (a failure is an internal error naming the step).  g is inferred (pass_infer) and
 * optimized.  NULL with a diagnostic on failure. */
LoopProgram *tgt_loop_program(const IrGraph *g, const TgtPipeline *pl, UtilDiag *d);

/* The CPU target's loop program (targets/cpu/cpu.c): its schedule for the
 * SIMD width of o's target (for_host: this machine's), the workspace
 * planned.  `dlcc info` reports it; tgt_cpu_compile and the host JIT build
 * it. */
LoopProgram *tgt_cpu_program(const IrGraph *g, const TgtOptions *o, int for_host, UtilDiag *d);
/* The widest dot product of 8-bit values (bits, 0 none) of the CPU o targets
 * (for_host: code that runs here, the host CPU unless o->cpu says
 * otherwise): VNNI's bytes, else AVX2 / AVX512BW's int16 pairs; the graph
 * passes take quantized convolutions as QLinearConv where it is nonzero
 * (PassOptions.dot_i8). */
int tgt_cpu_dot_i8(const TgtOptions *o, int for_host);

/* The CPU pipeline: lower → schedule → simplify → plan memory → verify →
 * LLVM code generation; fills `out` with NAME.o, NAME.h, NAME.report.json
 * (and .s / .ll / .dot as asked).  g must be inferred (pass_infer). */
int tgt_cpu_compile(const IrGraph *g, const TgtOptions *o, TgtFiles *out, UtilDiag *d);

/* The end of that pipeline for any loop program p built for the host's code
 * generator (the CPU's, or the FPGA's HLS schedule with cgo->hls_emulate):
 * cg_compile, then NAME.o (when o->emit asks), the .s / .ll that cgo->emit
 * asks, and the files of tgt_add_common_files with the CPU's header, `kind`
 * naming the build in the report.  Takes p (NULL: a failure already
 * reported) and frees it; on failure `out` is freed. */
struct CgOptions;   /* codegen/codegen.h */
int tgt_cpu_object(const IrGraph *g, LoopProgram *p, const struct CgOptions *cgo, const TgtOptions *o,
                   const char *kind, TgtFiles *out, UtilDiag *d);

/* The GPU pipeline (targets/gpu/gpu.c, docs/targets/gpu.md): lower → GPU
 * schedule (blocks, threads, shared-memory tiles) → simplify → plan memory →
 * PTX through LLVM's NVPTX backend + a host object calling the dlcc runtime;
 * fills `out` with NAME.o, NAME.ptx, NAME.h, NAME.report.json.  With
 * o->gpu_emulate the same scheduled kernels are built for the host instead
 * (block and thread loops serial, barriers kept by splitting the thread
 * loops), with the same API: NAME.o, NAME.h, NAME.report.json. */
int tgt_gpu_compile(const IrGraph *g, const TgtOptions *o, TgtFiles *out, UtilDiag *d);
/* The GPU-scheduled, verified loop program of that pipeline (barriers split
 * when o->gpu_emulate); NULL with a diagnostic. */
LoopProgram *tgt_gpu_program(const IrGraph *g, const TgtOptions *o, UtilDiag *d);

/* The FPGA pipeline: lower → HLS schedule (pipeline, unroll, partition) →
 * precision → HLS C; fills `out` with NAME.c, NAME.h, NAME_tb.c, NAME.tcl (NAME.cpp
 * and NAME_tb.cpp, ap_fixed C++, in fixed point) and
 * NAME.report.json (docs/targets/fpga.md).  g must be inferred.  With
 * o->fpga_emulate (float32 only) the same HLS-scheduled loop program is
 * compiled for the host instead: NAME.o with the CPU target's header and
 * report (target "fpga-emulate"). */
#define TGT_FPGA_DEFAULT_PART "xcu50-fsvh2104-2-e"
int tgt_fpga_compile(const IrGraph *g, const TgtOptions *o, TgtFiles *out, UtilDiag *d);

/* The FPGA target's estimate of one kernel of its loop program (the cost
 * model of docs/targets/fpga.md, float32), for the heterogeneous
 * partitioner (targets/hetero/). */
typedef struct TgtFpgaKernelCost {
    int first_node, n_nodes;  /* the graph nodes it computes; first_node < 0: a model input's staging copy */
    int64_t latency_cycles;
    int64_t dsp, lut, bram18k;
    int ok;                   /* 0: the HLS C generator refuses this kernel (float16 tensors, ...) */
} TgtFpgaKernelCost;
/* Runs the FPGA pipeline (lower, line buffers, ReLU fusion, HLS schedule) on
 * g and estimates each kernel; *out is malloc'd (*n entries, in kernel
 * order).  0, or -1 with a diagnostic when the pipeline fails. */
int tgt_fpga_estimate(const IrGraph *g, const TgtOptions *o, TgtFpgaKernelCost **out, int *n, UtilDiag *d);

/* ---------------------------------------------- heterogeneous execution */

/* One model partitioned across CPU, GPU and FPGA devices (targets/hetero/,
 * docs/targets/hetero.md): a device file describes the devices and the
 * links between them; the cost model predicts every task's time on every
 * device and every transfer's; GLPK's MIP solver assigns the tasks to the
 * devices for the least latency of one input or the most throughput of a
 * stream of them. */

typedef enum TgtDevKind { TGT_DEV_CPU, TGT_DEV_GPU, TGT_DEV_FPGA } TgtDevKind;

/* One device of a device file. */
typedef struct TgtDevice {
    const char *name;
    TgtDevKind kind;
    double peak_gflops;       /* cpu, gpu: float32 rate in 1e9 FLOP/s, a multiply-add counted as 2 */
    double bandwidth_gbs;     /* cpu, gpu: memory bandwidth in 1e9 bytes/s */
    double launch_us;         /* cpu, gpu: per kernel; fpga: per task (one call of the accelerator) */
    const char *part;         /* fpga: the part */
    double clock_mhz;         /* fpga: the kernel clock the estimate's cycles run at */
    int cores;                /* cpu: cores the peak and bandwidth were measured on (0: not given) */
    const char *note;         /* where the figures come from, or NULL */
} TgtDevice;

/* One direction of a link between two devices. */
typedef struct TgtLink {
    int from, to;             /* devices */
    double bandwidth_gbs;     /* 1e9 bytes/s */
    double latency_us;        /* per transfer */
    const char *note;
} TgtLink;

typedef enum TgtHeteroObjective {
    TGT_HETERO_LATENCY,       /* one input: the least makespan */
    TGT_HETERO_THROUGHPUT,    /* a stream of inputs: the least time per input of the busiest device or link */
} TgtHeteroObjective;

typedef enum TgtHeteroStatus {
    TGT_HETERO_OPTIMAL,       /* GLPK proved the plan optimal */
    TGT_HETERO_TIME_LIMIT,    /* GLPK stopped at the time limit: its best integer solution, not proven optimal */
    TGT_HETERO_GREEDY,        /* GLPK stopped (time limit) with nothing better: the greedy plan */
} TgtHeteroStatus;

typedef struct TgtHeteroOptions {
    const char *device_file;  /* NULL: $DLCC_DEVICE_FILE when set, else the built-in copy of
                                 targets/hetero/devices.json */
    const char *devices;      /* "cpu,gpu,fpga": device names, or kinds (the file's first device of that kind) */
    TgtHeteroObjective objective;
    double time_limit_s;      /* GLPK's time limit; <= 0: 10 s */
    int opt_level;            /* -O of the loop programs, as compiling */
} TgtHeteroOptions;

/* A task: consecutive kernels of the CPU program computing consecutive
 * graph nodes, the unit placed on one device (a node's helper kernels and
 * the kernels the FPGA target computes as one stay together). */
typedef struct TgtHeteroTask {
    int first_kernel, n_kernels;   /* kernels of plan->program */
    int first_node, n_nodes;       /* graph nodes */
    int device;                    /* index in plan->devices */
    double start_s;                /* latency: its start in the predicted schedule; throughput: -1 */
    double time_s;                 /* its time on its device */
    double *option_s;              /* per device: its time there, < 0 where it cannot run */
} TgtHeteroTask;

/* A tensor that crosses devices: produced on one, read on another. */
typedef struct TgtHeteroTransfer {
    int buf;                  /* root buffer of plan->program */
    int tensor;               /* its graph tensor, or -1 */
    int from_task;            /* -1: a graph input, on the host */
    int to_task;              /* the first reader on to_device; -1: a graph output, back to the host */
    int from_device, to_device;
    int64_t bytes;
    double time_s;            /* over each link of its route: bytes / bandwidth + latency */
} TgtHeteroTransfer;

/* The plan: a task per device, the transfers between them. */
typedef struct TgtHeteroPlan {
    UtilArena arena;          /* everything below but program */
    LoopProgram *program;     /* the CPU-scheduled loop program (tgt_cpu_program) whose kernels tasks group */
    int n_devices, host;      /* host: the CPU holding the graph's inputs and outputs */
    TgtDevice *devices;
    int n_links;
    TgtLink *links;
    int n_tasks;
    TgtHeteroTask *tasks;
    int n_transfers;
    TgtHeteroTransfer *transfers;
    int n_nodes;
    int *node_task;           /* per graph node: its task, or -1 (views; values known at compile time) */
    TgtHeteroObjective objective;
    double value_s;           /* latency: the makespan; throughput: the bottleneck, seconds per input */
    double *device_busy_s;    /* per device: the time of its tasks */
    double *link_busy_s;      /* per link: the time of the transfers over it */
    TgtHeteroStatus status;
    double solve_s;           /* GLPK's wall time */
    double gap;               /* TIME_LIMIT: GLPK's relative gap to its bound when it stopped */
    int rows, cols, integers; /* the MIP's size */
    const char *note;         /* what the plan's reader should know (e.g. why the FPGA has no option), or NULL */
} TgtHeteroPlan;

/* Partitions g (inferred and optimized) as o asks.  0 with *out set
 * (tgt_hetero_plan_free), or -1 with a diagnostic: a bad device file
 * (FILE:LINE:COL), an unknown device, a missing link. */
int  tgt_hetero_partition(const IrGraph *g, const TgtHeteroOptions *o, TgtHeteroPlan **out, UtilDiag *d);
void tgt_hetero_plan_free(TgtHeteroPlan *p);
/* The plan as text or as one JSON object (sorted keys, 2-space indent). */
int  tgt_hetero_render(const IrGraph *g, const TgtHeteroPlan *p, int json, UtilBuf *out, UtilDiag *d);
/* `dlcc MODEL -t hetero` (targets/hetero/compile.c, docs/targets/hetero.md):
 * the plan, then one model per partition compiled by its device's target
 * (NAME_p0, NAME_p1, ...: objects, or C for an FPGA), and NAME.o, whose
 * entry points run the partitions as StarPU tasks through the runtime
 * library (runtime/dlcc_hetero.h), with NAME.h and NAME.partition.json. */
typedef struct TgtHeteroCompile {
    TgtHeteroOptions plan;    /* devices, device file, objective, time limit (opt_level: the TgtOptions') */
    int emulate;              /* GPU and FPGA partitions built for the host (StarPU CPU workers run them) */
    int nodes;                /* MPI ranks the partitions are placed on; <= 1: one process */
    int in_flight;            /* inputs NAME_submit may have in flight; <= 0: TGT_HETERO_IN_FLIGHT */
} TgtHeteroCompile;
#define TGT_HETERO_IN_FLIGHT 4
int  tgt_hetero_compile(const IrGraph *g, const TgtOptions *o, const TgtHeteroCompile *h, TgtFiles *out,
                        UtilDiag *d);
/* `dlcc calibrate`: measures this machine's CPU on `threads` threads (<= 0:
 * every online core) and writes a device file holding it as device `name`. */
int  tgt_hetero_calibrate(int threads, const char *name, UtilBuf *out, UtilDiag *d);

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
 * JIT): the same pipeline as tgt_cpu_compile (or, with o->gpu_emulate, the
 * GPU-scheduled kernels run serially), for `dlcc run --backend cpu|gpu-emulate`
 * and differential tests.  tgt_host_run has interp_run's contract: inputs in
 * graph-input order with matching dtype/shape, outputs malloc'd. */
typedef struct TgtHostModel TgtHostModel;
int  tgt_host_jit(const IrGraph *g, const TgtOptions *o, TgtHostModel **out, UtilDiag *d);
int  tgt_host_run(TgtHostModel *m, const IrArray *inputs, IrArray *outputs, UtilDiag *d);
void tgt_host_free(TgtHostModel *m);

/* NAME.h: sizes, shapes, the return codes (runtime/dlcc_abi.h), the
 * input/output structs and the entry points, as h describes them. */
int  tgt_emit_header(const IrGraph *g, const LoopProgram *p, const TgtOptions *o, const TgtHeader *h,
                     UtilBuf *out, UtilDiag *d);
/* NAME.report.json: workspace (planned and lower bound), weights, stack
 * (as the header), per-kernel FLOPs, target. */
int  tgt_emit_report(const IrGraph *g, const LoopProgram *p, const TgtOptions *o, int64_t stack_bytes,
                     const char *target, UtilBuf *out, UtilDiag *d);

#endif
