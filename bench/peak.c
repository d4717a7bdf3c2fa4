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
 * in ISO C mode gcc would not fuse v * b + c into one instruction.) */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>

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
    printf("peak_gflops=%.1f median_gflops=%.1f lanes=%d\n", t[4], med, LANES);
    return 0;
}
