/* ir/loop/verify.c — structural and type checks of a loop program.
 *
 * Scoping: a FOR's variable is visible in its body; a LET's variable from the
 * next statement to the end of the enclosing BLOCK (or only to the end of the
 * statement holding it when that is not a block).  Every variable is bound
 * by exactly one FOR or LET in the whole program, which is what lets passes
 * treat a variable's range as a program-wide fact.
 */
#include "ir/loop/loop.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct Ver {
    const LoopProgram *p;
    UtilDiag *d;
    const char *kernel;
    unsigned char *visible;   /* per var: in scope now */
    unsigned char *bound;     /* per var: bound somewhere already */
    unsigned char *mut;       /* per var: declared mutable */
    int *stack, top;          /* vars made visible, in order, for scope exits */
    int gpu_block, gpu_thread;   /* enclosing GPU loop kinds, as bit sets by axis */
    int in_vector;            /* inside a VECTORIZED loop */
} Ver;

static int fail(Ver *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(Ver *v, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return util_error(v->d, util_loc_file(NULL), "loop program '%s': kernel '%s': %s", v->p->name, v->kernel,
                      msg);
}

static const char *vname(const Ver *v, int var) { return v->p->vars[var].name; }
static const char *tname(IrDType t) { return ir_dtype_name(t); }

static int check_expr(Ver *v, const LoopExpr *e);

static int want_type(Ver *v, const LoopExpr *e, IrDType t, const char *what)
{
    if (check_expr(v, e) != 0)
        return -1;
    if (e->type != t)
        return fail(v, "%s has type %s, expected %s", what, tname(e->type), tname(t));
    return 0;
}

static int check_buf_id(Ver *v, int buf)
{
    if (buf < 0 || buf >= v->p->n_bufs)
        return fail(v, "buffer id %d out of range", buf);
    return 0;
}

static int check_var_use(Ver *v, int var)
{
    if (var < 0 || var >= v->p->n_vars)
        return fail(v, "undefined variable id %d", var);
    if (!v->visible[var])
        return fail(v, "variable '%s' used outside its scope", vname(v, var));
    return 0;
}

static int check_expr(Ver *v, const LoopExpr *e)
{
    if (!e)
        return fail(v, "missing expression");
    switch (e->kind) {
    case LOOP_E_INT:
        if (e->type != IR_DT_I64 && e->type != IR_DT_BOOL)
            return fail(v, "integer constant of a type other than int64 or bool");
        if (e->type == IR_DT_BOOL && e->u.i != 0 && e->u.i != 1)
            return fail(v, "bool constant other than 0 or 1");
        return 0;
    case LOOP_E_FLOAT:
        if (!ir_dtype_is_float(e->type))
            return fail(v, "float constant of a non-float type");
        return 0;
    case LOOP_E_VAR:
        if (check_var_use(v, e->u.var) != 0)
            return -1;
        if (e->type != v->p->vars[e->u.var].type)
            return fail(v, "variable '%s' used with a type other than its own", vname(v, e->u.var));
        return 0;
    case LOOP_E_LOAD:
        if (check_buf_id(v, e->u.load.buf) != 0 || want_type(v, e->u.load.index, IR_DT_I64, "load index") != 0)
            return -1;
        if (e->type != v->p->bufs[e->u.load.buf].dtype)
            return fail(v, "load from '%s' has the wrong type", v->p->bufs[e->u.load.buf].name);
        return 0;
    case LOOP_E_BIN: {
        const LoopExpr *a = e->u.bin.a, *b = e->u.bin.b;
        if (check_expr(v, a) != 0 || check_expr(v, b) != 0)
            return -1;
        LoopBinOp op = e->u.bin.op;
        if (a->type != b->type)
            return fail(v, "binary operation on operands of different types");
        IrDType want = loop_binop_is_compare(op) ? IR_DT_BOOL : a->type;
        if (e->type != want)
            return fail(v, "binary operation with the wrong result type");
        int is_f = ir_dtype_is_float(a->type), is_b = a->type == IR_DT_BOOL;
        if ((op == LOOP_AND || op == LOOP_OR || op == LOOP_XOR || op == LOOP_SHL || op == LOOP_SHR) && is_f)
            return fail(v, "bitwise operation on floats");
        if (is_b && !(op == LOOP_AND || op == LOOP_OR || op == LOOP_XOR || op == LOOP_EQ || op == LOOP_NE))
            return fail(v, "arithmetic on bool");
        return 0;
    }
    case LOOP_E_UN:
        if (check_expr(v, e->u.un.a) != 0)
            return -1;
        if (e->type != e->u.un.a->type)
            return fail(v, "unary operation with the wrong result type");
        if (e->u.un.op == LOOP_NOT && ir_dtype_is_float(e->type))
            return fail(v, "'!' on floats");
        if (e->u.un.op != LOOP_NOT && e->type == IR_DT_BOOL)
            return fail(v, "arithmetic on bool");
        return 0;
    case LOOP_E_SELECT:
        if (want_type(v, e->u.sel.cond, IR_DT_BOOL, "select condition") != 0 || check_expr(v, e->u.sel.a) != 0 ||
            check_expr(v, e->u.sel.b) != 0)
            return -1;
        if (e->u.sel.a->type != e->u.sel.b->type || e->type != e->u.sel.a->type)
            return fail(v, "select arms of different types");
        return 0;
    case LOOP_E_CALL: {
        if ((unsigned)e->u.call.fn >= LOOP_I_COUNT)
            return fail(v, "unknown intrinsic");
        LoopIntrinsic fn = e->u.call.fn;
        int want_n = fn == LOOP_I_fma || fn == LOOP_I_dot4 || fn == LOOP_I_dot2bf || fn == LOOP_I_dot2 ? 3
                     : fn == LOOP_I_pow || fn == LOOP_I_bf16pack ? 2 : 1;
        if (e->u.call.n != want_n)
            return fail(v, "intrinsic '%s' called with the wrong number of arguments", loop_intrinsic_name(fn));
        for (int i = 0; i < want_n; i++) {
            if (check_expr(v, e->u.call.args[i]) != 0)
                return -1;
            /* the word intrinsics' operand types (docs/loop-ir.md); the others: floats of one type */
            IrDType at = e->u.call.args[i]->type;
            int ok = fn == LOOP_I_dot4 || fn == LOOP_I_dot2 ? at == IR_DT_I32
                     : fn == LOOP_I_bf16pack ? at == IR_DT_F32
                     : fn == LOOP_I_dot2bf   ? at == (i == 0 ? IR_DT_F32 : IR_DT_I32)
                                             : ir_dtype_is_float(at) && at == e->u.call.args[0]->type;
            if (!ok)
                return fail(v, "intrinsic '%s' called with operands of the wrong types", loop_intrinsic_name(fn));
        }
        IrDType want = fn == LOOP_I_isnan || fn == LOOP_I_isinf ? IR_DT_BOOL
                       : fn == LOOP_I_bf16pack                 ? IR_DT_I32
                                                               : e->u.call.args[0]->type;
        if (e->type != want)
            return fail(v, "intrinsic '%s' with the wrong result type", loop_intrinsic_name(fn));
        return 0;
    }
    case LOOP_E_CAST:
        if (check_expr(v, e->u.cast.a) != 0)
            return -1;
        if (ir_dtype_size(e->type) == 0)
            return fail(v, "cast to an undefined type");
        return 0;
    }
    return fail(v, "unknown expression kind");
}

static int bind(Ver *v, int var, const char *what)
{
    if (var < 0 || var >= v->p->n_vars)
        return fail(v, "%s binds undefined variable id %d", what, var);
    if (v->bound[var])
        return fail(v, "variable '%s' bound twice", vname(v, var));
    v->bound[var] = v->visible[var] = 1;
    v->stack[v->top++] = var;
    return 0;
}

static void unbind_to(Ver *v, int top)
{
    while (v->top > top)
        v->visible[v->stack[--v->top]] = 0;
}

static int is_gpu_block(LoopForKind k) { return k >= LOOP_GPU_BLOCK_X && k <= LOOP_GPU_BLOCK_Z; }
static int is_gpu_thread(LoopForKind k) { return k >= LOOP_GPU_THREAD_X && k <= LOOP_GPU_THREAD_Z; }

static int check_stmt(Ver *v, const LoopStmt *s);

static int check_for(Ver *v, const LoopStmt *s)
{
    LoopForKind k = s->u.loop.kind;
    const char *kname = loop_for_kind_name(k);
    if ((unsigned)k > LOOP_HLS_PIPELINE)
        return fail(v, "unknown loop kind");
    if (want_type(v, s->u.loop.extent, IR_DT_I64, "loop extent") != 0)
        return -1;
    if ((k == LOOP_VECTORIZED || k == LOOP_UNROLLED) && s->u.loop.extent->kind != LOOP_E_INT)
        return fail(v, "%s loop with a non-constant extent", kname);
    if (s->u.loop.factor < 0)
        return fail(v, "%s loop with a negative factor", kname);
    if (v->in_vector && k != LOOP_UNROLLED)
        return fail(v, "%s loop nested inside a vectorized loop", kname);
    int axis = is_gpu_block(k) ? (int)k - LOOP_GPU_BLOCK_X : is_gpu_thread(k) ? (int)k - LOOP_GPU_THREAD_X : -1;
    if (is_gpu_thread(k) && !v->gpu_block)
        return fail(v, "%s loop outside any GPU block loop", kname);
    if (is_gpu_block(k) && v->gpu_thread)
        return fail(v, "%s loop inside a GPU thread loop", kname);
    if (axis >= 0 && ((is_gpu_block(k) ? v->gpu_block : v->gpu_thread) & (1 << axis)))
        return fail(v, "%s loop nested inside another loop bound to the same axis", kname);
    if (s->u.loop.var >= 0 && s->u.loop.var < v->p->n_vars && v->p->vars[s->u.loop.var].type != IR_DT_I64)
        return fail(v, "loop variable '%s' is not int64", vname(v, s->u.loop.var));
    int top = v->top, saved_b = v->gpu_block, saved_t = v->gpu_thread, saved_v = v->in_vector;
    if (bind(v, s->u.loop.var, "loop") != 0)
        return -1;
    if (is_gpu_block(k))
        v->gpu_block |= 1 << axis;
    if (is_gpu_thread(k))
        v->gpu_thread |= 1 << axis;
    if (k == LOOP_VECTORIZED)
        v->in_vector = 1;
    int r = check_stmt(v, s->u.loop.body);
    v->gpu_block = saved_b;
    v->gpu_thread = saved_t;
    v->in_vector = saved_v;
    unbind_to(v, top);
    return r;
}

/* Checks s; a LET's binding stays visible (its enclosing block ends it). */
static int check_stmt(Ver *v, const LoopStmt *s)
{
    if (!s)
        return fail(v, "missing statement");
    switch (s->kind) {
    case LOOP_S_FOR: return check_for(v, s);
    case LOOP_S_LET: {
        if (check_expr(v, s->u.let.value) != 0)
            return -1;
        int var = s->u.let.var;
        if (bind(v, var, "let") != 0)
            return -1;
        v->mut[var] = s->u.let.mutable_ != 0;
        if (v->p->vars[var].type != s->u.let.value->type)
            return fail(v, "variable '%s' bound to a value of another type", vname(v, var));
        return 0;
    }
    case LOOP_S_ASSIGN: {
        int var = s->u.assign.var;
        if (check_var_use(v, var) != 0 || check_expr(v, s->u.assign.value) != 0)
            return -1;
        if (!v->mut[var])
            return fail(v, "assignment to immutable variable '%s'", vname(v, var));
        if (v->p->vars[var].type != s->u.assign.value->type)
            return fail(v, "assignment of a value of another type to '%s'", vname(v, var));
        return 0;
    }
    case LOOP_S_STORE: {
        int b = s->u.store.buf;
        if (check_buf_id(v, b) != 0)
            return -1;
        const LoopBuf *buf = &v->p->bufs[b];
        if (buf->storage == LOOP_ST_INPUT || buf->storage == LOOP_ST_CONST)
            return fail(v, "store to %s buffer '%s'", buf->storage == LOOP_ST_INPUT ? "input" : "constant",
                        buf->name);
        if (want_type(v, s->u.store.index, IR_DT_I64, "store index") != 0 ||
            want_type(v, s->u.store.value, buf->dtype, "stored value") != 0)
            return -1;
        return 0;
    }
    case LOOP_S_IF: {
        if (want_type(v, s->u.cond.cond, IR_DT_BOOL, "if condition") != 0)
            return -1;
        int top = v->top;
        int r = check_stmt(v, s->u.cond.then_);
        unbind_to(v, top);
        if (r == 0 && s->u.cond.else_) {
            r = check_stmt(v, s->u.cond.else_);
            unbind_to(v, top);
        }
        return r;
    }
    case LOOP_S_BLOCK: {
        int top = v->top;
        for (int i = 0; i < s->u.block.n; i++)
            if (check_stmt(v, s->u.block.items[i]) != 0)
                return -1;
        unbind_to(v, top);
        return 0;
    }
    case LOOP_S_PREFETCH:
        if (check_buf_id(v, s->u.prefetch.buf) != 0)
            return -1;
        return want_type(v, s->u.prefetch.index, IR_DT_I64, "prefetch index");
    case LOOP_S_BARRIER:
        if (!v->gpu_block)
            return fail(v, "barrier outside any GPU block loop");
        return 0;
    }
    return fail(v, "unknown statement kind");
}

static int is_c_identifier(const char *s)
{
    if (!s || !*s || !((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_'))
        return 0;
    for (; *s; s++)
        if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_'))
            return 0;
    return 1;
}

static int verify_bufs(const LoopProgram *p, UtilDiag *d)
{
    UtilLoc loc = util_loc_file(NULL);
    for (int i = 0; i < p->n_bufs; i++) {
        const LoopBuf *b = &p->bufs[i];
        if (!is_c_identifier(b->name))
            return util_error(d, loc, "loop program '%s': buffer %d: name is not a C identifier", p->name, i);
        for (int j = 0; j < i; j++)
            if (strcmp(p->bufs[j].name, b->name) == 0)
                return util_error(d, loc, "loop program '%s': buffer name '%s' used twice", p->name, b->name);
        if ((unsigned)b->storage > LOOP_ST_LOCAL || ir_dtype_size(b->dtype) == 0 || b->shape.rank < 0 ||
            b->shape.rank > IR_MAX_RANK)
            return util_error(d, loc, "loop program '%s': buffer '%s': bad storage, dtype or rank", p->name,
                              b->name);
        int64_t numel = ir_shape_numel(&b->shape), bytes;
        if (numel < 0 || util_mul_overflow_i64(numel, (int64_t)ir_dtype_size(b->dtype), &bytes) ||
            bytes > b->bytes)
            return util_error(d, loc, "loop program '%s': buffer '%s': size does not fit in %lld bytes", p->name,
                              b->name, (long long)b->bytes);
        if (b->alias_of >= p->n_bufs || b->alias_of == i || b->alias_of < -1)
            return util_error(d, loc, "loop program '%s': buffer '%s': bad alias_of %d", p->name, b->name,
                              b->alias_of);
        if (b->base && (b->base < 0 || b->storage != LOOP_ST_WORKSPACE ||
                        b->base > b->bytes / (int64_t)ir_dtype_size(b->dtype) - numel))
            return util_error(d, loc, "loop program '%s': buffer '%s': bad halo base %lld", p->name, b->name,
                              (long long)b->base);
        if (b->storage == LOOP_ST_WORKSPACE && b->alias_of < 0) {
            int64_t end;
            if (b->offset < 0 || util_add_overflow_i64(b->offset, b->bytes, &end) ||
                (p->workspace_bytes > 0 && end > p->workspace_bytes))
                return util_error(d, loc, "loop program '%s': buffer '%s': workspace slice [%lld, +%lld) outside "
                                  "the workspace of %lld bytes", p->name, b->name, (long long)b->offset,
                                  (long long)b->bytes, (long long)p->workspace_bytes);
        }
        int n_io = b->storage == LOOP_ST_INPUT ? p->n_inputs : b->storage == LOOP_ST_OUTPUT ? p->n_outputs : 0;
        if (b->index < -1 || (b->index >= 0 && b->index >= n_io))
            return util_error(d, loc, "loop program '%s': buffer '%s': index %d out of range", p->name, b->name,
                              b->index);
        if (b->storage == LOOP_ST_CONST && b->bytes > 0 && !b->data && b->alias_of < 0)
            return util_error(d, loc, "loop program '%s': constant buffer '%s' has no data", p->name, b->name);
    }
    return 0;
}

/* LOCAL storage is the kernel's own (a stack array on the CPU, shared
 * memory on a GPU) and starts undefined in every kernel: a value stored into
 * it by one kernel cannot reach another.  So a LOCAL buffer (with its
 * aliases) is used by one kernel at most; a pass that splits a kernel
 * (the GPU schedule) or moves code between kernels must keep it so. */
typedef struct LocalOwner {
    const LoopProgram *p;
    int *owner;              /* per root buffer: the kernel using it, or -1 */
    int kernel, bad;         /* bad: the buffer used by two kernels, or -1 */
} LocalOwner;

static void local_owner(void *ctx, int buf, int store)
{
    (void)store;
    LocalOwner *o = ctx;
    if (buf < 0 || buf >= o->p->n_bufs)
        return;
    while (o->p->bufs[buf].alias_of >= 0 && o->p->bufs[buf].alias_of < o->p->n_bufs)
        buf = o->p->bufs[buf].alias_of;
    if (o->p->bufs[buf].storage != LOOP_ST_LOCAL)
        return;
    if (o->owner[buf] < 0)
        o->owner[buf] = o->kernel;
    else if (o->owner[buf] != o->kernel && o->bad < 0)
        o->bad = buf;
}

static int verify_locals(const LoopProgram *p, UtilDiag *d)
{
    LocalOwner o = { p, malloc((size_t)(p->n_bufs > 0 ? p->n_bufs : 1) * sizeof *o.owner), 0, -1 };
    if (!o.owner)
        return util_error(d, util_loc_file(NULL), "out of memory");
    for (int i = 0; i < p->n_bufs; i++)
        o.owner[i] = -1;
    for (o.kernel = 0; o.kernel < p->n_kernels && o.bad < 0; o.kernel++)
        loop_stmt_buffers(p->kernels[o.kernel].body, local_owner, &o);
    int r = 0;
    if (o.bad >= 0)
        r = util_error(d, util_loc_file(NULL), "loop program '%s': local buffer '%s' is used by kernels '%s' and "
                       "'%s' (local storage does not outlive its kernel)", p->name, p->bufs[o.bad].name,
                       p->kernels[o.owner[o.bad]].name, p->kernels[o.kernel - 1].name);
    free(o.owner);
    return r;
}

int loop_verify(const LoopProgram *p, UtilDiag *d)
{
    if (verify_bufs(p, d) != 0 || verify_locals(p, d) != 0)
        return -1;
    Ver v = { .p = p, .d = d };
    size_t n = p->n_vars > 0 ? (size_t)p->n_vars : 1;
    v.visible = calloc(n, 1);
    v.bound = calloc(n, 1);
    v.mut = calloc(n, 1);
    v.stack = calloc(n, sizeof *v.stack);
    int r = 0;
    if (!v.visible || !v.bound || !v.mut || !v.stack)
        r = util_error(d, util_loc_file(NULL), "out of memory");
    for (int k = 0; r == 0 && k < p->n_kernels; k++) {
        const LoopKernel *kn = &p->kernels[k];
        v.kernel = kn->name ? kn->name : "?";
        if (!is_c_identifier(kn->name)) {
            r = fail(&v, "kernel name is not a C identifier");
            break;
        }
        for (int j = 0; j < k; j++)
            if (strcmp(p->kernels[j].name, kn->name) == 0)
                r = fail(&v, "kernel name used twice");
        if (r == 0)
            r = check_stmt(&v, kn->body);
        unbind_to(&v, 0);
    }
    free(v.visible);
    free(v.bound);
    free(v.mut);
    free(v.stack);
    return r;
}
