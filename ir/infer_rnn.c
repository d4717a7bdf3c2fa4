/* ir/infer_rnn.c — shape and dtype rules of the recurrent operators: RNN, GRU and LSTM
 * (ONNX opset 21 semantics; ir/infer_impl.h). */
#include "ir/infer_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static IrShape shape3(int64_t a, int64_t b, int64_t c)
{
    IrShape s = { .rank = 3, .dims = { a, b, c } };
    return s;
}

/* ---------------------------------------------------- RNN, GRU, LSTM */

static int ieq(const char *a, const char *b)
{
    for (; *a && *b; a++, b++) {
        char x = *a >= 'A' && *a <= 'Z' ? (char)(*a - 'A' + 'a') : *a;
        char y = *b >= 'A' && *b <= 'Z' ? (char)(*b - 'A' + 'a') : *b;
        if (x != y)
            return 0;
    }
    return *a == *b;
}

int ir_rnn_directions(const IrGraph *g, const IrNode *n, UtilDiag *d)
{
    const char *s = ir_attr_str(n, IR_A_direction);
    if (!strcmp(s, "forward") || !strcmp(s, "reverse"))
        return 1;
    if (!strcmp(s, "bidirectional"))
        return 2;
    return ir_node_error(g, n, d, "unknown direction '%s' (expected forward, reverse or bidirectional)", s);
}

static int acts_per_dir(IrOp op) { return op == IR_OP_LSTM ? 3 : op == IR_OP_GRU ? 2 : 1; }

int ir_rnn_activations(const IrGraph *g, const IrNode *n, int dirs, IrRnnActFn *fns, UtilDiag *d)
{
    /* name, kind, uses alpha, uses beta, default alpha, default beta */
    static const struct {
        const char *name;
        IrRnnAct kind;
        int na, nb;
        double a, b;
    } table[] = {
        { "Relu", IR_RNN_RELU, 0, 0, 0, 0 },          { "Tanh", IR_RNN_TANH, 0, 0, 0, 0 },
        { "Sigmoid", IR_RNN_SIGMOID, 0, 0, 0, 0 },    { "Affine", IR_RNN_AFFINE, 1, 1, 1.0, 0.0 },
        { "LeakyRelu", IR_RNN_LEAKYRELU, 1, 0, 0.01, 0 },
        { "ThresholdedRelu", IR_RNN_THRESHOLDEDRELU, 1, 0, 1.0, 0 },
        { "ScaledTanh", IR_RNN_SCALEDTANH, 1, 1, 1.0, 1.0 },
        { "HardSigmoid", IR_RNN_HARDSIGMOID, 1, 1, 0.2, 0.5 },
        { "Elu", IR_RNN_ELU, 1, 0, 1.0, 0 },          { "Softsign", IR_RNN_SOFTSIGN, 0, 0, 0, 0 },
        { "Softplus", IR_RNN_SOFTPLUS, 0, 0, 0, 0 },
    };
    static const char *const defaults[3][3] = { { "Tanh" }, { "Sigmoid", "Tanh" }, { "Sigmoid", "Tanh", "Tanh" } };
    int per = acts_per_dir(n->op), want = per * dirs;
    const IrAttr *a = ir_attr(n, IR_A_activations);
    const char *names[IR_RNN_MAX_ACTS];
    if (a && a->kind == IR_AK_STRINGS) {
        /* one set per direction; a single set (or ONNX's RNN default of two)
         * for one direction uses the first */
        if (a->n != want && !(dirs == 1 && a->n == 2 * per))
            return ir_node_error(g, n, d, "activations has %d names; %s with %d direction%s needs %d", a->n,
                                 ir_op_name(n->op), dirs, dirs > 1 ? "s" : "", want);
        for (int i = 0; i < want; i++)
            names[i] = a->v.strings[i];
    } else
        for (int i = 0; i < want; i++)
            names[i] = defaults[per - 1][i % per];
    /* alpha/beta are consumed in order by the activations that take them */
    const double *al, *be;
    int nal = ir_attr_floats(n, IR_A_activation_alpha, &al), nbe = ir_attr_floats(n, IR_A_activation_beta, &be);
    int ia = 0, ib = 0;
    for (int i = 0; i < want; i++) {
        size_t k = 0;
        while (k < sizeof table / sizeof table[0] && !ieq(table[k].name, names[i]))
            k++;
        if (k == sizeof table / sizeof table[0])
            return ir_node_error(g, n, d, "activations: unknown activation function '%s'", names[i]);
        fns[i].kind = table[k].kind;
        fns[i].alpha = table[k].na && ia < nal ? al[ia++] : table[k].a;
        fns[i].beta = table[k].nb && ib < nbe ? be[ib++] : table[k].b;
    }
    if (ia < nal || ib < nbe)
        return ir_node_error(g, n, d, "activation_alpha/activation_beta have %d/%d values but the activations take "
                             "only %d/%d", nal, nbe, ia, ib);
    return 0;
}

int ir_infer_rnn(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = ir_in(g, n, 0), *w = ir_in(g, n, 1), *r = ir_in(g, n, 2), *b = ir_in(g, n, 3);
    const IrTensor *sl = ir_in(g, n, 4), *h0 = ir_in(g, n, 5), *c0 = ir_in(g, n, 6), *p = ir_in(g, n, 7);
    int gates = n->op == IR_OP_LSTM ? 4 : n->op == IR_OP_GRU ? 3 : 1;
    if (ir_infer_expect_float(g, n, x, "input X", d) || ir_infer_expect_dtype(g, n, w, "weight W", x->v.dtype, d) ||
        ir_infer_expect_dtype(g, n, r, "recurrence R", x->v.dtype, d))
        return -1;
    int64_t layout = ir_attr_int(n, IR_A_layout);
    if (layout != 0 && layout != 1)
        return ir_node_error(g, n, d, "layout must be 0 or 1, got %lld", (long long)layout);
    int dirs = ir_rnn_directions(g, n, d);
    if (dirs < 0)
        return -1;
    char xs[160];
    if (x->v.shape.rank != 3)
        return ir_node_error(g, n, d, "input X %s must have rank 3", ir_infer_shape_s(&x->v.shape, xs, sizeof xs));
    if (r->v.shape.rank != 3)
        return ir_node_error(g, n, d, "recurrence R %s must have rank 3", ir_infer_shape_s(&r->v.shape, xs, sizeof xs));
    int64_t seq = x->v.shape.dims[layout ? 1 : 0], batch = x->v.shape.dims[layout ? 0 : 1];
    int64_t isz = x->v.shape.dims[2], hs = r->v.shape.dims[2];
    if (ir_has_attr(n, IR_A_hidden_size)) {
        int64_t h = ir_attr_int(n, IR_A_hidden_size);
        if (h <= 0)
            return ir_node_error(g, n, d, "hidden_size must be positive, got %lld", (long long)h);
        hs = h;
    }
    int64_t gh, gh2;
    if (hs <= 0 || util_mul_overflow_i64(hs, gates, &gh) || util_mul_overflow_i64(gh, 2, &gh2))
        return ir_node_error(g, n, d, "hidden size %lld is invalid", (long long)hs);
    IrShape want = shape3(dirs, gh, isz);
    if (ir_infer_expect_shape(g, n, w, "weight W", &want, d))
        return -1;
    want = shape3(dirs, gh, hs);
    if (ir_infer_expect_shape(g, n, r, "recurrence R", &want, d))
        return -1;
    if (b) {
        IrShape bw = { .rank = 2, .dims = { dirs, gh2 } };
        if (ir_infer_expect_dtype(g, n, b, "bias B", x->v.dtype, d) || ir_infer_expect_shape(g, n, b, "bias B", &bw, d))
            return -1;
    }
    if (sl) {
        IrShape sw = { .rank = 1, .dims = { batch } };
        if (ir_infer_expect_dtype(g, n, sl, "sequence_lens", IR_DT_I32, d) || ir_infer_expect_shape(g, n, sl, "sequence_lens", &sw, d))
            return -1;
        for (int64_t i = 0; sl->v.data && i < batch; i++) {
            int64_t v = ir_load_i64(sl->v.dtype, sl->v.data, i);
            if (v < 0 || v > seq)
                return ir_node_error(g, n, d, "sequence_lens[%lld] = %lld is outside [0, %lld]", (long long)i,
                                     (long long)v, (long long)seq);
        }
    }
    IrShape hsh = layout ? shape3(batch, dirs, hs) : shape3(dirs, batch, hs);
    if (h0 && (ir_infer_expect_dtype(g, n, h0, "initial_h", x->v.dtype, d) || ir_infer_expect_shape(g, n, h0, "initial_h", &hsh, d)))
        return -1;
    if (c0 && (ir_infer_expect_dtype(g, n, c0, "initial_c", x->v.dtype, d) || ir_infer_expect_shape(g, n, c0, "initial_c", &hsh, d)))
        return -1;
    if (p) {
        IrShape pw = { .rank = 2, .dims = { dirs, 3 * hs } };
        if (ir_infer_expect_dtype(g, n, p, "peepholes P", x->v.dtype, d) || ir_infer_expect_shape(g, n, p, "peepholes P", &pw, d))
            return -1;
    }
    if (ir_has_attr(n, IR_A_clip) && !(ir_attr_float(n, IR_A_clip) > 0))
        return ir_node_error(g, n, d, "clip must be positive, got %g", ir_attr_float(n, IR_A_clip));
    if ((n->op == IR_OP_GRU && ir_infer_expect_bool_attr(g, n, IR_A_linear_before_reset, d)) ||
        (n->op == IR_OP_LSTM && ir_infer_expect_bool_attr(g, n, IR_A_input_forget, d)))
        return -1;
    IrRnnActFn fns[IR_RNN_MAX_ACTS];
    if (ir_rnn_activations(g, n, dirs, fns, d))
        return -1;
    IrShape y = { .rank = 4, .dims = { seq, dirs, batch, hs } };
    if (layout) {
        y.dims[0] = batch;
        y.dims[1] = seq;
        y.dims[2] = dirs;
    }
    ir_infer_set(g, n, 0, x->v.dtype, &y);
    ir_infer_set(g, n, 1, x->v.dtype, &hsh);
    ir_infer_set(g, n, 2, x->v.dtype, &hsh);
    return 0;
}
