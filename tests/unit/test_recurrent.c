/* tests/unit/test_recurrent.c — RNN, GRU and LSTM checked on every target
 * against the reference interpreter.  One table of cases drives one
 * function: each case is a one-node graph (or two stacked bidirectional
 * layers as PyTorch exports a 2-layer net: the first layer's Y [T, 2, B, H]
 * → Transpose (0, 2, 1, 3) → Reshape [0, 0, -1] → the second layer's X
 * [T, B, 2H]) with seeded pseudo-random float32 weights (constants, as an
 * export's initializers) and inputs (X, initial states, sequence_lens).
 * interp_run gives the expected outputs; checked against them are
 *   - the CPU target: tgt_cpu_program + the LLVM JIT at -O2, what
 *     tgt_host_jit builds;
 *   - the GPU target emulated on the host: tgt_gpu_program (gpu_emulate);
 *   - the FPGA target: the loop program of its driver's pipeline (line
 *     buffers, ReLU folding, HLS pragmas) evaluated in double by
 *     tgt_fpga_eval, and the driver itself (tgt_fpga_compile: HLS C with the
 *     top function, the testbench, a report naming the node).
 * The JIT-compiled models run on output buffers and a workspace filled with
 * NaN (bytes 0xFF) instead of tgt_host_run's zero-filled outputs, which
 * would hide an unwritten Y past a row's length (0 in the reference); the
 * reference has no NaN and every output of it a nonzero value (unless all
 * rows are empty), so an unwritten element fails on the FPGA evaluator's
 * zeroed buffers too.  Tolerance, every element of every output:
 * |got - want| <= 1e-5 + 1e-5 |want| (the plain templates compute in float64
 * like the interpreter, the packed forms in float32), and NaN never
 * matches.  The CPU and GPU programs must take the packed form (lower/rnn.c:
 * its input projection buffer rnn_xw) where W, R and B are constants, and
 * the plain one where they are graph inputs (cases marked w_input).  The GPU
 * program must take the cooperative schedule (targets/gpu/coop.c): each
 * recurrent kernel one block per direction x batch row (gpu.block.x of
 * D * B), of T threads (gpu.thread.x: its widest loop over hidden units or
 * packed columns rounded up to a warp), with barriers; the packed form's
 * input projection a kernel of its own with shared-memory tiles (barriers).
 * Every failing case, target and output is printed, then the test fails.
 *
 * Covered (a covering set, not the cross product): every operator x
 * direction (forward, reverse, bidirectional) at batch 1 without
 * sequence_lens (the GPU schedule once split those kernels across their
 * LOCAL state) and at batch 3 with lengths 0, partial and full; batch 1 with
 * sequence_lens 0, partial or full (a graph input or a constant); all rows
 * empty; initial states given or absent; B given or absent; clip; GRU's
 * linear_before_reset 0 and 1; LSTM with and without peepholes, with
 * input_forget; layout 1 for each operator; only Y, only Y_h, only Y_c,
 * Y_h with Y_c; two stacked bidirectional layers for each operator; W, R and
 * B as graph inputs (the plain forms) for each operator. */
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
#include "targets/fpga/fpga_impl.h"
#include "tests/unit/lower_graph.h"

#define ATOL 1e-5
#define RTOL 1e-5
#define MAX_IO 16

enum { OUT_Y = 1, OUT_H = 2, OUT_C = 4 };              /* outputs a case asks for (0: all) */
enum { SL_ABSENT, SL_INPUT, SL_CONST };                /* sequence_lens */

typedef struct Case {
    IrOp op;
    const char *dir;        /* forward, reverse, bidirectional */
    int seq, batch, isz, hs;
    int sl;                 /* SL_* */
    int lens[3];            /* sequence_lens[b] when given */
    int init;               /* initial_h (and LSTM's initial_c) given, as graph inputs */
    int no_bias;            /* B absent */
    int lbr, peep, forget, layout;
    double clip;            /* 0: none */
    unsigned outs;          /* OUT_* of every layer; 0: all */
    int layers;             /* 2: stacked (bidirectional, layout 0); else 1 */
    int w_input;            /* W, R and B graph inputs (the plain forms), not constants */
} Case;

#define RNN IR_OP_RNN
#define GRU IR_OP_GRU
#define LSTM IR_OP_LSTM
#define F "forward"
#define R "reverse"
#define BI "bidirectional"

static const Case cases[] = {
    /* batch 1, no sequence_lens: every operator and direction */
    { RNN, F, 5, 1, 3, 4, .init = 0 },
    { RNN, R, 4, 1, 4, 3, .init = 1 },
    { RNN, BI, 3, 1, 5, 2, .init = 0, .clip = 0.7 },
    { GRU, F, 6, 1, 3, 5, .init = 1, .lbr = 1 },
    { GRU, R, 1, 1, 4, 4, .init = 0, .no_bias = 1 },
    { GRU, BI, 5, 1, 3, 6, .init = 1, .lbr = 1 },
    { LSTM, F, 7, 1, 5, 3, .init = 0, .peep = 1 },
    { LSTM, R, 4, 1, 3, 2, .init = 1 },
    { LSTM, BI, 3, 1, 4, 5, .init = 1, .peep = 1, .clip = 0.9 },
    /* batch 3, sequence lengths 0, partial and full: every operator and direction */
    { RNN, F, 5, 3, 3, 4, SL_INPUT, { 5, 0, 2 }, .init = 1 },
    { RNN, R, 6, 3, 4, 3, SL_INPUT, { 3, 6, 0 }, .no_bias = 1 },
    { RNN, BI, 4, 3, 5, 5, SL_INPUT, { 0, 4, 1 }, .init = 1 },
    { GRU, F, 4, 3, 3, 2, SL_INPUT, { 2, 4, 0 } },
    { GRU, R, 5, 3, 5, 3, SL_INPUT, { 5, 1, 0 }, .init = 1, .lbr = 1 },
    { GRU, BI, 7, 3, 4, 4, SL_CONST, { 0, 3, 7 }, .clip = 0.5 },
    { LSTM, F, 6, 3, 4, 3, SL_INPUT, { 6, 0, 4 }, .init = 1 },
    { LSTM, R, 5, 3, 3, 4, SL_INPUT, { 0, 2, 5 }, .peep = 1 },
    { LSTM, BI, 4, 3, 5, 2, SL_INPUT, { 3, 0, 4 }, .init = 1, .peep = 1, .forget = 1 },
    /* batch 1 with sequence_lens: partial, 0, full (a constant or a graph input) */
    { RNN, F, 5, 1, 4, 3, SL_CONST, { 2 }, .init = 1 },
    { GRU, BI, 3, 1, 3, 4, SL_INPUT, { 0 }, .init = 1, .lbr = 1 },
    { LSTM, R, 4, 1, 5, 6, SL_CONST, { 4 }, .peep = 1 },
    /* layout 1 (each operator, GRU at batch 1 too); batch 3 without sequence_lens; every row empty */
    { RNN, BI, 4, 3, 3, 3, SL_INPUT, { 1, 4, 0 }, .init = 1, .layout = 1 },
    { GRU, F, 5, 3, 4, 5, .init = 1, .layout = 1 },
    { LSTM, BI, 3, 3, 3, 4, .init = 1, .peep = 1, .layout = 1 },
    { RNN, R, 2, 3, 5, 6 },
    { GRU, BI, 4, 1, 3, 4, .init = 1, .layout = 1 },
    { RNN, F, 3, 3, 3, 3, SL_INPUT, { 0, 0, 0 }, .init = 1 },
    /* optional outputs */
    { RNN, R, 4, 1, 3, 5, .outs = OUT_H },
    { GRU, F, 5, 3, 4, 3, SL_INPUT, { 4, 5, 0 }, .init = 1, .outs = OUT_Y },
    { LSTM, F, 6, 1, 3, 4, .init = 1, .outs = OUT_Y },
    { LSTM, BI, 5, 1, 4, 3, .outs = OUT_H },
    { LSTM, R, 4, 3, 3, 2, SL_INPUT, { 1, 4, 0 }, .init = 1, .outs = OUT_H | OUT_C },
    { LSTM, F, 4, 1, 3, 2, .outs = OUT_C },
    /* two stacked bidirectional layers */
    { RNN, BI, 4, 1, 3, 3, .layers = 2 },
    { GRU, BI, 5, 3, 4, 2, SL_INPUT, { 5, 2, 0 }, .init = 1, .lbr = 1, .layers = 2 },
    { LSTM, BI, 3, 1, 5, 4, .init = 1, .peep = 1, .layers = 2 },
    /* W, R and B graph inputs: the plain forms */
    { RNN, R, 5, 2, 3, 4, SL_INPUT, { 3, 5 }, .init = 1, .w_input = 1 },
    { GRU, BI, 4, 3, 3, 5, SL_INPUT, { 4, 0, 2 }, .w_input = 1 },
    { GRU, F, 4, 1, 4, 3, .init = 1, .lbr = 1, .w_input = 1 },
    { LSTM, BI, 5, 2, 4, 3, .init = 1, .peep = 1, .w_input = 1 },
};

/* ------------------------------------------------------------- helpers */

static uint64_t rng_next(uint64_t *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return *s >> 11;
}

static double uniform(uint64_t *s, double lo, double hi)
{
    return lo + (hi - lo) * ((double)rng_next(s) / 9007199254740992.0);
}

static void fail_diag(const char *what, const UtilDiag *d)
{
    char m[1200];
    util_diag_format(d, m, sizeof m);
    fail_msg("%s: %s", what, m);
}

/* "case 7 (LSTM reverse T4 B1 I3 H2 initial states)" for messages */
static void case_label(const Case *c, int idx, char *out, size_t n)
{
    char outs[32] = "";
    if (c->outs)
        snprintf(outs, sizeof outs, " outputs%s%s%s", c->outs & OUT_Y ? " Y" : "", c->outs & OUT_H ? " Y_h" : "",
                 c->outs & OUT_C ? " Y_c" : "");
    snprintf(out, n, "case %d (%s %s T%d B%d I%d H%d%s%s%s%s%s%s%s%s%s%s%s)", idx, ir_op_name(c->op), c->dir, c->seq,
             c->batch, c->isz, c->hs,
             c->sl == SL_INPUT ? " sequence_lens" : c->sl == SL_CONST ? " sequence_lens (constant)" : "",
             c->init ? " initial states" : "", c->no_bias ? " no B" : "", c->lbr ? " linear_before_reset" : "",
             c->peep ? " peepholes" : "", c->forget ? " input_forget" : "", c->layout ? " layout 1" : "",
             c->clip > 0 ? " clip" : "", outs, c->layers == 2 ? " 2 layers" : "",
             c->w_input ? " W R B inputs" : "");
}

/* A constant of random values in [lo, hi). */
static int rand_const(TG *t, const char *name, int rank, const int64_t *dims, double lo, double hi, uint64_t *s)
{
    int64_t n = 1;
    for (int i = 0; i < rank; i++)
        n *= dims[i];
    double *v = malloc((size_t)n * sizeof *v);
    assert_non_null(v);
    for (int64_t i = 0; i < n; i++)
        v[i] = uniform(s, lo, hi);
    int x = tg_const(t, name, IR_DT_F32, rank, dims, v);
    free(v);
    return x;
}

/* Adds layer l of case c over x (input size isz, sequence_lens tensor sl or
 * -1); outs[k] receives output k's tensor (-1: absent). */
static void add_layer(TG *t, const Case *c, int l, int x, int64_t isz, int sl, int outs[3], uint64_t *s)
{
    int64_t D = !strcmp(c->dir, BI) ? 2 : 1, H = c->hs, B = c->batch;
    int64_t G = c->op == LSTM ? 4 : c->op == GRU ? 3 : 1;
    int lstm = c->op == LSTM;
    char nm[32];
    int in[8] = { x, -1, -1, -1, sl, -1, -1, -1 };
    snprintf(nm, sizeof nm, "W%d", l);
    in[1] = c->w_input ? tg_input(t, nm, IR_DT_F32, TG_INTS(D, G * H, isz))
                       : rand_const(t, nm, TG_INTS(D, G * H, isz), -0.6, 0.6, s);
    snprintf(nm, sizeof nm, "R%d", l);
    in[2] = c->w_input ? tg_input(t, nm, IR_DT_F32, TG_INTS(D, G * H, H))
                       : rand_const(t, nm, TG_INTS(D, G * H, H), -0.6, 0.6, s);
    if (!c->no_bias) {
        snprintf(nm, sizeof nm, "B%d", l);
        in[3] = c->w_input ? tg_input(t, nm, IR_DT_F32, TG_INTS(D, 2 * G * H))
                           : rand_const(t, nm, TG_INTS(D, 2 * G * H), -0.3, 0.3, s);
    }
    int64_t st[3] = { D, B, H };
    if (c->layout)
        st[0] = B, st[1] = D;
    if (c->init) {
        snprintf(nm, sizeof nm, "initial_h%d", l);
        in[5] = tg_input(t, nm, IR_DT_F32, 3, st);
        if (lstm) {
            snprintf(nm, sizeof nm, "initial_c%d", l);
            in[6] = tg_input(t, nm, IR_DT_F32, 3, st);
        }
    }
    if (c->peep) {
        snprintf(nm, sizeof nm, "P%d", l);
        in[7] = rand_const(t, nm, TG_INTS(D, 3 * H), -0.5, 0.5, s);
    }
    int n_in = 8;
    while (n_in > 3 && in[n_in - 1] < 0)
        n_in--;
    unsigned want = c->outs ? c->outs : OUT_Y | OUT_H | OUT_C;
    if (l == 0 && c->layers == 2)
        want |= OUT_Y;                                  /* feeds the second layer */
    static const char *const onames[3] = { "Y", "Y_h", "Y_c" };
    int n_out = 0;
    for (int k = 0; k < 3; k++) {
        outs[k] = -1;
        if ((want & (1u << k)) && (k < 2 || lstm)) {
            snprintf(nm, sizeof nm, "%s%d", onames[k], l);
            outs[k] = tg_tensor(t, nm, IR_TK_VALUE);
            n_out = k + 1;
        }
    }
    snprintf(nm, sizeof nm, "layer%d", l);
    t->node = ir_add_node(t->g, c->op, nm, n_in, in, n_out, outs, util_loc_file("t.json"));
    assert_true(t->node >= 0);
    tg_int(t, IR_A_hidden_size, H);
    tg_str(t, IR_A_direction, c->dir);
    if (c->layout)
        tg_int(t, IR_A_layout, 1);
    if (c->clip > 0)
        tg_float(t, IR_A_clip, c->clip);
    if (c->lbr)
        tg_int(t, IR_A_linear_before_reset, 1);
    if (c->forget)
        tg_int(t, IR_A_input_forget, 1);
}

/* The case's graph: X (and sequence_lens, initial states) as graph inputs. */
static void build(TG *t, const Case *c, int idx)
{
    char name[32];
    snprintf(name, sizeof name, "rec%d", idx);
    tg_start(t, name);
    uint64_t s = 0x9E3779B97F4A7C15ULL ^ (uint64_t)idx;
    int64_t T = c->seq, B = c->batch;
    int x = c->layout ? tg_input(t, "X", IR_DT_F32, TG_INTS(B, T, c->isz))
                      : tg_input(t, "X", IR_DT_F32, TG_INTS(T, B, c->isz));
    double lens[3] = { c->lens[0], c->lens[1], c->lens[2] };
    int sl = c->sl == SL_INPUT ? tg_input(t, "sequence_lens", IR_DT_I32, TG_INTS(B))
           : c->sl == SL_CONST ? tg_const(t, "sequence_lens", IR_DT_I32, 1, (int64_t[]){ B }, lens)
                               : -1;
    int o1[3], o2[3] = { -1, -1, -1 };
    add_layer(t, c, 0, x, c->isz, sl, o1, &s);
    if (c->layers == 2) {                              /* Y [T, 2, B, H] -> [T, B, 2, H] -> [T, B, 2H] */
        int y = tg_node(t, IR_OP_Transpose, "transpose", 1, &o1[0], 1);
        tg_ints(t, IR_A_perm, TG_INTS(0, 2, 1, 3));
        int rs[2] = { y, tg_const(t, "shape", IR_DT_I64, TG_INTS(3), (double[]){ 0, 0, -1 }) };
        int x2 = tg_node(t, IR_OP_Reshape, "reshape", 2, rs, 1);
        add_layer(t, c, 1, x2, 2 * c->hs, sl, o2, &s);
        o1[0] = -1;                                    /* an intermediate, in the workspace */
    }
    for (int k = 0; k < 3; k++) {
        if (o1[k] >= 0)
            tg_output(t, o1[k]);
        if (o2[k] >= 0)
            tg_output(t, o2[k]);
    }
    if (pass_infer(t->g, &t->d) != 0)
        fail_diag("infer", &t->d);
}

/* 1 with a message naming the case, the target and the stage when d holds an
 * error (the compilation failed), else 0. */
static int failed_diag(const char *label, const char *target, const char *stage, const UtilDiag *d)
{
    char m[1200];
    util_diag_format(d, m, sizeof m);
    print_error("%s, %s: %s failed: %s\n", label, target, stage, m);
    return 1;
}

/* Output o against the reference: every element within the tolerance, no
 * NaN (the reference has none).  Prints the first mismatch and their count;
 * returns 1 when there is one. */
static int compare(const char *label, const char *target, const IrGraph *g, int o, const IrArray *want,
                   const void *got_f32, const double *got_f64)
{
    int64_t n = ir_array_numel(want), bad = 0, first = -1;
    for (int64_t i = 0; i < n; i++) {
        double w = ir_load_f64(want->dtype, want->data, i);
        double v = got_f64 ? got_f64[i] : ir_load_f64(want->dtype, got_f32, i);
        if (isnan(v) || !(fabs(v - w) <= ATOL + RTOL * fabs(w))) {
            first = first < 0 ? i : first;
            bad++;
        }
    }
    if (!bad)
        return 0;
    double w = ir_load_f64(want->dtype, want->data, first);
    double v = got_f64 ? got_f64[first] : ir_load_f64(want->dtype, got_f32, first);
    print_error("%s, %s: output %s: %lld of %lld elements wrong, first [%lld] = %.9g, want %.9g\n", label, target,
                g->tensors[g->outputs[o]].name, (long long)bad, (long long)n, (long long)first, v, w);
    return 1;
}

/* The CPU target (emulate 0) or the emulated GPU target (1), as tgt_host_jit
 * builds them, run on NaN-filled outputs and workspace; returns the number
 * of failures (a failed compilation, wrong outputs). */
static int run_jit(const char *label, const IrGraph *g, int emulate, int want_packed, const IrArray *in,
                   const IrArray *ref)
{
    const char *target = emulate ? "gpu-emulate" : "cpu";
    UtilDiag d;
    util_diag_init(&d);
    TgtOptions o = { .name = "rec", .opt_level = 2, .gpu_emulate = emulate };
    LoopProgram *p = emulate ? tgt_gpu_program(g, &o, &d) : tgt_cpu_program(g, &o, 1, &d);
    if (!p)
        return failed_diag(label, target, "the loop pipeline", &d);
    int packed = 0;
    for (int b = 0; b < p->n_bufs; b++)
        packed |= !strncmp(p->bufs[b].name, "rnn_xw", 6);
    if (packed != want_packed) {
        print_error("%s [%s]: the %s form, expected the %s one\n", label, target, packed ? "packed" : "plain",
                    want_packed ? "packed" : "plain");
        loop_program_free(p);
        return 1;
    }
    CgOptions co = { .opt_level = o.opt_level, .gpu_emulate = emulate };
    CgJit *j = NULL;
    if (cg_jit(p, &co, &j, &d) != 0) {
        loop_program_free(p);
        return failed_diag(label, target, "the JIT", &d);
    }
    size_t wsz = (size_t)(p->workspace_bytes + 63) / 64 * 64;
    void *ws = wsz ? aligned_alloc(64, wsz) : NULL;
    if (ws)
        memset(ws, 0xFF, wsz);
    const void *ip[MAX_IO];
    void *op[MAX_IO];
    for (int i = 0; i < g->n_inputs; i++)
        ip[i] = in[i].data;
    for (int k = 0; k < g->n_outputs; k++) {
        size_t bytes = ir_array_bytes(&ref[k]);
        op[k] = malloc(bytes + 1);
        assert_non_null(op[k]);
        memset(op[k], 0xFF, bytes + 1);
    }
    assert_int_equal(cg_jit_entry(j)(ip, op, ws), 0);
    int fails = 0;
    for (int k = 0; k < g->n_outputs; k++) {
        fails += compare(label, target, g, k, &ref[k], op[k], NULL);
        free(op[k]);
    }
    free(ws);
    cg_jit_free(j);
    loop_program_free(p);
    return fails;
}

static void count_stmt(const LoopStmt *s, int *barriers, int *blocks)
{
    if (!s)
        return;
    switch (s->kind) {
    case LOOP_S_BARRIER: (*barriers)++; break;
    case LOOP_S_FOR:
        *blocks += s->u.loop.kind >= LOOP_GPU_BLOCK_X && s->u.loop.kind <= LOOP_GPU_BLOCK_Z;
        count_stmt(s->u.loop.body, barriers, blocks);
        break;
    case LOOP_S_IF: count_stmt(s->u.cond.then_, barriers, blocks); count_stmt(s->u.cond.else_, barriers, blocks); break;
    case LOOP_S_BLOCK:
        for (int i = 0; i < s->u.block.n; i++)
            count_stmt(s->u.block.items[i], barriers, blocks);
        break;
    default: break;
    }
}

typedef struct UsesLocal { const LoopProgram *p; int any; } UsesLocal;

static void uses_local(void *ctx, int buf, int store)
{
    (void)store;
    UsesLocal *u = ctx;
    u->any |= !strncmp(u->p->bufs[buf].name, "rnn_", 4) && u->p->bufs[buf].storage == LOOP_ST_LOCAL;
}

/* The GPU program (not emulated: barriers in place) takes the cooperative
 * schedule: every recurrent kernel (the ones using the state buffers) is
 * `for bx < D*B gpu.block.x { for tx < T gpu.thread.x { ... } }` with T its
 * widest phase rounded up to a warp (packed: the gates' columns, GRU without
 * linear_before_reset the first two gates'; plain: H) and barriers; the
 * packed form's projections are tiled products (barriers, three block
 * loops) unless they have one row.
 * Returns the number of failures. */
static int gpu_schedule(const char *label, const IrGraph *g, const Case *c)
{
    UtilDiag d;
    util_diag_init(&d);
    TgtOptions o = { .name = "rec", .opt_level = 2 };
    LoopProgram *p = tgt_gpu_program(g, &o, &d);
    if (!p)
        return failed_diag(label, "gpu", "the loop pipeline", &d);
    int64_t D = !strcmp(c->dir, BI) ? 2 : 1, hp = (c->hs + 15) / 16 * 16;
    int64_t gates = c->op == LSTM ? 4 : c->op == GRU ? 3 : 1;
    int64_t wide = c->w_input ? c->hs : c->op == GRU && !c->lbr ? 2 * hp : gates * hp;
    int64_t T = (wide + 31) / 32 * 32;
    int fails = 0, recurrent = 0, projections = 0;
    for (int k = 0; k < p->n_kernels; k++) {
        const LoopStmt *s = p->kernels[k].body;
        int barriers = 0, blocks = 0;
        count_stmt(s, &barriers, &blocks);
        const char *nm = p->kernels[k].name;
        size_t len = strlen(nm);
        if (len > 3 && !strcmp(nm + len - 3, "_xw")) {
            projections++;                          /* one row (T * B = 1): a flat mapping */
            int tiled = c->seq * c->batch > 1;
            if (barriers != (tiled ? 2 : 0) || blocks != (tiled ? 3 : 1)) {
                print_error("%s, gpu: projection %s: %d barriers, %d block loops\n", label,
                            nm, barriers, blocks);
                fails++;
            }
            continue;
        }
        UsesLocal u = { p, 0 };
        loop_stmt_buffers(s, uses_local, &u);
        if (!u.any)
            continue;
        recurrent++;
        const LoopStmt *t = s->kind == LOOP_S_FOR ? s->u.loop.body : NULL;
        while (t && t->kind == LOOP_S_BLOCK && t->u.block.n == 1)
            t = t->u.block.items[0];
        if (s->kind != LOOP_S_FOR || s->u.loop.kind != LOOP_GPU_BLOCK_X || s->u.loop.extent->u.i != D * c->batch ||
            !t || t->kind != LOOP_S_FOR || t->u.loop.kind != LOOP_GPU_THREAD_X || t->u.loop.extent->u.i != T ||
            blocks != 1 || barriers < 1) {
            print_error("%s, gpu: kernel %s is not %lld blocks of %lld threads with barriers\n", label, nm,
                        (long long)(D * c->batch), (long long)T);
            fails++;
        }
    }
    int layers = c->layers == 2 ? 2 : 1;
    if (recurrent != layers || projections != (c->w_input ? 0 : layers)) {
        print_error("%s, gpu: %d recurrent kernels and %d projections, want %d and %d\n", label, recurrent,
                    projections, layers, c->w_input ? 0 : layers);
        fails++;
    }
    loop_program_free(p);
    return fails;
}

/* The FPGA driver's schedule steps (targets/fpga/fpga.c). */
static int fpga_dataflow(LoopProgram *p, const IrGraph *g, const void *arg, UtilDiag *d)
{
    (void)arg;
    if (tgt_fpga_line_buffers(p, g, TGT_FPGA_UNROLL_BUDGET, NULL, 0, d) < 0)
        return -1;
    tgt_fpga_fuse_relu(p, g);
    return 0;
}

static int fpga_pragmas(LoopProgram *p, const IrGraph *g, const void *arg, UtilDiag *d)
{
    (void)arg;
    return tgt_fpga_schedule(p, TGT_FPGA_UNROLL_BUDGET, NULL, 0) ? util_error(d, util_loc_file(g->file), "out of memory") : 0;
}

/* The FPGA target: its loop program (the driver's pipeline) evaluated in
 * double against the reference, and the whole driver: HLS C with the top
 * function, a testbench calling NAME_run, a report naming the node.
 * Returns the number of failures. */
static int run_fpga(const char *label, const IrGraph *g, const IrArray *in, const IrArray *ref)
{
    UtilDiag d;
    util_diag_init(&d);
    LowSchedule sched = { .target = "fpga" };
    TgtPipeline pl = { .name = "rec", .lowering = &sched, .schedule = fpga_dataflow, .finish = fpga_pragmas,
                       .schedule_name = "the FPGA line buffers", .finish_name = "the HLS schedule" };
    LoopProgram *p = tgt_loop_program(g, &pl, &d);
    if (!p)
        return failed_diag(label, "fpga", "the loop pipeline", &d);
    double **vals = calloc((size_t)p->n_bufs + 1, sizeof *vals);
    assert_non_null(vals);
    int fails = 0;
    if (tgt_fpga_eval(p, NULL, NULL, in, vals, &d) != 0)
        fails += failed_diag(label, "fpga", "the evaluation", &d);
    for (int k = 0; k < g->n_outputs && !fails; k++) {
        int b = 0;
        while (b < p->n_bufs && !(p->bufs[b].storage == LOOP_ST_OUTPUT && p->bufs[b].index == k))
            b++;
        assert_true(b < p->n_bufs);
        fails += compare(label, "fpga", g, k, &ref[k], NULL, vals[cg_c_root(p, b)]);
    }
    for (int b = 0; b < p->n_bufs; b++)
        free(vals[b]);
    free(vals);
    loop_program_free(p);

    TgtOptions o = { .name = "rec", .emit = TGT_EMIT_HLS | TGT_EMIT_REPORT, .model_file = "t.json" };
    TgtFiles fs = { 0 };
    if (tgt_fpga_compile(g, &o, &fs, &d) != 0)
        return fails + failed_diag(label, "fpga", "tgt_fpga_compile", &d);
    int seen = 0;
    for (int i = 0; i < fs.n; i++) {
        util_buf_put(&fs.f[i].data, "", 1);
        const char *text = fs.f[i].data.data;
        if (!strcmp(fs.f[i].name, "rec.c"))
            seen |= strstr(text, "void rec_top(") ? 1 : 0;
        else if (!strcmp(fs.f[i].name, "rec_tb.c"))
            seen |= strstr(text, "rec_run(&in, &out, tb_ws)") ? 2 : 0;
        else if (!strcmp(fs.f[i].name, "rec.report.json"))
            seen |= strstr(text, "\"layer0\"") ? 4 : 0;
    }
    tgt_files_free(&fs);
    if (seen != 7) {
        print_error("%s, fpga: tgt_fpga_compile's files lack the top function, the testbench's call or the "
                    "report's layer (%d)\n", label, seen);
        fails++;
    }
    return fails;
}

/* ------------------------------------------------------------- the cases */

/* Builds case idx, runs the reference and every target; returns the number
 * of failures (each one printed). */
static int run_case(const Case *c, int idx)
{
    char label[256];
    case_label(c, idx, label, sizeof label);
    if (getenv("DLCC_TEST_VERBOSE"))
        printf("%s\n", label);
    TG t;
    build(&t, c, idx);
    IrGraph *g = t.g;
    assert_true(g->n_inputs <= MAX_IO && g->n_outputs <= MAX_IO);
    IrArray in[MAX_IO], ref[MAX_IO];
    uint64_t s = 0xD1B54A32D192ED03ULL ^ (uint64_t)idx;
    for (int i = 0; i < g->n_inputs; i++) {
        const IrTensor *x = &g->tensors[g->inputs[i]];
        in[i] = (IrArray){ .dtype = x->v.dtype, .shape = x->v.shape };
        in[i].data = calloc(ir_array_bytes(&in[i]) + 1, 1);
        for (int64_t k = 0; k < ir_array_numel(&in[i]); k++)
            if (x->v.dtype == IR_DT_I32)                               /* sequence_lens */
                ir_store_i64(IR_DT_I32, in[i].data, k, c->lens[k]);
            else
                ir_store_f64(x->v.dtype, in[i].data, k, uniform(&s, -1, 1));
    }
    UtilDiag d;
    util_diag_init(&d);
    if (interp_run(g, in, ref, &d) != 0)
        fail_diag(label, &d);
    /* the reference has no NaN (so a NaN anywhere else is wrong), and every
     * output a nonzero value unless every row is empty: one left unwritten
     * cannot pass as zeros where the outputs start zeroed (tgt_fpga_eval) */
    int empty = c->sl != SL_ABSENT;
    for (int b = 0; b < c->batch; b++)
        empty &= c->lens[b] == 0;
    for (int k = 0; k < g->n_outputs; k++) {
        int64_t n = ir_array_numel(&ref[k]), nz = 0;
        for (int64_t i = 0; i < n; i++) {
            double v = ir_load_f64(ref[k].dtype, ref[k].data, i);
            if (isnan(v))
                fail_msg("%s: the reference output %s[%lld] is NaN", label, g->tensors[g->outputs[k]].name,
                         (long long)i);
            nz += v != 0;
        }
        if (!nz && !empty)
            fail_msg("%s: the reference output %s is all zeros", label, g->tensors[g->outputs[k]].name);
    }
    int fails = run_jit(label, g, 0, !c->w_input, in, ref) + run_jit(label, g, 1, !c->w_input, in, ref) +
                gpu_schedule(label, g, c) + run_fpga(label, g, in, ref);
    for (int i = 0; i < g->n_inputs; i++)
        free(in[i].data);
    for (int k = 0; k < g->n_outputs; k++)
        interp_array_free(&ref[k]);
    ir_graph_free(g);
    return fails;
}

/* Every case on every target; the failures are listed, then counted. */
static void test_recurrent(void **state)
{
    (void)state;
    int fails = 0, n = (int)(sizeof cases / sizeof *cases);
    for (int i = 0; i < n; i++)
        fails += run_case(&cases[i], i);
    if (fails)
        fail_msg("%d failures in %d cases (listed above)", fails, n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_recurrent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
