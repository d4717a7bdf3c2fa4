/* lower/tile/block.c — the helpers every register-blocked template of
 * lower/tile/ builds with (tile_impl.h): a block's vector accumulators, its
 * rows over output channels, stores of its rows through the fused members
 * and the output's halo, the weights' prefetch, reading an input in place
 * or through a padded copy, tables and masks.  The templates call these;
 * nothing here calls a template. */
#include "lower/tile/tile_impl.h"

#include <math.h>
#include <string.h>

/* for c < NR VECTORIZED: acc[r*NR + c] = v(c) appended to blk. */
int tile_vec_loop(Low *L, LoopStmt *blk, int c, LoopStmt *body, int nr)
{
    LoopStmt *f = loop_for(L->p, c, low_i(L, nr), LOOP_VECTORIZED, body);
    if (!f)
        return low_oom(L);
    f->u.loop.factor = nr;
    return low_add(L, blk, f);
}

/* A block's accumulators (a LOCAL [MR][NR] buffer), its body and its
 * k-step body. */
int tile_block_start(Low *L, int mr, int nr, int *acc, LoopStmt **tile, LoopStmt **kb)
{
    IrShape sh = { .rank = 1, .dims = { (int64_t)mr * nr } };
    *acc = loop_add_buf(L->p, "acc", IR_DT_F32, &sh, LOOP_ST_LOCAL);
    *tile = loop_block(L->p);
    *kb = loop_block(L->p);
    return *acc < 0 || !*tile || !*kb ? -1 : 0;
}

/* The block's accumulators are row-major [MR][NR]: element (r, lane c). */
LoopExpr *tile_acc_at(Low *L, int acc, int r, int nr, int c)
{
    return low_load(L, acc, add(L, low_i(L, (int64_t)r * nr), low_v(L, c)), IR_DT_F32);
}

/* acc[r][:] = v (v uniform, or built over lane c). */
int tile_acc_set(Low *L, LoopStmt *blk, int acc, int r, int nr, int c, LoopExpr *v)
{
    LoopStmt *st = low_store(L, acc, add(L, low_i(L, (int64_t)r * nr), low_v(L, c)), v);
    return tile_vec_loop(L, blk, c, st, nr);
}

/* acc[r][:] += a * b (a uniform: a broadcast; b over lane c: a vector);
 * op LOOP_MAX instead: acc[r][:] = max(acc[r][:], b). */
int tile_acc_update(Low *L, LoopStmt *blk, int acc, int r, int nr, int c, LoopBinOp op, LoopExpr *a, LoopExpr *b)
{
    LoopExpr *old = tile_acc_at(L, acc, r, nr, c);
    /* max(tap, acc), the tap first: max is NaN-propagating (a NaN operand wins), which the code
     * generator emits as (tap > acc ? tap : acc) then tap where tap is NaN — one max instruction and
     * a blend on the accumulator's chain, the NaN test off it (acc first: two compares, a mask OR
     * and a blend, about twice the latency per tap) */
    LoopExpr *v = op == LOOP_MAX ? low_bin(L, LOOP_MAX, b, old) : add(L, old, low_bin(L, LOOP_MUL, a, b));
    return tile_acc_set(L, blk, acc, r, nr, c, v);
}

/* Does a block of mr rows of nr lanes leave LLVM no vector register to
 * spare (its accumulators, the nr lanes of B and a broadcast in 16
 * registers: AVX2's MR 6 x two registers)?  Then its k loop is kept rolled:
 * unrolled by LLVM, the next step's B loads are scheduled before the last
 * multiply-adds and one accumulator goes to the stack, a store and a load
 * on its chain every step (wav2letter's 512 x 128 x 16 layer at 43 GFLOPS
 * instead of 79 on Zen 3). */
int tile_regs_tight(const LowSchedule *s, int mr, int nr)
{
    int lanes = s->vector_bits / 32, regs = s->tile_nr >= 32 ? 32 : 16;
    if (lanes <= 0)
        return 0;
    int per = (nr + lanes - 1) / lanes;
    return mr * per + per + 1 >= regs - 1;
}

/* Multi-index of the row-major position `pos` of dims[0..rank) (div / mod). */
static void unflatten(Low *L, LoopExpr *pos, const int64_t *dims, int rank, LoopExpr **idx)
{
    int64_t below = 1;
    for (int i = rank - 1; i >= 0; i--) {
        LoopExpr *o = loop_expr_copy(L->p, pos);
        if (below > 1)
            o = low_bin(L, LOOP_DIV, o, low_i(L, below));
        if (i > 0)
            o = low_bin(L, LOOP_MOD, o, low_i(L, dims[i]));
        idx[i] = o;
        below *= dims[i];
    }
}

/* The store of an output element through the fused members (lower/fused.c):
 * at its flat row-major index `flat` when every member operand can be read
 * there (the usual Relu / Clip / residual Add), else at its multi-index:
 * (n, channel, the spatial position `pos` unflattened) for a Conv-shaped
 * output (chan != NULL), or `pos` unflattened over the leading dims then
 * `col` for a MatMul-shaped one. */
LoopStmt *tile_out_store(Low *L, LoopExpr *flat, LoopExpr *n, LoopExpr *chan, LoopExpr *pos, LoopExpr *col,
                         LoopExpr *const *sp, LoopExpr *v)
{
    const LoopBuf *yb = low_buf(L, low_out(L, 0));
    /* flat: the members' operands are read at the output's flat index, which
     * a halo'd output's is not (unless nothing is fused) */
    if (low_fused_flat_ok(L) && (!loop_buf_has_halo(yb) || !L->fuse_n))
        return low_fused_store_flat(L, flat, v);
    LoopExpr *idx[IR_MAX_RANK];
    int r = yb->shape.rank;
    if (chan) {
        idx[0] = n;
        idx[1] = chan;
        if (sp)
            for (int i = 2; i < r; i++)
                idx[i] = sp[i - 2];
        else
            unflatten(L, pos, yb->shape.dims + 2, r - 2, idx + 2);
    } else {
        if (r > 1)
            unflatten(L, pos, yb->shape.dims, r - 1, idx);
        idx[r - 1] = col;
    }
    return low_fused_store(L, 0, idx, v);
}

/* The kernel's nest vars[0..n) around tile, with threads: the loop vars[k]
 * (pixel rows) cut into T parts, outermost, each part a range of
 * consecutive iterations (v = part * Q + q, Q = ceil(E / T), run while
 * v < E: the parts are disjoint).  The part loop is the kernel's parallel
 * loop, and task t of the region takes part t (codegen/parallel.c), so the
 * task reads the rows its task of the layer before wrote: its input in its
 * own core's cache instead of half of it in the other core's. */
int64_t tile_part_len(const Low *L, int64_t E)
{
    int64_t T = L->s->threads;
    return T <= 1 || E < 2 * T ? E : (E + T - 1) / T;
}

#define CACHED_MODEL_BYTES (2 << 20)    /* a core's L2 on the machines measured */

int tile_weights_cached(const Low *L)
{
    const IrGraph *g = L->g;
    int64_t b = 0;                       /* (a constant read by two nodes counts twice) */
    for (int i = 0; i < g->n_nodes; i++)
        for (int k = 0; !g->nodes[i].dead && k < g->nodes[i].n_in; k++) {
            int t = g->nodes[i].in[k];
            if (t >= 0 && g->tensors[t].kind == IR_TK_CONST && g->tensors[t].v.data)
                b += ir_array_bytes(&g->tensors[t].v);
        }
    return b <= CACHED_MODEL_BYTES;
}

/* Weights fetched into L2 ahead of use.  When nblk blocks in a row read the
 * same len weights (a GEMM panel, K x NR packed, read by the mt_n blocks of
 * its column; a pointwise block's MR rows of W, read by its pixel blocks),
 * the first of them used to wait on memory for all of it: a 7x7 map's GEMM
 * (ResNet-18's 4608 x 32 panels, 590 KB, against 7 blocks of compute;
 * layer4's 3x3 convs 1800 -> 1360 us).  Instead block blk, one prefetch a
 * step k of its K, fetches the slice of the next weights (from element
 * next) beginning at blk * len/nblk, S = ceil(len / (nblk K)) elements a
 * step: the nblk blocks cover the next weights at an even rate.  Past the
 * last weights it fetches past the buffer: a prefetch reads nothing.  Only
 * when the blocks cover at most PREFETCH_MAX_ROWS rows (pixels): memory
 * time is ~ 20/rows of the compute (16-18 GB/s against ~200 GFLOPS a core),
 * so with more rows the prefetch is two instructions a step for nothing
 * (ResNet-18's stem, 12544 rows, ran 6% slower with it).  Nor for a
 * layer's weights of at most PREFETCH_MIN_BYTES in a model whose weights
 * fit the L2: in cache from the call before (DS-CNN's 64 -> 64 pointwise
 * layers, 16 KB: the model -1.8%, MobileNetV1-0.25 -0.9%, alternating
 * runs; MobileNetV2's, whose 14 MB of weights go through the cache each
 * call, measured up to 3% slower without). */
#define PREFETCH_MAX_ROWS 1024
#define PREFETCH_MIN_BYTES (32 << 10)
int tile_prefetch(Low *L, LoopStmt *kb, int buf, LoopExpr *next, int64_t len, LoopExpr *blk, int64_t nblk,
                  LoopExpr *k, int64_t K, int64_t rows)
{
    const LoopBuf *B = low_buf(L, buf);
    if (!L->s->prefetch || nblk < 2 || rows > PREFETCH_MAX_ROWS ||
        (ir_shape_numel(&B->shape) * (int64_t)ir_dtype_size(B->dtype) <= PREFETCH_MIN_BYTES && tile_weights_cached(L)))
        return 0;
    int64_t S = (len + nblk * K - 1) / (nblk * K);
    LoopExpr *at = add(L, next, add(L, mul(L, blk, len / nblk), mul(L, k, S)));
    return low_add(L, kb, loop_prefetch(L->p, buf, at));
}

/* The fill of padded buffer xp around its interior (each plane of Hp x Wp,
 * rank-1 windows Hp = 1; the interior H x W at row pt, column pl): per
 * plane the stretch before the first interior element, the Wp - W between
 * consecutive interior rows (a row's right pad and the next one's left),
 * and the stretch after the last interior element.  Only the halo is
 * written: filling the whole buffer before the copy wrote each interior
 * element twice (MobileNetV2 --precision bf16: 5% of the time in memset).
 * Its element count. */
static int64_t pad_fill(Low *L, LoopStmt *k, int xp, int64_t planes, int64_t Hp, int64_t Wp, int64_t pt, int64_t pl,
                        int64_t H, int64_t W, double fill)
{
    int64_t P = Hp * Wp, first = pt * Wp + pl, gap = Wp - W, last = P - ((pt + H - 1) * Wp + pl + W), n = 0;
    struct { int64_t start, rows, len; } part[3] = {
        { 0, 1, first }, { pt * Wp + pl + W, H - 1, gap }, { (pt + H - 1) * Wp + pl + W, 1, last },
    };
    for (int i = 0; i < 3; i++) {
        if (part[i].rows < 1 || part[i].len < 1)
            continue;
        int v[3];
        if (low_vars(L, 3, "i", v))
            return low_oom(L);
        LoopExpr *at = add(L, add(L, mul(L, low_v(L, v[0]), P), mul(L, low_v(L, v[1]), Wp)),
                           add(L, low_v(L, v[2]), low_i(L, part[i].start)));
        int64_t ext[3] = { planes, part[i].rows, part[i].len };
        if (low_add(L, k, low_nest(L, 3, v, ext, low_store(L, xp, at, low_const(L, low_buf(L, xp)->dtype, fill)))))
            return low_oom(L);
        n += planes * part[i].rows * part[i].len;
    }
    return n;
}

/* xp = x (of its dtype) padded with `fill` by the window's pads, the last dim by `extra`
 * more, the one before by `extra_h` more, and `slack` elements allocated
 * past the end (strided vector loads): one kernel, the halo's fill
 * (pad_fill) then the input copied inside, which prepares the window
 * kernel's input (so with threads it is split between them like that
 * kernel, not run by one task while the other waits: SqueezeNet's four
 * 13x13 copies 25 -> 18 us at 2 threads). */
int tile_pad_input(Low *L, int x, const IrWindow *w, int64_t extra_h, int64_t extra, int slack, double fill)
{
    const IrShape xs = low_buf(L, x)->shape;     /* a copy: adding a buffer may move them */
    IrShape sh = xs;
    for (int i = 0; i < w->rank; i++)
        sh.dims[2 + i] += w->pad_begin[i] + w->pad_end[i] + (i == w->rank - 1 ? extra : 0) +
                          (i == w->rank - 2 ? extra_h : 0);
    IrDType dt = low_buf(L, x)->dtype;
    int xp = loop_add_buf(L->p, "padded", dt, &sh, LOOP_ST_WORKSPACE);
    int v[IR_MAX_RANK];
    if (xp < 0 || low_vars(L, sh.rank, "i", v))
        return low_oom(L);
    L->p->bufs[xp].slack = slack;
    L->p->bufs[xp].bytes += (int64_t)slack * (int64_t)ir_dtype_size(dt);
    int r = sh.rank, two = w->rank == 2;
    int64_t Wp = sh.dims[r - 1], Hp = two ? sh.dims[r - 2] : 1, W = xs.dims[r - 1], H = two ? xs.dims[r - 2] : 1;
    LoopStmt *k = loop_block(L->p);
    if (!k)
        return low_oom(L);
    int64_t filled = w->rank > 2 ? pad_fill(L, k, xp, 1, 1, ir_shape_numel(&sh), 0, 0, 1, 0, fill) /* all of it */
                                 : pad_fill(L, k, xp, ir_shape_numel(&sh) / (Hp * Wp), Hp, Wp, two ? w->pad_begin[0] : 0,
                                            w->pad_begin[w->rank - 1], H, W, fill);
    if (filled < 0)
        return -1;
    LoopExpr *src[IR_MAX_RANK], *dst[IR_MAX_RANK];
    for (int i = 0; i < sh.rank; i++) {
        src[i] = low_v(L, v[i]);
        dst[i] = i >= 2 && w->pad_begin[i - 2] ? add(L, low_v(L, v[i]), low_i(L, w->pad_begin[i - 2])) : low_v(L, v[i]);
    }
    LoopStmt *st = low_store(L, xp, low_index(L, xp, dst), low_load(L, x, low_index(L, x, src), dt));
    if (!st || low_add(L, k, low_nest(L, sh.rank, v, xs.dims, st)) || low_kernel_prepares(L, k, filled + ir_shape_numel(&xs)))
        return low_oom(L);
    return xp;
}

/* Rows of a block over output channels: co_r = g*C + min(t*MR + r, C-1)
 * (LETs, into co[]), each row's accumulators starting at bias[co_r] (bias
 * buffer bb; -1: zero). */
int tile_channel_rows(Low *L, LoopStmt *tile, int acc, int mr, int nr, int g, int t, int64_t cout, int bb, int *co)
{
    for (int r = 0; r < mr; r++) {
        LoopExpr *cv = low_bin(L, LOOP_MIN, add(L, mul(L, low_v(L, t), mr), low_i(L, r)), low_i(L, cout - 1));
        int c;
        if ((co[r] = low_let(L, tile, "co", add(L, mul(L, low_v(L, g), cout), cv), 0)) < 0 || low_vars(L, 1, "c", &c))
            return -1;
        LoopExpr *b0 = bb >= 0 ? low_load(L, bb, low_v(L, co[r]), IR_DT_F32) : low_const(L, IR_DT_F32, 0);
        if (tile_acc_set(L, tile, acc, r, nr, c, b0))
            return -1;
    }
    return 0;
}

/* With L->halo_cols_store, the block of a row that reaches its end, [ow0,
 * ow0 + nr) with ow0 + nr >= OW, also stores the halo columns after it (the
 * next row's first): y[row + OW + j] = fill, j < halo_cols. */
int tile_halo_cols(Low *L, LoopStmt *tile, LoopExpr *row, LoopExpr *ow0, int nr, int64_t OW)
{
    if (!L->halo_cols_store)
        return 0;
    const LoopBuf *Y = low_buf(L, low_out(L, 0));
    int j;
    if (low_vars(L, 1, "hc", &j))
        return -1;
    LoopStmt *st = low_store(L, low_out(L, 0), add(L, add(L, row, low_i(L, OW)), low_v(L, j)),
                             low_const(L, Y->dtype, Y->halo_fill));
    int64_t hc = Y->halo_cols;
    LoopStmt *cols = st ? low_nest(L, 1, &j, &hc, st) : NULL;
    LoopExpr *last = low_bin(L, LOOP_LE, low_i(L, OW), add(L, ow0, low_i(L, nr)));
    L->halo_stores++;
    return !cols || !last || low_add(L, tile, loop_if(L->p, last, cols, NULL)) ? -1 : 0;
}

/* The stretches of the output's halo before channels (n, co[r]), r < mr,
 * (low_halo_take_rows: `lead` elements before each one's element 0), and
 * after the last channel's end when co[mr - 1] is the last channel of the
 * last image, stored in the block that runs first for those channels: when
 * `first` holds. */
int tile_halo_rows(Low *L, LoopStmt *tile, LoopExpr *first, int n, const int *co, int mr, int64_t lead)
{
    int y = low_out(L, 0);
    const LoopBuf *Y = low_buf(L, y);
    int64_t C = Y->shape.dims[1], nc = Y->shape.dims[0] * C, cs = Y->strides[1];
    LoopStmt *b = loop_block(L->p);
    if (!b)
        return -1;
    for (int r = 0; r <= mr; r++) {
        int j;
        if (low_vars(L, 1, "hr", &j))
            return -1;
        LoopExpr *plane = r < mr ? add(L, mul(L, low_v(L, n), C), low_v(L, co[r])) : low_i(L, nc);
        LoopStmt *st = low_store(L, y, add(L, low_bin(L, LOOP_SUB, mul(L, plane, cs), low_i(L, lead)), low_v(L, j)),
                                 low_const(L, Y->dtype, Y->halo_fill));
        LoopStmt *nest = st ? low_nest(L, 1, &j, &lead, st) : NULL;
        if (nest && r == mr)
            nest = loop_if(L->p, low_bin(L, LOOP_EQ, add(L, mul(L, low_v(L, n), C), low_v(L, co[mr - 1])),
                                         low_i(L, nc - 1)), nest, NULL);
        if (!nest || low_add(L, b, nest))
            return -1;
        L->halo_stores++;
    }
    LoopStmt *st = loop_if(L->p, first, b, NULL);
    return st ? low_add(L, tile, st) : -1;
}

/* Row r of the block stored at output (n, chan, oh, ow0 + lane) of a 4-D
 * output, through the fused members, masked past the row's end OW unless
 * the block lies inside the row. */
int tile_row_store(Low *L, LoopStmt *tile, int c, LoopExpr *v, int nr, int n, int chan, int oh, int ow0, int64_t OW,
                   int inside)
{
    int64_t ys[IR_MAX_RANK];
    low_strides(L, low_out(L, 0), ys);
    LoopExpr *row = add(L, add(L, mul(L, low_v(L, n), ys[0]), mul(L, low_v(L, chan), ys[1])), mul(L, low_v(L, oh), ys[2]));
    LoopExpr *col = add(L, low_v(L, ow0), low_v(L, c));
    LoopExpr *yi = add(L, loop_expr_copy(L->p, row), col);
    LoopExpr *pos = add(L, mul(L, low_v(L, oh), OW), loop_expr_copy(L->p, col));
    LoopExpr *sp[2] = { low_v(L, oh), loop_expr_copy(L->p, col) };
    LoopStmt *st = tile_out_store(L, yi, low_v(L, n), low_v(L, chan), pos, NULL, sp, v);
    if (OW % nr && !inside)
        st = loop_if(L->p, low_bin(L, LOOP_LT, loop_expr_copy(L->p, col), low_i(L, OW)), st, NULL);
    if (tile_vec_loop(L, tile, c, st, nr))
        return -1;
    return tile_halo_cols(L, tile, row, low_v(L, ow0), nr, OW);
}

int tile_row_out(Low *L, LoopStmt *tile, int acc, int r, int nr, int n, int chan, int oh, int ow0, int64_t OW,
                 int inside)
{
    int c;
    if (low_vars(L, 1, "c", &c))
        return -1;
    return tile_row_store(L, tile, c, tile_acc_at(L, acc, r, nr, c), nr, n, chan, oh, ow0, OW, inside);
}

/* Kernel nest (n, g, mt, ...: n and g of one iteration) just built makes
 * buffer y in blocks of mr of its C channels, block mt outermost: a
 * depthwise layer or max pool reading y may join it (LowBlocks). */
void tile_blocks(Low *L, LoopStmt *nest, int y, int mt, int mr, int64_t C)
{
    L->blocks = (LowBlocks){ L->p->n_kernels - 1, nest, y, mt, mr, C, nest->u.loop.body->u.loop.body };
}

/* Rows of a block of nr lanes over `rows` rows: as many as the vector
 * registers allow for the accumulators (32 registers with 16 float lanes,
 * AVX-512; else 16), preferring the count that wastes the fewest rows in the
 * last block, then the larger. */
int tile_pick_mr(Low *L, int nr, int64_t rows)
{
    int lanes = L->s->tile_nr / 2, per_row = nr > lanes ? nr / lanes : 1;
    int budget = lanes >= 16 ? 26 : 13, max = budget / per_row;
    if (max > 12)
        max = 12;
    if (max < 1)
        max = 1;
    return tile_fewest_idle(rows, max, max >= 3 ? 3 : 1);
}

int tile_fewest_idle(int64_t n, int hi, int lo)
{
    int best = hi;
    for (int k = hi - 1; k >= lo; k--)
        if (tile_idle(n, k) < tile_idle(n, best))
            best = k;
    return best;
}

/* A row of OW output pixels in pieces of VW lanes, piece q starting at
 * min(q VW, OW - VW): [*qlo, *qhi) the pieces whose every tap reads a
 * column inside the input, min(q VW, OW - VW) s >= pad and
 * (that + VW - 1) s + (KW - 1) d - pad < W along the window's last axis
 * (empty: both the piece count). */
void tile_inner_pieces(const IrWindow *w, int64_t OW, int64_t VW, int64_t *qlo, int64_t *qhi)
{
    int S = w->rank;
    int64_t s1 = w->stride[S - 1], reach = (w->kernel[S - 1] - 1) * w->dilation[S - 1], pad = w->pad_begin[S - 1];
    int64_t nq = (OW + VW - 1) / VW, lo = (pad + VW * s1 - 1) / (VW * s1), hi;
    for (hi = lo; hi < nq; hi++) {
        int64_t ow0 = hi * VW < OW - VW ? hi * VW : OW - VW;
        if (ow0 * s1 < pad || (ow0 + VW - 1) * s1 + reach - pad >= w->in[S - 1])
            break;                          /* (the last piece, moved back, may start left of lo's) */
    }
    *qlo = hi > lo ? lo : nq;
    *qhi = hi > lo ? hi : nq;
}

/* Can the kernel read buffer b in place for window w, needing h?  Then
 * *off = the element offset that makes padded coordinates (0, 0) index it.
 * An intermediate that lacks only slack past its end is made longer. */
int tile_in_place(Low *L, int b, const IrWindow *w, const TileHalo *h, int64_t *off, int *masked)
{
    const LoopBuf *B = low_buf(L, b);
    *off = 0;
    *masked = 0;
    if (B->shape.rank != 4 || B->strides[3] != 1)
        return 0;
    /* masked 2 (a model input, which has no halo to offer): every load is
     * guarded by its row and column, the lanes off the input read nothing;
     * masked 1: the columns off the row read the neighbouring rows (or the
     * elements before the first halo row, LoopBuf.base) and are replaced */
    int64_t front = B->base - B->halo_rows * B->strides[2];
    int mode = B->storage == LOOP_ST_INPUT && h->mask && w->stride[1] == 1 && (h->rows || h->cols || h->reach > w->in[1]) ? 2
               : B->halo_cols < h->cols;
    if (mode == 1 && (!h->mask || front < w->pad_begin[1] || B->storage != LOOP_ST_WORKSPACE))
        return 0;
    if (mode < 2 && (B->halo_rows < h->rows || ((h->rows || h->cols) && B->halo_fill != h->fill)))
        return 0;                             /* read from a padded copy instead */
    int64_t slack = h->reach - w->in[1] - B->halo_cols;
    if (mode < 2 && B->slack < slack) {
        /* the last row's loads run past the end: an intermediate (not a
         * view) can be allocated that much longer before memory planning */
        if (B->storage != LOOP_ST_WORKSPACE || B->alias_of >= 0 || slack > (1 << 20))
            return 0;
        LoopBuf *mb = &L->p->bufs[b];
        mb->bytes += (slack - mb->slack) * (int64_t)ir_dtype_size(mb->dtype);
        mb->slack = (int)slack;
    }
    *off = -(w->pad_begin[0] * B->strides[2] + w->pad_begin[1]);
    *masked = mode;
    return 1;
}

/* x where the mask table mb holds 1 at `at` (and cond, when given), else
 * fill: a guarded load (LOOP_E_SELECT), so the lanes off read nothing. */
LoopExpr *tile_mask_select(Low *L, int mb, LoopExpr *at, LoopExpr *x, LoopExpr *cond, double fill)
{
    LoopExpr *in = low_bin(L, LOOP_LT, low_const(L, IR_DT_F32, 0.5), low_load(L, mb, at, IR_DT_F32));
    if (cond)
        in = low_bin(L, LOOP_AND, cond, in);
    return loop_select(L->p, in, x, low_const(L, IR_DT_F32, fill));
}
