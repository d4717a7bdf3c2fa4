/* frontend/json_util.c — jansson parsing with positioned diagnostics and
 * typed access to members, shared by the JSON graph and safetensors readers. */
#include "frontend/json_internal.h"

#include <stdio.h>
#include <string.h>

UtilLoc fe_jloc_at(const FeJSrc *s, size_t off)
{
    if (s->byte_base >= 0)
        return util_loc_byte(s->path, s->byte_base + (int64_t)off);
    int line, col;
    fe_json_linecol(s->text, off, &line, &col);
    return util_loc_line(s->path, line, col);
}

UtilLoc fe_jloc(const FeJSrc *s, const FeJPath *p, int key)
{
    return fe_jloc_at(s, fe_json_locate(s->text, s->len, p, key));
}

int fe_jerr(const FeJSrc *s, const FeJPath *p, int key, const char *fmt, ...)
{
    if (s->d->has_error)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    util_verror(s->d, fe_jloc(s, p, key), fmt, ap);
    va_end(ap);
    return -1;
}

/* Where a jansson error is: its position counts the bytes read, so the
 * offending token ends just before it; jansson names the token ("near
 * 'TOKEN'"), so the error is reported at its start.  An undecodable byte is
 * reported at itself. */
static int is_token_char(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '+' ||
           c == '-' || c == '.';
}

static size_t error_offset(const FeJSrc *s, const json_error_t *e)
{
    size_t pos = e->position > 0 ? (size_t)e->position : 0;
    if (pos > s->len)
        pos = s->len;
    if (strncmp(e->text, "unable to decode byte", 21) == 0)
        return pos;
    size_t off = pos ? pos - 1 : 0;
    const char *near = strstr(e->text, " near '");
    if (near) {
        const char *tok = near + 7;
        size_t n = strlen(tok);
        if (n > 1 && tok[n - 1] == '\'' && n - 1 <= pos && memcmp(s->text + pos - (n - 1), tok, n - 1) == 0)
            off = pos - (n - 1);
    } else {                       /* a long token is not named: back up over a number or literal */
        while (off > 0 && off < s->len && is_token_char(s->text[off]) && is_token_char(s->text[off - 1]))
            off--;
    }
    return off;
}

json_t *fe_json_parse(const FeJSrc *s)
{
    size_t deep = fe_json_too_deep(s->text, s->len, FE_MAX_JSON_DEPTH);
    if (deep != SIZE_MAX) {
        util_error(s->d, fe_jloc_at(s, deep), "JSON nesting is deeper than %d levels", FE_MAX_JSON_DEPTH);
        return NULL;
    }
    json_error_t err;
    json_t *v = json_loadb(s->text, s->len, JSON_REJECT_DUPLICATES, &err);
    if (!v)
        util_error(s->d, fe_jloc_at(s, error_offset(s, &err)), "invalid JSON: %s", err.text);
    return v;
}

const char *fe_jkind(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER: return "an integer";
    case JSON_REAL: return "a float";
    case JSON_TRUE: case JSON_FALSE: return "a boolean";
    default: return "null";
    }
}

int fe_jobject(const FeJSrc *s, const FeJPath *p, const json_t *v, const char *const *allowed,
               const char *what)
{
    if (!json_is_object(v))
        return fe_jerr(s, p, 0, "%s must be an object, not %s", what, fe_jkind(v));
    const char *key;
    json_t *val;
    json_object_foreach((json_t *)v, key, val) {
        int ok = 0;
        for (int i = 0; allowed[i] && !ok; i++)
            ok = strcmp(allowed[i], key) == 0;
        if (!ok) {
            char list[256] = "";
            for (int i = 0; allowed[i]; i++)
                snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", allowed[i]);
            FeJPath kp = FE_JKEY(p, key);
            return fe_jerr(s, &kp, 1, "unknown key '%s' in %s (expected: %s)", key, what, list);
        }
    }
    return 0;
}

int fe_jarray(const FeJSrc *s, const FeJPath *p, const json_t *v, const char *what)
{
    if (!json_is_array(v))
        return fe_jerr(s, p, 0, "%s must be an array, not %s", what, fe_jkind(v));
    return 0;
}

int fe_jmember(const FeJSrc *s, const FeJPath *p, const json_t *o, const char *key, int required,
               json_t **out)
{
    *out = json_object_get(o, key);
    if (!*out && required)
        return fe_jerr(s, p, 0, "missing required key '%s'", key);
    return 0;
}

int fe_jint(const FeJSrc *s, const FeJPath *p, const json_t *v, int64_t lo, int64_t hi, int64_t *out,
            const char *what)
{
    if (json_is_real(v))
        return fe_jerr(s, p, 0, "%s must be an integer, not a float (%.17g)", what, json_real_value(v));
    if (!json_is_integer(v))
        return fe_jerr(s, p, 0, "%s must be an integer, not %s", what, fe_jkind(v));
    int64_t x = (int64_t)json_integer_value(v);
    if (x > FE_JSON_MAX_INT || x < -FE_JSON_MAX_INT)
        return fe_jerr(s, p, 0, "%s %lld is beyond 2^53, the largest integer JSON holds exactly", what,
                       (long long)x);
    if (x < lo && lo == 0)
        return fe_jerr(s, p, 0, "%s must not be negative (got %lld)", what, (long long)x);
    if (x < lo || x > hi)
        return fe_jerr(s, p, 0, "%s %lld is out of range [%lld, %lld]", what, (long long)x, (long long)lo,
                       (long long)hi);
    *out = x;
    return 0;
}

int fe_jstr(const FeJSrc *s, const FeJPath *p, const json_t *v, const char **out, const char *what)
{
    if (!json_is_string(v))
        return fe_jerr(s, p, 0, "%s must be a string, not %s", what, fe_jkind(v));
    *out = json_string_value(v);
    return 0;
}

int fe_jshape(const FeJSrc *s, const FeJPath *p, const json_t *v, int allow_unknown, IrShape *out)
{
    if (fe_jarray(s, p, v, "a shape"))
        return -1;
    size_t rank = json_array_size(v);
    if (rank > IR_MAX_RANK)
        return fe_jerr(s, p, 0, "a shape has at most %d dimensions, not %zu", IR_MAX_RANK, rank);
    out->rank = (int)rank;
    int64_t numel = 1;
    for (size_t i = 0; i < rank; i++) {
        const json_t *e = json_array_get(v, i);
        FeJPath ep = FE_JIDX(p, i);
        if (allow_unknown && (json_is_string(e) || json_is_null(e))) {
            out->dims[i] = -1;
            continue;
        }
        if (fe_jint(s, &ep, e, 0, FE_JSON_MAX_INT, &out->dims[i], "a dimension"))
            return -1;
        if (util_mul_overflow_i64(numel, out->dims[i], &numel) || numel > IR_MAX_ELEMENTS)
            return fe_jerr(s, p, 0, "the shape has too many elements (the limit is " IR_MAX_ELEMENTS_TEXT
                           " per tensor)");
    }
    return 0;
}

int fe_jdtype(const FeJSrc *s, const FeJPath *p, const json_t *v, int st, IrDType *out)
{
    const char *name;
    if (fe_jstr(s, p, v, &name, "'dtype'"))
        return -1;
    *out = st ? ir_dtype_from_safetensors(name) : ir_dtype_from_name(name);
    if (*out == IR_DT_UNDEF)
        return fe_jerr(s, p, 0, "unknown or unsupported dtype '%s' (dlcc reads %s)", name,
                       st ? "F32, F16, BF16, F64, I8, U8, I16, U16, I32, U32, I64, U64 and BOOL"
                          : "float32, float16, bfloat16, float64, int8, uint8, int16, uint16, int32, uint32, "
                            "int64, uint64 and bool");
    return 0;
}

int fe_jtyped(const FeJSrc *s, const FeJPath *p, const json_t *o, int st, int allow_unknown, IrDType *dt,
              IrShape *shape)
{
    json_t *d, *sh;
    FeJPath dp = FE_JKEY(p, "dtype"), sp = FE_JKEY(p, "shape");
    if (fe_jmember(s, p, o, "dtype", 1, &d) || fe_jdtype(s, &dp, d, st, dt) ||
        fe_jmember(s, p, o, "shape", 1, &sh) || fe_jshape(s, &sp, sh, allow_unknown, shape))
        return -1;
    return 0;
}

int fe_jnum(const FeJSrc *s, const FeJPath *p, const json_t *v, double lo, double hi, double *out,
            const char *what)
{
    if (!json_is_number(v))
        return fe_jerr(s, p, 0, "%s must be a number, not %s", what, fe_jkind(v));
    double x = json_number_value(v);
    if (!(x >= lo && x <= hi))
        return fe_jerr(s, p, 0, "%s %.17g is out of range [%.17g, %.17g]", what, x, lo, hi);
    *out = x;
    return 0;
}

int fe_jbool(const FeJSrc *s, const FeJPath *p, const json_t *v, int *out, const char *what)
{
    if (!json_is_boolean(v))
        return fe_jerr(s, p, 0, "%s must be true or false, not %s", what, fe_jkind(v));
    *out = json_is_true(v);
    return 0;
}
