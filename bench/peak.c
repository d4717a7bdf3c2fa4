/* bench/peak.c — one core's float32 multiply-add peak, the ceiling the GFLOPS figures are read against.
 *
 *     cc -std=c11 -O2 -march=native -ffp-contract=fast bench/peak.c -o peak && peak [SECONDS]
 *
 * Twelve independent chains of vector multiply-adds (v = v * b + c, the widest vector the compiler
 * targets: 16 lanes with AVX-512, 8 with AVX2) and nothing else, so the loop is bound by the FMA units'
 * throughput, not by their latency (4 cycles at 2 a cycle needs 8 chains in flight) nor by loads.
 * Five repetitions of about SECONDS/5 each (default 1 s in all); the line printed is
 *     peak_gflops=BEST median_gflops=MEDIAN lanes=L
 * counting 2 flops per lane and multiply-add, as every GFLOPS figure of the benchmark does.  The
 * values stay finite (they converge to 1), so no denormal or infinity slows the units.  (-ffp-contract=fast:
 * in ISO C mode gcc would not fuse v * b + c into one instruction.)
 *
 * Where the compiler targets them, the same for the 8-bit and bfloat16 dot products the reduced-precision
 * kernels use, as operations (2 per multiply-add) a second: int8_gops= (AVX512-VNNI VPDPBUSD, 64
 * multiply-adds an instruction) and bf16_gflops= (AVX512-BF16 VDPBF16PS, 32), best of five. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#if defined(__AVX512VNNI__) || defined(__AVX512BF16__)
#include <immintrin.h>
#endif

#include "timing.h"

#if defined(__AVX512F__)
#define LANES 16
#elif defined(__AVX__)
#define LANES 8
#else
#define LANES 4
#endif
typedef float vf __attribute__((vector_size(LANES * 4)));

#define CHAINS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)

/* GFLOPS of `iters` steps of the twelve chains. */
static double run(long iters)
{
    vf b = { 0 }, c = { 0 };
    b += 0.5f;
    c += 0.5f;
#define DECL(i) vf a##i = c + (float)(i);
    CHAINS(DECL)
    double t0 = now_ms();
    for (long it = 0; it < iters; it++) {
        /* the empty asm keeps each chain a chain: the compiler may neither fold, reorder nor drop the
         * steps (so no result needs to be used afterwards) */
#define STEP(i) a##i = a##i * b + c; __asm__ volatile("" : "+x"(a##i));
        CHAINS(STEP)
    }
    double ms = now_ms() - t0;
    return (double)iters * 12 * LANES * 2 / (ms * 1e6);
}

#if defined(__AVX512VNNI__)
/* Operations a second of `iters` steps of twelve VPDPBUSD chains. */
static double run_int8(long iters)
{
    __m512i b = _mm512_set1_epi32(0x01010101), c = _mm512_set1_epi32(0x02020202);
#define DECLI(i) __m512i a##i = _mm512_set1_epi32(i);
    CHAINS(DECLI)
    double t0 = now_ms();
    for (long it = 0; it < iters; it++) {
#define STEPI(i) a##i = _mm512_dpbusd_epi32(a##i, b, c); __asm__ volatile("" : "+v"(a##i));
        CHAINS(STEPI)
    }
    double ms = now_ms() - t0;
    return (double)iters * 12 * 64 * 2 / (ms * 1e6);
}
#endif

#if defined(__AVX512BF16__)
/* Operations a second of `iters` steps of twelve VDPBF16PS chains. */
static double run_bf16(long iters)
{
    __m512bh b = (__m512bh)_mm512_set1_epi32(0x3f003f00), c = (__m512bh)_mm512_set1_epi32(0x3e803e80);
#define DECLB(i) __m512 a##i = _mm512_set1_ps((float)(i));
    CHAINS(DECLB)
    double t0 = now_ms();
    for (long it = 0; it < iters; it++) {
#define STEPB(i) a##i = _mm512_dpbf16_ps(a##i, b, c); __asm__ volatile("" : "+v"(a##i));
        CHAINS(STEPB)
    }
    double ms = now_ms() - t0;
    return (double)iters * 12 * 32 * 2 / (ms * 1e6);
}
#endif

/* The best of five repetitions of f over iters steps. */
static double best_of(double (*f)(long), long iters)
{
    double best = 0;
    for (int r = 0; r < 5; r++) {
        double g = f(iters);
        best = g > best ? g : best;
    }
    return best;
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 1.0;
    if (!(seconds > 0) || seconds > 60) {
        fprintf(stderr, "usage: peak [SECONDS]\n");
        return 2;
    }
    long iters = 1000000;
    double g = run(iters);                   /* calibrate: ~SECONDS/5 a repetition */
    iters = (long)(iters * (seconds / 5) / ((double)iters * 12 * LANES * 2 / (g * 1e9)));
    if (iters < 1000)
        iters = 1000;
    double t[5];
    for (int r = 0; r < 5; r++)
        t[r] = run(iters);
    double med = sort_median(t, 5);
    printf("peak_gflops=%.1f median_gflops=%.1f lanes=%d", t[4], med, LANES);
#if defined(__AVX512VNNI__)
    printf(" int8_gops=%.1f", best_of(run_int8, iters));
#endif
#if defined(__AVX512BF16__)
    printf(" bf16_gflops=%.1f", best_of(run_bf16, iters));
#endif
    (void)best_of;
    printf("\n");
    return 0;
}
