/* ir/loop/program.c — loop programs: buffers, variables, kernels, and the
 * expression and statement builders. */
#include "ir/loop/loop.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

LoopProgram *loop_program_new(const char *name)
{
    LoopProgram *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    util_arena_init(&p->arena);
    char *id = util_c_identifier(name && *name ? name : "model");
    p->name = id ? util_arena_strdup(&p->arena, id) : NULL;
    free(id);
    if (!p->name) {
        loop_program_free(p);
        return NULL;
    }
    p->workspace_align = 64;
    return p;
}

void loop_program_free(LoopProgram *p)
{
    if (!p)
        return;
    free(p->bufs);
    free(p->vars);
    free(p->kernels);
    util_arena_free(&p->arena);
    free(p);
}

/* Grows a malloc'd array of `size`-byte elements to hold one more. */
static int grow(void **items, int n, int *cap, size_t size)
{
    if (n < *cap)
        return 0;
    if (*cap > INT_MAX / 2)
        return -1;
    int nc = *cap ? *cap * 2 : 16;
    void *q = realloc(*items, (size_t)nc * size);
    if (!q)
        return -1;
    *items = q;
    *cap = nc;
    return 0;
}

/* Name lookup over a strided array of records whose first member is the name. */
typedef const char *(*NameAt)(const LoopProgram *p, int i);
static const char *buf_name_at(const LoopProgram *p, int i) { return p->bufs[i].name; }
static const char *var_name_at(const LoopProgram *p, int i) { return p->vars[i].name; }
static const char *kernel_name_at(const LoopProgram *p, int i) { return p->kernels[i].name; }

/* A C identifier made from `hint`, unique among the n existing names: the
 * hint itself if free, else hint_N with N one more than the largest suffix in
 * use.  One scan, so adding n names costs O(n^2) string compares at worst. */
static const char *unique_name(LoopProgram *p, const char *hint, const char *dflt, NameAt at, int n)
{
    char *base = util_c_identifier(hint && *hint ? hint : dflt);
    if (!base)
        return NULL;
    size_t bl = strlen(base);
    int taken = 0;
    long long max_suffix = 0;
    for (int i = 0; i < n; i++) {
        const char *s = at(p, i);
        if (!s || strncmp(s, base, bl) != 0)
            continue;
        if (s[bl] == '\0') {
            taken = 1;
        } else if (s[bl] == '_' && s[bl + 1] >= '1' && s[bl + 1] <= '9') {
            char *end;
            long long v = strtoll(s + bl + 1, &end, 10);
            if (*end == '\0' && v > max_suffix)
                max_suffix = v;
        }
    }
    const char *r;
    if (!taken) {
        r = util_arena_strdup(&p->arena, base);
    } else {
        char tmp[32];
        snprintf(tmp, sizeof tmp, "_%lld", max_suffix < LLONG_MAX ? max_suffix + 1 : 1);
        char *s = util_arena_alloc(&p->arena, bl + strlen(tmp) + 1);
        if (s) {
            memcpy(s, base, bl);
            strcpy(s + bl, tmp);
        }
        r = s;
    }
    free(base);
    return r;
}

int loop_add_buf(LoopProgram *p, const char *name, IrDType dt, const IrShape *shape, LoopStorage st)
{
    if (!shape || shape->rank < 0 || shape->rank > IR_MAX_RANK || ir_dtype_size(dt) == 0)
        return -1;
    int64_t numel = ir_shape_numel(shape), bytes;
    if (numel < 0 || util_mul_overflow_i64(numel, (int64_t)ir_dtype_size(dt), &bytes))
        return -1;
    if (grow((void **)&p->bufs, p->n_bufs, &p->cap_bufs, sizeof *p->bufs) != 0)
        return -1;
    const char *nm = unique_name(p, name, "buf", buf_name_at, p->n_bufs);
    if (!nm)
        return -1;
    LoopBuf *b = &p->bufs[p->n_bufs];
    memset(b, 0, sizeof *b);
    b->name = nm;
    b->dtype = dt;
    b->shape = *shape;
    /* Row-major: the last dim is contiguous; stride[i] = prod(dims[i+1..])
     * (a zero dim counts as 1 so an empty buffer still has distinct strides). */
    int64_t s = 1;
    for (int i = shape->rank - 1; i >= 0; i--) {
        b->strides[i] = s;
        int64_t d = shape->dims[i] > 0 ? shape->dims[i] : 1;
        if (util_mul_overflow_i64(s, d, &s))
            return -1;
    }
    b->storage = st;
    b->bytes = bytes;
    b->index = -1;
    b->alias_of = -1;
    b->tensor = -1;
    return p->n_bufs++;
}

/* Layout (RS = W + cols, CS = (H + rows) * RS, lead = max(cols, front)):
 * element (n, c, h, w) at
 *   lead + (n*C + c)*CS + (rows + h)*RS + w
 * so before each channel's first row lie `rows` halo rows (and, before those,
 * the halo columns of the previous channel's last row); `rows` more rows end
 * the allocation, then the slack. */
int loop_buf_halo(LoopProgram *p, int b, int rows, int cols, int front, double fill, int slack)
{
    LoopBuf *B = &p->bufs[b];
    if (B->shape.rank != 4 || B->storage != LOOP_ST_WORKSPACE || B->alias_of >= 0 || rows < 0 || cols < 0 ||
        slack < 0 || front < 0)
        return -1;
    int64_t lead = front > cols ? front : cols;
    const int64_t *d = B->shape.dims;
    int64_t rs, cs, nc, body, total, bytes;
    if (util_add_overflow_i64(d[3], cols, &rs) || util_add_overflow_i64(d[2], rows, &cs) ||
        util_mul_overflow_i64(cs, rs, &cs) || util_mul_overflow_i64(d[0], d[1], &nc) ||
        util_mul_overflow_i64(nc, cs, &body) || util_add_overflow_i64(body, (int64_t)rows * rs + lead + slack, &total) ||
        util_mul_overflow_i64(total, (int64_t)ir_dtype_size(B->dtype), &bytes))
        return -1;
    B->strides[3] = 1;
    B->strides[2] = rs;
    B->strides[1] = cs;
    B->strides[0] = d[1] * cs;
    B->base = lead + (int64_t)rows * rs;
    B->halo_rows = rows;
    B->halo_cols = cols;
    B->halo_fill = fill;
    B->slack = slack;
    B->bytes = bytes;
    return 0;
}

int loop_add_var(LoopProgram *p, const char *hint, IrDType type)
{
    if (grow((void **)&p->vars, p->n_vars, &p->cap_vars, sizeof *p->vars) != 0)
        return -1;
    const char *nm = unique_name(p, hint, "v", var_name_at, p->n_vars);
    if (!nm)
        return -1;
    p->vars[p->n_vars] = (LoopVar){ .name = nm, .type = type };
    return p->n_vars++;
}

int loop_add_kernel(LoopProgram *p, const char *name, LoopStmt *body)
{
    if (grow((void **)&p->kernels, p->n_kernels, &p->cap_kernels, sizeof *p->kernels) != 0)
        return -1;
    const char *nm = unique_name(p, name, "kernel", kernel_name_at, p->n_kernels);
    if (!nm)
        return -1;
    p->kernels[p->n_kernels] = (LoopKernel){ .name = nm, .body = body, .first_node = -1 };
    return p->n_kernels++;
}

/* ---------------------------------------------------------- expressions */

static LoopExpr *new_expr(LoopProgram *p, LoopExprKind k, IrDType t)
{
    LoopExpr *e = util_arena_alloc(&p->arena, sizeof *e);
    if (e) {
        e->kind = k;
        e->type = t;
    }
    return e;
}

LoopExpr *loop_int(LoopProgram *p, int64_t v)
{
    LoopExpr *e = new_expr(p, LOOP_E_INT, IR_DT_I64);
    if (e)
        e->u.i = v;
    return e;
}

/* The value rounded to what `t` can hold, so that printing and folding see
 * exactly the constant the target will. */
LoopExpr *loop_float(LoopProgram *p, IrDType t, double v)
{
    LoopExpr *e = new_expr(p, LOOP_E_FLOAT, t);
    if (!e)
        return NULL;
    switch (t) {
    case IR_DT_F32: v = (float)v; break;
    case IR_DT_F16: v = ir_f16_to_f32(ir_f32_to_f16((float)v)); break;
    case IR_DT_BF16: v = ir_bf16_to_f32(ir_f32_to_bf16((float)v)); break;
    default: break;
    }
    e->u.f = v;
    return e;
}

LoopExpr *loop_var(LoopProgram *p, int var)
{
    IrDType t = var >= 0 && var < p->n_vars ? p->vars[var].type : IR_DT_UNDEF;
    LoopExpr *e = new_expr(p, LOOP_E_VAR, t);
    if (e)
        e->u.var = var;
    return e;
}

LoopExpr *loop_load(LoopProgram *p, int buf, LoopExpr *index)
{
    if (!index)
        return NULL;
    IrDType t = buf >= 0 && buf < p->n_bufs ? p->bufs[buf].dtype : IR_DT_UNDEF;
    LoopExpr *e = new_expr(p, LOOP_E_LOAD, t);
    if (e) {
        e->u.load.buf = buf;
        e->u.load.index = index;
        e->u.load.spare = 0;
        e->u.load.lead = 0;
        e->u.load.safe = 0;
    }
    return e;
}

int loop_binop_is_compare(LoopBinOp op)
{
    return op == LOOP_LT || op == LOOP_LE || op == LOOP_EQ || op == LOOP_NE;
}

LoopExpr *loop_bin(LoopProgram *p, LoopBinOp op, LoopExpr *a, LoopExpr *b)
{
    if (!a || !b)
        return NULL;
    LoopExpr *e = new_expr(p, LOOP_E_BIN, loop_binop_is_compare(op) ? IR_DT_BOOL : a->type);
    if (e) {
        e->u.bin.op = op;
        e->u.bin.a = a;
        e->u.bin.b = b;
    }
    return e;
}

LoopExpr *loop_un(LoopProgram *p, LoopUnOp op, LoopExpr *a)
{
    if (!a)
        return NULL;
    LoopExpr *e = new_expr(p, LOOP_E_UN, a->type);
    if (e) {
        e->u.un.op = op;
        e->u.un.a = a;
    }
    return e;
}

LoopExpr *loop_select(LoopProgram *p, LoopExpr *c, LoopExpr *a, LoopExpr *b)
{
    if (!c || !a || !b)
        return NULL;
    LoopExpr *e = new_expr(p, LOOP_E_SELECT, a->type);
    if (e) {
        e->u.sel.cond = c;
        e->u.sel.a = a;
        e->u.sel.b = b;
    }
    return e;
}

LoopExpr *loop_call(LoopProgram *p, LoopIntrinsic fn, int n, LoopExpr *const *args)
{
    if (n < 1 || n > 3 || !args)
        return NULL;
    for (int i = 0; i < n; i++)
        if (!args[i])
            return NULL;
    IrDType t = fn == LOOP_I_isnan || fn == LOOP_I_isinf ? IR_DT_BOOL : fn == LOOP_I_bf16pack ? IR_DT_I32 : args[0]->type;
    LoopExpr *e = new_expr(p, LOOP_E_CALL, t);
    if (e) {
        e->u.call.fn = fn;
        e->u.call.n = n;
        for (int i = 0; i < n; i++)
            e->u.call.args[i] = args[i];
    }
    return e;
}

LoopExpr *loop_cast(LoopProgram *p, IrDType t, LoopExpr *a)
{
    if (!a)
        return NULL;
    LoopExpr *e = new_expr(p, LOOP_E_CAST, t);
    if (e)
        e->u.cast.a = a;
    return e;
}

LoopExpr *loop_expr_copy(LoopProgram *p, const LoopExpr *e)
{
    if (!e)
        return NULL;
    LoopExpr *c = new_expr(p, e->kind, e->type);
    if (!c)
        return NULL;
    *c = *e;
    switch (e->kind) {
    case LOOP_E_LOAD:
        if (!(c->u.load.index = loop_expr_copy(p, e->u.load.index)))
            return NULL;
        break;
    case LOOP_E_BIN:
        c->u.bin.a = loop_expr_copy(p, e->u.bin.a);
        c->u.bin.b = loop_expr_copy(p, e->u.bin.b);
        if (!c->u.bin.a || !c->u.bin.b)
            return NULL;
        break;
    case LOOP_E_UN:
        if (!(c->u.un.a = loop_expr_copy(p, e->u.un.a)))
            return NULL;
        break;
    case LOOP_E_SELECT:
        c->u.sel.cond = loop_expr_copy(p, e->u.sel.cond);
        c->u.sel.a = loop_expr_copy(p, e->u.sel.a);
        c->u.sel.b = loop_expr_copy(p, e->u.sel.b);
        if (!c->u.sel.cond || !c->u.sel.a || !c->u.sel.b)
            return NULL;
        break;
    case LOOP_E_CALL:
        for (int i = 0; i < e->u.call.n && i < 3; i++)
            if (!(c->u.call.args[i] = loop_expr_copy(p, e->u.call.args[i])))
                return NULL;
        break;
    case LOOP_E_CAST:
        if (!(c->u.cast.a = loop_expr_copy(p, e->u.cast.a)))
            return NULL;
        break;
    default:
        break;
    }
    return c;
}

/* sum idx[i] * strides[i], leaving out terms that are zero (a constant-0
 * index, as lowering passes for broadcast dims, or a zero stride) and
 * multiplications by 1. */
LoopExpr *loop_index(LoopProgram *p, int buf, LoopExpr *const *idx)
{
    if (buf < 0 || buf >= p->n_bufs)
        return NULL;
    const LoopBuf *b = &p->bufs[buf];
    LoopExpr *sum = NULL;
    for (int i = 0; i < b->shape.rank; i++) {
        if (!idx[i])
            return NULL;
        int64_t st = b->strides[i];
        if (st == 0 || (idx[i]->kind == LOOP_E_INT && idx[i]->u.i == 0))
            continue;
        LoopExpr *t = st == 1 ? idx[i] : loop_bin(p, LOOP_MUL, idx[i], loop_int(p, st));
        sum = sum ? loop_bin(p, LOOP_ADD, sum, t) : t;
        if (!sum)
            return NULL;
    }
    return sum ? sum : loop_int(p, 0);
}

/* ----------------------------------------------------------- statements */

static LoopStmt *new_stmt(LoopProgram *p, LoopStmtKind k)
{
    LoopStmt *s = util_arena_alloc(&p->arena, sizeof *s);
    if (s)
        s->kind = k;
    return s;
}

LoopStmt *loop_for(LoopProgram *p, int var, LoopExpr *extent, LoopForKind kind, LoopStmt *body)
{
    if (!extent || !body)
        return NULL;
    LoopStmt *s = new_stmt(p, LOOP_S_FOR);
    if (s) {
        s->u.loop.var = var;
        s->u.loop.extent = extent;
        s->u.loop.kind = kind;
        s->u.loop.body = body;
    }
    return s;
}

LoopStmt *loop_let(LoopProgram *p, int var, LoopExpr *value, int is_mutable)
{
    if (!value)
        return NULL;
    LoopStmt *s = new_stmt(p, LOOP_S_LET);
    if (s) {
        s->u.let.var = var;
        s->u.let.value = value;
        s->u.let.mutable_ = is_mutable != 0;
    }
    return s;
}

LoopStmt *loop_assign(LoopProgram *p, int var, LoopExpr *value)
{
    if (!value)
        return NULL;
    LoopStmt *s = new_stmt(p, LOOP_S_ASSIGN);
    if (s) {
        s->u.assign.var = var;
        s->u.assign.value = value;
    }
    return s;
}

LoopStmt *loop_store(LoopProgram *p, int buf, LoopExpr *index, LoopExpr *value)
{
    if (!index || !value)
        return NULL;
    LoopStmt *s = new_stmt(p, LOOP_S_STORE);
    if (s) {
        s->u.store.buf = buf;
        s->u.store.index = index;
        s->u.store.value = value;
    }
    return s;
}

LoopStmt *loop_if(LoopProgram *p, LoopExpr *cond, LoopStmt *then_, LoopStmt *else_)
{
    if (!cond || !then_)
        return NULL;
    LoopStmt *s = new_stmt(p, LOOP_S_IF);
    if (s) {
        s->u.cond.cond = cond;
        s->u.cond.then_ = then_;
        s->u.cond.else_ = else_;
    }
    return s;
}

LoopStmt *loop_block(LoopProgram *p) { return new_stmt(p, LOOP_S_BLOCK); }

int loop_block_add(LoopProgram *p, LoopStmt *block, LoopStmt *s)
{
    if (!block || block->kind != LOOP_S_BLOCK || !s)
        return -1;
    if (block->u.block.n == block->u.block.cap) {
        if (block->u.block.cap > INT_MAX / 2)
            return -1;
        int nc = block->u.block.cap ? block->u.block.cap * 2 : 4;
        LoopStmt **items = util_arena_array(&p->arena, (size_t)nc, sizeof *items);
        if (!items)
            return -1;
        if (block->u.block.n)
            memcpy(items, block->u.block.items, (size_t)block->u.block.n * sizeof *items);
        block->u.block.items = items;
        block->u.block.cap = nc;
    }
    block->u.block.items[block->u.block.n++] = s;
    return 0;
}

LoopStmt *loop_barrier(LoopProgram *p) { return new_stmt(p, LOOP_S_BARRIER); }

LoopStmt *loop_prefetch(LoopProgram *p, int buf, LoopExpr *index)
{
    if (!index)
        return NULL;
    LoopStmt *s = new_stmt(p, LOOP_S_PREFETCH);
    if (s) {
        s->u.prefetch.buf = buf;
        s->u.prefetch.index = index;
    }
    return s;
}

int loop_expr_equal(const LoopExpr *a, const LoopExpr *b)
{
    if (a == b)
        return 1;
    if (!a || !b || a->kind != b->kind || a->type != b->type)
        return 0;
    switch (a->kind) {
    case LOOP_E_INT: return a->u.i == b->u.i;
    case LOOP_E_FLOAT: return memcmp(&a->u.f, &b->u.f, sizeof a->u.f) == 0;
    case LOOP_E_VAR: return a->u.var == b->u.var;
    case LOOP_E_LOAD:
        return a->u.load.buf == b->u.load.buf && loop_expr_equal(a->u.load.index, b->u.load.index);
    case LOOP_E_BIN:
        return a->u.bin.op == b->u.bin.op && loop_expr_equal(a->u.bin.a, b->u.bin.a) &&
               loop_expr_equal(a->u.bin.b, b->u.bin.b);
    case LOOP_E_UN: return a->u.un.op == b->u.un.op && loop_expr_equal(a->u.un.a, b->u.un.a);
    case LOOP_E_SELECT:
        return loop_expr_equal(a->u.sel.cond, b->u.sel.cond) && loop_expr_equal(a->u.sel.a, b->u.sel.a) &&
               loop_expr_equal(a->u.sel.b, b->u.sel.b);
    case LOOP_E_CALL:
        if (a->u.call.fn != b->u.call.fn || a->u.call.n != b->u.call.n)
            return 0;
        for (int i = 0; i < a->u.call.n && i < 3; i++)
            if (!loop_expr_equal(a->u.call.args[i], b->u.call.args[i]))
                return 0;
        return 1;
    case LOOP_E_CAST: return loop_expr_equal(a->u.cast.a, b->u.cast.a);
    }
    return 0;
}

/* ---------------------------------------------------------- walkers */

static void expr_accesses(LoopExpr *e, LoopAccessFn fn, void *ctx)
{
    if (!e)
        return;
    switch (e->kind) {
    case LOOP_E_LOAD:
        fn(ctx, &e->u.load.buf, &e->u.load.index, 0);
        expr_accesses(e->u.load.index, fn, ctx);
        break;
    case LOOP_E_BIN:
        expr_accesses(e->u.bin.a, fn, ctx);
        expr_accesses(e->u.bin.b, fn, ctx);
        break;
    case LOOP_E_UN: expr_accesses(e->u.un.a, fn, ctx); break;
    case LOOP_E_SELECT:
        expr_accesses(e->u.sel.cond, fn, ctx);
        expr_accesses(e->u.sel.a, fn, ctx);
        expr_accesses(e->u.sel.b, fn, ctx);
        break;
    case LOOP_E_CALL:
        for (int i = 0; i < e->u.call.n; i++)
            expr_accesses(e->u.call.args[i], fn, ctx);
        break;
    case LOOP_E_CAST: expr_accesses(e->u.cast.a, fn, ctx); break;
    default: break;
    }
}

void loop_stmt_accesses(LoopStmt *s, LoopAccessFn fn, void *ctx)
{
    if (!s)
        return;
    switch (s->kind) {
    case LOOP_S_FOR:
        expr_accesses(s->u.loop.extent, fn, ctx);
        loop_stmt_accesses(s->u.loop.body, fn, ctx);
        break;
    case LOOP_S_LET: expr_accesses(s->u.let.value, fn, ctx); break;
    case LOOP_S_ASSIGN: expr_accesses(s->u.assign.value, fn, ctx); break;
    case LOOP_S_STORE:
        fn(ctx, &s->u.store.buf, &s->u.store.index, 1);
        expr_accesses(s->u.store.index, fn, ctx);
        expr_accesses(s->u.store.value, fn, ctx);
        break;
    case LOOP_S_PREFETCH:
        fn(ctx, &s->u.prefetch.buf, &s->u.prefetch.index, 0);
        expr_accesses(s->u.prefetch.index, fn, ctx);
        break;
    case LOOP_S_IF:
        expr_accesses(s->u.cond.cond, fn, ctx);
        loop_stmt_accesses(s->u.cond.then_, fn, ctx);
        loop_stmt_accesses(s->u.cond.else_, fn, ctx);
        break;
    case LOOP_S_BLOCK:
        for (int i = 0; i < s->u.block.n; i++)
            loop_stmt_accesses(s->u.block.items[i], fn, ctx);
        break;
    default: break;
    }
}

typedef struct BufCtx { LoopBufFn fn; void *ctx; } BufCtx;

static void buf_access(void *ctx, int *buf, LoopExpr **index, int store)
{
    (void)index;
    BufCtx *c = ctx;
    c->fn(c->ctx, *buf, store);
}

void loop_stmt_buffers(const LoopStmt *s, LoopBufFn fn, void *ctx)
{
    BufCtx c = { fn, ctx };
    loop_stmt_accesses((LoopStmt *)s, buf_access, &c);    /* (buf_access changes nothing) */
}

/* Bytes of the buffers a kernel touches: each buffer id once, not LOCAL ones. */
typedef struct Touch {
    const LoopProgram *p;
    unsigned char *seen;
    int64_t bytes;
} Touch;

static void touch_buf(void *ctx, int buf, int store)
{
    (void)store;
    Touch *t = ctx;
    if (t->seen[buf] || t->p->bufs[buf].storage == LOOP_ST_LOCAL)
        return;
    t->seen[buf] = 1;
    t->bytes += t->p->bufs[buf].bytes;
}

int64_t loop_kernel_bytes(const LoopProgram *p, const LoopKernel *k)
{
    Touch t = { p, calloc(p->n_bufs > 0 ? (size_t)p->n_bufs : 1, 1), 0 };
    if (!t.seen)
        return -1;
    loop_stmt_buffers(k->body, touch_buf, &t);
    free(t.seen);
    return t.bytes;
}

typedef struct Rebase { LoopProgram *p; int from, to; const LoopExpr *shift; int oom; } Rebase;

static void rebase_access(void *ctx, int *buf, LoopExpr **index, int store)
{
    (void)store;
    Rebase *r = ctx;
    if (*buf != r->from)
        return;
    LoopExpr *at = loop_bin(r->p, LOOP_ADD, *index, loop_expr_copy(r->p, r->shift));
    if (!at) {
        r->oom = 1;
        return;
    }
    *buf = r->to;
    *index = at;
}

int loop_stmt_rebase(LoopProgram *p, LoopStmt *s, int from, int to, const LoopExpr *shift)
{
    Rebase r = { p, from, to, shift, 0 };
    loop_stmt_accesses(s, rebase_access, &r);
    return r.oom ? -1 : 0;
}

int loop_expr_uses(const LoopExpr *e, int var)
{
    if (!e)
        return 0;
    switch (e->kind) {
    case LOOP_E_VAR: return e->u.var == var;
    case LOOP_E_LOAD: return loop_expr_uses(e->u.load.index, var);
    case LOOP_E_BIN: return loop_expr_uses(e->u.bin.a, var) || loop_expr_uses(e->u.bin.b, var);
    case LOOP_E_UN: return loop_expr_uses(e->u.un.a, var);
    case LOOP_E_SELECT:
        return loop_expr_uses(e->u.sel.cond, var) || loop_expr_uses(e->u.sel.a, var) || loop_expr_uses(e->u.sel.b, var);
    case LOOP_E_CALL:
        for (int i = 0; i < e->u.call.n && i < 3; i++)
            if (loop_expr_uses(e->u.call.args[i], var))
                return 1;
        return 0;
    case LOOP_E_CAST: return loop_expr_uses(e->u.cast.a, var);
    default: return 0;
    }
}

LoopExpr *loop_expr_subst(LoopProgram *p, const LoopExpr *e, const int *vars, LoopExpr *const *by, int n)
{
    if (!e)
        return NULL;
    if (e->kind == LOOP_E_VAR)
        for (int i = 0; i < n; i++)
            if (e->u.var == vars[i])
                return loop_expr_copy(p, by[i]);
    LoopExpr *c = loop_expr_copy(p, e);
    if (!c)
        return NULL;
    switch (e->kind) {
    case LOOP_E_LOAD: c->u.load.index = loop_expr_subst(p, e->u.load.index, vars, by, n); break;
    case LOOP_E_BIN:
        c->u.bin.a = loop_expr_subst(p, e->u.bin.a, vars, by, n);
        c->u.bin.b = loop_expr_subst(p, e->u.bin.b, vars, by, n);
        break;
    case LOOP_E_UN: c->u.un.a = loop_expr_subst(p, e->u.un.a, vars, by, n); break;
    case LOOP_E_SELECT:
        c->u.sel.cond = loop_expr_subst(p, e->u.sel.cond, vars, by, n);
        c->u.sel.a = loop_expr_subst(p, e->u.sel.a, vars, by, n);
        c->u.sel.b = loop_expr_subst(p, e->u.sel.b, vars, by, n);
        break;
    case LOOP_E_CALL:
        for (int i = 0; i < e->u.call.n && i < 3; i++)
            c->u.call.args[i] = loop_expr_subst(p, e->u.call.args[i], vars, by, n);
        break;
    case LOOP_E_CAST: c->u.cast.a = loop_expr_subst(p, e->u.cast.a, vars, by, n); break;
    default: break;
    }
    return c;
}
