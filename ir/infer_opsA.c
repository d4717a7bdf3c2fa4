/* ir/infer_opsA.c — shape/dtype rules of attention, the newer normalizations,
 * the losses and the linear-algebra operators: Attention, RotaryEmbedding,
 * RMSNormalization, GroupNormalization (opset 21 form: scale and bias per
 * channel), LRN, MeanVarianceNormalization, Swish, NegativeLogLikelihoodLoss,
 * SoftmaxCrossEntropyLoss, Einsum, Trilu, CumSum, TopK, Det; and the Einsum
 * equation parser shared with the kernel. */
#include "ir/infer_impl.h"

#include <stdio.h>
#include <string.h>

static int need_float(IrGraph *g, IrNode *n, int i, UtilDiag *d)
{
    const IrTensor *t = ir_in(g, n, i);
    if (t && !ir_dtype_is_float(t->v.dtype))
        return ir_node_error(g, n, d, "input '%s' is %s; a floating-point tensor is required", t->name,
                             ir_dtype_name(t->v.dtype));
    return 0;
}

/* Input 0 must be a float or integer tensor. */
static int need_numeric(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = ir_in(g, n, 0);
    if (!ir_dtype_is_float(x->v.dtype) && !ir_dtype_is_int(x->v.dtype))
        return ir_node_error(g, n, d, "input '%s' is %s; a numeric tensor is required", x->name,
                             ir_dtype_name(x->v.dtype));
    return 0;
}

static int need_int(IrGraph *g, IrNode *n, int i, const char *what, UtilDiag *d)
{
    const IrTensor *t = ir_in(g, n, i);
    if (t && !ir_dtype_is_int(t->v.dtype))
        return ir_node_error(g, n, d, "the %s input '%s' is %s; an integer tensor is required", what, t->name,
                             ir_dtype_name(t->v.dtype));
    return 0;
}

static int same_dtype(IrGraph *g, IrNode *n, int i, int j, UtilDiag *d)
{
    const IrTensor *a = ir_in(g, n, i), *b = ir_in(g, n, j);
    if (a && b && a->v.dtype != b->v.dtype)
        return ir_node_error(g, n, d, "inputs '%s' (%s) and '%s' (%s) must have the same dtype", a->name,
                             ir_dtype_name(a->v.dtype), b->name, ir_dtype_name(b->v.dtype));
    return 0;
}

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

/* Input i (present) must be 1-D with `len` elements. */
static int need_vec(IrGraph *g, IrNode *n, int i, const char *what, int64_t len, UtilDiag *d)
{
    const IrTensor *t = ir_in(g, n, i);
    if (t && (t->v.shape.rank != 1 || t->v.shape.dims[0] != len))
        return ir_node_error(g, n, d, "the %s input '%s' must be 1-D with %lld elements", what, t->name,
                             (long long)len);
    return 0;
}

/* Input i (present) must hold one element (a scalar or a 1-element tensor). */
static int need_one(IrGraph *g, IrNode *n, int i, const char *what, UtilDiag *d)
{
    const IrTensor *t = ir_in(g, n, i);
    if (t && ir_shape_numel(&t->v.shape) != 1)
        return ir_node_error(g, n, d, "the %s input '%s' must hold exactly one value", what, t->name);
    return 0;
}

static int need_stash(IrGraph *g, IrNode *n, UtilDiag *d)
{
    int64_t st = ir_attr_int(n, IR_A_stash_type);
    IrDType dt = st > 0 && st < 1000 ? ir_dtype_from_onnx((int)st) : IR_DT_UNDEF;
    if (!ir_dtype_is_float(dt))
        return ir_node_error(g, n, d, "stash_type %lld is not a floating-point type", (long long)st);
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
    if (need_float(g, n, 0, d) || same_dtype(g, n, 0, 1, d) || same_dtype(g, n, 0, 2, d) ||
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
        if (same_dtype(g, n, 0, 4, d) || same_dtype(g, n, 0, 5, d) || need_rank(g, n, 4, 4, 4, d) ||
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
        if (mask->v.dtype != IR_DT_BOOL && same_dtype(g, n, 0, 3, d))
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
    if (nonpad && (need_int(g, n, 6, "nonpad_kv_seqlen", d) || need_vec(g, n, 6, "nonpad_kv_seqlen", b, d)))
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
    if (need_float(g, n, 0, d) || same_dtype(g, n, 0, 1, d) || same_dtype(g, n, 0, 2, d) ||
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
        if (need_int(g, n, 3, "position_ids", d))
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

/* ------------------------------------------------------------ normalizations */

int ir_infer_rmsnorm(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = ir_in(g, n, 0), *sc = ir_in(g, n, 1);
    if (need_float(g, n, 0, d) || same_dtype(g, n, 0, 1, d) || need_stash(g, n, d))
        return -1;
    const IrShape *s = &x->v.shape;
    if (s->rank == 0)
        return ir_node_error(g, n, d, "input '%s' must have rank >= 1", x->name);
    if (ir_norm_axis(g, n, ir_attr_int(n, IR_A_axis), s->rank, d) < 0)
        return -1;
    IrShape o;
    if (ir_broadcast_shapes(g, n, s, &sc->v.shape, &o, d))
        return -1;
    if (!ir_shape_equal(&o, s))
        return ir_node_error(g, n, d, "scale '%s' does not broadcast to the input shape", sc->name);
    ir_infer_set(g, n, 0, x->v.dtype, s);
    return 0;
}

int ir_infer_groupnorm(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = ir_in(g, n, 0);
    if (need_float(g, n, 0, d) || same_dtype(g, n, 0, 1, d) || same_dtype(g, n, 0, 2, d) || need_stash(g, n, d))
        return -1;
    const IrShape *s = &x->v.shape;
    if (s->rank < 2)
        return ir_node_error(g, n, d, "input '%s' must have rank >= 2 (N, C, ...)", x->name);
    if (!ir_has_attr(n, IR_A_num_groups))
        return ir_node_error(g, n, d, "attribute 'num_groups' is required");
    int64_t ng = ir_attr_int(n, IR_A_num_groups), c = s->dims[1];
    if (ng <= 0 || c % ng)
        return ir_node_error(g, n, d, "num_groups %lld must be positive and divide the %lld channels",
                             (long long)ng, (long long)c);
    for (int i = 1; i <= 2; i++) {
        const IrTensor *t = ir_in(g, n, i);
        if (t->v.shape.rank == 1 && t->v.shape.dims[0] == ng && ng != c)
            return ir_node_error(g, n, d, "the %s input has one value per group (GroupNormalization-18 form); "
                                 "opset 21 needs one per channel (%lld)", i == 1 ? "scale" : "bias",
                                 (long long)c);
        if (need_vec(g, n, i, i == 1 ? "scale" : "bias", c, d))
            return -1;
    }
    ir_infer_set(g, n, 0, x->v.dtype, s);
    return 0;
}

/* LRN, MeanVarianceNormalization, Swish: float in, same dtype and shape out. */
int ir_infer_floatsame(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = ir_in(g, n, 0);
    const IrShape *s = &x->v.shape;
    if (need_float(g, n, 0, d))
        return -1;
    if (n->op == IR_OP_LRN) {
        if (s->rank < 3)
            return ir_node_error(g, n, d, "input '%s' must have rank >= 3 (N, C, spatial...)", x->name);
        if (!ir_has_attr(n, IR_A_size) || ir_attr_int(n, IR_A_size) <= 0)
            return ir_node_error(g, n, d, "attribute 'size' is required and must be positive");
    } else if (n->op == IR_OP_MeanVarianceNormalization) {
        const int64_t *axes;
        int na = ir_attr_ints(n, IR_A_axes, &axes);
        int seen[IR_MAX_RANK] = { 0 };
        if (!ir_has_attr(n, IR_A_axes) && s->rank < 4)
            return ir_node_error(g, n, d, "the default axes [0, 2, 3] need rank >= 4; input '%s' has rank %d",
                                 x->name, s->rank);
        for (int i = 0; i < na; i++) {
            int a = ir_norm_axis(g, n, axes[i], s->rank, d);
            if (a < 0)
                return -1;
            if (seen[a]++)
                return ir_node_error(g, n, d, "axis %lld is repeated in axes", (long long)axes[i]);
        }
    }
    ir_infer_set(g, n, 0, x->v.dtype, s);
    return 0;
}

/* -------------------------------------------------------------------- losses */

int ir_infer_loss(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = ir_in(g, n, 0), *t = ir_in(g, n, 1);
    const IrShape *s = &x->v.shape, *ts = &t->v.shape;
    if (need_float(g, n, 0, d) || need_int(g, n, 1, "target", d) || same_dtype(g, n, 0, 2, d))
        return -1;
    if (s->rank < 2)
        return ir_node_error(g, n, d, "input '%s' must have rank >= 2 (N, C, ...)", x->name);
    int ok = ts->rank == s->rank - 1 && ts->dims[0] == s->dims[0];
    for (int i = 1; ok && i < ts->rank; i++)
        ok = ts->dims[i] == s->dims[i + 1];
    if (!ok)
        return ir_node_error(g, n, d, "target '%s' must have the input's shape without dim 1 (C)", t->name);
    if (n->n_in > 2 && n->in[2] >= 0 && need_vec(g, n, 2, "weight", s->dims[1], d))
        return -1;
    const char *red = ir_attr_str(n, IR_A_reduction);
    IrShape scalar = { .rank = 0 };
    if (!strcmp(red, "none"))
        ir_infer_set(g, n, 0, x->v.dtype, ts);
    else if (!strcmp(red, "sum") || !strcmp(red, "mean"))
        ir_infer_set(g, n, 0, x->v.dtype, &scalar);
    else
        return ir_node_error(g, n, d, "reduction '%s' must be none, sum or mean", red);
    ir_infer_set(g, n, 1, x->v.dtype, s);
    return 0;
}

/* ------------------------------------------------------------ linear algebra */

static int ein_label(IrEinsum *e, int *map, int ch)
{
    int idx = ch >= 'a' ? ch - 'a' : 26 + ch - 'A';
    if (map[idx] < 0)
        map[idx] = e->n_labels++;
    return map[idx];
}

/* Parses one term (letters with at most one "...") into labels; ell_rank is
 * the number of dims the ellipsis covers for this term (-1: derive from
 * rank).  Returns the term's rank or -1. */
static int ein_term(const IrGraph *g, const IrNode *n, const char **pp, const char *end, IrEinsum *e, int *map,
                    int rank, int ell_base, int ell_max, int *labels, UtilDiag *d)
{
    const char *p = *pp;
    int letters = 0, has_ell = 0;
    for (const char *q = p; q < end && *q != ',' && *q != '-'; q++) {
        if (*q == ' ')
            continue;
        if (*q == '.') {
            if (has_ell || q + 2 >= end || q[1] != '.' || q[2] != '.')
                return ir_node_error(g, n, d, "equation has a malformed or repeated '...'");
            has_ell = 1;
            q += 2;
        } else if ((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z')) {
            letters++;
        } else {
            return ir_node_error(g, n, d, "equation has an invalid character '%c'", *q);
        }
    }
    int ell = rank >= 0 ? rank - letters : ell_max;
    if (rank >= 0 && (ell < 0 || (!has_ell && ell != 0)))
        return ir_node_error(g, n, d, "equation term has %d labels for an input of rank %d", letters, rank);
    if (ell > ell_max)
        return ir_node_error(g, n, d, "ellipsis covers more dims than in the inputs");
    int k = 0;
    for (; p < end && *p != ',' && *p != '-'; p++) {
        if (*p == ' ')
            continue;
        if (*p == '.') {
            for (int i = 0; i < ell; i++)
                labels[k++] = ell_base + ell_max - ell + i;
            p += 2;
        } else {
            if (k >= IR_MAX_RANK)
                return ir_node_error(g, n, d, "equation term has more than %d dims", IR_MAX_RANK);
            labels[k++] = ein_label(e, map, *p);
        }
    }
    *pp = p;
    return k;
}

int ir_einsum(const IrGraph *g, const IrNode *n, const IrShape *const *in, int n_in, IrEinsum *e, UtilDiag *d)
{
    memset(e, 0, sizeof *e);
    const char *eq = ir_attr_str(n, IR_A_equation);
    if (!ir_has_attr(n, IR_A_equation))
        return ir_node_error(g, n, d, "attribute 'equation' is required");
    if (n_in > IR_EINSUM_MAX_IN)
        return ir_node_error(g, n, d, "%d inputs; dlcc supports Einsum with at most %d", n_in, IR_EINSUM_MAX_IN);
    const char *arrow = strstr(eq, "->"), *end = arrow ? arrow : eq + strlen(eq);
    int map[52];
    memset(map, -1, sizeof map);
    /* first pass: letters in order of appearance and the widest ellipsis */
    int ell_max = 0, count[52] = { 0 };
    for (const char *p = eq; p < end; p++)
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z'))
            ein_label(e, map, *p);
    int letters_n = e->n_labels;
    {
        int i = 0, letters = 0, has_ell = 0;
        for (const char *p = eq;; p++) {
            if (p == end || *p == ',') {
                if (i >= n_in)
                    return ir_node_error(g, n, d, "equation has more terms than the %d inputs", n_in);
                int ell = in[i]->rank - letters;
                if (has_ell && ell > ell_max)
                    ell_max = ell;
                i++;
                letters = has_ell = 0;
                if (p == end)
                    break;
            } else if (*p == '.') {
                has_ell = 1;
            } else if (*p != ' ') {
                letters++;
            }
        }
        if (i != n_in)
            return ir_node_error(g, n, d, "equation has %d terms for %d inputs", i, n_in);
    }
    int ell_base = letters_n;
    e->n_labels = letters_n + ell_max;
    for (int l = 0; l < e->n_labels; l++)
        e->size[l] = -1;
    const char *p = eq;
    for (int i = 0; i < n_in; i++) {
        int r = ein_term(g, n, &p, end, e, map, in[i]->rank, ell_base, ell_max, e->label[i], d);
        if (r < 0)
            return -1;
        e->n_in = i + 1;
        e->rank[i] = r;
        for (int k = 0; k < r; k++) {
            int l = e->label[i][k];
            int64_t dim = in[i]->dims[k];
            if (l < letters_n)
                count[l]++;
            if (e->size[l] < 0 || (l >= ell_base && e->size[l] == 1))
                e->size[l] = dim;
            else if (dim != e->size[l] && !(l >= ell_base && dim == 1))
                return ir_node_error(g, n, d, "label dims disagree in equation '%s' (%lld vs %lld)", eq,
                                     (long long)dim, (long long)e->size[l]);
        }
        if (p < end)
            p++;                                    /* ',' */
    }
    int64_t space = 1;
    for (int l = 0; l < e->n_labels; l++) {
        if (e->size[l] < 0)
            e->size[l] = 1;
        if (util_mul_overflow_i64(space, e->size[l], &space) || space > IR_MAX_ELEMENTS)
            return ir_node_error(g, n, d, "equation '%s' spans more than %lld index combinations", eq,
                                 (long long)IR_MAX_ELEMENTS);
    }
    if (arrow) {
        int seen[IR_EINSUM_MAX_LABELS] = { 0 };
        const char *q = arrow + 2, *qend = eq + strlen(eq);
        for (const char *c = q; c < qend; c++)
            if ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z')) {
                int idx = *c >= 'a' ? *c - 'a' : 26 + *c - 'A';
                if (map[idx] < 0)
                    return ir_node_error(g, n, d, "output label '%c' appears in no input", *c);
            }
        int r = ein_term(g, n, &q, qend, e, map, -1, ell_base, ell_max, e->out_label, d);
        if (r < 0)
            return -1;
        if (q != qend)
            return ir_node_error(g, n, d, "equation '%s' has a malformed output term", eq);
        for (int k = 0; k < r; k++)
            if (seen[e->out_label[k]]++)
                return ir_node_error(g, n, d, "output label repeated in equation '%s'", eq);
        e->out_rank = r;
    } else {
        int r = 0;
        for (int l = ell_base; l < e->n_labels; l++)
            e->out_label[r++] = l;
        for (int c = 0; c < 52; c++) {           /* alphabetical: uppercase sorts before lowercase */
            int idx = c < 26 ? 26 + c : c - 26;
            if (map[idx] >= 0 && count[map[idx]] == 1) {
                if (r >= IR_MAX_RANK)
                    return ir_node_error(g, n, d, "equation output has more than %d dims", IR_MAX_RANK);
                e->out_label[r++] = map[idx];
            }
        }
        e->out_rank = r;
    }
    return 0;
}

int ir_infer_einsum(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrShape *shp[IR_EINSUM_MAX_IN];
    const IrTensor *x = ir_in(g, n, 0);
    if (need_numeric(g, n, d))
        return -1;
    for (int i = 0; i < n->n_in && i < IR_EINSUM_MAX_IN; i++) {
        if (n->in[i] < 0)
            return ir_node_error(g, n, d, "input %d is missing", i + 1);
        if (same_dtype(g, n, 0, i, d))
            return -1;
        shp[i] = &ir_in(g, n, i)->v.shape;
    }
    IrEinsum e;
    if (ir_einsum(g, n, shp, n->n_in, &e, d))
        return -1;
    IrShape o = { .rank = e.out_rank };
    for (int k = 0; k < e.out_rank; k++)
        o.dims[k] = e.size[e.out_label[k]];
    ir_infer_set(g, n, 0, x->v.dtype, &o);
    return 0;
}

int ir_infer_trilu(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = ir_in(g, n, 0);
    if (x->v.shape.rank < 2)
        return ir_node_error(g, n, d, "input '%s' must have rank >= 2", x->name);
    if (n->n_in > 1 && (need_int(g, n, 1, "k", d) || need_one(g, n, 1, "k", d)))
        return -1;
    ir_infer_set(g, n, 0, x->v.dtype, &x->v.shape);
    return 0;
}

int ir_infer_cumsum(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = ir_in(g, n, 0);
    if (need_numeric(g, n, d))
        return -1;
    if (need_int(g, n, 1, "axis", d) || need_one(g, n, 1, "axis", d))
        return -1;
    if (x->v.shape.rank == 0)
        return ir_node_error(g, n, d, "input '%s' must have rank >= 1", x->name);
    /* the axis decides the loop structure of compiled code: static, like axes elsewhere */
    int64_t axis;
    if (ir_infer_const_ints(g, n, 1, "axis", &axis, 1, d) < 0 ||
        ir_norm_axis(g, n, axis, x->v.shape.rank, d) < 0)
        return -1;
    ir_infer_set(g, n, 0, x->v.dtype, &x->v.shape);
    return 0;
}

int ir_infer_topk(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = ir_in(g, n, 0);
    const IrShape *s = &x->v.shape;
    if (need_numeric(g, n, d))
        return -1;
    if (s->rank == 0)
        return ir_node_error(g, n, d, "input '%s' must have rank >= 1", x->name);
    int a = ir_norm_axis(g, n, ir_attr_int(n, IR_A_axis), s->rank, d);
    int64_t k;
    if (a < 0 || need_one(g, n, 1, "K", d) || ir_infer_const_ints(g, n, 1, "K", &k, 1, d) < 0)
        return -1;
    if (k < 0 || k > s->dims[a])
        return ir_node_error(g, n, d, "K = %lld is out of range for axis %d of length %lld", (long long)k, a,
                             (long long)s->dims[a]);
    IrShape o = *s;
    o.dims[a] = k;
    ir_infer_set(g, n, 0, x->v.dtype, &o);
    ir_infer_set(g, n, 1, IR_DT_I64, &o);
    return 0;
}

int ir_infer_det(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = ir_in(g, n, 0);
    const IrShape *s = &x->v.shape;
    if (need_float(g, n, 0, d))
        return -1;
    if (s->rank < 2 || s->dims[s->rank - 1] != s->dims[s->rank - 2])
        return ir_node_error(g, n, d, "input '%s' must be [*, M, M] (square matrices)", x->name);
    IrShape o = { .rank = s->rank - 2 };
    memcpy(o.dims, s->dims, (size_t)o.rank * sizeof(int64_t));
    ir_infer_set(g, n, 0, x->v.dtype, &o);
    return 0;
}
