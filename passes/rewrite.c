/* passes/rewrite.c — graph rewriting helpers shared by the optimization
 * passes: constants, new nodes (inferred, folded when constant), use
 * replacement that keeps graph output names, and the end-of-pass cleanup. */
#include "passes/pass_impl.h"
#include "interp/interp.h"

#include <stdio.h>
#include <string.h>

const IrArray *pass_value(const IrGraph *g, int t)
{
    return t >= 0 && g->tensors[t].v.data ? &g->tensors[t].v : NULL;
}

int pass_value_uniform(const IrGraph *g, int t, double *v)
{
    const IrArray *a = pass_value(g, t);
    if (!a || a->dtype == IR_DT_UNDEF)
        return 0;
    int64_t n = ir_array_numel(a);
    if (n < 1)
        return 0;
    double first = ir_load_f64(a->dtype, a->data, 0);
    for (int64_t i = 1; i < n; i++)
        if (ir_load_f64(a->dtype, a->data, i) != first)
            return 0;
    *v = first;
    return 1;
}

int pass_value_is(const IrGraph *g, int t, double v)
{
    double u;
    return pass_value_uniform(g, t, &u) && u == v;
}

/* A fresh tensor named after hint without the "__N" a previous rewrite
 * appended (so repeated rewrites give x__2, not x__0__1). */
static int fresh(IrGraph *g, const char *hint)
{
    char base[256];
    snprintf(base, sizeof base, "%s", hint);
    char *u = strrchr(base, '_');
    if (u && u > base + 1 && u[-1] == '_' && u[1] && strspn(u + 1, "0123456789") == strlen(u + 1))
        u[-1] = 0;
    return ir_add_temp(g, base);
}

int pass_new_const(IrGraph *g, const char *hint, IrDType dt, const IrShape *s)
{
    int t = fresh(g, hint);
    if (t < 0)
        return -1;
    g->tensors[t].kind = IR_TK_CONST;
    ir_set_type(g, t, dt, s);
    return ir_alloc_data(g, t) ? t : -1;
}

int pass_const_ints(IrGraph *g, const char *hint, int n, const int64_t *v)
{
    IrShape s = { .rank = 1, .dims = { n } };
    int t = pass_new_const(g, hint, IR_DT_I64, &s);
    if (t >= 0 && n)
        memcpy(g->tensors[t].v.data, v, (size_t)n * sizeof *v);
    return t;
}

int pass_const_scalar(IrGraph *g, const char *hint, IrDType dt, double v)
{
    IrShape s = { .rank = 0 };
    int t = pass_new_const(g, hint, dt, &s);
    if (t >= 0)
        ir_store_f64(dt, g->tensors[t].v.data, 0, v);
    return t;
}

int pass_foldable(const IrGraph *g, int i)
{
    const IrNode *n = &g->nodes[i];
    if (n->dead)
        return 0;
    if (!(ir_op_info(n->op)->flags & IR_OPF_SHAPEVAL))
        for (int k = 0; k < n->n_in; k++)
            if (n->in[k] >= 0 && !g->tensors[n->in[k]].v.data)
                return 0;
    int64_t bytes = 0;
    for (int k = 0; k < n->n_out; k++) {
        const IrTensor *t = ir_out(g, n, k);
        if (!t)
            continue;
        if (!t->shape_known)
            return 0;
        bytes += (int64_t)ir_array_bytes(&t->v);
        if (bytes > PASS_FOLD_MAX_BYTES)
            return 0;
    }
    return 1;
}

int pass_fold_node(IrGraph *g, int i, UtilDiag *d)
{
    IrNode *n = &g->nodes[i];
    int have = 1;
    for (int k = 0; k < n->n_out; k++)
        if (n->out[k] >= 0 && !g->tensors[n->out[k]].v.data)
            have = 0;
    if (!have && interp_eval_node(g, i, d))
        return -1;
    n = &g->nodes[i];
    for (int k = 0; k < n->n_out; k++) {
        IrTensor *t = ir_out(g, n, k);
        if (!t)
            continue;
        t->kind = IR_TK_CONST;
        t->producer = -1;
    }
    n->dead = 1;
    g->uses_valid = 0;
    return 0;
}

int pass_emit_node(IrGraph *g, IrOp op, const char *hint, int n_in, const int *in, int n_out, int attrs_from,
                   UtilLoc loc)
{
    int out[8];
    if (n_out > 8)
        return -1;
    for (int k = 0; k < n_out; k++)
        if ((out[k] = fresh(g, hint)) < 0)
            return -1;
    int node = ir_add_node(g, op, hint, n_in, in, n_out, out, loc);
    if (node < 0)
        return -1;
    if (attrs_from >= 0) {
        int na = g->nodes[attrs_from].n_attrs;
        for (int a = 0; a < na; a++) {
            IrAttr at = g->nodes[attrs_from].attrs[a];
            if (ir_set_attr(g, node, &at))
                return -1;
        }
    }
    return node;
}

int pass_emit_done(IrGraph *g, int node, UtilDiag *d)
{
    if (ir_infer_node(g, node, d))
        return -1;
    if (pass_foldable(g, node) && pass_fold_node(g, node, d))
        return -1;
    return g->nodes[node].out[0];
}

int pass_emit(IrGraph *g, IrOp op, const char *hint, int n_in, const int *in, int n_out, int attrs_from,
              UtilLoc loc, UtilDiag *d)
{
    int node = pass_emit_node(g, op, hint, n_in, in, n_out, attrs_from, loc);
    if (node < 0)
        return util_error(d, loc, "out of memory");
    return pass_emit_done(g, node, d);
}

static int is_graph_output(const IrGraph *g, int t)
{
    for (int o = 0; o < g->n_outputs; o++)
        if (g->outputs[o] == t)
            return 1;
    return 0;
}

static int is_graph_input(const IrGraph *g, int t)
{
    for (int i = 0; i < g->n_inputs; i++)
        if (g->inputs[i] == t)
            return 1;
    return 0;
}

static void rewire(IrGraph *g, int from, int to)
{
    for (int i = 0; i < g->n_nodes; i++) {
        IrNode *n = &g->nodes[i];
        if (n->dead)
            continue;
        for (int k = 0; k < n->n_in; k++)
            if (n->in[k] == from)
                n->in[k] = to;
    }
    g->uses_valid = 0;
}

int pass_replace(IrGraph *g, int from, int to)
{
    if (from == to)
        return 0;
    if (!is_graph_output(g, from)) {
        rewire(g, from, to);
        return 0;
    }
    IrTensor *tt = &g->tensors[to];
    if (is_graph_input(g, to) || is_graph_output(g, to))
        return -1;
    if (tt->kind == IR_TK_VALUE && !tt->v.data && tt->producer >= 0 && !g->nodes[tt->producer].dead) {
        IrNode *p = &g->nodes[tt->producer];
        int prod = tt->producer;
        for (int k = 0; k < p->n_out; k++)
            if (p->out[k] == to)
                p->out[k] = from;
        /* from's old producer must stop defining it: the caller kills it,
         * and its output slot moves to `to` (a now unused name) */
        int old = g->tensors[from].producer;
        if (old >= 0 && old != prod)
            for (int k = 0; k < g->nodes[old].n_out; k++)
                if (g->nodes[old].out[k] == from)
                    g->nodes[old].out[k] = to;
        g->tensors[from].producer = prod;
        g->tensors[to].producer = old;
        rewire(g, to, from);
        return 0;
    }
    if (tt->v.data) {                     /* a known value: the output becomes a constant */
        IrTensor *f = &g->tensors[from];
        f->kind = IR_TK_CONST;
        f->v.data = tt->v.data;
        f->producer = -1;
        g->uses_valid = 0;
        return 0;
    }
    return -1;
}

int pass_commit(IrGraph *g, int old, int y, int first_new, const int *dead, int n)
{
    const IrTensor *ot = &g->tensors[old], *nt = &g->tensors[y];
    g->uses_valid = 0;
    if (nt->v.dtype != ot->v.dtype || !ir_shape_equal(&nt->v.shape, &ot->v.shape) || pass_replace(g, old, y)) {
        for (int k = first_new; k < g->n_nodes; k++)
            g->nodes[k].dead = 1;
        return 0;
    }
    for (int i = 0; i < n; i++)
        if (dead[i] >= 0)
            g->nodes[dead[i]].dead = 1;
    return 1;
}

int pass_single_use(IrGraph *g, int t)
{
    if (ir_build_uses(g))
        return 0;                         /* out of memory: assume shared, rewrite nothing */
    return ir_use_count(g, t) == 1 && !is_graph_output(g, t);
}

int pass_finish(IrGraph *g, int changes, UtilDiag *d)
{
    if (changes) {
        ir_compact(g);
        if (ir_toposort(g, d))
            return -1;
    }
    return changes;
}
