/* lower/signal.c — compute templates of STFT and MelWeightMatrix
 * (signal processing) and Det (linear algebra), matching the reference
 * interpreter's kernels (interp/k_signal.c, interp/k_linalg.c): every value
 * is computed in float64 and converted on store.
 *
 *  - STFT: per output bin the direct DFT sum of one windowed frame, built by
 *    low_dft_sum (the shared complex accumulation, angle reduced as
 *    (k t) mod len like the interpreter's);
 *  - MelWeightMatrix: output-driven; each element recomputes its column's
 *    three FFT-bin edges from the (possibly runtime) sample rate and edge
 *    frequencies, so out-of-range runtime values can never index memory;
 *  - Det: Gaussian elimination with partial pivoting on a kernel-local copy
 *    of each matrix, the row swaps flipping the sign, zero for a singular
 *    matrix. */
#include "lower/lower_impl.h"

#include <math.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

#define I(v) low_i(L, (v))
#define V(v) low_v(L, (v))
#define F(v) low_const(L, IR_DT_F64, (v))
#define ADD(a, b) low_bin(L, LOOP_ADD, a, b)
#define SUB(a, b) low_bin(L, LOOP_SUB, a, b)
#define MUL(a, b) low_bin(L, LOOP_MUL, a, b)
#define DIV(a, b) low_bin(L, LOOP_DIV, a, b)
#define CALL1(fn, a) loop_call(L->p, LOOP_I_##fn, 1, (LoopExpr *[]){ a })

/* ----------------------------------------------------------- DFT sums */

int low_dft_sum(Low *L, LoopStmt *blk, const LowDftSum *s, int *re, int *im)
{
    int tv;
    LoopStmt *b = loop_block(L->p);
    if (low_vars(L, 1, "t", &tv) || !b)
        return low_oom(L);
    *re = low_let(L, blk, "re", F(0), 1);
    *im = low_let(L, blk, "im", F(0), 1);
    int av = low_let(L, b, "a", s->load(L, s->ctx, tv, 0), 0);
    int bv = s->cplx ? low_let(L, b, "b", s->load(L, s->ctx, tv, 1), 0) : 0;
    LoopExpr *kt = low_bin(L, LOOP_MOD, MUL(V(s->k), V(tv)), I(s->len));
    /* sign 2 pi ((k t) mod len) / len, in the interpreter's order */
    int ang = low_let(L, b, "ang", DIV(MUL(F(s->sign * 2 * M_PI), low_convert(L, kt, IR_DT_F64)), F((double)s->len)), 0);
    if (*re < 0 || *im < 0 || av < 0 || bv < 0 || ang < 0)
        return low_oom(L);
    int cv = low_let(L, b, "c", CALL1(cos, V(ang)), 0), sv = low_let(L, b, "s", CALL1(sin, V(ang)), 0);
    if (cv < 0 || sv < 0)
        return low_oom(L);
    LoopExpr *dre = MUL(V(av), V(cv)), *dim = MUL(V(av), V(sv));
    if (s->cplx) {
        dre = SUB(dre, MUL(V(bv), V(sv)));
        dim = ADD(dim, MUL(V(bv), V(cv)));
    }
    if (low_add(L, b, loop_assign(L->p, *re, ADD(V(*re), dre))) ||
        low_add(L, b, loop_assign(L->p, *im, ADD(V(*im), dim))) ||
        low_add(L, blk, loop_for(L->p, tv, I(s->cnt), LOOP_SERIAL, b)))
        return low_oom(L);
    return 0;
}

/* ---------------------------------------------------------------- STFT */

typedef struct Stft {
    int x, w;               /* signal [batch, length, 1|2], window (or -1) */
    int bv, fv;             /* batch and frame variables */
    int64_t step;
} Stft;

/* Element part of frame sample t, times the window's tap t. */
static LoopExpr *stft_load(Low *L, void *ctx, int t, int part)
{
    const Stft *s = ctx;
    LoopExpr *idx[3] = { V(s->bv), ADD(MUL(V(s->fv), I(s->step)), V(t)), I(part) };
    LoopExpr *v = low_load(L, s->x, low_index(L, s->x, idx), IR_DT_F64);
    if (s->w >= 0)
        v = MUL(v, low_load(L, s->w, V(t), IR_DT_F64));
    return v;
}

int low_stft(Low *L)
{
    const IrNode *n = L->n;
    Stft s = { .x = low_in(L, 0), .w = low_in(L, 2) };
    int y = low_out(L, 0);
    const LoopBuf *xb = low_buf(L, s.x), *yb = low_buf(L, y);
    int64_t fl = 0;
    int has_fl = low_has(L, 3);
    if (low_known_ints(L, 1, &s.step, 1) != 1 || (has_fl && low_known_ints(L, 3, &fl, 1) != 1))
        return ir_node_error(L->g, n, L->d, "STFT: frame_step and frame_length must be known at compile time");
    IrShape o;
    if (ir_stft_params(L->g, n, &xb->shape, s.step, s.w >= 0 ? &low_buf(L, s.w)->shape : NULL,
                       has_fl ? &fl : NULL, &o, L->d))
        return -1;
    if (!has_fl)
        fl = s.w >= 0 ? low_buf(L, s.w)->shape.dims[0] : xb->shape.dims[1];
    int v[3];
    if (low_vars(L, 3, "i", v))
        return low_oom(L);
    s.bv = v[0];
    s.fv = v[1];
    LowDftSum ds = { .k = v[2], .cnt = fl, .len = fl, .cplx = xb->shape.dims[2] == 2, .sign = -1,
                     .load = stft_load, .ctx = &s };
    LoopStmt *blk = loop_block(L->p);
    int re, im;
    if (!blk || low_dft_sum(L, blk, &ds, &re, &im))
        return low_oom(L);
    for (int part = 0; part < 2; part++) {
        LoopExpr *yi[4] = { V(v[0]), V(v[1]), V(v[2]), I(part) };
        if (low_add(L, blk, low_store(L, y, low_index(L, y, yi), V(part ? im : re))))
            return low_oom(L);
    }
    return low_kernel(L, low_nest(L, 3, v, yb->shape.dims, blk));
}

/* ------------------------------------------------------ MelWeightMatrix */

/* Scalar input k as float64: its compile-time value, or a load. */
static LoopExpr *scalar_f64(Low *L, int k)
{
    const IrArray *a = low_known(L, k);
    return a ? F(ir_load_f64(a->dtype, a->data, 0)) : low_load(L, low_in(L, k), I(0), IR_DT_F64);
}

/* 2595 log10(1 + hz / 700): the compile-time value when the input is known
 * (computed as the interpreter does), else computed at run time. */
static LoopExpr *mel_of(Low *L, int k)
{
    const IrArray *a = low_known(L, k);
    if (a)
        return F(2595 * log10(1 + ir_load_f64(a->dtype, a->data, 0) / 700));
    return MUL(F(2595), DIV(CALL1(log, ADD(F(1), DIV(scalar_f64(L, k), F(700)))), F(log(10.0))));
}

int low_melweightmatrix(Low *L)
{
    int64_t bins, len;
    int y = low_out(L, 0);
    if (low_known_ints(L, 0, &bins, 1) != 1 || low_known_ints(L, 1, &len, 1) != 1)
        return ir_node_error(L->g, L->n, L->d, "MelWeightMatrix: num_mel_bins and dft_length must be known at "
                             "compile time");
    for (int i = 2; i < 5; i++)
        if (ir_shape_numel(&ir_in(L->g, L->n, i)->v.shape) != 1)
            return ir_node_error(L->g, L->n, L->d, "MelWeightMatrix: sample_rate, lower_edge_hertz and "
                                 "upper_edge_hertz must hold one value each");
    const LoopBuf *yb = low_buf(L, y);
    if (yb->shape.rank != 2 || yb->shape.dims[0] != len / 2 + 1 || yb->shape.dims[1] != bins)
        return ir_node_error(L->g, L->n, L->d, "MelWeightMatrix: num_mel_bins or dft_length differ from the "
                             "inferred output shape");
    /* all in the element's body (the kernel is one loop nest: the GPU
     * schedule binds it to threads; LLVM hoists the invariants) */
    int v[2];
    LoopStmt *body = loop_block(L->p);
    if (low_vars(L, 2, "i", v) || !body)
        return low_oom(L);
    int mlo = low_let(L, body, "mlo", mel_of(L, 3), 0);
    int mhi = low_let(L, body, "mhi", mel_of(L, 4), 0);
    int fr = low_let(L, body, "rate", scalar_f64(L, 2), 0);
    if (mlo < 0 || mhi < 0 || fr < 0)
        return low_oom(L);
    int step = low_let(L, body, "step", DIV(SUB(V(mhi), V(mlo)), F((double)(bins + 2))), 0);
    if (step < 0)
        return low_oom(L);
    /* the column's left, center and right FFT bins (exact integers in float64) */
    int e[3];
    for (int c = 0; c < 3; c++) {
        LoopExpr *mel = ADD(MUL(low_convert(L, ADD(V(v[1]), I(c)), IR_DT_F64), V(step)), V(mlo));
        LoopExpr *p10 = loop_call(L->p, LOOP_I_pow, 2, (LoopExpr *[]){ F(10), DIV(mel, F(2595)) });
        LoopExpr *hz = MUL(F(700), SUB(p10, F(1)));
        e[c] = low_let(L, body, "edge", CALL1(floor, DIV(MUL(F((double)(len + 1)), hz), V(fr))), 0);
        if (e[c] < 0)
            return low_oom(L);
    }
    int j = low_let(L, body, "j", low_convert(L, V(v[0]), IR_DT_F64), 0);
    if (j < 0)
        return low_oom(L);
    /* the interpreter's writes in order: the peak (e0 == e1), the rising
     * edge [e0, e1], then the falling edge [e1, e2) over them */
    LoopExpr *val = loop_select(L->p, low_and(L, low_bin(L, LOOP_EQ, V(j), V(e[1])), low_bin(L, LOOP_EQ, V(e[0]), V(e[1]))),
                                F(1), F(0));
    LoopExpr *rise = low_and(L, low_and(L, low_bin(L, LOOP_LE, V(e[0]), V(j)), low_bin(L, LOOP_LE, V(j), V(e[1]))),
                             low_bin(L, LOOP_LT, V(e[0]), V(e[1])));
    val = loop_select(L->p, rise, DIV(SUB(V(j), V(e[0])), SUB(V(e[1]), V(e[0]))), val);
    LoopExpr *fall = low_and(L, low_bin(L, LOOP_LE, V(e[1]), V(j)), low_bin(L, LOOP_LT, V(j), V(e[2])));
    val = loop_select(L->p, fall, DIV(SUB(V(e[2]), V(j)), SUB(V(e[2]), V(e[1]))), val);
    LoopExpr *yi[2] = { V(v[0]), V(v[1]) };
    if (low_add(L, body, low_store(L, y, low_index(L, y, yi), val)))
        return low_oom(L);
    return low_kernel(L, low_nest(L, 2, v, yb->shape.dims, body));
}

/* ----------------------------------------------------------------- Det */

/* a[r*m + c] of the local scratch matrix */
#define A(r, c) low_load(L, a, ADD(MUL(r, I(m)), c), IR_DT_F64)
#define A_AT(r, c) ADD(MUL(r, I(m)), c)

/* Appends to blk: for var in 0..m { if (var > c) / (var >= c) { body } }. */
static int guarded_loop(Low *L, LoopStmt *blk, int var, int64_t m, int c, int strict, LoopStmt *body)
{
    LoopExpr *cond = low_bin(L, strict ? LOOP_LT : LOOP_LE, V(c), V(var));
    return low_add(L, blk, loop_for(L->p, var, I(m), LOOP_SERIAL, loop_if(L->p, cond, body, NULL)));
}

/* One elimination step on column c (det != 0 so far): pivot search, swap,
 * det update, elimination of the rows below. */
static int det_step(Low *L, LoopStmt *blk, int a, int64_t m, int c, int det)
{
    int v[4];                               /* pivot search row, swap column, row, column */
    if (low_vars(L, 4, "r", v))
        return low_oom(L);
    int p = low_let(L, blk, "p", V(c), 1), pv = low_let(L, blk, "pv", loop_un(L->p, LOOP_ABS, A(V(c), V(c))), 1);
    LoopStmt *search = loop_block(L->p), *better = loop_block(L->p);
    if (p < 0 || pv < 0 || !search || !better)
        return low_oom(L);
    int av = low_let(L, search, "av", loop_un(L->p, LOOP_ABS, A(V(v[0]), V(c))), 0);
    if (av < 0 || low_add(L, better, loop_assign(L->p, p, V(v[0]))) ||
        low_add(L, better, loop_assign(L->p, pv, V(av))) ||
        low_add(L, search, loop_if(L->p, low_bin(L, LOOP_LT, V(pv), V(av)), better, NULL)) ||
        guarded_loop(L, blk, v[0], m, c, 1, search))
        return low_oom(L);
    /* nonsingular column: swap rows c and p, det *= pivot, eliminate */
    LoopStmt *go = loop_block(L->p), *swap = loop_block(L->p), *sw = loop_block(L->p);
    if (!go || !swap || !sw)
        return low_oom(L);
    int tv = low_let(L, sw, "tmp", A(V(c), V(v[1])), 0);
    if (tv < 0 || low_add(L, sw, loop_store(L->p, a, A_AT(V(c), V(v[1])), A(V(p), V(v[1])))) ||
        low_add(L, sw, loop_store(L->p, a, A_AT(V(p), V(v[1])), V(tv))) ||
        low_add(L, swap, loop_for(L->p, v[1], I(m), LOOP_SERIAL, sw)) ||
        low_add(L, swap, loop_assign(L->p, det, loop_un(L->p, LOOP_NEG, V(det)))) ||
        low_add(L, go, loop_if(L->p, low_bin(L, LOOP_NE, V(p), V(c)), swap, NULL)))
        return low_oom(L);
    int piv = low_let(L, go, "piv", A(V(c), V(c)), 0);
    if (piv < 0 || low_add(L, go, loop_assign(L->p, det, MUL(V(det), V(piv)))))
        return low_oom(L);
    LoopStmt *row = loop_block(L->p), *upd = loop_block(L->p);
    int f = row ? low_let(L, row, "f", DIV(A(V(v[2]), V(c)), V(piv)), 0) : -1;
    if (f < 0 || !upd ||
        low_add(L, upd, loop_store(L->p, a, A_AT(V(v[2]), V(v[3])),
                                   SUB(A(V(v[2]), V(v[3])), MUL(V(f), A(V(c), V(v[3])))))) ||
        guarded_loop(L, row, v[3], m, c, 0, upd) || guarded_loop(L, go, v[2], m, c, 1, row))
        return low_oom(L);
    LoopStmt *zero = loop_block(L->p);
    if (!zero || low_add(L, zero, loop_assign(L->p, det, F(0))) ||
        low_add(L, blk, loop_if(L->p, low_bin(L, LOOP_EQ, V(pv), F(0)), zero, go)))
        return low_oom(L);
    return 0;
}

int low_det(Low *L)
{
    int x = low_in(L, 0), y = low_out(L, 0);
    const LoopBuf *xb = low_buf(L, x), *yb = low_buf(L, y);
    int r = xb->shape.rank, nb = r - 2;
    int64_t m = xb->shape.dims[r - 1];
    IrShape as = { .rank = 1, .dims = { m > 0 ? m * m : 1 } };
    int a = loop_add_buf(L->p, "det_a", IR_DT_F64, &as, LOOP_ST_LOCAL);
    int ov[IR_MAX_RANK], cp[2], c;
    LoopStmt *blk = loop_block(L->p), *cb = loop_block(L->p), *live = loop_block(L->p);
    if (a < 0 || !blk || !cb || !live || low_vars(L, nb, "i", ov) || low_vars(L, 2, "j", cp) ||
        low_vars(L, 1, "c", &c))
        return low_oom(L);
    /* the local copy a = x[.., :, :] */
    LoopExpr *xi[IR_MAX_RANK];
    for (int i = 0; i < nb; i++)
        xi[i] = V(ov[i]);
    xi[nb] = V(cp[0]);
    xi[nb + 1] = V(cp[1]);
    LoopStmt *cpy = loop_store(L->p, a, A_AT(V(cp[0]), V(cp[1])), low_load(L, x, low_index(L, x, xi), IR_DT_F64));
    if (low_add(L, blk, low_nest(L, 2, cp, (int64_t[]){ m, m }, cpy)))
        return low_oom(L);
    int det = low_let(L, blk, "det", F(1), 1);
    if (det < 0 || det_step(L, live, a, m, c, det) ||
        low_add(L, cb, loop_if(L->p, low_bin(L, LOOP_NE, V(det), F(0)), live, NULL)) ||
        low_add(L, blk, loop_for(L->p, c, I(m), LOOP_SERIAL, cb)))
        return low_oom(L);
    LoopExpr *yi[IR_MAX_RANK];
    for (int i = 0; i < nb; i++)
        yi[i] = V(ov[i]);
    if (low_add(L, blk, low_store(L, y, low_index(L, y, yi), V(det))))
        return low_oom(L);
    return low_kernel(L, low_nest(L, nb, ov, yb->shape.dims, blk));
}
