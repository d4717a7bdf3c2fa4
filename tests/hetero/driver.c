/* tests/hetero/driver.c — runs a `dlcc -t hetero` model m (m.h) through its
 * generated interface only; built by run_hetero.py, which writes sizes.h
 * (the byte size of every input and output, from m.h's macros).
 *
 *   driver run    IN... OUT...        m_run_ptrs once; the outputs as raw bytes
 *   driver stream N IN... OUT...      N inputs (input k scaled by 1 + k/N) through m_submit /
 *                                     m_wait, compared byte for byte with m_run_ptrs of each,
 *                                     one at a time; the queue's return codes; input 0's outputs
 *   driver bench  N IN... OUT...      the same N inputs one at a time, then pipelined: the
 *                                     wall time of each (best of 3), and input 0's outputs
 *   driver mpi    IN... OUT...        (built with -DDRIVER_MPI) every rank calls m_run_ptrs, rank 0
 *                                     with the buffers, the others with NULL; rank 0 writes
 *
 * m_release must return m_OK at the end.  Exit status: 0 success, else the
 * step that failed (and a message on stderr). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "m.h"
#include "sizes.h"   /* static const size_t in_bytes[m_NUM_INPUTS + 1], out_bytes[m_NUM_OUTPUTS + 1];
                        static const int in_f32[m_NUM_INPUTS + 1]: 1 for float32 inputs */
#ifdef DRIVER_MPI
#include <mpi.h>
#endif

#define FAIL(code, ...) do { fprintf(stderr, __VA_ARGS__); fprintf(stderr, "\n"); exit(code); } while (0)

/* The data of a little-endian .npy file (version 1, 2 or 3) of exactly `bytes` bytes of payload. */
static void *read_npy(const char *path, size_t bytes)
{
    FILE *f = fopen(path, "rb");
    unsigned char h[12];
    if (!f || fread(h, 1, 10, f) != 10 || memcmp(h, "\x93NUMPY", 6))
        FAIL(3, "bad npy %s", path);
    size_t hl = h[8] | (size_t)h[9] << 8, skip = 10;
    if (h[6] >= 2) {
        if (fread(h + 10, 1, 2, f) != 2)
            FAIL(3, "bad npy %s", path);
        hl |= (size_t)h[10] << 16 | (size_t)h[11] << 24;
        skip = 12;
    }
    void *p = malloc(bytes ? bytes : 1);
    if (!p || fseek(f, (long)(skip + hl), SEEK_SET) || fread(p, 1, bytes, f) != bytes)
        FAIL(3, "short npy %s", path);
    fclose(f);
    return p;
}

static void write_raw(const char *path, const void *p, size_t bytes)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(p, 1, bytes, f) != bytes || fclose(f))
        FAIL(6, "cannot write %s", path);
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* n inputs and outputs: input s is input 0 with its float32 values scaled by 1 + s/n. */
typedef struct Set {
    int n;
    void **in, **out;   /* [s * m_NUM_INPUTS + i], [s * m_NUM_OUTPUTS + o] */
} Set;

static Set make_set(int n, void *const *in0)
{
    Set st = { n, calloc((size_t)n * m_NUM_INPUTS + 1, sizeof(void *)), calloc((size_t)n * m_NUM_OUTPUTS + 1, sizeof(void *)) };
    for (int s = 0; s < n; s++) {
        for (int i = 0; i < m_NUM_INPUTS; i++) {
            void *p = malloc(in_bytes[i] ? in_bytes[i] : 1);
            memcpy(p, in0[i], in_bytes[i]);
            for (size_t e = 0; in_f32[i] && e < in_bytes[i] / 4; e++)
                ((float *)p)[e] *= 1.0f + (float)s / (float)n;
            st.in[s * m_NUM_INPUTS + i] = p;
        }
        for (int o = 0; o < m_NUM_OUTPUTS; o++)
            st.out[s * m_NUM_OUTPUTS + o] = calloc(out_bytes[o] ? out_bytes[o] : 1, 1);
    }
    return st;
}

static void free_set(Set *st)
{
    for (int k = 0; k < st->n * m_NUM_INPUTS; k++)
        free(st->in[k]);
    for (int k = 0; k < st->n * m_NUM_OUTPUTS; k++)
        free(st->out[k]);
    free(st->in);
    free(st->out);
}

static void one_at_a_time(Set *st, void *ws)
{
    for (int s = 0; s < st->n; s++) {
        int32_t rc = m_run_ptrs((const void *const *)&st->in[s * m_NUM_INPUTS], &st->out[s * m_NUM_OUTPUTS], ws);
        if (rc != m_OK)
            FAIL(5, "m_run_ptrs of input %d returned %d", s, (int)rc);
    }
}

/* Every input through m_submit, waiting for the oldest when the queue is full. */
static void pipelined(Set *st, void *ws)
{
    int waited = 0;
    for (int s = 0; s < st->n; s++) {
        int32_t rc;
        while ((rc = m_submit((const void *const *)&st->in[s * m_NUM_INPUTS], &st->out[s * m_NUM_OUTPUTS], ws)) ==
               m_ERR_QUEUE) {
            int32_t w = m_wait(ws);
            if (w != m_OK)
                FAIL(7, "m_wait for input %d returned %d", waited, (int)w);
            waited++;
        }
        if (rc != m_OK)
            FAIL(7, "m_submit of input %d returned %d", s, (int)rc);
    }
    for (; waited < st->n; waited++) {
        int32_t w = m_wait(ws);
        if (w != m_OK)
            FAIL(7, "m_wait for input %d returned %d", waited, (int)w);
    }
}

int main(int argc, char **argv)
{
    int rank = 0;
#ifdef DRIVER_MPI
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
#endif
    if (argc < 2)
        FAIL(2, "usage: driver run|stream N|bench N|mpi IN... OUT...");
    const char *mode = argv[1];
    int n = 1, a = 2;
    if (!strcmp(mode, "stream") || !strcmp(mode, "bench"))
        n = atoi(argv[a++]);
    if (argc != a + m_NUM_INPUTS + m_NUM_OUTPUTS || n < 1)
        FAIL(2, "driver: wrong arguments");
    void *in[m_NUM_INPUTS + 1], *out[m_NUM_OUTPUTS + 1];
    for (int i = 0; i < m_NUM_INPUTS; i++)
        in[i] = read_npy(argv[a + i], in_bytes[i]);
    for (int o = 0; o < m_NUM_OUTPUTS; o++)
        out[o] = calloc(out_bytes[o] ? out_bytes[o] : 1, 1);
    void *ws = NULL;
    if (posix_memalign(&ws, m_WORKSPACE_ALIGN, m_WORKSPACE_SIZE))
        FAIL(4, "no workspace");
    memset(ws, 0, m_WORKSPACE_SIZE);

    if (!strcmp(mode, "run") || !strcmp(mode, "mpi")) {
        int32_t rc = rank == 0 ? m_run_ptrs((const void *const *)in, out, ws) : m_run_ptrs(NULL, NULL, ws);
        if (rc != m_OK)
            FAIL(5, "m_run returned %d (rank %d)", (int)rc, rank);
    } else if (!strcmp(mode, "stream")) {
        if (m_wait(ws) != m_ERR_QUEUE)
            FAIL(7, "m_wait with nothing in flight did not return m_ERR_QUEUE");
        Set ref = make_set(n, in), got = make_set(n, in);
        one_at_a_time(&ref, ws);
        pipelined(&got, ws);
        for (int s = 0; s < n; s++)
            for (int o = 0; o < m_NUM_OUTPUTS; o++)
                if (memcmp(ref.out[s * m_NUM_OUTPUTS + o], got.out[s * m_NUM_OUTPUTS + o], out_bytes[o]))
                    FAIL(8, "input %d, output %d: m_submit/m_wait differs from m_run_ptrs", s, o);
        /* the queue: m_IN_FLIGHT inputs in flight, then one more is refused, and so is m_run */
        for (int s = 0; s < m_IN_FLIGHT; s++)
            if (m_submit((const void *const *)&got.in[(s % n) * m_NUM_INPUTS], &got.out[(s % n) * m_NUM_OUTPUTS], ws) != m_OK)
                FAIL(7, "m_submit %d of %d returned an error", s, m_IN_FLIGHT);
        if (m_submit((const void *const *)in, out, ws) != m_ERR_QUEUE)
            FAIL(7, "m_submit with m_IN_FLIGHT inputs in flight did not return m_ERR_QUEUE");
        if (m_run_ptrs((const void *const *)in, out, ws) != m_ERR_QUEUE)
            FAIL(7, "m_run_ptrs with inputs in flight did not return m_ERR_QUEUE");
        for (int s = 0; s < m_IN_FLIGHT; s++)
            if (m_wait(ws) != m_OK)
                FAIL(7, "m_wait %d of %d returned an error", s, m_IN_FLIGHT);
        if (m_wait(ws) != m_ERR_QUEUE)
            FAIL(7, "m_wait after the last input did not return m_ERR_QUEUE");
        printf("stream: %d inputs through m_submit/m_wait (m_IN_FLIGHT %d) equal m_run_ptrs one at a time\n", n,
               m_IN_FLIGHT);
        for (int o = 0; o < m_NUM_OUTPUTS; o++)
            memcpy(out[o], got.out[o], out_bytes[o]);         /* input 0, scale 1: the model's input */
        free_set(&ref);
        free_set(&got);
    } else if (!strcmp(mode, "bench")) {
        Set st = make_set(n, in);
        one_at_a_time(&st, ws);                               /* warm up: StarPU, the workers, the caches */
        pipelined(&st, ws);
        double best_seq = 1e30, best_pipe = 1e30;
        for (int r = 0; r < 3; r++) {
            double t0 = now();
            one_at_a_time(&st, ws);
            double t1 = now();
            pipelined(&st, ws);
            double t2 = now();
            best_seq = t1 - t0 < best_seq ? t1 - t0 : best_seq;
            best_pipe = t2 - t1 < best_pipe ? t2 - t1 : best_pipe;
        }
        printf("bench: %d inputs: one at a time %.3f ms, pipelined (m_IN_FLIGHT %d) %.3f ms, speedup %.2f\n", n,
               1e3 * best_seq, m_IN_FLIGHT, 1e3 * best_pipe, best_seq / best_pipe);
        for (int o = 0; o < m_NUM_OUTPUTS; o++)
            memcpy(out[o], st.out[o], out_bytes[o]);
        free_set(&st);
    } else {
        FAIL(2, "unknown mode %s", mode);
    }
    int32_t rel = m_release(ws);
    if (rel != m_OK)
        FAIL(9, "m_release returned %d", (int)rel);
    if (rank == 0)
        for (int o = 0; o < m_NUM_OUTPUTS; o++)
            write_raw(argv[a + m_NUM_INPUTS + o], out[o], out_bytes[o]);
    free(ws);
    for (int i = 0; i < m_NUM_INPUTS; i++)
        free(in[i]);
    for (int o = 0; o < m_NUM_OUTPUTS; o++)
        free(out[o]);
#ifdef DRIVER_MPI
    MPI_Finalize();
#endif
    return 0;
}
