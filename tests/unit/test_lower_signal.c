/* tests/unit/test_lower_signal.c — the loop-IR lowerings of Det, STFT and
 * MelWeightMatrix (lower/signal.c) run end to end: small one-node
 * graphs compiled for the host CPU (tgt_host_jit: lowering → schedule →
 * memory plan → LLVM JIT), once with the CPU schedule and once with the GPU
 * schedule emulated on the host, compared with hand-computed values within
 * |got - want| <= 1e-5 (float32 / float64) or 2e-3 (float16); plus the
 * lowering's diagnostics for operands not known at compile time. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interp/interp.h"
#include "targets/targets.h"
#include "tests/unit/lower_graph.h"

#define MAX_IO 6

/* Input values of graph input i (converted to its dtype). */
typedef struct Feed {
    const double *v[MAX_IO];
} Feed;

static void fail_diag(const char *what, const UtilDiag *d)
{
    char m[1200];
    util_diag_format(d, m, sizeof m);
    fail_msg("%s: %s", what, m);
}

/* Infers t's graph, compiles it both ways (CPU, emulated GPU) and checks
 * output 0 against want (n values) within tol. */
static void run_check(TG *t, const Feed *f, const double *want, int64_t n, double tol)
{
    IrGraph *g = t->g;
    if (pass_infer(g, &t->d) != 0)
        fail_diag("infer", &t->d);
    int ni = g->n_inputs;
    assert_true(ni <= MAX_IO);
    IrArray in[MAX_IO];
    for (int i = 0; i < ni; i++) {
        const IrTensor *x = &g->tensors[g->inputs[i]];
        in[i] = (IrArray){ .dtype = x->v.dtype, .shape = x->v.shape };
        in[i].data = calloc(ir_array_bytes(&in[i]) + 1, 1);
        for (int64_t k = 0; k < ir_array_numel(&in[i]); k++)
            ir_store_f64(in[i].dtype, in[i].data, k, f->v[i][k]);
    }
    for (int emulate = 0; emulate < 2; emulate++) {
        UtilDiag d;
        util_diag_init(&d);
        TgtOptions o = { .name = "sig", .opt_level = 1, .gpu_emulate = emulate };
        TgtHostModel *m = NULL;
        IrArray out[2] = { 0 };
        if (tgt_host_jit(g, &o, &m, &d) != 0 || tgt_host_run(m, in, out, &d) != 0)
            fail_diag(emulate ? "gpu-emulate" : "cpu", &d);
        assert_int_equal(ir_array_numel(&out[0]), n);
        for (int64_t k = 0; k < n; k++) {
            double got = ir_load_f64(out[0].dtype, out[0].data, k);
            if (!(fabs(got - want[k]) <= tol))
                fail_msg("%s (%s) element %lld: got %.9g, want %.9g", g->name, emulate ? "gpu-emulate" : "cpu",
                         (long long)k, got, want[k]);
        }
        interp_array_free(&out[0]);
        tgt_host_free(m);
    }
    for (int i = 0; i < ni; i++)
        free(in[i].data);
    ir_graph_free(g);
}

/* ----------------------------------------------------------------- Det */

static void det_case(IrDType dt, int rank, const int64_t *dims, const double *x, const double *want, int64_t n,
                     double tol)
{
    TG t;
    tg_start(&t, "det");
    int xi = tg_input(&t, "x", dt, rank, dims);
    tg_output(&t, tg_node(&t, IR_OP_Det, "det", 1, &xi, 1));
    Feed f = { { x } };
    run_check(&t, &f, want, n, tol);
}

static void test_det(void **state)
{
    (void)state;
    /* [[1,2],[3,4]]: 1*4 - 2*3 = -2 */
    det_case(IR_DT_F32, TG_INTS(2, 2), (double[]){ 1, 2, 3, 4 }, (double[]){ -2 }, 1, 1e-5);
    /* a batch [2, 2, 3, 3]:
     *  tridiagonal [[2,-1,0],[-1,2,-1],[0,-1,2]]          det 4
     *  a zero leading pivot [[0,1,0],[1,0,0],[0,0,3]]     one row swap: -3
     *  singular (row 3 = row 1 + row 2) [[1,2,3],[4,5,6],[5,7,9]]   0
     *  [[0,0,1],[0,2,0],[3,0,0]]: rows 1 and 3 swapped    -6 */
    double xb[36] = { 2, -1, 0, -1, 2, -1, 0, -1, 2, /**/ 0, 1, 0, 1, 0, 0, 0, 0, 3, /**/ 1, 2, 3, 4, 5, 6, 5, 7, 9,
                      /**/ 0, 0, 1, 0, 2, 0, 3, 0, 0 };
    det_case(IR_DT_F32, TG_INTS(2, 2, 3, 3), xb, (double[]){ 4, -3, 0, -6 }, 4, 1e-5);
    /* float64, exactly singular: [[1,2],[2,4]] → 0; [[5]] 1x1 → 5 */
    det_case(IR_DT_F64, TG_INTS(2, 2), (double[]){ 1, 2, 2, 4 }, (double[]){ 0 }, 1, 1e-12);
    det_case(IR_DT_F64, TG_INTS(3, 1, 1), (double[]){ 5, -0.5, 7 }, (double[]){ 5, -0.5, 7 }, 3, 1e-12);
    /* float16: [[0.5, 1.5], [2, 1]] → 0.5 - 3 = -2.5 (exact in float16) */
    det_case(IR_DT_F16, TG_INTS(2, 2), (double[]){ 0.5, 1.5, 2, 1 }, (double[]){ -2.5 }, 1, 2e-3);
    /* zero-size matrices: the empty product, 1 */
    det_case(IR_DT_F32, TG_INTS(2, 0, 0), (double[]){ 0 }, (double[]){ 1, 1 }, 2, 0);
}

/* ---------------------------------------------------------------- STFT */

/* STFT of signal x (dims) with frame_step, optional window (wn taps) and
 * frame_length (< 0: absent). */
static void stft_case(const char *name, IrDType dt, const int64_t *xd, const double *x, int64_t step,
                      const double *win, int64_t wn, int64_t fl, int onesided, const double *want, int64_t n)
{
    TG t;
    tg_start(&t, name);
    int in[4] = { tg_input(&t, "signal", dt, 3, xd), tg_const(&t, "step", IR_DT_I64, 0, NULL, (double[]){ (double)step }),
                  -1, -1 };
    Feed f = { { x } };
    if (win) {
        in[2] = tg_input(&t, "window", dt, 1, (int64_t[]){ wn });
        f.v[1] = win;
    }
    if (fl >= 0)
        in[3] = tg_const(&t, "frame_length", IR_DT_I64, 0, NULL, (double[]){ (double)fl });
    tg_output(&t, tg_node(&t, IR_OP_STFT, "stft", 4, in, 1));
    tg_int(&t, IR_A_onesided, onesided);
    run_check(&t, &f, want, n, dt == IR_DT_F16 ? 2e-3 : 1e-5);
}

static void test_stft(void **state)
{
    (void)state;
    /* signal 1 2 3 4, frames of 2 every 2 samples, one-sided (2 bins):
     * frame [1,2]: X0 = 3, X1 = 1 - 2 = -1; frame [3,4]: 7, -1 */
    stft_case("stft_onesided", IR_DT_F32, (int64_t[]){ 1, 4, 1 }, (double[]){ 1, 2, 3, 4 }, 2, NULL, 0, 2, 1,
              (double[]){ 3, 0, -1, 0, 7, 0, -1, 0 }, 8);
    /* window 0.5 x 4 taps (frame length from the window), full spectrum of
     * 0.5 * [1,2,3,4]: 5, -1 + i, -1, -1 - i; float64 */
    stft_case("stft_window", IR_DT_F64, (int64_t[]){ 1, 4, 1 }, (double[]){ 1, 2, 3, 4 }, 1,
              (double[]){ 0.5, 0.5, 0.5, 0.5 }, 4, -1, 0, (double[]){ 5, 0, -1, 1, -1, 0, -1, -1 }, 8);
    /* complex signal [1, i, 2] over 2 batches, frames of 2 every 1 sample:
     * batch 0: [1, i] → 1+i, 1-i; [i, 2] → 2+i, -2+i
     * batch 1 is batch 0 times 2 */
    stft_case("stft_complex", IR_DT_F32, (int64_t[]){ 2, 3, 2 },
              (double[]){ 1, 0, 0, 1, 2, 0, /**/ 2, 0, 0, 2, 4, 0 }, 1, NULL, 0, 2, 0,
              (double[]){ 1, 1, 1, -1, 2, 1, -2, 1, /**/ 2, 2, 2, -2, 4, 2, -4, 2 }, 16);
    /* float16, window [1, -1] and frame_length 2, step 3 over 1 2 0 0 4 8:
     * windowed frames [1,-2] (samples 0-1), [0,-4] (samples 3-4): one-sided
     * bins X0 = -1, X1 = 3; X0 = -4, X1 = 4 */
    stft_case("stft_f16", IR_DT_F16, (int64_t[]){ 1, 6, 1 }, (double[]){ 1, 2, 0, 0, 4, 8 }, 3, (double[]){ 1, -1 },
              2, 2, 1, (double[]){ -1, 0, 3, 0, -4, 0, 4, 0 }, 8);
}

/* ------------------------------------------------------ MelWeightMatrix */

/* num_mel_bins 2, dft_length 16 (9 rows), sample rate 8000, 200..3000 Hz:
 * mel(200) = 283.2, mel(3000) = 1876.4, 4 steps of 398.3 → mel points
 * 283.2 681.5 1079.8 1478.1 = 200 581.7 1124.8 1898.3 Hz → FFT bins
 * floor(17 hz / 8000) = 0 1 2 4.  Column 0: triangle 0-1-2 (1 at bin 1);
 * column 1: triangle 1-2-4 (1 at bin 2, 0.5 at bin 3). */
static const double mel_want[18] = { 0, 0, 1, 0, 0, 1, 0, 0.5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 };

/* runtime: sample_rate and the edges are graph inputs (else constants) */
static void mel_case(int runtime, IrDType out_dt, int64_t onnx_dt)
{
    TG t;
    tg_start(&t, runtime ? "mel_runtime" : "mel_const");
    static const double rate = 8000, lo = 200, hi = 3000;
    int in[5] = { tg_const(&t, "bins", IR_DT_I64, 0, NULL, (double[]){ 2 }),
                  tg_const(&t, "len", IR_DT_I32, 0, NULL, (double[]){ 16 }) };
    Feed f = { { 0 } };
    if (runtime) {
        in[2] = tg_input(&t, "rate", IR_DT_I64, 0, NULL);
        in[3] = tg_input(&t, "lo", IR_DT_F32, 0, NULL);
        in[4] = tg_input(&t, "hi", IR_DT_F64, 0, NULL);
        f = (Feed){ { &rate, &lo, &hi } };
    } else {
        in[2] = tg_const(&t, "rate", IR_DT_I32, 0, NULL, &rate);
        in[3] = tg_const(&t, "lo", IR_DT_F32, 0, NULL, &lo);
        in[4] = tg_const(&t, "hi", IR_DT_F32, 0, NULL, &hi);
    }
    tg_output(&t, tg_node(&t, IR_OP_MelWeightMatrix, "mel", 5, in, 1));
    tg_int(&t, IR_A_output_datatype, onnx_dt);
    assert_int_equal(pass_infer(t.g, &t.d), 0);
    assert_int_equal(t.g->tensors[t.g->outputs[0]].v.dtype, out_dt);
    run_check(&t, &f, mel_want, 18, out_dt == IR_DT_F16 ? 2e-3 : 1e-6);
}

static void test_mel(void **state)
{
    (void)state;
    mel_case(1, IR_DT_F32, 1);      /* ONNX FLOAT */
    mel_case(0, IR_DT_F64, 11);     /* ONNX DOUBLE; constants: folded or lowered, the same values */
    mel_case(1, IR_DT_F16, 10);     /* ONNX FLOAT16 */
}

/* ----------------------------------------------------------- diagnostics */

/* A scalar operand that inference saw as a constant but that is a graph
 * input by the time the lowering runs: the lowering names the operator. */
static void expect_lower_error(TG *t, int scalar, const char *msg)
{
    assert_int_equal(pass_infer(t->g, &t->d), 0);
    IrTensor *s = &t->g->tensors[scalar];
    s->v.data = NULL;
    s->kind = IR_TK_INPUT;
    ir_add_input(t->g, scalar);
    UtilDiag d;
    util_diag_init(&d);
    LoopProgram *p = low_graph(t->g, NULL, &d);
    assert_null(p);
    if (!strstr(d.msg, msg))
        fail_msg("diagnostic '%s' lacks '%s'", d.msg, msg);
    ir_graph_free(t->g);
}

static void test_not_constant(void **state)
{
    (void)state;
    TG t;
    tg_start(&t, "stft_step");
    int in[2] = { tg_input(&t, "signal", IR_DT_F32, 3, (int64_t[]){ 1, 8, 1 }),
                  tg_const(&t, "step", IR_DT_I64, 0, NULL, (double[]){ 2 }) };
    tg_output(&t, tg_node(&t, IR_OP_STFT, "stft", 2, in, 1));
    expect_lower_error(&t, in[1], "STFT: frame_step and frame_length must be known at compile time");

    tg_start(&t, "mel_bins");
    int m[5] = { tg_const(&t, "bins", IR_DT_I64, 0, NULL, (double[]){ 2 }),
                 tg_const(&t, "len", IR_DT_I64, 0, NULL, (double[]){ 16 }),
                 tg_const(&t, "rate", IR_DT_I64, 0, NULL, (double[]){ 8000 }),
                 tg_input(&t, "lo", IR_DT_F32, 0, NULL), tg_input(&t, "hi", IR_DT_F32, 0, NULL) };
    tg_output(&t, tg_node(&t, IR_OP_MelWeightMatrix, "mel", 5, m, 1));
    expect_lower_error(&t, m[0], "MelWeightMatrix: num_mel_bins and dft_length must be known at compile time");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_det),
        cmocka_unit_test(test_stft),
        cmocka_unit_test(test_mel),
        cmocka_unit_test(test_not_constant),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
