/* tests/unit/test_region.c — the parallel region of --threads objects
 * (codegen/parallel.c): a loop program with PARALLEL loops among serial
 * statements, nested in a serial loop, read across kernels and inside a
 * kernel that runs as one chunk (a mutable accumulator; a state in a LOCAL
 * buffer kept from one statement to the next), JIT-compiled for 2, 3 and 5 tasks and run
 * many times through the Halide runtime's pool (linked into this test) with
 * pools of 1, 2 and 4 threads; every run's outputs equal the values
 * computed here.
 *
 * And recurrent layers lowered by the CPU target with --threads 2
 * (lower/rnn.c): a bidirectional LSTM (100 steps, above the model size from
 * which the CPU schedule uses threads) whose recurrence is one loop over the
 * tasks direction x batch row, which the schedule makes PARALLEL, each task
 * with its own state; and one-direction LSTM, GRU (linear_before_reset)
 * and RNN layers in the split form, each step one PARALLEL loop over two
 * parts of the hidden units sharing the state in workspace; run through the
 * pool of 1 and 2 threads, every output within 1e-5 + 1e-5 |want| of the
 * reference interpreter's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include <math.h>
#include <stdlib.h>

#include "codegen/codegen.h"
#include "interp/interp.h"
#include "tests/unit/lower_graph.h"

/* HalideRuntime.h */
typedef int (*halide_task_t)(void *user_context, int task_number, uint8_t *closure);
typedef int (*halide_do_par_for_t)(void *, halide_task_t, int, int, uint8_t *);
extern int halide_set_num_threads(int n);
extern halide_do_par_for_t halide_set_custom_do_par_for(halide_do_par_for_t do_par_for);
extern int halide_default_do_par_for(void *user_context, halide_task_t task, int min, int size, uint8_t *closure);

/* Counts the regions started and checks their task count. */
static int regions, region_size;
static int counting_par_for(void *uc, halide_task_t task, int min, int size, uint8_t *closure)
{
    regions++;
    region_size = size;
    return halide_default_do_par_for(uc, task, min, size, closure);
}

static int io_buf(LoopProgram *p, const char *name, LoopStorage st, int64_t n)
{
    IrShape s = { .rank = 1, .dims = { n } };
    int b = loop_add_buf(p, name, IR_DT_F32, &s, st);
    assert_true(b >= 0);
    p->bufs[b].index = st == LOOP_ST_INPUT ? p->n_inputs++ : p->n_outputs++;
    return b;
}

static void add(LoopProgram *p, LoopStmt *block, LoopStmt *s) { assert_int_equal(loop_block_add(p, block, s), 0); }
static LoopExpr *V(LoopProgram *p, int var) { return loop_var(p, var); }
static LoopExpr *I(LoopProgram *p, int64_t v) { return loop_int(p, v); }
static LoopExpr *F(LoopProgram *p, double v) { return loop_float(p, IR_DT_F32, v); }
static LoopExpr *ADD(LoopProgram *p, LoopExpr *a, LoopExpr *b) { return loop_bin(p, LOOP_ADD, a, b); }
static LoopExpr *MUL(LoopProgram *p, LoopExpr *a, LoopExpr *b) { return loop_bin(p, LOOP_MUL, a, b); }

enum { N = 1 << 14 };

/* k1: a = 3; o0[0] = a; parallel i < 64: o1[i] = x[i]·a;
 *     for j < 3: parallel i < 8: o2[8j + i] = o1[N-1 - 8j - i] + j    (o1 from another task)
 * k2 (serial): for i < 10: o3[i] = o2[i + 10]·2
 * k3 (one chunk: a mutable accumulator read after the loop that sets it):
 *     acc = 0; for i < 4: acc += x[i]; o4[0] = acc; parallel i < 8: o5[i] = acc + o3[i]
 * k4 (one chunk: st, a LOCAL buffer, set, stepped and read by statements
 *     outside the parallel loop, as a recurrent kernel's state; each task
 *     has its own allocas, so any other split reads another task's st):
 *     for i < 4: st[i] = x[i]; for s < 16: { for i < 4: st[i] = st[i]·0.5 + 1 };
 *     for i < 4: o6[i] = st[i]; parallel i < 8: o7[i] = x[i] + 1 */
static LoopProgram *program(void)
{
    LoopProgram *p = loop_program_new("reg");
    int x = io_buf(p, "x", LOOP_ST_INPUT, N);
    int o0 = io_buf(p, "o0", LOOP_ST_OUTPUT, 1), o1 = io_buf(p, "o1", LOOP_ST_OUTPUT, N);
    int o2 = io_buf(p, "o2", LOOP_ST_OUTPUT, 24), o3 = io_buf(p, "o3", LOOP_ST_OUTPUT, 10);
    int o4 = io_buf(p, "o4", LOOP_ST_OUTPUT, 1), o5 = io_buf(p, "o5", LOOP_ST_OUTPUT, 8);
    int o6 = io_buf(p, "o6", LOOP_ST_OUTPUT, 4), o7 = io_buf(p, "o7", LOOP_ST_OUTPUT, 8);
    int a = loop_add_var(p, "a", IR_DT_F32), i = loop_add_var(p, "i", IR_DT_I64);
    int j = loop_add_var(p, "j", IR_DT_I64), i2 = loop_add_var(p, "i2", IR_DT_I64);
    int i3 = loop_add_var(p, "i3", IR_DT_I64), i4 = loop_add_var(p, "i4", IR_DT_I64);
    int i5 = loop_add_var(p, "i5", IR_DT_I64), acc = loop_add_var(p, "acc", IR_DT_F32);

    LoopStmt *k1 = loop_block(p);
    add(p, k1, loop_let(p, a, F(p, 3), 0));
    add(p, k1, loop_store(p, o0, I(p, 0), V(p, a)));
    add(p, k1, loop_for(p, i, I(p, N), LOOP_PARALLEL, loop_store(p, o1, V(p, i), MUL(p, loop_load(p, x, V(p, i)), V(p, a)))));
    LoopExpr *at = ADD(p, MUL(p, V(p, j), I(p, 8)), V(p, i2));
    LoopStmt *inner = loop_store(p, o2, at, ADD(p, loop_load(p, o1, loop_bin(p, LOOP_SUB, I(p, N - 1), loop_expr_copy(p, at))),
                                                loop_cast(p, IR_DT_F32, V(p, j))));
    add(p, k1, loop_for(p, j, I(p, 3), LOOP_SERIAL, loop_for(p, i2, I(p, 8), LOOP_PARALLEL, inner)));
    assert_int_equal(loop_add_kernel(p, "k1", k1), 0);

    assert_int_equal(loop_add_kernel(p, "k2", loop_for(p, i3, I(p, 10), LOOP_SERIAL,
        loop_store(p, o3, V(p, i3), MUL(p, loop_load(p, o2, ADD(p, V(p, i3), I(p, 10))), F(p, 2))))), 1);

    LoopStmt *k3 = loop_block(p);
    add(p, k3, loop_let(p, acc, F(p, 0), 1));
    add(p, k3, loop_for(p, i4, I(p, 4), LOOP_SERIAL, loop_assign(p, acc, ADD(p, V(p, acc), loop_load(p, x, V(p, i4))))));
    add(p, k3, loop_store(p, o4, I(p, 0), V(p, acc)));
    add(p, k3, loop_for(p, i5, I(p, 8), LOOP_PARALLEL, loop_store(p, o5, V(p, i5), ADD(p, V(p, acc), loop_load(p, o3, V(p, i5))))));
    assert_int_equal(loop_add_kernel(p, "k3", k3), 2);

    IrShape ss = { .rank = 1, .dims = { 4 } };
    int st = loop_add_buf(p, "st", IR_DT_F32, &ss, LOOP_ST_LOCAL);
    int i6 = loop_add_var(p, "i6", IR_DT_I64), step = loop_add_var(p, "step", IR_DT_I64);
    int i7 = loop_add_var(p, "i7", IR_DT_I64), i8 = loop_add_var(p, "i8", IR_DT_I64);
    int i9 = loop_add_var(p, "i9", IR_DT_I64);
    assert_true(st >= 0);
    LoopStmt *k4 = loop_block(p);
    add(p, k4, loop_for(p, i6, I(p, 4), LOOP_SERIAL, loop_store(p, st, V(p, i6), loop_load(p, x, V(p, i6)))));
    LoopExpr *next = ADD(p, MUL(p, loop_load(p, st, V(p, i7)), F(p, 0.5)), F(p, 1));
    add(p, k4, loop_for(p, step, I(p, 16), LOOP_SERIAL,
                        loop_for(p, i7, I(p, 4), LOOP_SERIAL, loop_store(p, st, V(p, i7), next))));
    add(p, k4, loop_for(p, i8, I(p, 4), LOOP_SERIAL, loop_store(p, o6, V(p, i8), loop_load(p, st, V(p, i8)))));
    add(p, k4, loop_for(p, i9, I(p, 8), LOOP_PARALLEL, loop_store(p, o7, V(p, i9), ADD(p, loop_load(p, x, V(p, i9)), F(p, 1)))));
    assert_int_equal(loop_add_kernel(p, "k4", k4), 3);
    return p;
}

static void test_region(void **state)
{
    (void)state;
    LoopProgram *p = program();
    static float x[N], w1[N];
    float w2[24], w3[10], w5[8], w4 = 0, w6[4], w7[8];
    for (int i = 0; i < N; i++) {
        x[i] = (float)(i % 7) - 2.5f;
        w1[i] = x[i] * 3;
    }
    for (int j = 0; j < 3; j++)
        for (int i = 0; i < 8; i++)
            w2[8 * j + i] = w1[N - 1 - 8 * j - i] + (float)j;
    for (int i = 0; i < 10; i++)
        w3[i] = w2[i + 10] * 2;
    for (int i = 0; i < 4; i++)
        w4 += x[i];
    for (int i = 0; i < 8; i++)
        w5[i] = w4 + w3[i];
    for (int i = 0; i < 4; i++) {
        w6[i] = x[i];
        for (int s = 0; s < 16; s++)
            w6[i] = w6[i] * 0.5f + 1;
    }
    for (int i = 0; i < 8; i++)
        w7[i] = x[i] + 1;

    static const int tasks[] = { 2, 3, 5 }, pools[] = { 1, 2, 4 };
    halide_set_custom_do_par_for(counting_par_for);
    for (size_t t = 0; t < sizeof tasks / sizeof *tasks; t++) {
        UtilDiag d;
        util_diag_init(&d);
        CgOptions o = { .opt_level = 2, .threads = tasks[t] };
        CgJit *j = NULL;
        int r = cg_jit(p, &o, &j, &d);
        if (r != 0)
            print_error("%s\n", d.msg);
        assert_int_equal(r, 0);
        for (size_t q = 0; q < sizeof pools / sizeof *pools; q++) {
            halide_set_num_threads(pools[q]);
            regions = 0;
            for (int run = 0; run < 300; run++) {
                static float o1[N];
                float o0 = -1, o2[24], o3[10], o4 = -1, o5[8], o6[4], o7[8];
                memset(o1, 0xff, sizeof o1), memset(o2, 0xff, sizeof o2), memset(o3, 0xff, sizeof o3);
                memset(o5, 0xff, sizeof o5), memset(o6, 0xff, sizeof o6), memset(o7, 0xff, sizeof o7);
                const void *in[] = { x };
                void *out[] = { &o0, o1, o2, o3, &o4, o5, o6, o7 };
                assert_int_equal(cg_jit_entry(j)(in, out, NULL), 0);
                assert_float_equal(o0, 3, 0);
                assert_memory_equal(o1, w1, sizeof w1);
                assert_memory_equal(o2, w2, sizeof w2);
                assert_memory_equal(o3, w3, sizeof w3);
                assert_float_equal(o4, w4, 0);
                assert_memory_equal(o5, w5, sizeof w5);
                assert_memory_equal(o6, w6, sizeof w6);
                assert_memory_equal(o7, w7, sizeof w7);
            }
            assert_int_equal(regions, 300);          /* one region per call, of one task per thread */
            assert_int_equal(region_size, tasks[t]);
        }
        cg_jit_free(j);
    }
    halide_set_num_threads(0);
    loop_program_free(p);
}

/* A PARALLEL loop of extent n anywhere in s. */
static int has_parallel(const LoopStmt *s, int64_t n)
{
    if (!s)
        return 0;
    switch (s->kind) {
    case LOOP_S_FOR:
        return (s->u.loop.kind == LOOP_PARALLEL && s->u.loop.extent->kind == LOOP_E_INT &&
                s->u.loop.extent->u.i == n) || has_parallel(s->u.loop.body, n);
    case LOOP_S_IF: return has_parallel(s->u.cond.then_, n) || has_parallel(s->u.cond.else_, n);
    case LOOP_S_BLOCK:
        for (int i = 0; i < s->u.block.n; i++)
            if (has_parallel(s->u.block.items[i], n))
                return 1;
        return 0;
    default: return 0;
    }
}

typedef struct RnnTaskCase {
    IrOp op;
    const char *dir;
    int64_t seq, hidden;
    int lbr;             /* GRU's linear_before_reset */
    int states;          /* Y_h (and LSTM's Y_c) as outputs too */
} RnnTaskCase;

/* One recurrent layer (constant weights, batch 1) lowered by the CPU target
 * with --threads 2: a PARALLEL loop of extent 2 (the task loop over the
 * directions, or the split form's parts of the hidden units), and every
 * output within 1e-5 + 1e-5 |want| of the interpreter's through the pool of
 * 1 and 2 threads. */
static void rnn_task_case(const RnnTaskCase *rc)
{
    enum { I = 40 };
    int64_t S = rc->seq, H = rc->hidden, D = !strcmp(rc->dir, "bidirectional") ? 2 : 1;
    int64_t G = rc->op == IR_OP_LSTM ? 4 : rc->op == IR_OP_GRU ? 3 : 1;
    TG t;
    tg_start(&t, ir_op_name(rc->op));
    uint64_t seed = 99;
    double *vals = malloc(sizeof(double) * (size_t)(D * G * H * (H > I ? H : I) + 2 * D * G * H));
    assert_non_null(vals);
    int64_t wd[] = { D, G * H, I }, rd[] = { D, G * H, H }, bd[] = { D, 2 * G * H }, xd[] = { S, 1, I };
    int in[3];
    int64_t counts[3] = { D * G * H * I, D * G * H * H, D * 2 * G * H };
    const int64_t *dims[3] = { wd, rd, bd };
    static const char *const names[3] = { "W", "R", "B" };
    for (int k = 0; k < 3; k++) {
        for (int64_t i = 0; i < counts[k]; i++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            vals[i] = ((double)(seed >> 11) / 9007199254740992.0 - 0.5) * 0.2;
        }
        in[k] = tg_const(&t, names[k], IR_DT_F32, k == 2 ? 2 : 3, dims[k], vals);
    }
    free(vals);
    int x = tg_input(&t, "X", IR_DT_F32, 3, xd);
    int ins[4] = { x, in[0], in[1], in[2] };
    int n_out = rc->states ? (rc->op == IR_OP_LSTM ? 3 : 2) : 1;
    int y = tg_node(&t, rc->op, "rnn", 4, ins, n_out);
    tg_int(&t, IR_A_hidden_size, H);
    tg_str(&t, IR_A_direction, rc->dir);
    if (rc->lbr)
        tg_int(&t, IR_A_linear_before_reset, 1);
    for (int k = 0; k < n_out; k++)
        tg_output(&t, y + k);
    assert_int_equal(pass_infer(t.g, &t.d), 0);

    float *xv = malloc(sizeof(float) * (size_t)(S * I));
    assert_non_null(xv);
    for (int i = 0; i < S * I; i++)
        xv[i] = (float)sin(0.37 * i);
    IrArray xin = { .dtype = IR_DT_F32, .shape = t.g->tensors[x].v.shape, .data = xv }, ref[3];
    UtilDiag d;
    util_diag_init(&d);
    assert_int_equal(interp_run(t.g, &xin, ref, &d), 0);

    TgtOptions o = { .name = "rnn", .opt_level = 2, .threads = 2 };
    LoopProgram *p = tgt_cpu_program(t.g, &o, 1, &d);
    if (!p)
        print_error("%s\n", d.msg);
    assert_non_null(p);
    int tasks = 0;
    for (int k = 0; k < p->n_kernels; k++)
        tasks += has_parallel(p->kernels[k].body, 2);
    if (tasks < 1)
        fail_msg("%s %s: no parallel loop of 2 tasks or parts", ir_op_name(rc->op), rc->dir);
    CgOptions co = { .opt_level = 2, .threads = 2 };
    CgJit *j = NULL;
    int r = cg_jit(p, &co, &j, &d);
    if (r != 0)
        print_error("%s\n", d.msg);
    assert_int_equal(r, 0);
    size_t wsz = (size_t)(p->workspace_bytes + 63) / 64 * 64;
    void *ws = wsz ? aligned_alloc(64, wsz) : NULL;
    float *out[3];
    for (int k = 0; k < n_out; k++) {
        out[k] = malloc(sizeof(float) * (size_t)ir_array_numel(&ref[k]));
        assert_non_null(out[k]);
    }
    halide_set_custom_do_par_for(halide_default_do_par_for);
    static const int pools[] = { 1, 2 };
    for (size_t q = 0; q < sizeof pools / sizeof *pools; q++) {
        halide_set_num_threads(pools[q]);
        for (int run = 0; run < 20; run++) {
            const void *ip[] = { xv };
            void *op[3];
            for (int k = 0; k < n_out; k++) {
                memset(out[k], 0xff, sizeof(float) * (size_t)ir_array_numel(&ref[k]));
                op[k] = out[k];
            }
            if (ws)
                memset(ws, 0xff, wsz);
            assert_int_equal(cg_jit_entry(j)(ip, op, ws), 0);
            for (int k = 0; k < n_out; k++)
                for (int64_t i = 0; i < ir_array_numel(&ref[k]); i++) {
                    double want = ir_load_f64(ref[k].dtype, ref[k].data, i);
                    if (!(fabs(out[k][i] - want) <= 1e-5 + 1e-5 * fabs(want)))
                        fail_msg("%s %s, pool %d, run %d: output %d [%lld] = %.9g, want %.9g", ir_op_name(rc->op),
                                 rc->dir, pools[q], run, k, (long long)i, out[k][i], want);
                }
        }
    }
    halide_set_num_threads(0);
    for (int k = 0; k < n_out; k++) {
        free(out[k]);
        free(ref[k].data);
    }
    free(xv);
    free(ws);
    cg_jit_free(j);
    loop_program_free(p);
    ir_graph_free(t.g);
}

static void test_rnn_tasks(void **state)
{
    (void)state;
    static const RnnTaskCase cases[] = {
        { IR_OP_LSTM, "bidirectional", 100, 128, 0, 0 },    /* the task loop over the directions */
        { IR_OP_LSTM, "forward", 49, 256, 0, 1 },           /* the split form: units in two parts */
        { IR_OP_LSTM, "reverse", 20, 256, 0, 1 },
        { IR_OP_GRU, "forward", 9, 256, 1, 1 },
        { IR_OP_RNN, "forward", 30, 384, 0, 0 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        rnn_task_case(&cases[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_region),
        cmocka_unit_test(test_rnn_tasks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
