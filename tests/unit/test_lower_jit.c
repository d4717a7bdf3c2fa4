/* tests/unit/test_lower_jit.c — lowering checked end to end: for many
 * single-operator graphs (every family, several attributes each), the
 * reference interpreter (interp_run) and the JIT-compiled lowered program
 * (low_graph → tgt_cpu_apply_schedule → low_plan_memory → cg_jit) run on the
 * same pseudo-random inputs and must agree: floats within rtol 1e-4 and
 * atol 1e-5 (NaN matches NaN), integers and bools exactly. */
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

/* ------------------------------------------------------------ harness */

/* Value range of the random inputs; indices need in-range values. */
typedef struct Range { double lo, hi; } Range;

static uint64_t rng_next(uint64_t *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return *s >> 11;
}

static void fill(IrArray *a, Range r, uint64_t *seed)
{
    int64_t n = ir_array_numel(a);
    for (int64_t i = 0; i < n; i++) {
        double u = (double)rng_next(seed) / 9007199254740992.0;   /* [0, 1) */
        if (ir_dtype_is_float(a->dtype))
            ir_store_f64(a->dtype, a->data, i, r.lo + u * (r.hi - r.lo));
        else if (a->dtype == IR_DT_BOOL)
            ir_store_i64(a->dtype, a->data, i, u < 0.5);
        else
            ir_store_i64(a->dtype, a->data, i, (int64_t)floor(r.lo + u * (r.hi - r.lo + 1)));
    }
}

static int close_enough(double ref, double got, double rtol, double atol)
{
    if (isnan(ref) || isnan(got))
        return isnan(ref) && isnan(got);
    if (isinf(ref) || isinf(got))
        return ref == got;
    return fabs(ref - got) <= atol + rtol * fabs(ref);
}

static void fail_diag(const char *what, const UtilDiag *d)
{
    char m[1200];
    util_diag_format(d, m, sizeof m);
    fail_msg("%s: %s", what, m);
}

/* Runs graph t both ways; ranges[i] for input i (NULL: floats in [-2, 2],
 * integers in [-5, 5]). */
static void check_ranges(TG *t, const Range *ranges)
{
    IrGraph *g = t->g;
    if (getenv("DLCC_TEST_VERBOSE"))
        printf("case %s\n", g->name);
    if (pass_infer(g, &t->d) != 0)
        fail_diag("infer", &t->d);
    int ni = g->n_inputs, no = g->n_outputs;
    IrArray *in = calloc((size_t)ni + 1, sizeof *in), *ref = calloc((size_t)no + 1, sizeof *ref);
    void **inp = calloc((size_t)ni + 1, sizeof *inp), **outp = calloc((size_t)no + 1, sizeof *outp);
    assert_non_null(in);
    assert_non_null(ref);
    uint64_t seed = 12345;
    for (int i = 0; i < ni; i++) {
        const IrTensor *x = &g->tensors[g->inputs[i]];
        in[i].dtype = x->v.dtype;
        in[i].shape = x->v.shape;
        in[i].data = calloc(ir_array_bytes(&in[i]) + 1, 1);
        Range r = ranges ? ranges[i] : (ir_dtype_is_float(x->v.dtype) ? (Range){ -2, 2 } : (Range){ -5, 5 });
        fill(&in[i], r, &seed);
        inp[i] = in[i].data;
    }
    UtilDiag d;
    util_diag_init(&d);
    if (interp_run(g, in, ref, &d) != 0)
        fail_diag("interp", &d);
    LoopProgram *p = low_graph(g, NULL, &d);
    if (!p)
        fail_diag("lower", &d);
    LowSchedule s = tgt_cpu_schedule(256);
    tgt_cpu_apply_schedule(p, &s);
    if (low_plan_memory(p, g, &d) != 0 || loop_verify(p, &d) != 0)
        fail_diag("plan", &d);
    CgJit *j = NULL;
    CgOptions co = { .opt_level = 1 };         /* compile time dominates these small cases */
    if (cg_jit(p, &co, &j, &d) != 0) {
        UtilBuf b;
        util_buf_init(&b);
        loop_print(p, &b);
        util_buf_put(&b, "", 1);
        print_error("%s\n", b.data);
        util_buf_free(&b);
        fail_diag("jit", &d);
    }
    size_t wsz = (size_t)p->workspace_bytes;
    void *ws = wsz ? aligned_alloc(64, (wsz + 63) / 64 * 64) : NULL;
    for (int o = 0; o < no; o++)
        outp[o] = calloc(ir_array_bytes(&ref[o]) + 1, 1);
    assert_int_equal(cg_jit_entry(j)((const void *const *)inp, outp, ws), 0);
    for (int o = 0; o < no; o++) {
        const IrArray *r = &ref[o];
        int64_t n = ir_array_numel(r);
        for (int64_t i = 0; i < n; i++) {
            if (ir_dtype_is_float(r->dtype)) {
                double a = ir_load_f64(r->dtype, r->data, i), b = ir_load_f64(r->dtype, outp[o], i);
                if (!close_enough(a, b, 1e-4, 1e-5))
                    fail_msg("graph %s output %d element %lld: interpreter %.9g, compiled %.9g", g->name, o,
                             (long long)i, a, b);
            } else {
                int64_t a = ir_load_i64(r->dtype, r->data, i), b = ir_load_i64(r->dtype, outp[o], i);
                if (a != b)
                    fail_msg("graph %s output %d element %lld: interpreter %lld, compiled %lld", g->name, o,
                             (long long)i, (long long)a, (long long)b);
            }
        }
        free(outp[o]);
        interp_array_free(&ref[o]);
    }
    for (int i = 0; i < ni; i++)
        free(in[i].data);
    free(in);
    free(ref);
    free(inp);
    free(outp);
    free(ws);
    cg_jit_free(j);
    loop_program_free(p);
    ir_graph_free(g);
}

static void check(TG *t) { check_ranges(t, NULL); }

/* One-node graphs: x inputs of the given shapes/dtypes, the node, its outputs. */
static int in_f32(TG *t, const char *name, int rank, const int64_t *dims)
{
    return tg_input(t, name, IR_DT_F32, rank, dims);
}

static void outputs(TG *t, int first, int n)
{
    for (int k = 0; k < n; k++)
        tg_output(t, t->g->nodes[t->node].out[k]);
    (void)first;
}

/* ---------------------------------------------------------- elementwise */

static void test_unary(void **state)
{
    (void)state;
    static const IrOp ops[] = {
        IR_OP_Abs, IR_OP_Neg, IR_OP_Reciprocal, IR_OP_Exp, IR_OP_Erf, IR_OP_Tanh, IR_OP_Sigmoid, IR_OP_Relu,
        IR_OP_LeakyRelu, IR_OP_Elu, IR_OP_Selu, IR_OP_Celu, IR_OP_ThresholdedRelu, IR_OP_HardSigmoid,
        IR_OP_HardSwish, IR_OP_Softplus, IR_OP_Softsign, IR_OP_Gelu, IR_OP_Mish, IR_OP_Shrink, IR_OP_Floor,
        IR_OP_Ceil, IR_OP_Round, IR_OP_Sign, IR_OP_Sin, IR_OP_Cos, IR_OP_Tan, IR_OP_Atan, IR_OP_Sinh, IR_OP_Cosh,
        IR_OP_Asinh, IR_OP_Identity, IR_OP_IsNaN, IR_OP_IsInf,
    };
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++) {
        TG t;
        tg_start(&t, ir_op_name(ops[i]));
        int x = in_f32(&t, "x", TG_INTS(3, 17));
        tg_node(&t, ops[i], "op", 1, &x, 1);
        if (ops[i] == IR_OP_LeakyRelu || ops[i] == IR_OP_Elu || ops[i] == IR_OP_Celu)
            tg_float(&t, IR_A_alpha, 0.7);
        outputs(&t, 0, 1);
        check(&t);
    }
    /* functions of a restricted domain */
    static const struct { IrOp op; Range r; } dom[] = {
        { IR_OP_Sqrt, { 0, 4 } }, { IR_OP_Log, { 0.1, 4 } }, { IR_OP_Asin, { -1, 1 } }, { IR_OP_Acos, { -1, 1 } },
        { IR_OP_Acosh, { 1, 4 } }, { IR_OP_Atanh, { -0.9, 0.9 } },
    };
    for (size_t i = 0; i < sizeof dom / sizeof *dom; i++) {
        TG t;
        tg_start(&t, ir_op_name(dom[i].op));
        int x = in_f32(&t, "x", TG_INTS(2, 9));
        tg_node(&t, dom[i].op, "op", 1, &x, 1);
        outputs(&t, 0, 1);
        check_ranges(&t, &dom[i].r);
    }
    /* Gelu tanh form; integer Abs/Neg/Sign/Relu; Not */
    TG t;
    tg_start(&t, "gelu_tanh");
    int x = in_f32(&t, "x", TG_INTS(40));
    tg_node(&t, IR_OP_Gelu, "op", 1, &x, 1);
    tg_str(&t, IR_A_approximate, "tanh");
    outputs(&t, 0, 1);
    check(&t);
    static const IrOp iops[] = { IR_OP_Abs, IR_OP_Neg, IR_OP_Sign, IR_OP_Relu };
    for (size_t i = 0; i < 4; i++) {
        tg_start(&t, "int_unary");
        x = tg_input(&t, "x", IR_DT_I32, TG_INTS(4, 5));
        tg_node(&t, iops[i], "op", 1, &x, 1);
        outputs(&t, 0, 1);
        check(&t);
    }
    tg_start(&t, "not");
    x = tg_input(&t, "x", IR_DT_BOOL, TG_INTS(10));
    tg_node(&t, IR_OP_Not, "op", 1, &x, 1);
    outputs(&t, 0, 1);
    check(&t);
}

static void binary_case(IrOp op, IrDType dt, int ra, const int64_t *da, int rb, const int64_t *db, Range r)
{
    TG t;
    tg_start(&t, ir_op_name(op));
    int in[2] = { tg_input(&t, "a", dt, ra, da), tg_input(&t, "b", dt, rb, db) };
    tg_node(&t, op, "op", 2, in, 1);
    outputs(&t, 0, 1);
    Range rr[2] = { r, r };
    check_ranges(&t, rr);
}

static void test_binary(void **state)
{
    (void)state;
    static const IrOp fops[] = { IR_OP_Add, IR_OP_Sub, IR_OP_Mul, IR_OP_Div, IR_OP_PRelu, IR_OP_Equal, IR_OP_Less,
                                 IR_OP_LessOrEqual, IR_OP_Greater, IR_OP_GreaterOrEqual };
    for (size_t i = 0; i < sizeof fops / sizeof *fops; i++) {
        binary_case(fops[i], IR_DT_F32, TG_INTS(2, 3, 4), TG_INTS(3, 1), (Range){ -3, 3 });   /* broadcast */
        binary_case(fops[i], IR_DT_F32, TG_INTS(4, 8), TG_INTS(4, 8), (Range){ -3, 3 });
    }
    binary_case(IR_OP_Pow, IR_DT_F32, TG_INTS(2, 5), TG_INTS(5), (Range){ 0.5, 2 });
    binary_case(IR_OP_Add, IR_DT_F32, TG_INTS(1, 5), TG_INTS(4, 1), (Range){ -3, 3 });      /* both broadcast */
    binary_case(IR_OP_Add, IR_DT_F64, TG_INTS(3, 4), 0, NULL, (Range){ -3, 3 });          /* scalar */
    static const IrOp iops[] = { IR_OP_Add, IR_OP_Sub, IR_OP_Mul, IR_OP_Div, IR_OP_Mod, IR_OP_Equal,
                                 IR_OP_Less, IR_OP_Greater };
    for (size_t i = 0; i < sizeof iops / sizeof *iops; i++)
        binary_case(iops[i], IR_DT_I32, TG_INTS(3, 4), TG_INTS(4), (Range){ 1, 9 });
    binary_case(IR_OP_Div, IR_DT_I64, TG_INTS(3, 4), TG_INTS(4), (Range){ -9, -1 });        /* truncates */
    binary_case(IR_OP_Mod, IR_DT_I64, TG_INTS(12), TG_INTS(12), (Range){ 1, 7 });
    static const IrOp lops[] = { IR_OP_And, IR_OP_Or, IR_OP_Xor, IR_OP_Equal };
    for (size_t i = 0; i < 4; i++)
        binary_case(lops[i], IR_DT_BOOL, TG_INTS(2, 6), TG_INTS(6), (Range){ 0, 1 });
    /* Mod with fmod, mixed signs; BitShift both ways */
    TG t;
    tg_start(&t, "fmod");
    int in[2] = { in_f32(&t, "a", TG_INTS(16)), in_f32(&t, "b", TG_INTS(16)) };
    tg_node(&t, IR_OP_Mod, "op", 2, in, 1);
    tg_int(&t, IR_A_fmod, 1);
    outputs(&t, 0, 1);
    check(&t);
    for (int left = 0; left < 2; left++) {
        tg_start(&t, "shift");
        int s[2] = { tg_input(&t, "a", IR_DT_U8, TG_INTS(8)), tg_input(&t, "b", IR_DT_U8, TG_INTS(8)) };
        tg_node(&t, IR_OP_BitShift, "op", 2, s, 1);
        tg_str(&t, IR_A_direction, left ? "LEFT" : "RIGHT");
        outputs(&t, 0, 1);
        Range r[2] = { { 0, 255 }, { 0, 9 } };
        check_ranges(&t, r);
    }
}

static void test_variadic_where_clip_cast(void **state)
{
    (void)state;
    static const IrOp vops[] = { IR_OP_Min, IR_OP_Max, IR_OP_Sum, IR_OP_Mean };
    for (size_t i = 0; i < 4; i++) {
        TG t;
        tg_start(&t, ir_op_name(vops[i]));
        int in[3] = { in_f32(&t, "a", TG_INTS(2, 3, 4)), in_f32(&t, "b", TG_INTS(4)), in_f32(&t, "c", TG_INTS(3, 1)) };
        tg_node(&t, vops[i], "op", 3, in, 1);
        outputs(&t, 0, 1);
        check(&t);
    }
    TG t;
    tg_start(&t, "where");
    int w[3] = { tg_input(&t, "c", IR_DT_BOOL, TG_INTS(3, 1)), in_f32(&t, "a", TG_INTS(3, 4)), in_f32(&t, "b", TG_INTS(4)) };
    tg_node(&t, IR_OP_Where, "op", 3, w, 1);
    outputs(&t, 0, 1);
    check(&t);
    /* Clip: constant bounds, runtime bounds, only max */
    tg_start(&t, "clip_const");
    int c[3] = { in_f32(&t, "x", TG_INTS(5, 7)), tg_const(&t, "lo", IR_DT_F32, 0, NULL, (double[]){ -0.5 }),
                 tg_const(&t, "hi", IR_DT_F32, 0, NULL, (double[]){ 1.25 }) };
    tg_node(&t, IR_OP_Clip, "op", 3, c, 1);
    outputs(&t, 0, 1);
    check(&t);
    tg_start(&t, "clip_runtime");
    int cr[3] = { in_f32(&t, "x", TG_INTS(5, 7)), in_f32(&t, "lo", 0, NULL), -1 };
    tg_node(&t, IR_OP_Clip, "op", 3, cr, 1);
    outputs(&t, 0, 1);
    check(&t);
    tg_start(&t, "clip_int");
    int ci[3] = { tg_input(&t, "x", IR_DT_I32, TG_INTS(9)), -1, tg_const(&t, "hi", IR_DT_I32, 0, NULL, (double[]){ 2 }) };
    tg_node(&t, IR_OP_Clip, "op", 3, ci, 1);
    outputs(&t, 0, 1);
    check(&t);
    /* Cast between float32, float16, bfloat16, int32, bool */
    static const IrDType to[] = { IR_DT_F16, IR_DT_BF16, IR_DT_I32, IR_DT_BOOL, IR_DT_F64, IR_DT_I8 };
    for (size_t i = 0; i < sizeof to / sizeof *to; i++) {
        tg_start(&t, "cast");
        int x = in_f32(&t, "x", TG_INTS(3, 8));
        tg_node(&t, IR_OP_Cast, "op", 1, &x, 1);
        tg_int(&t, IR_A_to, ir_dtype_to_onnx(to[i]));
        outputs(&t, 0, 1);
        Range r = { -100, 100 };
        check_ranges(&t, &r);
    }
    tg_start(&t, "cast_from_f16");
    int x16 = tg_input(&t, "x", IR_DT_F16, TG_INTS(16));
    tg_node(&t, IR_OP_Cast, "op", 1, &x16, 1);
    tg_int(&t, IR_A_to, ir_dtype_to_onnx(IR_DT_F32));
    outputs(&t, 0, 1);
    check(&t);
    tg_start(&t, "f16_sigmoid");
    x16 = tg_input(&t, "x", IR_DT_F16, TG_INTS(16));
    tg_node(&t, IR_OP_Sigmoid, "op", 1, &x16, 1);
    outputs(&t, 0, 1);
    check_ranges(&t, &(Range){ -2, 2 });
    tg_start(&t, "dropout");
    int dx = in_f32(&t, "x", TG_INTS(2, 8));
    tg_node(&t, IR_OP_Dropout, "op", 1, &dx, 2);
    outputs(&t, 0, 2);
    check(&t);
}


/* ----------------------------------------------------------- reductions */

static void reduce_case(IrOp op, IrDType dt, int r, const int64_t *dims, int na, const int64_t *axes, int keep,
                        Range rg)
{
    TG t;
    tg_start(&t, ir_op_name(op));
    int in[2] = { tg_input(&t, "x", dt, r, dims), -1 };
    if (na >= 0) {
        double av[IR_MAX_RANK];
        for (int i = 0; i < na; i++)
            av[i] = (double)axes[i];
        in[1] = tg_const(&t, "axes", IR_DT_I64, 1, (int64_t[]){ na }, av);
    }
    tg_node(&t, op, "op", in[1] >= 0 ? 2 : 1, in, 1);
    tg_int(&t, IR_A_keepdims, keep);
    outputs(&t, 0, 1);
    check_ranges(&t, &rg);
}

static void test_reduce(void **state)
{
    (void)state;
    static const IrOp ops[] = { IR_OP_ReduceSum, IR_OP_ReduceMean, IR_OP_ReduceMax, IR_OP_ReduceMin,
                                IR_OP_ReduceProd, IR_OP_ReduceL1, IR_OP_ReduceL2, IR_OP_ReduceSumSquare,
                                IR_OP_ReduceLogSum, IR_OP_ReduceLogSumExp };
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++) {
        Range r = ops[i] == IR_OP_ReduceLogSum ? (Range){ 0.1, 2 } : (Range){ -2, 2 };
        reduce_case(ops[i], IR_DT_F32, TG_INTS(2, 3, 4), TG_INTS(1), 1, r);
        reduce_case(ops[i], IR_DT_F32, TG_INTS(2, 3, 4), TG_INTS(0, -1), 0, r);
        reduce_case(ops[i], IR_DT_F32, TG_INTS(3, 5), -1, NULL, 0, r);          /* all axes */
    }
    reduce_case(IR_OP_ReduceSum, IR_DT_I32, TG_INTS(4, 6), TG_INTS(1), 1, (Range){ -9, 9 });
    reduce_case(IR_OP_ReduceMax, IR_DT_I64, TG_INTS(4, 6), TG_INTS(0), 0, (Range){ -9, 9 });
    reduce_case(IR_OP_ReduceMean, IR_DT_I32, TG_INTS(4, 6), TG_INTS(1), 0, (Range){ -9, 9 });
    /* ArgMax / ArgMin: axes, keepdims, select_last_index (ties from small integers) */
    for (int op = 0; op < 2; op++)
        for (int last = 0; last < 2; last++)
            for (int axis = -1; axis < 2; axis++) {
                TG t;
                tg_start(&t, "arg");
                /* with select_last_index: small integers, so ties occur */
                int x = tg_input(&t, "x", last ? IR_DT_I32 : IR_DT_F32, TG_INTS(3, 4, 5));
                tg_node(&t, op ? IR_OP_ArgMin : IR_OP_ArgMax, "op", 1, &x, 1);
                tg_int(&t, IR_A_axis, axis);
                tg_int(&t, IR_A_keepdims, last);
                tg_int(&t, IR_A_select_last_index, last);
                outputs(&t, 0, 1);
                Range r = { -2, 2 };
                check_ranges(&t, &r);
            }
    static const IrOp sops[] = { IR_OP_Softmax, IR_OP_LogSoftmax, IR_OP_Hardmax };
    for (size_t i = 0; i < 3; i++)
        for (int axis = -1; axis < 2; axis++) {
            TG t;
            tg_start(&t, ir_op_name(sops[i]));
            int x = in_f32(&t, "x", TG_INTS(3, 4, 5));
            tg_node(&t, sops[i], "op", 1, &x, 1);
            tg_int(&t, IR_A_axis, axis);
            outputs(&t, 0, 1);
            check(&t);
        }
}

static void test_norm(void **state)
{
    (void)state;
    TG t;
    tg_start(&t, "bn");
    double sc[3] = { 1, 2, 0.5 }, b[3] = { 0, 1, -1 }, m[3] = { 0.1, -0.2, 0.3 }, v[3] = { 1, 0.5, 2 };
    int in[5] = { in_f32(&t, "x", TG_INTS(2, 3, 4, 5)), tg_const(&t, "s", IR_DT_F32, TG_INTS(3), sc),
                  tg_const(&t, "b", IR_DT_F32, TG_INTS(3), b), tg_const(&t, "m", IR_DT_F32, TG_INTS(3), m),
                  tg_const(&t, "v", IR_DT_F32, TG_INTS(3), v) };
    tg_node(&t, IR_OP_BatchNormalization, "op", 5, in, 1);
    tg_float(&t, IR_A_epsilon, 1e-3);
    outputs(&t, 0, 1);
    check(&t);
    tg_start(&t, "bn_runtime");
    int rin[5] = { in_f32(&t, "x", TG_INTS(2, 3, 4)), in_f32(&t, "s", TG_INTS(3)), in_f32(&t, "b", TG_INTS(3)),
                   in_f32(&t, "m", TG_INTS(3)), in_f32(&t, "v", TG_INTS(3)) };
    tg_node(&t, IR_OP_BatchNormalization, "op", 5, rin, 1);
    outputs(&t, 0, 1);
    Range r5[5] = { { -2, 2 }, { -2, 2 }, { -2, 2 }, { -2, 2 }, { 0.5, 2 } };
    check_ranges(&t, r5);
    tg_start(&t, "in");
    int iin[3] = { in_f32(&t, "x", TG_INTS(2, 3, 4, 5)), tg_const(&t, "s", IR_DT_F32, TG_INTS(3), sc),
                   tg_const(&t, "b", IR_DT_F32, TG_INTS(3), b) };
    tg_node(&t, IR_OP_InstanceNormalization, "op", 3, iin, 1);
    outputs(&t, 0, 1);
    check(&t);
    for (int axis = -2; axis < 2; axis++) {
        if (axis == 0)
            continue;
        tg_start(&t, "ln");
        int lin[3] = { in_f32(&t, "x", TG_INTS(2, 3, 6)), -1, -1 };
        int64_t nd = axis == 1 || axis == -2 ? 2 : 1;
        lin[1] = nd == 2 ? in_f32(&t, "s", TG_INTS(3, 6)) : in_f32(&t, "s", TG_INTS(6));
        lin[2] = in_f32(&t, "b", TG_INTS(6));
        tg_node(&t, IR_OP_LayerNormalization, "op", 3, lin, 3);
        tg_int(&t, IR_A_axis, axis);
        outputs(&t, 0, 3);
        check(&t);
    }
    tg_start(&t, "ln_noscale_bias");
    int l2[2] = { in_f32(&t, "x", TG_INTS(4, 8)), in_f32(&t, "s", TG_INTS(8)) };
    tg_node(&t, IR_OP_LayerNormalization, "op", 2, l2, 1);
    outputs(&t, 0, 1);
    check(&t);
    for (int p = 1; p <= 2; p++)
        for (int axis = -1; axis < 1; axis++) {
            tg_start(&t, "lp");
            int x = in_f32(&t, "x", TG_INTS(3, 5));
            tg_node(&t, IR_OP_LpNormalization, "op", 1, &x, 1);
            tg_int(&t, IR_A_p, p);
            tg_int(&t, IR_A_axis, axis);
            outputs(&t, 0, 1);
            check(&t);
        }
}

/* ------------------------------------------------------------- windows */

typedef struct ConvSpec {
    int64_t n, c, m, group, rank;
    int64_t in[3], k[3];
    int64_t pads[6], strides[3], dil[3];
    const char *auto_pad;
    int bias, transpose;
    int64_t out_pad[3];
} ConvSpec;

static void conv_case(const ConvSpec *s)
{
    TG t;
    tg_start(&t, s->transpose ? "convT" : "conv");
    int64_t xd[5] = { s->n, s->c }, wd[5], r = s->rank;
    for (int i = 0; i < r; i++)
        xd[2 + i] = s->in[i];
    wd[0] = s->transpose ? s->c : s->m;
    wd[1] = s->transpose ? s->m / s->group : s->c / s->group;
    for (int i = 0; i < r; i++)
        wd[2 + i] = s->k[i];
    int in[3] = { in_f32(&t, "x", (int)r + 2, xd), in_f32(&t, "w", (int)r + 2, wd), -1 };
    if (s->bias)
        in[2] = in_f32(&t, "b", TG_INTS(s->m));
    tg_node(&t, s->transpose ? IR_OP_ConvTranspose : IR_OP_Conv, "op", s->bias ? 3 : 2, in, 1);
    tg_int(&t, IR_A_group, s->group);
    if (s->auto_pad)
        tg_str(&t, IR_A_auto_pad, s->auto_pad);
    else
        tg_ints(&t, IR_A_pads, 2 * (int)r, s->pads);
    if (s->strides[0])
        tg_ints(&t, IR_A_strides, (int)r, s->strides);
    if (s->dil[0])
        tg_ints(&t, IR_A_dilations, (int)r, s->dil);
    if (s->out_pad[0])
        tg_ints(&t, IR_A_output_padding, (int)r, s->out_pad);
    outputs(&t, 0, 1);
    check(&t);
}

static void test_conv(void **state)
{
    (void)state;
    const ConvSpec specs[] = {
        { .n = 1, .c = 2, .m = 3, .group = 1, .rank = 2, .in = { 5, 5 }, .k = { 3, 3 }, .pads = { 1, 1, 1, 1 }, .bias = 1 },
        { .n = 2, .c = 4, .m = 4, .group = 2, .rank = 2, .in = { 6, 7 }, .k = { 3, 2 }, .pads = { 0, 1, 2, 0 },
          .strides = { 2, 1 } },
        { .n = 1, .c = 3, .m = 3, .group = 3, .rank = 2, .in = { 7, 7 }, .k = { 3, 3 }, .dil = { 2, 2 },
          .pads = { 2, 2, 2, 2 }, .bias = 1 },                                          /* depthwise, dilated */
        { .n = 1, .c = 2, .m = 2, .group = 1, .rank = 2, .in = { 6, 5 }, .k = { 3, 3 }, .strides = { 2, 2 },
          .auto_pad = "SAME_UPPER" },
        { .n = 1, .c = 2, .m = 2, .group = 1, .rank = 2, .in = { 6, 5 }, .k = { 2, 3 }, .strides = { 2, 2 },
          .auto_pad = "SAME_LOWER" },
        { .n = 1, .c = 2, .m = 2, .group = 1, .rank = 2, .in = { 6, 5 }, .k = { 2, 3 }, .auto_pad = "VALID" },
        { .n = 2, .c = 3, .m = 4, .group = 1, .rank = 1, .in = { 9 }, .k = { 3 }, .pads = { 2, 1 }, .bias = 1 },
        { .n = 1, .c = 2, .m = 2, .group = 1, .rank = 3, .in = { 4, 4, 3 }, .k = { 2, 2, 2 },
          .pads = { 1, 0, 1, 0, 1, 0 } },
    };
    for (size_t i = 0; i < sizeof specs / sizeof *specs; i++)
        conv_case(&specs[i]);
    const ConvSpec tspecs[] = {
        { .n = 1, .c = 2, .m = 3, .group = 1, .rank = 2, .in = { 3, 4 }, .k = { 3, 3 }, .bias = 1, .transpose = 1 },
        { .n = 1, .c = 2, .m = 2, .group = 1, .rank = 2, .in = { 3, 3 }, .k = { 3, 3 }, .strides = { 2, 2 },
          .pads = { 1, 1, 1, 1 }, .transpose = 1, .out_pad = { 1, 1 } },
        { .n = 2, .c = 4, .m = 2, .group = 2, .rank = 2, .in = { 3, 3 }, .k = { 2, 3 }, .strides = { 2, 1 },
          .dil = { 1, 2 }, .pads = { 0, 1, 1, 0 }, .transpose = 1 },
        { .n = 1, .c = 1, .m = 2, .group = 1, .rank = 1, .in = { 5 }, .k = { 3 }, .strides = { 3 },
          .auto_pad = "SAME_UPPER", .transpose = 1 },
    };
    for (size_t i = 0; i < sizeof tspecs / sizeof *tspecs; i++)
        conv_case(&tspecs[i]);
}

static void pool_case(IrOp op, int rank, const int64_t *xd, const int64_t *k, const int64_t *pads,
                      const int64_t *strides, const int64_t *dil, int ceil, int cip, const char *auto_pad, int n_out)
{
    TG t;
    tg_start(&t, ir_op_name(op));
    int x = in_f32(&t, "x", rank + 2, xd);
    tg_node(&t, op, "op", 1, &x, n_out);
    tg_ints(&t, IR_A_kernel_shape, rank, k);
    if (auto_pad)
        tg_str(&t, IR_A_auto_pad, auto_pad);
    else if (pads)
        tg_ints(&t, IR_A_pads, 2 * rank, pads);
    if (strides)
        tg_ints(&t, IR_A_strides, rank, strides);
    if (dil)
        tg_ints(&t, IR_A_dilations, rank, dil);
    tg_int(&t, IR_A_ceil_mode, ceil);
    if (op == IR_OP_AveragePool)
        tg_int(&t, IR_A_count_include_pad, cip);
    outputs(&t, 0, n_out);
    check(&t);
}

static void test_pool(void **state)
{
    (void)state;
    static const IrOp ops[] = { IR_OP_MaxPool, IR_OP_AveragePool, IR_OP_LpPool };
    for (size_t i = 0; i < 3; i++) {
        IrOp op = ops[i];
        pool_case(op, 2, (int64_t[]){ 1, 2, 6, 6 }, (int64_t[]){ 2, 2 }, NULL, (int64_t[]){ 2, 2 }, NULL, 0, 0, NULL, 1);
        pool_case(op, 2, (int64_t[]){ 2, 3, 7, 5 }, (int64_t[]){ 3, 3 }, (int64_t[]){ 1, 1, 1, 1 }, (int64_t[]){ 2, 2 },
                  NULL, 1, 0, NULL, 1);
        pool_case(op, 2, (int64_t[]){ 1, 2, 7, 5 }, (int64_t[]){ 3, 2 }, (int64_t[]){ 1, 0, 2, 1 }, (int64_t[]){ 2, 1 },
                  NULL, 0, 1, NULL, 1);
        pool_case(op, 1, (int64_t[]){ 1, 2, 9 }, (int64_t[]){ 3 }, NULL, NULL, NULL, 0, 0, "SAME_UPPER", 1);
        pool_case(op, 2, (int64_t[]){ 1, 1, 8, 8 }, (int64_t[]){ 2, 2 }, (int64_t[]){ 1, 1, 1, 1 }, NULL,
                  (int64_t[]){ 2, 2 }, 1, 1, NULL, 1);
    }
    pool_case(IR_OP_MaxPool, 2, (int64_t[]){ 2, 2, 5, 5 }, (int64_t[]){ 3, 3 }, (int64_t[]){ 1, 1, 1, 1 },
              (int64_t[]){ 2, 2 }, NULL, 0, 0, NULL, 2);                                /* with Indices */
    pool_case(IR_OP_AveragePool, 2, (int64_t[]){ 1, 2, 7, 7 }, (int64_t[]){ 3, 3 }, (int64_t[]){ 1, 1, 1, 1 },
              (int64_t[]){ 2, 2 }, NULL, 1, 1, NULL, 1);                                /* ceil, include pad */
    static const IrOp gops[] = { IR_OP_GlobalAveragePool, IR_OP_GlobalMaxPool, IR_OP_GlobalLpPool };
    for (size_t i = 0; i < 3; i++) {
        TG t;
        tg_start(&t, ir_op_name(gops[i]));
        int x = in_f32(&t, "x", TG_INTS(2, 3, 4, 5));
        tg_node(&t, gops[i], "op", 1, &x, 1);
        outputs(&t, 0, 1);
        check(&t);
    }
}

/* -------------------------------------------------------------- matmul */

static void matmul_case(int ra, const int64_t *da, int rb, const int64_t *db)
{
    TG t;
    tg_start(&t, "matmul");
    int in[2] = { in_f32(&t, "a", ra, da), in_f32(&t, "b", rb, db) };
    tg_node(&t, IR_OP_MatMul, "op", 2, in, 1);
    outputs(&t, 0, 1);
    check(&t);
}

static void test_matmul(void **state)
{
    (void)state;
    matmul_case(TG_INTS(3, 4), TG_INTS(4, 5));
    matmul_case(TG_INTS(2, 3, 4), TG_INTS(4, 5));
    matmul_case(TG_INTS(2, 1, 3, 4), TG_INTS(3, 4, 2));
    matmul_case(TG_INTS(4), TG_INTS(2, 4, 3));
    matmul_case(TG_INTS(2, 3, 4), TG_INTS(4));
    matmul_case(TG_INTS(4), TG_INTS(4));
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++)
            for (int c = 0; c < 3; c++) {
                TG t;
                tg_start(&t, "gemm");
                int in[3] = { ta ? in_f32(&t, "a", TG_INTS(4, 3)) : in_f32(&t, "a", TG_INTS(3, 4)),
                              tb ? in_f32(&t, "b", TG_INTS(5, 4)) : in_f32(&t, "b", TG_INTS(4, 5)),
                              c == 0 ? -1 : c == 1 ? in_f32(&t, "c", TG_INTS(5)) : in_f32(&t, "c", TG_INTS(3, 1)) };
                tg_node(&t, IR_OP_Gemm, "op", c ? 3 : 2, in, 1);
                tg_int(&t, IR_A_transA, ta);
                tg_int(&t, IR_A_transB, tb);
                tg_float(&t, IR_A_alpha, 0.5);
                tg_float(&t, IR_A_beta, c == 2 ? 2.0 : 1.0);
                outputs(&t, 0, 1);
                check(&t);
            }
}

/* ------------------------------------------------------- data movement */

static void test_data(void **state)
{
    (void)state;
    TG t;
    int x;
    tg_start(&t, "transpose");
    x = in_f32(&t, "x", TG_INTS(2, 3, 4));
    tg_node(&t, IR_OP_Transpose, "op", 1, &x, 1);
    tg_ints(&t, IR_A_perm, TG_INTS(1, 2, 0));
    outputs(&t, 0, 1);
    check(&t);
    tg_start(&t, "transpose_default");
    x = tg_input(&t, "x", IR_DT_I64, TG_INTS(2, 3, 4));
    tg_node(&t, IR_OP_Transpose, "op", 1, &x, 1);
    outputs(&t, 0, 1);
    check(&t);
    for (int axis = -1; axis < 2; axis++) {
        tg_start(&t, "concat");
        int64_t a = axis == 0 ? 1 : 3, b = axis == 0 ? 2 : 3, c1 = axis == -1 ? 1 : 4, c2 = axis == -1 ? 2 : 4;
        int in[3] = { in_f32(&t, "a", TG_INTS(axis == 0 ? 1 : 2, axis == 1 ? 1 : a, c1)),
                      in_f32(&t, "b", TG_INTS(axis == 0 ? 2 : 2, axis == 1 ? 2 : a, c2)),
                      in_f32(&t, "c", TG_INTS(axis == 0 ? 3 : 2, axis == 1 ? 3 : a, c1)) };
        (void)b;
        tg_node(&t, IR_OP_Concat, "op", 3, in, 1);
        tg_int(&t, IR_A_axis, axis);
        outputs(&t, 0, 1);
        check(&t);
    }
    tg_start(&t, "split");
    int sin[2] = { in_f32(&t, "x", TG_INTS(2, 7)), tg_const(&t, "s", IR_DT_I64, TG_INTS(3), (double[]){ 2, 4, 1 }) };
    tg_node(&t, IR_OP_Split, "op", 2, sin, 3);
    tg_int(&t, IR_A_axis, -1);
    outputs(&t, 0, 3);
    check(&t);
    tg_start(&t, "split_even");
    x = in_f32(&t, "x", TG_INTS(6, 2));
    tg_node(&t, IR_OP_Split, "op", 1, &x, 2);
    outputs(&t, 0, 2);
    check(&t);
    /* Slice: negative starts / steps, axes subset */
    tg_start(&t, "slice");
    int sl[5] = { in_f32(&t, "x", TG_INTS(5, 6, 7)),
                  tg_const(&t, "st", IR_DT_I64, TG_INTS(2), (double[]){ -1, 1 }),
                  tg_const(&t, "en", IR_DT_I64, TG_INTS(2), (double[]){ -100, 6 }),
                  tg_const(&t, "ax", IR_DT_I64, TG_INTS(2), (double[]){ 0, -1 }),
                  tg_const(&t, "sp", IR_DT_I64, TG_INTS(2), (double[]){ -2, 2 }) };
    tg_node(&t, IR_OP_Slice, "op", 5, sl, 1);
    outputs(&t, 0, 1);
    check(&t);
    /* Gather: runtime indices (negative ones too), axes 0 and 1, scalar index */
    for (int axis = 0; axis < 2; axis++) {
        tg_start(&t, "gather");
        int g[2] = { in_f32(&t, "x", TG_INTS(4, 5, 3)), tg_input(&t, "i", IR_DT_I64, TG_INTS(2, 3)) };
        tg_node(&t, IR_OP_Gather, "op", 2, g, 1);
        tg_int(&t, IR_A_axis, axis);
        outputs(&t, 0, 1);
        Range r[2] = { { -2, 2 }, { -4, 3 } };
        check_ranges(&t, r);
    }
    tg_start(&t, "gather_scalar");
    int gs[2] = { in_f32(&t, "x", TG_INTS(4, 5)), tg_input(&t, "i", IR_DT_I32, 0, NULL) };
    tg_node(&t, IR_OP_Gather, "op", 2, gs, 1);
    tg_int(&t, IR_A_axis, 1);
    outputs(&t, 0, 1);
    check_ranges(&t, (Range[]){ { -2, 2 }, { -5, 4 } });
    tg_start(&t, "gatherelements");
    int ge[2] = { in_f32(&t, "x", TG_INTS(3, 4)), tg_input(&t, "i", IR_DT_I64, TG_INTS(3, 2)) };
    tg_node(&t, IR_OP_GatherElements, "op", 2, ge, 1);
    tg_int(&t, IR_A_axis, 1);
    outputs(&t, 0, 1);
    check_ranges(&t, (Range[]){ { -2, 2 }, { -4, 3 } });
    for (int b = 0; b < 2; b++) {
        tg_start(&t, "gathernd");
        int gn[2] = { in_f32(&t, "x", TG_INTS(2, 3, 4)), tg_input(&t, "i", IR_DT_I64, TG_INTS(2, 1)) };
        tg_node(&t, IR_OP_GatherND, "op", 2, gn, 1);
        tg_int(&t, IR_A_batch_dims, b);
        outputs(&t, 0, 1);
        check_ranges(&t, (Range[]){ { -2, 2 }, { 0, 1 } });
    }
    /* Pad: every mode, negative pads, runtime fill value, axes */
    static const char *const modes[] = { "constant", "reflect", "edge", "wrap" };
    for (int m = 0; m < 4; m++) {
        tg_start(&t, "pad");
        int pd[3] = { in_f32(&t, "x", TG_INTS(3, 4)),
                      tg_const(&t, "p", IR_DT_I64, TG_INTS(4), (double[]){ 2, 1, 1, 3 }),
                      tg_const(&t, "v", IR_DT_F32, 0, NULL, (double[]){ 0.25 }) };
        tg_node(&t, IR_OP_Pad, "op", 3, pd, 1);
        tg_str(&t, IR_A_mode, modes[m]);
        outputs(&t, 0, 1);
        check(&t);
    }
    tg_start(&t, "pad_neg_axes");
    int pn[4] = { in_f32(&t, "x", TG_INTS(3, 4, 5)), tg_const(&t, "p", IR_DT_I64, TG_INTS(2), (double[]){ -1, 2 }),
                  in_f32(&t, "v", 0, NULL), tg_const(&t, "a", IR_DT_I64, TG_INTS(1), (double[]){ -1 }) };
    tg_node(&t, IR_OP_Pad, "op", 4, pn, 1);
    outputs(&t, 0, 1);
    check(&t);
    tg_start(&t, "expand");
    int ex[2] = { in_f32(&t, "x", TG_INTS(3, 1)), tg_const(&t, "s", IR_DT_I64, TG_INTS(3), (double[]){ 2, 1, 4 }) };
    tg_node(&t, IR_OP_Expand, "op", 2, ex, 1);
    outputs(&t, 0, 1);
    check(&t);
    tg_start(&t, "tile");
    int ti[2] = { in_f32(&t, "x", TG_INTS(2, 3)), tg_const(&t, "r", IR_DT_I64, TG_INTS(2), (double[]){ 3, 2 }) };
    tg_node(&t, IR_OP_Tile, "op", 2, ti, 1);
    outputs(&t, 0, 1);
    check(&t);
    for (int k = 0; k < 3; k++) {
        tg_start(&t, "d2s");
        x = in_f32(&t, "x", TG_INTS(2, k == 2 ? 2 : 8, 3, k == 2 ? 4 : 2));
        tg_node(&t, k == 2 ? IR_OP_SpaceToDepth : IR_OP_DepthToSpace, "op", 1, &x, 1);
        tg_int(&t, IR_A_blocksize, 2);
        if (k == 1)
            tg_str(&t, IR_A_mode, "CRD");
        outputs(&t, 0, 1);
        if (k == 2) {
            /* SpaceToDepth needs spatial dims divisible by the block: 3 is not */
            ir_graph_free(t.g);
            tg_start(&t, "s2d");
            x = in_f32(&t, "x", TG_INTS(1, 2, 4, 6));
            tg_node(&t, IR_OP_SpaceToDepth, "op", 1, &x, 1);
            tg_int(&t, IR_A_blocksize, 2);
            outputs(&t, 0, 1);
        }
        check(&t);
    }
    /* ConstantOfShape too large to be folded at compile time (> 65536 elements) */
    tg_start(&t, "constantofshape");
    int cs = tg_const(&t, "shape", IR_DT_I64, TG_INTS(2), (double[]){ 300, 301 });
    IrArray *val = ir_alloc(t.g, sizeof *val);
    val->dtype = IR_DT_I32;
    val->shape.rank = 1;
    val->shape.dims[0] = 1;
    val->data = ir_alloc(t.g, 4);
    ir_store_i64(IR_DT_I32, val->data, 0, -3);
    int y = tg_node(&t, IR_OP_ConstantOfShape, "op", 1, &cs, 1);
    tg_tensor_attr(&t, IR_A_value, val);
    int z = tg_node(&t, IR_OP_Add, "add", 2, (int[]){ y, tg_input(&t, "x", IR_DT_I32, TG_INTS(301)) }, 1);
    tg_output(&t, z);
    check(&t);
}

static void resize_case(const char *mode, const char *coord, const char *nearest, int use_sizes, int excl, int aa)
{
    TG t;
    tg_start(&t, "resize");
    int in[4] = { in_f32(&t, "x", TG_INTS(1, 2, 4, 5)), -1, -1, -1 };
    if (use_sizes)
        in[3] = tg_const(&t, "sz", IR_DT_I64, TG_INTS(4), (double[]){ 1, 2, 7, 3 });
    else
        in[2] = tg_const(&t, "sc", IR_DT_F32, TG_INTS(4), (double[]){ 1, 1, 1.5, 0.6 });
    if (!strcmp(coord, "tf_crop_and_resize"))
        in[1] = tg_const(&t, "roi", IR_DT_F32, TG_INTS(8), (double[]){ 0, 0, 0.1, -0.2, 1, 1, 0.8, 1.1 });
    tg_node(&t, IR_OP_Resize, "op", 4, in, 1);
    tg_str(&t, IR_A_mode, mode);
    tg_str(&t, IR_A_coordinate_transformation_mode, coord);
    if (nearest)
        tg_str(&t, IR_A_nearest_mode, nearest);
    tg_int(&t, IR_A_exclude_outside, excl);
    tg_int(&t, IR_A_antialias, aa);
    tg_float(&t, IR_A_extrapolation_value, -7);
    outputs(&t, 0, 1);
    check(&t);
}

static void test_resize(void **state)
{
    (void)state;
    static const char *const coords[] = { "half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel",
                                          "half_pixel_symmetric", "tf_crop_and_resize" };
    static const char *const nearest[] = { "round_prefer_floor", "round_prefer_ceil", "floor", "ceil" };
    for (int c = 0; c < 6; c++)
        for (int s = 0; s < 2; s++) {
            resize_case("nearest", coords[c], nearest[(c + s) % 4], s, 0, 0);
            resize_case("linear", coords[c], NULL, s, 0, 0);
            resize_case("cubic", coords[c], NULL, s, s, 0);
            resize_case("linear", coords[c], NULL, s, 0, 1);
            resize_case("cubic", coords[c], NULL, s, 0, 1);
        }
}

/* Views (aliases), an output that is also an input, an output listed
 * twice, a constant output, and in-place planning inside a chain. */
static void test_graph_plumbing(void **state)
{
    (void)state;
    TG t;
    tg_start(&t, "views");
    int x = in_f32(&t, "x", TG_INTS(2, 3, 4));
    int r = tg_node(&t, IR_OP_Relu, "r", 1, &x, 1);
    int sh[2] = { r, tg_const(&t, "shape", IR_DT_I64, TG_INTS(2), (double[]){ 6, -1 }) };
    int v = tg_node(&t, IR_OP_Reshape, "reshape", 2, sh, 1);
    int e = tg_node(&t, IR_OP_Exp, "e", 1, &v, 1);
    int f = tg_node(&t, IR_OP_Flatten, "flat", 1, &e, 1);   /* a view that is a graph output: copied */
    int n = tg_node(&t, IR_OP_Neg, "n", 1, &e, 1);
    int m[2] = { n, x };
    int s = tg_node(&t, IR_OP_Sub, "s", 2, (int[]){ n, tg_node(&t, IR_OP_Identity, "id", 1, &e, 1) }, 1);
    (void)m;
    tg_output(&t, f);
    tg_output(&t, s);
    tg_output(&t, s);                      /* listed twice */
    tg_output(&t, x);                      /* an input */
    check(&t);
}

/* -------------------------------------------------------- quantization */

static void quant_case(int dq, IrDType xt, IrDType qt, int per, int zp, int64_t axis, int64_t block)
{
    TG t;
    tg_start(&t, dq ? "dequantize" : "quantize");
    int x = tg_input(&t, "x", dq ? qt : xt, TG_INTS(3, 4, 6));
    int64_t sd[3] = { 3, 4, 6 };
    int a = (int)(axis < 0 ? axis + 3 : axis), sr = per == 0 ? 0 : per == 1 ? 1 : 3;
    if (per == 1)
        sd[0] = sd[a];
    if (per == 2)
        sd[a] = (sd[a] + block - 1) / block;
    double sv[72], zv[72];
    for (int i = 0; i < 72; i++) {
        sv[i] = 0.05 + 0.01 * (i % 7);
        zv[i] = (double)(i % 5) * (qt == IR_DT_U8 ? 20 : 7) - (qt == IR_DT_U8 ? 0 : 10);
    }
    int in[3] = { x, tg_const(&t, "s", dq ? IR_DT_F32 : xt, sr, sd, sv), zp ? tg_const(&t, "z", qt, sr, sd, zv) : -1 };
    tg_node(&t, dq ? IR_OP_DequantizeLinear : IR_OP_QuantizeLinear, "op", zp ? 3 : 2, in, 1);
    tg_int(&t, IR_A_axis, axis);
    if (block)
        tg_int(&t, IR_A_block_size, block);
    if (!dq && !zp)
        tg_int(&t, IR_A_output_dtype, ir_dtype_to_onnx(qt));
    outputs(&t, 0, 1);
    Range r = dq ? (qt == IR_DT_U8 ? (Range){ 0, 255 } : (Range){ -128, 127 }) : (Range){ -12, 12 };
    check_ranges(&t, &r);
}

static void test_quant(void **state)
{
    (void)state;
    for (int dq = 0; dq < 2; dq++)
        for (int per = 0; per < 3; per++) {
            quant_case(dq, IR_DT_F32, IR_DT_U8, per, 1, 1, per == 2 ? 4 : 0);
            quant_case(dq, IR_DT_F32, IR_DT_I8, per, 1, -1, per == 2 ? 4 : 0);
            quant_case(dq, IR_DT_F32, IR_DT_I8, per, 0, 0, per == 2 ? 2 : 0);
        }
    quant_case(0, IR_DT_F16, IR_DT_U8, 1, 1, 1, 0);         /* float16 precision */
    quant_case(0, IR_DT_F32, IR_DT_I16, 0, 1, 1, 0);
    static const Range dr[3] = { { -3, 5 }, { 1, 4 }, { -6, -2 } };   /* mixed, all positive, all negative */
    for (int i = 0; i < 3; i++) {
        TG t;
        tg_start(&t, "dynquant");
        int x = in_f32(&t, "x", TG_INTS(4, 7));
        tg_node(&t, IR_OP_DynamicQuantizeLinear, "op", 1, &x, 3);
        outputs(&t, 0, 3);
        check_ranges(&t, &dr[i]);
    }
}

static int qc(TG *t, const char *name, IrDType dt, int rank, const int64_t *dims, double base)
{
    double v[16];
    for (int i = 0; i < 16; i++)
        v[i] = base + (double)(i % 4) * (ir_dtype_is_float(dt) ? 0.01 : 3);
    return tg_const(t, name, dt, rank, dims, v);
}

static void test_quant_products(void **state)
{
    (void)state;
    Range u8 = { 0, 255 };
    TG t;
    /* MatMulInteger: batched a, per-column b zero point */
    tg_start(&t, "matmulinteger");
    int mi[4] = { tg_input(&t, "a", IR_DT_U8, TG_INTS(2, 3, 4)), tg_input(&t, "b", IR_DT_U8, TG_INTS(4, 5)),
                  qc(&t, "az", IR_DT_U8, 0, NULL, 100), qc(&t, "bz", IR_DT_U8, TG_INTS(5), 120) };
    tg_node(&t, IR_OP_MatMulInteger, "op", 4, mi, 1);
    outputs(&t, 0, 1);
    check_ranges(&t, (Range[]){ u8, u8 });
    tg_start(&t, "matmulinteger_rowzp");
    int mr[3] = { tg_input(&t, "a", IR_DT_I8, TG_INTS(3, 4)), tg_input(&t, "b", IR_DT_I8, TG_INTS(4, 2)),
                  qc(&t, "az", IR_DT_I8, TG_INTS(3), -5) };
    tg_node(&t, IR_OP_MatMulInteger, "op", 3, mr, 1);
    outputs(&t, 0, 1);
    check_ranges(&t, (Range[]){ { -128, 127 }, { -128, 127 } });
    /* QLinearMatMul */
    tg_start(&t, "qlinearmatmul");
    int qm[8] = { tg_input(&t, "a", IR_DT_U8, TG_INTS(3, 4)), qc(&t, "as", IR_DT_F32, 0, NULL, 0.02),
                  qc(&t, "az", IR_DT_U8, 0, NULL, 128), tg_input(&t, "b", IR_DT_U8, TG_INTS(4, 5)),
                  qc(&t, "bs", IR_DT_F32, TG_INTS(5), 0.03), qc(&t, "bz", IR_DT_U8, TG_INTS(5), 100),
                  qc(&t, "ys", IR_DT_F32, 0, NULL, 0.5), qc(&t, "yz", IR_DT_U8, 0, NULL, 90) };
    tg_node(&t, IR_OP_QLinearMatMul, "op", 8, qm, 1);
    outputs(&t, 0, 1);
    check_ranges(&t, (Range[]){ u8, u8 });
    /* ConvInteger with padding and per-channel weight zero point */
    tg_start(&t, "convinteger");
    int ci[4] = { tg_input(&t, "x", IR_DT_U8, TG_INTS(1, 2, 5, 5)), tg_input(&t, "w", IR_DT_U8, TG_INTS(3, 2, 3, 3)),
                  qc(&t, "xz", IR_DT_U8, 0, NULL, 7), qc(&t, "wz", IR_DT_U8, TG_INTS(3), 11) };
    tg_node(&t, IR_OP_ConvInteger, "op", 4, ci, 1);
    tg_ints(&t, IR_A_pads, TG_INTS(1, 0, 1, 2));
    tg_ints(&t, IR_A_strides, TG_INTS(2, 1));
    outputs(&t, 0, 1);
    check_ranges(&t, (Range[]){ u8, u8 });
    /* QLinearConv with bias, per-channel weight scale, groups */
    tg_start(&t, "qlinearconv");
    int ql[9] = { tg_input(&t, "x", IR_DT_U8, TG_INTS(1, 4, 6, 6)), qc(&t, "xs", IR_DT_F32, 0, NULL, 0.02),
                  qc(&t, "xz", IR_DT_U8, 0, NULL, 128), tg_input(&t, "w", IR_DT_I8, TG_INTS(4, 2, 3, 3)),
                  qc(&t, "ws", IR_DT_F32, TG_INTS(4), 0.01), qc(&t, "wz", IR_DT_I8, TG_INTS(4), 0),
                  qc(&t, "ys", IR_DT_F32, 0, NULL, 0.05), qc(&t, "yz", IR_DT_U8, 0, NULL, 100),
                  qc(&t, "b", IR_DT_I32, TG_INTS(4), -300) };
    tg_node(&t, IR_OP_QLinearConv, "op", 9, ql, 1);
    tg_ints(&t, IR_A_pads, TG_INTS(1, 1, 1, 1));
    tg_int(&t, IR_A_group, 2);
    outputs(&t, 0, 1);
    check_ranges(&t, (Range[]){ u8, { -128, 127 } });
}

/* ------------------------------------------------------------ recurrent */

typedef struct RnnSpec {
    IrOp op;
    const char *dir;
    int layout, bias, seq_lens, init, peep, clip, lbr, acts, forget;
} RnnSpec;

static void rnn_case(const RnnSpec *s)
{
    TG t;
    tg_start(&t, ir_op_name(s->op));
    int64_t S = 4, B = 3, I = 3, H = 5, D = !strcmp(s->dir, "bidirectional") ? 2 : 1;
    int64_t G = s->op == IR_OP_LSTM ? 4 : s->op == IR_OP_GRU ? 3 : 1;
    int in[8] = { -1, -1, -1, -1, -1, -1, -1, -1 }, n_in = 3;
    in[0] = s->layout ? in_f32(&t, "x", TG_INTS(B, S, I)) : in_f32(&t, "x", TG_INTS(S, B, I));
    in[1] = in_f32(&t, "w", TG_INTS(D, G * H, I));
    in[2] = in_f32(&t, "r", TG_INTS(D, G * H, H));
    if (s->bias)
        in[3] = in_f32(&t, "b", TG_INTS(D, 2 * G * H)), n_in = 4;
    if (s->seq_lens)
        in[4] = tg_const(&t, "sl", IR_DT_I32, TG_INTS(B), (double[]){ 4, 0, 2 }), n_in = 5;
    if (s->init) {
        in[5] = s->layout ? in_f32(&t, "h0", TG_INTS(B, D, H)) : in_f32(&t, "h0", TG_INTS(D, B, H));
        n_in = 6;
        if (s->op == IR_OP_LSTM) {
            in[6] = s->layout ? in_f32(&t, "c0", TG_INTS(B, D, H)) : in_f32(&t, "c0", TG_INTS(D, B, H));
            n_in = 7;
        }
    }
    if (s->peep)
        in[7] = in_f32(&t, "p", TG_INTS(D, 3 * H)), n_in = 8;
    int n_out = s->op == IR_OP_LSTM ? 3 : 2;
    tg_node(&t, s->op, "op", n_in, in, n_out);
    tg_int(&t, IR_A_hidden_size, H);
    tg_str(&t, IR_A_direction, s->dir);
    tg_int(&t, IR_A_layout, s->layout);
    if (s->clip)
        tg_float(&t, IR_A_clip, 0.8);
    if (s->lbr)
        tg_int(&t, IR_A_linear_before_reset, 1);
    if (s->forget)
        tg_int(&t, IR_A_input_forget, 1);
    if (s->acts) {
        static const char *const a3[] = { "HardSigmoid", "LeakyRelu", "Softsign", "Relu", "Elu", "ScaledTanh" };
        IrAttr a = { .key = IR_A_activations, .kind = IR_AK_STRINGS, .n = (int)(D * (s->op == IR_OP_LSTM ? 3 : s->op == IR_OP_GRU ? 2 : 1)),
                     .v.strings = (const char **)a3 };
        ir_set_attr(t.g, t.node, &a);
    }
    outputs(&t, 0, n_out);
    Range r[8] = { { -1, 1 }, { -0.5, 0.5 }, { -0.5, 0.5 }, { -0.5, 0.5 }, { -1, 1 }, { -1, 1 }, { -1, 1 }, { -1, 1 } };
    Range rr[8];
    for (int i = 0, j = 0; i < 8; i++)
        if (in[i] >= 0 && t.g->tensors[in[i]].kind == IR_TK_INPUT)
            rr[j++] = r[i];
    check_ranges(&t, rr);
}

static void test_rnn(void **state)
{
    (void)state;
    static const IrOp ops[] = { IR_OP_RNN, IR_OP_GRU, IR_OP_LSTM };
    for (int i = 0; i < 3; i++) {
        RnnSpec a = { .op = ops[i], .dir = "forward" };
        rnn_case(&a);
        RnnSpec b = { .op = ops[i], .dir = "reverse", .bias = 1, .init = 1, .seq_lens = 1 };
        rnn_case(&b);
        RnnSpec c = { .op = ops[i], .dir = "bidirectional", .bias = 1, .layout = 1, .clip = 1,
                      .lbr = ops[i] == IR_OP_GRU, .peep = ops[i] == IR_OP_LSTM, .seq_lens = 1, .init = 1 };
        rnn_case(&c);
        RnnSpec d = { .op = ops[i], .dir = "bidirectional", .acts = 1, .forget = ops[i] == IR_OP_LSTM };
        rnn_case(&d);
    }
}

static void test_roialign(void **state)
{
    (void)state;
    for (int mode = 0; mode < 2; mode++)
        for (int half = 0; half < 2; half++)
            for (int sr = 0; sr < 3; sr += 2) {
                TG t;
                tg_start(&t, "roialign");
                double rois[5 * 4] = { 0, 0, 7, 7, 1.5, 2.2, 5.1, 6.3, -2, -1, 3, 2.5, 6, 6, 9, 12, 3, 1, 3.2, 1.1 };
                int in[3] = { in_f32(&t, "x", TG_INTS(2, 3, 8, 9)), tg_const(&t, "rois", IR_DT_F32, TG_INTS(5, 4), rois),
                              tg_input(&t, "bi", IR_DT_I64, TG_INTS(5)) };
                tg_node(&t, IR_OP_RoiAlign, "op", 3, in, 1);
                tg_str(&t, IR_A_mode, mode ? "max" : "avg");
                tg_str(&t, IR_A_coordinate_transformation_mode, half ? "half_pixel" : "output_half_pixel");
                tg_int(&t, IR_A_output_height, 3);
                tg_int(&t, IR_A_output_width, 2);
                tg_int(&t, IR_A_sampling_ratio, sr);
                tg_float(&t, IR_A_spatial_scale, 0.9);
                outputs(&t, 0, 1);
                check_ranges(&t, (Range[]){ { -2, 2 }, { 0, 1 } });
            }
    /* an empty plane (width 0, a fuzzer's find): every sample is outside it, 0 */
    TG t;
    tg_start(&t, "roialign_empty");
    double rois[2 * 4] = { 0, 0, 7, 7, 1.5, 2.2, 5.1, 6.3 };
    int in[3] = { in_f32(&t, "x", TG_INTS(1, 2, 6, 0)), tg_const(&t, "rois", IR_DT_F32, TG_INTS(2, 4), rois),
                  tg_input(&t, "bi", IR_DT_I64, TG_INTS(2)) };
    tg_node(&t, IR_OP_RoiAlign, "op", 3, in, 1);
    tg_int(&t, IR_A_output_height, 2);
    tg_int(&t, IR_A_output_width, 3);
    tg_int(&t, IR_A_sampling_ratio, 1);
    outputs(&t, 0, 1);
    check_ranges(&t, (Range[]){ { -2, 2 }, { 0, 0 } });
}

static void test_deformconv(void **state)
{
    (void)state;
    for (int v = 0; v < 4; v++) {
        TG t;
        tg_start(&t, "deformconv");
        /* v: 0 plain; 1 bias + mask + pads + stride; 2 groups + offset groups; 3 1-D */
        int in[5] = { -1, -1, -1, -1, -1 }, n_in = 3;
        if (v == 3) {
            in[0] = in_f32(&t, "x", TG_INTS(2, 2, 7));
            in[1] = in_f32(&t, "w", TG_INTS(3, 2, 3));
            in[2] = in_f32(&t, "off", TG_INTS(2, 3, 5));
        } else if (v == 2) {
            in[0] = in_f32(&t, "x", TG_INTS(1, 4, 5, 6));
            in[1] = in_f32(&t, "w", TG_INTS(4, 2, 2, 2));
            in[2] = in_f32(&t, "off", TG_INTS(1, 2 * 4 * 2, 4, 5));
        } else {
            in[0] = in_f32(&t, "x", TG_INTS(1, 2, 5, 5));
            in[1] = in_f32(&t, "w", TG_INTS(3, 2, 3, 3));
            in[2] = v ? in_f32(&t, "off", TG_INTS(1, 18, 3, 3)) : in_f32(&t, "off", TG_INTS(1, 18, 3, 3));
        }
        if (v == 1) {
            in[3] = in_f32(&t, "b", TG_INTS(3));
            in[4] = in_f32(&t, "mask", TG_INTS(1, 9, 3, 3));
            n_in = 5;
        }
        tg_node(&t, IR_OP_DeformConv, "op", n_in, in, 1);
        if (v == 1) {
            tg_ints(&t, IR_A_pads, TG_INTS(1, 1, 1, 1));
            tg_ints(&t, IR_A_strides, TG_INTS(2, 2));
        }
        if (v == 2) {
            tg_int(&t, IR_A_group, 2);
            tg_int(&t, IR_A_offset_group, 2);
        }
        outputs(&t, 0, 1);
        check_ranges(&t, (Range[]){ { -2, 2 }, { -1, 1 }, { -2.5, 2.5 }, { -1, 1 }, { 0, 1 } });
    }
}

/* ------------------- attention, normalization, losses, linear algebra */

static void test_more_ops(void **state)
{
    (void)state;
    TG t;
    /* Swish, BitwiseNot, Bitwise And/Or/Xor */
    tg_start(&t, "swish");
    int x = in_f32(&t, "x", TG_INTS(3, 7));
    tg_node(&t, IR_OP_Swish, "op", 1, &x, 1);
    tg_float(&t, IR_A_alpha, 1.5);
    outputs(&t, 0, 1);
    check(&t);
    tg_start(&t, "bitnot");
    x = tg_input(&t, "x", IR_DT_I16, TG_INTS(9));
    tg_node(&t, IR_OP_BitwiseNot, "op", 1, &x, 1);
    outputs(&t, 0, 1);
    check_ranges(&t, &(Range){ -300, 300 });
    static const IrOp bops[] = { IR_OP_BitwiseAnd, IR_OP_BitwiseOr, IR_OP_BitwiseXor };
    for (int i = 0; i < 3; i++)
        binary_case(bops[i], IR_DT_U16, TG_INTS(3, 4), TG_INTS(4), (Range){ 0, 65535 });
    /* Trilu both ways, runtime and constant k */
    for (int up = 0; up < 2; up++)
        for (int kk = 0; kk < 3; kk++) {
            tg_start(&t, "trilu");
            int in[2] = { in_f32(&t, "x", TG_INTS(2, 4, 5)), -1 };
            if (kk == 1)
                in[1] = tg_const(&t, "k", IR_DT_I64, 0, NULL, (double[]){ -1 });
            if (kk == 2)
                in[1] = tg_input(&t, "k", IR_DT_I64, 0, NULL);
            tg_node(&t, IR_OP_Trilu, "op", kk ? 2 : 1, in, 1);
            tg_int(&t, IR_A_upper, up);
            outputs(&t, 0, 1);
            check_ranges(&t, (Range[]){ { -2, 2 }, { -2, 2 } });
        }
    /* EyeLike, OneHot */
    tg_start(&t, "eyelike");
    x = in_f32(&t, "x", TG_INTS(4, 6));
    tg_node(&t, IR_OP_EyeLike, "op", 1, &x, 1);
    tg_int(&t, IR_A_k, 2);
    tg_int(&t, IR_A_dtype, ir_dtype_to_onnx(IR_DT_I32));
    outputs(&t, 0, 1);
    check(&t);
    for (int axis = -1; axis < 2; axis++) {
        tg_start(&t, "onehot");
        int in[3] = { tg_input(&t, "i", IR_DT_I64, TG_INTS(2, 3)), tg_const(&t, "d", IR_DT_I64, 0, NULL, (double[]){ 5 }),
                      tg_const(&t, "v", IR_DT_F32, TG_INTS(2), (double[]){ -1, 3 }) };
        tg_node(&t, IR_OP_OneHot, "op", 3, in, 1);
        tg_int(&t, IR_A_axis, axis);
        outputs(&t, 0, 1);
        check_ranges(&t, &(Range){ -6, 5 });
    }
    /* CumSum: every exclusive/reverse combination, float and int */
    for (int m = 0; m < 4; m++)
        for (int ax = -1; ax < 1; ax++) {
            tg_start(&t, "cumsum");
            int in[2] = { m == 3 ? tg_input(&t, "x", IR_DT_I32, TG_INTS(3, 5)) : in_f32(&t, "x", TG_INTS(3, 5)),
                          tg_const(&t, "a", IR_DT_I64, 0, NULL, (double[]){ ax }) };
            tg_node(&t, IR_OP_CumSum, "op", 2, in, 1);
            tg_int(&t, IR_A_exclusive, m & 1);
            tg_int(&t, IR_A_reverse, (m >> 1) & 1);
            outputs(&t, 0, 1);
            check(&t);
        }
    /* RMSNormalization, GroupNormalization, LRN, MeanVarianceNormalization */
    for (int axis = -2; axis < 0; axis++) {
        tg_start(&t, "rms");
        int in[2] = { in_f32(&t, "x", TG_INTS(2, 3, 4)), axis == -1 ? in_f32(&t, "s", TG_INTS(4)) : in_f32(&t, "s", TG_INTS(3, 4)) };
        tg_node(&t, IR_OP_RMSNormalization, "op", 2, in, 1);
        tg_int(&t, IR_A_axis, axis);
        outputs(&t, 0, 1);
        check(&t);
    }
    tg_start(&t, "groupnorm");
    int gn[3] = { in_f32(&t, "x", TG_INTS(2, 6, 3, 2)), in_f32(&t, "s", TG_INTS(6)), in_f32(&t, "b", TG_INTS(6)) };
    tg_node(&t, IR_OP_GroupNormalization, "op", 3, gn, 1);
    tg_int(&t, IR_A_num_groups, 3);
    outputs(&t, 0, 1);
    check(&t);
    for (int size = 2; size <= 3; size++) {
        tg_start(&t, "lrn");
        x = in_f32(&t, "x", TG_INTS(1, 5, 3, 3));
        tg_node(&t, IR_OP_LRN, "op", 1, &x, 1);
        tg_int(&t, IR_A_size, size);
        tg_float(&t, IR_A_alpha, 0.3);
        outputs(&t, 0, 1);
        check(&t);
    }
    for (int d = 0; d < 2; d++) {
        tg_start(&t, "mvn");
        x = in_f32(&t, "x", TG_INTS(2, 3, 4, 2));
        tg_node(&t, IR_OP_MeanVarianceNormalization, "op", 1, &x, 1);
        if (d)
            tg_ints(&t, IR_A_axes, TG_INTS(1, -1));
        outputs(&t, 0, 1);
        check(&t);
    }
}

static void test_scatter_and_friends(void **state)
{
    (void)state;
    TG t;
    for (int layout = 0; layout < 2; layout++) {
        tg_start(&t, "revseq");
        int in[2] = { layout ? in_f32(&t, "x", TG_INTS(3, 4, 2)) : in_f32(&t, "x", TG_INTS(4, 3, 2)),
                      tg_input(&t, "l", IR_DT_I64, TG_INTS(3)) };
        tg_node(&t, IR_OP_ReverseSequence, "op", 2, in, 1);
        tg_int(&t, IR_A_batch_axis, layout ? 0 : 1);
        tg_int(&t, IR_A_time_axis, layout ? 1 : 0);
        outputs(&t, 0, 1);
        check_ranges(&t, (Range[]){ { -2, 2 }, { 0, 4 } });
    }
    static const double shapes[3][3] = { { 3, 7, 2 }, { 6, 2, 5 }, { 4, 4, 3 } };
    for (int i = 0; i < 3; i++) {
        tg_start(&t, "centercroppad");
        int in[2] = { in_f32(&t, "x", TG_INTS(5, 4, 3)), tg_const(&t, "s", IR_DT_I64, TG_INTS(3), shapes[i]) };
        tg_node(&t, IR_OP_CenterCropPad, "op", 2, in, 1);
        outputs(&t, 0, 1);
        check(&t);
    }
    static const char *const reds[] = { "none", "add", "mul", "max", "min" };
    for (int r = 0; r < 5; r++)
        for (int axis = 0; axis < 2; axis++) {
            tg_start(&t, "scatterelements");
            int in[3] = { in_f32(&t, "x", TG_INTS(3, 4)), tg_input(&t, "i", IR_DT_I64, TG_INTS(3, 4)),
                          in_f32(&t, "u", TG_INTS(3, 4)) };
            tg_node(&t, IR_OP_ScatterElements, "op", 3, in, 1);
            tg_int(&t, IR_A_axis, axis);
            tg_str(&t, IR_A_reduction, reds[r]);
            outputs(&t, 0, 1);
            check_ranges(&t, (Range[]){ { -2, 2 }, { -3, 2 }, { -2, 2 } });
        }
    for (int r = 0; r < 5; r += 1) {
        tg_start(&t, "scatternd");
        int in[3] = { in_f32(&t, "x", TG_INTS(4, 3, 2)), tg_input(&t, "i", IR_DT_I64, TG_INTS(5, 1)),
                      in_f32(&t, "u", TG_INTS(5, 3, 2)) };
        tg_node(&t, IR_OP_ScatterND, "op", 3, in, 1);
        tg_str(&t, IR_A_reduction, reds[r]);
        outputs(&t, 0, 1);
        check_ranges(&t, (Range[]){ { -2, 2 }, { -4, 3 }, { -2, 2 } });
    }
    tg_start(&t, "scatternd2");
    int in[3] = { tg_input(&t, "x", IR_DT_I32, TG_INTS(4, 3)), tg_input(&t, "i", IR_DT_I64, TG_INTS(2, 2, 2)),
                  tg_input(&t, "u", IR_DT_I32, TG_INTS(2, 2)) };
    tg_node(&t, IR_OP_ScatterND, "op", 3, in, 1);
    tg_str(&t, IR_A_reduction, "add");
    outputs(&t, 0, 1);
    check_ranges(&t, (Range[]){ { -9, 9 }, { 0, 2 }, { -9, 9 } });
}

static void test_windows_unpool(void **state)
{
    (void)state;
    TG t;
    static const IrOp wops[] = { IR_OP_HannWindow, IR_OP_HammingWindow, IR_OP_BlackmanWindow };
    for (int i = 0; i < 3; i++)
        for (int per = 0; per < 2; per++) {
            /* too long to be computed at compile time */
            tg_start(&t, "window");
            int sz = tg_const(&t, "n", IR_DT_I64, 0, NULL, (double[]){ 70001 });
            int y = tg_node(&t, wops[i], "op", 1, &sz, 1);
            tg_int(&t, IR_A_periodic, per);
            int x = in_f32(&t, "x", TG_INTS(70001));
            tg_output(&t, tg_node(&t, IR_OP_Add, "add", 2, (int[]){ y, x }, 1));
            check(&t);
        }
    for (int os = 0; os < 2; os++) {
        tg_start(&t, "maxunpool");
        int in[3] = { in_f32(&t, "x", TG_INTS(1, 2, 2, 3)), tg_input(&t, "i", IR_DT_I64, TG_INTS(1, 2, 2, 3)), -1 };
        if (os)
            in[2] = tg_const(&t, "os", IR_DT_I64, TG_INTS(4), (double[]){ 1, 2, 5, 7 });
        tg_node(&t, IR_OP_MaxUnpool, "op", os ? 3 : 2, in, 1);
        tg_ints(&t, IR_A_kernel_shape, TG_INTS(2, 2));
        tg_ints(&t, IR_A_strides, TG_INTS(2, 2));
        outputs(&t, 0, 1);
        check_ranges(&t, (Range[]){ { -2, 2 }, { 0, 47 } });
    }
}

static void test_topk(void **state)
{
    (void)state;
    for (int largest = 0; largest < 2; largest++)
        for (int axis = -1; axis < 1; axis++)
            for (int it = 0; it < 2; it++) {
                TG t;
                tg_start(&t, "topk");
                int in[2] = { it ? tg_input(&t, "x", IR_DT_I32, TG_INTS(4, 6)) : in_f32(&t, "x", TG_INTS(4, 6)),
                              tg_const(&t, "k", IR_DT_I64, TG_INTS(1), (double[]){ 3 }) };
                tg_node(&t, IR_OP_TopK, "op", 2, in, 2);
                tg_int(&t, IR_A_axis, axis);
                tg_int(&t, IR_A_largest, largest);
                outputs(&t, 0, 2);
                check_ranges(&t, &(Range){ -3, 3 });     /* integers: ties broken by index */
            }
}

static void test_rotary(void **state)
{
    (void)state;
    for (int r3 = 0; r3 < 2; r3++)
        for (int inter = 0; inter < 2; inter++)
            for (int pos = 0; pos < 2; pos++) {
                TG t;
                tg_start(&t, "rotary");
                /* b 2, heads 2, seq 3, head size 8, rotary dim 6 (half 3) */
                int in[4] = { r3 ? in_f32(&t, "x", TG_INTS(2, 3, 16)) : in_f32(&t, "x", TG_INTS(2, 2, 3, 8)), -1, -1, -1 };
                if (pos) {
                    in[1] = in_f32(&t, "c", TG_INTS(10, 3));
                    in[2] = in_f32(&t, "s", TG_INTS(10, 3));
                    in[3] = tg_input(&t, "p", IR_DT_I64, TG_INTS(2, 3));
                } else {
                    in[1] = in_f32(&t, "c", TG_INTS(2, 3, 3));
                    in[2] = in_f32(&t, "s", TG_INTS(2, 3, 3));
                }
                tg_node(&t, IR_OP_RotaryEmbedding, "op", pos ? 4 : 3, in, 1);
                tg_int(&t, IR_A_interleaved, inter);
                tg_int(&t, IR_A_rotary_embedding_dim, 6);
                if (r3)
                    tg_int(&t, IR_A_num_heads, 2);
                outputs(&t, 0, 1);
                check_ranges(&t, (Range[]){ { -2, 2 }, { -1, 1 }, { -1, 1 }, { 0, 9 } });
            }
}

typedef struct AttSpec {
    int r3, gqa, causal, past, mask, softcap, mode, nonpad;
} AttSpec;

static void attention_case(const AttSpec *a)
{
    TG t;
    tg_start(&t, "attention");
    int64_t B = 2, QH = a->gqa ? 4 : 2, KVH = 2, QS = 3, KS = 4, HS = 4, VHS = 5, P = a->past ? 2 : 0;
    int in[7] = { -1, -1, -1, -1, -1, -1, -1 }, n_in = 3;
    if (a->r3) {
        in[0] = in_f32(&t, "q", TG_INTS(B, QS, QH * HS));
        in[1] = in_f32(&t, "k", TG_INTS(B, KS, KVH * HS));
        in[2] = in_f32(&t, "v", TG_INTS(B, KS, KVH * VHS));
    } else {
        in[0] = in_f32(&t, "q", TG_INTS(B, QH, QS, HS));
        in[1] = in_f32(&t, "k", TG_INTS(B, KVH, KS, HS));
        in[2] = in_f32(&t, "v", TG_INTS(B, KVH, KS, VHS));
    }
    if (a->mask == 1)
        in[3] = tg_input(&t, "m", IR_DT_BOOL, TG_INTS(QS, P + KS)), n_in = 4;
    if (a->mask == 2)
        in[3] = in_f32(&t, "m", TG_INTS(B, 1, QS, P + KS - 1)), n_in = 4;     /* shorter than the keys */
    if (a->past) {
        in[4] = in_f32(&t, "pk", TG_INTS(B, KVH, P, HS));
        in[5] = in_f32(&t, "pv", TG_INTS(B, KVH, P, VHS));
        n_in = 6;
    }
    if (a->nonpad) {
        in[6] = tg_const(&t, "np", IR_DT_I64, TG_INTS(B), (double[]){ 3, 1 });
        n_in = 7;
    }
    int n_out = a->mode >= 0 ? 4 : a->past ? 3 : 1;
    tg_node(&t, IR_OP_Attention, "op", n_in, in, n_out);
    if (a->r3) {
        tg_int(&t, IR_A_q_num_heads, QH);
        tg_int(&t, IR_A_kv_num_heads, KVH);
    }
    tg_int(&t, IR_A_is_causal, a->causal);
    if (a->softcap)
        tg_float(&t, IR_A_softcap, 2.0);
    if (a->mode >= 0)
        tg_int(&t, IR_A_qk_matmul_output_mode, a->mode);
    outputs(&t, 0, n_out);
    check(&t);
}

static void test_attention(void **state)
{
    (void)state;
    const AttSpec specs[] = {
        { .r3 = 0 }, { .r3 = 1, .gqa = 1, .causal = 1 }, { .past = 1, .mask = 1 },
        { .r3 = 1, .past = 1, .mask = 2, .softcap = 1, .mode = 0 }, { .mask = 2, .mode = 1 },
        { .softcap = 1, .mode = 2, .gqa = 1 }, { .mode = 3, .causal = 1, .past = 1 }, { .nonpad = 1, .mode = -1 },
    };
    for (size_t i = 0; i < sizeof specs / sizeof *specs; i++) {
        AttSpec s2 = specs[i];
        if (i < 3)
            s2.mode = -1;
        attention_case(&s2);
    }
}

static void test_cache_and_grid(void **state)
{
    (void)state;
    TG t;
    for (int circ = 0; circ < 2; circ++) {
        tg_start(&t, "tensorscatter");
        /* cache [batch 2, heads 2, seq 6, 3], update of 2 positions at per-batch offsets */
        int in[3] = { in_f32(&t, "c", TG_INTS(2, 2, 6, 3)), in_f32(&t, "u", TG_INTS(2, 2, 2, 3)),
                      tg_input(&t, "w", IR_DT_I64, TG_INTS(2)) };
        tg_node(&t, IR_OP_TensorScatter, "op", 3, in, 1);
        if (circ)
            tg_str(&t, IR_A_mode, "circular");
        outputs(&t, 0, 1);
        check_ranges(&t, (Range[]){ { -2, 2 }, { -2, 2 }, circ ? (Range){ 0, 9 } : (Range){ 0, 4 } });
    }
    for (int align = 0; align < 2; align++)
        for (int d3 = 0; d3 < 2; d3++) {
            tg_start(&t, "affinegrid");
            int in[2] = { d3 ? in_f32(&t, "th", TG_INTS(2, 3, 4)) : in_f32(&t, "th", TG_INTS(2, 2, 3)),
                          d3 ? tg_const(&t, "s", IR_DT_I64, TG_INTS(5), (double[]){ 2, 1, 3, 4, 5 })
                             : tg_const(&t, "s", IR_DT_I64, TG_INTS(4), (double[]){ 2, 1, 4, 5 }) };
            tg_node(&t, IR_OP_AffineGrid, "op", 2, in, 1);
            tg_int(&t, IR_A_align_corners, align);
            outputs(&t, 0, 1);
            check(&t);
        }
    for (int v = 0; v < 2; v++) {
        /* Col2Im: image 5x5 from 2x2 blocks (v 1: stride 2, pads, dilation) */
        tg_start(&t, "col2im");
        int64_t nb = v ? 3 * 3 : 4 * 4;
        int in[3] = { in_f32(&t, "x", TG_INTS(2, 3 * 4, nb)),
                      tg_const(&t, "img", IR_DT_I64, TG_INTS(2), (double[]){ 5, 5 }),
                      tg_const(&t, "blk", IR_DT_I64, TG_INTS(2), (double[]){ 2, 2 }) };
        tg_node(&t, IR_OP_Col2Im, "op", 3, in, 1);
        if (v) {
            tg_ints(&t, IR_A_strides, TG_INTS(2, 2));
            tg_ints(&t, IR_A_pads, TG_INTS(1, 1, 0, 0));
            tg_ints(&t, IR_A_dilations, TG_INTS(1, 1));
        }
        outputs(&t, 0, 1);
        check(&t);
    }
}

static void test_losses(void **state)
{
    (void)state;
    static const char *const reds[] = { "none", "sum", "mean" };
    for (int op = 0; op < 2; op++)
        for (int r = 0; r < 3; r++)
            for (int v = 0; v < 2; v++) {
                TG t;
                tg_start(&t, "loss");
                int in[3] = { in_f32(&t, "x", TG_INTS(3, 4, 2)), tg_input(&t, "t", IR_DT_I64, TG_INTS(3, 2)),
                              v ? in_f32(&t, "w", TG_INTS(4)) : -1 };
                IrOp o = op ? IR_OP_SoftmaxCrossEntropyLoss : IR_OP_NegativeLogLikelihoodLoss;
                int n_out = op && v ? 2 : 1;
                tg_node(&t, o, "op", v ? 3 : 2, in, n_out);
                tg_str(&t, IR_A_reduction, reds[r]);
                if (v)
                    tg_int(&t, IR_A_ignore_index, 1);
                outputs(&t, 0, n_out);
                check_ranges(&t, (Range[]){ { -2, 2 }, { 0, 3 }, { 0.5, 2 } });
            }
}

static void test_einsum(void **state)
{
    (void)state;
    static const struct { const char *eq; int n; int64_t d[3][4]; int r[3]; } cases[] = {
        { "ij,jk->ik", 2, { { 3, 4 }, { 4, 5 } }, { 2, 2 } },
        { "bij,bjk->bik", 2, { { 2, 3, 4 }, { 2, 4, 2 } }, { 3, 3 } },
        { "ii->i", 1, { { 4, 4 } }, { 2 } },
        { "ij->", 1, { { 3, 5 } }, { 2 } },
        { "i,i->", 2, { { 6 }, { 6 } }, { 1, 1 } },
        { "...ij,...jk->...ik", 2, { { 2, 1, 3, 4 }, { 3, 4, 2 } }, { 4, 3 } },
        { "ij,jk,kl->il", 3, { { 2, 3 }, { 3, 4 }, { 4, 2 } }, { 2, 2, 2 } },
        { "ijk->kji", 1, { { 2, 3, 4 } }, { 3 } },
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        TG t;
        tg_start(&t, "einsum");
        int in[3];
        static const char *const names[3] = { "a", "b", "c" };
        for (int i = 0; i < cases[c].n; i++)
            in[i] = in_f32(&t, names[i], cases[c].r[i], cases[c].d[i]);
        tg_node(&t, IR_OP_Einsum, "op", cases[c].n, in, 1);
        tg_str(&t, IR_A_equation, cases[c].eq);
        outputs(&t, 0, 1);
        check(&t);
    }
}

static void test_dft(void **state)
{
    (void)state;
    for (int c = 0; c < 2; c++)
        for (int inv = 0; inv < 2; inv++)
            for (int l = 0; l < 3; l++) {
                TG t;
                tg_start(&t, "dft");
                int in[3] = { c ? in_f32(&t, "x", TG_INTS(2, 6, 2)) : in_f32(&t, "x", TG_INTS(2, 6, 1)), -1, -1 };
                int n_in = 1;
                if (l) {
                    in[1] = tg_const(&t, "len", IR_DT_I64, 0, NULL, (double[]){ l == 1 ? 4 : 8 });
                    in[2] = tg_const(&t, "ax", IR_DT_I64, 0, NULL, (double[]){ 1 });
                    n_in = 3;
                }
                tg_node(&t, IR_OP_DFT, "op", n_in, in, 1);
                tg_int(&t, IR_A_inverse, inv);
                outputs(&t, 0, 1);
                check(&t);
            }
}

static void test_gridsample(void **state)
{
    (void)state;
    static const char *const modes[] = { "nearest", "linear", "cubic" };
    static const char *const pads[] = { "zeros", "border", "reflection" };
    for (int m = 0; m < 3; m++)
        for (int p = 0; p < 3; p++)
            for (int align = 0; align < 2; align++) {
                TG t;
                tg_start(&t, "gridsample");
                int in[2] = { in_f32(&t, "x", TG_INTS(2, 2, 4, 5)), in_f32(&t, "g", TG_INTS(2, 3, 3, 2)) };
                tg_node(&t, IR_OP_GridSample, "op", 2, in, 1);
                tg_str(&t, IR_A_mode, modes[m]);
                tg_str(&t, IR_A_padding_mode, pads[p]);
                tg_int(&t, IR_A_align_corners, align);
                outputs(&t, 0, 1);
                check_ranges(&t, (Range[]){ { -2, 2 }, { -1.7, 1.7 } });
            }
    /* an empty input axis (height 0, a fuzzer's find): nothing to clamp to,
     * every tap reads the zero padding in every padding mode */
    for (int p = 0; p < 3; p++) {
        TG t;
        tg_start(&t, "gridsample_empty");
        int in[2] = { in_f32(&t, "x", TG_INTS(1, 1, 0, 3)), in_f32(&t, "g", TG_INTS(1, 2, 4, 2)) };
        tg_node(&t, IR_OP_GridSample, "op", 2, in, 1);
        tg_str(&t, IR_A_mode, modes[p]);
        tg_str(&t, IR_A_padding_mode, pads[p]);
        outputs(&t, 0, 1);
        check_ranges(&t, (Range[]){ { -2, 2 }, { -1.7, 1.7 } });
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unary),
        cmocka_unit_test(test_binary),
        cmocka_unit_test(test_variadic_where_clip_cast),
        cmocka_unit_test(test_reduce),
        cmocka_unit_test(test_norm),
        cmocka_unit_test(test_conv),
        cmocka_unit_test(test_pool),
        cmocka_unit_test(test_matmul),
        cmocka_unit_test(test_data),
        cmocka_unit_test(test_resize),
        cmocka_unit_test(test_graph_plumbing),
        cmocka_unit_test(test_quant),
        cmocka_unit_test(test_quant_products),
        cmocka_unit_test(test_rnn),
        cmocka_unit_test(test_roialign),
        cmocka_unit_test(test_deformconv),
        cmocka_unit_test(test_more_ops),
        cmocka_unit_test(test_scatter_and_friends),
        cmocka_unit_test(test_windows_unpool),
        cmocka_unit_test(test_topk),
        cmocka_unit_test(test_rotary),
        cmocka_unit_test(test_attention),
        cmocka_unit_test(test_cache_and_grid),
        cmocka_unit_test(test_losses),
        cmocka_unit_test(test_einsum),
        cmocka_unit_test(test_dft),
        cmocka_unit_test(test_gridsample),
    };
    if (getenv("DLCC_TEST_FILTER"))          /* e.g. DLCC_TEST_FILTER=test_conv */
        cmocka_set_test_filter(getenv("DLCC_TEST_FILTER"));
    return cmocka_run_group_tests(tests, NULL, NULL);
}
