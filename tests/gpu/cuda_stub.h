/* tests/gpu/cuda_stub.h — what the stub CUDA driver (tests/gpu/cuda_stub.c,
 * built as libcuda.so.1) records.  A test reads it through cuda_stub_state(),
 * looked up with dlsym in the library the GPU runtime loaded. */
#ifndef CUDA_STUB_H
#define CUDA_STUB_H

#include <stdint.h>

enum { CUDA_STUB_MAX_JIT = 16 };

typedef struct CudaStubState {
    int inits;                  /* cuInit calls */
    int contexts;               /* contexts created and not destroyed */
    int ctx_depth;              /* cuCtxPushCurrent (and cuCtxCreate) not matched by cuCtxPopCurrent */
    int allocs, frees;          /* successful cuMemAlloc / cuMemFree calls */
    int live_allocs;            /* allocations not freed (cuCtxDestroy frees its context's) */
    int64_t live_bytes;
    int loads, unloads;         /* successful module loads / cuModuleUnload calls */
    int live_modules;
    int launches;               /* successful cuLaunchKernel calls */
    int bad_calls;              /* calls with an unknown pointer, handle or kernel name, out-of-bounds
                                   copies, calls without a current context, unsupported entry points */
    int failed;                 /* calls failed on purpose: $CUDA_STUB_FAIL names their entry point */
    /* the last cuModuleLoadDataEx: its options (CU_JIT_*) and their values, and what the image says */
    unsigned n_jit;
    int jit_option[CUDA_STUB_MAX_JIT];
    uint64_t jit_value[CUDA_STUB_MAX_JIT];
    unsigned ptx_max_threads;   /* the largest x*y*z of the image's `.maxntid x, y, z` directives */
    int ptx_entries;            /* its `.entry` directives */
    /* the last launch */
    char launch_name[128];
    unsigned launch_grid[3], launch_block[3];
} CudaStubState;

typedef const CudaStubState *(*CudaStubStateFn)(void);   /* cuda_stub_state */

#endif
