/* passes/simplify.c — algebraic simplification driven by a rule table.
 *
 * Each rule (passes/rules.def) is a pattern over the producers of a node's
 * inputs, an optional guard, and a rewrite: a template of new nodes over the
 * captured tensors, or a builder function where attributes must be computed
 * (composed permutations, flipped transA, Clip bounds).  New nodes whose
 * inputs are all constant are evaluated at once (pass_emit), so a template
 * like x * (c1 * c2) leaves one Mul with a folded constant.  A rewrite applies
 * only when its result has exactly the dtype and shape of the node it
 * replaces.  The pass sweeps the graph until no rule fires (at most 32
 * sweeps), then drops what became dead. */
#include "passes/pass_impl.h"

#include <math.h>
#include <string.h>

/* ------------------------------------------------------------ patterns */

typedef enum PatKind {
    PK_ANY,      /* any tensor; captured in t[slot] (the same slot twice: the same tensor) */
    PK_KNOWN,    /* a tensor with a compile-time value; captured in t[slot] */
    PK_VALUE,    /* a known tensor whose elements all equal `value` */
    PK_OP,       /* output 0 of a live node of `op`; node captured in node[slot] */
    PK_VIEW,     /* same, for any view operator (Reshape, Flatten, Squeeze, Unsqueeze) */
} PatKind;

typedef struct Pat {
    PatKind kind;
    int slot;
    IrOp op;
    double value;
    int n;                       /* PK_OP / PK_VIEW: inputs matched (later inputs are free) */
    const struct Pat *in[2];
} Pat;

typedef enum TplKind {
    TK_TENSOR,   /* captured tensor t[slot] */
    TK_NODEOUT,  /* output 0 of captured node node[slot] */
    TK_SCALAR,   /* rank-0 constant `value` of t[0]'s dtype */
    TK_OP,       /* new node `op` over the inputs, attributes copied from node[slot] (-1: none) */
} TplKind;

typedef struct Tpl {
    TplKind kind;
    int slot;
    IrOp op;
    double value;
    int n;
    const struct Tpl *in[3];
} Tpl;

#define MAX_CAP 4
typedef struct Match {
    IrGraph *g;
    int t[MAX_CAP];              /* captured tensors */
    int node[MAX_CAP];           /* captured nodes; node[0] is the root */
    int root_out;
    UtilDiag *d;
} Match;

typedef struct Rule {
    const char *name;
    const char *algebra;
    const Pat *pat;
    int (*guard)(const Match *m);
    const Tpl *tpl;
    int (*build)(Match *m);      /* replacement tensor, -1 = no rewrite after all, -2 = error */
} Rule;

/* pattern and template spellings used by rules.def */
#define X  (&(const Pat){ PK_ANY, 0, 0, 0, 0, { 0 } })
#define Y  (&(const Pat){ PK_ANY, 1, 0, 0, 0, { 0 } })
#define C1 (&(const Pat){ PK_KNOWN, 2, 0, 0, 0, { 0 } })
#define C2 (&(const Pat){ PK_KNOWN, 3, 0, 0, 0, { 0 } })
#define VAL(v) (&(const Pat){ PK_VALUE, -1, 0, (v), 0, { 0 } })
#define OP1(o, s, a) (&(const Pat){ PK_OP, s, IR_OP_##o, 0, 1, { a } })
#define OP2(o, s, a, b) (&(const Pat){ PK_OP, s, IR_OP_##o, 0, 2, { a, b } })
#define VIEW(s, a) (&(const Pat){ PK_VIEW, s, 0, 0, 1, { a } })

#define T_X  (&(const Tpl){ TK_TENSOR, 0, 0, 0, 0, { 0 } })
#define T_Y  (&(const Tpl){ TK_TENSOR, 1, 0, 0, 0, { 0 } })
#define T_C1 (&(const Tpl){ TK_TENSOR, 2, 0, 0, 0, { 0 } })
#define T_C2 (&(const Tpl){ TK_TENSOR, 3, 0, 0, 0, { 0 } })
#define T_INNER (&(const Tpl){ TK_NODEOUT, 1, 0, 0, 0, { 0 } })
#define T_NUM(v) (&(const Tpl){ TK_SCALAR, 0, 0, (v), 0, { 0 } })
#define T_OP1(o, s, a) (&(const Tpl){ TK_OP, s, IR_OP_##o, 0, 1, { a } })
#define T_OP2(o, s, a, b) (&(const Tpl){ TK_OP, s, IR_OP_##o, 0, 2, { a, b } })

/* ------------------------------------------------------------ guards */

static const IrTensor *cap(const Match *m, int slot) { return &m->g->tensors[m->t[slot]]; }
static const IrNode *root(const Match *m) { return &m->g->nodes[m->node[0]]; }

/* Arithmetic rules change rounding or rely on IEEE identities: floating
 * point tensors only (integer shape arithmetic is folded, not simplified). */
static int g_float(const Match *m) { return ir_dtype_is_float(cap(m, 0)->v.dtype); }

/* The HardSigmoid (node 1) is HardSwish's: alpha 1/6 (as float32, as
 * exporters write it), beta 1/2. */
static int g_hardsigmoid_sixth(const Match *m)
{
    const IrNode *h = &m->g->nodes[m->node[1]];
    return g_float(m) && (float)ir_attr_float(h, IR_A_alpha) == (float)(1.0 / 6) &&
           ir_attr_float(h, IR_A_beta) == 0.5;
}

/* A variadic operator (Concat, Sum, Max, Min, Mean) of one input. */
static int g_one_input(const Match *m) { return root(m)->n_in == 1; }

/* Pad whose pads are all known zeros. */
static int g_pad_zero(const Match *m)
{
    const IrNode *n = root(m);
    const IrArray *p = n->n_in > 1 ? pass_value(m->g, n->in[1]) : NULL;
    if (!p)
        return 0;
    for (int64_t i = 0; i < ir_array_numel(p); i++)
        if (ir_load_i64(p->dtype, p->data, i))
            return 0;
    return 1;
}

/* Slice whose steps are all 1 (or absent): with an unchanged shape it
 * starts at 0 on every sliced axis, so it copies x. */
static int g_unit_steps(const Match *m)
{
    const IrNode *n = root(m);
    if (n->n_in < 5 || n->in[4] < 0)
        return 1;
    double v;
    return pass_value_uniform(m->g, n->in[4], &v) && v == 1;
}

/* Every value of dtype `from` is exactly representable in `to`. */
static int lossless(IrDType from, IrDType to)
{
    if (from == to || from == IR_DT_BOOL)
        return 1;
    if (to == IR_DT_BOOL)
        return 0;
    size_t fs = ir_dtype_size(from), ts = ir_dtype_size(to);
    if (ir_dtype_is_float(from)) {
        if (!ir_dtype_is_float(to))
            return 0;
        if (from == IR_DT_BF16)
            return to == IR_DT_F32 || to == IR_DT_F64;
        return ts > fs && to != IR_DT_BF16;             /* f16 → f32 → f64 */
    }
    /* integers: bits of magnitude against a float's significand or a wider integer */
    int bits = (int)fs * 8 - (ir_dtype_is_signed(from) ? 1 : 0);
    if (ir_dtype_is_float(to)) {
        int mant = to == IR_DT_F64 ? 53 : to == IR_DT_F32 ? 24 : to == IR_DT_F16 ? 11 : 8;
        return bits <= mant;
    }
    if (ir_dtype_is_signed(from) && !ir_dtype_is_signed(to))
        return 0;
    int tbits = (int)ts * 8 - (ir_dtype_is_signed(to) ? 1 : 0);
    return bits <= tbits;
}

/* Cast(Cast(x, T1), T2): T1 holds every value of x exactly. */
static int g_cast_lossless(const Match *m)
{
    const IrNode *inner = &m->g->nodes[m->node[1]];
    return lossless(cap(m, 0)->v.dtype, m->g->tensors[inner->out[0]].v.dtype);
}

/* Transpose with the identity permutation. */
static int perm_of(const IrGraph *g, const IrNode *n, int64_t *p)
{
    const int64_t *v;
    int rank = g->tensors[n->in[0]].v.shape.rank;
    int k = ir_attr_ints(n, IR_A_perm, &v);
    for (int i = 0; i < rank; i++)
        p[i] = k ? v[i] : rank - 1 - i;
    return rank;
}

static int g_identity_perm(const Match *m)
{
    int64_t p[IR_MAX_RANK];
    int r = perm_of(m->g, root(m), p);
    for (int i = 0; i < r; i++)
        if (p[i] != i)
            return 0;
    return 1;
}

/* ------------------------------------------------------------ builders */

/* A new node over in[], attributes of node attrs_from (-1: none), then
 * inferred and maybe folded; the node index in *node. */
static int new_node(Match *m, IrOp op, int n_in, const int *in, int attrs_from, int *node)
{
    *node = pass_emit_node(m->g, op, m->g->tensors[m->root_out].name, n_in, in, 1, attrs_from,
                           m->g->nodes[m->node[0]].loc);
    if (*node < 0)
        return util_error(m->d, util_loc_file(m->g->file), "out of memory"), -2;
    return 0;
}

static int set_int(Match *m, int node, IrAttrKey key, int64_t v)
{
    IrAttr a = { .key = key, .kind = IR_AK_INT, .v.i = v };
    return ir_set_attr(m->g, node, &a) ? (util_error(m->d, util_loc_file(m->g->file), "out of memory"), -2) : 0;
}

static int done(Match *m, int node)
{
    int r = pass_emit_done(m->g, node, m->d);
    return r < 0 ? -2 : r;
}

/* T(T(x, p1), p2) = T(x, q) with q[i] = p1[p2[i]]; x itself when q = id. */
static int b_transpose_transpose(Match *m)
{
    int64_t p1[IR_MAX_RANK], p2[IR_MAX_RANK], q[IR_MAX_RANK];
    int r = perm_of(m->g, &m->g->nodes[m->node[1]], p1);
    perm_of(m->g, root(m), p2);
    int id = 1;
    for (int i = 0; i < r; i++) {
        q[i] = p1[p2[i]];
        id &= q[i] == i;
    }
    if (id)
        return m->t[0];
    int node, rc;
    if ((rc = new_node(m, IR_OP_Transpose, 1, &m->t[0], -1, &node)))
        return rc;
    IrAttr a = { .key = IR_A_perm, .kind = IR_AK_INTS, .n = r, .v.ints = q };
    if (ir_set_attr(m->g, node, &a))
        return util_error(m->d, util_loc_file(m->g->file), "out of memory"), -2;
    return done(m, node);
}

/* view(view(x)) = Reshape(x, the final shape) (x when that is x's shape). */
static int b_view_view(Match *m)
{
    const IrTensor *out = &m->g->tensors[m->root_out];
    if (ir_shape_equal(&out->v.shape, &cap(m, 0)->v.shape))
        return m->t[0];
    IrShape s = out->v.shape;
    int zero = 0;
    for (int i = 0; i < s.rank; i++)
        zero |= s.dims[i] == 0;
    int in[2] = { m->t[0], pass_const_ints(m->g, "shape", s.rank, s.dims) }, node, rc;
    if (in[1] < 0)
        return util_error(m->d, util_loc_file(m->g->file), "out of memory"), -2;
    if ((rc = new_node(m, IR_OP_Reshape, 2, in, -1, &node)))
        return rc;
    if (zero && (rc = set_int(m, node, IR_A_allowzero, 1)))     /* a 0 in the shape means 0 */
        return rc;
    return done(m, node);
}

/* 1 when the tensor is a rank-2 Transpose output swapping its axes. */
static int is_swap2(const IrGraph *g, const IrNode *t)
{
    int64_t p[IR_MAX_RANK];
    return t->op == IR_OP_Transpose && perm_of(g, t, p) == 2 && p[0] == 1 && p[1] == 0;
}

/* Gemm(T(a), b, c) = Gemm(a, b, c) with transA flipped (b: transB). */
static int gemm_flip(Match *m, int which)
{
    const IrNode *t = &m->g->nodes[m->node[1]];
    if (!is_swap2(m->g, t))
        return -1;
    const IrNode *n = root(m);
    int in[3], nin = n->n_in;
    for (int k = 0; k < nin; k++)
        in[k] = n->in[k];
    in[which] = t->in[0];
    IrAttrKey key = which ? IR_A_transB : IR_A_transA;
    int64_t old = ir_attr_int(n, key);
    int node, rc;
    if ((rc = new_node(m, IR_OP_Gemm, nin, in, m->node[0], &node)) || (rc = set_int(m, node, key, !old)))
        return rc;
    return done(m, node);
}
static int b_gemm_trans_a(Match *m) { return gemm_flip(m, 0); }
static int b_gemm_trans_b(Match *m) { return gemm_flip(m, 1); }

/* MatMul(T(a), b) = Gemm(a, b, transA=1) for 2-D a and b (b: transB). */
static int matmul_flip(Match *m, int which)
{
    const IrNode *t = &m->g->nodes[m->node[1]];
    const IrNode *n = root(m);
    if (!is_swap2(m->g, t) || ir_in(m->g, n, 0)->v.shape.rank != 2 || ir_in(m->g, n, 1)->v.shape.rank != 2)
        return -1;
    int in[2] = { n->in[0], n->in[1] };
    in[which] = t->in[0];
    int node, rc;
    if ((rc = new_node(m, IR_OP_Gemm, 2, in, -1, &node)) ||
        (rc = set_int(m, node, which ? IR_A_transB : IR_A_transA, 1)))
        return rc;
    return done(m, node);
}
static int b_matmul_trans_a(Match *m) { return matmul_flip(m, 0); }
static int b_matmul_trans_b(Match *m) { return matmul_flip(m, 1); }

/* A Clip bound: input k of node n, known and uniform; absent → *present = 0. */
static int clip_bound(const Match *m, const IrNode *n, int k, double *v, int *present)
{
    *present = n->n_in > k && n->in[k] >= 0;
    return !*present || pass_value_uniform(m->g, n->in[k], v);
}

/* Clip(x) with the given bounds (absent when !has). */
static int emit_clip(Match *m, int has_lo, double lo, int has_hi, double hi)
{
    IrDType dt = cap(m, 0)->v.dtype;
    int in[3] = { m->t[0], -1, -1 }, n_in = 1;
    if (has_lo && (in[1] = pass_const_scalar(m->g, "min", dt, lo)) < 0)
        return -2;
    if (has_hi && (in[2] = pass_const_scalar(m->g, "max", dt, hi)) < 0)
        return -2;
    n_in = has_hi ? 3 : has_lo ? 2 : 1;
    int node, rc;
    if ((rc = new_node(m, IR_OP_Clip, n_in, in, -1, &node)))
        return rc;
    return done(m, node);
}

/* Clip(Relu(x), lo, hi) = Clip(x, max(lo, 0), hi). */
static int b_clip_relu(Match *m)
{
    double lo = 0, hi = 0;
    int has_lo, has_hi;
    if (!clip_bound(m, root(m), 1, &lo, &has_lo) || !clip_bound(m, root(m), 2, &hi, &has_hi))
        return -1;
    return emit_clip(m, 1, has_lo ? fmax(lo, 0) : 0, has_hi, hi);
}

/* Relu(Clip(x, lo, hi)) = Clip(x, max(lo, 0), max(hi, 0)). */
static int b_relu_clip(Match *m)
{
    const IrNode *c = &m->g->nodes[m->node[1]];
    double lo = 0, hi = 0;
    int has_lo, has_hi;
    if (!clip_bound(m, c, 1, &lo, &has_lo) || !clip_bound(m, c, 2, &hi, &has_hi))
        return -1;
    return emit_clip(m, 1, has_lo ? fmax(lo, 0) : 0, has_hi, fmax(hi, 0));
}

/* Clip(Clip(x, a, b), c, e) = Clip(x, max(a, c), min(b, e)) when both
 * ranges are ordered and intersect (else the inner clip decides alone). */
static int b_clip_clip(Match *m)
{
    const IrNode *o = root(m), *i = &m->g->nodes[m->node[1]];
    double a = -INFINITY, b = INFINITY, c = -INFINITY, e = INFINITY;
    int ha, hb, hc, he;
    if (!clip_bound(m, i, 1, &a, &ha) || !clip_bound(m, i, 2, &b, &hb) || !clip_bound(m, o, 1, &c, &hc) ||
        !clip_bound(m, o, 2, &e, &he))
        return -1;
    if (!ha) a = -INFINITY;
    if (!hb) b = INFINITY;
    if (!hc) c = -INFINITY;
    if (!he) e = INFINITY;
    double lo = fmax(a, c), hi = fmin(b, e);
    if (!(a <= b && c <= e && lo <= hi))
        return -1;
    return emit_clip(m, ha || hc, lo, hb || he, hi);
}

/* Max(x, c) = Clip(x, c) and Min(x, c) = Clip(x, -, c) for a uniform c. */
static int minmax_clip(Match *m, int is_max)
{
    double c;
    if (root(m)->n_in != 2 || !pass_value_uniform(m->g, m->t[2], &c))
        return -1;
    return is_max ? emit_clip(m, 1, c, 0, 0) : emit_clip(m, 0, 0, 1, c);
}
static int b_max_clip(Match *m) { return minmax_clip(m, 1); }
static int b_min_clip(Match *m) { return minmax_clip(m, 0); }

/* ------------------------------------------------------------ the table */

static const Rule rules[] = {
#define RULE(name, algebra, pat, guard, tpl, build) { #name, algebra, pat, guard, tpl, build },
#include "passes/rules.def"
#undef RULE
};
#define N_RULES ((int)(sizeof rules / sizeof rules[0]))

int pass_simplify_rule(int i, const char **name, const char **algebra)
{
    if (i >= 0 && i < N_RULES) {
        *name = rules[i].name;
        *algebra = rules[i].algebra;
    }
    return N_RULES;
}

/* ------------------------------------------------------------ matching */

static int is_view(IrOp op)
{
    return op == IR_OP_Reshape || op == IR_OP_Flatten || op == IR_OP_Squeeze || op == IR_OP_Unsqueeze;
}

static int match_node(Match *m, const Pat *p, int node);

static int match_tensor(Match *m, const Pat *p, int t)
{
    if (t < 0)
        return 0;
    const IrGraph *g = m->g;
    switch (p->kind) {
    case PK_ANY:
    case PK_KNOWN:
        if (p->kind == PK_KNOWN && !pass_value(g, t))
            return 0;
        if (m->t[p->slot] >= 0)
            return m->t[p->slot] == t;
        m->t[p->slot] = t;
        return 1;
    case PK_VALUE:
        return pass_value_is(g, t, p->value);
    case PK_OP:
    case PK_VIEW: {
        int prod = g->tensors[t].producer;
        if (prod < 0 || g->nodes[prod].dead || g->nodes[prod].out[0] != t || g->tensors[t].v.data)
            return 0;
        if (!pass_single_use(m->g, t))     /* an interior node used elsewhere would be computed twice */
            return 0;
        return match_node(m, p, prod);
    }
    }
    return 0;
}

/* A node matches with at least the pattern's inputs (later optional inputs
 * are the guard's business); variadic operators with exactly as many. */
static int match_node(Match *m, const Pat *p, int node)
{
    const IrNode *n = &m->g->nodes[node];
    if (p->kind == PK_VIEW ? !is_view(n->op) : n->op != p->op)
        return 0;
    if (n->n_in < p->n || (ir_op_info(n->op)->max_in == IR_VARIADIC && n->n_in != p->n))
        return 0;
    m->node[p->slot] = node;
    Match save = *m;
    int ok = 1;
    for (int k = 0; k < p->n && ok; k++)
        ok = match_tensor(m, p->in[k], n->in[k]);
    if (ok)
        return 1;
    if (p->n == 2 && (ir_op_info(n->op)->flags & IR_OPF_COMM)) {     /* b op a */
        *m = save;
        n = &m->g->nodes[node];
        return match_tensor(m, p->in[0], n->in[1]) && match_tensor(m, p->in[1], n->in[0]);
    }
    return 0;
}

/* ------------------------------------------------------------ rewriting */

static int instantiate(Match *m, const Tpl *t)
{
    switch (t->kind) {
    case TK_TENSOR:
        return m->t[t->slot];
    case TK_NODEOUT:
        return m->g->nodes[m->node[t->slot]].out[0];
    case TK_SCALAR: {
        int c = pass_const_scalar(m->g, "c", cap(m, 0)->v.dtype, t->value);
        return c < 0 ? (util_error(m->d, util_loc_file(m->g->file), "out of memory"), -2) : c;
    }
    case TK_OP: {
        int in[3];
        for (int k = 0; k < t->n; k++)
            if ((in[k] = instantiate(m, t->in[k])) < 0)
                return in[k];
        int node, rc;
        if ((rc = new_node(m, t->op, t->n, in, t->slot >= 0 ? m->node[t->slot] : -1, &node)))
            return rc;
        return done(m, node);
    }
    }
    return -1;
}

/* Tries rule r at node i: 1 rewritten, 0 not, -1 error. */
static int try_rule(IrGraph *g, const Rule *r, int i, UtilDiag *d)
{
    Match m = { .g = g, .d = d, .root_out = g->nodes[i].out[0] };
    for (int k = 0; k < MAX_CAP; k++)
        m.t[k] = m.node[k] = -1;
    if (!match_node(&m, r->pat, i) || (r->guard && !r->guard(&m)))
        return 0;
    int first_new = g->n_nodes;
    int rep = r->build ? r->build(&m) : instantiate(&m, r->tpl);
    if (rep == -2)
        return -1;
    const IrTensor *a = &g->tensors[m.root_out], *b = rep >= 0 ? &g->tensors[rep] : NULL;
    if (!b || !b->shape_known || b->v.dtype != a->v.dtype || !ir_shape_equal(&b->v.shape, &a->v.shape) ||
        pass_replace(g, m.root_out, rep)) {
        for (int k = first_new; k < g->n_nodes; k++)    /* undo: what the rewrite built dies */
            g->nodes[k].dead = 1;
        g->uses_valid = 0;
        return 0;
    }
    g->nodes[i].dead = 1;
    g->uses_valid = 0;
    return 1;
}

int pass_simplify(IrGraph *g, UtilDiag *d)
{
    int changes = 0;
    for (int sweep = 0; sweep < 32; sweep++) {
        int fired = 0;
        for (int i = 0; i < g->n_nodes; i++) {
            for (int r = 0; r < N_RULES; r++) {
                const IrNode *n = &g->nodes[i];
                if (n->dead || n->n_out != 1 || n->out[0] < 0 || g->tensors[n->out[0]].v.data)
                    break;
                const Pat *p = rules[r].pat;
                if (p->kind == PK_VIEW ? !is_view(n->op) : p->op != n->op)
                    continue;
                int rc = try_rule(g, &rules[r], i, d);
                if (rc < 0)
                    return -1;
                if (rc) {
                    fired++;
                    break;
                }
            }
        }
        changes += fired;
        if (!fired)
            break;
    }
    if (!changes)
        return 0;
    return pass_dce(g, d) < 0 ? -1 : changes;
}
