/* tests/gpu/test_gpu_stub.c — the GPU runtime (runtime/gpu_runtime.c) and a
 * generated -t gpu object against the stub CUDA driver of tests/gpu
 * (cuda_stub.c), which Meson builds as libcuda.so.1 with no libcuda.so beside
 * it and puts on LD_LIBRARY_PATH: the driver is found by its versioned name;
 * a failure of any driver call is DLCC_ERR_DEVICE, again on the next run,
 * and a run after the cause is gone succeeds (no abort: the first run after
 * a failed module load used to abort inside Halide); the JIT options match
 * the PTX; NAME_release frees every allocation and the module.  The stub's
 * counters are read after every step. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/dlcc_gpu.h"
#include "runtime/gpu_driver.h"
#include "tests/gpu/cuda_stub.h"

#include "stub_cnn.h"   /* tests/e2e/cnn compiled with -t gpu --name stub_cnn (tests/gpu/meson.build) */

/* HalideRuntime.h, HalideRuntimeCuda.h: destroys Halide's CUDA context. */
struct halide_device_interface_t;
extern int halide_device_release(void *user_context, const struct halide_device_interface_t *device_interface);
extern const struct halide_device_interface_t *halide_cuda_device_interface(void);

/* y = x, 16 bytes: the stub runs a kernel named *_copy as a copy of its first buffer into its second. */
static const char ptx[] = ".version 7.8\n.target sm_80\n.address_size 64\n"
                          ".visible .entry t_copy(.param .u64 a, .param .u64 b)\n.maxntid 4, 1, 1\n{\n\tret;\n}\n";
static const char names[] = "t_copy";
static const int64_t table[] = {
    DLCC_GPU_VERSION, 2, 1, 1, 1,
    DLCC_GPU_BUF_INPUT, 0, 16,
    DLCC_GPU_BUF_OUTPUT, 0, 16,
    0, 1, 1, 1, 4, 1, 1, 2, 0, 1,
};
static const DlccGpuProgram prog = { ptx, names, table, NULL };

static const CudaStubState *stub;   /* set by the first test, after the runtime loaded the stub */
static int other_driver;            /* a libcuda.so (a driver's development files) would be found first */

static int setup(void **state)
{
    (void)state;
    if (dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD)) {
        fprintf(stderr, "test_gpu_stub: libcuda.so.1 is loaded before the first run\n");
        return -1;
    }
    void *lib = dlopen("libcuda.so", RTLD_LAZY);
    if (lib) {
        fprintf(stderr, "test_gpu_stub: a libcuda.so is installed; the stub cannot be the driver found\n");
        other_driver = 1;
        dlclose(lib);
    }
    return 0;
}

/* Skips where the stub is not the driver; the stub's state after the first test. */
static void need_stub(int first)
{
    if (other_driver)
        skip();
    if (!first)
        assert_non_null(stub);
}

/* The stub's counters, from the library the runtime loaded (after its first run). */
static const CudaStubState *stub_state(void)
{
    void *lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    assert_non_null(lib);
    CudaStubStateFn fn;
    void *sym = dlsym(lib, "cuda_stub_state");
    assert_non_null(sym);   /* NULL: another libcuda.so.1 than the stub */
    memcpy(&fn, &sym, sizeof sym);
    dlclose(lib);
    return fn();
}

/* Nothing live, every push popped, no call the stub refused. */
static void assert_clean(void)
{
    assert_int_equal(stub->live_allocs, 0);
    assert_int_equal(stub->live_bytes, 0);
    assert_int_equal(stub->live_modules, 0);
    assert_int_equal(stub->ctx_depth, 0);
    assert_int_equal(stub->bad_calls, 0);
}

/* One run of prog: its return code; y = x when it succeeded, untouched otherwise. */
static int run_copy(void *ws)
{
    float x[4] = { 1.5f, -2, 3, 4e6f }, y[4] = { 7, 7, 7, 7 };
    const void *in[1] = { x };
    void *out[1] = { y };
    int rc = dlcc_gpu_run(&prog, in, out, ws);
    if (rc == DLCC_OK)
        assert_memory_equal(y, x, sizeof x);
    else
        for (int i = 0; i < 4; i++)
            assert_float_equal(y[i], 7, 0);
    return rc;
}

static void test_found_as_so1(void **state)
{
    (void)state;
    need_stub(1);
    const char *dir = getenv("CUDA_STUB_DIR");   /* the folder on LD_LIBRARY_PATH that holds the stub */
    assert_non_null(dir);
    char path[4096];
    snprintf(path, sizeof path, "%s/libcuda.so", dir);
    assert_int_not_equal(access(path, F_OK), 0);   /* only libcuda.so.1 is there */
    snprintf(path, sizeof path, "%s/libcuda.so.1", dir);
    assert_int_equal(access(path, F_OK), 0);
    static _Alignas(64) unsigned char ws[DLCC_GPU_WORKSPACE_BYTES(2)];
    memset(ws, 0xa5, sizeof ws);   /* garbage: the first run must not trust it */
    assert_int_equal(run_copy(ws), DLCC_OK);
    stub = stub_state();
    assert_int_equal(stub->inits, 1);
    assert_int_equal(stub->contexts, 1);
    assert_int_equal(stub->loads, 1);
    assert_int_equal(stub->launches, 1);
    assert_string_equal(stub->launch_name, "t_copy");
    assert_int_equal(stub->launch_block[0], 4);
    assert_int_equal(stub->live_allocs, 2);
    assert_int_equal(stub->live_bytes, 32);
    assert_int_equal(run_copy(ws), DLCC_OK);   /* the second run reuses module and buffers */
    assert_int_equal(stub->loads, 1);
    assert_int_equal(stub->allocs, 2);
    assert_int_equal(stub->launches, 2);
    assert_int_equal(dlcc_gpu_release(&prog, ws), DLCC_OK);
    assert_int_equal(stub->frees, 2);
    assert_int_equal(stub->unloads, 1);
    assert_clean();
    assert_int_equal(dlcc_gpu_release(&prog, ws), DLCC_OK);   /* fresh: nothing to free */
    assert_int_equal(dlcc_gpu_release(&prog, NULL), DLCC_ERR_NULL);
    assert_int_equal(stub->frees, 2);
}

/* A driver too old for the PTX: the load fails twice, then (driver updated) succeeds. */
static void test_failed_load_then_retry(void **state)
{
    (void)state;
    need_stub(0);
    static _Alignas(64) unsigned char ws[DLCC_GPU_WORKSPACE_BYTES(2)];
    int failed = stub->failed, loads = stub->loads;
    setenv("CUDA_STUB_FAIL", "cuModuleLoadDataEx", 1);
    assert_int_equal(run_copy(ws), DLCC_ERR_DEVICE);
    assert_int_equal(run_copy(ws), DLCC_ERR_DEVICE);   /* used to abort inside Halide's halide_cuda_run */
    assert_int_equal(stub->failed, failed + 2);
    assert_int_equal(stub->live_modules, 0);
    assert_int_equal(stub->live_allocs, 0);            /* nothing allocated before the module loads */
    unsetenv("CUDA_STUB_FAIL");
    assert_int_equal(run_copy(ws), DLCC_OK);
    assert_int_equal(stub->loads, loads + 1);
    assert_int_equal(dlcc_gpu_release(&prog, ws), DLCC_OK);
    assert_clean();
}

/* Every driver call a run makes, failing: DLCC_ERR_DEVICE twice, then a run succeeds. */
static void test_every_failure_retryable(void **state)
{
    (void)state;
    need_stub(0);
    static const char *const calls[] = { "cuCtxPushCurrent_v2", "cuModuleLoadDataEx", "cuMemAlloc_v2",
                                         "cuMemcpyHtoD_v2", "cuModuleGetFunction", "cuLaunchKernel",
                                         "cuMemcpyDtoH_v2" };
    for (size_t c = 0; c < sizeof calls / sizeof calls[0]; c++) {
        static _Alignas(64) unsigned char ws[DLCC_GPU_WORKSPACE_BYTES(2)];
        int failed = stub->failed;
        setenv("CUDA_STUB_FAIL", calls[c], 1);
        assert_int_equal(run_copy(ws), DLCC_ERR_DEVICE);
        assert_int_equal(run_copy(ws), DLCC_ERR_DEVICE);
        assert_int_equal(stub->failed, failed + 2);   /* the failing call was made, and retried */
        assert_int_equal(stub->ctx_depth, 0);
        unsetenv("CUDA_STUB_FAIL");
        assert_int_equal(run_copy(ws), DLCC_OK);
        assert_int_equal(dlcc_gpu_release(&prog, ws), DLCC_OK);
        assert_clean();
    }
}

/* The options cuModuleLoadDataEx got: the value of option o, or -1. */
static int64_t jit(int o)
{
    for (unsigned i = 0; i < stub->n_jit; i++)
        if (stub->jit_option[i] == o)
            return (int64_t)stub->jit_value[i];
    return -1;
}

static void test_jit_options(void **state)
{
    (void)state;
    need_stub(0);
    static _Alignas(64) unsigned char ws[DLCC_GPU_WORKSPACE_BYTES(2)];
    assert_int_equal(run_copy(ws), DLCC_OK);
    assert_int_equal(stub->ptx_max_threads, 4);
    assert_int_equal(jit(DLCC_CU_JIT_THREADS_PER_BLOCK), 4);
    assert_int_equal(jit(DLCC_CU_JIT_MAX_REGISTERS), 255);       /* 65536 / 4, at most 255 */
    assert_true(jit(DLCC_CU_JIT_ERROR_LOG_BUFFER) != -1);
    assert_true(jit(DLCC_CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES) > 0);
    assert_int_equal(dlcc_gpu_release(&prog, ws), DLCC_OK);

    /* a 32×32 block: 64 registers per thread fill the SM's 65536 */
    static const char ptx_1024[] = ".version 7.8\n.target sm_80\n.address_size 64\n"
                                   ".visible .entry big_copy(.param .u64 a, .param .u64 b)\n.maxntid 32, 32, 1\n"
                                   "{\n\tret;\n}\n";
    static const int64_t table_1024[] = {
        DLCC_GPU_VERSION, 2, 1, 1, 1,
        DLCC_GPU_BUF_INPUT, 0, 16,
        DLCC_GPU_BUF_OUTPUT, 0, 16,
        0, 1, 1, 1, 32, 32, 1, 2, 0, 1,
    };
    const DlccGpuProgram big = { ptx_1024, "big_copy", table_1024, NULL };
    float x[4] = { 1, 2, 3, 4 }, y[4] = { 0 };
    const void *in[1] = { x };
    void *out[1] = { y };
    assert_int_equal(dlcc_gpu_run(&big, in, out, ws), DLCC_OK);
    assert_memory_equal(y, x, sizeof x);
    assert_int_equal(stub->ptx_max_threads, 1024);
    assert_int_equal(jit(DLCC_CU_JIT_THREADS_PER_BLOCK), 1024);
    assert_int_equal(jit(DLCC_CU_JIT_MAX_REGISTERS), 64);
    assert_int_equal(stub->launch_block[0], 32);
    assert_int_equal(stub->launch_block[1], 32);
    assert_int_equal(dlcc_gpu_release(&big, ws), DLCC_OK);
    assert_clean();
}

/* A model compiled by dlcc: its header's NAME_release, its PTX's kernels and .maxntid. */
static void test_generated_model(void **state)
{
    (void)state;
    need_stub(0);
    static _Alignas(stub_cnn_WORKSPACE_ALIGN) unsigned char ws[stub_cnn_WORKSPACE_SIZE];
    static float x[stub_cnn_INPUT_input_SIZE], y[stub_cnn_OUTPUT_output_SIZE];
    for (int i = 0; i < stub_cnn_INPUT_input_SIZE; i++)
        x[i] = (float)i;
    stub_cnn_inputs in = { x };
    stub_cnn_outputs out = { y };
    int loads = stub->loads, launches = stub->launches, n_bufs = (stub_cnn_WORKSPACE_SIZE - 64) / 8;
    assert_int_equal(stub_cnn_run(&in, &out, ws), stub_cnn_OK);
    assert_int_equal(stub->loads, loads + 1);
    assert_true(stub->ptx_entries >= 3);
    assert_int_equal(stub->launches, launches + stub->ptx_entries);   /* one launch per .entry, each found */
    assert_int_equal(stub->ptx_max_threads, 256);                       /* the PTX's largest .maxntid */
    assert_int_equal(jit(DLCC_CU_JIT_THREADS_PER_BLOCK), 256);
    assert_int_equal(jit(DLCC_CU_JIT_MAX_REGISTERS), 255);
    assert_int_equal(stub->live_allocs, n_bufs);
    assert_true(stub->live_bytes >= (int64_t)sizeof x + (int64_t)sizeof y + stub_cnn_WEIGHTS_SIZE);
    assert_int_equal(stub_cnn_run(&in, &out, ws), stub_cnn_OK);
    assert_int_equal(stub->launches, launches + 2 * stub->ptx_entries);
    assert_int_equal(stub->live_allocs, n_bufs);
    assert_int_equal(stub_cnn_release(ws), stub_cnn_OK);
    assert_clean();
    assert_int_equal(stub_cnn_release(ws), stub_cnn_OK);
    assert_int_equal(stub_cnn_release(NULL), stub_cnn_ERR_NULL);
    assert_int_equal(stub_cnn_run(&in, &out, ws), stub_cnn_OK);   /* released: set up again */
    assert_int_equal(stub->loads, loads + 2);
    assert_int_equal(stub_cnn_release(ws), stub_cnn_OK);
    assert_clean();
}

/* Releasing: a failed free is DLCC_ERR_DEVICE and leaves the workspace fresh;
 * after halide_device_release destroyed the context (and, with it, what the
 * driver held), a failure to make a new one is retried by the next run, and a
 * workspace of the old context is refused until released. */
static void test_release_failures(void **state)
{
    (void)state;
    need_stub(0);
    static _Alignas(64) unsigned char ws[DLCC_GPU_WORKSPACE_BYTES(2)];
    assert_int_equal(run_copy(ws), DLCC_OK);
    setenv("CUDA_STUB_FAIL", "cuMemFree_v2,cuModuleUnload", 1);
    assert_int_equal(dlcc_gpu_release(&prog, ws), DLCC_ERR_DEVICE);
    unsetenv("CUDA_STUB_FAIL");
    assert_int_equal(stub->live_allocs, 2);          /* the stub still holds them ... */
    assert_int_equal(dlcc_gpu_release(&prog, ws), DLCC_OK);   /* ... the workspace does not */
    assert_int_equal(stub->live_allocs, 2);
    assert_int_equal(run_copy(ws), DLCC_OK);
    assert_int_equal(stub->live_allocs, 4);

    assert_int_equal(halide_device_release(NULL, halide_cuda_device_interface()), 0);
    assert_int_equal(stub->contexts, 0);
    assert_int_equal(stub->live_allocs, 0);          /* the context's memory and modules went with it */
    assert_int_equal(stub->live_modules, 0);
    int failed = stub->failed;
    setenv("CUDA_STUB_FAIL", "cuCtxCreate_v2", 1);      /* no context can be made: retried by every run */
    assert_int_equal(run_copy(ws), DLCC_ERR_DEVICE);
    assert_int_equal(run_copy(ws), DLCC_ERR_DEVICE);
    assert_int_equal(stub->failed, failed + 2);
    assert_int_equal(stub->contexts, 0);
    unsetenv("CUDA_STUB_FAIL");
    assert_int_equal(run_copy(ws), DLCC_ERR_DEVICE);   /* holds state of the destroyed context */
    assert_int_equal(stub->contexts, 1);
    assert_int_equal(dlcc_gpu_release(&prog, ws), DLCC_ERR_DEVICE);   /* not freed: not this context's */
    assert_int_equal(run_copy(ws), DLCC_OK);
    assert_int_equal(dlcc_gpu_release(&prog, ws), DLCC_OK);
    assert_clean();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_found_as_so1),
        cmocka_unit_test(test_failed_load_then_retry),
        cmocka_unit_test(test_every_failure_retryable),
        cmocka_unit_test(test_jit_options),
        cmocka_unit_test(test_generated_model),
        cmocka_unit_test(test_release_failures),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
