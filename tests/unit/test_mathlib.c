/* tests/unit/test_mathlib.c — CgOptions.no_libm: the module's own math
 * functions (codegen/mathlib.c), JIT-compiled for the host and compared with
 * the host's double-precision libm on float32 arguments over each function's
 * domain (within 1e-6 relative; floor/ceil/round_even/fmod exact), special
 * values (NaN, infinities, zeros, domain errors), and the assembly for
 * Cortex-M4, Cortex-M0+ and RV32 calling no libm function. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/codegen.h"

enum { N = 4000 };

/* out[i] = fn(a[i] [, b[i] [, c[i]]]) over N float32 values, or the binary
 * float op `op` (LOOP_TMOD) when fn < 0. */
static LoopProgram *program(int fn, int nargs, int op)
{
    LoopProgram *p = loop_program_new("m");
    IrShape s = { .rank = 1, .dims = { N } };
    int in[3], out;
    for (int k = 0; k < nargs; k++) {
        char name[8];
        snprintf(name, sizeof name, "a%d", k);
        in[k] = loop_add_buf(p, name, IR_DT_F32, &s, LOOP_ST_INPUT);
        p->bufs[in[k]].index = p->n_inputs++;
    }
    out = loop_add_buf(p, "y", IR_DT_F32, &s, LOOP_ST_OUTPUT);
    p->bufs[out].index = p->n_outputs++;
    int i = loop_add_var(p, "i", IR_DT_I64);
    LoopExpr *args[3];
    for (int k = 0; k < nargs; k++)
        args[k] = loop_load(p, in[k], loop_var(p, i));
    LoopExpr *v = fn >= 0 ? loop_call(p, (LoopIntrinsic)fn, nargs, args) : loop_bin(p, (LoopBinOp)op, args[0], args[1]);
    LoopStmt *body = loop_store(p, out, loop_var(p, i), v);
    assert_int_equal(loop_add_kernel(p, "k", loop_for(p, i, loop_int(p, N), LOOP_SERIAL, body)), 0);
    return p;
}

/* Runs the program with the built-in math on a, b, c (NULL when unused). */
static void run(LoopProgram *p, const float *a, const float *b, const float *c, float *y)
{
    UtilDiag d;
    util_diag_init(&d);
    CgOptions o = { .opt_level = 2, .no_libm = 1 };
    CgJit *j = NULL;
    int rc = cg_jit(p, &o, &j, &d);
    if (rc)
        print_error("%s\n", d.msg);
    assert_int_equal(rc, 0);
    const void *ins[3] = { a, b, c };
    void *outs[1] = { y };
    assert_int_equal(cg_jit_entry(j)(ins, outs, NULL), 0);
    cg_jit_free(j);
}

typedef double (*Ref1)(double);

/* N points: evenly spread over [lo, hi], then (log = 1) spread in
 * magnitude over [lo, hi] with both signs when neg = 1. */
static void points(float *x, double lo, double hi, int log_, int neg)
{
    for (int i = 0; i < N; i++) {
        double t = (double)i / (N - 1);
        double v = log_ ? exp(log(lo) + t * (log(hi) - log(lo))) : lo + t * (hi - lo);
        x[i] = (float)(neg && i % 2 ? -v : v);
    }
}

/* Worst relative error of y against ref(x) (double libm) rounded to float. */
static double worst(const float *x, const float *y, Ref1 ref, int *at)
{
    double w = 0;
    for (int i = 0; i < N; i++) {
        double r = ref(x[i]);
        float rf = (float)r;
        double e;
        if (isnan(r))
            e = isnan(y[i]) ? 0 : INFINITY;
        else if (isinf(rf))
            e = y[i] == rf ? 0 : INFINITY;
        else
            e = fabs(y[i] - r) / fmax(fabs(r), 1e-37);
        if (e > w) {
            w = e;
            *at = i;
        }
    }
    return w;
}

static double erf_(double x) { return erf(x); }
static double round_even_(double x) { return nearbyint(x); }

static const struct {
    int fn;
    Ref1 ref;
    double lo, hi;
    int log_, neg;
    double tol;
} cases[] = {
    { LOOP_I_exp, exp, -87, 88, 0, 0, 1e-6 },
    { LOOP_I_exp, exp, 1e-8, 80, 1, 1, 1e-6 },
    { LOOP_I_log, log, 1e-38, 3e38, 1, 0, 1e-6 },
    { LOOP_I_log, log, 0.5, 2, 0, 0, 1e-6 },
    { LOOP_I_sqrt, sqrt, 1e-44, 3e38, 1, 0, 1e-6 },
    { LOOP_I_tanh, tanh, 1e-9, 30, 1, 1, 1e-6 },
    { LOOP_I_erf, erf_, -5, 5, 0, 0, 1e-6 },
    { LOOP_I_erf, erf_, 1e-9, 4, 1, 1, 1e-6 },
    { LOOP_I_sin, sin, -100, 100, 0, 0, 1e-6 },
    { LOOP_I_sin, sin, 1e-9, 1e5, 1, 1, 1e-6 },
    { LOOP_I_cos, cos, -100, 100, 0, 0, 1e-6 },
    { LOOP_I_cos, cos, 1e-9, 1e5, 1, 1, 1e-6 },
    { LOOP_I_tan, tan, -10, 10, 0, 0, 1e-6 },
    { LOOP_I_asin, asin, -1, 1, 0, 0, 1e-6 },
    { LOOP_I_asin, asin, 1e-9, 1, 1, 1, 1e-6 },
    { LOOP_I_acos, acos, -1, 1, 0, 0, 1e-6 },
    { LOOP_I_atan, atan, 1e-9, 1e30, 1, 1, 1e-6 },
    { LOOP_I_sinh, sinh, 1e-9, 90, 1, 1, 1e-6 },
    { LOOP_I_cosh, cosh, -90, 90, 0, 0, 1e-6 },
    { LOOP_I_asinh, asinh, 1e-9, 3e38, 1, 1, 1e-6 },
    { LOOP_I_acosh, acosh, 1, 3e38, 1, 0, 1e-6 },
    { LOOP_I_atanh, atanh, 1e-9, 1, 1, 1, 1e-6 },
    { LOOP_I_floor, floor, -1e8, 1e8, 0, 0, 0 },
    { LOOP_I_floor, floor, 1e-3, 3e38, 1, 1, 0 },
    { LOOP_I_ceil, ceil, -1e8, 1e8, 0, 0, 0 },
    { LOOP_I_ceil, ceil, 1e-3, 3e38, 1, 1, 0 },
    { LOOP_I_round_even, round_even_, -1000, 1000, 0, 0, 0 },
    { LOOP_I_round_even, round_even_, 1e-3, 3e38, 1, 1, 0 },
};

static void test_unary(void **state)
{
    (void)state;
    float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        LoopProgram *p = program(cases[k].fn, 1, 0);
        points(x, cases[k].lo, cases[k].hi, cases[k].log_, cases[k].neg);
        if (cases[k].fn == LOOP_I_round_even)   /* ties: n + 0.5 */
            for (int i = 0; i < N / 4; i++)
                x[i] = (float)(i - N / 8) + 0.5f;
        run(p, x, NULL, NULL, y);
        int at = 0;
        double w = worst(x, y, cases[k].ref, &at);
        if (w > cases[k].tol)
            print_error("%s: relative error %.3g at x = %.9g (got %.9g, want %.9g)\n",
                        loop_intrinsic_name((LoopIntrinsic)cases[k].fn), w, x[at], y[at],
                        cases[k].ref(x[at]));
        assert_true(w <= cases[k].tol);
        loop_program_free(p);
    }
    free(x);
    free(y);
}

/* NaN in, NaN out; infinities, zeros and domain errors as C's libm. */
static void test_special(void **state)
{
    (void)state;
    static const struct { int fn; float x, want; int want_nan; } sp[] = {
        { LOOP_I_exp, INFINITY, INFINITY, 0 }, { LOOP_I_exp, -INFINITY, 0, 0 }, { LOOP_I_exp, 100, INFINITY, 0 },
        { LOOP_I_exp, -200, 0, 0 }, { LOOP_I_exp, 0, 1, 0 }, { LOOP_I_exp, NAN, 0, 1 },
        { LOOP_I_log, 0, -INFINITY, 0 }, { LOOP_I_log, -1, 0, 1 }, { LOOP_I_log, INFINITY, INFINITY, 0 },
        { LOOP_I_log, 1, 0, 0 }, { LOOP_I_log, NAN, 0, 1 },
        { LOOP_I_sqrt, 0, 0, 0 }, { LOOP_I_sqrt, -1, 0, 1 }, { LOOP_I_sqrt, INFINITY, INFINITY, 0 },
        { LOOP_I_sqrt, 4, 2, 0 }, { LOOP_I_sqrt, NAN, 0, 1 },
        { LOOP_I_tanh, INFINITY, 1, 0 }, { LOOP_I_tanh, -INFINITY, -1, 0 }, { LOOP_I_tanh, 0, 0, 0 },
        { LOOP_I_tanh, NAN, 0, 1 }, { LOOP_I_erf, INFINITY, 1, 0 }, { LOOP_I_erf, -INFINITY, -1, 0 },
        { LOOP_I_erf, NAN, 0, 1 }, { LOOP_I_sin, INFINITY, 0, 1 }, { LOOP_I_cos, NAN, 0, 1 },
        { LOOP_I_sin, 0, 0, 0 }, { LOOP_I_cos, 0, 1, 0 },
        { LOOP_I_asin, 1.5f, 0, 1 }, { LOOP_I_acos, -1, 3.14159265f, 0 }, { LOOP_I_acos, 1, 0, 0 },
        { LOOP_I_atan, INFINITY, 1.57079633f, 0 }, { LOOP_I_atan, -INFINITY, -1.57079633f, 0 },
        { LOOP_I_atan, NAN, 0, 1 }, { LOOP_I_acosh, 0.5f, 0, 1 }, { LOOP_I_atanh, 1, INFINITY, 0 },
        { LOOP_I_atanh, -2, 0, 1 }, { LOOP_I_sinh, -INFINITY, -INFINITY, 0 },
        { LOOP_I_cosh, -INFINITY, INFINITY, 0 }, { LOOP_I_floor, INFINITY, INFINITY, 0 },
        { LOOP_I_floor, -0.5f, -1, 0 }, { LOOP_I_ceil, -0.5f, 0, 0 }, { LOOP_I_floor, NAN, 0, 1 },
        { LOOP_I_round_even, 2.5f, 2, 0 }, { LOOP_I_round_even, -2.5f, -2, 0 },
        { LOOP_I_round_even, 3.5f, 4, 0 }, { LOOP_I_round_even, -0.4f, 0, 0 },
    };
    float x[N] = { 0 }, y[N];
    for (size_t k = 0; k < sizeof sp / sizeof *sp; k++) {
        LoopProgram *p = program(sp[k].fn, 1, 0);
        x[0] = sp[k].x;
        run(p, x, NULL, NULL, y);
        if (sp[k].want_nan ? !isnan(y[0]) : fabsf(y[0] - sp[k].want) > 1e-6f * fabsf(sp[k].want) &&
                                                 y[0] != sp[k].want)
            print_error("%s(%g) = %g\n", loop_intrinsic_name((LoopIntrinsic)sp[k].fn), sp[k].x, y[0]);
        if (sp[k].want_nan)
            assert_true(isnan(y[0]));
        else
            assert_true(y[0] == sp[k].want || fabsf(y[0] - sp[k].want) <= 1e-6f * fabsf(sp[k].want));
        loop_program_free(p);
    }
}

/* pow on positive bases and on negative bases with integral exponents;
 * fma; fmod (ONNX Mod with fmod = 1) exact. */
static void test_binary(void **state)
{
    (void)state;
    float *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b), *c = malloc(N * sizeof *c);
    float *y = malloc(N * sizeof *y);
    LoopProgram *p = program(LOOP_I_pow, 2, 0);
    for (int i = 0; i < N; i++) {
        a[i] = i % 4 == 3 ? -(float)(1 + i % 7) : (float)exp(-4.6 + 9.2 * i / N);   /* 0.01 .. 100 */
        b[i] = i % 4 == 3 ? (float)(i % 9 - 4) : (float)(-5 + 10.0 * ((i * 7919) % N) / N);
    }
    run(p, a, b, NULL, y);
    for (int i = 0; i < N; i++) {
        double r = pow(a[i], b[i]);
        if (fabs(y[i] - r) > 1e-6 * fabs(r))
            print_error("pow(%g, %g) = %.9g, want %.9g\n", a[i], b[i], y[i], r);
        assert_true(fabs(y[i] - r) <= 1e-6 * fabs(r));
    }
    loop_program_free(p);

    p = program(LOOP_I_fma, 3, 0);
    for (int i = 0; i < N; i++) {
        a[i] = (float)(i - N / 2) / 7;
        b[i] = (float)(i % 13) - 6.5f;
        c[i] = (float)(i % 5) * 3.25f;
    }
    run(p, a, b, c, y);
    for (int i = 0; i < N; i++)
        assert_true(fabs(y[i] - fma(a[i], b[i], c[i])) <= 1e-6 * fabs(fma(a[i], b[i], c[i])) + 1e-30);
    loop_program_free(p);

    p = program(-1, 2, LOOP_TMOD);
    for (int i = 0; i < N; i++) {
        a[i] = (float)(i - N / 2) * 1.37f;
        b[i] = (i % 2 ? -1 : 1) * (0.75f + (float)(i % 11));
    }
    run(p, a, b, NULL, y);
    for (int i = 0; i < N; i++) {
        if (y[i] != fmodf(a[i], b[i]))
            print_error("fmod(%g, %g) = %.9g, want %.9g\n", a[i], b[i], y[i], fmodf(a[i], b[i]));
        assert_true(y[i] == fmodf(a[i], b[i]));
    }
    loop_program_free(p);
    free(a);
    free(b);
    free(c);
    free(y);
}

/* Every intrinsic in one program: the assembly for bare-metal triples names
 * no libm function (without no_libm it does: expf). */
static void test_no_libm_calls(void **state)
{
    (void)state;
    static const char *const libm[] = { "exp", "log", "sqrt", "tanh", "erf", "sin", "cos", "tan", "asin", "acos",
                                        "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "floor", "ceil",
                                        "roundeven", "pow", "fma", "trunc", "fmod", NULL };
    static const char *const triples[][2] = { { "thumbv7em-none-eabihf", "cortex-m4" },
                                              { "thumbv6m-none-eabi", "cortex-m0plus" },
                                              { "riscv32-unknown-elf", "generic-rv32" } };
    LoopProgram *p = loop_program_new("all");
    IrShape s = { .rank = 1, .dims = { 8 } };
    int a = loop_add_buf(p, "a", IR_DT_F32, &s, LOOP_ST_INPUT), y = loop_add_buf(p, "y", IR_DT_F32, &s, LOOP_ST_OUTPUT);
    p->bufs[a].index = p->n_inputs++;
    p->bufs[y].index = p->n_outputs++;
    int i = loop_add_var(p, "i", IR_DT_I64);
    LoopExpr *sum = loop_bin(p, LOOP_TMOD, loop_load(p, a, loop_var(p, i)), loop_float(p, IR_DT_F32, 3));
    for (int fn = 0; fn < LOOP_I_isnan; fn++) {
        LoopExpr *args[3] = { loop_load(p, a, loop_var(p, i)), loop_float(p, IR_DT_F32, 2),
                              loop_float(p, IR_DT_F32, 1) };
        int n = fn == LOOP_I_pow ? 2 : fn == LOOP_I_fma ? 3 : 1;
        sum = loop_bin(p, LOOP_ADD, sum, loop_call(p, (LoopIntrinsic)fn, n, args));
    }
    LoopStmt *body = loop_store(p, y, loop_var(p, i), sum);
    assert_int_equal(loop_add_kernel(p, "k", loop_for(p, i, loop_int(p, 8), LOOP_SERIAL, body)), 0);
    for (int no_libm = 0; no_libm < 2; no_libm++)
        for (size_t t = 0; t < sizeof triples / sizeof *triples; t++) {
            CgOptions o = { .triple = triples[t][0], .cpu = triples[t][1], .opt_level = 2,
                            .emit = CG_EMIT_ASM, .no_libm = no_libm };
            CgResult r;
            cg_result_init(&r);
            UtilDiag d;
            util_diag_init(&d);
            assert_int_equal(cg_compile(p, &o, &r, &d), 0);
            util_buf_put(&r.asm_text, "", 1);
            int found = 0;
            for (char *w = r.asm_text.data; *w;) {   /* identifiers of the text */
                if (!(isalnum((unsigned char)*w) || *w == '_' || *w == '.')) {
                    w++;
                    continue;
                }
                char *e = w;
                while (isalnum((unsigned char)*e) || *e == '_' || *e == '.')
                    e++;
                for (int k = 0; libm[k]; k++) {
                    size_t n = strlen(libm[k]);
                    if ((size_t)(e - w) >= n && (size_t)(e - w) <= n + 1 && strncmp(w, libm[k], n) == 0 &&
                        (e - w == (ptrdiff_t)n || w[n] == 'f')) {
                        if (no_libm)
                            print_error("%s calls %.*s\n", triples[t][0], (int)(e - w), w);
                        found = 1;
                    }
                }
                w = e;
            }
            assert_int_equal(found, !no_libm);
            cg_result_free(&r);
        }
    loop_program_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unary),
        cmocka_unit_test(test_special),
        cmocka_unit_test(test_binary),
        cmocka_unit_test(test_no_libm_calls),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
