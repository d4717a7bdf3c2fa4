/* codegen/c_emit.c — the loop IR as C source: kernels, constants and the
 * helper functions they call, in float or fixed-point arithmetic (see
 * codegen/c_emit.h for the numeric contract). */
#include "codegen/c_emit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ numbers */

int cg_fixed_parse(const char *s, CgFixed *f)
{
    int w, i, n = 0;
    if (sscanf(s, "fixed<%d,%d>%n", &w, &i, &n) != 2 || s[n] || w < 2 || w > 32 || i < 1 || i > w)
        return -1;
    f->w = w;
    f->i = i;
    return 0;
}

int64_t cg_fixed_quantize(CgFixed f, double x)
{
    int fr = f.w - f.i;
    int64_t hi = ((int64_t)1 << (f.w - 1)) - 1, lo = -hi - 1;
    if (x != x)
        return 0;
    double s = ldexp(x, fr);
    double r = s >= 0 ? floor(s + 0.5) : -floor(-s + 0.5);
    return r >= (double)hi ? hi : r <= (double)lo ? lo : (int64_t)r;
}

double cg_fixed_value(CgFixed f, int64_t q) { return ldexp((double)q, -(f.w - f.i)); }

const char *cg_c_dtype(IrDType dt)
{
    switch (dt) {
    case IR_DT_F32: return "float";
    case IR_DT_F64: return "double";
    case IR_DT_I8: return "int8_t";
    case IR_DT_U8: case IR_DT_BOOL: return "uint8_t";
    case IR_DT_I16: return "int16_t";
    case IR_DT_U16: case IR_DT_F16: case IR_DT_BF16: return "uint16_t";
    case IR_DT_I32: return "int32_t";
    case IR_DT_U32: return "uint32_t";
    case IR_DT_U64: return "uint64_t";
    default: return "int64_t";
    }
}

static int is_fixed_buf(const CgCTarget *t, const LoopProgram *p, int b)
{
    return t->fmt && ir_dtype_is_float(p->bufs[b].dtype) && t->fmt[cg_c_root(p, b)].w > 0;
}

int cg_fixed_bytes(CgFixed f) { return f.w <= 8 ? 1 : f.w <= 16 ? 2 : 4; }

CgCType cg_c_fixed_type(CgFixed f)
{
    CgCType r;
    snprintf(r.s, sizeof r.s, "dlcc_fx%d_%d", f.w, f.i);
    return r;
}

CgCType cg_c_buf_type(const CgCTarget *t, const LoopProgram *p, int b)
{
    if (is_fixed_buf(t, p, b))
        return cg_c_fixed_type(t->fmt[cg_c_root(p, b)]);
    CgCType r;
    snprintf(r.s, sizeof r.s, "%s", cg_c_dtype(p->bufs[b].dtype));
    return r;
}

int cg_c_root(const LoopProgram *p, int b)
{
    for (int steps = 0; steps <= p->n_bufs && p->bufs[b].alias_of >= 0; steps++)
        b = p->bufs[b].alias_of;
    return b;
}

void cg_c_buf_name(const LoopProgram *p, int b, char *out, size_t n)
{
    b = cg_c_root(p, b);
    const LoopBuf *bf = &p->bufs[b];
    snprintf(out, n, "%s_%s", bf->storage == LOOP_ST_CONST ? "w" : bf->storage == LOOP_ST_LOCAL ? "l" : "t",
             bf->name);
}

void cg_c_kernel_name(const CgCTarget *t, const LoopProgram *p, int k, char *out, size_t n)
{
    snprintf(out, n, "%s_k%d_%s", t->name, k, p->kernels[k].name);
}

/* --------------------------------------------------------------- uses */

static void walk_expr(LoopExpr *e, CgCWalk *w)
{
    if (!e)
        return;
    switch (e->kind) {
    case LOOP_E_LOAD:
        if (w->load)
            w->load(w, e);
        walk_expr(e->u.load.index, w);
        break;
    case LOOP_E_BIN: walk_expr(e->u.bin.a, w); walk_expr(e->u.bin.b, w); break;
    case LOOP_E_UN: walk_expr(e->u.un.a, w); break;
    case LOOP_E_SELECT: walk_expr(e->u.sel.cond, w); walk_expr(e->u.sel.a, w); walk_expr(e->u.sel.b, w); break;
    case LOOP_E_CALL:
        for (int i = 0; i < e->u.call.n && i < 3; i++)
            walk_expr(e->u.call.args[i], w);
        break;
    case LOOP_E_CAST: walk_expr(e->u.cast.a, w); break;
    default: break;
    }
    if (w->expr)
        w->expr(w, e);
}

void cg_c_walk(LoopStmt *s, CgCWalk *w)
{
    if (!s)
        return;
    switch (s->kind) {
    case LOOP_S_FOR: walk_expr(s->u.loop.extent, w); cg_c_walk(s->u.loop.body, w); break;
    case LOOP_S_LET: walk_expr(s->u.let.value, w); break;
    case LOOP_S_ASSIGN: walk_expr(s->u.assign.value, w); break;
    case LOOP_S_STORE:
        if (w->store)
            w->store(w, s);
        walk_expr(s->u.store.index, w);
        walk_expr(s->u.store.value, w);
        break;
    case LOOP_S_IF:
        walk_expr(s->u.cond.cond, w);
        cg_c_walk(s->u.cond.then_, w);
        cg_c_walk(s->u.cond.else_, w);
        break;
    case LOOP_S_BLOCK:
        for (int i = 0; i < s->u.block.n; i++)
            cg_c_walk(s->u.block.items[i], w);
        break;
    case LOOP_S_BARRIER: case LOOP_S_PREFETCH: break;    /* a prefetch has no C form: dropped */
    }
}

typedef struct Uses {
    CgCWalk w;
    const LoopProgram *p;
    unsigned char *used;
} Uses;

static void use_load(CgCWalk *w, LoopExpr *e)
{
    Uses *u = (Uses *)w;
    u->used[cg_c_root(u->p, e->u.load.buf)] |= 1;
}

static void use_store(CgCWalk *w, LoopStmt *s)
{
    Uses *u = (Uses *)w;
    u->used[cg_c_root(u->p, s->u.store.buf)] |= 2;
}

void cg_c_kernel_uses(const LoopProgram *p, int k, unsigned char *used)
{
    memset(used, 0, (size_t)p->n_bufs);
    Uses u = { { use_load, use_store, NULL }, p, used };
    cg_c_walk(p->kernels[k].body, &u.w);    /* reads only */
}

void cg_c_const_readers(const LoopProgram *p, int *readers)
{
    unsigned char *used = malloc((size_t)(p->n_bufs ? p->n_bufs : 1));
    for (int b = 0; b < p->n_bufs; b++)
        readers[b] = -1;
    for (int k = 0; used && k < p->n_kernels; k++) {
        cg_c_kernel_uses(p, k, used);
        for (int b = 0; b < p->n_bufs; b++)
            if (used[b] && p->bufs[b].storage == LOOP_ST_CONST)
                readers[b] = readers[b] == -1 ? k : -2;
    }
    free(used);
}

/* ------------------------------------------------------------ helpers */

static const char helpers_common[] =
    "static inline int64_t dlcc_floordiv(int64_t a, int64_t b)\n"
    "{\n"
    "    if (b == 0) return 0;\n"
    "    if (b == -1) return (int64_t)(0u - (uint64_t)a);\n"
    "    int64_t q = a / b;\n"
    "    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;\n"
    "}\n"
    "static inline int64_t dlcc_floormod(int64_t a, int64_t b)\n"
    "{\n"
    "    if (b == 0 || b == -1) return 0;\n"
    "    int64_t r = a % b;\n"
    "    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;\n"
    "}\n"
    "static inline int64_t dlcc_tdiv(int64_t a, int64_t b)\n"
    "{\n"
    "    return b == 0 ? 0 : b == -1 ? (int64_t)(0u - (uint64_t)a) : a / b;\n"
    "}\n"
    "static inline int64_t dlcc_tmod(int64_t a, int64_t b) { return b == 0 || b == -1 ? 0 : a % b; }\n"
    "static inline int64_t dlcc_imin(int64_t a, int64_t b) { return a < b ? a : b; }\n"
    "static inline int64_t dlcc_imax(int64_t a, int64_t b) { return a > b ? a : b; }\n"
    "static inline int64_t dlcc_iabs(int64_t a) { return a < 0 ? (int64_t)(0u - (uint64_t)a) : a; }\n"
    "static inline int64_t dlcc_shl(int64_t a, int64_t s, int bits)\n"
    "{\n"
    "    return s < 0 || s >= bits ? 0 : (int64_t)((uint64_t)a << s);\n"
    "}\n"
    "static inline int64_t dlcc_shr(int64_t a, int64_t s, int bits)\n"
    "{\n"
    "    return s < 0 || s >= bits ? (a < 0 ? -1 : 0) : (a < 0 ? ~(~a >> s) : a >> s);\n"
    "}\n";

static const char helpers_float[] =
    "static inline float dlcc_fminf(float a, float b) { return a != a ? a : b != b ? b : a < b ? a : b; }\n"
    "static inline float dlcc_fmaxf(float a, float b) { return a != a ? a : b != b ? b : a > b ? a : b; }\n"
    "static inline double dlcc_fmin(double a, double b) { return a != a ? a : b != b ? b : a < b ? a : b; }\n"
    "static inline double dlcc_fmax(double a, double b) { return a != a ? a : b != b ? b : a > b ? a : b; }\n"
    "/* float -> integer, saturating (NaN -> 0) */\n"
    "static inline int64_t dlcc_f2i(double x)\n"
    "{\n"
    "    return x != x ? 0 : x >= 9223372036854775807.0 ? INT64_MAX : x <= -9223372036854775808.0 ? INT64_MIN\n"
    "         : (int64_t)x;\n"
    "}\n";

/* Fixed point as ap_fixed (codegen/c_emit.h): registers and buffers are
 * ap_fixed<W, I, AP_RND_INF, AP_SAT>, so every conversion rounds half away
 * from zero and saturates; these helpers cover what the operators do not. */
static const char helpers_fixed[] =
    "/* double -> the value an ap_fixed is made from: NaN -> 0, infinities clamped (then saturated) */\n"
    "static inline double dlcc_fx_d(double x) { return x != x ? 0.0 : x > 1e18 ? 1e18 : x < -1e18 ? -1e18 : x; }\n"
    "template <class T> static inline T dlcc_fx_min(T a, T b) { return a < b ? a : b; }\n"
    "template <class T> static inline T dlcc_fx_max(T a, T b) { return a > b ? a : b; }\n"
    "template <class T> static inline T dlcc_fx_abs(T a) { return a < 0 ? T(-a) : a; }\n"
    "/* quotient truncated toward zero to T's fraction bits; x / 0 saturates to the sign of x */\n"
    "template <class T> static inline T dlcc_fx_div(T a, T b) { return b == 0 ? T(a >= 0 ? 1e18 : -1e18) : T(a / b); }\n";

/* Lookup-table functions (fixed mode): exp, tanh and erf on the register's
 * raw bits, interpolated linearly between table entries of 30 fraction bits
 * (docs/targets/fpga.md, "Non-linear functions"); targets/fpga/eval.c
 * computes the same integers. */
static const char helpers_lut[] =
    "/* lookup-table exp / tanh / erf on raw register bits (f fraction bits), linear interpolation between\n"
    " * entries of 30 fraction bits, 64 segments per unit of the argument (exp: of x log2 e) */\n"
    "template <class T> static inline int64_t dlcc_fx_bits(T x) { ap_int<32> r = x.range(31, 0); return r.to_int64(); }\n"
    "template <class T> static inline T dlcc_fx_of_bits(int64_t v) { T y; y.range(31, 0) = ap_int<32>(v); return y; }\n"
    "static inline int64_t dlcc_fx_rshr(int64_t v, int s)\n"
    "{\n"
    "    if (s <= 0) return v;\n"
    "    int64_t h = (int64_t)1 << (s - 1);\n"
    "    return v >= 0 ? (v + h) >> s : -((-v + h) >> s);\n"
    "}\n"
    "static inline int64_t dlcc_fx_sat32(int64_t v) { return v > 2147483647 ? 2147483647 : v < -2147483647 - 1 ? -2147483647 - 1 : v; }\n"
    "/* entry j of tab (64 per unit) at position a (f fraction bits), interpolated; the last entry beyond */\n"
    "static inline int64_t dlcc_fx_interp(const int64_t *tab, int64_t last, int64_t a, int f)\n"
    "{\n"
    "    int s = f - 6;\n"
    "    int64_t j = s >= 0 ? a >> s : a << -s, rem = s > 0 ? a & (((int64_t)1 << s) - 1) : 0;\n"
    "    if (j >= last) return tab[last];\n"
    "    return tab[j] + dlcc_fx_rshr((tab[j + 1] - tab[j]) * rem, s);\n"
    "}\n"
    "/* an odd function from its table on [0, last / 64] */\n"
    "static inline int64_t dlcc_fx_odd(const int64_t *tab, int64_t last, int64_t x, int f)\n"
    "{\n"
    "    int64_t y = dlcc_fx_rshr(dlcc_fx_interp(tab, last, x < 0 ? -x : x, f), 30 - f);\n"
    "    return x < 0 ? -y : y;\n"
    "}\n";

CgCType cg_c_acc_type(int frac)
{
    CgCType t;
    snprintf(t.s, sizeof t.s, "dlcc_acc48_%d", 48 - frac);
    return t;
}

int cg_fx_lut_fn(LoopIntrinsic fn) { return fn == LOOP_I_exp || fn == LOOP_I_tanh || fn == LOOP_I_erf; }

int cg_fx_lut_last(LoopIntrinsic fn) { return fn == LOOP_I_exp ? 64 : fn == LOOP_I_tanh ? 512 : 256; }

int64_t cg_fx_lut(LoopIntrinsic fn, int j)
{
    double x = j / 64.0, y = fn == LOOP_I_exp ? exp2(x) : fn == LOOP_I_tanh ? tanh(x) : erf(x);
    return (int64_t)floor(y * 1073741824.0 + 0.5);      /* at most 2^31: exp's last entry, 2^1 */
}

/* The table function fn's definition: dlcc_fx_<fn>(x, f) on raw bits. */
static void lut_def(UtilBuf *out, LoopIntrinsic fn)
{
    int last = cg_fx_lut_last(fn);
    util_buf_printf(out, "static inline int64_t dlcc_fx_%s(int64_t x, int f)\n{\n    static const int64_t tab[%d] = {",
                    loop_intrinsic_name(fn), last + 1);
    for (int j = 0; j <= last; j++)
        util_buf_printf(out, "%s%lld%s", j % 8 ? " " : "\n        ", (long long)cg_fx_lut(fn, j), j < last ? "," : "");
    util_buf_printf(out, "\n    };\n");
    if (fn == LOOP_I_exp) {
        /* exp(x) = 2^(x log2 e) = 2^n 2^r, r in [0, 1): the table holds 2^(j/64) */
        util_buf_printf(out, "    int64_t t = dlcc_fx_rshr(x * %lldLL, 30);   /* x log2(e), log2(e) to 30 bits */\n"
                             "    int64_t n = t >= 0 ? t >> f : -((-t + ((int64_t)1 << f) - 1) >> f);\n"
                             "    int64_t v = dlcc_fx_interp(tab, %d, t - n * ((int64_t)1 << f), f), sh = n + f - 30;\n"
                             "    if (sh >= 32) return 2147483647;\n"
                             "    return dlcc_fx_sat32(sh >= 0 ? v << sh : -sh >= 62 ? 0 : dlcc_fx_rshr(v, (int)-sh));\n"
                             "}\n", (long long)CG_FX_LOG2E, last);
    } else {
        util_buf_printf(out, "    return dlcc_fx_odd(tab, %d, x, f);\n}\n", last);
    }
}

typedef struct Calls {
    CgCWalk w;
    unsigned char fn[LOOP_I_COUNT];
} Calls;

static void uses_call(CgCWalk *w, LoopExpr *e)
{
    if (e->kind == LOOP_E_CALL)
        ((Calls *)w)->fn[e->u.call.fn] = 1;
}

/* --------------------------------------------------- wide accumulators */

typedef struct Acc {
    const LoopProgram *p;
    unsigned char *wide;   /* 1: candidate, 2: disqualified */
} Acc;

/* value is var + e (either order) with e not reading var; *e set */
static int acc_step(const LoopExpr *value, int var, const LoopExpr **e)
{
    if (value->kind != LOOP_E_BIN || value->u.bin.op != LOOP_ADD)
        return 0;
    const LoopExpr *a = value->u.bin.a, *b = value->u.bin.b;
    if (a->kind == LOOP_E_VAR && a->u.var == var && !loop_expr_uses(b, var))
        *e = b;
    else if (b->kind == LOOP_E_VAR && b->u.var == var && !loop_expr_uses(a, var))
        *e = a;
    else
        return 0;
    return 1;
}

static void acc_scan(Acc *A, const LoopStmt *s)
{
    if (!s)
        return;
    const LoopExpr *e;
    switch (s->kind) {
    case LOOP_S_FOR: acc_scan(A, s->u.loop.body); break;
    case LOOP_S_LET:
        if (s->u.let.mutable_ && ir_dtype_is_float(A->p->vars[s->u.let.var].type) && !A->wide[s->u.let.var])
            A->wide[s->u.let.var] = 1;
        break;
    case LOOP_S_ASSIGN:
        if (!acc_step(s->u.assign.value, s->u.assign.var, &e))
            A->wide[s->u.assign.var] = 2;
        break;
    case LOOP_S_IF: acc_scan(A, s->u.cond.then_); acc_scan(A, s->u.cond.else_); break;
    case LOOP_S_BLOCK:
        for (int i = 0; i < s->u.block.n; i++)
            acc_scan(A, s->u.block.items[i]);
        break;
    default: break;
    }
}

void cg_c_accumulators(const LoopProgram *p, int k, unsigned char *wide)
{
    memset(wide, 0, (size_t)p->n_vars + 1);
    Acc A = { p, wide };
    acc_scan(&A, p->kernels[k].body);
    for (int v = 0; v < p->n_vars; v++)
        wide[v] = wide[v] == 1;
}

int cg_c_accumulation(const LoopExpr *value, int var, const LoopExpr **e) { return acc_step(value, var, e); }

/* Marks in seen[] (indexed w * 33 + i) the formats of every fixed buffer
 * and every kernel register. */
static void fixed_formats(const CgCTarget *t, const LoopProgram *p, unsigned char *seen)
{
    for (int b = 0; b < p->n_bufs; b++)
        if (p->bufs[b].alias_of < 0 && is_fixed_buf(t, p, b))
            seen[t->fmt[b].w * 33 + t->fmt[b].i] = 1;
    for (int k = 0; t->frac && k < p->n_kernels; k++)
        seen[32 * 33 + 32 - t->frac[k]] = 1;
}

void cg_c_helpers(UtilBuf *out, const CgCTarget *t, const LoopProgram *p)
{
    util_buf_printf(out, "%s", helpers_common);
    util_buf_printf(out, "%s", helpers_float);
    if (!t->fmt)
        return;
    util_buf_printf(out, "%s", helpers_fixed);
    unsigned char seen[33 * 33];
    memset(seen, 0, sizeof seen);
    fixed_formats(t, p, seen);
    util_buf_printf(out, "/* the formats: fixed<W,I> is ap_fixed<W, I, AP_RND_INF, AP_SAT> */\n");
    for (int w = 1; w <= 32; w++)
        for (int i = 1; i <= w; i++)
            if (seen[w * 33 + i]) {
                CgCType ty = cg_c_fixed_type((CgFixed){ w, i });
                util_buf_printf(out, "typedef ap_fixed<%d, %d, AP_RND_INF, AP_SAT> %s;\n", w, i, ty.s);
                /* the host wrapper's workspace holds W-bit values in 1, 2 or 4 bytes */
                int n = cg_fixed_bytes((CgFixed){ w, i });
                util_buf_printf(out, "static_assert(sizeof(%s) == %d, \"ap_fixed<%d> is not %d bytes\");\n", ty.s, n,
                                w, n);
            }
    /* accumulators: the register's fraction bits in 48 bits, wrapping (no saturation inside a sum) */
    unsigned char facc[33];
    memset(facc, 0, sizeof facc);
    for (int k = 0; t->frac && k < p->n_kernels; k++)
        facc[t->frac[k]] = 1;
    for (int f = 0; f <= 32; f++)
        if (facc[f]) {
            CgCType a = cg_c_acc_type(f);
            util_buf_printf(out, "typedef ap_fixed<48, %d, AP_TRN, AP_WRAP> %s;\n", 48 - f, a.s);
        }
    Calls u = { { NULL, NULL, uses_call }, { 0 } };
    for (int k = 0; k < p->n_kernels; k++)
        cg_c_walk(p->kernels[k].body, &u.w);
    int any = 0;
    for (int f = 0; f < LOOP_I_COUNT; f++)
        any |= u.fn[f] && cg_fx_lut_fn((LoopIntrinsic)f);
    if (!any)
        return;
    util_buf_printf(out, "%s", helpers_lut);
    for (int f = 0; f < LOOP_I_COUNT; f++)
        if (u.fn[f] && cg_fx_lut_fn((LoopIntrinsic)f))
            lut_def(out, (LoopIntrinsic)f);
}

/* -------------------------------------------------------- expressions */

typedef struct CE {
    const CgCTarget *t;
    const LoopProgram *p;
    int k;
    int F;                 /* register fraction bits (fixed mode) */
    int fixed;
    CgCType reg;           /* the register type (fixed mode): ap_fixed<32, 32-F> */
    CgCType acc;           /* the accumulator type (fixed mode): ap_fixed<48, 48-F, AP_TRN, AP_WRAP> */
    unsigned char *wide;   /* fixed mode: per variable, 1 = an accumulator of acc type */
    UtilBuf *o;
    UtilDiag *d;
    int err;
} CE;

static void fail(CE *c, const char *msg, const char *what)
{
    if (!c->err)
        util_error(c->d, util_loc_file(NULL), "C code generation: %s%s", msg, what ? what : "");
    c->err = 1;
}

static const char *reg_type(CE *c, IrDType t)
{
    if (ir_dtype_is_float(t))
        return c->fixed ? c->reg.s : t == IR_DT_F64 ? "double" : "float";   /* accumulators: var_line */
    return t == IR_DT_BOOL ? "int" : cg_c_dtype(t);
}

static void var_name(CE *c, int v)
{
    util_buf_printf(c->o, "%s_%d", c->p->vars[v].name, v);
}

void cg_c_float(UtilBuf *o, double v, int single)
{
    if (v != v) {
        util_buf_printf(o, single ? "NAN" : "((double)NAN)");
        return;
    }
    if (isinf(v)) {
        util_buf_printf(o, v > 0 ? (single ? "INFINITY" : "((double)INFINITY)")
                                 : (single ? "(-INFINITY)" : "(-(double)INFINITY)"));
        return;
    }
    char s[64];
    snprintf(s, sizeof s, single ? "%.9g" : "%.17g", v);
    int plain = !strpbrk(s, ".en");
    util_buf_printf(o, "%s%s%s%s", v < 0 ? "(" : "", s, plain ? ".0" : "", single ? "f" : "");
    if (v < 0)
        util_buf_printf(o, ")");
}

static void print_int(UtilBuf *o, int64_t v)
{
    if (v == INT64_MIN)
        util_buf_printf(o, "INT64_MIN");
    else if (v < -2147483647LL || v > 2147483647LL)
        util_buf_printf(o, "INT64_C(%lld)", (long long)v);
    else if (v < 0)
        util_buf_printf(o, "(%lld)", (long long)v);
    else
        util_buf_printf(o, "%lld", (long long)v);
}

static int int_bits(IrDType t) { return (int)ir_dtype_size(t) * 8; }

static void expr(CE *c, const LoopExpr *e);
static void stream_ref(CE *c, int b, const char *name, const LoopExpr *index);

static void call2(CE *c, const char *fn, const LoopExpr *a, const LoopExpr *b, const char *tail)
{
    util_buf_printf(c->o, "%s(", fn);
    expr(c, a);
    util_buf_printf(c->o, ", ");
    expr(c, b);
    util_buf_printf(c->o, "%s)", tail ? tail : "");
}

static void infix(CE *c, const char *op, const LoopExpr *a, const LoopExpr *b)
{
    util_buf_printf(c->o, "(");
    expr(c, a);
    util_buf_printf(c->o, " %s ", op);
    expr(c, b);
    util_buf_printf(c->o, ")");
}

static void bin_float(CE *c, const LoopExpr *e)
{
    const LoopExpr *a = e->u.bin.a, *b = e->u.bin.b;
    int dbl = a->type == IR_DT_F64;
    LoopBinOp op = e->u.bin.op;
    if (c->fixed && (op == LOOP_EQ || op == LOOP_NE || op == LOOP_LT || op == LOOP_LE) && loop_expr_equal(a, b)) {
        util_buf_printf(c->o, "%d", op == LOOP_EQ || op == LOOP_LE);   /* no NaN in fixed point */
        return;
    }
    const char *sym = op == LOOP_ADD ? "+" : op == LOOP_SUB ? "-" : "*";
    switch (e->u.bin.op) {
    case LOOP_ADD: case LOOP_SUB: case LOOP_MUL:
        if (c->fixed)                   /* the exact sum or product, rounded and saturated to the register */
            util_buf_printf(c->o, "%s", c->reg.s);
        infix(c, sym, a, b);
        break;
    case LOOP_DIV: case LOOP_TDIV: c->fixed ? call2(c, "dlcc_fx_div", a, b, NULL) : infix(c, "/", a, b); break;
    case LOOP_MIN: call2(c, c->fixed ? "dlcc_fx_min" : dbl ? "dlcc_fmin" : "dlcc_fminf", a, b, NULL); break;
    case LOOP_MAX: call2(c, c->fixed ? "dlcc_fx_max" : dbl ? "dlcc_fmax" : "dlcc_fmaxf", a, b, NULL); break;
    case LOOP_MOD: case LOOP_TMOD:
        if (c->fixed) {
            util_buf_printf(c->o, "%s(dlcc_fx_d(fmod((", c->reg.s);
            expr(c, a);
            util_buf_printf(c->o, ").to_double(), (");
            expr(c, b);
            util_buf_printf(c->o, ").to_double())))");
        } else {
            call2(c, dbl ? "fmod" : "fmodf", a, b, NULL);
        }
        break;
    case LOOP_LT: infix(c, "<", a, b); break;
    case LOOP_LE: infix(c, "<=", a, b); break;
    case LOOP_EQ: infix(c, "==", a, b); break;
    case LOOP_NE: infix(c, "!=", a, b); break;
    default: fail(c, "bitwise operation on floats", NULL); break;
    }
}

static void bin_int(CE *c, const LoopExpr *e)
{
    const LoopExpr *a = e->u.bin.a, *b = e->u.bin.b;
    int is_bool = a->type == IR_DT_BOOL;
    const char *fn = NULL;
    switch (e->u.bin.op) {
    case LOOP_LT: infix(c, "<", a, b); return;
    case LOOP_LE: infix(c, "<=", a, b); return;
    case LOOP_EQ: infix(c, "==", a, b); return;
    case LOOP_NE: infix(c, "!=", a, b); return;
    case LOOP_AND: infix(c, is_bool ? "&&" : "&", a, b); return;
    case LOOP_OR: infix(c, is_bool ? "||" : "|", a, b); return;
    case LOOP_XOR: infix(c, is_bool ? "!=" : "^", a, b); return;
    default: break;
    }
    /* arithmetic: computed in int64_t (or uint64_t), then narrowed */
    int narrow = e->type != IR_DT_I64;
    if (narrow)
        util_buf_printf(c->o, "(%s)", reg_type(c, e->type));
    switch (e->u.bin.op) {
    case LOOP_ADD: case LOOP_SUB: case LOOP_MUL: {
        /* wrap-around in uint64_t: no signed overflow */
        const char *op = e->u.bin.op == LOOP_ADD ? "+" : e->u.bin.op == LOOP_SUB ? "-" : "*";
        if (e->type == IR_DT_I64) {
            infix(c, op, a, b);   /* index arithmetic: small by construction */
        } else {
            util_buf_printf(c->o, "(int64_t)((uint64_t)(");
            expr(c, a);
            util_buf_printf(c->o, ") %s (uint64_t)(", op);
            expr(c, b);
            util_buf_printf(c->o, "))");
        }
        return;
    }
    case LOOP_DIV: fn = "dlcc_floordiv"; break;
    case LOOP_TDIV: fn = "dlcc_tdiv"; break;
    case LOOP_MOD: fn = "dlcc_floormod"; break;
    case LOOP_TMOD: fn = "dlcc_tmod"; break;
    case LOOP_MIN: fn = "dlcc_imin"; break;
    case LOOP_MAX: fn = "dlcc_imax"; break;
    case LOOP_SHL: case LOOP_SHR: {
        char tail[16];
        snprintf(tail, sizeof tail, ", %d", int_bits(e->type));
        call2(c, e->u.bin.op == LOOP_SHL ? "dlcc_shl" : "dlcc_shr", a, b, tail);
        return;
    }
    default: fail(c, "unexpected integer operation", NULL); return;
    }
    call2(c, fn, a, b, NULL);
}

static const char *libm_name(LoopIntrinsic fn)
{
    switch (fn) {
    case LOOP_I_round_even: return "rint";
    default: return loop_intrinsic_name(fn);
    }
}

static void call_expr(CE *c, const LoopExpr *e)
{
    LoopIntrinsic fn = e->u.call.fn;
    int single = !c->fixed && e->u.call.args[0]->type == IR_DT_F32;
    if (fn == LOOP_I_bf16pack || fn == LOOP_I_dot2bf) {   /* the CPU's bfloat16 blocks only */
        fail(c, "the bfloat16 word intrinsic is not written as C: ", loop_intrinsic_name(fn));
        return;
    }
    if (fn == LOOP_I_dot4 || fn == LOOP_I_dot2) {   /* acc + four u8 x s8 / two s16 x s16 products, wrapping */
        int four = fn == LOOP_I_dot4;
        const char *pa = four ? "(int32_t)(" : "(int32_t)(int16_t)(", *pb = four ? "(int8_t)(" : "(int16_t)(";
        const char *sfx = four ? " & 255u)" : ")";
        util_buf_printf(c->o, "((int32_t)((uint32_t)(");
        expr(c, e->u.call.args[0]);
        util_buf_printf(c->o, ")");
        for (int j = 0; j < (four ? 4 : 2); j++) {
            util_buf_printf(c->o, " + (uint32_t)(%s((uint32_t)(", pa);
            expr(c, e->u.call.args[1]);
            util_buf_printf(c->o, ") >> %d)%s * %s((uint32_t)(", (four ? 8 : 16) * j, sfx, pb);
            expr(c, e->u.call.args[2]);
            util_buf_printf(c->o, ") >> %d)%s)", (four ? 8 : 16) * j, sfx);
        }
        util_buf_printf(c->o, "))");
        return;
    }
    if (fn == LOOP_I_isnan || fn == LOOP_I_isinf) {
        if (c->fixed) {
            util_buf_printf(c->o, "0");
            return;
        }
        util_buf_printf(c->o, "(%s(", fn == LOOP_I_isnan ? "isnan" : "isinf");
        expr(c, e->u.call.args[0]);
        util_buf_printf(c->o, ") ? 1 : 0)");
        return;
    }
    if (c->fixed && cg_fx_lut_fn(fn)) {           /* a lookup table on the register's bits */
        util_buf_printf(c->o, "dlcc_fx_of_bits<%s>(dlcc_fx_%s(dlcc_fx_bits(%s(", c->reg.s, loop_intrinsic_name(fn), c->reg.s);
        expr(c, e->u.call.args[0]);
        util_buf_printf(c->o, ")), %d))", c->F);
        return;
    }
    if (c->fixed)
        util_buf_printf(c->o, "%s(dlcc_fx_d(", c->reg.s);
    util_buf_printf(c->o, "%s%s(", libm_name(fn), single ? "f" : "");
    for (int i = 0; i < e->u.call.n; i++) {
        if (i)
            util_buf_printf(c->o, ", ");
        if (c->fixed) {
            util_buf_printf(c->o, "(");
            expr(c, e->u.call.args[i]);
            util_buf_printf(c->o, ").to_double()");
        } else {
            expr(c, e->u.call.args[i]);
        }
    }
    util_buf_printf(c->o, ")");
    if (c->fixed)
        util_buf_printf(c->o, "))");
}

static void cast_expr(CE *c, const LoopExpr *e)
{
    IrDType to = e->type, from = e->u.cast.a->type;
    const LoopExpr *a = e->u.cast.a;
    int ff = ir_dtype_is_float(from), tf = ir_dtype_is_float(to);
    if (to == IR_DT_BOOL) {
        util_buf_printf(c->o, "(");
        expr(c, a);
        util_buf_printf(c->o, " != 0)");
    } else if (ff && tf) {
        if (c->fixed) {
            expr(c, a);
        } else {
            util_buf_printf(c->o, "(%s)", reg_type(c, to));
            expr(c, a);
        }
    } else if (tf) {
        if (c->fixed) {
            util_buf_printf(c->o, "%s((int64_t)", c->reg.s);
            expr(c, a);
            util_buf_printf(c->o, ")");
        } else {
            util_buf_printf(c->o, "(%s)", reg_type(c, to));
            expr(c, a);
        }
    } else if (ff) {
        util_buf_printf(c->o, "(%s)", reg_type(c, to));
        if (c->fixed) {                 /* to_int64 truncates toward zero, as C does */
            util_buf_printf(c->o, "(");
            expr(c, a);
            util_buf_printf(c->o, ").to_int64()");
        } else {
            util_buf_printf(c->o, "dlcc_f2i(");
            expr(c, a);
            util_buf_printf(c->o, ")");
        }
    } else {
        util_buf_printf(c->o, "(%s)", reg_type(c, to));
        expr(c, a);
    }
}

static void expr(CE *c, const LoopExpr *e)
{
    if (!e) {
        fail(c, "missing expression", NULL);
        return;
    }
    switch (e->kind) {
    case LOOP_E_INT:
        if (e->type == IR_DT_BOOL)
            util_buf_printf(c->o, "%d", e->u.i != 0);
        else
            print_int(c->o, e->u.i);
        break;
    case LOOP_E_FLOAT:
        if (c->fixed) {
            CgFixed f = { 32, 32 - c->F };
            util_buf_printf(c->o, "%s(", c->reg.s);
            cg_c_float(c->o, cg_fixed_value(f, cg_fixed_quantize(f, e->u.f)), 0);
            util_buf_printf(c->o, ")");
        } else {
            cg_c_float(c->o, e->u.f, e->type != IR_DT_F64);
        }
        break;
    case LOOP_E_VAR:
        if (c->wide && c->wide[e->u.var]) {     /* an accumulator read: saturated to the register */
            util_buf_printf(c->o, "%s(", c->reg.s);
            var_name(c, e->u.var);
            util_buf_printf(c->o, ")");
        } else {
            var_name(c, e->u.var);
        }
        break;
    case LOOP_E_LOAD: {
        int b = e->u.load.buf;
        char name[160];
        cg_c_buf_name(c->p, b, name, sizeof name);
        if (c->p->bufs[cg_c_root(c->p, b)].stream) {     /* an hls::stream: the next element, in order */
            util_buf_printf(c->o, is_fixed_buf(c->t, c->p, b) ? "%s(" : e->type == IR_DT_BOOL ? "(int)" : "",
                            c->reg.s);
            stream_ref(c, b, name, e->u.load.index);
            util_buf_printf(c->o, ".read()%s", is_fixed_buf(c->t, c->p, b) ? ")" : "");
        } else if (is_fixed_buf(c->t, c->p, b)) {
            util_buf_printf(c->o, "%s(%s[", c->reg.s, name);
            expr(c, e->u.load.index);
            util_buf_printf(c->o, "])");
        } else {
            util_buf_printf(c->o, "%s%s[", e->type == IR_DT_BOOL ? "(int)" : "", name);
            expr(c, e->u.load.index);
            util_buf_printf(c->o, "]");
        }
        break;
    }
    case LOOP_E_BIN:
        if (ir_dtype_is_float(e->u.bin.a->type))
            bin_float(c, e);
        else
            bin_int(c, e);
        break;
    case LOOP_E_UN: {
        const LoopExpr *a = e->u.un.a;
        int fl = ir_dtype_is_float(a->type);
        const char *pre = NULL;
        switch (e->u.un.op) {
        case LOOP_NEG: pre = "(-"; break;
        case LOOP_NOT: pre = a->type == IR_DT_BOOL ? "(!" : "(~"; break;
        case LOOP_ABS: pre = fl ? (c->fixed ? "dlcc_fx_abs(" : a->type == IR_DT_F64 ? "fabs(" : "fabsf(")
                                : "dlcc_iabs("; break;
        }
        if (!fl && e->type != IR_DT_I64 && e->type != IR_DT_BOOL)
            util_buf_printf(c->o, "(%s)", reg_type(c, e->type));
        if (fl && c->fixed && e->u.un.op == LOOP_NEG)
            util_buf_printf(c->o, "%s", c->reg.s);     /* -min saturates */
        util_buf_printf(c->o, "%s", pre);
        expr(c, a);
        util_buf_printf(c->o, ")");
        break;
    }
    case LOOP_E_SELECT:
        util_buf_printf(c->o, "(");
        expr(c, e->u.sel.cond);
        util_buf_printf(c->o, " ? ");
        expr(c, e->u.sel.a);
        util_buf_printf(c->o, " : ");
        expr(c, e->u.sel.b);
        util_buf_printf(c->o, ")");
        break;
    case LOOP_E_CALL: call_expr(c, e); break;
    case LOOP_E_CAST: cast_expr(c, e); break;
    }
}

/* --------------------------------------------------------- statements */

static void indent(UtilBuf *o, int n)
{
    for (int i = 0; i < n; i++)
        util_buf_put(o, "    ", 4);
}

static void stmt(CE *c, const LoopStmt *s, int ind, int const_extents);

static void block_items(CE *c, const LoopStmt *s, int ind, int const_extents)
{
    if (s->kind == LOOP_S_BLOCK) {
        for (int i = 0; i < s->u.block.n; i++)
            stmt(c, s->u.block.items[i], ind, const_extents);
    } else {
        stmt(c, s, ind, const_extents);
    }
}

/* A stream, or its lane `index` when it is an array of FIFOs. */
static void stream_ref(CE *c, int b, const char *name, const LoopExpr *index)
{
    util_buf_printf(c->o, "%s", name);
    if (c->p->bufs[cg_c_root(c->p, b)].stream_lanes > 1) {
        util_buf_printf(c->o, "[");
        expr(c, index);
        util_buf_printf(c->o, "]");
    }
}

/* integer types narrower than the int64_t arithmetic */
static int p_is_narrow(IrDType t) { return t != IR_DT_I64 && !ir_dtype_is_float(t); }

static void store_stmt(CE *c, const LoopStmt *s, int ind)
{
    int b = s->u.store.buf;
    char name[160];
    cg_c_buf_name(c->p, b, name, sizeof name);
    indent(c->o, ind);
    if (c->p->bufs[cg_c_root(c->p, b)].stream) {       /* an hls::stream: written in order */
        stream_ref(c, b, name, s->u.store.index);
        util_buf_printf(c->o, ".write(");
        if (!is_fixed_buf(c->t, c->p, b) && p_is_narrow(c->p->bufs[b].dtype))
            util_buf_printf(c->o, "(%s)", cg_c_dtype(c->p->bufs[b].dtype));
        expr(c, s->u.store.value);
        util_buf_printf(c->o, ");\n");
        return;
    }
    util_buf_printf(c->o, "%s[", name);
    expr(c, s->u.store.index);
    util_buf_printf(c->o, "] = ");
    if (is_fixed_buf(c->t, c->p, b)) {         /* the assignment rounds and saturates to the buffer's format */
        expr(c, s->u.store.value);
        util_buf_printf(c->o, ";\n");
    } else {
        if (p_is_narrow(c->p->bufs[b].dtype))
            util_buf_printf(c->o, "(%s)", cg_c_dtype(c->p->bufs[b].dtype));
        expr(c, s->u.store.value);
        util_buf_printf(c->o, ";\n");
    }
}

/* `[const] T var = value;` (decl 1: mutable, 2: const) or `var = value;` (decl 0) */
static void var_line(CE *c, int ind, int decl, int var, const LoopExpr *value)
{
    int wide = c->wide && c->wide[var];
    indent(c->o, ind);
    if (decl)
        util_buf_printf(c->o, "%s%s ", decl == 2 ? "const " : "", wide ? c->acc.s : reg_type(c, c->p->vars[var].type));
    var_name(c, var);
    util_buf_printf(c->o, " = ");
    const LoopExpr *e;
    if (wide && !decl && acc_step(value, var, &e)) {    /* acc = acc + e: exact, wrapping in 48 bits */
        util_buf_printf(c->o, "%s(", c->acc.s);
        var_name(c, var);
        util_buf_printf(c->o, " + ");
        expr(c, e);
        util_buf_printf(c->o, ")");
    } else {
        expr(c, value);
    }
    util_buf_printf(c->o, ";\n");
}

static void stmt(CE *c, const LoopStmt *s, int ind, int const_extents)
{
    if (!s || c->err)
        return;
    switch (s->kind) {
    case LOOP_S_FOR: {
        const LoopExpr *ext = s->u.loop.extent;
        if (const_extents && ext->kind != LOOP_E_INT) {
            fail(c, "a loop has a trip count not known at compile time", NULL);
            return;
        }
        int v = s->u.loop.var;
        indent(c->o, ind);
        util_buf_printf(c->o, "for (int64_t ");
        var_name(c, v);
        util_buf_printf(c->o, " = 0; ");
        var_name(c, v);
        util_buf_printf(c->o, " < ");
        expr(c, ext);
        util_buf_printf(c->o, "; ");
        var_name(c, v);
        util_buf_printf(c->o, "++) {\n");
        if (c->t->loop_pragmas)
            c->t->loop_pragmas(c->t, c->p, c->k, s, c->o, ind + 1);
        block_items(c, s->u.loop.body, ind + 1, const_extents);
        indent(c->o, ind);
        util_buf_printf(c->o, "}\n");
        break;
    }
    case LOOP_S_LET: var_line(c, ind, s->u.let.mutable_ ? 1 : 2, s->u.let.var, s->u.let.value); break;
    case LOOP_S_ASSIGN: var_line(c, ind, 0, s->u.assign.var, s->u.assign.value); break;
    case LOOP_S_STORE: store_stmt(c, s, ind); break;
    case LOOP_S_IF:
        indent(c->o, ind);
        util_buf_printf(c->o, "if (");
        expr(c, s->u.cond.cond);
        util_buf_printf(c->o, ") {\n");
        block_items(c, s->u.cond.then_, ind + 1, const_extents);
        if (s->u.cond.else_) {
            indent(c->o, ind);
            util_buf_printf(c->o, "} else {\n");
            block_items(c, s->u.cond.else_, ind + 1, const_extents);
        }
        indent(c->o, ind);
        util_buf_printf(c->o, "}\n");
        break;
    case LOOP_S_BLOCK:
        indent(c->o, ind);
        util_buf_printf(c->o, "{\n");
        block_items(c, s, ind + 1, const_extents);
        indent(c->o, ind);
        util_buf_printf(c->o, "}\n");
        break;
    case LOOP_S_BARRIER: fail(c, "barriers have no C form", NULL); break;
    case LOOP_S_PREFETCH: break;    /* a hint only: no C form */
    }
}

/* ---------------------------------------------------------- constants */

static void const_array(const CgCTarget *t, const LoopProgram *p, int b, UtilBuf *o, int ind)
{
    const LoopBuf *bf = &p->bufs[b];
    int64_t n = ir_shape_numel(&bf->shape);
    char name[160];
    cg_c_buf_name(p, b, name, sizeof name);
    indent(o, ind);
    if (t->no_values) {
        util_buf_printf(o, "static const %s %s[%lld];\n", cg_c_buf_type(t, p, b).s, name, (long long)(n > 0 ? n : 1));
        return;
    }
    util_buf_printf(o, "static const %s %s[%lld] = {", cg_c_buf_type(t, p, b).s, name, (long long)(n > 0 ? n : 1));
    int fx = is_fixed_buf(t, p, b), fl = ir_dtype_is_float(bf->dtype);
    for (int64_t i = 0; i < n; i++) {
        if (i % 12 == 0) {
            util_buf_printf(o, "\n");
            indent(o, ind + 1);
        }
        if (!bf->data)
            util_buf_printf(o, "0");
        else if (fx)      /* the quantized value, exact as a double literal */
            cg_c_float(o, cg_fixed_value(t->fmt[b], cg_fixed_quantize(t->fmt[b], ir_load_f64(bf->dtype, bf->data, i))), 0);
        else if (fl)
            cg_c_float(o, ir_load_f64(bf->dtype, bf->data, i), bf->dtype != IR_DT_F64);
        else
            print_int(o, ir_load_i64(bf->dtype, bf->data, i));
        util_buf_printf(o, i + 1 < n ? ", " : "");
    }
    if (n <= 0)
        util_buf_printf(o, "0");
    util_buf_printf(o, "\n");
    indent(o, ind);
    util_buf_printf(o, "};\n");
}

void cg_c_emit_shared_consts(const CgCTarget *t, const LoopProgram *p, UtilBuf *out)
{
    int *readers = malloc((size_t)(p->n_bufs ? p->n_bufs : 1) * sizeof *readers);
    if (!readers)
        return;
    cg_c_const_readers(p, readers);
    for (int b = 0; b < p->n_bufs; b++)
        if (readers[b] == -2 && p->bufs[b].alias_of < 0 && !p->bufs[b].offchip)
            const_array(t, p, b, out, 0);
    free(readers);
}

void cg_c_emit_const(const CgCTarget *t, const LoopProgram *p, int b, UtilBuf *out) { const_array(t, p, b, out, 0); }

/* ------------------------------------------------------------ kernels */

static int check_dtypes(CE *c)
{
    for (int b = 0; b < c->p->n_bufs; b++) {
        IrDType t = c->p->bufs[b].dtype;
        if (t == IR_DT_F16 || t == IR_DT_BF16) {
            fail(c, "float16 and bfloat16 tensors are not supported by the C emitter: ", c->p->bufs[b].name);
            return -1;
        }
    }
    return 0;
}

static void params(const CgCTarget *t, const LoopProgram *p, const unsigned char *used, UtilBuf *o, int decl)
{
    int first = 1;
    for (int b = 0; b < p->n_bufs; b++) {
        if (!used[b] || (p->bufs[b].storage == LOOP_ST_CONST && !p->bufs[b].offchip) ||
            p->bufs[b].storage == LOOP_ST_LOCAL)
            continue;                        /* on-chip weights and locals are the kernel's own */
        char name[160];
        cg_c_buf_name(p, b, name, sizeof name);
        if (decl && p->bufs[cg_c_root(p, b)].stream && p->bufs[cg_c_root(p, b)].stream_lanes > 1)
            util_buf_printf(o, "%shls::stream<%s> (&%s)[%d]", first ? "" : ", ", cg_c_buf_type(t, p, b).s, name,
                            p->bufs[cg_c_root(p, b)].stream_lanes);
        else if (decl && p->bufs[cg_c_root(p, b)].stream)
            util_buf_printf(o, "%shls::stream<%s> &%s", first ? "" : ", ", cg_c_buf_type(t, p, b).s, name);
        else if (decl)
            util_buf_printf(o, "%s%s%s %s[%lld]", first ? "" : ", ", used[b] == 1 ? "const " : "",
                            cg_c_buf_type(t, p, b).s, name, (long long)ir_shape_numel(&p->bufs[b].shape));
        else
            util_buf_printf(o, "%s%s", first ? "" : ", ", name);
        first = 0;
    }
    if (first && decl)
        util_buf_printf(o, "void");
}

int cg_c_emit_kernel(const CgCTarget *t, const LoopProgram *p, int k, int const_extents, UtilBuf *out, UtilDiag *d)
{
    CE c = { .t = t, .p = p, .k = k, .F = t->frac ? t->frac[k] : 0, .fixed = t->fmt != NULL, .o = out, .d = d };
    c.reg = cg_c_fixed_type((CgFixed){ 32, 32 - c.F });
    c.acc = cg_c_acc_type(c.F);
    if (c.fixed && !(c.wide = malloc((size_t)p->n_vars + 1)))
        return util_error(d, util_loc_file(NULL), "out of memory");
    if (c.wide)
        cg_c_accumulators(p, k, c.wide);
    if (check_dtypes(&c)) {
        free(c.wide);
        return -1;
    }
    unsigned char *used = malloc((size_t)(p->n_bufs ? p->n_bufs : 1));
    int *readers = malloc((size_t)(p->n_bufs ? p->n_bufs : 1) * sizeof *readers);
    if (!used || !readers) {
        free(used);
        free(readers);
        free(c.wide);
        return util_error(d, util_loc_file(NULL), "out of memory");
    }
    cg_c_kernel_uses(p, k, used);
    cg_c_const_readers(p, readers);
    for (int b = 0; b < p->n_bufs; b++)
        if (used[b] && p->bufs[b].base) {     /* the CPU schedule's layout; the C targets never ask for it */
            free(used);
            free(readers);
            free(c.wide);
            return util_error(d, util_loc_file(NULL), "buffer '%s' has a halo layout, which C output does not "
                              "support", p->bufs[b].name);
        }
    char kname[200];
    cg_c_kernel_name(t, p, k, kname, sizeof kname);
    util_buf_printf(out, "/* kernel %d: %s */\nstatic void %s(", k, p->kernels[k].name, kname);
    params(t, p, used, out, 1);
    util_buf_printf(out, ")\n{\n");
    if (t->kernel_pragmas)
        t->kernel_pragmas(t, p, k, out);
    for (int b = 0; b < p->n_bufs; b++) {
        char name[160];
        if (!used[b])
            continue;
        cg_c_buf_name(p, b, name, sizeof name);
        if (p->bufs[b].storage == LOOP_ST_CONST && readers[b] == k && !p->bufs[b].offchip) {
            const_array(t, p, b, out, 1);
        } else if (p->bufs[b].storage == LOOP_ST_LOCAL) {
            indent(out, 1);
            if (is_fixed_buf(t, p, b)) {     /* an ap_fixed array's default constructor leaves it undefined */
                util_buf_printf(out, "%s %s[%lld];\n", cg_c_buf_type(t, p, b).s, name,
                                (long long)ir_shape_numel(&p->bufs[b].shape));
                if (t->array_pragmas)
                    t->array_pragmas(t, p, b, name, out, 1);
                indent(out, 1);
                util_buf_printf(out, "for (int64_t i = 0; i < %lld; i++) %s[i] = 0;\n",
                                (long long)ir_shape_numel(&p->bufs[b].shape), name);
                continue;
            }
            util_buf_printf(out, "%s %s[%lld] = { 0 };\n", cg_c_buf_type(t, p, b).s, name,
                            (long long)ir_shape_numel(&p->bufs[b].shape));
        } else {
            continue;
        }
        if (t->array_pragmas)
            t->array_pragmas(t, p, b, name, out, 1);
    }
    block_items(&c, p->kernels[k].body, 1, const_extents);
    util_buf_printf(out, "}\n\n");
    free(used);
    free(readers);
    free(c.wide);
    return c.err ? -1 : 0;
}

void cg_c_emit_call(const CgCTarget *t, const LoopProgram *p, int k, UtilBuf *out, int ind)
{
    unsigned char *used = malloc((size_t)(p->n_bufs ? p->n_bufs : 1));
    if (!used)
        return;
    cg_c_kernel_uses(p, k, used);
    char kname[200];
    cg_c_kernel_name(t, p, k, kname, sizeof kname);
    indent(out, ind);
    util_buf_printf(out, "%s(", kname);
    params(t, p, used, out, 0);
    util_buf_printf(out, ");\n");
    free(used);
}
