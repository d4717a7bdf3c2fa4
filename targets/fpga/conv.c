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

static int rewrite(LoopProgram *p, int k, const IrGraph *g, const IrNode *n, const IrWindow *W, int budget,
                   UtilDiag *d)
{
    LoopKernel *kn = &p->kernels[k];
    int x = buf_in_kernel(p, kn->body, n->in[0], 0), w = buf_in_kernel(p, kn->body, n->in[1], 0);
    int bias = n->n_in > 2 && n->in[2] >= 0 ? buf_in_kernel(p, kn->body, n->in[2], 0) : -1;
    int y = buf_in_kernel(p, kn->body, n->out[0], 1);
    if (x < 0 || w < 0 || y < 0 || (n->n_in > 2 && n->in[2] >= 0 && bias < 0))
        return 0;                                   /* not the shape we expect: leave it */
    IrDType t = p->bufs[y].dtype;
    if (!ir_dtype_is_float(t) || t != p->bufs[x].dtype || t != p->bufs[w].dtype)
        return 0;
    int64_t C = W->channels_in, M = W->channels_out, G = W->group, cin_g = C / G, cout_g = M / G;
    int64_t Kh = W->kernel[0], Kw = W->kernel[1], sh = W->stride[0], sw = W->stride[1];
    int64_t pt = W->pad_begin[0], pl = W->pad_begin[1], H = W->in[0], Wd = W->in[1];
    int64_t Hp = (W->out[0] - 1) * sh + Kh, Wp = (W->out[1] - 1) * sw + Kw;
    if (M * cin_g * Kh * Kw > (int64_t)budget * 64)
        return 0;     /* a pixel's products would not fit one unrolled pipeline stage: keep the loops */
    char name[200];
    snprintf(name, sizeof name, "%s_line", kn->name);
    IrShape lbs = { 3, { Wp, C, Kh > 1 ? Kh - 1 : 1 } }, wins = { 3, { C, Kh, Kw } };
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
    loop_block_add(p, chan, loop_let(p, vpx, loop_float(p, t, 0), 1));
    loop_block_add(p, chan, loop_if(p, inside, loop_assign(p, vpx, loop_load(p, x, loop_index(p, x, xi))), NULL));
    loop_block_add(p, chan, loop_store(p, win, at3(p, win, V(vc), I(Kh - 1), I(Kw - 1)), V(vpx)));
    if (Kh > 2)
        loop_block_add(p, chan, nest(p, vkh3, Kh - 2, loop_store(p, lb, at3(p, lb, V(vw), V(vc), V(vkh3)),
                                                                 loop_load(p, lb, at3(p, lb, V(vw), V(vc),
                                                                                      B(ADD, V(vkh3), I(1)))))));
    if (Kh > 1)
        loop_block_add(p, chan, loop_store(p, lb, at3(p, lb, V(vw), V(vc), I(Kh - 2)), V(vpx)));

    /* per output channel: the dot product over the window */
    LoopStmt *dot = loop_block(p), *tap = loop_block(p);
    LoopExpr *g0 = B(MUL, B(DIV, V(vm), I(cout_g)), I(cin_g));
    LoopExpr *wi[4] = { V(vm), V(vci), V(vmh), V(vmw) };
    loop_block_add(p, tap, loop_assign(p, vacc, B(ADD, V(vacc),
        B(MUL, loop_load(p, win, at3(p, win, B(ADD, g0, V(vci)), V(vmh), V(vmw))),
               loop_load(p, w, loop_index(p, w, wi))))));
    loop_block_add(p, dot, loop_let(p, vacc, bias >= 0 ? loop_load(p, bias, V(vm)) : loop_float(p, t, 0), 1));
    loop_block_add(p, dot, nest(p, vci, cin_g, nest(p, vmh, Kh, nest(p, vmw, Kw, tap))));
    LoopExpr *yi[4] = { V(vn), V(vm), V(voh), V(vow) };
    loop_block_add(p, dot, loop_store(p, y, loop_index(p, y, yi), V(vacc)));
    LoopStmt *emit = loop_block(p);
    loop_block_add(p, emit, loop_let(p, voh, B(DIV, B(SUB, V(vh), I(Kh - 1)), I(sh)), 0));
    loop_block_add(p, emit, loop_let(p, vow, B(DIV, B(SUB, V(vw), I(Kw - 1)), I(sw)), 0));
    loop_block_add(p, emit, nest(p, vm, M, dot));
    LoopExpr *ready = B(AND, B(LE, I(Kh - 1), V(vh)), B(LE, I(Kw - 1), V(vw)));
    if (sh > 1)
        ready = B(AND, ready, B(EQ, B(MOD, B(SUB, V(vh), I(Kh - 1)), I(sh)), I(0)));
    if (sw > 1)
        ready = B(AND, ready, B(EQ, B(MOD, B(SUB, V(vw), I(Kw - 1)), I(sw)), I(0)));

    LoopStmt *step = loop_block(p);
    loop_block_add(p, step, nest(p, vc, C, chan));
    loop_block_add(p, step, loop_if(p, ready, emit, NULL));
    /* one pixel per pipeline iteration; the M * cin_g * Kh * Kw products of a
     * pixel share budget multipliers: II = reuse factor */
    int64_t macs = M * cin_g * Kh * Kw, ii = (macs + budget - 1) / budget;
    LoopStmt *pix = nest(p, vw, Wp, step);
    LoopStmt *body = nest(p, vn, W->batch, nest(p, vh, Hp, pix));
    if (!body)
        return util_error(d, n->loc, "out of memory");
    tgt_fpga_pipeline(pix, (int)(ii < 1 ? 1 : ii));
    kn->body = body;
    (void)g;
    return 1;
}

int tgt_fpga_line_buffers(LoopProgram *p, const IrGraph *g, int budget, const int *node_budget, UtilDiag *d)
{
    int count = 0;
    for (int k = 0; k < p->n_kernels; k++) {
        const LoopKernel *kn = &p->kernels[k];
        if (kn->n_nodes != 1 || kn->first_node < 0 || kn->first_node >= g->n_nodes)
            continue;
        const IrNode *n = &g->nodes[kn->first_node];
        if (n->op != IR_OP_Conv || n->n_in < 2 || n->in[1] < 0)
            continue;
        const IrShape *xs = &g->tensors[n->in[0]].v.shape, *ws = &g->tensors[n->in[1]].v.shape;
        IrWindow W;
        UtilDiag quiet;
        util_diag_init(&quiet);
        if (xs->rank != 4 || ir_window(g, n, xs, ws, &W, &quiet) != 0)
            continue;
        if (W.dilation[0] != 1 || W.dilation[1] != 1 || W.kernel[0] * W.kernel[1] <= 1)
            continue;
        int r = rewrite(p, k, g, n, &W, tgt_fpga_kernel_budget(p, k, budget, node_budget), d);
        if (r < 0)
            return -1;
        count += r;
    }
    return count;
}
