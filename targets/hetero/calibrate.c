/* targets/hetero/calibrate.c — `dlcc calibrate` (docs/targets/hetero.md
 * "Calibration"): this machine's CPU as a device entry.  On every thread at
 * once: the multiply-add rate of independent FMA chains on 8-wide float
 * vectors (AVX2 + FMA where the CPU has them, else the compiler's vectors),
 * the memory bandwidth of memcpy over buffers far larger than the caches
 * (read + written bytes), and the cost of calling a kernel (a call through a
 * function pointer).  Each figure is the best of three runs of about 0.1 s
 * of CPU time per thread (thread CPU time, so that other processes sharing
 * the cores do not lower the rates); the whole takes about a second on an
 * idle machine. */
#include "targets/hetero/hetero_impl.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define COPY_BYTES ((size_t)64 << 20)   /* per thread: 64 MiB, twice the L3 of a 32 MiB part */
#define RUN_S 0.1
#define RUNS 3

/* The calling thread's CPU time: the rates while it runs, not counting
 * the time other processes of a shared machine take the core. */
static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* 10 independent chains of acc = acc * m + a: enough in flight for two FMA
 * pipes of latency 4 or 5.  Returns a value the caller keeps (so nothing is
 * optimized away); *flops += 2 per lane per chain per iteration. */
#define CHAINS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9)

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
__attribute__((target("avx2,fma"))) static float fma_avx2(long iters)
{
    __m256 m = _mm256_set1_ps(0.9999999f), a = _mm256_set1_ps(1e-7f);
#define DECL(i) __m256 c##i = _mm256_set1_ps((float)(i + 1));
    CHAINS(DECL)
#undef DECL
    for (long n = 0; n < iters; n++) {
#define STEP(i) c##i = _mm256_fmadd_ps(c##i, m, a);
        CHAINS(STEP)
#undef STEP
    }
    __m256 s = _mm256_setzero_ps();
#define SUM(i) s = _mm256_add_ps(s, c##i);
    CHAINS(SUM)
#undef SUM
    float out[8];
    _mm256_storeu_ps(out, s);
    return out[0] + out[7];
}

static int have_avx2_fma(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}
#else
static float fma_avx2(long iters)
{
    (void)iters;
    return 0;
}
static int have_avx2_fma(void)
{
    return 0;
}
#endif

typedef float V8 __attribute__((vector_size(32)));

/* The same chains as plain vector arithmetic (a multiply and an add). */
static float fma_generic(long iters)
{
    V8 m = { 0 }, a = { 0 };
    m += 0.9999999f;
    a += 1e-7f;
#define DECL(i) V8 c##i = { 0 }; c##i += (float)(i + 1);
    CHAINS(DECL)
#undef DECL
    for (long n = 0; n < iters; n++) {
#define STEP(i) c##i = c##i * m + a;
        CHAINS(STEP)
#undef STEP
    }
    V8 s = { 0 };
#define SUM(i) s += c##i;
    CHAINS(SUM)
#undef SUM
    return s[0] + s[7];
}

/* The threads' start of each run: a barrier that the main thread can open
 * for good when it could not start them all. */
typedef struct Gate {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int n, waiting, round, abort;
} Gate;

static int gate_wait(Gate *g)
{
    pthread_mutex_lock(&g->mu);
    int r = g->round;
    if (!g->abort && ++g->waiting == g->n) {
        g->waiting = 0;
        g->round++;
        pthread_cond_broadcast(&g->cv);
    }
    while (r == g->round && !g->abort)
        pthread_cond_wait(&g->cv, &g->mu);
    int ab = g->abort;
    pthread_mutex_unlock(&g->mu);
    return ab ? -1 : 0;
}

static void gate_abort(Gate *g)
{
    pthread_mutex_lock(&g->mu);
    g->abort = 1;
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->mu);
}

typedef struct Shared {
    Gate go;
    int avx2;
    long iters;                 /* FMA iterations per run */
    int copies;                 /* memcpy's per run */
} Shared;

typedef struct Worker {
    Shared *sh;
    char *src, *dst;
    double fma_s[RUNS], copy_s[RUNS];
    volatile float sink;
} Worker;

static void *work(void *arg)
{
    Worker *w = arg;
    Shared *sh = w->sh;
    for (int r = 0; r < RUNS; r++) {
        if (gate_wait(&sh->go))
            return NULL;
        double t0 = now_s();
        w->sink = sh->avx2 ? fma_avx2(sh->iters) : fma_generic(sh->iters);
        w->fma_s[r] = now_s() - t0;
    }
    for (int r = 0; r < RUNS; r++) {
        if (gate_wait(&sh->go))
            return NULL;
        double t0 = now_s();
        for (int c = 0; c < sh->copies; c++) {
            memcpy(c & 1 ? w->src : w->dst, c & 1 ? w->dst : w->src, COPY_BYTES);
            w->sink += (float)(c & 1 ? w->src : w->dst)[c % COPY_BYTES];
        }
        w->copy_s[r] = now_s() - t0;
    }
    return NULL;
}

/* A kernel call: what running one costs besides its work. */
static void __attribute__((noinline)) empty_kernel(void *p)
{
    __asm__ volatile("" : : "r"(p) : "memory");
}

static double call_us(void)
{
    void (*volatile fn)(void *) = empty_kernel;
    double best = 1e9;
    for (int r = 0; r < RUNS; r++) {
        double t0 = now_s();
        for (int i = 0; i < 1000000; i++)
            fn(&best);
        double us = (now_s() - t0);                         /* 1e6 calls: seconds = us per call */
        best = us < best ? us : best;
    }
    return best;
}

int tgt_hetero_calibrate(int threads, const char *name, UtilBuf *out, UtilDiag *d)
{
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    int nt = threads > 0 ? threads : online > 0 ? (int)online : 1;
    if (nt > 256)
        return util_error(d, util_loc_file(NULL), "calibrate: at most 256 threads, not %d", nt);
    Shared sh = { .go = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER, .n = nt },
                  .avx2 = have_avx2_fma() };
    Worker *w = calloc((size_t)nt, sizeof *w);
    pthread_t *tid = calloc((size_t)nt, sizeof *tid);
    int rc = -1, started = 0;
    if (!w || !tid)
        goto oom;
    for (int i = 0; i < nt; i++) {
        w[i].sh = &sh;
        w[i].src = malloc(COPY_BYTES);
        w[i].dst = malloc(COPY_BYTES);
        if (!w[i].src || !w[i].dst)
            goto oom;
        memset(w[i].src, 1, COPY_BYTES);                    /* the pages exist before the clock runs */
        memset(w[i].dst, 2, COPY_BYTES);
    }
    /* sizes for about RUN_S per run, from a short trial on this thread */
    double t0 = now_s();
    volatile float sink = sh.avx2 ? fma_avx2(1 << 16) : fma_generic(1 << 16);
    (void)sink;
    double trial = now_s() - t0;
    sh.iters = (long)((double)(1 << 16) * RUN_S / (trial > 1e-6 ? trial : 1e-6));
    t0 = now_s();
    memcpy(w[0].dst, w[0].src, COPY_BYTES);
    trial = now_s() - t0;
    sh.copies = (int)(RUN_S / (trial > 1e-6 ? trial : 1e-6));
    sh.copies = sh.copies < 2 ? 2 : sh.copies > 1000 ? 1000 : sh.copies;
    for (; started < nt; started++)
        if (pthread_create(&tid[started], NULL, work, &w[started]))
            break;
    if (started < nt) {
        util_error(d, util_loc_file(NULL), "calibrate: cannot start %d threads", nt);
        gate_abort(&sh.go);                                  /* the started ones return */
    }
    for (int i = 0; i < started; i++)
        pthread_join(tid[i], NULL);
    if (started < nt)
        goto done;
    double fma = 0, bw = 0;
    for (int r = 0; r < RUNS; r++) {                         /* the slowest thread of a run, the best run */
        double tf = 0, tc = 0;
        for (int i = 0; i < nt; i++) {
            tf = w[i].fma_s[r] > tf ? w[i].fma_s[r] : tf;
            tc = w[i].copy_s[r] > tc ? w[i].copy_s[r] : tc;
        }
        double f = (double)nt * (double)sh.iters * 10 * 8 * 2 / tf;
        double b = (double)nt * (double)sh.copies * 2 * (double)COPY_BYTES / tc;
        fma = f > fma ? f : fma;
        bw = b > bw ? b : bw;
    }
    char note[256];
    snprintf(note, sizeof note, "dlcc calibrate on %d thread%s: %s chains on 8-wide float vectors; memcpy of "
             "64 MiB per thread, read + written bytes; thread CPU time; best of %d runs", nt, nt > 1 ? "s" : "",
             sh.avx2 ? "AVX2 FMA" : "multiply-add", RUNS);
    TgtDevice dev = { .name = name && *name ? name : "host-cpu", .kind = TGT_DEV_CPU, .peak_gflops = fma / 1e9,
                      .bandwidth_gbs = bw / 1e9, .launch_us = call_us(), .cores = nt, .note = note };
    tgt_hetero_write_devices(&dev, 1, NULL, 0, out);
    rc = out->oom ? util_error(d, util_loc_file(NULL), "out of memory") : 0;
    goto done;
oom:
    util_error(d, util_loc_file(NULL), "calibrate: out of memory (%d threads x 128 MiB)", nt);
done:
    for (int i = 0; w && i < nt; i++) {
        free(w[i].src);
        free(w[i].dst);
    }
    free(w);
    free(tid);
    return rc;
}
