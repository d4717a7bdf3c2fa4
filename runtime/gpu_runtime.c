/* runtime/gpu_runtime.c — dlcc_gpu_run and dlcc_gpu_release: a `dlcc -t gpu`
 * program run through the CUDA driver in the context of the Halide runtime's
 * CUDA interface (docs/targets/gpu.md, "Host object and runtime").
 *
 * A model's device state (its CUDA module, its device allocations, the
 * context they belong to) lives in the caller's workspace; dlcc keeps no
 * writable global.  Process-wide, and Halide's: the driver library once
 * loaded, one CUDA context (created by the first run), Halide's table of
 * driver entry points and its locks.
 *
 * From Halide 14 this takes the context (halide_cuda_acquire_context) and the
 * driver's entry points (halide_cuda_get_symbol); it loads, launches and
 * unloads its modules and allocates, copies and frees its buffers itself,
 * because Halide's module functions can abort and cannot be given the JIT
 * options or release one module (docs/targets/gpu.md says how).  It replaces
 * three of the functions HalideRuntime.h lets an application replace (they
 * are weak in Halide's runtime): halide_error and halide_print, which print
 * only when DLCC_GPU_VERBOSE is set, and halide_load_library, which also
 * finds the driver as libcuda.so.1. */
#include "runtime/dlcc_gpu.h"
#include "runtime/gpu_driver.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <HalideRuntime.h>

/* Defined by Halide 14's CUDA runtime (cuda.cpp, extern "C"); its
 * HalideRuntimeCuda.h declares only setters that replace the first two.  The
 * context every CUDA call runs in (Halide's own, created on first use, unless
 * the application set its own), and the driver's entry points as Halide
 * resolved them from the library it loaded (through halide_load_library). */
extern int halide_cuda_acquire_context(void *user_context, void **ctx, bool create);
extern int halide_cuda_release_context(void *user_context);
extern void *halide_cuda_get_symbol(void *user_context, const char *name);

#define WS_TAG 0x646c6363677075ULL   /* "dlccgpu" */

typedef struct WsHeader {
    uint64_t tag;
    const DlccGpuProgram *prog;      /* the program that set this workspace up */
    void *ctx;                       /* the CUDA context its module and allocations belong to */
    void *module;                    /* the loaded CUmodule, or NULL */
    int32_t n_bufs;
    int32_t ready;                   /* every allocation made and the constants uploaded */
} WsHeader;
_Static_assert(sizeof(WsHeader) <= DLCC_GPU_WORKSPACE_HEADER, "workspace header too large");
_Static_assert(sizeof(DlccCuDevptr) <= DLCC_GPU_WORKSPACE_PER_BUF, "DLCC_GPU_WORKSPACE_PER_BUF too small");

enum { MAX_ARGS = 64 };

static DlccCuDevptr *ws_ptr(void *ws) { return (DlccCuDevptr *)((char *)ws + DLCC_GPU_WORKSPACE_HEADER); }

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

/* Halide 14 asks for the driver as libcuda.so only, a name the driver's
 * development files install; a host with the driver alone has libcuda.so.1. */
void *halide_load_library(const char *name)
{
    void *lib = halide_default_load_library(name);
    if (!lib && name && strcmp(name, "libcuda.so") == 0)
        lib = halide_default_load_library("libcuda.so.1");
    return lib;
}

/* DLCC_ERR_DEVICE, after saying what failed when DLCC_GPU_VERBOSE is set. */
static int32_t failed(const char *call, const char *what, DlccCuResult err)
{
    if (!getenv("DLCC_GPU_VERBOSE"))
        return DLCC_ERR_DEVICE;
    const char *name = NULL;
    void *sym = halide_cuda_get_symbol(NULL, "cuGetErrorName");
    DlccCuGetErrorName get_name;
    memcpy(&get_name, &sym, sizeof sym);
    if (!sym || get_name(err, &name) != DLCC_CUDA_SUCCESS || !name)
        name = "CUDA error";
    fprintf(stderr, "dlcc-gpu: %s%s%s failed: %s (%d)\n", call, what ? " " : "", what ? what : "", name, err);
    return DLCC_ERR_DEVICE;
}

/* ------------------------------------------------------------ the driver */

typedef struct Driver {
    void *ctx;
#define DRIVER_FIELD(field, symbol, params) DlccCuResult (*field) params;
    DLCC_CU_FUNCTIONS(DRIVER_FIELD)
#undef DRIVER_FIELD
} Driver;

/* Makes Halide's CUDA context current on this thread and looks up the entry
 * points: 0, DLCC_ERR_DEVICE (no driver, device or context), or 1 when
 * create is false and there is no context.  After 0, driver_leave. */
static int32_t driver_enter(Driver *d, bool create)
{
    memset(d, 0, sizeof *d);
    int err = halide_cuda_acquire_context(NULL, &d->ctx, create);
    if (err || !d->ctx) {
        halide_cuda_release_context(NULL);
        return err ? failed("halide_cuda_acquire_context", "(no CUDA driver, device or context)", err) : 1;
    }
    void *sym;
#define RESOLVE(field, symbol, params)                                                  \
    if (!(sym = halide_cuda_get_symbol(NULL, #symbol))) {                               \
        halide_cuda_release_context(NULL);                                               \
        return failed("looking up " #symbol, "in the CUDA driver", DLCC_CUDA_ERROR_NOT_FOUND); \
    }                                                                                    \
    memcpy(&d->field, &sym, sizeof sym);
    DLCC_CU_FUNCTIONS(RESOLVE)
#undef RESOLVE
    if ((err = d->ctx_push(d->ctx))) {
        halide_cuda_release_context(NULL);
        return failed("cuCtxPushCurrent", NULL, err);
    }
    return 0;
}

static void driver_leave(const Driver *d)
{
    void *ctx;
    d->ctx_pop(&ctx);
    halide_cuda_release_context(NULL);
}

/* ------------------------------------------------------------ the program */

/* Checks the table's shape (its kernels' parameters are buffers, their
 * blocks at most 1024 threads) and returns, in *threads, the most threads of
 * a block.  DLCC_OK or DLCC_ERR_PROGRAM. */
static int32_t check_program(const DlccGpuProgram *prog, unsigned *threads)
{
    const int64_t *t = prog->table;
    if (t[0] != DLCC_GPU_VERSION)
        return DLCC_ERR_PROGRAM;
    int64_t n_bufs = t[1], n_kernels = t[2];
    if (n_bufs < 0 || n_kernels < 0 || t[3] < 0 || t[4] < 0)
        return DLCC_ERR_PROGRAM;
    *threads = 1;
    const int64_t *k = &t[5 + 3 * n_bufs];
    for (int64_t i = 0; i < n_kernels; i++, k += 8 + k[7]) {
        for (int d = 1; d <= 6; d++)
            if (k[d] < 1 || k[d] > (d <= 3 ? 0x7fffffff : 1024))
                return DLCC_ERR_PROGRAM;
        if (k[7] < 0 || k[7] > MAX_ARGS || k[4] * k[5] * k[6] > 1024)
            return DLCC_ERR_PROGRAM;
        for (int64_t a = 0; a < k[7]; a++)
            if (k[8 + a] < 0 || k[8 + a] >= n_bufs)
                return DLCC_ERR_PROGRAM;
        if ((unsigned)(k[4] * k[5] * k[6]) > *threads)
            *threads = (unsigned)(k[4] * k[5] * k[6]);
    }
    return DLCC_OK;
}

/* Loads the PTX with the JIT limits that match it.  Each kernel declares
 * `.maxntid` = its launch's block (codegen/ptx.c), so the largest block must
 * fit on one SM: CU_JIT_THREADS_PER_BLOCK = its threads, and
 * CU_JIT_MAX_REGISTERS = the registers per thread that leaves, 65536 per SM
 * (sm_75 to sm_90) / threads, at most 255.  Halide 14 would pass 64 (or
 * $HL_CUDA_JIT_MAX_REGISTERS), under which the tiled kernels that need up to
 * 72 spill. */
static int32_t load_module(const DlccGpuProgram *prog, const Driver *d, unsigned threads, void **module)
{
    unsigned registers = 65536 / threads < 255 ? 65536 / threads : 255;
    char log[2048] = "";
    int options[4] = { DLCC_CU_JIT_MAX_REGISTERS, DLCC_CU_JIT_THREADS_PER_BLOCK, DLCC_CU_JIT_ERROR_LOG_BUFFER,
                       DLCC_CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES };
    void *values[4] = { (void *)(uintptr_t)registers, (void *)(uintptr_t)threads, log, (void *)(uintptr_t)sizeof log };
    DlccCuResult err = d->module_load(module, prog->ptx, 4, options, values);
    if (err == DLCC_CUDA_SUCCESS && *module)
        return DLCC_OK;
    *module = NULL;
    log[sizeof log - 1] = '\0';
    int32_t rc = failed("cuModuleLoadDataEx", "(the PTX)", err ? err : DLCC_CUDA_ERROR_UNKNOWN);
    if (log[0])
        verbose(log);   /* the JIT compiler's messages: a driver too old for the PTX says so */
    return rc;
}

/* The workspace's state for prog in the context ctx.  First use: a fresh
 * state.  DLCC_ERR_DEVICE when it holds state of another context (the
 * application's halide_cuda_acquire_context gave another one, or
 * halide_device_release destroyed the context): dlcc_gpu_release it first. */
static int32_t ws_attach(const DlccGpuProgram *prog, void *ws, void *ctx)
{
    WsHeader *h = ws;
    if (h->tag == WS_TAG && h->prog == prog) {
        if (h->ctx == ctx)
            return DLCC_OK;
        verbose("the workspace holds device state of another CUDA context: release it first");
        return DLCC_ERR_DEVICE;
    }
    memset(h, 0, sizeof *h);
    h->tag = WS_TAG;
    h->prog = prog;
    h->ctx = ctx;
    h->n_bufs = (int32_t)prog->table[1];
    memset(ws_ptr(ws), 0, (size_t)h->n_bufs * sizeof(DlccCuDevptr));
    return DLCC_OK;
}

/* First use, and the runs after one that failed here: loads the module,
 * allocates what is missing and uploads the constants. */
static int32_t ws_setup(const DlccGpuProgram *prog, void *ws, const Driver *d, unsigned threads)
{
    WsHeader *h = ws;
    if (h->ready)
        return DLCC_OK;
    int32_t rc = h->module ? DLCC_OK : load_module(prog, d, threads, &h->module);
    DlccCuDevptr *ptr = ws_ptr(ws);
    for (int i = 0; i < h->n_bufs && !rc; i++) {
        const int64_t *e = &prog->table[5 + 3 * i];
        DlccCuResult err;
        if (!ptr[i] && (err = d->mem_alloc(&ptr[i], (size_t)(e[2] > 0 ? e[2] : 1)))) {
            ptr[i] = 0;
            rc = failed("cuMemAlloc", NULL, err);
        } else if (e[0] == DLCC_GPU_BUF_CONST && e[2] > 0 &&
                   (err = d->copy_htod(ptr[i], prog->consts[e[1]], (size_t)e[2]))) {
            rc = failed("cuMemcpyHtoD", "(constants)", err);
        }
    }
    h->ready = !rc;
    return rc;
}

static int32_t launch(const DlccGpuProgram *prog, void *ws, const Driver *d, const int64_t *k)
{
    const WsHeader *h = ws;
    const char *name = prog->names + k[0];
    void *fn = NULL;
    DlccCuResult err = d->module_function(&fn, h->module, name);
    if (err)
        return failed("cuModuleGetFunction", name, err);
    void *params[MAX_ARGS + 1];
    for (int64_t a = 0; a < k[7]; a++)
        params[a] = &ws_ptr(ws)[k[8 + a]];   /* the driver reads the values at the launch */
    params[k[7]] = NULL;
    err = d->launch(fn, (unsigned)k[1], (unsigned)k[2], (unsigned)k[3], (unsigned)k[4], (unsigned)k[5],
                    (unsigned)k[6], 0, NULL, params, NULL);
    return err ? failed("cuLaunchKernel", name, err) : DLCC_OK;
}

int32_t dlcc_gpu_run(const DlccGpuProgram *prog, const void *const inputs[], void *const outputs[],
                     void *workspace)
{
    if (!prog || !workspace)
        return DLCC_ERR_NULL;
    unsigned threads;
    int32_t rc = check_program(prog, &threads);
    if (rc)
        return rc;
    const int64_t *t = prog->table;
    int n_bufs = (int)t[1], n_kernels = (int)t[2], n_in = (int)t[3], n_out = (int)t[4];
    if ((n_in > 0 && !inputs) || (n_out > 0 && !outputs))
        return DLCC_ERR_NULL;
    for (int i = 0; i < n_in; i++)
        if (!inputs[i])
            return DLCC_ERR_NULL;
    for (int i = 0; i < n_out; i++)
        if (!outputs[i])
            return DLCC_ERR_NULL;
    Driver d;
    if ((rc = driver_enter(&d, true)))
        return rc;
    rc = ws_attach(prog, workspace, d.ctx);
    if (!rc)
        rc = ws_setup(prog, workspace, &d, threads);
    DlccCuDevptr *ptr = ws_ptr(workspace);
    for (int i = 0; i < n_bufs && !rc; i++) {
        const int64_t *e = &t[5 + 3 * i];
        DlccCuResult err;
        if (e[0] == DLCC_GPU_BUF_INPUT && e[2] > 0 && (err = d.copy_htod(ptr[i], inputs[e[1]], (size_t)e[2])))
            rc = failed("cuMemcpyHtoD", "(inputs)", err);
    }
    const int64_t *k = &t[5 + 3 * n_bufs];
    for (int i = 0; i < n_kernels && !rc; i++, k += 8 + k[7])
        rc = launch(prog, workspace, &d, k);
    for (int i = 0; i < n_bufs && !rc; i++) {   /* waits for the kernels (the default stream) */
        const int64_t *e = &t[5 + 3 * i];
        DlccCuResult err;
        if (e[0] == DLCC_GPU_BUF_OUTPUT && e[2] > 0 && (err = d.copy_dtoh(outputs[e[1]], ptr[i], (size_t)e[2])))
            rc = failed("cuMemcpyDtoH", "(outputs)", err);
    }
    driver_leave(&d);
    return rc;
}

int32_t dlcc_gpu_release(const DlccGpuProgram *prog, void *workspace)
{
    if (!prog || !workspace)
        return DLCC_ERR_NULL;
    WsHeader *h = workspace;
    if (h->tag != WS_TAG || h->prog != prog)
        return DLCC_OK;   /* holds nothing of prog's */
    DlccCuDevptr *ptr = ws_ptr(workspace);
    int n_bufs = h->n_bufs, holds = h->module != NULL;
    for (int i = 0; i < n_bufs; i++)
        holds |= ptr[i] != 0;
    int32_t rc = DLCC_OK;
    Driver d;
    int32_t entered = holds ? driver_enter(&d, false) : 1;
    if (entered == 0 && d.ctx == h->ctx) {
        for (int i = 0; i < n_bufs; i++) {
            DlccCuResult err = ptr[i] ? d.mem_free(ptr[i]) : DLCC_CUDA_SUCCESS;
            if (err)
                rc = failed("cuMemFree", NULL, err);
        }
        DlccCuResult err = h->module ? d.module_unload(h->module) : DLCC_CUDA_SUCCESS;
        if (err)
            rc = failed("cuModuleUnload", NULL, err);
    } else if (entered != 1) {
        /* another context is current, or none could be had: what the workspace holds is not freed */
        verbose("the workspace's device state belongs to a CUDA context that is not current: not freed");
        rc = DLCC_ERR_DEVICE;
    }   /* else nothing is held, or there is no context any more: its memory and module went with it */
    if (entered == 0)
        driver_leave(&d);
    memset(h, 0, sizeof *h);
    memset(ptr, 0, (size_t)n_bufs * sizeof *ptr);
    return rc;
}
