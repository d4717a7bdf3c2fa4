/* ir/print.c — the stable text form and the Graphviz DOT dump. */
#include "ir/ir.h"

#include <stdio.h>
#include <string.h>

static void type_str(const IrTensor *t, char *buf, size_t n)
{
    char s[160];
    ir_shape_str(&t->v.shape, s, sizeof s);
    snprintf(buf, n, "%s%s", t->shape_known ? ir_dtype_name(t->v.dtype) : "?", t->shape_known ? s : "");
}

static void print_value_summary(UtilBuf *out, const IrArray *a)
{
    int64_t n = ir_array_numel(a);
    util_buf_printf(out, " = {");
    for (int64_t i = 0; i < n && i < 8; i++) {
        if (ir_dtype_is_float(a->dtype))
            util_buf_printf(out, i ? ", %.9g" : "%.9g", ir_load_f64(a->dtype, a->data, i));
        else
            util_buf_printf(out, i ? ", %lld" : "%lld", (long long)ir_load_i64(a->dtype, a->data, i));
    }
    util_buf_printf(out, n > 8 ? ", ... (%lld)}" : "}", (long long)n);
}

static void print_attr(UtilBuf *out, const IrAttr *a)
{
    util_buf_printf(out, "%s=", ir_attr_name(a->key));
    switch (a->kind) {
    case IR_AK_INT: util_buf_printf(out, "%lld", (long long)a->v.i); break;
    case IR_AK_FLOAT: util_buf_printf(out, "%.9g", a->v.f); break;
    case IR_AK_STRING: util_buf_printf(out, "\"%s\"", a->v.s); break;
    case IR_AK_INTS:
        util_buf_printf(out, "[");
        for (int i = 0; i < a->n; i++)
            util_buf_printf(out, i ? ",%lld" : "%lld", (long long)a->v.ints[i]);
        util_buf_printf(out, "]");
        break;
    case IR_AK_FLOATS:
        util_buf_printf(out, "[");
        for (int i = 0; i < a->n; i++)
            util_buf_printf(out, i ? ",%.9g" : "%.9g", a->v.floats[i]);
        util_buf_printf(out, "]");
        break;
    case IR_AK_STRINGS:
        util_buf_printf(out, "[");
        for (int i = 0; i < a->n; i++)
            util_buf_printf(out, i ? ",\"%s\"" : "\"%s\"", a->v.strings[i]);
        util_buf_printf(out, "]");
        break;
    case IR_AK_TENSOR: {
        char s[160];
        ir_shape_str(&a->v.tensor->shape, s, sizeof s);
        util_buf_printf(out, "tensor<%s%s>", ir_dtype_name(a->v.tensor->dtype), s);
        break;
    }
    default: util_buf_printf(out, "?"); break;
    }
}

void ir_print(const IrGraph *g, UtilBuf *out)
{
    char ty[256];
    util_buf_printf(out, "graph %s (opset %d) {\n", g->name, g->opset);
    for (int i = 0; i < g->n_inputs; i++) {
        const IrTensor *t = &g->tensors[g->inputs[i]];
        type_str(t, ty, sizeof ty);
        util_buf_printf(out, "  input %%%s: %s\n", t->name, ty);
    }
    for (int t = 0; t < g->n_tensors; t++) {
        const IrTensor *x = &g->tensors[t];
        if (x->kind != IR_TK_CONST)
            continue;
        type_str(x, ty, sizeof ty);
        util_buf_printf(out, "  const %%%s: %s", x->name, ty);
        if (x->v.data)
            print_value_summary(out, &x->v);
        util_buf_printf(out, "\n");
    }
    for (int i = 0; i < g->n_nodes; i++) {
        const IrNode *n = &g->nodes[i];
        if (n->dead)
            continue;
        util_buf_printf(out, n->fused ? "  + " : "  ");     /* + : fused into the kernel above */
        for (int k = 0; k < n->n_out; k++) {
            const IrTensor *t = ir_out(g, n, k);
            if (t) {
                type_str(t, ty, sizeof ty);
                util_buf_printf(out, "%s%%%s: %s", k ? ", " : "", t->name, ty);
            } else {
                util_buf_printf(out, "%s_", k ? ", " : "");
            }
        }
        util_buf_printf(out, " = %s(", ir_op_name(n->op));
        for (int k = 0; k < n->n_in; k++) {
            const IrTensor *t = ir_in(g, n, k);
            util_buf_printf(out, "%s%s%s", k ? ", " : "", t ? "%" : "_", t ? t->name : "");
        }
        util_buf_printf(out, ")");
        if (n->n_attrs) {
            util_buf_printf(out, " {");
            for (int a = 0; a < n->n_attrs; a++) {
                if (a)
                    util_buf_printf(out, ", ");
                print_attr(out, &n->attrs[a]);
            }
            util_buf_printf(out, "}");
        }
        if (n->name[0])
            util_buf_printf(out, "  # %s", n->name);
        util_buf_printf(out, "\n");
    }
    util_buf_printf(out, "  return ");
    for (int o = 0; o < g->n_outputs; o++)
        util_buf_printf(out, "%s%%%s", o ? ", " : "", g->tensors[g->outputs[o]].name);
    util_buf_printf(out, "\n}\n");
}

static void dot_escape(UtilBuf *out, const char *s)
{
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            util_buf_put(out, "\\", 1);
        util_buf_put(out, s, 1);
    }
}

void ir_print_dot(const IrGraph *g, UtilBuf *out)
{
    char ty[256];
    util_buf_printf(out, "digraph \"");
    dot_escape(out, g->name);
    util_buf_printf(out, "\" {\n  rankdir=TB;\n  node [fontname=\"Helvetica\", fontsize=10];\n");
    for (int i = 0; i < g->n_inputs; i++) {
        const IrTensor *t = &g->tensors[g->inputs[i]];
        type_str(t, ty, sizeof ty);
        util_buf_printf(out, "  t%d [shape=ellipse, label=\"", g->inputs[i]);
        dot_escape(out, t->name);
        util_buf_printf(out, "\\n%s\"];\n", ty);
    }
    for (int i = 0; i < g->n_nodes; i++) {
        const IrNode *n = &g->nodes[i];
        if (n->dead)
            continue;
        util_buf_printf(out, "  n%d [shape=box, style=filled, fillcolor=\"#dde8f6\", label=\"%s", i,
                        ir_op_name(n->op));
        if (n->name[0]) {
            util_buf_printf(out, "\\n");
            dot_escape(out, n->name);
        }
        util_buf_printf(out, "\"];\n");
        for (int k = 0; k < n->n_in; k++) {
            const IrTensor *t = ir_in(g, n, k);
            if (!t)
                continue;
            type_str(t, ty, sizeof ty);
            if (t->producer >= 0)
                util_buf_printf(out, "  n%d -> n%d [label=\"%s\"];\n", t->producer, i, ty);
            else if (t->kind == IR_TK_INPUT)
                util_buf_printf(out, "  t%d -> n%d;\n", n->in[k], i);
        }
    }
    for (int o = 0; o < g->n_outputs; o++) {
        const IrTensor *t = &g->tensors[g->outputs[o]];
        type_str(t, ty, sizeof ty);
        util_buf_printf(out, "  out%d [shape=ellipse, label=\"", o);
        dot_escape(out, t->name);
        util_buf_printf(out, "\\n%s\"];\n", ty);
        if (t->producer >= 0)
            util_buf_printf(out, "  n%d -> out%d;\n", t->producer, o);
    }
    util_buf_printf(out, "}\n");
}
