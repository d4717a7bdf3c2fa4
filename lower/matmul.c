/* lower/matmul.c — compute templates of MatMul (numpy semantics:
 * 1-D operands promoted, batch dims broadcast) and Gemm (transA/transB,
 * alpha, beta, C broadcast to [M, N]).
 *
 * One template: loops over the output, an accumulator, a loop over K; the
 * operands' indices come from the output variables (batch dims right-aligned
 * and broadcast, size-1 dims reading index 0).  Integers accumulate in
 * int64. */
#include "lower/lower_impl.h"
#include "lower/tile/tile.h"

#include <math.h>

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
    LoopExpr *az, *bz;     /* zero points subtracted from a's / b's elements, or NULL */
    int nb;                /* output batch dims */
} Mm;

static int mm_emit(Low *L, Mm *m, LoopExpr *ai, LoopExpr *bi, LoopExpr *(*post)(Low *L, Mm *m, LoopExpr *acc))
{
    LoopStmt *blk = loop_block(L->p), *body = loop_block(L->p);
    int acc = low_let(L, blk, "acc", low_const(L, m->t, 0), 1);
    if (acc < 0)
        return low_oom(L);
    LoopExpr *av = low_load(L, m->a, ai, m->t), *bv = low_load(L, m->b, bi, m->t);
    if (m->az)
        av = low_bin(L, LOOP_SUB, av, m->az);
    if (m->bz)
        bv = low_bin(L, LOOP_SUB, bv, m->bz);
    LoopExpr *prod = low_bin(L, LOOP_MUL, av, bv);
    if (low_add(L, body, loop_assign(L->p, acc, low_bin(L, LOOP_ADD, low_v(L, acc), prod))) ||
        low_add(L, blk, loop_for(L->p, m->kv, low_i(L, m->K), LOOP_SERIAL, body)))
        return low_oom(L);
    const IrShape ysh = low_buf(L, m->y)->shape;   /* a copy: post and the fused store may add buffers */
    LoopExpr *idx[IR_MAX_RANK];
    for (int i = 0; i < ysh.rank; i++)
        idx[i] = low_v(L, m->yv[i]);
    LoopExpr *v = post ? post(L, m, low_v(L, acc)) : low_v(L, acc);
    if (low_add(L, blk, low_fused_store(L, 0, idx, v)))
        return low_oom(L);
    return low_kernel(L, low_nest(L, ysh.rank, m->yv, ysh.dims, blk));
}

/* MatMul and its integer forms: a, b at input slots ia, ib. */
static int matmul_common(Low *L, int ia, int ib, Mm *mp, LoopExpr *(*post)(Low *L, Mm *m, LoopExpr *acc),
                         int (*prep)(Low *L, Mm *m))
{
    Mm m = *mp;
    m.a = low_in(L, ia);
    m.b = low_in(L, ib);
    m.y = low_out(L, 0);
    const LoopBuf *ab = low_buf(L, m.a), *bb = low_buf(L, m.b), *yb = low_buf(L, m.y);
    int a1 = ab->shape.rank == 1, b1 = bb->shape.rank == 1, ry = yb->shape.rank;
    m.K = ab->shape.dims[ab->shape.rank - 1];
    if (!m.t)
        m.t = acc_type(yb->dtype);
    if (low_vars(L, ry, "i", m.yv) || low_vars(L, 1, "k", &m.kv))
        return low_oom(L);
    int nb = ry - (a1 ? 0 : 1) - (b1 ? 0 : 1);          /* output batch dims */
    m.nb = nb;
    LoopExpr *row = a1 ? NULL : low_v(L, m.yv[nb]);
    LoopExpr *col = b1 ? NULL : low_v(L, m.yv[ry - 1]);
    LoopExpr *ai = mat_index(L, m.a, m.yv, nb, row, low_v(L, m.kv));
    LoopExpr *bi = mat_index(L, m.b, m.yv, nb, low_v(L, m.kv), col);
    if (prep && prep(L, &m) != 0)
        return -1;
    return mm_emit(L, &m, ai, bi, post);
}

int low_matmul(Low *L)
{
    int r = tile_bmatmul(L);
    if (r <= 0)
        return r;
    r = tile_matmul(L);
    if (r <= 0)
        return r;
    Mm m = { 0 };
    return matmul_common(L, 0, 1, &m, NULL, NULL);
}

/* A quantization parameter of a (is_a) or b at input slot k: one element,
 * or one per row of a ([M]) / column of b ([N]); its value at the output
 * element (NULL when absent, *bad set when of another shape). */
static LoopExpr *mm_param(Low *L, Mm *m, int k, int is_a, IrDType t, int *bad)
{
    int p = low_in(L, k);
    if (p < 0)
        return NULL;
    const LoopBuf *pb = low_buf(L, p), *ob = low_buf(L, is_a ? m->a : m->b);
    if (ir_shape_numel(&pb->shape) == 1)
        return low_load(L, p, low_i(L, 0), t);
    int ry = low_buf(L, m->y)->shape.rank;
    if (pb->shape.rank == 1 && ob->shape.rank >= 2 &&
        pb->shape.dims[0] == ob->shape.dims[ob->shape.rank - (is_a ? 2 : 1)])
        return low_load(L, p, low_v(L, m->yv[is_a ? m->nb : ry - 1]), t);
    *bad = 1;
    return NULL;
}

static int int_zero_points(Low *L, Mm *m, int az, int bz)
{
    int bad = 0;
    m->t = low_int_acc(L, m->K, -1);    /* int32 where no sum can overflow it */
    m->az = mm_param(L, m, az, 1, m->t, &bad);
    m->bz = mm_param(L, m, bz, 0, m->t, &bad);
    if (bad)
        return util_error(L->d, L->n->loc, "operator %s (node '%s') with zero points other than per tensor, per row "
                          "of a or per column of b is not supported on target cpu yet", ir_op_name(L->n->op),
                          L->n->name ? L->n->name : "");
    return 0;
}

static int mmint_prep(Low *L, Mm *m) { return int_zero_points(L, m, 2, 3); }
static int qlmm_prep(Low *L, Mm *m)
{
    int bad = 0;
    IrDType st = low_ctype(low_buf(L, low_in(L, 1))->dtype);
    if (!mm_param(L, m, 1, 1, st, &bad) || !mm_param(L, m, 4, 0, st, &bad) || bad)
        return util_error(L->d, L->n->loc, "operator QLinearMatMul (node '%s') with scales other than per tensor, per "
                          "row of a or per column of b is not supported on target cpu yet", L->n->name ? L->n->name : "");
    return int_zero_points(L, m, 2, 5);
}

int low_matmulinteger(Low *L)
{
    Mm m = { .t = IR_DT_I64 };
    return matmul_common(L, 0, 1, &m, NULL, mmint_prep);
}

/* QLinearMatMul's output: the multiplier a_s * b_s / y_s in the scales' type
 * (as the interpreter), then low_requantize */
static LoopExpr *qlmm_post(Low *L, Mm *m, LoopExpr *acc)
{
    int bad = 0;
    IrDType st = low_ctype(low_buf(L, low_in(L, 1))->dtype);
    LoopExpr *as = mm_param(L, m, 1, 1, st, &bad), *bs = mm_param(L, m, 4, 0, st, &bad);
    if (bad || !as || !bs)
        return NULL;
    LoopExpr *mul = low_bin(L, LOOP_DIV, low_bin(L, LOOP_MUL, as, bs), low_load(L, low_in(L, 6), low_i(L, 0), st));
    return low_requantize(L, acc, mul, low_buf(L, low_in(L, 1))->dtype, low_in(L, 7));
}

int low_qlinearmatmul(Low *L)
{
    int r = tile_qmatmul(L);
    if (r <= 0)
        return r;
    Mm m = { .t = IR_DT_I64 };
    return matmul_common(L, 0, 3, &m, qlmm_post, qlmm_prep);
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
    int r = tile_bgemm(L);
    if (r <= 0)
        return r;
    r = tile_gemm(L);
    if (r <= 0)
        return r;
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

/* Einsum: loops over the output labels, an accumulator, loops over the
 * summed labels; each operand reads at its labels' variables (a dim of
 * extent 1 under a larger label broadcasts: index 0; a repeated label takes
 * the diagonal).  The equation is ir_einsum's, as the interpreter's. */
int low_einsum(Low *L)
{
    const IrNode *n = L->n;
    const IrShape *shp[IR_EINSUM_MAX_IN];
    int nin = n->n_in < IR_EINSUM_MAX_IN ? n->n_in : IR_EINSUM_MAX_IN, y = low_out(L, 0);
    int buf[IR_EINSUM_MAX_IN];
    for (int i = 0; i < nin; i++) {
        buf[i] = low_in(L, i);
        shp[i] = &low_buf(L, buf[i])->shape;
    }
    IrEinsum e;
    if (ir_einsum(L->g, n, shp, nin, &e, L->d))
        return -1;
    IrDType t = acc_type(low_buf(L, y)->dtype);
    int var[IR_EINSUM_MAX_LABELS], is_out[IR_EINSUM_MAX_LABELS] = { 0 };
    for (int k = 0; k < e.out_rank; k++)
        is_out[e.out_label[k]] = 1;
    for (int l = 0; l < e.n_labels; l++)
        if ((var[l] = loop_add_var(L->p, is_out[l] ? "i" : "r", IR_DT_I64)) < 0)
            return low_oom(L);
    LoopStmt *blk = loop_block(L->p);
    int acc = low_let(L, blk, "acc", low_const(L, t, 0), 1);
    if (acc < 0)
        return low_oom(L);
    LoopExpr *prod = NULL;
    for (int i = 0; i < e.n_in; i++) {
        LoopExpr *idx[IR_MAX_RANK];
        for (int k = 0; k < e.rank[i]; k++) {
            int l = e.label[i][k];
            idx[k] = shp[i]->dims[k] == 1 && e.size[l] != 1 ? low_i(L, 0) : low_v(L, var[l]);
        }
        LoopExpr *v = low_load(L, buf[i], low_index(L, buf[i], idx), t);
        prod = prod ? low_bin(L, LOOP_MUL, prod, v) : v;
    }
    LoopStmt *inner = loop_assign(L->p, acc, low_bin(L, LOOP_ADD, low_v(L, acc), prod ? prod : low_const(L, t, 1)));
    for (int l = e.n_labels - 1; l >= 0 && inner; l--)
        if (!is_out[l])
            inner = loop_for(L->p, var[l], low_i(L, e.size[l]), LOOP_SERIAL, inner);
    LoopExpr *oi[IR_MAX_RANK];
    int ov[IR_MAX_RANK];
    int64_t ext[IR_MAX_RANK];
    for (int k = 0; k < e.out_rank; k++) {
        ov[k] = var[e.out_label[k]];
        ext[k] = e.size[e.out_label[k]];
        oi[k] = low_v(L, ov[k]);
    }
    if (low_add(L, blk, inner) || low_add(L, blk, low_store(L, y, low_index(L, y, oi), low_v(L, acc))))
        return low_oom(L);
    return low_kernel(L, low_nest(L, e.out_rank, ov, ext, blk));
}

/* DFT: the direct sum over the transformed axis (zero-padded or truncated
 * to the DFT length), out[k] = scale * sum_t in[t] e^(sign 2 pi i k t / len),
 * the angle reduced with (k t) mod len as the interpreter; float64. */
int low_dft(Low *L)
{
    const IrNode *n = L->n;
    int x = low_in(L, 0), y = low_out(L, 0);
    const LoopBuf *xb = low_buf(L, x), *yb = low_buf(L, y);
    IrArray xa = { .dtype = xb->dtype, .shape = xb->shape };
    const IrArray *len_in = low_known(L, 1), *ax_in = low_known(L, 2);
    if ((low_has(L, 1) && !len_in) || (low_has(L, 2) && !ax_in))
        return ir_node_error(L->g, n, L->d, "dft_length and axis must be known at compile time");
    int axis;
    int64_t len;
    if (ir_dft_params(L->g, n, &xa, len_in, ax_in, &axis, &len, L->d))
        return -1;
    int r = xb->shape.rank, cplx = xb->shape.dims[r - 1] == 2, inverse = ir_attr_int(n, IR_A_inverse) != 0;
    int64_t cnt = xb->shape.dims[axis] < len ? xb->shape.dims[axis] : len;
    IrDType t = IR_DT_F64;
    double sign = inverse ? 1 : -1, scale = inverse ? 1.0 / (double)len : 1.0;
    int v[IR_MAX_RANK], tv;
    if (low_vars(L, r - 1, "i", v) || low_vars(L, 1, "t", &tv))
        return low_oom(L);
    LoopStmt *blk = loop_block(L->p), *b = loop_block(L->p);
    int re = low_let(L, blk, "re", low_const(L, t, 0), 1), im = low_let(L, blk, "im", low_const(L, t, 0), 1);
    if (re < 0 || im < 0)
        return low_oom(L);
    LoopExpr *xi[IR_MAX_RANK];
    for (int i = 0; i < r - 1; i++)
        xi[i] = low_v(L, i == axis ? tv : v[i]);
    xi[r - 1] = low_i(L, 0);
    int av = low_let(L, b, "a", low_load(L, x, low_index(L, x, xi), t), 0);
    xi[r - 1] = low_i(L, 1);
    for (int i = 0; i < r - 1; i++)
        xi[i] = low_v(L, i == axis ? tv : v[i]);
    int bv = low_let(L, b, "b", cplx ? low_load(L, x, low_index(L, x, xi), t) : low_const(L, t, 0), 0);
    LoopExpr *kt = low_bin(L, LOOP_MOD, low_bin(L, LOOP_MUL, low_v(L, v[axis]), low_v(L, tv)), low_i(L, len));
    int ang = low_let(L, b, "ang", low_bin(L, LOOP_MUL, low_convert(L, kt, t), low_const(L, t, sign * 2 * M_PI / (double)len)), 0);
    if (av < 0 || bv < 0 || ang < 0)
        return low_oom(L);
    int cv = low_let(L, b, "c", loop_call(L->p, LOOP_I_cos, 1, (LoopExpr *[]){ low_v(L, ang) }), 0);
    int sv = low_let(L, b, "s", loop_call(L->p, LOOP_I_sin, 1, (LoopExpr *[]){ low_v(L, ang) }), 0);
    if (cv < 0 || sv < 0)
        return low_oom(L);
    LoopExpr *dre = low_bin(L, LOOP_SUB, low_bin(L, LOOP_MUL, low_v(L, av), low_v(L, cv)), low_bin(L, LOOP_MUL, low_v(L, bv), low_v(L, sv)));
    LoopExpr *dim = low_bin(L, LOOP_ADD, low_bin(L, LOOP_MUL, low_v(L, av), low_v(L, sv)), low_bin(L, LOOP_MUL, low_v(L, bv), low_v(L, cv)));
    if (low_add(L, b, loop_assign(L->p, re, low_bin(L, LOOP_ADD, low_v(L, re), dre))) ||
        low_add(L, b, loop_assign(L->p, im, low_bin(L, LOOP_ADD, low_v(L, im), dim))) ||
        low_add(L, blk, loop_for(L->p, tv, low_i(L, cnt), LOOP_SERIAL, b)))
        return low_oom(L);
    for (int part = 0; part < 2; part++) {
        LoopExpr *yi[IR_MAX_RANK];
        for (int i = 0; i < r - 1; i++)
            yi[i] = low_v(L, v[i]);
        yi[r - 1] = low_i(L, part);
        if (low_add(L, blk, low_store(L, y, low_index(L, y, yi), low_bin(L, LOOP_MUL, low_v(L, part ? im : re), low_const(L, t, scale)))))
            return low_oom(L);
    }
    return low_kernel(L, low_nest(L, r - 1, v, yb->shape.dims, blk));
}
