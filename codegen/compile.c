/* codegen/compile.c — a CPU object (and textual IR, assembly) from a loop
 * program: the straight-line pipeline build module -> verify -> optimize ->
 * emit (cg_compile, codegen/codegen.h). */
#include "codegen/cg_impl.h"

#include <string.h>

void cg_result_init(CgResult *r)
{
    r->stack_bytes = -1;
    util_buf_init(&r->obj);
    util_buf_init(&r->asm_text);
    util_buf_init(&r->llvm_ir);
}

void cg_result_free(CgResult *r)
{
    util_buf_free(&r->obj);
    util_buf_free(&r->asm_text);
    util_buf_free(&r->llvm_ir);
}

int cg_compile(const LoopProgram *p, const CgOptions *o, CgResult *r, UtilDiag *d)
{
    if (loop_verify(p, d) != 0)
        return -1;
    CgCtx c;
    int rc = cg_ctx_init(&c, p, o, NULL, 0, d);
    if (rc == 0) {
        cg_region_prepare(&c);                  /* --threads: one parallel region per call */
        rc = cg_emit_module(&c);
    }
    if (rc == 0)
        rc = cg_ctx_optimize(&c);
    unsigned emit = c.o.emit ? c.o.emit : CG_EMIT_OBJ;
    if (rc == 0 && (emit & CG_EMIT_LLVM)) {
        char *s = LLVMPrintModuleToString(c.mod);
        util_buf_put(&r->llvm_ir, s, strlen(s));
        LLVMDisposeMessage(s);
    }
    if (rc == 0 && (emit & CG_EMIT_ASM))
        rc = cg_emit_file(&c, LLVMAssemblyFile, &r->asm_text, NULL);
    if (rc == 0 && (emit & CG_EMIT_OBJ))
        rc = cg_emit_file(&c, LLVMObjectFile, &r->obj, &r->stack_bytes);
    cg_ctx_dispose(&c);
    return rc;
}
