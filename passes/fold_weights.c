/* passes/fold_weights.c — folding into weights.
 *
 * fold-batchnorm: an inference BatchNormalization with constant parameters
 * is a per-channel affine map,
 *     y = (x - mean) / sqrt(var + eps) * scale + B = x * s + t,
 *     s = scale / sqrt(var + eps),  t = B - mean * s,
 * emitted as Mul(x, s) then Add(., t) with s, t shaped [C, 1, ...] (computed
 * in double).
 *
 * fold-weights: a constant per-output-channel multiply or add after a
 * producer with constant weights moves into them:
 *     Conv(x, W, b) * s     = Conv(x, W * s[m], b * s)        (s per channel m)
 *     Conv(x, W, b) + t     = Conv(x, W, b + t)               (also ConvTranspose)
 *     Gemm(A, B, C) * s     = Gemm(A, B * s[n], C * s)        (s per column n)
 *     Gemm(A, B, C) + t     = Gemm(A, B, beta * C + t), beta = 1
 *     MatMul(A, W) * s      = MatMul(A, W * s[n])             (W constant, 2-D)
 *     MatMul(A, W) + t      = Gemm(A, W, t)                   (A and W 2-D)
 * so Conv → BatchNormalization becomes one Conv.  The producer's output must
 * have no other use. */
#include "passes/pass_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ BatchNormalization */

static int bn_foldable(const IrGraph *g, const IrNode *n)
{
    if (ir_attr_int(n, IR_A_training_mode))
        return 0;
    for (int k = 1; k < n->n_out; k++)
        if (n->out[k] >= 0)
            return 0;                           /* running statistics asked for: training */
    const IrTensor *x = ir_in(g, n, 0);
    if (!ir_dtype_is_float(x->v.dtype) || x->v.shape.rank < 2)
        return 0;
    for (int k = 1; k < 5; k++)
        if (!pass_value(g, n->in[k]) || ir_array_numel(pass_value(g, n->in[k])) != x->v.shape.dims[1])
            return 0;
    return 1;
}

static int oom(IrGraph *g, UtilDiag *d) { return util_error(d, util_loc_file(g->file), "out of memory"); }

int pass_fold_batchnorm(IrGraph *g, UtilDiag *d)
{
    int changes = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        if (g->nodes[i].dead || g->nodes[i].op != IR_OP_BatchNormalization || !bn_foldable(g, &g->nodes[i]))
            continue;
        const IrNode *n = &g->nodes[i];
        int x = n->in[0], y = n->out[0], in[5];
        memcpy(in, n->in, sizeof in);
        double eps = ir_attr_float(n, IR_A_epsilon);
        UtilLoc loc = n->loc;
        const IrTensor *xt = &g->tensors[x];
        IrDType dt = xt->v.dtype;
        int64_t c = xt->v.shape.dims[1];
        IrShape ps = { .rank = xt->v.shape.rank - 1 };
        ps.dims[0] = c;
        for (int k = 1; k < ps.rank; k++)
            ps.dims[k] = 1;
        const char *hint = g->tensors[y].name;
        int s = pass_new_const(g, hint, dt, &ps), t = pass_new_const(g, hint, dt, &ps);
        if (s < 0 || t < 0)
            return oom(g, d);
        const IrArray *sc = pass_value(g, in[1]), *b = pass_value(g, in[2]), *mean = pass_value(g, in[3]),
                      *var = pass_value(g, in[4]);
        for (int64_t k = 0; k < c; k++) {
            double f = ir_load_f64(sc->dtype, sc->data, k) / sqrt(ir_load_f64(var->dtype, var->data, k) + eps);
            ir_store_f64(dt, g->tensors[s].v.data, k, f);
            ir_store_f64(dt, g->tensors[t].v.data, k,
                         ir_load_f64(b->dtype, b->data, k) - ir_load_f64(mean->dtype, mean->data, k) * f);
        }
        int mi[2] = { x, s };
        int m = pass_emit(g, IR_OP_Mul, hint, 2, mi, 1, -1, loc, d);
        if (m < 0)
            return -1;
        int ai[2] = { m, t };
        int a = pass_emit(g, IR_OP_Add, hint, 2, ai, 1, -1, loc, d);
        if (a < 0)
            return -1;
        if (pass_replace(g, y, a))
            continue;                           /* unreachable: a is a fresh value */
        g->nodes[i].dead = 1;
        changes++;
    }
    return changes ? pass_dce(g, d) < 0 ? -1 : changes : 0;
}

/* ------------------------------------------------------------ into weights */

/* The per-index vector of constant c along axis `ax` of shape o: c must
 * broadcast to o varying at most along ax.  Fills v[0..o->dims[ax]). */
static int axis_vector(const IrArray *c, const IrShape *o, int ax, double *v)
{
    int off = o->rank - c->shape.rank, along = -1;       /* extra leading dims of c must be 1 */
    for (int j = 0; j < c->shape.rank; j++) {
        int a = j + off;
        if (c->shape.dims[j] == 1)
            continue;
        if (a < 0 || a != ax || c->shape.dims[j] != o->dims[ax])
            return 0;
        along = j;
    }
    for (int64_t k = 0; k < o->dims[ax]; k++)
        v[k] = ir_load_f64(c->dtype, c->data, along >= 0 ? k : 0);   /* only `along` has extent > 1 */
    return 1;
}

typedef struct Fold {
    IrGraph *g;
    UtilDiag *d;
    int node;          /* the Mul / Add */
    int prod;          /* the Conv / Gemm / MatMul */
    int c;             /* the constant operand */
    double *v;         /* per-channel values */
} Fold;

/* A copy of constant tensor w with element e multiplied by v[channel(e)],
 * channel(e) = (e / inner) % count. */
static int scaled_copy(Fold *f, int w, int64_t inner, int64_t count)
{
    IrShape s = f->g->tensors[w].v.shape;
    IrDType dt = f->g->tensors[w].v.dtype;
    int nw = pass_new_const(f->g, f->g->tensors[w].name, dt, &s);
    if (nw < 0)
        return oom(f->g, f->d);
    const IrArray *a = &f->g->tensors[w].v;
    void *out = f->g->tensors[nw].v.data;
    for (int64_t e = 0, n = ir_array_numel(a); e < n; e++)
        ir_store_f64(dt, out, e, ir_load_f64(a->dtype, a->data, e) * f->v[(e / inner) % count]);
    return nw;
}

/* A vector constant [count] = (base ? base * mul : 0) + add, base of any
 * shape broadcasting to [count] (NULL = absent). */
static int vector_const(Fold *f, const char *hint, IrDType dt, int64_t count, const IrArray *base, double mul,
                        const double *scale, const double *add)
{
    IrShape s = { .rank = 1, .dims = { count } };
    int t = pass_new_const(f->g, hint, dt, &s);
    if (t < 0)
        return oom(f->g, f->d);
    double *bv = calloc((size_t)count + 1, sizeof *bv);
    if (!bv)
        return oom(f->g, f->d);
    if (base && !axis_vector(base, &s, 0, bv)) {
        free(bv);
        return -2;                           /* base varies along another axis */
    }
    void *out = f->g->tensors[t].v.data;
    for (int64_t k = 0; k < count; k++)
        ir_store_f64(dt, out, k, bv[k] * mul * (scale ? scale[k] : 1) + (add ? add[k] : 0));
    free(bv);
    return t;
}

/* Emits a copy of the producer with new inputs and integer attribute
 * overrides, and replaces the Mul / Add output by it. */
static int refold(Fold *f, int n_in, const int *in, IrAttrKey key, int64_t val, IrAttrKey fkey, double fval)
{
    IrGraph *g = f->g;
    int node = pass_emit_node(g, g->nodes[f->prod].op, g->tensors[g->nodes[f->node].out[0]].name, n_in, in, 1,
                              f->prod, g->nodes[f->prod].loc);
    if (node < 0)
        return oom(g, f->d);
    g->nodes[node].name = g->nodes[f->prod].name;      /* the Conv / Gemm keeps its name */
    if (key) {
        IrAttr a = { .key = key, .kind = IR_AK_INT, .v.i = val };
        if (ir_set_attr(g, node, &a))
            return oom(g, f->d);
    }
    if (fkey) {
        IrAttr a = { .key = fkey, .kind = IR_AK_FLOAT, .v.f = fval };
        if (ir_set_attr(g, node, &a))
            return oom(g, f->d);
    }
    int r = pass_emit_done(g, node, f->d);
    if (r < 0)
        return -1;
    const IrTensor *a = &g->tensors[g->nodes[f->node].out[0]], *b = &g->tensors[r];
    if (b->v.dtype != a->v.dtype || !ir_shape_equal(&a->v.shape, &b->v.shape) ||
        pass_replace(g, g->nodes[f->node].out[0], r)) {
        g->nodes[node].dead = 1;
        return 0;
    }
    g->nodes[f->node].dead = 1;
    return 1;
}

static int fold_conv(Fold *f, int is_mul)
{
    IrGraph *g = f->g;
    const IrNode *p = &g->nodes[f->prod];
    int x = p->in[0], w = p->in[1], b = p->n_in > 2 ? p->in[2] : -1;
    const IrShape *o = &g->tensors[p->out[0]].v.shape;
    int64_t m = o->dims[1];
    IrDType dt = g->tensors[p->out[0]].v.dtype;
    if (!axis_vector(pass_value(g, f->c), o, 1, f->v) || (b >= 0 && !pass_value(g, b)))
        return 0;
    int in[3] = { x, w, b };
    const IrArray *bv = b >= 0 ? pass_value(g, b) : NULL;
    if (is_mul) {
        if (p->op != IR_OP_Conv || !pass_value(g, w))
            return 0;
        const IrArray *wa = pass_value(g, w);
        if (wa->shape.dims[0] != m)
            return 0;
        int64_t inner = ir_array_numel(wa) / (m ? m : 1);
        if ((in[1] = scaled_copy(f, w, inner ? inner : 1, m)) < 0)
            return -1;
        if (b >= 0 && (in[2] = vector_const(f, g->tensors[b].name, dt, m, bv, 1, f->v, NULL)) < 0)
            return in[2] == -2 ? 0 : -1;
    } else {
        if ((in[2] = vector_const(f, b >= 0 ? g->tensors[b].name : "bias", dt, m, bv, 1, NULL, f->v)) < 0)
            return in[2] == -2 ? 0 : -1;
    }
    return refold(f, in[2] >= 0 ? 3 : 2, in, 0, 0, 0, 0);
}

static int fold_gemm(Fold *f, int is_mul)
{
    IrGraph *g = f->g;
    const IrNode *p = &g->nodes[f->prod];
    const IrShape *o = &g->tensors[p->out[0]].v.shape;
    IrDType dt = g->tensors[p->out[0]].v.dtype;
    int64_t n = o->dims[1];
    int in[3] = { p->in[0], p->in[1], p->n_in > 2 ? p->in[2] : -1 };
    const IrArray *cv = in[2] >= 0 ? pass_value(g, in[2]) : NULL;
    if (in[2] >= 0 && !cv)
        return 0;
    double beta = ir_attr_float(p, IR_A_beta);
    if (is_mul) {
        if (!axis_vector(pass_value(g, f->c), o, 1, f->v) || !pass_value(g, in[1]))
            return 0;
        int tb = ir_attr_int(p, IR_A_transB) != 0;
        const IrArray *wb = pass_value(g, in[1]);
        /* B is [K, N] (column n: inner 1, count N) or, transposed, [N, K] */
        if ((in[1] = scaled_copy(f, in[1], tb ? wb->shape.dims[1] : 1, n)) < 0)
            return -1;
        if (cv && (in[2] = vector_const(f, g->tensors[in[2]].name, dt, n, cv, 1, f->v, NULL)) < 0)
            return in[2] == -2 ? 0 : -1;
        return refold(f, in[2] >= 0 ? 3 : 2, in, 0, 0, 0, 0);
    }
    if (!axis_vector(pass_value(g, f->c), o, 1, f->v))
        return 0;                                  /* a shift that varies by row stays an Add */
    if ((in[2] = vector_const(f, cv ? g->tensors[in[2]].name : "bias", dt, n, cv, beta, NULL, f->v)) < 0)
        return in[2] == -2 ? 0 : -1;
    return refold(f, 3, in, 0, 0, IR_A_beta, 1.0);
}

static int fold_matmul(Fold *f, int is_mul)
{
    IrGraph *g = f->g;
    const IrNode *p = &g->nodes[f->prod];
    int a = p->in[0], w = p->in[1];
    const IrArray *wa = pass_value(g, w);
    const IrShape *o = &g->tensors[p->out[0]].v.shape;
    if (!wa || wa->shape.rank != 2 || !axis_vector(pass_value(g, f->c), o, o->rank - 1, f->v))
        return 0;
    int64_t n = wa->shape.dims[1];
    int in[3] = { a, w, -1 };
    if (is_mul) {
        if ((in[1] = scaled_copy(f, w, 1, n)) < 0)
            return -1;
        return refold(f, 2, in, 0, 0, 0, 0);
    }
    if (g->tensors[a].v.shape.rank != 2)
        return 0;
    IrDType dt = g->tensors[p->out[0]].v.dtype;
    if ((in[2] = vector_const(f, "bias", dt, n, NULL, 0, NULL, f->v)) < 0)
        return -1;
    /* MatMul + t = Gemm(A, W, t): a new operator, not a copy of the producer */
    int node = pass_emit_node(g, IR_OP_Gemm, g->tensors[g->nodes[f->node].out[0]].name, 3, in, 1, -1, p->loc);
    if (node < 0)
        return oom(g, f->d);
    int r = pass_emit_done(g, node, f->d);
    if (r < 0)
        return -1;
    if (pass_replace(g, g->nodes[f->node].out[0], r)) {
        g->nodes[node].dead = 1;
        return 0;
    }
    g->nodes[f->node].dead = 1;
    return 1;
}

/* Node i is Mul / Add of a single-use Conv / Gemm / MatMul output and a
 * constant: 1 folded, 0 not, -1 error. */
static int try_fold(IrGraph *g, int i, UtilDiag *d)
{
    const IrNode *n = &g->nodes[i];
    if (n->dead || (n->op != IR_OP_Mul && n->op != IR_OP_Add) || n->n_in != 2 || g->tensors[n->out[0]].v.data)
        return 0;
    for (int side = 0; side < 2; side++) {
        int t = n->in[side], c = n->in[1 - side];
        int prod = g->tensors[t].producer;
        if (!pass_value(g, c) || pass_value(g, t) || prod < 0 || g->nodes[prod].dead || !pass_single_use(g, t))
            continue;
        IrOp op = g->nodes[prod].op;
        if (!ir_dtype_is_float(g->tensors[t].v.dtype) || g->nodes[prod].n_out != 1)
            continue;
        const IrShape *o = &g->tensors[t].v.shape;
        if (!ir_shape_equal(o, &g->tensors[n->out[0]].v.shape) || o->rank < 2)
            continue;
        double *v = calloc((size_t)o->dims[op == IR_OP_MatMul ? o->rank - 1 : 1] + 1, sizeof *v);
        if (!v)
            return oom(g, d);
        Fold f = { g, d, i, prod, c, v };
        int r = 0, is_mul = n->op == IR_OP_Mul;
        if (op == IR_OP_Conv || (op == IR_OP_ConvTranspose && !is_mul))
            r = fold_conv(&f, is_mul);
        else if (op == IR_OP_Gemm)
            r = fold_gemm(&f, is_mul);
        else if (op == IR_OP_MatMul)
            r = fold_matmul(&f, is_mul);
        free(v);
        if (r)
            return r;
        n = &g->nodes[i];
    }
    return 0;
}

int pass_fold_weights(IrGraph *g, UtilDiag *d)
{
    int changes = 0;
    for (int i = 0; i < g->n_nodes; i++) {      /* new producers are appended: chains fold in one sweep */
        int r = try_fold(g, i, d);
        if (r < 0)
            return -1;
        changes += r;
    }
    return changes ? pass_dce(g, d) < 0 ? -1 : changes : 0;
}
