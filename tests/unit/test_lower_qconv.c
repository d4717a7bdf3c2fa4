/* tests/unit/test_lower_qconv.c — QLinearConv and QLinearMatMul on 8-bit dot products
 * (lower/tile/qconv.c, the loop IR's dot4) against the reference
 * interpreter, through the JIT: bit for bit equal outputs.
 *
 * Each case is lowered for a schedule with 512-bit and with 256-bit dot
 * products of bytes (LowSchedule.dot_i8, dot4) and of int16 pairs
 * (LowSchedule.dot_i16, dot2), and compiled twice: for the host (VPDPBUSD
 * where it has VNNI, VPMADDWD where it has AVX2 / AVX512BW) and for
 * x86-64-v3 (AVX2, no VNNI: dot4 as widened products, dot2 on 256-bit
 * VPMADDWD, 512-bit dot2 widened), so every code path runs on every x86
 * host.  The shapes cover
 * int8 and uint8 inputs and outputs, per-tensor and per-channel weight
 * scales, zero points, a bias, groups, strides, dilation, asymmetric
 * padding, 1-D windows, K not a multiple of 4, output channels and pixels
 * that do not fill the last block, and pack rows wider than 64 lanes; the
 * row form (QLinearMatMul with a constant B, batched; the Gemm form's
 * QLinearConv of one-pixel images).  Each case checks that the dot-product
 * form was taken (a "packed_x" buffer).  And MaxPool on 8-bit tensors
 * (lower/tile/qpool.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/codegen.h"
#include "interp/interp.h"
#include "tests/unit/lower_graph.h"

static uint32_t rnd(uint64_t *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(*s >> 33);
}

static void fail_diag(const char *what, const UtilDiag *d)
{
    char m[1200];
    util_diag_format(d, m, sizeof m);
    fail_msg("%s: %s", what, m);
}

typedef struct QCase {
    const char *name;
    IrDType xt, yt;
    int64_t c, m, group, rank;
    int64_t in[2], k[2];
    int64_t pads[4], strides[2], dil[2];
    int bias, per_channel;
    int xz, yz;
    int64_t batch;            /* 0: 1 */
    int matmul;               /* QLinearMatMul: x [batch, in[0], c], B [c, m]; 2: then by B2 [m, 24], its
                                 operand an intermediate (the words read in place); 3: B a second input
                                 [batch, c, m] of int8, zero point 3; 4: B a second input [c, m] of uint8,
                                 zero point 140 (two run-time operands, attention's products) */
} QCase;

static int has_buf(const LoopProgram *p, const char *name)
{
    for (int i = 0; i < p->n_bufs; i++)
        if (strncmp(p->bufs[i].name, name, strlen(name)) == 0)
            return 1;
    return 0;
}

/* QLinearMatMul of x [batch, in[0], c] by a constant B [c, m]. */
static void build_matmul(TG *t, const QCase *q)
{
    tg_start(t, q->name);
    uint64_t seed = 13;
    int64_t xd[3] = { q->batch ? q->batch : 1, q->in[0], q->c }, bd[2] = { q->c, q->m };
    double *bv = malloc((size_t)(q->c * q->m) * sizeof *bv), ws[64];
    assert_true(bv && q->m <= 64);
    for (int64_t i = 0; i < q->c * q->m; i++)
        bv[i] = (double)((int)(rnd(&seed) % 256) - 128);
    for (int64_t i = 0; i < q->m; i++)
        ws[i] = 0.002 + 0.001 * (double)(rnd(&seed) % 7);
    double xs = 0.05, ys = 0.9, xz = q->xz, yz = q->yz, wz = 0;
    int in[8];
    in[0] = tg_input(t, "x", q->xt, 3, xd);
    in[1] = tg_const(t, "xs", IR_DT_F32, 0, NULL, &xs);
    in[2] = tg_const(t, "xz", q->xt, 0, NULL, &xz);
    IrDType wt = q->matmul == 4 ? IR_DT_U8 : IR_DT_I8;
    int64_t bd3[3] = { xd[0], q->c, q->m };
    wz = q->matmul == 3 ? 3 : q->matmul == 4 ? 140 : 0;
    in[3] = q->matmul == 3 ? tg_input(t, "w", wt, 3, bd3) : q->matmul == 4 ? tg_input(t, "w", wt, 2, bd)
                                                                          : tg_const(t, "w", wt, 2, bd, bv);
    in[4] = q->per_channel ? tg_const(t, "ws", IR_DT_F32, 1, &q->m, ws) : tg_const(t, "ws", IR_DT_F32, 0, NULL, ws);
    in[5] = tg_const(t, "wz", wt, 0, NULL, &wz);
    in[6] = tg_const(t, "ys", IR_DT_F32, 0, NULL, &ys);
    in[7] = tg_const(t, "yz", q->yt, 0, NULL, &yz);
    int y = tg_node(t, IR_OP_QLinearMatMul, "qmm", 8, in, 1);
    if (q->matmul == 2) {
        int64_t b2d[2] = { q->m, 24 };
        for (int64_t i = 0; i < q->m * 24; i++)
            bv[i] = (double)((int)(rnd(&seed) % 256) - 128);
        double ys2 = 2.5;
        int in2[8] = { y, in[6], in[7], tg_const(t, "w2", IR_DT_I8, 2, b2d, bv), in[4], in[5],
                       tg_const(t, "ys2", IR_DT_F32, 0, NULL, &ys2), in[7] };
        assert_true(q->m * 24 <= q->c * q->m);
        y = tg_node(t, IR_OP_QLinearMatMul, "qmm2", 8, in2, 1);
    }
    tg_output(t, y);
    free(bv);
}

static void build(TG *t, const QCase *q)
{
    if (q->matmul) {
        build_matmul(t, q);
        return;
    }
    tg_start(t, q->name);
    uint64_t seed = 11;
    int r = (int)q->rank;
    int64_t xd[4] = { q->batch ? q->batch : 1, q->c }, wd[4] = { q->m, q->c / q->group };
    int64_t wn = q->m * (q->c / q->group);
    for (int i = 0; i < r; i++) {
        xd[2 + i] = q->in[i];
        wd[2 + i] = q->k[i];
        wn *= q->k[i];
    }
    double *wv = malloc((size_t)wn * sizeof *wv), ws[64], bv[64];
    assert_true(wv && q->m <= 64);
    for (int64_t i = 0; i < wn; i++)
        wv[i] = (double)((int)(rnd(&seed) % 256) - 128);
    for (int64_t i = 0; i < q->m; i++) {
        ws[i] = 0.002 + 0.001 * (double)(rnd(&seed) % 7);
        bv[i] = (double)((int)(rnd(&seed) % 20001) - 10000);
    }
    double xs = 0.05, ys = 0.9, xz = q->xz, yz = q->yz, wz = 0;
    int in[9];
    in[0] = tg_input(t, "x", q->xt, r + 2, xd);
    in[1] = tg_const(t, "xs", IR_DT_F32, 0, NULL, &xs);
    in[2] = tg_const(t, "xz", q->xt, 0, NULL, &xz);
    in[3] = tg_const(t, "w", IR_DT_I8, r + 2, wd, wv);
    in[4] = q->per_channel ? tg_const(t, "ws", IR_DT_F32, 1, &q->m, ws) : tg_const(t, "ws", IR_DT_F32, 0, NULL, ws);
    in[5] = tg_const(t, "wz", IR_DT_I8, 0, NULL, &wz);
    in[6] = tg_const(t, "ys", IR_DT_F32, 0, NULL, &ys);
    in[7] = tg_const(t, "yz", q->yt, 0, NULL, &yz);
    in[8] = q->bias ? tg_const(t, "b", IR_DT_I32, 1, &q->m, bv) : -1;
    int y = tg_node(t, IR_OP_QLinearConv, "qconv", q->bias ? 9 : 8, in, 1);
    tg_int(t, IR_A_group, q->group);
    tg_ints(t, IR_A_pads, 2 * r, q->pads);
    if (q->strides[0])
        tg_ints(t, IR_A_strides, r, q->strides);
    if (q->dil[0])
        tg_ints(t, IR_A_dilations, r, q->dil);
    tg_output(t, y);
    free(wv);
}

/* Program p (lowered from g for schedule s) planned, compiled for cpu
 * (NULL: the host) and run on the inputs `in` (the workspace filled with
 * 0xa5); p freed.  Its output, out_bytes (+1) bytes, for the caller to free. */
static void *jit_run_scheduled(LoopProgram *p, IrGraph *g, const char *cpu, const void *const *in, size_t out_bytes)
{
    UtilDiag d;
    util_diag_init(&d);
    loop_simplify(p);
    if (low_plan_memory(p, g, &d) != 0 || loop_verify(p, &d) != 0)
        fail_diag("plan", &d);
    CgJit *j = NULL;
    CgOptions co = { .opt_level = 2, .cpu = cpu, .features = cpu ? "" : NULL };
    if (cg_jit(p, &co, &j, &d) != 0)
        fail_diag("jit", &d);
    size_t wsz = (size_t)p->workspace_bytes;
    void *ws = wsz ? aligned_alloc(64, (wsz + 63) / 64 * 64) : NULL;
    if (ws)
        memset(ws, 0xa5, (wsz + 63) / 64 * 64);
    void *out = calloc(out_bytes + 1, 1);
    void *outp[1] = { out };
    assert_int_equal(cg_jit_entry(j)(in, outp, ws), 0);
    free(ws);
    cg_jit_free(j);
    loop_program_free(p);
    return out;
}

static void *jit_run(LoopProgram *p, IrGraph *g, const LowSchedule *s, const char *cpu, const void *const *in,
                     size_t out_bytes)
{
    tgt_cpu_apply_schedule(p, s);
    return jit_run_scheduled(p, g, cpu, in, out_bytes);
}

/* Graph input i of t's graph as an array of random values of its type
 * (8-bit: the whole range; float32: multiples of 1/64 in [-15.6, 15.6]). */
static IrArray random_input_at(const TG *t, int i, uint64_t seed)
{
    const IrTensor *x = &t->g->tensors[t->g->inputs[i]];
    IrDType xt = x->v.dtype;
    IrArray in = { xt, x->v.shape, calloc(ir_array_bytes(&x->v) + 1, 1) };
    for (int64_t k = 0; k < ir_shape_numel(&x->v.shape); k++)
        ir_store_f64(xt, in.data, k, xt == IR_DT_I8 ? (double)((int)(rnd(&seed) % 256) - 128)
                                     : xt == IR_DT_F32 ? (double)((int)(rnd(&seed) % 2001) - 1000) / 64
                                                       : (double)(rnd(&seed) % 256));
    return in;
}

static IrArray random_input(const TG *t, uint64_t seed) { return random_input_at(t, 0, seed); }

/* t's graph of one input inferred, a random input (returned) and the
 * interpreter's output of it in ref[0]. */
static IrArray reference(TG *t, uint64_t seed, IrArray *ref)
{
    if (pass_infer(t->g, &t->d) != 0)
        fail_diag("infer", &t->d);
    IrArray in = random_input(t, seed);
    UtilDiag d;
    util_diag_init(&d);
    if (interp_run(t->g, &in, ref, &d) != 0)
        fail_diag("interp", &d);
    return in;
}

/* Interpreter vs JIT: dot products of `dot` bits (i16: of int16 pairs,
 * dot2, else of bytes, dot4), code for cpu (NULL: the host). */
static void run_one(IrGraph *g, const IrArray *in, int n_in, const IrArray *ref, int dot, int i16, const char *cpu)
{
    UtilDiag d;
    util_diag_init(&d);
    LowSchedule s = tgt_cpu_schedule(dot);
    s.dot_i8 = i16 ? 0 : dot;
    s.dot_i16 = i16 ? dot : 0;
    s.threads = 1;
    LoopProgram *p = low_graph(g, &s, &d);
    if (!p)
        fail_diag("lower", &d);
    if (!has_buf(p, strncmp(g->name, "qdw", 3) == 0 ? "dw_packed" : "packed_x"))
        fail_msg("graph %s at %d bits: the dot-product form was not taken", g->name, dot);
    if (strstr(g->name, "_rows") && !has_buf(p, "packed_x_rows"))
        fail_msg("graph %s at %d bits: the pack was not made a block of rows at a time", g->name, dot);
    if (strncmp(g->name, "qchan", 5) == 0 && !has_buf(p, "qweights_ch"))
        fail_msg("graph %s at %d bits: the channel form was not taken", g->name, dot);
    if (strncmp(g->name, "qchan_k", 7) == 0 && dot == 512 && !has_buf(p, "chan_partial"))   /* (chunks of 16 KB) */
        fail_msg("graph %s at %d bits: the reduction was not cut in chunks", g->name, dot);
    if (n_in > 1 && !has_buf(p, "qcolterms"))
        fail_msg("graph %s at %d bits: B at run time was not packed", g->name, dot);
    if (strcmp(g->name, "qmm_chain") == 0 && !i16 && !has_buf(p, "qmm_out0_words"))
        fail_msg("graph %s: the intermediate's bytes were not read as words", g->name);
    void *out = jit_run(p, g, &s, cpu, (const void *[]){ in[0].data, n_in > 1 ? in[1].data : NULL }, ir_array_bytes(ref));
    for (int64_t i = 0; i < ir_array_numel(ref); i++) {
        int64_t a = ir_load_i64(ref->dtype, ref->data, i), b = ir_load_i64(ref->dtype, out, i);
        if (a != b)
            fail_msg("graph %s, %d-bit dot products of %s, cpu %s: element %lld: interpreter %lld, compiled %lld",
                     g->name, dot, i16 ? "int16 pairs" : "bytes", cpu ? cpu : "host", (long long)i, (long long)a,
                     (long long)b);
    }
    free(out);
}

static void qcase(const QCase *q)
{
    TG t;
    build(&t, q);
    if (pass_infer(t.g, &t.d) != 0)
        fail_diag("infer", &t.d);
    int n_in = t.g->n_inputs;
    IrArray in[2] = { random_input(&t, 5), n_in > 1 ? random_input_at(&t, 1, 7) : (IrArray){ 0 } }, ref[1] = { 0 };
    UtilDiag d;
    util_diag_init(&d);
    if (interp_run(t.g, in, ref, &d) != 0)
        fail_diag("interp", &d);
    /* the output is not saturated everywhere (the case would test little) */
    int64_t inner = 0, n = ir_array_numel(&ref[0]);
    for (int64_t i = 0; i < n; i++) {
        int64_t v = ir_load_i64(ref[0].dtype, ref[0].data, i);
        inner += v != (q->yt == IR_DT_I8 ? -128 : 0) && v != (q->yt == IR_DT_I8 ? 127 : 255);
    }
    assert_true(inner * 2 > n);
    for (int i16 = 0; i16 < 2; i16++)
        for (int dot = 256; dot <= 512; dot *= 2) {
            run_one(t.g, in, n_in, &ref[0], dot, i16, NULL);
#if defined(__x86_64__)
            run_one(t.g, in, n_in, &ref[0], dot, i16, "x86-64-v3");
#endif
        }
    free(in[0].data);
    free(in[1].data);
    interp_array_free(&ref[0]);
    ir_graph_free(t.g);
}

static void test_qconv_3x3(void **state)
{
    (void)state;
    QCase q = { "q3x3", IR_DT_I8, IR_DT_I8, 16, 20, 1, 2, { 13, 11 }, { 3, 3 }, { 1, 1, 1, 1 }, { 0 }, { 0 }, 1, 1,
                -3, 5 };
    qcase(&q);
}

static void test_qconv_uint8_strided(void **state)
{
    (void)state;
    QCase q = { "qu8s2", IR_DT_U8, IR_DT_U8, 6, 9, 1, 2, { 17, 20 }, { 3, 3 }, { 0, 1, 2, 1 }, { 2, 2 }, { 0 }, 1, 0,
                131, 120 };
    qcase(&q);
}

static void test_qconv_pointwise(void **state)
{
    (void)state;
    QCase q = { "qpw", IR_DT_I8, IR_DT_U8, 30, 13, 1, 2, { 9, 10 }, { 1, 1 }, { 0 }, { 0 }, { 0 }, 0, 1, 7, 128 };
    qcase(&q);
}

static void test_qconv_grouped_dilated(void **state)
{
    (void)state;
    QCase q = { "qgd", IR_DT_I8, IR_DT_I8, 8, 12, 4, 2, { 12, 12 }, { 3, 2 }, { 2, 1, 2, 0 }, { 1, 1 }, { 2, 2 }, 1, 1,
                0, 0 };
    qcase(&q);
}

/* Depthwise (one input and one output channel a group: the pack and the
 * products per channel and block of rows, dw_kernel): 3x3 stride 1 with
 * padding, rows of 200 in four blocks (the last overlapping), int8 with a
 * per-channel scale and a bias; 3x3 stride 2 on uint8; 5x5 (7 words of
 * taps) with asymmetric padding; a plane narrower than a vector. */
static void test_qconv_depthwise(void **state)
{
    (void)state;
    QCase a = { "qdw3", IR_DT_I8, IR_DT_I8, 6, 6, 6, 2, { 22, 200 }, { 3, 3 }, { 1, 1, 1, 1 }, { 1, 1 }, { 1, 1 },
                1, 1, -5, 3 };
    qcase(&a);
    QCase b = { "qdw3s2", IR_DT_U8, IR_DT_U8, 5, 5, 5, 2, { 15, 33 }, { 3, 3 }, { 1, 1, 1, 1 }, { 2, 2 }, { 1, 1 },
                0, 0, 130, 120 };
    qcase(&b);
    QCase c = { "qdw5", IR_DT_I8, IR_DT_U8, 4, 4, 4, 2, { 11, 9 }, { 5, 5 }, { 2, 1, 2, 3 }, { 1, 1 }, { 1, 1 },
                1, 1, 7, 100 };
    qcase(&c);
}

static void test_qconv_wide_rows(void **state)
{
    (void)state;   /* rows of 100 output pixels: pack pieces of 64 lanes, the last overlapping */
    QCase q = { "qwide", IR_DT_U8, IR_DT_I8, 3, 8, 1, 2, { 6, 100 }, { 3, 3 }, { 1, 1, 1, 1 }, { 0 }, { 0 }, 1, 1,
                100, -10 };
    qcase(&q);
}

static void test_qconv_1d(void **state)
{
    (void)state;
    QCase q = { "q1d", IR_DT_I8, IR_DT_I8, 5, 7, 1, 1, { 40 }, { 5 }, { 2, 1 }, { 1 }, { 0 }, 1, 1, -1, 2 };
    qcase(&q);
}

static void test_qconv_one_pixel(void **state)
{
    (void)state;   /* the Gemm form: 37 images of one pixel, 50 channels (K not a multiple of 4) -> 21 */
    QCase q = { "qgemm", IR_DT_U8, IR_DT_I8, 50, 21, 1, 1, { 1 }, { 1 }, { 0, 0 }, { 0 }, { 0 }, 1, 1, 90, 3, 37, 0 };
    qcase(&q);
}

static void test_qconv_pack_rows(void **state)
{
    (void)state;   /* the pack and the products in one kernel, blocks of whole output rows (qconv.c, conv_fused): 31
                      rows of 16 in two blocks of 18 (at 512 bits; the second starting at row 13, overlapping) */
    QCase q = { "q3x3_rows", IR_DT_I8, IR_DT_I8, 64, 20, 1, 2, { 31, 16 }, { 3, 3 }, { 1, 1, 1, 1 }, { 0 }, { 0 }, 1,
                1, -3, 5 };
    qcase(&q);
    /* a 1x1 plane of 6400 pixels in three blocks of 2176 (the last overlapping) */
    QCase p = { "qpw_rows", IR_DT_U8, IR_DT_I8, 64, 16, 1, 2, { 80, 80 }, { 1, 1 }, { 0 }, { 0 }, { 0 }, 1, 1, 100, 3 };
    qcase(&p);
}

static void test_qconv_channel_form(void **state)
{
    (void)state;   /* 7x7 planes (49 pixels in 64 lanes): pixels broadcast, channels in the lanes, each accumulator
                      stored along its channel's plane (qconv.c, chan_blocks); two images of 32 -> 64 channels */
    QCase q = { "qchan", IR_DT_I8, IR_DT_I8, 32, 64, 1, 2, { 7, 7 }, { 3, 3 }, { 1, 1, 1, 1 }, { 0 }, { 0 }, 1, 1,
                -3, 5, 2, 0 };
    qcase(&q);
    /* 630 taps: the reduction in chunks carried in chan_partial, the last chunk's words past K zero */
    QCase k = { "qchan_k", IR_DT_U8, IR_DT_I8, 70, 64, 1, 2, { 7, 7 }, { 3, 3 }, { 1, 1, 1, 1 }, { 0 }, { 0 }, 1, 1,
                120, -2, 1, 0 };
    qcase(&k);
    /* 40 channels: panels of one vector, the last overlapping the one before; chunks of 1080 taps */
    QCase o = { "qchan_k_overlap", IR_DT_I8, IR_DT_U8, 120, 40, 1, 2, { 7, 7 }, { 3, 3 }, { 1, 1, 1, 1 }, { 0 }, { 0 },
                1, 0, 4, 128, 1, 0 };
    qcase(&o);
}

static void test_qmatmul(void **state)
{
    (void)state;   /* [2, 9, 64] x [64, 40]: rows across the batch, a column panel overlapping */
    QCase q = { "qmm", IR_DT_I8, IR_DT_I8, 64, 40, 1, 1, { 9 }, { 0 }, { 0 }, { 0 }, { 0 }, 0, 1, -7, 1, 2, 1 };
    qcase(&q);
}

static void test_qmatmul_uint8_odd_k(void **state)
{
    (void)state;
    QCase q = { "qmm_u8", IR_DT_U8, IR_DT_U8, 30, 17, 1, 1, { 5 }, { 0 }, { 0 }, { 0 }, { 0 }, 0, 0, 128, 120, 1, 1 };
    qcase(&q);
}

static void test_qmatmul_runtime_b(void **state)
{
    (void)state;   /* [3, 9, 37] x [3, 37, 40] int8 by int8, K not a multiple of 4, a panel overlapping */
    QCase q = { "qmm_rt", IR_DT_I8, IR_DT_I8, 37, 40, 1, 1, { 9 }, { 0 }, { 0 }, { 0 }, { 0 }, 0, 0, -7, 1, 3, 3 };
    qcase(&q);
    /* [2, 13, 64] uint8 x [64, 24] uint8 (zero points 100, 140) -> uint8 */
    QCase u = { "qmm_rt_u8", IR_DT_U8, IR_DT_U8, 64, 24, 1, 1, { 13 }, { 0 }, { 0 }, { 0 }, { 0 }, 0, 0, 100, 120, 2, 4 };
    qcase(&u);
}

static void test_qmatmul_chain(void **state)
{
    (void)state;   /* the second product reads the first's int8 rows (K = 40) as words */
    QCase q = { "qmm_chain", IR_DT_I8, IR_DT_I8, 64, 40, 1, 1, { 7 }, { 0 }, { 0 }, { 0 }, { 0 }, 0, 0, 3, -2, 1, 2 };
    qcase(&q);
}

/* ------------------------------------------------------------ MaxPool
 *
 * MaxPool on an int8 / uint8 tensor, and on a float32 one without a halo
 * (lower/tile/qpool.c): vectors along the output rows, border pieces
 * testing their columns, against the interpreter bit for bit, for the
 * host and x86-64-v3.  The form is taken
 * when the one kernel holds a vectorized loop of the row's pieces. */

typedef struct PCase {
    const char *name;
    IrDType xt;
    int64_t rank, c, in[2], k[2], pads[4], strides[2], dil[2];
    int ceil;
} PCase;

static int has_vector_loop(const LoopStmt *st)
{
    if (!st)
        return 0;
    switch (st->kind) {
    case LOOP_S_FOR:
        return st->u.loop.kind == LOOP_VECTORIZED || has_vector_loop(st->u.loop.body);
    case LOOP_S_IF:
        return has_vector_loop(st->u.cond.then_) || has_vector_loop(st->u.cond.else_);
    case LOOP_S_BLOCK:
        for (int i = 0; i < st->u.block.n; i++)
            if (has_vector_loop(st->u.block.items[i]))
                return 1;
        return 0;
    default:
        return 0;
    }
}

/* g lowered for one thread of 512-bit vectors (byte permutes of that many
 * bits, 0 none), the schedule in *s. */
static LoopProgram *lower_512(IrGraph *g, LowSchedule *s, int byte_permute)
{
    UtilDiag d;
    util_diag_init(&d);
    *s = tgt_cpu_schedule(512);
    s->threads = 1;
    s->byte_permute = byte_permute;
    LoopProgram *p = low_graph(g, s, &d);
    if (!p)
        fail_diag("lower", &d);
    return p;
}

static void pcase(const PCase *q)
{
    TG t;
    tg_start(&t, q->name);
    int r = (int)q->rank;
    int64_t xd[4] = { 2, q->c };
    for (int i = 0; i < r; i++)
        xd[2 + i] = q->in[i];
    int x = tg_input(&t, "x", q->xt, r + 2, xd);
    if (q->xt == IR_DT_F32)                    /* an intermediate without a halo (an input is read in place) */
        x = tg_node(&t, IR_OP_Neg, "neg", 1, &x, 1);
    int y = tg_node(&t, IR_OP_MaxPool, "pool", 1, &x, 1);
    tg_ints(&t, IR_A_kernel_shape, r, q->k);
    tg_ints(&t, IR_A_pads, 2 * r, q->pads);
    tg_ints(&t, IR_A_strides, r, q->strides);
    if (q->dil[0])
        tg_ints(&t, IR_A_dilations, r, q->dil);
    if (q->ceil)
        tg_int(&t, IR_A_ceil_mode, 1);
    tg_output(&t, y);
    IrArray ref[1] = { 0 }, in = reference(&t, 9, ref);
    UtilDiag d;
    util_diag_init(&d);
    for (int host = 0; host < 2; host++) {
#if !defined(__x86_64__)
        if (!host)
            continue;
#endif
        LowSchedule s;
        LoopProgram *p = lower_512(t.g, &s, 0);
        if (p->n_kernels != 1 + (q->xt == IR_DT_F32) || !has_vector_loop(p->kernels[p->n_kernels - 1].body) ||
            has_buf(p, "padded"))
            fail_msg("graph %s: the row-vector MaxPool form was not taken", q->name);
        void *out = jit_run(p, t.g, &s, host ? NULL : "x86-64-v3", (const void *[]){ in.data },
                            ir_array_bytes(&ref[0]));
        for (int64_t i = 0; i < ir_array_numel(&ref[0]); i++) {
            double a = ir_load_f64(ref[0].dtype, ref[0].data, i), b = ir_load_f64(ref[0].dtype, out, i);
            if (a != b)
                fail_msg("graph %s, cpu %s: element %lld: interpreter %g, compiled %g", q->name,
                         host ? "host" : "x86-64-v3", (long long)i, a, b);
        }
        free(out);
    }
    free(in.data);
    interp_array_free(&ref[0]);
    ir_graph_free(t.g);
}

/* Table lookups (passes/lut.c, lower/data.c): QDQ SiLU on an 8-bit tensor,
 * DQ → Sigmoid → Q → DQ → Mul by the first DQ → Q, is after the qdq, lut,
 * dce and fuse passes one Gather from a 256-byte table of the 8-bit input (or of
 * the float32 integers a Q → DQ of a float input leaves, read through the
 * saturating conversion).
 * Lowered with vector loops of table loads (LowSchedule.byte_permute: 64
 * lanes for 1024 elements, 16 for 48) and without (a scalar loop for 37),
 * compiled for the host (VPERMI2B where it has AVX512-VBMI) and for
 * x86-64-v3 (the lanes looked up one by one): bit for bit the interpreter's
 * output of the graph before the passes. */
static void lut_case(const char *name, IrDType xt, int rank, const int64_t *dims, int vector_lanes, int float_in)
{
    TG t;
    tg_start(&t, name);
    int i8 = xt == IR_DT_I8;
    int x = tg_input(&t, "x", float_in ? IR_DT_F32 : xt, rank, dims);
    int xs = tg_const(&t, "xs", IR_DT_F32, 0, NULL, (double[]){ 0.0625 });
    int xz = tg_const(&t, "xz", xt, 0, NULL, (double[]){ i8 ? -3 : 130 });
    if (float_in)          /* Q → DQ: qdq writes the pair as float32 integers, the table reads them */
        x = tg_node(&t, IR_OP_QuantizeLinear, "xq", 3, (int[]){ x, xs, xz }, 1);
    int ss = tg_const(&t, "ss", IR_DT_F32, 0, NULL, (double[]){ 1.0 / 256 });
    int sz = tg_const(&t, "sz", xt, 0, NULL, (double[]){ i8 ? -128 : 0 });
    int ys = tg_const(&t, "ys", IR_DT_F32, 0, NULL, (double[]){ 0.05 });
    int yz = tg_const(&t, "yz", xt, 0, NULL, (double[]){ i8 ? 5 : 120 });
    int dx = tg_node(&t, IR_OP_DequantizeLinear, "dx", 3, (int[]){ x, xs, xz }, 1);
    int sg = tg_node(&t, IR_OP_Sigmoid, "sg", 1, &dx, 1);
    int qs = tg_node(&t, IR_OP_QuantizeLinear, "qs", 3, (int[]){ sg, ss, sz }, 1);
    int ds = tg_node(&t, IR_OP_DequantizeLinear, "ds", 3, (int[]){ qs, ss, sz }, 1);
    int m = tg_node(&t, IR_OP_Mul, "m", 2, (int[]){ dx, ds }, 1);
    int y = tg_node(&t, IR_OP_QuantizeLinear, "y", 3, (int[]){ m, ys, yz }, 1);
    tg_output(&t, y);
    IrArray ref[1] = { 0 }, in = reference(&t, 11, ref);
    UtilDiag d;
    util_diag_init(&d);
    const char *pipeline[] = { "qdq", "lut", "dce", "fuse" };
    for (int k = 0; k < 4; k++)
        if (pass_run_checked(t.g, pass_find(pipeline[k]), &d) < 0)
            fail_diag(pipeline[k], &d);
    int gathers = 0, live = 0;
    for (int i = 0; i < t.g->n_nodes; i++) {
        live += !t.g->nodes[i].dead;
        gathers += !t.g->nodes[i].dead && t.g->nodes[i].op == IR_OP_Gather;
    }
    if (gathers != 1 || live != (float_in ? 7 : 2))   /* [Div Round Add Clip Cast] Cast to int32, Gather */
        fail_msg("graph %s: %d nodes, %d Gathers after the lut pass", name, live, gathers);
    for (int host = 0; host < 2; host++)
        for (int perm = 0; perm < 2; perm++) {
#if !defined(__x86_64__)
            if (!host)
                continue;
#endif
            LowSchedule s;
            LoopProgram *p = lower_512(t.g, &s, perm ? 512 : 0);
            tgt_cpu_apply_schedule(p, &s);
            /* the Casts skipped: the lookup reads the 8-bit (or float32) source */
            int nk = 1 + float_in, vec = p->n_kernels == nk && has_vector_loop(p->kernels[nk - 1].body);
            if (p->n_kernels != nk || vec != (perm && vector_lanes > 0))
                fail_msg("graph %s: %d kernels, vector loop %d (want %d, vectorized: %d)", name, p->n_kernels, vec,
                         nk, perm && vector_lanes > 0);
            void *out = jit_run_scheduled(p, t.g, host ? NULL : "x86-64-v3", (const void *[]){ in.data },
                                          ir_array_bytes(&ref[0]));
            for (int64_t i = 0; i < ir_array_numel(&ref[0]); i++) {
                int64_t a = ir_load_i64(xt, ref[0].data, i), b = ir_load_i64(xt, out, i);
                if (a != b)
                    fail_msg("graph %s, cpu %s, byte permutes %d: element %lld of x = %lld: interpreter %lld, "
                             "compiled %lld", name, host ? "host" : "x86-64-v3", perm, (long long)i,
                             (long long)ir_load_i64(xt, in.data, i), (long long)a, (long long)b);
            }
            free(out);
        }
    free(in.data);
    interp_array_free(&ref[0]);
    ir_graph_free(t.g);
}

static void test_table_lookup(void **state)
{
    (void)state;
    lut_case("silu_i8_64", IR_DT_I8, 4, (int64_t[]){ 2, 4, 8, 16 }, 64, 0);
    lut_case("silu_u8_16", IR_DT_U8, 3, (int64_t[]){ 3, 4, 4 }, 16, 0);
    lut_case("silu_i8_scalar", IR_DT_I8, 1, (int64_t[]){ 37 }, 0, 0);
    lut_case("silu_f32_i8", IR_DT_I8, 2, (int64_t[]){ 4, 64 }, 64, 1);
    lut_case("silu_f32_u8", IR_DT_U8, 2, (int64_t[]){ 3, 16 }, 16, 1);
}

static void test_qmaxpool(void **state)
{
    (void)state;
    /* ResNet's 3x3/2 pad 1 on a 112-wide map: interior and border pieces */
    PCase a = { "qpool_resnet", IR_DT_I8, 2, 3, { 40, 112 }, { 3, 3 }, { 1, 1, 1, 1 }, { 2, 2 }, { 0 }, 0 };
    pcase(&a);
    /* uint8, asymmetric pads, dilation, ceil mode, a row narrower than a vector */
    PCase b = { "qpool_u8", IR_DT_U8, 2, 5, { 13, 11 }, { 2, 3 }, { 0, 1, 1, 2 }, { 2, 1 }, { 2, 1 }, 1 };
    pcase(&b);
    /* 1-D, stride 1, a row of 50: the last piece moved back */
    PCase c = { "qpool_1d", IR_DT_I8, 1, 4, { 50 }, { 4 }, { 2, 1 }, { 1 }, { 0 }, 0 };
    pcase(&c);
    /* float32 with a padded window over an input without a halo (exact: max) */
    PCase f = { "pool_f32", IR_DT_F32, 2, 3, { 30, 40 }, { 3, 3 }, { 1, 1, 1, 1 }, { 2, 2 }, { 0 }, 0 };
    pcase(&f);
}

/* ------------------------------------------------------------ bfloat16
 *
 * --precision bf16 (LowSchedule.bf16): float32 Conv / MatMul / Gemm on
 * words of two bfloat16 against the interpreter's float32, within the
 * accuracy contract (docs/cli.md, "--precision bf16"): an
 * activation and a weight each rounded to bfloat16 (relative error at most
 * 2^-8 each), their product exact, the sums in float32, so
 *     |y - y_float32| <= 2^-7 * (sum_k |x_k| |w_k|) (+ float32 rounding),
 * the bound computed by the interpreter on the same graph with |x|, |w|
 * and |bias|.  With VDPBF16PS where the host has AVX512-BF16, and the
 * dot products widened (x86-64-v3). */

typedef struct BCase {
    const char *name;
    IrOp op;                  /* Conv, MatMul, Gemm */
    int64_t c, m, rank;       /* Conv: channels in / out; MatMul / Gemm: K / N */
    int64_t in[2], k[2];      /* Conv: input and kernel dims; MatMul: in[0] rows (batch 2); Gemm: in[0] rows */
    int64_t pads[4], strides[2];
    int bias;                 /* Conv: B; Gemm: 1 = C of N, 2 = a scalar C */
    int trans_b;              /* Gemm: transB; MatMul: 2 = B a run-time input [2][K][N], 3 = [K][N] */
} BCase;

static void bgraph(TG *t, const BCase *q, int absolute)
{
    tg_start(t, q->name);
    uint64_t seed = 17;
    int64_t wn = q->op == IR_OP_Conv ? q->m * q->c * q->k[0] * (q->rank == 2 ? q->k[1] : 1) : q->c * q->m;
    double *wv = malloc((size_t)wn * sizeof *wv), bv[64];
    assert_true(wv && q->m <= 64);
    for (int64_t i = 0; i < wn; i++)
        wv[i] = ((double)(rnd(&seed) % 20001) - 10000) / 7919.0;
    for (int64_t i = 0; i < q->m; i++)
        bv[i] = ((double)(rnd(&seed) % 2001) - 1000) / 311.0;
    for (int64_t i = 0; absolute && i < wn; i++)
        wv[i] = fabs(wv[i]);
    for (int64_t i = 0; absolute && i < q->m; i++)
        bv[i] = fabs(bv[i]);
    int in[3] = { -1, -1, -1 }, y;
    if (q->op == IR_OP_Conv) {
        int r = (int)q->rank;
        int64_t xd[4] = { 1, q->c }, wd[4] = { q->m, q->c };
        for (int i = 0; i < r; i++) {
            xd[2 + i] = q->in[i];
            wd[2 + i] = q->k[i];
        }
        in[0] = tg_input(t, "x", IR_DT_F32, r + 2, xd);
        in[1] = tg_const(t, "w", IR_DT_F32, r + 2, wd, wv);
        in[2] = q->bias ? tg_const(t, "b", IR_DT_F32, 1, &q->m, bv) : -1;
        y = tg_node(t, IR_OP_Conv, "conv", q->bias ? 3 : 2, in, 1);
        tg_ints(t, IR_A_pads, 2 * r, q->pads);
        if (q->strides[0])
            tg_ints(t, IR_A_strides, r, q->strides);
    } else if (q->op == IR_OP_MatMul) {
        int64_t xd[3] = { 2, q->in[0], q->c }, bd[2] = { q->c, q->m }, bd3[3] = { 2, q->c, q->m };
        in[0] = tg_input(t, "x", IR_DT_F32, 3, xd);
        in[1] = q->trans_b == 2 ? tg_input(t, "w", IR_DT_F32, 3, bd3) : q->trans_b == 3 ? tg_input(t, "w", IR_DT_F32, 2, bd)
                                                                                        : tg_const(t, "w", IR_DT_F32, 2, bd, wv);
        y = tg_node(t, IR_OP_MatMul, "mm", 2, in, 1);
    } else {
        int64_t xd[2] = { q->in[0], q->c }, bd[2] = { q->trans_b ? q->m : q->c, q->trans_b ? q->c : q->m };
        in[0] = tg_input(t, "x", IR_DT_F32, 2, xd);
        in[1] = tg_const(t, "w", IR_DT_F32, 2, bd, wv);
        in[2] = q->bias == 1 ? tg_const(t, "c", IR_DT_F32, 1, &q->m, bv)
                : q->bias == 2 ? tg_const(t, "c", IR_DT_F32, 0, NULL, bv) : -1;
        y = tg_node(t, IR_OP_Gemm, "gemm", q->bias ? 3 : 2, in, 1);
        tg_int(t, IR_A_transB, q->trans_b);
    }
    tg_output(t, y);
    free(wv);
    if (pass_infer(t->g, &t->d) != 0)
        fail_diag("infer", &t->d);
}

static void brun(const BCase *q, IrGraph *g, const IrArray *in, int n_in, const IrArray *ref, const IrArray *bound,
                 int bits, const char *cpu)
{
    UtilDiag d;
    util_diag_init(&d);
    LowSchedule s = tgt_cpu_schedule(bits);
    s.bf16 = bits;
    s.threads = 1;
    LoopProgram *p = low_graph(g, &s, &d);
    if (!p)
        fail_diag("lower", &d);
    if (!has_buf(p, "bweights"))
        fail_msg("graph %s at %d bits: the bfloat16 form was not taken", q->name, bits);
    if (strstr(q->name, "_rows") && bits == 512 && !has_buf(p, "packed_x_rows"))
        fail_msg("graph %s at %d bits: the pack was not made a block of rows at a time", q->name, bits);
    if (strncmp(q->name, "b_pw_", 5) == 0 && !has_buf(p, "packed_bf16"))
        fail_msg("graph %s at %d bits: the pointwise template's bfloat16 words were not taken", q->name, bits);
    if (strncmp(q->name, "b_chan", 6) == 0 && (!has_buf(p, "bweights_ch") || (bits == 512 && !has_buf(p, "chan_partial"))))
        fail_msg("graph %s at %d bits: the channel form in chunks was not taken", q->name, bits);
    float *out = jit_run(p, g, &s, cpu, (const void *[]){ in[0].data, n_in > 1 ? in[1].data : NULL },
                         (size_t)ir_array_numel(ref) * sizeof *out);
    double worst = 0;
    for (int64_t i = 0; i < ir_array_numel(ref); i++) {
        double a = ir_load_f64(IR_DT_F32, ref->data, i), lim = ir_load_f64(IR_DT_F32, bound->data, i);
        double e = fabs((double)out[i] - a);
        if (!(e <= lim / 128 + 1e-5 * lim + 1e-6))
            fail_msg("graph %s at %d bits, cpu %s: element %lld: float32 %.9g, bfloat16 %.9g, |error| %.3g above "
                     "2^-7 sum|x||w| = %.3g", q->name, bits, cpu ? cpu : "host", (long long)i, a, out[i], e, lim / 128);
        worst = e > worst ? e : worst;
    }
    assert_true(worst > 0);              /* rounded: the products did not run in float32 */
    free(out);
}

static void bcase(const BCase *q)
{
    TG t, ta;
    bgraph(&t, q, 0);
    bgraph(&ta, q, 1);
    int ni = t.g->n_inputs;
    IrArray in[2], ain[2], ref[1] = { 0 }, bound[1] = { 0 };
    uint64_t seed = 23;
    for (int i = 0; i < ni; i++) {
        const IrTensor *x = &t.g->tensors[t.g->inputs[i]];
        in[i] = (IrArray){ IR_DT_F32, x->v.shape, calloc(ir_array_bytes(&x->v) + 1, 1) };
        ain[i] = (IrArray){ IR_DT_F32, x->v.shape, calloc(ir_array_bytes(&x->v) + 1, 1) };
        for (int64_t k = 0; k < ir_shape_numel(&x->v.shape); k++) {
            double v = ((double)(rnd(&seed) % 20001) - 10000) / 3571.0;
            ir_store_f64(IR_DT_F32, in[i].data, k, v);
            ir_store_f64(IR_DT_F32, ain[i].data, k, fabs(v));
        }
    }
    UtilDiag d;
    util_diag_init(&d);
    if (interp_run(t.g, in, ref, &d) != 0 || interp_run(ta.g, ain, bound, &d) != 0)
        fail_diag("interp", &d);
    for (int bits = 256; bits <= 512; bits *= 2) {
        brun(q, t.g, in, ni, &ref[0], &bound[0], bits, NULL);
#if defined(__x86_64__)
        brun(q, t.g, in, ni, &ref[0], &bound[0], bits, "x86-64-v3");
#endif
    }
    for (int i = 0; i < ni; i++) {
        free(in[i].data);
        free(ain[i].data);
    }
    interp_array_free(&ref[0]);
    interp_array_free(&bound[0]);
    ir_graph_free(t.g);
    ir_graph_free(ta.g);
}

static void test_bf16_conv(void **state)
{
    (void)state;
    /* (a 3x3 stride-1 convolution where Winograd pays stays float32: 5x5 here) */
    BCase a = { "b5x5", IR_OP_Conv, 16, 20, 2, { 13, 11 }, { 5, 5 }, { 2, 2, 2, 2 }, { 0 }, 1, 0 };
    bcase(&a);
    /* (reductions of 64 or more: shorter ones keep the float32 forms, BF16_MIN_K) */
    BCase b = { "b_strided_oddk", IR_OP_Conv, 9, 9, 2, { 17, 20 }, { 3, 3 }, { 0, 1, 2, 1 }, { 2, 2 }, 0, 0 };
    bcase(&b);
    BCase c = { "b_pw", IR_OP_Conv, 65, 13, 2, { 9, 10 }, { 1, 1 }, { 0 }, { 0 }, 1, 0 };
    bcase(&c);
    /* 1x1 reductions under 64 channels: the pointwise template on bfloat16 words (pw_bf16_pack),
     * an even and an odd count of channels (the last word's high half 0) */
    /* 31 output rows of 16 (stride 2) in blocks of 28 rows, the pack in the products' kernel (conv_fused) */
    BCase c1 = { "b_s2_rows", IR_OP_Conv, 16, 24, 2, { 61, 32 }, { 3, 3 }, { 1, 1, 1, 1 }, { 2, 2 }, 1, 0 };
    bcase(&c1);
    BCase c2 = { "b_pw_short", IR_OP_Conv, 16, 40, 2, { 9, 10 }, { 1, 1 }, { 0 }, { 0 }, 1, 0 };
    bcase(&c2);
    BCase c3 = { "b_pw_odd", IR_OP_Conv, 15, 20, 2, { 7, 13 }, { 1, 1 }, { 0 }, { 0 }, 0, 0 };
    bcase(&c3);
    BCase e = { "b_1d", IR_OP_Conv, 13, 7, 1, { 40 }, { 5 }, { 2, 1 }, { 1 }, 1, 0 };
    bcase(&e);
    /* 7x7 planes by 64 channels over 144 and 261 taps, stride 2: the channel form, its reduction in
     * chunks (chan_blocks; the second's last chunk ends in a zero word) */
    BCase f = { "b_chan", IR_OP_Conv, 16, 64, 2, { 13, 13 }, { 3, 3 }, { 1, 1, 1, 1 }, { 2, 2 }, 1, 0 };
    bcase(&f);
    BCase g = { "b_chan_odd", IR_OP_Conv, 29, 64, 2, { 13, 13 }, { 3, 3 }, { 1, 1, 1, 1 }, { 2, 2 }, 0, 0 };
    bcase(&g);
}

static void test_bf16_matmul_gemm(void **state)
{
    (void)state;
    BCase a = { "b_mm", IR_OP_MatMul, 64, 40, 0, { 9 }, { 0 }, { 0 }, { 0 }, 0, 0 };
    bcase(&a);
    BCase b = { "b_gemm", IR_OP_Gemm, 33, 24, 0, { 7 }, { 0 }, { 0 }, { 0 }, 1, 1 };
    bcase(&b);
    BCase c = { "b_gemm_scalar_c", IR_OP_Gemm, 48, 16, 0, { 20 }, { 0 }, { 0 }, { 0 }, 2, 0 };
    bcase(&c);
    /* two run-time operands (attention's products): batched, and B of two dims; K odd */
    BCase e = { "b_mm_rt", IR_OP_MatMul, 33, 40, 0, { 9 }, { 0 }, { 0 }, { 0 }, 0, 2 };
    bcase(&e);
    BCase f = { "b_mm_rt2", IR_OP_MatMul, 32, 20, 0, { 5 }, { 0 }, { 0 }, { 0 }, 0, 3 };
    bcase(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_qconv_3x3),          cmocka_unit_test(test_qconv_uint8_strided),
        cmocka_unit_test(test_qconv_pointwise),    cmocka_unit_test(test_qconv_grouped_dilated),
        cmocka_unit_test(test_qconv_depthwise),    cmocka_unit_test(test_qconv_wide_rows),    cmocka_unit_test(test_qconv_1d),
        cmocka_unit_test(test_qconv_one_pixel),    cmocka_unit_test(test_qconv_pack_rows),
        cmocka_unit_test(test_qconv_channel_form),
        cmocka_unit_test(test_qmatmul),
        cmocka_unit_test(test_qmatmul_uint8_odd_k), cmocka_unit_test(test_qmatmul_chain),
        cmocka_unit_test(test_qmatmul_runtime_b),
        cmocka_unit_test(test_qmaxpool),          cmocka_unit_test(test_table_lookup),
        cmocka_unit_test(test_bf16_conv),          cmocka_unit_test(test_bf16_matmul_gemm),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
