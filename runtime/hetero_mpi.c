/* runtime/hetero_mpi.c — dlcc_hetero_mpi_*: a `dlcc -t hetero --nodes N`
 * program over StarPU-MPI (docs/targets/hetero.md, "Several processes"), in
 * libdlcc_runtime_mpi (pkg-config dlcc-runtime-mpi), which links MPI.
 *
 * Every rank of MPI_COMM_WORLD makes the same calls (SPMD).  Each datum is
 * registered on every rank with StarPU-MPI (starpu_mpi_data_register: an MPI
 * tag and its owner): the model's inputs are owned by rank 0, where they are
 * the caller's buffers; a tensor a partition writes is owned by the rank
 * that partition is placed on.  Each partition is a task built on every rank
 * with starpu_mpi_task_build (STARPU_EXECUTE_ON_NODE: its rank), which posts
 * the sends and receives of its data; the rank that runs it submits it.  At
 * the end every output is brought to rank 0 (starpu_mpi_get_data_on_node),
 * and so is every rank's first failure, so that rank 0 returns the first
 * failure of any rank.
 *
 * Process-wide here, besides StarPU's and StarPU-MPI's state: the count of
 * workspaces using StarPU-MPI and the next workspace's first MPI tag (one
 * mutex).  Tags are handed out in the order workspaces are first used, which
 * is the same on every rank when every rank makes the same calls. */
#include "runtime/hetero_impl.h"

#include <pthread.h>
#include <starpu_mpi.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t mpi_lock = PTHREAD_MUTEX_INITIALIZER;
static int mpi_users;
static int64_t mpi_next_tag = 1;

/* Tags of slot i: its data, then one per rank for the failures. */
static int64_t tags_per_slot(const HtState *st) { return (int64_t)st->n_data + st->nodes; }

static int64_t tag_of(const HtState *st, const HtSlot *s, int64_t j)
{
    return st->tag_base + (int64_t)(s - st->slots) * tags_per_slot(st) + j;
}

static int32_t mpi_start(HtState *st)
{
    int32_t rc = DLCC_OK;
    pthread_mutex_lock(&mpi_lock);
    if (mpi_users == 0) {
        int init = 0;
        MPI_Initialized(&init);
        struct starpu_conf conf;
        starpu_conf_init(&conf);
        conf.catch_signals = 0;
        if (starpu_is_initialized()) {
            dlcc_ht_verbose("StarPU runs already without MPI: a program of --nodes N needs StarPU-MPI");
            rc = DLCC_ERR_DEVICE;
        } else if (starpu_mpi_init_conf(NULL, NULL, !init, MPI_COMM_WORLD, &conf)) {
            dlcc_ht_verbose("starpu_mpi_init_conf failed");
            rc = DLCC_ERR_DEVICE;
        }
    }
    if (rc == DLCC_OK) {
        mpi_users++;
        st->tag_base = mpi_next_tag;
        mpi_next_tag += (int64_t)st->in_flight * tags_per_slot(st);
    }
    pthread_mutex_unlock(&mpi_lock);
    if (rc)
        return rc;
    int size = 0;
    starpu_mpi_comm_rank(MPI_COMM_WORLD, &st->rank);
    starpu_mpi_comm_size(MPI_COMM_WORLD, &size);
    if (size < st->nodes) {
        dlcc_ht_verbose("the program was compiled for %d MPI ranks, MPI_COMM_WORLD has %d", st->nodes, size);
        pthread_mutex_lock(&mpi_lock);
        if (--mpi_users == 0)
            starpu_mpi_shutdown();
        pthread_mutex_unlock(&mpi_lock);
        return DLCC_ERR_DEVICE;
    }
    return DLCC_OK;
}

static void mpi_stop(HtState *st)
{
    (void)st;
    pthread_mutex_lock(&mpi_lock);
    if (--mpi_users == 0)
        starpu_mpi_shutdown();
    pthread_mutex_unlock(&mpi_lock);
}

/* The rank owning datum v: rank 0 for the model's inputs, else its writer's. */
static int owner(const HtState *st, int v)
{
    for (int k = 0; k < st->n_parts; k++)
        for (int i = 0; i < st->parts[k].n_out; i++)
            if (st->parts[k].out[i] == v)
                return st->parts[k].rank;
    return 0;
}

static int32_t mpi_attach(HtState *st, HtSlot *s, int v, void *ptr)
{
    uint32_t n = (uint32_t)(st->data[v].bytes > 0 ? st->data[v].bytes : 1);
    if (ptr)                                                 /* the caller's buffer (rank 0), or the slot's */
        starpu_vector_data_register(&s->h[v], STARPU_MAIN_RAM, (uintptr_t)ptr, n, 1);
    else                                                     /* allocated by StarPU where it is needed */
        starpu_vector_data_register(&s->h[v], -1, 0, n, 1);
    starpu_mpi_data_register(s->h[v], tag_of(st, s, v), owner(st, v));
    return DLCC_OK;
}

static int32_t mpi_launch(HtState *st, HtSlot *s, int k)
{
    const HtPart *P = &st->parts[k];
    int nb = P->n_in + P->n_out;
    struct starpu_data_descr *descr = malloc((size_t)nb * sizeof *descr);
    if (!descr)
        return DLCC_ERR_DEVICE;
    for (int i = 0; i < nb; i++)
        descr[i] = (struct starpu_data_descr){ s->h[i < P->n_in ? P->in[i] : P->out[i - P->n_in]],
                                               i < P->n_in ? STARPU_R : STARPU_W };
    int32_t rc = DLCC_OK;
    struct starpu_task *t = starpu_mpi_task_build(MPI_COMM_WORLD, &st->cl[k], STARPU_DATA_MODE_ARRAY, descr, nb,
                                                  STARPU_EXECUTE_ON_NODE, P->rank, 0);
    if (t) {                                                 /* this rank runs it */
        free(t->cl_arg_free ? t->cl_arg : NULL);             /* the task builder's packed arguments: none given */
        t->cl_arg = &s->arg[k];
        t->cl_arg_free = 0;                                  /* the slot's, not StarPU's */
        t->detach = 0;
        if (st->worker[k] >= 0) {
            t->execute_on_a_specific_worker = 1;
            t->workerid = (unsigned)st->worker[k];
        }
        if (starpu_task_submit(t)) {
            dlcc_ht_verbose("starpu_task_submit (%s) failed", P->name);
            starpu_task_destroy(t);
            rc = DLCC_ERR_DEVICE;
        } else {
            s->task[k] = t;
        }
    }
    starpu_mpi_task_post_build(MPI_COMM_WORLD, &st->cl[k], STARPU_DATA_MODE_ARRAY, descr, nb, STARPU_EXECUTE_ON_NODE,
                               P->rank, 0);
    free(descr);
    return rc;
}

/* Rank 0 learns every rank's first failure (through StarPU-MPI, whose
 * thread is the one making MPI calls); the other ranks keep their own. */
static void gather_failures(HtState *st, HtSlot *s)
{
    for (int r = 1; r < st->nodes; r++) {
        starpu_data_handle_t h;
        if (st->rank == r)
            starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&s->rc, sizeof s->rc);
        else
            starpu_variable_data_register(&h, -1, 0, sizeof s->rc);
        starpu_mpi_data_register(h, tag_of(st, s, st->n_data + r), r);
        starpu_mpi_get_data_on_node(MPI_COMM_WORLD, h, 0);
        if (st->rank == 0 && starpu_data_acquire(h, STARPU_R) == 0) {
            int32_t theirs = *(int32_t *)starpu_variable_get_local_ptr(h);
            starpu_data_release(h);
            if (s->rc == DLCC_OK && theirs != DLCC_OK)
                s->rc = theirs;
        }
        starpu_data_unregister(h);
    }
}

static int32_t mpi_settle(HtState *st, HtSlot *s)
{
    int32_t rc = DLCC_OK;
    for (int k = 0; k < st->n_parts; k++)
        if (s->task[k]) {
            if (starpu_task_wait(s->task[k]))
                rc = DLCC_ERR_DEVICE;
            s->task[k] = NULL;
        }
    for (int v = 0; v < st->n_data; v++)                     /* the outputs to rank 0, the caller's buffers */
        if (s->h[v] && st->data[v].kind == DLCC_HETERO_OUTPUT && owner(st, v) != 0)
            starpu_mpi_get_data_on_node(MPI_COMM_WORLD, s->h[v], 0);
    gather_failures(st, s);
    for (int v = 0; v < st->n_data; v++)
        if (s->h[v]) {
            starpu_data_unregister(s->h[v]);
            s->h[v] = NULL;
        }
    return rc;
}

static const HtBackend mpi_backend = { "StarPU-MPI", mpi_start, mpi_stop, mpi_attach, mpi_launch, mpi_settle };

int32_t dlcc_hetero_mpi_run(const DlccHeteroProgram *prog, const void *const inputs[], void *const outputs[],
                            void *workspace)
{
    return dlcc_ht_run(prog, inputs, outputs, workspace, &mpi_backend);
}

int32_t dlcc_hetero_mpi_submit(const DlccHeteroProgram *prog, const void *const inputs[], void *const outputs[],
                               void *workspace)
{
    return dlcc_ht_submit(prog, inputs, outputs, workspace, &mpi_backend);
}

int32_t dlcc_hetero_mpi_wait(const DlccHeteroProgram *prog, void *workspace)
{
    return dlcc_ht_wait(prog, workspace, &mpi_backend);
}

int32_t dlcc_hetero_mpi_release(const DlccHeteroProgram *prog, void *workspace)
{
    return dlcc_ht_release(prog, workspace, &mpi_backend);
}
