/* codegen/c_emit.h — C source code generation from the loop IR (no LLVM):
 * the emitter behind the FPGA target's HLS C (codegen/hls.c adds the Vitis
 * HLS pragmas, the top function and the host wrapper) and reusable by a
 * plain-C target.  Prefix: cg_c_ / CgC.
 *
 * Each kernel becomes `static void NAME_kK_<kernel>(params)` whose parameters
 * are the root buffers it touches (following alias_of), as fixed-size 1-D
 * arrays in buffer-id order; constant buffers become `static const` arrays
 * (inside the kernel when only that kernel reads them, else at file scope);
 * LOCAL buffers are local arrays of the kernel.
 *
 * Numbers.  Integer and bool values are C integers (int64_t index
 * arithmetic with floor division / modulo helpers, bool as int).  Float
 * values are either C float / double ("float mode": plain C99) or, when the
 * target gives a fixed-point format to float buffers ("fixed mode": C++ over
 * Xilinx's ap_fixed.h), ap_fixed values:
 *  - a buffer of format fixed<W,I> is an array of
 *    ap_fixed<W, I, AP_RND_INF, AP_SAT> (typedef dlcc_fxW_I): W bits,
 *    F = W - I fraction bits;
 *  - inside a kernel every float value is a register of format
 *    fixed<32, 32-Fk> where Fk is the kernel's register fraction
 *    (CgCTarget.frac[k]); loads convert into it, stores convert out of it;
 *  - accumulators (v = v + e, cg_c_accumulators) are 48-bit wrapping
 *    values with the register's fraction bits, saturated once when read;
 *  - + - * form the exact result and convert it to the register; division
 *    truncates toward zero (x/0 saturates); min, max, compare, select are
 *    exact;
 *  - every conversion rounds half away from zero (AP_RND_INF) and
 *    saturates (AP_SAT);
 *  - exp, tanh and erf are lookup tables with linear interpolation on the
 *    register's bits (cg_fx_lut); the other non-linear intrinsics (sqrt,
 *    log, ...) convert to double, call libm and convert back (HLS
 *    synthesizes floating-point cores there).
 * targets/fpga/eval.c computes the same numbers with int64_t arithmetic, so
 * the C simulation can be checked against it bit for bit. */
#ifndef DLCC_C_EMIT_H
#define DLCC_C_EMIT_H

#include "ir/loop/loop.h"

/* A fixed-point format fixed<w,i>: w bits in all, i of them integer bits
 * (sign included), w - i fraction bits.  w == 0 means "not fixed". */
typedef struct CgFixed {
    int w, i;
} CgFixed;

typedef struct CgCTarget CgCTarget;
struct CgCTarget {
    const char *name;          /* prefix of every generated symbol */
    const CgFixed *fmt;        /* per buffer: storage format of float buffers; NULL = float mode */
    const int *frac;           /* per kernel: register fraction bits (fixed mode) */
    int no_values;             /* constant arrays declared without their values: a kernel checked for
                                  what C cannot express without printing its weights (not valid C) */
    /* Hooks (may be NULL).  Text is appended to out at indentation ind. */
    void *user;
    /* first lines of a loop body (e.g. #pragma HLS PIPELINE) */
    void (*loop_pragmas)(const CgCTarget *t, const LoopProgram *p, int kernel, const LoopStmt *loop,
                         UtilBuf *out, int ind);
    /* after the declaration of an array (buffer b) in function scope named `var` */
    void (*array_pragmas)(const CgCTarget *t, const LoopProgram *p, int b, const char *var, UtilBuf *out,
                          int ind);
    /* first lines of a kernel function body */
    void (*kernel_pragmas)(const CgCTarget *t, const LoopProgram *p, int kernel, UtilBuf *out);
};

/* A C type's name. */
typedef struct CgCType {
    char s[32];
} CgCType;
/* C type of a buffer's elements in memory (the format's ap_fixed typedef for fixed buffers). */
CgCType cg_c_buf_type(const CgCTarget *t, const LoopProgram *p, int b);
/* Bytes an element of format f takes in memory (ap_fixed's size in C simulation). */
int cg_fixed_bytes(CgFixed f);
/* The typedef name of format f: dlcc_fxW_I. */
CgCType cg_c_fixed_type(CgFixed f);
/* C type of elements of dtype dt in memory (native types). */
const char *cg_c_dtype(IrDType dt);
/* Storage root of buffer b (follows alias_of). */
int cg_c_root(const LoopProgram *p, int b);
/* The C name of a buffer inside kernels and the top function. */
void cg_c_buf_name(const LoopProgram *p, int b, char *out, size_t n);

/* Static inline helper functions the kernels call (index division, NaN-safe
 * min/max); in fixed mode (t->fmt) also the fixed-point helpers and a
 * typedef for every format the buffers and registers of p use. */
void cg_c_helpers(UtilBuf *out, const CgCTarget *t, const LoopProgram *p);

/* Visits every LOAD expression and STORE statement of s (any callback
 * may be NULL); embed CgCWalk first in a context struct to pass state. */
typedef struct CgCWalk CgCWalk;
struct CgCWalk {
    void (*load)(CgCWalk *w, LoopExpr *load);
    void (*store)(CgCWalk *w, LoopStmt *store);
    void (*expr)(CgCWalk *w, LoopExpr *e);     /* every expression node, children first (may be NULL) */
};
void cg_c_walk(LoopStmt *s, CgCWalk *w);

/* Which root buffers kernel k uses: used[b] = 1 (loaded) | 2 (stored). */
void cg_c_kernel_uses(const LoopProgram *p, int k, unsigned char *used);
/* Kernels that read each CONST buffer: readers[b] = kernel id, -1 none,
 * -2 several. */
void cg_c_const_readers(const LoopProgram *p, int *readers);

/* File-scope constants (those read by several kernels; not LoopBuf.offchip
 * ones, which are kernel parameters like intermediates). */
void cg_c_emit_shared_consts(const CgCTarget *t, const LoopProgram *p, UtilBuf *out);
/* Constant buffer b as a file-scope static const array with its values. */
void cg_c_emit_const(const CgCTarget *t, const LoopProgram *p, int b, UtilBuf *out);
/* One kernel function.  Fails (diagnostic) on what C cannot express here:
 * float16/bfloat16 buffers, barriers, non-constant loop extents when
 * const_extents. */
int cg_c_emit_kernel(const CgCTarget *t, const LoopProgram *p, int k, int const_extents, UtilBuf *out,
                     UtilDiag *d);
/* The call of kernel k from a function where each root buffer is an array
 * named by cg_c_buf_name. */
void cg_c_emit_call(const CgCTarget *t, const LoopProgram *p, int k, UtilBuf *out, int ind);
/* Name of kernel k's function. */
void cg_c_kernel_name(const CgCTarget *t, const LoopProgram *p, int k, char *out, size_t n);

/* A C literal for v (float when single, else double; NAN/INFINITY from math.h). */
void cg_c_float(UtilBuf *o, double v, int single);

/* Fixed-point value of x in format f, rounded half away from zero and
 * saturated (what the generated code stores). */
int64_t cg_fixed_quantize(CgFixed f, double x);
double  cg_fixed_value(CgFixed f, int64_t q);
/* Fixed mode's accumulators: a mutable float variable of kernel k that is
 * only ever updated as v = v + e (e not reading v) is held in
 * ap_fixed<48, 48-F, AP_TRN, AP_WRAP> (cg_c_acc_type: no saturation or
 * rounding inside the sum); every other read of it converts it to the
 * register (saturating), so a layer's output is rounded and saturated once.
 * wide[v] (n_vars bytes) = 1 for those variables. */
void cg_c_accumulators(const LoopProgram *p, int k, unsigned char *wide);
/* value == var + e (either order, e not reading var): 1 and *e. */
int cg_c_accumulation(const LoopExpr *value, int var, const LoopExpr **e);
/* The accumulator type's name for F fraction bits: dlcc_acc48_<48-F>. */
CgCType cg_c_acc_type(int frac);

/* Fixed mode's lookup-table functions (exp, tanh, erf): entry j (0 .. last)
 * of fn's table, round(g(j / 64) * 2^30) with g = 2^x for exp, tanh, erf;
 * exp multiplies by CG_FX_LOG2E = round(log2(e) * 2^30) first. */
#define CG_FX_LOG2E 1549082005LL
int64_t cg_fx_lut(LoopIntrinsic fn, int j);
/* Is fn one of them (exp, tanh, erf)? */
int cg_fx_lut_fn(LoopIntrinsic fn);
int cg_fx_lut_last(LoopIntrinsic fn);

/* "fixed<16,6>" → {16, 6}; 0, or -1 when malformed (needs 2 <= w <= 32, 1 <= i <= w). */
int cg_fixed_parse(const char *s, CgFixed *f);

/* ------------------------------------------------------------- HLS C */

/* What cg_hls_emit writes into NAME.c. */
typedef struct CgHlsOptions {
    const char *name;              /* symbol prefix (NAME_top, NAME_run, ...) */
    const char *model;             /* model name, for the comment at the top */
    const CgFixed *fmt;            /* per buffer (NULL = float32 everywhere) */
    const int *frac;               /* per kernel register fraction bits (fixed mode) */
    const char *const *in_fields;  /* NAME_inputs field per model input */
    const char *const *out_fields; /* NAME_outputs field per model output */
    const int64_t *io_offset;      /* fixed mode: per INPUT/OUTPUT root buffer, its converted copy's
                                      byte offset in the host wrapper's workspace (else unused) */
} CgHlsOptions;

/* The synthesizable HLS C file (codegen/hls.c): helpers, constants, one
 * function per kernel with PIPELINE / UNROLL / ARRAY_PARTITION pragmas from
 * the loop kinds and LoopBuf.partition, the top function NAME_top (m_axi
 * ports for inputs and outputs, s_axilite control, DATAFLOW when every
 * intermediate has one producer and one consumer, intermediates as local
 * arrays), and under #ifndef __SYNTHESIS__ the host wrapper NAME_run /
 * NAME_run_ptrs (docs/generated-code.md) converting float to fixed point and back.
 * *dataflow is set to whether DATAFLOW was emitted. */
int cg_hls_emit(const LoopProgram *p, const CgHlsOptions *o, UtilBuf *out, int *dataflow, UtilDiag *d);
/* Does p pass some intermediate through an hls::stream (LoopBuf.stream)?
 * Then NAME is C++ (NAME.cpp) even in float32. */
int cg_hls_has_streams(const LoopProgram *p);
/* Can the kernels of p form a DATAFLOW region (single producer and single
 * consumer per buffer, ports read or written by one kernel)?  When not,
 * *why names the first offending buffer. */
int cg_hls_dataflow_ok(const LoopProgram *p, const char **why);

#endif
