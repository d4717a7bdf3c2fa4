/* runtime/hetero_impl.h — private to the heterogeneous runtime
 * (hetero_runtime.c: the program, the workspace, the StarPU codelets and
 * tasks; hetero_mpi.c: the same over StarPU-MPI).  docs/targets/hetero.md,
 * "The runtime". */
#ifndef DLCC_HETERO_IMPL_H
#define DLCC_HETERO_IMPL_H

#include "runtime/dlcc_hetero.h"

#include <starpu.h>

/* A partition of the program, read from its table. */
typedef struct HtPart {
    int kind, flags, device, rank;
    int64_t ws_bytes, ws_offset;
    const char *name, *device_name;
    int n_in, n_out;
    const int64_t *in, *out;         /* data ids */
} HtPart;

typedef struct HtDatum {
    int kind, index;
    int64_t bytes, offset;
} HtDatum;

typedef struct HtState HtState;
typedef struct HtSlot HtSlot;

/* What a codelet gets as cl_arg: the partition and the input in flight. */
typedef struct HtArg {
    HtState *st;
    HtSlot *slot;
    int part;
    const void **in;                 /* scratch: its inputs' pointers for NAME_pK_run_ptrs */
    void **out;
} HtArg;

/* One input in flight: its tasks, its data handles, the first failure. */
struct HtSlot {
    int busy;                        /* submitted, not yet waited for */
    int32_t rc;                      /* the first failure of a partition (atomic), or DLCC_OK */
    unsigned char *mem;              /* its part of the workspace: intermediates, partitions' workspaces */
    starpu_data_handle_t *h;         /* per datum (NULL: not registered) */
    struct starpu_task **task;       /* per partition (NULL: not submitted here) */
    HtArg *arg;                      /* per partition */
};

/* How a program's tasks reach StarPU: one process (hetero_runtime.c) or
 * StarPU-MPI (hetero_mpi.c).  Each returns DLCC_OK or a DLCC_ERR_*. */
typedef struct HtBackend {
    const char *name;
    int32_t (*start)(HtState *st);                    /* StarPU running; st->rank set */
    void (*stop)(HtState *st);
    int32_t (*attach)(HtState *st, HtSlot *s, int v, void *ptr);   /* datum v's handle (ptr NULL: not here) */
    int32_t (*launch)(HtState *st, HtSlot *s, int k);               /* partition k's task */
    int32_t (*settle)(HtState *st, HtSlot *s);                      /* the slot's tasks done, handles gone */
} HtBackend;

/* The runtime's state of one workspace (malloc'd at its first use). */
struct HtState {
    const DlccHeteroProgram *prog;
    const HtBackend *be;
    int n_parts, n_data, n_inputs, n_outputs, in_flight, nodes, rank;
    int64_t slot_bytes;
    HtPart *parts;
    HtDatum *data;
    struct starpu_codelet *cl;       /* per partition */
    struct starpu_perfmodel *pm;     /* per partition: seeded from dlcc's prediction */
    enum starpu_data_access_mode *modes;   /* all partitions' access modes (dyn_modes), in order */
    int *worker;                     /* per partition: the StarPU worker it is pinned to, or -1 */
    HtSlot *slots;
    uint64_t submitted, waited;      /* inputs submitted and waited for: the FIFO of slots */
    int64_t tag_base;                /* hetero_mpi.c: the first of this workspace's MPI tags */
    int trace;                       /* DLCC_HETERO_TRACE: every partition run is printed on stderr */
};

/* The entry points over a backend (hetero_runtime.c). */
int32_t dlcc_ht_run(const DlccHeteroProgram *prog, const void *const inputs[], void *const outputs[], void *ws,
                    const HtBackend *be);
int32_t dlcc_ht_submit(const DlccHeteroProgram *prog, const void *const inputs[], void *const outputs[], void *ws,
                       const HtBackend *be);
int32_t dlcc_ht_wait(const DlccHeteroProgram *prog, void *ws, const HtBackend *be);
int32_t dlcc_ht_release(const DlccHeteroProgram *prog, void *ws, const HtBackend *be);

/* A task of partition k for slot s, its handles set, not submitted (the
 * backends submit it); NULL out of memory. */
struct starpu_task *dlcc_ht_task(HtState *st, HtSlot *s, int k);
/* DLCC_HETERO_VERBOSE=1: says why a call fails, on stderr. */
void dlcc_ht_verbose(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
