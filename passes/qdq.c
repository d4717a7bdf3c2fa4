/* passes/qdq.c — quantized products written as DequantizeLinear → product →
 * QuantizeLinear (QDQ: what ONNX Runtime's quantize_static writes) become
 * the integer operators QLinearConv / QLinearMatMul, so the product runs on
 * the integers (docs/passes.md, "Quantized products").
 *
 *   x = DQ(xq, xs, xz)   w = DQ(wq, ws, wz)   [b = DQ(bq, bs, 0)]
 *   y = Conv(x, w, b)    [y = Relu(y)]        yq = QuantizeLinear(y, ys, yz)
 *
 * In exact arithmetic, with bs[m] = xs * ws[m] (what the quantizers write):
 *   y[m]  = xs * ws[m] * (acc[m] + bq[m]),   acc = Σ (xq - xz)(wq - wz[m])
 *   yq[m] = sat(round(y[m] / ys) + yz) = sat(round((acc[m] + bq[m]) * (xs ws[m] / ys)) + yz)
 * which is QLinearConv(xq, xs, xz, wq, ws, wz, ys, yz, bq).  A Relu before the
 * quantization stays exact as a clamp of the integers: Q is monotonic and
 * Q(0) = yz, so Q(max(y, 0)) = max(Q(y), yz).
 *
 *   MatMul(DQ(a), DQ(b)) → Q      ⇒ QLinearMatMul (a per tensor; b per tensor or
 *                                    per column of a 2-D b)
 *   Gemm(DQ(a), DQ(B), [DQ(C)]) → Q, alpha 1, beta 1, transA 0, B constant
 *                                 ⇒ a 1-D QLinearConv over a's M rows as a batch:
 *     Reshape(aq, [M, K, 1]), weights [N, K, 1] (Bᵀ when transB = 0), Reshape of
 *     the result to [M, N] (both reshapes are views).
 *
 * The integer form rounds once, where the float graph rounded every product
 * and sum: a value that falls within float rounding of a tie between two
 * quantization steps may land on the other step.  The integer form is what
 * ONNX Runtime computes for the same model.  Where no sum can leave float32's
 * integers the product runs as an exact float32 form instead (below).  A
 * second sweep turns the remaining per-tensor Q / DQ into elementwise nodes. */
#include "passes/pass_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The live node of op `op` whose output 0 is t (its value may be known:
 * inference propagates constants), or -1. */
/* The sweeps' modes: qdq (the exact float32 forms where they hold),
 * qdq-int8 (every product on the 8-bit tensors), qdq-dot (qdq, but the
 * products that 8-bit dot products run — convolutions over whole input
 * channels (dot_conv), MatMul and Gemm with constant int8 weights — as
 * QLinearConv / QLinearMatMul). */
enum { QDQ_FLOAT, QDQ_INT8, QDQ_DOT };

static int producer(const IrGraph *g, int t, IrOp op)
{
    if (t < 0)
        return -1;
    int p = g->tensors[t].producer;
    return p >= 0 && !g->nodes[p].dead && g->nodes[p].op == op && g->nodes[p].out[0] == t ? p : -1;
}

static int is_int8(IrDType t) { return t == IR_DT_I8 || t == IR_DT_U8; }

static int64_t numel(const IrGraph *g, int t) { return ir_shape_numel(&g->tensors[t].v.shape); }

/* A dequantized operand: DQ(q, scale, zp) with float32 scales and constant
 * scale and zero point, no blocks; per tensor, or per channel along `axis`
 * (normalized). */
typedef struct Deq {
    int node, q, scale, zp;   /* zp -1 when absent */
    int axis;                 /* -1: per tensor */
} Deq;

static int dequant(const IrGraph *g, int t, int want_const, Deq *o)
{
    int p = producer(g, t, IR_OP_DequantizeLinear);
    if (p < 0)
        return 0;
    const IrNode *n = &g->nodes[p];
    *o = (Deq){ .node = p, .q = n->in[0], .scale = n->in[1], .zp = n->n_in > 2 ? n->in[2] : -1, .axis = -1 };
    if (ir_attr_int(n, IR_A_block_size) != 0 || g->tensors[o->scale].v.dtype != IR_DT_F32 ||
        g->tensors[n->out[0]].v.dtype != IR_DT_F32 || !pass_value(g, o->scale) ||
        (o->zp >= 0 && !pass_value(g, o->zp)) || (want_const && !pass_value(g, o->q)))
        return 0;
    if (numel(g, o->scale) > 1) {
        int r = g->tensors[o->q].v.shape.rank;
        int64_t a = ir_attr_int(n, IR_A_axis);
        o->axis = (int)(a < 0 ? a + r : a);
    }
    return 1;
}

/* The quantization after y: QuantizeLinear(y, ys, yz) to 8 bits, per tensor,
 * y read by it alone; its node, or -1. */
static int quant_after(IrGraph *g, int y)
{
    if (!pass_single_use(g, y))
        return -1;
    int u = g->use_node[g->use_start[y]];
    const IrNode *n = &g->nodes[u];
    if (n->op != IR_OP_QuantizeLinear || n->in[0] != y || !is_int8(g->tensors[n->out[0]].v.dtype) ||
        ir_attr_int(n, IR_A_block_size) != 0 || ir_attr_int(n, IR_A_precision) != 0 ||
        g->tensors[n->in[1]].v.dtype != IR_DT_F32 || !pass_value(g, n->in[1]) || numel(g, n->in[1]) != 1 ||
        (n->n_in > 2 && n->in[2] >= 0 && (!pass_value(g, n->in[2]) || numel(g, n->in[2]) != 1)))
        return -1;
    return u;
}

/* The zero point of d, or a zero of q's type. */
static int zero_point(IrGraph *g, const Deq *d)
{
    return d->zp >= 0 ? d->zp : pass_const_scalar(g, g->tensors[d->q].name, g->tensors[d->q].v.dtype, 0);
}

/* A per-tensor 8-bit operand. */
static int per_tensor8(const IrGraph *g, const Deq *d)
{
    return d->axis < 0 && is_int8(g->tensors[d->q].v.dtype);
}

/* Weights: 8-bit, per tensor or per channel along axis `axis` (count channels). */
static int weights8(const IrGraph *g, const Deq *d, int axis)
{
    return is_int8(g->tensors[d->q].v.dtype) && (d->axis < 0 || d->axis == axis) &&
           (d->zp < 0 || numel(g, d->zp) == 1 || numel(g, d->zp) == numel(g, d->scale));
}

/* A bias DQ(bq int32 [M], bs, 0) with bs[m] = xs * ws[m] in float32. */
static int bias_matches(const IrGraph *g, const Deq *b, const Deq *x, const Deq *w, int64_t M)
{
    if (g->tensors[b->q].v.dtype != IR_DT_I32 || numel(g, b->q) != M || (b->zp >= 0 && !pass_value_is(g, b->zp, 0)))
        return 0;
    const IrArray *bs = pass_value(g, b->scale), *ws = pass_value(g, w->scale), *xs = pass_value(g, x->scale);
    int64_t nb = ir_array_numel(bs), nw = ir_array_numel(ws);
    float xv = ((const float *)xs->data)[0];
    for (int64_t m = 0; m < M; m++) {
        float want = xv * ((const float *)ws->data)[nw > 1 ? m : 0];
        float got = ((const float *)bs->data)[nb > 1 ? m : 0];
        if (fabsf(got - want) > 1e-6f * fabsf(want))
            return 0;
    }
    return 1;
}

/* The product's output y (Conv / MatMul / Gemm) followed by an optional Relu
 * and the quantization: the Q node, the Relu node (-1 when none). */
static int tail(IrGraph *g, int y, int *relu)
{
    *relu = -1;
    if (pass_single_use(g, y)) {
        int u = g->use_node[g->use_start[y]];
        if (g->nodes[u].op == IR_OP_Relu) {
            *relu = u;
            y = g->nodes[u].out[0];
        }
    }
    return quant_after(g, y);
}

/* The Q node's scale and zero point (a zero of its output type when absent);
 * -1 on out of memory. */
static int q_params(IrGraph *g, int q, int *ys, int *yz)
{
    const IrNode *qn = &g->nodes[q];
    *ys = qn->in[1];
    *yz = qn->n_in > 2 && qn->in[2] >= 0 ? qn->in[2] : -1;
    if (*yz < 0) {
        int yq = qn->out[0];
        *yz = pass_const_scalar(g, g->tensors[yq].name, g->tensors[yq].v.dtype, 0);
    }
    return *yz < 0 ? -1 : 0;
}

/* Replaces the quantized output of node q by y (integer, same type and
 * shape), clamped below at the zero point when a Relu preceded and `clamp`
 * (else y has the clamp already); kills q, the product `node` and the
 * Relu.  1 done, 0 not possible (nothing changed), -1 error. */
static int finish(IrGraph *g, int q, int node, int y, int relu, int clamp, int first_new, UtilDiag *d)
{
    int yq = g->nodes[q].out[0], ys, yz;
    if (y >= 0 && relu >= 0 && clamp)
        y = q_params(g, q, &ys, &yz) ? -1 : pass_emit(g, IR_OP_Max, g->tensors[yq].name, 2, (int[]){ y, yz }, 1, -1,
                                                        g->nodes[q].loc, d);
    if (y < 0)
        return -1;
    return pass_commit(g, yq, y, first_new, (int[]){ q, node, relu }, 3);
}

/* Output 0 of a new node op(in[0..n)) with one integer attribute (key
 * IR_A_INVALID: none); -1 with a diagnostic. */
static int emit(IrGraph *g, IrOp op, const char *hint, int n, const int *in, IrAttrKey key, int64_t v, UtilLoc loc,
                UtilDiag *d)
{
    for (int i = 0; i < n; i++)
        if (in[i] < 0)
            return util_error(d, util_loc_file(g->file), "out of memory");
    int node = pass_emit_node(g, op, hint, n, in, 1, -1, loc);
    IrAttr a = { .key = key, .kind = IR_AK_INT, .v.i = v };
    if (node < 0 || (key != IR_A_INVALID && ir_set_attr(g, node, &a)))
        return util_error(d, util_loc_file(g->file), "out of memory");
    return pass_emit_done(g, node, d);
}

/* ------------------------------------------------ the exact float32 form
 *
 * Where the sums cannot leave float32's integers, the product runs as the
 * float Conv / Gemm / MatMul of the zero-point-shifted integers, on the fast
 * float kernels, and gives QLinearConv's / QLinearMatMul's result bit for bit:
 * every product (x - xz)(w - wz) is an integer of at most 16 bits, and when for
 * each output channel m
 *     X · Σ_k |w[m,k] - wz[m]| + |b[m]| < 2^24,   X = max |x - xz| over x's type,
 * every partial sum, in any order, is an integer below 2^24, which float32
 * holds exactly; fused multiply-adds round nothing then.  The requantization is
 * the integer form's: round_even(float32(acc) · m) + yz, m = (xs ws[m]) / ys in
 * float32, saturated to the output type (Clip, Cast).  The accumulator passes
 * through a Round, an identity on these values, so that fold-weights does not
 * move m into the weights (and the chain stays float32: one fused kernel with
 * the product); the CPU lowering keeps
 * convolutions with integer-valued weights off Winograd, whose transforms
 * round (lower/tile/gemm.c).  Where the bound fails the integer operator
 * stays. */

#define EXACT_LIMIT 16777216.0   /* 2^24 */

/* Largest |q - zp| over q's type for a zero point zp. */
static double type_span(IrDType t, double zp)
{
    double lo, hi;
    ir_dtype_int_range(t, &lo, &hi);
    return fmax(hi - zp, zp - lo);
}

static double zp_value(const IrGraph *g, int zp, int64_t i)
{
    const IrArray *v = zp >= 0 ? pass_value(g, zp) : NULL;
    return v ? ir_load_f64(v->dtype, v->data, ir_array_numel(v) > 1 ? i : 0) : 0;
}

/* Constant weights w [..] with `count` output channels, channel of element i
 * = (i / inner) % count: the shifted float weights (a new constant of w's
 * shape, *wf) when the bound holds with input span X and bias b (-1: none);
 * 0 when it does not hold, -1 on out of memory. */
static int exact_weights(IrGraph *g, const Deq *w, int64_t count, int64_t inner, double X, int b, int *wf)
{
    const IrArray *wv = pass_value(g, w->q);
    int64_t n = ir_array_numel(wv);
    double *sum = calloc((size_t)count, sizeof *sum);
    if (!sum)
        return -1;
    for (int64_t i = 0; i < n; i++) {
        int64_t c = (i / inner) % count;
        sum[c] += fabs(ir_load_f64(wv->dtype, wv->data, i) - zp_value(g, w->zp, c));
    }
    int ok = 1;
    const IrArray *bv = b >= 0 ? pass_value(g, b) : NULL;
    for (int64_t c = 0; c < count && ok; c++)
        ok = X * sum[c] + (bv ? fabs(ir_load_f64(bv->dtype, bv->data, c)) : 0) < EXACT_LIMIT;
    free(sum);
    if (!ok)
        return 0;
    IrShape shape = g->tensors[w->q].v.shape;
    *wf = pass_new_const(g, g->tensors[w->q].name, IR_DT_F32, &shape);
    if (*wf < 0)
        return -1;
    wv = pass_value(g, w->q);
    float *o = g->tensors[*wf].v.data;
    for (int64_t i = 0; i < n; i++)
        o[i] = (float)(ir_load_f64(wv->dtype, wv->data, i) - zp_value(g, w->zp, (i / inner) % count));
    return 1;
}

/* A constant holding v (a float32 copy) in the given shape, or -1. */
static int float_copy(IrGraph *g, int v, const IrShape *shape)
{
    IrShape sh = *shape;
    int t = pass_new_const(g, g->tensors[v].name, IR_DT_F32, &sh);
    if (t < 0)
        return -1;
    const IrArray *a = pass_value(g, v);   /* after the new constant: the tensor array may have moved */
    for (int64_t i = 0; i < ir_shape_numel(&sh); i++)
        ((float *)g->tensors[t].v.data)[i] = (float)ir_load_f64(a->dtype, a->data, i);
    return t;
}

/* t = Cast(Clip(r, lo, hi), T) with r = Round(.) or Round(.) + an integer
 * constant and [lo, hi] within T: the float32 tensor Clip(...), which holds
 * t's values exactly (the requantizations here end so); else -1. */
static int float_source(const IrGraph *g, int t)
{
    int cast = producer(g, t, IR_OP_Cast), clip = cast < 0 ? -1 : producer(g, g->nodes[cast].in[0], IR_OP_Clip);
    if (clip < 0 || g->nodes[clip].n_in < 3 || g->tensors[g->nodes[clip].out[0]].v.dtype != IR_DT_F32)
        return -1;
    const IrNode *cn = &g->nodes[clip];
    double lo, hi, tlo, thi;
    ir_dtype_int_range(g->tensors[t].v.dtype, &tlo, &thi);
    if (!pass_value_uniform(g, cn->in[1], &lo) || !pass_value_uniform(g, cn->in[2], &hi) || lo < tlo || hi > thi)
        return -1;
    int r = cn->in[0], add = producer(g, r, IR_OP_Add);
    if (add >= 0) {
        const IrNode *an = &g->nodes[add];
        double k;
        if (!pass_value_uniform(g, an->in[1], &k) || k != floor(k))
            return -1;
        r = an->in[0];
    }
    return producer(g, r, IR_OP_Round) >= 0 ? cn->out[0] : -1;
}

/* The 8-bit tensor t as float32: its float source (unless keep8: the 8-bit
 * tensor is what stays in memory), else a Cast. */
static int as_float(IrGraph *g, int t, int keep8, UtilLoc loc, UtilDiag *d)
{
    int c = keep8 ? -1 : float_source(g, t);
    return c >= 0 ? c : emit(g, IR_OP_Cast, g->tensors[t].name, 1, &t, IR_A_to, ir_dtype_to_onnx(IR_DT_F32), loc, d);
}

/* float32(q) - zp as a node (zp per tensor, or per element of the last axis);
 * q's float source when it has one, instead of a Cast. */
static int shifted(IrGraph *g, const Deq *q, UtilLoc loc, UtilDiag *d)
{
    const char *h = g->tensors[q->q].name;
    int c = as_float(g, q->q, 0, loc, d);
    if (c < 0 || q->zp < 0 || pass_value_is(g, q->zp, 0))
        return c;
    IrShape zs = g->tensors[q->zp].v.shape;
    int z = float_copy(g, q->zp, &zs);
    return emit(g, IR_OP_Sub, h, 2, (int[]){ c, z }, IR_A_INVALID, 0, loc, d);
}

/* Float32 v to the 8-bit type yt: Round, + z (when not 0), Clip to yt's range
 * (from `floor` when above its minimum: a Relu's zero point), Cast; -1 with a
 * diagnostic. */
static int saturate(IrGraph *g, int v, double z, double floor, IrDType yt, const char *h, UtilLoc loc, UtilDiag *d)
{
    double lo, hi;
    ir_dtype_int_range(yt, &lo, &hi);
    lo = fmax(lo, floor);
    int r = v < 0 ? -1 : emit(g, IR_OP_Round, h, 1, &v, IR_A_INVALID, 0, loc, d);
    if (r >= 0 && z != 0)
        r = emit(g, IR_OP_Add, h, 2, (int[]){ r, pass_const_scalar(g, h, IR_DT_F32, z) }, IR_A_INVALID, 0, loc, d);
    int c = r < 0 ? -1 : emit(g, IR_OP_Clip, h, 3, (int[]){ r, pass_const_scalar(g, h, IR_DT_F32, lo),
                                                       pass_const_scalar(g, h, IR_DT_F32, hi) }, IR_A_INVALID, 0, loc, d);
    return c < 0 ? -1 : emit(g, IR_OP_Cast, h, 1, &c, IR_A_to, ir_dtype_to_onnx(yt), loc, d);
}

/* The requantization of a float accumulator acc (exact integers): the
 * multiplier xs * ws[c] / ys per output channel c (count of them, shaped
 * mshape), then round, + yz, clip (from yz when a Relu preceded), cast. */
static int requant(IrGraph *g, int acc, const Deq *x, const Deq *w, int q, int relu, const IrShape *mshape,
                   UtilLoc loc, UtilDiag *d)
{
    const IrNode *qn = &g->nodes[q];
    int yq = qn->out[0];
    IrDType yt = g->tensors[yq].v.dtype;
    const char *h = g->tensors[yq].name;
    float xs = *(const float *)pass_value(g, x->scale)->data, ys = *(const float *)pass_value(g, qn->in[1])->data;
    double yz = qn->n_in > 2 && qn->in[2] >= 0 ? zp_value(g, qn->in[2], 0) : 0;
    IrShape ms = *mshape;
    int m = pass_new_const(g, h, IR_DT_F32, &ms);
    if (m < 0)
        return util_error(d, util_loc_file(g->file), "out of memory");
    const IrArray *wsv = pass_value(g, w->scale);
    int64_t nm = ir_shape_numel(&ms), nws = ir_array_numel(wsv);
    for (int64_t c = 0; c < nm; c++)
        ((float *)g->tensors[m].v.data)[c] = (xs * ((const float *)wsv->data)[nws > 1 ? c : 0]) / ys;
    if (g->tensors[acc].v.dtype != IR_DT_F32)   /* int32 chunk sums */
        acc = emit(g, IR_OP_Cast, h, 1, &acc, IR_A_to, ir_dtype_to_onnx(IR_DT_F32), loc, d);
    else                                          /* an identity here, and no constant multiply for fold-weights */
        acc = emit(g, IR_OP_Round, h, 1, &acc, IR_A_INVALID, 0, loc, d);
    int v = acc < 0 ? -1 : emit(g, IR_OP_Mul, h, 2, (int[]){ acc, m }, IR_A_INVALID, 0, loc, d);
    return saturate(g, v, yz, relu >= 0 ? yz : -INFINITY, yt, h, loc, d);
}

/* [M, 1, ...] for an output of rank `rank`: one value per output channel. */
static IrShape channel_shape(int64_t M, int rank)
{
    IrShape s = { .rank = rank - 1 };
    for (int i = 0; i < s.rank; i++)
        s.dims[i] = i == 0 ? M : 1;
    return s;
}

/* A Conv (group 1) whose sums may leave float32's integers: its input
 * channels in S equal chunks (the fewest, up to 16), each chunk's sums exact
 * (the bias in the first), every chunk a float Conv over a Slice of the
 * shifted input, the chunk results added as int32 (exact), then requantized.
 * 1 done, 0 when no split fits, -1 on error. */
static int conv_split(IrGraph *g, int c, const Deq *x, const Deq *w, const Deq *b, int q, int relu, double X,
                      int first_new, UtilDiag *d)
{
    const IrNode *n = &g->nodes[c];
    const IrShape ws = g->tensors[w->q].v.shape;
    int64_t M = ws.dims[0], C = ws.dims[1], taps = ir_shape_numel(&ws) / (M * C);
    if (ir_attr_int(n, IR_A_group) != 1 || C < 2)
        return 0;
    const IrArray *wv = pass_value(g, w->q), *bv = b->q >= 0 ? pass_value(g, b->q) : NULL;
    int S = 0;
    for (int s = 2; s <= 16 && s <= C && !S; s++) {
        int ok = 1;
        for (int64_t m = 0; m < M && ok; m++)
            for (int j = 0; j < s && ok; j++) {
                double sum = j == 0 && bv ? fabs(ir_load_f64(bv->dtype, bv->data, m)) : 0;
                for (int64_t i = m * C * taps + C * j / s * taps; i < m * C * taps + C * (j + 1) / s * taps; i++)
                    sum += X * fabs(ir_load_f64(wv->dtype, wv->data, i) - zp_value(g, w->zp, m));
                ok = sum < EXACT_LIMIT;
            }
        if (ok)
            S = s;
    }
    if (!S)
        return 0;
    UtilLoc loc = n->loc;
    const char *h = g->tensors[n->out[0]].name;
    const IrShape yshape = g->tensors[n->out[0]].v.shape;
    IrShape bsh = { .rank = 1, .dims = { M } };
    int xf = shifted(g, x, loc, d), bf = b->q >= 0 ? float_copy(g, b->q, &bsh) : -1, sum = -1;
    for (int j = 0; j < S && xf >= 0; j++) {
        int64_t c0 = C * j / S, c1 = C * (j + 1) / S;
        IrShape cs = ws;
        cs.dims[1] = c1 - c0;
        int wj = pass_new_const(g, g->tensors[w->q].name, IR_DT_F32, &cs);
        int st = pass_const_ints(g, h, 1, &c0), en = pass_const_ints(g, h, 1, &c1), ax = pass_const_ints(g, h, 1, (const int64_t[]){ 1 });
        if (wj < 0 || st < 0 || en < 0 || ax < 0)
            return util_error(d, util_loc_file(g->file), "out of memory");
        wv = pass_value(g, w->q);
        float *o = g->tensors[wj].v.data;
        for (int64_t m = 0, k = 0; m < M; m++)
            for (int64_t i = m * C * taps + c0 * taps; i < m * C * taps + c1 * taps; i++)
                o[k++] = (float)(ir_load_f64(wv->dtype, wv->data, i) - zp_value(g, w->zp, m));
        int sl = emit(g, IR_OP_Slice, h, 4, (int[]){ xf, st, en, ax }, IR_A_INVALID, 0, loc, d);
        int cj = sl < 0 ? -1 : pass_emit(g, IR_OP_Conv, h, j == 0 && bf >= 0 ? 3 : 2, (int[]){ sl, wj, bf }, 1, c, loc, d);
        int ij = cj < 0 ? -1 : emit(g, IR_OP_Cast, h, 1, &cj, IR_A_to, ir_dtype_to_onnx(IR_DT_I32), loc, d);
        sum = ij < 0 ? -1 : j == 0 ? ij : emit(g, IR_OP_Add, h, 2, (int[]){ sum, ij }, IR_A_INVALID, 0, loc, d);
        if (sum < 0)
            return -1;
    }
    if (xf < 0)
        return -1;
    IrShape ms = channel_shape(M, yshape.rank);
    int y = requant(g, sum, x, w, q, relu, &ms, loc, d);
    return finish(g, q, c, y, relu, 0, first_new, d);
}

/* qdq-dot: does Conv n with weights w run on 8-bit dot products as a
 * QLinearConv (lower/tile/qconv.c: int8 weights with zero points 0, a
 * window over whole input channels or a small depthwise one, at least 16
 * output pixels)? */
/* The shortest reduction a convolution takes to 8-bit dot products: below
 * it the requantization and the 8-bit tensor's conversions cost more than
 * the products save.  Below DOT_FUSED_K a convolution whose quantized output
 * goes straight (through its DQ) into a depthwise one stays in the float32
 * form, which the lowering computes in one kernel with that depthwise layer
 * (MobileNetV2's 16- to 32-channel expansions: on Zen 5 its int8 time 2.91
 * -> 3.24 ms with them on dot products); the others, whose output passes
 * through an activation first (EfficientNet's SiLU, MobileNetV3's
 * HardSwish, table lookups), gain (0.97 -> 0.81 ms, 5.62 -> 5.08). */
enum { DOT_MIN_K = 16, DOT_FUSED_K = 64 };

/* A depthwise Conv (one input and one output channel a group) of at most
 * DW_MAX_TAPS taps (5x5) and DW_MIN_PIXELS output pixels or more: on dot
 * products of its taps (lower/tile/qconv.c, dw_kernel).  On Zen 5 planes
 * under 28x28 ran slower than the float32 form (a block of 64 lanes over 49
 * or 196 pixels: MobileNetV1-0.25 +28% with every 3x3 layer, MobileNetV2
 * 1.95 -> 2.15 ms); EfficientNet-B0's 5x5 layers of 28x28 gained 5%. */
enum { DW_MAX_TAPS = 25, DW_MIN_PIXELS = 784 };

static int depthwise_dot(const IrGraph *g, const IrNode *c)
{
    const IrShape *ws = c->n_in > 1 && c->in[1] >= 0 ? &g->tensors[c->in[1]].v.shape : NULL;
    const IrShape *ys = c->out[0] >= 0 ? &g->tensors[c->out[0]].v.shape : NULL;
    int64_t G = ir_attr_int(c, IR_A_group);
    return ws && ys && ws->rank == 4 && ys->rank == 4 && G > 1 && ws->dims[0] == G && ws->dims[1] == 1 &&
           ws->dims[2] * ws->dims[3] <= DW_MAX_TAPS && ys->dims[2] * ys->dims[3] >= DW_MIN_PIXELS;
}

/* Does the 8-bit output of Q node q feed, through a DequantizeLinear, a
 * depthwise (grouped) Conv that stays in the float32 form? */
static int feeds_depthwise(IrGraph *g, int q)
{
    int y = g->nodes[q].out[0];
    if (ir_build_uses(g))
        return 1;
    for (int u = g->use_start[y]; u < g->use_start[y + 1]; u++) {
        const IrNode *d = &g->nodes[g->use_node[u]];
        if (d->op != IR_OP_DequantizeLinear || d->out[0] < 0)
            continue;
        int x = d->out[0];
        for (int v = g->use_start[x]; v < g->use_start[x + 1]; v++) {
            const IrNode *c = &g->nodes[g->use_node[v]];
            if (c->op == IR_OP_Conv && c->in[0] == x && ir_attr_int(c, IR_A_group) > 1 && !depthwise_dot(g, c))
                return 1;
        }
    }
    return 0;
}

/* Constant int8 weights with zero points 0 (what VPDPBUSD's signed operand takes). */
static int dot_weights(const IrGraph *g, const Deq *w)
{
    const IrArray *z = w->zp >= 0 ? pass_value(g, w->zp) : NULL;
    for (int64_t i = 0; z && i < ir_array_numel(z); i++)
        if (ir_load_i64(z->dtype, z->data, i) != 0)
            return 0;
    return pass_value(g, w->q) && g->tensors[w->q].v.dtype == IR_DT_I8 && (w->zp < 0 || z);
}

/* Two run-time 8-bit operands of a MatMul for the dot products (lower/tile/qconv.c,
 * tile_qmatmul): a per tensor [.., R, K], b per tensor [K, N] or with a's batch
 * dims, each the output of a QuantizeLinear (a plain tensor of its own), N >= 16
 * and 8 <= K < 11000 (the row and column terms in int32). */
static int dot_runtime(const IrGraph *g, const Deq *a, const Deq *b)
{
    const IrShape *as = &g->tensors[a->q].v.shape, *bs = &g->tensors[b->q].v.shape;
    if (pass_value(g, b->q) || !per_tensor8(g, b) || as->rank < 2 || bs->rank < 2 ||
        producer(g, a->q, IR_OP_QuantizeLinear) < 0 || producer(g, b->q, IR_OP_QuantizeLinear) < 0)
        return 0;
    if (bs->rank != 2 && bs->rank != as->rank)
        return 0;
    for (int i = 0; bs->rank > 2 && i < as->rank - 2; i++)
        if (as->dims[i] != bs->dims[i])
            return 0;
    int64_t K = bs->dims[bs->rank - 2], N = bs->dims[bs->rank - 1];
    return K == as->dims[as->rank - 1] && N >= 16 && K >= 8 && K < 11000;
}

static int dot_conv(IrGraph *g, const IrNode *n, const Deq *w, int q)
{
    const IrShape *ys = &g->tensors[n->out[0]].v.shape, *ws = &g->tensors[w->q].v.shape;
    int64_t px = 1, K = 1;
    for (int i = 2; i < ys->rank; i++)
        px *= ys->dims[i];
    for (int i = 1; i < ws->rank; i++)
        K *= ws->dims[i];
    int dw = depthwise_dot(g, n);
    return (ir_attr_int(n, IR_A_group) == 1 || dw) && dot_weights(g, w) && ys->rank >= 3 && ys->rank <= 4 &&
           px >= 16 && (K >= DOT_MIN_K || dw) && (K >= DOT_FUSED_K || !feeds_depthwise(g, q));
}

static int conv_at(IrGraph *g, int c, int mode, UtilDiag *d)
{
    const IrNode *n = &g->nodes[c];
    Deq x, w, b = { .q = -1 };
    int relu, q;
    int64_t M = g->tensors[n->out[0]].v.shape.dims[1];
    if (!dequant(g, n->in[0], 0, &x) || !per_tensor8(g, &x) || !dequant(g, n->in[1], 1, &w) || !weights8(g, &w, 0) ||
        (n->n_in > 2 && n->in[2] >= 0 && (!dequant(g, n->in[2], 1, &b) || !bias_matches(g, &b, &x, &w, M))) ||
        (q = tail(g, n->out[0], &relu)) < 0)
        return 0;
    int keep8 = mode == QDQ_INT8 || (mode == QDQ_DOT && dot_conv(g, n, &w, q));
    int first_new = g->n_nodes, ys, yz, wf = -1, out0 = n->out[0];
    const UtilLoc loc = n->loc;               /* n dies with the first node emitted (g->nodes grows) */
    const IrShape yshape = g->tensors[out0].v.shape;
    int ex = keep8 ? 0 : exact_weights(g, &w, M, numel(g, w.q) / M, type_span(g->tensors[x.q].v.dtype,
                                                                                 zp_value(g, x.zp, 0)), b.q, &wf);
    if (ex < 0)
        return util_error(d, util_loc_file(g->file), "out of memory");
    if (ex) {
        IrShape ms = channel_shape(M, yshape.rank), bsh = { .rank = 1, .dims = { M } };
        int xf = shifted(g, &x, loc, d), bf = b.q >= 0 ? float_copy(g, b.q, &bsh) : -1;
        int acc = xf < 0 ? -1 : pass_emit(g, IR_OP_Conv, g->tensors[out0].name, bf >= 0 ? 3 : 2,
                                          (int[]){ xf, wf, bf }, 1, c, loc, d);
        int y = acc < 0 ? -1 : requant(g, acc, &x, &w, q, relu, &ms, loc, d);
        return finish(g, q, c, y, relu, 0, first_new, d);
    }
    int sp = keep8 ? 0 : conv_split(g, c, &x, &w, &b, q, relu, type_span(g->tensors[x.q].v.dtype,
                                                                            zp_value(g, x.zp, 0)), first_new, d);
    if (sp != 0)
        return sp;
    if (q_params(g, q, &ys, &yz))
        return util_error(d, util_loc_file(g->file), "out of memory");
    int in[9] = { x.q, x.scale, zero_point(g, &x), w.q, w.scale, zero_point(g, &w), ys, yz, b.q };
    for (int i = 0; i < 9; i++)
        if (in[i] < 0 && i != 8)
            return util_error(d, util_loc_file(g->file), "out of memory");
    int y = pass_emit(g, IR_OP_QLinearConv, g->tensors[out0].name, b.q >= 0 ? 9 : 8, in, 1, c, loc, d);
    return finish(g, q, c, y, relu, 1, first_new, d);
}

static int matmul_at(IrGraph *g, int mm, int mode, UtilDiag *d)
{
    const IrNode *n = &g->nodes[mm];
    Deq a, b;
    int relu, q;
    if (!dequant(g, n->in[0], 0, &a) || !per_tensor8(g, &a) || !dequant(g, n->in[1], 0, &b) ||
        (q = tail(g, n->out[0], &relu)) < 0)
        return 0;
    const IrShape *bs = &g->tensors[b.q].v.shape;
    if (!(per_tensor8(g, &b) || (bs->rank == 2 && weights8(g, &b, 1) && numel(g, b.scale) == bs->dims[1] &&
                                 g->tensors[b.scale].v.shape.rank == 1)))
        return 0;
    int first_new = g->n_nodes, ys, yz, bf = -1, ex = 0, out0 = n->out[0];
    const UtilLoc loc = n->loc;               /* n dies with the first node emitted (g->nodes grows) */
    int64_t N = bs->dims[bs->rank - 1], K = g->tensors[a.q].v.shape.dims[g->tensors[a.q].v.shape.rank - 1];
    int keep8 = mode == QDQ_INT8 || (mode == QDQ_DOT && ((bs->rank == 2 && N >= 16 && dot_weights(g, &b)) ||
                                                         dot_runtime(g, &a, &b)));
    double X = type_span(g->tensors[a.q].v.dtype, zp_value(g, a.zp, 0));
    if (keep8)
        ex = 0;
    else if (pass_value(g, b.q) && bs->rank == 2)
        ex = exact_weights(g, &b, N, 1, X, -1, &bf);
    else if (!pass_value(g, b.q) && per_tensor8(g, &b))  /* two runtime operands: the types' spans */
        ex = X * (double)K * type_span(g->tensors[b.q].v.dtype, zp_value(g, b.zp, 0)) < EXACT_LIMIT;
    if (ex < 0)
        return util_error(d, util_loc_file(g->file), "out of memory");
    if (ex) {
        IrShape ms = { .rank = 1, .dims = { numel(g, b.scale) } };
        int af = shifted(g, &a, loc, d);
        if (af >= 0 && bf < 0)
            bf = shifted(g, &b, loc, d);
        int acc = af < 0 || bf < 0 ? -1 : pass_emit(g, IR_OP_MatMul, g->tensors[out0].name, 2, (int[]){ af, bf },
                                                    1, -1, loc, d);
        int y = acc < 0 ? -1 : requant(g, acc, &a, &b, q, relu, &ms, loc, d);
        return finish(g, q, mm, y, relu, 0, first_new, d);
    }
    if (q_params(g, q, &ys, &yz))
        return util_error(d, util_loc_file(g->file), "out of memory");
    int in[8] = { a.q, a.scale, zero_point(g, &a), b.q, b.scale, zero_point(g, &b), ys, yz };
    for (int i = 0; i < 8; i++)
        if (in[i] < 0)
            return util_error(d, util_loc_file(g->file), "out of memory");
    int y = pass_emit(g, IR_OP_QLinearMatMul, g->tensors[out0].name, 8, in, 1, -1, loc, d);
    return finish(g, q, mm, y, relu, 1, first_new, d);
}

/* Reshape of t to dims[0..r), a view. */
static int reshape(IrGraph *g, int t, int r, const int64_t *dims, UtilLoc loc, UtilDiag *d)
{
    int s = pass_const_ints(g, g->tensors[t].name, r, dims);
    if (s < 0)
        return util_error(d, util_loc_file(g->file), "out of memory");
    return pass_emit(g, IR_OP_Reshape, g->tensors[t].name, 2, (int[]){ t, s }, 1, -1, loc, d);
}

static int gemm_at(IrGraph *g, int gm, int mode, UtilDiag *d)
{
    const IrNode *n = &g->nodes[gm];
    Deq a, w, b = { .q = -1 };
    int relu, q, tb = ir_attr_int(n, IR_A_transB) != 0;
    if (ir_attr_float(n, IR_A_alpha) != 1 || ir_attr_int(n, IR_A_transA) != 0 ||
        (n->n_in > 2 && n->in[2] >= 0 && ir_attr_float(n, IR_A_beta) != 1))
        return 0;
    const IrShape *ys = &g->tensors[n->out[0]].v.shape;
    int64_t M = ys->dims[0], N = ys->dims[1], K = g->tensors[n->in[0]].v.shape.dims[1];
    if (!dequant(g, n->in[0], 0, &a) || !per_tensor8(g, &a) || !dequant(g, n->in[1], 1, &w) ||
        !weights8(g, &w, tb ? 0 : 1) || (w.axis >= 0 && numel(g, w.scale) != N) ||
        (n->n_in > 2 && n->in[2] >= 0 && (!dequant(g, n->in[2], 1, &b) || !bias_matches(g, &b, &a, &w, N))) ||
        (q = tail(g, n->out[0], &relu)) < 0)
        return 0;
    int first_new = g->n_nodes, s, z, wf = -1, out0 = n->out[0];
    int keep8 = mode == QDQ_INT8 || (mode == QDQ_DOT && N >= 16 && dot_weights(g, &w));
    UtilLoc loc = n->loc;                     /* n dies with the first node emitted (g->nodes grows) */
    int ex = keep8 ? 0 : exact_weights(g, &w, N, tb ? K : 1, type_span(g->tensors[a.q].v.dtype, zp_value(g, a.zp, 0)),
                                       b.q, &wf);
    if (ex < 0)
        return util_error(d, util_loc_file(g->file), "out of memory");
    if (ex) {
        IrShape ms = { .rank = 1, .dims = { N } }, bsh = { .rank = 1, .dims = { N } };
        int af = shifted(g, &a, loc, d), bf = b.q >= 0 ? float_copy(g, b.q, &bsh) : -1;
        int acc = af < 0 ? -1 : pass_emit(g, IR_OP_Gemm, g->tensors[out0].name, bf >= 0 ? 3 : 2,
                                          (int[]){ af, wf, bf }, 1, gm, loc, d);
        int y = acc < 0 ? -1 : requant(g, acc, &a, &w, q, relu, &ms, loc, d);
        return finish(g, q, gm, y, relu, 0, first_new, d);
    }
    int yq = g->nodes[q].out[0];
    if (q_params(g, q, &s, &z))
        return util_error(d, util_loc_file(g->file), "out of memory");
    int az = zero_point(g, &a), wz = zero_point(g, &w);
    if (az < 0 || wz < 0)
        return util_error(d, util_loc_file(g->file), "out of memory");
    /* Transpose's default perm reverses the dims: Bᵀ for a 2-D B */
    int wt = tb ? w.q : pass_emit(g, IR_OP_Transpose, g->tensors[w.q].name, 1, &w.q, 1, -1, loc, d);
    int a3 = wt < 0 ? -1 : reshape(g, a.q, 3, (const int64_t[]){ M, K, 1 }, loc, d);
    int w3 = a3 < 0 ? -1 : reshape(g, wt, 3, (const int64_t[]){ N, K, 1 }, loc, d);
    if (w3 < 0)
        return -1;
    int in[9] = { a3, a.scale, az, w3, w.scale, wz, s, z, b.q };
    int y3 = pass_emit(g, IR_OP_QLinearConv, g->tensors[yq].name, b.q >= 0 ? 9 : 8, in, 1, -1, loc, d);
    int y = y3 < 0 ? -1 : reshape(g, y3, 2, (const int64_t[]){ M, N }, loc, d);
    return finish(g, q, gm, y, relu, 1, first_new, d);
}

/* Add of two dequantized 8-bit tensors, quantized: with rA = sa / sc and
 * rB = sb / sc (float32) and F = zc - (rA za + rB zb), the sum is
 *   c = sat(round_even(a rA + (b rB + F)))
 * ONNX Runtime's form (its QLinearAdd kernel): in exact arithmetic the same as
 * sat(round_even((sa (a - za) + sb (b - zb)) / sc) + zc).  Written as Cast,
 * Mul, Add, Round, Clip and Cast, which fuse into one kernel. */
static int add_at(IrGraph *g, int ad, int keep8, UtilDiag *d)
{
    const IrNode *n = &g->nodes[ad];
    Deq a, b;
    int q, relu;
    if (!dequant(g, n->in[0], 0, &a) || !per_tensor8(g, &a) || !dequant(g, n->in[1], 0, &b) || !per_tensor8(g, &b) ||
        (q = tail(g, n->out[0], &relu)) < 0)
        return 0;
    const IrNode *qn = &g->nodes[q];
    int yq = qn->out[0], first_new = g->n_nodes;
    IrDType yt = g->tensors[yq].v.dtype;
    double za = zp_value(g, a.zp, 0), zb = zp_value(g, b.zp, 0), zc = zp_value(g, qn->n_in > 2 ? qn->in[2] : -1, 0);
    float sa = *(const float *)pass_value(g, a.scale)->data, sb = *(const float *)pass_value(g, b.scale)->data;
    float sc = *(const float *)pass_value(g, qn->in[1])->data;
    float ra = sa / sc, rb = sb / sc;
    float f = (float)zc - (ra * (float)za + rb * (float)zb);
    const char *h = g->tensors[yq].name;
    UtilLoc loc = n->loc;
    int ca = as_float(g, a.q, keep8, loc, d), cb = ca < 0 ? -1 : as_float(g, b.q, keep8, loc, d);
    int ta = cb < 0 ? -1 : emit(g, IR_OP_Mul, h, 2, (int[]){ ca, pass_const_scalar(g, h, IR_DT_F32, ra) }, IR_A_INVALID, 0, loc, d);
    int tb = ta < 0 ? -1 : emit(g, IR_OP_Mul, h, 2, (int[]){ cb, pass_const_scalar(g, h, IR_DT_F32, rb) }, IR_A_INVALID, 0, loc, d);
    int tf = tb < 0 ? -1 : emit(g, IR_OP_Add, h, 2, (int[]){ tb, pass_const_scalar(g, h, IR_DT_F32, f) }, IR_A_INVALID, 0, loc, d);
    int sum = tf < 0 ? -1 : emit(g, IR_OP_Add, h, 2, (int[]){ ta, tf }, IR_A_INVALID, 0, loc, d);
    /* a Relu between: Q(max(y, 0)) = max(Q(y), zc), the clip's floor */
    return finish(g, q, ad, saturate(g, sum, 0, relu >= 0 ? zc : -INFINITY, yt, h, loc, d), relu, 0, first_new, d);
}

/* Pooling and reshaping between a per-tensor DQ and Q, kept in 8 bits
 * (--precision int8: the float32 tensor in between would take four times
 * the memory):
 *   MaxPool, Flatten, Reshape with the same scale and zero point on both
 *   sides: the operator on the 8-bit tensor (Q(DQ(x)) = x, both monotonic);
 *   AveragePool, GlobalAveragePool: in exact arithmetic
 *     Q(avg(DQ(x))) = sat(round_even(avg(x - xz) * (xs / ys)) + yz)
 *   written as Cast, Sub, the pool, Mul, Round, Add, Clip, Cast.  x - xz is a
 *   small integer, so the pool's sum is exact in any order and its quotient
 *   is correctly rounded wherever it is computed: the interpreter and the
 *   compiled code agree bit for bit (the float32 graph rounded each DQ). */
static int pool_at(IrGraph *g, int p, UtilDiag *d)
{
    const IrNode *n = &g->nodes[p];
    Deq x;
    int relu, q;
    if (!dequant(g, n->in[0], 0, &x) || !per_tensor8(g, &x) || (n->n_out > 1 && n->out[1] >= 0) ||
        (q = tail(g, n->out[0], &relu)) < 0 || relu >= 0)
        return 0;
    const IrNode *qn = &g->nodes[q];
    int yq = qn->out[0], first_new = g->n_nodes;
    IrDType yt = g->tensors[yq].v.dtype;
    float xs = *(const float *)pass_value(g, x.scale)->data, ys = *(const float *)pass_value(g, qn->in[1])->data;
    double xz = zp_value(g, x.zp, 0), yz = zp_value(g, qn->n_in > 2 ? qn->in[2] : -1, 0);
    const char *h = g->tensors[yq].name;
    UtilLoc loc = n->loc;                     /* n dies with the first node emitted (g->nodes grows) */
    IrOp op = n->op;
    int in[2] = { x.q, n->n_in > 1 ? n->in[1] : -1 }, y;
    if (op == IR_OP_MaxPool || op == IR_OP_Flatten || op == IR_OP_Reshape) {
        if (xs != ys || xz != yz || g->tensors[x.q].v.dtype != yt)
            return 0;
        y = pass_emit(g, op, h, op == IR_OP_Reshape ? 2 : 1, in, 1, p, loc, d);
    } else {
        /* every window divides by the taps it sums (no padding counted):
         * pool(x - xz) = pool(x) - xz, and the pool reads the 8-bit tensor
         * itself (lower.c, cast_into_pool) */
        int late = 1;
        if (n->op == IR_OP_AveragePool && ir_attr_int(n, IR_A_count_include_pad) == 1) {
            const int64_t *pv;
            int np = ir_attr_ints(n, IR_A_pads, &pv);
            const char *ap = ir_attr_str(n, IR_A_auto_pad);
            late = !*ap || strcmp(ap, "NOTSET") == 0 || strcmp(ap, "VALID") == 0;
            for (int k = 0; k < np; k++)
                late = late && pv[k] == 0;
        }
        int c = as_float(g, x.q, 1, loc, d);
        if (c >= 0 && xz != 0 && !late)
            c = emit(g, IR_OP_Sub, h, 2, (int[]){ c, pass_const_scalar(g, h, IR_DT_F32, xz) }, IR_A_INVALID, 0, loc, d);
        int a = c < 0 ? -1 : pass_emit(g, op, h, 1, &c, 1, p, loc, d);
        if (a >= 0 && xz != 0 && late)
            a = emit(g, IR_OP_Sub, h, 2, (int[]){ a, pass_const_scalar(g, h, IR_DT_F32, xz) }, IR_A_INVALID, 0, loc, d);
        int m = a < 0 ? -1 : emit(g, IR_OP_Mul, h, 2, (int[]){ a, pass_const_scalar(g, h, IR_DT_F32, xs / ys) },
                                  IR_A_INVALID, 0, loc, d);
        y = saturate(g, m, yz, -INFINITY, yt, h, loc, d);
    }
    return y < 0 ? -1 : pass_commit(g, yq, y, first_new, (int[]){ q, p, -1 }, 3);
}

/* ------------------------------------ the other QuantizeLinear / DequantizeLinear
 *
 * What is left after the products (around pooling, Concat, activations ...),
 * per tensor with float32 scales and 8-bit integers, becomes the elementwise
 * nodes of its definition, which fuse with their neighbours:
 *   Q:  Cast(Clip(Round(x / s) + zp, lo, hi))      (x / s in float32, as the operator)
 *   DQ: (float32(x) - zp) * s
 * and a DQ of a Q's result reads the Q's float32 Clip (float_source), so a
 * Q → DQ pair stays in float32: the values are those of the int8 tensor.  A Q
 * whose scale is not finite and positive stays (x / s would be NaN); one
 * that a NaN may reach (nan_rule: from a DQ of an infinite scale) maps it to
 * the type's minimum as QuantizeLinear does: Round(Where(IsNaN(x / s), -inf,
 * x / s)). */
static int q_elementwise(IrGraph *g, int i, int nan_rule, UtilDiag *d)
{
    const IrNode *n = &g->nodes[i];
    int y = n->out[0], zp = n->n_in > 2 ? n->in[2] : -1;
    IrDType yt = g->tensors[y].v.dtype;
    const IrArray *sv = pass_value(g, n->in[1]);
    if (g->tensors[n->in[0]].v.dtype != IR_DT_F32 || !is_int8(yt) || !sv || sv->dtype != IR_DT_F32 ||
        ir_array_numel(sv) != 1 || !(isfinite(*(const float *)sv->data) && *(const float *)sv->data > 0) ||
        (zp >= 0 && (!pass_value(g, zp) || numel(g, zp) != 1)) || ir_attr_int(n, IR_A_block_size) != 0 ||
        ir_attr_int(n, IR_A_precision) != 0)
        return 0;
    int first_new = g->n_nodes;
    const char *h = g->tensors[y].name;
    UtilLoc loc = n->loc;
    int s = pass_const_scalar(g, h, IR_DT_F32, *(const float *)sv->data);
    int v = s < 0 ? -1 : emit(g, IR_OP_Div, h, 2, (int[]){ n->in[0], s }, IR_A_INVALID, 0, loc, d);
    if (nan_rule && v >= 0) {   /* QuantizeLinear's NaN -> the type's minimum: NaN as -inf before the clip */
        int isn = emit(g, IR_OP_IsNaN, h, 1, &v, IR_A_INVALID, 0, loc, d);
        int ninf = isn < 0 ? -1 : pass_const_scalar(g, h, IR_DT_F32, -INFINITY);
        v = ninf < 0 ? -1 : emit(g, IR_OP_Where, h, 3, (int[]){ isn, ninf, v }, IR_A_INVALID, 0, loc, d);
    }
    int q = saturate(g, v, zp_value(g, zp, 0), -INFINITY, yt, h, loc, d);
    return q < 0 ? -1 : pass_commit(g, y, q, first_new, &i, 1);
}

static int dq_elementwise(IrGraph *g, int i, UtilDiag *d)
{
    Deq x;
    int y = g->nodes[i].out[0];
    if (!dequant(g, y, 0, &x) || !per_tensor8(g, &x))
        return 0;
    int first_new = g->n_nodes;
    const char *h = g->tensors[y].name;
    UtilLoc loc = g->nodes[i].loc;
    double z = zp_value(g, x.zp, 0);
    int f = as_float(g, x.q, 0, loc, d);
    if (f >= 0 && z != 0)
        f = emit(g, IR_OP_Sub, h, 2, (int[]){ f, pass_const_scalar(g, h, IR_DT_F32, z) }, IR_A_INVALID, 0, loc, d);
    int s = f < 0 ? -1 : pass_const_scalar(g, h, IR_DT_F32, *(const float *)pass_value(g, x.scale)->data);
    int v = s < 0 ? -1 : emit(g, IR_OP_Mul, h, 2, (int[]){ f, s }, IR_A_INVALID, 0, loc, d);
    return v < 0 ? -1 : pass_commit(g, y, v, first_new, &i, 1);
}

/* Per tensor: may a NaN reach it from a DequantizeLinear of an infinite or
 * NaN scale ((q - zp) * inf is NaN at q = zp), through the float nodes after
 * it (a QuantizeLinear ends the way: its integers are never NaN)?  Nodes
 * 0..n0-1, in order; malloc'd, NULL out of memory. */
static unsigned char *nan_reach(const IrGraph *g, int n0)
{
    unsigned char *r = calloc((size_t)g->n_tensors + 1, 1);
    for (int i = 0; r && i < n0; i++) {
        const IrNode *n = &g->nodes[i];
        if (n->dead || n->op == IR_OP_QuantizeLinear)
            continue;
        int any = 0;
        const IrArray *sv = n->op == IR_OP_DequantizeLinear && n->n_in > 1 ? pass_value(g, n->in[1]) : NULL;
        for (int64_t k = 0; sv && k < ir_array_numel(sv); k++)
            any |= !isfinite(ir_load_f64(sv->dtype, sv->data, k));
        for (int k = 0; k < n->n_in; k++)
            any |= n->in[k] >= 0 && r[n->in[k]];
        for (int k = 0; any && k < n->n_out; k++)
            if (n->out[k] >= 0 && ir_dtype_is_float(g->tensors[n->out[k]].v.dtype))
                r[n->out[k]] = 1;
    }
    return r;
}

/* keep8: the 8-bit tensors stay in memory (--precision int8, firmware):
 * every product becomes QLinearConv / QLinearMatMul on its 8-bit operands
 * (no exact float32 form, whose weights and inputs are float32), and the
 * other Q / DQ stay operators. */
static int qdq(IrGraph *g, int mode, UtilDiag *d)
{
    int changes = 0, n0 = g->n_nodes, keep8 = mode == QDQ_INT8;
    for (int i = 0; i < n0; i++) {
        if (g->nodes[i].dead)
            continue;
        int r = 0;
        switch (g->nodes[i].op) {
        case IR_OP_Conv: r = conv_at(g, i, mode, d); break;
        case IR_OP_MatMul: r = matmul_at(g, i, mode, d); break;
        case IR_OP_Gemm: r = gemm_at(g, i, mode, d); break;
        case IR_OP_Add: r = add_at(g, i, keep8, d); break;
        case IR_OP_MaxPool: r = keep8 || mode == QDQ_DOT ? pool_at(g, i, d) : 0; break;
        case IR_OP_AveragePool:
        case IR_OP_GlobalAveragePool:
        case IR_OP_Flatten:
        case IR_OP_Reshape: r = keep8 ? pool_at(g, i, d) : 0; break;
        default: break;
        }
        if (r < 0)
            return -1;
        changes += r;
    }
    if (keep8)
        return pass_finish(g, changes, d);
    /* then the rest, in order: a Q before the DQs that read it.  The NaNs
     * an infinite or NaN scale makes (-inf / inf, 0 * inf) need
     * QuantizeLinear's own NaN rule (NaN to the type's minimum), which Clip
     * and Cast do not have: a Q of such a scale stays an operator, and a Q
     * such a NaN may reach (nan_reach) spells the rule out */
    unsigned char *nan = nan_reach(g, n0);
    if (!nan)
        return util_error(d, util_loc_file(g->file), "out of memory");
    for (int i = 0; i < n0; i++) {
        if (g->nodes[i].dead)
            continue;
        int r = g->nodes[i].op == IR_OP_QuantizeLinear ? q_elementwise(g, i, nan[g->nodes[i].in[0]], d)
              : g->nodes[i].op == IR_OP_DequantizeLinear && !pass_value(g, g->nodes[i].in[0]) ? dq_elementwise(g, i, d)
              : 0;
        if (r < 0) {
            free(nan);
            return -1;
        }
        changes += r;
    }
    free(nan);
    return pass_finish(g, changes, d);
}

int pass_qdq(IrGraph *g, UtilDiag *d) { return qdq(g, QDQ_FLOAT, d); }
int pass_qdq_int8(IrGraph *g, UtilDiag *d) { return qdq(g, QDQ_INT8, d); }
int pass_qdq_dot(IrGraph *g, UtilDiag *d) { return qdq(g, QDQ_DOT, d); }
