/* tests/unit/test_gpu_runtime.c — dlcc_gpu_run and dlcc_gpu_release
 * (runtime/gpu_runtime.c): return codes for NULL pointers, malformed
 * programs, and a machine without a CUDA driver or device (no abort, and
 * nothing to release).  tests/gpu/test_gpu_stub.c runs them against a stub
 * driver. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>
#include <unistd.h>

#include "runtime/dlcc_gpu.h"

/* y = x (one input, one output of 16 bytes, one kernel using both). */
static const char ptx[] = ".version 7.8\n.target sm_80\n.address_size 64\n"
                          ".visible .entry t_copy(.param .u64 a, .param .u64 b)\n{\n\tret;\n}\n";
static const char names[] = "t_copy";
static const int64_t table[] = {
    DLCC_GPU_VERSION, 2, 1, 1, 1,
    DLCC_GPU_BUF_INPUT, 0, 16,
    DLCC_GPU_BUF_OUTPUT, 0, 16,
    0, 1, 1, 1, 4, 1, 1, 2, 0, 1,
};
static const int64_t bad_table[] = { DLCC_GPU_VERSION + 7, 0, 0, 0, 0 };

static void test_null_and_version(void **state)
{
    (void)state;
    static _Alignas(64) unsigned char ws[DLCC_GPU_WORKSPACE_BYTES(2)];
    float x[4] = { 1, 2, 3, 4 }, y[4] = { 0 };
    const void *in[1] = { x };
    void *out[1] = { y };
    const void *in_null[1] = { NULL };
    DlccGpuProgram prog = { ptx, names, table, NULL };
    assert_int_equal(dlcc_gpu_run(NULL, in, out, ws), DLCC_ERR_NULL);
    assert_int_equal(dlcc_gpu_run(&prog, in, out, NULL), DLCC_ERR_NULL);
    assert_int_equal(dlcc_gpu_run(&prog, NULL, out, ws), DLCC_ERR_NULL);
    assert_int_equal(dlcc_gpu_run(&prog, in_null, out, ws), DLCC_ERR_NULL);
    DlccGpuProgram bad = { ptx, names, bad_table, NULL };
    assert_int_equal(dlcc_gpu_run(&bad, in, out, ws), DLCC_ERR_PROGRAM);
    /* a kernel parameter that is no buffer, a block of 2048 threads, a grid of 0 */
    static const int64_t bad_arg[] = { DLCC_GPU_VERSION, 2, 1, 1, 1, DLCC_GPU_BUF_INPUT, 0, 16, DLCC_GPU_BUF_OUTPUT,
                                       0, 16, 0, 1, 1, 1, 4, 1, 1, 2, 0, 2 };
    static const int64_t big_block[] = { DLCC_GPU_VERSION, 2, 1, 1, 1, DLCC_GPU_BUF_INPUT, 0, 16, DLCC_GPU_BUF_OUTPUT,
                                         0, 16, 0, 1, 1, 1, 64, 32, 1, 2, 0, 1 };
    static const int64_t no_grid[] = { DLCC_GPU_VERSION, 2, 1, 1, 1, DLCC_GPU_BUF_INPUT, 0, 16, DLCC_GPU_BUF_OUTPUT,
                                       0, 16, 0, 0, 1, 1, 4, 1, 1, 2, 0, 1 };
    const int64_t *const malformed[] = { bad_arg, big_block, no_grid };
    for (int i = 0; i < 3; i++) {
        DlccGpuProgram m = { ptx, names, malformed[i], NULL };
        assert_int_equal(dlcc_gpu_run(&m, in, out, ws), DLCC_ERR_PROGRAM);
    }
    assert_int_equal(dlcc_gpu_release(NULL, ws), DLCC_ERR_NULL);
    assert_int_equal(dlcc_gpu_release(&prog, NULL), DLCC_ERR_NULL);
}

static void test_no_device(void **state)
{
    (void)state;
    if (access("/dev/nvidiactl", F_OK) == 0)
        skip();   /* a real device: the no-device code does not apply */
    static _Alignas(64) unsigned char ws[DLCC_GPU_WORKSPACE_BYTES(2)];
    memset(ws, 0xa5, sizeof ws);   /* garbage: the first run must not trust it */
    float x[4] = { 1, 2, 3, 4 }, y[4] = { 9, 9, 9, 9 };
    const void *in[1] = { x };
    void *out[1] = { y };
    DlccGpuProgram prog = { ptx, names, table, NULL };
    assert_int_equal(dlcc_gpu_run(&prog, in, out, ws), DLCC_ERR_DEVICE);
    assert_int_equal(dlcc_gpu_run(&prog, in, out, ws), DLCC_ERR_DEVICE);   /* again, same workspace */
    assert_float_equal(y[0], 9.0f, 0);   /* outputs untouched */
    assert_int_equal(dlcc_gpu_release(&prog, ws), DLCC_OK);   /* nothing was allocated */
    assert_int_equal(dlcc_gpu_run(&prog, in, out, ws), DLCC_ERR_DEVICE);
    assert_int_equal(dlcc_gpu_release(&prog, ws), DLCC_OK);
    for (size_t i = 0; i < sizeof ws; i++)
        assert_int_equal(ws[i], 0xa5);   /* no driver: the workspace was never written */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_null_and_version),
        cmocka_unit_test(test_no_device),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
