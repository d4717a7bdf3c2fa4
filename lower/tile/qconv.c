/* lower/tile/qconv.c — QLinearConv and QLinearMatMul as register blocks of
 * 8-bit dot products (tile_impl.h; prefix tile_), for schedules whose
 * target has one (LowSchedule.dot_i8: x86 VPDPBUSD, AVX512-VNNI or
 * AVX-VNNI; AArch64 USDOT or SDOT); docs/passes.md, "On 8-bit dot products".
 *
 * The loop IR's dot4(acc, a, b) adds to an int32 the four products of the
 * unsigned bytes of word a and the signed bytes of word b.  Per image and
 * group, with K = C_in/G * KH * KW taps and K4 = ceil(K / 4) words:
 *
 *   pack (a kernel of its own): P[k4][p] = the bytes u(x at tap 4*k4 + j,
 *       output pixel p), j = 0..3, where u = x + 128 for int8 x (xor 0x80)
 *       and x for uint8; a tap in the padding reads the zero point, a tap
 *       past K the byte u = 0;
 *   compute: acc[co][p] = bias'[co] + sum_k4 dot4(P[k4][p], Wq[co][k4]),
 *       Wq the weights' bytes (zero past K), MR output channels by NV
 *       vectors of NR pixels a block, the weights broadcast;
 *   store: y = sat(round_even(float32(acc) * m[co]) + y_zp), m = x_s *
 *       w_s[co] / y_s in float32, as the plain template (lower/window.c).
 *
 * Exactness: with c = x_zp + 128 (int8) or x_zp (uint8) the byte of a real
 * zero, sum_k u_k w_k - c sum_k w_k = sum_k (x_k - x_zp) w_k over every tap,
 * padding included (its u is c), so bias' = B[co] - c * sum_k w[co][k] makes
 * acc the plain template's int32 accumulator, bit for bit, as long as no
 * partial sum leaves int32 (checked: K * 255 * 128 plus |bias'| below
 * 2^31).  Weights with a nonzero zero point (w - w_zp not a signed byte)
 * take the plain template.
 *
 * A depthwise window (one input and one output channel a group) packs and
 * multiplies a channel and block of rows at a time instead (dw_kernel).
 *
 * The packed rows hold whole blocks of NV*NR pixels (NV chosen to leave
 * the fewest idle); the last block's lanes past the plane compute on
 * whatever P holds there and are not stored (masked).  A pack row wider
 * than 64 lanes goes in pieces of 64, the last starting 64 before the row's
 * end (overlapping the one before: the same values stored twice). */
#include "lower/tile/tile_impl.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct QConv {
    IrWindow w;
    int64_t G, cin, cout, K, K4, M, Mp, OW1;   /* per group; M output pixels (Mp: P's rows, whole blocks);
                                                  OW1 pixels a pack row */
    int64_t rows;                          /* pack rows per image (OH, or 1 for a 1x1 window) */
    int flat;                              /* 1x1, stride 1, no padding: pixel p reads x's pixel p */
    int x, y, xs_signed;
    int64_t xz, pad_tail;                  /* x's values read in the padding and at taps past K */
    int bf16;                              /* words of two bfloat16 (float32 Conv, --precision bf16) */
    int i16;                               /* words of two int16 (dot2: x86 without VNNI), else of four
                                              bytes */
} QConv;

enum { PACK_VW = 16 };   /* lanes a packing step (a register of int32 words) */

static LoopExpr *ci32(Low *L, int64_t v) { return low_const(L, IR_DT_I32, (double)v); }

/* Is input k a known array of n elements (n < 0: any) of dtype t?  Its data. */
static const void *known(Low *L, int k, IrDType t, int64_t n)
{
    const IrArray *a = low_known(L, k);
    if (!a || a->dtype != t || (n >= 0 && ir_array_numel(a) != n))
        return NULL;
    return a->data;
}

/* float32 f rounded to bfloat16 (nearest even; a NaN stays a quiet NaN), as
 * the loop IR's bf16pack. */
static uint32_t bf16_of(float f)
{
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    if (f != f)
        return (b >> 16) | 0x40;
    return (b + 0x7fff + ((b >> 16) & 1)) >> 16;
}


/* The packing step's word at lane c of piece ow0 (loop variables n, g, k4,
 * oh): the E taps 4*k4 + j (2*k4 + j for two halves) of output pixel
 * (oh, ow0 + c).  A tap reads x where it lies in x, else the zero point
 * (the padding) or the value past K.  Every column a piece reads lies in
 * x (pad_for_pack), so only the row and K are tested, the same for every
 * lane. */
static LoopExpr *pack_word(Low *L, const QConv *q, int n, int g, int k4, int oh, int ow0, int c)
{
    const IrWindow *w = &q->w;
    int S = w->rank;
    int64_t KH = S == 2 ? w->kernel[0] : 1, KW = w->kernel[S - 1];
    int64_t xs[IR_MAX_RANK];
    low_strides(L, q->x, xs);
    LoopExpr *word = NULL, *half[2] = { NULL, NULL };
    int E = q->bf16 || q->i16 ? 2 : 4;
    IrDType xt = low_buf(L, q->x)->dtype;
    for (int j = 0; j < E; j++) {
        LoopExpr *kk = add(L, mul(L, low_v(L, k4), E), low_i(L, j));
        LoopExpr *ci = add(L, mul(L, low_v(L, g), q->cin), low_bin(L, LOOP_DIV, kk, low_i(L, KH * KW)));
        LoopExpr *ow = add(L, low_v(L, ow0), low_v(L, c));
        LoopExpr *at, *cond = low_bin(L, LOOP_LT, loop_expr_copy(L->p, kk), low_i(L, q->K));
        if (q->flat) {
            at = add(L, add(L, mul(L, low_v(L, n), xs[0]), mul(L, ci, xs[1])), ow);
        } else {
            LoopExpr *kh = low_bin(L, LOOP_MOD, low_bin(L, LOOP_DIV, loop_expr_copy(L->p, kk), low_i(L, KW)), low_i(L, KH));
            LoopExpr *kw = low_bin(L, LOOP_MOD, loop_expr_copy(L->p, kk), low_i(L, KW));
            LoopExpr *iw = low_bin(L, LOOP_SUB, add(L, mul(L, ow, w->stride[S - 1]), mul(L, kw, w->dilation[S - 1])),
                                   low_i(L, w->pad_begin[S - 1]));
            at = add(L, add(L, mul(L, low_v(L, n), xs[0]), mul(L, ci, xs[1])), mul(L, iw, xs[S + 1]));
            if (S == 2) {
                LoopExpr *ih = low_bin(L, LOOP_SUB, add(L, mul(L, low_v(L, oh), w->stride[0]), mul(L, kh, w->dilation[0])),
                                       low_i(L, w->pad_begin[0]));
                at = add(L, at, mul(L, loop_expr_copy(L->p, ih), xs[2]));
                if (w->pad_begin[0] > 0 || (w->out[0] - 1) * w->stride[0] + (KH - 1) * w->dilation[0] >= w->in[0])
                    cond = low_and(L, low_in_range(L, ih, 0, w->in[0]), cond);     /* rows may leave x */
            }
        }
        if (q->bf16) {                      /* the padding and the taps past K: 0 */
            half[j] = loop_select(L->p, cond, low_load(L, q->x, at, IR_DT_F32), low_const(L, IR_DT_F32, 0));
            continue;
        }
        LoopExpr *other = loop_select(L->p, low_bin(L, LOOP_LT, loop_expr_copy(L->p, kk), low_i(L, q->K)),
                                      low_const(L, xt, q->xz), low_const(L, xt, q->pad_tail));
        LoopExpr *byte = loop_select(L->p, cond, low_load(L, q->x, at, xt), other);
        LoopExpr *u = low_bin(L, LOOP_AND, low_convert(L, byte, IR_DT_I32), ci32(L, q->i16 ? 0xffff : 255));
        if (j)
            u = low_bin(L, LOOP_SHL, u, ci32(L, 32 / E * j));
        word = word ? low_bin(L, LOOP_OR, word, u) : u;
    }
    if (q->bf16)
        return loop_call(L->p, LOOP_I_bf16pack, 2, half);
    if (q->xs_signed && !q->i16)
        return low_bin(L, LOOP_XOR, word, ci32(L, (int32_t)0x80808080u));
    return word;
}

/* A 1-D or 2-D window without negative pads (cropping: the plain
 * template), so that a padded copy of x leaves every tap inside it. */
static int window_ok(const IrWindow *w)
{
    if (w->rank < 1 || w->rank > 2)
        return 0;
    for (int i = 0; i < w->rank; i++)
        if (w->pad_begin[i] < 0 || w->pad_end[i] < 0)
            return 0;
    return 1;
}

/* A padded window reaching a border piece of a row (tile_inner_pieces)
 * packs from a copy of x padded with the value the padding reads (the zero
 * point; 0 for bfloat16) and s - 1 elements of slack: every piece then
 * reads inside, so the pack tests no column (and no row).  The copy is a pass over x,
 * the pack's reads 9 to 49 times that; a border piece's per-lane tests and
 * masked loads took 2-3 times an inside piece's, and rows narrower than a
 * vector (14x14, 7x7 maps) are all border: ResNet-18's layer 3 and 4 packs
 * 6% of its int8 time on Zen 5.  q's window then reads the copy unpadded. */
static int pad_for_pack(Low *L, QConv *q)
{
    IrWindow *w = &q->w;
    int S = w->rank;
    int64_t VW = q->OW1 <= PACK_VW ? q->OW1 : PACK_VW, nq = (q->OW1 + VW - 1) / VW, qlo, qhi;
    tile_inner_pieces(w, q->OW1, VW, &qlo, &qhi);
    if (qlo == 0 && qhi == nq)
        return 0;                           /* every piece inside already (no column padding reached) */
    int64_t s1 = w->stride[S - 1];
    int xp = tile_pad_input(L, q->x, w, 0, 0, s1 > 1 ? (int)(s1 - 1) : 0, q->bf16 ? 0.0 : (double)q->xz);
    if (xp < 0)
        return -1;
    q->x = xp;
    for (int i = 0; i < S; i++) {
        w->in[i] += w->pad_begin[i] + w->pad_end[i];
        w->pad_begin[i] = w->pad_end[i] = 0;
    }
    return 0;
}

/* The packing kernel: P[n][g][k4][p] for every pixel p (pack rows of OW1
 * pixels, VW lanes at a time, the last piece overlapping).  No piece tests
 * a column (pad_for_pack): the per-lane tests and masked loads of the
 * pieces reaching the padding took half a stride-2 7x7 pack's time
 * (ResNet-18's first layer). */
static int pack_kernel(Low *L, const QConv *q, int pb)
{
    const IrWindow *w = &q->w;
    int64_t VW = q->OW1 <= PACK_VW ? q->OW1 : PACK_VW, nq = (q->OW1 + VW - 1) / VW;
    int n, g, k4, oh, qv, c;
    if (low_vars(L, 1, "n", &n) || low_vars(L, 1, "g", &g) || low_vars(L, 1, "k4", &k4) ||
        low_vars(L, 1, "oh", &oh) || low_vars(L, 1, "q", &qv) || low_vars(L, 1, "c", &c))
        return low_oom(L);
    LoopStmt *blk = loop_block(L->p);
    if (!blk)
        return low_oom(L);
    int ow0 = low_let(L, blk, "ow0", low_bin(L, LOOP_MIN, mul(L, low_v(L, qv), VW), low_i(L, q->OW1 - VW)), 0);
    if (ow0 < 0)
        return low_oom(L);
    LoopExpr *p = add(L, mul(L, low_v(L, oh), q->OW1), add(L, low_v(L, ow0), low_v(L, c)));
    LoopExpr *dst = add(L, mul(L, add(L, mul(L, add(L, mul(L, low_v(L, n), q->G), low_v(L, g)), q->K4), low_v(L, k4)), q->Mp), p);
    LoopStmt *st = low_store(L, pb, dst, pack_word(L, q, n, g, k4, oh, ow0, c));
    if (!st || tile_vec_loop(L, blk, c, st, (int)VW))
        return low_oom(L);
    int vars[5] = { n, g, k4, oh, qv };
    int64_t ext[5] = { w->batch, q->G, q->K4, q->rows, nq };
    return low_kernel_prepares(L, low_nest(L, 5, vars, ext, blk), w->batch * q->G * q->K4 * q->M);
}

/* ------------------------------------------------------------ rows
 *
 * The products whose output rows are contiguous along the output columns:
 * QLinearMatMul with a constant 2-D B, and the QLinearConv of one pixel
 * over a one-pixel input (the Gemm form docs/passes.md describes: a row of
 * A an image of K channels).  Per row r and column n, A's bytes u as above:
 *
 *   pack: Ap[r][k4] = the bytes u(A[r][4*k4 + j]), j = 0..3 (u = 0 past K);
 *   compute: acc[r][n] = bias'[n] + sum_k4 dot4(Ap[r][k4], Bp[nt][k4][c]),
 *       Bp B's bytes packed at compile time in panels of NV*NR columns
 *       (the last panel overlapping the one before), MR rows broadcast;
 *   store as the convolution's, the multiplier per column. */
typedef struct QRows {
    int a, y;
    int64_t R, K, K4, N;
    const int8_t *w;
    int w_nk;                  /* w is [N][K] (a Conv's weights), else [K][N] */
    int xs_signed;
    int64_t cz;                /* the byte of a real zero */
    const int32_t *bq;         /* bias or NULL */
    int i16;                   /* words of two int16 (dot2), else of four bytes (dot4) */
    int bf16;                  /* words of two bfloat16: float32 weights wf (laid out as w), bias bf or NULL */
    const float *wf, *bf;
    int b_rt;                  /* bf16: B known only at run time ([G][K][N], packed by a kernel), else -1 */
    int64_t G;                 /* batches of R rows (A [G][R][K], Y [G][R][N]); 1 unless b_rt */
    int64_t zb;                /* 8 bits, B at run time: B's zero point as its words hold it (below) */
    int col_sums, row_sums;    /* ... then: workspace [G][NT][NRV] int32, the column terms of the panels;
                                  [G][R] int32, the row terms (-1: zb 0, none) */
} QRows;

/* The dot product of a block's words: of two bfloat16, of two int16, or of four bytes. */
static LoopIntrinsic word_dot(int bf16, int i16)
{
    return bf16 ? LOOP_I_dot2bf : i16 ? LOOP_I_dot2 : LOOP_I_dot4;
}

/* acc[ai] = fn(acc[ai], a, b), the block's step on words (word_dot), over lane c of nr, appended to kb. */
static int word_step(Low *L, LoopStmt *kb, int acc, IrDType at, LoopExpr *ai, LoopExpr *a, LoopExpr *b, LoopIntrinsic fn,
                     int c, int nr)
{
    LoopExpr *args[3] = { low_load(L, acc, ai, at), a, b };
    LoopStmt *st = low_store(L, acc, loop_expr_copy(L->p, ai), loop_call(L->p, fn, 3, args));
    return st ? tile_vec_loop(L, kb, c, st, nr) : -1;
}

/* The store of accumulator a at yi of y: requantized by the multiplier at mcol of mb where the output
 * is bytes (mb >= 0), else through the fused members (tile_out_store at n, chan, pos, col). */
static LoopStmt *word_store(Low *L, int y, LoopExpr *yi, LoopExpr *a, int mb, LoopExpr *mcol, LoopExpr *n,
                            LoopExpr *chan, LoopExpr *pos, LoopExpr *col)
{
    if (mb >= 0)
        return low_store(L, y, yi, low_requantize(L, a, low_load(L, mb, mcol, IR_DT_F32), IR_DT_F32, low_in(L, 7)));
    return tile_out_store(L, yi, n, chan, pos, col, NULL, a);
}

static int8_t rows_w(const QRows *q, int64_t k, int64_t n)
{
    return k >= q->K ? 0 : q->w_nk ? q->w[n * q->K + k] : q->w[k * q->N + n];
}

/* Ap[r][k4], VW words a step (the last step overlapping). */
static int rows_pack(Low *L, const QRows *q, int ap)
{
    int64_t VW = q->K4 < 16 ? q->K4 : 16, nq = (q->K4 + VW - 1) / VW;
    const LoopBuf *ab = &L->p->bufs[q->a];
    int root = ab->alias_of >= 0 ? ab->alias_of : q->a, words = -1;
    if (q->bf16 && L->p->bufs[root].storage == LOOP_ST_WORKSPACE && L->p->bufs[root].slack < 1 && q->K % 2 == 0) {
        /* the odd halves of the last row's last word, read as a stride-2
         * vector, reach one element past the buffer: allocated */
        LoopBuf *rb = &L->p->bufs[root];
        rb->bytes += (int64_t)(1 - rb->slack) * (int64_t)ir_dtype_size(rb->dtype);
        rb->slack = 1;
        L->p->bufs[q->a].slack = 1;
    }
    if (!q->bf16 && !q->i16 && L->p->bufs[root].storage == LOOP_ST_WORKSPACE && ab->base == 0 && q->K % 4 == 0) {
        /* rows of whole words in the workspace (64-byte aligned, rows of a
         * multiple of 4 bytes): the bytes read as the int32 words they make
         * (little-endian), through a view of another dtype */
        IrShape vs = { .rank = 1, .dims = { q->R * q->K4 } };
        char name[64];
        snprintf(name, sizeof name, "%s_words", ab->name);
        if ((words = loop_add_buf(L->p, name, IR_DT_I32, &vs, LOOP_ST_WORKSPACE)) < 0)
            return low_oom(L);
        LoopBuf *wb = &L->p->bufs[words];
        wb->alias_of = root;
        wb->offset = L->p->bufs[root].offset;
        wb->bytes = L->p->bufs[root].bytes;
    }
    int r, qv, c;
    if (low_vars(L, 1, "r", &r) || low_vars(L, 1, "q", &qv) || low_vars(L, 1, "c", &c))
        return low_oom(L);
    LoopStmt *blk = loop_block(L->p);
    int k0 = blk ? low_let(L, blk, "k0", low_bin(L, LOOP_MIN, mul(L, low_v(L, qv), VW), low_i(L, q->K4 - VW)), 0) : -1;
    if (k0 < 0)
        return low_oom(L);
    IrDType at = low_buf(L, q->a)->dtype;
    LoopExpr *word = words >= 0 ? low_load(L, words, add(L, mul(L, low_v(L, r), q->K4), add(L, low_v(L, k0), low_v(L, c))),
                                           IR_DT_I32)
                                : NULL;
    if (q->bf16) {
        LoopExpr *half[2];
        for (int j = 0; j < 2; j++) {
            LoopExpr *k = add(L, mul(L, add(L, low_v(L, k0), low_v(L, c)), 2), low_i(L, j));
            half[j] = low_load(L, q->a, add(L, mul(L, low_v(L, r), q->K), k), IR_DT_F32);
            if (q->K % 2)
                half[j] = loop_select(L->p, low_bin(L, LOOP_LT, loop_expr_copy(L->p, k), low_i(L, q->K)), half[j],
                                      low_const(L, IR_DT_F32, 0));
        }
        word = loop_call(L->p, LOOP_I_bf16pack, 2, half);
    }
    int E = q->i16 ? 2 : 4;
    for (int j = 0; j < E && words < 0 && !q->bf16; j++) {
        LoopExpr *k = add(L, mul(L, add(L, low_v(L, k0), low_v(L, c)), E), low_i(L, j));
        LoopExpr *byte = low_load(L, q->a, add(L, mul(L, low_v(L, r), q->K), k), at);
        if (q->K % E)
            byte = loop_select(L->p, low_bin(L, LOOP_LT, loop_expr_copy(L->p, k), low_i(L, q->K)), byte,
                               low_const(L, at, q->xs_signed && !q->i16 ? -128 : 0));
        LoopExpr *u = low_bin(L, LOOP_AND, low_convert(L, byte, IR_DT_I32), ci32(L, q->i16 ? 0xffff : 255));
        word = j ? low_bin(L, LOOP_OR, word, low_bin(L, LOOP_SHL, u, ci32(L, 32 / E * j))) : u;
    }
    if (q->xs_signed && !q->bf16 && !q->i16)
        word = low_bin(L, LOOP_XOR, word, ci32(L, (int32_t)0x80808080u));
    LoopStmt *st = low_store(L, ap, add(L, mul(L, low_v(L, r), q->K4), add(L, low_v(L, k0), low_v(L, c))), word);
    if (!st || tile_vec_loop(L, blk, c, st, (int)VW))
        return low_oom(L);
    int vars[2] = { r, qv };
    int64_t ext[2] = { q->G * q->R, nq };
    return low_kernel_prepares(L, low_nest(L, 2, vars, ext, blk), q->G * q->R * q->K4);
}

/* B known at run time: Bp[g][nt][k2][c] = bf16pack(B[g][2 k2][n0 + c],
 * B[g][2 k2 + 1][n0 + c]) with n0 = min(nt NRV, N - NRV), the panels the
 * constant ones would be (0 past K).  8 bits: the words of E = 4 bytes (2
 * int16 halves) of b' = B[g][E k2 + j][n0 + c], b' = b - 128 for uint8 B in
 * bytes (a signed byte), else b; and the panel's column terms
 *     cs[g][nt][c] = K cz zb - cz sum_k b'[k][n0 + c]
 * (cz the packed value of A's zero point, zb B's zero point as b'), which
 * with the row terms (rows_sums) make the dot products' sum of the packed
 * values sum_k (a - az)(b - bz) (the constant weights' bias', at run time):
 *     sum (a' - cz)(b' - zb) = sum a' b' - zb sum a' - cz sum b' + K cz zb.
 * Per panel, so that the last, overlapping panel sums its own columns. */
static int rows_pack_b(Low *L, const QRows *q, int bp, int64_t NT, int64_t nrv)
{
    int g, nt, k2, c, c2;
    if (low_vars(L, 1, "g", &g) || low_vars(L, 1, "nt", &nt) || low_vars(L, 1, "k2", &k2) || low_vars(L, 1, "c", &c) ||
        low_vars(L, 1, "c", &c2))
        return low_oom(L);
    LoopStmt *blk = loop_block(L->p), *pan = loop_block(L->p);
    int n0 = pan ? low_let(L, pan, "n0", low_bin(L, LOOP_MIN, mul(L, low_v(L, nt), nrv), low_i(L, q->N - nrv)), 0) : -1;
    if (n0 < 0 || !blk)
        return low_oom(L);
    int E = q->bf16 || q->i16 ? 2 : 4;
    IrDType bt = low_buf(L, q->b_rt)->dtype;
    LoopExpr *word = NULL, *half[2], *sum = NULL;
    for (int j = 0; j < E; j++) {
        LoopExpr *k = add(L, mul(L, low_v(L, k2), E), low_i(L, j));
        LoopExpr *at = add(L, add(L, mul(L, low_v(L, g), q->K * q->N), mul(L, k, q->N)), add(L, low_v(L, n0), low_v(L, c)));
        LoopExpr *in_k = low_bin(L, LOOP_LT, loop_expr_copy(L->p, k), low_i(L, q->K));
        if (q->bf16) {
            half[j] = low_load(L, q->b_rt, at, IR_DT_F32);
            if (j && q->K % 2)
                half[j] = loop_select(L->p, in_k, half[j], low_const(L, IR_DT_F32, 0));
            continue;
        }
        LoopExpr *v = low_convert(L, low_load(L, q->b_rt, at, bt), IR_DT_I32);
        if (bt == IR_DT_U8 && E == 4)
            v = low_bin(L, LOOP_SUB, v, ci32(L, 128));
        if (q->K % E)
            v = loop_select(L->p, in_k, v, ci32(L, 0));
        sum = sum ? low_bin(L, LOOP_ADD, sum, loop_expr_copy(L->p, v)) : loop_expr_copy(L->p, v);
        LoopExpr *u = low_bin(L, LOOP_AND, v, ci32(L, E == 4 ? 255 : 0xffff));
        word = j ? low_bin(L, LOOP_OR, word, low_bin(L, LOOP_SHL, u, ci32(L, 32 / E * j))) : u;
    }
    if (q->bf16)
        word = loop_call(L->p, LOOP_I_bf16pack, 2, half);
    LoopExpr *dst = add(L, mul(L, add(L, mul(L, add(L, mul(L, low_v(L, g), NT), low_v(L, nt)), q->K4), low_v(L, k2)), nrv),
                        low_v(L, c));
    LoopStmt *st = low_store(L, bp, dst, word), *body = st;
    if (!q->bf16) {    /* the column terms: cz K zb, then - cz b' a word at a time (in the word's lanes) */
        LoopExpr *ci = add(L, mul(L, add(L, mul(L, low_v(L, g), NT), low_v(L, nt)), nrv), low_v(L, c2));
        LoopStmt *init = low_store(L, q->col_sums, ci, ci32(L, q->K * q->cz * q->zb));
        LoopExpr *cj = add(L, mul(L, add(L, mul(L, low_v(L, g), NT), low_v(L, nt)), nrv), low_v(L, c));
        LoopExpr *prev = low_load(L, q->col_sums, loop_expr_copy(L->p, cj), IR_DT_I32);
        LoopStmt *upd = low_store(L, q->col_sums, cj, low_bin(L, LOOP_SUB, prev, low_bin(L, LOOP_MUL, ci32(L, q->cz), sum)));
        body = loop_block(L->p);
        if (!init || !upd || !body || tile_vec_loop(L, pan, c2, init, (int)nrv) || low_add(L, body, st) ||
            low_add(L, body, upd))
            return low_oom(L);
    }
    if (!st || tile_vec_loop(L, blk, c, body, (int)nrv))
        return low_oom(L);
    if (low_add(L, pan, loop_for(L->p, k2, low_i(L, q->K4), LOOP_SERIAL, blk)))
        return low_oom(L);
    int vars[2] = { g, nt };
    int64_t ext[2] = { q->G, NT };
    return low_kernel_prepares(L, low_nest(L, 2, vars, ext, pan), q->G * NT * q->K4 * nrv);
}

/* 8 bits, B at run time, zb nonzero: the row terms rs[row] = zb sum_k a'[row][k]
 * (a' A's packed value: a + 128 for int8 A in bytes, else a). */
static int rows_sums(Low *L, const QRows *q)
{
    int r, k;
    LoopStmt *row = loop_block(L->p);
    if (!row || low_vars(L, 1, "r", &r) || low_vars(L, 1, "k", &k))
        return low_oom(L);
    int s = low_let(L, row, "s", ci32(L, 0), 1);
    if (s < 0)
        return low_oom(L);
    IrDType at = low_buf(L, q->a)->dtype;
    LoopExpr *v = low_convert(L, low_load(L, q->a, add(L, mul(L, low_v(L, r), q->K), low_v(L, k)), at), IR_DT_I32);
    LoopStmt *st = loop_assign(L->p, s, low_bin(L, LOOP_ADD, low_v(L, s), v));
    int64_t off = at == IR_DT_I8 && !q->i16 ? 128 * q->K : 0;
    if (!st || low_add(L, row, loop_for(L->p, k, low_i(L, q->K), LOOP_SERIAL, st)) ||
        low_add(L, row, low_store(L, q->row_sums, low_v(L, r),
                                  low_bin(L, LOOP_MUL, ci32(L, q->zb), low_bin(L, LOOP_ADD, low_v(L, s), ci32(L, off))))))
        return low_oom(L);
    return low_kernel_prepares(L, loop_for(L->p, r, low_i(L, q->G * q->R), LOOP_SERIAL, row), q->G * q->R * q->K);
}

/* B[k][n] as float32 (bfloat16 rows), 0 past K. */
static float rows_wf(const QRows *q, int64_t k, int64_t n)
{
    return k >= q->K ? 0.0f : q->w_nk ? q->wf[n * q->K + k] : q->wf[k * q->N + n];
}

static int qrows(Low *L, QRows *q, const float *m)
{
    const LowSchedule *s = L->s;
    int bits = q->bf16 ? s->bf16 : q->i16 ? s->dot_i16 : s->dot_i8;
    int nr = bits / 32, nv = bits >= 512 ? 4 : 2, mr = 6;
    while (nv > 1 && q->N < (int64_t)nv * nr)
        nv--;
    if (q->N < nr)
        return 1;
    if (q->R < mr)
        mr = (int)q->R;
    int64_t nrv = (int64_t)nv * nr, NT = (q->N + nrv - 1) / nrv;
    /* B's panels, bias' and the multipliers per column; the accumulator bound */
    IrShape bsh = { .rank = 1, .dims = { q->G * NT * q->K4 * nrv } }, csh = { .rank = 1, .dims = { q->N } };
    int32_t *bp = q->b_rt >= 0 ? NULL : util_arena_array(&L->p->arena, (size_t)bsh.dims[0], sizeof *bp);
    int32_t *bias = util_arena_array(&L->p->arena, (size_t)q->N, sizeof *bias);   /* bf16: float32 bits */
    if ((!bp && q->b_rt < 0) || !bias)
        return low_oom(L);
    for (int64_t nt = 0; nt < NT && q->b_rt < 0; nt++) {
        int64_t n0 = nt * nrv < q->N - nrv ? nt * nrv : q->N - nrv;
        for (int64_t k4 = 0; k4 < q->K4; k4++)
            for (int64_t c = 0; c < nrv; c++) {
                uint32_t word = 0;
                for (int j = 0; j < 4 && !q->bf16 && !q->i16; j++)
                    word |= (uint32_t)(uint8_t)rows_w(q, 4 * k4 + j, n0 + c) << (8 * j);
                for (int j = 0; j < 2 && q->i16; j++)
                    word |= (uint32_t)(uint16_t)rows_w(q, 2 * k4 + j, n0 + c) << (16 * j);
                if (q->bf16)
                    word = bf16_of(rows_wf(q, 2 * k4, n0 + c)) | bf16_of(rows_wf(q, 2 * k4 + 1, n0 + c)) << 16;
                bp[(nt * q->K4 + k4) * nrv + c] = (int32_t)word;
            }
    }
    for (int64_t n = 0; n < q->N && q->bf16; n++) {
        float b = q->bf ? q->bf[n] : 0.0f;
        memcpy(&bias[n], &b, sizeof b);
    }
    if (q->b_rt >= 0 && !q->bf16)       /* (the column terms instead: rows_pack_b) */
        memset(bias, 0, (size_t)q->N * sizeof *bias);
    for (int64_t n = 0; n < q->N && !q->bf16 && q->b_rt < 0; n++) {
        int64_t sw = 0;
        for (int64_t k = 0; k < q->K; k++)
            sw += rows_w(q, k, n);
        double bd = (q->bq ? (double)q->bq[n] : 0.0) - (double)q->cz * (double)sw;
        if (fabs(bd) + (double)q->K * 255 * 128 >= 2147483647.0)
            return 1;
        bias[n] = (int32_t)bd;
    }
    IrDType at = q->bf16 ? IR_DT_F32 : IR_DT_I32;           /* the accumulators' type */
    int bpb = loop_add_buf(L->p, q->bf16 ? "bweights" : "qweights", IR_DT_I32, &bsh,
                           q->b_rt >= 0 ? LOOP_ST_WORKSPACE : LOOP_ST_CONST);
    int bb = bpb < 0 ? -1 : loop_add_buf(L->p, q->bf16 ? "bbias" : "qbias", at, &csh, LOOP_ST_CONST);
    int mb = bb < 0 || !m ? -1 : loop_add_buf(L->p, "qmul", IR_DT_F32, &csh, LOOP_ST_CONST);
    IrShape psh = { .rank = 1, .dims = { q->G * q->R * q->K4 } };
    int ap = bb < 0 || (m && mb < 0) ? -1 : loop_add_buf(L->p, "packed_x", IR_DT_I32, &psh, LOOP_ST_WORKSPACE);
    if (ap < 0)
        return low_oom(L);
    if (bp)
        L->p->bufs[bpb].data = bp;
    L->p->bufs[bb].data = bias;
    if (m)
        L->p->bufs[mb].data = (void *)m;
    int rt8 = q->b_rt >= 0 && !q->bf16;     /* 8 bits, B at run time: the column and row terms */
    if (rt8) {
        IrShape css = { .rank = 1, .dims = { q->G * NT * nrv } }, rss = { .rank = 1, .dims = { q->G * q->R } };
        q->col_sums = loop_add_buf(L->p, "qcolterms", IR_DT_I32, &css, LOOP_ST_WORKSPACE);
        q->row_sums = q->zb ? loop_add_buf(L->p, "qrowterms", IR_DT_I32, &rss, LOOP_ST_WORKSPACE) : -1;
        if (q->col_sums < 0 || (q->zb && q->row_sums < 0))
            return low_oom(L);
    }
    if (rows_pack(L, q, ap) || (q->b_rt >= 0 && rows_pack_b(L, q, bpb, NT, nrv)) || (rt8 && q->zb && rows_sums(L, q)))
        return -1;
    int gv, nt, mt, k4;
    if (low_vars(L, 1, "g", &gv))
        return low_oom(L);
    IrShape ash = { .rank = 1, .dims = { (int64_t)mr * nrv } };
    int acc = loop_add_buf(L->p, "acc", at, &ash, LOOP_ST_LOCAL);
    LoopStmt *tile = loop_block(L->p), *kb = loop_block(L->p);
    if (acc < 0 || !tile || !kb || low_vars(L, 1, "nt", &nt) || low_vars(L, 1, "mt", &mt) || low_vars(L, 1, "k4", &k4))
        return low_oom(L);
    int n0 = low_let(L, tile, "n0", low_bin(L, LOOP_MIN, mul(L, low_v(L, nt), nrv), low_i(L, q->N - nrv)), 0);
    if (n0 < 0)
        return low_oom(L);
    int row[TILE_MAX_MR];
    for (int r = 0; r < mr; r++) {
        LoopExpr *rr = low_bin(L, LOOP_MIN, add(L, mul(L, low_v(L, mt), mr), low_i(L, r)), low_i(L, q->R - 1));
        if ((row[r] = low_let(L, tile, "row", add(L, mul(L, low_v(L, gv), q->R), rr), 0)) < 0)
            return low_oom(L);
        for (int v = 0; v < nv; v++) {
            int c;
            if (low_vars(L, 1, "c", &c))
                return low_oom(L);
            LoopExpr *col = add(L, low_v(L, n0), add(L, low_i(L, (int64_t)v * nr), low_v(L, c)));
            LoopExpr *init = low_load(L, bb, col, at);
            if (rt8) {      /* the column terms of panel nt, less the row's */
                LoopExpr *pc = add(L, mul(L, add(L, mul(L, low_v(L, gv), NT), low_v(L, nt)), nrv),
                                   add(L, low_i(L, (int64_t)v * nr), low_v(L, c)));
                init = low_load(L, q->col_sums, pc, IR_DT_I32);
                if (q->zb)
                    init = low_bin(L, LOOP_SUB, init, low_load(L, q->row_sums, low_v(L, row[r]), IR_DT_I32));
            }
            LoopStmt *st = low_store(L, acc, add(L, low_i(L, (int64_t)(r * nv + v) * nr), low_v(L, c)), init);
            if (tile_vec_loop(L, tile, c, st, nr))
                return low_oom(L);
        }
    }
    for (int r = 0; r < mr; r++) {
        int av = low_let(L, kb, "a", low_load(L, ap, add(L, mul(L, low_v(L, row[r]), q->K4), low_v(L, k4)), IR_DT_I32), 0);
        if (av < 0)
            return low_oom(L);
        for (int v = 0; v < nv; v++) {
            int c;
            if (low_vars(L, 1, "c", &c))
                return low_oom(L);
            LoopExpr *ai = add(L, low_i(L, (int64_t)(r * nv + v) * nr), low_v(L, c));
            LoopExpr *panel = add(L, mul(L, low_v(L, gv), NT), low_v(L, nt));
            LoopExpr *bi = add(L, mul(L, add(L, mul(L, panel, q->K4), low_v(L, k4)), nrv),
                               add(L, low_i(L, (int64_t)v * nr), low_v(L, c)));
            if (word_step(L, kb, acc, at, ai, low_v(L, av), low_load(L, bpb, bi, IR_DT_I32), word_dot(q->bf16, q->i16), c, nr))
                return low_oom(L);
        }
    }
    if (low_add(L, tile, low_nest(L, 1, &k4, &q->K4, kb)))
        return low_oom(L);
    for (int r = 0; r < mr; r++)
        for (int v = 0; v < nv; v++) {
            int c;
            if (low_vars(L, 1, "c", &c))
                return low_oom(L);
            LoopExpr *col = add(L, low_v(L, n0), add(L, low_i(L, (int64_t)v * nr), low_v(L, c)));
            LoopExpr *a = low_load(L, acc, add(L, low_i(L, (int64_t)(r * nv + v) * nr), low_v(L, c)), at);
            LoopExpr *yi = add(L, mul(L, low_v(L, row[r]), q->N), loop_expr_copy(L->p, col));
            LoopStmt *st = word_store(L, q->y, yi, a, mb, col, NULL, NULL, low_v(L, row[r]), loop_expr_copy(L->p, col));
            if (tile_vec_loop(L, tile, c, st, nr))
                return low_oom(L);
        }
    int vars[3] = { gv, nt, mt };
    int64_t ext[3] = { q->G, NT, (q->R + mr - 1) / mr };
    return low_kernel(L, low_nest(L, 3, vars, ext, tile));
}

/* The operands both products share (input slots: a 0, a_scale 1, a_zp 2,
 * w 3, w_scale 4, w_zp 5, y_scale 6, y_zp 7): 8-bit a and y, int8
 * constant weights of n_w elements with zero points 0, float32 scales, a
 * and y per tensor, the weight scale per tensor or one per output channel
 * (count C).  The multipliers a_s * w_s[c] / y_s (float32) into m[C];
 * *cz the value a real zero packs as: its byte (x_zp + 128 for int8) in
 * words of bytes, x_zp itself in int16 halves (i16).  With zb (B at run
 * time): B int8 or uint8 with a per-tensor scale and zero point, *zb that
 * zero point as B's words hold it (- 128 for uint8 in bytes).  1 when they
 * do not qualify. */
static int q_operands(Low *L, int64_t n_w, int64_t C, int i16, float **m, int64_t *cz, int64_t *zb)
{
    int x = low_in(L, 0), y = low_out(L, 0);
    if (x < 0 || y < 0)
        return L->oom ? low_oom(L) : 1;
    IrDType xt = low_buf(L, x)->dtype, yt = low_buf(L, y)->dtype;
    if ((xt != IR_DT_I8 && xt != IR_DT_U8) || (yt != IR_DT_I8 && yt != IR_DT_U8) || loop_buf_has_halo(low_buf(L, y)) ||
        loop_buf_has_halo(low_buf(L, x)))
        return 1;
    const float *xsc = known(L, 1, IR_DT_F32, 1), *wsc = known(L, 4, IR_DT_F32, -1), *ysc = known(L, 6, IR_DT_F32, 1);
    const void *xzp = known(L, 2, xt, 1);
    const IrArray *wza = low_has(L, 5) ? low_known(L, 5) : NULL;
    if ((!zb && !known(L, 3, IR_DT_I8, n_w)) || !xsc || !wsc || !ysc || !xzp || (low_has(L, 5) && !wza) ||
        !known(L, 7, yt, 1))
        return 1;
    int64_t nws = ir_shape_numel(&low_known(L, 4)->shape);
    if (nws != 1 && (nws != C || zb))
        return 1;
    if (zb) {          /* B at run time: int8 or uint8, a zero point per tensor, as its words hold it */
        IrDType bt = low_buf(L, low_in(L, 3))->dtype;
        if ((bt != IR_DT_I8 && bt != IR_DT_U8) || (wza && (ir_array_numel(wza) != 1 || wza->dtype != bt)))
            return 1;
        *zb = (wza ? ir_load_i64(bt, wza->data, 0) : 0) - (bt == IR_DT_U8 && !i16 ? 128 : 0);
    }
    for (int64_t i = 0; wza && !zb && i < ir_array_numel(wza); i++)
        if (ir_load_i64(wza->dtype, wza->data, i) != 0)
            return 1;
    *cz = ir_load_i64(xt, xzp, 0) + (xt == IR_DT_I8 && !i16 ? 128 : 0);
    if (!(*m = util_arena_array(&L->p->arena, (size_t)C, sizeof **m)))
        return low_oom(L);
    for (int64_t c = 0; c < C; c++)
        (*m)[c] = (xsc[0] * wsc[nws > 1 ? c : 0]) / ysc[0];
    return 0;
}

/* Row-major with no halo: the strides of its shape. */
static int plain(const LoopBuf *b)
{
    int64_t st = 1;
    for (int i = b->shape.rank - 1; i >= 0; i--) {
        if (b->shape.dims[i] > 1 && b->strides[i] != st)
            return 0;
        st *= b->shape.dims[i];
    }
    return !loop_buf_has_halo(b);
}

/* The rows' shape from A [.., R, K] (as) and B (bs) with q's K and N set:
 * B constant [K][N], or at run time (q->b_rt) plain and [K][N] or of A's
 * batch dims ([G][K][N]; batch dims that broadcast take the other forms).
 * Sets q->R and q->G; 1 when the shapes do not qualify. */
static int rows_shape(Low *L, QRows *q, const IrShape *as, const IrShape *bs)
{
    int rt = q->b_rt >= 0;
    if ((!rt && bs->rank != 2) || (rt && (!plain(low_buf(L, q->b_rt)) || (bs->rank != 2 && bs->rank != as->rank))) ||
        as->dims[as->rank - 1] != q->K)
        return 1;
    for (int i = 0; rt && bs->rank > 2 && i < as->rank - 2; i++)
        if (as->dims[i] != bs->dims[i])
            return 1;
    q->R = ir_shape_numel(as) / q->K;
    q->G = rt && bs->rank > 2 ? ir_shape_numel(bs) / (q->K * q->N) : 1;
    q->R /= q->G;
    return 0;
}

int tile_qmatmul(Low *L)
{
    const LowSchedule *s = L->s;
    if (!s || (s->dot_i8 < 128 && s->dot_i16 < 256) || s->tile_nr <= 0 || L->fuse_n || L->n->n_out != 1)
        return 1;
    int a = low_in(L, 0), b = low_in(L, 3), y = low_out(L, 0);
    if (a < 0 || b < 0 || y < 0)
        return L->oom ? low_oom(L) : 1;
    const IrShape as = low_buf(L, a)->shape, bs = low_buf(L, b)->shape;
    if (as.rank < 2 || bs.rank < 2 || !plain(low_buf(L, a)) || !plain(low_buf(L, y)))
        return 1;
    const int8_t *wk = known(L, 3, IR_DT_I8, -1);
    int rt = !wk;      /* B at run time: A [G][R][K] by B [G][K][N] (or [K][N]) */
    QRows q = { .a = a, .y = y, .K = bs.dims[bs.rank - 2], .N = bs.dims[bs.rank - 1], .w = wk, .b_rt = rt ? b : -1 };
    if (rows_shape(L, &q, &as, &bs) || (rt && (q.K < 8 || q.K * 255 * 255 * 3 >= 2147483647LL)))
        return 1;      /* (run time: the row and column terms and the sum stay in int32) */
    q.i16 = s->dot_i8 < 128;
    q.K4 = q.i16 ? (q.K + 1) / 2 : (q.K + 3) / 4;
    q.xs_signed = low_buf(L, a)->dtype == IR_DT_I8;
    float *m;
    int r = q_operands(L, q.K * q.N, q.N, q.i16, &m, &q.cz, rt ? &q.zb : NULL);
    return r ? r : qrows(L, &q, m);
}

/* The convolution's packing and compute kernels for q (its operands set),
 * blocks for dot products of `bits`: weight words wq [C][K4], bias [C]
 * (int32 bias' for bytes, float32 for bfloat16), multipliers m [C]
 * (bytes: the requantizing store; NULL for bfloat16: the float result
 * through the fused members).  1 when the plane is narrower than a
 * vector. */
/* Depthwise (one input and one output channel a group, 2-D): the pack and
 * the products in one kernel, per image, channel and block of R output
 * rows: the block's words P[k4][r * OW + ow] packed into a buffer local to
 * the iteration (at most 16 KB: it stays in L1 / L2 while the products read it),
 * then blocks of NV vectors of NR pixels, one weight word broadcast per k4.
 * A packed buffer of the whole tensor, written for every channel before
 * the products read it back, took 60% of each depthwise layer's time
 * (MobileNetV2: 3.6 MB for features.2).  The OH rows go in blocks of
 * equal R, the last starting R rows before the end (overlapping the one
 * before by less than a row a block: the same values stored twice; blocks
 * of the largest R, 24 of a 28-row plane, recomputed 20 rows and made
 * MobileNetV2 12% slower); its lanes past the block compute on what P holds there and are
 * not stored.  The iterations are independent (PARALLEL-safe: P is local). */
enum { DW_PACK_BYTES = 16384 };

static int dw_kernel(Low *L, QConv *q, int nr, int nv, int wqb, int bb, int mb, const float *m, const int64_t *ys)
{
    const IrWindow *w = &q->w;
    int64_t OH = w->out[0], OW = w->out[1], nrv = (int64_t)nr * nv;
    int64_t R = DW_PACK_BYTES / (4 * q->K4 * OW);
    R = R < 1 ? 1 : R > OH ? OH : R;
    int64_t nrb = (OH + R - 1) / R;
    R = (OH + nrb - 1) / nrb;            /* the blocks even: the last overlaps by less than one row a block */
    int64_t Mb = R * OW, Mbp = (Mb + nrv - 1) / nrv * nrv;
    int64_t VW = OW <= PACK_VW ? OW : PACK_VW, nq = (OW + VW - 1) / VW;
    IrShape psh = { .rank = 1, .dims = { q->K4 * Mbp } }, ash = { .rank = 1, .dims = { nrv } };
    int pb = loop_add_buf(L->p, "dw_packed", IR_DT_I32, &psh, LOOP_ST_LOCAL);
    int acc = pb < 0 ? -1 : loop_add_buf(L->p, "acc", IR_DT_I32, &ash, LOOP_ST_LOCAL);
    int n, g, rb, k4, r, qv, oh, pt, k;
    LoopStmt *body = loop_block(L->p), *pk = loop_block(L->p), *tile = loop_block(L->p), *kb = loop_block(L->p);
    if (acc < 0 || !body || !pk || !tile || !kb || low_vars(L, 1, "n", &n) || low_vars(L, 1, "g", &g) ||
        low_vars(L, 1, "rb", &rb) || low_vars(L, 1, "k4", &k4) || low_vars(L, 1, "r", &r) ||
        low_vars(L, 1, "q", &qv) || low_vars(L, 1, "pt", &pt) || low_vars(L, 1, "k4", &k))
        return low_oom(L);
    int row0 = low_let(L, body, "row0", low_bin(L, LOOP_MIN, mul(L, low_v(L, rb), R), low_i(L, OH - R)), 0);
    /* the pack: rows row0 .. row0 + R - 1, pieces of VW lanes (the last overlapping) */
    oh = row0 < 0 ? -1 : low_let(L, pk, "oh", add(L, low_v(L, row0), low_v(L, r)), 0);
    int ow0 = oh < 0 ? -1 : low_let(L, pk, "ow0", low_bin(L, LOOP_MIN, mul(L, low_v(L, qv), VW), low_i(L, OW - VW)), 0);
    if (ow0 < 0)
        return low_oom(L);
    int c;
    if (low_vars(L, 1, "c", &c))
        return low_oom(L);
    LoopExpr *dst = add(L, mul(L, low_v(L, k4), Mbp), add(L, mul(L, low_v(L, r), OW), add(L, low_v(L, ow0), low_v(L, c))));
    LoopStmt *st = low_store(L, pb, dst, pack_word(L, q, n, g, k4, oh, ow0, c));
    if (!st || tile_vec_loop(L, pk, c, st, (int)VW))
        return low_oom(L);
    int pvars[3] = { k4, r, qv };
    int64_t pext[3] = { q->K4, R, nq };
    if (low_add(L, body, low_nest(L, 3, pvars, pext, pk)))
        return low_oom(L);
    /* the products: blocks of nrv pixels of the row block */
    int p0 = low_let(L, tile, "p0", mul(L, low_v(L, pt), nrv), 0);
    if (p0 < 0)
        return low_oom(L);
    for (int v = 0; v < nv; v++) {
        if (low_vars(L, 1, "c", &c))
            return low_oom(L);
        st = low_store(L, acc, add(L, low_i(L, (int64_t)v * nr), low_v(L, c)), low_load(L, bb, low_v(L, g), IR_DT_I32));
        if (tile_vec_loop(L, tile, c, st, nr))
            return low_oom(L);
    }
    int wv = low_let(L, kb, "w", low_load(L, wqb, add(L, mul(L, low_v(L, g), q->K4), low_v(L, k)), IR_DT_I32), 0);
    if (wv < 0)
        return low_oom(L);
    for (int v = 0; v < nv; v++) {
        if (low_vars(L, 1, "c", &c))
            return low_oom(L);
        LoopExpr *ai = add(L, low_i(L, (int64_t)v * nr), low_v(L, c));
        LoopExpr *pv = low_load(L, pb, add(L, mul(L, low_v(L, k), Mbp), add(L, low_v(L, p0), loop_expr_copy(L->p, ai))),
                                IR_DT_I32);
        if (word_step(L, kb, acc, IR_DT_I32, ai, pv, low_v(L, wv), word_dot(0, q->i16), c, nr))
            return low_oom(L);
    }
    if (low_add(L, tile, low_nest(L, 1, &k, &q->K4, kb)))
        return low_oom(L);
    for (int v = 0; v < nv; v++) {
        if (low_vars(L, 1, "c", &c))
            return low_oom(L);
        LoopExpr *a = low_load(L, acc, add(L, low_i(L, (int64_t)v * nr), low_v(L, c)), IR_DT_I32);
        LoopExpr *bp = add(L, low_v(L, p0), add(L, low_i(L, (int64_t)v * nr), low_v(L, c)));
        LoopExpr *px = add(L, mul(L, low_v(L, row0), OW), loop_expr_copy(L->p, bp));
        LoopExpr *yi = add(L, add(L, mul(L, low_v(L, n), ys[0]), mul(L, low_v(L, g), ys[1])), px);
        st = word_store(L, q->y, yi, a, m ? mb : -1, low_v(L, g), low_v(L, n), low_v(L, g), loop_expr_copy(L->p, px), NULL);
        if (st && Mbp != Mb)
            st = loop_if(L->p, low_bin(L, LOOP_LT, loop_expr_copy(L->p, bp), low_i(L, Mb)), st, NULL);
        if (tile_vec_loop(L, tile, c, st, nr))
            return low_oom(L);
    }
    int64_t npt = Mbp / nrv;
    if (low_add(L, body, low_nest(L, 1, &pt, &npt, tile)))
        return low_oom(L);
    int vars[3] = { n, g, rb };
    int64_t ext[3] = { w->batch, q->G, nrb };
    return low_kernel(L, low_nest(L, 3, vars, ext, body));
}

/* The weight words wq [G * cout][K4] as panels of mr channels,
 * [G][MT][K4][mr] (the rows past cout repeat row cout - 1, as the blocks'
 * channels do): a block reads its weights as one stream, k4 after k4, and
 * the next block's follow.  In rows, a block read mr streams of K4 words
 * each, too short for the hardware's prefetchers where K4 is small
 * (MobileNetV2's 320 -> 1280 at 7x7: 640-byte rows).  NULL out of memory. */
static int32_t *weight_panels(Low *L, const QConv *q, const int32_t *wq, int mr, int64_t MT)
{
    int32_t *wp = util_arena_array(&L->p->arena, (size_t)(q->G * MT * q->K4 * mr), sizeof *wp);
    for (int64_t g = 0; wp && g < q->G; g++)
        for (int64_t mt = 0; mt < MT; mt++)
            for (int64_t k4 = 0; k4 < q->K4; k4++)
                for (int r = 0; r < mr; r++) {
                    int64_t c = mt * mr + r < q->cout ? mt * mr + r : q->cout - 1;
                    wp[((g * MT + mt) * q->K4 + k4) * mr + r] = wq[(g * q->cout + c) * q->K4 + k4];
                }
    return wp;
}

/* ------------------------------------------------------------ the channel form
 *
 * A plane that fills the pixel lanes badly (ResNet-18's 7x7 maps: 49 pixels
 * in 64 lanes; its 14x14 ones in blocks of 2 vectors) runs with the output
 * channels in the lanes instead: per block, MR pixels' pack words broadcast
 * by NV vectors of channels' weight words,
 *
 *   acc[r][c] = bias[n0 + c] + sum_k4 dot(P[n][k4][p_r], Wc[nt][k4][c]),
 *
 * each accumulator stored along its channel's plane (lanes ys[1] apart).
 * Its reduction is cut in chunks of KC words (the pack's rows and the
 * weights' padded to K4p = nch KC with zero words), the loops
 * n, nt, kc, mt: a chunk of a panel's weights (CHAN_CHUNK_BYTES) stays in
 * L1 while every pixel block uses it, and the blocks carry their sums from
 * chunk to chunk in a partial buffer [n][M][N] (the chunk's first loads
 * them, its last stores the outputs).  Uncut, a panel of the 7x7 layers'
 * weights (4608 taps by 48 channels: 442 KB) and their pack (450 KB) did
 * not both stay in a 1 MB L2: no faster than the pixel form. */
enum { CHAN_CHUNK_BYTES = 16384 };

/* Vectors of channels a channel-form block (0: none fits N): 3 when the
 * last panel's overlap redoes at most 1/16 of the channels (ResNet-18's
 * 512: 21 accumulators by 7 pixels, its 49 in whole blocks), else the count
 * that redoes the fewest, the wider on a tie. */
static int chan_nv(int64_t N, int nr, int nvmax)
{
    int best = 0;
    int64_t best_dup = 0;
    for (int nv = nvmax; nv >= 1; nv--) {
        int64_t nrv = (int64_t)nv * nr, dup = (N + nrv - 1) / nrv * nrv - N;
        if (N < nrv)
            continue;
        if (nv == 3 && dup * 16 <= N)
            return 3;
        if (!best || dup < best_dup)
            best = nv, best_dup = dup;
    }
    return best;
}

/* Does convolution q take the channel form (its block *cnv vectors of
 * channels by *cmr pixels) rather than the pixel form's nv vectors (of
 * nvmax) of nr pixels?  When its pixels fill the pixel lanes worse than
 * its channels and the channel form's pixels fill theirs (or as well, with
 * narrower pixel blocks).  The pixels: 4 to 8, the fewest idle in the last
 * block, at most 24 accumulators on 32 registers (12 on 16; with 28 a
 * 14x14 layer of 256 channels ran 11% slower).  One group, a reduction of
 * 64 words at least (the scattered stores then count little). */
static int channel_form(const QConv *q, int nr, int nvmax, int nv, int *cnv, int *cmr)
{
    int cv = chan_nv(q->cout, nr, nvmax);
    if (q->G != 1 || !cv || q->K4 < 64)
        return 0;
    int64_t nrv = (int64_t)cv * nr, NT = (q->cout + nrv - 1) / nrv;
    int hi = (nvmax >= 4 ? 24 : 12) / cv, mr = tile_fewest_idle(q->M, hi > 8 ? 8 : hi, hi < 4 ? hi : 4);
    int64_t Mp = (q->M + (int64_t)nv * nr - 1) / ((int64_t)nv * nr) * nv * nr, Mr = (q->M + mr - 1) / mr * mr;
    double ep = (double)q->M / (double)Mp, ec = (double)q->M / (double)Mr * (double)q->cout / (double)(NT * nrv);
    *cnv = cv;
    *cmr = mr;
    return ec > ep + 0.02 || (nv < nvmax && ec >= ep);
}

/* Element (image n, pixel px, channel n0 + off + lane c) of the channel
 * form's partial sums [n][M][N]. */
static LoopExpr *partial_at(Low *L, int n, int px, int n0, int64_t off, int c, int64_t M, int64_t N)
{
    return add(L, mul(L, add(L, mul(L, low_v(L, n), M), low_v(L, px)), N),
               add(L, low_v(L, n0), add(L, low_i(L, off), low_v(L, c))));
}

static int chan_blocks(Low *L, QConv *q, int bits, const int32_t *wq, const void *bias, const float *m,
                       const int64_t *ys, int nv, int mr)
{
    const IrWindow *w = &q->w;
    int nr = bits / 32;
    int64_t N = q->cout, M = q->M, K4 = q->K4, nrv = (int64_t)nv * nr, NT = (N + nrv - 1) / nrv;
    int64_t kcmax = CHAN_CHUNK_BYTES / (4 * nrv), nch = (K4 + kcmax - 1) / kcmax, KC = (K4 + nch - 1) / nch;
    int64_t K4p = nch * KC, MB = (M + mr - 1) / mr;
    int32_t *wc = util_arena_array(&L->p->arena, (size_t)(NT * K4p * nrv), sizeof *wc);
    if (!wc)
        return low_oom(L);
    for (int64_t nt = 0; nt < NT; nt++) {    /* panel nt: channels n0 .. n0 + nrv - 1, the last overlapping */
        int64_t n0 = nt * nrv < N - nrv ? nt * nrv : N - nrv;
        for (int64_t k4 = 0; k4 < K4p; k4++)
            for (int64_t c = 0; c < nrv; c++)
                wc[(nt * K4p + k4) * nrv + c] = k4 < K4 ? wq[(n0 + c) * K4 + k4] : 0;
    }
    IrDType at = q->bf16 ? IR_DT_F32 : IR_DT_I32;
    IrShape wsh = { .rank = 1, .dims = { NT * K4p * nrv } }, csh = { .rank = 1, .dims = { N } };
    IrShape psh = { .rank = 1, .dims = { w->batch * K4p * M } }, zsh = { .rank = 1, .dims = { w->batch * M * N } };
    IrShape ash = { .rank = 1, .dims = { (int64_t)mr * nrv } };
    int wcb = loop_add_buf(L->p, q->bf16 ? "bweights_ch" : "qweights_ch", IR_DT_I32, &wsh, LOOP_ST_CONST);
    int bb = wcb < 0 ? -1 : loop_add_buf(L->p, q->bf16 ? "bbias" : "qbias", at, &csh, LOOP_ST_CONST);
    int mb = bb < 0 || !m ? -1 : loop_add_buf(L->p, "qmul", IR_DT_F32, &csh, LOOP_ST_CONST);
    int pb = bb < 0 || (m && mb < 0) ? -1 : loop_add_buf(L->p, "packed_x", IR_DT_I32, &psh, LOOP_ST_WORKSPACE);
    int zb = pb < 0 || nch == 1 ? -1 : loop_add_buf(L->p, "chan_partial", at, &zsh, LOOP_ST_WORKSPACE);
    int acc = pb < 0 || (nch > 1 && zb < 0) ? -1 : loop_add_buf(L->p, "acc", at, &ash, LOOP_ST_LOCAL);
    if (acc < 0)
        return low_oom(L);
    L->p->bufs[wcb].data = wc;
    L->p->bufs[bb].data = (void *)bias;
    if (m)
        L->p->bufs[mb].data = (void *)m;
    q->K4 = K4p;                            /* the pack's rows past K: words of the value past K */
    q->Mp = M;
    if (pack_kernel(L, q, pb))
        return -1;
    int n, nt, kc, mt, kk;
    LoopStmt *tile = loop_block(L->p), *kb = loop_block(L->p), *first = loop_block(L->p), *more = loop_block(L->p);
    LoopStmt *last = loop_block(L->p), *carry = loop_block(L->p);
    if (!tile || !kb || !first || !more || !last || !carry || low_vars(L, 1, "n", &n) || low_vars(L, 1, "nt", &nt) ||
        low_vars(L, 1, "kc", &kc) || low_vars(L, 1, "mt", &mt) || low_vars(L, 1, "k4", &kk))
        return low_oom(L);
    int n0 = low_let(L, tile, "n0", low_bin(L, LOOP_MIN, mul(L, low_v(L, nt), nrv), low_i(L, N - nrv)), 0);
    int k0 = n0 < 0 ? -1 : low_let(L, tile, "k0", mul(L, low_v(L, kc), KC), 0);
    if (k0 < 0)
        return low_oom(L);
    int px[TILE_MAX_MR];
    for (int r = 0; r < mr; r++)
        if ((px[r] = low_let(L, tile, "px", low_bin(L, LOOP_MIN, add(L, mul(L, low_v(L, mt), mr), low_i(L, r)),
                                                    low_i(L, M - 1)), 0)) < 0)
            return low_oom(L);
    /* the starting sums (bias, or the chunk before's) and the k4 step */
    for (int r = 0; r < mr; r++) {
        int av = low_let(L, kb, "a", low_load(L, pb, add(L, mul(L, add(L, mul(L, low_v(L, n), K4p),
                                                                           add(L, low_v(L, k0), low_v(L, kk))), M),
                                                         low_v(L, px[r])), IR_DT_I32), 0);
        if (av < 0)
            return low_oom(L);
        for (int v = 0; v < nv; v++) {
            int c, c2, c3;
            if (low_vars(L, 1, "c", &c) || low_vars(L, 1, "c", &c2) || low_vars(L, 1, "c", &c3))
                return low_oom(L);
            int64_t a0 = (int64_t)(r * nv + v) * nr;
            LoopExpr *col = add(L, low_v(L, n0), add(L, low_i(L, (int64_t)v * nr), low_v(L, c)));
            if (tile_vec_loop(L, first, c, low_store(L, acc, add(L, low_i(L, a0), low_v(L, c)), low_load(L, bb, col, at)),
                              nr))
                return low_oom(L);
            if (zb >= 0) {
                LoopExpr *zi = partial_at(L, n, px[r], n0, v * nr, c2, M, N);
                LoopStmt *ld = low_store(L, acc, add(L, low_i(L, a0), low_v(L, c2)), low_load(L, zb, zi, at));
                LoopExpr *zj = partial_at(L, n, px[r], n0, v * nr, c3, M, N);
                LoopStmt *stz = low_store(L, zb, zj, low_load(L, acc, add(L, low_i(L, a0), low_v(L, c3)), at));
                if (tile_vec_loop(L, more, c2, ld, nr) || tile_vec_loop(L, carry, c3, stz, nr))
                    return low_oom(L);
            }
            if (low_vars(L, 1, "c", &c))
                return low_oom(L);
            LoopExpr *ai = add(L, low_i(L, a0), low_v(L, c));
            LoopExpr *bi = add(L, mul(L, add(L, mul(L, low_v(L, nt), K4p), add(L, low_v(L, k0), low_v(L, kk))), nrv),
                               add(L, low_i(L, (int64_t)v * nr), low_v(L, c)));
            if (word_step(L, kb, acc, at, ai, low_v(L, av), low_load(L, wcb, bi, IR_DT_I32), word_dot(q->bf16, q->i16), c, nr))
                return low_oom(L);
        }
    }
    /* the next chunk's weights (the next panel's first after a panel's last) into L2, the MB
     * blocks a share each: else each chunk's first block waited on memory for all of them */
    LoopExpr *next = mul(L, add(L, mul(L, low_v(L, nt), K4p), add(L, low_v(L, k0), low_i(L, KC))), nrv);
    if (tile_prefetch(L, kb, wcb, next, KC * nrv, low_v(L, mt), MB, low_v(L, kk), KC, M))
        return low_oom(L);
    LoopStmt *init = zb < 0 ? first : loop_if(L->p, low_bin(L, LOOP_EQ, low_v(L, kc), low_i(L, 0)), first, more);
    if (!init || low_add(L, tile, init) || low_add(L, tile, low_nest(L, 1, &kk, &KC, kb)))
        return low_oom(L);
    /* the last chunk's stores: channel col's plane at pixel p_r */
    for (int r = 0; r < mr; r++)
        for (int v = 0; v < nv; v++) {
            int c;
            if (low_vars(L, 1, "c", &c))
                return low_oom(L);
            LoopExpr *col = add(L, low_v(L, n0), add(L, low_i(L, (int64_t)v * nr), low_v(L, c)));
            LoopExpr *a = low_load(L, acc, add(L, low_i(L, (int64_t)(r * nv + v) * nr), low_v(L, c)), at);
            LoopExpr *yi = add(L, add(L, mul(L, low_v(L, n), ys[0]), mul(L, loop_expr_copy(L->p, col), ys[1])),
                               low_v(L, px[r]));
            LoopStmt *st = word_store(L, q->y, yi, a, mb, col, low_v(L, n), loop_expr_copy(L->p, col), low_v(L, px[r]), NULL);
            if (tile_vec_loop(L, last, c, st, nr))
                return low_oom(L);
        }
    LoopStmt *fin = zb < 0 ? last
                           : loop_if(L->p, low_bin(L, LOOP_EQ, low_v(L, kc), low_i(L, nch - 1)), last, carry);
    if (!fin || low_add(L, tile, fin))
        return low_oom(L);
    int vars[4] = { n, nt, kc, mt };
    int64_t ext[4] = { w->batch, NT, nch, MB };
    return low_kernel(L, low_nest(L, 4, vars, ext, tile));
}

/* The pixel form's register block into tile (in the nest's variables n, g,
 * mt; LETs p0, the block's first output pixel, and pbase, its words'
 * index in P, rows of ps words a step k4 of the reduction): MR output
 * channels (panel mt of the weights) by NV vectors of nr pixels,
 *   acc[r][v] = bias[co_r];  acc[r][v] += dot(P[pbase + k4 ps + v nr : +nr], Wp[g][mt][k4][r]);
 * stored through the fused members (or requantized by m), the lanes past
 * the plane left unstored when mask.  0, or -1 out of memory. */
static int pixel_block(Low *L, const QConv *q, LoopStmt *tile, int nr, int nv, int mr, int64_t MT, int wqb, int bb,
                       int mb, const float *m, const int64_t *ys, int n, int g, int mt, int p0, int pb, int pbase,
                       int64_t ps, int mask)
{
    IrDType at = q->bf16 ? IR_DT_F32 : IR_DT_I32;           /* the accumulators' type */
    IrShape ash = { .rank = 1, .dims = { (int64_t)mr * nv * nr } };
    int acc = loop_add_buf(L->p, "acc", at, &ash, LOOP_ST_LOCAL), k4;
    LoopStmt *kb = loop_block(L->p);
    if (acc < 0 || !kb || low_vars(L, 1, "k4", &k4))
        return -1;
    /* the block's weight panel: (g, mt)'s K4 x mr words in a row */
    int wpan = low_let(L, tile, "wp", mul(L, add(L, mul(L, low_v(L, g), MT), low_v(L, mt)), q->K4 * mr), 0);
    if (wpan < 0)
        return -1;
    int co[TILE_MAX_MR];
    for (int r = 0; r < mr; r++) {
        LoopExpr *ch = low_bin(L, LOOP_MIN, add(L, mul(L, low_v(L, mt), mr), low_i(L, r)), low_i(L, q->cout - 1));
        if ((co[r] = low_let(L, tile, "co", add(L, mul(L, low_v(L, g), q->cout), ch), 0)) < 0)
            return -1;
        for (int v = 0; v < nv; v++) {
            int c;
            if (low_vars(L, 1, "c", &c))
                return -1;
            LoopStmt *st = low_store(L, acc, add(L, low_i(L, (int64_t)(r * nv + v) * nr), low_v(L, c)),
                                     low_load(L, bb, low_v(L, co[r]), at));
            if (tile_vec_loop(L, tile, c, st, nr))
                return -1;
        }
    }
    /* k step: NV vectors of P, each shared by the MR broadcast weight words */
    for (int r = 0; r < mr; r++) {
        int wv = low_let(L, kb, "w", low_load(L, wqb, add(L, low_v(L, wpan), add(L, mul(L, low_v(L, k4), mr), low_i(L, r))),
                                              IR_DT_I32), 0);
        if (wv < 0)
            return -1;
        for (int v = 0; v < nv; v++) {
            int c;
            if (low_vars(L, 1, "c", &c))
                return -1;
            LoopExpr *ai = add(L, low_i(L, (int64_t)(r * nv + v) * nr), low_v(L, c));
            LoopExpr *pv = low_load(L, pb, add(L, add(L, low_v(L, pbase), mul(L, low_v(L, k4), ps)),
                                               add(L, low_i(L, (int64_t)v * nr), low_v(L, c))), IR_DT_I32);
            if (word_step(L, kb, acc, at, ai, pv, low_v(L, wv), word_dot(q->bf16, q->i16), c, nr))
                return -1;
        }
    }
    int64_t K4 = q->K4;
    if (low_add(L, tile, low_nest(L, 1, &k4, &K4, kb)))
        return -1;
    for (int r = 0; r < mr; r++)
        for (int v = 0; v < nv; v++) {
            int c;
            if (low_vars(L, 1, "c", &c))
                return -1;
            LoopExpr *a = low_load(L, acc, add(L, low_i(L, (int64_t)(r * nv + v) * nr), low_v(L, c)), at);
            LoopExpr *px = add(L, low_v(L, p0), add(L, low_i(L, (int64_t)v * nr), low_v(L, c)));
            LoopExpr *yi = add(L, add(L, mul(L, low_v(L, n), ys[0]), mul(L, low_v(L, co[r]), ys[1])), px);
            LoopStmt *st = word_store(L, q->y, yi, a, m ? mb : -1, low_v(L, co[r]), low_v(L, n), low_v(L, co[r]),
                                      loop_expr_copy(L->p, px), NULL);
            if (st && mask)                       /* the last block's lanes past the plane */
                st = loop_if(L->p, low_bin(L, LOOP_LT, loop_expr_copy(L->p, px), low_i(L, q->M)), st, NULL);
            if (tile_vec_loop(L, tile, c, st, nr))
                return -1;
        }
    return 0;
}

/* The pack and the products in one kernel, a block of PB pixels at a time:
 * the block's words packed into a LOCAL buffer [K4][PB] (at most
 * PACK_BLOCK_BYTES: it stays in L2 while its PB / (NV nr) pixel blocks by
 * the MT channel blocks read it), instead of the whole image's pack
 * written to memory by one kernel and read back by the next (ResNet-18's
 * 7x7 / 2 stem: 3.7 MB of bfloat16 words, 0.44 ms of packing).  A block is
 * R whole output rows (R OW1 a multiple of NV nr), or for a single pack row
 * (a 1x1 plane, a 1-D window) PB pixels of it; the last block starts PB
 * pixels before the end (overlapping the one before: the same values
 * stored twice).  pack_block: PB (0 when no such block fits; then the
 * separate kernels) and R (1 for a single row). */
enum { PACK_BLOCK_BYTES = 196608 };

static int64_t pack_block(const QConv *q, int64_t nrv, int64_t *R)
{
    int64_t row = 4 * q->K4 * q->OW1, most = PACK_BLOCK_BYTES / (4 * q->K4);
    *R = 1;
    if (q->rows > 1) {
        int64_t r0 = 1;
        while (r0 <= q->rows && (r0 * q->OW1) % nrv)
            r0++;
        if (r0 > q->rows || r0 * row > PACK_BLOCK_BYTES || r0 * 2 > q->rows)
            return 0;
        int64_t r = r0 * (PACK_BLOCK_BYTES / (r0 * row)), nb = (q->rows + r - 1) / r;
        r = ((q->rows + nb - 1) / nb + r0 - 1) / r0 * r0;    /* as even as whole r0 allow: the overlap small */
        *R = r < q->rows ? r : q->rows / r0 * r0;
        return *R * q->OW1;
    }
    int64_t unit = nrv % PACK_VW ? nrv * PACK_VW : nrv, pbk = most / unit * unit;    /* whole pieces and blocks */
    if (pbk < unit || pbk * 2 > q->M)
        return 0;
    int64_t nb = (q->M + pbk - 1) / pbk;
    return ((q->M + nb - 1) / nb + unit - 1) / unit * unit;
}

static int conv_fused(Low *L, QConv *q, int nr, int nv, int mr, int64_t MT, int wqb, int bb, int mb, const float *m,
                      const int64_t *ys, int64_t R, int64_t PB)
{
    const IrWindow *w = &q->w;
    int64_t nrv = (int64_t)nr * nv, M = q->M;
    int one = q->rows == 1;
    int64_t NB = one ? (M + PB - 1) / PB : (q->rows + R - 1) / R;
    int64_t VW = q->OW1 <= PACK_VW ? q->OW1 : PACK_VW, nq = one ? PB / VW : (q->OW1 + VW - 1) / VW;
    IrShape psh = { .rank = 1, .dims = { q->K4 * PB } };
    int pl = loop_add_buf(L->p, "packed_x_rows", IR_DT_I32, &psh, LOOP_ST_LOCAL);
    int n, g, b, k4, r, qv, c, pt, mt;
    LoopStmt *body = loop_block(L->p), *pk = loop_block(L->p), *tile = loop_block(L->p);
    if (pl < 0 || !body || !pk || !tile || low_vars(L, 1, "n", &n) || low_vars(L, 1, "g", &g) ||
        low_vars(L, 1, "b", &b) || low_vars(L, 1, "k4", &k4) || low_vars(L, 1, "r", &r) || low_vars(L, 1, "q", &qv) ||
        low_vars(L, 1, "c", &c) || low_vars(L, 1, "pt", &pt) || low_vars(L, 1, "mt", &mt))
        return low_oom(L);
    /* the block's first pixel (a single row) or row */
    int64_t last = one ? M - PB : q->rows - R;
    int s0 = low_let(L, body, one ? "px0" : "row0", low_bin(L, LOOP_MIN, mul(L, low_v(L, b), one ? PB : R), low_i(L, last)), 0);
    if (s0 < 0)
        return low_oom(L);
    /* the pack: pieces of VW lanes (a row's last overlapping) of rows s0 .. s0 + R - 1, or of pixels s0 .. s0 + PB - 1 */
    int oh = low_let(L, pk, "oh", one ? low_i(L, 0) : add(L, low_v(L, s0), low_v(L, r)), 0);
    LoopExpr *ow0e = one ? add(L, low_v(L, s0), mul(L, low_v(L, qv), VW))
                         : low_bin(L, LOOP_MIN, mul(L, low_v(L, qv), VW), low_i(L, q->OW1 - VW));
    int ow0 = oh < 0 ? -1 : low_let(L, pk, "ow0", ow0e, 0);
    if (ow0 < 0)
        return low_oom(L);
    LoopExpr *dst = add(L, mul(L, low_v(L, k4), PB),
                        one ? add(L, mul(L, low_v(L, qv), VW), low_v(L, c))
                            : add(L, mul(L, low_v(L, r), q->OW1), add(L, low_v(L, ow0), low_v(L, c))));
    LoopStmt *st = low_store(L, pl, dst, pack_word(L, q, n, g, k4, oh, ow0, c));
    if (!st || tile_vec_loop(L, pk, c, st, (int)VW))
        return low_oom(L);
    int pvars[3] = { k4, r, qv };
    int64_t pext[3] = { q->K4, R, nq };
    if (low_add(L, body, low_nest(L, 3, pvars, pext, pk)))
        return low_oom(L);
    /* the products: the block's pixel blocks by the channel blocks */
    int p0 = low_let(L, tile, "p0", add(L, one ? low_v(L, s0) : mul(L, low_v(L, s0), q->OW1), mul(L, low_v(L, pt), nrv)), 0);
    int pbase = p0 < 0 ? -1 : low_let(L, tile, "pb", mul(L, low_v(L, pt), nrv), 0);
    if (pbase < 0 || pixel_block(L, q, tile, nr, nv, mr, MT, wqb, bb, mb, m, ys, n, g, mt, p0, pl, pbase, PB, 0))
        return low_oom(L);
    int tvars[2] = { pt, mt };
    int64_t text[2] = { PB / nrv, MT };
    if (low_add(L, body, low_nest(L, 2, tvars, text, tile)))
        return low_oom(L);
    int vars[3] = { n, g, b };
    int64_t ext[3] = { w->batch, q->G, NB };
    return low_kernel(L, low_nest(L, 3, vars, ext, body));
}

static int conv_blocks(Low *L, QConv *q, int bits, int32_t *wq, void *bias, float *m)
{
    const IrWindow *w = &q->w;
    int S = w->rank;
    int64_t C = w->channels_out;
    /* the blocks: NR lanes, NV vectors of pixels by MR channels */
    int nr = bits / 32, nvmax = bits >= 512 ? 4 : 2, nv = nvmax, mr = 6;
    if (q->M < nr)
        return 1;
    for (int k = nvmax - 1; k >= 2; k--)        /* the fewest idle lanes in the last block, the wider on a tie */
        if (tile_idle(q->M, (int64_t)k * nr) < tile_idle(q->M, (int64_t)nv * nr))
            nv = k;
    if (q->cout < mr)
        mr = (int)q->cout;
    int nrv = nv * nr;
    q->Mp = (q->M + nrv - 1) / nrv * nrv;
    /* pack rows: the plane of a 1x1 window, else rows of OW */
    int64_t ys[IR_MAX_RANK], xs[IR_MAX_RANK];
    low_strides(L, q->y, ys);
    low_strides(L, q->x, xs);
    q->flat = 1;
    for (int i = 0; i < S; i++)
        q->flat &= w->kernel[i] == 1 && w->stride[i] == 1 && w->pad_begin[i] == 0 && w->pad_end[i] == 0;
    q->flat &= S == 1 || xs[2] == w->in[1];
    q->rows = q->flat || S == 1 ? 1 : w->out[0];
    q->OW1 = q->flat ? q->M : w->out[S - 1];
    if (ys[S + 1] != 1 || (S == 2 && ys[2] != w->out[1]) || xs[S + 1] != 1)
        return 1;
    int cnv, cmr;
    if (channel_form(q, nr, nvmax, nv, &cnv, &cmr)) {
        if (!q->flat && pad_for_pack(L, q) < 0)
            return -1;
        return chan_blocks(L, q, bits, wq, bias, m, ys, cnv, cmr);
    }
    int dw = q->cin == 1 && q->cout == 1 && q->G > 1 && !q->flat && S == 2 && !q->bf16 &&
             4 * q->K4 * w->out[1] <= DW_PACK_BYTES;      /* a row's words fit the local buffer */
    int64_t MT = (q->cout + mr - 1) / mr;
    if (!dw && !(wq = weight_panels(L, q, wq, mr, MT)))
        return low_oom(L);
    IrShape wsh = { .rank = 1, .dims = { dw ? C * q->K4 : q->G * MT * q->K4 * mr } }, csh = { .rank = 1, .dims = { C } };
    IrDType at = q->bf16 ? IR_DT_F32 : IR_DT_I32;           /* the accumulators' type */
    int wqb = loop_add_buf(L->p, q->bf16 ? "bweights" : "qweights", IR_DT_I32, &wsh, LOOP_ST_CONST);
    int bb = wqb < 0 ? -1 : loop_add_buf(L->p, q->bf16 ? "bbias" : "qbias", at, &csh, LOOP_ST_CONST);
    int mb = bb < 0 || !m ? -1 : loop_add_buf(L->p, "qmul", IR_DT_F32, &csh, LOOP_ST_CONST);
    if (bb < 0 || (m && mb < 0))
        return low_oom(L);
    L->p->bufs[wqb].data = wq;
    L->p->bufs[bb].data = bias;
    if (m)
        L->p->bufs[mb].data = m;
    if (!q->flat && pad_for_pack(L, q) < 0)
        return -1;
    if (dw)
        return dw_kernel(L, q, nr, nv, wqb, bb, mb, m, ys);
    int64_t R, PB = pack_block(q, nrv, &R);
    if (PB)
        return conv_fused(L, q, nr, nv, mr, MT, wqb, bb, mb, m, ys, R, PB);
    IrShape psh = { .rank = 1, .dims = { w->batch * q->G * q->K4 * q->Mp } };
    int pb = loop_add_buf(L->p, "packed_x", IR_DT_I32, &psh, LOOP_ST_WORKSPACE);
    if (pb < 0)
        return low_oom(L);
    if (pack_kernel(L, q, pb))
        return -1;
    /* the compute kernel: n, g, pixel block pt, channel block mt */
    int n, g, pt, mt;
    LoopStmt *tile = loop_block(L->p);
    if (!tile || low_vars(L, 1, "n", &n) || low_vars(L, 1, "g", &g) || low_vars(L, 1, "pt", &pt) ||
        low_vars(L, 1, "mt", &mt))
        return low_oom(L);
    int p0 = low_let(L, tile, "p0", mul(L, low_v(L, pt), nrv), 0);
    int pbase = p0 < 0 ? -1
                       : low_let(L, tile, "pb", add(L, mul(L, add(L, mul(L, low_v(L, n), q->G), low_v(L, g)), q->K4 * q->Mp),
                                                    low_v(L, p0)), 0);
    if (pbase < 0 || pixel_block(L, q, tile, nr, nv, mr, MT, wqb, bb, mb, m, ys, n, g, mt, p0, pb, pbase, q->Mp,
                                 q->Mp != q->M))
        return low_oom(L);
    int vars[4] = { n, g, pt, mt };
    int64_t ext[4] = { w->batch, q->G, (q->M + nrv - 1) / nrv, MT };
    return low_kernel(L, low_nest(L, 4, vars, ext, tile));
}

int tile_qconv(Low *L)
{
    const LowSchedule *s = L->s;
    if (!s || (s->dot_i8 < 128 && s->dot_i16 < 256) || s->tile_nr <= 0 || L->fuse_n || L->n->n_out != 1)
        return 1;
    QConv q = { .x = low_in(L, 0), .y = low_out(L, 0), .i16 = s->dot_i8 < 128 };
    int wb = low_in(L, 3);
    if (q.x < 0 || q.y < 0 || wb < 0)
        return L->oom ? low_oom(L) : 1;
    if (ir_window(L->g, L->n, &low_buf(L, q.x)->shape, &low_buf(L, wb)->shape, &q.w, L->d) != 0)
        return -1;
    const IrWindow *w = &q.w;
    int S = w->rank;
    if (!window_ok(w))
        return 1;
    q.G = w->group;
    q.cin = w->channels_in / q.G;
    q.cout = w->channels_out / q.G;
    int64_t C = w->channels_out, taps = 1, one = 1;
    for (int i = 0; i < S; i++) {
        taps *= w->kernel[i];
        one &= w->in[i] == 1 && w->out[i] == 1 && w->kernel[i] == 1;
    }
    q.K = q.cin * taps;
    int E = q.i16 ? 2 : 4;
    q.K4 = (q.K + E - 1) / E;
    q.M = S == 2 ? w->out[0] * w->out[1] : w->out[0];
    float *m;
    int64_t cz;
    int qo = q_operands(L, C * q.K, C, q.i16, &m, &cz, NULL);
    if (qo)
        return qo;
    q.xs_signed = low_buf(L, q.x)->dtype == IR_DT_I8;
    const int32_t *bq = low_has(L, 8) ? known(L, 8, IR_DT_I32, C) : NULL;
    if (low_has(L, 8) && !bq)
        return 1;
    const int8_t *wt = known(L, 3, IR_DT_I8, C * q.K);
    if (one && q.G == 1 && plain(low_buf(L, q.x)) && plain(low_buf(L, q.y))) {
        /* one pixel an image (a Gemm's rows): the images are the rows */
        QRows qr = { .a = q.x, .y = q.y, .R = w->batch, .K = q.K, .K4 = q.K4, .N = C, .w = wt, .w_nk = 1,
                     .xs_signed = q.xs_signed, .cz = cz, .bq = bq, .b_rt = -1, .G = 1, .i16 = q.i16 };
        return qrows(L, &qr, m);
    }
    q.xz = cz - (q.xs_signed && !q.i16 ? 128 : 0);
    q.pad_tail = q.xs_signed && !q.i16 ? -128 : 0;
    /* constants: weight words, bias', multipliers; accumulator bound */
    int32_t *wq = util_arena_array(&L->p->arena, (size_t)(C * q.K4), sizeof *wq);
    int32_t *bias = util_arena_array(&L->p->arena, (size_t)C, sizeof *bias);
    if (!wq || !bias)
        return low_oom(L);
    for (int64_t co = 0; co < C; co++) {
        int64_t sw = 0;
        for (int64_t k4 = 0; k4 < q.K4; k4++) {
            uint32_t word = 0;
            for (int j = 0; j < E; j++) {       /* bytes, or int16 halves */
                int64_t k = E * k4 + j;
                int8_t b = k < q.K ? wt[co * q.K + k] : 0;
                word |= (uint32_t)(E == 4 ? (uint8_t)b : (uint16_t)b) << (32 / E * j);
                sw += b;
            }
            wq[co * q.K4 + k4] = (int32_t)word;
        }
        double bd = (bq ? (double)bq[co] : 0.0) - (double)cz * (double)sw;
        if (fabs(bd) + (double)q.K * 255 * 128 >= 2147483647.0)
            return 1;
        bias[co] = (int32_t)bd;
    }
    return conv_blocks(L, &q, q.i16 ? s->dot_i16 : s->dot_i8, wq, bias, m);
}

/* ------------------------------------------------------------ bfloat16
 *
 * --precision bf16 (LowSchedule.bf16): a float32 Conv's and MatMul's /
 * Gemm's products by constant weights on words of two bfloat16, the
 * activations rounded to bfloat16 as they are packed (bf16pack), the weights
 * at compile time (bf16_of: the same rounding), float32 accumulators
 * (dot2bf) starting at the float32 bias, the result through the fused
 * members. */

/* The weight words of C rows of K float32 weights (row c at w + c*K). */
int32_t *tile_bf16_words(Low *L, const float *w, int64_t C, int64_t K, int64_t K2)
{
    int32_t *wq = util_arena_array(&L->p->arena, (size_t)(C * K2), sizeof *wq);
    for (int64_t c = 0; wq && c < C; c++)
        for (int64_t k2 = 0; k2 < K2; k2++) {
            uint32_t lo = bf16_of(w[c * K + 2 * k2]), hi = 2 * k2 + 1 < K ? bf16_of(w[c * K + 2 * k2 + 1]) : 0;
            wq[c * K2 + k2] = (int32_t)(lo | hi << 16);
        }
    return wq;
}

/* The shortest reduction a convolution takes to bfloat16 words: below it
 * the pack and the words' conversions cost more than VDPBF16PS saves, and
 * the float32 pointwise form fuses with the depthwise layer after it
 * (MobileNetV2's 16- to 32-channel expansions). */
enum { BF16_MIN_K = 64 };

int tile_bconv(Low *L)
{
    const LowSchedule *s = L->s;
    if (!s || s->bf16 < 256 || s->tile_nr <= 0 || L->n->n_out != 1)
        return 1;
    QConv q = { .x = low_in(L, 0), .y = low_out(L, 0), .bf16 = 1 };
    int wb = low_in(L, 1);
    if (q.x < 0 || q.y < 0 || wb < 0)
        return L->oom ? low_oom(L) : 1;
    if (low_buf(L, q.x)->dtype != IR_DT_F32 || low_buf(L, q.y)->dtype != IR_DT_F32 || loop_buf_has_halo(low_buf(L, q.y)))
        return 1;
    if (ir_window(L->g, L->n, &low_buf(L, q.x)->shape, &low_buf(L, wb)->shape, &q.w, L->d) != 0)
        return -1;
    const IrWindow *w = &q.w;
    int S = w->rank;
    if (!window_ok(w))
        return 1;
    q.G = w->group;
    q.cin = w->channels_in / q.G;
    q.cout = w->channels_out / q.G;
    int64_t C = w->channels_out, taps = 1;
    for (int i = 0; i < S; i++)
        taps *= w->kernel[i];
    q.K = q.cin * taps;
    q.K4 = (q.K + 1) / 2;
    q.M = S == 2 ? w->out[0] * w->out[1] : w->out[0];
    const float *wt = known(L, 1, IR_DT_F32, C * q.K), *bk = low_has(L, 2) ? known(L, 2, IR_DT_F32, C) : NULL;
    if (!wt || (low_has(L, 2) && !bk) || q.cin < 2)      /* depthwise: a channel's few taps, the float forms */
        return 1;
    if (q.K < BF16_MIN_K)
        return 1;
    if (S == 2 && tile_wino_pays(s, w))
        return 1;      /* Winograd's float32 F(2x2, 3x3) does 2.25x fewer products: faster than bfloat16 words */
    int32_t *wq = tile_bf16_words(L, wt, C, q.K, q.K4);
    float *bias = util_arena_array(&L->p->arena, (size_t)C, sizeof *bias);
    if (!wq || !bias)
        return low_oom(L);
    for (int64_t c = 0; c < C; c++)
        bias[c] = bk ? bk[c] : 0.0f;
    return conv_blocks(L, &q, s->bf16, wq, bias, NULL);
}

/* A float32 MatMul / Gemm operand pair for the rows: A (slot 0) of rows of K
 * (plain), B (slot 1) a constant 2-D float32 [K][N] ([N][K] when nk), the
 * output plain.  1 when it does not qualify. */
static int bf16_rows(Low *L, QRows *q, int nk)
{
    const LowSchedule *s = L->s;
    if (!s || s->bf16 < 256 || s->tile_nr <= 0 || L->n->n_out != 1)
        return 1;
    int a = low_in(L, 0), b = low_in(L, 1), y = low_out(L, 0);
    if (a < 0 || b < 0 || y < 0)
        return L->oom ? low_oom(L) : 1;
    const IrShape as = low_buf(L, a)->shape, bs = low_buf(L, b)->shape;
    if (as.rank < 2 || bs.rank < 2 || low_buf(L, a)->dtype != IR_DT_F32 || low_buf(L, b)->dtype != IR_DT_F32 ||
        low_buf(L, y)->dtype != IR_DT_F32 || !plain(low_buf(L, a)) || !plain(low_buf(L, y)))
        return 1;
    const float *wf = known(L, 1, IR_DT_F32, -1);
    int rt = !wf;                    /* B at run time: a MatMul of A [G][R][K] by B [G][K][N] (or [K][N]) */
    if (rt && nk)
        return 1;
    *q = (QRows){ .a = a, .y = y, .K = bs.dims[bs.rank - (nk ? 1 : 2)], .N = bs.dims[bs.rank - (nk ? 2 : 1)],
                  .w_nk = nk, .bf16 = 1, .wf = wf, .b_rt = rt ? b : -1 };
    if (rows_shape(L, q, &as, &bs) || q->K < 8)
        return 1;
    q->K4 = (q->K + 1) / 2;
    return 0;
}

int tile_bmatmul(Low *L)
{
    QRows q;
    int r = bf16_rows(L, &q, 0);
    return r ? r : qrows(L, &q, NULL);
}

int tile_bgemm(Low *L)
{
    if (ir_attr_int(L->n, IR_A_transA) != 0 || ir_attr_float(L->n, IR_A_alpha) != 1)
        return 1;
    QRows q;
    int r = bf16_rows(L, &q, ir_attr_int(L->n, IR_A_transB) != 0);
    if (r)
        return r;
    if (q.b_rt >= 0)
        return 1;
    if (low_has(L, 2)) {             /* C: beta 1, a constant per column (or one value) */
        const IrArray *c = low_known(L, 2);
        int64_t nc = c ? ir_array_numel(c) : 0;
        if (!c || c->dtype != IR_DT_F32 || ir_attr_float(L->n, IR_A_beta) != 1 || (nc != 1 && nc != q.N) ||
            (nc == q.N && c->shape.rank == 2 && c->shape.dims[0] != 1))
            return 1;
        float *bf = util_arena_array(&L->p->arena, (size_t)q.N, sizeof *bf);
        if (!bf)
            return low_oom(L);
        for (int64_t n = 0; n < q.N; n++)
            bf[n] = ((const float *)c->data)[nc == 1 ? 0 : n];
        q.bf = bf;
    }
    return qrows(L, &q, NULL);
}
