/* targets/fpga/eval.c — runs a loop program inside dlcc, in double
 * precision or in exactly the fixed-point arithmetic the generated HLS C
 * performs (codegen/c_emit.h), so the report can state each layer's error
 * against float without an FPGA or a C compiler.  A test oracle and an
 * estimator: each kernel is first translated into a flat register code (one
 * instruction per operator; variables and constants are slots, so leaves
 * cost nothing; loops and guarded selects are jumps), which is then
 * interpreted: several times faster than walking the trees. */
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

/* ---- arithmetic, as the generated code does it */

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

/* ---- register code
 *
 * Slots: the program's variables (ids 0 .. n_vars-1), then this kernel's
 * constants, then one temporary per operator.  A slot holds an integer, a
 * fixed-point register (both .i) or, in float mode, a float value (.f). */

typedef union Slot {
    int64_t i;
    double f;
} Slot;

typedef enum Op {
    /* integers, then wrapped to the result type t when w */
    OP_IADD, OP_ISUB, OP_IMUL, OP_IDIV, OP_ITDIV, OP_IMOD, OP_ITMOD, OP_IMIN, OP_IMAX,
    OP_ILT, OP_ILE, OP_IEQ, OP_INE, OP_LAND, OP_LOR, OP_LXOR, OP_BAND, OP_BOR, OP_BXOR, OP_SHL, OP_SHR,
    OP_INEG, OP_NOT, OP_BNOT, OP_IABS,
    /* float mode, rounded to float when t is F32 */
    OP_FADD, OP_FSUB, OP_FMUL, OP_FDIV, OP_FMOD, OP_FMIN, OP_FMAX, OP_FLT, OP_FLE, OP_FEQ, OP_FNE, OP_FNEG,
    OP_FABS,
    /* fixed-point registers: E->F fraction bits, saturated to 32 bits */
    OP_XADD, OP_XSUB, OP_XMUL, OP_XDIV, OP_XMOD, OP_XNEG, OP_XABS,
    OP_ACC,           /* dst += a, wrapping in 48 bits (an accumulator, fixed mode) */
    OP_SAT,           /* dst = a saturated to the register (an accumulator read) */
    OP_LOAD, OP_STORE, OP_CALL, OP_CAST, OP_MOV, OP_ERR,
    OP_JZ,            /* if !a goto b */
    OP_JMP,           /* goto b */
    OP_LOOP,          /* dst = 0; if dst >= a goto b */
    OP_NEXT,          /* if ++dst < a goto b */
} Op;

/* CAST kinds (Ins.aux) */
enum { CAST_BOOL_F, CAST_BOOL_I, CAST_FF, CAST_IF, CAST_FI, CAST_II };

typedef struct Ins {
    unsigned char op, w;
    IrDType t, t2;    /* result type; CAST: the source type */
    int dst, a, b, c, aux;   /* aux: LOAD / STORE root buffer, CALL intrinsic, CAST kind */
    const void *site;        /* LOAD: its LoopExpr, STORE: its LoopStmt (for tracing) */
} Ins;

typedef struct Code {
    Ins *ins;
    int n, cap;
    Slot *init;       /* constants' values, by slot */
    int n_slots, cap_slots;
    int err;
} Code;

typedef struct Ev {
    const LoopProgram *p;
    const CgFixed *fmt;
    int fixed, F;
    double **vals;
    int err;
    /* per buffer, computed once: its storage root, element count, whether it
     * holds floats, and (fixed point) its fraction bits and 2^fb, 2^-fb */
    int *root, *fb;
    unsigned char *isf;
    int64_t *numel;
    double *up, *down;
    int64_t *lut[LOOP_I_COUNT];   /* fixed mode: the tables of exp, tanh, erf (cg_fx_lut) */
    unsigned char *wide;          /* fixed mode: the current kernel's accumulators (cg_c_accumulators) */
    /* tracing (tgt_fpga_eval_trace): every load and store of a root buffer
     * b with watch[b] is reported to on(ctx, kernel, b, index, store) */
    const unsigned char *watch;
    TgtFpgaTraceFn on;
    void *ctx;
    int k;
    int64_t **wpos, **rpos;       /* streams (LoopBuf.stream): per lane, the next element to write, to read */
} Ev;

/* A stream's element k of lane l lives at l * (numel / lanes) + k; the
 * access's index is its lane (docs/targets/fpga.md, "Streams"). */
static int64_t fifo_slot(const Ev *E, int b, int64_t lane, int64_t **pos)
{
    int64_t L = E->p->bufs[b].stream_lanes > 1 ? E->p->bufs[b].stream_lanes : 1;
    if (lane < 0 || lane >= L || !pos[b])
        return -1;
    return lane * (E->numel[b] / L) + pos[b][lane]++;
}

static int emit(Code *C, Ins in)
{
    if (C->n == C->cap) {
        int nc = C->cap ? 2 * C->cap : 256;
        Ins *q = realloc(C->ins, (size_t)nc * sizeof *q);
        if (!q) {
            C->err = 1;
            return -1;
        }
        C->ins = q;
        C->cap = nc;
    }
    C->ins[C->n] = in;
    return C->n++;
}

static int slot(Code *C, Slot v)
{
    if (C->n_slots == C->cap_slots) {
        int nc = C->cap_slots ? 2 * C->cap_slots : 256;
        Slot *q = realloc(C->init, (size_t)nc * sizeof *q);
        if (!q) {
            C->err = 1;
            return 0;
        }
        C->init = q;
        C->cap_slots = nc;
    }
    C->init[C->n_slots] = v;
    return C->n_slots++;
}

static int temp(Code *C) { return slot(C, (Slot){ .i = 0 }); }

static int op_int(LoopBinOp op, IrDType t)
{
    int b = t == IR_DT_BOOL;
    switch (op) {
    case LOOP_ADD: return OP_IADD;
    case LOOP_SUB: return OP_ISUB;
    case LOOP_MUL: return OP_IMUL;
    case LOOP_DIV: return OP_IDIV;
    case LOOP_TDIV: return OP_ITDIV;
    case LOOP_MOD: return OP_IMOD;
    case LOOP_TMOD: return OP_ITMOD;
    case LOOP_MIN: return OP_IMIN;
    case LOOP_MAX: return OP_IMAX;
    case LOOP_LT: return OP_ILT;
    case LOOP_LE: return OP_ILE;
    case LOOP_EQ: return OP_IEQ;
    case LOOP_NE: return OP_INE;
    case LOOP_AND: return b ? OP_LAND : OP_BAND;
    case LOOP_OR: return b ? OP_LOR : OP_BOR;
    case LOOP_XOR: return b ? OP_LXOR : OP_BXOR;
    case LOOP_SHL: return OP_SHL;
    case LOOP_SHR: return OP_SHR;
    }
    return OP_ERR;
}

static int op_float(LoopBinOp op)
{
    switch (op) {
    case LOOP_ADD: return OP_FADD;
    case LOOP_SUB: return OP_FSUB;
    case LOOP_MUL: return OP_FMUL;
    case LOOP_DIV: case LOOP_TDIV: return OP_FDIV;
    case LOOP_MOD: case LOOP_TMOD: return OP_FMOD;
    case LOOP_MIN: return OP_FMIN;
    case LOOP_MAX: return OP_FMAX;
    case LOOP_LT: return OP_FLT;
    case LOOP_LE: return OP_FLE;
    case LOOP_EQ: return OP_FEQ;
    case LOOP_NE: return OP_FNE;
    default: return OP_ERR;
    }
}

static int op_fixed(LoopBinOp op)
{
    switch (op) {
    case LOOP_ADD: return OP_XADD;
    case LOOP_SUB: return OP_XSUB;
    case LOOP_MUL: return OP_XMUL;
    case LOOP_DIV: case LOOP_TDIV: return OP_XDIV;
    case LOOP_MOD: case LOOP_TMOD: return OP_XMOD;
    default: return -1;                  /* min, max, compares: exact on the integers */
    }
}

/* The slot holding e's value, after the instructions computing it. */
static int comp(Ev *E, Code *C, const LoopExpr *e)
{
    int fl, d;
    switch (e->kind) {
    case LOOP_E_INT: return slot(C, (Slot){ .i = e->u.i });
    case LOOP_E_FLOAT:
        if (E->fixed)
            return slot(C, (Slot){ .i = cg_fixed_quantize((CgFixed){ 32, 32 - E->F }, e->u.f) });
        return slot(C, (Slot){ .f = e->u.f });
    case LOOP_E_VAR:
        if (E->wide && E->wide[e->u.var]) {        /* an accumulator read: saturated to the register */
            d = temp(C);
            emit(C, (Ins){ .op = OP_SAT, .dst = d, .a = e->u.var });
            return d;
        }
        return e->u.var;
    case LOOP_E_LOAD: {
        int a = comp(E, C, e->u.load.index);
        d = temp(C);
        emit(C, (Ins){ .op = OP_LOAD, .dst = d, .a = a, .aux = E->root[e->u.load.buf], .site = e });
        return d;
    }
    case LOOP_E_BIN: {
        int a = comp(E, C, e->u.bin.a), b = comp(E, C, e->u.bin.b), op;
        fl = isf(e->u.bin.a->type);
        if (fl && E->fixed)
            op = op_fixed(e->u.bin.op) >= 0 ? op_fixed(e->u.bin.op) : op_int(e->u.bin.op, e->type);
        else
            op = fl ? op_float(e->u.bin.op) : op_int(e->u.bin.op, e->type);
        int cmp = e->u.bin.op >= LOOP_LT && e->u.bin.op <= LOOP_NE;
        d = temp(C);
        emit(C, (Ins){ .op = (unsigned char)op, .w = !fl && !cmp && e->type != IR_DT_I64, .t = e->type, .dst = d,
                       .a = a, .b = b });
        return d;
    }
    case LOOP_E_UN: {
        int a = comp(E, C, e->u.un.a), op = OP_ERR;
        fl = isf(e->u.un.a->type);
        switch (e->u.un.op) {
        case LOOP_NEG: op = fl ? (E->fixed ? OP_XNEG : OP_FNEG) : OP_INEG; break;
        case LOOP_NOT: op = e->type == IR_DT_BOOL ? OP_NOT : OP_BNOT; break;
        case LOOP_ABS: op = fl ? (E->fixed ? OP_XABS : OP_FABS) : OP_IABS; break;
        }
        d = temp(C);
        emit(C, (Ins){ .op = (unsigned char)op, .w = !fl, .t = e->type, .dst = d, .a = a });
        return d;
    }
    case LOOP_E_SELECT: {            /* only the branch taken is evaluated: a guarded load */
        d = temp(C);
        int c = comp(E, C, e->u.sel.cond);
        int jz = emit(C, (Ins){ .op = OP_JZ, .a = c });
        emit(C, (Ins){ .op = OP_MOV, .dst = d, .a = comp(E, C, e->u.sel.a) });
        int jmp = emit(C, (Ins){ .op = OP_JMP });
        if (jz >= 0)
            C->ins[jz].b = C->n;
        emit(C, (Ins){ .op = OP_MOV, .dst = d, .a = comp(E, C, e->u.sel.b) });
        if (jmp >= 0)
            C->ins[jmp].b = C->n;
        return d;
    }
    case LOOP_E_CALL: {
        int a[3] = { 0, 0, 0 };
        for (int i = 0; i < e->u.call.n && i < 3; i++)
            a[i] = comp(E, C, e->u.call.args[i]);
        d = temp(C);
        emit(C, (Ins){ .op = OP_CALL, .t = e->type, .dst = d, .a = a[0], .b = a[1], .c = a[2], .aux = (int)e->u.call.fn });
        return d;
    }
    case LOOP_E_CAST: {
        int a = comp(E, C, e->u.cast.a), k;
        IrDType to = e->type, from = e->u.cast.a->type;
        if (to == IR_DT_BOOL)
            k = isf(from) && !E->fixed ? CAST_BOOL_F : CAST_BOOL_I;
        else if (isf(from) && isf(to))
            k = CAST_FF;
        else if (isf(to))
            k = CAST_IF;
        else if (isf(from))
            k = CAST_FI;
        else
            k = CAST_II;
        d = temp(C);
        emit(C, (Ins){ .op = OP_CAST, .t = to, .t2 = from, .dst = d, .a = a, .aux = k });
        return d;
    }
    }
    return temp(C);
}

/* var = e: the value computed straight into var's slot where it can be. */
static void comp_into(Ev *E, Code *C, int var, const LoopExpr *e)
{
    int n0 = C->n, s = comp(E, C, e);
    if (e->kind != LOOP_E_SELECT && C->n > n0 && C->ins[C->n - 1].dst == s && s >= E->p->n_vars)
        C->ins[C->n - 1].dst = var;
    else
        emit(C, (Ins){ .op = OP_MOV, .dst = var, .a = s });
}

static void comp_stmt(Ev *E, Code *C, const LoopStmt *s)
{
    if (!s)
        return;
    switch (s->kind) {
    case LOOP_S_FOR: {
        int ext = comp(E, C, s->u.loop.extent), var = s->u.loop.var;
        int head = emit(C, (Ins){ .op = OP_LOOP, .dst = var, .a = ext });
        comp_stmt(E, C, s->u.loop.body);
        emit(C, (Ins){ .op = OP_NEXT, .dst = var, .a = ext, .b = head + 1 });
        if (head >= 0)
            C->ins[head].b = C->n;
        break;
    }
    case LOOP_S_LET: comp_into(E, C, s->u.let.var, s->u.let.value); break;
    case LOOP_S_ASSIGN: {
        const LoopExpr *e;
        if (E->wide && E->wide[s->u.assign.var] && cg_c_accumulation(s->u.assign.value, s->u.assign.var, &e)) {
            emit(C, (Ins){ .op = OP_ACC, .dst = s->u.assign.var, .a = comp(E, C, e) });
            break;
        }
        comp_into(E, C, s->u.assign.var, s->u.assign.value);
        break;
    }
    case LOOP_S_STORE: {
        int i = comp(E, C, s->u.store.index), v = comp(E, C, s->u.store.value);
        emit(C, (Ins){ .op = OP_STORE, .a = i, .b = v, .aux = E->root[s->u.store.buf], .site = s });
        break;
    }
    case LOOP_S_IF: {
        int c = comp(E, C, s->u.cond.cond);
        int jz = emit(C, (Ins){ .op = OP_JZ, .a = c });
        comp_stmt(E, C, s->u.cond.then_);
        int jmp = s->u.cond.else_ ? emit(C, (Ins){ .op = OP_JMP }) : -1;
        if (jz >= 0)
            C->ins[jz].b = C->n;
        if (s->u.cond.else_) {
            comp_stmt(E, C, s->u.cond.else_);
            if (jmp >= 0)
                C->ins[jmp].b = C->n;
        }
        break;
    }
    case LOOP_S_BLOCK:
        for (int i = 0; i < s->u.block.n; i++)
            comp_stmt(E, C, s->u.block.items[i]);
        break;
    case LOOP_S_BARRIER: case LOOP_S_PREFETCH: break;
    }
}

#define IW(expr)                                                   \
    do {                                                           \
        int64_t r_ = (expr);                                       \
        s[in->dst].i = in->w ? wrap(in->t, r_) : r_;               \
    } while (0)
#define FR(expr) (s[in->dst].f = fl_round(in->t, (expr)))

/* ---- the lookup-table functions of fixed mode, as NAME.cpp's dlcc_fx_exp /
 * dlcc_fx_tanh / dlcc_fx_erf compute them (codegen/c_emit.c) */

static int64_t lut_interp(const int64_t *tab, int64_t last, int64_t a, int f)
{
    int s = f - 6;
    int64_t j = s >= 0 ? a >> s : a << -s, rem = s > 0 ? a & (((int64_t)1 << s) - 1) : 0;
    if (j >= last)
        return tab[last];
    return tab[j] + rshr((tab[j + 1] - tab[j]) * rem, s);
}

static int64_t lut_eval(const int64_t *tab, LoopIntrinsic fn, int64_t x, int f)
{
    int64_t last = cg_fx_lut_last(fn);
    if (fn != LOOP_I_exp) {                  /* odd: tanh, erf */
        int64_t y = rshr(lut_interp(tab, last, x < 0 ? -x : x, f), 30 - f);
        return x < 0 ? -y : y;
    }
    int64_t t = rshr(x * CG_FX_LOG2E, 30);
    int64_t n = t >= 0 ? t >> f : -((-t + ((int64_t)1 << f) - 1) >> f);
    int64_t v = lut_interp(tab, last, t - n * ((int64_t)1 << f), f), sh = n + f - 30;
    if (sh >= 32)
        return INT32_MAX;
    return sat32(sh >= 0 ? v << sh : -sh >= 62 ? 0 : rshr(v, (int)-sh));
}

static double arg_d(const Ev *E, Slot x) { return E->fixed ? fx_to_d(x.i, E->F) : x.f; }

static void call(const Ev *E, const Ins *in, Slot *s)
{
    LoopIntrinsic fn = (LoopIntrinsic)in->aux;
    if (fn == LOOP_I_bf16pack) {                  /* two float32 rounded to bfloat16 halves of a word */
        uint32_t h[2];
        for (int j = 0; j < 2; j++) {
            float f = (float)arg_d(E, s[j ? in->b : in->a]);
            uint32_t b;
            memcpy(&b, &f, sizeof b);
            h[j] = f != f ? (b >> 16) | 0x40 : (b + 0x7fff + ((b >> 16) & 1)) >> 16;
        }
        s[in->dst].i = (int32_t)(h[0] | h[1] << 16);
        return;
    }
    if (fn == LOOP_I_dot2bf) {                    /* acc + hi(a) hi(b), then + lo(a) lo(b), in float32 */
        uint32_t x = (uint32_t)s[in->b].i, w = (uint32_t)s[in->c].i, v[4] = { x & 0xffff0000u, w & 0xffff0000u,
                                                                            x << 16, w << 16 };
        float f[4];
        memcpy(f, v, sizeof f);
        float r = (float)arg_d(E, s[in->a]);
        r = r + f[0] * f[1];
        r = r + f[2] * f[3];
        if (E->fixed)
            s[in->dst].i = fx_from_d(r, E->F);
        else
            s[in->dst].f = fl_round(in->t, r);
        return;
    }
    if (fn == LOOP_I_dot4) {                      /* integer words (docs/loop-ir.md) */
        uint32_t x = (uint32_t)s[in->b].i, w = (uint32_t)s[in->c].i, acc = (uint32_t)s[in->a].i;
        for (int j = 0; j < 4; j++)
            acc += (uint32_t)((int32_t)((x >> 8 * j) & 255) * (int8_t)((w >> 8 * j) & 255));
        s[in->dst].i = (int32_t)acc;
        return;
    }
    if (fn == LOOP_I_dot2) {                      /* signed 16-bit halves (docs/loop-ir.md) */
        uint32_t x = (uint32_t)s[in->b].i, w = (uint32_t)s[in->c].i, acc = (uint32_t)s[in->a].i;
        for (int j = 0; j < 2; j++)
            acc += (uint32_t)((int32_t)(int16_t)(x >> 16 * j) * (int16_t)(w >> 16 * j));
        s[in->dst].i = (int32_t)acc;
        return;
    }
    double a[3] = { arg_d(E, s[in->a]), arg_d(E, s[in->b]), arg_d(E, s[in->c]) };
    if (fn == LOOP_I_isnan || fn == LOOP_I_isinf) {
        s[in->dst].i = E->fixed ? 0 : fn == LOOP_I_isnan ? isnan(a[0]) != 0 : isinf(a[0]) != 0;
        return;
    }
    if (E->fixed && E->lut[fn]) {
        s[in->dst].i = lut_eval(E->lut[fn], fn, s[in->a].i, E->F);
        return;
    }
    double y = intrinsic(fn, a);
    if (E->fixed)
        s[in->dst].i = fx_from_d(y, E->F);
    else
        s[in->dst].f = fl_round(in->t, y);
}

static void cast(const Ev *E, const Ins *in, Slot *s)
{
    Slot a = s[in->a], r = { .i = 0 };
    switch (in->aux) {
    case CAST_BOOL_F: r.i = a.f != 0; break;
    case CAST_BOOL_I: r.i = a.i != 0; break;
    case CAST_FF: r = E->fixed ? a : (Slot){ .f = fl_round(in->t, a.f) }; break;
    case CAST_IF:
        if (E->fixed) {
            int64_t lim = (int64_t)1 << (31 - E->F);
            r.i = a.i >= lim ? INT32_MAX : a.i < -lim ? INT32_MIN : a.i * ((int64_t)1 << E->F);
        } else {
            r.f = fl_round(in->t, (double)a.i);
        }
        break;
    case CAST_FI:
        if (E->fixed)
            r.i = wrap(in->t, a.i / ((int64_t)1 << E->F));
        else
            r.i = wrap(in->t, a.f != a.f ? 0 : a.f >= 9.2e18 ? INT64_MAX : a.f <= -9.2e18 ? INT64_MIN : (int64_t)a.f);
        break;
    default: r.i = wrap(in->t, a.i); break;
    }
    s[in->dst] = r;
}

/* Runs code over slots s; sets E->err on an out-of-bounds access. */
static void exec(Ev *E, const Code *C, Slot *s)
{
    const Ins *code = C->ins;
    const int F = E->F;
    for (int pc = 0; pc < C->n; pc++) {
        const Ins *in = &code[pc];
        int64_t x = s[in->a].i, y = s[in->b].i;
        switch ((Op)in->op) {
        case OP_IADD: IW((int64_t)((uint64_t)x + (uint64_t)y)); break;
        case OP_ISUB: IW((int64_t)((uint64_t)x - (uint64_t)y)); break;
        case OP_IMUL: IW((int64_t)((uint64_t)x * (uint64_t)y)); break;
        case OP_IDIV: IW(floordiv(x, y)); break;
        case OP_ITDIV: IW(y == 0 ? 0 : y == -1 ? (int64_t)(0u - (uint64_t)x) : x / y); break;
        case OP_IMOD: IW(floormod(x, y)); break;
        case OP_ITMOD: IW(y == 0 || y == -1 ? 0 : x % y); break;
        case OP_IMIN: IW(x < y ? x : y); break;
        case OP_IMAX: IW(x > y ? x : y); break;
        case OP_ILT: s[in->dst].i = x < y; break;
        case OP_ILE: s[in->dst].i = x <= y; break;
        case OP_IEQ: s[in->dst].i = x == y; break;
        case OP_INE: s[in->dst].i = x != y; break;
        case OP_LAND: IW(x && y); break;
        case OP_LOR: IW(x || y); break;
        case OP_LXOR: IW(x != y); break;
        case OP_BAND: IW(x & y); break;
        case OP_BOR: IW(x | y); break;
        case OP_BXOR: IW(x ^ y); break;
        case OP_SHL: {
            int bits = (int)ir_dtype_size(in->t) * 8;
            IW(y < 0 || y >= bits ? 0 : (int64_t)((uint64_t)x << y));
            break;
        }
        case OP_SHR: {
            int bits = (int)ir_dtype_size(in->t) * 8;
            IW(y < 0 || y >= bits ? (x < 0 ? -1 : 0) : (x < 0 ? ~(~x >> y) : x >> y));
            break;
        }
        case OP_INEG: IW((int64_t)(0u - (uint64_t)x)); break;
        case OP_NOT: s[in->dst].i = !x; break;
        case OP_BNOT: IW(~x); break;
        case OP_IABS: IW(x < 0 ? (int64_t)(0u - (uint64_t)x) : x); break;
        case OP_FADD: FR(s[in->a].f + s[in->b].f); break;
        case OP_FSUB: FR(s[in->a].f - s[in->b].f); break;
        case OP_FMUL: FR(s[in->a].f * s[in->b].f); break;
        case OP_FDIV: FR(s[in->a].f / s[in->b].f); break;
        case OP_FMOD: FR(fmod(s[in->a].f, s[in->b].f)); break;
        case OP_FMIN: {
            double a = s[in->a].f, b = s[in->b].f;
            FR(a != a ? a : b != b ? b : a < b ? a : b);
            break;
        }
        case OP_FMAX: {
            double a = s[in->a].f, b = s[in->b].f;
            FR(a != a ? a : b != b ? b : a > b ? a : b);
            break;
        }
        case OP_FLT: s[in->dst].i = s[in->a].f < s[in->b].f; break;
        case OP_FLE: s[in->dst].i = s[in->a].f <= s[in->b].f; break;
        case OP_FEQ: s[in->dst].i = s[in->a].f == s[in->b].f; break;
        case OP_FNE: s[in->dst].i = s[in->a].f != s[in->b].f; break;
        case OP_FNEG: s[in->dst].f = -s[in->a].f; break;
        case OP_FABS: s[in->dst].f = fabs(s[in->a].f); break;
        case OP_XADD: s[in->dst].i = sat32(x + y); break;
        case OP_XSUB: s[in->dst].i = sat32(x - y); break;
        case OP_XMUL: s[in->dst].i = sat32(rshr(x * y, F)); break;
        case OP_XDIV: s[in->dst].i = y == 0 ? (x >= 0 ? INT32_MAX : INT32_MIN) : sat32(x * ((int64_t)1 << F) / y); break;
        case OP_XMOD: s[in->dst].i = fx_from_d(fmod(fx_to_d(x, F), fx_to_d(y, F)), F); break;
        case OP_XNEG: s[in->dst].i = sat32(-x); break;
        case OP_XABS: s[in->dst].i = sat32(x < 0 ? -x : x); break;
        case OP_ACC: s[in->dst].i = (int64_t)((uint64_t)(s[in->dst].i + x) << 16) >> 16; break;
        case OP_SAT: s[in->dst].i = sat32(x); break;
        case OP_LOAD: {
            int b = in->aux;
            if (E->p->bufs[b].stream)
                x = fifo_slot(E, b, x, E->rpos);   /* a FIFO: read in order */
            if (x < 0 || x >= E->numel[b] || !E->vals[b]) {
                E->err = 1;
                return;
            }
            if (E->watch && E->watch[b])
                E->on(E->ctx, E->k, b, x, 0, in->site, (const int64_t *)s);
            double v = E->vals[b][x];
            if (!E->isf[b])
                s[in->dst].i = (int64_t)v;
            else if (E->fixed)
                s[in->dst].i = fx_load((int64_t)(v * E->up[b]), E->fb[b], F);
            else
                s[in->dst].f = v;
            break;
        }
        case OP_STORE: {
            int b = in->aux;
            if (E->p->bufs[b].stream)
                x = fifo_slot(E, b, x, E->wpos);   /* a FIFO: written in order */
            if (x < 0 || x >= E->numel[b] || !E->vals[b]) {
                E->err = 1;
                return;
            }
            if (E->watch && E->watch[b])
                E->on(E->ctx, E->k, b, x, 1, in->site, (const int64_t *)s);
            IrDType t = E->p->bufs[b].dtype;
            if (!E->isf[b]) {
                E->vals[b][x] = (double)wrap(t, y);
            } else if (E->fixed) {
                CgFixed f = E->fmt[b];
                E->vals[b][x] = (double)fx_store(y, F, E->fb[b], f.w) * E->down[b];
            } else {
                E->vals[b][x] = fl_round(t, s[in->b].f);
            }
            break;
        }
        case OP_CALL: call(E, in, s); break;
        case OP_CAST: cast(E, in, s); break;
        case OP_MOV: s[in->dst] = s[in->a]; break;
        case OP_ERR: E->err = 1; return;
        case OP_JZ:
            if (!x)
                pc = in->b - 1;
            break;
        case OP_JMP: pc = in->b - 1; break;
        case OP_LOOP:
            s[in->dst].i = 0;
            if (0 >= x)
                pc = in->b - 1;
            break;
        case OP_NEXT:
            if (++s[in->dst].i < x)
                pc = in->b - 1;
            break;
        }
    }
}

/* One kernel: translated, then run over slots whose variables persist in env. */
static int run_kernel(Ev *E, int k, Slot *env)
{
    const LoopStmt *body = E->p->kernels[k].body;
    if (E->wide)
        cg_c_accumulators(E->p, k, E->wide);
    Code C = { 0 };
    for (int v = 0; v < E->p->n_vars; v++)
        slot(&C, env[v]);
    comp_stmt(E, &C, body);
    if (C.err) {
        free(C.ins);
        free(C.init);
        return -1;
    }
    exec(E, &C, C.init);
    memcpy(env, C.init, (size_t)E->p->n_vars * sizeof *env);
    free(C.ins);
    free(C.init);
    return 0;
}

static int eval_run(const LoopProgram *p, const CgFixed *fmt, const int *frac, const IrArray *inputs, double **vals,
                    const unsigned char *watch, TgtFpgaTraceFn on, void *ctx, UtilDiag *d)
{
    Ev E = { .p = p, .fmt = fmt, .fixed = fmt != NULL, .vals = vals, .watch = watch, .on = on, .ctx = ctx };
    size_t nb = (size_t)p->n_bufs + 1;
    Slot *env = calloc((size_t)p->n_vars + 1, sizeof *env);
    E.root = malloc(nb * sizeof *E.root);
    E.fb = malloc(nb * sizeof *E.fb);
    E.isf = malloc(nb);
    E.numel = malloc(nb * sizeof *E.numel);
    E.up = malloc(nb * sizeof *E.up);
    E.down = malloc(nb * sizeof *E.down);
    E.wpos = calloc(nb, sizeof *E.wpos);
    E.rpos = calloc(nb, sizeof *E.rpos);
    int rc = -1;
    for (int b = 0; E.wpos && E.rpos && b < p->n_bufs; b++) {
        if (!p->bufs[b].stream)
            continue;
        size_t L = p->bufs[b].stream_lanes > 1 ? (size_t)p->bufs[b].stream_lanes : 1;
        if (!(E.wpos[b] = calloc(L, sizeof **E.wpos)) || !(E.rpos[b] = calloc(L, sizeof **E.rpos))) {
            util_error(d, util_loc_file(NULL), "out of memory");
            goto done;
        }
    }
    if (E.fixed)
        E.wide = malloc((size_t)p->n_vars + 1);
    if (!env || !E.root || !E.fb || !E.isf || !E.numel || !E.up || !E.down || !E.wpos || !E.rpos ||
        (E.fixed && !E.wide)) {
        util_error(d, util_loc_file(NULL), "out of memory");
        goto done;
    }
    for (int fn = 0; E.fixed && fn < LOOP_I_COUNT; fn++) {
        if (!cg_fx_lut_fn((LoopIntrinsic)fn))
            continue;
        int last = cg_fx_lut_last((LoopIntrinsic)fn);
        if (!(E.lut[fn] = malloc((size_t)(last + 1) * sizeof **E.lut))) {
            util_error(d, util_loc_file(NULL), "out of memory");
            goto done;
        }
        for (int j = 0; j <= last; j++)
            E.lut[fn][j] = cg_fx_lut((LoopIntrinsic)fn, j);
    }
    for (int b = 0; b < p->n_bufs; b++) {
        const LoopBuf *bf = &p->bufs[b];
        E.root[b] = cg_c_root(p, b);
        E.numel[b] = ir_shape_numel(&bf->shape);
        E.isf[b] = (unsigned char)isf(bf->dtype);
        E.fb[b] = fmt && fmt[b].w ? fmt[b].w - fmt[b].i : 0;
        E.up[b] = ldexp(1, E.fb[b]);
        E.down[b] = ldexp(1, -E.fb[b]);
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
        E.k = k;
        if (run_kernel(&E, k, env)) {
            util_error(d, util_loc_file(NULL), "out of memory");
            goto done;
        }
    }
    if (E.err)
        util_error(d, util_loc_file(NULL), "internal error: the loop program reads or writes out of bounds in "
                   "evaluation");
    else
        rc = 0;
done:
    for (int i = 0; i < LOOP_I_COUNT; i++)
        free(E.lut[i]);
    free(E.wide);
    free(env);
    free(E.root);
    free(E.fb);
    free(E.isf);
    free(E.numel);
    free(E.up);
    free(E.down);
    for (int b = 0; E.wpos && E.rpos && b < p->n_bufs; b++) {
        free(E.wpos[b]);
        free(E.rpos[b]);
    }
    free(E.wpos);
    free(E.rpos);
    return rc;
}

int tgt_fpga_eval(const LoopProgram *p, const CgFixed *fmt, const int *frac, const IrArray *inputs, double **vals,
                  UtilDiag *d)
{
    return eval_run(p, fmt, frac, inputs, vals, NULL, NULL, NULL, d);
}

int tgt_fpga_eval_trace(const LoopProgram *p, const IrArray *inputs, const unsigned char *watch, TgtFpgaTraceFn on,
                        void *ctx, UtilDiag *d)
{
    double **vals = calloc((size_t)p->n_bufs + 1, sizeof *vals);
    if (!vals)
        return util_error(d, util_loc_file(NULL), "out of memory");
    int rc = eval_run(p, NULL, NULL, inputs, vals, watch, on, ctx, d);
    for (int b = 0; b < p->n_bufs; b++)
        free(vals[b]);
    free(vals);
    return rc;
}
