/* tests/gpu/cuda_stub.c — a stub CUDA driver, built as libcuda.so.1 (no
 * libcuda.so beside it) for tests/gpu/test_gpu_stub.c, and by hand for
 * anything linked with the runtime (LD_LIBRARY_PATH=build/tests/gpu):
 * the entry points Halide 14's CUDA runtime resolves and those dlcc's
 * runtime calls (runtime/gpu_driver.h), over host memory, counting what it
 * allocates, loads and frees (tests/gpu/cuda_stub.h).
 *
 * - Device memory is host memory; every pointer, handle and copy is checked
 *   against what is live (a bad one is counted and refused, as a driver would
 *   refuse it: nothing is dereferenced).
 * - A module is PTX text: cuModuleLoadDataEx records its options and the
 *   image's largest `.maxntid`; cuModuleGetFunction needs the image's
 *   `.entry NAME(`; a launch checks that every parameter the entry declares
 *   is a live allocation.  Kernels do not run, except one whose name ends in
 *   `_copy`: it copies its first parameter's allocation into its second's.
 * - $CUDA_STUB_FAIL, a comma-separated list of entry point names (read at
 *   every call), makes those fail: cuModuleLoadData[Ex] with
 *   CUDA_ERROR_UNSUPPORTED_PTX_VERSION and a message in the error log, as a
 *   driver too old for the PTX; cuMemAlloc_v2 with CUDA_ERROR_OUT_OF_MEMORY;
 *   any other with CUDA_ERROR_UNKNOWN.
 *
 * One context at a time, each at another address; not thread-safe (the tests are single-threaded). */
#include "runtime/gpu_driver.h"
#include "tests/gpu/cuda_stub.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))
/* Every function not static is an entry point found with dlsym; none has a header. */
#pragma GCC diagnostic ignored "-Wmissing-prototypes"

enum { MAX_LIVE = 256, MAX_FUNCTIONS = 64 };

typedef struct Alloc {
    unsigned char *p;
    size_t bytes;
} Alloc;

typedef struct Function {
    char name[128];
    int n_params;
} Function;

typedef struct Module {
    char *ptx;
    Function fn[MAX_FUNCTIONS];
    int n_fn;
} Module;

static CudaStubState st;
static Alloc allocs[MAX_LIVE];
static Module *modules[MAX_LIVE];
static int contexts[64];   /* a new context is the address of the next (as a driver's, a new one per cuCtxCreate) */
static void *live_context; /* the context created and not destroyed, or NULL */

EXPORT const CudaStubState *cuda_stub_state(void) { return &st; }

static DlccCuResult bad(void)
{
    st.bad_calls++;
    return DLCC_CUDA_ERROR_INVALID_VALUE;
}

/* An error when $CUDA_STUB_FAIL names fn. */
static DlccCuResult injected(const char *fn, DlccCuResult err)
{
    const char *list = getenv("CUDA_STUB_FAIL");
    size_t n = strlen(fn);
    for (const char *p = list; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
        if (strncmp(p, fn, n) == 0 && (p[n] == ',' || p[n] == '\0')) {
            st.failed++;
            return err;
        }
    return DLCC_CUDA_SUCCESS;
}

#define FAIL_IF_ASKED(err)                        \
    do {                                          \
        DlccCuResult e_ = injected(__func__, err); \
        if (e_)                                   \
            return e_;                            \
    } while (0)

#define NEED_CONTEXT()                     \
    do {                                   \
        if (st.ctx_depth <= 0) {           \
            st.bad_calls++;                \
            return DLCC_CUDA_ERROR_INVALID_CONTEXT; \
        }                                  \
    } while (0)

/* The live allocation holding [ptr, ptr + bytes), or NULL. */
static Alloc *find_alloc(DlccCuDevptr ptr, size_t bytes)
{
    for (int i = 0; i < MAX_LIVE; i++) {
        Alloc *a = &allocs[i];
        uintptr_t base = (uintptr_t)a->p;
        if (a->p && ptr >= base && ptr - base <= a->bytes && bytes <= a->bytes - (ptr - base))
            return a;
    }
    return NULL;
}

/* The slot of a live module (NULL: of a free slot), or -1. */
static int find_module(const void *m)
{
    for (int i = 0; i < MAX_LIVE; i++)
        if (modules[i] == m && (m || !modules[i]))
            return i;
    return -1;
}

static void drop_module(int i)
{
    free(modules[i]->ptx);
    free(modules[i]);
    modules[i] = NULL;
    st.live_modules--;
}

/* ---------------------------------------------------------------- devices, contexts */

EXPORT DlccCuResult cuInit(unsigned flags)
{
    FAIL_IF_ASKED(DLCC_CUDA_ERROR_UNKNOWN);
    st.inits++;
    return flags ? bad() : DLCC_CUDA_SUCCESS;
}

EXPORT DlccCuResult cuDeviceGetCount(int *count)
{
    FAIL_IF_ASKED(DLCC_CUDA_ERROR_UNKNOWN);
    *count = 1;
    return DLCC_CUDA_SUCCESS;
}

EXPORT DlccCuResult cuDeviceGet(int *device, int ordinal)
{
    *device = 0;
    return ordinal == 0 ? DLCC_CUDA_SUCCESS : bad();
}

EXPORT DlccCuResult cuDeviceGetAttribute(int *value, int attribute, int device)
{
    (void)attribute;
    *value = 1;
    return device == 0 ? DLCC_CUDA_SUCCESS : bad();
}

EXPORT DlccCuResult cuDeviceGetName(char *name, int len, int device)
{
    snprintf(name, (size_t)len, "dlcc stub device");
    return device == 0 ? DLCC_CUDA_SUCCESS : bad();
}

EXPORT DlccCuResult cuDeviceTotalMem_v2(size_t *bytes, int device)
{
    *bytes = (size_t)1 << 30;
    return device == 0 ? DLCC_CUDA_SUCCESS : bad();
}

EXPORT DlccCuResult cuCtxCreate_v2(void **ctx, unsigned flags, int device)
{
    (void)flags;
    FAIL_IF_ASKED(DLCC_CUDA_ERROR_UNKNOWN);
    if (device != 0 || live_context)
        return bad();
    live_context = &contexts[st.inits % 64];
    st.contexts++;
    st.ctx_depth++;   /* a new context is current */
    *ctx = live_context;
    return DLCC_CUDA_SUCCESS;
}

/* Frees what the context holds, as the driver does. */
EXPORT DlccCuResult cuCtxDestroy_v2(void *ctx)
{
    if (!ctx || ctx != live_context)
        return bad();
    for (int i = 0; i < MAX_LIVE; i++) {
        if (allocs[i].p) {
            st.live_allocs--;
            st.live_bytes -= (int64_t)allocs[i].bytes;
            free(allocs[i].p);
            allocs[i].p = NULL;
        }
        if (modules[i])
            drop_module(i);
    }
    live_context = NULL;
    st.contexts--;
    return DLCC_CUDA_SUCCESS;
}

EXPORT DlccCuResult cuCtxPushCurrent_v2(void *ctx)
{
    FAIL_IF_ASKED(DLCC_CUDA_ERROR_UNKNOWN);
    if (!ctx || ctx != live_context)
        return bad();
    st.ctx_depth++;
    return DLCC_CUDA_SUCCESS;
}

EXPORT DlccCuResult cuCtxPopCurrent_v2(void **ctx)
{
    if (st.ctx_depth <= 0)
        return bad();
    st.ctx_depth--;
    if (ctx)
        *ctx = live_context;
    return DLCC_CUDA_SUCCESS;
}

EXPORT DlccCuResult cuCtxGetApiVersion(void *ctx, unsigned *version)
{
    *version = 3020;
    return ctx && ctx == live_context ? DLCC_CUDA_SUCCESS : bad();
}

EXPORT DlccCuResult cuCtxGetDevice(int *device)
{
    NEED_CONTEXT();
    *device = 0;
    return DLCC_CUDA_SUCCESS;
}

EXPORT DlccCuResult cuCtxSynchronize(void)
{
    NEED_CONTEXT();
    return DLCC_CUDA_SUCCESS;
}

EXPORT DlccCuResult cuStreamSynchronize(void *stream)
{
    NEED_CONTEXT();
    return stream ? bad() : DLCC_CUDA_SUCCESS;
}

EXPORT DlccCuResult cuProfilerStop(void) { return DLCC_CUDA_SUCCESS; }

EXPORT DlccCuResult cuGetErrorName(DlccCuResult error, const char **name)
{
    switch (error) {
    case DLCC_CUDA_SUCCESS: *name = "CUDA_SUCCESS"; break;
    case DLCC_CUDA_ERROR_INVALID_VALUE: *name = "CUDA_ERROR_INVALID_VALUE"; break;
    case DLCC_CUDA_ERROR_OUT_OF_MEMORY: *name = "CUDA_ERROR_OUT_OF_MEMORY"; break;
    case DLCC_CUDA_ERROR_INVALID_CONTEXT: *name = "CUDA_ERROR_INVALID_CONTEXT"; break;
    case DLCC_CUDA_ERROR_UNSUPPORTED_PTX_VERSION: *name = "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"; break;
    case DLCC_CUDA_ERROR_NOT_FOUND: *name = "CUDA_ERROR_NOT_FOUND"; break;
    case DLCC_CUDA_ERROR_UNKNOWN: *name = "CUDA_ERROR_UNKNOWN"; break;
    default: *name = NULL; return DLCC_CUDA_ERROR_INVALID_VALUE;
    }
    return DLCC_CUDA_SUCCESS;
}

/* ---------------------------------------------------------------- memory */

EXPORT DlccCuResult cuMemAlloc_v2(DlccCuDevptr *ptr, size_t bytes)
{
    NEED_CONTEXT();
    FAIL_IF_ASKED(DLCC_CUDA_ERROR_OUT_OF_MEMORY);
    if (bytes == 0)
        return bad();
    for (int i = 0; i < MAX_LIVE; i++)
        if (!allocs[i].p) {
            allocs[i].p = calloc(1, bytes);
            if (!allocs[i].p)
                return DLCC_CUDA_ERROR_OUT_OF_MEMORY;
            allocs[i].bytes = bytes;
            *ptr = (uintptr_t)allocs[i].p;
            st.allocs++;
            st.live_allocs++;
            st.live_bytes += (int64_t)bytes;
            return DLCC_CUDA_SUCCESS;
        }
    return DLCC_CUDA_ERROR_OUT_OF_MEMORY;
}

EXPORT DlccCuResult cuMemFree_v2(DlccCuDevptr ptr)
{
    NEED_CONTEXT();
    FAIL_IF_ASKED(DLCC_CUDA_ERROR_UNKNOWN);
    Alloc *a = find_alloc(ptr, 0);
    if (!a || (uintptr_t)a->p != ptr)
        return bad();
    free(a->p);
    st.live_bytes -= (int64_t)a->bytes;
    a->p = NULL;
    st.frees++;
    st.live_allocs--;
    return DLCC_CUDA_SUCCESS;
}

EXPORT DlccCuResult cuMemcpyHtoD_v2(DlccCuDevptr dst, const void *src, size_t bytes)
{
    NEED_CONTEXT();
    FAIL_IF_ASKED(DLCC_CUDA_ERROR_UNKNOWN);
    if (!find_alloc(dst, bytes) || !src)
        return bad();
    memcpy((void *)(uintptr_t)dst, src, bytes);
    return DLCC_CUDA_SUCCESS;
}

EXPORT DlccCuResult cuMemcpyDtoH_v2(void *dst, DlccCuDevptr src, size_t bytes)
{
    NEED_CONTEXT();
    FAIL_IF_ASKED(DLCC_CUDA_ERROR_UNKNOWN);
    if (!find_alloc(src, bytes) || !dst)
        return bad();
    memcpy(dst, (const void *)(uintptr_t)src, bytes);
    return DLCC_CUDA_SUCCESS;
}

/* Resolved by Halide's runtime, used by neither it (for dlcc's programs) nor dlcc. */
#define UNSUPPORTED(name, params) \
    EXPORT DlccCuResult name params { st.bad_calls++; return DLCC_CUDA_ERROR_NOT_SUPPORTED; }
UNSUPPORTED(cuMemcpyDtoD_v2, (void))
UNSUPPORTED(cuMemcpyHtoDAsync_v2, (void))
UNSUPPORTED(cuMemcpyDtoHAsync_v2, (void))
UNSUPPORTED(cuMemcpyDtoDAsync_v2, (void))
UNSUPPORTED(cuMemcpy3D_v2, (void))
UNSUPPORTED(cuPointerGetAttribute, (void))
UNSUPPORTED(cuModuleLoadData, (void))

/* ---------------------------------------------------------------- modules, launches */

/* The largest x*y*z of the `.maxntid x, y, z` directives of a PTX text, and its `.entry` count. */
static void scan_ptx(const char *ptx)
{
    st.ptx_max_threads = 0;
    st.ptx_entries = 0;
    for (const char *p = ptx; (p = strstr(p, ".maxntid")); p++) {
        unsigned x = 1, y = 1, z = 1;
        if (sscanf(p, ".maxntid %u, %u, %u", &x, &y, &z) >= 1 && x * y * z > st.ptx_max_threads)
            st.ptx_max_threads = x * y * z;
    }
    for (const char *p = ptx; (p = strstr(p, ".entry ")); p++)
        st.ptx_entries++;
}

static void write_log(unsigned n, const int *options, void **values, const char *text)
{
    char *buf = NULL;
    size_t size = 0;
    for (unsigned i = 0; i < n; i++) {
        if (options[i] == DLCC_CU_JIT_ERROR_LOG_BUFFER)
            buf = values[i];
        if (options[i] == DLCC_CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
            size = (uintptr_t)values[i];
    }
    if (buf && size)
        snprintf(buf, size, "%s", text);
}

EXPORT DlccCuResult cuModuleLoadDataEx(void **module, const void *image, unsigned n_options, int *options,
                                       void **values)
{
    NEED_CONTEXT();
    st.n_jit = n_options < CUDA_STUB_MAX_JIT ? n_options : CUDA_STUB_MAX_JIT;
    for (unsigned i = 0; i < st.n_jit; i++) {
        st.jit_option[i] = options[i];
        st.jit_value[i] = (uintptr_t)values[i];
    }
    if (injected(__func__, DLCC_CUDA_ERROR_UNSUPPORTED_PTX_VERSION)) {
        write_log(n_options, options, values,
                  "ptxas application ptx input, line 1; fatal   : Unsupported .version 7.8; current version is '7.4'");
        return DLCC_CUDA_ERROR_UNSUPPORTED_PTX_VERSION;
    }
    if (!image || !strstr(image, ".version"))
        return bad();
    int slot = find_module(NULL);
    Module *m = calloc(1, sizeof *m);
    if (slot < 0 || !m || !(m->ptx = strdup(image))) {
        free(m);
        return DLCC_CUDA_ERROR_OUT_OF_MEMORY;
    }
    scan_ptx(image);
    modules[slot] = m;
    *module = m;
    st.loads++;
    st.live_modules++;
    return DLCC_CUDA_SUCCESS;
}

EXPORT DlccCuResult cuModuleUnload(void *module)
{
    NEED_CONTEXT();
    FAIL_IF_ASKED(DLCC_CUDA_ERROR_UNKNOWN);
    int i = module ? find_module(module) : -1;
    if (i < 0)
        return bad();
    drop_module(i);
    st.unloads++;
    return DLCC_CUDA_SUCCESS;
}

EXPORT DlccCuResult cuModuleGetFunction(void **function, void *module, const char *name)
{
    NEED_CONTEXT();
    FAIL_IF_ASKED(DLCC_CUDA_ERROR_UNKNOWN);
    int i = module ? find_module(module) : -1;
    if (i < 0 || strlen(name) >= sizeof modules[i]->fn[0].name)
        return bad();
    Module *m = modules[i];
    for (int f = 0; f < m->n_fn; f++)
        if (strcmp(m->fn[f].name, name) == 0) {
            *function = &m->fn[f];
            return DLCC_CUDA_SUCCESS;
        }
    char entry[160];
    snprintf(entry, sizeof entry, ".entry %s(", name);
    const char *e = strstr(m->ptx, entry);
    if (!e || m->n_fn == MAX_FUNCTIONS) {
        st.bad_calls++;
        return DLCC_CUDA_ERROR_NOT_FOUND;
    }
    Function *fn = &m->fn[m->n_fn++];
    snprintf(fn->name, sizeof fn->name, "%s", name);
    const char *end = strchr(e, ')');
    for (const char *p = e; (p = strstr(p, ".param")) && p < end; p++)
        fn->n_params++;
    *function = fn;
    return DLCC_CUDA_SUCCESS;
}

static int live_function(const void *f)
{
    for (int i = 0; i < MAX_LIVE; i++)
        if (modules[i] && f >= (const void *)modules[i]->fn && f < (const void *)(modules[i]->fn + modules[i]->n_fn))
            return 1;
    return 0;
}

EXPORT DlccCuResult cuLaunchKernel(void *function, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                   unsigned bz, unsigned shared_bytes, void *stream, void **params, void **extra)
{
    NEED_CONTEXT();
    FAIL_IF_ASKED(DLCC_CUDA_ERROR_UNKNOWN);
    if (!live_function(function) || stream || extra || shared_bytes || !gx || !gy || !gz || !bx || !by || !bz ||
        (uint64_t)bx * by * bz > 1024)
        return bad();
    const Function *fn = function;
    Alloc *arg[MAX_FUNCTIONS];
    for (int a = 0; a < fn->n_params && a < MAX_FUNCTIONS; a++) {
        DlccCuDevptr p;
        memcpy(&p, params[a], sizeof p);
        if (!(arg[a] = find_alloc(p, 0)))
            return bad();
    }
    size_t n = strlen(fn->name);
    if (n >= 5 && strcmp(fn->name + n - 5, "_copy") == 0 && fn->n_params >= 2)
        memcpy(arg[1]->p, arg[0]->p, arg[0]->bytes < arg[1]->bytes ? arg[0]->bytes : arg[1]->bytes);
    snprintf(st.launch_name, sizeof st.launch_name, "%s", fn->name);
    unsigned grid[3] = { gx, gy, gz }, block[3] = { bx, by, bz };
    memcpy(st.launch_grid, grid, sizeof grid);
    memcpy(st.launch_block, block, sizeof block);
    st.launches++;
    return DLCC_CUDA_SUCCESS;
}

/* The entry points of runtime/gpu_driver.h have its types. */
#define CHECK_TYPE(field, symbol, params) \
    __attribute__((unused)) static DlccCuResult (*const check_##field) params = symbol;
DLCC_CU_FUNCTIONS(CHECK_TYPE)
__attribute__((unused)) static const DlccCuGetErrorName check_error_name = cuGetErrorName;
