/* passes/fuse.c — operator fusion: groups of nodes that lowering computes
 * in one loop nest (docs/passes.md, "Fusion").
 *
 * A group is a head followed by a chain of elementwise members:
 *  - head: an anchor (Conv, ConvTranspose, MatMul, Gemm with a floating-point
 *    output) or any elementwise operator (unary, binary, Clip, Where,
 *    Min/Max/Sum/Mean, Cast);
 *  - member: an elementwise operator that reads the previous node's output
 *    (the chain value) and has exactly the head's output dtype and shape; its
 *    other operands (a bias or scale constant, a residual tensor, Clip
 *    bounds) are read at the output element's broadcast index.
 * The chain value a member reads may be fused away only when that member is
 * its only consumer and it is not a graph output.
 *
 * The result is observable in the graph: each group is made contiguous in
 * g->nodes and every member gets IrNode.fused = 1 ("computed in the kernel of
 * the node before it").  The group moves to the position of its last member,
 * which is always a valid topological order: every other operand of a member
 * is produced before that member, and the head's and inner members' outputs
 * are read by the next member only.  Lowering (lower/lower.c) re-checks each
 * group and computes it in the head's kernel (low_fused_store); the
 * intermediate tensors get no buffer. */
#include "passes/pass_impl.h"

#include <stdlib.h>
#include <string.h>

/* A member's scalar function runs in its head's epilogue (ir/ops.def FUSE). */
int pass_fuse_elementwise(IrOp op)
{
    const IrOpInfo *info = ir_op_info(op);
    return info && (info->flags & IR_OPF_FUSE);
}

/* Operators whose kernel ends in low_fused_store (an epilogue may follow). */
int pass_fuse_anchor(IrOp op)
{
    return op == IR_OP_Conv || op == IR_OP_ConvTranspose || op == IR_OP_MatMul || op == IR_OP_Gemm;
}

static int is_output(const IrGraph *g, int t)
{
    for (int o = 0; o < g->n_outputs; o++)
        if (g->outputs[o] == t)
            return 1;
    return 0;
}

/* Node i computes something at run time into exactly one output. */
static int single_runtime_output(const IrGraph *g, const IrNode *n)
{
    if (n->dead || n->n_out < 1 || n->out[0] < 0 || g->tensors[n->out[0]].v.data)
        return 0;
    for (int k = 1; k < n->n_out; k++)
        if (n->out[k] >= 0)
            return 0;
    return 1;
}

int pass_fuse_head(const IrGraph *g, const IrNode *n)
{
    if (!single_runtime_output(g, n))
        return 0;
    if (pass_fuse_anchor(n->op))
        return ir_dtype_is_float(g->tensors[n->out[0]].v.dtype);
    return pass_fuse_elementwise(n->op);
}

int pass_fuse_member(const IrGraph *g, const IrNode *head, const IrNode *m, int chain)
{
    if (!pass_fuse_elementwise(m->op) || !single_runtime_output(g, m))
        return 0;
    const IrTensor *h = &g->tensors[head->out[0]], *y = &g->tensors[m->out[0]];
    if (y->v.dtype != h->v.dtype || !ir_shape_equal(&y->v.shape, &h->v.shape))
        return 0;
    int reads = 0;
    for (int k = 0; k < m->n_in; k++)
        reads |= m->in[k] == chain;
    return reads;
}

/* 1 when every use of tensor t is by node `user` and t is no graph output. */
static int only_used_by(const IrGraph *g, int t, int user)
{
    if (is_output(g, t))
        return 0;
    for (int u = g->use_start[t]; u < g->use_start[t + 1]; u++)
        if (g->use_node[u] != user)
            return 0;
    return g->use_start[t + 1] > g->use_start[t];
}

/* The single consumer node of t, or -1. */
static int sole_consumer(const IrGraph *g, int t)
{
    return g->use_start[t + 1] > g->use_start[t] && only_used_by(g, t, g->use_node[g->use_start[t]])
               ? g->use_node[g->use_start[t]] : -1;
}

int pass_fuse(IrGraph *g, UtilDiag *d)
{
    int nn = g->n_nodes;
    if (nn == 0)
        return 0;
    int *group = malloc((size_t)nn * sizeof *group);   /* head of the node's group, or -1 */
    int *last = malloc((size_t)nn * sizeof *last);     /* head: the group's last member */
    int *next = malloc((size_t)nn * sizeof *next);     /* member → next member, -1 at the end */
    IrNode *order = malloc((size_t)nn * sizeof *order);
    if (!group || !last || !next || !order || ir_build_uses(g)) {
        free(group); free(last); free(next); free(order);
        return util_error(d, util_loc_file(g->file), "out of memory");
    }
    for (int i = 0; i < nn; i++) {
        group[i] = last[i] = next[i] = -1;
        g->nodes[i].fused = 0;
    }
    int fused = 0;
    for (int i = 0; i < nn; i++) {
        if (group[i] >= 0 || !pass_fuse_head(g, &g->nodes[i]))
            continue;
        group[i] = last[i] = i;
        for (int cur = i;;) {
            int t = g->nodes[cur].out[0], c = sole_consumer(g, t);
            if (c < 0 || group[c] >= 0 || !pass_fuse_member(g, &g->nodes[i], &g->nodes[c], t))
                break;
            group[c] = i;
            next[cur] = c;
            last[i] = c;
            cur = c;
            fused++;
        }
    }
    if (fused) {
        /* each group at its last member's position, in chain order */
        int w = 0;
        for (int i = 0; i < nn; i++) {
            int h = group[i];
            if (h < 0) {
                order[w++] = g->nodes[i];
                continue;
            }
            if (last[h] != i)
                continue;
            for (int m = h; m >= 0; m = next[m]) {
                order[w] = g->nodes[m];
                order[w++].fused = m != h;
            }
        }
        memcpy(g->nodes, order, (size_t)nn * sizeof *order);
        for (int i = 0; i < nn; i++)
            for (int k = 0; k < g->nodes[i].n_out; k++)
                if (g->nodes[i].out[k] >= 0)
                    g->tensors[g->nodes[i].out[k]].producer = i;
        g->uses_valid = 0;
    }
    free(group);
    free(last);
    free(next);
    free(order);
    return fused;
}
