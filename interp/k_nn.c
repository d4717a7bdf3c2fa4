/* interp/k_nn.c — pooling kernels: MaxPool (with Indices), AveragePool,
 * LpPool and the global pools, one shared window loop.
 *
 * Each (n, c) plane is loaded once into a double buffer (float32 directly,
 * other dtypes through ir_load_f64); each output position then visits only the
 * window taps that fall inside the input (per-dim ranges computed up front),
 * so padding never takes part in a max or a sum.  AveragePool divides by the
 * number of taps inside the input (count_include_pad = 0) or inside the padded
 * input [-pad_begin, size + pad_end) (count_include_pad = 1; a ceil_mode
 * window running past the padded end is cut there). */
#include "interp/kernels.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef enum { POOL_MAX, POOL_AVG, POOL_LP } PoolKind;

static int64_t floor_div(int64_t a, int64_t b)    /* b > 0 */
{
    int64_t q = a / b;
    return (a % b != 0 && a < 0) ? q - 1 : q;
}

static void store(IrArray *y, int64_t i, double v)
{
    if (y->dtype == IR_DT_F32)
        ((float *)y->data)[i] = (float)v;
    else
        ir_store_f64(y->dtype, y->data, i, v);
}

/* Value of a max over no element (a window wholly in the padding). */
static double empty_max(IrDType t)
{
    if (ir_dtype_is_float(t))
        return -INFINITY;
    return t == IR_DT_I8 ? -128.0 : 0.0;
}

typedef struct PoolArgs {
    PoolKind kind;
    int count_include_pad, col_major;
    double p;
} PoolArgs;

static int pool_run(const IrWindow *win, const PoolArgs *a, const IrArray *x, IrArray *y, IrArray *ind)
{
    int S = win->rank;
    int64_t isz = 1, osz = 1, istr[IR_MAX_RANK], cstr[IR_MAX_RANK];
    IrShape oshape = { .rank = S };
    for (int i = S - 1; i >= 0; i--) {
        istr[i] = isz;              /* row-major */
        isz *= win->in[i];
        oshape.dims[i] = win->out[i];
        osz *= win->out[i];
    }
    for (int i = 0; i < S; i++)                 /* column-major (storage_order = 1) */
        cstr[i] = i ? cstr[i - 1] * win->in[i - 1] : 1;
    double *buf = malloc((size_t)isz * sizeof(double));
    if (!buf)
        return -1;
    int64_t planes = win->batch * win->channels_in;
    for (int64_t pl = 0; pl < planes; pl++) {
        if (x->dtype == IR_DT_F32) {
            const float *xp = (const float *)x->data + pl * isz;
            for (int64_t i = 0; i < isz; i++)
                buf[i] = xp[i];
        } else
            for (int64_t i = 0; i < isz; i++)
                buf[i] = ir_load_f64(x->dtype, x->data, pl * isz + i);
        int64_t o[IR_MAX_RANK] = { 0 };
        for (int64_t of = 0; of < osz; of++, interp_next_index(&oshape, o)) {
            int64_t start[IR_MAX_RANK], klo[IR_MAX_RANK], khi[IR_MAX_RANK], k[IR_MAX_RANK];
            double count_valid = 1, count_padded = 1;
            int empty = 0;
            for (int i = 0; i < S; i++) {
                int64_t dil = win->dilation[i], kn = win->kernel[i];
                start[i] = o[i] * win->stride[i] - win->pad_begin[i];
                klo[i] = start[i] < 0 ? -floor_div(start[i], dil) : 0;
                khi[i] = floor_div(win->in[i] - 1 - start[i], dil) + 1;
                int64_t kpad = floor_div(win->in[i] + win->pad_end[i] - 1 - start[i], dil) + 1;
                if (khi[i] > kn)
                    khi[i] = kn;
                if (kpad > kn)
                    kpad = kn;
                if (khi[i] <= klo[i])
                    empty = 1;
                count_valid *= (double)(khi[i] - klo[i]);
                count_padded *= (double)kpad;
                k[i] = klo[i];
            }
            double acc = a->kind == POOL_MAX ? empty_max(x->dtype) : 0.0;
            int64_t best = -1;
            while (!empty) {
                int64_t flat = 0;
                for (int i = 0; i < S; i++)
                    flat += (start[i] + k[i] * win->dilation[i]) * istr[i];
                double v = buf[flat];
                if (a->kind == POOL_MAX) {
                    if (best < 0 || v > acc || (v != v && acc == acc)) {   /* NaN propagates */
                        acc = v;
                        best = flat;
                    }
                } else if (a->kind == POOL_AVG)
                    acc += v;
                else
                    acc += a->p == 1 ? fabs(v) : a->p == 2 ? v * v : pow(fabs(v), a->p);
                int i = S - 1;
                for (; i >= 0; i--) {
                    if (++k[i] < khi[i])
                        break;
                    k[i] = klo[i];
                }
                if (i < 0)
                    break;
            }
            if (a->kind == POOL_AVG) {
                double cnt = a->count_include_pad ? count_padded : count_valid;
                acc = cnt > 0 ? acc / cnt : 0.0;
            } else if (a->kind == POOL_LP)
                acc = a->p == 1 ? acc : a->p == 2 ? sqrt(acc) : pow(acc, 1.0 / a->p);
            store(y, pl * osz + of, acc);
            if (ind) {
                int64_t idx = -1;
                if (best >= 0) {
                    idx = best;
                    if (a->col_major) {
                        idx = 0;
                        for (int i = 0; i < S; i++)
                            idx += (best / istr[i] % win->in[i]) * cstr[i];
                    }
                    idx += pl * isz;
                }
                ((int64_t *)ind->data)[pl * osz + of] = idx;
            }
        }
    }
    free(buf);
    return 0;
}

static int pool_kernel(const IrGraph *g, const IrNode *n, const IrArray *x, IrArray *y, IrArray *ind,
                       const PoolArgs *a, UtilDiag *d)
{
    IrWindow win;
    if (ir_window(g, n, &x->shape, NULL, &win, d))
        return -1;
    if (pool_run(&win, a, x, y, ind))
        return ir_node_error(g, n, d, "out of memory");
    return 0;
}

int interp_k_maxpool(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out,
                     UtilDiag *d)
{
    PoolArgs a = { .kind = POOL_MAX, .col_major = ir_attr_int(n, IR_A_storage_order) == 1 };
    return pool_kernel(g, n, in[0], out[0], n->n_out > 1 ? out[1] : NULL, &a, d);
}

int interp_k_avgpool(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out,
                     UtilDiag *d)
{
    PoolArgs a = { .kind = POOL_AVG, .count_include_pad = ir_attr_int(n, IR_A_count_include_pad) == 1 };
    return pool_kernel(g, n, in[0], out[0], NULL, &a, d);
}

int interp_k_lppool(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out,
                    UtilDiag *d)
{
    PoolArgs a = { .kind = POOL_LP, .p = (double)ir_attr_int(n, IR_A_p) };
    return pool_kernel(g, n, in[0], out[0], NULL, &a, d);
}

/* The global pools are one window covering every spatial position. */
int interp_k_globalpool(const IrGraph *g, const IrNode *n, const IrArray *const *in, IrArray *const *out,
                        UtilDiag *d)
{
    const IrArray *x = in[0];
    IrWindow win;
    memset(&win, 0, sizeof win);
    win.rank = x->shape.rank - 2;
    win.batch = x->shape.dims[0];
    win.channels_in = win.channels_out = x->shape.dims[1];
    win.group = 1;
    for (int i = 0; i < win.rank; i++) {
        win.in[i] = win.kernel[i] = x->shape.dims[i + 2];
        win.out[i] = win.stride[i] = win.dilation[i] = 1;
    }
    PoolArgs a = { .kind = n->op == IR_OP_GlobalMaxPool ? POOL_MAX
                          : n->op == IR_OP_GlobalAveragePool ? POOL_AVG : POOL_LP,
                   .p = (double)ir_attr_int(n, IR_A_p) };
    if (pool_run(&win, &a, x, out[0], NULL))
        return ir_node_error(g, n, d, "out of memory");
    return 0;
}
