/* tests/unit/test_util.c — arena, diagnostics, name sanitizing, paths. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/util.h"

static void test_arena(void **state)
{
    (void)state;
    UtilArena a;
    util_arena_init(&a);
    char *s = util_arena_strdup(&a, "hello");
    assert_string_equal(s, "hello");
    void *big = util_arena_alloc(&a, 1 << 20);
    assert_non_null(big);
    assert_int_equal(((unsigned char *)big)[12345], 0);
    assert_null(util_arena_array(&a, SIZE_MAX / 2, 4));
    util_arena_free(&a);
}

static void test_diag_format(void **state)
{
    (void)state;
    UtilDiag d;
    char buf[256];
    util_diag_init(&d);
    assert_int_equal(util_error(&d, util_loc_line("m.json", 3, 7), "bad %s", "thing"), -1);
    util_error(&d, util_loc_line("m.json", 9, 9), "second");      /* first error wins */
    util_diag_format(&d, buf, sizeof buf);
    assert_string_equal(buf, "dlcc: m.json:3:7: error: bad thing");
    util_diag_init(&d);
    util_error(&d, util_loc_byte("w.safetensors", 42), "overlap");
    util_diag_format(&d, buf, sizeof buf);
    assert_string_equal(buf, "dlcc: w.safetensors: error: at byte 42: overlap");
}

static void test_sanitize(void **state)
{
    (void)state;
    char *s = util_sanitize_filename("gpu_0/softmax_1");
    assert_string_equal(s, "gpu_0_softmax_1");
    free(s);
    s = util_sanitize_filename("../etc/passwd");
    assert_string_equal(s, "_._etc_passwd");
    free(s);
    s = util_c_identifier("3-layer net");
    assert_string_equal(s, "_3_layer_net");
    free(s);
}

static void test_resolve(void **state)
{
    (void)state;
    UtilDiag d;
    util_diag_init(&d);
    assert_null(util_resolve_beside("tests/x/model.json", "/etc/passwd", util_loc_file("m"), &d));
    assert_non_null(strstr(d.msg, "absolute"));
    util_diag_init(&d);
    assert_null(util_resolve_beside("tests/x/model.json", "a/../../x", util_loc_file("m"), &d));
    assert_non_null(strstr(d.msg, ".."));
    util_diag_init(&d);
    char *p = util_resolve_beside("meson.build", "util/util.h", util_loc_file("m"), &d);
    assert_non_null(p);
    free(p);
}

static void test_fifo_and_commit(void **state)
{
    (void)state;
    char dir[] = "/tmp/dlcc-test-util-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char fifo[128], sub[128];
    snprintf(fifo, sizeof fifo, "%s/pipe.json", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    UtilDiag d;
    util_diag_init(&d);
    char *data;
    size_t len;
    assert_int_equal(util_read_file(fifo, 1 << 20, &data, &len, &d), -1);   /* must not block */
    assert_non_null(strstr(d.msg, "not a regular file"));
    unlink(fifo);

    /* a folder where an output file should go: nothing is written at all */
    snprintf(sub, sizeof sub, "%s/b.h", dir);
    assert_int_equal(mkdir(sub, 0700), 0);
    UtilOutSet s;
    util_outset_init(&s);
    util_diag_init(&d);
    assert_int_equal(util_outset_write(&s, dir, "a.o", "x", 1, &d), 0);
    assert_int_equal(util_outset_write(&s, dir, "b.h", "y", 1, &d), 0);
    assert_int_equal(util_outset_commit(&s, &d), -1);
    assert_non_null(strstr(d.msg, "not a regular file"));
    char a[128];
    snprintf(a, sizeof a, "%s/a.o", dir);
    assert_int_equal(access(a, F_OK), -1);
    DIR *dd = opendir(dir);
    int entries = 0;
    for (struct dirent *e; (e = readdir(dd));)
        entries += e->d_name[0] != '.';
    closedir(dd);
    assert_int_equal(entries, 1);                          /* only the folder b.h: no temporaries left */
    rmdir(sub);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_arena),
        cmocka_unit_test(test_diag_format),
        cmocka_unit_test(test_sanitize),
        cmocka_unit_test(test_resolve),
        cmocka_unit_test(test_fifo_and_commit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
