/* lower/rnn.c — compute templates of RNN, GRU and LSTM, following
 * the reference interpreter (interp/k_rnn.c): per direction and batch row, a
 * sequential loop over the row's sequence_lens[b] time steps updating the
 * hidden state h (and LSTM's cell state c) kept in kernel-local buffers;
 * gates in ONNX order (RNN i; GRU z r h; LSTM i o f c), B = Wb then Rb,
 * P = i o f peepholes; `clip` bounds gate pre-activations (not the cell
 * state fed to LSTM's h); Y is 0 past a row's length, Y_h / Y_c hold the
 * state after its last step (0 for a row of length 0).  Computes in float64.
 * A sequence length outside [0, seq] is clamped (the interpreter reports it). */
#include "lower/lower_impl.h"

#include <string.h>

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

/* for k < H: body built by the caller into a fresh block; returns the loop. */
static LoopStmt *over_h(Low *L, const Rnn *c, int k, LoopStmt *body)
{
    return loop_for(L->p, k, I(c->hs), LOOP_SERIAL, body);
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

/* One time step into blk: h (and cs) updated through tmp. */
static int step(Low *L, const Rnn *c, LoopStmt *blk)
{
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

/* Y at time index e (a variable), row k. */
static LoopExpr *y_index(Low *L, const Rnn *c, LoopExpr *t, int k)
{
    LoopExpr *e = c->layout ? ADD(MUL(ADD(MUL(V(c->bt), I(c->seq)), t), I(c->dirs)), I(c->dir))
                            : ADD(MUL(ADD(MUL(t, I(c->dirs)), I(c->dir)), I(c->batch)), V(c->bt));
    return ADD(MUL(e, I(c->hs)), V(k));
}

/* The nest of one direction. */
static int direction(Low *L, Rnn *c, LoopStmt *kblk)
{
    int rev = c->dir == 1 || c->reverse0, s, k;
    LoopStmt *row = loop_block(L->p), *init = loop_block(L->p);
    if (low_vars(L, 1, "b", &c->bt) || low_vars(L, 1, "s", &s) || low_vars(L, 1, "k", &k))
        return -1;
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
    return low_add(L, kblk, loop_for(L->p, c->bt, I(c->batch), LOOP_SERIAL, row));
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
    IrShape hs = { .rank = 1, .dims = { c.hs } }, ts = { .rank = 1, .dims = { 3 * c.hs } };
    c.h = loop_add_buf(L->p, "rnn_h", c.t, &hs, LOOP_ST_LOCAL);
    c.cs = n->op == IR_OP_LSTM ? loop_add_buf(L->p, "rnn_c", c.t, &hs, LOOP_ST_LOCAL) : -1;   /* cell state */
    c.tmp = loop_add_buf(L->p, "rnn_tmp", c.t, &ts, LOOP_ST_LOCAL);
    LoopStmt *k = loop_block(L->p);
    if (c.h < 0 || (n->op == IR_OP_LSTM && c.cs < 0) || c.tmp < 0 || !k)
        return low_oom(L);
    for (c.dir = 0; c.dir < c.dirs; c.dir++)
        if (direction(L, &c, k) != 0)
            return low_oom(L);
    return low_kernel(L, k);
}
