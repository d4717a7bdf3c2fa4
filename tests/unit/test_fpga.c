/* tests/unit/test_fpga.c — the FPGA target's pieces through their C APIs:
 * fixed-point numbers, the loop-program evaluator's fixed-point arithmetic,
 * precision resolution, the HLS schedule, the line-buffer convolution
 * rewrite and the HLS C emitter's text. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "interp/interp.h"
#include "lower_graph.h"
#include "targets/fpga/fpga_impl.h"

/* ---------------------------------------------------------------- helpers */

/* y[1,2] = x[1,4] @ w[4,2] */
static const double W_VALS[8] = { 0.3, 1, -0.6, 1, 0.125, 1, 0.9, 1 };

static void matmul_graph(TG *t)
{
    tg_start(t, "mm");
    int in[2] = { tg_input(t, "x", IR_DT_F32, TG_INTS(1, 4)), tg_const(t, "w", IR_DT_F32, TG_INTS(4, 2), W_VALS) };
    int y = tg_node(t, IR_OP_MatMul, "mm", 2, in, 1);
    tg_output(t, y);
    assert_int_equal(pass_infer(t->g, &t->d), 0);
}

static LoopProgram *lower(TG *t)
{
    LowSchedule s = { .target = "fpga" };
    LoopProgram *p = low_graph(t->g, &s, &t->d);
    assert_non_null(p);
    p->name = "mm";
    return p;
}

static int find_buf(const LoopProgram *p, const char *name)
{
    for (int b = 0; b < p->n_bufs; b++)
        if (strcmp(p->bufs[b].name, name) == 0)
            return b;
    fail_msg("no buffer %s", name);
    return -1;
}

static void free_vals(const LoopProgram *p, double **vals)
{
    for (int b = 0; b < p->n_bufs; b++)
        free(vals[b]);
    free(vals);
}

static char *write_temp(const char *text)
{
    char *path = strdup("/tmp/dlcc-test-fpga-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    return path;
}

/* The formats of p's buffers from a precision file holding `json` (removed again). */
static void formats(TG *t, LoopProgram *p, const char *json, CgFixed **fmt, int **frac)
{
    char *path = write_temp(json);
    TgtOptions o = { .name = "t", .precision_file = path, .model_file = "t.json" };
    assert_int_equal(tgt_fpga_precision(t->g, p, &o, fmt, frac, &t->d), 0);
    unlink(path);
    free(path);
}

/* ---------------------------------------------------------------- numbers */

static void test_fixed_numbers(void **state)
{
    (void)state;
    CgFixed f;
    assert_int_equal(cg_fixed_parse("fixed<16,6>", &f), 0);
    assert_int_equal(f.w, 16);
    assert_int_equal(f.i, 6);
    assert_int_equal(cg_fixed_parse("fixed<40,6>", &f), -1);     /* wider than the 32-bit registers */
    assert_int_equal(cg_fixed_parse("fixed<8,9>", &f), -1);
    assert_int_equal(cg_fixed_parse("fixed<8,1>x", &f), -1);
    CgFixed q = { 16, 6 };                                      /* 10 fraction bits */
    assert_int_equal(cg_fixed_quantize(q, 1.5 / 1024), 2);      /* half away from zero */
    assert_int_equal(cg_fixed_quantize(q, -1.5 / 1024), -2);
    assert_int_equal(cg_fixed_quantize(q, 2.4 / 1024), 2);
    assert_int_equal(cg_fixed_quantize(q, 100), 32767);         /* saturation */
    assert_int_equal(cg_fixed_quantize(q, -100), -32768);
    assert_int_equal(cg_fixed_quantize(q, NAN), 0);
    assert_true(cg_fixed_value(q, 1868) == 1868.0 / 1024);
}

/* ------------------------------------------------ precision and evaluator */

static void test_eval_fixed_matmul(void **state)
{
    (void)state;
    TG t;
    matmul_graph(&t);
    LoopProgram *p = lower(&t);
    CgFixed *fmt;
    int *frac;
    formats(&t, p, "{\"default\": \"fixed<16,6>\", \"weights\": \"fixed<8,1>\"}", &fmt, &frac);
    int w = find_buf(p, "w"), x = find_buf(p, "x");
    assert_int_equal(fmt[w].w, 8);                  /* MatMul's B is a weight */
    assert_int_equal(fmt[w].i, 1);
    assert_int_equal(fmt[x].w, 16);
    assert_int_equal(frac[0], 10);                  /* the most fraction bits it touches */
    float xv[4] = { 0.5f, -1.25f, 2.0f, 0.75f };
    IrArray in = { .dtype = IR_DT_F32, .shape = { 2, { 1, 4 } }, .data = xv };
    double **vals = calloc((size_t)p->n_bufs, sizeof *vals), **fl = calloc((size_t)p->n_bufs, sizeof *fl);
    assert_int_equal(tgt_fpga_eval(p, fmt, frac, &in, vals, &t.d), 0);
    assert_int_equal(tgt_fpga_eval(p, NULL, NULL, &in, fl, &t.d), 0);
    int y = find_buf(p, "mm_out0");
    /* w quantized to 1/128: 38, -77, 16, 115 -> registers 304, -616, 128, 920 (x8);
     * x * w products >> 10: 152 + 770 + 256 + 690 = 1868 */
    assert_true(vals[y][0] == 1868.0 / 1024);
    assert_true(fabs(fl[y][0] - 1.825) < 1e-6);
    /* column 1: w = 1 saturates to 127/128 */
    assert_true(fabs(vals[y][1] - (0.5 - 1.25 + 2.0 + 0.75) * 127 / 128) < 2.0 / 1024);
    free_vals(p, vals);
    free_vals(p, fl);
    free(fmt);
    free(frac);
    loop_program_free(p);
    ir_graph_free(t.g);
}

/* exp, tanh and erf in fixed point are lookup tables (codegen/c_emit.c): within the error bounds
 * docs/targets/fpga.md states, over [-8, 8] in steps of 1/128, at 20 fraction bits */
static void test_lut_functions(void **state)
{
    (void)state;
    TG t;
    tg_start(&t, "lut");
    int x = tg_input(&t, "x", IR_DT_F32, TG_INTS(1, 2049));
    int ye = tg_node(&t, IR_OP_Exp, "e", 1, &x, 1), yt = tg_node(&t, IR_OP_Tanh, "t", 1, &x, 1),
        yr = tg_node(&t, IR_OP_Erf, "r", 1, &x, 1);
    tg_output(&t, ye);
    tg_output(&t, yt);
    tg_output(&t, yr);
    assert_int_equal(pass_infer(t.g, &t.d), 0);
    LoopProgram *p = lower(&t);
    CgFixed *fmt;
    int *frac;
    formats(&t, p, "{\"default\": \"fixed<32,12>\"}", &fmt, &frac);
    float xv[2049];
    for (int i = 0; i < 2049; i++)
        xv[i] = (float)(i - 1024) / 128;
    IrArray in = { .dtype = IR_DT_F32, .shape = { 2, { 1, 2049 } }, .data = xv };
    double **vals = calloc((size_t)p->n_bufs, sizeof *vals);
    assert_int_equal(tgt_fpga_eval(p, fmt, frac, &in, vals, &t.d), 0);
    int be = -1, bt = -1, br = -1;
    for (int b = 0; b < p->n_bufs; b++)
        if (p->bufs[b].storage == LOOP_ST_OUTPUT)
            *(p->bufs[b].index == 0 ? &be : p->bufs[b].index == 1 ? &bt : &br) = b;
    double we = 0, wt = 0, wr = 0, ulp = ldexp(1, -20);
    for (int i = 0; i < 2049; i++) {
        double v = xv[i];
        if (exp(v) < 2000)             /* fixed<32,12> holds less than 2048 */
            we = fmax(we, fabs(vals[be][i] - exp(v)) / (exp(v) * (3e-5 + 0.35 * ulp) + ulp));
        wt = fmax(wt, fabs(vals[bt][i] - tanh(v)) / (2.4e-5 + ulp));
        wr = fmax(wr, fabs(vals[br][i] - erf(v)) / (3e-5 + ulp));
    }
    printf("lut: error / bound: exp %.3f, tanh %.3f, erf %.3f\n", we, wt, wr);
    assert_true(we <= 1 && wt <= 1 && wr <= 1);
    free_vals(p, vals);
    free(fmt);
    free(frac);
    loop_program_free(p);
    ir_graph_free(t.g);
}

static void test_precision_layers(void **state)
{
    (void)state;
    TG t;
    matmul_graph(&t);
    LoopProgram *p = lower(&t);
    char *path = write_temp("{\"default\": \"fixed<16,6>\", \"weights\": \"fixed<8,1>\", "
                            "\"layers\": {\"mm\": {\"weights\": \"fixed<12,2>\", \"activations\": \"fixed<20,8>\"}}, "
                            "\"tensors\": {\"x\": \"fixed<10,3>\"}}");
    TgtOptions o = { .name = "mm", .precision_file = path, .model_file = "t.json" };
    CgFixed *fmt;
    int *frac;
    assert_int_equal(tgt_fpga_precision(t.g, p, &o, &fmt, &frac, &t.d), 0);
    int w = find_buf(p, "w"), x = find_buf(p, "x"), y = find_buf(p, "mm_out0");
    assert_int_equal(fmt[w].w, 12);        /* the layer's weights win over the global ones */
    assert_int_equal(fmt[w].i, 2);
    assert_int_equal(fmt[y].w, 20);        /* its output: the layer's activations */
    assert_int_equal(fmt[y].i, 8);
    assert_int_equal(fmt[x].w, 10);        /* the model input: its tensor entry */
    assert_int_equal(fmt[x].i, 3);
    assert_int_equal(frac[0], 12);         /* max(7, 10, 12) */
    free(fmt);
    free(frac);
    unlink(path);
    free(path);
    loop_program_free(p);
    ir_graph_free(t.g);
}

static void test_precision_errors(void **state)
{
    (void)state;
    static const struct { const char *text, *msg; } cases[] = {
        { "{\"layers\": {\"nope\": {\"weights\": \"fixed<8,1>\"}}}", "layer 'nope' is not a node of the model" },
        { "{\"default\": \"fixed<16,6>\", \"colour\": 1}", "unknown key 'colour'" },
        { "{\"default\": \"fixed<99,6>\"}", "default wants \"fixed<W,I>\"" },
        { "{\"layers\": {\"mm\": {\"bias\": \"fixed<8,9>\"}}}", "bias wants \"fixed<W,I>\"" },
        { "{\"default\": \"fixed<16,6>\", \"weights\": \"float32\"}", "mixing float32 with fixed point" },
        { "{\"default\": ", "precision file" },
        { "{\"tensors\": {\"nope\": \"fixed<8,1>\"}}", "tensor 'nope' is not a float tensor" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        TG t;
        matmul_graph(&t);
        LoopProgram *p = lower(&t);
        char *path = write_temp(cases[i].text);
        TgtOptions o = { .name = "mm", .precision_file = path, .model_file = "t.json" };
        CgFixed *fmt;
        int *frac;
        assert_int_equal(tgt_fpga_precision(t.g, p, &o, &fmt, &frac, &t.d), -1);
        if (!strstr(t.d.msg, cases[i].msg))
            fail_msg("case %zu: '%s' does not contain '%s'", i, t.d.msg, cases[i].msg);
        unlink(path);
        free(path);
        loop_program_free(p);
        ir_graph_free(t.g);
    }
}

/* ------------------------------------------------------------ schedule */

static const LoopStmt *first_loop(const LoopStmt *s)
{
    while (s && s->kind == LOOP_S_BLOCK && s->u.block.n > 0) {
        const LoopStmt *f = NULL;
        for (int i = 0; i < s->u.block.n && !f; i++)
            if (s->u.block.items[i]->kind == LOOP_S_FOR || s->u.block.items[i]->kind == LOOP_S_BLOCK)
                f = s->u.block.items[i];
        s = f;
    }
    return s;
}

static void test_schedule_matmul(void **state)
{
    (void)state;
    TG t;
    matmul_graph(&t);
    LoopProgram *p = lower(&t);
    assert_int_equal(tgt_fpga_schedule(p, 64, NULL, 0), 0);
    /* the input is staged on chip by a first kernel */
    assert_string_equal(p->kernels[0].name, "load_x");
    int xl = find_buf(p, "x_local");
    assert_int_equal(p->bufs[xl].storage, LOOP_ST_WORKSPACE);
    /* matmul: the output loop over j is pipelined, the reduction over k unrolled */
    const LoopStmt *l = first_loop(p->kernels[1].body);
    while (l && l->kind == LOOP_S_FOR && l->u.loop.kind != LOOP_HLS_PIPELINE)
        l = first_loop(l->u.loop.body);
    assert_non_null(l);
    assert_int_equal(l->u.loop.kind, LOOP_HLS_PIPELINE);
    assert_int_equal(l->u.loop.factor, 1);
    const LoopStmt *k = first_loop(l->u.loop.body);
    assert_non_null(k);
    assert_int_equal(k->u.loop.kind, LOOP_UNROLLED);
    /* w[k*2 + j], k < 4: offsets 0 2 4 6; cyclic 3 puts at most two in a bank */
    assert_int_equal(p->bufs[find_buf(p, "w")].partition, 3);
    assert_int_equal(p->bufs[xl].partition, 2);
    TgtHlsCost c;
    tgt_fpga_cost(p, NULL, 1, 1, &c);
    assert_int_equal(c.ii, 1);
    assert_int_equal(c.mults, 4);                /* float: 3 DSP per multiplier, 2 per adder */
    assert_int_equal(c.dsp, 4 * 3 + 4 * 2);
    loop_program_free(p);
    ir_graph_free(t.g);
}

static void test_elementwise_lanes(void **state)
{
    (void)state;
    TG t;
    tg_start(&t, "relu");
    int x = tg_input(&t, "x", IR_DT_F32, TG_INTS(2, 96));
    int a = tg_node(&t, IR_OP_Relu, "a", 1, &x, 1);
    tg_output(&t, tg_node(&t, IR_OP_Neg, "b", 1, &a, 1));
    assert_int_equal(pass_infer(t.g, &t.d), 0);
    LoopProgram *p = lower(&t);
    assert_int_equal(tgt_fpga_schedule(p, 64, NULL, 0), 0);
    assert_int_equal(loop_verify(p, &t.d), 0);
    /* kernel 1 (after the input staging): relu over 192 on-chip elements -> 24 x 8 lanes */
    const LoopStmt *io = first_loop(p->kernels[1].body);
    assert_non_null(io);
    assert_int_equal(io->u.loop.kind, LOOP_HLS_PIPELINE);
    assert_int_equal(io->u.loop.extent->u.i, 24);
    const LoopStmt *ii = first_loop(io->u.loop.body);
    assert_non_null(ii);
    assert_int_equal(ii->u.loop.kind, LOOP_UNROLLED);
    assert_int_equal(ii->u.loop.extent->u.i, 8);
    /* the last kernel writes the AXI output port: one element per cycle, no lanes */
    io = first_loop(p->kernels[p->n_kernels - 1].body);
    assert_int_equal(io->u.loop.extent->u.i, 192);
    float xv[192];
    for (int i = 0; i < 192; i++)
        xv[i] = (float)(i % 7) - 3;
    IrArray in = { .dtype = IR_DT_F32, .shape = { 2, { 2, 96 } }, .data = xv };
    double **vals = calloc((size_t)p->n_bufs, sizeof *vals);
    assert_int_equal(tgt_fpga_eval(p, NULL, NULL, &in, vals, &t.d), 0);
    int y = find_buf(p, "b_out0");
    for (int i = 0; i < 192; i++)
        assert_true(vals[y][i] == -(xv[i] > 0 ? xv[i] : 0));
    free_vals(p, vals);
    loop_program_free(p);
    ir_graph_free(t.g);
}

static void test_fuse_relu(void **state)
{
    (void)state;
    TG t;
    tg_start(&t, "mmrelu");
    int in[2] = { tg_input(&t, "x", IR_DT_F32, TG_INTS(1, 4)), tg_const(&t, "w", IR_DT_F32, TG_INTS(4, 2), W_VALS) };
    int y = tg_node(&t, IR_OP_MatMul, "mm", 2, in, 1);
    int r = tg_node(&t, IR_OP_Relu, "relu", 1, &y, 1);
    tg_output(&t, tg_node(&t, IR_OP_Relu, "relu2", 1, &r, 1));    /* a chain: both fold into the MatMul */
    assert_int_equal(pass_infer(t.g, &t.d), 0);
    LoopProgram *p = lower(&t);
    assert_int_equal(p->n_kernels, 3);
    assert_int_equal(tgt_fpga_fuse_relu(p, t.g), 2);
    assert_int_equal(p->n_kernels, 1);                       /* mm + relu + relu in one kernel */
    assert_int_equal(p->kernels[0].n_nodes, 3);
    assert_int_equal(loop_verify(p, &t.d), 0);
    const char *why;
    assert_int_equal(cg_hls_dataflow_ok(p, &why), 1);        /* the fused-away buffers are unused, not errors */
    float xv[4] = { 0.5f, -1.25f, 2.0f, 0.75f };
    IrArray xin = { .dtype = IR_DT_F32, .shape = { 2, { 1, 4 } }, .data = xv };
    double **vals = calloc((size_t)p->n_bufs, sizeof *vals);
    assert_int_equal(tgt_fpga_eval(p, NULL, NULL, &xin, vals, &t.d), 0);
    int out = find_buf(p, "relu2_out0");
    assert_true(fabs(vals[out][0] - 1.825) < 1e-6);          /* positive: kept */
    xv[2] = -2.0f;                                           /* column 0 = 0.15 + 0.75 - 0.25 + 0.675 */
    free_vals(p, vals);
    vals = calloc((size_t)p->n_bufs, sizeof *vals);
    assert_int_equal(tgt_fpga_eval(p, NULL, NULL, &xin, vals, &t.d), 0);
    assert_true(fabs(vals[out][0] - 1.325) < 1e-6);
    assert_true(vals[out][1] == 0);                          /* 0.5 - 1.25 - 2 + 0.75 < 0: clamped */
    free_vals(p, vals);
    loop_program_free(p);
    ir_graph_free(t.g);
}

static void test_dataflow_rule(void **state)
{
    (void)state;
    TG t;
    tg_start(&t, "fork");
    int x = tg_input(&t, "x", IR_DT_F32, TG_INTS(4));
    int a = tg_node(&t, IR_OP_Relu, "a", 1, &x, 1);
    int b = tg_node(&t, IR_OP_Neg, "b", 1, &x, 1);
    int in[2] = { a, b };
    tg_output(&t, tg_node(&t, IR_OP_Add, "c", 2, in, 1));
    assert_int_equal(pass_infer(t.g, &t.d), 0);
    LoopProgram *p = lower(&t);
    const char *why = NULL;
    assert_int_equal(cg_hls_dataflow_ok(p, &why), 0);      /* x feeds two kernels */
    assert_string_equal(why, "x");
    loop_program_free(p);
    ir_graph_free(t.g);
    matmul_graph(&t);
    p = lower(&t);
    assert_int_equal(cg_hls_dataflow_ok(p, &why), 1);
    loop_program_free(p);
    ir_graph_free(t.g);
}

/* ------------------------------------------------------- line buffers */

static void conv_case(int64_t stride, int64_t group, int64_t pad)
{
    TG t;
    tg_start(&t, "conv");
    double w[4 * 4 * 3 * 3], bias[4] = { 0.5, -0.25, 0.125, 1 };
    int64_t cin_g = 4 / group;
    for (int i = 0; i < 4 * cin_g * 9; i++)
        w[i] = sin(0.7 * i);
    int in[3] = { tg_input(&t, "x", IR_DT_F32, TG_INTS(1, 4, 7, 6)),
                  tg_const(&t, "w", IR_DT_F32, 4, (int64_t[]){ 4, cin_g, 3, 3 }, w),
                  tg_const(&t, "b", IR_DT_F32, TG_INTS(4), bias) };
    int y = tg_node(&t, IR_OP_Conv, "conv", 3, in, 1);
    tg_ints(&t, IR_A_pads, TG_INTS(pad, pad, pad, pad));
    tg_ints(&t, IR_A_strides, TG_INTS(stride, stride));
    tg_int(&t, IR_A_group, group);
    tg_output(&t, y);
    assert_int_equal(pass_infer(t.g, &t.d), 0);
    LoopProgram *p = lower(&t);
    assert_int_equal(tgt_fpga_line_buffers(p, t.g, 64, NULL, 0, &t.d), 1);
    loop_simplify(p);
    assert_int_equal(loop_verify(p, &t.d), 0);
    float xv[4 * 7 * 6];
    for (int i = 0; i < 4 * 7 * 6; i++)
        xv[i] = (float)cos(0.37 * i);
    IrArray xin = { .dtype = IR_DT_F32, .shape = { 4, { 1, 4, 7, 6 } }, .data = xv }, ref;
    assert_int_equal(interp_run(t.g, &xin, &ref, &t.d), 0);
    double **vals = calloc((size_t)p->n_bufs, sizeof *vals);
    assert_int_equal(tgt_fpga_eval(p, NULL, NULL, &xin, vals, &t.d), 0);
    int yb = find_buf(p, "conv_out0");
    for (int64_t i = 0; i < ir_array_numel(&ref); i++)
        if (fabs(vals[yb][i] - ((float *)ref.data)[i]) > 1e-5)
            fail_msg("stride %d group %d pad %d: y[%d] = %g, want %g", (int)stride, (int)group, (int)pad, (int)i,
                     vals[yb][i], ((float *)ref.data)[i]);
    free_vals(p, vals);
    interp_array_free(&ref);
    loop_program_free(p);
    ir_graph_free(t.g);
}

static void test_line_buffer_conv(void **state)
{
    (void)state;
    conv_case(1, 1, 1);
    conv_case(2, 1, 1);
    conv_case(1, 2, 0);
    conv_case(2, 4, 1);          /* depthwise */
}


/* Pools and 1x1 convolutions through the line buffer (the streaming form):
 * against the interpreter, with padding, strides that do not divide the
 * input, ceil_mode and count_include_pad. */
static void pool_case(IrOp op, int64_t k, int64_t stride, int64_t pad, int ceil, int count_pad)
{
    TG t;
    tg_start(&t, "pool");
    int x = tg_input(&t, "x", IR_DT_F32, TG_INTS(1, 3, 7, 6));
    int y;
    if (op == IR_OP_Conv) {
        double w[4 * 3], b[4] = { 0.5, -0.25, 0.125, 1 };
        for (int i = 0; i < 12; i++)
            w[i] = sin(0.7 * i);
        int in[3] = { x, tg_const(&t, "w", IR_DT_F32, 4, (int64_t[]){ 4, 3, 1, 1 }, w), tg_const(&t, "b", IR_DT_F32, TG_INTS(4), b) };
        y = tg_node(&t, op, "pool", 3, in, 1);
        tg_ints(&t, IR_A_strides, TG_INTS(stride, stride));
    } else {
        y = tg_node(&t, op, "pool", 1, &x, 1);
        tg_ints(&t, IR_A_kernel_shape, TG_INTS(k, k));
        tg_ints(&t, IR_A_strides, TG_INTS(stride, stride));
        tg_ints(&t, IR_A_pads, TG_INTS(pad, pad, pad, pad));
        tg_int(&t, IR_A_ceil_mode, ceil);
        if (op == IR_OP_AveragePool)
            tg_int(&t, IR_A_count_include_pad, count_pad);
    }
    tg_output(&t, y);
    assert_int_equal(pass_infer(t.g, &t.d), 0);
    LoopProgram *p = lower(&t);
    assert_int_equal(tgt_fpga_line_buffers(p, t.g, 64, NULL, 1, &t.d), 1);
    loop_simplify(p);
    assert_int_equal(loop_verify(p, &t.d), 0);
    float xv[3 * 7 * 6];
    for (int i = 0; i < 3 * 7 * 6; i++)
        xv[i] = (float)cos(0.37 * i);
    IrArray xin = { .dtype = IR_DT_F32, .shape = { 4, { 1, 3, 7, 6 } }, .data = xv }, ref;
    assert_int_equal(interp_run(t.g, &xin, &ref, &t.d), 0);
    double **vals = calloc((size_t)p->n_bufs, sizeof *vals);
    assert_int_equal(tgt_fpga_eval(p, NULL, NULL, &xin, vals, &t.d), 0);
    int yb = find_buf(p, "pool_out0");
    for (int64_t i = 0; i < ir_array_numel(&ref); i++)
        if (fabs(vals[yb][i] - ((float *)ref.data)[i]) > 1e-5)
            fail_msg("%s k %d stride %d pad %d ceil %d count_pad %d: y[%d] = %g, want %g", ir_op_name(op), (int)k,
                     (int)stride, (int)pad, ceil, count_pad, (int)i, vals[yb][i], ((float *)ref.data)[i]);
    free_vals(p, vals);
    interp_array_free(&ref);
    loop_program_free(p);
    ir_graph_free(t.g);
}

static void test_line_buffer_pools(void **state)
{
    (void)state;
    pool_case(IR_OP_MaxPool, 2, 2, 0, 0, 0);
    pool_case(IR_OP_MaxPool, 3, 2, 1, 0, 0);
    pool_case(IR_OP_MaxPool, 3, 2, 0, 1, 0);         /* ceil_mode: a last window past the input */
    pool_case(IR_OP_AveragePool, 3, 1, 1, 0, 0);
    pool_case(IR_OP_AveragePool, 3, 2, 1, 0, 1);
    pool_case(IR_OP_AveragePool, 2, 2, 1, 1, 1);     /* count_include_pad with the ceil extension */
    pool_case(IR_OP_AveragePool, 2, 2, 0, 1, 0);
    pool_case(IR_OP_Conv, 1, 2, 0, 0, 0);            /* 1x1, stride 2 over 7x6: rows and columns skipped */
    pool_case(IR_OP_Conv, 1, 1, 0, 0, 0);
}

/* ------------------------------------------------------------- streams */

/* x -> conv1 -> relu -> r; r -> conv2 -> c; y = c + r (a residual block,
 * 3x3 convolutions with padding 1 over 2 channels of 6x6) */
static LoopProgram *residual_program(TG *t)
{
    tg_start(t, "res");
    double w1[2 * 2 * 9], w2[2 * 2 * 9], b[2] = { 0.25, -0.5 };
    for (int i = 0; i < 36; i++) {
        w1[i] = sin(0.9 * i);
        w2[i] = cos(0.4 * i);
    }
    int x = tg_input(t, "x", IR_DT_F32, TG_INTS(1, 2, 6, 6));
    int in1[3] = { x, tg_const(t, "w1", IR_DT_F32, TG_INTS(2, 2, 3, 3), w1), tg_const(t, "b1", IR_DT_F32, TG_INTS(2), b) };
    int c1 = tg_node(t, IR_OP_Conv, "conv1", 3, in1, 1);
    tg_ints(t, IR_A_pads, TG_INTS(1, 1, 1, 1));
    int r = tg_node(t, IR_OP_Relu, "relu", 1, &c1, 1);
    int in2[3] = { r, tg_const(t, "w2", IR_DT_F32, TG_INTS(2, 2, 3, 3), w2), tg_const(t, "b2", IR_DT_F32, TG_INTS(2), b) };
    int c2 = tg_node(t, IR_OP_Conv, "conv2", 3, in2, 1);
    tg_ints(t, IR_A_pads, TG_INTS(1, 1, 1, 1));
    int in3[2] = { c2, r };
    tg_output(t, tg_node(t, IR_OP_Add, "add", 2, in3, 1));
    assert_int_equal(pass_infer(t->g, &t->d), 0);
    LoopProgram *p = lower(t);
    assert_int_equal(tgt_fpga_line_buffers(p, t->g, 64, NULL, 1, &t->d), 2);
    assert_int_equal(tgt_fpga_fuse_relu(p, t->g), 1);
    loop_simplify(p);
    return p;
}

/* The residual block keeps DATAFLOW: relu's output goes to conv2 and, as a
 * copy, to the add; all three intermediates are streams.  The copy's FIFO
 * must hold what conv1 writes before conv2 delivers its first value: the
 * computed depth lets the replay finish, one less (or the default 2)
 * deadlocks; and the streamed program computes the model's values. */
static void test_stream_fifo_depths(void **state)
{
    (void)state;
    TG t;
    LoopProgram *p = residual_program(&t);
    TgtFpgaFifos f;
    assert_int_equal(tgt_fpga_streams(p, &f), 0);
    assert_int_equal(loop_verify(p, &t.d), 0);
    const char *why = NULL;
    assert_int_equal(cg_hls_dataflow_ok(p, &why), 1);
    /* three streams of 2 channels: one FIFO per channel (lane), 36 values each */
    assert_int_equal(f.n, 6);
    int rb = find_buf(p, "relu_out0"), cb = find_buf(p, "conv2_out0"), skip = -1;
    for (int i = 0; i < f.n; i++) {
        assert_int_equal(f.count[i], 36);
        assert_int_equal(p->bufs[f.buf[i]].stream_lanes, 2);
        assert_true(p->bufs[f.buf[i]].stream == f.depth[i]);
        if (f.buf[i] != rb && f.buf[i] != cb)
            skip = f.buf[i];                                 /* relu_out0_s1: the add's copy */
        else
            assert_int_equal(f.depth[i], 2);                 /* a chain needs no more */
    }
    assert_true(skip >= 0);
    /* conv2 writes its first output at padded position (2, 2), after reading input row 0 and the first
     * two pixels of row 1: W + 2 = 8 pixels of relu_out0, both channels.  conv1 writes each value to
     * relu_out0, then to the copy, channel by channel; the add reads the copy only once conv2 has
     * written.  Before conv1 writes channel 1 of the 8th pixel to relu_out0, lane 0 of the copy holds
     * all 8 of its values: W + 2, and every lane gets the same depth. */
    int64_t depth = p->bufs[skip].stream;
    printf("     skip FIFO depth %lld per lane\n", (long long)depth);
    assert_int_equal(depth, 6 + 2);
    int64_t d[6];
    for (int i = 0; i < 6; i++)
        d[i] = f.depth[i];
    assert_int_equal(tgt_fpga_fifo_sim(&f, d), 1);
    for (int i = 0; i < 6; i++)
        d[i] = f.buf[i] == skip ? depth - 1 : f.depth[i];
    assert_int_equal(tgt_fpga_fifo_sim(&f, d), 0);           /* too shallow: deadlock */
    for (int i = 0; i < 6; i++)
        d[i] = f.buf[i] == skip ? 2 : f.depth[i];
    assert_int_equal(tgt_fpga_fifo_sim(&f, d), 0);           /* hls::stream's default depth: deadlock */
    float xv[72];
    for (int i = 0; i < 72; i++)
        xv[i] = (float)sin(0.3 * i + 0.1);
    IrArray xin = { .dtype = IR_DT_F32, .shape = { 4, { 1, 2, 6, 6 } }, .data = xv }, ref;
    assert_int_equal(interp_run(t.g, &xin, &ref, &t.d), 0);
    double **vals = calloc((size_t)p->n_bufs, sizeof *vals);
    assert_int_equal(tgt_fpga_eval(p, NULL, NULL, &xin, vals, &t.d), 0);
    int yb = find_buf(p, "add_out0");
    for (int64_t i = 0; i < 72; i++)
        if (fabs(vals[yb][i] - ((float *)ref.data)[i]) > 1e-5)
            fail_msg("y[%d] = %g, want %g", (int)i, vals[yb][i], ((float *)ref.data)[i]);
    free_vals(p, vals);
    interp_array_free(&ref);
    tgt_fpga_fifos_free(&f);
    loop_program_free(p);
    ir_graph_free(t.g);
}

/* A softmax normalizes in place: with streams it works on a local copy and
 * writes the output once, so the design keeps DATAFLOW; same values. */
static void test_softmax_readback(void **state)
{
    (void)state;
    TG t;
    tg_start(&t, "sm");
    int x = tg_input(&t, "x", IR_DT_F32, TG_INTS(2, 5));
    int a = tg_node(&t, IR_OP_Neg, "a", 1, &x, 1);
    tg_output(&t, tg_node(&t, IR_OP_Softmax, "s", 1, &a, 1));
    assert_int_equal(pass_infer(t.g, &t.d), 0);
    LoopProgram *p = lower(&t);
    const char *why = NULL;
    assert_int_equal(cg_hls_dataflow_ok(p, &why), 0);         /* the softmax reads its output back */
    assert_int_equal(tgt_fpga_schedule(p, 64, NULL, 1), 0);
    assert_int_equal(loop_verify(p, &t.d), 0);
    assert_int_equal(cg_hls_dataflow_ok(p, &why), 1);
    float xv[10];
    for (int i = 0; i < 10; i++)
        xv[i] = (float)sin(1.3 * i);
    IrArray xin = { .dtype = IR_DT_F32, .shape = { 2, { 2, 5 } }, .data = xv }, ref;
    assert_int_equal(interp_run(t.g, &xin, &ref, &t.d), 0);
    double **vals = calloc((size_t)p->n_bufs, sizeof *vals);
    assert_int_equal(tgt_fpga_eval(p, NULL, NULL, &xin, vals, &t.d), 0);
    int yb = find_buf(p, "s_out0");
    for (int i = 0; i < 10; i++)
        assert_true(fabs(vals[yb][i] - ((float *)ref.data)[i]) < 1e-6);
    free_vals(p, vals);
    interp_array_free(&ref);
    loop_program_free(p);
    ir_graph_free(t.g);
}

/* --fpga-io parallel and the host build: no streams; a kernel whose
 * indexing depends on data (a Gather) passes no stream either. */
static void test_stream_refusals(void **state)
{
    (void)state;
    TG t;
    LoopProgram *p = residual_program(&t);
    assert_int_equal(tgt_fpga_schedule(p, 64, NULL, 0), 0);
    assert_int_equal(cg_hls_has_streams(p), 0);
    loop_program_free(p);
    ir_graph_free(t.g);
    tg_start(&t, "gather");
    int x = tg_input(&t, "x", IR_DT_F32, TG_INTS(8));
    int idx = tg_input(&t, "i", IR_DT_I64, TG_INTS(8));
    int a = tg_node(&t, IR_OP_Neg, "a", 1, &x, 1);
    int in[2] = { a, idx };
    tg_output(&t, tg_node(&t, IR_OP_Gather, "g", 2, in, 1));
    assert_int_equal(pass_infer(t.g, &t.d), 0);
    p = lower(&t);
    TgtFpgaFifos f;
    assert_int_equal(tgt_fpga_streams(p, &f), 0);
    assert_int_equal(p->bufs[find_buf(p, "a_out0")].stream, 0);    /* read at data-dependent indices */
    tgt_fpga_fifos_free(&f);
    loop_program_free(p);
    ir_graph_free(t.g);
}

/* ------------------------------------------------------------ emitter */

static void test_hls_text(void **state)
{
    (void)state;
    for (int fixed = 0; fixed < 2; fixed++) {
        TG t;
        matmul_graph(&t);
        LoopProgram *p = lower(&t);
        assert_int_equal(tgt_fpga_schedule(p, 64, NULL, 0), 0);
        CgFixed *fmt = NULL;
        int *frac = NULL;
        TgtOptions o = { .name = "mm", .precision = fixed ? "fixed<16,6>" : NULL, .model_file = "t.json" };
        assert_int_equal(tgt_fpga_precision(t.g, p, &o, &fmt, &frac, &t.d), 0);
        int64_t off[16] = { 0 };
        const char *inf[] = { "x" }, *outf[] = { "mm_out0" };
        CgHlsOptions ho = { .name = "mm", .model = "mm", .fmt = fmt, .frac = frac, .in_fields = inf,
                            .out_fields = outf, .io_offset = off };
        UtilBuf b;
        util_buf_init(&b);
        int df = 0;
        assert_int_equal(cg_hls_emit(p, &ho, &b, &df, &t.d), 0);
        util_buf_put(&b, "", 1);
        const char *s = b.data;
        static const char *const common[] = {
            "#pragma HLS PIPELINE II=1", "#pragma HLS UNROLL",
            "#pragma HLS ARRAY_PARTITION variable=w_w cyclic factor=3 dim=1",
            "#pragma HLS INTERFACE m_axi port=t_x offset=slave bundle=gmem0 depth=4",
            "#pragma HLS INTERFACE s_axilite port=return bundle=control", "#pragma HLS DATAFLOW",
            "#ifndef __SYNTHESIS__", "int32_t mm_run_ptrs(const void *const inputs[]",
            "return mm_run_ptrs(ins, outs, workspace);",
        };
        for (size_t i = 0; i < sizeof common / sizeof *common; i++)
            if (!strstr(s, common[i]))
                fail_msg("%s: no '%s' in\n%s", fixed ? "fixed" : "float", common[i], s);
        const char *want = fixed ? "void mm_top(const dlcc_fx16_6 t_x[4], dlcc_fx16_6 t_mm_out0[2])"
                                 : "void mm_top(const float t_x[4], float t_mm_out0[2])";
        if (!strstr(s, want))
            fail_msg("no '%s' in\n%s", want, s);
        assert_non_null(strstr(s, fixed ? "static const dlcc_fx16_6 w_w[8]" : "static const float w_w[8]"));
        assert_int_equal(df, 1);
        if (fixed) {     /* ap_fixed types; products formed exactly, rounded into the register */
            static const char *const fx[] = {
                "#include <ap_fixed.h>", "typedef ap_fixed<16, 6, AP_RND_INF, AP_SAT> dlcc_fx16_6;",
                "typedef ap_fixed<32, 22, AP_RND_INF, AP_SAT> dlcc_fx32_22;", "dlcc_fx32_22(dlcc_fx32_22(",
                "t_x[i] = dlcc_fx_d((double)((const float *)inputs[0])[i]);",
                "((float *)outputs[0])[i] = (float)t_mm_out0[i].to_double();",
            };
            for (size_t i = 0; i < sizeof fx / sizeof *fx; i++)
                if (!strstr(s, fx[i]))
                    fail_msg("fixed: no '%s' in the text (%zu bytes)", fx[i], strlen(s));
            assert_null(strstr(s, "int16_t"));
        }
        util_buf_free(&b);
        free(fmt);
        free(frac);
        loop_program_free(p);
        ir_graph_free(t.g);
    }
}

/* The testbench's inputs: integer inputs take 0..3, and 0 when the model
 * rejects those — an RNN over 2 steps whose sequence_lens is a graph input
 * (3 is longer than the sequence).  The driver compiles it, and the
 * testbench holds those zero lengths. */
static void test_testbench_int_inputs(void **state)
{
    (void)state;
    TG t;
    tg_start(&t, "sl");
    int64_t xd[] = { 2, 3, 2 }, wd[] = { 1, 2, 2 }, ld[] = { 3 };
    double w[4] = { 0.5, -0.25, 0.125, 1 }, r[4] = { 0.25, 0.5, -0.5, 0.75 };
    int in[6] = { tg_input(&t, "x", IR_DT_F32, 3, xd), tg_const(&t, "w", IR_DT_F32, 3, wd, w),
                  tg_const(&t, "r", IR_DT_F32, 3, wd, r), -1, tg_input(&t, "len", IR_DT_I32, 1, ld), -1 };
    int y = tg_node(&t, IR_OP_RNN, "rnn", 6, in, 2);
    tg_int(&t, IR_A_hidden_size, 2);
    tg_output(&t, y + 1);
    assert_int_equal(pass_infer(t.g, &t.d), 0);
    TgtOptions o = { .name = "sl", .emit = TGT_EMIT_DEFAULT_FPGA, .model_file = "sl.json" };
    TgtFiles files = { 0 };
    UtilDiag d;
    util_diag_init(&d);
    if (tgt_fpga_compile(t.g, &o, &files, &d) != 0)
        fail_msg("%s", d.msg);
    const char *tb = NULL;
    for (int i = 0; i < files.n; i++)
        if (!strcmp(files.f[i].name, "sl_tb.c")) {
            util_buf_put(&files.f[i].data, "", 1);
            tb = files.f[i].data.data;
        }
    assert_non_null(tb);
    assert_non_null(strstr(tb, "static const int32_t tb_in1[3] = {\n    0, 0, 0\n};"));
    tgt_files_free(&files);
    ir_graph_free(t.g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixed_numbers),
        cmocka_unit_test(test_eval_fixed_matmul),
        cmocka_unit_test(test_lut_functions),
        cmocka_unit_test(test_precision_layers),
        cmocka_unit_test(test_precision_errors),
        cmocka_unit_test(test_schedule_matmul),
        cmocka_unit_test(test_elementwise_lanes),
        cmocka_unit_test(test_fuse_relu),
        cmocka_unit_test(test_dataflow_rule),
        cmocka_unit_test(test_line_buffer_conv),
        cmocka_unit_test(test_line_buffer_pools),
        cmocka_unit_test(test_stream_fifo_depths),
        cmocka_unit_test(test_stream_refusals),
        cmocka_unit_test(test_softmax_readback),
        cmocka_unit_test(test_hls_text),
        cmocka_unit_test(test_testbench_int_inputs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
