/* runtime/gpu_runtime.c — dlcc_gpu_run: a `dlcc -t gpu` program run through
 * the Halide runtime's CUDA device interface.  No writable global state: the
 * CUDA module and the device allocations live in the caller's workspace.
 *
 * Also the non-aborting halide_error / halide_print hooks: the Halide
 * runtime reports a missing driver or device through halide_error, and
 * dlcc's contract is a nonzero return code, never an abort.  They print
 * only when DLCC_GPU_VERBOSE is set in the environment. */
#include "runtime/dlcc_gpu.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <HalideRuntime.h>
#include <HalideRuntimeCuda.h>

_Static_assert(sizeof(halide_buffer_t) + sizeof(halide_dimension_t) <= DLCC_GPU_WORKSPACE_PER_BUF,
               "DLCC_GPU_WORKSPACE_PER_BUF is too small for this host");

#define WS_TAG 0x646c6363677075ULL   /* "dlccgpu" */

typedef struct WsHeader {
    uint64_t tag;
    const DlccGpuProgram *prog;      /* the program that initialized this workspace */
    void *module;                    /* Halide's CUDA module state */
    int32_t n_bufs;
    int32_t ready;                   /* every device allocation made */
} WsHeader;
_Static_assert(sizeof(WsHeader) <= DLCC_GPU_WORKSPACE_HEADER, "workspace header too large");

static void verbose(const char *msg)
{
    if (getenv("DLCC_GPU_VERBOSE"))
        fprintf(stderr, "dlcc-gpu: %s%s", msg, msg[0] && msg[strlen(msg) - 1] == '\n' ? "" : "\n");
}

void halide_error(void *user_context, const char *msg)
{
    (void)user_context;
    verbose(msg ? msg : "");
}

void halide_print(void *user_context, const char *msg)
{
    (void)user_context;
    verbose(msg ? msg : "");
}

static halide_buffer_t *ws_buf(void *ws, int i)
{
    return (halide_buffer_t *)((char *)ws + DLCC_GPU_WORKSPACE_HEADER + (size_t)i * DLCC_GPU_WORKSPACE_PER_BUF);
}

static halide_dimension_t *ws_dim(void *ws, int i)
{
    return (halide_dimension_t *)(ws_buf(ws, i) + 1);
}

/* One-dimensional byte buffer of the given size. */
static void buf_init(void *ws, int i, int64_t bytes)
{
    halide_buffer_t *b = ws_buf(ws, i);
    halide_dimension_t *dim = ws_dim(ws, i);
    memset(b, 0, sizeof *b);
    memset(dim, 0, sizeof *dim);
    dim->min = 0;
    dim->extent = (int32_t)(bytes > 0 ? bytes : 1);
    dim->stride = 1;
    b->type.code = halide_type_uint;
    b->type.bits = 8;
    b->type.lanes = 1;
    b->dimensions = 1;
    b->dim = dim;
}

void dlcc_gpu_release(const DlccGpuProgram *prog, void *workspace)
{
    WsHeader *h = workspace;
    if (!prog || !h || h->tag != WS_TAG || h->prog != prog)
        return;
    for (int i = 0; i < h->n_bufs; i++) {
        halide_buffer_t *b = ws_buf(workspace, i);
        if (b->device)
            halide_device_free(NULL, b);
    }
    if (h->module)
        halide_cuda_finalize_kernels(NULL, h->module);
    memset(h, 0, sizeof *h);
}

/* First use: load the PTX module, allocate every buffer on the device and
 * upload the constants. */
static int ws_init(const DlccGpuProgram *prog, void *ws)
{
    const int64_t *t = prog->table;
    WsHeader *h = ws;
    if (!(h->tag == WS_TAG && h->prog == prog)) {
        memset(h, 0, sizeof *h);
        h->tag = WS_TAG;
        h->prog = prog;
        h->n_bufs = (int32_t)t[1];
        for (int i = 0; i < h->n_bufs; i++)
            buf_init(ws, i, t[5 + 3 * i + 2]);
    }
    if (h->ready)
        return 0;
    if (!h->module && halide_cuda_initialize_kernels(NULL, &h->module, prog->ptx, (int)strlen(prog->ptx) + 1))
        return DLCC_ERR_DEVICE;
    const struct halide_device_interface_t *cuda = halide_cuda_device_interface();
    for (int i = 0; i < h->n_bufs; i++) {
        halide_buffer_t *b = ws_buf(ws, i);
        if (!b->device && halide_device_malloc(NULL, b, cuda))
            return DLCC_ERR_DEVICE;
        if (t[5 + 3 * i] == DLCC_GPU_BUF_CONST) {
            b->host = (uint8_t *)prog->consts[t[5 + 3 * i + 1]];
            b->flags = halide_buffer_flag_host_dirty;
            int rc = halide_copy_to_device(NULL, b, cuda);
            b->host = NULL;
            b->flags = 0;
            if (rc)
                return DLCC_ERR_DEVICE;
        }
    }
    h->ready = 1;
    return 0;
}

static int launch(const DlccGpuProgram *prog, void *ws, const int64_t *k, const char *name)
{
    enum { MAX_ARGS = 64 };
    int n = (int)k[7];
    if (n < 0 || n > MAX_ARGS)
        return DLCC_ERR_PROGRAM;
    size_t sizes[MAX_ARGS + 1];
    void *args[MAX_ARGS + 1];
    int8_t is_buf[MAX_ARGS + 1];
    for (int a = 0; a < n; a++) {
        sizes[a] = sizeof(uint64_t);
        args[a] = ws_buf(ws, (int)k[8 + a]);
        is_buf[a] = 1;
    }
    sizes[n] = 0;             /* the list ends at the first size 0 */
    args[n] = NULL;
    is_buf[n] = 0;
    WsHeader *h = ws;
    (void)prog;
    return halide_cuda_run(NULL, h->module, name, (int)k[1], (int)k[2], (int)k[3], (int)k[4], (int)k[5],
                           (int)k[6], 0, sizes, args, is_buf)
               ? DLCC_ERR_DEVICE
               : 0;
}

int32_t dlcc_gpu_run(const DlccGpuProgram *prog, const void *const inputs[], void *const outputs[],
                     void *workspace)
{
    if (!prog || !workspace)
        return DLCC_ERR_NULL;
    const int64_t *t = prog->table;
    if (t[0] != DLCC_GPU_VERSION)
        return DLCC_ERR_PROGRAM;
    int n_bufs = (int)t[1], n_kernels = (int)t[2], n_in = (int)t[3], n_out = (int)t[4];
    if ((n_in > 0 && !inputs) || (n_out > 0 && !outputs))
        return DLCC_ERR_NULL;
    for (int i = 0; i < n_in; i++)
        if (!inputs[i])
            return DLCC_ERR_NULL;
    for (int i = 0; i < n_out; i++)
        if (!outputs[i])
            return DLCC_ERR_NULL;
    int rc = ws_init(prog, workspace);
    if (rc)
        return rc;
    const struct halide_device_interface_t *cuda = halide_cuda_device_interface();
    for (int i = 0; i < n_bufs && !rc; i++) {
        const int64_t *e = &t[5 + 3 * i];
        if (e[0] != DLCC_GPU_BUF_INPUT)
            continue;
        halide_buffer_t *b = ws_buf(workspace, i);
        b->host = (uint8_t *)(uintptr_t)inputs[e[1]];
        b->flags = halide_buffer_flag_host_dirty;
        rc = halide_copy_to_device(NULL, b, cuda) ? DLCC_ERR_DEVICE : 0;
        b->host = NULL;
        b->flags = 0;
    }
    const int64_t *k = &t[5 + 3 * n_bufs];
    for (int i = 0; i < n_kernels && !rc; i++) {
        rc = launch(prog, workspace, k, prog->names + k[0]);
        k += 8 + k[7];
    }
    for (int i = 0; i < n_bufs && !rc; i++) {
        const int64_t *e = &t[5 + 3 * i];
        if (e[0] != DLCC_GPU_BUF_OUTPUT)
            continue;
        halide_buffer_t *b = ws_buf(workspace, i);
        b->host = (uint8_t *)outputs[e[1]];
        b->flags = halide_buffer_flag_device_dirty;
        rc = halide_copy_to_host(NULL, b) ? DLCC_ERR_DEVICE : 0;
        b->host = NULL;
        b->flags = 0;
    }
    return rc;
}
