/* targets/fpga/conv.c — line buffers and sliding windows for 2-D
 * convolution (docs/targets/fpga.md, "Convolution pipeline").
 *
 * Lowering writes a Conv as output-driven loops that read K_h x K_w input
 * pixels per output: on an FPGA that is K_h*K_w reads of the input array per
 * output, in the same cycle.  This rewrite streams the (padded) input once,
 * in raster order, through
 *   lb[W_p][C][K_h-1]   a line buffer: the previous K_h-1 rows of every channel;
 *   win[C][K_h][K_w]    the window: registers, shifted left one column per pixel;
 * so each step reads ONE new pixel per channel and the K_h-1 pixels above it
 * from the line buffer (one access per row bank), and every window tap is a
 * register (the window is partitioned completely; see schedule.c):
 *
 *   for n, hp < H_p, wp < W_p:                       // padded input position
 *     for c:                                         // pipelined, shifts unrolled
 *       win[c][*][0..K_w-2] = win[c][*][1..K_w-1]
 *       win[c][kh][K_w-1] = lb[wp][c][kh]   (kh < K_h-1)
 *       px = inside(hp, wp) ? x[n][c][hp-pt][wp-pl] : 0
 *       win[c][K_h-1][K_w-1] = px;  lb[wp][c][*] shifted up; lb[wp][c][K_h-2] = px
 *     if hp, wp complete a window on the stride grid:
 *       for m: y[n][m][oh][ow] = bias[m] + sum_{ci,kh,kw} win[g(m)+ci][kh][kw] * w[m][ci][kh][kw]
 *
 * The pixel loop is pipelined with every loop inside it unrolled, at
 * II = ceil(M * cin_g * K_h * K_w / budget): the reuse factor, each of the
 * ~budget multipliers serving II products per pixel (hls4ml's io_stream
 * convolution with reuse factor R works the same way).  The line buffer is
 * laid out [W_p][C][K_h-1] so one pixel's accesses are contiguous (a cyclic
 * partition separates them).
 *
 * Convolutions with more than 64 * budget products per pixel keep lowering's
 * loops (the whole pixel would be one unrolled pipeline stage).
 *
 * H_p, W_p cover exactly the rows / columns some output reads.  Applies to
 * 2-D Conv with dilation 1 and a kernel larger than 1x1 (any stride, padding
 * and group count); other convolutions keep lowering's loops. */
#include "targets/fpga/fpga_impl.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct Find {
    CgCWalk w;
    const LoopProgram *p;
    int tensor, found;
} Find;

static void find_load(CgCWalk *w, LoopExpr *e)
{
    Find *f = (Find *)w;
    if (f->p->bufs[e->u.load.buf].tensor == f->tensor)
        f->found = e->u.load.buf;
}

static void find_store(CgCWalk *w, LoopStmt *s)
{
    Find *f = (Find *)w;
    if (f->p->bufs[s->u.store.buf].tensor == f->tensor)
        f->found = s->u.store.buf;
}

/* The buffer of tensor t loaded (or stored) in body, or -1. */
static int buf_in_kernel(LoopProgram *p, LoopStmt *body, int t, int stored)
{
    Find f = { { stored ? NULL : find_load, stored ? find_store : NULL, NULL }, p, t, -1 };
    cg_c_walk(body, &f.w);
    return f.found;
}

#define V(x) loop_var(p, (x))
#define I(x) loop_int(p, (x))
#define B(op, a, b) loop_bin(p, LOOP_##op, (a), (b))

/* Flat index of a row-major [d0][d1][d2] local buffer. */
static LoopExpr *at3(LoopProgram *p, int buf, LoopExpr *a, LoopExpr *b, LoopExpr *c)
{
    LoopExpr *idx[3] = { a, b, c };
    return loop_index(p, buf, idx);
}

static LoopStmt *nest(LoopProgram *p, int var, int64_t n, LoopStmt *body)
{
    return loop_for(p, var, I(n), LOOP_SERIAL, body);
}

/* What the window feeds: a convolution's dot products, or a pool's maximum
 * or average per channel. */
typedef enum WinOp { WIN_CONV, WIN_MAX, WIN_AVG } WinOp;

/* A pool's taps over window channel m, into `acc`, as lowering computes them
 * (lower/window.c): the maximum with NaN propagating, or the sum divided by
 * the taps that count: those inside the input (count_include_pad = 0) or
 * inside the padded input (= 1), per dimension
 *     min(o·s - pad_begin + K, in [+ pad_end]) - max(o·s - pad_begin, 0 [- pad_begin]). */
static int pool_taps(LoopProgram *p, WinOp op, int count_pad, const IrWindow *W, int win, int vacc, int vm, int vmh,
                     int vmw, int voh, int vow, LoopStmt *dot, LoopStmt *tap)
{
    IrDType t = p->bufs[win].dtype;
    int vv = loop_add_var(p, "v", t), vt = loop_add_var(p, "take", IR_DT_BOOL);
    if (vt < 0)
        return -1;
    int rc = loop_block_add(p, dot, loop_let(p, vacc, loop_float(p, t, op == WIN_MAX ? -INFINITY : 0), 1));
    rc |= loop_block_add(p, tap, loop_let(p, vv, loop_load(p, win, at3(p, win, V(vm), V(vmh), V(vmw))), 0));
    if (op == WIN_MAX) {
        LoopExpr *take = B(OR, B(LT, V(vacc), V(vv)),
                           B(AND, loop_call(p, LOOP_I_isnan, 1, (LoopExpr *[]){ V(vv) }), B(EQ, V(vacc), V(vacc))));
        rc |= loop_block_add(p, tap, loop_let(p, vt, take, 0));
        rc |= loop_block_add(p, tap, loop_assign(p, vacc, loop_select(p, V(vt), V(vv), V(vacc))));
    } else {
        rc |= loop_block_add(p, tap, loop_assign(p, vacc, B(ADD, V(vacc), V(vv))));
    }
    rc |= loop_block_add(p, dot, nest(p, vmh, W->kernel[0], nest(p, vmw, W->kernel[1], tap)));
    if (op == WIN_AVG) {
        LoopExpr *cnt = NULL;
        int ov[2] = { voh, vow };
        for (int i = 0; i < 2; i++) {
            int64_t lo = count_pad ? -W->pad_begin[i] : 0, hi = W->in[i] + (count_pad ? W->pad_end[i] : 0);
            LoopExpr *start = B(SUB, B(MUL, V(ov[i]), I(W->stride[i])), I(W->pad_begin[i]));
            LoopExpr *end = B(ADD, loop_expr_copy(p, start), I(W->kernel[i]));
            LoopExpr *len = B(SUB, B(MIN, end, I(hi)), B(MAX, start, I(lo)));
            cnt = cnt ? B(MUL, cnt, len) : len;
        }
        int vc = loop_add_var(p, "cnt", t);
        if (vc < 0)
            return -1;
        rc |= loop_block_add(p, dot, loop_let(p, vc, loop_cast(p, t, cnt), 0));
        rc |= loop_block_add(p, dot, loop_assign(p, vacc, loop_select(p, B(LT, loop_float(p, t, 0), V(vc)),
                                                                       B(DIV, V(vacc), V(vc)), loop_float(p, t, 0))));
    }
    return rc ? -1 : 0;
}

static int rewrite(LoopProgram *p, int k, const IrNode *n, const IrWindow *W, WinOp op, int count_pad, int budget,
                   int whole, UtilDiag *d)
{
    LoopKernel *kn = &p->kernels[k];
    int conv = op == WIN_CONV;
    int x = buf_in_kernel(p, kn->body, n->in[0], 0), w = conv ? buf_in_kernel(p, kn->body, n->in[1], 0) : -1;
    int bias = conv && n->n_in > 2 && n->in[2] >= 0 ? buf_in_kernel(p, kn->body, n->in[2], 0) : -1;
    int y = buf_in_kernel(p, kn->body, n->out[0], 1);
    if (x < 0 || (conv && w < 0) || y < 0 || (conv && n->n_in > 2 && n->in[2] >= 0 && bias < 0))
        return 0;                                   /* not the shape we expect: leave it */
    IrDType t = p->bufs[y].dtype;
    if (!ir_dtype_is_float(t) || t != p->bufs[x].dtype || (conv && t != p->bufs[w].dtype))
        return 0;
    int64_t C = W->channels_in, M = conv ? W->channels_out : C, G = conv ? W->group : C, cin_g = C / G, cout_g = M / G;
    int64_t Kh = W->kernel[0], Kw = W->kernel[1], sh = W->stride[0], sw = W->stride[1];
    int64_t pt = W->pad_begin[0], pl = W->pad_begin[1], H = W->in[0], Wd = W->in[1];
    int64_t Hp = (W->out[0] - 1) * sh + Kh, Wp = (W->out[1] - 1) * sw + Kw;
    /* streaming (whole): every input pixel is read, also the rows and columns past the last window
     * (a stride that does not divide), so a FIFO delivering the input is drained */
    int64_t Hr = whole && pt + H > Hp ? pt + H : Hp, Wr = whole && pl + Wd > Wp ? pl + Wd : Wp;
    if (M * cin_g * Kh * Kw > (int64_t)budget * 64)
        return 0;     /* a pixel's products would not fit one unrolled pipeline stage: keep the loops */
    char name[200];
    snprintf(name, sizeof name, "%s_line", kn->name);
    IrShape lbs = { 3, { Wr, C, Kh > 1 ? Kh - 1 : 1 } }, wins = { 3, { C, Kh, Kw } };
    int lb = loop_add_buf(p, name, t, &lbs, LOOP_ST_LOCAL);
    snprintf(name, sizeof name, "%s_window", kn->name);
    int win = loop_add_buf(p, name, t, &wins, LOOP_ST_LOCAL);
    if (lb < 0 || win < 0)
        return util_error(d, n->loc, "out of memory");
    p->bufs[win].partition = (int)(C * Kh * Kw);    /* registers */
    int vn = loop_add_var(p, "n", IR_DT_I64), vh = loop_add_var(p, "hp", IR_DT_I64),
        vw = loop_add_var(p, "wp", IR_DT_I64), vc = loop_add_var(p, "c", IR_DT_I64),
        vkh = loop_add_var(p, "kh", IR_DT_I64), vkw = loop_add_var(p, "kw", IR_DT_I64),
        vkh2 = loop_add_var(p, "kh", IR_DT_I64), vkh3 = loop_add_var(p, "kh", IR_DT_I64),
        vpx = loop_add_var(p, "px", t), vm = loop_add_var(p, "m", IR_DT_I64), vci = loop_add_var(p, "ci", IR_DT_I64),
        vmh = loop_add_var(p, "kh", IR_DT_I64), vmw = loop_add_var(p, "kw", IR_DT_I64),
        vacc = loop_add_var(p, "acc", t), voh = loop_add_var(p, "oh", IR_DT_I64), vow = loop_add_var(p, "ow", IR_DT_I64);
    if (vow < 0)
        return util_error(d, n->loc, "out of memory");

    /* per channel: shift the window, take the new column, update the line buffer */
    LoopStmt *chan = loop_block(p);
    /* win[c][kh][kw] = win[c][kh][kw+1] */
    LoopStmt *shift = loop_store(p, win, at3(p, win, V(vc), V(vkh), V(vkw)),
                                 loop_load(p, win, at3(p, win, V(vc), V(vkh), B(ADD, V(vkw), I(1)))));
    if (Kw > 1)
        loop_block_add(p, chan, nest(p, vkh, Kh, nest(p, vkw, Kw - 1, shift)));
    if (Kh > 1)
        loop_block_add(p, chan, nest(p, vkh2, Kh - 1, loop_store(p, win, at3(p, win, V(vc), V(vkh2), I(Kw - 1)),
                                                                 loop_load(p, lb, at3(p, lb, V(vw), V(vc), V(vkh2))))));
    LoopExpr *ih = B(SUB, V(vh), I(pt)), *iw = B(SUB, V(vw), I(pl));
    LoopExpr *inside = B(AND, B(AND, B(LE, I(0), ih), B(LT, loop_expr_copy(p, ih), I(H))),
                         B(AND, B(LE, I(0), iw), B(LT, loop_expr_copy(p, iw), I(Wd))));
    LoopExpr *xi[4] = { V(vn), V(vc), loop_expr_copy(p, ih), loop_expr_copy(p, iw) };
    /* outside the input: 0 (a convolution's padding; an average's taps that do not count), or -inf,
     * which a maximum never takes, as lowering skips the tap */
    loop_block_add(p, chan, loop_let(p, vpx, loop_float(p, t, op == WIN_MAX ? -INFINITY : 0), 1));
    loop_block_add(p, chan, loop_if(p, inside, loop_assign(p, vpx, loop_load(p, x, loop_index(p, x, xi))), NULL));
    loop_block_add(p, chan, loop_store(p, win, at3(p, win, V(vc), I(Kh - 1), I(Kw - 1)), V(vpx)));
    if (Kh > 2)
        loop_block_add(p, chan, nest(p, vkh3, Kh - 2, loop_store(p, lb, at3(p, lb, V(vw), V(vc), V(vkh3)),
                                                                 loop_load(p, lb, at3(p, lb, V(vw), V(vc),
                                                                                      B(ADD, V(vkh3), I(1)))))));
    if (Kh > 1)
        loop_block_add(p, chan, loop_store(p, lb, at3(p, lb, V(vw), V(vc), I(Kh - 2)), V(vpx)));

    /* per output channel: the dot product over the window, or the pool */
    LoopStmt *dot = loop_block(p), *tap = loop_block(p);
    LoopExpr *yi[4] = { V(vn), V(vm), V(voh), V(vow) };
    if (conv) {
        LoopExpr *g0 = B(MUL, B(DIV, V(vm), I(cout_g)), I(cin_g));
        LoopExpr *wi[4] = { V(vm), V(vci), V(vmh), V(vmw) };
        loop_block_add(p, tap, loop_assign(p, vacc, B(ADD, V(vacc),
            B(MUL, loop_load(p, win, at3(p, win, B(ADD, g0, V(vci)), V(vmh), V(vmw))),
                   loop_load(p, w, loop_index(p, w, wi))))));
        loop_block_add(p, dot, loop_let(p, vacc, bias >= 0 ? loop_load(p, bias, V(vm)) : loop_float(p, t, 0), 1));
        loop_block_add(p, dot, nest(p, vci, cin_g, nest(p, vmh, Kh, nest(p, vmw, Kw, tap))));
        loop_block_add(p, dot, loop_store(p, y, loop_index(p, y, yi), V(vacc)));
    } else if (pool_taps(p, op, count_pad, W, win, vacc, vm, vmh, vmw, voh, vow, dot, tap) ||
               loop_block_add(p, dot, loop_store(p, y, loop_index(p, y, yi), V(vacc)))) {
        return util_error(d, n->loc, "out of memory");
    }
    LoopStmt *emit = loop_block(p);
    loop_block_add(p, emit, loop_let(p, voh, B(DIV, B(SUB, V(vh), I(Kh - 1)), I(sh)), 0));
    loop_block_add(p, emit, loop_let(p, vow, B(DIV, B(SUB, V(vw), I(Kw - 1)), I(sw)), 0));
    loop_block_add(p, emit, nest(p, vm, M, dot));
    LoopExpr *ready = B(AND, B(LE, I(Kh - 1), V(vh)), B(LE, I(Kw - 1), V(vw)));
    if (sh > 1)
        ready = B(AND, ready, B(EQ, B(MOD, B(SUB, V(vh), I(Kh - 1)), I(sh)), I(0)));
    if (sw > 1)
        ready = B(AND, ready, B(EQ, B(MOD, B(SUB, V(vw), I(Kw - 1)), I(sw)), I(0)));
    if (Hr > Hp)
        ready = B(AND, ready, B(LT, V(vh), I(Hp)));
    if (Wr > Wp)
        ready = B(AND, ready, B(LT, V(vw), I(Wp)));

    LoopStmt *step = loop_block(p);
    loop_block_add(p, step, nest(p, vc, C, chan));
    loop_block_add(p, step, loop_if(p, ready, emit, NULL));
    /* one pixel per pipeline iteration; the M * cin_g * Kh * Kw products of a
     * pixel share budget multipliers: II = reuse factor */
    int64_t macs = M * cin_g * Kh * Kw, ii = (macs + budget - 1) / budget;
    LoopStmt *pix = nest(p, vw, Wr, step);
    LoopStmt *body = nest(p, vn, W->batch, nest(p, vh, Hr, pix));
    if (!body)
        return util_error(d, n->loc, "out of memory");
    tgt_fpga_pipeline(pix, (int)(ii < 1 ? 1 : ii));
    kn->body = body;
    return 1;
}

int tgt_fpga_line_buffers(LoopProgram *p, const IrGraph *g, int budget, const int *node_budget, int pointwise,
                          UtilDiag *d)
{
    int count = 0;
    for (int k = 0; k < p->n_kernels; k++) {
        const LoopKernel *kn = &p->kernels[k];
        if (kn->n_nodes != 1 || kn->first_node < 0 || kn->first_node >= g->n_nodes)
            continue;
        const IrNode *n = &g->nodes[kn->first_node];
        WinOp op = n->op == IR_OP_Conv ? WIN_CONV : n->op == IR_OP_MaxPool ? WIN_MAX
                 : n->op == IR_OP_AveragePool ? WIN_AVG : (WinOp)-1;
        if ((int)op < 0 || (op == WIN_CONV && (n->n_in < 2 || n->in[1] < 0)))
            continue;
        if (!pointwise && op != WIN_CONV)
            continue;                          /* pools too when streaming */
        if (op == WIN_MAX && n->n_out > 1 && n->out[1] >= 0)
            continue;                          /* Indices: lowering's loops */
        const IrShape *xs = &g->tensors[n->in[0]].v.shape, *ws = op == WIN_CONV ? &g->tensors[n->in[1]].v.shape : NULL;
        IrWindow W;
        UtilDiag quiet;
        util_diag_init(&quiet);
        if (xs->rank != 4 || ir_window(g, n, xs, ws, &W, &quiet) != 0)
            continue;
        if (W.dilation[0] != 1 || W.dilation[1] != 1 || (W.kernel[0] * W.kernel[1] <= 1 && !pointwise))
            continue;
        int r = rewrite(p, k, n, &W, op, ir_attr_int(n, IR_A_count_include_pad) == 1,
                        tgt_fpga_kernel_budget(p, k, budget, node_budget), pointwise, d);
        if (r < 0)
            return -1;
        count += r;
    }
    return count;
}
