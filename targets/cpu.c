/* targets/cpu.c — the CPU target: the whole pipeline, top to bottom. */
#include "targets/targets.h"
#include "codegen/codegen.h"
#include "lower/lower.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tgt_files_free(TgtFiles *fs)
{
    for (int i = 0; i < fs->n; i++) {
        free(fs->f[i].name);
        util_buf_free(&fs->f[i].data);
    }
    fs->n = 0;
}

/* Adds NAME.ext holding (a copy of) buf. */
int tgt_add_file(TgtFiles *fs, const char *name, const char *ext, const UtilBuf *buf, UtilDiag *d)
{
    if (fs->n >= TGT_MAX_FILES)
        return util_error(d, util_loc_file(NULL), "internal error: too many output files");
    TgtFile *f = &fs->f[fs->n++];
    size_t n = strlen(name) + strlen(ext) + 1;
    f->name = malloc(n);
    util_buf_init(&f->data);
    if (f->name)
        snprintf(f->name, n, "%s%s", name, ext);
    util_buf_put(&f->data, buf->data ? buf->data : "", buf->len);
    if (!f->name || buf->oom || f->data.oom)
        return util_error(d, util_loc_file(NULL), "out of memory writing %s%s", name, ext);
    return 0;
}

/* The target-independent half of the CPU pipeline: graph → scheduled,
 * simplified, memory-planned, verified loop program. */
static LoopProgram *cpu_program(const IrGraph *g, const TgtOptions *o, int jit, UtilDiag *d)
{
    CgOptions cgo = { .triple = o->triple, .cpu = o->cpu, .features = o->features };
    LowSchedule sched = tgt_cpu_schedule(cg_simd_bits(&cgo, jit));   /* SIMD width of the target */
    int64_t flops = 0;
    for (int i = 0; i < g->n_nodes; i++)
        flops += ir_node_flops(g, &g->nodes[i]);
    /* a model too small for threads is lowered as for one (no work split for them) */
    sched.threads = flops < sched.parallel_min_model_flops ? 1 : o->threads;
    LoopProgram *p = low_graph(g, &sched, d);               /* graph → one loop nest per node */
    if (!p)
        return NULL;
    p->name = util_arena_strdup(&p->arena, o->name);         /* symbols: NAME_run, NAME_run_ptrs */
    tgt_cpu_apply_schedule(p, &sched);                          /* vectorize, unroll, parallel loops */
    loop_simplify(p);                                        /* index algebra */
    if (low_plan_memory_opt(p, g, o->opt_level > 0, d) || loop_verify(p, d)) {   /* workspace offsets */
        loop_program_free(p);
        return NULL;
    }
    return p;
}

int tgt_add_common_files(const IrGraph *g, const LoopProgram *p, const TgtOptions *o, const char *target,
                         int64_t stack_bytes, const UtilBuf *header, TgtFiles *out, UtilDiag *d)
{
    UtilBuf text;
    util_buf_init(&text);
    int bad = 0;
    if (o->emit & TGT_EMIT_HEADER) {
        if (header)
            bad |= tgt_add_file(out, o->name, ".h", header, d);
        else
            bad |= tgt_emit_header(g, p, o, stack_bytes, &text, d) || tgt_add_file(out, o->name, ".h", &text, d);
        util_buf_free(&text);
    }
    if (!bad && (o->emit & TGT_EMIT_GRAPH)) {
        ir_print_dot(g, &text);
        bad |= tgt_add_file(out, o->name, ".dot", &text, d);
        util_buf_free(&text);
    }
    if (!bad && (o->emit & TGT_EMIT_REPORT)) {
        bad |= tgt_emit_report(g, p, o, stack_bytes, target, &text, d) ||
               tgt_add_file(out, o->name, ".report.json", &text, d);
        util_buf_free(&text);
    }
    return bad ? -1 : 0;
}

int tgt_cpu_compile(const IrGraph *g, const TgtOptions *o, TgtFiles *out, UtilDiag *d)
{
    CgOptions cgo = { .triple = o->triple, .cpu = o->cpu, .features = o->features, .opt_level = o->opt_level,
                      .emit = CG_EMIT_OBJ | (o->emit & TGT_EMIT_ASM ? CG_EMIT_ASM : 0) |
                              (o->emit & TGT_EMIT_LLVM ? CG_EMIT_LLVM : 0),
                      .weights_section = o->weights_section, .static_workspace = o->static_workspace,
                      .workspace_section = o->workspace_section, .no_libm = o->no_libm,
                      .threads = o->threads };
    CgResult res;
    cg_result_init(&res);
    int rc = -1;

    LoopProgram *p = cpu_program(g, o, 0, d);
    if (!p)
        goto done;
    if (cg_compile(p, &cgo, &res, d))                        /* loops → LLVM IR → object */
        goto done;

    int bad = 0;
    if (o->emit & TGT_EMIT_OBJ)
        bad |= tgt_add_file(out, o->name, ".o", &res.obj, d);
    if (!bad && (o->emit & TGT_EMIT_ASM))
        bad |= tgt_add_file(out, o->name, ".s", &res.asm_text, d);
    if (!bad && (o->emit & TGT_EMIT_LLVM))
        bad |= tgt_add_file(out, o->name, ".ll", &res.llvm_ir, d);
    if (bad || tgt_add_common_files(g, p, o, "cpu", res.stack_bytes, NULL, out, d))
        goto done;
    rc = 0;
done:
    if (rc)
        tgt_files_free(out);
    cg_result_free(&res);
    if (p)
        loop_program_free(p);
    return rc;
}

struct TgtHostModel {
    CgJit *jit;
    CgRunFn run;
    int64_t workspace_bytes;
    int n_inputs, n_outputs;
    IrArray *in_types, *out_types;            /* dtype and shape of each (no data) */
    const char *file;
};

void tgt_host_free(TgtHostModel *m)
{
    if (!m)
        return;
    if (m->jit)
        cg_jit_free(m->jit);
    free(m->in_types);
    free(m->out_types);
    free(m);
}

int tgt_cpu_jit(const IrGraph *g, const TgtOptions *o, TgtHostModel **out, UtilDiag *d)
{
    *out = NULL;
    TgtHostModel *m = calloc(1, sizeof *m);
    if (!m)
        return util_error(d, util_loc_file(g->file), "out of memory");
    m->n_inputs = g->n_inputs;
    m->n_outputs = g->n_outputs;
    m->file = g->file;
    m->in_types = calloc((size_t)g->n_inputs + 1, sizeof(IrArray));
    m->out_types = calloc((size_t)g->n_outputs + 1, sizeof(IrArray));
    if (!m->in_types || !m->out_types) {
        tgt_host_free(m);
        return util_error(d, util_loc_file(g->file), "out of memory");
    }
    for (int i = 0; i < g->n_inputs; i++)
        m->in_types[i] = (IrArray){ g->tensors[g->inputs[i]].v.dtype, g->tensors[g->inputs[i]].v.shape, NULL };
    for (int i = 0; i < g->n_outputs; i++)
        m->out_types[i] = (IrArray){ g->tensors[g->outputs[i]].v.dtype, g->tensors[g->outputs[i]].v.shape, NULL };
    LoopProgram *p = o->gpu_emulate ? tgt_gpu_program(g, o, d) : cpu_program(g, o, 1, d);
    CgOptions cgo = { .opt_level = o->opt_level, .gpu_emulate = o->gpu_emulate };
    int rc = !p || cg_jit(p, &cgo, &m->jit, d) ? -1 : 0;
    if (p) {
        m->workspace_bytes = p->workspace_bytes;
        loop_program_free(p);
    }
    if (rc) {
        tgt_host_free(m);
        return -1;
    }
    m->run = cg_jit_entry(m->jit);
    *out = m;
    return 0;
}

int tgt_host_run(TgtHostModel *m, const IrArray *inputs, IrArray *outputs, UtilDiag *d)
{
    const void **in = calloc((size_t)m->n_inputs + 1, sizeof *in);
    void **outp = calloc((size_t)m->n_outputs + 1, sizeof *outp);
    void *ws = NULL;
    int rc = 0;
    for (int o = 0; o < m->n_outputs; o++)
        outputs[o] = m->out_types[o];          /* data NULL until allocated */
    if (!in || !outp || (m->workspace_bytes > 0 &&
                         posix_memalign(&ws, 64, (size_t)m->workspace_bytes))) {
        rc = util_error(d, util_loc_file(m->file), "out of memory");
        goto done;
    }
    for (int i = 0; i < m->n_inputs && !rc; i++) {
        if (inputs[i].dtype != m->in_types[i].dtype || !ir_shape_equal(&inputs[i].shape, &m->in_types[i].shape))
            rc = util_error(d, util_loc_file(m->file), "input %d does not match the compiled model's type", i + 1);
        in[i] = inputs[i].data;
    }
    for (int o = 0; o < m->n_outputs && !rc; o++) {
        size_t bytes = ir_array_bytes(&m->out_types[o]);
        outputs[o] = m->out_types[o];
        outputs[o].data = calloc(bytes ? bytes : 1, 1);
        outp[o] = outputs[o].data;
        if (!outputs[o].data)
            rc = util_error(d, util_loc_file(m->file), "out of memory");
    }
    if (!rc && m->run(in, outp, ws) != 0)
        rc = util_error(d, util_loc_file(m->file), "the compiled model returned an error");
    if (rc)
        for (int o = 0; o < m->n_outputs; o++) {
            free(outputs[o].data);
            outputs[o].data = NULL;
        }
done:
    free(in);
    free(outp);
    free(ws);
    return rc;
}
