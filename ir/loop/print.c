/* ir/loop/print.c — the stable text form of a loop program (docs/loop-ir.md).
 *
 * Expressions print C-like with the fewest parentheses that keep the tree
 * shape: a child is parenthesized when it binds less tightly than its
 * parent, and a right operand also when it binds equally, so the left-leaning
 * (a + b) + c prints as a + b + c while a + (b + c) keeps its parentheses.
 * On integers `/` and `%` are floor division and modulo; the truncating forms
 * print as tdiv(a, b) and tmod(a, b).  Products by an integer constant print
 * without spaces (i0*1024 + i1*32), like index arithmetic is usually written.
 */
#include "ir/loop/loop.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *loop_storage_name(LoopStorage st)
{
    static const char *const names[] = {
        [LOOP_ST_INPUT] = "input", [LOOP_ST_OUTPUT] = "output", [LOOP_ST_CONST] = "const",
        [LOOP_ST_WORKSPACE] = "workspace", [LOOP_ST_LOCAL] = "local",
    };
    return (unsigned)st < sizeof names / sizeof *names ? names[st] : "?";
}

const char *loop_for_kind_name(LoopForKind k)
{
    static const char *const names[] = {
        [LOOP_SERIAL] = "serial", [LOOP_PARALLEL] = "parallel", [LOOP_VECTORIZED] = "vectorized",
        [LOOP_UNROLLED] = "unrolled", [LOOP_GPU_BLOCK_X] = "gpu.block.x", [LOOP_GPU_BLOCK_Y] = "gpu.block.y",
        [LOOP_GPU_BLOCK_Z] = "gpu.block.z", [LOOP_GPU_THREAD_X] = "gpu.thread.x",
        [LOOP_GPU_THREAD_Y] = "gpu.thread.y", [LOOP_GPU_THREAD_Z] = "gpu.thread.z",
        [LOOP_HLS_PIPELINE] = "hls.pipeline",
    };
    return (unsigned)k < sizeof names / sizeof *names ? names[k] : "?";
}

const char *loop_intrinsic_name(LoopIntrinsic fn)
{
    static const char *const names[] = {
#define X(name) #name,
        LOOP_INTRINSICS(X)
#undef X
    };
    return (unsigned)fn < LOOP_I_COUNT ? names[fn] : "?";
}

/* Precedence (higher binds tighter), C's order. */
enum { P_LOW = 0, P_SEL = 1, P_OR = 3, P_XOR = 4, P_AND = 5, P_EQ = 6, P_CMP = 7, P_SHIFT = 8,
       P_ADD = 9, P_MUL = 10, P_UNARY = 11, P_ATOM = 12 };

typedef struct BinSyntax { const char *sym; int prec; int call; } BinSyntax;

static BinSyntax bin_syntax(LoopBinOp op)
{
    switch (op) {
    case LOOP_ADD: return (BinSyntax){ "+", P_ADD, 0 };
    case LOOP_SUB: return (BinSyntax){ "-", P_ADD, 0 };
    case LOOP_MUL: return (BinSyntax){ "*", P_MUL, 0 };
    case LOOP_DIV: return (BinSyntax){ "/", P_MUL, 0 };
    case LOOP_MOD: return (BinSyntax){ "%", P_MUL, 0 };
    case LOOP_TDIV: return (BinSyntax){ "tdiv", P_ATOM, 1 };
    case LOOP_TMOD: return (BinSyntax){ "tmod", P_ATOM, 1 };
    case LOOP_MIN: return (BinSyntax){ "min", P_ATOM, 1 };
    case LOOP_MAX: return (BinSyntax){ "max", P_ATOM, 1 };
    case LOOP_LT: return (BinSyntax){ "<", P_CMP, 0 };
    case LOOP_LE: return (BinSyntax){ "<=", P_CMP, 0 };
    case LOOP_EQ: return (BinSyntax){ "==", P_EQ, 0 };
    case LOOP_NE: return (BinSyntax){ "!=", P_EQ, 0 };
    case LOOP_AND: return (BinSyntax){ "&", P_AND, 0 };
    case LOOP_OR: return (BinSyntax){ "|", P_OR, 0 };
    case LOOP_XOR: return (BinSyntax){ "^", P_XOR, 0 };
    case LOOP_SHL: return (BinSyntax){ "<<", P_SHIFT, 0 };
    case LOOP_SHR: return (BinSyntax){ ">>", P_SHIFT, 0 };
    }
    return (BinSyntax){ "?", P_ATOM, 1 };
}

static int expr_prec(const LoopExpr *e)
{
    switch (e->kind) {
    case LOOP_E_BIN: return bin_syntax(e->u.bin.op).prec;
    case LOOP_E_UN: return e->u.un.op == LOOP_ABS ? P_ATOM : P_UNARY;
    case LOOP_E_SELECT: return P_SEL;
    case LOOP_E_INT: return e->u.i < 0 ? P_UNARY : P_ATOM;
    case LOOP_E_FLOAT: return signbit(e->u.f) ? P_UNARY : P_ATOM;
    default: return P_ATOM;
    }
}

/* Shortest decimal that reads back as the same value of the type, always
 * with a '.' or an exponent so it cannot be mistaken for an integer. */
static void print_float(UtilBuf *out, IrDType t, double v)
{
    const char *suffix = t == IR_DT_F32 ? "f" : t == IR_DT_F16 ? "h" : t == IR_DT_BF16 ? "bf" : "";
    if (isnan(v)) {
        util_buf_printf(out, "nan%s", suffix);
        return;
    }
    if (isinf(v)) {
        util_buf_printf(out, "%sinf%s", v < 0 ? "-" : "", suffix);
        return;
    }
    char s[40];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(s, sizeof s, "%.*g", prec, v);
        double back = strtod(s, NULL);
        if (t == IR_DT_F64 ? back == v : (float)back == (float)v)
            break;
    }
    if (!strpbrk(s, ".e"))
        strcat(s, ".0");
    util_buf_printf(out, "%s%s", s, suffix);
}

static void print_expr(const LoopProgram *p, const LoopExpr *e, UtilBuf *out);

static void print_sub(const LoopProgram *p, const LoopExpr *e, int min_prec, UtilBuf *out)
{
    int paren = e && expr_prec(e) < min_prec;
    if (paren)
        util_buf_put(out, "(", 1);
    print_expr(p, e, out);
    if (paren)
        util_buf_put(out, ")", 1);
}

static const char *var_name(const LoopProgram *p, int v)
{
    return v >= 0 && v < p->n_vars && p->vars[v].name ? p->vars[v].name : NULL;
}

static void print_var(const LoopProgram *p, int v, UtilBuf *out)
{
    const char *n = var_name(p, v);
    if (n)
        util_buf_printf(out, "%s", n);
    else
        util_buf_printf(out, "<var %d>", v);
}

/* buf[index] */
static void print_access(const LoopProgram *p, int buf, const LoopExpr *index, UtilBuf *out)
{
    if (buf >= 0 && buf < p->n_bufs)
        util_buf_printf(out, "%s[", p->bufs[buf].name);
    else
        util_buf_printf(out, "<buf %d>[", buf);
    print_expr(p, index, out);
    util_buf_put(out, "]", 1);
}

static void print_expr(const LoopProgram *p, const LoopExpr *e, UtilBuf *out)
{
    if (!e) {
        util_buf_printf(out, "<null>");
        return;
    }
    switch (e->kind) {
    case LOOP_E_INT:
        if (e->type == IR_DT_BOOL)
            util_buf_printf(out, e->u.i ? "true" : "false");
        else
            util_buf_printf(out, "%lld", (long long)e->u.i);
        break;
    case LOOP_E_FLOAT: print_float(out, e->type, e->u.f); break;
    case LOOP_E_VAR: print_var(p, e->u.var, out); break;
    case LOOP_E_LOAD: print_access(p, e->u.load.buf, e->u.load.index, out); break;
    case LOOP_E_BIN: {
        BinSyntax s = bin_syntax(e->u.bin.op);
        if (s.call) {
            util_buf_printf(out, "%s(", s.sym);
            print_expr(p, e->u.bin.a, out);
            util_buf_printf(out, ", ");
            print_expr(p, e->u.bin.b, out);
            util_buf_put(out, ")", 1);
        } else {
            print_sub(p, e->u.bin.a, s.prec, out);
            /* products by a constant print tight (i0*1024 + i1*32), everything else spaced */
            int tight = e->u.bin.op == LOOP_MUL &&
                        (e->u.bin.a->kind == LOOP_E_INT || e->u.bin.b->kind == LOOP_E_INT);
            util_buf_printf(out, tight ? "%s" : " %s ", s.sym);
            print_sub(p, e->u.bin.b, s.prec + 1, out);
        }
        break;
    }
    case LOOP_E_UN:
        if (e->u.un.op == LOOP_ABS) {
            util_buf_printf(out, "abs(");
            print_expr(p, e->u.un.a, out);
            util_buf_put(out, ")", 1);
        } else {
            const char *sym = e->u.un.op == LOOP_NEG ? "-" : e->type == IR_DT_BOOL ? "!" : "~";
            util_buf_printf(out, "%s", sym);
            print_sub(p, e->u.un.a, P_UNARY + 1, out);
        }
        break;
    case LOOP_E_SELECT:
        print_sub(p, e->u.sel.cond, P_SEL + 1, out);
        util_buf_printf(out, " ? ");
        print_sub(p, e->u.sel.a, P_SEL + 1, out);
        util_buf_printf(out, " : ");
        print_sub(p, e->u.sel.b, P_SEL, out);
        break;
    case LOOP_E_CALL:
        util_buf_printf(out, "%s(", loop_intrinsic_name(e->u.call.fn));
        for (int i = 0; i < e->u.call.n && i < 3; i++) {
            if (i)
                util_buf_printf(out, ", ");
            print_expr(p, e->u.call.args[i], out);
        }
        util_buf_put(out, ")", 1);
        break;
    case LOOP_E_CAST:
        util_buf_printf(out, "%s(", ir_dtype_name(e->type));
        print_expr(p, e->u.cast.a, out);
        util_buf_put(out, ")", 1);
        break;
    }
}

void loop_print_expr(const LoopProgram *p, const LoopExpr *e, UtilBuf *out)
{
    print_expr(p, e, out);
}

static void indent(UtilBuf *out, int depth)
{
    for (int i = 0; i < depth; i++)
        util_buf_put(out, "  ", 2);
}

static void print_stmt(const LoopProgram *p, const LoopStmt *s, int depth, UtilBuf *out);

/* The statements of a body at `depth` (a BLOCK's items, or the one statement). */
static void print_body(const LoopProgram *p, const LoopStmt *s, int depth, UtilBuf *out)
{
    if (s && s->kind == LOOP_S_BLOCK) {
        for (int i = 0; i < s->u.block.n; i++)
            print_stmt(p, s->u.block.items[i], depth, out);
    } else {
        print_stmt(p, s, depth, out);
    }
}

static void print_stmt(const LoopProgram *p, const LoopStmt *s, int depth, UtilBuf *out)
{
    indent(out, depth);
    if (!s) {
        util_buf_printf(out, "<null>\n");
        return;
    }
    switch (s->kind) {
    case LOOP_S_FOR: {
        LoopForKind k = s->u.loop.kind;
        util_buf_printf(out, "for ");
        print_var(p, s->u.loop.var, out);
        util_buf_printf(out, " in 0..");
        print_sub(p, s->u.loop.extent, P_ATOM, out);
        if (k != LOOP_SERIAL)
            util_buf_printf(out, " %s", loop_for_kind_name(k));
        if (s->u.loop.factor && (k == LOOP_VECTORIZED || k == LOOP_UNROLLED))
            util_buf_printf(out, "(%d)", s->u.loop.factor);
        else if (k == LOOP_HLS_PIPELINE)
            util_buf_printf(out, "(ii=%d)", s->u.loop.factor);
        util_buf_printf(out, " {\n");
        print_body(p, s->u.loop.body, depth + 1, out);
        indent(out, depth);
        util_buf_printf(out, "}\n");
        break;
    }
    case LOOP_S_LET:
        print_var(p, s->u.let.var, out);
        util_buf_printf(out, " = ");
        print_expr(p, s->u.let.value, out);
        util_buf_printf(out, " : %s%s\n",
                        s->u.let.var >= 0 && s->u.let.var < p->n_vars ? ir_dtype_name(p->vars[s->u.let.var].type)
                                                                       : "?",
                        s->u.let.mutable_ ? " (mutable)" : "");
        break;
    case LOOP_S_ASSIGN:
        print_var(p, s->u.assign.var, out);
        util_buf_printf(out, " = ");
        print_expr(p, s->u.assign.value, out);
        util_buf_printf(out, "\n");
        break;
    case LOOP_S_STORE:
        print_access(p, s->u.store.buf, s->u.store.index, out);
        util_buf_printf(out, " = ");
        print_expr(p, s->u.store.value, out);
        util_buf_printf(out, "\n");
        break;
    case LOOP_S_IF:
        util_buf_printf(out, "if ");
        print_expr(p, s->u.cond.cond, out);
        util_buf_printf(out, " {\n");
        print_body(p, s->u.cond.then_, depth + 1, out);
        if (s->u.cond.else_) {
            indent(out, depth);
            util_buf_printf(out, "} else {\n");
            print_body(p, s->u.cond.else_, depth + 1, out);
        }
        indent(out, depth);
        util_buf_printf(out, "}\n");
        break;
    case LOOP_S_BLOCK:   /* a nested block: its lets end at the closing brace */
        util_buf_printf(out, "{\n");
        print_body(p, s, depth + 1, out);
        indent(out, depth);
        util_buf_printf(out, "}\n");
        break;
    case LOOP_S_BARRIER: util_buf_printf(out, "barrier\n"); break;
    case LOOP_S_PREFETCH:
        util_buf_printf(out, "prefetch ");
        print_access(p, s->u.prefetch.buf, s->u.prefetch.index, out);
        util_buf_printf(out, "\n");
        break;
    }
}

static void print_buf(const LoopProgram *p, const LoopBuf *b, UtilBuf *out)
{
    char shape[200];
    ir_shape_str(&b->shape, shape, sizeof shape);
    util_buf_printf(out, "buf %s: %s %s%s strides [", b->name, loop_storage_name(b->storage),
                    ir_dtype_name(b->dtype), shape);
    for (int i = 0; i < b->shape.rank; i++)
        util_buf_printf(out, i ? ",%lld" : "%lld", (long long)b->strides[i]);
    util_buf_printf(out, "]");
    if (b->storage == LOOP_ST_WORKSPACE)
        util_buf_printf(out, " offset %lld", (long long)b->offset);
    util_buf_printf(out, " bytes %lld", (long long)b->bytes);
    if (loop_buf_has_halo(b))
        util_buf_printf(out, " halo %dx%d of %g base %lld", b->halo_rows, b->halo_cols, b->halo_fill,
                        (long long)b->base);
    if (b->index >= 0)
        util_buf_printf(out, " index %d", b->index);
    if (b->alias_of >= 0)
        util_buf_printf(out, " alias %s", b->alias_of < p->n_bufs ? p->bufs[b->alias_of].name : "?");
    if (b->partition)
        util_buf_printf(out, " partition %d", b->partition);
    if (b->stream)
        util_buf_printf(out, " stream depth %lld lanes %d", (long long)b->stream,
                        b->stream_lanes > 1 ? b->stream_lanes : 1);
    util_buf_printf(out, "\n");
}

void loop_print(const LoopProgram *p, UtilBuf *out)
{
    util_buf_printf(out, "program %s: %d inputs, %d outputs, workspace %lld bytes (align %lld)\n", p->name,
                    p->n_inputs, p->n_outputs, (long long)p->workspace_bytes, (long long)p->workspace_align);
    for (int i = 0; i < p->n_bufs; i++)
        print_buf(p, &p->bufs[i], out);
    for (int k = 0; k < p->n_kernels; k++) {
        const LoopKernel *kn = &p->kernels[k];
        util_buf_printf(out, "\nkernel %s", kn->name);
        if (kn->n_nodes > 0)
            util_buf_printf(out, " (nodes %d..%d, %lld flops)", kn->first_node, kn->first_node + kn->n_nodes - 1,
                            (long long)kn->flops);
        util_buf_printf(out, " {\n");
        print_body(p, kn->body, 1, out);
        util_buf_printf(out, "}\n");
    }
}
