/* runtime/hetero_runtime.c — dlcc_hetero_run, _submit, _wait, _release: a
 * `dlcc -t hetero` program run on StarPU (docs/targets/hetero.md, "The
 * runtime").
 *
 * Every partition is a StarPU codelet whose CPU function calls the
 * partition's NAME_pK_run_ptrs (a GPU partition's drives the GPU through
 * dlcc_gpu_run; an FPGA partition's asks dlcc_hetero_fpga_board first); its
 * performance model is STARPU_PER_ARCH with dlcc's predicted time.  Every
 * input, output and tensor between partitions is a StarPU vector handle of
 * bytes registered for one input in flight; each partition is a task that
 * reads its inputs' handles (STARPU_R) and writes its outputs'
 * (STARPU_W), so StarPU orders the partitions of one input by their data
 * and runs those of different inputs at once.  Tasks are pinned to the
 * worker of their device (execute_on_a_specific_worker) unless
 * DLCC_HETERO_SCHED=starpu leaves the choice to StarPU's scheduler
 * (STARPU_SCHED=dmda uses the performance models).
 *
 * What lives where: a workspace's state (codelets, models, handles, the
 * queue of inputs) is malloc'd at its first use and found through the
 * workspace's header; the tensors between partitions and the partitions'
 * own workspaces are in the workspace.  Process-wide: StarPU's state, and
 * here the count of workspaces using StarPU and whether this runtime
 * started it (one mutex), so that the last dlcc_hetero_release shuts down
 * what this runtime started and nothing else. */
#include "runtime/hetero_impl.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WS_TAG 0x646c636368657431ULL   /* "dlcchet1" */

typedef struct WsHeader {
    uint64_t tag;
    const DlccHeteroProgram *prog;   /* the program that set this workspace up */
    HtState *st;
} WsHeader;
_Static_assert(sizeof(WsHeader) <= DLCC_HETERO_WORKSPACE_HEADER, "workspace header too large");

void dlcc_ht_verbose(const char *fmt, ...)
{
    if (!getenv("DLCC_HETERO_VERBOSE"))
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "dlcc-hetero: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
}

/* The weak default of the FPGA board hook (runtime/dlcc_hetero.h): no
 * board, the partition runs its C function. */
__attribute__((weak)) int32_t dlcc_hetero_fpga_board(const char *partition, const void *const inputs[],
                                                     void *const outputs[], void *workspace)
{
    (void)partition;
    (void)inputs;
    (void)outputs;
    (void)workspace;
    return DLCC_HETERO_NO_BOARD;
}

/* ------------------------------------------------------------ the program */

/* Reads and checks the table into st (parts, data).  DLCC_OK,
 * DLCC_ERR_PROGRAM, or DLCC_ERR_DEVICE out of memory. */
static int32_t read_program(const DlccHeteroProgram *prog, HtState *st)
{
    const int64_t *t = prog->table;
    if (!t || !prog->names || !prog->run || !prog->release || !prog->predicted_us || t[0] != DLCC_HETERO_VERSION)
        return DLCC_ERR_PROGRAM;
    if (t[1] < 1 || t[1] > 100000 || t[2] < 0 || t[2] > 1000000 || t[3] < 0 || t[4] < 0 || t[3] + t[4] > t[2] ||
        t[5] < 1 || t[5] > 1024 || t[6] < 0 || t[7] < 1 || t[8] < 1)
        return DLCC_ERR_PROGRAM;
    st->n_parts = (int)t[1];
    st->n_data = (int)t[2];
    st->n_inputs = (int)t[3];
    st->n_outputs = (int)t[4];
    st->in_flight = (int)t[5];
    st->slot_bytes = t[6];
    st->nodes = (int)t[7];
    st->parts = calloc((size_t)st->n_parts, sizeof *st->parts);
    st->data = calloc((size_t)st->n_data + 1, sizeof *st->data);
    if (!st->parts || !st->data)
        return DLCC_ERR_DEVICE;
    const int64_t *e = &t[DLCC_HETERO_HEADER];
    for (int v = 0; v < st->n_data; v++, e += DLCC_HETERO_PER_DATUM) {
        HtDatum *D = &st->data[v];
        *D = (HtDatum){ (int)e[0], (int)e[1], e[2], e[3] };
        int64_t n_io = D->kind == DLCC_HETERO_INPUT ? st->n_inputs : st->n_outputs;
        if (D->bytes < 0 || (D->kind == DLCC_HETERO_INTERMEDIATE
                                 ? D->offset < 0 || D->offset + D->bytes > st->slot_bytes
                                 : D->kind > DLCC_HETERO_OUTPUT || D->index < 0 || D->index >= n_io))
            return DLCC_ERR_PROGRAM;
    }
    for (int k = 0; k < st->n_parts; k++) {
        HtPart *P = &st->parts[k];
        *P = (HtPart){ .kind = (int)e[0], .flags = (int)e[1], .device = (int)e[2], .rank = (int)e[3],
                       .ws_bytes = e[4], .ws_offset = e[5], .name = prog->names + e[6],
                       .device_name = prog->names + e[7], .n_in = (int)e[8], .n_out = (int)e[9],
                       .in = &e[DLCC_HETERO_PER_PART], .out = &e[DLCC_HETERO_PER_PART + e[8]] };
        if (P->kind < DLCC_HETERO_CPU || P->kind > DLCC_HETERO_FPGA || P->device < 0 || P->device >= t[8] ||
            P->rank < 0 || P->rank >= st->nodes || P->ws_bytes < 0 || P->ws_offset < 0 ||
            P->ws_offset + P->ws_bytes > st->slot_bytes || P->n_in < 0 || P->n_out < 1 || P->n_in > 4096 ||
            P->n_out > 4096 || !prog->run[k])
            return DLCC_ERR_PROGRAM;
        for (int i = 0; i < P->n_in + P->n_out; i++) {
            int64_t v = i < P->n_in ? P->in[i] : P->out[i - P->n_in];
            if (v < 0 || v >= st->n_data || (i >= P->n_in && st->data[v].kind == DLCC_HETERO_INPUT))
                return DLCC_ERR_PROGRAM;
        }
        e += DLCC_HETERO_PER_PART + P->n_in + P->n_out;
    }
    return DLCC_OK;
}

/* ------------------------------------------------------------ codelets */

/* The CPU function of every partition's codelet: the partition's entry
 * point on the task's buffers and the slot's part of the workspace.  A GPU
 * partition's entry point copies to the device, launches and copies back
 * itself (dlcc_gpu_run); an FPGA partition asks the board hook first. */
static void part_run(void *buffers[], void *cl_arg)
{
    HtArg *a = cl_arg;
    const HtPart *P = &a->st->parts[a->part];
    HtSlot *s = a->slot;
    if (__atomic_load_n(&s->rc, __ATOMIC_ACQUIRE) != DLCC_OK)
        return;                                              /* a partition before it failed: the input did */
    for (int i = 0; i < P->n_in; i++)
        a->in[i] = (const void *)STARPU_VECTOR_GET_PTR(buffers[i]);
    for (int i = 0; i < P->n_out; i++)
        a->out[i] = (void *)STARPU_VECTOR_GET_PTR(buffers[P->n_in + i]);
    void *ws = s->mem + P->ws_offset;
    int32_t rc = DLCC_HETERO_NO_BOARD;
    if (P->flags & DLCC_HETERO_BOARD)
        rc = dlcc_hetero_fpga_board(P->name, a->in, a->out, ws);
    if (rc == DLCC_HETERO_NO_BOARD)
        rc = a->st->prog->run[a->part](a->in, a->out, ws);
    if (a->st->trace)
        fprintf(stderr, "dlcc-hetero: %s (%s) on rank %d, StarPU worker %d: %d\n", P->name, P->device_name,
                a->st->rank, starpu_worker_get_id(), (int)rc);
    if (rc != DLCC_OK) {
        int32_t ok = DLCC_OK;
        __atomic_compare_exchange_n(&s->rc, &ok, rc, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
        dlcc_ht_verbose("partition %s on %s returned %d", P->name, P->device_name, (int)rc);
    }
}

/* The performance model's figure: dlcc's predicted time of the partition on
 * its device, in microseconds, the same for every architecture (a CPU
 * worker runs the partition's code, which drives its device). */
static double part_cost(struct starpu_task *task, struct starpu_perfmodel_arch *arch, unsigned nimpl)
{
    (void)arch;
    (void)nimpl;
    const HtArg *a = task->cl_arg;
    return a->st->prog->predicted_us[a->part];
}

static int32_t make_codelets(HtState *st)
{
    size_t n_modes = 0;
    for (int k = 0; k < st->n_parts; k++)
        n_modes += (size_t)(st->parts[k].n_in + st->parts[k].n_out);
    st->cl = calloc((size_t)st->n_parts, sizeof *st->cl);
    st->pm = calloc((size_t)st->n_parts, sizeof *st->pm);
    st->modes = calloc(n_modes + 1, sizeof *st->modes);
    if (!st->cl || !st->pm || !st->modes)
        return DLCC_ERR_DEVICE;
    enum starpu_data_access_mode *m = st->modes;
    for (int k = 0; k < st->n_parts; k++) {
        const HtPart *P = &st->parts[k];
        struct starpu_perfmodel *pm = &st->pm[k];
        pm->type = STARPU_PER_ARCH;
        pm->arch_cost_function = part_cost;
        pm->symbol = strdup(P->name);                        /* starpu_perfmodel_unload_model frees it */
        if (!pm->symbol)
            return DLCC_ERR_DEVICE;
        struct starpu_codelet *cl = &st->cl[k];
        starpu_codelet_init(cl);
        cl->where = STARPU_CPU;
        cl->cpu_funcs[0] = part_run;
#ifdef STARPU_USE_CUDA
        /* A StarPU built with CUDA: a GPU partition may also run on a CUDA worker, with the same
         * function (dlcc_gpu_run copies to and from the device itself), its buffers kept in
         * main memory (docs/targets/hetero.md, "With a CUDA-enabled StarPU"). */
        if (P->kind == DLCC_HETERO_GPU && !(P->flags & DLCC_HETERO_EMULATED) &&
            P->n_in + P->n_out <= STARPU_NMAXBUFS) {
            cl->where |= STARPU_CUDA;
            cl->cuda_funcs[0] = part_run;
            cl->specific_nodes = 1;
            for (int i = 0; i < P->n_in + P->n_out; i++)
                cl->nodes[i] = STARPU_SPECIFIC_NODE_CPU;
        }
#endif
        cl->nbuffers = P->n_in + P->n_out;
        for (int i = 0; i < cl->nbuffers; i++)
            m[i] = i < P->n_in ? STARPU_R : STARPU_W;
        if (cl->nbuffers > STARPU_NMAXBUFS)
            cl->dyn_modes = m;
        else
            memcpy(cl->modes, m, (size_t)cl->nbuffers * sizeof *m);
        m += cl->nbuffers;
        cl->model = pm;
        cl->name = P->name;
    }
    return DLCC_OK;
}

/* Which worker runs each partition: device d of the plan on the d-th CPU
 * worker (round robin), a GPU partition on a CUDA worker when StarPU has
 * one; -1 for all when DLCC_HETERO_SCHED=starpu. */
static int32_t pin_workers(HtState *st)
{
    st->worker = malloc((size_t)st->n_parts * sizeof *st->worker);
    int cpu[STARPU_NMAXWORKERS], cuda[STARPU_NMAXWORKERS];
    if (!st->worker)
        return DLCC_ERR_DEVICE;
    unsigned n_cpu = starpu_worker_get_ids_by_type(STARPU_CPU_WORKER, cpu, STARPU_NMAXWORKERS);
    unsigned n_cuda = starpu_worker_get_ids_by_type(STARPU_CUDA_WORKER, cuda, STARPU_NMAXWORKERS);
    const char *sched = getenv("DLCC_HETERO_SCHED");
    int free_choice = sched && strcmp(sched, "starpu") == 0;
    for (int k = 0; k < st->n_parts; k++) {
        const HtPart *P = &st->parts[k];
        int on_cuda = P->kind == DLCC_HETERO_GPU && !(P->flags & DLCC_HETERO_EMULATED) && n_cuda > 0 &&
                      (st->cl[k].where & STARPU_CUDA);
        if (!on_cuda && n_cpu == 0) {
            dlcc_ht_verbose("StarPU has no CPU worker to run %s", P->name);
            return DLCC_ERR_DEVICE;
        }
        st->worker[k] = free_choice ? -1 : on_cuda ? cuda[(unsigned)P->device % n_cuda] : cpu[(unsigned)P->device % n_cpu];
    }
    return DLCC_OK;
}

/* ------------------------------------------------------------ the state */

/* StarPU keeps a list of the performance models its tasks used, which
 * starpu_shutdown walks: each leaves it before its memory goes. */
static void unload_models(HtState *st)
{
    for (int k = 0; st->pm && k < st->n_parts; k++) {
        if (st->pm[k].is_init)
            starpu_perfmodel_unload_model(&st->pm[k]);       /* frees the symbol too */
        else
            free((char *)st->pm[k].symbol);
        st->pm[k].symbol = NULL;
    }
}

static void state_free(HtState *st)
{
    if (!st)
        return;
    for (int i = 0; st->slots && i < st->in_flight; i++) {
        free(st->slots[i].h);
        free(st->slots[i].task);
        for (int k = 0; st->slots[i].arg && k < st->n_parts; k++) {
            free(st->slots[i].arg[k].in);
            free(st->slots[i].arg[k].out);
        }
        free(st->slots[i].arg);
    }
    free(st->slots);
    free(st->parts);
    free(st->data);
    free(st->cl);
    free(st->pm);
    free(st->modes);
    free(st->worker);
    free(st);
}

static int32_t make_slots(HtState *st, void *ws)
{
    st->slots = calloc((size_t)st->in_flight, sizeof *st->slots);
    if (!st->slots)
        return DLCC_ERR_DEVICE;
    for (int i = 0; i < st->in_flight; i++) {
        HtSlot *s = &st->slots[i];
        s->mem = (unsigned char *)ws + DLCC_HETERO_WORKSPACE_HEADER + (size_t)i * (size_t)st->slot_bytes;
        memset(s->mem, 0, (size_t)st->slot_bytes);           /* fresh partition workspaces (GPU: device state) */
        s->h = calloc((size_t)st->n_data + 1, sizeof *s->h);
        s->task = calloc((size_t)st->n_parts, sizeof *s->task);
        s->arg = calloc((size_t)st->n_parts, sizeof *s->arg);
        if (!s->h || !s->task || !s->arg)
            return DLCC_ERR_DEVICE;
        for (int k = 0; k < st->n_parts; k++) {
            HtArg *a = &s->arg[k];
            *a = (HtArg){ .st = st, .slot = s, .part = k,
                          .in = calloc((size_t)st->parts[k].n_in + 1, sizeof *a->in),
                          .out = calloc((size_t)st->parts[k].n_out + 1, sizeof *a->out) };
            if (!a->in || !a->out)
                return DLCC_ERR_DEVICE;
        }
    }
    return DLCC_OK;
}

/* The workspace's state for prog: set up at its first use (StarPU started,
 * codelets made).  DLCC_ERR_PROGRAM when the program is malformed or the
 * workspace holds another program's state; DLCC_ERR_DEVICE when StarPU does
 * not start (the next call retries). */
static int32_t state_of(const DlccHeteroProgram *prog, void *ws, const HtBackend *be, HtState **out)
{
    WsHeader *h = ws;
    if (h->tag == WS_TAG && h->st) {
        if (h->prog != prog || h->st->be != be) {
            dlcc_ht_verbose("the workspace holds the state of another program: release it first");
            return DLCC_ERR_PROGRAM;
        }
        *out = h->st;
        return DLCC_OK;
    }
    HtState *st = calloc(1, sizeof *st);
    if (!st)
        return DLCC_ERR_DEVICE;
    st->prog = prog;
    st->be = be;
    st->trace = getenv("DLCC_HETERO_TRACE") != NULL;
    int32_t rc = read_program(prog, st);
    if (rc == DLCC_OK)
        rc = make_codelets(st);
    if (rc == DLCC_OK)
        rc = make_slots(st, ws);
    int started = 0;
    if (rc == DLCC_OK && (rc = be->start(st)) == DLCC_OK)
        started = 1;
    if (rc == DLCC_OK)
        rc = pin_workers(st);
    if (rc != DLCC_OK) {
        unload_models(st);
        if (started)
            be->stop(st);
        state_free(st);
        return rc;
    }
    h->tag = WS_TAG;
    h->prog = prog;
    h->st = st;
    *out = st;
    return DLCC_OK;
}

/* ------------------------------------------------------------ StarPU, one process */

static pthread_mutex_t starpu_lock = PTHREAD_MUTEX_INITIALIZER;
static int starpu_users;        /* workspaces holding StarPU state */
static int starpu_ours;         /* this runtime called starpu_init */

static int32_t local_start(HtState *st)
{
    int32_t rc = DLCC_OK;
    pthread_mutex_lock(&starpu_lock);
    if (starpu_users == 0 && !starpu_is_initialized()) {
        struct starpu_conf conf;
        starpu_conf_init(&conf);
        conf.catch_signals = 0;                              /* a library: the application's signals stay its own */
        int err = starpu_init(&conf);
        if (err) {
            dlcc_ht_verbose("starpu_init failed: %s", strerror(-err));
            rc = DLCC_ERR_DEVICE;
        } else {
            starpu_ours = 1;
        }
    }
    if (rc == DLCC_OK)
        starpu_users++;
    pthread_mutex_unlock(&starpu_lock);
    st->rank = 0;
    return rc;
}

static void local_stop(HtState *st)
{
    (void)st;
    pthread_mutex_lock(&starpu_lock);
    if (--starpu_users == 0 && starpu_ours) {
        starpu_shutdown();
        starpu_ours = 0;
    }
    pthread_mutex_unlock(&starpu_lock);
}

static int32_t local_attach(HtState *st, HtSlot *s, int v, void *ptr)
{
    (void)st;
    starpu_vector_data_register(&s->h[v], STARPU_MAIN_RAM, (uintptr_t)ptr, (uint32_t)(st->data[v].bytes > 0 ? st->data[v].bytes : 1), 1);
    return DLCC_OK;
}

struct starpu_task *dlcc_ht_task(HtState *st, HtSlot *s, int k)
{
    struct starpu_task *t = starpu_task_create();
    if (!t)
        return NULL;
    const HtPart *P = &st->parts[k];
    int nb = P->n_in + P->n_out;
    t->cl = &st->cl[k];
    t->cl_arg = &s->arg[k];
    t->detach = 0;                                           /* the slot waits for it */
    if (nb > STARPU_NMAXBUFS && !(t->dyn_handles = malloc((size_t)nb * sizeof *t->dyn_handles))) {
        starpu_task_destroy(t);
        return NULL;
    }
    for (int i = 0; i < nb; i++)
        STARPU_TASK_SET_HANDLE(t, s->h[i < P->n_in ? P->in[i] : P->out[i - P->n_in]], i);
    if (st->worker[k] >= 0) {
        t->execute_on_a_specific_worker = 1;
        t->workerid = (unsigned)st->worker[k];
    }
    return t;
}

static int32_t local_launch(HtState *st, HtSlot *s, int k)
{
    struct starpu_task *t = dlcc_ht_task(st, s, k);
    if (!t)
        return DLCC_ERR_DEVICE;
    int err = starpu_task_submit(t);
    if (err) {
        dlcc_ht_verbose("starpu_task_submit (%s) failed: %s", st->parts[k].name, strerror(-err));
        starpu_task_destroy(t);
        return DLCC_ERR_DEVICE;
    }
    s->task[k] = t;
    return DLCC_OK;
}

static int32_t local_settle(HtState *st, HtSlot *s)
{
    int32_t rc = DLCC_OK;
    for (int k = 0; k < st->n_parts; k++)
        if (s->task[k]) {
            if (starpu_task_wait(s->task[k]))
                rc = DLCC_ERR_DEVICE;
            s->task[k] = NULL;                               /* destroyed by the wait (task->destroy) */
        }
    for (int v = 0; v < st->n_data; v++)
        if (s->h[v]) {
            starpu_data_unregister(s->h[v]);                 /* the data is in main memory: its home */
            s->h[v] = NULL;
        }
    return rc;
}

static const HtBackend local_backend = { "StarPU", local_start, local_stop, local_attach, local_launch,
                                         local_settle };

/* ------------------------------------------------------------ entry points */

/* The datum's memory for this input: the caller's, or the slot's. */
static void *datum_ptr(const HtState *st, const HtSlot *s, int v, const void *const inputs[], void *const outputs[])
{
    const HtDatum *D = &st->data[v];
    if (D->kind == DLCC_HETERO_INPUT)
        return inputs ? (void *)inputs[D->index] : NULL;
    if (D->kind == DLCC_HETERO_OUTPUT)
        return outputs ? outputs[D->index] : NULL;
    return s->mem + D->offset;
}

int32_t dlcc_ht_submit(const DlccHeteroProgram *prog, const void *const inputs[], void *const outputs[], void *ws,
                       const HtBackend *be)
{
    if (!prog || !ws)
        return DLCC_ERR_NULL;
    HtState *st;
    int32_t rc = state_of(prog, ws, be, &st);
    if (rc)
        return rc;
    if (st->rank == 0) {                                     /* MPI: the caller's buffers are on rank 0 */
        if ((st->n_inputs > 0 && !inputs) || (st->n_outputs > 0 && !outputs))
            return DLCC_ERR_NULL;
        for (int i = 0; i < st->n_inputs; i++)
            if (!inputs[i])
                return DLCC_ERR_NULL;
        for (int i = 0; i < st->n_outputs; i++)
            if (!outputs[i])
                return DLCC_ERR_NULL;
    }
    if (st->submitted - st->waited >= (uint64_t)st->in_flight)
        return DLCC_ERR_QUEUE;
    HtSlot *s = &st->slots[st->submitted % (uint64_t)st->in_flight];
    s->rc = DLCC_OK;
    for (int v = 0; v < st->n_data && !rc; v++)
        rc = be->attach(st, s, v, datum_ptr(st, s, v, inputs, outputs));
    for (int k = 0; k < st->n_parts && !rc; k++)
        rc = be->launch(st, s, k);
    if (rc) {                                                /* nothing of this input stays in flight */
        be->settle(st, s);
        return rc;
    }
    s->busy = 1;
    st->submitted++;
    return DLCC_OK;
}

int32_t dlcc_ht_wait(const DlccHeteroProgram *prog, void *ws, const HtBackend *be)
{
    if (!prog || !ws)
        return DLCC_ERR_NULL;
    WsHeader *h = ws;
    if (h->tag != WS_TAG || !h->st || h->prog != prog || h->st->be != be)
        return DLCC_ERR_QUEUE;                               /* nothing was submitted with this workspace */
    HtState *st = h->st;
    if (st->waited == st->submitted)
        return DLCC_ERR_QUEUE;
    HtSlot *s = &st->slots[st->waited % (uint64_t)st->in_flight];
    int32_t rc = be->settle(st, s);
    st->waited++;
    s->busy = 0;
    int32_t failed = __atomic_load_n(&s->rc, __ATOMIC_ACQUIRE);
    return failed != DLCC_OK ? failed : rc;
}

int32_t dlcc_ht_run(const DlccHeteroProgram *prog, const void *const inputs[], void *const outputs[], void *ws,
                    const HtBackend *be)
{
    if (ws) {
        WsHeader *h = ws;
        if (h->tag == WS_TAG && h->st && h->prog == prog && h->st->submitted != h->st->waited)
            return DLCC_ERR_QUEUE;                           /* inputs of NAME_submit are in flight */
    }
    int32_t rc = dlcc_ht_submit(prog, inputs, outputs, ws, be);
    return rc ? rc : dlcc_ht_wait(prog, ws, be);
}

int32_t dlcc_ht_release(const DlccHeteroProgram *prog, void *ws, const HtBackend *be)
{
    if (!prog || !ws)
        return DLCC_ERR_NULL;
    WsHeader *h = ws;
    if (h->tag != WS_TAG || !h->st || h->prog != prog || h->st->be != be)
        return DLCC_OK;                                      /* holds nothing of prog's */
    HtState *st = h->st;
    int32_t rc = DLCC_OK;
    while (st->waited != st->submitted)
        dlcc_ht_wait(prog, ws, be);                          /* their results are the caller's loss */
    for (int i = 0; i < st->in_flight; i++)
        for (int k = 0; k < st->n_parts; k++)
            if (prog->release[k] && prog->release[k](st->slots[i].mem + st->parts[k].ws_offset) != DLCC_OK)
                rc = DLCC_ERR_DEVICE;
    unload_models(st);
    be->stop(st);
    state_free(st);
    memset(h, 0, sizeof *h);
    return rc;
}

int32_t dlcc_hetero_run(const DlccHeteroProgram *prog, const void *const inputs[], void *const outputs[],
                        void *workspace)
{
    return dlcc_ht_run(prog, inputs, outputs, workspace, &local_backend);
}

int32_t dlcc_hetero_submit(const DlccHeteroProgram *prog, const void *const inputs[], void *const outputs[],
                           void *workspace)
{
    return dlcc_ht_submit(prog, inputs, outputs, workspace, &local_backend);
}

int32_t dlcc_hetero_wait(const DlccHeteroProgram *prog, void *workspace)
{
    return dlcc_ht_wait(prog, workspace, &local_backend);
}

int32_t dlcc_hetero_release(const DlccHeteroProgram *prog, void *workspace)
{
    return dlcc_ht_release(prog, workspace, &local_backend);
}
