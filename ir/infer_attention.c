/* ir/infer_attention.c — shape and dtype rules of the Attention (opset 23/24) and RotaryEmbedding
 * (ONNX opset 21 semantics; ir/infer_impl.h). */
#include "ir/infer_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int need_rank(IrGraph *g, IrNode *n, int i, int lo, int hi, UtilDiag *d)
{
    const IrTensor *t = ir_in(g, n, i);
    if (t && (t->v.shape.rank < lo || t->v.shape.rank > hi)) {
        if (lo == hi)
            return ir_node_error(g, n, d, "input '%s' must have rank %d, not %d", t->name, lo, t->v.shape.rank);
        return ir_node_error(g, n, d, "input '%s' must have rank %d to %d, not %d", t->name, lo, hi,
                             t->v.shape.rank);
    }
    return 0;
}

static IrShape mkshape(int rank, const int64_t *dims)
{
    IrShape s = { .rank = rank };
    memcpy(s.dims, dims, (size_t)rank * sizeof(int64_t));
    return s;
}

/* ---------------------------------------------------------------- Attention */

int ir_infer_attention(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *q = ir_in(g, n, 0), *k = ir_in(g, n, 1), *v = ir_in(g, n, 2);
    const IrTensor *mask = ir_in(g, n, 3), *pk = ir_in(g, n, 4), *pv = ir_in(g, n, 5), *nonpad = ir_in(g, n, 6);
    int r = q->v.shape.rank;
    if (ir_infer_need_float(g, n, 0, d) || ir_infer_same_dtype(g, n, 0, 1, d) || ir_infer_same_dtype(g, n, 0, 2, d) ||
        need_rank(g, n, 0, 3, 4, d) || need_rank(g, n, 1, r, r, d) || need_rank(g, n, 2, r, r, d))
        return -1;
    const int64_t *qd = q->v.shape.dims, *kd = k->v.shape.dims, *vd = v->v.shape.dims;
    int64_t b = qd[0], qh, kvh, qseq, kvseq, hs, vhs;
    if (kd[0] != b || vd[0] != b)
        return ir_node_error(g, n, d, "Q, K and V must have the same batch size");
    if (r == 3) {
        if (!ir_has_attr(n, IR_A_q_num_heads) || !ir_has_attr(n, IR_A_kv_num_heads))
            return ir_node_error(g, n, d, "3-D inputs need the q_num_heads and kv_num_heads attributes");
        qh = ir_attr_int(n, IR_A_q_num_heads);
        kvh = ir_attr_int(n, IR_A_kv_num_heads);
        if (qh <= 0 || kvh <= 0)
            return ir_node_error(g, n, d, "q_num_heads and kv_num_heads must be positive");
        if (qd[2] % qh || kd[2] % kvh || vd[2] % kvh)
            return ir_node_error(g, n, d, "hidden sizes %lld (Q), %lld (K), %lld (V) are not multiples of "
                                 "q_num_heads %lld / kv_num_heads %lld", (long long)qd[2], (long long)kd[2],
                                 (long long)vd[2], (long long)qh, (long long)kvh);
        qseq = qd[1];
        kvseq = kd[1];
        hs = qd[2] / qh;
        if (kd[2] / kvh != hs)
            return ir_node_error(g, n, d, "Q and K head sizes differ (%lld vs %lld)", (long long)hs,
                                 (long long)(kd[2] / kvh));
        vhs = vd[2] / kvh;
        if (vd[1] != kvseq)
            return ir_node_error(g, n, d, "K and V must have the same sequence length");
    } else {
        qh = qd[1];
        kvh = kd[1];
        qseq = qd[2];
        kvseq = kd[2];
        hs = qd[3];
        vhs = vd[3];
        if (vd[1] != kvh || vd[2] != kvseq)
            return ir_node_error(g, n, d, "K and V must have the same number of heads and sequence length");
        if (kd[3] != hs)
            return ir_node_error(g, n, d, "Q and K head sizes differ (%lld vs %lld)", (long long)hs,
                                 (long long)kd[3]);
        if ((ir_has_attr(n, IR_A_q_num_heads) && ir_attr_int(n, IR_A_q_num_heads) != qh) ||
            (ir_has_attr(n, IR_A_kv_num_heads) && ir_attr_int(n, IR_A_kv_num_heads) != kvh))
            return ir_node_error(g, n, d, "q_num_heads / kv_num_heads disagree with the 4-D input shapes");
    }
    if (kvh <= 0 || qh % kvh)
        return ir_node_error(g, n, d, "q_num_heads %lld is not a multiple of kv_num_heads %lld", (long long)qh,
                             (long long)kvh);
    int64_t past = 0;
    if ((pk != NULL) != (pv != NULL))
        return ir_node_error(g, n, d, "past_key and past_value must be given together");
    if (pk) {
        if (ir_infer_same_dtype(g, n, 0, 4, d) || ir_infer_same_dtype(g, n, 0, 5, d) || need_rank(g, n, 4, 4, 4, d) ||
            need_rank(g, n, 5, 4, 4, d))
            return -1;
        const int64_t *pkd = pk->v.shape.dims, *pvd = pv->v.shape.dims;
        if (pkd[0] != b || pkd[1] != kvh || pkd[3] != hs || pvd[0] != b || pvd[1] != kvh || pvd[3] != vhs ||
            pvd[2] != pkd[2])
            return ir_node_error(g, n, d, "past_key / past_value must be [batch, kv_num_heads, past, head_size]");
        past = pkd[2];
    }
    int64_t total = past + kvseq;
    if (mask) {
        if (mask->v.dtype != IR_DT_BOOL && ir_infer_same_dtype(g, n, 0, 3, d))
            return -1;
        const IrShape *ms = &mask->v.shape;
        int64_t want[4] = { b, qh, qseq, total };
        if (ms->rank < 2 || ms->rank > 4 || ms->dims[ms->rank - 1] > total)
            return ir_node_error(g, n, d, "attn_mask must have rank 2 to 4 and at most %lld columns",
                                 (long long)total);
        for (int i = 0; i < ms->rank - 1; i++) {
            int64_t w = want[4 - ms->rank + i];
            if (ms->dims[i] != 1 && ms->dims[i] != w)
                return ir_node_error(g, n, d, "attn_mask dim %d (%lld) does not broadcast to %lld", i,
                                     (long long)ms->dims[i], (long long)w);
        }
    }
    if (nonpad && (ir_infer_need_int(g, n, 6, "nonpad_kv_seqlen", d) || ir_infer_need_vec(g, n, 6, "nonpad_kv_seqlen", b, d)))
        return -1;
    int64_t mode = ir_attr_int(n, IR_A_qk_matmul_output_mode);
    if (mode < 0 || mode > 3)
        return ir_node_error(g, n, d, "qk_matmul_output_mode must be 0 to 3, not %lld", (long long)mode);
    if (ir_has_attr(n, IR_A_softmax_precision)) {
        int64_t sp = ir_attr_int(n, IR_A_softmax_precision);
        IrDType dt = sp > 0 && sp < 1000 ? ir_dtype_from_onnx((int)sp) : IR_DT_UNDEF;
        if (!ir_dtype_is_float(dt))
            return ir_node_error(g, n, d, "softmax_precision %lld is not a floating-point type", (long long)sp);
    }
    IrDType dt = q->v.dtype;
    IrShape y = r == 3 ? mkshape(3, (int64_t[]){ b, qseq, qh * vhs }) : mkshape(4, (int64_t[]){ b, qh, qseq, vhs });
    IrShape pks = mkshape(4, (int64_t[]){ b, kvh, total, hs });
    IrShape pvs = mkshape(4, (int64_t[]){ b, kvh, total, vhs });
    IrShape qks = mkshape(4, (int64_t[]){ b, qh, qseq, total });
    ir_infer_set(g, n, 0, dt, &y);
    ir_infer_set(g, n, 1, dt, &pks);
    ir_infer_set(g, n, 2, dt, &pvs);
    ir_infer_set(g, n, 3, dt, &qks);
    return 0;
}

int ir_infer_rotary(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = ir_in(g, n, 0), *cc = ir_in(g, n, 1), *sc = ir_in(g, n, 2), *pos = ir_in(g, n, 3);
    if (ir_infer_need_float(g, n, 0, d) || ir_infer_same_dtype(g, n, 0, 1, d) || ir_infer_same_dtype(g, n, 0, 2, d) ||
        need_rank(g, n, 0, 3, 4, d))
        return -1;
    const IrShape *s = &x->v.shape;
    int64_t b = s->dims[0], seq, hs;
    if (s->rank == 4) {
        seq = s->dims[2];
        hs = s->dims[3];
    } else {
        int64_t nh = ir_attr_int(n, IR_A_num_heads);
        if (!ir_has_attr(n, IR_A_num_heads) || nh <= 0)
            return ir_node_error(g, n, d, "a 3-D input needs a positive num_heads attribute");
        if (s->dims[2] % nh)
            return ir_node_error(g, n, d, "hidden size %lld is not a multiple of num_heads %lld",
                                 (long long)s->dims[2], (long long)nh);
        seq = s->dims[1];
        hs = s->dims[2] / nh;
    }
    int64_t rd = ir_attr_int(n, IR_A_rotary_embedding_dim);
    if (rd == 0)
        rd = hs;
    if (rd < 0 || rd > hs || rd % 2)
        return ir_node_error(g, n, d, "rotary_embedding_dim %lld must be even and at most the head size %lld",
                             (long long)rd, (long long)hs);
    if (!ir_shape_equal(&cc->v.shape, &sc->v.shape))
        return ir_node_error(g, n, d, "cos_cache and sin_cache must have the same shape");
    const IrShape *cs = &cc->v.shape;
    if (pos) {
        if (ir_infer_need_int(g, n, 3, "position_ids", d))
            return -1;
        if (pos->v.shape.rank != 2 || pos->v.shape.dims[0] != b || pos->v.shape.dims[1] != seq)
            return ir_node_error(g, n, d, "position_ids must be [batch %lld, sequence %lld]", (long long)b,
                                 (long long)seq);
        if (cs->rank != 2 || cs->dims[1] != rd / 2)
            return ir_node_error(g, n, d, "with position_ids, cos_cache must be [max_position, %lld]",
                                 (long long)(rd / 2));
    } else if (cs->rank != 3 || cs->dims[0] != b || cs->dims[1] != seq || cs->dims[2] != rd / 2) {
        return ir_node_error(g, n, d, "without position_ids, cos_cache must be [%lld, %lld, %lld]", (long long)b,
                             (long long)seq, (long long)(rd / 2));
    }
    ir_infer_set(g, n, 0, x->v.dtype, s);
    return 0;
}
