/* targets/hetero/compile.c — `dlcc MODEL -t hetero` (docs/targets/hetero.md,
 * "Compiling the partitions"): the plan (cost.c), cut into one model per
 * partition (split.c), each compiled by its device's own target under the
 * name NAME_pK; then the host object NAME.o (codegen/hetero.c: a constant
 * descriptor of the partitions, the data between them and the workspace
 * layout, and entry points calling the runtime, runtime/dlcc_hetero.h),
 * NAME.h and NAME.partition.json. */
#include "targets/hetero/hetero_impl.h"
#include "codegen/codegen.h"
#include "runtime/dlcc_hetero.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int64_t align_up(int64_t n)
{
    return (n + DLCC_WORKSPACE_ALIGN - 1) / DLCC_WORKSPACE_ALIGN * DLCC_WORKSPACE_ALIGN;
}

/* The MPI rank of device dv of the plan: the host on rank 0, the other
 * devices in their order on ranks 1 .. nodes-1, round robin. */
static int device_rank(const TgtHeteroPlan *plan, int dv, int nodes)
{
    if (nodes <= 1 || dv == plan->host)
        return 0;
    int i = dv < plan->host ? dv : dv - 1;                   /* among the devices other than the host */
    return 1 + i % (nodes - 1);
}

static int part_kind(TgtDevKind k)
{
    return k == TGT_DEV_GPU ? DLCC_HETERO_GPU : k == TGT_DEV_FPGA ? DLCC_HETERO_FPGA : DLCC_HETERO_CPU;
}

/* Partition P compiled by its device's target as `name`; its files move
 * into out, *ws is its NAME_WORKSPACE_SIZE. */
static int compile_part(const TgtHtPart *P, const TgtDevice *dev, const TgtOptions *o, int emulate, const char *name,
                        TgtFiles *out, int64_t *ws, UtilDiag *d)
{
    TgtOptions po = *o;
    po.name = name;
    po.emit = TGT_EMIT_OBJ;
    TgtFiles f = { 0 };
    int rc;
    switch (dev->kind) {
    case TGT_DEV_GPU:
        po.gpu_emulate = emulate;                            /* the GPU schedule, serial on the host */
        po.emit |= emulate ? 0 : TGT_EMIT_PTX;               /* the PTX is inside NAME_pK.o; .ptx to read */
        rc = tgt_gpu_compile(P->g, &po, &f, d);
        break;
    case TGT_DEV_FPGA:
        po.fpga_emulate = emulate;                           /* the HLS schedule, serial on the host */
        po.fpga_io_parallel = 1;                             /* C the application's C compiler builds */
        po.emit = emulate ? TGT_EMIT_OBJ : TGT_EMIT_C | TGT_EMIT_HEADER;   /* NAME_pK.c: HLS top + host wrapper */
        po.fpga_part = dev->part;
        po.fpga_clock_mhz = dev->clock_mhz;
        rc = tgt_fpga_compile(P->g, &po, &f, d);
        break;
    default:
        rc = tgt_cpu_compile(P->g, &po, &f, d);
        break;
    }
    for (int i = 0; rc == 0 && i < f.n; i++)                /* NAME_pK.o, .ptx, .c, .h */
        rc = tgt_take_file(out, name, f.f[i].name + strlen(name), &f.f[i].data, d);
    *ws = f.workspace_bytes;
    tgt_files_free(&f);
    return rc;
}

/* What NAME.h says beyond the common header (docs/targets/hetero.md, "NAME.h"). */
static void header_texts(const char *N, const TgtHeteroPlan *plan, const TgtHtSplit *s, const char *const *pname,
                         int emulate, int nodes, int in_flight, UtilBuf *note, UtilBuf *extra)
{
    util_buf_printf(note, "/* Heterogeneous (-t hetero, docs/targets/hetero.md): %d partition%s run as StarPU tasks",
                    s->n_parts, s->n_parts == 1 ? "" : "s");
    if (nodes > 1)
        util_buf_printf(note, " on %d MPI ranks (StarPU-MPI)", nodes);
    util_buf_printf(note, ":\n");
    for (int k = 0; k < s->n_parts; k++) {
        const TgtDevice *dv = &plan->devices[s->parts[k].device];
        int emu = emulate && dv->kind != TGT_DEV_CPU;
        util_buf_printf(note, " *   %s on %s (%s%s)", pname[k], dv->name, tgt_hetero_kind_name(dv->kind),
                        emu ? ", EMULATED on the host" : "");
        if (nodes > 1)
            util_buf_printf(note, ", MPI rank %d", device_rank(plan, s->parts[k].device, nodes));
        util_buf_printf(note, "\n");
    }
    if (emulate)
        util_buf_printf(note, " * EMULATED: the GPU and FPGA partitions are their targets' kernels built for the host\n"
                              " * (--emulate) and run on StarPU CPU workers; no GPU or FPGA is used.\n");
    util_buf_printf(note, " * The workspace holds the runtime's state (set up by the first call, in fresh or zeroed\n"
                          " * memory; freed by %s_release) and %d slots, each the intermediates and the\n"
                          " * partitions' workspaces of one input in flight.  Link every object of this folder%s\n"
                          " * with `pkg-config --libs dlcc-runtime%s`. */\n",
                    N, in_flight, emulate ? "" : " (and the\n * NAME_pK.c files of FPGA partitions)",
                    nodes > 1 ? "-mpi" : "");
    util_buf_printf(extra, "\n#define %s_IN_FLIGHT %d   /* inputs %s_submit may have in flight at once */\n", N, in_flight,
                    N);
    util_buf_printf(extra,
                    "/* Starts one input and returns without waiting for it: the partitions run as StarPU tasks\n"
                    " * while the caller goes on.  The input and output buffers belong to the runtime until\n"
                    " * %s_wait has returned for this input: do not write the inputs or read the outputs\n"
                    " * before.  Returns %s_OK (submitted), %s_ERR_NULL, %s_ERR_QUEUE when %s_IN_FLIGHT\n"
                    " * inputs are in flight (wait for one first), or %s_ERR_DEVICE when StarPU cannot start\n"
                    " * or take the tasks (nothing of this input was submitted then). */\n",
                    N, N, N, N, N, N);
    util_buf_printf(extra, "int32_t %s_submit(const void *const inputs[], void *const outputs[], void *workspace);\n", N);
    util_buf_printf(extra,
                    "/* Waits for the oldest input submitted and not yet waited for (inputs complete in the\n"
                    " * order of %s_submit) and returns its code: %s_OK when its outputs are written, else\n"
                    " * the first failure of one of its partitions (%s_ERR_DEVICE: a device or StarPU);\n"
                    " * %s_ERR_QUEUE when no input is in flight, %s_ERR_NULL when workspace is NULL. */\n",
                    N, N, N, N, N);
    util_buf_printf(extra, "int32_t %s_wait(void *workspace);\n", N);
}

static const char release_doc_fmt[] =
    "/* Waits for the inputs still in flight, frees what the workspace holds (the runtime's state, the\n"
    " * device state of GPU partitions) and shuts StarPU down when this was the last workspace using\n"
    " * it and the runtime started it; the workspace is then fresh again.  Returns %s_OK (also when\n"
    " * it holds nothing), %s_ERR_NULL when workspace is NULL, or %s_ERR_DEVICE when a partition\n"
    " * failed to free its device state (the workspace is fresh all the same). */\n";

/* NAME.partition.json: the plan as `dlcc partition --json` writes it (less
 * the solver's wall time, so that identical inputs give identical files),
 * and what was compiled: partitions, data, the workspace layout. */
static int partition_json(const IrGraph *g, const TgtHeteroPlan *plan, const TgtHtSplit *s, const char *N,
                          const char *const *pname, const CgHeteroPart *cp, const CgHeteroProgram *cg,
                          const TgtHeteroCompile *hc, UtilBuf *out, UtilDiag *d)
{
    json_t *root = tgt_ht_plan_json(g, plan), *parts = json_array(), *data = json_array(), *c = json_object();
    if (!root || !parts || !data || !c) {
        json_decref(root);
        json_decref(parts);
        json_decref(data);
        json_decref(c);
        return util_error(d, util_loc_file(g->file), "out of memory writing %s.partition.json", N);
    }
    json_object_del(json_object_get(root, "solver"), "seconds");
    static const char *const kinds[] = { "input", "output", "intermediate" };
    for (int v = 0; v < s->n_data; v++)
        json_array_append_new(data, json_pack("{s:s, s:s, s:I, s:o}", "tensor", g->tensors[s->data[v]].name,
                                              "kind", kinds[cg->data[v].kind], "bytes", (json_int_t)cg->data[v].bytes,
                                              "slot_offset", cg->data[v].offset >= 0 ? json_integer(cg->data[v].offset)
                                                                                     : json_null()));
    for (int k = 0; k < s->n_parts; k++) {
        const TgtHtPart *P = &s->parts[k];
        const TgtDevice *dv = &plan->devices[P->device];
        json_t *tasks = json_array(), *nodes = json_array(), *ins = json_array(), *outs = json_array();
        for (int t = P->first_task; t < P->first_task + P->n_tasks; t++)
            json_array_append_new(tasks, json_integer(t));
        for (int i = 0; i < P->g->n_nodes; i++)
            json_array_append_new(nodes, json_string(P->g->nodes[i].name[0] ? P->g->nodes[i].name
                                                                             : ir_op_name(P->g->nodes[i].op)));
        for (int i = 0; i < P->n_in; i++)
            json_array_append_new(ins, json_string(g->tensors[s->data[P->in[i]]].name));
        for (int i = 0; i < P->n_out; i++)
            json_array_append_new(outs, json_string(g->tensors[s->data[P->out[i]]].name));
        int emu = (cp[k].flags & DLCC_HETERO_EMULATED) != 0;
        json_t *e = json_object();
        json_object_set_new(e, "name", json_string(pname[k]));
        json_object_set_new(e, "device", json_string(dv->name));
        json_object_set_new(e, "kind", json_string(tgt_hetero_kind_name(dv->kind)));
        json_object_set_new(e, "emulated", json_boolean(emu));
        json_object_set_new(e, "entry", json_sprintf("%s_run_ptrs", pname[k]));
        json_object_set_new(e, "file", json_sprintf("%s%s", pname[k], dv->kind == TGT_DEV_FPGA && !emu ? ".c" : ".o"));
        json_object_set_new(e, "tasks", tasks);
        json_object_set_new(e, "nodes", nodes);
        json_object_set_new(e, "inputs", ins);
        json_object_set_new(e, "outputs", outs);
        json_object_set_new(e, "predicted_us", json_real(cp[k].predicted_us));
        json_object_set_new(e, "workspace_bytes", json_integer(cp[k].ws_bytes));
        json_object_set_new(e, "slot_offset", json_integer(cp[k].ws_offset));
        json_object_set_new(e, "mpi_rank", hc->nodes > 1 ? json_integer(cp[k].rank) : json_null());
        json_array_append_new(parts, e);
    }
    json_object_set_new(c, "name", json_string(N));
    json_object_set_new(c, "runtime", json_string(hc->nodes > 1 ? "StarPU-MPI" : "StarPU"));
    json_object_set_new(c, "emulated", json_boolean(hc->emulate));
    json_object_set_new(c, "mpi_ranks", json_integer(hc->nodes > 1 ? hc->nodes : 1));
    json_object_set_new(c, "in_flight", json_integer(cg->in_flight));
    json_object_set_new(c, "slot_bytes", json_integer(cg->slot_bytes));
    json_object_set_new(c, "workspace_bytes", json_integer(DLCC_HETERO_WORKSPACE_BYTES(cg->in_flight, cg->slot_bytes)));
    json_object_set_new(c, "partitions", parts);
    json_object_set_new(c, "data", data);
    json_object_set_new(root, "compiled", c);
    char *text = json_dumps(root, JSON_SORT_KEYS | JSON_INDENT(2) | JSON_REAL_PRECISION(9));
    json_decref(root);
    if (!text)
        return util_error(d, util_loc_file(g->file), "cannot write %s.partition.json (out of memory, or a name "
                          "that is not UTF-8)", N);
    util_buf_printf(out, "%s\n", text);
    free(text);
    return 0;
}

int tgt_hetero_compile(const IrGraph *g, const TgtOptions *o, const TgtHeteroCompile *hc, TgtFiles *out, UtilDiag *d)
{
    TgtHeteroOptions po = hc->plan;
    po.opt_level = o->opt_level;
    TgtHeteroPlan *plan = NULL;
    TgtHtSplit s = { 0 };
    CgHeteroPart *cp = NULL;
    CgHeteroDatum *cd = NULL;
    char **pname = NULL;
    CgResult res;
    cg_result_init(&res);
    UtilBuf note, extra, text;
    util_buf_init(&note);
    util_buf_init(&extra);
    util_buf_init(&text);
    int rc = -1, in_flight = hc->in_flight > 0 ? hc->in_flight : TGT_HETERO_IN_FLIGHT;
    size_t nlen = strlen(o->name) + 24;

    if (tgt_hetero_partition(g, &po, &plan, d) || tgt_ht_split(g, plan, &s, d))
        goto done;
    cp = calloc((size_t)s.n_parts + 1, sizeof *cp);
    cd = calloc((size_t)s.n_data + 1, sizeof *cd);
    pname = calloc((size_t)s.n_parts + 1, sizeof *pname);
    if (!cp || !cd || !pname)
        goto oom;
    int64_t slot = 0;
    for (int v = 0; v < s.n_data; v++) {                     /* the model's inputs, outputs, then intermediates */
        const IrTensor *t = &g->tensors[s.data[v]];
        cd[v] = (CgHeteroDatum){ .kind = DLCC_HETERO_INTERMEDIATE, .index = -1, .bytes = (int64_t)ir_array_bytes(&t->v),
                                 .offset = -1 };
        for (int k = 0; k < g->n_inputs; k++)
            if (g->inputs[k] == s.data[v])
                cd[v].kind = DLCC_HETERO_INPUT, cd[v].index = k;
        for (int k = 0; k < g->n_outputs; k++)
            if (g->outputs[k] == s.data[v])
                cd[v].kind = DLCC_HETERO_OUTPUT, cd[v].index = k;
        if (cd[v].kind == DLCC_HETERO_INTERMEDIATE) {
            cd[v].offset = slot;
            slot += align_up(cd[v].bytes > 0 ? cd[v].bytes : 1);
        }
    }
    for (int k = 0; k < s.n_parts; k++) {
        const TgtHtPart *P = &s.parts[k];
        const TgtDevice *dv = &plan->devices[P->device];
        pname[k] = malloc(nlen);
        if (!pname[k])
            goto oom;
        snprintf(pname[k], nlen, "%s_p%d", o->name, k);
        int64_t ws = 0;
        int emu = hc->emulate && dv->kind != TGT_DEV_CPU;
        if (compile_part(P, dv, o, emu, pname[k], out, &ws, d))
            goto done;
        cp[k] = (CgHeteroPart){ .name = pname[k], .device = dv->name, .kind = part_kind(dv->kind),
                                .flags = (emu ? DLCC_HETERO_EMULATED : 0) |
                                         (dv->kind == TGT_DEV_FPGA && !emu ? DLCC_HETERO_BOARD : 0),
                                .release = dv->kind == TGT_DEV_GPU && !emu, .device_index = P->device,
                                .rank = device_rank(plan, P->device, hc->nodes), .ws_bytes = ws, .ws_offset = slot,
                                .n_in = P->n_in, .n_out = P->n_out, .in = P->in, .out = P->out,
                                .predicted_us = P->time_s * 1e6 };
        slot += align_up(ws);
    }
    CgHeteroProgram cg = { .name = o->name, .model = g->name, .n_data = s.n_data, .data = cd, .n_parts = s.n_parts,
                           .parts = cp, .n_inputs = g->n_inputs, .n_outputs = g->n_outputs,
                           .n_devices = plan->n_devices, .in_flight = in_flight, .slot_bytes = slot,
                           .nodes = hc->nodes };
    int n_part_files = out->n;
    CgOptions cgo = { .triple = o->triple, .cpu = o->cpu, .features = o->features, .opt_level = o->opt_level };
    if (cg_compile_hetero(&cg, &cgo, &res, d) || tgt_add_file(out, o->name, ".o", &res.obj, d))
        goto done;

    header_texts(o->name, plan, &s, (const char *const *)pname, hc->emulate, hc->nodes, in_flight, &note, &extra);
    char release_doc[sizeof release_doc_fmt + 256];
    snprintf(release_doc, sizeof release_doc, release_doc_fmt, o->name, o->name, o->name);
    TgtHeader h = { .stack_bytes = -1, .workspace_bytes = DLCC_HETERO_WORKSPACE_BYTES(in_flight, slot),
                    .codes = 1u << -DLCC_ERR_DEVICE | 1u << -DLCC_ERR_PROGRAM | 1u << -DLCC_ERR_QUEUE,
                    .note = note.data, .release = 1, .release_doc = release_doc,
                    .stack_note = "not bounded here: the run calls the runtime library and StarPU, the "
                                  "partitions run on StarPU's worker threads",
                    .reentrant = "one workspace per thread.\n"
                                 " * This object has no writable globals; the runtime shares per process StarPU's "
                                 "state (its\n * workers, scheduler and data management; docs/targets/hetero.md).",
                    .extra = extra.data };
    TgtOptions ho = *o;
    ho.emit = TGT_EMIT_HEADER | (o->emit & TGT_EMIT_GRAPH);
    if (note.oom || extra.oom || tgt_add_common_files(g, plan->program, &ho, "hetero", &h, out, d))
        goto oom_or_done;
    if (partition_json(g, plan, &s, o->name, (const char *const *)pname, cp, &cg, hc, &text, d) ||
        tgt_take_file(out, o->name, ".partition.json", &text, d))
        goto done;
    TgtFile host = out->f[n_part_files];                      /* NAME.o first: what a depfile names */
    memmove(&out->f[1], &out->f[0], (size_t)n_part_files * sizeof *out->f);
    out->f[0] = host;
    out->workspace_bytes = h.workspace_bytes;
    rc = 0;
    goto done;
oom_or_done:
    if (d->has_error)
        goto done;
oom:
    util_error(d, util_loc_file(g->file), "out of memory");
done:
    if (rc)
        tgt_files_free(out);
    for (int k = 0; pname && k < s.n_parts; k++)
        free(pname[k]);
    free(pname);
    free(cp);
    free(cd);
    cg_result_free(&res);
    util_buf_free(&note);
    util_buf_free(&extra);
    util_buf_free(&text);
    tgt_ht_split_free(&s);
    tgt_hetero_plan_free(plan);
    return rc;
}
