/* bench/gemm.c — dlcc's MatMul against OpenBLAS cblas_sgemm for C[n,n] = A[n,n] · B[n,n].
 *
 * The dlcc side is a one-node ONNX model (MatMul of two float32 graph inputs A and B, written by
 * bench/models.py --gemm) compiled with `dlcc model.onnx -O2 --name g`:
 *
 *     cc -O2 -I DIR -DGEMM_N=n bench/gemm.c DIR/g.o -lopenblas -lm -o gemm
 *     gemm RUNS WARMUP [dlcc|blas|both] [BUDGET_S] [ROUNDS]
 *
 * Both sides get the same seeded random inputs in [-1, 1).  Each is timed with CLOCK_MONOTONIC
 * around RUNS calls after WARMUP calls; with `both` (the default) the two sides alternate in ROUNDS
 * rounds (default 5) of about RUNS/ROUNDS calls each, as the models' peers do (bench/peers.py), so
 * that a slow stretch of a shared machine slows both alike.  A side's timed calls stop early (after
 * at least one) once BUDGET_S seconds of them have passed: dlcc's naive MatMul needs minutes at
 * 2048³, and the line says how many runs were made.  The line per side is
 *     dlcc|blas median_ms=M min_ms=N gflops=G runs=R check=ok|MISMATCH max_rel_err=E
 * where GFLOPS = 2·n³ / median, and the check compares 256 sampled entries of C with a double
 * precision dot product: |c - ref| <= 1e-4 · sqrt(n) · (1 + |ref|).  The blas line also names the
 * OpenBLAS kernel (openblas_get_corename) and its thread count.  Exit status 7 on a mismatch. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "timing.h"

#include <cblas.h>

#include "g.h"

#ifndef GEMM_N
#error "define GEMM_N"
#endif
#define N GEMM_N

/* OpenBLAS extensions (declared in its cblas.h too; repeated here so that the file also reads
 * as documentation of what it calls). */
char *openblas_get_corename(void);
int openblas_get_num_threads(void);

static uint64_t next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void gemm_dlcc(const float *a, const float *b, float *c, void *ws)
{
    const void *in[2] = { a, b };
    void *out[1] = { c };
    int32_t rc = g_run_ptrs(in, out, ws);
    if (rc != g_OK) {
        fprintf(stderr, "gemm: g_run_ptrs returned %d\n", (int)rc);
        exit(5);
    }
}

static void gemm_blas(const float *a, const float *b, float *c, void *ws)
{
    (void)ws;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1.0f, a, N, b, N, 0.0f, c, N);
}

/* Calls fn until t[0..upto) is filled or, past the first call, budget_ms of timed calls (*total)
 * are spent; *done counts the calls timed so far. */
static void time_calls(void (*fn)(const float *, const float *, float *, void *), const float *a, const float *b,
                       float *c, void *ws, double *t, int *done, int upto, double *total, double budget_ms)
{
    while (*done < upto && (*done == 0 || *total < budget_ms)) {
        double t0 = now_ms();
        fn(a, b, c, ws);
        t[*done] = now_ms() - t0;
        *total += t[(*done)++];
    }
}

/* Prints the line of one side (times t[0..runs), result c); returns 1 when the check fails. */
static int report(const char *label, double *t, int runs, const float *a, const float *b, const float *c)
{
    double med = sort_median(t, runs);
    uint64_t s = 12345;
    double worst = 0;
    int bad = 0;
    for (int k = 0; k < 256; k++) {
        size_t i = next(&s) % N, j = next(&s) % N;
        double ref = 0;
        for (size_t p = 0; p < N; p++)
            ref += (double)a[i * N + p] * b[p * N + j];
        double e = fabs(c[i * N + j] - ref) / (1 + fabs(ref));
        if (!(e <= 1e-4 * sqrt((double)N)))
            bad = 1;
        if (e > worst || e != e)
            worst = e;
    }
    printf("%s median_ms=%.6f min_ms=%.6f gflops=%.3f runs=%d check=%s max_rel_err=%.3g", label, med, t[0],
           2.0 * N * N * (double)N / (med * 1e6), runs, bad ? "MISMATCH" : "ok", worst);
    if (!strcmp(label, "blas"))
        printf(" kernel=%s threads=%d", openblas_get_corename(), openblas_get_num_threads());
    printf("\n");
    return bad;
}

int main(int argc, char **argv)
{
    if (argc < 3 || argc > 6) {
        fprintf(stderr, "usage: gemm RUNS WARMUP [dlcc|blas|both] [BUDGET_S] [ROUNDS]\n");
        return 2;
    }
    int runs = atoi(argv[1]), warmup = atoi(argv[2]);
    const char *which = argc > 3 ? argv[3] : "both";
    double budget_ms = argc > 4 ? atof(argv[4]) * 1e3 : 1e300;
    int rounds = argc > 5 ? atoi(argv[5]) : 5;
    if (rounds > runs)
        rounds = runs;
    if (runs < 1 || warmup < 0 || rounds < 1 || (strcmp(which, "dlcc") && strcmp(which, "blas") && strcmp(which, "both")) ||
        g_INPUT_A_SIZE != (long)N * N || g_OUTPUT_C_SIZE != (long)N * N) {
        fprintf(stderr, "gemm: bad arguments, or g.h is not an %d×%d MatMul\n", N, N);
        return 2;
    }
    float *a = malloc(sizeof(float) * N * N), *b = malloc(sizeof(float) * N * N), *c[2] = { NULL, NULL };
    void *ws = NULL;
    if (posix_memalign((void **)&c[0], 64, sizeof(float) * N * N) ||
        posix_memalign((void **)&c[1], 64, sizeof(float) * N * N) ||
        (g_WORKSPACE_SIZE > 0 && posix_memalign(&ws, g_WORKSPACE_ALIGN, g_WORKSPACE_SIZE)) || !a || !b)
        return 4;
    uint64_t s = 88172645463325252ull;
    for (size_t i = 0; i < (size_t)N * N; i++) {
        a[i] = (float)((double)(next(&s) >> 11) / 4503599627370496.0 - 1.0);
        b[i] = (float)((double)(next(&s) >> 11) / 4503599627370496.0 - 1.0);
    }
    /* the sides that run, each with its own result buffer; with both, they alternate in `rounds`
     * rounds of about runs/rounds calls (so that a slow stretch of the machine hits both alike) */
    void (*fn[2])(const float *, const float *, float *, void *) = { gemm_dlcc, gemm_blas };
    const char *label[2] = { "dlcc", "blas" };
    int on[2] = { strcmp(which, "blas") != 0, strcmp(which, "dlcc") != 0 }, done[2] = { 0, 0 };
    double *t[2] = { malloc(sizeof(double) * (size_t)runs), malloc(sizeof(double) * (size_t)runs) };
    double total[2] = { 0, 0 };
    if (!t[0] || !t[1])
        return 4;
    for (int w = 0; w < 2; w++) {
        if (!on[w])
            continue;
        memset(c[w], 0, sizeof(float) * N * N);
        for (int i = 0; i < warmup; i++)
            fn[w](a, b, c[w], ws);
    }
    if (!on[0] || !on[1])
        rounds = 1;
    for (int r = 1; r <= rounds; r++)
        for (int w = 0; w < 2; w++)
            if (on[w])
                time_calls(fn[w], a, b, c[w], ws, t[w], &done[w], (int)((int64_t)runs * r / rounds), &total[w],
                           budget_ms);
    int bad = 0;
    for (int w = 0; w < 2; w++)
        if (on[w])
            bad |= report(label[w], t[w], done[w], a, b, c[w]);
    free(t[0]);
    free(t[1]);
    free(c[1]);
    free(a);
    free(b);
    free(c[0]);
    free(ws);
    return bad ? 7 : 0;
}
