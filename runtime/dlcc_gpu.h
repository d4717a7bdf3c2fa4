/* runtime/dlcc_gpu.h — the contract between a `dlcc -t gpu` host object and
 * dlcc's GPU runtime (libdlcc_runtime, `pkg-config --libs dlcc-runtime`).
 * Prefix: dlcc_gpu_ / DlccGpu.
 *
 * The generated object holds the PTX of every kernel and a constant
 * DlccGpuProgram describing the device buffers and the launches; its
 * NAME_run_ptrs calls dlcc_gpu_run and its NAME_release dlcc_gpu_release,
 * which call the CUDA driver in the context of the Halide runtime's CUDA
 * interface (docs/targets/gpu.md, "Host object and runtime").  The compiler
 * includes this header only for the layout constants below. */
#ifndef DLCC_GPU_H
#define DLCC_GPU_H

#include <stdint.h>

#include "dlcc_abi.h"   /* the return codes: DLCC_OK, DLCC_ERR_NULL, DLCC_ERR_DEVICE (details on
                           stderr when DLCC_GPU_VERBOSE is set in the environment), DLCC_ERR_PROGRAM */

#define DLCC_GPU_VERSION 2

/* Device buffer kinds (table entries, see below). */
enum { DLCC_GPU_BUF_INPUT = 0, DLCC_GPU_BUF_OUTPUT = 1, DLCC_GPU_BUF_CONST = 2, DLCC_GPU_BUF_WORKSPACE = 3 };

/* The program descriptor, emitted as read-only data by codegen/ptx.c.
 *
 * table (int64), in order:
 *   [0] DLCC_GPU_VERSION, [1] n_bufs, [2] n_kernels, [3] n_inputs, [4] n_outputs
 *   per buffer (3): kind, index (input/output position, or the position in consts[]), bytes
 *   per kernel (8 + n_args): name offset in names, grid x y z, block x y z, n_args,
 *                            then n_args buffer numbers (the kernel's parameters, in order) */
typedef struct DlccGpuProgram {
    const char *ptx;              /* NUL-terminated PTX module text */
    const char *names;            /* NUL-separated kernel entry names */
    const int64_t *table;
    const void *const *consts;    /* host copies of the constant buffers */
} DlccGpuProgram;

/* The workspace of a GPU model: the device state, not tensors (intermediate
 * tensors live in device memory).  Its first use is recognised by a tag and
 * the program's address; it then holds the CUDA context it was set up in,
 * the loaded CUDA module and one device allocation per buffer, made once and
 * reused by later runs.  Layout: a 64-byte header, then per buffer its
 * device pointer (a CUdeviceptr, 8 bytes). */
#define DLCC_GPU_WORKSPACE_HEADER 64
#define DLCC_GPU_WORKSPACE_PER_BUF 8
#define DLCC_GPU_WORKSPACE_BYTES(n_bufs) \
    ((int64_t)DLCC_GPU_WORKSPACE_HEADER + (int64_t)DLCC_GPU_WORKSPACE_PER_BUF * (int64_t)(n_bufs))

/* Runs the program: copies inputs to the device, launches the kernels in
 * order, copies outputs back.  Returns DLCC_OK or a DLCC_ERR_* (dlcc_abi.h);
 * after DLCC_ERR_DEVICE the workspace stays consistent and a later run
 * retries what failed (loading the module, an allocation, a copy, a launch). */
int32_t dlcc_gpu_run(const DlccGpuProgram *prog, const void *const inputs[], void *const outputs[],
                     void *workspace);

/* Frees the device allocations and unloads the CUDA module a workspace holds
 * for prog; the workspace is then fresh again.  DLCC_OK (also when it holds
 * nothing of prog's), DLCC_ERR_NULL, or DLCC_ERR_DEVICE when the driver
 * failed to free something (the workspace is fresh all the same). */
int32_t dlcc_gpu_release(const DlccGpuProgram *prog, void *workspace);

#endif
