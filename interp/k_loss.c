/* interp/k_loss.c — reference kernels of NegativeLogLikelihoodLoss and
 * SoftmaxCrossEntropyLoss (= NLL of log_softmax over dim 1, optional
 * log_prob output).  Input [N, C, d...], target [N, d...]:
 *   loss[n, d] = -input[n, target[n, d], d] * weight[target[n, d]]
 * (0 where target == ignore_index); reduction "mean" divides the sum by the
 * sum of the weights used, "sum" sums, "none" keeps the target's shape.
 * A target outside [0, C) that is not ignore_index is an error. */
#include "interp/kernels.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static double ld(const IrArray *a, int64_t i) { return ir_load_f64(a->dtype, a->data, i); }

int interp_k_loss(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out, UtilDiag *d)
{
    const IrArray *x = in[0], *t = in[1], *w = n->n_in > 2 ? in[2] : NULL;
    int64_t nb = x->shape.dims[0], c = x->shape.dims[1], sp = 1;
    for (int i = 2; i < x->shape.rank; i++)
        sp *= x->shape.dims[i];
    int64_t nx = ir_array_numel(x);
    double *lp = malloc(((size_t)nx + 1) * sizeof *lp);
    if (!lp)
        return ir_node_error(g, n, d, "out of memory");
    for (int64_t i = 0; i < nx; i++)
        lp[i] = ld(x, i);
    if (n->op == IR_OP_SoftmaxCrossEntropyLoss) {         /* log_softmax over C */
        for (int64_t b = 0; b < nb; b++)
            for (int64_t s = 0; s < sp; s++) {
                double mx = -INFINITY, sum = 0.0;
                for (int64_t k = 0; k < c; k++)
                    mx = fmax(mx, lp[(b * c + k) * sp + s]);
                for (int64_t k = 0; k < c; k++)
                    sum += exp(lp[(b * c + k) * sp + s] - mx);
                for (int64_t k = 0; k < c; k++)
                    lp[(b * c + k) * sp + s] -= mx + log(sum);
            }
        if (n->n_out > 1 && out[1])
            for (int64_t i = 0; i < nx; i++)
                ir_store_f64(out[1]->dtype, out[1]->data, i, lp[i]);
    }
    int has_ii = ir_has_attr(n, IR_A_ignore_index);
    int64_t ii = ir_attr_int(n, IR_A_ignore_index);
    const char *red = ir_attr_str(n, IR_A_reduction);
    int none = !strcmp(red, "none");
    double total = 0.0, wsum = 0.0;
    for (int64_t b = 0; b < nb; b++)
        for (int64_t s = 0; s < sp; s++) {
            int64_t cls = ir_load_i64(t->dtype, t->data, b * sp + s);
            double loss = 0.0, wt = 0.0;
            if (!(has_ii && cls == ii)) {
                if (cls < 0 || cls >= c) {
                    free(lp);
                    return ir_node_error(g, n, d, "target %lld is outside [0, %lld)", (long long)cls, (long long)c);
                }
                wt = w ? ld(w, cls) : 1.0;
                loss = -lp[(b * c + cls) * sp + s] * wt;
            }
            if (none)
                ir_store_f64(out[0]->dtype, out[0]->data, b * sp + s, loss);
            total += loss;
            wsum += wt;
        }
    if (!none)
        ir_store_f64(out[0]->dtype, out[0]->data, 0, !strcmp(red, "sum") ? total : total / wsum);
    free(lp);
    return 0;
}
