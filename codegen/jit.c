/* codegen/jit.c — in-process compilation through ORC's LLJIT: the module
 * cg_compile would build, optimized for the host, handed to an LLJIT whose
 * main library also resolves the process's symbols (libm). */
#include "codegen/cg_impl.h"

#include <llvm-c/Error.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct CgJit {
    LLVMOrcLLJITRef jit;
    CgRunFn entry;
};

/* Records an ORC error as a diagnostic and consumes it. */
static int orc_error(CgCtx *c, const char *what, LLVMErrorRef e)
{
    char *m = LLVMGetErrorMessage(e);
    util_error(c->d, util_loc_file(NULL), "JIT for '%s': %s: %s", c->p->name, what, m ? m : "");
    LLVMDisposeErrorMessage(m);
    return -1;
}

int cg_jit(const LoopProgram *p, const CgOptions *o, CgJit **out, UtilDiag *d)
{
    *out = NULL;
    if (loop_verify(p, d) != 0)
        return -1;
    CgJit *j = calloc(1, sizeof *j);
    if (!j)
        return util_error(d, util_loc_file(NULL), "out of memory");
    LLVMOrcThreadSafeContextRef tsc = LLVMOrcCreateNewThreadSafeContext();
    CgCtx c;
    int rc = cg_ctx_init(&c, p, o, LLVMOrcThreadSafeContextGetContext(tsc), 1, d);
    if (rc == 0) {
        cg_region_prepare(&c);                  /* --threads: one parallel region per call */
        rc = cg_emit_module(&c);
    }
    if (rc == 0)
        rc = cg_ctx_optimize(&c);
    LLVMErrorRef e = NULL;
    if (rc == 0 && (e = LLVMOrcCreateLLJIT(&j->jit, NULL)) != NULL)
        rc = orc_error(&c, "cannot create the JIT", e);
    if (rc == 0) {
        LLVMOrcJITDylibRef lib = LLVMOrcLLJITGetMainJITDylib(j->jit);
        LLVMOrcDefinitionGeneratorRef gen;
        e = LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(&gen, LLVMOrcLLJITGetGlobalPrefix(j->jit), NULL,
                                                                 NULL);
        if (e)
            rc = orc_error(&c, "cannot search the process's symbols", e);
        else
            LLVMOrcJITDylibAddGenerator(lib, gen);
        if (rc == 0) {
            LLVMOrcThreadSafeModuleRef tsm = LLVMOrcCreateNewThreadSafeModule(c.mod, tsc);
            c.mod = NULL;   /* owned by the thread-safe module now */
            /* the JIT owns tsm from here on, even when adding it fails */
            if ((e = LLVMOrcLLJITAddLLVMIRModule(j->jit, lib, tsm)) != NULL)
                rc = orc_error(&c, "cannot add the module", e);
        }
    }
    if (rc == 0) {
        char name[300];
        snprintf(name, sizeof name, "%s_run_ptrs", p->name);
        LLVMOrcExecutorAddress addr = 0;
        if ((e = LLVMOrcLLJITLookup(j->jit, &addr, name)) != NULL)
            rc = orc_error(&c, "cannot link the generated code", e);
        else
            j->entry = (CgRunFn)(uintptr_t)addr;
    }
    cg_ctx_dispose(&c);
    LLVMOrcDisposeThreadSafeContext(tsc);
    if (rc != 0) {
        cg_jit_free(j);
        return -1;
    }
    *out = j;
    return 0;
}

CgRunFn cg_jit_entry(CgJit *j) { return j ? j->entry : NULL; }

void cg_jit_free(CgJit *j)
{
    if (!j)
        return;
    if (j->jit) {
        LLVMErrorRef e = LLVMOrcDisposeLLJIT(j->jit);
        if (e)
            LLVMConsumeError(e);
    }
    free(j);
}
