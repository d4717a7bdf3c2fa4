/* passes/lower_quant.c — compute templates of QuantizeLinear and
 * DequantizeLinear (per tensor, per axis, blocked), following the reference
 * interpreter (interp/k_quant.c):
 *   Quantize:   y = saturate(round_even(x / scale) + zero_point), the
 *               division in the precision attribute's type (default: the
 *               common float type of x and scale, float64 for int32);
 *   Dequantize: y = (float(x) - float(zero_point)) * float(scale), float32.
 * Saturation is the loop IR's float-to-integer conversion (it saturates). */
#include "passes/lower_impl.h"

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
    (void)body;
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
    return v;
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
