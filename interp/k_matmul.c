/* interp/k_matmul.c — reference kernels of MatMul (numpy semantics: 1-D
 * promotion, batched, broadcast batch dims) and Gemm (alpha, beta, transA,
 * transB, C broadcast to [M, N]).
 *
 * Both reduce to one strided matrix product (mm_run): a float32 fast path
 * (i-k-j loop over contiguous rows of B, or dot products over contiguous
 * rows when B is transposed) and a generic path (double accumulation for
 * floats, exact wrapping int64 for integers). */
#include "interp/kernels.h"

#include <string.h>

typedef struct Mm {
    const IrArray *a, *b, *c;    /* c: optional Gemm bias, broadcast to [m, n] */
    int64_t aoff, sai, sak;      /* a(i,k) = a[aoff + i*sai + k*sak] */
    int64_t boff, sbk, sbj;      /* b(k,j) = b[boff + k*sbk + j*sbj] */
    int64_t m, k, n;
    double alpha, beta;
} Mm;

static double c_at(const Mm *p, int64_t i, int64_t j)
{
    int64_t idx[2] = { i, j };
    return ir_load_f64(p->c->dtype, p->c->data, interp_bcast_index(&p->c->shape, idx, 2));
}

static void mm_f32(const Mm *p, float *y)
{
    const float *a = (const float *)p->a->data + p->aoff, *b = (const float *)p->b->data + p->boff;
    for (int64_t i = 0; i < p->m; i++) {
        float *yr = y + i * p->n;
        if (p->sbj == 1) {
            memset(yr, 0, (size_t)p->n * sizeof *yr);
            for (int64_t k = 0; k < p->k; k++) {
                float aik = a[i * p->sai + k * p->sak];
                const float *br = b + k * p->sbk;
                for (int64_t j = 0; j < p->n; j++)
                    yr[j] += aik * br[j];
            }
        } else {
            for (int64_t j = 0; j < p->n; j++) {
                const float *bc = b + j * p->sbj;
                float s = 0.0f;
                for (int64_t k = 0; k < p->k; k++)
                    s += a[i * p->sai + k * p->sak] * bc[k * p->sbk];
                yr[j] = s;
            }
        }
        if (p->alpha != 1.0 || p->c)
            for (int64_t j = 0; j < p->n; j++)
                yr[j] = (float)(p->alpha * yr[j] + (p->c ? p->beta * c_at(p, i, j) : 0.0));
    }
}

static void mm_generic(const Mm *p, IrArray *y, int64_t yoff)
{
    int is_int = ir_dtype_is_int(y->dtype);
    int exact = is_int && p->alpha == 1.0 && (!p->c || p->beta == 1.0);
    for (int64_t i = 0; i < p->m; i++)
        for (int64_t j = 0; j < p->n; j++) {
            int64_t o = yoff + i * p->n + j;
            if (is_int) {
                uint64_t s = 0;
                for (int64_t k = 0; k < p->k; k++)
                    s += (uint64_t)ir_load_i64(p->a->dtype, p->a->data, p->aoff + i * p->sai + k * p->sak) *
                         (uint64_t)ir_load_i64(p->b->dtype, p->b->data, p->boff + k * p->sbk + j * p->sbj);
                if (exact) {
                    if (p->c) {
                        int64_t idx[2] = { i, j };
                        s += (uint64_t)ir_load_i64(p->c->dtype, p->c->data,
                                                   interp_bcast_index(&p->c->shape, idx, 2));
                    }
                    ir_store_i64(y->dtype, y->data, o, (int64_t)s);
                } else {
                    ir_store_f64(y->dtype, y->data, o,
                                 p->alpha * (double)(int64_t)s + (p->c ? p->beta * c_at(p, i, j) : 0.0));
                }
            } else {
                double s = 0.0;
                for (int64_t k = 0; k < p->k; k++)
                    s += ir_load_f64(p->a->dtype, p->a->data, p->aoff + i * p->sai + k * p->sak) *
                         ir_load_f64(p->b->dtype, p->b->data, p->boff + k * p->sbk + j * p->sbj);
                ir_store_f64(y->dtype, y->data, o, p->alpha * s + (p->c ? p->beta * c_at(p, i, j) : 0.0));
            }
        }
}

static void mm_run(const Mm *p, IrArray *y, int64_t yoff)
{
    if (p->a->dtype == IR_DT_F32 && p->b->dtype == IR_DT_F32 && y->dtype == IR_DT_F32 &&
        (!p->c || p->c->dtype == IR_DT_F32))
        mm_f32(p, (float *)y->data + yoff);
    else
        mm_generic(p, y, yoff);
}

int interp_k_matmul(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out, UtilDiag *d)
{
    (void)g;
    (void)n;
    (void)d;
    const IrArray *a = in[0], *b = in[1];
    IrArray *y = out[0];
    int ra = a->shape.rank, rb = b->shape.rank;
    Mm p = { .a = a, .b = b, .alpha = 1.0 };
    p.m = ra >= 2 ? a->shape.dims[ra - 2] : 1;
    p.k = a->shape.dims[ra - 1];
    p.n = rb >= 2 ? b->shape.dims[rb - 1] : 1;
    p.sai = p.k;
    p.sak = 1;
    p.sbk = p.n;
    p.sbj = 1;
    /* batch shapes: everything before the matrix dims */
    IrShape ba = { .rank = ra > 2 ? ra - 2 : 0 }, bb = { .rank = rb > 2 ? rb - 2 : 0 }, ob;
    memcpy(ba.dims, a->shape.dims, (size_t)ba.rank * sizeof(int64_t));
    memcpy(bb.dims, b->shape.dims, (size_t)bb.rank * sizeof(int64_t));
    ob.rank = ba.rank > bb.rank ? ba.rank : bb.rank;
    memcpy(ob.dims, y->shape.dims, (size_t)ob.rank * sizeof(int64_t));
    int64_t nb = ir_shape_numel(&ob), idx[IR_MAX_RANK] = { 0 };
    for (int64_t t = 0; t < nb; t++) {
        p.aoff = interp_bcast_index(&ba, idx, ob.rank) * p.m * p.k;
        p.boff = interp_bcast_index(&bb, idx, ob.rank) * p.k * p.n;
        mm_run(&p, y, t * p.m * p.n);
        interp_next_index(&ob, idx);
    }
    return 0;
}

int interp_k_gemm(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out, UtilDiag *d)
{
    (void)g;
    (void)d;
    const IrArray *a = in[0], *b = in[1];
    int ta = ir_attr_int(n, IR_A_transA) != 0, tb = ir_attr_int(n, IR_A_transB) != 0;
    Mm p = {
        .a = a, .b = b, .c = n->n_in > 2 ? in[2] : NULL,
        .alpha = ir_attr_float(n, IR_A_alpha), .beta = ir_attr_float(n, IR_A_beta),
        .m = a->shape.dims[ta], .k = a->shape.dims[!ta], .n = b->shape.dims[!tb],
    };
    /* A is [m,k] (or [k,m] when transposed), B is [k,n] (or [n,k]) */
    p.sai = ta ? 1 : p.k;
    p.sak = ta ? p.m : 1;
    p.sbk = tb ? 1 : p.n;
    p.sbj = tb ? p.k : 1;
    mm_run(&p, out[0], 0);
    return 0;
}
