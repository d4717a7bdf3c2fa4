/* lower/lower_impl.h — private to lower/: the lowering context and the
 * loop-nest helpers every operator family's compute template is built from
 * (build.c, fused.c, scalar.c).
 *
 * Conventions of the generated loop IR:
 *  - every kernel's outermost loops run over the output's dims (so those
 *    iterations are independent; the CPU schedule may parallelize them);
 *  - reductions use a mutable LET accumulator inside the output loops;
 *  - float16 / bfloat16 are loaded and converted to float32 (LOOP_E_CAST),
 *    computed in float32 and converted back on store; float32 / float64
 *    compute in their own type; integers in their own type unless said;
 *  - reads that could fall outside a buffer (padding, runtime indices) are
 *    guarded by an IF, or by a SELECT over a load at a clamped index. */
#ifndef DLCC_LOWER_IMPL_H
#define DLCC_LOWER_IMPL_H

#include "lower/lower.h"
#include "passes/passes.h"   /* the fusion rules a group is re-checked with */

/* A kernel whose nest has a loop over blocks of its output's channels,
 * each iteration writing every element of channels [mt*mr, mt*mr + mr)
 * (clamped to C - 1) of buffer buf and nothing else of it: a consumer that
 * reads channel c of buf only to make its own channel c (a depthwise
 * convolution, a max pool) may run inside that loop, right after the block
 * is made (low_join). */
typedef struct LowBlocks {
    int kernel;             /* -1: none */
    const LoopStmt *body;   /* that kernel's body (checked: kernels are only appended, but a halo
                             * kernel taken away leaves its index to the next) */
    int buf;
    int mt, mr;             /* the block variable, channels per block */
    int64_t C;              /* channels of buf */
    LoopStmt *loop;         /* the FOR over mt */
} LowBlocks;

typedef struct Low {
    LoopProgram *p;
    const IrGraph *g;
    const IrNode *n;        /* node being lowered */
    int node;
    UtilDiag *d;
    int *tbuf;              /* tensor → buffer id, -1 when none yet */
    int oom;                /* a buffer could not be made (low_in) */
    const LowSchedule *s;  /* the target's schedule (NULL: plain loop nests) */
    int fuse_n;             /* elementwise members fused into this node's kernel: nodes
                             * node+1 .. node+fuse_n (IrNode.fused, passes/fuse.c); 0: none */
    int fused_stores;       /* stores low_fused_store made for the group (checked in lower.c) */
    int halo_kernel;        /* the kernel low_halo_fill added for this node, or -1 (its stores are
                             * the halo's, not the group's) */
    int64_t halo_lead;      /* elements before each channel that the halo kernel's first nest fills
                             * (and after the last channel), 0: none (low_halo_take_rows) */
    int halo_cols_store;    /* low_halo_fill left the output's halo columns to the node's kernel,
                             * which stores them with its rows (tile_halo_cols) */
    int halo_stores;        /* store statements of those (the halo's too) */
    LowBlocks blocks;       /* the last kernel built in channel blocks a consumer may join (kept
                             * across nodes; kernel -1: none) */
    int joined;             /* this node's nest went into earlier kernel `joined` (low_join), or -1 */
    const int *uses;        /* per tensor, the live node inputs reading it (low_graph), or NULL */
} Low;

/* Buffers a lowering may add besides its inputs' (Resize: 3 tables per
 * axis).  The buffer array is reserved for them before the lowering runs, so
 * LoopBuf pointers (low_buf) stay valid during one operator's lowering. */
#define LOW_MAX_NEW_BUFS (3 * IR_MAX_RANK + 8)

/* One lowering per operator family member; 0 or -1 with a diagnostic. */
typedef int (*LowFn)(Low *L);

int low_unary(Low *L);        /* elementwise.c */
int low_binary(Low *L);
int low_variadic(Low *L);
int low_where(Low *L);
int low_clip(Low *L);
int low_cast(Low *L);
int low_dropout(Low *L);
int low_copy(Low *L);          /* Identity and views whose result must be materialized */
int low_reduce(Low *L);       /* reduce.c */
int low_argreduce(Low *L);
int low_softmax(Low *L);
int low_channelnorm(Low *L);
int low_layernorm(Low *L);
int low_lpnorm(Low *L);
int low_cumsum(Low *L);
int low_rmsnorm(Low *L);
int low_groupnorm(Low *L);
int low_lrn(Low *L);
int low_mvn(Low *L);
int low_topk(Low *L);
int low_loss(Low *L);
int low_conv(Low *L);         /* window.c */
int low_convtranspose(Low *L);
int low_pool(Low *L);
int low_globalpool(Low *L);
int low_convinteger(Low *L);
int low_qlinearconv(Low *L);
int low_roialign(Low *L);
int low_deformconv(Low *L);
int low_col2im(Low *L);
int low_gridsample(Low *L);
int low_matmul(Low *L);       /* matmul.c */
int low_gemm(Low *L);
int low_matmulinteger(Low *L);
int low_qlinearmatmul(Low *L);
int low_einsum(Low *L);
int low_dft(Low *L);
int low_transpose(Low *L);    /* data.c */
int low_concat(Low *L);
int low_split(Low *L);
int low_slice(Low *L);
int low_gather(Low *L);
int low_gatherelements(Low *L);
int low_gathernd(Low *L);
int low_pad(Low *L);
int low_expand(Low *L);
int low_tile(Low *L);
int low_depthtospace(Low *L);
int low_constantofshape(Low *L);
int low_range(Low *L);
int low_resize(Low *L);
int low_trilu(Low *L);
int low_eyelike(Low *L);
int low_onehot(Low *L);
int low_reversesequence(Low *L);
int low_centercroppad(Low *L);
int low_scatterelements(Low *L);
int low_scatternd(Low *L);
int low_window_fn(Low *L);
int low_maxunpool(Low *L);
int low_rotary(Low *L);
int low_tensorscatter(Low *L);
int low_affinegrid(Low *L);
int low_quantize(Low *L);     /* quant.c */
int low_dequantize(Low *L);
int low_dynquantize(Low *L);
LoopExpr *low_requantize(Low *L, LoopExpr *acc, LoopExpr *mul, IrDType scale_type, int yz);
IrDType low_int_acc(Low *L, int64_t K, int b);
int low_rnn(Low *L);          /* rnn.c: RNN, GRU, LSTM */
int low_attention(Low *L);    /* attention.c */
int low_stft(Low *L);         /* signal.c */
int low_melweightmatrix(Low *L);
int low_det(Low *L);

/* The direct DFT sum of one output bin (signal.c): appends to blk
 * float64 accumulators *re, *im of sum_{t < cnt} (a_t + i b_t) e^(sign 2 pi
 * i k t / len), the angle computed as the interpreter's (sign 2 pi ((k t)
 * mod len) / len).  load(L, ctx, t, part) gives a_t (part 0) or b_t (part 1,
 * read only when cplx) as float64 at the variable t. */
typedef struct LowDftSum {
    int k;                  /* variable of the frequency index */
    int64_t cnt, len;       /* samples summed, transform length */
    int cplx;
    double sign;            /* -1 forward, +1 inverse */
    LoopExpr *(*load)(Low *L, void *ctx, int t, int part);
    void *ctx;
} LowDftSum;
int low_dft_sum(Low *L, LoopStmt *blk, const LowDftSum *s, int *re, int *im);

/* An elementwise operator's scalar function (scalar.c): its operands'
 * buffers and load types, and fn, which computes the value from the
 * operands' variables x[] (one LET each, -1 for an absent one). */
typedef struct LowEw {
    IrOp op;               /* scalar function */
    int flat;              /* one flat loop: operands have the output's shape or one element */
    int n;                 /* operand count */
    int buf[IR_VARIADIC];  /* operand buffers */
    IrDType ty[IR_VARIADIC];   /* type each operand is loaded as */
    IrDType ct;            /* compute type */
    double lo, hi;         /* Clip bounds known at compile time */
    int has_lo, has_hi;
    LoopExpr *(*fn)(Low *L, const struct LowEw *e, const int *x);
} LowEw;
/* e set up for elementwise node L->n (operands, types, fn). */
void low_ew_setup(Low *L, LowEw *e);
/* fn of Identity: x[0]. */
LoopExpr *low_ew_identity(Low *L, const LowEw *e, const int *x);

/* The scalar function of unary operator op at variable x (of compute type
 * ct), with the given alpha / beta; other parameters come from the node's
 * attributes (scalar.c; also used for RNN activations). */
LoopExpr *low_unary_expr(Low *L, IrOp op, IrDType ct, int x, double alpha, double beta);

/* ---- fusion (fused.c, docs/passes.md "Fusion") ---- */

/* The store of a kernel's result: every template writes output out_k of the
 * node it lowers through this function instead of low_store.
 *   idx    the element's multi-index in the output's shape (rank of output
 *          out_k); the expressions are copied, never retained, so the caller
 *          may reuse them;
 *   value  the element's value in the template's compute type (converted to
 *          the destination dtype here).
 * Without fused members (L->fuse_n == 0, or out_k != 0) this is
 * low_store(L, low_out(L, out_k), low_index(...), value).  With members, it
 * returns a block that binds value, applies each member's scalar function in
 * order (their other operands — bias, scale, residual tensor, Clip bounds —
 * loaded at idx with numpy broadcasting) and stores the last member's result
 * into the last member's output buffer (low_out(L, 0) of the head is that
 * buffer already: same shape and dtype).  NULL on out of memory.
 * Every store of output 0 must go through it: lower.c counts the stores
 * into that buffer; when a template made none through it (a template that
 * does not know about fusion) the members run as a second, in-place
 * elementwise kernel, and a mix is an internal error, never a wrong result. */
LoopStmt *low_fused_store(Low *L, int out_k, LoopExpr *const *idx, LoopExpr *value);
/* Same, for a one-loop-over-all-elements kernel: flat is the row-major
 * element index (operands of the members then must have the output's shape
 * or one element: low_fused_flat_ok). */
LoopStmt *low_fused_store_flat(Low *L, LoopExpr *flat, LoopExpr *value);
/* The chain applied early, for a template that applies it to a block in
 * registers (one operation on a vector of a block's columns) and stores the
 * block later by a scatter that the code generator does not vectorize (the
 * GEMM form's transposed block: SiLU's exp per element was libm's expf):
 * low_fused_early_ok says whether it may (members, none reading a tensor, a
 * float32 head and result); low_fused_value returns the chain's value of
 * `value` (LETs to blk); low_fused_store_done(L, flat, v) is the store of
 * such a value into the group's buffer at its flat index (counted as a
 * fused store). */
int low_fused_early_ok(Low *L);
LoopExpr *low_fused_value(Low *L, LoopStmt *blk, LoopExpr *value);
LoopStmt *low_fused_store_done(Low *L, LoopExpr *flat, LoopExpr *value);
/* 1 when every operand of the fused members can be read at a flat index. */
int low_fused_flat_ok(Low *L);
/* 1 when a fused member reads an operand of more than one element (a
 * residual, a per-channel scale); without one, the chain may be stored at
 * any index of the output, a halo'd buffer's own. */
int low_fused_reads_tensor(Low *L);
/* The scalar function of elementwise node L->n (a fused member) applied to
 * its operands: input tensor `chain` is the value of variable chain_var,
 * other operands are loaded at idx (broadcast, output rank `rank`) or, when
 * flat is non-NULL, at flat / 0.  LETs go to blk.  (scalar.c) */
LoopExpr *low_ew_member(Low *L, LoopStmt *blk, int chain, int chain_var, LoopExpr *const *idx, int rank,
                        const LoopExpr *flat);

/* ---- helpers (build.c; low_lowering: lower.c) ---- */

LowFn low_lowering(IrOp op);                         /* the lowering of op, NULL if none */

int low_oom(Low *L);                                 /* "out of memory while lowering" */
/* Buffer of input k (made on first use for compile-time values); -1 when
 * absent.  Operand inputs read only at compile time get no buffer. */
int low_in(Low *L, int k);
int low_has(Low *L, int k);                          /* input k is present */
int low_out(Low *L, int k);                          /* buffer of output k; -1 when absent */
const IrArray *low_known(Low *L, int k);             /* input k's compile-time value, or NULL */
/* Compile-time integer values of input k (at most max); count, or -1 when
 * the input is absent or not known (no diagnostic). */
int low_known_ints(Low *L, int k, int64_t *v, int max);
const LoopBuf *low_buf(Low *L, int b);
/* A copy of buffer b's strides (rank IR_MAX_RANK): for use after calls that
 * may add buffers, which can move the LoopBufs low_buf points into. */
void low_strides(Low *L, int b, int64_t *out);

/* The buffers of the graph's tensors (build.c), for the driver (lower.c)
 * and low_in: position of tensor t among the graph's inputs / outputs (-1:
 * none); a new buffer of storage st for t; the buffer of a tensor a kernel
 * reads (input, constant or already produced; -2 when none of these, -1 out
 * of memory); of a tensor a kernel writes (the graph output it is, else
 * workspace); an alias of buffer src for view output t. */
int low_graph_input(const IrGraph *g, int t);
int low_graph_output(const IrGraph *g, int t);
int low_new_buf(Low *L, int t, LoopStorage st);
int low_use_buf(Low *L, int t);
int low_def_buf(Low *L, int t);
int low_alias_buf(Low *L, int t, int src);

IrDType low_ctype(IrDType t);                        /* compute type: F16/BF16 → F32 */
LoopExpr *low_const(Low *L, IrDType t, double v);    /* constant of type t (any dtype) */
LoopExpr *low_convert(Low *L, LoopExpr *e, IrDType t);   /* numeric conversion; to bool: e != 0 */
LoopExpr *low_v(Low *L, int var);
LoopExpr *low_i(Low *L, int64_t v);
LoopExpr *low_bin(Low *L, LoopBinOp op, LoopExpr *a, LoopExpr *b);
/* Creates n int64 loop variables named hint, hint_1, ... */
int low_vars(Low *L, int n, const char *hint, int *vars);
/* for vars[0] < ext[0] { for vars[1] ... { body } } (serial). */
LoopStmt *low_nest(Low *L, int n, const int *vars, const int64_t *ext, LoopStmt *body);
/* A kernel setting the halo of buffer b (loop_buf_halo) to its fill value. */
int low_halo_fill(Low *L, int b, int producer_cols);
/* The stretches before each channel of the halo'd output (the halo rows
 * and the columns of the row before) and after the last one, taken from
 * the halo kernel low_halo_fill just added (the last kernel; removed when
 * nothing else is left) for the node's own kernel to store with the
 * channels it writes (tile_halo_rows): their length, 0 when not taken. */
int64_t low_halo_take_rows(Low *L);
/* The channel blocks of buffer b, when the last kernel built makes b in
 * blocks (LowBlocks) and b is the node's input 0, read by no other node
 * and not a graph output; else NULL. */
const LowBlocks *low_blocks_of(Low *L, int b);
/* Nest (the node's, built inside the block loop of low_blocks_of, a
 * channel of each block at a time) appended to that loop's body: the
 * node's kernel is the producer's.  0, or -1 out of memory. */
int low_join(Low *L, LoopStmt *nest);
/* Flat index into buffer b of the element at the multi-index vars of a
 * broadcast result of rank out_rank (numpy: b's dims right-aligned, its
 * size-1 dims read index 0). */
LoopExpr *low_bcast(Low *L, int b, const int *vars, int out_rank);
/* Flat index of b at explicit per-dim index expressions (rank of b). */
LoopExpr *low_index(Low *L, int b, LoopExpr *const *idx);
/* Load converted to type t. */
LoopExpr *low_load(Low *L, int b, LoopExpr *index, IrDType t);
/* Store converting v to the buffer's dtype. */
LoopStmt *low_store(Low *L, int b, LoopExpr *index, LoopExpr *v);
/* Appends `let NAME = v` to block and returns the new variable (-1 on OOM). */
int low_let(Low *L, LoopStmt *block, const char *hint, LoopExpr *v, int is_mutable);
/* block += s; -1 on OOM (s NULL counts as OOM). */
int low_add(Low *L, LoopStmt *block, LoopStmt *s);
/* Adds a kernel named `name` of the node (none when L->n is NULL): its
 * cost is flops, or, when negative, the arithmetic of the node and its
 * fused members.  -1 (diagnostic) on OOM. */
int low_kernel_named(Low *L, const char *name, LoopStmt *body, int64_t flops);
/* Adds the node's kernel; -1 (diagnostic) on OOM. */
int low_kernel(Low *L, LoopStmt *body);
/* The same for a kernel of the node that only moves data (a halo fill, a
 * padded copy, a packing): its cost is the elems it stores, not the node's
 * arithmetic, so the schedule does not hand it to the thread pool when it
 * is smaller than a pool wake-up. */
int low_kernel_moves(Low *L, LoopStmt *body, int64_t elems);
/* low_kernel_moves for a kernel preparing the input of a later kernel of
 * the node (a halo fill, a gathered or packed copy): LoopKernel.prepares,
 * split between the threads whenever that one is (targets/cpu/schedule.c). */
int low_kernel_prepares(Low *L, LoopStmt *body, int64_t elems);
/* `lo <= e < hi` as a bool expression (e copied as needed). */
LoopExpr *low_in_range(Low *L, LoopExpr *e, int64_t lo, int64_t hi);
/* a && b where either may be NULL (= true). */
LoopExpr *low_and(Low *L, LoopExpr *a, LoopExpr *b);
/* Loops over out's shape, storing f(ctx, vars) at each element: the shared
 * "output-driven" template of elementwise and data-movement kernels.  f
 * appends LETs to `body` as it likes and returns the value to store. */
typedef LoopExpr *(*LowElemFn)(Low *L, void *ctx, const int *vars, LoopStmt *body);
int low_map(Low *L, int out, LowElemFn f, void *ctx);
/* One loop over the output's elements in row-major order (vars[0] is the
 * flat index): for elementwise kernels whose operands all have the
 * output's shape or one element. */
int low_map_flat(Low *L, int out, LowElemFn f, void *ctx);
/* Same as low_map, into an existing kernel block instead of a new kernel. */
int low_map_into(Low *L, LoopStmt *kblock, int out, LowElemFn f, void *ctx);

/* A float32 constant buffer of n elements for the caller to fill (*data):
 * weights packed at compile time, tables, masks.  -1 out of memory. */
int low_const_table(Low *L, const char *name, int64_t n, float **data);

/* Appends the flat copy dst[i] = src[i] (same element count) to kblock. */
int low_copy_into(Low *L, LoopStmt *kblock, int dst, int src);
/* The copy kernel out[i] = in[i] (same element count and dtype). */
int low_copy_bufs(Low *L, int dst, int src, const char *name);

#endif
