/* lower/tile/gemm.c — register-blocked compute templates for float32
 * Conv (constant weights, any group count) and MatMul / Gemm with a
 * constant right operand: the CPU schedule's micro-kernel (LowSchedule
 * tile_mr x tile_nr; 0 = the plain templates of lower/window.c and
 * lower/matmul.c).
 *
 * Both are a GEMM  Y[m, n] = sum_k A[m, k] * B[k, n]  per group:
 *   Conv:   m = output position (flattened), n = output channel of the
 *           group, k = (input channel of the group, tap...); A is read from
 *           the input, whose padding is read in place: the producer wrote
 *           it with a halo (halo_output), or the lanes off the row are
 *           masked, or (a model input) every load is guarded; only what
 *           none of these covers is copied into a zero-padded buffer;
 *   MatMul: m = row of A (batch dims of A folded into rows), n = column.
 * The output is cut into MR x NR blocks.  A block's accumulators live in a
 * LOCAL buffer that is read and written only as whole NR-lane vectors at
 * constant offsets (VECTORIZED loops, codegen/vector.c), so they stay in
 * vector registers; each k step broadcasts MR elements of A and loads one
 * NR-vector of packed B:
 *
 *   for n < batch, g < groups, nt < ceil(N/NR), mt < ceil(M/MR):
 *     row_r = min(mt*MR + r, M-1)                          (r < MR, unrolled)
 *     acc[r][:] = bias[g, nt*NR : nt*NR+NR]
 *     for k...:  acc[r][:] += A[row_r, k] * Bp[g, nt, k, :]
 *     Y[row_r, min(nt*NR + c, N-1)] = acc[r][c]           (c < NR)
 *
 * B is packed at compile time into [G][NT][K][NR] panels read in order.
 * Edge blocks need no branch: rows past M recompute row M-1, and columns
 * past N are packed as copies of column N-1, so their lanes store the same
 * value into the same element once more.  (The kernel writes each element
 * only from its own block, so reruns are harmless; the output is never an
 * in-place alias of an input, memplan only does that for one-node
 * elementwise kernels.) */
#include "lower/tile/tile_impl.h"

#include <math.h>
#include <string.h>


typedef struct Gemm Gemm;
struct Gemm {
    int64_t batch, G, M, N, K;    /* loops: batch, groups; GEMM sizes per group */
    int mr, nr;
    int64_t nt;                   /* ceil(N / nr) */
    int nk;                       /* k loops (flattened row-major into k) */
    int kv[IR_MAX_RANK + 1];
    int64_t kext[IR_MAX_RANK + 1];
    int a, y, bp, bias;           /* buffers; bias -1: none */
    int b_rt;                     /* B's buffer when it is known only at run time, else -1 */
    /* Flat index of A at (row, k = 0) and the offset of k (from the k
     * variables); flat index of Y at (row, col).  n, g: loop variables. */
    LoopExpr *(*a_base)(Low *L, const Gemm *t, int n, int g, LoopExpr *row);
    LoopExpr *(*a_koff)(Low *L, const Gemm *t);
    LoopExpr *(*y_index)(Low *L, const Gemm *t, int n, int g, LoopExpr *row, LoopExpr *col);
    /* B[k, col] of group g, and the bias of column col of group g. */
    float (*b_at)(const Gemm *t, int64_t g, int64_t k, int64_t col);
    float (*bias_at)(const Gemm *t, int64_t g, int64_t col);
    /* operator specifics */
    const float *w, *bv;
    IrWindow win;
    int64_t x_strides[IR_MAX_RANK];
    int64_t a_off;                /* Conv reading a halo'd input in place: element offset of padded (0, 0) */
    int trans_a, trans_b;
    int mm;                       /* MatMul / Gemm: Y is row-major [G * M, N] (a group: a batch of a
                                     batched MatMul, its A [G][M][K] and run-time B [G][K][N]) */
    int pw_pack;                  /* Conv: a 1x1 unit-stride window at batch 1, whose A is packed (pack_a) */
    int raw;                      /* tile_product: Y a plain buffer of the kernel, not the node's output */
    int ci_inner;                 /* Conv: the k loops run the taps outer and the input channels inner
                                     (kv / kext in loop order: taps..., ci; the packed k the same) */
    double alpha, beta;
};


static int pack_bias(Low *L, Gemm *t);

/* B known only at run time (MatMul / Gemm): a kernel of its own packs it
 * into a workspace buffer, alpha applied:
 *   Bp[nt, k, c] = alpha * B[k, min(nt*NR + c, N-1)]   (B^T's element for transB) */
static int pack_runtime(Low *L, Gemm *t, const IrShape *sh)
{
    int v[4], *u = v + 1;                  /* g (batched MatMul only), nt, k, c */
    int grouped = t->G > 1;
    t->bp = loop_add_buf(L->p, "packed_b", IR_DT_F32, sh, LOOP_ST_WORKSPACE);
    if (t->bp < 0 || (grouped && low_vars(L, 1, "g", &v[0])) || low_vars(L, 1, "nt", &u[0]) ||
        low_vars(L, 1, "k", &u[1]) || low_vars(L, 1, "c", &u[2]))
        return low_oom(L);
    LoopExpr *col = low_bin(L, LOOP_MIN, add(L, mul(L, low_v(L, u[0]), t->nr), low_v(L, u[2])), low_i(L, t->N - 1));
    LoopExpr *at = t->trans_b ? add(L, mul(L, col, t->K), low_v(L, u[1])) : add(L, mul(L, low_v(L, u[1]), t->N), col);
    if (grouped)                                                    /* B [G][K][N] */
        at = add(L, mul(L, low_v(L, v[0]), t->K * t->N), at);
    LoopExpr *val = low_load(L, t->b_rt, at, IR_DT_F32);
    if (t->alpha != 1.0)
        val = low_bin(L, LOOP_MUL, val, low_const(L, IR_DT_F32, t->alpha));
    LoopExpr *pnl = grouped ? add(L, mul(L, low_v(L, v[0]), t->nt), low_v(L, u[0])) : low_v(L, u[0]);
    LoopExpr *dst = add(L, mul(L, add(L, mul(L, pnl, t->K), low_v(L, u[1])), t->nr), low_v(L, u[2]));
    int64_t ext[4] = { t->G, t->nt, t->K, t->nr };
    LoopStmt *st = low_store(L, t->bp, dst, val);
    if (!st || low_kernel_moves(L, grouped ? low_nest(L, 4, v, ext, st) : low_nest(L, 3, u, ext + 1, st),
                                t->G * t->nt * t->K * t->nr))
        return low_oom(L);
    return 0;
}

/* The packed operands as CONST buffers in the program's arena. */
static int pack(Low *L, Gemm *t)
{
    int64_t nr = t->nr, panel = t->K * nr;
    IrShape sh = { .rank = 1, .dims = { t->G * t->nt * panel } };
    if (t->b_rt >= 0)
        return pack_runtime(L, t, &sh) || pack_bias(L, t);
    float *bp = util_arena_array(&L->p->arena, (size_t)sh.dims[0], sizeof *bp);
    if (!bp)
        return low_oom(L);
    for (int64_t g = 0; g < t->G; g++)
        for (int64_t j = 0; j < t->nt; j++)
            for (int64_t k = 0; k < t->K; k++)
                for (int64_t c = 0; c < nr; c++) {
                    int64_t col = j * nr + c < t->N ? j * nr + c : t->N - 1;
                    bp[((g * t->nt + j) * t->K + k) * nr + c] = t->b_at(t, g, k, col);
                }
    if ((t->bp = loop_add_buf(L->p, "packed_b", IR_DT_F32, &sh, LOOP_ST_CONST)) < 0)
        return low_oom(L);
    L->p->bufs[t->bp].data = bp;
    return pack_bias(L, t);
}
static int pack_bias(Low *L, Gemm *t)
{
    int64_t nr = t->nr;
    t->bias = -1;
    if (!t->bias_at)
        return 0;
    IrShape bs = { .rank = 1, .dims = { t->G * t->nt * nr } };
    float *bb = util_arena_array(&L->p->arena, (size_t)bs.dims[0], sizeof *bb);
    if (!bb)
        return low_oom(L);
    for (int64_t g = 0; g < t->G; g++)
        for (int64_t c = 0; c < t->nt * nr; c++)
            bb[g * t->nt * nr + c] = t->bias_at(t, g, c < t->N ? c : t->N - 1);
    if ((t->bias = loop_add_buf(L->p, "packed_bias", IR_DT_F32, &bs, LOOP_ST_CONST)) < 0)
        return low_oom(L);
    L->p->bufs[t->bias].data = bb;
    return 0;
}

static LoopExpr *mm_y_index(Low *L, const Gemm *t, int n, int g, LoopExpr *row, LoopExpr *col);

static LoopExpr *ct_y_index(Low *L, const Gemm *t, int n, int g, LoopExpr *row, LoopExpr *col);
static void ct_pixel(Low *L, const Gemm *t, int g, LoopExpr *row, LoopExpr **oh, LoopExpr **ow);

/* Y[row, col] of a GEMM block through tile_out_store. */
static LoopStmt *gemm_out(Low *L, const Gemm *t, int n, int g, LoopExpr *row, LoopExpr *col, LoopExpr *v)
{
    LoopExpr *flat = t->y_index(L, t, n, g, row, col);
    if (t->raw)
        return low_store(L, t->y, flat, v);
    if (t->y_index == ct_y_index) {           /* ConvTranspose: the output pixel of the phase */
        LoopExpr *sp[2];
        ct_pixel(L, t, g, loop_expr_copy(L->p, row), &sp[0], &sp[1]);
        return tile_out_store(L, flat, low_v(L, n), loop_expr_copy(L->p, col), NULL, NULL, sp, v);
    }
    if (t->mm)                 /* the row over all groups: the output's leading dims, unflattened */
        return tile_out_store(L, flat, NULL, NULL, t->G > 1 ? add(L, mul(L, low_v(L, g), t->M), row) : row, col,
                              NULL, v);
    return tile_out_store(L, flat, low_v(L, n), add(L, mul(L, low_v(L, g), t->N), loop_expr_copy(L->p, col)), row, NULL,
                          NULL, v);
}



static LoopExpr *conv_y_index(Low *L, const Gemm *t, int n, int g, LoopExpr *row, LoopExpr *col);

/* Does every block of MR output pixels (MR a multiple of 4) lie within
 * one output row (MR divides the row, and so M)?  Its store then goes to
 * (oh, ow), and the block that ends a row can store the halo after it. */
static int conv_block_in_row(const Gemm *t)
{
    return t->M % t->mr == 0 && t->mr % 4 == 0 && t->win.rank == 2 && t->win.out[1] % t->mr == 0;
}

/* Are a conv block's MR output pixels a run of consecutive elements of Y?
 * They lie in one output row (conv_block_in_row), or the rows of a channel
 * follow each other (no halo columns) and the store may take the flat
 * index: the output has no halo, or the fused members read no tensor (the
 * last block's rows past M masked).  MR a multiple of 4: vectors of 7 and
 * 9 lanes (ResNet-18's and MobileNetV2's 7x7 layers, MobileNetV1-0.25's
 * 3x3 ones) measured level or slower per kernel (MobileNetV1-0.25's 3x3
 * layers +3 to +10%). */
static int conv_rows_run(Low *L, const Gemm *t)
{
    if (t->y_index != conv_y_index || t->mr % 4)
        return 0;
    const IrWindow *w = &t->win;
    if (conv_block_in_row(t))
        return 1;
    const LoopBuf *y = low_buf(L, t->y);
    if (!loop_buf_has_halo(y))
        return low_fused_flat_ok(L) || w->rank == 1;
    return w->rank == 2 && y->strides[2] == w->out[1] && !low_fused_reads_tensor(L);
}

/* A block of MR rows a multiple of 4 instead, when the output's layout
 * (known now) lets such blocks store by columns (conv_rows_run) and it
 * computes few more rows: at most M/32 more idle ones (DS-CNN's stem, 125
 * pixels: 16 blocks of 8 instead of 14 of 9, whose 288 scalar stores a
 * block cost as much as its 40 steps of multiply-adds: 5.04 -> 4.52 us).
 * (A 7x7 map keeps 7: 8 computes 7 idle rows of 56.) */
static void conv_column_mr(Low *L, Gemm *t)
{
    int mr = t->mr;
    if (mr % 4 == 0 || t->M <= 12 || t->nr < 32)
        return;
    int best = 0;
    for (int k = 8; k <= 12 && k <= TILE_MAX_MR; k += 4)
        if (!best || tile_idle(t->M, k) < tile_idle(t->M, best))
            best = k;
    if (tile_idle(t->M, best) > tile_idle(t->M, mr) + t->M / 32)
        return;
    t->mr = best;
    if (!conv_rows_run(L, t))
        t->mr = mr;
}

/* Output channel g*N + nt*NR + c of a block (the columns past N repeat
 * column N-1, as the packed weights do). */
static LoopExpr *conv_chan(Low *L, const Gemm *t, int g, int nt, int c)
{
    LoopExpr *col = add(L, mul(L, low_v(L, nt), t->nr), low_v(L, c));
    if (t->N % t->nr)
        col = low_bin(L, LOOP_MIN, col, low_i(L, t->N - 1));
    return add(L, mul(L, low_v(L, g), t->N), col);
}

/* With L->halo_cols_store (the halo fill kernel leaves them to the
 * producer: low_halo_fill), the block that ends an output row (blocks
 * within a row: conv_block_in_row) also stores the halo columns after it
 * for each of its NR channels (tile_halo_cols), into lines it has just
 * written. */
static int conv_halo_cols(Low *L, const Gemm *t, LoopStmt *tile, int n, int g, int nt, int mt)
{
    if (!L->halo_cols_store)
        return 0;
    const LoopBuf *y = low_buf(L, t->y);
    int64_t OW = t->win.out[1], nr = t->nr;
    int c;
    LoopStmt *body = loop_block(L->p);
    if (!body || low_vars(L, 1, "c", &c))
        return low_oom(L);
    LoopExpr *rb = mul(L, low_v(L, mt), t->mr);
    LoopExpr *row = add(L, add(L, mul(L, low_v(L, n), y->strides[0]), mul(L, conv_chan(L, t, g, nt, c), y->strides[1])),
                        mul(L, low_bin(L, LOOP_DIV, loop_expr_copy(L->p, rb), low_i(L, OW)), y->strides[2]));
    LoopStmt *cl = tile_halo_cols(L, body, row, low_bin(L, LOOP_MOD, rb, low_i(L, OW)), t->mr, OW) ? NULL
                                                                                                     : low_nest(L, 1, &c, &nr, body);
    if (!cl)
        return low_oom(L);
    cl->u.loop.kind = LOOP_UNROLLED;   /* the NR tests of the block's place fold into one (rolled: ResNet-8 +0.4%) */
    return low_add(L, tile, cl) ? low_oom(L) : 0;
}

/* The spilled block stored column by column: for each output channel its
 * MR pixels, a run of Y (conv_rows_run), as one MR-lane vector whose lanes
 * read the block NR apart (its transpose), in a loop over the channels the
 * code generator unrolls (the block at constant offsets: LLVM builds the
 * transpose from shuffles).  Element by element, a block of 8 x 32 was
 * 256 scalar stores, each with its own index arithmetic and fused members. */
static int conv_store_columns(Low *L, Gemm *t, LoopStmt *tile, int spill, int n, int g, int nt, int mt, int r,
                              int c)
{
    const IrWindow *w = &t->win;
    int mr = t->mr, nr = t->nr;
    LoopExpr *rb = mul(L, low_v(L, mt), mr), *pos = add(L, loop_expr_copy(L->p, rb), low_v(L, r));
    LoopExpr *sp[2] = { NULL, NULL }, *flat;
    const LoopBuf *y = low_buf(L, t->y);
    LoopExpr *chan = conv_chan(L, t, g, nt, c);
    LoopExpr *base = add(L, mul(L, low_v(L, n), y->strides[0]), mul(L, loop_expr_copy(L->p, chan), y->strides[1]));
    if (conv_block_in_row(t)) {                 /* (oh, ow) = (rb / OW, rb % OW + r) */
        int64_t OW = w->out[1];
        sp[0] = low_bin(L, LOOP_DIV, loop_expr_copy(L->p, rb), low_i(L, OW));
        sp[1] = add(L, low_bin(L, LOOP_MOD, rb, low_i(L, OW)), low_v(L, r));
        flat = add(L, base, add(L, mul(L, loop_expr_copy(L->p, sp[0]), y->strides[2]), loop_expr_copy(L->p, sp[1])));
    } else {                                     /* a channel's rows follow each other */
        flat = add(L, base, loop_expr_copy(L->p, pos));
    }
    LoopStmt *body = loop_block(L->p);
    int bv = body ? low_let(L, body, "bv", low_load(L, spill, add(L, mul(L, low_v(L, r), nr), low_v(L, c)), IR_DT_F32), 0)
                  : -1;
    if (bv < 0)
        return low_oom(L);
    LoopExpr *v = low_v(L, bv);
    LoopExpr *in = t->M % mr ? low_bin(L, LOOP_LT, loop_expr_copy(L->p, pos), low_i(L, t->M)) : NULL;
    LoopStmt *st = sp[0] || !loop_buf_has_halo(y)
                       ? tile_out_store(L, flat, low_v(L, n), chan, pos, NULL, sp[0] ? sp : NULL, v)
                       : low_fused_store_flat(L, flat, v);
    if (st && in)            /* the last block's rows past M: masked off (they would reach the next channel) */
        st = loop_if(L->p, in, st, NULL);
    LoopStmt *f = st && !low_add(L, body, st) ? loop_for(L->p, r, low_i(L, mr), LOOP_VECTORIZED, body) : NULL;
    if (!f)
        return low_oom(L);
    f->u.loop.factor = mr;
    int64_t ext = nr;
    LoopStmt *cl = low_nest(L, 1, &c, &ext, f);
    if (!cl)
        return low_oom(L);
    cl->u.loop.kind = LOOP_UNROLLED;
    if (low_add(L, tile, cl))
        return low_oom(L);
    return sp[0] ? conv_halo_cols(L, t, tile, n, g, nt, mt) : 0;
}

/* Y = acc.  Rows of Y contiguous along the lanes and no column tail
 * (MatMul, N % NR == 0): one vector store per row.  Otherwise the block is
 * spilled by vector stores into a second LOCAL buffer and stored element by
 * element from a loop: a compact loop instead of MR x NR unrolled stores,
 * while acc itself is only ever touched as whole vectors. */
static int store_block(Low *L, Gemm *t, LoopStmt *tile, int acc, int n, int g, int nt, int mt, const int *row)
{
    LoopProgram *p = L->p;
    int mr = t->mr, nr = t->nr;
    int direct = t->N % nr == 0 && t->mm;
    /* the block stored element by element (below): its epilogue applied to
     * the accumulators first, a vector of NR columns at a time */
    int early = !direct && !t->raw && !conv_rows_run(L, t) && low_fused_early_ok(L);
    int spill = acc;
    if (!direct) {
        IrShape sh = { .rank = 1, .dims = { (int64_t)mr * nr } };
        if ((spill = loop_add_buf(p, "block", IR_DT_F32, &sh, LOOP_ST_LOCAL)) < 0)
            return low_oom(L);
    }
    for (int r = 0; r < mr; r++) {
        int c;
        if (low_vars(L, 1, "c", &c))
            return low_oom(L);
        LoopExpr *at = add(L, low_i(L, (int64_t)r * nr), low_v(L, c));
        LoopExpr *v = low_load(L, acc, at, IR_DT_F32);
        LoopStmt *st = early ? loop_block(p) : NULL;
        if (early && st && (v = low_fused_value(L, st, v)))
            st = low_add(L, st, low_store(L, spill, loop_expr_copy(p, at), v)) ? NULL : st;
        else if (!early)
            st = direct ? gemm_out(L, t, n, g, low_v(L, row[r]), add(L, mul(L, low_v(L, nt), nr), low_v(L, c)), v)
                        : low_store(L, spill, loop_expr_copy(p, at), v);
        else
            st = NULL;
        if (!st || tile_vec_loop(L, tile, c, st, nr))
            return low_oom(L);
    }
    if (direct)
        return 0;
    int r, c;
    if (low_vars(L, 1, "r", &r) || low_vars(L, 1, "c", &c))
        return low_oom(L);
    if (conv_rows_run(L, t))
        return conv_store_columns(L, t, tile, spill, n, g, nt, mt, r, c);
    LoopExpr *rowe = low_bin(L, LOOP_MIN, add(L, mul(L, low_v(L, mt), mr), low_v(L, r)), low_i(L, t->M - 1));
    LoopExpr *col = add(L, mul(L, low_v(L, nt), nr), low_v(L, c));
    if (t->N % nr)
        col = low_bin(L, LOOP_MIN, col, low_i(L, t->N - 1));
    LoopExpr *v = low_load(L, spill, add(L, mul(L, low_v(L, r), nr), low_v(L, c)), IR_DT_F32);
    int vars[2] = { r, c };
    int64_t ext[2] = { mr, nr };
    LoopStmt *st = early ? low_fused_store_done(L, t->y_index(L, t, n, g, rowe, col), v) : gemm_out(L, t, n, g, rowe, col, v);
    return low_add(L, tile, low_nest(L, 2, vars, ext, st));
}

static int tile_kernel_parts(Low *L, int n, const int *vars, const int64_t *ext, int k, LoopStmt *tile)
{
    int64_t T = L->s->threads, E = ext[k], Q = tile_part_len(L, E);
    if (Q == E)
        return low_kernel(L, low_nest(L, n, vars, ext, tile));
    int part, q, v2[8];
    int64_t e2[8];
    if (n + 1 > (int)(sizeof v2 / sizeof *v2) || low_vars(L, 1, "part", &part) || low_vars(L, 1, "q", &q))
        return low_oom(L);
    v2[0] = part;
    e2[0] = T;
    for (int i = 0; i < n; i++) {
        v2[i + 1] = i == k ? q : vars[i];
        e2[i + 1] = i == k ? Q : ext[i];
    }
    LoopExpr *ve = add(L, mul(L, low_v(L, part), Q), low_v(L, q));
    LoopExpr *in = low_bin(L, LOOP_LT, loop_expr_copy(L->p, ve), low_i(L, E));
    LoopStmt *body = loop_block(L->p), *let = ve ? loop_let(L->p, vars[k], ve, 0) : NULL;
    if (!body || !let || !in || low_add(L, body, let) || low_add(L, body, tile))
        return low_oom(L);
    return low_kernel(L, low_nest(L, n + 1, v2, e2, loop_if(L->p, in, body, NULL)));
}

/* A MatMul's A (a run-time operand, MR rows a block) packed by a kernel of
 * its own into block-contiguous panels
 *   Ap[mt][k][r] = A[min(mt*MR + r, M-1), k]      (A^T's element for transA)
 * so that a block's k steps read one stream of MR floats a step instead of
 * MR rows K apart, once per panel of B.  Only when A outgrows half a core's
 * L2 (GEMM_PACK_A_BYTES; so it comes from further out for every panel) and
 * two or more panels read it: the GEMM benchmark's 1024^3 and 2048^3 -2%
 * (8 and 3 alternating rounds), 256^3 (A of 256 KB) +3.5% had it been
 * packed.
 *
 * A 1x1 convolution in the GEMM form (a map whose pixels leave pixel-lane
 * blocks too idle: 7x7) is packed whatever its size: its A is the input in
 * NCHW, a block's MR pixels of channel k MR floats in one line and channel
 * k+1 a map further, so each k step touches a line of its own and a block
 * of K = 400 steps 400 lines, which with the panel of B (25 KB) outgrow L1:
 * both came from L2.  Packed, a block reads K * MR contiguous floats.
 * RegNetX-400MF's 24 layers of 400 -> 400 at 7x7 from 44% of the model's
 * perf samples to 35% (the model -11%), MobileNetV2 -5%, EfficientNet-B0 -5%, at 1 thread
 * (Zen 3, AVX2; 6-10 alternating rounds); -6% and -11% for the first two at
 * 2 threads.  Returns the packed buffer, -1 when A stays as it is, -2 when
 * out of memory. */
#define GEMM_PACK_A_BYTES (1 << 20)
static LoopExpr *conv_a_base(Low *L, const Gemm *t, int n, int g, LoopExpr *row);
static int pack_a(Low *L, const Gemm *t, int64_t mt_n)
{
    int64_t bytes;
    int conv = !t->mm && t->pw_pack;
    if ((!t->mm && !conv) || t->G > 1 || t->nt < 2 || t->M < 2 * t->mr ||
        util_mul_overflow_i64(t->M * 4, t->K, &bytes) || (!conv && bytes <= GEMM_PACK_A_BYTES))
        return -1;
    IrShape sh = { .rank = 1, .dims = { mt_n * t->K * t->mr } };
    int v[3];
    int pa = loop_add_buf(L->p, "packed_a", IR_DT_F32, &sh, LOOP_ST_WORKSPACE);
    if (pa < 0 || low_vars(L, 1, "mt", &v[0]) || low_vars(L, 1, "k", &v[1]) || low_vars(L, 1, "r", &v[2]))
        return -2;
    LoopExpr *row = low_bin(L, LOOP_MIN, add(L, mul(L, low_v(L, v[0]), t->mr), low_v(L, v[2])), low_i(L, t->M - 1));
    LoopExpr *src = conv ? add(L, conv_a_base(L, t, -1, -1, row), mul(L, low_v(L, v[1]), t->x_strides[1]))
                  : t->trans_a ? add(L, mul(L, low_v(L, v[1]), t->M), row) : add(L, mul(L, row, t->K), low_v(L, v[1]));
    LoopExpr *dst = add(L, mul(L, add(L, mul(L, low_v(L, v[0]), t->K), low_v(L, v[1])), t->mr), low_v(L, v[2]));
    int64_t ext[3] = { mt_n, t->K, t->mr };
    LoopStmt *st = low_store(L, pa, dst, low_load(L, t->a, src, IR_DT_F32));
    if (!st || low_kernel_moves(L, low_nest(L, 3, v, ext, st), mt_n * t->K * t->mr))
        return -2;
    return pa;
}

static int gemm_emit(Low *L, Gemm *t)
{
    LoopProgram *p = L->p;
    int mr = t->mr, nr = t->nr;
    int64_t mt_n = (t->M + mr - 1) / mr;
    int n, g, nt, mt;
    if (pack(L, t) != 0 || low_vars(L, 1, "n", &n) || low_vars(L, 1, "g", &g) || low_vars(L, 1, "nt", &nt) ||
        low_vars(L, 1, "mt", &mt))
        return low_oom(L);
    int pa = pack_a(L, t, mt_n);
    if (pa == -2)
        return low_oom(L);
    int acc;
    LoopStmt *tile, *kb;
    if (tile_block_start(L, mr, nr, &acc, &tile, &kb))
        return low_oom(L);
    int row[TILE_MAX_MR], base[TILE_MAX_MR];
    for (int r = 0; r < mr; r++) {
        LoopExpr *rv = low_bin(L, LOOP_MIN, add(L, mul(L, low_v(L, mt), mr), low_i(L, r)), low_i(L, t->M - 1));
        row[r] = low_let(L, tile, "row", rv, 0);
        LoopExpr *ab = pa >= 0 ? add(L, mul(L, low_v(L, mt), t->K * mr), low_i(L, r))   /* Ap[mt][0][r] */
                               : t->a_base(L, t, n, g, low_v(L, row[r]));
        if (row[r] < 0 || (base[r] = low_let(L, tile, "abase", ab, 0)) < 0)
            return low_oom(L);
    }
    /* the block's first column in the packed operands: (g * NT + nt) */
    LoopExpr *panel = add(L, mul(L, low_v(L, g), t->nt), low_v(L, nt));
    for (int r = 0; r < mr; r++) {                       /* acc = bias */
        int c;
        if (low_vars(L, 1, "c", &c))
            return low_oom(L);
        LoopExpr *v = t->bias >= 0 ? low_load(L, t->bias, add(L, mul(L, loop_expr_copy(p, panel), nr), low_v(L, c)),
                                              IR_DT_F32)
                                   : low_const(L, IR_DT_F32, 0);
        if (tile_acc_set(L, tile, acc, r, nr, c, v))
            return low_oom(L);
    }
    /* k step: kf = flattened k; wb = ((g*NT + nt) * K + kf) * NR */
    LoopExpr *kf = low_v(L, t->kv[0]);
    for (int i = 1; i < t->nk; i++)
        kf = add(L, mul(L, kf, t->kext[i]), low_v(L, t->kv[i]));
    int wb = low_let(L, kb, "wb", mul(L, add(L, mul(L, loop_expr_copy(p, panel), t->K), kf), nr), 0);
    int ko = wb < 0 ? -1 : low_let(L, kb, "koff", pa >= 0 ? mul(L, loop_expr_copy(p, kf), mr) : t->a_koff(L, t), 0);
    /* with threads: a conv reading the previous layer's output in place
     * (halo'd, a_off) splits its pixel rows when there are more of them
     * than output channels, each task reading the rows its own task of the
     * layer before wrote (ResNet-18's layer2.0 conv1 at 2 threads: 469 ->
     * 319 us); its input copy made by a copy kernel (the stem) has no such
     * rows to keep.  A task's Q blocks of a panel fetch the next panel. */
    int parts = t->M > t->N && t->a_off != 0;
    int64_t Q = parts ? tile_part_len(L, mt_n) : mt_n;
    LoopExpr *blk = Q < mt_n ? low_bin(L, LOOP_MOD, low_v(L, mt), low_i(L, Q)) : low_v(L, mt);
    if (ko < 0 || tile_prefetch(L, kb, t->bp, mul(L, add(L, loop_expr_copy(p, panel), low_i(L, 1)), t->K * nr),
                                t->K * nr, blk, Q, loop_expr_copy(p, kf), t->K, t->M))
        return low_oom(L);
    for (int r = 0; r < mr; r++) {
        int a = low_let(L, kb, "a", low_load(L, pa >= 0 ? pa : t->a, add(L, low_v(L, base[r]), low_v(L, ko)), IR_DT_F32),
                        0), c;
        if (a < 0 || low_vars(L, 1, "c", &c))
            return low_oom(L);
        LoopExpr *bv = low_load(L, t->bp, add(L, low_v(L, wb), low_v(L, c)), IR_DT_F32);
        if (tile_acc_update(L, kb, acc, r, nr, c, LOOP_ADD, low_v(L, a), bv))
            return low_oom(L);
    }
    LoopStmt *ks = low_nest(L, t->nk, t->kv, t->kext, kb);
    if (!ks || low_add(L, tile, ks))
        return low_oom(L);
    if (tile_regs_tight(L->s, mr, nr)) {     /* the innermost k loop kept rolled (unroll count 1) */
        LoopStmt *in = ks;
        while (in->u.loop.body->kind == LOOP_S_FOR)
            in = in->u.loop.body;
        in->u.loop.kind = LOOP_UNROLLED;
        in->u.loop.factor = 1;
    }
    if (store_block(L, t, tile, acc, n, g, nt, mt, row))
        return -1;
    int vars[4] = { n, g, nt, mt };
    int64_t ext[4] = { t->batch, t->G, t->nt, mt_n };
    if (parts)
        return tile_kernel_parts(L, 4, vars, ext, 3, tile);
    return low_kernel(L, low_nest(L, 4, vars, ext, tile));
}

/* Is there a block for this schedule? */
static int tile_init(const LowSchedule *s, Gemm *t)
{
    memset(t, 0, sizeof *t);
    return s && s->tile_nr >= 4 && s->tile_mr >= 1 && s->tile_mr <= TILE_MAX_MR;
}

/* The block for N columns: the schedule's tile_nr (two registers) when N
 * fills three quarters of it, else one register, half or a quarter of one
 * (at least 4 lanes), with more rows (8) as the block gets narrower so that
 * enough independent accumulators hide the FMA latency.  With 32 vector
 * registers (AVX-512) a two-register block takes 6 to 12 rows, the count
 * that wastes the fewest of the M rows in the last block (then the larger):
 * 7 for 7×7 and 14×14 maps (no row wasted, where 6 computes 54 rows for
 * 49), 8 for 1024; M rows when M is fewer.  0 when the GEMM is too small
 * (under TILE_MIN_MNK multiply-adds) or too narrow to pay.
 *
 * The plain template reduces each output element in one scalar chain of
 * K dependent multiply-adds (LLVM may not reassociate float sums), so even
 * a batch-1 layer of a few thousand multiply-adds runs faster as a block
 * of one row, its columns in the lanes: the MLP's 64-48-32-10 layers
 * (3072, 1536, 320) 2.06 -> 0.29 us for the model, the small CNN's 256 -> 10
 * classifier 3.64 -> 2.09 us for the model (the threshold was 4096). */
#define TILE_MIN_MNK 256
static int tile_pays(const LowSchedule *s, Gemm *t)
{
    int nr = s->tile_nr, mr = s->tile_mr;
    while (nr > 4 && t->N * 4 < nr * 3) {
        nr /= 2;
        mr = 8 < TILE_MAX_MR ? 8 : TILE_MAX_MR;
    }
    if (t->N * 4 < nr * 3 && t->N < 3)
        return 0;
    if (nr == s->tile_nr && nr >= 32)       /* 32 registers (AVX-512): 6 to 12 rows, the fewest wasted */
        mr = tile_fewest_idle(t->M, 12, s->tile_mr);
    if (t->M < mr) {                        /* fewer rows than a block (a classifier at batch 1): no row */
        mr = (int)t->M;                     /* computed twice, and for one or two rows a block twice as */
        if (t->M <= 2 && t->N >= 2 * nr)    /* wide (ResNet-18's fc: 146 -> 70 us, 4 registers instead */
            nr *= 2;                        /* of 6 rows of 2 computing the same row) */
    }
    t->nr = nr;
    t->mr = mr;
    t->nt = (t->N + nr - 1) / nr;
    int64_t mn, mnk;                    /* adversarial shapes may overflow: then it pays */
    return util_mul_overflow_i64(t->M, t->N, &mn) || util_mul_overflow_i64(mn, t->K, &mnk) || mnk >= TILE_MIN_MNK;
}

/* ---------------------------------------------------------------- Conv */

static LoopExpr *conv_a_base(Low *L, const Gemm *t, int n, int g, LoopExpr *row)
{
    const IrWindow *w = &t->win;
    LoopExpr *e = n < 0 ? low_i(L, 0) : add(L, mul(L, low_v(L, n), t->x_strides[0]),
                      mul(L, low_v(L, g), (w->channels_in / w->group) * t->x_strides[1]));
    if (t->a_off)
        e = add(L, e, low_i(L, t->a_off));
    int64_t below = 1;                        /* positions of the dims after i */
    for (int i = w->rank - 1; i >= 0; i--) {
        LoopExpr *o = loop_expr_copy(L->p, row);
        if (below > 1)
            o = low_bin(L, LOOP_DIV, o, low_i(L, below));
        if (i > 0)
            o = low_bin(L, LOOP_MOD, o, low_i(L, w->out[i]));
        e = add(L, e, mul(L, o, w->stride[i] * t->x_strides[2 + i]));
        below *= w->out[i];
    }
    return e;
}

static LoopExpr *conv_a_koff(Low *L, const Gemm *t)
{
    const IrWindow *w = &t->win;
    int ci = t->ci_inner ? t->kv[w->rank] : t->kv[0], *taps = t->ci_inner ? (int *)t->kv : (int *)t->kv + 1;
    LoopExpr *e = mul(L, low_v(L, ci), t->x_strides[1]);
    for (int i = 0; i < w->rank; i++)
        e = add(L, e, mul(L, low_v(L, taps[i]), w->dilation[i] * t->x_strides[2 + i]));
    return e;
}

static LoopExpr *conv_y_index(Low *L, const Gemm *t, int n, int g, LoopExpr *row, LoopExpr *col)
{
    const LoopBuf *y = low_buf(L, t->y);
    LoopExpr *ch = add(L, mul(L, low_v(L, g), t->N), col);
    if (loop_buf_has_halo(y)) {                 /* 2-D: row = oh * OW + ow, rows OW apart no longer */
        int64_t OW = t->win.out[1];
        row = add(L, mul(L, low_bin(L, LOOP_DIV, row, low_i(L, OW)), y->strides[2]),
                  low_bin(L, LOOP_MOD, loop_expr_copy(L->p, row), low_i(L, OW)));
    }
    return add(L, add(L, mul(L, low_v(L, n), y->strides[0]), mul(L, ch, y->strides[1])), row);
}

static float conv_b_at(const Gemm *t, int64_t g, int64_t k, int64_t col)
{
    if (t->ci_inner) {                /* k = tap * C + ci; the weights' order is ci * taps + tap */
        int64_t C = t->kext[t->nk - 1], taps = t->K / C;
        k = k % C * taps + k / C;
    }
    return t->w[(g * t->N + col) * t->K + k];
}

static float conv_bias_at(const Gemm *t, int64_t g, int64_t col) { return t->bv[g * t->N + col]; }

/* The kernel a Conv or MaxPool gets (tile_kind). */
enum { TK_NONE, TK_DW, TK_POOL, TK_PW, TK_PWS, TK_DIRECT, TK_GEMM, TK_WINO };

/* A 1x1 window without padding: PW_UNIT with unit strides, PW_STRIDED
 * with others; else 0. */
enum { PW_UNIT = 1, PW_STRIDED = 2 };
static int pointwise(const IrWindow *w)
{
    int strided = 0;
    for (int i = 0; i < w->rank; i++) {
        if (w->kernel[i] != 1 || w->pad_begin[i] || w->pad_end[i])
            return 0;
        strided |= w->stride[i] != 1;
    }
    return strided ? PW_STRIDED : PW_UNIT;
}

static int pad_neg(const IrWindow *w)
{
    for (int i = 0; i < w->rank; i++)
        if (w->pad_begin[i] < 0 || w->pad_end[i] < 0)
            return 1;
    return 0;
}

/* Every element of float32 array a is an integer. */
static int integer_valued(const IrArray *a)
{
    const float *v = a->data;
    for (int64_t i = 0; i < ir_array_numel(a); i++)
        if (v[i] != truncf(v[i]))
            return 0;
    return 1;
}


/* The kernel tile_conv / tile_maxpool build for node n under
 * schedule s — decided from the graph alone (shapes, attributes, constant
 * weights), so that a producer can ask what its consumers will read; the
 * window and GEMM sizes in t.  -1: a bad window (diagnostic in d). */
static int tile_kind(const LowSchedule *s, const IrGraph *g, const IrNode *n, Gemm *t, UtilDiag *d)
{
    if (!tile_init(s, t) || n->n_in < 1 || n->in[0] < 0 || n->n_out < 1 || n->out[0] < 0)
        return TK_NONE;
    const IrArray *x = &g->tensors[n->in[0]].v;
    if (x->dtype != IR_DT_F32 || g->tensors[n->out[0]].v.dtype != IR_DT_F32)
        return TK_NONE;
    if (n->op == IR_OP_MaxPool) {
        if ((n->n_out > 1 && n->out[1] >= 0) || x->shape.rank != 4)
            return TK_NONE;
        if (ir_window(g, n, &x->shape, NULL, &t->win, d) != 0)
            return -1;
        return t->win.out[1] < 4 || pad_neg(&t->win) ? TK_NONE : TK_POOL;
    }
    if (n->op != IR_OP_Conv || n->n_in < 2 || n->in[1] < 0)
        return TK_NONE;
    const IrArray *wk = &g->tensors[n->in[1]].v;
    const IrArray *bk = n->n_in > 2 && n->in[2] >= 0 ? &g->tensors[n->in[2]].v : NULL;
    if (!wk->data || wk->dtype != IR_DT_F32 || (bk && (!bk->data || bk->dtype != IR_DT_F32)))
        return TK_NONE;
    if (ir_window(g, n, &x->shape, &wk->shape, &t->win, d) != 0)
        return -1;
    const IrWindow *w = &t->win;
    t->batch = w->batch;
    t->G = w->group;
    t->N = w->channels_out / w->group;
    t->M = 1;
    t->K = w->channels_in / w->group;
    for (int i = 0; i < w->rank; i++) {
        t->M *= w->out[i];
        t->K *= w->kernel[i];
    }
    if (pad_neg(w))
        return TK_NONE;
    if (w->rank == 2 && t->K == w->kernel[0] * w->kernel[1] && t->N <= 4 && w->out[1] >= 4)
        return TK_DW;
    if (w->rank < 1 || w->rank > 3 || !tile_pays(s, t))
        return TK_NONE;
    /* pointwise: lanes along the pixels, unless the pixels leave more than
     * an eighth of the last block idle (7x7: 49 of 64) — then the GEMM form,
     * its lanes along the output channels.  With 32 registers it also takes
     * the pixels that one-register blocks fill to 7/8 (14x14: 208 for 196):
     * it stores whole rows, where the GEMM form scatters each block through
     * a transpose (tile_pw_emit then still uses two registers, 224 for 196). */
    if (t->M >= s->tile_nr && (tile_idle(t->M, s->tile_nr) * 8 <= t->M ||
                               (s->tile_nr >= 32 && tile_idle(t->M, s->tile_nr / 2) * 8 <= t->M))) {
        int pw = pointwise(w);
        /* rows narrower than a two-register block (14x14, 8x8) with a long
         * reduction: the GEMM form, whose lanes run along the output
         * channels.  Where its output gets a halo (a 3x3 layer reads it)
         * the pointwise form runs along the rows, one register a block, a
         * load per multiply-add: resnet_bottleneck's 1024 -> 512 at 8x8 ran
         * at 41 GFLOPS.  From K = 256 on, the GEMM form's transposed store
         * costs at most a 32nd of its multiply-adds: resnet_bottleneck
         * -12%, GoogLeNet -7 to -9%, EfficientNet-B0 -4%, SqueezeNet -2% at
         * one thread, MobileNetV2 level (Zen 3, AVX2, 10 alternating
         * rounds); from K = 32 on, MobileNetV3-small lost 4-7%. */
        if (pw == PW_UNIT && w->rank == 2 && w->out[1] < s->tile_nr && t->K >= 256)
            return TK_GEMM;
        if (pw == PW_UNIT)
            return TK_PW;
        if (pw == PW_STRIDED && w->rank == 2)
            return TK_PWS;
    }
    /* (a model input has no halo to offer: the direct / GEMM forms read it in place) */
    int model_input = 0;
    for (int i = 0; i < g->n_inputs; i++)
        model_input |= g->inputs[i] == n->in[0];
    /* integer-valued weights (the exact float form of a quantized
     * convolution, passes/qdq.c) keep the direct and GEMM forms, whose sums
     * of integers are exact: Winograd's transforms round */
    if (!model_input && !integer_valued(wk) && tile_wino_pays(s, w))
        return TK_WINO;
    /* the direct form for short reductions, where the GEMM form's transposed
     * stores (a fixed cost per output block) would outweigh the block's K
     * steps; strided, past K = 64, the GEMM form's register block (two
     * weight vectors, MR broadcasts) beats the direct form's strided input
     * vector (two loads and a shuffle) per MR weight broadcasts: ResNet-18's
     * 7x7/2 stem (K = 147) 1891 -> 1645 us on an Intel VM, where 3x3/2 stems
     * (K = 27) are faster direct (206 vs 278 us) */
    if (w->rank == 2 && t->K <= (w->stride[1] > 1 ? 64 : 160) && w->out[1] * 2 >= s->tile_nr)
        return TK_DIRECT;
    return TK_GEMM;
}

/* What a 2-D window kernel of kind k reads around its input (TileHalo). */
static void halo_need(const LowSchedule *s, int k, const IrWindow *w, TileHalo *h)
{
    if (k == TK_WINO) {
        tile_wino_halo(s, w, h);
        return;
    }
    int64_t KH = w->kernel[0], KW = w->kernel[1], sh = w->stride[0], sw = w->stride[1];
    int64_t dh = w->dilation[0], dw = w->dilation[1], OH = w->out[0], OW = w->out[1];
    int64_t H = w->in[0], W = w->in[1], pt = w->pad_begin[0], pl = w->pad_begin[1];
    int64_t bottom = (OH - 1) * sh + (KH - 1) * dh + 1 - H - pt, right = (OW - 1) * sw + (KW - 1) * dw + 1 - W - pl;
    h->rows = pt > bottom ? pt : bottom;
    h->cols = pl > right ? pl : right;
    h->fill = k == TK_POOL ? -INFINITY : 0.0;
    h->reach = W + right;
    h->mask = k != TK_GEMM;
    if (k != TK_GEMM) {                   /* vector loads of NR lanes along the output row */
        int nr = s->tile_nr / 2;
        if (k == TK_DIRECT)
            nr = tile_direct_nr(s, OW, sw);
        else
            while (nr > 4 && OW * 4 < nr * 3)
                nr /= 2;
        int64_t owt = (OW + nr - 1) / nr, last = k == TK_DIRECT && OW >= nr ? OW : owt * nr;  /* tile_direct_emit's
                                                                    blocks lie inside the row when they fit */
        h->reach = (last - 1) * sw + (KW - 1) * dw + 1 - pl + (sw > 1 ? sw - 1 : 0);
    }
}

/* The output of this window kernel laid out with the halo its consumers
 * read (loop_buf_halo; a kernel of its own fills the halo first), when
 * every consumer is a 2-D window kernel of this file that would otherwise
 * copy it into a padded buffer: the copy goes, and with it the second buffer
 * that lived beside the first.  The caller's stores go through the strides.
 * 0, or -1 out of memory. */
static int halo_output(Low *L, int cols_ok, int producer_cols)
{
    const IrGraph *g = L->g;
    int t = g->nodes[L->node + L->fuse_n].out[0], y = low_out(L, 0);
    if (t < 0 || y < 0)
        return 0;
    const LoopBuf *yb = low_buf(L, y);
    if (yb->storage != LOOP_ST_WORKSPACE || yb->shape.rank != 4 || yb->alias_of >= 0 || loop_buf_has_halo(yb) ||
        yb->dtype != IR_DT_F32)
        return 0;
    TileHalo all = { 0, 0, 0, 0.0, 0 };
    int64_t sw1 = 0, front = 0, W = yb->shape.dims[3];
    int gain = 0, filled = 0;
    for (int i = L->node + L->fuse_n + 1; i < g->n_nodes; i++) {
        const IrNode *c = &g->nodes[i];
        int reads = 0, later = 0;
        for (int k = 0; !c->dead && k < c->n_in; k++)
            if (c->in[k] == t) {
                later |= k > 0;
                reads = 1;
            }
        if (!reads)
            continue;
        if (c->op == IR_OP_Add || c->op == IR_OP_Sub || c->op == IR_OP_Mul || c->op == IR_OP_Div)
            continue;               /* elementwise: reads a halo'd operand through its strides (ew_run) */
        if (later)
            return 0;
        Gemm cg;
        UtilDiag d;
        util_diag_init(&d);
        int kind = tile_kind(L->s, g, c, &cg, &d);
        if (kind == TK_PWS)
            continue;               /* gathers its pixels through the strides */
        if (kind == TK_PW && cg.win.rank == 2) {
            /* pointwise: over the plane, or along the rows when the halo has
             * columns and the rows are wide enough (tile_pw_emit) */
            cols_ok &= cg.win.out[1] * 2 >= L->s->tile_nr;
            continue;
        }
        if (!(kind == TK_DW || kind == TK_POOL || kind == TK_DIRECT || kind == TK_WINO || (kind == TK_GEMM && cg.win.rank == 2)))
            return 0;
        TileHalo h;
        halo_need(L->s, kind, &cg.win, &h);
        if (h.rows || h.cols) {
            if (filled && h.fill != all.fill)
                return 0;
            all.fill = h.fill;
            filled = 1;
        }
        int64_t off;
        int masked;
        gain |= !tile_in_place(L, y, &cg.win, &h, &off, &masked);
        all.rows = h.rows > all.rows ? h.rows : all.rows;
        /* narrow rows: masked lanes rather than columns that would add a
         * good part of the tensor (a row of 31 + 1 column: 3%) */
        if (h.mask && W < 32)
            front = cg.win.pad_begin[1] > front ? cg.win.pad_begin[1] : front;
        else
            all.cols = h.cols > all.cols ? h.cols : all.cols;
        all.reach = h.reach > all.reach ? h.reach : all.reach;
        if (cg.win.stride[1] - 1 > sw1)
            sw1 = cg.win.stride[1] - 1;
    }
    int64_t slack = all.reach - W - all.cols;
    if (slack < sw1)
        slack = sw1;
    if (!gain || all.rows > 64 || all.cols > 64 || slack > (1 << 20) || (all.cols && !cols_ok) ||
        loop_buf_halo(L->p, y, (int)all.rows, (int)all.cols, (int)front, all.fill, (int)slack))
        return 0;
    return low_halo_fill(L, y, producer_cols);
}

int tile_conv(Low *L)
{
    Gemm t;
    int kind = tile_kind(L->s, L->g, L->n, &t, L->d);
    if (kind <= 0)
        return kind < 0 ? -1 : 1;
    int x = low_in(L, 0), y = low_out(L, 0);
    if (x < 0 || y < 0 || low_in(L, 1) < 0 || (low_has(L, 2) && low_in(L, 2) < 0))
        return low_oom(L);
    const IrWindow *w = &t.win;
    /* a pointwise kernel writes halo columns along rows, which must fill a vector */
    if (halo_output(L, (kind != TK_PW && kind != TK_PWS) || w->out[1] * 2 >= L->s->tile_nr,
                    kind != TK_GEMM || conv_block_in_row(&t)))   /* (the forms that store rows) */
        return -1;
    TileHalo h;
    if (w->rank == 2)
        halo_need(L->s, kind, w, &h);
    const IrArray *wk = low_known(L, 1), *bk = low_has(L, 2) ? low_known(L, 2) : NULL;
    if (kind == TK_DW)
        return tile_dw_emit(L, w, x, 0, &h);
    if (kind == TK_PW)
        return tile_pw_emit(L, w, x, y);
    if (kind == TK_PWS)
        return tile_pw_strided_emit(L, w, x, y);
    if (kind == TK_DIRECT)
        return tile_direct_emit(L, w, x, wk->data, &h);
    if (kind == TK_WINO)
        return tile_wino_emit(L, w, x, wk->data, &h);
    t.y_index = conv_y_index;
    t.y = y;
    conv_column_mr(L, &t);
    int pad = 0, masked;            /* (the GEMM form cannot mask: in place means read as it is) */
    for (int i = 0; i < w->rank; i++)
        pad |= w->pad_begin[i] != 0 || w->pad_end[i] != 0;
    t.w = wk->data;
    t.b_rt = -1;
    t.bv = bk ? bk->data : NULL;
    t.b_at = conv_b_at;
    t.bias_at = bk ? conv_bias_at : NULL;
    t.a = x;
    if (w->rank == 2 && tile_in_place(L, x, w, &h, &t.a_off, &masked))
        pad = 0;
    if (pad && (t.a = tile_pad_input(L, x, w, 0, 0, 0, 0.0)) < 0)
        return -1;
    memcpy(t.x_strides, low_buf(L, t.a)->strides, sizeof t.x_strides);
    t.nk = 1 + w->rank;
    /* The k loops: input channels outer, taps inner, unless the block
     * leaves no register to spare (tile_regs_tight: the innermost k loop
     * stays rolled) and the innermost tap loop is short: then the taps
     * outer and the channels inner, so that the rolled loop is the long
     * one.  M5's 128 -> 128 1-D layers of 3 taps ran their 6 x 16 blocks
     * in 3-step loops, a loop exit every third step: 48 GFLOPS (Zen 3,
     * AVX2). */
    int64_t C = w->channels_in / w->group, taps = t.K / C;
    t.ci_inner = tile_regs_tight(L->s, t.mr, t.nr) && w->kernel[w->rank - 1] <= 4 && taps > 1 && C >= 8;
    int ci_at = t.ci_inner ? w->rank : 0, tap_at = t.ci_inner ? 0 : 1;
    t.kext[ci_at] = C;
    for (int i = 0; i < w->rank; i++)
        t.kext[tap_at + i] = w->kernel[i];
    if (low_vars(L, 1, "ci", &t.kv[ci_at]) || low_vars(L, w->rank, "k", &t.kv[tap_at]))
        return low_oom(L);
    t.a_base = conv_a_base;
    t.a_koff = conv_a_koff;
    t.pw_pack = pointwise(w) == PW_UNIT && t.batch == 1;
    return gemm_emit(L, &t);
}

/* ---------------------------------------------------------- ConvTranspose */

/* A ConvTranspose whose kernel equals its stride (no pads, dilation 1, one
 * group, no output padding: a U-Net's 2x2 / 2 up-convolution) gives every
 * output pixel exactly one tap, so it is s_h * s_w pointwise products, one
 * per phase (a, b) of an output pixel in its s_h x s_w cell:
 *   Y[n, m, s_h i + a, s_w j + b] = bias[m] + sum_c X[n, c, i, j] W[c, m, a, b]
 * one GEMM per phase, a group of the GEMM form: rows the input pixels,
 * columns the output channels, k the input channels.  (The plain template
 * tests every tap of every output pixel for the one that reaches it.) */
static LoopExpr *ct_a_base(Low *L, const Gemm *t, int n, int g, LoopExpr *row)
{
    (void)g;
    return add(L, mul(L, low_v(L, n), t->x_strides[0]), row);
}

static LoopExpr *ct_a_koff(Low *L, const Gemm *t) { return mul(L, low_v(L, t->kv[0]), t->x_strides[1]); }

/* Output pixel (s_h i + a, s_w j + b) of input pixel row = i W + j in phase g = a s_w + b. */
static void ct_pixel(Low *L, const Gemm *t, int g, LoopExpr *row, LoopExpr **oh, LoopExpr **ow)
{
    int64_t W = t->win.in[1], sh = t->win.stride[0], sw = t->win.stride[1];
    LoopExpr *i = low_bin(L, LOOP_DIV, row, low_i(L, W));
    LoopExpr *j = low_bin(L, LOOP_MOD, loop_expr_copy(L->p, row), low_i(L, W));
    *oh = add(L, mul(L, i, sh), low_bin(L, LOOP_DIV, low_v(L, g), low_i(L, sw)));
    *ow = add(L, mul(L, j, sw), low_bin(L, LOOP_MOD, low_v(L, g), low_i(L, sw)));
}

static LoopExpr *ct_y_index(Low *L, const Gemm *t, int n, int g, LoopExpr *row, LoopExpr *col)
{
    const LoopBuf *y = low_buf(L, t->y);
    LoopExpr *oh, *ow;
    ct_pixel(L, t, g, loop_expr_copy(L->p, row), &oh, &ow);
    LoopExpr *e = add(L, mul(L, low_v(L, n), y->strides[0]), mul(L, loop_expr_copy(L->p, col), y->strides[1]));
    return add(L, add(L, e, mul(L, oh, y->strides[2])), ow);
}

static float ct_b_at(const Gemm *t, int64_t g, int64_t k, int64_t col)
{
    const IrWindow *w = &t->win;
    return t->w[((k * t->N + col) * w->kernel[0] + g / w->stride[1]) * w->kernel[1] + g % w->stride[1]];
}

static float ct_bias_at(const Gemm *t, int64_t g, int64_t col)
{
    (void)g;
    return t->bv[col];
}

/* Are all n values of list attribute key of node n equal to v (absent: dflt)? */
static int ints_all(const IrNode *n, IrAttrKey key, int64_t v, int dflt)
{
    const int64_t *a;
    int k = ir_attr_ints(n, key, &a);
    if (k <= 0)
        return dflt;
    for (int i = 0; i < k; i++)
        if (a[i] != v)
            return 0;
    return 1;
}

int tile_convtranspose(Low *L)
{
    Gemm t;
    const IrNode *n = L->n;
    if (!tile_init(L->s, &t) || n->n_in < 2)
        return 1;
    int x = low_in(L, 0), y = low_out(L, 0);
    const IrArray *wk = low_known(L, 1), *bk = low_has(L, 2) ? low_known(L, 2) : NULL;
    if (x < 0 || y < 0 || !wk || (low_has(L, 2) && !bk))
        return x < 0 || y < 0 ? low_oom(L) : 1;
    const LoopBuf *X = low_buf(L, x), *Y = low_buf(L, y);
    const char *ap = ir_attr_str(n, IR_A_auto_pad);
    if (X->dtype != IR_DT_F32 || Y->dtype != IR_DT_F32 || wk->dtype != IR_DT_F32 || (bk && bk->dtype != IR_DT_F32) ||
        X->shape.rank != 4 || wk->shape.rank != 4 || ir_attr_int(n, IR_A_group) > 1 ||
        (strcmp(ap, "NOTSET") && strcmp(ap, "VALID")) || !ints_all(n, IR_A_pads, 0, 1) ||
        !ints_all(n, IR_A_dilations, 1, 1) || !ints_all(n, IR_A_output_padding, 0, 1) ||
        loop_buf_has_halo(X) || loop_buf_has_halo(Y) || X->strides[3] != 1 || X->strides[2] != X->shape.dims[3] ||
        X->strides[1] != X->shape.dims[2] * X->shape.dims[3])
        return 1;
    const int64_t *st;
    int64_t kh = wk->shape.dims[2], kw = wk->shape.dims[3];
    if (ir_attr_ints(n, IR_A_strides, &st) != 2 || st[0] != kh || st[1] != kw || kh < 1 || kw < 1 ||
        Y->shape.dims[2] != X->shape.dims[2] * kh || Y->shape.dims[3] != X->shape.dims[3] * kw)
        return 1;
    t.win.rank = 2;
    t.win.in[0] = X->shape.dims[2];
    t.win.in[1] = X->shape.dims[3];
    t.win.kernel[0] = t.win.stride[0] = kh;
    t.win.kernel[1] = t.win.stride[1] = kw;
    t.batch = X->shape.dims[0];
    t.G = kh * kw;                                  /* the phases */
    t.M = X->shape.dims[2] * X->shape.dims[3];
    t.N = Y->shape.dims[1];
    t.K = X->shape.dims[1];
    if (wk->shape.dims[0] != t.K || wk->shape.dims[1] != t.N || !tile_pays(L->s, &t))
        return 1;
    memcpy(t.x_strides, X->strides, sizeof t.x_strides);
    t.a = x;
    t.y = y;
    t.w = wk->data;
    t.b_rt = -1;
    t.bv = bk ? bk->data : NULL;
    t.b_at = ct_b_at;
    t.bias_at = bk ? ct_bias_at : NULL;
    t.nk = 1;
    t.kext[0] = t.K;
    if (low_vars(L, 1, "ci", &t.kv[0]))
        return low_oom(L);
    t.a_base = ct_a_base;
    t.a_koff = ct_a_koff;
    t.y_index = ct_y_index;
    return gemm_emit(L, &t);
}

/* ---------------------------------------------------------- MatMul, Gemm */

/* A [M, K] (or [K, M] transposed), Y [M, N]: row-major, contiguous. */
static LoopExpr *mm_a_base(Low *L, const Gemm *t, int n, int g, LoopExpr *row)
{
    (void)n;
    if (t->G > 1)                                       /* A [G][M][K] */
        row = add(L, mul(L, low_v(L, g), t->M), row);
    return t->trans_a ? row : mul(L, row, t->K);
}

static LoopExpr *mm_a_koff(Low *L, const Gemm *t)
{
    return t->trans_a ? mul(L, low_v(L, t->kv[0]), t->M) : low_v(L, t->kv[0]);
}

static LoopExpr *mm_y_index(Low *L, const Gemm *t, int n, int g, LoopExpr *row, LoopExpr *col)
{
    (void)n;
    if (t->G > 1)                                       /* Y [G][M][N] */
        row = add(L, mul(L, low_v(L, g), t->M), loop_expr_copy(L->p, row));
    return add(L, mul(L, row, t->N), col);
}

static float mm_b_at(const Gemm *t, int64_t g, int64_t k, int64_t col)
{
    (void)g;
    return (float)(t->alpha * t->w[t->trans_b ? col * t->K + k : k * t->N + col]);
}

static float mm_bias_at(const Gemm *t, int64_t g, int64_t col)
{
    (void)g;
    return (float)(t->beta * t->bv[col]);
}

/* The MatMul form's callbacks, one k loop, and the kernel (t's sizes,
 * operands and scalars set). */
static int mm_emit(Low *L, Gemm *t, int has_bias)
{
    t->b_at = mm_b_at;
    t->bias_at = has_bias ? mm_bias_at : NULL;
    t->nk = 1;
    t->kext[0] = t->K;
    if (low_vars(L, 1, "k", &t->kv[0]))
        return low_oom(L);
    t->a_base = mm_a_base;
    t->a_koff = mm_a_koff;
    t->y_index = mm_y_index;
    return gemm_emit(L, t);
}

/* Y = alpha * A' B' + beta * bias; B and the bias (a row vector, or none)
 * constant. */
static int mm_tiled(Low *L, int trans_a, int trans_b, double alpha, double beta, int has_c)
{
    Gemm t;
    if (!tile_init(L->s, &t))
        return 1;
    const IrArray *bk = low_known(L, 1), *ck = has_c ? low_known(L, 2) : NULL;
    int a = low_in(L, 0), y = low_out(L, 0), b = bk ? -1 : low_in(L, 1);
    const IrShape *bs = bk ? &bk->shape : b >= 0 ? &low_buf(L, b)->shape : NULL;
    if (a < 0 || y < 0 || !bs || bs->rank < 2 || (bk ? bk->dtype : low_buf(L, b)->dtype) != IR_DT_F32 ||
        (has_c && !ck) || low_buf(L, a)->dtype != IR_DT_F32 || low_buf(L, y)->dtype != IR_DT_F32)
        return 1;
    const IrShape *as = &low_buf(L, a)->shape;
    t.b_rt = b;
    t.K = bs->dims[bs->rank - (trans_b ? 1 : 2)];
    t.N = bs->dims[bs->rank - (trans_b ? 2 : 1)];
    if (as->rank < 1 || t.K <= 0 || t.N <= 0)
        return 1;
    /* a batched MatMul of two run-time operands with the same batch dims
     * (attention's Q K^T and P V): one GEMM per batch, a group each */
    int64_t groups = 1;
    if (bs->rank > 2) {
        if (bk || trans_a || trans_b || has_c || as->rank != bs->rank || as->dims[as->rank - 1] != t.K)
            return 1;
        for (int i = 0; i < bs->rank - 2; i++) {
            if (as->dims[i] != bs->dims[i])
                return 1;
            groups *= bs->dims[i];
        }
        if (groups == 0)                                /* an empty batch: the generic template */
            return 1;
    }
    if (trans_a) {                                      /* Gemm: A is [K, M] */
        if (as->rank != 2)
            return 1;
        t.M = as->dims[1];
    } else {
        if (as->dims[as->rank - 1] != t.K)
            return 1;
        t.M = ir_shape_numel(as) / t.K / groups;        /* batch dims folded into rows, but a group's */
    }
    if (ck) {                                           /* a bias per column only */
        if (ck->dtype != IR_DT_F32 || ir_shape_numel(&ck->shape) != t.N ||
            (ck->shape.rank >= 1 && ck->shape.dims[ck->shape.rank - 1] != t.N))
            return 1;
    }
    int64_t mn;
    if (t.M <= 0 || util_mul_overflow_i64(t.M, t.N, &mn) || ir_shape_numel(&low_buf(L, y)->shape) != mn * groups ||
        !tile_pays(L->s, &t))
        return 1;
    t.batch = 1;
    t.G = groups;
    t.mm = 1;
    t.a = a;
    t.y = y;
    t.w = bk ? bk->data : NULL;
    t.bv = ck ? ck->data : NULL;
    t.trans_a = trans_a;
    t.trans_b = trans_b;
    t.alpha = alpha;
    t.beta = beta;
    return mm_emit(L, &t, ck && beta != 0);
}

int tile_matmul(Low *L) { return mm_tiled(L, 0, 0, 1.0, 0.0, 0); }

int tile_product(Low *L, int a, int y, int64_t M, int64_t K, int64_t N, const float *b, const float *bias)
{
    Gemm t;
    if (!tile_init(L->s, &t) || M <= 0 || K <= 0 || N <= 0)
        return 1;
    t.M = M;
    t.K = K;
    t.N = N;
    if (!tile_pays(L->s, &t))
        return 1;
    t.batch = t.G = 1;
    t.mm = t.raw = 1;
    t.b_rt = -1;
    t.a = a;
    t.y = y;
    t.w = b;
    t.bv = bias;
    t.alpha = t.beta = 1.0;
    return mm_emit(L, &t, bias != NULL);
}

int tile_gemm(Low *L)
{
    return mm_tiled(L, ir_attr_int(L->n, IR_A_transA) != 0, ir_attr_int(L->n, IR_A_transB) != 0,
                    ir_attr_float(L->n, IR_A_alpha), ir_attr_float(L->n, IR_A_beta), low_has(L, 2));
}

/* GlobalAveragePool (float32, 4-D, each channel's plane contiguous): MR
 * channels at a time, each summed as NR-lane partial sums over its plane
 * (the lanes past the plane masked by a table), then the lanes added in
 * lane order and the sum divided by the plane's size:
 *   acc[r][:] += (M[v*NR + :] > 0.5 ? X[c_r, v*NR + :] : 0);   Y[c_r] = sum(acc[r]) / P
 * Rows past C recompute channel C-1. */
int tile_gap(Low *L)
{
    Gemm t;
    int x = low_in(L, 0), y = low_out(L, 0);
    if (!tile_init(L->s, &t) || x < 0 || y < 0 || L->fuse_n)
        return x < 0 || y < 0 ? low_oom(L) : 1;
    const LoopBuf *X = low_buf(L, x), *Y = low_buf(L, y);
    int nr = L->s->tile_nr / 2, mr = 4;
    if (X->dtype != IR_DT_F32 || Y->dtype != IR_DT_F32 || X->shape.rank != 4 || X->strides[3] != 1 ||
        X->strides[2] != X->shape.dims[3] || Y->shape.rank != 4)
        return 1;
    int64_t N = X->shape.dims[0], C = X->shape.dims[1], P = X->shape.dims[2] * X->shape.dims[3];
    if (P < nr || C < 1)
        return 1;
    int64_t vt = (P + nr - 1) / nr, ct = (C + mr - 1) / mr;
    IrShape ssh = { .rank = 1, .dims = { (int64_t)mr * nr } };
    float *m;
    int mb = low_const_table(L, "plane_mask", vt * nr, &m);
    int sums = mb < 0 ? -1 : loop_add_buf(L->p, "lanes", IR_DT_F32, &ssh, LOOP_ST_LOCAL);
    if (sums < 0)
        return low_oom(L);
    for (int64_t j = 0; j < vt * nr; j++)
        m[j] = j < P ? 1.0f : 0.0f;
    int64_t xs[IR_MAX_RANK], ys[IR_MAX_RANK];
    low_strides(L, x, xs);
    low_strides(L, y, ys);
    int n, cb, v;
    if (low_vars(L, 1, "n", &n) || low_vars(L, 1, "cb", &cb) || low_vars(L, 1, "v", &v))
        return low_oom(L);
    int acc;
    LoopStmt *tile, *kb;
    if (tile_block_start(L, mr, nr, &acc, &tile, &kb))
        return low_oom(L);
    int co[TILE_MAX_MR], xb[TILE_MAX_MR];
    for (int r = 0; r < mr; r++) {
        LoopExpr *cv = low_bin(L, LOOP_MIN, add(L, mul(L, low_v(L, cb), mr), low_i(L, r)), low_i(L, C - 1));
        int c;
        if ((co[r] = low_let(L, tile, "co", cv, 0)) < 0 ||
            (xb[r] = low_let(L, tile, "xb", add(L, mul(L, low_v(L, n), xs[0]), mul(L, low_v(L, co[r]), xs[1])), 0)) < 0 ||
            low_vars(L, 1, "c", &c) || tile_acc_set(L, tile, acc, r, nr, c, low_const(L, IR_DT_F32, 0)))
            return low_oom(L);
    }
    for (int r = 0; r < mr; r++) {
        int c;
        if (low_vars(L, 1, "c", &c))
            return low_oom(L);
        LoopExpr *at = add(L, mul(L, low_v(L, v), nr), low_v(L, c));
        LoopExpr *xv = tile_mask_select(L, mb, at, low_load(L, x, add(L, low_v(L, xb[r]), loop_expr_copy(L->p, at)), IR_DT_F32),
                                        NULL, 0.0);
        if (tile_acc_set(L, kb, acc, r, nr, c, add(L, tile_acc_at(L, acc, r, nr, c), xv)))
            return low_oom(L);
    }
    int64_t vext = vt;
    if (low_add(L, tile, low_nest(L, 1, &v, &vext, kb)))
        return low_oom(L);
    for (int r = 0; r < mr; r++) {                      /* the lanes out as whole vectors */
        int c;
        if (low_vars(L, 1, "c", &c) ||
            tile_vec_loop(L, tile, c, low_store(L, sums, add(L, low_i(L, (int64_t)r * nr), low_v(L, c)),
                                           tile_acc_at(L, acc, r, nr, c)), nr))
            return low_oom(L);
    }
    for (int r = 0; r < mr; r++) {
        int s = low_let(L, tile, "s", low_const(L, IR_DT_F32, 0), 1), l;
        if (s < 0 || low_vars(L, 1, "l", &l))
            return low_oom(L);
        LoopStmt *as = loop_assign(L->p, s, add(L, low_v(L, s), low_load(L, sums, add(L, low_i(L, (int64_t)r * nr),
                                                                                       low_v(L, l)), IR_DT_F32)));
        int64_t lext = nr;
        LoopExpr *yi = add(L, mul(L, low_v(L, n), ys[0]), mul(L, low_v(L, co[r]), ys[1]));
        if (!as || low_add(L, tile, low_nest(L, 1, &l, &lext, as)) ||
            low_add(L, tile, low_store(L, y, yi, low_bin(L, LOOP_DIV, low_v(L, s), low_const(L, IR_DT_F32, (double)P)))))
            return low_oom(L);
    }
    int vars[2] = { n, cb };
    int64_t ext[2] = { N, ct };
    return low_kernel(L, low_nest(L, 2, vars, ext, tile));
}

/* MaxPool (2-D, float32, no Indices output): the depthwise kernel with max
 * for the multiply-add, the input padded with -inf (also past the end for
 * ceil_mode windows; -inf never wins a max, NaN still propagates). */
int tile_maxpool(Low *L)
{
    Gemm t;
    int kind = tile_kind(L->s, L->g, L->n, &t, L->d);
    if (kind <= 0)
        return kind < 0 ? -1 : 1;
    int x = low_in(L, 0);
    if (x < 0 || low_out(L, 0) < 0)
        return low_oom(L);
    if (halo_output(L, 1, 1))
        return -1;
    TileHalo h;
    halo_need(L->s, kind, &t.win, &h);
    return tile_dw_emit(L, &t.win, x, 1, &h);
}
