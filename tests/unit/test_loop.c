/* tests/unit/test_loop.c — the loop IR: builders, golden text of the
 * printer, the simplifier's rules one by one, and the verifier's
 * rejections. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/loop/loop.h"

static IrShape shape(int rank, const int64_t *dims)
{
    IrShape s = { .rank = rank };
    memcpy(s.dims, dims, (size_t)rank * sizeof *dims);
    return s;
}

static int buf(LoopProgram *p, const char *name, LoopStorage st, int rank, const int64_t *dims)
{
    IrShape s = shape(rank, dims);
    int b = loop_add_buf(p, name, IR_DT_F32, &s, st);
    assert_true(b >= 0);
    return b;
}

/* The printed program, malloc'd. */
static char *text(const LoopProgram *p)
{
    UtilBuf b;
    util_buf_init(&b);
    loop_print(p, &b);
    util_buf_put(&b, "", 1);
    assert_false(b.oom);
    return b.data;
}

static void assert_text(const LoopProgram *p, const char *want)
{
    char *got = text(p);
    if (strcmp(got, want) != 0)
        print_error("got:\n%s\nwant:\n%s\n", got, want);
    assert_string_equal(got, want);
    free(got);
}

static void assert_expr(const LoopProgram *p, const LoopExpr *e, const char *want)
{
    UtilBuf b;
    util_buf_init(&b);
    loop_print_expr(p, e, &b);
    util_buf_put(&b, "", 1);
    assert_string_equal(b.data, want);
    util_buf_free(&b);
}

static void assert_verifies(const LoopProgram *p)
{
    UtilDiag d;
    util_diag_init(&d);
    int r = loop_verify(p, &d);
    if (r != 0)
        print_error("%s\n", d.msg);
    assert_int_equal(r, 0);
}

static void add(LoopProgram *p, LoopStmt *block, LoopStmt *s) { assert_int_equal(loop_block_add(p, block, s), 0); }

/* ------------------------------------------------------------ program */

static void test_buffers_and_names(void **state)
{
    (void)state;
    LoopProgram *p = loop_program_new("my model");
    assert_string_equal(p->name, "my_model");
    int64_t d[] = { 1, 3, 32, 32 };
    int x = buf(p, "x", LOOP_ST_INPUT, 4, d);
    const LoopBuf *b = &p->bufs[x];
    assert_int_equal(b->strides[0], 3072);
    assert_int_equal(b->strides[1], 1024);
    assert_int_equal(b->strides[2], 32);
    assert_int_equal(b->strides[3], 1);
    assert_int_equal(b->bytes, 3 * 32 * 32 * 4);
    assert_int_equal(b->index, -1);
    assert_int_equal(b->alias_of, -1);
    assert_int_equal(b->tensor, -1);
    assert_int_equal(b->partition, 0);
    /* names are made unique and C-safe */
    int x2 = buf(p, "x", LOOP_ST_WORKSPACE, 1, d);
    int x3 = buf(p, "x", LOOP_ST_WORKSPACE, 1, d);
    int odd = buf(p, "conv/out:0", LOOP_ST_OUTPUT, 1, d);
    assert_string_equal(p->bufs[x2].name, "x_1");
    assert_string_equal(p->bufs[x3].name, "x_2");
    assert_string_equal(p->bufs[odd].name, "conv_out_0");
    assert_int_equal(loop_add_var(p, "i", IR_DT_I64), 0);
    assert_int_equal(loop_add_var(p, "i", IR_DT_I64), 1);
    assert_string_equal(p->vars[0].name, "i");
    assert_string_equal(p->vars[1].name, "i_1");
    /* rank-0 buffers have one element; bad shapes are refused */
    IrShape s0 = { .rank = 0 };
    int sc = loop_add_buf(p, "s", IR_DT_F64, &s0, LOOP_ST_LOCAL);
    assert_int_equal(p->bufs[sc].bytes, 8);
    int64_t neg[] = { 2, -1 };
    IrShape sn = shape(2, neg);
    assert_int_equal(loop_add_buf(p, "bad", IR_DT_F32, &sn, LOOP_ST_LOCAL), -1);
    int64_t huge[] = { (int64_t)1 << 40, 1 << 20 };
    IrShape sh = shape(2, huge);
    assert_int_equal(loop_add_buf(p, "huge", IR_DT_F32, &sh, LOOP_ST_LOCAL), -1);
    /* loop_index: zero-index (broadcast) terms and *1 are left out */
    int i = 0, j = 1;
    LoopExpr *idx[4] = { loop_int(p, 0), loop_var(p, i), loop_var(p, j), loop_int(p, 5) };
    assert_expr(p, loop_index(p, x, idx), "i*1024 + i_1*32 + 5");
    /* copies are deep and equal */
    LoopExpr *e = loop_bin(p, LOOP_ADD, loop_var(p, i), loop_int(p, 1));
    LoopExpr *c = loop_expr_copy(p, e);
    assert_true(c != e && c->u.bin.a != e->u.bin.a);
    assert_true(loop_expr_equal(c, e));
    c->u.bin.b->u.i = 2;
    assert_false(loop_expr_equal(c, e));
    loop_program_free(p);
}

/* out[i0, i1] = a[i0, i1] + b[0, i1], b broadcast along dim 0 */
static void test_print_add_broadcast(void **state)
{
    (void)state;
    LoopProgram *p = loop_program_new("add_bcast");
    int64_t d23[] = { 2, 3 }, d13[] = { 1, 3 };
    int a = buf(p, "a", LOOP_ST_INPUT, 2, d23), b = buf(p, "b", LOOP_ST_INPUT, 2, d13);
    int out = buf(p, "out", LOOP_ST_OUTPUT, 2, d23);
    p->bufs[a].index = 0;
    p->bufs[b].index = 1;
    p->bufs[out].index = 0;
    p->n_inputs = 2;
    p->n_outputs = 1;
    int i0 = loop_add_var(p, "i0", IR_DT_I64), i1 = loop_add_var(p, "i1", IR_DT_I64);
    LoopExpr *ia[] = { loop_var(p, i0), loop_var(p, i1) };
    LoopExpr *ib[] = { loop_int(p, 0), loop_var(p, i1) };
    LoopExpr *io[] = { loop_var(p, i0), loop_var(p, i1) };
    LoopExpr *sum = loop_bin(p, LOOP_ADD, loop_load(p, a, loop_index(p, a, ia)), loop_load(p, b, loop_index(p, b, ib)));
    LoopStmt *st = loop_store(p, out, loop_index(p, out, io), sum);
    LoopStmt *inner = loop_for(p, i1, loop_int(p, 3), LOOP_VECTORIZED, st);
    inner->u.loop.factor = 4;
    LoopStmt *body = loop_block(p);
    add(p, body, loop_for(p, i0, loop_int(p, 2), LOOP_PARALLEL, inner));
    assert_int_equal(loop_add_kernel(p, "add", body), 0);
    assert_verifies(p);
    assert_text(p,
        "program add_bcast: 2 inputs, 1 outputs, workspace 0 bytes (align 64)\n"
        "buf a: input float32[2,3] strides [3,1] bytes 24 index 0\n"
        "buf b: input float32[1,3] strides [3,1] bytes 12 index 1\n"
        "buf out: output float32[2,3] strides [3,1] bytes 24 index 0\n"
        "\n"
        "kernel add {\n"
        "  for i0 in 0..2 parallel {\n"
        "    for i1 in 0..3 vectorized(4) {\n"
        "      out[i0*3 + i1] = a[i0*3 + i1] + b[i1]\n"
        "    }\n"
        "  }\n"
        "}\n");
    loop_program_free(p);
}

/* A 3x3 convolution + bias + ReLU: out[0,o,y,x] = max(bias[o] + sum
 * x[0,c,y+ky,x+kx] * w[o,c,ky,kx], 0), with a mutable accumulator. */
static LoopProgram *conv_program(void)
{
    static const float wdata[3 * 2 * 3 * 3] = { 0 }, bdata[3] = { 0 };
    LoopProgram *p = loop_program_new("convnet");
    int64_t dx[] = { 1, 2, 5, 5 }, dw[] = { 3, 2, 3, 3 }, db[] = { 3 }, dout[] = { 1, 3, 3, 3 };
    int x = buf(p, "x", LOOP_ST_INPUT, 4, dx), w = buf(p, "w", LOOP_ST_CONST, 4, dw);
    int bias = buf(p, "bias", LOOP_ST_CONST, 1, db);
    int out = buf(p, "conv1", LOOP_ST_WORKSPACE, 4, dout);
    p->bufs[w].data = wdata;
    p->bufs[bias].data = bdata;
    p->bufs[out].offset = 128;
    p->workspace_bytes = 256;
    p->n_inputs = 1;
    p->bufs[x].index = 0;
    int v[6];
    for (int k = 0; k < 6; k++) {
        char nm[4] = { 'i', (char)('0' + k), 0 };
        v[k] = loop_add_var(p, nm, IR_DT_I64);
    }
    int acc = loop_add_var(p, "acc", IR_DT_F32);
#define V(k) loop_var(p, v[k])
    LoopExpr *ix[] = { loop_int(p, 0), V(3), loop_bin(p, LOOP_ADD, V(1), V(4)), loop_bin(p, LOOP_ADD, V(2), V(5)) };
    LoopExpr *iw[] = { V(0), V(3), V(4), V(5) };
    LoopExpr *prod = loop_bin(p, LOOP_MUL, loop_load(p, x, loop_index(p, x, ix)), loop_load(p, w, loop_index(p, w, iw)));
    LoopStmt *upd = loop_assign(p, acc, loop_bin(p, LOOP_ADD, loop_var(p, acc), prod));
    LoopStmt *kw = loop_for(p, v[5], loop_int(p, 3), LOOP_UNROLLED, upd);
    LoopStmt *kh = loop_for(p, v[4], loop_int(p, 3), LOOP_SERIAL, kw);
    LoopStmt *ic = loop_for(p, v[3], loop_int(p, 2), LOOP_SERIAL, kh);
    LoopExpr *ib[] = { V(0) };
    LoopExpr *io[] = { loop_int(p, 0), V(0), V(1), V(2) };
    LoopStmt *pix = loop_block(p);
    add(p, pix, loop_let(p, acc, loop_load(p, bias, loop_index(p, bias, ib)), 1));
    add(p, pix, ic);
    add(p, pix, loop_store(p, out, loop_index(p, out, io),
                           loop_bin(p, LOOP_MAX, loop_var(p, acc), loop_float(p, IR_DT_F32, 0.0))));
    LoopStmt *ow = loop_for(p, v[2], loop_int(p, 3), LOOP_SERIAL, pix);
    LoopStmt *oh = loop_for(p, v[1], loop_int(p, 3), LOOP_SERIAL, ow);
    LoopStmt *oc = loop_for(p, v[0], loop_int(p, 3), LOOP_PARALLEL, oh);
#undef V
    assert_int_equal(loop_add_kernel(p, "conv1", oc), 0);
    p->kernels[0].first_node = 4;
    p->kernels[0].n_nodes = 2;
    p->kernels[0].flops = 2 * 27 * 18 + 27;
    return p;
}

static const char conv_header[] =
    "program convnet: 1 inputs, 0 outputs, workspace 256 bytes (align 64)\n"
    "buf x: input float32[1,2,5,5] strides [50,25,5,1] bytes 200 index 0\n"
    "buf w: const float32[3,2,3,3] strides [18,9,3,1] bytes 216\n"
    "buf bias: const float32[3] strides [1] bytes 12\n"
    "buf conv1: workspace float32[1,3,3,3] strides [27,9,3,1] offset 128 bytes 108\n"
    "\n"
    "kernel conv1 (nodes 4..5, 999 flops) {\n"
    "  for i0 in 0..3 parallel {\n"
    "    for i1 in 0..3 {\n"
    "      for i2 in 0..3 {\n"
    "        acc = bias[i0] : float32 (mutable)\n"
    "        for i3 in 0..2 {\n"
    "          for i4 in 0..3 {\n"
    "            for i5 in 0..3 unrolled {\n";
static const char conv_footer[] =
    "            }\n"
    "          }\n"
    "        }\n"
    "        conv1[i0*9 + i1*3 + i2] = max(acc, 0.0f)\n"
    "      }\n"
    "    }\n"
    "  }\n"
    "}\n";

static void test_print_conv(void **state)
{
    (void)state;
    LoopProgram *p = conv_program();
    assert_verifies(p);
    char want[4096];
    snprintf(want, sizeof want, "%s%s%s", conv_header,
             "              acc = acc + x[i3*25 + (i1 + i4)*5 + (i2 + i5)] * w[i0*18 + i3*9 + i4*3 + i5]\n",
             conv_footer);
    assert_text(p, want);
    /* the simplifier distributes the products over the sums and keeps the rest */
    loop_simplify(p);
    assert_verifies(p);
    snprintf(want, sizeof want, "%s%s%s", conv_header,
             "              acc = acc + x[i3*25 + i1*5 + i4*5 + i2 + i5] * w[i0*18 + i3*9 + i4*3 + i5]\n",
             conv_footer);
    assert_text(p, want);
    /* a second run changes nothing */
    loop_simplify(p);
    assert_text(p, want);
    loop_program_free(p);
}

static void test_print_syntax(void **state)
{
    (void)state;
    LoopProgram *p = loop_program_new("s");
    int u = loop_add_var(p, "u", IR_DT_I64), f = loop_add_var(p, "f", IR_DT_F32);
    int d = loop_add_var(p, "d", IR_DT_F64), h = loop_add_var(p, "h", IR_DT_F16);
    struct { LoopExpr *e; const char *want; } cases[] = {
        { loop_float(p, IR_DT_F32, 0.1), "0.1f" },
        { loop_float(p, IR_DT_F32, 1e-5), "1e-05f" },
        { loop_float(p, IR_DT_F64, 2.0), "2.0" },
        { loop_float(p, IR_DT_F64, 0.1), "0.1" },
        { loop_float(p, IR_DT_F16, 0.1), "0.099975586h" },
        { loop_float(p, IR_DT_F32, -1.0 / 0.0), "-inf" "f" },
        { loop_bin(p, LOOP_SUB, loop_var(p, u), loop_bin(p, LOOP_SUB, loop_var(p, u), loop_int(p, 1))), "u - (u - 1)" },
        { loop_bin(p, LOOP_SUB, loop_bin(p, LOOP_SUB, loop_var(p, u), loop_var(p, u)), loop_int(p, 1)), "u - u - 1" },
        { loop_bin(p, LOOP_MUL, loop_bin(p, LOOP_ADD, loop_var(p, u), loop_int(p, 1)), loop_int(p, -2)), "(u + 1)*-2" },
        { loop_bin(p, LOOP_TDIV, loop_var(p, u), loop_int(p, 3)), "tdiv(u, 3)" },
        { loop_bin(p, LOOP_TMOD, loop_var(p, u), loop_int(p, 3)), "tmod(u, 3)" },
        { loop_bin(p, LOOP_AND, loop_bin(p, LOOP_LT, loop_var(p, u), loop_int(p, 3)),
                   loop_bin(p, LOOP_NE, loop_var(p, u), loop_int(p, 0))), "u < 3 & u != 0" },
        { loop_select(p, loop_call(p, LOOP_I_isnan, 1, (LoopExpr *[]){ loop_var(p, f) }), loop_float(p, IR_DT_F32, 0),
                      loop_un(p, LOOP_NEG, loop_var(p, f))), "isnan(f) ? 0.0f : -f" },
        { loop_call(p, LOOP_I_fma, 3, (LoopExpr *[]){ loop_var(p, d), loop_var(p, d), loop_float(p, IR_DT_F64, 1) }),
          "fma(d, d, 1.0)" },
        { loop_cast(p, IR_DT_F32, loop_var(p, h)), "float32(h)" },
        { loop_un(p, LOOP_NOT, loop_bin(p, LOOP_EQ, loop_var(p, u), loop_int(p, 2))), "!(u == 2)" },
        { loop_un(p, LOOP_NOT, loop_var(p, u)), "~u" },
        { loop_un(p, LOOP_ABS, loop_var(p, u)), "abs(u)" },
        { loop_call(p, LOOP_I_round_even, 1, (LoopExpr *[]){ loop_var(p, f) }), "round_even(f)" },
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++)
        assert_expr(p, cases[k].e, cases[k].want);
    assert_string_equal(loop_for_kind_name(LOOP_GPU_THREAD_Y), "gpu.thread.y");
    assert_string_equal(loop_storage_name(LOOP_ST_LOCAL), "local");
    assert_string_equal(loop_intrinsic_name(LOOP_I_erf), "erf");
    loop_program_free(p);
}

/* GPU and HLS loop kinds, if/else and barrier print as documented. */
static void test_print_gpu_hls(void **state)
{
    (void)state;
    LoopProgram *p = loop_program_new("g");
    int64_t d[] = { 64 };
    int o = buf(p, "o", LOOP_ST_OUTPUT, 1, d), s = buf(p, "smem", LOOP_ST_LOCAL, 1, d);
    p->bufs[s].partition = 4;
    int bx = loop_add_var(p, "bx", IR_DT_I64), tx = loop_add_var(p, "tx", IR_DT_I64);
    int k = loop_add_var(p, "k", IR_DT_I64);
    LoopExpr *gi = loop_bin(p, LOOP_ADD, loop_bin(p, LOOP_MUL, loop_var(p, bx), loop_int(p, 16)), loop_var(p, tx));
    LoopStmt *tb = loop_block(p);
    add(p, tb, loop_store(p, s, loop_var(p, tx), loop_float(p, IR_DT_F32, 1.5)));
    add(p, tb, loop_barrier(p));
    add(p, tb, loop_if(p, loop_bin(p, LOOP_LT, gi, loop_int(p, 60)),
                       loop_store(p, o, loop_expr_copy(p, gi), loop_load(p, s, loop_var(p, tx))),
                       loop_store(p, o, loop_int(p, 0), loop_float(p, IR_DT_F32, 0))));
    LoopStmt *gpu = loop_for(p, bx, loop_int(p, 4), LOOP_GPU_BLOCK_X,
                             loop_for(p, tx, loop_int(p, 16), LOOP_GPU_THREAD_X, tb));
    assert_int_equal(loop_add_kernel(p, "gpu", gpu), 0);
    LoopStmt *pl = loop_for(p, k, loop_int(p, 64), LOOP_HLS_PIPELINE,
                            loop_store(p, o, loop_var(p, k), loop_float(p, IR_DT_F32, 2)));
    pl->u.loop.factor = 1;
    assert_int_equal(loop_add_kernel(p, "hls", pl), 1);
    assert_verifies(p);
    assert_text(p,
        "program g: 0 inputs, 0 outputs, workspace 0 bytes (align 64)\n"
        "buf o: output float32[64] strides [1] bytes 256\n"
        "buf smem: local float32[64] strides [1] bytes 256 partition 4\n"
        "\n"
        "kernel gpu {\n"
        "  for bx in 0..4 gpu.block.x {\n"
        "    for tx in 0..16 gpu.thread.x {\n"
        "      smem[tx] = 1.5f\n"
        "      barrier\n"
        "      if bx*16 + tx < 60 {\n"
        "        o[bx*16 + tx] = smem[tx]\n"
        "      } else {\n"
        "        o[0] = 0.0f\n"
        "      }\n"
        "    }\n"
        "  }\n"
        "}\n"
        "\n"
        "kernel hls {\n"
        "  for k in 0..64 hls.pipeline(ii=1) {\n"
        "    o[k] = 2.0f\n"
        "  }\n"
        "}\n");
    loop_program_free(p);
}

/* ---------------------------------------------------------- simplifier */

/* A program whose kernel binds i in [0,4), j in [0,8), n in [0, sz[0]) and
 * u = sz[1] (unknown range), so loop_simplify_expr knows their ranges. */
typedef struct Fix { LoopProgram *p; int i, j, n, u, one, f; } Fix;

static Fix fixture(void)
{
    Fix x;
    LoopProgram *p = x.p = loop_program_new("simp");
    int64_t d[] = { 2 };
    IrShape s = shape(1, d);
    int sz = loop_add_buf(p, "sz", IR_DT_I64, &s, LOOP_ST_INPUT);
    x.i = loop_add_var(p, "i", IR_DT_I64);
    x.j = loop_add_var(p, "j", IR_DT_I64);
    x.n = loop_add_var(p, "n", IR_DT_I64);
    x.u = loop_add_var(p, "u", IR_DT_I64);
    x.one = loop_add_var(p, "one", IR_DT_I64);
    x.f = loop_add_var(p, "f", IR_DT_F32);
    LoopStmt *in = loop_block(p);
    add(p, in, loop_let(p, x.u, loop_load(p, sz, loop_int(p, 1)), 0));
    add(p, in, loop_let(p, x.f, loop_float(p, IR_DT_F32, 1), 0));
    LoopStmt *k = loop_for(p, x.n, loop_load(p, sz, loop_int(p, 0)), LOOP_SERIAL,
                           loop_for(p, x.one, loop_int(p, 1), LOOP_SERIAL, in));
    LoopStmt *body = loop_for(p, x.i, loop_int(p, 4), LOOP_SERIAL, loop_for(p, x.j, loop_int(p, 8), LOOP_SERIAL, k));
    assert_int_equal(loop_add_kernel(p, "k", body), 0);
    return x;
}

#define I(v) loop_int(p, v)
#define VAR(v) loop_var(p, x.v)
#define B(op, a, b) loop_bin(p, LOOP_##op, a, b)

static void check_simplify(LoopProgram *p, LoopExpr *e, const char *before, const char *after)
{
    assert_expr(p, e, before);
    assert_expr(p, loop_simplify_expr(p, e), after);
}

static void test_simplify_fold(void **state)
{
    (void)state;
    Fix x = fixture();
    LoopProgram *p = x.p;
    struct { LoopExpr *e; const char *before, *after; } c[] = {
        /* constant folding, floor vs truncating division */
        { B(ADD, I(2), B(MUL, I(3), I(4))), "2 + 3*4", "14" },
        { B(DIV, I(7), I(-2)), "7 / -2", "-4" },
        { B(MOD, I(7), I(-2)), "7 % -2", "-1" },
        { B(TDIV, I(7), I(-2)), "tdiv(7, -2)", "-3" },
        { B(TMOD, I(7), I(-2)), "tmod(7, -2)", "1" },
        { B(DIV, I(-7), I(2)), "-7 / 2", "-4" },
        { B(MOD, I(-7), I(2)), "-7 % 2", "1" },
        { B(TMOD, I(-7), I(2)), "tmod(-7, 2)", "-1" },
        { B(MIN, I(3), I(-1)), "min(3, -1)", "-1" },
        { B(SHL, I(3), I(2)), "3 << 2", "12" },
        { B(SHR, I(-7), I(1)), "-7 >> 1", "-4" },
        { B(LT, I(2), I(3)), "2 < 3", "true" },
        { B(XOR, I(6), I(3)), "6 ^ 3", "5" },
        /* never folded: division by zero, int64 overflow, shifts out of range */
        { B(DIV, I(5), I(0)), "5 / 0", "5 / 0" },
        { B(MOD, VAR(u), I(0)), "u % 0", "u % 0" },
        { B(ADD, I(INT64_MAX), I(1)), "9223372036854775807 + 1", "9223372036854775807 + 1" },
        { B(DIV, I(INT64_MIN), I(-1)), "-9223372036854775808 / -1", "-9223372036854775808 / -1" },
        { B(MUL, I(INT64_MAX / 2 + 1), I(2)), "4611686018427387904*2", "4611686018427387904*2" },
        { B(SHL, I(1), I(63)), "1 << 63", "1 << 63" },
        { loop_un(p, LOOP_NEG, I(INT64_MIN)), "-(-9223372036854775808)", "-(-9223372036854775808)" },
    };
    for (size_t k = 0; k < sizeof c / sizeof *c; k++)
        check_simplify(p, c[k].e, c[k].before, c[k].after);
    loop_program_free(p);
}

static void test_simplify_identities(void **state)
{
    (void)state;
    Fix x = fixture();
    LoopProgram *p = x.p;
    struct { LoopExpr *e; const char *before, *after; } c[] = {
        { B(ADD, VAR(u), I(0)), "u + 0", "u" },
        { B(MUL, VAR(u), I(1)), "u*1", "u" },
        { B(MUL, VAR(u), I(0)), "u*0", "0" },
        { B(SUB, VAR(u), VAR(u)), "u - u", "0" },
        { B(DIV, VAR(u), I(1)), "u / 1", "u" },
        { B(MOD, VAR(u), I(1)), "u % 1", "0" },
        { B(SHL, VAR(u), I(0)), "u << 0", "u" },
        { B(OR, VAR(u), I(0)), "u | 0", "u" },
        { B(AND, VAR(u), I(0)), "u & 0", "0" },
        { loop_un(p, LOOP_NEG, loop_un(p, LOOP_NEG, VAR(u))), "-(-u)", "u" },
        /* reassociation of constants, collection of like terms */
        { B(ADD, B(ADD, VAR(u), I(3)), I(4)), "u + 3 + 4", "u + 7" },
        { B(ADD, B(SUB, VAR(u), I(3)), I(1)), "u - 3 + 1", "u - 2" },
        { B(ADD, I(2), VAR(u)), "2 + u", "u + 2" },
        { B(MUL, B(MUL, VAR(u), I(4)), I(8)), "u*4*8", "u*32" },
        { B(MUL, B(ADD, VAR(u), I(1)), I(4)), "(u + 1)*4", "u*4 + 4" },
        { B(SUB, B(ADD, VAR(u), VAR(i)), B(ADD, VAR(i), I(2))), "u + i - (i + 2)", "u - 2" },
        { B(ADD, B(MUL, VAR(u), I(2)), B(MUL, I(3), VAR(u))), "u*2 + 3*u", "u*5" },
        { B(SUB, I(5), VAR(u)), "5 - u", "-u + 5" },
        { B(MIN, B(MIN, VAR(u), I(5)), I(3)), "min(min(u, 5), 3)", "min(u, 3)" },
        { B(MIN, VAR(u), VAR(u)), "min(u, u)", "u" },
        { B(MAX, I(3), VAR(u)), "max(3, u)", "max(u, 3)" },
        { loop_select(p, B(LT, I(1), I(2)), VAR(u), I(1)), "1 < 2 ? u : 1", "u" },
        { loop_select(p, B(LT, VAR(u), I(2)), VAR(i), VAR(i)), "u < 2 ? i : i", "i" },
        { B(XOR, B(LT, VAR(u), I(2)), B(EQ, I(1), I(1))), "u < 2 ^ 1 == 1", "!(u < 2)" },
        { B(AND, B(LT, VAR(u), I(2)), B(EQ, I(1), I(1))), "u < 2 & 1 == 1", "u < 2" },
        { B(OR, B(LT, VAR(u), I(2)), B(EQ, I(1), I(1))), "u < 2 | 1 == 1", "true" },
        { loop_cast(p, IR_DT_F32, I(3)), "float32(3)", "3.0f" },
        { loop_cast(p, IR_DT_I64, VAR(u)), "int64(u)", "u" },
        /* floats are not reassociated or folded: x + 0.0 is not x for -0.0 */
        { B(ADD, VAR(f), loop_float(p, IR_DT_F32, 0)), "f + 0.0f", "f + 0.0f" },
        { B(MUL, VAR(f), loop_float(p, IR_DT_F32, 0)), "f * 0.0f", "f * 0.0f" },
        { loop_un(p, LOOP_NEG, loop_un(p, LOOP_NEG, VAR(f))), "-(-f)", "f" },
        /* a quotient and remainder of the same kind put back together (any u: a ring identity);
         * an unflattened position flattened again, nested; not with mixed kinds or coefficients */
        { B(ADD, B(MUL, B(DIV, VAR(u), I(5)), I(5)), B(MOD, VAR(u), I(5))), "u / 5*5 + u % 5", "u" },
        { B(ADD, B(MUL, B(TDIV, VAR(u), I(5)), I(15)), B(MUL, B(TMOD, VAR(u), I(5)), I(3))),
          "tdiv(u, 5)*15 + tmod(u, 5)*3", "u*3" },
        { B(ADD, B(ADD, B(MUL, B(DIV, VAR(u), I(12)), I(12)), B(MUL, B(MOD, B(DIV, VAR(u), I(4)), I(3)), I(4))),
             B(MOD, VAR(u), I(4))),
          "u / 12*12 + u / 4 % 3*4 + u % 4", "u" },
        { B(ADD, B(MUL, B(TDIV, VAR(u), I(5)), I(5)), B(MOD, VAR(u), I(5))), "tdiv(u, 5)*5 + u % 5",
          "tdiv(u, 5)*5 + u % 5" },
        { B(ADD, B(MUL, B(DIV, VAR(u), I(5)), I(4)), B(MOD, VAR(u), I(5))), "u / 5*4 + u % 5", "u / 5*4 + u % 5" },
    };
    for (size_t k = 0; k < sizeof c / sizeof *c; k++)
        check_simplify(p, c[k].e, c[k].before, c[k].after);
    loop_program_free(p);
}

static void test_simplify_ranges(void **state)
{
    (void)state;
    Fix x = fixture();
    LoopProgram *p = x.p;
    struct { LoopExpr *e; const char *before, *after; } c[] = {
        /* i in [0,4), j in [0,8): (8i + j)/8 = i, (8i + j)%8 = j */
        { B(DIV, B(ADD, B(MUL, VAR(i), I(8)), VAR(j)), I(8)), "(i*8 + j) / 8", "i" },
        { B(MOD, B(ADD, B(MUL, VAR(i), I(8)), VAR(j)), I(8)), "(i*8 + j) % 8", "j" },
        { B(DIV, B(ADD, B(ADD, B(MUL, VAR(i), I(8)), VAR(j)), I(16)), I(8)), "(i*8 + j + 16) / 8", "i + 2" },
        { B(MOD, B(ADD, B(MUL, VAR(i), I(16)), B(ADD, VAR(j), I(3))), I(8)), "(i*16 + (j + 3)) % 8",
          "(i*16 + j + 3) % 8" },
        { B(DIV, VAR(j), I(8)), "j / 8", "0" },
        { B(MOD, VAR(j), I(8)), "j % 8", "j" },
        { B(MOD, B(MUL, VAR(u), I(8)), I(4)), "u*8 % 4", "u*8 % 4" },   /* u*8 may wrap */
        { B(DIV, B(ADD, B(MUL, VAR(u), I(8)), VAR(j)), I(8)), "(u*8 + j) / 8", "(u*8 + j) / 8" },
        { B(TDIV, B(ADD, B(MUL, VAR(i), I(8)), VAR(j)), I(8)), "tdiv(i*8 + j, 8)", "i" },
        { B(TMOD, VAR(n), I(8)), "tmod(n, 8)", "n % 8" },              /* n >= 0 */
        { B(TDIV, VAR(u), I(8)), "tdiv(u, 8)", "tdiv(u, 8)" },
        { B(DIV, B(DIV, VAR(u), I(4)), I(8)), "u / 4 / 8", "u / 32" },
        { B(MOD, B(MOD, VAR(u), I(8)), I(4)), "u % 8 % 4", "u % 4" },
        { B(MOD, B(MOD, VAR(u), I(8)), I(8)), "u % 8 % 8", "u % 8" },
        { B(DIV, B(MOD, VAR(u), I(8)), I(8)), "u % 8 / 8", "0" },
        /* comparisons and min/max decided by ranges */
        { B(LT, VAR(i), I(4)), "i < 4", "true" },
        { B(LT, VAR(i), I(3)), "i < 3", "i < 3" },
        { B(LE, VAR(j), I(7)), "j <= 7", "true" },
        { B(LT, B(ADD, VAR(i), VAR(j)), I(0)), "i + j < 0", "false" },
        { B(EQ, VAR(i), B(ADD, VAR(i), I(1))), "i == i + 1", "false" },
        { B(EQ, VAR(u), VAR(u)), "u == u", "true" },
        { B(LT, VAR(n), B(ADD, VAR(n), I(1))), "n < n + 1", "true" },
        { B(LT, VAR(u), B(ADD, VAR(u), I(1))), "u < u + 1", "u < u + 1" },  /* wraps at INT64_MAX */
        { B(MIN, VAR(i), I(10)), "min(i, 10)", "i" },
        { B(MAX, VAR(i), I(0)), "max(i, 0)", "i" },
        { B(MAX, VAR(i), VAR(j)), "max(i, j)", "max(i, j)" },
        { loop_un(p, LOOP_ABS, VAR(j)), "abs(j)", "j" },
        /* a loop of extent 1 pins its variable */
        { B(ADD, VAR(i), VAR(one)), "i + one", "i" },
    };
    for (size_t k = 0; k < sizeof c / sizeof *c; k++)
        check_simplify(p, c[k].e, c[k].before, c[k].after);
    loop_program_free(p);
}

/* Reference evaluation of an integer expression at i, j (one = 0); 0 when
 * undefined (division by zero). */
static int eval(const Fix *x, const LoopExpr *e, int64_t i, int64_t j, int64_t *r)
{
    int64_t a, b, c;
    switch (e->kind) {
    case LOOP_E_INT: *r = e->u.i; return 1;
    case LOOP_E_VAR: *r = e->u.var == x->i ? i : e->u.var == x->j ? j : 0; return 1;
    case LOOP_E_UN:
        if (!eval(x, e->u.un.a, i, j, &a))
            return 0;
        *r = e->u.un.op == LOOP_NEG ? -a : e->u.un.op == LOOP_ABS ? (a < 0 ? -a : a) : e->type == IR_DT_BOOL ? !a : ~a;
        return 1;
    case LOOP_E_SELECT:
        if (!eval(x, e->u.sel.cond, i, j, &c))
            return 0;
        return eval(x, c ? e->u.sel.a : e->u.sel.b, i, j, r);
    case LOOP_E_BIN:
        if (!eval(x, e->u.bin.a, i, j, &a) || !eval(x, e->u.bin.b, i, j, &b))
            return 0;
        switch (e->u.bin.op) {
        case LOOP_ADD: *r = a + b; return 1;
        case LOOP_SUB: *r = a - b; return 1;
        case LOOP_MUL: *r = a * b; return 1;
        case LOOP_DIV: case LOOP_MOD: case LOOP_TDIV: case LOOP_TMOD: {
            if (b == 0)
                return 0;
            int64_t q = a / b, m = a % b;
            if (e->u.bin.op == LOOP_TDIV || e->u.bin.op == LOOP_TMOD) {
                *r = e->u.bin.op == LOOP_TDIV ? q : m;
                return 1;
            }
            if (m != 0 && ((m < 0) != (b < 0)))   /* floor: step toward -inf */
                q -= 1, m += b;
            *r = e->u.bin.op == LOOP_DIV ? q : m;
            return 1;
        }
        case LOOP_MIN: *r = a < b ? a : b; return 1;
        case LOOP_MAX: *r = a > b ? a : b; return 1;
        case LOOP_LT: *r = a < b; return 1;
        case LOOP_LE: *r = a <= b; return 1;
        case LOOP_EQ: *r = a == b; return 1;
        case LOOP_NE: *r = a != b; return 1;
        default: fail();
        }
    default: fail();
    }
    return 0;
}

static uint64_t next_rand(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static LoopExpr *random_expr(Fix *x, uint64_t *s, int depth)
{
    LoopProgram *p = x->p;
    unsigned k = (unsigned)(next_rand(s) % (depth > 0 ? 16 : 4));
    static const LoopBinOp ops[] = { LOOP_ADD, LOOP_SUB, LOOP_MUL, LOOP_DIV, LOOP_MOD, LOOP_TDIV, LOOP_TMOD,
                                     LOOP_MIN, LOOP_MAX, LOOP_ADD, LOOP_MUL };
    switch (k) {
    case 0: return loop_var(p, x->i);
    case 1: return loop_var(p, x->j);
    case 2: return next_rand(s) % 4 ? loop_int(p, (int64_t)(next_rand(s) % 19) - 9) : loop_var(p, x->one);
    case 3: return loop_int(p, (int64_t)(next_rand(s) % 33));
    case 4: return loop_un(p, next_rand(s) % 2 ? LOOP_NEG : LOOP_ABS, random_expr(x, s, depth - 1));
    case 5: {
        static const LoopBinOp cmp[] = { LOOP_LT, LOOP_LE, LOOP_EQ, LOOP_NE };
        LoopExpr *c = loop_bin(p, cmp[next_rand(s) % 4], random_expr(x, s, depth - 1), random_expr(x, s, depth - 1));
        return loop_select(p, c, random_expr(x, s, depth - 1), random_expr(x, s, depth - 1));
    }
    default: {
        LoopExpr *a = random_expr(x, s, depth - 1);
        return loop_bin(p, ops[k - 5], a, random_expr(x, s, depth - 1));
    }
    }
}

/* Random index expressions over i in [0,4), j in [0,8) and small constants
 * keep their value at every point where the original is defined. */
static void test_simplify_random(void **state)
{
    (void)state;
    Fix x = fixture();
    uint64_t seed = 0x9e3779b97f4a7c15u;
    int changed = 0;
    for (int n = 0; n < 4000; n++) {
        LoopExpr *e = random_expr(&x, &seed, 4);
        int64_t before[4][8];
        int ok[4][8];
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 8; j++)
                ok[i][j] = eval(&x, e, i, j, &before[i][j]);
        UtilBuf b0;
        util_buf_init(&b0);
        loop_print_expr(x.p, e, &b0);
        util_buf_put(&b0, "", 1);
        LoopExpr *s = loop_simplify_expr(x.p, e);
        UtilBuf b1;
        util_buf_init(&b1);
        loop_print_expr(x.p, s, &b1);
        util_buf_put(&b1, "", 1);
        changed += strcmp(b0.data, b1.data) != 0;
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 8; j++) {
                int64_t after;
                if (!ok[i][j])
                    continue;
                if (!eval(&x, s, i, j, &after) || after != before[i][j]) {
                    print_error("%s -> %s at i=%d j=%d: %lld vs %lld\n", b0.data, b1.data, i, j,
                                (long long)before[i][j], (long long)after);
                    fail();
                }
            }
        util_buf_free(&b0);
        util_buf_free(&b1);
    }
    assert_true(changed > 1000);   /* the rules did fire */
    loop_program_free(x.p);
}

static void test_simplify_statements(void **state)
{
    (void)state;
    LoopProgram *p = loop_program_new("st");
    int64_t d[] = { 32 };
    int o = buf(p, "o", LOOP_ST_OUTPUT, 1, d);
    int i = loop_add_var(p, "i", IR_DT_I64), k = loop_add_var(p, "k", IR_DT_I64);
    int z = loop_add_var(p, "z", IR_DT_I64), c = loop_add_var(p, "c", IR_DT_I64);
    LoopStmt *body = loop_block(p);
    add(p, body, loop_let(p, c, loop_bin(p, LOOP_ADD, loop_int(p, 2), loop_int(p, 2)), 0));
    /* extent 1: the body with k = 0 */
    add(p, body, loop_for(p, k, loop_int(p, 1), LOOP_SERIAL,
                          loop_store(p, o, loop_bin(p, LOOP_ADD, loop_var(p, i), loop_var(p, k)),
                                     loop_float(p, IR_DT_F32, 1))));
    /* extent 0: gone */
    add(p, body, loop_for(p, z, loop_int(p, 0), LOOP_SERIAL, loop_store(p, o, loop_var(p, z), loop_float(p, IR_DT_F32, 2))));
    /* always true: the then branch; sometimes true: kept */
    add(p, body, loop_if(p, loop_bin(p, LOOP_LT, loop_var(p, i), loop_int(p, 8)),
                         loop_store(p, o, loop_bin(p, LOOP_MUL, loop_var(p, c), loop_var(p, i)), loop_float(p, IR_DT_F32, 3)),
                         loop_store(p, o, loop_int(p, 0), loop_float(p, IR_DT_F32, 4))));
    add(p, body, loop_if(p, loop_bin(p, LOOP_LT, loop_var(p, i), loop_int(p, 4)),
                         loop_store(p, o, loop_bin(p, LOOP_ADD, loop_var(p, i), loop_int(p, 8)), loop_float(p, IR_DT_F32, 5)),
                         NULL));
    /* an empty loop goes; a GPU loop of extent 1 stays (it shapes the launch) */
    int e = loop_add_var(p, "e", IR_DT_I64), g = loop_add_var(p, "g", IR_DT_I64);
    add(p, body, loop_for(p, e, loop_int(p, 5), LOOP_PARALLEL, loop_block(p)));
    LoopStmt *top = loop_block(p);
    add(p, top, loop_for(p, g, loop_int(p, 1), LOOP_GPU_BLOCK_X,
                         loop_store(p, o, loop_var(p, g), loop_float(p, IR_DT_F32, 6))));
    add(p, top, loop_for(p, i, loop_int(p, 8), LOOP_SERIAL, body));
    assert_int_equal(loop_add_kernel(p, "k", top), 0);
    assert_verifies(p);
    loop_simplify(p);
    assert_verifies(p);
    assert_text(p,
        "program st: 0 inputs, 0 outputs, workspace 0 bytes (align 64)\n"
        "buf o: output float32[32] strides [1] bytes 128\n"
        "\n"
        "kernel k {\n"
        "  for g in 0..1 gpu.block.x {\n"
        "    o[0] = 6.0f\n"
        "  }\n"
        "  for i in 0..8 {\n"
        "    o[i] = 1.0f\n"
        "    o[i*4] = 3.0f\n"
        "    if i < 4 {\n"
        "      o[i + 8] = 5.0f\n"
        "    }\n"
        "  }\n"
        "}\n");
    loop_program_free(p);
}

/* ------------------------------------------------------------ verifier */

typedef struct VFix { LoopProgram *p; int x, w, y, s, i, j, k, acc; } VFix;

static VFix vfix(void)
{
    static const float wdata[16] = { 0 };
    VFix v;
    LoopProgram *p = v.p = loop_program_new("v");
    int64_t d[] = { 16 };
    v.x = buf(p, "x", LOOP_ST_INPUT, 1, d);
    v.w = buf(p, "w", LOOP_ST_CONST, 1, d);
    v.y = buf(p, "y", LOOP_ST_OUTPUT, 1, d);
    v.s = buf(p, "s", LOOP_ST_LOCAL, 1, d);
    p->bufs[v.w].data = wdata;
    v.i = loop_add_var(p, "i", IR_DT_I64);
    v.j = loop_add_var(p, "j", IR_DT_I64);
    v.k = loop_add_var(p, "k", IR_DT_I64);
    v.acc = loop_add_var(p, "acc", IR_DT_F32);
    return v;
}

/* Adds body as a kernel; the verifier must fail with a message containing want. */
static void assert_rejects(LoopProgram *p, LoopStmt *body, const char *want)
{
    assert_non_null(body);
    assert_true(loop_add_kernel(p, "bad", body) >= 0);
    UtilDiag d;
    util_diag_init(&d);
    assert_int_equal(loop_verify(p, &d), -1);
    if (!strstr(d.msg, want))
        print_error("message: %s\nwanted: %s\n", d.msg, want);
    assert_non_null(strstr(d.msg, want));
    assert_non_null(strstr(d.msg, "kernel 'bad'"));
    loop_program_free(p);
}

static LoopExpr *one(LoopProgram *p) { return loop_float(p, IR_DT_F32, 1); }

static void test_verify_rejects(void **state)
{
    (void)state;
    VFix v;
    LoopProgram *p;

    v = vfix(), p = v.p;   /* a variable id that does not exist */
    assert_rejects(p, loop_store(p, v.y, loop_var(p, 99), one(p)), "undefined variable id 99");

    v = vfix(), p = v.p;   /* a prefetch's index is an index */
    assert_rejects(p, loop_prefetch(p, v.y, one(p)), "prefetch index has type float32, expected int64");

    v = vfix(), p = v.p;   /* i used after its loop */
    {
        LoopStmt *b = loop_block(p);
        add(p, b, loop_for(p, v.i, loop_int(p, 16), LOOP_SERIAL, loop_store(p, v.y, loop_var(p, v.i), one(p))));
        add(p, b, loop_store(p, v.y, loop_var(p, v.i), one(p)));
        assert_rejects(p, b, "variable 'i' used outside its scope");
    }

    v = vfix(), p = v.p;   /* a let is visible only to the end of its block */
    {
        LoopStmt *inner = loop_block(p), *b = loop_block(p);
        add(p, inner, loop_let(p, v.acc, one(p), 1));
        add(p, b, inner);
        add(p, b, loop_store(p, v.y, loop_int(p, 0), loop_var(p, v.acc)));
        assert_rejects(p, b, "variable 'acc' used outside its scope");
    }

    v = vfix(), p = v.p;   /* used before its let */
    {
        LoopStmt *b = loop_block(p);
        add(p, b, loop_let(p, v.acc, loop_bin(p, LOOP_ADD, loop_var(p, v.acc), one(p)), 0));
        assert_rejects(p, b, "variable 'acc' used outside its scope");
    }

    v = vfix(), p = v.p;
    assert_rejects(p, loop_store(p, v.x, loop_int(p, 0), one(p)), "store to input buffer 'x'");

    v = vfix(), p = v.p;
    assert_rejects(p, loop_store(p, v.w, loop_int(p, 0), one(p)), "store to constant buffer 'w'");

    v = vfix(), p = v.p;   /* vectorized over a run-time extent */
    {
        LoopExpr *ext = loop_cast(p, IR_DT_I64, loop_load(p, v.x, loop_int(p, 0)));
        assert_rejects(p, loop_for(p, v.i, ext, LOOP_VECTORIZED, loop_store(p, v.y, loop_var(p, v.i), one(p))),
                       "vectorized loop with a non-constant extent");
    }

    v = vfix(), p = v.p;
    assert_rejects(p, loop_for(p, v.i, loop_int(p, 16), LOOP_GPU_THREAD_X, loop_store(p, v.y, loop_var(p, v.i), one(p))),
                   "gpu.thread.x loop outside any GPU block loop");

    v = vfix(), p = v.p;
    assert_rejects(p, loop_if(p, loop_int(p, 1), loop_store(p, v.y, loop_int(p, 0), one(p)), NULL),
                   "if condition has type int64, expected bool");

    v = vfix(), p = v.p;
    assert_rejects(p, loop_store(p, 7, loop_int(p, 0), one(p)), "buffer id 7 out of range");

    v = vfix(), p = v.p;
    assert_rejects(p, loop_store(p, v.y, loop_load(p, 9, loop_int(p, 0)), one(p)), "buffer id 9 out of range");

    v = vfix(), p = v.p;   /* each variable is bound once */
    {
        LoopStmt *b = loop_block(p);
        add(p, b, loop_for(p, v.i, loop_int(p, 4), LOOP_SERIAL, loop_store(p, v.y, loop_var(p, v.i), one(p))));
        add(p, b, loop_for(p, v.i, loop_int(p, 4), LOOP_SERIAL, loop_store(p, v.y, loop_var(p, v.i), one(p))));
        assert_rejects(p, b, "variable 'i' bound twice");
    }

    v = vfix(), p = v.p;
    {
        LoopStmt *b = loop_block(p);
        add(p, b, loop_let(p, v.acc, one(p), 0));
        add(p, b, loop_assign(p, v.acc, one(p)));
        assert_rejects(p, b, "assignment to immutable variable 'acc'");
    }

    v = vfix(), p = v.p;   /* float index */
    assert_rejects(p, loop_store(p, v.y, one(p), one(p)), "store index has type float32, expected int64");

    v = vfix(), p = v.p;   /* value type differs from the buffer's */
    assert_rejects(p, loop_store(p, v.y, loop_int(p, 0), loop_int(p, 1)), "stored value has type int64, expected float32");

    v = vfix(), p = v.p;
    assert_rejects(p, loop_store(p, v.y, loop_int(p, 0), loop_bin(p, LOOP_ADD, one(p), loop_int(p, 1))),
                   "binary operation on operands of different types");

    v = vfix(), p = v.p;
    assert_rejects(p, loop_barrier(p), "barrier outside any GPU block loop");

    v = vfix(), p = v.p;   /* a block loop inside a thread loop */
    assert_rejects(p, loop_for(p, v.i, loop_int(p, 2), LOOP_GPU_BLOCK_X,
                               loop_for(p, v.j, loop_int(p, 2), LOOP_GPU_THREAD_X,
                                        loop_for(p, v.k, loop_int(p, 2), LOOP_GPU_BLOCK_Y, loop_barrier(p)))),
                   "gpu.block.y loop inside a GPU thread loop");

    v = vfix(), p = v.p;   /* vectorized loops are innermost */
    assert_rejects(p, loop_for(p, v.i, loop_int(p, 2), LOOP_VECTORIZED,
                               loop_for(p, v.j, loop_int(p, 2), LOOP_SERIAL, loop_store(p, v.y, loop_var(p, v.j), one(p)))),
                   "serial loop nested inside a vectorized loop");

    v = vfix(), p = v.p;   /* fma takes three arguments */
    assert_rejects(p, loop_store(p, v.y, loop_int(p, 0), loop_call(p, LOOP_I_fma, 1, (LoopExpr *[]){ one(p) })),
                   "intrinsic 'fma' called with the wrong number of arguments");
}

static void test_verify_buffers(void **state)
{
    (void)state;
    UtilDiag d;
    VFix v = vfix();
    LoopProgram *p = v.p;
    assert_verifies(p);
    /* a workspace slice must lie in the workspace */
    int64_t dd[] = { 16 };
    int t = buf(p, "t", LOOP_ST_WORKSPACE, 1, dd);
    p->workspace_bytes = 64;
    p->bufs[t].offset = 32;
    util_diag_init(&d);
    assert_int_equal(loop_verify(p, &d), -1);
    assert_non_null(strstr(d.msg, "buffer 't': workspace slice [32, +64) outside the workspace of 64 bytes"));
    p->bufs[t].offset = 0;
    assert_verifies(p);
    /* input positions must be < n_inputs */
    p->bufs[v.x].index = 0;
    util_diag_init(&d);
    assert_int_equal(loop_verify(p, &d), -1);
    assert_non_null(strstr(d.msg, "buffer 'x': index 0 out of range"));
    p->n_inputs = 1;
    assert_verifies(p);
    p->bufs[v.y].alias_of = v.y;
    util_diag_init(&d);
    assert_int_equal(loop_verify(p, &d), -1);
    assert_non_null(strstr(d.msg, "buffer 'y': bad alias_of 2"));
    p->bufs[v.y].alias_of = -1;
    p->bufs[v.w].data = NULL;
    util_diag_init(&d);
    assert_int_equal(loop_verify(p, &d), -1);
    assert_non_null(strstr(d.msg, "constant buffer 'w' has no data"));
    loop_program_free(p);

    /* a LOCAL buffer (through an alias, too) belongs to one kernel: a value
     * stored there by one kernel never reaches the next */
    v = vfix(), p = v.p;
    int l = buf(p, "l", LOOP_ST_LOCAL, 1, dd);
    assert_verifies(p);
    int k = loop_add_kernel(p, "second", loop_store(p, l, loop_int(p, 0), one(p)));
    assert_true(k >= 0);
    assert_verifies(p);                 /* one kernel uses it */
    IrShape s1 = { .rank = 1, .dims = { 16 } };
    int a = loop_add_buf(p, "l_view", IR_DT_F32, &s1, LOOP_ST_LOCAL);
    p->bufs[a].alias_of = l;
    assert_true(loop_add_kernel(p, "third", loop_store(p, v.y, loop_int(p, 0), loop_load(p, a, loop_int(p, 0)))) >= 0);
    util_diag_init(&d);
    assert_int_equal(loop_verify(p, &d), -1);
    assert_non_null(strstr(d.msg, "local buffer 'l' is used by kernels 'second' and 'third'"));
    loop_program_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_buffers_and_names),
        cmocka_unit_test(test_print_add_broadcast),
        cmocka_unit_test(test_print_conv),
        cmocka_unit_test(test_print_syntax),
        cmocka_unit_test(test_print_gpu_hls),
        cmocka_unit_test(test_simplify_fold),
        cmocka_unit_test(test_simplify_identities),
        cmocka_unit_test(test_simplify_ranges),
        cmocka_unit_test(test_simplify_random),
        cmocka_unit_test(test_simplify_statements),
        cmocka_unit_test(test_verify_rejects),
        cmocka_unit_test(test_verify_buffers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
