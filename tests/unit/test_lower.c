/* tests/unit/test_lower.c — lowering to loop IR (golden text), schedules,
 * memory planning and the unsupported-operator diagnostic. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/lower_graph.h"

static char *print_prog(const LoopProgram *p)
{
    UtilBuf b;
    util_buf_init(&b);
    loop_print(p, &b);
    util_buf_put(&b, "", 1);
    return b.data;
}

static LoopProgram *lower(TG *t)
{
    if (pass_infer(t->g, &t->d) != 0) {
        char m[512];
        util_diag_format(&t->d, m, sizeof m);
        fail_msg("infer: %s", m);
    }
    LoopProgram *p = pass_lower(t->g, NULL, &t->d);
    if (!p) {
        char m[512];
        util_diag_format(&t->d, m, sizeof m);
        fail_msg("lower: %s", m);
    }
    return p;
}

static void dump(TG *t)
{
    LoopProgram *p = lower(t);
    char *s = print_prog(p);
    printf("%s\n", s);
    free(s);
    PassSchedule sc = pass_schedule_cpu(256);
    pass_apply_schedule(p, &sc);
    UtilDiag d;
    util_diag_init(&d);
    assert_int_equal(pass_plan_memory(p, t->g, &d), 0);
    assert_int_equal(loop_verify(p, &d), 0);
    s = print_prog(p);
    printf("%s\n", s);
    free(s);
    loop_program_free(p);
    ir_graph_free(t->g);
}

static void test_dump(void **state)
{
    (void)state;
    TG t;
    tg_start(&t, "relu");
    int x = tg_input(&t, "x", IR_DT_F32, TG_INTS(2, 8));
    int y = tg_node(&t, IR_OP_Relu, "relu", 1, &x, 1);
    tg_output(&t, y);
    dump(&t);
    tg_start(&t, "conv");
    x = tg_input(&t, "x", IR_DT_F32, TG_INTS(1, 2, 5, 5));
    double w[2 * 2 * 9] = { 0 };
    int in[3] = { x, tg_const(&t, "w", IR_DT_F32, TG_INTS(2, 2, 3, 3), w), -1 };
    y = tg_node(&t, IR_OP_Conv, "conv", 2, in, 1);
    tg_ints(&t, IR_A_pads, TG_INTS(1, 1, 1, 1));
    int z = tg_node(&t, IR_OP_Sigmoid, "sig", 1, &y, 1);
    tg_output(&t, z);
    dump(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dump),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
