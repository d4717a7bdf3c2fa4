/* lower/tile/tile_impl.h — private to lower/tile/: the block helpers
 * (block.c) that the register-blocked templates share — gemm.c (the GEMM
 * form, MatMul / Gemm, the choice of a Conv's form and its input's halo),
 * pointwise.c, direct.c, winograd.c (the other Conv forms).  Prefix: tile_.
 *
 * A block's accumulators are a LOCAL [MR][NR] buffer read and written only
 * as whole NR-lane vectors at constant offsets (VECTORIZED loops), so the
 * vector code generator keeps them in registers. */
#ifndef DLCC_TILE_IMPL_H
#define DLCC_TILE_IMPL_H

#include "lower/lower_impl.h"
#include "lower/tile/tile.h"

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
/* Does a block of mr x nr use all vector registers (block.c)? */
int tile_regs_tight(const LowSchedule *s, int mr, int nr);
/* Rows of a block of nr lanes over `rows` rows, as the registers allow. */
int tile_pick_mr(Low *L, int nr, int64_t rows);
/* The words of two bfloat16 (rounded to nearest even) of C rows of K float32
 * weights (row c at w + c*K), K2 = ceil(K/2) a row, the last word's high half
 * 0 for an odd K (qconv.c).  NULL out of memory. */
int32_t *tile_bf16_words(Low *L, const float *w, int64_t C, int64_t K, int64_t K2);
/* Items left idle in the last of the blocks of k covering n (n >= 0). */
static inline int64_t tile_idle(int64_t n, int64_t k) { return (k - n % k) % k; }
/* The block size in [lo, hi] leaving the fewest of n idle, the larger on a tie. */
int tile_fewest_idle(int64_t n, int hi, int lo);
/* Row r of block acc stored at output (n, chan, oh, ow0 + lane) of the 4-D
 * output through the fused members, masked past the row's end OW unless
 * `inside` (every block's start clipped to OW - nr). */
int tile_row_out(Low *L, LoopStmt *tile, int acc, int r, int nr, int n, int chan, int oh, int ow0, int64_t OW,
                 int inside);
/* The same for the value v over lane c (a variable of the caller's). */
int tile_row_store(Low *L, LoopStmt *tile, int c, LoopExpr *v, int nr, int n, int chan, int oh, int ow0, int64_t OW,
                   int inside);
/* The pieces [*qlo, *qhi) of VW lanes (the last moved back to end at OW)
 * of an output row of OW whose every tap lies inside the input's row. */
void tile_inner_pieces(const IrWindow *w, int64_t OW, int64_t VW, int64_t *qlo, int64_t *qhi);
/* Can the kernel read buffer b in place for window w, needing h?  Then *off
 * makes padded coordinates (0, 0) index it; *masked: lanes off the row must
 * be masked (1) or every load guarded (2, a model input).  An intermediate
 * that lacks only slack past its end gets it here (before memory planning). */
int tile_in_place(Low *L, int b, const IrWindow *w, const TileHalo *h, int64_t *off, int *masked);
/* x copied into a buffer padded by the window's pads (with `fill`), extra_h
 * more rows, extra more columns, slack elements past the end. */
int tile_pad_input(Low *L, int x, const IrWindow *w, int64_t extra_h, int64_t extra, int slack, double fill);

/* Rows of a block over output channels: co_r = g*C + min(t*MR + r, C-1)
 * (LETs, into co[]), each row's accumulators starting at bias[co_r] (bias
 * buffer bb; -1: zero). */
int tile_channel_rows(Low *L, LoopStmt *tile, int acc, int mr, int nr, int g, int t, int64_t cout, int bb, int *co);
/* The store of v as an output element through the fused members: at flat
 * when every member can read there, else at its multi-index — (n, chan,
 * pos unflattened, or sp when given) for a Conv-shaped output, pos
 * unflattened then col for a MatMul-shaped one. */
LoopStmt *tile_out_store(Low *L, LoopExpr *flat, LoopExpr *n, LoopExpr *chan, LoopExpr *pos, LoopExpr *col,
                         LoopExpr *const *sp, LoopExpr *v);
/* The halo columns after a row's last block (with L->halo_cols_store), and
 * the halo rows around channels co[0..mr) stored by the block run first for
 * them (when `first` holds; lead: low_halo_take_rows). */
int tile_halo_cols(Low *L, LoopStmt *tile, LoopExpr *row, LoopExpr *ow0, int nr, int64_t OW);
int tile_halo_rows(Low *L, LoopStmt *tile, LoopExpr *first, int n, const int *co, int mr, int64_t lead);
/* Do the model's weights fit a core's L2 (2 MiB on the machines measured),
 * so that a layer finds its own there from the call before? */
int tile_weights_cached(const Low *L);
/* Block blk of nblk, at step k of K, fetches its share of the len weights
 * from element next of buf into L2 ahead of their use (when the blocks
 * cover at most a few rows, and the weights are not in cache already). */
int tile_prefetch(Low *L, LoopStmt *kb, int buf, LoopExpr *next, int64_t len, LoopExpr *blk, int64_t nblk,
                  LoopExpr *k, int64_t K, int64_t rows);
/* The kernel nest just built makes buffer y in blocks of mr of its C
 * channels, block mt outermost: a depthwise layer or max pool may join it. */
void tile_blocks(Low *L, LoopStmt *nest, int y, int mt, int mr, int64_t C);
/* The length of each of the threads' parts of E rows (E: one part). */
int64_t tile_part_len(const Low *L, int64_t E);
/* x where mask table mb holds 1 at `at` (and cond, when given), else fill. */
LoopExpr *tile_mask_select(Low *L, int mb, LoopExpr *at, LoopExpr *x, LoopExpr *cond, double fill);

/* The Conv forms (0, or -1 with a diagnostic): pointwise (x: the input, y:
 * the output; strided: through a gathered copy), pointwise.c;
 * depthwise or max pool and direct, direct.c, reading what h says
 * around the input (wt: the weights); tile_direct_nr: the direct form's
 * lanes for rows of OW at stride sw. */
int tile_pw_emit(Low *L, const IrWindow *w, int x, int y);
int tile_pw_strided_emit(Low *L, const IrWindow *w, int x, int y);
int tile_dw_emit(Low *L, const IrWindow *w, int x, int maxpool, const TileHalo *h);
int tile_direct_emit(Low *L, const IrWindow *w, int x, const float *wt, const TileHalo *h);
int tile_direct_nr(const LowSchedule *s, int64_t OW, int64_t sw);

/* Winograd F(2x2, 3x3) (winograd.c): does it pay for window w under
 * schedule s; what it reads around its input; the kernel (wt: the weights
 * [C_out][C_in][3][3]).  tile_wino_emit: 0, or -1 with a diagnostic. */
int tile_wino_pays(const LowSchedule *s, const IrWindow *w);
void tile_wino_halo(const LowSchedule *s, const IrWindow *w, TileHalo *h);
int tile_wino_emit(Low *L, const IrWindow *w, int x, const float *wt, const TileHalo *h);

#endif
