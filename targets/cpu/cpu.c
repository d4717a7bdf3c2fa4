/* targets/cpu/cpu.c — the CPU target: the loop pipeline with the CPU
 * schedule, then an object file through LLVM (codegen/), the header and the
 * report. */
#include "targets/targets.h"
#include "codegen/codegen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The CPU schedule (targets/cpu/schedule.c): loop kinds only. */
static int cpu_schedule(LoopProgram *p, const IrGraph *g, const void *arg, UtilDiag *d)
{
    (void)g;
    (void)d;
    tgt_cpu_apply_schedule(p, arg);                          /* vectorize, unroll, parallel loops */
    return 0;
}

int tgt_cpu_dot_i8(const TgtOptions *o, int for_host)
{
    CgOptions cgo = { .triple = o->triple, .cpu = o->cpu, .features = o->features };
    int b = cg_dot_i8_bits(&cgo, for_host);
    return b ? b : cg_dot_i16_bits(&cgo, for_host);   /* without VNNI: int16 pairs on VPMADDWD */
}

LoopProgram *tgt_cpu_program(const IrGraph *g, const TgtOptions *o, int for_host, UtilDiag *d)
{
    CgOptions cgo = { .triple = o->triple, .cpu = o->cpu, .features = o->features };
    LowSchedule sched = tgt_cpu_schedule(cg_simd_bits(&cgo, for_host));   /* SIMD width of the target */
    sched.dot_i8 = cg_dot_i8_bits(&cgo, for_host);                        /* VNNI */
    sched.dot_i16 = cg_dot_i16_bits(&cgo, for_host);                      /* VPMADDWD (AVX2, AVX512BW) */
    sched.byte_permute = cg_byte_permute_bits(&cgo, for_host);            /* VPERMI2B (AVX512-VBMI) */
    sched.mask_bytes = cg_masked_bytes(&cgo, for_host);                   /* masked rows */
    if (o->bf16)                       /* VDPBF16PS where the target has it, else its lanes emulated */
        sched.bf16 = cg_dot_bf16_bits(&cgo, for_host) ? cg_dot_bf16_bits(&cgo, for_host) : sched.vector_bits;
    int64_t flops = 0;
    for (int i = 0; i < g->n_nodes; i++)
        flops += ir_node_flops(g, &g->nodes[i]);
    /* a model too small for threads is lowered as for one (no work split for them) */
    sched.threads = flops < sched.parallel_min_model_flops ? 1 : o->threads;
    sched.rnn_threads = o->threads;
    TgtPipeline pl = { .name = o->name, .lowering = &sched, .schedule = cpu_schedule, .arg = &sched,
                       .schedule_name = "the CPU schedule", .plan_memory = 1, .reuse = o->opt_level > 0 };
    return tgt_loop_program(g, &pl, d);
}

int tgt_cpu_object(const IrGraph *g, LoopProgram *p, const CgOptions *cgo, const TgtOptions *o, const char *kind,
                   TgtFiles *out, UtilDiag *d)
{
    CgResult res;
    cg_result_init(&res);
    int rc = -1;
    if (!p || cg_compile(p, cgo, &res, d))                   /* loops → LLVM IR → object */
        goto done;

    int bad = 0;
    if (o->emit & TGT_EMIT_OBJ)
        bad |= tgt_take_file(out, o->name, ".o", &res.obj, d);      /* (moved: no copy of the weights) */
    if (!bad && (cgo->emit & CG_EMIT_ASM))
        bad |= tgt_take_file(out, o->name, ".s", &res.asm_text, d);
    if (!bad && (cgo->emit & CG_EMIT_LLVM))
        bad |= tgt_take_file(out, o->name, ".ll", &res.llvm_ir, d);
    if (bad || tgt_add_common_files(g, p, o, kind, &TGT_HEADER_CPU(res.stack_bytes), out, d))
        goto done;
    out->workspace_bytes = p->workspace_bytes;
    rc = 0;
done:
    if (rc)
        tgt_files_free(out);
    cg_result_free(&res);
    if (p)
        loop_program_free(p);
    return rc;
}

int tgt_cpu_compile(const IrGraph *g, const TgtOptions *o, TgtFiles *out, UtilDiag *d)
{
    CgOptions cgo = { .triple = o->triple, .cpu = o->cpu, .features = o->features, .opt_level = o->opt_level,
                      .emit = CG_EMIT_OBJ | (o->emit & TGT_EMIT_ASM ? CG_EMIT_ASM : 0) |
                              (o->emit & TGT_EMIT_LLVM ? CG_EMIT_LLVM : 0),
                      .weights_section = o->weights_section, .static_workspace = o->static_workspace,
                      .workspace_section = o->workspace_section, .no_libm = o->no_libm,
                      .threads = o->threads, .kernel_symbols = o->kernel_symbols };
    return tgt_cpu_object(g, tgt_cpu_program(g, o, 0, d), &cgo, o, "cpu", out, d);
}
