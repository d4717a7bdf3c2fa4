/* tests/unit/test_json.c — the JSON graph reader (fe_load_json), its
 * diagnostics with FILE:LINE:COL, the writer behind `dlcc convert`
 * (fe_write_json) and the round trip between them.  The safetensors tests
 * (test_safetensors.c) run from the same executable.
 *
 * Model texts are written with ' for " to keep them readable; q() converts.
 * Expected error positions are given as the text the error must point at
 * (its first character), located independently by the test, plus a few
 * hand-counted line:column pairs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/unit/fe_test.h"

/* ---------------------------------------------------------------- helpers */

int fe_test_tmpdir_setup(void **state)
{
    char *dir = strdup("/tmp/dlcc_fe_XXXXXX");
    if (!dir || !mkdtemp(dir))
        return -1;
    *state = dir;
    return 0;
}

int fe_test_tmpdir_teardown(void **state)
{
    char *dir = *state;
    DIR *dp = opendir(dir);
    struct dirent *e;
    char path[512];
    while (dp && (e = readdir(dp))) {
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            unlink(path);
        }
    }
    if (dp)
        closedir(dp);
    rmdir(dir);
    free(dir);
    return 0;
}

char *fe_test_write(const char *dir, const char *name, const void *data, size_t len)
{
    char *path = malloc(strlen(dir) + strlen(name) + 2);
    sprintf(path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    fclose(f);
    return path;
}

char *fe_test_write_st(const char *dir, const char *name, const char *header, const void *data, size_t len)
{
    size_t hl = strlen(header);
    uint8_t *buf = malloc(8 + hl + len + 1);
    for (int i = 0; i < 8; i++)
        buf[i] = (uint8_t)((uint64_t)hl >> (8 * i));
    memcpy(buf + 8, header, hl);
    if (len)
        memcpy(buf + 8 + hl, data, len);
    char *path = fe_test_write(dir, name, buf, 8 + hl + len);
    free(buf);
    return path;
}

/* ' → " (no test text needs a literal '). */
static char *q(const char *s)
{
    char *t = strdup(s);
    for (char *p = t; *p; p++)
        if (*p == '\'')
            *p = '"';
    return t;
}

/* s with the first `from` replaced by `to`; the test fails if from is absent. */
static char *replace(const char *s, const char *from, const char *to)
{
    const char *at = strstr(s, from);
    assert_non_null(at);
    size_t n = strlen(s) - strlen(from) + strlen(to);
    char *t = malloc(n + 1);
    size_t pre = (size_t)(at - s);
    memcpy(t, s, pre);
    strcpy(t + pre, to);
    strcat(t, at + strlen(from));
    return t;
}

static char *concat(const char *a, const char *b)
{
    char *t = malloc(strlen(a) + strlen(b) + 1);
    strcpy(t, a);
    strcat(t, b);
    return t;
}

/* Writes text as DIR/model.json and reads it. */
static IrGraph *load_opt(const char *dir, const char *text, const FeOptions *opt, UtilDiag *d)
{
    char *path = fe_test_write(dir, "model.json", text, strlen(text));
    util_diag_init(d);
    IrGraph *g = fe_load_json(path, text, strlen(text), opt, d);
    free(path);
    return g;
}

static IrGraph *load(const char *dir, const char *squoted, UtilDiag *d)
{
    char *t = q(squoted);
    IrGraph *g = load_opt(dir, t, NULL, d);
    free(t);
    return g;
}

/* Line and column (code points) of the first occurrence of `at` in text. */
static void position_of(const char *text, const char *at, int *line, int *col)
{
    const char *p = strstr(text, at);
    assert_non_null(p);
    *line = 1;
    *col = 1;
    for (const char *c = text; c < p; c++) {
        if (*c == '\n') {
            (*line)++;
            *col = 1;
        } else if ((*c & 0xc0) != 0x80) {
            (*col)++;
        }
    }
}

/* Loads the (already "-quoted) text and expects an error containing msg at
 * the first occurrence of `at` (at == NULL: no position). */
static void expect_error_text(const char *dir, const char *text, const char *msg, const char *at)
{
    UtilDiag d;
    IrGraph *g = load_opt(dir, text, NULL, &d);
    if (g || !strstr(d.msg, msg))
        print_error("expected error containing [%s], got [%s]\n", msg, g ? "success" : d.msg);
    assert_null(g);
    assert_non_null(strstr(d.msg, msg));
    assert_non_null(strstr(d.file, "model.json"));
    if (at) {
        int line, col;
        position_of(text, at, &line, &col);
        if (d.line != line || d.col != col)
            print_error("[%s]: expected %d:%d, got %d:%d\n", msg, line, col, d.line, d.col);
        assert_int_equal(d.line, line);
        assert_int_equal(d.col, col);
    } else {
        assert_int_equal(d.line, 0);
    }
}

static void expect_error(const char *dir, const char *squoted, const char *msg, const char *at)
{
    char *t = q(squoted), *a = at ? q(at) : NULL;
    expect_error_text(dir, t, msg, a);
    free(t);
    free(a);
}

static const IrNode *node_named(const IrGraph *g, const char *name)
{
    for (int i = 0; i < g->n_nodes; i++)
        if (strcmp(g->nodes[i].name, name) == 0)
            return &g->nodes[i];
    fail_msg("no node '%s'", name);
    return NULL;
}

static const IrTensor *tensor_named(const IrGraph *g, const char *name)
{
    int t = ir_find_tensor(g, name);
    assert_true(t >= 0);
    return &g->tensors[t];
}

/* ------------------------------------------------------------ the model */

static const char BASE[] =
    "{\n"
    "  'format': 'dlcc-graph', 'version': 1,\n"
    "  'name': 'tiny',\n"
    "  'opset': 13,\n"
    "  'inputs': [{'name': 'x', 'dtype': 'float32', 'shape': ['N', 3, 4, 4]}],\n"
    "  'outputs': [{'name': 'y'}],\n"
    "  'initializers': [\n"
    "    {'name': 'w', 'dtype': 'float32', 'shape': [2, 3, 1, 1], 'values': [1, 2, 3, 4, 5, 6]},\n"
    "    {'name': 'lo', 'dtype': 'float32', 'shape': [], 'values': [0.5]}\n"
    "  ],\n"
    "  'nodes': [\n"
    "    {'name': 'conv', 'op': 'Conv', 'inputs': ['x', 'w', ''], 'outputs': ['c'],\n"
    "     'attrs': {'kernel_shape': [1, 1], 'group': 1, 'auto_pad': 'NOTSET'}},\n"
    "    {'name': 'clip', 'op': 'Clip', 'inputs': ['c', 'lo', ''], 'outputs': ['y']}\n"
    "  ]\n"
    "}\n";

/* A model that uses every attribute kind and every value spelling. */
static const char KINDS[] =
    "{'format': 'dlcc-graph', 'version': 1, 'name': 'kinds', 'opset': 21,\n"
    " 'inputs': [{'name': 'x', 'dtype': 'float32', 'shape': [2, null, 'S']}],\n"
    " 'outputs': [{'name': 'y', 'dtype': 'float32', 'shape': [2, 'B', 3]}, {'name': 'k'}, {'name': 'f'},\n"
    "             {'name': 's'}],\n"
    " 'initializers': [\n"
    "  {'name': 'i64', 'dtype': 'int64', 'shape': [3], 'values': [-1, '9223372036854775807', 0]},\n"
    "  {'name': 'b', 'dtype': 'bool', 'shape': [2, 2], 'values': [true, false, 0, 1]},\n"
    "  {'name': 'h', 'dtype': 'float16', 'shape': [2], 'values': [1.5, -2]},\n"
    "  {'name': 'sp', 'dtype': 'float32', 'shape': [4], 'values': ['nan', 'inf', '-inf', -0.0]},\n"
    "  {'name': 'u8', 'dtype': 'uint8', 'shape': [2], 'values': [0, 255]},\n"
    "  {'name': 'd', 'dtype': 'float64', 'shape': [1], 'values': [0.1]}\n"
    " ],\n"
    " 'nodes': [\n"
    "  {'name': 'lr', 'op': 'LeakyRelu', 'inputs': ['x'], 'outputs': ['y'], 'attrs': {'alpha': 1}},\n"
    "  {'name': 'k', 'op': 'Constant', 'outputs': ['k'],\n"
    "   'attrs': {'value': {'dtype': 'int32', 'shape': [2, 1], 'values': [7, -8]}}},\n"
    "  {'op': 'Constant', 'inputs': [], 'outputs': ['f'], 'attrs': {'value_floats': [0.1, 2, 'inf']}},\n"
    "  {'name': 'strs', 'op': 'Constant', 'outputs': ['s'], 'attrs': {'value_strings': ['a', 'b\\u00e9']}},\n"
    "  {'name': 'unused_ints', 'op': 'Constant', 'outputs': ['ints'], 'attrs': {'value_ints': [3, -4]}}\n"
    " ]\n"
    "}\n";

/* ------------------------------------------------------------ valid models */

static void test_valid_inline(void **state)
{
    UtilDiag d;
    IrGraph *g = load(*state, BASE, &d);
    if (!g)
        fail_msg("%s", d.msg);
    assert_string_equal(g->name, "tiny");
    assert_int_equal(g->opset, 13);
    assert_int_equal(g->n_inputs, 1);
    assert_int_equal(g->n_outputs, 1);
    const IrTensor *x = &g->tensors[g->inputs[0]];
    assert_string_equal(x->name, "x");
    assert_int_equal(x->kind, IR_TK_INPUT);
    assert_int_equal(x->v.dtype, IR_DT_F32);
    assert_int_equal(x->v.shape.rank, 4);
    assert_int_equal(x->v.shape.dims[0], 1);          /* symbol 'N' bound to 1 */
    assert_int_equal(x->v.shape.dims[1], 3);
    assert_int_equal(x->loc.line, 5);
    assert_int_equal(x->loc.col, 14);
    assert_string_equal(g->tensors[g->outputs[0]].name, "y");

    const IrTensor *w = tensor_named(g, "w");
    assert_int_equal(w->kind, IR_TK_CONST);
    assert_int_equal(w->v.shape.rank, 4);
    assert_int_equal(w->v.shape.dims[0], 2);
    const float *wd = w->v.data;
    assert_true(wd[0] == 1.0f && wd[5] == 6.0f);
    const IrTensor *lo = tensor_named(g, "lo");
    assert_int_equal(lo->v.shape.rank, 0);
    assert_true(((const float *)lo->v.data)[0] == 0.5f);

    assert_int_equal(g->n_nodes, 2);
    const IrNode *conv = node_named(g, "conv");
    assert_int_equal(conv->op, IR_OP_Conv);
    assert_int_equal(conv->n_in, 3);
    assert_int_equal(conv->in[0], g->inputs[0]);
    assert_int_equal(conv->in[1], ir_find_tensor(g, "w"));
    assert_int_equal(conv->in[2], -1);                /* "" = absent optional input */
    assert_int_equal(conv->loc.line, 12);
    assert_int_equal(conv->loc.col, 5);
    const int64_t *ks;
    assert_int_equal(ir_attr_ints(conv, IR_A_kernel_shape, &ks), 2);
    assert_int_equal(ks[0], 1);
    assert_int_equal(ir_attr(conv, IR_A_group)->kind, IR_AK_INT);
    assert_int_equal(ir_attr_int(conv, IR_A_group), 1);
    assert_int_equal(ir_attr(conv, IR_A_auto_pad)->kind, IR_AK_STRING);
    assert_string_equal(ir_attr_str(conv, IR_A_auto_pad), "NOTSET");
    const IrNode *clip = node_named(g, "clip");
    assert_int_equal(clip->in[2], -1);
    assert_int_equal(g->tensors[clip->out[0]].producer, (int)(clip - g->nodes));
    assert_int_equal(g->tensors[conv->out[0]].producer, (int)(conv - g->nodes));
    ir_graph_free(g);
}

static void test_valid_kinds(void **state)
{
    UtilDiag d;
    IrGraph *g = load(*state, KINDS, &d);
    if (!g)
        fail_msg("%s", d.msg);
    const IrTensor *x = &g->tensors[g->inputs[0]];
    assert_int_equal(x->v.shape.dims[1], 1);          /* null → 1 */
    assert_int_equal(x->v.shape.dims[2], 1);          /* 'S' → 1 */
    const int64_t *i64 = tensor_named(g, "i64")->v.data;
    assert_true(i64[0] == -1 && i64[1] == INT64_MAX && i64[2] == 0);
    const uint8_t *b = tensor_named(g, "b")->v.data;
    assert_true(b[0] == 1 && b[1] == 0 && b[2] == 0 && b[3] == 1);
    const IrTensor *h = tensor_named(g, "h");
    assert_int_equal(h->v.dtype, IR_DT_F16);
    assert_true(ir_load_f64(IR_DT_F16, h->v.data, 0) == 1.5 && ir_load_f64(IR_DT_F16, h->v.data, 1) == -2.0);
    const float *sp = tensor_named(g, "sp")->v.data;
    assert_true(isnan(sp[0]) && sp[1] == INFINITY && sp[2] == -INFINITY && sp[3] == 0 && signbit(sp[3]));
    const uint8_t *u8 = tensor_named(g, "u8")->v.data;
    assert_int_equal(u8[1], 255);
    assert_true(((const double *)tensor_named(g, "d")->v.data)[0] == 0.1);

    const IrNode *lr = node_named(g, "lr");
    assert_int_equal(ir_attr(lr, IR_A_alpha)->kind, IR_AK_FLOAT);   /* integer accepted for FLOAT */
    assert_true(ir_attr_float(lr, IR_A_alpha) == 1.0);
    const IrAttr *v = ir_attr(node_named(g, "k"), IR_A_value);
    assert_int_equal(v->kind, IR_AK_TENSOR);
    assert_int_equal(v->v.tensor->dtype, IR_DT_I32);
    assert_int_equal(v->v.tensor->shape.rank, 2);
    assert_int_equal(((const int32_t *)v->v.tensor->data)[1], -8);
    const IrNode *fl = node_named(g, "");
    const double *f;
    assert_int_equal(ir_attr_floats(fl, IR_A_value_floats, &f), 3);
    assert_true(f[0] == (double)0.1f);               /* FLOAT attributes are float32 */
    assert_true(f[1] == 2.0 && f[2] == INFINITY);
    const IrAttr *ss = ir_attr(node_named(g, "strs"), IR_A_value_strings);
    assert_int_equal(ss->kind, IR_AK_STRINGS);
    assert_int_equal(ss->n, 2);
    assert_string_equal(ss->v.strings[1], "b\xc3\xa9");
    const IrAttr *vi = ir_attr(node_named(g, "unused_ints"), IR_A_value_ints);
    assert_int_equal(vi->kind, IR_AK_INTS);
    assert_int_equal(vi->v.ints[1], -4);

    /* outputs: declared type kept for fe_check_declared_outputs */
    const IrTensor *y = tensor_named(g, "y");
    assert_non_null(y->declared);
    assert_int_equal(y->declared->dtype, IR_DT_F32);
    assert_int_equal(y->declared->shape.dims[1], -1);
    assert_null(tensor_named(g, "k")->declared);
    ir_graph_free(g);
}

static void test_declared_outputs(void **state)
{
    UtilDiag d;
    IrGraph *g = load(*state, KINDS, &d);
    assert_non_null(g);
    int y = ir_find_tensor(g, "y");
    IrShape good = { 3, { 2, 7, 3 } }, bad = { 3, { 2, 7, 4 } };
    ir_set_type(g, y, IR_DT_F32, &good);              /* as inference would */
    util_diag_init(&d);
    assert_int_equal(fe_check_declared_outputs(g, &d), 0);
    ir_set_type(g, y, IR_DT_F32, &bad);
    assert_int_equal(fe_check_declared_outputs(g, &d), -1);
    assert_non_null(strstr(d.msg, "graph output 'y' is declared with shape [2,-1,3] but the graph computes "
                               "[2,7,4]"));
    assert_int_equal(d.line, 3);
    assert_int_equal(d.col, 14);
    util_diag_init(&d);
    ir_set_type(g, y, IR_DT_F16, &good);
    assert_int_equal(fe_check_declared_outputs(g, &d), -1);
    assert_non_null(strstr(d.msg, "declared float32 but the graph computes float16"));
    ir_graph_free(g);
}

static void test_shape_override(void **state)
{
    FeShapeOverride o = { "x", { 4, { 8, 3, 4, 4 } } };
    FeOptions opt = { 1, &o };
    UtilDiag d;
    char *t = q(BASE);
    IrGraph *g = load_opt(*state, t, &opt, &d);
    assert_non_null(g);
    assert_int_equal(g->tensors[g->inputs[0]].v.shape.dims[0], 8);
    ir_graph_free(g);
    o.shape.dims[1] = 5;                               /* the model fixes dim 1 at 3 */
    assert_null(load_opt(*state, t, &opt, &d));
    assert_non_null(strstr(d.msg, "--input-shape gives 5 for dimension 1 of input 'x'"));
    assert_int_equal(d.line, 5);
    o.name = "nope";
    assert_null(load_opt(*state, t, &opt, &d));
    assert_non_null(strstr(d.msg, "--input-shape names 'nope', which is not a graph input"));
    free(t);
}

static void test_weights(void **state)
{
    const char *dir = *state;
    float w[6] = { 1, 2, 3, 4, 5, 6 }, lo = 0.25f;
    const char *names[] = { "w", "lo_data" };
    IrArray arrays[] = { { IR_DT_F32, { 4, { 2, 3, 1, 1 } }, w }, { IR_DT_F32, { 0, { 0 } }, &lo } };
    UtilBuf b;
    util_buf_init(&b);
    UtilDiag d;
    util_diag_init(&d);
    assert_int_equal(fe_st_write(&b, 2, names, arrays, &d), 0);
    free(fe_test_write(dir, "w.safetensors", b.data, b.len));
    util_buf_free(&b);

    char *m1 = replace(BASE, "'opset': 13,", "'opset': 13, 'weights': 'w.safetensors',");
    char *m2 = replace(m1, ", 'values': [1, 2, 3, 4, 5, 6]", "");
    char *m3 = replace(m2, "'values': [0.5]", "'key': 'lo_data'");
    IrGraph *g = load(dir, m3, &d);
    if (!g)
        fail_msg("%s", d.msg);
    const float *wd = tensor_named(g, "w")->v.data;
    assert_true(wd[0] == 1.0f && wd[5] == 6.0f);
    assert_true(((const float *)tensor_named(g, "lo")->v.data)[0] == 0.25f);
    ir_graph_free(g);

    /* disagreements with the weights file */
    char *e1 = replace(m3, "'dtype': 'float32', 'shape': [2, 3, 1, 1]", "'dtype': 'float16', 'shape': [2, 3, 1, 1]");
    expect_error(dir, e1, "initializer 'w' is float16 here but float32 in the weights file", "'float16'");
    char *e2 = replace(m3, "[2, 3, 1, 1]", "[6]");
    expect_error(dir, e2, "initializer 'w' has shape [6] here but [2,3,1,1] in the weights file", "[6]");
    char *e3 = replace(m3, "'lo_data'", "'nope'");
    expect_error(dir, e3, "'key' names tensor 'nope', which is not in the weights file", "'nope'");
    char *e4 = replace(m3, "'key': 'lo_data'", "'values': [0.5], 'key': 'lo_data'");
    expect_error(dir, e4, "initializer 'lo' has both inline 'values' and a 'key'", "[0.5]");
    char *e5 = replace(m2, "'name': 'lo'", "'name': 'lo_data'");  /* values + same-named tensor */
    expect_error(dir, e5, "initializer 'lo_data' has both inline 'values' and data in the weights file", "[0.5]");
    free(e1); free(e2); free(e3); free(e4); free(e5);

    /* where the weights file may be */
    char *p1 = replace(m3, "'w.safetensors'", "'/etc/passwd'");
    expect_error(dir, p1, "is absolute", "'/etc/passwd'");
    char *p2 = replace(m3, "'w.safetensors'", "'sub/../w.safetensors'");
    expect_error(dir, p2, "contains '..'", "'sub/../w.safetensors'");
    char outside[] = "/tmp/dlcc_fe_out_XXXXXX";
    assert_non_null(mkdtemp(outside));
    char target[128], link[512];
    snprintf(target, sizeof target, "%s/w.safetensors", outside);
    snprintf(link, sizeof link, "%s/link.safetensors", dir);
    FILE *f = fopen(target, "wb");
    fclose(f);
    assert_int_equal(symlink(target, link), 0);
    char *p3 = replace(m3, "'w.safetensors'", "'link.safetensors'");
    expect_error(dir, p3, "resolves outside the model's folder", "'link.safetensors'");
    unlink(target);
    rmdir(outside);
    /* a broken weights file reports its own byte offset */
    free(fe_test_write_st(dir, "bad.safetensors", "[1]", "", 0));
    char *p4 = replace(m3, "'w.safetensors'", "'bad.safetensors'");
    char *t4 = q(p4);
    g = load_opt(dir, t4, NULL, &d);
    assert_null(g);
    assert_non_null(strstr(d.msg, "the safetensors header must be a JSON object"));
    assert_non_null(strstr(d.file, "bad.safetensors"));
    assert_int_equal(d.offset, 8);
    free(p1); free(p2); free(p3); free(p4); free(t4);
    free(m1); free(m2); free(m3);
}

/* ------------------------------------------------------------ rejections */

typedef struct Mutation {
    const char *from, *to;   /* applied to BASE */
    const char *msg;         /* expected message substring */
    const char *at;          /* the error points at the first occurrence of this */
} Mutation;

static const Mutation MUTATIONS[] = {
    { "'dlcc-graph'", "'onnx'", "'format' must be \"dlcc-graph\", not \"onnx\"", "'onnx'" },
    { "'format': 'dlcc-graph', ", "", "missing required key 'format'", "{" },
    { "'version': 1", "'version': 2", "unsupported format version 2", "2," },
    { "'version': 1", "'version': 1.0", "'version' must be an integer, not a float", "1.0" },
    { "'opset': 13", "'opset': 99", "'opset' 99 is out of range [1, 24]", "99" },
    { "'opset': 13", "'opset': '13'", "'opset' must be an integer, not a string", "'13'" },
    { "'name': 'tiny',", "'name': 'tiny', 'extra': 1,", "unknown key 'extra' in the graph", "'extra'" },
    { "'shape': ['N'", "'shap': ['N'", "unknown key 'shap' in a graph input", "'shap'" },
    { "'shape': ['N', 3, 4, 4]", "'shape': 'N34'", "a shape must be an array, not a string", "'N34'" },
    { "['N', 3, 4, 4]", "['N', 9007199254740993, 4, 4]", "a dimension 9007199254740993 is beyond 2^53",
      "9007199254740993" },
    { "['N', 3, 4, 4]", "['N', 3.0, 4, 4]", "a dimension must be an integer, not a float", "3.0" },
    { "['N', 3, 4, 4]", "['N', -3, 4, 4]", "a dimension must not be negative (got -3)", "-3" },
    { "['N', 3, 4, 4]", "['N', 3, 4, 4, 1, 1, 1, 1, 1]", "a shape has at most 8 dimensions", "['N', 3" },
    { "'dtype': 'float32', 'shape': ['N'", "'dtype': 'float33', 'shape': ['N'", "unknown or unsupported dtype 'float33' (dlcc reads float32",
      "'float33'" },
    { "'shape': [2, 3, 1, 1]", "'shape': [4194305, 4194305, 211106198978564]", "too many elements",
      "[4194305" },
    { "{'name': 'lo'", "{'name': 'x'", "duplicate tensor name 'x'", "'x', 'dtype': 'float32', 'shape': []" },
    { "{'name': 'lo'", "{'name': ''", "'name' must not be empty", "'', 'dtype'" },
    { "'op': 'Clip'", "'op': 'Clipp'", "unknown operator 'Clipp' (node 'clip', opset 13)", "'Clipp'" },
    { "'op': 'Clip'", "'op': 'Clip', 'domain': 'com.microsoft'",
      "unknown operator 'Clip' in domain 'com.microsoft' (node 'clip')", "'com.microsoft'" },
    { "'op': 'Clip', ", "", "missing required key 'op'", "{'name': 'clip'" },
    { "'group': 1", "'groups': 1", "operator Conv has no attribute 'groups'", "'groups'" },
    { "'group': 1", "'alpha': 1", "operator Conv has no attribute 'alpha'", "'alpha'" },
    { "'kernel_shape': [1, 1]", "'kernel_shape': '1x1'",
      "attribute 'kernel_shape' of Conv must be a list of integers, not a string", "'1x1'" },
    { "'group': 1", "'group': 1.5", "attribute 'group' of Conv must be an integer, not a float", "1.5" },
    { "'group': 1", "'group': [1]", "attribute 'group' of Conv must be an integer, not an array", "[1]" },
    { "'kernel_shape': [1, 1]", "'kernel_shape': [1, 1.5]",
      "an element of attribute 'kernel_shape' of Conv must be an integer, not a float", "1.5" },
    { "'auto_pad': 'NOTSET'", "'auto_pad': 0", "attribute 'auto_pad' of Conv must be a string, not an integer",
      "0}" },
    { "'outputs': ['y']}", "'outputs': ['y'], 'attrs': []}", "'attrs' must be an object, not an array",
      "[]}" },
    { "'values': [1, 2, 3, 4, 5, 6]", "'values': [1, 2, 3, 4, 5]",
      "5 values given, but shape [2,3,1,1] has 6 elements", "[1, 2, 3, 4, 5]" },
    { "'values': [1, 2, 3, 4, 5, 6]", "'values': 1", "'values' must be an array, not an integer", "1}" },
    { "'values': [1, 2, 3, 4, 5, 6]", "'values': [1, 2, 3, 4, 5, 'six']",
      "a value must be a number (or \"nan\", \"inf\", \"-inf\"), not the string \"six\"", "'six'" },
    { "'values': [1, 2, 3, 4, 5, 6]", "'values': [1, 2, 3, 4, 5, 1e39]", "value 1e+39 is out of range for float32",
      "1e39" },
    { "'shape': [], 'values': [0.5]", "'shape': [1048576, 1024], 'values': [0.5]",
      "1 values given, but shape [1048576,1024] has 1073741824 elements", "[0.5]" },
    { "'shape': [], 'values': [0.5]", "'shape': [1048576, 1048576], 'values': [0.5]",
      "the shape has too many elements (the limit is 2^31 - 1 per tensor)", "[1048576, 1048576]" },
    { "'tiny'", "'ti\\u0000ny'", "invalid JSON: \\u0000 is not allowed", "'ti" },
    { ", 'values': [0.5]", "", "initializer 'lo' has neither 'values' nor a tensor in the weights file",
      "{'name': 'lo'" },
    { "'values': [0.5]", "'values': [0.5], 'key': 'k'", "initializer 'lo' has both inline 'values' and a 'key'",
      "[0.5]" },
    { "'values': [0.5]", "'key': 'k'", "'key' names tensor 'k', which is not in the weights file (the model has "
      "no 'weights')", "'k'" },
    { "'dtype': 'float32', 'shape': [], 'values': [0.5]", "'dtype': 'int8', 'shape': [], 'values': [300]",
      "a value 300 is out of range [-128, 127]", "300" },
    { "'dtype': 'float32', 'shape': [], 'values': [0.5]", "'dtype': 'int8', 'shape': [], 'values': [0.5]",
      "a value must be an integer, not a float", "0.5" },
    { "'dtype': 'float32', 'shape': [], 'values': [0.5]", "'dtype': 'int64', 'shape': [], 'values': [9007199254740993]",
      "a value 9007199254740993 is beyond 2^53; write it as a string", "9007199254740993" },
    { "'dtype': 'float32', 'shape': [], 'values': [0.5]", "'dtype': 'bool', 'shape': [], 'values': [2]",
      "a bool value 2 is out of range [0, 1]", "2]" },
    { "['c', 'lo', '']", "['c', 'lo2', '']", "tensor 'lo2' is used but is not a graph input, an initializer or a "
      "node output", "{'name': 'clip'" },
    { "['c', 'lo', '']", "['c', 'lo', 7]", "a node input must be a string, not an integer", "7]" },
    { "'outputs': ['c']", "'outputs': ['w']", "tensor 'w' is defined twice (node output of the same name as an "
      "initializer)", "'w']" },
    { "'outputs': ['y']}", "'outputs': ['c']}", "tensor 'c' is defined twice (node output of the same name as "
      "another node output)", "'c']}" },
    { "'outputs': [{'name': 'y'}]", "'outputs': [{'name': 'z'}]", "graph output 'z' is not a graph input, an "
      "initializer or a node output", "'z'" },
    { "'outputs': [{'name': 'y'}]", "'outputs': [{'name': 'y'}, {'name': 'y'}]", "graph output 'y' is listed "
      "twice", "'y'}]" },
    { "'outputs': [{'name': 'y'}]", "'outputs': []", "the graph has no outputs", "[]," },
    { "'outputs': [{'name': 'y'}]", "'outputs': [{'name': 'y', 'dtype': 'f32'}]", "unknown or unsupported dtype 'f32'",
      "'f32'" },
    { "'inputs': [{'name': 'x', 'dtype': 'float32', 'shape': ['N', 3, 4, 4]}]", "'inputs': {'name': 'x'}",
      "'inputs' must be an array, not an object", "{'name': 'x'}" },
    /* syntax errors found by jansson */
    { "'version': 1", "'version': 1, 'name': 'a'", "invalid JSON: duplicate object key", "'name': 'tiny'" },
    { "'version': 1,", "'version': 1", "invalid JSON: '}' expected", "'name': 'tiny'" },
};

static void test_rejections(void **state)
{
    for (size_t i = 0; i < sizeof MUTATIONS / sizeof MUTATIONS[0]; i++) {
        const Mutation *m = &MUTATIONS[i];
        char *t = replace(BASE, m->from, m->to);
        expect_error(*state, t, m->msg, m->at);
        free(t);
    }
}

/* A few positions counted by hand, independent of position_of(). */
static void test_positions_by_hand(void **state)
{
    UtilDiag d;
    char *t = replace(BASE, "'group': 1", "'groups': 1");
    assert_null(load(*state, t, &d));
    assert_int_equal(d.line, 13);
    assert_int_equal(d.col, 40);
    free(t);
    t = replace(BASE, "'op': 'Clip'", "'op': 'Clipp'");
    assert_null(load(*state, t, &d));
    assert_int_equal(d.line, 14);
    assert_int_equal(d.col, 28);
    free(t);
    /* columns count code points: 'é' is one column */
    t = replace(BASE, "'name': 'tiny',\n", "'name': '\xc3\xa9', 'bad': 0,\n");
    assert_null(load(*state, t, &d));
    assert_non_null(strstr(d.msg, "unknown key 'bad'"));
    assert_int_equal(d.line, 3);
    assert_int_equal(d.col, 16);
    free(t);
}

static void test_syntax(void **state)
{
    const char *dir = *state;
    UtilDiag d;
    /* empty and blank files */
    assert_null(load_opt(dir, "", NULL, &d));
    assert_non_null(strstr(d.msg, "the model file is empty"));
    assert_null(load_opt(dir, " \n\t\n", NULL, &d));
    assert_non_null(strstr(d.msg, "the model file is empty"));
    assert_int_equal(d.line, 1);
    assert_int_equal(d.col, 1);
    /* truncated: the error is at the last character read */
    char *full = q(BASE);
    full[strstr(full, "\"inputs\": [") - full + 11] = 0;
    expect_error_text(dir, full, "invalid JSON", "[");
    free(full);
    full = q(BASE);
    full[100] = 0;
    assert_null(load_opt(dir, full, NULL, &d));
    assert_non_null(strstr(d.msg, "invalid JSON"));
    assert_int_equal(d.line, 5);
    free(full);
    /* invalid UTF-8 inside a string, reported at the byte */
    char *bad = replace(BASE, "'tiny'", "'ti\xffny'");
    expect_error(dir, bad, "invalid JSON: unable to decode byte 0xff", "\xffny");
    free(bad);
    /* trailing garbage */
    char *base = q(BASE);
    char *tr = concat(base, "xyz");
    expect_error_text(dir, tr, "invalid JSON: end of file expected", "xyz");
    free(tr);
    /* the root must be an object */
    expect_error(dir, "[1, 2]", "a dlcc graph must be a JSON object, not an array", "[1");
    /* integers jansson itself cannot hold */
    char *big = replace(BASE, "'opset': 13", "'opset': 123456789012345678901234567890");
    expect_error(dir, big, "invalid JSON: too big integer", "123456789012345678901234567890");
    free(big);
    /* a UTF-8 byte order mark is skipped */
    char *bom = concat("\xef\xbb\xbf", base);
    IrGraph *g = load_opt(dir, bom, NULL, &d);
    assert_non_null(g);
    ir_graph_free(g);
    free(bom);
    free(base);
}

/* 100,000 nested arrays must be refused before jansson recurses. */
static void test_deep_nesting(void **state)
{
    size_t n = 100000;
    const char *pre = "{\"format\": \"dlcc-graph\", \"version\": 1, \"x\": ";
    char *t = malloc(strlen(pre) + 2 * n + 4);
    strcpy(t, pre);
    size_t at = strlen(pre);
    memset(t + at, '[', n);
    memset(t + at + n, ']', n);
    strcpy(t + at + 2 * n, "}");
    UtilDiag d;
    assert_null(load_opt(*state, t, NULL, &d));
    assert_non_null(strstr(d.msg, "JSON nesting is deeper than 64 levels"));
    assert_int_equal(d.line, 1);
    /* the root object is level 1: the 64th '[' is level 65 */
    assert_int_equal(d.col, (int)(at + 63 + 1));
    free(t);
    /* brackets inside strings do not count */
    char *s = replace(BASE, "'tiny'", "'[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[['");
    IrGraph *g = load(*state, s, &d);
    assert_non_null(g);
    ir_graph_free(g);
    free(s);
}

/* ------------------------------------------------------------ writer */

static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = 0;
    fclose(f);
    *len = (size_t)n;
    return buf;
}

static void assert_attr_equal(const IrAttr *a, const IrAttr *b)
{
    assert_int_equal(a->key, b->key);
    assert_int_equal(a->kind, b->kind);
    assert_int_equal(a->n, b->n);
    switch (a->kind) {
    case IR_AK_INT: assert_true(a->v.i == b->v.i); break;
    case IR_AK_FLOAT: assert_memory_equal(&a->v.f, &b->v.f, sizeof(double)); break;
    case IR_AK_STRING: assert_string_equal(a->v.s, b->v.s); break;
    case IR_AK_INTS: assert_memory_equal(a->v.ints, b->v.ints, (size_t)a->n * sizeof(int64_t)); break;
    case IR_AK_FLOATS:
        for (int i = 0; i < a->n; i++)
            assert_true(a->v.floats[i] == b->v.floats[i] || (isnan(a->v.floats[i]) && isnan(b->v.floats[i])));
        break;
    case IR_AK_STRINGS:
        for (int i = 0; i < a->n; i++)
            assert_string_equal(a->v.strings[i], b->v.strings[i]);
        break;
    default:
        assert_int_equal(a->v.tensor->dtype, b->v.tensor->dtype);
        assert_true(ir_shape_equal(&a->v.tensor->shape, &b->v.tensor->shape));
        assert_memory_equal(a->v.tensor->data, b->v.tensor->data, ir_array_bytes(a->v.tensor));
    }
}

/* Same tensors (names, kinds, types, constant bytes), nodes and attributes. */
static void assert_graphs_equal(const IrGraph *a, const IrGraph *b)
{
    assert_string_equal(a->name, b->name);
    assert_int_equal(a->n_nodes, b->n_nodes);
    assert_int_equal(a->n_inputs, b->n_inputs);
    assert_int_equal(a->n_outputs, b->n_outputs);
    for (int i = 0; i < a->n_outputs; i++)
        assert_string_equal(a->tensors[a->outputs[i]].name, b->tensors[b->outputs[i]].name);
    for (int t = 0; t < a->n_tensors; t++) {
        const IrTensor *x = &a->tensors[t];
        int u = ir_find_tensor(b, x->name);
        assert_true(u >= 0);
        const IrTensor *y = &b->tensors[u];
        assert_int_equal(x->kind, y->kind);
        if (x->kind == IR_TK_VALUE)
            continue;
        assert_int_equal(x->v.dtype, y->v.dtype);
        assert_true(ir_shape_equal(&x->v.shape, &y->v.shape));
        if (x->kind == IR_TK_CONST)
            assert_memory_equal(x->v.data, y->v.data, ir_array_bytes(&x->v));
    }
    for (int i = 0; i < a->n_nodes; i++) {
        const IrNode *m = &a->nodes[i], *n = &b->nodes[i];
        assert_int_equal(m->op, n->op);
        assert_string_equal(m->name, n->name);
        assert_int_equal(m->n_in, n->n_in);
        assert_int_equal(m->n_out, n->n_out);
        for (int k = 0; k < m->n_in; k++)
            assert_string_equal(m->in[k] < 0 ? "" : a->tensors[m->in[k]].name,
                                n->in[k] < 0 ? "" : b->tensors[n->in[k]].name);
        for (int k = 0; k < m->n_out; k++)
            assert_string_equal(a->tensors[m->out[k]].name, b->tensors[n->out[k]].name);
        assert_int_equal(m->n_attrs, n->n_attrs);
        for (int k = 0; k < m->n_attrs; k++)
            assert_attr_equal(&m->attrs[k], &n->attrs[k]);
    }
}

/* Writes g with fe_write_json into dir as out.json (+ out.safetensors). */
static void write_graph(const IrGraph *g, const char *dir)
{
    UtilOutSet outs;
    UtilDiag d;
    util_outset_init(&outs);
    util_diag_init(&d);
    if (fe_write_json(g, &outs, dir, "out.json", "out.safetensors", &d))
        fail_msg("%s", d.msg);
    assert_int_equal(util_outset_commit(&outs, &d), 0);
}

static IrGraph *reload(const char *dir, char **text)
{
    char path[512];
    size_t len;
    snprintf(path, sizeof path, "%s/out.json", dir);
    *text = read_all(path, &len);
    UtilDiag d;
    util_diag_init(&d);
    IrGraph *g = fe_load_json(path, *text, len, NULL, &d);
    if (!g)
        fail_msg("%s:%d:%d: %s\n%s", d.file, d.line, d.col, d.msg, *text);
    return g;
}

static void test_round_trip(void **state)
{
    const char *dir = *state;
    UtilDiag d;
    /* a large initializer (> 16 elements) goes to safetensors */
    char *big = replace(KINDS, "{'name': 'd', 'dtype': 'float64', 'shape': [1], 'values': [0.1]}",
                        "{'name': 'd', 'dtype': 'float64', 'shape': [1], 'values': [0.1]},\n"
                        "  {'name': 'g', 'dtype': 'float32', 'shape': [17], 'values': [0.1, 0.2, 0.3, 1e-30, "
                        "3.4e38, -1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 'nan']}");
    IrGraph *g = load(dir, big, &d);
    if (!g)
        fail_msg("%s", d.msg);
    write_graph(g, dir);
    char *text;
    IrGraph *h = reload(dir, &text);
    assert_graphs_equal(g, h);
    assert_int_equal(h->opset, 21);
    /* the layout: one node per line, small tensors inline, large ones in the weights file */
    assert_non_null(strstr(text, "  \"weights\": \"out.safetensors\",\n"));
    assert_non_null(strstr(text, "\n    {\"name\": \"lr\", \"op\": \"LeakyRelu\", \"inputs\": [\"x\"], "
                                 "\"outputs\": [\"y\"], \"attrs\": {\"alpha\": 1}},\n"));
    assert_non_null(strstr(text, "{\"name\": \"g\", \"dtype\": \"float32\", \"shape\": [17]}\n  ],"));
    assert_non_null(strstr(text, "\"values\": [-1, \"9223372036854775807\", 0]"));
    assert_non_null(strstr(text, "\"values\": [\"nan\", \"inf\", \"-inf\", -0.0]"));
    assert_non_null(strstr(text, "\"value_floats\": [0.1, 2, \"inf\"]"));
    assert_non_null(strstr(text, "{\"name\": \"x\", \"dtype\": \"float32\", \"shape\": [2, 1, 1]}"));
    char st_path[512];
    snprintf(st_path, sizeof st_path, "%s/out.safetensors", dir);
    FeSafetensors st;
    assert_int_equal(fe_st_open(&st, st_path, &d), 0);
    assert_int_equal(st.n, 1);
    assert_string_equal(st.entries[0].name, "g");
    fe_st_close(&st);

    /* deterministic: writing the reloaded graph gives the same bytes */
    write_graph(h, dir);
    char *text2;
    IrGraph *h2 = reload(dir, &text2);
    assert_string_equal(text, text2);
    ir_graph_free(h2);
    free(text2);
    ir_graph_free(h);
    free(text);
    ir_graph_free(g);
    free(big);

    /* BASE (opset 13) round-trips too */
    g = load(dir, BASE, &d);
    assert_non_null(g);
    write_graph(g, dir);
    h = reload(dir, &text);
    assert_graphs_equal(g, h);
    assert_null(strstr(text, "weights"));              /* nothing large: no weights file */
    ir_graph_free(h);
    ir_graph_free(g);
    free(text);
}

static void test_writer_errors(void **state)
{
    UtilDiag d;
    IrGraph *g = load(*state, BASE, &d);
    assert_non_null(g);
    UtilOutSet outs;
    util_outset_init(&outs);
    util_diag_init(&d);
    /* an output file name must be a plain name */
    assert_int_equal(fe_write_json(g, &outs, *state, "sub/out.json", "out.safetensors", &d), -1);
    assert_non_null(strstr(d.msg, "invalid output file name 'sub/out.json'"));
    util_outset_abort(&outs);
    /* a tensor name that is not UTF-8 cannot be written */
    g->tensors[g->inputs[0]].name = "x\xff";
    util_diag_init(&d);
    assert_int_equal(fe_write_json(g, &outs, *state, "out.json", "out.safetensors", &d), -1);
    assert_non_null(strstr(d.msg, "is not valid UTF-8"));
    util_outset_abort(&outs);
    ir_graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_valid_inline, fe_test_tmpdir_setup, fe_test_tmpdir_teardown),
        cmocka_unit_test_setup_teardown(test_valid_kinds, fe_test_tmpdir_setup, fe_test_tmpdir_teardown),
        cmocka_unit_test_setup_teardown(test_declared_outputs, fe_test_tmpdir_setup, fe_test_tmpdir_teardown),
        cmocka_unit_test_setup_teardown(test_shape_override, fe_test_tmpdir_setup, fe_test_tmpdir_teardown),
        cmocka_unit_test_setup_teardown(test_weights, fe_test_tmpdir_setup, fe_test_tmpdir_teardown),
        cmocka_unit_test_setup_teardown(test_rejections, fe_test_tmpdir_setup, fe_test_tmpdir_teardown),
        cmocka_unit_test_setup_teardown(test_positions_by_hand, fe_test_tmpdir_setup, fe_test_tmpdir_teardown),
        cmocka_unit_test_setup_teardown(test_syntax, fe_test_tmpdir_setup, fe_test_tmpdir_teardown),
        cmocka_unit_test_setup_teardown(test_deep_nesting, fe_test_tmpdir_setup, fe_test_tmpdir_teardown),
        cmocka_unit_test_setup_teardown(test_round_trip, fe_test_tmpdir_setup, fe_test_tmpdir_teardown),
        cmocka_unit_test_setup_teardown(test_writer_errors, fe_test_tmpdir_setup, fe_test_tmpdir_teardown),
    };
    int failed = cmocka_run_group_tests_name("json", tests, NULL, NULL);
    return failed + fe_test_safetensors();
}
