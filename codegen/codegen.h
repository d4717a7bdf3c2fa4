/* codegen/ — code generation from the loop IR.  Prefix: cg_ / Cg.
 * Through the LLVM C API: CPU objects (compile.c, emit.c, expr.c, vector.c,
 * parallel.c, mathlib.c), PTX with its host object (ptx.c) and the host JIT
 * (jit.c); as C text: the C emitter (c_emit.c) and HLS C (hls.c).  This
 * folder is the only place in dlcc that includes llvm-c/ headers; everything
 * LLVM-specific stays behind this interface.
 *
 * cg_compile turns a LoopProgram into an object file (and optionally textual
 * LLVM IR and assembly) for any triple LLVM's X86, AArch64, ARM, RISCV or
 * NVPTX backends know.  cg_jit compiles the same module for the host with
 * LLVM's ORC LLJIT (used by `dlcc run --backend cpu` and by tests).
 *
 * The generated object exports (docs/generated-code.md), for the program name NAME:
 *
 *   int32_t NAME_run_ptrs(const void *const inputs[], void *const outputs[], void *workspace);
 *   int32_t NAME_run(const NAME_inputs *in, NAME_outputs *out, void *workspace);
 *
 * Both return 0 on success and DLCC_ERR_NULL when a pointer they need is NULL:
 * the inputs array or any of its n_inputs entries, the outputs array or any of
 * its n_outputs entries, or the workspace when the program needs one.
 * NAME_run is NAME_run_ptrs over structs whose fields are those pointers in
 * order.  Buffers: INPUT/OUTPUT from the arrays at LoopBuf.index; CONST as
 * private read-only globals (64-byte aligned, .rodata or o->weights_section);
 * WORKSPACE at workspace + LoopBuf.offset; LOCAL as fixed-size stack slots of
 * the kernel that uses them; a buffer with alias_of >= 0 uses the pointer of
 * the buffer it aliases.  Each kernel is an internal function called in order;
 * the object has no writable globals (.data/.bss are empty, except the
 * static workspace of CgOptions.static_workspace), calls no heap
 * functions, and calls only LLVM intrinsics and libm.
 *
 * Semantics the generated code gives the loop IR (see docs/loop-ir.md):
 *  - PARALLEL loops run serially (threading comes later through the Halide
 *    runtime's halide_do_par_for).  VECTORIZED loops carry llvm.loop metadata
 *    (vectorize.enable, width = factor) for LLVM's loop vectorizer; UNROLLED
 *    loops carry unroll.full (factor 0) or unroll.count.  GPU_* and HLS_*
 *    loops and BARRIER are diagnosed ("not a CPU loop kind"), unless
 *    CgOptions.gpu_emulate / hls_emulate make those loops serial.
 *  - float16 / bfloat16 are stored as half / bfloat and computed in float;
 *    a cast to them rounds.  bool is i1 in registers, one byte in memory.
 *  - Integer division and modulo by zero give 0 and INT_MIN / -1 wraps (no
 *    undefined behaviour); shifts by >= the bit width give 0 (or the sign for
 *    a signed right shift).  Float-to-integer casts saturate (NaN -> 0).
 *  - Float MIN/MAX propagate NaN.  No fast-math flags are used.
 */
#ifndef DLCC_CODEGEN_H
#define DLCC_CODEGEN_H

#include <stdint.h>

#include "ir/loop/loop.h"
#include "runtime/dlcc_abi.h"   /* the entry points' return codes (DLCC_ERR_NULL) */

/* What cg_compile produces (bits of CgOptions.emit; 0 means CG_EMIT_OBJ). */
enum {
    CG_EMIT_OBJ = 1,     /* relocatable object file */
    CG_EMIT_ASM = 2,     /* assembly text (.s) */
    CG_EMIT_LLVM = 4,    /* LLVM IR text (.ll), after optimization */
};

typedef struct CgOptions {
    const char *triple;      /* LLVM target triple; NULL = the host's */
    const char *cpu;         /* NULL = "generic" for cg_compile (portable objects) and
                                the host CPU with its features for cg_jit; "native" =
                                the host CPU and features (host triple only) */
    const char *features;    /* "+avx2,-sse4a"; NULL = none (or the host's, see cpu) */
    int opt_level;           /* 0..3: LLVM's default<On> pipeline and codegen level */
    unsigned emit;           /* CG_EMIT_* */
    const char *weights_section;  /* section for CONST buffers; NULL = .rodata */
    int gpu_emulate;         /* GPU_BLOCK_* / GPU_THREAD_* loops run as serial loops (--gpu-emulate);
                                barriers must have been split away (tgt_gpu_split_barriers) */
    int hls_emulate;         /* HLS_PIPELINE loops run as serial loops and array partitions are ignored: an
                                FPGA-scheduled program built for the host (-t hetero --emulate) */
    /* Firmware: a zero-initialized, 64-byte aligned internal global of the
     * workspace's size (in workspace_section, NULL = .bss) that NAME_run_ptrs
     * uses when its workspace argument is NULL.  Makes the entry points
     * non-reentrant (that one buffer is shared state). */
    int static_workspace;
    const char *workspace_section;
    /* Emit the math the loop IR's intrinsics need (exp, log, tanh, erf, ...)
     * as internal functions of the module (codegen/mathlib.c) instead of
     * LLVM intrinsics and libm calls: the object then references no libm
     * symbol on any triple.  Float results within 1e-6 relative.  Loops that
     * call these functions get no forced vectorize hint. */
    int no_libm;
    int threads;             /* > 1: each PARALLEL loop runs as `threads` tasks through the Halide
                                runtime's halide_do_par_for (the object then links dlcc-runtime);
                                the JIT ignores it */
    int kernel_symbols;      /* profiling: each kernel stays a function of its own (noinline), named
                                NAME.KERNEL, so a profiler (callgrind, perf) attributes time per kernel;
                                on hosted triples they always are (codegen/emit.c), so this matters
                                for bare-metal ones */
} CgOptions;

/* Outputs of cg_compile; each buffer is filled when its CG_EMIT_* bit is set. */
typedef struct CgResult {
    UtilBuf obj;
    UtilBuf asm_text;
    UtilBuf llvm_ir;
    /* With the object: worst-case stack bytes of NAME_run, from the frame
     * sizes LLVM's code generator reports for every function of the object
     * (summed: the code has no recursion), + 16 bytes per function (return
     * address, alignment) + CG_STACK_LIBCALL_BYTES for the library functions
     * it calls.  -1 when no object was made. */
    int64_t stack_bytes;
} CgResult;

#define CG_STACK_LIBCALL_BYTES 256

void cg_result_init(CgResult *r);
void cg_result_free(CgResult *r);

/* LoopProgram -> object code.  Verifies the program (loop_verify) and the
 * generated module (LLVMVerifyModule; a failure is an internal-error
 * diagnostic).  Objects for hosted triples (those naming an OS) are position
 * independent; `-none-` / `-unknown-elf` triples get static relocation.
 * Identical program and options give byte-identical outputs.
 * Returns 0, or -1 with a diagnostic. */
int cg_compile(const LoopProgram *p, const CgOptions *o, CgResult *r, UtilDiag *d);

/* In-process compilation for the host.  o may be NULL (-O2 defaults);
 * o->triple must be NULL or the host's.  The program may be freed after
 * cg_jit returns. */
typedef struct CgJit CgJit;
typedef int32_t (*CgRunFn)(const void *const inputs[], void *const outputs[], void *workspace);

int     cg_jit(const LoopProgram *p, const CgOptions *o, CgJit **out, UtilDiag *d);
CgRunFn cg_jit_entry(CgJit *j);       /* NAME_run_ptrs */
void    cg_jit_free(CgJit *j);

/* ---------------------------------------------------------------- GPU
 * cg_compile_gpu (codegen/ptx.c) turns a GPU-scheduled program into
 *  - PTX for nvptx64-nvidia-cuda: one `.entry` per kernel, named
 *    NAME_KERNEL, whose parameters are the device pointers of the buffers it
 *    uses (model inputs, outputs, constants, and the workspace base for
 *    intermediates), in buffer order.  GPU_BLOCK_* / GPU_THREAD_* loops read
 *    %ctaid / %tid (the launch has exactly the loops' extents; the body is
 *    still guarded by var < extent); LOOP_ST_LOCAL buffers are shared memory
 *    (addrspace 3); BARRIER is bar.sync 0.  A kernel with no GPU loop runs on
 *    one thread.  Math: libdevice's __nv_* functions (linked from
 *    o->libdevice) for exp, log, sin, cos, pow, tanh, erf, ...; sqrt, floor,
 *    fma, ... are NVPTX instructions; no fast-math flags, no FTZ.
 *  - a host object exporting NAME_run / NAME_run_ptrs (docs/generated-code.md) that
 *    holds the PTX text and a DlccGpuProgram (runtime/dlcc_gpu.h) and calls
 *    dlcc_gpu_run from the dlcc runtime. */
typedef struct CgGpuOptions {
    const char *arch;        /* "sm_80" (sm_75 .. sm_90) */
    const char *libdevice;   /* path of libdevice.10.bc; NULL = not available (math calls are then errors) */
    const char *host_triple; /* NULL = the host's */
    int opt_level;
    unsigned emit;           /* CG_EMIT_LLVM: device LLVM IR in llvm_ir */
} CgGpuOptions;

typedef struct CgGpuResult {
    UtilBuf ptx;             /* the PTX module */
    UtilBuf obj;             /* the host object */
    UtilBuf llvm_ir;         /* device LLVM IR after optimization (CG_EMIT_LLVM) */
    int n_device_bufs;       /* device buffers (sizes the workspace: DLCC_GPU_WORKSPACE_BYTES) */
} CgGpuResult;

void cg_gpu_result_init(CgGpuResult *r);
void cg_gpu_result_free(CgGpuResult *r);
int  cg_compile_gpu(const LoopProgram *p, const CgGpuOptions *o, CgGpuResult *r, UtilDiag *d);

/* ------------------------------------------------------- heterogeneous
 * cg_compile_hetero (codegen/hetero.c) writes the host object of a model
 * partitioned across devices (-t hetero, docs/targets/hetero.md): a constant
 * DlccHeteroProgram (runtime/dlcc_hetero.h) naming every partition's entry
 * point NAME_pK_run_ptrs (external: each partition is its own object, or
 * C file for an FPGA), and NAME_run / NAME_run_ptrs / NAME_submit /
 * NAME_wait / NAME_release forwarding to the runtime's dlcc_hetero_*
 * functions (dlcc_hetero_mpi_* when the partitions are placed on several
 * MPI ranks).  No writable globals. */
typedef struct CgHeteroDatum {
    int kind;                /* DLCC_HETERO_INPUT / OUTPUT / INTERMEDIATE */
    int index;               /* input / output position, or -1 */
    int64_t bytes;
    int64_t offset;          /* intermediates: the offset in a slot; -1 otherwise */
} CgHeteroDatum;

typedef struct CgHeteroPart {
    const char *name;        /* NAME_pK: the partition's entry point is NAME_pK_run_ptrs */
    const char *device;      /* the device's name in the plan */
    int kind;                /* DLCC_HETERO_CPU / GPU / FPGA */
    unsigned flags;          /* DLCC_HETERO_EMULATED, DLCC_HETERO_BOARD */
    int release;             /* 1: the partition exports NAME_pK_release (a GPU partition on a device) */
    int device_index, rank;
    int64_t ws_bytes, ws_offset;
    int n_in, n_out;
    const int *in, *out;     /* data it reads and writes, in its inputs' and outputs' order */
    double predicted_us;
} CgHeteroPart;

typedef struct CgHeteroProgram {
    const char *name;        /* NAME */
    const char *model;       /* the model's name (messages) */
    int n_data;
    const CgHeteroDatum *data;
    int n_parts;
    const CgHeteroPart *parts;
    int n_inputs, n_outputs, n_devices;
    int in_flight;           /* slots */
    int64_t slot_bytes;
    int nodes;               /* MPI ranks; <= 1: one process (dlcc_hetero_*), else dlcc_hetero_mpi_* */
} CgHeteroProgram;

/* The host object of p for o's triple (NULL: the host) into r->obj. */
int cg_compile_hetero(const CgHeteroProgram *p, const CgOptions *o, CgResult *r, UtilDiag *d);

/* The host's normalized target triple, malloc'd (for reports and headers). */
char *cg_host_triple(void);

/* Width in bits of the float SIMD registers the code for o (triple, cpu,
 * features; jit: the host CPU unless o->cpu says otherwise) may use: 512
 * (AVX-512), 256 (AVX), 128 (SSE, NEON), 0 (no float SIMD: Cortex-M,
 * RISC-V without V, unknown).  Read off the feature string, or for a named
 * CPU without one, from a table of well-known x86 CPUs. */
int cg_simd_bits(const CgOptions *o, int jit);
/* Width in bits of the widest 8-bit dot product instruction the code for o
 * may use: 512 (x86 AVX512-VNNI with AVX512VL), 256 (AVX-VNNI), 128
 * (AArch64 DotProd: SDOT, and USDOT with I8MM), 0 (none). */
int cg_dot_i8_bits(const CgOptions *o, int jit);
/* 1 when that instruction multiplies unsigned by signed bytes (VPDPBUSD,
 * USDOT), 0 when it takes signed bytes only (SDOT; the loop IR's dot4 then
 * adds a correction, codegen/expr.c) or there is none. */
int cg_dot_i8_mixed(const CgOptions *o, int jit);
/* The same for the 16-bit pair dot product VPMADDWD (the loop IR's dot2):
 * 512 (AVX512BW), 256 (AVX2), 0 (none, or not x86). */
int cg_dot_i16_bits(const CgOptions *o, int jit);
/* The same for the bfloat16 dot product VDPBF16PS: 512 (AVX512-BF16 with
 * AVX512VL), 0 (none, or not x86). */
int cg_dot_bf16_bits(const CgOptions *o, int jit);
/* The narrowest element, in bytes, that the code for o loads and stores
 * under a mask as one instruction: 1 (AVX-512 with BW), 4 (AVX, AVX2,
 * AVX-512F alone: 32- and 64-bit elements), 0 (none: SSE, NEON, others,
 * where LLVM turns a masked access into a branch per lane). */
int cg_masked_bytes(const CgOptions *o, int jit);
/* The same for byte permutes across two registers, VPERMI2B (the loop IR's
 * table loads, loop_load_is_table): 512 (AVX512-VBMI), 0 (none, or not x86). */
int cg_byte_permute_bits(const CgOptions *o, int jit);

#endif
