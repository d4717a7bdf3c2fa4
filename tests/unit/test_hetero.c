/* tests/unit/test_hetero.c — the heterogeneous partitioner
 * (targets/hetero/, docs/targets/hetero.md): GLPK's plans against brute
 * force on random problems (every assignment and every order of the tasks,
 * the same timing model), the fallback when the time limit stops GLPK, the
 * device file reader's diagnostics and the built-in file, whole plans for
 * small models, and plans cut into partitions and compiled (-t hetero). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "frontend/frontend.h"
#include "lower_graph.h"
#include "targets/hetero/hetero_impl.h"

/* ------------------------------------------------------- random problems */

static uint64_t next(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 2685821657736338717ULL;
}

static int rnd(uint64_t *s, int n)
{
    return (int)(next(s) >> 33) % n;
}

#define MAXT 10
#define US 1e-6

/* Linear extensions of the tasks' order (edges src -> consumer) times the
 * assignments: the brute force's leaves.  preds[u]: bit t when t -> u. */
static double leaves(int n, const unsigned *preds, const double *cost, int m)
{
    static double ways[1 << MAXT];
    memset(ways, 0, sizeof ways);
    ways[0] = 1;
    for (unsigned mask = 0; mask < 1u << n; mask++)
        for (int t = 0; t < n && ways[mask] > 0; t++)
            if (!(mask >> t & 1) && (preds[t] & ~mask) == 0)
                ways[mask | 1u << t] += ways[mask];
    double r = ways[(1u << n) - 1];
    for (int t = 0; t < n; t++) {
        int k = 0;
        for (int d = 0; d < m; d++)
            k += cost[t * m + d] >= 0;
        r *= k;
    }
    return r;
}

static void add_cons(TgtHtItem *it, int u)
{
    for (int c = 0; c < it->n_cons; c++)
        if (it->cons[c] == u)
            return;
    int c = it->n_cons++;
    while (c > 0 && it->cons[c - 1] > u) {
        it->cons[c] = it->cons[c - 1];
        c--;
    }
    it->cons[c] = u;
}

/* n tasks on m devices (device 0 the host), integer microseconds
 * everywhere: costs 1..20 (a device refused now and then), items of 1..5 kB
 * at 1 kB/us, link latencies 0..3; links between two accelerators missing
 * half the time (routed through the host). */
static void random_problem(uint64_t *rng, int n, int m, TgtHtProblem *pb)
{
    memset(pb, 0, sizeof *pb);
    pb->n_tasks = n;
    pb->n_devs = m;
    pb->host = 0;
    pb->cost = calloc((size_t)n * m, sizeof *pb->cost);
    for (int t = 0; t < n; t++) {
        int any = 0;
        for (int d = 0; d < m; d++) {
            pb->cost[t * m + d] = rnd(rng, 7) == 0 ? -1 : (1 + rnd(rng, 20)) * US;
            any |= pb->cost[t * m + d] >= 0;
        }
        if (!any)
            pb->cost[t * m + rnd(rng, m)] = (1 + rnd(rng, 20)) * US;
    }
    pb->items = calloc((size_t)n + 3, sizeof *pb->items);
    unsigned preds[MAXT] = { 0 };
    for (int t = -2; t < n; t++) {                           /* two graph inputs, then an item per task */
        TgtHtItem *it = &pb->items[pb->n_items++];
        it->src = t < 0 ? -1 : t;
        it->bytes = 1000.0 * (1 + rnd(rng, 5));
        it->cons = calloc(MAXT, sizeof *it->cons);
        for (int u = t < 0 ? 0 : t + 1; u < n; u++)
            if (rnd(rng, 10) < 3) {
                add_cons(it, u);
                preds[u] |= t >= 0 ? 1u << t : 0;
            }
        it->to_host = t >= 0 && (t == n - 1 || rnd(rng, 5) == 0);
    }
    while (leaves(n, preds, pb->cost, m) > 3e5) {            /* a denser order: fewer orders to try */
        int t = rnd(rng, n - 1), u = t + 1 + rnd(rng, n - 1 - t);
        add_cons(&pb->items[2 + t], u);
        preds[u] |= 1u << t;
    }
    pb->links = calloc((size_t)m * m, sizeof *pb->links);
    for (int a = 0; a < m; a++)
        for (int b = 0; b < m; b++)
            if (a != b && (a == 0 || b == 0 || rnd(rng, 2)))
                pb->links[pb->n_links++] = (TgtHtLink){ a, b, 1e9, rnd(rng, 4) * US };
    int bf, bt;
    assert_int_equal(tgt_ht_prepare(pb, &bf, &bt), 0);
}

/* ------------------------------------------------------------ brute force */

/* Every order of the tasks (a ready one next) with every device for each:
 * the schedule of the latency model, built task by task. */
typedef struct Bf {
    const TgtHtProblem *pb;
    int assign[MAXT], order[MAXT], done[MAXT];
    double fin[MAXT], free_at[8];
    double best;
    int best_assign[MAXT], best_order[MAXT];
} Bf;

static void bf_latency(Bf *b, int placed, double span)
{
    const TgtHtProblem *pb = b->pb;
    int n = pb->n_tasks, m = pb->n_devs;
    if (placed == n) {
        if (span < b->best) {
            b->best = span;
            memcpy(b->best_assign, b->assign, sizeof b->assign);
            memcpy(b->best_order, b->order, sizeof b->order);
        }
        return;
    }
    for (int t = 0; t < n; t++) {
        int ready = !b->done[t];
        for (int e = pb->in_first[t]; ready && e < pb->in_first[t + 1]; e++)
            ready = b->done[pb->edge_src[e]];
        for (int d = 0; ready && d < m; d++) {
            if (pb->cost[t * m + d] < 0)
                continue;
            double s = b->free_at[d] > pb->in_delay[t * m + d] ? b->free_at[d] : pb->in_delay[t * m + d];
            for (int e = pb->in_first[t]; e < pb->in_first[t + 1]; e++) {
                int p = pb->edge_src[e];
                double r = b->fin[p] + pb->edge_delay[(size_t)e * m * m + b->assign[p] * m + d];
                s = r > s ? r : s;
            }
            double keep = b->free_at[d], f = s + pb->cost[t * m + d], done = f + pb->out_delay[t * m + d];
            b->assign[t] = d;
            b->order[placed] = t;
            b->fin[t] = f;
            b->free_at[d] = f;
            b->done[t] = 1;
            bf_latency(b, placed + 1, done > span ? done : span);
            b->done[t] = 0;
            b->free_at[d] = keep;
        }
    }
}

static double bf_throughput(const TgtHtProblem *pb, int *best_assign)
{
    int n = pb->n_tasks, m = pb->n_devs, a[MAXT] = { 0 };
    double best = INFINITY;
    for (;;) {
        int ok = 1;
        for (int t = 0; t < n; t++)
            ok &= pb->cost[t * m + a[t]] >= 0;
        if (ok) {
            double v = tgt_ht_bottleneck(pb, a, NULL, NULL);
            if (v < best) {
                best = v;
                memcpy(best_assign, a, sizeof a);
            }
        }
        int t = 0;
        while (t < n && ++a[t] == m)
            a[t++] = 0;
        if (t == n)
            return best;
    }
}

static void check_close(double got, double want, const char *what, uint64_t seed)
{
    if (fabs(got - want) > 1e-9 * fabs(want))
        fail_msg("%s (seed %llu): the MIP's plan takes %.12g s, brute force %.12g s", what,
                 (unsigned long long)seed, got, want);
}

static void mip_vs_brute_force(int m, TgtHeteroObjective obj, int cases)
{
    for (int c = 0; c < cases; c++) {
        uint64_t seed = 0x9E3779B97F4A7C15ULL ^ ((uint64_t)(m * 1000 + obj * 100 + c) * 0xBF58476D1CE4E5B9ULL);
        uint64_t s = seed;
        int n = 1 + c % MAXT;                                /* every size from 1 to 10 tasks */
        TgtHtProblem pb;
        random_problem(&s, n, m, &pb);
        int assign[MAXT], order[MAXT];
        TgtHtResult r = { .assign = assign, .order = order };
        UtilDiag d;
        util_diag_init(&d);
        assert_int_equal(tgt_ht_solve(&pb, obj, 60, &r, &d), 0);
        assert_int_equal(r.status, TGT_HETERO_OPTIMAL);
        if (obj == TGT_HETERO_LATENCY) {
            Bf b = { .pb = &pb, .best = INFINITY };
            bf_latency(&b, 0, 0);
            /* the evaluator agrees with the search's own schedule, and the MIP's value is the plan's */
            check_close(tgt_ht_makespan(&pb, b.best_assign, b.best_order, NULL), b.best, "evaluator", seed);
            check_close(tgt_ht_makespan(&pb, assign, order, NULL), r.value, "plan value", seed);
            check_close(r.value, b.best, "latency", seed);
        } else {
            int best[MAXT];
            double want = bf_throughput(&pb, best);
            check_close(tgt_ht_bottleneck(&pb, assign, NULL, NULL), r.value, "plan value", seed);
            check_close(r.value, want, "throughput", seed);
        }
        int ga[MAXT], go[MAXT];                              /* the greedy plan is no better */
        tgt_ht_greedy(&pb, obj, ga, go);
        double g = obj == TGT_HETERO_LATENCY ? tgt_ht_makespan(&pb, ga, go, NULL)
                                             : tgt_ht_bottleneck(&pb, ga, NULL, NULL);
        assert_true(g >= r.value * (1 - 1e-12));
        tgt_ht_free(&pb);
    }
}

static void test_latency_two_devices(void **state)
{
    (void)state;
    mip_vs_brute_force(2, TGT_HETERO_LATENCY, 40);
}

static void test_latency_three_devices(void **state)
{
    (void)state;
    mip_vs_brute_force(3, TGT_HETERO_LATENCY, 30);
}

static void test_throughput_two_devices(void **state)
{
    (void)state;
    mip_vs_brute_force(2, TGT_HETERO_THROUGHPUT, 40);
}

static void test_throughput_three_devices(void **state)
{
    (void)state;
    mip_vs_brute_force(3, TGT_HETERO_THROUGHPUT, 30);
}

/* A problem GLPK cannot finish in a millisecond: the plan is its best
 * integer solution or the greedy one, and says so. */
static void test_time_limit_fallback(void **state)
{
    (void)state;
    enum { N = 80, M = 3 };
    uint64_t s = 42;
    TgtHtProblem pb;
    memset(&pb, 0, sizeof pb);
    pb.n_tasks = N;
    pb.n_devs = M;
    pb.cost = calloc(N * M, sizeof *pb.cost);
    for (int i = 0; i < N * M; i++)
        pb.cost[i] = (1 + rnd(&s, 50)) * US;
    pb.items = calloc(N, sizeof *pb.items);
    for (int t = 0; t < N; t++) {                            /* a wide, shallow graph: many orders */
        TgtHtItem *it = &pb.items[pb.n_items++];
        it->src = t < 8 ? -1 : t < 16 ? rnd(&s, 8) : t - 16 + rnd(&s, 8);
        it->bytes = 1000.0 * (1 + rnd(&s, 5));
        it->cons = calloc(1, sizeof *it->cons);
        it->cons[it->n_cons++] = t;
        it->to_host = t >= N - 8;
    }
    pb.links = calloc(M * M, sizeof *pb.links);
    for (int a = 0; a < M; a++)
        for (int b = 0; b < M; b++)
            if (a != b)
                pb.links[pb.n_links++] = (TgtHtLink){ a, b, 1e9, US };
    int bf, bt;
    assert_int_equal(tgt_ht_prepare(&pb, &bf, &bt), 0);
    int assign[N], order[N], ga[N], go[N];
    TgtHtResult r = { .assign = assign, .order = order };
    UtilDiag d;
    util_diag_init(&d);
    assert_int_equal(tgt_ht_solve(&pb, TGT_HETERO_LATENCY, 0.001, &r, &d), 0);
    assert_int_not_equal(r.status, TGT_HETERO_OPTIMAL);
    tgt_ht_greedy(&pb, TGT_HETERO_LATENCY, ga, go);
    double greedy = tgt_ht_makespan(&pb, ga, go, NULL);
    assert_true(r.value <= greedy);
    assert_true(r.status == TGT_HETERO_GREEDY ? r.value == greedy : r.value < greedy);
    assert_true(fabs(tgt_ht_makespan(&pb, assign, order, NULL) - r.value) <= 1e-15);
    tgt_ht_free(&pb);
}

/* -------------------------------------------------------- device files */

static void expect_diag(const char *text, const char *want)
{
    TgtDeviceFile f;
    UtilDiag d;
    util_diag_init(&d);
    int rc = tgt_hetero_read_devices("bad.json", text, strlen(text), &f, &d);
    tgt_hetero_devices_free(&f);
    char got[UTIL_DIAG_MSG + 600];
    util_diag_format(&d, got, sizeof got);
    if (rc != -1 || strcmp(got, want))
        fail_msg("device file\n%s\n  gave: %s\n  want: %s", text, got, want);
}

#define HEAD "{\"format\": \"dlcc-devices\", \"version\": 1,\n"

static void test_device_file_errors(void **state)
{
    (void)state;
    expect_diag(HEAD " \"devices\": [\n  {\"name\": \"c\", \"kind\": \"cpu\", \"peak\": 1}]}",
                "dlcc: bad.json:3:32: error: unknown key 'peak' in a device (expected: name, kind, peak_gflops, "
                "bandwidth_gbs, launch_us, part, clock_mhz, cores, note)");
    expect_diag(HEAD " \"devices\": [{\"name\": \"c\",\n   \"name\": \"d\"}]}",
                "dlcc: bad.json:3:4: error: invalid JSON: duplicate object key near '\"name\"'");
    expect_diag(HEAD " \"devices\": [{\"name\": \"c\", \"kind\": \"cpu\", \"launch_us\": 0,\n"
                "   \"peak_gflops\": \"fast\", \"bandwidth_gbs\": 10}]}",
                "dlcc: bad.json:3:19: error: 'peak_gflops' must be a number, not a string");
    expect_diag(HEAD " \"devices\": [{\"name\": \"f\", \"kind\": \"fpga\", \"launch_us\": 1,\n"
                "   \"peak_gflops\": 5, \"part\": \"xcu50\", \"clock_mhz\": 300}]}",
                "dlcc: bad.json:3:4: error: 'peak_gflops' does not apply to an FPGA (an FPGA's times are "
                "the FPGA target's estimate)");
    expect_diag(HEAD " \"devices\": [{\"name\": \"c\", \"kind\": \"tpu\"}]}",
                "dlcc: bad.json:2:36: error: unknown device kind 'tpu' (cpu, gpu or fpga)");
    expect_diag(HEAD " \"devices\": [{\"name\": \"c\", \"kind\": \"cpu\", \"launch_us\": 0, \"peak_gflops\": 1}]}",
                "dlcc: bad.json:2:14: error: missing required key 'bandwidth_gbs'");
    expect_diag(HEAD " \"devices\": [{\"name\": \"c\", \"kind\": \"gpu\", \"launch_us\": 0, \"peak_gflops\": 1,\n"
                "   \"bandwidth_gbs\": -2}]}",
                "dlcc: bad.json:3:21: error: 'bandwidth_gbs' -2 is out of range [0, 1000000]");
    expect_diag(HEAD " \"devices\": [{\"name\": \"c\", \"kind\": \"cpu\", \"launch_us\": 0, \"peak_gflops\": 1,\n"
                "   \"bandwidth_gbs\": 2}],\n \"links\": [{\"from\": \"c\", \"to\": \"g\", \"bandwidth_gbs\": 1, "
                "\"latency_us\": 1}]}",
                "dlcc: bad.json:4:32: error: no device named 'g' in this file");
    expect_diag("{\"format\": \"dlcc-devices\", \"version\": 2, \"devices\": []}",
                "dlcc: bad.json:1:39: error: 'version' 2 is out of range [1, 1]");
    expect_diag("[1, 2,]", "dlcc: bad.json:1:7: error: invalid JSON: unexpected token near ']'");
}

/* The built-in file: every entry reads; kinds pick the first of each. */
static void test_builtin_devices(void **state)
{
    (void)state;
    TgtDeviceFile f;
    UtilDiag d;
    util_diag_init(&d);
    unsetenv("DLCC_DEVICE_FILE");
    assert_int_equal(tgt_hetero_load_devices(NULL, &f, &d), 0);
    assert_string_equal(f.path, TGT_HT_BUILTIN_NAME);
    assert_int_equal(f.n_devices, 7);
    int ids[8], n, host;
    assert_int_equal(tgt_hetero_pick_devices(&f, "cpu,gpu,fpga", ids, 8, &n, &host, &d), 0);
    assert_int_equal(n, 3);
    assert_string_equal(f.devices[ids[0]].name, "epyc-zen3-2c");
    assert_string_equal(f.devices[ids[1]].name, "h100");
    assert_string_equal(f.devices[ids[2]].name, "u50");
    assert_int_equal(host, ids[0]);
    assert_int_equal(tgt_hetero_pick_devices(&f, "t4,zcu104", ids, 8, &n, &host, &d), 0);
    assert_string_equal(f.devices[host].name, "epyc-zen3-2c");      /* no CPU given: the file's first */
    assert_int_equal(tgt_hetero_pick_devices(&f, "cpu,cpu", ids, 8, &n, &host, &d), -1);
    assert_string_equal(d.msg, "--devices names device 'epyc-zen3-2c' twice");
    util_diag_init(&d);
    assert_int_equal(tgt_hetero_pick_devices(&f, "cpu,,gpu", ids, 8, &n, &host, &d), -1);
    util_diag_init(&d);
    assert_int_equal(tgt_hetero_pick_devices(&f, "v100", ids, 8, &n, &host, &d), -1);
    assert_non_null(strstr(d.msg, "no device named 'v100' (the file has: epyc-zen3-2c, h100, a100, t4, u50"));
    /* the writer's output reads back the same */
    UtilBuf b;
    util_buf_init(&b);
    tgt_hetero_write_devices(f.devices, f.n_devices, f.links, f.n_links, &b);
    TgtDeviceFile g;
    util_diag_init(&d);
    assert_int_equal(tgt_hetero_read_devices("w.json", b.data, b.len, &g, &d), 0);
    assert_int_equal(g.n_devices, f.n_devices);
    assert_int_equal(g.n_links, f.n_links);
    for (int i = 0; i < f.n_devices; i++) {
        assert_string_equal(g.devices[i].name, f.devices[i].name);
        assert_int_equal(g.devices[i].kind, f.devices[i].kind);
        assert_true(fabs(g.devices[i].peak_gflops - f.devices[i].peak_gflops) <= 1e-3 * f.devices[i].peak_gflops);
        assert_true(fabs(g.devices[i].clock_mhz - f.devices[i].clock_mhz) <= 1e-3 * f.devices[i].clock_mhz);
    }
    util_buf_free(&b);
    tgt_hetero_devices_free(&g);
    tgt_hetero_devices_free(&f);
}

/* ------------------------------------------------------------ whole plans */

/* Matrix products are fast on the GPU (its launch costs 2 us, the CPU's
 * compute 0.1 GFLOP/s), everything small is faster on the CPU. */
static const char mlp_devices[] =
    "{\"format\": \"dlcc-devices\", \"version\": 1, \"devices\": [\n"
    " {\"name\": \"slowcpu\", \"kind\": \"cpu\", \"peak_gflops\": 0.1, \"bandwidth_gbs\": 1000, \"launch_us\": 0},\n"
    " {\"name\": \"fastgpu\", \"kind\": \"gpu\", \"peak_gflops\": 10000, \"bandwidth_gbs\": 1000, \"launch_us\": 2}],\n"
    " \"links\": [{\"from\": \"slowcpu\", \"to\": \"fastgpu\", \"bandwidth_gbs\": 100, \"latency_us\": 1,\n"
    "             \"both_directions\": true}]}\n";

static char *write_temp(const char *text)
{
    char *path = strdup("/tmp/dlcc-test-hetero-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    return path;
}

static IrGraph *load_optimized(const char *path)
{
    UtilDiag d;
    util_diag_init(&d);
    FeOptions fo = { 0 };
    IrGraph *g = fe_load(path, &fo, &d);
    assert_non_null(g);
    PassOptions po = pass_options(2);
    assert_int_equal(pass_infer(g, &d), 0);
    assert_int_equal(pass_run_pipeline(g, &po, &d), 0);
    return g;
}

static void test_mlp_plan(void **state)
{
    (void)state;
    char *file = write_temp(mlp_devices);
    IrGraph *g = load_optimized(DLCC_SOURCE_ROOT "/tests/e2e/mlp/model.json");
    for (int obj = 0; obj < 2; obj++) {
        TgtHeteroOptions o = { .device_file = file, .devices = "cpu,gpu", .objective = obj, .opt_level = 2 };
        TgtHeteroPlan *p;
        UtilDiag d;
        util_diag_init(&d);
        assert_int_equal(tgt_hetero_partition(g, &o, &p, &d), 0);
        assert_int_equal(p->status, TGT_HETERO_OPTIMAL);
        int on[2] = { 0, 0 };
        for (int i = 0; i < g->n_nodes; i++) {
            int t = p->node_task[i];
            if (g->nodes[i].dead || t < 0)
                continue;
            on[p->tasks[t].device]++;
            const char *dev = p->devices[p->tasks[t].device].name;
            if (g->nodes[i].op == IR_OP_Gemm)
                assert_string_equal(dev, "fastgpu");
            if (g->nodes[i].op == IR_OP_Softmax)
                assert_string_equal(dev, "slowcpu");
        }
        assert_true(on[0] > 0 && on[1] > 0);                 /* two devices */
        for (int t = 0; t < p->n_tasks; t++) {               /* the roofline of docs/targets/hetero.md */
            const TgtHeteroTask *tk = &p->tasks[t];
            double cpu = 0, gpu = 0;
            for (int k = tk->first_kernel; k < tk->first_kernel + tk->n_kernels; k++) {
                const LoopKernel *kn = &p->program->kernels[k];
                double bytes = (double)loop_kernel_bytes(p->program, kn);
                cpu += fmax(kn->flops / 0.1e9, bytes / 1000e9);
                gpu += fmax(kn->flops / 10000e9, bytes / 1000e9) + 2e-6;
            }
            assert_true(fabs(tk->option_s[0] - cpu) <= 1e-12 * cpu);
            assert_true(fabs(tk->option_s[1] - gpu) <= 1e-12 * gpu);
        }
        assert_true(p->n_transfers >= 2);                    /* the input to the GPU, the logits back */
        UtilBuf b;
        util_buf_init(&b);
        assert_int_equal(tgt_hetero_render(g, p, 1, &b, &d), 0);
        json_error_t je;
        json_t *j = json_loadb(b.data, b.len, 0, &je);
        assert_non_null(j);
        assert_int_equal(json_array_size(json_object_get(j, "tasks")), p->n_tasks);
        assert_string_equal(json_string_value(json_object_get(j, "status")), "optimal");
        json_decref(j);
        util_buf_free(&b);
        tgt_hetero_plan_free(p);
    }
    ir_graph_free(g);
    unlink(file);
    free(file);
}

/* The FPGA's times are the FPGA target's estimate of the same nodes: its
 * kernels' cycles at the device's clock plus one start (the U50 of the
 * built-in file: 200 MHz, 20 us). */
static void test_fpga_times(void **state)
{
    (void)state;
    IrGraph *g = load_optimized(DLCC_SOURCE_ROOT "/tests/e2e/cnn/model.json");
    TgtHeteroOptions o = { .devices = "cpu,u50", .opt_level = 2 };
    TgtHeteroPlan *p;
    UtilDiag d;
    util_diag_init(&d);
    unsetenv("DLCC_DEVICE_FILE");
    assert_int_equal(tgt_hetero_partition(g, &o, &p, &d), 0);
    TgtFpgaKernelCost *fk;
    int nfk;
    TgtOptions to = { .name = "partition", .opt_level = 2, .fpga_io_parallel = 1 };   /* as the partitioner */
    assert_int_equal(tgt_fpga_estimate(g, &to, &fk, &nfk, &d), 0);
    assert_true(nfk > p->n_tasks);                           /* input staging kernels besides */
    double sum = 0;
    for (int t = 0; t < p->n_tasks; t++) {
        const TgtHeteroTask *tk = &p->tasks[t];
        int64_t cycles = 0;
        for (int i = 0; i < nfk; i++)
            if (fk[i].first_node >= tk->first_node && fk[i].first_node < tk->first_node + tk->n_nodes)
                cycles += fk[i].latency_cycles;
        assert_true(cycles > 0);
        double want = cycles / 200e6 + 20e-6;
        assert_true(fabs(tk->option_s[1] - want) <= 1e-12 * want);
        sum += cycles;
    }
    int64_t all = 0;                                         /* every layer's cycles, staging aside */
    for (int i = 0; i < nfk; i++)
        all += fk[i].first_node >= 0 ? fk[i].latency_cycles : 0;
    assert_true(sum == (double)all);
    free(fk);
    tgt_hetero_plan_free(p);
    ir_graph_free(g);
}

/* float16 tensors: the HLS C generator refuses them, so the FPGA is no
 * option; with only the FPGA given, the plan is impossible. */
static void test_fpga_refuses(void **state)
{
    (void)state;
    TG t;
    tg_start(&t, "half");
    int x = tg_input(&t, "x", IR_DT_F16, 2, (int64_t[]){ 4, 8 });
    int y = tg_node(&t, IR_OP_Relu, "relu", 1, &x, 1);
    tg_output(&t, y);
    assert_int_equal(pass_infer(t.g, &t.d), 0);
    TgtHeteroOptions o = { .devices = "cpu,fpga", .opt_level = 2 };
    TgtHeteroPlan *p;
    UtilDiag d;
    util_diag_init(&d);
    assert_int_equal(tgt_hetero_partition(t.g, &o, &p, &d), 0);
    assert_int_equal(p->n_tasks, 1);
    assert_true(p->tasks[0].option_s[1] < 0);
    assert_string_equal(p->devices[p->tasks[0].device].name, "epyc-zen3-2c");
    tgt_hetero_plan_free(p);
    o.devices = "fpga";
    assert_int_equal(tgt_hetero_partition(t.g, &o, &p, &d), -1);
    assert_non_null(strstr(d.msg, "can run on none of the devices given"));
    ir_graph_free(t.g);
}


/* ------------------------------------------------------ compiling a plan */

/* The CEDR network over the three devices of tests/hetero/spread.json: the
 * convolution on the GPU, the pooling on the CPU, the Flatten and the Gemm on
 * the FPGA; each partition a model of its own whose inputs are what it reads
 * from the others. */
static void test_split_cedr(void **state)
{
    (void)state;
    IrGraph *g = load_optimized(DLCC_SOURCE_ROOT "/tests/e2e/cedr/model.json");
    TgtHeteroOptions o = { .device_file = DLCC_SOURCE_ROOT "/tests/hetero/spread.json", .devices = "cpu0,gpu0,fpga0",
                           .opt_level = 2 };
    TgtHeteroPlan *p;
    UtilDiag d;
    util_diag_init(&d);
    assert_int_equal(tgt_hetero_partition(g, &o, &p, &d), 0);
    TgtHtSplit s;
    assert_int_equal(tgt_ht_split(g, p, &s, &d), 0);
    assert_int_equal(s.n_parts, 3);
    static const char *const dev[3] = { "gpu0", "cpu0", "fpga0" };
    static const IrOp first[3] = { IR_OP_Conv, IR_OP_MaxPool, IR_OP_Flatten };
    for (int k = 0; k < 3; k++) {
        const TgtHtPart *P = &s.parts[k];
        assert_string_equal(p->devices[P->device].name, dev[k]);
        assert_int_equal(P->g->nodes[0].op, first[k]);
        assert_int_equal(P->g->n_inputs, P->n_in);
        assert_int_equal(P->g->n_outputs, P->n_out);
        for (int i = 0; i < P->n_in; i++) {                   /* each input: the model's, or another's output */
            const IrTensor *t = &g->tensors[s.data[P->in[i]]], *u = &P->g->tensors[P->g->inputs[i]];
            assert_string_equal(t->name, u->name);
            assert_true(ir_shape_equal(&t->v.shape, &u->v.shape));
            int made = t->kind == IR_TK_INPUT;
            for (int q = 0; q < k; q++)
                for (int j = 0; j < s.parts[q].n_out; j++)
                    made |= s.parts[q].out[j] == P->in[i];
            assert_true(made);
        }
    }
    assert_int_equal(s.n_data, 4);                           /* input, output, the two tensors between */
    assert_string_equal(g->tensors[s.data[0]].name, "input");
    assert_string_equal(g->tensors[s.data[1]].name, "output");
    assert_int_equal(s.parts[2].n_out, 1);
    assert_int_equal(s.parts[2].out[0], 1);                  /* the Gemm writes the model's output */
    assert_int_equal(s.parts[2].g->n_nodes, 2);              /* the Flatten pulled in before it */
    tgt_ht_split_free(&s);
    tgt_hetero_plan_free(p);
    ir_graph_free(g);
}

/* A model output computed by a view (Exp, then Reshape) belongs to the
 * partition of what it views; an output that is a model input is refused. */
static void test_split_views(void **state)
{
    (void)state;
    TG t;
    tg_start(&t, "views");
    int x = tg_input(&t, "x", IR_DT_F32, 2, (int64_t[]){ 2, 8 });
    int e = tg_node(&t, IR_OP_Exp, "exp", 1, &x, 1);
    int shape = tg_const(&t, "shape", IR_DT_I64, 1, (int64_t[]){ 1 }, (double[]){ 16 });
    int r = tg_node(&t, IR_OP_Reshape, "reshape", 2, (int[]){ e, shape }, 1);
    tg_output(&t, r);
    assert_int_equal(pass_infer(t.g, &t.d), 0);
    TgtHeteroOptions o = { .devices = "cpu", .opt_level = 2 };
    TgtHeteroPlan *p;
    UtilDiag d;
    util_diag_init(&d);
    assert_int_equal(tgt_hetero_partition(t.g, &o, &p, &d), 0);
    TgtHtSplit s;
    assert_int_equal(tgt_ht_split(t.g, p, &s, &d), 0);
    assert_int_equal(s.n_parts, 1);
    assert_int_equal(s.parts[0].g->n_nodes, 2);
    assert_int_equal(s.parts[0].g->nodes[1].op, IR_OP_Reshape);
    assert_string_equal(s.parts[0].g->tensors[s.parts[0].g->outputs[0]].name, t.g->tensors[r].name);
    tgt_ht_split_free(&s);
    tg_output(&t, x);                                        /* the input itself as a second output */
    assert_int_equal(tgt_ht_split(t.g, p, &s, &d), -1);
    assert_non_null(strstr(d.msg, "model output 'x' is a model input"));
    tgt_hetero_plan_free(p);
    ir_graph_free(t.g);
}

/* tgt_hetero_compile: NAME.o first, one object per partition, the header
 * with the stream entry points and what is emulated, the plan with what
 * was compiled; the workspace: its header and the slots. */
static void test_compile_files(void **state)
{
    (void)state;
    IrGraph *g = load_optimized(DLCC_SOURCE_ROOT "/tests/e2e/cedr/model.json");
    TgtOptions o = { .name = "m", .opt_level = 2 };
    TgtHeteroCompile hc = { .plan = { .device_file = DLCC_SOURCE_ROOT "/tests/hetero/spread.json",
                                      .devices = "cpu0,gpu0,fpga0" },
                            .emulate = 1, .in_flight = 3 };
    TgtFiles f = { 0 };
    UtilDiag d;
    util_diag_init(&d);
    assert_int_equal(tgt_hetero_compile(g, &o, &hc, &f, &d), 0);
    static const char *const names[] = { "m.o", "m_p0.o", "m_p1.o", "m_p2.o", "m.h", "m.partition.json" };
    assert_int_equal(f.n, 6);
    for (int i = 0; i < 6; i++)
        assert_string_equal(f.f[i].name, names[i]);
    util_buf_put(&f.f[4].data, "", 1);
    const char *h = f.f[4].data.data;
    assert_non_null(strstr(h, "int32_t m_submit("));
    assert_non_null(strstr(h, "int32_t m_wait(void *workspace);"));
    assert_non_null(strstr(h, "int32_t m_release(void *workspace);"));
    assert_non_null(strstr(h, "#define m_IN_FLIGHT 3"));
    assert_non_null(strstr(h, "#define m_ERR_QUEUE (-4)"));
    assert_non_null(strstr(h, "m_p0 on gpu0 (gpu, EMULATED on the host)"));
    assert_non_null(strstr(h, "m_p1 on cpu0 (cpu)\n"));
    json_error_t je;
    json_t *j = json_loadb(f.f[5].data.data, f.f[5].data.len, 0, &je);
    assert_non_null(j);
    json_t *c = json_object_get(j, "compiled");
    assert_true(json_is_true(json_object_get(c, "emulated")));
    assert_null(json_object_get(json_object_get(j, "solver"), "seconds"));   /* the same bytes every time */
    json_t *parts = json_object_get(c, "partitions");
    assert_int_equal(json_array_size(parts), 3);
    assert_true(json_is_true(json_object_get(json_array_get(parts, 0), "emulated")));
    assert_true(json_is_false(json_object_get(json_array_get(parts, 1), "emulated")));
    json_int_t slot = json_integer_value(json_object_get(c, "slot_bytes"));
    assert_int_equal(json_integer_value(json_object_get(c, "workspace_bytes")), 64 + 3 * slot);
    assert_int_equal(f.workspace_bytes, 64 + 3 * slot);
    json_decref(j);
    tgt_files_free(&f);
    ir_graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_latency_two_devices),
        cmocka_unit_test(test_latency_three_devices),
        cmocka_unit_test(test_throughput_two_devices),
        cmocka_unit_test(test_throughput_three_devices),
        cmocka_unit_test(test_time_limit_fallback),
        cmocka_unit_test(test_device_file_errors),
        cmocka_unit_test(test_builtin_devices),
        cmocka_unit_test(test_mlp_plan),
        cmocka_unit_test(test_fpga_times),
        cmocka_unit_test(test_fpga_refuses),
        cmocka_unit_test(test_split_cedr),
        cmocka_unit_test(test_split_views),
        cmocka_unit_test(test_compile_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
