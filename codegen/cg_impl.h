/* codegen/cg_impl.h — internals shared by the files of codegen/: the one
 * context struct that owns every LLVM handle of a compilation. */
#ifndef DLCC_CG_IMPL_H
#define DLCC_CG_IMPL_H

#include "codegen/codegen.h"

#include <llvm-c/Core.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>

typedef struct CgCtx CgCtx;

/* What a kind of code adds to the statement emitter (emit.c), set by its
 * driver before emission, so that emit.c calls no driver: ptx.c's NVPTX
 * kernels (GPU loops, barriers, kernel parameters and shared memory),
 * parallel.c's parallel regions of CPU code (cg_region_prepare).  NULL
 * members: that form does not occur. */
typedef struct CgHooks {
    int (*gpu_loop)(CgCtx *c, const LoopStmt *s);             /* GPU_BLOCK_* / GPU_THREAD_* loop */
    int (*barrier)(CgCtx *c);                                 /* BARRIER */
    LLVMValueRef (*root_ptr)(CgCtx *c, int buf);              /* base pointer of a root buffer */
    int (*region_kernel)(CgCtx *c, const LoopStmt *body);     /* a kernel's body in a parallel region */
    int (*region_run)(CgCtx *c, LLVMValueRef *kfn, int n, LLVMValueRef kargs[3], LLVMTypeRef kernel_t);
} CgHooks;

struct CgCtx {
    /* LLVM handles, created by cg_ctx_init and disposed by cg_ctx_dispose. */
    LLVMContextRef ctx;              /* owned unless owns_ctx == 0 (JIT: the ORC context) */
    LLVMModuleRef mod;               /* owned unless handed to the JIT (mod = NULL then) */
    LLVMBuilderRef b;                /* code builder */
    LLVMBuilderRef ab;               /* alloca builder: end of the current function's entry block */
    LLVMTargetMachineRef tm;
    LLVMPassBuilderOptionsRef pbo;
    int owns_ctx;
    int gpu;                         /* device code for NVPTX (ptx.c): GPU loops, shared memory, barriers */
    int x86_simd;                    /* x86 targets: SIMD bits (128 SSE, 256 AVX, 512 AVX-512); else 0 */
    int x86_dot_i8;                  /* x86 targets: widest VPDPBUSD (512 AVX512-VNNI, 256 AVX-VNNI); else 0 */
    int x86_dot_i16;                 /* x86 targets: VPMADDWD (512: AVX512BW, 256: AVX2); else 0 */
    int x86_dot_bf16;                /* x86 targets: VDPBF16PS (512: AVX512-BF16 with AVX512VL); else 0 */
    int x86_perm;                    /* x86 targets: VPERMI2B (512: AVX512-VBMI); else 0 */
    int mask_bytes;                  /* narrowest element masked vector moves take as one instruction
                                        (cg_masked_bytes), 0 none */
    int a64_dot;                     /* AArch64 targets: 2 USDOT (I8MM), 1 SDOT only (DotProd), else 0 */
    int n_params;                    /* GPU kernel: number of parameters */
    int *param_of;                   /* GPU kernel: per root buffer, its parameter number or -1 */

    /* What we compile. */
    const LoopProgram *p;
    CgOptions o;
    UtilDiag *d;
    char *triple;                    /* normalized triple (malloc) */
    int bare_metal;                  /* a -none- / -unknown- OS: no C library's libm beyond C99's is assumed */
    char *cpu, *features;            /* malloc */

    /* Cached types. */
    LLVMTypeRef t_void, t_i1, t_i8, t_i16, t_i32, t_i64, t_half, t_bf16, t_f32, t_f64, t_ptr;
    unsigned md_loop;                /* kind id of !llvm.loop */

    /* Per-function emission state. */
    LLVMValueRef fn;
    LLVMBasicBlockRef entry;         /* holds the allocas; branches to the body at the end */
    LLVMValueRef args[3];            /* inputs, outputs, workspace */
    LLVMValueRef *bufptr;            /* per buffer: base pointer in fn, or NULL */
    LLVMValueRef *var;               /* per variable: SSA value, or the alloca if mutable */
    unsigned char *var_mut;          /* 1: var[] is the alloca of a mutable variable; 2: a vector
                                        (a LET in a widened VECTORIZED loop, vector.c) */
    LLVMValueRef *globals;           /* per CONST buffer: its global, or NULL */
    unsigned math_calls;             /* calls cg_math emitted so far (no_libm) */
    int region;                      /* kernels run in one parallel region per call (parallel.c) */
    LLVMValueRef tstate;             /* region: the kernel function's task state argument */
    const CgHooks *hooks;            /* the code's additions to emit.c, or NULL */
};

/* context.c: targets, target machine, passes and output. */
int  cg_ctx_init(CgCtx *c, const LoopProgram *p, const CgOptions *o, LLVMContextRef ext_ctx, int jit,
                 UtilDiag *d);
void cg_ctx_dispose(CgCtx *c);
int  cg_ctx_optimize(CgCtx *c);      /* LLVMVerifyModule + LLVMRunPasses */
int  cg_internal_error(CgCtx *c, const char *what, char *llvm_msg);   /* disposes llvm_msg */
int  cg_emit_file(CgCtx *c, LLVMCodeGenFileType kind, UtilBuf *out, int64_t *stack);  /* object or assembly of
                                                 c->mod; *stack (if not NULL): the stack bound */
int  cg_emit_last(CgCtx *c, LLVMCodeGenFileType kind, UtilBuf *out);  /* c->mod itself, its last use
                                                 (NVPTX: see context.c) */

/* emit.c: the module (entry points, kernels, buffers, statements); the
 * CPU's parallel regions when c->region (cg_region_prepare). */
int cg_emit_module(CgCtx *c);
int cg_stmt(CgCtx *c, const LoopStmt *s);
typedef int (*CgStmtFn)(CgCtx *c, const LoopStmt *s);
LLVMValueRef cg_counted_loop(CgCtx *c, int var, LLVMValueRef lo, LLVMValueRef hi, CgStmtFn body,
                             const LoopStmt *s);   /* for var in [lo, hi): body(c, s); the latch branch */
int cg_if(CgCtx *c, const LoopStmt *s, CgStmtFn emit);   /* IF s, its branches emitted by emit */
int cg_setup_buffers(CgCtx *c, const LoopStmt *body);   /* base pointers of the buffers body uses */
LLVMValueRef cg_const_global(CgCtx *c, int buf);         /* read-only global of a CONST buffer */
void cg_end_entry_block(CgCtx *c);
void cg_used_buffers(const LoopStmt *s, unsigned char *used);   /* used[buf] = 1 for each buffer s touches */
int  cg_storage_root(const LoopProgram *p, int buf);     /* following alias_of; -1 on a cycle */

/* expr.c: types and expressions. */
LLVMTypeRef  cg_reg_type(CgCtx *c, IrDType t);   /* the type values of t have in registers */
LLVMTypeRef  cg_mem_type(CgCtx *c, IrDType t);   /* the type elements of t have in memory */
LLVMValueRef cg_expr(CgCtx *c, const LoopExpr *e);
LLVMValueRef cg_call_intrinsic(CgCtx *c, const char *name, LLVMTypeRef *ovl, size_t n_ovl, LLVMValueRef *args,
                               unsigned n);
LLVMValueRef cg_to_mem(CgCtx *c, IrDType t, LLVMValueRef v);     /* register -> memory form */
/* On evaluated operands (scalars, or vectors where the LLVM operation is
 * elementwise: float arithmetic, comparisons, float casts, intrinsics). */
LLVMValueRef cg_float_bin(CgCtx *c, LoopBinOp op, LLVMValueRef a, LLVMValueRef b);
LLVMValueRef cg_intrinsic(CgCtx *c, LoopIntrinsic fn, LLVMValueRef *a, unsigned n);
LLVMValueRef cg_cast(CgCtx *c, IrDType from, IrDType to, LLVMValueRef v);
/* float v (scalar or vector) to integer type `to`, saturating (NaN: 0). */
LLVMValueRef cg_float_to_int_sat(CgCtx *c, IrDType to, LLVMValueRef v);
int cg_contractible(const LoopExpr *e, const LoopExpr **m, const LoopExpr **z, int *neg_m, int *neg_z);
LLVMValueRef cg_muladd(CgCtx *c, LLVMValueRef x, LLVMValueRef y, LLVMValueRef z, int neg_m, int neg_z);
LLVMValueRef cg_from_mem(CgCtx *c, IrDType t, LLVMValueRef v);   /* memory -> register form */
int cg_fail(CgCtx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cg_add_fn_attr(CgCtx *c, LLVMValueRef fn, const char *name, uint64_t val);
/* A private, constant global of c->mod initialized to init (the descriptors
 * of the GPU and heterogeneous host objects: read-only data, no writable
 * globals). */
LLVMValueRef cg_private_const(CgCtx *c, LLVMValueRef init, const char *name, unsigned align);
/* An exported entry point `name` taking n_params (<= 7) pointers and
 * returning int32_t, that tail-calls the runtime function `callee` with
 * `first` (the object's descriptor) and its own arguments: how the GPU and
 * heterogeneous host objects hand their calls to the runtime library. */
void cg_forward(CgCtx *c, const char *name, int n_params, const char *callee, LLVMValueRef first);

/* vector.c: a VECTORIZED loop of constant extent W whose body qualifies,
 * emitted as W-lane vector operations without a loop; 1 when the loop does
 * not qualify (the caller emits a scalar loop with vectorizer hints). */
int cg_vector_loop(CgCtx *c, const LoopStmt *s);

/* parallel.c: one parallel region per call through the Halide runtime's
 * thread pool (CgOptions.threads > 1).  cg_region_prepare, before
 * cg_emit_module: when some kernel has a PARALLEL loop to split, sets
 * c->region and the hooks that cut each kernel's body into chunks the
 * region's tasks claim (kernel functions then take a fourth argument,
 * c->tstate) and run the region from NAME_run_ptrs. */
void cg_region_prepare(CgCtx *c);

/* mathlib.c (CgOptions.no_libm): a call of the module's own internal math
 * function `name` (an intrinsic's name from loop_intrinsic_name, or "trunc",
 * "fmod") on n float or double arguments of one type. */
LLVMValueRef cg_math(CgCtx *c, const char *name, LLVMValueRef *args, unsigned n);

#endif
