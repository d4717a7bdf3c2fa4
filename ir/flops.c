/* ir/flops.c — arithmetic cost estimates for `dlcc info` and reports.
 * A multiply-add counts as 2 FLOPs; elementwise ops count 1 per output
 * element; data movement counts 0. */
#include "ir/ir.h"
#include "util/util.h"

static int64_t numel_out(const IrGraph *g, const IrNode *n, int k)
{
    const IrTensor *t = ir_out(g, n, k);
    return t && t->shape_known ? ir_shape_numel(&t->v.shape) : 0;
}

/* 2 * out * (Cin/group) * prod(kernel), weights w */
static int64_t conv_flops(const IrTensor *w, int64_t y)
{
    if (!w || w->v.shape.rank < 2)
        return 0;
    int64_t k = w->v.shape.dims[1];
    for (int i = 2; i < w->v.shape.rank; i++)
        k *= w->v.shape.dims[i];
    return 2 * y * k;
}

int64_t ir_node_flops(const IrGraph *g, const IrNode *n)
{
    const IrTensor *x = ir_in(g, n, 0), *w = ir_in(g, n, 1);
    int64_t y = numel_out(g, n, 0);
    switch (n->op) {
    case IR_OP_Conv:
    case IR_OP_ConvInteger:
        return conv_flops(w, y);
    case IR_OP_QLinearConv:     /* its weights are input 3 */
        return conv_flops(ir_in(g, n, 3), y);
    case IR_OP_ConvTranspose: { /* 2 * in * Cout/group * prod(kernel) */
        if (!w || !x || w->v.shape.rank < 2)
            return 0;
        int64_t k = w->v.shape.dims[1];
        for (int i = 2; i < w->v.shape.rank; i++)
            k *= w->v.shape.dims[i];
        return 2 * ir_shape_numel(&x->v.shape) * k;
    }
    case IR_OP_MatMul:
    case IR_OP_MatMulInteger:
    case IR_OP_QLinearMatMul:
    case IR_OP_Gemm: {          /* 2 * M * N * K */
        if (!x || !x->v.shape.rank)
            return 0;
        int64_t kdim = x->v.shape.dims[x->v.shape.rank - 1];
        if (n->op == IR_OP_Gemm && ir_attr_int(n, IR_A_transA))
            kdim = x->v.shape.dims[0];
        if (n->op == IR_OP_MatMul && x->v.shape.rank == 1)
            kdim = x->v.shape.dims[0];
        return 2 * y * kdim;
    }
    case IR_OP_RNN:
    case IR_OP_GRU:
    case IR_OP_LSTM: {          /* 2 * steps * rows * (W's and R's elements): X W^T and R h per step */
        const IrTensor *r = ir_in(g, n, 2);
        if (!x || !w || !r || x->v.shape.rank != 3 || !x->v.shape.dims[2] || !x->shape_known || !w->shape_known ||
            !r->shape_known)
            return 0;
        int64_t f;
        if (util_mul_overflow_i64(2 * (ir_shape_numel(&x->v.shape) / x->v.shape.dims[2]),
                                  ir_shape_numel(&w->v.shape) + ir_shape_numel(&r->v.shape), &f))
            return 0;
        return f;
    }
    case IR_OP_MaxPool: case IR_OP_AveragePool: case IR_OP_LpPool: {
        const int64_t *ks;
        int nk = ir_attr_ints(n, IR_A_kernel_shape, &ks);
        int64_t k = 1;
        for (int i = 0; i < nk; i++)
            k *= ks[i];
        return y * k;
    }
    default:
        break;
    }
    const IrOpInfo *info = ir_op_info(n->op);
    if (info && (info->flags & IR_OPF_VIEW))
        return 0;
    if (info && (info->flags & IR_OPF_EW))
        return y;
    switch (n->op) {            /* reductions and normalizations: ~ a few ops per input element */
    case IR_OP_ReduceSum: case IR_OP_ReduceMean: case IR_OP_ReduceMax: case IR_OP_ReduceMin:
    case IR_OP_ReduceProd: case IR_OP_ReduceL1: case IR_OP_ReduceL2: case IR_OP_ReduceSumSquare:
    case IR_OP_ReduceLogSum: case IR_OP_ReduceLogSumExp: case IR_OP_ArgMax: case IR_OP_ArgMin:
    case IR_OP_GlobalAveragePool: case IR_OP_GlobalMaxPool: case IR_OP_GlobalLpPool:
        return x ? ir_shape_numel(&x->v.shape) : 0;
    case IR_OP_Softmax: case IR_OP_LogSoftmax:
        return 4 * y;
    case IR_OP_BatchNormalization:
        return 2 * y;
    case IR_OP_InstanceNormalization: case IR_OP_LayerNormalization: case IR_OP_LpNormalization:
        return 5 * y;
    default:
        return 0;
    }
}
