/* frontend/json_write.c — `dlcc convert`: the graph IR as JSON v1 plus a
 * safetensors file for the large initializers.
 *
 * The output is deterministic (graph order, no hash order) and lossless:
 * reading it back gives the same graph.  One graph input, output, initializer
 * or node per line.  Floats are printed with the fewest digits that read back
 * to the same value (at most 9 for float32, 17 for float64); integers beyond
 * 2^53 are written as decimal strings and non-finite floats as "nan", "inf",
 * "-inf" (json_values.c reads both).  The opset written is the IR's: the
 * graph already holds its semantics (fe_upgrade ran when it was read).
 */
#include "frontend/json_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define INLINE_MAX_ELEMENTS 16
#define IR_OPSET 21

typedef struct Wr {
    const IrGraph *g;
    UtilBuf *b;
    UtilDiag *d;
} Wr;

/* ---- scalars ---- */

static int put_str(Wr *w, const char *s)
{
    json_t *j = json_string(s);
    char *t = j ? json_dumps(j, JSON_ENCODE_ANY) : NULL;
    json_decref(j);
    if (!t)
        return util_error(w->d, util_loc_file(NULL), "'%s' is not valid UTF-8 and cannot be written as JSON", s);
    util_buf_put(w->b, t, strlen(t));
    free(t);
    return 0;
}

/* The shortest decimal that reads back (as the reader converts it) to v,
 * as float32 when f32 is set. */
static void fmt_float(char *s, size_t n, double v, int f32)
{
    if (isnan(v)) {
        snprintf(s, n, "\"nan\"");
        return;
    }
    if (isinf(v)) {
        snprintf(s, n, v > 0 ? "\"inf\"" : "\"-inf\"");
        return;
    }
    if (v == 0) {
        snprintf(s, n, signbit(v) ? "-0.0" : "0");
        return;
    }
    for (int p = 1; p <= (f32 ? 9 : 17); p++) {
        snprintf(s, n, "%.*g", p, v);
        double back = strtod(s, NULL);
        if (f32 ? (float)back == (float)v : back == v)
            break;
    }
    /* an integer token beyond 2^53 would be refused by the reader */
    if (strspn(s, "-0123456789") == strlen(s) && fabs(v) > (double)FE_JSON_MAX_INT)
        snprintf(s, n, "%.16e", v);
}

static void put_int(Wr *w, int64_t v)
{
    if (v > FE_JSON_MAX_INT || v < -FE_JSON_MAX_INT)
        util_buf_printf(w->b, "\"%lld\"", (long long)v);
    else
        util_buf_printf(w->b, "%lld", (long long)v);
}

static void put_float(Wr *w, double v, int f32)
{
    char s[64];
    fmt_float(s, sizeof s, v, f32);
    util_buf_printf(w->b, "%s", s);
}

static void put_shape(Wr *w, const IrShape *s)
{
    util_buf_printf(w->b, "[");
    for (int i = 0; i < s->rank; i++)
        util_buf_printf(w->b, "%s%lld", i ? ", " : "", (long long)s->dims[i]);
    util_buf_printf(w->b, "]");
}

/* ---- tensor values ---- */

/* Can the reader read a's values back exactly?  Only uint64 values above
 * INT64_MAX cannot be written. */
static int values_expressible(const IrArray *a)
{
    if (a->dtype != IR_DT_U64)
        return 1;
    int64_t n = ir_array_numel(a);
    for (int64_t i = 0; i < n; i++)
        if (((const uint64_t *)a->data)[i] > (uint64_t)INT64_MAX)
            return 0;
    return 1;
}

static void put_values(Wr *w, const IrArray *a)
{
    int64_t n = ir_array_numel(a);
    util_buf_printf(w->b, "[");
    for (int64_t i = 0; i < n; i++) {
        if (i)
            util_buf_printf(w->b, ", ");
        if (a->dtype == IR_DT_BOOL)
            util_buf_printf(w->b, "%s", ((const uint8_t *)a->data)[i] ? "true" : "false");
        else if (ir_dtype_is_float(a->dtype))
            put_float(w, ir_load_f64(a->dtype, a->data, i), a->dtype != IR_DT_F64);
        else
            put_int(w, ir_load_i64(a->dtype, a->data, i));
    }
    util_buf_printf(w->b, "]");
}

static int put_tensor_attr(Wr *w, const IrNode *n, const IrAttr *a)
{
    const IrArray *t = a->v.tensor;
    if (!values_expressible(t))
        return ir_node_error(w->g, n, w->d, "attribute '%s' holds uint64 values above 2^63-1, which JSON v1 "
                             "cannot express", ir_attr_name(a->key));
    util_buf_printf(w->b, "{\"dtype\": \"%s\", \"shape\": ", ir_dtype_name(t->dtype));
    put_shape(w, &t->shape);
    util_buf_printf(w->b, ", \"values\": ");
    put_values(w, t);
    util_buf_printf(w->b, "}");
    return 0;
}

/* Float attributes are float32 in ONNX; a value that is not is written with
 * double precision (and rounded to float32 when read). */
static void put_attr_float(Wr *w, double v)
{
    put_float(w, v, isnan(v) || (double)(float)v == v);
}

static int put_attr(Wr *w, const IrNode *n, const IrAttr *a)
{
    switch (a->kind) {
    case IR_AK_INT:
        put_int(w, a->v.i);
        return 0;
    case IR_AK_FLOAT:
        put_attr_float(w, a->v.f);
        return 0;
    case IR_AK_STRING:
        return put_str(w, a->v.s);
    case IR_AK_TENSOR:
        return put_tensor_attr(w, n, a);
    default:
        break;
    }
    util_buf_printf(w->b, "[");
    for (int i = 0; i < a->n; i++) {
        if (i)
            util_buf_printf(w->b, ", ");
        if (a->kind == IR_AK_INTS)
            put_int(w, a->v.ints[i]);
        else if (a->kind == IR_AK_FLOATS)
            put_attr_float(w, a->v.floats[i]);
        else if (put_str(w, a->v.strings[i]))
            return -1;
    }
    util_buf_printf(w->b, "]");
    return 0;
}

/* ---- graph parts ---- */

static int put_tensor_list(Wr *w, const int *idx, int n)
{
    util_buf_printf(w->b, "[");
    for (int i = 0; i < n; i++) {
        if (i)
            util_buf_printf(w->b, ", ");
        if (idx[i] < 0)
            util_buf_printf(w->b, "\"\"");
        else if (put_str(w, w->g->tensors[idx[i]].name))
            return -1;
    }
    util_buf_printf(w->b, "]");
    return 0;
}

static int put_node(Wr *w, const IrNode *n)
{
    util_buf_printf(w->b, "    {");
    if (n->name[0]) {
        util_buf_printf(w->b, "\"name\": ");
        if (put_str(w, n->name))
            return -1;
        util_buf_printf(w->b, ", ");
    }
    util_buf_printf(w->b, "\"op\": \"%s\", \"inputs\": ", ir_op_name(n->op));
    if (put_tensor_list(w, n->in, n->n_in))
        return -1;
    util_buf_printf(w->b, ", \"outputs\": ");
    if (put_tensor_list(w, n->out, n->n_out))
        return -1;
    for (int i = 0; i < n->n_attrs; i++) {
        util_buf_printf(w->b, i ? ", \"%s\": " : ", \"attrs\": {\"%s\": ", ir_attr_name(n->attrs[i].key));
        if (put_attr(w, n, &n->attrs[i]))
            return -1;
    }
    util_buf_printf(w->b, "%s", n->n_attrs ? "}}" : "}");
    return 0;
}

/* A typed tensor line: {"name": ..., "dtype": ..., "shape": [...]<tail>}. */
static int put_typed(Wr *w, const IrTensor *t)
{
    util_buf_printf(w->b, "    {\"name\": ");
    if (put_str(w, t->name))
        return -1;
    util_buf_printf(w->b, ", \"dtype\": \"%s\", \"shape\": ", ir_dtype_name(t->v.dtype));
    put_shape(w, &t->v.shape);
    return 0;
}

static int goes_inline(const IrTensor *t)
{
    return ir_array_numel(&t->v) <= INLINE_MAX_ELEMENTS && values_expressible(&t->v);
}

static void open_list(Wr *w, const char *key, int first)
{
    util_buf_printf(w->b, ",\n  \"%s\": [%s", key, first ? "\n" : "");
}

static void close_list(Wr *w, int any)
{
    util_buf_printf(w->b, "%s", any ? "\n  ]" : "]");
}

static int put_inputs_outputs(Wr *w)
{
    const IrGraph *g = w->g;
    open_list(w, "inputs", g->n_inputs > 0);
    for (int i = 0; i < g->n_inputs; i++) {
        util_buf_printf(w->b, "%s", i ? ",\n" : "");
        if (put_typed(w, &g->tensors[g->inputs[i]]))
            return -1;
        util_buf_printf(w->b, "}");
    }
    close_list(w, g->n_inputs > 0);
    open_list(w, "outputs", g->n_outputs > 0);
    for (int i = 0; i < g->n_outputs; i++) {
        util_buf_printf(w->b, "%s    {\"name\": ", i ? ",\n" : "");
        if (put_str(w, g->tensors[g->outputs[i]].name))
            return -1;
        util_buf_printf(w->b, "}");
    }
    close_list(w, g->n_outputs > 0);
    return 0;
}

static int put_initializers(Wr *w)
{
    const IrGraph *g = w->g;
    int any = 0;
    for (int t = 0; t < g->n_tensors; t++)
        any |= g->tensors[t].kind == IR_TK_CONST;
    open_list(w, "initializers", any);
    int first = 1;
    for (int t = 0; t < g->n_tensors; t++) {
        const IrTensor *x = &g->tensors[t];
        if (x->kind != IR_TK_CONST)
            continue;
        util_buf_printf(w->b, "%s", first ? "" : ",\n");
        first = 0;
        if (put_typed(w, x))
            return -1;
        if (goes_inline(x)) {
            util_buf_printf(w->b, ", \"values\": ");
            put_values(w, &x->v);
        }
        util_buf_printf(w->b, "}");
    }
    close_list(w, any);
    return 0;
}

static int put_nodes(Wr *w)
{
    const IrGraph *g = w->g;
    int any = 0;
    for (int i = 0; i < g->n_nodes; i++)
        any |= !g->nodes[i].dead;
    open_list(w, "nodes", any);
    int first = 1;
    for (int i = 0; i < g->n_nodes; i++) {
        if (g->nodes[i].dead)
            continue;
        util_buf_printf(w->b, "%s", first ? "" : ",\n");
        first = 0;
        if (put_node(w, &g->nodes[i]))
            return -1;
    }
    close_list(w, any);
    return 0;
}

static int put_graph(Wr *w, const char *st_name)
{
    util_buf_printf(w->b, "{\n  \"format\": \"dlcc-graph\",\n  \"version\": 1,\n  \"name\": ");
    if (put_str(w, w->g->name))
        return -1;
    util_buf_printf(w->b, ",\n  \"opset\": %d", IR_OPSET);
    if (st_name) {
        util_buf_printf(w->b, ",\n  \"weights\": ");
        if (put_str(w, st_name))
            return -1;
    }
    if (put_inputs_outputs(w) || put_initializers(w) || put_nodes(w))
        return -1;
    util_buf_printf(w->b, "\n}\n");
    return 0;
}

/* ---- the weights file ---- */

/* Writes the initializers that do not go inline; *written tells whether
 * there were any. */
static int write_weights(const IrGraph *g, UtilOutSet *outs, const char *dir, const char *st_name,
                         int *written, UtilDiag *d)
{
    int n = 0;
    *written = 0;
    const char **names = malloc(((size_t)g->n_tensors + 1) * sizeof *names);
    IrArray *arrays = malloc(((size_t)g->n_tensors + 1) * sizeof *arrays);
    if (!names || !arrays) {
        free(names);
        free(arrays);
        return util_error(d, util_loc_file(dir), "out of memory");
    }
    for (int t = 0; t < g->n_tensors; t++) {
        const IrTensor *x = &g->tensors[t];
        if (x->kind == IR_TK_CONST && !goes_inline(x)) {
            names[n] = x->name;
            arrays[n++] = x->v;
        }
    }
    UtilBuf b;
    util_buf_init(&b);
    int rc = 0;
    if (n) {
        rc = fe_st_write(&b, n, names, arrays, d) || util_outset_write(outs, dir, st_name, b.data, b.len, d);
        *written = !rc;
    }
    util_buf_free(&b);
    free(names);
    free(arrays);
    return rc ? -1 : 0;
}

int fe_write_json(const IrGraph *g, UtilOutSet *outs, const char *dir, const char *json_name,
                  const char *st_name, UtilDiag *d)
{
    int has_st;
    for (int t = 0; t < g->n_tensors; t++)
        if (g->tensors[t].kind == IR_TK_CONST && !g->tensors[t].v.data)
            return util_error(d, g->tensors[t].loc, "initializer '%s' has no data", g->tensors[t].name);
    if (write_weights(g, outs, dir, st_name, &has_st, d))
        return -1;
    UtilBuf b;
    util_buf_init(&b);
    Wr w = { g, &b, d };
    int rc = put_graph(&w, has_st ? st_name : NULL);
    if (!rc && b.oom)
        rc = util_error(d, util_loc_file(dir), "out of memory");
    if (!rc)
        rc = util_outset_write(outs, dir, json_name, b.data, b.len, d);
    util_buf_free(&b);
    return rc;
}
