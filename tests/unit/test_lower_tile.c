/* tests/unit/test_lower_tile.c — the register-blocked kernels of
 * lower/tile/gemm.c and the Conv forms beside it (lower/tile/pointwise.c,
 * lower/tile/direct.c, lower/tile/winograd.c; Conv with constant weights: general, direct,
 * depthwise, pointwise; MaxPool; MatMul and Gemm with constant or run-time B) against the
 * reference interpreter, through the JIT, for the block sizes of 128-, 256-
 * and 512-bit SIMD (tile_nr 8, 16, 32).  Shapes are chosen so that every
 * edge case appears: rows and columns that do not fill the last block,
 * groups, strides (strided vector loads), dilation, asymmetric padding,
 * depthwise multipliers, 1-D and 3-D windows; Winograd convolutions.  Each case also checks that
 * the blocked form was taken (the program has a LOCAL "acc" buffer).
 * Agreement: rtol 1e-4, atol 1e-5. */
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

static double frand(uint64_t *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(*s >> 11) / 9007199254740992.0 * 2.0 - 1.0;    /* [-1, 1) */
}

/* A float32 constant of the given shape with pseudo-random values. */
static int rand_const(TG *t, const char *name, int rank, const int64_t *dims, uint64_t *seed)
{
    IrShape s = tg_shape(rank, dims);
    int64_t n = ir_shape_numel(&s);
    double *v = malloc((size_t)n * sizeof *v);
    assert_non_null(v);
    for (int64_t i = 0; i < n; i++)
        v[i] = frand(seed);
    int x = tg_const(t, name, IR_DT_F32, rank, dims, v);
    free(v);
    return x;
}

static int has_block(const LoopProgram *p)
{
    for (int i = 0; i < p->n_bufs; i++)
        if (p->bufs[i].storage == LOOP_ST_LOCAL && strncmp(p->bufs[i].name, "acc", 3) == 0)
            return 1;
    return 0;
}

static void fail_diag(const char *what, const UtilDiag *d)
{
    char m[1200];
    util_diag_format(d, m, sizeof m);
    fail_msg("%s: %s", what, m);
}

/* Interpreter vs JIT for the CPU schedule of `bits`-bit SIMD. */
static void run_bits(IrGraph *g, int bits)
{
    int ni = g->n_inputs, no = g->n_outputs;
    IrArray in[4] = { 0 }, ref[2] = { 0 };
    void *inp[4] = { 0 }, *outp[2] = { 0 };
    assert_true(ni <= 4 && no <= 2);
    uint64_t seed = 99;
    for (int i = 0; i < ni; i++) {
        const IrTensor *x = &g->tensors[g->inputs[i]];
        in[i] = (IrArray){ x->v.dtype, x->v.shape, calloc(ir_array_bytes(&x->v) + 1, 1) };
        for (int64_t k = 0; k < ir_shape_numel(&x->v.shape); k++)
            ir_store_f64(IR_DT_F32, in[i].data, k, 2 * frand(&seed));
        inp[i] = in[i].data;
    }
    UtilDiag d;
    util_diag_init(&d);
    if (interp_run(g, in, ref, &d) != 0)
        fail_diag("interp", &d);
    LowSchedule s = tgt_cpu_schedule(bits);
    s.threads = bits == 512 ? 2 : 1;     /* kernels that split their work for threads do (run serially here) */
    LoopProgram *p = low_graph(g, &s, &d);
    if (!p)
        fail_diag("lower", &d);
    if (!has_block(p))
        fail_msg("graph %s at %d bits: no register block", g->name, bits);
    tgt_cpu_apply_schedule(p, &s);
    loop_simplify(p);
    if (low_plan_memory(p, g, &d) != 0 || loop_verify(p, &d) != 0)
        fail_diag("plan", &d);
    CgJit *j = NULL;
    CgOptions co = { .opt_level = 2 };
    if (cg_jit(p, &co, &j, &d) != 0)
        fail_diag("jit", &d);
    size_t wsz = (size_t)p->workspace_bytes;
    void *ws = wsz ? aligned_alloc(64, (wsz + 63) / 64 * 64) : NULL;
    if (ws)                                /* NaN everywhere: a pad or halo left unfilled shows */
        memset(ws, 0xff, (wsz + 63) / 64 * 64);
    for (int o = 0; o < no; o++)
        outp[o] = calloc(ir_array_bytes(&ref[o]) + 1, 1);
    assert_int_equal(cg_jit_entry(j)((const void *const *)inp, outp, ws), 0);
    for (int o = 0; o < no; o++) {
        for (int64_t i = 0; i < ir_array_numel(&ref[o]); i++) {
            double a = ir_load_f64(IR_DT_F32, ref[o].data, i), b = ir_load_f64(IR_DT_F32, outp[o], i);
            if (!(fabs(a - b) <= 1e-5 + 1e-4 * fabs(a)))
                fail_msg("graph %s at %d bits: element %lld: interpreter %.9g, compiled %.9g", g->name, bits,
                         (long long)i, a, b);
        }
        free(outp[o]);
        interp_array_free(&ref[o]);
    }
    for (int i = 0; i < ni; i++)
        free(in[i].data);
    free(ws);
    cg_jit_free(j);
    loop_program_free(p);
}

static void run(TG *t)
{
    if (pass_infer(t->g, &t->d) != 0)
        fail_diag("infer", &t->d);
    run_bits(t->g, 128);
    run_bits(t->g, 256);
    run_bits(t->g, 512);
    ir_graph_free(t->g);
}

typedef struct Conv {
    const char *name;
    int64_t c, m, group, rank;
    int64_t in[3], k[3];
    int64_t pads[6], strides[3], dil[3];
    int bias;
} Conv;

static void conv_graph(TG *t, const Conv *s)
{
    tg_start(t, s->name);
    uint64_t seed = 7;
    int64_t xd[5] = { 1, s->c }, wd[5] = { s->m, s->c / s->group }, r = s->rank;
    for (int i = 0; i < r; i++) {
        xd[2 + i] = s->in[i];
        wd[2 + i] = s->k[i];
    }
    int in[3] = { tg_input(t, "x", IR_DT_F32, (int)r + 2, xd), rand_const(t, "w", (int)r + 2, wd, &seed), -1 };
    if (s->bias)
        in[2] = rand_const(t, "b", 1, &s->m, &seed);
    int y = tg_node(t, IR_OP_Conv, "conv", s->bias ? 3 : 2, in, 1);
    tg_int(t, IR_A_group, s->group);
    tg_ints(t, IR_A_pads, 2 * (int)r, s->pads);
    if (s->strides[0])
        tg_ints(t, IR_A_strides, (int)r, s->strides);
    if (s->dil[0])
        tg_ints(t, IR_A_dilations, (int)r, s->dil);
    tg_output(t, y);
}

static void conv_case(const Conv *s)
{
    TG t;
    conv_graph(&t, s);
    run(&t);
}

/* Statements under s for which is(statement, arg) holds. */
static int count_stmts(const LoopStmt *s, int (*is)(const LoopStmt *, int64_t), int64_t arg)
{
    if (!s)
        return 0;
    int n = is(s, arg);
    switch (s->kind) {
    case LOOP_S_FOR: return n + count_stmts(s->u.loop.body, is, arg);
    case LOOP_S_IF: return n + count_stmts(s->u.cond.then_, is, arg) + count_stmts(s->u.cond.else_, is, arg);
    case LOOP_S_BLOCK:
        for (int i = 0; i < s->u.block.n; i++)
            n += count_stmts(s->u.block.items[i], is, arg);
        return n;
    default: return n;
    }
}

static int is_prefetch(const LoopStmt *s, int64_t arg)
{
    (void)arg;
    return s->kind == LOOP_S_PREFETCH;
}

static int prefetches(const LoopStmt *s) { return count_stmts(s, is_prefetch, 0); }

/* An unrolled loop of constant extent arg. */
static int is_unrolled(const LoopStmt *s, int64_t arg)
{
    return s->kind == LOOP_S_FOR && s->u.loop.kind == LOOP_UNROLLED && s->u.loop.extent->kind == LOOP_E_INT &&
           s->u.loop.extent->u.i == arg;
}

/* Prefetch statements in g lowered for 512 bits, with s.prefetch = on. */
static int program_prefetches(IrGraph *g, int on)
{
    UtilDiag d;
    util_diag_init(&d);
    LowSchedule s = tgt_cpu_schedule(512);
    s.prefetch = on;
    LoopProgram *p = low_graph(g, &s, &d);
    if (!p)
        fail_diag("lower", &d);
    int n = 0;
    for (int k = 0; k < p->n_kernels; k++)
        n += prefetches(p->kernels[k].body);
    loop_program_free(p);
    return n;
}

/* Weights fetched ahead (lower/tile/gemm.c tile_prefetch): a GEMM-form conv on a
 * 7x7 map and a pointwise layer at 14x14 fetch their next weights, a
 * pointwise layer over 1600 pixels does not, nor any without the
 * schedule's prefetch, nor one whose weights are 32 KB or less (in cache
 * from the call before); a squeeze (128 -> 16 at 55x55, pixel blocks
 * outermost) fetches its input ahead; the values (interpreter vs JIT) are
 * the same. */
static void test_prefetch(void **state)
{
    (void)state;
    const Conv cases[] = {
        { "pf_gemm_7x7", 64, 64, 1, 2, { 7, 7 }, { 3, 3 }, { 1, 1, 1, 1 }, { 0 }, { 0 }, 1 },
        { "pf_pw_14x14", 96, 128, 1, 2, { 14, 14 }, { 1, 1 }, { 0, 0, 0, 0 }, { 0 }, { 0 }, 1 },
        { "pf_pw_40x40", 96, 128, 1, 2, { 40, 40 }, { 1, 1 }, { 0, 0, 0, 0 }, { 0 }, { 0 }, 1 },
        { "pf_squeeze", 128, 16, 1, 2, { 55, 55 }, { 1, 1 }, { 0, 0, 0, 0 }, { 0 }, { 0 }, 1 },
        { "pf_small_weights", 48, 96, 1, 2, { 14, 14 }, { 1, 1 }, { 0, 0, 0, 0 }, { 0 }, { 0 }, 1 },   /* 18 KB */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        TG t;
        conv_graph(&t, &cases[i]);
        if (pass_infer(t.g, &t.d) != 0)
            fail_diag("infer", &t.d);
        for (int on = 0; on <= 1; on++) {
            int n = program_prefetches(t.g, on);
            if ((n > 0) != (on && i != 2 && i != 4))
                fail_msg("%s with prefetch %d: %d prefetch statements", cases[i].name, on, n);
        }
        run(&t);
    }
}

/* A loop of constant extent arg kept rolled (LOOP_UNROLLED, factor 1). */
static int is_rolled(const LoopStmt *s, int64_t arg)
{
    return is_unrolled(s, arg) && s->u.loop.factor == 1;
}

/* GEMM-form convolutions whose blocks leave no register to spare (AVX2's
 * 6 x 16) and whose innermost taps are few run the taps outer and the
 * input channels inner (lower/tile/gemm.c): at 256 bits the rolled k loop
 * is the one over the C / group channels, at 512 bits (registers to spare)
 * the taps stay inner; the values at 128, 256 and 512 bits (run). */
static void test_conv_taps_outer(void **state)
{
    (void)state;
    const Conv cases[] = {
        { "c_1d_taps3", 32, 40, 1, 1, { 50 }, { 3 }, { 1, 1 }, { 1 }, { 2 }, 1 },
        { "c_2d_s2_grouped", 32, 24, 2, 2, { 13, 17 }, { 3, 3 }, { 1, 0, 1, 1 }, { 2, 2 }, { 0 }, 1 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        TG t;
        conv_graph(&t, &cases[i]);
        if (pass_infer(t.g, &t.d) != 0)
            fail_diag("infer", &t.d);
        int64_t ch = cases[i].c / cases[i].group;
        for (int bits = 256; bits <= 512; bits += 256) {
            UtilDiag d;
            util_diag_init(&d);
            LowSchedule sc = tgt_cpu_schedule(bits);
            LoopProgram *p = low_graph(t.g, &sc, &d);
            if (!p)
                fail_diag("lower", &d);
            int n = 0;
            for (int k = 0; k < p->n_kernels; k++)
                n += count_stmts(p->kernels[k].body, is_rolled, ch);
            loop_program_free(p);
            if ((n > 0) != (bits == 256))
                fail_msg("%s at %d bits: %d rolled loops over the %lld channels", cases[i].name, bits, n,
                         (long long)ch);
        }
        run(&t);
    }
}

static void test_conv_general(void **state)
{
    (void)state;
    const Conv cases[] = {
        { "c3x3_tails", 5, 37, 1, 2, { 9, 11 }, { 3, 3 }, { 1, 1, 1, 1 }, { 0 }, { 0 }, 1 },
        { "c_grouped_strided_dilated", 6, 40, 2, 2, { 13, 10 }, { 3, 2 }, { 0, 1, 2, 0 }, { 2, 1 }, { 2, 1 }, 0 },
        { "c_1d", 3, 20, 1, 1, { 31 }, { 5 }, { 2, 1 }, { 1 }, { 0 }, 1 },
        { "c_3d", 4, 12, 1, 3, { 5, 6, 7 }, { 2, 3, 2 }, { 1, 0, 1, 0, 1, 1 }, { 1, 2, 1 }, { 0 }, 1 },
        { "c_1x1_strided", 8, 24, 1, 2, { 9, 9 }, { 1, 1 }, { 0, 0, 0, 0 }, { 2, 2 }, { 0 }, 1 },
        { "c_direct_s2", 3, 19, 1, 2, { 9, 80 }, { 3, 3 }, { 1, 1, 1, 1 }, { 2, 2 }, { 0 }, 1 },   /* stem-like */
        { "c_direct_wide", 4, 13, 1, 2, { 5, 70 }, { 3, 3 }, { 1, 0, 1, 2 }, { 1, 1 }, { 1, 2 }, 0 },
        /* RegNet's grouped 3x3 layers (16 channels a group): rows of 14 and 28
         * in two-register blocks, masked past the row / the last block inside it */
        { "c_direct_grouped_14", 32, 32, 2, 2, { 14, 14 }, { 3, 3 }, { 1, 1, 1, 1 }, { 1, 1 }, { 0 }, 1 },
        { "c_direct_grouped_28", 32, 32, 2, 2, { 6, 28 }, { 3, 3 }, { 1, 1, 1, 1 }, { 1, 1 }, { 0 }, 0 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        conv_case(&cases[i]);
}

static void test_conv_depthwise(void **state)
{
    (void)state;
    const Conv cases[] = {
        { "dw_s1", 7, 7, 7, 2, { 13, 21 }, { 3, 3 }, { 1, 1, 1, 1 }, { 0 }, { 0 }, 1 },
        { "dw_s2", 5, 5, 5, 2, { 15, 37 }, { 3, 3 }, { 1, 1, 1, 1 }, { 2, 2 }, { 0 }, 0 },
        { "dw_mult2_dilated", 3, 6, 3, 2, { 11, 12 }, { 3, 3 }, { 2, 2, 2, 2 }, { 1, 1 }, { 2, 2 }, 1 },
        { "dw_5x5_s3_nopad", 4, 4, 4, 2, { 17, 40 }, { 5, 5 }, { 0, 0, 0, 0 }, { 3, 3 }, { 0 }, 1 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        conv_case(&cases[i]);
}

static void test_conv_pointwise(void **state)
{
    (void)state;
    const Conv cases[] = {
        { "pw_tails", 19, 23, 1, 2, { 7, 9 }, { 1, 1 }, { 0, 0, 0, 0 }, { 0 }, { 0 }, 1 },
        { "pw_grouped", 16, 24, 2, 2, { 8, 11 }, { 1, 1 }, { 0, 0, 0, 0 }, { 1, 1 }, { 0 }, 0 },
        { "pw_wide", 16, 64, 1, 2, { 8, 8 }, { 1, 1 }, { 0, 0, 0, 0 }, { 0 }, { 0 }, 1 },
        { "pw_14x14", 24, 40, 1, 2, { 14, 14 }, { 1, 1 }, { 0, 0, 0, 0 }, { 0 }, { 0 }, 1 },  /* last block overlaps */
        { "pw_8x9", 24, 40, 1, 2, { 8, 9 }, { 1, 1 }, { 0, 0, 0, 0 }, { 0 }, { 0 }, 1 },      /* one register */
        { "pw_strided", 24, 40, 1, 2, { 56, 56 }, { 1, 1 }, { 0, 0, 0, 0 }, { 2, 2 }, { 0 }, 1 },  /* gathered */
        { "pw_strided_odd", 8, 12, 1, 2, { 15, 30 }, { 1, 1 }, { 0, 0, 0, 0 }, { 2, 2 }, { 0 }, 0 },
        { "pw_reduce", 64, 21, 1, 2, { 14, 14 }, { 1, 1 }, { 0, 0, 0, 0 }, { 0 }, { 0 }, 1 },   /* split reduction */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        conv_case(&cases[i]);
}

static void pool_case(const char *name, int64_t c, int64_t h, int64_t w, int64_t k, int64_t stride, int64_t pad,
                      int64_t dil, int ceil)
{
    TG t;
    tg_start(&t, name);
    int in = tg_input(&t, "x", IR_DT_F32, TG_INTS(1, c, h, w));
    int y = tg_node(&t, IR_OP_MaxPool, "pool", 1, &in, 1);
    tg_ints(&t, IR_A_kernel_shape, TG_INTS(k, k));
    tg_ints(&t, IR_A_strides, TG_INTS(stride, stride));
    tg_ints(&t, IR_A_pads, TG_INTS(pad, pad, pad, pad));
    tg_ints(&t, IR_A_dilations, TG_INTS(dil, dil));
    tg_int(&t, IR_A_ceil_mode, ceil);
    tg_output(&t, y);
    run(&t);
}

static void test_global_average_pool(void **state)
{
    (void)state;
    const int64_t shapes[3][4] = { { 1, 7, 13, 11 }, { 2, 5, 5, 25 }, { 1, 3, 33, 1 } };   /* tails of 16 lanes */
    for (int i = 0; i < 3; i++) {
        TG t;
        tg_start(&t, "gap");
        int in = tg_input(&t, "x", IR_DT_F32, 4, shapes[i]);
        tg_output(&t, tg_node(&t, IR_OP_GlobalAveragePool, "gap", 1, &in, 1));
        run(&t);
    }
}

static void test_maxpool(void **state)
{
    (void)state;
    pool_case("mp_3x3_s2_p1", 5, 17, 35, 3, 2, 1, 1, 0);     /* ResNet's */
    pool_case("mp_3x3_s2_ceil", 3, 20, 41, 3, 2, 0, 1, 1);   /* SqueezeNet's (ceil_mode) */
    pool_case("mp_2x2_s2", 4, 12, 24, 2, 2, 0, 1, 0);
    pool_case("mp_dilated", 2, 15, 30, 3, 1, 2, 2, 0);
}

/* The layouts between kernels (docs/passes.md, "Memory planning"), checked
 * on the program at 512 bits, then interpreter vs JIT at every width. */
typedef struct Layout {
    int halo_cols, halo_rows_only, halo_ninf, padded, views, concat_kernel;
} Layout;

/* g lowered for 512-bit SIMD (the program is inspected, not run). */
static LoopProgram *lower_512(IrGraph *g)
{
    UtilDiag d;
    util_diag_init(&d);
    LowSchedule s = tgt_cpu_schedule(512);
    LoopProgram *p = low_graph(g, &s, &d);
    if (!p)
        fail_diag("lower", &d);
    return p;
}

/* t's graph inferred, lowered for 512 bits and scheduled for `threads`, a
 * one-layer program included (parallel_min_model_flops 0). */
static LoopProgram *lower_scheduled(TG *t, int threads)
{
    if (pass_infer(t->g, &t->d) != 0)
        fail_diag("infer", &t->d);
    LowSchedule s = tgt_cpu_schedule(512);
    s.threads = threads;
    s.parallel_min_model_flops = 0;
    LoopProgram *p = lower_512(t->g);
    tgt_cpu_apply_schedule(p, &s);
    return p;
}

static Layout layout_of(IrGraph *g)
{
    LoopProgram *p = lower_512(g);
    Layout l = { 0 };
    for (int i = 0; i < p->n_bufs; i++) {
        const LoopBuf *b = &p->bufs[i];
        l.halo_cols += b->halo_cols > 0;
        l.halo_rows_only += b->halo_rows > 0 && b->halo_cols == 0;
        l.halo_ninf += (b->halo_rows || b->halo_cols) && isinf(b->halo_fill);
        l.padded += strncmp(b->name, "padded", 6) == 0;
        l.views += b->alias_of >= 0 && b->base > 0;
    }
    for (int k = 0; k < p->n_kernels; k++)
        l.concat_kernel += strstr(p->kernels[k].name, "cat") != NULL;
    loop_program_free(p);
    return l;
}

static int conv_node(TG *t, const char *name, int x, int64_t cin, int64_t cout, int64_t k, int64_t pad, int64_t group,
                     uint64_t *seed)
{
    int64_t wd[4] = { cout, cin / group, k, k }, n = cout * (cin / group) * k * k;
    double *v = malloc((size_t)n * sizeof *v);
    assert_non_null(v);
    for (int64_t i = 0; i < n; i++)              /* scaled by 1/sqrt(fan-in): activations stay near 1 */
        v[i] = frand(seed) / sqrt((double)(cin / group * k * k));
    int in[2] = { x, tg_const(t, name, IR_DT_F32, 4, wd, v) };
    free(v);
    int y = tg_node(t, IR_OP_Conv, name, 2, in, 1);
    tg_int(t, IR_A_group, group);
    tg_ints(t, IR_A_pads, TG_INTS(pad, pad, pad, pad));
    return y;
}

static void test_layouts(void **state)
{
    (void)state;
    uint64_t seed = 11;
    /* direct conv (model input read in place, guarded) -> GEMM-form conv with
     * a residual Add -> MaxPool -> pointwise (along rows) -> depthwise on
     * rows narrower than 32 (halo rows, masked columns) */
    TG t;
    tg_start(&t, "halo_chain");
    int x = tg_input(&t, "x", IR_DT_F32, TG_INTS(1, 8, 20, 40));
    int a = conv_node(&t, "a", x, 8, 32, 3, 1, 1, &seed);
    int b = conv_node(&t, "b", a, 32, 32, 3, 1, 1, &seed);
    int ab[2] = { b, a };
    int s = tg_node(&t, IR_OP_Add, "res", 2, ab, 1);
    int m = tg_node(&t, IR_OP_MaxPool, "pool", 1, &s, 1);
    tg_ints(&t, IR_A_kernel_shape, TG_INTS(3, 3));
    tg_ints(&t, IR_A_strides, TG_INTS(2, 2));
    tg_ints(&t, IR_A_pads, TG_INTS(1, 1, 1, 1));
    int dd = conv_node(&t, "d", m, 32, 48, 1, 0, 1, &seed);
    int e = conv_node(&t, "e", dd, 48, 48, 3, 1, 48, &seed);
    tg_output(&t, e);
    PassOptions po = pass_options(2);                 /* the residual Add fused into b's kernel */
    if (pass_infer(t.g, &t.d) != 0 || pass_run_pipeline(t.g, &po, &t.d) != 0)
        fail_diag("-O2", &t.d);
    Layout l = layout_of(t.g);
    assert_int_equal(l.padded, 0);            /* no layer copies its input */
    assert_true(l.halo_cols >= 1);            /* a: read by the GEMM form */
    assert_true(l.halo_rows_only >= 1);       /* d: 10 columns, masked */
    assert_true(l.halo_ninf >= 1);            /* the MaxPool's input */
    run(&t);

    /* a stride-1 MaxPool over whole narrow planes (rows of -inf above and
     * below, columns masked): DS-CNN / MobileNet-sized maps */
    tg_start(&t, "flat_pool");
    x = tg_input(&t, "x", IR_DT_F32, TG_INTS(1, 6, 13, 11));
    int f = conv_node(&t, "f", x, 6, 20, 3, 0, 1, &seed);          /* 11 x 9, the GEMM form */
    int fp = tg_node(&t, IR_OP_MaxPool, "fpool", 1, &f, 1);
    tg_ints(&t, IR_A_kernel_shape, TG_INTS(3, 3));
    tg_ints(&t, IR_A_pads, TG_INTS(1, 1, 1, 1));
    tg_output(&t, fp);
    if (pass_infer(t.g, &t.d) != 0)
        fail_diag("infer", &t.d);
    l = layout_of(t.g);
    assert_int_equal(l.padded, 0);
    assert_int_equal(l.halo_rows_only, 1);
    assert_int_equal(l.halo_ninf, 1);
    run(&t);

    /* a SqueezeNet fire module: the two expand convolutions write their
     * halves of the Concat in place */
    tg_start(&t, "fire");
    x = tg_input(&t, "x", IR_DT_F32, TG_INTS(1, 16, 13, 15));
    int sq = conv_node(&t, "sq", x, 16, 8, 1, 0, 1, &seed);
    int e1 = conv_node(&t, "e1", sq, 8, 16, 1, 0, 1, &seed);
    int e3 = conv_node(&t, "e3", sq, 8, 24, 3, 1, 1, &seed);
    int ee[2] = { e1, e3 };
    int cat = tg_node(&t, IR_OP_Concat, "cat", 2, ee, 1);
    tg_int(&t, IR_A_axis, 1);
    int r = tg_node(&t, IR_OP_Relu, "relu", 1, &cat, 1);
    tg_output(&t, r);
    if (pass_infer(t.g, &t.d) != 0)
        fail_diag("infer", &t.d);
    l = layout_of(t.g);
    assert_int_equal(l.views, 1);             /* e3 at channel 16 of cat (e1 at 0) */
    assert_int_equal(l.concat_kernel, 0);
    run(&t);

    /* SqueezeNet's stem and first squeeze: an unpadded 3x3/2 direct conv
     * reading the model input in place (its last block of a row starts at
     * OW - NR, its strided loads read no further than the even row: no padded
     * copy), then a 1x1 layer along halo'd rows of 27 (two pieces of 16,
     * at 0 and 11) feeding a padded 3x3 */
    tg_start(&t, "stem_squeeze");
    x = tg_input(&t, "x", IR_DT_F32, TG_INTS(1, 3, 9, 56));
    int st = conv_node(&t, "st", x, 3, 20, 3, 0, 1, &seed);          /* 4 x 27 */
    tg_ints(&t, IR_A_strides, TG_INTS(2, 2));
    int sr = tg_node(&t, IR_OP_Relu, "st_relu", 1, &st, 1);
    int q = conv_node(&t, "q", sr, 20, 12, 1, 0, 1, &seed);
    int q3 = conv_node(&t, "q3", q, 12, 16, 3, 1, 1, &seed);
    tg_output(&t, q3);
    if (pass_infer(t.g, &t.d) != 0)
        fail_diag("infer", &t.d);
    l = layout_of(t.g);
    assert_int_equal(l.padded, 0);
    assert_int_equal(l.halo_cols, 1);         /* q's output, read by q3 */
    run(&t);

    /* MobileNetV2's 14x14 -> 7x7 step: a pointwise layer over the plane
     * feeding a 3x3/2 depthwise conv, which reads it in place (halo rows,
     * its first column masked, its strided loads reaching into the next
     * row) instead of a padded copy */
    tg_start(&t, "narrow_s2");
    x = tg_input(&t, "x", IR_DT_F32, TG_INTS(1, 16, 14, 14));
    int pe = conv_node(&t, "pe", x, 16, 40, 1, 0, 1, &seed);
    int pd = conv_node(&t, "pd", pe, 40, 40, 3, 1, 40, &seed);
    tg_ints(&t, IR_A_strides, TG_INTS(2, 2));
    tg_output(&t, pd);
    if (pass_infer(t.g, &t.d) != 0)
        fail_diag("infer", &t.d);
    l = layout_of(t.g);
    assert_int_equal(l.padded, 0);
    assert_int_equal(l.halo_rows_only, 1);
    run(&t);
}

/* Winograd F(2x2, 3x3) (lower/tile/winograd.c) at 256 and 512 bits (the
 * 128-bit schedule keeps the other forms): odd output sizes (a last tile
 * row and column half outside), output channels that do not fill the last
 * block, rows narrower than a vector (several tile rows per vector, a last
 * group past the output), no padding and asymmetric padding, a padded
 * copy of the input (a Relu's output) and a halo read in place (a Winograd conv's output), a
 * fused residual Add, batch 2.  Each graph is checked to use the transform
 * (a "wino_u" constant) at 512 bits, and not to fetch the transformed
 * weights ahead (a small model's are in cache: test_winograd_prefetch). */
/* Buffers named name... (a conv's own) in g lowered for 512 bits. */
static int wino_bufs(IrGraph *g, const char *name)
{
    LoopProgram *p = lower_512(g);
    int n = 0;
    for (int i = 0; i < p->n_bufs; i++)
        n += strncmp(p->bufs[i].name, name, strlen(name)) == 0;
    loop_program_free(p);
    return n;
}

static int wino_convs(IrGraph *g) { return wino_bufs(g, "wino_u"); }

/* Loops over c input channels unrolled in g lowered for 512 bits. */
static int unrolled_loops(IrGraph *g, int64_t c)
{
    LoopProgram *p = lower_512(g);
    int n = 0;
    for (int k = 0; k < p->n_kernels; k++)
        n += count_stmts(p->kernels[k].body, is_unrolled, c);
    loop_program_free(p);
    return n;
}

static void wino_case(const char *name, int64_t batch, int64_t c, int64_t k, int64_t h, int64_t w, const int64_t *pads,
                      int chain, int cl)
{
    TG t;
    uint64_t seed = 5;
    tg_start(&t, name);
    int x = tg_input(&t, "x", IR_DT_F32, TG_INTS(batch, c, h, w));
    int r = tg_node(&t, IR_OP_Relu, "relu", 1, &x, 1);
    int64_t wd[4] = { k, c, 3, 3 };
    double *wv = malloc((size_t)(k * c * 9) * sizeof *wv);
    assert_non_null(wv);
    for (int64_t i = 0; i < k * c * 9; i++)     /* scaled by 1/sqrt(fan-in): outputs near 1 */
        wv[i] = frand(&seed) / sqrt((double)(c * 9));
    int in[3] = { r, tg_const(&t, "w", IR_DT_F32, 4, wd, wv), rand_const(&t, "b", 1, &k, &seed) };
    free(wv);
    int y = tg_node(&t, IR_OP_Conv, "conv", 3, in, 1);
    tg_ints(&t, IR_A_pads, 4, pads);
    if (chain) {                  /* a second one reading y's halo in place, plus the residual */
        int z = conv_node(&t, "conv2", y, k, k, 3, 1, 1, &seed), zy[2] = { z, y };
        y = tg_node(&t, IR_OP_Add, "res", 2, zy, 1);
    }
    tg_output(&t, y);
    PassOptions po = pass_options(2);
    if (pass_infer(t.g, &t.d) != 0 || pass_run_pipeline(t.g, &po, &t.d) != 0)
        fail_diag("-O2", &t.d);
    assert_int_equal(wino_convs(t.g), chain ? 2 : 1);
    assert_int_equal(wino_bufs(t.g, "wino_z"), cl);     /* convs with the channels in the lanes */
    assert_int_equal(program_prefetches(t.g, 1), 0);     /* weights in L2 from the run before */
    /* the products' loop over the input channels unrolled when there are at most 32 of them */
    assert_true((unrolled_loops(t.g, c) > 0) == (c <= 32));
    run(&t);
}

/* A model whose weights outgrow a core's L2 (a 64 -> 1024 3x3 conv: 2.4
 * MB) fetches the next position's transformed weights ahead, when the
 * schedule prefetches (the values are the other cases'). */
static void test_winograd_prefetch(void **state)
{
    (void)state;
    uint64_t seed = 41;
    TG t;
    tg_start(&t, "wino_big_weights");
    int x = tg_input(&t, "x", IR_DT_F32, TG_INTS(1, 64, 13, 13));
    int r = tg_node(&t, IR_OP_Relu, "relu", 1, &x, 1);
    tg_output(&t, conv_node(&t, "c", r, 64, 1024, 3, 1, 1, &seed));
    PassOptions po = pass_options(2);
    if (pass_infer(t.g, &t.d) != 0 || pass_run_pipeline(t.g, &po, &t.d) != 0)
        fail_diag("-O2", &t.d);
    assert_int_equal(wino_convs(t.g), 1);
    assert_true(program_prefetches(t.g, 1) > 0);
    assert_int_equal(program_prefetches(t.g, 0), 0);
    ir_graph_free(t.g);
}

static void test_winograd(void **state)
{
    (void)state;
    wino_case("w_tails", 1, 9, 37, 11, 47, (int64_t[]){ 1, 1, 1, 1 }, 0, 0);
    wino_case("w_nopad", 1, 8, 16, 10, 30, (int64_t[]){ 0, 0, 0, 0 }, 0, 0);
    wino_case("w_pad_asym", 1, 8, 20, 7, 40, (int64_t[]){ 2, 0, 1, 2 }, 0, 0);
    wino_case("w_chain_residual", 2, 16, 16, 9, 25, (int64_t[]){ 1, 1, 1, 1 }, 1, 0);
    wino_case("w_c40", 1, 40, 16, 16, 12, (int64_t[]){ 1, 1, 1, 1 }, 0, 0);      /* a channel loop kept */
    /* narrow rows: several tile rows per vector (a last group past the output), their
     * input transform on whole registers when the groups' tile rows all exist (ResNet-8's
     * 32x32: 2 rows of 8 tiles at 512 bits; 13x13 and 8x8: 4 of 4) or on one row's lanes
     * at a time when they do not (27x27: 7 tile rows in groups of 2) */
    wino_case("w_rows_13x13", 1, 12, 24, 13, 13, (int64_t[]){ 1, 1, 1, 1 }, 0, 0);
    wino_case("w_rows_8x8", 1, 16, 20, 8, 8, (int64_t[]){ 1, 1, 1, 1 }, 1, 0);
    wino_case("w_rows_12x16", 2, 8, 16, 12, 16, (int64_t[]){ 0, 1, 1, 0 }, 0, 0);
    wino_case("w_rows_32x32", 1, 16, 16, 32, 32, (int64_t[]){ 1, 1, 1, 1 }, 1, 0);
    wino_case("w_rows_27x27", 1, 8, 16, 27, 27, (int64_t[]){ 1, 1, 1, 1 }, 0, 0);
    /* maps of at most 8 tiles of F(4x4), at least 32 output channels: the GEMM's lanes along
     * the output channels (ResNet-8's 8x8x64), the output transform's columns gathered
     * across the tiles.  8x8 with the residual chain; 7x7 (the last tile row and column
     * partly outside) with 40 channels (a block's lanes past them); 6x10, 2 x 3 tiles.
     * (w_rows_8x8, 20 channels, keeps the tiles in the lanes.) */
    wino_case("w_cl_8x8", 1, 32, 64, 8, 8, (int64_t[]){ 1, 1, 1, 1 }, 1, 2);
    wino_case("w_cl_7x7_k40", 1, 48, 40, 7, 7, (int64_t[]){ 1, 1, 1, 1 }, 0, 1);
    wino_case("w_cl_6x10", 2, 16, 32, 6, 10, (int64_t[]){ 1, 1, 1, 1 }, 0, 1);
}

/* Buffers of program p named `name`. */
static int bufs_named(const LoopProgram *p, const char *name)
{
    int n = 0;
    for (int b = 0; b < p->n_bufs; b++)
        n += strcmp(p->bufs[b].name, name) == 0;
    return n;
}

/* t's graph lowered for 512 bits holds one buffer named `name`; then run. */
static void run_with_buf(TG *t, const char *name)
{
    if (pass_infer(t->g, &t->d) != 0)
        fail_diag("infer", &t->d);
    LoopProgram *p = lower_512(t->g);
    assert_int_equal(bufs_named(p, name), 1);
    loop_program_free(p);
    run(t);
}

static void test_matmul(void **state)
{
    (void)state;
    uint64_t seed = 3;
    TG t;
    /* batched A, constant B with a column tail */
    tg_start(&t, "mm_const_b");
    int in[3] = { tg_input(&t, "a", IR_DT_F32, TG_INTS(2, 7, 33)), rand_const(&t, "b", TG_INTS(33, 21), &seed) };
    tg_output(&t, tg_node(&t, IR_OP_MatMul, "mm", 2, in, 1));
    run(&t);
    /* B known only at run time (packed by a kernel), columns a multiple of the block */
    tg_start(&t, "mm_runtime_b");
    in[0] = tg_input(&t, "a", IR_DT_F32, TG_INTS(13, 29));
    in[1] = tg_input(&t, "b", IR_DT_F32, TG_INTS(29, 64));
    tg_output(&t, tg_node(&t, IR_OP_MatMul, "mm", 2, in, 1));
    run(&t);
    /* Gemm: transposes, alpha, beta, a bias row */
    tg_start(&t, "gemm_trans");
    in[0] = tg_input(&t, "a", IR_DT_F32, TG_INTS(17, 10));
    in[1] = rand_const(&t, "b", TG_INTS(26, 17), &seed);
    in[2] = rand_const(&t, "c", TG_INTS(1, 26), &seed);
    tg_output(&t, tg_node(&t, IR_OP_Gemm, "gemm", 3, in, 1));
    tg_int(&t, IR_A_transA, 1);
    tg_int(&t, IR_A_transB, 1);
    tg_float(&t, IR_A_alpha, 0.5);
    tg_float(&t, IR_A_beta, -2.0);
    run(&t);
    /* Gemm with run-time B^T and a bias vector */
    tg_start(&t, "gemm_runtime_bt");
    in[0] = tg_input(&t, "a", IR_DT_F32, TG_INTS(9, 40));
    in[1] = tg_input(&t, "b", IR_DT_F32, TG_INTS(35, 40));
    in[2] = rand_const(&t, "c", TG_INTS(35), &seed);
    tg_output(&t, tg_node(&t, IR_OP_Gemm, "gemm", 3, in, 1));
    tg_int(&t, IR_A_transB, 1);
    tg_float(&t, IR_A_alpha, 1.5);
    run(&t);
    /* batch-1 layers of a small MLP (1 x 48 x 32: 1536 multiply-adds; 1 x 64 x 10 with a
     * bias): blocks of one row, not the plain template's one scalar chain per output */
    const int64_t mlp[2][2] = { { 48, 32 }, { 64, 10 } };
    for (int i = 0; i < 2; i++) {
        tg_start(&t, i ? "gemm_gemv_bias" : "mm_gemv");
        in[0] = tg_input(&t, "a", IR_DT_F32, TG_INTS(1, mlp[i][0]));
        in[1] = rand_const(&t, "b", TG_INTS(mlp[i][0], mlp[i][1]), &seed);
        in[2] = rand_const(&t, "c", TG_INTS(mlp[i][1]), &seed);
        tg_output(&t, tg_node(&t, i ? IR_OP_Gemm : IR_OP_MatMul, "mm", i ? 3 : 2, in, 1));
        run_with_buf(&t, "packed_b");
    }
    /* A over 1 MB, read by several panels: packed per block of rows by a kernel of its own
     * (rows past M repeat row M-1; transA reads its columns) */
    for (int ta = 0; ta < 2; ta++) {
        tg_start(&t, ta ? "gemm_packed_at" : "mm_packed_a");
        if (ta) {
            in[0] = tg_input(&t, "a", IR_DT_F32, TG_INTS(270, 1001));
            in[1] = tg_input(&t, "b", IR_DT_F32, TG_INTS(270, 70));
        } else {
            in[0] = tg_input(&t, "a", IR_DT_F32, TG_INTS(1001, 270));
            in[1] = rand_const(&t, "b", TG_INTS(270, 70), &seed);
        }
        tg_output(&t, tg_node(&t, ta ? IR_OP_Gemm : IR_OP_MatMul, "mm", 2, in, 1));
        if (ta)
            tg_int(&t, IR_A_transA, 1);
        run_with_buf(&t, "packed_a");
    }
    /* attention's batched products of two run-time operands, [2, 3, M, K] x [2, 3, K, N]:
     * a GEMM per batch (group), B packed per group; with a fused Add of a broadcast mask,
     * whose store unflattens the row over the batch dims; rows and columns with tails */
    for (int fused = 0; fused < 2; fused++) {
        tg_start(&t, fused ? "mm_batched_mask" : "mm_batched");
        in[0] = tg_input(&t, "q", IR_DT_F32, TG_INTS(2, 3, 13, 16));
        in[1] = tg_input(&t, "k", IR_DT_F32, TG_INTS(2, 3, 16, 21));
        int y = tg_node(&t, IR_OP_MatMul, "mm", 2, in, 1);
        if (fused) {
            int add[2] = { y, rand_const(&t, "mask", TG_INTS(1, 3, 1, 21), &seed) };
            y = tg_node(&t, IR_OP_Add, "add", 2, add, 1);
        }
        tg_output(&t, y);
        PassOptions po = pass_options(2);
        if (pass_infer(t.g, &t.d) != 0 || pass_run_pipeline(t.g, &po, &t.d) != 0)
            fail_diag("-O2", &t.d);
        run_with_buf(&t, "packed_b");
    }
}

/* ConvTranspose whose kernel equals its stride (a U-Net's up-convolution):
 * a GEMM per phase of the output pixel (a buffer "packed_b" of the GEMM
 * form), values against the interpreter at 128 / 256 / 512 bits: 2x2 / 2
 * with a bias and a fused Relu, 3x2 / (3, 2) at batch 2 without a bias, 1x1;
 * and with pads it keeps the plain template (no packed_b; ONNX's
 * ConvTranspose node cases check its values). */
static void test_convtranspose(void **state)
{
    (void)state;
    static const struct { const char *name; int64_t n, c, m, h, w, kh, kw; int bias, relu, pad; } cs[] = {
        { "ct_2x2_bias_relu", 1, 24, 16, 7, 9, 2, 2, 1, 1, 0 },
        { "ct_3x2_batch2", 2, 8, 20, 5, 6, 3, 2, 0, 0, 0 },
        { "ct_1x1", 1, 16, 33, 4, 4, 1, 1, 1, 0, 0 },
        { "ct_2x2_pads", 1, 8, 16, 6, 6, 2, 2, 1, 0, 1 },
    };
    uint64_t seed = 77;
    for (size_t i = 0; i < sizeof cs / sizeof *cs; i++) {
        TG t;
        tg_start(&t, cs[i].name);
        int in[3] = { tg_input(&t, "x", IR_DT_F32, TG_INTS(cs[i].n, cs[i].c, cs[i].h, cs[i].w)),
                      rand_const(&t, "w", TG_INTS(cs[i].c, cs[i].m, cs[i].kh, cs[i].kw), &seed),
                      cs[i].bias ? rand_const(&t, "b", TG_INTS(cs[i].m), &seed) : -1 };
        int y = tg_node(&t, IR_OP_ConvTranspose, "ct", cs[i].bias ? 3 : 2, in, 1);
        tg_ints(&t, IR_A_strides, TG_INTS(cs[i].kh, cs[i].kw));
        if (cs[i].pad)
            tg_ints(&t, IR_A_pads, TG_INTS(1, 0, 1, 0));
        if (cs[i].relu)
            y = tg_node(&t, IR_OP_Relu, "relu", 1, &y, 1);
        tg_output(&t, y);
        PassOptions po = pass_options(2);
        if (pass_infer(t.g, &t.d) != 0 || pass_run_pipeline(t.g, &po, &t.d) != 0)
            fail_diag("-O2", &t.d);
        LoopProgram *p = lower_512(t.g);
        assert_int_equal(bufs_named(p, "packed_b"), !cs[i].pad);
        loop_program_free(p);
        if (cs[i].pad)                     /* (run() wants a register block) */
            ir_graph_free(t.g);
        else
            run(&t);
    }
}

/* A product whose epilogue is a long fused chain (40 × Add of its own
 * constant, Relu): each member's constant gets its buffer while the head's
 * kernel is built, more than the lowering's fixed reserve of new buffers
 * (a use-after-free of the buffer array before the reserve counted the
 * members' inputs).  MatMul (the GEMM form) and a 1×1 Conv (pointwise). */
static void long_chain_case(const char *name, int conv)
{
    uint64_t seed = 17;
    TG t;
    tg_start(&t, name);
    int in[2] = { conv ? tg_input(&t, "x", IR_DT_F32, TG_INTS(1, 16, 8, 40)) : tg_input(&t, "x", IR_DT_F32, TG_INTS(6, 32)),
                  conv ? rand_const(&t, "w", TG_INTS(16, 16, 1, 1), &seed) : rand_const(&t, "w", TG_INTS(32, 32), &seed) };
    int y = tg_node(&t, conv ? IR_OP_Conv : IR_OP_MatMul, "head", 2, in, 1);
    for (int i = 0; i < 40; i++) {
        char cn[16], an[16], rn[16];
        snprintf(cn, sizeof cn, "c%d", i);
        snprintf(an, sizeof an, "add%d", i);
        snprintf(rn, sizeof rn, "relu%d", i);
        int ab[2] = { y, conv ? rand_const(&t, cn, TG_INTS(16, 1, 1), &seed) : rand_const(&t, cn, TG_INTS(32), &seed) };
        y = tg_node(&t, IR_OP_Add, an, 2, ab, 1);
        y = tg_node(&t, IR_OP_Relu, rn, 1, &y, 1);
    }
    tg_output(&t, y);
    PassOptions po = pass_options(2);
    if (pass_infer(t.g, &t.d) != 0 || pass_run_pipeline(t.g, &po, &t.d) != 0)
        fail_diag("-O2", &t.d);
    LoopProgram *p = lower_512(t.g);
    { UtilBuf ub; util_buf_init(&ub); loop_print(p, &ub); fwrite(ub.data, 1, ub.len, stderr); util_buf_free(&ub); }
    assert_int_equal(p->n_kernels, 1);            /* one kernel: the whole chain is its epilogue */
    loop_program_free(p);
    run(&t);
}

static void test_long_epilogue(void **state)
{
    (void)state;
    long_chain_case("chain_matmul", 0);
    long_chain_case("chain_pointwise", 1);
}

/* Threads and a short parallel loop: the GEMM form of a 1×1 convolution
 * with 96 output channels on a 7×7 map has 3 blocks of 32 channels at 512
 * bits, which 2 threads would split 2:1; the schedule merges the block loop
 * with the pixel-block loop inside it (one parallel loop whose body starts
 * with the two LETs that recover the block and the pixel block). */
static int collapsed_loops(const LoopStmt *s)
{
    if (!s)
        return 0;
    switch (s->kind) {
    case LOOP_S_FOR:
        return (s->u.loop.kind == LOOP_PARALLEL && s->u.loop.body->kind == LOOP_S_BLOCK &&
                s->u.loop.body->u.block.n > 2 && s->u.loop.body->u.block.items[0]->kind == LOOP_S_LET &&
                s->u.loop.body->u.block.items[1]->kind == LOOP_S_LET) + collapsed_loops(s->u.loop.body);
    case LOOP_S_BLOCK: {
        int n = 0;
        for (int i = 0; i < s->u.block.n; i++)
            n += collapsed_loops(s->u.block.items[i]);
        return n;
    }
    default: return 0;
    }
}

static void test_parallel_collapse(void **state)
{
    (void)state;
    uint64_t seed = 23;
    TG t;
    tg_start(&t, "pw_96_on_2_threads");
    int x = tg_input(&t, "x", IR_DT_F32, TG_INTS(1, 256, 7, 7));      /* 2.4 MFLOP: worth the threads */
    tg_output(&t, conv_node(&t, "pw", x, 256, 96, 1, 0, 1, &seed));
    LoopProgram *p = lower_scheduled(&t, 2);
    int n = 0;
    for (int k = 0; k < p->n_kernels; k++)
        n += collapsed_loops(p->kernels[k].body);
    assert_int_equal(n, 1);
    loop_program_free(p);
    run(&t);                  /* numerics at 512 bits with threads = 2 (run serially) */
}

/* The name of the first PARALLEL loop's variable in s, or NULL. */
static const char *parallel_var(const LoopProgram *p, const LoopStmt *s)
{
    if (!s)
        return NULL;
    if (s->kind == LOOP_S_FOR)
        return s->u.loop.kind == LOOP_PARALLEL ? p->vars[s->u.loop.var].name : parallel_var(p, s->u.loop.body);
    for (int i = 0; s->kind == LOOP_S_BLOCK && i < s->u.block.n; i++) {
        const char *v = parallel_var(p, s->u.block.items[i]);
        if (v)
            return v;
    }
    return NULL;
}

/* A direct-form layer on an image (3 channels) with no more blocks of
 * output channels than threads is split by output rows at 2 threads (the
 * parallel loop: the row parts "rp"), with 64 channels (4 blocks at 512
 * bits) by channel blocks; an odd number of output rows (39 rows, no
 * padding: 19) makes the last part repeat the last row.  Numerics: run_bits
 * at 512 bits lowers for 2 threads (and runs serially). */
static void test_direct_row_parts(void **state)
{
    (void)state;
    const struct { int64_t h, w, pad, cout; int rows; } cases[3] = {
        { 39, 224, 0, 24, 1 }, { 40, 224, 1, 32, 1 }, { 40, 224, 1, 64, 0 } };
    for (int i = 0; i < 3; i++) {
        uint64_t seed = 37;
        TG t;
        tg_start(&t, "direct_rows_on_2_threads");
        int x = tg_input(&t, "x", IR_DT_F32, TG_INTS(1, 3, cases[i].h, cases[i].w));
        tg_output(&t, conv_node(&t, "stem", x, 3, cases[i].cout, 3, cases[i].pad, 1, &seed));
        tg_ints(&t, IR_A_strides, TG_INTS(2, 2));
        if (pass_infer(t.g, &t.d) != 0)
            fail_diag("infer", &t.d);
        UtilDiag d;
        util_diag_init(&d);
        LowSchedule s = tgt_cpu_schedule(512);
        s.threads = 2;
        s.parallel_min_model_flops = 0;
        s.parallel_min_flops = 0;
        LoopProgram *p = low_graph(t.g, &s, &d);
        if (!p)
            fail_diag("lower", &d);
        assert_true(has_block(p));
        tgt_cpu_apply_schedule(p, &s);
        const char *v = parallel_var(p, p->kernels[p->n_kernels - 1].body);
        assert_non_null(v);
        assert_int_equal(strncmp(v, "rp", 2) == 0, cases[i].rows);
        loop_program_free(p);
        run(&t);
    }
}

/* MobileNetV2's expansion and depthwise layer: x [1, cin, hw, hw] -> 1x1
 * conv to cout (e) -> 3x3 depthwise conv, pad 1 (d), each followed by a
 * Relu when `relu`; the result, and in *mid (when given) the depthwise
 * layer's input. */
static int expand_dw(TG *t, int64_t cin, int64_t cout, int64_t hw, int64_t stride, int relu, int *mid, uint64_t seed)
{
    int x = tg_input(t, "x", IR_DT_F32, TG_INTS(1, cin, hw, hw));
    int e = conv_node(t, "e", x, cin, cout, 1, 0, 1, &seed);
    if (relu)
        e = tg_node(t, IR_OP_Relu, "e_relu", 1, &e, 1);
    int d = conv_node(t, "d", e, cout, cout, 3, 1, cout, &seed);
    tg_ints(t, IR_A_strides, TG_INTS(stride, stride));
    if (mid)
        *mid = e;
    return relu ? tg_node(t, IR_OP_Relu, "d_relu", 1, &d, 1) : d;
}

/* The halo a depthwise conv reads around its input's channels: a
 * pointwise producer stores the stretches between the channels itself, in
 * the first block of each channel block (no fill kernel: a 16 -> 96 and a
 * 16 -> 8 layer at 28x28); another form's gets a fill kernel, split between
 * the threads when the producer is (each task fills the halo of its own
 * channels) although far below the parallel threshold: a 64 -> 384 layer
 * at 7x7 (the GEMM form, 385 x 8 elements).  Values against the
 * interpreter (run_bits' workspace starts as NaN: an unfilled halo shows). */
static void test_parallel_halo_fill(void **state)
{
    (void)state;
    const struct { int64_t cin, cout, hw; int fills; } cases[3] = { { 16, 96, 28, 0 }, { 16, 8, 28, 0 }, { 64, 384, 7, 1 } };
    for (int i = 0; i < 3; i++) {
        TG t;
        tg_start(&t, "halo_fill_on_2_threads");
        tg_output(&t, expand_dw(&t, cases[i].cin, cases[i].cout, cases[i].hw, 1, 0, NULL, 29));
        LoopProgram *p = lower_scheduled(&t, 2);
        int fills = 0, parallel = 0;
        for (int k = 0; k < p->n_kernels; k++) {
            const LoopStmt *b = p->kernels[k].body;
            if (!p->kernels[k].prepares)
                continue;
            fills++;
            if (b->kind == LOOP_S_BLOCK && b->u.block.n > 0)
                b = b->u.block.items[0];
            parallel += b->kind == LOOP_S_FOR && b->u.loop.kind == LOOP_PARALLEL;
        }
        assert_int_equal(fills, cases[i].fills);
        assert_int_equal(parallel, cases[i].fills);
        loop_program_free(p);
        run(&t);
    }
}

/* Does a kernel store into a buffer named ctx[1]?  (ctx: program, name, int flag) */
static void stores_named(void *ctx, int buf, int store)
{
    const LoopProgram *p = ((const void **)ctx)[0];
    if (store && strcmp(p->bufs[buf].name, ((const char **)ctx)[1]) == 0)
        *(int *)((void **)ctx)[2] = 1;
}

/* The kernel of p that stores into a buffer named `name`: -1 when none
 * does or several do. */
static int kernel_storing(const LoopProgram *p, const char *name)
{
    int found = -1;
    for (int k = 0; k < p->n_kernels; k++) {
        int hit = 0;
        const void *ctx[3] = { p, name, &hit };
        loop_stmt_buffers(p->kernels[k].body, stores_named, (void *)ctx);
        if (hit && found >= 0)
            return -1;
        if (hit)
            found = k;
    }
    return found;
}

/* A strided 1x1 convolution's gathered copy (32x32 -> 16x16, stride 2):
 * its loop along a row is vectorized, each vector one wide load and a
 * shuffle (the row's reads end inside the input row: the load's spare).
 * Values against the interpreter at 128, 256 and 512 bits. */
static void test_strided_gather_vectorized(void **state)
{
    (void)state;
    TG t;
    uint64_t seed = 43;
    tg_start(&t, "strided_gather");
    int x = tg_input(&t, "x", IR_DT_F32, TG_INTS(1, 16, 32, 32));
    int r = tg_node(&t, IR_OP_Relu, "relu", 1, &x, 1);
    tg_output(&t, conv_node(&t, "c", r, 16, 24, 1, 0, 1, &seed));
    tg_ints(&t, IR_A_strides, TG_INTS(2, 2));
    LoopProgram *p = lower_scheduled(&t, 1);
    int k = kernel_storing(p, "gathered");
    assert_true(k >= 0);
    const LoopStmt *l = p->kernels[k].body;
    while (l->kind == LOOP_S_FOR && l->u.loop.kind != LOOP_VECTORIZED && l->u.loop.body->kind == LOOP_S_FOR)
        l = l->u.loop.body;
    assert_int_equal(l->kind, LOOP_S_FOR);
    assert_int_equal(l->u.loop.kind, LOOP_VECTORIZED);
    assert_int_equal(l->u.loop.factor, 16);
    loop_program_free(p);
    run(&t);
}

/* Vectorized loops of `lanes` inside an UNROLLED loop, under s. */
static int unrolled_vectors(const LoopStmt *s, int lanes)
{
    if (!s)
        return 0;
    switch (s->kind) {
    case LOOP_S_FOR:
        if (s->u.loop.kind == LOOP_UNROLLED && s->u.loop.body->kind == LOOP_S_FOR &&
            s->u.loop.body->u.loop.kind == LOOP_VECTORIZED && s->u.loop.body->u.loop.factor == lanes)
            return 1;
        return unrolled_vectors(s->u.loop.body, lanes);
    case LOOP_S_BLOCK: {
        int n = 0;
        for (int i = 0; i < s->u.block.n; i++)
            n += unrolled_vectors(s->u.block.items[i], lanes);
        return n;
    }
    case LOOP_S_IF: return unrolled_vectors(s->u.cond.then_, lanes) + unrolled_vectors(s->u.cond.else_, lanes);
    default: return 0;
    }
}

/* Such loops in all the kernels of the program lowered from t at 512 bits. */
static int program_unrolled_vectors(TG *t, int lanes)
{
    LoopProgram *p = lower_scheduled(t, 1);
    int n = 0;
    for (int k = 0; k < p->n_kernels; k++)
        n += unrolled_vectors(p->kernels[k].body, lanes);
    loop_program_free(p);
    return n;
}

/* A GEMM-form convolution whose blocks of MR output pixels are runs of
 * its output stores its block column by column, each output channel's
 * MR pixels one vector: a ResNet block's strided 3x3 convolution (16 x 16
 * output, blocks of 8 pixels at 512 bits) with its shortcut Add and Relu
 * fused and its output halo'd for the 3x3 convolution after it (the halo
 * columns stored with the rows), a pointwise one on 6 x 6 whose blocks
 * span rows, blocks whose last one ends past the pixels, and a strided
 * convolution to a graph output (6 x 6, no halo).  Values against the
 * interpreter at 128, 256 and 512 bits. */
static void test_gemm_column_store(void **state)
{
    (void)state;
    TG t;
    uint64_t seed = 47;
    tg_start(&t, "column_store");
    int x = tg_input(&t, "x", IR_DT_F32, TG_INTS(1, 16, 32, 32));
    int r = tg_node(&t, IR_OP_Relu, "relu", 1, &x, 1);
    int b = conv_node(&t, "body", r, 16, 32, 3, 1, 1, &seed);
    tg_ints(&t, IR_A_strides, TG_INTS(2, 2));
    int sc = conv_node(&t, "short", r, 16, 32, 1, 0, 1, &seed);
    tg_ints(&t, IR_A_strides, TG_INTS(2, 2));
    int bs[2] = { b, sc };
    int a = tg_node(&t, IR_OP_Add, "add", 2, bs, 1);
    int ar = tg_node(&t, IR_OP_Relu, "relu2", 1, &a, 1);
    tg_output(&t, conv_node(&t, "next", ar, 32, 32, 3, 1, 1, &seed));
    PassOptions po = pass_options(2);
    if (pass_infer(t.g, &t.d) != 0 || pass_run_pipeline(t.g, &po, &t.d) != 0)
        fail_diag("-O2", &t.d);
    assert_int_equal(program_unrolled_vectors(&t, 8), 1);
    /* the block ending a row stores the halo column after it: the fill
     * kernel before it stores only the stretch before each channel (the
     * halo row and the column of the row before: 18 elements, 33 times) */
    LoopProgram *p = lower_scheduled(&t, 1);
    int fill = -1;
    for (int k = 0; k < p->n_kernels; k++)
        if (strcmp(p->kernels[k].name, "body") == 0)
            fill = k;
    assert_true(fill >= 0);
    assert_int_equal(p->kernels[fill].flops, 33 * 18);
    loop_program_free(p);
    run(&t);

    /* MobileNetV1-0.25's 6 x 6 pointwise layers: blocks of 12 pixels over
     * two rows of the output, whose halo (for the depthwise layer after
     * it) is rows only, so a channel's rows follow each other */
    tg_start(&t, "column_store_rows");
    x = tg_input(&t, "x", IR_DT_F32, TG_INTS(1, 32, 6, 6));
    r = tg_node(&t, IR_OP_Relu, "relu", 1, &x, 1);
    int pw = conv_node(&t, "pw", r, 32, 64, 1, 0, 1, &seed);
    int pr = tg_node(&t, IR_OP_Relu, "pwrelu", 1, &pw, 1);
    tg_output(&t, conv_node(&t, "dw", pr, 64, 64, 3, 1, 64, &seed));
    if (pass_infer(t.g, &t.d) != 0 || pass_run_pipeline(t.g, &po, &t.d) != 0)
        fail_diag("-O2", &t.d);
    assert_int_equal(program_unrolled_vectors(&t, 12), 1);
    run(&t);

    /* blocks whose last one ends past the pixels, its rows past M masked:
     * 47 pixels in 4 blocks of 12; 125 (DS-CNN's stem, 25 x 5) in 16 of 8
     * rather than 14 of 9 (blocks that store by columns take a multiple of 4) */
    const Conv masked[2] = {
        { "column_store_47", 32, 24, 1, 2, { 1, 94 }, { 1, 3 }, { 0, 1, 0, 1 }, { 1, 2 }, { 0 }, 1 },
        { "column_store_125", 1, 64, 1, 2, { 49, 10 }, { 10, 4 }, { 4, 1, 5, 1 }, { 2, 2 }, { 0 }, 1 },
    };
    for (int i = 0; i < 2; i++) {
        conv_graph(&t, &masked[i]);
        assert_int_equal(program_unrolled_vectors(&t, i ? 8 : 12), 1);
        run(&t);
    }

    tg_start(&t, "column_store_flat");
    x = tg_input(&t, "x", IR_DT_F32, TG_INTS(1, 8, 12, 12));
    tg_output(&t, conv_node(&t, "c", x, 8, 24, 3, 1, 1, &seed));
    tg_ints(&t, IR_A_strides, TG_INTS(2, 2));
    assert_int_equal(program_unrolled_vectors(&t, 12), 1);
    run(&t);
}

/* A padded copy (a 13x13 pointwise output, whose plane has no room for
 * halo columns, read by a 3x3 convolution) prepares its consumer's input
 * (only its halo filled, then the copy):
 * at 2 threads its nests are split between the threads like the
 * consumer, although far below the parallel threshold.  Values against
 * the interpreter. */
static void test_parallel_pad_copy(void **state)
{
    (void)state;
    TG t;
    uint64_t seed = 37;
    tg_start(&t, "pad_copy_on_2_threads");
    int x = tg_input(&t, "x", IR_DT_F32, TG_INTS(1, 48, 13, 13));
    int e = conv_node(&t, "e", x, 48, 48, 1, 0, 1, &seed);
    tg_output(&t, conv_node(&t, "c", e, 48, 64, 3, 1, 1, &seed));
    LoopProgram *p = lower_scheduled(&t, 2);
    int k = kernel_storing(p, "padded");                 /* one copy */
    assert_true(k >= 0);
    const LoopStmt *b = p->kernels[k].body;
    assert_true(p->kernels[k].prepares);
    assert_int_equal(b->kind, LOOP_S_BLOCK);
    assert_int_equal(b->u.block.n, 4);   /* the halo's fill (before, between and after the rows), the copy: all split */
    for (int i = 0; i < 4; i++) {
        const LoopStmt *f = b->u.block.items[i];
        assert_int_equal(f->kind, LOOP_S_FOR);
        assert_int_equal(f->u.loop.kind, LOOP_PARALLEL);
    }
    loop_program_free(p);
    run(&t);
}

/* A pointwise expansion and the depthwise layer reading it, in one kernel
 * (low_join): per channel block of the expansion, its channels of the
 * depthwise output, the expansion's output a slot of mr + 1 channels per
 * task instead of the whole tensor (96 = 8 blocks of 12; 40 = 4 of 10,
 * stride 2; 30 = 3 of 10, parts of 2 and 1 at 2 threads; rows of 48 and
 * 32, a whole number of one-register and two-register blocks, in pieces of
 * a whole block).  Not when the expansion's output has another reader. */
static void test_join_depthwise(void **state)
{
    (void)state;
    const struct { int64_t cin, cout, hw, stride; int shared; } cases[6] = {
        { 16, 96, 28, 1, 0 }, { 16, 40, 14, 2, 0 }, { 8, 30, 12, 1, 0 }, { 16, 96, 28, 1, 1 },
        { 8, 32, 48, 2, 0 }, { 16, 48, 32, 1, 0 } };
    for (int i = 0; i < 6; i++) {
        TG t;
        tg_start(&t, "join_depthwise");
        int er;
        tg_output(&t, expand_dw(&t, cases[i].cin, cases[i].cout, cases[i].hw, cases[i].stride, 1, &er, 31));
        if (cases[i].shared)
            tg_output(&t, er);
        if (pass_infer(t.g, &t.d) != 0 || pass_fuse(t.g, &t.d) < 0)      /* the Relus into the convs' kernels */
            fail_diag("infer", &t.d);
        LowSchedule s = tgt_cpu_schedule(512);
        s.threads = 2;
        s.parallel_min_model_flops = s.parallel_min_flops = 0;
        UtilDiag dg;
        util_diag_init(&dg);
        LoopProgram *p = low_graph(t.g, &s, &dg);
        if (!p)
            fail_diag("lower", &dg);
        tgt_cpu_apply_schedule(p, &s);
        int joined = 0, slots = 0;
        for (int k = 0; k < p->n_kernels; k++)
            joined += p->kernels[k].n_nodes == 4;         /* e, e_relu, d, d_relu */
        for (int b = 0; b < p->n_bufs; b++)
            slots += loop_buf_has_halo(&p->bufs[b]) && p->bufs[b].shape.dims[1] < cases[i].cout;
        assert_int_equal(joined, !cases[i].shared);
        assert_int_equal(slots, !cases[i].shared);
        if (!cases[i].shared) {                           /* the block loop split in two parts, one a task */
            const LoopStmt *b = p->kernels[p->n_kernels - 1].body;
            while (b->kind == LOOP_S_FOR && b->u.loop.kind == LOOP_SERIAL && b->u.loop.extent->u.i == 1)
                b = b->u.loop.body;
            assert_int_equal(b->kind, LOOP_S_FOR);
            assert_int_equal(b->u.loop.kind, LOOP_PARALLEL);
            assert_int_equal(b->u.loop.extent->u.i, 2);
        }
        loop_program_free(p);
        run(&t);                                          /* values (a NaN workspace: the halo stretches stored) */
    }
}

/* SqueezeNet's stem and first max pool: a direct-form 3x3/2 conv on an
 * image, in blocks of output channels (at 512 bits 4 of 10, parts of 2 at
 * 2 threads), and a 3x3/2 max pool joined to its kernel, the conv's output
 * (no halo: the pool's windows fit) cut down to a slot per task.  Values
 * against the interpreter at 128/256/512 bits. */
static void test_join_pool(void **state)
{
    (void)state;
    uint64_t seed = 37;
    TG t;
    tg_start(&t, "join_pool");
    int x = tg_input(&t, "x", IR_DT_F32, TG_INTS(1, 3, 43, 43));     /* 21x21, pooled to 10x10 */
    int c = conv_node(&t, "stem", x, 3, 40, 3, 0, 1, &seed);
    tg_ints(&t, IR_A_strides, TG_INTS(2, 2));
    int r = tg_node(&t, IR_OP_Relu, "stem_relu", 1, &c, 1);
    int m = tg_node(&t, IR_OP_MaxPool, "pool", 1, &r, 1);
    tg_ints(&t, IR_A_kernel_shape, TG_INTS(3, 3));
    tg_ints(&t, IR_A_strides, TG_INTS(2, 2));
    tg_int(&t, IR_A_ceil_mode, 1);
    tg_output(&t, m);
    if (pass_infer(t.g, &t.d) != 0 || pass_fuse(t.g, &t.d) < 0)
        fail_diag("infer", &t.d);
    LowSchedule s = tgt_cpu_schedule(512);
    s.threads = 2;
    UtilDiag d;
    util_diag_init(&d);
    LoopProgram *p = low_graph(t.g, &s, &d);
    if (!p)
        fail_diag("lower", &d);
    assert_int_equal(p->kernels[p->n_kernels - 1].n_nodes, 3);         /* stem, stem_relu, pool */
    int slots = 0;
    for (int b = 0; b < p->n_bufs; b++)                 /* the conv's output: 2 slots of 10 + 1 channels */
        slots += strncmp(p->bufs[b].name, "stem_relu", 9) == 0 && p->bufs[b].shape.dims[1] < 40;
    assert_int_equal(slots, 1);
    loop_program_free(p);
    run(&t);

    /* MobileNetV2's stem and first depthwise layer at 1 thread: the direct
     * form stores its output's halo rows itself (no fill kernel), so the
     * depthwise layer joins it with slots: the image's padded copy and one
     * kernel (at 2 threads, 512 bits in run(), the stem splits its rows and
     * a fill kernel comes back) */
    tg_start(&t, "join_stem_dw");
    x = tg_input(&t, "x", IR_DT_F32, TG_INTS(1, 3, 40, 40));
    c = conv_node(&t, "stem", x, 3, 32, 3, 1, 1, &seed);
    tg_ints(&t, IR_A_strides, TG_INTS(2, 2));
    tg_output(&t, conv_node(&t, "dw", c, 32, 32, 3, 1, 32, &seed));
    if (pass_infer(t.g, &t.d) != 0)
        fail_diag("infer", &t.d);
    s = tgt_cpu_schedule(512);
    if (!(p = low_graph(t.g, &s, &d)))
        fail_diag("lower", &d);
    assert_int_equal(p->n_kernels, 2);                  /* the copy, then stem + dw */
    assert_true(p->kernels[0].moves);
    assert_int_equal(p->kernels[1].n_nodes, 2);
    slots = 0;
    for (int b = 0; b < p->n_bufs; b++)
        slots += strncmp(p->bufs[b].name, "stem_out", 8) == 0 && p->bufs[b].shape.dims[1] < 32;
    assert_int_equal(slots, 1);
    loop_program_free(p);
    run(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv_general),
        cmocka_unit_test(test_conv_taps_outer),
        cmocka_unit_test(test_conv_depthwise),
        cmocka_unit_test(test_conv_pointwise),
        cmocka_unit_test(test_prefetch),
        cmocka_unit_test(test_maxpool),
        cmocka_unit_test(test_global_average_pool),
        cmocka_unit_test(test_layouts),
        cmocka_unit_test(test_winograd),
        cmocka_unit_test(test_winograd_prefetch),
        cmocka_unit_test(test_matmul),
        cmocka_unit_test(test_convtranspose),
        cmocka_unit_test(test_long_epilogue),
        cmocka_unit_test(test_parallel_collapse),
        cmocka_unit_test(test_direct_row_parts),
        cmocka_unit_test(test_parallel_halo_fill),
        cmocka_unit_test(test_parallel_pad_copy),
        cmocka_unit_test(test_strided_gather_vectorized),
        cmocka_unit_test(test_gemm_column_store),
        cmocka_unit_test(test_join_depthwise),
        cmocka_unit_test(test_join_pool),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
