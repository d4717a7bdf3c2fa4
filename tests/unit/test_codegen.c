/* tests/unit/test_codegen.c — CPU code generation: loop programs built by
 * hand, JIT-compiled and run against hand-computed values; objects for
 * several triples checked through their ELF headers and section tables;
 * determinism; NULL-pointer checks of the generated entry point;
 * diagnostics. */
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

/* ------------------------------------------------------------ helpers */

static int buf(LoopProgram *p, const char *name, IrDType dt, LoopStorage st, int rank, const int64_t *dims)
{
    IrShape s = { .rank = rank };
    memcpy(s.dims, dims, (size_t)rank * sizeof *dims);
    int b = loop_add_buf(p, name, dt, &s, st);
    assert_true(b >= 0);
    return b;
}

static int io_buf(LoopProgram *p, const char *name, IrDType dt, LoopStorage st, int64_t n)
{
    int b = buf(p, name, dt, st, 1, &n);
    if (st == LOOP_ST_INPUT)
        p->bufs[b].index = p->n_inputs++;
    else if (st == LOOP_ST_OUTPUT)
        p->bufs[b].index = p->n_outputs++;
    return b;
}

static void add(LoopProgram *p, LoopStmt *block, LoopStmt *s) { assert_int_equal(loop_block_add(p, block, s), 0); }

static LoopExpr *V(LoopProgram *p, int var) { return loop_var(p, var); }
static LoopExpr *I(LoopProgram *p, int64_t v) { return loop_int(p, v); }
static LoopExpr *F(LoopProgram *p, IrDType t, double v) { return loop_float(p, t, v); }
static LoopExpr *B2(LoopProgram *p, LoopBinOp op, LoopExpr *a, LoopExpr *b) { return loop_bin(p, op, a, b); }

/* for var < n: body */
static LoopStmt *loop_n(LoopProgram *p, int var, int64_t n, LoopStmt *body)
{
    return loop_for(p, var, I(p, n), LOOP_SERIAL, body);
}

/* p JIT-compiled for the host at opt, or for x86-64 CPU `cpu` (one the
 * host runs: "x86-64", SSE2 only) when not NULL. */
static CgJit *jit_cpu_ok(const LoopProgram *p, int opt, const char *cpu)
{
    UtilDiag d;
    util_diag_init(&d);
    CgOptions o = { .opt_level = opt, .cpu = cpu };
    CgJit *j = NULL;
    int r = cg_jit(p, &o, &j, &d);
    if (r != 0)
        print_error("%s\n", d.msg);
    assert_int_equal(r, 0);
    assert_non_null(cg_jit_entry(j));
    return j;
}

static CgJit *jit_ok(const LoopProgram *p, int opt) { return jit_cpu_ok(p, opt, NULL); }

static void compile_ok(const LoopProgram *p, const CgOptions *o, CgResult *r)
{
    UtilDiag d;
    util_diag_init(&d);
    cg_result_init(r);
    int rc = cg_compile(p, o, r, &d);
    if (rc != 0)
        print_error("%s\n", d.msg);
    assert_int_equal(rc, 0);
}

/* The text of r->llvm_ir as a C string (NUL added). */
static const char *ir_text(CgResult *r)
{
    util_buf_put(&r->llvm_ir, "", 1);
    r->llvm_ir.len--;
    return r->llvm_ir.data;
}

static void assert_diag(const LoopProgram *p, const CgOptions *o, int jit, const char *want)
{
    UtilDiag d;
    util_diag_init(&d);
    int rc;
    if (jit) {
        CgJit *j = (CgJit *)1;
        rc = cg_jit(p, o, &j, &d);
        assert_null(j);
    } else {
        CgResult r;
        cg_result_init(&r);
        rc = cg_compile(p, o, &r, &d);
        cg_result_free(&r);
    }
    assert_int_equal(rc, -1);
    if (!strstr(d.msg, want))
        print_error("got '%s', want '%s'\n", d.msg, want);
    assert_non_null(strstr(d.msg, want));
}

static const int opt_levels[] = { 0, 2, 3 };

/* ------------------------------------------------------------ elementwise */

/* c[i,j] = a[i,j] + b[j]  (b broadcast along rows), a: 2x3, b: 3 */
static LoopProgram *bcast_add(void)
{
    LoopProgram *p = loop_program_new("ew");
    int64_t d23[] = { 2, 3 }, d3[] = { 3 };
    int a = buf(p, "a", IR_DT_F32, LOOP_ST_INPUT, 2, d23);
    int b = buf(p, "b", IR_DT_F32, LOOP_ST_INPUT, 1, d3);
    int c = buf(p, "c", IR_DT_F32, LOOP_ST_OUTPUT, 2, d23);
    p->bufs[a].index = 0;
    p->bufs[b].index = 1;
    p->bufs[c].index = 0;
    p->n_inputs = 2;
    p->n_outputs = 1;
    int i = loop_add_var(p, "i", IR_DT_I64), j = loop_add_var(p, "j", IR_DT_I64);
    LoopExpr *ia[] = { V(p, i), V(p, j) }, *ib[] = { V(p, j) };
    LoopExpr *sum = B2(p, LOOP_ADD, loop_load(p, a, loop_index(p, a, ia)), loop_load(p, b, loop_index(p, b, ib)));
    LoopExpr *ic[] = { V(p, i), V(p, j) };
    LoopStmt *st = loop_store(p, c, loop_index(p, c, ic), sum);
    assert_int_equal(loop_add_kernel(p, "add", loop_n(p, i, 2, loop_n(p, j, 3, st))), 0);
    return p;
}

static void test_elementwise_broadcast(void **state)
{
    (void)state;
    LoopProgram *p = bcast_add();
    for (size_t k = 0; k < sizeof opt_levels / sizeof *opt_levels; k++) {
        CgJit *j = jit_ok(p, opt_levels[k]);
        float a[6] = { 1, 2, 3, 4, 5, 6 }, b[3] = { 10, 20, 30 }, c[6] = { 0 };
        const void *in[] = { a, b };
        void *out[] = { c };
        assert_int_equal(cg_jit_entry(j)(in, out, NULL), 0);
        float want[6] = { 11, 22, 33, 14, 25, 36 };
        for (int i = 0; i < 6; i++)
            assert_float_equal(c[i], want[i], 0);
        cg_jit_free(j);
    }
    loop_program_free(p);
}

/* ------------------------------------------------------------ reduction */

/* Two kernels through a workspace, a constant, a local and an alias:
 *   k1: t[i,j] = xr[i*5+j] * 2         (xr: a flat view of x[4,5])
 *   k2: l[j] = w[j] + 1;  y[i] = sum_j t[i,j] * l[j]   (mutable accumulator)
 * With x = 0..19 and w = 1..5: y[i] = 2 * sum_j (5i+j)(j+2) = 200 i + 100. */
static LoopProgram *reduction(void)
{
    LoopProgram *p = loop_program_new("red");
    int64_t d45[] = { 4, 5 }, d5[] = { 5 }, d20[] = { 20 }, d4[] = { 4 };
    static const float w_data[5] = { 1, 2, 3, 4, 5 };
    int x = buf(p, "x", IR_DT_F32, LOOP_ST_INPUT, 2, d45);
    int xr = buf(p, "xr", IR_DT_F32, LOOP_ST_INPUT, 1, d20);
    int w = buf(p, "w", IR_DT_F32, LOOP_ST_CONST, 1, d5);
    int t = buf(p, "t", IR_DT_F32, LOOP_ST_WORKSPACE, 2, d45);
    int l = buf(p, "l", IR_DT_F32, LOOP_ST_LOCAL, 1, d5);
    int y = buf(p, "y", IR_DT_F32, LOOP_ST_OUTPUT, 1, d4);
    p->bufs[x].index = 0;
    p->bufs[xr].alias_of = x;
    p->bufs[w].data = w_data;
    p->bufs[t].offset = 64;
    p->bufs[y].index = 0;
    p->n_inputs = p->n_outputs = 1;
    p->workspace_bytes = 64 + 80;

    int i1 = loop_add_var(p, "i", IR_DT_I64), j1 = loop_add_var(p, "j", IR_DT_I64);
    LoopExpr *flat = B2(p, LOOP_ADD, B2(p, LOOP_MUL, V(p, i1), I(p, 5)), V(p, j1));
    LoopStmt *s1 = loop_store(p, t, loop_expr_copy(p, flat),
                              B2(p, LOOP_MUL, loop_load(p, xr, flat), F(p, IR_DT_F32, 2.0)));
    assert_int_equal(loop_add_kernel(p, "scale", loop_n(p, i1, 4, loop_n(p, j1, 5, s1))), 0);

    int j0 = loop_add_var(p, "j", IR_DT_I64), i2 = loop_add_var(p, "i", IR_DT_I64);
    int j2 = loop_add_var(p, "j", IR_DT_I64), acc = loop_add_var(p, "acc", IR_DT_F32);
    LoopStmt *k2 = loop_block(p);
    add(p, k2, loop_n(p, j0, 5, loop_store(p, l, V(p, j0), B2(p, LOOP_ADD, loop_load(p, w, V(p, j0)),
                                                             F(p, IR_DT_F32, 1.0)))));
    LoopStmt *row = loop_block(p);
    add(p, row, loop_let(p, acc, F(p, IR_DT_F32, 0.0), 1));
    LoopExpr *tij = loop_load(p, t, B2(p, LOOP_ADD, B2(p, LOOP_MUL, V(p, i2), I(p, 5)), V(p, j2)));
    LoopExpr *prod = B2(p, LOOP_MUL, tij, loop_load(p, l, V(p, j2)));
    add(p, row, loop_n(p, j2, 5, loop_assign(p, acc, B2(p, LOOP_ADD, V(p, acc), prod))));
    add(p, row, loop_store(p, y, V(p, i2), V(p, acc)));
    add(p, k2, loop_n(p, i2, 4, row));
    assert_int_equal(loop_add_kernel(p, "reduce", k2), 1);
    return p;
}

static void test_reduction_workspace_const_local(void **state)
{
    (void)state;
    LoopProgram *p = reduction();
    for (size_t k = 0; k < sizeof opt_levels / sizeof *opt_levels; k++) {
        CgJit *j = jit_ok(p, opt_levels[k]);
        float x[20], y[4] = { 0 };
        for (int i = 0; i < 20; i++)
            x[i] = (float)i;
        _Alignas(64) unsigned char ws[144];
        const void *in[] = { x };
        void *out[] = { y };
        assert_int_equal(cg_jit_entry(j)(in, out, ws), 0);
        for (int i = 0; i < 4; i++)
            assert_float_equal(y[i], 200.0 * i + 100.0, 1e-4);
        cg_jit_free(j);
    }
    loop_program_free(p);
}

static void test_null_pointers(void **state)
{
    (void)state;
    LoopProgram *p = reduction();
    CgJit *j = jit_ok(p, 2);
    CgRunFn run = cg_jit_entry(j);
    float x[20] = { 0 }, y[4] = { -1, -1, -1, -1 };
    _Alignas(64) unsigned char ws[144];
    const void *in[] = { x }, *in_null[] = { NULL };
    void *out[] = { y }, *out_null[] = { NULL };
    assert_int_equal(run(NULL, out, ws), DLCC_ERR_NULL);
    assert_int_equal(run(in_null, out, ws), DLCC_ERR_NULL);
    assert_int_equal(run(in, NULL, ws), DLCC_ERR_NULL);
    assert_int_equal(run(in, out_null, ws), DLCC_ERR_NULL);
    assert_int_equal(run(in, out, NULL), DLCC_ERR_NULL);
    assert_float_equal(y[0], -1.0, 0);   /* nothing ran */
    assert_int_equal(run(in, out, ws), 0);
    assert_float_equal(y[0], 0.0, 0);
    cg_jit_free(j);
    loop_program_free(p);

    /* No workspace needed: NULL is fine there. */
    p = bcast_add();
    j = jit_ok(p, 0);
    float a[6] = { 0 }, b[3] = { 0 }, c[6];
    const void *in2[] = { a, b }, *in2_half[] = { a, NULL };
    void *out2[] = { c };
    assert_int_equal(cg_jit_entry(j)(in2, out2, NULL), 0);
    assert_int_equal(cg_jit_entry(j)(in2_half, out2, NULL), DLCC_ERR_NULL);
    cg_jit_free(j);
    loop_program_free(p);
}

/* ------------------------------------------------------------ integers, if/select */

#define NI 8
static void test_int_div_mod_if_select(void **state)
{
    (void)state;
    LoopProgram *p = loop_program_new("ints");
    int a = io_buf(p, "a", IR_DT_I32, LOOP_ST_INPUT, NI), b = io_buf(p, "b", IR_DT_I32, LOOP_ST_INPUT, NI);
    static const LoopBinOp ops[4] = { LOOP_DIV, LOOP_MOD, LOOP_TDIV, LOOP_TMOD };
    int o[4];
    for (int k = 0; k < 4; k++)
        o[k] = io_buf(p, "o", IR_DT_I32, LOOP_ST_OUTPUT, NI);
    int m = io_buf(p, "m", IR_DT_I32, LOOP_ST_OUTPUT, NI), s = io_buf(p, "s", IR_DT_I32, LOOP_ST_OUTPUT, NI);
    int u = io_buf(p, "u", IR_DT_U8, LOOP_ST_OUTPUT, NI);
    int i = loop_add_var(p, "i", IR_DT_I64);
    LoopStmt *body = loop_block(p);
#define LA loop_load(p, a, V(p, i))
#define LB loop_load(p, b, V(p, i))
    for (int k = 0; k < 4; k++)
        add(p, body, loop_store(p, o[k], V(p, i), B2(p, ops[k], LA, LB)));
    /* if (a < b) m = a else m = b */
    add(p, body, loop_if(p, B2(p, LOOP_LT, LA, LB), loop_store(p, m, V(p, i), LA), loop_store(p, m, V(p, i), LB)));
    /* s = a == b ? 100 : a - b */
    add(p, body, loop_store(p, s, V(p, i), loop_select(p, B2(p, LOOP_EQ, LA, LB), loop_cast(p, IR_DT_I32, I(p, 100)),
                                                       B2(p, LOOP_SUB, LA, LB))));
    /* u = max(uint8(a), uint8(b)), an unsigned comparison */
    add(p, body, loop_store(p, u, V(p, i), B2(p, LOOP_MAX, loop_cast(p, IR_DT_U8, LA), loop_cast(p, IR_DT_U8, LB))));
#undef LA
#undef LB
    assert_int_equal(loop_add_kernel(p, "k", loop_n(p, i, NI, body)), 0);

    int32_t av[NI] = { 7, -7, 7, -7, 5, 0, INT32_MIN, -1 };
    int32_t bv[NI] = { 2, 2, -2, -2, 0, 3, -1, -1 };
    /* hand-computed: floor div, floor mod, C div, C mod; x / 0 = 0; INT_MIN / -1 wraps */
    int32_t want[4][NI] = {
        { 3, -4, -4, 3, 0, 0, INT32_MIN, 1 },
        { 1, 1, -1, -1, 0, 0, 0, 0 },
        { 3, -3, -3, 3, 0, 0, INT32_MIN, 1 },
        { 1, -1, 1, -1, 0, 0, 0, 0 },
    };
    int32_t want_m[NI] = { 2, -7, -2, -7, 0, 0, INT32_MIN, -1 };
    int32_t want_s[NI] = { 5, -9, 9, -5, 5, -3, INT32_MIN + 1, 100 };
    uint8_t want_u[NI] = { 7, 249, 254, 254, 5, 3, 255, 255 };
    for (size_t l = 0; l < sizeof opt_levels / sizeof *opt_levels; l++) {
        CgJit *j = jit_ok(p, opt_levels[l]);
        int32_t ov[4][NI], mv[NI], sv[NI];
        uint8_t uv[NI];
        const void *in[] = { av, bv };
        void *out[] = { ov[0], ov[1], ov[2], ov[3], mv, sv, uv };
        assert_int_equal(cg_jit_entry(j)(in, out, NULL), 0);
        for (int k = 0; k < 4; k++)
            for (int e = 0; e < NI; e++) {
                if (ov[k][e] != want[k][e])
                    print_error("op %d element %d: %d, want %d\n", k, e, ov[k][e], want[k][e]);
                assert_int_equal(ov[k][e], want[k][e]);
            }
        for (int e = 0; e < NI; e++) {
            assert_int_equal(mv[e], want_m[e]);
            assert_int_equal(sv[e], want_s[e]);
            assert_int_equal(uv[e], want_u[e]);
        }
        cg_jit_free(j);
    }
    loop_program_free(p);
}

/* ------------------------------------------------------------ casts, bool, parallel */

/* A PARALLEL loop (serial on the CPU for now) with an immutable let:
 *   t = x[i];  c8[i] = int8(t);  cu[i] = uint8(t);  cb[i] = bool(t);
 *   cd[i] = float64(int32(t));  nb[i] = !flag[i];  sv[i] = flag[i] ? t : -t */
static void test_casts_bool_parallel(void **state)
{
    (void)state;
    LoopProgram *p = loop_program_new("casts");
    int x = io_buf(p, "x", IR_DT_F32, LOOP_ST_INPUT, 6), fl = io_buf(p, "flag", IR_DT_BOOL, LOOP_ST_INPUT, 6);
    int c8 = io_buf(p, "c8", IR_DT_I8, LOOP_ST_OUTPUT, 6), cu = io_buf(p, "cu", IR_DT_U8, LOOP_ST_OUTPUT, 6);
    int cb = io_buf(p, "cb", IR_DT_BOOL, LOOP_ST_OUTPUT, 6), cd = io_buf(p, "cd", IR_DT_F64, LOOP_ST_OUTPUT, 6);
    int nb = io_buf(p, "nb", IR_DT_BOOL, LOOP_ST_OUTPUT, 6), sv = io_buf(p, "sv", IR_DT_F32, LOOP_ST_OUTPUT, 6);
    int i = loop_add_var(p, "i", IR_DT_I64), t = loop_add_var(p, "t", IR_DT_F32);
    LoopStmt *body = loop_block(p);
    add(p, body, loop_let(p, t, loop_load(p, x, V(p, i)), 0));
    add(p, body, loop_store(p, c8, V(p, i), loop_cast(p, IR_DT_I8, V(p, t))));
    add(p, body, loop_store(p, cu, V(p, i), loop_cast(p, IR_DT_U8, V(p, t))));
    add(p, body, loop_store(p, cb, V(p, i), loop_cast(p, IR_DT_BOOL, V(p, t))));
    add(p, body, loop_store(p, cd, V(p, i), loop_cast(p, IR_DT_F64, loop_cast(p, IR_DT_I32, V(p, t)))));
    add(p, body, loop_store(p, nb, V(p, i), loop_un(p, LOOP_NOT, loop_load(p, fl, V(p, i)))));
    add(p, body, loop_store(p, sv, V(p, i), loop_select(p, loop_load(p, fl, V(p, i)), V(p, t),
                                                        loop_un(p, LOOP_NEG, V(p, t)))));
    assert_int_equal(loop_add_kernel(p, "k", loop_for(p, i, I(p, 6), LOOP_PARALLEL, body)), 0);
    float xv[6] = { 1.5f, -2.7f, 300.0f, NAN, -1e10f, 0.0f };
    uint8_t flv[6] = { 1, 0, 1, 0, 1, 0 };
    /* float -> integer casts truncate and saturate; NaN gives 0; bool(NaN) is true */
    static const int8_t w8[6] = { 1, -2, 127, 0, -128, 0 };
    static const uint8_t wu[6] = { 1, 0, 255, 0, 0, 0 }, wb[6] = { 1, 1, 1, 1, 1, 0 };
    static const double wd[6] = { 1, -2, 300, 0, -2147483648.0, 0 };
    for (size_t l = 0; l < sizeof opt_levels / sizeof *opt_levels; l++) {
        CgJit *j = jit_ok(p, opt_levels[l]);
        int8_t o8[6];
        uint8_t ou[6], ob[6], on[6];
        double od[6];
        float os[6];
        const void *in[] = { xv, flv };
        void *out[] = { o8, ou, ob, od, on, os };
        assert_int_equal(cg_jit_entry(j)(in, out, NULL), 0);
        for (int e = 0; e < 6; e++) {
            assert_int_equal(o8[e], w8[e]);
            assert_int_equal(ou[e], wu[e]);
            assert_int_equal(ob[e], wb[e]);
            assert_float_equal(od[e], wd[e], 0);
            assert_int_equal(on[e], !flv[e]);
        }
        assert_float_equal(os[0], 1.5, 0);
        assert_float_equal(os[1], 2.7f, 0);
        assert_true(isnan(os[3]));
        assert_float_equal(os[5], 0, 0);
        cg_jit_free(j);
    }
    loop_program_free(p);
}

/* ------------------------------------------------------------ intrinsics */

static const LoopIntrinsic unary_fns[] = {
    LOOP_I_exp, LOOP_I_log, LOOP_I_sqrt, LOOP_I_tanh, LOOP_I_erf, LOOP_I_sin, LOOP_I_cos, LOOP_I_tan,
    LOOP_I_asin, LOOP_I_acos, LOOP_I_atan, LOOP_I_sinh, LOOP_I_cosh, LOOP_I_asinh, LOOP_I_acosh,
    LOOP_I_atanh, LOOP_I_floor, LOOP_I_ceil, LOOP_I_round_even,
};
#define NU ((int)(sizeof unary_fns / sizeof *unary_fns))
#define NF (NU + 2)    /* + pow(x, 1.5), fma(x, x, x) */
#define NP 8

static double ref_fn(int k, double x)
{
    if (k == NU)
        return pow(x, 1.5);
    if (k == NU + 1)
        return fma(x, x, x);
    switch (unary_fns[k]) {
    case LOOP_I_exp: return exp(x);
    case LOOP_I_log: return log(x);
    case LOOP_I_sqrt: return sqrt(x);
    case LOOP_I_tanh: return tanh(x);
    case LOOP_I_erf: return erf(x);
    case LOOP_I_sin: return sin(x);
    case LOOP_I_cos: return cos(x);
    case LOOP_I_tan: return tan(x);
    case LOOP_I_asin: return asin(x);
    case LOOP_I_acos: return acos(x);
    case LOOP_I_atan: return atan(x);
    case LOOP_I_sinh: return sinh(x);
    case LOOP_I_cosh: return cosh(x);
    case LOOP_I_asinh: return asinh(x);
    case LOOP_I_acosh: return acosh(x);
    case LOOP_I_atanh: return atanh(x);
    case LOOP_I_floor: return floor(x);
    case LOOP_I_ceil: return ceil(x);
    case LOOP_I_round_even: return nearbyint(x);   /* default rounding: to nearest, ties to even */
    default: return NAN;
    }
}

/* y[k, i] = fn_k(x[i]); f[0, i] = isnan(x[i]); f[1, i] = isinf(x[i]) */
static LoopProgram *intrinsics_program(IrDType t)
{
    LoopProgram *p = loop_program_new("fns");
    int x = io_buf(p, "x", t, LOOP_ST_INPUT, NP);
    int y = io_buf(p, "y", t, LOOP_ST_OUTPUT, (int64_t)NF * NP);
    int f = io_buf(p, "f", IR_DT_BOOL, LOOP_ST_OUTPUT, 2 * NP);
    int i = loop_add_var(p, "i", IR_DT_I64);
    LoopStmt *body = loop_block(p);
    for (int k = 0; k < NF; k++) {
        LoopExpr *args[3] = { loop_load(p, x, V(p, i)), NULL, NULL };
        LoopExpr *e;
        if (k < NU) {
            e = loop_call(p, unary_fns[k], 1, args);
        } else if (k == NU) {
            args[1] = F(p, t, 1.5);
            e = loop_call(p, LOOP_I_pow, 2, args);
        } else {
            args[1] = loop_load(p, x, V(p, i));
            args[2] = loop_load(p, x, V(p, i));
            e = loop_call(p, LOOP_I_fma, 3, args);
        }
        add(p, body, loop_store(p, y, B2(p, LOOP_ADD, I(p, (int64_t)k * NP), V(p, i)), e));
    }
    for (int k = 0; k < 2; k++) {
        LoopExpr *arg = loop_load(p, x, V(p, i));
        add(p, body, loop_store(p, f, B2(p, LOOP_ADD, I(p, (int64_t)k * NP), V(p, i)),
                                loop_call(p, k ? LOOP_I_isinf : LOOP_I_isnan, 1, &arg)));
    }
    assert_int_equal(loop_add_kernel(p, "k", loop_n(p, i, NP, body)), 0);
    return p;
}

static void check_close(double got, double want, double rtol, double atol, int k, int i)
{
    if (isnan(want) && isnan(got))
        return;
    if (isinf(want) && got == want)
        return;
    int ok = fabs(got - want) <= atol + rtol * fabs(want);
    if (!ok)
        print_error("function %d at point %d: got %.9g, want %.9g\n", k, i, got, want);
    assert_true(ok);
}

static void test_intrinsics(void **state)
{
    (void)state;
    static const double pts[NP] = { 0.3, 0.7, -0.45, 2.5, 1.5, -3.5, NAN, INFINITY };
    for (int ti = 0; ti < 2; ti++) {
        IrDType t = ti ? IR_DT_F64 : IR_DT_F32;
        LoopProgram *p = intrinsics_program(t);
        for (size_t l = 0; l < sizeof opt_levels / sizeof *opt_levels; l++) {
            CgJit *j = jit_ok(p, opt_levels[l]);
            float xf[NP], yf[NF * NP];
            double xd[NP], yd[NF * NP];
            uint8_t fl[2 * NP];
            for (int i = 0; i < NP; i++) {
                xf[i] = (float)pts[i];
                xd[i] = pts[i];
            }
            const void *in[] = { ti ? (void *)xd : (void *)xf };
            void *out[] = { ti ? (void *)yd : (void *)yf, fl };
            assert_int_equal(cg_jit_entry(j)(in, out, NULL), 0);
            for (int k = 0; k < NF; k++)
                for (int i = 0; i < NP; i++) {
                    double want = ref_fn(k, ti ? xd[i] : (double)xf[i]);
                    double got = ti ? yd[k * NP + i] : (double)yf[k * NP + i];
                    check_close(got, ti ? want : (double)(float)want, ti ? 1e-12 : 1e-5, ti ? 1e-14 : 1e-6, k, i);
                }
            for (int i = 0; i < NP; i++) {
                assert_int_equal(fl[i], i == 6);        /* isnan */
                assert_int_equal(fl[NP + i], i == 7);   /* isinf */
            }
            cg_jit_free(j);
        }
        loop_program_free(p);
    }
}

/* Float MIN/MAX propagate NaN; float MOD takes the divisor's sign. */
static void test_float_min_max_mod(void **state)
{
    (void)state;
    LoopProgram *p = loop_program_new("fmm");
    int a = io_buf(p, "a", IR_DT_F32, LOOP_ST_INPUT, 4), b = io_buf(p, "b", IR_DT_F32, LOOP_ST_INPUT, 4);
    int mn = io_buf(p, "mn", IR_DT_F32, LOOP_ST_OUTPUT, 4), mx = io_buf(p, "mx", IR_DT_F32, LOOP_ST_OUTPUT, 4);
    int md = io_buf(p, "md", IR_DT_F32, LOOP_ST_OUTPUT, 4);
    int i = loop_add_var(p, "i", IR_DT_I64);
    LoopStmt *body = loop_block(p);
    add(p, body, loop_store(p, mn, V(p, i), B2(p, LOOP_MIN, loop_load(p, a, V(p, i)), loop_load(p, b, V(p, i)))));
    add(p, body, loop_store(p, mx, V(p, i), B2(p, LOOP_MAX, loop_load(p, a, V(p, i)), loop_load(p, b, V(p, i)))));
    add(p, body, loop_store(p, md, V(p, i), B2(p, LOOP_MOD, loop_load(p, a, V(p, i)), loop_load(p, b, V(p, i)))));
    assert_int_equal(loop_add_kernel(p, "k", loop_n(p, i, 4, body)), 0);
    CgJit *j = jit_ok(p, 2);
    float av[4] = { 1, NAN, 3, -7 }, bv[4] = { 2, 1, NAN, 3 }, r1[4], r2[4], r3[4];
    const void *in[] = { av, bv };
    void *out[] = { r1, r2, r3 };
    assert_int_equal(cg_jit_entry(j)(in, out, NULL), 0);
    assert_float_equal(r1[0], 1, 0);
    assert_float_equal(r2[0], 2, 0);
    assert_true(isnan(r1[1]) && isnan(r2[1]) && isnan(r1[2]) && isnan(r2[2]));
    assert_float_equal(r1[3], -7, 0);
    assert_float_equal(r2[3], 3, 0);
    assert_float_equal(r3[0], 1, 0);
    assert_float_equal(r3[3], 2, 0);   /* -7 mod 3 = 2 */
    cg_jit_free(j);
    loop_program_free(p);
}

/* ------------------------------------------------------------ vectorized / unrolled */

/* y[i] = x[i] * 2 + 1 over 64 (VECTORIZED, 8 lanes); z[i] = x[i] - 1 over 4 (UNROLLED, full) */
static LoopProgram *vector_program(void)
{
    LoopProgram *p = loop_program_new("vec");
    int x = io_buf(p, "x", IR_DT_F32, LOOP_ST_INPUT, 64);
    int y = io_buf(p, "y", IR_DT_F32, LOOP_ST_OUTPUT, 64), z = io_buf(p, "z", IR_DT_F32, LOOP_ST_OUTPUT, 4);
    int i = loop_add_var(p, "i", IR_DT_I64), k = loop_add_var(p, "k", IR_DT_I64);
    LoopExpr *e = B2(p, LOOP_ADD, B2(p, LOOP_MUL, loop_load(p, x, V(p, i)), F(p, IR_DT_F32, 2)), F(p, IR_DT_F32, 1));
    LoopStmt *v = loop_for(p, i, I(p, 64), LOOP_VECTORIZED, loop_store(p, y, V(p, i), e));
    v->u.loop.factor = 8;
    LoopStmt *u = loop_for(p, k, I(p, 4), LOOP_UNROLLED,
                           loop_store(p, z, V(p, k), B2(p, LOOP_SUB, loop_load(p, x, V(p, k)), F(p, IR_DT_F32, 1))));
    LoopStmt *body = loop_block(p);
    add(p, body, v);
    add(p, body, u);
    assert_int_equal(loop_add_kernel(p, "k", body), 0);
    return p;
}

static void test_vectorized_loop(void **state)
{
    (void)state;
    LoopProgram *p = vector_program();
    for (size_t l = 0; l < sizeof opt_levels / sizeof *opt_levels; l++) {
        CgJit *j = jit_ok(p, opt_levels[l]);
        float x[64], y[64], z[4];
        for (int i = 0; i < 64; i++)
            x[i] = (float)i * 0.5f;
        const void *in[] = { x };
        void *out[] = { y, z };
        assert_int_equal(cg_jit_entry(j)(in, out, NULL), 0);
        for (int i = 0; i < 64; i++)
            assert_float_equal(y[i], i + 1.0, 0);
        for (int i = 0; i < 4; i++)
            assert_float_equal(z[i], i * 0.5 - 1.0, 0);
        cg_jit_free(j);
    }
    /* The schedule reaches LLVM as loop metadata, and the loop vectorizer uses it. */
    CgOptions o = { .triple = "x86_64-linux-gnu", .cpu = "haswell", .opt_level = 0, .emit = CG_EMIT_LLVM };
    CgResult r;
    compile_ok(p, &o, &r);
    const char *ll = ir_text(&r);
    assert_non_null(strstr(ll, "!{!\"llvm.loop.vectorize.enable\", i1 true}"));
    assert_non_null(strstr(ll, "!{!\"llvm.loop.vectorize.width\", i32 8}"));
    assert_non_null(strstr(ll, "!{!\"llvm.loop.unroll.full\"}"));
    assert_null(strstr(ll, "<8 x float>"));
    cg_result_free(&r);
    p->kernels[0].body->u.block.items[1]->u.loop.factor = 2;   /* unrolled(2) */
    compile_ok(p, &o, &r);
    assert_non_null(strstr(ir_text(&r), "!{!\"llvm.loop.unroll.count\", i32 2}"));
    assert_null(strstr(ir_text(&r), "llvm.loop.unroll.full"));
    cg_result_free(&r);
    o.opt_level = 2;
    compile_ok(p, &o, &r);
    assert_non_null(strstr(ir_text(&r), "<8 x float>"));
    cg_result_free(&r);
    loop_program_free(p);
}

/* Runs j on one input x[i] = i (n floats) into output y. */
static void run_ramp(CgJit *j, int n, float *y)
{
    float *x = malloc((size_t)n * sizeof *x);
    assert_non_null(x);
    for (int i = 0; i < n; i++)
        x[i] = (float)i;
    const void *in[] = { x };
    void *out[] = { y };
    assert_int_equal(cg_jit_entry(j)(in, out, NULL), 0);
    free(x);
}

/* At every optimization level, the program's m outputs (set to `fill`
 * first) from the ramp input of n elements are exactly want[0..m). */
static void check_ramp(const LoopProgram *p, int n, int m, const float *want, float fill)
{
    for (size_t l = 0; l < sizeof opt_levels / sizeof *opt_levels; l++) {
        CgJit *j = jit_ok(p, opt_levels[l]);
        float yv[64];
        assert_true(m <= 64);
        for (int i = 0; i < m; i++)
            yv[i] = fill;
        run_ramp(j, n, yv);
        for (int i = 0; i < m; i++)
            assert_float_equal(yv[i], want[i], 0);
        cg_jit_free(j);
    }
}

/* A row of 55 stored by 16-lane pieces: for t < 4 { vectorized c < 16 {
 * if (t*16 + c < 55) y[t*16 + c] = x[t*16 + c] + 1 } } — the integer
 * compare against the row's end is a lane mask and the store one masked
 * vector store (not 16 scalar stores under branches); nothing past y[54]
 * is written. */
static void test_vector_row_end(void **state)
{
    (void)state;
    LoopProgram *p = loop_program_new("rowend");
    int x = io_buf(p, "x", IR_DT_F32, LOOP_ST_INPUT, 64), y = io_buf(p, "y", IR_DT_F32, LOOP_ST_OUTPUT, 64);
    int t = loop_add_var(p, "t", IR_DT_I64), c = loop_add_var(p, "c", IR_DT_I64);
    LoopExpr *pos = B2(p, LOOP_ADD, B2(p, LOOP_MUL, V(p, t), I(p, 16)), V(p, c));
    LoopStmt *st = loop_store(p, y, loop_expr_copy(p, pos),
                              B2(p, LOOP_ADD, loop_load(p, x, loop_expr_copy(p, pos)), F(p, IR_DT_F32, 1)));
    LoopStmt *vl = loop_for(p, c, I(p, 16), LOOP_VECTORIZED, loop_if(p, B2(p, LOOP_LT, pos, I(p, 55)), st, NULL));
    vl->u.loop.factor = 16;
    assert_int_equal(loop_add_kernel(p, "k", loop_for(p, t, I(p, 4), LOOP_SERIAL, vl)), 0);
    float want[64];
    for (int i = 0; i < 64; i++)
        want[i] = i < 55 ? i + 1.0f : -5.0f;
    check_ramp(p, 64, 64, want, -5.0f);
    CgOptions o = { .triple = "x86_64-linux-gnu", .cpu = "skylake-avx512", .opt_level = 2, .emit = CG_EMIT_LLVM };
    CgResult r;
    compile_ok(p, &o, &r);
    assert_non_null(strstr(ir_text(&r), "@llvm.masked.store.v16f32"));
    assert_null(strstr(ir_text(&r), "store float"));
    cg_result_free(&r);
    loop_program_free(p);
}

/* Guarded strided loads in a 16-lane vector loop: y[c] = c < 10 ? x[k*c]
 * : -1 over a buffer of 10k - k + 1 elements, so the lanes not taken would
 * read past it.  Stride 2 is one 32-element masked load and a shuffle,
 * stride 5 lane by lane (a lane not taken reading element 0); marked
 * `safe` (a lowering that knows the lanes lie inside), stride 2 is a plain
 * wide load. */
static void test_vector_guarded_strided(void **state)
{
    (void)state;
    const int ks[3] = { 2, 5, 2 };
    for (int t = 0; t < 3; t++) {
        int k = ks[t], safe = t == 2, n = safe ? 40 : 10 * k - k + 1;
        LoopProgram *p = loop_program_new("gs");
        int x = io_buf(p, "x", IR_DT_F32, LOOP_ST_INPUT, n), y = io_buf(p, "y", IR_DT_F32, LOOP_ST_OUTPUT, 16);
        int c = loop_add_var(p, "c", IR_DT_I64);
        LoopExpr *ld = loop_load(p, x, B2(p, LOOP_MUL, V(p, c), I(p, k)));
        ld->u.load.safe = safe;
        LoopExpr *v = loop_select(p, B2(p, LOOP_LT, V(p, c), I(p, 10)), ld, F(p, IR_DT_F32, -1));
        LoopStmt *vl = loop_for(p, c, I(p, 16), LOOP_VECTORIZED, loop_store(p, y, V(p, c), v));
        vl->u.loop.factor = 16;
        assert_int_equal(loop_add_kernel(p, "k", vl), 0);
        float want[16];
        for (int i = 0; i < 16; i++)
            want[i] = i < 10 ? (float)(i * k) : -1.0f;
        check_ramp(p, n, 16, want, 0.0f);
        p->bufs[x].slack = 1;                   /* (a plain wide load needs the element past the last lane) */
        CgOptions o = { .triple = "x86_64-linux-gnu", .cpu = "skylake-avx512", .opt_level = 2, .emit = CG_EMIT_LLVM };
        CgResult r;
        compile_ok(p, &o, &r);
        const char *ll = ir_text(&r);
        assert_true((strstr(ll, "@llvm.masked.load.v32f32") != NULL) == (k == 2 && !safe));
        assert_true((strstr(ll, "load <32 x float>") != NULL) == safe);
        cg_result_free(&r);
        loop_program_free(p);
    }
}

/* Guarded byte loads in a 32-lane vector loop, y[c] = 0 <= c + s < 40 ?
 * x[c + s] : 7, where the target masks no bytes (AVX2, SSE): a plain load
 * and a select when the 32 bytes lie inside x (s = 4), the masked load
 * when they do not (s = -3, s = 10: lanes before and past x); the same
 * values on the host and for x86-64 (SSE2) at every optimization level.  AVX-512 (BW) keeps
 * the one masked load. */
static void test_vector_guarded_bytes(void **state)
{
    (void)state;
    const int shifts[3] = { 4, -3, 10 };
    for (int t = 0; t < 3; t++) {
        int s = shifts[t];
        LoopProgram *p = loop_program_new("gb");
        int x = io_buf(p, "x", IR_DT_I8, LOOP_ST_INPUT, 40), y = io_buf(p, "y", IR_DT_I8, LOOP_ST_OUTPUT, 32);
        int c = loop_add_var(p, "c", IR_DT_I64);
        LoopExpr *idx = B2(p, LOOP_ADD, V(p, c), I(p, s));
        LoopExpr *in = B2(p, LOOP_AND, B2(p, LOOP_LE, I(p, 0), loop_expr_copy(p, idx)), B2(p, LOOP_LT, idx, I(p, 40)));
        LoopExpr *v = loop_select(p, in, loop_load(p, x, loop_expr_copy(p, idx)), loop_cast(p, IR_DT_I8, I(p, 7)));
        LoopStmt *vl = loop_for(p, c, I(p, 32), LOOP_VECTORIZED, loop_store(p, y, V(p, c), v));
        vl->u.loop.factor = 32;
        assert_int_equal(loop_add_kernel(p, "k", vl), 0);
        int8_t xv[40], yv[32];
        for (int i = 0; i < 40; i++)
            xv[i] = (int8_t)(i - 20);
        for (size_t l = 0; l < 2 * sizeof opt_levels / sizeof *opt_levels; l++) {
            CgJit *j = jit_cpu_ok(p, opt_levels[l % 3], l < 3 ? NULL : "x86-64");
            memset(yv, 0, sizeof yv);
            const void *ins[] = { xv };
            void *outs[] = { yv };
            assert_int_equal(cg_jit_entry(j)(ins, outs, NULL), 0);
            for (int i = 0; i < 32; i++)
                assert_int_equal(yv[i], i + s >= 0 && i + s < 40 ? i + s - 20 : 7);
            cg_jit_free(j);
        }
        static const char *const cpus[3] = { "haswell", "x86-64", "skylake-avx512" };
        for (int k = 0; k < 3; k++) {
            /* (at -O0: the constant lane indices fold neither path away) */
            CgOptions o = { .triple = "x86_64-linux-gnu", .cpu = cpus[k], .opt_level = 0, .emit = CG_EMIT_LLVM };
            CgResult r;
            compile_ok(p, &o, &r);
            const char *ll = ir_text(&r);
            assert_true(strstr(ll, "@llvm.masked.load.v32i8") != NULL);
            assert_true((strstr(ll, "load <32 x i8>") != NULL) == (k < 2));
            cg_result_free(&r);
        }
        loop_program_free(p);
    }
}

/* A byte row of 40 stored by 32-lane pieces: for t < 2 { vectorized c <
 * 32 { if (t*32 + c < 40) y[t*32 + c] = x[t*32 + c] + 1 } }, on the host
 * and for x86-64 (SSE2), which masks no bytes: the store of a piece whose
 * lanes are all taken may be a plain one, the other is masked, and nothing
 * past y[39] is written.  (The masks here are constants LLVM folds; the
 * e2e int8 models compiled for AVX2 and AArch64 take the run-time test.) */
static void test_vector_masked_bytes(void **state)
{
    (void)state;
    LoopProgram *p = loop_program_new("maskb");
    int x = io_buf(p, "x", IR_DT_I8, LOOP_ST_INPUT, 64), y = io_buf(p, "y", IR_DT_I8, LOOP_ST_OUTPUT, 64);
    int t = loop_add_var(p, "t", IR_DT_I64), c = loop_add_var(p, "c", IR_DT_I64);
    LoopExpr *pos = B2(p, LOOP_ADD, B2(p, LOOP_MUL, V(p, t), I(p, 32)), V(p, c));
    LoopStmt *st = loop_store(p, y, loop_expr_copy(p, pos),
                              B2(p, LOOP_ADD, loop_load(p, x, loop_expr_copy(p, pos)), loop_cast(p, IR_DT_I8, I(p, 1))));
    LoopStmt *vl = loop_for(p, c, I(p, 32), LOOP_VECTORIZED, loop_if(p, B2(p, LOOP_LT, pos, I(p, 40)), st, NULL));
    vl->u.loop.factor = 32;
    assert_int_equal(loop_add_kernel(p, "k", loop_for(p, t, I(p, 2), LOOP_SERIAL, vl)), 0);
    int8_t xv[64], yv[64];
    for (int i = 0; i < 64; i++)
        xv[i] = (int8_t)(i - 30);
    for (size_t l = 0; l < 2 * sizeof opt_levels / sizeof *opt_levels; l++) {
        CgJit *j = jit_cpu_ok(p, opt_levels[l % 3], l < 3 ? NULL : "x86-64");
        memset(yv, 99, sizeof yv);
        const void *ins[] = { xv };
        void *outs[] = { yv };
        assert_int_equal(cg_jit_entry(j)(ins, outs, NULL), 0);
        for (int i = 0; i < 64; i++)
            assert_int_equal(yv[i], i < 40 ? i - 29 : 99);
        cg_jit_free(j);
    }
    loop_program_free(p);
}

/* Taps of one row read as stride-4 vectors (the Winograd input
 * transform): y[c] = x[4c + 5] + 2 x[4c + 6] + 3 x[4c + 8] over 16 lanes.
 * With `lead` (elements before lane 0 the lowering vouches for) each load's
 * wide window starts at its constant term rounded down to a multiple of 4:
 * taps 5 and 6 share the window at 4, tap 8 has its own — two wide loads,
 * not three; without it, three.  The values are the same either way. */
static void test_vector_strided_lead(void **state)
{
    (void)state;
    for (int lead = 0; lead < 2; lead++) {
        LoopProgram *p = loop_program_new("lead");
        int x = io_buf(p, "x", IR_DT_F32, LOOP_ST_INPUT, 80), y = io_buf(p, "y", IR_DT_F32, LOOP_ST_OUTPUT, 16);
        int c = loop_add_var(p, "c", IR_DT_I64);
        const int off[3] = { 5, 6, 8 };
        LoopExpr *sum = NULL;
        for (int j = 0; j < 3; j++) {
            LoopExpr *ld = loop_load(p, x, B2(p, LOOP_ADD, B2(p, LOOP_MUL, V(p, c), I(p, 4)), I(p, off[j])));
            ld->u.load.lead = lead ? off[j] : 0;
            LoopExpr *t = B2(p, LOOP_MUL, ld, F(p, IR_DT_F32, j + 1));
            sum = sum ? B2(p, LOOP_ADD, sum, t) : t;
        }
        LoopStmt *vl = loop_for(p, c, I(p, 16), LOOP_VECTORIZED, loop_store(p, y, V(p, c), sum));
        vl->u.loop.factor = 16;
        p->bufs[x].slack = 3;
        assert_int_equal(loop_add_kernel(p, "k", vl), 0);
        float want[16];
        for (int i = 0; i < 16; i++)
            want[i] = (float)(4 * i + 5) + 2.0f * (float)(4 * i + 6) + 3.0f * (float)(4 * i + 8);
        check_ramp(p, 80, 16, want, 0.0f);
        CgOptions o = { .triple = "x86_64-linux-gnu", .cpu = "skylake-avx512", .opt_level = 2, .emit = CG_EMIT_LLVM };
        CgResult r;
        compile_ok(p, &o, &r);
        const char *ll = ir_text(&r);
        int n = 0;
        for (const char *q = ll; (q = strstr(q, "load <64 x float>")) != NULL; q++)
            n++;
        assert_int_equal(n, lead ? 2 : 3);
        cg_result_free(&r);
        loop_program_free(p);
    }
}

/* Lanes in groups: y[c] = x[(c / P) * 40 + (c % P) * k + 3] in a 16-lane
 * loop, P = 8 or 4 lanes a group, stride k = 1 or 4 within a group (the
 * Winograd input transform's tile rows side by side in one register).
 * Each group is one load — contiguous, or every k-th element of a wide
 * one — and the groups are joined by shuffles: no scalar loads. */
static void test_vector_grouped_load(void **state)
{
    (void)state;
    const int cases[4][2] = { { 8, 4 }, { 4, 4 }, { 8, 1 }, { 4, 2 } };
    for (int t = 0; t < 4; t++) {
        int P = cases[t][0], k = cases[t][1], n = 200;
        LoopProgram *p = loop_program_new("grouped");
        int x = io_buf(p, "x", IR_DT_F32, LOOP_ST_INPUT, n), y = io_buf(p, "y", IR_DT_F32, LOOP_ST_OUTPUT, 16);
        int c = loop_add_var(p, "c", IR_DT_I64);
        LoopExpr *at = B2(p, LOOP_ADD,
                          B2(p, LOOP_ADD, B2(p, LOOP_MUL, B2(p, LOOP_DIV, V(p, c), I(p, P)), I(p, 40)),
                             B2(p, LOOP_MUL, B2(p, LOOP_MOD, V(p, c), I(p, P)), I(p, k))),
                          I(p, 3));
        LoopStmt *vl = loop_for(p, c, I(p, 16), LOOP_VECTORIZED,
                                loop_store(p, y, V(p, c), B2(p, LOOP_MUL, loop_load(p, x, at), F(p, IR_DT_F32, 2))));
        vl->u.loop.factor = 16;
        p->bufs[x].slack = 3;                   /* the wide load's elements past a group's last lane */
        assert_int_equal(loop_add_kernel(p, "k", vl), 0);
        float want[16];
        for (int i = 0; i < 16; i++)
            want[i] = 2.0f * (float)((i / P) * 40 + (i % P) * k + 3);
        check_ramp(p, n, 16, want, 0.0f);
        CgOptions o = { .triple = "x86_64-linux-gnu", .cpu = "skylake-avx512", .opt_level = 0, .emit = CG_EMIT_LLVM };
        CgResult r;
        compile_ok(p, &o, &r);
        const char *ll = ir_text(&r);
        char wide[32];
        snprintf(wide, sizeof wide, "load <%d x float>", P * k);
        assert_non_null(strstr(ll, wide));
        assert_null(strstr(ll, "load float"));
        cg_result_free(&r);
        loop_program_free(p);
    }
}

/* Vectorized Max / Min (16, 8 and 4 lanes: on x86 the MAXPS / MINPS
 * instructions of each width) keep the scalar semantics: NaN in either
 * operand gives NaN, and equal operands (+0 and -0) give the second. */
/* exp of a float32 vector is inline arithmetic (codegen/expr.c), not one
 * libm call per lane: within 4 ulp of expf over [-87.3, 88.7] and the edges
 * (overflow to +inf, underflow to 0, NaN kept), at 16, 8 and 4 lanes; tanh
 * and erf likewise, within 5e-7 of tanhf / erff over [-10, 10]. */
static void test_vector_exp(void **state)
{
    (void)state;
    enum { N = 4096 };
    static const unsigned widths[] = { 16, 8, 4 };
    float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
    assert_true(x && y);
    for (int i = 0; i < N; i++)
        x[i] = -87.3f + (88.7f + 87.3f) * (float)i / (N - 1);
    static const float edge[] = { 0.0f, -0.0f, 1.0f, -1.0f, 88.7f, 88.72f, 88.73f, 1000.0f, INFINITY, -87.33f,
                                  -87.34f, -100.0f, -INFINITY, NAN, 0.34657359f, -0.34657359f };
    memcpy(x, edge, sizeof edge);
    for (size_t wi = 0; wi < sizeof widths / sizeof *widths; wi++) {
        unsigned w = widths[wi];
        LoopProgram *p = loop_program_new("vexp");
        int a = io_buf(p, "a", IR_DT_F32, LOOP_ST_INPUT, N), b = io_buf(p, "b", IR_DT_F32, LOOP_ST_OUTPUT, N);
        int t = loop_add_var(p, "t", IR_DT_I64), c = loop_add_var(p, "c", IR_DT_I64);
        LoopExpr *pos = B2(p, LOOP_ADD, B2(p, LOOP_MUL, V(p, t), I(p, (int64_t)w)), V(p, c));
        LoopExpr *e = loop_call(p, LOOP_I_exp, 1, (LoopExpr *[]){ loop_load(p, a, loop_expr_copy(p, pos)) });
        LoopStmt *vl = loop_for(p, c, I(p, (int64_t)w), LOOP_VECTORIZED, loop_store(p, b, pos, e));
        vl->u.loop.factor = (int)w;
        assert_int_equal(loop_add_kernel(p, "k", loop_for(p, t, I(p, N / (int64_t)w), LOOP_SERIAL, vl)), 0);
        CgJit *j = jit_ok(p, 2);
        const void *in[] = { x };
        void *out[] = { y };
        assert_int_equal(cg_jit_entry(j)(in, out, NULL), 0);
        for (int i = 0; i < N; i++) {
            float want = expf(x[i]);
            if (isnan(x[i]))
                assert_true(isnan(y[i]));
            else if (want < 1.17549435e-38f)     /* below the smallest normal float: 0 */
                assert_true(y[i] == 0.0f || fabsf(y[i] - want) <= 1.2e-38f);
            else if (isinf(want))
                assert_true(isinf(y[i]) && y[i] > 0);
            else if (fabsf(y[i] - want) > 4 * 1.2e-7f * want)
                fail_msg("w %u: exp(%.9g) = %.9g, expf %.9g", w, x[i], y[i], want);
        }
        cg_jit_free(j);
        CgOptions o = { .triple = "x86_64-linux-gnu", .cpu = "haswell", .opt_level = 2, .emit = CG_EMIT_LLVM };
        CgResult r;
        compile_ok(p, &o, &r);
        assert_null(strstr(ir_text(&r), "expf"));     /* no libm call per lane */
        assert_null(strstr(ir_text(&r), "llvm.exp"));
        cg_result_free(&r);
        loop_program_free(p);
    }
    free(x);
    free(y);
}

/* y = fn(x) over n inputs as a VECTORIZED loop of w lanes, JIT-compiled at
 * -O2; *ll gets the IR text of the same program for Haswell (free it). */
static void vector_call(LoopIntrinsic fn, unsigned w, const float *x, float *y, int n, char **ll)
{
    LoopProgram *p = loop_program_new("vcall");
    int a = io_buf(p, "a", IR_DT_F32, LOOP_ST_INPUT, n), b = io_buf(p, "b", IR_DT_F32, LOOP_ST_OUTPUT, n);
    int t = loop_add_var(p, "t", IR_DT_I64), c = loop_add_var(p, "c", IR_DT_I64);
    LoopExpr *pos = B2(p, LOOP_ADD, B2(p, LOOP_MUL, V(p, t), I(p, (int64_t)w)), V(p, c));
    LoopExpr *e = loop_call(p, fn, 1, (LoopExpr *[]){ loop_load(p, a, loop_expr_copy(p, pos)) });
    LoopStmt *vl = loop_for(p, c, I(p, (int64_t)w), LOOP_VECTORIZED, loop_store(p, b, pos, e));
    vl->u.loop.factor = (int)w;
    assert_int_equal(loop_add_kernel(p, "k", loop_for(p, t, I(p, n / (int64_t)w), LOOP_SERIAL, vl)), 0);
    CgJit *j = jit_ok(p, 2);
    const void *in[] = { x };
    void *out[] = { y };
    assert_int_equal(cg_jit_entry(j)(in, out, NULL), 0);
    cg_jit_free(j);
    CgOptions o = { .triple = "x86_64-linux-gnu", .cpu = "haswell", .opt_level = 2, .emit = CG_EMIT_LLVM };
    CgResult r;
    compile_ok(p, &o, &r);
    *ll = strdup(ir_text(&r));
    cg_result_free(&r);
    loop_program_free(p);
}

static void test_vector_tanh_erf(void **state)
{
    (void)state;
    enum { N = 4096 };
    float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
    assert_true(x && y);
    for (int i = 0; i < N; i++)
        x[i] = -10.0f + 20.0f * (float)i / (N - 1);
    static const float edge[] = { 0.0f, -0.0f, 1e-8f, -1e-6f, 0.49999f, 0.5f, 3.999f, 4.0f, 100.0f, -100.0f,
                                  INFINITY, -INFINITY, NAN };
    memcpy(x, edge, sizeof edge);
    static const unsigned widths[] = { 16, 8, 4 };
    for (int f = 0; f < 2; f++)
        for (size_t wi = 0; wi < sizeof widths / sizeof *widths; wi++) {
            char *ll;
            vector_call(f ? LOOP_I_erf : LOOP_I_tanh, widths[wi], x, y, N, &ll);
            for (int i = 0; i < N; i++) {
                float want = f ? erff(x[i]) : tanhf(x[i]);
                if (isnan(x[i]))
                    assert_true(isnan(y[i]));
                else if (!(fabsf(y[i] - want) <= 5e-7f) || fabsf(y[i]) > 1.0f)
                    fail_msg("%s(%.9g) = %.9g, libm %.9g", f ? "erf" : "tanh", x[i], y[i], want);
            }
            assert_null(strstr(ll, f ? "erff" : "tanhf"));   /* no libm call per lane */
            free(ll);
        }
    free(x);
    free(y);
}

static void test_vector_min_max(void **state)
{
    (void)state;
    static const unsigned widths[] = { 16, 8, 4 };
    for (size_t wi = 0; wi < sizeof widths / sizeof *widths; wi++) {
        unsigned w = widths[wi];
        LoopProgram *p = loop_program_new("minmax");
        int a = io_buf(p, "a", IR_DT_F32, LOOP_ST_INPUT, 16), b = io_buf(p, "b", IR_DT_F32, LOOP_ST_INPUT, 16);
        int mx = io_buf(p, "mx", IR_DT_F32, LOOP_ST_OUTPUT, 16), mn = io_buf(p, "mn", IR_DT_F32, LOOP_ST_OUTPUT, 16);
        int t = loop_add_var(p, "t", IR_DT_I64), c = loop_add_var(p, "c", IR_DT_I64);
        LoopExpr *pos = B2(p, LOOP_ADD, B2(p, LOOP_MUL, V(p, t), I(p, (int64_t)w)), V(p, c));
        LoopStmt *body = loop_block(p);
        add(p, body, loop_store(p, mx, loop_expr_copy(p, pos),
                                B2(p, LOOP_MAX, loop_load(p, a, loop_expr_copy(p, pos)),
                                   loop_load(p, b, loop_expr_copy(p, pos)))));
        add(p, body, loop_store(p, mn, loop_expr_copy(p, pos),
                                B2(p, LOOP_MIN, loop_load(p, a, loop_expr_copy(p, pos)),
                                   loop_load(p, b, loop_expr_copy(p, pos)))));
        LoopStmt *vl = loop_for(p, c, I(p, (int64_t)w), LOOP_VECTORIZED, body);
        vl->u.loop.factor = (int)w;
        assert_int_equal(loop_add_kernel(p, "k", loop_for(p, t, I(p, 16 / (int64_t)w), LOOP_SERIAL, vl)), 0);
        CgJit *j = jit_ok(p, 2);
        float av[16] = { 1, NAN, 3, -7, NAN, 0.0f, -0.0f, 5, -INFINITY, INFINITY, 2, 2, -1, 8, NAN, 0 };
        float bv[16] = { 2, 1, NAN, 3, NAN, -0.0f, 0.0f, 5, 4, 1, -INFINITY, 3, -2, 9, 1, NAN };
        float rmx[16], rmn[16];
        const void *in[] = { av, bv };
        void *out[] = { rmx, rmn };
        assert_int_equal(cg_jit_entry(j)(in, out, NULL), 0);
        for (int i = 0; i < 16; i++) {
            float emx = isnan(av[i]) ? av[i] : isnan(bv[i]) ? bv[i] : av[i] > bv[i] ? av[i] : bv[i];
            float emn = isnan(av[i]) ? av[i] : isnan(bv[i]) ? bv[i] : av[i] < bv[i] ? av[i] : bv[i];
            if (isnan(emx))
                assert_true(isnan(rmx[i]) && isnan(rmn[i]));
            else {
                assert_memory_equal(&rmx[i], &emx, sizeof emx);   /* bit for bit: the sign of a zero too */
                assert_memory_equal(&rmn[i], &emn, sizeof emn);
            }
        }
        cg_jit_free(j);
        CgOptions o = { .triple = "x86_64-linux-gnu", .cpu = "skylake-avx512", .opt_level = 2, .emit = CG_EMIT_LLVM };
        CgResult r;
        compile_ok(p, &o, &r);
        assert_non_null(strstr(ir_text(&r), w == 16 ? "@llvm.x86.avx512.max.ps.512" : w == 8 ? "@llvm.x86.avx.max.ps.256"
                                                                                           : "@llvm.x86.sse.max.ps"));
        cg_result_free(&r);
        loop_program_free(p);
    }
}

/* ------------------------------------------------------------ float16 / bfloat16 */

static void test_half_types(void **state)
{
    (void)state;
    LoopProgram *p = loop_program_new("half");
    int x = io_buf(p, "x", IR_DT_F16, LOOP_ST_INPUT, 4);
    int y = io_buf(p, "y", IR_DT_F16, LOOP_ST_OUTPUT, 4), z = io_buf(p, "z", IR_DT_BF16, LOOP_ST_OUTPUT, 4);
    int i = loop_add_var(p, "i", IR_DT_I64);
    LoopStmt *body = loop_block(p);
    LoopExpr *e = B2(p, LOOP_ADD, B2(p, LOOP_MUL, loop_load(p, x, V(p, i)), F(p, IR_DT_F16, 3)), F(p, IR_DT_F16, 0.5));
    add(p, body, loop_store(p, y, V(p, i), e));
    add(p, body, loop_store(p, z, V(p, i), loop_cast(p, IR_DT_BF16, loop_load(p, x, V(p, i)))));
    assert_int_equal(loop_add_kernel(p, "k", loop_n(p, i, 4, body)), 0);
    for (size_t l = 0; l < sizeof opt_levels / sizeof *opt_levels; l++) {
        CgJit *j = jit_ok(p, opt_levels[l]);
        static const float xs[4] = { 1.0f, -2.5f, 0.1f, 1000.0f };
        uint16_t xh[4], yh[4], zh[4];
        for (int k = 0; k < 4; k++)
            xh[k] = ir_f32_to_f16(xs[k]);
        const void *in[] = { xh };
        void *out[] = { yh, zh };
        assert_int_equal(cg_jit_entry(j)(in, out, NULL), 0);
        /* 1*3+0.5 = 3.5; -2.5*3+0.5 = -7; half(0.1) = 0.0999755859375 -> 0.7999267578125 -> half 0.7998046875;
         * 1000*3+0.5 = 3000.5 -> 3000 (half spacing 2 there) */
        static const float want_y[4] = { 3.5f, -7.0f, 0.7998046875f, 3000.0f };
        /* bfloat16 of half(0.1) = 0.0999755859375 is 0.10009765625 (8 significant bits) */
        static const float want_z[4] = { 1.0f, -2.5f, 0.10009765625f, 1000.0f };
        for (int k = 0; k < 4; k++) {
            assert_float_equal(ir_f16_to_f32(yh[k]), want_y[k], 0);
            assert_float_equal(ir_bf16_to_f32(zh[k]), want_z[k], 0);
        }
        cg_jit_free(j);
    }
    loop_program_free(p);
}

/* ------------------------------------------------------------ objects */

typedef struct Elf {
    int cls;            /* 1: 32-bit, 2: 64-bit */
    unsigned machine;
    int64_t data_bytes; /* .data* / .bss* / .sdata* / .sbss* */
    int64_t writable;   /* bytes in allocated writable sections */
    int64_t sect_size;  /* size of the section named `want` */
} Elf;

static uint64_t rd(const unsigned char *b, size_t n)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v |= (uint64_t)b[i] << (8 * i);
    return v;
}

static Elf parse_elf(const UtilBuf *o, const char *want)
{
    const unsigned char *b = (const unsigned char *)o->data;
    assert_true(o->len > 64);
    assert_memory_equal(b, "\177ELF", 4);
    assert_int_equal(b[5], 1);   /* little-endian */
    Elf e = { .cls = b[4], .machine = (unsigned)rd(b + 18, 2), .sect_size = -1 };
    int w = e.cls == 2;
    uint64_t shoff = w ? rd(b + 0x28, 8) : rd(b + 0x20, 4);
    unsigned shentsize = (unsigned)rd(b + (w ? 0x3A : 0x2E), 2), shnum = (unsigned)rd(b + (w ? 0x3C : 0x30), 2);
    unsigned shstrndx = (unsigned)rd(b + (w ? 0x3E : 0x32), 2);
    assert_true(shoff + (uint64_t)shnum * shentsize <= o->len && shstrndx < shnum);
    const unsigned char *strsh = b + shoff + (size_t)shstrndx * shentsize;
    uint64_t stroff = w ? rd(strsh + 24, 8) : rd(strsh + 16, 4);
    for (unsigned i = 0; i < shnum; i++) {
        const unsigned char *sh = b + shoff + (size_t)i * shentsize;
        const char *name = (const char *)b + stroff + rd(sh, 4);
        uint64_t flags = w ? rd(sh + 8, 8) : rd(sh + 8, 4), size = w ? rd(sh + 32, 8) : rd(sh + 20, 4);
        if (!strncmp(name, ".data", 5) || !strncmp(name, ".bss", 4) || !strncmp(name, ".sdata", 6) ||
            !strncmp(name, ".sbss", 5))
            e.data_bytes += (int64_t)size;
        if ((flags & 3) == 3)   /* SHF_WRITE | SHF_ALLOC */
            e.writable += (int64_t)size;
        if (want && !strcmp(name, want))
            e.sect_size = (int64_t)size;
    }
    return e;
}

static void test_objects_for_triples(void **state)
{
    (void)state;
    static const struct { const char *triple, *cpu; int cls; unsigned machine; } targets[] = {
        { "x86_64-linux-gnu", NULL, 2, 62 },
        { "aarch64-linux-gnu", NULL, 2, 183 },
        { "thumbv7em-none-eabihf", "cortex-m4", 1, 40 },
        { "riscv64-unknown-linux-gnu", NULL, 2, 243 },
        { "riscv32-unknown-elf", NULL, 1, 243 },
    };
    LoopProgram *p = reduction();
    for (size_t t = 0; t < sizeof targets / sizeof *targets; t++) {
        CgOptions o = { .triple = targets[t].triple, .cpu = targets[t].cpu, .opt_level = 2,
                        .emit = CG_EMIT_OBJ | CG_EMIT_ASM, .weights_section = ".dlcc_weights" };
        CgResult r1, r2;
        compile_ok(p, &o, &r1);
        compile_ok(p, &o, &r2);
        Elf e = parse_elf(&r1.obj, NULL);
        assert_int_equal(e.cls, targets[t].cls);
        assert_int_equal(e.machine, targets[t].machine);
        assert_int_equal(e.data_bytes, 0);
        assert_int_equal(e.writable, 0);
        /* deterministic */
        assert_int_equal(r1.obj.len, r2.obj.len);
        assert_memory_equal(r1.obj.data, r2.obj.data, r1.obj.len);
        assert_int_equal(r1.asm_text.len, r2.asm_text.len);
        util_buf_put(&r1.asm_text, "", 1);
        assert_non_null(strstr(r1.asm_text.data, "red_run_ptrs"));
        assert_int_equal(r1.llvm_ir.len, 0);   /* not asked for */
        cg_result_free(&r1);
        cg_result_free(&r2);
        /* At -O2 the 5 weights fold into the code; at -O0 they stay in their section. */
        o.opt_level = 0;
        o.emit = 0;
        compile_ok(p, &o, &r1);
        e = parse_elf(&r1.obj, ".dlcc_weights");
        assert_int_equal(e.sect_size, 20);   /* the 5 floats of w */
        assert_int_equal(e.writable, 0);
        cg_result_free(&r1);
    }
    loop_program_free(p);
}

/* Hosted triples are position independent, bare-metal ones static: seen in
 * how the code addresses the constant w (kept at -O0). */
static void test_pic_and_static(void **state)
{
    (void)state;
    static const struct { const char *triple, *want; } cases[] = {
        { "x86_64-linux-gnu", ".Lred.w(%rip)" },
        { "riscv64-unknown-linux-gnu", "%pcrel_hi(.Lred.w)" },
        { "riscv32-unknown-elf", "%hi(.Lred.w)" },
        { "thumbv7em-none-eabihf", ":lower16:.Lred.w" },
    };
    LoopProgram *p = reduction();
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        CgOptions o = { .triple = cases[k].triple, .opt_level = 0, .emit = CG_EMIT_ASM };
        CgResult r;
        compile_ok(p, &o, &r);
        util_buf_put(&r.asm_text, "", 1);
        if (!strstr(r.asm_text.data, cases[k].want))
            print_error("%s: no '%s' in\n%s\n", cases[k].triple, cases[k].want, r.asm_text.data);
        assert_non_null(strstr(r.asm_text.data, cases[k].want));
        cg_result_free(&r);
    }
    loop_program_free(p);
}

/* for i < 64: prefetch x[i + 64]; y[i] = x[i] + 1 — the prefetch reaches
 * past x (it reads nothing), prints as a statement, is an llvm.prefetch
 * of the L2 locality (prefetcht1 on x86) and changes no value. */
static void test_prefetch(void **state)
{
    (void)state;
    LoopProgram *p = loop_program_new("pf");
    int x = io_buf(p, "x", IR_DT_F32, LOOP_ST_INPUT, 64), y = io_buf(p, "y", IR_DT_F32, LOOP_ST_OUTPUT, 64);
    int i = loop_add_var(p, "i", IR_DT_I64);
    LoopStmt *b = loop_block(p);
    add(p, b, loop_prefetch(p, x, B2(p, LOOP_ADD, V(p, i), I(p, 64))));
    add(p, b, loop_store(p, y, V(p, i), B2(p, LOOP_ADD, loop_load(p, x, V(p, i)), F(p, IR_DT_F32, 1))));
    assert_int_equal(loop_add_kernel(p, "k", loop_n(p, i, 64, b)), 0);
    UtilDiag d;
    util_diag_init(&d);
    assert_int_equal(loop_verify(p, &d), 0);
    UtilBuf t;
    util_buf_init(&t);
    loop_print(p, &t);
    util_buf_put(&t, "", 1);
    assert_non_null(strstr(t.data, "    prefetch x[i + 64]\n"));
    util_buf_free(&t);
    for (size_t l = 0; l < sizeof opt_levels / sizeof *opt_levels; l++) {
        CgJit *j = jit_ok(p, opt_levels[l]);
        float xv[64], yv[64];
        for (int k = 0; k < 64; k++)
            xv[k] = (float)k;
        const void *in[] = { xv };
        void *out[] = { yv };
        assert_int_equal(cg_jit_entry(j)(in, out, NULL), 0);
        for (int k = 0; k < 64; k++)
            assert_float_equal(yv[k], k + 1.0, 0);
        cg_jit_free(j);
    }
    CgOptions o = { .triple = "x86_64-linux-gnu", .opt_level = 2, .emit = CG_EMIT_LLVM | CG_EMIT_ASM };
    CgResult r;
    compile_ok(p, &o, &r);
    assert_non_null(strstr(ir_text(&r), "@llvm.prefetch.p0(ptr"));
    assert_non_null(strstr(ir_text(&r), "i32 0, i32 2, i32 1)"));
    util_buf_put(&r.asm_text, "", 1);
    assert_non_null(strstr(r.asm_text.data, "prefetcht1"));
    cg_result_free(&r);
    loop_program_free(p);
}

/* ------------------------------------------------------------ diagnostics */

static void test_diagnostics(void **state)
{
    (void)state;
    LoopProgram *p = bcast_add();
    CgOptions o = { .triple = "nonsense-cpu-triple", .opt_level = 2 };
    assert_diag(p, &o, 0, "unknown target triple 'nonsense-cpu-triple'");
    CgOptions o2 = { .triple = "aarch64-linux-gnu", .opt_level = 2 };
    char *host = cg_host_triple();
    if (strncmp(host, "aarch64", 7) != 0)
        assert_diag(p, &o2, 1, "the JIT runs on the host");
    free(host);
    CgOptions o3 = { .opt_level = 7 };
    assert_diag(p, &o3, 0, "optimization level 7 is not 0..3");
    /* A GPU loop kind is not for the CPU emitter. */
    p->kernels[0].body->u.loop.kind = LOOP_GPU_BLOCK_X;
    assert_diag(p, NULL, 0, "'gpu.block.x' is not a CPU loop kind");
    assert_diag(p, NULL, 1, "is not a CPU loop kind");
    /* Invalid programs are rejected by the loop verifier first. */
    p->kernels[0].body->u.loop.kind = LOOP_SERIAL;
    p->bufs[0].storage = LOOP_ST_OUTPUT;
    p->bufs[2].storage = LOOP_ST_INPUT;
    assert_diag(p, NULL, 0, "store to input buffer 'c'");
    loop_program_free(p);
}

/* The dot product instructions a target may use: x86 by CPU name or
 * features, AArch64 DotProd (SDOT: signed bytes only) and I8MM (USDOT:
 * unsigned by signed), none on Armv8.0 or with the feature turned off. */
static void test_dot_caps(void **state)
{
    (void)state;
    static const struct { const char *triple, *cpu, *features; int dot, mixed; } cases[] = {
        { "x86_64-linux-gnu", "znver5", NULL, 512, 1 },
        { "x86_64-linux-gnu", "alderlake", NULL, 256, 1 },
        { "x86_64-linux-gnu", "znver3", NULL, 0, 0 },
        { "aarch64-linux-gnu", "cortex-a53", NULL, 0, 0 },
        { "aarch64-linux-gnu", "generic", NULL, 0, 0 },
        { "aarch64-linux-gnu", "neoverse-n1", NULL, 128, 0 },
        { "aarch64-linux-gnu", "neoverse-v1", NULL, 128, 1 },
        { "aarch64-linux-gnu", "neoverse-v1", "-i8mm", 128, 0 },
        { "aarch64-linux-gnu", "neoverse-n1", "-dotprod", 0, 0 },
        { "aarch64-linux-gnu", "generic", "+dotprod", 128, 0 },
        { "aarch64-linux-gnu", "generic", "+dotprod,+i8mm", 128, 1 },
        { "aarch64-linux-gnu", "generic", "+i8mm", 0, 0 },
        { "aarch64-linux-gnu", "generic", "+dotprod,-neon", 0, 0 },
        { "thumbv7em-none-eabihf", "cortex-m4", NULL, 0, 0 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        CgOptions o = { .triple = cases[i].triple, .cpu = cases[i].cpu, .features = cases[i].features };
        assert_int_equal(cg_dot_i8_bits(&o, 0), cases[i].dot);
        assert_int_equal(cg_dot_i8_mixed(&o, 0), cases[i].mixed);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_elementwise_broadcast),
        cmocka_unit_test(test_dot_caps),
        cmocka_unit_test(test_reduction_workspace_const_local),
        cmocka_unit_test(test_null_pointers),
        cmocka_unit_test(test_int_div_mod_if_select),
        cmocka_unit_test(test_casts_bool_parallel),
        cmocka_unit_test(test_intrinsics),
        cmocka_unit_test(test_float_min_max_mod),
        cmocka_unit_test(test_vectorized_loop),
        cmocka_unit_test(test_vector_exp),
        cmocka_unit_test(test_vector_tanh_erf),
        cmocka_unit_test(test_vector_row_end),
        cmocka_unit_test(test_vector_min_max),
        cmocka_unit_test(test_vector_guarded_strided),
        cmocka_unit_test(test_vector_guarded_bytes),
        cmocka_unit_test(test_vector_masked_bytes),
        cmocka_unit_test(test_vector_strided_lead),
        cmocka_unit_test(test_vector_grouped_load),
        cmocka_unit_test(test_half_types),
        cmocka_unit_test(test_objects_for_triples),
        cmocka_unit_test(test_pic_and_static),
        cmocka_unit_test(test_prefetch),
        cmocka_unit_test(test_diagnostics),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
