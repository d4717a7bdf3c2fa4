/* codegen/vector.c — a VECTORIZED loop emitted as vector instructions.
 *
 * The loop IR says a VECTORIZED loop of W iterations is one SIMD operation
 * per statement.  When its body qualifies, the loop is not emitted at all:
 * each statement becomes one W-lane operation, so the vector code does not
 * depend on LLVM's loop vectorizer and its cost model (register-blocked
 * kernels keep their accumulators in vector registers this way: a LOCAL
 * buffer read and written only by whole vectors at constant offsets is
 * promoted to registers by SROA).
 *
 * An expression is varying when it mentions the loop variable or a LET bound
 * to a varying value; everything else is uniform and emitted once as a
 * scalar (splatted where it meets a vector).  Loads: a uniform index reads one
 * element, an index i0 + v reads W consecutive elements, i0 + k*v (k = 2..4)
 * one k*W-element vector then every k-th lane when the buffer declares the
 * slack (LoopBuf.slack), any other index reads lane by lane.  Stores: i0 + v
 * writes W consecutive elements, under `if (cond)` a masked store (the
 * LETs before it under the IF read with masked loads); k consecutive stores
 * at i0 + j + k*v (j = 0..k-1, k = 2..4, i0 constant: an interleave, as the
 * Winograd output tiles' columns) one shuffle and one k*W-element store; any
 * other varying index writes lane by lane (in lane order).
 *
 * A body qualifies when it holds only immutable LETs, STOREs, BLOCKs and
 * IFs (no else) around immutable LETs and one contiguous STORE, and
 * its varying expressions are float32 / float64 / bool values built from
 * loads of float32 / float64 buffers, float arithmetic (+ - * / min max),
 * comparisons, selects, negation, abs, float casts and the intrinsics LLVM
 * widens itself (libm-backed ones only when libm may be called) or the code
 * generator builds from arithmetic (float32 exp, tanh, erf: codegen/expr.c),
 * or int32 words (+ - * & | ^ << min max, dot4, dot2, bf16pack, dot2bf) from loads of int32 / int8
 * / uint8 buffers, the integer casts between those (int32 to 8 bits wrapping) and to and from
 * float32 (saturating, as cg_cast), stored to such buffers.  The loop
 * variable itself may appear in indices only. */
#include "codegen/cg_impl.h"

#include <stdlib.h>

typedef struct Vec {
    CgCtx *c;
    int var;                  /* the loop variable */
    unsigned w;               /* lanes */
    unsigned char *varying;   /* per variable: 1 when its LET value is varying (check pass) */
    int masked;               /* check pass: inside an IF (loads must be contiguous: masked loads) */
    LLVMValueRef mask;        /* emission: the lane mask of the enclosing IF, or NULL */
} Vec;

static int is_vtype(IrDType t)
{
    return t == IR_DT_F32 || t == IR_DT_F64 || t == IR_DT_BOOL || t == IR_DT_I32 || t == IR_DT_I8 || t == IR_DT_U8;
}
/* Buffers whose elements vector code loads and stores. */
static int is_vmem(IrDType t) { return t == IR_DT_F32 || t == IR_DT_F64 || t == IR_DT_I32 || t == IR_DT_I8 || t == IR_DT_U8; }
static int is_small_int(IrDType t) { return t == IR_DT_I32 || t == IR_DT_I8 || t == IR_DT_U8; }
static int signed_index(IrDType t) { return t == IR_DT_I64 || t == IR_DT_I32; }

/* Does e mention the loop variable or a varying LET? */
static int varying(const Vec *v, const LoopExpr *e)
{
    if (!e)
        return 0;
    switch (e->kind) {
    case LOOP_E_VAR: return e->u.var == v->var || v->varying[e->u.var];
    case LOOP_E_LOAD: return varying(v, e->u.load.index);
    case LOOP_E_BIN: return varying(v, e->u.bin.a) || varying(v, e->u.bin.b);
    case LOOP_E_UN: return varying(v, e->u.un.a);
    case LOOP_E_SELECT: return varying(v, e->u.sel.cond) || varying(v, e->u.sel.a) || varying(v, e->u.sel.b);
    case LOOP_E_CALL:
        for (int i = 0; i < e->u.call.n; i++)
            if (varying(v, e->u.call.args[i]))
                return 1;
        return 0;
    case LOOP_E_CAST: return varying(v, e->u.cast.a);
    default: return 0;
    }
}

/* Mentions a varying LET (not the loop variable)? */
static int mentions_vlet(const Vec *v, const LoopExpr *e)
{
    if (!e)
        return 0;
    switch (e->kind) {
    case LOOP_E_VAR: return v->varying[e->u.var];
    case LOOP_E_LOAD: return mentions_vlet(v, e->u.load.index);
    case LOOP_E_BIN: return mentions_vlet(v, e->u.bin.a) || mentions_vlet(v, e->u.bin.b);
    case LOOP_E_UN: return mentions_vlet(v, e->u.un.a);
    case LOOP_E_SELECT:
        return mentions_vlet(v, e->u.sel.cond) || mentions_vlet(v, e->u.sel.a) || mentions_vlet(v, e->u.sel.b);
    case LOOP_E_CALL:
        for (int i = 0; i < e->u.call.n; i++)
            if (mentions_vlet(v, e->u.call.args[i]))
                return 1;
        return 0;
    case LOOP_E_CAST: return mentions_vlet(v, e->u.cast.a);
    default: return 0;
    }
}

/* Coefficient of the loop variable when index e is var * k + (uniform),
 * k >= 0 constant; -1 otherwise. */
static int64_t coef(const Vec *v, const LoopExpr *e)
{
    switch (e->kind) {
    case LOOP_E_INT: return 0;
    case LOOP_E_VAR: return e->u.var == v->var ? 1 : v->varying[e->u.var] ? -1 : 0;
    case LOOP_E_BIN: {
        int64_t a = coef(v, e->u.bin.a), b = coef(v, e->u.bin.b);
        if (a < 0 || b < 0)
            return -1;
        if (a == 0 && b == 0)
            return varying(v, e) ? -1 : 0;
        switch (e->u.bin.op) {
        case LOOP_ADD: return a + b;
        case LOOP_SUB: return b == 0 ? a : -1;
        case LOOP_MUL:
            if (b == 0 && e->u.bin.b->kind == LOOP_E_INT && e->u.bin.b->u.i >= 0)
                return a * e->u.bin.b->u.i;
            if (a == 0 && e->u.bin.a->kind == LOOP_E_INT && e->u.bin.a->u.i >= 0)
                return b * e->u.bin.a->u.i;
            return -1;
        default: return -1;
        }
    }
    default: return varying(v, e) ? -1 : 0;
    }
}

static int intrinsic_ok(const CgCtx *c, LoopIntrinsic fn)
{
    switch (fn) {
    case LOOP_I_sqrt: case LOOP_I_floor: case LOOP_I_ceil: case LOOP_I_round_even: case LOOP_I_fma:
    case LOOP_I_isnan: case LOOP_I_isinf:
        return !c->o.no_libm || fn == LOOP_I_isnan || fn == LOOP_I_isinf;
    case LOOP_I_exp: case LOOP_I_log: case LOOP_I_sin: case LOOP_I_cos: case LOOP_I_pow:
        return !c->o.no_libm && !c->gpu;   /* LLVM calls libm per lane (libdevice: scalar functions) */
    default: return 0;             /* plain libm calls: scalar functions */
    }
}

/* The byte a table load (loop_load_is_table) indexes by: its uint8 index
 * with the conversions between 8-bit types (the same byte) taken off. */
static const LoopExpr *table_byte(const LoopExpr *e)
{
    const LoopExpr *b = e->u.load.index->u.cast.a;
    while (b->kind == LOOP_E_CAST && ir_dtype_size(b->u.cast.a->type) == 1 && ir_dtype_is_int(b->u.cast.a->type))
        b = b->u.cast.a;
    return b;
}

/* A table load read with byte permutes (table_load): VPERMI2B, 64 lanes at most. */
static int table_ok(const Vec *v, const LoopExpr *e)
{
    return v->c->x86_perm >= 512 && v->w <= 64 && loop_load_is_table(v->c->p, e) &&
           ir_dtype_size(table_byte(e)->type) == 1;
}

/* Can varying expression e be widened? (Uniform parts are always fine.) */
static int expr_ok(const Vec *v, const LoopExpr *e)
{
    if (!varying(v, e))
        return 1;
    if (!is_vtype(e->type) && e->kind != LOOP_E_LOAD)
        return 0;
    const CgCtx *c = v->c;
    switch (e->kind) {
    case LOOP_E_VAR: return e->u.var != v->var;              /* a varying LET */
    case LOOP_E_LOAD: {
        IrDType t = c->p->bufs[e->u.load.buf].dtype;
        if (table_ok(v, e))
            return expr_ok(v, table_byte(e));
        return is_vmem(t) && !mentions_vlet(v, e->u.load.index) &&
               (!v->masked || coef(v, e->u.load.index) == 1);
    }
    case LOOP_E_BIN:
        if (loop_binop_is_compare(e->u.bin.op) && signed_index(e->u.bin.a->type))   /* a position against a
                                                                                      bound: linear sides */
            return coef(v, e->u.bin.a) >= 0 && coef(v, e->u.bin.b) >= 0;
        if (e->u.bin.a->type == IR_DT_I32)           /* 32-bit words: wrapping arithmetic and bits */
            switch (e->u.bin.op) {
            case LOOP_ADD: case LOOP_SUB: case LOOP_MUL: case LOOP_AND: case LOOP_OR: case LOOP_XOR: case LOOP_SHL:
            case LOOP_MIN: case LOOP_MAX:
                return expr_ok(v, e->u.bin.a) && expr_ok(v, e->u.bin.b);
            default: return 0;
            }
        if (!ir_dtype_is_float(e->u.bin.a->type) && !(e->type == IR_DT_BOOL && e->u.bin.a->type == IR_DT_BOOL &&
                                                      (e->u.bin.op == LOOP_AND || e->u.bin.op == LOOP_OR ||
                                                       e->u.bin.op == LOOP_XOR)))
            return 0;
        switch (e->u.bin.op) {
        case LOOP_ADD: case LOOP_SUB: case LOOP_MUL: case LOOP_DIV: case LOOP_MIN: case LOOP_MAX:
        case LOOP_LT: case LOOP_LE: case LOOP_EQ: case LOOP_NE: case LOOP_AND: case LOOP_OR: case LOOP_XOR:
            return expr_ok(v, e->u.bin.a) && expr_ok(v, e->u.bin.b);
        default: return 0;
        }
    case LOOP_E_UN:
        if (e->u.un.op == LOOP_NOT ? e->type != IR_DT_BOOL : !ir_dtype_is_float(e->type))
            return 0;
        return expr_ok(v, e->u.un.a);
    case LOOP_E_SELECT: return expr_ok(v, e->u.sel.cond) && expr_ok(v, e->u.sel.a) && expr_ok(v, e->u.sel.b);
    case LOOP_E_CALL:
        if (e->u.call.fn == LOOP_I_dot4 || e->u.call.fn == LOOP_I_dot2 || e->u.call.fn == LOOP_I_dot2bf ||
            e->u.call.fn == LOOP_I_bf16pack) {
            for (int i = 0; i < e->u.call.n; i++)
                if (!expr_ok(v, e->u.call.args[i]))
                    return 0;
            return 1;
        }
        if (!intrinsic_ok(c, e->u.call.fn) &&
            !((e->u.call.fn == LOOP_I_tanh || e->u.call.fn == LOOP_I_erf) && e->type == IR_DT_F32 &&
              !c->o.no_libm && !c->gpu))          /* float32 tanh and erf: inline lanes (codegen/expr.c) */
            return 0;
        for (int i = 0; i < e->u.call.n; i++)
            if (!ir_dtype_is_float(e->u.call.args[i]->type) || !expr_ok(v, e->u.call.args[i]))
                return 0;
        return 1;
    case LOOP_E_CAST: {
        IrDType f = e->u.cast.a->type;
        int ok = (ir_dtype_is_float(e->type) && (f == IR_DT_F32 || f == IR_DT_F64 || f == IR_DT_BOOL)) ||
                 (e->type == IR_DT_BOOL && f == IR_DT_BOOL) ||
                 (is_small_int(f) && (e->type == IR_DT_I32 || e->type == IR_DT_F32)) ||
                 (f == IR_DT_F32 && is_small_int(e->type)) || (f == IR_DT_I32 && is_small_int(e->type));
        return ok && e->type != IR_DT_F16 && e->type != IR_DT_BF16 && expr_ok(v, e->u.cast.a);
    }
    default: return 0;
    }
}

/* The STORE of `if (c) { let...; store }` (then-part a store, or a block of
 * immutable LETs ending with one), or NULL. */
static const LoopStmt *masked_store(const LoopStmt *s)
{
    const LoopStmt *t = s->u.cond.then_;
    if (!t)
        return NULL;
    if (t->kind == LOOP_S_STORE)
        return t;
    if (t->kind != LOOP_S_BLOCK || t->u.block.n < 1)
        return NULL;
    for (int i = 0; i < t->u.block.n - 1; i++)
        if (t->u.block.items[i]->kind != LOOP_S_LET)
            return NULL;
    t = t->u.block.items[t->u.block.n - 1];
    return t->kind == LOOP_S_STORE ? t : NULL;
}

static int body_ok(Vec *v, const LoopStmt *s)
{
    switch (s->kind) {
    case LOOP_S_LET:
        if (s->u.let.mutable_ || !expr_ok(v, s->u.let.value))
            return 0;
        if (varying(v, s->u.let.value))
            v->varying[s->u.let.var] = 1;
        return 1;
    case LOOP_S_STORE: {
        IrDType t = v->c->p->bufs[s->u.store.buf].dtype;
        if (!varying(v, s->u.store.index))
            return 0;                                   /* every lane would write one element */
        if (mentions_vlet(v, s->u.store.index))
            return 0;
        return is_vmem(t) && s->u.store.value->type == t && expr_ok(v, s->u.store.value);
    }
    case LOOP_S_BLOCK:
        for (int i = 0; i < s->u.block.n; i++)
            if (!body_ok(v, s->u.block.items[i]))
                return 0;
        return 1;
    case LOOP_S_IF: {       /* if (cond) { lets; store at i0 + v }: the lets, then a masked store */
        if (s->u.cond.else_ || s->u.cond.cond->type != IR_DT_BOOL || !expr_ok(v, s->u.cond.cond))
            return 0;
        const LoopStmt *t = masked_store(s);
        v->masked = 1;
        int ok = t && coef(v, t->u.store.index) == 1 && body_ok(v, s->u.cond.then_);
        v->masked = 0;
        return ok;
    }
    default: return 0;
    }
}

/* ------------------------------------------------------------ emission */

static LLVMValueRef splat(const Vec *v, LLVMValueRef x)
{
    LLVMBuilderRef B = v->c->b;
    LLVMTypeRef vt = LLVMVectorType(LLVMTypeOf(x), v->w);
    LLVMValueRef one = LLVMBuildInsertElement(B, LLVMGetPoison(vt), x, LLVMConstInt(v->c->t_i32, 0, 0), "");
    LLVMValueRef *zeros = calloc(v->w, sizeof *zeros);
    if (!zeros)
        return NULL;
    for (unsigned i = 0; i < v->w; i++)
        zeros[i] = LLVMConstInt(v->c->t_i32, 0, 0);
    LLVMValueRef r = LLVMBuildShuffleVector(B, one, LLVMGetPoison(vt), LLVMConstVector(zeros, v->w), "");
    free(zeros);
    return r;
}

static int is_vec(LLVMValueRef x) { return LLVMGetTypeKind(LLVMTypeOf(x)) == LLVMVectorTypeKind; }

/* Scalar index of lane l: the loop variable bound to the constant l. */
static LLVMValueRef lane_index(const Vec *v, const LoopExpr *idx, unsigned l)
{
    CgCtx *c = v->c;
    c->var[v->var] = LLVMConstInt(c->t_i64, l, 0);
    return cg_expr(c, idx);
}

static LLVMValueRef elem_ptr(CgCtx *c, int buf, LLVMValueRef idx)
{
    LLVMTypeRef mt = cg_mem_type(c, c->p->bufs[buf].dtype);
    return LLVMBuildInBoundsGEP2(c->b, mt, c->bufptr[buf], &idx, 1, "");
}

static LLVMValueRef vexpr(const Vec *v, const LoopExpr *e);

/* The lanes of integer expression e, linear in the loop variable with
 * coefficient k (coef): lane 0's value + (0, k, 2k, ...). */
static LLVMValueRef lane_values(const Vec *v, const LoopExpr *e)
{
    int64_t k = coef(v, e);
    LLVMValueRef x0 = lane_index(v, e, 0);
    if (!x0)
        return NULL;
    LLVMValueRef x = splat(v, x0);
    if (!x || k == 0)
        return x;
    LLVMTypeRef t = LLVMTypeOf(x0);
    LLVMValueRef *steps = calloc(v->w, sizeof *steps);
    if (!steps)
        return NULL;
    for (unsigned i = 0; i < v->w; i++)
        steps[i] = LLVMConstInt(t, (unsigned long long)(k * (int64_t)i), 1);
    LLVMValueRef r = LLVMBuildAdd(v->c->b, x, LLVMConstVector(steps, v->w), "");
    free(steps);
    return r;
}

/* The P of the first (var / P) or (var % P) in index e (P a positive
 * constant), or 0. */
static int64_t group_size(const Vec *v, const LoopExpr *e)
{
    if (e->kind != LOOP_E_BIN)
        return 0;
    if ((e->u.bin.op == LOOP_DIV || e->u.bin.op == LOOP_MOD) && e->u.bin.a->kind == LOOP_E_VAR &&
        e->u.bin.a->u.var == v->var && e->u.bin.b->kind == LOOP_E_INT && e->u.bin.b->u.i > 0)
        return e->u.bin.b->u.i;
    int64_t p = group_size(v, e->u.bin.a);
    return p ? p : group_size(v, e->u.bin.b);
}

/* Is index e = u + kd * (var / P) + km * (var % P), u uniform, kd and km
 * non-negative constants?  (Lanes in groups of P: lane j of group g reads
 * u + kd*g + km*j.)  0 and the coefficients when it is, -1 otherwise. */
static int grouped_coef(const Vec *v, const LoopExpr *e, int64_t P, int64_t *kd, int64_t *km)
{
    *kd = *km = 0;
    if (!varying(v, e))
        return 0;
    if (e->kind != LOOP_E_BIN)
        return -1;
    const LoopExpr *a = e->u.bin.a, *b = e->u.bin.b;
    if ((e->u.bin.op == LOOP_DIV || e->u.bin.op == LOOP_MOD) && a->kind == LOOP_E_VAR && a->u.var == v->var &&
        b->kind == LOOP_E_INT && b->u.i == P) {
        *(e->u.bin.op == LOOP_DIV ? kd : km) = 1;
        return 0;
    }
    int64_t ad, am, bd, bm;
    switch (e->u.bin.op) {
    case LOOP_ADD:
        if (grouped_coef(v, a, P, &ad, &am) || grouped_coef(v, b, P, &bd, &bm))
            return -1;
        *kd = ad + bd;
        *km = am + bm;
        return 0;
    case LOOP_SUB:
        if (varying(v, b) || grouped_coef(v, a, P, kd, km))
            return -1;
        return 0;
    case LOOP_MUL: {
        const LoopExpr *k = b->kind == LOOP_E_INT ? b : a->kind == LOOP_E_INT ? a : NULL;
        if (!k || k->u.i < 0 || grouped_coef(v, k == b ? a : b, P, &ad, &am))
            return -1;
        *kd = ad * k->u.i;
        *km = am * k->u.i;
        return 0;
    }
    default: return -1;
    }
}

/* W lanes whose index runs in groups of P lanes (grouped_coef): each group
 * one P-lane load — contiguous (km 1) or every km-th element of one wide
 * load (km 2..4, the slack of the strided load below) — and the groups
 * concatenated.  (The Winograd input transform of maps narrower than a
 * register: G tile rows of P tiles in one vector, each row's tiles a
 * stride-m load.)  NULL when the index is not of that form. */
static LLVMValueRef grouped_load(const Vec *v, const LoopExpr *e)
{
    CgCtx *c = v->c;
    int64_t P = group_size(v, e->u.load.index), kd, km;
    if (P <= 1 || v->mask || v->w % (unsigned)P || v->w / (unsigned)P < 2 ||
        grouped_coef(v, e->u.load.index, P, &kd, &km) || km < 1 || km > 4 || (km > 1 && !loop_load_widens(c->p, e, km)))
        return NULL;
    int buf = e->u.load.buf;
    IrDType t = c->p->bufs[buf].dtype;
    LLVMTypeRef et = cg_mem_type(c, t);
    unsigned align = (unsigned)ir_dtype_size(t), n = v->w / (unsigned)P, p = (unsigned)P;
    LLVMValueRef part[64];
    LLVMValueRef m[64];
    if (n > 64 || v->w > 64)
        return NULL;
    for (unsigned g = 0; g < n; g++) {
        LLVMValueRef i0 = lane_index(v, e->u.load.index, g * p);
        if (!i0)
            return NULL;
        LLVMValueRef wide = LLVMBuildLoad2(c->b, LLVMVectorType(et, p * (unsigned)km), elem_ptr(c, buf, i0), "");
        LLVMSetAlignment(wide, align);
        part[g] = wide;
        if (km > 1) {
            for (unsigned l = 0; l < p; l++)
                m[l] = LLVMConstInt(c->t_i32, l * (unsigned)km, 0);
            part[g] = LLVMBuildShuffleVector(c->b, wide, LLVMGetPoison(LLVMTypeOf(wide)), LLVMConstVector(m, p), "");
        }
    }
    for (unsigned w = p; n > 1; w *= 2, n /= 2)       /* pairs of groups joined, then pairs of those */
        for (unsigned g = 0; g < n / 2; g++) {
            for (unsigned l = 0; l < 2 * w; l++)
                m[l] = LLVMConstInt(c->t_i32, l, 0);
            part[g] = LLVMBuildShuffleVector(c->b, part[2 * g], part[2 * g + 1], LLVMConstVector(m, 2 * w), "");
        }
    return part[0];
}

/* The sum of the integer constants added at the top of index e (a + 4 +
 * (b - 2): 2; not those inside a product). */
static int64_t const_term(const LoopExpr *e)
{
    if (e->kind == LOOP_E_INT)
        return e->u.i;
    if (e->kind != LOOP_E_BIN)
        return 0;
    if (e->u.bin.op == LOOP_ADD)
        return const_term(e->u.bin.a) + const_term(e->u.bin.b);
    if (e->u.bin.op == LOOP_SUB)
        return const_term(e->u.bin.a) - const_term(e->u.bin.b);
    return 0;
}

/* A table load (table_ok): the 256 table bytes in four 64-byte registers,
 * the lanes' index bytes (widened to 64 lanes) select with two VPERMI2B from
 * entries 0..127 and 128..255 by their low 7 bits, and their top bit picks
 * between the two. */
static LLVMValueRef table_load(const Vec *v, const LoopExpr *e)
{
    CgCtx *c = v->c;
    LLVMValueRef x = vexpr(v, table_byte(e)), m[64];
    if (!x)
        return NULL;
    LLVMTypeRef v64 = LLVMVectorType(c->t_i8, 64);
    for (unsigned l = 0; l < 64; l++)
        m[l] = l < v->w ? LLVMConstInt(c->t_i32, l, 0) : LLVMGetUndef(c->t_i32);
    if (v->w < 64)
        x = LLVMBuildShuffleVector(c->b, x, LLVMGetPoison(LLVMTypeOf(x)), LLVMConstVector(m, 64), "");
    LLVMValueRef t[4];
    for (int k = 0; k < 4; k++) {
        t[k] = LLVMBuildLoad2(c->b, v64, elem_ptr(c, e->u.load.buf, LLVMConstInt(c->t_i64, 64u * (unsigned)k, 0)), "");
        LLVMSetAlignment(t[k], 1);
    }
    LLVMValueRef lo_args[3] = { t[0], x, t[1] }, hi_args[3] = { t[2], x, t[3] };
    LLVMValueRef lo = cg_call_intrinsic(c, "llvm.x86.avx512.vpermi2var.qi.512", NULL, 0, lo_args, 3);
    LLVMValueRef hi = cg_call_intrinsic(c, "llvm.x86.avx512.vpermi2var.qi.512", NULL, 0, hi_args, 3);
    if (!lo || !hi)
        return NULL;
    LLVMValueRef top = LLVMBuildICmp(c->b, LLVMIntSLT, x, LLVMConstNull(v64), "");
    LLVMValueRef r = LLVMBuildSelect(c->b, top, hi, lo, "");
    if (v->w < 64)
        r = LLVMBuildShuffleVector(c->b, r, LLVMGetPoison(v64), LLVMConstVector(m, v->w), "");
    return r;
}

static LLVMValueRef vload(const Vec *v, const LoopExpr *e)
{
    CgCtx *c = v->c;
    if (table_ok(v, e))
        return table_load(v, e);
    int buf = e->u.load.buf;
    IrDType t = c->p->bufs[buf].dtype;
    LLVMTypeRef et = cg_mem_type(c, t), vt = LLVMVectorType(et, v->w);
    unsigned align = (unsigned)ir_dtype_size(t);
    if (coef(v, e->u.load.index) == 1) {
        LLVMValueRef i0 = lane_index(v, e->u.load.index, 0);
        if (!i0)
            return NULL;
        if (v->mask) {                                /* under an IF: masked lanes read nothing */
            LLVMTypeRef ovl[2] = { vt, c->t_ptr };
            LLVMValueRef args[4] = { elem_ptr(c, buf, i0), LLVMConstInt(c->t_i32, align, 0), v->mask,
                                     LLVMGetPoison(vt) };
            return cg_call_intrinsic(c, "llvm.masked.load", ovl, 2, args, 4);
        }
        LLVMValueRef r = LLVMBuildLoad2(c->b, vt, elem_ptr(c, buf, i0), "");
        LLVMSetAlignment(r, align);
        return r;
    }
    int64_t k = coef(v, e->u.load.index);
    if (k >= 2 && k <= 4 && loop_load_widens(c->p, e, k)) {
        /* every k-th element of k*W consecutive ones: one wide load and a
         * shuffle (the buffer has k-1 elements of slack past any lane's).
         * The window starts `phase` elements early, phase = the index's
         * constant term mod k, when the lowering vouches for that many
         * (LoopExpr.load.lead): loads whose indices differ by less than k in
         * that term (a Winograd patch row's taps j = 0..k-1) then read one
         * window, which LLVM's CSE merges, instead of k overlapping ones
         * (ResNet-18's code generation: one instruction selection's cost
         * grows with the overlapping wide loads of a block) */
        LLVMValueRef i0 = lane_index(v, e->u.load.index, 0);
        if (!i0)
            return NULL;
        int64_t phase = ((const_term(e->u.load.index) % k) + k) % k;
        if (phase > e->u.load.lead)
            phase = 0;
        if (phase)
            i0 = LLVMBuildSub(c->b, i0, LLVMConstInt(c->t_i64, (unsigned long long)phase, 0), "");
        LLVMValueRef wide = LLVMBuildLoad2(c->b, LLVMVectorType(et, v->w * (unsigned)k), elem_ptr(c, buf, i0), "");
        LLVMSetAlignment(wide, align);
        LLVMValueRef *m = calloc(v->w, sizeof *m);
        if (!m)
            return NULL;
        for (unsigned l = 0; l < v->w; l++)
            m[l] = LLVMConstInt(c->t_i32, l * (unsigned)k + (unsigned)phase, 0);
        LLVMValueRef r = LLVMBuildShuffleVector(c->b, wide, LLVMGetPoison(LLVMTypeOf(wide)), LLVMConstVector(m, v->w), "");
        free(m);
        return r;
    }
    LLVMValueRef r = k < 0 ? grouped_load(v, e) : NULL;
    if (r)
        return r;
    r = LLVMGetPoison(vt);
    for (unsigned l = 0; l < v->w; l++) {
        LLVMValueRef il = lane_index(v, e->u.load.index, l);
        if (!il)
            return NULL;
        LLVMValueRef x = LLVMBuildLoad2(c->b, et, elem_ptr(c, buf, il), "");
        LLVMSetAlignment(x, align);
        r = LLVMBuildInsertElement(c->b, r, x, LLVMConstInt(c->t_i32, l, 0), "");
    }
    return r;
}

/* A CPU that cannot mask elements of `bytes` in one instruction (AVX2
 * bytes, SSE and NEON anything: cg_masked_bytes), where LLVM expands a
 * masked access to a branch and an insert per lane (GPU kernels keep the
 * masked forms). */
static int unmaskable(const CgCtx *c, unsigned bytes)
{
    return !c->gpu && bytes < (unsigned)(c->mask_bytes ? c->mask_bytes : 64);
}

/* Elements of buf that a plain load may read, from index 0: the buffer's
 * own allocation (slack included); -1 for a view or a halo, whose bounds
 * are another buffer's. */
static int64_t readable(const CgCtx *c, int buf)
{
    const LoopBuf *b = &c->p->bufs[buf];
    if (b->alias_of >= 0 || b->halo_rows || b->halo_cols || b->base)
        return -1;
    return b->bytes / (int64_t)ir_dtype_size(b->dtype);
}

/* The guarded load of lanes i0 + kk*l (kk = 1..4, l < w; mask k, b where
 * not taken) on a target that cannot mask elements this narrow (AVX2 bytes,
 * NEON): LLVM expands such a masked load to a branch and an insert per
 * lane (MobileNetV2 int8 on Zen 3 spent 40% of its time in them).  When
 * the kk*w elements from i0 all lie in the buffer, a plain load (every
 * kk-th element) and a select; else (the first and last rows of a padded
 * window) NULL after a branch, and the caller's masked load on that path. */
static LLVMValueRef narrow_plain(const Vec *v, int buf, LLVMValueRef i0, unsigned kk, LLVMValueRef k, LLVMValueRef b,
                                 int64_t n, LLVMBasicBlockRef *plain, LLVMBasicBlockRef *join)
{
    CgCtx *c = v->c;
    LLVMBuilderRef B = c->b;
    IrDType t = c->p->bufs[buf].dtype;
    unsigned w = v->w, nw = w * kk;
    LLVMTypeRef it = LLVMTypeOf(i0), wt = LLVMVectorType(cg_mem_type(c, t), nw);
    LLVMValueRef inside = LLVMBuildAnd(B, LLVMBuildICmp(B, LLVMIntSGE, i0, LLVMConstInt(it, 0, 0), ""),
                                       LLVMBuildICmp(B, LLVMIntSLE, i0, LLVMConstInt(it, (unsigned long long)(n - nw), 0), ""),
                                       "");
    LLVMBasicBlockRef edge = LLVMAppendBasicBlockInContext(c->ctx, c->fn, "guard.edge");
    *plain = LLVMAppendBasicBlockInContext(c->ctx, c->fn, "guard.plain");
    *join = LLVMAppendBasicBlockInContext(c->ctx, c->fn, "guard.join");
    LLVMBuildCondBr(B, inside, *plain, edge);
    LLVMPositionBuilderAtEnd(B, *plain);
    LLVMValueRef x = LLVMBuildLoad2(B, wt, elem_ptr(c, buf, i0), "");
    LLVMSetAlignment(x, (unsigned)ir_dtype_size(t));
    if (kk > 1) {
        LLVMValueRef m[64];
        for (unsigned l = 0; l < w && l < 64; l++)
            m[l] = LLVMConstInt(c->t_i32, l * kk, 0);
        x = LLVMBuildShuffleVector(B, x, LLVMGetPoison(wt), LLVMConstVector(m, w), "");
    }
    x = LLVMBuildSelect(B, k, x, b, "");
    *plain = LLVMGetInsertBlock(B);
    LLVMBuildBr(B, *join);
    LLVMPositionBuilderAtEnd(B, edge);
    return x;
}

/* The phi that joins narrow_plain's value x (from block plain) and the
 * masked path's r (ending in the current block). */
static LLVMValueRef narrow_join(CgCtx *c, LLVMValueRef x, LLVMBasicBlockRef plain, LLVMValueRef r,
                                LLVMBasicBlockRef join)
{
    if (!r)
        return NULL;
    LLVMBasicBlockRef edge = LLVMGetInsertBlock(c->b);
    LLVMBuildBr(c->b, join);
    LLVMPositionBuilderAtEnd(c->b, join);
    LLVMValueRef phi = LLVMBuildPhi(c->b, LLVMTypeOf(x), "");
    LLVMValueRef in_v[2] = { x, r };
    LLVMBasicBlockRef in_b[2] = { plain, edge };
    LLVMAddIncoming(phi, in_v, in_b, 2);
    return phi;
}

/* cond ? buf[index] : b for a guarded load (SELECT with a LOAD): the lanes
 * not taken read nothing.  Index i0 + v: one masked load, b passed through.
 * Index i0 + k*v (k = 2..4): one k*W-element masked load, element j read
 * when j % k == 0 and lane j / k is taken, then every k-th element.  Any
 * other index: lane by lane, a lane not taken reading element 0.  The
 * first two on a CPU that cannot mask such elements: narrow_plain first. */
static LLVMValueRef guarded_load(const Vec *v, const LoopExpr *e)
{
    CgCtx *c = v->c;
    LLVMBuilderRef B = c->b;
    const LoopExpr *ld = e->u.sel.a;
    LLVMValueRef k = vexpr(v, e->u.sel.cond), b = k ? vexpr(v, e->u.sel.b) : NULL;
    if (!b || (!is_vec(k) && !(k = splat(v, k))) || (!is_vec(b) && !(b = splat(v, b))))
        return NULL;
    if (v->mask)
        k = LLVMBuildAnd(B, k, v->mask, "");
    int buf = ld->u.load.buf;
    IrDType t = c->p->bufs[buf].dtype;
    LLVMTypeRef et = cg_mem_type(c, t);
    unsigned align = (unsigned)ir_dtype_size(t), w = v->w;
    int64_t kk = coef(v, ld->u.load.index), n = readable(c, buf);
    int narrow = unmaskable(c, align) && kk >= 1 && kk <= 4 && n >= kk * (int64_t)w;
    LLVMValueRef r;
    if (kk == 1) {
        LLVMValueRef i0 = lane_index(v, ld->u.load.index, 0);
        if (!i0)
            return NULL;
        LLVMBasicBlockRef plain = NULL, join = NULL;
        LLVMValueRef x = narrow ? narrow_plain(v, buf, i0, 1, k, b, n, &plain, &join) : NULL;
        LLVMTypeRef vt = LLVMVectorType(et, w), ovl[2] = { vt, c->t_ptr };
        LLVMValueRef args[4] = { elem_ptr(c, buf, i0), LLVMConstInt(c->t_i32, align, 0), k, b };
        r = cg_call_intrinsic(c, "llvm.masked.load", ovl, 2, args, 4);
        return x ? narrow_join(c, x, plain, r, join) : r;
    }
    if (kk >= 2 && kk <= 4) {
        unsigned nw = w * (unsigned)kk;
        LLVMValueRef *m = calloc(nw, sizeof *m);
        LLVMValueRef i0 = m ? lane_index(v, ld->u.load.index, 0) : NULL;
        if (!i0) {
            free(m);
            return NULL;
        }
        LLVMBasicBlockRef plain = NULL, join = NULL;
        LLVMValueRef x = narrow ? narrow_plain(v, buf, i0, (unsigned)kk, k, b, n, &plain, &join) : NULL;
        for (unsigned j = 0; j < nw; j++)           /* the wide mask: lane j/k's, at every k-th element */
            m[j] = j % (unsigned)kk ? LLVMConstInt(c->t_i32, w, 0) : LLVMConstInt(c->t_i32, j / (unsigned)kk, 0);
        LLVMValueRef wk = LLVMBuildShuffleVector(B, k, LLVMConstNull(LLVMTypeOf(k)), LLVMConstVector(m, nw), "");
        LLVMTypeRef wt = LLVMVectorType(et, nw), ovl[2] = { wt, c->t_ptr };
        LLVMValueRef args[4] = { elem_ptr(c, buf, i0), LLVMConstInt(c->t_i32, align, 0), wk, LLVMGetPoison(wt) };
        LLVMValueRef wide = cg_call_intrinsic(c, "llvm.masked.load", ovl, 2, args, 4);
        for (unsigned l = 0; l < w; l++)
            m[l] = LLVMConstInt(c->t_i32, l * (unsigned)kk, 0);
        r = wide ? LLVMBuildShuffleVector(B, wide, LLVMGetPoison(wt), LLVMConstVector(m, w), "") : NULL;
        free(m);
        if (x)
            return narrow_join(c, x, plain, r ? LLVMBuildSelect(B, k, r, b, "") : NULL, join);
    } else {
        r = LLVMGetPoison(LLVMVectorType(et, w));
        for (unsigned l = 0; r && l < w; l++) {
            LLVMValueRef il = lane_index(v, ld->u.load.index, l);
            if (!il)
                return NULL;
            LLVMValueRef kl = LLVMBuildExtractElement(B, k, LLVMConstInt(c->t_i32, l, 0), "");
            il = LLVMBuildSelect(B, kl, il, LLVMConstNull(LLVMTypeOf(il)), "");
            LLVMValueRef x = LLVMBuildLoad2(B, et, elem_ptr(c, buf, il), "");
            LLVMSetAlignment(x, align);
            r = LLVMBuildInsertElement(B, r, x, LLVMConstInt(c->t_i32, l, 0), "");
        }
    }
    return r ? LLVMBuildSelect(B, k, r, b, "") : NULL;
}

/* Both operands vectors (the uniform one splatted). */
static int pair(const Vec *v, LLVMValueRef *a, LLVMValueRef *b)
{
    if (!is_vec(*a) && !(*a = splat(v, *a)))
        return -1;
    if (!is_vec(*b) && !(*b = splat(v, *b)))
        return -1;
    return 0;
}

static LLVMValueRef vexpr(const Vec *v, const LoopExpr *e)
{
    CgCtx *c = v->c;
    LLVMBuilderRef B = c->b;
    if (!varying(v, e))
        return cg_expr(c, e);
    switch (e->kind) {
    case LOOP_E_VAR: return c->var[e->u.var];
    case LOOP_E_LOAD: return vload(v, e);
    case LOOP_E_BIN: {
        const LoopExpr *m, *z;
        int neg_m, neg_z;
        if (loop_binop_is_compare(e->u.bin.op) && signed_index(e->u.bin.a->type)) {
            LLVMValueRef a = lane_values(v, e->u.bin.a), b = a ? lane_values(v, e->u.bin.b) : NULL;
            if (!b)
                return NULL;
            LLVMIntPredicate pr = e->u.bin.op == LOOP_LT ? LLVMIntSLT : e->u.bin.op == LOOP_LE ? LLVMIntSLE
                                  : e->u.bin.op == LOOP_EQ ? LLVMIntEQ : LLVMIntNE;
            return LLVMBuildICmp(B, pr, a, b, "");
        }
        if (cg_contractible(e, &m, &z, &neg_m, &neg_z)) {
            LLVMValueRef x = vexpr(v, m->u.bin.a), y = x ? vexpr(v, m->u.bin.b) : NULL;
            LLVMValueRef w = y ? vexpr(v, z) : NULL;
            if (!w || pair(v, &x, &y) || (!is_vec(w) && !(w = splat(v, w))))
                return NULL;
            return cg_muladd(c, x, y, w, neg_m, neg_z);
        }
        LLVMValueRef a = vexpr(v, e->u.bin.a), b = a ? vexpr(v, e->u.bin.b) : NULL;
        if (!b || pair(v, &a, &b))
            return NULL;
        if (e->u.bin.a->type == IR_DT_I32)
            switch (e->u.bin.op) {
            case LOOP_ADD: return LLVMBuildAdd(B, a, b, "");
            case LOOP_SUB: return LLVMBuildSub(B, a, b, "");
            case LOOP_MUL: return LLVMBuildMul(B, a, b, "");
            case LOOP_SHL: return LLVMBuildShl(B, a, b, "");
            case LOOP_MIN: case LOOP_MAX: {
                LLVMTypeRef t = LLVMTypeOf(a);
                LLVMValueRef ab[2] = { a, b };
                return cg_call_intrinsic(c, e->u.bin.op == LOOP_MIN ? "llvm.smin" : "llvm.smax", &t, 1, ab, 2);
            }
            default: break;
            }
        if (!ir_dtype_is_float(e->u.bin.a->type))
            return e->u.bin.op == LOOP_AND ? LLVMBuildAnd(B, a, b, "")
                   : e->u.bin.op == LOOP_OR ? LLVMBuildOr(B, a, b, "")
                                            : LLVMBuildXor(B, a, b, "");
        return cg_float_bin(c, e->u.bin.op, a, b);
    }
    case LOOP_E_UN: {
        LLVMValueRef a = vexpr(v, e->u.un.a);
        if (!a)
            return NULL;
        if (e->u.un.op == LOOP_NOT)
            return LLVMBuildNot(B, a, "");
        if (e->u.un.op == LOOP_NEG)
            return LLVMBuildFNeg(B, a, "");
        LLVMTypeRef t = LLVMTypeOf(a);
        return cg_call_intrinsic(c, "llvm.fabs", &t, 1, &a, 1);
    }
    case LOOP_E_SELECT: {
        const LoopExpr *ld = e->u.sel.a;
        int64_t kk = ld->kind == LOOP_E_LOAD && varying(v, ld) ? coef(v, ld->u.load.index) : 0;
        if (kk == 1 || (kk != 0 && !ld->u.load.safe))
            return guarded_load(v, e);
        LLVMValueRef k = vexpr(v, e->u.sel.cond);
        LLVMValueRef a = k ? vexpr(v, e->u.sel.a) : NULL, b = a ? vexpr(v, e->u.sel.b) : NULL;
        if (!b || pair(v, &a, &b))
            return NULL;
        return LLVMBuildSelect(B, k, a, b, "");
    }
    case LOOP_E_CALL: {
        LLVMValueRef a[3];
        for (int i = 0; i < e->u.call.n && i < 3; i++)
            if (!(a[i] = vexpr(v, e->u.call.args[i])) || (!is_vec(a[i]) && !(a[i] = splat(v, a[i]))))
                return NULL;
        return cg_intrinsic(c, e->u.call.fn, a, (unsigned)e->u.call.n);
    }
    case LOOP_E_CAST: {
        LLVMValueRef a = vexpr(v, e->u.cast.a);
        if (!a)
            return NULL;
        IrDType f = e->u.cast.a->type, t = e->type;
        if (f == t)
            return a;
        LLVMTypeRef vt = LLVMVectorType(cg_reg_type(c, t), v->w);
        if (f == IR_DT_BOOL)
            return LLVMBuildUIToFP(B, a, vt, "");
        if (is_small_int(f) && t == IR_DT_I32)
            return LLVMBuildIntCast2(B, a, vt, ir_dtype_is_signed(f), "");
        if (f == IR_DT_I32 && is_small_int(t))        /* wrapping, as cg_cast */
            return LLVMBuildIntCast2(B, a, vt, 1, "");
        if (is_small_int(f))
            return ir_dtype_is_signed(f) ? LLVMBuildSIToFP(B, a, vt, "") : LLVMBuildUIToFP(B, a, vt, "");
        if (is_small_int(t))                          /* saturating, as cg_cast */
            return cg_float_to_int_sat(c, t, a);
        return LLVMBuildFPCast(B, a, vt, "");
    }
    default: break;
    }
    cg_fail(c, "internal error: expression kind %d in a vector loop", (int)e->kind);
    return NULL;
}

static int vstmt(const Vec *v, const LoopStmt *s);

/* Do stores s[0..k) write the k interleaved halves of k*W consecutive
 * elements: one buffer, indices i0 + j + k*var (j = 0..k-1, i0 a constant),
 * k = 2..4?  Then k (else 0). */
static int interleaved(const Vec *v, const LoopStmt *const *s, int n)
{
    if (n < 2 || s[0]->kind != LOOP_S_STORE)
        return 0;
    int64_t k = coef(v, s[0]->u.store.index);
    if (k < 2 || k > 4 || k > n)
        return 0;
    long long i0 = 0;
    for (int j = 0; j < k; j++) {
        if (s[j]->kind != LOOP_S_STORE || s[j]->u.store.buf != s[0]->u.store.buf || coef(v, s[j]->u.store.index) != k)
            return 0;
        LLVMValueRef ij = lane_index(v, s[j]->u.store.index, 0);
        if (!ij || !LLVMIsAConstantInt(ij))
            return 0;
        long long x = LLVMConstIntGetSExtValue(ij);
        if (j == 0)
            i0 = x;
        else if (x != i0 + j)
            return 0;
    }
    return (int)k;
}

/* The k interleaved stores as one shuffle and one k*W-element store:
 * element i0 + l*k + j = lane l of store j's value. */
static int vstore_interleaved(const Vec *v, const LoopStmt *const *s, int k)
{
    CgCtx *c = v->c;
    int buf = s[0]->u.store.buf;
    unsigned w = v->w, pw = k > 2 ? 4 : 2;
    LLVMValueRef x[4] = { 0 };
    for (int j = 0; j < k; j++)
        if (!(x[j] = vexpr(v, s[j]->u.store.value)) || (!is_vec(x[j]) && !(x[j] = splat(v, x[j]))))
            return -1;
    for (unsigned j = (unsigned)k; j < pw; j++)
        x[j] = LLVMGetPoison(LLVMTypeOf(x[0]));
    LLVMValueRef *m = calloc(4 * (size_t)w, sizeof *m);
    if (!m)
        return cg_fail(c, "out of memory");
    for (unsigned width = w; width < pw * w; width *= 2) {       /* concatenate: [x0 x1 (x2 x3)] */
        for (unsigned l = 0; l < 2 * width; l++)
            m[l] = LLVMConstInt(c->t_i32, l, 0);
        for (unsigned j = 0; j + 1 < pw * w / width; j += 2)
            x[j / 2] = LLVMBuildShuffleVector(c->b, x[j], x[j + 1], LLVMConstVector(m, 2 * width), "");
    }
    for (unsigned l = 0; l < w; l++)
        for (unsigned j = 0; j < (unsigned)k; j++)
            m[l * (unsigned)k + j] = LLVMConstInt(c->t_i32, j * w + l, 0);
    LLVMValueRef all = LLVMBuildShuffleVector(c->b, x[0], LLVMGetPoison(LLVMTypeOf(x[0])),
                                              LLVMConstVector(m, (unsigned)k * w), "");
    free(m);
    LLVMValueRef i0 = lane_index(v, s[0]->u.store.index, 0);
    if (!i0)
        return -1;
    LLVMSetAlignment(LLVMBuildStore(c->b, all, elem_ptr(c, buf, i0)), (unsigned)ir_dtype_size(c->p->bufs[buf].dtype));
    return 0;
}

static int vstmt(const Vec *v, const LoopStmt *s)
{
    CgCtx *c = v->c;
    switch (s->kind) {
    case LOOP_S_LET: {
        LLVMValueRef x = vexpr(v, s->u.let.value);
        if (!x)
            return -1;
        c->var[s->u.let.var] = x;
        c->var_mut[s->u.let.var] = is_vec(x) ? 2 : 0;
        return 0;
    }
    case LOOP_S_STORE: {
        int buf = s->u.store.buf;
        IrDType t = c->p->bufs[buf].dtype;
        unsigned align = (unsigned)ir_dtype_size(t);
        LLVMValueRef x = vexpr(v, s->u.store.value);
        if (!x || (!is_vec(x) && !(x = splat(v, x))))
            return -1;
        if (coef(v, s->u.store.index) == 1) {
            LLVMValueRef i0 = lane_index(v, s->u.store.index, 0);
            if (!i0)
                return -1;
            LLVMSetAlignment(LLVMBuildStore(c->b, x, elem_ptr(c, buf, i0)), align);
            return 0;
        }
        int64_t k = coef(v, s->u.store.index);   /* > 1: lane l at lane 0's element + l*k */
        LLVMValueRef p0 = NULL;
        if (k > 1) {
            LLVMValueRef i0 = lane_index(v, s->u.store.index, 0);
            if (!i0)
                return -1;
            p0 = elem_ptr(c, buf, i0);
        }
        for (unsigned l = 0; l < v->w; l++) {
            LLVMValueRef pl;
            if (p0) {
                LLVMValueRef off = LLVMConstInt(c->t_i64, (unsigned long long)(k * l), 0);
                pl = LLVMBuildInBoundsGEP2(c->b, cg_mem_type(c, t), p0, &off, 1, "");
            } else {
                LLVMValueRef il = lane_index(v, s->u.store.index, l);
                if (!il)
                    return -1;
                pl = elem_ptr(c, buf, il);
            }
            LLVMValueRef xl = LLVMBuildExtractElement(c->b, x, LLVMConstInt(c->t_i32, l, 0), "");
            LLVMSetAlignment(LLVMBuildStore(c->b, xl, pl), align);
        }
        return 0;
    }
    case LOOP_S_BLOCK:
        for (int i = 0, k; i < s->u.block.n; i += k ? k : 1) {
            const LoopStmt *const *it = (const LoopStmt *const *)s->u.block.items + i;
            if ((k = interleaved(v, it, s->u.block.n - i)) ? vstore_interleaved(v, it, k) : vstmt(v, *it))
                return -1;
        }
        return 0;
    case LOOP_S_IF: {
        const LoopStmt *t = masked_store(s), *th = s->u.cond.then_;
        LLVMValueRef k = vexpr(v, s->u.cond.cond);
        if (!k || (!is_vec(k) && !(k = splat(v, k))))
            return -1;
        ((Vec *)v)->mask = k;                         /* the lets' loads are masked too */
        for (int i = 0; th->kind == LOOP_S_BLOCK && i < th->u.block.n - 1; i++)
            if (vstmt(v, th->u.block.items[i]) != 0)
                return -1;
        int buf = t->u.store.buf;
        LLVMValueRef x = vexpr(v, t->u.store.value);
        if (!x || (!is_vec(x) && !(x = splat(v, x))))
            return -1;
        LLVMValueRef i0 = lane_index(v, t->u.store.index, 0);
        if (!i0)
            return -1;
        LLVMTypeRef ovl[2] = { LLVMTypeOf(x), c->t_ptr };
        unsigned align = (unsigned)ir_dtype_size(c->p->bufs[buf].dtype);
        LLVMValueRef args[4] = { x, elem_ptr(c, buf, i0), LLVMConstInt(c->t_i32, align, 0), k };
        ((Vec *)v)->mask = NULL;
        LLVMBasicBlockRef join = NULL;
        if (unmaskable(c, align)) {
            /* every lane taken (a register block's lanes short of the
             * plane's end: all but its last block): one plain store */
            LLVMTypeRef mt = LLVMTypeOf(k);
            LLVMValueRef every = cg_call_intrinsic(c, "llvm.vector.reduce.and", &mt, 1, &k, 1);
            if (!every)
                return -1;
            LLVMBasicBlockRef plain = LLVMAppendBasicBlockInContext(c->ctx, c->fn, "store.plain");
            LLVMBasicBlockRef part = LLVMAppendBasicBlockInContext(c->ctx, c->fn, "store.part");
            join = LLVMAppendBasicBlockInContext(c->ctx, c->fn, "store.join");
            LLVMBuildCondBr(c->b, every, plain, part);
            LLVMPositionBuilderAtEnd(c->b, plain);
            LLVMSetAlignment(LLVMBuildStore(c->b, x, args[1]), align);
            LLVMBuildBr(c->b, join);
            LLVMPositionBuilderAtEnd(c->b, part);
        }
        if (!cg_call_intrinsic(c, "llvm.masked.store", ovl, 2, args, 4))
            return -1;
        if (join) {
            LLVMBuildBr(c->b, join);
            LLVMPositionBuilderAtEnd(c->b, join);
        }
        return 0;
    }
    default:
        return cg_fail(c, "internal error: statement kind %d in a vector loop", (int)s->kind);
    }
}

int cg_vector_loop(CgCtx *c, const LoopStmt *s)
{
    const LoopExpr *ext = s->u.loop.extent;
    if (s->u.loop.kind != LOOP_VECTORIZED || ext->kind != LOOP_E_INT || ext->u.i < 2 || ext->u.i > 64 ||
        ext->u.i != s->u.loop.factor || (c->gpu && ext->u.i != 4))
        return 1;
    Vec v = { .c = c, .var = s->u.loop.var, .w = (unsigned)ext->u.i };
    v.varying = calloc((size_t)c->p->n_vars, 1);
    if (!v.varying)
        return cg_fail(c, "out of memory");
    int ok = body_ok(&v, s->u.loop.body);
    int rc = 1;
    if (ok) {
        rc = vstmt(&v, s->u.loop.body);
        for (int i = 0; i < c->p->n_vars; i++)      /* the body's LETs are out of scope now */
            if (v.varying[i])
                c->var_mut[i] = 0;
        c->var[v.var] = NULL;
    }
    free(v.varying);
    return rc;
}
