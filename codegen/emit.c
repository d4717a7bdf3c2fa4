/* codegen/emit.c — the LLVM module for a loop program: constant buffers as
 * read-only globals, one internal function per kernel, and the two entry
 * points NAME_run_ptrs / NAME_run (docs/generated-code.md).
 *
 * Kernel functions take the three caller arrays (inputs, outputs, workspace)
 * and compute the base pointers of the buffers they use in their entry
 * block, which also holds the stack slots of LOCAL buffers and of mutable
 * variables (mem2reg turns the latter into SSA values). */
#include "codegen/cg_impl.h"

#include <llvm-c/DebugInfo.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ buffers */

static void mark_expr(const LoopExpr *e, unsigned char *used)
{
    if (!e)
        return;
    switch (e->kind) {
    case LOOP_E_LOAD: used[e->u.load.buf] = 1; mark_expr(e->u.load.index, used); break;
    case LOOP_E_BIN: mark_expr(e->u.bin.a, used); mark_expr(e->u.bin.b, used); break;
    case LOOP_E_UN: mark_expr(e->u.un.a, used); break;
    case LOOP_E_SELECT:
        mark_expr(e->u.sel.cond, used);
        mark_expr(e->u.sel.a, used);
        mark_expr(e->u.sel.b, used);
        break;
    case LOOP_E_CALL:
        for (int i = 0; i < e->u.call.n && i < 3; i++)
            mark_expr(e->u.call.args[i], used);
        break;
    case LOOP_E_CAST: mark_expr(e->u.cast.a, used); break;
    default: break;
    }
}

void cg_used_buffers(const LoopStmt *s, unsigned char *used)
{
    if (!s)
        return;
    switch (s->kind) {
    case LOOP_S_FOR: mark_expr(s->u.loop.extent, used); cg_used_buffers(s->u.loop.body, used); break;
    case LOOP_S_LET: mark_expr(s->u.let.value, used); break;
    case LOOP_S_ASSIGN: mark_expr(s->u.assign.value, used); break;
    case LOOP_S_STORE:
        used[s->u.store.buf] = 1;
        mark_expr(s->u.store.index, used);
        mark_expr(s->u.store.value, used);
        break;
    case LOOP_S_IF:
        mark_expr(s->u.cond.cond, used);
        cg_used_buffers(s->u.cond.then_, used);
        cg_used_buffers(s->u.cond.else_, used);
        break;
    case LOOP_S_BLOCK:
        for (int i = 0; i < s->u.block.n; i++)
            cg_used_buffers(s->u.block.items[i], used);
        break;
    case LOOP_S_PREFETCH:
        used[s->u.prefetch.buf] = 1;
        mark_expr(s->u.prefetch.index, used);
        break;
    case LOOP_S_BARRIER: break;
    }
}

/* The buffer whose storage buf uses (following alias_of), or -1 on a cycle. */
int cg_storage_root(const LoopProgram *p, int buf)
{
    for (int steps = 0; steps <= p->n_bufs; steps++) {
        if (p->bufs[buf].alias_of < 0)
            return buf;
        buf = p->bufs[buf].alias_of;
    }
    return -1;
}

/* Read-only data: private, unnamed_addr, 64-byte aligned constants. */
LLVMValueRef cg_const_global(CgCtx *c, int i)
{
    if (c->globals[i])
        return c->globals[i];
    const LoopBuf *b = &c->p->bufs[i];
    static const char zero = 0;
    unsigned n = b->data && b->bytes > 0 ? (unsigned)b->bytes : 1;
    if (b->bytes > (int64_t)0xffffffffu) {
        cg_fail(c, "constant buffer '%s' of %lld bytes is too large", b->name, (long long)b->bytes);
        return NULL;
    }
    LLVMValueRef init = LLVMConstStringInContext(c->ctx, b->data && b->bytes > 0 ? b->data : &zero, n, 1);
    char name[300];
    snprintf(name, sizeof name, "%s.%s", c->p->name, b->name);
    LLVMValueRef g = LLVMAddGlobal(c->mod, LLVMTypeOf(init), name);
    LLVMSetInitializer(g, init);
    LLVMSetGlobalConstant(g, 1);
    LLVMSetLinkage(g, LLVMPrivateLinkage);
    LLVMSetUnnamedAddress(g, LLVMGlobalUnnamedAddr);
    LLVMSetAlignment(g, 64);
    if (c->o.weights_section && *c->o.weights_section)
        LLVMSetSection(g, c->o.weights_section);
    return c->globals[i] = g;
}

/* Base pointer of a root buffer, built in the entry block. */
static LLVMValueRef root_ptr(CgCtx *c, int i)
{
    if (c->gpu)
        return c->hooks->root_ptr(c, i);
    const LoopBuf *b = &c->p->bufs[i];
    LLVMBuilderRef A = c->ab;
    switch (b->storage) {
    case LOOP_ST_INPUT:
    case LOOP_ST_OUTPUT: {
        if (b->index < 0) {
            cg_fail(c, "%s buffer '%s' has no position", loop_storage_name(b->storage), b->name);
            return NULL;
        }
        LLVMValueRef idx = LLVMConstInt(c->t_i64, (unsigned long long)b->index, 0);
        LLVMValueRef arr = c->args[b->storage == LOOP_ST_INPUT ? 0 : 1];
        LLVMValueRef slot = LLVMBuildInBoundsGEP2(A, c->t_ptr, arr, &idx, 1, "");
        LLVMValueRef v = LLVMBuildLoad2(A, c->t_ptr, slot, b->name);
        LLVMSetAlignment(v, LLVMABIAlignmentOfType(LLVMGetModuleDataLayout(c->mod), c->t_ptr));
        return v;
    }
    case LOOP_ST_CONST:
        return cg_const_global(c, i);
    case LOOP_ST_WORKSPACE: {   /* element 0 of a halo'd buffer lies `base` elements into its slice */
        int64_t at = b->offset + b->base * (int64_t)ir_dtype_size(b->dtype);
        LLVMValueRef off = LLVMConstInt(c->t_i64, (unsigned long long)at, 0);
        return LLVMBuildInBoundsGEP2(A, c->t_i8, c->args[2], &off, 1, b->name);
    }
    case LOOP_ST_LOCAL: {
        if (b->bytes > (int64_t)0xffffffffu) {
            cg_fail(c, "local buffer '%s' of %lld bytes is too large", b->name, (long long)b->bytes);
            return NULL;
        }
        LLVMTypeRef t = LLVMArrayType2(c->t_i8, (uint64_t)b->bytes);
        LLVMValueRef v = LLVMBuildAlloca(A, t, b->name);
        LLVMSetAlignment(v, 64);
        return v;
    }
    }
    return NULL;
}

int cg_setup_buffers(CgCtx *c, const LoopStmt *body)
{
    const LoopProgram *p = c->p;
    unsigned char *used = calloc(p->n_bufs > 0 ? (size_t)p->n_bufs : 1, 1);
    if (!used)
        return cg_fail(c, "out of memory");
    memset(c->bufptr, 0, (size_t)p->n_bufs * sizeof *c->bufptr);
    cg_used_buffers(body, used);
    int rc = 0;
    for (int i = 0; rc == 0 && i < p->n_bufs; i++) {
        if (!used[i])
            continue;
        int r = cg_storage_root(p, i);
        if (r < 0) {
            rc = cg_fail(c, "buffer '%s' aliases itself through alias_of", p->bufs[i].name);
            break;
        }
        if (!c->bufptr[r] && !(c->bufptr[r] = root_ptr(c, r)))
            rc = -1;
        c->bufptr[i] = c->bufptr[r];
        if (rc == 0 && i != r && p->bufs[i].base) {         /* a view at an offset (a Concat's slice) */
            LLVMValueRef off = LLVMConstInt(c->t_i64, (unsigned long long)p->bufs[i].base, 0);
            c->bufptr[i] = LLVMBuildInBoundsGEP2(c->ab, cg_mem_type(c, p->bufs[i].dtype), c->bufptr[r], &off, 1, "");
        }
    }
    free(used);
    return rc;
}

/* ------------------------------------------------------------ statements */

/* A distinct self-referencing loop ID carrying the schedule's hints.  A
 * loop whose body calls the module's own math functions (no_libm) gets no
 * vectorize hint: those calls cannot be vectorized, and a forced hint would
 * only make LLVM warn. */
static void loop_metadata(CgCtx *c, const LoopStmt *s, LLVMValueRef latch_br, int calls_math)
{
    LLVMContextRef C = c->ctx;
    LLVMMetadataRef props[2];
    int n = 0;
    int factor = s->u.loop.factor;
    if (s->u.loop.kind == LOOP_VECTORIZED && !calls_math) {
        LLVMMetadataRef en[2] = { LLVMMDStringInContext2(C, "llvm.loop.vectorize.enable", 26),
                                  LLVMValueAsMetadata(LLVMConstInt(c->t_i1, 1, 0)) };
        props[n++] = LLVMMDNodeInContext2(C, en, 2);
        if (factor > 0) {
            LLVMMetadataRef w[2] = { LLVMMDStringInContext2(C, "llvm.loop.vectorize.width", 25),
                                     LLVMValueAsMetadata(LLVMConstInt(c->t_i32, (unsigned)factor, 0)) };
            props[n++] = LLVMMDNodeInContext2(C, w, 2);
        }
    } else if (s->u.loop.kind == LOOP_UNROLLED) {
        if (factor == 0) {
            LLVMMetadataRef f = LLVMMDStringInContext2(C, "llvm.loop.unroll.full", 21);
            props[n++] = LLVMMDNodeInContext2(C, &f, 1);
        } else {
            LLVMMetadataRef k[2] = { LLVMMDStringInContext2(C, "llvm.loop.unroll.count", 22),
                                     LLVMValueAsMetadata(LLVMConstInt(c->t_i32, (unsigned)factor, 0)) };
            props[n++] = LLVMMDNodeInContext2(C, k, 2);
        }
    }
    if (n == 0)
        return;
    LLVMMetadataRef tmp = LLVMTemporaryMDNode(C, NULL, 0);
    LLVMMetadataRef ops[3] = { tmp, props[0], n > 1 ? props[1] : NULL };
    LLVMMetadataRef id = LLVMMDNodeInContext2(C, ops, (size_t)n + 1);
    LLVMMetadataReplaceAllUsesWith(tmp, id);
    LLVMSetMetadata(latch_br, c->md_loop, LLVMMetadataAsValue(C, id));
}

static LLVMBasicBlockRef new_block(CgCtx *c, const char *var, const char *what)
{
    char name[160];
    snprintf(name, sizeof name, "%s%s%s", var ? var : "", var ? "." : "", what);
    return LLVMAppendBasicBlockInContext(c->ctx, c->fn, name);
}

/* preheader -> header (phi, exit test) -> body -> latch (i + 1) -> header | exit:
 * `var` runs over [lo, hi); body(c, s) emits the body.  Returns the latch's
 * branch (for !llvm.loop), or NULL on failure. */
LLVMValueRef cg_counted_loop(CgCtx *c, int var, LLVMValueRef lo, LLVMValueRef hi, CgStmtFn body, const LoopStmt *s)
{
    const char *vn = c->p->vars[var].name;
    LLVMBasicBlockRef pre = LLVMGetInsertBlock(c->b);
    LLVMBasicBlockRef header = new_block(c, vn, "header"), bb = new_block(c, vn, "body");
    LLVMBasicBlockRef latch = new_block(c, vn, "latch"), exit = new_block(c, vn, "exit");
    LLVMBuildBr(c->b, header);
    LLVMPositionBuilderAtEnd(c->b, header);
    LLVMValueRef i = LLVMBuildPhi(c->b, c->t_i64, vn);
    LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, LLVMIntSLT, i, hi, ""), bb, exit);
    LLVMPositionBuilderAtEnd(c->b, bb);
    c->var[var] = i;
    c->var_mut[var] = 0;
    if (body(c, s) != 0)
        return NULL;
    LLVMBuildBr(c->b, latch);
    LLVMMoveBasicBlockAfter(latch, LLVMGetInsertBlock(c->b));   /* blocks in source order */
    LLVMMoveBasicBlockAfter(exit, latch);
    LLVMPositionBuilderAtEnd(c->b, latch);
    LLVMValueRef next = LLVMBuildNSWAdd(c->b, i, LLVMConstInt(c->t_i64, 1, 0), "");
    LLVMValueRef br = LLVMBuildBr(c->b, header);
    LLVMValueRef in_v[2] = { lo, next };
    LLVMBasicBlockRef in_b[2] = { pre, latch };
    LLVMAddIncoming(i, in_v, in_b, 2);
    LLVMPositionBuilderAtEnd(c->b, exit);
    return br;
}

static int for_loop(CgCtx *c, const LoopStmt *s)
{
    LoopForKind k = s->u.loop.kind;
    int gpu_kind = k >= LOOP_GPU_BLOCK_X && k <= LOOP_GPU_THREAD_Z;
    if (gpu_kind && c->gpu)
        return c->hooks->gpu_loop(c, s);     /* ptx.c: the loop variable is a block / thread index */
    if (!(gpu_kind && c->o.gpu_emulate) && !(k == LOOP_HLS_PIPELINE && c->o.hls_emulate) && k != LOOP_SERIAL && k != LOOP_PARALLEL && k != LOOP_VECTORIZED &&
        k != LOOP_UNROLLED)
        return cg_fail(c, "'%s' is not a CPU loop kind", loop_for_kind_name(k));
    if (k == LOOP_VECTORIZED) {          /* vector.c: the body as W-lane operations */
        int r = cg_vector_loop(c, s);
        if (r <= 0)
            return r;
    }                                    /* PARALLEL: parallel.c splits it between tasks (region) */
    LLVMValueRef n = cg_expr(c, s->u.loop.extent);
    if (!n)
        return -1;
    unsigned math_before = c->math_calls;
    LLVMValueRef br = cg_counted_loop(c, s->u.loop.var, LLVMConstInt(c->t_i64, 0, 0), n, cg_stmt, s->u.loop.body);
    if (!br)
        return -1;
    loop_metadata(c, s, br, c->math_calls != math_before);
    return 0;
}

/* if cond then else, the branches emitted by emit(c, branch). */
int cg_if(CgCtx *c, const LoopStmt *s, CgStmtFn emit)
{
    LLVMValueRef k = cg_expr(c, s->u.cond.cond);
    if (!k)
        return -1;
    LLVMBasicBlockRef then_ = new_block(c, NULL, "then"), join = new_block(c, NULL, "endif");
    LLVMBasicBlockRef else_ = s->u.cond.else_ ? new_block(c, NULL, "else") : join;
    LLVMBuildCondBr(c->b, k, then_, else_);
    LLVMPositionBuilderAtEnd(c->b, then_);
    if (emit(c, s->u.cond.then_) != 0)
        return -1;
    LLVMBuildBr(c->b, join);
    if (s->u.cond.else_) {
        LLVMPositionBuilderAtEnd(c->b, else_);
        if (emit(c, s->u.cond.else_) != 0)
            return -1;
        LLVMBuildBr(c->b, join);
    }
    LLVMMoveBasicBlockAfter(join, LLVMGetInsertBlock(c->b));
    LLVMPositionBuilderAtEnd(c->b, join);
    return 0;
}

int cg_stmt(CgCtx *c, const LoopStmt *s)
{
    switch (s->kind) {
    case LOOP_S_FOR:
        return for_loop(c, s);
    case LOOP_S_LET: {
        int var = s->u.let.var;
        LLVMValueRef v = cg_expr(c, s->u.let.value);
        if (!v)
            return -1;
        if (!s->u.let.mutable_) {
            c->var[var] = v;
            return 0;
        }
        LLVMValueRef slot = LLVMBuildAlloca(c->ab, cg_reg_type(c, c->p->vars[var].type), c->p->vars[var].name);
        LLVMBuildStore(c->b, v, slot);
        c->var[var] = slot;
        c->var_mut[var] = 1;
        return 0;
    }
    case LOOP_S_ASSIGN: {
        LLVMValueRef v = cg_expr(c, s->u.assign.value);
        if (!v)
            return -1;
        LLVMBuildStore(c->b, v, c->var[s->u.assign.var]);
        return 0;
    }
    case LOOP_S_STORE: {
        IrDType t = c->p->bufs[s->u.store.buf].dtype;
        LLVMValueRef idx = cg_expr(c, s->u.store.index);
        LLVMValueRef v = idx ? cg_expr(c, s->u.store.value) : NULL;
        if (!v)
            return -1;
        LLVMTypeRef mt = cg_mem_type(c, t);
        LLVMValueRef ptr = LLVMBuildInBoundsGEP2(c->b, mt, c->bufptr[s->u.store.buf], &idx, 1, "");
        LLVMSetAlignment(LLVMBuildStore(c->b, cg_to_mem(c, t, v), ptr), (unsigned)ir_dtype_size(t));
        return 0;
    }
    case LOOP_S_IF:
        return cg_if(c, s, cg_stmt);
    case LOOP_S_BLOCK:
        for (int i = 0; i < s->u.block.n; i++)
            if (cg_stmt(c, s->u.block.items[i]) != 0)
                return -1;
        return 0;
    case LOOP_S_PREFETCH: {       /* into L2 (locality 2: prefetcht1 on x86); never faults */
        if (c->gpu)
            return 0;
        LLVMValueRef idx = cg_expr(c, s->u.prefetch.index);
        if (!idx)
            return -1;
        LLVMTypeRef mt = cg_mem_type(c, c->p->bufs[s->u.prefetch.buf].dtype);
        LLVMValueRef args[4] = { LLVMBuildGEP2(c->b, mt, c->bufptr[s->u.prefetch.buf], &idx, 1, ""),
                                 LLVMConstInt(c->t_i32, 0, 0), LLVMConstInt(c->t_i32, 2, 0),
                                 LLVMConstInt(c->t_i32, 1, 0) };
        LLVMTypeRef ovl = c->t_ptr;
        return cg_call_intrinsic(c, "llvm.prefetch", &ovl, 1, args, 4) ? 0 : -1;
    }
    case LOOP_S_BARRIER:
        if (c->gpu)
            return c->hooks->barrier(c);
        return cg_fail(c, "'barrier' is not a CPU statement%s",
                       c->o.gpu_emulate ? " (GPU emulation needs barriers split first)" : "");
    }
    return cg_fail(c, "unknown statement kind %d", (int)s->kind);
}

/* ------------------------------------------------------------ functions */

static LLVMTypeRef entry_type(CgCtx *c, LLVMTypeRef ret)
{
    LLVMTypeRef params[3] = { c->t_ptr, c->t_ptr, c->t_ptr };
    return LLVMFunctionType(ret, params, 3, 0);
}

/* Kernel functions: (inputs, outputs, workspace[, task state in a region]). */
static LLVMTypeRef kernel_type(CgCtx *c)
{
    LLVMTypeRef params[4] = { c->t_ptr, c->t_ptr, c->t_ptr, c->t_ptr };
    return LLVMFunctionType(c->t_void, params, c->region ? 4 : 3, 0);
}

/* Starts a function: an entry block for allocas and pointer setup, and the
 * builder at the first body block. */
static void begin_function(CgCtx *c, LLVMValueRef fn)
{
    c->fn = fn;
    for (unsigned i = 0; i < 3; i++)
        c->args[i] = LLVMGetParam(fn, i);
    LLVMSetValueName2(c->args[0], "inputs", 6);
    LLVMSetValueName2(c->args[1], "outputs", 7);
    LLVMSetValueName2(c->args[2], "workspace", 9);
    cg_add_fn_attr(c, fn, "nounwind", 0);
    c->entry = LLVMAppendBasicBlockInContext(c->ctx, fn, "entry");
    LLVMPositionBuilderAtEnd(c->ab, c->entry);
    LLVMPositionBuilderAtEnd(c->b, LLVMAppendBasicBlockInContext(c->ctx, fn, "body"));
}

void cg_end_entry_block(CgCtx *c)
{
    LLVMPositionBuilderAtEnd(c->ab, c->entry);
    LLVMBuildBr(c->ab, LLVMGetNextBasicBlock(c->entry));
}

static LLVMValueRef kernel_function(CgCtx *c, const LoopKernel *k)
{
    char name[300];   /* NAME.KERNEL: the dot keeps it apart from every exported C name */
    snprintf(name, sizeof name, "%s.%s", c->p->name, k->name);
    LLVMValueRef fn = LLVMAddFunction(c->mod, name, kernel_type(c));
    LLVMSetLinkage(fn, LLVMInternalLinkage);
    LLVMSetFunctionCallConv(fn, LLVMFastCallConv);
    /* A kernel stays a function of its own on hosted triples: inlined, the
     * one function of a large model took LLVM's -O2 pipeline twice as long
     * (ResNet-18: 1.4-1.8 -> 0.9 s, docs/performance.md, "Compile time") for
     * no measurable run time.  Bare-metal images inline them, which keeps the
     * stack bound (the sum of all frames, cg_emit_file) tight. */
    if (c->o.kernel_symbols || !c->bare_metal)
        cg_add_fn_attr(c, fn, "noinline", 0);
    begin_function(c, fn);
    c->tstate = c->region ? LLVMGetParam(fn, 3) : NULL;
    if (cg_setup_buffers(c, k->body) != 0 ||
        (c->region ? c->hooks->region_kernel(c, k->body) : cg_stmt(c, k->body)) != 0)
        return NULL;
    LLVMBuildRetVoid(c->b);
    cg_end_entry_block(c);
    return fn;
}

/* Bytes of workspace the program needs (0: the pointer may be NULL). */
static int64_t workspace_need(const LoopProgram *p)
{
    int64_t need = p->workspace_bytes;
    for (int i = 0; i < p->n_bufs; i++) {
        const LoopBuf *b = &p->bufs[i];
        if (b->storage == LOOP_ST_WORKSPACE && b->alias_of < 0 && b->bytes > 0 && b->offset + b->bytes > need)
            need = b->offset + b->bytes;
    }
    return need;
}

/* Branches to fail when v is NULL; continues in a new block otherwise. */
static void null_check(CgCtx *c, LLVMValueRef v, LLVMBasicBlockRef fail)
{
    LLVMBasicBlockRef ok = LLVMAppendBasicBlockInContext(c->ctx, c->fn, "ok");
    LLVMBuildCondBr(c->b, LLVMBuildIsNull(c->b, v, ""), fail, ok);
    LLVMPositionBuilderAtEnd(c->b, ok);
}

/* Checks an array of n pointers: the array itself, then all its entries. */
static void null_check_array(CgCtx *c, LLVMValueRef arr, int n, LLVMBasicBlockRef fail)
{
    if (n <= 0)
        return;
    null_check(c, arr, fail);
    LLVMValueRef any = NULL;
    for (int i = 0; i < n; i++) {
        LLVMValueRef idx = LLVMConstInt(c->t_i64, (unsigned long long)i, 0);
        LLVMValueRef v = LLVMBuildLoad2(c->b, c->t_ptr, LLVMBuildInBoundsGEP2(c->b, c->t_ptr, arr, &idx, 1, ""), "");
        LLVMValueRef z = LLVMBuildIsNull(c->b, v, "");
        any = any ? LLVMBuildOr(c->b, any, z, "") : z;
    }
    LLVMBasicBlockRef ok = LLVMAppendBasicBlockInContext(c->ctx, c->fn, "ok");
    LLVMBuildCondBr(c->b, any, fail, ok);
    LLVMPositionBuilderAtEnd(c->b, ok);
}

/* The firmware workspace: workspace ? workspace : NAME.workspace, a
 * zero-initialized internal global (.bss or o->workspace_section). */
static LLVMValueRef static_workspace(CgCtx *c, int64_t bytes)
{
    char name[300];
    snprintf(name, sizeof name, "%s.workspace", c->p->name);
    LLVMTypeRef t = LLVMArrayType2(c->t_i8, (uint64_t)bytes);
    LLVMValueRef g = LLVMAddGlobal(c->mod, t, name);
    LLVMSetInitializer(g, LLVMConstNull(t));
    LLVMSetLinkage(g, LLVMInternalLinkage);
    LLVMSetAlignment(g, 64);
    if (c->o.workspace_section && *c->o.workspace_section)
        LLVMSetSection(g, c->o.workspace_section);
    return LLVMBuildSelect(c->b, LLVMBuildIsNull(c->b, c->args[2], ""), g, c->args[2], "ws");
}

int cg_emit_module(CgCtx *c)
{
    const LoopProgram *p = c->p;
    LLVMValueRef *kfn = calloc(p->n_kernels > 0 ? (size_t)p->n_kernels : 1, sizeof *kfn);
    if (!kfn)
        return cg_fail(c, "out of memory");
    for (int k = 0; k < p->n_kernels; k++)
        if (!(kfn[k] = kernel_function(c, &p->kernels[k]))) {
            free(kfn);
            return -1;
        }

    /* int32_t NAME_run_ptrs(const void *const inputs[], void *const outputs[], void *workspace) */
    char name[300];
    snprintf(name, sizeof name, "%s_run_ptrs", p->name);
    LLVMTypeRef ft = entry_type(c, c->t_i32);
    LLVMValueRef run_ptrs = LLVMAddFunction(c->mod, name, ft);
    begin_function(c, run_ptrs);
    cg_add_fn_attr(c, run_ptrs, "noinline", 0);   /* NAME_run stays a jump to it, not a second copy */
    LLVMBasicBlockRef fail = LLVMAppendBasicBlockInContext(c->ctx, run_ptrs, "null");
    null_check_array(c, c->args[0], p->n_inputs, fail);
    null_check_array(c, c->args[1], p->n_outputs, fail);
    LLVMValueRef kargs[3] = { c->args[0], c->args[1], c->args[2] };
    if (workspace_need(p) > 0 && c->o.static_workspace)
        kargs[2] = static_workspace(c, workspace_need(p));
    else if (workspace_need(p) > 0)
        null_check(c, c->args[2], fail);
    if (c->region && c->hooks->region_run(c, kfn, p->n_kernels, kargs, kernel_type(c)) != 0) {
        free(kfn);
        return -1;
    }
    for (int k = 0; k < p->n_kernels && !c->region; k++) {
        LLVMValueRef call = LLVMBuildCall2(c->b, kernel_type(c), kfn[k], kargs, 3, "");
        LLVMSetInstructionCallConv(call, LLVMFastCallConv);
    }
    LLVMBuildRet(c->b, LLVMConstInt(c->t_i32, 0, 0));
    LLVMMoveBasicBlockAfter(fail, LLVMGetInsertBlock(c->b));
    LLVMPositionBuilderAtEnd(c->b, fail);
    LLVMBuildRet(c->b, LLVMConstInt(c->t_i32, (unsigned long long)(int64_t)DLCC_ERR_NULL, 1));
    cg_end_entry_block(c);
    free(kfn);

    /* int32_t NAME_run(const NAME_inputs *in, NAME_outputs *out, void *workspace):
     * the structs hold the pointers in order, so they are the arrays. */
    snprintf(name, sizeof name, "%s_run", p->name);
    LLVMValueRef run = LLVMAddFunction(c->mod, name, ft);
    begin_function(c, run);
    LLVMValueRef r = LLVMBuildCall2(c->b, ft, run_ptrs, c->args, 3, "");
    LLVMSetTailCall(r, 1);
    LLVMBuildRet(c->b, r);
    cg_end_entry_block(c);
    return 0;
}
