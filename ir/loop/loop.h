/* ir/loop/ — the loop-level IR: buffers, index/value expressions and
 * statements, for all three targets.  Prefix: loop_ / Loop.
 *
 * A LoopProgram is what lowering produces from a graph: the buffers the model
 * touches (inputs, outputs, constant weights, workspace slices, locals) and a
 * sequence of kernels, each one loop nest (one fused group of graph nodes).
 * Code generators (codegen/) walk it; schedules (tiling, vectorizing,
 * unrolling, GPU binding, HLS pipelining) are rewrites of it.
 *
 * Everything is allocated in the program's arena; nothing is freed
 * individually.  Expressions and statements are trees (no sharing needed:
 * builders copy as required), so passes can rewrite them in place.
 */
#ifndef DLCC_LOOP_H
#define DLCC_LOOP_H

#include "ir/ir.h"

/* ------------------------------------------------------------- buffers */

typedef enum LoopStorage {
    LOOP_ST_INPUT,       /* model input: read-only, caller's pointer */
    LOOP_ST_OUTPUT,      /* model output: caller's pointer */
    LOOP_ST_CONST,       /* weights: constant data, emitted as read-only data */
    LOOP_ST_WORKSPACE,   /* intermediate: a slice [offset, offset+bytes) of the caller's workspace */
    LOOP_ST_LOCAL,       /* kernel-local scratch: stack / registers (CPU), shared memory (GPU), BRAM (HLS) */
} LoopStorage;

typedef struct LoopBuf {
    const char *name;        /* C-identifier-safe, unique in the program */
    IrDType dtype;
    IrShape shape;           /* logical shape */
    int64_t strides[IR_MAX_RANK];   /* in elements; row-major unless a layout pass changed them */
    LoopStorage storage;
    int64_t offset;          /* WORKSPACE: byte offset in the workspace (set by memory planning) */
    int64_t bytes;           /* total bytes */
    const void *data;        /* CONST: the values (not owned) */
    int index;               /* INPUT/OUTPUT: position in the model's input/output list */
    int alias_of;            /* >= 0: this buffer is a view of buffer alias_of (Reshape et al.) */
    int partition;           /* HLS: complete/cyclic partition factor along the last dim (0 = none) */
    int offchip;             /* HLS: CONST or WORKSPACE kept in external memory (DDR / HBM) behind an
                                m_axi port of the top function instead of on chip */
    int64_t stream;          /* HLS: > 0: a WORKSPACE buffer passed from its one producer kernel to its one
                                consumer kernel as an hls::stream FIFO of this depth, read in the order it
                                is written (targets/fpga/stream.c) */
    int stream_lanes;        /* HLS stream: > 1: an array of this many FIFOs, one per channel of a 4-D
                                [N, C, H, W] tensor; an access's index is then its lane (channel) */
    int slack;               /* elements allocated past the end (included in bytes): a strided
                                vector load may read up to k-1 elements past its last lane */
    int tensor;              /* graph tensor it came from, or -1 */
    /* A halo (loop_buf_halo): a 4-D [N, C, H, W] WORKSPACE buffer laid out
     * with halo_rows rows of halo_fill between consecutive channels (and
     * before the first and after the last) and halo_cols columns of it after
     * every row, so that reads up to halo_rows rows above or below a channel
     * and halo_cols columns left or right of a row see halo_fill: a
     * convolution reads its padding in place.  strides give the layout;
     * element [0, 0, 0, 0] is `base` elements from the start of the slice. */
    int halo_rows, halo_cols;
    double halo_fill;
    int64_t base;
} LoopBuf;

/* ---------------------------------------------------------- expressions */

typedef enum LoopExprKind {
    LOOP_E_INT,          /* integer constant: I64 (index arithmetic) or BOOL (0/1, a folded condition) */
    LOOP_E_FLOAT,        /* floating constant of `type` */
    LOOP_E_VAR,          /* loop variable or let-bound variable */
    LOOP_E_LOAD,         /* buf[index]: flat element index expression */
    LOOP_E_BIN,          /* a op b */
    LOOP_E_UN,           /* op a */
    LOOP_E_SELECT,       /* cond ? a : b; when a is a LOAD it is a guarded load: the buffer is not read
                            where cond is false (a lowering may index past the buffer there) */
    LOOP_E_CALL,         /* intrinsic(args) */
    LOOP_E_CAST,         /* convert a to `type` */
} LoopExprKind;

typedef enum LoopBinOp {
    LOOP_ADD, LOOP_SUB, LOOP_MUL,
    LOOP_DIV,            /* integers: floor division (index math); floats: IEEE division */
    LOOP_TDIV,           /* integers: truncating division (ONNX integer Div) */
    LOOP_MOD,            /* integers: floor modulo (result has the divisor's sign) */
    LOOP_TMOD,           /* integers: C remainder; floats: fmod */
    LOOP_MIN, LOOP_MAX,
    LOOP_LT, LOOP_LE, LOOP_EQ, LOOP_NE,   /* result type bool */
    LOOP_AND, LOOP_OR, LOOP_XOR,          /* bool or bitwise on integers */
    LOOP_SHL, LOOP_SHR,
} LoopBinOp;

typedef enum LoopUnOp { LOOP_NEG, LOOP_NOT, LOOP_ABS } LoopUnOp;

/* Intrinsics every code generator provides (LLVM intrinsics / libm on CPU,
 * libdevice-free PTX approximations on GPU, math.h / fixed-point on HLS).
 * All take float arguments of one type but dot4, the 8-bit dot product on
 * int32 words: dot4(acc, a, b) = acc + sum_{j<4} ubyte_j(a) * sbyte_j(b)
 * (byte j = bits 8j..8j+7; wrapping int32), x86 VPDPBUSD where the target
 * has VNNI; bf16pack(lo, hi), two float32 rounded to bfloat16 (nearest
 * even) as the halves of an int32 word; dot2bf(acc, a, b) = float32 acc +
 * hi(a) hi(b) + lo(a) lo(b), the bfloat16 halves of words a and b, the
 * products exact and each sum rounded (x86 VDPBF16PS where the target has
 * AVX512-BF16, which also flushes denormals); dot2(acc, a, b) = int32 acc +
 * lo(a) lo(b) + hi(a) hi(b), the signed 16-bit halves of words a and b
 * (wrapping int32), x86 VPMADDWD then an add. */
#define LOOP_INTRINSICS(X) \
    X(exp) X(log) X(sqrt) X(tanh) X(erf) X(sin) X(cos) X(tan) X(asin) X(acos) X(atan) \
    X(sinh) X(cosh) X(asinh) X(acosh) X(atanh) X(floor) X(ceil) X(round_even) \
    X(pow) X(fma) X(isnan) X(isinf) X(dot4) X(bf16pack) X(dot2bf) X(dot2)

typedef enum LoopIntrinsic {
#define X(name) LOOP_I_##name,
    LOOP_INTRINSICS(X)
#undef X
    LOOP_I_COUNT
} LoopIntrinsic;

typedef struct LoopExpr LoopExpr;
struct LoopExpr {
    LoopExprKind kind;
    IrDType type;            /* I64 for index expressions; BOOL for comparisons */
    union {
        int64_t i;                                  /* INT */
        double f;                                   /* FLOAT */
        int var;                                    /* VAR: variable id */
        struct {
            int buf;
            LoopExpr *index;
            int spare;       /* elements past this load's last lane known to be readable (a strided
                                vector load reading them as one wide load: codegen/vector.c), besides
                                the buffer's slack; 0 unless the lowering proves it */
            int lead;        /* elements before lane 0's index known to be readable: a strided
                                vector load may start its wide load up to that many elements earlier
                                (codegen/vector.c: the taps of one row then share one load); 0 unless
                                the lowering proves it */
            int safe;        /* 1: every lane's element lies inside the buffer even where a guarding
                                SELECT does not take it, so a vector load may read all lanes (a strided
                                one as one wide load and a shuffle); 0 unless the lowering proves it */
        } load;                                     /* LOAD */
        struct { LoopBinOp op; LoopExpr *a, *b; } bin;
        struct { LoopUnOp op; LoopExpr *a; } un;
        struct { LoopExpr *cond, *a, *b; } sel;
        struct { LoopIntrinsic fn; int n; LoopExpr *args[3]; } call;
        struct { LoopExpr *a; } cast;
    } u;
};

/* ----------------------------------------------------------- statements */

typedef enum LoopForKind {
    LOOP_SERIAL,
    LOOP_PARALLEL,       /* iterations are independent (LOCAL buffers too); CPU: split across threads;
                            GPU, outermost: a block each (targets/gpu/coop.c) */
    LOOP_VECTORIZED,     /* innermost, constant extent: one SIMD operation per statement */
    LOOP_UNROLLED,       /* constant extent: fully unrolled by the code generator */
    LOOP_GPU_BLOCK_X, LOOP_GPU_BLOCK_Y, LOOP_GPU_BLOCK_Z,
    LOOP_GPU_THREAD_X, LOOP_GPU_THREAD_Y, LOOP_GPU_THREAD_Z,
    LOOP_HLS_PIPELINE,   /* HLS: #pragma HLS PIPELINE II=ii */
} LoopForKind;

typedef enum LoopStmtKind {
    LOOP_S_FOR,          /* for var in [0, extent): body */
    LOOP_S_LET,          /* var = value; (scoped to the rest of the enclosing block) */
    LOOP_S_ASSIGN,       /* var = value, for a mutable accumulator declared by LET */
    LOOP_S_STORE,        /* buf[index] = value */
    LOOP_S_IF,           /* if cond then else (else may be NULL) */
    LOOP_S_BLOCK,        /* sequence */
    LOOP_S_BARRIER,      /* GPU: __syncthreads among the threads of a block */
    LOOP_S_PREFETCH,     /* a hint: buf[index] is read soon (CPU: its cache line fetched into L2);
                            no effect on any value, so a target may drop it */
} LoopStmtKind;

typedef struct LoopStmt LoopStmt;
struct LoopStmt {
    LoopStmtKind kind;
    union {
        struct {
            int var;
            LoopExpr *extent;    /* iteration count (index expression, usually constant) */
            LoopForKind kind;
            int factor;          /* VECTORIZED: lanes; UNROLLED: factor (0 = full); HLS_PIPELINE: II */
            LoopStmt *body;
        } loop;
        struct { int var; LoopExpr *value; int mutable_; } let;
        struct { int var; LoopExpr *value; } assign;
        struct { int buf; LoopExpr *index; LoopExpr *value; } store;
        struct { int buf; LoopExpr *index; } prefetch;
        struct { LoopExpr *cond; LoopStmt *then_, *else_; } cond;
        struct { int n, cap; LoopStmt **items; } block;
    } u;
};

typedef struct LoopVar {
    const char *name;        /* for printing: i0, i1, acc, ... */
    IrDType type;
} LoopVar;

/* One kernel: a loop nest computing one fused group of graph nodes. */
typedef struct LoopKernel {
    const char *name;        /* C identifier, unique in the program */
    LoopStmt *body;
    int first_node, n_nodes; /* graph nodes it implements (for reports) */
    int64_t flops;
    int moves;               /* a data-movement kernel: flops counts the elements it stores */
    int prepares;            /* prepares the input of a later kernel of its node (fills a buffer's halo,
                                gathers or packs a copy): parallel at any size when that one is
                                (targets/cpu/schedule.c) */
} LoopKernel;

typedef struct LoopProgram {
    UtilArena arena;
    const char *name;        /* model name (C identifier) */
    LoopBuf *bufs;
    int n_bufs, cap_bufs;
    LoopVar *vars;
    int n_vars, cap_vars;
    LoopKernel *kernels;
    int n_kernels, cap_kernels;
    int n_inputs, n_outputs;
    int64_t workspace_bytes;
    int64_t workspace_align;
} LoopProgram;

LoopProgram *loop_program_new(const char *name);
void loop_program_free(LoopProgram *p);

int loop_add_buf(LoopProgram *p, const char *name, IrDType dt, const IrShape *shape, LoopStorage st);
int loop_add_var(LoopProgram *p, const char *hint, IrDType type);
/* Lays buffer b (4-D, row-major so far) out with a halo of `rows` rows and
 * `cols` columns of `fill` (LoopBuf.halo_rows), at least `front` elements
 * before the first halo row and `slack` after the last: strides, base,
 * bytes.  -1 when b is not a 4-D workspace buffer or the size overflows. */
int loop_buf_halo(LoopProgram *p, int b, int rows, int cols, int front, double fill, int slack);
/* Laid out with halo rows or columns: rows (or channels) further apart than
 * the shape says, so its flat index is not the row-major one. */
static inline int loop_buf_has_halo(const LoopBuf *b) { return b->halo_rows || b->halo_cols; }
/* May load e, read as a vector of stride k, read k*W elements from its lane
 * 0 on?  The k-1 elements past its last lane must be allocated
 * (LoopBuf.slack) or known to lie inside the buffer (the load's spare). */
static inline int loop_load_widens(const LoopProgram *p, const LoopExpr *e, int64_t k)
{
    return p->bufs[e->u.load.buf].slack >= k - 1 || e->u.load.spare >= k - 1;
}
/* Is e a table load: from a constant table of 256 bytes at Cast(int64, b) of
 * a uint8 expression b (lower/data.c's lookups), always in bounds?  The CPU
 * code reads a vector of them with byte permutes where the target has them
 * (codegen/vector.c). */
static inline int loop_load_is_table(const LoopProgram *p, const LoopExpr *e)
{
    const LoopBuf *b = e->kind == LOOP_E_LOAD ? &p->bufs[e->u.load.buf] : NULL;
    const LoopExpr *i = b ? e->u.load.index : NULL;
    return b && b->storage == LOOP_ST_CONST && ir_dtype_size(b->dtype) == 1 && ir_shape_numel(&b->shape) == 256 &&
           i->kind == LOOP_E_CAST && i->type == IR_DT_I64 && i->u.cast.a->type == IR_DT_U8;
}
int loop_add_kernel(LoopProgram *p, const char *name, LoopStmt *body);

/* Expression builders (arena-allocated; NULL only on out-of-memory). */
LoopExpr *loop_int(LoopProgram *p, int64_t v);
LoopExpr *loop_float(LoopProgram *p, IrDType t, double v);
LoopExpr *loop_var(LoopProgram *p, int var);
LoopExpr *loop_load(LoopProgram *p, int buf, LoopExpr *index);
LoopExpr *loop_bin(LoopProgram *p, LoopBinOp op, LoopExpr *a, LoopExpr *b);
LoopExpr *loop_un(LoopProgram *p, LoopUnOp op, LoopExpr *a);
LoopExpr *loop_select(LoopProgram *p, LoopExpr *c, LoopExpr *a, LoopExpr *b);
LoopExpr *loop_call(LoopProgram *p, LoopIntrinsic fn, int n, LoopExpr *const *args);
LoopExpr *loop_cast(LoopProgram *p, IrDType t, LoopExpr *a);
LoopExpr *loop_expr_copy(LoopProgram *p, const LoopExpr *e);
/* Does e mention variable var? */
int loop_expr_uses(const LoopExpr *e, int var);
/* A copy of e with each VAR vars[i] replaced by a copy of by[i] (NULL: out
 * of memory somewhere in it, or e NULL). */
LoopExpr *loop_expr_subst(LoopProgram *p, const LoopExpr *e, const int *vars, LoopExpr *const *by, int n);
/* Flat element index of buf at the multi-index idx (rank of the buffer),
 * using its strides: sum idx[i] * strides[i]. */
LoopExpr *loop_index(LoopProgram *p, int buf, LoopExpr *const *idx);

/* Statement builders. */
LoopStmt *loop_for(LoopProgram *p, int var, LoopExpr *extent, LoopForKind kind, LoopStmt *body);
LoopStmt *loop_let(LoopProgram *p, int var, LoopExpr *value, int is_mutable);
LoopStmt *loop_assign(LoopProgram *p, int var, LoopExpr *value);
LoopStmt *loop_store(LoopProgram *p, int buf, LoopExpr *index, LoopExpr *value);
LoopStmt *loop_if(LoopProgram *p, LoopExpr *cond, LoopStmt *then_, LoopStmt *else_);
LoopStmt *loop_block(LoopProgram *p);
int       loop_block_add(LoopProgram *p, LoopStmt *block, LoopStmt *s);
LoopStmt *loop_barrier(LoopProgram *p);
LoopStmt *loop_prefetch(LoopProgram *p, int buf, LoopExpr *index);

/* Algebraic simplification of index expressions (constant folding, x+0,
 * x*1, x*0, (a*c1)*c2, (x+c1)+c2, min/max of constants, div/mod by 1,
 * (i*c)/c when i >= 0, (i*c + j) mod c with 0 <= j < c, ...).  Uses the loop
 * extents to know variable ranges: a variable is bound once in the program,
 * so its range is read off its FOR (or immutable LET) in p's kernels; a
 * variable not bound there is unbounded.  Rewrites in place; returns the
 * (possibly new) root.  loop_simplify also simplifies statements (see
 * docs/loop-ir.md) and replaces each kernel's body. */
LoopExpr *loop_simplify_expr(LoopProgram *p, LoopExpr *e);
void      loop_simplify(LoopProgram *p);

/* Checks: variables defined before use and in scope, each variable bound by
 * exactly one FOR or LET in the program, buffer ids valid, inputs/consts only
 * loaded from (stores only to outputs/workspace/locals), types
 * consistent (index exprs I64, conditions BOOL), constant extents for
 * VECTORIZED/UNROLLED loops, GPU thread loops nested inside block loops. */
int loop_verify(const LoopProgram *p, UtilDiag *d);

/* Names for printers and code generators. */
const char *loop_storage_name(LoopStorage st);     /* "input", "workspace", ... */
const char *loop_for_kind_name(LoopForKind k);     /* "serial", "parallel", "gpu.block.x", ... */
const char *loop_intrinsic_name(LoopIntrinsic fn); /* "exp", "round_even", ... */
int loop_binop_is_compare(LoopBinOp op);           /* LT LE EQ NE: result BOOL */
/* Calls fn(ctx, buf, store) for each buffer statement s loads (store = 0,
 * also inside indices) or stores (store = 1), in order, repeats included. */
typedef void (*LoopBufFn)(void *ctx, int buf, int store);
void loop_stmt_buffers(const LoopStmt *s, LoopBufFn fn, void *ctx);
/* Bytes of the buffers kernel k loads or stores (LoopBuf.bytes, each buffer
 * id once; not its LOCAL ones): with its flops, what a kernel costs (the CPU
 * schedule's parallel threshold, the heterogeneous cost model of
 * docs/targets/hetero.md).  -1 out of memory. */
int64_t loop_kernel_bytes(const LoopProgram *p, const LoopKernel *k);
/* Calls fn(ctx, &buf, &index, store) for each access of s (loads, also
 * inside indices, and prefetches: store 0; stores: 1), in order; fn may
 * change the buffer and the index (the walk then descends into the new
 * index). */
typedef void (*LoopAccessFn)(void *ctx, int *buf, LoopExpr **index, int store);
void loop_stmt_accesses(LoopStmt *s, LoopAccessFn fn, void *ctx);
/* Every access of buffer `from` in s made to buffer `to` at index + shift
 * (shift copied at each).  0, or -1 out of memory. */
int loop_stmt_rebase(LoopProgram *p, LoopStmt *s, int from, int to, const LoopExpr *shift);
/* Structural equality (same kinds, types, constants, variables, buffers). */
int loop_expr_equal(const LoopExpr *a, const LoopExpr *b);

/* Stable, diffable text form. */
void loop_print(const LoopProgram *p, UtilBuf *out);
void loop_print_expr(const LoopProgram *p, const LoopExpr *e, UtilBuf *out);

#endif
