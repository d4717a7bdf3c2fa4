/* targets/pipeline.c — the loop pipeline every target runs, top to bottom:
 *
 *     lower (low_graph) → the target's schedule → simplify → plan memory
 *
 * (a target may take a second schedule step on the simplified program,
 * before memory planning: the FPGA's HLS pragmas)
 * with the loop verifier after every step, so that a step which breaks the
 * program is named in the diagnostic instead of surfacing in the code
 * generator.  The CPU, GPU and FPGA drivers and `dlcc info` run it; only the
 * schedule and whether the workspace is planned differ between targets. */
#include "targets/targets.h"

#include <stdio.h>

/* The loop verifier after step `after`: 0, or -1 with an internal error
 * naming the step. */
static int verified(const IrGraph *g, const LoopProgram *p, const char *after, UtilDiag *d)
{
    UtilDiag v;
    util_diag_init(&v);
    if (loop_verify(p, &v) == 0)
        return 0;
    return util_error(d, util_loc_file(g->file), "internal error: the loop program is invalid after %s: %s", after,
                      v.msg);
}

LoopProgram *tgt_loop_program(const IrGraph *g, const TgtPipeline *pl, UtilDiag *d)
{
    LoopProgram *p = low_graph(g, pl->lowering, d);                   /* one loop nest per node (verified) */
    if (!p)
        return NULL;
    p->name = util_arena_strdup(&p->arena, pl->name);                 /* symbols: NAME_run, NAME_run_ptrs */
    if (!p->name) {
        util_error(d, util_loc_file(g->file), "out of memory");
        goto fail;
    }
    if (pl->schedule && (pl->schedule(p, g, pl->arg, d) || verified(g, p, pl->schedule_name, d)))
        goto fail;
    loop_simplify(p);                                                 /* index algebra */
    if (verified(g, p, "loop simplification", d))
        goto fail;
    if (pl->finish && (pl->finish(p, g, pl->arg, d) || verified(g, p, pl->finish_name, d)))
        goto fail;
    if (pl->plan_memory && (low_plan_memory_opt(p, g, pl->reuse, d) || verified(g, p, "memory planning", d)))
        goto fail;                                                    /* workspace offsets */
    return p;
fail:
    loop_program_free(p);
    return NULL;
}
