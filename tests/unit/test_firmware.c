/* tests/unit/test_firmware.c — the firmware options of code generation:
 * CgOptions.static_workspace (NAME_run_ptrs accepts workspace == NULL and
 * then uses a zero-initialized internal buffer; a caller's workspace still
 * wins), .workspace_section and .weights_section in the module, and
 * nothing of it without the option. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "codegen/codegen.h"

/* t = 2 * x (workspace, offset 64); y = t + w (w = 1, 2, 3, 4: a constant) */
static LoopProgram *program(void)
{
    static const float w_data[4] = { 1, 2, 3, 4 };
    LoopProgram *p = loop_program_new("fw");
    IrShape s = { .rank = 1, .dims = { 4 } };
    int x = loop_add_buf(p, "x", IR_DT_F32, &s, LOOP_ST_INPUT), y = loop_add_buf(p, "y", IR_DT_F32, &s, LOOP_ST_OUTPUT);
    int t = loop_add_buf(p, "t", IR_DT_F32, &s, LOOP_ST_WORKSPACE), w = loop_add_buf(p, "w", IR_DT_F32, &s, LOOP_ST_CONST);
    p->bufs[x].index = p->n_inputs++;
    p->bufs[y].index = p->n_outputs++;
    p->bufs[t].offset = 64;
    p->bufs[w].data = w_data;
    p->workspace_bytes = 64 + 16;
    int i = loop_add_var(p, "i", IR_DT_I64), j = loop_add_var(p, "j", IR_DT_I64);
    LoopStmt *s1 = loop_store(p, t, loop_var(p, i),
                              loop_bin(p, LOOP_MUL, loop_load(p, x, loop_var(p, i)), loop_float(p, IR_DT_F32, 2)));
    assert_int_equal(loop_add_kernel(p, "scale", loop_for(p, i, loop_int(p, 4), LOOP_SERIAL, s1)), 0);
    LoopStmt *s2 = loop_store(p, y, loop_var(p, j),
                              loop_bin(p, LOOP_ADD, loop_load(p, t, loop_var(p, j)), loop_load(p, w, loop_var(p, j))));
    assert_int_equal(loop_add_kernel(p, "add", loop_for(p, j, loop_int(p, 4), LOOP_SERIAL, s2)), 1);
    return p;
}

static CgRunFn jit(const LoopProgram *p, int static_ws, CgJit **j)
{
    UtilDiag d;
    util_diag_init(&d);
    CgOptions o = { .opt_level = 2, .static_workspace = static_ws };
    int rc = cg_jit(p, &o, j, &d);
    if (rc)
        print_error("%s\n", d.msg);
    assert_int_equal(rc, 0);
    return cg_jit_entry(*j);
}

static void test_static_workspace_null(void **state)
{
    (void)state;
    LoopProgram *p = program();
    CgJit *j;
    CgRunFn run = jit(p, 1, &j);
    float x[4] = { 1, 2, 3, 4 }, y[4] = { 0 };
    const void *in[] = { x };
    void *out[] = { y };
    for (int rep = 0; rep < 2; rep++) {   /* the static buffer is reused */
        x[0] = (float)(10 * rep + 1);
        assert_int_equal(run(in, out, NULL), 0);
        assert_float_equal(y[0], 2.0 * x[0] + 1, 0);
        for (int i = 1; i < 4; i++)
            assert_float_equal(y[i], 2.0 * (i + 1) + (i + 1), 0);
    }
    /* a caller's workspace is used when given: t lands at offset 64 of it */
    _Alignas(64) float ws[20] = { 0 };
    assert_int_equal(run(in, out, ws), 0);
    assert_float_equal(ws[16], 2.0 * x[0], 0);
    assert_float_equal(ws[19], 8.0, 0);
    assert_float_equal(y[3], 12.0, 0);
    cg_jit_free(j);

    /* without the option, NULL is refused */
    run = jit(p, 0, &j);
    y[0] = -7;
    assert_int_equal(run(in, out, NULL), DLCC_ERR_NULL);
    assert_float_equal(y[0], -7, 0);
    assert_int_equal(run(in, out, ws), 0);
    assert_float_equal(y[0], 2.0 * x[0] + 1, 0);
    cg_jit_free(j);
    loop_program_free(p);
}

/* The line of the IR that defines global `name` (NUL-terminated copy in buf). */
static const char *global_line(const char *ir, const char *name, char *buf, size_t n)
{
    char key[64];
    snprintf(key, sizeof key, "\n%s = ", name);
    const char *s = strstr(ir, key);
    if (!s)
        return NULL;
    s++;
    size_t len = strcspn(s, "\n");
    snprintf(buf, n, "%.*s", (int)len, s);
    return buf;
}

static const char *llvm_text(const LoopProgram *p, CgOptions o, CgResult *r)
{
    UtilDiag d;
    util_diag_init(&d);
    o.emit = CG_EMIT_LLVM | CG_EMIT_OBJ;
    cg_result_init(r);
    int rc = cg_compile(p, &o, r, &d);
    if (rc)
        print_error("%s\n", d.msg);
    assert_int_equal(rc, 0);
    util_buf_put(&r->llvm_ir, "", 1);
    return r->llvm_ir.data;
}

static void test_sections(void **state)
{
    (void)state;
    LoopProgram *p = program();
    CgResult r;
    /* -O0: at -O2 LLVM folds the four constants into the code and drops the global */
    CgOptions o = { .triple = "thumbv7em-none-eabihf", .cpu = "cortex-m4", .opt_level = 0, .static_workspace = 1,
                    .workspace_section = ".bss.dlcc_ws", .weights_section = ".rodata.dlcc_w" };
    const char *ir = llvm_text(p, o, &r);
    char line[512];
    const char *ws = global_line(ir, "@fw.workspace", line, sizeof line);
    if (!ws)
        print_error("%s\n", ir);
    assert_non_null(ws);
    assert_non_null(strstr(ws, "internal "));
    assert_non_null(strstr(ws, "global [80 x i8] zeroinitializer, section \".bss.dlcc_ws\", align 64"));
    const char *w = global_line(ir, "@fw.w", line, sizeof line);
    assert_non_null(w);
    assert_non_null(strstr(w, "private "));
    assert_non_null(strstr(w, "constant [16 x i8]"));
    assert_non_null(strstr(w, "section \".rodata.dlcc_w\", align 64"));
    cg_result_free(&r);

    /* --static-workspace without a section: .bss (no section attribute) */
    o.workspace_section = NULL;
    ir = llvm_text(p, o, &r);
    ws = global_line(ir, "@fw.workspace", line, sizeof line);
    assert_non_null(ws);
    assert_non_null(strstr(ws, "global [80 x i8] zeroinitializer, align 64"));
    cg_result_free(&r);

    /* no option: no writable global at all */
    o.static_workspace = 0;
    ir = llvm_text(p, o, &r);
    assert_null(strstr(ir, "@fw.workspace"));
    assert_null(strstr(ir, " global "));
    cg_result_free(&r);
    loop_program_free(p);
}

/* CgResult.stack_bytes: LLVM's frame sizes + 16 per function + the library
 * allowance; a 1 KiB local buffer shows in it, on the host and on Cortex-M. */
static void test_stack_bytes(void **state)
{
    (void)state;
    LoopProgram *p = loop_program_new("st");
    IrShape s4 = { .rank = 1, .dims = { 4 } }, s256 = { .rank = 1, .dims = { 256 } };
    int x = loop_add_buf(p, "x", IR_DT_F32, &s4, LOOP_ST_INPUT), y = loop_add_buf(p, "y", IR_DT_F32, &s4, LOOP_ST_OUTPUT);
    int l = loop_add_buf(p, "l", IR_DT_F32, &s256, LOOP_ST_LOCAL);
    p->bufs[x].index = p->n_inputs++;
    p->bufs[y].index = p->n_outputs++;
    int i = loop_add_var(p, "i", IR_DT_I64), j = loop_add_var(p, "j", IR_DT_I64);
    LoopStmt *body = loop_block(p);
    LoopExpr *xi = loop_load(p, x, loop_bin(p, LOOP_MOD, loop_var(p, i), loop_int(p, 4)));
    assert_int_equal(loop_block_add(p, body, loop_for(p, i, loop_int(p, 256), LOOP_SERIAL,
                                                      loop_store(p, l, loop_var(p, i), xi))), 0);
    LoopExpr *lj = loop_load(p, l, loop_bin(p, LOOP_MUL, loop_var(p, j), loop_int(p, 63)));
    assert_int_equal(loop_block_add(p, body, loop_for(p, j, loop_int(p, 4), LOOP_SERIAL,
                                                      loop_store(p, y, loop_var(p, j), lj))), 0);
    assert_int_equal(loop_add_kernel(p, "k", body), 0);
    static const char *const triples[][2] = { { NULL, NULL }, { "thumbv7em-none-eabihf", "cortex-m4" } };
    for (size_t t = 0; t < 2; t++)
        for (int opt = 0; opt <= 2; opt += 2) {
            CgOptions o = { .triple = triples[t][0], .cpu = triples[t][1], .opt_level = opt };
            CgResult r;
            cg_result_init(&r);
            UtilDiag d;
            util_diag_init(&d);
            assert_int_equal(cg_compile(p, &o, &r, &d), 0);
            if (r.stack_bytes < 1024 + CG_STACK_LIBCALL_BYTES || r.stack_bytes > 1024 + CG_STACK_LIBCALL_BYTES + 512)
                print_error("%s -O%d: stack_bytes %lld\n", triples[t][0] ? triples[t][0] : "host", opt,
                            (long long)r.stack_bytes);
            assert_true(r.stack_bytes >= 1024 + CG_STACK_LIBCALL_BYTES);
            assert_true(r.stack_bytes <= 1024 + CG_STACK_LIBCALL_BYTES + 512);
            cg_result_free(&r);

            o.emit = CG_EMIT_LLVM;   /* no object: not known */
            cg_result_init(&r);
            assert_int_equal(cg_compile(p, &o, &r, &d), 0);
            assert_int_equal(r.stack_bytes, -1);
            cg_result_free(&r);
        }
    loop_program_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_static_workspace_null),
        cmocka_unit_test(test_sections),
        cmocka_unit_test(test_stack_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
