/* tests/unit/test_ops_nn.c — shape rules and reference kernels of Conv,
 * ConvTranspose and the pooling operators.  Graphs with constant inputs go
 * through pass_infer, which infers shapes and evaluates the kernels.
 * Expected values are computed by hand (several are the ONNX operator
 * documentation's examples), or, for the larger cases, by a plain reference
 * loop written here independently of interp/. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "passes/passes.h"

/* ------------------------------------------------------------ helpers */

typedef struct Case {
    IrGraph *g;
    UtilDiag d;
    int node;
    int y[2];
} Case;

static int cst(IrGraph *g, const char *name, IrDType dt, int rank, const int64_t *dims, const double *vals)
{
    UtilDiag d;
    util_diag_init(&d);
    int t = ir_add_tensor(g, name, IR_TK_CONST, util_loc_file("t"), &d);
    IrShape s = { .rank = rank };
    memcpy(s.dims, dims, (size_t)rank * sizeof(int64_t));
    ir_set_type(g, t, dt, &s);
    void *data = ir_alloc_data(g, t);
    for (int64_t i = 0; i < ir_shape_numel(&s); i++)
        ir_store_f64(dt, data, i, vals[i]);
    return t;
}

/* A node of op over the given inputs (-1 = absent) with n_out outputs. */
static void mk(Case *c, IrOp op, int n_in, const int *in, int n_out)
{
    UtilDiag d;
    util_diag_init(&d);
    static const char *const names[2] = { "y", "ind" };
    for (int k = 0; k < n_out; k++) {
        c->y[k] = ir_add_tensor(c->g, names[k], IR_TK_VALUE, util_loc_file("t"), &d);
    }
    c->node = ir_add_node(c->g, op, "op", n_in, in, n_out, c->y, util_loc_file("t"));
    for (int k = 0; k < n_out; k++)
        ir_add_output(c->g, c->y[k]);
}

static void set_ints(Case *c, IrAttrKey key, int n, const int64_t *v)
{
    IrAttr a = { .key = key, .kind = IR_AK_INTS, .n = n, .v.ints = (int64_t *)v };
    assert_int_equal(ir_set_attr(c->g, c->node, &a), 0);
}

static void set_int(Case *c, IrAttrKey key, int64_t v)
{
    IrAttr a = { .key = key, .kind = IR_AK_INT, .v.i = v };
    assert_int_equal(ir_set_attr(c->g, c->node, &a), 0);
}

static void set_str(Case *c, IrAttrKey key, const char *s)
{
    IrAttr a = { .key = key, .kind = IR_AK_STRING, .v.s = s };
    assert_int_equal(ir_set_attr(c->g, c->node, &a), 0);
}

#define INTS(...) (int)(sizeof((int64_t[]){ __VA_ARGS__ }) / sizeof(int64_t)), (int64_t[]){ __VA_ARGS__ }

static void start(Case *c)
{
    memset(c, 0, sizeof *c);
    c->g = ir_graph_new("g", "t.json");
    util_diag_init(&c->d);
}

/* start + a node op(x) over constant x. */
static void unary(Case *c, IrOp op, IrDType dt, int rank, const int64_t *dims, const double *xv, int n_out)
{
    start(c);
    int x = cst(c->g, "x", dt, rank, dims, xv);
    mk(c, op, 1, &x, n_out);
}

/* start + a node op(x, w[, b]) over constants with attribute group; b has the
 * output channel count of values (bv NULL: no bias). */
static void binary(Case *c, IrOp op, IrDType dt, int rank, const int64_t *xd, const double *xv, const int64_t *wd,
                   const double *wv, const double *bv, int64_t group)
{
    start(c);
    int64_t nb = op == IR_OP_ConvTranspose ? wd[1] * group : wd[0];
    int in[3] = { cst(c->g, "x", dt, rank, xd, xv), cst(c->g, "w", dt, rank, wd, wv),
                  bv ? cst(c->g, "b", dt, 1, &nb, bv) : -1 };
    mk(c, op, bv ? 3 : 2, in, 1);
    set_int(c, IR_A_group, group);
}

static void run_ok(Case *c)
{
    int rc = pass_infer(c->g, &c->d);
    if (rc)
        fail_msg("pass_infer failed: %s", c->d.msg);
}

static void run_err(Case *c, const char *substr)
{
    assert_int_equal(pass_infer(c->g, &c->d), -1);
    if (!strstr(c->d.msg, substr))
        fail_msg("diagnostic '%s' lacks '%s'", c->d.msg, substr);
    ir_graph_free(c->g);
}

static void expect_shape(const Case *c, int k, int rank, const int64_t *dims)
{
    const IrTensor *t = &c->g->tensors[c->y[k]];
    assert_int_equal(t->v.shape.rank, rank);
    for (int i = 0; i < rank; i++)
        assert_int_equal(t->v.shape.dims[i], dims[i]);
}

/* Output k equals want (n values) within tol. */
static void expect_vals(const Case *c, int k, int64_t n, const double *want, double tol)
{
    const IrTensor *t = &c->g->tensors[c->y[k]];
    assert_non_null(t->v.data);
    assert_int_equal(ir_shape_numel(&t->v.shape), n);
    for (int64_t i = 0; i < n; i++) {
        double got = ir_load_f64(t->v.dtype, t->v.data, i);
        if (!(fabs(got - want[i]) <= tol))
            fail_msg("element %lld: got %.9g, want %.9g", (long long)i, got, want[i]);
    }
}

static void finish(Case *c)
{
    ir_graph_free(c->g);
}

static double *iota(int64_t n, double from)
{
    double *v = malloc((size_t)n * sizeof(double));
    for (int64_t i = 0; i < n; i++)
        v[i] = from + (double)i;
    return v;
}

static double *pseudo_random(int64_t n, uint32_t seed)
{
    double *v = malloc((size_t)n * sizeof(double));
    for (int64_t i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        v[i] = (double)(seed >> 8) / (double)(1u << 24) * 2.0 - 1.0;
    }
    return v;
}

static const double ones9[9] = { 1, 1, 1, 1, 1, 1, 1, 1, 1 };
static const double ones18[18] = { 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1 };

/* ------------------------------------------------------------ Conv */

/* x = 0..24 (5x5), W = ones 3x3 (ONNX Conv example), with and without pads. */
static void test_conv_basic(void **state)
{
    (void)state;
    double *xv = iota(25, 0);
    for (int padded = 0; padded < 2; padded++) {
        Case c;
        binary(&c, IR_OP_Conv, IR_DT_F32, 4, (int64_t[]){ 1, 1, 5, 5 }, xv,
               (int64_t[]){ 1, 1, 3, 3 }, ones9, NULL, 1);
        set_ints(&c, IR_A_kernel_shape, INTS(3, 3));
        if (padded)
            set_ints(&c, IR_A_pads, INTS(1, 1, 1, 1));
        run_ok(&c);
        if (padded) {
            static const double want[25] = { 12, 21, 27, 33, 24, 33, 54, 63, 72, 51, 63, 99, 108, 117, 81,
                                             93, 144, 153, 162, 111, 72, 111, 117, 123, 84 };
            expect_shape(&c, 0, 4, (int64_t[]){ 1, 1, 5, 5 });
            expect_vals(&c, 0, 25, want, 0);
        } else {
            static const double want[9] = { 54, 63, 72, 99, 108, 117, 144, 153, 162 };
            expect_shape(&c, 0, 4, (int64_t[]){ 1, 1, 3, 3 });
            expect_vals(&c, 0, 9, want, 0);
        }
        finish(&c);
    }
    free(xv);
}

/* x = 0..34 (7x5), W = ones 3x3, strides 2 with symmetric, no, and
 * asymmetric padding (ONNX Conv examples). */
static void test_conv_strides(void **state)
{
    (void)state;
    double *xv = iota(35, 0);
    static const int64_t pads[3][4] = { { 1, 1, 1, 1 }, { 0, 0, 0, 0 }, { 1, 0, 1, 0 } };
    static const int64_t shapes[3][2] = { { 4, 3 }, { 3, 2 }, { 4, 2 } };
    static const double want[3][12] = { { 12, 27, 24, 63, 108, 81, 123, 198, 141, 112, 177, 124 },
                                        { 54, 72, 144, 162, 234, 252 },
                                        { 21, 33, 99, 117, 189, 207, 171, 183 } };
    for (int k = 0; k < 3; k++) {
        Case c;
        binary(&c, IR_OP_Conv, IR_DT_F32, 4, (int64_t[]){ 1, 1, 7, 5 }, xv,
               (int64_t[]){ 1, 1, 3, 3 }, ones9, NULL, 1);
        set_ints(&c, IR_A_strides, INTS(2, 2));
        set_ints(&c, IR_A_pads, 4, pads[k]);
        run_ok(&c);
        expect_shape(&c, 0, 4, (int64_t[]){ 1, 1, shapes[k][0], shapes[k][1] });
        expect_vals(&c, 0, shapes[k][0] * shapes[k][1], want[k], 0);
        finish(&c);
    }
    free(xv);
}

/* 1-D: y[i] = x[i] + 10 x[i+2] (dilation 2), + bias 0.5. */
static void test_conv_dilation_1d_bias(void **state)
{
    (void)state;
    static const double xv[7] = { 1, 2, 3, 4, 5, 6, 7 }, wv[2] = { 1, 10 }, bv[1] = { 0.5 };
    Case c;
    binary(&c, IR_OP_Conv, IR_DT_F32, 3, (int64_t[]){ 1, 1, 7 }, xv,
           (int64_t[]){ 1, 1, 2 }, wv, bv, 1);
    set_ints(&c, IR_A_dilations, INTS(2));
    run_ok(&c);
    static const double want[5] = { 31.5, 42.5, 53.5, 64.5, 75.5 };
    expect_shape(&c, 0, 3, (int64_t[]){ 1, 1, 5 });
    expect_vals(&c, 0, 5, want, 0);
    finish(&c);
}

/* group 2, 1x1 kernels: y0 = 1 x0 + 2 x1, y1 = 3 x2 + 4 x3 (per pixel). */
static void test_conv_group(void **state)
{
    (void)state;
    static const double xv[8] = { 1, 2, 10, 20, 100, 200, 1000, 2000 };   /* [1,4,1,2] */
    static const double wv[4] = { 1, 2, 3, 4 };                         /* [2,2,1,1] */
    Case c;
    binary(&c, IR_OP_Conv, IR_DT_F32, 4, (int64_t[]){ 1, 4, 1, 2 }, xv,
           (int64_t[]){ 2, 2, 1, 1 }, wv, NULL, 2);
    run_ok(&c);
    static const double want[4] = { 1 + 20, 2 + 40, 300 + 4000, 600 + 8000 };
    expect_shape(&c, 0, 4, (int64_t[]){ 1, 2, 1, 2 });
    expect_vals(&c, 0, 4, want, 0);
    finish(&c);
}

/* 1-D x = 1,2,3,4, w = [1, 2]: the one padding element goes after the input
 * for SAME_UPPER and before it for SAME_LOWER. */
static void test_conv_auto_pad(void **state)
{
    (void)state;
    static const double xv[4] = { 1, 2, 3, 4 }, wv[2] = { 1, 2 };
    static const char *modes[3] = { "SAME_UPPER", "SAME_LOWER", "VALID" };
    static const double want[3][4] = { { 5, 8, 11, 4 }, { 2, 5, 8, 11 }, { 5, 8, 11 } };
    for (int k = 0; k < 3; k++) {
        Case c;
        binary(&c, IR_OP_Conv, IR_DT_F32, 3, (int64_t[]){ 1, 1, 4 }, xv,
               (int64_t[]){ 1, 1, 2 }, wv, NULL, 1);
        set_str(&c, IR_A_auto_pad, modes[k]);
        run_ok(&c);
        expect_vals(&c, 0, k == 2 ? 3 : 4, want[k], 0);
        finish(&c);
    }
    /* SAME with stride 2 on 5 elements: ceil(5/2) = 3 outputs; total pad
     * (3-1)*2 + 3 - 5 = 2, one on each side: windows [-1..1], [1..3], [3..5] */
    static const double x5[5] = { 1, 2, 3, 4, 5 };
    Case c;
    binary(&c, IR_OP_Conv, IR_DT_F32, 3, (int64_t[]){ 1, 1, 5 }, x5,
           (int64_t[]){ 1, 1, 3 }, ones9, NULL, 1);
    set_str(&c, IR_A_auto_pad, "SAME_LOWER");
    set_ints(&c, IR_A_strides, INTS(2));
    run_ok(&c);
    static const double want5[3] = { 3, 9, 9 };
    expect_vals(&c, 0, 3, want5, 0);
    finish(&c);
    /* SAME_UPPER with dilation 2: extent 3, total pad 2, y[i] = x[i-1] + x[i+1] */
    binary(&c, IR_OP_Conv, IR_DT_F32, 3, (int64_t[]){ 1, 1, 5 }, x5, (int64_t[]){ 1, 1, 2 }, ones9, NULL, 1);
    set_str(&c, IR_A_auto_pad, "SAME_UPPER");
    set_ints(&c, IR_A_dilations, INTS(2));
    run_ok(&c);
    static const double wantd[5] = { 2, 4, 6, 8, 4 };
    expect_vals(&c, 0, 5, wantd, 0);
    finish(&c);
}

/* Independent reference: 2-D grouped conv with strides, dilations, pads. */
static void ref_conv2d(const double *x, const double *w, const double *b, double *y, int64_t N, int64_t C,
                       int64_t H, int64_t W, int64_t M, int64_t G, int64_t KH, int64_t KW, int64_t sh,
                       int64_t sw, int64_t dh, int64_t dw, const int64_t *pads, int64_t OH, int64_t OW)
{
    int64_t cg = C / G, mg = M / G;
    for (int64_t n = 0; n < N; n++)
        for (int64_t m = 0; m < M; m++)
            for (int64_t oh = 0; oh < OH; oh++)
                for (int64_t ow = 0; ow < OW; ow++) {
                    double s = b ? b[m] : 0;
                    for (int64_t c = 0; c < cg; c++)
                        for (int64_t kh = 0; kh < KH; kh++)
                            for (int64_t kw = 0; kw < KW; kw++) {
                                int64_t ih = oh * sh + kh * dh - pads[0], iw = ow * sw + kw * dw - pads[1];
                                if (ih < 0 || ih >= H || iw < 0 || iw >= W)
                                    continue;
                                int64_t ci = (m / mg) * cg + c;
                                s += x[((n * C + ci) * H + ih) * W + iw] * w[((m * cg + c) * KH + kh) * KW + kw];
                            }
                    y[((n * M + m) * OH + oh) * OW + ow] = s;
                }
}

/* Larger grouped / depthwise / strided / dilated cases against ref_conv2d,
 * for float32 (fast path) and float64 (generic path). */
static void test_conv_vs_reference(void **state)
{
    (void)state;
    struct {
        int64_t N, C, H, W, M, G, KH, KW, sh, sw, dh, dw, pads[4];
        int bias;
    } cfg[] = {
        { 2, 4, 9, 11, 6, 2, 3, 2, 2, 1, 1, 2, { 1, 0, 2, 1 }, 1 },   /* grouped, asymmetric pads */
        { 1, 6, 8, 8, 6, 6, 3, 3, 1, 1, 1, 1, { 1, 1, 1, 1 }, 1 },    /* depthwise */
        { 1, 3, 10, 7, 12, 3, 3, 3, 2, 2, 1, 1, { 0, 1, 1, 0 }, 0 },  /* depthwise x4 multiplier, strided */
        { 1, 5, 12, 12, 4, 1, 3, 3, 3, 2, 2, 3, { 2, 2, 2, 2 }, 1 },  /* dilated + strided */
    };
    for (size_t k = 0; k < sizeof cfg / sizeof *cfg; k++) {
        int64_t N = cfg[k].N, C = cfg[k].C, H = cfg[k].H, W = cfg[k].W, M = cfg[k].M, G = cfg[k].G;
        int64_t KH = cfg[k].KH, KW = cfg[k].KW;
        int64_t OH = (H + cfg[k].pads[0] + cfg[k].pads[2] - ((KH - 1) * cfg[k].dh + 1)) / cfg[k].sh + 1;
        int64_t OW = (W + cfg[k].pads[1] + cfg[k].pads[3] - ((KW - 1) * cfg[k].dw + 1)) / cfg[k].sw + 1;
        double *xv = pseudo_random(N * C * H * W, 1 + (uint32_t)k), *wv = pseudo_random(M * C / G * KH * KW, 99);
        double *bv = pseudo_random(M, 7), *want = malloc((size_t)(N * M * OH * OW) * sizeof(double));
        ref_conv2d(xv, wv, cfg[k].bias ? bv : NULL, want, N, C, H, W, M, G, KH, KW, cfg[k].sh, cfg[k].sw,
                   cfg[k].dh, cfg[k].dw, cfg[k].pads, OH, OW);
        for (int dt = 0; dt < 2; dt++) {
            IrDType t = dt ? IR_DT_F64 : IR_DT_F32;
            Case c;
            start(&c);
            int in[3] = { cst(c.g, "x", t, 4, (int64_t[]){ N, C, H, W }, xv),
                          cst(c.g, "w", t, 4, (int64_t[]){ M, C / G, KH, KW }, wv),
                          cfg[k].bias ? cst(c.g, "b", t, 1, (int64_t[]){ M }, bv) : -1 };
            mk(&c, IR_OP_Conv, 3, in, 1);
            set_int(&c, IR_A_group, G);
            set_ints(&c, IR_A_strides, INTS(cfg[k].sh, cfg[k].sw));
            set_ints(&c, IR_A_dilations, INTS(cfg[k].dh, cfg[k].dw));
            set_ints(&c, IR_A_pads, 4, cfg[k].pads);
            run_ok(&c);
            expect_shape(&c, 0, 4, (int64_t[]){ N, M, OH, OW });
            assert_int_equal(c.g->tensors[c.y[0]].v.dtype, t);
            expect_vals(&c, 0, N * M * OH * OW, want, dt ? 1e-12 : 1e-5);
            finish(&c);
        }
        free(xv);
        free(wv);
        free(bv);
        free(want);
    }
}

/* 3-D conv: 2x2x2 input, 2x2x2 kernel of ones, pads 1 on the front of
 * each dim only; float16 takes the generic path. */
static void test_conv_3d_f16(void **state)
{
    (void)state;
    double *xv = iota(8, 1);
    static const double wv[8] = { 1, 1, 1, 1, 1, 1, 1, 1 };
    Case c;
    binary(&c, IR_OP_Conv, IR_DT_F16, 5, (int64_t[]){ 1, 1, 2, 2, 2 }, xv,
           (int64_t[]){ 1, 1, 2, 2, 2 }, wv, NULL, 1);
    set_ints(&c, IR_A_pads, INTS(1, 1, 1, 0, 0, 0));
    run_ok(&c);
    expect_shape(&c, 0, 5, (int64_t[]){ 1, 1, 2, 2, 2 });
    /* y[d,h,w] = sum of x over [d-1..d] x [h-1..h] x [w-1..w] inside */
    static const double want[8] = { 1, 3, 4, 10, 6, 14, 16, 36 };
    expect_vals(&c, 0, 8, want, 0);
    assert_int_equal(c.g->tensors[c.y[0]].v.dtype, IR_DT_F16);
    finish(&c);
    free(xv);
}

/* ------------------------------------------------------------ ConvTranspose */

/* x = 0..8 (3x3), W = ones [1,2,3,3] (ONNX ConvTranspose example). */
static void test_convtranspose_basic(void **state)
{
    (void)state;
    double *xv = iota(9, 0);
    Case c;
    binary(&c, IR_OP_ConvTranspose, IR_DT_F32, 4, (int64_t[]){ 1, 1, 3, 3 }, xv,
           (int64_t[]){ 1, 2, 3, 3 }, ones18, NULL, 1);
    run_ok(&c);
    static const double plane[25] = { 0, 1, 3, 3, 2, 3, 8, 15, 12, 7, 9, 21, 36, 27, 15,
                                      9, 20, 33, 24, 13, 6, 13, 21, 15, 8 };
    double want[50];
    memcpy(want, plane, sizeof plane);
    memcpy(want + 25, plane, sizeof plane);
    expect_shape(&c, 0, 4, (int64_t[]){ 1, 2, 5, 5 });
    expect_vals(&c, 0, 50, want, 0);
    finish(&c);
    free(xv);
}

/* strides [3,2] with output_padding [1,1], or equivalently output_shape
 * [10,8] (the extra row and column stay zero); ONNX examples. */
static void test_convtranspose_output_padding_and_shape(void **state)
{
    (void)state;
    static const double plane[80] = {
        0, 0, 1, 1, 3, 2, 2, 0, 0, 0, 1, 1, 3, 2, 2, 0, 0, 0, 1, 1, 3, 2, 2, 0,
        3, 3, 7, 4, 9, 5, 5, 0, 3, 3, 7, 4, 9, 5, 5, 0, 3, 3, 7, 4, 9, 5, 5, 0,
        6, 6, 13, 7, 15, 8, 8, 0, 6, 6, 13, 7, 15, 8, 8, 0, 6, 6, 13, 7, 15, 8, 8, 0,
        0, 0, 0, 0, 0, 0, 0, 0 };
    double want[160];
    memcpy(want, plane, sizeof plane);
    memcpy(want + 80, plane, sizeof plane);
    double *xv = iota(9, 0);
    for (int k = 0; k < 3; k++) {
        Case c;
        binary(&c, IR_OP_ConvTranspose, IR_DT_F32, 4, (int64_t[]){ 1, 1, 3, 3 }, xv,
               (int64_t[]){ 1, 2, 3, 3 }, ones18, NULL, 1);
        set_ints(&c, IR_A_strides, INTS(3, 2));
        if (k == 0)
            set_ints(&c, IR_A_output_padding, INTS(1, 1));
        else if (k == 1)
            set_ints(&c, IR_A_output_shape, INTS(10, 8));
        else
            set_ints(&c, IR_A_output_shape, INTS(1, 2, 10, 8));   /* full-rank form */
        run_ok(&c);
        expect_shape(&c, 0, 4, (int64_t[]){ 1, 2, 10, 8 });
        expect_vals(&c, 0, 160, want, 0);
        finish(&c);
    }
    free(xv);
}

/* pads [1,2,1,2] crop the full output; auto_pad SAME_UPPER (stride 2:
 * out = 6, total padding 1 goes at the end); dilations (ONNX examples). */
static void test_convtranspose_pads_same_dilations(void **state)
{
    (void)state;
    double *xv = iota(9, 0);
    {
        Case c;
        binary(&c, IR_OP_ConvTranspose, IR_DT_F32, 4, (int64_t[]){ 1, 1, 3, 3 }, xv,
               (int64_t[]){ 1, 2, 3, 3 }, ones18, NULL, 1);
        set_ints(&c, IR_A_strides, INTS(3, 2));
        set_ints(&c, IR_A_pads, INTS(1, 2, 1, 2));
        run_ok(&c);
        static const double plane[21] = { 1, 1, 3, 1, 1, 3, 7, 4, 9, 7, 4, 9, 7, 4, 9, 13, 7, 15, 13, 7, 15 };
        double want[42];
        memcpy(want, plane, sizeof plane);
        memcpy(want + 21, plane, sizeof plane);
        expect_shape(&c, 0, 4, (int64_t[]){ 1, 2, 7, 3 });
        expect_vals(&c, 0, 42, want, 0);
        finish(&c);
    }
    for (int lower = 0; lower < 2; lower++) {
        Case c;
        binary(&c, IR_OP_ConvTranspose, IR_DT_F32, 4, (int64_t[]){ 1, 1, 3, 3 }, xv,
               (int64_t[]){ 1, 2, 3, 3 }, ones18, NULL, 1);
        set_ints(&c, IR_A_strides, INTS(2, 2));
        set_str(&c, IR_A_auto_pad, lower ? "SAME_LOWER" : "SAME_UPPER");
        run_ok(&c);
        /* the full 7x7 result; SAME_UPPER drops its last row and column,
         * SAME_LOWER its first */
        static const double full[49] = { 0, 0, 1, 1, 3, 2, 2, 0, 0, 1, 1, 3, 2, 2, 3, 3, 8, 5, 12, 7, 7,
                                         3, 3, 7, 4, 9, 5, 5, 9, 9, 20, 11, 24, 13, 13, 6, 6, 13, 7, 15,
                                         8, 8, 6, 6, 13, 7, 15, 8, 8 };
        double want[72];
        for (int i = 0; i < 72; i++)
            want[i] = full[(i % 36 / 6 + lower) * 7 + i % 6 + lower];
        expect_shape(&c, 0, 4, (int64_t[]){ 1, 2, 6, 6 });
        expect_vals(&c, 0, 72, want, 0);
        finish(&c);
    }
    {
        static const double x2[9] = { 3, 8, 1, 9, 5, 7, 3, 2, 6 }, w2[4] = { 7, 2, 1, 9 };
        Case c;
        binary(&c, IR_OP_ConvTranspose, IR_DT_F32, 4, (int64_t[]){ 1, 1, 3, 3 }, x2,
               (int64_t[]){ 1, 1, 2, 2 }, w2, NULL, 1);
        set_ints(&c, IR_A_dilations, INTS(2, 2));
        run_ok(&c);
        static const double want[25] = { 21, 56, 13, 16, 2, 63, 35, 67, 10, 14, 24, 22, 76, 76, 21,
                                         9, 5, 88, 45, 63, 3, 2, 33, 18, 54 };
        expect_shape(&c, 0, 4, (int64_t[]){ 1, 1, 5, 5 });
        expect_vals(&c, 0, 25, want, 0);
        finish(&c);
    }
    free(xv);
}

/* output_shape smaller than the full result (x = 1,2,3 * w = 1,1,1 gives
 * 1 3 6 5 3): total padding 1 goes first without auto_pad (ONNX formula
 * pads[start] = total - total/2) and last with SAME_UPPER. */
static void test_convtranspose_output_shape_crop(void **state)
{
    (void)state;
    static const double xv[3] = { 1, 2, 3 };
    static const char *modes[2] = { "NOTSET", "SAME_UPPER" };
    static const double want[2][4] = { { 3, 6, 5, 3 }, { 1, 3, 6, 5 } };
    for (int k = 0; k < 2; k++) {
        Case c;
        binary(&c, IR_OP_ConvTranspose, IR_DT_F32, 3, (int64_t[]){ 1, 1, 3 }, xv, (int64_t[]){ 1, 1, 3 }, ones9,
               NULL, 1);
        set_str(&c, IR_A_auto_pad, modes[k]);
        set_ints(&c, IR_A_output_shape, INTS(4));
        run_ok(&c);
        expect_shape(&c, 0, 3, (int64_t[]){ 1, 1, 4 });
        expect_vals(&c, 0, 4, want[k], 0);
        finish(&c);
    }
}

/* 1-D, group 2 with bias, float32 and float64:
 * channel 0: x [1,2] * w [1,1] -> [1,3,2] + 10; channel 1: [3,4] * [1,-1] -> [3,1,-4] + 20. */
static void test_convtranspose_group_1d(void **state)
{
    (void)state;
    for (int dt = 0; dt < 2; dt++) {
        IrDType t = dt ? IR_DT_F64 : IR_DT_F32;
        static const double xv[4] = { 1, 2, 3, 4 }, wv[4] = { 1, 1, 1, -1 }, bv[2] = { 10, 20 };
        Case c;
        binary(&c, IR_OP_ConvTranspose, t, 3, (int64_t[]){ 1, 2, 2 }, xv,
               (int64_t[]){ 2, 1, 2 }, wv, bv, 2);
        run_ok(&c);
        static const double want[6] = { 11, 13, 12, 23, 21, 16 };
        expect_shape(&c, 0, 3, (int64_t[]){ 1, 2, 3 });
        expect_vals(&c, 0, 6, want, 0);
        finish(&c);
    }
}

/* Independent scatter reference for a 2-D grouped, strided, dilated, padded
 * ConvTranspose with output_padding; float32 and float64 paths. */
static void test_convtranspose_vs_reference(void **state)
{
    (void)state;
    const int64_t N = 2, C = 4, H = 5, W = 4, G = 2, MG = 3, M = MG * G, KH = 3, KW = 2;
    const int64_t sh = 2, sw = 3, dh = 2, dw = 1, pads[4] = { 1, 0, 2, 1 }, op[2] = { 1, 2 };
    int64_t OH = sh * (H - 1) + op[0] + (KH - 1) * dh + 1 - pads[0] - pads[2];
    int64_t OW = sw * (W - 1) + op[1] + (KW - 1) * dw + 1 - pads[1] - pads[3];
    double *xv = pseudo_random(N * C * H * W, 5), *wv = pseudo_random(C * MG * KH * KW, 6);
    double *bv = pseudo_random(M, 8), *want = calloc((size_t)(N * M * OH * OW), sizeof(double));
    for (int64_t n = 0; n < N; n++)
        for (int64_t m = 0; m < M; m++)
            for (int64_t i = 0; i < OH * OW; i++)
                want[(n * M + m) * OH * OW + i] = bv[m];
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t ih = 0; ih < H; ih++)
                for (int64_t iw = 0; iw < W; iw++)
                    for (int64_t mm = 0; mm < MG; mm++)
                        for (int64_t kh = 0; kh < KH; kh++)
                            for (int64_t kw = 0; kw < KW; kw++) {
                                int64_t oh = ih * sh + kh * dh - pads[0], ow = iw * sw + kw * dw - pads[1];
                                if (oh < 0 || oh >= OH || ow < 0 || ow >= OW)
                                    continue;
                                int64_t m = (c / (C / G)) * MG + mm;
                                want[((n * M + m) * OH + oh) * OW + ow] +=
                                    xv[((n * C + c) * H + ih) * W + iw] * wv[((c * MG + mm) * KH + kh) * KW + kw];
                            }
    for (int dt = 0; dt < 2; dt++) {
        IrDType t = dt ? IR_DT_F64 : IR_DT_F32;
        Case c;
        binary(&c, IR_OP_ConvTranspose, t, 4, (int64_t[]){ N, C, H, W }, xv,
               (int64_t[]){ C, MG, KH, KW }, wv, bv, G);
        set_ints(&c, IR_A_strides, INTS(sh, sw));
        set_ints(&c, IR_A_dilations, INTS(dh, dw));
        set_ints(&c, IR_A_pads, 4, pads);
        set_ints(&c, IR_A_output_padding, 2, op);
        run_ok(&c);
        expect_shape(&c, 0, 4, (int64_t[]){ N, M, OH, OW });
        expect_vals(&c, 0, N * M * OH * OW, want, dt ? 1e-12 : 1e-5);
        finish(&c);
    }
    free(xv);
    free(wv);
    free(bv);
    free(want);
}

/* ------------------------------------------------------------ pooling */

static const double x25[25] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20,
                                21, 22, 23, 24, 25 };

/* MaxPool 5x5 kernel, pads 2 with Indices; 2x2 stride 2 with
 * storage_order = 1 (column-major indices); ONNX examples. */
static void test_maxpool_indices(void **state)
{
    (void)state;
    {
        Case c;
        unary(&c, IR_OP_MaxPool, IR_DT_F32, 4, (int64_t[]){ 1, 1, 5, 5 }, x25, 2);
        set_ints(&c, IR_A_kernel_shape, INTS(5, 5));
        set_ints(&c, IR_A_pads, INTS(2, 2, 2, 2));
        run_ok(&c);
        static const double y[25] = { 13, 14, 15, 15, 15, 18, 19, 20, 20, 20, 23, 24, 25, 25, 25,
                                      23, 24, 25, 25, 25, 23, 24, 25, 25, 25 };
        expect_shape(&c, 1, 4, (int64_t[]){ 1, 1, 5, 5 });
        assert_int_equal(c.g->tensors[c.y[1]].v.dtype, IR_DT_I64);
        expect_vals(&c, 0, 25, y, 0);
        double z[25];
        for (int i = 0; i < 25; i++)
            z[i] = y[i] - 1;
        expect_vals(&c, 1, 25, z, 0);
        finish(&c);
    }
    {
        /* two planes: the second plane's indices are offset by 25 */
        Case c;
        start(&c);
        double xv[50];
        for (int i = 0; i < 50; i++)
            xv[i] = x25[i % 25];
        int x = cst(c.g, "x", IR_DT_F32, 4, (int64_t[]){ 1, 2, 5, 5 }, xv);
        mk(&c, IR_OP_MaxPool, 1, &x, 2);
        set_ints(&c, IR_A_kernel_shape, INTS(2, 2));
        set_ints(&c, IR_A_strides, INTS(2, 2));
        set_int(&c, IR_A_storage_order, 1);
        run_ok(&c);
        static const double y[8] = { 7, 9, 17, 19, 7, 9, 17, 19 }, z[8] = { 6, 16, 8, 18, 31, 41, 33, 43 };
        expect_shape(&c, 0, 4, (int64_t[]){ 1, 2, 2, 2 });
        expect_vals(&c, 0, 8, y, 0);
        expect_vals(&c, 1, 8, z, 0);
        finish(&c);
    }
}

/* ceil_mode: 4x4 with 3x3 stride 2 gives 2x2 for MaxPool and AveragePool
 * (ONNX examples); a last window that would start in the right padding is
 * dropped. */
static void test_maxpool_ceil_mode(void **state)
{
    (void)state;
    {
        /* AveragePool over the same windows: partial windows average what they cover */
        double *xv = iota(16, 1);
        static const IrOp ops[2] = { IR_OP_MaxPool, IR_OP_AveragePool };
        static const double want[2][4] = { { 11, 12, 15, 16 }, { 6, 7.5, 12, 13.5 } }, z[4] = { 10, 11, 14, 15 };
        for (int k = 0; k < 2; k++) {
            Case c;
            unary(&c, ops[k], IR_DT_F32, 4, (int64_t[]){ 1, 1, 4, 4 }, xv, 2 - k);
            set_ints(&c, IR_A_kernel_shape, INTS(3, 3));
            set_ints(&c, IR_A_strides, INTS(2, 2));
            set_int(&c, IR_A_ceil_mode, 1);
            run_ok(&c);
            expect_vals(&c, 0, 4, want[k], 1e-6);
            if (k == 0)
                expect_vals(&c, 1, 4, z, 0);
            finish(&c);
        }
        free(xv);
    }
    /* 1-D length 6, kernel 2, stride 2, pads [0, 1]: ceil(5/2)+1 = 4 windows
     * but the 4th would start at 6 (right padding): 3 remain.  Length 2,
     * kernel 1, stride 2: 2 by the formula, 1 after the rule (as PyTorch). */
    static const int64_t len[2] = { 6, 2 }, kern[2] = { 2, 1 }, pe[2] = { 1, 0 }, outn[2] = { 3, 1 };
    static const double want[2][3] = { { 2, 4, 6 }, { 1 } };
    for (int k = 0; k < 2; k++) {
        double *xv = iota(len[k], 1);
        Case c;
        unary(&c, IR_OP_MaxPool, IR_DT_F32, 3, (int64_t[]){ 1, 1, len[k] }, xv, 1);
        set_ints(&c, IR_A_kernel_shape, INTS(kern[k]));
        set_ints(&c, IR_A_strides, INTS(2));
        set_ints(&c, IR_A_pads, INTS(0, pe[k]));
        set_int(&c, IR_A_ceil_mode, 1);
        run_ok(&c);
        expect_shape(&c, 0, 3, (int64_t[]){ 1, 1, outn[k] });
        expect_vals(&c, 0, outn[k], want[k], 0);
        finish(&c);
        free(xv);
    }
}

/* Negative inputs with padding: pads are -inf, never 0; dilation 3 in 1-D;
 * 3-D; int8 input. */
static void test_maxpool_pad_dilation_3d_int8(void **state)
{
    (void)state;
    {
        static const double xv[3] = { -5, -2, -7 };
        Case c;
        unary(&c, IR_OP_MaxPool, IR_DT_F32, 3, (int64_t[]){ 1, 1, 3 }, xv, 1);
        set_ints(&c, IR_A_kernel_shape, INTS(2));
        set_ints(&c, IR_A_pads, INTS(1, 1));
        run_ok(&c);
        static const double want[4] = { -5, -2, -2, -7 };
        expect_vals(&c, 0, 4, want, 0);
        finish(&c);
    }
    {
        static const double xv[7] = { 1, 5, 2, 8, 3, 0, 4 };
        Case c;
        unary(&c, IR_OP_MaxPool, IR_DT_F32, 3, (int64_t[]){ 1, 1, 7 }, xv, 2);
        set_ints(&c, IR_A_kernel_shape, INTS(2));
        set_ints(&c, IR_A_dilations, INTS(3));
        run_ok(&c);
        static const double want[4] = { 8, 5, 2, 8 }, idx[4] = { 3, 1, 2, 3 };
        expect_vals(&c, 0, 4, want, 0);
        expect_vals(&c, 1, 4, idx, 0);
        finish(&c);
    }
    {
        /* 3-D 2x3x2 input, kernel 2x2x2, stride 1: two windows along h */
        static const double xv[12] = { 1, 9, 2, 3, 4, 5, 6, 0, 7, 8, 1, 2 };
        Case c;
        unary(&c, IR_OP_MaxPool, IR_DT_F32, 5, (int64_t[]){ 1, 1, 2, 3, 2 }, xv, 2);
        set_ints(&c, IR_A_kernel_shape, INTS(2, 2, 2));
        run_ok(&c);
        static const double want[2] = { 9, 8 }, idx[2] = { 1, 9 };
        expect_shape(&c, 0, 5, (int64_t[]){ 1, 1, 1, 2, 1 });
        expect_vals(&c, 0, 2, want, 0);
        expect_vals(&c, 1, 2, idx, 0);
        finish(&c);
    }
    {
        static const double xv[4] = { -100, -3, 7, -128 };
        Case c;
        unary(&c, IR_OP_MaxPool, IR_DT_I8, 3, (int64_t[]){ 1, 1, 4 }, xv, 1);
        set_ints(&c, IR_A_kernel_shape, INTS(2));
        run_ok(&c);
        static const double want[3] = { -3, 7, 7 };
        assert_int_equal(c.g->tensors[c.y[0]].v.dtype, IR_DT_I8);
        expect_vals(&c, 0, 3, want, 0);
        finish(&c);
    }
}

/* Pads as wide as the kernel leave windows wholly in the padding: MaxPool
 * gives -inf with index -1, AveragePool 0 (no element counted), LpPool 0. */
static void test_pool_empty_windows(void **state)
{
    (void)state;
    static const double xv[2] = { 1, 2 };
    static const IrOp ops[3] = { IR_OP_MaxPool, IR_OP_AveragePool, IR_OP_LpPool };
    static const double want[3][4] = { { -INFINITY, 1, 2, -INFINITY }, { 0, 1, 2, 0 }, { 0, 1, 2, 0 } };
    for (int k = 0; k < 3; k++) {
        Case c;
        unary(&c, ops[k], IR_DT_F32, 3, (int64_t[]){ 1, 1, 2 }, xv, k ? 1 : 2);
        set_ints(&c, IR_A_kernel_shape, INTS(1));
        set_ints(&c, IR_A_pads, INTS(1, 1));
        run_ok(&c);
        const float *y = c.g->tensors[c.y[0]].v.data;
        for (int i = 0; i < 4; i++)
            assert_true(y[i] == (float)want[k][i]);
        if (k == 0) {
            static const double idx[4] = { -1, 0, 1, -1 };
            expect_vals(&c, 1, 4, idx, 0);
        }
        finish(&c);
    }
}

/* AveragePool 3x3 pads 1 on 1..25 with count_include_pad 0 and 1 (values as
 * PyTorch's avg_pool2d). */
static void test_avgpool_count_include_pad(void **state)
{
    (void)state;
    static const double want[2][25] = {
        { 4, 4.5, 5.5, 6.5, 7, 6.5, 7, 8, 9, 9.5, 11.5, 12, 13, 14, 14.5, 16.5, 17, 18, 19, 19.5,
          19, 19.5, 20.5, 21.5, 22 },
        { 16 / 9.0, 3, 33 / 9.0, 39 / 9.0, 28 / 9.0, 39 / 9.0, 7, 8, 9, 57 / 9.0, 69 / 9.0, 12, 13, 14,
          87 / 9.0, 11, 17, 18, 19, 13, 76 / 9.0, 13, 123 / 9.0, 129 / 9.0, 88 / 9.0 } };
    for (int cip = 0; cip < 2; cip++) {
        Case c;
        unary(&c, IR_OP_AveragePool, IR_DT_F32, 4, (int64_t[]){ 1, 1, 5, 5 }, x25, 1);
        set_ints(&c, IR_A_kernel_shape, INTS(3, 3));
        set_ints(&c, IR_A_pads, INTS(1, 1, 1, 1));
        set_int(&c, IR_A_count_include_pad, cip);
        run_ok(&c);
        expect_shape(&c, 0, 4, (int64_t[]){ 1, 1, 5, 5 });
        expect_vals(&c, 0, 25, want[cip], 1e-5);
        finish(&c);
    }
}

/* ceil_mode, 1-D length 6, kernel 3, stride 2, pads 1: the last window
 * covers x[5], one pad element and one position past the padded input, which
 * does not count (PyTorch: 1 3 5 3 with count_include_pad, 1.5 3 5 6 without). */
static void test_avgpool_ceil_mode(void **state)
{
    (void)state;
    static const double want[2][4] = { { 1.5, 3, 5, 6 }, { 1, 3, 5, 3 } };
    for (int cip = 0; cip < 2; cip++) {
        double *xv = iota(6, 1);
        Case c;
        unary(&c, IR_OP_AveragePool, IR_DT_F64, 3, (int64_t[]){ 1, 1, 6 }, xv, 1);
        set_ints(&c, IR_A_kernel_shape, INTS(3));
        set_ints(&c, IR_A_strides, INTS(2));
        set_ints(&c, IR_A_pads, INTS(1, 1));
        set_int(&c, IR_A_ceil_mode, 1);
        set_int(&c, IR_A_count_include_pad, cip);
        run_ok(&c);
        expect_shape(&c, 0, 3, (int64_t[]){ 1, 1, 4 });
        expect_vals(&c, 0, 4, want[cip], 1e-12);
        finish(&c);
        free(xv);
    }
}

/* AveragePool SAME_UPPER vs SAME_LOWER in 1-D (kernel 2: the pad goes last /
 * first) and 3-D default. */
static void test_avgpool_auto_pad_3d(void **state)
{
    (void)state;
    static const double xv[4] = { 2, 4, 6, 8 };
    static const double want[2][4] = { { 3, 5, 7, 8 }, { 2, 3, 5, 7 } };
    for (int lower = 0; lower < 2; lower++) {
        Case c;
        unary(&c, IR_OP_AveragePool, IR_DT_F32, 3, (int64_t[]){ 1, 1, 4 }, xv, 1);
        set_ints(&c, IR_A_kernel_shape, INTS(2));
        set_str(&c, IR_A_auto_pad, lower ? "SAME_LOWER" : "SAME_UPPER");
        run_ok(&c);
        expect_vals(&c, 0, 4, want[lower], 0);
        finish(&c);
    }
    Case c;
    start(&c);
    double *x8 = iota(16, 0);      /* [1,2,2,2,2]: two channels */
    int x = cst(c.g, "x", IR_DT_F32, 5, (int64_t[]){ 1, 2, 2, 2, 2 }, x8);
    mk(&c, IR_OP_AveragePool, 1, &x, 1);
    set_ints(&c, IR_A_kernel_shape, INTS(2, 2, 2));
    run_ok(&c);
    static const double w3[2] = { 3.5, 11.5 };
    expect_shape(&c, 0, 5, (int64_t[]){ 1, 2, 1, 1, 1 });
    expect_vals(&c, 0, 2, w3, 1e-6);
    finish(&c);
    free(x8);
}

/* LpPool p = 2 and p = 1 with padding (p = 2 as PyTorch's lp_pool1d). */
static void test_lppool(void **state)
{
    (void)state;
    static const double xv[5] = { 3, 4, 0, 5, 12 };
    {
        Case c;
        unary(&c, IR_OP_LpPool, IR_DT_F32, 3, (int64_t[]){ 1, 1, 5 }, xv, 1);
        set_ints(&c, IR_A_kernel_shape, INTS(2));
        run_ok(&c);
        static const double want[4] = { 5, 4, 5, 13 };
        expect_vals(&c, 0, 4, want, 1e-6);
        finish(&c);
    }
    {
        static const double xn[3] = { -1, 2, -3 };
        Case c;
        unary(&c, IR_OP_LpPool, IR_DT_F32, 3, (int64_t[]){ 1, 1, 3 }, xn, 1);
        set_ints(&c, IR_A_kernel_shape, INTS(2));
        set_ints(&c, IR_A_pads, INTS(1, 1));
        set_int(&c, IR_A_p, 1);
        run_ok(&c);
        static const double want[4] = { 1, 3, 5, 3 };
        expect_vals(&c, 0, 4, want, 1e-6);
        finish(&c);
    }
    {
        static const double x3[2] = { 1, 2 };
        Case c;
        unary(&c, IR_OP_LpPool, IR_DT_F64, 3, (int64_t[]){ 1, 1, 2 }, x3, 1);
        set_ints(&c, IR_A_kernel_shape, INTS(2));
        set_int(&c, IR_A_p, 3);
        run_ok(&c);
        double want = cbrt(9.0);
        expect_vals(&c, 0, 1, &want, 1e-12);
        finish(&c);
    }
}

static void test_global_pools(void **state)
{
    (void)state;
    static const double xv[8] = { 1, -2, 2, 4, 0, 0, 3, -4 };    /* [1,2,2,2] */
    static const IrOp ops[3] = { IR_OP_GlobalAveragePool, IR_OP_GlobalMaxPool, IR_OP_GlobalLpPool };
    static const double want[3][2] = { { 1.25, -0.25 }, { 4, 3 }, { 5, 5 } };
    for (int k = 0; k < 3; k++) {
        Case c;
        start(&c);
        int x = cst(c.g, "x", IR_DT_F32, 4, (int64_t[]){ 1, 2, 2, 2 }, xv);
        mk(&c, ops[k], 1, &x, 1);
        run_ok(&c);
        expect_shape(&c, 0, 4, (int64_t[]){ 1, 2, 1, 1 });
        expect_vals(&c, 0, 2, want[k], 1e-6);
        finish(&c);
    }
    /* 1-D GlobalAveragePool in float16 */
    static const double x1[4] = { 1, 2, 3, 6 };
    Case c;
    unary(&c, IR_OP_GlobalAveragePool, IR_DT_F16, 3, (int64_t[]){ 1, 1, 4 }, x1, 1);
    run_ok(&c);
    static const double w1[1] = { 3 };
    expect_shape(&c, 0, 3, (int64_t[]){ 1, 1, 1 });
    expect_vals(&c, 0, 1, w1, 0);
    finish(&c);
}

/* ------------------------------------------------------------ validation */

/* Conv on x [1,4,5,5] with weight dims wd (rank wr), then mutate(c). */
static void conv_err(int wr, const int64_t *wd, int64_t group, void (*mutate)(Case *), const char *msg)
{
    Case c;
    start(&c);
    double *zeros = calloc(4096, sizeof(double));
    int in[2] = { cst(c.g, "x", IR_DT_F32, 4, (int64_t[]){ 1, 4, 5, 5 }, zeros),
                  cst(c.g, "w", IR_DT_F32, wr, wd, zeros) };
    mk(&c, IR_OP_Conv, 2, in, 1);
    set_int(&c, IR_A_group, group);
    if (mutate)
        mutate(&c);
    run_err(&c, msg);
    free(zeros);
}

static void m_stride0(Case *c) { set_ints(c, IR_A_strides, INTS(1, 0)); }
static void m_dil_neg(Case *c) { set_ints(c, IR_A_dilations, INTS(-1, 1)); }
static void m_pads3(Case *c) { set_ints(c, IR_A_pads, INTS(1, 1, 1)); }
static void m_pads_neg(Case *c) { set_ints(c, IR_A_pads, INTS(0, -1, 0, 0)); }
static void m_autopad(Case *c) { set_str(c, IR_A_auto_pad, "SAME"); }
static void m_kshape(Case *c) { set_ints(c, IR_A_kernel_shape, INTS(3, 2)); }
static void m_big_dil(Case *c) { set_ints(c, IR_A_dilations, INTS(3, 1)); }
static void m_huge(Case *c) { set_ints(c, IR_A_pads, INTS(INT64_MAX, 0, 0, 0)); }
static void m_big_pads(Case *c) { set_ints(c, IR_A_pads, INTS(IR_MAX_ATTR_INT, 0, 0, 0)); }

static void test_conv_errors(void **state)
{
    (void)state;
    conv_err(4, (int64_t[]){ 2, 4, 3, 3 }, 1, m_stride0, "strides must be positive");
    conv_err(4, (int64_t[]){ 2, 4, 3, 3 }, 1, m_dil_neg, "dilations must be positive");
    conv_err(4, (int64_t[]){ 2, 4, 3, 3 }, 1, m_pads3, "pads has 3 values; expected 4");
    conv_err(4, (int64_t[]){ 2, 4, 3, 3 }, 1, m_pads_neg, "pads must be non-negative");
    conv_err(4, (int64_t[]){ 2, 4, 3, 3 }, 1, m_autopad, "unknown auto_pad 'SAME'");
    conv_err(4, (int64_t[]){ 2, 4, 3, 3 }, 1, m_kshape, "kernel_shape [3,2] does not match the weight");
    conv_err(4, (int64_t[]){ 2, 4, 3, 3 }, 1, m_big_dil, "kernel larger than padded input");
    conv_err(4, (int64_t[]){ 2, 4, 6, 3 }, 1, NULL, "kernel larger than padded input");
    conv_err(4, (int64_t[]){ 2, 4, 3, 3 }, 1, m_huge, "attribute pads holds 9223372036854775807, beyond the "
             "+-2^31 - 1 an integer attribute may hold");
    conv_err(4, (int64_t[]){ 2, 4, 3, 3 }, 1, m_big_pads, "has shape [1,2,2147483650,3]: more than the 2^31 - 1 "
             "elements a tensor may have");
    conv_err(3, (int64_t[]){ 2, 4, 3 }, 1, NULL, "has rank 3; the input [1,4,5,5] has rank 4");
    conv_err(4, (int64_t[]){ 2, 3, 3, 3 }, 1, NULL, "channel mismatch");
    conv_err(4, (int64_t[]){ 2, 2, 3, 3 }, 0, NULL, "group must be positive");
    conv_err(4, (int64_t[]){ 2, 2, 3, 3 }, -2, NULL, "group must be positive");
    conv_err(4, (int64_t[]){ 2, 1, 3, 3 }, 3, NULL, "input channels 4 are not divisible by group 3");
    conv_err(4, (int64_t[]){ 3, 2, 3, 3 }, 2, NULL, "output channels 3 are not divisible by group 2");
    conv_err(4, (int64_t[]){ 0, 4, 3, 3 }, 1, NULL, "empty dimension");

    /* rank 2 input, bias of the wrong length, dtype mismatch */
    double z[64] = { 0 };
    Case c;
    binary(&c, IR_OP_Conv, IR_DT_F32, 2, (int64_t[]){ 1, 4 }, z, (int64_t[]){ 2, 4 }, z, NULL, 1);
    run_err(&c, "input [1,4] must have rank >= 3");
    static const int64_t xd[3] = { 1, 2, 4 }, wd[3] = { 3, 2, 2 };
    binary(&c, IR_OP_Conv, IR_DT_F32, 3, xd, z, wd, z, NULL, 1);
    int b = cst(c.g, "b", IR_DT_F32, 1, (int64_t[]){ 2 }, z);
    ir_set_inputs(c.g, c.node, 3, (int[]){ c.g->nodes[c.node].in[0], c.g->nodes[c.node].in[1], b });
    run_err(&c, "bias 'b' has shape [2]; expected [3]");
    start(&c);
    int in4[2] = { cst(c.g, "x", IR_DT_F32, 3, xd, z), cst(c.g, "w", IR_DT_F64, 3, wd, z) };
    mk(&c, IR_OP_Conv, 2, in4, 1);
    run_err(&c, "weight 'w' has dtype float64 but the input has float32");
    binary(&c, IR_OP_Conv, IR_DT_I32, 3, xd, z, wd, z, NULL, 1);
    run_err(&c, "has dtype int32; Conv takes float types");
}

static void test_convtranspose_errors(void **state)
{
    (void)state;
    double z[64] = { 0 };
    Case c;
    static const int64_t xd[3] = { 1, 2, 4 }, wd[3] = { 2, 1, 2 };
    binary(&c, IR_OP_ConvTranspose, IR_DT_F32, 3, xd, z, (int64_t[]){ 3, 1, 2 }, z, NULL, 1);
    run_err(&c, "channel mismatch: input [1,2,4] has 2 channels but weight [3,1,2] expects 3");

    binary(&c, IR_OP_ConvTranspose, IR_DT_F32, 3, xd, z, wd, z, NULL, 1);
    set_ints(&c, IR_A_output_shape, INTS(5, 5));
    run_err(&c, "output_shape has 2 values; expected 1 (spatial) or 3");

    binary(&c, IR_OP_ConvTranspose, IR_DT_F32, 3, xd, z, wd, z, NULL, 1);
    set_ints(&c, IR_A_pads, INTS(3, 3));
    run_err(&c, "kernel larger than padded input");

    binary(&c, IR_OP_ConvTranspose, IR_DT_F32, 3, xd, z, wd, z, NULL, 1);
    set_ints(&c, IR_A_output_padding, INTS(-1));
    run_err(&c, "output_padding must be non-negative");
}

static void pool_err(IrOp op, IrDType dt, void (*mutate)(Case *), const char *msg)
{
    Case c;
    static const double z[16] = { 0 };
    unary(&c, op, dt, 4, (int64_t[]){ 1, 1, 4, 4 }, z, 1);
    if (mutate)
        mutate(&c);
    run_err(&c, msg);
}

static void m_k3(Case *c) { set_ints(c, IR_A_kernel_shape, INTS(3, 3)); }
static void m_k0(Case *c) { set_ints(c, IR_A_kernel_shape, INTS(3, 0)); }
static void m_k1d(Case *c) { set_ints(c, IR_A_kernel_shape, INTS(3)); }
static void m_k5(Case *c) { set_ints(c, IR_A_kernel_shape, INTS(5, 1)); }
static void m_k3_s0(Case *c) { m_k3(c); set_ints(c, IR_A_strides, INTS(0, 1)); }
static void m_k3_pads(Case *c) { m_k3(c); set_ints(c, IR_A_pads, INTS(1, 1)); }
static void m_k3_ap(Case *c) { m_k3(c); set_str(c, IR_A_auto_pad, "same_upper"); }
static void m_k3_so(Case *c) { m_k3(c); set_int(c, IR_A_storage_order, 2); }
static void m_k3_p0(Case *c) { m_k3(c); set_int(c, IR_A_p, 0); }
static void m_k3_cm(Case *c) { m_k3(c); set_int(c, IR_A_ceil_mode, 3); }

static void test_pool_errors(void **state)
{
    (void)state;
    pool_err(IR_OP_MaxPool, IR_DT_F32, NULL, "kernel_shape is required");
    pool_err(IR_OP_MaxPool, IR_DT_F32, m_k0, "kernel_shape must be positive");
    pool_err(IR_OP_AveragePool, IR_DT_F32, m_k1d, "kernel_shape has 1 values; expected 2");
    pool_err(IR_OP_AveragePool, IR_DT_F32, m_k5, "kernel larger than padded input");
    pool_err(IR_OP_MaxPool, IR_DT_F32, m_k3_s0, "strides must be positive");
    pool_err(IR_OP_LpPool, IR_DT_F32, m_k3_pads, "pads has 2 values; expected 4");
    pool_err(IR_OP_MaxPool, IR_DT_F32, m_k3_ap, "unknown auto_pad 'same_upper'");
    pool_err(IR_OP_MaxPool, IR_DT_F32, m_k3_so, "storage_order must be 0 or 1");
    pool_err(IR_OP_LpPool, IR_DT_F32, m_k3_p0, "p must be positive");
    pool_err(IR_OP_MaxPool, IR_DT_F32, m_k3_cm, "ceil_mode must be 0 or 1");
    pool_err(IR_OP_AveragePool, IR_DT_I8, m_k3, "has dtype int8; AveragePool takes float types");
    pool_err(IR_OP_GlobalMaxPool, IR_DT_I32, NULL, "GlobalMaxPool takes float types");

    Case c;
    start(&c);
    double z[4] = { 0 };
    int x = cst(c.g, "x", IR_DT_F32, 2, (int64_t[]){ 1, 4 }, z);
    mk(&c, IR_OP_GlobalAveragePool, 1, &x, 1);
    run_err(&c, "input [1,4] must have rank >= 3");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv_basic),
        cmocka_unit_test(test_conv_strides),
        cmocka_unit_test(test_conv_dilation_1d_bias),
        cmocka_unit_test(test_conv_group),
        cmocka_unit_test(test_conv_auto_pad),
        cmocka_unit_test(test_conv_vs_reference),
        cmocka_unit_test(test_conv_3d_f16),
        cmocka_unit_test(test_convtranspose_basic),
        cmocka_unit_test(test_convtranspose_output_padding_and_shape),
        cmocka_unit_test(test_convtranspose_pads_same_dilations),
        cmocka_unit_test(test_convtranspose_output_shape_crop),
        cmocka_unit_test(test_convtranspose_group_1d),
        cmocka_unit_test(test_convtranspose_vs_reference),
        cmocka_unit_test(test_maxpool_indices),
        cmocka_unit_test(test_maxpool_ceil_mode),
        cmocka_unit_test(test_maxpool_pad_dilation_3d_int8),
        cmocka_unit_test(test_pool_empty_windows),
        cmocka_unit_test(test_avgpool_count_include_pad),
        cmocka_unit_test(test_avgpool_ceil_mode),
        cmocka_unit_test(test_avgpool_auto_pad_3d),
        cmocka_unit_test(test_lppool),
        cmocka_unit_test(test_global_pools),
        cmocka_unit_test(test_conv_errors),
        cmocka_unit_test(test_convtranspose_errors),
        cmocka_unit_test(test_pool_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
