/* tests/unit/test_ops_math.c — shape rules and reference kernels of the math
 * operator families (ir/infer_elementwise.c, infer_reduce.c, infer_norm.c, infer_linalg.c, interp/k_elementwise.c, k_reduce.c,
 * k_norm.c, k_matmul.c).  Each test builds a tiny graph whose inputs are
 * constants, runs pass_infer (which infers shapes and evaluates the nodes
 * through the kernels) and compares shapes and values with numbers computed
 * by hand (or independently with Python's math module / numpy): tolerance
 * 1e-6 relative (plus 1e-7 absolute near zero) unless stated. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ir/ir.h"
#include "passes/passes.h"

#define D(...) ((const int64_t[]){ __VA_ARGS__ })
#define V(...) ((const double[]){ __VA_ARGS__ })
#define NV(...) ((int)(sizeof((const double[]){ __VA_ARGS__ }) / sizeof(double)))
#define TOL 1e-6

static UtilLoc here(void) { return util_loc_file("t.json"); }

/* A constant tensor; values given as doubles (exact for the small integers used). */
static int cst(IrGraph *g, IrDType dt, int rank, const int64_t *dims, const double *v)
{
    UtilDiag d;
    util_diag_init(&d);
    char name[32];
    snprintf(name, sizeof name, "c%d", g->n_tensors);
    int t = ir_add_tensor(g, name, IR_TK_CONST, here(), &d);
    IrShape s = { .rank = rank };
    if (rank)
        memcpy(s.dims, dims, (size_t)rank * sizeof(int64_t));
    ir_set_type(g, t, dt, &s);
    void *data = ir_alloc_data(g, t);
    assert_non_null(data);
    for (int64_t i = 0; i < ir_shape_numel(&s); i++) {
        if (ir_dtype_is_float(dt))
            ir_store_f64(dt, data, i, v[i]);
        else
            ir_store_i64(dt, data, i, (int64_t)v[i]);
    }
    return t;
}

/* A node with n_out fresh output tensors (graph outputs); returns the node index. */
static int node(IrGraph *g, IrOp op, int n_in, const int *in, int n_out)
{
    UtilDiag d;
    util_diag_init(&d);
    int outs[4];
    for (int k = 0; k < n_out; k++) {
        char name[32];
        snprintf(name, sizeof name, "y%d", g->n_tensors);
        outs[k] = ir_add_tensor(g, name, IR_TK_VALUE, here(), &d);
        ir_add_output(g, outs[k]);
    }
    int n = ir_add_node(g, op, "n", n_in, in, n_out, outs, here());
    assert_true(n >= 0);
    return n;
}

static void attr_i(IrGraph *g, int n, IrAttrKey k, int64_t v)
{
    IrAttr a = { .key = k, .kind = IR_AK_INT, .v.i = v };
    assert_int_equal(ir_set_attr(g, n, &a), 0);
}

static void attr_f(IrGraph *g, int n, IrAttrKey k, double v)
{
    IrAttr a = { .key = k, .kind = IR_AK_FLOAT, .v.f = v };
    assert_int_equal(ir_set_attr(g, n, &a), 0);
}

static void attr_s(IrGraph *g, int n, IrAttrKey k, const char *v)
{
    IrAttr a = { .key = k, .kind = IR_AK_STRING, .v.s = v };
    assert_int_equal(ir_set_attr(g, n, &a), 0);
}

static void infer_ok(IrGraph *g)
{
    UtilDiag d;
    util_diag_init(&d);
    int rc = pass_infer(g, &d);
    if (rc)
        fail_msg("pass_infer failed: %s", d.msg);
}

static void infer_err(IrGraph *g, const char *substr)
{
    UtilDiag d;
    util_diag_init(&d);
    assert_int_equal(pass_infer(g, &d), -1);
    if (!strstr(d.msg, substr))
        fail_msg("diagnostic \"%s\" lacks \"%s\"", d.msg, substr);
}

static const IrTensor *outt(IrGraph *g, int n, int k) { return &g->tensors[g->nodes[n].out[k]]; }

static void close_to(double got, double want, double tol, int64_t i)
{
    if (isnan(want)) {
        if (!isnan(got))
            fail_msg("element %lld: got %.9g, want NaN", (long long)i, got);
    } else if (isinf(want)) {
        if (got != want)
            fail_msg("element %lld: got %.9g, want %g", (long long)i, got, want);
    } else if (!(fabs(got - want) <= tol * fabs(want) + 1e-7)) {
        fail_msg("element %lld: got %.9g, want %.9g", (long long)i, got, want);
    }
}

/* Output k of node n has dtype dt, shape dims and values want (tolerance tol). */
static void expect(IrGraph *g, int n, int k, IrDType dt, int rank, const int64_t *dims, const double *want,
                   double tol)
{
    const IrTensor *t = outt(g, n, k);
    assert_true(t->shape_known);
    if (t->v.dtype != dt)
        fail_msg("dtype %s, want %s", ir_dtype_name(t->v.dtype), ir_dtype_name(dt));
    assert_int_equal(t->v.shape.rank, rank);
    for (int i = 0; i < rank; i++)
        assert_int_equal(t->v.shape.dims[i], dims[i]);
    assert_non_null(t->v.data);
    for (int64_t i = 0; i < ir_shape_numel(&t->v.shape); i++)
        close_to(ir_load_f64(dt, t->v.data, i), want[i], tol, i);
}

/* Integer outputs, compared exactly. */
static void expect_i(IrGraph *g, int n, int k, IrDType dt, int rank, const int64_t *dims, const int64_t *want)
{
    const IrTensor *t = outt(g, n, k);
    assert_int_equal(t->v.dtype, dt);
    assert_int_equal(t->v.shape.rank, rank);
    for (int i = 0; i < rank; i++)
        assert_int_equal(t->v.shape.dims[i], dims[i]);
    assert_non_null(t->v.data);
    for (int64_t i = 0; i < ir_shape_numel(&t->v.shape); i++)
        assert_int_equal(ir_load_i64(dt, t->v.data, i), want[i]);
}

/* One-node graph helpers. */
static int op1(IrGraph *g, IrOp op, int x) { return node(g, op, 1, &x, 1); }
static int op2(IrGraph *g, IrOp op, int a, int b) { int in[2] = { a, b }; return node(g, op, 2, in, 1); }

/* ---------------------------------------------------------------- unary */

typedef struct UnaryCase {
    IrOp op;
    int n;
    double x[5], y[5];
} UnaryCase;

/* Expected values from Python's math module on the float32-rounded inputs,
 * with the ONNX default attributes. */
static const UnaryCase unary_cases[] = {
    { IR_OP_Abs, 5, { -1.5, -0.5, 0.0, 0.7, 2.5 }, { 1.5, 0.5, 0.0, 0.699999988079071, 2.5 } },
    { IR_OP_Neg, 5, { -1.5, -0.5, 0.0, 0.7, 2.5 }, { 1.5, 0.5, -0.0, -0.699999988079071, -2.5 } },
    { IR_OP_Reciprocal, 3, { -2.0, 0.5, 4.0 }, { -0.5, 2.0, 0.25 } },
    { IR_OP_Sqrt, 3, { 0.25, 0.5, 0.75 }, { 0.5, 0.7071067811865476, 0.8660254037844386 } },
    { IR_OP_Exp, 5, { -1.5, -0.5, 0.0, 0.7, 2.5 }, { 0.22313016014842982, 0.6065306597126334, 1.0, 2.0137526834646735, 12.182493960703473 } },
    { IR_OP_Log, 3, { 0.25, 0.5, 0.75 }, { -1.3862943611198906, -0.6931471805599453, -0.2876820724517809 } },
    { IR_OP_Erf, 5, { -1.5, -0.5, 0.0, 0.7, 2.5 }, { -0.9661051464753108, -0.5204998778130465, 0.0, 0.6778011855967799, 0.999593047982555 } },
    { IR_OP_Tanh, 5, { -1.5, -0.5, 0.0, 0.7, 2.5 }, { -0.9051482536448664, -0.46211715726000974, 0.0, 0.604367769550478, 0.9866142981514303 } },
    { IR_OP_Sigmoid, 5, { -1.5, -0.5, 0.0, 0.7, 2.5 }, { 0.18242552380635635, 0.3775406687981454, 0.5, 0.6681877695251427, 0.9241418199787566 } },
    { IR_OP_Relu, 5, { -1.5, -0.5, 0.0, 0.7, 2.5 }, { 0.0, 0.0, 0.0, 0.699999988079071, 2.5 } },
    { IR_OP_LeakyRelu, 5, { -1.5, -0.5, 0.0, 0.7, 2.5 }, { -0.015, -0.005, 0.0, 0.699999988079071, 2.5 } },
    { IR_OP_Elu, 5, { -1.5, -0.5, 0.0, 0.7, 2.5 }, { -0.7768698398515702, -0.3934693402873666, 0.0, 0.699999988079071, 2.5 } },
    { IR_OP_Selu, 5, { -1.5, -0.5, 0.0, 0.7, 2.5 }, { -1.3658143533672527, -0.6917581878028713, 0.0, 0.7354906786235045, 2.626752468388701 } },
    { IR_OP_Celu, 5, { -1.5, -0.5, 0.0, 0.7, 2.5 }, { -0.7768698398515702, -0.3934693402873666, 0.0, 0.699999988079071, 2.5 } },
    { IR_OP_ThresholdedRelu, 5, { -1.5, -0.5, 0.0, 0.7, 2.5 }, { 0.0, 0.0, 0.0, 0.0, 2.5 } },
    { IR_OP_HardSigmoid, 5, { -1.5, -0.5, 0.0, 0.7, 2.5 }, { 0.19999999999999996, 0.4, 0.5, 0.6399999976158142, 1.0 } },
    { IR_OP_HardSwish, 5, { -1.5, -0.5, 0.0, 0.7, 2.5 }, { -0.375, -0.20833333333333334, 0.0, 0.43166665792465214, 2.291666666666667 } },
    { IR_OP_Softplus, 5, { -1.5, -0.5, 0.0, 0.7, 2.5 }, { 0.2014132779827524, 0.4740769841801067, 0.6931471805599453, 1.103186040920039, 2.5788897342925496 } },
    { IR_OP_Softsign, 5, { -1.5, -0.5, 0.0, 0.7, 2.5 }, { -0.6, -0.3333333333333333, 0.0, 0.411764701757464, 0.7142857142857143 } },
    { IR_OP_Gelu, 5, { -1.5, -0.5, 0.0, 0.7, 2.5 }, { -0.10021080190328713, -0.15426876936299344, 0.0, 0.5306254318017016, 2.4844758366855597 } },
    { IR_OP_Mish, 5, { -1.5, -0.5, 0.0, 0.7, 2.5 }, { -0.29809974216680674, -0.22074377465173, 0.0, 0.561148366094917, 2.471392304557881 } },
    { IR_OP_Shrink, 5, { -1.5, -0.5, 0.0, 0.7, 2.5 }, { -1.5, 0.0, 0.0, 0.699999988079071, 2.5 } },
    { IR_OP_Floor, 5, { -1.5, -0.5, 0.0, 0.7, 2.5 }, { -2.0, -1.0, 0.0, 0.0, 2.0 } },
    { IR_OP_Ceil, 5, { -1.5, -0.5, 0.0, 0.7, 2.5 }, { -1.0, 0.0, 0.0, 1.0, 3.0 } },
    { IR_OP_Sign, 5, { -1.5, -0.5, 0.0, 0.7, 2.5 }, { -1.0, -1.0, 0.0, 1.0, 1.0 } },
    { IR_OP_Sin, 5, { -1.5, -0.5, 0.0, 0.7, 2.5 }, { -0.9974949866040544, -0.479425538604203, 0.0, 0.6442176781200616, 0.5984721441039565 } },
    { IR_OP_Cos, 5, { -1.5, -0.5, 0.0, 0.7, 2.5 }, { 0.0707372016677029, 0.8775825618903728, 1.0, 0.7648421949641616, -0.8011436155469337 } },
    { IR_OP_Tan, 5, { -1.5, -0.5, 0.0, 0.7, 2.5 }, { -14.101419947171719, -0.5463024898437905, 0.0, 0.8422883600848511, -0.7470222972386603 } },
    { IR_OP_Asin, 3, { 0.25, 0.5, 0.75 }, { 0.25268025514207865, 0.5235987755982989, 0.848062078981481 } },
    { IR_OP_Acos, 3, { 0.25, 0.5, 0.75 }, { 1.318116071652818, 1.0471975511965979, 0.7227342478134157 } },
    { IR_OP_Atan, 5, { -1.5, -0.5, 0.0, 0.7, 2.5 }, { -0.982793723247329, -0.4636476090008061, 0.0, 0.6107259563885851, 1.1902899496825317 } },
    { IR_OP_Sinh, 5, { -1.5, -0.5, 0.0, 0.7, 2.5 }, { -2.1292794550948173, -0.5210953054937474, 0.0, 0.758583686876753, 6.0502044810397875 } },
    { IR_OP_Cosh, 5, { -1.5, -0.5, 0.0, 0.7, 2.5 }, { 2.352409615243247, 1.1276259652063807, 1.0, 1.2551689965879207, 6.132289479663686 } },
    { IR_OP_Asinh, 5, { -1.5, -0.5, 0.0, 0.7, 2.5 }, { -1.1947632172871094, -0.48121182505960347, 0.0, 0.6526665563163503, 1.6472311463710958 } },
    { IR_OP_Acosh, 3, { 1.25, 2.0, 3.5 }, { 0.6931471805599453, 1.3169578969248166, 1.9248473002384139 } },
    { IR_OP_Atanh, 3, { 0.25, 0.5, 0.75 }, { 0.25541281188299536, 0.5493061443340548, 0.9729550745276566 } },
};

static void test_unary_all(void **state)
{
    (void)state;
    for (size_t c = 0; c < sizeof unary_cases / sizeof unary_cases[0]; c++) {
        const UnaryCase *u = &unary_cases[c];
        IrGraph *g = ir_graph_new("g", "t.json");
        int n = op1(g, u->op, cst(g, IR_DT_F32, 1, D(u->n), u->x));
        infer_ok(g);
        print_message("%s\n", ir_op_name(u->op));
        expect(g, n, 0, IR_DT_F32, 1, D(u->n), u->y, TOL);
        ir_graph_free(g);
    }
}

/* Unary operators with non-default attributes. */
static void test_unary_attrs(void **state)
{
    (void)state;
    IrGraph *g = ir_graph_new("g", "t.json");
    int x5 = cst(g, IR_DT_F32, 1, D(5), V(-1.5, -0.5, 0.0, 0.7, 2.5));
    int gt = op1(g, IR_OP_Gelu, x5);
    attr_s(g, gt, IR_A_approximate, "tanh");
    int lr = op1(g, IR_OP_LeakyRelu, cst(g, IR_DT_F32, 1, D(2), V(-2, 3)));
    attr_f(g, lr, IR_A_alpha, 0.1);
    int ce = op1(g, IR_OP_Celu, cst(g, IR_DT_F32, 1, D(2), V(-1.5, 1)));
    attr_f(g, ce, IR_A_alpha, 2.0);
    int el = op1(g, IR_OP_Elu, cst(g, IR_DT_F32, 1, D(2), V(-1, 1)));
    attr_f(g, el, IR_A_alpha, 2.0);
    int sh = op1(g, IR_OP_Shrink, cst(g, IR_DT_F32, 1, D(4), V(-2, -1, 0.5, 1.5)));
    attr_f(g, sh, IR_A_lambd, 1.0);
    attr_f(g, sh, IR_A_bias, 0.5);
    int hs = op1(g, IR_OP_HardSigmoid, cst(g, IR_DT_F32, 1, D(3), V(-1, 0.5, 2)));
    attr_f(g, hs, IR_A_alpha, 0.5);
    attr_f(g, hs, IR_A_beta, 0.25);
    int tr = op1(g, IR_OP_ThresholdedRelu, cst(g, IR_DT_F32, 1, D(2), V(0.4, 0.6)));
    attr_f(g, tr, IR_A_alpha, 0.5);
    infer_ok(g);
    expect(g, gt, 0, IR_DT_F32, 1, D(5),
           V(-0.10042842301976707, -0.15428599017485606, 0.0, 0.5305701230660317, 2.484915733910001), TOL);
    expect(g, lr, 0, IR_DT_F32, 1, D(2), V(-0.2, 3), TOL);
    expect(g, ce, 0, IR_DT_F32, 1, D(2), V(-1.0552668945179706, 1), TOL);
    expect(g, el, 0, IR_DT_F32, 1, D(2), V(-1.2642411176571153, 1), TOL);
    expect(g, sh, 0, IR_DT_F32, 1, D(4), V(-1.5, 0, 0, 1.0), TOL);
    expect(g, hs, 0, IR_DT_F32, 1, D(3), V(0, 0.5, 1), TOL);
    expect(g, tr, 0, IR_DT_F32, 1, D(2), V(0, 0.6), TOL);
    ir_graph_free(g);
}

static void test_round_sign_nan_inf_not(void **state)
{
    (void)state;
    IrGraph *g = ir_graph_new("g", "t.json");
    int rd = op1(g, IR_OP_Round, cst(g, IR_DT_F32, 1, D(8), V(0.5, 1.5, 2.5, -0.5, -1.5, 2.4, -2.6, -3.5)));
    int sg = op1(g, IR_OP_Sign, cst(g, IR_DT_I64, 1, D(3), V(-9, 0, 9)));
    int xi = cst(g, IR_DT_F32, 1, D(4), V(INFINITY, -INFINITY, 1, NAN));
    int nan = op1(g, IR_OP_IsNaN, xi);
    int inf = op1(g, IR_OP_IsInf, xi);
    int pos = op1(g, IR_OP_IsInf, xi);
    attr_i(g, pos, IR_A_detect_negative, 0);
    int neg = op1(g, IR_OP_IsInf, xi);
    attr_i(g, neg, IR_A_detect_positive, 0);
    int nt = op1(g, IR_OP_Not, cst(g, IR_DT_BOOL, 1, D(2), V(1, 0)));
    infer_ok(g);
    expect(g, rd, 0, IR_DT_F32, 1, D(8), V(0, 2, 2, -0.0, -2, 2, -3, -4), 0);
    expect_i(g, sg, 0, IR_DT_I64, 1, D(3), D(-1, 0, 1));
    expect_i(g, nan, 0, IR_DT_BOOL, 1, D(4), D(0, 0, 0, 1));
    expect_i(g, inf, 0, IR_DT_BOOL, 1, D(4), D(1, 1, 0, 0));
    expect_i(g, pos, 0, IR_DT_BOOL, 1, D(4), D(1, 0, 0, 0));
    expect_i(g, neg, 0, IR_DT_BOOL, 1, D(4), D(0, 1, 0, 0));
    expect_i(g, nt, 0, IR_DT_BOOL, 1, D(2), D(0, 1));
    ir_graph_free(g);
}

static void test_unary_int_and_other_floats(void **state)
{
    (void)state;
    IrGraph *g = ir_graph_new("g", "t.json");
    int ab = op1(g, IR_OP_Abs, cst(g, IR_DT_I32, 1, D(2), V(-3, 4)));
    int ng = op1(g, IR_OP_Neg, cst(g, IR_DT_I8, 1, D(2), V(5, -7)));
    int rl = op1(g, IR_OP_Relu, cst(g, IR_DT_I32, 1, D(2), V(-2, 3)));
    int ex = op1(g, IR_OP_Exp, cst(g, IR_DT_F64, 1, D(1), V(1)));
    int sq = op1(g, IR_OP_Sqrt, cst(g, IR_DT_F16, 1, D(1), V(2)));
    int bf = op1(g, IR_OP_Neg, cst(g, IR_DT_BF16, 1, D(1), V(1.5)));
    infer_ok(g);
    expect_i(g, ab, 0, IR_DT_I32, 1, D(2), D(3, 4));
    expect_i(g, ng, 0, IR_DT_I8, 1, D(2), D(-5, 7));
    expect_i(g, rl, 0, IR_DT_I32, 1, D(2), D(0, 3));
    expect(g, ex, 0, IR_DT_F64, 1, D(1), V(2.718281828459045), 1e-12);
    expect(g, sq, 0, IR_DT_F16, 1, D(1), V(1.41421356), 1e-3);   /* float16 precision */
    expect(g, bf, 0, IR_DT_BF16, 1, D(1), V(-1.5), 0);
    ir_graph_free(g);

    g = ir_graph_new("g", "t.json");
    op1(g, IR_OP_Exp, cst(g, IR_DT_I32, 1, D(1), V(1)));
    infer_err(g, "a floating-point tensor is required");
    ir_graph_free(g);
    g = ir_graph_new("g", "t.json");
    op1(g, IR_OP_Not, cst(g, IR_DT_F32, 1, D(1), V(1)));
    infer_err(g, "Not needs bool");
    ir_graph_free(g);
}

static void test_clip(void **state)
{
    (void)state;
    IrGraph *g = ir_graph_new("g", "t.json");
    int x = cst(g, IR_DT_F32, 1, D(3), V(-2, 0.5, 3));
    int lo = cst(g, IR_DT_F32, 0, NULL, V(-1)), hi = cst(g, IR_DT_F32, 0, NULL, V(1));
    int only_min = op2(g, IR_OP_Clip, x, lo);
    int both = node(g, IR_OP_Clip, 3, (int[]){ x, lo, hi }, 1);
    int only_max = node(g, IR_OP_Clip, 3, (int[]){ x, -1, hi }, 1);
    int none = op1(g, IR_OP_Clip, x);
    int xi = cst(g, IR_DT_I32, 1, D(3), V(-5, 0, 7));
    int ints = node(g, IR_OP_Clip, 3,
                    (int[]){ xi, cst(g, IR_DT_I32, 0, NULL, V(-2)), cst(g, IR_DT_I32, 0, NULL, V(3)) }, 1);
    int inverted = node(g, IR_OP_Clip, 3, (int[]){ x, cst(g, IR_DT_F32, 0, NULL, V(2)), hi }, 1);
    infer_ok(g);
    expect(g, only_min, 0, IR_DT_F32, 1, D(3), V(-1, 0.5, 3), TOL);
    expect(g, both, 0, IR_DT_F32, 1, D(3), V(-1, 0.5, 1), TOL);
    expect(g, only_max, 0, IR_DT_F32, 1, D(3), V(-2, 0.5, 1), TOL);
    expect(g, none, 0, IR_DT_F32, 1, D(3), V(-2, 0.5, 3), TOL);
    expect_i(g, ints, 0, IR_DT_I32, 1, D(3), D(-2, 0, 3));
    expect(g, inverted, 0, IR_DT_F32, 1, D(3), V(1, 1, 1), TOL);   /* min > max: all max */
    ir_graph_free(g);

    g = ir_graph_new("g", "t.json");
    op2(g, IR_OP_Clip, cst(g, IR_DT_F32, 1, D(3), V(1, 2, 3)), cst(g, IR_DT_F32, 1, D(2), V(0, 1)));
    infer_err(g, "must be a scalar");
    ir_graph_free(g);
}

static void test_cast(void **state)
{
    (void)state;
    IrGraph *g = ir_graph_new("g", "t.json");
    int x = cst(g, IR_DT_F32, 1, D(5), V(-2.7, -0.5, 0, 2.7, 300));
    int ti = op1(g, IR_OP_Cast, x);
    attr_i(g, ti, IR_A_to, 6);                 /* int32 */
    int tb = op1(g, IR_OP_Cast, x);
    attr_i(g, tb, IR_A_to, 9);                 /* bool */
    int th = op1(g, IR_OP_Cast, cst(g, IR_DT_F32, 1, D(2), V(1.0009765625, 65504)));
    attr_i(g, th, IR_A_to, 10);                /* float16 */
    int tbf = op1(g, IR_OP_Cast, cst(g, IR_DT_F32, 1, D(2), V(1.5, -2.25)));
    attr_i(g, tbf, IR_A_to, 16);               /* bfloat16 */
    int tf = op1(g, IR_OP_Cast, cst(g, IR_DT_I64, 1, D(2), V(-3, 1099511627776.0)));
    attr_i(g, tf, IR_A_to, 1);                 /* float32 */
    int bf = op1(g, IR_OP_Cast, cst(g, IR_DT_BOOL, 1, D(2), V(1, 0)));
    attr_i(g, bf, IR_A_to, 11);                /* float64 */
    int hi = op1(g, IR_OP_Cast, cst(g, IR_DT_F16, 1, D(2), V(2.5, -3.5)));
    attr_i(g, hi, IR_A_to, 7);                 /* int64 */
    int like = op2(g, IR_OP_CastLike, cst(g, IR_DT_F32, 1, D(1), V(1.9)), cst(g, IR_DT_I64, 1, D(1), V(0)));
    infer_ok(g);
    expect_i(g, ti, 0, IR_DT_I32, 1, D(5), D(-2, 0, 0, 2, 300));
    expect_i(g, tb, 0, IR_DT_BOOL, 1, D(5), D(1, 1, 0, 1, 1));
    expect(g, th, 0, IR_DT_F16, 1, D(2), V(1.0009765625, 65504), 0);
    expect(g, tbf, 0, IR_DT_BF16, 1, D(2), V(1.5, -2.25), 0);
    expect(g, tf, 0, IR_DT_F32, 1, D(2), V(-3, 1099511627776.0), 0);
    expect(g, bf, 0, IR_DT_F64, 1, D(2), V(1, 0), 0);
    expect_i(g, hi, 0, IR_DT_I64, 1, D(2), D(2, -3));
    expect_i(g, like, 0, IR_DT_I64, 1, D(1), D(1));
    ir_graph_free(g);

    g = ir_graph_new("g", "t.json");
    int f8 = op1(g, IR_OP_Cast, cst(g, IR_DT_F32, 1, D(1), V(1)));
    attr_i(g, f8, IR_A_to, 17);                /* float8e4m3fn */
    infer_err(g, "cannot cast to ONNX data type 17");
    ir_graph_free(g);
    g = ir_graph_new("g", "t.json");
    op1(g, IR_OP_Cast, cst(g, IR_DT_F32, 1, D(1), V(1)));
    infer_err(g, "attribute 'to' is required");
    ir_graph_free(g);
}

static void test_dropout(void **state)
{
    (void)state;
    IrGraph *g = ir_graph_new("g", "t.json");
    int x = cst(g, IR_DT_F32, 2, D(1, 2), V(1, -2));
    int n = node(g, IR_OP_Dropout, 2, (int[]){ x, cst(g, IR_DT_F32, 0, NULL, V(0.5)) }, 2);
    infer_ok(g);
    expect(g, n, 0, IR_DT_F32, 2, D(1, 2), V(1, -2), 0);
    expect_i(g, n, 1, IR_DT_BOOL, 2, D(1, 2), D(1, 1));
    ir_graph_free(g);

    g = ir_graph_new("g", "t.json");
    x = cst(g, IR_DT_F32, 1, D(2), V(1, -2));
    node(g, IR_OP_Dropout, 3, (int[]){ x, -1, cst(g, IR_DT_BOOL, 0, NULL, V(1)) }, 1);
    infer_err(g, "training mode is not supported");
    ir_graph_free(g);
}

/* ---------------------------------------------------------------- binary */

static void test_binary_broadcast(void **state)
{
    (void)state;
    IrGraph *g = ir_graph_new("g", "t.json");
    int add = op2(g, IR_OP_Add, cst(g, IR_DT_F32, 2, D(2, 3), V(1, 2, 3, 4, 5, 6)),
                  cst(g, IR_DT_F32, 1, D(3), V(10, 20, 30)));
    int sub = op2(g, IR_OP_Sub, cst(g, IR_DT_F32, 2, D(2, 1), V(1, 2)), cst(g, IR_DT_F32, 2, D(1, 3), V(10, 20, 30)));
    int mul = op2(g, IR_OP_Mul, cst(g, IR_DT_F32, 0, NULL, V(2)), cst(g, IR_DT_F32, 1, D(3), V(1, 2, 3)));
    int dv = op2(g, IR_OP_Div, cst(g, IR_DT_F32, 1, D(3), V(1, -3, 7)), cst(g, IR_DT_F32, 1, D(3), V(2, 4, -8)));
    double av[6] = { 0, 1, 2, 3, 4, 5 };
    int b3 = op2(g, IR_OP_Add, cst(g, IR_DT_F32, 3, D(2, 1, 3), av), cst(g, IR_DT_F32, 2, D(4, 1), V(0, 10, 20, 30)));
    int h = op2(g, IR_OP_Add, cst(g, IR_DT_F16, 1, D(2), V(1.5, 2)), cst(g, IR_DT_F16, 0, NULL, V(0.25)));
    infer_ok(g);
    expect(g, add, 0, IR_DT_F32, 2, D(2, 3), V(11, 22, 33, 14, 25, 36), TOL);
    expect(g, sub, 0, IR_DT_F32, 2, D(2, 3), V(-9, -19, -29, -8, -18, -28), TOL);
    expect(g, mul, 0, IR_DT_F32, 1, D(3), V(2, 4, 6), TOL);
    expect(g, dv, 0, IR_DT_F32, 1, D(3), V(0.5, -0.75, -0.875), TOL);
    double want[24];
    for (int i = 0; i < 2; i++)               /* y[i,j,k] = a[i,0,k] + b[j,0] */
        for (int j = 0; j < 4; j++)
            for (int k = 0; k < 3; k++)
                want[(i * 4 + j) * 3 + k] = av[i * 3 + k] + 10.0 * j;
    expect(g, b3, 0, IR_DT_F32, 3, D(2, 4, 3), want, TOL);
    expect(g, h, 0, IR_DT_F16, 1, D(2), V(1.75, 2.25), 0);
    ir_graph_free(g);

    g = ir_graph_new("g", "t.json");
    op2(g, IR_OP_Add, cst(g, IR_DT_F32, 2, D(2, 3), av), cst(g, IR_DT_F32, 1, D(2), V(1, 2)));
    infer_err(g, "shapes [2,3] and [2] cannot be broadcast together");
    ir_graph_free(g);
    g = ir_graph_new("g", "t.json");
    op2(g, IR_OP_Add, cst(g, IR_DT_F32, 1, D(2), V(1, 2)), cst(g, IR_DT_I32, 1, D(2), V(1, 2)));
    infer_err(g, "must have the same dtype");
    ir_graph_free(g);
}

static void test_int_div_mod(void **state)
{
    (void)state;
    IrGraph *g = ir_graph_new("g", "t.json");
    int a = cst(g, IR_DT_I32, 1, D(4), V(7, -7, 7, -7));
    int dv = op2(g, IR_OP_Div, a, cst(g, IR_DT_I32, 1, D(4), V(2, 2, -2, -2)));
    int b3 = cst(g, IR_DT_I32, 1, D(4), V(3, 3, -3, -3));
    int md = op2(g, IR_OP_Mod, a, b3);
    int fm = op2(g, IR_OP_Mod, a, b3);
    attr_i(g, fm, IR_A_fmod, 1);
    int ff = op2(g, IR_OP_Mod, cst(g, IR_DT_F32, 1, D(2), V(-7.5, 7.5)), cst(g, IR_DT_F32, 1, D(2), V(2, -2)));
    attr_i(g, ff, IR_A_fmod, 1);
    int big = op2(g, IR_OP_Div, cst(g, IR_DT_I64, 1, D(1), V(-9223372036854775808.0)),
                  cst(g, IR_DT_I64, 1, D(1), V(-1)));
    int u8 = op2(g, IR_OP_Div, cst(g, IR_DT_U8, 1, D(1), V(200)), cst(g, IR_DT_U8, 1, D(1), V(3)));
    int wrap = op2(g, IR_OP_Sub, cst(g, IR_DT_U8, 1, D(1), V(1)), cst(g, IR_DT_U8, 1, D(1), V(2)));
    infer_ok(g);
    expect_i(g, dv, 0, IR_DT_I32, 1, D(4), D(3, -3, -3, 3));
    expect_i(g, md, 0, IR_DT_I32, 1, D(4), D(1, 2, -2, -1));   /* sign of the divisor */
    expect_i(g, fm, 0, IR_DT_I32, 1, D(4), D(1, -1, 1, -1));   /* sign of the dividend */
    expect(g, ff, 0, IR_DT_F32, 1, D(2), V(-1.5, 1.5), TOL);
    expect_i(g, big, 0, IR_DT_I64, 1, D(1), D(INT64_MIN));      /* wraps, no UB */
    expect_i(g, u8, 0, IR_DT_U8, 1, D(1), D(66));
    expect_i(g, wrap, 0, IR_DT_U8, 1, D(1), D(255));
    ir_graph_free(g);

    g = ir_graph_new("g", "t.json");
    op2(g, IR_OP_Div, cst(g, IR_DT_I32, 1, D(2), V(1, 2)), cst(g, IR_DT_I32, 1, D(2), V(1, 0)));
    infer_err(g, "integer division by zero");
    ir_graph_free(g);
    g = ir_graph_new("g", "t.json");
    op2(g, IR_OP_Mod, cst(g, IR_DT_I64, 1, D(1), V(1)), cst(g, IR_DT_I64, 1, D(1), V(0)));
    infer_err(g, "integer modulo by zero");
    ir_graph_free(g);
    g = ir_graph_new("g", "t.json");
    op2(g, IR_OP_Mod, cst(g, IR_DT_F32, 1, D(1), V(1)), cst(g, IR_DT_F32, 1, D(1), V(2)));
    infer_err(g, "fmod must be 1 for floating-point inputs");
    ir_graph_free(g);
}

static void test_pow_prelu_bitshift(void **state)
{
    (void)state;
    IrGraph *g = ir_graph_new("g", "t.json");
    int pf = op2(g, IR_OP_Pow, cst(g, IR_DT_F32, 1, D(3), V(2, 3, 4)), cst(g, IR_DT_I64, 1, D(3), V(3, 2, -1)));
    int ph = op2(g, IR_OP_Pow, cst(g, IR_DT_F32, 2, D(2, 1), V(4, 9)), cst(g, IR_DT_F32, 0, NULL, V(0.5)));
    int pi = op2(g, IR_OP_Pow, cst(g, IR_DT_I32, 1, D(3), V(3, 2, -2)), cst(g, IR_DT_I32, 1, D(3), V(4, -1, 3)));
    int pr = op2(g, IR_OP_PRelu, cst(g, IR_DT_F32, 2, D(2, 3), V(-1, 2, -3, 4, -5, 6)),
                 cst(g, IR_DT_F32, 1, D(3), V(0.1, 0.2, 0.3)));
    int sl = op2(g, IR_OP_BitShift, cst(g, IR_DT_U8, 1, D(3), V(1, 2, 255)), cst(g, IR_DT_U8, 1, D(3), V(1, 2, 1)));
    attr_s(g, sl, IR_A_direction, "LEFT");
    int sr = op2(g, IR_OP_BitShift, cst(g, IR_DT_U32, 1, D(3), V(16, 255, 7)), cst(g, IR_DT_U32, 1, D(3), V(2, 4, 0)));
    attr_s(g, sr, IR_A_direction, "RIGHT");
    infer_ok(g);
    expect(g, pf, 0, IR_DT_F32, 1, D(3), V(8, 9, 0.25), TOL);
    expect(g, ph, 0, IR_DT_F32, 2, D(2, 1), V(2, 3), TOL);
    expect_i(g, pi, 0, IR_DT_I32, 1, D(3), D(81, 0, -8));
    expect(g, pr, 0, IR_DT_F32, 2, D(2, 3), V(-0.1, 2, -0.9, 4, -1.0, 6), TOL);
    expect_i(g, sl, 0, IR_DT_U8, 1, D(3), D(2, 8, 254));
    expect_i(g, sr, 0, IR_DT_U32, 1, D(3), D(4, 15, 7));
    ir_graph_free(g);

    g = ir_graph_new("g", "t.json");
    op2(g, IR_OP_PRelu, cst(g, IR_DT_F32, 1, D(3), V(1, 2, 3)), cst(g, IR_DT_F32, 2, D(2, 3), V(1, 2, 3, 4, 5, 6)));
    infer_err(g, "shape [2,3] cannot be broadcast to [3]");
    ir_graph_free(g);
    g = ir_graph_new("g", "t.json");
    int bs = op2(g, IR_OP_BitShift, cst(g, IR_DT_I32, 1, D(1), V(1)), cst(g, IR_DT_I32, 1, D(1), V(1)));
    attr_s(g, bs, IR_A_direction, "LEFT");
    infer_err(g, "BitShift needs unsigned integers");
    ir_graph_free(g);
    g = ir_graph_new("g", "t.json");
    op2(g, IR_OP_BitShift, cst(g, IR_DT_U8, 1, D(1), V(1)), cst(g, IR_DT_U8, 1, D(1), V(1)));
    infer_err(g, "direction must be \"LEFT\" or \"RIGHT\"");
    ir_graph_free(g);
}

static void test_compare_logic(void **state)
{
    (void)state;
    IrGraph *g = ir_graph_new("g", "t.json");
    int a = cst(g, IR_DT_F32, 1, D(3), V(1, 2, 3)), b = cst(g, IR_DT_F32, 1, D(3), V(2, 2, 2));
    int lt = op2(g, IR_OP_Less, a, b), le = op2(g, IR_OP_LessOrEqual, a, b);
    int gt = op2(g, IR_OP_Greater, a, b), ge = op2(g, IR_OP_GreaterOrEqual, a, b);
    int eq = op2(g, IR_OP_Equal, a, b);
    int il = op2(g, IR_OP_Less, cst(g, IR_DT_I64, 2, D(2, 1), V(1, 5)), cst(g, IR_DT_I64, 1, D(3), V(0, 3, 6)));
    int p = cst(g, IR_DT_BOOL, 1, D(4), V(1, 1, 0, 0)), q = cst(g, IR_DT_BOOL, 1, D(4), V(1, 0, 1, 0));
    int an = op2(g, IR_OP_And, p, q), orr = op2(g, IR_OP_Or, p, q), xr = op2(g, IR_OP_Xor, p, q);
    int beq = op2(g, IR_OP_Equal, p, q);
    infer_ok(g);
    expect_i(g, lt, 0, IR_DT_BOOL, 1, D(3), D(1, 0, 0));
    expect_i(g, le, 0, IR_DT_BOOL, 1, D(3), D(1, 1, 0));
    expect_i(g, gt, 0, IR_DT_BOOL, 1, D(3), D(0, 0, 1));
    expect_i(g, ge, 0, IR_DT_BOOL, 1, D(3), D(0, 1, 1));
    expect_i(g, eq, 0, IR_DT_BOOL, 1, D(3), D(0, 1, 0));
    expect_i(g, il, 0, IR_DT_BOOL, 2, D(2, 3), D(0, 1, 1, 0, 0, 1));
    expect_i(g, an, 0, IR_DT_BOOL, 1, D(4), D(1, 0, 0, 0));
    expect_i(g, orr, 0, IR_DT_BOOL, 1, D(4), D(1, 1, 1, 0));
    expect_i(g, xr, 0, IR_DT_BOOL, 1, D(4), D(0, 1, 1, 0));
    expect_i(g, beq, 0, IR_DT_BOOL, 1, D(4), D(1, 0, 0, 1));
    ir_graph_free(g);

    g = ir_graph_new("g", "t.json");
    op2(g, IR_OP_And, cst(g, IR_DT_F32, 1, D(1), V(1)), cst(g, IR_DT_F32, 1, D(1), V(1)));
    infer_err(g, "And needs bool");
    ir_graph_free(g);
}

static void test_variadic_where(void **state)
{
    (void)state;
    IrGraph *g = ir_graph_new("g", "t.json");
    int a = cst(g, IR_DT_F32, 2, D(2, 1), V(1, 5)), b = cst(g, IR_DT_F32, 1, D(3), V(0, 3, 6));
    int c = cst(g, IR_DT_F32, 0, NULL, V(4));
    int three[3] = { a, b, c };
    int mx = node(g, IR_OP_Max, 3, three, 1), mn = node(g, IR_OP_Min, 3, three, 1);
    int sm = node(g, IR_OP_Sum, 3, three, 1), me = node(g, IR_OP_Mean, 3, three, 1);
    int one = op1(g, IR_OP_Min, b);
    int im = op2(g, IR_OP_Mean, cst(g, IR_DT_I32, 1, D(1), V(7)), cst(g, IR_DT_I32, 1, D(1), V(2)));
    int nanmax = op2(g, IR_OP_Max, cst(g, IR_DT_F32, 1, D(2), V(NAN, 1)), cst(g, IR_DT_F32, 1, D(2), V(2, 3)));
    int wh = node(g, IR_OP_Where, 3,
                  (int[]){ cst(g, IR_DT_BOOL, 2, D(2, 1), V(1, 0)), cst(g, IR_DT_I64, 1, D(3), V(1, 2, 3)),
                           cst(g, IR_DT_I64, 0, NULL, V(9)) }, 1);
    infer_ok(g);
    expect(g, mx, 0, IR_DT_F32, 2, D(2, 3), V(4, 4, 6, 5, 5, 6), TOL);
    expect(g, mn, 0, IR_DT_F32, 2, D(2, 3), V(0, 1, 1, 0, 3, 4), TOL);
    expect(g, sm, 0, IR_DT_F32, 2, D(2, 3), V(5, 8, 11, 9, 12, 15), TOL);
    expect(g, me, 0, IR_DT_F32, 2, D(2, 3), V(5.0 / 3, 8.0 / 3, 11.0 / 3, 3, 4, 5), TOL);
    expect(g, one, 0, IR_DT_F32, 1, D(3), V(0, 3, 6), 0);
    expect_i(g, im, 0, IR_DT_I32, 1, D(1), D(4));
    expect(g, nanmax, 0, IR_DT_F32, 1, D(2), V(NAN, 3), 0);
    expect_i(g, wh, 0, IR_DT_I64, 2, D(2, 3), D(1, 2, 3, 9, 9, 9));
    ir_graph_free(g);

    g = ir_graph_new("g", "t.json");
    node(g, IR_OP_Where, 3, (int[]){ b = cst(g, IR_DT_F32, 1, D(1), V(1)), b, b }, 1);
    infer_err(g, "must be bool");
    ir_graph_free(g);
}

/* ------------------------------------------------------------- reductions */

static void test_reduce_all_ops(void **state)
{
    (void)state;
    static const struct { IrOp op; double y[2]; } cases[] = {
        { IR_OP_ReduceSum, { 6.0, 3.5 } },
        { IR_OP_ReduceMean, { 2.0, 1.1666666666666667 } },
        { IR_OP_ReduceMax, { 3.0, 4.0 } },
        { IR_OP_ReduceMin, { 1.0, -1.0 } },
        { IR_OP_ReduceProd, { 6.0, -2.0 } },
        { IR_OP_ReduceL1, { 6.0, 5.5 } },
        { IR_OP_ReduceL2, { 3.7416573867739413, 4.153311931459037 } },
        { IR_OP_ReduceSumSquare, { 14.0, 17.25 } },
        { IR_OP_ReduceLogSum, { 1.791759469228055, 1.252762968495368 } },
        { IR_OP_ReduceLogSumExp, { 3.40760596444438, 4.036269565124779 } },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        IrGraph *g = ir_graph_new("g", "t.json");
        int x = cst(g, IR_DT_F32, 2, D(2, 3), V(1, 2, 3, 4, -1, 0.5));
        int n = op2(g, cases[c].op, x, cst(g, IR_DT_I64, 1, D(1), V(1)));
        infer_ok(g);
        print_message("%s\n", ir_op_name(cases[c].op));
        expect(g, n, 0, IR_DT_F32, 2, D(2, 1), cases[c].y, TOL);
        ir_graph_free(g);
    }
}

static void test_reduce_axes_rules(void **state)
{
    (void)state;
    IrGraph *g = ir_graph_new("g", "t.json");
    int x = cst(g, IR_DT_F32, 2, D(2, 3), V(1, 2, 3, 4, -1, 0.5));
    int neg = op2(g, IR_OP_ReduceSum, x, cst(g, IR_DT_I64, 1, D(1), V(-2)));
    attr_i(g, neg, IR_A_keepdims, 0);
    int all_keep = op1(g, IR_OP_ReduceSum, x);
    int all_drop = op1(g, IR_OP_ReduceMax, x);
    attr_i(g, all_drop, IR_A_keepdims, 0);
    int empty_axes = op2(g, IR_OP_ReduceSum, x, cst(g, IR_DT_I64, 1, D(0), NULL));
    int noop = op2(g, IR_OP_ReduceSum, x, cst(g, IR_DT_I64, 1, D(0), NULL));
    attr_i(g, noop, IR_A_noop_with_empty_axes, 1);
    int both = op2(g, IR_OP_ReduceProd, x, cst(g, IR_DT_I64, 1, D(2), V(1, 0)));
    attr_i(g, both, IR_A_keepdims, 0);
    int imean = op1(g, IR_OP_ReduceMean, cst(g, IR_DT_I32, 1, D(2), V(3, 4)));
    int imax = op1(g, IR_OP_ReduceMax, cst(g, IR_DT_I64, 1, D(3), V(-5, 9, 2)));
    int xb = cst(g, IR_DT_BOOL, 2, D(2, 2), V(0, 1, 0, 0)), a1 = cst(g, IR_DT_I64, 1, D(1), V(1));
    int bmax = op2(g, IR_OP_ReduceMax, xb, a1), bmin = op2(g, IR_OP_ReduceMin, xb, a1);
    int bempty = op2(g, IR_OP_ReduceMax, cst(g, IR_DT_BOOL, 2, D(1, 0), NULL), a1);
    infer_ok(g);
    expect_i(g, bmax, 0, IR_DT_BOOL, 2, D(2, 1), D(1, 0));
    expect_i(g, bmin, 0, IR_DT_BOOL, 2, D(2, 1), D(0, 0));
    expect_i(g, bempty, 0, IR_DT_BOOL, 2, D(1, 1), D(0));
    expect(g, neg, 0, IR_DT_F32, 1, D(3), V(5, 1, 3.5), TOL);
    expect(g, all_keep, 0, IR_DT_F32, 2, D(1, 1), V(9.5), TOL);
    expect(g, all_drop, 0, IR_DT_F32, 0, NULL, V(4), TOL);
    expect(g, empty_axes, 0, IR_DT_F32, 2, D(1, 1), V(9.5), TOL);
    expect(g, noop, 0, IR_DT_F32, 2, D(2, 3), V(1, 2, 3, 4, -1, 0.5), 0);
    expect(g, both, 0, IR_DT_F32, 0, NULL, V(-12), TOL);
    expect_i(g, imean, 0, IR_DT_I32, 1, D(1), D(3));     /* 7/2 truncated */
    expect_i(g, imax, 0, IR_DT_I64, 1, D(1), D(9));
    ir_graph_free(g);
}

/* Non-adjacent axes on a 3-D tensor, and LogSumExp of large values (stable:
 * naive exp(800) overflows).  Expected values from numpy. */
static void test_reduce_multi_axes(void **state)
{
    (void)state;
    IrGraph *g = ir_graph_new("g", "t.json");
    double xv[24], xb[24];
    for (int i = 0; i < 24; i++) {
        xv[i] = i * 0.5 - 3;
        xb[i] = xv[i] * 100;
    }
    int ax = cst(g, IR_DT_I64, 1, D(2), V(0, -1));
    int sm = op2(g, IR_OP_ReduceSum, cst(g, IR_DT_F32, 3, D(2, 3, 4), xv), ax);
    attr_i(g, sm, IR_A_keepdims, 0);
    int lse = op2(g, IR_OP_ReduceLogSumExp, cst(g, IR_DT_F32, 3, D(2, 3, 4), xv), ax);
    attr_i(g, lse, IR_A_keepdims, 0);
    int big = op2(g, IR_OP_ReduceLogSumExp, cst(g, IR_DT_F32, 3, D(2, 3, 4), xb), ax);
    double yv[12];
    for (int i = 0; i < 12; i++)
        yv[i] = i * 0.3;
    int smx = op1(g, IR_OP_Softmax, cst(g, IR_DT_F32, 3, D(2, 3, 2), yv));
    attr_i(g, smx, IR_A_axis, 1);
    infer_ok(g);
    expect(g, sm, 0, IR_DT_F32, 1, D(3), V(6, 22, 38), TOL);
    expect(g, lse, 0, IR_DT_F32, 1, D(3), V(5.28981435683606, 7.289814356836059, 9.28981435683606), TOL);
    expect(g, big, 0, IR_DT_F32, 3, D(1, 3, 1), V(450, 650, 850), TOL);
    expect(g, smx, 0, IR_DT_F32, 3, D(2, 3, 2),
           V(0.16280716746749874, 0.16280716746749876, 0.29665400068085557, 0.2966540006808555, 0.5405388318516456,
             0.5405388318516458, 0.1628071674674987, 0.1628071674674988, 0.2966540006808555, 0.29665400068085546,
             0.5405388318516458, 0.5405388318516456), TOL);
    ir_graph_free(g);
}

/* Reductions over an empty set (ONNX: identity of the operation). */
static void test_reduce_empty_set(void **state)
{
    (void)state;
    IrGraph *g = ir_graph_new("g", "t.json");
    int x = cst(g, IR_DT_F32, 2, D(2, 0), NULL), ax = cst(g, IR_DT_I64, 1, D(1), V(1));
    int mx = op2(g, IR_OP_ReduceMax, x, ax), mn = op2(g, IR_OP_ReduceMin, x, ax);
    int sm = op2(g, IR_OP_ReduceSum, x, ax), pr = op2(g, IR_OP_ReduceProd, x, ax);
    int lse = op2(g, IR_OP_ReduceLogSumExp, x, ax), l2 = op2(g, IR_OP_ReduceL2, x, ax);
    int xi = cst(g, IR_DT_I32, 2, D(2, 0), NULL);
    int imx = op2(g, IR_OP_ReduceMax, xi, ax);
    int i8mn = op2(g, IR_OP_ReduceMin, cst(g, IR_DT_I8, 2, D(1, 0), NULL), ax);
    infer_ok(g);
    expect(g, mx, 0, IR_DT_F32, 2, D(2, 1), V(-INFINITY, -INFINITY), 0);
    expect(g, mn, 0, IR_DT_F32, 2, D(2, 1), V(INFINITY, INFINITY), 0);
    expect(g, sm, 0, IR_DT_F32, 2, D(2, 1), V(0, 0), 0);
    expect(g, pr, 0, IR_DT_F32, 2, D(2, 1), V(1, 1), 0);
    expect(g, lse, 0, IR_DT_F32, 2, D(2, 1), V(-INFINITY, -INFINITY), 0);
    expect(g, l2, 0, IR_DT_F32, 2, D(2, 1), V(0, 0), 0);
    expect_i(g, imx, 0, IR_DT_I32, 2, D(2, 1), D(INT32_MIN, INT32_MIN));
    expect_i(g, i8mn, 0, IR_DT_I8, 2, D(1, 1), D(127));
    ir_graph_free(g);
}

static void test_reduce_errors(void **state)
{
    (void)state;
    IrGraph *g = ir_graph_new("g", "t.json");
    op2(g, IR_OP_ReduceSum, cst(g, IR_DT_F32, 2, D(2, 3), V(1, 2, 3, 4, 5, 6)), cst(g, IR_DT_I64, 1, D(1), V(2)));
    infer_err(g, "axis 2 is out of range for rank 2");
    ir_graph_free(g);
    g = ir_graph_new("g", "t.json");
    op2(g, IR_OP_ReduceSum, cst(g, IR_DT_F32, 2, D(2, 3), V(1, 2, 3, 4, 5, 6)),
        cst(g, IR_DT_I64, 1, D(2), V(1, -1)));
    infer_err(g, "appears twice in axes");
    ir_graph_free(g);
}

static void test_argreduce(void **state)
{
    (void)state;
    IrGraph *g = ir_graph_new("g", "t.json");
    int x = cst(g, IR_DT_F32, 2, D(2, 3), V(1, 3, 3, 4, -1, 4));
    int am = op1(g, IR_OP_ArgMax, x);
    attr_i(g, am, IR_A_axis, 1);
    int last = op1(g, IR_OP_ArgMax, x);
    attr_i(g, last, IR_A_axis, 1);
    attr_i(g, last, IR_A_select_last_index, 1);
    int mn = op1(g, IR_OP_ArgMin, x);
    attr_i(g, mn, IR_A_axis, -2);
    attr_i(g, mn, IR_A_keepdims, 0);
    int im = op1(g, IR_OP_ArgMin, cst(g, IR_DT_I32, 1, D(4), V(5, -2, 7, -2)));
    int nan = op1(g, IR_OP_ArgMin, cst(g, IR_DT_F32, 1, D(4), V(5, NAN, -7, NAN)));
    infer_ok(g);
    expect_i(g, nan, 0, IR_DT_I64, 1, D(1), D(1));      /* numpy: the first NaN */
    expect_i(g, am, 0, IR_DT_I64, 2, D(2, 1), D(1, 0));
    expect_i(g, last, 0, IR_DT_I64, 2, D(2, 1), D(2, 2));
    expect_i(g, mn, 0, IR_DT_I64, 1, D(3), D(0, 1, 0));
    expect_i(g, im, 0, IR_DT_I64, 1, D(1), D(1));
    ir_graph_free(g);

    g = ir_graph_new("g", "t.json");
    int bad = op1(g, IR_OP_ArgMax, cst(g, IR_DT_F32, 1, D(2), V(1, 2)));
    attr_i(g, bad, IR_A_axis, 1);
    infer_err(g, "axis 1 is out of range for rank 1");
    ir_graph_free(g);
}

static void test_softmax(void **state)
{
    (void)state;
    IrGraph *g = ir_graph_new("g", "t.json");
    int x = cst(g, IR_DT_F32, 2, D(2, 3), V(1, 2, 3, 4, -1, 0.5));
    int sm = op1(g, IR_OP_Softmax, x), ls = op1(g, IR_OP_LogSoftmax, x), hm = op1(g, IR_OP_Hardmax, x);
    attr_i(g, hm, IR_A_axis, 0);
    int big = op1(g, IR_OP_Softmax, cst(g, IR_DT_F32, 1, D(3), V(1000, 1001, 1002)));
    int ax0 = op1(g, IR_OP_Softmax, cst(g, IR_DT_F32, 2, D(2, 1), V(0, 0)));
    attr_i(g, ax0, IR_A_axis, 0);
    infer_ok(g);
    expect(g, sm, 0, IR_DT_F32, 2, D(2, 3),
           V(0.09003057317038043, 0.24472847105479767, 0.6652409557748218, 0.9643802951468596, 0.00649794331566194,
             0.0291217615374784), TOL);
    expect(g, ls, 0, IR_DT_F32, 2, D(2, 3),
           V(-2.4076059644443806, -1.4076059644443801, -0.40760596444438046, -0.03626956512477915,
             -5.036269565124779, -3.536269565124779), TOL);
    expect(g, hm, 0, IR_DT_F32, 2, D(2, 3), V(0, 1, 1, 1, 0, 0), 0);
    expect(g, big, 0, IR_DT_F32, 1, D(3), V(0.09003057317038043, 0.24472847105479767, 0.6652409557748218), TOL);
    expect(g, ax0, 0, IR_DT_F32, 2, D(2, 1), V(0.5, 0.5), TOL);
    ir_graph_free(g);
}

/* ---------------------------------------------------------- normalization */

static void test_batchnorm(void **state)
{
    (void)state;
    IrGraph *g = ir_graph_new("g", "t.json");
    int in[5] = { cst(g, IR_DT_F32, 3, D(1, 2, 2), V(1, 2, 3, 4)), cst(g, IR_DT_F32, 1, D(2), V(2, 0.5)),
                  cst(g, IR_DT_F32, 1, D(2), V(1, -1)), cst(g, IR_DT_F32, 1, D(2), V(1.5, 3)),
                  cst(g, IR_DT_F32, 1, D(2), V(0.25, 4)) };
    int bn = node(g, IR_OP_BatchNormalization, 5, in, 1);
    infer_ok(g);
    expect(g, bn, 0, IR_DT_F32, 3, D(1, 2, 2), V(-0.9999600011999599, 2.99996000119996, -1.0, -0.7500003124994141),
           TOL);
    ir_graph_free(g);

    /* training mode: the batch's statistics per channel (c0 {1, 3}: mean 2, var 1; c1 {2, 6}: mean 4,
     * var 4), running statistics = input * 0.9 + the batch's * 0.1 (ONNX's reference) */
    g = ir_graph_new("g", "t.json");
    in[0] = cst(g, IR_DT_F32, 3, D(2, 2, 1), V(1, 2, 3, 6));
    for (int i = 1; i < 5; i++)
        in[i] = cst(g, IR_DT_F32, 1, D(2), i == 2 ? V(0, 0) : V(1, 1));
    bn = node(g, IR_OP_BatchNormalization, 5, in, 3);
    attr_i(g, bn, IR_A_training_mode, 1);
    infer_ok(g);
    expect(g, bn, 0, IR_DT_F32, 3, D(2, 2, 1),
           V(-0.9999950000374997, -0.9999987500023437, 0.9999950000374997, 0.9999987500023437), TOL);
    expect(g, bn, 1, IR_DT_F32, 1, D(2), V(1.1, 1.3), TOL);
    expect(g, bn, 2, IR_DT_F32, 1, D(2), V(1.0, 1.3), TOL);
    ir_graph_free(g);

    g = ir_graph_new("g", "t.json");
    for (int i = 0; i < 5; i++)
        in[i] = cst(g, IR_DT_F32, i ? 1 : 3, i ? D(2) : D(1, 2, 2), V(1, 1, 1, 1));
    bn = node(g, IR_OP_BatchNormalization, 5, in, 3);
    infer_err(g, "exist only in training mode");
    ir_graph_free(g);

    g = ir_graph_new("g", "t.json");
    for (int i = 0; i < 5; i++)
        in[i] = cst(g, IR_DT_F32, i ? 1 : 3, i == 1 ? D(3) : i ? D(2) : D(1, 2, 2), V(1, 1, 1, 1));
    node(g, IR_OP_BatchNormalization, 5, in, 1);
    infer_err(g, "has shape [3]; expected [2]");
    ir_graph_free(g);
}

static void test_instancenorm_lpnorm(void **state)
{
    (void)state;
    IrGraph *g = ir_graph_new("g", "t.json");
    int in = node(g, IR_OP_InstanceNormalization, 3,
                  (int[]){ cst(g, IR_DT_F32, 3, D(1, 2, 3), V(1, 2, 3, 2, 4, 8)), cst(g, IR_DT_F32, 1, D(2), V(1, 2)),
                           cst(g, IR_DT_F32, 1, D(2), V(0, 0.5)) }, 1);
    int l = cst(g, IR_DT_F32, 2, D(2, 2), V(3, 4, -1, 1));
    int p2 = op1(g, IR_OP_LpNormalization, l);
    int p1 = op1(g, IR_OP_LpNormalization, l);
    attr_i(g, p1, IR_A_axis, 0);
    attr_i(g, p1, IR_A_p, 1);
    infer_ok(g);
    expect(g, in, 0, IR_DT_F32, 3, D(1, 2, 3),
           V(-1.2247356859083902, 0.0, 1.2247356859083902, -1.6380882171934825, -0.03452205429837085,
             3.1726102714918527), TOL);
    expect(g, p2, 0, IR_DT_F32, 2, D(2, 2), V(0.6, 0.8, -0.7071067811865475, 0.7071067811865475), TOL);
    expect(g, p1, 0, IR_DT_F32, 2, D(2, 2), V(0.75, 0.8, -0.25, 0.2), TOL);
    ir_graph_free(g);

    g = ir_graph_new("g", "t.json");
    int p3 = op1(g, IR_OP_LpNormalization, cst(g, IR_DT_F32, 1, D(2), V(1, 2)));
    attr_i(g, p3, IR_A_p, 3);
    infer_err(g, "p must be 1 or 2");
    ir_graph_free(g);
}

static void test_layernorm(void **state)
{
    (void)state;
    IrGraph *g = ir_graph_new("g", "t.json");
    int ln = node(g, IR_OP_LayerNormalization, 3,
                  (int[]){ cst(g, IR_DT_F32, 2, D(2, 3), V(1, 2, 4, -1, 0, 3)), cst(g, IR_DT_F32, 1, D(3), V(1, 2, 0.5)),
                           cst(g, IR_DT_F32, 1, D(3), V(0, 1, -1)) }, 3);
    int a0 = op1(g, IR_OP_LayerNormalization, cst(g, IR_DT_F32, 2, D(2, 2), V(1, 3, 5, 7)));
    attr_i(g, a0, IR_A_axis, 0);
    infer_ok(g);
    expect(g, ln, 0, IR_DT_F32, 2, D(2, 3),
           V(-1.0690415314502977, 0.46547923427485094, -0.3318490428435641, -0.9805789785364643, 0.2155368171708285,
             -0.3135947150244749), TOL);
    expect(g, ln, 1, IR_DT_F32, 2, D(2, 1), V(2.3333333333333335, 0.6666666666666666), TOL);
    expect(g, ln, 2, IR_DT_F32, 2, D(2, 1), V(0.8017811485877232, 0.5883473871218786), TOL);
    expect(g, a0, 0, IR_DT_F32, 2, D(2, 2), V(-1.3416394448610998, -0.4472131482870333, 0.4472131482870333,
                                              1.3416394448610998), TOL);
    ir_graph_free(g);

    /* stats outputs with X's dims before axis: [2,3,2] with axis 1 -> [2,1,1] */
    g = ir_graph_new("g", "t.json");
    double xv[12] = { 1, 1, 1, 1, 1, 1, 0, 2, 0, 2, 0, 2 };
    ln = node(g, IR_OP_LayerNormalization, 1, (int[]){ cst(g, IR_DT_F32, 3, D(2, 3, 2), xv) }, 2);
    attr_i(g, ln, IR_A_axis, 1);
    infer_ok(g);
    expect(g, ln, 1, IR_DT_F32, 3, D(2, 1, 1), V(1, 1), TOL);
    expect(g, ln, 0, IR_DT_F32, 3, D(2, 3, 2), V(0, 0, 0, 0, 0, 0, -0.999995000037, 0.999995000037,
                                                 -0.999995000037, 0.999995000037, -0.999995000037, 0.999995000037),
           TOL);
    ir_graph_free(g);

    g = ir_graph_new("g", "t.json");
    op2(g, IR_OP_LayerNormalization, cst(g, IR_DT_F32, 2, D(2, 3), V(1, 2, 3, 4, 5, 6)),
        cst(g, IR_DT_F32, 1, D(2), V(1, 1)));
    infer_err(g, "cannot be broadcast");
    ir_graph_free(g);
}

/* -------------------------------------------------------- matrix products */

static void test_matmul(void **state)
{
    (void)state;
    IrGraph *g = ir_graph_new("g", "t.json");
    int a = cst(g, IR_DT_F32, 2, D(2, 3), V(1, 2, 3, 4, 5, 6)), b = cst(g, IR_DT_F32, 2, D(3, 2), V(7, 8, 9, 10, 11, 12));
    int v3 = cst(g, IR_DT_F32, 1, D(3), V(1, 2, 3));
    int mm = op2(g, IR_OP_MatMul, a, b);
    int vm = op2(g, IR_OP_MatMul, v3, b);
    int mv = op2(g, IR_OP_MatMul, a, cst(g, IR_DT_F32, 1, D(3), V(1, 0, -1)));
    int vv = op2(g, IR_OP_MatMul, v3, cst(g, IR_DT_F32, 1, D(3), V(4, 5, 6)));
    double av[12], bv[18];
    for (int i = 0; i < 12; i++)
        av[i] = i;
    for (int i = 0; i < 18; i++)
        bv[i] = i - 5;
    int bt = op2(g, IR_OP_MatMul, cst(g, IR_DT_F32, 4, D(2, 1, 2, 3), av), cst(g, IR_DT_F32, 3, D(3, 3, 2), bv));
    int im = op2(g, IR_OP_MatMul, cst(g, IR_DT_I32, 2, D(2, 2), V(1, 2, 3, 4)), cst(g, IR_DT_I32, 2, D(2, 2), V(5, 6, 7, 8)));
    int dm = op2(g, IR_OP_MatMul, cst(g, IR_DT_F64, 2, D(2, 2), V(1, 2, 3, 4)), cst(g, IR_DT_F64, 1, D(2), V(1, 1)));
    infer_ok(g);
    expect(g, mm, 0, IR_DT_F32, 2, D(2, 2), V(58, 64, 139, 154), TOL);
    expect(g, vm, 0, IR_DT_F32, 1, D(2), V(58, 64), TOL);
    expect(g, mv, 0, IR_DT_F32, 1, D(2), V(-2, -2), TOL);
    expect(g, vv, 0, IR_DT_F32, 0, NULL, V(32), TOL);
    expect(g, bt, 0, IR_DT_F32, 4, D(2, 3, 2, 2),
           V(-5, -2, -32, -20, 13, 16, 40, 52, 31, 34, 112, 124, -59, -38, -86, -56, 67, 88, 94, 124, 193, 214, 274, 304),
           TOL);
    expect_i(g, im, 0, IR_DT_I32, 2, D(2, 2), D(19, 22, 43, 50));
    expect(g, dm, 0, IR_DT_F64, 1, D(2), V(3, 7), 0);
    ir_graph_free(g);

    g = ir_graph_new("g", "t.json");
    op2(g, IR_OP_MatMul, cst(g, IR_DT_F32, 2, D(2, 3), av), cst(g, IR_DT_F32, 2, D(2, 2), av));
    infer_err(g, "inner dimensions of [2,3] and [2,2] differ");
    ir_graph_free(g);
    g = ir_graph_new("g", "t.json");
    op2(g, IR_OP_MatMul, cst(g, IR_DT_F32, 3, D(2, 1, 1), av), cst(g, IR_DT_F32, 3, D(3, 1, 1), av));
    infer_err(g, "cannot be broadcast together");
    ir_graph_free(g);
}

static void test_gemm(void **state)
{
    (void)state;
    IrGraph *g = ir_graph_new("g", "t.json");
    int t = node(g, IR_OP_Gemm, 3,
                 (int[]){ cst(g, IR_DT_F32, 2, D(3, 2), V(1, 2, 3, 4, 5, 6)), cst(g, IR_DT_F32, 2, D(2, 3), V(1, 0, 2, -1, 1, 0)),
                          cst(g, IR_DT_F32, 1, D(2), V(10, 20)) }, 1);
    attr_i(g, t, IR_A_transA, 1);
    attr_i(g, t, IR_A_transB, 1);
    attr_f(g, t, IR_A_alpha, 0.5);
    attr_f(g, t, IR_A_beta, 2.0);
    int a = cst(g, IR_DT_F32, 2, D(2, 2), V(1, 2, 3, 4)), eye = cst(g, IR_DT_F32, 2, D(2, 2), V(1, 0, 0, 1));
    int sc = node(g, IR_OP_Gemm, 3, (int[]){ a, eye, cst(g, IR_DT_F32, 0, NULL, V(3)) }, 1);
    int col = node(g, IR_OP_Gemm, 3, (int[]){ a, eye, cst(g, IR_DT_F32, 2, D(2, 1), V(10, 20)) }, 1);
    int tb = op2(g, IR_OP_Gemm, cst(g, IR_DT_F32, 2, D(1, 3), V(1, 2, 3)), cst(g, IR_DT_F32, 2, D(2, 3), V(1, 1, 1, 0, 1, 0)));
    attr_i(g, tb, IR_A_transB, 1);
    int ig = node(g, IR_OP_Gemm, 3,
                  (int[]){ cst(g, IR_DT_I32, 2, D(2, 2), V(1, 2, 3, 4)), cst(g, IR_DT_I32, 2, D(2, 2), V(5, 6, 7, 8)),
                           cst(g, IR_DT_I32, 1, D(1), V(1)) }, 1);
    int dg = op2(g, IR_OP_Gemm, cst(g, IR_DT_F64, 2, D(2, 2), V(1, 2, 3, 4)), cst(g, IR_DT_F64, 2, D(2, 2), V(1, 0, 0, 1)));
    attr_i(g, dg, IR_A_transA, 1);
    infer_ok(g);
    expect(g, t, 0, IR_DT_F32, 2, D(2, 2), V(25.5, 41, 27, 41), TOL);
    expect(g, sc, 0, IR_DT_F32, 2, D(2, 2), V(4, 5, 6, 7), TOL);
    expect(g, col, 0, IR_DT_F32, 2, D(2, 2), V(11, 12, 23, 24), TOL);
    expect(g, tb, 0, IR_DT_F32, 2, D(1, 2), V(6, 2), TOL);
    expect_i(g, ig, 0, IR_DT_I32, 2, D(2, 2), D(20, 23, 44, 51));
    expect(g, dg, 0, IR_DT_F64, 2, D(2, 2), V(1, 3, 2, 4), 0);
    ir_graph_free(g);

    g = ir_graph_new("g", "t.json");
    op2(g, IR_OP_Gemm, cst(g, IR_DT_F32, 1, D(2), V(1, 2)), cst(g, IR_DT_F32, 2, D(2, 2), V(1, 2, 3, 4)));
    infer_err(g, "Gemm needs 2-D A and B (got rank 1 and 2)");
    ir_graph_free(g);
    g = ir_graph_new("g", "t.json");
    node(g, IR_OP_Gemm, 3,
         (int[]){ cst(g, IR_DT_F32, 2, D(2, 2), V(1, 2, 3, 4)), cst(g, IR_DT_F32, 2, D(2, 2), V(1, 2, 3, 4)),
                  cst(g, IR_DT_F32, 1, D(3), V(1, 2, 3)) }, 1);
    infer_err(g, "shapes [2,2] and [3] cannot be broadcast together");
    ir_graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unary_all),
        cmocka_unit_test(test_unary_attrs),
        cmocka_unit_test(test_round_sign_nan_inf_not),
        cmocka_unit_test(test_unary_int_and_other_floats),
        cmocka_unit_test(test_clip),
        cmocka_unit_test(test_cast),
        cmocka_unit_test(test_dropout),
        cmocka_unit_test(test_binary_broadcast),
        cmocka_unit_test(test_int_div_mod),
        cmocka_unit_test(test_pow_prelu_bitshift),
        cmocka_unit_test(test_compare_logic),
        cmocka_unit_test(test_variadic_where),
        cmocka_unit_test(test_reduce_all_ops),
        cmocka_unit_test(test_reduce_axes_rules),
        cmocka_unit_test(test_reduce_multi_axes),
        cmocka_unit_test(test_reduce_empty_set),
        cmocka_unit_test(test_reduce_errors),
        cmocka_unit_test(test_argreduce),
        cmocka_unit_test(test_softmax),
        cmocka_unit_test(test_batchnorm),
        cmocka_unit_test(test_instancenorm_lpnorm),
        cmocka_unit_test(test_layernorm),
        cmocka_unit_test(test_matmul),
        cmocka_unit_test(test_gemm),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
