/* targets/header.c — the generated C header (docs/generated-code.md), shared by every
 * target.  Field names are the tensors' names made into C identifiers,
 * deduplicated with a numeric suffix. */
#include "targets/targets.h"
#include "runtime/dlcc_abi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *c_type(IrDType t)
{
    switch (t) {
    case IR_DT_F32: return "float";
    case IR_DT_F64: return "double";
    case IR_DT_F16: case IR_DT_BF16: case IR_DT_U16: return "uint16_t";
    case IR_DT_I8: return "int8_t";
    case IR_DT_U8: case IR_DT_BOOL: return "uint8_t";
    case IR_DT_I16: return "int16_t";
    case IR_DT_I32: return "int32_t";
    case IR_DT_U32: return "uint32_t";
    case IR_DT_I64: return "int64_t";
    case IR_DT_U64: return "uint64_t";
    default: return "void";
    }
}

/* C and C++ keywords a tensor name must not become (a trailing '_' is added). */
static const char *const reserved[] = {
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum", "extern",
    "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return", "short", "signed",
    "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void", "volatile", "while",
    "_Alignas", "_Alignof", "_Atomic", "_Bool", "_Complex", "_Generic", "_Imaginary", "_Noreturn",
    "_Static_assert", "_Thread_local", "bool", "true", "false", "alignas", "alignof", "and", "asm", "catch",
    "class", "const_cast", "delete", "dynamic_cast", "explicit", "export", "friend", "mutable", "namespace",
    "new", "noexcept", "not", "nullptr", "operator", "or", "private", "protected", "public", "reinterpret_cast",
    "static_assert", "static_cast", "template", "this", "throw", "try", "typeid", "typename", "using",
    "virtual", "xor", "unused_", NULL
};

/* A C identifier for a tensor name that is no keyword and no reserved
 * identifier (leading '_' + capital, or '__'); malloc'd. */
static char *field_identifier(const char *tensor)
{
    char *id = util_c_identifier(tensor);
    if (!id)
        return NULL;
    int bad = (id[0] == '_' && (id[1] == '_' || (id[1] >= 'A' && id[1] <= 'Z'))) || strstr(id, "__") != NULL;
    for (int k = 0; reserved[k] && !bad; k++)
        bad = strcmp(id, reserved[k]) == 0;
    if (!bad)
        return id;
    size_t n = strlen(id) + 3;
    char *fixed = malloc(n);
    if (fixed) {
        const char *p = id;
        while (*p == '_')
            p++;
        snprintf(fixed, n, "t_%s", p);                 /* keeps it valid and distinct from the keyword */
        for (char *q = fixed; (q = strstr(q, "__"));)
            memmove(q, q + 1, strlen(q));              /* collapse any '__' */
    }
    free(id);
    return fixed;
}

/* Writes text for use inside a C comment: no comment terminator, no control
 * characters. */
static void comment_text(UtilBuf *out, const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c < 0x20 || c == 0x7f)
            c = ' ';
        util_buf_put(out, &c, 1);
        if (c == '*' && s[1] == '/')
            util_buf_put(out, " ", 1);
    }
}

static void free_names(char **v, int n);

/* Field names for the tensors of one list (inputs or outputs), unique. */
static char **field_names(const IrGraph *g, const int *list, int n)
{
    char **names = calloc((size_t)n + 1, sizeof *names);
    if (!names)
        return NULL;
    for (int i = 0; i < n; i++) {
        char *base = field_identifier(g->tensors[list[i]].name);
        if (!base)
            continue;
        char *name = base;
        for (int k = 2;; k++) {
            int clash = 0;
            for (int j = 0; j < i && !clash; j++)
                clash = names[j] && strcmp(names[j], name) == 0;
            if (!clash)
                break;
            size_t len = strlen(base) + 24;
            char *alt = malloc(len);
            if (!alt)
                break;
            snprintf(alt, len, "%s_%d", base, k);
            if (name != base)
                free(name);
            name = alt;
        }
        if (name != base)
            free(base);
        names[i] = name;
        if (!name) {
            free_names(names, i);
            return NULL;
        }
    }
    return names;
}

static void free_names(char **v, int n)
{
    for (int i = 0; v && i < n; i++)
        free(v[i]);
    free(v);
}

static void tensor_macros(UtilBuf *out, const char *name, const char *kind, const char *field, const IrTensor *t)
{
    const IrShape *s = &t->v.shape;
    util_buf_printf(out, "#define %s_%s_%s_SIZE %lld   /* elements, %s */\n", name, kind, field,
                    (long long)ir_shape_numel(s), ir_dtype_name(t->v.dtype));
    util_buf_printf(out, "#define %s_%s_%s_BYTES %lld\n", name, kind, field, (long long)ir_array_bytes(&t->v));
    util_buf_printf(out, "#define %s_%s_%s_RANK %d\n", name, kind, field, s->rank);
    util_buf_printf(out, "#define %s_%s_%s_SHAPE {", name, kind, field);
    for (int i = 0; i < s->rank; i++)
        util_buf_printf(out, i ? ", %lld" : "%lld", (long long)s->dims[i]);
    util_buf_printf(out, s->rank ? "}\n" : "1}\n");
}

static void struct_def(UtilBuf *out, const IrGraph *g, const char *name, const int *list, int n, char **fields,
                       int is_input)
{
    util_buf_printf(out, "typedef struct {\n");
    for (int i = 0; i < n; i++) {
        const IrTensor *t = &g->tensors[list[i]];
        util_buf_printf(out, "    %s%s *%s;   /* %s", is_input ? "const " : "", c_type(t->v.dtype), fields[i],
                        ir_dtype_name(t->v.dtype));
        char s[160];
        ir_shape_str(&t->v.shape, s, sizeof s);
        util_buf_printf(out, "%s */\n", s);
    }
    if (n == 0)
        util_buf_printf(out, "    const void *unused_;\n");
    util_buf_printf(out, "} %s_%s;\n\n", name, is_input ? "inputs" : "outputs");
}

char **tgt_io_names(const IrGraph *g, int outputs)
{
    return outputs ? field_names(g, g->outputs, g->n_outputs) : field_names(g, g->inputs, g->n_inputs);
}

void tgt_io_names_free(char **names, int n) { free_names(names, n); }

int64_t tgt_stack_estimate(const LoopProgram *p)
{
    int64_t bytes = TGT_STACK_MARGIN;
    for (int b = 0; b < p->n_bufs; b++)
        if (p->bufs[b].storage == LOOP_ST_LOCAL && p->bufs[b].alias_of < 0)
            bytes += (p->bufs[b].bytes + 63) / 64 * 64;
    return bytes;
}

/* NAME_OK, NAME_ERR_NULL and the target's other codes (runtime/dlcc_abi.h),
 * then its note. */
static void return_codes(UtilBuf *out, const char *name, const TgtHeader *h)
{
#define CODE(nm, value, doc)                                                                    \
    if ((value) == 0)                                                                           \
        util_buf_printf(out, "#define %s_" #nm " 0\n", name);                                    \
    else if ((value) == DLCC_ERR_NULL || (h->codes & (1u << -(value))))                         \
        util_buf_printf(out, "#define %s_" #nm " (%d)   /* %s */\n", name, (value), doc);
    DLCC_RETURN_CODES(CODE)
#undef CODE
    if (h->note)
        util_buf_printf(out, "%s", h->note);
    util_buf_printf(out, "\n");
}

int tgt_emit_header(const IrGraph *g, const LoopProgram *p, const TgtOptions *o, const TgtHeader *h,
                    UtilBuf *out, UtilDiag *d)
{
    int64_t stack_bytes = h->stack_bytes;
    const char *name = o->name;
    char **in = field_names(g, g->inputs, g->n_inputs);
    char **outn = field_names(g, g->outputs, g->n_outputs);
    int64_t weights = 0;
    for (int b = 0; b < p->n_bufs; b++)
        if (p->bufs[b].storage == LOOP_ST_CONST)
            weights += p->bufs[b].bytes;
    util_buf_printf(out, "/* %s.h, generated by dlcc from model '", name);
    comment_text(out, g->name);
    util_buf_printf(out, "'. */\n");
    util_buf_printf(out, "#ifndef %s_H_\n#define %s_H_\n\n#include <stdint.h>\n\n", name, name);
    util_buf_printf(out, "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n");
    util_buf_printf(out, "#define %s_NUM_INPUTS %d\n", name, g->n_inputs);
    util_buf_printf(out, "#define %s_NUM_OUTPUTS %d\n", name, g->n_outputs);
    util_buf_printf(out, "#define %s_WORKSPACE_SIZE %lld   /* bytes of scratch the caller passes; 0 when none "
                         "is needed */\n", name,
                    (long long)(h->workspace_bytes >= 0 ? h->workspace_bytes : p->workspace_bytes));
    util_buf_printf(out, "#define %s_WORKSPACE_ALIGN %d\n", name, DLCC_WORKSPACE_ALIGN);
    util_buf_printf(out, "#define %s_WEIGHTS_SIZE %lld   /* bytes of constant data in the object */\n", name,
                    (long long)weights);
    if (h->stack_note)
        util_buf_printf(out, "#define %s_STACK_SIZE %lld   /* %s */\n", name, (long long)stack_bytes, h->stack_note);
    else if (stack_bytes >= 0)
        util_buf_printf(out, "#define %s_STACK_SIZE %lld   /* worst-case stack bytes of %s_run: LLVM's frame sizes "
                             "of all\n   functions + 16 each + 256 for library calls (docs/firmware.md) */\n", name,
                        (long long)stack_bytes, name);
    else
        util_buf_printf(out, "#define %s_STACK_SIZE %lld   /* worst-case stack bytes of %s_run, estimated: local "
                             "buffers\n   + %d bytes margin (docs/firmware.md) */\n", name,
                        (long long)tgt_stack_estimate(p), name, TGT_STACK_MARGIN);
    if (o->static_workspace) {
        util_buf_printf(out, "#define %s_STATIC_WORKSPACE 1   /* workspace == NULL uses a static buffer in the "
                             "object (", name);
        comment_text(out, o->workspace_section ? o->workspace_section : ".bss");
        util_buf_printf(out, "): NOT reentrant */\n");
    }
    return_codes(out, name, h);
    for (int i = 0; i < g->n_inputs && in; i++)
        tensor_macros(out, name, "INPUT", in[i], &g->tensors[g->inputs[i]]);
    for (int i = 0; i < g->n_outputs && outn; i++)
        tensor_macros(out, name, "OUTPUT", outn[i], &g->tensors[g->outputs[i]]);
    util_buf_printf(out, "\n");
    if (in && outn) {
        struct_def(out, g, name, g->inputs, g->n_inputs, in, 1);
        struct_def(out, g, name, g->outputs, g->n_outputs, outn, 0);
    }
    util_buf_printf(out, "/* Runs the model.  workspace: %s_WORKSPACE_SIZE bytes aligned to %s_WORKSPACE_ALIGN\n",
                    name, name);
    if (o->static_workspace)
        util_buf_printf(out, " * or NULL to use the static workspace inside the object: NOT reentrant then (two\n"
                             " * concurrent calls would overwrite each other's intermediate results).\n");
    else
        util_buf_printf(out, " * (may be NULL when the size is 0).  Reentrant: %s\n",
                        h->reentrant ? h->reentrant : "no global state.");
    util_buf_printf(out, " * Returns %s_OK, or %s_ERR_NULL when a required pointer is NULL%s. */\n", name, name,
                    h->codes ? ", or another of the codes above" : "");
    util_buf_printf(out, "int32_t %s_run(const %s_inputs *in, %s_outputs *out, void *workspace);\n", name, name,
                    name);
    util_buf_printf(out, "/* The same, with inputs and outputs by position. */\n");
    util_buf_printf(out, "int32_t %s_run_ptrs(const void *const inputs[], void *const outputs[], void *workspace);\n",
                    name);
    if (h->release) {
        if (h->release_doc)
            util_buf_printf(out, "%s", h->release_doc);
        else
            util_buf_printf(out, "/* Frees the device state the workspace holds (device buffers, loaded kernels); the\n"
                                 " * workspace is then fresh again, to run or to free.  Returns %s_OK (also when it\n"
                                 " * holds nothing), %s_ERR_NULL when workspace is NULL, or %s_ERR_DEVICE when the\n"
                                 " * driver failed to free something (the workspace is fresh all the same). */\n",
                            name, name, name);
        util_buf_printf(out, "int32_t %s_release(void *workspace);\n", name);
    }
    if (h->extra)
        util_buf_printf(out, "%s", h->extra);
    util_buf_printf(out, "\n#ifdef __cplusplus\n}\n#endif\n\n#endif\n");
    int ok = in && outn && !out->oom;
    free_names(in, g->n_inputs);
    free_names(outn, g->n_outputs);
    return ok ? 0 : util_error(d, util_loc_file(g->file), "out of memory writing the header");
}
