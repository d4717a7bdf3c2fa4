/* bench/gemm.c — dlcc's MatMul against OpenBLAS cblas_sgemm for C[n,n] = A[n,n] · B[n,n].
 *
 * The dlcc side is a one-node ONNX model (MatMul of two float32 graph inputs A and B, written by
 * bench/models.py --gemm) compiled with `dlcc model.onnx -O2 --name g`:
 *
 *     cc -O2 -I DIR -DGEMM_N=n bench/gemm.c DIR/g.o -lopenblas -lm -o gemm
 *     gemm RUNS WARMUP [dlcc|blas|both] [BUDGET_S]
 *
 * Both sides get the same seeded random inputs in [-1, 1).  Each is timed with CLOCK_MONOTONIC
 * around RUNS calls after WARMUP calls, except that the timed loop stops early (after at least one
 * call) once BUDGET_S seconds of timed calls have passed: dlcc's naive MatMul needs minutes at
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

/* Times fn and checks its result; returns 1 when the check fails. */
static int bench(const char *label, void (*fn)(const float *, const float *, float *, void *), const float *a,
                 const float *b, float *c, void *ws, int runs, int warmup, double budget_ms)
{
    memset(c, 0, sizeof(float) * N * N);
    for (int i = 0; i < warmup; i++)
        fn(a, b, c, ws);
    double *t = malloc(sizeof *t * (size_t)runs);
    double total = 0;
    int done = 0;
    while (done < runs && (done == 0 || total < budget_ms)) {
        double t0 = now_ms();
        fn(a, b, c, ws);
        t[done] = now_ms() - t0;
        total += t[done++];
    }
    runs = done;
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
    free(t);
    return bad;
}

int main(int argc, char **argv)
{
    if (argc < 3 || argc > 5) {
        fprintf(stderr, "usage: gemm RUNS WARMUP [dlcc|blas|both] [BUDGET_S]\n");
        return 2;
    }
    int runs = atoi(argv[1]), warmup = atoi(argv[2]);
    const char *which = argc > 3 ? argv[3] : "both";
    double budget_ms = argc > 4 ? atof(argv[4]) * 1e3 : 1e300;
    if (runs < 1 || warmup < 0 || g_INPUT_A_SIZE != (long)N * N || g_OUTPUT_C_SIZE != (long)N * N) {
        fprintf(stderr, "gemm: bad arguments, or g.h is not an %d×%d MatMul\n", N, N);
        return 2;
    }
    float *a = malloc(sizeof(float) * N * N), *b = malloc(sizeof(float) * N * N), *c = NULL;
    void *ws = NULL;
    if (posix_memalign((void **)&c, 64, sizeof(float) * N * N) ||
        (g_WORKSPACE_SIZE > 0 && posix_memalign(&ws, g_WORKSPACE_ALIGN, g_WORKSPACE_SIZE)) || !a || !b)
        return 4;
    uint64_t s = 88172645463325252ull;
    for (size_t i = 0; i < (size_t)N * N; i++) {
        a[i] = (float)((double)(next(&s) >> 11) / 4503599627370496.0 - 1.0);
        b[i] = (float)((double)(next(&s) >> 11) / 4503599627370496.0 - 1.0);
    }
    int bad = 0;
    if (strcmp(which, "blas")) {
        bad |= bench("dlcc", gemm_dlcc, a, b, c, ws, runs, warmup, budget_ms);
        printf("\n");
    }
    if (strcmp(which, "dlcc")) {
        bad |= bench("blas", gemm_blas, a, b, c, ws, runs, warmup, budget_ms);
        printf(" kernel=%s threads=%d\n", openblas_get_corename(), openblas_get_num_threads());
    }
    free(a);
    free(b);
    free(c);
    free(ws);
    return bad ? 7 : 0;
}
