/* lower/reduce.c — compute templates of the reductions: Reduce*,
 * ArgMax/ArgMin, Softmax/LogSoftmax/Hardmax along an axis and the
 * normalizations (BatchNormalization inference, InstanceNormalization,
 * LayerNormalization with its Mean/InvStdDev outputs, LpNormalization).
 *
 * One shape template (Red): the output's loops outside, loops over the
 * reduced axes inside, a mutable accumulator in between; the input index
 * takes the output variable on kept axes and the reduction variable on
 * reduced ones.  Reductions over several passes (log-sum-exp's max, the
 * normalizations' mean then variance) open the inner loops once per pass.
 * Integer sums accumulate in int64, like the interpreter; operators without
 * an integer form compute in float64. */
#include "lower/lower_impl.h"

#include <math.h>
#include <string.h>

typedef struct Red {
    int x;                    /* input buffer */
    int rank;                 /* input rank */
    int red[IR_MAX_RANK];     /* axis reduced */
    int keep;                 /* output keeps reduced axes as size 1 */
    int ovar[IR_MAX_RANK];    /* output loop variables (output rank) */
    int orank;
} Red;

/* Opens the inner loops of one pass: fresh variables for the reduced axes;
 * returns the flat input index at (outer, inner) variables. */
static LoopExpr *red_begin(Low *L, const Red *r, int *rvar)
{
    LoopExpr *idx[IR_MAX_RANK];
    for (int i = 0, o = 0; i < r->rank; i++) {
        if (r->red[i]) {
            if ((rvar[i] = loop_add_var(L->p, "r", IR_DT_I64)) < 0)
                return NULL;
            idx[i] = low_v(L, rvar[i]);
            if (r->keep)
                o++;
        } else {
            idx[i] = low_v(L, r->ovar[o++]);
        }
    }
    return low_index(L, r->x, idx);
}

/* Wraps body in the loops opened by red_begin. */
static LoopStmt *red_wrap(Low *L, const Red *r, const int *rvar, LoopStmt *body)
{
    const LoopBuf *xb = low_buf(L, r->x);
    for (int i = r->rank - 1; i >= 0 && body; i--)
        if (r->red[i])
            body = loop_for(L->p, rvar[i], low_i(L, xb->shape.dims[i]), LOOP_SERIAL, body);
    return body;
}

/* Sets up the output loops of a reduction into output buffer y. */
static int red_init(Low *L, Red *r, int x, int y)
{
    r->x = x;
    r->rank = low_buf(L, x)->shape.rank;
    r->orank = low_buf(L, y)->shape.rank;
    return low_vars(L, r->orank, "i", r->ovar);
}

/* Finishes the kernel: body (per output element) inside the output loops. */
static int red_finish(Low *L, const Red *r, int y, LoopStmt *body)
{
    int64_t dims[IR_MAX_RANK];
    const LoopBuf *xb = low_buf(L, r->x);
    for (int i = 0, o = 0; i < r->rank && !r->keep; i++)
        if (!r->red[i])
            dims[o++] = xb->shape.dims[i];
    return low_kernel(L, low_nest(L, r->orank, r->ovar, r->keep ? low_buf(L, y)->shape.dims : dims, body));
}

/* Flat index of y at the output variables. */
static LoopExpr *red_out_index(Low *L, const Red *r, int y)
{
    LoopExpr *idx[IR_MAX_RANK];
    for (int i = 0; i < r->orank; i++)
        idx[i] = low_v(L, r->ovar[i]);
    return low_index(L, y, idx);
}

/* One pass: for the reduced axes { let v = x[...]; acc = step(acc, v) }. */
typedef LoopExpr *(*RedStep)(Low *L, void *ctx, int acc, int v);

static int red_pass(Low *L, const Red *r, LoopStmt *blk, IrDType t, int acc, RedStep step, void *ctx)
{
    int rvar[IR_MAX_RANK];
    LoopStmt *inner = loop_block(L->p);
    LoopExpr *xi = red_begin(L, r, rvar);
    int v = low_let(L, inner, "v", low_load(L, r->x, xi, t), 0);
    if (v < 0)
        return -1;
    return low_add(L, inner, loop_assign(L->p, acc, step(L, ctx, acc, v))) != 0 ||
           low_add(L, blk, red_wrap(L, r, rvar, inner)) != 0 ? -1 : 0;
}

/* The same pass with the lanes of a vector as W partial accumulators,
 * where the reduced axes are the trailing ones of a float32 x without a
 * halo (a contiguous run of N >= W elements a row; the N % W past the
 * last whole vector one by one), for a step whose partial results `comb`
 * combines (LOOP_ADD: sums, sums of squares; LOOP_MUL: products; LOOP_MAX / LOOP_MIN: extrema,
 * NaN-propagating, as the scalar step):
 *   part[:] = identity;  for j < N/W { part[:] = step(part[:], x[row + j*W : +W]) }
 *   then part's lanes combined as a tree down to 4, those into acc
 * The sums are reassociated (W chains instead of one): they differ from the
 * interpreter's in rounding, as any vectorized sum.  One scalar chain of N
 * dependent adds or maxes was the whole time of a Softmax or LayerNorm
 * row: transformer_encoder's softmax over rows of 128, 113 -> 67 us (ONNX
 * Runtime's 59), its two LayerNorms over rows of 256, 72 + 68 -> 15 + 14
 * us; the model -7%, BERT-small -7 to -8%, the GPT block and the ViT -4 to
 * -7% (Zen 3, AVX2, 10 alternating rounds).  Otherwise red_pass. */
static LoopExpr *sum_step(Low *L, void *ctx, int acc, int v);
static LoopExpr *max_step(Low *L, void *ctx, int acc, int v);
static int red_pass_lanes(Low *L, const Red *r, LoopStmt *blk, IrDType t, int acc, RedStep step, void *ctx,
                          LoopBinOp comb)
{
    const LoopBuf *xb = low_buf(L, r->x);
    int64_t W = L->s && L->s->vectorize ? L->s->vector_bits / 32 : 0, N = 1;
    int first = r->rank, trailing = 1;
    while (first > 0 && r->red[first - 1])
        first--;
    for (int i = 0; i < r->rank; i++) {
        trailing &= i >= first || !r->red[i];
        N *= i >= first ? xb->shape.dims[i] : 1;
    }
    if (t != IR_DT_F32 || xb->dtype != IR_DT_F32 || W < 4 || !trailing || first == r->rank || loop_buf_has_halo(xb) ||
        N < W)
        return red_pass(L, r, blk, t, acc, step, ctx);
    LoopExpr *idx[IR_MAX_RANK];
    for (int i = 0, o = 0; i < r->rank; i++) {
        idx[i] = r->red[i] ? low_i(L, 0) : low_v(L, r->ovar[o]);
        o += !r->red[i] || r->keep;
    }
    IrShape sh = { .rank = 1, .dims = { W } };
    int part = loop_add_buf(L->p, "lanes", IR_DT_F32, &sh, LOOP_ST_LOCAL), l0, l1, l2, j;
    int row = part < 0 ? -1 : low_let(L, blk, "row", low_index(L, r->x, idx), 0);
    if (row < 0 || low_vars(L, 1, "l", &l0) || low_vars(L, 1, "l", &l1) || low_vars(L, 1, "l", &l2) ||
        low_vars(L, 1, "j", &j))
        return -1;
    double id = comb == LOOP_ADD ? 0 : comb == LOOP_MUL ? 1 : comb == LOOP_MIN ? INFINITY : -INFINITY;
    LoopStmt *init = loop_for(L->p, l0, low_i(L, W), LOOP_VECTORIZED, low_store(L, part, low_v(L, l0), low_const(L, t, id)));
    LoopStmt *body = loop_block(L->p), *jb = loop_block(L->p);
    int at = jb ? low_let(L, jb, "at", low_bin(L, LOOP_ADD, low_v(L, row), low_bin(L, LOOP_MUL, low_v(L, j), low_i(L, W))), 0) : -1;
    int pa = body ? low_let(L, body, "pa", low_load(L, part, low_v(L, l1), t), 0) : -1;
    int v = pa < 0 ? -1 : low_let(L, body, "v", low_load(L, r->x, low_bin(L, LOOP_ADD, low_v(L, at), low_v(L, l1)), t), 0);
    if (!init || at < 0 || v < 0 || low_add(L, body, low_store(L, part, low_v(L, l1), step(L, ctx, pa, v))))
        return -1;
    LoopStmt *vec = loop_for(L->p, l1, low_i(L, W), LOOP_VECTORIZED, body);
    if (!vec || low_add(L, jb, vec))
        return -1;
    init->u.loop.factor = (int)W;
    vec->u.loop.factor = (int)W;
    LoopStmt *jl = loop_for(L->p, j, low_i(L, N / W), LOOP_SERIAL, jb);
    if (!jl || low_add(L, blk, init) || low_add(L, blk, jl))
        return -1;
    /* the lanes combined as a tree while half of them fill a vector of 4
     * (part[l] = comb(part[l], part[l + h])), the last 4 one by one: a
     * chain of W dependent scalar steps (NaN-propagating maxes: four
     * instructions each) was a third of a Softmax row of 128 */
    int64_t h = W;
    while (h / 2 >= 4) {
        h /= 2;
        int lt;
        if (low_vars(L, 1, "l", &lt))
            return -1;
        LoopExpr *cv = low_bin(L, comb, low_load(L, part, low_v(L, lt), t),
                               low_load(L, part, low_bin(L, LOOP_ADD, low_v(L, lt), low_i(L, h)), t));
        LoopStmt *tl = loop_for(L->p, lt, low_i(L, h), LOOP_VECTORIZED, low_store(L, part, low_v(L, lt), cv));
        if (!tl || low_add(L, blk, tl))
            return -1;
        tl->u.loop.factor = (int)h;
    }
    LoopStmt *comb_body = loop_assign(L->p, acc, low_bin(L, comb, low_v(L, acc), low_load(L, part, low_v(L, l2), t)));
    LoopStmt *cl = comb_body ? loop_for(L->p, l2, low_i(L, h), LOOP_SERIAL, comb_body) : NULL;
    if (!cl || low_add(L, blk, cl))
        return -1;
    if (N % W == 0)
        return 0;
    /* the N % W elements past the last whole vector, one by one (ViT's
     * softmax rows of 37: two vectors and five; all 37 scalar took 6% of
     * the model) */
    int tv, xv;
    LoopStmt *tb = loop_block(L->p);
    if (!tb || low_vars(L, 1, "j", &tv))
        return -1;
    LoopExpr *ti = low_bin(L, LOOP_ADD, low_v(L, row), low_bin(L, LOOP_ADD, low_v(L, tv), low_i(L, N / W * W)));
    if ((xv = low_let(L, tb, "v", low_load(L, r->x, ti, t), 0)) < 0 ||
        low_add(L, tb, loop_assign(L->p, acc, step(L, ctx, acc, xv))))
        return -1;
    LoopStmt *tl = loop_for(L->p, tv, low_i(L, N % W), LOOP_SERIAL, tb);
    return !tl || low_add(L, blk, tl) ? -1 : 0;
}

/* ------------------------------------------------------------- Reduce* */

typedef struct RedOp { IrOp op; IrDType t; int shift; } RedOp;

static LoopExpr *reduce_step(Low *L, void *ctx, int acc, int v)
{
    const RedOp *ro = ctx;
    LoopExpr *a = low_v(L, acc), *x = low_v(L, v);
    switch (ro->op) {
    case IR_OP_ReduceProd: return low_bin(L, LOOP_MUL, a, x);
    case IR_OP_ReduceMax: return low_bin(L, LOOP_MAX, a, x);
    case IR_OP_ReduceMin: return low_bin(L, LOOP_MIN, a, x);
    case IR_OP_ReduceL1: return low_bin(L, LOOP_ADD, a, loop_un(L->p, LOOP_ABS, x));
    case IR_OP_ReduceL2:
    case IR_OP_ReduceSumSquare: return low_bin(L, LOOP_ADD, a, low_bin(L, LOOP_MUL, x, low_v(L, v)));
    case IR_OP_ReduceLogSumExp:
        return low_bin(L, LOOP_ADD, a, loop_call(L->p, LOOP_I_exp, 1,
                                                 (LoopExpr *[]){ low_bin(L, LOOP_SUB, x, low_v(L, ro->shift)) }));
    default: return low_bin(L, LOOP_ADD, a, x);
    }
}

static LoopExpr *max_step(Low *L, void *ctx, int acc, int v)
{
    (void)ctx;
    return low_bin(L, LOOP_MAX, low_v(L, acc), low_v(L, v));
}

static int reduce_has_int(IrOp op)
{
    return op == IR_OP_ReduceSum || op == IR_OP_ReduceMean || op == IR_OP_ReduceMax || op == IR_OP_ReduceMin ||
           op == IR_OP_ReduceProd || op == IR_OP_ReduceL1 || op == IR_OP_ReduceSumSquare;
}

/* Smallest / largest value of an integer dtype (int64 for uint64's max). */
static double int_limit(IrDType t, int max)
{
    int bits = (int)(8 * ir_dtype_size(t));
    if (t == IR_DT_BOOL)
        return max;
    if (!ir_dtype_is_signed(t))
        return max ? (bits >= 64 ? 9223372036854775807.0 : ldexp(1, bits) - 1) : 0;
    return max ? ldexp(1, bits - 1) - 1 : -ldexp(1, bits - 1);
}

int low_reduce(Low *L)
{
    const IrNode *n = L->n;
    int x = low_in(L, 0), y = low_out(L, 0);
    const LoopBuf *xb = low_buf(L, x);
    int64_t axes[IR_MAX_RANK];
    int na = low_has(L, 1) ? low_known_ints(L, 1, axes, IR_MAX_RANK) : 0;
    if (na < 0)
        return ir_node_error(L->g, n, L->d, "the axes must be known at compile time");
    if (na == 0 && ir_attr_int(n, IR_A_noop_with_empty_axes))
        return low_copy(L);
    Red r = { .keep = ir_attr_int(n, IR_A_keepdims) != 0 };
    if (red_init(L, &r, x, y) != 0)
        return low_oom(L);
    int64_t count = 1;
    for (int i = 0; i < r.rank; i++)
        r.red[i] = na == 0;
    for (int k = 0; k < na; k++)
        r.red[axes[k] < 0 ? axes[k] + r.rank : axes[k]] = 1;
    for (int i = 0; i < r.rank; i++)
        if (r.red[i])
            count *= xb->shape.dims[i];
    IrOp op = n->op;
    int is_int = (ir_dtype_is_int(xb->dtype) || xb->dtype == IR_DT_BOOL);
    RedOp ro = { .op = op, .t = is_int ? (reduce_has_int(op) ? IR_DT_I64 : IR_DT_F64) : low_ctype(xb->dtype),
                 .shift = -1 };
    IrDType t = ro.t;
    int tf = ir_dtype_is_float(t);
    LoopStmt *blk = loop_block(L->p);
    if (op == IR_OP_ReduceLogSumExp) {
        int mx = low_let(L, blk, "mx", low_const(L, t, -INFINITY), 1);
        if (mx < 0 || red_pass_lanes(L, &r, blk, t, mx, max_step, NULL, LOOP_MAX) != 0)
            return low_oom(L);
        /* an infinite (or empty) max shifts by 0 */
        LoopExpr *bad = low_bin(L, LOOP_OR, loop_call(L->p, LOOP_I_isinf, 1, (LoopExpr *[]){ low_v(L, mx) }),
                                loop_call(L->p, LOOP_I_isnan, 1, (LoopExpr *[]){ low_v(L, mx) }));
        LoopExpr *sh = loop_select(L->p, bad, low_const(L, t, 0), low_v(L, mx));
        /* a NaN max stays the shift, as in the interpreter */
        sh = loop_select(L->p, loop_call(L->p, LOOP_I_isnan, 1, (LoopExpr *[]){ low_v(L, mx) }), low_v(L, mx), sh);
        if ((ro.shift = low_let(L, blk, "sh", sh, 0)) < 0)
            return low_oom(L);
    }
    double init = op == IR_OP_ReduceProd ? 1
                : op == IR_OP_ReduceMax ? (tf ? -INFINITY : int_limit(xb->dtype, 0))
                : op == IR_OP_ReduceMin ? (tf ? INFINITY : int_limit(xb->dtype, 1)) : 0;
    int acc = low_let(L, blk, "acc", low_const(L, t, init), 1);
    LoopBinOp comb = op == IR_OP_ReduceProd ? LOOP_MUL : op == IR_OP_ReduceMax ? LOOP_MAX
                   : op == IR_OP_ReduceMin ? LOOP_MIN : LOOP_ADD;
    if (acc < 0 || red_pass_lanes(L, &r, blk, t, acc, reduce_step, &ro, comb) != 0)
        return low_oom(L);
    LoopExpr *v = low_v(L, acc);
    LoopExpr *one[1];
    switch (op) {
    case IR_OP_ReduceMean:
        v = tf ? low_bin(L, LOOP_DIV, v, low_const(L, t, (double)count))
               : count ? low_bin(L, LOOP_TDIV, v, low_const(L, t, (double)count)) : low_const(L, t, 0);
        break;
    case IR_OP_ReduceL2: one[0] = v; v = loop_call(L->p, LOOP_I_sqrt, 1, one); break;
    case IR_OP_ReduceLogSum: one[0] = v; v = loop_call(L->p, LOOP_I_log, 1, one); break;
    case IR_OP_ReduceLogSumExp:
        one[0] = v;
        v = low_bin(L, LOOP_ADD, loop_call(L->p, LOOP_I_log, 1, one), low_v(L, ro.shift));
        break;
    default: break;
    }
    if (low_add(L, blk, low_store(L, y, red_out_index(L, &r, y), v)) != 0)
        return low_oom(L);
    return red_finish(L, &r, y, blk);
}

/* ---------------------------------------------------- ArgMax / ArgMin */

/* Geometry of "one axis a": output loops over every other axis (keepdims:
 * a size-1 axis whose variable is unused). */
static int axis_init(Low *L, Red *r, int x, int y, int a, int keep)
{
    memset(r, 0, sizeof *r);
    r->keep = keep;
    if (red_init(L, r, x, y) != 0)
        return -1;
    r->red[a] = 1;
    return 0;
}

int low_argreduce(Low *L)
{
    const IrNode *n = L->n;
    int x = low_in(L, 0), y = low_out(L, 0);
    const LoopBuf *xb = low_buf(L, x);
    int rank = xb->shape.rank;
    int64_t ax = ir_attr_int(n, IR_A_axis);
    int a = (int)(ax < 0 ? ax + rank : ax);
    int last = ir_attr_int(n, IR_A_select_last_index) != 0, want_max = n->op == IR_OP_ArgMax;
    IrDType t = xb->dtype == IR_DT_BOOL ? IR_DT_I64 : low_ctype(xb->dtype);
    Red r;
    if (axis_init(L, &r, x, y, a, ir_attr_int(n, IR_A_keepdims) != 0) != 0)
        return low_oom(L);
    LoopStmt *blk = loop_block(L->p), *inner = loop_block(L->p);
    int rvar[IR_MAX_RANK];
    LoopExpr *xi = red_begin(L, &r, rvar);
    /* the element at axis index 0 starts as the best; later ones replace it when better */
    int best = low_let(L, blk, "best", low_i(L, 0), 1);
    LoopExpr *idx[IR_MAX_RANK], *first;
    for (int i = 0, o = 0; i < rank; i++) {
        if (i == a) {
            idx[i] = low_i(L, 0);
            if (r.keep)
                o++;
        } else {
            idx[i] = low_v(L, r.ovar[o++]);
        }
    }
    first = low_index(L, x, idx);
    int bv = low_let(L, blk, "bv", low_load(L, x, first, t), 1);
    int v = low_let(L, inner, "v", low_load(L, x, xi, t), 0);
    if (best < 0 || bv < 0 || v < 0)
        return low_oom(L);
    LoopExpr *better = want_max ? low_bin(L, LOOP_LT, low_v(L, bv), low_v(L, v))
                                : low_bin(L, LOOP_LT, low_v(L, v), low_v(L, bv));
    if (ir_dtype_is_float(t)) {
        /* as numpy: a NaN wins over numbers, the first NaN over later ones */
        LoopExpr *nan_v = loop_call(L->p, LOOP_I_isnan, 1, (LoopExpr *[]){ low_v(L, v) });
        LoopExpr *nan_b = loop_call(L->p, LOOP_I_isnan, 1, (LoopExpr *[]){ low_v(L, bv) });
        better = low_bin(L, LOOP_AND, low_bin(L, LOOP_EQ, nan_b, low_const(L, IR_DT_BOOL, 0)),
                         low_bin(L, LOOP_OR, nan_v, better));
    }
    if (last)
        better = low_bin(L, LOOP_OR, better, low_bin(L, LOOP_EQ, low_v(L, v), low_v(L, bv)));
    int c = low_let(L, inner, "c", better, 0);
    if (c < 0 ||
        low_add(L, inner, loop_assign(L->p, best, loop_select(L->p, low_v(L, c), low_v(L, rvar[a]), low_v(L, best)))) ||
        low_add(L, inner, loop_assign(L->p, bv, loop_select(L->p, low_v(L, c), low_v(L, v), low_v(L, bv)))) ||
        low_add(L, blk, red_wrap(L, &r, rvar, inner)) ||
        low_add(L, blk, low_store(L, y, red_out_index(L, &r, y), low_v(L, best))))
        return low_oom(L);
    return red_finish(L, &r, y, blk);
}

/* ---------------------------------------------------------- Softmax */

/* Loop over axis a at the outer variables: returns the index; *k its variable. */
static LoopExpr *axis_index(Low *L, const Red *r, int buf, int *k)
{
    int rvar[IR_MAX_RANK];
    Red rr = *r;
    rr.x = buf;
    LoopExpr *e = red_begin(L, &rr, rvar);
    *k = -1;                                    /* (the axis is always reduced: r->red[a] = 1) */
    for (int i = 0; i < r->rank; i++)
        if (r->red[i])
            *k = rvar[i];
    return e;
}

static LoopStmt *axis_loop(Low *L, const Red *r, int k, LoopStmt *body)
{
    for (int i = 0; i < r->rank; i++)
        if (r->red[i])
            return loop_for(L->p, k, low_i(L, low_buf(L, r->x)->shape.dims[i]), LOOP_SERIAL, body);
    return NULL;
}

static LoopExpr *isbad(Low *L, int var)
{
    return low_bin(L, LOOP_OR, loop_call(L->p, LOOP_I_isinf, 1, (LoopExpr *[]){ low_v(L, var) }),
                   loop_call(L->p, LOOP_I_isnan, 1, (LoopExpr *[]){ low_v(L, var) }));
}

/* Softmax along the last axis (attention's rows), float32: the max and the
 * sum through red_pass_lanes, the exp and the division as loops the
 * schedule vectorizes.  A row holding a NaN gives NaNs as the scalar form
 * does (its max is NaN, so the shift is 0 and the sum NaN). */
static int softmax_lanes(Low *L, Red *r, int x, int y, LoopStmt *blk)
{
    IrDType t = IR_DT_F32;
    int mx = low_let(L, blk, "mx", low_const(L, t, -INFINITY), 1);
    if (mx < 0 || red_pass_lanes(L, r, blk, t, mx, max_step, NULL, LOOP_MAX))
        return low_oom(L);
    int sh = low_let(L, blk, "sh", loop_select(L->p, isbad(L, mx), low_const(L, t, 0), low_v(L, mx)), 0);
    int k2, k5;
    LoopExpr *i2 = axis_index(L, r, x, &k2);
    LoopStmt *b2 = loop_block(L->p), *b5 = loop_block(L->p);
    if (sh < 0 || !i2 || !b2 || !b5)
        return low_oom(L);
    /* (y and x have the same shape and no halo: x's index addresses y too) */
    LoopExpr *e = loop_call(L->p, LOOP_I_exp, 1, (LoopExpr *[]){ low_bin(L, LOOP_SUB, low_load(L, x, i2, t), low_v(L, sh)) });
    if (low_add(L, b2, low_store(L, y, loop_expr_copy(L->p, i2), e)) || low_add(L, blk, axis_loop(L, r, k2, b2)))
        return low_oom(L);
    Red ry = *r;
    ry.x = y;
    int sum = low_let(L, blk, "sum", low_const(L, t, 0), 1);
    if (sum < 0 || red_pass_lanes(L, &ry, blk, t, sum, sum_step, NULL, LOOP_ADD))
        return low_oom(L);
    LoopExpr *i5 = axis_index(L, r, y, &k5);
    if (!i5 || low_add(L, b5, low_store(L, y, i5, low_bin(L, LOOP_DIV, low_load(L, y, loop_expr_copy(L->p, i5), t),
                                                            low_v(L, sum)))) ||
        low_add(L, blk, axis_loop(L, r, k5, b5)))
        return low_oom(L);
    return red_finish(L, r, y, blk);
}

int low_softmax(Low *L)
{
    const IrNode *n = L->n;
    int x = low_in(L, 0), y = low_out(L, 0);
    const LoopBuf *xb = low_buf(L, x);
    int rank = xb->shape.rank;
    int64_t ax = ir_attr_int(n, IR_A_axis);
    int a = (int)(ax < 0 ? ax + rank : ax);
    IrDType t = low_ctype(xb->dtype);
    Red r;
    /* output loops over all axes but a: treat y like a keepdims=0 reduction */
    memset(&r, 0, sizeof r);
    r.x = x;
    r.rank = rank;
    r.red[a] = 1;
    r.orank = rank - 1;
    if (low_vars(L, r.orank, "i", r.ovar) != 0)
        return low_oom(L);
    LoopStmt *blk = loop_block(L->p), *b1 = loop_block(L->p), *b2 = loop_block(L->p), *b3 = loop_block(L->p);
    int k1, k2, k3;
    if (n->op == IR_OP_Softmax && t == IR_DT_F32 && low_buf(L, y)->dtype == t && !loop_buf_has_halo(low_buf(L, y)) &&
        a == rank - 1)
        return softmax_lanes(L, &r, x, y, blk);
    LoopExpr *i1 = axis_index(L, &r, x, &k1);
    int mx = low_let(L, blk, "mx", low_const(L, t, -INFINITY), 1);
    int arg = low_let(L, blk, "arg", low_i(L, 0), 1);
    int v1 = low_let(L, b1, "v", low_load(L, x, i1, t), 0);
    if (mx < 0 || arg < 0 || v1 < 0)
        return low_oom(L);
    LoopExpr *take = low_bin(L, LOOP_OR, low_bin(L, LOOP_LT, low_v(L, mx), low_v(L, v1)),
                             low_bin(L, LOOP_AND, low_bin(L, LOOP_EQ, low_v(L, k1), low_i(L, 0)),
                                     loop_call(L->p, LOOP_I_isnan, 1, (LoopExpr *[]){ low_v(L, v1) })));
    int c = low_let(L, b1, "c", take, 0);
    if (c < 0 || low_add(L, b1, loop_assign(L->p, mx, loop_select(L->p, low_v(L, c), low_v(L, v1), low_v(L, mx)))) ||
        low_add(L, b1, loop_assign(L->p, arg, loop_select(L->p, low_v(L, c), low_v(L, k1), low_v(L, arg)))) ||
        low_add(L, blk, axis_loop(L, &r, k1, b1)))
        return low_oom(L);
    LoopExpr *i3 = axis_index(L, &r, y, &k3);
    if (n->op == IR_OP_Hardmax) {
        LoopExpr *one = loop_select(L->p, low_bin(L, LOOP_EQ, low_v(L, k3), low_v(L, arg)), low_const(L, t, 1),
                                    low_const(L, t, 0));
        if (low_add(L, b3, low_store(L, y, i3, one)) || low_add(L, blk, axis_loop(L, &r, k3, b3)))
            return low_oom(L);
        return red_finish(L, &r, y, blk);
    }
    int sh = low_let(L, blk, "sh", loop_select(L->p, isbad(L, mx), low_const(L, t, 0), low_v(L, mx)), 0);
    int sum = low_let(L, blk, "sum", low_const(L, t, 0), 1);
    LoopExpr *i2 = axis_index(L, &r, x, &k2);
    if (sh < 0 || sum < 0)
        return low_oom(L);
    if (n->op == IR_OP_Softmax && low_buf(L, y)->dtype == t) {
        /* y = e^(x - sh) stored first (a loop the CPU schedule vectorizes, exp
         * included), the sum read back from y, then y / sum: one exp per element */
        int k5;
        LoopExpr *i5 = axis_index(L, &r, y, &k5);
        LoopStmt *b4 = loop_block(L->p), *b5 = loop_block(L->p);
        LoopExpr *e = loop_call(L->p, LOOP_I_exp, 1,
                                (LoopExpr *[]){ low_bin(L, LOOP_SUB, low_load(L, x, i2, t), low_v(L, sh)) });
        /* (y and x have the same shape: x's index addresses y too) */
        if (!b4 || !b5 || low_add(L, b2, low_store(L, y, loop_expr_copy(L->p, i2), e)) ||
            low_add(L, blk, axis_loop(L, &r, k2, b2)))
            return low_oom(L);
        if (low_add(L, b4, loop_assign(L->p, sum, low_bin(L, LOOP_ADD, low_v(L, sum),
                                                          low_load(L, y, loop_expr_copy(L->p, i3), t)))) ||
            low_add(L, blk, axis_loop(L, &r, k3, b4)) ||
            low_add(L, b5, low_store(L, y, i5, low_bin(L, LOOP_DIV, low_load(L, y, loop_expr_copy(L->p, i5), t),
                                                         low_v(L, sum)))) ||
            low_add(L, blk, axis_loop(L, &r, k5, b5)))
            return low_oom(L);
        return red_finish(L, &r, y, blk);
    }
    LoopExpr *e2 = loop_call(L->p, LOOP_I_exp, 1,
                             (LoopExpr *[]){ low_bin(L, LOOP_SUB, low_load(L, x, i2, t), low_v(L, sh)) });
    if (low_add(L, b2, loop_assign(L->p, sum, low_bin(L, LOOP_ADD, low_v(L, sum), e2))) ||
        low_add(L, blk, axis_loop(L, &r, k2, b2)))
        return low_oom(L);
    LoopExpr *i3x = loop_expr_copy(L->p, i3);
    /* y and x have the same shape: the same index addresses both */
    int d = low_let(L, b3, "d", low_bin(L, LOOP_SUB, low_load(L, x, i3x, t), low_v(L, sh)), 0);
    if (d < 0)
        return low_oom(L);
    LoopExpr *val = n->op == IR_OP_LogSoftmax
                        ? low_bin(L, LOOP_SUB, low_v(L, d), loop_call(L->p, LOOP_I_log, 1, (LoopExpr *[]){ low_v(L, sum) }))
                        : low_bin(L, LOOP_DIV, loop_call(L->p, LOOP_I_exp, 1, (LoopExpr *[]){ low_v(L, d) }),
                                  low_v(L, sum));
    if (low_add(L, b3, low_store(L, y, i3, val)) || low_add(L, blk, axis_loop(L, &r, k3, b3)))
        return low_oom(L);
    return red_finish(L, &r, y, blk);
}

/* ------------------------------------------------------- normalization */

typedef struct Stat { int mean; } Stat;

static LoopExpr *sum_step(Low *L, void *ctx, int acc, int v)
{
    (void)ctx;
    return low_bin(L, LOOP_ADD, low_v(L, acc), low_v(L, v));
}

static LoopExpr *sq_step(Low *L, void *ctx, int acc, int v)
{
    const Stat *s = ctx;
    LoopExpr *dv = low_bin(L, LOOP_SUB, low_v(L, v), low_v(L, s->mean));
    return low_bin(L, LOOP_ADD, low_v(L, acc), low_bin(L, LOOP_MUL, dv, loop_expr_copy(L->p, dv)));
}

/* In blk: mean and 1/sqrt(var + eps) of x over r's reduced axes (count
 * elements), or with mvn 1/(sqrt(var) + eps); returns the variables through
 * *mean / *inv. */
static int stats_how(Low *L, const Red *r, LoopStmt *blk, IrDType t, int64_t count, double eps, int mvn, int *mean,
                     int *inv)
{
    double c = count ? (double)count : 1;
    int s = low_let(L, blk, "s", low_const(L, t, 0), 1);
    if (s < 0 || red_pass_lanes(L, r, blk, t, s, sum_step, NULL, LOOP_ADD) != 0)
        return -1;
    Stat st = { .mean = low_let(L, blk, "mean", low_bin(L, LOOP_DIV, low_v(L, s), low_const(L, t, c)), 0) };
    int q = low_let(L, blk, "q", low_const(L, t, 0), 1);
    if (st.mean < 0 || q < 0 || red_pass_lanes(L, r, blk, t, q, sq_step, &st, LOOP_ADD) != 0)
        return -1;
    LoopExpr *var = low_bin(L, LOOP_DIV, low_v(L, q), low_const(L, t, c));
    LoopExpr *den = mvn ? low_bin(L, LOOP_ADD, loop_call(L->p, LOOP_I_sqrt, 1, &var), low_const(L, t, eps))
                        : loop_call(L->p, LOOP_I_sqrt, 1, (LoopExpr *[]){ low_bin(L, LOOP_ADD, var, low_const(L, t, eps)) });
    *inv = low_let(L, blk, "inv", low_bin(L, LOOP_DIV, low_const(L, t, 1), den), 0);
    *mean = st.mean;
    return *inv < 0 ? -1 : 0;
}


static int stats(Low *L, const Red *r, LoopStmt *blk, IrDType t, int64_t count, double eps, int *mean, int *inv)
{
    return stats_how(L, r, blk, t, count, eps, 0, mean, inv);
}

/* BatchNormalization (inference) and InstanceNormalization: per (n, c),
 * y = x * mul + add with mul = scale[c] * inv, add = B[c] - mean * mul. */
int low_channelnorm(Low *L)
{
    const IrNode *n = L->n;
    int x = low_in(L, 0), y = low_out(L, 0);
    const LoopBuf *xb = low_buf(L, x);
    IrDType t = low_ctype(xb->dtype);
    double eps = ir_attr_float(n, IR_A_epsilon);
    if (n->op == IR_OP_BatchNormalization && ir_attr_int(n, IR_A_training_mode))
        return ir_node_error(L->g, n, L->d, "training_mode=1 (batch statistics) is computed by the reference "
                             "interpreter only (dlcc run); compiled code is for inference");
    /* outer loops (n, c); the spatial axes are "reduced" for the statistics */
    Red r = { .x = x, .rank = xb->shape.rank, .keep = 0, .orank = xb->shape.rank >= 2 ? 2 : xb->shape.rank };
    for (int i = r.orank; i < r.rank; i++)
        r.red[i] = 1;
    if (low_vars(L, r.orank, "i", r.ovar) != 0)
        return low_oom(L);
    int64_t inner = 1;
    for (int i = r.orank; i < r.rank; i++)
        inner *= xb->shape.dims[i];
    LoopStmt *blk = loop_block(L->p);
    LoopExpr *ch = r.orank > 1 ? low_v(L, r.ovar[1]) : low_i(L, 0);
    int mean, inv;
    if (n->op == IR_OP_BatchNormalization) {
        mean = low_let(L, blk, "mean", low_load(L, low_in(L, 3), ch, t), 0);
        LoopExpr *var = low_bin(L, LOOP_ADD, low_load(L, low_in(L, 4), loop_expr_copy(L->p, ch), t),
                                low_const(L, t, eps));
        inv = low_let(L, blk, "inv", low_bin(L, LOOP_DIV, low_const(L, t, 1),
                                             loop_call(L->p, LOOP_I_sqrt, 1, (LoopExpr *[]){ var })), 0);
        if (mean < 0 || inv < 0)
            return low_oom(L);
    } else if (stats(L, &r, blk, t, inner, eps, &mean, &inv) != 0) {
        return low_oom(L);
    }
    int mul = low_let(L, blk, "mul", low_bin(L, LOOP_MUL, low_load(L, low_in(L, 1), loop_expr_copy(L->p, ch), t),
                                             low_v(L, inv)), 0);
    int add = mul < 0 ? -1 : low_let(L, blk, "add", low_bin(L, LOOP_SUB, low_load(L, low_in(L, 2), loop_expr_copy(L->p, ch), t),
                                                             low_bin(L, LOOP_MUL, low_v(L, mean), low_v(L, mul))), 0);
    if (add < 0)
        return low_oom(L);
    int rvar[IR_MAX_RANK];
    LoopStmt *b = loop_block(L->p);
    LoopExpr *xi = red_begin(L, &r, rvar);
    LoopExpr *val = low_bin(L, LOOP_ADD, low_bin(L, LOOP_MUL, low_load(L, x, xi, t), low_v(L, mul)), low_v(L, add));
    /* y has x's shape: the same index */
    if (low_add(L, b, low_store(L, y, loop_expr_copy(L->p, xi), val)) || low_add(L, blk, red_wrap(L, &r, rvar, b)))
        return low_oom(L);
    return low_kernel(L, low_nest(L, r.orank, r.ovar, xb->shape.dims, blk));
}

int low_layernorm(Low *L)
{
    const IrNode *n = L->n;
    int x = low_in(L, 0), y = low_out(L, 0);
    const LoopBuf *xb = low_buf(L, x);
    IrDType t = low_ctype(xb->dtype);
    int rank = xb->shape.rank;
    int64_t ax = ir_attr_int(n, IR_A_axis);
    int a = (int)(ax < 0 ? ax + rank : ax);
    Red r = { .x = x, .rank = rank, .keep = 0, .orank = a };
    int64_t inner = 1;
    for (int i = a; i < rank; i++) {
        r.red[i] = 1;
        inner *= xb->shape.dims[i];
    }
    if (low_vars(L, r.orank, "i", r.ovar) != 0)
        return low_oom(L);
    LoopStmt *blk = loop_block(L->p);
    int mean, inv;
    if (stats(L, &r, blk, t, inner, ir_attr_float(n, IR_A_epsilon), &mean, &inv) != 0)
        return low_oom(L);
    int rvar[IR_MAX_RANK], all[IR_MAX_RANK];
    LoopStmt *b = loop_block(L->p);
    LoopExpr *xi = red_begin(L, &r, rvar);
    for (int i = 0; i < rank; i++)
        all[i] = i < a ? r.ovar[i] : rvar[i];
    LoopExpr *val = low_bin(L, LOOP_MUL, low_bin(L, LOOP_SUB, low_load(L, x, xi, t), low_v(L, mean)), low_v(L, inv));
    int sc = low_in(L, 1), bias = low_in(L, 2);
    if (sc >= 0)
        val = low_bin(L, LOOP_MUL, val, low_load(L, sc, low_bcast(L, sc, all + a, rank - a), t));
    if (bias >= 0)
        val = low_bin(L, LOOP_ADD, val, low_load(L, bias, low_bcast(L, bias, all + a, rank - a), t));
    if (low_add(L, b, low_store(L, y, loop_expr_copy(L->p, xi), val)) || low_add(L, blk, red_wrap(L, &r, rvar, b)))
        return low_oom(L);
    /* Mean / InvStdDev: shape [d0 .. d(a-1), 1, ..., 1]; their size-1 axes index 0 */
    for (int k = 1; k <= 2; k++) {
        int o = low_out(L, k);
        if (o >= 0 && low_add(L, blk, low_store(L, o, low_bcast(L, o, all, rank), low_v(L, k == 1 ? mean : inv))))
            return low_oom(L);
    }
    return low_kernel(L, low_nest(L, r.orank, r.ovar, xb->shape.dims, blk));
}

int low_lpnorm(Low *L)
{
    const IrNode *n = L->n;
    int x = low_in(L, 0), y = low_out(L, 0);
    const LoopBuf *xb = low_buf(L, x);
    IrDType t = low_ctype(xb->dtype);
    int rank = xb->shape.rank;
    int64_t ax = ir_attr_int(n, IR_A_axis);
    int a = (int)(ax < 0 ? ax + rank : ax), p = (int)ir_attr_int(n, IR_A_p);
    Red r;
    memset(&r, 0, sizeof r);
    r.x = x;
    r.rank = rank;
    r.red[a] = 1;
    r.orank = rank - 1;
    if (low_vars(L, r.orank, "i", r.ovar) != 0)
        return low_oom(L);
    LoopStmt *blk = loop_block(L->p), *b1 = loop_block(L->p), *b2 = loop_block(L->p);
    int k1, k2;
    LoopExpr *i1 = axis_index(L, &r, x, &k1);
    int s = low_let(L, blk, "s", low_const(L, t, 0), 1);
    int v = low_let(L, b1, "v", low_load(L, x, i1, t), 0);
    if (s < 0 || v < 0)
        return low_oom(L);
    LoopExpr *term = p == 1 ? loop_un(L->p, LOOP_ABS, low_v(L, v)) : low_bin(L, LOOP_MUL, low_v(L, v), low_v(L, v));
    if (low_add(L, b1, loop_assign(L->p, s, low_bin(L, LOOP_ADD, low_v(L, s), term))) ||
        low_add(L, blk, axis_loop(L, &r, k1, b1)))
        return low_oom(L);
    int nrm = low_let(L, blk, "nrm", p == 1 ? low_v(L, s) : loop_call(L->p, LOOP_I_sqrt, 1, (LoopExpr *[]){ low_v(L, s) }), 0);
    LoopExpr *i2 = axis_index(L, &r, x, &k2);
    if (nrm < 0)
        return low_oom(L);
    /* x / 0 for a zero vector gives NaN, as in the interpreter and ONNX */
    LoopExpr *val = low_bin(L, LOOP_DIV, low_load(L, x, i2, t), low_v(L, nrm));
    if (low_add(L, b2, low_store(L, y, loop_expr_copy(L->p, i2), val)) || low_add(L, blk, axis_loop(L, &r, k2, b2)))
        return low_oom(L);
    return red_finish(L, &r, y, blk);
}

/* ------------------------------------- CumSum, RMS / group / MV norms, LRN */

/* Index of buf at the outer variables of r and expression ax on its one
 * reduced axis. */
static LoopExpr *axis_at(Low *L, const Red *r, int buf, LoopExpr *ax)
{
    LoopExpr *idx[IR_MAX_RANK];
    for (int i = 0, o = 0; i < r->rank; i++)
        idx[i] = r->red[i] ? loop_expr_copy(L->p, ax) : low_v(L, r->ovar[o++]);
    return low_index(L, buf, idx);
}

/* One axis a of x: outer loops over every other axis. */
static int one_axis(Low *L, Red *r, int x, int a)
{
    memset(r, 0, sizeof *r);
    r->x = x;
    r->rank = low_buf(L, x)->shape.rank;
    r->red[a] = 1;
    r->orank = r->rank - 1;
    return low_vars(L, r->orank, "i", r->ovar);
}

/* CumSum: a running sum along the axis (reversed, exclusive as asked). */
int low_cumsum(Low *L)
{
    int x = low_in(L, 0), y = low_out(L, 0);
    const LoopBuf *xb = low_buf(L, x);
    int64_t ax;
    if (low_known_ints(L, 1, &ax, 1) != 1)
        return ir_node_error(L->g, L->n, L->d, "the axis must be known at compile time");
    int a = (int)(ax < 0 ? ax + xb->shape.rank : ax);
    int64_t len = xb->shape.dims[a];
    int excl = ir_attr_int(L->n, IR_A_exclusive) != 0, rev = ir_attr_int(L->n, IR_A_reverse) != 0;
    IrDType t = ir_dtype_is_float(xb->dtype) ? low_ctype(xb->dtype) : IR_DT_I64;
    Red r;
    int k;
    if (one_axis(L, &r, x, a) || low_vars(L, 1, "k", &k))
        return low_oom(L);
    LoopStmt *blk = loop_block(L->p), *b = loop_block(L->p);
    int acc = low_let(L, blk, "acc", low_const(L, t, 0), 1);
    int ti = low_let(L, b, "t", rev ? low_bin(L, LOOP_SUB, low_i(L, len - 1), low_v(L, k)) : low_v(L, k), 0);
    if (acc < 0 || ti < 0)
        return low_oom(L);
    int v = low_let(L, b, "v", low_load(L, x, axis_at(L, &r, x, low_v(L, ti)), t), 0);
    LoopStmt *st = low_store(L, y, axis_at(L, &r, y, low_v(L, ti)), low_v(L, acc));
    if (v < 0 || (excl && low_add(L, b, st)) ||
        low_add(L, b, loop_assign(L->p, acc, low_bin(L, LOOP_ADD, low_v(L, acc), low_v(L, v)))) ||
        (!excl && low_add(L, b, st)) || low_add(L, blk, loop_for(L->p, k, low_i(L, len), LOOP_SERIAL, b)))
        return low_oom(L);
    return red_finish(L, &r, y, blk);
}

/* RMSNormalization: y = x / sqrt(mean(x^2 over axes >= axis) + eps) * scale
 * (scale broadcast against x). */
int low_rmsnorm(Low *L)
{
    int x = low_in(L, 0), sc = low_in(L, 1), y = low_out(L, 0);
    const LoopBuf *xb = low_buf(L, x);
    IrDType t = low_ctype(xb->dtype);
    int rank = xb->shape.rank;
    int64_t ax = ir_attr_int(L->n, IR_A_axis), inner = 1;
    int a = (int)(ax < 0 ? ax + rank : ax);
    Red r = { .x = x, .rank = rank, .orank = a };
    for (int i = a; i < rank; i++) {
        r.red[i] = 1;
        inner *= xb->shape.dims[i];
    }
    if (low_vars(L, r.orank, "i", r.ovar))
        return low_oom(L);
    LoopStmt *blk = loop_block(L->p);
    RedOp ro = { .op = IR_OP_ReduceSumSquare, .t = t, .shift = -1 };
    int s = low_let(L, blk, "s", low_const(L, t, 0), 1);
    if (s < 0 || red_pass(L, &r, blk, t, s, reduce_step, &ro))
        return low_oom(L);
    LoopExpr *ms = low_bin(L, LOOP_ADD, low_bin(L, LOOP_DIV, low_v(L, s), low_const(L, t, (double)(inner ? inner : 1))),
                           low_const(L, t, ir_attr_float(L->n, IR_A_epsilon)));
    int inv = low_let(L, blk, "inv", low_bin(L, LOOP_DIV, low_const(L, t, 1), loop_call(L->p, LOOP_I_sqrt, 1, &ms)), 0);
    int rvar[IR_MAX_RANK], all[IR_MAX_RANK];
    LoopStmt *b = loop_block(L->p);
    LoopExpr *xi = red_begin(L, &r, rvar);
    for (int i = 0; i < rank; i++)
        all[i] = i < a ? r.ovar[i] : rvar[i];
    if (inv < 0)
        return low_oom(L);
    LoopExpr *val = low_bin(L, LOOP_MUL, low_bin(L, LOOP_MUL, low_load(L, x, xi, t), low_v(L, inv)),
                            low_load(L, sc, low_bcast(L, sc, all, rank), t));
    if (low_add(L, b, low_store(L, y, loop_expr_copy(L->p, xi), val)) || low_add(L, blk, red_wrap(L, &r, rvar, b)))
        return low_oom(L);
    return low_kernel(L, low_nest(L, r.orank, r.ovar, xb->shape.dims, blk));
}

/* GroupNormalization (opset 21): statistics per (n, group) over the group's
 * channels and all spatial positions, then scale[c], bias[c] per channel.
 * x is addressed flat: (n, group) owns a contiguous run of C/G * spatial. */
int low_groupnorm(Low *L)
{
    int x = low_in(L, 0), sc = low_in(L, 1), bi = low_in(L, 2), y = low_out(L, 0);
    const LoopBuf *xb = low_buf(L, x);
    IrDType t = low_ctype(xb->dtype);
    int64_t N = xb->shape.dims[0], C = xb->shape.dims[1], G = ir_attr_int(L->n, IR_A_num_groups), sp = 1;
    for (int i = 2; i < xb->shape.rank; i++)
        sp *= xb->shape.dims[i];
    int64_t run = C / G * sp;
    int nv, gv, j1, j2, j3;
    if (low_vars(L, 1, "n", &nv) || low_vars(L, 1, "g", &gv) || low_vars(L, 1, "j", &j1) || low_vars(L, 1, "j", &j2) ||
        low_vars(L, 1, "j", &j3))
        return low_oom(L);
    LoopStmt *blk = loop_block(L->p);
    int base = low_let(L, blk, "base", low_bin(L, LOOP_MUL, low_bin(L, LOOP_ADD, low_bin(L, LOOP_MUL, low_v(L, nv), low_i(L, G)),
                                                                       low_v(L, gv)), low_i(L, run)), 0);
    int s = low_let(L, blk, "s", low_const(L, t, 0), 1);
    if (base < 0 || s < 0)
        return low_oom(L);
#define XAT(j) low_load(L, x, low_bin(L, LOOP_ADD, low_v(L, base), low_v(L, j)), t)
    LoopExpr *cnt = low_const(L, t, (double)(run ? run : 1));
    if (low_add(L, blk, loop_for(L->p, j1, low_i(L, run), LOOP_SERIAL,
                                 loop_assign(L->p, s, low_bin(L, LOOP_ADD, low_v(L, s), XAT(j1))))))
        return low_oom(L);
    int mean = low_let(L, blk, "mean", low_bin(L, LOOP_DIV, low_v(L, s), cnt), 0);
    int q = low_let(L, blk, "q", low_const(L, t, 0), 1);
    if (mean < 0 || q < 0)
        return low_oom(L);
    LoopStmt *qb = loop_block(L->p);
    int dv = low_let(L, qb, "d", low_bin(L, LOOP_SUB, XAT(j2), low_v(L, mean)), 0);
    if (dv < 0 || low_add(L, qb, loop_assign(L->p, q, low_bin(L, LOOP_ADD, low_v(L, q), low_bin(L, LOOP_MUL, low_v(L, dv), low_v(L, dv))))) ||
        low_add(L, blk, loop_for(L->p, j2, low_i(L, run), LOOP_SERIAL, qb)))
        return low_oom(L);
    LoopExpr *var = low_bin(L, LOOP_ADD, low_bin(L, LOOP_DIV, low_v(L, q), low_const(L, t, (double)(run ? run : 1))),
                            low_const(L, t, ir_attr_float(L->n, IR_A_epsilon)));
    int inv = low_let(L, blk, "inv", low_bin(L, LOOP_DIV, low_const(L, t, 1), loop_call(L->p, LOOP_I_sqrt, 1, &var)), 0);
    LoopStmt *ob = loop_block(L->p);
    int ch = low_let(L, ob, "ch", low_bin(L, LOOP_ADD, low_bin(L, LOOP_MUL, low_v(L, gv), low_i(L, C / G)),
                                          low_bin(L, LOOP_DIV, low_v(L, j3), low_i(L, sp ? sp : 1))), 0);
    if (inv < 0 || ch < 0)
        return low_oom(L);
    LoopExpr *val = low_bin(L, LOOP_ADD,
                            low_bin(L, LOOP_MUL, low_bin(L, LOOP_MUL, low_bin(L, LOOP_SUB, XAT(j3), low_v(L, mean)), low_v(L, inv)),
                                    low_load(L, sc, low_v(L, ch), t)),
                            low_load(L, bi, low_v(L, ch), t));
    if (low_add(L, ob, low_store(L, y, low_bin(L, LOOP_ADD, low_v(L, base), low_v(L, j3)), val)) ||
        low_add(L, blk, loop_for(L->p, j3, low_i(L, run), LOOP_SERIAL, ob)))
        return low_oom(L);
#undef XAT
    int vars[2] = { nv, gv };
    int64_t ext[2] = { N, G };
    return low_kernel(L, low_nest(L, 2, vars, ext, blk));
}

/* LRN: y = x / (bias + alpha / size * sum of x^2 over channels
 * [c - floor((size-1)/2), c + ceil((size-1)/2)] inside [0, C))^beta. */
static LoopExpr *lrn_elem(Low *L, void *ctx, const int *v, LoopStmt *body)
{
    (void)ctx;
    const IrNode *n = L->n;
    int x = low_in(L, 0);
    const LoopBuf *xb = low_buf(L, x);
    IrDType t = low_ctype(xb->dtype);
    int r = xb->shape.rank;
    int64_t C = xb->shape.dims[1], size = ir_attr_int(n, IR_A_size), lo = (size - 1) / 2, hi = size / 2;
    /* beyond C - 1 channels either way the window reaches no further one:
     * a size above 2C - 1 takes 2C - 1 taps, not size (which may be 2^31) */
    int64_t reach = C > 0 ? C - 1 : 0;
    lo = lo < reach ? lo : reach;
    hi = hi < reach ? hi : reach;
    int kv;
    if (low_vars(L, 1, "k", &kv))
        return NULL;
    int sq = low_let(L, body, "sq", low_const(L, t, 0), 1);
    if (sq < 0)
        return NULL;
    LoopStmt *kb = loop_block(L->p);
    int c2 = low_let(L, kb, "c2", low_bin(L, LOOP_ADD, low_v(L, v[1]), low_bin(L, LOOP_SUB, low_v(L, kv), low_i(L, lo))), 0);
    if (c2 < 0)
        return NULL;
    LoopExpr *idx[IR_MAX_RANK];
    for (int i = 0; i < r; i++)
        idx[i] = low_v(L, i == 1 ? c2 : v[i]);
    LoopExpr *xe = low_load(L, x, low_index(L, x, idx), t);
    LoopStmt *upd = loop_assign(L->p, sq, low_bin(L, LOOP_ADD, low_v(L, sq), low_bin(L, LOOP_MUL, xe, loop_expr_copy(L->p, xe))));
    if (low_add(L, kb, loop_if(L->p, low_in_range(L, low_v(L, c2), 0, C), upd, NULL)) ||
        low_add(L, body, loop_for(L->p, kv, low_i(L, lo + hi + 1), LOOP_SERIAL, kb)))
        return NULL;
    for (int i = 0; i < r; i++)
        idx[i] = low_v(L, v[i]);
    LoopExpr *den = low_bin(L, LOOP_ADD, low_const(L, t, ir_attr_float(n, IR_A_bias)),
                            low_bin(L, LOOP_MUL, low_const(L, t, ir_attr_float(n, IR_A_alpha) / (double)size), low_v(L, sq)));
    LoopExpr *pw = loop_call(L->p, LOOP_I_pow, 2, (LoopExpr *[]){ den, low_const(L, t, ir_attr_float(n, IR_A_beta)) });
    return low_bin(L, LOOP_DIV, low_load(L, x, low_index(L, x, idx), t), pw);
}

int low_lrn(Low *L) { return low_map(L, low_out(L, 0), lrn_elem, NULL); }

/* MeanVarianceNormalization: (x - mean) / (sqrt(var) + 1e-9) over axes
 * (default 0, 2, 3), as ONNX's function body. */
int low_mvn(Low *L)
{
    int x = low_in(L, 0), y = low_out(L, 0);
    const LoopBuf *xb = low_buf(L, x);
    IrDType t = low_ctype(xb->dtype);
    Red r = { .x = x, .rank = xb->shape.rank };
    const int64_t *axes;
    int na = ir_attr_ints(L->n, IR_A_axes, &axes);
    if (!ir_has_attr(L->n, IR_A_axes))
        r.red[0] = r.red[2] = r.red[3] = 1;
    for (int i = 0; i < na; i++)
        r.red[axes[i] < 0 ? axes[i] + r.rank : axes[i]] = 1;
    int64_t count = 1;
    for (int i = 0; i < r.rank; i++) {
        if (r.red[i])
            count *= xb->shape.dims[i];
        else
            r.orank++;
    }
    if (low_vars(L, r.orank, "i", r.ovar))
        return low_oom(L);
    LoopStmt *blk = loop_block(L->p), *b = loop_block(L->p);
    int mean, inv, rvar[IR_MAX_RANK];
    if (stats_how(L, &r, blk, t, count, 1e-9, 1, &mean, &inv))
        return low_oom(L);
    LoopExpr *xi = red_begin(L, &r, rvar);
    LoopExpr *val = low_bin(L, LOOP_MUL, low_bin(L, LOOP_SUB, low_load(L, x, xi, t), low_v(L, mean)), low_v(L, inv));
    if (low_add(L, b, low_store(L, y, loop_expr_copy(L->p, xi), val)) || low_add(L, blk, red_wrap(L, &r, rvar, b)))
        return low_oom(L);
    return red_finish(L, &r, y, blk);
}

/* TopK without sorting: element t of a row goes to output position rank(t),
 * the number of elements ordered before it (value descending when largest,
 * ascending otherwise; ties by index), when that is below k.  Ranks of a row
 * are a permutation, so every output is written once. */
int low_topk(Low *L)
{
    int x = low_in(L, 0), yv = low_out(L, 0), yi = low_out(L, 1);
    const LoopBuf *xb = low_buf(L, x);
    int64_t ax = ir_attr_int(L->n, IR_A_axis);
    int a = (int)(ax < 0 ? ax + xb->shape.rank : ax);
    int64_t len = xb->shape.dims[a], k = low_buf(L, yv >= 0 ? yv : yi)->shape.dims[a];
    int largest = ir_attr_int(L->n, IR_A_largest) != 0;
    IrDType t = ir_dtype_is_float(xb->dtype) ? low_ctype(xb->dtype) : xb->dtype == IR_DT_BOOL ? IR_DT_I64 : xb->dtype;
    Red r;
    int tv, uv;
    if (one_axis(L, &r, x, a) || low_vars(L, 1, "t", &tv) || low_vars(L, 1, "u", &uv))
        return low_oom(L);
    LoopStmt *blk = loop_block(L->p), *bt = loop_block(L->p), *bu = loop_block(L->p), *put = loop_block(L->p);
    int v = low_let(L, bt, "v", low_load(L, x, axis_at(L, &r, x, low_v(L, tv)), t), 0);
    int rk = low_let(L, bt, "rank", low_i(L, 0), 1);
    int w = low_let(L, bu, "w", low_load(L, x, axis_at(L, &r, x, low_v(L, uv)), t), 0);
    if (v < 0 || rk < 0 || w < 0)
        return low_oom(L);
    LoopExpr *before = largest ? low_bin(L, LOOP_LT, low_v(L, v), low_v(L, w)) : low_bin(L, LOOP_LT, low_v(L, w), low_v(L, v));
    before = low_bin(L, LOOP_OR, before, low_bin(L, LOOP_AND, low_bin(L, LOOP_EQ, low_v(L, w), low_v(L, v)),
                                                 low_bin(L, LOOP_LT, low_v(L, uv), low_v(L, tv))));
    LoopExpr *inc = loop_select(L->p, before, low_i(L, 1), low_i(L, 0));
    if (low_add(L, bu, loop_assign(L->p, rk, low_bin(L, LOOP_ADD, low_v(L, rk), inc))) ||
        low_add(L, bt, loop_for(L->p, uv, low_i(L, len), LOOP_SERIAL, bu)))
        return low_oom(L);
    if ((yv >= 0 && low_add(L, put, low_store(L, yv, axis_at(L, &r, yv, low_v(L, rk)), low_v(L, v)))) ||
        (yi >= 0 && low_add(L, put, low_store(L, yi, axis_at(L, &r, yi, low_v(L, rk)), low_v(L, tv)))) ||
        low_add(L, bt, loop_if(L->p, low_bin(L, LOOP_LT, low_v(L, rk), low_i(L, k)), put, NULL)) ||
        low_add(L, blk, loop_for(L->p, tv, low_i(L, len), LOOP_SERIAL, bt)))
        return low_oom(L);
    return red_finish(L, &r, x, blk);
}

/* ------------------------------------------------------------- losses */

/* NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (NLL of log_softmax
 * over dim 1, optional log_prob output), as the interpreter: input [N, C,
 * d...], target [N, d...]; loss = -lp[n, target, d] * weight[target], 0 where
 * target == ignore_index; "mean" divides the sum by the sum of the weights
 * used, "sum" sums, "none" keeps the target's shape.  A target outside
 * [0, C) that is not ignored contributes 0 (the interpreter reports it).
 * One kernel over (n, d) in order (the sums are sequential), float64. */
int low_loss(Low *L)
{
    const IrNode *n = L->n;
    int x = low_in(L, 0), tg = low_in(L, 1), w = low_in(L, 2), y = low_out(L, 0), lpo = low_out(L, 1);
    const LoopBuf *xb = low_buf(L, x);
    IrDType t = IR_DT_F64;
    int64_t N = xb->shape.dims[0], C = xb->shape.dims[1], sp = 1;
    for (int i = 2; i < xb->shape.rank; i++)
        sp *= xb->shape.dims[i];
    int sce = n->op == IR_OP_SoftmaxCrossEntropyLoss, has_ii = ir_has_attr(n, IR_A_ignore_index);
    const char *red = ir_attr_str(n, IR_A_reduction);
    int none = !strcmp(red, "none"), sum_only = !strcmp(red, "sum");
    int b, s, k1, k2, k3;
    if (low_vars(L, 1, "b", &b) || low_vars(L, 1, "s", &s) || low_vars(L, 1, "k", &k1) || low_vars(L, 1, "k", &k2) ||
        low_vars(L, 1, "k", &k3))
        return low_oom(L);
#define XAT(k) low_bin(L, LOOP_ADD, low_bin(L, LOOP_MUL, low_bin(L, LOOP_ADD, low_bin(L, LOOP_MUL, low_v(L, b), low_i(L, C)), k), \
                                            low_i(L, sp)), low_v(L, s))
    LoopStmt *k = loop_block(L->p), *cell = loop_block(L->p);
    int total = low_let(L, k, "total", low_const(L, t, 0), 1), wsum = low_let(L, k, "wsum", low_const(L, t, 0), 1);
    int cls = low_let(L, cell, "cls", low_load(L, tg, low_bin(L, LOOP_ADD, low_bin(L, LOOP_MUL, low_v(L, b), low_i(L, sp)),
                                                              low_v(L, s)), IR_DT_I64), 0);
    if (total < 0 || wsum < 0 || cls < 0)
        return low_oom(L);
    LoopExpr *valid = low_in_range(L, low_v(L, cls), 0, C);
    if (has_ii)
        valid = low_bin(L, LOOP_AND, valid, low_bin(L, LOOP_NE, low_v(L, cls), low_i(L, ir_attr_int(n, IR_A_ignore_index))));
    int ok = low_let(L, cell, "ok", valid, 0);
    int cc = low_let(L, cell, "cc", low_bin(L, LOOP_MIN, low_bin(L, LOOP_MAX, low_v(L, cls), low_i(L, 0)), low_i(L, C - 1)), 0);
    if (ok < 0 || cc < 0)
        return low_oom(L);
    LoopExpr *lp = low_load(L, x, XAT(low_v(L, cc)), t);
    if (sce) {
        /* log_softmax over C: x - max - log(sum exp(x - max)) */
        int mx = low_let(L, cell, "mx", low_const(L, t, -INFINITY), 1), se = low_let(L, cell, "se", low_const(L, t, 0), 1);
        if (mx < 0 || se < 0)
            return low_oom(L);
        LoopExpr *v1 = low_load(L, x, XAT(low_v(L, k1)), t);
        if (low_add(L, cell, loop_for(L->p, k1, low_i(L, C), LOOP_SERIAL,
                                      loop_assign(L->p, mx, low_bin(L, LOOP_MAX, low_v(L, mx), v1)))))
            return low_oom(L);
        LoopExpr *e2 = loop_call(L->p, LOOP_I_exp, 1, (LoopExpr *[]){ low_bin(L, LOOP_SUB, low_load(L, x, XAT(low_v(L, k2)), t), low_v(L, mx)) });
        if (low_add(L, cell, loop_for(L->p, k2, low_i(L, C), LOOP_SERIAL, loop_assign(L->p, se, low_bin(L, LOOP_ADD, low_v(L, se), e2)))))
            return low_oom(L);
        int sh = low_let(L, cell, "sh", low_bin(L, LOOP_ADD, low_v(L, mx), loop_call(L->p, LOOP_I_log, 1, (LoopExpr *[]){ low_v(L, se) })), 0);
        if (sh < 0)
            return low_oom(L);
        if (lpo >= 0 && low_add(L, cell, loop_for(L->p, k3, low_i(L, C), LOOP_SERIAL,
                                                  low_store(L, lpo, XAT(low_v(L, k3)),
                                                            low_bin(L, LOOP_SUB, low_load(L, x, XAT(low_v(L, k3)), t), low_v(L, sh))))))
            return low_oom(L);
        lp = low_bin(L, LOOP_SUB, lp, low_v(L, sh));
    }
    LoopExpr *wt = w >= 0 ? low_load(L, w, low_v(L, cc), t) : low_const(L, t, 1);
    int wv = low_let(L, cell, "wt", loop_select(L->p, low_v(L, ok), wt, low_const(L, t, 0)), 0);
    int lv = wv < 0 ? -1 : low_let(L, cell, "loss", low_bin(L, LOOP_MUL, loop_un(L->p, LOOP_NEG, lp), low_v(L, wv)), 0);
    if (lv < 0)
        return low_oom(L);
    /* an ignored target gives 0 (not -0 * x, which could be NaN) */
    LoopExpr *loss = loop_select(L->p, low_v(L, ok), low_v(L, lv), low_const(L, t, 0));
    int lf = low_let(L, cell, "lf", loss, 0);
    if (lf < 0)
        return low_oom(L);
    if (none && low_add(L, cell, low_store(L, y, low_bin(L, LOOP_ADD, low_bin(L, LOOP_MUL, low_v(L, b), low_i(L, sp)), low_v(L, s)),
                                          low_v(L, lf))))
        return low_oom(L);
    if (low_add(L, cell, loop_assign(L->p, total, low_bin(L, LOOP_ADD, low_v(L, total), low_v(L, lf)))) ||
        low_add(L, cell, loop_assign(L->p, wsum, low_bin(L, LOOP_ADD, low_v(L, wsum), low_v(L, wv)))))
        return low_oom(L);
    int vars[2] = { b, s };
    int64_t ext[2] = { N, sp };
    if (low_add(L, k, low_nest(L, 2, vars, ext, cell)))
        return low_oom(L);
    if (!none && low_add(L, k, low_store(L, y, low_i(L, 0), sum_only ? low_v(L, total)
                                                             : low_bin(L, LOOP_DIV, low_v(L, total), low_v(L, wsum)))))
        return low_oom(L);
#undef XAT
    return low_kernel(L, k);
}
