/* tests/unit/test_ops_data.c — shape rules and reference kernels of the shape
 * and data-movement operators (Reshape ... Resize).  Each test builds a
 * one-node graph over constant inputs, runs pass_infer (which infers and,
 * the inputs being known, evaluates the kernel) and compares shapes and
 * values with hand-computed (or numpy / ONNX reference-computed) numbers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "interp/interp.h"
#include "ir/ir.h"
#include "passes/passes.h"

#define TOL 1e-5
#define SH(...) ((IrShape){ .rank = (int)(sizeof((int64_t[]){ __VA_ARGS__ }) / sizeof(int64_t)), \
                            .dims = { __VA_ARGS__ } })
#define SCALAR ((IrShape){ .rank = 0 })
#define N_(a) ((int)(sizeof(a) / sizeof((a)[0])))

typedef struct T {
    IrGraph *g;
    UtilDiag d;
    int node;
    int y[8];
    int tmp;
} T;

static void t_init(T *t)
{
    memset(t, 0, sizeof *t);
    t->g = ir_graph_new("g", "t.json");
    util_diag_init(&t->d);
}

static int t_tensor(T *t, IrTensorKind kind, IrDType dt, IrShape s, const void *vals)
{
    char name[32];
    snprintf(name, sizeof name, "c%d", t->tmp++);
    int x = ir_add_tensor(t->g, name, kind, util_loc_file("t"), &t->d);
    assert_true(x >= 0);
    ir_set_type(t->g, x, dt, &s);
    if (kind == IR_TK_CONST) {
        void *p = ir_alloc_data(t->g, x);
        assert_non_null(p);
        if (ir_shape_numel(&s))
            memcpy(p, vals, (size_t)ir_shape_numel(&s) * ir_dtype_size(dt));
    } else {
        ir_add_input(t->g, x);
    }
    return x;
}

static int cf(T *t, IrShape s, const float *v) { return t_tensor(t, IR_TK_CONST, IR_DT_F32, s, v); }
static int ci(T *t, IrShape s, const int64_t *v) { return t_tensor(t, IR_TK_CONST, IR_DT_I64, s, v); }
static int ci1(T *t, int cnt, const int64_t *v) { return ci(t, SH(cnt), v); }
static int iota(T *t, IrShape s)
{
    float v[256];
    for (int64_t i = 0; i < ir_shape_numel(&s); i++)
        v[i] = (float)i;
    return cf(t, s, v);
}

/* Adds the node under test with nout fresh outputs (all graph outputs). */
static void t_node(T *t, IrOp op, int nin, const int *in, int nout)
{
    for (int k = 0; k < nout; k++) {
        char name[16];
        snprintf(name, sizeof name, "y%d", k);
        t->y[k] = ir_add_tensor(t->g, name, IR_TK_VALUE, util_loc_file("t"), &t->d);
    }
    t->node = ir_add_node(t->g, op, "n", nin, in, nout, t->y, util_loc_file("t"));
    for (int k = 0; k < nout; k++)
        ir_add_output(t->g, t->y[k]);
}

static void a_int(T *t, IrAttrKey k, int64_t v)
{
    IrAttr a = { .key = k, .kind = IR_AK_INT, .v.i = v };
    assert_int_equal(ir_set_attr(t->g, t->node, &a), 0);
}
static void a_float(T *t, IrAttrKey k, double v)
{
    IrAttr a = { .key = k, .kind = IR_AK_FLOAT, .v.f = v };
    assert_int_equal(ir_set_attr(t->g, t->node, &a), 0);
}
static void a_str(T *t, IrAttrKey k, const char *v)
{
    IrAttr a = { .key = k, .kind = IR_AK_STRING, .v.s = v };
    assert_int_equal(ir_set_attr(t->g, t->node, &a), 0);
}
static void a_ints(T *t, IrAttrKey k, int cnt, const int64_t *v)
{
    IrAttr a = { .key = k, .kind = IR_AK_INTS, .n = cnt, .v.ints = (int64_t *)v };
    assert_int_equal(ir_set_attr(t->g, t->node, &a), 0);
}
static void a_tensor(T *t, IrAttrKey k, IrDType dt, IrShape s, void *data)
{
    IrArray arr = { .dtype = dt, .shape = s, .data = data };
    IrAttr a = { .key = k, .kind = IR_AK_TENSOR, .v.tensor = &arr };
    assert_int_equal(ir_set_attr(t->g, t->node, &a), 0);
}

static void t_ok(T *t)
{
    int rc = pass_infer(t->g, &t->d);
    if (rc)
        print_error("unexpected error: %s\n", t->d.msg);
    assert_int_equal(rc, 0);
}

static void t_err(T *t, const char *sub)
{
    assert_int_equal(pass_infer(t->g, &t->d), -1);
    if (!strstr(t->d.msg, sub))
        print_error("message '%s' lacks '%s'\n", t->d.msg, sub);
    assert_non_null(strstr(t->d.msg, sub));
    ir_graph_free(t->g);
}

static void check_shape(const IrTensor *y, IrShape s)
{
    char a[160], b[160];
    ir_shape_str(&y->v.shape, a, sizeof a);
    ir_shape_str(&s, b, sizeof b);
    assert_string_equal(a, b);
}

/* Output k has shape s and values v (float compare within tol). */
static void expect_f(T *t, int k, IrShape s, const double *v, double tol)
{
    const IrTensor *y = &t->g->tensors[t->y[k]];
    check_shape(y, s);
    assert_non_null(y->v.data);
    for (int64_t i = 0; i < ir_shape_numel(&s); i++) {
        double got = ir_load_f64(y->v.dtype, y->v.data, i);
        if (fabs(got - v[i]) > tol)
            print_error("element %lld: got %.9g, want %.9g\n", (long long)i, got, v[i]);
        assert_true(fabs(got - v[i]) <= tol);
    }
}

static void expect_i(T *t, int k, IrDType dt, IrShape s, const int64_t *v)
{
    const IrTensor *y = &t->g->tensors[t->y[k]];
    check_shape(y, s);
    assert_int_equal(y->v.dtype, dt);
    assert_non_null(y->v.data);
    for (int64_t i = 0; i < ir_shape_numel(&s); i++)
        assert_int_equal(ir_load_i64(dt, y->v.data, i), v[i]);
}

static void t_done(T *t) { ir_graph_free(t->g); }

/* ------------------------------------------------------------ Reshape & co */

static void test_reshape(void **state)
{
    (void)state;
    T t;
    t_init(&t);
    int64_t sh[] = { 0, -1 };
    int in[] = { iota(&t, SH(2, 3, 4)), ci1(&t, 2, sh) };
    t_node(&t, IR_OP_Reshape, 2, in, 1);
    t_ok(&t);
    double v[24];
    for (int i = 0; i < 24; i++)
        v[i] = i;
    expect_f(&t, 0, SH(2, 12), v, 0);
    t_done(&t);

    /* int8 data: bytes move unchanged; -1 first */
    t_init(&t);
    int8_t xb[6] = { -1, 2, -3, 4, -5, 6 };
    int64_t sh2[] = { -1, 2, 1 };
    int in2[] = { t_tensor(&t, IR_TK_CONST, IR_DT_I8, SH(6), xb), ci1(&t, 3, sh2) };
    t_node(&t, IR_OP_Reshape, 2, in2, 1);
    t_ok(&t);
    int64_t e2[] = { -1, 2, -3, 4, -5, 6 };
    expect_i(&t, 0, IR_DT_I8, SH(3, 2, 1), e2);
    t_done(&t);

    /* allowzero=1: 0 is a real zero */
    t_init(&t);
    float none[1] = { 0 };
    int64_t sh3[] = { 0, 5 };
    int in3[] = { cf(&t, SH(5, 0), none), ci1(&t, 2, sh3) };
    t_node(&t, IR_OP_Reshape, 2, in3, 1);
    a_int(&t, IR_A_allowzero, 1);
    t_ok(&t);
    check_shape(&t.g->tensors[t.y[0]], SH(0, 5));
    t_done(&t);
}

static void reshape_err(const int64_t *sh, int cnt, int allowzero, const char *msg)
{
    T t;
    t_init(&t);
    int in[] = { iota(&t, SH(2, 3, 4)), ci1(&t, cnt, sh) };
    t_node(&t, IR_OP_Reshape, 2, in, 1);
    if (allowzero)
        a_int(&t, IR_A_allowzero, 1);
    t_err(&t, msg);
}

static void test_reshape_errors(void **state)
{
    (void)state;
    reshape_err((int64_t[]){ 5, 5 }, 2, 0, "cannot reshape input [2,3,4] (24 elements) to shape [5,5] (25 elements)");
    reshape_err((int64_t[]){ -1, -1 }, 2, 0, "more than one -1");
    reshape_err((int64_t[]){ 0, -1 }, 2, 1, "holds both 0 and -1");
    reshape_err((int64_t[]){ 5, -1 }, 2, 0, "cannot reshape input [2,3,4] (24 elements) to shape [5,-1]");
    reshape_err((int64_t[]){ 24, -2 }, 2, 0, "only -1 may be negative");
    reshape_err((int64_t[]){ 1, 1, 1, 0 }, 4, 0, "has 0 at position 3");
    /* a shape operand that is not known at compile time */
    T t;
    t_init(&t);
    int64_t dims1[] = { 2 };
    int in[] = { iota(&t, SH(2, 3)), t_tensor(&t, IR_TK_INPUT, IR_DT_I64, SH(dims1[0]), NULL) };
    t_node(&t, IR_OP_Reshape, 2, in, 1);
    t_err(&t, "must be a constant or computable at compile time");
}

static void test_flatten(void **state)
{
    (void)state;
    struct { int64_t axis; IrShape want; } cases[] = {
        { 1, SH(2, 12) }, { -1, SH(6, 4) }, { 0, SH(1, 24) }, { 3, SH(24, 1) }, { -3, SH(1, 24) },
    };
    for (int c = 0; c < N_(cases); c++) {
        T t;
        t_init(&t);
        int x = iota(&t, SH(2, 3, 4));
        t_node(&t, IR_OP_Flatten, 1, &x, 1);
        a_int(&t, IR_A_axis, cases[c].axis);
        t_ok(&t);
        check_shape(&t.g->tensors[t.y[0]], cases[c].want);
        assert_true(ir_load_f64(IR_DT_F32, t.g->tensors[t.y[0]].v.data, 23) == 23.0);
        t_done(&t);
    }
    T t;
    t_init(&t);
    int x = iota(&t, SH(2, 3, 4));
    t_node(&t, IR_OP_Flatten, 1, &x, 1);
    a_int(&t, IR_A_axis, 4);
    t_err(&t, "axis 4 is out of range for rank 3");
}

static void test_squeeze_unsqueeze(void **state)
{
    (void)state;
    T t;
    t_init(&t);
    int x = iota(&t, SH(1, 3, 1, 2));
    t_node(&t, IR_OP_Squeeze, 1, &x, 1);
    t_ok(&t);
    double v[6] = { 0, 1, 2, 3, 4, 5 };
    expect_f(&t, 0, SH(3, 2), v, 0);
    t_done(&t);

    t_init(&t);
    int in[] = { iota(&t, SH(1, 3, 1, 2)), ci1(&t, 1, (int64_t[]){ -2 }) };
    t_node(&t, IR_OP_Squeeze, 2, in, 1);
    t_ok(&t);
    expect_f(&t, 0, SH(1, 3, 2), v, 0);
    t_done(&t);

    t_init(&t);
    int in2[] = { iota(&t, SH(1, 3, 1, 2)), ci1(&t, 1, (int64_t[]){ 1 }) };
    t_node(&t, IR_OP_Squeeze, 2, in2, 1);
    t_err(&t, "cannot squeeze axis 1 of size 3");

    t_init(&t);
    int in3[] = { iota(&t, SH(3, 2)), ci1(&t, 2, (int64_t[]){ 0, -1 }) };
    t_node(&t, IR_OP_Unsqueeze, 2, in3, 1);
    t_ok(&t);
    expect_f(&t, 0, SH(1, 3, 2, 1), v, 0);
    t_done(&t);

    /* negative axes count from the OUTPUT rank: -1 appends */
    t_init(&t);
    int in4[] = { iota(&t, SH(3, 2)), ci1(&t, 2, (int64_t[]){ -1, 1 }) };
    t_node(&t, IR_OP_Unsqueeze, 2, in4, 1);
    t_ok(&t);
    expect_f(&t, 0, SH(3, 1, 2, 1), v, 0);
    t_done(&t);

    t_init(&t);
    int in5[] = { iota(&t, SH(3, 2)), ci1(&t, 2, (int64_t[]){ 1, -3 }) };
    t_node(&t, IR_OP_Unsqueeze, 2, in5, 1);
    t_err(&t, "axes names axis 1 more than once");

    t_init(&t);
    int in6[] = { iota(&t, SH(3, 2)), ci1(&t, 1, (int64_t[]){ 3 }) };
    t_node(&t, IR_OP_Unsqueeze, 2, in6, 1);
    t_err(&t, "axes value 3 is out of range for rank 3");
}

static void test_transpose(void **state)
{
    (void)state;
    T t;
    t_init(&t);
    int x = iota(&t, SH(2, 3));
    t_node(&t, IR_OP_Transpose, 1, &x, 1);
    t_ok(&t);
    double v[] = { 0, 3, 1, 4, 2, 5 };
    expect_f(&t, 0, SH(3, 2), v, 0);
    t_done(&t);

    t_init(&t);
    x = iota(&t, SH(2, 3, 4));
    t_node(&t, IR_OP_Transpose, 1, &x, 1);
    a_ints(&t, IR_A_perm, 3, (int64_t[]){ 1, 2, 0 });
    t_ok(&t);
    double v2[] = { 0, 12, 1, 13, 2, 14, 3, 15, 4, 16, 5, 17, 6, 18, 7, 19, 8, 20, 9, 21, 10, 22, 11, 23 };
    expect_f(&t, 0, SH(3, 4, 2), v2, 0);
    t_done(&t);

    t_init(&t);
    x = iota(&t, SH(2, 3, 4));
    t_node(&t, IR_OP_Transpose, 1, &x, 1);
    a_ints(&t, IR_A_perm, 3, (int64_t[]){ 0, 0, 1 });
    t_err(&t, "perm [0,0,1] is not a permutation of 0..2");

    t_init(&t);
    x = iota(&t, SH(2, 3, 4));
    t_node(&t, IR_OP_Transpose, 1, &x, 1);
    a_ints(&t, IR_A_perm, 2, (int64_t[]){ 1, 0 });
    t_err(&t, "perm [1,0] has 2 entries; the input has rank 3");
}

static void test_concat(void **state)
{
    (void)state;
    T t;
    t_init(&t);
    float empty[1] = { 0 };
    int in[] = { cf(&t, SH(2, 1), (float[]){ 1, 2 }), cf(&t, SH(2, 2), (float[]){ 3, 4, 5, 6 }),
                 cf(&t, SH(2, 0), empty) };
    t_node(&t, IR_OP_Concat, 3, in, 1);
    a_int(&t, IR_A_axis, -1);
    t_ok(&t);
    double v[] = { 1, 3, 4, 2, 5, 6 };
    expect_f(&t, 0, SH(2, 3), v, 0);
    t_done(&t);

    t_init(&t);
    int in2[] = { cf(&t, SH(2, 1), (float[]){ 1, 2 }), cf(&t, SH(1, 1), (float[]){ 3 }) };
    t_node(&t, IR_OP_Concat, 2, in2, 1);
    a_int(&t, IR_A_axis, 0);
    t_ok(&t);
    double v2[] = { 1, 2, 3 };
    expect_f(&t, 0, SH(3, 1), v2, 0);
    t_done(&t);

    t_init(&t);
    int in3[] = { cf(&t, SH(2, 1), (float[]){ 1, 2 }), cf(&t, SH(1, 1), (float[]){ 3 }) };
    t_node(&t, IR_OP_Concat, 2, in3, 1);
    t_err(&t, "the axis attribute is required");

    t_init(&t);
    int in4[] = { cf(&t, SH(2, 1), (float[]){ 1, 2 }), cf(&t, SH(1, 1), (float[]){ 3 }) };
    t_node(&t, IR_OP_Concat, 2, in4, 1);
    a_int(&t, IR_A_axis, 1);
    t_err(&t, "differ on axis 0 (concat axis is 1)");

    t_init(&t);
    int in5[] = { cf(&t, SH(2, 1), (float[]){ 1, 2 }), ci(&t, SH(2, 1), (int64_t[]){ 3, 4 }) };
    t_node(&t, IR_OP_Concat, 2, in5, 1);
    a_int(&t, IR_A_axis, 1);
    t_err(&t, "is int64 but input");
}

static void test_split(void **state)
{
    (void)state;
    T t;
    t_init(&t);
    int in[] = { iota(&t, SH(6)), ci1(&t, 3, (int64_t[]){ 1, 2, 3 }) };
    t_node(&t, IR_OP_Split, 2, in, 3);
    t_ok(&t);
    expect_f(&t, 0, SH(1), (double[]){ 0 }, 0);
    expect_f(&t, 1, SH(2), (double[]){ 1, 2 }, 0);
    expect_f(&t, 2, SH(3), (double[]){ 3, 4, 5 }, 0);
    t_done(&t);

    /* num_outputs with an uneven last chunk: 7 → 2,2,2,1 */
    t_init(&t);
    int x = iota(&t, SH(7));
    t_node(&t, IR_OP_Split, 1, &x, 4);
    a_int(&t, IR_A_num_outputs, 4);
    t_ok(&t);
    expect_f(&t, 2, SH(2), (double[]){ 4, 5 }, 0);
    expect_f(&t, 3, SH(1), (double[]){ 6 }, 0);
    t_done(&t);

    /* equal split along axis 1 */
    t_init(&t);
    x = iota(&t, SH(2, 4));
    t_node(&t, IR_OP_Split, 1, &x, 2);
    a_int(&t, IR_A_axis, -1);
    t_ok(&t);
    expect_f(&t, 0, SH(2, 2), (double[]){ 0, 1, 4, 5 }, 0);
    expect_f(&t, 1, SH(2, 2), (double[]){ 2, 3, 6, 7 }, 0);
    t_done(&t);

    t_init(&t);
    int in2[] = { iota(&t, SH(6)), ci1(&t, 3, (int64_t[]){ 1, 2, 2 }) };
    t_node(&t, IR_OP_Split, 2, in2, 3);
    t_err(&t, "split sizes sum to 5 but axis 0 has size 6");

    t_init(&t);
    x = iota(&t, SH(7));
    t_node(&t, IR_OP_Split, 1, &x, 2);
    t_err(&t, "axis 0 of size 7 does not split evenly into 2 outputs");

    t_init(&t);
    int in3[] = { iota(&t, SH(6)), ci1(&t, 2, (int64_t[]){ 3, 3 }) };
    t_node(&t, IR_OP_Split, 2, in3, 3);
    t_err(&t, "split has 2 sizes but the node has 3 outputs");
}

static void slice_run(T *t, int x, int cnt, const int64_t *starts, const int64_t *ends, const int64_t *axes,
                      const int64_t *steps)
{
    int in[5] = { x, ci1(t, cnt, starts), ci1(t, cnt, ends), axes ? ci1(t, cnt, axes) : -1,
                  steps ? ci1(t, cnt, steps) : -1 };
    t_node(t, IR_OP_Slice, steps ? 5 : axes ? 4 : 3, in, 1);
}

static void test_slice(void **state)
{
    (void)state;
    T t;
    t_init(&t);
    slice_run(&t, iota(&t, SH(10)), 1, (int64_t[]){ 8 }, (int64_t[]){ INT64_MIN }, NULL, (int64_t[]){ -3 });
    t_ok(&t);
    expect_f(&t, 0, SH(3), (double[]){ 8, 5, 2 }, 0);
    t_done(&t);

    /* axes reversed, INT64_MAX end, negative step with a negative end clamped to -1 */
    t_init(&t);
    slice_run(&t, iota(&t, SH(3, 4)), 2, (int64_t[]){ -1, 1 }, (int64_t[]){ -5, INT64_MAX },
              (int64_t[]){ 1, 0 }, (int64_t[]){ -2, 1 });
    t_ok(&t);
    expect_f(&t, 0, SH(2, 2), (double[]){ 7, 5, 11, 9 }, 0);
    t_done(&t);

    /* plain positive slice, default steps; start beyond the end → empty */
    t_init(&t);
    slice_run(&t, iota(&t, SH(3, 4)), 2, (int64_t[]){ 0, 1 }, (int64_t[]){ 2, 3 }, NULL, NULL);
    t_ok(&t);
    expect_f(&t, 0, SH(2, 2), (double[]){ 1, 2, 5, 6 }, 0);
    t_done(&t);
    t_init(&t);
    slice_run(&t, iota(&t, SH(4)), 1, (int64_t[]){ 3 }, (int64_t[]){ 1 }, NULL, NULL);
    t_ok(&t);
    check_shape(&t.g->tensors[t.y[0]], SH(0));
    t_done(&t);
    /* full reverse */
    t_init(&t);
    slice_run(&t, iota(&t, SH(4)), 1, (int64_t[]){ -1 }, (int64_t[]){ INT64_MIN }, (int64_t[]){ 0 },
              (int64_t[]){ -1 });
    t_ok(&t);
    expect_f(&t, 0, SH(4), (double[]){ 3, 2, 1, 0 }, 0);
    t_done(&t);

    t_init(&t);
    slice_run(&t, iota(&t, SH(4)), 1, (int64_t[]){ 0 }, (int64_t[]){ 2 }, NULL, (int64_t[]){ 0 });
    t_err(&t, "slice step on axis 0 is 0");

    t_init(&t);
    int in[] = { iota(&t, SH(4)), ci1(&t, 1, (int64_t[]){ 0 }), ci1(&t, 2, (int64_t[]){ 1, 2 }) };
    t_node(&t, IR_OP_Slice, 3, in, 1);
    t_err(&t, "starts has 1 values but ends has 2");

    t_init(&t);
    slice_run(&t, iota(&t, SH(4, 2)), 2, (int64_t[]){ 0, 0 }, (int64_t[]){ 1, 1 }, (int64_t[]){ 0, -2 }, NULL);
    t_err(&t, "axes names axis 0 more than once");
}

/* --------------------------------------------------------------- Gather* */

static void test_gather(void **state)
{
    (void)state;
    T t;
    t_init(&t);
    int in[] = { cf(&t, SH(3, 2), (float[]){ 1, 2, 3, 4, 5, 6 }), ci(&t, SH(2, 2), (int64_t[]){ 0, -1, 1, 2 }) };
    t_node(&t, IR_OP_Gather, 2, in, 1);
    t_ok(&t);
    expect_f(&t, 0, SH(2, 2, 2), (double[]){ 1, 2, 5, 6, 3, 4, 5, 6 }, 0);
    t_done(&t);

    t_init(&t);
    int32_t i32[] = { -1 };
    int in2[] = { cf(&t, SH(3, 2), (float[]){ 1, 2, 3, 4, 5, 6 }), t_tensor(&t, IR_TK_CONST, IR_DT_I32, SH(1), i32) };
    t_node(&t, IR_OP_Gather, 2, in2, 1);
    a_int(&t, IR_A_axis, 1);
    t_ok(&t);
    expect_f(&t, 0, SH(3, 1), (double[]){ 2, 4, 6 }, 0);
    t_done(&t);

    /* scalar index drops the axis */
    t_init(&t);
    int in3[] = { cf(&t, SH(3, 2), (float[]){ 1, 2, 3, 4, 5, 6 }), ci(&t, SCALAR, (int64_t[]){ 1 }) };
    t_node(&t, IR_OP_Gather, 2, in3, 1);
    t_ok(&t);
    expect_f(&t, 0, SH(2), (double[]){ 3, 4 }, 0);
    t_done(&t);

    t_init(&t);
    int in4[] = { cf(&t, SH(3, 2), (float[]){ 1, 2, 3, 4, 5, 6 }), ci(&t, SH(1), (int64_t[]){ 3 }) };
    t_node(&t, IR_OP_Gather, 2, in4, 1);
    t_err(&t, "index 3 is out of range for an axis of size 3");

    t_init(&t);
    int in5[] = { cf(&t, SH(3, 2), (float[]){ 1, 2, 3, 4, 5, 6 }), cf(&t, SH(1), (float[]){ 0 }) };
    t_node(&t, IR_OP_Gather, 2, in5, 1);
    t_err(&t, "must be int32 or int64");
}

/* Indices known only at run time: the kernel checks them. */
static void test_gather_runtime_check(void **state)
{
    (void)state;
    T t;
    t_init(&t);
    int in[] = { cf(&t, SH(3, 2), (float[]){ 1, 2, 3, 4, 5, 6 }),
                 t_tensor(&t, IR_TK_INPUT, IR_DT_I64, SH(2), NULL) };
    t_node(&t, IR_OP_Gather, 2, in, 1);
    t_ok(&t);
    int64_t good[] = { 2, -3 }, bad[] = { 0, -4 };
    IrArray ia = { .dtype = IR_DT_I64, .shape = SH(2), .data = good }, out;
    assert_int_equal(interp_run(t.g, &ia, &out, &t.d), 0);
    float *o = out.data;
    assert_true(o[0] == 5 && o[1] == 6 && o[2] == 1 && o[3] == 2);
    interp_array_free(&out);
    ia.data = bad;
    assert_int_equal(interp_run(t.g, &ia, &out, &t.d), -1);
    assert_non_null(strstr(t.d.msg, "index -4 is out of range for an axis of size 3"));
    t_done(&t);
}

static void test_gatherelements(void **state)
{
    (void)state;
    T t;
    t_init(&t);
    int in[] = { cf(&t, SH(2, 2), (float[]){ 1, 2, 3, 4 }), ci(&t, SH(2, 2), (int64_t[]){ 0, 0, 1, 0 }) };
    t_node(&t, IR_OP_GatherElements, 2, in, 1);
    a_int(&t, IR_A_axis, 1);
    t_ok(&t);
    expect_f(&t, 0, SH(2, 2), (double[]){ 1, 1, 4, 3 }, 0);
    t_done(&t);

    t_init(&t);
    int in2[] = { cf(&t, SH(3, 2), (float[]){ 1, 2, 3, 4, 5, 6 }), ci(&t, SH(2, 2), (int64_t[]){ 1, -1, 0, 2 }) };
    t_node(&t, IR_OP_GatherElements, 2, in2, 1);
    t_ok(&t);
    expect_f(&t, 0, SH(2, 2), (double[]){ 3, 6, 1, 6 }, 0);
    t_done(&t);

    t_init(&t);
    int in3[] = { cf(&t, SH(2, 2), (float[]){ 1, 2, 3, 4 }), ci(&t, SH(2), (int64_t[]){ 0, 0 }) };
    t_node(&t, IR_OP_GatherElements, 2, in3, 1);
    t_err(&t, "indices [2] must have the rank of the data [2,2]");

    t_init(&t);
    int in4[] = { cf(&t, SH(2, 2), (float[]){ 1, 2, 3, 4 }), ci(&t, SH(1, 2), (int64_t[]){ 0, 2 }) };
    t_node(&t, IR_OP_GatherElements, 2, in4, 1);
    t_err(&t, "index 2 is out of range for an axis of size 2");
}

static void test_gathernd(void **state)
{
    (void)state;
    T t;
    t_init(&t);
    int in[] = { iota(&t, SH(2, 2)), ci(&t, SH(2, 2), (int64_t[]){ 0, 0, 1, 1 }) };
    t_node(&t, IR_OP_GatherND, 2, in, 1);
    t_ok(&t);
    expect_f(&t, 0, SH(2), (double[]){ 0, 3 }, 0);
    t_done(&t);

    t_init(&t);
    int in2[] = { iota(&t, SH(2, 2)), ci(&t, SH(2, 1), (int64_t[]){ 1, 0 }) };
    t_node(&t, IR_OP_GatherND, 2, in2, 1);
    t_ok(&t);
    expect_f(&t, 0, SH(2, 2), (double[]){ 2, 3, 0, 1 }, 0);
    t_done(&t);

    t_init(&t);
    int in3[] = { iota(&t, SH(2, 2, 2)), ci(&t, SH(2, 1), (int64_t[]){ 1, 0 }) };
    t_node(&t, IR_OP_GatherND, 2, in3, 1);
    a_int(&t, IR_A_batch_dims, 1);
    t_ok(&t);
    expect_f(&t, 0, SH(2, 2), (double[]){ 2, 3, 4, 5 }, 0);
    t_done(&t);

    /* batch_dims=1 with full-depth tuples and a negative index */
    t_init(&t);
    int in4[] = { iota(&t, SH(2, 2, 2)), ci(&t, SH(2, 1, 2), (int64_t[]){ 1, 1, 0, -1 }) };
    t_node(&t, IR_OP_GatherND, 2, in4, 1);
    a_int(&t, IR_A_batch_dims, 1);
    t_ok(&t);
    expect_f(&t, 0, SH(2, 1), (double[]){ 3, 5 }, 0);
    t_done(&t);

    t_init(&t);
    int in5[] = { iota(&t, SH(2, 2)), ci(&t, SH(1, 3), (int64_t[]){ 0, 0, 0 }) };
    t_node(&t, IR_OP_GatherND, 2, in5, 1);
    t_err(&t, "it must be in 1..2");

    t_init(&t);
    int in6[] = { iota(&t, SH(2, 2)), ci(&t, SH(1, 2), (int64_t[]){ 0, 2 }) };
    t_node(&t, IR_OP_GatherND, 2, in6, 1);
    t_err(&t, "index 2 is out of range for an axis of size 2");
}

/* ------------------------------------------------- Shape, Size, Constant* */

static void test_shape_size(void **state)
{
    (void)state;
    struct { int has_s, has_e; int64_t s, e; IrShape want; int64_t v[4]; } cases[] = {
        { 0, 0, 0, 0, SH(4), { 2, 3, 4, 5 } },
        { 1, 1, -3, -1, SH(2), { 3, 4 } },
        { 1, 0, 10, 0, SH(0), { 0 } },
        { 1, 1, -100, 1, SH(1), { 2 } },
    };
    for (int c = 0; c < N_(cases); c++) {
        T t;
        t_init(&t);
        int x = iota(&t, SH(2, 3, 4, 5));
        t_node(&t, IR_OP_Shape, 1, &x, 1);
        if (cases[c].has_s)
            a_int(&t, IR_A_start, cases[c].s);
        if (cases[c].has_e)
            a_int(&t, IR_A_end, cases[c].e);
        t_ok(&t);
        expect_i(&t, 0, IR_DT_I64, cases[c].want, cases[c].v);
        t_done(&t);
    }
    T t;
    t_init(&t);
    int x = iota(&t, SH(2, 3, 4, 5));
    t_node(&t, IR_OP_Size, 1, &x, 1);
    t_ok(&t);
    expect_i(&t, 0, IR_DT_I64, SCALAR, (int64_t[]){ 120 });
    t_done(&t);
}

static void test_constant(void **state)
{
    (void)state;
    T t;
    t_init(&t);
    t_node(&t, IR_OP_Constant, 0, NULL, 1);
    IrAttr a = { .key = IR_A_value_floats, .kind = IR_AK_FLOATS, .n = 2, .v.floats = (double[]){ 1.5, -2.5 } };
    ir_set_attr(t.g, t.node, &a);
    t_ok(&t);
    assert_int_equal(t.g->tensors[t.y[0]].v.dtype, IR_DT_F32);
    expect_f(&t, 0, SH(2), (double[]){ 1.5, -2.5 }, 0);
    t_done(&t);

    t_init(&t);
    t_node(&t, IR_OP_Constant, 0, NULL, 1);
    a_int(&t, IR_A_value_int, -7);
    t_ok(&t);
    expect_i(&t, 0, IR_DT_I64, SCALAR, (int64_t[]){ -7 });
    t_done(&t);

    t_init(&t);
    t_node(&t, IR_OP_Constant, 0, NULL, 1);
    a_ints(&t, IR_A_value_ints, 3, (int64_t[]){ 4, 5, 6 });
    t_ok(&t);
    expect_i(&t, 0, IR_DT_I64, SH(3), (int64_t[]){ 4, 5, 6 });
    t_done(&t);

    t_init(&t);
    t_node(&t, IR_OP_Constant, 0, NULL, 1);
    a_float(&t, IR_A_value_float, 0.25);
    t_ok(&t);
    expect_f(&t, 0, SCALAR, (double[]){ 0.25 }, 0);
    t_done(&t);

    t_init(&t);
    t_node(&t, IR_OP_Constant, 0, NULL, 1);
    int32_t tv[] = { 1, -2, 3, -4 };
    a_tensor(&t, IR_A_value, IR_DT_I32, SH(2, 2), tv);
    t_ok(&t);
    expect_i(&t, 0, IR_DT_I32, SH(2, 2), (int64_t[]){ 1, -2, 3, -4 });
    t_done(&t);

    t_init(&t);
    t_node(&t, IR_OP_Constant, 0, NULL, 1);
    a_str(&t, IR_A_value_string, "hello");
    t_err(&t, "string constants are unsupported");

    t_init(&t);
    t_node(&t, IR_OP_Constant, 0, NULL, 1);
    a_tensor(&t, IR_A_sparse_value, IR_DT_I32, SH(2, 2), tv);
    t_err(&t, "sparse constants are unsupported");

    t_init(&t);
    t_node(&t, IR_OP_Constant, 0, NULL, 1);
    a_int(&t, IR_A_value_int, 1);
    a_float(&t, IR_A_value_float, 1);
    t_err(&t, "exactly one value attribute must be given (2 are)");
}

static void test_constantofshape(void **state)
{
    (void)state;
    T t;
    t_init(&t);
    int s = ci1(&t, 2, (int64_t[]){ 2, 3 });
    t_node(&t, IR_OP_ConstantOfShape, 1, &s, 1);
    int32_t seven = 7;
    a_tensor(&t, IR_A_value, IR_DT_I32, SH(1), &seven);
    t_ok(&t);
    expect_i(&t, 0, IR_DT_I32, SH(2, 3), (int64_t[]){ 7, 7, 7, 7, 7, 7 });
    t_done(&t);

    t_init(&t);
    s = ci1(&t, 1, (int64_t[]){ 3 });
    t_node(&t, IR_OP_ConstantOfShape, 1, &s, 1);
    t_ok(&t);
    assert_int_equal(t.g->tensors[t.y[0]].v.dtype, IR_DT_F32);
    expect_f(&t, 0, SH(3), (double[]){ 0, 0, 0 }, 0);
    t_done(&t);

    t_init(&t);
    s = ci1(&t, 1, (int64_t[]){ 3 });
    t_node(&t, IR_OP_ConstantOfShape, 1, &s, 1);
    float two[2] = { 1, 2 };
    a_tensor(&t, IR_A_value, IR_DT_F32, SH(2), two);
    t_err(&t, "must hold exactly one element, not 2");

    t_init(&t);
    s = ci1(&t, 2, (int64_t[]){ 3, -1 });
    t_node(&t, IR_OP_ConstantOfShape, 1, &s, 1);
    t_err(&t, "shape value -1 is negative");
}

/* ----------------------------------------------------- Pad, Expand, Tile */

static void pad_run(T *t, int x, int np, const int64_t *pads, const char *mode, const float *value, int nax,
                    const int64_t *axes)
{
    int in[4] = { x, ci1(t, np, pads), value ? cf(t, SCALAR, value) : -1, axes ? ci1(t, nax, axes) : -1 };
    t_node(t, IR_OP_Pad, axes ? 4 : value ? 3 : 2, in, 1);
    if (mode)
        a_str(t, IR_A_mode, mode);
}

static void test_pad(void **state)
{
    (void)state;
    struct { const char *mode; double v[9]; } cases[] = {
        { "constant", { 9, 9, 1, 2, 3, 4, 9, 9, 9 } },
        { "reflect", { 3, 2, 1, 2, 3, 4, 3, 2, 1 } },
        { "edge", { 1, 1, 1, 2, 3, 4, 4, 4, 4 } },
        { "wrap", { 3, 4, 1, 2, 3, 4, 1, 2, 3 } },
    };
    for (int c = 0; c < N_(cases); c++) {
        T t;
        t_init(&t);
        pad_run(&t, cf(&t, SH(4), (float[]){ 1, 2, 3, 4 }), 2, (int64_t[]){ 2, 3 }, cases[c].mode,
                (float[]){ 9 }, 0, NULL);
        t_ok(&t);
        expect_f(&t, 0, SH(9), cases[c].v, 0);
        t_done(&t);
    }
    /* pads larger than the axis (numpy semantics), negative pads crop */
    struct { const char *mode; int64_t pads[2]; IrShape s; double v[9]; } more[] = {
        { "wrap", { 4, 0 }, SH(7), { 3, 1, 2, 3, 1, 2, 3 } },
        { "reflect", { 5, 1 }, SH(9), { 2, 1, 2, 3, 2, 1, 2, 3, 2 } },
        { "constant", { -1, 2 }, SH(4), { 2, 3, 0, 0 } },
        { "reflect", { -1, 2 }, SH(4), { 2, 3, 2, 1 } },
    };
    for (int c = 0; c < N_(more); c++) {
        T t;
        t_init(&t);
        pad_run(&t, cf(&t, SH(3), (float[]){ 1, 2, 3 }), 2, more[c].pads, more[c].mode, NULL, 0, NULL);
        t_ok(&t);
        expect_f(&t, 0, more[c].s, more[c].v, 0);
        t_done(&t);
    }
    /* 2-D, axes input, edge mode on the last axis only */
    T t;
    t_init(&t);
    pad_run(&t, cf(&t, SH(2, 3), (float[]){ 1, 2, 3, 4, 5, 6 }), 2, (int64_t[]){ 1, 1 }, "edge", NULL, 1,
            (int64_t[]){ -1 });
    t_ok(&t);
    expect_f(&t, 0, SH(2, 5), (double[]){ 1, 1, 2, 3, 3, 4, 4, 5, 6, 6 }, 0);
    t_done(&t);
    /* 2-D constant default 0 on both axes */
    t_init(&t);
    pad_run(&t, cf(&t, SH(1, 2), (float[]){ 1, 2 }), 4, (int64_t[]){ 1, 0, 0, 1 }, NULL, NULL, 0, NULL);
    t_ok(&t);
    expect_f(&t, 0, SH(2, 3), (double[]){ 0, 0, 0, 1, 2, 0 }, 0);
    t_done(&t);

    t_init(&t);
    pad_run(&t, cf(&t, SH(4), (float[]){ 1, 2, 3, 4 }), 3, (int64_t[]){ 1, 1, 1 }, NULL, NULL, 0, NULL);
    t_err(&t, "pads has 3 values; 2 are needed");
    t_init(&t);
    pad_run(&t, cf(&t, SH(4), (float[]){ 1, 2, 3, 4 }), 2, (int64_t[]){ -3, -2 }, NULL, NULL, 0, NULL);
    t_err(&t, "crop axis 0 of size 4 below zero");
    t_init(&t);
    pad_run(&t, cf(&t, SH(4), (float[]){ 1, 2, 3, 4 }), 2, (int64_t[]){ 1, 1 }, "mirror", NULL, 0, NULL);
    t_err(&t, "mode 'mirror' is not one of constant, reflect, edge, wrap");
    t_init(&t);
    int in[] = { cf(&t, SH(4), (float[]){ 1, 2, 3, 4 }), ci1(&t, 2, (int64_t[]){ 1, 1 }),
                 ci(&t, SCALAR, (int64_t[]){ 1 }) };
    t_node(&t, IR_OP_Pad, 3, in, 1);
    t_err(&t, "constant_value is int64 but the data is float32");
}

static void test_expand_tile(void **state)
{
    (void)state;
    T t;
    t_init(&t);
    int in[] = { cf(&t, SH(3, 1), (float[]){ 1, 2, 3 }), ci1(&t, 3, (int64_t[]){ 2, 1, 2 }) };
    t_node(&t, IR_OP_Expand, 2, in, 1);
    t_ok(&t);
    expect_f(&t, 0, SH(2, 3, 2), (double[]){ 1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3 }, 0);
    t_done(&t);

    /* shape smaller than the input: bidirectional */
    t_init(&t);
    int in2[] = { cf(&t, SH(3, 1), (float[]){ 1, 2, 3 }), ci1(&t, 1, (int64_t[]){ 2 }) };
    t_node(&t, IR_OP_Expand, 2, in2, 1);
    t_ok(&t);
    expect_f(&t, 0, SH(3, 2), (double[]){ 1, 1, 2, 2, 3, 3 }, 0);
    t_done(&t);

    t_init(&t);
    int in3[] = { cf(&t, SH(3, 1), (float[]){ 1, 2, 3 }), ci1(&t, 2, (int64_t[]){ 2, 2 }) };
    t_node(&t, IR_OP_Expand, 2, in3, 1);
    t_err(&t, "shapes [3,1] and [2,2] cannot be broadcast together");

    t_init(&t);
    int in4[] = { cf(&t, SH(2, 2), (float[]){ 1, 2, 3, 4 }), ci1(&t, 2, (int64_t[]){ 1, 2 }) };
    t_node(&t, IR_OP_Tile, 2, in4, 1);
    t_ok(&t);
    expect_f(&t, 0, SH(2, 4), (double[]){ 1, 2, 1, 2, 3, 4, 3, 4 }, 0);
    t_done(&t);

    t_init(&t);
    int in5[] = { cf(&t, SH(2, 1), (float[]){ 1, 2 }), ci1(&t, 2, (int64_t[]){ 2, 0 }) };
    t_node(&t, IR_OP_Tile, 2, in5, 1);
    t_ok(&t);
    check_shape(&t.g->tensors[t.y[0]], SH(4, 0));
    t_done(&t);

    t_init(&t);
    int in6[] = { cf(&t, SH(2, 2), (float[]){ 1, 2, 3, 4 }), ci1(&t, 1, (int64_t[]){ 2 }) };
    t_node(&t, IR_OP_Tile, 2, in6, 1);
    t_err(&t, "repeats has 1 values but the input has rank 2");

    t_init(&t);
    int in7[] = { cf(&t, SH(2, 2), (float[]){ 1, 2, 3, 4 }), ci1(&t, 2, (int64_t[]){ 2, -1 }) };
    t_node(&t, IR_OP_Tile, 2, in7, 1);
    t_err(&t, "repeats value -1 is negative");
}

static void range_i(T *t, int64_t a, int64_t b, int64_t c)
{
    int in[] = { ci(t, SCALAR, &a), ci(t, SCALAR, &b), ci(t, SCALAR, &c) };
    t_node(t, IR_OP_Range, 3, in, 1);
}

static void test_range(void **state)
{
    (void)state;
    T t;
    t_init(&t);
    range_i(&t, 1, 10, 3);
    t_ok(&t);
    expect_i(&t, 0, IR_DT_I64, SH(3), (int64_t[]){ 1, 4, 7 });
    t_done(&t);

    t_init(&t);
    range_i(&t, 10, -2, -4);
    t_ok(&t);
    expect_i(&t, 0, IR_DT_I64, SH(3), (int64_t[]){ 10, 6, 2 });
    t_done(&t);

    /* count = ceil((0 - 1) / -0.3) = 4 */
    t_init(&t);
    int in[] = { cf(&t, SCALAR, (float[]){ 1 }), cf(&t, SCALAR, (float[]){ 0 }), cf(&t, SCALAR, (float[]){ -0.3f }) };
    t_node(&t, IR_OP_Range, 3, in, 1);
    t_ok(&t);
    expect_f(&t, 0, SH(4), (double[]){ 1, 0.7, 0.4, 0.1 }, 1e-6);
    t_done(&t);

    t_init(&t);
    range_i(&t, 5, 1, 1);
    t_ok(&t);
    check_shape(&t.g->tensors[t.y[0]], SH(0));
    t_done(&t);

    t_init(&t);
    range_i(&t, 5, 1, 0);
    t_err(&t, "delta is 0");

    t_init(&t);
    int in2[] = { ci(&t, SCALAR, (int64_t[]){ 5 }), cf(&t, SCALAR, (float[]){ 1 }), ci(&t, SCALAR, (int64_t[]){ 1 }) };
    t_node(&t, IR_OP_Range, 3, in2, 1);
    t_err(&t, "limit is float32 but start is int64");
}

static void test_depth_space(void **state)
{
    (void)state;
    struct { const char *mode; double v[16]; } cases[] = {
        { "DCR", { 0, 4, 1, 5, 8, 12, 9, 13, 2, 6, 3, 7, 10, 14, 11, 15 } },
        { "CRD", { 0, 2, 1, 3, 4, 6, 5, 7, 8, 10, 9, 11, 12, 14, 13, 15 } },
    };
    for (int c = 0; c < N_(cases); c++) {
        T t;
        t_init(&t);
        int x = iota(&t, SH(1, 8, 1, 2));
        t_node(&t, IR_OP_DepthToSpace, 1, &x, 1);
        a_int(&t, IR_A_blocksize, 2);
        if (c)
            a_str(&t, IR_A_mode, cases[c].mode);
        t_ok(&t);
        expect_f(&t, 0, SH(1, 2, 2, 4), cases[c].v, 0);
        t_done(&t);
    }
    T t;
    t_init(&t);
    int x = iota(&t, SH(1, 1, 4, 4));
    t_node(&t, IR_OP_SpaceToDepth, 1, &x, 1);
    a_int(&t, IR_A_blocksize, 2);
    t_ok(&t);
    expect_f(&t, 0, SH(1, 4, 2, 2), (double[]){ 0, 2, 8, 10, 1, 3, 9, 11, 4, 6, 12, 14, 5, 7, 13, 15 }, 0);
    t_done(&t);

    t_init(&t);
    x = iota(&t, SH(1, 6, 1, 1));
    t_node(&t, IR_OP_DepthToSpace, 1, &x, 1);
    a_int(&t, IR_A_blocksize, 2);
    t_err(&t, "channels 6 are not a multiple of blocksize^2 = 4");
    t_init(&t);
    x = iota(&t, SH(1, 1, 3, 4));
    t_node(&t, IR_OP_SpaceToDepth, 1, &x, 1);
    a_int(&t, IR_A_blocksize, 2);
    t_err(&t, "must be multiples of blocksize 2");
    t_init(&t);
    x = iota(&t, SH(1, 4, 2, 2));
    t_node(&t, IR_OP_DepthToSpace, 1, &x, 1);
    a_int(&t, IR_A_blocksize, 0);
    t_err(&t, "blocksize 0 is out of range (1..65536)");
    t_init(&t);
    x = iota(&t, SH(4, 2, 2));
    t_node(&t, IR_OP_SpaceToDepth, 1, &x, 1);
    a_int(&t, IR_A_blocksize, 2);
    t_err(&t, "must have rank 4 (NCHW), not 3");
}

/* Every dtype moves through the byte kernels: Transpose, Pad (with a typed
 * constant_value), Gather and Concat of the values 0..5 (bool: 0/1). */
static void test_all_dtypes(void **state)
{
    (void)state;
    for (int dt = 1; dt < IR_DT_COUNT; dt++) {
        int is_bool = dt == IR_DT_BOOL;
        unsigned char buf[6 * 8], one[8];
        for (int i = 0; i < 6; i++)
            ir_store_i64((IrDType)dt, buf, i, is_bool ? i % 2 : i);
        ir_store_i64((IrDType)dt, one, 0, 1);
        T t;
        t_init(&t);
        int x = t_tensor(&t, IR_TK_CONST, (IrDType)dt, SH(2, 3), buf);
        t_node(&t, IR_OP_Transpose, 1, &x, 1);
        t_ok(&t);
        int64_t tr[] = { 0, 3, 1, 4, 2, 5 }, trb[] = { 0, 1, 1, 0, 0, 1 };
        expect_i(&t, 0, (IrDType)dt, SH(3, 2), is_bool ? trb : tr);
        t_done(&t);

        t_init(&t);
        int in[] = { t_tensor(&t, IR_TK_CONST, (IrDType)dt, SH(2, 3), buf), ci1(&t, 4, (int64_t[]){ 0, 1, 0, 0 }),
                     t_tensor(&t, IR_TK_CONST, (IrDType)dt, SCALAR, one) };
        t_node(&t, IR_OP_Pad, 3, in, 1);
        t_ok(&t);
        int64_t pd[] = { 1, 0, 1, 2, 1, 3, 4, 5 }, pdb[] = { 1, 0, 1, 0, 1, 1, 0, 1 };
        expect_i(&t, 0, (IrDType)dt, SH(2, 4), is_bool ? pdb : pd);
        t_done(&t);

        t_init(&t);
        int in2[] = { t_tensor(&t, IR_TK_CONST, (IrDType)dt, SH(2, 3), buf), ci1(&t, 2, (int64_t[]){ 2, 0 }) };
        t_node(&t, IR_OP_Gather, 2, in2, 1);
        a_int(&t, IR_A_axis, 1);
        t_ok(&t);
        int64_t ga[] = { 2, 0, 5, 3 }, gab[] = { 0, 0, 1, 1 };
        expect_i(&t, 0, (IrDType)dt, SH(2, 2), is_bool ? gab : ga);
        t_done(&t);

        t_init(&t);
        int in3[] = { t_tensor(&t, IR_TK_CONST, (IrDType)dt, SH(2, 3), buf),
                      t_tensor(&t, IR_TK_CONST, (IrDType)dt, SH(2, 3), buf) };
        t_node(&t, IR_OP_Concat, 2, in3, 1);
        a_int(&t, IR_A_axis, 0);
        t_ok(&t);
        int64_t cc[] = { 0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5 }, ccb[] = { 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1 };
        expect_i(&t, 0, (IrDType)dt, SH(4, 3), is_bool ? ccb : cc);
        t_done(&t);
    }
}

/* ------------------------------------------------------------------ Resize */

/* Resize of x by scales (ns > 0) or sizes (nz > 0); roi only when nr > 0. */
static void resize_run(T *t, int x, int nr, const float *roi, int ns, const float *scales, int nz,
                       const int64_t *sizes)
{
    int in[4] = { x, nr ? cf(t, SH(nr), roi) : -1, ns ? cf(t, SH(ns), scales) : -1,
                  nz ? ci1(t, nz, sizes) : -1 };
    t_node(t, IR_OP_Resize, nz ? 4 : 3, in, 1);
}

static void test_resize_nearest(void **state)
{
    (void)state;
    struct { const char *mode; double v[8]; } cases[] = {
        { "round_prefer_floor", { 1, 1, 1, 2, 2, 2, 2, 2 } },
        { "round_prefer_ceil", { 1, 1, 2, 2, 2, 2, 2, 2 } },
        { "floor", { 1, 1, 1, 1, 2, 2, 2, 2 } },
        { "ceil", { 1, 2, 2, 2, 2, 2, 2, 2 } },
    };
    for (int c = 0; c < N_(cases); c++) {
        T t;
        t_init(&t);
        resize_run(&t, cf(&t, SH(2), (float[]){ 1, 2 }), 0, NULL, 1, (float[]){ 4 }, 0, NULL);
        a_str(&t, IR_A_coordinate_transformation_mode, "asymmetric");
        a_str(&t, IR_A_nearest_mode, cases[c].mode);
        t_ok(&t);
        expect_f(&t, 0, SH(8), cases[c].v, 0);
        t_done(&t);
    }
    /* ONNX backend case resize_upsample_scales_nearest (half_pixel, round_prefer_floor) */
    T t;
    t_init(&t);
    resize_run(&t, cf(&t, SH(1, 1, 2, 2), (float[]){ 1, 2, 3, 4 }), 0, NULL, 4, (float[]){ 1, 1, 2, 3 }, 0, NULL);
    t_ok(&t);
    expect_f(&t, 0, SH(1, 1, 4, 6),
             (double[]){ 1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4 }, 0);
    t_done(&t);
    /* axes attribute: only the last axis, by sizes; int32 data */
    t_init(&t);
    int32_t xi[] = { 1, 2, 3, 4 };
    resize_run(&t, t_tensor(&t, IR_TK_CONST, IR_DT_I32, SH(2, 2), xi), 0, NULL, 0, NULL, 1, (int64_t[]){ 4 });
    a_ints(&t, IR_A_axes, 1, (int64_t[]){ -1 });
    a_str(&t, IR_A_coordinate_transformation_mode, "asymmetric");
    t_ok(&t);
    expect_i(&t, 0, IR_DT_I32, SH(2, 4), (int64_t[]){ 1, 1, 2, 2, 3, 3, 4, 4 });
    t_done(&t);
}

static void test_resize_linear(void **state)
{
    (void)state;
    struct { const char *coord; double v[16]; } cases[] = {
        { "half_pixel", { 1, 1.25, 1.75, 2, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25, 3.5, 3, 3.25, 3.75, 4 } },
        { "align_corners", { 1, 4. / 3, 5. / 3, 2, 5. / 3, 2, 7. / 3, 8. / 3, 7. / 3, 8. / 3, 3, 10. / 3, 3,
                             10. / 3, 11. / 3, 4 } },
        { "asymmetric", { 1, 1.5, 2, 2, 2, 2.5, 3, 3, 3, 3.5, 4, 4, 3, 3.5, 4, 4 } },
    };
    for (int c = 0; c < N_(cases); c++) {
        T t;
        t_init(&t);
        resize_run(&t, cf(&t, SH(1, 1, 2, 2), (float[]){ 1, 2, 3, 4 }), 0, NULL, 4, (float[]){ 1, 1, 2, 2 }, 0,
                   NULL);
        a_str(&t, IR_A_mode, "linear");
        a_str(&t, IR_A_coordinate_transformation_mode, cases[c].coord);
        t_ok(&t);
        expect_f(&t, 0, SH(1, 1, 4, 4), cases[c].v, TOL);
        t_done(&t);
    }
    /* one output: pytorch_half_pixel samples 0, half_pixel the middle */
    struct { const char *coord; double v; } one[] = { { "pytorch_half_pixel", 1 }, { "half_pixel", 2.5 } };
    for (int c = 0; c < N_(one); c++) {
        T t;
        t_init(&t);
        resize_run(&t, cf(&t, SH(4), (float[]){ 1, 2, 3, 4 }), 0, NULL, 0, NULL, 1, (int64_t[]){ 1 });
        a_str(&t, IR_A_mode, "linear");
        a_str(&t, IR_A_coordinate_transformation_mode, one[c].coord);
        t_ok(&t);
        expect_f(&t, 0, SH(1), &one[c].v, TOL);
        t_done(&t);
    }
    /* ONNX backend case resize_downsample_scales_linear_half_pixel_symmetric */
    T t;
    t_init(&t);
    resize_run(&t, cf(&t, SH(1, 1, 1, 4), (float[]){ 1, 2, 3, 4 }), 0, NULL, 4, (float[]){ 1, 1, 1, 0.6f }, 0,
               NULL);
    a_str(&t, IR_A_mode, "linear");
    a_str(&t, IR_A_coordinate_transformation_mode, "half_pixel_symmetric");
    t_ok(&t);
    expect_f(&t, 0, SH(1, 1, 1, 2), (double[]){ 5. / 3, 10. / 3 }, 1e-5);
    t_done(&t);
    /* tf_crop_and_resize (ONNX backend cases), in-range and with extrapolation */
    struct { float roi[8]; double v[9]; } crop[] = {
        { { 0, 0, 0.4f, 0.6f, 1, 1, 0.6f, 0.8f }, { 7.6, 7.9, 8.2, 8.8, 9.1, 9.4, 10, 10.3, 10.6 } },
        { { 0, 0, 0.4f, 0.6f, 1, 1, 1.2f, 1.7f }, { 7.6, 10, 10, 12.4, 10, 10, 10, 10, 10 } },
    };
    for (int c = 0; c < N_(crop); c++) {
        t_init(&t);
        resize_run(&t, iota(&t, SH(1, 1, 4, 4)), 8, crop[c].roi, 0, NULL, 4, (int64_t[]){ 1, 1, 3, 3 });
        /* iota is 0-based; the ONNX case is 1..16, so expected values shift by 1 (extrapolation excepted) */
        a_str(&t, IR_A_mode, "linear");
        a_str(&t, IR_A_coordinate_transformation_mode, "tf_crop_and_resize");
        a_float(&t, IR_A_extrapolation_value, 11);
        t_ok(&t);
        double want[9];
        for (int i = 0; i < 9; i++)
            want[i] = crop[c].v[i] == 10 && c == 1 ? 11 : crop[c].v[i] - 1;
        expect_f(&t, 0, SH(1, 1, 3, 3), want, 1e-4);
        t_done(&t);
    }
}

static void test_resize_cubic(void **state)
{
    (void)state;
    /* expected values from onnx.backend.test.case.node.resize.interpolate_nd */
    struct { const char *coord; double a; int excl; double v[8]; } cases[] = {
        { "half_pixel", -0.75, 0, { 0.89453125, 1.15625, 1.5625, 2.41796875, 3.16015625, 5.1171875, 7.1640625,
                                    8.421875 } },
        { "half_pixel", -0.5, 1, { 0.9117647058823528, 1.1459854014598538, 1.6412213740458015, 2.3828125,
                                   3.3359375, 5.022900763358779, 7.2846715328467155, 8.352941176470587 } },
        { "align_corners", -0.75, 0, { 1.0, 1.2623906705539347, 1.721574344023324, 2.462099125364427,
                                       3.078717201166179, 4.641399416909625, 6.4781341107871775, 8.0 } },
    };
    for (int c = 0; c < N_(cases); c++) {
        T t;
        t_init(&t);
        resize_run(&t, cf(&t, SH(4), (float[]){ 1, 2, 4, 8 }), 0, NULL, 1, (float[]){ 2 }, 0, NULL);
        a_str(&t, IR_A_mode, "cubic");
        a_str(&t, IR_A_coordinate_transformation_mode, cases[c].coord);
        a_float(&t, IR_A_cubic_coeff_a, cases[c].a);
        a_int(&t, IR_A_exclude_outside, cases[c].excl);
        t_ok(&t);
        expect_f(&t, 0, SH(8), cases[c].v, 1e-5);
        t_done(&t);
    }
    /* 2-D downsample (ONNX backend case resize_downsample_scales_cubic) */
    T t;
    t_init(&t);
    float x[16];
    for (int i = 0; i < 16; i++)
        x[i] = (float)(i + 1);
    resize_run(&t, cf(&t, SH(1, 1, 4, 4), x), 0, NULL, 4, (float[]){ 1, 1, 0.8f, 0.8f }, 0, NULL);
    a_str(&t, IR_A_mode, "cubic");
    t_ok(&t);
    expect_f(&t, 0, SH(1, 1, 3, 3),
             (double[]){ 1.47119140625, 2.78125, 4.08251953125, 6.71142578125, 8.021484375, 9.32275390625,
                         11.91650390625, 13.2265625, 14.52783203125 }, 1e-4);
    t_done(&t);
}

static void test_resize_antialias(void **state)
{
    (void)state;
    /* [1,2,3,4] halved, linear, half_pixel: the triangle filter is stretched to 4 taps at distances
     * 0.75, 0.25, 0.25, 0.75 (weights 1/8, 3/8, 3/8, 1/8); edge taps repeat the border element, or with
     * exclude_outside are dropped and the rest renormalized (3/7, 3/7, 1/7) */
    struct { int excl; double v[2]; } cases[] = {
        { 0, { 1.625, 3.375 } }, { 1, { 3.0 / 1.75, 5.75 / 1.75 } },
    };
    for (int c = 0; c < N_(cases); c++) {
        T t;
        t_init(&t);
        resize_run(&t, cf(&t, SH(4), (float[]){ 1, 2, 3, 4 }), 0, NULL, 1, (float[]){ 0.5f }, 0, NULL);
        a_str(&t, IR_A_mode, "linear");
        a_int(&t, IR_A_antialias, 1);
        a_int(&t, IR_A_exclude_outside, cases[c].excl);
        t_ok(&t);
        expect_f(&t, 0, SH(2), cases[c].v, 1e-6);
        t_done(&t);
    }
    /* 8x8 → 3x3 against PyTorch 1.13 F.interpolate(antialias=True, align_corners=False), which keeps only
     * in-range taps (exclude_outside=1) and uses a = -0.5 for bicubic */
    float x[64];
    for (int i = 0; i < 64; i++)
        x[i] = (float)(((i + 1) * (i + 1)) % 17);
    struct { const char *mode; double v[9]; } torch[] = {
        { "linear", { 7.263850415512465, 9.663533834586467, 7.885041551246537, 7.089598997493733,
                      8.424603174603176, 8.975563909774436, 7.033933518005539, 7.548872180451126,
                      10.357340720221604 } },
        { "cubic", { 6.740656830533644, 10.002217242111547, 7.76947314418301, 6.924576685440253,
                     8.403911441463391, 9.0402866242207, 7.311051045980692, 7.5491401249531584,
                     10.562478526833768 } },
    };
    for (int c = 0; c < N_(torch); c++) {
        T t;
        t_init(&t);
        resize_run(&t, cf(&t, SH(1, 1, 8, 8), x), 0, NULL, 0, NULL, 4, (int64_t[]){ 1, 1, 3, 3 });
        a_str(&t, IR_A_mode, torch[c].mode);
        a_int(&t, IR_A_antialias, 1);
        a_int(&t, IR_A_exclude_outside, 1);
        a_float(&t, IR_A_cubic_coeff_a, -0.5);
        t_ok(&t);
        expect_f(&t, 0, SH(1, 1, 3, 3), torch[c].v, 1e-4);
        t_done(&t);
    }
}

static void test_resize_policy(void **state)
{
    (void)state;
    /* sizes [3,3] for a [2,4] input: not_larger scales by min(1.5, 0.75) = 0.75 → [round(1.5)=2, 3];
     * not_smaller by 1.5 → [3, 6] */
    struct { const char *policy; IrShape want; } cases[] = {
        { "stretch", SH(3, 3) }, { "not_larger", SH(2, 3) }, { "not_smaller", SH(3, 6) },
    };
    for (int c = 0; c < N_(cases); c++) {
        T t;
        t_init(&t);
        resize_run(&t, iota(&t, SH(2, 4)), 0, NULL, 0, NULL, 2, (int64_t[]){ 3, 3 });
        a_str(&t, IR_A_keep_aspect_ratio_policy, cases[c].policy);
        t_ok(&t);
        check_shape(&t.g->tensors[t.y[0]], cases[c].want);
        if (c == 2) {
            /* nearest, half_pixel, round_prefer_floor, scale 1.5: source rows -0.17, 0.5, 1.17 → 0, 0, 1;
             * columns -0.17, 0.5, 1.17, 1.83, 2.5, 3.17 → 0, 0, 1, 2, 2, 3 */
            double v[] = { 0, 0, 1, 2, 2, 3, 0, 0, 1, 2, 2, 3, 4, 4, 5, 6, 6, 7 };
            expect_f(&t, 0, cases[c].want, v, 0);
        }
        t_done(&t);
    }
}

static void test_resize_errors(void **state)
{
    (void)state;
    T t;
    t_init(&t);
    resize_run(&t, iota(&t, SH(2, 4)), 0, NULL, 2, (float[]){ 1, 2 }, 2, (int64_t[]){ 3, 3 });
    t_err(&t, "exactly one of the scales and sizes inputs must be given");
    t_init(&t);
    resize_run(&t, iota(&t, SH(2, 4)), 0, NULL, 1, (float[]){ 2 }, 0, NULL);
    t_err(&t, "scales has 1 values but 2 axes are resized");
    t_init(&t);
    resize_run(&t, iota(&t, SH(2, 4)), 0, NULL, 2, (float[]){ 1, 0 }, 0, NULL);
    t_err(&t, "scale 0 must be positive");
    t_init(&t);
    resize_run(&t, iota(&t, SH(2, 4)), 0, NULL, 2, (float[]){ 1, 2 }, 0, NULL);
    a_str(&t, IR_A_mode, "area");
    t_err(&t, "mode 'area' is not supported");
    t_init(&t);
    resize_run(&t, iota(&t, SH(2, 4)), 0, NULL, 2, (float[]){ 1, 2 }, 0, NULL);
    a_str(&t, IR_A_coordinate_transformation_mode, "corner");
    t_err(&t, "coordinate_transformation_mode 'corner' is not supported");
    t_init(&t);
    resize_run(&t, iota(&t, SH(2, 4)), 0, NULL, 2, (float[]){ 1, 2 }, 0, NULL);
    a_str(&t, IR_A_nearest_mode, "nearest");
    t_err(&t, "nearest_mode 'nearest' is not supported");
    t_init(&t);
    resize_run(&t, iota(&t, SH(2, 4)), 0, NULL, 0, NULL, 2, (int64_t[]){ 3, 3 });
    a_str(&t, IR_A_keep_aspect_ratio_policy, "fit");
    t_err(&t, "keep_aspect_ratio_policy 'fit' is not supported");
    t_init(&t);
    resize_run(&t, iota(&t, SH(2, 4)), 0, NULL, 1, (float[]){ 2 }, 0, NULL);
    a_ints(&t, IR_A_axes, 1, (int64_t[]){ 2 });
    t_err(&t, "axes value 2 is out of range for rank 2");
    t_init(&t);
    resize_run(&t, iota(&t, SH(2, 4)), 2, (float[]){ 0, 1 }, 0, NULL, 2, (int64_t[]){ 3, 3 });
    a_str(&t, IR_A_coordinate_transformation_mode, "tf_crop_and_resize");
    t_err(&t, "roi has 2 values; 4 are needed");
    t_init(&t);
    resize_run(&t, iota(&t, SH(2, 4)), 0, NULL, 0, NULL, 2, (int64_t[]){ 3, 0 });
    t_err(&t, "size 0 must be positive");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reshape),
        cmocka_unit_test(test_reshape_errors),
        cmocka_unit_test(test_flatten),
        cmocka_unit_test(test_squeeze_unsqueeze),
        cmocka_unit_test(test_transpose),
        cmocka_unit_test(test_concat),
        cmocka_unit_test(test_split),
        cmocka_unit_test(test_slice),
        cmocka_unit_test(test_gather),
        cmocka_unit_test(test_gather_runtime_check),
        cmocka_unit_test(test_gatherelements),
        cmocka_unit_test(test_gathernd),
        cmocka_unit_test(test_shape_size),
        cmocka_unit_test(test_constant),
        cmocka_unit_test(test_constantofshape),
        cmocka_unit_test(test_pad),
        cmocka_unit_test(test_expand_tile),
        cmocka_unit_test(test_range),
        cmocka_unit_test(test_depth_space),
        cmocka_unit_test(test_all_dtypes),
        cmocka_unit_test(test_resize_nearest),
        cmocka_unit_test(test_resize_linear),
        cmocka_unit_test(test_resize_cubic),
        cmocka_unit_test(test_resize_antialias),
        cmocka_unit_test(test_resize_policy),
        cmocka_unit_test(test_resize_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
