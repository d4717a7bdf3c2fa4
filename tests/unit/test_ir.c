/* tests/unit/test_ir.c — graph construction, attributes and defaults,
 * topological order, cycles, the verifier and the text printer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "ir/ir.h"
#include "passes/passes.h"

static int input(IrGraph *g, const char *name, int rank, const int64_t *dims)
{
    UtilDiag d;
    util_diag_init(&d);
    int t = ir_add_tensor(g, name, IR_TK_INPUT, util_loc_file("t"), &d);
    IrShape s = { .rank = rank };
    memcpy(s.dims, dims, (size_t)rank * sizeof(int64_t));
    ir_set_type(g, t, IR_DT_F32, &s);
    ir_add_input(g, t);
    return t;
}

static int value(IrGraph *g, const char *name)
{
    UtilDiag d;
    util_diag_init(&d);
    return ir_add_tensor(g, name, IR_TK_VALUE, util_loc_file("t"), &d);
}

static void test_tables(void **state)
{
    (void)state;
    assert_int_equal(ir_op_from_name("Conv"), IR_OP_Conv);
    assert_string_equal(ir_op_name(IR_OP_MatMul), "MatMul");
    assert_int_equal(ir_op_from_name("NoSuchOp"), IR_OP_INVALID);
    assert_int_equal(ir_op_attr_kind(IR_OP_Conv, IR_A_group), IR_AK_INT);
    assert_int_equal(ir_op_attr_kind(IR_OP_Relu, IR_A_group), IR_AK_NONE);
    assert_int_equal(ir_dtype_from_name("float32"), IR_DT_F32);
    assert_int_equal(ir_dtype_from_onnx(7), IR_DT_I64);
    assert_int_equal(ir_dtype_size(IR_DT_BF16), 2);
    assert_true(ir_f16_to_f32(ir_f32_to_f16(1.5f)) == 1.5f);
    assert_true(ir_bf16_to_f32(ir_f32_to_bf16(-2.0f)) == -2.0f);
}

static void test_attr_defaults(void **state)
{
    (void)state;
    IrGraph *g = ir_graph_new("g", "t.json");
    int64_t dims[] = { 1, 4 };
    int x = input(g, "x", 2, dims), y = value(g, "y");
    int n = ir_add_node(g, IR_OP_LeakyRelu, "lr", 1, &x, 1, &y, util_loc_file("t"));
    assert_true(ir_attr_float(&g->nodes[n], IR_A_alpha) == 0.01);
    IrAttr a = { .key = IR_A_alpha, .kind = IR_AK_FLOAT, .v.f = 0.5 };
    assert_int_equal(ir_set_attr(g, n, &a), 0);
    assert_true(ir_attr_float(&g->nodes[n], IR_A_alpha) == 0.5);
    int c = ir_add_node(g, IR_OP_Conv, "c", 1, &x, 1, &y, util_loc_file("t"));
    assert_string_equal(ir_attr_str(&g->nodes[c], IR_A_auto_pad), "NOTSET");
    assert_int_equal(ir_attr_int(&g->nodes[c], IR_A_group), 1);
    ir_graph_free(g);
}

static void test_duplicate_tensor(void **state)
{
    (void)state;
    IrGraph *g = ir_graph_new("g", "t.json");
    UtilDiag d;
    util_diag_init(&d);
    assert_true(ir_add_tensor(g, "a", IR_TK_VALUE, util_loc_line("t.json", 2, 3), &d) >= 0);
    assert_int_equal(ir_add_tensor(g, "a", IR_TK_VALUE, util_loc_line("t.json", 4, 5), &d), -1);
    assert_non_null(strstr(d.msg, "duplicate tensor name 'a'"));
    assert_int_equal(d.line, 4);
    ir_graph_free(g);
}

static void test_toposort_and_cycle(void **state)
{
    (void)state;
    IrGraph *g = ir_graph_new("g", "t.json");
    int64_t dims[] = { 2 };
    int x = input(g, "x", 1, dims), a = value(g, "a"), b = value(g, "b");
    /* b = Neg(a) listed before a = Abs(x): sorting must swap them */
    ir_add_node(g, IR_OP_Neg, "second", 1, &a, 1, &b, util_loc_file("t"));
    ir_add_node(g, IR_OP_Abs, "first", 1, &x, 1, &a, util_loc_file("t"));
    ir_add_output(g, b);
    UtilDiag d;
    util_diag_init(&d);
    assert_int_equal(ir_toposort(g, &d), 0);
    assert_string_equal(g->nodes[0].name, "first");
    assert_string_equal(g->nodes[1].name, "second");
    ir_graph_free(g);

    g = ir_graph_new("g", "t.json");
    x = input(g, "x", 1, dims);
    a = value(g, "a");
    b = value(g, "b");
    int ins[2] = { x, b };
    ir_add_node(g, IR_OP_Add, "p", 2, ins, 1, &a, util_loc_file("t"));
    ir_add_node(g, IR_OP_Neg, "q", 1, &a, 1, &b, util_loc_file("t"));
    ir_add_output(g, b);
    util_diag_init(&d);
    assert_int_equal(ir_toposort(g, &d), -1);
    assert_non_null(strstr(d.msg, "cycle"));
    ir_graph_free(g);
}

static void test_verify_undefined_input(void **state)
{
    (void)state;
    IrGraph *g = ir_graph_new("g", "t.json");
    int u = value(g, "nowhere"), y = value(g, "y");
    ir_add_node(g, IR_OP_Relu, "r", 1, &u, 1, &y, util_loc_file("t"));
    ir_add_output(g, y);
    UtilDiag d;
    util_diag_init(&d);
    assert_int_equal(pass_infer(g, &d), -1);
    assert_non_null(strstr(d.msg, "'nowhere'"));
    ir_graph_free(g);
}

static void test_printer(void **state)
{
    (void)state;
    IrGraph *g = ir_graph_new("tiny", "t.json");
    int64_t dims[] = { 1, 3 };
    int x = input(g, "x", 2, dims), y = value(g, "y");
    ir_add_node(g, IR_OP_Relu, "r", 1, &x, 1, &y, util_loc_file("t"));
    IrShape s = { 2, { 1, 3 } };
    ir_set_type(g, y, IR_DT_F32, &s);
    ir_add_output(g, y);
    UtilBuf b;
    util_buf_init(&b);
    ir_print(g, &b);
    assert_string_equal(b.data, "graph tiny (opset 21) {\n"
                                "  input %x: float32[1,3]\n"
                                "  %y: float32[1,3] = Relu(%x)  # r\n"
                                "  return %y\n"
                                "}\n");
    util_buf_free(&b);
    util_buf_init(&b);
    ir_print_dot(g, &b);
    assert_non_null(strstr(b.data, "digraph \"tiny\""));
    assert_non_null(strstr(b.data, "label=\"Relu\\nr\""));
    util_buf_free(&b);
    ir_graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tables),
        cmocka_unit_test(test_attr_defaults),
        cmocka_unit_test(test_duplicate_tensor),
        cmocka_unit_test(test_toposort_and_cycle),
        cmocka_unit_test(test_verify_undefined_input),
        cmocka_unit_test(test_printer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
