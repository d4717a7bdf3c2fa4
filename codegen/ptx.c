/* codegen/ptx.c — the GPU path: device code for LLVM's NVPTX backend (the
 * statement/expression emitter of emit.c/expr.c with the GPU hooks below)
 * and the host object that launches it through dlcc's runtime (see
 * codegen.h and runtime/dlcc_gpu.h). */
#include "codegen/cg_impl.h"
#include "runtime/dlcc_gpu.h"

#include <llvm-c/BitReader.h>
#include <llvm-c/Linker.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ device buffers */

/* The buffers that live in device memory: every root INPUT / OUTPUT / CONST
 * buffer and one for the whole workspace. */
typedef struct DevBufs {
    int n;
    int *of;          /* per program buffer: device buffer number of its root, or -1 */
    int *buf;         /* per device buffer: the program buffer (WORKSPACE: the first one) */
    int64_t ws_bytes;
} DevBufs;

static int64_t workspace_bytes(const LoopProgram *p)
{
    int64_t need = p->workspace_bytes;
    for (int i = 0; i < p->n_bufs; i++) {
        const LoopBuf *b = &p->bufs[i];
        if (b->storage == LOOP_ST_WORKSPACE && b->alias_of < 0 && b->offset + b->bytes > need)
            need = b->offset + b->bytes;
    }
    return need;
}

static int dev_bufs(CgCtx *c, DevBufs *db)
{
    const LoopProgram *p = c->p;
    size_t nb = p->n_bufs > 0 ? (size_t)p->n_bufs : 1;
    db->n = 0;
    db->of = malloc(nb * sizeof *db->of);
    db->buf = malloc((nb + 1) * sizeof *db->buf);
    db->ws_bytes = workspace_bytes(p);
    if (!db->of || !db->buf)
        return cg_fail(c, "out of memory");
    int ws = -1;
    for (int i = 0; i < p->n_bufs; i++) {   /* roots first, in buffer order */
        db->of[i] = -1;
        if (p->bufs[i].alias_of >= 0)
            continue;
        switch (p->bufs[i].storage) {
        case LOOP_ST_INPUT: case LOOP_ST_OUTPUT: case LOOP_ST_CONST:
            db->buf[db->n] = i;
            db->of[i] = db->n++;
            break;
        case LOOP_ST_WORKSPACE:
            if (ws < 0) {
                db->buf[db->n] = i;
                ws = db->n++;
            }
            db->of[i] = ws;
            break;
        case LOOP_ST_LOCAL: break;
        }
    }
    for (int i = 0; i < p->n_bufs; i++) {   /* views use their root's device buffer */
        int r = cg_storage_root(p, i);
        if (r < 0)
            return cg_fail(c, "buffer '%s' aliases itself through alias_of", p->bufs[i].name);
        db->of[i] = db->of[r];
    }
    return 0;
}

static void dev_bufs_free(DevBufs *db)
{
    free(db->of);
    free(db->buf);
}

/* ------------------------------------------------------------ hooks */

static LoopForKind gpu_kind(const LoopStmt *s) { return s->u.loop.kind; }

static int gpu_loop(CgCtx *c, const LoopStmt *s)
{
    static const char *const sreg[] = {
        "llvm.nvvm.read.ptx.sreg.ctaid.x", "llvm.nvvm.read.ptx.sreg.ctaid.y", "llvm.nvvm.read.ptx.sreg.ctaid.z",
        "llvm.nvvm.read.ptx.sreg.tid.x",   "llvm.nvvm.read.ptx.sreg.tid.y",   "llvm.nvvm.read.ptx.sreg.tid.z",
    };
    LLVMValueRef id = cg_call_intrinsic(c, sreg[gpu_kind(s) - LOOP_GPU_BLOCK_X], NULL, 0, NULL, 0);
    LLVMValueRef n = id ? cg_expr(c, s->u.loop.extent) : NULL;
    if (!n)
        return -1;
    LLVMValueRef v = LLVMBuildZExt(c->b, id, c->t_i64, c->p->vars[s->u.loop.var].name);
    c->var[s->u.loop.var] = v;
    /* The launch has the loop's extent; the guard keeps a shorter loop of the same axis exact. */
    LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(c->ctx, c->fn, "gpu.body");
    LLVMBasicBlockRef join = LLVMAppendBasicBlockInContext(c->ctx, c->fn, "gpu.end");
    LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, LLVMIntSLT, v, n, ""), body, join);
    LLVMPositionBuilderAtEnd(c->b, body);
    if (cg_stmt(c, s->u.loop.body) != 0)
        return -1;
    LLVMBuildBr(c->b, join);
    LLVMMoveBasicBlockAfter(join, LLVMGetInsertBlock(c->b));
    LLVMPositionBuilderAtEnd(c->b, join);
    return 0;
}

static int gpu_barrier(CgCtx *c)
{
    return cg_call_intrinsic(c, "llvm.nvvm.barrier0", NULL, 0, NULL, 0) ? 0 : -1;
}

static LLVMValueRef gpu_root_ptr(CgCtx *c, int i)
{
    const LoopBuf *b = &c->p->bufs[i];
    if (b->storage == LOOP_ST_LOCAL) {   /* shared memory of the block */
        char name[300];
        snprintf(name, sizeof name, "%s.%s", LLVMGetValueName(c->fn), b->name);
        LLVMTypeRef t = LLVMArrayType2(c->t_i8, (uint64_t)(b->bytes > 0 ? b->bytes : 1));
        LLVMValueRef g = LLVMAddGlobalInAddressSpace(c->mod, t, name, 3);
        LLVMSetInitializer(g, LLVMGetUndef(t));
        LLVMSetLinkage(g, LLVMInternalLinkage);
        LLVMSetAlignment(g, 16);
        return LLVMBuildAddrSpaceCast(c->ab, g, c->t_ptr, b->name);
    }
    int k = c->param_of[i];
    if (k < 0) {
        cg_fail(c, "internal error: buffer '%s' is not a kernel parameter", b->name);
        return NULL;
    }
    LLVMValueRef base = LLVMGetParam(c->fn, (unsigned)k);
    if (b->storage != LOOP_ST_WORKSPACE)
        return base;
    int64_t at = b->offset + b->base * (int64_t)ir_dtype_size(b->dtype);
    LLVMValueRef off = LLVMConstInt(c->t_i64, (unsigned long long)at, 0);
    return LLVMBuildInBoundsGEP2(c->ab, c->t_i8, base, &off, 1, b->name);
}

/* ------------------------------------------------------------ kernels */

/* Launch extents of a kernel: the largest constant extent of each GPU loop kind. */
static int launch_dims(CgCtx *c, const LoopStmt *s, int64_t dims[6])
{
    if (!s)
        return 0;
    switch (s->kind) {
    case LOOP_S_FOR: {
        LoopForKind k = s->u.loop.kind;
        if (k >= LOOP_GPU_BLOCK_X && k <= LOOP_GPU_THREAD_Z) {
            const LoopExpr *e = s->u.loop.extent;
            if (e->kind != LOOP_E_INT || e->u.i < 1 || e->u.i > 0x7fffffff ||
                (k >= LOOP_GPU_THREAD_X && e->u.i > 1024))
                return cg_fail(c, "GPU loop '%s' needs a constant extent in range",
                               c->p->vars[s->u.loop.var].name);
            if (e->u.i > dims[k - LOOP_GPU_BLOCK_X])
                dims[k - LOOP_GPU_BLOCK_X] = e->u.i;
        }
        return launch_dims(c, s->u.loop.body, dims);
    }
    case LOOP_S_IF:
        return launch_dims(c, s->u.cond.then_, dims) || launch_dims(c, s->u.cond.else_, dims) ? -1 : 0;
    case LOOP_S_BLOCK:
        for (int i = 0; i < s->u.block.n; i++)
            if (launch_dims(c, s->u.block.items[i], dims))
                return -1;
        return 0;
    default: return 0;
    }
}

/* The kernel's parameters: device buffers it uses, in order (args[0..*n)). */
static int kernel_params(CgCtx *c, const DevBufs *db, const LoopKernel *k, int *args, int *n)
{
    unsigned char *used = calloc((size_t)c->p->n_bufs + 1, 1);
    unsigned char *dev = calloc((size_t)db->n + 1, 1);
    if (!used || !dev) {
        free(used);
        free(dev);
        return cg_fail(c, "out of memory");
    }
    cg_used_buffers(k->body, used);
    for (int i = 0; i < c->p->n_bufs; i++)
        if (used[i] && db->of[i] >= 0)
            dev[db->of[i]] = 1;
    *n = 0;
    for (int j = 0; j < db->n; j++)
        if (dev[j])
            args[(*n)++] = j;
    free(used);
    free(dev);
    return 0;
}

static void param_attr(CgCtx *c, LLVMValueRef fn, int param, const char *name)
{
    unsigned kind = LLVMGetEnumAttributeKindForName(name, strlen(name));
    LLVMAddAttributeAtIndex(fn, (LLVMAttributeIndex)(param + 1), LLVMCreateEnumAttribute(c->ctx, kind, 0));
}

static void annotate(CgCtx *c, LLVMValueRef fn, const char *key, int64_t v)
{
    LLVMValueRef md[3] = { fn, LLVMMDStringInContext(c->ctx, key, (unsigned)strlen(key)),
                           LLVMConstInt(c->t_i32, (unsigned long long)v, 0) };
    LLVMAddNamedMetadataOperand(c->mod, "nvvm.annotations", LLVMMDNodeInContext(c->ctx, md, 3));
}

static int device_kernel(CgCtx *c, const DevBufs *db, const LoopKernel *k, const int *args, int n_args,
                         const int64_t dims[6])
{
    LLVMTypeRef *pt = malloc(((size_t)n_args + 1) * sizeof *pt);
    if (!pt)
        return cg_fail(c, "out of memory");
    for (int a = 0; a < n_args; a++)
        pt[a] = c->t_ptr;
    char name[300];
    snprintf(name, sizeof name, "%s_%s", c->p->name, k->name);
    LLVMValueRef fn = LLVMAddFunction(c->mod, name, LLVMFunctionType(c->t_void, pt, (unsigned)n_args, 0));
    free(pt);
    annotate(c, fn, "kernel", 1);
    annotate(c, fn, "maxntidx", dims[3]);   /* the exact block shape: ptxas sizes registers for it */
    annotate(c, fn, "maxntidy", dims[4]);
    annotate(c, fn, "maxntidz", dims[5]);
    cg_add_fn_attr(c, fn, "nounwind", 0);
    for (int i = 0; i < c->p->n_bufs; i++)
        c->param_of[i] = -1;
    for (int a = 0; a < n_args; a++) {
        LLVMValueRef prm = LLVMGetParam(fn, (unsigned)a);
        const char *bn = c->p->bufs[db->buf[args[a]]].storage == LOOP_ST_WORKSPACE ? "workspace"
                                                                                   : c->p->bufs[db->buf[args[a]]].name;
        LLVMSetValueName2(prm, bn, strlen(bn));
        /* every parameter is its own device allocation; inputs and weights are only read
         * (ld.global.nc, the read-only data cache) */
        param_attr(c, fn, a, "noalias");
        /* device allocations are 256-byte aligned: 16 lets LLVM prove the alignment of the
         * 4-lane loads and stores of vectorized kernels (ld.global.v4.f32) */
        LLVMAddAttributeAtIndex(fn, (LLVMAttributeIndex)(a + 1),
                                LLVMCreateEnumAttribute(c->ctx, LLVMGetEnumAttributeKindForName("align", 5), 16));
        LoopStorage st = c->p->bufs[db->buf[args[a]]].storage;
        if (st == LOOP_ST_INPUT || st == LOOP_ST_CONST)
            param_attr(c, fn, a, "readonly");
        for (int i = 0; i < c->p->n_bufs; i++)
            if (db->of[i] == args[a] && cg_storage_root(c->p, i) == i)
                c->param_of[i] = a;
    }
    c->fn = fn;
    c->entry = LLVMAppendBasicBlockInContext(c->ctx, fn, "entry");
    LLVMPositionBuilderAtEnd(c->ab, c->entry);
    LLVMPositionBuilderAtEnd(c->b, LLVMAppendBasicBlockInContext(c->ctx, fn, "body"));
    if (cg_setup_buffers(c, k->body) != 0 || cg_stmt(c, k->body) != 0)
        return -1;
    LLVMBuildRetVoid(c->b);
    cg_end_entry_block(c);
    return 0;
}

/* Links libdevice when the module calls __nv_* functions, and makes every
 * function but the kernels internal (so unused library code is dropped). */
static int link_libdevice(CgCtx *c, const char *path)
{
    int needed = 0;
    for (LLVMValueRef f = LLVMGetFirstFunction(c->mod); f; f = LLVMGetNextFunction(f)) {
        size_t len;
        const char *nm = LLVMGetValueName2(f, &len);
        if (LLVMIsDeclaration(f) && strncmp(nm, "__nv_", 5) == 0) {
            if (!path)
                return cg_fail(c, "the GPU kernels call %s but libdevice (libdevice.10.bc) was not found", nm);
            needed = 1;
        }
    }
    if (needed) {
        LLVMMemoryBufferRef mb;
        char *err = NULL;
        if (LLVMCreateMemoryBufferWithContentsOfFile(path, &mb, &err)) {
            cg_fail(c, "cannot read libdevice '%s': %s", path, err ? err : "");
            LLVMDisposeMessage(err);
            return -1;
        }
        LLVMModuleRef lib = NULL;
        int bad = LLVMParseBitcodeInContext2(c->ctx, mb, &lib);
        LLVMDisposeMemoryBuffer(mb);
        if (bad)
            return cg_fail(c, "cannot parse libdevice '%s'", path);
        LLVMSetTarget(lib, LLVMGetTarget(c->mod));
        LLVMSetDataLayout(lib, LLVMGetDataLayoutStr(c->mod));
        if (LLVMLinkModules2(c->mod, lib))
            return cg_fail(c, "linking libdevice '%s' failed", path);
        /* libdevice's __nvvm_reflect("__CUDA_FTZ") answers 0: denormals are kept. */
        LLVMAddModuleFlag(c->mod, LLVMModuleFlagBehaviorOverride, "nvvm-reflect-ftz", 16,
                          LLVMValueAsMetadata(LLVMConstInt(c->t_i32, 0, 0)));
    }
    for (LLVMValueRef f = LLVMGetFirstFunction(c->mod); f; f = LLVMGetNextFunction(f))
        if (!LLVMIsDeclaration(f) && LLVMGetLinkage(f) == LLVMExternalLinkage) {
            size_t len;
            const char *nm = LLVMGetValueName2(f, &len);
            if (strncmp(nm, c->p->name, strlen(c->p->name)) != 0 || nm[strlen(c->p->name)] != '_')
                LLVMSetLinkage(f, LLVMInternalLinkage);
        }
    return 0;
}

/* ------------------------------------------------------------ host object */

static int host_module(CgCtx *h, const DevBufs *db, const UtilBuf *ptx, const UtilBuf *names, const int64_t *table,
                       size_t n_table)
{
    char name[300];
    const LoopProgram *p = h->p;
    snprintf(name, sizeof name, "%s.ptx", p->name);
    LLVMValueRef g_ptx = cg_private_const(h, LLVMConstStringInContext(h->ctx, ptx->data, (unsigned)ptx->len, 0), name, 1);
    snprintf(name, sizeof name, "%s.kernel_names", p->name);
    LLVMValueRef g_names =
        cg_private_const(h, LLVMConstStringInContext(h->ctx, names->data ? names->data : "", (unsigned)names->len, 0),
                      name, 1);
    LLVMValueRef *vals = malloc((n_table + (size_t)db->n + 1) * sizeof *vals);
    if (!vals)
        return cg_fail(h, "out of memory");
    for (size_t i = 0; i < n_table; i++)
        vals[i] = LLVMConstInt(h->t_i64, (unsigned long long)table[i], 1);
    snprintf(name, sizeof name, "%s.table", p->name);
    LLVMValueRef g_table = cg_private_const(h, LLVMConstArray2(h->t_i64, vals, n_table), name, 8);
    int n_consts = 0;
    for (int j = 0; j < db->n; j++)
        if (p->bufs[db->buf[j]].storage == LOOP_ST_CONST) {
            LLVMValueRef g = cg_const_global(h, db->buf[j]);
            if (!g) {
                free(vals);
                return -1;
            }
            vals[n_consts++] = g;
        }
    if (n_consts == 0)
        vals[n_consts++] = LLVMConstNull(h->t_ptr);
    snprintf(name, sizeof name, "%s.consts", p->name);
    LLVMValueRef g_consts = cg_private_const(h, LLVMConstArray2(h->t_ptr, vals, (uint64_t)n_consts), name, 8);
    free(vals);
    LLVMValueRef fields[4] = { g_ptx, g_names, g_table, g_consts };
    snprintf(name, sizeof name, "%s.program", p->name);
    LLVMValueRef prog = cg_private_const(h, LLVMConstStructInContext(h->ctx, fields, 4, 0), name, 8);

    /* NAME_run's structs hold the pointers in order: they are the arrays */
    static const char *const entry[2] = { "run_ptrs", "run" };
    for (int e = 0; e < 2; e++) {
        snprintf(name, sizeof name, "%s_%s", p->name, entry[e]);
        cg_forward(h, name, 3, "dlcc_gpu_run", prog);
    }
    /* NAME_release(workspace): dlcc_gpu_release with the program, which only this object knows */
    snprintf(name, sizeof name, "%s_release", p->name);
    cg_forward(h, name, 1, "dlcc_gpu_release", prog);
    return 0;
}

/* ------------------------------------------------------------ pipeline */

void cg_gpu_result_init(CgGpuResult *r)
{
    util_buf_init(&r->ptx);
    util_buf_init(&r->obj);
    util_buf_init(&r->llvm_ir);
    r->n_device_bufs = 0;
}

void cg_gpu_result_free(CgGpuResult *r)
{
    util_buf_free(&r->ptx);
    util_buf_free(&r->obj);
    util_buf_free(&r->llvm_ir);
}

/* PTX ISA version per architecture: 7.8 covers sm_75 .. sm_90 and is what
 * LLVM 19 emits for sm_90 at least. */
static int arch_ok(const char *arch)
{
    static const char *const ok[] = { "sm_75", "sm_80", "sm_86", "sm_87", "sm_89", "sm_90", NULL };
    for (int i = 0; ok[i]; i++)
        if (strcmp(arch, ok[i]) == 0)
            return 1;
    return 0;
}

static int device_module(CgCtx *c, const DevBufs *db, const CgGpuOptions *o, UtilBuf *names,
                         int64_t **table, size_t *n_table)
{
    const LoopProgram *p = c->p;
    size_t cap = 5 + 3 * (size_t)db->n + (size_t)p->n_kernels * (8 + (size_t)db->n);
    int64_t *t = calloc(cap, sizeof *t);
    int *args = malloc(((size_t)db->n + 1) * sizeof *args);
    if (!t || !args) {
        free(t);
        free(args);
        return cg_fail(c, "out of memory");
    }
    *table = t;
    size_t n = 0;
    t[n++] = DLCC_GPU_VERSION;
    t[n++] = db->n;
    t[n++] = p->n_kernels;
    t[n++] = p->n_inputs;
    t[n++] = p->n_outputs;
    for (int j = 0; j < db->n; j++) {
        const LoopBuf *b = &p->bufs[db->buf[j]];
        int kind = b->storage == LOOP_ST_INPUT    ? DLCC_GPU_BUF_INPUT
                   : b->storage == LOOP_ST_OUTPUT ? DLCC_GPU_BUF_OUTPUT
                   : b->storage == LOOP_ST_CONST  ? DLCC_GPU_BUF_CONST
                                                  : DLCC_GPU_BUF_WORKSPACE;
        int index = b->index;
        if (kind == DLCC_GPU_BUF_CONST) {
            index = 0;
            for (int i = 0; i < j; i++)
                index += p->bufs[db->buf[i]].storage == LOOP_ST_CONST;
        }
        int64_t bytes = kind == DLCC_GPU_BUF_WORKSPACE ? db->ws_bytes : b->bytes;
        if (bytes > 0x7fffffff) {
            free(args);
            return cg_fail(c, "buffer '%s' of %lld bytes is too large for the GPU runtime", b->name,
                           (long long)bytes);
        }
        t[n++] = kind;
        t[n++] = kind == DLCC_GPU_BUF_WORKSPACE ? 0 : index;
        t[n++] = bytes;
    }
    int rc = 0;
    for (int k = 0; rc == 0 && k < p->n_kernels; k++) {
        int64_t dims[6] = { 1, 1, 1, 1, 1, 1 };
        int n_args = 0;
        rc = launch_dims(c, p->kernels[k].body, dims) || kernel_params(c, db, &p->kernels[k], args, &n_args) ||
             device_kernel(c, db, &p->kernels[k], args, n_args, dims);
        if (rc)
            break;
        t[n++] = (int64_t)names->len;
        util_buf_printf(names, "%s_%s", p->name, p->kernels[k].name);
        util_buf_put(names, "", 1);
        for (int i = 0; i < 6; i++)
            t[n++] = dims[i];
        t[n++] = n_args;
        for (int a = 0; a < n_args; a++)
            t[n++] = args[a];
    }
    free(args);
    *n_table = n;
    if (rc)
        return -1;
    return link_libdevice(c, o->libdevice);
}

int cg_compile_gpu(const LoopProgram *p, const CgGpuOptions *o, CgGpuResult *r, UtilDiag *d)
{
    if (loop_verify(p, d) != 0)
        return -1;
    const char *arch = o->arch ? o->arch : "sm_80";
    CgOptions dev_o = { .triple = "nvptx64-nvidia-cuda", .cpu = arch, .features = "+ptx78",
                        .opt_level = o->opt_level };
    CgOptions host_o = { .triple = o->host_triple, .opt_level = o->opt_level };
    CgCtx c, h;
    DevBufs db = { 0 };
    UtilBuf names;
    util_buf_init(&names);
    int64_t *table = NULL;
    size_t n_table = 0;
    memset(&h, 0, sizeof h);
    int rc = cg_ctx_init(&c, p, &dev_o, NULL, 0, d);
    if (rc == 0 && !arch_ok(arch))
        rc = cg_fail(&c, "GPU architecture '%s' is not supported (sm_75, sm_80, sm_86, sm_87, sm_89, sm_90)", arch);
    if (rc == 0) {
        static const CgHooks device_hooks = { .gpu_loop = gpu_loop, .barrier = gpu_barrier,
                                              .root_ptr = gpu_root_ptr };
        c.gpu = 1;
        c.hooks = &device_hooks;
        c.param_of = malloc(((size_t)p->n_bufs + 1) * sizeof *c.param_of);
        rc = c.param_of ? dev_bufs(&c, &db) : cg_fail(&c, "out of memory");
    }
    if (rc == 0)
        rc = device_module(&c, &db, o, &names, &table, &n_table);
    if (rc == 0)
        rc = cg_ctx_optimize(&c);
    if (rc == 0 && (o->emit & CG_EMIT_LLVM)) {
        char *s = LLVMPrintModuleToString(c.mod);
        util_buf_put(&r->llvm_ir, s, strlen(s));
        LLVMDisposeMessage(s);
    }
    if (rc == 0)
        rc = cg_emit_last(&c, LLVMAssemblyFile, &r->ptx);
    if (rc == 0)
        rc = cg_ctx_init(&h, p, &host_o, NULL, 0, d);
    if (rc == 0)
        rc = host_module(&h, &db, &r->ptx, &names, table, n_table);
    if (rc == 0)
        rc = cg_ctx_optimize(&h);
    if (rc == 0)
        rc = cg_emit_file(&h, LLVMObjectFile, &r->obj, NULL);
    r->n_device_bufs = db.n;
    free(c.param_of);
    c.param_of = NULL;
    cg_ctx_dispose(&c);
    cg_ctx_dispose(&h);
    dev_bufs_free(&db);
    util_buf_free(&names);
    free(table);
    return rc;
}
