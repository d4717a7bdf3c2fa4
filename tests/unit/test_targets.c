/* tests/unit/test_targets.c — the generated header: names that are C
 * keywords or reserved identifiers, and model names that could end the
 * header's comment. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_header_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
