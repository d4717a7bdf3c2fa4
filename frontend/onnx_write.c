/* frontend/onnx_write.c — an inferred graph as an ONNX model (protobuf-c):
 * what `dlcc quantize` writes.  The IR holds the newest ONNX semantics, so
 * the model imports the default domain at opset 21 (IR version 10).  Live
 * nodes in graph order; every constant (initializer or value known at
 * compile time that a live node reads) an initializer with raw data; the
 * graph's inputs and outputs with their dtypes and shapes. */
#include "frontend/onnx_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OUT_OPSET 21
#define OUT_IR_VERSION 10

typedef struct W {
    UtilArena a;
    const IrGraph *g;
    int oom;
} W;

static void *walloc(W *w, size_t n)
{
    void *p = util_arena_alloc(&w->a, n ? n : 1);
    if (!p)
        w->oom = 1;
    return p;
}

static char *wstr(W *w, const char *s)
{
    char *p = util_arena_strdup(&w->a, s ? s : "");
    if (!p)
        w->oom = 1;
    return p;
}

static Onnx__TensorProto *tensor(W *w, const char *name, const IrArray *v)
{
    Onnx__TensorProto *t = walloc(w, sizeof *t);
    if (!t)
        return NULL;
    onnx__tensor_proto__init(t);
    t->name = wstr(w, name);
    t->n_dims = (size_t)v->shape.rank;
    t->dims = walloc(w, sizeof *t->dims * (size_t)(v->shape.rank ? v->shape.rank : 1));
    for (int i = 0; t->dims && i < v->shape.rank; i++)
        t->dims[i] = v->shape.dims[i];
    t->has_data_type = 1;
    t->data_type = ir_dtype_to_onnx(v->dtype);
    t->has_raw_data = 1;
    t->raw_data.len = ir_array_bytes(v);
    t->raw_data.data = (uint8_t *)v->data;   /* packed, not owned */
    return t;
}

static Onnx__ValueInfoProto *value_info(W *w, int ti)
{
    const IrTensor *x = &w->g->tensors[ti];
    Onnx__ValueInfoProto *vi = walloc(w, sizeof *vi);
    Onnx__TypeProto *tp = walloc(w, sizeof *tp);
    Onnx__TypeProto__Tensor *tt = walloc(w, sizeof *tt);
    Onnx__TensorShapeProto *sh = walloc(w, sizeof *sh);
    Onnx__TensorShapeProto__Dimension **dims = walloc(w, sizeof *dims * (size_t)(x->v.shape.rank + 1));
    if (!vi || !tp || !tt || !sh || !dims)
        return NULL;
    onnx__value_info_proto__init(vi);
    onnx__type_proto__init(tp);
    onnx__type_proto__tensor__init(tt);
    onnx__tensor_shape_proto__init(sh);
    for (int i = 0; i < x->v.shape.rank; i++) {
        if (!(dims[i] = walloc(w, sizeof *dims[i])))
            return NULL;
        onnx__tensor_shape_proto__dimension__init(dims[i]);
        dims[i]->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
        dims[i]->dim_value = x->v.shape.dims[i];
    }
    sh->n_dim = (size_t)x->v.shape.rank;
    sh->dim = dims;
    tt->has_elem_type = 1;
    tt->elem_type = ir_dtype_to_onnx(x->v.dtype);
    tt->shape = sh;
    tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    tp->tensor_type = tt;
    vi->name = wstr(w, x->name);
    vi->type = tp;
    return vi;
}

static Onnx__AttributeProto *attribute(W *w, const IrAttr *at)
{
    Onnx__AttributeProto *p = walloc(w, sizeof *p);
    if (!p)
        return NULL;
    onnx__attribute_proto__init(p);
    p->name = wstr(w, ir_attr_name(at->key));
    p->has_type = 1;
    switch (at->kind) {
    case IR_AK_INT:
        p->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
        p->has_i = 1;
        p->i = at->v.i;
        break;
    case IR_AK_FLOAT:
        p->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT;
        p->has_f = 1;
        p->f = (float)at->v.f;
        break;
    case IR_AK_STRING:
        p->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING;
        p->has_s = 1;
        p->s.data = (uint8_t *)wstr(w, at->v.s);
        p->s.len = at->v.s ? strlen(at->v.s) : 0;
        break;
    case IR_AK_INTS:
        p->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
        p->n_ints = (size_t)at->n;
        p->ints = at->v.ints;
        break;
    case IR_AK_FLOATS:
        p->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS;
        p->n_floats = (size_t)at->n;
        p->floats = walloc(w, sizeof *p->floats * (size_t)(at->n ? at->n : 1));
        for (int i = 0; p->floats && i < at->n; i++)
            p->floats[i] = (float)at->v.floats[i];
        break;
    case IR_AK_STRINGS:
        p->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS;
        p->n_strings = (size_t)at->n;
        p->strings = walloc(w, sizeof *p->strings * (size_t)(at->n ? at->n : 1));
        for (int i = 0; p->strings && i < at->n; i++) {
            p->strings[i].data = (uint8_t *)wstr(w, at->v.strings[i]);
            p->strings[i].len = strlen(at->v.strings[i]);
        }
        break;
    case IR_AK_TENSOR:
        p->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR;
        p->t = tensor(w, "", at->v.tensor);
        break;
    default:
        return NULL;
    }
    return p;
}

/* A tensor written as an initializer: its value known, no live node
 * making it (a value propagated from a node that stays is that node's). */
static int constant(const IrGraph *g, int t)
{
    const IrTensor *x = &g->tensors[t];
    return x->v.data && x->kind != IR_TK_INPUT && (x->producer < 0 || g->nodes[x->producer].dead);
}

/* ONNX wants node names unique in the graph: `name`, or `name_i` when an
 * earlier node has it (a pass names the nodes it adds after a tensor). */
static char *node_name(W *w, Onnx__NodeProto *const *done, size_t n, const char *name, int i)
{
    int taken = 0;
    for (size_t k = 0; k < n && !taken; k++)
        taken = strcmp(done[k]->name, name) == 0;
    if (!taken)
        return wstr(w, name);
    size_t l = strlen(name) + 24;
    char *s = walloc(w, l);
    if (s)
        snprintf(s, l, "%s_%d", name, i);
    return s;
}

int fe_write_onnx(const IrGraph *g, UtilBuf *out, UtilDiag *d)
{
    W w = { .g = g };
    util_arena_init(&w.a);
    Onnx__ModelProto m;
    Onnx__GraphProto gp;
    Onnx__OperatorSetIdProto op;
    Onnx__OperatorSetIdProto *ops[1] = { &op };
    onnx__model_proto__init(&m);
    onnx__graph_proto__init(&gp);
    onnx__operator_set_id_proto__init(&op);
    op.domain = wstr(&w, "");
    op.has_version = 1;
    op.version = OUT_OPSET;
    m.has_ir_version = 1;
    m.ir_version = OUT_IR_VERSION;
    m.producer_name = wstr(&w, "dlcc");
    m.n_opset_import = 1;
    m.opset_import = ops;
    m.graph = &gp;
    gp.name = wstr(&w, g->name ? g->name : "model");
    /* the constants live nodes read, each once */
    char *is_init = calloc((size_t)g->n_tensors + 1, 1);
    gp.node = walloc(&w, sizeof *gp.node * (size_t)(g->n_nodes + 1));
    gp.initializer = walloc(&w, sizeof *gp.initializer * (size_t)(g->n_tensors + 1));
    if (!is_init || !gp.node || !gp.initializer)
        w.oom = 1;
    for (int i = 0; !w.oom && i < g->n_nodes; i++) {
        const IrNode *n = &g->nodes[i];
        if (n->dead)
            continue;
        Onnx__NodeProto *np = walloc(&w, sizeof *np);
        if (!np)
            break;
        onnx__node_proto__init(np);
        np->op_type = wstr(&w, ir_op_name(n->op));
        np->name = node_name(&w, gp.node, gp.n_node, n->name && *n->name ? n->name : ir_op_name(n->op), i);
        np->n_input = (size_t)n->n_in;
        np->input = walloc(&w, sizeof *np->input * (size_t)(n->n_in + 1));
        np->n_output = (size_t)n->n_out;
        np->output = walloc(&w, sizeof *np->output * (size_t)(n->n_out + 1));
        np->n_attribute = (size_t)n->n_attrs;
        np->attribute = walloc(&w, sizeof *np->attribute * (size_t)(n->n_attrs + 1));
        if (!np->input || !np->output || !np->attribute)
            break;
        for (int k = 0; k < n->n_in; k++) {
            int t = n->in[k];
            np->input[k] = wstr(&w, t >= 0 ? g->tensors[t].name : "");
            if (t >= 0 && constant(g, t) && !is_init[t]) {
                is_init[t] = 1;
                gp.initializer[gp.n_initializer++] = tensor(&w, g->tensors[t].name, &g->tensors[t].v);
            }
        }
        for (int k = 0; k < n->n_out; k++)
            np->output[k] = wstr(&w, n->out[k] >= 0 ? g->tensors[n->out[k]].name : "");
        for (int k = 0; k < n->n_attrs; k++)
            if (!(np->attribute[k] = attribute(&w, &n->attrs[k])))
                w.oom = 1;
        gp.node[gp.n_node++] = np;
    }
    gp.input = walloc(&w, sizeof *gp.input * (size_t)(g->n_inputs + 1));
    gp.output = walloc(&w, sizeof *gp.output * (size_t)(g->n_outputs + 1));
    for (int i = 0; gp.input && i < g->n_inputs; i++)
        if (!(gp.input[gp.n_input++] = value_info(&w, g->inputs[i])))
            w.oom = 1;
    for (int i = 0; gp.output && i < g->n_outputs; i++) {
        int t = g->outputs[i];
        if (constant(g, t) && !is_init[t]) {
            is_init[t] = 1;                /* an output known at compile time */
            gp.initializer[gp.n_initializer++] = tensor(&w, g->tensors[t].name, &g->tensors[t].v);
        }
        if (!(gp.output[gp.n_output++] = value_info(&w, t)))
            w.oom = 1;
    }
    for (size_t i = 0; i < gp.n_initializer; i++)
        if (!gp.initializer[i])
            w.oom = 1;
    int rc = 0;
    if (w.oom || !gp.input || !gp.output) {
        rc = util_error(d, util_loc_file(g->file), "out of memory while writing the ONNX model");
    } else {
        size_t n = onnx__model_proto__get_packed_size(&m);
        uint8_t *buf = malloc(n ? n : 1);
        if (!buf)
            rc = util_error(d, util_loc_file(g->file), "out of memory while writing the ONNX model");
        else {
            onnx__model_proto__pack(&m, buf);
            util_buf_put(out, buf, n);
            free(buf);
            if (out->oom)
                rc = util_error(d, util_loc_file(g->file), "out of memory while writing the ONNX model");
        }
    }
    free(is_init);
    util_arena_free(&w.a);
    return rc;
}
