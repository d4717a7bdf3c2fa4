/* lower/tile/direct.c — the float32 window templates whose lanes run
 * along an output row (tile_impl.h; prefix tile_): depthwise
 * convolution and max pooling (tile_dw_emit), over whole planes on narrow
 * maps, joined to the kernel that makes their input's channel blocks when
 * they can; and the direct convolution for short reductions
 * (tile_direct_emit), MR output channels of a row a block.  Their padding
 * is read in place (a halo'd input, masked columns, or guarded loads of a
 * model input) or from a padded copy (tile_in_place, tile_pad_input). */
#include "lower/tile/tile_impl.h"

#include <math.h>

/* A table for masked columns: M[kw, j] = 1 where lane j's tap kw falls
 * inside the input row, else 0; lane j is output column j (j < len, the
 * block-rounded row) or, with a period, column j % period (a whole plane
 * with unit strides). */
static int col_mask_buf(Low *L, const IrWindow *w, int64_t len, int64_t period)
{
    int64_t KW = w->kernel[1];
    float *m;
    int mb = low_const_table(L, "col_mask", KW * len, &m);
    for (int64_t kw = 0; mb >= 0 && kw < KW; kw++)
        for (int64_t j = 0; j < len; j++) {
            int64_t iw = (period ? j % period : j) * w->stride[1] + kw * w->dilation[1] - w->pad_begin[1];
            m[kw * len + j] = iw >= 0 && iw < w->in[1] ? 1.0f : 0.0f;
        }
    return mb;
}

/* x where M[kw, ow0 + c] says the lane's column is inside the row (and
 * row_ok, when given, that the row is inside the input: a model input),
 * else fill.  Without row_ok x reads a halo'd buffer, where a lane off the
 * row reads the neighbouring row or the halo before the first: the load is
 * safe (docs/loop-ir.md), a strided one a plain wide load. */
static LoopExpr *col_masked(Low *L, int mb, int kw, int ow0, int c, int64_t owp, LoopExpr *x, double fill,
                            LoopExpr *row_ok)
{
    if (x && x->kind == LOOP_E_LOAD && !row_ok)
        x->u.load.safe = 1;
    return tile_mask_select(L, mb, add(L, add(L, mul(L, low_v(L, kw), owp), low_v(L, ow0)), low_v(L, c)), x, row_ok, fill);
}

/* A depthwise block's starting accumulator: the channel's bias, 0, or -inf
 * (MaxPool). */
static LoopExpr *dw_acc0(Low *L, int bb, int co, int maxpool)
{
    return bb >= 0 ? low_load(L, bb, low_v(L, co), IR_DT_F32) : low_const(L, IR_DT_F32, maxpool ? -INFINITY : 0.0);
}

/* The weight of tap (kh, kw) of channel co, LET in kb; 0 for MaxPool (wb < 0),
 * -1 out of memory. */
static int dw_weight(Low *L, LoopStmt *kb, int wb, int co, int kh, int kw, const IrWindow *w)
{
    if (wb < 0)
        return 0;
    int64_t KH = w->kernel[0], KW = w->kernel[1];
    LoopExpr *wi = add(L, add(L, mul(L, low_v(L, co), KH * KW), mul(L, low_v(L, kh), KW)), low_v(L, kw));
    return low_let(L, kb, "w", low_load(L, wb, wi, IR_DT_F32), 0);
}

/* Input row oh * stride + kh * dilation - pad_top inside [0, H)? */
static LoopExpr *row_in(Low *L, LoopExpr *oh, int kh, const IrWindow *w)
{
    LoopExpr *ih = low_bin(L, LOOP_SUB, add(L, mul(L, oh, w->stride[0]), mul(L, low_v(L, kh), w->dilation[0])),
                           low_i(L, w->pad_begin[0]));
    return low_bin(L, LOOP_AND, low_bin(L, LOOP_LE, low_i(L, 0), ih),
                   low_bin(L, LOOP_LT, loop_expr_copy(L->p, ih), low_i(L, w->in[0])));
}

/* A depthwise layer (one output channel per input channel) or max pool
 * reading x as made, in channel blocks, by the kernel just built: it joins
 * that kernel (low_join), the channels of each block made right after it.
 * NULL: a kernel of its own. */
static const LowBlocks *dw_joins(Low *L, const IrWindow *w, int x, int maxpool)
{
    const LowBlocks *jb = (!maxpool && w->group != w->channels_out) || w->channels_in != w->channels_out
                          ? NULL : low_blocks_of(L, x);
    return jb && jb->C == w->channels_out ? jb : NULL;
}

/* Channel cl of the current block: min(mt*mr + cl, C - 1) (the block's
 * own, repeated past the last channel like the producer's). */
static LoopExpr *dw_join_channel(Low *L, const LowBlocks *jb, int cl)
{
    return low_bin(L, LOOP_MIN, add(L, mul(L, low_v(L, jb->mt), jb->mr), low_v(L, cl)), low_i(L, jb->C - 1));
}

/* Depthwise (or MaxPool) over whole channel planes, for unit strides and
 * same-size outputs read from rows without halo columns (narrow maps, whose
 * rows would fill a fraction of a vector): the lanes run along the flattened
 * plane, p = oh * W + ow, and tap (kh, kw) reads x at p + (kh*dh - pt) * W +
 * kw*dw - pl — the halo rows above and below, and the lanes whose column
 * falls off the row replaced by the fill (a column-mask table M[kw, p]).  A
 * block is MR vectors of the plane; the last vector starts at P - NR.
 * MR = 1: with four, the column masks and accumulators spilled registers
 * (DS-CNN 4% and MobileNetV2 2-5% slower than with one, in A/B timings;
 * the out-of-order core overlaps consecutive blocks). */
static int dw_flat_emit(Low *L, const IrWindow *w, int x, int maxpool, const TileHalo *h)
{
    int64_t H = w->in[0], W = w->in[1], KH = w->kernel[0], KW = w->kernel[1], P = H * W;
    int64_t dh = w->dilation[0], dw = w->dilation[1], pt = w->pad_begin[0], pl = w->pad_begin[1];
    int64_t cout_g = maxpool ? 1 : w->channels_out / w->group;
    int nr = L->s->tile_nr / 2, mr = 1;
    const LoopBuf *X = low_buf(L, x);
    if (w->stride[0] != 1 || w->stride[1] != 1 || w->out[0] != H || w->out[1] != W || P < nr || nr < 4 ||
        X->shape.rank != 4 || X->strides[3] != 1 || X->strides[2] != W || X->halo_rows < h->rows ||
        ((h->rows || h->cols) && X->halo_fill != h->fill) || X->base < pt * W + pl ||
        ((KH - 1) * dh - pt - X->halo_rows) * W + (KW - 1) * dw - pl - 1 >= X->slack ||
        (X->storage != LOOP_ST_WORKSPACE && (h->rows || h->cols)) ||
        low_buf(L, low_out(L, 0))->strides[2] != W)     /* the output's rows W apart too (no halo columns) */
        return 1;
    int64_t vt = (P + nr - 1) / nr, bt = (vt + mr - 1) / mr;
    int mb = col_mask_buf(L, w, P, W);               /* lane p's column: p % W */
    int wb = maxpool ? -1 : low_in(L, 1), bb = !maxpool && low_has(L, 2) ? low_in(L, 2) : -1;
    if (mb < 0 || (!maxpool && wb < 0) || (!maxpool && low_has(L, 2) && bb < 0))
        return low_oom(L);
    int64_t xs[IR_MAX_RANK];
    low_strides(L, x, xs);
    double fill = maxpool ? -INFINITY : 0.0;
    int n, cl, b, kh, kw;
    if (low_vars(L, 1, "n", &n) || low_vars(L, 1, "co", &cl) || low_vars(L, 1, "bt", &b) ||
        low_vars(L, 1, "kh", &kh) || low_vars(L, 1, "kw", &kw))
        return low_oom(L);
    int acc;
    LoopStmt *tile, *kb;
    if (tile_block_start(L, mr, nr, &acc, &tile, &kb))
        return low_oom(L);
    const LowBlocks *jb = dw_joins(L, w, x, maxpool);
    int co = jb ? low_let(L, tile, "co", dw_join_channel(L, jb, cl), 0) : cl;
    if (co < 0)
        return low_oom(L);
    LoopExpr *ci = cout_g > 1 ? low_bin(L, LOOP_DIV, low_v(L, co), low_i(L, cout_g)) : low_v(L, co);
    int chan = low_let(L, tile, "xc", add(L, mul(L, low_v(L, n), xs[0]), mul(L, ci, xs[1])), 0);
    if (chan < 0)
        return low_oom(L);
    int pr[TILE_MAX_MR];
    for (int r = 0; r < mr; r++) {
        LoopExpr *pv = low_bin(L, LOOP_MIN, add(L, mul(L, low_v(L, b), (int64_t)mr * nr), low_i(L, (int64_t)r * nr)),
                               low_i(L, P - nr));
        int c;
        if ((pr[r] = low_let(L, tile, "p", pv, 0)) < 0 || low_vars(L, 1, "c", &c) ||
            tile_acc_set(L, tile, acc, r, nr, c, dw_acc0(L, bb, co, maxpool)))
            return low_oom(L);
    }
    int wv = dw_weight(L, kb, wb, co, kh, kw, w);
    LoopExpr *toff = add(L, add(L, low_v(L, chan), mul(L, low_v(L, kh), dh * W)),
                         add(L, mul(L, low_v(L, kw), dw), low_i(L, -(pt * W + pl))));
    int to = wv < 0 ? -1 : low_let(L, kb, "toff", toff, 0);
    if (to < 0)
        return low_oom(L);
    for (int r = 0; r < mr; r++) {
        int c;
        if (low_vars(L, 1, "c", &c))
            return low_oom(L);
        LoopExpr *xv = low_load(L, x, add(L, low_v(L, to), add(L, low_v(L, pr[r]), low_v(L, c))), IR_DT_F32);
        xv = col_masked(L, mb, kw, pr[r], c, P, xv, fill, NULL);
        if (tile_acc_update(L, kb, acc, r, nr, c, maxpool ? LOOP_MAX : LOOP_ADD, maxpool ? NULL : low_v(L, wv), xv))
            return low_oom(L);
    }
    int kv[2] = { kh, kw };
    int64_t kext[2] = { KH, KW };
    if (low_add(L, tile, low_nest(L, 2, kv, kext, kb)))
        return low_oom(L);
    int64_t ys[IR_MAX_RANK];
    low_strides(L, low_out(L, 0), ys);
    for (int r = 0; r < mr; r++) {
        int c;
        if (low_vars(L, 1, "c", &c))
            return low_oom(L);
        LoopExpr *pos = add(L, low_v(L, pr[r]), low_v(L, c));
        LoopExpr *yi = add(L, add(L, mul(L, low_v(L, n), ys[0]), mul(L, low_v(L, co), ys[1])), loop_expr_copy(L->p, pos));
        if (tile_vec_loop(L, tile, c, tile_out_store(L, yi, low_v(L, n), low_v(L, co), pos, NULL, NULL, tile_acc_at(L, acc, r, nr, c)),
                          nr))
            return low_oom(L);
    }
    int vars[3] = { n, cl, b };
    int64_t ext[3] = { w->batch, jb ? jb->mr : w->channels_out, bt };
    LoopStmt *nest = low_nest(L, 3, vars, ext, tile);
    return jb ? low_join(L, nest) : low_kernel(L, nest);
}

/* Depthwise (one input channel per output channel, 2-D): the lanes run
 * along an output row (NR positions), a block is MR rows of it; each tap
 * broadcasts one weight:
 *   acc[r][:] += W[co, kh, kw] * Xp[ci, oh_r*s + kh*d, (ow0 + lane)*s + kw*d]
 * The padded input has enough columns for the last block's lanes, and the
 * lanes past the row's end are masked at the store. */
int tile_dw_emit(Low *L, const IrWindow *w, int x, int maxpool, const TileHalo *h)
{
    int flat = dw_flat_emit(L, w, x, maxpool, h);
    if (flat <= 0)
        return flat;
    int64_t OH = w->out[0], OW = w->out[1], KH = w->kernel[0], KW = w->kernel[1];
    int64_t sh = w->stride[0], sw = w->stride[1], dh = w->dilation[0], dw = w->dilation[1];
    int64_t cout_g = maxpool ? 1 : w->channels_out / w->group;
    int nr = L->s->tile_nr / 2, mr = 4;
    while (nr > 4 && OW * 4 < nr * 3)
        nr /= 2;
    /* 4 rows a block, or 3 to 7 when 4 do not divide the output rows: the
     * rows past the end repeat the last one (MobileNetV2's 3x3/2 depthwise
     * to 7x7: 8 rows -> 7, 26 -> 15 us; SqueezeNet's max pools to 13x13,
     * 27x27 and 55x55: -3 to -6 us each) */
    if (OH % mr)
        mr = tile_fewest_idle(OH, 7, 3);
    int64_t owt = (OW + nr - 1) / nr, oht = (OH + mr - 1) / mr;
    int64_t need = (owt * nr - 1) * sw + (KW - 1) * dw + 1;
    int64_t have = w->in[1] + w->pad_begin[1] + w->pad_end[1];
    int64_t extra = need > have ? need - have : 0;
    int64_t need_h = (OH - 1) * sh + (KH - 1) * dh + 1, have_h = w->in[0] + w->pad_begin[0] + w->pad_end[0];
    int64_t extra_h = need_h > have_h ? need_h - have_h : 0;     /* MaxPool's ceil_mode windows */
    int slack = sw > 1 && sw <= 4 ? (int)sw - 1 : 0;
    int64_t xoff = 0;
    int masked = 0;
    int xp = tile_in_place(L, x, w, h, &xoff, &masked) ? x
             : tile_pad_input(L, x, w, extra_h, extra, slack, maxpool ? -INFINITY : 0.0);
    int mb = masked ? col_mask_buf(L, w, owt * nr, 0) : -1;
    int wb = maxpool ? -1 : low_in(L, 1), bb = !maxpool && low_has(L, 2) ? low_in(L, 2) : -1;
    if (masked && mb < 0)
        return low_oom(L);
    if (xp < 0 || (!maxpool && wb < 0) || (!maxpool && low_has(L, 2) && bb < 0))
        return -1;
    int64_t xs[IR_MAX_RANK];
    low_strides(L, xp, xs);
    int n, cl, ht, wt, kh, kw;
    if (low_vars(L, 1, "n", &n) || low_vars(L, 1, "co", &cl) || low_vars(L, 1, "ht", &ht) ||
        low_vars(L, 1, "wt", &wt) || low_vars(L, 1, "kh", &kh) || low_vars(L, 1, "kw", &kw))
        return low_oom(L);
    int acc;
    LoopStmt *tile, *kb;
    if (tile_block_start(L, mr, nr, &acc, &tile, &kb))
        return low_oom(L);
    /* One thread: channels last to first.  The producer wrote them first to
     * last, so the last ones are still in cache when its output outgrows it
     * (SqueezeNet's first max pool, MobileNetV2's 112x112 and 56x56
     * depthwise layers: 9-19 us each); split between threads, each thread's
     * channels are the ones it wrote and the order is kept. */
    const LowBlocks *jb = xp == x ? dw_joins(L, w, x, maxpool) : NULL;
    LoopExpr *cj = jb ? dw_join_channel(L, jb, cl) : low_bin(L, LOOP_SUB, low_i(L, w->channels_out - 1), low_v(L, cl));
    int co = L->s->threads > 1 && !jb ? cl : low_let(L, tile, "co", cj, 0);
    if (co < 0)
        return low_oom(L);
    LoopExpr *ci = cout_g > 1 ? low_bin(L, LOOP_DIV, low_v(L, co), low_i(L, cout_g)) : low_v(L, co);
    int chan = low_let(L, tile, "xc", add(L, add(L, mul(L, low_v(L, n), xs[0]), mul(L, ci, xs[1])), low_i(L, xoff)), 0);
    int ow0 = chan < 0 ? -1 : low_let(L, tile, "ow0", mul(L, low_v(L, wt), nr), 0);
    if (ow0 < 0)
        return low_oom(L);
    int row[TILE_MAX_MR], rb[TILE_MAX_MR];
    for (int r = 0; r < mr; r++) {
        LoopExpr *rv = low_bin(L, LOOP_MIN, add(L, mul(L, low_v(L, ht), mr), low_i(L, r)), low_i(L, OH - 1));
        if ((row[r] = low_let(L, tile, "oh", rv, 0)) < 0 ||
            (rb[r] = low_let(L, tile, "xrow", add(L, low_v(L, chan), mul(L, low_v(L, row[r]), sh * xs[2])), 0)) < 0)
            return low_oom(L);
        int c;
        if (low_vars(L, 1, "c", &c) || tile_acc_set(L, tile, acc, r, nr, c, dw_acc0(L, bb, co, maxpool)))
            return low_oom(L);
    }
    int wv = dw_weight(L, kb, wb, co, kh, kw, w);
    LoopExpr *toff = add(L, add(L, mul(L, low_v(L, kh), dh * xs[2]), mul(L, low_v(L, ow0), sw)), mul(L, low_v(L, kw), dw));
    int to = wv < 0 ? -1 : low_let(L, kb, "toff", toff, 0);
    if (to < 0)
        return low_oom(L);
    for (int r = 0; r < mr; r++) {
        int c;
        if (low_vars(L, 1, "c", &c))
            return low_oom(L);
        LoopExpr *xv = low_load(L, xp, add(L, add(L, low_v(L, rb[r]), low_v(L, to)), mul(L, low_v(L, c), sw)), IR_DT_F32);
        if (masked)
            xv = col_masked(L, mb, kw, ow0, c, owt * nr, xv, maxpool ? -INFINITY : 0.0,
                            masked > 1 ? row_in(L, low_v(L, row[r]), kh, w) : NULL);
        /* max: NaN propagates */
        if (tile_acc_update(L, kb, acc, r, nr, c, maxpool ? LOOP_MAX : LOOP_ADD, maxpool ? NULL : low_v(L, wv), xv))
            return low_oom(L);
    }
    int kv[2] = { kh, kw };
    int64_t kext[2] = { KH, KW };
    LoopStmt *taps = low_nest(L, 2, kv, kext, kb);
    if (taps && KH <= 5 && sh > 1) {  /* strided: rows kh of block row r and kh - sh of row r + 1 are the same
                                         input row, loaded (and deinterleaved) once when kh is unrolled */
        taps->u.loop.kind = LOOP_UNROLLED;
        taps->u.loop.factor = (int)KH;
    }
    if (low_add(L, tile, taps))
        return low_oom(L);
    for (int r = 0; r < mr; r++)
        if (tile_row_out(L, tile, acc, r, nr, n, co, row[r], ow0, OW, 0))
            return low_oom(L);
    int vars[4] = { n, cl, ht, wt };
    int64_t ext[4] = { w->batch, jb ? jb->mr : w->channels_out, oht, owt };
    LoopStmt *nest = low_nest(L, 4, vars, ext, tile);
    return jb ? low_join(L, nest) : low_kernel(L, nest);
}

/* Direct convolution (2-D, short reduction K = C_in/group * KH * KW): the
 * lanes run along an output row (NR positions), a block is MR output
 * channels of that row.  Each (ci, kh, kw) step loads one vector of the
 * padded input row, shared by the MR channels, and broadcasts MR weights
 * packed at compile time as [G][ceil(C_out/MR)][ci][kh][kw][MR]:
 *   acc[r][:] += Wp[co_r, ci, kh, kw] * Xp[ci, oh*s + kh*d, (ow0 + lane)*s + kw*d]
 * and the block is stored as MR contiguous row pieces — where the GEMM form
 * would spend more on scattering its output block than on its short
 * reduction.  In a row of at least NR the last block starts at OW - NR,
 * recomputing columns of the one before, so its stores need no mask and its
 * loads no padding past the row (SqueezeNet's unpadded 3x3/2 stem reads
 * the model input in place instead of a copy); in a shorter row the lanes
 * past its end are masked.  NR is one register instead of two when
 * two would leave more than a sixteenth of the last block's lanes idle (rows
 * of 111: 112 lanes computed instead of 128) and, at stride 1, one would
 * leave fewer: a stride-1 step of two registers loads two input vectors for
 * MR/2 weight broadcasts where one register loads one for MR, so rows of 14
 * and 28 (16 and 32 lanes either way) keep two (RegNetX-400MF's grouped 3x3
 * layers at 14x14 55 -> 63 GFLOPS, 28x28 57-65 -> 70-72, the model -2 to -3%,
 * Zen 3 AVX2); strided, both load alike and the narrower block keeps its row
 * inside the input (SqueezeNet's stem reads the model input in place). */
int tile_direct_nr(const LowSchedule *s, int64_t OW, int64_t sw)
{
    int nr = s->tile_nr;
    while (nr > 4 && OW * 4 < nr * 3)
        nr /= 2;
    if (nr >= 16 && tile_idle(OW, nr) * 16 > OW && (sw > 1 || tile_idle(OW, nr / 2) < tile_idle(OW, nr)))
        nr /= 2;                        /* one register when two leave over 1/16 of the lanes idle (111: 17 of
                                           128) and, at stride 1, one leaves fewer (not 14: 2 of 16 either way) */
    return nr;
}

int tile_direct_emit(Low *L, const IrWindow *w, int x, const float *wt, const TileHalo *h)
{
    int64_t OH = w->out[0], OW = w->out[1], KH = w->kernel[0], KW = w->kernel[1];
    int64_t sh = w->stride[0], sw = w->stride[1], dh = w->dilation[0], dw = w->dilation[1];
    int64_t G = w->group, cin = w->channels_in / G, cout = w->channels_out / G, K = cin * KH * KW;
    int nr = tile_direct_nr(L->s, OW, sw);
    /* one-register blocks with 32 registers: up to TILE_MAX_MR rows, not
     * tile_pick_mr's 12 — a step loads one input vector (two and a shuffle
     * when strided) and broadcasts MR weights, so more rows share its loads
     * (SqueezeNet's 3x3/2 stem, 64 channels: 8 -> 16 rows, 304 -> 259 us) */
    int lanes = L->s->tile_nr / 2;
    int mr = nr <= lanes && lanes >= 16 ? tile_fewest_idle(cout, TILE_MAX_MR, 3) : tile_pick_mr(L, nr, cout);
    int inside = OW >= nr;                                    /* the last block starts at OW - nr (tile_halo) */
    int64_t ct = (cout + mr - 1) / mr, owt = (OW + nr - 1) / nr;
    int64_t need = ((inside ? OW : owt * nr) - 1) * sw + (KW - 1) * dw + 1;
    int64_t have = w->in[1] + w->pad_begin[1] + w->pad_end[1];
    int64_t extra = need > have ? need - have : 0;
    int slack = sw > 1 && sw <= 4 ? (int)sw - 1 : 0;
    /* With threads, a layer on an image (at most 4 input channels) with no
     * more blocks of output channels than threads is split by output rows:
     * RP parts of OHP rows (the last part's rows past the end repeat the
     * last row), each all the channel blocks of its rows, so each thread
     * reads its part of the input instead of all of it.  MobileNetV2's
     * 3x3/2 stem (32 channels: 2 blocks) at 2 threads 134 -> 87 us;
     * SqueezeNet's (64: 4 blocks) ran 8 us slower so, its max pool 24. */
    int64_t RP = L->s->threads > 1 ? L->s->threads : 1, OHP = tile_part_len(L, OH);
    int rows_split = OHP < OH && ct <= RP && G == 1 && cin <= 4, rp = -1, ohl = -1;
    /* otherwise its output's halo rows with each channel's first block
     * (taken before a padded copy of the input is made: the halo kernel
     * must be the last one) */
    int64_t lead = rows_split ? 0 : low_halo_take_rows(L);
    int64_t xoff = 0;
    int masked = 0;
    int xp = tile_in_place(L, x, w, h, &xoff, &masked) ? x : tile_pad_input(L, x, w, 0, extra, slack, 0.0);
    int mb = masked ? col_mask_buf(L, w, owt * nr, 0) : -1;
    int bb = low_has(L, 2) ? low_in(L, 2) : -1;
    if (masked && mb < 0)
        return low_oom(L);
    if (xp < 0 || (low_has(L, 2) && bb < 0))
        return -1;
    LoopProgram *p = L->p;
    IrShape wsh = { .rank = 1, .dims = { G * ct * K * mr } };
    float *wp = util_arena_array(&p->arena, (size_t)wsh.dims[0], sizeof *wp);
    if (!wp)
        return low_oom(L);
    for (int64_t g = 0; g < G; g++)
        for (int64_t t = 0; t < ct; t++)
            for (int64_t k = 0; k < K; k++)
                for (int r = 0; r < mr; r++) {
                    int64_t co = t * mr + r < cout ? t * mr + r : cout - 1;
                    wp[((g * ct + t) * K + k) * mr + r] = wt[(g * cout + co) * K + k];
                }
    int wb = loop_add_buf(p, "packed_w", IR_DT_F32, &wsh, LOOP_ST_CONST);
    if (wb < 0)
        return low_oom(L);
    p->bufs[wb].data = wp;
    int64_t xs[IR_MAX_RANK];
    low_strides(L, xp, xs);
    int n, g, t, oh, wt_, ci, kh, kw;
    if (low_vars(L, 1, "n", &n) || low_vars(L, 1, "g", &g) || low_vars(L, 1, "ct", &t) ||
        low_vars(L, 1, "oh", &oh) || low_vars(L, 1, "wt", &wt_) || low_vars(L, 1, "ci", &ci) ||
        low_vars(L, 1, "kh", &kh) || low_vars(L, 1, "kw", &kw))
        return low_oom(L);
    int acc;
    LoopStmt *tile, *kb;
    if (tile_block_start(L, mr, nr, &acc, &tile, &kb))
        return low_oom(L);
    if (rows_split) {
        if (low_vars(L, 1, "rp", &rp) || low_vars(L, 1, "ohl", &ohl))
            return low_oom(L);
        LoopExpr *ohe = low_bin(L, LOOP_MIN, add(L, mul(L, low_v(L, rp), OHP), low_v(L, ohl)), low_i(L, OH - 1));
        if ((oh = low_let(L, tile, "oh", ohe, 0)) < 0)
            return low_oom(L);
    }
    LoopExpr *xrow = add(L, add(L, add(L, mul(L, low_v(L, n), xs[0]), mul(L, low_v(L, g), cin * xs[1])),
                                mul(L, low_v(L, oh), sh * xs[2])), low_i(L, xoff));
    int xr = low_let(L, tile, "xrow", xrow, 0);
    LoopExpr *ow0e = mul(L, low_v(L, wt_), nr);
    int ow0 = xr < 0 ? -1 : low_let(L, tile, "ow0", inside ? low_bin(L, LOOP_MIN, ow0e, low_i(L, OW - nr)) : ow0e, 0);
    if (ow0 < 0)
        return low_oom(L);
    int co[TILE_MAX_MR];
    if (tile_channel_rows(L, tile, acc, mr, nr, g, t, cout, bb, co))
        return low_oom(L);
    LoopExpr *first = low_bin(L, LOOP_EQ, add(L, low_v(L, oh), low_v(L, wt_)), low_i(L, 0));
    if (lead && tile_halo_rows(L, tile, first, n, co, mr, lead))
        return low_oom(L);
    LoopExpr *kf = add(L, mul(L, add(L, mul(L, low_v(L, ci), KH), low_v(L, kh)), KW), low_v(L, kw));
    LoopExpr *wbase = mul(L, add(L, mul(L, add(L, mul(L, low_v(L, g), ct), low_v(L, t)), K), kf), mr);
    int wv0 = low_let(L, kb, "wb", wbase, 0);
    LoopExpr *xo = add(L, add(L, add(L, low_v(L, xr), mul(L, low_v(L, ci), xs[1])), mul(L, low_v(L, kh), dh * xs[2])),
                       add(L, mul(L, low_v(L, ow0), sw), mul(L, low_v(L, kw), dw)));
    int xov = wv0 < 0 ? -1 : low_let(L, kb, "xo", xo, 0);
    if (xov < 0)
        return low_oom(L);
    for (int r = 0; r < mr; r++) {
        int wr = low_let(L, kb, "w", low_load(L, wb, add(L, low_v(L, wv0), low_i(L, r)), IR_DT_F32), 0), c;
        if (wr < 0 || low_vars(L, 1, "c", &c))
            return low_oom(L);
        LoopExpr *xv = low_load(L, xp, add(L, low_v(L, xov), mul(L, low_v(L, c), sw)), IR_DT_F32);
        if (xv && xv->kind == LOOP_E_LOAD)
            xv->u.load.spare = (int)sw - 1;   /* inside the reach (tile_halo), which tile_in_place or the copy provides */
        if (masked)
            xv = col_masked(L, mb, kw, ow0, c, owt * nr, xv, 0.0, masked > 1 ? row_in(L, low_v(L, oh), kh, w) : NULL);
        if (tile_acc_update(L, kb, acc, r, nr, c, LOOP_ADD, low_v(L, wr), xv))
            return low_oom(L);
    }
    int kv[3] = { ci, kh, kw };
    int64_t kext[3] = { cin, KH, KW };
    LoopStmt *ks = low_nest(L, 3, kv, kext, kb);
    if (!ks)
        return low_oom(L);
    if (sw == 1 && KW <= 3)   /* a short loop of unit-stride taps unrolled: ResNet-8's stem (masked loads) 6.6-7.0 ->
                                 6.3 us; strided stems (wide loads and shuffles) measured 2-10% slower unrolled */
        ks->u.loop.body->u.loop.body->u.loop.kind = LOOP_UNROLLED;
    if (low_add(L, tile, ks))
        return low_oom(L);
    for (int r = 0; r < mr; r++)
        if (tile_row_out(L, tile, acc, r, nr, n, co[r], oh, ow0, OW, inside))
            return low_oom(L);
    int vars[6] = { n, g, t, oh, wt_ }, split[6] = { n, g, rp, t, ohl, wt_ };
    int64_t ext[6] = { w->batch, G, ct, OH, owt }, split_ext[6] = { w->batch, G, RP, ct, OHP, owt };
    LoopStmt *nest = rows_split ? low_nest(L, 6, split, split_ext, tile) : low_nest(L, 5, vars, ext, tile);
    if (low_kernel(L, nest))
        return -1;
    if (!rows_split && G == 1 && w->batch == 1)
        tile_blocks(L, nest, low_out(L, 0), t, mr, cout);
    return 0;
}
