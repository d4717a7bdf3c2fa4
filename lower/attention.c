/* lower/attention.c — compute template of Attention (opset 23/24),
 * following the reference interpreter (interp/k_attention.c): 3-D and 4-D
 * forms, grouped-query heads, KV cache (present_key / present_value), bool or
 * additive masks (broadcast; columns past the mask's end masked), causal
 * masking, nonpad_kv_seqlen, softcap and the four qk_matmul_output modes.
 * One kernel: the present caches, then per (batch, head, query row) the
 * scores into a kernel-local row buffer, a softmax over it (a fully masked
 * row gives NaN, as ONNX's reference) and the product with the values.
 * Computes in float64. */
#include "lower/lower_impl.h"

#include <math.h>

typedef struct Att {
    int q, k, v, mask, pk, pv, nonpad;       /* input buffers (-1: absent) */
    int y, ok, ov, oqk;                      /* output buffers (-1: absent) */
    int r3;
    int64_t b, qh, kvh, qseq, kvseq, past, total, hs, vhs;
    IrDType t;
} Att;

#define I(v) low_i(L, (v))
#define V(v) low_v(L, (v))
#define ADD(a, b) low_bin(L, LOOP_ADD, a, b)
#define MUL(a, b) low_bin(L, LOOP_MUL, a, b)

/* Flat index of (b, h, s, e) in a 3-D or 4-D tensor of `heads` heads. */
static LoopExpr *at(Low *L, int r3, int64_t heads, int64_t seq, int64_t hsz, LoopExpr *b, LoopExpr *h, LoopExpr *s,
                    LoopExpr *e)
{
    if (r3)
        return ADD(ADD(MUL(ADD(MUL(b, I(seq)), s), I(heads * hsz)), MUL(h, I(hsz))), e);
    return ADD(MUL(ADD(MUL(ADD(MUL(b, I(heads)), h), I(seq)), s), I(hsz)), e);
}

/* Element (b, kv head h, position t, e) of the key (v = 0) or value cache
 * after appending the new keys / values to the past ones; both arms load at
 * clamped positions. */
static LoopExpr *cache(Low *L, const Att *a, int v, int b, int h, int t, LoopExpr *e)
{
    int64_t hsz = v ? a->vhs : a->hs;
    int cur = v ? a->v : a->k, past = v ? a->pv : a->pk;
    LoopExpr *tn = a->past ? low_bin(L, LOOP_MAX, low_bin(L, LOOP_SUB, V(t), I(a->past)), I(0)) : V(t);
    LoopExpr *now = low_load(L, cur, at(L, a->r3, a->kvh, a->kvseq, hsz, V(b), V(h), tn, e), a->t);
    if (!a->past || past < 0)
        return now;
    LoopExpr *tp = low_bin(L, LOOP_MIN, V(t), I(a->past - 1));
    LoopExpr *old = low_load(L, past, ADD(MUL(ADD(MUL(ADD(MUL(V(b), I(a->kvh)), V(h)), I(a->past)), tp), I(hsz)),
                                          loop_expr_copy(L->p, e)), a->t);
    return loop_select(L->p, low_bin(L, LOOP_LT, V(t), I(a->past)), old, now);
}

/* Additive bias of score (b, h, i, j): mask, causal, nonpad_kv_seqlen. */
static LoopExpr *bias(Low *L, const Att *a, int b, int h, int i, int j)
{
    IrDType t = a->t;
    LoopExpr *v = low_const(L, t, 0);
    if (a->mask >= 0) {
        const LoopBuf *mb = low_buf(L, a->mask);
        int r = mb->shape.rank;
        int64_t last = mb->shape.dims[r - 1];
        int vars[4] = { b, h, i, j };
        LoopExpr *idx[IR_MAX_RANK];
        for (int d = 0; d < r; d++) {
            int var = vars[4 - r + d];
            idx[d] = mb->shape.dims[d] == 1 ? I(0) : d == r - 1 ? low_bin(L, LOOP_MIN, V(var), I(last - 1)) : V(var);
        }
        LoopExpr *m = low_load(L, a->mask, low_index(L, a->mask, idx), mb->dtype);
        LoopExpr *mv = mb->dtype == IR_DT_BOOL ? loop_select(L->p, m, low_const(L, t, 0), low_const(L, t, -INFINITY))
                                               : low_convert(L, m, t);
        v = loop_select(L->p, low_bin(L, LOOP_LT, V(j), I(last)), mv, low_const(L, t, -INFINITY));
    }
    if (ir_attr_int(L->n, IR_A_is_causal))
        v = ADD(v, loop_select(L->p, low_bin(L, LOOP_LT, ADD(V(i), I(a->past)), V(j)), low_const(L, t, -INFINITY),
                               low_const(L, t, 0)));
    if (a->nonpad >= 0)
        v = ADD(v, loop_select(L->p, low_bin(L, LOOP_LE, low_load(L, a->nonpad, V(b), IR_DT_I64), V(j)),
                               low_const(L, t, -INFINITY), low_const(L, t, 0)));
    return v;
}

/* present_key (c = 1) / present_value (c = 2): the whole cache. */
static int present(Low *L, const Att *a, LoopStmt *k, int c)
{
    int out = c == 1 ? a->ok : a->ov;
    if (out < 0)
        return 0;
    int vars[4];
    if (low_vars(L, 4, "p", vars))
        return -1;
    int64_t hsz = c == 1 ? a->hs : a->vhs, ext[4] = { a->b, a->kvh, a->total, hsz };
    LoopExpr *oi = ADD(MUL(ADD(MUL(ADD(MUL(V(vars[0]), I(a->kvh)), V(vars[1])), I(a->total)), V(vars[2])), I(hsz)),
                       V(vars[3]));
    LoopStmt *st = low_store(L, out, oi, cache(L, a, c - 1, vars[0], vars[1], vars[2], V(vars[3])));
    return low_add(L, k, low_nest(L, 4, vars, ext, st));
}

int low_attention(Low *L)
{
    const IrNode *n = L->n;
    Att a = { .q = low_in(L, 0), .k = low_in(L, 1), .v = low_in(L, 2), .mask = low_in(L, 3), .pk = low_in(L, 4),
              .pv = low_in(L, 5), .nonpad = low_in(L, 6), .y = low_out(L, 0), .ok = low_out(L, 1),
              .ov = low_out(L, 2), .oqk = low_out(L, 3), .t = IR_DT_F64 };
    const LoopBuf *qb = low_buf(L, a.q), *kb = low_buf(L, a.k), *vb = low_buf(L, a.v);
    a.r3 = qb->shape.rank == 3;
    a.b = qb->shape.dims[0];
    if (a.r3) {
        a.qh = ir_attr_int(n, IR_A_q_num_heads);
        a.kvh = ir_attr_int(n, IR_A_kv_num_heads);
        a.qseq = qb->shape.dims[1];
        a.kvseq = kb->shape.dims[1];
        a.hs = qb->shape.dims[2] / a.qh;
        a.vhs = vb->shape.dims[2] / a.kvh;
    } else {
        a.qh = qb->shape.dims[1];
        a.kvh = kb->shape.dims[1];
        a.qseq = qb->shape.dims[2];
        a.kvseq = kb->shape.dims[2];
        a.hs = qb->shape.dims[3];
        a.vhs = vb->shape.dims[3];
    }
    a.past = a.pk >= 0 ? low_buf(L, a.pk)->shape.dims[2] : 0;
    a.total = a.past + a.kvseq;
    IrDType t = a.t;
    double scale = ir_has_attr(n, IR_A_scale) ? ir_attr_float(n, IR_A_scale) : 1.0 / sqrt((double)a.hs);
    double softcap = ir_attr_float(n, IR_A_softcap);
    int64_t mode = ir_attr_int(n, IR_A_qk_matmul_output_mode), reps = a.qh / (a.kvh ? a.kvh : 1);
    IrShape ps = { .rank = 1, .dims = { a.total } };
    int p = loop_add_buf(L->p, "att_p", t, &ps, LOOP_ST_LOCAL);
    LoopStmt *k = loop_block(L->p);
    if (p < 0 || !k || present(L, &a, k, 1) || present(L, &a, k, 2))
        return low_oom(L);
    int b, h, i, j1, j2, j3, e1, e2, j4;
    if (low_vars(L, 1, "b", &b) || low_vars(L, 1, "h", &h) || low_vars(L, 1, "i", &i) || low_vars(L, 1, "j", &j1) ||
        low_vars(L, 1, "j", &j2) || low_vars(L, 1, "j", &j3) || low_vars(L, 1, "e", &e1) || low_vars(L, 1, "e", &e2) ||
        low_vars(L, 1, "j", &j4))
        return low_oom(L);
    LoopStmt *row = loop_block(L->p), *s1 = loop_block(L->p), *s2 = loop_block(L->p), *s3 = loop_block(L->p);
    int kh = low_let(L, row, "kh", low_bin(L, LOOP_DIV, V(h), I(reps ? reps : 1)), 0);
    int mx = low_let(L, row, "mx", low_const(L, t, -INFINITY), 1);
    if (kh < 0 || mx < 0)
        return low_oom(L);
    /* scores: dot(q row, key j) * scale (+ bias, softcap), qk output as asked */
    int dot = low_let(L, s1, "dot", low_const(L, t, 0), 1);
    if (dot < 0)
        return low_oom(L);
    LoopExpr *qv = low_load(L, a.q, at(L, a.r3, a.qh, a.qseq, a.hs, V(b), V(h), V(i), V(e1)), t);
    LoopStmt *dstep = loop_assign(L->p, dot, ADD(V(dot), MUL(qv, cache(L, &a, 0, b, kh, j1, V(e1)))));
    if (low_add(L, s1, loop_for(L->p, e1, I(a.hs), LOOP_SERIAL, dstep)))
        return low_oom(L);
    LoopExpr *qko = ADD(MUL(ADD(MUL(ADD(MUL(V(b), I(a.qh)), V(h)), I(a.qseq)), V(i)), I(a.total)), V(j1));
    int sv = low_let(L, s1, "s", MUL(V(dot), low_const(L, t, scale)), 0);
    if (sv < 0 || (a.oqk >= 0 && mode == 0 && low_add(L, s1, low_store(L, a.oqk, loop_expr_copy(L->p, qko), V(sv)))))
        return low_oom(L);
    int sb = low_let(L, s1, "sb", ADD(V(sv), bias(L, &a, b, h, i, j1)), 0);
    if (sb < 0 || (a.oqk >= 0 && mode == 1 && low_add(L, s1, low_store(L, a.oqk, loop_expr_copy(L->p, qko), V(sb)))))
        return low_oom(L);
    LoopExpr *sc = V(sb);
    if (softcap > 0)
        sc = MUL(low_const(L, t, softcap),
                 loop_call(L->p, LOOP_I_tanh, 1, (LoopExpr *[]){ low_bin(L, LOOP_DIV, V(sb), low_const(L, t, softcap)) }));
    int sf = low_let(L, s1, "sf", sc, 0);
    if (sf < 0 || (a.oqk >= 0 && mode == 2 && low_add(L, s1, low_store(L, a.oqk, loop_expr_copy(L->p, qko), V(sf)))) ||
        low_add(L, s1, low_store(L, p, V(j1), V(sf))) ||
        low_add(L, s1, loop_assign(L->p, mx, loop_select(L->p, low_bin(L, LOOP_LT, V(mx), V(sf)), V(sf), V(mx)))) ||
        low_add(L, row, loop_for(L->p, j1, I(a.total), LOOP_SERIAL, s1)))
        return low_oom(L);
    /* softmax: exp(s - max), NaN for a fully masked row */
    int sum = low_let(L, row, "sum", low_const(L, t, 0), 1);
    int dead = low_let(L, row, "dead", low_bin(L, LOOP_EQ, V(mx), low_const(L, t, -INFINITY)), 0);
    if (sum < 0 || dead < 0)
        return low_oom(L);
    LoopExpr *ex = loop_call(L->p, LOOP_I_exp, 1, (LoopExpr *[]){ low_bin(L, LOOP_SUB, low_load(L, p, V(j2), t), V(mx)) });
    ex = loop_select(L->p, V(dead), low_const(L, t, NAN), ex);
    int pe = low_let(L, s2, "pe", ex, 0);
    if (pe < 0 || low_add(L, s2, low_store(L, p, V(j2), V(pe))) ||
        low_add(L, s2, loop_assign(L->p, sum, ADD(V(sum), V(pe)))) ||
        low_add(L, row, loop_for(L->p, j2, I(a.total), LOOP_SERIAL, s2)))
        return low_oom(L);
    LoopExpr *pn = low_bin(L, LOOP_DIV, low_load(L, p, V(j3), t), V(sum));
    int pnv = low_let(L, s3, "pn", pn, 0);
    LoopExpr *qko3 = ADD(MUL(ADD(MUL(ADD(MUL(V(b), I(a.qh)), V(h)), I(a.qseq)), V(i)), I(a.total)), V(j3));
    if (pnv < 0 || low_add(L, s3, low_store(L, p, V(j3), V(pnv))) ||
        (a.oqk >= 0 && mode == 3 && low_add(L, s3, low_store(L, a.oqk, qko3, V(pnv)))) ||
        low_add(L, row, loop_for(L->p, j3, I(a.total), LOOP_SERIAL, s3)))
        return low_oom(L);
    /* output row: sum_j p[j] * value(j) */
    LoopStmt *ob = loop_block(L->p);
    int acc = low_let(L, ob, "acc", low_const(L, t, 0), 1);
    if (acc < 0)
        return low_oom(L);
    LoopStmt *vs = loop_assign(L->p, acc, ADD(V(acc), MUL(low_load(L, p, V(j4), t), cache(L, &a, 1, b, kh, j4, V(e2)))));
    if (low_add(L, ob, loop_for(L->p, j4, I(a.total), LOOP_SERIAL, vs)) ||
        low_add(L, ob, low_store(L, a.y, at(L, a.r3, a.qh, a.qseq, a.vhs, V(b), V(h), V(i), V(e2)), V(acc))) ||
        low_add(L, row, loop_for(L->p, e2, I(a.vhs), LOOP_SERIAL, ob)))
        return low_oom(L);
    int vars[3] = { b, h, i };
    int64_t ext[3] = { a.b, a.qh, a.qseq };
    if (low_add(L, k, low_nest(L, 3, vars, ext, row)))
        return low_oom(L);
    return low_kernel(L, k);
}
