/* runtime/dlcc_hetero.h — the contract between a `dlcc -t hetero` host object
 * and dlcc's heterogeneous runtime (libdlcc_runtime, `pkg-config --libs
 * dlcc-runtime`; with --nodes N, libdlcc_runtime_mpi and `pkg-config --libs
 * dlcc-runtime-mpi`).  Prefix: dlcc_hetero_ / DlccHetero.
 *
 * The generated NAME.o holds a constant DlccHeteroProgram: the partitions
 * (each an ordinary compiled model NAME_pK with its NAME_pK_run_ptrs, on a
 * CPU, a GPU or an FPGA), the tensors that cross between them and the
 * layout of the caller's workspace.  Its NAME_run_ptrs calls
 * dlcc_hetero_run, which submits every partition as a StarPU task with the
 * tensors it reads and writes as StarPU data handles and waits for them
 * (docs/targets/hetero.md, "The runtime").  The compiler includes this
 * header only for the layout constants below. */
#ifndef DLCC_HETERO_H
#define DLCC_HETERO_H

#include <stdint.h>

#include "dlcc_abi.h"   /* the return codes: DLCC_OK, DLCC_ERR_NULL, DLCC_ERR_DEVICE, DLCC_ERR_PROGRAM,
                           DLCC_ERR_QUEUE */

#define DLCC_HETERO_VERSION 1

/* A partition's device kind. */
enum { DLCC_HETERO_CPU = 0, DLCC_HETERO_GPU = 1, DLCC_HETERO_FPGA = 2 };
/* Partition flags. */
enum {
    DLCC_HETERO_EMULATED = 1,   /* a GPU or FPGA partition compiled for the host (--emulate) */
    DLCC_HETERO_BOARD = 2,      /* an FPGA partition: dlcc_hetero_fpga_board is asked first */
};
/* What a tensor is to the caller. */
enum { DLCC_HETERO_INPUT = 0, DLCC_HETERO_OUTPUT = 1, DLCC_HETERO_INTERMEDIATE = 2 };

/* table (int64), in order:
 *   [0] DLCC_HETERO_VERSION, [1] n_parts, [2] n_data, [3] n_inputs, [4] n_outputs,
 *   [5] in_flight: the inputs NAME_submit may have in flight (the workspace holds as many slots),
 *   [6] slot_bytes, [7] n_nodes (MPI ranks; 1: one process), [8] n_devices, [9] the model name's
 *       offset in names
 *   per datum (4): kind, index (input / output position; -1), bytes, offset in a slot (-1 unless
 *                  an intermediate)
 *   per partition (10 + n_in + n_out): device kind, flags, device (of the plan), MPI rank,
 *                  workspace bytes, workspace offset in a slot, name offset, device name offset,
 *                  n_in, n_out, then the data it reads (its NAME_pK inputs, in order) and the data it
 *                  writes (its outputs, in order) */
#define DLCC_HETERO_HEADER 10
#define DLCC_HETERO_PER_DATUM 4
#define DLCC_HETERO_PER_PART 10

typedef int32_t (*DlccHeteroEntry)(const void *const inputs[], void *const outputs[], void *workspace);
typedef int32_t (*DlccHeteroRelease)(void *workspace);

/* The program descriptor, emitted as read-only data by codegen/hetero.c. */
typedef struct DlccHeteroProgram {
    const int64_t *table;
    const char *names;                    /* NUL-terminated strings the table points into */
    const DlccHeteroEntry *run;           /* per partition: NAME_pK_run_ptrs */
    const DlccHeteroRelease *release;     /* per partition: NAME_pK_release (a GPU partition on a device), or NULL */
    const double *predicted_us;           /* per partition: dlcc's predicted time on its device (the StarPU
                                             performance model's figure) */
} DlccHeteroProgram;

/* The workspace: a header (the runtime's state, set up by the first call in
 * fresh or zeroed memory), then `in_flight` slots of `slot_bytes`, each
 * holding the intermediates of one input in flight and the workspace of
 * every partition for it; all offsets aligned to DLCC_WORKSPACE_ALIGN. */
#define DLCC_HETERO_WORKSPACE_HEADER 64
#define DLCC_HETERO_WORKSPACE_BYTES(in_flight, slot_bytes) \
    ((int64_t)DLCC_HETERO_WORKSPACE_HEADER + (int64_t)(in_flight) * (int64_t)(slot_bytes))

/* One input: submits it (dlcc_hetero_submit) and waits for it.  Returns
 * DLCC_OK or a DLCC_ERR_*: the first failure of a partition, ERR_DEVICE when
 * StarPU cannot start or run a task, ERR_QUEUE when the workspace has inputs
 * in flight (wait for them first). */
int32_t dlcc_hetero_run(const DlccHeteroProgram *prog, const void *const inputs[], void *const outputs[],
                        void *workspace);
/* Submits one input and returns without waiting; the buffers belong to the
 * runtime until the dlcc_hetero_wait that returns for this input. */
int32_t dlcc_hetero_submit(const DlccHeteroProgram *prog, const void *const inputs[], void *const outputs[],
                           void *workspace);
/* Waits for the oldest input submitted and not waited for; returns its code. */
int32_t dlcc_hetero_wait(const DlccHeteroProgram *prog, void *workspace);
/* Waits for whatever is in flight, releases the partitions' device state
 * and the runtime's state (StarPU is shut down when the last workspace
 * using it is released, if this runtime started it). */
int32_t dlcc_hetero_release(const DlccHeteroProgram *prog, void *workspace);

/* The same over StarPU-MPI (libdlcc_runtime_mpi; --nodes N): every rank of
 * MPI_COMM_WORLD makes the same calls in the same order; rank 0 passes the
 * inputs and outputs, the others may pass NULL arrays.  Rank 0 returns the
 * first failure of any rank, the others their own. */
int32_t dlcc_hetero_mpi_run(const DlccHeteroProgram *prog, const void *const inputs[], void *const outputs[],
                            void *workspace);
int32_t dlcc_hetero_mpi_submit(const DlccHeteroProgram *prog, const void *const inputs[], void *const outputs[],
                               void *workspace);
int32_t dlcc_hetero_mpi_wait(const DlccHeteroProgram *prog, void *workspace);
int32_t dlcc_hetero_mpi_release(const DlccHeteroProgram *prog, void *workspace);

/* The FPGA board hook.  A partition on an FPGA that was not emulated runs, on
 * a StarPU worker, dlcc_hetero_fpga_board(NAME_pK, ...) first: the runtime's
 * own definition is weak and returns DLCC_HETERO_NO_BOARD, and the partition
 * then runs its host wrapper NAME_pK_run_ptrs (NAME_pK.c: the HLS top
 * function as C, i.e. C simulation).  An application that drives a board
 * (XRT, a bare-metal AXI driver) defines this function: DLCC_OK when it ran
 * the partition, DLCC_HETERO_NO_BOARD to fall back to the C function, or a
 * negative code (DLCC_ERR_DEVICE) for a failure, which the run returns. */
#define DLCC_HETERO_NO_BOARD 1
int32_t dlcc_hetero_fpga_board(const char *partition, const void *const inputs[], void *const outputs[],
                               void *workspace);

#endif
