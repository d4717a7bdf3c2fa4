/* interp/k_rnn.c — RNN, GRU and LSTM: one driver loop over directions,
 * batch rows and time steps, with a step function per cell.
 *
 * Weights are read once into double arrays.  Gate rows follow ONNX: W and R
 * are [dirs, gates * H, .] with gates (RNN) i, (GRU) z r h, (LSTM) i o f c;
 * B is [dirs, 2 * gates * H] = Wb then Rb; P is [dirs, 3 * H] = i o f.
 * Batch row b runs sequence_lens[b] steps (all when absent); the reverse
 * direction starts at its last valid step; Y is 0 past a row's length and
 * Y_h / Y_c hold the state after its last step, and 0 for a row of length
 * 0 (as onnxruntime; the specification leaves that case open).
 * `clip` bounds every gate pre-activation (the input of f and g, as
 * onnxruntime does; the cell state fed to LSTM's h is not clipped).
 * LSTM input_forget couples the gates: f = 1 - i. */
#include "interp/kernels.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct Rnn {
    IrOp op;
    int dirs, per, layout, has_clip, lbr, input_forget;
    int64_t seq, batch, isz, hs, gates;
    double clip;
    const double *w, *r, *b, *p;             /* whole tensors (b, p zero-filled when absent) */
    IrRnnActFn act[IR_RNN_MAX_ACTS];
} Rnn;

static double act_fn(const IrRnnActFn *f, double v)
{
    switch (f->kind) {
    case IR_RNN_RELU: return v > 0 ? v : 0;
    case IR_RNN_TANH: return tanh(v);
    case IR_RNN_SIGMOID: return 1.0 / (1.0 + exp(-v));
    case IR_RNN_AFFINE: return f->alpha * v + f->beta;
    case IR_RNN_LEAKYRELU: return v >= 0 ? v : f->alpha * v;
    case IR_RNN_THRESHOLDEDRELU: return v >= f->alpha ? v : 0;
    case IR_RNN_SCALEDTANH: return f->alpha * tanh(f->beta * v);
    case IR_RNN_HARDSIGMOID: {
        double y = f->alpha * v + f->beta;
        return y < 0 ? 0 : y > 1 ? 1 : y;
    }
    case IR_RNN_ELU: return v >= 0 ? v : f->alpha * (exp(v) - 1);
    case IR_RNN_SOFTSIGN: return v / (1 + fabs(v));
    case IR_RNN_SOFTPLUS: return log1p(exp(v));
    }
    return v;
}

/* Activation k of direction dir applied to a gate pre-activation (clipped). */
static double act(const Rnn *c, int dir, int k, double v)
{
    if (c->has_clip)
        v = v < -c->clip ? -c->clip : v > c->clip ? c->clip : v;
    return act_fn(&c->act[dir * c->per + k], v);
}

/* W[dir, row] . x + Wb[dir, row] */
static double wx(const Rnn *c, int dir, int64_t row, const double *x)
{
    const double *w = c->w + (dir * c->gates * c->hs + row) * c->isz;
    double s = c->b[dir * 2 * c->gates * c->hs + row];
    for (int64_t i = 0; i < c->isz; i++)
        s += w[i] * x[i];
    return s;
}

/* R[dir, row] . h + Rb[dir, row] */
static double rh(const Rnn *c, int dir, int64_t row, const double *h)
{
    const double *r = c->r + (dir * c->gates * c->hs + row) * c->hs;
    double s = c->b[(dir * 2 + 1) * c->gates * c->hs + row];
    for (int64_t i = 0; i < c->hs; i++)
        s += r[i] * h[i];
    return s;
}

/* One time step: h (and LSTM's cell state cs) updated in place; tmp has
 * room for 3 * H doubles. */
typedef void (*RnnStep)(const Rnn *c, int dir, const double *x, double *h, double *cs, double *tmp);

static void step_rnn(const Rnn *c, int dir, const double *x, double *h, double *cs, double *tmp)
{
    (void)cs;
    int64_t H = c->hs;
    for (int64_t k = 0; k < H; k++)
        tmp[k] = act(c, dir, 0, wx(c, dir, k, x) + rh(c, dir, k, h));
    memcpy(h, tmp, (size_t)H * sizeof *h);
}

static void step_gru(const Rnn *c, int dir, const double *x, double *h, double *cs, double *tmp)
{
    (void)cs;
    int64_t H = c->hs;
    double *z = tmp, *r = tmp + H, *nh = tmp + 2 * H;
    for (int64_t k = 0; k < H; k++) {
        z[k] = act(c, dir, 0, wx(c, dir, k, x) + rh(c, dir, k, h));
        r[k] = act(c, dir, 0, wx(c, dir, H + k, x) + rh(c, dir, H + k, h));
    }
    if (c->lbr)                                  /* g(Wh x + Wbh + r * (Rh h + Rbh)) */
        for (int64_t k = 0; k < H; k++)
            nh[k] = act(c, dir, 1, wx(c, dir, 2 * H + k, x) + r[k] * rh(c, dir, 2 * H + k, h));
    else {                                       /* g(Wh x + Wbh + Rh (r * h) + Rbh) */
        for (int64_t k = 0; k < H; k++)
            r[k] *= h[k];
        for (int64_t k = 0; k < H; k++)
            nh[k] = act(c, dir, 1, wx(c, dir, 2 * H + k, x) + rh(c, dir, 2 * H + k, r));
    }
    for (int64_t k = 0; k < H; k++)
        h[k] = (1 - z[k]) * nh[k] + z[k] * h[k];
}

static void step_lstm(const Rnn *c, int dir, const double *x, double *h, double *cs, double *tmp)
{
    int64_t H = c->hs;
    const double *pi = c->p + dir * 3 * H, *po = pi + H, *pf = pi + 2 * H;
    double *nh = tmp, *nc = tmp + H;
    for (int64_t k = 0; k < H; k++) {
        double i = act(c, dir, 0, wx(c, dir, k, x) + rh(c, dir, k, h) + pi[k] * cs[k]);
        double f = c->input_forget ? 1 - i : act(c, dir, 0, wx(c, dir, 2 * H + k, x) + rh(c, dir, 2 * H + k, h) +
                                                                pf[k] * cs[k]);
        double g = act(c, dir, 1, wx(c, dir, 3 * H + k, x) + rh(c, dir, 3 * H + k, h));
        nc[k] = f * cs[k] + i * g;
        double o = act(c, dir, 0, wx(c, dir, H + k, x) + rh(c, dir, H + k, h) + po[k] * nc[k]);
        nh[k] = o * act_fn(&c->act[dir * c->per + 2], nc[k]);      /* h(C), unclipped */
    }
    memcpy(h, nh, (size_t)H * sizeof *h);
    memcpy(cs, nc, (size_t)H * sizeof *cs);
}

/* The whole of a (or zeros when absent) as doubles. */
static double *load_f64(const IrArray *a, int64_t zeros)
{
    int64_t n = a ? ir_array_numel(a) : zeros;
    double *v = calloc(n > 0 ? (size_t)n : 1, sizeof *v);
    for (int64_t i = 0; a && v && i < n; i++)
        v[i] = ir_load_f64(a->dtype, a->data, i);
    return v;
}

/* Offset of (dir, batch row) in a [dirs, batch, H] / [batch, dirs, H] state. */
static int64_t state_off(const Rnn *c, int dir, int64_t bt)
{
    return (c->layout ? bt * c->dirs + dir : dir * c->batch + bt) * c->hs;
}

int interp_k_rnn(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out, UtilDiag *d)
{
    const IrArray *x = in[0];
    const IrArray *opt[8] = { NULL };
    for (int i = 3; i < n->n_in && i < 8; i++)
        opt[i] = in[i];
    Rnn c = { .op = n->op, .layout = (int)ir_attr_int(n, IR_A_layout) };
    c.dirs = in[1]->shape.dims[0];
    c.gates = n->op == IR_OP_LSTM ? 4 : n->op == IR_OP_GRU ? 3 : 1;
    c.per = n->op == IR_OP_LSTM ? 3 : n->op == IR_OP_GRU ? 2 : 1;
    c.hs = in[2]->shape.dims[2];
    c.seq = x->shape.dims[c.layout ? 1 : 0];
    c.batch = x->shape.dims[c.layout ? 0 : 1];
    c.isz = x->shape.dims[2];
    c.has_clip = ir_has_attr(n, IR_A_clip);
    c.clip = ir_attr_float(n, IR_A_clip);
    c.lbr = n->op == IR_OP_GRU && ir_attr_int(n, IR_A_linear_before_reset);
    c.input_forget = n->op == IR_OP_LSTM && ir_attr_int(n, IR_A_input_forget);
    if (ir_rnn_activations(g, n, c.dirs, c.act, d))
        return -1;
    int reverse0 = !strcmp(ir_attr_str(n, IR_A_direction), "reverse");
    RnnStep step = n->op == IR_OP_LSTM ? step_lstm : n->op == IR_OP_GRU ? step_gru : step_rnn;
    int64_t H = c.hs;
    double *w = load_f64(in[1], 0), *r = load_f64(in[2], 0), *b = load_f64(opt[3], c.dirs * 2 * c.gates * H);
    double *p = load_f64(opt[7], c.dirs * 3 * H), *xs = load_f64(x, 0);
    double *h = load_f64(NULL, H), *cs = load_f64(NULL, H), *tmp = load_f64(NULL, 3 * H);
    int rc = 0;
    if (!w || !r || !b || !p || !xs || !h || !cs || !tmp) {
        rc = ir_node_error(g, n, d, "out of memory");
        goto done;
    }
    c.w = w;
    c.r = r;
    c.b = b;
    c.p = p;
    for (int dir = 0; dir < c.dirs; dir++) {
        int rev = dir == 1 || reverse0;
        for (int64_t bt = 0; bt < c.batch; bt++) {
            int64_t len = opt[4] ? ir_load_i64(opt[4]->dtype, opt[4]->data, bt) : c.seq;
            if (len < 0 || len > c.seq) {
                rc = ir_node_error(g, n, d, "sequence_lens[%lld] = %lld is outside [0, %lld]", (long long)bt,
                                   (long long)len, (long long)c.seq);
                goto done;
            }
            int64_t so = state_off(&c, dir, bt);
            for (int64_t k = 0; k < H; k++) {
                h[k] = opt[5] ? ir_load_f64(opt[5]->dtype, opt[5]->data, so + k) : 0.0;
                cs[k] = opt[6] ? ir_load_f64(opt[6]->dtype, opt[6]->data, so + k) : 0.0;
            }
            for (int64_t s = 0; s < len; s++) {
                int64_t t = rev ? len - 1 - s : s;
                const double *xt = xs + (c.layout ? bt * c.seq + t : t * c.batch + bt) * c.isz;
                step(&c, dir, xt, h, cs, tmp);
                if (out[0]) {
                    int64_t yo = (c.layout ? (bt * c.seq + t) * c.dirs + dir : (t * c.dirs + dir) * c.batch + bt) * H;
                    for (int64_t k = 0; k < H; k++)
                        ir_store_f64(out[0]->dtype, out[0]->data, yo + k, h[k]);
                }
            }
            if (len == 0)
                for (int64_t k = 0; k < H; k++)
                    h[k] = cs[k] = 0.0;
            for (int64_t k = 0; k < H; k++) {
                if (n->n_out > 1 && out[1])
                    ir_store_f64(out[1]->dtype, out[1]->data, so + k, h[k]);
                if (n->n_out > 2 && out[2])
                    ir_store_f64(out[2]->dtype, out[2]->data, so + k, cs[k]);
            }
        }
    }
done:
    free(w);
    free(r);
    free(b);
    free(p);
    free(xs);
    free(h);
    free(cs);
    free(tmp);
    return rc;
}
