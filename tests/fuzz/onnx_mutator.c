/* tests/fuzz/onnx_mutator.c — libFuzzer custom mutator for fuzz_onnx: a
 * structure-aware mutation of an ONNX model (docs/fuzzing.md).  Byte flips
 * rarely survive the protobuf parser, so most mutations here unpack the input
 * as a ModelProto (protobuf-c), change one to three things a hostile or broken
 * exporter could produce, and pack it again:
 *   - an attribute's value (interesting integers, floats, list lengths, strings,
 *     or its declared type);
 *   - a dimension of a graph input/output/value_info or of an initializer;
 *   - an element type (inputs, initializers, Cast's `to`);
 *   - a dropped initializer, node or node input;
 *   - an edge rewired to another tensor name (or to "" = absent);
 *   - the opset version, or a node's operator.
 * One call in four, and every input that does not parse, gets libFuzzer's own
 * byte mutation.  DLCC_FUZZ_BYTES_ONLY=1 makes every call a byte mutation (to
 * compare the two). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/onnx.pb-c.h"

size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);

typedef struct Rng {
    uint64_t s;
} Rng;

static uint64_t next(Rng *r)
{
    r->s ^= r->s << 13;
    r->s ^= r->s >> 7;
    r->s ^= r->s << 17;
    return r->s;
}

static size_t pick(Rng *r, size_t n) { return n ? (size_t)(next(r) % n) : 0; }

static int64_t interesting_int(Rng *r)
{
    static const int64_t v[] = { 0, 1, -1, 2, 3, 4, 7, 8, 16, 64, 255, 256, 65535, INT32_MAX, INT32_MIN,
                                 (int64_t)1 << 31, (int64_t)1 << 32, (int64_t)1 << 62, -((int64_t)1 << 62),
                                 INT64_MAX, INT64_MIN };
    return pick(r, 3) ? v[pick(r, sizeof v / sizeof v[0])] : (int64_t)pick(r, 17) - 8;
}

static float interesting_float(Rng *r)
{
    static const float v[] = { 0.0f, -0.0f, 1.0f, -1.0f, 0.5f, 1e-30f, 1e30f, 3.4e38f, 1.0f / 0.0f, -1.0f / 0.0f,
                               0.0f / 0.0f, 1e-45f };
    return v[pick(r, sizeof v / sizeof v[0])];
}

/* Replaces an owned string (protobuf-c's default empty string is not owned). */
static void set_str(char **p, const char *v)
{
    char *c = strdup(v);
    if (!c)
        return;
    if (*p && *p != protobuf_c_empty_string)
        free(*p);
    *p = c;
}

static void set_bytes(ProtobufCBinaryData *b, protobuf_c_boolean *has, const char *v)
{
    size_t n = strlen(v);
    uint8_t *c = malloc(n + 1);
    if (!c)
        return;
    memcpy(c, v, n + 1);
    free(b->data);
    b->data = c;
    b->len = n;
    if (has)
        *has = 1;
}

static void mutate_attr(Onnx__AttributeProto *a, Rng *r)
{
    static const char *const strs[] = { "", "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID", "linear", "nearest",
                                        "cubic", "constant", "reflect", "edge", "wrap", "tanh", "none", "mean",
                                        "sum", "max", "min", "add", "mul", "half_pixel", "asymmetric",
                                        "align_corners", "round_prefer_floor", "ceil", "floor", "DCR", "CRD",
                                        "relu", "sigmoid", "x\xff\xfe" };
    switch (pick(r, 8)) {
    case 0:
        a->has_i = 1;
        a->i = interesting_int(r);
        break;
    case 1:
        if (a->n_ints)
            a->ints[pick(r, a->n_ints)] = interesting_int(r);
        else
            a->has_i = 1, a->i = interesting_int(r);
        break;
    case 2:
        a->n_ints = pick(r, a->n_ints + 1);        /* a shorter list (the array stays owned) */
        a->n_floats = pick(r, a->n_floats + 1);
        break;
    case 3:
        a->has_f = 1;
        a->f = interesting_float(r);
        if (a->n_floats)
            a->floats[pick(r, a->n_floats)] = interesting_float(r);
        break;
    case 4:
        set_bytes(&a->s, &a->has_s, strs[pick(r, sizeof strs / sizeof strs[0])]);
        break;
    case 5:
        a->has_type = 1;
        a->type = (Onnx__AttributeProto__AttributeType)pick(r, 15);
        break;
    case 6:
        set_str(&a->name, pick(r, 2) ? "axis" : "axes");
        break;
    default:
        if (a->t && a->t->n_dims)
            a->t->dims[pick(r, a->t->n_dims)] = interesting_int(r);
        else
            a->has_i = 1, a->i = interesting_int(r);
        break;
    }
}

static Onnx__TypeProto__Tensor *tensor_type(Onnx__ValueInfoProto *v)
{
    if (!v || !v->type || v->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE)
        return NULL;
    return v->type->tensor_type;
}

static Onnx__ValueInfoProto *pick_value_info(Onnx__GraphProto *g, Rng *r)
{
    size_t n = g->n_input + g->n_output + g->n_value_info, k = pick(r, n);
    if (!n)
        return NULL;
    if (k < g->n_input)
        return g->input[k];
    k -= g->n_input;
    return k < g->n_output ? g->output[k] : g->value_info[k - g->n_output];
}

static void mutate_dim(Onnx__GraphProto *g, Rng *r)
{
    if (g->n_initializer && pick(r, 2)) {
        Onnx__TensorProto *t = g->initializer[pick(r, g->n_initializer)];
        if (t->n_dims && pick(r, 4))
            t->dims[pick(r, t->n_dims)] = interesting_int(r);
        else
            t->n_dims = pick(r, t->n_dims + 1);
        return;
    }
    Onnx__TypeProto__Tensor *tt = tensor_type(pick_value_info(g, r));
    if (!tt || !tt->shape || !tt->shape->n_dim)
        return;
    if (!pick(r, 5)) {                                  /* fewer dims (the array stays owned) */
        size_t keep = pick(r, tt->shape->n_dim);
        while (tt->shape->n_dim > keep)
            protobuf_c_message_free_unpacked(&tt->shape->dim[--tt->shape->n_dim]->base, NULL);
        return;
    }
    Onnx__TensorShapeProto__Dimension *dm = tt->shape->dim[pick(r, tt->shape->n_dim)];
    if (dm->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM) {
        if (dm->dim_param && dm->dim_param != protobuf_c_empty_string)
            free(dm->dim_param);
        dm->dim_param = NULL;
    }
    if (pick(r, 4)) {
        dm->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
        dm->dim_value = interesting_int(r);
    } else {
        dm->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
        dm->dim_param = strdup(pick(r, 2) ? "N" : "batch");
        if (!dm->dim_param)
            dm->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE__NOT_SET;
    }
}

static void mutate_dtype(Onnx__GraphProto *g, Rng *r)
{
    int32_t dt = (int32_t)pick(r, 27);      /* ONNX's element types are 1..26; 0 is UNDEFINED */
    size_t which = pick(r, 3);
    if (which == 0 && g->n_initializer) {
        Onnx__TensorProto *t = g->initializer[pick(r, g->n_initializer)];
        t->has_data_type = 1;
        t->data_type = dt;
    } else if (which == 1 && g->n_node) {
        Onnx__NodeProto *n = g->node[pick(r, g->n_node)];
        for (size_t k = 0; k < n->n_attribute; k++)
            if (n->attribute[k]->name && strcmp(n->attribute[k]->name, "to") == 0)
                n->attribute[k]->i = dt;
    } else {
        Onnx__TypeProto__Tensor *tt = tensor_type(pick_value_info(g, r));
        if (tt) {
            tt->has_elem_type = 1;
            tt->elem_type = dt;
        }
    }
}

/* Some tensor name of g: a graph input, an initializer or a node output. */
static const char *some_name(const Onnx__GraphProto *g, Rng *r)
{
    size_t outs = 0;
    for (size_t i = 0; i < g->n_node; i++)
        outs += g->node[i]->n_output;
    size_t k = pick(r, g->n_input + g->n_initializer + outs + 1);
    if (k < g->n_input)
        return g->input[k]->name;
    k -= g->n_input;
    if (k < g->n_initializer)
        return g->initializer[k]->name;
    k -= g->n_initializer;
    for (size_t i = 0; i < g->n_node; i++) {
        if (k < g->node[i]->n_output)
            return g->node[i]->output[k];
        k -= g->node[i]->n_output;
    }
    return "";                              /* an absent optional input */
}

static void mutate_edge(Onnx__GraphProto *g, Rng *r)
{
    if (!g->n_node)
        return;
    Onnx__NodeProto *n = g->node[pick(r, g->n_node)];
    const char *name = some_name(g, r);
    char **slot;
    if (pick(r, 5) && n->n_input)
        slot = &n->input[pick(r, n->n_input)];
    else if (n->n_output)
        slot = &n->output[pick(r, n->n_output)];    /* a second definition, or a cycle */
    else
        return;
    if (name && *slot != name)
        set_str(slot, name);
}

static void drop_one(Onnx__GraphProto *g, Rng *r)
{
    switch (pick(r, 3)) {
    case 0:
        if (g->n_initializer) {
            size_t k = pick(r, g->n_initializer);
            Onnx__TensorProto *t = g->initializer[k];
            g->initializer[k] = g->initializer[--g->n_initializer];
            onnx__tensor_proto__free_unpacked(t, NULL);
        }
        break;
    case 1:
        if (g->n_node > 1) {
            size_t k = pick(r, g->n_node);
            Onnx__NodeProto *n = g->node[k];
            memmove(g->node + k, g->node + k + 1, (g->n_node - k - 1) * sizeof *g->node);
            g->n_node--;
            onnx__node_proto__free_unpacked(n, NULL);
        }
        break;
    default:
        if (g->n_node) {
            Onnx__NodeProto *n = g->node[pick(r, g->n_node)];
            if (n->n_input) {
                n->n_input--;
                if (n->input[n->n_input] != protobuf_c_empty_string)
                    free(n->input[n->n_input]);
            }
        }
        break;
    }
}

static void mutate_op(Onnx__ModelProto *m, Onnx__GraphProto *g, Rng *r)
{
    static const char *const ops[] = { "Conv", "MatMul", "Gemm", "Add", "Mul", "Relu", "Reshape", "Transpose",
                                       "Concat", "Slice", "Gather", "Resize", "MaxPool", "AveragePool", "Softmax",
                                       "ReduceMean", "Squeeze", "Unsqueeze", "Expand", "Pad", "Split", "Cast",
                                       "LSTM", "GRU", "ConvTranspose", "BatchNormalization", "LayerNormalization",
                                       "Where", "TopK", "NonZero", "Unique", "Einsum", "Tile", "Range",
                                       "ScatterND", "GatherElements", "DepthToSpace", "Flatten", "Identity",
                                       "Upsample", "Attention", "NoSuchOp" };
    if (pick(r, 2) && m->n_opset_import) {
        Onnx__OperatorSetIdProto *o = m->opset_import[pick(r, m->n_opset_import)];
        o->has_version = 1;
        o->version = pick(r, 4) ? (int64_t)pick(r, 26) : interesting_int(r);
    } else if (g->n_node) {
        set_str(&g->node[pick(r, g->n_node)]->op_type, ops[pick(r, sizeof ops / sizeof ops[0])]);
    }
}

static void mutate_model(Onnx__ModelProto *m, Rng *r)
{
    Onnx__GraphProto *g = m->graph;
    switch (pick(r, 7)) {
    case 0:
    case 1: {
        Onnx__NodeProto *n = g->n_node ? g->node[pick(r, g->n_node)] : NULL;
        if (n && n->n_attribute)
            mutate_attr(n->attribute[pick(r, n->n_attribute)], r);
        else
            mutate_dim(g, r);
        break;
    }
    case 2:
        mutate_dim(g, r);
        break;
    case 3:
        mutate_dtype(g, r);
        break;
    case 4:
        mutate_edge(g, r);
        break;
    case 5:
        drop_one(g, r);
        break;
    default:
        mutate_op(m, g, r);
        break;
    }
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
    static int bytes_only = -1;
    if (bytes_only < 0) {
        const char *e = getenv("DLCC_FUZZ_BYTES_ONLY");
        bytes_only = e && *e && strcmp(e, "0") != 0;
    }
    Rng r = { (uint64_t)seed * 0x9E3779B97F4A7C15ull | 1 };
    if (bytes_only || !pick(&r, 4))
        return LLVMFuzzerMutate(data, size, max_size);
    Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, size, data);
    if (!m || !m->graph) {
        if (m)
            onnx__model_proto__free_unpacked(m, NULL);
        return LLVMFuzzerMutate(data, size, max_size);
    }
    for (size_t k = 1 + pick(&r, 3); k > 0; k--)
        mutate_model(m, &r);
    size_t n = onnx__model_proto__get_packed_size(m);
    if (n <= max_size)
        onnx__model_proto__pack(m, data);
    onnx__model_proto__free_unpacked(m, NULL);
    return n <= max_size ? n : LLVMFuzzerMutate(data, size, max_size);
}
