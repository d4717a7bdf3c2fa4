/* tests/unit/test_tools.c — the work behind `dlcc run`, `dlcc info` and
 * `dlcc convert` on graphs built in memory (no model reader needed): input
 * binding and checking, output files and their names, all-or-nothing
 * writes, the summary lines, the info text and JSON. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "passes/passes.h"
#include "tools/tools.h"
#include "tests/scratch.h"

typedef struct Fixture {
    char dir[64];           /* scratch folder */
} Fixture;

static int setup(void **state)
{
    Fixture *f = calloc(1, sizeof *f);
    strcpy(f->dir, "/tmp/dlcc_test_tools_XXXXXX");
    if (!mkdtemp(f->dir))
        return -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    Fixture *f = *state;
    scratch_rm_tree(f->dir);
    free(f);
    return 0;
}

static int add_input(IrGraph *g, const char *name, IrDType dt, int rank, const int64_t *dims)
{
    UtilDiag d;
    util_diag_init(&d);
    int t = ir_add_tensor(g, name, IR_TK_INPUT, util_loc_file("m.json"), &d);
    IrShape s = { .rank = rank };
    memcpy(s.dims, dims, (size_t)rank * sizeof *dims);
    ir_set_type(g, t, dt, &s);
    ir_add_input(g, t);
    return t;
}

/* Inputs "x" (float32 [2,3]) and "in/y:0" (int64 [10]) passed straight
 * through to the outputs: the interpreter needs no kernel for that. */
static IrGraph *passthrough_graph(void)
{
    IrGraph *g = ir_graph_new("pass", "m.json");
    int64_t xs[] = { 2, 3 }, ys[] = { 10 };
    int x = add_input(g, "x", IR_DT_F32, 2, xs), y = add_input(g, "in/y:0", IR_DT_I64, 1, ys);
    ir_add_output(g, x);
    ir_add_output(g, y);
    UtilDiag d;
    util_diag_init(&d);
    assert_int_equal(pass_infer(g, &d), 0);
    return g;
}

static void write_npy(const char *path, IrDType dt, int rank, const int64_t *dims, const void *data)
{
    assert_int_equal(scratch_write_npy(path, dt, rank, dims, data), 0);
}

static const float xv[6] = { 1.5f, -2, 0, 4, 5, 6 };
static const int64_t yv[10] = { -3, 1, 2, 3, 4, 5, 6, 7, 8, 9000000000LL };

/* Writes x.npy and y.npy into the fixture folder; paths into xp, yp. */
static void write_inputs(const Fixture *f, char *xp, char *yp)
{
    int64_t xs[] = { 2, 3 }, ys[] = { 10 };
    sprintf(xp, "%s/x_in.npy", f->dir);
    sprintf(yp, "%s/y_in.npy", f->dir);
    write_npy(xp, IR_DT_F32, 2, xs, xv);
    write_npy(yp, IR_DT_I64, 1, ys, yv);
}

static void test_run_writes_outputs(void **state)
{
    Fixture *f = *state;
    char xp[128], yp[128], out[128];
    write_inputs(f, xp, yp);
    sprintf(out, "%s/out", f->dir);                    /* does not exist yet: created */
    IrGraph *g = passthrough_graph();
    DlccInputFile files[] = { { "in/y:0", yp }, { "x", xp } };
    UtilBuf sum;
    util_buf_init(&sum);
    UtilDiag d;
    util_diag_init(&d);
    assert_int_equal(dlcc_run_graph(g, 2, files, out, &sum, &d), 0);
    char want[512];
    snprintf(want, sizeof want,
             "x: float32 [2,3] = [1.5, -2, 0, 4, 5, 6] -> %s/x.npy\n"
             "in/y:0: int64 [10] = [-3, 1, 2, 3, 4, 5, 6, 7, ...] -> %s/in_y_0.npy\n", out, out);
    assert_string_equal(sum.data, want);
    assert_int_equal(scratch_count_files(out), 2);     /* no temporaries left */
    char p[256];
    IrArray r;
    snprintf(p, sizeof p, "%s/x.npy", out);
    assert_int_equal(fe_npy_read(p, &r, &d), 0);
    assert_int_equal(r.dtype, IR_DT_F32);
    assert_memory_equal(r.data, xv, sizeof xv);
    free(r.data);
    snprintf(p, sizeof p, "%s/in_y_0.npy", out);       /* '/' and ':' sanitized */
    assert_int_equal(fe_npy_read(p, &r, &d), 0);
    assert_int_equal(r.dtype, IR_DT_I64);
    assert_int_equal(r.shape.dims[0], 10);
    assert_memory_equal(r.data, yv, sizeof yv);
    free(r.data);
    util_buf_free(&sum);
    ir_graph_free(g);
}

/* Runs with these bindings; expects failure with `msg` (and the diagnostic
 * in file `file` when given) and an output folder left untouched. */
static void expect_run_error(Fixture *f, int n, const DlccInputFile *files, const char *msg, const char *file)
{
    char out[128];
    sprintf(out, "%s/out_err", f->dir);
    IrGraph *g = passthrough_graph();
    UtilBuf sum;
    util_buf_init(&sum);
    UtilDiag d;
    util_diag_init(&d);
    assert_int_equal(dlcc_run_graph(g, n, files, out, &sum, &d), -1);
    if (!strstr(d.msg, msg))
        fail_msg("message '%s' lacks '%s'", d.msg, msg);
    if (file)
        assert_string_equal(d.file, file);
    assert_int_equal(scratch_count_files(out), -1);    /* never created */
    assert_int_equal(sum.len, 0);
    util_buf_free(&sum);
    ir_graph_free(g);
}

static void test_run_input_errors(void **state)
{
    Fixture *f = *state;
    char xp[128], yp[128], bad[160], wrong[160], shape[160];
    write_inputs(f, xp, yp);

    DlccInputFile missing[] = { { "x", xp } };
    expect_run_error(f, 1, missing, "input 'in/y:0' (int64 [10]) is not given; pass -i in/y:0=FILE.npy",
                     "m.json");
    DlccInputFile unknown[] = { { "x", xp }, { "in/y:0", yp }, { "z", xp } };
    expect_run_error(f, 3, unknown, "the model has no input named 'z' (its inputs: 'x', 'in/y:0')", "m.json");
    DlccInputFile twice[] = { { "x", xp }, { "x", xp } };
    expect_run_error(f, 2, twice, "input 'x' is given twice", xp);

    double dv[6] = { 0 };
    int64_t xs[] = { 2, 3 }, s32[] = { 3, 2 };
    sprintf(wrong, "%s/wrong_dtype.npy", f->dir);
    write_npy(wrong, IR_DT_F64, 2, xs, dv);
    DlccInputFile dt[] = { { "x", wrong }, { "in/y:0", yp } };
    expect_run_error(f, 2, dt, "input 'x' must be float32 [2,3], but the file holds float64 [2,3]", wrong);

    sprintf(shape, "%s/wrong_shape.npy", f->dir);
    write_npy(shape, IR_DT_F32, 2, s32, xv);
    DlccInputFile sh[] = { { "x", shape }, { "in/y:0", yp } };
    expect_run_error(f, 2, sh, "input 'x' must be float32 [2,3], but the file holds float32 [3,2] (for a "
                     "model with symbolic dims, bind them with --input-shape", shape);

    sprintf(bad, "%s/bad.npy", f->dir);
    FILE *fp = fopen(bad, "wb");
    fwrite("\x93NUMPY\x01\x00\x07\x00{'descr", 1, 17, fp);
    fclose(fp);
    DlccInputFile mal[] = { { "x", xp }, { "in/y:0", bad } };
    expect_run_error(f, 2, mal, "unterminated string", bad);
}

static void test_run_name_collision(void **state)
{
    Fixture *f = *state;
    IrGraph *g = ir_graph_new("c", "m.json");
    int64_t s[] = { 1 };
    ir_add_output(g, add_input(g, "a/b", IR_DT_F32, 1, s));
    ir_add_output(g, add_input(g, "a_b", IR_DT_F32, 1, s));
    UtilDiag d;
    util_diag_init(&d);
    assert_int_equal(pass_infer(g, &d), 0);
    char p[128];
    sprintf(p, "%s/one.npy", f->dir);
    write_npy(p, IR_DT_F32, 1, s, xv);
    DlccInputFile files[] = { { "a/b", p }, { "a_b", p } };
    UtilBuf sum;
    util_buf_init(&sum);
    assert_int_equal(dlcc_run_graph(g, 2, files, f->dir, &sum, &d), -1);
    assert_string_equal(d.msg, "outputs 'a/b' and 'a_b' would both be written to 'a_b.npy'");
    assert_int_equal(scratch_count_files(f->dir), 1);  /* only one.npy */
    util_buf_free(&sum);
    ir_graph_free(g);
}

/* x [2,3] @ w [3,4] -> y [2,4] -> Relu -> z; types set by hand so the test
 * needs no shape rule. */
static IrGraph *matmul_graph(void)
{
    IrGraph *g = ir_graph_new("mm", "m.json");
    UtilDiag d;
    util_diag_init(&d);
    int64_t xs[] = { 2, 3 };
    int x = add_input(g, "x", IR_DT_F32, 2, xs);
    int w = ir_add_tensor(g, "w", IR_TK_CONST, util_loc_file("m.json"), &d);
    IrShape ws = { 2, { 3, 4 } }, ys = { 2, { 2, 4 } };
    ir_set_type(g, w, IR_DT_F32, &ws);
    assert_non_null(ir_alloc_data(g, w));
    int y = ir_add_tensor(g, "y", IR_TK_VALUE, util_loc_file("m.json"), &d);
    int z = ir_add_tensor(g, "z", IR_TK_VALUE, util_loc_file("m.json"), &d);
    int in[2] = { x, w };
    ir_add_node(g, IR_OP_MatMul, "mm", 2, in, 1, &y, util_loc_file("m.json"));
    ir_add_node(g, IR_OP_Relu, "r", 1, &y, 1, &z, util_loc_file("m.json"));
    ir_set_type(g, y, IR_DT_F32, &ys);
    ir_set_type(g, z, IR_DT_F32, &ys);
    ir_add_output(g, z);
    g->opset = 13;
    return g;
}

static void test_info_json(void **state)
{
    (void)state;
    IrGraph *g = matmul_graph();
    UtilBuf out;
    util_buf_init(&out);
    UtilDiag d;
    util_diag_init(&d);
    assert_int_equal(dlcc_info_render(g, 3, 1, &out, &d), 0);
    /* flops: MatMul 2*M*N*K = 2*2*4*3 = 48, Relu 1 per element = 8 */
    const char *want =
        "{\n"
        "  \"flops\": 56,\n"
        "  \"fused_nodes\": 1,\n"             /* the Relu, in the MatMul's kernel */
        "  \"initializers\": 1,\n"
        "  \"inputs\": [\n"
        "    {\n"
        "      \"dtype\": \"float32\",\n"
        "      \"name\": \"x\",\n"
        "      \"shape\": [\n"
        "        2,\n"
        "        3\n"
        "      ]\n"
        "    }\n"
        "  ],\n"
        "  \"kernels\": [\n"
        "    {\n"
        "      \"name\": \"mm\",\n"
        "      \"ops\": [\n"
        "        \"MatMul\",\n"
        "        \"Relu\"\n"
        "      ]\n"
        "    }\n"
        "  ],\n"
        "  \"kernels_after\": 1,\n"
        "  \"name\": \"mm\",\n"
        "  \"nodes\": 2,\n"
        "  \"nodes_after\": 2,\n"
        "  \"nodes_before\": 2,\n"
        "  \"ops\": {\n"
        "    \"MatMul\": 1,\n"
        "    \"Relu\": 1\n"
        "  },\n"
        "  \"ops_after\": {\n"
        "    \"MatMul\": 1,\n"
        "    \"Relu\": 1\n"
        "  },\n"
        "  \"ops_before\": {\n"
        "    \"MatMul\": 1,\n"
        "    \"Relu\": 1\n"
        "  },\n"
        "  \"opset\": 13,\n"
        "  \"opt_level\": 3,\n"
        "  \"outputs\": [\n"
        "    {\n"
        "      \"dtype\": \"float32\",\n"
        "      \"name\": \"z\",\n"
        "      \"shape\": [\n"
        "        2,\n"
        "        4\n"
        "      ]\n"
        "    }\n"
        "  ],\n"
        "  \"params\": 12,\n"
        "  \"weights_bytes\": 48,\n"
        "  \"workspace_bytes\": 0,\n"       /* the MatMul result is fused away: z is the output */
        "  \"workspace_lower_bound\": 0\n"
        "}\n";
    assert_string_equal(out.data, want);
    util_buf_free(&out);
    ir_graph_free(g);
}

static void test_info_text(void **state)
{
    (void)state;
    IrGraph *g = matmul_graph();
    int64_t xs[] = { 2, 3 };
    UtilDiag d;
    util_diag_init(&d);
    int x = ir_find_tensor(g, "x"), a = ir_add_tensor(g, "a", IR_TK_VALUE, util_loc_file("m.json"), &d);
    int b = ir_add_tensor(g, "b", IR_TK_VALUE, util_loc_file("m.json"), &d);
    ir_add_node(g, IR_OP_Relu, "r2", 1, &x, 1, &a, util_loc_file("m.json"));   /* Relu now twice */
    ir_add_node(g, IR_OP_Identity, "", 1, &a, 1, &b, util_loc_file("m.json"));
    IrShape s = { 2, { xs[0], xs[1] } };
    ir_set_type(g, a, IR_DT_F32, &s);
    ir_set_type(g, b, IR_DT_F32, &s);
    UtilBuf out;
    util_buf_init(&out);
    assert_int_equal(dlcc_info_render(g, 0, 0, &out, &d), 0);
    const char *want =
        "model: mm (opset 13)\n"
        "opt level: -O0\n"
        "inputs:\n"
        "  x: float32 [2,3]\n"
        "outputs:\n"
        "  z: float32 [2,4]\n"
        "nodes: 4\n"
        "ops:\n"
        "  Relu                     2\n"
        "  Identity                 1\n"
        "  MatMul                   1\n"
        "params: 12 in 1 initializers (48 bytes)\n"
        "flops: 62 (62)\n"
        "kernels: 3 (0 nodes fused into another node's kernel)\n"  /* Identity: a view */
        "workspace: 128 bytes (lower bound 64)\n";   /* -O0: each intermediate keeps its own 64-byte slot */
    assert_string_equal(out.data, want);
    util_buf_free(&out);
    /* at -O2 the unused Relu and Identity go (dce): counts before and after */
    util_buf_init(&out);
    assert_int_equal(dlcc_info_render(g, 2, 0, &out, &d), 0);
    assert_string_equal(out.data,
        "model: mm (opset 13)\n"
        "opt level: -O2\n"
        "inputs:\n"
        "  x: float32 [2,3]\n"
        "outputs:\n"
        "  z: float32 [2,4]\n"
        "nodes: 2 (4 before optimization)\n"
        "ops:\n"
        "  MatMul                   1\n"
        "  Relu                     1 (2 before optimization)\n"
        "  Identity                 0 (1 before optimization)\n"
        "params: 12 in 1 initializers (48 bytes)\n"
        "flops: 56 (56)\n"
        "kernels: 1 (1 nodes fused into another node's kernel)\n"
        "workspace: 0 bytes (lower bound 0)\n");
    util_buf_free(&out);
    ir_graph_free(g);
}

static void test_convert_paths(void **state)
{
    Fixture *f = *state;
    IrGraph *g = matmul_graph();
    UtilDiag d;
    char p[160];
    util_diag_init(&d);
    snprintf(p, sizeof p, "%s/", f->dir);
    assert_int_equal(dlcc_convert_graph(g, p, &d), -1);
    assert_non_null(strstr(d.msg, "the output must be a .json file name such as model.json"));
    util_diag_init(&d);
    snprintf(p, sizeof p, "%s/m.safetensors", f->dir);
    assert_int_equal(dlcc_convert_graph(g, p, &d), -1);
    assert_non_null(strstr(d.msg, "the output must be a .json file name"));
    util_diag_init(&d);
    snprintf(p, sizeof p, "%s/.json", f->dir);
    assert_int_equal(dlcc_convert_graph(g, p, &d), -1);
    assert_non_null(strstr(d.msg, "the output must be a .json file name"));
    util_diag_init(&d);
    snprintf(p, sizeof p, "%s/x.npy/m.json", f->dir);  /* parent is a file */
    FILE *fp = fopen(p, "r");
    assert_null(fp);
    char file[160];
    snprintf(file, sizeof file, "%s/x.npy", f->dir);
    fp = fopen(file, "w");
    fclose(fp);
    assert_int_equal(dlcc_convert_graph(g, p, &d), -1);
    assert_string_equal(d.msg, "the output location exists and is not a folder");
    ir_graph_free(g);
}

/* Needs fe_write_json (frontend/json_write.c); skipped while it is a stub. */
static void test_convert_writes(void **state)
{
    Fixture *f = *state;
    IrGraph *g = matmul_graph();
    UtilDiag d;
    util_diag_init(&d);
    char out[160], p[200];
    snprintf(out, sizeof out, "%s/conv/model.json", f->dir);
    int rc = dlcc_convert_graph(g, out, &d);
    ir_graph_free(g);
    snprintf(p, sizeof p, "%s/conv", f->dir);
    if (rc && strstr(d.msg, "not implemented")) {
        assert_int_equal(scratch_count_files(p), -1);  /* the created folder is removed again */
        skip();
    }
    assert_int_equal(rc, 0);
    struct stat st;
    assert_int_equal(stat(out, &st), 0);
    assert_true(st.st_size > 0);
}

/* Runs `dlcc ARGS...` in-process with stderr captured into err (NUL-ended). */
static int capture_stderr(int (*cmd)(int, char **), int argc, char **argv, const char *dir, char *err, size_t n)
{
    char path[128];
    snprintf(path, sizeof path, "%s/stderr.txt", dir);
    fflush(stderr);
    int saved = dup(2);
    FILE *f = fopen(path, "w+");
    assert_non_null(f);
    dup2(fileno(f), 2);
    int rc = cmd(argc, argv);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(f);
    size_t got = fread(err, 1, n - 1, f);
    err[got] = 0;
    fclose(f);
    return rc;
}

/* dlcc MODEL --print-after simplify --time-passes, and dlcc run -O: the
 * graph passes run, print to stderr, and keep the outputs. */
static void test_compile_passes_flags(void **state)
{
    Fixture *f = *state;
    char model[128], outdir[128], npy[128], err[8192];
    snprintf(model, sizeof model, "%s/m.json", f->dir);
    snprintf(outdir, sizeof outdir, "%s/out", f->dir);
    snprintf(npy, sizeof npy, "%s/x.npy", f->dir);
    FILE *mf = fopen(model, "w");
    assert_non_null(mf);
    fputs("{\"format\": \"dlcc-graph\", \"version\": 1, \"name\": \"m\", \"opset\": 13,\n"
          " \"inputs\": [{\"name\": \"x\", \"dtype\": \"float32\", \"shape\": [2]}],\n"
          " \"outputs\": [{\"name\": \"y\"}],\n"
          " \"initializers\": [{\"name\": \"one\", \"dtype\": \"float32\", \"shape\": [], \"values\": [1]}],\n"
          " \"nodes\": [{\"op\": \"Mul\", \"inputs\": [\"x\", \"one\"], \"outputs\": [\"t\"]},\n"
          "             {\"op\": \"Relu\", \"inputs\": [\"t\"], \"outputs\": [\"y\"]}]}\n", mf);
    fclose(mf);
    char *cargv[] = { "dlcc", model, "--print-after", "simplify", "--time-passes", "-o", outdir, NULL };
    assert_int_equal(capture_stderr(dlcc_cmd_compile, 7, cargv, f->dir, err, sizeof err), 0);
    assert_non_null(strstr(err, "*** IR after simplify (pass 4 of 14, -O2) ***\ngraph m (opset 13) {\n"
                                "  input %x: float32[2]\n  %y: float32[2] = Relu(%x)\n  return %y\n}\n"));
    assert_non_null(strstr(err, "=== pass timing (-O2) ===\n"));
    char *bad[] = { "dlcc", model, "--print-after", "fusion", "-o", outdir, NULL };
    assert_int_equal(capture_stderr(dlcc_cmd_compile, 6, bad, f->dir, err, sizeof err), 1);
    assert_non_null(strstr(err, "error: --print-after: no pass is named 'fusion' (passes: fold-constants, "));

    /* run -O: the same numbers as without */
    IrArray x = { IR_DT_F32, { 1, { 2 } }, (float[]){ -1.5f, 2.5f } };
    UtilBuf b;
    util_buf_init(&b);
    UtilDiag d;
    util_diag_init(&d);
    assert_int_equal(fe_npy_write(&x, &b, &d), 0);
    FILE *nf = fopen(npy, "wb");
    fwrite(b.data, 1, b.len, nf);
    fclose(nf);
    util_buf_free(&b);
    char in[160];
    snprintf(in, sizeof in, "x=%s", npy);
    char *rargv[] = { "dlcc", "run", model, "-O", "-i", in, "-o", outdir, NULL };
    fflush(stdout);
    assert_int_equal(dlcc_cmd_run(7, rargv + 1), 0);
    char ypath[160];
    snprintf(ypath, sizeof ypath, "%s/y.npy", outdir);
    IrArray y;
    assert_int_equal(fe_npy_read(ypath, &y, &d), 0);
    assert_float_equal(((float *)y.data)[0], 0.0, 0);
    assert_float_equal(((float *)y.data)[1], 2.5, 0);
    free(y.data);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_run_writes_outputs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_run_input_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_run_name_collision, setup, teardown),
        cmocka_unit_test(test_info_json),
        cmocka_unit_test(test_info_text),
        cmocka_unit_test_setup_teardown(test_convert_paths, setup, teardown),
        cmocka_unit_test_setup_teardown(test_convert_writes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_compile_passes_flags, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
