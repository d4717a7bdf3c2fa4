/* interp/k_attention.c — reference kernels of Attention (opset 23/24: 3-D and
 * 4-D forms, grouped-query heads, KV cache, boolean or additive masks, causal
 * masking, nonpad_kv_seqlen, softcap, the four qk_matmul_output modes) and
 * RotaryEmbedding.  Everything is computed in double, which is at least the
 * precision any softmax_precision asks for.  A query row whose keys are all
 * masked gets NaN probabilities, as the ONNX reference (exp(-inf - -inf)). */
#include "interp/kernels.h"

#include <math.h>
#include <stdlib.h>

static double ld(const IrArray *a, int64_t i) { return ir_load_f64(a->dtype, a->data, i); }

/* Geometry of one Attention node, in the 4-D view [batch, heads, seq, head]. */
typedef struct Att {
    int r3;                          /* inputs are 3-D [batch, seq, heads * head] */
    int64_t b, qh, kvh, qseq, kvseq, past, total, hs, vhs;
} Att;

/* Flat index of (b, h, s, e) in a tensor of `heads` heads, `seq` positions and
 * head size `hsz`, 3-D or 4-D. */
static int64_t at(int r3, int64_t heads, int64_t seq, int64_t hsz, int64_t b, int64_t h, int64_t s, int64_t e)
{
    return r3 ? (b * seq + s) * heads * hsz + h * hsz + e : ((b * heads + h) * seq + s) * hsz + e;
}

/* Element (b, kv head h, position t, e) of the key (v = 0) or value (v = 1)
 * cache after appending the new keys/values to past. */
static double cache(const Att *a, const IrArray *past, const IrArray *cur, int v, int64_t b, int64_t h, int64_t t,
                    int64_t e)
{
    int64_t hsz = v ? a->vhs : a->hs;
    if (t < a->past)
        return ld(past, ((b * a->kvh + h) * a->past + t) * hsz + e);
    return ld(cur, at(a->r3, a->kvh, a->kvseq, hsz, b, h, t - a->past, e));
}

/* Additive bias of score (b, h, i, j): attn_mask (bool: false = -inf; float:
 * its value; columns past its end: -inf), causal and nonpad_kv_seqlen masks. */
static double bias(const Att *a, const IrNode *n, const IrArray *mask, const IrArray *nonpad, int64_t b, int64_t h,
                   int64_t i, int64_t j)
{
    double v = 0.0;
    if (mask) {
        const IrShape *ms = &mask->shape;
        if (j >= ms->dims[ms->rank - 1]) {
            v = -INFINITY;
        } else {
            int64_t idx[4] = { b, h, i, j };
            int64_t off = interp_bcast_index(ms, idx, 4);
            if (mask->dtype == IR_DT_BOOL)
                v = ((const uint8_t *)mask->data)[off] ? 0.0 : -INFINITY;
            else
                v = ld(mask, off);
        }
    }
    if (ir_attr_int(n, IR_A_is_causal) && j > i + a->past)
        v += -INFINITY;
    if (nonpad && j >= ir_load_i64(nonpad->dtype, nonpad->data, b))
        v += -INFINITY;
    return v;
}

int interp_k_attention(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out,
                       UtilDiag *d)
{
    const IrArray *q = in[0], *k = in[1], *v = in[2];
    const IrArray *mask = n->n_in > 3 ? in[3] : NULL, *pk = n->n_in > 4 ? in[4] : NULL;
    const IrArray *pv = n->n_in > 5 ? in[5] : NULL, *nonpad = n->n_in > 6 ? in[6] : NULL;
    IrArray *qk = n->n_out > 3 ? out[3] : NULL;
    Att a = { .r3 = q->shape.rank == 3, .b = q->shape.dims[0] };
    if (a.r3) {
        a.qh = ir_attr_int(n, IR_A_q_num_heads);
        a.kvh = ir_attr_int(n, IR_A_kv_num_heads);
        a.qseq = q->shape.dims[1];
        a.kvseq = k->shape.dims[1];
        a.hs = q->shape.dims[2] / a.qh;
        a.vhs = v->shape.dims[2] / a.kvh;
    } else {
        a.qh = q->shape.dims[1];
        a.kvh = k->shape.dims[1];
        a.qseq = q->shape.dims[2];
        a.kvseq = k->shape.dims[2];
        a.hs = q->shape.dims[3];
        a.vhs = v->shape.dims[3];
    }
    a.past = pk ? pk->shape.dims[2] : 0;
    a.total = a.past + a.kvseq;
    double scale = ir_has_attr(n, IR_A_scale) ? ir_attr_float(n, IR_A_scale) : 1.0 / sqrt((double)a.hs);
    double softcap = ir_attr_float(n, IR_A_softcap);
    int64_t mode = ir_attr_int(n, IR_A_qk_matmul_output_mode), reps = a.qh / a.kvh;

    for (int c = 1; c <= 2; c++)                       /* present_key, present_value */
        if (n->n_out > c && out[c])
            for (int64_t b = 0; b < a.b; b++)
                for (int64_t h = 0; h < a.kvh; h++)
                    for (int64_t t = 0; t < a.total; t++)
                        for (int64_t e = 0, hsz = c == 1 ? a.hs : a.vhs; e < hsz; e++)
                            ir_store_f64(out[c]->dtype, out[c]->data, ((b * a.kvh + h) * a.total + t) * hsz + e,
                                         cache(&a, c == 1 ? pk : pv, c == 1 ? k : v, c - 1, b, h, t, e));

    double *p = malloc(((size_t)a.total + 1) * sizeof *p);
    if (!p)
        return ir_node_error(g, n, d, "out of memory");
    for (int64_t b = 0; b < a.b; b++)
        for (int64_t h = 0; h < a.qh; h++)
            for (int64_t i = 0; i < a.qseq; i++) {
                int64_t kh = h / reps, qko = ((b * a.qh + h) * a.qseq + i) * a.total;
                double mx = -INFINITY, sum = 0.0;
                for (int64_t j = 0; j < a.total; j++) {
                    double dot = 0.0;
                    for (int64_t e = 0; e < a.hs; e++)
                        dot += ld(q, at(a.r3, a.qh, a.qseq, a.hs, b, h, i, e)) * cache(&a, pk, k, 0, b, kh, j, e);
                    double s = dot * scale;
                    if (qk && mode == 0)
                        ir_store_f64(qk->dtype, qk->data, qko + j, s);
                    s += bias(&a, n, mask, nonpad, b, h, i, j);
                    if (qk && mode == 1)
                        ir_store_f64(qk->dtype, qk->data, qko + j, s);
                    if (softcap > 0.0)
                        s = softcap * tanh(s / softcap);
                    if (qk && mode == 2)
                        ir_store_f64(qk->dtype, qk->data, qko + j, s);
                    p[j] = s;
                    if (s > mx)
                        mx = s;
                }
                for (int64_t j = 0; j < a.total; j++) {
                    p[j] = isinf(mx) && mx < 0 ? NAN : exp(p[j] - mx);
                    sum += p[j];
                }
                for (int64_t j = 0; j < a.total; j++) {
                    p[j] /= sum;
                    if (qk && mode == 3)
                        ir_store_f64(qk->dtype, qk->data, qko + j, p[j]);
                }
                for (int64_t e = 0; e < a.vhs; e++) {
                    double acc = 0.0;
                    for (int64_t j = 0; j < a.total; j++)
                        acc += p[j] * cache(&a, pv, v, 1, b, kh, j, e);
                    ir_store_f64(out[0]->dtype, out[0]->data, at(a.r3, a.qh, a.qseq, a.vhs, b, h, i, e), acc);
                }
            }
    free(p);
    return 0;
}

int interp_k_rotary(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out, UtilDiag *d)
{
    const IrArray *x = in[0], *cc = in[1], *sc = in[2], *pos = n->n_in > 3 ? in[3] : NULL;
    IrArray *y = out[0];
    int r3 = x->shape.rank == 3;
    int64_t b = x->shape.dims[0], nh, seq, hs;
    if (r3) {
        nh = ir_attr_int(n, IR_A_num_heads);
        seq = x->shape.dims[1];
        hs = x->shape.dims[2] / nh;
    } else {
        nh = x->shape.dims[1];
        seq = x->shape.dims[2];
        hs = x->shape.dims[3];
    }
    int64_t rd = ir_attr_int(n, IR_A_rotary_embedding_dim);
    if (rd == 0)
        rd = hs;
    int64_t half = rd / 2, inter = ir_attr_int(n, IR_A_interleaved);
    for (int64_t bi = 0; bi < b; bi++)
        for (int64_t s = 0; s < seq; s++) {
            int64_t row = bi * seq + s;
            if (pos) {
                row = ir_load_i64(pos->dtype, pos->data, bi * seq + s);
                if (row < 0 || row >= cc->shape.dims[0])
                    return ir_node_error(g, n, d, "position id %lld is outside the cos/sin caches (%lld rows)",
                                         (long long)row, (long long)cc->shape.dims[0]);
            }
            for (int64_t h = 0; h < nh; h++) {
                int64_t base = at(r3, nh, seq, hs, bi, h, s, 0);
                for (int64_t e = rd; e < hs; e++)
                    ir_store_f64(y->dtype, y->data, base + e, ld(x, base + e));
                for (int64_t e = 0; e < half; e++) {
                    int64_t i1 = inter ? 2 * e : e, i2 = inter ? 2 * e + 1 : e + half;
                    double c = ld(cc, row * half + e), sn = ld(sc, row * half + e);
                    double x1 = ld(x, base + i1), x2 = ld(x, base + i2);
                    ir_store_f64(y->dtype, y->data, base + i1, c * x1 - sn * x2);
                    ir_store_f64(y->dtype, y->data, base + i2, sn * x1 + c * x2);
                }
            }
        }
    return 0;
}
