/* passes/lower_tile.h — private to the register-blocked float32 templates
 * (passes/lower_tile.c, passes/lower_winograd.c): the block helpers they
 * share.  Prefix: tile_.
 *
 * A block's accumulators are a LOCAL [MR][NR] buffer read and written only
 * as whole NR-lane vectors at constant offsets (VECTORIZED loops), so the
 * vector code generator keeps them in registers. */
#ifndef DLCC_LOWER_TILE_H
#define DLCC_LOWER_TILE_H

#include "passes/lower_impl.h"

#define TILE_MAX_MR 16

/* Index arithmetic shorthands of the templates: a + b, a * k. */
static inline LoopExpr *add(Low *L, LoopExpr *a, LoopExpr *b) { return low_bin(L, LOOP_ADD, a, b); }
static inline LoopExpr *mul(Low *L, LoopExpr *a, int64_t k) { return low_bin(L, LOOP_MUL, a, low_i(L, k)); }

/* What a 2-D window kernel reads around its input: rows above and below
 * each channel and columns left and right of each row (of `fill`), and
 * `reach`: one past the furthest column a load touches, counted from a row's
 * first element (lanes past the output row's end included; their values are
 * never stored). */
typedef struct TileHalo {
    int64_t rows, cols, reach;
    double fill;
    int mask;            /* can do without the columns: lanes off the row masked (a strided kernel's loads
                            reach the neighbouring row, so only a halo'd buffer, never a model input) */
} TileHalo;

/* for c < NR VECTORIZED: body, appended to blk. */
int tile_vec_loop(Low *L, LoopStmt *blk, int c, LoopStmt *body, int nr);
/* A block's accumulators (LOCAL [MR][NR]), its body and its k-step body. */
int tile_block_start(Low *L, int mr, int nr, int *acc, LoopStmt **tile, LoopStmt **kb);
/* acc[r][c] */
LoopExpr *tile_acc_at(Low *L, int acc, int r, int nr, int c);
/* acc[r][:] = v (v uniform, or built over lane c). */
int tile_acc_set(Low *L, LoopStmt *blk, int acc, int r, int nr, int c, LoopExpr *v);
/* acc[r][:] += a * b (a uniform, b over lane c); op LOOP_MAX: acc = max(acc, b). */
int tile_acc_update(Low *L, LoopStmt *blk, int acc, int r, int nr, int c, LoopBinOp op, LoopExpr *a, LoopExpr *b);
/* Rows of a block of nr lanes over `rows` rows, as the registers allow. */
int tile_pick_mr(Low *L, int nr, int64_t rows);
/* Items left idle in the last of the blocks of k covering n (n >= 0). */
static inline int64_t tile_idle(int64_t n, int64_t k) { return (k - n % k) % k; }
/* The block size in [lo, hi] leaving the fewest of n idle, the larger on a tie. */
int tile_fewest_idle(int64_t n, int hi, int lo);
/* Row r of block acc stored at output (n, chan, oh, ow0 + lane) of the 4-D
 * output through the fused members, masked past the row's end OW unless
 * `inside` (every block's start clipped to OW - nr). */
int tile_row_out(Low *L, LoopStmt *tile, int acc, int r, int nr, int n, int chan, int oh, int ow0, int64_t OW,
                 int inside);
/* Can the kernel read buffer b in place for window w, needing h?  Then *off
 * makes padded coordinates (0, 0) index it; *masked: lanes off the row must
 * be masked (1) or every load guarded (2, a model input).  An intermediate
 * that lacks only slack past its end gets it here (before memory planning). */
int tile_in_place(Low *L, int b, const IrWindow *w, const TileHalo *h, int64_t *off, int *masked);
/* x copied into a buffer padded by the window's pads (with `fill`), extra_h
 * more rows, extra more columns, slack elements past the end. */
int tile_pad_input(Low *L, int x, const IrWindow *w, int64_t extra_h, int64_t extra, int slack, double fill);

/* Winograd F(2x2, 3x3) (lower_winograd.c): does it pay for window w under
 * schedule s; what it reads around its input; the kernel (wt: the weights
 * [C_out][C_in][3][3]).  tile_wino_emit: 0, or -1 with a diagnostic. */
int tile_wino_pays(const PassSchedule *s, const IrWindow *w);
void tile_wino_halo(const PassSchedule *s, const IrWindow *w, TileHalo *h);
int tile_wino_emit(Low *L, const IrWindow *w, int x, const float *wt, const TileHalo *h);

#endif
