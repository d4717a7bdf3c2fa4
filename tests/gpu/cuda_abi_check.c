/* tests/gpu/cuda_abi_check.c — compiled into the stub driver where NVIDIA's
 * cuda.h is installed: runtime/gpu_driver.h's values and entry point names
 * are cuda.h's (it has no code: a mismatch stops the build). */
#include <cuda.h>

#include "runtime/gpu_driver.h"

#define SAME(name) _Static_assert((int)DLCC_##name == (int)name, #name);
SAME(CUDA_SUCCESS)
SAME(CUDA_ERROR_INVALID_VALUE)
SAME(CUDA_ERROR_OUT_OF_MEMORY)
SAME(CUDA_ERROR_INVALID_CONTEXT)
SAME(CUDA_ERROR_UNSUPPORTED_PTX_VERSION)
SAME(CUDA_ERROR_NOT_FOUND)
SAME(CUDA_ERROR_NOT_SUPPORTED)
SAME(CUDA_ERROR_UNKNOWN)
SAME(CU_JIT_MAX_REGISTERS)
SAME(CU_JIT_THREADS_PER_BLOCK)
SAME(CU_JIT_ERROR_LOG_BUFFER)
SAME(CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
_Static_assert(sizeof(DlccCuDevptr) == sizeof(CUdeviceptr), "CUdeviceptr");
_Static_assert(sizeof(DlccCuResult) == sizeof(CUresult), "CUresult");

/* The symbols the runtime looks up are those cuda.h declares (it maps cuMemAlloc to cuMemAlloc_v2, ...). */
#define DECLARED(field, symbol, params) \
    _Static_assert(sizeof(&symbol) == sizeof(void (*)(void)), #symbol " is declared by cuda.h");
DLCC_CU_FUNCTIONS(DECLARED)
