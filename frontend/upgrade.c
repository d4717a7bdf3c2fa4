/* frontend/upgrade.c — rewrites operator forms of older opsets into the
 * current (opset 21) semantics the IR holds.  The rules themselves are the
 * table in upgrade_rules.c; this file holds the driver and the helpers they
 * share (constants, node insertion, and the ranks known before inference). */
#include "frontend/upgrade_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int fe_up_oom(FeUp *u, int node) { return ir_node_error(u->g, &u->g->nodes[node], u->d, "out of memory"); }

static int rank_grow(FeUp *u)
{
    if (u->g->n_tensors <= u->cap)
        return 0;
    int nc = u->g->n_tensors + 64;
    int *p = realloc(u->rank, (size_t)nc * sizeof(int));
    if (!p)
        return -1;
    for (int i = u->cap; i < nc; i++)
        p[i] = -1;
    u->rank = p;
    u->cap = nc;
    return 0;
}

void fe_up_set_rank(FeUp *u, int t, int rank)
{
    if (t >= 0 && !rank_grow(u))
        u->rank[t] = rank;
}

int fe_up_rank(FeUp *u, int t)
{
    if (t < 0)
        return -1;
    const IrTensor *x = &u->g->tensors[t];
    if (x->shape_known)
        return x->v.shape.rank;
    const IrArray *c = fe_up_const(u, t);
    if (c)
        return c->shape.rank;
    return t < u->cap ? u->rank[t] : -1;
}

const IrArray *fe_up_const(const FeUp *u, int t)
{
    if (t < 0)
        return NULL;
    const IrTensor *x = &u->g->tensors[t];
    if (x->kind == IR_TK_CONST && x->v.data)
        return &x->v;
    if (x->producer >= 0 && u->g->nodes[x->producer].op == IR_OP_Constant) {
        const IrAttr *a = ir_attr(&u->g->nodes[x->producer], IR_A_value);
        if (a && a->kind == IR_AK_TENSOR)
            return a->v.tensor;
    }
    return NULL;
}

static int new_const(FeUp *u, int at, const char *hint, IrDType dt, const IrShape *s, const void *data)
{
    IrGraph *g = u->g;
    const IrNode *n = &g->nodes[at];
    char name[320];
    const char *base = n->n_out > 0 && n->out[0] >= 0 ? g->tensors[n->out[0]].name : n->name;
    snprintf(name, sizeof name, "%.200s_%s", base, hint);
    int t = ir_add_temp(g, name);
    if (t < 0)
        return -1;
    g->tensors[t].kind = IR_TK_CONST;
    ir_set_type(g, t, dt, s);
    void *p = ir_alloc_data(g, t);
    if (!p)
        return -1;
    size_t bytes = ir_array_bytes(&g->tensors[t].v);
    if (bytes)
        memcpy(p, data, bytes);
    return t;
}

int fe_up_const_i64(FeUp *u, int at, const char *hint, int n, const int64_t *v, int rank)
{
    IrShape s = { .rank = rank, .dims = { n } };
    int t = new_const(u, at, hint, IR_DT_I64, &s, v);
    return t < 0 ? fe_up_oom(u, at) : t;
}

static IrDType known_dtype(const FeUp *u, int t)
{
    const IrTensor *x = &u->g->tensors[t];
    if (x->shape_known)
        return x->v.dtype;
    const IrArray *c = fe_up_const(u, t);
    return c ? c->dtype : IR_DT_UNDEF;
}

int fe_up_scalar_like(FeUp *u, int at, const char *hint, double v, int like)
{
    IrDType dt = like >= 0 ? known_dtype(u, like) : IR_DT_F32;
    IrShape s = { .rank = 0 };
    uint8_t buf[8];
    IrDType cdt = dt == IR_DT_UNDEF ? IR_DT_F32 : dt;
    ir_store_f64(cdt, buf, 0, v);       /* saturates (no UB) for integer types */
    int t = new_const(u, at, hint, cdt, &s, buf);
    if (t < 0)
        return fe_up_oom(u, at);
    if (dt != IR_DT_UNDEF)
        return t;
    int in[2] = { t, like };
    return fe_up_add(u, at, IR_OP_CastLike, 2, in, -1, NULL);
}

/* The rank each output of node n has, as far as it follows from the ranks of
 * its inputs without shapes; -1 where unknown.  Only a hint for the rules
 * (they fall back to run-time shape arithmetic when it is unknown). */
static void note_ranks(FeUp *u, int node)
{
    const IrNode *n = &u->g->nodes[node];
    int r0 = n->n_in > 0 ? fe_up_rank(u, n->in[0]) : -1, r = -1;
    const IrArray *c1 = n->n_in > 1 ? fe_up_const(u, n->in[1]) : NULL;
    switch (n->op) {
    case IR_OP_Constant:
        return;                                   /* up_const answers */
    case IR_OP_Gemm: case IR_OP_Flatten:
        r = 2;
        break;
    case IR_OP_Shape:
        r = 1;
        break;
    case IR_OP_Size:
        r = 0;
        break;
    case IR_OP_Reshape:
        r = c1 && c1->shape.rank == 1 ? (int)c1->shape.dims[0] : -1;
        break;
    case IR_OP_Gather: {
        int ri = fe_up_rank(u, n->n_in > 1 ? n->in[1] : -1);
        r = r0 >= 0 && ri >= 0 ? r0 + ri - 1 : -1;
        break;
    }
    case IR_OP_MatMul: {
        int r1 = fe_up_rank(u, n->n_in > 1 ? n->in[1] : -1);
        r = r0 >= 2 && r1 >= 2 ? (r0 > r1 ? r0 : r1) : -1;
        break;
    }
    case IR_OP_Squeeze: case IR_OP_Unsqueeze:
        if (r0 >= 0 && c1)
            r = r0 + (n->op == IR_OP_Squeeze ? -1 : 1) * (int)ir_array_numel(c1);
        break;
    case IR_OP_ReduceSum: case IR_OP_ReduceMean: case IR_OP_ReduceMax: case IR_OP_ReduceMin:
    case IR_OP_ReduceProd: case IR_OP_ReduceL1: case IR_OP_ReduceL2: case IR_OP_ReduceSumSquare:
    case IR_OP_ReduceLogSum: case IR_OP_ReduceLogSumExp: case IR_OP_ArgMax: case IR_OP_ArgMin:
        r = ir_attr_int(n, IR_A_keepdims) ? r0 : -1;
        break;
    case IR_OP_Conv: case IR_OP_ConvTranspose: case IR_OP_MaxPool: case IR_OP_AveragePool: case IR_OP_LpPool:
    case IR_OP_GlobalAveragePool: case IR_OP_GlobalMaxPool: case IR_OP_GlobalLpPool:
    case IR_OP_BatchNormalization: case IR_OP_InstanceNormalization: case IR_OP_LayerNormalization:
    case IR_OP_LpNormalization: case IR_OP_Softmax: case IR_OP_LogSoftmax: case IR_OP_Hardmax:
    case IR_OP_Transpose: case IR_OP_Pad: case IR_OP_Resize: case IR_OP_DepthToSpace: case IR_OP_SpaceToDepth:
    case IR_OP_Slice: case IR_OP_Tile: case IR_OP_Concat: case IR_OP_Split: case IR_OP_Dropout:
        r = r0;
        break;
    default:
        if (ir_op_info(n->op) && (ir_op_info(n->op)->flags & IR_OPF_EW)) {
            r = r0;
            for (int k = 1; k < n->n_in && r >= 0; k++) {
                int rk = n->in[k] >= 0 ? fe_up_rank(u, n->in[k]) : r;
                r = rk < 0 ? -1 : rk > r ? rk : r;
            }
        }
        break;
    }
    int all = n->op == IR_OP_Split;
    for (int k = 0; k < n->n_out; k++)
        if (k == 0 || all)
            fe_up_set_rank(u, n->out[k], r);
}

int fe_up_add(FeUp *u, int at, IrOp op, int n_in, const int *in, int out, int *node)
{
    IrGraph *g = u->g;
    if (out < 0) {
        char hint[320];
        const IrNode *n = &g->nodes[at];
        const char *base = n->n_out > 0 && n->out[0] >= 0 ? g->tensors[n->out[0]].name : n->name;
        snprintf(hint, sizeof hint, "%.200s_%s", base, ir_op_name(op));
        if ((out = ir_add_temp(g, hint)) < 0)
            return fe_up_oom(u, at);
    }
    UtilLoc loc = g->nodes[at].loc;
    char name[320];
    snprintf(name, sizeof name, "%.200s%s%s", g->nodes[at].name, g->nodes[at].name[0] ? "_" : "", ir_op_name(op));
    int k = ir_add_node(g, op, name, n_in, in, 1, &out, loc);
    if (k < 0)
        return fe_up_oom(u, at);
    note_ranks(u, k);
    if (node)
        *node = k;
    return out;
}

int fe_up_set_input(FeUp *u, int node, int slot, int t)
{
    IrNode *n = &u->g->nodes[node];
    int cnt = n->n_in > slot + 1 ? n->n_in : slot + 1;
    int in[IR_VARIADIC + 1];
    if (cnt > IR_VARIADIC)
        return ir_node_error(u->g, n, u->d, "too many inputs");
    for (int k = 0; k < cnt; k++)
        in[k] = k < n->n_in ? n->in[k] : -1;
    in[slot] = t;
    while (cnt > 0 && in[cnt - 1] < 0)
        cnt--;
    return ir_set_inputs(u->g, node, cnt, in) ? fe_up_oom(u, node) : 0;
}

int fe_up_ints_to_input(FeUp *u, int node, IrAttrKey key, int slot)
{
    const int64_t *v;
    const IrNode *n = &u->g->nodes[node];
    if (!ir_has_attr(n, key))
        return 0;
    if (slot < n->n_in && n->in[slot] >= 0)
        return ir_node_error(u->g, n, u->d, "'%s' is given both as an attribute and as input %d",
                             ir_attr_name(key), slot + 1);
    int cnt = ir_attr_ints(n, key, &v);
    int t = fe_up_const_i64(u, node, ir_attr_name(key), cnt, v, 1);
    if (t < 0)
        return -1;
    ir_remove_attr(u->g, node, key);
    return fe_up_set_input(u, node, slot, t);
}

int fe_up_set_int(FeUp *u, int node, IrAttrKey key, int64_t v)
{
    IrAttr a = { .key = key, .kind = IR_AK_INT, .v.i = v };
    return ir_set_attr(u->g, node, &a) ? fe_up_oom(u, node) : 0;
}

int fe_up_set_str(FeUp *u, int node, IrAttrKey key, const char *s)
{
    IrAttr a = { .key = key, .kind = IR_AK_STRING, .v.s = s };
    return ir_set_attr(u->g, node, &a) ? fe_up_oom(u, node) : 0;
}

int fe_upgrade(IrGraph *g, UtilDiag *d)
{
    FeUp u = { g, d, NULL, 0 };
    int n0 = g->n_nodes, rc = 0;
    if (rank_grow(&u))
        return util_error(d, util_loc_file(g->file), "out of memory");
    for (int i = 0; i < n0 && !rc; i++) {
        /* consumed_inputs (opset < 6) only marked in-place updates: no meaning for a compiler */
        ir_remove_attr(g, i, IR_A_consumed_inputs);
        IrOp op = g->nodes[i].op;
        /* a node without its first input is malformed: left as it is for inference to report */
        int has_x = g->nodes[i].n_in > 0 && g->nodes[i].in[0] >= 0;
        for (int k = 0; k < fe_up_n_rules && !rc && has_x; k++)
            if (fe_up_rules[k].op == op && g->opset < fe_up_rules[k].below)
                rc = fe_up_rules[k].fn(&u, i);
        if (!rc)
            note_ranks(&u, i);
    }
    free(u.rank);
    return rc;
}
