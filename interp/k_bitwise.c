/* interp/k_bitwise.c — BitwiseAnd / BitwiseOr / BitwiseXor (numpy
 * broadcasting) and BitwiseNot on integer tensors.  Values are handled as
 * int64 bit patterns; ir_store_i64 truncates back to the element width, which
 * is exact for every integer dtype. */
#include "interp/kernels.h"

int interp_k_bitwise(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out,
                     UtilDiag *d)
{
    (void)g; (void)d;
    IrArray *y = out[0];
    const IrArray *a = in[0], *b = n->op == IR_OP_BitwiseNot ? NULL : in[1];
    int64_t cnt = ir_array_numel(y), idx[IR_MAX_RANK] = { 0 };
    for (int64_t i = 0; i < cnt; i++, interp_next_index(&y->shape, idx)) {
        uint64_t x = (uint64_t)ir_load_i64(a->dtype, a->data, interp_bcast_index(&a->shape, idx, y->shape.rank));
        uint64_t z = b ? (uint64_t)ir_load_i64(b->dtype, b->data, interp_bcast_index(&b->shape, idx, y->shape.rank))
                       : 0;
        uint64_t r = n->op == IR_OP_BitwiseAnd ? x & z : n->op == IR_OP_BitwiseOr ? x | z
                   : n->op == IR_OP_BitwiseXor ? x ^ z : ~x;
        ir_store_i64(y->dtype, y->data, i, (int64_t)r);
    }
    return 0;
}
