/* targets/fpga/precision.c — which fixed-point format each buffer gets.
 *
 * Sources, most specific first: the precision file's "tensors" entry for
 * the buffer's tensor name; its "layers" entry of the
 * node that produces (activations) or consumes (weights, bias) a buffer;
 * the file's global "weights" / "bias" / "activations"; its "default"; the
 * --precision flag.  "weights" are the weight operands of Conv,
 * ConvTranspose, Gemm and MatMul (input 1); every other constant is a
 * "bias" and defaults to the activations' format.  A kernel's registers
 * carry the most fraction bits of the formats it touches (at most 24).
 * The file's "multipliers" (global and per layer) are the parallelism knob
 * tgt_fpga_multipliers reads. */
#include "targets/fpga/fpga_impl.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

typedef struct Fmts {
    CgFixed act, wt, bias;    /* w == 0: unset */
    int mult;                 /* "multipliers": the layer's unroll budget (0: unset) */
} Fmts;

typedef struct Prec {
    Fmts global;
    int n_layers;
    const char **layer;       /* node names */
    Fmts *lay;
    int *layer_used;
    int n_tensors;            /* "tensors": one format per tensor name */
    const char **tensor;
    CgFixed *tfmt;
} Prec;

static int parse_fmt(json_t *v, const char *what, const char *file, CgFixed *f, int *is_float, UtilDiag *d)
{
    const char *s = json_string_value(v);
    if (s && strcmp(s, "float32") == 0) {
        *is_float = 1;
        f->w = 0;
        return 0;
    }
    if (!s || cg_fixed_parse(s, f))
        return util_error(d, util_loc_file(file), "precision file: %s wants \"fixed<W,I>\" with 2 <= W <= 32 and "
                          "1 <= I <= W, or \"float32\"", what);
    return 0;
}

static int parse_mult(json_t *v, const char *file, int *m, UtilDiag *d)
{
    json_int_t n = json_is_integer(v) ? json_integer_value(v) : 0;
    if (n < 1 || n > 4096)
        return util_error(d, util_loc_file(file), "precision file: multipliers wants a count from 1 to 4096");
    *m = (int)n;
    return 0;
}

static int parse_fmts(json_t *obj, const char *ctx, const char *file, Fmts *f, int *has_float, UtilDiag *d)
{
    const char *key;
    json_t *v;
    json_object_foreach(obj, key, v) {
        if (strcmp(key, "multipliers") == 0) {
            if (parse_mult(v, file, &f->mult, d))
                return -1;
            continue;
        }
        CgFixed *dst = strcmp(key, "weights") == 0 ? &f->wt : strcmp(key, "bias") == 0 ? &f->bias
                     : strcmp(key, "activations") == 0 ? &f->act : NULL;
        if (!dst)
            return util_error(d, util_loc_file(file), "precision file: unknown key '%s' in %s (weights, bias, "
                              "activations, multipliers)", key, ctx);
        if (parse_fmt(v, key, file, dst, has_float, d))
            return -1;
    }
    return 0;
}

static int load_file(const char *file, Prec *P, CgFixed *def, int *has_float, UtilDiag *d)
{
    json_error_t err;
    json_t *root = json_load_file(file, JSON_REJECT_DUPLICATES, &err);
    if (!root)
        return util_error(d, util_loc_line(file, err.line, err.column), "precision file: %s", err.text);
    int rc = 0;
    if (!json_is_object(root))
        rc = util_error(d, util_loc_file(file), "precision file: wants a JSON object");
    const char *key;
    json_t *v;
    if (!rc)
        json_object_foreach(root, key, v) {
            if (rc)
                break;
            if (strcmp(key, "default") == 0) {
                rc = parse_fmt(v, "default", file, def, has_float, d);
            } else if (strcmp(key, "multipliers") == 0) {
                rc = parse_mult(v, file, &P->global.mult, d);
            } else if (strcmp(key, "weights") == 0 || strcmp(key, "bias") == 0 || strcmp(key, "activations") == 0) {
                json_t *one = json_object();
                json_object_set(one, key, v);
                rc = parse_fmts(one, "the file", file, &P->global, has_float, d);
                json_decref(one);
            } else if (strcmp(key, "layers") == 0 && json_is_object(v)) {
                size_t n = json_object_size(v), i = 0;
                P->layer = calloc(n + 1, sizeof *P->layer);
                P->lay = calloc(n + 1, sizeof *P->lay);
                P->layer_used = calloc(n + 1, sizeof *P->layer_used);
                if (!P->layer || !P->lay || !P->layer_used) {
                    rc = util_error(d, util_loc_file(file), "out of memory");
                    break;
                }
                const char *lk;
                json_t *lv;
                json_object_foreach(v, lk, lv) {
                    if (!json_is_object(lv)) {
                        rc = util_error(d, util_loc_file(file), "precision file: layer '%s' wants an object", lk);
                        break;
                    }
                    P->layer[i] = strdup(lk);
                    P->n_layers = (int)++i;
                    if ((rc = parse_fmts(lv, lk, file, &P->lay[i - 1], has_float, d)))
                        break;
                }
            } else if (strcmp(key, "tensors") == 0 && json_is_object(v)) {
                size_t n = json_object_size(v);
                P->tensor = calloc(n + 1, sizeof *P->tensor);
                P->tfmt = calloc(n + 1, sizeof *P->tfmt);
                if (!P->tensor || !P->tfmt) {
                    rc = util_error(d, util_loc_file(file), "out of memory");
                    break;
                }
                const char *tk;
                json_t *tv;
                json_object_foreach(v, tk, tv) {
                    P->tensor[P->n_tensors] = strdup(tk);
                    if ((rc = parse_fmt(tv, tk, file, &P->tfmt[P->n_tensors++], has_float, d)))
                        break;
                }
            } else {
                rc = util_error(d, util_loc_file(file), "precision file: unknown key '%s' (default, weights, bias, "
                                "activations, multipliers, layers, tensors)", key);
            }
        }
    json_decref(root);
    return rc;
}

static const Fmts *layer_of(Prec *P, const IrGraph *g, int node)
{
    if (node < 0 || node >= g->n_nodes || !g->nodes[node].name)
        return NULL;
    for (int i = 0; i < P->n_layers; i++)
        if (strcmp(P->layer[i], g->nodes[node].name) == 0) {
            P->layer_used[i] = 1;
            return &P->lay[i];
        }
    return NULL;
}

static CgFixed pick(CgFixed a, CgFixed b, CgFixed c)
{
    return a.w ? a : b.w ? b : c;
}

/* The node whose kernel writes buffer b (first), or -1. */
static int producer(const LoopProgram *p, int b, unsigned char *used)
{
    for (int k = 0; k < p->n_kernels; k++) {
        cg_c_kernel_uses(p, k, used);
        if (used[b] & 2)
            return p->kernels[k].first_node;
    }
    return -1;
}

/* Format of constant tensor t: weights of a Conv/Gemm/MatMul consumer, else bias. */
static CgFixed const_fmt(Prec *P, const IrGraph *g, int t, CgFixed def)
{
    for (int i = 0; i < g->n_nodes; i++) {
        const IrNode *n = &g->nodes[i];
        for (int k = 0; k < n->n_in; k++) {
            if (n->in[k] != t)
                continue;
            const Fmts *L = layer_of(P, g, i);
            Fmts none = { { 0, 0 }, { 0, 0 }, { 0, 0 }, 0 };
            if (!L)
                L = &none;
            int wt = k == 1 && (n->op == IR_OP_Conv || n->op == IR_OP_ConvTranspose || n->op == IR_OP_Gemm ||
                                n->op == IR_OP_MatMul);
            if (wt)
                return pick(L->wt, P->global.wt, def);
            return pick(L->bias, P->global.bias, pick(L->act, P->global.act, def));
        }
    }
    return pick(P->global.bias, P->global.act, def);
}

/* Does LOCAL buffer b hold a copy of a constant (its tensor is a CONST buffer's)? */
static int is_weight_copy(const LoopProgram *p, int b)
{
    for (int c = 0; c < p->n_bufs; c++)
        if (p->bufs[c].storage == LOOP_ST_CONST && p->bufs[c].tensor == p->bufs[b].tensor)
            return 1;
    return 0;
}

static void prec_free(Prec *P)
{
    for (int i = 0; i < P->n_tensors; i++)
        free((char *)P->tensor[i]);
    free(P->tensor);
    free(P->tfmt);
    for (int i = 0; i < P->n_layers; i++)
        free((char *)P->layer[i]);
    free(P->layer);
    free(P->lay);
    free(P->layer_used);
}

int tgt_fpga_precision(const IrGraph *g, const LoopProgram *p, const TgtOptions *o, CgFixed **fmt_out,
                       int **frac_out, UtilDiag *d)
{
    Prec P;
    memset(&P, 0, sizeof P);
    CgFixed def = { 0, 0 };
    int has_float = 0;
    *fmt_out = NULL;
    *frac_out = NULL;
    if (o->precision && strcmp(o->precision, "float32")) {
        if (cg_fixed_parse(o->precision, &def))
            return util_error(d, util_loc_file(o->model_file), "-t fpga: --precision wants float32 or fixed<W,I> "
                              "with 2 <= W <= 32 and 1 <= I <= W, not '%s'", o->precision);
    }
    if (o->precision_file && load_file(o->precision_file, &P, &def, &has_float, d)) {
        prec_free(&P);
        return -1;
    }
    int any = def.w || P.global.act.w || P.global.wt.w || P.global.bias.w;
    for (int i = 0; i < P.n_tensors; i++)
        any |= P.tfmt[i].w;
    for (int i = 0; i < P.n_layers; i++)
        any |= P.lay[i].act.w || P.lay[i].wt.w || P.lay[i].bias.w;
    if (!any) {
        prec_free(&P);
        return 0;                                  /* float32 */
    }
    if (!def.w)
        def = P.global.act.w ? P.global.act : (CgFixed){ 16, 6 };
    CgFixed *fmt = calloc((size_t)p->n_bufs + 1, sizeof *fmt);
    int *frac = calloc((size_t)p->n_kernels + 1, sizeof *frac);
    unsigned char *used = malloc((size_t)p->n_bufs + 1);
    if (!fmt || !frac || !used) {
        free(fmt);
        free(frac);
        free(used);
        prec_free(&P);
        return util_error(d, util_loc_file(o->model_file), "out of memory");
    }
    for (int b = 0; b < p->n_bufs; b++) {
        const LoopBuf *bf = &p->bufs[b];
        if (!ir_dtype_is_float(bf->dtype) || bf->alias_of >= 0)
            continue;
        CgFixed act = pick(P.global.act, def, def);
        switch (bf->storage) {
        case LOOP_ST_CONST: fmt[b] = const_fmt(&P, g, bf->tensor, def); break;
        case LOOP_ST_INPUT: fmt[b] = act; break;
        case LOOP_ST_LOCAL:
            if (bf->tensor >= 0 && is_weight_copy(p, b)) {     /* an on-chip tile of a weight (place.c) */
                fmt[b] = const_fmt(&P, g, bf->tensor, def);
                break;
            }
            /* fallthrough */
        default: {
            const Fmts *L = layer_of(&P, g, producer(p, b, used));
            fmt[b] = L && L->act.w ? L->act : act;
            break;
        }
        }
    }
    /* per tensor: the most specific; a view (Reshape, Flatten) names its root's storage */
    for (int i = 0; i < P.n_tensors; i++) {
        int hit = 0;
        for (int b = 0; b < p->n_bufs; b++) {
            int t = p->bufs[b].tensor;
            if (t < 0 || !ir_dtype_is_float(p->bufs[b].dtype) || strcmp(g->tensors[t].name, P.tensor[i]))
                continue;
            fmt[cg_c_root(p, b)] = P.tfmt[i];
            hit = 1;
        }
        if (!hit) {
            free(fmt);
            free(frac);
            free(used);
            util_error(d, util_loc_file(o->precision_file), "precision file: tensor '%s' is not a float tensor "
                       "computed or read on the FPGA", P.tensor[i]);
            prec_free(&P);
            return -1;
        }
    }
    for (int b = 0; b < p->n_bufs; b++)
        if (p->bufs[b].alias_of >= 0)
            fmt[b] = fmt[cg_c_root(p, b)];
    for (int k = 0; k < p->n_kernels; k++) {
        cg_c_kernel_uses(p, k, used);
        int f = 0;
        for (int b = 0; b < p->n_bufs; b++)
            if (used[b] && fmt[b].w && fmt[b].w - fmt[b].i > f)
                f = fmt[b].w - fmt[b].i;
        frac[k] = f > 24 ? 24 : f;
    }
    free(used);
    int rc = 0;
    for (int i = 0; i < P.n_layers && !rc; i++) {
        for (int n = 0; n < g->n_nodes && !P.layer_used[i]; n++)
            P.layer_used[i] = g->nodes[n].name && strcmp(g->nodes[n].name, P.layer[i]) == 0;
        if (!P.layer_used[i])
            rc = util_error(d, util_loc_file(o->precision_file), "precision file: layer '%s' is not a node of the "
                            "model", P.layer[i]);
    }
    if (!rc && has_float)
        rc = util_error(d, util_loc_file(o->precision_file), "precision file: mixing float32 with fixed point is "
                        "not supported; use fixed<W,I> everywhere or --precision float32");
    prec_free(&P);
    if (rc) {
        free(fmt);
        free(frac);
        return -1;
    }
    *fmt_out = fmt;
    *frac_out = frac;
    return 0;
}

int tgt_fpga_multipliers(const IrGraph *g, const TgtOptions *o, int *per_node, int *global, UtilDiag *d)
{
    for (int n = 0; n < g->n_nodes; n++)
        per_node[n] = 0;
    *global = 0;
    if (!o->precision_file)
        return 0;
    Prec P;
    memset(&P, 0, sizeof P);
    CgFixed def = { 0, 0 };
    int has_float = 0, rc = load_file(o->precision_file, &P, &def, &has_float, d);
    *global = P.global.mult;
    for (int i = 0; i < P.n_layers && !rc; i++) {
        if (!P.lay[i].mult)
            continue;
        int hit = 0;
        for (int n = 0; n < g->n_nodes; n++)
            if (g->nodes[n].name && strcmp(g->nodes[n].name, P.layer[i]) == 0) {
                per_node[n] = P.lay[i].mult;
                hit = 1;
            }
        if (!hit)
            rc = util_error(d, util_loc_file(o->precision_file), "precision file: layer '%s' is not a node of the "
                            "model", P.layer[i]);
    }
    prec_free(&P);
    return rc;
}
