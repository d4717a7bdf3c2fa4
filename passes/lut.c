/* passes/lut.c — elementwise functions of one 8-bit tensor as table lookups
 * (docs/passes.md, "Table lookups").
 *
 *   y = f(q)     q a run-time int8 / uint8 tensor, f elementwise nodes whose
 *                other operands are known single values, y int8 / uint8
 *   ⇒ y = Gather(T, Cast(q, int32)),   T[j] = f(v_j), j = 0 .. 255,
 *
 * v_j the value of q's type whose byte is j (0 .. 127, then -128 .. -1 for
 * int8): an int8 q < 0 is Gather's index counted from the end, 256 + q, the
 * entry of its byte.  q may also be a float32 tensor of integers in an 8-bit
 * range, Clip(u, lo, hi) with u integer-valued (Round, Floor, Ceil, a Cast
 * from integers, sums of those) and lo, hi integer constants within int8's
 * or uint8's range: what a QuantizeLinear that feeds a DequantizeLinear
 * leaves (qdq writes the pair without the 8-bit tensor).  Then
 * Cast(q, int8 or uint8) comes first; a NaN q (from a NaN product) has no
 * table entry and takes the entry of whatever byte its conversion gives.  T is f evaluated by the reference interpreter on those
 * 256 values, node by node as the graph would per element, so the lookup
 * gives the same bits.  What QDQ models write around activations becomes
 * one read of a 256-entry table: DQ → Sigmoid → Q → DQ → Mul (by the first
 * DQ) → Q, EfficientNet's SiLU, is 20 elementwise nodes and a division per
 * element in float32.
 *
 * Only regions with a costly node (outside `cheap`: a division, an
 * exponential, ...) are rewritten; a requantization alone is a few vector
 * instructions, which a lookup without byte permutes (lower/data.c) does not
 * beat.  The region ends where a use of the 8-bit y leads to no other 8-bit
 * tensor of the same region (a DQ before a convolution); the 8-bit tensors
 * inside it (the Q after the Sigmoid) are read only by it and die with it. */
#include "passes/pass_impl.h"

#include <stdlib.h>
#include <string.h>

static int is_8bit(IrDType t) { return t == IR_DT_I8 || t == IR_DT_U8; }

static int producer_op(const IrGraph *g, int t)
{
    int p = t >= 0 ? g->tensors[t].producer : -1;
    return p >= 0 && !g->nodes[p].dead && g->nodes[p].n_out == 1 ? (int)g->nodes[p].op : -1;
}

static int known_int(const IrGraph *g, int t, double *v)
{
    return t >= 0 && pass_value_uniform(g, t, v) && ir_shape_numel(&g->tensors[t].v.shape) == 1 && *v == (int64_t)*v;
}

/* Every element of float tensor t is an integer, an infinity or NaN. */
static int int_valued(const IrGraph *g, int t, int depth)
{
    double c;
    if (known_int(g, t, &c))
        return 1;
    int op = producer_op(g, t);
    if (op < 0 || depth > 8)
        return 0;
    const IrNode *n = &g->nodes[g->tensors[t].producer];
    switch (op) {
    case IR_OP_Round: case IR_OP_Floor: case IR_OP_Ceil: return 1;
    case IR_OP_Cast: return ir_dtype_is_int(g->tensors[n->in[0]].v.dtype);
    case IR_OP_Add: case IR_OP_Sub: case IR_OP_Max: case IR_OP_Min:
        return n->n_in == 2 && int_valued(g, n->in[0], depth + 1) && int_valued(g, n->in[1], depth + 1);
    case IR_OP_Relu: return int_valued(g, n->in[0], depth + 1);
    case IR_OP_Clip:
        for (int k = 0; k < n->n_in; k++)
            if (n->in[k] >= 0 && !int_valued(g, n->in[k], depth + 1))
                return 0;
        return 1;
    default: return 0;
    }
}

/* The 8-bit type whose values run-time tensor t holds: its own, or for a
 * float32 Clip(u, lo, hi) of an integer-valued u with integer bounds, int8
 * when [lo, hi] lies in int8's range, else uint8 when in uint8's; else
 * IR_DT_UNDEF. */
static IrDType byte_type(const IrGraph *g, int t)
{
    const IrTensor *x = &g->tensors[t];
    if (x->v.data)
        return IR_DT_UNDEF;
    if (is_8bit(x->v.dtype))
        return x->v.dtype;
    double lo, hi;
    const IrNode *n = producer_op(g, t) == IR_OP_Clip ? &g->nodes[x->producer] : NULL;
    if (x->v.dtype != IR_DT_F32 || !n || n->n_in != 3 || !known_int(g, n->in[1], &lo) ||
        !known_int(g, n->in[2], &hi) || !int_valued(g, n->in[0], 0) || lo > hi)
        return IR_DT_UNDEF;
    return lo >= -128 && hi <= 127 ? IR_DT_I8 : lo >= 0 && hi <= 255 ? IR_DT_U8 : IR_DT_UNDEF;
}

/* Operators whose vector form is a few instructions an element. */
static int cheap(IrOp op)
{
    switch (op) {
    case IR_OP_Cast: case IR_OP_CastLike: case IR_OP_Identity: case IR_OP_Add: case IR_OP_Sub: case IR_OP_Mul:
    case IR_OP_Round: case IR_OP_Floor: case IR_OP_Ceil: case IR_OP_Clip: case IR_OP_Relu: case IR_OP_Max:
    case IR_OP_Min: case IR_OP_Neg: case IR_OP_Abs: case IR_OP_Sign: case IR_OP_Where: case IR_OP_IsNaN:
    case IR_OP_IsInf: case IR_OP_Equal: case IR_OP_Less: case IR_OP_LessOrEqual: case IR_OP_Greater:
    case IR_OP_GreaterOrEqual: case IR_OP_Not: case IR_OP_And: case IR_OP_Or: case IR_OP_Xor:
    case IR_OP_LeakyRelu:
        return 1;
    default: return 0;
    }
}

typedef struct Lut {
    IrGraph *g;
    int *src;      /* per tensor: the 8-bit tensor it is an elementwise function of, or -1 */
    char *costly;  /* per tensor: its region holds a costly node */
    char *end;     /* per tensor: 8-bit, or float32 of 8-bit integers (byte_type) */
    int *memo;     /* per tensor: its value on the 256 inputs, -1 not yet made */
    int *index;    /* per source: its Gather indices, -1 not yet made */
    int n_t;       /* tensors when the pass began (the arrays' size) */
} Lut;

/* Elementwise node i's source: the one tensor every run-time operand derives
 * from (the others known single values), its output of the source's shape;
 * else -1. */
static int region_source(const Lut *l, int i)
{
    const IrGraph *g = l->g;
    const IrNode *n = &g->nodes[i];
    if (n->dead || !(ir_op_info(n->op)->flags & IR_OPF_EW) || n->n_out != 1 || n->out[0] < 0 ||
        g->tensors[n->out[0]].v.data)
        return -1;
    int s = -1;
    for (int k = 0; k < n->n_in; k++) {
        int t = n->in[k];
        if (t < 0)
            continue;
        if (pass_value(g, t)) {
            if (ir_shape_numel(&g->tensors[t].v.shape) != 1)
                return -1;
            continue;
        }
        if (l->src[t] < 0 || (s >= 0 && l->src[t] != s))
            return -1;
        s = l->src[t];
    }
    return s >= 0 && ir_shape_equal(&g->tensors[n->out[0]].v.shape, &g->tensors[s].v.shape) ? s : -1;
}

/* Tensor t (src[t] = s) on the 256 values x of s: the region's nodes cloned
 * onto x, each evaluated as it is made (pass_emit folds known inputs).  The
 * value's tensor, or -1 (the interpreter refused a node: no value). */
static int on_table(Lut *l, int t, int s, int x, UtilDiag *d)
{
    IrGraph *g = l->g;
    if (t == s)
        return x;
    if (pass_value(g, t))
        return t;
    if (t >= l->n_t)
        return -1;
    if (l->memo[t] >= 0)
        return l->memo[t];
    int p = g->tensors[t].producer, in[IR_VARIADIC];
    int n_in = g->nodes[p].n_in;
    for (int k = 0; k < n_in; k++) {
        int a = g->nodes[p].in[k];
        in[k] = a < 0 ? -1 : on_table(l, a, s, x, d);
        if (a >= 0 && in[k] < 0)
            return -1;
    }
    UtilDiag e;
    util_diag_init(&e);
    int y = pass_emit(g, g->nodes[p].op, g->tensors[t].name, n_in, in, 1, p, g->nodes[p].loc, &e);
    if (y < 0 || !pass_value(g, y))
        return -1;
    return l->memo[t] = y;
}

/* 8-bit tensor y of source s: does every use lead to another 8-bit tensor of
 * the region (so y is inside it)?  reach[t]: some 8-bit tensor of the region
 * lies after t. */
static int inner(const Lut *l, const char *reach, int y)
{
    const IrGraph *g = l->g;
    for (int o = 0; o < g->n_outputs; o++)
        if (g->outputs[o] == y)
            return 0;
    for (int u = g->use_start[y]; u < g->use_start[y + 1]; u++) {
        int c = g->nodes[g->use_node[u]].out[0];
        if (g->nodes[g->use_node[u]].n_out != 1 || c < 0 || c >= l->n_t || l->src[c] != l->src[y] ||
            !(l->end[c] || reach[c]))
            return 0;
    }
    return 1;
}

static int cast(IrGraph *g, int x, IrDType to, const char *hint, UtilLoc loc, UtilDiag *d)
{
    int c = pass_emit_node(g, IR_OP_Cast, hint, 1, &x, 1, -1, loc);
    IrAttr a = { .key = IR_A_to, .kind = IR_AK_INT, .v.i = ir_dtype_to_onnx(to) };
    if (c < 0 || ir_set_attr(g, c, &a))
        return util_error(d, util_loc_file(g->file), "out of memory");
    return pass_emit_done(g, c, d);
}

/* Source s's bytes as Gather indices, Cast(s [, int8 / uint8], int32), made
 * once per source. */
static int indices(Lut *l, int s, UtilDiag *d)
{
    IrGraph *g = l->g;
    if (l->index[s] >= 0)
        return l->index[s];
    IrDType bt = byte_type(g, s);
    UtilLoc loc = g->nodes[g->tensors[s].producer >= 0 ? g->tensors[s].producer : 0].loc;
    int q = g->tensors[s].v.dtype == bt ? s : cast(g, s, bt, g->tensors[s].name, loc, d);
    return l->index[s] = q < 0 ? -1 : cast(g, q, IR_DT_I32, g->tensors[s].name, loc, d);
}

/* y = f(s) as Gather(T, indices(s)), then Cast to float32 when y is a float32
 * of 8-bit integers.  1 done, 0 when the table cannot be made (the
 * interpreter refused a node, or a float y's entry is no integer of its
 * byte type), -1 on error. */
static int rewrite(Lut *l, int y, UtilDiag *d)
{
    IrGraph *g = l->g;
    int s = l->src[y], node = g->tensors[y].producer;
    IrDType bt = byte_type(g, s), st = g->tensors[s].v.dtype, yt = g->tensors[y].v.dtype, yb = byte_type(g, y);
    int idx = indices(l, s, d), first_new = g->n_nodes;
    IrShape ts = { .rank = 1, .dims = { 256 } };
    int x = idx < 0 ? -1 : pass_new_const(g, g->tensors[s].name, st, &ts);
    if (x < 0)
        return util_error(d, util_loc_file(g->file), "out of memory");
    for (int j = 0; j < 256; j++)
        ir_store_f64(st, g->tensors[x].v.data, j, bt == IR_DT_I8 ? (double)(int8_t)j : (double)j);
    for (int t = 0; t < l->n_t; t++)
        l->memo[t] = -1;
    int v = on_table(l, y, s, x, d);
    const IrArray *va = v >= 0 ? pass_value(g, v) : NULL;
    int ok = va && ir_array_numel(va) == 256;
    for (int j = 0; ok && j < 256 && yt != yb; j++) {      /* a float y: integers of its byte type */
        double e = ir_load_f64(yt, va->data, j);
        ok = e == (int64_t)e && (yb == IR_DT_I8 ? e >= -128 && e <= 127 : e >= 0 && e <= 255);
    }
    if (!ok) {
        for (int k = first_new; k < g->n_nodes; k++)
            g->nodes[k].dead = 1;
        return 0;
    }
    int tab = pass_new_const(g, g->tensors[y].name, yb, &ts);
    if (tab < 0)
        return util_error(d, util_loc_file(g->file), "out of memory");
    va = pass_value(g, v);
    for (int j = 0; j < 256; j++)
        ir_store_f64(yb, g->tensors[tab].v.data, j, ir_load_f64(yt, va->data, j));
    UtilLoc loc = g->nodes[node].loc;
    int r = pass_emit(g, IR_OP_Gather, g->tensors[y].name, 2, (int[]){ tab, idx }, 1, -1, loc, d);
    if (r >= 0 && yt != yb)
        r = cast(g, r, yt, g->tensors[y].name, loc, d);
    if (r < 0)
        return -1;
    return pass_commit(g, y, r, first_new, &node, 1);
}

int pass_lut(IrGraph *g, UtilDiag *d)
{
    if (ir_build_uses(g))
        return util_error(d, util_loc_file(g->file), "out of memory");
    Lut l = { .g = g, .n_t = g->n_tensors };
    l.src = malloc(((size_t)l.n_t + 1) * sizeof *l.src);
    l.memo = malloc(((size_t)l.n_t + 1) * sizeof *l.memo);
    l.index = malloc(((size_t)l.n_t + 1) * sizeof *l.index);
    l.costly = calloc((size_t)l.n_t + 1, 1);
    l.end = calloc((size_t)l.n_t + 1, 1);
    char *reach = calloc((size_t)l.n_t + 1, 1);
    int *cand = malloc(((size_t)l.n_t + 1) * sizeof *cand), n_cand = 0, changes = 0;
    if (!l.src || !l.memo || !l.index || !l.costly || !l.end || !reach || !cand) {
        free(l.src); free(l.memo); free(l.index); free(l.costly); free(l.end); free(reach); free(cand);
        return util_error(d, util_loc_file(g->file), "out of memory");
    }
    for (int t = 0; t < l.n_t; t++)
        l.end[t] = byte_type(g, t) != IR_DT_UNDEF, l.src[t] = l.end[t] ? t : -1, l.index[t] = -1;
    for (int i = 0; i < g->n_nodes; i++) {          /* topological: sources before their regions */
        int s = region_source(&l, i);
        if (s < 0)
            continue;
        const IrNode *n = &g->nodes[i];
        int o = n->out[0];
        l.src[o] = s;
        l.costly[o] = !cheap(n->op);
        for (int k = 0; k < n->n_in; k++)
            if (n->in[k] >= 0 && !pass_value(g, n->in[k]))
                l.costly[o] |= l.costly[n->in[k]];
    }
    for (int i = g->n_nodes - 1; i >= 0; i--) {     /* reach, back to front */
        const IrNode *n = &g->nodes[i];
        for (int k = 0; !n->dead && k < n->n_in; k++) {
            int t = n->in[k], o = n->out[0];
            if (t >= 0 && n->n_out == 1 && o >= 0 && l.src[t] >= 0 && l.src[o] == l.src[t] && o != l.src[o])
                reach[t] |= l.end[o] || reach[o];
        }
    }
    for (int i = 0; i < g->n_nodes; i++) {
        int t = g->nodes[i].n_out == 1 && !g->nodes[i].dead ? g->nodes[i].out[0] : -1;
        if (t >= 0 && l.src[t] >= 0 && l.src[t] != t && l.end[t] && l.costly[t] && !inner(&l, reach, t))
            cand[n_cand++] = t;
    }
    /* back to front: a region's nodes are rewired only after every later
     * region that reads through them has been read */
    int r = 0;
    for (int k = n_cand - 1; k >= 0 && r >= 0; k--) {
        r = rewrite(&l, cand[k], d);
        changes += r > 0;
    }
    free(l.src); free(l.memo); free(l.index); free(l.costly); free(l.end); free(reach); free(cand);
    return r < 0 ? -1 : pass_finish(g, changes, d);
}
