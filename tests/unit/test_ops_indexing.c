/* tests/unit/test_ops_indexing.c — shape rules and reference kernels of the
 * scatter, indexing, sampling, signal and bitwise operators (that section
 * of ops.def).  Each case builds a one-node graph over constant inputs and runs
 * pass_infer, which infers the output and, the inputs being known, evaluates
 * the kernel; runtime-operand errors are checked through interp_run with
 * graph inputs.  Expected values are hand-computed (several are the ONNX
 * operator documentation's examples) or, where marked, computed with
 * onnx.reference (onnx 1.19.1) and embedded.  Tolerance 1e-5 unless stated. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "frontend/frontend.h"
#include "interp/interp.h"
#include "ir/ir.h"
#include "passes/passes.h"

#define TOL 1e-5
#define SH(...) ((IrShape){ .rank = (int)(sizeof((int64_t[]){ __VA_ARGS__ }) / sizeof(int64_t)), \
                            .dims = { __VA_ARGS__ } })
#define SCALAR ((IrShape){ .rank = 0 })
#define V(...) ((const double[]){ __VA_ARGS__ })

typedef struct B {
    IrGraph *g;
    UtilDiag d;
    int node, y, tmp;
} B;

static void b_init(B *b)
{
    memset(b, 0, sizeof *b);
    b->g = ir_graph_new("g", "t.json");
    b->g->opset = 21;
    util_diag_init(&b->d);
}

/* A tensor of dtype dt and shape s holding vals (converted per dtype); a
 * graph input (value supplied to interp_run) when input != 0. */
static int tens(B *b, int input, IrDType dt, IrShape s, const double *vals)
{
    char name[16];
    snprintf(name, sizeof name, "c%d", b->tmp++);
    int x = ir_add_tensor(b->g, name, input ? IR_TK_INPUT : IR_TK_CONST, util_loc_file("t"), &b->d);
    assert_true(x >= 0);
    ir_set_type(b->g, x, dt, &s);
    if (input) {
        ir_add_input(b->g, x);
        return x;
    }
    void *p = ir_alloc_data(b->g, x);
    assert_non_null(p);
    for (int64_t i = 0; i < ir_shape_numel(&s); i++)
        ir_store_f64(dt, p, i, vals[i]);
    return x;
}
static int f32(B *b, IrShape s, const double *v) { return tens(b, 0, IR_DT_F32, s, v); }
static int i64(B *b, IrShape s, const double *v) { return tens(b, 0, IR_DT_I64, s, v); }

static void node(B *b, IrOp op, int nin, const int *in)
{
    b->y = ir_add_tensor(b->g, "y", IR_TK_VALUE, util_loc_file("t"), &b->d);
    b->node = ir_add_node(b->g, op, "n", nin, in, 1, &b->y, util_loc_file("t"));
    ir_add_output(b->g, b->y);
}

static void a_int(B *b, IrAttrKey k, int64_t v)
{
    IrAttr a = { .key = k, .kind = IR_AK_INT, .v.i = v };
    assert_int_equal(ir_set_attr(b->g, b->node, &a), 0);
}
static void a_str(B *b, IrAttrKey k, const char *v)
{
    IrAttr a = { .key = k, .kind = IR_AK_STRING, .v.s = v };
    assert_int_equal(ir_set_attr(b->g, b->node, &a), 0);
}
static void a_ints(B *b, IrAttrKey k, int cnt, const int64_t *v)
{
    IrAttr a = { .key = k, .kind = IR_AK_INTS, .n = cnt, .v.ints = (int64_t *)v };
    assert_int_equal(ir_set_attr(b->g, b->node, &a), 0);
}

/* Infers and evaluates; the output has dtype dt, shape s and values v (tol). */
static void expect(B *b, IrDType dt, IrShape s, const double *v, double tol)
{
    int rc = pass_infer(b->g, &b->d);
    if (rc)
        print_error("unexpected error: %s\n", b->d.msg);
    assert_int_equal(rc, 0);
    const IrTensor *y = &b->g->tensors[b->y];
    char got[160], want[160];
    ir_shape_str(&y->v.shape, got, sizeof got);
    ir_shape_str(&s, want, sizeof want);
    assert_string_equal(got, want);
    assert_int_equal(y->v.dtype, dt);
    assert_non_null(y->v.data);
    for (int64_t i = 0; i < ir_shape_numel(&s); i++) {
        double g = ir_load_f64(dt, y->v.data, i);
        if (!(fabs(g - v[i]) <= tol))
            print_error("element %lld: got %.9g, want %.9g\n", (long long)i, g, v[i]);
        assert_true(fabs(g - v[i]) <= tol);
    }
    ir_graph_free(b->g);
}

static void expect_msg(B *b, int rc, const char *sub)
{
    assert_int_equal(rc, -1);
    if (!strstr(b->d.msg, sub))
        print_error("message '%s' lacks '%s'\n", b->d.msg, sub);
    assert_non_null(strstr(b->d.msg, sub));
    ir_graph_free(b->g);
}

/* Inference (or compile-time evaluation) fails with a message containing sub. */
static void expect_err(B *b, const char *sub) { expect_msg(b, pass_infer(b->g, &b->d), sub); }

/* Inference succeeds; running with the given graph-input values fails. */
static void expect_run_err(B *b, int nin, const IrArray *inputs, const char *sub)
{
    assert_int_equal(pass_infer(b->g, &b->d), 0);
    IrArray out[1];
    (void)nin;
    expect_msg(b, interp_run(b->g, inputs, out, &b->d), sub);
}

/* ------------------------------------------------------------ scatter */

static void scatter_el(IrOp op, const char *red, IrDType dt, const double *data, const double *ind,
                       const double *upd, int nupd, IrShape out, const double *want)
{
    B b;
    b_init(&b);
    int in[] = { tens(&b, 0, dt, out, data), i64(&b, SH(1, nupd), ind), tens(&b, 0, dt, SH(1, nupd), upd) };
    node(&b, op, 3, in);
    a_int(&b, IR_A_axis, 1);
    if (red)
        a_str(&b, IR_A_reduction, red);
    expect(&b, dt, out, want, TOL);
}

static void test_scatter_elements(void **state)
{
    (void)state;
    /* ONNX doc example: axis 1 */
    scatter_el(IR_OP_ScatterElements, NULL, IR_DT_F32, V(1, 2, 3, 4, 5), V(1, 3), V(1.1, 2.1), 2, SH(1, 5),
               V(1, 1.1, 3, 2.1, 5));
    /* negative index counts from the end */
    scatter_el(IR_OP_ScatterElements, NULL, IR_DT_F32, V(1, 2, 3, 4, 5), V(-1, -5), V(9, 8), 2, SH(1, 5),
               V(8, 2, 3, 4, 9));
    /* duplicate indices under each reduction: element 1 is 2 (+|*|max|min) 1.1, 2.1 */
    scatter_el(IR_OP_ScatterElements, "add", IR_DT_F32, V(1, 2, 3, 4, 5), V(1, 1), V(1.1, 2.1), 2, SH(1, 5),
               V(1, 5.2, 3, 4, 5));
    scatter_el(IR_OP_ScatterElements, "mul", IR_DT_F32, V(1, 2, 3, 4, 5), V(1, 1), V(1.1, 2.1), 2, SH(1, 5),
               V(1, 4.62, 3, 4, 5));
    scatter_el(IR_OP_ScatterElements, "max", IR_DT_F32, V(1, 2, 3, 4, 5), V(1, 1), V(1.1, 2.1), 2, SH(1, 5),
               V(1, 2.1, 3, 4, 5));
    scatter_el(IR_OP_ScatterElements, "min", IR_DT_F32, V(1, 2, 3, 4, 5), V(1, 1), V(1.1, 2.1), 2, SH(1, 5),
               V(1, 1.1, 3, 4, 5));
    /* along the axis, indices may outnumber the data (repeated positions) */
    scatter_el(IR_OP_ScatterElements, "add", IR_DT_F32, V(1, 2), V(0, 0, 1), V(1, 2, 3), 3, SH(1, 2), V(4, 5));
    /* int64 data: exact integer arithmetic */
    scatter_el(IR_OP_ScatterElements, "add", IR_DT_I64, V(10, 20, 30), V(2, 2), V(5, 7), 2, SH(1, 3),
               V(10, 20, 42));
    /* the deprecated Scatter op, axis 0 (the opset-9 doc example) */
    B b;
    b_init(&b);
    int in[] = { f32(&b, SH(3, 3), V(0, 0, 0, 0, 0, 0, 0, 0, 0)), i64(&b, SH(2, 3), V(1, 0, 2, 0, 2, 1)),
                 f32(&b, SH(2, 3), V(1, 1.1, 1.2, 2, 2.1, 2.2)) };
    node(&b, IR_OP_Scatter, 3, in);
    expect(&b, IR_DT_F32, SH(3, 3), V(2, 1.1, 0, 1, 0, 2.2, 0, 2.1, 1.2), TOL);
}

static void test_scatter_elements_errors(void **state)
{
    (void)state;
    B b;
    b_init(&b);
    int in[] = { f32(&b, SH(1, 5), V(1, 2, 3, 4, 5)), i64(&b, SH(1, 1), V(5)), f32(&b, SH(1, 1), V(0)) };
    node(&b, IR_OP_ScatterElements, 3, in);
    a_int(&b, IR_A_axis, 1);
    expect_err(&b, "index 5 is out of range for an axis of size 5");

    b_init(&b);
    int in2[] = { f32(&b, SH(1, 5), V(1, 2, 3, 4, 5)), i64(&b, SH(1, 1), V(0)), f32(&b, SH(1, 1), V(0)) };
    node(&b, IR_OP_ScatterElements, 3, in2);
    a_str(&b, IR_A_reduction, "mean");
    expect_err(&b, "reduction must be \"none\", \"add\", \"mul\", \"max\" or \"min\", not \"mean\"");

    b_init(&b);
    int in3[] = { f32(&b, SH(1, 5), V(1, 2, 3, 4, 5)), i64(&b, SH(1, 2), V(0, 1)), f32(&b, SH(1, 1), V(0)) };
    node(&b, IR_OP_ScatterElements, 3, in3);
    expect_err(&b, "updates [1,1] must have the shape of the indices [1,2]");

    b_init(&b);
    int in5[] = { f32(&b, SH(1, 2), V(1, 2)), i64(&b, SH(2, 1), V(0, 0)), f32(&b, SH(2, 1), V(0, 0)) };
    node(&b, IR_OP_ScatterElements, 3, in5);
    a_int(&b, IR_A_axis, 1);
    expect_err(&b, "indices [2,1] exceed the data [1,2] on axis 0");

    /* a runtime index is checked when the graph runs */
    b_init(&b);
    int in4[] = { f32(&b, SH(2), V(1, 2)), tens(&b, 1, IR_DT_I64, SH(1), NULL), f32(&b, SH(1), V(0)) };
    node(&b, IR_OP_ScatterElements, 3, in4);
    int64_t bad = -3;
    IrArray run_in = { IR_DT_I64, SH(1), &bad };
    expect_run_err(&b, 1, &run_in, "index -3 is out of range for an axis of size 2");
}

static void test_scatternd(void **state)
{
    (void)state;
    /* ONNX doc example 1 */
    B b;
    b_init(&b);
    int in[] = { f32(&b, SH(8), V(1, 2, 3, 4, 5, 6, 7, 8)), i64(&b, SH(4, 1), V(4, 3, 1, 7)),
                 f32(&b, SH(4), V(9, 10, 11, 12)) };
    node(&b, IR_OP_ScatterND, 3, in);
    expect(&b, IR_DT_F32, SH(8), V(1, 11, 3, 10, 9, 6, 7, 12), TOL);

    /* row slices with each reduction: rows 1 and 1 again */
    static const char *const reds[] = { "none", "add", "mul", "max", "min" };
    static const double want[5][4] = { { 1, 2, 5, 1 }, { 1, 2, 3 + 4 + 5, 4 + 3 + 1 }, { 1, 2, 3 * 4 * 5, 4 * 3 * 1 },
                                       { 1, 2, 5, 4 }, { 1, 2, 3, 1 } };
    for (int r = 0; r < 5; r++) {
        b_init(&b);
        int in2[] = { f32(&b, SH(2, 2), V(1, 2, 3, 4)), i64(&b, SH(2, 1), V(1, -1)), f32(&b, SH(2, 2), V(4, 3, 5, 1)) };
        node(&b, IR_OP_ScatterND, 3, in2);
        a_str(&b, IR_A_reduction, reds[r]);
        expect(&b, IR_DT_F32, SH(2, 2), want[r], TOL);
    }

    b_init(&b);
    int in3[] = { f32(&b, SH(2, 2), V(1, 2, 3, 4)), i64(&b, SH(1, 1), V(0)), f32(&b, SH(1, 3), V(0, 0, 0)) };
    node(&b, IR_OP_ScatterND, 3, in3);
    expect_err(&b, "updates [1,3] must have shape indices.shape[:-1] + data.shape[1:]");

    b_init(&b);
    int in4[] = { f32(&b, SH(2, 2), V(1, 2, 3, 4)), i64(&b, SH(1, 3), V(0, 0, 0)), f32(&b, SH(1), V(0)) };
    node(&b, IR_OP_ScatterND, 3, in4);
    expect_err(&b, "the last dimension of indices [1,3] is 3; it must be in 1..2");

    b_init(&b);
    int in5[] = { f32(&b, SH(2, 2), V(1, 2, 3, 4)), i64(&b, SH(1, 2), V(0, 2)), f32(&b, SH(1), V(0)) };
    node(&b, IR_OP_ScatterND, 3, in5);
    expect_err(&b, "index 2 is out of range for an axis of size 2");
}

static void tensorscatter(const char *mode, const double *wi, const double *want, const char *err)
{
    B b;
    b_init(&b);
    int in[] = { f32(&b, SH(2, 4), V(0, 0, 0, 0, 0, 0, 0, 0)), f32(&b, SH(2, 2), V(1, 2, 3, 4)), i64(&b, SH(2), wi) };
    node(&b, IR_OP_TensorScatter, 3, in);
    a_int(&b, IR_A_axis, -1);
    a_str(&b, IR_A_mode, mode);
    if (err)
        expect_err(&b, err);
    else
        expect(&b, IR_DT_F32, SH(2, 4), want, 0);
}

static void test_tensorscatter(void **state)
{
    (void)state;
    /* two samples, sequence axis of 4, updates of 2 steps at their write index */
    tensorscatter("linear", V(0, 2), V(1, 2, 0, 0, 0, 0, 3, 4), NULL);
    tensorscatter("circular", V(1, 3), V(0, 1, 2, 0, 4, 0, 0, 3), NULL);
    tensorscatter("circular", V(-1, 6), V(2, 0, 0, 1, 0, 0, 3, 4), NULL);
    tensorscatter("linear", V(1, 3), NULL, "write index 3 + 1 is outside the cache's sequence length 4");
    tensorscatter("ring", V(0, 0), NULL, "mode must be \"linear\" or \"circular\", not \"ring\"");

    /* no write_indices: written from 0; default axis -2 */
    B b;
    b_init(&b);
    int in[] = { f32(&b, SH(1, 3, 1), V(7, 8, 9)), f32(&b, SH(1, 2, 1), V(5, 6)) };
    node(&b, IR_OP_TensorScatter, 2, in);
    expect(&b, IR_DT_F32, SH(1, 3, 1), V(5, 6, 9), 0);

    b_init(&b);
    int in2[] = { f32(&b, SH(1, 3), V(7, 8, 9)), f32(&b, SH(1, 3), V(5, 5, 5)) };
    node(&b, IR_OP_TensorScatter, 2, in2);
    expect_err(&b, "axis must not be 0 (the batch axis)");
}

/* ------------------------------------------------------------ indexing */

static void test_onehot(void **state)
{
    (void)state;
    /* -1 wraps to depth-1; 5 is outside [-4, 4) and gives an all-off row */
    B b;
    b_init(&b);
    int in[] = { i64(&b, SH(4), V(0, -1, 2, 5)), i64(&b, SCALAR, V(4)), f32(&b, SH(2), V(-1, 7)) };
    node(&b, IR_OP_OneHot, 3, in);
    expect(&b, IR_DT_F32, SH(4, 4), V(7, -1, -1, -1, -1, -1, -1, 7, -1, -1, 7, -1, -1, -1, -1, -1), 0);

    /* axis 0, float indices (truncated), float depth, int64 values */
    b_init(&b);
    int in2[] = { f32(&b, SH(2), V(1.7, 0)), f32(&b, SH(1), V(3)), i64(&b, SH(2), V(0, 1)) };
    node(&b, IR_OP_OneHot, 3, in2);
    a_int(&b, IR_A_axis, 0);
    expect(&b, IR_DT_I64, SH(3, 2), V(0, 1, 1, 0, 0, 0), 0);

    b_init(&b);
    int in3[] = { i64(&b, SH(2), V(0, 1)), i64(&b, SCALAR, V(0)), f32(&b, SH(2), V(0, 1)) };
    node(&b, IR_OP_OneHot, 3, in3);
    expect_err(&b, "depth 0 must be positive");

    b_init(&b);
    int in4[] = { i64(&b, SH(2), V(0, 1)), tens(&b, 1, IR_DT_I64, SCALAR, NULL), f32(&b, SH(2), V(0, 1)) };
    node(&b, IR_OP_OneHot, 3, in4);
    expect_err(&b, "the depth input 'c1' must be a constant or computable at compile time");

    b_init(&b);
    int in5[] = { i64(&b, SH(2), V(0, 1)), i64(&b, SCALAR, V(3)), f32(&b, SH(2), V(0, 1)) };
    node(&b, IR_OP_OneHot, 3, in5);
    a_int(&b, IR_A_axis, 2);
    expect_err(&b, "axis 2 is out of range for output rank 2");
}

static void test_eyelike(void **state)
{
    (void)state;
    B b;
    b_init(&b);
    int in[] = { f32(&b, SH(2, 3), V(5, 5, 5, 5, 5, 5)) };
    node(&b, IR_OP_EyeLike, 1, in);
    a_int(&b, IR_A_k, 1);
    expect(&b, IR_DT_F32, SH(2, 3), V(0, 1, 0, 0, 0, 1), 0);

    b_init(&b);
    int in2[] = { f32(&b, SH(3, 2), V(0, 0, 0, 0, 0, 0)) };
    node(&b, IR_OP_EyeLike, 1, in2);
    a_int(&b, IR_A_k, -1);
    a_int(&b, IR_A_dtype, 7);                   /* int64 */
    expect(&b, IR_DT_I64, SH(3, 2), V(0, 0, 1, 0, 0, 1), 0);

    b_init(&b);
    int in3[] = { f32(&b, SH(3), V(0, 0, 0)) };
    node(&b, IR_OP_EyeLike, 1, in3);
    expect_err(&b, "must be 2-D, not rank 1");

    b_init(&b);
    int in4[] = { f32(&b, SH(1, 1), V(0)) };
    node(&b, IR_OP_EyeLike, 1, in4);
    a_int(&b, IR_A_dtype, 8);                   /* string */
    expect_err(&b, "dtype 8 is not a supported data type");
}

static void test_compress_nonzero(void **state)
{
    (void)state;
    B b;
    b_init(&b);
    int in[] = { f32(&b, SH(3, 2), V(1, 2, 3, 4, 5, 6)), tens(&b, 0, IR_DT_BOOL, SH(3), V(0, 1, 1)) };
    node(&b, IR_OP_Compress, 2, in);
    a_int(&b, IR_A_axis, 0);
    expect(&b, IR_DT_F32, SH(2, 2), V(3, 4, 5, 6), 0);

    /* axis -1, condition shorter than the axis */
    b_init(&b);
    int in2[] = { f32(&b, SH(3, 2), V(1, 2, 3, 4, 5, 6)), tens(&b, 0, IR_DT_BOOL, SH(1), V(1)) };
    node(&b, IR_OP_Compress, 2, in2);
    a_int(&b, IR_A_axis, -1);
    expect(&b, IR_DT_F32, SH(3, 1), V(1, 3, 5), 0);

    /* no axis: the flattened input */
    b_init(&b);
    int in3[] = { f32(&b, SH(3, 2), V(1, 2, 3, 4, 5, 6)), tens(&b, 0, IR_DT_BOOL, SH(5), V(0, 1, 0, 0, 1)) };
    node(&b, IR_OP_Compress, 2, in3);
    expect(&b, IR_DT_F32, SH(2), V(2, 5), 0);

    b_init(&b);
    int in4[] = { f32(&b, SH(2), V(1, 2)), tens(&b, 0, IR_DT_BOOL, SH(3), V(0, 0, 1)) };
    node(&b, IR_OP_Compress, 2, in4);
    expect_err(&b, "condition is true at position 2, beyond the axis length 2");

    b_init(&b);
    int in5[] = { f32(&b, SH(2), V(1, 2)), tens(&b, 1, IR_DT_BOOL, SH(2), NULL) };
    node(&b, IR_OP_Compress, 2, in5);
    expect_err(&b, "data-dependent output shape is not supported by a static compiler");

    b_init(&b);
    int in6[] = { i64(&b, SH(2, 2), V(1, 0, 1, 1)) };
    node(&b, IR_OP_NonZero, 1, in6);
    expect(&b, IR_DT_I64, SH(2, 3), V(0, 1, 1, 0, 0, 1), 0);

    b_init(&b);
    int in7[] = { tens(&b, 1, IR_DT_F32, SH(4), NULL) };
    node(&b, IR_OP_NonZero, 1, in7);
    expect_err(&b, "the input 'c0' must be a constant or computable at compile time (data-dependent output shape "
                   "is not supported by a static compiler)");
}

/* A Unique node over x with its four outputs; inference computes them (x is
 * a constant); each output is checked against want[k] (n[k] values). */
static void unique_case(IrShape xs, const double *xv, int axis, int sorted, const double *const *want,
                        const int *n)
{
    B b;
    b_init(&b);
    int in[] = { f32(&b, xs, xv) }, out[4];
    static const char *const names[4] = { "y", "indices", "inverse", "counts" };
    for (int k = 0; k < 4; k++) {
        out[k] = ir_add_tensor(b.g, names[k], IR_TK_VALUE, util_loc_file("t"), &b.d);
        ir_add_output(b.g, out[k]);
    }
    b.node = ir_add_node(b.g, IR_OP_Unique, "n", 1, in, 4, out, util_loc_file("t"));
    if (axis != 99)
        a_int(&b, IR_A_axis, axis);
    a_int(&b, IR_A_sorted, sorted);
    int rc = pass_infer(b.g, &b.d);
    if (rc)
        print_error("unexpected error: %s\n", b.d.msg);
    assert_int_equal(rc, 0);
    for (int k = 0; k < 4; k++) {
        const IrTensor *t = &b.g->tensors[out[k]];
        assert_non_null(t->v.data);
        assert_int_equal(ir_shape_numel(&t->v.shape), n[k]);
        assert_int_equal(t->v.dtype, k ? IR_DT_I64 : IR_DT_F32);
        for (int j = 0; j < n[k]; j++) {
            double got = ir_load_f64(t->v.dtype, t->v.data, j);
            if (want[k][j] != want[k][j])
                assert_true(got != got);
            else
                assert_true(got == want[k][j]);
        }
    }
    ir_graph_free(b.g);
}

static void test_unique(void **state)
{
    (void)state;
    /* ONNX's examples: flattened, sorted and in first-seen order */
    static const double x1[] = { 2, 1, 1, 3, 4, 3 };
    const double *s1[] = { V(1, 2, 3, 4), V(1, 0, 3, 4), V(1, 0, 0, 2, 3, 2), V(2, 1, 2, 1) };
    unique_case(SH(6), x1, 99, 1, s1, (const int[]){ 4, 4, 6, 4 });
    const double *u1[] = { V(2, 1, 3, 4), V(0, 1, 3, 4), V(0, 1, 1, 2, 3, 2), V(1, 2, 2, 1) };
    unique_case(SH(6), x1, 99, 0, u1, (const int[]){ 4, 4, 6, 4 });
    /* rows along axis 0 (and -2), compared lexicographically */
    static const double x2[] = { 2, 3, 4, 1, 0, 0, 1, 0, 0 };
    const double *s2[] = { V(1, 0, 0, 2, 3, 4), V(1, 0), V(1, 0, 0), V(2, 1) };
    unique_case(SH(3, 3), x2, 0, 1, s2, (const int[]){ 6, 2, 3, 2 });
    unique_case(SH(3, 3), x2, -2, 1, s2, (const int[]){ 6, 2, 3, 2 });
    /* columns along axis 1 of a 2x4: columns (1,5) (0,2) (1,5) (0,1) */
    static const double x3[] = { 1, 0, 1, 0, 5, 2, 5, 1 };
    const double *s3[] = { V(0, 0, 1, 1, 2, 5), V(3, 1, 0), V(2, 1, 2, 0), V(1, 1, 2) };
    unique_case(SH(2, 4), x3, 1, 1, s3, (const int[]){ 6, 3, 4, 3 });
    /* NaN after every number, all NaNs one value */
    const double nan = NAN;
    const double x4[] = { nan, 1, nan, -1 };
    const double *s4[] = { (const double[]){ -1, 1, nan }, V(3, 1, 0), V(2, 1, 2, 0), V(1, 1, 2) };
    unique_case(SH(4), x4, 99, 1, s4, (const int[]){ 3, 3, 4, 3 });

    /* a runtime input: inference asks for its value (IrGraph.need_value) */
    B b;
    b_init(&b);
    int in[] = { tens(&b, 1, IR_DT_F32, SH(4), NULL) };
    node(&b, IR_OP_Unique, 1, in);
    expect_err(&b, "the input 'c0' must be a constant or computable at compile time (data-dependent output shape "
                   "is not supported by a static compiler)");
}

static void test_reversesequence(void **state)
{
    (void)state;
    /* ONNX doc example: time-major, lengths 4 3 2 1 */
    B b;
    b_init(&b);
    int in[] = { f32(&b, SH(4, 4), V(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)),
                 i64(&b, SH(4), V(4, 3, 2, 1)) };
    node(&b, IR_OP_ReverseSequence, 2, in);
    expect(&b, IR_DT_F32, SH(4, 4), V(12, 9, 6, 3, 8, 5, 2, 7, 4, 1, 10, 11, 0, 13, 14, 15), 0);

    /* batch-major, int32 lengths */
    b_init(&b);
    int in2[] = { f32(&b, SH(2, 3), V(1, 2, 3, 4, 5, 6)), tens(&b, 0, IR_DT_I32, SH(2), V(3, 2)) };
    node(&b, IR_OP_ReverseSequence, 2, in2);
    a_int(&b, IR_A_batch_axis, 0);
    a_int(&b, IR_A_time_axis, 1);
    expect(&b, IR_DT_F32, SH(2, 3), V(3, 2, 1, 5, 4, 6), 0);

    b_init(&b);
    int in3[] = { f32(&b, SH(2, 2), V(1, 2, 3, 4)), i64(&b, SH(2), V(1, 3)) };
    node(&b, IR_OP_ReverseSequence, 2, in3);
    expect_err(&b, "sequence_lens[1] = 3 is out of range 0..2");

    b_init(&b);
    int in4[] = { f32(&b, SH(2, 2), V(1, 2, 3, 4)), i64(&b, SH(2), V(1, 1)) };
    node(&b, IR_OP_ReverseSequence, 2, in4);
    a_int(&b, IR_A_batch_axis, 0);
    expect_err(&b, "batch_axis 0 and time_axis 0 must be 0 and 1 in some order");
}

/* ------------------------------------------------------------ sampling */

static void test_centercroppad(void **state)
{
    (void)state;
    B b;
    b_init(&b);
    int in[] = { f32(&b, SH(5), V(0, 1, 2, 3, 4)), i64(&b, SH(1), V(3)) };
    node(&b, IR_OP_CenterCropPad, 2, in);
    expect(&b, IR_DT_F32, SH(3), V(1, 2, 3), 0);

    /* pad by 3: one before, two after (odd remainder goes to the end) */
    b_init(&b);
    int in2[] = { f32(&b, SH(5), V(0, 1, 2, 3, 4)), i64(&b, SH(1), V(8)) };
    node(&b, IR_OP_CenterCropPad, 2, in2);
    expect(&b, IR_DT_F32, SH(8), V(0, 0, 1, 2, 3, 4, 0, 0), 0);

    /* 2-D, only the last axis (axes=[-1]): crop 4 -> 1 keeps column 1 */
    b_init(&b);
    int in3[] = { f32(&b, SH(2, 4), V(1, 2, 3, 4, 5, 6, 7, 8)), i64(&b, SH(1), V(1)) };
    node(&b, IR_OP_CenterCropPad, 2, in3);
    a_ints(&b, IR_A_axes, 1, (const int64_t[]){ -1 });
    expect(&b, IR_DT_F32, SH(2, 1), V(2, 6), 0);

    b_init(&b);
    int in4[] = { f32(&b, SH(2, 4), V(1, 2, 3, 4, 5, 6, 7, 8)), i64(&b, SH(1), V(1)) };
    node(&b, IR_OP_CenterCropPad, 2, in4);
    expect_err(&b, "shape has 1 values for 2 axes");
}

static void test_maxunpool(void **state)
{
    (void)state;
    static const int64_t k2[] = { 2, 2 };
    /* ONNX doc example (without output_shape) */
    B b;
    b_init(&b);
    int in[] = { f32(&b, SH(1, 1, 2, 2), V(5, 6, 7, 8)), i64(&b, SH(1, 1, 2, 2), V(5, 7, 13, 15)) };
    node(&b, IR_OP_MaxUnpool, 2, in);
    a_ints(&b, IR_A_kernel_shape, 2, k2);
    a_ints(&b, IR_A_strides, 2, k2);
    expect(&b, IR_DT_F32, SH(1, 1, 4, 4), V(0, 0, 0, 0, 0, 5, 0, 6, 0, 0, 0, 0, 0, 7, 0, 8), 0);

    /* output_shape 5x5: the 4x4 unpooled block sits at the top left */
    b_init(&b);
    int in2[] = { f32(&b, SH(1, 1, 2, 2), V(5, 6, 7, 8)), i64(&b, SH(1, 1, 2, 2), V(5, 7, 13, 15)),
                  i64(&b, SH(4), V(1, 1, 5, 5)) };
    node(&b, IR_OP_MaxUnpool, 3, in2);
    a_ints(&b, IR_A_kernel_shape, 2, k2);
    a_ints(&b, IR_A_strides, 2, k2);
    expect(&b, IR_DT_F32, SH(1, 1, 5, 5),
           V(0, 0, 0, 0, 0, 0, 5, 0, 6, 0, 0, 0, 0, 0, 0, 0, 7, 0, 8, 0, 0, 0, 0, 0, 0), 0);

    b_init(&b);
    int in3[] = { f32(&b, SH(1, 1, 2, 2), V(5, 6, 7, 8)), i64(&b, SH(1, 1, 2, 2), V(5, 7, 13, 16)) };
    node(&b, IR_OP_MaxUnpool, 2, in3);
    a_ints(&b, IR_A_kernel_shape, 2, k2);
    a_ints(&b, IR_A_strides, 2, k2);
    expect_err(&b, "index 16 is out of range for the unpooled tensor of 16 elements");

    b_init(&b);
    int in4[] = { f32(&b, SH(1, 1, 2, 2), V(5, 6, 7, 8)), i64(&b, SH(1, 1, 2, 2), V(0, 0, 0, 0)) };
    node(&b, IR_OP_MaxUnpool, 2, in4);
    a_ints(&b, IR_A_kernel_shape, 1, k2);
    expect_err(&b, "kernel_shape must have 2 values (one per spatial axis), not 1");
}

static void test_col2im(void **state)
{
    (void)state;
    /* 1 channel, block 1x2 over a 1x4 image: 3 blocks; rows are the block's
     * two taps: y[b + k] += x[k, b] */
    B b;
    b_init(&b);
    int in[] = { f32(&b, SH(1, 2, 3), V(1, 2, 3, 4, 5, 6)), i64(&b, SH(2), V(1, 4)), i64(&b, SH(2), V(1, 2)) };
    node(&b, IR_OP_Col2Im, 3, in);
    expect(&b, IR_DT_F32, SH(1, 1, 1, 4), V(1, 6, 8, 6), 0);

    /* strides 2, pads 1 on the width: padded width 6 holds blocks at 0, 2, 4
     * (image positions -1..0, 1..2, 3..4): tap 0 of block 0 falls in the pad */
    b_init(&b);
    int in2[] = { f32(&b, SH(1, 2, 3), V(1, 2, 3, 4, 5, 6)), i64(&b, SH(2), V(1, 4)), i64(&b, SH(2), V(1, 2)) };
    node(&b, IR_OP_Col2Im, 3, in2);
    a_ints(&b, IR_A_strides, 2, (const int64_t[]){ 1, 2 });
    a_ints(&b, IR_A_pads, 4, (const int64_t[]){ 0, 1, 0, 1 });
    expect(&b, IR_DT_F32, SH(1, 1, 1, 4), V(4, 2, 5, 3), 0);

    b_init(&b);
    int in3[] = { f32(&b, SH(1, 2, 4), V(1, 2, 3, 4, 5, 6, 7, 8)), i64(&b, SH(2), V(1, 4)), i64(&b, SH(2), V(1, 2)) };
    node(&b, IR_OP_Col2Im, 3, in3);
    expect_err(&b, "input dimension 2 (4) must be the number of blocks 3");
}

static void test_gridsample(void **state)
{
    (void)state;
    /* 2x2 image [[1,2],[3,4]]; grid points (x, y): (0,0) (-1,-1) (0.9,-0.3)
     * (-1.7,0.6); expected values from onnx.reference for every mode,
     * padding mode and align_corners */
    static const char *const modes[] = { "nearest", "linear", "cubic" };
    static const char *const pads[] = { "zeros", "border", "reflection" };
    static const double want[3][3][2][4] = {
        { { { 1, 1, 2, 0 }, { 1, 1, 2, 3 } }, { { 1, 1, 2, 3 }, { 1, 1, 2, 3 } }, { { 1, 1, 2, 3 }, { 1, 1, 2, 3 } } },
        { { { 2.5, 0.25, 1.44, 0 }, { 2.5, 1, 2.65, 1.6899999 } }, { { 2.5, 1, 2.4, 3 }, { 2.5, 1, 2.65, 2.6000001 } },
          { { 2.5, 1, 2.4, 3.2 }, { 2.5, 1, 2.65, 2.95 } } },
        { { { 3.5253906, 0.109375, 1.73664, -0.2760479 }, { 3.5253906, 1, 3.1898413, 1.8502905 } },
          { { 2.5, 0.71875, 2.4600005, 3.1215005 }, { 2.5, 1, 2.6265628, 2.6480005 } },
          { { 2.5, 0.4375, 2.5320013, 3.3110018 }, { 2.5, 1, 2.5562496, 3.073752 } } },
    };
    for (int m = 0; m < 3; m++)
        for (int p = 0; p < 3; p++)
            for (int a = 0; a < 2; a++) {
                B b;
                b_init(&b);
                int in[] = { f32(&b, SH(1, 1, 2, 2), V(1, 2, 3, 4)),
                             f32(&b, SH(1, 1, 4, 2), V(0, 0, -1, -1, 0.9, -0.3, -1.7, 0.6)) };
                node(&b, IR_OP_GridSample, 2, in);
                a_str(&b, IR_A_mode, modes[m]);
                a_str(&b, IR_A_padding_mode, pads[p]);
                a_int(&b, IR_A_align_corners, a);
                expect(&b, IR_DT_F32, SH(1, 1, 1, 4), want[m][p][a], 1e-5);
            }

    /* 5-D (volumetric) linear, onnx.reference */
    B b;
    b_init(&b);
    int in[] = { f32(&b, SH(1, 1, 2, 2, 2), V(0, 1, 2, 3, 4, 5, 6, 7)),
                 f32(&b, SH(1, 1, 1, 2, 3), V(0.2, -0.4, 0.5, 1.3, 0.1, -0.9)) };
    node(&b, IR_OP_GridSample, 2, in);
    a_str(&b, IR_A_mode, "bilinear");                 /* opset-16 name */
    expect(&b, IR_DT_F32, SH(1, 1, 1, 1, 2), V(4.8999996, 0.2640001), 1e-5);

    /* 5-D cubic (opset 22 allows N-cubic): at the center of a 2x2x2 volume the
     * taps per axis are [-0.09375, 0.59375, 0.59375, -0.09375] and the outer
     * two read zeros, so y = 0.59375^3 * sum(x) = 0.59375^3 * 28 */
    b_init(&b);
    int in2[] = { f32(&b, SH(1, 1, 2, 2, 2), V(0, 1, 2, 3, 4, 5, 6, 7)), f32(&b, SH(1, 1, 1, 1, 3), V(0, 0, 0)) };
    node(&b, IR_OP_GridSample, 2, in2);
    a_str(&b, IR_A_mode, "cubic");
    expect(&b, IR_DT_F32, SH(1, 1, 1, 1, 1), V(0.59375 * 0.59375 * 0.59375 * 28), 1e-5);

    b_init(&b);
    int in3[] = { f32(&b, SH(1, 1, 2, 2), V(1, 2, 3, 4)), f32(&b, SH(1, 1, 1, 2), V(0, 0)) };
    node(&b, IR_OP_GridSample, 2, in3);
    a_str(&b, IR_A_padding_mode, "wrap");
    expect_err(&b, "padding_mode must be \"zeros\", \"border\" or \"reflection\", not \"wrap\"");

    b_init(&b);
    int in4[] = { f32(&b, SH(1, 1, 2, 2), V(1, 2, 3, 4)), f32(&b, SH(1, 1, 1, 3), V(0, 0, 0)) };
    node(&b, IR_OP_GridSample, 2, in4);
    expect_err(&b, "grid [1,1,1,3] must be [N, spatial..., 2]");
}

static void test_affinegrid(void **state)
{
    (void)state;
    /* identity theta: the normalized pixel centers (align_corners 0) or corners (1) */
    for (int a = 0; a < 2; a++) {
        B b;
        b_init(&b);
        int in[] = { f32(&b, SH(1, 2, 3), V(1, 0, 0, 0, 1, 0)), i64(&b, SH(4), V(1, 1, 2, 2)) };
        node(&b, IR_OP_AffineGrid, 2, in);
        a_int(&b, IR_A_align_corners, a);
        double c = a ? 1 : 0.5;
        expect(&b, IR_DT_F32, SH(1, 2, 2, 2), V(-c, -c, c, -c, -c, c, c, c), TOL);
    }
    /* 3-D: x' = 2x + 0.5, y' = z, z' = y (align_corners 1, size 1x2x1 -> x = -1) */
    B b;
    b_init(&b);
    int in[] = { f32(&b, SH(1, 3, 4), V(2, 0, 0, 0.5, 0, 0, 1, 0, 0, 1, 0, 0)), i64(&b, SH(5), V(1, 1, 1, 2, 1)) };
    node(&b, IR_OP_AffineGrid, 2, in);
    a_int(&b, IR_A_align_corners, 1);
    /* points (x, y, z) = (-1, -1, -1), (-1, 1, -1) */
    expect(&b, IR_DT_F32, SH(1, 1, 2, 1, 3), V(-1.5, -1, -1, -1.5, -1, 1), TOL);

    b_init(&b);
    int in2[] = { f32(&b, SH(1, 2, 3), V(1, 0, 0, 0, 1, 0)), i64(&b, SH(3), V(1, 1, 2)) };
    node(&b, IR_OP_AffineGrid, 2, in2);
    expect_err(&b, "size must have 4 values (N, C, H, W) or 5 (N, C, D, H, W), not 3");
}

/* ------------------------------------------------------------ bitwise */

static void test_bitwise(void **state)
{
    (void)state;
    static const IrOp ops[] = { IR_OP_BitwiseAnd, IR_OP_BitwiseOr, IR_OP_BitwiseXor };
    /* [2,2] op [2] broadcast: 12 = 0b1100, 10 = 0b1010, -1 all ones */
    static const double want[3][4] = { { 8, 2, 10, 0 }, { 14, -1, 10, 2 }, { 6, -3, 0, 2 } };
    for (int k = 0; k < 3; k++) {
        B b;
        b_init(&b);
        int in[] = { tens(&b, 0, IR_DT_I32, SH(2, 2), V(12, -1, 10, 0)), tens(&b, 0, IR_DT_I32, SH(2), V(10, 2)) };
        node(&b, ops[k], 2, in);
        expect(&b, IR_DT_I32, SH(2, 2), want[k], 0);
    }
    B b;
    b_init(&b);
    int in[] = { tens(&b, 0, IR_DT_U8, SH(3), V(5, 0, 255)) };
    node(&b, IR_OP_BitwiseNot, 1, in);
    expect(&b, IR_DT_U8, SH(3), V(250, 255, 0), 0);

    b_init(&b);
    int in2[] = { tens(&b, 0, IR_DT_I64, SH(1), V(-6)) };
    node(&b, IR_OP_BitwiseNot, 1, in2);
    expect(&b, IR_DT_I64, SH(1), V(5), 0);

    b_init(&b);
    int in3[] = { f32(&b, SH(1), V(1)), f32(&b, SH(1), V(1)) };
    node(&b, IR_OP_BitwiseAnd, 2, in3);
    expect_err(&b, "is float32; BitwiseAnd needs integers");

    b_init(&b);
    int in4[] = { tens(&b, 0, IR_DT_I32, SH(3), V(1, 2, 3)), tens(&b, 0, IR_DT_I32, SH(2), V(1, 2)) };
    node(&b, IR_OP_BitwiseXor, 2, in4);
    expect_err(&b, "shapes [3] and [2] cannot be broadcast together");
}

/* ------------------------------------------------------------ signal */

static void window(IrOp op, int periodic, int64_t dtype, const double *want, IrDType dt)
{
    B b;
    b_init(&b);
    int in[] = { i64(&b, SCALAR, V(4)) };
    node(&b, op, 1, in);
    a_int(&b, IR_A_periodic, periodic);
    if (dtype)
        a_int(&b, IR_A_output_datatype, dtype);
    expect(&b, dt, SH(4), want, 1e-6);
}

static void test_windows(void **state)
{
    (void)state;
    window(IR_OP_HannWindow, 1, 0, V(0, 0.5, 1, 0.5), IR_DT_F32);
    window(IR_OP_HannWindow, 0, 11, V(0, 0.75, 0.75, 0), IR_DT_F64);
    window(IR_OP_HammingWindow, 1, 0, V(4.0 / 46, 25.0 / 46, 1, 25.0 / 46), IR_DT_F32);
    window(IR_OP_HammingWindow, 0, 0, V(4.0 / 46, 25.0 / 46 + 21.0 / 92, 25.0 / 46 + 21.0 / 92, 4.0 / 46), IR_DT_F32);
    window(IR_OP_BlackmanWindow, 1, 0, V(0, 0.34, 1, 0.34), IR_DT_F32);
    /* symmetric N=3: 0.42 - 0.5 cos(2 pi/3) + 0.08 cos(4 pi/3) = 0.63 */
    window(IR_OP_BlackmanWindow, 0, 0, V(0, 0.63, 0.63, 0), IR_DT_F32);

    B b;
    b_init(&b);
    int in[] = { tens(&b, 1, IR_DT_I64, SCALAR, NULL) };
    node(&b, IR_OP_HannWindow, 1, in);
    expect_err(&b, "the size input 'c0' must be a constant or computable at compile time");

    b_init(&b);
    int in2[] = { i64(&b, SCALAR, V(4)) };
    node(&b, IR_OP_HannWindow, 1, in2);
    a_int(&b, IR_A_output_datatype, 99);
    expect_err(&b, "output_datatype 99 is not a supported data type");
}

static void test_dft(void **state)
{
    (void)state;
    /* real [1,2,3,4] along axis 1 of [1,4,1]: 10, -2+2i, -2, -2-2i */
    B b;
    b_init(&b);
    int in[] = { f32(&b, SH(1, 4, 1), V(1, 2, 3, 4)) };
    node(&b, IR_OP_DFT, 1, in);
    expect(&b, IR_DT_F32, SH(1, 4, 2), V(10, 0, -2, 2, -2, 0, -2, -2), 1e-5);

    /* onesided: the first 4/2+1 bins */
    b_init(&b);
    int in2[] = { f32(&b, SH(1, 4, 1), V(1, 2, 3, 4)) };
    node(&b, IR_OP_DFT, 1, in2);
    a_int(&b, IR_A_onesided, 1);
    expect(&b, IR_DT_F32, SH(1, 3, 2), V(10, 0, -2, 2, -2, 0), 1e-5);

    /* inverse of the spectrum gives the signal back */
    b_init(&b);
    int in3[] = { f32(&b, SH(1, 4, 2), V(10, 0, -2, 2, -2, 0, -2, -2)) };
    node(&b, IR_OP_DFT, 1, in3);
    a_int(&b, IR_A_inverse, 1);
    expect(&b, IR_DT_F32, SH(1, 4, 2), V(1, 0, 2, 0, 3, 0, 4, 0), 1e-5);

    /* dft_length 2 truncates to [1,2]; 6 zero-pads (bin k = sum x[t] w^(kt), w = e^(-i pi/3)) */
    b_init(&b);
    int in4[] = { f32(&b, SH(1, 4, 1), V(1, 2, 3, 4)), i64(&b, SCALAR, V(2)) };
    node(&b, IR_OP_DFT, 2, in4);
    expect(&b, IR_DT_F32, SH(1, 2, 2), V(3, 0, -1, 0), 1e-5);
    b_init(&b);
    int in5[] = { f32(&b, SH(1, 4, 1), V(1, 2, 3, 4)), i64(&b, SCALAR, V(6)) };
    node(&b, IR_OP_DFT, 2, in5);
    double s3 = sqrt(3.0);
    expect(&b, IR_DT_F32, SH(1, 6, 2),
           V(10, 0, -3.5, -2.5 * s3, 2.5, s3 / 2, -2, 0, 2.5, -s3 / 2, -3.5, 2.5 * s3), 1e-5);

    /* opset-20 axis input: axis 0 of a [2,1,1] complex-less signal; absent dft_length */
    b_init(&b);
    int in6[] = { f32(&b, SH(2, 1, 1), V(1, 3)), -1, i64(&b, SCALAR, V(0)) };
    node(&b, IR_OP_DFT, 3, in6);
    expect(&b, IR_DT_F32, SH(2, 1, 2), V(4, 0, -2, 0), 1e-5);

    /* opset-17 form, upgraded by fe_upgrade: default axis 1 (for rank 4 this
     * differs from DFT-20's -2) */
    b_init(&b);
    b.g->opset = 17;
    int in7[] = { f32(&b, SH(1, 2, 1, 1), V(1, 3)) };
    node(&b, IR_OP_DFT, 1, in7);
    assert_int_equal(fe_upgrade(b.g, &b.d), 0);
    expect(&b, IR_DT_F32, SH(1, 2, 1, 2), V(4, 0, -2, 0), 1e-5);

    /* and an explicit DFT-17 axis attribute */
    b_init(&b);
    b.g->opset = 17;
    int in7b[] = { f32(&b, SH(1, 1, 2, 1), V(1, 3)) };
    node(&b, IR_OP_DFT, 1, in7b);
    a_int(&b, IR_A_axis, -2);
    assert_int_equal(fe_upgrade(b.g, &b.d), 0);
    assert_int_equal(b.g->nodes[b.node].n_in, 3);
    assert_false(ir_has_attr(&b.g->nodes[b.node], IR_A_axis));
    expect(&b, IR_DT_F32, SH(1, 1, 2, 2), V(4, 0, -2, 0), 1e-5);

    b_init(&b);
    int in8[] = { f32(&b, SH(1, 4, 1), V(1, 2, 3, 4)), -1, i64(&b, SCALAR, V(-1)) };
    node(&b, IR_OP_DFT, 3, in8);
    expect_err(&b, "axis -1 must name a signal axis (not the last, real/imaginary one) of rank 3");

    b_init(&b);
    int in9[] = { f32(&b, SH(1, 4, 3), V(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)) };
    node(&b, IR_OP_DFT, 1, in9);
    expect_err(&b, "last dimension of 1 (real) or 2 (complex)");

    b_init(&b);
    int in10[] = { f32(&b, SH(1, 2, 2), V(1, 0, 2, 0)) };
    node(&b, IR_OP_DFT, 1, in10);
    a_int(&b, IR_A_onesided, 1);
    expect_err(&b, "onesided=1 needs a real input");
}

static void test_stft(void **state)
{
    (void)state;
    /* [1,2,3,4], hop 2, frames of 2: [1,2] -> 3, -1; [3,4] -> 7, -1 */
    B b;
    b_init(&b);
    int in[] = { f32(&b, SH(1, 4, 1), V(1, 2, 3, 4)), i64(&b, SCALAR, V(2)), -1, i64(&b, SCALAR, V(2)) };
    node(&b, IR_OP_STFT, 4, in);
    expect(&b, IR_DT_F32, SH(1, 2, 2, 2), V(3, 0, -1, 0, 7, 0, -1, 0), 1e-5);

    /* window [0.5, 1], hop 1: frames [0.5,2] [1,3] [1.5,4]; two-sided */
    b_init(&b);
    int in2[] = { f32(&b, SH(1, 4, 1), V(1, 2, 3, 4)), i64(&b, SCALAR, V(1)), f32(&b, SH(2), V(0.5, 1)) };
    node(&b, IR_OP_STFT, 3, in2);
    a_int(&b, IR_A_onesided, 0);
    expect(&b, IR_DT_F32, SH(1, 3, 2, 2), V(2.5, 0, -1.5, 0, 4, 0, -2, 0, 5.5, 0, -2.5, 0), 1e-5);

    b_init(&b);
    int in3[] = { f32(&b, SH(1, 4, 1), V(1, 2, 3, 4)), i64(&b, SCALAR, V(1)), f32(&b, SH(3), V(1, 1, 1)),
                  i64(&b, SCALAR, V(2)) };
    node(&b, IR_OP_STFT, 4, in3);
    expect_err(&b, "window length 3 differs from frame_length 2");

    b_init(&b);
    int in4[] = { f32(&b, SH(1, 4, 1), V(1, 2, 3, 4)), i64(&b, SCALAR, V(0)) };
    node(&b, IR_OP_STFT, 2, in4);
    expect_err(&b, "frame_step 0 must be positive");
}

static void test_melweightmatrix(void **state)
{
    (void)state;
    /* onnx.reference: 3 mel bins, dft_length 16, 8 kHz, 0..4000 Hz */
    B b;
    b_init(&b);
    int in[] = { i64(&b, SCALAR, V(3)), i64(&b, SCALAR, V(16)), i64(&b, SCALAR, V(8000)), f32(&b, SCALAR, V(0)),
                 f32(&b, SCALAR, V(4000)) };
    node(&b, IR_OP_MelWeightMatrix, 5, in);
    expect(&b, IR_DT_F32, SH(9, 3),
           V(1, 0, 0, 0, 1, 0, 0, 0.5, 0.5, 0, 0, 1, 0, 0, 0.5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), 1e-6);

    b_init(&b);
    int in2[] = { i64(&b, SCALAR, V(3)), i64(&b, SCALAR, V(16)), i64(&b, SCALAR, V(8000)), f32(&b, SCALAR, V(0)),
                  f32(&b, SCALAR, V(40000)) };
    node(&b, IR_OP_MelWeightMatrix, 5, in2);
    expect_err(&b, "upper_edge_hertz maps beyond the 9 spectrogram bins");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scatter_elements),
        cmocka_unit_test(test_scatter_elements_errors),
        cmocka_unit_test(test_scatternd),
        cmocka_unit_test(test_tensorscatter),
        cmocka_unit_test(test_onehot),
        cmocka_unit_test(test_eyelike),
        cmocka_unit_test(test_compress_nonzero),
        cmocka_unit_test(test_unique),
        cmocka_unit_test(test_reversesequence),
        cmocka_unit_test(test_centercroppad),
        cmocka_unit_test(test_maxunpool),
        cmocka_unit_test(test_col2im),
        cmocka_unit_test(test_gridsample),
        cmocka_unit_test(test_affinegrid),
        cmocka_unit_test(test_bitwise),
        cmocka_unit_test(test_windows),
        cmocka_unit_test(test_dft),
        cmocka_unit_test(test_stft),
        cmocka_unit_test(test_melweightmatrix),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
