/* tests/unit/test_ops_attention.c — shape rules and reference kernels of the
 * operators: Attention, RotaryEmbedding, RMSNormalization,
 * GroupNormalization, LRN, MeanVarianceNormalization, Swish,
 * NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss, Einsum, Trilu, CumSum,
 * TopK, Det.  Graphs of one node over constant inputs go through pass_infer,
 * which infers shapes and evaluates the kernel.  The expected numbers of the
 * value tests were computed with onnx 1.19.1's ReferenceEvaluator on the
 * same inputs and are embedded here (float32 reference vs. double kernels:
 * tolerance 1e-5). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "ir/ir.h"
#include "passes/passes.h"

/* ------------------------------------------------------------ helpers */

typedef struct Case {
    IrGraph *g;
    UtilDiag d;
    int node;
    int y[4];
} Case;

static void start(Case *c)
{
    memset(c, 0, sizeof *c);
    c->g = ir_graph_new("g", "t.json");
    util_diag_init(&c->d);
}

/* A constant tensor; vals NULL for an empty one. */
static int cst(IrGraph *g, const char *name, IrDType dt, int rank, const int64_t *dims, const double *vals)
{
    UtilDiag d;
    util_diag_init(&d);
    int t = ir_add_tensor(g, name, IR_TK_CONST, util_loc_file("t"), &d);
    IrShape s = { .rank = rank };
    if (rank)
        memcpy(s.dims, dims, (size_t)rank * sizeof(int64_t));
    ir_set_type(g, t, dt, &s);
    void *data = ir_alloc_data(g, t);
    for (int64_t i = 0; i < ir_shape_numel(&s); i++) {
        if (ir_dtype_is_float(dt))
            ir_store_f64(dt, data, i, vals[i]);
        else
            ir_store_i64(dt, data, i, (int64_t)vals[i]);
    }
    return t;
}

/* A node of op over the given inputs (-1 = absent) with n_out outputs, of
 * which those with present[k] == 0 are absent. */
static void mk(Case *c, IrOp op, int n_in, const int *in, int n_out, const int *present)
{
    UtilDiag d;
    util_diag_init(&d);
    static const char *const names[4] = { "y0", "y1", "y2", "y3" };
    for (int k = 0; k < n_out; k++)
        c->y[k] = present[k] ? ir_add_tensor(c->g, names[k], IR_TK_VALUE, util_loc_file("t"), &d) : -1;
    c->node = ir_add_node(c->g, op, "op", n_in, in, n_out, c->y, util_loc_file("t"));
    for (int k = 0; k < n_out; k++)
        if (c->y[k] >= 0)
            ir_add_output(c->g, c->y[k]);
}

static void set_int(Case *c, IrAttrKey key, int64_t v)
{
    IrAttr a = { .key = key, .kind = IR_AK_INT, .v.i = v };
    assert_int_equal(ir_set_attr(c->g, c->node, &a), 0);
}

static void set_float(Case *c, IrAttrKey key, double v)
{
    IrAttr a = { .key = key, .kind = IR_AK_FLOAT, .v.f = v };
    assert_int_equal(ir_set_attr(c->g, c->node, &a), 0);
}

static void set_str(Case *c, IrAttrKey key, const char *s)
{
    IrAttr a = { .key = key, .kind = IR_AK_STRING, .v.s = s };
    assert_int_equal(ir_set_attr(c->g, c->node, &a), 0);
}

static void set_ints(Case *c, IrAttrKey key, int n, const int64_t *v)
{
    IrAttr a = { .key = key, .kind = IR_AK_INTS, .n = n, .v.ints = (int64_t *)v };
    assert_int_equal(ir_set_attr(c->g, c->node, &a), 0);
}

#define INTS(...) (int)(sizeof((int64_t[]){ __VA_ARGS__ }) / sizeof(int64_t)), (int64_t[]){ __VA_ARGS__ }

static void run_ok(Case *c)
{
    if (pass_infer(c->g, &c->d))
        fail_msg("pass_infer failed: %s", c->d.msg);
}

static void run_err(Case *c, const char *substr)
{
    assert_int_equal(pass_infer(c->g, &c->d), -1);
    if (!strstr(c->d.msg, substr))
        fail_msg("diagnostic '%s' lacks '%s'", c->d.msg, substr);
    ir_graph_free(c->g);
}

/* Output k has shape dims (rank) and values want within tol (NaN matches NaN, inf
 * matches the same inf). */
static void expect(const Case *c, int k, int rank, const int64_t *dims, const double *want, double tol)
{
    const IrTensor *t = &c->g->tensors[c->y[k]];
    assert_int_equal(t->v.shape.rank, rank);
    for (int i = 0; i < rank; i++)
        assert_int_equal(t->v.shape.dims[i], dims[i]);
    assert_non_null(t->v.data);
    for (int64_t i = 0; i < ir_shape_numel(&t->v.shape); i++) {
        double got = ir_load_f64(t->v.dtype, t->v.data, i);
        if (!(fabs(got - want[i]) <= tol) && got != want[i] && !(isnan(got) && isnan(want[i])))
            fail_msg("output %d element %lld: got %.9g, want %.9g", k, (long long)i, got, want[i]);
    }
}

static void finish(Case *c)
{
    ir_graph_free(c->g);
}

/* ------------------------------------------------------------ values */

/* plain 4-D attention, default scale 1/sqrt(head size), qk_matmul_output (mode 0) */
static void test_attention_4d(void **state)
{
    (void)state;
    Case c;
    start(&c);
    int in[] = {
        cst(c.g, "x0", IR_DT_F32, 4, (int64_t[]){ 1, 2, 2, 2 }, (double[]){ 0.25, 0.79, 0.55, -0.55, -0.4, 0.75,
                -0.99, 0.64 }),
        cst(c.g, "x1", IR_DT_F32, 4, (int64_t[]){ 1, 2, 3, 2 }, (double[]){ 0.59, -0.06, -0.39, -0.44, -0.49,
                -0.11, 0.01, 0.11, 0.99, 0.59, 0.24, 0.98 }),
        cst(c.g, "x2", IR_DT_F32, 4, (int64_t[]){ 1, 2, 3, 3 }, (double[]){ -0.57, -0.68, 0.23, -0.91, -0.93,
                0.03, -0.07, 0.83, 0.26, 0.03, -0.01, -0.5, -0.98, -0.62, 0.38, -0.6, -0.26, -0.99 }) };
    mk(&c, IR_OP_Attention, 3, in, 4, (int[]){ 1, 1, 1, 1 });
    run_ok(&c);
    expect(&c, 0, 4, (int64_t[]){ 1, 2, 2, 3 }, (double[]){ -0.501353264, -0.259965777, 0.184936628,
            -0.543301105, -0.349499673, 0.173830852, -0.525374591, -0.289430082, -0.461895764, -0.464179575,
            -0.251435667, -0.523454487 }, 1e-5);
    expect(&c, 1, 4, (int64_t[]){ 1, 2, 3, 2 }, (double[]){ 0.589999974, -0.0599999987, -0.389999986,
            -0.439999998, -0.49000001, -0.109999999, 0.00999999978, 0.109999999, 0.99000001, 0.589999974,
            0.239999995, 0.980000019 }, 1e-5);
    expect(&c, 2, 4, (int64_t[]){ 1, 2, 3, 3 }, (double[]){ -0.569999993, -0.680000007, 0.230000004,
            -0.910000026, -0.930000007, 0.0299999993, -0.0700000003, 0.829999983, 0.25999999, 0.0299999993,
            -0.00999999978, -0.5, -0.980000019, -0.620000005, 0.379999995, -0.600000024, -0.25999999,
            -0.99000001 }, 1e-5);
    expect(&c, 3, 4, (int64_t[]){ 1, 2, 2, 3 }, (double[]){ 0.0707813874, -0.314733237, -0.14806816, 0.25279066,
            0.0194454417, -0.147785321, 0.0555078834, 0.0328804441, 0.451841235, 0.0427799597, -0.426031858,
            0.275488794 }, 1e-5);
    finish(&c);
}

/* 3-D GQA (4 query heads over 2 KV heads), KV cache, causal, explicit scale */
static void test_attention_3d_gqa_causal_past(void **state)
{
    (void)state;
    Case c;
    start(&c);
    int in[] = {
        cst(c.g, "x0", IR_DT_F32, 3, (int64_t[]){ 1, 2, 8 }, (double[]){ 0.66, -0.69, -0.46, 0.76, 0.02, 0.69,
                0.28, 0.48, -0.82, 0.08, 0.02, 0.74, -0.28, 0.2, -0.88, -0.22 }),
        cst(c.g, "x1", IR_DT_F32, 3, (int64_t[]){ 1, 2, 4 }, (double[]){ -0.35, -0.7, 0.63, -0.24, 0.96, 0.18,
                0.21, 0.28 }),
        cst(c.g, "x2", IR_DT_F32, 3, (int64_t[]){ 1, 2, 6 }, (double[]){ 0.35, -0.7, -0.12, -0.52, -0.2, -0.81,
                0.94, -0.57, 0.34, -0.4, 0.75, 0.32 }),
        -1,
        cst(c.g, "x4", IR_DT_F32, 4, (int64_t[]){ 1, 2, 1, 2 }, (double[]){ -0.74, 0.69, 0.89, 0.81 }),
        cst(c.g, "x5", IR_DT_F32, 4, (int64_t[]){ 1, 2, 1, 3 }, (double[]){ 0.14, -0.71, -0.62, 0.86, 0.1, -0.64
                }) };
    mk(&c, IR_OP_Attention, 6, in, 3, (int[]){ 1, 1, 1 });
    set_int(&c, IR_A_q_num_heads, 4);
    set_int(&c, IR_A_kv_num_heads, 2);
    set_int(&c, IR_A_is_causal, 1);
    set_float(&c, IR_A_scale, 0.5);
    run_ok(&c);
    expect(&c, 0, 3, (int64_t[]){ 1, 2, 12 }, (double[]){ 0.275983691, -0.70352453, -0.296229243, 0.213554442,
            -0.706497371, -0.444870383, 0.294495314, -0.0229358096, -0.70966363, 0.268813998, -0.0285186935,
            -0.712827206, 0.383969545, -0.676704943, -0.240092471, 0.467469066, -0.659266829, -0.166089669,
            -0.0143661546, 0.233669192, -0.356927872, -0.0993178934, 0.249610066, -0.325859725 }, 1e-5);
    expect(&c, 1, 4, (int64_t[]){ 1, 2, 3, 2 }, (double[]){ -0.74000001, 0.689999998, -0.349999994,
            -0.699999988, 0.959999979, 0.180000007, 0.889999986, 0.810000002, 0.629999995, -0.239999995,
            0.209999993, 0.280000001 }, 1e-5);
    expect(&c, 2, 4, (int64_t[]){ 1, 2, 3, 3 }, (double[]){ 0.140000001, -0.709999979, -0.620000005,
            0.349999994, -0.699999988, -0.119999997, 0.939999998, -0.569999993, 0.340000004, 0.860000014,
            0.100000001, -0.639999986, -0.519999981, -0.200000003, -0.810000002, -0.400000006, 0.75, 0.319999993
            }, 1e-5);
    finish(&c);
}

/* boolean 2-D mask shorter than the keys (padded with -inf), softcap, qk output after softmax (mode 3) */
static void test_attention_bool_mask_softcap(void **state)
{
    (void)state;
    Case c;
    start(&c);
    int in[] = {
        cst(c.g, "x0", IR_DT_F32, 4, (int64_t[]){ 1, 1, 2, 2 }, (double[]){ 0.77, 0.28, 0.14, -0.25 }),
        cst(c.g, "x1", IR_DT_F32, 4, (int64_t[]){ 1, 1, 3, 2 }, (double[]){ -0.18, -0.52, -0.92, 0.75, -0.06,
                0.1 }),
        cst(c.g, "x2", IR_DT_F32, 4, (int64_t[]){ 1, 1, 3, 2 }, (double[]){ -0.36, 0.5, -0.95, -0.26, -0.94,
                -0.75 }),
        cst(c.g, "x3", IR_DT_BOOL, 2, (int64_t[]){ 2, 2 }, (double[]){ 1, 0, 1, 1 }) };
    mk(&c, IR_OP_Attention, 4, in, 4, (int[]){ 1, 0, 0, 1 });
    set_float(&c, IR_A_softcap, 2.0);
    set_int(&c, IR_A_qk_matmul_output_mode, 3);
    run_ok(&c);
    expect(&c, 0, 4, (int64_t[]){ 1, 1, 2, 2 }, (double[]){ -0.50537926, 0.250245929, -0.633627892, 0.113713555
            }, 1e-5);
    expect(&c, 3, 4, (int64_t[]){ 1, 1, 2, 3 }, (double[]){ 0.751488507, 0.124255762, 0.124255762, 0.535084128,
            0.39767015, 0.0672456995 }, 1e-5);
    finish(&c);
}

/* additive float mask broadcast over heads, nonpad_kv_seqlen, qk output with bias (mode 1) */
static void test_attention_float_mask_nonpad(void **state)
{
    (void)state;
    Case c;
    start(&c);
    int in[] = {
        cst(c.g, "x0", IR_DT_F32, 4, (int64_t[]){ 2, 1, 1, 2 }, (double[]){ 0.93, 0.32, -0.14, 0.05 }),
        cst(c.g, "x1", IR_DT_F32, 4, (int64_t[]){ 2, 1, 3, 2 }, (double[]){ 0.75, -0.31, 0.18, 0.37, -0.29,
                0.04, 0.53, 0.82, -0.7, 0.87, -0.99, 0.51 }),
        cst(c.g, "x2", IR_DT_F32, 4, (int64_t[]){ 2, 1, 3, 1 }, (double[]){ 0.62, -0.73, -0.16, 0.63, -0.97,
                0.26 }),
        cst(c.g, "x3", IR_DT_F32, 4, (int64_t[]){ 2, 1, 1, 3 }, (double[]){ 0.59, 0.03, 0.45, -0.55, -0.6, -0.27
                }),
        -1,
        -1,
        cst(c.g, "x6", IR_DT_I64, 1, (int64_t[]){ 2 }, (double[]){ 3, 2 }) };
    mk(&c, IR_OP_Attention, 7, in, 4, (int[]){ 1, 0, 0, 1 });
    set_int(&c, IR_A_qk_matmul_output_mode, 1);
    run_ok(&c);
    expect(&c, 0, 4, (int64_t[]){ 2, 1, 1, 1 }, (double[]){ 0.108498655, -0.199399382 }, 1e-5);
    expect(&c, 3, 4, (int64_t[]){ 2, 1, 1, 3 }, (double[]){ 1.013062, 0.232091129, 0.268344253, -0.573475957,
            -0.499944419, -INFINITY }, 1e-5);
    finish(&c);
}

/* RotaryEmbedding 4-D, halves rotated, position_ids into the caches */
static void test_rotary_4d_positions(void **state)
{
    (void)state;
    Case c;
    start(&c);
    int in[] = {
        cst(c.g, "x0", IR_DT_F32, 4, (int64_t[]){ 1, 2, 2, 4 }, (double[]){ -0.64, -0.31, 0.9, 0.15, -0.32,
                -0.46, 0.9, -0.11, 0.96, 0.03, 0.04, 0.79, 0.49, 0.16, -0.15, 0.76 }),
        cst(c.g, "x1", IR_DT_F32, 2, (int64_t[]){ 3, 2 }, (double[]){ -0.18, 0.85, -0.86, -0.14, 0.04, 0.9 }),
        cst(c.g, "x2", IR_DT_F32, 2, (int64_t[]){ 3, 2 }, (double[]){ -0.5, 0.61, 0.35, 0.43, 0.26, 0.94 }),
        cst(c.g, "x3", IR_DT_I64, 2, (int64_t[]){ 1, 2 }, (double[]){ 2, 0 }) };
    mk(&c, IR_OP_RotaryEmbedding, 4, in, 1, (int[]){ 1 });
    run_ok(&c);
    expect(&c, 0, 4, (int64_t[]){ 1, 2, 2, 4 }, (double[]){ -0.259599984, -0.419999987, -0.130399987,
            -0.15640001, 0.507600009, -0.323900044, -0.00200000405, -0.374100029, 0.027999999, -0.715600014,
            0.251199991, 0.739199996, -0.163200006, -0.327600002, -0.217999995, 0.743600011 }, 1e-5);
    finish(&c);
}

/* RotaryEmbedding 3-D (num_heads 2), interleaved, rotary_embedding_dim 2 of head size 4 */
static void test_rotary_3d_interleaved_partial(void **state)
{
    (void)state;
    Case c;
    start(&c);
    int in[] = {
        cst(c.g, "x0", IR_DT_F32, 3, (int64_t[]){ 1, 2, 8 }, (double[]){ -0.33, -0.2, -0.59, -0.9, -0.57, 0.83,
                0.68, -0.78, 0.21, -0.04, 0.19, 0.32, -0.39, 0.92, -0.07, 0.26 }),
        cst(c.g, "x1", IR_DT_F32, 3, (int64_t[]){ 1, 2, 1 }, (double[]){ 0.27, -0.63 }),
        cst(c.g, "x2", IR_DT_F32, 3, (int64_t[]){ 1, 2, 1 }, (double[]){ -0.88, -0.18 }) };
    mk(&c, IR_OP_RotaryEmbedding, 3, in, 1, (int[]){ 1 });
    set_int(&c, IR_A_num_heads, 2);
    set_int(&c, IR_A_interleaved, 1);
    set_int(&c, IR_A_rotary_embedding_dim, 2);
    run_ok(&c);
    expect(&c, 0, 3, (int64_t[]){ 1, 2, 8 }, (double[]){ -0.265100002, 0.236399993, -0.589999974, -0.899999976,
            0.576499939, 0.725699961, 0.680000007, -0.779999971, -0.139499992, -0.0125999991, 0.189999998,
            0.319999993, 0.411300004, -0.509399951, -0.0700000003, 0.25999999 }, 1e-5);
    finish(&c);
}

/* RMSNormalization over the last two axes, scale broadcast */
static void test_rmsnorm(void **state)
{
    (void)state;
    Case c;
    start(&c);
    int in[] = {
        cst(c.g, "x0", IR_DT_F32, 3, (int64_t[]){ 2, 2, 3 }, (double[]){ 0.53, 0.63, 0.46, -0.77, 0.83, 0.6,
                0.76, 0.05, 0.83, -0.91, -0.94, -0.96 }),
        cst(c.g, "x1", IR_DT_F32, 1, (int64_t[]){ 3 }, (double[]){ -0.49, -0.5, -0.62 }) };
    mk(&c, IR_OP_RMSNormalization, 2, in, 1, (int[]){ 1 });
    set_int(&c, IR_A_axis, -2);
    set_float(&c, IR_A_epsilon, 0.01);
    run_ok(&c);
    expect(&c, 0, 3, (int64_t[]){ 2, 2, 3 }, (double[]){ -0.395181984, -0.479331255, -0.433985025, 0.574132323,
            -0.631499887, -0.566067398, -0.458259672, -0.0307639427, -0.633244991, 0.548705697, 0.578362107,
            0.732427895 }, 1e-5);
    finish(&c);
}

/* GroupNormalization-21: 2 groups of 2 channels, per-channel scale and bias */
static void test_groupnorm(void **state)
{
    (void)state;
    Case c;
    start(&c);
    int in[] = {
        cst(c.g, "x0", IR_DT_F32, 3, (int64_t[]){ 1, 4, 3 }, (double[]){ 0.13, -0.92, 0.18, -0.67, 0.36, -0.96,
                -0.38, 0.88, 0.08, 0.62, 0.32, 0.22 }),
        cst(c.g, "x1", IR_DT_F32, 1, (int64_t[]){ 4 }, (double[]){ -0.62, 0.15, -0.92, 0.6 }),
        cst(c.g, "x2", IR_DT_F32, 1, (int64_t[]){ 4 }, (double[]){ 0.92, 0.71, -0.9, -0.32 }) };
    mk(&c, IR_OP_GroupNormalization, 3, in, 1, (int[]){ 1 });
    set_int(&c, IR_A_num_groups, 2);
    set_float(&c, IR_A_epsilon, 0.001);
    run_ok(&c);
    expect(&c, 0, 3, (int64_t[]){ 1, 4, 3 }, (double[]){ 0.4199301, 1.60430622, 0.363531232, 0.612666428,
            0.893751144, 0.533526123, 0.639557242, -2.25572968, -0.417452157, 0.174536645, -0.275042117,
            -0.424901694 }, 1e-5);
    finish(&c);
}

/* LRN size 3 over 4 channels (N = C: the ONNX reference loops channels over dim 0) */
static void test_lrn(void **state)
{
    (void)state;
    Case c;
    start(&c);
    int in[] = {
        cst(c.g, "x0", IR_DT_F32, 4, (int64_t[]){ 4, 4, 1, 2 }, (double[]){ -0.36, -0.77, 0.25, 0.59, -0.37,
                0.73, 0.59, -0.74, 0.53, 0.77, -0.61, 0.15, 0.28, 0.22, -0.81, 0.32, 0.26, 0.65, 0.61, -0.35,
                0.44, 0.73, 0.79, -0.68, -0.95, 0.3, -0.57, 0.13, 0.89, -0.24, -0.49, -0.09 }) };
    mk(&c, IR_OP_LRN, 1, in, 1, (int[]){ 1 });
    set_int(&c, IR_A_size, 3);
    set_float(&c, IR_A_alpha, 0.5);
    set_float(&c, IR_A_beta, 0.75);
    set_float(&c, IR_A_bias, 2.0);
    run_ok(&c);
    expect(&c, 0, 4, (int64_t[]){ 4, 4, 1, 2 }, (double[]){ -0.211522728, -0.432641566, 0.14566578, 0.321621776,
            -0.212763578, 0.398945212, 0.340544611, -0.41245532, 0.302861571, 0.440989614, -0.346965373,
            0.0856607109, 0.155831024, 0.12941359, -0.460640401, 0.188499302, 0.150480181, 0.373829663,
            0.348984092, -0.195109293, 0.243717924, 0.406013578, 0.447077632, -0.38087514, -0.52508688,
            0.17719847, -0.301605225, 0.0765131488, 0.488336623, -0.141972542, -0.273871124, -0.0532956235 },
            1e-5);
    finish(&c);
}

/* MeanVarianceNormalization with default axes [0, 2, 3] */
static void test_mvn(void **state)
{
    (void)state;
    Case c;
    start(&c);
    int in[] = {
        cst(c.g, "x0", IR_DT_F32, 4, (int64_t[]){ 2, 2, 1, 3 }, (double[]){ 0.31, -0.8, -0.24, -0.73, 0.32,
                0.66, -0.25, -0.26, 0.08, -0.57, -0.51, -0.34 }) };
    mk(&c, IR_OP_MeanVarianceNormalization, 1, in, 1, (int[]){ 1 });
    run_ok(&c);
    expect(&c, 0, 4, (int64_t[]){ 2, 2, 1, 3 }, (double[]){ 1.46740317, -1.76865828, -0.136050582, -1.05486572,
            1.0154314, 1.68581331, -0.165204301, -0.194357991, 0.796867967, -0.739391804, -0.621089101,
            -0.285898179 }, 1e-5);
    finish(&c);
}

/* MeanVarianceNormalization over axes [1, -1] */
static void test_mvn_axes(void **state)
{
    (void)state;
    Case c;
    start(&c);
    int in[] = {
        cst(c.g, "x0", IR_DT_F32, 3, (int64_t[]){ 2, 3, 2 }, (double[]){ -0.09, -0.84, 0.51, 0.16, -0.4, -0.84,
                0.53, -0.74, -0.73, -0.74, -0.84, 0.81 }) };
    mk(&c, IR_OP_MeanVarianceNormalization, 1, in, 1, (int[]){ 1 });
    set_ints(&c, IR_A_axes, INTS(1, -1));
    run_ok(&c);
    expect(&c, 0, 3, (int64_t[]){ 2, 3, 2 }, (double[]){ 0.321072042, -1.18395305, 1.52509212, 0.822747111,
            -0.301005036, -1.18395305, 1.19660079, -0.668040991, -0.653358757, -0.668040991, -0.814863086,
            1.60770297 }, 1e-5);
    finish(&c);
}

/* Swish with alpha 2 */
static void test_swish(void **state)
{
    (void)state;
    Case c;
    start(&c);
    int in[] = {
        cst(c.g, "x0", IR_DT_F32, 1, (int64_t[]){ 5 }, (double[]){ -0.46, -0.39, 0.67, 0.24, -0.63 }) };
    mk(&c, IR_OP_Swish, 1, in, 1, (int[]){ 1 });
    set_float(&c, IR_A_alpha, 2.0);
    run_ok(&c);
    expect(&c, 0, 1, (int64_t[]){ 5 }, (double[]){ -0.131080627, -0.122584745, 0.530968249, 0.148259476,
            -0.139213562 }, 1e-5);
    finish(&c);
}

/* NegativeLogLikelihoodLoss [N, C, d], weights, ignore_index, mean */
static void test_nll_weight_ignore_mean(void **state)
{
    (void)state;
    Case c;
    start(&c);
    int in[] = {
        cst(c.g, "x0", IR_DT_F32, 3, (int64_t[]){ 2, 3, 2 }, (double[]){ -0.13, 0.77, -0.25, 0.42, -0.81, 0.45,
                0.55, 0.65, 0.35, -0.26, -0.87, 0.04 }),
        cst(c.g, "x1", IR_DT_I64, 2, (int64_t[]){ 2, 2 }, (double[]){ 0, 2, 1, 1 }),
        cst(c.g, "x2", IR_DT_F32, 1, (int64_t[]){ 3 }, (double[]){ 0.5, 1, 2 }) };
    mk(&c, IR_OP_NegativeLogLikelihoodLoss, 3, in, 1, (int[]){ 1 });
    set_int(&c, IR_A_ignore_index, 1);
    run_ok(&c);
    expect(&c, 0, 0, NULL, (double[]){ -0.333999991 }, 1e-5);
    finish(&c);
}

/* NegativeLogLikelihoodLoss, reduction none, int32 target */
static void test_nll_none(void **state)
{
    (void)state;
    Case c;
    start(&c);
    int in[] = {
        cst(c.g, "x0", IR_DT_F32, 2, (int64_t[]){ 3, 2 }, (double[]){ 0.51, -0.62, -0.47, 0.07, 0.5, 0.79 }),
        cst(c.g, "x1", IR_DT_I32, 1, (int64_t[]){ 3 }, (double[]){ 1, 0, 1 }) };
    mk(&c, IR_OP_NegativeLogLikelihoodLoss, 2, in, 1, (int[]){ 1 });
    set_str(&c, IR_A_reduction, "none");
    run_ok(&c);
    expect(&c, 0, 1, (int64_t[]){ 3 }, (double[]){ 0.620000005, 0.469999999, -0.790000021 }, 1e-5);
    finish(&c);
}

/* SoftmaxCrossEntropyLoss, reduction sum, with log_prob */
static void test_sce_sum_logprob(void **state)
{
    (void)state;
    Case c;
    start(&c);
    int in[] = {
        cst(c.g, "x0", IR_DT_F32, 2, (int64_t[]){ 2, 3 }, (double[]){ -0.75, -0.63, 0.6, 0.29, 0.44, 0.99 }),
        cst(c.g, "x1", IR_DT_I64, 1, (int64_t[]){ 2 }, (double[]){ 2, 0 }) };
    mk(&c, IR_OP_SoftmaxCrossEntropyLoss, 2, in, 2, (int[]){ 1, 1 });
    set_str(&c, IR_A_reduction, "sum");
    run_ok(&c);
    expect(&c, 0, 0, NULL, (double[]){ 1.86849821 }, 1e-5);
    expect(&c, 1, 2, (int64_t[]){ 2, 3 }, (double[]){ -1.78924334, -1.66924334, -0.439243346, -1.42925489,
            -1.27925503, -0.729254842 }, 1e-5);
    finish(&c);
}

/* Einsum explicit matrix product */
static void test_einsum_matmul(void **state)
{
    (void)state;
    Case c;
    start(&c);
    int in[] = {
        cst(c.g, "x0", IR_DT_F32, 2, (int64_t[]){ 2, 3 }, (double[]){ 0.88, 0.69, 0.55, -0.21, 0.28, -0.63 }),
        cst(c.g, "x1", IR_DT_F32, 2, (int64_t[]){ 3, 2 }, (double[]){ 0.52, 0.52, 0.44, -0.11, -0.24, -0.16 })
                };
    mk(&c, IR_OP_Einsum, 2, in, 1, (int[]){ 1 });
    set_str(&c, IR_A_equation, "ij,jk->ik");
    run_ok(&c);
    expect(&c, 0, 2, (int64_t[]){ 2, 2 }, (double[]){ 0.629199922, 0.29369998, 0.165199995, -0.0392000042 },
            1e-5);
    finish(&c);
}

/* Einsum implicit output: trace "ii" gives a scalar */
static void test_einsum_implicit_trace(void **state)
{
    (void)state;
    Case c;
    start(&c);
    int in[] = {
        cst(c.g, "x0", IR_DT_F32, 2, (int64_t[]){ 3, 3 }, (double[]){ -0.93, 0.69, 0.08, -0.22, 0.1, 0.44,
                -0.24, 0.66, 0.84 }) };
    mk(&c, IR_OP_Einsum, 1, in, 1, (int[]){ 1 });
    set_str(&c, IR_A_equation, "ii");
    run_ok(&c);
    expect(&c, 0, 0, NULL, (double[]){ 0.00999999046 }, 1e-5);
    finish(&c);
}

/* Einsum batched product with broadcast ellipsis dims */
static void test_einsum_ellipsis_broadcast(void **state)
{
    (void)state;
    Case c;
    start(&c);
    int in[] = {
        cst(c.g, "x0", IR_DT_F32, 4, (int64_t[]){ 2, 1, 2, 2 }, (double[]){ -0.23, -0.72, 0.52, 0.99, -0.7,
                0.43, 0.65, 0.84 }),
        cst(c.g, "x1", IR_DT_F32, 3, (int64_t[]){ 3, 2, 1 }, (double[]){ -0.75, -0.82, 0.98, -0.77, -0.65, 0.15
                }) };
    mk(&c, IR_OP_Einsum, 2, in, 1, (int[]){ 1 });
    set_str(&c, IR_A_equation, "...ij,...jk->...ik");
    run_ok(&c);
    expect(&c, 0, 4, (int64_t[]){ 2, 3, 2, 1 }, (double[]){ 0.762899995, -1.20179999, 0.328999996, -0.252700001,
            0.0414999872, -0.189499959, 0.172399968, -1.17629993, -1.01709998, -0.00979999918, 0.519499958,
            -0.296499968 }, 1e-5);
    finish(&c);
}

/* Einsum diagonal and transpose on int64: "iij->ji" */
static void test_einsum_diag_transpose_int(void **state)
{
    (void)state;
    Case c;
    start(&c);
    int in[] = {
        cst(c.g, "x0", IR_DT_I64, 3, (int64_t[]){ 2, 2, 3 }, (double[]){ 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11 })
                };
    mk(&c, IR_OP_Einsum, 1, in, 1, (int[]){ 1 });
    set_str(&c, IR_A_equation, "iij->ji");
    run_ok(&c);
    expect(&c, 0, 2, (int64_t[]){ 3, 2 }, (double[]){ 0, 9, 1, 10, 2, 11 }, 1e-5);
    finish(&c);
}

/* Einsum implicit output sorted alphabetically: "ba,ca" */
static void test_einsum_implicit_order(void **state)
{
    (void)state;
    Case c;
    start(&c);
    int in[] = {
        cst(c.g, "x0", IR_DT_F32, 2, (int64_t[]){ 2, 2 }, (double[]){ -0.11, 0.5, -0.62, 0.83 }),
        cst(c.g, "x1", IR_DT_F32, 2, (int64_t[]){ 3, 2 }, (double[]){ -0.57, 0.54, -0.86, -0.05, -0.93, -0.37 })
                };
    mk(&c, IR_OP_Einsum, 2, in, 1, (int[]){ 1 });
    set_str(&c, IR_A_equation, "ba, ca");
    run_ok(&c);
    expect(&c, 0, 2, (int64_t[]){ 2, 3 }, (double[]){ 0.332700014, 0.069600001, -0.0826999992, 0.801599979,
            0.491700023, 0.269500017 }, 1e-5);
    finish(&c);
}

/* Trilu upper with k = 1 */
static void test_trilu_upper_k(void **state)
{
    (void)state;
    Case c;
    start(&c);
    int in[] = {
        cst(c.g, "x0", IR_DT_F32, 3, (int64_t[]){ 2, 3, 4 }, (double[]){ -0.38, 0.44, -0.09, -0.89, 0.99, 0.78,
                0.83, -0.51, -0.21, -0.55, -0.75, -0.93, 0.01, -0.75, -0.65, 0.72, -0.03, -0.63, 0.34, -0.47,
                0.05, -0.43, 0.03, 0.26 }),
        cst(c.g, "x1", IR_DT_I64, 0, NULL, (double[]){ 1 }) };
    mk(&c, IR_OP_Trilu, 2, in, 1, (int[]){ 1 });
    run_ok(&c);
    expect(&c, 0, 3, (int64_t[]){ 2, 3, 4 }, (double[]){ 0, 0.439999998, -0.0900000036, -0.889999986, 0, 0,
            0.829999983, -0.50999999, 0, 0, 0, -0.930000007, 0, -0.75, -0.649999976, 0.720000029, 0, 0,
            0.340000004, -0.469999999, 0, 0, 0, 0.25999999 }, 1e-5);
    finish(&c);
}

/* Trilu lower with k = -1 on int64 */
static void test_trilu_lower_neg_k_int(void **state)
{
    (void)state;
    Case c;
    start(&c);
    int in[] = {
        cst(c.g, "x0", IR_DT_I64, 2, (int64_t[]){ 4, 3 }, (double[]){ 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11 }),
        cst(c.g, "x1", IR_DT_I64, 0, NULL, (double[]){ -1 }) };
    mk(&c, IR_OP_Trilu, 2, in, 1, (int[]){ 1 });
    set_int(&c, IR_A_upper, 0);
    run_ok(&c);
    expect(&c, 0, 2, (int64_t[]){ 4, 3 }, (double[]){ 0, 0, 0, 3, 0, 0, 6, 7, 0, 9, 10, 11 }, 1e-5);
    finish(&c);
}

/* CumSum exclusive and reverse along axis -1 (int32) */
static void test_cumsum_exclusive_reverse(void **state)
{
    (void)state;
    Case c;
    start(&c);
    int in[] = {
        cst(c.g, "x0", IR_DT_I32, 2, (int64_t[]){ 2, 3 }, (double[]){ 1, 2, 3, 4, 5, 6 }),
        cst(c.g, "x1", IR_DT_I64, 0, NULL, (double[]){ -1 }) };
    mk(&c, IR_OP_CumSum, 2, in, 1, (int[]){ 1 });
    set_int(&c, IR_A_exclusive, 1);
    set_int(&c, IR_A_reverse, 1);
    run_ok(&c);
    expect(&c, 0, 2, (int64_t[]){ 2, 3 }, (double[]){ 5, 3, 0, 11, 6, 0 }, 1e-5);
    finish(&c);
}

/* CumSum along axis 0 (float) */
static void test_cumsum_axis0(void **state)
{
    (void)state;
    Case c;
    start(&c);
    int in[] = {
        cst(c.g, "x0", IR_DT_F32, 2, (int64_t[]){ 3, 2 }, (double[]){ 0.07, -0.21, 0.58, 0.75, -0.64, -0.73 }),
        cst(c.g, "x1", IR_DT_I32, 0, NULL, (double[]){ 0 }) };
    mk(&c, IR_OP_CumSum, 2, in, 1, (int[]){ 1 });
    run_ok(&c);
    expect(&c, 0, 2, (int64_t[]){ 3, 2 }, (double[]){ 0.0700000003, -0.209999993, 0.649999976, 0.540000021,
            0.00999999046, -0.189999998 }, 1e-5);
    finish(&c);
}

/* TopK largest, ties by lower index, axis 1 */
static void test_topk_ties(void **state)
{
    (void)state;
    Case c;
    start(&c);
    int in[] = {
        cst(c.g, "x0", IR_DT_F32, 2, (int64_t[]){ 2, 4 }, (double[]){ 3, 1, 3, 2, 0, 5, 5, 5 }),
        cst(c.g, "x1", IR_DT_I64, 1, (int64_t[]){ 1 }, (double[]){ 3 }) };
    mk(&c, IR_OP_TopK, 2, in, 2, (int[]){ 1, 1 });
    set_int(&c, IR_A_axis, 1);
    run_ok(&c);
    expect(&c, 0, 2, (int64_t[]){ 2, 3 }, (double[]){ 3, 3, 2, 5, 5, 5 }, 1e-5);
    expect(&c, 1, 2, (int64_t[]){ 2, 3 }, (double[]){ 0, 2, 3, 1, 2, 3 }, 1e-5);
    finish(&c);
}

/* TopK smallest along axis 0 on int64 */
static void test_topk_smallest_int(void **state)
{
    (void)state;
    Case c;
    start(&c);
    int in[] = {
        cst(c.g, "x0", IR_DT_I64, 2, (int64_t[]){ 3, 2 }, (double[]){ 4, 1, 2, 1, 9, 0 }),
        cst(c.g, "x1", IR_DT_I64, 1, (int64_t[]){ 1 }, (double[]){ 2 }) };
    mk(&c, IR_OP_TopK, 2, in, 2, (int[]){ 1, 1 });
    set_int(&c, IR_A_axis, 0);
    set_int(&c, IR_A_largest, 0);
    run_ok(&c);
    expect(&c, 0, 2, (int64_t[]){ 2, 2 }, (double[]){ 2, 0, 4, 1 }, 1e-5);
    expect(&c, 1, 2, (int64_t[]){ 2, 2 }, (double[]){ 1, 2, 0, 0 }, 1e-5);
    finish(&c);
}

/* Det of a batch of 3x3 matrices (one singular) */
static void test_det(void **state)
{
    (void)state;
    Case c;
    start(&c);
    int in[] = {
        cst(c.g, "x0", IR_DT_F32, 3, (int64_t[]){ 2, 3, 3 }, (double[]){ 2, 1, 0, 1, 3, 1, 0, 1, 4, 1, 2, 3, 2,
                4, 6, 0, 1, 1 }) };
    mk(&c, IR_OP_Det, 1, in, 1, (int[]){ 1 });
    run_ok(&c);
    expect(&c, 0, 1, (int64_t[]){ 2 }, (double[]){ 18, 0 }, 1e-5);
    finish(&c);
}

/* ------------------------------------------------------------ errors */

static const double zeros[64];

/* A zero-filled constant of dtype dt (at most 64 elements). */
static int zc(Case *c, const char *name, IrDType dt, int rank, const int64_t *dims)
{
    return cst(c->g, name, dt, rank, dims, zeros);
}

/* start + op over inputs built by the caller; one output. */
static void node1(Case *c, IrOp op, int n_in, const int *in)
{
    mk(c, op, n_in, in, 1, (int[]){ 1 });
}

static void test_attention_errors(void **state)
{
    (void)state;
    Case c;
    int64_t d3[3] = { 1, 2, 4 };
    start(&c);
    node1(&c, IR_OP_Attention, 3, (int[]){ zc(&c, "q", IR_DT_F32, 3, d3), zc(&c, "k", IR_DT_F32, 3, d3),
                                           zc(&c, "v", IR_DT_F32, 3, d3) });
    run_err(&c, "3-D inputs need the q_num_heads and kv_num_heads attributes");

    int64_t q4[4] = { 1, 3, 1, 2 }, k4[4] = { 1, 2, 1, 2 };
    start(&c);
    node1(&c, IR_OP_Attention, 3, (int[]){ zc(&c, "q", IR_DT_F32, 4, q4), zc(&c, "k", IR_DT_F32, 4, k4),
                                           zc(&c, "v", IR_DT_F32, 4, k4) });
    run_err(&c, "q_num_heads 3 is not a multiple of kv_num_heads 2");

    start(&c);
    node1(&c, IR_OP_Attention, 3, (int[]){ zc(&c, "q", IR_DT_F32, 4, k4), zc(&c, "k", IR_DT_F32, 4, k4),
                                           zc(&c, "v", IR_DT_F32, 4, k4) });
    set_int(&c, IR_A_qk_matmul_output_mode, 4);
    run_err(&c, "qk_matmul_output_mode must be 0 to 3, not 4");

    start(&c);
    node1(&c, IR_OP_Attention, 4, (int[]){ zc(&c, "q", IR_DT_F32, 4, k4), zc(&c, "k", IR_DT_F32, 4, k4),
                                           zc(&c, "v", IR_DT_F32, 4, k4),
                                           zc(&c, "m", IR_DT_F32, 2, (int64_t[]){ 1, 2 }) });
    run_err(&c, "attn_mask must have rank 2 to 4 and at most 1 columns");

    start(&c);
    node1(&c, IR_OP_Attention, 5, (int[]){ zc(&c, "q", IR_DT_F32, 4, k4), zc(&c, "k", IR_DT_F32, 4, k4),
                                           zc(&c, "v", IR_DT_F32, 4, k4), -1, zc(&c, "pk", IR_DT_F32, 4, k4) });
    run_err(&c, "past_key and past_value must be given together");

    start(&c);
    node1(&c, IR_OP_Attention, 3, (int[]){ zc(&c, "q", IR_DT_F32, 4, k4), zc(&c, "k", IR_DT_F32, 4, k4),
                                           zc(&c, "v", IR_DT_F32, 4, k4) });
    set_int(&c, IR_A_softmax_precision, 7);
    run_err(&c, "softmax_precision 7 is not a floating-point type");
}

static void test_rotary_errors(void **state)
{
    (void)state;
    Case c;
    int64_t x4[4] = { 1, 1, 2, 4 }, cs[3] = { 1, 2, 2 };
    start(&c);
    node1(&c, IR_OP_RotaryEmbedding, 3, (int[]){ zc(&c, "x", IR_DT_F32, 4, x4), zc(&c, "c", IR_DT_F32, 3, cs),
                                                 zc(&c, "s", IR_DT_F32, 3, cs) });
    set_int(&c, IR_A_rotary_embedding_dim, 3);
    run_err(&c, "rotary_embedding_dim 3 must be even and at most the head size 4");

    start(&c);
    node1(&c, IR_OP_RotaryEmbedding, 3, (int[]){ zc(&c, "x", IR_DT_F32, 3, (int64_t[]){ 1, 2, 4 }),
                                                 zc(&c, "c", IR_DT_F32, 3, cs), zc(&c, "s", IR_DT_F32, 3, cs) });
    run_err(&c, "a 3-D input needs a positive num_heads attribute");

    start(&c);
    node1(&c, IR_OP_RotaryEmbedding, 4, (int[]){ zc(&c, "x", IR_DT_F32, 4, x4),
                                                 zc(&c, "c", IR_DT_F32, 2, (int64_t[]){ 3, 2 }),
                                                 zc(&c, "s", IR_DT_F32, 2, (int64_t[]){ 3, 2 }),
                                                 cst(c.g, "p", IR_DT_I64, 2, (int64_t[]){ 1, 2 },
                                                     (double[]){ 0, 3 }) });
    run_err(&c, "position id 3 is outside the cos/sin caches (3 rows)");
}

static void test_norm_errors(void **state)
{
    (void)state;
    Case c;
    int64_t x[3] = { 1, 4, 2 };
    start(&c);
    node1(&c, IR_OP_GroupNormalization, 3, (int[]){ zc(&c, "x", IR_DT_F32, 3, x),
                                                    zc(&c, "s", IR_DT_F32, 1, (int64_t[]){ 2 }),
                                                    zc(&c, "b", IR_DT_F32, 1, (int64_t[]){ 2 }) });
    set_int(&c, IR_A_num_groups, 2);
    run_err(&c, "one value per group (GroupNormalization-18 form)");

    start(&c);
    node1(&c, IR_OP_GroupNormalization, 3, (int[]){ zc(&c, "x", IR_DT_F32, 3, x),
                                                    zc(&c, "s", IR_DT_F32, 1, (int64_t[]){ 4 }),
                                                    zc(&c, "b", IR_DT_F32, 1, (int64_t[]){ 4 }) });
    set_int(&c, IR_A_num_groups, 3);
    run_err(&c, "num_groups 3 must be positive and divide the 4 channels");

    start(&c);
    node1(&c, IR_OP_LRN, 1, (int[]){ zc(&c, "x", IR_DT_F32, 3, x) });
    run_err(&c, "attribute 'size' is required");

    start(&c);
    node1(&c, IR_OP_MeanVarianceNormalization, 1, (int[]){ zc(&c, "x", IR_DT_F32, 3, x) });
    run_err(&c, "the default axes [0, 2, 3] need rank >= 4");

    start(&c);
    node1(&c, IR_OP_RMSNormalization, 2, (int[]){ zc(&c, "x", IR_DT_F32, 3, x),
                                                  zc(&c, "s", IR_DT_F32, 1, (int64_t[]){ 3 }) });
    run_err(&c, "shapes [1,4,2] and [3] cannot be broadcast together");

    start(&c);
    node1(&c, IR_OP_Swish, 1, (int[]){ zc(&c, "x", IR_DT_I32, 1, (int64_t[]){ 2 }) });
    run_err(&c, "a floating-point tensor is required");
}

static void test_loss_errors(void **state)
{
    (void)state;
    Case c;
    int64_t x[2] = { 2, 3 };
    start(&c);
    node1(&c, IR_OP_NegativeLogLikelihoodLoss, 2, (int[]){ zc(&c, "x", IR_DT_F32, 2, x),
        cst(c.g, "t", IR_DT_I64, 1, (int64_t[]){ 2 }, (double[]){ 0, 5 }) });
    run_err(&c, "target 5 is outside [0, 3)");

    start(&c);
    node1(&c, IR_OP_SoftmaxCrossEntropyLoss, 2, (int[]){ zc(&c, "x", IR_DT_F32, 2, x),
        zc(&c, "t", IR_DT_I64, 1, (int64_t[]){ 3 }) });
    run_err(&c, "must have the input's shape without dim 1 (C)");

    start(&c);
    node1(&c, IR_OP_SoftmaxCrossEntropyLoss, 2, (int[]){ zc(&c, "x", IR_DT_F32, 2, x),
        zc(&c, "t", IR_DT_I64, 1, (int64_t[]){ 2 }) });
    set_str(&c, IR_A_reduction, "max");
    run_err(&c, "reduction 'max' must be none, sum or mean");

    start(&c);
    node1(&c, IR_OP_NegativeLogLikelihoodLoss, 3, (int[]){ zc(&c, "x", IR_DT_F32, 2, x),
        zc(&c, "t", IR_DT_I64, 1, (int64_t[]){ 2 }), zc(&c, "w", IR_DT_F32, 1, (int64_t[]){ 2 }) });
    run_err(&c, "the weight input 'w' must be 1-D with 3 elements");
}

static void test_linalg_errors(void **state)
{
    (void)state;
    Case c;
    int64_t m[2] = { 2, 3 };
    start(&c);
    node1(&c, IR_OP_Einsum, 1, (int[]){ zc(&c, "a", IR_DT_F32, 2, m) });
    set_str(&c, IR_A_equation, "i->i");
    run_err(&c, "equation term has 1 labels for an input of rank 2");

    start(&c);
    node1(&c, IR_OP_Einsum, 2, (int[]){ zc(&c, "a", IR_DT_F32, 2, m), zc(&c, "b", IR_DT_F32, 2, m) });
    set_str(&c, IR_A_equation, "ij,jk->ik");
    run_err(&c, "label dims disagree in equation 'ij,jk->ik' (2 vs 3)");

    start(&c);
    node1(&c, IR_OP_Einsum, 1, (int[]){ zc(&c, "a", IR_DT_F32, 2, m) });
    set_str(&c, IR_A_equation, "ij->k");
    run_err(&c, "output label 'k' appears in no input");

    start(&c);
    node1(&c, IR_OP_Einsum, 2, (int[]){ zc(&c, "a", IR_DT_F32, 2, m), zc(&c, "b", IR_DT_F32, 2, m) });
    set_str(&c, IR_A_equation, "ij");
    run_err(&c, "equation has 1 terms for 2 inputs");

    static const char *const bad[][2] = {
        { "i..j->ij", "malformed or repeated '...'" },
        { "i...j...->ij", "malformed or repeated '...'" },
        { "i$->i", "invalid character '$'" },
        { "ij->ii", "output label repeated" },
        { "ij->i-j", "malformed output term" },
        { "ijk", "equation term has 3 labels for an input of rank 2" },
        { "ij,", "equation has more terms than the 1 inputs" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        start(&c);
        node1(&c, IR_OP_Einsum, 1, (int[]){ zc(&c, "a", IR_DT_F32, 2, m) });
        set_str(&c, IR_A_equation, bad[i][0]);
        run_err(&c, bad[i][1]);
    }

    start(&c);
    mk(&c, IR_OP_TopK, 2, (int[]){ zc(&c, "x", IR_DT_F32, 2, m), cst(c.g, "k", IR_DT_I64, 1, (int64_t[]){ 1 },
                                                                       (double[]){ 4 }) }, 2, (int[]){ 1, 1 });
    run_err(&c, "K = 4 is out of range for axis 1 of length 3");

    start(&c);
    node1(&c, IR_OP_CumSum, 2, (int[]){ zc(&c, "x", IR_DT_F32, 2, m),
                                        cst(c.g, "a", IR_DT_I64, 0, NULL, (double[]){ 2 }) });
    run_err(&c, "axis 2 is out of range for rank 2");

    start(&c);
    node1(&c, IR_OP_Det, 1, (int[]){ zc(&c, "x", IR_DT_F32, 2, m) });
    run_err(&c, "must be [*, M, M] (square matrices)");

    start(&c);
    node1(&c, IR_OP_Trilu, 1, (int[]){ zc(&c, "x", IR_DT_F32, 1, (int64_t[]){ 3 }) });
    run_err(&c, "must have rank >= 2");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_attention_4d),
        cmocka_unit_test(test_attention_3d_gqa_causal_past),
        cmocka_unit_test(test_attention_bool_mask_softcap),
        cmocka_unit_test(test_attention_float_mask_nonpad),
        cmocka_unit_test(test_rotary_4d_positions),
        cmocka_unit_test(test_rotary_3d_interleaved_partial),
        cmocka_unit_test(test_rmsnorm),
        cmocka_unit_test(test_groupnorm),
        cmocka_unit_test(test_lrn),
        cmocka_unit_test(test_mvn),
        cmocka_unit_test(test_mvn_axes),
        cmocka_unit_test(test_swish),
        cmocka_unit_test(test_nll_weight_ignore_mean),
        cmocka_unit_test(test_nll_none),
        cmocka_unit_test(test_sce_sum_logprob),
        cmocka_unit_test(test_einsum_matmul),
        cmocka_unit_test(test_einsum_implicit_trace),
        cmocka_unit_test(test_einsum_ellipsis_broadcast),
        cmocka_unit_test(test_einsum_diag_transpose_int),
        cmocka_unit_test(test_einsum_implicit_order),
        cmocka_unit_test(test_trilu_upper_k),
        cmocka_unit_test(test_trilu_lower_neg_k_int),
        cmocka_unit_test(test_cumsum_exclusive_reverse),
        cmocka_unit_test(test_cumsum_axis0),
        cmocka_unit_test(test_topk_ties),
        cmocka_unit_test(test_topk_smallest_int),
        cmocka_unit_test(test_det),        cmocka_unit_test(test_attention_errors),
        cmocka_unit_test(test_rotary_errors),
        cmocka_unit_test(test_norm_errors),
        cmocka_unit_test(test_loss_errors),
        cmocka_unit_test(test_linalg_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
