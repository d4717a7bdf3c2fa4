/* interp/k_linalg.c — reference kernels of Einsum (any equation ir_einsum
 * parses: implicit/explicit output, ellipsis broadcasting, repeated labels as
 * diagonals), Trilu, CumSum, TopK (ties broken by the lower index, as ONNX
 * requires) and Det (LU with partial pivoting).  Floats compute in double,
 * integers in int64 (exact). */
#include "interp/kernels.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static double ld(const IrArray *a, int64_t i) { return ir_load_f64(a->dtype, a->data, i); }

/* --------------------------------------------------------------- Einsum */

int interp_k_einsum(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out, UtilDiag *d)
{
    const IrShape *shp[IR_EINSUM_MAX_IN];
    for (int i = 0; i < n->n_in && i < IR_EINSUM_MAX_IN; i++)
        shp[i] = &in[i]->shape;
    IrEinsum e;
    if (ir_einsum(g, n, shp, n->n_in, &e, d))
        return -1;
    /* per operand (inputs, then the output as operand n_in): element stride of each label */
    int64_t (*stride)[IR_EINSUM_MAX_LABELS] = calloc((size_t)e.n_in + 1, sizeof *stride);
    IrArray *y = out[0];
    int64_t ny = ir_array_numel(y), total = 1;
    int isf = ir_dtype_is_float(y->dtype);
    double *accf = calloc((size_t)ny + 1, sizeof *accf);
    int64_t *acci = calloc((size_t)ny + 1, sizeof *acci);
    if (!stride || !accf || !acci) {
        free(stride);
        free(accf);
        free(acci);
        return ir_node_error(g, n, d, "out of memory");
    }
    for (int i = 0; i <= e.n_in; i++) {
        int64_t st[IR_MAX_RANK];
        const IrShape *s = i < e.n_in ? shp[i] : &y->shape;
        const int *lab = i < e.n_in ? e.label[i] : e.out_label;
        interp_strides(s, st);
        for (int k = 0; k < s->rank; k++)
            if (s->dims[k] != 1 || e.size[lab[k]] == 1)
                stride[i][lab[k]] += st[k];
    }
    for (int l = 0; l < e.n_labels; l++)
        total *= e.size[l];
    int64_t idx[IR_EINSUM_MAX_LABELS] = { 0 };
    for (int64_t it = 0; it < total; it++) {
        double pf = 1.0;
        int64_t pi = 1, oo = 0;
        for (int i = 0; i <= e.n_in; i++) {
            int64_t off = 0;
            for (int l = 0; l < e.n_labels; l++)
                off += idx[l] * stride[i][l];
            if (i == e.n_in)
                oo = off;
            else if (isf)
                pf *= ld(in[i], off);
            else
                pi *= ir_load_i64(in[i]->dtype, in[i]->data, off);
        }
        if (isf)
            accf[oo] += pf;
        else
            acci[oo] += pi;
        for (int l = e.n_labels - 1; l >= 0; l--) {
            if (++idx[l] < e.size[l])
                break;
            idx[l] = 0;
        }
    }
    for (int64_t i = 0; i < ny; i++) {
        if (isf)
            ir_store_f64(y->dtype, y->data, i, accf[i]);
        else
            ir_store_i64(y->dtype, y->data, i, acci[i]);
    }
    free(stride);
    free(accf);
    free(acci);
    return 0;
}

/* ---------------------------------------------------------------- Trilu */

int interp_k_trilu(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out, UtilDiag *d)
{
    const IrArray *x = in[0];
    int r = x->shape.rank;
    int64_t rows = x->shape.dims[r - 2], cols = x->shape.dims[r - 1], nx = ir_array_numel(x);
    int64_t k = n->n_in > 1 && in[1] ? ir_load_i64(in[1]->dtype, in[1]->data, 0) : 0;
    int upper = ir_attr_int(n, IR_A_upper) != 0;
    size_t es = ir_dtype_size(x->dtype);
    (void)g;
    (void)d;
    for (int64_t i = 0; i < nx; i++) {
        int64_t col = i % cols, row = i / cols % rows;
        if (upper ? col - row >= k : col - row <= k)
            memcpy((char *)out[0]->data + (size_t)i * es, (const char *)x->data + (size_t)i * es, es);
    }
    return 0;
}

/* --------------------------------------------------------------- CumSum */

int interp_k_cumsum(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out, UtilDiag *d)
{
    const IrArray *x = in[0];
    IrArray *y = out[0];
    int r = x->shape.rank;
    int64_t a = ir_load_i64(in[1]->dtype, in[1]->data, 0);
    if (a < -r || a >= r)
        return ir_node_error(g, n, d, "axis %lld is out of range for rank %d", (long long)a, r);
    if (a < 0)
        a += r;
    int64_t len = x->shape.dims[a], inner = 1, nx = ir_array_numel(x);
    for (int i = (int)a + 1; i < r; i++)
        inner *= x->shape.dims[i];
    int excl = ir_attr_int(n, IR_A_exclusive) != 0, rev = ir_attr_int(n, IR_A_reverse) != 0;
    int isf = ir_dtype_is_float(x->dtype);
    for (int64_t o = 0; o < (len > 0 && inner > 0 ? nx / (len * inner) : 0); o++)
        for (int64_t s = 0; s < inner; s++) {
            double sf = 0.0;
            int64_t si = 0;
            for (int64_t t = 0; t < len; t++) {
                int64_t i = (o * len + (rev ? len - 1 - t : t)) * inner + s;
                if (excl) {
                    if (isf)
                        ir_store_f64(y->dtype, y->data, i, sf);
                    else
                        ir_store_i64(y->dtype, y->data, i, si);
                }
                if (isf)
                    sf += ld(x, i);
                else
                    si += ir_load_i64(x->dtype, x->data, i);
                if (!excl) {
                    if (isf)
                        ir_store_f64(y->dtype, y->data, i, sf);
                    else
                        ir_store_i64(y->dtype, y->data, i, si);
                }
            }
        }
    return 0;
}

/* ----------------------------------------------------------------- TopK */

typedef struct TopkItem {
    double f;
    int64_t v;          /* integer value (integer inputs) */
    int64_t idx;
    int largest, isint;
} TopkItem;

/* Orders by value (descending when largest) then by index ascending. */
static int topk_cmp(const void *pa, const void *pb)
{
    const TopkItem *a = pa, *b = pb;
    int c = a->isint ? (a->v > b->v) - (a->v < b->v) : (a->f > b->f) - (a->f < b->f);
    if (a->largest)
        c = -c;
    return c ? c : (a->idx > b->idx) - (a->idx < b->idx);
}

int interp_k_topk(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out, UtilDiag *d)
{
    const IrArray *x = in[0];
    IrArray *vals = out[0], *inds = out[1];
    int r = x->shape.rank, a = (int)ir_attr_int(n, IR_A_axis);
    if (a < 0)
        a += r;
    int64_t len = x->shape.dims[a], k = vals->shape.dims[a], inner = 1, nx = ir_array_numel(x);
    for (int i = a + 1; i < r; i++)
        inner *= x->shape.dims[i];
    int largest = ir_attr_int(n, IR_A_largest) != 0, isint = !ir_dtype_is_float(x->dtype);
    TopkItem *it = malloc(((size_t)len + 1) * sizeof *it);
    if (!it)
        return ir_node_error(g, n, d, "out of memory");
    for (int64_t o = 0; o < (len > 0 && inner > 0 ? nx / (len * inner) : 0); o++)
        for (int64_t s = 0; s < inner; s++) {
            for (int64_t t = 0; t < len; t++) {
                int64_t i = (o * len + t) * inner + s;
                it[t] = (TopkItem){ .idx = t, .largest = largest, .isint = isint };
                if (isint)
                    it[t].v = ir_load_i64(x->dtype, x->data, i);
                else
                    it[t].f = ld(x, i);
            }
            qsort(it, (size_t)len, sizeof *it, topk_cmp);
            for (int64_t t = 0; t < k; t++) {
                int64_t j = (o * k + t) * inner + s;
                if (isint)
                    ir_store_i64(vals->dtype, vals->data, j, it[t].v);
                else
                    ir_store_f64(vals->dtype, vals->data, j, it[t].f);
                if (inds)
                    ir_store_i64(inds->dtype, inds->data, j, it[t].idx);
            }
        }
    free(it);
    return 0;
}

/* ------------------------------------------------------------------ Det */

int interp_k_det(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out, UtilDiag *d)
{
    const IrArray *x = in[0];
    int r = x->shape.rank;
    int64_t m = x->shape.dims[r - 1], count = ir_array_numel(out[0]);
    double *a = malloc(((size_t)(m * m) + 1) * sizeof *a);
    if (!a)
        return ir_node_error(g, n, d, "out of memory");
    for (int64_t b = 0; b < count; b++) {
        for (int64_t i = 0; i < m * m; i++)
            a[i] = ld(x, b * m * m + i);
        double det = 1.0;
        for (int64_t c = 0; c < m && det != 0.0; c++) {
            int64_t p = c;
            for (int64_t i = c + 1; i < m; i++)
                if (fabs(a[i * m + c]) > fabs(a[p * m + c]))
                    p = i;
            if (a[p * m + c] == 0.0) {
                det = 0.0;
                break;
            }
            if (p != c) {
                for (int64_t j = 0; j < m; j++) {
                    double t = a[c * m + j];
                    a[c * m + j] = a[p * m + j];
                    a[p * m + j] = t;
                }
                det = -det;
            }
            det *= a[c * m + c];
            for (int64_t i = c + 1; i < m; i++) {
                double f = a[i * m + c] / a[c * m + c];
                for (int64_t j = c; j < m; j++)
                    a[i * m + j] -= f * a[c * m + j];
            }
        }
        ir_store_f64(out[0]->dtype, out[0]->data, b, det);
    }
    free(a);
    return 0;
}
