/* lower/tile/winograd.c — float32 3x3 convolutions (stride 1, dilation 1,
 * one group) by Winograd's minimal filtering F(m x m, 3 x 3), m = 2 or 4
 * (the Wino tables below; shown for m = 2): each 2x2 output tile is
 * computed from its 4x4 input patch d with 16 multiplications per
 * (input, output) channel pair instead of 36:
 *
 *   V = B^T d B          (input transform, per input channel)
 *   M = sum_c U[c] . V[c] (elementwise over the 16 positions xi: 16 GEMMs)
 *   Y = A^T M A + bias    (output transform, per output channel)
 *
 *   B^T = | 1  0 -1  0 |   G = | 1    0    0  |   A^T = | 1  1  1  0 |
 *         | 0  1  1  0 |       | 1/2  1/2  1/2 |         | 0  1 -1 -1 |
 *         | 0 -1  1  0 |       | 1/2 -1/2  1/2 |
 *         | 0  1  0 -1 |       | 0    0    1  |
 *
 * with U = G g G^T computed at compile time (in double) from each 3x3
 * filter g and packed as [xi][K/MR][C][MR].  One kernel; per group of G
 * output tile rows (the parallel loop; WinoLayout):
 *
 *   V[xi][c][tiles] for every input channel and every tile of the group,
 *       the lanes along the tiles (the patch's columns read as stride-m
 *       vectors), into a LOCAL buffer ((m+2)^2 * C * G * TWp floats, the
 *       positions xi a cache line more than C * G * TWp apart);
 *   per block of MR output channels x NR tiles, per xi: the GEMM
 *       acc[r][:] += U[xi][k_r][c] * V[xi][c][tw0 : tw0+NR] over c, kept in
 *       registers and spilled to M[xi][r][:]; then the output transform of
 *       each row r, each output row's tile columns interleaved into m*NR
 *       contiguous columns, stored through the fused members.
 *
 * A map of at most 8 tiles (ResNet-8's 8x8: 2 x 2 tiles of F(4x4)) would
 * fill a vector of tiles to a quarter; with at least 32 output channels
 * (WinoLayout.cl) the GEMM's lanes run along the output channels instead:
 * acc[t][:] += V[xi][c][t] * U[xi][c][k0 : k0+MR] for the T tiles, U packed
 * [xi][K/MR][C][MR] alike; the output transform runs on M[xi][t][lanes]
 * for a tile row's tiles, and each channel's output rows are read across
 * their transforms (output_channels).  ResNet-8's 8x8x64 layer: F(2x2)
 * with 16 tiles in the lanes 13.4 -> 8.4 us; the small CNN's 8x8 layer of
 * 16 channels was 4% slower so (its transforms outweigh its products).
 *
 * The input is read in place when its producer wrote a halo (tile_kind
 * asks for one: the patch rows above and below, columns left and right),
 * else from a padded copy.  Lanes past the row's last tile compute from
 * whatever lies after the row and are never stored. */
#include "lower/tile/tile_impl.h"

#include <math.h>

/* LOCAL bytes of the transformed tile row above which the plain kernels
 * run instead (stack per thread: 8 MB for the main thread and the Halide
 * pool's, glibc's default).  It was 160 KB; 320 KB takes in 256 input
 * channels at 32 x 32 (F(4x4), one row of 8 tiles: 288 KB; fpn_small's head,
 * 79 GFLOPS in the GEMM form: the model 0.75x its time at 1 thread, 0.72x at
 * 2) and at 14 x 14 with two tile rows a group on AVX2 (ResNet-18's third
 * stage: 0.86x at 1 thread, 0.84x at 2; Zen 3, alternating runs). */
#define WINO_MAX_LOCAL (320 * 1024)
#define WINO_MAX_A 6
/* Input channels up to which the GEMM's loop over them is unrolled: the
 * short reductions of narrow layers run as straight-line code instead of
 * a loop of 16 or 32 steps per position (ResNet-8 -2.4%, SqueezeNet 1T
 * -2.6%, alternating runs; up to 64, ResNet-8 gained 0.6% more but
 * ResNet-18's compile took 2.2 s instead of 1.45). */
#define WINO_UNROLL_C 32


/* F(m x m, 3 x 3): output tiles of m x m from input patches of a = m + 2
 * rows and columns; B^T [a][a], G [a][3], A^T [m][a] (Lavin & Gray's
 * interpolation points 0, +-1 (m = 2); 0, +-1, +-2 (m = 4)). */
typedef struct Wino {
    int m, a;
    double bt[WINO_MAX_A][WINO_MAX_A], g[WINO_MAX_A][3], at[4][WINO_MAX_A];
} Wino;

static const Wino F23 = {
    2, 4,
    { { 1, 0, -1, 0 }, { 0, 1, 1, 0 }, { 0, -1, 1, 0 }, { 0, 1, 0, -1 } },
    { { 1, 0, 0 }, { .5, .5, .5 }, { .5, -.5, .5 }, { 0, 0, 1 } },
    { { 1, 1, 1, 0 }, { 0, 1, -1, -1 } },
};

static const Wino F43 = {
    4, 6,
    { { 4, 0, -5, 0, 1, 0 }, { 0, -4, -4, 1, 1, 0 }, { 0, 4, -4, -1, 1, 0 },
      { 0, -2, -1, 2, 1, 0 }, { 0, 2, -1, -2, 1, 0 }, { 0, 4, 0, -5, 0, 1 } },
    { { 1 / 4., 0, 0 }, { -1 / 6., -1 / 6., -1 / 6. }, { -1 / 6., 1 / 6., -1 / 6. },
      { 1 / 24., 1 / 12., 1 / 6. }, { 1 / 24., -1 / 12., 1 / 6. }, { 0, 0, 1 } },
    { { 1, 1, 1, 1, 1, 0 }, { 0, 1, -1, 2, -2, 0 }, { 0, 1, 1, 4, 4, 0 }, { 0, 1, -1, 8, -8, 1 } },
};

/* How a layer's tiles fill the vectors.  The lanes run along the tiles of
 * a tile row: two registers (NR = tile_nr) when the row fills three
 * quarters of them, else one; a row narrower than that takes the smallest
 * power of two nr_row >= its tiles, and G = one register / nr_row tile rows
 * share a vector (lanes g*nr_row + l: tile l of row g of the group). */
typedef struct WinoLayout {
    int64_t TH, TW;      /* output tiles down and across */
    int nr_row, G;       /* lanes over one tile row's piece; tile rows per vector */
    int nr;              /* lanes of the GEMM's vectors: G * nr_row */
    int64_t TWp, THg;    /* tiles per row rounded up to nr_row; groups of G tile rows */
    int64_t local;       /* bytes of the transformed input of one group */
    double util;         /* outputs wanted / outputs computed */
    int cl;              /* the GEMM's lanes along the output channels (a map of few tiles) */
} WinoLayout;

static void wino_layout(const LowSchedule *s, const IrWindow *w, const Wino *v, WinoLayout *y)
{
    int64_t m = v->m;
    int vec = s->tile_nr / 2, nr = s->tile_nr;
    y->TH = (w->out[0] + m - 1) / m;
    y->TW = (w->out[1] + m - 1) / m;
    while (nr > vec && y->TW * 4 < nr * 3)
        nr /= 2;
    y->G = 1;
    if (y->TW * 4 < nr * 3) {
        while (nr > 2 && y->TW <= nr / 2)
            nr /= 2;
        y->G = vec / nr;
    }
    y->nr_row = nr;
    y->nr = nr * y->G;
    y->TWp = (y->TW + nr - 1) / nr * nr;
    y->THg = (y->TH + y->G - 1) / y->G;
    y->local = (int64_t)v->a * v->a * 4 * y->G * y->TWp * w->channels_in;
    y->util = (double)(w->out[0] * w->out[1]) / ((double)(m * y->G * y->THg) * (double)(m * y->TWp));
    /* too few tiles for the lanes (under 60% of them used): with the
     * channels in the lanes instead, all T tiles are one group (the input
     * transform's vector: T lanes, tile row l / TW), when T rows of
     * accumulators leave registers for the channels, the output channels
     * fill two vectors at least (16 of them: the small CNN's 8x8 layer ran
     * 4% slower), the map has two tile rows (the input transform's whole
     * registers) and U, read once per call, stays within a core's L2 */
    y->cl = 0;
    int64_t T = y->TH * y->TW, ubytes = (int64_t)v->a * v->a * w->channels_in * w->channels_out * 4;
    if (y->util < 0.6 && T <= 8 && y->TH > 1 && w->channels_out >= s->tile_nr && ubytes <= (1 << 20)) {
        y->cl = 1;
        y->G = (int)y->TH;
        y->nr_row = (int)y->TW;
        y->nr = (int)T;
        y->TWp = y->TW;
        y->THg = 1;
        y->local = (int64_t)v->a * v->a * 4 * T * w->channels_in;
        y->util = (double)(w->out[0] * w->out[1]) / ((double)(m * y->TH) * (double)(m * y->TW));
    }
}

/* The variant for window w, or NULL: of F(4x4) and F(2x2), the one with
 * fewer multiplications per output wanted (2.25 or 4, over the share of
 * the computed outputs that are wanted), at least 60% of the computed
 * outputs wanted and the transformed input of a group of tile rows within
 * the LOCAL budget (WINO_MAX_LOCAL; a layer past it runs in the GEMM
 * form).  F(2x2) only for at most WINO_F23_MAX_CIN input channels: from 64
 * on the GEMM form's long reduction (K = 9 C) runs near the multiply-add
 * peak, while F(2x2)'s products, one vector of tiles a block, load a
 * broadcast per multiply-add.  Measured at 12x12 (where F(4x4) leaves 44%
 * of its outputs unwanted) and 10x10, F(2x2) over the other form (minimum
 * of 6-8 alternating rounds, Zen 3 AVX2): 16 -> 16 0.65, 32 -> 32 0.88,
 * 32 -> 64 0.93; 64 -> 16 1.36, 64 -> 64 (10x10) 1.45, 64 -> 128 1.20,
 * 128 -> 32 1.22, 128 -> 128 1.37, 256 -> 256 1.35. */
#define WINO_F23_MAX_CIN 32
static const Wino *wino_pick(const LowSchedule *s, const IrWindow *w)
{
    if (!s || s->tile_nr < 16 || w->rank != 2 || w->group != 1)
        return NULL;
    for (int i = 0; i < 2; i++)
        if (w->kernel[i] != 3 || w->stride[i] != 1 || w->dilation[i] != 1)
            return NULL;
    if (w->channels_in < 8 || w->channels_out < 16 || w->out[0] < 2 || w->out[1] < 2 ||
        w->channels_in > WINO_MAX_LOCAL)
        return NULL;
    const Wino *vs[2] = { &F43, &F23 }, *best = NULL;
    double best_cost = 0;
    for (int i = 0; i < 2; i++) {
        WinoLayout y;
        wino_layout(s, w, vs[i], &y);
        double cost = (double)(vs[i]->a * vs[i]->a) / (vs[i]->m * vs[i]->m) / y.util;
        if (vs[i] == &F23 && w->channels_in > WINO_F23_MAX_CIN)
            continue;
        if (y.util >= 0.6 && y.local <= WINO_MAX_LOCAL && (!best || cost < best_cost)) {
            best = vs[i];
            best_cost = cost;
        }
    }
    return best;
}

int tile_wino_pays(const LowSchedule *s, const IrWindow *w) { return wino_pick(s, w) != NULL; }

void tile_wino_halo(const LowSchedule *s, const IrWindow *w, TileHalo *h)
{
    const Wino *v = wino_pick(s, w);
    WinoLayout y;
    wino_layout(s, w, v, &y);
    int64_t m = v->m, pt = w->pad_begin[0], pl = w->pad_begin[1];
    int64_t bottom = m * y.TH + 2 - (w->in[0] + pt), right = m * y.TW + 2 - (w->in[1] + pl);
    h->rows = pt > bottom ? pt : bottom;
    h->cols = pl > right ? pl : right;
    /* the last tile vector's columns, read as one m*nr_row wide load per tap */
    h->reach = m * y.TWp + m + 1 - pl;
    h->fill = 0.0;
    h->mask = 0;
}

/* sum_k c[k] * v_k over the n float variables v (positive terms first). */
static LoopExpr *combo(Low *L, const double *c, const int *v, int n)
{
    LoopExpr *e = NULL;
    for (int neg = 0; neg < 2; neg++)
        for (int k = 0; k < n; k++) {
            if (c[k] == 0 || (c[k] < 0) != neg)
                continue;
            LoopExpr *x = low_v(L, v[k]);
            double f = c[k] < 0 ? -c[k] : c[k];
            if (f != 1)
                x = low_bin(L, LOOP_MUL, low_const(L, IR_DT_F32, f), x);
            e = e ? low_bin(L, neg ? LOOP_SUB : LOOP_ADD, e, x) : neg ? loop_un(L->p, LOOP_NEG, x) : x;
        }
    return e ? e : low_const(L, IR_DT_F32, 0.0);
}

/* out[i] = sum_k t[i][k] * v_k for the nrow rows of t (n columns), sharing
 * what rows and columns have in common through LETs in blk:
 *
 *  - columns p, q whose coefficients are equal in some rows and opposite
 *    in the others (A^T's 1, 2 and 3, 4):  s = v_p + v_q, d = v_p - v_q,
 *    and each row c*s or c*d in place of its two terms
 *      (F(4x4)'s A^T: 14 operations a column -> 10);
 *  - rows i, j equal on some columns (E) and opposite on the others (O,
 *    its coefficients' common magnitude f taken out):  row_i = E + f*O',
 *    row_j = E - f*O'  (B^T's rows 1, 2 and 3, 4: 16 -> 12).
 *
 * (Float sums are not reassociated by LLVM, so this is what the machine
 * runs; the results differ from the rows summed one by one in rounding
 * only.)  0, or -1 out of memory. */
static int wino_rows(Low *L, LoopStmt *blk, const double (*t)[WINO_MAX_A], int nrow, int n, const int *v,
                     LoopExpr **out)
{
    enum { MAXB = 2 * WINO_MAX_A };
    double c[WINO_MAX_A][MAXB] = { { 0 } };
    int b[MAXB], nb = 0, used[MAXB] = { 0 }, done[WINO_MAX_A] = { 0 };
    for (int k = 0; k < n; k++)
        b[nb++] = v[k];
    for (int i = 0; i < nrow; i++)
        for (int k = 0; k < n; k++)
            c[i][k] = t[i][k];
    for (int p = 0; p < n; p++)                   /* column pairs */
        for (int q = p + 1; q < n && !used[p]; q++) {
            int same = 0, opp = 0, ok = !used[q];
            for (int i = 0; ok && i < nrow; i++) {
                same += c[i][p] != 0 && c[i][p] == c[i][q];
                opp += c[i][p] != 0 && c[i][p] == -c[i][q];
                ok = c[i][p] == c[i][q] || c[i][p] == -c[i][q];
            }
            if (!ok || !same || !opp || nb + 2 > MAXB)
                continue;
            int sv = low_let(L, blk, "s", add(L, low_v(L, v[p]), low_v(L, v[q])), 0);
            int dv = low_let(L, blk, "d", low_bin(L, LOOP_SUB, low_v(L, v[p]), low_v(L, v[q])), 0);
            if (sv < 0 || dv < 0)
                return -1;
            for (int i = 0; i < nrow; i++) {
                c[i][c[i][p] == c[i][q] ? nb : nb + 1] = c[i][p];
                c[i][p] = c[i][q] = 0;
            }
            b[nb++] = sv;
            b[nb++] = dv;
            used[p] = used[q] = 1;
        }
    for (int i = 0; i < nrow; i++)                /* row pairs */
        for (int j = i + 1; j < nrow && !done[i]; j++) {
            int same = 0, opp = 0, ok = !done[j];
            double f = 0;
            for (int k = 0; ok && k < nb; k++) {
                ok = c[i][k] == c[j][k] || c[i][k] == -c[j][k];
                if (c[i][k] != 0 && c[i][k] == c[j][k])
                    same++;
                else if (c[i][k] != 0) {
                    opp++;
                    f = f == 0 || f == fabs(c[i][k]) ? fabs(c[i][k]) : -1;
                }
            }
            if (!ok || !same || !opp)
                continue;
            if (f < 0)
                f = 1;
            double ce[MAXB], co[MAXB];
            for (int k = 0; k < nb; k++) {
                ce[k] = c[i][k] == c[j][k] ? c[i][k] : 0;
                co[k] = c[i][k] == c[j][k] ? 0 : c[i][k] / f;
            }
            int ev = low_let(L, blk, "ev", combo(L, ce, b, nb), 0);
            int ov = low_let(L, blk, "od", combo(L, co, b, nb), 0);
            if (ev < 0 || ov < 0)
                return -1;
            int eo[2] = { ev, ov };
            double pi[2] = { 1, f }, pj[2] = { 1, -f };
            if (!(out[i] = combo(L, pi, eo, 2)) || !(out[j] = combo(L, pj, eo, 2)))
                return -1;
            done[i] = done[j] = 1;
        }
    for (int i = 0; i < nrow; i++)
        if (!done[i] && !(out[i] = combo(L, c[i], b, nb)))
            return -1;
    return 0;
}

/* U = G g G^T packed [xi][kt][c][MR]; rows past K copy row K-1. */
static int pack_u(Low *L, const Wino *v, const float *wt, int64_t C, int64_t K, int mr, int64_t KT)
{
    LoopProgram *p = L->p;
    int a = v->a;
    IrShape sh = { .rank = 1, .dims = { (int64_t)a * a * KT * C * mr } };
    float *up = util_arena_array(&p->arena, (size_t)sh.dims[0], sizeof *up);
    int ub = up ? loop_add_buf(p, "wino_u", IR_DT_F32, &sh, LOOP_ST_CONST) : -1;
    if (ub < 0)
        return -1;
    p->bufs[ub].data = up;
    for (int64_t kk = 0; kk < KT * mr; kk++)
        for (int64_t c = 0; c < C; c++) {
            const float *g = wt + ((kk < K ? kk : K - 1) * C + c) * 9;
            double t[WINO_MAX_A][3];
            for (int i = 0; i < a; i++)
                for (int j = 0; j < 3; j++)
                    t[i][j] = v->g[i][0] * g[j] + v->g[i][1] * g[3 + j] + v->g[i][2] * g[6 + j];
            for (int i = 0; i < a; i++)
                for (int j = 0; j < a; j++) {
                    double u = t[i][0] * v->g[j][0] + t[i][1] * v->g[j][1] + t[i][2] * v->g[j][2];
                    up[(((i * a + j) * KT + kk / mr) * C + c) * mr + kk % mr] = (float)u;
                }
        }
    return ub;
}

/* Elements between the transformed inputs of consecutive positions xi:
 * C * Tv and a cache line more.  C * Tv floats alone is often a multiple
 * of 4 KB, and the a*a stores of one patch's transform then fell in one
 * set of the L1 cache (SqueezeNet's 13x13 expansions: the transform took
 * twice as long). */
static int64_t wino_xi_stride(int64_t C, int64_t Tv) { return C * Tv + 16; }

/* The input transform of one group of tile rows into vrow [xi][c][G*TWp]:
 * for c < C, g < G, vb < TWp/nr_row, the lanes along the tiles of tile row
 * min(th*G + g, TH-1) (a group past the last tile row repeats it; those
 * lanes are never stored), V = B^T d B.  xr: element (n, 0, 0, 0) in
 * padded coordinates. */
static int input_transform(Low *L, const Wino *v, const WinoLayout *y, LoopStmt *tile, int xp, int xr, int th,
                           int vrow, int64_t C)
{
    LoopProgram *p = L->p;
    int64_t xs[IR_MAX_RANK];
    low_strides(L, xp, xs);
    int a = v->a, m = v->m, nr = y->nr_row, c, g, vb, lane;
    int64_t Tv = y->G * y->TWp;
    /* G tile rows of one vector each a stride-m load of its own (codegen/vector.c
     * grouped_load), when every group's rows exist: the transform then runs on
     * whole registers (ResNet-8's 32x32 layers: 2 rows of 8 tiles) instead of
     * G vectors of nr lanes */
    int whole = y->G > 1 && y->TH % y->G == 0 && y->TWp == nr;
    LoopStmt *b1 = loop_block(p), *vt = loop_block(p);
    if (!b1 || !vt || low_vars(L, 1, "ci", &c) || low_vars(L, 1, "g", &g) || low_vars(L, 1, "vb", &vb) ||
        low_vars(L, 1, "c", &lane))
        return -1;
    LoopExpr *trow = whole ? mul(L, low_v(L, th), y->G)
                           : low_bin(L, LOOP_MIN, add(L, mul(L, low_v(L, th), y->G), low_v(L, g)), low_i(L, y->TH - 1));
    LoopExpr *xc = add(L, add(L, low_v(L, xr), mul(L, low_v(L, c), xs[1])),
                       add(L, mul(L, trow, m * xs[2]), whole ? low_i(L, 0) : mul(L, low_v(L, vb), (int64_t)m * nr)));
    int xcv = low_let(L, b1, "xc", xc, 0);
    if (xcv < 0)
        return -1;
    int d[WINO_MAX_A][WINO_MAX_A], e[WINO_MAX_A][WINO_MAX_A];
    for (int i = 0; i < a; i++)
        for (int j = 0; j < a; j++) {
            /* lane l: tile l of the row (whole: tile l % nr of tile row l / nr) */
            LoopExpr *tcol = whole ? add(L, mul(L, low_bin(L, LOOP_DIV, low_v(L, lane), low_i(L, nr)), m * xs[2]),
                                         mul(L, low_bin(L, LOOP_MOD, low_v(L, lane), low_i(L, nr)), m))
                                   : mul(L, low_v(L, lane), m);
            LoopExpr *at = add(L, add(L, low_v(L, xcv), low_i(L, i * xs[2] + j)), tcol);
            LoopExpr *ld = low_load(L, xp, at, IR_DT_F32);
            if (ld && ld->kind == LOOP_E_LOAD)   /* tap (0, 0) reads xc: all between is the buffer's */
                ld->u.load.lead = (int)(i * xs[2] + j);
            if ((d[i][j] = low_let(L, vt, "d", ld, 0)) < 0)
                return -1;
        }
    LoopExpr *r[WINO_MAX_A];
    for (int j = 0; j < a; j++) {               /* e = B^T d: along the patch's columns */
        int col[WINO_MAX_A];
        for (int k = 0; k < a; k++)
            col[k] = d[k][j];
        if (wino_rows(L, vt, v->bt, a, a, col, r))
            return -1;
        for (int i = 0; i < a; i++)
            if ((e[i][j] = low_let(L, vt, "e", r[i], 0)) < 0)
                return -1;
    }
    for (int i = 0; i < a; i++) {               /* V = e B: along its rows */
        if (wino_rows(L, vt, v->bt, a, a, e[i], r))
            return -1;
        for (int j = 0; j < a; j++) {
            LoopExpr *at = add(L, add(L, mul(L, low_v(L, c), Tv), low_i(L, (i * a + j) * wino_xi_stride(C, Tv))),
                               whole ? low_v(L, lane)
                                     : add(L, add(L, mul(L, low_v(L, g), y->TWp), mul(L, low_v(L, vb), nr)),
                                           low_v(L, lane)));
            if (low_add(L, vt, low_store(L, vrow, at, r[j])))
                return -1;
        }
    }
    if (tile_vec_loop(L, b1, lane, vt, whole ? (int)Tv : nr))
        return -1;
    if (whole)
        return low_add(L, tile, low_nest(L, 1, &c, &C, b1));
    int vars[3] = { c, g, vb };
    int64_t ext[3] = { C, y->G, y->TWp / nr };
    return low_add(L, tile, low_nest(L, 3, vars, ext, b1));
}

/* Y = A^T M A (+ bias) for the a*a values mv (LETs) of one tile, output
 * (i, j) stored into obuf at base + i*si + j*sj + lane*sl; appended to vt. */
static int out_tile(Low *L, const Wino *v, LoopStmt *vt, const int *mv, LoopExpr *bias, int obuf, int64_t base,
                    int64_t si, int64_t sj, int64_t sl, int lane)
{
    int a = v->a, m = v->m, s[4][WINO_MAX_A];
    LoopExpr *r[WINO_MAX_A];
    for (int l = 0; l < a; l++) {               /* A^T M: along the columns */
        int col[WINO_MAX_A];
        for (int k = 0; k < a; k++)
            col[k] = mv[k * a + l];
        if (wino_rows(L, vt, v->at, m, a, col, r))
            return -1;
        for (int i = 0; i < m; i++)
            if ((s[i][l] = low_let(L, vt, "s", r[i], 0)) < 0)
                return -1;
    }
    for (int i = 0; i < m; i++) {               /* (A^T M) A + bias: along the rows */
        if (wino_rows(L, vt, v->at, m, a, s[i], r))
            return -1;
        for (int j = 0; j < m; j++) {
            LoopExpr *y = r[j];
            if (bias)
                y = add(L, y, loop_expr_copy(L->p, bias));
            LoopExpr *at = add(L, low_i(L, base + i * si + j * sj), mul(L, low_v(L, lane), sl));
            if (low_add(L, vt, low_store(L, obuf, at, y)))
                return -1;
        }
    }
    return 0;
}

/* The output transform Y = A^T M A + bias of row r of the block (output
 * channel co) from mloc into obuf: m output rows of m*NR columns, the
 * tiles' columns interleaved. */
static int output_transform(Low *L, const Wino *v, LoopStmt *br, int mloc, int obuf, int rr, int co, int bb, int mr,
                            int nr)
{
    LoopProgram *p = L->p;
    int a = v->a, m = v->m, lane;
    LoopStmt *vt = loop_block(p);
    if (!vt || low_vars(L, 1, "c", &lane))
        return -1;
    int mv[WINO_MAX_A * WINO_MAX_A];
    for (int q = 0; q < a * a; q++) {
        LoopExpr *at = add(L, add(L, low_i(L, (int64_t)q * mr * nr), mul(L, low_v(L, rr), nr)), low_v(L, lane));
        if ((mv[q] = low_let(L, vt, "m", low_load(L, mloc, at, IR_DT_F32), 0)) < 0)
            return -1;
    }
    LoopExpr *bias = bb >= 0 ? low_load(L, bb, low_v(L, co), IR_DT_F32) : NULL;
    if (out_tile(L, v, vt, mv, bias, obuf, 0, (int64_t)m * nr, 1, m, lane))
        return -1;
    return tile_vec_loop(L, br, lane, vt, nr);
}

/* With the tiles in the lanes: per row r of the block (output channel co),
 * the output transform into obuf, whose row i holds output row i of the
 * G tile rows side by side (piece g, m*nr_row columns: output row
 * (th*G + g)*m + i), stored row by row. */
static int output_rows(Low *L, const Wino *v, const WinoLayout *y, LoopStmt *blk, int mloc, int obuf, int bb, int kt,
                       int n, int th, int vb, int mr, int64_t K, int64_t OH, int64_t OW)
{
    LoopProgram *p = L->p;
    int m = v->m, rr;
    LoopStmt *br = loop_block(p);
    if (!br || low_vars(L, 1, "r", &rr))
        return -1;
    LoopExpr *cv = low_bin(L, LOOP_MIN, add(L, mul(L, low_v(L, kt), mr), low_v(L, rr)), low_i(L, K - 1));
    int co = low_let(L, br, "co", cv, 0);
    if (co < 0 || output_transform(L, v, br, mloc, obuf, rr, co, bb, mr, y->nr))
        return -1;
    int64_t gm = (int64_t)y->G * m;
    for (int g = 0; g < y->G; g++)
        for (int i = 0; i < m; i++) {
            LoopStmt *bi = loop_block(p);
            LoopExpr *ohe = add(L, mul(L, low_v(L, th), gm), low_i(L, (int64_t)g * m + i));
            int oh = bi ? low_let(L, bi, "oh", ohe, 0) : -1;
            int ow0 = oh < 0 ? -1 : low_let(L, bi, "ow0", mul(L, low_v(L, vb), m * y->nr_row), 0);
            if (ow0 < 0 || tile_row_out(L, bi, obuf, i * y->G + g, (int)m * y->nr_row, n, co, oh, ow0, OW, 0))
                return -1;
            LoopStmt *st = bi;
            if (OH % gm && g * m + i >= OH % gm)    /* rows of the last group past the output */
                st = loop_if(p, low_bin(L, LOOP_LT, loop_expr_copy(p, ohe), low_i(L, OH)), bi, NULL);
            if (!st || low_add(L, br, st))
                return -1;
        }
    int64_t rext = mr;
    return low_add(L, blk, low_nest(L, 1, &rr, &rext, br));
}

/* With the GEMM's lanes along the output channels (WinoLayout.cl): per
 * tile row ty and each `lanes` of the block's mr channels (kv), the output
 * transform of each of the row's TW tiles over those channels, then each
 * channel's m output rows stored, their columns read across the tiles'
 * transforms (zb: [TW][m][m][lanes], a LOCAL whose reads the code
 * generator resolves in registers: every index constant once the channel
 * and row statements are unrolled here). */
static int output_channels(Low *L, const Wino *v, const WinoLayout *y, LoopStmt *blk, int mloc, int zb, int bb,
                           int kt, int n, int mr, int lanes, int64_t K, int64_t OH, int64_t OW)
{
    LoopProgram *p = L->p;
    int a = v->a, m = v->m, nr = y->nr, TW = (int)y->TW, ty, kv;
    LoopStmt *body = loop_block(p);
    if (!body || low_vars(L, 1, "ty", &ty) || low_vars(L, 1, "kv", &kv))
        return -1;
    LoopExpr *k0e = add(L, mul(L, low_v(L, kt), mr), mul(L, low_v(L, kv), lanes));
    int k0 = low_let(L, body, "k0", k0e, 0);
    if (k0 < 0)
        return -1;
    for (int tx = 0; tx < TW; tx++) {
        int lane;
        LoopStmt *vt = loop_block(p);
        if (!vt || low_vars(L, 1, "c", &lane))
            return -1;
        int mv[WINO_MAX_A * WINO_MAX_A];
        for (int q = 0; q < a * a; q++) {       /* M[q][tile ty*TW + tx][kv*lanes + lane] */
            LoopExpr *at = add(L, add(L, low_i(L, (int64_t)q * mr * nr + (int64_t)tx * mr), mul(L, low_v(L, ty), TW * mr)),
                               add(L, mul(L, low_v(L, kv), lanes), low_v(L, lane)));
            if ((mv[q] = low_let(L, vt, "m", low_load(L, mloc, at, IR_DT_F32), 0)) < 0)
                return -1;
        }
        LoopExpr *bias = NULL;
        if (bb >= 0) {
            LoopExpr *ch = add(L, low_v(L, k0), low_v(L, lane));
            if (K % mr)                          /* the last block's lanes past K: channel K-1 again */
                ch = low_bin(L, LOOP_MIN, ch, low_i(L, K - 1));
            bias = low_load(L, bb, ch, IR_DT_F32);
        }
        if (out_tile(L, v, vt, mv, bias, zb, (int64_t)tx * m * m * lanes, (int64_t)m * lanes, lanes, 1, lane))
            return -1;
        if (tile_vec_loop(L, body, lane, vt, lanes))
            return -1;
    }
    for (int kk = 0; kk < lanes; kk++)
        for (int i = 0; i < m; i++) {
            LoopStmt *bi = loop_block(p);
            int col;
            if (!bi || low_vars(L, 1, "c", &col))
                return -1;
            LoopExpr *che = low_bin(L, LOOP_MIN, add(L, low_v(L, k0), low_i(L, kk)), low_i(L, K - 1));
            LoopExpr *ohe = add(L, mul(L, low_v(L, ty), m), low_i(L, i));
            int co = low_let(L, bi, "co", che, 0);
            int oh = co < 0 ? -1 : low_let(L, bi, "oh", ohe, 0);
            int ow0 = oh < 0 ? -1 : low_let(L, bi, "ow0", low_i(L, 0), 0);
            if (ow0 < 0)
                return -1;
            /* column col: output (i, col % m) of tile col / m */
            LoopExpr *zi = add(L, mul(L, add(L, mul(L, low_bin(L, LOOP_DIV, low_v(L, col), low_i(L, m)), (int64_t)m * m),
                                             add(L, low_i(L, (int64_t)i * m), low_bin(L, LOOP_MOD, low_v(L, col), low_i(L, m)))),
                                       lanes),
                               low_i(L, kk));
            if (tile_row_store(L, bi, col, low_load(L, zb, zi, IR_DT_F32), TW * m, n, co, oh, ow0, OW, 0))
                return -1;
            LoopStmt *st = bi;
            if (OH % m && i >= OH % m)          /* rows of the last tile row past the output */
                st = loop_if(p, low_bin(L, LOOP_LT, loop_expr_copy(p, ohe), low_i(L, OH)), bi, NULL);
            if (!st || low_add(L, body, st))
                return -1;
        }
    int vars[2] = { ty, kv };
    int64_t ext[2] = { y->TH, mr / lanes };
    return low_add(L, blk, low_nest(L, 2, vars, ext, body));
}

int tile_wino_emit(Low *L, const IrWindow *w, int x, const float *wt, const TileHalo *h)
{
    LoopProgram *p = L->p;
    const Wino *v = wino_pick(L->s, w);
    int64_t C = w->channels_in, K = w->channels_out, OH = w->out[0], OW = w->out[1], m = v->m, aa = v->a * v->a;
    WinoLayout y;
    wino_layout(L->s, w, v, &y);
    int64_t TH = y.TH, TW = y.TW, TWp = y.TWp, Tv = y.G * TWp;
    int nr = y.nr, lanes = L->s->tile_nr / 2, mr;
    if (y.cl) {          /* mr: the channel lanes, as many registers as the nr tile rows leave */
        int budget = lanes >= 16 ? 28 : 14;
        int64_t want = (K + lanes - 1) / lanes, fit = budget / (nr + 1);
        if (L->s->threads > 1 && want >= 2)          /* two blocks at least: the threads' parts */
            want = (want + 1) / 2;
        mr = lanes * (int)(want < fit ? want : fit > 0 ? fit : 1);
    } else if (nr == lanes && nr >= 16 && K % 16 == 0) {
        mr = 16;         /* one vector of tiles on 32 registers: 16 rows of accumulators when they
                            divide K (the short reductions over C need many chains) */
    } else {
        mr = tile_pick_mr(L, nr, K);
    }
    int64_t KT = (K + mr - 1) / mr;
    int64_t xoff = 0;
    int masked = 0, xp = x;
    if (!tile_in_place(L, x, w, h, &xoff, &masked)) {      /* (h->mask is 0: never masked) */
        int64_t ph = w->in[0] + w->pad_begin[0] + w->pad_end[0], pw = w->in[1] + w->pad_begin[1] + w->pad_end[1];
        int64_t extra_h = m * TH + 2 > ph ? m * TH + 2 - ph : 0, extra = m * TW + 2 > pw ? m * TW + 2 - pw : 0;
        int64_t slack = m * TWp + m + 1 - (pw + extra);
        xoff = 0;
        if ((xp = tile_pad_input(L, x, w, extra_h, extra, slack > 1 ? (int)slack : 1, 0.0)) < 0)
            return -1;
    }
    int bb = low_has(L, 2) ? low_in(L, 2) : -1;
    if (low_has(L, 2) && bb < 0)
        return -1;
    int ub = pack_u(L, v, wt, C, K, mr, KT);
    IrShape vs = { .rank = 1, .dims = { aa * wino_xi_stride(C, Tv) } }, ms = { .rank = 1, .dims = { aa * mr * nr } };
    /* the output transform's rows (with cl: the transforms of a tile row's tiles, output_channels) */
    IrShape os = { .rank = 1, .dims = { y.cl ? TW * m * m * lanes : m * m * nr } };
    int vrow = ub < 0 ? -1 : loop_add_buf(p, "wino_v", IR_DT_F32, &vs, LOOP_ST_LOCAL);
    int mloc = vrow < 0 ? -1 : loop_add_buf(p, "wino_m", IR_DT_F32, &ms, LOOP_ST_LOCAL);
    int obuf = mloc < 0 ? -1 : loop_add_buf(p, y.cl ? "wino_z" : "wino_y", IR_DT_F32, &os, LOOP_ST_LOCAL);
    int n, th, kp, kl, vb, xi, c;
    if (obuf < 0 || low_vars(L, 1, "n", &n) || low_vars(L, 1, "th", &th) || low_vars(L, 1, "kp", &kp) ||
        low_vars(L, 1, "kl", &kl) || low_vars(L, 1, "vb", &vb) || low_vars(L, 1, "xi", &xi) || low_vars(L, 1, "ci", &c))
        return low_oom(L);
    int64_t xs[IR_MAX_RANK];
    low_strides(L, xp, xs);
    LoopStmt *tile = loop_block(p);
    int xr = tile ? low_let(L, tile, "xr", add(L, mul(L, low_v(L, n), xs[0]), low_i(L, xoff)), 0) : -1;
    if (xr < 0 || input_transform(L, v, &y, tile, xp, xr, th, vrow, C))
        return low_oom(L);

    /* per block (kt, vb), per xi: the GEMM over c into registers, spilled to mloc */
    int acc;
    LoopStmt *blk, *kb, *bx = loop_block(p);
    if (!bx || tile_block_start(L, mr, nr, &acc, &blk, &kb))
        return low_oom(L);
    /* with threads, a single group of tile rows (a small map) would give
     * them nothing to share: then the output channels are split in P = 2
     * parts, each transforming the input itself */
    int64_t P = L->s->threads > 1 && y.THg < 2 && KT >= 2 ? 2 : 1, KTP = (KT + P - 1) / P;
    LoopExpr *kte = low_bin(L, LOOP_MIN, add(L, mul(L, low_v(L, kp), KTP), low_v(L, kl)), low_i(L, KT - 1));
    int kt = low_let(L, blk, "kt", kte, 0);
    if (kt < 0)
        return low_oom(L);
    /* the accumulators: [mr channels][nr tiles], or with cl [nr tiles][mr channels] */
    int arows = y.cl ? nr : mr, alanes = y.cl ? mr : nr;
    for (int r = 0; r < arows; r++) {
        int lane;
        if (low_vars(L, 1, "c", &lane) || tile_acc_set(L, bx, acc, r, alanes, lane, low_const(L, IR_DT_F32, 0.0)))
            return low_oom(L);
    }
    LoopExpr *wbase = mul(L, add(L, mul(L, add(L, mul(L, low_v(L, xi), KT), low_v(L, kt)), C), low_v(L, c)), mr);
    LoopExpr *vo = add(L, add(L, mul(L, low_v(L, xi), wino_xi_stride(C, Tv)), mul(L, low_v(L, c), Tv)),
                       mul(L, low_v(L, vb), nr));
    int wv = low_let(L, kb, "wb", wbase, 0);
    int vov = wv < 0 ? -1 : low_let(L, kb, "vo", vo, 0);
    if (vov < 0)
        return low_oom(L);
    /* U[xi][kt] is C*MR floats in a row, the next position's a panel of KT
     * such further on: too far apart for the hardware's prefetchers, which
     * stop at a page.  In a model whose weights outgrow a core's L2 (so U is
     * not there from the run before), each step fetches the line of
     * position xi + 1 it will read (into L2): ResNet-18's 56x56 and 28x28
     * layers -5 to -14% per kernel (U of 0.6 and 2.4 MB read again for each
     * group of tile rows), SqueezeNet's 13x13 and 27x27 ones -7 to -18 us;
     * ResNet-8 (0.3 MB of weights) ran 1.8% slower with it. */
    if (L->s->prefetch && !tile_weights_cached(L)) {
        LoopExpr *ahead = low_bin(L, LOOP_MIN, add(L, low_v(L, wv), low_i(L, KT * C * mr)), low_i(L, aa * KT * C * mr - 1));
        if (low_add(L, kb, loop_prefetch(p, ub, ahead)))
            return low_oom(L);
    }
    for (int r = 0; r < arows; r++) {
        int lane;
        if (low_vars(L, 1, "c", &lane))
            return low_oom(L);
        LoopExpr *a, *b;
        if (y.cl) {          /* tile r's V broadcast, the channels' U a vector */
            a = low_load(L, vrow, add(L, low_v(L, vov), low_i(L, r)), IR_DT_F32);
            b = low_load(L, ub, add(L, low_v(L, wv), low_v(L, lane)), IR_DT_F32);
        } else {             /* channel r's U broadcast, the tiles' V a vector */
            int wr = low_let(L, kb, "w", low_load(L, ub, add(L, low_v(L, wv), low_i(L, r)), IR_DT_F32), 0);
            if (wr < 0)
                return low_oom(L);
            a = low_v(L, wr);
            b = low_load(L, vrow, add(L, low_v(L, vov), low_v(L, lane)), IR_DT_F32);
        }
        if (tile_acc_update(L, kb, acc, r, alanes, lane, LOOP_ADD, a, b))
            return low_oom(L);
    }
    int64_t cext = C;
    LoopStmt *cl = low_nest(L, 1, &c, &cext, kb);
    if (cl && C <= WINO_UNROLL_C) {                     /* straight-line code for a short reduction */
        cl->u.loop.kind = LOOP_UNROLLED;
        cl->u.loop.factor = (int)C;
    }
    if (low_add(L, bx, cl))
        return low_oom(L);
    for (int r = 0; r < arows; r++) {       /* M[xi] = acc, as it lies */
        int lane;
        if (low_vars(L, 1, "c", &lane))
            return low_oom(L);
        LoopExpr *at = add(L, add(L, mul(L, low_v(L, xi), (int64_t)mr * nr), low_i(L, (int64_t)r * alanes)), low_v(L, lane));
        if (tile_vec_loop(L, bx, lane, low_store(L, mloc, at, tile_acc_at(L, acc, r, alanes, lane)), alanes))
            return low_oom(L);
    }
    if (low_add(L, blk, low_nest(L, 1, &xi, &aa, bx)))
        return low_oom(L);

    if (y.cl ? output_channels(L, v, &y, blk, mloc, obuf, bb, kt, n, mr, lanes, K, OH, OW)
             : output_rows(L, v, &y, blk, mloc, obuf, bb, kt, n, th, vb, mr, K, OH, OW))
        return low_oom(L);
    int bv[2] = { kl, vb };
    int64_t bext[2] = { KTP, Tv / nr };
    if (low_add(L, tile, low_nest(L, 2, bv, bext, blk)))
        return low_oom(L);
    int vars[3] = { n, kp, th };
    int64_t ext[3] = { w->batch, P, y.THg };
    return low_kernel(L, low_nest(L, 3, vars, ext, tile));
}
