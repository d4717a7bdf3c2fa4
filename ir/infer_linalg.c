/* ir/infer_linalg.c — shape and dtype rules of the matrix products and linear algebra: MatMul, Gemm, Einsum, Trilu,
 * CumSum, TopK and Det
 * (ONNX opset 21 semantics; ir/infer_impl.h). */
#include "ir/infer_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* -------------------------------------------------- matrix products */

int ir_infer_matmul(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrShape *a = &ir_in(g, n, 0)->v.shape, *b = &ir_in(g, n, 1)->v.shape;
    if (ir_infer_need_numeric(g, n, 0, d) || ir_infer_same_dtype(g, n, 0, 1, d))
        return -1;
    if (a->rank < 1 || b->rank < 1)
        return ir_node_error(g, n, d, "MatMul operands must have rank >= 1");
    int64_t ka = a->dims[a->rank - 1], kb = b->rank == 1 ? b->dims[0] : b->dims[b->rank - 2];
    if (ka != kb) {
        char sa[128], sb[128];
        ir_shape_str(a, sa, sizeof sa);
        ir_shape_str(b, sb, sizeof sb);
        return ir_node_error(g, n, d, "inner dimensions of %s and %s differ (%lld vs %lld)", sa, sb,
                             (long long)ka, (long long)kb);
    }
    IrShape ba = { .rank = a->rank > 2 ? a->rank - 2 : 0 }, bb = { .rank = b->rank > 2 ? b->rank - 2 : 0 }, o;
    memcpy(ba.dims, a->dims, (size_t)ba.rank * sizeof(int64_t));
    memcpy(bb.dims, b->dims, (size_t)bb.rank * sizeof(int64_t));
    if (ir_broadcast_shapes(g, n, &ba, &bb, &o, d))
        return -1;
    if (a->rank >= 2)
        o.dims[o.rank++] = a->dims[a->rank - 2];
    if (b->rank >= 2)
        o.dims[o.rank++] = b->dims[b->rank - 1];
    ir_infer_set(g, n, 0, ir_in(g, n, 0)->v.dtype, &o);
    return 0;
}

int ir_infer_gemm(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrShape *a = &ir_in(g, n, 0)->v.shape, *b = &ir_in(g, n, 1)->v.shape;
    if (ir_infer_need_numeric(g, n, 0, d) || ir_infer_same_dtype(g, n, 0, 1, d))
        return -1;
    if (a->rank != 2 || b->rank != 2)
        return ir_node_error(g, n, d, "Gemm needs 2-D A and B (got rank %d and %d)", a->rank, b->rank);
    int ta = ir_attr_int(n, IR_A_transA) != 0, tb = ir_attr_int(n, IR_A_transB) != 0;
    int64_t m = a->dims[ta], k = a->dims[!ta], kb = b->dims[tb], nn = b->dims[!tb];
    if (k != kb)
        return ir_node_error(g, n, d, "inner dimensions differ (%lld vs %lld)", (long long)k, (long long)kb);
    IrShape o = { .rank = 2, .dims = { m, nn } };
    const IrTensor *c = ir_in(g, n, 2);
    if (c && (ir_infer_same_dtype(g, n, 0, 2, d) || ir_infer_unidir(g, n, &o, &c->v.shape, d)))
        return -1;
    ir_infer_set(g, n, 0, ir_in(g, n, 0)->v.dtype, &o);
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

/* Input i (present) must hold one element (a scalar or a 1-element tensor). */
static int need_one(IrGraph *g, IrNode *n, int i, const char *what, UtilDiag *d)
{
    const IrTensor *t = ir_in(g, n, i);
    if (t && ir_shape_numel(&t->v.shape) != 1)
        return ir_node_error(g, n, d, "the %s input '%s' must hold exactly one value", what, t->name);
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
        if (ir_infer_same_dtype(g, n, 0, i, d))
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
    if (n->n_in > 1 && (ir_infer_need_int(g, n, 1, "k", d) || need_one(g, n, 1, "k", d)))
        return -1;
    ir_infer_set(g, n, 0, x->v.dtype, &x->v.shape);
    return 0;
}

int ir_infer_cumsum(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = ir_in(g, n, 0);
    if (need_numeric(g, n, d))
        return -1;
    if (ir_infer_need_int(g, n, 1, "axis", d) || need_one(g, n, 1, "axis", d))
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
    if (ir_infer_need_float(g, n, 0, d))
        return -1;
    if (s->rank < 2 || s->dims[s->rank - 1] != s->dims[s->rank - 2])
        return ir_node_error(g, n, d, "input '%s' must be [*, M, M] (square matrices)", x->name);
    IrShape o = { .rank = s->rank - 2 };
    memcpy(o.dims, s->dims, (size_t)o.rank * sizeof(int64_t));
    ir_infer_set(g, n, 0, x->v.dtype, &o);
    return 0;
}
