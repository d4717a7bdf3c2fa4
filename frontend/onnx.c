/* frontend/onnx.c — ONNX ModelProto → graph IR.
 *
 * protobuf-c (code generated from the system's onnx.proto) decodes the
 * bytes; this file maps the decoded model into the IR: opsets, initializers,
 * graph inputs/outputs, nodes with typed attributes.  Legacy operator forms
 * are rewritten afterwards by fe_upgrade (upgrade.c), except Upsample, which
 * is read directly as the equivalent Resize.
 */
#include "frontend/onnx_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Newest default-domain opset accepted: the IR holds opset-21 semantics;
 * opsets 22 to 24 widened type lists (bfloat16, float4, float8e8m0, which
 * dlcc rejects as dtypes) and added operators, which the op table names
 * individually (an operator dlcc lacks is an error naming it). */
#define FE_ONNX_MAX_OPSET IR_MAX_OPSET

typedef struct Reader {
    const char *path;
    IrGraph *g;
    UtilDiag *d;
    UtilLoc loc;
    const FeOptions *opt;
} Reader;

static const char *str_or(const char *s, const char *dflt) { return s && *s ? s : dflt; }

/* "'name'" or "#index" for a node in messages. */
static void node_label(const Onnx__NodeProto *np, size_t idx, char *buf, size_t n)
{
    if (np->name && np->name[0])
        snprintf(buf, n, "'%.200s'", np->name);
    else
        snprintf(buf, n, "#%zu", idx);
}

static int is_default_domain(const char *dom) { return !dom || !*dom || strcmp(dom, "ai.onnx") == 0; }

/* ------------------------------------------------------------- opsets */

static int read_opset(Reader *r, const Onnx__ModelProto *m)
{
    int found = 0;
    int64_t v = 1;
    for (size_t i = 0; i < m->n_opset_import; i++) {
        const Onnx__OperatorSetIdProto *o = m->opset_import[i];
        if (!is_default_domain(o->domain))
            continue;
        v = o->has_version ? o->version : 0;
        found = 1;
    }
    if (!found && m->n_opset_import > 0)
        v = 0;                         /* no default-domain import: any default-domain node is an error */
    if (found && (v < 1 || v > FE_ONNX_MAX_OPSET))
        return util_error(r->d, r->loc, "the model imports ONNX opset %lld, which is not implemented: dlcc reads "
                          "opsets 1 to %d",
                          (long long)v, FE_ONNX_MAX_OPSET);
    r->g->opset = (int)v;              /* IR version < 3 has no opset_import: opset 1 */
    return 0;
}

/* ------------------------------------------------------ value types */

/* Reads a ValueInfo's tensor type.  Unknown (symbolic or absent) dims become
 * 1, or the --input-shape override when `override` is given. */
static int read_value_type(Reader *r, const Onnx__ValueInfoProto *vi, const char *what,
                           const FeShapeOverride *ov, IrDType *dt, IrShape *shape)
{
    const char *name = str_or(vi->name, "");
    const Onnx__TypeProto *tp = vi->type;
    if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type)
        return util_error(r->d, r->loc, "%s '%s' is not a tensor (sequences, maps, optionals and sparse "
                          "tensors are not supported)", what, name);
    const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
    int et = tt->has_elem_type ? tt->elem_type : 0;
    *dt = ir_dtype_from_onnx(et);
    if (*dt == IR_DT_UNDEF)
        return util_error(r->d, r->loc, "%s '%s' has element type %s (%d), which dlcc does not support", what,
                          name, fe_onnx_dtype_name(et), et);
    const Onnx__TensorShapeProto *sp = tt->shape;
    if (!sp && !ov)
        return util_error(r->d, r->loc, "%s '%s' has no shape; give it with --input-shape %s=d0,d1,...", what,
                          name, name);
    if (sp && sp->n_dim > IR_MAX_RANK)
        return util_error(r->d, r->loc, "%s '%s' has rank %zu; at most %d is supported", what, name, sp->n_dim,
                          IR_MAX_RANK);
    if (sp && ov && (size_t)ov->shape.rank != sp->n_dim)
        return util_error(r->d, r->loc, "--input-shape gives %s '%s' rank %d, but the model declares rank %zu",
                          what, name, ov->shape.rank, sp->n_dim);
    IrShape s = { .rank = sp ? (int)sp->n_dim : ov->shape.rank };
    for (int i = 0; i < s.rank; i++) {
        const Onnx__TensorShapeProto__Dimension *dm = sp ? sp->dim[i] : NULL;
        int known = dm && dm->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
        if (known && dm->dim_value < 0)
            return util_error(r->d, r->loc, "%s '%s' has a negative dimension (%lld)", what, name,
                              (long long)dm->dim_value);
        if (known && ov && ov->shape.dims[i] != dm->dim_value)
            return util_error(r->d, r->loc, "--input-shape gives %s '%s' dimension %d = %lld, but the model "
                              "declares %lld", what, name, i, (long long)ov->shape.dims[i],
                              (long long)dm->dim_value);
        s.dims[i] = known ? dm->dim_value : ov ? ov->shape.dims[i] : 1;
        if (s.dims[i] < 0)
            return util_error(r->d, r->loc, "%s '%s' has a negative dimension (%lld)", what, name,
                              (long long)s.dims[i]);
    }
    if (ir_shape_numel(&s) < 0)
        return util_error(r->d, r->loc, "%s '%s' has too many elements (the product of its dimensions "
                          "overflows the limit of %lld)", what, name, (long long)IR_MAX_ELEMENTS);
    *shape = s;
    return 0;
}

/* ------------------------------------------------------ initializers, inputs */

static int read_initializers(Reader *r, const Onnx__GraphProto *gp)
{
    if (gp->n_sparse_initializer)
        return util_error(r->d, r->loc, "sparse initializers are not supported");
    for (size_t i = 0; i < gp->n_initializer; i++) {
        const Onnx__TensorProto *tp = gp->initializer[i];
        const char *name = str_or(tp->name, "");
        char what[300];
        snprintf(what, sizeof what, "initializer '%.200s'", name);
        if (!*name)
            return util_error(r->d, r->loc, "initializer #%zu has no name", i);
        IrArray a;
        if (fe_onnx_tensor(tp, r->path, what, r->g, &a, r->d))
            return -1;
        int t = ir_add_tensor(r->g, name, IR_TK_CONST, r->loc, r->d);
        if (t < 0)
            return -1;
        r->g->tensors[t].v = a;
        r->g->tensors[t].shape_known = 1;
    }
    return 0;
}

static const FeShapeOverride *find_override(const FeOptions *opt, const char *name)
{
    for (int i = 0; opt && i < opt->n_shapes; i++)
        if (opt->shapes[i].name && strcmp(opt->shapes[i].name, name) == 0)
            return &opt->shapes[i];
    return NULL;
}

/* Graph inputs that are also initializers are constants (IR version < 4
 * lists every initializer as an input; later versions use this for default
 * values, which a compiler with static weights also treats as constants). */
static int read_inputs(Reader *r, const Onnx__GraphProto *gp)
{
    for (size_t i = 0; i < gp->n_input; i++) {
        const Onnx__ValueInfoProto *vi = gp->input[i];
        const char *name = str_or(vi->name, "");
        if (!*name)
            return util_error(r->d, r->loc, "graph input #%zu has no name", i);
        int t = ir_find_tensor(r->g, name);
        if (t >= 0 && r->g->tensors[t].kind == IR_TK_CONST)
            continue;
        IrDType dt = IR_DT_UNDEF;
        IrShape s = { 0 };
        if (read_value_type(r, vi, "graph input", find_override(r->opt, name), &dt, &s))
            return -1;
        if ((t = ir_add_tensor(r->g, name, IR_TK_INPUT, r->loc, r->d)) < 0)
            return -1;
        ir_set_type(r->g, t, dt, &s);
        if (ir_add_input(r->g, t))
            return util_error(r->d, r->loc, "out of memory");
    }
    for (int i = 0; r->opt && i < r->opt->n_shapes; i++) {
        const char *nm = r->opt->shapes[i].name ? r->opt->shapes[i].name : "";
        int t = ir_find_tensor(r->g, nm);
        if (t < 0 || r->g->tensors[t].kind != IR_TK_INPUT)
            return util_error(r->d, r->loc, "--input-shape names '%s', which is not a graph input", nm);
    }
    /* value_info: types of intermediate values.  The IR infers them; they are
     * only checked here for well-formedness. */
    for (size_t i = 0; i < gp->n_value_info; i++) {
        const Onnx__ValueInfoProto *vi = gp->value_info[i];
        const Onnx__TypeProto *tp = vi->type;
        if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type)
            continue;
        const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
        if (tt->has_elem_type && tt->elem_type && ir_dtype_from_onnx(tt->elem_type) == IR_DT_UNDEF)
            return util_error(r->d, r->loc, "value_info '%s' has element type %s (%d), which dlcc does not "
                              "support", str_or(vi->name, ""), fe_onnx_dtype_name(tt->elem_type), tt->elem_type);
        for (size_t k = 0; tt->shape && k < tt->shape->n_dim; k++) {
            const Onnx__TensorShapeProto__Dimension *dm = tt->shape->dim[k];
            if (dm->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE && dm->dim_value < 0)
                return util_error(r->d, r->loc, "value_info '%s' has a negative dimension (%lld)",
                                  str_or(vi->name, ""), (long long)dm->dim_value);
        }
    }
    return 0;
}

/* ------------------------------------------------------------ attributes */

/* The attribute's type; IR version 1 files have no type field, so it is
 * deduced from which value is present. */
static Onnx__AttributeProto__AttributeType attr_type(const Onnx__AttributeProto *a)
{
    if (a->has_type && a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__UNDEFINED)
        return a->type;
    if (a->has_f) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT;
    if (a->has_i) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
    if (a->has_s) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING;
    if (a->t) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR;
    if (a->g) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH;
    if (a->sparse_tensor) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSOR;
    if (a->n_floats) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS;
    if (a->n_ints) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
    if (a->n_strings) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS;
    if (a->n_tensors) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSORS;
    if (a->n_graphs) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPHS;
    return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__UNDEFINED;
}

static int is_subgraph_attr(const Onnx__AttributeProto *a)
{
    Onnx__AttributeProto__AttributeType t = attr_type(a);
    return t == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH || t == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPHS;
}

static IrAttrKind attr_kind(Onnx__AttributeProto__AttributeType t)
{
    switch (t) {
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT:   return IR_AK_FLOAT;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT:     return IR_AK_INT;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING:  return IR_AK_STRING;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR:  return IR_AK_TENSOR;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS:  return IR_AK_FLOATS;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS:    return IR_AK_INTS;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS: return IR_AK_STRINGS;
    default:                                             return IR_AK_NONE;
    }
}

static int is_list(IrAttrKind k) { return k == IR_AK_INTS || k == IR_AK_FLOATS || k == IR_AK_STRINGS; }

/* Scratch owned by one attribute conversion. */
typedef struct AttrTmp {
    double *floats;
    char **strings;
    int n_strings;
    IrArray tensor;
} AttrTmp;

static void attr_tmp_free(AttrTmp *t)
{
    free(t->floats);
    for (int i = 0; i < t->n_strings; i++)
        free(t->strings[i]);
    free(t->strings);
    free(t->tensor.data);
}

/* A protobuf bytes value as a C string (NUL inside is an error). */
static char *bytes_str(const ProtobufCBinaryData *b)
{
    if (b->len && memchr(b->data, 0, b->len))
        return NULL;
    char *s = malloc(b->len + 1);
    if (s) {
        if (b->len)
            memcpy(s, b->data, b->len);
        s[b->len] = 0;
    }
    return s;
}

static int set_node_attr(Reader *r, int node, const char *nl, const Onnx__AttributeProto *ap)
{
    IrGraph *g = r->g;
    IrOp op = g->nodes[node].op;
    const char *an = str_or(ap->name, "");
    if (ap->ref_attr_name && ap->ref_attr_name[0])
        return util_error(r->d, r->loc, "node %s (%s): attribute '%s' refers to a function attribute; functions "
                          "are not supported", nl, ir_op_name(op), an);
    IrAttrKey key = ir_attr_from_name(an);
    IrAttrKind want = key ? ir_op_attr_kind(op, key) : IR_AK_NONE;
    if (strcmp(an, "consumed_inputs") == 0 && want == IR_AK_NONE)
        return 0;       /* opset < 7 in-place hint on operators whose table omits it: no meaning */
    if (want == IR_AK_NONE)
        return util_error(r->d, r->loc, "node %s (%s): unknown attribute '%s' for %s", nl, ir_op_name(op), an,
                          ir_op_name(op));
    if (ir_has_attr(&g->nodes[node], key))
        return util_error(r->d, r->loc, "node %s (%s): attribute '%s' is given twice", nl, ir_op_name(op), an);
    Onnx__AttributeProto__AttributeType at = attr_type(ap);
    IrAttrKind got = attr_kind(at);
    if (is_subgraph_attr(ap))
        return util_error(r->d, r->loc, "node %s (%s): attribute '%s' is a subgraph; subgraphs are not supported",
                          nl, ir_op_name(op), an);
    if (at == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__UNDEFINED && is_list(want))
        got = want;                                         /* an empty list */
    else if (got == IR_AK_NONE)
        return util_error(r->d, r->loc, "node %s (%s): attribute '%s' has an unsupported type (%d)", nl,
                          ir_op_name(op), an, (int)at);
    /* legacy Cast-1: `to` as a type name */
    int64_t cast_to = 0;
    if (op == IR_OP_Cast && key == IR_A_to && got == IR_AK_STRING) {
        char *s = bytes_str(&ap->s);
        const ProtobufCEnumValue *e = s ? protobuf_c_enum_descriptor_get_value_by_name(
                                              &onnx__tensor_proto__data_type__descriptor, s) : NULL;
        free(s);
        if (!e)
            return util_error(r->d, r->loc, "node %s (Cast): attribute 'to' names no ONNX data type", nl);
        cast_to = e->value;
        got = IR_AK_INT;
    }
    size_t list_n = got == IR_AK_INTS ? ap->n_ints : got == IR_AK_FLOATS ? ap->n_floats :
                    got == IR_AK_STRINGS ? ap->n_strings : 0;
    if (got != want) {
        int ok = (want == IR_AK_FLOAT && got == IR_AK_INT) || (want == IR_AK_FLOATS && got == IR_AK_INTS) ||
                 (is_list(want) && is_list(got) && list_n == 0);
        if (!ok)
            return util_error(r->d, r->loc, "node %s (%s): attribute '%s' must be of type %s, not %s", nl,
                              ir_op_name(op), an, ir_attr_kind_name(want), ir_attr_kind_name(got));
    }
    if (list_n > (size_t)1 << 24)
        return util_error(r->d, r->loc, "node %s (%s): attribute '%s' has too many values", nl, ir_op_name(op), an);
    IrAttr a = { .key = key, .kind = want, .n = (int)list_n };
    AttrTmp tmp = { 0 };
    int rc = 0;
    switch (want) {
    case IR_AK_INT:
        a.v.i = op == IR_OP_Cast && key == IR_A_to && cast_to ? cast_to : ap->i;
        break;
    case IR_AK_FLOAT:
        a.v.f = got == IR_AK_INT ? (double)ap->i : (double)ap->f;
        break;
    case IR_AK_STRING:
        if (!(tmp.strings = calloc(1, sizeof(char *))) || !(tmp.strings[0] = bytes_str(&ap->s)))
            rc = util_error(r->d, r->loc, "node %s (%s): attribute '%s' contains a NUL byte", nl, ir_op_name(op), an);
        tmp.n_strings = tmp.strings && tmp.strings[0] ? 1 : 0;
        a.v.s = tmp.n_strings ? tmp.strings[0] : "";
        break;
    case IR_AK_INTS:
        a.v.ints = ap->ints;
        if (got != IR_AK_INTS)
            a.n = 0;
        break;
    case IR_AK_FLOATS:
        if (got == IR_AK_FLOATS || got == IR_AK_INTS) {
            tmp.floats = malloc((list_n ? list_n : 1) * sizeof(double));
            if (!tmp.floats) {
                rc = util_error(r->d, r->loc, "out of memory");
                break;
            }
            for (size_t k = 0; k < list_n; k++)
                tmp.floats[k] = got == IR_AK_INTS ? (double)ap->ints[k] : (double)ap->floats[k];
        } else {
            a.n = 0;
        }
        a.v.floats = tmp.floats;
        break;
    case IR_AK_STRINGS:
        if (got != IR_AK_STRINGS)
            a.n = 0;
        tmp.strings = calloc(list_n ? list_n : 1, sizeof(char *));
        for (size_t k = 0; tmp.strings && k < (size_t)a.n && !rc; k++) {
            if (!(tmp.strings[k] = bytes_str(&ap->strings[k])))
                rc = util_error(r->d, r->loc, "node %s (%s): attribute '%s' contains a NUL byte", nl,
                                ir_op_name(op), an);
            tmp.n_strings = (int)k + 1;
        }
        a.v.strings = (const char **)tmp.strings;
        break;
    case IR_AK_TENSOR: {
        char what[400];
        snprintf(what, sizeof what, "tensor of attribute '%.100s' of node %.200s", an, nl);
        if (!ap->t)
            rc = util_error(r->d, r->loc, "node %s (%s): attribute '%s' holds no tensor", nl, ir_op_name(op), an);
        else
            rc = fe_onnx_tensor(ap->t, r->path, what, NULL, &tmp.tensor, r->d);
        a.v.tensor = &tmp.tensor;
        break;
    }
    default:
        break;
    }
    if (!rc && ir_set_attr(g, node, &a))
        rc = util_error(r->d, r->loc, "out of memory");
    attr_tmp_free(&tmp);
    return rc;
}

/* ---------------------------------------------------------------- nodes */

/* Upsample (removed from ONNX at opset 10) is read as the equivalent Resize:
 *   Upsample-1:   attributes height_scale, width_scale (4-D input), mode nearest|bilinear
 *   Upsample-7:   attribute scales, mode nearest|linear
 *   Upsample-9/10: scales as input 2
 * all with output index i ↦ input coordinate i / scale (Resize's
 * coordinate_transformation_mode "asymmetric") and, for nearest, floor. */
static int read_upsample(Reader *r, const Onnx__NodeProto *np, const char *nl, int x, int scales_in, int y)
{
    IrGraph *g = r->g;
    const char *mode = "nearest";
    float hs = 0, ws = 0;
    const float *sc = NULL;
    size_t n_sc = 0;
    for (size_t i = 0; i < np->n_attribute; i++) {
        const Onnx__AttributeProto *ap = np->attribute[i];
        const char *an = str_or(ap->name, "");
        if (strcmp(an, "mode") == 0) {
            size_t l = ap->has_s ? ap->s.len : 0;
            const char *s = ap->has_s && l ? (const char *)ap->s.data : "";
            mode = l == 8 && memcmp(s, "bilinear", 8) == 0 ? "linear" :
                   l == 6 && memcmp(s, "linear", 6) == 0 ? "linear" :
                   l == 7 && memcmp(s, "nearest", 7) == 0 ? "nearest" : NULL;
            if (!mode)
                return util_error(r->d, r->loc, "node %s (Upsample): unsupported mode '%.*s'", nl,
                                  (int)(l < 64 ? l : 64), s);
        } else if (strcmp(an, "scales") == 0) {
            sc = ap->floats;
            n_sc = ap->n_floats;
        } else if (strcmp(an, "height_scale") == 0) {
            hs = ap->f;
        } else if (strcmp(an, "width_scale") == 0) {
            ws = ap->f;
        } else {
            return util_error(r->d, r->loc, "node %s (Upsample): unknown attribute '%s'", nl, an);
        }
    }
    if (scales_in < 0) {
        float v4[4] = { 1, 1, hs, ws };
        if (!sc) {
            if (hs <= 0 || ws <= 0)
                return util_error(r->d, r->loc, "node %s (Upsample): no scales (give scales, or height_scale "
                                  "and width_scale)", nl);
            sc = v4;
            n_sc = 4;
        }
        if (n_sc == 0 || n_sc > IR_MAX_RANK)
            return util_error(r->d, r->loc, "node %s (Upsample): %zu scales", nl, n_sc);
        char hint[300];
        snprintf(hint, sizeof hint, "%.200s_scales", g->tensors[y].name);
        if ((scales_in = ir_add_temp(g, hint)) < 0)
            return util_error(r->d, r->loc, "out of memory");
        IrShape s = { .rank = 1, .dims = { (int64_t)n_sc } };
        g->tensors[scales_in].kind = IR_TK_CONST;
        ir_set_type(g, scales_in, IR_DT_F32, &s);
        float *p = ir_alloc_data(g, scales_in);
        if (!p)
            return util_error(r->d, r->loc, "out of memory");
        memcpy(p, sc, n_sc * sizeof(float));
    }
    int in[3] = { x, -1, scales_in };
    int n = ir_add_node(g, IR_OP_Resize, str_or(np->name, ""), 3, in, 1, &y, r->loc);
    if (n < 0)
        return util_error(r->d, r->loc, "out of memory");
    IrAttr am = { .key = IR_A_mode, .kind = IR_AK_STRING, .v.s = mode };
    IrAttr ac = { .key = IR_A_coordinate_transformation_mode, .kind = IR_AK_STRING, .v.s = "asymmetric" };
    IrAttr an = { .key = IR_A_nearest_mode, .kind = IR_AK_STRING, .v.s = "floor" };
    if (ir_set_attr(g, n, &am) || ir_set_attr(g, n, &ac) || ir_set_attr(g, n, &an))
        return util_error(r->d, r->loc, "out of memory");
    return 0;
}

/* ---------------------------------------- ONNX Runtime's QOperator format
 *
 * quantize_static's QOperator format writes, besides the default domain's
 * QLinearConv / QLinearMatMul / QuantizeLinear / DequantizeLinear, some
 * operators of ONNX Runtime's 'com.microsoft' domain.  Each is read as the
 * QDQ form it computes (ONNX Runtime's contrib operator documentation), which
 * the qdq pass runs on the integers as for a QDQ model:
 *   QLinearAdd(a, as, az, b, bs, bz, cs, cz)        Q(DQ(a) + DQ(b), cs, cz)
 *   QLinearAveragePool(x, xs, xz, ys, yz)            Q(AveragePool(DQ(x)), ys, yz)
 *   QLinearGlobalAveragePool(x, xs, xz, ys, yz)      Q(GlobalAveragePool(DQ(x)), ys, yz)
 *   QGemm(a, as, az, b, bs, bz, [c], [ys, yz])       [Q](Gemm(DQ(a), DQ(b), DQ(c, as*bs)))
 * (channels_last = 1 is refused; zero points must be given). */

static const char *const contrib_ops[] = { "QLinearAdd", "QLinearAveragePool", "QLinearGlobalAveragePool", "QGemm" };

static int contrib_known(const char *ot)
{
    for (size_t i = 0; i < sizeof contrib_ops / sizeof *contrib_ops; i++)
        if (strcmp(ot, contrib_ops[i]) == 0)
            return 1;
    return 0;
}

/* A node op(in[0..n)) writing tensor out (a fresh one when out < 0); its
 * output, or -1 out of memory.  *node receives its index. */
static int contrib_node(Reader *r, IrOp op, const char *name, int n, const int *in, int out, int *node)
{
    if (out < 0 && (out = ir_add_temp(r->g, name)) < 0)
        return -1;
    int k = ir_add_node(r->g, op, name, n, in, 1, &out, r->loc);
    if (node)
        *node = k;
    return k < 0 ? -1 : out;
}

/* DQ(q, s, z) with the quantization axis `axis` when s holds more than one
 * value (an initializer), or always when axis >= 0 is `forced` (a bias: its
 * scale is computed). */
static int contrib_dq(Reader *r, const char *name, int q, int s, int z, int64_t axis, int forced)
{
    int k, t = contrib_node(r, IR_OP_DequantizeLinear, name, 3, (int[]){ q, s, z }, -1, &k);
    const IrTensor *st = &r->g->tensors[s];
    IrAttr a = { .key = IR_A_axis, .kind = IR_AK_INT, .v.i = axis };
    if (t >= 0 && (forced || (st->kind == IR_TK_CONST && ir_shape_numel(&st->v.shape) > 1)) &&
        ir_set_attr(r->g, k, &a))
        return -1;
    return t;
}

/* QGemm's bias scale a_scale * b_scale: a float32 constant when both are
 * float32 initializers (so the qdq pass sees a constant bias scale, as in
 * the QDQ format), else a Mul node. */
static int bias_scale(Reader *r, const char *name, int as, int bs)
{
    IrGraph *g = r->g;
    const IrTensor *a = &g->tensors[as], *b = &g->tensors[bs];
    if (a->kind != IR_TK_CONST || b->kind != IR_TK_CONST || !a->v.data || !b->v.data || a->v.dtype != IR_DT_F32 ||
        b->v.dtype != IR_DT_F32 || ir_shape_numel(&a->v.shape) != 1)
        return contrib_node(r, IR_OP_Mul, name, 2, (int[]){ as, bs }, -1, NULL);
    IrShape sh = b->v.shape;
    int t = ir_add_temp(g, name);
    if (t < 0)
        return -1;
    g->tensors[t].kind = IR_TK_CONST;
    ir_set_type(g, t, IR_DT_F32, &sh);
    float *p = ir_alloc_data(g, t);
    if (!p)
        return -1;
    const float av = *(const float *)g->tensors[as].v.data, *bv = g->tensors[bs].v.data;
    for (int64_t i = 0; i < ir_shape_numel(&sh); i++)
        p[i] = av * bv[i];
    return t;
}

static int read_contrib(Reader *r, const Onnx__NodeProto *np, const char *nl, const int *in, int nin, const int *out,
                        int nout)
{
    const char *ot = str_or(np->op_type, ""), *nm = str_or(np->name, "");
    int gemm = strcmp(ot, "QGemm") == 0, add = strcmp(ot, "QLinearAdd") == 0;
    int need = add ? 8 : gemm ? 6 : 5;
    for (int k = 0; k < need; k++)
        if (k >= nin || in[k] < 0)
            return util_error(r->d, r->loc, "node %s (com.microsoft.%s): input %d is missing (dlcc reads this "
                              "operator with every scale and zero point given)", nl, ot, k);
    if (nout != 1 || out[0] < 0)
        return util_error(r->d, r->loc, "node %s (com.microsoft.%s): needs one output", nl, ot);
    int64_t trans_a = 0, trans_b = 0;
    double alpha = 1;
    int pool = -1, y = -1, rc = 0;
    for (size_t k = 0; k < np->n_attribute; k++) {
        const Onnx__AttributeProto *ap = np->attribute[k];
        const char *an = str_or(ap->name, "");
        if (strcmp(an, "channels_last") == 0) {
            if (ap->i != 0)
                return util_error(r->d, r->loc, "node %s (com.microsoft.%s): channels_last = 1 is not supported", nl,
                                  ot);
        } else if (gemm && strcmp(an, "transA") == 0) {
            trans_a = ap->i;
        } else if (gemm && strcmp(an, "transB") == 0) {
            trans_b = ap->i;
        } else if (gemm && strcmp(an, "alpha") == 0) {
            alpha = ap->f;
        } else if (strcmp(ot, "QLinearAveragePool") != 0) {
            return util_error(r->d, r->loc, "node %s (com.microsoft.%s): unknown attribute '%s'", nl, ot, an);
        }
    }
    if (add) {
        int a = contrib_dq(r, nm, in[0], in[1], in[2], 1, 0);
        int b = a < 0 ? -1 : contrib_dq(r, nm, in[3], in[4], in[5], 1, 0);
        int s = b < 0 ? -1 : contrib_node(r, IR_OP_Add, nm, 2, (int[]){ a, b }, -1, NULL);
        y = s < 0 ? -1 : contrib_node(r, IR_OP_QuantizeLinear, nm, 3, (int[]){ s, in[6], in[7] }, out[0], NULL);
    } else if (!gemm) {
        int x = contrib_dq(r, nm, in[0], in[1], in[2], 1, 0);
        int p = x < 0 ? -1
              : contrib_node(r, strcmp(ot, "QLinearAveragePool") == 0 ? IR_OP_AveragePool : IR_OP_GlobalAveragePool,
                             nm, 1, &x, -1, &pool);
        for (size_t k = 0; p >= 0 && !rc && r->g->nodes[pool].op == IR_OP_AveragePool && k < np->n_attribute; k++)
            if (strcmp(str_or(np->attribute[k]->name, ""), "channels_last") != 0)
                rc = set_node_attr(r, pool, nl, np->attribute[k]);
        y = p < 0 || rc ? -1 : contrib_node(r, IR_OP_QuantizeLinear, nm, 3, (int[]){ p, in[3], in[4] }, out[0], NULL);
    } else {
        int has_y = nin > 8 && in[7] >= 0 && in[8] >= 0, has_c = nin > 6 && in[6] >= 0;
        int a = contrib_dq(r, nm, in[0], in[1], in[2], 1, 0);
        int b = a < 0 ? -1 : contrib_dq(r, nm, in[3], in[4], in[5], trans_b ? 0 : 1, 0);
        int cs = !has_c || b < 0 ? -1 : bias_scale(r, nm, in[1], in[4]);
        int c = cs < 0 ? -1 : contrib_dq(r, nm, in[6], cs, -1, 0, 1);
        int k, g = b < 0 || (has_c && c < 0) ? -1
                 : contrib_node(r, IR_OP_Gemm, nm, has_c ? 3 : 2, (int[]){ a, b, c }, has_y ? -1 : out[0], &k);
        IrAttr at[3] = { { .key = IR_A_alpha, .kind = IR_AK_FLOAT, .v.f = alpha },
                         { .key = IR_A_transA, .kind = IR_AK_INT, .v.i = trans_a },
                         { .key = IR_A_transB, .kind = IR_AK_INT, .v.i = trans_b } };
        for (int j = 0; g >= 0 && j < 3; j++)
            if (ir_set_attr(r->g, k, &at[j]))
                g = -1;
        y = g < 0 || !has_y ? g : contrib_node(r, IR_OP_QuantizeLinear, nm, 3, (int[]){ g, in[7], in[8] }, out[0], NULL);
    }
    if (rc)
        return -1;
    return y < 0 ? util_error(r->d, r->loc, "out of memory") : 0;
}

/* Pass 1: operator and domain of every node; its outputs become tensors so
 * that inputs can be resolved in any node order. */
static int declare_nodes(Reader *r, const Onnx__GraphProto *gp)
{
    for (size_t i = 0; i < gp->n_node; i++) {
        const Onnx__NodeProto *np = gp->node[i];
        char nl[256];
        node_label(np, i, nl, sizeof nl);
        const char *ot = str_or(np->op_type, "");
        int contrib = np->domain && strcmp(np->domain, "com.microsoft") == 0 && contrib_known(ot);
        if (!is_default_domain(np->domain) && !contrib)
            return util_error(r->d, r->loc, "unsupported operator '%s.%s' (node %s): operator domain '%s' is not "
                              "supported; dlcc reads the default ONNX domain and, of 'com.microsoft', the quantized "
                              "operators of ONNX Runtime's QOperator format (QLinearAdd, QLinearAveragePool, "
                              "QLinearGlobalAveragePool, QGemm)", np->domain, ot, nl, np->domain);
        if (r->g->opset == 0)
            return util_error(r->d, r->loc, "node %s (%s): the model does not import the default ONNX opset", nl, ot);
        int sub = 0;
        for (size_t k = 0; k < np->n_attribute; k++)
            sub |= is_subgraph_attr(np->attribute[k]);
        if (!contrib && ir_op_from_name(ot) == IR_OP_INVALID && strcmp(ot, "Upsample") != 0)
            return util_error(r->d, r->loc, "unsupported operator '%s' (node %s, opset %d)%s", ot, nl, r->g->opset,
                              sub ? "; control flow with subgraphs is not supported" : "");
        for (size_t k = 0; k < np->n_output; k++) {
            const char *on = np->output[k];
            if (!on || !*on)
                continue;
            if (ir_find_tensor(r->g, on) >= 0)
                return util_error(r->d, r->loc, "node %s (%s): output '%s' is already a graph input, an initializer "
                                  "or another node's output", nl, ot, on);
            if (ir_add_tensor(r->g, on, IR_TK_VALUE, r->loc, r->d) < 0)
                return -1;
        }
    }
    return 0;
}

/* Maps names to tensor indices ("" → -1), dropping trailing absent ones. */
static int resolve(Reader *r, const char *nl, const char *ot, char **names, size_t n, int *idx)
{
    int cnt = 0;
    for (size_t k = 0; k < n; k++) {
        const char *nm = names[k];
        idx[k] = -1;
        if (nm && *nm) {
            idx[k] = ir_find_tensor(r->g, nm);
            if (idx[k] < 0)
                return util_error(r->d, r->loc, "node %s (%s): input '%s' is not defined (no graph input, "
                                  "initializer or node output has that name)", nl, ot, nm);
        }
        if (idx[k] >= 0)
            cnt = (int)k + 1;
    }
    return cnt;
}

static int read_nodes(Reader *r, const Onnx__GraphProto *gp)
{
    int *in = NULL, *out = NULL;
    int rc = 0;
    for (size_t i = 0; i < gp->n_node && !rc; i++) {
        const Onnx__NodeProto *np = gp->node[i];
        char nl[256];
        node_label(np, i, nl, sizeof nl);
        const char *ot = str_or(np->op_type, "");
        if (np->n_input > IR_VARIADIC || np->n_output > IR_VARIADIC) {
            rc = util_error(r->d, r->loc, "node %s (%s): more than %d inputs or outputs", nl, ot, IR_VARIADIC);
            break;
        }
        free(in);
        free(out);
        in = malloc((np->n_input + 1) * sizeof(int));
        out = malloc((np->n_output + 1) * sizeof(int));
        if (!in || !out) {
            rc = util_error(r->d, r->loc, "out of memory");
            break;
        }
        int nin = resolve(r, nl, ot, np->input, np->n_input, in);
        int nout = nin < 0 ? -1 : resolve(r, nl, ot, np->output, np->n_output, out);
        if (nin < 0 || nout < 0) {
            rc = -1;
            break;
        }
        if (np->domain && strcmp(np->domain, "com.microsoft") == 0) {
            rc = read_contrib(r, np, nl, in, nin, out, nout);
            continue;
        }
        if (strcmp(ot, "Upsample") == 0) {
            if (nin < 1 || nout != 1 || in[0] < 0)
                rc = util_error(r->d, r->loc, "node %s (Upsample): needs an input and one output", nl);
            else
                rc = read_upsample(r, np, nl, in[0], nin > 1 ? in[1] : -1, out[0]);
            continue;
        }
        int n = ir_add_node(r->g, ir_op_from_name(ot), str_or(np->name, ""), nin, in, nout, out, r->loc);
        if (n < 0) {
            rc = util_error(r->d, r->loc, "out of memory");
            break;
        }
        for (size_t k = 0; k < np->n_attribute && !rc; k++)
            rc = set_node_attr(r, n, nl, np->attribute[k]);
    }
    free(in);
    free(out);
    return rc;
}

static int read_outputs(Reader *r, const Onnx__GraphProto *gp)
{
    if (gp->n_output == 0)
        return util_error(r->d, r->loc, "the graph has no outputs");
    for (size_t i = 0; i < gp->n_output; i++) {
        const char *nm = str_or(gp->output[i]->name, "");
        int t = ir_find_tensor(r->g, nm);
        if (t < 0)
            return util_error(r->d, r->loc, "graph output '%s' is never produced", nm);
        if (ir_add_output(r->g, t))
            return util_error(r->d, r->loc, "out of memory");
    }
    return 0;
}

IrGraph *fe_load_onnx(const char *path, const uint8_t *bytes, size_t len, const FeOptions *opt, UtilDiag *d)
{
    if (fe_onnx_check_wire(path, bytes, len, &onnx__model_proto__descriptor, d))
        return NULL;
    Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, len, bytes);
    if (!m) {
        util_error(d, util_loc_file(path), "not a valid ONNX model (the protobuf could not be decoded)");
        return NULL;
    }
    const Onnx__GraphProto *gp = m->graph;
    IrGraph *g = NULL;
    if (!gp) {
        util_error(d, util_loc_file(path), "the ONNX model has no graph");
        goto out;
    }
    g = ir_graph_new(str_or(gp->name, "model"), path);
    if (!g) {
        util_error(d, util_loc_file(path), "out of memory");
        goto out;
    }
    Reader r = { path, g, d, util_loc_file(g->file), opt };
    if (read_opset(&r, m) || read_initializers(&r, gp) || read_inputs(&r, gp) || declare_nodes(&r, gp) ||
        read_nodes(&r, gp) || read_outputs(&r, gp) || fe_upgrade(g, d)) {
        ir_graph_free(g);
        g = NULL;
    }
out:
    onnx__model_proto__free_unpacked(m, NULL);
    return g;
}
