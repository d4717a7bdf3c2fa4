/* lower/window.c — compute templates of the sliding-window
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
#include "lower/lower_impl.h"
#include "lower/tile/tile.h"

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

/* Geometry of the node over x (and weight w, -1 for pools) and its loop
 * variables; -1 with a diagnostic. */
static int win_setup(Low *L, int x, int w, Win *W)
{
    memset(W, 0, sizeof *W);
    if (ir_window(L->g, L->n, &low_buf(L, x)->shape, w >= 0 ? &low_buf(L, w)->shape : NULL, &W->w, L->d) != 0)
        return -1;
    return win_vars(L, W) != 0 ? low_oom(L) : 0;
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

/* Operands of the convolution template: Conv / ConvTranspose, and the
 * integer forms (ConvInteger, QLinearConv) that subtract zero points first
 * and accumulate in int64. */
typedef struct ConvIo {
    int x, w, b;           /* buffers (b -1: no bias) */
    int xz, wz;            /* zero-point inputs (slots), -1 when none */
    int transpose;
    IrDType t;             /* accumulator type */
    /* QLinearConv: requantize acc with these input slots (x_scale, w_scale,
     * y_scale, y_zero_point); -1 = no requantization */
    int xs, ws, ys, yz;
} ConvIo;

/* Zero point of input slot k at element index e (scalar or per channel). */
static LoopExpr *zero_point(Low *L, int k, LoopExpr *e, IrDType t)
{
    int b = low_in(L, k);
    if (b < 0)
        return NULL;
    LoopExpr *i = ir_shape_numel(&low_buf(L, b)->shape) > 1 ? e : low_i(L, 0);
    return low_load(L, b, i, t);
}

static LoopExpr *minus(Low *L, LoopExpr *v, LoopExpr *zp) { return zp ? low_bin(L, LOOP_SUB, v, zp) : v; }

/* QLinearConv's output: the multiplier x_s * w_s[m] / y_s formed in the
 * scales' type (as the interpreter), then low_requantize. */
static LoopExpr *requantize(Low *L, const ConvIo *io, LoopExpr *acc, LoopExpr *m)
{
    int xs = low_in(L, io->xs), ws = low_in(L, io->ws), ys = low_in(L, io->ys), yz = low_in(L, io->yz);
    IrDType st = low_buf(L, xs)->dtype, ct = low_ctype(st);
    LoopExpr *wsi = ir_shape_numel(&low_buf(L, ws)->shape) > 1 ? m : low_i(L, 0);
    LoopExpr *prod = low_bin(L, LOOP_MUL, low_load(L, xs, low_i(L, 0), ct), low_load(L, ws, wsi, ct));
    LoopExpr *mul = low_bin(L, LOOP_DIV, prod, low_load(L, ys, low_i(L, 0), ct));
    return low_requantize(L, acc, mul, st, yz);
}

static int conv_lower(Low *L, const ConvIo *io)
{
    int x = io->x, w = io->w, b = io->b, transpose = io->transpose;
    Win W;
    if (win_setup(L, x, w, &W) != 0)
        return -1;
    int64_t G = W.w.group, cin_g = W.w.channels_in / G, cout_g = W.w.channels_out / G, K = cin_g;
    for (int i = 0; i < W.S; i++)
        K *= W.w.kernel[i];
    IrDType t = io->t == IR_DT_I64 ? low_int_acc(L, K, b) : io->t;   /* integer forms: int32 where it holds */
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
    LoopExpr *xv = minus(L, low_load(L, x, nc_index(L, x, low_v(L, W.n), chan, pos, W.S), t),
                         io->xz >= 0 ? zero_point(L, io->xz, low_i(L, 0), t) : NULL);
    LoopExpr *wi;
    if (!transpose) {
        wi = nc_index(L, w, low_v(L, W.c), low_v(L, cv), kk, W.S);
    } else {
        /* weight [C_in, C_out/group, k...] */
        LoopExpr *oc = low_bin(L, LOOP_MOD, low_v(L, W.c), low_i(L, cout_g));
        wi = nc_index(L, w, loop_expr_copy(L->p, chan), oc, kk, W.S);
    }
    LoopExpr *wv = minus(L, low_load(L, w, wi, t), io->wz >= 0 ? zero_point(L, io->wz, low_v(L, W.c), t) : NULL);
    LoopStmt *upd = loop_assign(L->p, acc, low_bin(L, LOOP_ADD, low_v(L, acc), low_bin(L, LOOP_MUL, xv, wv)));
    if (low_add(L, tap, cond ? loop_if(L->p, cond, upd, NULL) : upd) ||
        low_add(L, blk, loop_for(L->p, cv, low_i(L, cin_g), LOOP_SERIAL, win_taps(L, &W, tap))))
        return low_oom(L);
    LoopExpr *yi[IR_MAX_RANK];               /* [n, c, o...] */
    yi[0] = low_v(L, W.n);
    yi[1] = low_v(L, W.c);
    vars_of(L, W.o, W.S, yi + 2);
    LoopExpr *res = io->xs >= 0 ? requantize(L, io, low_v(L, acc), low_v(L, W.c)) : low_v(L, acc);
    if (low_add(L, blk, low_fused_store(L, 0, yi, res)))
        return low_oom(L);
    return win_kernel(L, &W, W.w.channels_out, blk);
}

static int conv_float(Low *L, int transpose)
{
    ConvIo io = { .x = low_in(L, 0), .w = low_in(L, 1), .b = low_in(L, 2), .xz = -1, .wz = -1,
                  .transpose = transpose, .t = low_ctype(low_buf(L, low_out(L, 0))->dtype),
                  .xs = -1, .ws = -1, .ys = -1, .yz = -1 };
    return conv_lower(L, &io);
}

int low_conv(Low *L)
{
    int r = tile_bconv(L);
    if (r <= 0)
        return r;
    r = tile_conv(L);
    return r <= 0 ? r : conv_float(L, 0);
}
int low_convtranspose(Low *L)
{
    int r = tile_convtranspose(L);
    return r <= 0 ? r : conv_float(L, 1);
}

int low_convinteger(Low *L)
{
    ConvIo io = { .x = low_in(L, 0), .w = low_in(L, 1), .b = -1, .xz = 2, .wz = 3, .t = IR_DT_I64,
                  .xs = -1, .ws = -1, .ys = -1, .yz = -1 };
    return conv_lower(L, &io);
}

int low_qlinearconv(Low *L)
{
    int r = tile_qconv(L);
    if (r <= 0)
        return r;
    ConvIo io = { .x = low_in(L, 0), .w = low_in(L, 3), .b = low_in(L, 8), .xz = 2, .wz = 5, .t = IR_DT_I64,
                  .xs = 1, .ws = 4, .ys = 6, .yz = 7 };
    return conv_lower(L, &io);
}

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
    int r = n->op == IR_OP_MaxPool ? tile_qmaxpool(L) : 1;
    if (r > 0 && n->op == IR_OP_MaxPool)
        r = tile_maxpool(L);
    if (r <= 0)
        return r;
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
    int r = n->op == IR_OP_GlobalAveragePool ? tile_gap(L) : 1;
    if (r <= 0)
        return r;
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

/* ------------------------------------------------------------ RoiAlign */

/* At most this many samples per bin side with adaptive sampling
 * (sampling_ratio 0); the interpreter rejects rois needing more than 2^20
 * samples per bin. */
#define RA_MAX_SIDE IR_ROIALIGN_MAX_SIDE

typedef struct Roi {
    int x, y;
    int64_t H, W;
    IrDType t;             /* float64 */
    int max;
} Roi;

/* Clamp of an I64 expression to [0, hi]. */
static LoopExpr *clamp_i(Low *L, LoopExpr *e, int64_t hi)
{
    return low_bin(L, LOOP_MIN, low_bin(L, LOOP_MAX, e, low_i(L, 0)), low_i(L, hi));
}

/* Bilinear sample of plane `base` at (yv, xv) under onnxruntime's rules
 * (0 outside [-1, size]; edges clamp); with max, the largest weighted
 * corner.  Indices are clamped so the loads stay inside the plane. */
static LoopExpr *roi_sample(Low *L, const Roi *R, LoopStmt *blk, int base, int yv, int xv)
{
    IrDType t = R->t;
    int v[2] = { yv, xv };
    int64_t sz[2] = { R->H, R->W };
    int lo[2], hi[2], fr[2];
    LoopExpr *inside = NULL;
    for (int a = 0; a < 2; a++) {
        LoopExpr *p = low_v(L, v[a]);
        inside = low_and(L, inside, low_bin(L, LOOP_AND, low_bin(L, LOOP_LE, low_const(L, t, -1), p),
                                            low_bin(L, LOOP_LE, low_v(L, v[a]), low_const(L, t, (double)sz[a]))));
        /* c = max(p, 0); i0 = min(int(c), size - 1); i1 = min(i0 + 1, size - 1); frac = i0 < size - 1 ? c - i0 : 0 */
        int c = low_let(L, blk, "c", low_bin(L, LOOP_MAX, low_v(L, v[a]), low_const(L, t, 0)), 0);
        if (c < 0)
            return NULL;
        lo[a] = low_let(L, blk, "i0", clamp_i(L, loop_cast(L->p, IR_DT_I64, low_v(L, c)), sz[a] - 1), 0);
        if (lo[a] < 0)
            return NULL;
        hi[a] = low_let(L, blk, "i1", low_bin(L, LOOP_MIN, low_bin(L, LOOP_ADD, low_v(L, lo[a]), low_i(L, 1)),
                                              low_i(L, sz[a] - 1)), 0);
        LoopExpr *f = loop_select(L->p, low_bin(L, LOOP_LT, low_v(L, lo[a]), low_i(L, sz[a] - 1)),
                                  low_bin(L, LOOP_SUB, low_v(L, c), low_convert(L, low_v(L, lo[a]), t)),
                                  low_const(L, t, 0));
        fr[a] = low_let(L, blk, "fr", f, 0);
        if (hi[a] < 0 || fr[a] < 0)
            return NULL;
    }
    int in = low_let(L, blk, "in", inside, 0);
    if (in < 0)
        return NULL;
    LoopExpr *val = NULL;
    for (int corner = 0; corner < 4; corner++) {
        int cy = corner >> 1, cx = corner & 1;
        LoopExpr *wy = cy ? low_v(L, fr[0]) : low_bin(L, LOOP_SUB, low_const(L, t, 1), low_v(L, fr[0]));
        LoopExpr *wx = cx ? low_v(L, fr[1]) : low_bin(L, LOOP_SUB, low_const(L, t, 1), low_v(L, fr[1]));
        LoopExpr *idx = low_bin(L, LOOP_ADD, low_v(L, base),
                                low_bin(L, LOOP_ADD, low_bin(L, LOOP_MUL, low_v(L, cy ? hi[0] : lo[0]), low_i(L, R->W)),
                                        low_v(L, cx ? hi[1] : lo[1])));
        LoopExpr *term = low_bin(L, LOOP_MUL, low_bin(L, LOOP_MUL, wy, wx), low_load(L, R->x, idx, t));
        if (!val) {
            val = term;
        } else if (!R->max) {
            val = low_bin(L, LOOP_ADD, val, term);
        } else {
            int a = low_let(L, blk, "m", val, 0), b = low_let(L, blk, "m", term, 0);
            if (a < 0 || b < 0)
                return NULL;
            val = loop_select(L->p, low_bin(L, LOOP_LT, low_v(L, a), low_v(L, b)), low_v(L, b), low_v(L, a));
        }
    }
    return loop_select(L->p, low_v(L, in), val, low_const(L, t, 0));
}

static LoopExpr *roi_zero(Low *L, void *ctx, const int *vars, LoopStmt *body)
{
    (void)ctx, (void)vars, (void)body;
    return low_const(L, low_buf(L, low_out(L, 0))->dtype, 0.0);
}

int low_roialign(Low *L)
{
    const IrNode *n = L->n;
    int x = low_in(L, 0), rois = low_in(L, 1), bi = low_in(L, 2), y = low_out(L, 0);
    const LoopBuf *xb = low_buf(L, x), *yb = low_buf(L, y);
    if (xb->shape.dims[0] == 0 || xb->shape.dims[2] == 0 || xb->shape.dims[3] == 0)
        return low_map(L, y, roi_zero, NULL);         /* an empty plane: every sample is outside it, 0 */
    Roi R = { .x = x, .y = y, .H = xb->shape.dims[2], .W = xb->shape.dims[3], .t = IR_DT_F64,
              .max = !strcmp(ir_attr_str(n, IR_A_mode), "max") };
    IrDType t = R.t;
    int64_t N = xb->shape.dims[0], C = xb->shape.dims[1], NR = yb->shape.dims[0], OH = yb->shape.dims[2],
            OW = yb->shape.dims[3];
    int half = !strcmp(ir_attr_str(n, IR_A_coordinate_transformation_mode), "half_pixel");
    double scale = ir_attr_float(n, IR_A_spatial_scale), off = half ? 0.5 : 0.0;
    int64_t sr = ir_attr_int(n, IR_A_sampling_ratio);
    int r, c, ph, pw, iy, ix;
    if (low_vars(L, 1, "r", &r) || low_vars(L, 1, "c", &c) || low_vars(L, 1, "ph", &ph) || low_vars(L, 1, "pw", &pw) ||
        low_vars(L, 1, "iy", &iy) || low_vars(L, 1, "ix", &ix))
        return low_oom(L);
    /* per roi: batch row (clamped into [0, N)), corners, bin size, samples per bin */
    LoopStmt *rb = loop_block(L->p);
    int b = low_let(L, rb, "bi", clamp_i(L, low_load(L, bi, low_v(L, r), IR_DT_I64), N - 1), 0);
    int cv[4];
    for (int i = 0; i < 4; i++) {
        LoopExpr *e = low_load(L, rois, low_bin(L, LOOP_ADD, low_bin(L, LOOP_MUL, low_v(L, r), low_i(L, 4)), low_i(L, i)), t);
        cv[i] = low_let(L, rb, "x", low_bin(L, LOOP_SUB, low_bin(L, LOOP_MUL, e, low_const(L, t, scale)), low_const(L, t, off)), 0);
        if (cv[i] < 0)
            return low_oom(L);
    }
    LoopExpr *rw = low_bin(L, LOOP_SUB, low_v(L, cv[2]), low_v(L, cv[0]));
    LoopExpr *rh = low_bin(L, LOOP_SUB, low_v(L, cv[3]), low_v(L, cv[1]));
    if (!half) {
        rw = low_bin(L, LOOP_MAX, rw, low_const(L, t, 1));
        rh = low_bin(L, LOOP_MAX, rh, low_const(L, t, 1));
    }
    int bh = low_let(L, rb, "bh", low_bin(L, LOOP_DIV, rh, low_const(L, t, (double)OH)), 0);
    int bw = low_let(L, rb, "bw", low_bin(L, LOOP_DIV, rw, low_const(L, t, (double)OW)), 0);
    if (b < 0 || bh < 0 || bw < 0)
        return low_oom(L);
    LoopExpr *gh = sr > 0 ? low_i(L, sr) : clamp_i(L, loop_cast(L->p, IR_DT_I64, loop_call(L->p, LOOP_I_ceil, 1,
                                                               (LoopExpr *[]){ low_v(L, bh) })), RA_MAX_SIDE);
    LoopExpr *gw = sr > 0 ? low_i(L, sr) : clamp_i(L, loop_cast(L->p, IR_DT_I64, loop_call(L->p, LOOP_I_ceil, 1,
                                                               (LoopExpr *[]){ low_v(L, bw) })), RA_MAX_SIDE);
    int ghv = low_let(L, rb, "gh", gh, 0), gwv = low_let(L, rb, "gw", gw, 0);
    if (ghv < 0 || gwv < 0)
        return low_oom(L);
    int cnt = low_let(L, rb, "cnt", low_convert(L, low_bin(L, LOOP_MAX, low_bin(L, LOOP_MUL, low_v(L, ghv), low_v(L, gwv)),
                                                           low_i(L, 1)), t), 0);
    if (cnt < 0)
        return low_oom(L);
    /* per (c, ph, pw): samples iy < gh, ix < gw */
    LoopStmt *cell = loop_block(L->p), *sy = loop_block(L->p), *sx = loop_block(L->p);
    int base = low_let(L, cell, "base", low_bin(L, LOOP_MUL, low_bin(L, LOOP_ADD, low_bin(L, LOOP_MUL, low_v(L, b), low_i(L, C)),
                                                                     low_v(L, c)), low_i(L, R.H * R.W)), 0);
    int acc = low_let(L, cell, "acc", low_const(L, t, R.max ? -INFINITY : 0), 1);
    int first = low_let(L, cell, "first", low_const(L, IR_DT_BOOL, 1), 1);
    if (base < 0 || acc < 0 || first < 0)
        return low_oom(L);
    /* yy = y1 + ph * bh + (iy + 0.5) * bh / gh, likewise xx */
    LoopExpr *yy = low_bin(L, LOOP_ADD, low_bin(L, LOOP_ADD, low_v(L, cv[1]), low_bin(L, LOOP_MUL, low_convert(L, low_v(L, ph), t), low_v(L, bh))),
                           low_bin(L, LOOP_DIV, low_bin(L, LOOP_MUL, low_bin(L, LOOP_ADD, low_convert(L, low_v(L, iy), t), low_const(L, t, 0.5)),
                                                        low_v(L, bh)), low_convert(L, low_v(L, ghv), t)));
    LoopExpr *xx = low_bin(L, LOOP_ADD, low_bin(L, LOOP_ADD, low_v(L, cv[0]), low_bin(L, LOOP_MUL, low_convert(L, low_v(L, pw), t), low_v(L, bw))),
                           low_bin(L, LOOP_DIV, low_bin(L, LOOP_MUL, low_bin(L, LOOP_ADD, low_convert(L, low_v(L, ix), t), low_const(L, t, 0.5)),
                                                        low_v(L, bw)), low_convert(L, low_v(L, gwv), t)));
    int yv = low_let(L, sy, "yy", yy, 0), xv = low_let(L, sx, "xx", xx, 0);
    if (yv < 0 || xv < 0)
        return low_oom(L);
    int s = low_let(L, sx, "smp", roi_sample(L, &R, sx, base, yv, xv), 0);
    if (s < 0)
        return low_oom(L);
    LoopExpr *upd = !R.max ? low_bin(L, LOOP_ADD, low_v(L, acc), low_v(L, s))
                           : loop_select(L->p, low_bin(L, LOOP_OR, low_v(L, first), low_bin(L, LOOP_LT, low_v(L, acc), low_v(L, s))),
                                         low_v(L, s), low_v(L, acc));
    if (low_add(L, sx, loop_assign(L->p, acc, upd)) ||
        low_add(L, sx, loop_assign(L->p, first, low_const(L, IR_DT_BOOL, 0))) ||
        low_add(L, sy, loop_for(L->p, ix, low_v(L, gwv), LOOP_SERIAL, sx)) ||
        low_add(L, cell, loop_for(L->p, iy, low_v(L, ghv), LOOP_SERIAL, sy)))
        return low_oom(L);
    LoopExpr *res = R.max ? low_v(L, acc) : low_bin(L, LOOP_DIV, low_v(L, acc), low_v(L, cnt));
    if (R.max)    /* no sample at all: 0 */
        res = loop_select(L->p, low_v(L, first), low_const(L, t, 0), res);
    LoopExpr *yi[4] = { low_v(L, r), low_v(L, c), low_v(L, ph), low_v(L, pw) };
    if (low_add(L, cell, low_store(L, y, low_index(L, y, yi), res)))
        return low_oom(L);
    int vars[3] = { c, ph, pw };
    int64_t ext[3] = { C, OH, OW };
    if (low_add(L, rb, low_nest(L, 3, vars, ext, cell)))
        return low_oom(L);
    return low_kernel(L, loop_for(L->p, r, low_i(L, NR), LOOP_SERIAL, rb));
}

/* ---------------------------------------------------------- DeformConv */

/* Conv whose tap k of output position o samples x multilinearly at
 * o * stride - pad_begin + k * dilation + offset[n, (og, k, dim), o] (corners
 * outside the input count 0), times mask[n, (og, k), o] when given, + B.
 * Corner indices are clamped, so loads stay inside x. */
int low_deformconv(Low *L)
{
    const IrNode *n = L->n;
    int x = low_in(L, 0), w = low_in(L, 1), off = low_in(L, 2), b = low_in(L, 3), mask = low_in(L, 4), y = low_out(L, 0);
    Win W;
    if (win_setup(L, x, w, &W) != 0)
        return -1;
    IrDType t = IR_DT_F64;
    int S = W.S;
    int64_t C = W.w.channels_in, M = W.w.channels_out, G = W.w.group, cg = C / G, mg = M / G;
    int64_t og = ir_attr_int(n, IR_A_offset_group), cpo = C / (og > 0 ? og : 1), taps = 1;
    for (int i = 0; i < S; i++)
        taps *= W.w.kernel[i];
    int cv;
    if (low_vars(L, 1, "ci", &cv))
        return low_oom(L);
    LoopStmt *blk = loop_block(L->p), *tap = loop_block(L->p);
    int acc = low_let(L, blk, "acc", b >= 0 ? low_load(L, b, low_v(L, W.c), t) : low_const(L, t, 0), 1);
    if (acc < 0)
        return low_oom(L);
    /* input channel, its offset group, the flat tap index */
    LoopExpr *chan = low_bin(L, LOOP_ADD, low_bin(L, LOOP_MUL, low_bin(L, LOOP_DIV, low_v(L, W.c), low_i(L, mg)),
                                                   low_i(L, cg)), low_v(L, cv));
    int ch = low_let(L, tap, "ch", chan, 0);
    LoopExpr *kf = low_i(L, 0);
    for (int i = 0; i < S; i++)
        kf = low_bin(L, LOOP_ADD, low_bin(L, LOOP_MUL, kf, low_i(L, W.w.kernel[i])), low_v(L, W.k[i]));
    int kv = low_let(L, tap, "kf", kf, 0);
    int gv = ch < 0 ? -1 : low_let(L, tap, "og", low_bin(L, LOOP_DIV, low_v(L, ch), low_i(L, cpo)), 0);
    if (ch < 0 || kv < 0 || gv < 0)
        return low_oom(L);
    LoopExpr *ov[IR_MAX_RANK];
    int lo[IR_MAX_RANK], fr[IR_MAX_RANK];
    LoopExpr *valid = NULL;
    for (int i = 0; i < S; i++) {
        /* offset channel ((og * taps) + kf) * S + i at (n, ., o...) */
        LoopExpr *oc = low_bin(L, LOOP_ADD, low_bin(L, LOOP_MUL, low_bin(L, LOOP_ADD, low_bin(L, LOOP_MUL, low_v(L, gv),
                                                                                              low_i(L, taps)),
                                                                       low_v(L, kv)), low_i(L, S)), low_i(L, i));
        vars_of(L, W.o, S, ov);
        LoopExpr *pos = low_bin(L, LOOP_ADD, low_convert(L, win_pos(L, &W, i), t),
                                low_load(L, off, nc_index(L, off, low_v(L, W.n), oc, ov, S), t));
        int pv = low_let(L, tap, "pos", pos, 0);
        int fv = pv < 0 ? -1 : low_let(L, tap, "fl", loop_call(L->p, LOOP_I_floor, 1, (LoopExpr *[]){ low_v(L, pv) }), 0);
        if (fv < 0)
            return low_oom(L);
        valid = low_and(L, valid, low_bin(L, LOOP_AND, low_bin(L, LOOP_LT, low_const(L, t, -2), low_v(L, fv)),
                                          low_bin(L, LOOP_LT, low_v(L, fv), low_const(L, t, (double)W.w.in[i]))));
        /* the floor as an integer: exact whenever the sample is valid (the cast saturates otherwise) */
        lo[i] = low_let(L, tap, "lo", loop_cast(L->p, IR_DT_I64, low_v(L, fv)), 0);
        fr[i] = low_let(L, tap, "fr", low_bin(L, LOOP_SUB, low_v(L, pv), low_v(L, fv)), 0);
        if (lo[i] < 0 || fr[i] < 0)
            return low_oom(L);
    }
    /* sum over the 2^S corners inside the input of weight * x[corner] */
    LoopExpr *sum = NULL;
    for (int corner = 0; corner < (1 << S); corner++) {
        LoopExpr *wgt = NULL, *inside = NULL, *idx[IR_MAX_RANK];
        for (int i = 0; i < S; i++) {
            int hi = (corner >> (S - 1 - i)) & 1;
            LoopExpr *q = hi ? low_bin(L, LOOP_ADD, low_v(L, lo[i]), low_i(L, 1)) : low_v(L, lo[i]);
            inside = low_and(L, inside, low_in_range(L, q, 0, W.w.in[i]));
            idx[i] = clamp_i(L, loop_expr_copy(L->p, q), W.w.in[i] - 1);
            LoopExpr *wi = hi ? low_v(L, fr[i]) : low_bin(L, LOOP_SUB, low_const(L, t, 1), low_v(L, fr[i]));
            wgt = wgt ? low_bin(L, LOOP_MUL, wgt, wi) : wi;
        }
        LoopExpr *xi = nc_index(L, x, low_v(L, W.n), low_v(L, ch), idx, S);
        LoopExpr *term = loop_select(L->p, inside, low_bin(L, LOOP_MUL, wgt, low_load(L, x, xi, t)), low_const(L, t, 0));
        sum = sum ? low_bin(L, LOOP_ADD, sum, term) : term;
    }
    sum = loop_select(L->p, valid, sum, low_const(L, t, 0));
    if (mask >= 0) {
        vars_of(L, W.o, S, ov);
        LoopExpr *mc = low_bin(L, LOOP_ADD, low_bin(L, LOOP_MUL, low_v(L, gv), low_i(L, taps)), low_v(L, kv));
        sum = low_bin(L, LOOP_MUL, sum, low_load(L, mask, nc_index(L, mask, low_v(L, W.n), mc, ov, S), t));
    }
    /* weight [M, C/group, k...] */
    LoopExpr *kk[IR_MAX_RANK];
    vars_of(L, W.k, S, kk);
    LoopExpr *wv = low_load(L, w, nc_index(L, w, low_v(L, W.c), low_v(L, cv), kk, S), t);
    if (low_add(L, tap, loop_assign(L->p, acc, low_bin(L, LOOP_ADD, low_v(L, acc), low_bin(L, LOOP_MUL, wv, sum)))) ||
        low_add(L, blk, loop_for(L->p, cv, low_i(L, cg), LOOP_SERIAL, win_taps(L, &W, tap))))
        return low_oom(L);
    vars_of(L, W.o, S, ov);
    if (low_add(L, blk, low_store(L, y, nc_index(L, y, low_v(L, W.n), low_v(L, W.c), ov, S), low_v(L, acc))))
        return low_oom(L);
    return win_kernel(L, &W, M, blk);
}

/* -------------------------------------------------------------- Col2Im */

/* y = 0, then every column element x[b, ch * kprod + k, block] added at its
 * image position  block * stride - pad + k * dilation  when inside (the
 * geometry is ir_col2im_geometry's, as the interpreter's).  Positions are
 * affine in the loop variables; the block loops run in order. */
static LoopExpr *zero_value(Low *L, void *ctx, const int *v, LoopStmt *body)
{
    (void)ctx;
    (void)v;
    (void)body;
    return low_const(L, low_buf(L, low_out(L, 0))->dtype, 0);
}

int low_col2im(Low *L)
{
    int x = low_in(L, 0), y = low_out(L, 0);
    const LoopBuf *xb = low_buf(L, x), *yb = low_buf(L, y);
    int sp = yb->shape.rank - 2;
    int64_t img[IR_MAX_RANK], blk[IR_MAX_RANK];
    if (low_known_ints(L, 1, img, IR_MAX_RANK) != sp || low_known_ints(L, 2, blk, IR_MAX_RANK) != sp)
        return ir_node_error(L->g, L->n, L->d, "image_shape and block_shape must be known at compile time");
    IrColGeom c;
    if (ir_col2im_geometry(L->g, L->n, &xb->shape, img, blk, sp, &c, L->d))
        return -1;
    IrDType t = low_ctype(yb->dtype);
    LoopStmt *k = loop_block(L->p);
    int b, ch, kv[IR_MAX_RANK], bv[IR_MAX_RANK];
    if (!k || low_map_into(L, k, y, zero_value, NULL) || low_vars(L, 1, "b", &b) || low_vars(L, 1, "c", &ch) ||
        low_vars(L, sp, "k", kv) || low_vars(L, sp, "l", bv))
        return k ? -1 : low_oom(L);
    LoopExpr *kf = low_i(L, 0), *bf = low_i(L, 0), *pos[IR_MAX_RANK], *cond = NULL;
    for (int i = 0; i < sp; i++) {
        kf = low_bin(L, LOOP_ADD, low_bin(L, LOOP_MUL, kf, low_i(L, c.blk[i])), low_v(L, kv[i]));
        bf = low_bin(L, LOOP_ADD, low_bin(L, LOOP_MUL, bf, low_i(L, c.cnt[i])), low_v(L, bv[i]));
        pos[i] = low_bin(L, LOOP_ADD, low_bin(L, LOOP_SUB, low_bin(L, LOOP_MUL, low_v(L, bv[i]), low_i(L, c.stride[i])),
                                               low_i(L, c.pad[i])),
                         low_bin(L, LOOP_MUL, low_v(L, kv[i]), low_i(L, c.dil[i])));
        cond = low_and(L, cond, low_in_range(L, pos[i], 0, c.img[i]));
        pos[i] = loop_expr_copy(L->p, pos[i]);
    }
    /* x [N, C * kprod, L]: row (b, ch * kprod + kf), column bf */
    LoopExpr *xi[3] = { low_v(L, b), low_bin(L, LOOP_ADD, low_bin(L, LOOP_MUL, low_v(L, ch), low_i(L, c.kprod)), kf), bf };
    LoopExpr *yi = nc_index(L, y, low_v(L, b), low_v(L, ch), pos, sp);
    LoopExpr *val = low_bin(L, LOOP_ADD, low_load(L, y, yi, t), low_load(L, x, low_index(L, x, xi), t));
    LoopStmt *st = low_store(L, y, loop_expr_copy(L->p, yi), val);
    LoopStmt *body = loop_if(L->p, cond, st, NULL);
    body = low_nest(L, sp, bv, c.cnt, body);
    body = low_nest(L, sp, kv, c.blk, body);
    int vars[2] = { b, ch };
    int64_t ext[2] = { yb->shape.dims[0], c.channels };
    if (low_add(L, k, low_nest(L, 2, vars, ext, body)))
        return low_oom(L);
    return low_kernel(L, k);
}

/* ---------------------------------------------------------- GridSample */

/* As the interpreter (interp/k_sample.c): grid coordinates (x first) are
 * unnormalized (align_corners or pixel centres); nearest rounds half to
 * even; positions outside [lo, hi] are clamped (border) or reflected
 * (reflection) first; then nearest / linear (2 taps) / cubic (4 taps, a =
 * -0.75) interpolation reads each tap through the padding rule: zeros
 * outside, border clamps, reflection folds.  Float64; taps are clamped into
 * the input, so every load stays inside. */
typedef struct Gs {
    int x, grid, y, sp, mode, pad, align;
    const int64_t *len;
} Gs;

static LoopExpr *fconst(Low *L, double v) { return low_const(L, IR_DT_F64, v); }

/* Folds e (a variable) into [lo, hi] by reflection at the borders. */
static LoopExpr *gs_reflect(Low *L, LoopStmt *b, int v, double lo, double hi)
{
    double rng = hi - lo;
    if (rng <= 0)
        return fconst(L, lo);
    LoopExpr *below = low_bin(L, LOOP_LT, low_v(L, v), fconst(L, lo));
    int dx = low_let(L, b, "dx", loop_select(L->p, below, low_bin(L, LOOP_SUB, fconst(L, lo), low_v(L, v)),
                                             low_bin(L, LOOP_SUB, low_v(L, v), fconst(L, hi))), 0);
    if (dx < 0)
        return NULL;
    int kq = low_let(L, b, "kq", loop_call(L->p, LOOP_I_floor, 1, (LoopExpr *[]){ low_bin(L, LOOP_DIV, low_v(L, dx), fconst(L, rng)) }), 0);
    if (kq < 0)
        return NULL;
    int rr = low_let(L, b, "rr", low_bin(L, LOOP_SUB, low_v(L, dx), low_bin(L, LOOP_MUL, low_v(L, kq), fconst(L, rng))), 0);
    int ev = low_let(L, b, "even", low_bin(L, LOOP_EQ, low_bin(L, LOOP_TMOD, low_v(L, kq), fconst(L, 2)), fconst(L, 0)), 0);
    if (rr < 0 || ev < 0)
        return NULL;
    LoopExpr *lo_r = low_bin(L, LOOP_ADD, fconst(L, lo), low_v(L, rr)), *hi_r = low_bin(L, LOOP_SUB, fconst(L, hi), low_v(L, rr));
    LoopExpr *from_below = loop_select(L->p, low_v(L, ev), lo_r, hi_r);
    LoopExpr *from_above = loop_select(L->p, low_v(L, ev), loop_expr_copy(L->p, hi_r), loop_expr_copy(L->p, lo_r));
    LoopExpr *outside = low_bin(L, LOOP_OR, low_bin(L, LOOP_LT, low_v(L, v), fconst(L, lo)), low_bin(L, LOOP_LT, fconst(L, hi), low_v(L, v)));
    return loop_select(L->p, outside, loop_select(L->p, loop_expr_copy(L->p, below), from_below, from_above), low_v(L, v));
}

static double gs_lo(const Gs *g) { return g->align ? 0.0 : -0.5; }
static double gs_hi(const Gs *g, int i) { return g->align ? (double)g->len[i] - 1 : (double)g->len[i] - 0.5; }

/* Tap at integer position p (a variable) on axis i: *ok when it reads x
 * (zeros padding); returns the clamped index to read. */
static LoopExpr *gs_tap(Low *L, const Gs *g, LoopStmt *b, int i, int p, LoopExpr **ok)
{
    int64_t n = g->len[i];
    LoopExpr *q = low_v(L, p);
    if (g->pad == 0 || n <= 0)                  /* (an empty axis has nothing to clamp to: zero) */
        *ok = low_and(L, *ok, low_in_range(L, low_v(L, p), 0, n));
    if (g->pad == 2) {
        int pf = low_let(L, b, "pf", low_convert(L, low_v(L, p), IR_DT_F64), 0);
        LoopExpr *r = pf < 0 ? NULL : gs_reflect(L, b, pf, gs_lo(g), gs_hi(g, i));
        q = loop_cast(L->p, IR_DT_I64, r);
    }
    return low_bin(L, LOOP_MIN, low_bin(L, LOOP_MAX, q, low_i(L, 0)), low_i(L, n - 1));
}

static LoopExpr *gridsample_elem(Low *L, void *ctx, const int *v, LoopStmt *body)
{
    const Gs *g = ctx;
    int sp = g->sp;
    int pos[IR_MAX_RANK];
    for (int i = 0; i < sp; i++) {
        /* grid[n, out..., sp - 1 - i] */
        LoopExpr *gi[IR_MAX_RANK + 2];
        gi[0] = low_v(L, v[0]);
        for (int k = 0; k < sp; k++)
            gi[1 + k] = low_v(L, v[2 + k]);
        gi[1 + sp] = low_i(L, sp - 1 - i);
        double len = (double)g->len[i];
        LoopExpr *c = low_load(L, g->grid, low_index(L, g->grid, gi), IR_DT_F64);
        c = g->align ? low_bin(L, LOOP_MUL, low_bin(L, LOOP_DIV, low_bin(L, LOOP_ADD, c, fconst(L, 1)), fconst(L, 2)), fconst(L, len - 1))
                     : low_bin(L, LOOP_DIV, low_bin(L, LOOP_SUB, low_bin(L, LOOP_MUL, low_bin(L, LOOP_ADD, c, fconst(L, 1)), fconst(L, len)),
                                                    fconst(L, 1)), fconst(L, 2));
        if (g->mode == 0)
            c = loop_call(L->p, LOOP_I_round_even, 1, &c);
        int cv = low_let(L, body, "gc", c, 0);
        if (cv < 0)
            return NULL;
        LoopExpr *pv = low_v(L, cv);
        if (g->pad == 1)
            pv = low_bin(L, LOOP_MIN, low_bin(L, LOOP_MAX, pv, fconst(L, 0)), fconst(L, len - 1));
        else if (g->pad == 2)
            pv = gs_reflect(L, body, cv, gs_lo(g), gs_hi(g, i));
        if (g->pad == 1) {
            /* border only clamps positions outside [lo, hi] (inside ones stay) */
            LoopExpr *out = low_bin(L, LOOP_OR, low_bin(L, LOOP_LT, low_v(L, cv), fconst(L, gs_lo(g))),
                                    low_bin(L, LOOP_LT, fconst(L, gs_hi(g, i)), low_v(L, cv)));
            pv = loop_select(L->p, out, pv, low_v(L, cv));
        }
        /* far outside or not finite: reads padding */
        int pp = low_let(L, body, "pos", pv, 0);
        if (pp < 0)
            return NULL;
        LoopExpr *bad = low_bin(L, LOOP_OR, low_bin(L, LOOP_LT, fconst(L, 1e15), loop_un(L->p, LOOP_ABS, low_v(L, pp))),
                                low_bin(L, LOOP_NE, low_v(L, pp), low_v(L, pp)));
        if ((pos[i] = low_let(L, body, "p", loop_select(L->p, bad, fconst(L, -2), low_v(L, pp)), 0)) < 0)
            return NULL;
    }
    int taps = g->mode == 0 ? 1 : g->mode == 1 ? 2 : 4, first = g->mode == 2 ? -1 : 0;
    int p0[IR_MAX_RANK], fr[IR_MAX_RANK];
    for (int i = 0; i < sp; i++) {
        LoopExpr *f = g->mode == 0 ? low_v(L, pos[i]) : loop_call(L->p, LOOP_I_floor, 1, (LoopExpr *[]){ low_v(L, pos[i]) });
        int fv = low_let(L, body, "fl", f, 0);
        if (fv < 0 || (p0[i] = low_let(L, body, "p0", loop_cast(L->p, IR_DT_I64, low_v(L, fv)), 0)) < 0 ||
            (fr[i] = low_let(L, body, "fr", low_bin(L, LOOP_SUB, low_v(L, pos[i]), low_v(L, fv)), 0)) < 0)
            return NULL;
    }
    LoopExpr *acc = NULL;
    int ntaps = 1;
    for (int i = 0; i < sp; i++)
        ntaps *= taps;
    for (int tap = 0; tap < ntaps; tap++) {
        LoopExpr *wt = NULL, *ok = NULL, *xi[IR_MAX_RANK];
        xi[0] = low_v(L, v[0]);
        xi[1] = low_v(L, v[1]);
        for (int i = 0, rest = tap; i < sp; i++) {
            int kk = rest % taps;
            rest /= taps;
            int p = low_let(L, body, "q", low_bin(L, LOOP_ADD, low_v(L, p0[i]), low_i(L, first + kk)), 0);
            if (p < 0)
                return NULL;
            xi[2 + i] = gs_tap(L, g, body, i, p, &ok);
            LoopExpr *w = NULL, *t = low_v(L, fr[i]);
            if (g->mode == 1) {
                w = kk ? t : low_bin(L, LOOP_SUB, fconst(L, 1), t);
            } else if (g->mode == 2) {
                const double a = -0.75;
                double off[4] = { 1, 0, -1, -2 };        /* distance: t + 1, t, 1 - t, 2 - t */
                LoopExpr *x = kk < 2 ? low_bin(L, LOOP_ADD, t, fconst(L, off[kk] == 1 ? 1 : 0))
                                     : low_bin(L, LOOP_SUB, fconst(L, -off[kk]), t);
                int xv = low_let(L, body, "cx", x, 0);
                if (xv < 0)
                    return NULL;
                LoopExpr *X = low_v(L, xv);
                if (kk == 0 || kk == 3)
                    w = low_bin(L, LOOP_SUB, low_bin(L, LOOP_MUL, low_bin(L, LOOP_ADD, low_bin(L, LOOP_MUL, low_bin(L, LOOP_SUB,
                        low_bin(L, LOOP_MUL, fconst(L, a), X), fconst(L, 5 * a)), low_v(L, xv)), fconst(L, 8 * a)), low_v(L, xv)), fconst(L, 4 * a));
                else
                    w = low_bin(L, LOOP_ADD, low_bin(L, LOOP_MUL, low_bin(L, LOOP_MUL, low_bin(L, LOOP_SUB,
                        low_bin(L, LOOP_MUL, fconst(L, a + 2), X), fconst(L, a + 3)), low_v(L, xv)), low_v(L, xv)), fconst(L, 1));
            }
            if (w)
                wt = wt ? low_bin(L, LOOP_MUL, wt, w) : w;
        }
        LoopExpr *val = low_load(L, g->x, low_index(L, g->x, xi), IR_DT_F64);
        if (ok)
            val = loop_select(L->p, ok, val, fconst(L, 0));
        LoopExpr *term = wt ? low_bin(L, LOOP_MUL, wt, val) : val;
        acc = acc ? low_bin(L, LOOP_ADD, acc, term) : term;
    }
    return acc;
}

int low_gridsample(Low *L)
{
    Gs g = { .x = low_in(L, 0), .grid = low_in(L, 1), .y = low_out(L, 0),
             .align = ir_attr_int(L->n, IR_A_align_corners) != 0 };
    const LoopBuf *xb = low_buf(L, g.x);
    g.sp = xb->shape.rank - 2;
    g.len = &xb->shape.dims[2];
    if (ir_gridsample_modes(L->g, L->n, &g.mode, &g.pad, L->d))
        return -1;
    if (g.mode == 2 && g.sp != 2)
        return util_error(L->d, L->n->loc, "operator GridSample (node '%s') with cubic mode on %d spatial axes is "
                          "not supported on target cpu yet", L->n->name ? L->n->name : "", g.sp);
    return low_map(L, g.y, gridsample_elem, &g);
}
