/* tests/unit/test_lower_jit.c — lowering checked end to end: for many
 * single-operator graphs (every family, several attributes each), the
 * reference interpreter (interp_run) and the JIT-compiled lowered program
 * (pass_lower → pass_apply_schedule → pass_plan_memory → cg_jit) run on the
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
    LoopProgram *p = pass_lower(g, NULL, &d);
    if (!p)
        fail_diag("lower", &d);
    PassSchedule s = pass_schedule_cpu(256);
    pass_apply_schedule(p, &s);
    if (pass_plan_memory(p, g, &d) != 0 || loop_verify(p, &d) != 0)
        fail_diag("plan", &d);
    CgJit *j = NULL;
    if (cg_jit(p, NULL, &j, &d) != 0) {
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unary),
        cmocka_unit_test(test_binary),
        cmocka_unit_test(test_variadic_where_clip_cast),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
