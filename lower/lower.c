/* lower/lower.c — graph IR → loop IR, node by node: each operator's
 * lowering (the table), the buffers of the tensors a node reads and writes
 * (views as aliases, a Concat's inputs written in place), fused groups
 * re-checked and computed in their head's kernel, copies into graph outputs.
 * The family templates (elementwise.c, reduce.c, window.c, matmul.c,
 * data.c, ...) build their nests with build.c and fused.c. */
#include "lower/lower_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Lowering of each operator: its ops.def row's compute template (none:
 * no kernel, NULL here). */
#define low_none NULL
static const LowFn low_table[IR_OP_COUNT] = {
#define OP(name, mi, ma, mo, mao, inf, ev, low, fl, doc) [IR_OP_##name] = low_##low,
#include "ir/ops.def"
#undef OP
};
#undef low_none

/* -------------------------------------------------------------- driver */

static int fused_result(const Low *L);
static int check_fused_stores(Low *L, int k0);

/* ------------------------------------------------------ Concat in place */

static int concat_axis(const IrGraph *g, const IrNode *c)
{
    int r = g->tensors[c->out[0]].v.shape.rank;
    int64_t ax = ir_attr_int(c, IR_A_axis);
    return (int)(ax < 0 ? ax + r : ax);
}

/* Node writing tensor t (a kernel of its own, not a view or a Concat), or -1. */
static int plain_producer(const IrGraph *g, int t)
{
    for (int i = 0; i < g->n_nodes; i++) {
        const IrNode *n = &g->nodes[i];
        for (int k = 0; !n->dead && k < n->n_out; k++)
            if (n->out[k] == t)
                return (ir_op_info(n->op)->flags & IR_OPF_VIEW) || n->op == IR_OP_Concat ? -1 : i;
    }
    return -1;
}

/* Live Concat nodes reading tensor t. */
static int concat_readers(const IrGraph *g, int t, int *which)
{
    int n = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        const IrNode *c = &g->nodes[i];
        for (int k = 0; !c->dead && c->op == IR_OP_Concat && k < c->n_in; k++)
            if (c->in[k] == t) {
                *which = i;
                n++;
            }
    }
    return n;
}

/* Concat in place (CPU): a Concat whose axis has only unit dims before it
 * and whose every input is a workspace tensor written by a kernel of its own
 * and read by this Concat alone among Concats, once: each input is a
 * contiguous slice of the output, so its buffer is made a view of the
 * output's at the slice's offset (LoopBuf.base), its producer writes there,
 * and the Concat is no kernel at all. */
static int concat_in_place(const Low *L, const IrNode *c)
{
    const IrGraph *g = L->g;
    if (c->dead || c->op != IR_OP_Concat || c->n_out < 1 || c->out[0] < 0 || !L->s || !L->s->target ||
        strcmp(L->s->target, "cpu") || low_graph_output(g, c->out[0]) >= 0 || g->tensors[c->out[0]].v.data)
        return 0;
    const IrArray *y = &g->tensors[c->out[0]].v;
    int axis = concat_axis(g, c);
    if (axis < 0 || axis >= y->shape.rank)
        return 0;
    for (int i = 0; i < axis; i++)
        if (y->shape.dims[i] != 1)
            return 0;
    for (int k = 0; k < c->n_in; k++) {
        int t = c->in[k], which = -1;
        if (t < 0 || g->tensors[t].v.data || g->tensors[t].v.dtype != y->dtype || low_graph_input(g, t) >= 0 ||
            low_graph_output(g, t) >= 0 || concat_readers(g, t, &which) != 1 || plain_producer(g, t) < 0)
            return 0;
    }
    return 1;
}

/* If tensor t is an input of a Concat in place: its buffer, a view of the
 * Concat's output (made first if need be).  0: not one; -1: out of memory. */
static int concat_slice(Low *L, int t)
{
    const IrGraph *g = L->g;
    int ci = -1;
    if (concat_readers(g, t, &ci) != 1 || !concat_in_place(L, &g->nodes[ci]))
        return 0;
    const IrNode *c = &g->nodes[ci];
    int axis = concat_axis(g, c), y = low_def_buf(L, c->out[0]);
    if (y < 0)
        return -1;
    int64_t off = 0;
    for (int k = 0; k < c->n_in && c->in[k] != t; k++)
        off += g->tensors[c->in[k]].v.shape.dims[axis];
    int b = low_alias_buf(L, t, y);
    if (b < 0)
        return -1;
    L->p->bufs[b].base = off * L->p->bufs[y].strides[axis];
    return 1;
}

/* A Cast of integers to float whose one reader is an average pool
 * (node i's output; not a graph output, not in a fused group): the pool
 * reads the integer tensor and converts each element as it loads it, in
 * float64 (lower/window.c: a pool of integers computes in float64), so no
 * float tensor is stored.  The conversion is exact for integers of up to
 * 32 bits; the pool's sum of them is exact and its quotient rounded once, as
 * the interpreter's float64 pool of the cast values.  (--precision int8:
 * an average pool between a DQ and a Q reads the 8-bit tensor,
 * docs/passes.md.) */
static int cast_into_pool(const Low *L, int i)
{
    const IrGraph *g = L->g;
    const IrNode *n = &g->nodes[i];
    if (n->op != IR_OP_Cast || n->fused || L->fuse_n || !L->uses || n->in[0] < 0 || n->out[0] < 0)
        return 0;
    int y = n->out[0];
    IrDType xt = g->tensors[n->in[0]].v.dtype, yt = g->tensors[y].v.dtype;
    if (!ir_dtype_is_int(xt) || ir_dtype_size(xt) > 4 || (yt != IR_DT_F32 && yt != IR_DT_F64) || L->uses[y] != 1 ||
        low_graph_output(g, y) >= 0 || g->tensors[n->in[0]].v.data)
        return 0;
    for (int j = i + 1; j < g->n_nodes; j++) {
        const IrNode *m = &g->nodes[j];
        if (m->dead || m->n_in < 1 || m->in[0] != y)
            continue;
        return (m->op == IR_OP_AveragePool || m->op == IR_OP_GlobalAveragePool) && !m->fused &&
               !(j + 1 < g->n_nodes && g->nodes[j + 1].fused);
    }
    return 0;
}

/* The one live node after node i that reads tensor y, or -1. */
static int sole_reader(const IrGraph *g, int i, int y)
{
    for (int j = i + 1; j < g->n_nodes; j++)
        for (int k = 0; !g->nodes[j].dead && k < g->nodes[j].n_in; k++)
            if (g->nodes[j].in[k] == y)
                return j;
    return -1;
}

/* A Cast (node i, not a graph output, not in a fused group) whose output
 * only reader j reads as the Gather's indices, or as the next Cast of such
 * indices; its output tensor, or -1. */
static int cast_read_once(const Low *L, int i)
{
    const IrGraph *g = L->g;
    const IrNode *n = &g->nodes[i];
    if (n->op != IR_OP_Cast || n->fused || L->fuse_n || !L->uses || n->in[0] < 0 || n->out[0] < 0 ||
        g->tensors[n->in[0]].v.data || L->uses[n->out[0]] != 1 || low_graph_output(g, n->out[0]) >= 0)
        return -1;
    return n->out[0];
}

/* A Cast whose one reader is a Gather's indices: the Gather reads the
 * Cast's input and converts each index as it loads it (the same value), so
 * no index tensor is stored (node i's output; not a graph output, not in a
 * fused group):
 *  - int8 / uint8 to int32 or int64, for any Gather;
 *  - float32 to int8 / uint8, read only by such a Cast to int32 / int64 of
 *    the indices of a Gather from a 256-byte table: the table form applies
 *    the saturating conversion to 8 bits as it loads (lower/data.c).
 * The table lookups of passes/lut.c then read their source once. */
static int cast_into_gather(const Low *L, int i)
{
    const IrGraph *g = L->g;
    int y = cast_read_once(L, i), j = y >= 0 ? sole_reader(g, i, y) : -1;
    if (j < 0)
        return 0;
    IrDType xt = g->tensors[g->nodes[i].in[0]].v.dtype, yt = g->tensors[y].v.dtype;
    const IrNode *m = &g->nodes[j];
    if ((xt == IR_DT_I8 || xt == IR_DT_U8) && (yt == IR_DT_I32 || yt == IR_DT_I64))
        return m->op == IR_OP_Gather && m->in[1] == y && m->in[0] != y && !m->fused;
    if (xt != IR_DT_F32 || (yt != IR_DT_I8 && yt != IR_DT_U8))
        return 0;
    int z = cast_read_once(L, j), k = z >= 0 ? sole_reader(g, j, z) : -1;
    IrDType zt = z >= 0 ? g->tensors[z].v.dtype : IR_DT_UNDEF;
    if (k < 0 || (zt != IR_DT_I32 && zt != IR_DT_I64))
        return 0;
    const IrNode *t = &g->nodes[k];
    const IrTensor *tab = t->op == IR_OP_Gather && t->in[1] == z ? &g->tensors[t->in[0]] : NULL;
    return tab && tab->v.data && tab->v.shape.rank == 1 && tab->v.shape.dims[0] == 256 &&
           ir_dtype_size(tab->v.dtype) == 1 && !t->fused;
}

static int all_outputs_known(const IrGraph *g, const IrNode *n)
{
    for (int k = 0; k < n->n_out; k++)
        if (n->out[k] >= 0 && !g->tensors[n->out[k]].v.data)
            return 0;
    return 1;
}

static int lower_node(Low *L, const LowSchedule *s)
{
    const IrGraph *g = L->g;
    const IrNode *n = L->n;
    if (n->dead || all_outputs_known(g, n))
        return 0;
    if (n->op == IR_OP_Constant && n->out[0] >= 0) {
        /* a value too large to be propagated: the attribute is the weight */
        const IrAttr *a = ir_attr(n, IR_A_value);
        const IrTensor *t = &g->tensors[n->out[0]];
        if (a && a->kind == IR_AK_TENSOR && ir_array_bytes(a->v.tensor) == ir_array_bytes(&t->v)) {
            int b = low_new_buf(L, n->out[0], LOOP_ST_CONST);
            if (b < 0)
                return low_oom(L);
            L->p->bufs[b].data = a->v.tensor->data;
            L->tbuf[n->out[0]] = b;
            return 0;
        }
    }
    if (cast_into_pool(L, L->node) || cast_into_gather(L, L->node)) {
        int b = low_in(L, 0);
        if (b < 0)
            return low_oom(L);
        L->tbuf[n->out[0]] = b;
        return 0;
    }
    LowFn fn = (unsigned)n->op < IR_OP_COUNT ? low_table[n->op] : NULL;
    if (!fn)
        return util_error(L->d, n->loc, "operator %s (node '%s') is not supported on target %s yet",
                          ir_op_name(n->op), n->name ? n->name : "", s && s->target ? s->target : "cpu");
    for (int k = 0; k < n->n_in; k++) {
        const IrTensor *t = n->in[k] >= 0 ? &g->tensors[n->in[k]] : NULL;
        if (t && L->tbuf[n->in[k]] < 0 && !t->v.data && low_graph_input(g, n->in[k]) < 0)
            return ir_node_error(g, n, L->d, "input '%s' has no producer", t->name);
    }
    if ((ir_op_info(n->op)->flags & IR_OPF_VIEW) && n->n_out == 1 && n->out[0] >= 0 &&
        low_graph_output(g, n->out[0]) < 0) {
        int src = low_in(L, 0);
        if (src < 0)
            return low_oom(L);
        if (low_buf(L, src)->dtype == g->tensors[n->out[0]].v.dtype)
            return low_alias_buf(L, n->out[0], src) < 0 ? low_oom(L) : 0;
    }
    for (int k = 0; k < n->n_out; k++) {
        int t = k == 0 ? fused_result(L) : n->out[k];
        if (t >= 0 && (concat_slice(L, t) < 0 || low_def_buf(L, t) < 0))
            return low_oom(L);
    }
    /* a fused group: the head's output and the inner members' are the last
     * member's buffer while the kernel is built (same shape and dtype) */
    for (int m = 0; m < L->fuse_n; m++)
        L->tbuf[g->nodes[L->node + m].out[0]] = L->tbuf[fused_result(L)];
    /* Lowerings keep LoopBuf pointers (low_buf) while they make buffers for
     * compile-time inputs (low_in) and tables (Resize): reserve room so that
     * the buffer array does not move during one operator's lowering (with
     * the fused members' inputs, which the head's stores read). */
    int want = L->p->n_bufs + LOW_MAX_NEW_BUFS;
    for (int m = 0; m <= L->fuse_n; m++)
        want += g->nodes[L->node + m].n_in;
    if (want > L->p->cap_bufs) {
        LoopBuf *nb = realloc(L->p->bufs, (size_t)want * sizeof *nb);
        if (!nb)
            return low_oom(L);
        L->p->bufs = nb;
        L->p->cap_bufs = want;
    }
    L->oom = 0;
    L->fused_stores = 0;
    L->halo_kernel = -1;
    L->halo_lead = 0;
    L->halo_cols_store = 0;
    L->halo_stores = 0;
    L->joined = -1;
    int k0 = L->p->n_kernels;
    int r = fn(L);
    if (r == 0 && L->fuse_n)
        r = check_fused_stores(L, L->joined >= 0 ? L->joined : k0);
    for (int m = 0; m < L->fuse_n; m++)                 /* fused away: no buffer */
        L->tbuf[g->nodes[L->node + m].out[0]] = -1;
    return r == 0 && L->oom ? low_oom(L) : r;
}

/* Stores into buffer buf in s. */
static int count_stores(const LoopStmt *s, int buf)
{
    if (!s)
        return 0;
    switch (s->kind) {
    case LOOP_S_FOR: return count_stores(s->u.loop.body, buf);
    case LOOP_S_STORE: return s->u.store.buf == buf;
    case LOOP_S_IF: return count_stores(s->u.cond.then_, buf) + count_stores(s->u.cond.else_, buf);
    case LOOP_S_BLOCK: {
        int n = 0;
        for (int i = 0; i < s->u.block.n; i++)
            n += count_stores(s->u.block.items[i], buf);
        return n;
    }
    default: return 0;
    }
}

/* The head's value at element vars of the group's buffer, as stored. */
static LoopExpr *stored_elem(Low *L, void *ctx, const int *vars, LoopStmt *body)
{
    (void)body;
    int y = low_out(L, 0), flat = *(const int *)ctx;
    const LoopBuf *yb = low_buf(L, y);
    return low_load(L, y, flat ? low_v(L, vars[0]) : low_bcast(L, y, vars, yb->shape.rank), yb->dtype);
}

/* After the head's template built kernels k0.. of a fused group: every
 * store into the group's buffer must have applied the members.  A template
 * that stored the head's value without low_fused_store gets the members as
 * a second kernel, in place on that buffer (element i read, then written). */
static int check_fused_stores(Low *L, int k0)
{
    int y = low_out(L, 0), direct = 0;
    for (int k = k0; k < L->p->n_kernels; k++)
        if (k != L->halo_kernel)
            direct += count_stores(L->p->kernels[k].body, y);
    direct -= L->fused_stores + L->halo_stores;
    if (direct == 0)
        return 0;
    if (L->fused_stores)
        return ir_node_error(L->g, L->n, L->d, "internal error: the %s template stores its result both with and "
                             "without low_fused_store", ir_op_name(L->n->op));
    int nk = L->p->n_kernels, flat = low_fused_flat_ok(L);
    if (flat ? low_map_flat(L, y, stored_elem, &flat) : low_map(L, y, stored_elem, &flat))
        return -1;
    for (int k = k0; k < nk; k++) {                    /* the head's kernels, then the members' */
        L->p->kernels[k].n_nodes = 1;
        L->p->kernels[k].flops = ir_node_flops(L->g, L->n);
    }
    L->p->kernels[nk].first_node = L->node + 1;
    L->p->kernels[nk].n_nodes = L->fuse_n;
    L->p->kernels[nk].flops -= ir_node_flops(L->g, L->n);
    return 0;
}

/* The tensor a node's kernel writes as its output 0: the last fused
 * member's output for a group head, else the node's own. */
static int fused_result(const Low *L)
{
    return L->g->nodes[L->node + L->fuse_n].out[0];
}

/* A tensor a kernel about to be built may read: a graph input, a
 * compile-time value or the output of a kernel already built. */
static int available(const Low *L, int t)
{
    return L->tbuf[t] >= 0 || L->g->tensors[t].v.data || low_graph_input(L->g, t) >= 0;
}

/* How many nodes after node i are computed in its kernel: the run of nodes
 * marked fused (passes/fuse.c) when it forms a valid group (re-checked here
 * with L->uses), else 0 and every node gets its own kernel. */
static int fused_members(const Low *L, int i, const LowSchedule *s)
{
    const int *uses = L->uses;
    const IrGraph *g = L->g;
    const IrNode *h = &g->nodes[i];
    if (!uses || i + 1 >= g->n_nodes || !g->nodes[i + 1].fused || !pass_fuse_head(g, h))
        return 0;
    /* The FPGA target rewrites each Conv kernel into a line-buffer pipeline
     * (targets/fpga/conv.c), which needs the Conv alone in its kernel, and
     * fuses ReLUs itself after that: there anchors head no group (the
     * elementwise rest of a group still fuses). */
    if (pass_fuse_anchor(h->op) && s && s->target && !strcmp(s->target, "fpga"))
        return 0;
    int n = 0, chain = h->out[0];
    for (int m = i + 1; m < g->n_nodes && g->nodes[m].fused; m++) {
        const IrNode *mn = &g->nodes[m];
        int reads = 0;
        for (int k = 0; k < mn->n_in; k++)
            reads += mn->in[k] == chain;
        if (!pass_fuse_member(g, h, mn, chain) || uses[chain] != reads || low_graph_output(g, chain) >= 0)
            return 0;
        for (int k = 0; k < mn->n_in; k++)
            if (mn->in[k] >= 0 && mn->in[k] != chain && !available(L, mn->in[k]))
                return 0;
        chain = mn->out[0];
        n++;
    }
    return n;
}

LoopProgram *low_graph(const IrGraph *g, const LowSchedule *s, UtilDiag *d)
{
    LoopProgram *p = loop_program_new(g->name);
    int *tbuf = malloc((size_t)(g->n_tensors > 0 ? g->n_tensors : 1) * sizeof *tbuf);
    if (!p || !tbuf) {
        free(tbuf);
        loop_program_free(p);
        util_error(d, util_loc_file(g->file), "out of memory while lowering");
        return NULL;
    }
    for (int t = 0; t < g->n_tensors; t++)
        tbuf[t] = -1;
    p->n_inputs = g->n_inputs;
    p->n_outputs = g->n_outputs;
    Low L = { .p = p, .g = g, .d = d, .tbuf = tbuf, .s = s, .blocks.kernel = -1 };
    int r = 0;
    /* every graph input gets its buffer, used or not */
    for (int i = 0; r == 0 && i < g->n_inputs; i++)
        if (low_use_buf(&L, g->inputs[i]) < 0)
            r = util_error(d, util_loc_file(g->file), "out of memory while lowering");
    /* uses per tensor, to re-check fused groups (NULL when out of memory:
     * no fusion) */
    int *uses = calloc((size_t)g->n_tensors + 1, sizeof *uses);
    L.uses = uses;
    for (int i = 0; uses && i < g->n_nodes; i++)
        for (int k = 0; !g->nodes[i].dead && k < g->nodes[i].n_in; k++)
            if (g->nodes[i].in[k] >= 0)
                uses[g->nodes[i].in[k]]++;
    for (int i = 0; r == 0 && i < g->n_nodes; i++) {
        L.node = i;
        L.n = &g->nodes[i];
        L.fuse_n = g->nodes[i].dead ? 0 : fused_members(&L, i, s);
        r = lower_node(&L, s);
        i += L.fuse_n;
        L.fuse_n = 0;
    }
    free(uses);
    L.uses = NULL;
    /* outputs not written in place by their producer: copy kernels */
    for (int o = 0; r == 0 && o < g->n_outputs; o++) {
        int t = g->outputs[o], b = tbuf[t];
        if (b >= 0 && p->bufs[b].storage == LOOP_ST_OUTPUT && p->bufs[b].index == o && p->bufs[b].alias_of < 0)
            continue;
        L.n = NULL;                 /* the copy belongs to no node */
        L.node = -1;
        if (b < 0)
            b = low_use_buf(&L, t);
        if (b < 0) {
            r = util_error(d, g->tensors[t].loc, "graph output '%s' is never produced", g->tensors[t].name);
            break;
        }
        const IrTensor *tt = &g->tensors[t];
        int ob = loop_add_buf(p, tt->name, tt->v.dtype, &tt->v.shape, LOOP_ST_OUTPUT);
        if (ob < 0) {
            r = util_error(d, tt->loc, "out of memory while lowering");
            break;
        }
        p->bufs[ob].index = o;
        p->bufs[ob].tensor = t;
        char name[64];
        snprintf(name, sizeof name, "copy_output_%d", o);
        if (low_copy_bufs(&L, ob, b, name) != 0)
            r = -1;
    }
    free(tbuf);
    if (r == 0) {
        loop_simplify(p);
        r = loop_verify(p, d);
    }
    if (r != 0) {
        loop_program_free(p);
        return NULL;
    }
    return p;
}

LowFn low_lowering(IrOp op)
{
    return (unsigned)op < IR_OP_COUNT ? low_table[op] : NULL;
}

int low_supports(IrOp op)
{
    return (unsigned)op < IR_OP_COUNT && low_table[op] != NULL;
}
