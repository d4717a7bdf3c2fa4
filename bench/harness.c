/* bench/harness.c — times one model compiled by dlcc, through its generated header only.
 *
 * Built by bench/dlcc_bench.py against a model compiled with `--name m`:
 *
 *     cc -O2 -I DIR -I GEN bench/harness.c DIR/m.o -lm -o harness
 *
 * where GEN/m_io.h (generated from m.h) defines
 *     M_IN_BYTES   { m_INPUT_<name>_BYTES, ... }    one per input, in order
 *     M_OUT_BYTES  { m_OUTPUT_<name>_BYTES, ... }   one per output, in order
 *
 *     harness RUNS WARMUP RTOL ATOL MODEL_DIR
 *
 * reads MODEL_DIR/input_K.npy, runs m_run_ptrs WARMUP times (the first one
 * timed when RUNS > 0: `first_ms T`, with a GPU model's set-up), then RUNS timed runs
 * (CLOCK_MONOTONIC around each call), and prints one line
 *     time_ms median=M min=N runs=R
 * then checks each output against MODEL_DIR/output_K.npy (float32):
 * |got - want| <= ATOL + RTOL * |want| everywhere, and prints
 *     check ok max_abs_err=E
 * or "check MISMATCH ..." (exit status 7).  A -t gpu model (its m.h defines
 * m_ERR_DEVICE) is then released: m_release must return m_OK (exit status 8).
 * A failed run prints "harness: m_run_ptrs returned N" (exit status 5).
 *
 * RUNS 0 serves timed runs to a driver that interleaves them with a peer's
 * (bench/peers.py --dlcc): after the WARMUP runs it reads a count n per line
 * of stdin, makes one untimed call then n timed ones, and answers with one
 * line "times_ms T1 ... Tn"; at the end of stdin it checks the outputs as
 * above. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "timing.h"

#include "m.h"
#include "m_io.h"

/* Reads the payload of a little-endian .npy file (version 1, 2 or 3) of exactly `bytes` bytes. */
static void *read_npy(const char *path, size_t bytes)
{
    FILE *f = fopen(path, "rb");
    unsigned char h[12];
    if (!f || fread(h, 1, 10, f) != 10 || memcmp(h, "\x93NUMPY", 6)) {
        fprintf(stderr, "harness: %s: not a .npy file\n", path);
        exit(3);
    }
    size_t hl = h[8] | (size_t)h[9] << 8, skip = 10;
    if (h[6] >= 2) {
        if (fread(h + 10, 1, 2, f) != 2)
            exit(3);
        hl |= (size_t)h[10] << 16 | (size_t)h[11] << 24;
        skip = 12;
    }
    void *p = malloc(bytes ? bytes : 1);
    if (!p || fseek(f, (long)(skip + hl), SEEK_SET) || fread(p, 1, bytes, f) != bytes || fgetc(f) != EOF) {
        fprintf(stderr, "harness: %s: payload is not %zu bytes\n", path, bytes);
        exit(3);
    }
    fclose(f);
    return p;
}

static void run_once(const void *const *in, void *const *out, void *ws)
{
    int32_t rc = m_run_ptrs(in, out, ws);
    if (rc != m_OK) {
        fprintf(stderr, "harness: m_run_ptrs returned %d\n", (int)rc);
        exit(5);
    }
}

int main(int argc, char **argv)
{
    static const size_t in_bytes[] = M_IN_BYTES, out_bytes[] = M_OUT_BYTES;
    enum { NIN = sizeof in_bytes / sizeof in_bytes[0], NOUT = sizeof out_bytes / sizeof out_bytes[0] };
    if (argc != 6) {
        fprintf(stderr, "usage: harness RUNS WARMUP RTOL ATOL MODEL_DIR\n");
        return 2;
    }
    int runs = atoi(argv[1]), warmup = atoi(argv[2]);
    double rtol = atof(argv[3]), atol = atof(argv[4]);
    const char *dir = argv[5];
    if (runs < 0 || warmup < 0)
        return 2;
    char path[4096];
    const void *in[NIN];
    void *out[NOUT];
    for (int k = 0; k < NIN; k++) {
        snprintf(path, sizeof path, "%s/input_%d.npy", dir, k);
        in[k] = read_npy(path, in_bytes[k]);
    }
    for (int k = 0; k < NOUT; k++)
        out[k] = malloc(out_bytes[k] ? out_bytes[k] : 1);
    void *ws = NULL;
    if (m_WORKSPACE_SIZE > 0 && posix_memalign(&ws, m_WORKSPACE_ALIGN, m_WORKSPACE_SIZE))
        return 4;

    for (int i = 0; i < warmup; i++) {
        double t0 = now_ms();
        run_once(in, out, ws);
        if (i == 0 && runs > 0)
            printf("first_ms %.6f\n", now_ms() - t0);
    }
    double *t = NULL;
    if (runs > 0) {
        t = malloc(sizeof *t * (size_t)runs);
        for (int i = 0; i < runs; i++) {
            double t0 = now_ms();
            run_once(in, out, ws);
            t[i] = now_ms() - t0;
        }
        double med = sort_median(t, runs);
        printf("time_ms median=%.6f min=%.6f runs=%d\n", med, t[0], runs);
    }
    char line[64];
    while (runs == 0 && fgets(line, sizeof line, stdin)) {   /* serving: n timed runs per request */
        int n = atoi(line);
        double *tn = n >= 1 && n <= 100000 ? malloc(sizeof *tn * (size_t)n) : NULL;
        if (!tn)
            return 2;
        run_once(in, out, ws);
        for (int i = 0; i < n; i++) {
            double t0 = now_ms();
            run_once(in, out, ws);
            tn[i] = now_ms() - t0;
        }
        printf("times_ms");
        for (int i = 0; i < n; i++)
            printf(" %.6f", tn[i]);
        printf("\n");
        free(tn);
        fflush(stdout);
    }

    int bad = 0;
    double max_err = 0;
    for (int k = 0; k < NOUT; k++) {
        snprintf(path, sizeof path, "%s/output_%d.npy", dir, k);
        const float *want = read_npy(path, out_bytes[k]);
        const float *got = out[k];
        size_t n = out_bytes[k] / sizeof(float), nbad = 0, first = 0;
        for (size_t i = 0; i < n; i++) {
            double e = fabs((double)got[i] - want[i]);
            if (!(e <= atol + rtol * fabs((double)want[i]))) {
                if (!nbad++)
                    first = i;
            }
            if (e > max_err || e != e)
                max_err = e;
        }
        if (nbad) {
            printf("check MISMATCH output %d: %zu of %zu elements beyond rtol %g atol %g; first at %zu: got %.9g, "
                   "want %.9g\n", k, nbad, n, rtol, atol, first, (double)got[first], (double)want[first]);
            bad = 1;
        }
        free((void *)want);
    }
    if (!bad)
        printf("check ok max_abs_err=%.3g\n", max_err);
#ifdef m_ERR_DEVICE   /* -t gpu: frees the device state */
    int32_t released = m_release(ws);
    if (released != m_OK) {
        printf("release returned %d\n", (int)released);
        return 8;
    }
#endif
    for (int k = 0; k < NIN; k++)
        free((void *)in[k]);
    for (int k = 0; k < NOUT; k++)
        free(out[k]);
    free(ws);
    free(t);
    return bad ? 7 : 0;
}
