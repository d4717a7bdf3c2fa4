/* passes/lower_window.c — compute templates of the sliding-window
 * operators: Conv, ConvTranspose, MaxPool (with Indices), AveragePool,
 * LpPool and the global pools.
 *
 * The geometry comes from ir_window (ir/ir.h), the same function the shape
 * rules and the interpreter use, so auto_pad, ceil_mode, dilations, groups
 * and output_shape resolve identically.  One template: loops over (n,
 * channel, output position), an accumulator, loops over the window taps
 * with the input position  o * stride + k * dilation - pad_begin  guarded by
 * an IF when it can fall outside the input (padding reads nothing).
 * ConvTranspose gathers: the input position of output o and tap k is
 * (o + pad_begin - k * dilation) / stride when that divides exactly. */
#include "passes/lower_impl.h"

#include <math.h>
#include <string.h>

typedef struct Win {
    IrWindow w;
    int S;
    int n, c, o[IR_MAX_RANK], k[IR_MAX_RANK];   /* loop variables */
} Win;

/* Input position of spatial dim i (Conv / pools). */
static LoopExpr *win_pos(Low *L, const Win *W, int i)
{
    LoopExpr *e = low_bin(L, LOOP_ADD, low_bin(L, LOOP_MUL, low_v(L, W->o[i]), low_i(L, W->w.stride[i])),
                          low_bin(L, LOOP_MUL, low_v(L, W->k[i]), low_i(L, W->w.dilation[i])));
    return W->w.pad_begin[i] ? low_bin(L, LOOP_SUB, e, low_i(L, W->w.pad_begin[i])) : e;
}

/* Condition that every tap position is inside [0, in) (NULL: always). */
static LoopExpr *win_inside(Low *L, const Win *W, LoopExpr *const *pos)
{
    LoopExpr *c = NULL;
    for (int i = 0; i < W->S; i++) {
        int64_t lo = -W->w.pad_begin[i];
        int64_t hi = (W->w.out[i] - 1) * W->w.stride[i] + (W->w.kernel[i] - 1) * W->w.dilation[i] - W->w.pad_begin[i];
        if (lo >= 0 && hi < W->w.in[i])
            continue;
        c = low_and(L, c, low_in_range(L, loop_expr_copy(L->p, pos[i]), 0, W->w.in[i]));
    }
    return c;
}

/* Wraps body in the tap loops k[0..S). */
static LoopStmt *win_taps(Low *L, const Win *W, LoopStmt *body)
{
    return low_nest(L, W->S, W->k, W->w.kernel, body);
}

/* Wraps body in the loops over n, channel, output positions and adds the kernel. */
static int win_kernel(Low *L, const Win *W, int64_t channels, LoopStmt *body)
{
    int vars[IR_MAX_RANK + 2];
    int64_t ext[IR_MAX_RANK + 2];
    vars[0] = W->n;
    vars[1] = W->c;
    ext[0] = W->w.batch;
    ext[1] = channels;
    for (int i = 0; i < W->S; i++) {
        vars[2 + i] = W->o[i];
        ext[2 + i] = W->w.out[i];
    }
    return low_kernel(L, low_nest(L, W->S + 2, vars, ext, body));
}

static int win_vars(Low *L, Win *W)
{
    W->S = W->w.rank;
    return low_vars(L, 1, "n", &W->n) || low_vars(L, 1, "c", &W->c) || low_vars(L, W->S, "o", W->o) ||
           low_vars(L, W->S, "k", W->k);
}

/* Flat index of a [N, C, spatial...] (or [M, C, k...]) buffer. */
static LoopExpr *nc_index(Low *L, int b, LoopExpr *n, LoopExpr *c, LoopExpr *const *sp, int S)
{
    LoopExpr *idx[IR_MAX_RANK];
    idx[0] = n;
    idx[1] = c;
    for (int i = 0; i < S; i++)
        idx[2 + i] = sp[i];
    return low_index(L, b, idx);
}

static LoopExpr *vars_of(Low *L, const int *v, int n, LoopExpr **out)
{
    for (int i = 0; i < n; i++)
        out[i] = low_v(L, v[i]);
    return n ? out[0] : NULL;
}

/* ---------------------------------------------------------------- Conv */

static int conv_common(Low *L, int transpose)
{
    const IrNode *n = L->n;
    int x = low_in(L, 0), w = low_in(L, 1), b = low_in(L, 2), y = low_out(L, 0);
    Win W;
    memset(&W, 0, sizeof W);
    if (ir_window(L->g, n, &low_buf(L, x)->shape, &low_buf(L, w)->shape, &W.w, L->d) != 0)
        return -1;
    if (win_vars(L, &W) != 0)
        return low_oom(L);
    IrDType t = low_ctype(low_buf(L, y)->dtype);
    int64_t G = W.w.group, cin_g = W.w.channels_in / G, cout_g = W.w.channels_out / G;
    int cv;
    if (low_vars(L, 1, "ci", &cv) != 0)
        return low_oom(L);
    LoopStmt *blk = loop_block(L->p), *tap = loop_block(L->p);
    int acc = low_let(L, blk, "acc", b >= 0 ? low_load(L, b, low_v(L, W.c), t) : low_const(L, t, 0), 1);
    /* group of the output channel, and the input channel of ci in it */
    int gi = low_let(L, blk, "g", low_bin(L, LOOP_DIV, low_v(L, W.c), low_i(L, cout_g)), 0);
    if (acc < 0 || gi < 0)
        return low_oom(L);
    LoopExpr *chan = low_bin(L, LOOP_ADD, low_bin(L, LOOP_MUL, low_v(L, gi), low_i(L, cin_g)), low_v(L, cv));
    LoopExpr *pos[IR_MAX_RANK], *kk[IR_MAX_RANK];
    LoopExpr *cond = NULL;
    vars_of(L, W.k, W.S, kk);
    if (!transpose) {
        for (int i = 0; i < W.S; i++)
            pos[i] = win_pos(L, &W, i);
        cond = win_inside(L, &W, pos);
    } else {
        /* input position: (o + pad_begin - k*dilation) / stride, when exact and inside */
        for (int i = 0; i < W.S; i++) {
            LoopExpr *tt = low_bin(L, LOOP_SUB, low_bin(L, LOOP_ADD, low_v(L, W.o[i]), low_i(L, W.w.pad_begin[i])),
                                   low_bin(L, LOOP_MUL, low_v(L, W.k[i]), low_i(L, W.w.dilation[i])));
            int tv = low_let(L, tap, "t", tt, 0);
            if (tv < 0)
                return low_oom(L);
            if (W.w.stride[i] != 1)
                cond = low_and(L, cond, low_bin(L, LOOP_EQ, low_bin(L, LOOP_MOD, low_v(L, tv), low_i(L, W.w.stride[i])),
                                                low_i(L, 0)));
            pos[i] = W.w.stride[i] != 1 ? low_bin(L, LOOP_DIV, low_v(L, tv), low_i(L, W.w.stride[i])) : low_v(L, tv);
            cond = low_and(L, cond, low_in_range(L, loop_expr_copy(L->p, pos[i]), 0, W.w.in[i]));
        }
    }
    LoopExpr *xv = low_load(L, x, nc_index(L, x, low_v(L, W.n), chan, pos, W.S), t);
    LoopExpr *wi;
    if (!transpose) {
        wi = nc_index(L, w, low_v(L, W.c), low_v(L, cv), kk, W.S);
    } else {
        /* weight [C_in, C_out/group, k...] */
        LoopExpr *oc = low_bin(L, LOOP_MOD, low_v(L, W.c), low_i(L, cout_g));
        wi = nc_index(L, w, loop_expr_copy(L->p, chan), oc, kk, W.S);
    }
    LoopStmt *upd = loop_assign(L->p, acc, low_bin(L, LOOP_ADD, low_v(L, acc),
                                                   low_bin(L, LOOP_MUL, xv, low_load(L, w, wi, t))));
    if (low_add(L, tap, cond ? loop_if(L->p, cond, upd, NULL) : upd) ||
        low_add(L, blk, loop_for(L->p, cv, low_i(L, cin_g), LOOP_SERIAL, win_taps(L, &W, tap))))
        return low_oom(L);
    LoopExpr *ov[IR_MAX_RANK];
    vars_of(L, W.o, W.S, ov);
    if (low_add(L, blk, low_store(L, y, nc_index(L, y, low_v(L, W.n), low_v(L, W.c), ov, W.S), low_v(L, acc))))
        return low_oom(L);
    return win_kernel(L, &W, W.w.channels_out, blk);
}

int low_conv(Low *L) { return conv_common(L, 0); }
int low_convtranspose(Low *L) { return conv_common(L, 1); }

/* ---------------------------------------------------------------- pools */

typedef enum { POOL_MAX, POOL_AVG, POOL_LP } PoolKind;

static int pool_lower(Low *L, Win *W, PoolKind kind, int count_include_pad, int col_major, double p)
{
    int x = low_in(L, 0), y = low_out(L, 0), ind = low_out(L, 1);
    const LoopBuf *xb = low_buf(L, x);
    IrDType t = ir_dtype_is_float(xb->dtype) ? low_ctype(xb->dtype) : IR_DT_F64;
    if (win_vars(L, W) != 0)
        return low_oom(L);
    LoopStmt *blk = loop_block(L->p), *tap = loop_block(L->p), *in_b = loop_block(L->p);
    double init = kind != POOL_MAX ? 0 : ir_dtype_is_float(xb->dtype) ? -INFINITY : xb->dtype == IR_DT_I8 ? -128 : 0;
    int acc = low_let(L, blk, "acc", low_const(L, t, init), 1);
    int cnt = kind == POOL_AVG ? low_let(L, blk, "cnt", low_const(L, t, 0), 1) : 0;
    int best = ind >= 0 ? low_let(L, blk, "best", low_i(L, -1), 1) : 0;
    if (acc < 0 || cnt < 0 || best < 0)
        return low_oom(L);
    LoopExpr *pos[IR_MAX_RANK];
    for (int i = 0; i < W->S; i++)
        pos[i] = win_pos(L, W, i);
    LoopExpr *cond = win_inside(L, W, pos);
    int v = low_let(L, in_b, "v", low_load(L, x, nc_index(L, x, low_v(L, W->n), low_v(L, W->c), pos, W->S), t), 0);
    if (v < 0)
        return low_oom(L);
    LoopExpr *V = low_v(L, v), *A = low_v(L, acc);
    if (kind == POOL_MAX) {
        /* NaN propagates; the first tap always counts for Indices */
        LoopExpr *take = low_bin(L, LOOP_OR, low_bin(L, LOOP_LT, A, V),
                                 low_bin(L, LOOP_AND, loop_call(L->p, LOOP_I_isnan, 1, (LoopExpr *[]){ low_v(L, v) }),
                                         low_bin(L, LOOP_EQ, low_v(L, acc), low_v(L, acc))));
        if (ind >= 0)
            take = low_bin(L, LOOP_OR, take, low_bin(L, LOOP_LT, low_v(L, best), low_i(L, 0)));
        int c = low_let(L, in_b, "take", take, 0);
        if (c < 0 || low_add(L, in_b, loop_assign(L->p, acc, loop_select(L->p, low_v(L, c), low_v(L, v), low_v(L, acc)))))
            return low_oom(L);
        if (ind >= 0) {
            /* flat input index: plane * plane_size + position (row- or column-major in the plane) */
            int64_t isz = 1, st[IR_MAX_RANK];
            for (int i = W->S - 1; i >= 0; i--) {
                st[i] = isz;
                isz *= W->w.in[i];
            }
            if (col_major)
                for (int i = 0, s = 1; i < W->S; i++) {
                    st[i] = s;
                    s *= (int)W->w.in[i];
                }
            LoopExpr *f = low_bin(L, LOOP_MUL, low_bin(L, LOOP_ADD, low_bin(L, LOOP_MUL, low_v(L, W->n),
                                                                            low_i(L, W->w.channels_in)),
                                                       low_v(L, W->c)), low_i(L, isz));
            for (int i = 0; i < W->S; i++)
                f = low_bin(L, LOOP_ADD, f, low_bin(L, LOOP_MUL, loop_expr_copy(L->p, pos[i]), low_i(L, st[i])));
            if (low_add(L, in_b, loop_assign(L->p, best, loop_select(L->p, low_v(L, c), f, low_v(L, best)))))
                return low_oom(L);
        }
    } else {
        LoopExpr *term = kind == POOL_AVG ? V
                       : p == 1 ? loop_un(L->p, LOOP_ABS, V)
                       : p == 2 ? low_bin(L, LOOP_MUL, V, low_v(L, v))
                       : loop_call(L->p, LOOP_I_pow, 2, (LoopExpr *[]){ loop_un(L->p, LOOP_ABS, V), low_const(L, t, p) });
        if (low_add(L, in_b, loop_assign(L->p, acc, low_bin(L, LOOP_ADD, A, term))))
            return low_oom(L);
        if (kind == POOL_AVG && !count_include_pad &&
            low_add(L, in_b, loop_assign(L->p, cnt, low_bin(L, LOOP_ADD, low_v(L, cnt), low_const(L, t, 1)))))
            return low_oom(L);
    }
    if (low_add(L, tap, cond ? loop_if(L->p, cond, in_b, NULL) : in_b))
        return low_oom(L);
    if (kind == POOL_AVG && count_include_pad) {
        /* taps inside the padded input [-pad_begin, in + pad_end) count */
        LoopExpr *pc = NULL;
        for (int i = 0; i < W->S; i++)
            if ((W->w.out[i] - 1) * W->w.stride[i] + (W->w.kernel[i] - 1) * W->w.dilation[i] - W->w.pad_begin[i] >=
                W->w.in[i] + W->w.pad_end[i])
                pc = low_and(L, pc, low_bin(L, LOOP_LT, loop_expr_copy(L->p, pos[i]),
                                            low_i(L, W->w.in[i] + W->w.pad_end[i])));
        LoopExpr *one = low_const(L, t, 1);
        LoopExpr *inc = pc ? loop_select(L->p, pc, one, low_const(L, t, 0)) : one;
        if (low_add(L, tap, loop_assign(L->p, cnt, low_bin(L, LOOP_ADD, low_v(L, cnt), inc))))
            return low_oom(L);
    }
    if (low_add(L, blk, win_taps(L, W, tap)))
        return low_oom(L);
    LoopExpr *res = low_v(L, acc);
    if (kind == POOL_AVG)
        res = loop_select(L->p, low_bin(L, LOOP_LT, low_const(L, t, 0), low_v(L, cnt)),
                          low_bin(L, LOOP_DIV, res, low_v(L, cnt)), low_const(L, t, 0));
    else if (kind == POOL_LP && p == 2)
        res = loop_call(L->p, LOOP_I_sqrt, 1, &res);
    else if (kind == POOL_LP && p != 1)
        res = loop_call(L->p, LOOP_I_pow, 2, (LoopExpr *[]){ res, low_const(L, t, 1.0 / p) });
    LoopExpr *ov[IR_MAX_RANK];
    vars_of(L, W->o, W->S, ov);
    if (low_add(L, blk, low_store(L, y, nc_index(L, y, low_v(L, W->n), low_v(L, W->c), ov, W->S), res)))
        return low_oom(L);
    if (ind >= 0) {
        vars_of(L, W->o, W->S, ov);
        if (low_add(L, blk, low_store(L, ind, nc_index(L, ind, low_v(L, W->n), low_v(L, W->c), ov, W->S),
                                      low_v(L, best))))
            return low_oom(L);
    }
    return win_kernel(L, W, W->w.channels_in, blk);
}

int low_pool(Low *L)
{
    const IrNode *n = L->n;
    Win W;
    memset(&W, 0, sizeof W);
    if (ir_window(L->g, n, &low_buf(L, low_in(L, 0))->shape, NULL, &W.w, L->d) != 0)
        return -1;
    PoolKind k = n->op == IR_OP_MaxPool ? POOL_MAX : n->op == IR_OP_AveragePool ? POOL_AVG : POOL_LP;
    return pool_lower(L, &W, k, ir_attr_int(n, IR_A_count_include_pad) == 1, ir_attr_int(n, IR_A_storage_order) == 1,
                      (double)ir_attr_int(n, IR_A_p));
}

/* The global pools are one window covering every spatial position. */
int low_globalpool(Low *L)
{
    const IrNode *n = L->n;
    const IrShape *xs = &low_buf(L, low_in(L, 0))->shape;
    Win W;
    memset(&W, 0, sizeof W);
    W.w.rank = xs->rank - 2;
    W.w.batch = xs->dims[0];
    W.w.channels_in = W.w.channels_out = xs->dims[1];
    W.w.group = 1;
    for (int i = 0; i < W.w.rank; i++) {
        W.w.in[i] = W.w.kernel[i] = xs->dims[i + 2];
        W.w.out[i] = W.w.stride[i] = W.w.dilation[i] = 1;
    }
    PoolKind k = n->op == IR_OP_GlobalMaxPool ? POOL_MAX : n->op == IR_OP_GlobalAveragePool ? POOL_AVG : POOL_LP;
    return pool_lower(L, &W, k, 0, 0, (double)ir_attr_int(n, IR_A_p));
}
