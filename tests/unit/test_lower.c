/* tests/unit/test_lower.c — lowering to loop IR (golden text), schedules,
 * memory planning and the unsupported-operator diagnostic. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/lower_graph.h"

static char *print_prog(const LoopProgram *p)
{
    UtilBuf b;
    util_buf_init(&b);
    loop_print(p, &b);
    util_buf_put(&b, "", 1);
    return b.data;
}

static LoopProgram *lower(TG *t)
{
    if (pass_infer(t->g, &t->d) != 0) {
        char m[512];
        util_diag_format(&t->d, m, sizeof m);
        fail_msg("infer: %s", m);
    }
    LoopProgram *p = low_graph(t->g, NULL, &t->d);
    if (!p) {
        char m[512];
        util_diag_format(&t->d, m, sizeof m);
        fail_msg("lower: %s", m);
    }
    return p;
}

static void assert_golden(TG *t, const char *want)
{
    LoopProgram *p = lower(t);
    char *s = print_prog(p);
    if (strcmp(s, want) != 0)
        print_error("got:\n%s\nwant:\n%s\n", s, want);
    assert_string_equal(s, want);
    free(s);
    loop_program_free(p);
    ir_graph_free(t->g);
}

/* ------------------------------------------------------- golden text */

static void test_golden_relu(void **state)
{
    (void)state;
    TG t;
    tg_start(&t, "relu");
    int x = tg_input(&t, "x", IR_DT_F32, TG_INTS(2, 3));
    tg_output(&t, tg_node(&t, IR_OP_Relu, "relu", 1, &x, 1));
    assert_golden(&t,
        "program relu: 1 inputs, 1 outputs, workspace 0 bytes (align 64)\n"
        "buf x: input float32[2,3] strides [3,1] bytes 24 index 0\n"
        "buf relu_out0: output float32[2,3] strides [3,1] bytes 24 index 0\n"
        "\n"
        "kernel relu (nodes 0..0, 6 flops) {\n"
        "  for i in 0..6 {\n"
        "    v = x[i] : float32\n"
        "    relu_out0[i] = v < 0.0f ? 0.0f : v\n"
        "  }\n"
        "}\n");
}

static void test_golden_broadcast_add(void **state)
{
    (void)state;
    TG t;
    tg_start(&t, "add");
    int in[2] = { tg_input(&t, "a", IR_DT_F32, TG_INTS(2, 3)), tg_input(&t, "b", IR_DT_F32, TG_INTS(3)) };
    tg_output(&t, tg_node(&t, IR_OP_Add, "add", 2, in, 1));
    assert_golden(&t,
        "program add: 2 inputs, 1 outputs, workspace 0 bytes (align 64)\n"
        "buf a: input float32[2,3] strides [3,1] bytes 24 index 0\n"
        "buf b: input float32[3] strides [1] bytes 12 index 1\n"
        "buf add_out0: output float32[2,3] strides [3,1] bytes 24 index 0\n"
        "\n"
        "kernel add (nodes 0..0, 6 flops) {\n"
        "  for i in 0..2 {\n"
        "    for i_1 in 0..3 {\n"
        "      v = a[i*3 + i_1] : float32\n"
        "      v_1 = b[i_1] : float32\n"
        "      add_out0[i*3 + i_1] = v + v_1\n"
        "    }\n"
        "  }\n"
        "}\n");
}

static void test_golden_reducesum(void **state)
{
    (void)state;
    TG t;
    tg_start(&t, "rsum");
    int in[2] = { tg_input(&t, "x", IR_DT_F32, TG_INTS(2, 3)),
                  tg_const(&t, "axes", IR_DT_I64, TG_INTS(1), (double[]){ -1 }) };
    tg_output(&t, tg_node(&t, IR_OP_ReduceSum, "rsum", 2, in, 1));   /* keepdims = 1 (default) */
    /* the axes operand is read at compile time: no buffer */
    assert_golden(&t,
        "program rsum: 1 inputs, 1 outputs, workspace 0 bytes (align 64)\n"
        "buf x: input float32[2,3] strides [3,1] bytes 24 index 0\n"
        "buf rsum_out0: output float32[2,1] strides [1,1] bytes 8 index 0\n"
        "\n"
        "kernel rsum (nodes 0..0, 6 flops) {\n"
        "  for i in 0..2 {\n"
        "    acc = 0.0f : float32 (mutable)\n"
        "    for r in 0..3 {\n"
        "      v = x[i*3 + r] : float32\n"
        "      acc = acc + v\n"
        "    }\n"
        "    rsum_out0[i] = acc\n"
        "  }\n"
        "}\n");
}

static void test_golden_conv(void **state)
{
    (void)state;
    TG t;
    tg_start(&t, "conv");
    double w[9] = { 0 };
    int in[3] = { tg_input(&t, "x", IR_DT_F32, TG_INTS(1, 1, 4, 4)), tg_const(&t, "w", IR_DT_F32, TG_INTS(1, 1, 3, 3), w),
                  tg_const(&t, "b", IR_DT_F32, TG_INTS(1), w) };
    tg_output(&t, tg_node(&t, IR_OP_Conv, "conv", 3, in, 1));
    tg_ints(&t, IR_A_pads, TG_INTS(1, 1, 1, 1));
    /* padding: the tap is guarded by an IF on the input position */
    assert_golden(&t,
        "program conv: 1 inputs, 1 outputs, workspace 0 bytes (align 64)\n"
        "buf x: input float32[1,1,4,4] strides [16,16,4,1] bytes 64 index 0\n"
        "buf conv_out0: output float32[1,1,4,4] strides [16,16,4,1] bytes 64 index 0\n"
        "buf w: const float32[1,1,3,3] strides [9,9,3,1] bytes 36\n"
        "buf b: const float32[1] strides [1] bytes 4\n"
        "\n"
        "kernel conv (nodes 0..0, 288 flops) {\n"
        "  for o in 0..4 {\n"
        "    for o_1 in 0..4 {\n"
        "      acc = b[0] : float32 (mutable)\n"
        "      for k in 0..3 {\n"
        "        for k_1 in 0..3 {\n"
        "          if 0 <= o + k - 1 & o + k - 1 < 4 & (0 <= o_1 + k_1 - 1 & o_1 + k_1 - 1 < 4) {\n"
        "            acc = acc + x[o*4 + k*4 + o_1 + k_1 - 5] * w[k*3 + k_1]\n"
        "          }\n"
        "        }\n"
        "      }\n"
        "      conv_out0[o*4 + o_1] = acc\n"
        "    }\n"
        "  }\n"
        "}\n");
}

static void test_golden_transpose(void **state)
{
    (void)state;
    TG t;
    tg_start(&t, "tr");
    int x = tg_input(&t, "x", IR_DT_F32, TG_INTS(2, 3));
    tg_output(&t, tg_node(&t, IR_OP_Transpose, "tr", 1, &x, 1));
    assert_golden(&t,
        "program tr: 1 inputs, 1 outputs, workspace 0 bytes (align 64)\n"
        "buf x: input float32[2,3] strides [3,1] bytes 24 index 0\n"
        "buf tr_out0: output float32[3,2] strides [2,1] bytes 24 index 0\n"
        "\n"
        "kernel tr (nodes 0..0, 0 flops) {\n"
        "  for i in 0..3 {\n"
        "    for i_1 in 0..2 {\n"
        "      tr_out0[i*2 + i_1] = x[i_1*3 + i]\n"
        "    }\n"
        "  }\n"
        "}\n");
}

/* ------------------------------------------------------------- schedule */

/* The text of t's program under schedule s (printed too with DLCC_TEST_DUMP). */
static char *scheduled_text(TG *t, const LowSchedule *s)
{
    LoopProgram *p = lower(t);
    tgt_cpu_apply_schedule(p, s);
    char *txt = print_prog(p);
    if (getenv("DLCC_TEST_DUMP"))
        printf("%s", txt);
    loop_program_free(p);
    return txt;
}

static void test_schedule(void **state)
{
    (void)state;
    TG t;
    tg_start(&t, "s");
    int x = tg_input(&t, "x", IR_DT_F32, TG_INTS(4, 16));
    int r = tg_node(&t, IR_OP_Relu, "relu", 1, &x, 1);
    int in[2] = { r, tg_const(&t, "axes", IR_DT_I64, TG_INTS(1), (double[]){ 1 }) };
    int s = tg_node(&t, IR_OP_ReduceSum, "rsum", 2, in, 1);
    tg_int(&t, IR_A_keepdims, 0);
    int in2[2] = { s, tg_input(&t, "y", IR_DT_F32, TG_INTS(4, 3)) };
    int s2 = tg_node(&t, IR_OP_ReduceMax, "rmax", 1, &in2[1], 1);   /* all axes: rank-0 result */
    tg_output(&t, s);
    tg_output(&t, s2);
    LoopProgram *p = lower(&t);
    LowSchedule sc = tgt_cpu_schedule(256);
    sc.parallel_min_flops = sc.parallel_min_model_flops = 0;   /* these kernels are tiny */
    assert_string_equal(sc.target, "cpu");
    assert_int_equal(sc.unroll_max, 7);
    tgt_cpu_apply_schedule(p, &sc);
    UtilDiag d;
    util_diag_init(&d);
    assert_int_equal(loop_verify(p, &d), 0);
    char *txt = print_prog(p);
    if (getenv("DLCC_TEST_DUMP"))
        printf("%s", txt);
    /* Relu over 64 floats: strip-mined into 8 x 8 lanes (256-bit), the outer loop parallel */
    assert_non_null(strstr(txt, "  for i_4 in 0..8 parallel {\n"
                                "    for i in 0..8 vectorized(8) {\n"
                                "      v = x[i_4*8 + i] : float32\n"
                                "      relu_out0[i_4*8 + i] = v < 0.0f ? 0.0f : v\n"));
    /* the reduction over 16 stays serial (> 7); its output loop is parallel */
    assert_non_null(strstr(txt, "  for i_1 in 0..4 parallel {\n    acc = 0.0f : float32 (mutable)\n"
                                "    for r in 0..16 {\n"));
    /* a reduction to one element: its loops assign the accumulator, so they are not
     * parallel; short ones (<= 7) are unrolled */
    assert_non_null(strstr(txt, "  acc_1 = -inff : float32 (mutable)\n  for r_1 in 0..4 unrolled {\n"
                                "    for r_2 in 0..3 unrolled {\n"));
    free(txt);
    loop_program_free(p);
    /* scalar schedule: nothing vectorized */
    LowSchedule sc0 = tgt_cpu_schedule(0);
    sc0.parallel_min_flops = sc0.parallel_min_model_flops = 0;
    txt = scheduled_text(&t, &sc0);
    assert_null(strstr(txt, "vectorized"));
    assert_non_null(strstr(txt, "for i in 0..64 parallel {"));
    free(txt);
    /* the default minimum per kernel alone, and per program: a program this small stays serial */
    sc0.parallel_min_flops = 0;
    sc0.parallel_min_model_flops = tgt_cpu_schedule(0).parallel_min_model_flops;
    txt = scheduled_text(&t, &sc0);
    assert_null(strstr(txt, "parallel"));
    free(txt);
    ir_graph_free(t.g);
}


/* A program below the model size for threads still splits a kernel that
 * reads 2 MiB or more (a matrix-vector product of a batch-1 MLP, bound by
 * its weights): x [1, K] times constant W [K, N] of 4 MiB gets a parallel
 * loop, of 256 KiB none. */
static void test_schedule_weight_bound(void **state)
{
    (void)state;
    static const int64_t dims[2][2] = { { 1024, 1024 }, { 256, 256 } };
    for (int i = 0; i < 2; i++) {
        TG t;
        tg_start(&t, "mv");
        int64_t K = dims[i][0], N = dims[i][1];
        double *w = calloc((size_t)(K * N), sizeof *w);
        assert_non_null(w);
        for (int64_t j = 0; j < K * N; j++)
            w[j] = (double)(j % 7) - 3;
        int in[2] = { tg_input(&t, "x", IR_DT_F32, TG_INTS(1, K)), tg_const(&t, "w", IR_DT_F32, TG_INTS(K, N), w) };
        free(w);
        tg_output(&t, tg_node(&t, IR_OP_MatMul, "mm", 2, in, 1));
        LowSchedule sc = tgt_cpu_schedule(256);
        sc.threads = 2;
        char *txt = scheduled_text(&t, &sc);
        if ((strstr(txt, "parallel") != NULL) != (i == 0))
            fail_msg("%lld x %lld weights: %s", (long long)K, (long long)N, txt);
        free(txt);
        ir_graph_free(t.g);
    }
}

/* Loops the target's 16 lanes do not divide take narrower vectors, down
 * to 128 bits: 24 floats as 3 x 8, 20 as 5 x 4, 6 not at all. */
static void test_schedule_narrow(void **state)
{
    (void)state;
    TG t;
    tg_start(&t, "narrow");
    static const int64_t lens[3] = { 24, 20, 6 };
    for (int i = 0; i < 3; i++) {
        char nm[8];
        snprintf(nm, sizeof nm, "x%d", i);
        int xi = tg_input(&t, nm, IR_DT_F32, TG_INTS(lens[i]));
        tg_output(&t, tg_node(&t, IR_OP_Relu, nm, 1, &xi, 1));
    }
    LowSchedule s512 = tgt_cpu_schedule(512);
    s512.parallel_min_flops = s512.parallel_min_model_flops = 1 << 30;
    char *txt = scheduled_text(&t, &s512);
    assert_non_null(strstr(txt, "in 0..3 {\n    for i in 0..8 vectorized(8) {\n"));
    assert_non_null(strstr(txt, "in 0..5 {\n    for i_1 in 0..4 vectorized(4) {\n"));
    assert_non_null(strstr(txt, "  for i_2 in 0..6 {\n"));
    free(txt);
    ir_graph_free(t.g);
}

/* A scatter's update loop stores at positions read from memory: never parallel
 * (its copy loop is). */
static void test_schedule_scatter(void **state)
{
    (void)state;
    TG t;
    tg_start(&t, "sc");
    int in[3] = { tg_input(&t, "x", IR_DT_F32, TG_INTS(16)), tg_input(&t, "i", IR_DT_I64, TG_INTS(4)),
                  tg_input(&t, "u", IR_DT_F32, TG_INTS(4)) };
    tg_output(&t, tg_node(&t, IR_OP_ScatterElements, "sc", 3, in, 1));
    LowSchedule sc = tgt_cpu_schedule(0);
    sc.parallel_min_flops = sc.parallel_min_model_flops = 0;
    char *txt = scheduled_text(&t, &sc);
    assert_non_null(strstr(txt, "  for i in 0..16 parallel {\n"));
    assert_non_null(strstr(txt, "  for u in 0..4 {\n"));
    free(txt);
    ir_graph_free(t.g);
}

/* --------------------------------------------------------- memory plan */

static int buf_of(const LoopProgram *p, const char *name)
{
    for (int i = 0; i < p->n_bufs; i++)
        if (!strcmp(p->bufs[i].name, name))
            return i;
    fail_msg("no buffer %s", name);
    return -1;
}

static LoopProgram *planned(TG *t)
{
    LoopProgram *p = lower(t);
    UtilDiag d;
    util_diag_init(&d);
    assert_int_equal(low_plan_memory(p, t->g, &d), 0);
    assert_int_equal(loop_verify(p, &d), 0);
    assert_int_equal(p->workspace_align, 64);
    return p;
}

static void test_plan_chain(void **state)
{
    (void)state;
    /* x -> T -> T -> T -> T -> y: three 128-byte intermediates, a and c never
     * live together, so two slots alternate */
    TG t;
    tg_start(&t, "chain");
    int v = tg_input(&t, "x", IR_DT_F32, TG_INTS(4, 8));
    static const char *const names[] = { "a", "b", "c", "d" };
    for (int i = 0; i < 4; i++)
        v = tg_node(&t, IR_OP_Transpose, names[i], 1, &v, 1);
    tg_output(&t, v);
    LoopProgram *p = planned(&t);
    const LoopBuf *a = &p->bufs[buf_of(p, "a_out0")], *b = &p->bufs[buf_of(p, "b_out0")],
                  *c = &p->bufs[buf_of(p, "c_out0")];
    assert_int_equal(a->storage, LOOP_ST_WORKSPACE);
    assert_int_equal(a->offset, c->offset);
    assert_true(a->offset != b->offset);
    assert_int_equal(a->offset % 64, 0);
    assert_int_equal(b->offset % 64, 0);
    assert_int_equal(p->workspace_bytes, 256);
    assert_int_equal(low_workspace_lower_bound(p), 256);
    loop_program_free(p);
    ir_graph_free(t.g);
}

/* A Cast of int8 to float32 read only by an average pool takes no buffer:
 * the pool loads the int8 tensor and converts each element (lower.c,
 * cast_into_pool); with a second reader the Cast keeps its kernel. */
static void test_cast_into_pool(void **state)
{
    (void)state;
    for (int second = 0; second < 2; second++) {
        TG t;
        tg_start(&t, "castpool");
        int x = tg_input(&t, "x", IR_DT_I8, TG_INTS(1, 2, 4, 4));
        int c = tg_node(&t, IR_OP_Cast, "c", 1, &x, 1);
        tg_int(&t, IR_A_to, 1);
        tg_output(&t, tg_node(&t, IR_OP_GlobalAveragePool, "gap", 1, &c, 1));
        if (second)
            tg_output(&t, tg_node(&t, IR_OP_Relu, "r", 1, &c, 1));
        LoopProgram *p = planned(&t);
        int has_cast_buf = 0;
        for (int i = 0; i < p->n_bufs; i++)
            has_cast_buf |= strcmp(p->bufs[i].name, "c_out0") == 0;
        assert_int_equal(has_cast_buf, second);
        assert_int_equal(p->n_kernels, second ? 3 : 1);
        if (!second)
            assert_int_equal(p->workspace_bytes, 0);
        loop_program_free(p);
        ir_graph_free(t.g);
    }
}

static void test_plan_diamond(void **state)
{
    (void)state;
    /* a = T(x); b = T(a); c = T(a); d = b + c; y = T(d).  a, b, c are live
     * together (three slots); d takes b's slot in place (b dies at the Add) */
    TG t;
    tg_start(&t, "diamond");
    int x = tg_input(&t, "x", IR_DT_F32, TG_INTS(8, 8));
    int a = tg_node(&t, IR_OP_Transpose, "a", 1, &x, 1);
    int b = tg_node(&t, IR_OP_Transpose, "b", 1, &a, 1);
    int c = tg_node(&t, IR_OP_Transpose, "c", 1, &a, 1);
    int d = tg_node(&t, IR_OP_Add, "d", 2, (int[]){ b, c }, 1);
    tg_output(&t, tg_node(&t, IR_OP_Transpose, "y", 1, &d, 1));
    LoopProgram *p = planned(&t);
    int64_t oa = p->bufs[buf_of(p, "a_out0")].offset, ob = p->bufs[buf_of(p, "b_out0")].offset,
            oc = p->bufs[buf_of(p, "c_out0")].offset, od = p->bufs[buf_of(p, "d_out0")].offset;
    assert_true(oa != ob && ob != oc && oa != oc);
    assert_int_equal(od, ob);
    assert_int_equal(p->workspace_bytes, 3 * 256);
    assert_int_equal(low_workspace_lower_bound(p), 3 * 256);
    loop_program_free(p);
    ir_graph_free(t.g);
}

static void test_plan_in_place_and_views(void **state)
{
    (void)state;
    /* t = T(x) [4,8]; r = Relu(t) in place; v = Reshape(r) a view (no kernel,
     * same slot); e = Exp(v) in place; y = T(e).  Different sizes: the
     * largest first. */
    TG t;
    tg_start(&t, "inplace");
    int x = tg_input(&t, "x", IR_DT_F32, TG_INTS(4, 8));
    int tt = tg_node(&t, IR_OP_Transpose, "t", 1, &x, 1);
    int r = tg_node(&t, IR_OP_Relu, "r", 1, &tt, 1);
    int v = tg_node(&t, IR_OP_Reshape, "v", 2, (int[]){ r, tg_const(&t, "s", IR_DT_I64, TG_INTS(1), (double[]){ -1 }) }, 1);
    int e = tg_node(&t, IR_OP_Exp, "e", 1, &v, 1);
    int big = tg_node(&t, IR_OP_Tile, "big", 2, (int[]){ e, tg_const(&t, "rep", IR_DT_I64, TG_INTS(1), (double[]){ 4 }) }, 1);
    tg_output(&t, tg_node(&t, IR_OP_Neg, "y", 1, &big, 1));
    LoopProgram *p = planned(&t);
    int bt = buf_of(p, "t_out0"), br = buf_of(p, "r_out0"), bv = buf_of(p, "v_out0"), be = buf_of(p, "e_out0"),
        bb = buf_of(p, "big_out0");
    assert_int_equal(p->bufs[bv].alias_of, br);
    assert_int_equal(p->n_kernels, 5);                 /* T, Relu, Exp, Tile, Neg: no Reshape kernel */
    assert_int_equal(p->bufs[br].offset, p->bufs[bt].offset);
    assert_int_equal(p->bufs[bv].offset, p->bufs[bt].offset);
    assert_int_equal(p->bufs[be].offset, p->bufs[bt].offset);
    /* the 512-byte Tile result was placed first, at 0; the 128-byte slot after it */
    assert_int_equal(p->bufs[bb].offset, 0);
    assert_int_equal(p->bufs[bt].offset, 512);
    assert_int_equal(p->workspace_bytes, 640);
    loop_program_free(p);
    ir_graph_free(t.g);
}


/* A Constant too large to be propagated becomes a weight (no kernel). */
static void test_large_constant(void **state)
{
    (void)state;
    TG t;
    tg_start(&t, "bigconst");
    IrArray *v = ir_alloc(t.g, sizeof *v);
    v->dtype = IR_DT_F32;
    v->shape = tg_shape(TG_INTS(300, 300));
    v->data = ir_alloc(t.g, 300 * 300 * 4);
    ((float *)v->data)[12345] = 2.5f;
    int c = tg_node(&t, IR_OP_Constant, "k", 0, NULL, 1);
    tg_tensor_attr(&t, IR_A_value, v);
    int x = tg_input(&t, "x", IR_DT_F32, TG_INTS(300));
    tg_output(&t, tg_node(&t, IR_OP_Add, "add", 2, (int[]){ c, x }, 1));
    LoopProgram *p = lower(&t);
    assert_int_equal(p->n_kernels, 1);
    assert_string_equal(p->kernels[0].name, "add");
    const LoopBuf *kb = &p->bufs[buf_of(p, "k_out0")];
    assert_int_equal(kb->storage, LOOP_ST_CONST);
    assert_ptr_equal(kb->data, ir_attr(&t.g->nodes[0], IR_A_value)->v.tensor->data);   /* not copied again */
    assert_true(((const float *)kb->data)[12345] == 2.5f);
    assert_int_equal(kb->bytes, 300 * 300 * 4);
    loop_program_free(p);
    ir_graph_free(t.g);
}

/* ---------------------------------------------------------- diagnostics */

static void test_unsupported(void **state)
{
    (void)state;
    /* Shape is always computed at compile time; pretend it was not */
    TG t;
    tg_start(&t, "unsup");
    int x = tg_input(&t, "x", IR_DT_F32, TG_INTS(2, 3));
    int s = tg_node(&t, IR_OP_Shape, "shape_of_x", 1, &x, 1);
    tg_output(&t, s);
    assert_int_equal(pass_infer(t.g, &t.d), 0);
    t.g->tensors[s].v.data = NULL;
    UtilDiag d;
    util_diag_init(&d);
    assert_null(low_graph(t.g, NULL, &d));
    assert_true(d.has_error);
    assert_non_null(strstr(d.msg, "operator Shape (node 'shape_of_x') is not supported on target cpu yet"));
    LowSchedule gpu = tgt_cpu_schedule(0);
    gpu.target = "gpu";
    util_diag_init(&d);
    assert_null(low_graph(t.g, &gpu, &d));
    assert_non_null(strstr(d.msg, "is not supported on target gpu yet"));
    ir_graph_free(t.g);
    /* Dropout whose training_mode is only known at run time (a constant true
     * one is rejected by inference already) */
    tg_start(&t, "train");
    x = tg_input(&t, "x", IR_DT_F32, TG_INTS(4));
    int in[3] = { x, tg_const(&t, "r", IR_DT_F32, 0, NULL, (double[]){ 0.5 }),
                  tg_input(&t, "tm", IR_DT_BOOL, 0, NULL) };
    tg_output(&t, tg_node(&t, IR_OP_Dropout, "drop", 3, in, 1));
    assert_int_equal(pass_infer(t.g, &t.d), 0);
    util_diag_init(&d);
    assert_null(low_graph(t.g, NULL, &d));
    assert_non_null(strstr(d.msg, "node 'drop' (Dropout): training mode is not supported"));
    ir_graph_free(t.g);
}

/* Graph outputs that are inputs, constants or listed twice get copy kernels. */
static void test_output_copies(void **state)
{
    (void)state;
    TG t;
    tg_start(&t, "copies");
    int x = tg_input(&t, "x", IR_DT_F32, TG_INTS(3));
    int r = tg_node(&t, IR_OP_Relu, "r", 1, &x, 1);
    tg_output(&t, r);
    tg_output(&t, r);
    tg_output(&t, x);
    tg_output(&t, tg_const(&t, "k", IR_DT_F32, TG_INTS(2), (double[]){ 1, 2 }));
    LoopProgram *p = lower(&t);
    assert_int_equal(p->n_kernels, 4);
    assert_string_equal(p->kernels[0].name, "r");
    assert_string_equal(p->kernels[1].name, "copy_output_1");
    assert_string_equal(p->kernels[2].name, "copy_output_2");
    assert_string_equal(p->kernels[3].name, "copy_output_3");
    int outs = 0;
    for (int i = 0; i < p->n_bufs; i++)
        outs += p->bufs[i].storage == LOOP_ST_OUTPUT;
    assert_int_equal(outs, 4);
    loop_program_free(p);
    ir_graph_free(t.g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden_relu),
        cmocka_unit_test(test_golden_broadcast_add),
        cmocka_unit_test(test_golden_reducesum),
        cmocka_unit_test(test_golden_conv),
        cmocka_unit_test(test_golden_transpose),
        cmocka_unit_test(test_schedule),
        cmocka_unit_test(test_schedule_narrow),
        cmocka_unit_test(test_schedule_weight_bound),
        cmocka_unit_test(test_schedule_scatter),
        cmocka_unit_test(test_plan_chain),
        cmocka_unit_test(test_plan_diamond),
        cmocka_unit_test(test_cast_into_pool),
        cmocka_unit_test(test_plan_in_place_and_views),
        cmocka_unit_test(test_large_constant),
        cmocka_unit_test(test_unsupported),
        cmocka_unit_test(test_output_copies),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
