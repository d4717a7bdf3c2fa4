/* targets/cpu.c — the CPU target: the whole pipeline, top to bottom. */
#include "targets/targets.h"
#include "codegen/codegen.h"
#include "passes/passes.h"

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
void tgt_add_file(TgtFiles *fs, const char *name, const char *ext, const UtilBuf *buf)
{
    TgtFile *f = &fs->f[fs->n++];
    size_t n = strlen(name) + strlen(ext) + 1;
    f->name = malloc(n);
    if (f->name)
        snprintf(f->name, n, "%s%s", name, ext);
    util_buf_init(&f->data);
    util_buf_put(&f->data, buf->data ? buf->data : "", buf->len);
}

int tgt_cpu_compile(const IrGraph *g, const TgtOptions *o, TgtFiles *out, UtilDiag *d)
{
    PassSchedule sched = pass_schedule_cpu(256);
    CgOptions cgo = { .triple = o->triple, .cpu = o->cpu, .features = o->features, .opt_level = o->opt_level,
                      .emit = CG_EMIT_OBJ | (o->emit & TGT_EMIT_ASM ? CG_EMIT_ASM : 0) |
                              (o->emit & TGT_EMIT_LLVM ? CG_EMIT_LLVM : 0) };
    CgResult res;
    cg_result_init(&res);
    int rc = -1;

    LoopProgram *p = pass_lower(g, &sched, d);               /* graph → one loop nest per node */
    if (!p)
        goto done;
    p->name = util_arena_strdup(&p->arena, o->name);         /* symbols: NAME_run, NAME_run_ptrs */
    pass_apply_schedule(p, &sched);                          /* vectorize, unroll, parallel loops */
    loop_simplify(p);                                        /* index algebra */
    if (pass_plan_memory(p, g, d) || loop_verify(p, d))      /* workspace offsets */
        goto done;
    if (cg_compile(p, &cgo, &res, d))                        /* loops → LLVM IR → object */
        goto done;

    UtilBuf text;
    util_buf_init(&text);
    if (o->emit & TGT_EMIT_OBJ)
        tgt_add_file(out, o->name, ".o", &res.obj);
    if (o->emit & TGT_EMIT_ASM)
        tgt_add_file(out, o->name, ".s", &res.asm_text);
    if (o->emit & TGT_EMIT_LLVM)
        tgt_add_file(out, o->name, ".ll", &res.llvm_ir);
    if (o->emit & TGT_EMIT_HEADER) {
        tgt_emit_header(g, p, o->name, &text);
        tgt_add_file(out, o->name, ".h", &text);
        util_buf_free(&text);
    }
    if (o->emit & TGT_EMIT_GRAPH) {
        ir_print_dot(g, &text);
        tgt_add_file(out, o->name, ".dot", &text);
        util_buf_free(&text);
    }
    if (o->emit & TGT_EMIT_REPORT) {
        if (tgt_emit_report(g, p, o, "cpu", &text, d)) {
            util_buf_free(&text);
            goto done;
        }
        tgt_add_file(out, o->name, ".report.json", &text);
        util_buf_free(&text);
    }
    rc = 0;
done:
    if (rc)
        tgt_files_free(out);
    cg_result_free(&res);
    if (p)
        loop_program_free(p);
    return rc;
}
