/* tests/unit/test_safetensors.c — the safetensors reader and writer:
 * layout of written files, round trip, and every rejection with its byte
 * offset.  Run from test_json.c's main. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/fe_test.h"

static void test_write_layout(void **state)
{
    const char *dir = *state;
    float b[4] = { 1, 2, 3, 4 };
    int64_t a[3] = { -1, 0, INT64_MAX };
    uint8_t c[1] = { 0 };
    uint16_t z = ir_f32_to_f16(1.5f);
    const char *names[] = { "b", "a", "c", "z" };
    IrArray arrays[] = {
        { IR_DT_F32, { 2, { 2, 2 } }, b }, { IR_DT_I64, { 1, { 3 } }, a },
        { IR_DT_U8, { 1, { 0 } }, c }, { IR_DT_F16, { 0, { 0 } }, &z },
    };
    UtilBuf out, out2;
    UtilDiag d;
    util_buf_init(&out);
    util_buf_init(&out2);
    util_diag_init(&d);
    assert_int_equal(fe_st_write(&out, 4, names, arrays, &d), 0);
    const char *hdr = "{\"a\":{\"data_offsets\":[0,24],\"dtype\":\"I64\",\"shape\":[3]},"
                      "\"b\":{\"data_offsets\":[24,40],\"dtype\":\"F32\",\"shape\":[2,2]},"
                      "\"c\":{\"data_offsets\":[40,40],\"dtype\":\"U8\",\"shape\":[0]},"
                      "\"z\":{\"data_offsets\":[40,42],\"dtype\":\"F16\",\"shape\":[]}}";
    size_t hl = strlen(hdr), padded = (hl + 7) / 8 * 8;
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--)
        n = n << 8 | (uint8_t)out.data[i];
    assert_int_equal(n, padded);                       /* padded to a multiple of 8 */
    assert_memory_equal(out.data + 8, hdr, hl);
    for (size_t i = hl; i < padded; i++)
        assert_int_equal(out.data[8 + i], ' ');
    assert_int_equal(out.len, 8 + padded + 42);
    assert_memory_equal(out.data + 8 + padded, a, 24);  /* data in name order */
    assert_memory_equal(out.data + 8 + padded + 24, b, 16);

    /* deterministic: the order of the arguments does not matter */
    const char *names2[] = { "z", "c", "a", "b" };
    IrArray arrays2[] = { arrays[3], arrays[2], arrays[1], arrays[0] };
    assert_int_equal(fe_st_write(&out2, 4, names2, arrays2, &d), 0);
    assert_int_equal(out.len, out2.len);
    assert_memory_equal(out.data, out2.data, out.len);

    /* and it reads back */
    char *path = fe_test_write(dir, "t.safetensors", out.data, out.len);
    FeSafetensors st;
    assert_int_equal(fe_st_open(&st, path, &d), 0);
    assert_int_equal(st.n, 4);
    assert_int_equal(st.data_start, 8 + padded);
    const FeStEntry *e = fe_st_find(&st, "a");
    assert_non_null(e);
    assert_int_equal(e->dtype, IR_DT_I64);
    assert_int_equal(e->shape.rank, 1);
    assert_int_equal(e->shape.dims[0], 3);
    assert_memory_equal(st.bytes + st.data_start + e->begin, a, 24);
    e = fe_st_find(&st, "z");
    assert_int_equal(e->dtype, IR_DT_F16);
    assert_int_equal(e->shape.rank, 0);
    assert_int_equal(e->end - e->begin, 2);
    assert_int_equal(fe_st_find(&st, "c")->shape.dims[0], 0);
    assert_null(fe_st_find(&st, "nope"));
    fe_st_close(&st);
    free(path);

    /* duplicate names are refused by the writer */
    const char *dup[] = { "a", "a" };
    util_buf_free(&out2);
    util_buf_init(&out2);
    assert_int_equal(fe_st_write(&out2, 2, dup, arrays, &d), -1);
    assert_non_null(strstr(d.msg, "duplicate safetensors tensor name 'a'"));
    util_buf_free(&out);
    util_buf_free(&out2);
}

static void test_metadata(void **state)
{
    float w[2] = { 3, 4 };
    const char *hdr = "{\"__metadata__\":{\"format\":\"pt\"},"
                      "\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}  ";
    char *path = fe_test_write_st(*state, "m.safetensors", hdr, w, sizeof w);
    FeSafetensors st;
    UtilDiag d;
    util_diag_init(&d);
    assert_int_equal(fe_st_open(&st, path, &d), 0);
    assert_int_equal(st.n, 1);
    const FeStEntry *e = fe_st_find(&st, "w");
    assert_non_null(e);
    float got[2];
    memcpy(got, st.bytes + st.data_start + e->begin, sizeof got);
    assert_true(got[0] == 3.0f && got[1] == 4.0f);
    fe_st_close(&st);
    free(path);
}

typedef struct StCase {
    const char *header;
    size_t data_len;         /* zero bytes of data after the header */
    const char *msg;
    const char *at;          /* error at 8 + offset of this in header; NULL: at `offset` */
    int64_t offset;
} StCase;

#define E(dt, shape, offs) "{\"dtype\":\"" dt "\",\"shape\":" shape ",\"data_offsets\":" offs "}"

static const StCase CASES[] = {
    { "[1]", 0, "the safetensors header must be a JSON object, not an array", "[1]", 0 },
    { "{\"a\":", 0, "invalid JSON", ":", 0 },
    { "{\"a\":" E("F8_E4M3", "[1]", "[0,1]") "}", 1, "unknown or unsupported dtype 'F8_E4M3' (dlcc reads F32, F16",
      "\"F8_E4M3\"", 0 },
    { "{\"a\":" E("F32", "[-1]", "[0,4]") "}", 4, "a dimension must not be negative (got -1)", "-1", 0 },
    { "{\"a\":" E("F32", "[4194305,4194305,211106198978564]", "[0,4]") "}", 4,
      "the shape has too many elements", "[4194305", 0 },
    { "{\"a\":" E("F32", "[1]", "[8,4]") "}", 8, "tensor 'a': data_offsets end 4 is before begin 8", "[8,4]", 0 },
    { "{\"a\":" E("F32", "[2]", "[0,4]") "}", 4, "tensor 'a': shape and dtype need 8 bytes but data_offsets span 4",
      "[0,4]", 0 },
    { "{\"a\":" E("F32", "[2]", "[0,8]") "}", 4,
      "tensor 'a': data_offsets end 8 is past the end of the data section (4 bytes)", "[0,8]", 0 },
    { "{\"a\":" E("F32", "[1]", "[0,4]") ",\"b\":" E("F32", "[1]", "[8,12]") "}", 12,
      "tensor 'b' starts at 8, leaving bytes 4..8 of the data section unused", "[8,12]", 0 },
    { "{\"a\":" E("F32", "[2]", "[0,8]") ",\"b\":" E("F32", "[1]", "[4,8]") "}", 8,
      "tensor 'b' overlaps the bytes of another tensor", "[4,8]", 0 },
    { "{\"a\":" E("F32", "[1]", "[0,4]") "}", 6, "the data section has 2 bytes after the last tensor", NULL, -1 },
    { "{\"a\":" E("F32", "[1]", "[0,4]") ",\"a\":" E("I32", "[1]", "[0,4]") "}", 4,
      "invalid JSON: duplicate object key", "\"a\":{\"dtype\":\"I32\"", 0 },
    { "{\"__metadata__\":{\"k\":1}}", 0, "'__metadata__' values must be strings, not an integer", "1}", 0 },
    { "{\"__metadata__\":[]}", 0, "'__metadata__' must be an object, not an array", "[]", 0 },
    { "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4],\"x\":1}}", 4,
      "unknown key 'x' in a safetensors entry", "\"x\"", 0 },
    { "{\"a\":{\"dtype\":\"F32\",\"shape\":[1]}}", 4, "missing required key 'data_offsets'", "{\"dtype\"", 0 },
    { "{\"a\":" E("F32", "[1]", "[0]") "}", 4, "'data_offsets' must have 2 elements [begin, end], not 1", "[0]", 0 },
    { "{\"a\":" E("F32", "[1]", "[0,4.0]") "}", 4, "a data offset must be an integer, not a float", "4.0", 0 },
    { "{\"a\":" E("F32", "1", "[0,4]") "}", 4, "a shape must be an array, not an integer", "1,", 0 },
};

static void test_rejections(void **state)
{
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        const StCase *c = &CASES[i];
        uint8_t zeros[64] = { 0 };
        char *path = fe_test_write_st(*state, "bad.safetensors", c->header, zeros, c->data_len);
        FeSafetensors st;
        UtilDiag d;
        util_diag_init(&d);
        int rc = fe_st_open(&st, path, &d);
        if (rc == 0 || !strstr(d.msg, c->msg))
            print_error("case %zu: expected [%s], got [%s]\n", i, c->msg, rc ? d.msg : "success");
        assert_int_equal(rc, -1);
        assert_non_null(strstr(d.msg, c->msg));
        assert_string_equal(d.file, path);
        int64_t want = c->at ? 8 + (int64_t)(strstr(c->header, c->at) - c->header)
                             : 8 + (int64_t)strlen(c->header) + 4;   /* trailing-bytes case */
        if (d.offset != want)
            print_error("case %zu: expected byte %lld, got %lld\n", i, (long long)want, (long long)d.offset);
        assert_int_equal(d.offset, want);
        assert_null(st.entries);                        /* closed on error */
        free(path);
    }
}

static void test_bad_lengths(void **state)
{
    FeSafetensors st;
    UtilDiag d;
    /* shorter than the length field */
    util_diag_init(&d);
    char *p = fe_test_write(*state, "s.safetensors", "abcd", 4);
    assert_int_equal(fe_st_open(&st, p, &d), -1);
    assert_non_null(strstr(d.msg, "the file is 4 bytes, too short for a safetensors header"));
    assert_int_equal(d.offset, 0);
    free(p);
    /* header length beyond the file */
    uint8_t buf[16] = { 0xe8, 0x03, 0, 0, 0, 0, 0, 0, '{', '}' };
    util_diag_init(&d);
    p = fe_test_write(*state, "s.safetensors", buf, 10);
    assert_int_equal(fe_st_open(&st, p, &d), -1);
    assert_non_null(strstr(d.msg, "the safetensors header length 1000 runs past the end of the file (10 bytes)"));
    assert_int_equal(d.offset, 0);
    free(p);
    /* header length beyond the limit (checked before the file size) */
    buf[0] = buf[1] = 0;
    buf[3] = 0x10;                                     /* 256 MiB */
    util_diag_init(&d);
    p = fe_test_write(*state, "s.safetensors", buf, 10);
    assert_int_equal(fe_st_open(&st, p, &d), -1);
    assert_non_null(strstr(d.msg, "the safetensors header length 268435456 exceeds the limit of 104857600 bytes"));
    free(p);
    /* a missing file */
    util_diag_init(&d);
    assert_int_equal(fe_st_open(&st, "/nonexistent/x.safetensors", &d), -1);
    assert_non_null(strstr(d.msg, "cannot open"));
    /* nesting is limited before jansson parses the header */
    char deep[256] = "{\"x\":";
    memset(deep + 5, '[', 100);
    memset(deep + 105, ']', 100);
    strcpy(deep + 205, "}");
    util_diag_init(&d);
    p = fe_test_write_st(*state, "d.safetensors", deep, "", 0);
    assert_int_equal(fe_st_open(&st, p, &d), -1);
    assert_non_null(strstr(d.msg, "JSON nesting is deeper than 64 levels"));
    assert_int_equal(d.offset, 8 + 5 + 63);            /* the 64th '[' is level 65 */
    free(p);
    /* an empty header object is a valid, empty file */
    util_diag_init(&d);
    p = fe_test_write_st(*state, "e.safetensors", "{}      ", "", 0);
    assert_int_equal(fe_st_open(&st, p, &d), 0);
    assert_int_equal(st.n, 0);
    assert_null(fe_st_find(&st, "a"));
    fe_st_close(&st);
    free(p);
}

int fe_test_safetensors(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_write_layout, fe_test_tmpdir_setup, fe_test_tmpdir_teardown),
        cmocka_unit_test_setup_teardown(test_metadata, fe_test_tmpdir_setup, fe_test_tmpdir_teardown),
        cmocka_unit_test_setup_teardown(test_rejections, fe_test_tmpdir_setup, fe_test_tmpdir_teardown),
        cmocka_unit_test_setup_teardown(test_bad_lengths, fe_test_tmpdir_setup, fe_test_tmpdir_teardown),
    };
    return cmocka_run_group_tests_name("safetensors", tests, NULL, NULL);
}
