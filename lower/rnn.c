/* lower/rnn.c — compute templates of RNN, GRU and LSTM, following
 * the reference interpreter (interp/k_rnn.c): per direction and batch row, a
 * sequential loop over the row's sequence_lens[b] time steps updating the
 * hidden state h (and LSTM's cell state c) kept in kernel-local buffers;
 * gates in ONNX order (RNN i; GRU z r h; LSTM i o f c), B = Wb then Rb,
 * P = i o f peepholes; `clip` bounds gate pre-activations (not the cell
 * state fed to LSTM's h); Y is 0 past a row's length, Y_h / Y_c hold the
 * state after its last step (0 for a row of length 0).  Computes in float64.
 * A sequence length outside [0, seq] is clamped (the interpreter reports it).
 *
 * Two forms.  The plain one computes in float64, each gate row a scalar dot
 * product.  With SIMD (LowSchedule.vector_bits) and float32 tensors whose W,
 * R, B and P are known at compile time, the packed form computes in float32
 * with the gate rows in the lanes (docs/performance.md):
 *   - W, R and the biases are packed at compile time, transposed, each gate's
 *     H rows padded to Hp (a multiple of 16): Wt[d][i][g*Hp + k],
 *     Rt[d][j][g*Hp + k], bias[d][g*Hp + k] = Wb + Rb (GRU with
 *     linear_before_reset keeps Rbh apart);
 *   - per direction, before the time loop, the input projection of every
 *     step: XW[t][b][:] = bias + sum_i X[t, b, i] * Wt[i][:];
 *   - per step: G[:] = XW[t][b][:] + sum_j h[j] * Rt[j][:] (GRU: the
 *     candidate's columns from r * h after z and r), then the gate math per
 *     hidden unit;
 * every loop over the packed columns runs along memory, so the CPU schedule
 * vectorizes it.
 *
 * The GPU form (LowSchedule.rnn_tasks; docs/targets/gpu.md, "Recurrent
 * kernels"): one PARALLEL loop over the tasks direction x batch row (task =
 * dir * batch + b; the GPU schedule gives each a block, whose state buffers
 * are its shared memory).  In the packed form the input projection of every
 * direction, step and row is a kernel of its own before it, in the form of a
 * matrix product (the GPU schedule tiles it):
 *     XW[d][t][b][col] = bias[d][col] + sum_i X[t, b, i] * Wt[d][i][col]
 * and each step computes G one column at a time, a dot product over the
 * state (the block's threads take the columns):
 *     G[col] = XW[d][t][b][col] + sum_j h[j] * Rt[d][j][col]
 * (GRU with linear_before_reset: the candidate's columns start at Rbh
 * instead), in the CPU form's order of summation. */
#include "lower/lower_impl.h"
#include "lower/tile/tile.h"

#include <stdio.h>
#include <string.h>

#define RNN_SPLIT_MIN_MACS (1 << 17)

typedef struct Rnn {
    IrOp op;
    int x, w, r, b, sl, h0, c0, pp;      /* input buffers (-1: absent) */
    int y, yh, yc;                       /* output buffers (-1: absent) */
    int dirs, per, layout, gates, has_clip, lbr, input_forget, reverse0;
    int64_t seq, batch, isz, hs;
    double clip;
    IrRnnActFn act[IR_RNN_MAX_ACTS];
    IrDType t;                           /* compute type: float64 */
    int h, cs, tmp;                      /* kernel-local state buffers */
    int fast;                            /* the packed float32 form (above) */
    int wt, rt, bias, rbh, xw;           /* ... its packed weights, biases, input projection */
    int aux;                             /* ... GRU's z and r * h, 2 * hp (-1: none) */
    int64_t hp, gp;                      /* ... padded hidden size, packed columns (gates * hp) */
    int gpu;                             /* the GPU form (above) */
    int tasks;                           /* one loop over the tasks direction x batch row (the GPU form,
                                            and the CPU's when XW holds every direction: below) */
    int proj_tiled;                      /* CPU: XW [rows][D * gp] made by a register-blocked kernel */
    int mvw;                             /* CPU: R h in panels of mvw columns (tile_mv), 0: the axpy form */
    int split;                           /* CPU, --threads: parts each step's units are cut into (below) */
    int64_t ulo, un;                     /* ... the part being emitted: units [ulo, ulo + un); un 0: all */
    int64_t h_rd, h_wr;                  /* ... offsets in h (2 H: the state before and after a step) */
    int dir;                             /* direction being emitted */
    int bt, tv;                          /* batch variable, time-index variable */
} Rnn;

#define I(v) low_i(L, (v))
#define V(v) low_v(L, (v))
#define ADD(a, b) low_bin(L, LOOP_ADD, a, b)
#define MUL(a, b) low_bin(L, LOOP_MUL, a, b)

/* Flat offset of (dir, batch row) in a Y_h-shaped state. */
static LoopExpr *state_off(Low *L, const Rnn *c)
{
    LoopExpr *e = c->layout ? ADD(MUL(V(c->bt), I(c->dirs)), I(c->dir)) : ADD(I(c->dir * c->batch), V(c->bt));
    return MUL(e, I(c->hs));
}

/* acc = bias[row] + sum_i M[dir, row, i] * src[off + i] for gate g, row g*H + k:
 * W against x (is_r = 0) or R against a state buffer (is_r = 1). */
static int matvec(Low *L, const Rnn *c, LoopStmt *blk, int k, int g, int is_r, int src, LoopExpr *off)
{
    int64_t n = is_r ? c->hs : c->isz;
    LoopExpr *row = ADD(I((int64_t)(c->dir * c->gates + g) * c->hs), V(k));
    LoopExpr *bias = c->b >= 0
                         ? low_load(L, c->b, ADD(I((int64_t)((c->dir * 2 + is_r) * c->gates + g) * c->hs), V(k)), c->t)
                         : low_const(L, c->t, 0);
    int acc = low_let(L, blk, is_r ? "rh" : "wx", bias, 1), j;
    if (acc < 0 || low_vars(L, 1, "j", &j))
        return -1;
    LoopExpr *m = low_load(L, is_r ? c->r : c->w, ADD(MUL(row, I(n)), V(j)), c->t);
    LoopExpr *v = low_load(L, src, off ? ADD(loop_expr_copy(L->p, off), V(j)) : V(j), c->t);
    LoopStmt *st = loop_assign(L->p, acc, ADD(V(acc), MUL(m, v)));
    return low_add(L, blk, loop_for(L->p, j, I(n), LOOP_SERIAL, st)) ? -1 : acc;
}

/* W x_t + Wb and R src + Rb for gate g at row k. */
static int wx(Low *L, const Rnn *c, LoopStmt *blk, int k, int g)
{
    LoopExpr *xo = c->layout ? ADD(MUL(V(c->bt), I(c->seq)), V(c->tv)) : ADD(MUL(V(c->tv), I(c->batch)), V(c->bt));
    return matvec(L, c, blk, k, g, 0, c->x, MUL(xo, I(c->isz)));
}

static int rh(Low *L, const Rnn *c, LoopStmt *blk, int k, int g, int src, int64_t off)
{
    return matvec(L, c, blk, k, g, 1, src, off ? I(off) : NULL);
}

/* Activation a of this direction applied to variable v (clipped first
 * unless unclipped). */
static LoopExpr *act(Low *L, const Rnn *c, LoopStmt *blk, int a, LoopExpr *pre, int unclipped)
{
    const IrRnnActFn *f = &c->act[c->dir * c->per + a];
    IrDType t = c->t;
    if (c->has_clip && !unclipped) {
        int p = low_let(L, blk, "pre", pre, 0);
        if (p < 0)
            return NULL;
        LoopExpr *lo = low_const(L, t, -c->clip), *hi = low_const(L, t, c->clip);
        pre = loop_select(L->p, low_bin(L, LOOP_LT, V(p), lo), loop_expr_copy(L->p, lo),
                          loop_select(L->p, low_bin(L, LOOP_LT, hi, V(p)), loop_expr_copy(L->p, hi), V(p)));
    }
    int v = low_let(L, blk, "u", pre, 0);
    if (v < 0)
        return NULL;
    switch (f->kind) {
    case IR_RNN_AFFINE: return ADD(MUL(low_const(L, t, f->alpha), V(v)), low_const(L, t, f->beta));
    case IR_RNN_SCALEDTANH:
        return MUL(low_const(L, t, f->alpha),
                   loop_call(L->p, LOOP_I_tanh, 1, (LoopExpr *[]){ MUL(low_const(L, t, f->beta), V(v)) }));
    case IR_RNN_THRESHOLDEDRELU:
        return loop_select(L->p, low_bin(L, LOOP_LE, low_const(L, t, f->alpha), V(v)), V(v), low_const(L, t, 0));
    default: break;
    }
    static const IrOp ops[] = {
        [IR_RNN_RELU] = IR_OP_Relu, [IR_RNN_TANH] = IR_OP_Tanh, [IR_RNN_SIGMOID] = IR_OP_Sigmoid,
        [IR_RNN_LEAKYRELU] = IR_OP_LeakyRelu, [IR_RNN_HARDSIGMOID] = IR_OP_HardSigmoid, [IR_RNN_ELU] = IR_OP_Elu,
        [IR_RNN_SOFTSIGN] = IR_OP_Softsign, [IR_RNN_SOFTPLUS] = IR_OP_Softplus,
    };
    return low_unary_expr(L, ops[f->kind], t, v, f->alpha, f->beta);
}

/* Every access index of a statement with variable k replaced by ulo + k. */
typedef struct Shift { LoopProgram *p; int k; LoopExpr *by; int oom; } Shift;

static void shift_access(void *ctx, int *buf, LoopExpr **index, int store)
{
    (void)buf, (void)store;
    Shift *sh = ctx;
    LoopExpr *e = loop_expr_subst(sh->p, *index, &sh->k, &sh->by, 1);
    if (e)
        *index = e;
    else
        sh->oom = 1;
}

/* for k < H: body built by the caller into a fresh block; returns the loop.
 * In a part of the split form (c->un), k runs over the part's units only:
 * for k < un, body with k read as ulo + k (k appears in indices only). */
static LoopStmt *over_h(Low *L, const Rnn *c, int k, LoopStmt *body)
{
    if (!c->un)
        return loop_for(L->p, k, I(c->hs), LOOP_SERIAL, body);
    Shift sh = { L->p, k, ADD(I(c->ulo), V(k)), 0 };
    if (!sh.by || !body)
        return NULL;
    loop_stmt_accesses(body, shift_access, &sh);
    return sh.oom ? NULL : loop_for(L->p, k, I(c->un), LOOP_SERIAL, body);
}

static LoopExpr *ld(Low *L, const Rnn *c, int buf, LoopExpr *i) { return low_load(L, buf, i, c->t); }

/* Peephole term P[dir, which*H + k] * state, or NULL. */
static LoopExpr *peep(Low *L, const Rnn *c, int k, int which, LoopExpr *state)
{
    if (c->pp < 0)
        return NULL;
    return MUL(ld(L, c, c->pp, ADD(I((int64_t)(c->dir * 3 + which) * c->hs), V(k))), state);
}

static LoopExpr *add_opt(Low *L, LoopExpr *a, LoopExpr *b) { return b ? ADD(a, b) : a; }

static int fast_step(Low *L, const Rnn *c, LoopStmt *blk);

/* One time step into blk: h (and cs) updated through tmp. */
static int step(Low *L, const Rnn *c, LoopStmt *blk)
{
    if (c->fast)
        return fast_step(L, c, blk);
    int64_t H = c->hs;
    int k, k2, k3;
    if (low_vars(L, 1, "k", &k) || low_vars(L, 1, "k", &k2) || low_vars(L, 1, "k", &k3))
        return -1;
    LoopStmt *b1 = loop_block(L->p), *b2 = loop_block(L->p), *b3 = loop_block(L->p);
    if (c->op == IR_OP_RNN) {
        int a = wx(L, c, b1, k, 0), r = rh(L, c, b1, k, 0, c->h, 0);
        if (a < 0 || r < 0 || low_add(L, b1, low_store(L, c->tmp, V(k), act(L, c, b1, 0, ADD(V(a), V(r)), 0))) ||
            low_add(L, b2, low_store(L, c->h, V(k2), ld(L, c, c->tmp, V(k2)))))
            return -1;
        return low_add(L, blk, over_h(L, c, k, b1)) || low_add(L, blk, over_h(L, c, k2, b2)) ? -1 : 0;
    }
    if (c->op == IR_OP_GRU) {
        /* z -> tmp[0, H), r -> tmp[H, 2H), h~ -> tmp[2H, 3H) */
        for (int g = 0; g < 2; g++) {
            int a = wx(L, c, b1, k, g), r = rh(L, c, b1, k, g, c->h, 0);
            if (a < 0 || r < 0 ||
                low_add(L, b1, low_store(L, c->tmp, ADD(I(g * H), V(k)), act(L, c, b1, 0, ADD(V(a), V(r)), 0))))
                return -1;
        }
        if (low_add(L, blk, over_h(L, c, k, b1)))
            return -1;
        int a = wx(L, c, b2, k2, 2), r;
        if (a < 0)
            return -1;
        LoopExpr *pre;
        if (c->lbr) {                          /* g(Wh x + Wbh + r * (Rh h + Rbh)) */
            if ((r = rh(L, c, b2, k2, 2, c->h, 0)) < 0)
                return -1;
            pre = ADD(V(a), MUL(ld(L, c, c->tmp, ADD(I(H), V(k2))), V(r)));
        } else {                               /* g(Wh x + Wbh + Rh (r * h) + Rbh) */
            int kr;
            LoopStmt *br = loop_block(L->p);
            if (low_vars(L, 1, "k", &kr) ||
                low_add(L, br, low_store(L, c->tmp, ADD(I(H), V(kr)),
                                         MUL(ld(L, c, c->tmp, ADD(I(H), V(kr))), ld(L, c, c->h, V(kr))))) ||
                low_add(L, blk, over_h(L, c, kr, br)) || (r = rh(L, c, b2, k2, 2, c->tmp, H)) < 0)
                return -1;
            pre = ADD(V(a), V(r));
        }
        if (low_add(L, b2, low_store(L, c->tmp, ADD(I(2 * H), V(k2)), act(L, c, b2, 1, pre, 0))) ||
            low_add(L, blk, over_h(L, c, k2, b2)))
            return -1;
        /* h = (1 - z) * h~ + z * h */
        LoopExpr *z = ld(L, c, c->tmp, V(k3));
        LoopExpr *nh = MUL(low_bin(L, LOOP_SUB, low_const(L, c->t, 1), z), ld(L, c, c->tmp, ADD(I(2 * H), V(k3))));
        LoopExpr *v = ADD(nh, MUL(ld(L, c, c->tmp, V(k3)), ld(L, c, c->h, V(k3))));
        return low_add(L, b3, low_store(L, c->h, V(k3), v)) || low_add(L, blk, over_h(L, c, k3, b3)) ? -1 : 0;
    }
    /* LSTM: h' -> tmp[0, H), c' -> tmp[H, 2H) */
    LoopExpr *cs = ld(L, c, c->cs, V(k));
    int ai = wx(L, c, b1, k, 0), ri = rh(L, c, b1, k, 0, c->h, 0);
    if (ai < 0 || ri < 0)
        return -1;
    int iv = low_let(L, b1, "i", act(L, c, b1, 0, add_opt(L, ADD(V(ai), V(ri)), peep(L, c, k, 0, cs)), 0), 0);
    if (iv < 0)
        return -1;
    LoopExpr *f;
    if (c->input_forget) {
        f = low_bin(L, LOOP_SUB, low_const(L, c->t, 1), V(iv));
    } else {
        int af = wx(L, c, b1, k, 2), rf = rh(L, c, b1, k, 2, c->h, 0);
        if (af < 0 || rf < 0)
            return -1;
        f = act(L, c, b1, 0, add_opt(L, ADD(V(af), V(rf)), peep(L, c, k, 2, ld(L, c, c->cs, V(k)))), 0);
    }
    int fv = low_let(L, b1, "f", f, 0);
    int ag = wx(L, c, b1, k, 3), rg = rh(L, c, b1, k, 3, c->h, 0);
    if (fv < 0 || ag < 0 || rg < 0)
        return -1;
    int gv = low_let(L, b1, "g", act(L, c, b1, 1, ADD(V(ag), V(rg)), 0), 0);
    if (gv < 0)
        return -1;
    int nc = low_let(L, b1, "nc", ADD(MUL(V(fv), ld(L, c, c->cs, V(k))), MUL(V(iv), V(gv))), 0);
    int ao = wx(L, c, b1, k, 1), ro = rh(L, c, b1, k, 1, c->h, 0);
    if (nc < 0 || ao < 0 || ro < 0)
        return -1;
    int ov = low_let(L, b1, "o", act(L, c, b1, 0, add_opt(L, ADD(V(ao), V(ro)), peep(L, c, k, 1, V(nc))), 0), 0);
    if (ov < 0)
        return -1;
    LoopExpr *hc = act(L, c, b1, 2, V(nc), 1);          /* h(C), unclipped */
    if (low_add(L, b1, low_store(L, c->tmp, V(k), MUL(V(ov), hc))) ||
        low_add(L, b1, low_store(L, c->tmp, ADD(I(H), V(k)), V(nc))) ||
        low_add(L, b2, low_store(L, c->h, V(k2), ld(L, c, c->tmp, V(k2)))) ||
        low_add(L, b2, low_store(L, c->cs, V(k2), ld(L, c, c->tmp, ADD(I(H), V(k2))))))
        return -1;
    return low_add(L, blk, over_h(L, c, k, b1)) || low_add(L, blk, over_h(L, c, k2, b2)) ? -1 : 0;
}

/* ------------------------------------------------------- the packed form */

/* Column of hidden unit k of gate g in the packed layout. */
static LoopExpr *col(Low *L, const Rnn *c, int g, LoopExpr *k) { return ADD(I((int64_t)g * c->hp), k); }

/* for v < n (a loop the CPU schedule vectorizes when n is a multiple of its
 * lanes) over body built by the caller, appended to blk. */
static int lanes_loop(Low *L, LoopStmt *blk, int v, int64_t n, LoopStmt *body)
{
    return body ? low_add(L, blk, loop_for(L->p, v, I(n), LOOP_SERIAL, body)) : -1;
}

/* dst[dst_off + col] = dst[dst_off + col] + s * m[m_off + col] for col < n:
 * one term of a matrix-vector product with the columns in the lanes. */
static int axpy(Low *L, const Rnn *c, LoopStmt *blk, int dst, LoopExpr *dst_off, LoopExpr *s, int m,
                LoopExpr *m_off, int64_t n)
{
    int v, sv = low_let(L, blk, "s", s, 0);
    if (sv < 0 || low_vars(L, 1, "col", &v))
        return -1;
    LoopExpr *at = ADD(dst_off, V(v));
    LoopExpr *sum = ADD(ld(L, c, dst, at), MUL(V(sv), ld(L, c, m, ADD(m_off, V(v)))));
    return lanes_loop(L, blk, v, n, low_store(L, dst, loop_expr_copy(L->p, at), sum));
}

/* A CONST buffer over n floats of data (in the program's arena). */
static int table(Low *L, const char *name, float *data, int64_t n)
{
    IrShape sh = { .rank = 1, .dims = { n } };
    int b = loop_add_buf(L->p, name, IR_DT_F32, &sh, LOOP_ST_CONST);
    if (b >= 0)
        L->p->bufs[b].data = data;
    return b;
}

/* W, R and the biases packed (above), the input projection's buffer.  On
 * the CPU with register blocks (LowSchedule.tile_nr), R goes into tile_mv's
 * panels, and the input projection of every direction and step is one
 * tile_product kernel before the recurrent one, rows (t, b) of X times
 * W^T of all directions side by side:
 *   XW[row(t, b)][d*gp + col] = bias[d][col] + sum_i X[t, b, i] * Wt[d][i][col]
 * (lstm_bi2's second layer: its projection at the GEMM's speed instead of
 * the axpy form's third of it). */
static int pack(Low *L, Rnn *c)
{
    const IrArray *w = low_known(L, 1), *r = low_known(L, 2), *b = c->b >= 0 ? low_known(L, 3) : NULL;
    int64_t D = c->dirs, G = c->gates, H = c->hs, I_ = c->isz, hp = c->hp, gp = c->gp;
    float *wt = util_arena_array(&L->p->arena, (size_t)(D * I_ * gp), sizeof *wt);
    float *rt = util_arena_array(&L->p->arena, (size_t)(D * H * gp), sizeof *rt);
    float *bias, *rbh = NULL;
    c->bias = low_const_table(L, "rnn_bias", D * gp, &bias);
    c->rbh = c->lbr ? low_const_table(L, "rnn_rbh", D * hp, &rbh) : -1;
    if (!wt || !rt || c->bias < 0 || (c->lbr && c->rbh < 0))
        return -1;
    memset(wt, 0, (size_t)(D * I_ * gp) * sizeof *wt);
    memset(rt, 0, (size_t)(D * H * gp) * sizeof *rt);
    memset(bias, 0, (size_t)(D * gp) * sizeof *bias);
    if (rbh)
        memset(rbh, 0, (size_t)(D * hp) * sizeof *rbh);
    for (int64_t d = 0; d < D; d++)
        for (int64_t g = 0; g < G; g++)
            for (int64_t k = 0; k < H; k++) {
                int64_t row = (d * G + g) * H + k, cl = g * hp + k;
                for (int64_t i = 0; i < I_; i++)
                    wt[(d * I_ + i) * gp + cl] = (float)ir_load_f64(w->dtype, w->data, row * I_ + i);
                for (int64_t j = 0; j < H; j++)
                    rt[(d * H + j) * gp + cl] = (float)ir_load_f64(r->dtype, r->data, row * H + j);
                if (!b)
                    continue;
                double wb = ir_load_f64(b->dtype, b->data, (d * 2 * G + g) * H + k);
                double rb = ir_load_f64(b->dtype, b->data, ((d * 2 + 1) * G + g) * H + k);
                if (c->lbr && g == 2)
                    rbh[d * hp + k] = (float)rb;       /* r * (Rh h + Rbh): apart */
                bias[d * gp + cl] = (float)(c->lbr && g == 2 ? wb : wb + rb);
            }
    c->mvw = c->gpu ? 0 : tile_mv_width(L->s, hp);
    c->rt = c->mvw ? tile_mv_pack(L, "rnn_rt", rt, D, H, gp, c->mvw) : table(L, "rnn_rt", rt, D * H * gp);
    int64_t rows = c->seq * c->batch;
    c->proj_tiled = !c->gpu && L->s->tile_nr >= 4 && rows > 0;
    IrShape xs = { .rank = 1, .dims = { (c->gpu || c->proj_tiled ? D : 1) * rows * gp } };
    c->xw = loop_add_buf(L->p, "rnn_xw", IR_DT_F32, &xs, LOOP_ST_WORKSPACE);
    if (c->rt < 0 || c->xw < 0)
        return -1;
    if (c->proj_tiled) {
        float *wcat = util_arena_array(&L->p->arena, (size_t)(I_ * D * gp), sizeof *wcat);
        if (!wcat)
            return -1;
        for (int64_t i = 0; i < I_; i++)
            for (int64_t d = 0; d < D; d++)
                memcpy(wcat + (i * D + d) * gp, wt + (d * I_ + i) * gp, (size_t)gp * sizeof *wcat);
        int t = tile_product(L, c->x, c->xw, rows, I_, D * gp, wcat, bias);
        if (t < 0)
            return -1;
        if (t == 0) {
            L->p->kernels[L->p->n_kernels - 1].flops = 2 * rows * D * G * H * I_;
            c->wt = -1;
            return 0;
        }
        /* no block for this shape: project() fills the same layout */
    }
    return (c->wt = table(L, "rnn_wt", wt, D * I_ * gp)) < 0 ? -1 : 0;
}

/* Offset of XW's row for step t, batch row b, direction c->dir: the
 * GPU form's [d][t][b][gp]; the CPU's [row][D * gp] with row = the row of X
 * (tile_product), or one direction's [t][b][gp] at a time (project). */
static LoopExpr *xw_at(Low *L, const Rnn *c, LoopExpr *t, LoopExpr *b)
{
    if (c->proj_tiled) {
        LoopExpr *row = c->layout ? ADD(MUL(b, I(c->seq)), t) : ADD(MUL(t, I(c->batch)), b);
        return ADD(MUL(row, I(c->dirs * c->gp)), I((int64_t)c->dir * c->gp));
    }
    LoopExpr *r = MUL(ADD(MUL(t, I(c->batch)), b), I(c->gp));
    return c->gpu ? ADD(I((int64_t)c->dir * c->seq * c->batch * c->gp), r) : r;
}

/* Offset of step c->tv, row c->bt in XW. */
static LoopExpr *xw_row(Low *L, const Rnn *c) { return xw_at(L, c, V(c->tv), V(c->bt)); }

/* Direction c->dir's input projection of every step, into XW:
 *   for t, b: XW[t][b][:] = bias[:]; for i: XW[t][b][:] += X[t, b, i] * Wt[i][:] */
static int project(Low *L, const Rnn *c, LoopStmt *blk)
{
    int t, b, i, v;
    if (low_vars(L, 1, "t", &t) || low_vars(L, 1, "b", &b) || low_vars(L, 1, "i", &i) || low_vars(L, 1, "col", &v))
        return -1;
    LoopStmt *row = loop_block(L->p), *inner = loop_block(L->p);
    LoopExpr *xw0 = xw_at(L, c, V(t), V(b));
    LoopExpr *x0 = c->layout ? ADD(MUL(V(b), I(c->seq)), V(t)) : ADD(MUL(V(t), I(c->batch)), V(b));
    if (!row || !inner ||
        lanes_loop(L, row, v, c->gp, low_store(L, c->xw, ADD(xw0, V(v)),
                                               ld(L, c, c->bias, ADD(I((int64_t)c->dir * c->gp), V(v))))) ||
        axpy(L, c, inner, c->xw, loop_expr_copy(L->p, xw0),
             ld(L, c, c->x, ADD(MUL(x0, I(c->isz)), V(i))), c->wt,
             MUL(ADD(I((int64_t)c->dir * c->isz), V(i)), I(c->gp)), c->gp) ||
        low_add(L, row, loop_for(L->p, i, I(c->isz), LOOP_SERIAL, inner)))
        return -1;
    int64_t ext[2] = { c->seq, c->batch };
    int vars[2] = { t, b };
    return low_add(L, blk, low_nest(L, 2, vars, ext, row));
}

/* GPU form: the input projection of every direction, step and row, a kernel
 * of its own in the form of a matrix product (rows t, b; columns d, col;
 * the reduction over i):
 *   XW[d][t][b][col] = bias[d][col] + sum_i X[t, b, i] * Wt[d][i][col]
 * Returns its flops, -1 out of memory. */
static int64_t project_gpu(Low *L, const Rnn *c)
{
    int v[4], i;                                   /* d, t, b, col */
    LoopStmt *body = loop_block(L->p);
    if (!body || low_vars(L, 1, "d", &v[0]) || low_vars(L, 1, "t", &v[1]) || low_vars(L, 1, "b", &v[2]) ||
        low_vars(L, 1, "col", &v[3]) || low_vars(L, 1, "i", &i))
        return -1;
    LoopExpr *x0 = c->layout ? ADD(MUL(V(v[2]), I(c->seq)), V(v[1])) : ADD(MUL(V(v[1]), I(c->batch)), V(v[2]));
    int acc = low_let(L, body, "acc", ld(L, c, c->bias, ADD(MUL(V(v[0]), I(c->gp)), V(v[3]))), 1);
    if (acc < 0)
        return -1;
    LoopExpr *x = ld(L, c, c->x, ADD(MUL(x0, I(c->isz)), V(i)));
    LoopExpr *w = ld(L, c, c->wt, ADD(MUL(ADD(MUL(V(v[0]), I(c->isz)), V(i)), I(c->gp)), V(v[3])));
    LoopExpr *at = ADD(MUL(ADD(MUL(ADD(MUL(V(v[0]), I(c->seq)), V(v[1])), I(c->batch)), V(v[2])), I(c->gp)), V(v[3]));
    int64_t ext[4] = { c->dirs, c->seq, c->batch, c->gp };
    if (low_add(L, body, loop_for(L->p, i, I(c->isz), LOOP_SERIAL, loop_assign(L->p, acc, ADD(V(acc), MUL(x, w))))) ||
        low_add(L, body, low_store(L, c->xw, at, V(acc))))
        return -1;
    char name[256];
    snprintf(name, sizeof name, "%s_xw", L->n->name && *L->n->name ? L->n->name : ir_op_name(L->n->op));
    if (low_kernel_named(L, name, low_nest(L, 4, v, ext, body), -1))
        return -1;
    int64_t flops = 2 * (int64_t)c->dirs * c->seq * c->batch * c->gates * c->hs * c->isz;
    L->p->kernels[L->p->n_kernels - 1].flops = flops;
    return flops;
}

/* G[lo, lo + n) += sum_j src[src_off + j] * Rt[j][lo, lo + n) */
static int recur(Low *L, const Rnn *c, LoopStmt *blk, int src, int64_t src_off, int64_t lo, int64_t n)
{
    if (c->mvw)
        return tile_mv(L, blk, c->rt, c->dir, c->hs, c->gp, c->mvw, lo, n, src, I(src_off), c->tmp, I(0), c->tmp,
                       I(0));
    int j;
    LoopStmt *body = loop_block(L->p);
    if (!body || low_vars(L, 1, "j", &j) ||
        axpy(L, c, body, c->tmp, I(lo), ld(L, c, src, ADD(I(src_off), V(j))), c->rt,
             ADD(MUL(ADD(I((int64_t)c->dir * c->hs), V(j)), I(c->gp)), I(lo)), n))
        return -1;
    return low_add(L, blk, loop_for(L->p, j, I(c->hs), LOOP_SERIAL, body));
}

/* GPU form: G[lo + col] = init + sum_j src[src_off + j] * Rt[j][lo + col] for
 * col < n, one dot product per column; init is XW's column, or Rbh from
 * column 2Hp on for GRU with linear_before_reset.  recur's arguments. */
static int dot_cols(Low *L, const Rnn *c, LoopStmt *blk, int src, int64_t src_off, int64_t lo, int64_t n)
{
    int v, j;
    LoopStmt *body = loop_block(L->p);
    if (!body || low_vars(L, 1, "col", &v) || low_vars(L, 1, "j", &j))
        return -1;
    LoopExpr *init = ld(L, c, c->xw, ADD(xw_row(L, c), ADD(I(lo), V(v))));
    if (c->lbr)       /* a guarded load: Rbh is read only from column 2Hp on */
        init = loop_select(L->p, low_bin(L, LOOP_LE, I(2 * c->hp), ADD(I(lo), V(v))),
                           ld(L, c, c->rbh, ADD(I((int64_t)c->dir * c->hp - 2 * c->hp + lo), V(v))), init);
    int acc = low_let(L, body, "acc", init, 1);
    if (acc < 0)
        return -1;
    LoopExpr *m = ld(L, c, c->rt, ADD(MUL(ADD(I((int64_t)c->dir * c->hs), V(j)), I(c->gp)), ADD(I(lo), V(v))));
    LoopStmt *st = loop_assign(L->p, acc, ADD(V(acc), MUL(ld(L, c, src, ADD(I(src_off), V(j))), m)));
    if (low_add(L, body, loop_for(L->p, j, I(c->hs), LOOP_SERIAL, st)) ||
        low_add(L, body, low_store(L, c->tmp, ADD(I(lo), V(v)), V(acc))))
        return -1;
    return low_add(L, blk, loop_for(L->p, v, I(n), LOOP_SERIAL, body));
}

/* One time step of the packed form into blk: G (c->tmp) from XW and R h,
 * then h (and cs) per hidden unit; c->aux holds GRU's z and r * h. */
static int fast_step(Low *L, const Rnn *c, LoopStmt *blk)
{
    int64_t hp = c->hp;
    int v, k, k2;
    if (low_vars(L, 1, "col", &v) || low_vars(L, 1, "k", &k) || low_vars(L, 1, "k", &k2))
        return -1;
    LoopExpr *xw0 = xw_row(L, c);
    int gru = c->op == IR_OP_GRU;
    /* CPU: G = XW (GRU with linear_before_reset: the candidate's columns start at
     * Rbh), then R h added column by column; GPU: dot_cols does both */
    int (*gates_from)(Low *, const Rnn *, LoopStmt *, int, int64_t, int64_t, int64_t) = c->gpu ? dot_cols : recur;
    int64_t from_xw = gru && c->lbr ? 2 * hp : c->gp;
    if (c->un) {
        /* a part of the split form: each gate's columns of the part's units, G = XW (the
         * candidate's: Rbh) then += R h (GRU here always has linear_before_reset) */
        for (int g = 0; g < c->gates; g++) {
            int v2;
            int64_t lo = g * hp + c->ulo;
            LoopExpr *src = g == 2 && gru ? ld(L, c, c->rbh, ADD(I((int64_t)c->dir * hp + c->ulo), V(v)))
                                          : ld(L, c, c->xw, ADD(ADD(loop_expr_copy(L->p, xw0), I(lo)), V(v)));
            if (lanes_loop(L, blk, v, c->un, low_store(L, c->tmp, ADD(I(lo), V(v)), src)) ||
                recur(L, c, blk, c->h, c->h_rd, lo, c->un) || low_vars(L, 1, "col", &v2))
                return -1;
            v = v2;
        }
    } else {
        LoopExpr *xat = ADD(loop_expr_copy(L->p, xw0), V(v));
        if (!c->gpu && lanes_loop(L, blk, v, from_xw, low_store(L, c->tmp, V(v), ld(L, c, c->xw, xat))))
            return -1;
        if (!c->gpu && gru && c->lbr) {
            int v2;
            if (low_vars(L, 1, "col", &v2) ||
                lanes_loop(L, blk, v2, hp, low_store(L, c->tmp, ADD(I(2 * hp), V(v2)),
                                                     ld(L, c, c->rbh, ADD(I((int64_t)c->dir * hp), V(v2))))))
                return -1;
        }
        /* G += R h: every gate's columns, but a GRU candidate's without linear_before_reset */
        if (gates_from(L, c, blk, c->h, 0, 0, gru && !c->lbr ? 2 * hp : c->gp))
            return -1;
    }
    LoopStmt *b1 = loop_block(L->p), *b2 = loop_block(L->p);
    if (!b1 || !b2)
        return -1;
    LoopExpr *g0 = ld(L, c, c->tmp, col(L, c, 0, V(k)));
    if (c->op == IR_OP_RNN) {
        if (low_add(L, b1, low_store(L, c->h, ADD(I(c->h_wr), V(k)), act(L, c, b1, 0, g0, 0))))
            return -1;
        return low_add(L, blk, over_h(L, c, k, b1));
    }
    if (gru) {
        /* z, r; with linear_before_reset the candidate and h at once, else r * h
         * into aux[Hp + k] first, the candidate's columns from it, then h */
        int z = low_let(L, b1, "z", act(L, c, b1, 0, g0, 0), 0);
        int r = low_let(L, b1, "r", act(L, c, b1, 0, ld(L, c, c->tmp, col(L, c, 1, V(k))), 0), 0);
        if (z < 0 || r < 0)
            return -1;
        if (c->lbr) {
            LoopExpr *pre = ADD(ld(L, c, c->xw, ADD(xw0, col(L, c, 2, V(k)))),
                                MUL(V(r), ld(L, c, c->tmp, col(L, c, 2, V(k)))));
            LoopExpr *hh = act(L, c, b1, 1, pre, 0);
            LoopExpr *nh = ADD(MUL(low_bin(L, LOOP_SUB, low_const(L, c->t, 1), V(z)), hh),
                               MUL(V(z), ld(L, c, c->h, ADD(I(c->h_rd), V(k)))));
            return low_add(L, b1, low_store(L, c->h, ADD(I(c->h_wr), V(k)), nh)) || low_add(L, blk, over_h(L, c, k, b1)) ? -1 : 0;
        }
        if (low_add(L, b1, low_store(L, c->aux, V(k), V(z))) ||
            low_add(L, b1, low_store(L, c->aux, ADD(I(hp), V(k)), MUL(V(r), ld(L, c, c->h, V(k))))) ||
            low_add(L, blk, over_h(L, c, k, b1)) || gates_from(L, c, blk, c->aux, hp, 2 * hp, hp))
            return -1;
        LoopExpr *z2 = ld(L, c, c->aux, V(k2));
        LoopExpr *hh = act(L, c, b2, 1, ld(L, c, c->tmp, col(L, c, 2, V(k2))), 0);
        LoopExpr *nh = ADD(MUL(low_bin(L, LOOP_SUB, low_const(L, c->t, 1), z2), hh),
                           MUL(ld(L, c, c->aux, V(k2)), ld(L, c, c->h, V(k2))));
        return low_add(L, b2, low_store(L, c->h, V(k2), nh)) || low_add(L, blk, over_h(L, c, k2, b2)) ? -1 : 0;
    }
    /* LSTM, gates i o f c at columns 0, Hp, 2Hp, 3Hp */
    LoopExpr *cs = ld(L, c, c->cs, V(k));
    int iv = low_let(L, b1, "i", act(L, c, b1, 0, add_opt(L, g0, peep(L, c, k, 0, cs)), 0), 0);
    if (iv < 0)
        return -1;
    LoopExpr *f = c->input_forget ? low_bin(L, LOOP_SUB, low_const(L, c->t, 1), V(iv))
                                  : act(L, c, b1, 0, add_opt(L, ld(L, c, c->tmp, col(L, c, 2, V(k))),
                                                             peep(L, c, k, 2, ld(L, c, c->cs, V(k)))), 0);
    int fv = low_let(L, b1, "f", f, 0);
    int gv = fv < 0 ? -1 : low_let(L, b1, "g", act(L, c, b1, 1, ld(L, c, c->tmp, col(L, c, 3, V(k))), 0), 0);
    int nc = gv < 0 ? -1 : low_let(L, b1, "nc", ADD(MUL(V(fv), ld(L, c, c->cs, V(k))), MUL(V(iv), V(gv))), 0);
    if (nc < 0)
        return -1;
    int ov = low_let(L, b1, "o", act(L, c, b1, 0, add_opt(L, ld(L, c, c->tmp, col(L, c, 1, V(k))),
                                                          peep(L, c, k, 1, V(nc))), 0), 0);
    if (ov < 0 || low_add(L, b1, low_store(L, c->h, ADD(I(c->h_wr), V(k)), MUL(V(ov), act(L, c, b1, 2, V(nc), 1)))) ||
        low_add(L, b1, low_store(L, c->cs, V(k), V(nc))))
        return -1;
    return low_add(L, blk, over_h(L, c, k, b1));
}

/* Y at time index e (a variable), row k. */
static LoopExpr *y_index(Low *L, const Rnn *c, LoopExpr *t, int k)
{
    LoopExpr *e = c->layout ? ADD(MUL(ADD(MUL(V(c->bt), I(c->seq)), t), I(c->dirs)), I(c->dir))
                            : ADD(MUL(ADD(MUL(t, I(c->dirs)), I(c->dir)), I(c->batch)), V(c->bt));
    return ADD(MUL(e, I(c->hs)), V(k));
}

/* The nest of one direction (the packed form's input projection first). */
static int direction(Low *L, Rnn *c, LoopStmt *kblk)
{
    int rev = c->dir == 1 || c->reverse0, s, k;
    if (c->fast && !c->gpu && c->wt >= 0 && project(L, c, kblk))
        return -1;
    LoopStmt *row = loop_block(L->p), *init = loop_block(L->p);
    if ((!c->tasks && low_vars(L, 1, "b", &c->bt)) || low_vars(L, 1, "s", &s) || low_vars(L, 1, "k", &k))
        return -1;                                 /* task form: c->bt is the task's */
    /* the row's length, clamped to [0, seq] */
    LoopExpr *len = c->sl >= 0 ? low_bin(L, LOOP_MIN, low_bin(L, LOOP_MAX, low_load(L, c->sl, V(c->bt), IR_DT_I64), I(0)),
                                         I(c->seq))
                               : I(c->seq);
    int lv = low_let(L, row, "len", len, 0);
    if (lv < 0)
        return -1;
    LoopExpr *so = state_off(L, c);
    LoopExpr *h0 = c->h0 >= 0 ? ld(L, c, c->h0, ADD(so, V(k))) : low_const(L, c->t, 0);
    if (low_add(L, init, low_store(L, c->h, V(k), h0)))
        return -1;
    if (c->cs >= 0) {                              /* LSTM's cell state */
        LoopExpr *c0 = c->c0 >= 0 ? ld(L, c, c->c0, ADD(state_off(L, c), V(k))) : low_const(L, c->t, 0);
        if (low_add(L, init, low_store(L, c->cs, V(k), c0)))
            return -1;
    }
    if (low_add(L, row, over_h(L, c, k, init)))
        return -1;
    /* time steps: s < len runs time index t = rev ? len - 1 - s : s; Y is 0 past len */
    LoopStmt *run = loop_block(L->p), *pad = loop_block(L->p);
    LoopExpr *t = rev ? low_bin(L, LOOP_SUB, low_bin(L, LOOP_SUB, V(lv), I(1)), V(s)) : V(s);
    if ((c->tv = low_let(L, run, "t", t, 0)) < 0 || step(L, c, run) != 0)
        return -1;
    if (c->y >= 0) {
        int ky, kz;
        if (low_vars(L, 1, "k", &ky) || low_vars(L, 1, "k", &kz) ||
            low_add(L, run, over_h(L, c, ky, low_store(L, c->y, y_index(L, c, V(c->tv), ky), ld(L, c, c->h, V(ky))))) ||
            low_add(L, pad, over_h(L, c, kz, low_store(L, c->y, y_index(L, c, V(s), kz), low_const(L, c->t, 0)))))
            return -1;
    }
    LoopStmt *st = loop_if(L->p, low_bin(L, LOOP_LT, V(s), V(lv)), run, c->y >= 0 ? pad : NULL);
    if (low_add(L, row, loop_for(L->p, s, I(c->seq), LOOP_SERIAL, st)))
        return -1;
    /* Y_h / Y_c: the final state, 0 for an empty row */
    int kf;
    LoopStmt *fin = loop_block(L->p);
    if (low_vars(L, 1, "k", &kf))
        return -1;
    LoopExpr *empty = low_bin(L, LOOP_EQ, V(lv), I(0));
    if (c->yh >= 0 &&
        low_add(L, fin, low_store(L, c->yh, ADD(state_off(L, c), V(kf)),
                                  loop_select(L->p, empty, low_const(L, c->t, 0), ld(L, c, c->h, V(kf))))))
        return -1;
    if (c->yc >= 0 &&
        low_add(L, fin, low_store(L, c->yc, ADD(state_off(L, c), V(kf)),
                                  loop_select(L->p, loop_expr_copy(L->p, empty), low_const(L, c->t, 0),
                                              ld(L, c, c->cs, V(kf))))))
        return -1;
    if (fin->u.block.n && low_add(L, row, over_h(L, c, kf, fin)))
        return -1;
    return low_add(L, kblk, c->tasks ? row : loop_for(L->p, c->bt, I(c->batch), LOOP_SERIAL, row));
}

/* The split form: one direction at batch 1 without sequence_lens, on the
 * CPU with --threads T (LowSchedule.rnn_threads), the packed form with XW made
 * by its own kernel.  Each time step is one PARALLEL loop over T parts of
 * the hidden units: part i computes, for units [i H/T, (i+1) H/T), every
 * gate's columns of G (XW, then += R h: tile_mv over its panels) and the
 * gate math, and stores its units of h, c and Y; the end of the parallel
 * loop is the step's one barrier, after which every part reads all of h.
 * (GRU's candidate needs r * h of every unit unless linear_before_reset:
 * those keep one task.)  The state is workspace, shared by the parts; the
 * time loop is marked rolled (UNROLLED, factor 1) so that the schedule
 * does not take it for an independent loop.  Initial states and Y_h / Y_c
 * are parallel loops over the parts too. */
typedef int (*RnnPartFn)(Low *L, Rnn *c, LoopStmt *blk);

/* for part < T PARALLEL { if part == 0: fn(part 0) else if ...: fn(part T-1) } */
static int parts(Low *L, Rnn *c, LoopStmt *blk, RnnPartFn fn)
{
    int part;
    if (low_vars(L, 1, "part", &part))
        return -1;
    int64_t U = c->hs / c->split;
    LoopStmt *chain = NULL;
    for (int i = c->split - 1; i >= 0; i--) {
        LoopStmt *b = loop_block(L->p);
        c->ulo = i * U;
        c->un = U;
        int bad = !b || fn(L, c, b);
        c->un = 0;
        if (bad)
            return -1;
        chain = chain ? loop_if(L->p, low_bin(L, LOOP_EQ, V(part), I(i)), b, chain) : b;
    }
    return low_add(L, blk, loop_for(L->p, part, I(c->split), LOOP_PARALLEL, chain));
}

static int part_init(Low *L, Rnn *c, LoopStmt *blk)
{
    int k;
    LoopStmt *b = loop_block(L->p);
    if (!b || low_vars(L, 1, "k", &k))
        return -1;
    LoopExpr *h0 = c->h0 >= 0 ? ld(L, c, c->h0, ADD(state_off(L, c), V(k))) : low_const(L, c->t, 0);
    if (low_add(L, b, low_store(L, c->h, V(k), h0)))          /* (the first step reads h[0, H)) */
        return -1;
    if (c->cs >= 0) {
        LoopExpr *c0 = c->c0 >= 0 ? ld(L, c, c->c0, ADD(state_off(L, c), V(k))) : low_const(L, c->t, 0);
        if (low_add(L, b, low_store(L, c->cs, V(k), c0)))
            return -1;
    }
    return low_add(L, blk, over_h(L, c, k, b));
}

static int part_step(Low *L, Rnn *c, LoopStmt *blk)
{
    int ky;
    if (step(L, c, blk) || low_vars(L, 1, "k", &ky))
        return -1;
    if (c->y < 0)
        return 0;
    return low_add(L, blk, over_h(L, c, ky, low_store(L, c->y, y_index(L, c, V(c->tv), ky),
                                                     ld(L, c, c->h, ADD(I(c->h_wr), V(ky))))));
}

static int part_fin(Low *L, Rnn *c, LoopStmt *blk)
{
    int kf;
    LoopStmt *b = loop_block(L->p);
    if (!b || low_vars(L, 1, "k", &kf))
        return -1;
    if (c->yh >= 0 && low_add(L, b, low_store(L, c->yh, ADD(state_off(L, c), V(kf)),
                                                ld(L, c, c->h, ADD(I(c->h_wr), V(kf))))))
        return -1;
    if (c->yc >= 0 && low_add(L, b, low_store(L, c->yc, ADD(state_off(L, c), V(kf)), ld(L, c, c->cs, V(kf)))))
        return -1;
    return low_add(L, blk, over_h(L, c, kf, b));
}

/* Step s (an expression) into blk, reading h at rd and writing it at wr. */
static int split_step(Low *L, Rnn *c, LoopStmt *blk, LoopExpr *s, int64_t rd)
{
    LoopExpr *t = c->reverse0 ? low_bin(L, LOOP_SUB, I(c->seq - 1), s) : s;
    c->h_rd = rd;
    c->h_wr = c->hs - rd;
    return (c->tv = low_let(L, blk, "t", t, 0)) < 0 || parts(L, c, blk, part_step) ? -1 : 0;
}

/* h holds two states, [0, H) and [H, 2H): a step reads one and writes the
 * other, so a part may store its units while another still reads the state
 * before (the time loop by pairs of steps, and the last step of an odd
 * count after it). */
static int split_kernel(Low *L, Rnn *c)
{
    int s;
    LoopStmt *k = loop_block(L->p), *pair = loop_block(L->p);
    c->dir = 0;
    if (!k || !pair || (c->bt = low_let(L, k, "b", I(0), 0)) < 0 || low_vars(L, 1, "s", &s) ||
        parts(L, c, k, part_init))
        return -1;
    if (c->seq >= 2) {
        if (split_step(L, c, pair, MUL(V(s), I(2)), 0) || split_step(L, c, pair, ADD(MUL(V(s), I(2)), I(1)), c->hs))
            return -1;
        LoopStmt *tl = loop_for(L->p, s, I(c->seq / 2), LOOP_UNROLLED, pair);
        if (!tl)
            return -1;
        tl->u.loop.factor = 1;
        if (low_add(L, k, tl))
            return -1;
    }
    if (c->seq % 2 && split_step(L, c, k, I(c->seq - 1), 0))
        return -1;
    if ((c->yh >= 0 || c->yc >= 0) && parts(L, c, k, part_fin))   /* (h_wr: the last step's) */
        return -1;
    return low_kernel(L, k);
}

/* The task form's kernels: the GPU form's input projection, then the tasks
 * direction x batch row, task = dir * batch + b, in one loop: PARALLEL on
 * the GPU; on the CPU a SERIAL loop that the schedule splits between threads
 * (--threads), each task with its own state.  The CPU takes this form when
 * the register-blocked input projection (pack) made XW for every direction
 * and there are two tasks or more: a bidirectional layer's two directions
 * then run on two cores (before, its recurrence had no parallel loop: the
 * time steps are serial, and batch 1 leaves one row). */
static int task_kernels(Low *L, Rnn *c)
{
    int64_t proj = c->gpu && c->fast ? project_gpu(L, c) : 0;
    int task;
    LoopStmt *body = loop_block(L->p), *rows[2] = { loop_block(L->p), loop_block(L->p) };
    if (proj < 0 || !body || !rows[0] || !rows[1] || low_vars(L, 1, "task", &task))
        return -1;
    c->bt = c->dirs == 1 ? task : low_let(L, body, "b", low_bin(L, LOOP_MOD, V(task), I(c->batch)), 0);
    if (c->bt < 0)
        return -1;
    for (c->dir = 0; c->dir < c->dirs; c->dir++)
        if (direction(L, c, rows[c->dir]) != 0)
            return -1;
    LoopStmt *dirs = c->dirs == 1 ? rows[0]                                   /* task < batch: direction 0 */
                                  : loop_if(L->p, low_bin(L, LOOP_LT, V(task), I(c->batch)), rows[0], rows[1]);
    if (low_add(L, body, dirs) ||
        low_kernel(L, loop_for(L->p, task, I(c->dirs * c->batch), c->gpu ? LOOP_PARALLEL : LOOP_SERIAL, body)))
        return -1;
    LoopKernel *k = &L->p->kernels[L->p->n_kernels - 1];
    k->flops = k->flops > proj ? k->flops - proj : 0;
    return 0;
}

int low_rnn(Low *L)
{
    const IrNode *n = L->n;
    Rnn c = { .op = n->op, .x = low_in(L, 0), .w = low_in(L, 1), .r = low_in(L, 2), .b = low_in(L, 3),
              .sl = low_in(L, 4), .h0 = low_in(L, 5), .c0 = low_in(L, 6), .pp = low_in(L, 7),
              .y = low_out(L, 0), .yh = low_out(L, 1), .yc = low_out(L, 2), .t = IR_DT_F64,
              .layout = (int)ir_attr_int(n, IR_A_layout) };
    if (n->op != IR_OP_LSTM)
        c.c0 = c.pp = c.yc = -1;
    const LoopBuf *xb = low_buf(L, c.x);
    c.dirs = (int)low_buf(L, c.w)->shape.dims[0];
    c.gates = n->op == IR_OP_LSTM ? 4 : n->op == IR_OP_GRU ? 3 : 1;
    c.per = n->op == IR_OP_LSTM ? 3 : n->op == IR_OP_GRU ? 2 : 1;
    c.hs = low_buf(L, c.r)->shape.dims[2];
    c.seq = xb->shape.dims[c.layout ? 1 : 0];
    c.batch = xb->shape.dims[c.layout ? 0 : 1];
    c.isz = xb->shape.dims[2];
    c.has_clip = ir_has_attr(n, IR_A_clip);
    c.clip = ir_attr_float(n, IR_A_clip);
    c.lbr = n->op == IR_OP_GRU && ir_attr_int(n, IR_A_linear_before_reset);
    c.input_forget = n->op == IR_OP_LSTM && ir_attr_int(n, IR_A_input_forget);
    c.reverse0 = !strcmp(ir_attr_str(n, IR_A_direction), "reverse");
    if (ir_rnn_activations(L->g, n, c.dirs, c.act, L->d))
        return -1;
    /* the packed form: float32, SIMD or the GPU form, W R B known (P is read as it is) */
    const IrArray *bk = c.b >= 0 ? low_known(L, 3) : NULL;
    c.gpu = L->s && L->s->rnn_tasks;
    c.fast = L->s && (L->s->vectorize || c.gpu) && low_buf(L, c.x)->dtype == IR_DT_F32 && low_known(L, 1) &&
             low_known(L, 2) && (c.b < 0 || bk) && low_buf(L, c.w)->dtype == IR_DT_F32 &&
             low_buf(L, c.r)->dtype == IR_DT_F32 && (c.b < 0 || low_buf(L, c.b)->dtype == IR_DT_F32);
    c.t = c.fast ? IR_DT_F32 : IR_DT_F64;
    c.hp = (c.hs + 15) / 16 * 16;
    c.gp = c.gates * c.hp;
    c.aux = -1;
    IrShape hs = { .rank = 1, .dims = { c.hs } }, ts = { .rank = 1, .dims = { c.fast ? c.gp : 3 * c.hs } };
    IrShape as = { .rank = 1, .dims = { 2 * c.hp } };
    /* the split form (split_kernel): T parts of whole panels and vectors of units, for steps of
     * at least RNN_SPLIT_MIN_MACS multiply-adds (R h): below, the barrier a step costs about what
     * the split saves on this guest (Zen 3: lstm_kws, 4 x 128 x 128 a step, 0.65-0.92 of one task's
     * time in three alternating runs but slower than 1 thread in the bench's; a 256-unit LSTM 0.58,
     * every round 0.50-0.70) */
    int T = L->s ? L->s->rnn_threads : 0, mvw = c.fast ? tile_mv_width(L->s, c.hp) : 0;
    if (c.fast && !c.gpu && T > 1 && L->s->tile_nr >= 4 && c.dirs * c.batch == 1 && c.sl < 0 && c.seq > 0 &&
        c.hs == c.hp && (n->op != IR_OP_GRU || c.lbr) && mvw > 0 && c.hs % ((int64_t)T * mvw) == 0 &&
        c.gates * c.hs * c.hs >= RNN_SPLIT_MIN_MACS)
        c.split = T;
    LoopStorage st = c.split > 1 ? LOOP_ST_WORKSPACE : LOOP_ST_LOCAL;
    IrShape h2 = { .rank = 1, .dims = { 2 * c.hs } };
    c.h = loop_add_buf(L->p, "rnn_h", c.t, c.split > 1 ? &h2 : &hs, st);
    c.cs = n->op == IR_OP_LSTM ? loop_add_buf(L->p, "rnn_c", c.t, &hs, st) : -1;   /* cell state */
    c.tmp = loop_add_buf(L->p, "rnn_tmp", c.t, &ts, st);
    if (c.fast && n->op == IR_OP_GRU && !c.lbr)
        c.aux = loop_add_buf(L->p, "rnn_aux", c.t, &as, LOOP_ST_LOCAL);
    LoopStmt *k = loop_block(L->p);
    if (c.h < 0 || (n->op == IR_OP_LSTM && c.cs < 0) || c.tmp < 0 || !k ||
        (c.fast && n->op == IR_OP_GRU && !c.lbr && c.aux < 0) || (c.fast && pack(L, &c)))
        return low_oom(L);
    c.tasks = c.gpu || (c.fast && c.proj_tiled && c.wt < 0 && c.dirs * c.batch > 1);
    if (c.split > 1 && !(c.proj_tiled && c.wt < 0))       /* (no projection kernel: one task) */
        c.split = 1;
    if (c.split > 1)
        return split_kernel(L, &c) ? low_oom(L) : 0;
    if (c.tasks)
        return task_kernels(L, &c) ? low_oom(L) : 0;
    for (c.dir = 0; c.dir < c.dirs; c.dir++)
        if (direction(L, &c, k) != 0)
            return low_oom(L);
    return low_kernel(L, k);
}
