/* ir/infer_scatter.c — shape and dtype rules of the scatter and index-generating operators: ScatterElements,
 * ScatterND, TensorScatter, OneHot, EyeLike, Compress, NonZero and
 * ReverseSequence
 * (ONNX opset 21 semantics; ir/infer_impl.h). */
#include "ir/infer_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int need_int_indices(IrGraph *g, IrNode *n, int i, UtilDiag *d)
{
    const IrTensor *t = ir_in(g, n, i);
    if (t->v.dtype != IR_DT_I64 && t->v.dtype != IR_DT_I32)
        return ir_node_error(g, n, d, "indices '%s' are %s; int32 or int64 is required", t->name,
                             ir_dtype_name(t->v.dtype));
    return 0;
}

/* "reduction" of ScatterElements / ScatterND: 0 none, 1 add, 2 mul, 3 max, 4 min. */
int ir_scatter_reduction(const IrNode *n)
{
    if (n->op == IR_OP_Scatter)
        return 0;
    static const char *const names[] = { "none", "add", "mul", "max", "min" };
    const char *r = ir_attr_str(n, IR_A_reduction);
    for (int i = 0; i < 5; i++)
        if (!strcmp(r, names[i]))
            return i;
    return -1;
}

static int check_reduction(IrGraph *g, IrNode *n, UtilDiag *d)
{
    if (ir_scatter_reduction(n) < 0)
        return ir_node_error(g, n, d, "reduction must be \"none\", \"add\", \"mul\", \"max\" or \"min\", not \"%s\"",
                             ir_attr_str(n, IR_A_reduction));
    return 0;
}

int ir_infer_scatterelements(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = ir_in(g, n, 0), *ind = ir_in(g, n, 1), *u = ir_in(g, n, 2);
    const IrShape *s = &x->v.shape, *is = &ind->v.shape;
    if (check_reduction(g, n, d) || need_int_indices(g, n, 1, d) || ir_infer_same_dtype(g, n, 0, 2, d))
        return -1;
    char a[160], b[160];
    ir_shape_str(s, a, sizeof a);
    ir_shape_str(is, b, sizeof b);
    if (s->rank < 1)
        return ir_node_error(g, n, d, "data %s must have rank >= 1", a);
    int axis = ir_norm_axis(g, n, ir_attr_int(n, IR_A_axis), s->rank, d);
    if (axis < 0)
        return -1;
    if (is->rank != s->rank)
        return ir_node_error(g, n, d, "indices %s must have the rank of the data %s", b, a);
    if (!ir_shape_equal(is, &u->v.shape)) {
        char c[160];
        ir_shape_str(&u->v.shape, c, sizeof c);
        return ir_node_error(g, n, d, "updates %s must have the shape of the indices %s", c, b);
    }
    for (int i = 0; i < s->rank; i++)            /* along axis, indices may repeat positions */
        if (i != axis && is->dims[i] > s->dims[i] && ir_shape_numel(is) > 0)
            return ir_node_error(g, n, d, "indices %s exceed the data %s on axis %d", b, a, i);
    if (ir_infer_check_indices(g, n, ind, &s->dims[axis], 1, d))
        return -1;
    ir_infer_set(g, n, 0, x->v.dtype, s);
    return 0;
}

int ir_infer_scatternd(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = ir_in(g, n, 0), *ind = ir_in(g, n, 1), *u = ir_in(g, n, 2);
    const IrShape *s = &x->v.shape, *is = &ind->v.shape, *us = &u->v.shape;
    if (check_reduction(g, n, d) || ir_infer_same_dtype(g, n, 0, 2, d))
        return -1;
    if (ind->v.dtype != IR_DT_I64)
        return ir_node_error(g, n, d, "indices '%s' are %s; int64 is required", ind->name,
                             ir_dtype_name(ind->v.dtype));
    char a[160], b[160], c[160];
    ir_shape_str(s, a, sizeof a);
    ir_shape_str(is, b, sizeof b);
    ir_shape_str(us, c, sizeof c);
    int r = s->rank, q = is->rank;
    if (r < 1 || q < 1)
        return ir_node_error(g, n, d, "data %s and indices %s must have rank >= 1", a, b);
    int64_t k = is->dims[q - 1];
    if (k < 1 || k > r)
        return ir_node_error(g, n, d, "the last dimension of indices %s is %lld; it must be in 1..%d", b,
                             (long long)k, r);
    int urank = q - 1 + r - (int)k;
    int ok = us->rank == urank;
    for (int i = 0; ok && i < q - 1; i++)
        ok = us->dims[i] == is->dims[i];
    for (int i = 0; ok && i < r - (int)k; i++)
        ok = us->dims[q - 1 + i] == s->dims[k + i];
    if (!ok)
        return ir_node_error(g, n, d, "updates %s must have shape indices.shape[:-1] + data.shape[%lld:] "
                             "for data %s and indices %s", c, (long long)k, a, b);
    if (ir_infer_check_indices(g, n, ind, s->dims, k, d))
        return -1;
    ir_infer_set(g, n, 0, x->v.dtype, s);
    return 0;
}

int ir_infer_onehot(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *ind = ir_in(g, n, 0), *vals = ir_in(g, n, 2);
    const IrShape *s = &ind->v.shape;
    if (ind->v.dtype == IR_DT_BOOL)
        return ir_node_error(g, n, d, "indices '%s' must be numeric, not bool", ind->name);
    if (ir_shape_numel(&vals->v.shape) != 2 || vals->v.shape.rank != 1)
        return ir_node_error(g, n, d, "values '%s' must be a 1-D tensor of two elements [off, on]", vals->name);
    int64_t depth;
    if (ir_infer_const_scalar(g, n, 1, "depth", &depth, d))
        return -1;
    if (depth < 1)
        return ir_node_error(g, n, d, "depth %lld must be positive", (long long)depth);
    if (s->rank + 1 > IR_MAX_RANK)
        return ir_node_error(g, n, d, "the output would have rank %d; at most %d is supported", s->rank + 1,
                             IR_MAX_RANK);
    int64_t axis = ir_attr_int(n, IR_A_axis);
    int r = s->rank + 1;
    if (axis < -r || axis >= r)
        return ir_node_error(g, n, d, "axis %lld is out of range for output rank %d", (long long)axis, r);
    if (axis < 0)
        axis += r;
    IrShape o = { .rank = r };
    for (int i = 0, k = 0; i < r; i++)
        o.dims[i] = i == axis ? depth : s->dims[k++];
    ir_infer_set(g, n, 0, vals->v.dtype, &o);
    return 0;
}

int ir_infer_eyelike(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = ir_in(g, n, 0);
    if (x->v.shape.rank != 2)
        return ir_node_error(g, n, d, "input '%s' must be 2-D, not rank %d", x->name, x->v.shape.rank);
    IrDType t = ir_infer_onnx_dtype_attr(g, n, IR_A_dtype, x->v.dtype, d);
    if (t == IR_DT_UNDEF)
        return -1;
    ir_infer_set(g, n, 0, t, &x->v.shape);
    return 0;
}

static const char data_dependent[] = "data-dependent output shape is not supported by a static compiler";

/* The output size of n depends on the value of its input `slot` ("the
 * condition input", "the input"): it must be known (IrGraph.need_value). */
static int need_known(IrGraph *g, IrNode *n, int slot, const char *what, UtilDiag *d)
{
    const IrTensor *t = ir_in(g, n, slot);
    if (t->v.data)
        return 0;
    g->need_value = n->in[slot];
    return ir_node_error(g, n, d, "%s '%s' must be a constant or computable at compile time (%s)", what, t->name,
                         data_dependent);
}

/* The optional axis attribute of Compress and Unique, normalized into *axis
 * (-1 when absent: the flattened input). */
static int optional_axis(IrGraph *g, IrNode *n, const IrShape *s, const char *x, int *axis, UtilDiag *d)
{
    *axis = -1;
    if (!ir_has_attr(n, IR_A_axis))
        return 0;
    if (s->rank < 1)
        return ir_node_error(g, n, d, "input '%s' is a scalar; axis needs rank >= 1", x);
    return (*axis = ir_norm_axis(g, n, ir_attr_int(n, IR_A_axis), s->rank, d)) < 0 ? -1 : 0;
}

/* Number of true values of Compress's condition that select an element of an
 * axis of length dim; -1 with a diagnostic if one lies beyond it. */
int64_t ir_compress_count(const IrGraph *g, const IrNode *n, const IrArray *cond, int64_t dim, UtilDiag *d)
{
    int64_t cnt = 0, len = ir_array_numel(cond);
    for (int64_t i = 0; i < len; i++)
        if (ir_load_i64(cond->dtype, cond->data, i)) {
            if (i >= dim)
                return ir_node_error(g, n, d, "condition is true at position %lld, beyond the axis length %lld",
                                     (long long)i, (long long)dim);
            cnt++;
        }
    return cnt;
}

int ir_infer_compress(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = ir_in(g, n, 0), *c = ir_in(g, n, 1);
    const IrShape *s = &x->v.shape;
    if (c->v.dtype != IR_DT_BOOL || c->v.shape.rank != 1)
        return ir_node_error(g, n, d, "condition '%s' must be a 1-D bool tensor", c->name);
    if (need_known(g, n, 1, "the condition input", d))
        return -1;
    IrShape o;
    int axis;
    if (optional_axis(g, n, s, x->name, &axis, d))
        return -1;
    if (axis >= 0) {
        o = *s;
    } else {
        o = (IrShape){ .rank = 1, .dims = { ir_shape_numel(s) } };
        axis = 0;
    }
    int64_t cnt = ir_compress_count(g, n, &c->v, o.dims[axis], d);
    if (cnt < 0)
        return -1;
    o.dims[axis] = cnt;
    ir_infer_set(g, n, 0, x->v.dtype, &o);
    return 0;
}

int ir_infer_nonzero(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = ir_in(g, n, 0);
    if (need_known(g, n, 0, "the input", d))
        return -1;
    int64_t cnt = 0, len = ir_shape_numel(&x->v.shape);
    for (int64_t i = 0; i < len; i++)
        cnt += ir_dtype_is_float(x->v.dtype) ? ir_load_f64(x->v.dtype, x->v.data, i) != 0
                                             : ir_load_i64(x->v.dtype, x->v.data, i) != 0;
    IrShape o = { .rank = 2, .dims = { x->v.shape.rank ? x->v.shape.rank : 1, cnt } };
    ir_infer_set(g, n, 0, IR_DT_I64, &o);
    return 0;
}

/* Unique's slices: slice i holds the elements (o, i, k) of x seen as
 * [outer, n, inner], compared in (o, k) order. */
typedef struct UniqueSlices {
    const IrArray *x;
    int64_t outer, n, inner;
} UniqueSlices;

static double unique_value(const IrArray *x, int64_t i)
{
    return ir_dtype_is_float(x->dtype) ? ir_load_f64(x->dtype, x->data, i) : (double)ir_load_i64(x->dtype, x->data, i);
}

static int unique_cmp(const UniqueSlices *s, int64_t a, int64_t b)
{
    for (int64_t o = 0; o < s->outer; o++)
        for (int64_t k = 0; k < s->inner; k++) {
            int64_t ia = (o * s->n + a) * s->inner + k, ib = (o * s->n + b) * s->inner + k;
            if (!ir_dtype_is_float(s->x->dtype)) {
                int64_t va = ir_load_i64(s->x->dtype, s->x->data, ia), vb = ir_load_i64(s->x->dtype, s->x->data, ib);
                if (va != vb)
                    return va < vb ? -1 : 1;
                continue;
            }
            double va = unique_value(s->x, ia), vb = unique_value(s->x, ib);
            int na = va != va, nb = vb != vb;             /* NaN: after every number, equal to NaN */
            if (na || nb) {
                if (na != nb)
                    return na ? 1 : -1;
            } else if (va != vb) {
                return va < vb ? -1 : 1;
            }
        }
    return 0;
}

/* Stable merge sort of idx[0..n) by the slices' order (tmp: n entries). */
static void unique_sort(const UniqueSlices *s, int64_t *idx, int64_t *tmp, int64_t n)
{
    for (int64_t w = 1; w < n; w *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * w) {
            int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n, a = lo, b = mid, o = lo;
            while (a < mid || b < hi)
                tmp[o++] = b >= hi || (a < mid && unique_cmp(s, idx[a], idx[b]) <= 0) ? idx[a++] : idx[b++];
        }
        memcpy(idx, tmp, (size_t)n * sizeof *idx);
    }
}

int64_t ir_unique(const IrArray *x, int axis, int sorted, int64_t *first, int64_t *inverse, int64_t *counts)
{
    UniqueSlices s = { x, 1, ir_array_numel(x), 1 };
    if (axis >= 0) {
        s.n = x->shape.dims[axis];
        for (int k = 0; k < axis; k++)
            s.outer *= x->shape.dims[k];
        for (int k = axis + 1; k < x->shape.rank; k++)
            s.inner *= x->shape.dims[k];
        if (s.outer * s.inner == 0)     /* empty slices: all equal */
            s.outer = s.inner = 0;
    }
    int64_t n = s.n, u = 0;
    int64_t *idx = malloc(((size_t)n + 1) * sizeof *idx), *tmp = malloc(((size_t)n + 1) * sizeof *tmp);
    int64_t *grp = malloc(((size_t)n + 1) * sizeof *grp), *pos = malloc(((size_t)n + 1) * sizeof *pos);
    if (!idx || !tmp || !grp || !pos) {
        u = -1;
        goto out;
    }
    for (int64_t i = 0; i < n; i++)
        idx[i] = i;
    unique_sort(&s, idx, tmp, n);
    /* grp[i]: slice i's group in sorted order; tmp[g]: the group's first slice (stable: the smallest index) */
    for (int64_t j = 0; j < n; j++) {
        if (j == 0 || unique_cmp(&s, idx[j - 1], idx[j]) != 0)
            tmp[u++] = idx[j];
        grp[idx[j]] = u - 1;
    }
    /* pos[g]: the group's place in the output order */
    if (sorted) {
        for (int64_t g = 0; g < u; g++)
            pos[g] = g;
    } else {
        int64_t next = 0;
        for (int64_t g = 0; g < u; g++)
            pos[g] = -1;
        for (int64_t i = 0; i < n; i++)
            if (pos[grp[i]] < 0)
                pos[grp[i]] = next++;
    }
    for (int64_t g = 0; g < u; g++) {
        if (first)
            first[pos[g]] = tmp[g];
        if (counts)
            counts[pos[g]] = 0;
    }
    for (int64_t i = 0; i < n; i++) {
        if (inverse)
            inverse[i] = pos[grp[i]];
        if (counts)
            counts[pos[grp[i]]]++;
    }
out:
    free(idx);
    free(tmp);
    free(grp);
    free(pos);
    return u;
}

int ir_infer_unique(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = ir_in(g, n, 0);
    const IrShape *s = &x->v.shape;
    int axis;
    if (optional_axis(g, n, s, x->name, &axis, d) || need_known(g, n, 0, "the input", d))
        return -1;
    int64_t u = ir_unique(&x->v, axis, ir_attr_int(n, IR_A_sorted) != 0, NULL, NULL, NULL);
    if (u < 0)
        return ir_node_error(g, n, d, "out of memory");
    IrShape y = { .rank = 1, .dims = { u } }, idx = { .rank = 1, .dims = { u } };
    IrShape inv = { .rank = 1, .dims = { axis < 0 ? ir_shape_numel(s) : s->dims[axis] } };
    if (axis >= 0) {
        y = *s;
        y.dims[axis] = u;
    }
    ir_infer_set(g, n, 0, x->v.dtype, &y);
    for (int k = 1; k < n->n_out; k++)
        ir_infer_set(g, n, k, IR_DT_I64, k == 2 ? &inv : &idx);
    return 0;
}

int ir_infer_reversesequence(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = ir_in(g, n, 0), *l = ir_in(g, n, 1);
    const IrShape *s = &x->v.shape;
    if (s->rank < 2)
        return ir_node_error(g, n, d, "input '%s' must have rank >= 2", x->name);
    int64_t ba = ir_attr_int(n, IR_A_batch_axis), ta = ir_attr_int(n, IR_A_time_axis);
    if ((ba != 0 && ba != 1) || (ta != 0 && ta != 1) || ba == ta)
        return ir_node_error(g, n, d, "batch_axis %lld and time_axis %lld must be 0 and 1 in some order",
                             (long long)ba, (long long)ta);
    if (l->v.dtype != IR_DT_I64 && l->v.dtype != IR_DT_I32)
        return ir_node_error(g, n, d, "sequence_lens '%s' must be int32 or int64", l->name);
    if (l->v.shape.rank != 1 || l->v.shape.dims[0] != s->dims[ba])
        return ir_node_error(g, n, d, "sequence_lens '%s' must be 1-D of the batch size %lld", l->name,
                             (long long)s->dims[ba]);
    ir_infer_set(g, n, 0, x->v.dtype, s);
    return 0;
}

int ir_infer_tensorscatter(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *c = ir_in(g, n, 0), *u = ir_in(g, n, 1);
    const IrShape *s = &c->v.shape, *us = &u->v.shape;
    const char *mode = ir_attr_str(n, IR_A_mode);
    if (strcmp(mode, "linear") && strcmp(mode, "circular"))
        return ir_node_error(g, n, d, "mode must be \"linear\" or \"circular\", not \"%s\"", mode);
    if (ir_infer_same_dtype(g, n, 0, 1, d))
        return -1;
    if (s->rank < 2)
        return ir_node_error(g, n, d, "past_cache '%s' must have rank >= 2 (batch and sequence axes)", c->name);
    int axis = ir_norm_axis(g, n, ir_attr_int(n, IR_A_axis), s->rank, d);
    if (axis < 0)
        return -1;
    if (axis == 0)
        return ir_node_error(g, n, d, "axis must not be 0 (the batch axis)");
    char a[160], b[160];
    ir_shape_str(s, a, sizeof a);
    ir_shape_str(us, b, sizeof b);
    int ok = us->rank == s->rank;
    for (int i = 0; ok && i < s->rank; i++)
        ok = i == axis ? us->dims[i] <= s->dims[i] : us->dims[i] == s->dims[i];
    if (!ok)
        return ir_node_error(g, n, d, "update %s must match past_cache %s except for a sequence length on axis %d "
                             "no longer than the cache's", b, a, axis);
    if (ir_infer_present(n, 2)) {
        const IrTensor *w = ir_in(g, n, 2);
        if (!ir_dtype_is_int(w->v.dtype) || w->v.shape.rank != 1 || w->v.shape.dims[0] != s->dims[0])
            return ir_node_error(g, n, d, "write_indices '%s' must be a 1-D integer tensor of the batch size %lld",
                                 w->name, (long long)s->dims[0]);
    }
    ir_infer_set(g, n, 0, c->v.dtype, s);
    return 0;
}
