/* docs/gen/gen_ops_md.c — writes docs/ops.md from the operator table
 * (ir/ops.def), the attribute schema (ir/opattrs.def) and the lowering table
 * (lower/lower.c).  `ninja -C build ops-doc` regenerates the file; the test
 * 'ops_doc' fails when the committed file is out of date. */
#include <stdio.h>
#include <string.h>

#include "ir/ir.h"
#include "lower/lower.h"

/* ONNX operators dlcc declines, with the reason a user gets. */
static const struct { const char *ops, *why; } declined[] = {
    { "If, Loop, Scan", "control flow with subgraphs: dlcc compiles one static dataflow graph" },
    { "Unique, NonZero / Compress / NonMaxSuppression on runtime values",
      "the output shape depends on runtime values; dlcc compiles static shapes (they work when the operand is "
      "known at compile time: a constant, --bind, or any input under dlcc run, docs/cli.md)" },
    { "SequenceEmpty, SequenceInsert, SequenceMap, SplitToSequence, ConcatFromSequence, Optional*",
      "sequence and optional types are not tensors" },
    { "StringNormalizer, StringConcat, StringSplit, RegexFullMatch, TfIdfVectorizer, LabelEncoder",
      "string tensors" },
    { "ImageDecoder", "decodes compressed images from byte strings at run time" },
    { "RandomNormal, RandomNormalLike, RandomUniform, RandomUniformLike, Bernoulli, Multinomial",
      "random operators: generated code is deterministic" },
    { "training-mode Dropout, Momentum, Adagrad, Adam, Gradient; training-mode BatchNormalization in compiled "
      "code (the reference interpreter computes it: dlcc run)",
      "training only: dlcc compiles inference graphs" },
    { "float8 (E4M3FN, E4M3FNUZ, E5M2, E5M2FNUZ, E8M0), int4, uint4, float4 element types, complex, string",
      "element types outside dlcc's list (docs/model-format.md)" },
};

struct attr_ctx { const IrOp op; int n; };

static void print_attr(void *ctx, IrAttrKey key, IrAttrKind kind)
{
    struct attr_ctx *c = ctx;
    printf("%s`%s` (%s)", c->n++ ? ", " : "", ir_attr_name(key), ir_attr_kind_name(kind));
}

int main(void)
{
    printf("# Operators\n\n"
           "Generated from `ir/ops.def`, `ir/opattrs.def` and the lowering table by `docs/gen/gen_ops_md.c`\n"
           "(`ninja -C build ops-doc`); do not edit by hand.\n\n"
           "Every operator is read from ONNX opsets 1 to %d (older forms are upgraded at import to the\n"
           "current semantics, see `frontend/upgrade_rules.c`) and runs on the reference interpreter with all\n"
           "its attributes. The `cpu` column says whether it compiles for the CPU target (LLVM); an operator\n"
           "without a lowering is an error naming it. The gpu and fpga targets are not built yet.\n\n",
           IR_MAX_OPSET);
    printf("| operator | inputs | outputs | attributes | semantics | interp | cpu |\n"
           "|---|---|---|---|---|---|---|\n");
    int n_ops = 0, n_cpu = 0;
    for (int op = 1; op < IR_OP_COUNT; op++) {
        const IrOpInfo *i = ir_op_info((IrOp)op);
        char in[32], out[32];
        if (i->max_in == IR_VARIADIC)
            snprintf(in, sizeof in, "%d+", i->min_in);
        else
            snprintf(in, sizeof in, i->min_in == i->max_in ? "%d" : "%d-%d", i->min_in, i->max_in);
        if (i->max_out == IR_VARIADIC)
            snprintf(out, sizeof out, "%d+", i->min_out);
        else
            snprintf(out, sizeof out, i->min_out == i->max_out ? "%d" : "%d-%d", i->min_out, i->max_out);
        printf("| %s | %s | %s | ", i->name, in, out);
        struct attr_ctx c = { (IrOp)op, 0 };
        ir_op_attrs_foreach((IrOp)op, print_attr, &c);
        printf("%s | ", c.n ? "" : "—");
        for (const char *p = i->doc; *p; p++) {     /* '|' would end the table cell */
            if (*p == '|')
                putchar('\\');
            putchar(*p);
        }
        int cpu = low_supports((IrOp)op);
        printf(" | yes | %s |\n", cpu ? "yes" : "—");
        n_ops++;
        n_cpu += cpu;
    }
    printf("\n%d operators; %d compile for the CPU target.\n\n", n_ops, n_cpu);
    printf("## Declined\n\nThese are errors naming the operator or type, with the reason:\n\n"
           "| what | why |\n|---|---|\n");
    for (size_t k = 0; k < sizeof declined / sizeof *declined; k++)
        printf("| %s | %s |\n", declined[k].ops, declined[k].why);
    return 0;
}
