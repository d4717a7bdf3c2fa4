/* codegen/parallel.c — a PARALLEL loop run by the Halide runtime's thread
 * pool (CgOptions.threads > 1).
 *
 * The loop's body is outlined into a task function
 *
 *     int32_t NAME.KERNEL.task.N(void *user_context, int32_t t, uint8_t *closure)
 *
 * that runs iterations [t*E/T, (t+1)*E/T) of the E iterations, T = min(threads,
 * E) tasks in all, and the loop itself becomes
 *
 *     closure = { inputs, outputs, workspace, captured variables... }   (on the stack)
 *     halide_do_par_for(NULL, task, 0, T, closure);
 *
 * (halide_do_par_for and halide_task_t: HalideRuntime.h; the object then
 * links the runtime, `pkg-config --libs dlcc-runtime`).  Captured variables
 * are the values the body reads from outside: the loop variables of the
 * enclosing extent-1 loops and earlier LETs.  LOCAL buffers become allocas
 * of the task function, so each task has its own (the schedule parallelizes
 * a loop with LOCAL buffers only when nothing else in the kernel uses them).
 * The task returns 0; NAME_run's result does not depend on the pool. */
#include "codegen/cg_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct Capture {
    unsigned char *bound;     /* per variable: bound inside the loop */
    unsigned char *used;      /* per variable: read inside the loop */
} Capture;

static void cap_expr(Capture *k, const LoopExpr *e)
{
    if (!e)
        return;
    switch (e->kind) {
    case LOOP_E_VAR: k->used[e->u.var] = 1; break;
    case LOOP_E_LOAD: cap_expr(k, e->u.load.index); break;
    case LOOP_E_BIN: cap_expr(k, e->u.bin.a); cap_expr(k, e->u.bin.b); break;
    case LOOP_E_UN: cap_expr(k, e->u.un.a); break;
    case LOOP_E_SELECT: cap_expr(k, e->u.sel.cond); cap_expr(k, e->u.sel.a); cap_expr(k, e->u.sel.b); break;
    case LOOP_E_CALL:
        for (int i = 0; i < e->u.call.n; i++)
            cap_expr(k, e->u.call.args[i]);
        break;
    case LOOP_E_CAST: cap_expr(k, e->u.cast.a); break;
    default: break;
    }
}

static void cap_stmt(Capture *k, const LoopStmt *s)
{
    if (!s)
        return;
    switch (s->kind) {
    case LOOP_S_FOR:
        k->bound[s->u.loop.var] = 1;
        cap_expr(k, s->u.loop.extent);
        cap_stmt(k, s->u.loop.body);
        break;
    case LOOP_S_LET: k->bound[s->u.let.var] = 1; cap_expr(k, s->u.let.value); break;
    case LOOP_S_ASSIGN: k->used[s->u.assign.var] = 1; cap_expr(k, s->u.assign.value); break;
    case LOOP_S_STORE: cap_expr(k, s->u.store.index); cap_expr(k, s->u.store.value); break;
    case LOOP_S_IF: cap_expr(k, s->u.cond.cond); cap_stmt(k, s->u.cond.then_); cap_stmt(k, s->u.cond.else_); break;
    case LOOP_S_BLOCK:
        for (int i = 0; i < s->u.block.n; i++)
            cap_stmt(k, s->u.block.items[i]);
        break;
    default: break;
    }
}

/* Per-function state of c that emitting another function replaces. */
typedef struct Saved {
    LLVMValueRef fn, args[3];
    LLVMBasicBlockRef entry, block, alloca_block;
    LLVMValueRef *bufptr, *var;
    unsigned char *var_mut;
} Saved;

static int save(CgCtx *c, Saved *s)
{
    size_t nb = (size_t)c->p->n_bufs + 1, nv = (size_t)c->p->n_vars + 1;
    s->fn = c->fn;
    memcpy(s->args, c->args, sizeof s->args);
    s->entry = c->entry;
    s->block = LLVMGetInsertBlock(c->b);
    s->alloca_block = LLVMGetInsertBlock(c->ab);
    s->bufptr = malloc(nb * sizeof *s->bufptr);
    s->var = malloc(nv * sizeof *s->var);
    s->var_mut = malloc(nv);
    if (!s->bufptr || !s->var || !s->var_mut)
        return cg_fail(c, "out of memory");
    memcpy(s->bufptr, c->bufptr, (nb - 1) * sizeof *s->bufptr);
    memcpy(s->var, c->var, (nv - 1) * sizeof *s->var);
    memcpy(s->var_mut, c->var_mut, nv - 1);
    return 0;
}

static void restore(CgCtx *c, Saved *s)
{
    c->fn = s->fn;
    memcpy(c->args, s->args, sizeof s->args);
    c->entry = s->entry;
    LLVMPositionBuilderAtEnd(c->b, s->block);
    LLVMPositionBuilderAtEnd(c->ab, s->alloca_block);
    memcpy(c->bufptr, s->bufptr, (size_t)c->p->n_bufs * sizeof *c->bufptr);
    memcpy(c->var, s->var, (size_t)c->p->n_vars * sizeof *c->var);
    memcpy(c->var_mut, s->var_mut, (size_t)c->p->n_vars);
}

static void saved_free(Saved *s)
{
    free(s->bufptr);
    free(s->var);
    free(s->var_mut);
}

/* The value of captured variable v in the calling function (mutable
 * variables are read from their slot). */
static LLVMValueRef var_value(CgCtx *c, int v)
{
    LLVMValueRef x = c->var[v];
    if (x && c->var_mut[v] == 1)
        x = LLVMBuildLoad2(c->b, cg_reg_type(c, c->p->vars[v].type), x, c->p->vars[v].name);
    return x;
}

int cg_parallel_loop(CgCtx *c, const LoopStmt *s)
{
    const LoopExpr *ext = s->u.loop.extent;
    if (c->gpu || c->in_task || c->o.threads <= 1 || ext->kind != LOOP_E_INT || ext->u.i < 2)
        return 1;
    const LoopProgram *p = c->p;
    int64_t E = ext->u.i, T = c->o.threads < E ? c->o.threads : E;
    if (E > INT32_MAX)
        return 1;
    Capture k = { calloc((size_t)p->n_vars + 1, 1), calloc((size_t)p->n_vars + 1, 1) };
    int *cv = malloc(((size_t)p->n_vars + 1) * sizeof *cv), ncv = 0;
    if (!k.bound || !k.used || !cv) {
        free(k.bound), free(k.used), free(cv);
        return cg_fail(c, "out of memory");
    }
    k.bound[s->u.loop.var] = 1;
    cap_stmt(&k, s->u.loop.body);
    for (int v = 0; v < p->n_vars; v++)
        if (k.used[v] && !k.bound[v])
            cv[ncv++] = v;
    free(k.bound);
    free(k.used);

    /* closure type: inputs, outputs, workspace, then the captured values */
    LLVMTypeRef *ft = malloc(((size_t)ncv + 3) * sizeof *ft);
    if (!ft) {
        free(cv);
        return cg_fail(c, "out of memory");
    }
    for (int i = 0; i < 3; i++)
        ft[i] = c->t_ptr;
    for (int i = 0; i < ncv; i++)
        ft[3 + i] = cg_reg_type(c, p->vars[cv[i]].type);
    LLVMTypeRef clo_t = LLVMStructTypeInContext(c->ctx, ft, (unsigned)ncv + 3, 0);
    free(ft);

    /* the closure, filled in the calling function */
    LLVMValueRef clo = LLVMBuildAlloca(c->ab, clo_t, "closure");
    int rc = 0;
    for (int i = 0; i < 3 + ncv && rc == 0; i++) {
        LLVMValueRef x = i < 3 ? c->args[i] : var_value(c, cv[i - 3]);
        if (!x) {
            rc = cg_fail(c, "internal error: variable '%s' has no value", p->vars[cv[i - 3]].name);
            break;
        }
        LLVMBuildStore(c->b, x, LLVMBuildStructGEP2(c->b, clo_t, clo, (unsigned)i, ""));
    }

    /* the task function */
    char name[320];
    snprintf(name, sizeof name, "%s.task%u", LLVMGetValueName2(c->fn, &(size_t){ 0 }), c->n_tasks++);
    LLVMTypeRef tp[3] = { c->t_ptr, c->t_i32, c->t_ptr };
    LLVMTypeRef task_t = LLVMFunctionType(c->t_i32, tp, 3, 0);
    LLVMValueRef task = LLVMAddFunction(c->mod, name, task_t);
    LLVMSetLinkage(task, LLVMInternalLinkage);
    cg_add_fn_attr(c, task, "nounwind", 0);
    Saved sv;
    if (rc == 0)
        rc = save(c, &sv);
    if (rc == 0) {
        c->fn = task;
        c->entry = LLVMAppendBasicBlockInContext(c->ctx, task, "entry");
        LLVMPositionBuilderAtEnd(c->ab, c->entry);
        LLVMPositionBuilderAtEnd(c->b, LLVMAppendBasicBlockInContext(c->ctx, task, "body"));
        LLVMValueRef cp = LLVMGetParam(task, 2), tn = LLVMGetParam(task, 1);
        for (int i = 0; i < 3 + ncv; i++) {      /* in the entry block: buffer pointers are set up there */
            LLVMTypeRef t = i < 3 ? c->t_ptr : cg_reg_type(c, p->vars[cv[i - 3]].type);
            LLVMValueRef x = LLVMBuildLoad2(c->ab, t, LLVMBuildStructGEP2(c->ab, clo_t, cp, (unsigned)i, ""), "");
            if (i < 3) {
                c->args[i] = x;
            } else {
                c->var[cv[i - 3]] = x;
                c->var_mut[cv[i - 3]] = 0;
            }
        }
        /* iterations [t*E/T, (t+1)*E/T) */
        LLVMValueRef t64 = LLVMBuildSExt(c->b, tn, c->t_i64, "");
        LLVMValueRef e = LLVMConstInt(c->t_i64, (unsigned long long)E, 0), tt = LLVMConstInt(c->t_i64, (unsigned long long)T, 0);
        LLVMValueRef lo = LLVMBuildSDiv(c->b, LLVMBuildMul(c->b, t64, e, ""), tt, "lo");
        LLVMValueRef hi = LLVMBuildSDiv(c->b, LLVMBuildMul(c->b, LLVMBuildAdd(c->b, t64, LLVMConstInt(c->t_i64, 1, 0), ""), e, ""),
                                        tt, "hi");
        c->in_task = 1;
        rc = cg_setup_buffers(c, s->u.loop.body);
        if (rc == 0) {
            LLVMBasicBlockRef pre = LLVMGetInsertBlock(c->b);
            LLVMBasicBlockRef header = LLVMAppendBasicBlockInContext(c->ctx, task, "task.header");
            LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(c->ctx, task, "task.body");
            LLVMBasicBlockRef exit = LLVMAppendBasicBlockInContext(c->ctx, task, "task.exit");
            LLVMBuildBr(c->b, header);
            LLVMPositionBuilderAtEnd(c->b, header);
            LLVMValueRef i = LLVMBuildPhi(c->b, c->t_i64, p->vars[s->u.loop.var].name);
            LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, LLVMIntSLT, i, hi, ""), body, exit);
            LLVMPositionBuilderAtEnd(c->b, body);
            c->var[s->u.loop.var] = i;
            c->var_mut[s->u.loop.var] = 0;
            rc = cg_stmt(c, s->u.loop.body);
            if (rc == 0) {
                LLVMBasicBlockRef latch = LLVMGetInsertBlock(c->b);
                LLVMValueRef next = LLVMBuildNSWAdd(c->b, i, LLVMConstInt(c->t_i64, 1, 0), "");
                LLVMBuildBr(c->b, header);
                LLVMValueRef in_v[2] = { lo, next };
                LLVMBasicBlockRef in_b[2] = { pre, latch };
                LLVMAddIncoming(i, in_v, in_b, 2);
                LLVMMoveBasicBlockAfter(exit, latch);
                LLVMPositionBuilderAtEnd(c->b, exit);
                LLVMBuildRet(c->b, LLVMConstInt(c->t_i32, 0, 0));
                cg_end_entry_block(c);
            }
        }
        c->in_task = 0;
        restore(c, &sv);
        saved_free(&sv);
    }
    free(cv);
    if (rc != 0)
        return -1;

    /* int halide_do_par_for(void *user_context, halide_task_t f, int min, int size, uint8_t *closure) */
    LLVMTypeRef pp[5] = { c->t_ptr, c->t_ptr, c->t_i32, c->t_i32, c->t_ptr };
    LLVMTypeRef pf_t = LLVMFunctionType(c->t_i32, pp, 5, 0);
    LLVMValueRef pf = LLVMGetNamedFunction(c->mod, "halide_do_par_for");
    if (!pf)
        pf = LLVMAddFunction(c->mod, "halide_do_par_for", pf_t);
    LLVMValueRef args[5] = { LLVMConstPointerNull(c->t_ptr), task, LLVMConstInt(c->t_i32, 0, 0),
                             LLVMConstInt(c->t_i32, (unsigned long long)T, 0), clo };
    LLVMBuildCall2(c->b, pf_t, pf, args, 5, "");
    return 0;
}
