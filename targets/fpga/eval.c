/* targets/fpga/eval.c — runs a loop program inside dlcc, in double
 * precision or in exactly the fixed-point arithmetic the generated HLS C
 * performs (codegen/c_emit.h), so the report can state each layer's error
 * against float without an FPGA or a C compiler.  Naive tree walking: a
 * test oracle and an estimator, not a fast path. */
#include "targets/fpga/fpga_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- the fixed-point helpers, as the generated C defines them */

static int64_t sat32(int64_t v) { return v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : v; }

static int64_t rshr(int64_t v, int s)
{
    if (s <= 0)
        return v;
    int64_t half = (int64_t)1 << (s - 1);
    return v >= 0 ? (v + half) >> s : -((-v + half) >> s);
}

static int64_t fx_load(int64_t q, int fb, int f)
{
    return sat32(f >= fb ? q * ((int64_t)1 << (f - fb)) : rshr(q, fb - f));
}

static int64_t fx_store(int64_t v, int f, int fb, int w)
{
    int64_t q = fb >= f ? v * ((int64_t)1 << (fb - f)) : rshr(v, f - fb);
    int64_t hi = ((int64_t)1 << (w - 1)) - 1;
    return q > hi ? hi : q < -hi - 1 ? -hi - 1 : q;
}

static double fx_to_d(int64_t a, int f) { return (double)a / (double)((int64_t)1 << f); }

static int64_t fx_from_d(double x, int f)
{
    if (x != x)
        return 0;
    double s = x * (double)((int64_t)1 << f);
    if (s >= 2147483647.0)
        return INT32_MAX;
    if (s <= -2147483648.0)
        return INT32_MIN;
    return (int64_t)(s >= 0 ? floor(s + 0.5) : -floor(-s + 0.5));
}

/* ---- evaluator */

typedef struct V {
    int64_t i;       /* integers, bool, fixed-point registers */
    double f;        /* floats (float mode) */
} V;

typedef struct Ev {
    const LoopProgram *p;
    const CgFixed *fmt;
    int fixed, F;
    V *env;
    double **vals;
    int err;
    /* per buffer, computed once: its storage root, element count, and (fixed
     * point) 2^fb and 2^-fb for its fb fraction bits (exact scalings) */
    int *root;
    int64_t *numel;
    double *up, *down;
} Ev;

static int isf(IrDType t) { return t == IR_DT_F32 || t == IR_DT_F64 || t == IR_DT_F16 || t == IR_DT_BF16; }

static int64_t floordiv(int64_t a, int64_t b)
{
    if (b == 0)
        return 0;
    if (b == -1)
        return (int64_t)(0u - (uint64_t)a);
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

static int64_t floormod(int64_t a, int64_t b)
{
    if (b == 0 || b == -1)
        return 0;
    int64_t r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

static int64_t wrap(IrDType t, int64_t v)
{
    switch (t) {
    case IR_DT_I8: return (int8_t)v;
    case IR_DT_U8: return (uint8_t)v;
    case IR_DT_I16: return (int16_t)v;
    case IR_DT_U16: return (uint16_t)v;
    case IR_DT_I32: return (int32_t)v;
    case IR_DT_U32: return (uint32_t)v;
    case IR_DT_BOOL: return v != 0;
    default: return v;
    }
}

static double fl_round(IrDType t, double v) { return t == IR_DT_F32 ? (double)(float)v : v; }

static V ev(Ev *E, const LoopExpr *e);

static double intrinsic(LoopIntrinsic fn, const double *a)
{
    switch (fn) {
    case LOOP_I_exp: return exp(a[0]);
    case LOOP_I_log: return log(a[0]);
    case LOOP_I_sqrt: return sqrt(a[0]);
    case LOOP_I_tanh: return tanh(a[0]);
    case LOOP_I_erf: return erf(a[0]);
    case LOOP_I_sin: return sin(a[0]);
    case LOOP_I_cos: return cos(a[0]);
    case LOOP_I_tan: return tan(a[0]);
    case LOOP_I_asin: return asin(a[0]);
    case LOOP_I_acos: return acos(a[0]);
    case LOOP_I_atan: return atan(a[0]);
    case LOOP_I_sinh: return sinh(a[0]);
    case LOOP_I_cosh: return cosh(a[0]);
    case LOOP_I_asinh: return asinh(a[0]);
    case LOOP_I_acosh: return acosh(a[0]);
    case LOOP_I_atanh: return atanh(a[0]);
    case LOOP_I_floor: return floor(a[0]);
    case LOOP_I_ceil: return ceil(a[0]);
    case LOOP_I_round_even: return nearbyint(a[0]);
    case LOOP_I_pow: return pow(a[0], a[1]);
    case LOOP_I_fma: return fma(a[0], a[1], a[2]);
    default: return 0;
    }
}

static V bin(Ev *E, const LoopExpr *e)
{
    V a = ev(E, e->u.bin.a), b = ev(E, e->u.bin.b), r = { 0, 0 };
    LoopBinOp op = e->u.bin.op;
    if (isf(e->u.bin.a->type)) {
        if (E->fixed) {
            int64_t x = a.i, y = b.i;
            switch (op) {
            case LOOP_ADD: r.i = sat32(x + y); break;
            case LOOP_SUB: r.i = sat32(x - y); break;
            case LOOP_MUL: r.i = sat32(rshr(x * y, E->F)); break;
            case LOOP_DIV: case LOOP_TDIV:
                r.i = y == 0 ? (x >= 0 ? INT32_MAX : INT32_MIN) : sat32(x * ((int64_t)1 << E->F) / y);
                break;
            case LOOP_MOD: case LOOP_TMOD: r.i = fx_from_d(fmod(fx_to_d(x, E->F), fx_to_d(y, E->F)), E->F); break;
            default: goto integer;         /* min, max, compares: exact on the integers */
            }
            return r;
        }
        double x = a.f, y = b.f;
        switch (op) {
        case LOOP_ADD: r.f = x + y; break;
        case LOOP_SUB: r.f = x - y; break;
        case LOOP_MUL: r.f = x * y; break;
        case LOOP_DIV: case LOOP_TDIV: r.f = x / y; break;
        case LOOP_MOD: case LOOP_TMOD: r.f = fmod(x, y); break;
        case LOOP_MIN: r.f = x != x ? x : y != y ? y : x < y ? x : y; break;
        case LOOP_MAX: r.f = x != x ? x : y != y ? y : x > y ? x : y; break;
        case LOOP_LT: r.i = x < y; break;
        case LOOP_LE: r.i = x <= y; break;
        case LOOP_EQ: r.i = x == y; break;
        case LOOP_NE: r.i = x != y; break;
        default: E->err = 1; break;
        }
        r.f = fl_round(e->type, r.f);
        return r;
    }
integer:;
    int64_t x = a.i, y = b.i;
    switch (op) {
    case LOOP_ADD: r.i = (int64_t)((uint64_t)x + (uint64_t)y); break;
    case LOOP_SUB: r.i = (int64_t)((uint64_t)x - (uint64_t)y); break;
    case LOOP_MUL: r.i = (int64_t)((uint64_t)x * (uint64_t)y); break;
    case LOOP_DIV: r.i = floordiv(x, y); break;
    case LOOP_TDIV: r.i = y == 0 ? 0 : y == -1 ? (int64_t)(0u - (uint64_t)x) : x / y; break;
    case LOOP_MOD: r.i = floormod(x, y); break;
    case LOOP_TMOD: r.i = y == 0 || y == -1 ? 0 : x % y; break;
    case LOOP_MIN: r.i = x < y ? x : y; break;
    case LOOP_MAX: r.i = x > y ? x : y; break;
    case LOOP_LT: r.i = x < y; break;
    case LOOP_LE: r.i = x <= y; break;
    case LOOP_EQ: r.i = x == y; break;
    case LOOP_NE: r.i = x != y; break;
    case LOOP_AND: r.i = e->type == IR_DT_BOOL ? (x && y) : (x & y); break;
    case LOOP_OR: r.i = e->type == IR_DT_BOOL ? (x || y) : (x | y); break;
    case LOOP_XOR: r.i = e->type == IR_DT_BOOL ? (x != y) : (x ^ y); break;
    case LOOP_SHL: {
        int bits = (int)ir_dtype_size(e->type) * 8;
        r.i = y < 0 || y >= bits ? 0 : (int64_t)((uint64_t)x << y);
        break;
    }
    case LOOP_SHR: {
        int bits = (int)ir_dtype_size(e->type) * 8;
        r.i = y < 0 || y >= bits ? (x < 0 ? -1 : 0) : (x < 0 ? ~(~x >> y) : x >> y);
        break;
    }
    }
    if (op < LOOP_LT || op > LOOP_NE)        /* compares give bool */
        r.i = wrap(e->type, r.i);
    return r;
}

static V load(Ev *E, const LoopExpr *e)
{
    int b = E->root[e->u.load.buf];
    int64_t i = ev(E, e->u.load.index).i;
    V r = { 0, 0 };
    if (i < 0 || i >= E->numel[b] || !E->vals[b]) {
        E->err = 1;
        return r;
    }
    double x = E->vals[b][i];
    if (!isf(E->p->bufs[b].dtype))
        r.i = (int64_t)x;
    else if (E->fixed) {
        int fb = E->fmt[b].w - E->fmt[b].i;
        r.i = fx_load((int64_t)(x * E->up[b]), fb, E->F);
    } else
        r.f = x;
    return r;
}

static V ev(Ev *E, const LoopExpr *e)
{
    V r = { 0, 0 };
    switch (e->kind) {
    case LOOP_E_INT: r.i = e->u.i; break;
    case LOOP_E_FLOAT:
        if (E->fixed)
            r.i = cg_fixed_quantize((CgFixed){ 32, 32 - E->F }, e->u.f);
        else
            r.f = e->u.f;
        break;
    case LOOP_E_VAR: r = E->env[e->u.var]; break;
    case LOOP_E_LOAD: r = load(E, e); break;
    case LOOP_E_BIN: r = bin(E, e); break;
    case LOOP_E_UN: {
        V a = ev(E, e->u.un.a);
        int fl = isf(e->u.un.a->type);
        switch (e->u.un.op) {
        case LOOP_NEG:
            if (fl && !E->fixed)
                r.f = -a.f;
            else
                r.i = fl ? sat32(-a.i) : wrap(e->type, (int64_t)(0u - (uint64_t)a.i));
            break;
        case LOOP_NOT: r.i = e->type == IR_DT_BOOL ? !a.i : wrap(e->type, ~a.i); break;
        case LOOP_ABS:
            if (fl && !E->fixed)
                r.f = fabs(a.f);
            else
                r.i = fl ? sat32(a.i < 0 ? -a.i : a.i) : wrap(e->type, a.i < 0 ? (int64_t)(0u - (uint64_t)a.i) : a.i);
            break;
        }
        break;
    }
    case LOOP_E_SELECT: r = ev(E, e->u.sel.cond).i ? ev(E, e->u.sel.a) : ev(E, e->u.sel.b); break;
    case LOOP_E_CALL: {
        double a[3] = { 0, 0, 0 };
        for (int i = 0; i < e->u.call.n && i < 3; i++) {
            V x = ev(E, e->u.call.args[i]);
            a[i] = E->fixed ? fx_to_d(x.i, E->F) : x.f;
        }
        if (e->u.call.fn == LOOP_I_isnan || e->u.call.fn == LOOP_I_isinf) {
            r.i = E->fixed ? 0 : e->u.call.fn == LOOP_I_isnan ? isnan(a[0]) != 0 : isinf(a[0]) != 0;
            break;
        }
        double y = intrinsic(e->u.call.fn, a);
        if (E->fixed)
            r.i = fx_from_d(y, E->F);
        else
            r.f = fl_round(e->type, y);
        break;
    }
    case LOOP_E_CAST: {
        V a = ev(E, e->u.cast.a);
        IrDType to = e->type, from = e->u.cast.a->type;
        if (to == IR_DT_BOOL)
            r.i = isf(from) && !E->fixed ? a.f != 0 : a.i != 0;
        else if (isf(from) && isf(to))
            r = E->fixed ? a : (V){ 0, fl_round(to, a.f) };
        else if (isf(to)) {
            if (E->fixed) {
                int64_t lim = (int64_t)1 << (31 - E->F);
                r.i = a.i >= lim ? INT32_MAX : a.i < -lim ? INT32_MIN : a.i * ((int64_t)1 << E->F);
            } else {
                r.f = fl_round(to, (double)a.i);
            }
        } else if (isf(from)) {
            if (E->fixed)
                r.i = wrap(to, a.i / ((int64_t)1 << E->F));
            else
                r.i = wrap(to, a.f != a.f ? 0 : a.f >= 9.2e18 ? INT64_MAX : a.f <= -9.2e18 ? INT64_MIN : (int64_t)a.f);
        } else {
            r.i = wrap(to, a.i);
        }
        break;
    }
    }
    return r;
}

static void run(Ev *E, const LoopStmt *s)
{
    if (!s || E->err)
        return;
    switch (s->kind) {
    case LOOP_S_FOR: {
        int64_t n = ev(E, s->u.loop.extent).i;
        for (int64_t i = 0; i < n && !E->err; i++) {
            E->env[s->u.loop.var] = (V){ i, 0 };
            run(E, s->u.loop.body);
        }
        break;
    }
    case LOOP_S_LET: E->env[s->u.let.var] = ev(E, s->u.let.value); break;
    case LOOP_S_ASSIGN: E->env[s->u.assign.var] = ev(E, s->u.assign.value); break;
    case LOOP_S_STORE: {
        int b = E->root[s->u.store.buf];
        int64_t i = ev(E, s->u.store.index).i;
        V v = ev(E, s->u.store.value);
        if (i < 0 || i >= E->numel[b] || !E->vals[b]) {
            E->err = 1;
            break;
        }
        IrDType t = E->p->bufs[b].dtype;
        if (!isf(t)) {
            E->vals[b][i] = (double)wrap(t, v.i);
        } else if (E->fixed) {
            CgFixed f = E->fmt[b];
            int fb = f.w - f.i;
            E->vals[b][i] = (double)fx_store(v.i, E->F, fb, f.w) * E->down[b];
        } else {
            E->vals[b][i] = fl_round(t, v.f);
        }
        break;
    }
    case LOOP_S_IF:
        if (ev(E, s->u.cond.cond).i)
            run(E, s->u.cond.then_);
        else
            run(E, s->u.cond.else_);
        break;
    case LOOP_S_BLOCK:
        for (int i = 0; i < s->u.block.n && !E->err; i++)
            run(E, s->u.block.items[i]);
        break;
    case LOOP_S_BARRIER: case LOOP_S_PREFETCH: break;
    }
}

int tgt_fpga_eval(const LoopProgram *p, const CgFixed *fmt, const int *frac, const IrArray *inputs, double **vals,
                  UtilDiag *d)
{
    Ev E = { .p = p, .fmt = fmt, .fixed = fmt != NULL, .vals = vals };
    size_t nb = (size_t)p->n_bufs + 1;
    E.env = calloc((size_t)p->n_vars + 1, sizeof *E.env);
    E.root = malloc(nb * sizeof *E.root);
    E.numel = malloc(nb * sizeof *E.numel);
    E.up = malloc(nb * sizeof *E.up);
    E.down = malloc(nb * sizeof *E.down);
    int rc = -1;
    if (!E.env || !E.root || !E.numel || !E.up || !E.down) {
        util_error(d, util_loc_file(NULL), "out of memory");
        goto done;
    }
    for (int b = 0; b < p->n_bufs; b++) {
        const LoopBuf *bf = &p->bufs[b];
        E.root[b] = cg_c_root(p, b);
        E.numel[b] = ir_shape_numel(&bf->shape);
        int fb = fmt && fmt[b].w ? fmt[b].w - fmt[b].i : 0;
        E.up[b] = ldexp(1, fb);
        E.down[b] = ldexp(1, -fb);
        if (bf->alias_of >= 0)
            continue;
        int64_t n = E.numel[b];
        vals[b] = calloc((size_t)(n > 0 ? n : 1), sizeof **vals);
        if (!vals[b]) {
            util_error(d, util_loc_file(NULL), "out of memory");
            goto done;
        }
        const void *src = bf->storage == LOOP_ST_CONST ? bf->data
                        : bf->storage == LOOP_ST_INPUT ? inputs[bf->index].data : NULL;
        for (int64_t i = 0; src && i < n; i++) {
            if (!isf(bf->dtype)) {
                vals[b][i] = (double)ir_load_i64(bf->dtype, src, i);
            } else {
                double x = ir_load_f64(bf->dtype, src, i);
                vals[b][i] = E.fixed && fmt[b].w ? cg_fixed_value(fmt[b], cg_fixed_quantize(fmt[b], x)) : x;
            }
        }
    }
    for (int k = 0; k < p->n_kernels && !E.err; k++) {
        E.F = frac ? frac[k] : 0;
        run(&E, p->kernels[k].body);
    }
    if (E.err)
        util_error(d, util_loc_file(NULL), "internal error: the loop program reads or writes out of bounds in "
                   "evaluation");
    else
        rc = 0;
done:
    free(E.env);
    free(E.root);
    free(E.numel);
    free(E.up);
    free(E.down);
    return rc;
}
