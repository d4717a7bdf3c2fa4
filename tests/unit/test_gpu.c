/* tests/unit/test_gpu.c — the GPU target's loop rewrites and code generation:
 * block/thread binding with a guarded tail, shared-memory tiles with
 * barriers, barrier splitting for --gpu-emulate (numbers checked against a
 * hand-computed product), the cooperative schedule of a recurrence (its
 * barriers, each of which the emulated result needs, tasks as blocks, state
 * past the shared-memory budget in the workspace), and the PTX text of the
 * NVPTX path. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codegen/codegen.h"
#include "lower/lower.h"
#include "targets/gpu/gpu_impl.h"

static int io_buf(LoopProgram *p, const char *name, LoopStorage st, int64_t rows, int64_t cols)
{
    IrShape s = { .rank = 2, .dims = { rows, cols } };
    int b = loop_add_buf(p, name, IR_DT_F32, &s, st);
    assert_true(b >= 0);
    if (st == LOOP_ST_INPUT)
        p->bufs[b].index = p->n_inputs++;
    else if (st == LOOP_ST_OUTPUT)
        p->bufs[b].index = p->n_outputs++;
    return b;
}

static LoopExpr *V(LoopProgram *p, int var) { return loop_var(p, var); }
static LoopExpr *I(LoopProgram *p, int64_t v) { return loop_int(p, v); }
static LoopExpr *B2(LoopProgram *p, LoopBinOp op, LoopExpr *a, LoopExpr *b) { return loop_bin(p, op, a, b); }

enum { M = 20, K = 37, N = 19, E = 1000 };

/* y[i, j] = sum_k a[i, k] * b[k, j], the form lowering gives MatMul. */
static LoopProgram *matmul(void)
{
    LoopProgram *p = loop_program_new("mm");
    int a = io_buf(p, "a", LOOP_ST_INPUT, M, K), b = io_buf(p, "b", LOOP_ST_INPUT, K, N);
    int y = io_buf(p, "y", LOOP_ST_OUTPUT, M, N);
    int i = loop_add_var(p, "i", IR_DT_I64), j = loop_add_var(p, "j", IR_DT_I64);
    int k = loop_add_var(p, "k", IR_DT_I64), acc = loop_add_var(p, "acc", IR_DT_F32);
    LoopExpr *x = loop_load(p, a, B2(p, LOOP_ADD, B2(p, LOOP_MUL, V(p, i), I(p, K)), V(p, k)));
    LoopExpr *w = loop_load(p, b, B2(p, LOOP_ADD, B2(p, LOOP_MUL, V(p, k), I(p, N)), V(p, j)));
    LoopStmt *body = loop_block(p);
    loop_block_add(p, body, loop_let(p, acc, loop_float(p, IR_DT_F32, 0.5), 1));
    loop_block_add(p, body, loop_for(p, k, I(p, K), LOOP_SERIAL,
                                     loop_assign(p, acc, B2(p, LOOP_ADD, V(p, acc), B2(p, LOOP_MUL, x, w)))));
    loop_block_add(p, body, loop_store(p, y, B2(p, LOOP_ADD, B2(p, LOOP_MUL, V(p, i), I(p, N)), V(p, j)),
                                       V(p, acc)));
    LoopStmt *nest = loop_for(p, i, I(p, M), LOOP_SERIAL, loop_for(p, j, I(p, N), LOOP_SERIAL, body));
    assert_true(loop_add_kernel(p, "matmul", nest) >= 0);
    return p;
}

/* y[e] = exp(x[e]) * 2 + 1 over E elements (not a multiple of the block). */
static LoopProgram *elementwise(void)
{
    LoopProgram *p = loop_program_new("ew");
    int x = io_buf(p, "x", LOOP_ST_INPUT, 1, E), y = io_buf(p, "y", LOOP_ST_OUTPUT, 1, E);
    int e = loop_add_var(p, "e", IR_DT_I64);
    LoopExpr *ex = loop_load(p, x, V(p, e));
    LoopExpr *v = B2(p, LOOP_ADD, B2(p, LOOP_MUL, loop_call(p, LOOP_I_exp, 1, &ex), loop_float(p, IR_DT_F32, 2)),
                     loop_float(p, IR_DT_F32, 1));
    assert_true(loop_add_kernel(p, "ew", loop_for(p, e, I(p, E), LOOP_SERIAL, loop_store(p, y, V(p, e), v))) >= 0);
    return p;
}

static void count(const LoopStmt *s, int *barriers, int *threads, int *blocks)
{
    if (!s)
        return;
    switch (s->kind) {
    case LOOP_S_BARRIER: (*barriers)++; break;
    case LOOP_S_FOR:
        *threads += s->u.loop.kind >= LOOP_GPU_THREAD_X && s->u.loop.kind <= LOOP_GPU_THREAD_Z;
        *blocks += s->u.loop.kind >= LOOP_GPU_BLOCK_X && s->u.loop.kind <= LOOP_GPU_BLOCK_Z;
        count(s->u.loop.body, barriers, threads, blocks);
        break;
    case LOOP_S_IF: count(s->u.cond.then_, barriers, threads, blocks); count(s->u.cond.else_, barriers, threads, blocks); break;
    case LOOP_S_BLOCK:
        for (int i = 0; i < s->u.block.n; i++)
            count(s->u.block.items[i], barriers, threads, blocks);
        break;
    default: break;
    }
}

static void schedule_ok(LoopProgram *p)
{
    UtilDiag d;
    util_diag_init(&d);
    TgtGpuOptions o = { .block_size = 256, .tile = 16 };
    assert_int_equal(tgt_gpu_schedule(p, &o, &d), 0);
    assert_int_equal(loop_verify(p, &d), 0);
}

static CgRunFn emulate(LoopProgram *p, CgJit **j)
{
    UtilDiag d;
    util_diag_init(&d);
    assert_int_equal(tgt_gpu_split_barriers(p, &d), 0);
    loop_simplify(p);
    if (loop_verify(p, &d))
        print_error("%s\n", d.msg);
    assert_false(d.has_error);
    CgOptions o = { .opt_level = 2, .gpu_emulate = 1 };
    int rc = cg_jit(p, &o, j, &d);
    if (rc)
        print_error("%s\n", d.msg);
    assert_int_equal(rc, 0);
    return cg_jit_entry(*j);
}

static void test_tiled_matmul_structure(void **state)
{
    (void)state;
    LoopProgram *p = matmul();
    schedule_ok(p);
    const LoopStmt *s = p->kernels[0].body;
    assert_int_equal(s->kind, LOOP_S_FOR);
    assert_int_equal(s->u.loop.kind, LOOP_GPU_BLOCK_Z);
    int barriers = 0, threads = 0, blocks = 0;
    count(s, &barriers, &threads, &blocks);
    assert_int_equal(barriers, 2);   /* after the tile fill, after the tile product */
    assert_int_equal(threads, 2);    /* thread.y, thread.x */
    assert_int_equal(blocks, 3);     /* block.z (batch), block.y (rows), block.x (columns) */
    int locals = 0;
    for (int b = 0; b < p->n_bufs; b++)
        if (p->bufs[b].storage == LOOP_ST_LOCAL) {
            locals++;
            assert_int_equal(p->bufs[b].bytes, 16 * 16 * 4);
        }
    assert_int_equal(locals, 2);
    /* emulation: one thread loop per barrier-free segment, no barrier left */
    UtilDiag d;
    util_diag_init(&d);
    assert_int_equal(tgt_gpu_split_barriers(p, &d), 0);
    barriers = threads = blocks = 0;
    count(p->kernels[0].body, &barriers, &threads, &blocks);
    assert_int_equal(barriers, 0);
    /* the k-tile loop rotated: one nest for what precedes it, the fill and the store after
     * it (emulate.c), one for the product */
    assert_int_equal(threads, 2 * 2);
    loop_program_free(p);
}

static void test_tiled_matmul_emulated(void **state)
{
    (void)state;
    LoopProgram *p = matmul();
    schedule_ok(p);
    CgJit *j;
    CgRunFn run = emulate(p, &j);
    static float a[M * K], b[K * N], y[M * N];
    for (int i = 0; i < M * K; i++)
        a[i] = (float)((i * 7) % 11) * 0.25f - 1.0f;
    for (int i = 0; i < K * N; i++)
        b[i] = (float)((i * 5) % 13) * 0.125f - 0.5f;
    const void *in[2] = { a, b };
    void *out[1] = { y };
    assert_int_equal(run(in, out, NULL), 0);
    for (int i = 0; i < M; i++)
        for (int jj = 0; jj < N; jj++) {
            double want = 0.5;
            for (int k = 0; k < K; k++)
                want += (double)a[i * K + k] * b[k * N + jj];
            assert_float_equal(y[i * N + jj], want, 1e-4 * (1 + fabs(want)));
        }
    cg_jit_free(j);
    loop_program_free(p);
}

static void test_flat_mapping_tail(void **state)
{
    (void)state;
    LoopProgram *p = elementwise();
    schedule_ok(p);
    const LoopStmt *s = p->kernels[0].body;
    /* 1000 elements, 4 consecutive ones per thread (a 4-lane vectorized loop): 250 threads in one
     * block of 256, the last 6 guarded off */
    assert_int_equal(s->u.loop.kind, LOOP_GPU_BLOCK_X);
    assert_int_equal(s->u.loop.extent->u.i, 1);
    assert_int_equal(s->u.loop.body->u.loop.kind, LOOP_GPU_THREAD_X);
    assert_int_equal(s->u.loop.body->u.loop.extent->u.i, 256);
    UtilBuf txt;
    util_buf_init(&txt);
    loop_print(p, &txt);
    util_buf_put(&txt, "", 1);
    assert_non_null(strstr(txt.data, "in 0..4 vectorized(4)"));
    assert_non_null(strstr(txt.data, "< 250"));
    util_buf_free(&txt);
    CgJit *j;
    CgRunFn run = emulate(p, &j);
    static float x[E], y[E + 1];
    for (int i = 0; i < E; i++)
        x[i] = (float)i / E;
    y[E] = 42.0f;   /* just past the end: the guard keeps the tail threads from writing */
    const void *in[1] = { x };
    void *out[1] = { y };
    assert_int_equal(run(in, out, NULL), 0);
    for (int i = 0; i < E; i++)
        assert_float_equal(y[i], expf(x[i]) * 2 + 1, 1e-5);
    assert_float_equal(y[E], 42.0f, 0);
    cg_jit_free(j);
    loop_program_free(p);
}

/* Two independent nests in one kernel, the second with lets before an inner
 * loop (the BatchNormalization form), and a kernel reducing to a scalar. */
static LoopProgram *mixed(void)
{
    LoopProgram *p = loop_program_new("mx");
    int x = io_buf(p, "x", LOOP_ST_INPUT, 8, 100), w = io_buf(p, "w", LOOP_ST_INPUT, 1, 8);
    int y = io_buf(p, "y", LOOP_ST_OUTPUT, 8, 100), z = io_buf(p, "z", LOOP_ST_OUTPUT, 1, 8);
    int s = io_buf(p, "s", LOOP_ST_OUTPUT, 1, 1);
    int c = loop_add_var(p, "c", IR_DT_I64), r = loop_add_var(p, "r", IR_DT_I64);
    int c2 = loop_add_var(p, "c2", IR_DT_I64), sc = loop_add_var(p, "sc", IR_DT_F32);
    int i = loop_add_var(p, "i", IR_DT_I64), acc = loop_add_var(p, "acc", IR_DT_F32);
    LoopStmt *k = loop_block(p);
    /* for c2 < 8: z[c2] = w[c2] + 1 */
    loop_block_add(p, k, loop_for(p, c2, I(p, 8), LOOP_SERIAL,
                                  loop_store(p, z, V(p, c2), B2(p, LOOP_ADD, loop_load(p, w, V(p, c2)),
                                                                loop_float(p, IR_DT_F32, 1)))));
    /* for c < 8 { sc = w[c] * 2; for r < 100: y[c*100 + r] = x[c*100 + r] * sc } */
    LoopExpr *at = B2(p, LOOP_ADD, B2(p, LOOP_MUL, V(p, c), I(p, 100)), V(p, r));
    LoopStmt *cb = loop_block(p);
    loop_block_add(p, cb, loop_let(p, sc, B2(p, LOOP_MUL, loop_load(p, w, V(p, c)), loop_float(p, IR_DT_F32, 2)), 0));
    loop_block_add(p, cb, loop_for(p, r, I(p, 100), LOOP_SERIAL,
                                   loop_store(p, y, at, B2(p, LOOP_MUL, loop_load(p, x, loop_expr_copy(p, at)),
                                                           V(p, sc)))));
    loop_block_add(p, k, loop_for(p, c, I(p, 8), LOOP_SERIAL, cb));
    assert_true(loop_add_kernel(p, "k", k) >= 0);
    /* acc = 0; for i < 800: acc = acc + x[i]; s[0] = acc */
    LoopStmt *red = loop_block(p);
    loop_block_add(p, red, loop_let(p, acc, loop_float(p, IR_DT_F32, 0), 1));
    loop_block_add(p, red, loop_for(p, i, I(p, 800), LOOP_SERIAL,
                                    loop_assign(p, acc, B2(p, LOOP_ADD, V(p, acc), loop_load(p, x, V(p, i))))));
    loop_block_add(p, red, loop_store(p, s, I(p, 0), V(p, acc)));
    assert_true(loop_add_kernel(p, "sum", red) >= 0);
    return p;
}

static void test_split_sink_and_single_thread(void **state)
{
    (void)state;
    LoopProgram *p = mixed();
    schedule_ok(p);
    assert_int_equal(p->n_kernels, 3);
    assert_string_equal(p->kernels[0].name, "k_0");
    assert_string_equal(p->kernels[1].name, "k_1");
    assert_string_equal(p->kernels[2].name, "sum");
    /* the lets sank into the inner loop: all 800 elements are threads */
    const LoopStmt *b = p->kernels[1].body;
    assert_int_equal(b->u.loop.kind, LOOP_GPU_BLOCK_X);
    assert_int_equal(b->u.loop.extent->u.i, 1);   /* 800 / 4 = 200 threads: one block of 224 (7 warps) */
    assert_int_equal(b->u.loop.body->u.loop.extent->u.i, 224);
    /* a reduction to a scalar stays serial: one thread */
    int barriers = 0, threads = 0, blocks = 0;
    count(p->kernels[2].body, &barriers, &threads, &blocks);
    assert_int_equal(threads + blocks, 0);

    CgJit *j;
    CgRunFn run = emulate(p, &j);
    static float x[800], w[8], y[800], z[8], s[1];
    for (int i = 0; i < 800; i++)
        x[i] = (float)(i % 17) - 8.0f;
    for (int i = 0; i < 8; i++)
        w[i] = 0.5f * (float)i;
    const void *in[2] = { x, w };
    void *out[3] = { y, z, s };
    assert_int_equal(run(in, out, NULL), 0);
    double sum = 0;
    for (int i = 0; i < 800; i++) {
        assert_float_equal(y[i], x[i] * (w[i / 100] * 2), 0);
        sum += x[i];
    }
    for (int i = 0; i < 8; i++)
        assert_float_equal(z[i], w[i] + 1, 0);
    assert_float_equal(s[0], sum, 1e-3);
    cg_jit_free(j);

    /* PTX: three entries, the reduction launched as one thread */
    LoopProgram *q = mixed();
    schedule_ok(q);
    UtilDiag d;
    util_diag_init(&d);
    CgGpuOptions o = { .arch = "sm_80", .opt_level = 2 };
    CgGpuResult r;
    cg_gpu_result_init(&r);
    assert_int_equal(cg_compile_gpu(q, &o, &r, &d), 0);
    util_buf_put(&r.ptx, "", 1);
    const char *sum_entry = strstr(r.ptx.data, ".entry mx_sum(");
    assert_non_null(sum_entry);
    assert_non_null(strstr(sum_entry, ".maxntid 1, 1, 1"));
    assert_non_null(strstr(r.ptx.data, ".entry mx_k_0("));
    assert_non_null(strstr(r.ptx.data, ".entry mx_k_1("));
    assert_non_null(strstr(r.ptx.data, "ld.global.nc.f32"));   /* inputs are read-only parameters */
    cg_gpu_result_free(&r);
    loop_program_free(q);
    loop_program_free(p);
}

/* Two top-level nests that pass values through a LOCAL buffer (the form of
 * RNN/GRU/LSTM's state with a batch of 1): local storage starts undefined in
 * every kernel, so the kernel is not split, and the emulated result is right. */
static void test_no_split_across_local(void **state)
{
    (void)state;
    LoopProgram *p = loop_program_new("lc");
    int x = io_buf(p, "x", LOOP_ST_INPUT, 1, 8), y = io_buf(p, "y", LOOP_ST_OUTPUT, 1, 8);
    IrShape ls = { .rank = 1, .dims = { 8 } };
    int l = loop_add_buf(p, "l", IR_DT_F32, &ls, LOOP_ST_LOCAL);
    int k1 = loop_add_var(p, "k", IR_DT_I64), k2 = loop_add_var(p, "k", IR_DT_I64);
    LoopStmt *body = loop_block(p);
    loop_block_add(p, body, loop_for(p, k1, I(p, 8), LOOP_SERIAL,
                                     loop_store(p, l, V(p, k1), B2(p, LOOP_MUL, loop_load(p, x, V(p, k1)),
                                                                   loop_float(p, IR_DT_F32, 2)))));
    loop_block_add(p, body, loop_for(p, k2, I(p, 8), LOOP_SERIAL,
                                     loop_store(p, y, V(p, k2), B2(p, LOOP_ADD, loop_load(p, l, V(p, k2)),
                                                                   loop_float(p, IR_DT_F32, 1)))));
    assert_true(loop_add_kernel(p, "k", body) >= 0);
    schedule_ok(p);
    assert_int_equal(p->n_kernels, 1);
    CgJit *j;
    CgRunFn run = emulate(p, &j);
    float xv[8], yv[8];
    for (int i = 0; i < 8; i++)
        xv[i] = (float)i - 3.5f;
    const void *in[1] = { xv };
    void *out[1] = { yv };
    assert_int_equal(run(in, out, NULL), 0);
    for (int i = 0; i < 8; i++)
        assert_float_equal(yv[i], xv[i] * 2 + 1, 0);
    cg_jit_free(j);
    loop_program_free(p);
}

static const char *libdevice(void)
{
    const char *path = "/usr/local/cuda/nvvm/libdevice/libdevice.10.bc";
    return access(path, R_OK) == 0 ? path : NULL;
}

/* p compiled to PTX (NUL-terminated in r->ptx); the diagnostic printed on failure. */
static void compile_ptx(LoopProgram *p, const CgGpuOptions *o, CgGpuResult *r)
{
    UtilDiag d;
    util_diag_init(&d);
    cg_gpu_result_init(r);
    int rc = cg_compile_gpu(p, o, r, &d);
    if (rc)
        print_error("%s\n", d.msg);
    assert_int_equal(rc, 0);
    util_buf_put(&r->ptx, "", 1);
}

static void test_ptx_text(void **state)
{
    (void)state;
    LoopProgram *p = matmul();
    schedule_ok(p);
    loop_simplify(p);
    CgGpuOptions o = { .arch = "sm_75", .opt_level = 2 };
    CgGpuResult r;
    compile_ptx(p, &o, &r);
    const char *ptx = r.ptx.data;
    assert_non_null(strstr(ptx, ".target sm_75"));
    assert_non_null(strstr(ptx, ".visible .entry mm_matmul("));
    assert_non_null(strstr(ptx, "bar.sync"));
    assert_non_null(strstr(ptx, ".shared .align 16 .b8 "));
    assert_non_null(strstr(ptx, "%tid.y"));
    assert_non_null(strstr(ptx, "%ctaid.x"));
    assert_true(r.obj.len > 0);
    assert_int_equal(r.n_device_bufs, 3);   /* a, b, y */
    cg_gpu_result_free(&r);
    loop_program_free(p);
}

/* The PTX of a program does not depend on what the process compiled before:
 * three programs with different kernels and block shapes, compiled in turn
 * many times, each print the same text every time.  (NVPTX caches kernel
 * annotations by module and function address; a module freed with its
 * cache entry left in place gave a later module at the same addresses a
 * stale entry: a kernel printed as .func, a wrong .maxntid.) */
static void test_ptx_repeatable(void **state)
{
    (void)state;
    LoopProgram *(*make[3])(void) = { matmul, mixed, elementwise };
    char *first[3] = { NULL, NULL, NULL };
    CgGpuOptions o = { .arch = "sm_80", .opt_level = 2, .libdevice = libdevice() };
    int n = o.libdevice ? 3 : 2;   /* exp needs libdevice */
    for (int round = 0; round < 12; round++)
        for (int m = 0; m < n; m++) {
            LoopProgram *p = make[m]();
            schedule_ok(p);
            CgGpuResult r;
            compile_ptx(p, &o, &r);
            if (!first[m])
                first[m] = strdup(r.ptx.data);
            else
                assert_string_equal(r.ptx.data, first[m]);
            cg_gpu_result_free(&r);
            loop_program_free(p);
        }
    for (int m = 0; m < n; m++) {
        assert_non_null(strstr(first[m], ".entry "));
        free(first[m]);
    }
}

static void test_ptx_math_and_errors(void **state)
{
    (void)state;
    LoopProgram *p = elementwise();
    schedule_ok(p);
    UtilDiag d;
    util_diag_init(&d);
    CgGpuResult r;
    cg_gpu_result_init(&r);
    CgGpuOptions bad = { .arch = "sm_70", .opt_level = 2, .libdevice = libdevice() };
    assert_int_equal(cg_compile_gpu(p, &bad, &r, &d), -1);
    assert_non_null(strstr(d.msg, "GPU architecture 'sm_70' is not supported"));
    cg_gpu_result_free(&r);

    util_diag_init(&d);
    cg_gpu_result_init(&r);
    CgGpuOptions none = { .arch = "sm_80", .opt_level = 2, .libdevice = NULL };
    assert_int_equal(cg_compile_gpu(p, &none, &r, &d), -1);
    assert_non_null(strstr(d.msg, "call __nv_expf but libdevice"));
    cg_gpu_result_free(&r);

    if (!libdevice()) {
        loop_program_free(p);
        skip();
    }
    util_diag_init(&d);
    cg_gpu_result_init(&r);
    CgGpuOptions ok = { .arch = "sm_90", .opt_level = 2, .libdevice = libdevice() };
    assert_int_equal(cg_compile_gpu(p, &ok, &r, &d), 0);
    util_buf_put(&r.ptx, "", 1);
    assert_non_null(strstr(r.ptx.data, ".target sm_90"));
    assert_null(strstr(r.ptx.data, "__nv_expf"));   /* linked and inlined, not an external call */
    assert_non_null(strstr(r.ptx.data, "ex2.approx"));   /* libdevice's expf core */
    cg_gpu_result_free(&r);
    loop_program_free(p);
}

/* ---------------------------------------------------- cooperative schedule */

enum { RS = 5, RN = 40, RB = 3 };   /* steps, state size, tasks */

/* A recurrence over RS steps with its state h in a LOCAL buffer, per task b
 * (tasks > 1: an outer PARALLEL loop, the form of lower/rnn.c's tasks):
 *     h[k] = 0.01 k
 *     for s: tmp[k] = x[b, s, k] + sum_j h[j] w[j, k]; h[k] = tanh(tmp[k]) / 2; y[b, s, k] = h[k]
 * The phases race: the second writes the h the first read (a barrier
 * between them), the next step's first reads the h the second wrote (one at
 * the end of the loop body), the first reads the initial h (one before the
 * loop): three barriers. */
static LoopProgram *recurrence(int tasks)
{
    LoopProgram *p = loop_program_new("rc");
    int x = io_buf(p, "x", LOOP_ST_INPUT, tasks * RS, RN), w = io_buf(p, "w", LOOP_ST_INPUT, RN, RN);
    int y = io_buf(p, "y", LOOP_ST_OUTPUT, tasks * RS, RN);
    IrShape ls = { .rank = 1, .dims = { RN } };
    int h = loop_add_buf(p, "h", IR_DT_F32, &ls, LOOP_ST_LOCAL);
    int tmp = loop_add_buf(p, "tmp", IR_DT_F32, &ls, LOOP_ST_LOCAL);
    int b = loop_add_var(p, "b", IR_DT_I64), s = loop_add_var(p, "s", IR_DT_I64);
    int k0 = loop_add_var(p, "k", IR_DT_I64), k1 = loop_add_var(p, "k", IR_DT_I64);
    int k2 = loop_add_var(p, "k", IR_DT_I64), k3 = loop_add_var(p, "k", IR_DT_I64);
    int j = loop_add_var(p, "j", IR_DT_I64), acc = loop_add_var(p, "acc", IR_DT_F32);
    LoopExpr *row = B2(p, LOOP_ADD, B2(p, LOOP_MUL, V(p, b), I(p, RS)), V(p, s));     /* b * RS + s */
    LoopStmt *body = loop_block(p), *step = loop_block(p), *a = loop_block(p);
    loop_block_add(p, body, loop_for(p, k0, I(p, RN), LOOP_SERIAL,
                                     loop_store(p, h, V(p, k0), B2(p, LOOP_MUL, loop_cast(p, IR_DT_F32, V(p, k0)),
                                                                   loop_float(p, IR_DT_F32, 0.01)))));
    LoopExpr *xa = loop_load(p, x, B2(p, LOOP_ADD, B2(p, LOOP_MUL, row, I(p, RN)), V(p, k1)));
    loop_block_add(p, a, loop_let(p, acc, xa, 1));
    LoopExpr *hw = B2(p, LOOP_MUL, loop_load(p, h, V(p, j)),
                      loop_load(p, w, B2(p, LOOP_ADD, B2(p, LOOP_MUL, V(p, j), I(p, RN)), V(p, k1))));
    loop_block_add(p, a, loop_for(p, j, I(p, RN), LOOP_SERIAL, loop_assign(p, acc, B2(p, LOOP_ADD, V(p, acc), hw))));
    loop_block_add(p, a, loop_store(p, tmp, V(p, k1), V(p, acc)));
    loop_block_add(p, step, loop_for(p, k1, I(p, RN), LOOP_SERIAL, a));
    LoopExpr *t = loop_load(p, tmp, V(p, k2));
    loop_block_add(p, step, loop_for(p, k2, I(p, RN), LOOP_SERIAL,
                                     loop_store(p, h, V(p, k2), B2(p, LOOP_MUL, loop_call(p, LOOP_I_tanh, 1, &t),
                                                                   loop_float(p, IR_DT_F32, 0.5)))));
    LoopExpr *at = B2(p, LOOP_ADD, B2(p, LOOP_MUL, loop_expr_copy(p, row), I(p, RN)), V(p, k3));
    loop_block_add(p, step, loop_for(p, k3, I(p, RN), LOOP_SERIAL, loop_store(p, y, at, loop_load(p, h, V(p, k3)))));
    loop_block_add(p, body, loop_for(p, s, I(p, RS), LOOP_SERIAL, step));
    LoopStmt *k = tasks > 1 ? loop_for(p, b, I(p, tasks), LOOP_PARALLEL, body) : body;
    if (tasks == 1) {                /* b bound once all the same */
        LoopStmt *kb = loop_block(p);
        loop_block_add(p, kb, loop_let(p, b, I(p, 0), 0));
        loop_block_add(p, kb, body);
        k = kb;
    }
    assert_true(loop_add_kernel(p, "rec", k) >= 0);
    return p;
}

static float rx[RB * RS * RN], rw[RN * RN];

static void recurrence_data(void)
{
    for (int i = 0; i < RB * RS * RN; i++)
        rx[i] = (float)((i * 37) % 23) / 23.0f - 0.5f;
    for (int i = 0; i < RN * RN; i++)
        rw[i] = (float)((i * 11) % 17) / 17.0f * 0.2f - 0.1f;
}

/* The emulated outputs' largest error against the recurrence in double. */
static double recurrence_error(CgRunFn run, int tasks, void *ws)
{
    static float y[RB * RS * RN];
    const void *in[2] = { rx, rw };
    void *out[1] = { y };
    memset(y, 0, sizeof y);
    assert_int_equal(run(in, out, ws), 0);
    double err = 0;
    for (int b = 0; b < tasks; b++) {
        double h[RN], t[RN];
        for (int k = 0; k < RN; k++)
            h[k] = (double)(float)((float)k * 0.01f);
        for (int s = 0; s < RS; s++) {
            for (int k = 0; k < RN; k++) {
                t[k] = rx[(b * RS + s) * RN + k];
                for (int j = 0; j < RN; j++)
                    t[k] += h[j] * rw[j * RN + k];
            }
            for (int k = 0; k < RN; k++) {
                h[k] = tanh(t[k]) * 0.5;
                double e = fabs(y[(b * RS + s) * RN + k] - h[k]);
                err = isnan(e) || e > err ? (isnan(e) ? INFINITY : e) : err;
            }
        }
    }
    return err;
}

static LoopStmt **nth_barrier(LoopStmt **at, int *n)
{
    LoopStmt *s = *at;
    if (!s)
        return NULL;
    switch (s->kind) {
    case LOOP_S_BARRIER: return (*n)-- == 0 ? at : NULL;
    case LOOP_S_FOR: return nth_barrier(&s->u.loop.body, n);
    case LOOP_S_IF: {
        LoopStmt **r = nth_barrier(&s->u.cond.then_, n);
        return r ? r : nth_barrier(&s->u.cond.else_, n);
    }
    case LOOP_S_BLOCK:
        for (int i = 0; i < s->u.block.n; i++) {
            LoopStmt **r = nth_barrier(&s->u.block.items[i], n);
            if (r)
                return r;
        }
        return NULL;
    default: return NULL;
    }
}

static const TgtGpuOptions coop_opts = { .block_size = 256, .tile = 16, .coop_threads = 512, .shared_bytes = 48 << 10 };

/* One block of 64 threads (the 40 state elements rounded up to a warp), three
 * barriers, the emulated result right; without any one of the barriers the
 * emulation (threads interleaved at barriers, across loop iterations too)
 * gets it wrong. */
static void test_coop_recurrence(void **state)
{
    (void)state;
    recurrence_data();
    for (int drop = -1; drop < 3; drop++) {
        LoopProgram *p = recurrence(1);
        UtilDiag d;
        util_diag_init(&d);
        assert_int_equal(tgt_gpu_schedule(p, &coop_opts, &d), 0);
        assert_int_equal(loop_verify(p, &d), 0);
        LoopStmt *k = p->kernels[0].body;
        assert_int_equal(k->u.loop.kind, LOOP_GPU_BLOCK_X);
        assert_int_equal(k->u.loop.extent->u.i, 1);
        assert_int_equal(k->u.loop.body->u.loop.kind, LOOP_GPU_THREAD_X);
        assert_int_equal(k->u.loop.body->u.loop.extent->u.i, 64);
        int barriers = 0, threads = 0, blocks = 0;
        count(k, &barriers, &threads, &blocks);
        assert_int_equal(barriers, 3);
        if (drop >= 0) {
            int n = drop;
            LoopStmt **b = nth_barrier(&p->kernels[0].body, &n);
            assert_non_null(b);
            *b = loop_block(p);
        }
        CgJit *j;
        CgRunFn run = emulate(p, &j);
        double err = recurrence_error(run, 1, NULL);
        if (drop < 0)
            assert_true(err < 1e-5);
        else if (!(err > 1e-3))
            fail_msg("without barrier %d the emulated recurrence is still right (error %g)", drop, err);
        cg_jit_free(j);
        loop_program_free(p);
    }
}

/* Tasks (an outer PARALLEL loop) are blocks, each with its own state; past
 * the shared-memory budget the state is a per-block slice of the workspace. */
static void test_coop_tasks_and_workspace_state(void **state)
{
    (void)state;
    recurrence_data();
    for (int spill = 0; spill < 2; spill++) {
        LoopProgram *p = recurrence(RB);
        UtilDiag d;
        util_diag_init(&d);
        TgtGpuOptions o = coop_opts;
        o.shared_bytes = spill ? 64 : o.shared_bytes;   /* h and tmp: 160 bytes each */
        assert_int_equal(tgt_gpu_schedule(p, &o, &d), 0);
        assert_int_equal(loop_verify(p, &d), 0);
        LoopStmt *k = p->kernels[0].body;
        assert_int_equal(k->u.loop.kind, LOOP_GPU_BLOCK_X);
        assert_int_equal(k->u.loop.extent->u.i, RB);
        int locals = 0, slices = 0;
        for (int b = 0; b < p->n_bufs; b++) {
            locals += p->bufs[b].storage == LOOP_ST_LOCAL;
            if (strstr(p->bufs[b].name, "_blocks")) {
                slices++;
                assert_int_equal(p->bufs[b].storage, LOOP_ST_WORKSPACE);
                assert_int_equal(p->bufs[b].bytes, RB * RN * 4);
            }
        }
        UtilBuf txt;
        util_buf_init(&txt);
        loop_print(p, &txt);
        util_buf_put(&txt, "", 1);
        assert_int_equal(slices, spill ? 2 : 0);
        assert_int_equal(strstr(txt.data, "h[") != NULL, !spill);   /* the LOCAL state unused once spilled */
        util_buf_free(&txt);
        (void)locals;
        assert_int_equal(tgt_gpu_split_barriers(p, &d), 0);
        loop_simplify(p);
        assert_int_equal(low_plan_memory_opt(p, NULL, 0, &d), 0);
        assert_int_equal(loop_verify(p, &d), 0);
        CgOptions co = { .opt_level = 2, .gpu_emulate = 1 };
        CgJit *j;
        assert_int_equal(cg_jit(p, &co, &j, &d), 0);
        void *ws = p->workspace_bytes ? calloc(1, (size_t)p->workspace_bytes) : NULL;
        assert_true(recurrence_error(cg_jit_entry(j), RB, ws) < 1e-5);
        free(ws);
        cg_jit_free(j);
        loop_program_free(p);
    }
}

/* The cooperative kernel in PTX: its block shape, barriers, shared state. */
static void test_coop_ptx(void **state)
{
    (void)state;
    LoopProgram *p = recurrence(RB);
    UtilDiag d;
    util_diag_init(&d);
    assert_int_equal(tgt_gpu_schedule(p, &coop_opts, &d), 0);
    loop_simplify(p);
    CgGpuOptions o = { .arch = "sm_90", .opt_level = 2, .libdevice = libdevice() };
    if (!o.libdevice) {
        loop_program_free(p);
        skip();
    }
    CgGpuResult r;
    compile_ptx(p, &o, &r);
    const char *e = strstr(r.ptx.data, ".entry rc_rec(");
    assert_non_null(e);
    assert_non_null(strstr(e, ".maxntid 64, 1, 1"));
    assert_non_null(strstr(e, "bar.sync"));
    assert_non_null(strstr(r.ptx.data, ".shared .align 16 .b8 rc_rec_$_h[160]"));   /* the state in shared memory */
    cg_gpu_result_free(&r);
    loop_program_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tiled_matmul_structure),
        cmocka_unit_test(test_tiled_matmul_emulated),
        cmocka_unit_test(test_flat_mapping_tail),
        cmocka_unit_test(test_ptx_text),
        cmocka_unit_test(test_ptx_math_and_errors),
        cmocka_unit_test(test_split_sink_and_single_thread),
        cmocka_unit_test(test_ptx_repeatable),
        cmocka_unit_test(test_no_split_across_local),
        cmocka_unit_test(test_coop_recurrence),
        cmocka_unit_test(test_coop_tasks_and_workspace_state),
        cmocka_unit_test(test_coop_ptx),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
