/* tests/unit/test_npy.c — the .npy reader and writer: round trips of every
 * dtype, numpy's exact header layout, format versions 2.0/3.0, and every
 * rejection with its message and byte offset. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "frontend/frontend.h"

/* Builds "\x93NUMPY" + version + header length + header + data. */
static uint8_t *make_npy(int major, const char *header, const void *data, size_t dlen, size_t *len)
{
    size_t hl = strlen(header), ls = major == 1 ? 2 : 4;
    *len = 8 + ls + hl + dlen;
    uint8_t *b = malloc(*len + 1);
    memcpy(b, "\x93NUMPY", 6);
    b[6] = (uint8_t)major;
    b[7] = 0;
    for (size_t i = 0; i < ls; i++)
        b[8 + i] = (uint8_t)(hl >> (8 * i));
    memcpy(b + 8 + ls, header, hl);
    if (dlen)
        memcpy(b + 8 + ls + hl, data, dlen);
    return b;
}

/* Parses a v1 file with this header and data; expects failure with `msg`
 * at byte `offset` (offset < 0: header offset of `at` in header + 10). */
static void expect_reject(int major, const char *header, const void *data, size_t dlen, const char *msg,
                          const char *at, int64_t offset)
{
    size_t len;
    uint8_t *b = make_npy(major, header, data, dlen, &len);
    UtilDiag d;
    util_diag_init(&d);
    IrArray a;
    assert_int_equal(fe_npy_parse("x.npy", b, len, &a, &d), -1);
    assert_null(a.data);
    if (!strstr(d.msg, msg))
        fail_msg("message '%s' lacks '%s'", d.msg, msg);
    if (at) {
        const char *p = strstr(header, at);
        assert_non_null(p);
        offset = (major == 1 ? 10 : 12) + (p - header);
    }
    assert_int_equal(d.offset, offset);
    assert_string_equal(d.file, "x.npy");
    free(b);
}

static void test_round_trip_every_dtype(void **state)
{
    (void)state;
    for (int t = 1; t < IR_DT_COUNT; t++) {
        IrArray a = { .dtype = (IrDType)t, .shape = { 2, { 2, 3 } } };
        size_t es = ir_dtype_size(a.dtype), nb = 6 * es;
        uint8_t data[48];
        for (size_t i = 0; i < nb; i++)
            data[i] = t == IR_DT_BOOL ? (uint8_t)(i & 1) : (uint8_t)(i * 37 + 11);
        a.data = data;
        UtilBuf b;
        util_buf_init(&b);
        UtilDiag d;
        util_diag_init(&d);
        if (t == IR_DT_BF16) {          /* numpy has no bfloat16 */
            assert_int_equal(fe_npy_write(&a, &b, &d), -1);
            assert_non_null(strstr(d.msg, "bfloat16 tensors cannot be stored in a .npy file"));
            util_buf_free(&b);
            continue;
        }
        assert_int_equal(fe_npy_write(&a, &b, &d), 0);
        assert_int_equal((b.len - nb) % 64, 0);              /* data starts 64-byte aligned */
        assert_int_equal(b.data[b.len - nb - 1], '\n');
        IrArray r;
        assert_int_equal(fe_npy_parse("rt.npy", (const uint8_t *)b.data, b.len, &r, &d), 0);
        assert_int_equal(r.dtype, t);
        assert_int_equal(r.shape.rank, 2);
        assert_int_equal(r.shape.dims[0], 2);
        assert_int_equal(r.shape.dims[1], 3);
        assert_memory_equal(r.data, data, nb);
        free(r.data);
        util_buf_free(&b);
    }
}

/* np.save(f, np.array([[1.5, -2, 0], [4, 5, 6]], np.float32)) writes exactly
 * these 128 header bytes (numpy 1.24: growth room for 21 digits in dim 0). */
static void test_matches_numpy_bytes(void **state)
{
    (void)state;
    float v[6] = { 1.5f, -2, 0, 4, 5, 6 };
    IrArray a = { IR_DT_F32, { 2, { 2, 3 } }, v };
    UtilBuf b;
    util_buf_init(&b);
    UtilDiag d;
    util_diag_init(&d);
    assert_int_equal(fe_npy_write(&a, &b, &d), 0);
    assert_int_equal(b.len, 128 + 24);
    assert_memory_equal(b.data, "\x93NUMPY\x01\x00\x76\x00", 10);
    const char *dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
    assert_memory_equal(b.data + 10, dict, strlen(dict));
    for (size_t i = 10 + strlen(dict); i < 127; i++)
        assert_int_equal(b.data[i], ' ');
    assert_int_equal(b.data[127], '\n');
    assert_memory_equal(b.data + 128, v, 24);
    util_buf_free(&b);

    /* scalar: "()" and no growth padding; 1-d: "(5,)" */
    double s = 3.25;
    IrArray sc = { IR_DT_F64, { 0, { 0 } }, &s };
    util_buf_init(&b);
    assert_int_equal(fe_npy_write(&sc, &b, &d), 0);
    assert_int_equal(b.len, 128 + 8);
    assert_non_null(strstr(b.data + 10, "'shape': (), }"));
    IrArray r;
    assert_int_equal(fe_npy_parse("s.npy", (const uint8_t *)b.data, b.len, &r, &d), 0);
    assert_int_equal(r.shape.rank, 0);
    assert_true(*(double *)r.data == 3.25);
    free(r.data);
    util_buf_free(&b);

    int64_t iv[5] = { -1, 0, 1, 2, INT64_MAX };
    IrArray one = { IR_DT_I64, { 1, { 5 } }, iv };
    util_buf_init(&b);
    assert_int_equal(fe_npy_write(&one, &b, &d), 0);
    assert_non_null(strstr(b.data + 10, "{'descr': '<i8', 'fortran_order': False, 'shape': (5,), }"));
    util_buf_free(&b);
    assert_false(d.has_error);
}

static void test_empty_array(void **state)
{
    (void)state;
    IrArray a = { IR_DT_BOOL, { 2, { 0, 3 } }, NULL };
    UtilBuf b;
    util_buf_init(&b);
    UtilDiag d;
    util_diag_init(&d);
    assert_int_equal(fe_npy_write(&a, &b, &d), 0);
    assert_int_equal(b.len, 128);
    IrArray r;
    assert_int_equal(fe_npy_parse("e.npy", (const uint8_t *)b.data, b.len, &r, &d), 0);
    assert_int_equal(r.dtype, IR_DT_BOOL);
    assert_int_equal(ir_array_numel(&r), 0);
    assert_int_equal(r.shape.dims[1], 3);
    free(r.data);
    util_buf_free(&b);
}

static void test_versions_and_spellings(void **state)
{
    (void)state;
    int16_t v[3] = { -7, 300, 9 };
    const char *headers[] = {
        "{'descr': '<i2', 'fortran_order': False, 'shape': (3,), }\n",
        "{\"shape\": (3L,), \"descr\": \"=i2\", \"fortran_order\": False}",     /* key order, quotes, 3L */
        "{ 'descr' : '<i2' ,'fortran_order':False,'shape':( 3 , ) }   \n",
    };
    for (int major = 1; major <= 3; major++)
        for (size_t h = 0; h < sizeof headers / sizeof *headers; h++) {
            size_t len;
            uint8_t *b = make_npy(major, headers[h], v, sizeof v, &len);
            UtilDiag d;
            util_diag_init(&d);
            IrArray r;
            assert_int_equal(fe_npy_parse("v.npy", b, len, &r, &d), 0);
            assert_int_equal(r.dtype, IR_DT_I16);
            assert_int_equal(r.shape.rank, 1);
            assert_int_equal(r.shape.dims[0], 3);
            assert_memory_equal(r.data, v, sizeof v);
            free(r.data);
            free(b);
        }
    /* single-byte and bool spellings */
    const struct { const char *descr; IrDType dt; } one[] = {
        { "|u1", IR_DT_U8 }, { "<u1", IR_DT_U8 }, { "|i1", IR_DT_I8 }, { "|b1", IR_DT_BOOL }, { "?", IR_DT_BOOL },
        { "<f2", IR_DT_F16 }, { "<u8", IR_DT_U64 }, { "<f8", IR_DT_F64 },
    };
    for (size_t k = 0; k < sizeof one / sizeof *one; k++) {
        char h[128];
        snprintf(h, sizeof h, "{'descr': '%s', 'fortran_order': False, 'shape': (), }", one[k].descr);
        uint8_t zero[8] = { 0 };
        size_t len;
        uint8_t *b = make_npy(1, h, zero, ir_dtype_size(one[k].dt), &len);
        UtilDiag d;
        util_diag_init(&d);
        IrArray r;
        assert_int_equal(fe_npy_parse("v.npy", b, len, &r, &d), 0);
        assert_int_equal(r.dtype, one[k].dt);
        free(r.data);
        free(b);
    }
}

static void test_reject_container(void **state)
{
    (void)state;
    const char *ok = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
    float v[2] = { 1, 2 };
    size_t len;
    uint8_t *b = make_npy(1, ok, v, sizeof v, &len);
    UtilDiag d;
    IrArray r;

    b[0] = 0x92;                                       /* bad magic */
    util_diag_init(&d);
    assert_int_equal(fe_npy_parse("x.npy", b, len, &r, &d), -1);
    assert_non_null(strstr(d.msg, "not a .npy file"));
    assert_int_equal(d.offset, 0);
    b[0] = 0x93;

    b[6] = 4;                                          /* unknown version */
    util_diag_init(&d);
    assert_int_equal(fe_npy_parse("x.npy", b, len, &r, &d), -1);
    assert_non_null(strstr(d.msg, "unsupported .npy format version 4.0"));
    assert_int_equal(d.offset, 6);
    b[6] = 1;

    util_diag_init(&d);                                /* truncated in the header */
    assert_int_equal(fe_npy_parse("x.npy", b, 40, &r, &d), -1);
    assert_non_null(strstr(d.msg, "truncated .npy file: the header needs"));
    assert_int_equal(d.offset, 40);

    util_diag_init(&d);                                /* truncated before the header length */
    assert_int_equal(fe_npy_parse("x.npy", b, 9, &r, &d), -1);
    assert_non_null(strstr(d.msg, "truncated .npy file: no header length"));

    util_diag_init(&d);                                /* too short for anything */
    assert_int_equal(fe_npy_parse("x.npy", b, 3, &r, &d), -1);
    assert_non_null(strstr(d.msg, "not a .npy file"));

    util_diag_init(&d);                                /* data shorter than declared */
    assert_int_equal(fe_npy_parse("x.npy", b, len - 1, &r, &d), -1);
    assert_non_null(strstr(d.msg, "truncated .npy data: the header declares 8 bytes, the file holds 7"));
    assert_int_equal(d.offset, (int64_t)len - 1);
    free(b);

    uint8_t extra[9] = { 0 };                          /* data longer than declared */
    expect_reject(1, ok, extra, sizeof extra, "the file has 1 more bytes than the .npy header declares", NULL,
                  10 + (int64_t)strlen(ok) + 8);

    /* v2 header length above the limit */
    b = make_npy(2, ok, v, sizeof v, &len);
    b[10] = 0x01;                                      /* 65536 + ... */
    util_diag_init(&d);
    assert_int_equal(fe_npy_parse("x.npy", b, len, &r, &d), -1);
    assert_non_null(strstr(d.msg, "exceeds the limit of 65536 bytes"));
    assert_int_equal(d.offset, 8);
    free(b);
}

static void test_reject_header(void **state)
{
    (void)state;
    float v[2] = { 0 };
    expect_reject(1, "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", v, 8,
                  "big-endian .npy data ('>f4') is not supported", "'>f4'", 0);
    expect_reject(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", v, 8,
                  "Fortran-order .npy arrays are not supported", "True", 0);
    expect_reject(1, "{'descr': '<f4', 'fortran_order': false, 'shape': (2,), }", v, 8,
                  "'fortran_order' must be True or False", "false", 0);
    expect_reject(1, "{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", v, 8,
                  "object arrays ('|O') cannot be read", "'|O'", 0);
    expect_reject(1, "{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", v, 8,
                  "unsupported .npy dtype '<c8'", "'<c8'", 0);
    expect_reject(1, "{'descr': 'f4', 'fortran_order': False, 'shape': (2,), }", v, 8,
                  "a byte order is required", "'f4'", 0);
    expect_reject(1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }", v, 8,
                  "structured .npy dtypes are not supported", "[(", 0);
    expect_reject(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }", v, 8,
                  "negative dimension in the .npy shape", "-2", 0);
    expect_reject(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1073741824, 4), }", v, 8,
                  "the .npy shape has too many elements", NULL, 10);
    expect_reject(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }", v, 8,
                  "dimension in the .npy shape is too large", "9999", 0);
    expect_reject(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1), }", v, 4,
                  "more than the supported 8 dimensions", "1), }", 0);
    expect_reject(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2), }", v, 8,
                  "a one-element shape needs a trailing comma", "), }", 0);
    expect_reject(1, "{'descr': '<f4', 'fortran_order': False, 'shape': [2], }", v, 8,
                  "expected '(' starting the shape tuple", "[2]", 0);
    expect_reject(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), } x", v, 8,
                  "unexpected text after the dictionary", "x", 0);
    expect_reject(1, "{'descr': '<f4', 'fortran_order': False, }", v, 8,
                  "missing key 'shape'", "}", 0);
    expect_reject(1, "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", v, 8,
                  "unexpected or repeated key 'descr'", "'descr': '<f4', 'f", 0);
    expect_reject(1, "{'descr': '<f4', 'order': 'C', 'fortran_order': False, 'shape': (2,), }", v, 8,
                  "unexpected or repeated key 'order'", "'order'", 0);
    expect_reject(1, "{'descr' '<f4', 'fortran_order': False, 'shape': (2,), }", v, 8,
                  "expected ':' after a key", "'<f4'", 0);
    expect_reject(1, "{'descr': '<f4' 'fortran_order': False, 'shape': (2,), }", v, 8,
                  "expected ',' or '}'", "'fortran", 0);
    expect_reject(1, "('descr', '<f4')", v, 8, "expected '{'", "(", 0);
    expect_reject(1, "{'descr': '<f4", v, 8, "unterminated string", NULL, 10 + 14);
    uint8_t bools[2] = { 1, 2 };
    expect_reject(3, "{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }", bools, 2,
                  "bool element 1 is 2, not 0 or 1", NULL,
                  12 + (int64_t)strlen("{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }") + 1);
}

static void test_read_file(void **state)
{
    (void)state;
    char path[] = "/tmp/dlcc_test_npy_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    uint16_t h[4] = { 0x3c00, 0xc000, 0, 0x7c00 };    /* 1, -2, 0, inf as float16 */
    IrArray a = { IR_DT_F16, { 2, { 2, 2 } }, h };
    UtilBuf b;
    util_buf_init(&b);
    UtilDiag d;
    util_diag_init(&d);
    assert_int_equal(fe_npy_write(&a, &b, &d), 0);
    assert_int_equal(write(fd, b.data, b.len), (ssize_t)b.len);
    close(fd);
    IrArray r;
    assert_int_equal(fe_npy_read(path, &r, &d), 0);
    assert_int_equal(r.dtype, IR_DT_F16);
    assert_true(ir_load_f64(r.dtype, r.data, 1) == -2.0);
    free(r.data);
    unlink(path);
    util_buf_free(&b);
    assert_int_equal(fe_npy_read(path, &r, &d), -1);
    assert_non_null(strstr(d.msg, "cannot open"));
    assert_null(r.data);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip_every_dtype),
        cmocka_unit_test(test_matches_numpy_bytes),
        cmocka_unit_test(test_empty_array),
        cmocka_unit_test(test_versions_and_spellings),
        cmocka_unit_test(test_reject_container),
        cmocka_unit_test(test_reject_header),
        cmocka_unit_test(test_read_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
