/* codegen/parallel.c — one parallel region per call (CgOptions.threads = T
 * > 1 and some kernel has a PARALLEL loop).
 *
 * NAME_run_ptrs starts the region once, through the Halide runtime's pool
 * (HalideRuntime.h; the object then links the runtime, `pkg-config --libs
 * dlcc-runtime`):
 *
 *     Region r = { 0 };                       (on NAME_run_ptrs's stack)
 *     closure = { inputs, outputs, workspace, &r };
 *     halide_do_par_for(NULL, NAME.region, 0, T, closure);
 *
 * and every task runs every kernel in order, each kernel function taking a
 * fourth argument, the task's own Thread state { &r, base, t }:
 *
 *     int32_t NAME.region(void *uc, int32_t t, Closure *cl)
 *         Thread me = { cl->region, 0, t };  joined += 1;
 *         NAME.k0(cl->in, cl->out, cl->ws, &me); ... NAME.kN(..., &me);
 *         left += 1;  task 0: wait (bounded) until left == joined
 *
 * Inside a kernel the work is cut into *instances*: each PARALLEL loop of
 * constant extent E is an instance of n = min(T, E) chunks (chunk c runs
 * iterations [c·E/n, (c+1)·E/n)), and every statement with side effects
 * outside a PARALLEL loop is an instance of one chunk (the whole
 * statement).  Every task meets the same instances in the same order (the
 * control flow around them depends on loop variables and constants only),
 * so the instances can be numbered by the chunks before them: the instance
 * a task is at is the one of id `base` (me.base, the chunks of the
 * instances before it).  The Region's claim word holds the open instance
 * and its unclaimed chunks [front, back); even tasks take chunks from the
 * front, odd ones from the back, so with as many chunks as tasks task 0
 * runs the first chunk of every loop and task 1 the last — the same part
 * of consecutive layers split the same way stays in the same core's cache:
 *
 *     loop: w = claim  (id, front, back)
 *           if id < base: cmpxchg(claim, w, (base, 0, n)); goto loop
 *           if id > base or front >= back: goto wait
 *           k = odd task ? back - 1 : front
 *           if !cmpxchg(claim, w, w with k taken): goto loop
 *           run chunk k;  done += 1;  goto loop
 *     wait: while done < base + n: pause (after WAIT_SPINS: yield the core)
 *           me.base = base + n
 *
 * A task opens its instance only when the word's is older: by then it has
 * waited for every chunk before its own, so the older instance is spent.
 * A task claims a chunk only while the word holds its own instance (the
 * compare-and-swap), so a task that starts late skips, instance by
 * instance, what the others already did, and a task that never runs (a
 * pool of one thread) leaves its chunks to the others: no task waits for
 * another task to arrive, only for chunks it claimed to finish, so the
 * region cannot deadlock whatever the pool does.  The wait at the end of
 * an instance is the only barrier; a task waits there spinning (pause),
 * which is what makes one region per call cheaper than one
 * halide_do_par_for per loop: the pool's workers sleep on a condition
 * variable between jobs, and waking one costs microseconds (tens on a VM),
 * once per call instead of once per loop.
 *
 * Statements run by every task: immutable LETs (their values are the same
 * in every task) and the loops, IFs and blocks that hold a PARALLEL loop.
 * A kernel where a chunk would set a variable read outside it (a mutable
 * LET or an ASSIGN outside any chunk, an ASSIGN to a variable declared
 * outside its chunk), or where a statement outside every PARALLEL loop
 * touches a LOCAL buffer, runs whole as one chunk.  LOCAL buffers are
 * allocas of the kernel function, so each task has its own. */
#include "codegen/cg_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Pauses before a waiting task yields its core (halide_thread_yield) at
 * every further check: with more tasks than free cores, the task running
 * the awaited chunk may be waiting for this core. */
enum { WAIT_SPINS = 1 << 14 };

/* Region: { claim, pad, done, pad, joined, left } — claim and done on
 * cache lines of their own. */
enum { R_CLAIM = 0, R_DONE = 2, R_JOINED = 4, R_LEFT = 5, R_FIELDS = 6 };

static LLVMTypeRef region_type(CgCtx *c)
{
    LLVMTypeRef pad = LLVMArrayType2(c->t_i64, 7);
    LLVMTypeRef f[R_FIELDS] = { c->t_i64, pad, c->t_i64, pad, c->t_i64, c->t_i64 };
    return LLVMStructTypeInContext(c->ctx, f, R_FIELDS, 0);
}

/* Thread: { Region *region, i64 base, i64 task } */
static LLVMTypeRef thread_type(CgCtx *c)
{
    LLVMTypeRef f[3] = { c->t_ptr, c->t_i64, c->t_i64 };
    return LLVMStructTypeInContext(c->ctx, f, 3, 0);
}

static int has_parallel(const LoopStmt *s)
{
    if (!s)
        return 0;
    switch (s->kind) {
    case LOOP_S_FOR:
        return (s->u.loop.kind == LOOP_PARALLEL && s->u.loop.extent->kind == LOOP_E_INT &&
                s->u.loop.extent->u.i >= 2) || has_parallel(s->u.loop.body);
    case LOOP_S_IF: return has_parallel(s->u.cond.then_) || has_parallel(s->u.cond.else_);
    case LOOP_S_BLOCK:
        for (int i = 0; i < s->u.block.n; i++)
            if (has_parallel(s->u.block.items[i]))
                return 1;
        return 0;
    default: return 0;
    }
}

/* bound[v] = 1 for the variables s declares (LET, FOR); 1 when s assigns
 * a variable it does not declare (checked after the walk). */
static void declared(const LoopStmt *s, unsigned char *bound, unsigned char *assigned)
{
    if (!s)
        return;
    switch (s->kind) {
    case LOOP_S_FOR: bound[s->u.loop.var] = 1; declared(s->u.loop.body, bound, assigned); break;
    case LOOP_S_LET: bound[s->u.let.var] = 1; break;
    case LOOP_S_ASSIGN: assigned[s->u.assign.var] = 1; break;
    case LOOP_S_IF: declared(s->u.cond.then_, bound, assigned); declared(s->u.cond.else_, bound, assigned); break;
    case LOOP_S_BLOCK:
        for (int i = 0; i < s->u.block.n; i++)
            declared(s->u.block.items[i], bound, assigned);
        break;
    default: break;
    }
}

/* 1 when s as one chunk sets no variable outside itself. */
static int chunk_closed(CgCtx *c, const LoopStmt *s, int *oom)
{
    size_t n = (size_t)c->p->n_vars + 1;
    unsigned char *bound = calloc(n, 1), *assigned = calloc(n, 1);
    int ok = bound && assigned;
    if (!ok)
        *oom = 1;
    else
        declared(s, bound, assigned);
    for (size_t v = 0; ok && v + 1 < n; v++)
        if (assigned[v] && !bound[v])
            ok = 0;
    free(bound);
    free(assigned);
    return ok;
}

static int is_const_let(const LoopStmt *s)
{
    return s->kind == LOOP_S_LET && !s->u.let.mutable_;
}

typedef struct LocalUse {
    const LoopProgram *p;
    int any;
} LocalUse;

static void local_use(void *ctx, int buf, int store)
{
    (void)store;
    LocalUse *u = ctx;
    u->any |= u->p->bufs[buf].storage == LOOP_ST_LOCAL;
}

/* Does s touch a LOCAL buffer?  Outside a PARALLEL loop such a statement
 * is an instance of its own, which any task may run, each task with its
 * own allocas: a state kept in a LOCAL buffer from one instance to the next
 * (a recurrent kernel's h, set, then stepped, then stored as Y_h) would be
 * another task's.  Such a kernel runs whole as one chunk. */
static int uses_local(const CgCtx *c, const LoopStmt *s)
{
    LocalUse u = { c->p, 0 };
    loop_stmt_buffers(s, local_use, &u);
    return u.any;
}

/* 1 when every chunk the region cuts s into is closed (see the top). */
static int region_ok(CgCtx *c, const LoopStmt *s, int *oom)
{
    if (!has_parallel(s))
        return is_const_let(s) || (s->kind != LOOP_S_LET && s->kind != LOOP_S_ASSIGN && !uses_local(c, s) &&
                                   chunk_closed(c, s, oom));
    switch (s->kind) {
    case LOOP_S_FOR:
        return s->u.loop.kind == LOOP_PARALLEL ? chunk_closed(c, s->u.loop.body, oom) : region_ok(c, s->u.loop.body, oom);
    case LOOP_S_IF:
        return region_ok(c, s->u.cond.then_, oom) && (!s->u.cond.else_ || region_ok(c, s->u.cond.else_, oom));
    case LOOP_S_BLOCK:
        for (int i = 0; i < s->u.block.n; i++)
            if (!region_ok(c, s->u.block.items[i], oom))
                return 0;
        return 1;
    default: return 0;
    }
}

static LLVMValueRef field(CgCtx *c, LLVMTypeRef t, LLVMValueRef p, unsigned i)
{
    return LLVMBuildStructGEP2(c->b, t, p, i, "");
}

static LLVMValueRef i64c(CgCtx *c, int64_t v)
{
    return LLVMConstInt(c->t_i64, (unsigned long long)v, 1);
}

static LLVMBasicBlockRef block(CgCtx *c, const char *name)
{
    return LLVMAppendBasicBlockInContext(c->ctx, c->fn, name);
}

/* A spin-wait hint: pause (x86), yield (AArch64), nothing elsewhere. */
static void spin_hint(CgCtx *c)
{
    if (strncmp(c->triple, "x86_64", 6) == 0 || (c->triple[0] == 'i' && strstr(c->triple, "86-")))
        cg_call_intrinsic(c, "llvm.x86.sse2.pause", NULL, 0, NULL, 0);
    else if (strncmp(c->triple, "aarch64", 7) == 0 || strncmp(c->triple, "arm64", 5) == 0)
        cg_call_intrinsic(c, "llvm.aarch64.hint", NULL, 0, &(LLVMValueRef){ LLVMConstInt(c->t_i32, 1, 0) }, 1);
}

static LLVMValueRef atomic_load(CgCtx *c, LLVMValueRef p, LLVMAtomicOrdering o)
{
    LLVMValueRef v = LLVMBuildLoad2(c->b, c->t_i64, p, "");
    LLVMSetOrdering(v, o);
    LLVMSetAlignment(v, 8);
    return v;
}

/* One instance of n chunks; chunk(c, s, k, n) emits chunk k. */
typedef int (*ChunkFn)(CgCtx *c, const LoopStmt *s, LLVMValueRef k, int64_t n);

static int instance(CgCtx *c, const LoopStmt *s, int64_t n, ChunkFn chunk)
{
    LLVMTypeRef rt = region_type(c), tt = thread_type(c);
    LLVMValueRef region = LLVMBuildLoad2(c->b, c->t_ptr, field(c, tt, c->tstate, 0), "region");
    LLVMValueRef base_p = field(c, tt, c->tstate, 1);
    LLVMValueRef base = LLVMBuildLoad2(c->b, c->t_i64, base_p, "base");
    LLVMValueRef odd = LLVMBuildTrunc(c->b, LLVMBuildLoad2(c->b, c->t_i64, field(c, tt, c->tstate, 2), "task"),
                                      LLVMInt1TypeInContext(c->ctx), "odd");
    LLVMValueRef end = LLVMBuildAdd(c->b, base, i64c(c, n), "end");
    LLVMValueRef claim = field(c, rt, region, R_CLAIM), done = field(c, rt, region, R_DONE);
    LLVMBasicBlockRef loop = block(c, "claim"), open = block(c, "claim.open"), here = block(c, "claim.here");
    LLVMBasicBlockRef try_ = block(c, "claim.try"), work = block(c, "chunk");
    LLVMBasicBlockRef wait = block(c, "wait"), spin = block(c, "wait.spin"), out = block(c, "instance.end");
    LLVMBuildBr(c->b, loop);

    /* claim = (id + 1) << 32 | front << 16 | back: the open instance (id:
     * its base) and its unclaimed chunks [front, back), 16 bits each (n <= T <= 1024) */
    LLVMPositionBuilderAtEnd(c->b, loop);
    LLVMValueRef w = atomic_load(c, claim, LLVMAtomicOrderingMonotonic);
    LLVMValueRef id = LLVMBuildSub(c->b, LLVMBuildLShr(c->b, w, i64c(c, 32), ""), i64c(c, 1), "id");
    LLVMValueRef older = LLVMBuildICmp(c->b, LLVMIntSLT, id, base, "");
    LLVMBasicBlockRef not_older = block(c, "claim.cur");
    LLVMBuildCondBr(c->b, older, open, not_older);
    LLVMPositionBuilderAtEnd(c->b, not_older);
    LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, LLVMIntEQ, id, base, ""), here, wait);

    /* every chunk before this instance is done (this task waited for
     * them), so the word's instance is spent: open this one */
    LLVMPositionBuilderAtEnd(c->b, open);
    LLVMValueRef fresh = LLVMBuildOr(c->b, LLVMBuildShl(c->b, LLVMBuildAdd(c->b, base, i64c(c, 1), ""), i64c(c, 32), ""),
                                     i64c(c, n), "");
    LLVMBuildAtomicCmpXchg(c->b, claim, w, fresh, LLVMAtomicOrderingAcquireRelease, LLVMAtomicOrderingMonotonic, 0);
    LLVMBuildBr(c->b, loop);

    LLVMPositionBuilderAtEnd(c->b, here);
    LLVMValueRef front = LLVMBuildAnd(c->b, LLVMBuildLShr(c->b, w, i64c(c, 16), ""), i64c(c, 0xffff), "front");
    LLVMValueRef back = LLVMBuildAnd(c->b, w, i64c(c, 0xffff), "back");
    LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, LLVMIntSGE, front, back, ""), wait, try_);

    LLVMPositionBuilderAtEnd(c->b, try_);
    LLVMValueRef k = LLVMBuildSelect(c->b, odd, LLVMBuildSub(c->b, back, i64c(c, 1), ""), front, "k");
    LLVMValueRef next = LLVMBuildSelect(c->b, odd, LLVMBuildSub(c->b, w, i64c(c, 1), ""),
                                        LLVMBuildAdd(c->b, w, i64c(c, 1 << 16), ""), "");
    LLVMValueRef x = LLVMBuildAtomicCmpXchg(c->b, claim, w, next, LLVMAtomicOrderingAcquireRelease,
                                            LLVMAtomicOrderingMonotonic, 0);
    LLVMBuildCondBr(c->b, LLVMBuildExtractValue(c->b, x, 1, ""), work, loop);

    LLVMPositionBuilderAtEnd(c->b, work);
    if (chunk(c, s, k, n) != 0)   /* (cg_stmt: PARALLEL loops inside run serially) */
        return -1;
    LLVMBuildAtomicRMW(c->b, LLVMAtomicRMWBinOpAdd, done, i64c(c, 1), LLVMAtomicOrderingRelease, 0);
    LLVMBuildBr(c->b, loop);

    LLVMBasicBlockRef yield = block(c, "wait.yield");
    LLVMMoveBasicBlockAfter(wait, LLVMGetInsertBlock(c->b));
    LLVMMoveBasicBlockAfter(spin, wait);
    LLVMMoveBasicBlockAfter(yield, spin);
    LLVMMoveBasicBlockAfter(out, yield);
    LLVMPositionBuilderAtEnd(c->b, wait);
    LLVMValueRef spins = LLVMBuildPhi(c->b, c->t_i64, "spins");
    LLVMValueRef d = atomic_load(c, done, LLVMAtomicOrderingAcquire);
    LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, LLVMIntSGE, d, end, ""), out, spin);
    LLVMPositionBuilderAtEnd(c->b, spin);
    spin_hint(c);
    LLVMValueRef spins1 = LLVMBuildAdd(c->b, spins, i64c(c, 1), "");
    LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, LLVMIntSLT, spins, i64c(c, WAIT_SPINS), ""), wait, yield);
    LLVMPositionBuilderAtEnd(c->b, yield);     /* a long wait: the chunk's task may need this core */
    LLVMTypeRef yt = LLVMFunctionType(c->t_void, NULL, 0, 0);
    LLVMValueRef yf = LLVMGetNamedFunction(c->mod, "halide_thread_yield");
    if (!yf)
        yf = LLVMAddFunction(c->mod, "halide_thread_yield", yt);
    LLVMBuildCall2(c->b, yt, yf, NULL, 0, "");
    LLVMBuildBr(c->b, wait);
    LLVMValueRef in_v[4] = { i64c(c, 0), i64c(c, 0), spins1, spins1 };
    LLVMBasicBlockRef in_b[4] = { not_older, here, spin, yield };     /* (wait is entered from the claim tests) */
    LLVMAddIncoming(spins, in_v, in_b, 4);

    LLVMPositionBuilderAtEnd(c->b, out);
    LLVMBuildStore(c->b, end, base_p);
    return 0;
}

/* The whole statement. */
static int whole_chunk(CgCtx *c, const LoopStmt *s, LLVMValueRef k, int64_t n)
{
    (void)k, (void)n;
    return cg_stmt(c, s);
}

/* Iterations [k·E/n, (k+1)·E/n) of PARALLEL loop s. */
static int loop_chunk(CgCtx *c, const LoopStmt *s, LLVMValueRef k, int64_t n)
{
    LLVMValueRef e = i64c(c, s->u.loop.extent->u.i), nn = i64c(c, n);
    LLVMValueRef lo = LLVMBuildSDiv(c->b, LLVMBuildMul(c->b, k, e, ""), nn, "lo");
    LLVMValueRef hi = LLVMBuildSDiv(c->b, LLVMBuildMul(c->b, LLVMBuildAdd(c->b, k, i64c(c, 1), ""), e, ""), nn, "hi");
    return cg_counted_loop(c, s->u.loop.var, lo, hi, cg_stmt, s->u.loop.body) ? 0 : -1;
}

static int region_stmt(CgCtx *c, const LoopStmt *s);

/* A serial loop holding a PARALLEL loop: run by every task. */
static int region_for(CgCtx *c, const LoopStmt *s)
{
    LLVMValueRef n = cg_expr(c, s->u.loop.extent);
    return n && cg_counted_loop(c, s->u.loop.var, i64c(c, 0), n, region_stmt, s->u.loop.body) ? 0 : -1;
}

static int region_stmt(CgCtx *c, const LoopStmt *s)
{
    if (!has_parallel(s))
        return is_const_let(s) ? cg_stmt(c, s) : instance(c, s, 1, whole_chunk);
    switch (s->kind) {
    case LOOP_S_FOR:
        if (s->u.loop.kind != LOOP_PARALLEL)
            return region_for(c, s);
        return instance(c, s, c->o.threads < s->u.loop.extent->u.i ? c->o.threads : s->u.loop.extent->u.i,
                        loop_chunk);
    case LOOP_S_IF:
        return cg_if(c, s, region_stmt);
    case LOOP_S_BLOCK:
        for (int i = 0; i < s->u.block.n; i++)
            if (region_stmt(c, s->u.block.items[i]) != 0)
                return -1;
        return 0;
    default:
        return cg_fail(c, "internal error: statement kind %d holds a parallel loop", (int)s->kind);
    }
}

static int region_wanted(const CgCtx *c)
{
    if (c->gpu || c->o.threads <= 1)
        return 0;
    for (int k = 0; k < c->p->n_kernels; k++)
        if (has_parallel(c->p->kernels[k].body))
            return 1;
    return 0;
}

static int region_kernel(CgCtx *c, const LoopStmt *body)
{
    int oom = 0, ok = region_ok(c, body, &oom);
    if (oom)
        return cg_fail(c, "out of memory");
    return ok ? region_stmt(c, body) : instance(c, body, 1, whole_chunk);
}

/* Emits into the current function (NAME_run_ptrs): the region, the closure
 * and the task function calling kfn[0..n) with kargs and the task's state. */
static int region_run(CgCtx *c, LLVMValueRef *kfn, int n, LLVMValueRef kargs[3], LLVMTypeRef kernel_t)
{
    LLVMTypeRef rt = region_type(c), tt = thread_type(c);
    LLVMTypeRef cf[4] = { c->t_ptr, c->t_ptr, c->t_ptr, c->t_ptr };
    LLVMTypeRef clo_t = LLVMStructTypeInContext(c->ctx, cf, 4, 0);
    LLVMValueRef region = LLVMBuildAlloca(c->ab, rt, "region");
    LLVMSetAlignment(region, 64);
    LLVMValueRef clo = LLVMBuildAlloca(c->ab, clo_t, "closure");
    LLVMBuildStore(c->b, LLVMConstNull(rt), region);
    for (unsigned i = 0; i < 4; i++)
        LLVMBuildStore(c->b, i < 3 ? kargs[i] : region, field(c, clo_t, clo, i));

    /* the task: int32_t NAME.region(void *user_context, int32_t t, uint8_t *closure) */
    LLVMValueRef caller = c->fn;
    LLVMBasicBlockRef caller_block = LLVMGetInsertBlock(c->b), caller_entry = c->entry;
    LLVMBasicBlockRef caller_alloca = LLVMGetInsertBlock(c->ab);
    char name[300];
    snprintf(name, sizeof name, "%s.region", c->p->name);
    LLVMTypeRef tp[3] = { c->t_ptr, c->t_i32, c->t_ptr };
    LLVMTypeRef task_t = LLVMFunctionType(c->t_i32, tp, 3, 0);
    LLVMValueRef task = LLVMAddFunction(c->mod, name, task_t);
    LLVMSetLinkage(task, LLVMInternalLinkage);
    cg_add_fn_attr(c, task, "nounwind", 0);
    c->fn = task;
    LLVMPositionBuilderAtEnd(c->b, block(c, "entry"));
    LLVMValueRef cp = LLVMGetParam(task, 2), tn = LLVMGetParam(task, 1);
    LLVMValueRef a[4];
    for (unsigned i = 0; i < 4; i++)
        a[i] = LLVMBuildLoad2(c->b, c->t_ptr, field(c, clo_t, cp, i), "");
    LLVMValueRef me = LLVMBuildAlloca(c->b, tt, "me");
    LLVMBuildStore(c->b, a[3], field(c, tt, me, 0));
    LLVMBuildStore(c->b, i64c(c, 0), field(c, tt, me, 1));
    LLVMBuildStore(c->b, LLVMBuildZExt(c->b, tn, c->t_i64, ""), field(c, tt, me, 2));
    LLVMValueRef joined = field(c, rt, a[3], R_JOINED), left = field(c, rt, a[3], R_LEFT);
    LLVMBuildAtomicRMW(c->b, LLVMAtomicRMWBinOpAdd, joined, i64c(c, 1), LLVMAtomicOrderingSequentiallyConsistent, 0);
    LLVMValueRef args[4] = { a[0], a[1], a[2], me };
    for (int k = 0; k < n; k++) {
        LLVMValueRef call = LLVMBuildCall2(c->b, kernel_t, kfn[k], args, 4, "");
        LLVMSetInstructionCallConv(call, LLVMFastCallConv);
    }
    LLVMBuildAtomicRMW(c->b, LLVMAtomicRMWBinOpAdd, left, i64c(c, 1), LLVMAtomicOrderingSequentiallyConsistent, 0);
    /* Task 0 is the calling thread (it claims the first task of its own
     * job): it waits, for a bounded time, until the tasks that started have
     * left, so that it does not go to sleep in the pool waiting for a
     * worker a few instructions from the end (and need waking). */
    LLVMBasicBlockRef wait = block(c, "leave.wait"), spin = block(c, "leave.spin"), ret = block(c, "ret");
    LLVMValueRef first = LLVMBuildICmp(c->b, LLVMIntEQ, tn, LLVMConstInt(c->t_i32, 0, 0), "");
    LLVMBasicBlockRef from = LLVMGetInsertBlock(c->b);
    LLVMBuildCondBr(c->b, first, wait, ret);
    LLVMPositionBuilderAtEnd(c->b, wait);
    LLVMValueRef it = LLVMBuildPhi(c->b, c->t_i64, "spins");
    LLVMValueRef l = atomic_load(c, left, LLVMAtomicOrderingAcquire);
    LLVMValueRef j = atomic_load(c, joined, LLVMAtomicOrderingAcquire);
    LLVMValueRef more = LLVMBuildAnd(c->b, LLVMBuildICmp(c->b, LLVMIntNE, l, j, ""),
                                     LLVMBuildICmp(c->b, LLVMIntSLT, it, i64c(c, 1 << 16), ""), "");
    LLVMBuildCondBr(c->b, more, spin, ret);
    LLVMPositionBuilderAtEnd(c->b, spin);
    spin_hint(c);
    LLVMValueRef it1 = LLVMBuildAdd(c->b, it, i64c(c, 1), "");
    LLVMBuildBr(c->b, wait);
    LLVMValueRef in_v[2] = { i64c(c, 0), it1 };
    LLVMBasicBlockRef in_b[2] = { from, spin };
    LLVMAddIncoming(it, in_v, in_b, 2);
    LLVMPositionBuilderAtEnd(c->b, ret);
    LLVMBuildRet(c->b, LLVMConstInt(c->t_i32, 0, 0));

    c->fn = caller;
    c->entry = caller_entry;
    LLVMPositionBuilderAtEnd(c->b, caller_block);
    LLVMPositionBuilderAtEnd(c->ab, caller_alloca);

    /* int halide_do_par_for(void *user_context, halide_task_t f, int min, int size, uint8_t *closure) */
    LLVMTypeRef pp[5] = { c->t_ptr, c->t_ptr, c->t_i32, c->t_i32, c->t_ptr };
    LLVMTypeRef pf_t = LLVMFunctionType(c->t_i32, pp, 5, 0);
    LLVMValueRef pf = LLVMGetNamedFunction(c->mod, "halide_do_par_for");
    if (!pf)
        pf = LLVMAddFunction(c->mod, "halide_do_par_for", pf_t);
    LLVMValueRef pa[5] = { LLVMConstPointerNull(c->t_ptr), task, LLVMConstInt(c->t_i32, 0, 0),
                           LLVMConstInt(c->t_i32, (unsigned long long)c->o.threads, 0), clo };
    LLVMBuildCall2(c->b, pf_t, pf, pa, 5, "");
    return 0;
}

void cg_region_prepare(CgCtx *c)
{
    static const CgHooks region_hooks = { .region_kernel = region_kernel, .region_run = region_run };
    c->region = region_wanted(c);
    if (c->region)
        c->hooks = &region_hooks;
}
