/* ir/ops.c — the operator and attribute tables generated from ops.def,
 * attrs.def and opattrs.def. */
#include "ir/ir.h"

#include <string.h>

enum { EW = IR_OPF_EW, COMM = IR_OPF_COMM, VIEW = IR_OPF_VIEW, SHAPEVAL = IR_OPF_SHAPEVAL, FUSE = IR_OPF_FUSE };

static const IrOpInfo op_table[IR_OP_COUNT] = {
#define OP(name, mi, ma, mo, mao, inf, ev, low, fl, doc) [IR_OP_##name] = { #name, mi, ma, mo, mao, fl, doc },
#include "ir/ops.def"
#undef OP
};

const IrOpInfo *ir_op_info(IrOp op)
{
    return op > IR_OP_INVALID && op < IR_OP_COUNT ? &op_table[op] : NULL;
}

const char *ir_op_name(IrOp op)
{
    const IrOpInfo *i = ir_op_info(op);
    return i ? i->name : "<invalid>";
}

IrOp ir_op_from_name(const char *s)
{
    for (int i = 1; i < IR_OP_COUNT; i++)
        if (strcmp(op_table[i].name, s) == 0)
            return (IrOp)i;
    return IR_OP_INVALID;
}

static const char *const attr_names[IR_A_COUNT] = {
    [IR_A_INVALID] = "<invalid>",
#define AK(name) [IR_A_##name] = #name,
#include "ir/attrs.def"
#undef AK
};

const char *ir_attr_name(IrAttrKey k)
{
    return k > IR_A_INVALID && k < IR_A_COUNT ? attr_names[k] : "<invalid>";
}

IrAttrKey ir_attr_from_name(const char *s)
{
    for (int i = 1; i < IR_A_COUNT; i++)
        if (strcmp(attr_names[i], s) == 0)
            return (IrAttrKey)i;
    return IR_A_INVALID;
}

const char *ir_attr_kind_name(IrAttrKind k)
{
    static const char *const names[] = { "none", "int", "float", "string", "ints", "floats", "strings", "tensor" };
    return k >= IR_AK_NONE && k <= IR_AK_TENSOR ? names[k] : "?";
}

/* ---- per-operator attribute schema ---- */

typedef struct OpAttrSpec {
    IrOp op;
    IrAttrKey key;
    IrAttrKind kind;
    int has_default;
    int64_t di;
    double df;
    const char *ds;
} OpAttrSpec;

#define I(v) 1, (v), 0.0, NULL
#define F(v) 1, 0, (v), NULL
#define S(v) 1, 0, 0.0, (v)
#define NODEF 0, 0, 0.0, NULL
static const OpAttrSpec op_attrs[] = {
#define OA(op, key, kind, def) { IR_OP_##op, IR_A_##key, IR_AK_##kind, def },
#include "ir/opattrs.def"
#undef OA
};
#undef I
#undef F
#undef S
#undef NODEF

static const OpAttrSpec *spec_find(IrOp op, IrAttrKey key)
{
    for (size_t i = 0; i < sizeof op_attrs / sizeof op_attrs[0]; i++)
        if (op_attrs[i].op == op && op_attrs[i].key == key)
            return &op_attrs[i];
    return NULL;
}

IrAttrKind ir_op_attr_kind(IrOp op, IrAttrKey key)
{
    const OpAttrSpec *s = spec_find(op, key);
    return s ? s->kind : IR_AK_NONE;
}

void ir_op_attrs_foreach(IrOp op, void (*fn)(void *ctx, IrAttrKey key, IrAttrKind kind), void *ctx)
{
    for (size_t i = 0; i < sizeof op_attrs / sizeof op_attrs[0]; i++)
        if (op_attrs[i].op == op)
            fn(ctx, op_attrs[i].key, op_attrs[i].kind);
}

/* ---- lookups with defaults ---- */

const IrAttr *ir_attr(const IrNode *n, IrAttrKey key)
{
    for (int i = 0; i < n->n_attrs; i++)
        if (n->attrs[i].key == key)
            return &n->attrs[i];
    return NULL;
}

int ir_has_attr(const IrNode *n, IrAttrKey key) { return ir_attr(n, key) != NULL; }

int64_t ir_attr_int(const IrNode *n, IrAttrKey key)
{
    const IrAttr *a = ir_attr(n, key);
    if (a && a->kind == IR_AK_INT)
        return a->v.i;
    const OpAttrSpec *s = spec_find(n->op, key);
    return s && s->has_default ? s->di : 0;
}

double ir_attr_float(const IrNode *n, IrAttrKey key)
{
    const IrAttr *a = ir_attr(n, key);
    if (a && a->kind == IR_AK_FLOAT)
        return a->v.f;
    if (a && a->kind == IR_AK_INT)
        return (double)a->v.i;
    const OpAttrSpec *s = spec_find(n->op, key);
    return s && s->has_default ? s->df : 0.0;
}

const char *ir_attr_str(const IrNode *n, IrAttrKey key)
{
    const IrAttr *a = ir_attr(n, key);
    if (a && a->kind == IR_AK_STRING)
        return a->v.s;
    const OpAttrSpec *s = spec_find(n->op, key);
    return s && s->has_default && s->ds ? s->ds : "";
}

int ir_attr_ints(const IrNode *n, IrAttrKey key, const int64_t **v)
{
    const IrAttr *a = ir_attr(n, key);
    if (a && a->kind == IR_AK_INTS) {
        *v = a->v.ints;
        return a->n;
    }
    *v = NULL;
    return 0;
}

int ir_attr_floats(const IrNode *n, IrAttrKey key, const double **v)
{
    const IrAttr *a = ir_attr(n, key);
    if (a && a->kind == IR_AK_FLOATS) {
        *v = a->v.floats;
        return a->n;
    }
    *v = NULL;
    return 0;
}
