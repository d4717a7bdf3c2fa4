/* lower/quant.c — compute templates of QuantizeLinear and
 * DequantizeLinear (per tensor, per axis, blocked), following the reference
 * interpreter (interp/k_quant.c):
 *   Quantize:   y = saturate(round_even(x / scale) + zero_point), the
 *               division in the precision attribute's type (default: the
 *               common float type of x and scale, float64 for int32);
 *   Dequantize: y = (float(x) - float(zero_point)) * float(scale), float32.
 * Saturation is the loop IR's float-to-integer conversion (it saturates). */
#include "lower/lower_impl.h"

#include <math.h>

typedef struct Quant {
    int x, scale, zp;      /* buffers; zp -1 when absent */
    int axis;
    int64_t block;
    IrDType prec;          /* Quantize: the precision of x / scale */
} Quant;

/* Index of the scale / zero point for the element at vars. */
static LoopExpr *qparam_index(Low *L, const Quant *q, const int *vars)
{
    const LoopBuf *sb = low_buf(L, q->scale);
    if (ir_shape_numel(&sb->shape) == 1)
        return low_i(L, 0);
    if (q->block == 0)
        return low_v(L, vars[q->axis]);
    LoopExpr *idx[IR_MAX_RANK];
    for (int i = 0; i < sb->shape.rank; i++)
        idx[i] = i == q->axis ? low_bin(L, LOOP_DIV, low_v(L, vars[i]), low_i(L, q->block)) : low_v(L, vars[i]);
    return low_index(L, q->scale, idx);
}

static LoopExpr *xload(Low *L, const Quant *q, const int *vars, IrDType t)
{
    LoopExpr *idx[IR_MAX_RANK];
    for (int i = 0; i < low_buf(L, q->x)->shape.rank; i++)
        idx[i] = low_v(L, vars[i]);
    return low_load(L, q->x, low_index(L, q->x, idx), t);
}

/* v rounded to the precision of float type t (computed in its compute type). */
static LoopExpr *round_to(Low *L, LoopExpr *v, IrDType t)
{
    return t == low_ctype(t) ? v : loop_cast(L->p, low_ctype(t), loop_cast(L->p, t, v));
}

static LoopExpr *quantize_elem(Low *L, void *ctx, const int *vars, LoopStmt *body)
{
    const Quant *q = ctx;
    IrDType pt = low_ctype(q->prec);
    LoopExpr *pi = qparam_index(L, q, vars);
    LoopExpr *x = round_to(L, xload(L, q, vars, pt), q->prec);
    LoopExpr *s = round_to(L, low_load(L, q->scale, pi, pt), q->prec);
    LoopExpr *r = low_bin(L, LOOP_DIV, x, s);
    LoopExpr *v = loop_call(L->p, LOOP_I_round_even, 1, (LoopExpr *[]){ round_to(L, r, q->prec) });
    v = low_convert(L, v, IR_DT_F64);
    if (q->zp >= 0)
        v = low_bin(L, LOOP_ADD, v, low_load(L, q->zp, loop_expr_copy(L->p, pi), IR_DT_F64));
    IrDType yt = low_buf(L, low_out(L, 0))->dtype;
    if (!ir_dtype_is_int(yt))
        return v;
    /* NaN (0/0, inf/inf) quantizes to the type's minimum, as the interpreter and ONNX Runtime */
    double lo, hi;
    ir_dtype_int_range(yt, &lo, &hi);
    int qv = low_let(L, body, "q", v, 0);
    if (qv < 0)
        return NULL;
    return loop_select(L->p, low_bin(L, LOOP_EQ, low_v(L, qv), low_v(L, qv)), low_v(L, qv), low_const(L, IR_DT_F64, lo));
}

static LoopExpr *dequantize_elem(Low *L, void *ctx, const int *vars, LoopStmt *body)
{
    (void)body;
    const Quant *q = ctx;
    LoopExpr *pi = qparam_index(L, q, vars);
    LoopExpr *v = xload(L, q, vars, IR_DT_F32);
    if (q->zp >= 0)
        v = low_bin(L, LOOP_SUB, v, low_load(L, q->zp, loop_expr_copy(L->p, pi), IR_DT_F32));
    return low_bin(L, LOOP_MUL, v, low_load(L, q->scale, pi, IR_DT_F32));
}

static int quant_common(Low *L, LowElemFn f)
{
    const IrNode *n = L->n;
    Quant q = { .x = low_in(L, 0), .scale = low_in(L, 1), .zp = low_in(L, 2),
                .block = ir_attr_int(n, IR_A_block_size) };
    const LoopBuf *xb = low_buf(L, q.x), *sb = low_buf(L, q.scale);
    int64_t a = ir_attr_int(n, IR_A_axis);
    q.axis = (int)(a < 0 ? a + xb->shape.rank : a);
    int64_t p = ir_attr_int(n, IR_A_precision);
    q.prec = p ? ir_dtype_from_onnx((int)p)
           : xb->dtype == IR_DT_I32 || sb->dtype == IR_DT_I32 ? IR_DT_F64
           : xb->dtype == sb->dtype ? xb->dtype : IR_DT_F32;
    return low_map(L, low_out(L, 0), f, &q);
}

int low_quantize(Low *L) { return quant_common(L, quantize_elem); }
int low_dequantize(Low *L) { return quant_common(L, dequantize_elem); }

/* DynamicQuantizeLinear: uint8 over [min(x, 0), max(x, 0)], in float32:
 * scale = (hi - lo) / 255 (1/255 when hi == lo), zp = round(clamp(-lo /
 * scale, 0, 255)), y = saturate(round(x / scale) + zp).  One kernel: a
 * pass for the range, a pass for y. */
int low_dynquantize(Low *L)
{
    int x = low_in(L, 0), y = low_out(L, 0), ys = low_out(L, 1), yz = low_out(L, 2);
    IrDType t = IR_DT_F32;
    int64_t n = ir_shape_numel(&low_buf(L, x)->shape);
    LoopStmt *k = loop_block(L->p), *b1 = loop_block(L->p), *b2 = loop_block(L->p);
    int i1, i2;
    if (low_vars(L, 1, "i", &i1) || low_vars(L, 1, "i", &i2))
        return low_oom(L);
    int lo = low_let(L, k, "lo", low_const(L, t, 0), 1), hi = low_let(L, k, "hi", low_const(L, t, 0), 1);
    int v = low_let(L, b1, "v", low_load(L, x, low_v(L, i1), t), 0);
    if (lo < 0 || hi < 0 || v < 0)
        return low_oom(L);
    LoopExpr *nlo = loop_select(L->p, low_bin(L, LOOP_LT, low_v(L, v), low_v(L, lo)), low_v(L, v), low_v(L, lo));
    LoopExpr *nhi = loop_select(L->p, low_bin(L, LOOP_LT, low_v(L, hi), low_v(L, v)), low_v(L, v), low_v(L, hi));
    if (low_add(L, b1, loop_assign(L->p, lo, nlo)) || low_add(L, b1, loop_assign(L->p, hi, nhi)) ||
        low_add(L, k, loop_for(L->p, i1, low_i(L, n), LOOP_SERIAL, b1)))
        return low_oom(L);
    LoopExpr *range = loop_select(L->p, low_bin(L, LOOP_EQ, low_v(L, hi), low_v(L, lo)), low_const(L, t, 1),
                                  low_bin(L, LOOP_SUB, low_v(L, hi), low_v(L, lo)));
    int sc = low_let(L, k, "scale", low_bin(L, LOOP_DIV, range, low_const(L, t, 255)), 0);
    LoopExpr *zpf = sc < 0 ? NULL : low_bin(L, LOOP_SUB, low_const(L, t, 0), low_bin(L, LOOP_DIV, low_v(L, lo), low_v(L, sc)));
    zpf = low_bin(L, LOOP_MIN, low_bin(L, LOOP_MAX, zpf, low_const(L, t, 0)), low_const(L, t, 255));
    int zp = low_let(L, k, "zp", loop_call(L->p, LOOP_I_round_even, 1, &zpf), 0);
    if (zp < 0)
        return low_oom(L);
    LoopExpr *q = low_bin(L, LOOP_DIV, low_load(L, x, low_v(L, i2), t), low_v(L, sc));
    q = low_bin(L, LOOP_ADD, loop_call(L->p, LOOP_I_round_even, 1, &q), low_v(L, zp));
    if (low_add(L, b2, low_store(L, y, low_v(L, i2), q)) ||
        low_add(L, k, loop_for(L->p, i2, low_i(L, n), LOOP_SERIAL, b2)) ||
        (ys >= 0 && low_add(L, k, low_store(L, ys, low_i(L, 0), low_v(L, sc)))) ||
        (yz >= 0 && low_add(L, k, low_store(L, yz, low_i(L, 0), low_v(L, zp)))))
        return low_oom(L);
    return low_kernel(L, k);
}

/* QLinearConv's / QLinearMatMul's output: round_even(acc * mul) + y_zp, the
 * product in float32 (float64 for float64 scales), as the interpreter
 * (interp/k_quant.c); the store saturates. */
LoopExpr *low_requantize(Low *L, LoopExpr *acc, LoopExpr *mul, IrDType scale_type, int yz)
{
    IrDType pt = scale_type == IR_DT_F64 ? IR_DT_F64 : IR_DT_F32;
    LoopExpr *v = low_bin(L, LOOP_MUL, low_convert(L, acc, pt), low_convert(L, mul, pt));
    v = loop_call(L->p, LOOP_I_round_even, 1, &v);
    return low_bin(L, LOOP_ADD, v, low_load(L, yz, low_i(L, 0), pt));
}

/* The accumulator type of an integer product of 8-bit operands over K terms
 * (ConvInteger, QLinearConv, MatMulInteger, QLinearMatMul): int32 when no sum
 * can overflow it, |x - xz| |w - wz| <= 255 * 255 per term plus the bias
 * (buffer b, -1 none; a runtime bias counts as 2^31), else int64. */
IrDType low_int_acc(Low *L, int64_t K, int b)
{
    double bound = (double)K * 255 * 255;
    if (b >= 0) {
        const LoopBuf *bb = low_buf(L, b);
        double m = bb->data ? 0 : 2147483648.0;
        for (int64_t i = 0; bb->data && i < ir_shape_numel(&bb->shape); i++)
            m = fmax(m, fabs(ir_load_f64(bb->dtype, bb->data, i)));
        bound += m;
    }
    return bound < 2147483647.0 ? IR_DT_I32 : IR_DT_I64;
}
