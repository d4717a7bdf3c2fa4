/* frontend/json_read.c — the dlcc JSON graph format, version 1
 * (docs/model-format.md) into the graph IR.
 *
 * jansson parses and validates the text (syntax, UTF-8, duplicate keys);
 * this file checks the structure member by member and builds the graph.
 * Every error carries FILE:LINE:COL of the offending value or key (see
 * json_internal.h for how positions are found).  Nodes and graph inputs and
 * initializers get the position of their JSON object, so later errors
 * (inference, verification) point into the file too.
 */
#include "frontend/json_internal.h"

#include <stdlib.h>
#include <string.h>

#define JSON_MAX_OPSET IR_MAX_OPSET

typedef struct Rd {
    FeJSrc s;
    const FeOptions *opt;
    IrGraph *g;
    FeSafetensors st;
    int has_st;
    FeLineCounter lc;
} Rd;

static const FeJPath ROOT = { NULL, NULL, 0 };

static const char *const top_keys[] = {
    "format", "version", "name", "opset", "weights", "inputs", "outputs", "initializers", "nodes", NULL
};
static const char *const input_keys[] = { "name", "dtype", "shape", NULL };
static const char *const output_keys[] = { "name", "dtype", "shape", NULL };
static const char *const init_keys[] = { "name", "dtype", "shape", "values", "key", NULL };
static const char *const node_keys[] = { "name", "op", "domain", "inputs", "outputs", "attrs", NULL };

/* ---- small typed readers ---- */

/* A required, non-empty string member `key` of o. */
static int read_name(Rd *r, const FeJPath *p, const json_t *o, const char *key, const char **out)
{
    json_t *v;
    FeJPath kp = FE_JKEY(p, key);
    char what[64];
    snprintf(what, sizeof what, "'%s'", key);
    if (fe_jmember(&r->s, p, o, key, 1, &v) || fe_jstr(&r->s, &kp, v, out, what))
        return -1;
    if (!(*out)[0])
        return fe_jerr(&r->s, &kp, 0, "%s must not be empty", what);
    return 0;
}

/* The optional "dtype" member of o; IR_DT_UNDEF when absent. */
static int read_dtype(Rd *r, const FeJPath *p, const json_t *o, IrDType *out)
{
    json_t *v;
    FeJPath dp = FE_JKEY(p, "dtype");
    *out = IR_DT_UNDEF;
    if (fe_jmember(&r->s, p, o, "dtype", 0, &v))
        return -1;
    return v ? fe_jdtype(&r->s, &dp, v, 0, out) : 0;
}

/* A new tensor named by member "name" of o (p), refusing duplicates. */
static int new_tensor(Rd *r, const FeJPath *np, const char *name, IrTensorKind kind, UtilLoc loc)
{
    if (ir_find_tensor(r->g, name) >= 0)
        return fe_jerr(&r->s, np, 0, "duplicate tensor name '%s'", name);
    return ir_add_tensor(r->g, name, kind, loc, r->s.d);
}

/* Calls fn on each element of the array member `key` of the root, with the
 * position of the element. */
typedef int (*ElemFn)(Rd *r, const FeJPath *p, const json_t *v, UtilLoc loc);

static int each_element(Rd *r, const json_t *root, const char *key, int required, ElemFn fn)
{
    json_t *arr;
    FeJPath ap = FE_JKEY(&ROOT, key);
    char what[64];
    snprintf(what, sizeof what, "'%s'", key);
    if (fe_jmember(&r->s, &ROOT, root, key, required, &arr))
        return -1;
    if (!arr)
        return 0;
    if (fe_jarray(&r->s, &ap, arr, what))
        return -1;
    size_t n = json_array_size(arr);
    size_t *offs = malloc((n ? n : 1) * sizeof *offs);
    if (!offs)
        return fe_jerr(&r->s, &ap, 0, "out of memory");
    fe_json_elements(r->s.text, r->s.len, &ap, offs, n);
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        FeJPath ep = FE_JIDX(&ap, i);
        rc = fn(r, &ep, json_array_get(arr, i), fe_line_counter_loc(&r->lc, r->g->file, offs[i]));
    }
    free(offs);
    return rc;
}

/* ---- header ---- */

static int read_header(Rd *r, const json_t *root)
{
    json_t *v;
    const char *s;
    int64_t x;
    FeJPath fp = FE_JKEY(&ROOT, "format"), vp = FE_JKEY(&ROOT, "version"), np = FE_JKEY(&ROOT, "name"),
            op = FE_JKEY(&ROOT, "opset");
    if (!json_is_object(root))
        return fe_jerr(&r->s, &ROOT, 0, "a dlcc graph must be a JSON object, not %s", fe_jkind(root));
    if (fe_jmember(&r->s, &ROOT, root, "format", 1, &v) || fe_jstr(&r->s, &fp, v, &s, "'format'"))
        return -1;
    if (strcmp(s, "dlcc-graph") != 0)
        return fe_jerr(&r->s, &fp, 0, "'format' must be \"dlcc-graph\", not \"%s\"", s);
    if (fe_jmember(&r->s, &ROOT, root, "version", 1, &v) ||
        fe_jint(&r->s, &vp, v, INT64_MIN / 2, INT64_MAX / 2, &x, "'version'"))
        return -1;
    if (x != 1)
        return fe_jerr(&r->s, &vp, 0, "unsupported format version %lld (this dlcc reads version 1)",
                       (long long)x);
    if (fe_jobject(&r->s, &ROOT, root, top_keys, "the graph"))
        return -1;
    if (fe_jmember(&r->s, &ROOT, root, "name", 0, &v))
        return -1;
    if (v) {
        if (fe_jstr(&r->s, &np, v, &s, "'name'"))
            return -1;
        if (!(r->g->name = ir_strdup(r->g, s)))
            return fe_jerr(&r->s, &np, 0, "out of memory");
    }
    if (fe_jmember(&r->s, &ROOT, root, "opset", 1, &v) ||
        fe_jint(&r->s, &op, v, 1, JSON_MAX_OPSET, &x, "'opset'"))
        return -1;
    r->g->opset = (int)x;
    return 0;
}

static int open_weights(Rd *r, const json_t *root)
{
    json_t *v;
    const char *rel;
    FeJPath wp = FE_JKEY(&ROOT, "weights");
    if (fe_jmember(&r->s, &ROOT, root, "weights", 0, &v) || !v)
        return r->s.d->has_error ? -1 : 0;
    if (fe_jstr(&r->s, &wp, v, &rel, "'weights'"))
        return -1;
    char *full = util_resolve_beside(r->s.path, rel, fe_jloc(&r->s, &wp, 0), r->s.d);
    if (!full)
        return -1;
    int rc = fe_st_open(&r->st, full, r->s.d);
    free(full);
    if (rc)
        return -1;
    r->has_st = 1;
    return 0;
}

/* ---- graph inputs ---- */

static const FeShapeOverride *find_override(const FeOptions *opt, const char *name)
{
    for (int i = 0; opt && i < opt->n_shapes; i++)
        if (strcmp(opt->shapes[i].name, name) == 0)
            return &opt->shapes[i];
    return NULL;
}

/* Unknown dims (-1) become 1, or what --input-shape gives. */
static int bind_input_shape(Rd *r, const FeJPath *sp, const char *name, IrShape *shape)
{
    const FeShapeOverride *o = find_override(r->opt, name);
    if (o && o->shape.rank != shape->rank)
        return fe_jerr(&r->s, sp, 0, "--input-shape gives %d dimensions for input '%s', which has %d",
                       o->shape.rank, name, shape->rank);
    for (int i = 0; i < shape->rank; i++) {
        int64_t want = o ? o->shape.dims[i] : 1;
        if (want < 0)
            return fe_jerr(&r->s, sp, 0, "--input-shape gives a negative dimension for input '%s'", name);
        if (shape->dims[i] >= 0 && shape->dims[i] != want && o)
            return fe_jerr(&r->s, sp, 0, "--input-shape gives %lld for dimension %d of input '%s', which the "
                           "model fixes at %lld", (long long)want, i, name, (long long)shape->dims[i]);
        if (shape->dims[i] < 0)
            shape->dims[i] = want;
    }
    if (ir_shape_numel(shape) < 0)
        return fe_jerr(&r->s, sp, 0, "input '%s' has too many elements (the limit is " IR_MAX_ELEMENTS_TEXT
                       " per tensor)", name);
    return 0;
}

static int read_input(Rd *r, const FeJPath *p, const json_t *v, UtilLoc loc)
{
    const char *name;
    IrDType dt;
    IrShape shape;
    FeJPath np = FE_JKEY(p, "name"), sp = FE_JKEY(p, "shape");
    if (fe_jobject(&r->s, p, v, input_keys, "a graph input") || read_name(r, p, v, "name", &name) ||
        fe_jtyped(&r->s, p, v, 0, 1, &dt, &shape) || bind_input_shape(r, &sp, name, &shape))
        return -1;
    int t = new_tensor(r, &np, name, IR_TK_INPUT, loc);
    if (t < 0)
        return -1;
    ir_set_type(r->g, t, dt, &shape);
    if (ir_add_input(r->g, t))
        return fe_jerr(&r->s, p, 0, "out of memory");
    return 0;
}

static int check_overrides(Rd *r)
{
    for (int i = 0; r->opt && i < r->opt->n_shapes; i++) {
        int t = ir_find_tensor(r->g, r->opt->shapes[i].name);
        if (t < 0 || r->g->tensors[t].kind != IR_TK_INPUT)
            return util_error(r->s.d, util_loc_file(r->s.path), "--input-shape names '%s', which is not a "
                              "graph input of this model", r->opt->shapes[i].name);
    }
    return 0;
}

/* ---- initializers ---- */

/* The weights-file entry that holds initializer `name` (or `key`); NULL when
 * there is none.  Refuses data given both inline and in the weights file. */
static int find_weights(Rd *r, const FeJPath *p, const json_t *v, const char *name, const FeStEntry **e)
{
    json_t *key, *vals;
    const char *ks = NULL;
    FeJPath kp = FE_JKEY(p, "key"), vp = FE_JKEY(p, "values");
    *e = NULL;
    if (fe_jmember(&r->s, p, v, "key", 0, &key) || fe_jmember(&r->s, p, v, "values", 0, &vals) ||
        (key && fe_jstr(&r->s, &kp, key, &ks, "'key'")))
        return -1;
    if (key && vals)
        return fe_jerr(&r->s, &vp, 0, "initializer '%s' has both inline 'values' and a 'key' into the weights "
                       "file", name);
    if (r->has_st)
        *e = fe_st_find(&r->st, ks ? ks : name);
    if (vals && *e)
        return fe_jerr(&r->s, &vp, 0, "initializer '%s' has both inline 'values' and data in the weights file",
                       name);
    if (vals || *e)
        return 0;
    if (ks)
        return fe_jerr(&r->s, &kp, 0, "'key' names tensor '%s', which is not in the weights file%s", ks,
                       r->has_st ? "" : " (the model has no 'weights')");
    return fe_jerr(&r->s, p, 0, "initializer '%s' has neither 'values' nor a tensor in the weights file", name);
}

static int copy_weights(Rd *r, const FeJPath *p, const char *name, const FeStEntry *e, IrArray *a)
{
    if (e->dtype != a->dtype) {
        FeJPath dp = FE_JKEY(p, "dtype");
        return fe_jerr(&r->s, &dp, 0, "initializer '%s' is %s here but %s in the weights file", name,
                       ir_dtype_name(a->dtype), ir_dtype_name(e->dtype));
    }
    if (!ir_shape_equal(&e->shape, &a->shape)) {
        char s1[128], s2[128];
        FeJPath sp = FE_JKEY(p, "shape");
        ir_shape_str(&a->shape, s1, sizeof s1);
        ir_shape_str(&e->shape, s2, sizeof s2);
        return fe_jerr(&r->s, &sp, 0, "initializer '%s' has shape %s here but %s in the weights file", name, s1,
                       s2);
    }
    if (e->end > e->begin)
        memcpy(a->data, r->st.bytes + r->st.data_start + e->begin, (size_t)(e->end - e->begin));
    return 0;
}

static int read_initializer(Rd *r, const FeJPath *p, const json_t *v, UtilLoc loc)
{
    const char *name;
    IrDType dt;
    IrShape shape;
    const FeStEntry *e;
    FeJPath np = FE_JKEY(p, "name"), vp = FE_JKEY(p, "values");
    if (fe_jobject(&r->s, p, v, init_keys, "an initializer") || read_name(r, p, v, "name", &name) ||
        fe_jtyped(&r->s, p, v, 0, 0, &dt, &shape) || find_weights(r, p, v, name, &e))
        return -1;
    int t = new_tensor(r, &np, name, IR_TK_CONST, loc);
    if (t < 0)
        return -1;
    ir_set_type(r->g, t, dt, &shape);
    IrArray *a = &r->g->tensors[t].v;
    if (!e)
        return fe_json_values(&r->s, &vp, json_object_get(v, "values"), r->g, a);
    if (!ir_alloc_data(r->g, t))
        return fe_jerr(&r->s, p, 0, "out of memory");
    return copy_weights(r, p, name, e, a);
}

/* ---- nodes ---- */

/* The tensor a node reads; a name not defined yet gets a placeholder that a
 * later node must produce (checked by check_produced). */
static int node_input(Rd *r, const char *name, UtilLoc loc)
{
    if (!name[0])
        return -1;
    int t = ir_find_tensor(r->g, name);
    return t >= 0 ? t : ir_add_tensor(r->g, name, IR_TK_VALUE, loc, r->s.d);
}

/* The tensor a node writes: new, or a placeholder read earlier. */
static int node_output(Rd *r, const FeJPath *ep, const char *name, UtilLoc loc)
{
    int t = ir_find_tensor(r->g, name);
    if (t < 0)
        t = ir_add_tensor(r->g, name, IR_TK_VALUE, loc, r->s.d);
    else if (r->g->tensors[t].kind != IR_TK_VALUE || r->g->tensors[t].producer >= 0)
        return fe_jerr(&r->s, ep, 0, "tensor '%s' is defined twice (node output of the same name as %s)", name,
                       r->g->tensors[t].kind == IR_TK_INPUT ? "a graph input"
                       : r->g->tensors[t].kind == IR_TK_CONST ? "an initializer" : "another node output");
    if (t >= 0) {
        r->g->tensors[t].producer = r->g->n_nodes;   /* claimed; ir_add_node sets the same */
        r->g->tensors[t].loc = loc;
    }
    return t;
}

/* Reads the "inputs" (is_out = 0) or "outputs" list of a node into idx. */
static int node_tensors(Rd *r, const FeJPath *p, const json_t *v, int is_out, UtilLoc loc, int **idx, int *n)
{
    const char *key = is_out ? "outputs" : "inputs";
    json_t *arr;
    FeJPath ap = FE_JKEY(p, key);
    *n = 0;
    if (fe_jmember(&r->s, p, v, key, is_out, &arr))
        return -1;
    if (!arr)
        return 0;
    if (fe_jarray(&r->s, &ap, arr, is_out ? "'outputs'" : "'inputs'"))
        return -1;
    size_t cnt = json_array_size(arr);
    if (cnt > 65535)
        return fe_jerr(&r->s, &ap, 0, "a node has at most 65535 %s", key);
    *idx = ir_alloc(r->g, (cnt ? cnt : 1) * sizeof(int));
    if (!*idx)
        return fe_jerr(&r->s, &ap, 0, "out of memory");
    for (size_t i = 0; i < cnt; i++) {
        const char *name;
        FeJPath ep = FE_JIDX(&ap, i);
        if (fe_jstr(&r->s, &ep, json_array_get(arr, i), &name, is_out ? "a node output" : "a node input"))
            return -1;
        int t = !name[0] ? -1 : is_out ? node_output(r, &ep, name, loc) : node_input(r, name, loc);
        if (t < 0 && name[0])
            return -1;
        (*idx)[i] = t;
    }
    *n = (int)cnt;
    return 0;
}

static int read_op(Rd *r, const FeJPath *p, const json_t *v, IrOp *op)
{
    json_t *o, *dom, *nm;
    const char *opname, *domain = "", *node = "";
    FeJPath op_p = FE_JKEY(p, "op"), dp = FE_JKEY(p, "domain"), np = FE_JKEY(p, "name");
    if (fe_jmember(&r->s, p, v, "op", 1, &o) || fe_jstr(&r->s, &op_p, o, &opname, "'op'") ||
        fe_jmember(&r->s, p, v, "domain", 0, &dom) || (dom && fe_jstr(&r->s, &dp, dom, &domain, "'domain'")) ||
        fe_jmember(&r->s, p, v, "name", 0, &nm) || (nm && fe_jstr(&r->s, &np, nm, &node, "'name'")))
        return -1;
    if (domain[0] && strcmp(domain, "ai.onnx") != 0)
        return fe_jerr(&r->s, &dp, 0, "unknown operator '%s' in domain '%s' (node '%s'): dlcc reads the "
                       "default ONNX domain only", opname, domain, node);
    *op = ir_op_from_name(opname);
    if (*op == IR_OP_INVALID)
        return fe_jerr(&r->s, &op_p, 0, "unknown operator '%s' (node '%s', opset %d)", opname, node,
                       r->g->opset);
    return 0;
}

static int read_attrs(Rd *r, const FeJPath *p, const json_t *v, IrOp op, int node)
{
    json_t *attrs, *val;
    const char *key;
    FeJPath ap = FE_JKEY(p, "attrs");
    if (fe_jmember(&r->s, p, v, "attrs", 0, &attrs) || !attrs)
        return r->s.d->has_error ? -1 : 0;
    if (!json_is_object(attrs))
        return fe_jerr(&r->s, &ap, 0, "'attrs' must be an object, not %s", fe_jkind(attrs));
    json_object_foreach(attrs, key, val) {
        IrAttr a;
        FeJPath kp = FE_JKEY(&ap, key);
        if (fe_json_attr(&r->s, &kp, op, key, val, r->g, &a))
            return -1;
        if (ir_set_attr(r->g, node, &a))
            return fe_jerr(&r->s, &kp, 0, "out of memory");
    }
    return 0;
}

static int read_node(Rd *r, const FeJPath *p, const json_t *v, UtilLoc loc)
{
    IrOp op;
    int *in = NULL, *out = NULL, n_in, n_out;
    const json_t *nm = json_is_object(v) ? json_object_get(v, "name") : NULL;
    if (fe_jobject(&r->s, p, v, node_keys, "a node") || read_op(r, p, v, &op) ||
        node_tensors(r, p, v, 0, loc, &in, &n_in) || node_tensors(r, p, v, 1, loc, &out, &n_out))
        return -1;
    int node = ir_add_node(r->g, op, nm ? json_string_value(nm) : "", n_in, in, n_out, out, loc);
    if (node < 0)
        return fe_jerr(&r->s, p, 0, "out of memory");
    return read_attrs(r, p, v, op, node);
}

/* Every tensor a node reads must be produced somewhere. */
static int check_produced(Rd *r)
{
    for (int t = 0; t < r->g->n_tensors; t++) {
        const IrTensor *x = &r->g->tensors[t];
        if (x->kind == IR_TK_VALUE && x->producer < 0)
            return util_error(r->s.d, x->loc, "tensor '%s' is used but is not a graph input, an initializer "
                              "or a node output", x->name);
    }
    return 0;
}

/* ---- graph outputs ---- */

static int read_declared(Rd *r, const FeJPath *p, const json_t *v, int t, UtilLoc loc)
{
    json_t *sh;
    IrDeclared dec = { .loc = loc };
    FeJPath sp = FE_JKEY(p, "shape");
    if (read_dtype(r, p, v, &dec.dtype) || fe_jmember(&r->s, p, v, "shape", 0, &sh) ||
        (sh && fe_jshape(&r->s, &sp, sh, 1, &dec.shape)))
        return -1;
    dec.has_shape = sh != NULL;
    if (!dec.dtype && !dec.has_shape)
        return 0;
    IrDeclared *d = ir_alloc(r->g, sizeof *d);
    if (!d)
        return fe_jerr(&r->s, p, 0, "out of memory");
    *d = dec;
    r->g->tensors[t].declared = d;
    return 0;
}

static int read_output(Rd *r, const FeJPath *p, const json_t *v, UtilLoc loc)
{
    const char *name;
    FeJPath np = FE_JKEY(p, "name");
    if (fe_jobject(&r->s, p, v, output_keys, "a graph output") || read_name(r, p, v, "name", &name))
        return -1;
    int t = ir_find_tensor(r->g, name);
    if (t < 0)
        return fe_jerr(&r->s, &np, 0, "graph output '%s' is not a graph input, an initializer or a node output",
                       name);
    for (int i = 0; i < r->g->n_outputs; i++)
        if (r->g->outputs[i] == t)
            return fe_jerr(&r->s, &np, 0, "graph output '%s' is listed twice", name);
    if (read_declared(r, p, v, t, loc))
        return -1;
    if (ir_add_output(r->g, t))
        return fe_jerr(&r->s, p, 0, "out of memory");
    return 0;
}

/* ---- entry points ---- */

static int read_graph(Rd *r, const json_t *root)
{
    if (read_header(r, root) || open_weights(r, root) ||
        each_element(r, root, "inputs", 1, read_input) || check_overrides(r) ||
        each_element(r, root, "initializers", 0, read_initializer) ||
        each_element(r, root, "nodes", 1, read_node) || check_produced(r) ||
        each_element(r, root, "outputs", 1, read_output))
        return -1;
    if (r->g->n_outputs == 0) {
        FeJPath op = FE_JKEY(&ROOT, "outputs");
        return fe_jerr(&r->s, &op, 0, "the graph has no outputs");
    }
    return 0;
}

static int is_blank(const char *t, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (t[i] != ' ' && t[i] != '\t' && t[i] != '\n' && t[i] != '\r')
            return 0;
    return 1;
}

IrGraph *fe_load_json(const char *path, const char *text, size_t len, const FeOptions *opt, UtilDiag *d)
{
    if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0) {     /* UTF-8 byte order mark */
        text += 3;
        len -= 3;
    }
    if (is_blank(text, len)) {
        util_error(d, util_loc_line(path, 1, 1), "the model file is empty");
        return NULL;
    }
    Rd r = { .s = { path, text, len, -1, d }, .opt = opt };
    json_t *root = fe_json_parse(&r.s);
    if (!root)
        return NULL;
    r.g = ir_graph_new("model", path);
    if (!r.g) {
        json_decref(root);
        util_error(d, util_loc_file(path), "out of memory");
        return NULL;
    }
    fe_line_counter_init(&r.lc, text);
    int rc = read_graph(&r, root);
    json_decref(root);
    if (r.has_st)
        fe_st_close(&r.st);
    if (rc || fe_upgrade(r.g, d)) {
        ir_graph_free(r.g);
        return NULL;
    }
    return r.g;
}

int fe_check_declared_outputs(const IrGraph *g, UtilDiag *d)
{
    for (int o = 0; o < g->n_outputs; o++) {
        const IrTensor *t = &g->tensors[g->outputs[o]];
        const IrDeclared *dec = t->declared;
        if (!dec || !t->shape_known)
            continue;
        if (dec->dtype != IR_DT_UNDEF && dec->dtype != t->v.dtype)
            return util_error(d, dec->loc, "graph output '%s' is declared %s but the graph computes %s", t->name,
                              ir_dtype_name(dec->dtype), ir_dtype_name(t->v.dtype));
        int same = !dec->has_shape || dec->shape.rank == t->v.shape.rank;
        for (int i = 0; same && dec->has_shape && i < dec->shape.rank; i++)
            same = dec->shape.dims[i] < 0 || dec->shape.dims[i] == t->v.shape.dims[i];
        if (!same) {
            char s1[128], s2[128];
            ir_shape_str(&dec->shape, s1, sizeof s1);
            ir_shape_str(&t->v.shape, s2, sizeof s2);
            return util_error(d, dec->loc, "graph output '%s' is declared with shape %s but the graph computes %s",
                              t->name, s1, s2);
        }
    }
    return 0;
}
