/* passes/lower_matmul.c — compute templates of MatMul (numpy semantics:
 * 1-D operands promoted, batch dims broadcast) and Gemm (transA/transB,
 * alpha, beta, C broadcast to [M, N]).
 *
 * One template: loops over the output, an accumulator, a loop over K; the
 * operands' indices come from the output variables (batch dims right-aligned
 * and broadcast, size-1 dims reading index 0).  Integers accumulate in
 * int64. */
#include "passes/lower_impl.h"

static IrDType acc_type(IrDType t) { return ir_dtype_is_float(t) ? low_ctype(t) : IR_DT_I64; }

/* Index of a batched matrix operand: batch dims (all but the last two)
 * broadcast against the output's batch variables bv[0..nb), then row, col. */
static LoopExpr *mat_index(Low *L, int b, const int *bv, int nb, LoopExpr *row, LoopExpr *col)
{
    const LoopBuf *bb = low_buf(L, b);
    int r = bb->shape.rank;
    LoopExpr *idx[IR_MAX_RANK];
    if (r == 1) {                        /* a vector: only its K index */
        idx[0] = row ? row : col;
        return low_index(L, b, idx);
    }
    int off = nb - (r - 2);
    for (int i = 0; i < r - 2; i++)
        idx[i] = bb->shape.dims[i] == 1 ? low_i(L, 0) : low_v(L, bv[off + i]);
    idx[r - 2] = row;
    idx[r - 1] = col;
    return low_index(L, b, idx);
}

/* y[..] = sum_k a(.., k) * b(k, ..) with the index builders below; post
 * finishes the value (Gemm's alpha/beta). */
typedef struct Mm {
    int a, b, y;
    int64_t K;
    int yv[IR_MAX_RANK];
    int kv;
    IrDType t;
} Mm;

static int mm_emit(Low *L, Mm *m, LoopExpr *ai, LoopExpr *bi, LoopExpr *(*post)(Low *L, Mm *m, LoopExpr *acc))
{
    LoopStmt *blk = loop_block(L->p), *body = loop_block(L->p);
    int acc = low_let(L, blk, "acc", low_const(L, m->t, 0), 1);
    if (acc < 0)
        return low_oom(L);
    LoopExpr *prod = low_bin(L, LOOP_MUL, low_load(L, m->a, ai, m->t), low_load(L, m->b, bi, m->t));
    if (low_add(L, body, loop_assign(L->p, acc, low_bin(L, LOOP_ADD, low_v(L, acc), prod))) ||
        low_add(L, blk, loop_for(L->p, m->kv, low_i(L, m->K), LOOP_SERIAL, body)))
        return low_oom(L);
    const LoopBuf *yb = low_buf(L, m->y);
    LoopExpr *idx[IR_MAX_RANK];
    for (int i = 0; i < yb->shape.rank; i++)
        idx[i] = low_v(L, m->yv[i]);
    LoopExpr *v = post ? post(L, m, low_v(L, acc)) : low_v(L, acc);
    if (low_add(L, blk, low_store(L, m->y, low_index(L, m->y, idx), v)))
        return low_oom(L);
    return low_kernel(L, low_nest(L, yb->shape.rank, m->yv, yb->shape.dims, blk));
}

int low_matmul(Low *L)
{
    Mm m = { .a = low_in(L, 0), .b = low_in(L, 1), .y = low_out(L, 0) };
    const LoopBuf *ab = low_buf(L, m.a), *bb = low_buf(L, m.b), *yb = low_buf(L, m.y);
    int a1 = ab->shape.rank == 1, b1 = bb->shape.rank == 1, ry = yb->shape.rank;
    m.K = ab->shape.dims[ab->shape.rank - 1];
    m.t = acc_type(yb->dtype);
    if (low_vars(L, ry, "i", m.yv) || low_vars(L, 1, "k", &m.kv))
        return low_oom(L);
    int nb = ry - (a1 ? 0 : 1) - (b1 ? 0 : 1);          /* output batch dims */
    LoopExpr *row = a1 ? NULL : low_v(L, m.yv[nb]);
    LoopExpr *col = b1 ? NULL : low_v(L, m.yv[ry - 1]);
    LoopExpr *ai = mat_index(L, m.a, m.yv, nb, row, low_v(L, m.kv));
    LoopExpr *bi = mat_index(L, m.b, m.yv, nb, low_v(L, m.kv), col);
    return mm_emit(L, &m, ai, bi, NULL);
}

static LoopExpr *gemm_post(Low *L, Mm *m, LoopExpr *acc)
{
    double alpha = ir_attr_float(L->n, IR_A_alpha), beta = ir_attr_float(L->n, IR_A_beta);
    LoopExpr *v = alpha == 1 ? acc : low_bin(L, LOOP_MUL, low_const(L, m->t, alpha), acc);
    int c = low_in(L, 2);
    if (c < 0 || beta == 0)
        return v;
    LoopExpr *cv = low_load(L, c, low_bcast(L, c, m->yv, 2), m->t);
    return low_bin(L, LOOP_ADD, v, beta == 1 ? cv : low_bin(L, LOOP_MUL, low_const(L, m->t, beta), cv));
}

int low_gemm(Low *L)
{
    Mm m = { .a = low_in(L, 0), .b = low_in(L, 1), .y = low_out(L, 0) };
    int ta = ir_attr_int(L->n, IR_A_transA) != 0, tb = ir_attr_int(L->n, IR_A_transB) != 0;
    m.K = low_buf(L, m.a)->shape.dims[ta ? 0 : 1];
    m.t = acc_type(low_buf(L, m.y)->dtype);
    if (low_vars(L, 2, "i", m.yv) || low_vars(L, 1, "k", &m.kv))
        return low_oom(L);
    LoopExpr *ai[2] = { low_v(L, ta ? m.kv : m.yv[0]), low_v(L, ta ? m.yv[0] : m.kv) };
    LoopExpr *bi[2] = { low_v(L, tb ? m.yv[1] : m.kv), low_v(L, tb ? m.kv : m.yv[1]) };
    return mm_emit(L, &m, low_index(L, m.a, ai), low_index(L, m.b, bi), gemm_post);
}
