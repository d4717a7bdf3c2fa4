/* targets/host.c — a model compiled for the host and loaded into this
 * process through LLVM's ORC JIT: the CPU target's program (or, with
 * gpu_emulate, the GPU-scheduled kernels run serially), for `dlcc run
 * --backend cpu|gpu-emulate` and differential tests against the
 * interpreter. */
#include "targets/targets.h"
#include "codegen/codegen.h"

#include <stdlib.h>

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

int tgt_host_jit(const IrGraph *g, const TgtOptions *o, TgtHostModel **out, UtilDiag *d)
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
    LoopProgram *p = o->gpu_emulate ? tgt_gpu_program(g, o, d) : tgt_cpu_program(g, o, 1, d);
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
