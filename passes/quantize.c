/* passes/quantize.c — post-training quantization (--calibrate DIR): a float
 * model becomes the QDQ model ONNX Runtime's quantize_static would write
 * with its defaults (QDQ format, int8 activations with min-max ranges,
 * per-channel symmetric int8 weights, int32 biases), which the qdq and
 * qdq-int8 passes then run on the integers (docs/passes.md, "Post-training
 * quantization").
 *
 *   activation t (range [lo, hi] over the calibration samples, or cut at a
 *   percentile of |t|, widened to hold 0):   s = (hi - lo) / 255 (1 when hi == lo),
 *              z = clamp(round_even(-128 - lo / s), -128, 127),
 *              t → DequantizeLinear(QuantizeLinear(t, s, z), s, z)
 *   weights w of a Conv / Gemm / MatMul (constant), per output channel m:
 *              s[m] = max |w[m, ...]| / 127 (1 when 0), q = clamp(round_even(w / s[m]), -127, 127),
 *              w → DequantizeLinear(q, s, axis = the output channels' axis)
 *   bias b:    q[m] = round_even(b[m] / (xs s[m])), b → DequantizeLinear(q int32, xs s[m])
 *
 * Batch norms and constant scales are folded into the weights first (what
 * ONNX Runtime's quant_pre_process does).  The activations quantized are
 * the inputs and outputs of the products and of Add (the output after a
 * Relu that follows), and the outputs of pooling
 * and reshaping; MaxPool, Flatten and Reshape take their input's scale and
 * zero point (as ONNX Runtime does), so they run on the 8-bit values. */
#include "passes/pass_impl.h"

#include "interp/interp.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define HIST_BINS 2048

typedef struct Act {
    double lo, hi;
    int share;               /* -1, or the tensor whose parameters this one takes */
    int want;
    uint64_t *hist;          /* percentile: counts of |x| over [0, max(-lo, hi)] in HIST_BINS bins */
} Act;

static int runtime_f32(const IrGraph *g, int t)
{
    return t >= 0 && g->tensors[t].v.dtype == IR_DT_F32 && !pass_value(g, t);
}

static int single_consumer(IrGraph *g, int t, IrOp op)
{
    if (!pass_single_use(g, t))
        return -1;
    int u = g->use_node[g->use_start[t]];
    return g->nodes[u].op == op ? u : -1;
}

/* Marks the activations to quantize (Act.want) and the ones that share. */
static void choose(IrGraph *g, Act *a)
{
    ir_build_uses(g);
    for (int i = 0; i < g->n_nodes; i++) {
        const IrNode *n = &g->nodes[i];
        if (n->dead)
            continue;
        int y = n->out[0];
        switch (n->op) {
        case IR_OP_Conv:
        case IR_OP_Gemm:
        case IR_OP_MatMul: {
            if (!runtime_f32(g, n->in[0]) || !pass_value(g, n->in[1]) || g->tensors[n->in[1]].v.dtype != IR_DT_F32)
                break;
            a[n->in[0]].want = 1;
            int r = single_consumer(g, y, IR_OP_Relu);
            a[r >= 0 ? g->nodes[r].out[0] : y].want = 1;
            break;
        }
        case IR_OP_Add:
            if (runtime_f32(g, n->in[0]) && runtime_f32(g, n->in[1]) && runtime_f32(g, y)) {
                int r = single_consumer(g, y, IR_OP_Relu);
                a[n->in[0]].want = a[n->in[1]].want = a[r >= 0 ? g->nodes[r].out[0] : y].want = 1;
            }
            break;
        case IR_OP_MaxPool:
        case IR_OP_Flatten:
        case IR_OP_Reshape:
            if (runtime_f32(g, n->in[0]) && (n->n_out < 2 || n->out[1] < 0)) {
                a[y].want = 1;
                a[y].share = n->in[0];
            }
            break;
        case IR_OP_AveragePool:
        case IR_OP_GlobalAveragePool:
            if (runtime_f32(g, n->in[0]))
                a[n->in[0]].want = a[y].want = 1;
            break;
        default: break;
        }
    }
    /* a shared tensor's source is quantized too; chains resolve to the first */
    for (int t = 0; t < g->n_tensors; t++)
        if (a[t].want && a[t].share >= 0)
            a[a[t].share].want = 1;
}

/* The ranges of the wanted tensors over the samples (the interpreter, with
 * those tensors as extra outputs). */
/* One sweep of the samples through the interpreter (the wanted tensors as
 * extra outputs): pass 0 the ranges (and output 0 into ref), pass 1 the
 * histograms of |x| over the ranges of pass 0. */
static int calibrate(IrGraph *g, Act *a, const IrArray *samples, int n, IrArray *ref, int pass, UtilDiag *d)
{
    int n0 = g->n_outputs, rc = 0;
    for (int t = 0; t < g->n_tensors; t++)
        if (a[t].want && ir_add_output(g, t) < 0) {
            g->n_outputs = n0;
            return util_error(d, util_loc_file(g->file), "out of memory");
        }
    IrArray *out = calloc((size_t)g->n_outputs, sizeof *out);
    if (!out)
        rc = util_error(d, util_loc_file(g->file), "out of memory");
    for (int s = 0; rc == 0 && s < n; s++) {
        if ((rc = interp_run(g, &samples[s], out, d)) != 0)
            break;
        for (int k = n0; k < g->n_outputs; k++) {
            Act *x = &a[g->outputs[k]];
            const float *v = out[k].data;
            double top = fmax(-x->lo, x->hi);
            for (int64_t i = 0; i < ir_array_numel(&out[k]); i++) {
                if (!isfinite(v[i]))
                    continue;
                if (pass == 0) {
                    x->lo = fmin(x->lo, v[i]);
                    x->hi = fmax(x->hi, v[i]);
                } else if (x->hist && top > 0) {
                    int b = (int)(fabs(v[i]) / top * HIST_BINS);
                    x->hist[b < HIST_BINS ? b : HIST_BINS - 1]++;
                }
            }
        }
        if (ref && pass == 0) {         /* output 0, kept for the report */
            ref[s] = out[0];
            out[0] = (IrArray){ 0 };
        }
        for (int k = 0; k < g->n_outputs; k++)
            interp_array_free(&out[k]);
    }
    free(out);
    g->n_outputs = n0;
    return rc;
}

/* Percentile calibration: the ranges cut at the p-th percentile of |x|
 * (ONNX Runtime's percentile calibrator, default 99.999), kept inside the
 * min-max range (a Relu's output keeps its 0).  0, or -1 out of memory. */
static int percentile(IrGraph *g, Act *a, int nt, const IrArray *samples, int n, double p, UtilDiag *d)
{
    int rc = 0;
    for (int t = 0; t < nt && rc == 0; t++)
        if (a[t].want && !(a[t].hist = calloc(HIST_BINS, sizeof *a[t].hist)))
            rc = util_error(d, util_loc_file(g->file), "out of memory");
    if (rc == 0)
        rc = calibrate(g, a, samples, n, NULL, 1, d);
    for (int t = 0; t < nt; t++) {
        Act *x = &a[t];
        if (rc == 0 && x->hist) {
            uint64_t total = 0, run = 0;
            for (int b = 0; b < HIST_BINS; b++)
                total += x->hist[b];
            double top = fmax(-x->lo, x->hi), cut = top;
            for (int b = 0; b < HIST_BINS && total; b++) {
                run += x->hist[b];
                if ((double)run >= p / 100 * (double)total) {
                    cut = top * (b + 1) / HIST_BINS;
                    break;
                }
            }
            x->lo = fmax(x->lo, -cut);
            x->hi = fmin(x->hi, cut);
        }
        free(x->hist);
        x->hist = NULL;
    }
    return rc;
}

static void params(const Act *a, float *s, int *z)
{
    double lo = fmin(a->lo, 0), hi = fmax(a->hi, 0);
    *s = hi > lo ? (float)((hi - lo) / 255) : 1.0f;
    double zp = nearbyint(-128 - lo / *s);
    *z = (int)fmax(-128, fmin(127, zp));
}

/* A new node whose inputs are all set, inferred but never folded (a DQ of
 * constant weights must stay one); its first output, or -1. */
static int node(IrGraph *g, IrOp op, const char *hint, int n, const int *in, int64_t axis, UtilLoc loc, UtilDiag *d)
{
    for (int i = 0; i < n; i++)
        if (in[i] < 0)
            return util_error(d, util_loc_file(g->file), "out of memory");
    int k = pass_emit_node(g, op, hint, n, in, 1, -1, loc);
    IrAttr at = { .key = IR_A_axis, .kind = IR_AK_INT, .v.i = axis };
    if (k < 0 || (axis >= 0 && ir_set_attr(g, k, &at)))
        return util_error(d, util_loc_file(g->file), "out of memory");
    if (ir_infer_node(g, k, d))
        return -1;
    return g->nodes[k].out[0];
}

/* t → DQ(Q(t, s, z), s, z): every reader of t reads the DQ, the Q reads
 * what t's producer writes (pass_replace keeps a graph output's name on the
 * DQ).  0, or -1 with a diagnostic. */
static int insert_qdq(IrGraph *g, int t, float s, int z, UtilDiag *d)
{
    const char *h = g->tensors[t].name;
    UtilLoc loc = g->tensors[t].loc;
    int sc = pass_const_scalar(g, h, IR_DT_F32, s), zp = pass_const_scalar(g, h, IR_DT_I8, z);
    int q = node(g, IR_OP_QuantizeLinear, h, 3, (int[]){ t, sc, zp }, -1, loc, d);
    int qn = q < 0 ? -1 : g->tensors[q].producer;
    int dq = q < 0 ? -1 : node(g, IR_OP_DequantizeLinear, h, 3, (int[]){ q, sc, zp }, -1, loc, d);
    if (dq < 0)
        return -1;
    int p = g->tensors[t].producer, slot = 0;
    for (int k = 0; p >= 0 && k < g->nodes[p].n_out; k++)
        if (g->nodes[p].out[k] == t)
            slot = k;
    if (pass_replace(g, t, dq))
        return util_error(d, util_loc_file(g->file), "internal error: cannot quantize tensor '%s'", h);
    g->nodes[qn].in[0] = p >= 0 ? g->nodes[p].out[slot] : t;
    g->uses_valid = 0;
    return 0;
}

/* The constant weights w (input 1 of product node i) as DQ(int8, per
 * channel), and the bias (input 2 of a Conv or Gemm) as DQ(int32); xs the
 * input's scale.  0, or -1 with a diagnostic. */
static int quantize_weights(IrGraph *g, int i, float xs, UtilDiag *d)
{
    const IrNode *n = &g->nodes[i];
    int w = n->in[1], b = n->n_in > 2 ? n->in[2] : -1;
    const IrShape ws = g->tensors[w].v.shape;
    int axis = n->op == IR_OP_Conv ? 0 : n->op == IR_OP_Gemm ? (ir_attr_int(n, IR_A_transB) ? 0 : 1) : ws.rank - 1;
    if (ws.rank < 1 || (n->op != IR_OP_Conv && ws.rank != 2))
        return 0;
    int64_t M = ws.dims[axis], total = ir_shape_numel(&ws), inner = 1;
    for (int k = axis + 1; k < ws.rank; k++)
        inner *= ws.dims[k];
    const char *h = g->tensors[w].name;
    UtilLoc loc = n->loc;
    IrShape ms = { .rank = 1, .dims = { M } };
    int qt = pass_new_const(g, h, IR_DT_I8, &ws), st = qt < 0 ? -1 : pass_new_const(g, h, IR_DT_F32, &ms);
    if (st < 0)
        return util_error(d, util_loc_file(g->file), "out of memory");
    const float *wv = pass_value(g, w)->data;
    float *sv = g->tensors[st].v.data;
    int8_t *qv = g->tensors[qt].v.data;
    for (int64_t m = 0; m < M; m++)
        sv[m] = 0;
    for (int64_t e = 0; e < total; e++) {
        int64_t m = (e / inner) % M;
        sv[m] = fmaxf(sv[m], fabsf(wv[e]));
    }
    for (int64_t m = 0; m < M; m++)
        sv[m] = sv[m] > 0 && isfinite(sv[m]) ? sv[m] / 127 : 1.0f;
    for (int64_t e = 0; e < total; e++)
        qv[e] = (int8_t)fmax(-127, fmin(127, nearbyint(wv[e] / sv[(e / inner) % M])));
    int dw = node(g, IR_OP_DequantizeLinear, h, 2, (int[]){ qt, st }, axis, loc, d);
    if (dw < 0)
        return -1;
    g->nodes[i].in[1] = dw;
    if (b >= 0 && pass_value(g, b) && g->tensors[b].v.dtype == IR_DT_F32 && ir_shape_numel(&g->tensors[b].v.shape) == M) {
        const char *bh = g->tensors[b].name;
        int bq = pass_new_const(g, bh, IR_DT_I32, &ms), bs = bq < 0 ? -1 : pass_new_const(g, bh, IR_DT_F32, &ms);
        if (bs < 0)
            return util_error(d, util_loc_file(g->file), "out of memory");
        const float *bv = pass_value(g, b)->data, *s2 = g->tensors[st].v.data;
        float *bsv = g->tensors[bs].v.data;
        int32_t *bqv = g->tensors[bq].v.data;
        for (int64_t m = 0; m < M; m++) {
            bsv[m] = xs * s2[m];
            bqv[m] = (int32_t)fmax(-2147483647.0, fmin(2147483647.0, nearbyint(bv[m] / bsv[m])));
        }
        int db = node(g, IR_OP_DequantizeLinear, bh, 2, (int[]){ bq, bs }, 0, loc, d);
        if (db < 0)
            return -1;
        g->nodes[i].in[2] = db;
    }
    g->uses_valid = 0;
    return 0;
}

/* The quantized graph's output 0 against the float one's (ref) on the
 * samples: how many keep the float output's arg max, and the largest
 * difference over the largest float magnitude. */
static int report(IrGraph *g, const IrArray *samples, int n, const IrArray *ref, PassQuantReport *r, UtilDiag *d)
{
    IrArray *out = calloc((size_t)g->n_outputs + 1, sizeof *out);
    if (!out)
        return util_error(d, util_loc_file(g->file), "out of memory");
    double err = 0, mag = 0;
    int rc = 0;
    r->n_samples = n;
    r->top1_same = 0;
    for (int s = 0; rc == 0 && s < n; s++) {
        if ((rc = interp_run(g, &samples[s], out, d)) != 0)
            break;
        if (out[0].dtype == IR_DT_F32 && ref[s].dtype == IR_DT_F32 && ir_array_numel(&out[0]) == ir_array_numel(&ref[s])) {
            const float *q = out[0].data, *f = ref[s].data;
            int64_t m = ir_array_numel(&out[0]), aq = 0, af = 0;
            for (int64_t i = 0; i < m; i++) {
                err = fmax(err, fabs((double)q[i] - f[i]));
                mag = fmax(mag, fabs((double)f[i]));
                aq = q[i] > q[aq] ? i : aq;
                af = f[i] > f[af] ? i : af;
            }
            r->top1_same += aq == af;
        }
        for (int k = 0; k < g->n_outputs; k++)
            interp_array_free(&out[k]);
    }
    free(out);
    r->max_rel_err = mag > 0 ? err / mag : err;
    return rc;
}

int pass_quantize(IrGraph *g, const IrArray *samples, int n_samples, double pct, PassQuantReport *rep, UtilDiag *d)
{
    if (n_samples < 1)
        return util_error(d, util_loc_file(g->file), "--calibrate: no calibration samples");
    /* first what ONNX Runtime's quant_pre_process does: batch norms and
     * constant scales folded into the products' weights, constants folded */
    static const char *const pre[] = { "fold-constants", "remove-identity", "simplify", "fold-batchnorm", "simplify",
                                       "fold-weights", "fold-constants", "cse", "dce" };
    for (size_t i = 0; i < sizeof pre / sizeof *pre; i++)
        if (pass_run_checked(g, pass_find(pre[i]), d) < 0)
            return -1;
    Act *a = calloc((size_t)g->n_tensors + 1, sizeof *a);
    if (!a)
        return util_error(d, util_loc_file(g->file), "out of memory");
    int nt = g->n_tensors, rc = 0, changes = 0;
    for (int t = 0; t < nt; t++)
        a[t] = (Act){ .lo = INFINITY, .hi = -INFINITY, .share = -1 };
    choose(g, a);
    IrArray *ref = rep ? calloc((size_t)n_samples, sizeof *ref) : NULL;
    if (rep && !ref) {
        free(a);
        return util_error(d, util_loc_file(g->file), "out of memory");
    }
    rc = calibrate(g, a, samples, n_samples, ref, 0, d);
    if (rc == 0 && pct > 0)
        rc = percentile(g, a, nt, samples, n_samples, pct, d);
    /* the products' weights first, while their inputs are the float tensors */
    int n0 = g->n_nodes;
    for (int i = 0; rc == 0 && i < n0; i++) {
        const IrNode *n = &g->nodes[i];
        if (n->dead || (n->op != IR_OP_Conv && n->op != IR_OP_Gemm && n->op != IR_OP_MatMul) || !a[n->in[0]].want ||
            !pass_value(g, n->in[1]))
            continue;
        float s;
        int z;
        params(&a[n->in[0]], &s, &z);
        rc = quantize_weights(g, i, s, d);
        changes++;
    }
    for (int t = 0; rc == 0 && t < nt; t++) {
        if (!a[t].want)
            continue;
        int src = t;
        while (a[src].share >= 0)
            src = a[src].share;
        float s;
        int z;
        params(&a[src], &s, &z);
        rc = insert_qdq(g, t, s, z, d);
        changes++;
    }
    free(a);
    if (rc == 0)
        rc = pass_finish(g, changes, d) < 0;
    if (rc == 0 && rep)
        rc = report(g, samples, n_samples, ref, rep, d);
    for (int s = 0; ref && s < n_samples; s++)
        interp_array_free(&ref[s]);
    free(ref);
    return rc ? -1 : changes;
}
