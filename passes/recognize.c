/* passes/recognize.c — decomposed normalizations and activations back into
 * the one operator they spell (docs/passes.md, "Recognition"), so each
 * lowers to one kernel (low_layernorm, low_softmax, one elementwise
 * function).  The forms are what PyTorch exports at opset 13, after the
 * simplifier has run (x ^ 2 is x * x, x / c is x * (1/c)):
 *
 *   LayerNormalization(x, axis = a, epsilon = eps, Scale = gamma, B = beta):
 *     m = ReduceMean(x, axes = [a .. r-1]);  d = x - m
 *     v = ReduceMean(d * d  or  d ^ 2, same axes);  y = d / Sqrt(v + eps)
 *     [y = y * gamma]  [y = y + beta]          (gamma, beta constants)
 *   Softmax(x, axis = a):
 *     e = Exp(x - ReduceMax(x, [a]))  or  e = Exp(x);  y = e / ReduceSum(e, [a])
 *   Gelu(x) (erf form):
 *     y = (x * (1 + Erf(x * 1/sqrt(2)  or  x / sqrt(2)))) * 0.5
 *
 * Every intermediate must be read only inside the pattern (and be no graph
 * output); otherwise the decomposition stays.  The rewritten node computes
 * the same function up to rounding (Softmax subtracts the maximum even when
 * the decomposition did not: the exact quotient is the same). */
#include "passes/pass_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The live node producing t as its output 0 (a runtime value), or -1. */
static int prod(const IrGraph *g, int t, IrOp op)
{
    if (t < 0 || g->tensors[t].v.data)
        return -1;
    int p = g->tensors[t].producer;
    return p >= 0 && !g->nodes[p].dead && g->nodes[p].op == op && g->nodes[p].out[0] == t ? p : -1;
}

/* The other input of binary node n (which reads t at one slot), or -1. */
static int other(const IrNode *n, int t)
{
    if (n->n_in != 2)
        return -1;
    return n->in[0] == t ? n->in[1] : n->in[1] == t ? n->in[0] : -1;
}

static int is_output(const IrGraph *g, int t)
{
    for (int o = 0; o < g->n_outputs; o++)
        if (g->outputs[o] == t)
            return 1;
    return 0;
}

/* Every use of t is by one of the nodes users[0..n) and t is no graph output. */
static int used_only_by(const IrGraph *g, int t, const int *users, int n)
{
    if (t < 0 || is_output(g, t))
        return 0;
    for (int u = g->use_start[t]; u < g->use_start[t + 1]; u++) {
        int ok = 0;
        for (int i = 0; i < n; i++)
            ok |= g->use_node[u] == users[i];
        if (!ok)
            return 0;
    }
    return 1;
}

/* The only consumer of t (t no graph output), or -1. */
static int sole_user(const IrGraph *g, int t)
{
    if (t < 0 || is_output(g, t) || g->use_start[t + 1] == g->use_start[t])
        return -1;
    int u = g->use_node[g->use_start[t]];
    return used_only_by(g, t, &u, 1) ? u : -1;
}

/* Reduce node r over x keeping dims: its normalized axes as a bit set (0
 * when unknown, empty or not kept). */
static unsigned reduce_axes(const IrGraph *g, const IrNode *r)
{
    if (ir_attr_int(r, IR_A_keepdims) == 0 || r->n_in < 2)
        return 0;
    const IrArray *a = pass_value(g, r->in[1]);
    int rank = g->tensors[r->in[0]].v.shape.rank;
    if (!a || ir_array_numel(a) < 1)
        return 0;
    unsigned set = 0;
    for (int64_t i = 0; i < ir_array_numel(a); i++) {
        int64_t ax = ir_load_i64(a->dtype, a->data, i);
        if (ax < 0)
            ax += rank;
        if (ax < 0 || ax >= rank)
            return 0;
        set |= 1u << ax;
    }
    return set;
}

/* The first axis of a trailing run {a .. rank-1}, or -1. */
static int trailing_axis(unsigned set, int rank)
{
    int a = rank;
    while (a > 0 && (set & (1u << (a - 1))))
        a--;
    return a < rank && set == ((1u << rank) - 1) - ((1u << a) - 1) ? a : -1;
}

/* The single axis of set, or -1. */
static int one_axis(unsigned set)
{
    for (int a = 0; a < IR_MAX_RANK; a++)
        if (set == 1u << a)
            return a;
    return -1;
}

static int float_value(const IrGraph *g, int t) { return t >= 0 && ir_dtype_is_float(g->tensors[t].v.dtype); }

/* Replaces tensor `old` (the pattern's result) by output 0 of a new node op
 * over in[] (axis / epsilon set when >= 0 / given) and kills nodes
 * dead[0..n).  1 on success, 0 when the replacement is impossible, -1 on
 * error. */
static int replace(IrGraph *g, int old, IrOp op, int n_in, const int *in, int64_t axis, const double *eps,
                   const int *dead, int n, UtilDiag *d)
{
    int first_new = g->n_nodes;
    int node = pass_emit_node(g, op, g->tensors[old].name, n_in, in, 1, -1, g->nodes[dead[0]].loc);
    if (node < 0)
        return util_error(d, util_loc_file(g->file), "out of memory");
    IrAttr a = { .key = IR_A_axis, .kind = IR_AK_INT, .v.i = axis };
    IrAttr e = { .key = IR_A_epsilon, .kind = IR_AK_FLOAT, .v.f = eps ? *eps : 0 };
    if ((axis >= 0 && ir_set_attr(g, node, &a)) || (eps && ir_set_attr(g, node, &e)))
        return util_error(d, util_loc_file(g->file), "out of memory");
    int y = pass_emit_done(g, node, d);
    if (y < 0)
        return -1;
    return pass_commit(g, old, y, first_new, dead, n);
}

/* A constant c (Mul / Add operand of y of shape x) as a tensor of the
 * normalized shape x.shape[axis..]: c may broadcast only along the
 * normalized dims.  -1 when it does not fit, -2 on out of memory. */
static int normalized_const(IrGraph *g, int c, const IrShape *x, int axis)     /* x: not into g->tensors */
{
    const IrArray *v = pass_value(g, c);
    if (!v || v->shape.rank > x->rank)
        return -1;
    int off = x->rank - v->shape.rank;
    for (int i = 0; i < v->shape.rank; i++) {
        int64_t dim = v->shape.dims[i];
        if (dim != 1 && (off + i < axis || dim != x->dims[off + i]))
            return -1;
    }
    IrShape ns = { .rank = x->rank - axis };
    for (int i = 0; i < ns.rank; i++)
        ns.dims[i] = x->dims[axis + i];
    int t = pass_new_const(g, g->tensors[c].name, g->tensors[c].v.dtype, &ns);
    if (t < 0)
        return -2;
    v = pass_value(g, c);
    int64_t n = ir_shape_numel(&ns);
    for (int64_t i = 0; i < n; i++) {
        int64_t rem = i, src = 0, stride = 1;
        for (int k = ns.rank - 1; k >= 0; k--) {     /* index of element i along each normalized dim */
            int64_t j = rem % ns.dims[k];
            rem /= ns.dims[k];
            int vd = axis + k - off;               /* that dim in c, if c has it */
            if (vd >= 0) {
                if (v->shape.dims[vd] != 1)
                    src += j * stride;
                stride *= v->shape.dims[vd];
            }
        }
        ir_store_f64(v->dtype, g->tensors[t].v.data, i, ir_load_f64(v->dtype, v->data, src));
    }
    return t;
}

/* --------------------------------------------------------- LayerNorm */

static int layernorm_at(IrGraph *g, int r1, UtilDiag *d)
{
    const IrNode *mean = &g->nodes[r1];
    int x = mean->in[0];
    if (!float_value(g, x))
        return 0;
    const IrShape xshape = g->tensors[x].v.shape, *xs = &xshape;   /* a copy: constants get added below */
    unsigned axes = reduce_axes(g, mean);
    int axis = trailing_axis(axes, xs->rank);
    if (axis < 0)
        return 0;
    int nodes[10], n = 0;
    nodes[n++] = r1;
    int sub = sole_user(g, mean->out[0]);
    if (sub < 0 || g->nodes[sub].op != IR_OP_Sub || g->nodes[sub].in[0] != x || g->nodes[sub].in[1] != mean->out[0])
        return 0;
    nodes[n++] = sub;
    int dt = g->nodes[sub].out[0];
    if (g->use_start[dt + 1] - g->use_start[dt] < 2)
        return 0;
    /* the square and the division are d's consumers */
    int sq = -1, div = -1;
    for (int u = g->use_start[dt]; u < g->use_start[dt + 1]; u++) {
        int c = g->use_node[u];
        const IrNode *cn = &g->nodes[c];
        if (cn->op == IR_OP_Div && cn->in[0] == dt && cn->in[1] != dt)
            div = c;
        else if ((cn->op == IR_OP_Mul && cn->in[0] == dt && cn->in[1] == dt) ||
                 (cn->op == IR_OP_Pow && cn->in[0] == dt && pass_value_is(g, cn->in[1], 2)))
            sq = c;
    }
    int users[2] = { sq, div };
    if (sq < 0 || div < 0 || !used_only_by(g, dt, users, 2))
        return 0;
    nodes[n++] = sq;
    int r2 = sole_user(g, g->nodes[sq].out[0]);
    if (r2 < 0 || g->nodes[r2].op != IR_OP_ReduceMean || reduce_axes(g, &g->nodes[r2]) != axes)
        return 0;
    nodes[n++] = r2;
    int add = sole_user(g, g->nodes[r2].out[0]);
    double eps;
    if (add < 0 || g->nodes[add].op != IR_OP_Add ||
        !pass_value_uniform(g, other(&g->nodes[add], g->nodes[r2].out[0]), &eps) ||
        !ir_shape_equal(&g->tensors[g->nodes[add].out[0]].v.shape, &g->tensors[g->nodes[r2].out[0]].v.shape))
        return 0;
    nodes[n++] = add;
    int rt = sole_user(g, g->nodes[add].out[0]);
    if (rt < 0 || g->nodes[rt].op != IR_OP_Sqrt || sole_user(g, g->nodes[rt].out[0]) != div ||
        g->nodes[div].in[1] != g->nodes[rt].out[0])
        return 0;
    nodes[n++] = rt;
    nodes[n++] = div;
    /* optional affine: y * gamma, then + beta (only after a gamma) */
    int y = g->nodes[div].out[0], in[3] = { x, -1, -1 };
    static const IrOp affine[2] = { IR_OP_Mul, IR_OP_Add };
    for (int k = 0; k < 2; k++) {
        int u = sole_user(g, y);
        if (u < 0 || g->nodes[u].op != affine[k] || !ir_shape_equal(&g->tensors[g->nodes[u].out[0]].v.shape, xs))
            break;
        int c = normalized_const(g, other(&g->nodes[u], y), xs, axis);
        if (c == -2)
            return util_error(d, util_loc_file(g->file), "out of memory");
        if (c < 0)
            break;
        in[1 + k] = c;
        nodes[n++] = u;
        y = g->nodes[u].out[0];
    }
    if (in[1] < 0) {                                  /* Scale is required: ones */
        IrShape ns = { .rank = xs->rank - axis };
        for (int i = 0; i < ns.rank; i++)
            ns.dims[i] = xs->dims[axis + i];
        if ((in[1] = pass_new_const(g, "scale", g->tensors[x].v.dtype, &ns)) < 0)
            return util_error(d, util_loc_file(g->file), "out of memory");
        for (int64_t i = 0; i < ir_shape_numel(&ns); i++)
            ir_store_f64(g->tensors[in[1]].v.dtype, g->tensors[in[1]].v.data, i, 1);
    }
    return replace(g, y, IR_OP_LayerNormalization, in[2] >= 0 ? 3 : 2, in, axis, &eps, nodes, n, d);
}

/* ----------------------------------------------------------- Softmax */

static int softmax_at(IrGraph *g, int dv, UtilDiag *d)
{
    const IrNode *div = &g->nodes[dv];
    int e = div->in[0], ex = prod(g, e, IR_OP_Exp), rs = prod(g, div->in[1], IR_OP_ReduceSum);
    if (ex < 0 || rs < 0 || g->nodes[rs].in[0] != e || !float_value(g, e))
        return 0;
    int axis = one_axis(reduce_axes(g, &g->nodes[rs]));
    int users[2] = { rs, dv };
    if (axis < 0 || !used_only_by(g, e, users, 2) || sole_user(g, g->nodes[rs].out[0]) != dv)
        return 0;
    int nodes[5] = { dv, rs, ex }, n = 3;
    int x = g->nodes[ex].in[0], sub = prod(g, x, IR_OP_Sub);
    if (sub >= 0 && sole_user(g, x) == ex) {          /* x - ReduceMax(x): the stabilized form */
        const IrNode *s = &g->nodes[sub];
        int mx = prod(g, s->in[1], IR_OP_ReduceMax);
        if (mx >= 0 && g->nodes[mx].in[0] == s->in[0] && sole_user(g, s->in[1]) == sub &&
            one_axis(reduce_axes(g, &g->nodes[mx])) == axis) {
            nodes[n++] = sub;
            nodes[n++] = mx;
            x = s->in[0];
        }
    }
    return replace(g, div->out[0], IR_OP_Softmax, 1, &x, axis, NULL, nodes, n, d);
}

/* -------------------------------------------------------------- Gelu */

static int near(double v, double want) { return fabs(v - want) <= 1e-6 * fabs(want); }

static int gelu_at(IrGraph *g, int ef, UtilDiag *d)
{
    const IrNode *erf = &g->nodes[ef];
    int s = erf->in[0], sn = g->tensors[s].producer;
    double c;
    if (!float_value(g, s) || sn < 0 || sole_user(g, s) != ef || g->nodes[sn].n_in != 2)
        return 0;
    const IrNode *sc = &g->nodes[sn];
    int x;
    if (sc->op == IR_OP_Mul && pass_value_uniform(g, sc->in[1], &c) && near(c, M_SQRT1_2))
        x = sc->in[0];
    else if (sc->op == IR_OP_Mul && pass_value_uniform(g, sc->in[0], &c) && near(c, M_SQRT1_2))
        x = sc->in[1];
    else if (sc->op == IR_OP_Div && pass_value_uniform(g, sc->in[1], &c) && near(c, M_SQRT2))
        x = sc->in[0];
    else
        return 0;
    int add = sole_user(g, erf->out[0]);
    if (add < 0 || g->nodes[add].op != IR_OP_Add || !pass_value_is(g, other(&g->nodes[add], erf->out[0]), 1))
        return 0;
    int m1 = sole_user(g, g->nodes[add].out[0]);
    if (m1 < 0 || g->nodes[m1].op != IR_OP_Mul || other(&g->nodes[m1], g->nodes[add].out[0]) != x)
        return 0;
    int m2 = sole_user(g, g->nodes[m1].out[0]);
    if (m2 < 0 || g->nodes[m2].op != IR_OP_Mul || !pass_value_is(g, other(&g->nodes[m2], g->nodes[m1].out[0]), 0.5))
        return 0;
    const IrShape *xs = &g->tensors[x].v.shape;
    int nodes[5] = { m2, m1, add, ef, sn };
    for (int i = 0; i < 5; i++)                       /* no constant broadcasts x to a larger shape */
        if (!ir_shape_equal(&g->tensors[g->nodes[nodes[i]].out[0]].v.shape, xs))
            return 0;
    return replace(g, g->nodes[m2].out[0], IR_OP_Gelu, 1, &x, -1, NULL, nodes, 5, d);
}

int pass_recognize(IrGraph *g, UtilDiag *d)
{
    int changes = 0;
    int n0 = g->n_nodes;
    for (int i = 0; i < n0; i++) {
        if (g->nodes[i].dead)
            continue;
        if (!g->uses_valid && ir_build_uses(g))
            return util_error(d, util_loc_file(g->file), "out of memory");
        int r = 0;
        switch (g->nodes[i].op) {
        case IR_OP_ReduceMean: r = layernorm_at(g, i, d); break;
        case IR_OP_Div: r = softmax_at(g, i, d); break;
        case IR_OP_Erf: r = gelu_at(g, i, d); break;
        default: break;
        }
        if (r < 0)
            return -1;
        changes += r;
    }
    return pass_finish(g, changes, d);
}
