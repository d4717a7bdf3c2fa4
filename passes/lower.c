/* passes/lower.c — graph IR → loop IR: buffers, views, copy kernels, the
 * per-operator dispatch table and the loop-nest helpers shared by the
 * family templates (lower_elementwise.c, lower_reduce.c, lower_window.c,
 * lower_matmul.c, lower_data.c). */
#include "passes/lower_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Lowering of each operator; NULL = not supported on the CPU target yet
 * (operators added to ir/ops.def later land here automatically). */
static const LowFn low_table[IR_OP_COUNT] = {
#define UN(op) [IR_OP_##op] = low_unary,
    UN(Abs) UN(Neg) UN(Reciprocal) UN(Sqrt) UN(Exp) UN(Log) UN(Erf) UN(Tanh) UN(Sigmoid) UN(Relu)
    UN(LeakyRelu) UN(Elu) UN(Selu) UN(Celu) UN(ThresholdedRelu) UN(HardSigmoid) UN(HardSwish) UN(Softplus)
    UN(Softsign) UN(Gelu) UN(Mish) UN(Shrink) UN(Floor) UN(Ceil) UN(Round) UN(Sign) UN(Sin) UN(Cos) UN(Tan)
    UN(Asin) UN(Acos) UN(Atan) UN(Sinh) UN(Cosh) UN(Asinh) UN(Acosh) UN(Atanh) UN(Not) UN(IsNaN) UN(IsInf)
    UN(BitwiseNot) UN(Swish)
#undef UN
#define BIN(op) [IR_OP_##op] = low_binary,
    BIN(Add) BIN(Sub) BIN(Mul) BIN(Div) BIN(Pow) BIN(Mod) BIN(PRelu) BIN(BitShift) BIN(Equal) BIN(Less)
    BIN(LessOrEqual) BIN(Greater) BIN(GreaterOrEqual) BIN(And) BIN(Or) BIN(Xor) BIN(BitwiseAnd) BIN(BitwiseOr)
    BIN(BitwiseXor)
#undef BIN
    [IR_OP_Min] = low_variadic, [IR_OP_Max] = low_variadic, [IR_OP_Sum] = low_variadic,
    [IR_OP_Mean] = low_variadic, [IR_OP_Where] = low_where, [IR_OP_Clip] = low_clip,
    [IR_OP_Cast] = low_cast, [IR_OP_CastLike] = low_cast, [IR_OP_Dropout] = low_dropout,
    [IR_OP_Identity] = low_copy, [IR_OP_Reshape] = low_copy, [IR_OP_Flatten] = low_copy,
    [IR_OP_Squeeze] = low_copy, [IR_OP_Unsqueeze] = low_copy,
#define RED(op) [IR_OP_##op] = low_reduce,
    RED(ReduceSum) RED(ReduceMean) RED(ReduceMax) RED(ReduceMin) RED(ReduceProd) RED(ReduceL1) RED(ReduceL2)
    RED(ReduceSumSquare) RED(ReduceLogSum) RED(ReduceLogSumExp)
#undef RED
    [IR_OP_ArgMax] = low_argreduce, [IR_OP_ArgMin] = low_argreduce,
    [IR_OP_Softmax] = low_softmax, [IR_OP_LogSoftmax] = low_softmax, [IR_OP_Hardmax] = low_softmax,
    [IR_OP_BatchNormalization] = low_channelnorm, [IR_OP_InstanceNormalization] = low_channelnorm,
    [IR_OP_LayerNormalization] = low_layernorm, [IR_OP_LpNormalization] = low_lpnorm,
    [IR_OP_Conv] = low_conv, [IR_OP_ConvTranspose] = low_convtranspose,
    [IR_OP_MaxPool] = low_pool, [IR_OP_AveragePool] = low_pool, [IR_OP_LpPool] = low_pool,
    [IR_OP_GlobalAveragePool] = low_globalpool, [IR_OP_GlobalMaxPool] = low_globalpool,
    [IR_OP_GlobalLpPool] = low_globalpool,
    [IR_OP_MatMul] = low_matmul, [IR_OP_Gemm] = low_gemm, [IR_OP_Einsum] = low_einsum,
    [IR_OP_DFT] = low_dft, [IR_OP_STFT] = low_stft, [IR_OP_MelWeightMatrix] = low_melweightmatrix,
    [IR_OP_Det] = low_det,
    [IR_OP_Transpose] = low_transpose, [IR_OP_Concat] = low_concat, [IR_OP_Split] = low_split,
    [IR_OP_Slice] = low_slice, [IR_OP_Gather] = low_gather, [IR_OP_GatherElements] = low_gatherelements,
    [IR_OP_GatherND] = low_gathernd, [IR_OP_Pad] = low_pad, [IR_OP_Expand] = low_expand,
    [IR_OP_Tile] = low_tile, [IR_OP_DepthToSpace] = low_depthtospace, [IR_OP_SpaceToDepth] = low_depthtospace,
    [IR_OP_ConstantOfShape] = low_constantofshape, [IR_OP_Range] = low_range, [IR_OP_Resize] = low_resize,
    [IR_OP_ReverseSequence] = low_reversesequence, [IR_OP_CenterCropPad] = low_centercroppad,
    [IR_OP_ScatterElements] = low_scatterelements, [IR_OP_Scatter] = low_scatterelements,
    [IR_OP_ScatterND] = low_scatternd,
    [IR_OP_HannWindow] = low_window_fn, [IR_OP_HammingWindow] = low_window_fn,
    [IR_OP_BlackmanWindow] = low_window_fn, [IR_OP_MaxUnpool] = low_maxunpool,
    [IR_OP_NegativeLogLikelihoodLoss] = low_loss, [IR_OP_SoftmaxCrossEntropyLoss] = low_loss,
    [IR_OP_Col2Im] = low_col2im, [IR_OP_GridSample] = low_gridsample, [IR_OP_TensorScatter] = low_tensorscatter, [IR_OP_AffineGrid] = low_affinegrid,
    [IR_OP_Attention] = low_attention, [IR_OP_TopK] = low_topk, [IR_OP_RotaryEmbedding] = low_rotary, [IR_OP_Trilu] = low_trilu, [IR_OP_EyeLike] = low_eyelike, [IR_OP_OneHot] = low_onehot,
    [IR_OP_CumSum] = low_cumsum, [IR_OP_RMSNormalization] = low_rmsnorm, [IR_OP_GroupNormalization] = low_groupnorm,
    [IR_OP_LRN] = low_lrn, [IR_OP_MeanVarianceNormalization] = low_mvn,
    [IR_OP_QuantizeLinear] = low_quantize, [IR_OP_DequantizeLinear] = low_dequantize,
    [IR_OP_DynamicQuantizeLinear] = low_dynquantize,
    [IR_OP_RoiAlign] = low_roialign, [IR_OP_DeformConv] = low_deformconv, [IR_OP_RNN] = low_rnn, [IR_OP_GRU] = low_rnn, [IR_OP_LSTM] = low_rnn,
    [IR_OP_ConvInteger] = low_convinteger, [IR_OP_QLinearConv] = low_qlinearconv,
    [IR_OP_MatMulInteger] = low_matmulinteger, [IR_OP_QLinearMatMul] = low_qlinearmatmul,
};

/* ------------------------------------------------------------- helpers */

int low_oom(Low *L)
{
    if (!L->n)
        return util_error(L->d, util_loc_file(L->g->file), "out of memory while lowering");
    return ir_node_error(L->g, L->n, L->d, "out of memory while lowering");
}

/* An empty stand-in for a buffer that could not be made (out of memory):
 * lowerings carry on harmlessly and lower_node reports the failure. */
static const LoopBuf no_buf = { .name = "none", .dtype = IR_DT_F32, .alias_of = -1, .index = -1, .tensor = -1 };

void low_strides(Low *L, int b, int64_t *out)
{
    memcpy(out, low_buf(L, b)->strides, sizeof low_buf(L, b)->strides);
}

const LoopBuf *low_buf(Low *L, int b)
{
    if (b < 0 || b >= L->p->n_bufs) {
        L->oom = 1;
        return &no_buf;
    }
    return &L->p->bufs[b];
}

static int use_buf(Low *L, int t);
static int graph_output_pos(const IrGraph *g, int t);
static int fused_result(const Low *L);
static int check_fused_stores(Low *L, int k0);

int low_has(Low *L, int k) { return k < L->n->n_in && L->n->in[k] >= 0; }

int low_in(Low *L, int k)
{
    if (!low_has(L, k))
        return -1;
    int b = use_buf(L, L->n->in[k]);
    if (b < 0)
        L->oom = 1;          /* reported by lower_node after the lowering returns */
    return b < 0 ? -1 : b;
}

int low_out(Low *L, int k)
{
    return k < L->n->n_out && L->n->out[k] >= 0 ? L->tbuf[L->n->out[k]] : -1;
}

const IrArray *low_known(Low *L, int k)
{
    const IrTensor *t = ir_in(L->g, L->n, k);
    return t && t->v.data ? &t->v : NULL;
}

int low_known_ints(Low *L, int k, int64_t *v, int max)
{
    const IrArray *a = low_known(L, k);
    if (!a)
        return -1;
    int64_t n = ir_array_numel(a);
    if (n > max)
        n = max;
    for (int64_t i = 0; i < n; i++)
        v[i] = ir_load_i64(a->dtype, a->data, i);
    return (int)n;
}

IrDType low_ctype(IrDType t) { return t == IR_DT_F16 || t == IR_DT_BF16 ? IR_DT_F32 : t; }

LoopExpr *low_const(Low *L, IrDType t, double v)
{
    if (ir_dtype_is_float(t))
        return loop_float(L->p, t, v);
    int64_t iv;
    ir_store_f64(IR_DT_I64, &iv, 0, v);     /* saturating: v may lie beyond int64 */
    LoopExpr *e = loop_int(L->p, iv);
    if (e && t == IR_DT_BOOL) {
        e->type = IR_DT_BOOL;
        e->u.i = v != 0;
        return e;
    }
    return t == IR_DT_I64 ? e : loop_cast(L->p, t, e);
}

LoopExpr *low_convert(Low *L, LoopExpr *e, IrDType t)
{
    if (!e || e->type == t)
        return e;
    if (t == IR_DT_BOOL)
        return loop_bin(L->p, LOOP_NE, e, low_const(L, e->type, 0));
    return loop_cast(L->p, t, e);
}

LoopExpr *low_v(Low *L, int var) { return loop_var(L->p, var); }
LoopExpr *low_i(Low *L, int64_t v) { return loop_int(L->p, v); }
LoopExpr *low_bin(Low *L, LoopBinOp op, LoopExpr *a, LoopExpr *b) { return loop_bin(L->p, op, a, b); }

int low_vars(Low *L, int n, const char *hint, int *vars)
{
    for (int i = 0; i < n; i++)
        if ((vars[i] = loop_add_var(L->p, hint, IR_DT_I64)) < 0)
            return -1;
    return 0;
}

LoopStmt *low_nest(Low *L, int n, const int *vars, const int64_t *ext, LoopStmt *body)
{
    for (int i = n - 1; i >= 0 && body; i--)
        body = loop_for(L->p, vars[i], loop_int(L->p, ext[i]), LOOP_SERIAL, body);
    return body;
}

LoopExpr *low_bcast(Low *L, int b, const int *vars, int out_rank)
{
    const LoopBuf *bf = low_buf(L, b);
    LoopExpr *idx[IR_MAX_RANK];
    int off = out_rank - bf->shape.rank;
    for (int i = 0; i < bf->shape.rank; i++)
        idx[i] = bf->shape.dims[i] == 1 ? loop_int(L->p, 0) : loop_var(L->p, vars[off + i]);
    return loop_index(L->p, b, idx);
}

LoopExpr *low_index(Low *L, int b, LoopExpr *const *idx) { return loop_index(L->p, b, idx); }

LoopExpr *low_load(Low *L, int b, LoopExpr *index, IrDType t)
{
    return low_convert(L, loop_load(L->p, b, index), t);
}

LoopStmt *low_store(Low *L, int b, LoopExpr *index, LoopExpr *v)
{
    return loop_store(L->p, b, index, low_convert(L, v, low_buf(L, b)->dtype));
}

int low_let(Low *L, LoopStmt *block, const char *hint, LoopExpr *v, int is_mutable)
{
    if (!v)
        return -1;
    int var = loop_add_var(L->p, hint, v->type);
    if (var < 0 || low_add(L, block, loop_let(L->p, var, v, is_mutable)) != 0)
        return -1;
    return var;
}

int low_add(Low *L, LoopStmt *block, LoopStmt *s)
{
    if (!block || !s)
        return -1;
    return loop_block_add(L->p, block, s);
}

/* flops < 0: the arithmetic of the node and its fused members */
static int add_kernel(Low *L, const char *name, LoopStmt *body, int64_t flops)
{
    if (!body)
        return low_oom(L);
    int k = loop_add_kernel(L->p, name, body);
    if (k < 0)
        return low_oom(L);
    L->p->kernels[k].first_node = L->n ? L->node : -1;
    L->p->kernels[k].n_nodes = L->n ? 1 + L->fuse_n : 0;
    L->p->kernels[k].moves = flops >= 0;
    if (flops < 0) {
        flops = 0;
        for (int m = 0; L->n && m <= L->fuse_n; m++)
            flops += ir_node_flops(L->g, &L->g->nodes[L->node + m]);
    }
    L->p->kernels[k].flops = flops;
    return 0;
}

static const char *node_kernel_name(const Low *L)
{
    return L->n->name && *L->n->name ? L->n->name : ir_op_name(L->n->op);
}

int low_kernel(Low *L, LoopStmt *body)
{
    return add_kernel(L, node_kernel_name(L), body, -1);
}

int low_kernel_moves(Low *L, LoopStmt *body, int64_t elems)
{
    return add_kernel(L, node_kernel_name(L), body, elems);
}

int low_kernel_prepares(Low *L, LoopStmt *body, int64_t elems)
{
    if (low_kernel_moves(L, body, elems))
        return -1;
    L->p->kernels[L->p->n_kernels - 1].prepares = 1;
    return 0;
}

LoopExpr *low_in_range(Low *L, LoopExpr *e, int64_t lo, int64_t hi)
{
    return loop_bin(L->p, LOOP_AND, loop_bin(L->p, LOOP_LE, loop_int(L->p, lo), e),
                    loop_bin(L->p, LOOP_LT, loop_expr_copy(L->p, e), loop_int(L->p, hi)));
}

LoopExpr *low_and(Low *L, LoopExpr *a, LoopExpr *b)
{
    return !a ? b : !b ? a : loop_bin(L->p, LOOP_AND, a, b);
}

static int map_impl(Low *L, LoopStmt *kblock, int out, int flat, LowElemFn f, void *ctx)
{
    const IrShape osh = low_buf(L, out)->shape;   /* a copy: f and the fused store may add buffers */
    int64_t numel = ir_shape_numel(&osh);
    int r = flat ? 1 : osh.rank, vars[IR_MAX_RANK];
    LoopStmt *body = loop_block(L->p);
    if (low_vars(L, r, "i", vars) != 0 || !body)
        return low_oom(L);
    LoopExpr *v = f(L, ctx, vars, body);
    if (!v)
        return low_oom(L);
    LoopExpr *idx[IR_MAX_RANK];
    for (int i = 0; i < r; i++)
        idx[i] = low_v(L, vars[i]);
    LoopStmt *st;
    if (L->n && L->fuse_n && out == low_out(L, 0))      /* a fused group's head: its epilogue */
        st = flat ? low_fused_store_flat(L, low_v(L, vars[0]), v) : low_fused_store(L, 0, idx, v);
    else
        st = low_store(L, out, flat ? low_v(L, vars[0]) : low_index(L, out, idx), v);
    if (low_add(L, body, st) != 0 ||
        low_add(L, kblock, low_nest(L, r, vars, flat ? &numel : osh.dims, body)) != 0)
        return low_oom(L);
    return 0;
}

int low_map_into(Low *L, LoopStmt *kblock, int out, LowElemFn f, void *ctx)
{
    return map_impl(L, kblock, out, 0, f, ctx);
}

int low_map_flat(Low *L, int out, LowElemFn f, void *ctx)
{
    LoopStmt *k = loop_block(L->p);
    if (!k)
        return low_oom(L);
    if (map_impl(L, k, out, 1, f, ctx) != 0)
        return -1;
    return low_kernel(L, k);
}

int low_map(Low *L, int out, LowElemFn f, void *ctx)
{
    LoopStmt *k = loop_block(L->p);
    if (!k)
        return low_oom(L);
    if (low_map_into(L, k, out, f, ctx) != 0)
        return -1;
    return low_kernel(L, k);
}

/* ---------------------------------------------------------- fusion */

/* The group's chain: value, then each member's scalar function, stored
 * into the last member's buffer at idx (or flat). */
static LoopStmt *fused_chain(Low *L, LoopExpr *const *idx, const LoopExpr *flat, LoopExpr *value)
{
    const IrNode *head = L->n;
    int node = L->node, y = low_out(L, 0), rank = low_buf(L, y)->shape.rank, chain = head->out[0];
    LoopStmt *blk = loop_block(L->p);
    int var = low_let(L, blk, "f", value, 0);
    for (int m = 1; var >= 0 && m <= L->fuse_n; m++) {
        L->node = node + m;                      /* the member's operands and attributes */
        L->n = &L->g->nodes[node + m];
        var = low_let(L, blk, "f", low_ew_member(L, blk, chain, var, idx, rank, flat), 0);
        chain = L->n->out[0];
    }
    L->n = head;
    L->node = node;
    if (var < 0)
        return NULL;
    LoopExpr *at;
    if (flat) {
        at = loop_expr_copy(L->p, flat);
    } else {
        LoopExpr *cp[IR_MAX_RANK];
        for (int i = 0; i < rank; i++)
            cp[i] = loop_expr_copy(L->p, idx[i]);
        at = low_index(L, y, cp);
    }
    L->fused_stores++;
    return low_add(L, blk, low_store(L, y, at, low_v(L, var))) ? NULL : blk;
}

LoopStmt *low_fused_store(Low *L, int out_k, LoopExpr *const *idx, LoopExpr *value)
{
    int y = low_out(L, out_k);
    if (out_k != 0 || !L->fuse_n) {
        const LoopBuf *yb = low_buf(L, y);
        LoopExpr *cp[IR_MAX_RANK];
        for (int i = 0; i < yb->shape.rank; i++)
            cp[i] = loop_expr_copy(L->p, idx[i]);
        return low_store(L, y, low_index(L, y, cp), value);
    }
    return fused_chain(L, idx, NULL, value);
}

LoopStmt *low_fused_store_flat(Low *L, LoopExpr *flat, LoopExpr *value)
{
    if (!L->fuse_n)
        return low_store(L, low_out(L, 0), flat, value);
    return fused_chain(L, NULL, flat, value);
}

int low_fused_flat_ok(Low *L)
{
    const IrShape *ys = &low_buf(L, low_out(L, 0))->shape;
    int chain = L->n->out[0];
    for (int m = 1; m <= L->fuse_n; m++) {
        const IrNode *mn = &L->g->nodes[L->node + m];
        for (int k = 0; k < mn->n_in; k++) {
            const IrTensor *t = mn->in[k] >= 0 && mn->in[k] != chain ? &L->g->tensors[mn->in[k]] : NULL;
            if (t && !ir_shape_equal(&t->v.shape, ys) && ir_shape_numel(&t->v.shape) != 1)
                return 0;
            int b = t ? L->tbuf[mn->in[k]] : -1;          /* a halo'd operand: rows apart by more */
            if (b >= 0 && loop_buf_has_halo(&L->p->bufs[b]))
                return 0;
        }
        chain = mn->out[0];
    }
    return 1;
}

int low_fused_reads_tensor(Low *L)
{
    int chain = L->n->out[0];
    for (int m = 1; m <= L->fuse_n; m++) {
        const IrNode *mn = &L->g->nodes[L->node + m];
        for (int k = 0; k < mn->n_in; k++)
            if (mn->in[k] >= 0 && mn->in[k] != chain && ir_shape_numel(&L->g->tensors[mn->in[k]].v.shape) != 1)
                return 1;
        chain = mn->out[0];
    }
    return 0;
}

/* Flat copy: element i of dst (row-major) = element i of src. */
typedef struct CopyCtx { int src, dst; } CopyCtx;

static LoopExpr *copy_elem(Low *L, void *ctx, const int *vars, LoopStmt *body)
{
    (void)body;
    const CopyCtx *c = ctx;
    /* one flat loop; same element count, both row-major: the index carries over */
    return low_load(L, c->src, low_v(L, vars[0]), low_buf(L, c->src)->dtype);
}

int64_t low_halo_take_rows(Low *L)
{
    int k = L->halo_kernel;
    if (k < 0 || k != L->p->n_kernels - 1 || !L->halo_lead)
        return 0;
    LoopStmt *b = L->p->kernels[k].body;          /* [the stretches before each channel, the columns] */
    memmove(b->u.block.items, b->u.block.items + 1, (size_t)(b->u.block.n - 1) * sizeof *b->u.block.items);
    if (--b->u.block.n == 0) {                     /* nothing left: no kernel (the last one added) */
        L->p->n_kernels--;
        L->halo_kernel = -1;
    }
    int64_t lead = L->halo_lead;
    L->halo_lead = 0;
    return lead;
}

const LowBlocks *low_blocks_of(Low *L, int b)
{
    const LowBlocks *k = &L->blocks;
    int t = L->n->n_in > 0 ? L->n->in[0] : -1;
    if (k->kernel < 0 || k->kernel != L->p->n_kernels - 1 || L->p->kernels[k->kernel].body != k->body ||
        k->buf != b || t < 0 || L->tbuf[t] != b || !L->uses || L->uses[t] != 1 ||  /* read by this node only */
        graph_output_pos(L->g, t) >= 0)
        return NULL;
    return k;
}

/* The stretch of halo before each channel of halo'd buffer B (and after
 * the last): the halo rows and the columns of the row before. */
static int64_t halo_stretch(const LoopBuf *B)
{
    return B->halo_cols + (int64_t)B->halo_rows * B->strides[2];
}

static void count_refs(void *ctx, int buf, int store)
{
    (void)store;
    int *r = ctx;
    r[1] += buf == r[0];
}

/* A joined kernel's block buffer (read and written by this kernel only,
 * halo'd or row-major) cut down to a slot of mr + 1 channels per task: block mt's channel
 * mt*mr + c at channel c of its task's slot, so each block is made and read
 * in the same lines of the core's cache, which are never written back,
 * instead of a whole tensor passing through (MobileNetV2's 112x112
 * expansion: 4.8 MB).  With S tasks the block loop becomes parts (task t
 * takes part t, codegen/parallel.c):
 *   for mt < E { b }  =  for part < S { for q < ceil(E/S) { mt = part*Q + q; if mt < E { b } } }
 * and b's accesses move by (part*(mr+1) - mt*mr) channels.  The slot's
 * last channel is a spacer: the halo stretch before it, after the block's
 * last channel, is stored with each block (the producer stores it only
 * after the tensor's last channel).  0, or -1 out of memory. */
static int join_slots(Low *L, LowBlocks *k, LoopStmt *b)
{
    LoopProgram *p = L->p;
    int r[2] = { k->buf, 0 };
    for (int i = 0; i < p->n_kernels; i++)
        if (i != k->kernel)
            loop_stmt_buffers(p->kernels[i].body, count_refs, r);
    for (int i = 0; i < p->n_bufs; i++)
        r[1] += p->bufs[i].alias_of == k->buf;
    const LoopBuf *B = &p->bufs[k->buf];
    const LoopExpr *ext = k->loop->u.loop.extent;
    int halo = loop_buf_has_halo(B);
    const int64_t *d = B->shape.dims;
    if (r[1] || B->storage != LOOP_ST_WORKSPACE || B->shape.rank != 4 || d[0] != 1 || ext->kind != LOOP_E_INT ||
        ext->u.i < 1 || (!halo && (B->base || B->strides[1] != d[2] * d[3] || B->strides[2] != d[3])))
        return 0;
    int64_t E = ext->u.i, T = L->s->threads > 1 ? L->s->threads : 1, S = T < E ? T : E;
    int64_t Q = (E + S - 1) / S, mr = k->mr;
    int64_t rs = B->strides[2], cs = B->strides[1], front = B->base - (int64_t)B->halo_rows * rs;
    int64_t lead = halo_stretch(B);
    LoopBuf *nb = &p->bufs[k->buf];               /* the same layout over fewer channels */
    nb->shape.dims[1] = S * (mr + 1);
    nb->strides[0] = nb->shape.dims[1] * cs;
    nb->bytes = (nb->strides[0] + nb->slack) * (int64_t)ir_dtype_size(nb->dtype);
    if (halo && loop_buf_halo(p, k->buf, nb->halo_rows, nb->halo_cols, (int)front, nb->halo_fill, nb->slack))
        return low_oom(L);
    int mt = k->mt, slot = -1, q, j;
    if (S > 1) {
        if (low_vars(L, 1, "part", &slot) || low_vars(L, 1, "q", &q))
            return low_oom(L);
        LoopStmt *in = loop_block(p);
        LoopExpr *mv = low_bin(L, LOOP_ADD, low_bin(L, LOOP_MUL, low_v(L, slot), low_i(L, Q)), low_v(L, q));
        LoopStmt *body = S * Q == E ? b : loop_if(p, low_bin(L, LOOP_LT, low_v(L, mt), low_i(L, E)), b, NULL);
        if (!in || low_add(L, in, loop_let(p, mt, mv, 0)) || low_add(L, in, body))
            return low_oom(L);
        k->loop->u.loop.var = slot;
        k->loop->u.loop.extent = low_i(L, S);
        if (!(k->loop->u.loop.body = loop_for(p, q, low_i(L, Q), LOOP_SERIAL, in)))
            return low_oom(L);
    }
    LoopExpr *at = slot >= 0 ? low_bin(L, LOOP_MUL, low_v(L, slot), low_i(L, (mr + 1) * cs)) : low_i(L, 0);
    LoopExpr *shift = low_bin(L, LOOP_SUB, at, low_bin(L, LOOP_MUL, low_v(L, mt), low_i(L, mr * cs)));
    if (!shift || loop_stmt_rebase(p, b, k->buf, k->buf, shift))
        return low_oom(L);
    if (!lead)
        return 0;                                  /* no halo: nothing between the channels */
    if (low_vars(L, 1, "hr", &j))
        return low_oom(L);
    LoopExpr *si = low_bin(L, LOOP_ADD, loop_expr_copy(p, at),
                           low_bin(L, LOOP_ADD, low_i(L, mr * cs - lead), low_v(L, j)));
    LoopStmt *st = low_store(L, k->buf, si, low_const(L, nb->dtype, nb->halo_fill));
    LoopStmt *stretch = st ? low_nest(L, 1, &j, &lead, st) : NULL;
    if (!stretch || low_add(L, b, stretch))        /* [the producer's, the consumer's, the stretch] */
        return low_oom(L);
    b->u.block.items[2] = b->u.block.items[1];     /* the stretch before the consumer's */
    b->u.block.items[1] = stretch;
    return 0;
}

int low_join(Low *L, LoopStmt *nest)
{
    LowBlocks *k = &L->blocks;
    LoopStmt *b = loop_block(L->p);
    if (!nest || !b || low_add(L, b, k->loop->u.loop.body) || low_add(L, b, nest))
        return low_oom(L);
    k->loop->u.loop.body = b;
    if (join_slots(L, k, b))
        return -1;
    LoopKernel *kn = &L->p->kernels[k->kernel];
    kn->n_nodes = L->node + L->fuse_n + 1 - kn->first_node;
    for (int m = 0; m <= L->fuse_n; m++)
        kn->flops += ir_node_flops(L->g, &L->g->nodes[L->node + m]);
    L->joined = k->kernel;
    k->kernel = -1;                                /* one consumer */
    return 0;
}

int low_copy_bufs(Low *L, int dst, int src, const char *name)
{
    CopyCtx c = { src, dst };
    LoopStmt *k = loop_block(L->p);
    if (!k)
        return low_oom(L);
    if (map_impl(L, k, dst, 1, copy_elem, &c) != 0)
        return -1;
    return add_kernel(L, name, k, -1);
}

int low_copy_into(Low *L, LoopStmt *kblock, int dst, int src)
{
    CopyCtx c = { src, dst };
    return map_impl(L, kblock, dst, 1, copy_elem, &c);
}

int low_copy(Low *L)
{
    return low_copy_bufs(L, low_out(L, 0), low_in(L, 0),
                         L->n->name && *L->n->name ? L->n->name : ir_op_name(L->n->op));
}

/* The halo of buffer b (loop_buf_halo) set to its fill value, one kernel:
 * before each channel's first row (and once more after the last channel) the
 * halo columns of the row before and the halo rows, then the halo columns
 * after each row but a channel's last — unless producer_cols: then the
 * kernel writing b stores those with its rows (tile_halo_cols), into cache
 * lines it writes anyway, where this kernel would touch a line per row.
 * Indices are relative to element 0, so the first stretch starts at -base. */
int low_halo_fill(Low *L, int b, int producer_cols)
{
    const LoopBuf *B = low_buf(L, b);
    int64_t nc = B->shape.dims[0] * B->shape.dims[1], H = B->shape.dims[2], W = B->shape.dims[3];
    int64_t rs = B->strides[2], cs = B->strides[1], hc = B->halo_cols, lead = halo_stretch(B);
    /* (elements before the first halo row beyond hc, LoopBuf.base, are only
     * ever read by lanes whose values are discarded: not filled) */
    int v[2], u[3];
    LoopStmt *k = loop_block(L->p);
    if (!k || low_vars(L, 2, "i", v) || low_vars(L, 3, "i", u))
        return low_oom(L);
    LoopExpr *fill = low_const(L, B->dtype, B->halo_fill);
    LoopExpr *at = low_bin(L, LOOP_SUB, low_bin(L, LOOP_ADD, low_bin(L, LOOP_MUL, low_v(L, v[0]), low_i(L, cs)),
                                                 low_v(L, v[1])), low_i(L, lead));
    int64_t ext0[2] = { nc + 1, lead };
    if (lead && low_add(L, k, low_nest(L, 2, v, ext0, low_store(L, b, at, fill))))
        return low_oom(L);
    L->halo_lead = lead;
    L->halo_cols_store = producer_cols && hc;
    if (hc && H > 1 && !L->halo_cols_store) {
        LoopExpr *at1 = low_bin(L, LOOP_ADD,
                                low_bin(L, LOOP_ADD, low_bin(L, LOOP_MUL, low_v(L, u[0]), low_i(L, cs)),
                                        low_bin(L, LOOP_MUL, low_v(L, u[1]), low_i(L, rs))),
                                low_bin(L, LOOP_ADD, low_v(L, u[2]), low_i(L, W)));
        int64_t ext1[3] = { nc, H - 1, hc };
        if (low_add(L, k, low_nest(L, 3, u, ext1, low_store(L, b, at1, low_const(L, B->dtype, B->halo_fill)))))
            return low_oom(L);
    }
    L->halo_kernel = L->p->n_kernels;
    return low_kernel_prepares(L, k, (nc + 1) * lead + (H > 1 && !L->halo_cols_store ? nc * (H - 1) * hc : 0));
}

/* -------------------------------------------------------------- driver */

static int graph_input_pos(const IrGraph *g, int t)
{
    for (int i = 0; i < g->n_inputs; i++)
        if (g->inputs[i] == t)
            return i;
    return -1;
}

static int graph_output_pos(const IrGraph *g, int t)
{
    for (int i = 0; i < g->n_outputs; i++)
        if (g->outputs[i] == t)
            return i;
    return -1;
}

/* The root buffer of a chain of aliases. */
static int root_of(const LoopProgram *p, int b)
{
    while (p->bufs[b].alias_of >= 0)
        b = p->bufs[b].alias_of;
    return b;
}

static int new_buf(Low *L, int t, LoopStorage st)
{
    const IrTensor *tt = &L->g->tensors[t];
    int b = loop_add_buf(L->p, tt->name, tt->v.dtype, &tt->v.shape, st);
    if (b < 0)
        return -1;
    L->p->bufs[b].tensor = t;
    return b;
}

/* Buffer of a tensor read by a kernel: input, constant, or already produced. */
static int use_buf(Low *L, int t)
{
    if (L->tbuf[t] >= 0)
        return L->tbuf[t];
    const IrTensor *tt = &L->g->tensors[t];
    int pos = graph_input_pos(L->g, t), b;
    if (pos >= 0) {
        b = new_buf(L, t, LOOP_ST_INPUT);
        if (b >= 0)
            L->p->bufs[b].index = pos;
    } else if (tt->v.data) {
        b = new_buf(L, t, LOOP_ST_CONST);
        if (b >= 0)
            L->p->bufs[b].data = tt->v.data;
    } else {
        return -2;
    }
    if (b < 0)
        return -1;
    return L->tbuf[t] = b;
}

/* Buffer for a tensor a kernel writes: the graph output it is (first
 * position), else workspace; the one made already for a Concat in place. */
static int def_buf(Low *L, int t)
{
    if (L->tbuf[t] >= 0)
        return L->tbuf[t];
    int pos = graph_output_pos(L->g, t);
    int b = new_buf(L, t, pos >= 0 ? LOOP_ST_OUTPUT : LOOP_ST_WORKSPACE);
    if (b < 0)
        return -1;
    L->p->bufs[b].index = pos;
    return L->tbuf[t] = b;
}

/* Output tensor t of a view node as an alias of buffer src. */
static int alias_buf(Low *L, int t, int src)
{
    const IrTensor *tt = &L->g->tensors[t];
    int root = root_of(L->p, src);
    int b = loop_add_buf(L->p, tt->name, tt->v.dtype, &tt->v.shape, L->p->bufs[root].storage);
    if (b < 0)
        return -1;
    LoopBuf *nb = &L->p->bufs[b], *rb = &L->p->bufs[root];
    nb->tensor = t;
    nb->alias_of = root;
    nb->data = rb->data;
    nb->index = rb->index;
    nb->offset = rb->offset;
    nb->bytes = rb->bytes;
    return L->tbuf[t] = b;
}

/* ------------------------------------------------------ Concat in place */

static int concat_axis(const IrGraph *g, const IrNode *c)
{
    int r = g->tensors[c->out[0]].v.shape.rank;
    int64_t ax = ir_attr_int(c, IR_A_axis);
    return (int)(ax < 0 ? ax + r : ax);
}

/* Node writing tensor t (a kernel of its own, not a view or a Concat), or -1. */
static int plain_producer(const IrGraph *g, int t)
{
    for (int i = 0; i < g->n_nodes; i++) {
        const IrNode *n = &g->nodes[i];
        for (int k = 0; !n->dead && k < n->n_out; k++)
            if (n->out[k] == t)
                return (ir_op_info(n->op)->flags & IR_OPF_VIEW) || n->op == IR_OP_Concat ? -1 : i;
    }
    return -1;
}

/* Live Concat nodes reading tensor t. */
static int concat_readers(const IrGraph *g, int t, int *which)
{
    int n = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        const IrNode *c = &g->nodes[i];
        for (int k = 0; !c->dead && c->op == IR_OP_Concat && k < c->n_in; k++)
            if (c->in[k] == t) {
                *which = i;
                n++;
            }
    }
    return n;
}

/* Concat in place (CPU): a Concat whose axis has only unit dims before it
 * and whose every input is a workspace tensor written by a kernel of its own
 * and read by this Concat alone among Concats, once: each input is a
 * contiguous slice of the output, so its buffer is made a view of the
 * output's at the slice's offset (LoopBuf.base), its producer writes there,
 * and the Concat is no kernel at all. */
static int concat_in_place(const Low *L, const IrNode *c)
{
    const IrGraph *g = L->g;
    if (c->dead || c->op != IR_OP_Concat || c->n_out < 1 || c->out[0] < 0 || !L->s || !L->s->target ||
        strcmp(L->s->target, "cpu") || graph_output_pos(g, c->out[0]) >= 0 || g->tensors[c->out[0]].v.data)
        return 0;
    const IrArray *y = &g->tensors[c->out[0]].v;
    int axis = concat_axis(g, c);
    if (axis < 0 || axis >= y->shape.rank)
        return 0;
    for (int i = 0; i < axis; i++)
        if (y->shape.dims[i] != 1)
            return 0;
    for (int k = 0; k < c->n_in; k++) {
        int t = c->in[k], which = -1;
        if (t < 0 || g->tensors[t].v.data || g->tensors[t].v.dtype != y->dtype || graph_input_pos(g, t) >= 0 ||
            graph_output_pos(g, t) >= 0 || concat_readers(g, t, &which) != 1 || plain_producer(g, t) < 0)
            return 0;
    }
    return 1;
}

/* If tensor t is an input of a Concat in place: its buffer, a view of the
 * Concat's output (made first if need be).  0: not one; -1: out of memory. */
static int concat_slice(Low *L, int t)
{
    const IrGraph *g = L->g;
    int ci = -1;
    if (concat_readers(g, t, &ci) != 1 || !concat_in_place(L, &g->nodes[ci]))
        return 0;
    const IrNode *c = &g->nodes[ci];
    int axis = concat_axis(g, c), y = def_buf(L, c->out[0]);
    if (y < 0)
        return -1;
    int64_t off = 0;
    for (int k = 0; k < c->n_in && c->in[k] != t; k++)
        off += g->tensors[c->in[k]].v.shape.dims[axis];
    int b = alias_buf(L, t, y);
    if (b < 0)
        return -1;
    L->p->bufs[b].base = off * L->p->bufs[y].strides[axis];
    return 1;
}

static int all_outputs_known(const IrGraph *g, const IrNode *n)
{
    for (int k = 0; k < n->n_out; k++)
        if (n->out[k] >= 0 && !g->tensors[n->out[k]].v.data)
            return 0;
    return 1;
}

static int lower_node(Low *L, const PassSchedule *s)
{
    const IrGraph *g = L->g;
    const IrNode *n = L->n;
    if (n->dead || all_outputs_known(g, n))
        return 0;
    if (n->op == IR_OP_Constant && n->out[0] >= 0) {
        /* a value too large to be propagated: the attribute is the weight */
        const IrAttr *a = ir_attr(n, IR_A_value);
        const IrTensor *t = &g->tensors[n->out[0]];
        if (a && a->kind == IR_AK_TENSOR && ir_array_bytes(a->v.tensor) == ir_array_bytes(&t->v)) {
            int b = new_buf(L, n->out[0], LOOP_ST_CONST);
            if (b < 0)
                return low_oom(L);
            L->p->bufs[b].data = a->v.tensor->data;
            L->tbuf[n->out[0]] = b;
            return 0;
        }
    }
    LowFn fn = (unsigned)n->op < IR_OP_COUNT ? low_table[n->op] : NULL;
    if (!fn)
        return util_error(L->d, n->loc, "operator %s (node '%s') is not supported on target %s yet",
                          ir_op_name(n->op), n->name ? n->name : "", s && s->target ? s->target : "cpu");
    for (int k = 0; k < n->n_in; k++) {
        const IrTensor *t = n->in[k] >= 0 ? &g->tensors[n->in[k]] : NULL;
        if (t && L->tbuf[n->in[k]] < 0 && !t->v.data && graph_input_pos(g, n->in[k]) < 0)
            return ir_node_error(g, n, L->d, "input '%s' has no producer", t->name);
    }
    if ((ir_op_info(n->op)->flags & IR_OPF_VIEW) && n->n_out == 1 && n->out[0] >= 0 &&
        graph_output_pos(g, n->out[0]) < 0) {
        int src = low_in(L, 0);
        if (src < 0)
            return low_oom(L);
        if (low_buf(L, src)->dtype == g->tensors[n->out[0]].v.dtype)
            return alias_buf(L, n->out[0], src) < 0 ? low_oom(L) : 0;
    }
    for (int k = 0; k < n->n_out; k++) {
        int t = k == 0 ? fused_result(L) : n->out[k];
        if (t >= 0 && (concat_slice(L, t) < 0 || def_buf(L, t) < 0))
            return low_oom(L);
    }
    /* a fused group: the head's output and the inner members' are the last
     * member's buffer while the kernel is built (same shape and dtype) */
    for (int m = 0; m < L->fuse_n; m++)
        L->tbuf[g->nodes[L->node + m].out[0]] = L->tbuf[fused_result(L)];
    /* Lowerings keep LoopBuf pointers (low_buf) while they make buffers for
     * compile-time inputs (low_in) and tables (Resize): reserve room so that
     * the buffer array does not move during one operator's lowering (with
     * the fused members' inputs, which the head's stores read). */
    int want = L->p->n_bufs + LOW_MAX_NEW_BUFS;
    for (int m = 0; m <= L->fuse_n; m++)
        want += g->nodes[L->node + m].n_in;
    if (want > L->p->cap_bufs) {
        LoopBuf *nb = realloc(L->p->bufs, (size_t)want * sizeof *nb);
        if (!nb)
            return low_oom(L);
        L->p->bufs = nb;
        L->p->cap_bufs = want;
    }
    L->oom = 0;
    L->fused_stores = 0;
    L->halo_kernel = -1;
    L->halo_lead = 0;
    L->halo_cols_store = 0;
    L->halo_stores = 0;
    L->joined = -1;
    int k0 = L->p->n_kernels;
    int r = fn(L);
    if (r == 0 && L->fuse_n)
        r = check_fused_stores(L, L->joined >= 0 ? L->joined : k0);
    for (int m = 0; m < L->fuse_n; m++)                 /* fused away: no buffer */
        L->tbuf[g->nodes[L->node + m].out[0]] = -1;
    return r == 0 && L->oom ? low_oom(L) : r;
}

/* Stores into buffer buf in s. */
static int count_stores(const LoopStmt *s, int buf)
{
    if (!s)
        return 0;
    switch (s->kind) {
    case LOOP_S_FOR: return count_stores(s->u.loop.body, buf);
    case LOOP_S_STORE: return s->u.store.buf == buf;
    case LOOP_S_IF: return count_stores(s->u.cond.then_, buf) + count_stores(s->u.cond.else_, buf);
    case LOOP_S_BLOCK: {
        int n = 0;
        for (int i = 0; i < s->u.block.n; i++)
            n += count_stores(s->u.block.items[i], buf);
        return n;
    }
    default: return 0;
    }
}

/* The head's value at element vars of the group's buffer, as stored. */
static LoopExpr *stored_elem(Low *L, void *ctx, const int *vars, LoopStmt *body)
{
    (void)body;
    int y = low_out(L, 0), flat = *(const int *)ctx;
    const LoopBuf *yb = low_buf(L, y);
    return low_load(L, y, flat ? low_v(L, vars[0]) : low_bcast(L, y, vars, yb->shape.rank), yb->dtype);
}

/* After the head's template built kernels k0.. of a fused group: every
 * store into the group's buffer must have applied the members.  A template
 * that stored the head's value without low_fused_store gets the members as
 * a second kernel, in place on that buffer (element i read, then written). */
static int check_fused_stores(Low *L, int k0)
{
    int y = low_out(L, 0), direct = 0;
    for (int k = k0; k < L->p->n_kernels; k++)
        if (k != L->halo_kernel)
            direct += count_stores(L->p->kernels[k].body, y);
    direct -= L->fused_stores + L->halo_stores;
    if (direct == 0)
        return 0;
    if (L->fused_stores)
        return ir_node_error(L->g, L->n, L->d, "internal error: the %s template stores its result both with and "
                             "without low_fused_store", ir_op_name(L->n->op));
    int nk = L->p->n_kernels, flat = low_fused_flat_ok(L);
    LoopStmt *blk = loop_block(L->p);
    if (!blk || map_impl(L, blk, y, flat, stored_elem, &flat) || low_kernel(L, blk))
        return -1;
    for (int k = k0; k < nk; k++) {                    /* the head's kernels, then the members' */
        L->p->kernels[k].n_nodes = 1;
        L->p->kernels[k].flops = ir_node_flops(L->g, L->n);
    }
    L->p->kernels[nk].first_node = L->node + 1;
    L->p->kernels[nk].n_nodes = L->fuse_n;
    L->p->kernels[nk].flops -= ir_node_flops(L->g, L->n);
    return 0;
}

/* The tensor a node's kernel writes as its output 0: the last fused
 * member's output for a group head, else the node's own. */
static int fused_result(const Low *L)
{
    return L->g->nodes[L->node + L->fuse_n].out[0];
}

/* A tensor a kernel about to be built may read: a graph input, a
 * compile-time value or the output of a kernel already built. */
static int available(const Low *L, int t)
{
    return L->tbuf[t] >= 0 || L->g->tensors[t].v.data || graph_input_pos(L->g, t) >= 0;
}

/* How many nodes after node i are computed in its kernel: the run of nodes
 * marked fused (passes/fuse.c) when it forms a valid group (re-checked here
 * with L->uses), else 0 and every node gets its own kernel. */
static int fused_members(const Low *L, int i, const PassSchedule *s)
{
    const int *uses = L->uses;
    const IrGraph *g = L->g;
    const IrNode *h = &g->nodes[i];
    if (!uses || i + 1 >= g->n_nodes || !g->nodes[i + 1].fused || !pass_fuse_head(g, h))
        return 0;
    /* The FPGA target rewrites each Conv kernel into a line-buffer pipeline
     * (targets/fpga_conv.c), which needs the Conv alone in its kernel, and
     * fuses ReLUs itself after that: there anchors head no group (the
     * elementwise rest of a group still fuses). */
    if (pass_fuse_anchor(h->op) && s && s->target && !strcmp(s->target, "fpga"))
        return 0;
    int n = 0, chain = h->out[0];
    for (int m = i + 1; m < g->n_nodes && g->nodes[m].fused; m++) {
        const IrNode *mn = &g->nodes[m];
        int reads = 0;
        for (int k = 0; k < mn->n_in; k++)
            reads += mn->in[k] == chain;
        if (!pass_fuse_member(g, h, mn, chain) || uses[chain] != reads || graph_output_pos(g, chain) >= 0)
            return 0;
        for (int k = 0; k < mn->n_in; k++)
            if (mn->in[k] >= 0 && mn->in[k] != chain && !available(L, mn->in[k]))
                return 0;
        chain = mn->out[0];
        n++;
    }
    return n;
}

LoopProgram *pass_lower(const IrGraph *g, const PassSchedule *s, UtilDiag *d)
{
    LoopProgram *p = loop_program_new(g->name);
    int *tbuf = malloc((size_t)(g->n_tensors > 0 ? g->n_tensors : 1) * sizeof *tbuf);
    if (!p || !tbuf) {
        free(tbuf);
        loop_program_free(p);
        util_error(d, util_loc_file(g->file), "out of memory while lowering");
        return NULL;
    }
    for (int t = 0; t < g->n_tensors; t++)
        tbuf[t] = -1;
    p->n_inputs = g->n_inputs;
    p->n_outputs = g->n_outputs;
    Low L = { .p = p, .g = g, .d = d, .tbuf = tbuf, .s = s, .blocks.kernel = -1 };
    int r = 0;
    /* every graph input gets its buffer, used or not */
    for (int i = 0; r == 0 && i < g->n_inputs; i++)
        if (use_buf(&L, g->inputs[i]) < 0)
            r = util_error(d, util_loc_file(g->file), "out of memory while lowering");
    /* uses per tensor, to re-check fused groups (NULL when out of memory:
     * no fusion) */
    int *uses = calloc((size_t)g->n_tensors + 1, sizeof *uses);
    L.uses = uses;
    for (int i = 0; uses && i < g->n_nodes; i++)
        for (int k = 0; !g->nodes[i].dead && k < g->nodes[i].n_in; k++)
            if (g->nodes[i].in[k] >= 0)
                uses[g->nodes[i].in[k]]++;
    for (int i = 0; r == 0 && i < g->n_nodes; i++) {
        L.node = i;
        L.n = &g->nodes[i];
        L.fuse_n = g->nodes[i].dead ? 0 : fused_members(&L, i, s);
        r = lower_node(&L, s);
        i += L.fuse_n;
        L.fuse_n = 0;
    }
    free(uses);
    L.uses = NULL;
    /* outputs not written in place by their producer: copy kernels */
    for (int o = 0; r == 0 && o < g->n_outputs; o++) {
        int t = g->outputs[o], b = tbuf[t];
        if (b >= 0 && p->bufs[b].storage == LOOP_ST_OUTPUT && p->bufs[b].index == o && p->bufs[b].alias_of < 0)
            continue;
        L.n = NULL;                 /* the copy belongs to no node */
        L.node = -1;
        if (b < 0)
            b = use_buf(&L, t);
        if (b < 0) {
            r = util_error(d, g->tensors[t].loc, "graph output '%s' is never produced", g->tensors[t].name);
            break;
        }
        const IrTensor *tt = &g->tensors[t];
        int ob = loop_add_buf(p, tt->name, tt->v.dtype, &tt->v.shape, LOOP_ST_OUTPUT);
        if (ob < 0) {
            r = util_error(d, tt->loc, "out of memory while lowering");
            break;
        }
        p->bufs[ob].index = o;
        p->bufs[ob].tensor = t;
        char name[64];
        snprintf(name, sizeof name, "copy_output_%d", o);
        LoopStmt *k = loop_block(p);
        CopyCtx c = { b, ob };
        if (!k || map_impl(&L, k, ob, 1, copy_elem, &c) != 0 || add_kernel(&L, name, k, -1) != 0)
            r = util_error(d, tt->loc, "out of memory while lowering");
    }
    free(tbuf);
    if (r == 0) {
        loop_simplify(p);
        r = loop_verify(p, d);
    }
    if (r != 0) {
        loop_program_free(p);
        return NULL;
    }
    return p;
}

LowFn low_lowering(IrOp op)
{
    return (unsigned)op < IR_OP_COUNT ? low_table[op] : NULL;
}

/* A fused member is applied by its elementwise template's expression
 * builder (low_ew_member). */
int pass_fuse_elementwise(IrOp op)
{
    LowFn f = low_lowering(op);
    return f && (f == low_unary || f == low_binary || f == low_clip || f == low_where || f == low_variadic ||
                 f == low_cast);
}

int pass_lower_supports(IrOp op)
{
    return (unsigned)op < IR_OP_COUNT && low_table[op] != NULL;
}
