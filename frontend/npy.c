/* frontend/npy.c — NumPy .npy tensors: reader for format versions 1.0, 2.0
 * and 3.0, writer for version 1.0.
 *
 * Layout: "\x93NUMPY", major and minor version bytes, the header length
 * (uint16 LE for 1.x, uint32 LE for 2.x/3.x), the header, then the raw data.
 * The header is the repr of a Python dict with exactly the keys 'descr',
 * 'fortran_order' and 'shape', e.g.
 *     {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
 * followed by spaces and a newline.  This file parses exactly that literal
 * (strings, True/False, a tuple of non-negative integers) and nothing more of
 * Python; anything else is an error at the byte where it goes wrong.
 */
#include "frontend/frontend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char npy_magic[6] = { '\x93', 'N', 'U', 'M', 'P', 'Y' };

/* ------------------------------------------------------------ header parse */

typedef struct NpyParser {
    const char *path;
    const uint8_t *p;       /* header text */
    size_t len, pos;
    int64_t base;           /* file offset of p[0] */
    UtilDiag *d;
} NpyParser;

static int np_error(NpyParser *ps, const char *msg, const char *arg)
{
    return util_error(ps->d, util_loc_byte(ps->path, ps->base + (int64_t)ps->pos), msg, arg);
}

static void np_ws(NpyParser *ps)
{
    while (ps->pos < ps->len && (ps->p[ps->pos] == ' ' || ps->p[ps->pos] == '\t' ||
                                 ps->p[ps->pos] == '\n' || ps->p[ps->pos] == '\r'))
        ps->pos++;
}

static int np_peek(NpyParser *ps)
{
    np_ws(ps);
    return ps->pos < ps->len ? ps->p[ps->pos] : -1;
}

static int np_expect(NpyParser *ps, char c, const char *what)
{
    if (np_peek(ps) != c)
        return np_error(ps, "malformed .npy header: expected %s", what);
    ps->pos++;
    return 0;
}

/* A quoted Python string ('...' or "...") of printable ASCII, no escapes
 * (no valid header needs them).  Copies at most n-1 characters into buf. */
static int np_string(NpyParser *ps, char *buf, size_t n)
{
    int q = np_peek(ps);
    if (q != '\'' && q != '"')
        return np_error(ps, "malformed .npy header: expected %s", "a quoted string");
    size_t start = ++ps->pos, k = 0;
    while (ps->pos < ps->len && ps->p[ps->pos] != q) {
        uint8_t c = ps->p[ps->pos];
        if (c < 0x20 || c > 0x7e || c == '\\')
            return np_error(ps, "malformed .npy header: %s", "unexpected character in a string");
        if (k + 1 >= n) {
            ps->pos = start;
            return np_error(ps, "malformed .npy header: %s", "string too long");
        }
        buf[k++] = (char)c;
        ps->pos++;
    }
    if (ps->pos >= ps->len)
        return np_error(ps, "malformed .npy header: %s", "unterminated string");
    buf[k] = 0;
    ps->pos++;
    return 0;
}

static int np_word(NpyParser *ps, const char *w)
{
    size_t n = strlen(w);
    if (ps->len - ps->pos >= n && memcmp(ps->p + ps->pos, w, n) == 0) {
        ps->pos += n;
        return 1;
    }
    return 0;
}

static int np_bool(NpyParser *ps, int *v)
{
    np_ws(ps);
    if (np_word(ps, "True"))
        *v = 1;
    else if (np_word(ps, "False"))
        *v = 0;
    else
        return np_error(ps, "malformed .npy header: 'fortran_order' must be %s", "True or False");
    return 0;
}

/* A tuple of non-negative integers: "()", "(5,)", "(2, 3)", "(2, 3,)".
 * Python 2 era files may write "3L". */
static int np_shape(NpyParser *ps, IrShape *s)
{
    if (np_expect(ps, '(', "'(' starting the shape tuple"))
        return -1;
    s->rank = 0;
    int need_comma_for_one = 1;
    for (;;) {
        int c = np_peek(ps);
        if (c == ')') {
            if (s->rank == 1 && need_comma_for_one)
                return np_error(ps, "malformed .npy header: %s", "a one-element shape needs a trailing comma");
            ps->pos++;
            return 0;
        }
        if (c == '-')
            return np_error(ps, "negative dimension in the .npy shape%s", "");
        if (c < '0' || c > '9')
            return np_error(ps, "malformed .npy header: expected %s", "a dimension or ')' in the shape");
        if (s->rank >= IR_MAX_RANK)
            return np_error(ps, "the .npy shape has more than the supported %s dimensions", "8");
        size_t start = ps->pos;
        int64_t v = 0;
        while (ps->pos < ps->len && ps->p[ps->pos] >= '0' && ps->p[ps->pos] <= '9') {
            if (util_mul_overflow_i64(v, 10, &v) || util_add_overflow_i64(v, ps->p[ps->pos] - '0', &v) ||
                v > IR_MAX_ELEMENTS) {
                ps->pos = start;
                return np_error(ps, "dimension in the .npy shape is too large%s", "");
            }
            ps->pos++;
        }
        if (ps->pos < ps->len && ps->p[ps->pos] == 'L')
            ps->pos++;
        s->dims[s->rank++] = v;
        c = np_peek(ps);
        if (c == ',') {
            ps->pos++;
            need_comma_for_one = 0;
        } else if (c != ')') {
            return np_error(ps, "malformed .npy header: expected %s", "',' or ')' in the shape");
        }
    }
}

/* Maps a descr ('<f4', '|u1', '=i8', ...) to a dtype. */
static int np_descr(NpyParser *ps, size_t at, const char *s, IrDType *dt)
{
    size_t save = ps->pos;
    ps->pos = at;
    char order = s[0];
    const char *t = s;
    if (order == '<' || order == '>' || order == '|' || order == '=')
        t = s + 1;
    else
        order = 0;
    IrDType r = IR_DT_UNDEF;
    if (t[0] && t[1] && !t[2]) {
        char k = t[0], w = t[1];
        if (k == 'f')
            r = w == '2' ? IR_DT_F16 : w == '4' ? IR_DT_F32 : w == '8' ? IR_DT_F64 : IR_DT_UNDEF;
        else if (k == 'i')
            r = w == '1' ? IR_DT_I8 : w == '2' ? IR_DT_I16 : w == '4' ? IR_DT_I32 : w == '8' ? IR_DT_I64
                                                                                          : IR_DT_UNDEF;
        else if (k == 'u')
            r = w == '1' ? IR_DT_U8 : w == '2' ? IR_DT_U16 : w == '4' ? IR_DT_U32 : w == '8' ? IR_DT_U64
                                                                                          : IR_DT_UNDEF;
        else if (k == 'b')
            r = w == '1' ? IR_DT_BOOL : IR_DT_UNDEF;
    } else if (t[0] == '?' && !t[1]) {
        r = IR_DT_BOOL;
    }
    if (t[0] == 'O')
        return np_error(ps, "object arrays ('%s') cannot be read; save plain numeric arrays", s);
    if (r == IR_DT_UNDEF)
        return np_error(ps, "unsupported .npy dtype '%s' (float16/32/64, int8..64, uint8..64 and bool are "
                            "supported)", s);
    if (ir_dtype_size(r) > 1) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        int native_ok = 0;
#else
        int native_ok = 1;
#endif
        if (order == '>' || (order == '=' && !native_ok))
            return np_error(ps, "big-endian .npy data ('%s') is not supported; convert it with "
                                "a.astype(a.dtype.newbyteorder('<'))", s);
        if (order != '<' && order != '=')
            return np_error(ps, "unsupported .npy dtype '%s': a byte order is required", s);
    }
    *dt = r;
    ps->pos = save;
    return 0;
}

static int np_header(NpyParser *ps, IrDType *dt, IrShape *shape)
{
    int have_descr = 0, have_fortran = 0, have_shape = 0, fortran = 0;
    if (np_expect(ps, '{', "'{'"))
        return -1;
    while (np_peek(ps) != '}') {
        char key[32];
        size_t key_at = (np_ws(ps), ps->pos);
        if (np_string(ps, key, sizeof key) || np_expect(ps, ':', "':' after a key"))
            return -1;
        if (strcmp(key, "descr") == 0 && !have_descr) {
            char descr[32];
            size_t at = (np_ws(ps), ps->pos);
            if (np_peek(ps) == '[')
                return np_error(ps, "structured .npy dtypes are not supported%s", "");
            if (np_string(ps, descr, sizeof descr) || np_descr(ps, at, descr, dt))
                return -1;
            have_descr = 1;
        } else if (strcmp(key, "fortran_order") == 0 && !have_fortran) {
            size_t at = (np_ws(ps), ps->pos);
            if (np_bool(ps, &fortran))
                return -1;
            if (fortran) {
                ps->pos = at;
                return np_error(ps, "Fortran-order .npy arrays are not supported; save a C-order "
                                    "array (np.ascontiguousarray)%s", "");
            }
            have_fortran = 1;
        } else if (strcmp(key, "shape") == 0 && !have_shape) {
            if (np_shape(ps, shape))
                return -1;
            have_shape = 1;
        } else {
            ps->pos = key_at;
            return np_error(ps, "malformed .npy header: unexpected or repeated key '%s'", key);
        }
        int c = np_peek(ps);
        if (c == ',')
            ps->pos++;
        else if (c != '}')
            return np_error(ps, "malformed .npy header: expected %s", "',' or '}'");
    }
    if (!have_descr || !have_fortran || !have_shape)
        return np_error(ps, "malformed .npy header: missing key '%s'",
                        !have_descr ? "descr" : !have_fortran ? "fortran_order" : "shape");
    ps->pos++;                                  /* '}' */
    np_ws(ps);
    if (ps->pos != ps->len)
        return np_error(ps, "malformed .npy header: unexpected text after the dictionary%s", "");
    return 0;
}

/* ------------------------------------------------------------------ reader */

int fe_npy_parse(const char *path, const uint8_t *bytes, size_t len, IrArray *out, UtilDiag *d)
{
    memset(out, 0, sizeof *out);
    if (len < 8 || memcmp(bytes, npy_magic, sizeof npy_magic) != 0)
        return util_error(d, util_loc_byte(path, 0), "not a .npy file (missing the \\x93NUMPY magic)");
    int major = bytes[6];
    size_t hl_size = major == 1 ? 2 : 4;
    if (major < 1 || major > 3)
        return util_error(d, util_loc_byte(path, 6), "unsupported .npy format version %d.%d (1.0, 2.0 and "
                          "3.0 are supported)", major, bytes[7]);
    if (len < 8 + hl_size)
        return util_error(d, util_loc_byte(path, (int64_t)len), "truncated .npy file: no header length");
    uint64_t hlen = bytes[8] | (uint64_t)bytes[9] << 8;
    if (hl_size == 4)
        hlen |= (uint64_t)bytes[10] << 16 | (uint64_t)bytes[11] << 24;
    if (hlen > FE_MAX_NPY_HEADER)
        return util_error(d, util_loc_byte(path, 8), "the .npy header length %llu exceeds the limit of %d bytes",
                          (unsigned long long)hlen, FE_MAX_NPY_HEADER);
    size_t hstart = 8 + hl_size;
    if (hlen > len - hstart)
        return util_error(d, util_loc_byte(path, (int64_t)len), "truncated .npy file: the header needs %llu "
                          "bytes, %zu are left", (unsigned long long)hlen, len - hstart);
    NpyParser ps = { path, bytes + hstart, (size_t)hlen, 0, (int64_t)hstart, d };
    IrDType dt = IR_DT_UNDEF;
    IrShape shape = { 0 };
    if (np_header(&ps, &dt, &shape))
        return -1;
    int64_t numel = ir_shape_numel(&shape);
    int64_t nbytes;
    if (numel < 0 || util_mul_overflow_i64(numel, (int64_t)ir_dtype_size(dt), &nbytes))
        return util_error(d, util_loc_byte(path, (int64_t)hstart), "the .npy shape has too many elements");
    size_t dstart = hstart + (size_t)hlen;
    uint64_t avail = len - dstart;
    if ((uint64_t)nbytes > avail)
        return util_error(d, util_loc_byte(path, (int64_t)len), "truncated .npy data: the header declares "
                          "%lld bytes, the file holds %llu", (long long)nbytes, (unsigned long long)avail);
    if ((uint64_t)nbytes < avail)
        return util_error(d, util_loc_byte(path, (int64_t)(dstart + (size_t)nbytes)), "the file has %llu more "
                          "bytes than the .npy header declares", (unsigned long long)(avail - (uint64_t)nbytes));
    const uint8_t *src = bytes + dstart;
    if (dt == IR_DT_BOOL)
        for (int64_t i = 0; i < nbytes; i++)
            if (src[i] > 1)
                return util_error(d, util_loc_byte(path, (int64_t)dstart + i), "bool element %lld is %u, not "
                                  "0 or 1", (long long)i, src[i]);
    void *data = malloc(nbytes ? (size_t)nbytes : 1);
    if (!data)
        return util_error(d, util_loc_file(path), "out of memory for %lld bytes of .npy data", (long long)nbytes);
    memcpy(data, src, (size_t)nbytes);
    out->dtype = dt;
    out->shape = shape;
    out->data = data;
    return 0;
}

int fe_npy_read(const char *path, IrArray *out, UtilDiag *d)
{
    char *bytes;
    size_t len;
    memset(out, 0, sizeof *out);
    if (util_read_file(path, FE_MAX_MODEL_BYTES, &bytes, &len, d))
        return -1;
    int rc = fe_npy_parse(path, (const uint8_t *)bytes, len, out, d);
    free(bytes);
    return rc;
}

/* ------------------------------------------------------------------ writer */

int fe_npy_write(const IrArray *a, UtilBuf *out, UtilDiag *d)
{
    const char *descr = ir_dtype_numpy(a->dtype);
    if (!descr)
        return util_error(d, util_loc_file(NULL), "%s tensors cannot be stored in a .npy file",
                          ir_dtype_name(a->dtype));
    int64_t numel = ir_shape_numel(&a->shape);
    if (numel < 0 || a->shape.rank > IR_MAX_RANK)
        return util_error(d, util_loc_file(NULL), "invalid shape for a .npy file");
    if (numel > 0 && !a->data)
        return util_error(d, util_loc_file(NULL), "tensor has no data");
    UtilBuf h;
    util_buf_init(&h);
    util_buf_printf(&h, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
    for (int i = 0; i < a->shape.rank; i++)
        util_buf_printf(&h, "%s%lld", i ? ", " : "", (long long)a->shape.dims[i]);
    util_buf_printf(&h, "%s), }", a->shape.rank == 1 ? "," : "");
    /* Like numpy >= 1.23: room for the first dimension to grow to 21 digits,
     * then pad so that magic + version + length + header is a multiple of 64;
     * the output is byte-identical to np.save's. */
    if (a->shape.rank > 0) {
        char first[24];
        int n = snprintf(first, sizeof first, "%lld", (long long)a->shape.dims[0]);
        for (; n < 21; n++)
            util_buf_put(&h, " ", 1);
    }
    size_t total = 10 + h.len + 1;
    while (total % 64) {
        util_buf_put(&h, " ", 1);
        total++;
    }
    util_buf_put(&h, "\n", 1);
    if (h.oom) {
        util_buf_free(&h);
        return util_error(d, util_loc_file(NULL), "out of memory");
    }
    uint8_t pre[10];
    memcpy(pre, npy_magic, 6);
    pre[6] = 1;
    pre[7] = 0;
    pre[8] = (uint8_t)(h.len & 0xff);
    pre[9] = (uint8_t)(h.len >> 8);
    util_buf_put(out, pre, sizeof pre);
    util_buf_put(out, h.data, h.len);
    if (numel > 0)
        util_buf_put(out, a->data, (size_t)numel * ir_dtype_size(a->dtype));
    util_buf_free(&h);
    if (out->oom)
        return util_error(d, util_loc_file(NULL), "out of memory");
    return 0;
}
