/* lower/build.c — what every compute template builds its loop nests with
 * (lower/lower_impl.h): the node's operand and result buffers, typed
 * expressions, nests, kernels, the halo of a padded output and the joining
 * of a consumer into its producer's channel blocks.  The templates call
 * these; nothing here calls a template. */
#include "lower/lower_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int low_oom(Low *L)
{
    if (!L->n)
        return util_error(L->d, util_loc_file(L->g->file), "out of memory while lowering");
    return ir_node_error(L->g, L->n, L->d, "out of memory while lowering");
}

/* An empty stand-in for a buffer that could not be made (out of memory):
 * lowerings carry on harmlessly and lower_node reports the failure. */
static const LoopBuf no_buf = { .name = "none", .dtype = IR_DT_F32, .alias_of = -1, .index = -1, .tensor = -1 };

void low_strides(Low *L, int b, int64_t *out)
{
    memcpy(out, low_buf(L, b)->strides, sizeof low_buf(L, b)->strides);
}

const LoopBuf *low_buf(Low *L, int b)
{
    if (b < 0 || b >= L->p->n_bufs) {
        L->oom = 1;
        return &no_buf;
    }
    return &L->p->bufs[b];
}

int low_has(Low *L, int k) { return k < L->n->n_in && L->n->in[k] >= 0; }

int low_in(Low *L, int k)
{
    if (!low_has(L, k))
        return -1;
    int b = low_use_buf(L, L->n->in[k]);
    if (b < 0)
        L->oom = 1;          /* reported by lower_node after the lowering returns */
    return b < 0 ? -1 : b;
}

int low_out(Low *L, int k)
{
    return k < L->n->n_out && L->n->out[k] >= 0 ? L->tbuf[L->n->out[k]] : -1;
}

const IrArray *low_known(Low *L, int k)
{
    const IrTensor *t = ir_in(L->g, L->n, k);
    return t && t->v.data ? &t->v : NULL;
}

int low_known_ints(Low *L, int k, int64_t *v, int max)
{
    const IrArray *a = low_known(L, k);
    if (!a)
        return -1;
    int64_t n = ir_array_numel(a);
    if (n > max)
        n = max;
    for (int64_t i = 0; i < n; i++)
        v[i] = ir_load_i64(a->dtype, a->data, i);
    return (int)n;
}

IrDType low_ctype(IrDType t) { return t == IR_DT_F16 || t == IR_DT_BF16 ? IR_DT_F32 : t; }

LoopExpr *low_const(Low *L, IrDType t, double v)
{
    if (ir_dtype_is_float(t))
        return loop_float(L->p, t, v);
    int64_t iv;
    ir_store_f64(IR_DT_I64, &iv, 0, v);     /* saturating: v may lie beyond int64 */
    LoopExpr *e = loop_int(L->p, iv);
    if (e && t == IR_DT_BOOL) {
        e->type = IR_DT_BOOL;
        e->u.i = v != 0;
        return e;
    }
    return t == IR_DT_I64 ? e : loop_cast(L->p, t, e);
}

LoopExpr *low_convert(Low *L, LoopExpr *e, IrDType t)
{
    if (!e || e->type == t)
        return e;
    if (t == IR_DT_BOOL)
        return loop_bin(L->p, LOOP_NE, e, low_const(L, e->type, 0));
    return loop_cast(L->p, t, e);
}

LoopExpr *low_v(Low *L, int var) { return loop_var(L->p, var); }
LoopExpr *low_i(Low *L, int64_t v) { return loop_int(L->p, v); }
LoopExpr *low_bin(Low *L, LoopBinOp op, LoopExpr *a, LoopExpr *b) { return loop_bin(L->p, op, a, b); }

int low_vars(Low *L, int n, const char *hint, int *vars)
{
    for (int i = 0; i < n; i++)
        if ((vars[i] = loop_add_var(L->p, hint, IR_DT_I64)) < 0)
            return -1;
    return 0;
}

LoopStmt *low_nest(Low *L, int n, const int *vars, const int64_t *ext, LoopStmt *body)
{
    for (int i = n - 1; i >= 0 && body; i--)
        body = loop_for(L->p, vars[i], loop_int(L->p, ext[i]), LOOP_SERIAL, body);
    return body;
}

LoopExpr *low_bcast(Low *L, int b, const int *vars, int out_rank)
{
    const LoopBuf *bf = low_buf(L, b);
    LoopExpr *idx[IR_MAX_RANK];
    int off = out_rank - bf->shape.rank;
    for (int i = 0; i < bf->shape.rank; i++)
        idx[i] = bf->shape.dims[i] == 1 ? loop_int(L->p, 0) : loop_var(L->p, vars[off + i]);
    return loop_index(L->p, b, idx);
}

LoopExpr *low_index(Low *L, int b, LoopExpr *const *idx) { return loop_index(L->p, b, idx); }

LoopExpr *low_load(Low *L, int b, LoopExpr *index, IrDType t)
{
    return low_convert(L, loop_load(L->p, b, index), t);
}

LoopStmt *low_store(Low *L, int b, LoopExpr *index, LoopExpr *v)
{
    return loop_store(L->p, b, index, low_convert(L, v, low_buf(L, b)->dtype));
}

int low_let(Low *L, LoopStmt *block, const char *hint, LoopExpr *v, int is_mutable)
{
    if (!v)
        return -1;
    int var = loop_add_var(L->p, hint, v->type);
    if (var < 0 || low_add(L, block, loop_let(L->p, var, v, is_mutable)) != 0)
        return -1;
    return var;
}

int low_add(Low *L, LoopStmt *block, LoopStmt *s)
{
    if (!block || !s)
        return -1;
    return loop_block_add(L->p, block, s);
}

/* flops < 0: the arithmetic of the node and its fused members */
int low_kernel_named(Low *L, const char *name, LoopStmt *body, int64_t flops)
{
    if (!body)
        return low_oom(L);
    int k = loop_add_kernel(L->p, name, body);
    if (k < 0)
        return low_oom(L);
    L->p->kernels[k].first_node = L->n ? L->node : -1;
    L->p->kernels[k].n_nodes = L->n ? 1 + L->fuse_n : 0;
    L->p->kernels[k].moves = flops >= 0;
    if (flops < 0) {
        flops = 0;
        for (int m = 0; L->n && m <= L->fuse_n; m++)
            flops += ir_node_flops(L->g, &L->g->nodes[L->node + m]);
    }
    L->p->kernels[k].flops = flops;
    return 0;
}

static const char *node_kernel_name(const Low *L)
{
    return L->n->name && *L->n->name ? L->n->name : ir_op_name(L->n->op);
}

int low_kernel(Low *L, LoopStmt *body)
{
    return low_kernel_named(L, node_kernel_name(L), body, -1);
}

int low_kernel_moves(Low *L, LoopStmt *body, int64_t elems)
{
    return low_kernel_named(L, node_kernel_name(L), body, elems);
}

int low_kernel_prepares(Low *L, LoopStmt *body, int64_t elems)
{
    if (low_kernel_moves(L, body, elems))
        return -1;
    L->p->kernels[L->p->n_kernels - 1].prepares = 1;
    return 0;
}

LoopExpr *low_in_range(Low *L, LoopExpr *e, int64_t lo, int64_t hi)
{
    return loop_bin(L->p, LOOP_AND, loop_bin(L->p, LOOP_LE, loop_int(L->p, lo), e),
                    loop_bin(L->p, LOOP_LT, loop_expr_copy(L->p, e), loop_int(L->p, hi)));
}

LoopExpr *low_and(Low *L, LoopExpr *a, LoopExpr *b)
{
    return !a ? b : !b ? a : loop_bin(L->p, LOOP_AND, a, b);
}

int64_t low_halo_take_rows(Low *L)
{
    int k = L->halo_kernel;
    if (k < 0 || k != L->p->n_kernels - 1 || !L->halo_lead)
        return 0;
    LoopStmt *b = L->p->kernels[k].body;          /* [the stretches before each channel, the columns] */
    memmove(b->u.block.items, b->u.block.items + 1, (size_t)(b->u.block.n - 1) * sizeof *b->u.block.items);
    if (--b->u.block.n == 0) {                     /* nothing left: no kernel (the last one added) */
        L->p->n_kernels--;
        L->halo_kernel = -1;
    }
    int64_t lead = L->halo_lead;
    L->halo_lead = 0;
    return lead;
}

const LowBlocks *low_blocks_of(Low *L, int b)
{
    const LowBlocks *k = &L->blocks;
    int t = L->n->n_in > 0 ? L->n->in[0] : -1;
    if (k->kernel < 0 || k->kernel != L->p->n_kernels - 1 || L->p->kernels[k->kernel].body != k->body ||
        k->buf != b || t < 0 || L->tbuf[t] != b || !L->uses || L->uses[t] != 1 ||  /* read by this node only */
        low_graph_output(L->g, t) >= 0)
        return NULL;
    return k;
}

/* The stretch of halo before each channel of halo'd buffer B (and after
 * the last): the halo rows and the columns of the row before. */
static int64_t halo_stretch(const LoopBuf *B)
{
    return B->halo_cols + (int64_t)B->halo_rows * B->strides[2];
}

static void count_refs(void *ctx, int buf, int store)
{
    (void)store;
    int *r = ctx;
    r[1] += buf == r[0];
}

/* A joined kernel's block buffer (read and written by this kernel only,
 * halo'd or row-major) cut down to a slot of mr + 1 channels per task: block mt's channel
 * mt*mr + c at channel c of its task's slot, so each block is made and read
 * in the same lines of the core's cache, which are never written back,
 * instead of a whole tensor passing through (MobileNetV2's 112x112
 * expansion: 4.8 MB).  With S tasks the block loop becomes parts (task t
 * takes part t, codegen/parallel.c):
 *   for mt < E { b }  =  for part < S { for q < ceil(E/S) { mt = part*Q + q; if mt < E { b } } }
 * and b's accesses move by (part*(mr+1) - mt*mr) channels.  The slot's
 * last channel is a spacer: the halo stretch before it, after the block's
 * last channel, is stored with each block (the producer stores it only
 * after the tensor's last channel).  0, or -1 out of memory. */
static int join_slots(Low *L, LowBlocks *k, LoopStmt *b)
{
    LoopProgram *p = L->p;
    int r[2] = { k->buf, 0 };
    for (int i = 0; i < p->n_kernels; i++)
        if (i != k->kernel)
            loop_stmt_buffers(p->kernels[i].body, count_refs, r);
    for (int i = 0; i < p->n_bufs; i++)
        r[1] += p->bufs[i].alias_of == k->buf;
    const LoopBuf *B = &p->bufs[k->buf];
    const LoopExpr *ext = k->loop->u.loop.extent;
    int halo = loop_buf_has_halo(B);
    const int64_t *d = B->shape.dims;
    if (r[1] || B->storage != LOOP_ST_WORKSPACE || B->shape.rank != 4 || d[0] != 1 || ext->kind != LOOP_E_INT ||
        ext->u.i < 1 || (!halo && (B->base || B->strides[1] != d[2] * d[3] || B->strides[2] != d[3])))
        return 0;
    int64_t E = ext->u.i, T = L->s->threads > 1 ? L->s->threads : 1, S = T < E ? T : E;
    int64_t Q = (E + S - 1) / S, mr = k->mr;
    int64_t rs = B->strides[2], cs = B->strides[1], front = B->base - (int64_t)B->halo_rows * rs;
    int64_t lead = halo_stretch(B);
    LoopBuf *nb = &p->bufs[k->buf];               /* the same layout over fewer channels */
    nb->shape.dims[1] = S * (mr + 1);
    nb->strides[0] = nb->shape.dims[1] * cs;
    nb->bytes = (nb->strides[0] + nb->slack) * (int64_t)ir_dtype_size(nb->dtype);
    if (halo && loop_buf_halo(p, k->buf, nb->halo_rows, nb->halo_cols, (int)front, nb->halo_fill, nb->slack))
        return low_oom(L);
    int mt = k->mt, slot = -1, q, j;
    if (S > 1) {
        if (low_vars(L, 1, "part", &slot) || low_vars(L, 1, "q", &q))
            return low_oom(L);
        LoopStmt *in = loop_block(p);
        LoopExpr *mv = low_bin(L, LOOP_ADD, low_bin(L, LOOP_MUL, low_v(L, slot), low_i(L, Q)), low_v(L, q));
        LoopStmt *body = S * Q == E ? b : loop_if(p, low_bin(L, LOOP_LT, low_v(L, mt), low_i(L, E)), b, NULL);
        if (!in || low_add(L, in, loop_let(p, mt, mv, 0)) || low_add(L, in, body))
            return low_oom(L);
        k->loop->u.loop.var = slot;
        k->loop->u.loop.extent = low_i(L, S);
        if (!(k->loop->u.loop.body = loop_for(p, q, low_i(L, Q), LOOP_SERIAL, in)))
            return low_oom(L);
    }
    LoopExpr *at = slot >= 0 ? low_bin(L, LOOP_MUL, low_v(L, slot), low_i(L, (mr + 1) * cs)) : low_i(L, 0);
    LoopExpr *shift = low_bin(L, LOOP_SUB, at, low_bin(L, LOOP_MUL, low_v(L, mt), low_i(L, mr * cs)));
    if (!shift || loop_stmt_rebase(p, b, k->buf, k->buf, shift))
        return low_oom(L);
    if (!lead)
        return 0;                                  /* no halo: nothing between the channels */
    if (low_vars(L, 1, "hr", &j))
        return low_oom(L);
    LoopExpr *si = low_bin(L, LOOP_ADD, loop_expr_copy(p, at),
                           low_bin(L, LOOP_ADD, low_i(L, mr * cs - lead), low_v(L, j)));
    LoopStmt *st = low_store(L, k->buf, si, low_const(L, nb->dtype, nb->halo_fill));
    LoopStmt *stretch = st ? low_nest(L, 1, &j, &lead, st) : NULL;
    if (!stretch || low_add(L, b, stretch))        /* [the producer's, the consumer's, the stretch] */
        return low_oom(L);
    b->u.block.items[2] = b->u.block.items[1];     /* the stretch before the consumer's */
    b->u.block.items[1] = stretch;
    return 0;
}

int low_join(Low *L, LoopStmt *nest)
{
    LowBlocks *k = &L->blocks;
    LoopStmt *b = loop_block(L->p);
    if (!nest || !b || low_add(L, b, k->loop->u.loop.body) || low_add(L, b, nest))
        return low_oom(L);
    k->loop->u.loop.body = b;
    if (join_slots(L, k, b))
        return -1;
    LoopKernel *kn = &L->p->kernels[k->kernel];
    kn->n_nodes = L->node + L->fuse_n + 1 - kn->first_node;
    for (int m = 0; m <= L->fuse_n; m++)
        kn->flops += ir_node_flops(L->g, &L->g->nodes[L->node + m]);
    L->joined = k->kernel;
    k->kernel = -1;                                /* one consumer */
    return 0;
}

/* The halo of buffer b (loop_buf_halo) set to its fill value, one kernel:
 * before each channel's first row (and once more after the last channel) the
 * halo columns of the row before and the halo rows, then the halo columns
 * after each row but a channel's last — unless producer_cols: then the
 * kernel writing b stores those with its rows (tile_halo_cols), into cache
 * lines it writes anyway, where this kernel would touch a line per row.
 * Indices are relative to element 0, so the first stretch starts at -base. */
int low_halo_fill(Low *L, int b, int producer_cols)
{
    const LoopBuf *B = low_buf(L, b);
    int64_t nc = B->shape.dims[0] * B->shape.dims[1], H = B->shape.dims[2], W = B->shape.dims[3];
    int64_t rs = B->strides[2], cs = B->strides[1], hc = B->halo_cols, lead = halo_stretch(B);
    /* (elements before the first halo row beyond hc, LoopBuf.base, are only
     * ever read by lanes whose values are discarded: not filled) */
    int v[2], u[3];
    LoopStmt *k = loop_block(L->p);
    if (!k || low_vars(L, 2, "i", v) || low_vars(L, 3, "i", u))
        return low_oom(L);
    LoopExpr *fill = low_const(L, B->dtype, B->halo_fill);
    LoopExpr *at = low_bin(L, LOOP_SUB, low_bin(L, LOOP_ADD, low_bin(L, LOOP_MUL, low_v(L, v[0]), low_i(L, cs)),
                                                 low_v(L, v[1])), low_i(L, lead));
    int64_t ext0[2] = { nc + 1, lead };
    if (lead && low_add(L, k, low_nest(L, 2, v, ext0, low_store(L, b, at, fill))))
        return low_oom(L);
    L->halo_lead = lead;
    L->halo_cols_store = producer_cols && hc;
    if (hc && H > 1 && !L->halo_cols_store) {
        LoopExpr *at1 = low_bin(L, LOOP_ADD,
                                low_bin(L, LOOP_ADD, low_bin(L, LOOP_MUL, low_v(L, u[0]), low_i(L, cs)),
                                        low_bin(L, LOOP_MUL, low_v(L, u[1]), low_i(L, rs))),
                                low_bin(L, LOOP_ADD, low_v(L, u[2]), low_i(L, W)));
        int64_t ext1[3] = { nc, H - 1, hc };
        if (low_add(L, k, low_nest(L, 3, u, ext1, low_store(L, b, at1, low_const(L, B->dtype, B->halo_fill)))))
            return low_oom(L);
    }
    L->halo_kernel = L->p->n_kernels;
    return low_kernel_prepares(L, k, (nc + 1) * lead + (H > 1 && !L->halo_cols_store ? nc * (H - 1) * hc : 0));
}

/* -------------------------------------------------------------- driver */

int low_graph_input(const IrGraph *g, int t)
{
    for (int i = 0; i < g->n_inputs; i++)
        if (g->inputs[i] == t)
            return i;
    return -1;
}

int low_graph_output(const IrGraph *g, int t)
{
    for (int i = 0; i < g->n_outputs; i++)
        if (g->outputs[i] == t)
            return i;
    return -1;
}

/* The root buffer of a chain of aliases. */
static int root_of(const LoopProgram *p, int b)
{
    while (p->bufs[b].alias_of >= 0)
        b = p->bufs[b].alias_of;
    return b;
}

int low_new_buf(Low *L, int t, LoopStorage st)
{
    const IrTensor *tt = &L->g->tensors[t];
    int b = loop_add_buf(L->p, tt->name, tt->v.dtype, &tt->v.shape, st);
    if (b < 0)
        return -1;
    L->p->bufs[b].tensor = t;
    return b;
}

/* Buffer of a tensor read by a kernel: input, constant, or already produced. */
int low_use_buf(Low *L, int t)
{
    if (L->tbuf[t] >= 0)
        return L->tbuf[t];
    const IrTensor *tt = &L->g->tensors[t];
    int pos = low_graph_input(L->g, t), b;
    if (pos >= 0) {
        b = low_new_buf(L, t, LOOP_ST_INPUT);
        if (b >= 0)
            L->p->bufs[b].index = pos;
    } else if (tt->v.data) {
        b = low_new_buf(L, t, LOOP_ST_CONST);
        if (b >= 0)
            L->p->bufs[b].data = tt->v.data;
    } else {
        return -2;
    }
    if (b < 0)
        return -1;
    return L->tbuf[t] = b;
}

/* Buffer for a tensor a kernel writes: the graph output it is (first
 * position), else workspace; the one made already for a Concat in place. */
int low_def_buf(Low *L, int t)
{
    if (L->tbuf[t] >= 0)
        return L->tbuf[t];
    int pos = low_graph_output(L->g, t);
    int b = low_new_buf(L, t, pos >= 0 ? LOOP_ST_OUTPUT : LOOP_ST_WORKSPACE);
    if (b < 0)
        return -1;
    L->p->bufs[b].index = pos;
    return L->tbuf[t] = b;
}

/* Output tensor t of a view node as an alias of buffer src. */
int low_alias_buf(Low *L, int t, int src)
{
    const IrTensor *tt = &L->g->tensors[t];
    int root = root_of(L->p, src);
    int b = loop_add_buf(L->p, tt->name, tt->v.dtype, &tt->v.shape, L->p->bufs[root].storage);
    if (b < 0)
        return -1;
    LoopBuf *nb = &L->p->bufs[b], *rb = &L->p->bufs[root];
    nb->tensor = t;
    nb->alias_of = root;
    nb->data = rb->data;
    nb->index = rb->index;
    nb->offset = rb->offset;
    nb->bytes = rb->bytes;
    return L->tbuf[t] = b;
}

/* A float32 constant buffer of n elements for the caller to fill (*data). */
int low_const_table(Low *L, const char *name, int64_t n, float **data)
{
    IrShape sh = { .rank = 1, .dims = { n } };
    *data = util_arena_array(&L->p->arena, (size_t)n, sizeof **data);
    int b = *data ? loop_add_buf(L->p, name, IR_DT_F32, &sh, LOOP_ST_CONST) : -1;
    if (b >= 0)
        L->p->bufs[b].data = *data;
    return b;
}
