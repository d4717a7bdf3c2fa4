/* tests/unit/test_reliability.c — pieces of the reliability work that the
 * bad-input suite (tests/errors) cannot reach through the command line:
 * fe_st_parse on bytes in memory (the fuzzing entry of the safetensors
 * reader) and the output file names of `dlcc run`. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/frontend.h"

/* A safetensors image: 8-byte length, header, data. */
static size_t image(uint8_t *buf, const char *header, const void *data, size_t data_len)
{
    size_t hl = strlen(header);
    for (int i = 0; i < 8; i++)
        buf[i] = (uint8_t)((uint64_t)hl >> (8 * i));
    memcpy(buf + 8, header, hl);
    memcpy(buf + 8 + hl, data, data_len);
    return 8 + hl + data_len;
}

static void test_st_parse_memory(void **state)
{
    (void)state;
    uint8_t buf[256];
    float w[3] = { 1.5f, -2, 4 };
    size_t n = image(buf, "{\"w\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,12]},"
                          "\"__metadata__\":{\"k\":\"v\"}}", w, sizeof w);
    FeSafetensors st;
    UtilDiag d;
    util_diag_init(&d);
    assert_int_equal(fe_st_parse(&st, "mem.safetensors", buf, n, &d), 0);
    assert_int_equal(st.n, 1);
    assert_int_equal(st.len, n);
    assert_int_equal(st.data_start, n - 12);
    const FeStEntry *e = fe_st_find(&st, "w");
    assert_non_null(e);
    assert_int_equal(e->dtype, IR_DT_F32);
    assert_int_equal(e->shape.rank, 1);
    assert_int_equal(e->shape.dims[0], 3);
    assert_int_equal(e->begin, 0);
    assert_int_equal(e->end, 12);
    float got[3];
    memcpy(got, st.bytes + st.data_start + e->begin, sizeof got);
    assert_float_equal(got[0], 1.5f, 0);
    assert_float_equal(got[1], -2.0f, 0);
    assert_float_equal(got[2], 4.0f, 0);
    buf[n - 1] ^= 0xff;                 /* the reader owns a copy */
    assert_int_equal(st.bytes[n - 1], ((uint8_t *)w)[11]);
    assert_string_equal(st.path, "mem.safetensors");
    fe_st_close(&st);
    assert_int_equal(st.n, 0);
    assert_null(st.bytes);
}

static void test_st_parse_errors(void **state)
{
    (void)state;
    static const struct { const char *header; size_t data; const char *msg; } bad[] = {
        { "[1]", 0, "at byte 8: the safetensors header must be a JSON object, not an array" },
        { "{\"w\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[12,0]}}", 12,
          "data_offsets end 0 is before begin 12" },
        { "{\"w\":{\"dtype\":\"F32\",\"shape\":[4194305,4194305,211106198978564],\"data_offsets\":[0,4]}}", 4,
          "too many elements" },
        { "{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 12,
          "the data section has 4 bytes after the last tensor that no tensor uses" },
    };
    uint8_t buf[512], zeros[16] = { 0 };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        size_t n = image(buf, bad[i].header, zeros, bad[i].data);
        FeSafetensors st;
        UtilDiag d;
        char msg[2048];
        util_diag_init(&d);
        assert_int_equal(fe_st_parse(&st, "bad.safetensors", buf, n, &d), -1);
        util_diag_format(&d, msg, sizeof msg);
        assert_non_null(strstr(msg, "dlcc: bad.safetensors: error: at byte "));
        if (!strstr(msg, bad[i].msg))
            fail_msg("case %zu: '%s' lacks '%s'", i, msg, bad[i].msg);
        assert_null(st.bytes);
        assert_null(st.entries);
    }
    /* shorter than the length field; a length past the end; an empty buffer */
    UtilDiag d;
    FeSafetensors st;
    util_diag_init(&d);
    assert_int_equal(fe_st_parse(&st, "e.safetensors", NULL, 0, &d), -1);
    assert_non_null(strstr(d.msg, "the file is 0 bytes, too short for a safetensors header"));
    memset(buf, 0, 16);
    buf[1] = 1;                         /* 256 */
    util_diag_init(&d);
    assert_int_equal(fe_st_parse(&st, "p.safetensors", buf, 16, &d), -1);
    assert_non_null(strstr(d.msg, "the safetensors header length 256 runs past the end of the file (16 bytes)"));
}

/* Output files of `dlcc run` are named by util_sanitize_filename: a model's
 * tensor name never chooses a path. */
static void test_output_names(void **state)
{
    (void)state;
    static const char *const cases[][2] = {
        { "../../evil", "_._.._evil" }, { "/etc/passwd", "_etc_passwd" }, { "..", "_." },
        { ".hidden", "_hidden" }, { "gpu_0/softmax_1", "gpu_0_softmax_1" }, { "a b\\c:d", "a_b_c_d" },
        { "", "_" }, { "ok-1.2_x", "ok-1.2_x" }, { "\xc3\xa9t\xc3\xa9", "__t__" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *s = util_sanitize_filename(cases[i][0]);
        assert_non_null(s);
        assert_string_equal(s, cases[i][1]);
        assert_null(strchr(s, '/'));
        free(s);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_st_parse_memory),
        cmocka_unit_test(test_st_parse_errors),
        cmocka_unit_test(test_output_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
