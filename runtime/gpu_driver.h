/* runtime/gpu_driver.h — the CUDA driver entry points that dlcc's GPU runtime
 * (runtime/gpu_runtime.c) calls, declared as NVIDIA's cuda.h declares them
 * but without it: handles (CUcontext, CUmodule, CUfunction, CUstream) are
 * pointers, CUdeviceptr an unsigned 64-bit integer, CUresult and CUjit_option
 * int, and the values below are cuda.h's.  Not installed.  tests/gpu's stub
 * driver implements these entry points (and the others Halide's CUDA runtime
 * resolves), and tests/gpu/cuda_abi_check.c compares the values with cuda.h
 * where the CUDA toolkit is installed. */
#ifndef DLCC_GPU_DRIVER_H
#define DLCC_GPU_DRIVER_H

#include <stddef.h>

typedef int DlccCuResult;                 /* CUresult */
typedef unsigned long long DlccCuDevptr;  /* CUdeviceptr */

enum {
    DLCC_CUDA_SUCCESS = 0,
    DLCC_CUDA_ERROR_INVALID_VALUE = 1,
    DLCC_CUDA_ERROR_OUT_OF_MEMORY = 2,
    DLCC_CUDA_ERROR_INVALID_CONTEXT = 201,
    DLCC_CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222,
    DLCC_CUDA_ERROR_NOT_FOUND = 500,
    DLCC_CUDA_ERROR_NOT_SUPPORTED = 801,
    DLCC_CUDA_ERROR_UNKNOWN = 999,
};

/* cuModuleLoadDataEx options (CUjit_option) */
enum {
    DLCC_CU_JIT_MAX_REGISTERS = 0,                 /* unsigned: registers per thread */
    DLCC_CU_JIT_THREADS_PER_BLOCK = 1,             /* unsigned, in and out: the block size to fit */
    DLCC_CU_JIT_ERROR_LOG_BUFFER = 5,              /* char *: the compiler's error messages */
    DLCC_CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,   /* unsigned, in and out: its size */
};

/* X(field, symbol, parameters): the entry points the runtime calls, by the
 * symbol the driver library exports; every one returns a CUresult. */
#define DLCC_CU_FUNCTIONS(X)                                                                                      \
    X(ctx_push, cuCtxPushCurrent_v2, (void *ctx))                                                                 \
    X(ctx_pop, cuCtxPopCurrent_v2, (void **ctx))                                                                  \
    X(module_load, cuModuleLoadDataEx, (void **module, const void *image, unsigned n_options, int *options,       \
                                        void **values))                                                          \
    X(module_unload, cuModuleUnload, (void *module))                                                             \
    X(module_function, cuModuleGetFunction, (void **function, void *module, const char *name))                   \
    X(launch, cuLaunchKernel, (void *function, unsigned grid_x, unsigned grid_y, unsigned grid_z,                 \
                               unsigned block_x, unsigned block_y, unsigned block_z, unsigned shared_bytes,       \
                               void *stream, void **params, void **extra))                                       \
    X(mem_alloc, cuMemAlloc_v2, (DlccCuDevptr *ptr, size_t bytes))                                               \
    X(mem_free, cuMemFree_v2, (DlccCuDevptr ptr))                                                                \
    X(copy_htod, cuMemcpyHtoD_v2, (DlccCuDevptr dst, const void *src, size_t bytes))                              \
    X(copy_dtoh, cuMemcpyDtoH_v2, (void *dst, DlccCuDevptr src, size_t bytes))

/* Optional: the name of a CUresult, for DLCC_GPU_VERBOSE's messages (CUDA 6.0 and later). */
typedef DlccCuResult (*DlccCuGetErrorName)(DlccCuResult error, const char **name);   /* cuGetErrorName */

#endif
