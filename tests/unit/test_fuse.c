/* tests/unit/test_fuse.c — recognition of decomposed LayerNorm / Softmax /
 * Gelu (passes/recognize.c) and operator fusion (passes/fuse.c, honoured by
 * the lowering through low_fused_store).
 *
 * Recognizers: the graph before and after (operator counts, attributes) and
 * the interpreter's outputs before and after (within 1e-5 absolute + 1e-4
 * relative).  Fusion: node order and IrNode.fused after the pass, the
 * kernels of the lowered program (count, nodes per kernel, workspace), and
 * the JIT-compiled program against the interpreter (same tolerance). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "codegen/codegen.h"
#include "interp/interp.h"
#include "tests/unit/lower_graph.h"
#include "lower/lower_impl.h"   /* low_lowering: the FUSE flag against the templates */

#define RTOL 1e-4
#define ATOL 1e-5

/* ------------------------------------------------------------ harness */

static void die(const char *what, const UtilDiag *d)
{
    char m[1200];
    util_diag_format(d, m, sizeof m);
    fail_msg("%s: %s", what, m);
}

/* Deterministic float inputs in [-2, 2]. */
static IrArray *make_inputs(const IrGraph *g)
{
    IrArray *in = calloc((size_t)g->n_inputs + 1, sizeof *in);
    assert_non_null(in);
    for (int i = 0; i < g->n_inputs; i++) {
        const IrTensor *x = &g->tensors[g->inputs[i]];
        in[i] = (IrArray){ .dtype = x->v.dtype, .shape = x->v.shape };
        in[i].data = calloc(ir_array_bytes(&in[i]) + 1, 1);
        for (int64_t e = 0; e < ir_array_numel(&in[i]); e++)
            ir_store_f64(x->v.dtype, in[i].data, e, 2 * sin(0.37 * (double)e + 1.3 * i + 0.2));
    }
    return in;
}

static void free_arrays(IrArray *a, int n, int interp_owned)
{
    for (int i = 0; i < n; i++) {
        if (interp_owned)
            interp_array_free(&a[i]);
        else
            free(a[i].data);
    }
    free(a);
}

static IrArray *interp(const IrGraph *g, const IrArray *in)
{
    IrArray *out = calloc((size_t)g->n_outputs + 1, sizeof *out);
    UtilDiag d;
    util_diag_init(&d);
    assert_non_null(out);
    if (interp_run(g, in, out, &d))
        die("interp", &d);
    return out;
}

/* float16 results: one rounding of float16 apart (the interpreter computes
 * in double, compiled code in float32 before the store) */
static void expect_close(const IrArray *ref, const void *got, const char *what)
{
    double rtol = ref->dtype == IR_DT_F16 ? 2e-3 : RTOL, atol = ref->dtype == IR_DT_F16 ? 2e-3 : ATOL;
    for (int64_t i = 0; i < ir_array_numel(ref); i++) {
        double a = ir_load_f64(ref->dtype, ref->data, i), b = ir_load_f64(ref->dtype, got, i);
        if (!(fabs(a - b) <= atol + rtol * fabs(a)))
            fail_msg("%s: element %lld: expected %.9g, got %.9g", what, (long long)i, a, b);
    }
}

static int count_op(const IrGraph *g, IrOp op)
{
    int c = 0;
    for (int i = 0; i < g->n_nodes; i++)
        c += !g->nodes[i].dead && g->nodes[i].op == op;
    return c;
}

static int node_of(const IrGraph *g, IrOp op)
{
    for (int i = 0; i < g->n_nodes; i++)
        if (!g->nodes[i].dead && g->nodes[i].op == op)
            return i;
    return -1;
}

/* Runs pass fn on inferred graph g and checks that the interpreter's
 * outputs do not change; returns the pass's rewrite count. */
static int rewrite_keeps_outputs(IrGraph *g, int (*fn)(IrGraph *, UtilDiag *))
{
    UtilDiag d;
    util_diag_init(&d);
    IrArray *in = make_inputs(g), *before = interp(g, in);
    int r = pass_run_checked(g, &(PassInfo){ "under-test", fn, "" }, &d);
    if (r < 0)
        die("pass", &d);
    IrArray *after = interp(g, in);
    for (int o = 0; o < g->n_outputs; o++) {
        assert_true(ir_shape_equal(&before[o].shape, &after[o].shape));
        expect_close(&before[o], after[o].data, "interpreter after the rewrite");
    }
    free_arrays(before, g->n_outputs, 1);
    free_arrays(after, g->n_outputs, 1);
    free_arrays(in, g->n_inputs, 0);
    return r;
}

/* Lowers g (fused or not), JIT-compiles it and compares with the
 * interpreter; returns the program (caller frees) for kernel checks. */
static LoopProgram *jit_matches_interp(IrGraph *g)
{
    UtilDiag d;
    util_diag_init(&d);
    IrArray *in = make_inputs(g), *ref = interp(g, in);
    LoopProgram *p = low_graph(g, NULL, &d);
    if (!p)
        die("lower", &d);
    LowSchedule s = tgt_cpu_schedule(256);
    tgt_cpu_apply_schedule(p, &s);
    if (low_plan_memory(p, g, &d) || loop_verify(p, &d))
        die("plan", &d);
    CgJit *j = NULL;
    CgOptions co = { .opt_level = 1 };
    if (cg_jit(p, &co, &j, &d))
        die("jit", &d);
    void **inp = calloc((size_t)g->n_inputs + 1, sizeof *inp), **outp = calloc((size_t)g->n_outputs + 1, sizeof *outp);
    for (int i = 0; i < g->n_inputs; i++)
        inp[i] = in[i].data;
    for (int o = 0; o < g->n_outputs; o++)
        outp[o] = calloc(ir_array_bytes(&ref[o]) + 1, 1);
    void *ws = p->workspace_bytes ? aligned_alloc(64, (size_t)(p->workspace_bytes + 63) / 64 * 64) : NULL;
    assert_int_equal(cg_jit_entry(j)((const void *const *)inp, outp, ws), 0);
    for (int o = 0; o < g->n_outputs; o++) {
        expect_close(&ref[o], outp[o], "compiled vs interpreter");
        free(outp[o]);
    }
    free(ws);
    free(inp);
    free(outp);
    cg_jit_free(j);
    free_arrays(ref, g->n_outputs, 1);
    free_arrays(in, g->n_inputs, 0);
    return p;
}

static void infer(TG *t)
{
    if (pass_infer(t->g, &t->d))
        die("infer", &t->d);
}

static int scalar(TG *t, const char *name, double v) { return tg_const(t, name, IR_DT_F32, 0, NULL, &v); }
static int axes_const(TG *t, const char *name, int64_t axis)
{
    double v = (double)axis;
    return tg_const(t, name, IR_DT_I64, TG_INTS(1), &v);
}

/* ------------------------------------------------------- recognition */

/* x [2,3,8] → the opset-13 LayerNorm decomposition over the last axis;
 * square: Pow(d, 2) or Mul(d, d); mean_is_output: the first mean is also a
 * graph output (blocks the rewrite). */
static IrGraph *layernorm_graph(int use_pow, int affine, int mean_is_output)
{
    TG t;
    tg_start(&t, "ln");
    double gv[8], bv[8];
    for (int i = 0; i < 8; i++) {
        gv[i] = 0.5 + 0.1 * i;
        bv[i] = -0.3 + 0.05 * i;
    }
    int x = tg_input(&t, "x", IR_DT_F32, TG_INTS(2, 3, 8)), ax = axes_const(&t, "axes", -1);
    int m = tg_node(&t, IR_OP_ReduceMean, "mean", 2, (int[]){ x, ax }, 1);
    int dd = tg_node(&t, IR_OP_Sub, "sub", 2, (int[]){ x, m }, 1);
    int sq = use_pow ? tg_node(&t, IR_OP_Pow, "pow", 2, (int[]){ dd, scalar(&t, "two", 2) }, 1)
                     : tg_node(&t, IR_OP_Mul, "sq", 2, (int[]){ dd, dd }, 1);
    int v = tg_node(&t, IR_OP_ReduceMean, "var", 2, (int[]){ sq, ax }, 1);
    int ve = tg_node(&t, IR_OP_Add, "addeps", 2, (int[]){ v, scalar(&t, "eps", 1e-5) }, 1);
    int s = tg_node(&t, IR_OP_Sqrt, "sqrt", 1, &ve, 1);
    int y = tg_node(&t, IR_OP_Div, "div", 2, (int[]){ dd, s }, 1);
    if (affine) {
        y = tg_node(&t, IR_OP_Mul, "gamma", 2, (int[]){ y, tg_const(&t, "g", IR_DT_F32, TG_INTS(8), gv) }, 1);
        y = tg_node(&t, IR_OP_Add, "beta", 2, (int[]){ tg_const(&t, "b", IR_DT_F32, TG_INTS(8), bv), y }, 1);
    }
    tg_output(&t, y);
    if (mean_is_output)
        tg_output(&t, m);
    infer(&t);
    return t.g;
}

/* The FUSE property of ir/ops.def marks exactly the operators whose
 * compute template is one of the elementwise scalar functions (lower/
 * scalar.c), which a fused member's epilogue applies: a FUSE operator with
 * another template would be fused into an epilogue that cannot compute it,
 * and an unmarked elementwise one would miss fusion. */
static void test_fuse_flag(void **state)
{
    (void)state;
    int marked = 0;
    for (int op = IR_OP_INVALID + 1; op < IR_OP_COUNT; op++) {
        LowFn f = low_lowering((IrOp)op);
        int scalar = f == low_unary || f == low_binary || f == low_clip || f == low_where || f == low_variadic ||
                     f == low_cast;
        if (scalar != pass_fuse_elementwise((IrOp)op))
            fail_msg("%s: FUSE is %d but its template is %san elementwise scalar function", ir_op_name((IrOp)op),
                     pass_fuse_elementwise((IrOp)op), scalar ? "" : "not ");
        marked += scalar;
    }
    assert_int_equal(marked, 69);    /* Add .. Xor, Relu .. Cast: the families of ops.def */
    assert_true(pass_fuse_elementwise(IR_OP_Relu) && pass_fuse_elementwise(IR_OP_Add));
    assert_false(pass_fuse_elementwise(IR_OP_Conv) || pass_fuse_elementwise(IR_OP_Identity) ||
                 pass_fuse_elementwise(IR_OP_Dropout));
}

static void test_layernorm(void **state)
{
    (void)state;
    for (int form = 0; form < 4; form++) {
        IrGraph *g = layernorm_graph(form & 1, form >> 1, 0);
        assert_int_equal(rewrite_keeps_outputs(g, pass_recognize), 1);
        assert_int_equal(g->n_nodes, 1);
        int n = node_of(g, IR_OP_LayerNormalization);
        assert_int_equal(n, 0);
        assert_int_equal(ir_attr_int(&g->nodes[n], IR_A_axis), 2);
        assert_float_equal(ir_attr_float(&g->nodes[n], IR_A_epsilon), 1e-5, 1e-12);
        assert_int_equal(g->nodes[n].n_in, (form >> 1) ? 3 : 2);    /* B only with the affine tail */
        const IrTensor *scale = ir_in(g, &g->nodes[n], 1);
        assert_int_equal(scale->v.shape.rank, 1);
        assert_int_equal(scale->v.shape.dims[0], 8);
        assert_float_equal(ir_load_f64(IR_DT_F32, scale->v.data, 7), (form >> 1) ? 1.2 : 1.0, 1e-6);
        ir_graph_free(g);
    }
}

static void test_layernorm_blocked(void **state)
{
    (void)state;
    IrGraph *g = layernorm_graph(0, 1, 1);       /* the mean is a graph output */
    assert_int_equal(rewrite_keeps_outputs(g, pass_recognize), 0);
    assert_int_equal(count_op(g, IR_OP_ReduceMean), 2);
    assert_int_equal(count_op(g, IR_OP_LayerNormalization), 0);
    ir_graph_free(g);
}

static IrGraph *softmax_graph(int stable, int axis)
{
    TG t;
    tg_start(&t, "sm");
    int x = tg_input(&t, "x", IR_DT_F32, TG_INTS(2, 5, 3)), ax = axes_const(&t, "axes", axis), e;
    if (stable) {
        int m = tg_node(&t, IR_OP_ReduceMax, "max", 2, (int[]){ x, ax }, 1);
        int s = tg_node(&t, IR_OP_Sub, "sub", 2, (int[]){ x, m }, 1);
        e = tg_node(&t, IR_OP_Exp, "exp", 1, &s, 1);
    } else {
        e = tg_node(&t, IR_OP_Exp, "exp", 1, &x, 1);
    }
    int z = tg_node(&t, IR_OP_ReduceSum, "sum", 2, (int[]){ e, ax }, 1);
    tg_output(&t, tg_node(&t, IR_OP_Div, "div", 2, (int[]){ e, z }, 1));
    infer(&t);
    return t.g;
}

static void test_softmax(void **state)
{
    (void)state;
    for (int stable = 0; stable < 2; stable++) {
        IrGraph *g = softmax_graph(stable, 1);
        assert_int_equal(rewrite_keeps_outputs(g, pass_recognize), 1);
        assert_int_equal(g->n_nodes, 1);
        assert_int_equal(g->nodes[0].op, IR_OP_Softmax);
        assert_int_equal(ir_attr_int(&g->nodes[0], IR_A_axis), 1);
        assert_int_equal(g->nodes[0].in[0], g->inputs[0]);
        ir_graph_free(g);
    }
    IrGraph *g = softmax_graph(1, -1);                /* negative axes normalize */
    assert_int_equal(rewrite_keeps_outputs(g, pass_recognize), 1);
    assert_int_equal(ir_attr_int(&g->nodes[0], IR_A_axis), 2);
    ir_graph_free(g);
}

static void test_softmax_blocked(void **state)
{
    (void)state;
    IrGraph *g = softmax_graph(1, 1);
    ir_add_output(g, g->nodes[node_of(g, IR_OP_Exp)].out[0]);    /* exp(x - max) is wanted too */
    assert_int_equal(rewrite_keeps_outputs(g, pass_recognize), 0);
    assert_int_equal(count_op(g, IR_OP_Softmax), 0);
    assert_int_equal(g->n_nodes, 5);
    ir_graph_free(g);
}

static void test_gelu(void **state)
{
    (void)state;
    for (int use_div = 0; use_div < 2; use_div++) {
        TG t;
        tg_start(&t, "gelu");
        int x = tg_input(&t, "x", IR_DT_F32, TG_INTS(2, 6));
        int s = use_div ? tg_node(&t, IR_OP_Div, "div", 2, (int[]){ x, scalar(&t, "r2", sqrt(2.0)) }, 1)
                        : tg_node(&t, IR_OP_Mul, "mul", 2, (int[]){ x, scalar(&t, "ir2", 0.70710678) }, 1);
        int e = tg_node(&t, IR_OP_Erf, "erf", 1, &s, 1);
        int a = tg_node(&t, IR_OP_Add, "add", 2, (int[]){ e, scalar(&t, "one", 1) }, 1);
        int m = tg_node(&t, IR_OP_Mul, "mx", 2, (int[]){ x, a }, 1);
        tg_output(&t, tg_node(&t, IR_OP_Mul, "half", 2, (int[]){ m, scalar(&t, "h", 0.5) }, 1));
        infer(&t);
        assert_int_equal(rewrite_keeps_outputs(t.g, pass_recognize), 1);
        assert_int_equal(t.g->n_nodes, 1);
        assert_int_equal(t.g->nodes[0].op, IR_OP_Gelu);
        ir_graph_free(t.g);
    }
}

/* ------------------------------------------------------------ fusion */

/* Conv [1,C,5,5] → [1,3,5,5], 3x3, pads 1, bias; returns its output. */
static int conv(TG *t, const char *name, int x, int64_t cin)
{
    double w[3 * 4 * 9], b[3] = { 0.1, -0.2, 0.3 };
    for (int i = 0; i < 3 * cin * 9; i++)
        w[i] = 0.25 * cos(0.7 * i);
    char wn[32], bn[32];
    snprintf(wn, sizeof wn, "%s_w", name);
    snprintf(bn, sizeof bn, "%s_b", name);
    int y = tg_node(t, IR_OP_Conv, name, 3,
                    (int[]){ x, tg_const(t, wn, IR_DT_F32, TG_INTS(3, cin, 3, 3), w),
                             tg_const(t, bn, IR_DT_F32, TG_INTS(3), b) }, 1);
    tg_ints(t, IR_A_kernel_shape, TG_INTS(3, 3));
    tg_ints(t, IR_A_pads, TG_INTS(1, 1, 1, 1));
    return y;
}

static int fuse(IrGraph *g)
{
    UtilDiag d;
    util_diag_init(&d);
    int r = pass_run_checked(g, &(PassInfo){ "fuse", pass_fuse, "" }, &d);
    if (r < 0)
        die("fuse", &d);
    return r;
}

/* The ops of g's nodes in order, "+" before a fused one: "Conv +Relu". */
static void expect_order(const IrGraph *g, const char *want)
{
    char buf[512] = "";
    for (int i = 0; i < g->n_nodes; i++) {
        size_t l = strlen(buf);
        snprintf(buf + l, sizeof buf - l, "%s%s%s", i ? " " : "", g->nodes[i].fused ? "+" : "",
                 ir_op_name(g->nodes[i].op));
    }
    assert_string_equal(buf, want);
}

/* Infers t's graph and fuses it: `fused` members, node order `order`; the
 * compiled program has `kernels` kernels and matches the interpreter.
 * Returns the first kernel's node count; frees the graph. */
static int fused_case(TG *t, int fused, const char *order, int kernels)
{
    infer(t);
    assert_int_equal(fuse(t->g), fused);
    expect_order(t->g, order);
    LoopProgram *p = jit_matches_interp(t->g);
    assert_int_equal(p->n_kernels, kernels);
    int n = p->kernels[0].n_nodes;
    loop_program_free(p);
    ir_graph_free(t->g);
    return n;
}

static void test_conv_relu(void **state)
{
    (void)state;
    TG t;
    tg_start(&t, "conv_relu");
    int x = tg_input(&t, "x", IR_DT_F32, TG_INTS(1, 2, 5, 5)), c = conv(&t, "conv", x, 2);
    tg_output(&t, tg_node(&t, IR_OP_Relu, "relu", 1, &c, 1));
    infer(&t);
    assert_int_equal(fuse(t.g), 1);
    expect_order(t.g, "Conv +Relu");
    LoopProgram *p = jit_matches_interp(t.g);
    assert_int_equal(p->n_kernels, 1);
    assert_int_equal(p->kernels[0].first_node, 0);
    assert_int_equal(p->kernels[0].n_nodes, 2);
    assert_int_equal(p->workspace_bytes, 0);          /* the Conv result has no buffer */
    for (int b = 0; b < p->n_bufs; b++)
        assert_int_not_equal(p->bufs[b].storage, LOOP_ST_WORKSPACE);
    loop_program_free(p);
    ir_graph_free(t.g);
}

/* Conv → Add(residual x) → Relu, and the residual produced after the head:
 * the group moves to its last member's place. */
static void test_conv_residual(void **state)
{
    (void)state;
    TG t;
    tg_start(&t, "conv_residual");
    int x = tg_input(&t, "x", IR_DT_F32, TG_INTS(1, 3, 5, 5)), c = conv(&t, "conv", x, 3);
    int a = tg_node(&t, IR_OP_Add, "add", 2, (int[]){ c, x }, 1);
    tg_output(&t, tg_node(&t, IR_OP_Relu, "relu", 1, &a, 1));
    infer(&t);
    assert_int_equal(fuse(t.g), 2);
    expect_order(t.g, "Conv +Add +Relu");
    LoopProgram *p = jit_matches_interp(t.g);
    assert_int_equal(p->n_kernels, 1);
    assert_int_equal(p->kernels[0].n_nodes, 3);
    assert_int_equal(p->kernels[0].flops, ir_node_flops(t.g, &t.g->nodes[0]) + ir_node_flops(t.g, &t.g->nodes[1]) +
                                          ir_node_flops(t.g, &t.g->nodes[2]));
    loop_program_free(p);
    ir_graph_free(t.g);

    tg_start(&t, "conv_late_residual");
    x = tg_input(&t, "x", IR_DT_F32, TG_INTS(1, 3, 5, 5));
    int c1 = conv(&t, "conv1", x, 3), c2 = conv(&t, "conv2", x, 3);
    a = tg_node(&t, IR_OP_Add, "add", 2, (int[]){ c1, c2 }, 1);
    tg_output(&t, tg_node(&t, IR_OP_Relu, "relu", 1, &a, 1));
    infer(&t);
    assert_int_equal(fuse(t.g), 2);
    expect_order(t.g, "Conv Conv +Add +Relu");
    assert_string_equal(t.g->nodes[0].name, "conv2");   /* conv1 heads the group, after conv2 */
    assert_string_equal(t.g->nodes[1].name, "conv1");
    p = jit_matches_interp(t.g);
    assert_int_equal(p->n_kernels, 2);
    loop_program_free(p);
    ir_graph_free(t.g);
}

static const double mm_b[5] = { 0.5, -0.5, 0.25, 0, 1 };

static void mm_weights(double *w)
{
    for (int i = 0; i < 20; i++)
        w[i] = 0.3 * sin(1.1 * i);
}

/* x [2,3,4] (dtype dt) @ w [4,5] + b [5], then unary act. */
static void matmul_bias_act(TG *t, const char *name, IrDType dt, IrOp act)
{
    double w[20];
    mm_weights(w);
    tg_start(t, name);
    int x = tg_input(t, "x", dt, TG_INTS(2, 3, 4));
    int m = tg_node(t, IR_OP_MatMul, "mm", 2, (int[]){ x, tg_const(t, "w", dt, TG_INTS(4, 5), w) }, 1);
    int a = tg_node(t, IR_OP_Add, "bias", 2, (int[]){ tg_const(t, "b", dt, TG_INTS(5), mm_b), m }, 1);
    tg_output(t, tg_node(t, act, "act", 1, &a, 1));
}

static void test_matmul_bias_gelu(void **state)
{
    (void)state;
    TG t;
    matmul_bias_act(&t, "mm_gelu", IR_DT_F32, IR_OP_Gelu);
    assert_int_equal(fused_case(&t, 2, "MatMul +Add +Gelu", 1), 3);

    tg_start(&t, "gemm_clip");                        /* Gemm → Clip with constant bounds → Mul by a scale */
    double w[20];
    mm_weights(w);
    int x = tg_input(&t, "x", IR_DT_F32, TG_INTS(3, 4));
    int gm = tg_node(&t, IR_OP_Gemm, "gemm", 2, (int[]){ x, tg_const(&t, "w", IR_DT_F32, TG_INTS(4, 5), w) }, 1);
    int cl = tg_node(&t, IR_OP_Clip, "clip", 3, (int[]){ gm, scalar(&t, "lo", -0.2), scalar(&t, "hi", 0.4) }, 1);
    tg_output(&t, tg_node(&t, IR_OP_Mul, "scale", 2, (int[]){ cl, tg_const(&t, "s", IR_DT_F32, TG_INTS(5), mm_b) }, 1));
    fused_case(&t, 2, "Gemm +Clip +Mul", 1);
}

/* float16: the chain value is rounded to float16 between members, as the
 * unfused kernels store and reload it. */
static void test_float16(void **state)
{
    (void)state;
    TG t;
    matmul_bias_act(&t, "mm_f16", IR_DT_F16, IR_OP_Sigmoid);
    assert_int_equal(fused_case(&t, 2, "MatMul +Add +Sigmoid", 1), 3);
}

/* Elementwise chains: broadcast operands (multi-index loop) and same-shape
 * operands (one flat loop). */
static void test_elementwise_chain(void **state)
{
    (void)state;
    TG t;
    tg_start(&t, "ew_bcast");
    double bv[4] = { 0.1, 0.2, -0.3, 0.4 };
    int a = tg_input(&t, "a", IR_DT_F32, TG_INTS(2, 3, 4)), c = tg_input(&t, "c", IR_DT_F32, TG_INTS(2, 1, 4));
    int s = tg_node(&t, IR_OP_Add, "add", 2, (int[]){ a, tg_const(&t, "b", IR_DT_F32, TG_INTS(4), bv) }, 1);
    s = tg_node(&t, IR_OP_Sigmoid, "sig", 1, &s, 1);
    s = tg_node(&t, IR_OP_Mul, "mul", 2, (int[]){ c, s }, 1);
    tg_output(&t, tg_node(&t, IR_OP_Clip, "clip", 3, (int[]){ s, scalar(&t, "lo", 0.1), scalar(&t, "hi", 0.6) }, 1));
    assert_int_equal(fused_case(&t, 3, "Add +Sigmoid +Mul +Clip", 1), 4);

    tg_start(&t, "ew_flat");
    a = tg_input(&t, "a", IR_DT_F32, TG_INTS(3, 7));
    s = tg_node(&t, IR_OP_Mul, "mul", 2, (int[]){ a, scalar(&t, "k", 0.7) }, 1);
    s = tg_node(&t, IR_OP_Tanh, "tanh", 1, &s, 1);
    s = tg_node(&t, IR_OP_Sub, "sub", 2, (int[]){ s, a }, 1);
    s = tg_node(&t, IR_OP_Where, "where", 3,
                (int[]){ tg_input(&t, "m", IR_DT_BOOL, TG_INTS(3, 7)), s, scalar(&t, "z", 0) }, 1);
    tg_output(&t, s);
    fused_case(&t, 3, "Mul +Tanh +Sub +Where", 1);

    tg_start(&t, "ew_int");                           /* integers: exact, truncating division */
    double k3 = 3;
    a = tg_input(&t, "a", IR_DT_I32, TG_INTS(2, 5));
    s = tg_node(&t, IR_OP_Mul, "mul", 2, (int[]){ a, tg_const(&t, "k", IR_DT_I32, 0, NULL, &k3) }, 1);
    s = tg_node(&t, IR_OP_Div, "div", 2, (int[]){ s, tg_const(&t, "two", IR_DT_I32, 0, NULL, (double[]){ 2 }) }, 1);
    s = tg_node(&t, IR_OP_Abs, "abs", 1, &s, 1);
    tg_output(&t, tg_node(&t, IR_OP_Cast, "cast", 1, &s, 1));      /* to float: ends the group */
    tg_int(&t, IR_A_to, 1);
    fused_case(&t, 2, "Mul +Div +Abs Cast", 2);
}

/* A vector loop whose body is an IF (the masked lanes of a row no lane count divides). */
static int has_masked_vector(const LoopStmt *st)
{
    if (!st)
        return 0;
    switch (st->kind) {
    case LOOP_S_FOR:
        return (st->u.loop.kind == LOOP_VECTORIZED && st->u.loop.body->kind == LOOP_S_IF) ||
               has_masked_vector(st->u.loop.body);
    case LOOP_S_IF: return has_masked_vector(st->u.cond.then_) || has_masked_vector(st->u.cond.else_);
    case LOOP_S_BLOCK:
        for (int i = 0; i < st->u.block.n; i++)
            if (has_masked_vector(st->u.block.items[i]))
                return 1;
        return 0;
    default: return 0;
    }
}

/* Rows of 14 and 7 under a per-row broadcast (an SE block's scale and the
 * requantization after it): no lane count of 128 bits or more divides them,
 * so the chain runs in vectors of 8 lanes, the last of a row masked (two of
 * 14, one of 7); the same values as the interpreter.  One product a row
 * element stays scalar (targets/cpu/schedule.c, MASK_MIN_OPS). */
static void test_masked_rows(void **state)
{
    (void)state;
    for (int k = 0; k < 3; k++) {
        TG t;
        int64_t w = k == 1 ? 7 : 14;
        tg_start(&t, k == 1 ? "rows7" : k ? "rows14_scale" : "rows14");
        int a = tg_input(&t, "a", IR_DT_F32, TG_INTS(3, 5, w));
        int s = tg_node(&t, IR_OP_Mul, "mul", 2, (int[]){ a, tg_input(&t, "s", IR_DT_F32, TG_INTS(3, 5, 1)) }, 1);
        if (k < 2) {
            s = tg_node(&t, IR_OP_Mul, "inv", 2, (int[]){ s, scalar(&t, "k", 7.5) }, 1);
            s = tg_node(&t, IR_OP_Round, "round", 1, &s, 1);
            s = tg_node(&t, IR_OP_Add, "zp", 2, (int[]){ s, scalar(&t, "z", 3) }, 1);
            s = tg_node(&t, IR_OP_Clip, "clip", 3, (int[]){ s, scalar(&t, "lo", -128), scalar(&t, "hi", 127) }, 1);
        }
        tg_output(&t, s);
        infer(&t);
        fuse(t.g);
        LoopProgram *p = jit_matches_interp(t.g);
        int masked = 0;
        for (int i = 0; i < p->n_kernels; i++)
            masked |= has_masked_vector(p->kernels[i].body);
        if (masked != (k < 2))
            fail_msg("graph %s: masked vector loop %d, want %d", t.g->name, masked, k < 2);
        loop_program_free(p);
        ir_graph_free(t.g);
    }
}

/* A value with another consumer or that is a graph output is not fused away. */
static void test_fusion_blocked(void **state)
{
    (void)state;
    TG t;
    tg_start(&t, "shared");
    int x = tg_input(&t, "x", IR_DT_F32, TG_INTS(1, 2, 5, 5)), c = conv(&t, "conv", x, 2);
    int r = tg_node(&t, IR_OP_Relu, "relu", 1, &c, 1);
    tg_output(&t, tg_node(&t, IR_OP_Add, "add", 2, (int[]){ c, r }, 1));
    fused_case(&t, 1, "Conv Relu +Add", 2);           /* Relu → Add only: the Conv result is read twice */

    tg_start(&t, "output");
    x = tg_input(&t, "x", IR_DT_F32, TG_INTS(1, 2, 5, 5));
    c = conv(&t, "conv", x, 2);
    tg_output(&t, tg_node(&t, IR_OP_Relu, "relu", 1, &c, 1));
    tg_output(&t, c);
    infer(&t);
    assert_int_equal(fuse(t.g), 0);
    expect_order(t.g, "Conv Relu");
    /* a fused mark the lowering cannot honour (the Conv result is a graph
     * output) is ignored: two kernels, same numbers */
    t.g->nodes[1].fused = 1;
    LoopProgram *p = jit_matches_interp(t.g);
    assert_int_equal(p->n_kernels, 2);
    assert_int_equal(p->kernels[0].n_nodes, 1);
    loop_program_free(p);
    ir_graph_free(t.g);
}

/* The whole -O2 pipeline on a decomposed LayerNorm: one node, one kernel,
 * the decomposition's numbers. */
static void test_pipeline(void **state)
{
    (void)state;
    IrGraph *g = layernorm_graph(1, 1, 0);
    UtilDiag d;
    util_diag_init(&d);
    PassOptions o = pass_options(2);
    IrArray *in = make_inputs(g), *ref = interp(g, in);
    if (pass_run_pipeline(g, &o, &d))
        die("pipeline", &d);
    assert_int_equal(count_op(g, IR_OP_LayerNormalization), 1);
    assert_int_equal(g->n_nodes, 1);
    IrArray *after = interp(g, in);
    expect_close(&ref[0], after[0].data, "-O2 vs the decomposed graph");
    free_arrays(after, g->n_outputs, 1);
    free_arrays(ref, g->n_outputs, 1);
    free_arrays(in, g->n_inputs, 0);
    LoopProgram *p = jit_matches_interp(g);
    assert_int_equal(p->n_kernels, 1);
    loop_program_free(p);
    ir_graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fuse_flag),
        cmocka_unit_test(test_layernorm),
        cmocka_unit_test(test_layernorm_blocked),
        cmocka_unit_test(test_softmax),
        cmocka_unit_test(test_softmax_blocked),
        cmocka_unit_test(test_gelu),
        cmocka_unit_test(test_conv_relu),
        cmocka_unit_test(test_conv_residual),
        cmocka_unit_test(test_matmul_bias_gelu),
        cmocka_unit_test(test_float16),
        cmocka_unit_test(test_elementwise_chain),
        cmocka_unit_test(test_masked_rows),
        cmocka_unit_test(test_fusion_blocked),
        cmocka_unit_test(test_pipeline),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
