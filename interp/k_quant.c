/* interp/k_quant.c — quantization kernels: QuantizeLinear, DequantizeLinear,
 * DynamicQuantizeLinear, and the integer products MatMulInteger,
 * ConvInteger, QLinearMatMul, QLinearConv.
 *
 * The products subtract the zero points into a wide temporary (int32 for
 * matmuls, float64 for convolutions: exact for any 8-bit inputs) and run the
 * existing MatMul / Conv kernels on it (interp_k_matmul, interp_k_conv:
 * same indexing, same window geometry), then requantize.
 *
 * Rounding follows the ONNX reference: round half to even; the division
 * x / scale (QuantizeLinear) and the multiplier a_scale * b_scale / y_scale
 * are computed in the scale's precision (float32 for float32 scales), the
 * final product in double; results saturate to the target type. */
#include "interp/kernels.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* v rounded to the precision of float type t. */
static double round_to(IrDType t, double v)
{
    unsigned char buf[8];
    if (t == IR_DT_F64)
        return v;
    ir_store_f64(t, buf, 0, v);
    return ir_load_f64(t, buf, 0);
}

static int alloc_like(IrArray *dst, IrDType dt, const IrShape *s)
{
    dst->dtype = dt;
    dst->shape = *s;
    int64_t n = ir_shape_numel(s);
    dst->data = calloc(n > 0 ? (size_t)n : 1, ir_dtype_size(dt));
    return dst->data ? 0 : -1;
}

/* ------------------------------------------- Quantize / DequantizeLinear */

/* Flat index of the scale / zero point for x's element at multi-index idx:
 * one element (per tensor), [D_axis] (per axis) or blocked. */
static int64_t qparam_index(const IrShape *ps, int axis, int64_t bs, const int64_t *idx)
{
    if (ir_shape_numel(ps) == 1)
        return 0;
    if (bs == 0)
        return idx[axis];
    int64_t off = 0;
    for (int i = 0; i < ps->rank; i++)
        off = off * ps->dims[i] + (i == axis ? idx[i] / bs : idx[i]);
    return off;
}

static int qaxis(const IrNode *n, int rank)
{
    int64_t a = ir_attr_int(n, IR_A_axis);
    return (int)(a < 0 ? a + rank : a);
}

/* The precision of x / scale: the precision attribute, else numpy's: the
 * common float type of x and scale (float64 for int32 x). */
static IrDType quant_precision(const IrNode *n, IrDType x, IrDType s)
{
    int64_t p = ir_attr_int(n, IR_A_precision);
    if (p)
        return ir_dtype_from_onnx((int)p);
    if (x == IR_DT_I32 || s == IR_DT_I32)
        return IR_DT_F64;
    return x == s ? x : IR_DT_F32;
}

int interp_k_quantize(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out, UtilDiag *d)
{
    (void)g;
    (void)d;
    const IrArray *x = in[0], *sc = in[1], *zp = n->n_in > 2 ? in[2] : NULL;
    IrArray *y = out[0];
    IrDType prec = quant_precision(n, x->dtype, sc->dtype);
    int axis = qaxis(n, x->shape.rank);
    int64_t bs = ir_attr_int(n, IR_A_block_size), cnt = ir_array_numel(x), idx[IR_MAX_RANK] = { 0 };
    for (int64_t i = 0; i < cnt; i++, interp_next_index(&x->shape, idx)) {
        int64_t p = qparam_index(&sc->shape, axis, bs, idx);
        double xv = round_to(prec, ir_load_f64(x->dtype, x->data, i));
        double sv = round_to(prec, ir_load_f64(sc->dtype, sc->data, p));
        double q = nearbyint(round_to(prec, xv / sv));          /* ties to even */
        if (zp)
            q += (double)ir_load_i64(zp->dtype, zp->data, p);
        if (isnan(q) && ir_dtype_is_int(y->dtype))              /* NaN: the type's minimum, as ONNX Runtime */
            ir_dtype_int_range(y->dtype, &q, &(double){ 0 });
        ir_store_f64(y->dtype, y->data, i, q);                  /* saturates */
    }
    return 0;
}

int interp_k_dequantize(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out,
                        UtilDiag *d)
{
    (void)g;
    (void)d;
    const IrArray *x = in[0], *sc = in[1], *zp = n->n_in > 2 ? in[2] : NULL;
    IrArray *y = out[0];
    int axis = qaxis(n, x->shape.rank);
    int64_t bs = ir_attr_int(n, IR_A_block_size), cnt = ir_array_numel(x), idx[IR_MAX_RANK] = { 0 };
    for (int64_t i = 0; i < cnt; i++, interp_next_index(&x->shape, idx)) {
        int64_t p = qparam_index(&sc->shape, axis, bs, idx);
        float v = (float)ir_load_i64(x->dtype, x->data, i);     /* float32 arithmetic, as ONNX's reference */
        if (zp)
            v -= (float)ir_load_i64(zp->dtype, zp->data, p);
        ir_store_f64(y->dtype, y->data, i, (double)(v * (float)ir_load_f64(sc->dtype, sc->data, p)));
    }
    return 0;
}

/* uint8 over [min(x, 0), max(x, 0)], all in float32 (ONNX's formula). */
int interp_k_dynquantize(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out,
                         UtilDiag *d)
{
    (void)g;
    (void)n;
    (void)d;
    const float *x = in[0]->data;
    int64_t cnt = ir_array_numel(in[0]);
    float lo = 0.0f, hi = 0.0f;
    for (int64_t i = 0; i < cnt; i++) {
        lo = x[i] < lo ? x[i] : lo;
        hi = x[i] > hi ? x[i] : hi;
    }
    float scale = (hi == lo ? 1.0f : hi - lo) / 255.0f;
    float zpf = 0.0f - lo / scale;
    zpf = zpf < 0.0f ? 0.0f : zpf > 255.0f ? 255.0f : zpf;
    float zp = nearbyintf(zpf);
    for (int64_t i = 0; i < cnt; i++)
        ir_store_f64(IR_DT_U8, out[0]->data, i, (double)(nearbyintf(x[i] / scale) + zp));
    if (out[1])
        ((float *)out[1]->data)[0] = scale;
    if (out[2])
        ((uint8_t *)out[2]->data)[0] = (uint8_t)zp;
    return 0;
}

/* ------------------------------------------------ integer matmuls */

/* The shape a matmul quantization parameter broadcasts with against its
 * operand x: one element = rank 0; a's per-row [M] = [M, 1]; otherwise as
 * given (right-aligned). */
static IrShape mm_param_shape(const IrArray *p, const IrShape *x, int is_a)
{
    IrShape s = p->shape;
    if (ir_shape_numel(&s) == 1)
        s.rank = 0;
    else if (is_a && s.rank == 1 && x->rank >= 2) {
        s.rank = 2;
        s.dims[1] = 1;
    }
    return s;
}

/* dst (dtype dt, x's shape) = x - zp, zp broadcast through shape zs. */
static int sub_zero_point(const IrArray *x, const IrArray *zp, const IrShape *zs, IrDType dt, IrArray *dst)
{
    if (alloc_like(dst, dt, &x->shape))
        return -1;
    int64_t cnt = ir_array_numel(x), idx[IR_MAX_RANK] = { 0 };
    for (int64_t i = 0; i < cnt; i++, interp_next_index(&x->shape, idx)) {
        int64_t z = zp ? ir_load_i64(zp->dtype, zp->data, interp_bcast_index(zs, idx, x->shape.rank)) : 0;
        ir_store_i64(dt, dst->data, i, ir_load_i64(x->dtype, x->data, i) - z);
    }
    return 0;
}

/* acc = (a - a_zp) @ (b - b_zp) in int32 (wrapping, as ONNX allows). */
static int mm_shifted(const IrGraph *g, const IrNode *n, const IrArray *a, const IrArray *az, const IrArray *b,
                      const IrArray *bz, IrArray *acc, UtilDiag *d)
{
    IrArray a2 = { 0 }, b2 = { 0 };
    IrShape azs = az ? mm_param_shape(az, &a->shape, 1) : a->shape, bzs = bz ? mm_param_shape(bz, &b->shape, 0) : b->shape;
    int rc = -1;
    if (!sub_zero_point(a, az, &azs, IR_DT_I32, &a2) && !sub_zero_point(b, bz, &bzs, IR_DT_I32, &b2)) {
        const IrArray *mm_in[2] = { &a2, &b2 };
        IrArray *mm_out[1] = { acc };
        rc = interp_k_matmul(g, n, mm_in, mm_out, d);
    } else
        rc = ir_node_error(g, n, d, "out of memory");
    free(a2.data);
    free(b2.data);
    return rc;
}

int interp_k_matmulinteger(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out,
                           UtilDiag *d)
{
    return mm_shifted(g, n, in[0], n->n_in > 2 ? in[2] : NULL, in[1], n->n_in > 3 ? in[3] : NULL, out[0], d);
}

/* Requantizes acc * multiplier + zp into y (ties to even, saturating); the
 * multiplier a_s * b_s / y_s is formed in the scales' precision, the product
 * acc * multiplier in float32 (double for float64 scales), as ONNX Runtime
 * computes it: a product within float32 rounding of a tie rounds as there. */
static void requantize(IrArray *y, int64_t i, double acc, IrDType sdt, double s1, double s2, double ys, double zp)
{
    double m = round_to(sdt, round_to(sdt, s1 * s2) / ys);
    double v = sdt == IR_DT_F64 ? acc * m : (double)((float)acc * (float)m);
    ir_store_f64(y->dtype, y->data, i, nearbyint(v) + zp);
}

int interp_k_qlinearmatmul(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out,
                           UtilDiag *d)
{
    const IrArray *a = in[0], *as = in[1], *b = in[3], *bs = in[4], *ys = in[6], *yz = in[7];
    IrArray *y = out[0], acc = { 0 };
    if (alloc_like(&acc, IR_DT_I32, &y->shape))
        return ir_node_error(g, n, d, "out of memory");
    if (mm_shifted(g, n, a, in[2], b, in[5], &acc, d)) {
        free(acc.data);
        return -1;
    }
    /* per-row a_scale / per-column b_scale: map each output element back to
     * an element of row i of a and of column j of b */
    IrShape ass = mm_param_shape(as, &a->shape, 1), bss = mm_param_shape(bs, &b->shape, 0);
    int ra = a->shape.rank, rb = b->shape.rank, R = y->shape.rank;
    double ysv = ir_load_f64(ys->dtype, ys->data, 0), zp = (double)ir_load_i64(yz->dtype, yz->data, 0);
    int64_t cnt = ir_array_numel(y), o[IR_MAX_RANK] = { 0 };
    for (int64_t t = 0; t < cnt; t++, interp_next_index(&y->shape, o)) {
        int64_t ai[IR_MAX_RANK] = { 0 }, bi[IR_MAX_RANK] = { 0 };
        int ob = R - (ra >= 2) - (rb >= 2);                    /* output batch rank */
        for (int k = 0; k < ra - 2; k++)
            ai[k] = o[ob - (ra - 2) + k];
        for (int k = 0; k < rb - 2; k++)
            bi[k] = o[ob - (rb - 2) + k];
        if (ra >= 2)
            ai[ra - 2] = o[ob];
        if (rb >= 2)
            bi[rb - 1] = o[R - 1];
        double s1 = ir_load_f64(as->dtype, as->data, interp_bcast_index(&ass, ai, ra));
        double s2 = ir_load_f64(bs->dtype, bs->data, interp_bcast_index(&bss, bi, rb));
        requantize(y, t, (double)((const int32_t *)acc.data)[t], as->dtype, s1, s2, ysv, zp);
    }
    free(acc.data);
    return 0;
}

/* ---------------------------------------------- integer convolutions */

/* acc (float64, y's shape) = Conv(x - x_zp, w - w_zp[m]) + bias, through
 * Conv's kernel (node n carries Conv's attributes). */
static int conv_shifted(const IrGraph *g, const IrNode *n, const IrArray *x, const IrArray *xz, const IrArray *w,
                        const IrArray *wz, const IrArray *bias, IrArray *acc, UtilDiag *d)
{
    IrArray x2 = { 0 }, w2 = { 0 }, b2 = { 0 };
    IrShape scalar = { .rank = 0 }, per_m = { .rank = w->shape.rank };
    for (int i = 0; i < per_m.rank; i++)
        per_m.dims[i] = i ? 1 : w->shape.dims[0];              /* [M, 1, 1, ...] */
    const IrShape *wzs = wz && ir_array_numel(wz) > 1 ? &per_m : &scalar;
    int rc;
    if (sub_zero_point(x, xz, &scalar, IR_DT_F64, &x2) || sub_zero_point(w, wz, wzs, IR_DT_F64, &w2) ||
        (bias && sub_zero_point(bias, NULL, &scalar, IR_DT_F64, &b2)))
        rc = ir_node_error(g, n, d, "out of memory");
    else {
        const IrArray *c_in[3] = { &x2, &w2, bias ? &b2 : NULL };
        IrArray *c_out[1] = { acc };
        rc = interp_k_conv(g, n, c_in, c_out, d);
    }
    free(x2.data);
    free(w2.data);
    free(b2.data);
    return rc;
}

int interp_k_convinteger(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out,
                         UtilDiag *d)
{
    IrArray acc = { 0 };
    if (alloc_like(&acc, IR_DT_F64, &out[0]->shape))
        return ir_node_error(g, n, d, "out of memory");
    int rc = conv_shifted(g, n, in[0], n->n_in > 2 ? in[2] : NULL, in[1], n->n_in > 3 ? in[3] : NULL, NULL, &acc, d);
    int64_t cnt = ir_array_numel(out[0]);
    for (int64_t i = 0; !rc && i < cnt; i++)              /* exact: |acc| < 2^53; wraps to int32 like ONNX */
        ir_store_i64(IR_DT_I32, out[0]->data, i, (int64_t)((const double *)acc.data)[i]);
    free(acc.data);
    return rc;
}

int interp_k_qlinearconv(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out,
                         UtilDiag *d)
{
    const IrArray *xs = in[1], *ws = in[4], *ys = in[6], *yz = in[7];
    IrArray *y = out[0], acc = { 0 };
    if (alloc_like(&acc, IR_DT_F64, &y->shape))
        return ir_node_error(g, n, d, "out of memory");
    int rc = conv_shifted(g, n, in[0], in[2], in[3], in[5], n->n_in > 8 ? in[8] : NULL, &acc, d);
    int64_t M = y->shape.dims[1], plane = 1;
    for (int i = 2; i < y->shape.rank; i++)
        plane *= y->shape.dims[i];
    double xsv = ir_load_f64(xs->dtype, xs->data, 0), ysv = ir_load_f64(ys->dtype, ys->data, 0);
    double zp = (double)ir_load_i64(yz->dtype, yz->data, 0);
    int64_t cnt = ir_array_numel(y);
    for (int64_t i = 0; !rc && i < cnt; i++) {
        int64_t m = (i / plane) % M;
        double wsv = ir_load_f64(ws->dtype, ws->data, ir_array_numel(ws) > 1 ? m : 0);
        requantize(y, i, ((const double *)acc.data)[i], xs->dtype, xsv, wsv, ysv, zp);
    }
    free(acc.data);
    return rc;
}
