/* lower/tile/qpool.c — MaxPool as vectors along the output rows, reading
 * its input where it lies (tile_impl.h; prefix tile_): the int8 / uint8
 * MaxPool that the qdq passes keep between a DequantizeLinear and a
 * QuantizeLinear of the same scale and zero point (docs/passes.md), which
 * the float32 templates (direct.c) do not take, and a padded float32 one
 * whose input has no halo (which those would copy into a padded buffer).
 *
 * Per image, channel and output row, pieces of VW lanes (the last moved
 * back to end at the row's end, as the QLinearConv pack's):
 *   y[n][c][oh][ow] = max over the taps (kh, kw) inside x of
 *                     x[n][c][oh s0 + kh d0 - p0][ow s1 + kw d1 - p1]
 * with the taps unrolled (8 bits in int32 lanes, the vector forms' integer
 * arithmetic), a tap outside x reading the type's minimum (-inf)
 * (the identity of max: every window holds a tap inside x, checked).  The
 * row test is the same for every lane; the pieces inside the row
 * (tile_inner_pieces) test no column, the border pieces test it per lane.
 * Exact: max of 8-bit integers, bit for bit the interpreter's; float32's
 * max propagates NaN, as the operator. */
#include "lower/tile/tile_impl.h"

#include <math.h>

enum { QPOOL_VW = 16, QPOOL_MAX_TAPS = 64 };

/* The max over the window's taps for lane c of piece ow0 (loop variables
 * n, ch, oh); cols: test the columns per lane. */
static LoopExpr *window_max(Low *L, const IrWindow *w, int x, int n, int ch, int oh, int ow0, int c, int cols)
{
    int S = w->rank;
    IrDType xt = low_buf(L, x)->dtype;
    double lo = xt == IR_DT_F32 ? -INFINITY : xt == IR_DT_I8 ? -128 : 0;
    int64_t xs[IR_MAX_RANK];
    low_strides(L, x, xs);
    int64_t KH = S == 2 ? w->kernel[0] : 1, KW = w->kernel[S - 1];
    LoopExpr *m = NULL;
    for (int64_t kh = 0; kh < KH; kh++)
        for (int64_t kw = 0; kw < KW; kw++) {
            LoopExpr *iw = low_bin(L, LOOP_SUB, add(L, mul(L, add(L, low_v(L, ow0), low_v(L, c)), w->stride[S - 1]),
                                                    low_i(L, kw * w->dilation[S - 1])),
                                   low_i(L, w->pad_begin[S - 1]));
            LoopExpr *at = add(L, add(L, mul(L, low_v(L, n), xs[0]), mul(L, low_v(L, ch), xs[1])),
                               mul(L, loop_expr_copy(L->p, iw), xs[S + 1]));
            LoopExpr *cond = cols ? low_in_range(L, iw, 0, w->in[S - 1]) : NULL;
            if (S == 2) {
                LoopExpr *ih = low_i(L, kh * w->dilation[0] - w->pad_begin[0]);
                ih = add(L, mul(L, low_v(L, oh), w->stride[0]), ih);
                at = add(L, at, mul(L, loop_expr_copy(L->p, ih), xs[2]));
                LoopExpr *rc = low_in_range(L, ih, 0, w->in[0]);
                cond = cond ? low_and(L, rc, cond) : rc;
            }
            LoopExpr *v = low_load(L, x, at, xt);
            if (cond)                       /* a guarded load (masked: the lanes off read nothing) */
                v = loop_select(L->p, cond, v, low_const(L, xt, lo));
            if (xt != IR_DT_F32)
                v = low_convert(L, v, IR_DT_I32);
            m = m ? low_bin(L, LOOP_MAX, m, v) : v;
        }
    return m;
}

/* The body of a row's piece loop (variable qv): `inside` for the pieces
 * [qlo, qhi), `border` for the others (either may be NULL: none such). */
static LoopStmt *piece_select(Low *L, int qv, int64_t qlo, int64_t qhi, LoopStmt *border, LoopStmt *inside)
{
    if (!border || !inside)
        return border ? border : inside;
    LoopExpr *in = low_and(L, low_bin(L, LOOP_LE, low_i(L, qlo), low_v(L, qv)), low_bin(L, LOOP_LT, low_v(L, qv), low_i(L, qhi)));
    return loop_if(L->p, in, inside, border);
}

int tile_qmaxpool(Low *L)
{
    const LowSchedule *s = L->s;
    if (!s || s->tile_nr <= 0 || L->fuse_n || (L->n->n_out > 1 && L->n->out[1] >= 0))
        return 1;
    int x = low_in(L, 0), y = low_out(L, 0);
    if (x < 0 || y < 0)
        return L->oom ? low_oom(L) : 1;
    IrDType xt = low_buf(L, x)->dtype;
    if ((xt != IR_DT_I8 && xt != IR_DT_U8 && xt != IR_DT_F32) || low_buf(L, y)->dtype != xt ||
        loop_buf_has_halo(low_buf(L, x)) || loop_buf_has_halo(low_buf(L, y)))
        return 1;
    IrWindow w;
    if (ir_window(L->g, L->n, &low_buf(L, x)->shape, NULL, &w, L->d) != 0)
        return -1;
    int S = w.rank, padded = 0;
    if (S < 1 || S > 2)
        return 1;
    for (int i = 0; i < S; i++)
        padded |= w.pad_begin[i] != 0 || w.pad_end[i] != 0;
    /* float32: only a padded window over an input its producer stored
     * without a halo, which the float32 template (direct.c) would copy into
     * a padded buffer first (a --precision bf16 convolution's output:
     * ResNet-18's stem, the copy and the pool 274 us) */
    if (xt == IR_DT_F32 && (low_buf(L, x)->storage != LOOP_ST_WORKSPACE || !padded))
        return 1;
    int64_t taps = 1, ys[IR_MAX_RANK], xs[IR_MAX_RANK];
    for (int i = 0; i < S; i++) {
        taps *= w.kernel[i];
        /* every window holds a tap inside x: the first reaches 0, the last starts before the end */
        if (w.pad_begin[i] < 0 || (w.kernel[i] - 1) * w.dilation[i] < w.pad_begin[i] ||
            (w.out[i] - 1) * w.stride[i] - w.pad_begin[i] >= w.in[i])
            return 1;
    }
    low_strides(L, y, ys);
    low_strides(L, x, xs);
    int64_t OW = w.out[S - 1];
    if (taps > QPOOL_MAX_TAPS || ys[S + 1] != 1 || xs[S + 1] != 1)
        return 1;
    /* a strided load reads one s*VW-element vector: an intermediate gets
     * the s - 1 elements past its end it may reach (before memory planning) */
    int64_t slack = w.stride[S - 1] - 1;
    LoopBuf *xb = &L->p->bufs[x];
    if (slack > xb->slack && slack <= 4 && xb->storage == LOOP_ST_WORKSPACE && xb->alias_of < 0) {
        xb->bytes += (slack - xb->slack) * (int64_t)ir_dtype_size(xb->dtype);
        xb->slack = (int)slack;
    }
    int64_t VW = OW <= QPOOL_VW ? OW : QPOOL_VW, nq = (OW + VW - 1) / VW, qlo, qhi;
    if (xt == IR_DT_F32 && OW < QPOOL_VW)
        return 1;                           /* narrow rows: the template's whole-plane vectors */
    tile_inner_pieces(&w, OW, VW, &qlo, &qhi);
    int n, ch, oh, qv, c[2];
    if (low_vars(L, 1, "n", &n) || low_vars(L, 1, "c", &ch) || low_vars(L, 1, "oh", &oh) ||
        low_vars(L, 1, "q", &qv) || low_vars(L, 2, "l", c))
        return low_oom(L);
    LoopStmt *blk = loop_block(L->p);
    if (!blk)
        return low_oom(L);
    int ow0 = low_let(L, blk, "ow0", low_bin(L, LOOP_MIN, mul(L, low_v(L, qv), VW), low_i(L, OW - VW)), 0);
    if (ow0 < 0)
        return low_oom(L);
    LoopStmt *piece[2] = { NULL, NULL };    /* border, interior */
    for (int in = 0; in < 2; in++) {
        if (in ? qlo >= qhi : qlo == 0 && qhi == nq)
            continue;
        LoopExpr *at = add(L, add(L, mul(L, low_v(L, n), ys[0]), mul(L, low_v(L, ch), ys[1])),
                           add(L, low_v(L, ow0), low_v(L, c[in])));
        if (S == 2)
            at = add(L, at, mul(L, low_v(L, oh), ys[2]));
        LoopExpr *m = window_max(L, &w, x, n, ch, oh, ow0, c[in], !in);
        LoopStmt *st = low_store(L, y, at, xt == IR_DT_F32 ? m : low_convert(L, m, xt));
        if (!st || !(piece[in] = loop_block(L->p)) || tile_vec_loop(L, piece[in], c[in], st, (int)VW))
            return low_oom(L);
    }
    LoopStmt *body = piece_select(L, qv, qlo, qhi, piece[0], piece[1]);
    if (!body || low_add(L, blk, body))
        return low_oom(L);
    int vars[4] = { n, ch, oh, qv };
    int64_t ext[4] = { w.batch, w.channels_in, S == 2 ? w.out[0] : 1, nq };
    return low_kernel(L, low_nest(L, 4, vars, ext, blk));
}
