/* lower/elementwise.c — compute templates of the elementwise operators:
 * unary functions, binary / comparison / logical operators with numpy
 * broadcasting, variadic Min/Max/Sum/Mean, Where, Clip, Cast/CastLike and
 * Dropout (inference).
 *
 * One template (ew_elem): each output element loads its operands at their
 * broadcast indices into LETs, then the operator's scalar function
 * (lower/scalar.c) gives the value. */
#include "lower/lower_impl.h"

static LoopExpr *ew_elem(Low *L, void *ctx, const int *vars, LoopStmt *body)
{
    const LowEw *e = ctx;
    int rank = low_buf(L, low_out(L, 0))->shape.rank, x[IR_VARIADIC];
    for (int i = 0; i < e->n; i++) {
        x[i] = -1;
        if (e->buf[i] < 0)
            continue;
        LoopExpr *at = !e->flat ? low_bcast(L, e->buf[i], vars, rank)
                     : ir_shape_numel(&low_buf(L, e->buf[i])->shape) == 1 ? low_i(L, 0) : low_v(L, vars[0]);
        if ((x[i] = low_let(L, body, "v", low_load(L, e->buf[i], at, e->ty[i]), 0)) < 0)
            return NULL;
    }
    return e->fn(L, e, x);
}

static int ew_run(Low *L, LowEw *e)
{
    const IrShape *ys = &low_buf(L, low_out(L, 0))->shape;
    e->flat = !L->fuse_n || low_fused_flat_ok(L);
    for (int i = 0; i < e->n; i++)
        if (e->buf[i] >= 0 && ((!ir_shape_equal(&low_buf(L, e->buf[i])->shape, ys) &&
                                ir_shape_numel(&low_buf(L, e->buf[i])->shape) != 1) ||
                               loop_buf_has_halo(low_buf(L, e->buf[i]))))
            e->flat = 0;                          /* a halo'd operand (loop_buf_halo) is read through its strides */
    return e->flat ? low_map_flat(L, low_out(L, 0), ew_elem, e) : low_map(L, low_out(L, 0), ew_elem, e);
}

static int ew_lower(Low *L)
{
    LowEw e;
    low_ew_setup(L, &e);
    return ew_run(L, &e);
}

int low_unary(Low *L) { return ew_lower(L); }
int low_clip(Low *L) { return ew_lower(L); }
int low_binary(Low *L) { return ew_lower(L); }
int low_variadic(Low *L) { return ew_lower(L); }
int low_where(Low *L) { return ew_lower(L); }
int low_cast(Low *L) { return ew_lower(L); }

static LoopExpr *true_elem(Low *L, void *ctx, const int *vars, LoopStmt *body)
{
    (void)ctx;
    (void)vars;
    (void)body;
    return low_const(L, IR_DT_BOOL, 1);
}

int low_dropout(Low *L)
{
    const IrArray *tm = low_known(L, 2);
    if (low_has(L, 2) && (!tm || ir_load_i64(tm->dtype, tm->data, 0)))
        return ir_node_error(L->g, L->n, L->d, "training mode is not supported (dlcc compiles inference graphs)");
    LowEw e = { .op = IR_OP_Identity, .n = 1, .buf = { low_in(L, 0) }, .fn = low_ew_identity };
    e.ct = e.ty[0] = low_buf(L, e.buf[0])->dtype;
    LoopStmt *k = loop_block(L->p);
    if (!k)
        return low_oom(L);
    if (low_map_into(L, k, low_out(L, 0), ew_elem, &e) != 0)
        return -1;
    if (low_out(L, 1) >= 0 && low_map_into(L, k, low_out(L, 1), true_elem, NULL) != 0)
        return -1;
    return low_kernel(L, k);
}
