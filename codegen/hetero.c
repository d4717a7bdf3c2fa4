/* codegen/hetero.c — the host object of a model partitioned across devices
 * (-t hetero, docs/targets/hetero.md): the constant program descriptor of
 * runtime/dlcc_hetero.h and the entry points that hand it to the runtime,
 * as codegen/ptx.c does for one GPU program. */
#include "codegen/cg_impl.h"
#include "runtime/dlcc_hetero.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The table of runtime/dlcc_hetero.h and the strings it points into. */
static int64_t *hetero_table(const CgHeteroProgram *p, UtilBuf *names, size_t *n)
{
    size_t cap = DLCC_HETERO_HEADER + (size_t)p->n_data * DLCC_HETERO_PER_DATUM;
    for (int k = 0; k < p->n_parts; k++)
        cap += DLCC_HETERO_PER_PART + (size_t)p->parts[k].n_in + (size_t)p->parts[k].n_out;
    int64_t *t = calloc(cap, sizeof *t);
    if (!t)
        return NULL;
    size_t i = 0;
    t[i++] = DLCC_HETERO_VERSION;
    t[i++] = p->n_parts;
    t[i++] = p->n_data;
    t[i++] = p->n_inputs;
    t[i++] = p->n_outputs;
    t[i++] = p->in_flight;
    t[i++] = p->slot_bytes;
    t[i++] = p->nodes > 1 ? p->nodes : 1;
    t[i++] = p->n_devices;
    t[i++] = (int64_t)names->len;
    util_buf_put(names, p->model ? p->model : p->name, strlen(p->model ? p->model : p->name) + 1);
    for (int v = 0; v < p->n_data; v++) {
        t[i++] = p->data[v].kind;
        t[i++] = p->data[v].index;
        t[i++] = p->data[v].bytes;
        t[i++] = p->data[v].offset;
    }
    for (int k = 0; k < p->n_parts; k++) {
        const CgHeteroPart *P = &p->parts[k];
        t[i++] = P->kind;
        t[i++] = P->flags;
        t[i++] = P->device_index;
        t[i++] = P->rank;
        t[i++] = P->ws_bytes;
        t[i++] = P->ws_offset;
        t[i++] = (int64_t)names->len;
        util_buf_put(names, P->name, strlen(P->name) + 1);
        t[i++] = (int64_t)names->len;
        util_buf_put(names, P->device, strlen(P->device) + 1);
        t[i++] = P->n_in;
        t[i++] = P->n_out;
        for (int a = 0; a < P->n_in; a++)
            t[i++] = P->in[a];
        for (int a = 0; a < P->n_out; a++)
            t[i++] = P->out[a];
    }
    *n = i;
    return t;
}

/* An array of n pointers (NULL entries: null pointers) as a private constant. */
static LLVMValueRef pointer_array(CgCtx *h, LLVMValueRef *v, int n, const char *name)
{
    if (n == 0)
        v[n++] = LLVMConstNull(h->t_ptr);
    return cg_private_const(h, LLVMConstArray2(h->t_ptr, v, (uint64_t)n), name, 8);
}

static int host_module(CgCtx *h, const CgHeteroProgram *p)
{
    UtilBuf names;
    util_buf_init(&names);
    size_t n_table = 0;
    int64_t *table = hetero_table(p, &names, &n_table);
    size_t nv = n_table > (size_t)p->n_parts ? n_table : (size_t)p->n_parts;
    LLVMValueRef *vals = malloc((nv + 1) * sizeof *vals);
    if (!table || !vals || names.oom) {
        free(table);
        free(vals);
        util_buf_free(&names);
        return cg_fail(h, "out of memory");
    }
    char name[300];
    for (size_t i = 0; i < n_table; i++)
        vals[i] = LLVMConstInt(h->t_i64, (unsigned long long)table[i], 1);
    snprintf(name, sizeof name, "%s.table", p->name);
    LLVMValueRef g_table = cg_private_const(h, LLVMConstArray2(h->t_i64, vals, n_table), name, 8);
    snprintf(name, sizeof name, "%s.names", p->name);
    LLVMValueRef g_names =
        cg_private_const(h, LLVMConstStringInContext(h->ctx, names.data, (unsigned)names.len, 1), name, 1);

    /* the partitions' entry points, resolved when the application links every file of the folder */
    LLVMTypeRef run_params[3] = { h->t_ptr, h->t_ptr, h->t_ptr };
    LLVMTypeRef run_t = LLVMFunctionType(h->t_i32, run_params, 3, 0), rel_t = LLVMFunctionType(h->t_i32, &h->t_ptr, 1, 0);
    for (int k = 0; k < p->n_parts; k++) {
        snprintf(name, sizeof name, "%s_run_ptrs", p->parts[k].name);
        vals[k] = LLVMAddFunction(h->mod, name, run_t);
    }
    snprintf(name, sizeof name, "%s.run", p->name);
    LLVMValueRef g_run = pointer_array(h, vals, p->n_parts, name);
    for (int k = 0; k < p->n_parts; k++) {
        snprintf(name, sizeof name, "%s_release", p->parts[k].name);
        vals[k] = p->parts[k].release ? LLVMAddFunction(h->mod, name, rel_t) : LLVMConstNull(h->t_ptr);
    }
    snprintf(name, sizeof name, "%s.release", p->name);
    LLVMValueRef g_release = pointer_array(h, vals, p->n_parts, name);
    for (int k = 0; k < p->n_parts; k++)
        vals[k] = LLVMConstReal(h->t_f64, p->parts[k].predicted_us);
    if (p->n_parts == 0)
        vals[0] = LLVMConstReal(h->t_f64, 0);
    snprintf(name, sizeof name, "%s.predicted_us", p->name);
    LLVMValueRef g_pred = cg_private_const(
        h, LLVMConstArray2(h->t_f64, vals, (uint64_t)(p->n_parts ? p->n_parts : 1)), name, 8);
    free(vals);
    free(table);
    util_buf_free(&names);

    LLVMValueRef fields[5] = { g_table, g_names, g_run, g_release, g_pred };
    snprintf(name, sizeof name, "%s.program", p->name);
    LLVMValueRef prog = cg_private_const(h, LLVMConstStructInContext(h->ctx, fields, 5, 0), name, 8);

    /* NAME_run's structs hold the pointers in order: they are the arrays */
    const char *rt = p->nodes > 1 ? "dlcc_hetero_mpi_" : "dlcc_hetero_";
    static const struct { const char *entry, *callee; int n; } fwd[] = {
        { "run_ptrs", "run", 3 }, { "run", "run", 3 }, { "submit", "submit", 3 }, { "wait", "wait", 1 },
        { "release", "release", 1 },
    };
    for (size_t e = 0; e < sizeof fwd / sizeof *fwd; e++) {
        char callee[64];
        snprintf(name, sizeof name, "%s_%s", p->name, fwd[e].entry);
        snprintf(callee, sizeof callee, "%s%s", rt, fwd[e].callee);
        cg_forward(h, name, fwd[e].n, callee, prog);
    }
    return 0;
}

int cg_compile_hetero(const CgHeteroProgram *p, const CgOptions *o, CgResult *r, UtilDiag *d)
{
    LoopProgram *empty = loop_program_new(p->name);   /* the context names its module after a program */
    if (!empty)
        return util_error(d, util_loc_file(NULL), "out of memory");
    CgOptions ho = { .triple = o ? o->triple : NULL, .cpu = o ? o->cpu : NULL, .features = o ? o->features : NULL,
                     .opt_level = o ? o->opt_level : 2 };
    CgCtx h;
    int rc = cg_ctx_init(&h, empty, &ho, NULL, 0, d);
    if (rc == 0)
        rc = host_module(&h, p);
    if (rc == 0)
        rc = cg_ctx_optimize(&h);
    if (rc == 0)
        rc = cg_emit_file(&h, LLVMObjectFile, &r->obj, &r->stack_bytes);
    cg_ctx_dispose(&h);
    loop_program_free(empty);
    return rc;
}
