/* tests/unit/test_passes.c — graph optimization: every simplifier rule
 * (graph before → golden ir_print after, outputs unchanged), constant
 * folding, DCE, CSE, Identity/Dropout removal, BatchNormalization and weight
 * folding (hand-computed weights), the pass manager (pipelines, printing,
 * timing, the checks between passes), a seeded property test over random
 * graphs, and the e2e models at -O2 against -O0. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/frontend.h"
#include "interp/interp.h"
#include "passes/passes.h"

/* ------------------------------------------------------------ a tiny graph language
 *
 * Statements separated by ';':
 *   x = input f32 [2,3]            graph input
 *   c = const f32 [2] 1,2          initializer; one value fills every element
 *   y = Op a b _ {perm=1,0 to=11}  node (inputs by name, _ absent; attributes
 *   y,m = Dropout x                by their declared kind); several outputs
 *   out y                          graph output
 * Test graphs only: operator names are looked up with ir_op_from_name. */

static IrDType dt_of(const char *s)
{
    static const struct { const char *n; IrDType t; } m[] = {
        { "f32", IR_DT_F32 }, { "f64", IR_DT_F64 }, { "f16", IR_DT_F16 }, { "i64", IR_DT_I64 },
        { "i32", IR_DT_I32 }, { "i8", IR_DT_I8 }, { "u8", IR_DT_U8 }, { "bool", IR_DT_BOOL },
    };
    for (size_t i = 0; i < sizeof m / sizeof *m; i++)
        if (strcmp(s, m[i].n) == 0)
            return m[i].t;
    fail_msg("unknown dtype %s", s);
    return IR_DT_UNDEF;
}

static int parse_list(const char *s, double *v, int max)
{
    int n = 0;
    while (*s && *s != ']' && n < max) {
        char *e;
        v[n++] = strtod(s, &e);
        if (e == s)
            break;
        s = e;
        while (*s == ',' || *s == ' ')
            s++;
    }
    return n;
}

static int tensor(IrGraph *g, const char *name, IrTensorKind kind)
{
    int t = ir_find_tensor(g, name);
    if (t >= 0)
        return t;
    UtilDiag d;
    util_diag_init(&d);
    return ir_add_tensor(g, name, kind, util_loc_file("t.json"), &d);
}

static void set_attr(IrGraph *g, int node, char *kv)
{
    char *eq = strchr(kv, '=');
    assert_non_null(eq);
    *eq = 0;
    IrAttrKey key = ir_attr_from_name(kv);
    IrAttrKind kind = ir_op_attr_kind(g->nodes[node].op, key);
    assert_int_not_equal(kind, IR_AK_NONE);
    double v[16];
    int64_t iv[16];
    int n = parse_list(eq + 1, v, 16);
    for (int i = 0; i < n; i++)
        iv[i] = (int64_t)v[i];
    IrAttr a = { .key = key, .kind = kind };
    if (kind == IR_AK_INT)
        a.v.i = iv[0];
    else if (kind == IR_AK_FLOAT)
        a.v.f = v[0];
    else if (kind == IR_AK_INTS) {
        a.n = n;
        a.v.ints = iv;
    } else if (kind == IR_AK_FLOATS) {
        a.n = n;
        a.v.floats = v;
    } else {
        a.v.s = eq + 1;
    }
    assert_int_equal(ir_set_attr(g, node, &a), 0);
}

/* Builds and infers the graph described by src. */
static IrGraph *build(const char *src)
{
    IrGraph *g = ir_graph_new("t", "t.json");
    char *text = strdup(src), *save = NULL;
    for (char *st = strtok_r(text, ";", &save); st; st = strtok_r(NULL, ";", &save)) {
        while (*st == ' ' || *st == '\n')
            st++;
        if (!*st)
            continue;
        char lhs[128], op[64], rest[512] = "";
        if (sscanf(st, "out %127s", lhs) == 1) {
            ir_add_output(g, tensor(g, lhs, IR_TK_VALUE));
            continue;
        }
        int nread = 0;
        assert_true(sscanf(st, "%127[^= ] = %63s %n", lhs, op, &nread) >= 2);
        snprintf(rest, sizeof rest, "%s", st + nread);
        if (strcmp(op, "input") == 0 || strcmp(op, "const") == 0) {
            char dts[16];
            int k = 0;
            assert_int_equal(sscanf(rest, "%15s [%n", dts, &k), 1);
            double dims[IR_MAX_RANK], vals[4096];
            IrShape s = { .rank = parse_list(rest + k, dims, IR_MAX_RANK) };
            for (int i = 0; i < s.rank; i++)
                s.dims[i] = (int64_t)dims[i];
            int t = tensor(g, lhs, op[0] == 'i' ? IR_TK_INPUT : IR_TK_CONST);
            ir_set_type(g, t, dt_of(dts), &s);
            if (op[0] == 'i') {
                ir_add_input(g, t);
                continue;
            }
            int nv = parse_list(strchr(rest, ']') + 1, vals, 4096);
            void *data = ir_alloc_data(g, t);
            for (int64_t i = 0; i < ir_shape_numel(&s); i++)
                ir_store_f64(dt_of(dts), data, i, vals[nv == 1 ? 0 : i]);
            continue;
        }
        IrOp o = ir_op_from_name(op);
        assert_int_not_equal(o, IR_OP_INVALID);
        int in[16], out[8], ni = 0, no = 0;
        char *attrs = strchr(rest, '{');
        if (attrs)
            *attrs++ = 0;
        char *s2 = NULL;
        for (char *w = strtok_r(rest, " ", &s2); w; w = strtok_r(NULL, " ", &s2))
            in[ni++] = strcmp(w, "_") == 0 ? -1 : tensor(g, w, IR_TK_VALUE);
        char *s3 = NULL;
        for (char *w = strtok_r(lhs, ",", &s3); w; w = strtok_r(NULL, ",", &s3))
            out[no++] = strcmp(w, "_") == 0 ? -1 : tensor(g, w, IR_TK_VALUE);
        int node = ir_add_node(g, o, "", ni, in, no, out, util_loc_file("t.json"));
        if (attrs) {
            char *e = strchr(attrs, '}');
            if (e)
                *e = 0;
            char *s4 = NULL;
            for (char *kv = strtok_r(attrs, " ", &s4); kv; kv = strtok_r(NULL, " ", &s4))
                set_attr(g, node, kv);
        }
    }
    free(text);
    UtilDiag d;
    util_diag_init(&d);
    if (pass_infer(g, &d))
        fail_msg("infer: %s", d.msg);
    return g;
}

static char *print(const IrGraph *g)
{
    UtilBuf b;
    util_buf_init(&b);
    ir_print(g, &b);
    util_buf_put(&b, "", 1);
    return b.data;
}

/* ------------------------------------------------------------ running and comparing */

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Uniform in [-2, 2), seeded: the same inputs for both graphs. */
static void fill_inputs(const IrGraph *g, IrArray *in, uint64_t seed)
{
    for (int i = 0; i < g->n_inputs; i++) {
        const IrTensor *t = &g->tensors[g->inputs[i]];
        in[i] = (IrArray){ t->v.dtype, t->v.shape, NULL };
        int64_t n = ir_shape_numel(&t->v.shape);
        in[i].data = calloc((size_t)(n ? n : 1), ir_dtype_size(t->v.dtype));
        for (int64_t k = 0; k < n; k++) {
            double v = (double)(rng_next(&seed) % 4096) / 1024.0 - 2.0;
            ir_store_f64(t->v.dtype, in[i].data, k, t->v.dtype == IR_DT_BOOL ? v > 0 : v);
        }
    }
}

/* Max relative error of b against a over all outputs (NaN where both are
 * NaN counts as equal; a NaN on one side only is an infinite error). */
static double max_rel_err(const IrArray *a, const IrArray *b, int n, double atol)
{
    double worst = 0;
    for (int o = 0; o < n; o++) {
        assert_int_equal(a[o].dtype, b[o].dtype);
        assert_true(ir_shape_equal(&a[o].shape, &b[o].shape));
        for (int64_t k = 0; k < ir_array_numel(&a[o]); k++) {
            double x = ir_load_f64(a[o].dtype, a[o].data, k), y = ir_load_f64(b[o].dtype, b[o].data, k);
            if (isnan(x) || isnan(y)) {
                if (!(isnan(x) && isnan(y)))
                    return INFINITY;
                continue;
            }
            if (x == y)
                continue;
            double e = fabs(x - y) / (fabs(x) + atol);
            if (e > worst)
                worst = e;
        }
    }
    return worst;
}

static IrArray *run(const IrGraph *g, uint64_t seed)
{
    IrArray *in = calloc((size_t)g->n_inputs + 1, sizeof *in), *out = calloc((size_t)g->n_outputs + 1, sizeof *out);
    fill_inputs(g, in, seed);
    UtilDiag d;
    util_diag_init(&d);
    if (interp_run(g, in, out, &d))
        fail_msg("interp: %s", d.msg);
    for (int i = 0; i < g->n_inputs; i++)
        free(in[i].data);
    free(in);
    return out;
}

static void free_outputs(IrArray *o, int n)
{
    for (int i = 0; i < n; i++)
        free(o[i].data);
    free(o);
}

/* Runs pass p (with the between-pass checks), expects `golden` from
 * ir_print and outputs within rtol of the unoptimized graph's. */
static void check_pass(const char *pass, const char *src, const char *golden, double rtol)
{
    IrGraph *ref = build(src), *g = build(src);
    UtilDiag d;
    util_diag_init(&d);
    const PassInfo *p = pass_find(pass);
    assert_non_null(p);
    if (pass_run_checked(g, p, &d) < 0)
        fail_msg("%s: %s", pass, d.msg);
    char *txt = print(g);
    if (!golden && getenv("DLCC_DUMP_GOLDEN"))         /* to write a new case's golden */
        printf("@@@%s\n%s@@@\n", src, txt);
    if (golden && strcmp(txt, golden) != 0)
        fail_msg("%s on\n  %s\ngave\n%swant\n%s", pass, src, txt, golden);
    free(txt);
    for (uint64_t seed = 1; seed <= 3; seed++) {
        IrArray *a = run(ref, seed * 0x9E3779B97F4A7C15ull), *b = run(g, seed * 0x9E3779B97F4A7C15ull);
        double e = max_rel_err(a, b, ref->n_outputs, 1e-6);
        if (e > rtol)
            fail_msg("%s changed the outputs of\n  %s\n(relative error %g)", pass, src, e);
        free_outputs(a, ref->n_outputs);
        free_outputs(b, g->n_outputs);
    }
    ir_graph_free(ref);
    ir_graph_free(g);
}

#define HEAD "graph t (opset 21) {\n  input %x: float32[2,3]\n"

/* ------------------------------------------------------------ simplifier rules */

typedef struct RuleCase {
    const char *rule;
    const char *src;
    const char *golden;
} RuleCase;

/* Each graph applies the rule once; a Relu consumer keeps the rewritten
 * node from being a graph output fed by a graph input. */
static const RuleCase rule_cases[] = {
#include "tests/unit/passes_rules.h"
};

static void test_rules(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof rule_cases / sizeof *rule_cases; i++)
        check_pass("simplify", rule_cases[i].src, rule_cases[i].golden, 1e-5);
}

/* Every rule in the table has a case above (named in its first line). */
static void test_rules_covered(void **state)
{
    (void)state;
    const char *name, *alg;
    int n = pass_simplify_rule(0, &name, &alg);
    assert_true(n >= 30);
    for (int r = 0; r < n; r++) {
        pass_simplify_rule(r, &name, &alg);
        int found = 0;
        for (size_t i = 0; i < sizeof rule_cases / sizeof *rule_cases && !found; i++)
            found = strcmp(rule_cases[i].rule, name) == 0;
        if (!found)
            fail_msg("rule %s has no before/after test", name);
    }
}

/* docs/passes.md lists every rule with its algebra, as the table says. */
static void test_rules_documented(void **state)
{
    (void)state;
    char *doc;
    size_t len;
    UtilDiag d;
    util_diag_init(&d);
    assert_int_equal(util_read_file(DLCC_SOURCE_ROOT "/docs/passes.md", 1 << 20, &doc, &len, &d), 0);
    const char *name, *alg;
    int n = pass_simplify_rule(0, &name, &alg);
    for (int r = 0; r < n; r++) {
        pass_simplify_rule(r, &name, &alg);
        char line[512];
        snprintf(line, sizeof line, "| `%s` | %s |", name, alg);
        if (!strstr(doc, line))
            fail_msg("docs/passes.md lacks the row:\n%s", line);
    }
    free(doc);
}

/* Rules that must not fire. */
static void test_rules_refused(void **state)
{
    (void)state;
    static const char *const srcs[] = {
        /* x * 0 is not 0 for NaN / inf */
        "x = input f32 [2,3]; z = const f32 [] 0; t = Mul x z; y = Relu t; out y",
        /* x * 1 where the 1 broadcasts x to a larger shape */
        "x = input f32 [2,3]; o = const f32 [4,2,3] 1; t = Mul x o; y = Relu t; out y",
        /* clip(clip(x, 0, 1), 2, 3): disjoint ranges */
        "x = input f32 [2,3]; a = const f32 [] 0; b = const f32 [] 1; c = const f32 [] 2; e = const f32 [] 3;"
        "t = Clip x a b; y = Clip t c e; out y",
        /* cast f32 → i32 → f32 loses the fraction */
        "x = input f32 [2,3]; t = Cast x {to=6}; y = Cast t {to=1}; out y",
        /* an interior node with another use is not duplicated */
        "x = input f32 [2,3]; a = const f32 [] 2; b = const f32 [] 3; t = Mul x a; y = Mul t b; out y; out t",
        /* integer division stays a division */
        "x = input i32 [2,3]; c = const i32 [] 2; t = Div x c; y = Abs t; out y",
    };
    for (size_t i = 0; i < sizeof srcs / sizeof *srcs; i++) {
        IrGraph *g = build(srcs[i]);
        char *before = print(g);
        UtilDiag d;
        util_diag_init(&d);
        assert_int_equal(pass_run_checked(g, pass_find("simplify"), &d), 0);
        char *after = print(g);
        if (strcmp(before, after))
            fail_msg("simplify rewrote\n%s\ninto\n%s", before, after);
        free(before);
        free(after);
        ir_graph_free(g);
    }
}

/* ------------------------------------------------------------ the other passes */

static void test_fold_shape_arithmetic(void **state)
{
    (void)state;
    /* Shape → Gather → Concat → Reshape: the shape operand folds away */
    check_pass("fold-constants",
               "x = input f32 [2,3,4]; s = Shape x; i = const i64 [1] 0; n = Gather s i {axis=0};"
               "m = const i64 [1] -1; c = Concat n m {axis=0}; y = Reshape x c; out y",
               "graph t (opset 21) {\n"
               "  input %x: float32[2,3,4]\n"
               "  const %c: int64[2] = {2, -1}\n"
               "  %y: float32[2,12] = Reshape(%x, %c)\n"
               "  return %y\n"
               "}\n", 0);
}

static void test_fold_limit(void **state)
{
    (void)state;
    /* 64 MiB of ConstantOfShape stays a node; 4 KiB folds */
    IrGraph *g = build("x = input f32 [2]; s = const i64 [2] 4096,4096; t = ConstantOfShape s;"
                       "s2 = const i64 [1] 1024; u = ConstantOfShape s2; out t; out u");
    UtilDiag d;
    util_diag_init(&d);
    assert_int_equal(pass_run_checked(g, pass_find("fold-constants"), &d), 1);
    assert_int_equal(g->n_nodes, 1);
    assert_int_equal(g->nodes[0].op, IR_OP_ConstantOfShape);
    assert_int_equal(g->tensors[g->outputs[1]].kind, IR_TK_CONST);
    ir_graph_free(g);
}

static void test_dce(void **state)
{
    (void)state;
    check_pass("dce", "x = input f32 [2,3]; a = Relu x; b = Neg a; c = Exp x; y = Abs c; out y",
               HEAD
               "  %c: float32[2,3] = Exp(%x)\n"
               "  %y: float32[2,3] = Abs(%c)\n"
               "  return %y\n"
               "}\n", 0);
}

static void test_cse(void **state)
{
    (void)state;
    /* equal constants merge, then Add(x, c1) and Add(c2, x) are one node,
     * then the two Relus */
    check_pass("cse",
               "x = input f32 [2,3]; c1 = const f32 [] 2; c2 = const f32 [] 2; a = Add x c1; b = Add c2 x;"
               "r = Relu a; s = Relu b; t = Transpose r {perm=1,0}; u = Transpose s {perm=0,1}; y = Sum t t; out y; out u",
               HEAD
               "  const %c1: float32[] = {2}\n"
               "  %a: float32[2,3] = Add(%x, %c1)\n"
               "  %r: float32[2,3] = Relu(%a)\n"
               "  %t: float32[3,2] = Transpose(%r) {perm=[1,0]}\n"
               "  %u: float32[2,3] = Transpose(%r) {perm=[0,1]}\n"
               "  %y: float32[3,2] = Sum(%t, %t)\n"
               "  return %y, %u\n"
               "}\n", 0);
}

static void test_remove_identity(void **state)
{
    (void)state;
    check_pass("remove-identity",
               "x = input f32 [2,3]; a = Identity x; b,m = Dropout a; c = Relu b; mf = Cast m {to=1}; y = Add c mf;"
               "z = Identity x; out y; out z",
               HEAD
               "  const %m__0: bool[2,3] = {1, 1, 1, 1, 1, 1}\n"
               "  %c: float32[2,3] = Relu(%x)\n"
               "  %mf: float32[2,3] = Cast(%m__0) {to=1}\n"
               "  %y: float32[2,3] = Add(%c, %mf)\n"
               "  %z: float32[2,3] = Identity(%x)\n"
               "  return %y, %z\n"
               "}\n", 0);
}

/* src at -O2 is one Conv (then a Relu) with 2x2 weights want_w and bias
 * want_b, and the same outputs (rtol 1e-5). */
static void check_conv_fold(const char *src, const float *want_w, const float *want_b)
{
    IrGraph *g = build(src), *ref = build(src);
    PassOptions o = pass_options(2);
    o.verify = 1;
    UtilDiag d;
    util_diag_init(&d);
    assert_int_equal(pass_run_pipeline(g, &o, &d), 0);
    assert_int_equal(g->n_nodes, 2);
    const IrNode *c = &g->nodes[0];
    assert_int_equal(c->op, IR_OP_Conv);
    const float *w = g->tensors[c->in[1]].v.data, *b = g->tensors[c->in[2]].v.data;
    for (int i = 0; i < 4; i++)
        assert_float_equal(w[i], want_w[i], 1e-6);
    for (int i = 0; i < 2; i++)
        assert_float_equal(b[i], want_b[i], 1e-6);
    IrArray *x = run(ref, 7), *y = run(g, 7);
    assert_true(max_rel_err(x, y, 1, 1e-6) < 1e-5);
    free_outputs(x, 1);
    free_outputs(y, 1);
    ir_graph_free(g);
    ir_graph_free(ref);
}

/* Conv → BatchNormalization → one Conv with hand-computed weights:
 * scale = [2, 6], var = [3, 8] (+ eps 1): s = scale / sqrt(var + eps) = [1, 2];
 * t = B - mean * s = [1 - 1*1, 0 - 2*2] = [0, -4].
 * W = [[1,2],[3,4]] (2 out channels, 1 in, 1x2), b = [0.5, -1]:
 * W' = [[1,2],[6,8]], b' = b*s + t = [0.5, -6]. */
static void test_fold_batchnorm_conv(void **state)
{
    (void)state;
    check_conv_fold("x = input f32 [1,1,1,3]; w = const f32 [2,1,1,2] 1,2,3,4; b = const f32 [2] 0.5,-1;"
                    "c = Conv x w b; sc = const f32 [2] 2,6; bb = const f32 [2] 1,0; mu = const f32 [2] 1,2;"
                    "v = const f32 [2] 3,8; n = BatchNormalization c sc bb mu v {epsilon=1}; y = Relu n; out y",
                    (const float[]){ 1, 2, 6, 8 }, (const float[]){ 0.5f, -6 });
}

/* A BatchNormalization on its own becomes x * s + t (same numbers). */
static void test_fold_batchnorm_alone(void **state)
{
    (void)state;
    check_pass("fold-batchnorm",
               "x = input f32 [1,2,3]; sc = const f32 [2] 2,6; bb = const f32 [2] 1,0; mu = const f32 [2] 1,2;"
               "v = const f32 [2] 3,8; n = BatchNormalization x sc bb mu v {epsilon=1}; y = Relu n; out y",
               "graph t (opset 21) {\n"
               "  input %x: float32[1,2,3]\n"
               "  const %n__0: float32[2,1] = {1, 2}\n"
               "  const %n__1: float32[2,1] = {0, -4}\n"
               "  %n__2: float32[1,2,3] = Mul(%x, %n__0)  # n\n"
               "  %n__3: float32[1,2,3] = Add(%n__2, %n__1)  # n\n"
               "  %y: float32[1,2,3] = Relu(%n__3)\n"
               "  return %y\n"
               "}\n", 1e-5);
}

/* Gemm * s (per column) + t: B's columns scale, C = C*s + t.
 * A [1,2], B = [[1,2],[3,4]] (K=2, N=2), C = [1,1], s = [2,3], t = [10,20]:
 * B' = [[2,6],[6,12]], C' = [12, 23]. */
static void test_fold_weights_gemm(void **state)
{
    (void)state;
    check_pass("fold-weights",
               "x = input f32 [1,2]; b = const f32 [2,2] 1,2,3,4; c = const f32 [2] 1,1; g = Gemm x b c;"
               "s = const f32 [2] 2,3; m = Mul g s; t = const f32 [2] 10,20; a = Add m t; y = Relu a; out y",
               "graph t (opset 21) {\n"
               "  input %x: float32[1,2]\n"
               "  const %b__0: float32[2,2] = {2, 6, 6, 12}\n"
               "  const %c__1: float32[2] = {12, 23}\n"
               "  %a__0: float32[1,2] = Gemm(%x, %b__0, %c__1) {beta=1}\n"
               "  %y: float32[1,2] = Relu(%a__0)\n"
               "  return %y\n"
               "}\n", 1e-5);
}

/* MatMul(x, W) * s + t with W constant: W scales, the add makes a Gemm. */
static void test_fold_weights_matmul(void **state)
{
    (void)state;
    check_pass("fold-weights",
               "x = input f32 [3,2]; w = const f32 [2,2] 1,2,3,4; g = MatMul x w;"
               "s = const f32 [2] 2,3; m = Mul g s; t = const f32 [1,2] 10,20; a = Add m t; y = Relu a; out y",
               "graph t (opset 21) {\n"
               "  input %x: float32[3,2]\n"
               "  const %w__0: float32[2,2] = {2, 6, 6, 12}\n"
               "  const %bias__0: float32[2] = {10, 20}\n"
               "  %a__0: float32[3,2] = Gemm(%x, %w__0, %bias__0)  # a\n"
               "  %y: float32[3,2] = Relu(%a__0)\n"
               "  return %y\n"
               "}\n", 1e-5);
}

/* Sub and Div by constants after a Conv: one affine, then into the Conv:
 * W' = W / d per out channel, b' = -m / d: [0.5, 1, 0.75, 1], [-0.5, -0.5]. */
static void test_affine_into_conv(void **state)
{
    (void)state;
    check_conv_fold("x = input f32 [1,2,3,3]; w = const f32 [2,2,1,1] 1,2,3,4; c = Conv x w;"
                    "m = const f32 [2,1,1] 1,2; s = Sub c m; d = const f32 [2,1,1] 2,4; q = Div s d; y = Relu q; out y",
                    (const float[]){ 0.5f, 1, 0.75f, 1 }, (const float[]){ -0.5f, -0.5f });
}

/* ConvTranspose + per-channel constant: into its bias. */
static void test_fold_weights_convtranspose(void **state)
{
    (void)state;
    check_pass("fold-weights",
               "x = input f32 [1,1,2,2]; w = const f32 [1,2,1,1] 1,-1; c = ConvTranspose x w;"
               "t = const f32 [1,2,1,1] 0.5,3; a = Add t c; y = Relu a; out y",
               "graph t (opset 21) {\n"
               "  input %x: float32[1,1,2,2]\n"
               "  const %w: float32[1,2,1,1] = {1, -1}\n"
               "  const %bias__0: float32[2] = {0.5, 3}\n"
               "  %a__0: float32[1,2,2,2] = ConvTranspose(%x, %w, %bias__0)\n"
               "  %y: float32[1,2,2,2] = Relu(%a__0)\n"
               "  return %y\n"
               "}\n", 1e-6);
}

/* A rewritten graph output keeps its name (the producer of the replacement
 * writes it), and a graph output that folds becomes a constant output. */
static void test_output_names(void **state)
{
    (void)state;
    check_pass("simplify", "x = input f32 [2,3]; a = Relu x; y = Relu a; out y",
               HEAD
               "  %y: float32[2,3] = Relu(%x)\n"
               "  return %y\n"
               "}\n", 0);
    check_pass("fold-constants", "x = input f32 [2,3]; c = const f32 [2] 1,-2; y = Neg c; z = Relu x; out y; out z",
               HEAD
               "  const %y: float32[2] = {-1, 2}\n"
               "  %z: float32[2,3] = Relu(%x)\n"
               "  return %y, %z\n"
               "}\n", 0);
}

/* ------------------------------------------------------------ quantized products (qdq)
 *
 * Scales chosen so that no exact product lands near a tie between two steps
 * (x_s w_s / y_s = 865/917 and 871/1834: a tie needs an accumulator that is
 * a multiple of 917), so the integer form equals the float graph exactly. */

#define QX "x = input i8 [1,2,2,2]; xs = const f32 [] 0.5; xz = const i8 [] 1; dx = DequantizeLinear x xs xz;"
#define QW "w = const i8 [2,2,1,1] 3,-5,7,2; ws = const f32 [2] 0.173,0.0871; dw = DequantizeLinear w ws {axis=0};"
#define QY "ys = const f32 [] 0.0917; yz = const i8 [] -3;"

static void test_qdq_conv(void **state)
{
    (void)state;
    /* DQ → Conv (int32 bias) → Relu → Q: QLinearConv, the Relu a Max at the zero point */
    check_pass("qdq", QX QW "b = const i32 [2] 10,-20; bs = const f32 [2] 0.0865,0.04355;"
               "db = DequantizeLinear b bs {axis=0}; c = Conv dx dw db; r = Relu c;" QY
               "y = QuantizeLinear r ys yz; out y",
               "graph t (opset 21) {\n"
               "  input %x: int8[1,2,2,2]\n"
               "  const %w: int8[2,2,1,1] = {3, -5, 7, 2}\n"
               "  const %ws: float32[2] = {0.172999993, 0.0870999992}\n"
               "  const %b: int32[2] = {10, -20}\n"
               "  const %bs: float32[2] = {0.0864999965, 0.0435499996}\n"
               "  const %w__0: float32[2,2,1,1] = {3, -5, 7, 2}\n"
               "  const %xz__0: float32[] = {1}\n"
               "  const %b__0: float32[2] = {10, -20}\n"
               "  const %y__0: float32[2,1,1] = {0.943293273, 0.474918187}\n"
               "  const %y__4: float32[] = {-3}\n"
               "  const %y__6: float32[] = {-3}\n"
               "  const %y__7: float32[] = {127}\n"
               "  const %dx__0: float32[] = {1}\n"
               "  const %dx__2: float32[] = {0.5}\n"
               "  %dw: float32[2,2,1,1] = DequantizeLinear(%w, %ws) {axis=0}\n"
               "  %db: float32[2] = DequantizeLinear(%b, %bs) {axis=0}\n"
               "  %x__0: float32[1,2,2,2] = Cast(%x) {to=1}  # x\n"
               "  %x__1: float32[1,2,2,2] = Sub(%x__0, %xz__0)  # x\n"
               "  %c__0: float32[1,2,2,2] = Conv(%x__1, %w__0, %b__0)  # c\n"
               "  %y__1: float32[1,2,2,2] = Round(%c__0)  # y\n"
               "  %y__2: float32[1,2,2,2] = Mul(%y__1, %y__0)  # y\n"
               "  %y__3: float32[1,2,2,2] = Round(%y__2)  # y\n"
               "  %y__5: float32[1,2,2,2] = Add(%y__3, %y__4)  # y\n"
               "  %y__8: float32[1,2,2,2] = Clip(%y__5, %y__6, %y__7)  # y\n"
               "  %y: int8[1,2,2,2] = Cast(%y__8) {to=3}  # y\n"
               "  %x__2: float32[1,2,2,2] = Cast(%x) {to=1}  # x\n"
               "  %dx__1: float32[1,2,2,2] = Sub(%x__2, %dx__0)  # dx\n"
               "  %dx__3: float32[1,2,2,2] = Mul(%dx__1, %dx__2)  # dx\n"
               "  return %y\n"
               "}\n", 0);
    /* two layers: the second reads the first's requantized float32 values,
     * not a Cast of its int8 output */
    check_pass("qdq", QX QW "c = Conv dx dw;" QY "q = QuantizeLinear c ys yz; d = DequantizeLinear q ys yz;"
               "v = const i8 [2,2,1,1] 1,2,-3,4; vs = const f32 [2] 0.0713,0.0377; dv = DequantizeLinear v vs {axis=0};"
               "e = Conv d dv; y = QuantizeLinear e ys yz; out y",
               "graph t (opset 21) {\n"
               "  input %x: int8[1,2,2,2]\n"
               "  const %w: int8[2,2,1,1] = {3, -5, 7, 2}\n"
               "  const %ws: float32[2] = {0.172999993, 0.0870999992}\n"
               "  const %v: int8[2,2,1,1] = {1, 2, -3, 4}\n"
               "  const %vs: float32[2] = {0.0713, 0.0377000012}\n"
               "  const %w__0: float32[2,2,1,1] = {3, -5, 7, 2}\n"
               "  const %xz__0: float32[] = {1}\n"
               "  const %q__0: float32[2,1,1] = {0.943293273, 0.474918187}\n"
               "  const %q__4: float32[] = {-3}\n"
               "  const %q__6: float32[] = {-128}\n"
               "  const %q__7: float32[] = {127}\n"
               "  const %v__0: float32[2,2,1,1] = {1, 2, -3, 4}\n"
               "  const %yz__0: float32[] = {-3}\n"
               "  const %y__0: float32[2,1,1] = {0.0713, 0.0377000012}\n"
               "  const %y__4: float32[] = {-3}\n"
               "  const %y__6: float32[] = {-128}\n"
               "  const %y__7: float32[] = {127}\n"
               "  const %dx__0: float32[] = {1}\n"
               "  const %dx__2: float32[] = {0.5}\n"
               "  const %d__0: float32[] = {-3}\n"
               "  const %d__2: float32[] = {0.0917000026}\n"
               "  %dw: float32[2,2,1,1] = DequantizeLinear(%w, %ws) {axis=0}\n"
               "  %dv: float32[2,2,1,1] = DequantizeLinear(%v, %vs) {axis=0}\n"
               "  %x__0: float32[1,2,2,2] = Cast(%x) {to=1}  # x\n"
               "  %x__1: float32[1,2,2,2] = Sub(%x__0, %xz__0)  # x\n"
               "  %c__0: float32[1,2,2,2] = Conv(%x__1, %w__0)  # c\n"
               "  %q__1: float32[1,2,2,2] = Round(%c__0)  # q\n"
               "  %q__2: float32[1,2,2,2] = Mul(%q__1, %q__0)  # q\n"
               "  %q__3: float32[1,2,2,2] = Round(%q__2)  # q\n"
               "  %q__5: float32[1,2,2,2] = Add(%q__3, %q__4)  # q\n"
               "  %q__8: float32[1,2,2,2] = Clip(%q__5, %q__6, %q__7)  # q\n"
               "  %q__9: int8[1,2,2,2] = Cast(%q__8) {to=3}  # q\n"
               "  %q__10: float32[1,2,2,2] = Sub(%q__8, %yz__0)  # q__9\n"
               "  %e__0: float32[1,2,2,2] = Conv(%q__10, %v__0)  # e\n"
               "  %y__1: float32[1,2,2,2] = Round(%e__0)  # y\n"
               "  %y__2: float32[1,2,2,2] = Mul(%y__1, %y__0)  # y\n"
               "  %y__3: float32[1,2,2,2] = Round(%y__2)  # y\n"
               "  %y__5: float32[1,2,2,2] = Add(%y__3, %y__4)  # y\n"
               "  %y__8: float32[1,2,2,2] = Clip(%y__5, %y__6, %y__7)  # y\n"
               "  %y: int8[1,2,2,2] = Cast(%y__8) {to=3}  # y\n"
               "  %x__2: float32[1,2,2,2] = Cast(%x) {to=1}  # x\n"
               "  %dx__1: float32[1,2,2,2] = Sub(%x__2, %dx__0)  # dx\n"
               "  %dx__3: float32[1,2,2,2] = Mul(%dx__1, %dx__2)  # dx\n"
               "  %d__1: float32[1,2,2,2] = Sub(%q__8, %d__0)  # d\n"
               "  %d__3: float32[1,2,2,2] = Mul(%d__1, %d__2)  # d\n"
               "  return %y\n"
               "}\n", 0);
    /* sums that may leave float32's integers (X = 255, 600 weights of 127):
     * the input channels in two chunks, their sums added as int32 */
    check_pass("qdq", "x = input u8 [1,600,1,1]; xs = const f32 [] 0.5; xz = const u8 [] 0; dx = DequantizeLinear x xs xz;"
               "w = const i8 [2,600,1,1] 127; ws = const f32 [2] 0.173,0.0871; dw = DequantizeLinear w ws {axis=0};"
               "c = Conv dx dw;" QY "y = QuantizeLinear c ys yz; out y",
               "graph t (opset 21) {\n"
               "  input %x: uint8[1,600,1,1]\n"
               "  const %w: int8[2,600,1,1] = {127, 127, 127, 127, 127, 127, 127, 127, ... (1200)}\n"
               "  const %ws: float32[2] = {0.172999993, 0.0870999992}\n"
               "  const %w__0: float32[2,300,1,1] = {127, 127, 127, 127, 127, 127, 127, 127, ... (600)}\n"
               "  const %c__0: int64[1] = {0}\n"
               "  const %c__1: int64[1] = {300}\n"
               "  const %c__2: int64[1] = {1}\n"
               "  const %w__1: float32[2,300,1,1] = {127, 127, 127, 127, 127, 127, 127, 127, ... (600)}\n"
               "  const %c__6: int64[1] = {300}\n"
               "  const %c__7: int64[1] = {600}\n"
               "  const %c__8: int64[1] = {1}\n"
               "  const %y__0: float32[2,1,1] = {0.943293273, 0.474918187}\n"
               "  const %y__4: float32[] = {-3}\n"
               "  const %y__6: float32[] = {-128}\n"
               "  const %y__7: float32[] = {127}\n"
               "  const %dx__0: float32[] = {0.5}\n"
               "  %dw: float32[2,600,1,1] = DequantizeLinear(%w, %ws) {axis=0}\n"
               "  %x__0: float32[1,600,1,1] = Cast(%x) {to=1}  # x\n"
               "  %c__3: float32[1,300,1,1] = Slice(%x__0, %c__0, %c__1, %c__2)  # c\n"
               "  %c__4: float32[1,2,1,1] = Conv(%c__3, %w__0)  # c\n"
               "  %c__5: int32[1,2,1,1] = Cast(%c__4) {to=6}  # c\n"
               "  %c__9: float32[1,300,1,1] = Slice(%x__0, %c__6, %c__7, %c__8)  # c\n"
               "  %c__10: float32[1,2,1,1] = Conv(%c__9, %w__1)  # c\n"
               "  %c__11: int32[1,2,1,1] = Cast(%c__10) {to=6}  # c\n"
               "  %c__12: int32[1,2,1,1] = Add(%c__5, %c__11)  # c\n"
               "  %y__1: float32[1,2,1,1] = Cast(%c__12) {to=1}  # y\n"
               "  %y__2: float32[1,2,1,1] = Mul(%y__1, %y__0)  # y\n"
               "  %y__3: float32[1,2,1,1] = Round(%y__2)  # y\n"
               "  %y__5: float32[1,2,1,1] = Add(%y__3, %y__4)  # y\n"
               "  %y__8: float32[1,2,1,1] = Clip(%y__5, %y__6, %y__7)  # y\n"
               "  %y: int8[1,2,1,1] = Cast(%y__8) {to=3}  # y\n"
               "  %x__1: float32[1,600,1,1] = Cast(%x) {to=1}  # x\n"
               "  %dx__1: float32[1,600,1,1] = Mul(%x__1, %dx__0)  # dx\n"
               "  return %y\n"
               "}\n", 0);
    /* one input channel of 625 taps: no split, the integer operator */
    check_pass("qdq", "x = input u8 [1,1,25,25]; xs = const f32 [] 0.5; xz = const u8 [] 0; dx = DequantizeLinear x xs xz;"
               "w = const i8 [2,1,25,25] 127; ws = const f32 [2] 0.173,0.0871; dw = DequantizeLinear w ws {axis=0};"
               "c = Conv dx dw;" QY "y = QuantizeLinear c ys yz; out y",
               "graph t (opset 21) {\n"
               "  input %x: uint8[1,1,25,25]\n"
               "  const %xs: float32[] = {0.5}\n"
               "  const %xz: uint8[] = {0}\n"
               "  const %w: int8[2,1,25,25] = {127, 127, 127, 127, 127, 127, 127, 127, ... (1250)}\n"
               "  const %ws: float32[2] = {0.172999993, 0.0870999992}\n"
               "  const %ys: float32[] = {0.0917000026}\n"
               "  const %yz: int8[] = {-3}\n"
               "  const %w__0: int8[] = {0}\n"
               "  const %dx__0: float32[] = {0.5}\n"
               "  %dw: float32[2,1,25,25] = DequantizeLinear(%w, %ws) {axis=0}\n"
               "  %y: int8[1,2,1,1] = QLinearConv(%x, %xs, %xz, %w, %ws, %w__0, %ys, %yz)  # c\n"
               "  %x__0: float32[1,1,25,25] = Cast(%x) {to=1}  # x\n"
               "  %dx__1: float32[1,1,25,25] = Mul(%x__0, %dx__0)  # dx\n"
               "  return %y\n"
               "}\n", 0);
    /* a bias whose scale is not x_s * w_s stays float */
    check_pass("qdq", QX QW "b = const i32 [2] 10,-20; bs = const f32 [2] 0.09,0.04355;"
               "db = DequantizeLinear b bs {axis=0}; c = Conv dx dw db;" QY "y = QuantizeLinear c ys yz; out y",
               "graph t (opset 21) {\n"
               "  input %x: int8[1,2,2,2]\n"
               "  const %w: int8[2,2,1,1] = {3, -5, 7, 2}\n"
               "  const %ws: float32[2] = {0.172999993, 0.0870999992}\n"
               "  const %b: int32[2] = {10, -20}\n"
               "  const %bs: float32[2] = {0.0900000036, 0.0435499996}\n"
               "  const %dx__0: float32[] = {1}\n"
               "  const %dx__2: float32[] = {0.5}\n"
               "  const %y__0: float32[] = {0.0917000026}\n"
               "  const %y__3: float32[] = {-3}\n"
               "  const %y__5: float32[] = {-128}\n"
               "  const %y__6: float32[] = {127}\n"
               "  %dw: float32[2,2,1,1] = DequantizeLinear(%w, %ws) {axis=0}\n"
               "  %db: float32[2] = DequantizeLinear(%b, %bs) {axis=0}\n"
               "  %x__0: float32[1,2,2,2] = Cast(%x) {to=1}  # x\n"
               "  %dx__1: float32[1,2,2,2] = Sub(%x__0, %dx__0)  # dx\n"
               "  %dx__3: float32[1,2,2,2] = Mul(%dx__1, %dx__2)  # dx\n"
               "  %c: float32[1,2,2,2] = Conv(%dx__3, %dw, %db)\n"
               "  %y__1: float32[1,2,2,2] = Div(%c, %y__0)  # y\n"
               "  %y__2: float32[1,2,2,2] = Round(%y__1)  # y\n"
               "  %y__4: float32[1,2,2,2] = Add(%y__2, %y__3)  # y\n"
               "  %y__7: float32[1,2,2,2] = Clip(%y__4, %y__5, %y__6)  # y\n"
               "  %y: int8[1,2,2,2] = Cast(%y__7) {to=3}  # y\n"
               "  return %y\n"
               "}\n", 0);
}

static void test_qdq_matmul_gemm(void **state)
{
    (void)state;
    /* per-column b: QLinearMatMul */
    check_pass("qdq", "a = input i8 [2,3]; as = const f32 [] 0.5; az = const i8 [] 1; da = DequantizeLinear a as az;"
               "b = const i8 [3,2] 3,-5,7,2,-1,4; bs = const f32 [2] 0.173,0.0871; db = DequantizeLinear b bs {axis=1};"
               "m = MatMul da db;" QY "y = QuantizeLinear m ys yz; out y",
               "graph t (opset 21) {\n"
               "  input %a: int8[2,3]\n"
               "  const %b: int8[3,2] = {3, -5, 7, 2, -1, 4}\n"
               "  const %bs: float32[2] = {0.172999993, 0.0870999992}\n"
               "  const %b__0: float32[3,2] = {3, -5, 7, 2, -1, 4}\n"
               "  const %az__0: float32[] = {1}\n"
               "  const %y__0: float32[2] = {0.943293273, 0.474918187}\n"
               "  const %y__4: float32[] = {-3}\n"
               "  const %y__6: float32[] = {-128}\n"
               "  const %y__7: float32[] = {127}\n"
               "  const %da__0: float32[] = {1}\n"
               "  const %da__2: float32[] = {0.5}\n"
               "  %db: float32[3,2] = DequantizeLinear(%b, %bs) {axis=1}\n"
               "  %a__0: float32[2,3] = Cast(%a) {to=1}  # a\n"
               "  %a__1: float32[2,3] = Sub(%a__0, %az__0)  # a\n"
               "  %m__0: float32[2,2] = MatMul(%a__1, %b__0)  # m\n"
               "  %y__1: float32[2,2] = Round(%m__0)  # y\n"
               "  %y__2: float32[2,2] = Mul(%y__1, %y__0)  # y\n"
               "  %y__3: float32[2,2] = Round(%y__2)  # y\n"
               "  %y__5: float32[2,2] = Add(%y__3, %y__4)  # y\n"
               "  %y__8: float32[2,2] = Clip(%y__5, %y__6, %y__7)  # y\n"
               "  %y: int8[2,2] = Cast(%y__8) {to=3}  # y\n"
               "  %a__2: float32[2,3] = Cast(%a) {to=1}  # a\n"
               "  %da__1: float32[2,3] = Sub(%a__2, %da__0)  # da\n"
               "  %da__3: float32[2,3] = Mul(%da__1, %da__2)  # da\n"
               "  return %y\n"
               "}\n", 0);
    /* the same with 600 weights of 127 in a column: QLinearMatMul */
    check_pass("qdq", "a = input u8 [2,600]; as = const f32 [] 0.5; az = const u8 [] 0; da = DequantizeLinear a as az;"
               "b = const i8 [600,2] 127; bs = const f32 [2] 0.173,0.0871; db = DequantizeLinear b bs {axis=1};"
               "m = MatMul da db;" QY "y = QuantizeLinear m ys yz; out y",
               "graph t (opset 21) {\n"
               "  input %a: uint8[2,600]\n"
               "  const %as: float32[] = {0.5}\n"
               "  const %az: uint8[] = {0}\n"
               "  const %b: int8[600,2] = {127, 127, 127, 127, 127, 127, 127, 127, ... (1200)}\n"
               "  const %bs: float32[2] = {0.172999993, 0.0870999992}\n"
               "  const %ys: float32[] = {0.0917000026}\n"
               "  const %yz: int8[] = {-3}\n"
               "  const %b__0: int8[] = {0}\n"
               "  const %da__0: float32[] = {0.5}\n"
               "  %db: float32[600,2] = DequantizeLinear(%b, %bs) {axis=1}\n"
               "  %y: int8[2,2] = QLinearMatMul(%a, %as, %az, %b, %bs, %b__0, %ys, %yz)  # m\n"
               "  %a__0: float32[2,600] = Cast(%a) {to=1}  # a\n"
               "  %da__1: float32[2,600] = Mul(%a__0, %da__0)  # da\n"
               "  return %y\n"
               "}\n", 0);
    /* Gemm (transB, int32 bias): a 1-D QLinearConv over the rows, between views */
    check_pass("qdq", "a = input i8 [2,3]; as = const f32 [] 0.5; az = const i8 [] 1; da = DequantizeLinear a as az;"
               "b = const i8 [2,3] 3,-5,7,2,-1,4; bs = const f32 [2] 0.173,0.0871; db = DequantizeLinear b bs {axis=0};"
               "c = const i32 [2] 10,-20; cs = const f32 [2] 0.0865,0.04355; dc = DequantizeLinear c cs {axis=0};"
               "m = Gemm da db dc {transB=1};" QY "y = QuantizeLinear m ys yz; out y",
               "graph t (opset 21) {\n"
               "  input %a: int8[2,3]\n"
               "  const %b: int8[2,3] = {3, -5, 7, 2, -1, 4}\n"
               "  const %bs: float32[2] = {0.172999993, 0.0870999992}\n"
               "  const %c: int32[2] = {10, -20}\n"
               "  const %cs: float32[2] = {0.0864999965, 0.0435499996}\n"
               "  const %b__0: float32[2,3] = {3, -5, 7, 2, -1, 4}\n"
               "  const %az__0: float32[] = {1}\n"
               "  const %c__0: float32[2] = {10, -20}\n"
               "  const %y__0: float32[2] = {0.943293273, 0.474918187}\n"
               "  const %y__4: float32[] = {-3}\n"
               "  const %y__6: float32[] = {-128}\n"
               "  const %y__7: float32[] = {127}\n"
               "  const %da__0: float32[] = {1}\n"
               "  const %da__2: float32[] = {0.5}\n"
               "  %db: float32[2,3] = DequantizeLinear(%b, %bs) {axis=0}\n"
               "  %dc: float32[2] = DequantizeLinear(%c, %cs) {axis=0}\n"
               "  %a__0: float32[2,3] = Cast(%a) {to=1}  # a\n"
               "  %a__1: float32[2,3] = Sub(%a__0, %az__0)  # a\n"
               "  %m__0: float32[2,2] = Gemm(%a__1, %b__0, %c__0) {transB=1}  # m\n"
               "  %y__1: float32[2,2] = Round(%m__0)  # y\n"
               "  %y__2: float32[2,2] = Mul(%y__1, %y__0)  # y\n"
               "  %y__3: float32[2,2] = Round(%y__2)  # y\n"
               "  %y__5: float32[2,2] = Add(%y__3, %y__4)  # y\n"
               "  %y__8: float32[2,2] = Clip(%y__5, %y__6, %y__7)  # y\n"
               "  %y: int8[2,2] = Cast(%y__8) {to=3}  # y\n"
               "  %a__2: float32[2,3] = Cast(%a) {to=1}  # a\n"
               "  %da__1: float32[2,3] = Sub(%a__2, %da__0)  # da\n"
               "  %da__3: float32[2,3] = Mul(%da__1, %da__2)  # da\n"
               "  return %y\n"
               "}\n", 0);
    /* Gemm without transB: the weights transposed at compile time */
    check_pass("qdq", "a = input i8 [2,3]; as = const f32 [] 0.5; az = const i8 [] 1; da = DequantizeLinear a as az;"
               "b = const i8 [3,2] 3,-5,7,2,-1,4; bs = const f32 [2] 0.173,0.0871; db = DequantizeLinear b bs {axis=1};"
               "m = Gemm da db;" QY "y = QuantizeLinear m ys yz; out y",
               "graph t (opset 21) {\n"
               "  input %a: int8[2,3]\n"
               "  const %b: int8[3,2] = {3, -5, 7, 2, -1, 4}\n"
               "  const %bs: float32[2] = {0.172999993, 0.0870999992}\n"
               "  const %b__0: float32[3,2] = {3, -5, 7, 2, -1, 4}\n"
               "  const %az__0: float32[] = {1}\n"
               "  const %y__0: float32[2] = {0.943293273, 0.474918187}\n"
               "  const %y__4: float32[] = {-3}\n"
               "  const %y__6: float32[] = {-128}\n"
               "  const %y__7: float32[] = {127}\n"
               "  const %da__0: float32[] = {1}\n"
               "  const %da__2: float32[] = {0.5}\n"
               "  %db: float32[3,2] = DequantizeLinear(%b, %bs) {axis=1}\n"
               "  %a__0: float32[2,3] = Cast(%a) {to=1}  # a\n"
               "  %a__1: float32[2,3] = Sub(%a__0, %az__0)  # a\n"
               "  %m__0: float32[2,2] = Gemm(%a__1, %b__0)  # m\n"
               "  %y__1: float32[2,2] = Round(%m__0)  # y\n"
               "  %y__2: float32[2,2] = Mul(%y__1, %y__0)  # y\n"
               "  %y__3: float32[2,2] = Round(%y__2)  # y\n"
               "  %y__5: float32[2,2] = Add(%y__3, %y__4)  # y\n"
               "  %y__8: float32[2,2] = Clip(%y__5, %y__6, %y__7)  # y\n"
               "  %y: int8[2,2] = Cast(%y__8) {to=3}  # y\n"
               "  %a__2: float32[2,3] = Cast(%a) {to=1}  # a\n"
               "  %da__1: float32[2,3] = Sub(%a__2, %da__0)  # da\n"
               "  %da__3: float32[2,3] = Mul(%da__1, %da__2)  # da\n"
               "  return %y\n"
               "}\n", 0);
}

static void test_qdq_add(void **state)
{
    (void)state;
    /* a rA + (b rB + F), rounded, clipped, cast: one fused chain */
    check_pass("qdq", "a = input i8 [2,3]; as = const f32 [] 0.5; az = const i8 [] 1; da = DequantizeLinear a as az;"
               "b = input i8 [2,3]; bs = const f32 [] 0.25; bz = const i8 [] -2; db = DequantizeLinear b bs bz;"
               "s = Add da db;" QY "y = QuantizeLinear s ys yz; out y",
               "graph t (opset 21) {\n"
               "  input %a: int8[2,3]\n"
               "  input %b: int8[2,3]\n"
               "  const %y__0: float32[] = {5.45256233}\n"
               "  const %y__2: float32[] = {2.72628117}\n"
               "  const %y__4: float32[] = {-3}\n"
               "  const %y__8: float32[] = {-128}\n"
               "  const %y__9: float32[] = {127}\n"
               "  const %da__0: float32[] = {1}\n"
               "  const %da__2: float32[] = {0.5}\n"
               "  const %db__0: float32[] = {-2}\n"
               "  const %db__2: float32[] = {0.25}\n"
               "  %a__0: float32[2,3] = Cast(%a) {to=1}  # a\n"
               "  %b__0: float32[2,3] = Cast(%b) {to=1}  # b\n"
               "  %y__1: float32[2,3] = Mul(%a__0, %y__0)  # y\n"
               "  %y__3: float32[2,3] = Mul(%b__0, %y__2)  # y\n"
               "  %y__5: float32[2,3] = Add(%y__3, %y__4)  # y\n"
               "  %y__6: float32[2,3] = Add(%y__1, %y__5)  # y\n"
               "  %y__7: float32[2,3] = Round(%y__6)  # y\n"
               "  %y__10: float32[2,3] = Clip(%y__7, %y__8, %y__9)  # y\n"
               "  %y: int8[2,3] = Cast(%y__10) {to=3}  # y\n"
               "  %a__1: float32[2,3] = Cast(%a) {to=1}  # a\n"
               "  %da__1: float32[2,3] = Sub(%a__1, %da__0)  # da\n"
               "  %da__3: float32[2,3] = Mul(%da__1, %da__2)  # da\n"
               "  %b__1: float32[2,3] = Cast(%b) {to=1}  # b\n"
               "  %db__1: float32[2,3] = Sub(%b__1, %db__0)  # db\n"
               "  %db__3: float32[2,3] = Mul(%db__1, %db__2)  # db\n"
               "  return %y\n"
               "}\n", 0);
    /* the other Q / DQ: elementwise (Sigmoid between them) */
    check_pass("qdq", "a = input i8 [2,3]; as = const f32 [] 0.5; az = const i8 [] 1; da = DequantizeLinear a as az;"
               "s = Sigmoid da; ys = const f32 [] 0.0917; yz = const u8 [] 7; y = QuantizeLinear s ys yz; out y",
               "graph t (opset 21) {\n"
               "  input %a: int8[2,3]\n"
               "  const %da__0: float32[] = {1}\n"
               "  const %da__2: float32[] = {0.5}\n"
               "  const %y__0: float32[] = {0.0917000026}\n"
               "  const %y__3: float32[] = {7}\n"
               "  const %y__5: float32[] = {0}\n"
               "  const %y__6: float32[] = {255}\n"
               "  %a__0: float32[2,3] = Cast(%a) {to=1}  # a\n"
               "  %da__1: float32[2,3] = Sub(%a__0, %da__0)  # da\n"
               "  %da__3: float32[2,3] = Mul(%da__1, %da__2)  # da\n"
               "  %s: float32[2,3] = Sigmoid(%da__3)\n"
               "  %y__1: float32[2,3] = Div(%s, %y__0)  # y\n"
               "  %y__2: float32[2,3] = Round(%y__1)  # y\n"
               "  %y__4: float32[2,3] = Add(%y__2, %y__3)  # y\n"
               "  %y__7: float32[2,3] = Clip(%y__4, %y__5, %y__6)  # y\n"
               "  %y: uint8[2,3] = Cast(%y__7) {to=2}  # y\n"
               "  return %y\n"
               "}\n", 0);
    /* a Q of scale inf stays an operator; the other, out of NaN's reach, is elementwise */
    check_pass("qdq", "a = input i8 [2,3]; as = const f32 [] 0.5; az = const i8 [] 1; da = DequantizeLinear a as az;"
               "s = Sigmoid da; ys = const f32 [] 0.0917; yz = const u8 [] 7; y = QuantizeLinear s ys yz;"
               "i = const f32 [] inf; z = QuantizeLinear s i yz; out y; out z",
               "graph t (opset 21) {\n"
               "  input %a: int8[2,3]\n"
               "  const %yz: uint8[] = {7}\n"
               "  const %i: float32[] = {inf}\n"
               "  const %da__0: float32[] = {1}\n"
               "  const %da__2: float32[] = {0.5}\n"
               "  const %y__0: float32[] = {0.0917000026}\n"
               "  const %y__3: float32[] = {7}\n"
               "  const %y__5: float32[] = {0}\n"
               "  const %y__6: float32[] = {255}\n"
               "  %a__0: float32[2,3] = Cast(%a) {to=1}  # a\n"
               "  %da__1: float32[2,3] = Sub(%a__0, %da__0)  # da\n"
               "  %da__3: float32[2,3] = Mul(%da__1, %da__2)  # da\n"
               "  %s: float32[2,3] = Sigmoid(%da__3)\n"
               "  %z: uint8[2,3] = QuantizeLinear(%s, %i, %yz)\n"
               "  %y__1: float32[2,3] = Div(%s, %y__0)  # y\n"
               "  %y__2: float32[2,3] = Round(%y__1)  # y\n"
               "  %y__4: float32[2,3] = Add(%y__2, %y__3)  # y\n"
               "  %y__7: float32[2,3] = Clip(%y__4, %y__5, %y__6)  # y\n"
               "  %y: uint8[2,3] = Cast(%y__7) {to=2}  # y\n"
               "  return %y, %z\n"
               "}\n", 0);
    /* after a DQ of scale inf ((a - 1) * inf is NaN at a = 1) the Q spells out QuantizeLinear's NaN rule:
     * NaN to the type's minimum, as -inf before the clip */
    check_pass("qdq", "a = input i8 [2,3]; as = const f32 [] inf; az = const i8 [] 1; da = DequantizeLinear a as az;"
               "s = Sigmoid da; ys = const f32 [] 0.0917; yz = const u8 [] 7; y = QuantizeLinear s ys yz; out y",
               "graph t (opset 21) {\n"
               "  input %a: int8[2,3]\n"
               "  const %da__0: float32[] = {1}\n"
               "  const %da__2: float32[] = {inf}\n"
               "  const %y__0: float32[] = {0.0917000026}\n"
               "  const %y__3: float32[] = {-inf}\n"
               "  const %y__6: float32[] = {7}\n"
               "  const %y__8: float32[] = {0}\n"
               "  const %y__9: float32[] = {255}\n"
               "  %a__0: float32[2,3] = Cast(%a) {to=1}  # a\n"
               "  %da__1: float32[2,3] = Sub(%a__0, %da__0)  # da\n"
               "  %da__3: float32[2,3] = Mul(%da__1, %da__2)  # da\n"
               "  %s: float32[2,3] = Sigmoid(%da__3)\n"
               "  %y__1: float32[2,3] = Div(%s, %y__0)  # y\n"
               "  %y__2: bool[2,3] = IsNaN(%y__1)  # y\n"
               "  %y__4: float32[2,3] = Where(%y__2, %y__3, %y__1)  # y\n"
               "  %y__5: float32[2,3] = Round(%y__4)  # y\n"
               "  %y__7: float32[2,3] = Add(%y__5, %y__6)  # y\n"
               "  %y__10: float32[2,3] = Clip(%y__7, %y__8, %y__9)  # y\n"
               "  %y: uint8[2,3] = Cast(%y__10) {to=2}  # y\n"
               "  return %y\n"
               "}\n", 0);
}

/* Does `pass` on src leave a node of op (text "= OP(")? */
static int pass_leaves(const char *pass, const char *src, const char *op)
{
    IrGraph *g = build(src);
    UtilDiag d;
    util_diag_init(&d);
    if (pass_run_checked(g, pass_find(pass), &d) < 0)
        fail_msg("%s: %s", pass, d.msg);
    char *txt = print(g), pat[64];
    snprintf(pat, sizeof pat, "= %s(", op);
    int r = strstr(txt, pat) != NULL;
    free(txt);
    ir_graph_free(g);
    return r;
}

/* qdq-dot (targets with 8-bit dot products): a convolution over whole
 * input channels (64 taps, 16 pixels; 16 taps when it does not feed a
 * depthwise layer of the float32 form), a 3x3 or 5x5 depthwise one of
 * 28x28 or more pixels (not a 7x7 nor a smaller plane),
 * a MatMul by constant int8 weights
 * and a MatMul of two run-time operands that QuantizeLinear made become
 * the integer operators; the other depthwise convolutions, one of fewer taps or
 * pixels, and a product of run-time operands that are not a
 * QuantizeLinear's output (here graph inputs) keep qdq's exact float32
 * form. */
static void test_qdq_dot(void **state)
{
    (void)state;
#define QX64 "x = input i8 [1,64,4,4]; xs = const f32 [] 0.5; xz = const i8 [] 1; dx = DequantizeLinear x xs xz;"
    const char *pw = QX64 "w = const i8 [8,64,1,1] 3; ws = const f32 [] 0.01; dw = DequantizeLinear w ws;"
                     "c = Conv dx dw;" QY "y = QuantizeLinear c ys yz; out y";
    assert_true(pass_leaves("qdq-dot", pw, "QLinearConv"));
    assert_false(pass_leaves("qdq", pw, "QLinearConv"));
    /* depthwise: 3x3 or 5x5 over a plane of 28x28 or more on dot products; 7x7, or a smaller plane, not */
#define QDW(T, P, H) "x = input i8 [1,8," #P "," #P "]; xs = const f32 [] 0.5; xz = const i8 [] 1;" \
                     "dx = DequantizeLinear x xs xz; w = const i8 [8,1," #T "," #T "] 3; ws = const f32 [] 0.01;" \
                     "dw = DequantizeLinear w ws; c = Conv dx dw {group=8 pads=" #H "," #H "," #H "," #H "};" QY \
                     "y = QuantizeLinear c ys yz; out y"
    assert_true(pass_leaves("qdq-dot", QDW(3, 28, 1), "QLinearConv"));
    assert_false(pass_leaves("qdq-dot", QDW(3, 14, 1), "QLinearConv"));
    assert_true(pass_leaves("qdq-dot", QDW(5, 28, 2), "QLinearConv"));
    assert_false(pass_leaves("qdq-dot", QDW(7, 28, 3), "QLinearConv"));
    assert_true(pass_leaves("qdq-dot", QDW(7, 28, 3), "Conv"));
#undef QDW
    const char *dwc = QX64 "w = const i8 [64,1,3,3] 3; ws = const f32 [] 0.01; dw = DequantizeLinear w ws;"
                      "c = Conv dx dw {group=64 pads=1,1,1,1};" QY "y = QuantizeLinear c ys yz; out y";
    assert_true(pass_leaves("qdq-dot", dwc, "Conv"));
    const char *small = "x = input i8 [1,8,4,4]; xs = const f32 [] 0.5; xz = const i8 [] 1; dx = DequantizeLinear x xs xz;"
                        "w = const i8 [8,8,1,1] 3; ws = const f32 [] 0.01; dw = DequantizeLinear w ws;"
                        "c = Conv dx dw;" QY "y = QuantizeLinear c ys yz; out y";
    assert_false(pass_leaves("qdq-dot", small, "QLinearConv"));
    /* 16 taps: dot products, unless the output goes (through its DQ) into a depthwise
     * layer, with which the float32 form shares a kernel */
#define QX16 "x = input i8 [1,16,4,4]; xs = const f32 [] 0.5; xz = const i8 [] 1; dx = DequantizeLinear x xs xz;" \
             "w = const i8 [8,16,1,1] 3; ws = const f32 [] 0.01; dw = DequantizeLinear w ws; c = Conv dx dw;" QY \
             "y = QuantizeLinear c ys yz;"
    assert_true(pass_leaves("qdq-dot", QX16 "out y", "QLinearConv"));
    const char *to_dw = QX16 "dy = DequantizeLinear y ys yz; v = const i8 [8,1,5,5] 2; dv = DequantizeLinear v ws;"
                             "e = Conv dy dv {group=8 pads=2,2,2,2}; q = QuantizeLinear e ys yz; out q";
    assert_false(pass_leaves("qdq-dot", to_dw, "QLinearConv"));
    const char *to_dw3 = "x = input i8 [1,16,28,28]; xs = const f32 [] 0.5; xz = const i8 [] 1;"
                         "dx = DequantizeLinear x xs xz; w = const i8 [8,16,1,1] 3; ws = const f32 [] 0.01;"
                         "dw = DequantizeLinear w ws; c = Conv dx dw;" QY "y = QuantizeLinear c ys yz;"
                         "dy = DequantizeLinear y ys yz; v = const i8 [8,1,3,3] 2; dv = DequantizeLinear v ws;"
                         "e = Conv dy dv {group=8 pads=1,1,1,1}; q = QuantizeLinear e ys yz; out q";
    assert_true(pass_leaves("qdq-dot", to_dw3, "QLinearConv"));   /* the depthwise layer on dot products */
#undef QX16
    const char *mm = "a = input i8 [5,32]; as = const f32 [] 0.5; az = const i8 [] 1; da = DequantizeLinear a as az;"
                     "b = const i8 [32,16] 2; bs = const f32 [] 0.01; db = DequantizeLinear b bs;"
                     "m = MatMul da db;" QY "y = QuantizeLinear m ys yz; out y";
    assert_true(pass_leaves("qdq-dot", mm, "QLinearMatMul"));
    assert_false(pass_leaves("qdq", mm, "QLinearMatMul"));
    const char *rt = "a = input i8 [5,32]; as = const f32 [] 0.5; az = const i8 [] 1; da = DequantizeLinear a as az;"
                     "b = input i8 [32,16]; bs = const f32 [] 0.01; bz = const i8 [] 0; db = DequantizeLinear b bs bz;"
                     "m = MatMul da db;" QY "y = QuantizeLinear m ys yz; out y";
    assert_false(pass_leaves("qdq-dot", rt, "QLinearMatMul"));
    const char *rtq = "fa = input f32 [2,5,32]; fb = input f32 [2,32,16]; as = const f32 [] 0.5; az = const i8 [] 1;"
                      "bs = const f32 [] 0.01; bz = const i8 [] 3; a = QuantizeLinear fa as az; b = QuantizeLinear fb bs bz;"
                      "da = DequantizeLinear a as az; db = DequantizeLinear b bs bz;"
                      "m = MatMul da db;" QY "y = QuantizeLinear m ys yz; out y";
    assert_true(pass_leaves("qdq-dot", rtq, "QLinearMatMul"));
    assert_false(pass_leaves("qdq", rtq, "QLinearMatMul"));
#undef QX64
}

/* lut: an elementwise function of one 8-bit tensor (known single values
 * besides) that ends in an 8-bit tensor, or in a float32 Clip of integers
 * in an 8-bit range, and holds a costly node becomes a Gather from a
 * 256-entry table made by the interpreter: the same outputs, bit for bit
 * (check_pass at tolerance 0 on random inputs). */
static void test_lut(void **state)
{
    (void)state;
    /* QDQ SiLU on int8 (qdq's elementwise forms: Q → Div, Round, Add, Clip, Cast) */
#define SILU(T, Z) "a = input " T " [2,3,4]; as = const f32 [] 0.0625; az = const " T " [] " Z ";" \
    "da = DequantizeLinear a as az; s = Sigmoid da; ss = const f32 [] 0.00390625; sz = const " T " [] " Z ";" \
    "q = QuantizeLinear s ss sz; dq = DequantizeLinear q ss sz; m = Mul da dq; ys = const f32 [] 0.05;" \
    "yz = const " T " [] " Z "; y = QuantizeLinear m ys yz; out y"
    const char *si8 = SILU("i8", "-3"), *su8 = SILU("u8", "130");
    for (int k = 0; k < 2; k++) {
        IrGraph *ref = build(k ? su8 : si8), *g = build(k ? su8 : si8);
        UtilDiag d;
        util_diag_init(&d);
        const char *pl[] = { "qdq", "lut", "dce" };
        for (int i = 0; i < 3; i++)
            if (pass_run_checked(g, pass_find(pl[i]), &d) < 0)
                fail_msg("%s: %s", pl[i], d.msg);
        char *txt = print(g);
        if (!strstr(txt, "= Gather(") || strstr(txt, "Sigmoid"))
            fail_msg("lut left\n%s", txt);
        free(txt);
        for (uint64_t seed = 1; seed <= 3; seed++) {
            IrArray *a = run(ref, seed * 0x9E3779B97F4A7C15ull), *b = run(g, seed * 0x9E3779B97F4A7C15ull);
            if (max_rel_err(a, b, 1, 1e-6) != 0)
                fail_msg("lut changed the outputs of %s", k ? su8 : si8);
            free_outputs(a, 1);
            free_outputs(b, 1);
        }
        ir_graph_free(ref);
        ir_graph_free(g);
    }
#undef SILU
    /* from a float32 of int8 integers (a Q that feeds a DQ) to one of uint8 integers, then scaled */
    const char *fl = "x = input f32 [2,8]; k = const f32 [] 3.7; lo = const f32 [] -128; hi = const f32 [] 127;"
                     "z = const f32 [] 0; h = const f32 [] 255; s = const f32 [] 0.125; d = const f32 [] 40;"
                     "a = Mul x k; r = Round a; q = Clip r lo hi; f = Mul q s; e = Tanh f; g = Mul e d;"
                     "gr = Round g; gc = Clip gr z h; o = Mul gc s; out o";
    check_pass("lut", fl, NULL, 0);
    assert_true(pass_leaves("lut", fl, "Gather"));
    /* a requantization alone (no costly node), and a per-channel scale: no table */
    const char *cheap = "a = input i8 [2,3]; b = Cast a {to=1}; s = const f32 [] 0.5; m = Mul b s; r = Round m;"
                        "lo = const f32 [] -128; hi = const f32 [] 127; c = Clip r lo hi; y = Cast c {to=3}; out y";
    assert_false(pass_leaves("lut", cheap, "Gather"));
    const char *perch = "a = input i8 [2,3]; b = Cast a {to=1}; s = const f32 [3] 0.5; m = Mul b s; e = Exp m; r = Round e;"
                        "lo = const f32 [] -128; hi = const f32 [] 127; c = Clip r lo hi; y = Cast c {to=3}; out y";
    assert_false(pass_leaves("lut", perch, "Gather"));
    const char *twice = "a = input i8 [2,3]; b = Cast a {to=1}; e = Exp b; r = Round e;"
                        "lo = const f32 [] -128; hi = const f32 [] 127; c = Clip r lo hi; y = Cast c {to=3}; out y";
    assert_true(pass_leaves("lut", twice, "Gather"));
}

/* qdq-int8 (--precision int8): pooling and reshapes between a DQ and a Q
 * run on the 8-bit tensor.  Scales are powers of two, so the float graph
 * is exact too and the outputs are equal. */
static void test_qdq_int8_pools(void **state)
{
    (void)state;
    /* MaxPool with the same scale and zero point on both sides: on the int8 values */
    check_pass("qdq-int8", "x = input i8 [1,2,4,4]; xs = const f32 [] 0.5; xz = const i8 [] 1;"
               "dx = DequantizeLinear x xs xz; p = MaxPool dx {kernel_shape=2,2 strides=2,2};"
               "y = QuantizeLinear p xs xz; out y",
               "graph t (opset 21) {\n"
               "  input %x: int8[1,2,4,4]\n"
               "  const %xs: float32[] = {0.5}\n"
               "  const %xz: int8[] = {1}\n"
               "  %dx: float32[1,2,4,4] = DequantizeLinear(%x, %xs, %xz)\n"
               "  %y: int8[1,2,2,2] = MaxPool(%x) {kernel_shape=[2,2], strides=[2,2]}  # y\n"
               "  return %y\n"
               "}\n", 0);
    /* a global average pool: (pool(float32(x)) - xz) * (xs / ys), requantized */
    check_pass("qdq-int8", "x = input i8 [1,2,4,4]; xs = const f32 [] 0.5; xz = const i8 [] 1;"
               "dx = DequantizeLinear x xs xz; p = GlobalAveragePool dx; ys = const f32 [] 0.25;"
               "yz = const i8 [] -3; y = QuantizeLinear p ys yz; out y",
               "graph t (opset 21) {\n"
               "  input %x: int8[1,2,4,4]\n"
               "  const %xs: float32[] = {0.5}\n"
               "  const %xz: int8[] = {1}\n"
               "  const %y__1: float32[] = {1}\n"
               "  const %y__3: float32[] = {2}\n"
               "  const %y__6: float32[] = {-3}\n"
               "  const %y__8: float32[] = {-128}\n"
               "  const %y__9: float32[] = {127}\n"
               "  %dx: float32[1,2,4,4] = DequantizeLinear(%x, %xs, %xz)\n"
               "  %x__0: float32[1,2,4,4] = Cast(%x) {to=1}  # x\n"
               "  %y__0: float32[1,2,1,1] = GlobalAveragePool(%x__0)  # y\n"
               "  %y__2: float32[1,2,1,1] = Sub(%y__0, %y__1)  # y\n"
               "  %y__4: float32[1,2,1,1] = Mul(%y__2, %y__3)  # y\n"
               "  %y__5: float32[1,2,1,1] = Round(%y__4)  # y\n"
               "  %y__7: float32[1,2,1,1] = Add(%y__5, %y__6)  # y\n"
               "  %y__10: float32[1,2,1,1] = Clip(%y__7, %y__8, %y__9)  # y\n"
               "  %y: int8[1,2,1,1] = Cast(%y__10) {to=3}  # y\n"
               "  return %y\n"
               "}\n", 0);
}

/* ------------------------------------------------------------ the pass manager */

static void test_pipelines(void **state)
{
    (void)state;
    assert_null(pass_pipeline(0)[0]);
    const PassInfo *const *o1 = pass_pipeline(1);
    assert_string_equal(o1[0]->name, "fold-constants");
    assert_string_equal(o1[1]->name, "remove-identity");
    assert_string_equal(o1[2]->name, "dce");
    assert_null(o1[3]);
    int n = 0, seen_bn = 0;
    for (const PassInfo *const *p = pass_pipeline(2); *p; p++, n++)
        seen_bn |= strcmp((*p)->name, "fold-batchnorm") == 0;
    assert_true(seen_bn);
    assert_int_equal(n, 14);
    assert_ptr_equal(pass_pipeline(3), pass_pipeline(2));
    assert_null(pass_find("fusion"));
    /* --precision int8: qdq-int8 in qdq's place, the rest the same */
    PassOptions o = pass_options(2);
    o.int8 = 1;
    const PassInfo *const *p8 = pass_pipeline_of(&o), *const *p2 = pass_pipeline(2);
    assert_string_equal(p8[0]->name, "qdq-int8");
    for (int i = 1; i < n + 1; i++)
        assert_ptr_equal(p8[i], p2[i]);
    /* 8-bit dot products: qdq-dot in qdq's place; --precision int8 wins over it */
    o.int8 = 0;
    o.dot_i8 = 512;
    const PassInfo *const *pd = pass_pipeline_of(&o);
    assert_string_equal(pd[0]->name, "qdq-dot");
    for (int i = 1; i < n + 1; i++)
        assert_ptr_equal(pd[i], p2[i]);
    o.int8 = 1;
    assert_ptr_equal(pass_pipeline_of(&o), p8);
    o.opt_level = 1;
    assert_ptr_equal(pass_pipeline_of(&o), pass_pipeline(1));
}

static void test_print_and_time(void **state)
{
    (void)state;
    IrGraph *g = build("x = input f32 [2,3]; i = Identity x; o = const f32 [] 1; m = Mul i o; y = Relu m; out y");
    UtilBuf log;
    util_buf_init(&log);
    PassOptions o = pass_options(2);
    o.print_after = "simplify";
    o.time_passes = 1;
    o.log = &log;
    UtilDiag d;
    util_diag_init(&d);
    assert_int_equal(pass_run_pipeline(g, &o, &d), 0);
    util_buf_put(&log, "", 1);
    /* simplify runs three times at -O2: printed three times */
    const char *p = log.data;
    int count = 0;
    while ((p = strstr(p, "*** IR after simplify (pass ")))
        count++, p++;
    assert_int_equal(count, 3);
    assert_non_null(strstr(log.data, "*** IR after simplify (pass 4 of 14, -O2) ***\ngraph t (opset 21) {\n"
                                     "  input %x: float32[2,3]\n  %y: float32[2,3] = Relu(%x)\n"));
    assert_non_null(strstr(log.data, "=== pass timing (-O2) ===\n"));
    assert_non_null(strstr(log.data, "  remove-identity "));
    assert_non_null(strstr(log.data, "  total "));
    util_buf_free(&log);
    ir_graph_free(g);

    g = build("x = input f32 [2,3]; y = Relu x; out y");
    o = pass_options(1);
    o.print_after = "fusion";
    util_diag_init(&d);
    assert_int_equal(pass_run_pipeline(g, &o, &d), -1);
    assert_string_equal(d.msg, "--print-after: no pass is named 'fusion' (passes: fold-constants, remove-identity, "
                        "simplify, fold-batchnorm, fold-weights, cse, dce, recognize, qdq, qdq-int8, qdq-dot, lut, fuse)");
    ir_graph_free(g);
}

/* The checks between passes name a rewrite that broke a type. */
static void test_check(void **state)
{
    (void)state;
    IrGraph *g = build("x = input f32 [2,3]; y = Relu x; z = Exp y; out z");
    UtilDiag d;
    util_diag_init(&d);
    assert_int_equal(pass_check(g, "simplify", &d), 0);
    g->tensors[ir_find_tensor(g, "y")].v.shape.dims[1] = 4;       /* what a buggy rewrite might do */
    assert_int_equal(pass_check(g, "simplify", &d), -1);
    assert_non_null(strstr(d.msg, "internal error: after pass simplify output 'y' is float32 [2,4] but infers as "
                                  "float32 [2,3]"));
    ir_graph_free(g);
    g = build("x = input f32 [2,3]; y = Relu x; out y");
    g->nodes[0].in[0] = ir_find_tensor(g, "y");                  /* a cycle */
    util_diag_init(&d);
    assert_int_equal(pass_check(g, "cse", &d), -1);
    assert_non_null(strstr(d.msg, "internal error: the graph is invalid after pass cse: "));
    ir_graph_free(g);
}

/* ------------------------------------------------------------ property test */

/* Appends a random operation over earlier values to the description. */
static void random_op(char *src, size_t cap, int k, uint64_t *s)
{
    size_t l = strlen(src);
    static const double consts[] = { 0, 1, -1, 2, 0.5, -0.25, 3 };
    double c = consts[rng_next(s) % 7];
    int a = (int)(rng_next(s) % (uint64_t)k);
    char prev[16];
    snprintf(prev, sizeof prev, "v%d", (rng_next(s) % 3) ? k - 1 : a);
    switch (rng_next(s) % 22) {
    case 0: snprintf(src + l, cap - l, "c%d = const f32 [] %g; v%d = Mul %s c%d;", k, c, k, prev, k); break;
    case 1: snprintf(src + l, cap - l, "c%d = const f32 [] %g; v%d = Add c%d %s;", k, c, k, k, prev); break;
    case 2: snprintf(src + l, cap - l, "c%d = const f32 [] %g; v%d = Sub %s c%d;", k, c, k, prev, k); break;
    case 3: snprintf(src + l, cap - l, "c%d = const f32 [4] %g,1,2,-1; v%d = Div %s c%d;", k, c + 3, k, prev, k); break;
    case 4: snprintf(src + l, cap - l, "v%d = Neg %s;", k, prev); break;
    case 5: snprintf(src + l, cap - l, "v%d = Relu %s;", k, prev); break;
    case 6: snprintf(src + l, cap - l, "v%d = Abs %s;", k, prev); break;
    case 7: snprintf(src + l, cap - l, "c%d = const f32 [] %g; v%d = Pow %s c%d;", k,
                     (double[]){ 1, 2, 0.5, -1 }[rng_next(s) % 4], k, prev, k); break;
    case 8: {                       /* a permutation and its inverse */
        int cyc = (int)(rng_next(s) % 2);
        snprintf(src + l, cap - l, "t%d = Transpose %s {perm=%s}; v%d = Transpose t%d {perm=%s};", k, prev,
                 cyc ? "1,2,0" : "1,0,2", k, k, cyc ? "2,0,1" : "1,0,2");
        break;
    }
    case 9: snprintf(src + l, cap - l, "c%d = const f32 [] %g; v%d = Max %s c%d;", k, c, k, prev, k); break;
    case 10: snprintf(src + l, cap - l, "c%d = const f32 [] %g; v%d = Min %s c%d;", k, c, k, prev, k); break;
    case 11: snprintf(src + l, cap - l, "lo%d = const f32 [] -1; hi%d = const f32 [] %g; v%d = Clip %s lo%d hi%d;",
                      k, k, fabs(c) + 0.5, k, prev, k, k); break;
    case 12: snprintf(src + l, cap - l, "t%d = Cast %s {to=11}; v%d = Cast t%d {to=1};", k, prev, k, k); break;
    case 13: snprintf(src + l, cap - l, "v%d = Add %s v%d;", k, prev, a); break;
    case 14: snprintf(src + l, cap - l, "v%d = Mul %s v%d;", k, prev, a); break;
    case 15: snprintf(src + l, cap - l, "v%d = Identity %s;", k, prev); break;
    case 16: snprintf(src + l, cap - l, "ax%d = const i64 [1] 0; t%d = Unsqueeze %s ax%d; v%d = Squeeze t%d ax%d;",
                      k, k, prev, k, k, k, k); break;
    case 17: snprintf(src + l, cap - l, "sh%d = const i64 [2] 6,4; t%d = Reshape %s sh%d; sh2%d = const i64 [3] 2,3,4;"
                      "v%d = Reshape t%d sh2%d;", k, k, prev, k, k, k, k, k); break;
    case 18: snprintf(src + l, cap - l, "v%d = Floor %s;", k, prev); break;
    case 19: snprintf(src + l, cap - l, "v%d = Sub %s v%d;", k, prev, a); break;
    case 20: snprintf(src + l, cap - l, "t%d = Neg %s; v%d = Add v%d t%d;", k, prev, k, a, k); break;
    default: snprintf(src + l, cap - l, "c%d = const f32 [2,3,4] %g; v%d = Mul %s c%d;", k, c, k, prev, k); break;
    }
}

static void test_property(void **state)
{
    (void)state;
    uint64_t s = 0x5eed5eed12345ull;
    int rewritten = 0;
    for (int gi = 0; gi < 300; gi++) {
        char src[8192] = "v0 = input f32 [2,3,4];";
        int n = 2 + (int)(rng_next(&s) % 8);
        for (int k = 1; k <= n; k++)
            random_op(src, sizeof src, k, &s);
        size_t l = strlen(src);
        snprintf(src + l, sizeof src - l, "out v%d;", n);
        if (rng_next(&s) % 3 == 0) {          /* sometimes an inner value too */
            l = strlen(src);
            snprintf(src + l, sizeof src - l, "out v%d;", 1 + (int)(rng_next(&s) % (uint64_t)n));
        }
        IrGraph *ref = build(src), *g = build(src);
        UtilDiag d;
        util_diag_init(&d);
        int r = pass_run_checked(g, pass_find("simplify"), &d);
        if (r < 0)
            fail_msg("simplify failed on\n%s\n%s", src, d.msg);
        rewritten += r > 0;
        /* the whole -O2 pipeline too */
        IrGraph *g2 = build(src);
        PassOptions o = pass_options(2);
        o.verify = 1;
        if (pass_run_pipeline(g2, &o, &d))
            fail_msg("-O2 failed on\n%s\n%s", src, d.msg);
        for (uint64_t seed = 11; seed <= 12; seed++) {
            IrArray *a = run(ref, seed), *b = run(g, seed), *c = run(g2, seed);
            double e1 = max_rel_err(a, b, ref->n_outputs, 1e-6), e2 = max_rel_err(a, c, ref->n_outputs, 1e-6);
            if (e1 > 1e-5 || e2 > 1e-5)
                fail_msg("outputs changed (simplify %g, -O2 %g) for\n%s", e1, e2, src);
            free_outputs(a, ref->n_outputs);
            free_outputs(b, ref->n_outputs);
            free_outputs(c, ref->n_outputs);
        }
        ir_graph_free(ref);
        ir_graph_free(g);
        ir_graph_free(g2);
    }
    printf("property: simplify rewrote %d of 300 graphs\n", rewritten);
    assert_true(rewritten > 150);              /* the generator exercises the rules */
}

/* ------------------------------------------------------------ e2e models */

static int count_ops(const IrGraph *g, IrOp op)
{
    int c = 0;
    for (int i = 0; i < g->n_nodes; i++)
        c += g->nodes[i].op == op;
    return c;
}

/* tests/e2e/NAME/model.json on input_0.npy: -O2 keeps the outputs within
 * rtol 1e-4 and leaves no BatchNormalization, Identity, Dropout, Shape or
 * ConstantOfShape. */
static void test_e2e_models(void **state)
{
    (void)state;
    static const char *const models[] = { "cnn", "dscnn", "mlp", "encoder", "resnet" };
    for (size_t m = 0; m < sizeof models / sizeof *models; m++) {
        char path[512];
        UtilDiag d;
        util_diag_init(&d);
        snprintf(path, sizeof path, DLCC_SOURCE_ROOT "/tests/e2e/%s/model.json", models[m]);
        IrGraph *ref = fe_load(path, NULL, &d), *g = fe_load(path, NULL, &d);
        assert_non_null(ref);
        assert_non_null(g);
        assert_int_equal(pass_infer(ref, &d), 0);
        assert_int_equal(pass_infer(g, &d), 0);
        PassOptions o = pass_options(2);
        o.verify = 1;
        if (pass_run_pipeline(g, &o, &d))
            fail_msg("%s: %s", models[m], d.msg);
        static const IrOp gone[] = { IR_OP_BatchNormalization, IR_OP_Identity, IR_OP_Dropout, IR_OP_Shape,
                                     IR_OP_ConstantOfShape };
        for (size_t k = 0; k < sizeof gone / sizeof *gone; k++)
            if (count_ops(g, gone[k]))
                fail_msg("%s: -O2 left %s", models[m], ir_op_name(gone[k]));
        snprintf(path, sizeof path, DLCC_SOURCE_ROOT "/tests/e2e/%s/input_0.npy", models[m]);
        IrArray in;
        assert_int_equal(fe_npy_read(path, &in, &d), 0);
        IrArray a, b;
        assert_int_equal(interp_run(ref, &in, &a, &d), 0);
        assert_int_equal(interp_run(g, &in, &b, &d), 0);
        double e = max_rel_err(&a, &b, 1, 1e-4);
        if (e > 1e-4)
            fail_msg("%s: -O2 changed the output (relative error %g)", models[m], e);
        interp_array_free(&a);
        interp_array_free(&b);
        interp_array_free(&in);
        ir_graph_free(ref);
        ir_graph_free(g);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rules),
        cmocka_unit_test(test_rules_covered),
        cmocka_unit_test(test_rules_documented),
        cmocka_unit_test(test_rules_refused),
        cmocka_unit_test(test_fold_shape_arithmetic),
        cmocka_unit_test(test_fold_limit),
        cmocka_unit_test(test_dce),
        cmocka_unit_test(test_cse),
        cmocka_unit_test(test_remove_identity),
        cmocka_unit_test(test_fold_batchnorm_conv),
        cmocka_unit_test(test_fold_batchnorm_alone),
        cmocka_unit_test(test_fold_weights_gemm),
        cmocka_unit_test(test_fold_weights_matmul),
        cmocka_unit_test(test_affine_into_conv),
        cmocka_unit_test(test_fold_weights_convtranspose),
        cmocka_unit_test(test_output_names),
        cmocka_unit_test(test_qdq_conv),
        cmocka_unit_test(test_qdq_matmul_gemm),
        cmocka_unit_test(test_qdq_add),
        cmocka_unit_test(test_qdq_int8_pools),
        cmocka_unit_test(test_qdq_dot),
        cmocka_unit_test(test_lut),
        cmocka_unit_test(test_pipelines),
        cmocka_unit_test(test_print_and_time),
        cmocka_unit_test(test_check),
        cmocka_unit_test(test_property),
        cmocka_unit_test(test_e2e_models),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
