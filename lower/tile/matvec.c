/* lower/tile/matvec.c — the register-blocked matrix-vector product of a
 * recurrent step (tile.h: tile_mv_width, tile_mv_pack, tile_mv):
 *
 *   for p over the panels of [lo, lo + n):
 *     acc[:] = init[i0 + p*W : +W]                      (W lanes, a few registers)
 *     for j < K:  acc[:] += x[x0 + j] * Bp[d][p][j][:]  (one broadcast, W/lanes loads)
 *     y[y0 + p*W : +W] = acc[:]
 *
 * B (constant) is packed into panels of W columns, [D][N/W][K][W], so a
 * panel's K rows are one stream of K*W floats (the hardware prefetcher
 * follows it; B of an LSTM of 128 units is 256 KB a direction, read from L2
 * every step).  Before, each step added x[j] * B[j][:] to the whole
 * G[:] row in memory, j by j: a load, a multiply-add and a store of G per
 * vector of B (lstm_bi2's layers at ~27 GFLOPS on Zen 3).  The sums keep
 * the order of j, as the plain form's. */
#include "lower/tile/tile_impl.h"

#include <string.h>

/* The loop over j unrolled 4 times, not LLVM's 8: each of the panel's loads
 * is one instruction per unrolled copy striding through B, and with 8
 * copies (32 load instructions at a 2 KB stride) a step of a 128-unit LSTM
 * took 2.2-2.3 us on Zen 5 against 1.5 us with 2 or 4 copies (the same
 * loop in C, unrolled 1, 2, 4, 8 and 16 times: 1.60, 1.50, 1.50, 2.28,
 * 2.20 us) -- presumably the L1 stride prefetcher, which follows loads by
 * instruction, running out of entries. */
#define TILE_MV_UNROLL 4

/* A panel of up to four registers when `unit` is a multiple of it: enough
 * independent accumulator chains for the multiply-add latency while B
 * streams from L2. */
int tile_mv_width(const LowSchedule *s, int64_t unit)
{
    if (!s || s->tile_nr < 4 || s->vector_bits < 128 || unit <= 0)
        return 0;
    int lanes = s->vector_bits / 32;
    for (int w = 4 * lanes; w >= lanes; w /= 2)
        if (unit % w == 0)
            return w;
    return 0;
}

int tile_mv_pack(Low *L, const char *name, const float *b, int64_t D, int64_t K, int64_t N, int width)
{
    float *bp;
    int buf = low_const_table(L, name, D * K * N, &bp);
    if (buf < 0)
        return -1;
    int64_t np = N / width;
    for (int64_t d = 0; d < D; d++)
        for (int64_t p = 0; p < np; p++)
            for (int64_t j = 0; j < K; j++)
                memcpy(bp + ((d * np + p) * K + j) * width, b + (d * K + j) * N + p * width,
                       (size_t)width * sizeof *bp);
    return buf;
}

int tile_mv(Low *L, LoopStmt *blk, int bp, int64_t bd, int64_t K, int64_t N, int width, int64_t lo, int64_t n,
            int x, LoopExpr *x0, int init, LoopExpr *i0, int y, LoopExpr *y0)
{
    int p, j, c, acc;
    LoopStmt *tile, *kb, *jl;
    if (low_vars(L, 1, "p", &p) || low_vars(L, 1, "j", &j) || tile_block_start(L, 1, width, &acc, &tile, &kb))
        return low_oom(L);
    /* column of lane c: lo + p*W + c */
    LoopExpr *c0 = add(L, low_i(L, lo), mul(L, low_v(L, p), width));
    int cb = low_let(L, tile, "cb", c0, 0);
    if (cb < 0 || low_vars(L, 1, "c", &c) ||
        tile_acc_set(L, tile, acc, 0, width, c,
                     low_load(L, init, add(L, add(L, i0, low_v(L, cb)), low_v(L, c)), IR_DT_F32)))
        return low_oom(L);
    /* Bp[bd][lo/W + p][j][c] */
    LoopExpr *row = add(L, mul(L, add(L, low_i(L, bd * (N / width) + lo / width), low_v(L, p)), K), low_v(L, j));
    int a = low_let(L, kb, "a", low_load(L, x, add(L, x0, low_v(L, j)), IR_DT_F32), 0);
    if (a < 0 || low_vars(L, 1, "c", &c) ||
        tile_acc_update(L, kb, acc, 0, width, c, LOOP_ADD, low_v(L, a),
                        low_load(L, bp, add(L, mul(L, row, width), low_v(L, c)), IR_DT_F32)) ||
        !(jl = loop_for(L->p, j, low_i(L, K), LOOP_UNROLLED, kb)))
        return low_oom(L);
    jl->u.loop.factor = TILE_MV_UNROLL;
    if (low_add(L, tile, jl) || low_vars(L, 1, "c", &c) ||
        tile_vec_loop(L, tile, c, low_store(L, y, add(L, add(L, y0, low_v(L, cb)), low_v(L, c)), tile_acc_at(L, acc, 0, width, c)),
                      width))
        return low_oom(L);
    return low_add(L, blk, loop_for(L->p, p, low_i(L, n / width), LOOP_SERIAL, tile));
}
