/* tests/fuzz/fuzz_pipeline.h — the passes after a reader, for the harnesses
 * whose models get that far: pass_infer; then, when all tensors together
 * have few elements, the reference interpreter on zero inputs (its output
 * types must equal the inferred ones); then lowering with the CPU schedule
 * and memory planning.  Every failure must come with a diagnostic. */
#ifndef DLCC_TESTS_FUZZ_PIPELINE_H
#define DLCC_TESTS_FUZZ_PIPELINE_H

#include "frontend/frontend.h"
#include "interp/interp.h"
#include "lower/lower.h"
#include "passes/passes.h"
#include "targets/targets.h"

#include <stdlib.h>
#include <string.h>

#define MAX_TOTAL_ELEMENTS 4096

static inline int64_t total_elements(const IrGraph *g)
{
    int64_t total = 0;
    for (int i = 0; i < g->n_tensors; i++) {
        int64_t n = ir_shape_numel(&g->tensors[i].v.shape);
        if (n < 0 || total + n > MAX_TOTAL_ELEMENTS)
            return -1;
        total += n;
    }
    return total;
}

static inline void run_interp(const IrGraph *g)
{
    IrArray *in = calloc((size_t)g->n_inputs + 1, sizeof *in);
    IrArray *out = calloc((size_t)g->n_outputs + 1, sizeof *out);
    int ok = in && out;
    for (int i = 0; ok && i < g->n_inputs; i++) {
        in[i] = g->tensors[g->inputs[i]].v;
        in[i].data = calloc(ir_array_bytes(&in[i]) + 1, 1);
        ok = in[i].data != NULL;
    }
    UtilDiag d;
    util_diag_init(&d);
    if (ok && interp_run(g, in, out, &d) == 0) {
        for (int i = 0; i < g->n_outputs; i++) {
            const IrTensor *t = &g->tensors[g->outputs[i]];
            if (out[i].dtype != t->v.dtype || !ir_shape_equal(&out[i].shape, &t->v.shape))
                abort();    /* the interpreter disagrees with inference */
            interp_array_free(&out[i]);
        }
    } else if (ok && !d.has_error) {
        abort();
    }
    for (int i = 0; in && i < g->n_inputs; i++)
        free(in[i].data);
    free(in);
    free(out);
}

static inline int fuzz_schedule(LoopProgram *p, const IrGraph *g, const void *arg, UtilDiag *d)
{
    (void)g;
    (void)d;
    tgt_cpu_apply_schedule(p, arg);
    return 0;
}

/* The CPU target's loop pipeline (lower, schedule, simplify, plan memory,
 * the verifier after each) for 256-bit SIMD: a rejected model must say why,
 * and a step the verifier catches ("internal error") is a bug. */
static inline void run_lower(const IrGraph *g)
{
    UtilDiag d;
    util_diag_init(&d);
    LowSchedule s = tgt_cpu_schedule(256);
    TgtPipeline pl = { .name = "fuzz", .lowering = &s, .schedule = fuzz_schedule, .arg = &s,
                       .schedule_name = "the CPU schedule", .plan_memory = 1, .reuse = 1 };
    LoopProgram *p = tgt_loop_program(g, &pl, &d);
    if (!p && (!d.has_error || strncmp(d.msg, "internal error", 14) == 0))   /* the pipeline's own prefix, not a name */
        abort();
    if (p)
        loop_program_free(p);
}

/* Runs the passes on g and frees it. */
static inline void fuzz_run_pipeline(IrGraph *g)
{
    UtilDiag d;
    util_diag_init(&d);
    if (pass_infer(g, &d) == 0) {
        if (total_elements(g) >= 0)
            run_interp(g);
        run_lower(g);
    } else if (!d.has_error) {
        abort();
    }
    ir_graph_free(g);
}

#endif
