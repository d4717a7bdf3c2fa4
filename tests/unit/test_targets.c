/* tests/unit/test_targets.c — the generated header: names that are C
 * keywords or reserved identifiers, model names that could end the
 * header's comment, and what a -t gpu header adds to the CPU's (and
 * --gpu-emulate does not). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "lower/lower.h"
#include "passes/passes.h"
#include "targets/targets.h"

static void test_header_names(void **state)
{
    (void)state;
    IrGraph *g = ir_graph_new("m */ int evil = 1; /*", "t.json");
    UtilDiag d;
    util_diag_init(&d);
    int x = ir_add_tensor(g, "int", IR_TK_INPUT, util_loc_file("t"), &d);
    int y = ir_add_tensor(g, "__y", IR_TK_VALUE, util_loc_file("t"), &d);
    IrShape s = { 2, { 1, 3 } };
    ir_set_type(g, x, IR_DT_F32, &s);
    ir_add_input(g, x);
    ir_add_node(g, IR_OP_Relu, "r", 1, &x, 1, &y, util_loc_file("t"));
    ir_add_output(g, y);
    assert_int_equal(pass_infer(g, &d), 0);
    LoopProgram *p = low_graph(g, NULL, &d);
    assert_non_null(p);
    assert_int_equal(low_plan_memory(p, g, &d), 0);
    UtilBuf b;
    util_buf_init(&b);
    TgtOptions o = { .name = "m" };
    assert_int_equal(tgt_emit_header(g, p, &o, &TGT_HEADER_CPU(-1), &b, &d), 0);
    assert_non_null(strstr(b.data, "const float *t_int;"));      /* not the keyword */
    assert_non_null(strstr(b.data, "float *t_y;"));              /* no reserved '__' identifier */
    assert_non_null(strstr(b.data, "#define m_INPUT_t_int_SHAPE {1, 3}"));
    assert_non_null(strstr(b.data, "from model 'm * / int evil = 1; /*'. */"));
    util_buf_free(&b);
    loop_program_free(p);
    ir_graph_free(g);
}

/* y = relu(x) compiled with -t gpu, and with --gpu-emulate: NAME.h. */
static char *gpu_header(int emulate)
{
    IrGraph *g = ir_graph_new("m", "t.json");
    UtilDiag d;
    util_diag_init(&d);
    int x = ir_add_tensor(g, "x", IR_TK_INPUT, util_loc_file("t"), &d);
    int y = ir_add_tensor(g, "y", IR_TK_VALUE, util_loc_file("t"), &d);
    IrShape s = { 2, { 1, 3 } };
    ir_set_type(g, x, IR_DT_F32, &s);
    ir_add_input(g, x);
    ir_add_node(g, IR_OP_Relu, "r", 1, &x, 1, &y, util_loc_file("t"));
    ir_add_output(g, y);
    assert_int_equal(pass_infer(g, &d), 0);
    TgtOptions o = { .name = "m", .emit = TGT_EMIT_HEADER, .gpu_emulate = emulate };
    TgtFiles out = { 0 };
    assert_int_equal(tgt_gpu_compile(g, &o, &out, &d), 0);
    assert_int_equal(out.n, 1);
    assert_string_equal(out.f[0].name, "m.h");
    char *h = strndup(out.f[0].data.data, out.f[0].data.len);
    tgt_files_free(&out);
    ir_graph_free(g);
    return h;
}

static void test_gpu_header(void **state)
{
    (void)state;
    char *h = gpu_header(0);
    assert_non_null(strstr(h, "#define m_WORKSPACE_SIZE 80 "));   /* 64 + 8 per device buffer (x, y) */
    assert_non_null(strstr(h, "#define m_ERR_DEVICE (-2)"));
    assert_non_null(strstr(h, "Reentrant: one workspace per thread.\n"
                              " * This object has no writable globals; the runtime shares per process the CUDA driver\n"
                              " * library and one CUDA context, Halide's, with its locks (docs/targets/gpu.md).\n"));
    assert_non_null(strstr(h, "freed by the _release function below"));
    assert_non_null(strstr(h, " * driver failed to free something (the workspace is fresh all the same). */\n"
                              "int32_t m_release(void *workspace);\n"));
    free(h);
    h = gpu_header(1);   /* a CPU object with the CPU's interface: no device state to release */
    assert_null(strstr(h, "_release"));
    assert_null(strstr(h, "ERR_DEVICE"));
    assert_non_null(strstr(h, "Reentrant: no global state.\n"));
    free(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_header_names),
        cmocka_unit_test(test_gpu_header),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
