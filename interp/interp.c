/* interp/interp.c — runs a graph node by node, freeing values after their
 * last use; evaluates single nodes for compile-time value propagation. */
#include "interp/interp.h"
#include "interp/kernels.h"

#include <stdlib.h>
#include <string.h>

static const InterpKernel kernel_table[IR_OP_COUNT] = {
#define OP(name, mi, ma, mo, mao, inf, ev, low, fl, doc) [IR_OP_##name] = interp_k_##ev,
#include "ir/ops.def"
#undef OP
};

void interp_array_free(IrArray *a)
{
    free(a->data);
    a->data = NULL;
}

void interp_strides(const IrShape *s, int64_t *st)
{
    int64_t acc = 1;
    for (int i = s->rank - 1; i >= 0; i--) {
        st[i] = acc;
        acc *= s->dims[i];
    }
}

int64_t interp_bcast_index(const IrShape *src, const int64_t *idx, int out_rank)
{
    int64_t off = 0, stride = 1;
    for (int i = src->rank - 1; i >= 0; i--) {
        int oi = i + (out_rank - src->rank);
        if (src->dims[i] != 1)
            off += idx[oi] * stride;
        stride *= src->dims[i];
    }
    return off;
}

int interp_next_index(const IrShape *s, int64_t *idx)
{
    for (int i = s->rank - 1; i >= 0; i--) {
        if (++idx[i] < s->dims[i])
            return 1;
        idx[i] = 0;
    }
    return 0;
}

static int alloc_value(IrArray *a, const IrTensor *t)
{
    a->dtype = t->v.dtype;
    a->shape = t->v.shape;
    int64_t n = ir_shape_numel(&a->shape);
    size_t es = ir_dtype_size(a->dtype);
    if (n < 0 || !es)
        return -1;
    a->data = calloc((size_t)n ? (size_t)n : 1, es);
    return a->data ? 0 : -1;
}

/* A node whose outputs all have no element has nothing to write: its kernel
 * is not called (a Softmax over [2^31 - 1, 0] looped over 2^31 empty rows). */
static int run_kernel(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out,
                      UtilDiag *d)
{
    int empty = n->n_out > 0;
    for (int k = 0; k < n->n_out && empty; k++)
        empty = !out[k] || ir_array_numel(out[k]) == 0;
    return empty ? 0 : kernel_table[n->op](g, n, in, out, d);
}

int interp_run(const IrGraph *g, const IrArray *inputs, IrArray *outputs, UtilDiag *d)
{
    int nt = g->n_tensors, rc = 0;
    IrArray *vals = calloc((size_t)nt + 1, sizeof *vals);
    char *owned = calloc((size_t)nt + 1, 1);
    int *last_use = malloc(((size_t)nt + 1) * sizeof(int));
    if (!vals || !owned || !last_use) {
        free(vals); free(owned); free(last_use);
        return util_error(d, util_loc_file(g->file), "out of memory");
    }
    for (int t = 0; t < nt; t++) {
        last_use[t] = -1;
        if (g->tensors[t].v.data)            /* constants and propagated values */
            vals[t] = g->tensors[t].v;
    }
    for (int i = 0; i < g->n_nodes; i++)
        for (int k = 0; k < g->nodes[i].n_in; k++)
            if (g->nodes[i].in[k] >= 0)
                last_use[g->nodes[i].in[k]] = i;
    for (int o = 0; o < g->n_outputs; o++)
        last_use[g->outputs[o]] = g->n_nodes;          /* keep outputs */
    for (int i = 0; i < g->n_inputs; i++) {
        int t = g->inputs[i];
        const IrTensor *x = &g->tensors[t];
        if (inputs[i].dtype != x->v.dtype || !ir_shape_equal(&inputs[i].shape, &x->v.shape)) {
            char want[160], got[160];
            ir_shape_str(&x->v.shape, want, sizeof want);
            ir_shape_str(&inputs[i].shape, got, sizeof got);
            rc = util_error(d, util_loc_file(g->file), "input '%s' must be %s %s, got %s %s", x->name,
                            ir_dtype_name(x->v.dtype), want, ir_dtype_name(inputs[i].dtype), got);
            goto done;
        }
        vals[t] = inputs[i];
    }
    for (int i = 0; i < g->n_nodes && !rc; i++) {
        const IrNode *n = &g->nodes[i];
        const IrArray *in[IR_VARIADIC + 1];
        IrArray *out[IR_VARIADIC + 1];
        int skip = 1;
        for (int k = 0; k < n->n_out; k++)
            if (n->out[k] >= 0 && !g->tensors[n->out[k]].v.data)
                skip = 0;
        if (skip)                                         /* every output known at compile time */
            continue;
        for (int k = 0; k < n->n_in; k++) {
            in[k] = n->in[k] >= 0 ? &vals[n->in[k]] : NULL;
            if (in[k] && !in[k]->data) {
                rc = ir_node_error(g, n, d, "input '%s' has no value", g->tensors[n->in[k]].name);
                goto done;
            }
        }
        for (int k = 0; k < n->n_out; k++) {
            int t = n->out[k];
            out[k] = NULL;
            if (t < 0)
                continue;
            if (alloc_value(&vals[t], &g->tensors[t])) {
                rc = ir_node_error(g, n, d, "out of memory for output '%s'", g->tensors[t].name);
                goto done;
            }
            owned[t] = 1;
            out[k] = &vals[t];
        }
        rc = run_kernel(g, n, in, out, d);
        /* free values whose last use was this node */
        for (int k = 0; k < n->n_in; k++) {
            int t = n->in[k];
            if (t >= 0 && owned[t] && last_use[t] == i) {
                interp_array_free(&vals[t]);
                owned[t] = 0;
            }
        }
        for (int k = 0; k < n->n_out; k++) {         /* unused outputs */
            int t = n->out[k];
            if (t >= 0 && owned[t] && last_use[t] < 0) {
                interp_array_free(&vals[t]);
                owned[t] = 0;
            }
        }
    }
    for (int o = 0; o < g->n_outputs && !rc; o++) {
        /* always a fresh copy: the caller frees every output the same way */
        int t = g->outputs[o];
        size_t bytes = ir_array_bytes(&vals[t]);
        outputs[o] = vals[t];
        outputs[o].data = malloc(bytes ? bytes : 1);
        if (!outputs[o].data) {
            rc = util_error(d, util_loc_file(g->file), "out of memory");
            for (int p = 0; p < o; p++)
                interp_array_free(&outputs[p]);
            break;
        }
        memcpy(outputs[o].data, vals[t].data, bytes);
    }
done:
    for (int t = 0; t < nt; t++)
        if (owned[t])
            free(vals[t].data);
    free(vals);
    free(owned);
    free(last_use);
    return rc;
}

int interp_eval_node(IrGraph *g, int node, UtilDiag *d)
{
    const IrNode *n = &g->nodes[node];
    const IrArray *in[IR_VARIADIC + 1];
    IrArray outv[IR_VARIADIC + 1];
    IrArray *out[IR_VARIADIC + 1];
    for (int k = 0; k < n->n_in; k++) {
        in[k] = n->in[k] >= 0 ? &g->tensors[n->in[k]].v : NULL;
        if (in[k] && !in[k]->data && !(ir_op_info(n->op)->flags & IR_OPF_SHAPEVAL))
            return ir_node_error(g, n, d, "input '%s' has no known value", g->tensors[n->in[k]].name);
    }
    for (int k = 0; k < n->n_out; k++) {
        out[k] = NULL;
        if (n->out[k] < 0)
            continue;
        outv[k] = g->tensors[n->out[k]].v;
        outv[k].data = ir_alloc(g, ir_array_bytes(&outv[k]) ? ir_array_bytes(&outv[k]) : 1);
        if (!outv[k].data)
            return ir_node_error(g, n, d, "out of memory");
        out[k] = &outv[k];
    }
    if (run_kernel(g, n, in, out, d))
        return -1;
    for (int k = 0; k < n->n_out; k++)
        if (out[k])
            g->tensors[n->out[k]].v.data = outv[k].data;
    return 0;
}
