/* lower/tile/pointwise.c — the float32 1x1 convolution templates
 * (tile_impl.h; prefix tile_): a GEMM per image, W[C_out][C_in]
 * times X[C_in][P], the lanes along the pixels (a plane, or rows when a
 * halo breaks it), MR output channels a block; its variants for layers
 * that reduce the channels at two or more threads (the reduction split),
 * planes whose last block would be mostly idle (a one-register tail), and
 * strided 1x1 windows (a gathered copy first). */
#include "lower/tile/tile_impl.h"

#include <string.h>

/* Step k of a pointwise block's reduction: acc[r*npos + j][:] += W[co_r, k]
 * * X[xb_j + k*xs1 + lane] — MR weights broadcast, each piece's vector of X
 * shared by the MR rows.  With bf16: W and X words of two bfloat16 (k a
 * pair of channels, cin the words a row of W), acc = dot2bf(acc, X, W). */
static int pw_step(Low *L, LoopStmt *kb, int acc, int mr, int npos, int vw, const int *co, int wb, int64_t cin, int x,
                   const int *xb, int64_t xs1, int k, int bf16)
{
    IrDType t = bf16 ? IR_DT_I32 : IR_DT_F32;
    for (int r = 0; r < mr; r++) {
        int wv = low_let(L, kb, "w", low_load(L, wb, add(L, mul(L, low_v(L, co[r]), cin), low_v(L, k)), t), 0);
        if (wv < 0)
            return -1;
        for (int j = 0; j < npos; j++) {
            int c;
            if (low_vars(L, 1, "c", &c))
                return -1;
            LoopExpr *xv = low_load(L, x, add(L, add(L, low_v(L, xb[j]), mul(L, low_v(L, k), xs1)), low_v(L, c)), t);
            if (!bf16) {
                if (tile_acc_update(L, kb, acc, r * npos + j, vw, c, LOOP_ADD, low_v(L, wv), xv))
                    return -1;
                continue;
            }
            LoopExpr *args[3] = { tile_acc_at(L, acc, r * npos + j, vw, c), xv, low_v(L, wv) };
            if (tile_acc_set(L, kb, acc, r * npos + j, vw, c, loop_call(L->p, LOOP_I_dot2bf, 3, args)))
                return -1;
        }
    }
    return 0;
}

/* X's element (n, ch, p0 + c) at strides xs. */
static LoopExpr *pw_at(Low *L, const int64_t *xs, int n, LoopExpr *ch, int p0, int c)
{
    return add(L, add(L, mul(L, low_v(L, n), xs[0]), mul(L, ch, xs[1])), add(L, low_v(L, p0), low_v(L, c)));
}

/* --precision bf16 (LowSchedule.bf16) for a pointwise layer that the
 * bfloat16 blocks of qconv.c leave to this template (a reduction under 64
 * channels, MobileNetV2's 16- to 32-channel expansions, which fuse with the
 * depthwise layer after them, or an output with a halo): X's channel pairs
 * as words of two bfloat16 (bf16pack), in X's own layout over K2 =
 * ceil(C/2) channels,
 *   Xw[n][k2][pos] = bf16pack(X[n][2 k2][pos], X[n][2 k2 + 1][pos] or 0),
 * written for X's interior only, by rows of W in pieces of up to 16 lanes
 * (the last overlapping); the weights' words at compile time
 * (tile_bf16_words).  The buffer of words (its strides: X's, K2 channels an
 * image), or -1. */
static int pw_bf16_pack(Low *L, const IrWindow *w, int x, int64_t cin, int64_t K2, const int64_t *xs)
{
    int S = w->rank;
    int64_t H = S == 2 ? w->in[0] : 1, W = w->in[S - 1], VW = W < 16 ? W : 16, nq = (W + VW - 1) / VW;
    IrShape sh = { .rank = 1, .dims = { w->batch * K2 * xs[1] } };
    int xw = loop_add_buf(L->p, "packed_bf16", IR_DT_I32, &sh, LOOP_ST_WORKSPACE);
    int n, k2, ih, q, c;
    LoopStmt *blk = xw < 0 ? NULL : loop_block(L->p);
    if (!blk || low_vars(L, 1, "n", &n) || low_vars(L, 1, "k2", &k2) || low_vars(L, 1, "ih", &ih) ||
        low_vars(L, 1, "q", &q) || low_vars(L, 1, "c", &c))
        return low_oom(L);
    LoopExpr *row = add(L, mul(L, low_v(L, ih), S == 2 ? xs[2] : 0),
                        low_bin(L, LOOP_MIN, mul(L, low_v(L, q), VW), low_i(L, W - VW)));
    int p0 = low_let(L, blk, "p0", row, 0);
    if (p0 < 0)
        return low_oom(L);
    LoopExpr *hc = add(L, mul(L, low_v(L, k2), 2), low_i(L, 1)), *hi;
    if (cin % 2 == 0)
        hi = low_load(L, x, pw_at(L, xs, n, hc, p0, c), IR_DT_F32);
    else                 /* the last word's high half: 0 (its weights' too) */
        hi = loop_select(L->p, low_bin(L, LOOP_LT, loop_expr_copy(L->p, hc), low_i(L, cin)),
                         low_load(L, x, pw_at(L, xs, n, low_bin(L, LOOP_MIN, hc, low_i(L, cin - 1)), p0, c), IR_DT_F32),
                         low_const(L, IR_DT_F32, 0));
    LoopExpr *half[2] = { low_load(L, x, pw_at(L, xs, n, mul(L, low_v(L, k2), 2), p0, c), IR_DT_F32), hi };
    LoopExpr *dst = add(L, add(L, mul(L, low_v(L, n), K2 * xs[1]), mul(L, low_v(L, k2), xs[1])),
                        add(L, low_v(L, p0), low_v(L, c)));
    LoopStmt *st = low_store(L, xw, dst, loop_call(L->p, LOOP_I_bf16pack, 2, half));
    if (!st || tile_vec_loop(L, blk, c, st, (int)VW))
        return low_oom(L);
    int vars[4] = { n, k2, ih, q };
    int64_t ext[4] = { w->batch, K2, H, nq };
    if (low_kernel_prepares(L, low_nest(L, 4, vars, ext, blk), w->batch * K2 * H * W))
        return -1;
    return xw;
}

/* A pointwise layer that reduces the channels (C_in >= KSPLIT_MIN C_out,
 * over the plane), with T threads: its reduction split between the tasks instead of
 * its pixels.  Part t sums input channels [t*C/T, (t+1)*C/T) for every
 * output, into its own slice of a partial buffer:
 *   Z[t][co][p] = sum_{ci in part t} W[co, ci] X[ci, p]   (one kernel, parallel over t)
 *   Y[co][p] = bias[co] + sum_t Z[t][co][p]               (a second, through the fused members)
 * Task t takes part t (codegen/parallel.c), and the layer before it (a
 * depthwise conv, split by channels) left channels [t*C/T, (t+1)*C/T) in
 * task t's cache: each task reads only its own half of X, and the other
 * core's half of the small Z instead of half of the large X (MobileNetV2's
 * 576 -> 96 at 14x14: 451 KB of X, 75 KB of Z; at 2x, 32 -> 16, Z is as
 * large as the half of X it saves reading). */
enum { KSPLIT_MIN = 4 };
static int pw_ksplit(Low *L, const IrWindow *w, int x, int y, int nr, int mr)
{
    int64_t T = L->s->threads, cin = w->channels_in, cout = w->channels_out, P = 1, Cs = cin / T;
    for (int i = 0; i < w->rank; i++)
        P *= w->out[i];
    int64_t mt_n = (cout + mr - 1) / mr, n_pt = (P + nr - 1) / nr;
    int wb = low_in(L, 1), bb = low_has(L, 2) ? low_in(L, 2) : -1;
    int64_t xs[IR_MAX_RANK], ys[IR_MAX_RANK];
    low_strides(L, x, xs);
    low_strides(L, y, ys);
    IrShape zs = { .rank = 1, .dims = { T * cout * P } };
    int z = loop_add_buf(L->p, "partial", IR_DT_F32, &zs, LOOP_ST_WORKSPACE);
    int part, g, mt, pt, ci, acc;
    LoopStmt *tile, *kb;
    if (z < 0 || wb < 0 || low_vars(L, 1, "part", &part) || low_vars(L, 1, "g", &g) || low_vars(L, 1, "mt", &mt) ||
        low_vars(L, 1, "pt", &pt) || low_vars(L, 1, "ci", &ci) || tile_block_start(L, mr, nr, &acc, &tile, &kb))
        return low_oom(L);
    int p0 = low_let(L, tile, "p0", low_bin(L, LOOP_MIN, mul(L, low_v(L, pt), nr), low_i(L, P - nr)), 0);
    int k0 = p0 < 0 ? -1 : low_let(L, tile, "k0", mul(L, low_v(L, part), Cs), 0);
    int co[TILE_MAX_MR];
    if (k0 < 0 || tile_channel_rows(L, tile, acc, mr, nr, g, mt, cout, -1, co))
        return low_oom(L);
    int kv = low_let(L, kb, "k", add(L, low_v(L, k0), low_v(L, ci)), 0);
    if (kv < 0 || pw_step(L, kb, acc, mr, 1, nr, co, wb, cin, x, &p0, xs[1], kv, 0))
        return low_oom(L);
    if (low_add(L, tile, low_nest(L, 1, &ci, &Cs, kb)))
        return low_oom(L);
    for (int r = 0; r < mr; r++) {
        int c;
        if (low_vars(L, 1, "c", &c))
            return low_oom(L);
        LoopExpr *zi = add(L, add(L, mul(L, add(L, mul(L, low_v(L, part), cout), low_v(L, co[r])), P), low_v(L, p0)),
                           low_v(L, c));
        if (tile_vec_loop(L, tile, c, low_store(L, z, zi, tile_acc_at(L, acc, r, nr, c)), nr))
            return low_oom(L);
    }
    int vars[4] = { part, g, mt, pt };
    int64_t ext[4] = { T, 1, mt_n, n_pt };
    if (low_kernel(L, low_nest(L, 4, vars, ext, tile)))
        return -1;
    /* the sum, vw lanes at a time (the last piece at P - vw) */
    int vw = nr / 2 >= 4 ? nr / 2 : nr, o, q, c;
    LoopStmt *sb = loop_block(L->p);
    if (!sb || low_vars(L, 1, "co", &o) || low_vars(L, 1, "q", &q) || low_vars(L, 1, "c", &c))
        return low_oom(L);
    int q0 = low_let(L, sb, "p0", low_bin(L, LOOP_MIN, mul(L, low_v(L, q), vw), low_i(L, P - vw)), 0);
    if (q0 < 0)
        return low_oom(L);
    LoopExpr *pos = add(L, low_v(L, q0), low_v(L, c));
    LoopExpr *v = bb >= 0 ? low_load(L, bb, low_v(L, o), IR_DT_F32) : low_const(L, IR_DT_F32, 0);
    for (int64_t t = 0; t < T; t++)
        v = add(L, v, low_load(L, z, add(L, low_i(L, t * cout * P), add(L, mul(L, low_v(L, o), P), loop_expr_copy(L->p, pos))),
                               IR_DT_F32));
    LoopExpr *yi = add(L, mul(L, low_v(L, o), ys[1]), loop_expr_copy(L->p, pos));
    if (tile_vec_loop(L, sb, c, tile_out_store(L, yi, low_i(L, 0), low_v(L, o), loop_expr_copy(L->p, pos), NULL, NULL, v), vw))
        return low_oom(L);
    int sv[2] = { o, q };
    int64_t se[2] = { cout, (P + vw - 1) / vw };
    return low_kernel(L, low_nest(L, 2, sv, se, sb));
}

/* The last NR pixels of a plane of P (flat, unpacked X) as a block of its
 * own, LET p0 = P - NR, for output channels co[r] = min(mt*MR + r, C_out - 1)
 * (tile_pw_emit's tail: a plane whose last two-register block would leave more
 * lanes idle than a one-register block does). */
static LoopStmt *pw_tail(Low *L, int x, int64_t P, int nr, int mr, int n, int g, int mt, int64_t cin, int64_t cout,
                         int wb, int bb)
{
    int64_t xs[IR_MAX_RANK], ys[IR_MAX_RANK];
    low_strides(L, x, xs);
    low_strides(L, low_out(L, 0), ys);
    int acc, ci, co[TILE_MAX_MR];
    LoopStmt *tile, *kb;
    if (low_vars(L, 1, "ci", &ci) || tile_block_start(L, mr, nr, &acc, &tile, &kb))
        return NULL;
    int p0 = low_let(L, tile, "p0", low_i(L, P - nr), 0);
    LoopExpr *xbe = add(L, add(L, mul(L, low_v(L, n), xs[0]), mul(L, low_v(L, g), cin * xs[1])), low_i(L, P - nr));
    int xb = p0 < 0 ? -1 : low_let(L, tile, "xb", xbe, 0);
    int64_t ci_n = cin;
    if (xb < 0 || tile_channel_rows(L, tile, acc, mr, nr, g, mt, cout, bb, co) ||
        pw_step(L, kb, acc, mr, 1, nr, co, wb, cin, x, &xb, xs[1], ci, 0) || low_add(L, tile, low_nest(L, 1, &ci, &ci_n, kb)))
        return NULL;
    for (int r = 0; r < mr; r++) {
        int c;
        if (low_vars(L, 1, "c", &c))
            return NULL;
        LoopExpr *col = add(L, low_v(L, p0), low_v(L, c));
        LoopExpr *yi = add(L, add(L, mul(L, low_v(L, n), ys[0]), mul(L, low_v(L, co[r]), ys[1])), col);
        LoopStmt *st = tile_out_store(L, yi, low_v(L, n), low_v(L, co[r]), loop_expr_copy(L->p, col), NULL, NULL,
                                      tile_acc_at(L, acc, r, nr, c));
        if (tile_vec_loop(L, tile, c, st, nr))
            return NULL;
    }
    return tile;
}

/* Pointwise (1x1, stride 1, no padding): per group Y[co, p] = sum_ci
 * W[co, ci] X[ci, p] with the lanes along the pixels, which are contiguous
 * in both X and Y, and a block of MR output channels broadcasting their
 * weights:
 *   acc[r][:] = bias[co_r];  acc[r][:] += W[co_r, ci] * X[ci, p0 : p0+NR];  Y[co_r, p0 : p0+NR] = acc[r]
 * The last block starts at P - NR (NR <= P), overlapping the one before:
 * its pixels are computed again by the same operations in the same order and
 * stored with the same values, so no lane needs a mask or reads past the row
 * (over a plane where that block would add at most NR/2 new pixels, a
 * one-register block of the last NR/2 takes its place: pw_tail).
 * A halo'd Y (rows apart by more than OW) takes the blocks along each row
 * instead, each block two half-width pieces placed on their own: piece q of
 * the row starts at min(q*NR/2, OW - NR/2), NR/2 <= OW, so a row of 27 is
 * one block of 16 + 16 lanes (pieces at 0 and 11) with two registers per
 * output channel, not two blocks of one register each. */
int tile_pw_emit(Low *L, const IrWindow *w, int x, int y)
{
    int64_t G = w->group, cin = w->channels_in / G, cout = w->channels_out / G, P = 1;
    for (int i = 0; i < w->rank; i++)
        P *= w->out[i];
    /* along rows when a halo's columns break the plane (a halo of rows only
     * moves the channels apart, the pixels of a channel stay contiguous) */
    int rows = w->rank == 2 && (low_buf(L, y)->strides[2] != w->out[1] || low_buf(L, x)->strides[2] != w->in[1]);
    int64_t OH = rows ? w->out[0] : 1, OW = rows ? w->out[1] : P;
    int nr = L->s->tile_nr, npos = rows ? 2 : 1;   /* pieces per block */
    while (nr > 4 && OW * npos < nr)
        nr /= 2;
    if (nr >= 32 && OW >= nr && tile_idle(OW, nr) * 4 > OW && tile_idle(OW, nr / 2) < tile_idle(OW, nr))
        nr /= 2;                        /* one register when two leave over a quarter idle (not 14x14: 28 of 224:
                                           a one-register block loads (MR+1) operands per MR FMAs, more than
                                           the FMAs per cycle with loads at 2 per cycle; two load (MR+2)/2MR) */
    if (rows && OW * 2 == nr) {         /* a row of exactly half a block: one piece, not the same one twice */
        nr /= 2;
        npos = 1;
    }
    if (nr < 2 * npos || (rows && OW % nr == 0))
        npos = 1;                       /* rows a whole number of blocks: one piece of NR lanes, not two of NR/2
                                           (MobileNetV1's 48x48: 16-lane vectors instead of 8-lane ones) */
    int vw = nr / npos, mr = tile_pick_mr(L, nr, cout);
    int64_t mt_n = (cout + mr - 1) / mr, n_pt = (OW + nr - 1) / nr;
    /* A plane whose last two-register block would be mostly idle ends in a
     * one-register block instead (pw_tail): 14x14's 196 pixels in 6 blocks of
     * 32 and one of 16, 208 lanes instead of 224 (MobileNetV2's 14x14
     * projections -8%, expansions -3 to -6%). */
    int px_outer = mt_n > 1 && ((cout <= 32 && cin * P * 4 > (512 << 10)) || (L->s->threads > 1 && cout < cin));
    const IrArray *wk = low_known(L, 1);
    int bf = L->s->bf16 >= 256 && G == 1 && cin >= 2 && wk && wk->dtype == IR_DT_F32 &&
             low_buf(L, x)->dtype == IR_DT_F32;              /* bfloat16 words (pw_bf16_pack) */
    int64_t kn = bf ? (cin + 1) / 2 : cin;                 /* the reduction's steps: channels, or their pairs */
    int tail = !bf && !rows && !px_outer && npos == 1 && nr >= 32 && nr == L->s->tile_nr && OW > nr && OW % nr &&
               OW % nr <= nr / 2;
    if (tail)
        n_pt = OW / nr;
    int wb = low_in(L, 1), bb = low_has(L, 2) ? low_in(L, 2) : -1;
    int64_t xs[IR_MAX_RANK], ys[IR_MAX_RANK];
    low_strides(L, x, xs);
    low_strides(L, y, ys);
    int n, g, mt, oh, pt, ci;
    if (wb < 0 || low_vars(L, 1, "n", &n) || low_vars(L, 1, "g", &g) || low_vars(L, 1, "mt", &mt) ||
        low_vars(L, 1, "oh", &oh) || low_vars(L, 1, "pt", &pt) || low_vars(L, 1, "ci", &ci))
        return low_oom(L);
    /* Many channel blocks (each sweeping all of X): X is first packed as
     * Xk[pt][ci][0 : NR] = X[ci][p0(pt) : p0(pt) + NR], so each block reads
     * one aligned sequential stream instead of C rows P apart (SqueezeNet's
     * 512 -> 1000 classifier at 13x13: 1324 -> 24 + 1081 us).  Along rows
     * (a halo'd Y) with one piece a block, the same per (row, block):
     * Xk[oh][pt][ci][0 : NR]; a bottleneck's first 1x1 layer, whose output
     * the 3x3 layer after it reads with a halo, ran unpacked at 31-43
     * GFLOPS (256 -> 128 at 32x32 and its 3x3 / 2 consumer, alone: 3.3 ->
     * 2.3 ms; resnet_bottleneck -10% at 1 thread, -4% at 2; Zen 3, AVX2). */
    int packed = !bf && (!rows || npos == 1) && G == 1 && w->batch == 1 && OH * n_pt > 1 && mt_n >= 32;
    if (!rows && !packed && !bf && G == 1 && w->batch == 1 && L->s->threads > 1 && cout * KSPLIT_MIN <= cin &&
        cin % L->s->threads == 0 && P >= nr)
        return pw_ksplit(L, w, x, y, nr, mr);
    int64_t lead = low_halo_take_rows(L);         /* its halo's rows: with the channels' first blocks */
    int xk = x;
    if (packed) {
        IrShape sh = { .rank = 1, .dims = { OH * n_pt * cin * nr } };
        int v[4];
        xk = loop_add_buf(L->p, "packed_x", IR_DT_F32, &sh, LOOP_ST_WORKSPACE);
        if (xk < 0 || low_vars(L, 4, "px", v))
            return low_oom(L);
        LoopExpr *src = add(L, add(L, add(L, mul(L, low_v(L, v[2]), xs[1]), mul(L, low_v(L, v[0]), rows ? xs[2] : 0)),
                                   low_bin(L, LOOP_MIN, mul(L, low_v(L, v[1]), nr), low_i(L, OW - nr))), low_v(L, v[3]));
        LoopExpr *dst = add(L, mul(L, add(L, mul(L, add(L, mul(L, low_v(L, v[0]), n_pt), low_v(L, v[1])), cin),
                                          low_v(L, v[2])), nr), low_v(L, v[3]));
        int64_t e4[4] = { OH, n_pt, cin, nr };
        LoopStmt *st = low_store(L, xk, dst, low_load(L, x, src, IR_DT_F32));
        if (!st || low_kernel_prepares(L, low_nest(L, 4, v, e4, st), OH * n_pt * cin * nr))
            return low_oom(L);
        xs[1] = nr;
    }
    if (bf) {
        IrShape wsh = { .rank = 1, .dims = { cout * kn } };
        int32_t *words = tile_bf16_words(L, wk->data, cout, cin, kn);
        if (!words || (wb = loop_add_buf(L->p, "bweights_pw", IR_DT_I32, &wsh, LOOP_ST_CONST)) < 0)
            return low_oom(L);
        L->p->bufs[wb].data = words;
        if ((xk = pw_bf16_pack(L, w, x, cin, kn, xs)) < 0)
            return -1;
        xs[0] = kn * xs[1];
    }
    int acc;
    LoopStmt *tile, *kb;
    if (tile_block_start(L, mr, nr, &acc, &tile, &kb))
        return low_oom(L);
    int p0[2], xb[2];
    for (int j = 0; j < npos; j++) {
        LoopExpr *q = add(L, mul(L, low_v(L, pt), npos), low_i(L, j));
        p0[j] = low_let(L, tile, "p0", low_bin(L, LOOP_MIN, mul(L, q, vw), low_i(L, OW - vw)), 0);
        LoopExpr *xrow = rows ? mul(L, low_v(L, oh), xs[2]) : low_i(L, 0);
        LoopExpr *xbe = packed ? mul(L, add(L, mul(L, low_v(L, oh), n_pt), low_v(L, pt)), cin * nr)
                               : add(L, add(L, add(L, mul(L, low_v(L, n), xs[0]), mul(L, low_v(L, g), cin * xs[1])), xrow),
                                     low_v(L, p0[j]));
        if (p0[j] < 0 || (xb[j] = low_let(L, tile, "xb", xbe, 0)) < 0)
            return low_oom(L);
    }
    int co[TILE_MAX_MR];
    if (tile_channel_rows(L, tile, acc, mr, nr, g, mt, cout, bb, co))
        return low_oom(L);
    LoopExpr *first = low_bin(L, LOOP_EQ, add(L, low_v(L, oh), low_v(L, pt)), low_i(L, 0));
    if (lead && tile_halo_rows(L, tile, first, n, co, mr, lead))
        return low_oom(L);
    if (pw_step(L, kb, acc, mr, npos, vw, co, wb, kn, xk, xb, xs[1], ci, bf))
        return low_oom(L);
    /* Blocks of output channels outermost: each block sweeps the whole
     * input X, MR weight rows staying in L1.  When X is large and there are
     * few output rows, the pixel blocks go outermost instead, so X is read
     * once, its C x NR panel staying in L1 across the few channel blocks
     * (SqueezeNet's 128 -> 16 squeeze at 54x54 read a 1.5 MB X twice; with
     * many output rows the interleaved stores to them cost more).  With
     * threads, a layer that reduces the channels splits its pixels between
     * the threads instead of its output channels: each thread then reads
     * only its pixels' part of X, not all of X, half of which the other
     * core's cache holds after a producer split by channels (along the
     * plane, a layer reducing at least KSPLIT_MIN-fold splits its
     * reduction instead: pw_ksplit).  With channel blocks outermost, the next
     * block's MR weight rows are fetched ahead (tile_prefetch). */
    LoopExpr *next_w = mul(L, add(L, mul(L, low_v(L, g), cout), mul(L, add(L, low_v(L, mt), low_i(L, 1)), mr)), kn);
    if (!px_outer && tile_prefetch(L, kb, wb, next_w, mr * kn, add(L, mul(L, low_v(L, oh), n_pt), low_v(L, pt)),
                                   OH * n_pt, low_v(L, ci), kn, P))
        return low_oom(L);
    /* A block reads its NR pixels of all C_in channel rows, C_in lines
     * apart a few lines at a time: too many streams for the hardware to
     * run ahead of.  Where they come from further than this core's L2 —
     * pixel blocks outermost (SqueezeNet's 128 -> 16 squeeze at 55x55: 51
     * -> 27 us at 2 threads, 112 -> 78 for 256 -> 16), or at 2 threads an
     * expansion split by channel blocks, half of whose input the other
     * core wrote (MobileNetV2's 16 -> 96 at 112x112: 206 -> 187 us) — each
     * step fetches the next block's lines of its channel row (NR past this
     * block's start; past a row's last block, the next row's first).  Not
     * for an input in L2 at one thread (MobileNetV2's projections: 5-10%
     * slower) nor at 14x14 and less (P <= 256). */
    int x_ahead = px_outer || (L->s->threads > 1 && cout > cin && P > 256);
    const int line = 16;                          /* floats in a 64-byte cache line */
    for (int j = 0; x_ahead && L->s->prefetch && !packed && j < nr; j += line) {
        LoopExpr *at = add(L, add(L, low_v(L, xb[0]), mul(L, low_v(L, ci), xs[1])), low_i(L, nr + j));
        if (low_add(L, kb, loop_prefetch(L->p, xk, at)))
            return low_oom(L);
    }
    if (low_add(L, tile, low_nest(L, 1, &ci, &kn, kb)))
        return low_oom(L);
    for (int r = 0; r < mr; r++) {
        LoopExpr *row = add(L, add(L, mul(L, low_v(L, n), ys[0]), mul(L, low_v(L, co[r]), ys[1])),
                            rows ? mul(L, low_v(L, oh), ys[2]) : low_i(L, 0));
        for (int j = 0; j < npos; j++) {
            int c;
            if (low_vars(L, 1, "c", &c))
                return low_oom(L);
            LoopExpr *col = add(L, low_v(L, p0[j]), low_v(L, c));
            LoopExpr *yi = add(L, loop_expr_copy(L->p, row), col);
            LoopExpr *v = tile_acc_at(L, acc, r * npos + j, vw, c);
            LoopExpr *pos = add(L, mul(L, low_v(L, oh), OW), loop_expr_copy(L->p, col));
            LoopExpr *sp[2] = { low_v(L, oh), loop_expr_copy(L->p, col) };
            if (tile_vec_loop(L, tile, c, tile_out_store(L, yi, low_v(L, n), low_v(L, co[r]), pos, NULL, rows ? sp : NULL, v),
                              vw))
                return low_oom(L);
        }
        if (rows && tile_halo_cols(L, tile, row, low_v(L, p0[npos - 1]), vw, OW))
            return low_oom(L);
    }
    int vars[5] = { n, g, mt, oh, pt };
    int64_t ext[5] = { w->batch, G, mt_n, OH, n_pt };
    if (px_outer) {
        int pv[5] = { n, g, oh, pt, mt };
        int64_t pe[5] = { w->batch, G, OH, n_pt, mt_n };
        memcpy(vars, pv, sizeof vars);
        memcpy(ext, pe, sizeof ext);
    }
    LoopStmt *body = tile;
    if (tail) {                         /* for n, g, mt { the blocks; the tail } */
        LoopStmt *last = pw_tail(L, x, OW, nr / 2, mr, n, g, mt, cin, cout, wb, bb);
        if (!last || !(body = loop_block(L->p)) || low_add(L, body, low_nest(L, 2, vars + 3, ext + 3, tile)) ||
            low_add(L, body, last))
            return low_oom(L);
    }
    LoopStmt *nest = low_nest(L, tail ? 3 : 5, vars, ext, body);
    if (low_kernel(L, nest))
        return -1;
    if (!px_outer && G == 1 && w->batch == 1)
        tile_blocks(L, nest, y, mt, mr, cout);
    return 0;
}

/* A strided 1x1 convolution (ResNet's downsampling shortcuts): the pixels
 * it reads gathered first into a dense buffer (a data-movement kernel of
 * C x P elements), then the pointwise form over that, instead of the direct
 * form's strided loads on rows of 28 (ResNet-18's 64 -> 128 at 56x56 -> 28x28:
 * 174 us, ORT 89 us). */
int tile_pw_strided_emit(Low *L, const IrWindow *w, int x, int y)
{
    IrWindow w1 = *w;
    for (int i = 0; i < w->rank; i++) {
        w1.stride[i] = 1;
        w1.in[i] = w->out[i];
    }
    IrShape sh = { .rank = 4, .dims = { w->batch, w->channels_in, w->out[0], w->out[1] } };
    int g = loop_add_buf(L->p, "gathered", IR_DT_F32, &sh, LOOP_ST_WORKSPACE), v[4];
    if (g < 0 || low_vars(L, 4, "gx", v))
        return low_oom(L);
    int64_t xs[IR_MAX_RANK];
    low_strides(L, x, xs);
    LoopExpr *src = add(L, add(L, mul(L, low_v(L, v[0]), xs[0]), mul(L, low_v(L, v[1]), xs[1])),
                        add(L, mul(L, low_v(L, v[2]), w->stride[0] * xs[2]), mul(L, low_v(L, v[3]), w->stride[1] * xs[3])));
    LoopExpr *dst = add(L, mul(L, add(L, mul(L, add(L, mul(L, low_v(L, v[0]), w->channels_in), low_v(L, v[1])), w->out[0]),
                                       low_v(L, v[2])), w->out[1]), low_v(L, v[3]));
    LoopExpr *ld = low_load(L, x, src, IR_DT_F32);
    /* a row's reads end inside the input row: the stride-1 elements past
     * the last one are readable (a vector loop: one wide load, a shuffle) */
    if (ld && w->out[1] * w->stride[1] <= w->in[1])
        ld->u.load.spare = (int)w->stride[1] - 1;
    LoopStmt *st = low_store(L, g, dst, ld);
    if (!st || low_kernel_prepares(L, low_nest(L, 4, v, sh.dims, st), sh.dims[0] * sh.dims[1] * sh.dims[2] * sh.dims[3]))
        return low_oom(L);
    return tile_pw_emit(L, &w1, g, y);
}
