/* passes/pm.c — the pass manager: the pipeline of each -O level as one list,
 * the checks between passes, --print-after, --print-after-all and
 * --time-passes. */
#include "passes/pass_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const PassInfo passes[] = {
    { "fold-constants", pass_fold_constants, "evaluate nodes whose inputs are all constant into initializers" },
    { "remove-identity", pass_remove_identity, "drop Identity and inference-mode Dropout" },
    { "simplify", pass_simplify, "algebraic simplification by the rule table (passes/rules.def)" },
    { "fold-batchnorm", pass_fold_batchnorm, "inference BatchNormalization into a per-channel x * s + t" },
    { "fold-weights", pass_fold_weights, "constant scales and shifts after Conv / Gemm / MatMul into weights and bias" },
    { "cse", pass_cse, "merge equal constants and nodes with the same op, inputs and attributes" },
    { "dce", pass_dce, "remove nodes whose outputs are unused" },
    { "recognize", pass_recognize, "decomposed LayerNormalization, Softmax and Gelu into one node each" },
    { "qdq", pass_qdq, "DequantizeLinear -> Conv / MatMul / Gemm -> QuantizeLinear as QLinearConv / QLinearMatMul" },
    { "qdq-int8", pass_qdq_int8, "qdq keeping the 8-bit tensors in memory: every product as QLinearConv / "
                                 "QLinearMatMul, the other Q / DQ as operators (--precision int8)" },
    { "qdq-dot", pass_qdq_dot, "qdq, with the convolutions over whole input channels, the products by constant "
                               "int8 weights and those of two quantized run-time operands as QLinearConv / "
                               "QLinearMatMul, for targets with 8-bit dot products (x86 VNNI)" },
    { "lut", pass_lut, "elementwise functions of one 8-bit tensor (QDQ activations) as a Gather from a 256-entry "
                       "table" },
    { "fuse", pass_fuse, "group anchors (Conv, MatMul, Gemm) with elementwise epilogues, and elementwise chains, "
                         "into one kernel each" },
};
#define N_PASSES ((int)(sizeof passes / sizeof passes[0]))

static const PassInfo *const P_FOLD = &passes[0], *const P_IDENT = &passes[1], *const P_SIMPLIFY = &passes[2],
                         *const P_BN = &passes[3], *const P_WEIGHTS = &passes[4], *const P_CSE = &passes[5],
                         *const P_DCE = &passes[6], *const P_RECOGNIZE = &passes[7], *const P_QDQ = &passes[8],
                         *const P_QDQ8 = &passes[9], *const P_QDOT = &passes[10], *const P_LUT = &passes[11], *const P_FUSE = &passes[12];

/* -O0: the graph as the model file gives it. */
static const PassInfo *const pipeline_o0[] = { NULL };

/* -O1: cleanups that never change an arithmetic result. */
static const PassInfo *const pipeline_o1[] = { P_FOLD, P_IDENT, P_DCE, NULL };

/* -O2 and -O3: everything.  Simplify runs around the batch-norm split so that
 * Sub/Div by constants and chains of Mul/Add collapse into one x * a + b,
 * which fold-weights then moves into the preceding Conv / Gemm / MatMul.
 * The quantized products go first, before folding turns their weights'
 * DequantizeLinear into float constants.  Recognition matches the
 * simplified forms (x * x for x ^ 2); table lookups replace what the Q / DQ
 * of the quantized forms left elementwise (dce then drops the float chains
 * they read through); fusion comes last: it orders the nodes
 * of each group together, and no later pass may reorder them. */
static const PassInfo *const pipeline_o2[] = {
    P_QDQ, P_FOLD, P_IDENT, P_SIMPLIFY, P_BN, P_SIMPLIFY, P_WEIGHTS, P_FOLD, P_CSE, P_SIMPLIFY, P_RECOGNIZE, P_LUT, P_DCE,
    P_FUSE, NULL,
};

/* -O2 and -O3 with --precision int8: the same with qdq-int8. */
static const PassInfo *const pipeline_o2_int8[] = {
    P_QDQ8, P_FOLD, P_IDENT, P_SIMPLIFY, P_BN, P_SIMPLIFY, P_WEIGHTS, P_FOLD, P_CSE, P_SIMPLIFY, P_RECOGNIZE, P_LUT, P_DCE,
    P_FUSE, NULL,
};

const PassInfo *pass_list(int *n)
{
    *n = N_PASSES;
    return passes;
}

const PassInfo *pass_find(const char *name)
{
    for (int i = 0; i < N_PASSES; i++)
        if (strcmp(passes[i].name, name) == 0)
            return &passes[i];
    return NULL;
}

/* -O2 and -O3 for targets with 8-bit dot products: the same with qdq-dot. */
static const PassInfo *const pipeline_o2_dot[] = {
    P_QDOT, P_FOLD, P_IDENT, P_SIMPLIFY, P_BN, P_SIMPLIFY, P_WEIGHTS, P_FOLD, P_CSE, P_SIMPLIFY, P_RECOGNIZE, P_LUT, P_DCE,
    P_FUSE, NULL,
};

const PassInfo *const *pass_pipeline(int level)
{
    return level <= 0 ? pipeline_o0 : level == 1 ? pipeline_o1 : pipeline_o2;
}

const PassInfo *const *pass_pipeline_of(const PassOptions *o)
{
    if (o->opt_level >= 2 && (o->int8 || o->dot_i8))
        return o->int8 ? pipeline_o2_int8 : pipeline_o2_dot;
    return pass_pipeline(o->opt_level);
}

PassOptions pass_options(int level)
{
    /* The checks between passes run in every build: on ResNet-18 they are
     * 0.07% of the compile's instructions (callgrind; docs/passes.md). */
    PassOptions o = { .opt_level = level, .verify = 1 };
    return o;
}

/* ---------------------------------------------------------------- checks */

int pass_check(IrGraph *g, const char *after, UtilDiag *d)
{
    UtilDiag v;
    util_diag_init(&v);
    if (ir_verify(g, &v))
        return util_error(d, util_loc_file(g->file), "internal error: the graph is invalid after pass %s: %s", after, v.msg);
    for (int i = 0; i < g->n_nodes; i++) {
        IrNode *n = &g->nodes[i];
        IrArray before[IR_VARIADIC + 1];
        for (int k = 0; k < n->n_out; k++)
            if (n->out[k] >= 0)
                before[k] = g->tensors[n->out[k]].v;
        if (ir_infer_node(g, i, &v))
            return util_error(d, util_loc_file(g->file), "internal error: after pass %s: %s", after, v.msg);
        n = &g->nodes[i];
        for (int k = 0; k < n->n_out; k++) {
            const IrTensor *t = ir_out(g, n, k);
            if (t && (t->v.dtype != before[k].dtype || !ir_shape_equal(&t->v.shape, &before[k].shape))) {
                char a[160], b[160];
                ir_shape_str(&before[k].shape, a, sizeof a);
                ir_shape_str(&t->v.shape, b, sizeof b);
                return ir_node_error(g, n, d, "internal error: after pass %s output '%s' is %s %s but infers as "
                                     "%s %s", after, t->name, ir_dtype_name(before[k].dtype), a,
                                     ir_dtype_name(t->v.dtype), b);
            }
        }
    }
    return 0;
}

int pass_run_checked(IrGraph *g, const PassInfo *p, UtilDiag *d)
{
    int r = p->run(g, d);
    if (r < 0)
        return -1;
    return pass_check(g, p->name, d) ? -1 : r;
}

/* ---------------------------------------------------------------- pipeline */

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int live_nodes(const IrGraph *g)
{
    int c = 0;
    for (int i = 0; i < g->n_nodes; i++)
        c += !g->nodes[i].dead;
    return c;
}

static void emit(const PassOptions *o, const UtilBuf *b)
{
    if (o->log)
        util_buf_put(o->log, b->data ? b->data : "", b->len);
    else
        fwrite(b->data ? b->data : "", 1, b->len, stderr);
}

int pass_run_pipeline(IrGraph *g, const PassOptions *o, UtilDiag *d)
{
    if (o->print_after && !pass_find(o->print_after)) {
        char names[512] = "";
        for (int i = 0; i < N_PASSES; i++) {
            size_t l = strlen(names);
            snprintf(names + l, sizeof names - l, "%s%s", i ? ", " : "", passes[i].name);
        }
        return util_error(d, util_loc_file(g->file), "--print-after: no pass is named '%s' (passes: %s)",
                          o->print_after, names);
    }
    const PassInfo *const *pl = pass_pipeline_of(o);
    int n = 0;
    while (pl[n])
        n++;
    double *ms = calloc((size_t)n + 1, sizeof *ms);
    int *nodes = calloc((size_t)n + 2, sizeof *nodes), *changes = calloc((size_t)n + 1, sizeof *changes);
    if (!ms || !nodes || !changes) {
        free(ms); free(nodes); free(changes);
        return util_error(d, util_loc_file(g->file), "out of memory");
    }
    nodes[0] = live_nodes(g);
    int rc = 0;
    for (int i = 0; i < n && !rc; i++) {
        double t0 = now_ms();
        int r = pl[i]->run(g, d);
        ms[i] = now_ms() - t0;
        nodes[i + 1] = live_nodes(g);
        changes[i] = r;
        if (r < 0 || (o->verify && pass_check(g, pl[i]->name, d))) {
            rc = -1;
            break;
        }
        if (o->print_after_all || (o->print_after && strcmp(o->print_after, pl[i]->name) == 0)) {
            UtilBuf b;
            util_buf_init(&b);
            util_buf_printf(&b, "*** IR after %s (pass %d of %d, -O%d) ***\n", pl[i]->name, i + 1, n,
                            o->opt_level);
            ir_print(g, &b);
            emit(o, &b);
            util_buf_free(&b);
        }
    }
    if (o->time_passes) {
        UtilBuf b;
        util_buf_init(&b);
        double total = 0;
        util_buf_printf(&b, "=== pass timing (-O%d) ===\n  %-16s %10s %8s %14s\n", o->opt_level, "pass", "ms",
                        "rewrites", "nodes");
        for (int i = 0; i < n; i++) {
            util_buf_printf(&b, "  %-16s %10.3f %8d %6d -> %-6d\n", pl[i]->name, ms[i], changes[i], nodes[i],
                            nodes[i + 1]);
            total += ms[i];
        }
        util_buf_printf(&b, "  %-16s %10.3f\n", "total", total);
        emit(o, &b);
        util_buf_free(&b);
    }
    free(ms);
    free(nodes);
    free(changes);
    return rc;
}
