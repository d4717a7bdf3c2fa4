/* ir/infer_data.c — shape rules of the shape and data-movement operators
 * (Reshape ... SpaceToDepth; Resize is in ir/infer_resize.c), opset 21
 * semantics.  Shape operands (shapes, axes, pads, repeats) must be known at
 * compile time; they are read with ir_infer_const_ints. */
#include "ir/infer_impl.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* "[a,b,c]" of a raw int list, for messages. */
static void ints_str(const int64_t *v, int cnt, char *buf, size_t bn)
{
    IrShape s = { .rank = cnt > IR_MAX_RANK ? IR_MAX_RANK : cnt };
    memcpy(s.dims, v, (size_t)s.rank * sizeof *v);
    ir_shape_str(&s, buf, bn);
}

/* Normalizes cnt axes against rank into out[]; out-of-range or repeated axes
 * are errors.  `what` names the operand. */
static int norm_axes(IrGraph *g, IrNode *n, const char *what, const int64_t *axes, int cnt, int rank,
                     int64_t *out, UtilDiag *d)
{
    for (int i = 0; i < cnt; i++) {
        int64_t a = axes[i];
        if (a < -rank || a >= rank)
            return ir_node_error(g, n, d, "%s value %lld is out of range for rank %d", what, (long long)a, rank);
        out[i] = a < 0 ? a + rank : a;
        for (int j = 0; j < i; j++)
            if (out[j] == out[i])
                return ir_node_error(g, n, d, "%s names axis %lld more than once", what, (long long)out[i]);
    }
    return 0;
}

/* An optional input that is present and not an empty tensor. */
static int given(const IrGraph *g, const IrNode *n, int i)
{
    const IrTensor *t = ir_in(g, n, i);
    return t && ir_shape_numel(&t->v.shape) != 0;
}

int ir_infer_reshape(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = ir_in(g, n, 0);
    int64_t sh[IR_MAX_RANK];
    int cnt = ir_infer_const_ints(g, n, 1, "shape", sh, IR_MAX_RANK, d);
    if (cnt < 0)
        return -1;
    int allowzero = ir_attr_int(n, IR_A_allowzero) != 0, infer_at = -1, has_zero = 0;
    IrShape o = { .rank = cnt };
    int64_t known = 1;
    char ss[160], xs[160];
    ints_str(sh, cnt, ss, sizeof ss);
    ir_shape_str(&x->v.shape, xs, sizeof xs);
    for (int i = 0; i < cnt; i++) {
        int64_t v = sh[i];
        if (v == -1) {
            if (infer_at >= 0)
                return ir_node_error(g, n, d, "shape %s has more than one -1", ss);
            infer_at = i;
            continue;
        }
        if (v < -1)
            return ir_node_error(g, n, d, "shape %s holds %lld; only -1 may be negative", ss, (long long)v);
        if (v == 0) {
            has_zero = 1;
            if (!allowzero) {
                if (i >= x->v.shape.rank)
                    return ir_node_error(g, n, d, "shape %s has 0 at position %d, but the input %s has no "
                                         "dimension there to copy", ss, i, xs);
                v = x->v.shape.dims[i];
            }
        }
        o.dims[i] = v;
        if (util_mul_overflow_i64(known, v, &known) || known > IR_MAX_ELEMENTS)
            return ir_node_error(g, n, d, "shape %s is too large", ss);
    }
    if (allowzero && has_zero && infer_at >= 0)
        return ir_node_error(g, n, d, "shape %s holds both 0 and -1, which allowzero=1 forbids", ss);
    int64_t xn = ir_shape_numel(&x->v.shape);
    if (infer_at >= 0) {
        if (known == 0 || xn % known != 0)
            return ir_node_error(g, n, d, "cannot reshape input %s (%lld elements) to shape %s", xs,
                                 (long long)xn, ss);
        o.dims[infer_at] = xn / known;
    } else if (known != xn) {
        return ir_node_error(g, n, d, "cannot reshape input %s (%lld elements) to shape %s (%lld elements)",
                             xs, (long long)xn, ss, (long long)known);
    }
    ir_infer_set(g, n, 0, x->v.dtype, &o);
    return 0;
}

int ir_infer_flatten(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = ir_in(g, n, 0);
    int r = x->v.shape.rank;
    int64_t axis = ir_attr_int(n, IR_A_axis);
    if (axis < -r || axis > r)
        return ir_node_error(g, n, d, "axis %lld is out of range for rank %d (Flatten allows %d..%d)",
                             (long long)axis, r, -r, r);
    if (axis < 0)
        axis += r;
    IrShape o = { .rank = 2, .dims = { 1, 1 } };
    for (int i = 0; i < r; i++)
        o.dims[i < axis ? 0 : 1] *= x->v.shape.dims[i];     /* bounded by the input's element count */
    ir_infer_set(g, n, 0, x->v.dtype, &o);
    return 0;
}

int ir_infer_squeeze(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = ir_in(g, n, 0);
    const IrShape *s = &x->v.shape;
    int drop[IR_MAX_RANK] = { 0 };
    if (given(g, n, 1)) {
        int64_t axes[IR_MAX_RANK], na[IR_MAX_RANK];
        int cnt = ir_infer_const_ints(g, n, 1, "axes", axes, IR_MAX_RANK, d);
        if (cnt < 0 || norm_axes(g, n, "axes", axes, cnt, s->rank, na, d))
            return -1;
        for (int i = 0; i < cnt; i++) {
            if (s->dims[na[i]] != 1)
                return ir_node_error(g, n, d, "cannot squeeze axis %lld of size %lld (it must be 1)",
                                     (long long)na[i], (long long)s->dims[na[i]]);
            drop[na[i]] = 1;
        }
    } else {
        for (int i = 0; i < s->rank; i++)
            drop[i] = s->dims[i] == 1;
    }
    IrShape o = { .rank = 0 };
    for (int i = 0; i < s->rank; i++)
        if (!drop[i])
            o.dims[o.rank++] = s->dims[i];
    ir_infer_set(g, n, 0, x->v.dtype, &o);
    return 0;
}

int ir_infer_unsqueeze(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = ir_in(g, n, 0);
    const IrShape *s = &x->v.shape;
    int64_t axes[IR_MAX_RANK], na[IR_MAX_RANK];
    int cnt = ir_infer_const_ints(g, n, 1, "axes", axes, IR_MAX_RANK, d);
    if (cnt < 0)
        return -1;
    int orank = s->rank + cnt;
    if (orank > IR_MAX_RANK)
        return ir_node_error(g, n, d, "the output would have rank %d; at most %d is supported", orank,
                             IR_MAX_RANK);
    if (norm_axes(g, n, "axes", axes, cnt, orank, na, d))
        return -1;
    int ins[IR_MAX_RANK] = { 0 };
    for (int i = 0; i < cnt; i++)
        ins[na[i]] = 1;
    IrShape o = { .rank = orank };
    for (int i = 0, k = 0; i < orank; i++)
        o.dims[i] = ins[i] ? 1 : s->dims[k++];
    ir_infer_set(g, n, 0, x->v.dtype, &o);
    return 0;
}

int ir_infer_transpose(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = ir_in(g, n, 0);
    const IrShape *s = &x->v.shape;
    const int64_t *perm;
    int cnt = ir_attr_ints(n, IR_A_perm, &perm);
    IrShape o = { .rank = s->rank };
    if (!ir_has_attr(n, IR_A_perm)) {
        for (int i = 0; i < s->rank; i++)
            o.dims[i] = s->dims[s->rank - 1 - i];
    } else {
        char ps[160];
        ints_str(perm, cnt, ps, sizeof ps);
        if (cnt != s->rank)
            return ir_node_error(g, n, d, "perm %s has %d entries; the input has rank %d", ps, cnt, s->rank);
        int seen[IR_MAX_RANK] = { 0 };
        for (int i = 0; i < cnt; i++) {
            if (perm[i] < 0 || perm[i] >= s->rank || seen[perm[i]]++)
                return ir_node_error(g, n, d, "perm %s is not a permutation of 0..%d", ps, s->rank - 1);
            o.dims[i] = s->dims[perm[i]];
        }
    }
    ir_infer_set(g, n, 0, x->v.dtype, &o);
    return 0;
}

int ir_infer_concat(IrGraph *g, IrNode *n, UtilDiag *d)
{
    if (!ir_has_attr(n, IR_A_axis))
        return ir_node_error(g, n, d, "the axis attribute is required");
    const IrTensor *x0 = ir_in(g, n, 0);
    int r = x0->v.shape.rank;
    if (r == 0)
        return ir_node_error(g, n, d, "cannot concatenate scalars (rank 0)");
    int axis = ir_norm_axis(g, n, ir_attr_int(n, IR_A_axis), r, d);
    if (axis < 0)
        return -1;
    IrShape o = x0->v.shape;
    o.dims[axis] = 0;
    for (int i = 0; i < n->n_in; i++) {
        const IrTensor *t = ir_in(g, n, i);
        if (!t)
            return ir_node_error(g, n, d, "input %d is missing", i + 1);
        if (t->v.dtype != x0->v.dtype)
            return ir_node_error(g, n, d, "input '%s' is %s but input '%s' is %s", t->name,
                                 ir_dtype_name(t->v.dtype), x0->name, ir_dtype_name(x0->v.dtype));
        char a[160], b[160];
        ir_shape_str(&t->v.shape, a, sizeof a);
        ir_shape_str(&x0->v.shape, b, sizeof b);
        if (t->v.shape.rank != r)
            return ir_node_error(g, n, d, "input '%s' %s has a different rank than '%s' %s", t->name, a,
                                 x0->name, b);
        for (int k = 0; k < r; k++)
            if (k != axis && t->v.shape.dims[k] != x0->v.shape.dims[k])
                return ir_node_error(g, n, d, "input '%s' %s and '%s' %s differ on axis %d (concat axis is %d)",
                                     t->name, a, x0->name, b, k, axis);
        if (util_add_overflow_i64(o.dims[axis], t->v.shape.dims[axis], &o.dims[axis]))
            return ir_node_error(g, n, d, "the output is too large");
    }
    ir_infer_set(g, n, 0, x0->v.dtype, &o);
    return 0;
}

int ir_infer_split(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = ir_in(g, n, 0);
    const IrShape *s = &x->v.shape;
    if (s->rank == 0)
        return ir_node_error(g, n, d, "cannot split a scalar (rank 0)");
    int axis = ir_norm_axis(g, n, ir_attr_int(n, IR_A_axis), s->rank, d);
    if (axis < 0)
        return -1;
    int nout = n->n_out;
    int64_t dim = s->dims[axis], sizes[IR_VARIADIC];
    if (given(g, n, 1)) {
        if (ir_has_attr(n, IR_A_num_outputs))
            return ir_node_error(g, n, d, "give either the split input or the num_outputs attribute, not both");
        int cnt = ir_infer_const_ints(g, n, 1, "split", sizes, IR_VARIADIC, d);
        if (cnt < 0)
            return -1;
        if (cnt != nout)
            return ir_node_error(g, n, d, "split has %d sizes but the node has %d outputs", cnt, nout);
        int64_t sum = 0;
        for (int i = 0; i < cnt; i++) {
            if (sizes[i] < 0)
                return ir_node_error(g, n, d, "split size %lld is negative", (long long)sizes[i]);
            if (util_add_overflow_i64(sum, sizes[i], &sum))
                sum = INT64_MAX;
        }
        if (sum != dim)
            return ir_node_error(g, n, d, "split sizes sum to %lld but axis %d has size %lld", (long long)sum,
                                 axis, (long long)dim);
    } else if (ir_has_attr(n, IR_A_num_outputs)) {
        int64_t no = ir_attr_int(n, IR_A_num_outputs);
        if (no != nout)
            return ir_node_error(g, n, d, "num_outputs is %lld but the node has %d outputs", (long long)no, nout);
        int64_t chunk = (dim + nout - 1) / nout, last = dim - chunk * (nout - 1);
        if (last < 0)
            return ir_node_error(g, n, d, "axis %d of size %lld cannot be split into %d chunks of %lld", axis,
                                 (long long)dim, nout, (long long)chunk);
        for (int i = 0; i < nout; i++)
            sizes[i] = i == nout - 1 ? last : chunk;
    } else {
        if (dim % nout != 0)
            return ir_node_error(g, n, d, "axis %d of size %lld does not split evenly into %d outputs", axis,
                                 (long long)dim, nout);
        for (int i = 0; i < nout; i++)
            sizes[i] = dim / nout;
    }
    for (int i = 0; i < nout; i++) {
        IrShape o = *s;
        o.dims[axis] = sizes[i];
        ir_infer_set(g, n, i, x->v.dtype, &o);
    }
    return 0;
}

void ir_slice_axis(int64_t dim, int64_t start, int64_t end, int64_t step, int64_t *first, int64_t *count)
{
    if (start < 0)
        start += dim;
    if (end < 0)
        end += dim;
    *first = 0;
    *count = 0;
    if (dim == 0)
        return;
    if (step > 0) {
        start = start < 0 ? 0 : start > dim ? dim : start;
        end = end < 0 ? 0 : end > dim ? dim : end;
        int64_t diff = end - start;
        *count = diff > 0 ? 1 + (diff - 1) / step : 0;
    } else {
        start = start < 0 ? 0 : start > dim - 1 ? dim - 1 : start;
        end = end < -1 ? -1 : end > dim - 1 ? dim - 1 : end;
        int64_t diff = start - end, mstep = step == INT64_MIN ? INT64_MAX : -step;
        *count = diff > 0 ? 1 + (diff - 1) / mstep : 0;
    }
    *first = start;
}

int ir_infer_slice(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = ir_in(g, n, 0);
    const IrShape *s = &x->v.shape;
    int64_t starts[IR_MAX_RANK], ends[IR_MAX_RANK], axes[IR_MAX_RANK], steps[IR_MAX_RANK], na[IR_MAX_RANK];
    int cs = ir_infer_const_ints(g, n, 1, "starts", starts, IR_MAX_RANK, d);
    int ce = cs < 0 ? -1 : ir_infer_const_ints(g, n, 2, "ends", ends, IR_MAX_RANK, d);
    if (ce < 0)
        return -1;
    if (cs != ce)
        return ir_node_error(g, n, d, "starts has %d values but ends has %d", cs, ce);
    if (cs > s->rank)
        return ir_node_error(g, n, d, "starts has %d values but the input has rank %d", cs, s->rank);
    if (ir_in(g, n, 3)) {
        int ca = ir_infer_const_ints(g, n, 3, "axes", axes, IR_MAX_RANK, d);
        if (ca < 0)
            return -1;
        if (ca != cs)
            return ir_node_error(g, n, d, "axes has %d values but starts has %d", ca, cs);
    } else {
        for (int i = 0; i < cs; i++)
            axes[i] = i;
    }
    if (norm_axes(g, n, "axes", axes, cs, s->rank, na, d))
        return -1;
    if (ir_in(g, n, 4)) {
        int cp = ir_infer_const_ints(g, n, 4, "steps", steps, IR_MAX_RANK, d);
        if (cp < 0)
            return -1;
        if (cp != cs)
            return ir_node_error(g, n, d, "steps has %d values but starts has %d", cp, cs);
    } else {
        for (int i = 0; i < cs; i++)
            steps[i] = 1;
    }
    IrShape o = *s;
    for (int i = 0; i < cs; i++) {
        if (steps[i] == 0)
            return ir_node_error(g, n, d, "slice step on axis %lld is 0", (long long)na[i]);
        int64_t first;
        ir_slice_axis(s->dims[na[i]], starts[i], ends[i], steps[i], &first, &o.dims[na[i]]);
    }
    ir_infer_set(g, n, 0, x->v.dtype, &o);
    return 0;
}

/* Gather / GatherElements: the normalized axis of the data (rank >= 1). */
static int gather_axis(IrGraph *g, IrNode *n, UtilDiag *d)
{
    int r = ir_in(g, n, 0)->v.shape.rank;
    if (r == 0)
        return ir_node_error(g, n, d, "cannot gather from a scalar (rank 0)");
    return ir_norm_axis(g, n, ir_attr_int(n, IR_A_axis), r, d);
}

int ir_infer_gather(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = ir_in(g, n, 0), *ind = ir_in(g, n, 1);
    const IrShape *s = &x->v.shape, *is = &ind->v.shape;
    int axis = gather_axis(g, n, d);
    if (axis < 0 || ir_infer_check_indices(g, n, ind, &s->dims[axis], 1, d))
        return -1;
    int orank = s->rank - 1 + is->rank;
    if (orank > IR_MAX_RANK)
        return ir_node_error(g, n, d, "the output would have rank %d; at most %d is supported", orank,
                             IR_MAX_RANK);
    IrShape o = { .rank = orank };
    int k = 0;
    for (int i = 0; i < axis; i++)
        o.dims[k++] = s->dims[i];
    for (int i = 0; i < is->rank; i++)
        o.dims[k++] = is->dims[i];
    for (int i = axis + 1; i < s->rank; i++)
        o.dims[k++] = s->dims[i];
    ir_infer_set(g, n, 0, x->v.dtype, &o);
    return 0;
}

int ir_infer_gatherelements(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = ir_in(g, n, 0), *ind = ir_in(g, n, 1);
    const IrShape *s = &x->v.shape, *is = &ind->v.shape;
    int axis = gather_axis(g, n, d);
    if (axis < 0)
        return -1;
    char a[160], b[160];
    ir_shape_str(s, a, sizeof a);
    ir_shape_str(is, b, sizeof b);
    if (is->rank != s->rank)
        return ir_node_error(g, n, d, "indices %s must have the rank of the data %s", b, a);
    for (int i = 0; i < s->rank; i++)
        if (i != axis && is->dims[i] > s->dims[i])
            return ir_node_error(g, n, d, "indices %s exceed the data %s on axis %d", b, a, i);
    if (ir_infer_check_indices(g, n, ind, &s->dims[axis], 1, d))
        return -1;
    ir_infer_set(g, n, 0, x->v.dtype, is);
    return 0;
}

int ir_infer_gathernd(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = ir_in(g, n, 0), *ind = ir_in(g, n, 1);
    const IrShape *s = &x->v.shape, *is = &ind->v.shape;
    int64_t b = ir_attr_int(n, IR_A_batch_dims);
    int r = s->rank, q = is->rank;
    char a[160], c[160];
    ir_shape_str(s, a, sizeof a);
    ir_shape_str(is, c, sizeof c);
    if (r < 1 || q < 1)
        return ir_node_error(g, n, d, "data %s and indices %s must have rank >= 1", a, c);
    if (b < 0 || b >= r || b >= q)
        return ir_node_error(g, n, d, "batch_dims %lld must be in 0..%d for data %s and indices %s",
                             (long long)b, (r < q ? r : q) - 1, a, c);
    int64_t m = is->dims[q - 1];
    if (m < 1 || m > r - b)
        return ir_node_error(g, n, d, "the last dimension of indices %s is %lld; it must be in 1..%lld",
                             c, (long long)m, (long long)(r - b));
    for (int i = 0; i < b; i++)
        if (s->dims[i] != is->dims[i])
            return ir_node_error(g, n, d, "data %s and indices %s differ in batch dimension %d", a, c, i);
    if (ir_infer_check_indices(g, n, ind, &s->dims[b], m, d))
        return -1;
    IrShape o = { .rank = q - 1 + r - (int)b - (int)m };
    if (o.rank > IR_MAX_RANK)
        return ir_node_error(g, n, d, "the output would have rank %d; at most %d is supported", o.rank,
                             IR_MAX_RANK);
    int k = 0;
    for (int i = 0; i < q - 1; i++)
        o.dims[k++] = is->dims[i];
    for (int i = (int)(b + m); i < r; i++)
        o.dims[k++] = s->dims[i];
    ir_infer_set(g, n, 0, x->v.dtype, &o);
    return 0;
}

int ir_infer_shape(IrGraph *g, IrNode *n, UtilDiag *d)
{
    (void)d;
    int64_t r = ir_in(g, n, 0)->v.shape.rank;
    int64_t start = ir_attr_int(n, IR_A_start), end = ir_has_attr(n, IR_A_end) ? ir_attr_int(n, IR_A_end) : r;
    if (start < 0)
        start += r;
    if (end < 0)
        end += r;
    start = start < 0 ? 0 : start > r ? r : start;
    end = end < 0 ? 0 : end > r ? r : end;
    IrShape o = { .rank = 1, .dims = { end > start ? end - start : 0 } };
    ir_infer_set(g, n, 0, IR_DT_I64, &o);
    return 0;
}

int ir_infer_size(IrGraph *g, IrNode *n, UtilDiag *d)
{
    (void)d;
    IrShape o = { .rank = 0 };
    ir_infer_set(g, n, 0, IR_DT_I64, &o);
    return 0;
}

int ir_infer_constant(IrGraph *g, IrNode *n, UtilDiag *d)
{
    static const IrAttrKey keys[] = { IR_A_value, IR_A_value_float, IR_A_value_floats, IR_A_value_int,
                                      IR_A_value_ints, IR_A_value_string, IR_A_value_strings,
                                      IR_A_sparse_value };
    int set = 0;
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        set += ir_has_attr(n, keys[i]);
    if (set != 1)
        return ir_node_error(g, n, d, "exactly one value attribute must be given (%d are)", set);
    if (ir_has_attr(n, IR_A_value_string) || ir_has_attr(n, IR_A_value_strings))
        return ir_node_error(g, n, d, "string constants are unsupported");
    if (ir_has_attr(n, IR_A_sparse_value))
        return ir_node_error(g, n, d, "sparse constants are unsupported");
    IrShape o = { .rank = 0 };
    IrDType dt = IR_DT_F32;
    if (ir_has_attr(n, IR_A_value)) {
        const IrArray *v = ir_attr(n, IR_A_value)->v.tensor;
        o = v->shape;
        dt = v->dtype;
    } else if (ir_has_attr(n, IR_A_value_floats)) {
        o.rank = 1;
        o.dims[0] = ir_attr(n, IR_A_value_floats)->n;
    } else if (ir_has_attr(n, IR_A_value_ints)) {
        o.rank = 1;
        o.dims[0] = ir_attr(n, IR_A_value_ints)->n;
        dt = IR_DT_I64;
    } else if (ir_has_attr(n, IR_A_value_int)) {
        dt = IR_DT_I64;
    }
    ir_infer_set(g, n, 0, dt, &o);
    return 0;
}

int ir_infer_constantofshape(IrGraph *g, IrNode *n, UtilDiag *d)
{
    int64_t sh[IR_MAX_RANK];
    int cnt = ir_infer_const_ints(g, n, 0, "shape", sh, IR_MAX_RANK, d);
    if (cnt < 0)
        return -1;
    IrShape o = { .rank = cnt };
    for (int i = 0; i < cnt; i++) {
        if (sh[i] < 0)
            return ir_node_error(g, n, d, "shape value %lld is negative", (long long)sh[i]);
        o.dims[i] = sh[i];
    }
    IrDType dt = IR_DT_F32;
    if (ir_has_attr(n, IR_A_value)) {
        const IrArray *v = ir_attr(n, IR_A_value)->v.tensor;
        if (ir_array_numel(v) != 1)
            return ir_node_error(g, n, d, "the value attribute must hold exactly one element, not %lld",
                                 (long long)ir_array_numel(v));
        dt = v->dtype;
    }
    ir_infer_set(g, n, 0, dt, &o);
    return 0;
}

int ir_infer_pad(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = ir_in(g, n, 0), *cv = ir_in(g, n, 2);
    const IrShape *s = &x->v.shape;
    int r = s->rank;
    const char *mode = ir_attr_str(n, IR_A_mode);
    if (strcmp(mode, "constant") && strcmp(mode, "reflect") && strcmp(mode, "edge") && strcmp(mode, "wrap"))
        return ir_node_error(g, n, d, "mode '%s' is not one of constant, reflect, edge, wrap", mode);
    int64_t pads[2 * IR_MAX_RANK], axes[IR_MAX_RANK], na[IR_MAX_RANK];
    int np = ir_infer_const_ints(g, n, 1, "pads", pads, 2 * IR_MAX_RANK, d);
    if (np < 0)
        return -1;
    int nax = r;
    if (ir_in(g, n, 3)) {
        nax = ir_infer_const_ints(g, n, 3, "axes", axes, IR_MAX_RANK, d);
        if (nax < 0 || norm_axes(g, n, "axes", axes, nax, r, na, d))
            return -1;
    } else {
        for (int i = 0; i < r; i++)
            na[i] = i;
    }
    if (np != 2 * nax)
        return ir_node_error(g, n, d, "pads has %d values; %d are needed (begin and end for %d axes)", np,
                             2 * nax, nax);
    if (cv) {
        if (cv->v.dtype != x->v.dtype)
            return ir_node_error(g, n, d, "constant_value is %s but the data is %s", ir_dtype_name(cv->v.dtype),
                                 ir_dtype_name(x->v.dtype));
        if (ir_shape_numel(&cv->v.shape) > 1)
            return ir_node_error(g, n, d, "constant_value must be a scalar");
    }
    IrShape o = *s;
    for (int i = 0; i < nax; i++) {
        int a = (int)na[i];
        int64_t b = pads[i], e = pads[i + nax], v;
        if (util_add_overflow_i64(s->dims[a], b, &v) || util_add_overflow_i64(v, e, &v) ||
            v > IR_MAX_ELEMENTS)
            return ir_node_error(g, n, d, "pads on axis %d are too large", a);
        if (v < 0)
            return ir_node_error(g, n, d, "pads %lld, %lld crop axis %d of size %lld below zero", (long long)b,
                                 (long long)e, a, (long long)s->dims[a]);
        if (strcmp(mode, "constant") && s->dims[a] == 0 && v > 0)
            return ir_node_error(g, n, d, "cannot pad the empty axis %d in %s mode", a, mode);
        o.dims[a] = v;
    }
    ir_infer_set(g, n, 0, x->v.dtype, &o);
    return 0;
}

int ir_infer_expand(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = ir_in(g, n, 0);
    int64_t sh[IR_MAX_RANK];
    int cnt = ir_infer_const_ints(g, n, 1, "shape", sh, IR_MAX_RANK, d);
    if (cnt < 0)
        return -1;
    IrShape t = { .rank = cnt }, o;
    for (int i = 0; i < cnt; i++) {
        if (sh[i] < 0)
            return ir_node_error(g, n, d, "shape value %lld is negative", (long long)sh[i]);
        t.dims[i] = sh[i];
    }
    if (ir_broadcast_shapes(g, n, &x->v.shape, &t, &o, d))
        return -1;
    ir_infer_set(g, n, 0, x->v.dtype, &o);
    return 0;
}

int ir_infer_tile(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = ir_in(g, n, 0);
    const IrShape *s = &x->v.shape;
    int64_t rep[IR_MAX_RANK];
    int cnt = ir_infer_const_ints(g, n, 1, "repeats", rep, IR_MAX_RANK, d);
    if (cnt < 0)
        return -1;
    if (cnt != s->rank)
        return ir_node_error(g, n, d, "repeats has %d values but the input has rank %d", cnt, s->rank);
    IrShape o = *s;
    for (int i = 0; i < cnt; i++) {
        if (rep[i] < 0)
            return ir_node_error(g, n, d, "repeats value %lld is negative", (long long)rep[i]);
        if (util_mul_overflow_i64(s->dims[i], rep[i], &o.dims[i]) || o.dims[i] > IR_MAX_ELEMENTS)
            return ir_node_error(g, n, d, "repeats make axis %d too large", i);
    }
    ir_infer_set(g, n, 0, x->v.dtype, &o);
    return 0;
}

int ir_infer_range(IrGraph *g, IrNode *n, UtilDiag *d)
{
    static const char *names[3] = { "start", "limit", "delta" };
    const IrTensor *t[3];
    for (int i = 0; i < 3; i++) {
        t[i] = ir_in(g, n, i);
        if (ir_shape_numel(&t[i]->v.shape) != 1 || t[i]->v.shape.rank > 1)
            return ir_node_error(g, n, d, "%s must be a scalar", names[i]);
        if (t[i]->v.dtype != t[0]->v.dtype)
            return ir_node_error(g, n, d, "%s is %s but start is %s", names[i], ir_dtype_name(t[i]->v.dtype),
                                 ir_dtype_name(t[0]->v.dtype));
        if (!t[i]->v.data) {
            g->need_value = n->in[i];
            return ir_node_error(g, n, d, "%s '%s' must be a constant or computable at compile time "
                                 "(dlcc compiles static shapes)", names[i], t[i]->name);
        }
    }
    IrDType dt = t[0]->v.dtype;
    if (!ir_dtype_is_float(dt) && !ir_dtype_is_int(dt))
        return ir_node_error(g, n, d, "Range does not support %s", ir_dtype_name(dt));
    double cnt;
    if (ir_dtype_is_float(dt)) {
        double a = ir_load_f64(dt, t[0]->v.data, 0), b = ir_load_f64(dt, t[1]->v.data, 0),
               c = ir_load_f64(dt, t[2]->v.data, 0);
        if (c == 0)
            return ir_node_error(g, n, d, "delta is 0");
        cnt = ceil((b - a) / c);
    } else {
        int64_t a = ir_load_i64(dt, t[0]->v.data, 0), b = ir_load_i64(dt, t[1]->v.data, 0),
                c = ir_load_i64(dt, t[2]->v.data, 0);
        if (c == 0)
            return ir_node_error(g, n, d, "delta is 0");
        cnt = ceil(((double)b - (double)a) / (double)c);
    }
    if (!(cnt <= (double)IR_MAX_ELEMENTS))
        return ir_node_error(g, n, d, "the range has too many elements");
    IrShape o = { .rank = 1, .dims = { cnt > 0 ? (int64_t)cnt : 0 } };
    ir_infer_set(g, n, 0, dt, &o);
    return 0;
}

/* Shared by DepthToSpace and SpaceToDepth: NCHW input and a positive blocksize. */
static int block_operands(IrGraph *g, IrNode *n, const IrShape **s, int64_t *bs, UtilDiag *d)
{
    *s = &ir_in(g, n, 0)->v.shape;
    if ((*s)->rank != 4)
        return ir_node_error(g, n, d, "the input must have rank 4 (NCHW), not %d", (*s)->rank);
    if (!ir_has_attr(n, IR_A_blocksize))
        return ir_node_error(g, n, d, "the blocksize attribute is required");
    *bs = ir_attr_int(n, IR_A_blocksize);
    if (*bs <= 0 || *bs > 65536)
        return ir_node_error(g, n, d, "blocksize %lld is out of range (1..65536)", (long long)*bs);
    return 0;
}

int ir_infer_depthtospace(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrShape *s;
    int64_t b;
    if (block_operands(g, n, &s, &b, d))
        return -1;
    const char *mode = ir_attr_str(n, IR_A_mode);
    if (strcmp(mode, "DCR") && strcmp(mode, "CRD"))
        return ir_node_error(g, n, d, "mode '%s' is not DCR or CRD", mode);
    if (s->dims[1] % (b * b) != 0)
        return ir_node_error(g, n, d, "channels %lld are not a multiple of blocksize^2 = %lld",
                             (long long)s->dims[1], (long long)(b * b));
    IrShape o = { .rank = 4, .dims = { s->dims[0], s->dims[1] / (b * b), s->dims[2] * b, s->dims[3] * b } };
    ir_infer_set(g, n, 0, ir_in(g, n, 0)->v.dtype, &o);
    return 0;
}

int ir_infer_spacetodepth(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrShape *s;
    int64_t b;
    if (block_operands(g, n, &s, &b, d))
        return -1;
    if (s->dims[2] % b != 0 || s->dims[3] % b != 0)
        return ir_node_error(g, n, d, "height %lld and width %lld must be multiples of blocksize %lld",
                             (long long)s->dims[2], (long long)s->dims[3], (long long)b);
    IrShape o = { .rank = 4, .dims = { s->dims[0], s->dims[1] * b * b, s->dims[2] / b, s->dims[3] / b } };
    ir_infer_set(g, n, 0, ir_in(g, n, 0)->v.dtype, &o);
    return 0;
}
