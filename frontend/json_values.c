/* frontend/json_values.c — tensor values and operator attributes of the JSON
 * graph format.
 *
 * Numbers are read as the type the destination has: a JSON integer is
 * accepted where a float is expected, never the reverse.  Two spellings
 * extend plain JSON numbers so that every tensor value can be written:
 * integers beyond 2^53 as decimal strings ("9223372036854775807") and
 * non-finite floats as "nan", "inf", "-inf".  FLOAT attributes are float32 in
 * ONNX; they are rounded to float32 here so both frontends agree.
 */
#include "frontend/json_internal.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- scalars ---- */

/* Integer range of an integer dtype (int64 and uint64 use the int64 range;
 * uint64 values above INT64_MAX are refused). */
static void int_range(IrDType t, int64_t *lo, int64_t *hi)
{
    int bits = (int)ir_dtype_size(t) * 8;
    if (bits >= 64) {
        *lo = ir_dtype_is_signed(t) ? INT64_MIN : 0;
        *hi = INT64_MAX;
    } else if (ir_dtype_is_signed(t)) {
        *lo = -((int64_t)1 << (bits - 1));
        *hi = ((int64_t)1 << (bits - 1)) - 1;
    } else {
        *lo = 0;
        *hi = ((int64_t)1 << bits) - 1;
    }
}

/* A decimal integer string ("-12"); 0 on success. */
static int parse_int_string(const char *str, int64_t *out)
{
    const char *p = str + (str[0] == '-');
    if (!*p || strspn(p, "0123456789") != strlen(p))
        return -1;
    errno = 0;
    char *end;
    long long v = strtoll(str, &end, 10);
    if (errno || *end)
        return -1;
    *out = v;
    return 0;
}

/* An integer in [lo, hi]: a JSON integer within 2^53 or a decimal string. */
static int read_int(const FeJSrc *s, const FeJPath *p, const json_t *v, int64_t lo, int64_t hi,
                    const char *what, int64_t *out)
{
    if (json_is_string(v)) {
        if (parse_int_string(json_string_value(v), out))
            return fe_jerr(s, p, 0, "%s must be an integer; the string \"%s\" is not a decimal 64-bit integer",
                           what, json_string_value(v));
        if (*out < lo || *out > hi)
            return fe_jerr(s, p, 0, "%s %lld is out of range [%lld, %lld]", what, (long long)*out,
                           (long long)lo, (long long)hi);
        return 0;
    }
    if (json_is_integer(v) && json_integer_value(v) > FE_JSON_MAX_INT)
        return fe_jerr(s, p, 0, "%s %lld is beyond 2^53; write it as a string (\"%lld\")", what,
                       (long long)json_integer_value(v), (long long)json_integer_value(v));
    if (json_is_integer(v) && json_integer_value(v) < -FE_JSON_MAX_INT)
        return fe_jerr(s, p, 0, "%s %lld is beyond -2^53; write it as a string (\"%lld\")", what,
                       (long long)json_integer_value(v), (long long)json_integer_value(v));
    return fe_jint(s, p, v, lo, hi, out, what);
}

/* A float: a JSON number (integers within 2^53) or "nan" / "inf" / "-inf". */
static int read_float(const FeJSrc *s, const FeJPath *p, const json_t *v, const char *what, double *out)
{
    if (json_is_string(v)) {
        const char *t = json_string_value(v);
        if (strcmp(t, "nan") == 0)
            *out = NAN;
        else if (strcmp(t, "inf") == 0)
            *out = INFINITY;
        else if (strcmp(t, "-inf") == 0)
            *out = -INFINITY;
        else
            return fe_jerr(s, p, 0, "%s must be a number (or \"nan\", \"inf\", \"-inf\"), not the string \"%s\"",
                           what, t);
        return 0;
    }
    if (json_is_real(v)) {
        *out = json_real_value(v);
        return 0;
    }
    if (!json_is_integer(v))
        return fe_jerr(s, p, 0, "%s must be a number, not %s", what, fe_jkind(v));
    int64_t i;
    if (fe_jint(s, p, v, -FE_JSON_MAX_INT, FE_JSON_MAX_INT, &i, what))
        return -1;
    *out = (double)i;
    return 0;
}

/* Stores a float into element i of a, refusing finite values that overflow
 * the dtype. */
static int store_float(const FeJSrc *s, const FeJPath *p, IrArray *a, int64_t i, double x)
{
    ir_store_f64(a->dtype, a->data, i, x);
    if (isfinite(x) && !isfinite(ir_load_f64(a->dtype, a->data, i)))
        return fe_jerr(s, p, 0, "value %g is out of range for %s", x, ir_dtype_name(a->dtype));
    return 0;
}

static int read_element(const FeJSrc *s, const FeJPath *p, const json_t *v, IrArray *a, int64_t i)
{
    IrDType t = a->dtype;
    if (t == IR_DT_BOOL) {
        if (json_is_boolean(v)) {
            ((uint8_t *)a->data)[i] = json_is_true(v);
            return 0;
        }
        int64_t b;
        if (!json_is_integer(v))
            return fe_jerr(s, p, 0, "a bool value must be true, false, 0 or 1, not %s", fe_jkind(v));
        if (fe_jint(s, p, v, 0, 1, &b, "a bool value"))
            return -1;
        ((uint8_t *)a->data)[i] = (uint8_t)b;
        return 0;
    }
    if (ir_dtype_is_float(t)) {
        double x;
        return read_float(s, p, v, "a value", &x) || store_float(s, p, a, i, x) ? -1 : 0;
    }
    int64_t lo, hi, x;
    int_range(t, &lo, &hi);
    if (read_int(s, p, v, lo, hi, "a value", &x))
        return -1;
    ir_store_i64(t, a->data, i, x);
    return 0;
}

int fe_json_values(const FeJSrc *s, const FeJPath *p, const json_t *v, IrGraph *g, IrArray *a)
{
    if (fe_jarray(s, p, v, "'values'"))
        return -1;
    int64_t n = ir_shape_numel(&a->shape);
    size_t got = json_array_size(v);
    if (n < 0 || (uint64_t)got != (uint64_t)n) {
        char sh[128];
        ir_shape_str(&a->shape, sh, sizeof sh);
        return fe_jerr(s, p, 0, "%zu values given, but shape %s has %lld elements", got, sh, (long long)n);
    }
    size_t bytes = ir_array_bytes(a);                 /* bounded by the values the text holds */
    if (!(a->data = ir_alloc(g, bytes ? bytes : 1)))
        return fe_jerr(s, p, 0, "out of memory");
    for (size_t i = 0; i < got; i++) {
        FeJPath ep = FE_JIDX(p, i);
        if (read_element(s, &ep, json_array_get(v, i), a, (int64_t)i))
            return -1;
    }
    return 0;
}

static const char *const tensor_keys[] = { "dtype", "shape", "values", NULL };

int fe_json_tensor(const FeJSrc *s, const FeJPath *p, const json_t *v, IrGraph *g, IrArray *out)
{
    json_t *vals;
    FeJPath vp = FE_JKEY(p, "values");
    if (fe_jobject(s, p, v, tensor_keys, "a tensor") || fe_jtyped(s, p, v, 0, 0, &out->dtype, &out->shape) ||
        fe_jmember(s, p, v, "values", 1, &vals))
        return -1;
    return fe_json_values(s, &vp, vals, g, out);
}

/* ---- attributes ---- */

static const char *kind_text(IrAttrKind k)
{
    switch (k) {
    case IR_AK_INT: return "an integer";
    case IR_AK_FLOAT: return "a number";
    case IR_AK_STRING: return "a string";
    case IR_AK_INTS: return "a list of integers";
    case IR_AK_FLOATS: return "a list of numbers";
    case IR_AK_STRINGS: return "a list of strings";
    default: return "a tensor object {\"dtype\", \"shape\", \"values\"}";
    }
}

/* A FLOAT attribute value, rounded to float32. */
static int attr_float(const FeJSrc *s, const FeJPath *p, const json_t *v, const char *what, double *out)
{
    double x;
    if (read_float(s, p, v, what, &x))
        return -1;
    if (isfinite(x) && fabs(x) > FLT_MAX && !isfinite((float)x))
        return fe_jerr(s, p, 0, "%s %g is out of range for a float attribute (float32)", what, x);
    *out = (double)(float)x;
    return 0;
}

static int attr_scalar(const FeJSrc *s, const FeJPath *p, const json_t *v, IrAttrKind kind,
                       const char *what, IrAttr *a, int i)
{
    switch (kind) {
    case IR_AK_INT:
        return read_int(s, p, v, INT64_MIN, INT64_MAX, what, &a->v.i);
    case IR_AK_INTS:
        return read_int(s, p, v, INT64_MIN, INT64_MAX, what, &a->v.ints[i]);
    case IR_AK_FLOAT:
        return attr_float(s, p, v, what, &a->v.f);
    case IR_AK_FLOATS:
        return attr_float(s, p, v, what, &a->v.floats[i]);
    case IR_AK_STRING:
        return fe_jstr(s, p, v, &a->v.s, what);
    default:
        return fe_jstr(s, p, v, &a->v.strings[i], what);
    }
}

static int attr_list(const FeJSrc *s, const FeJPath *p, const json_t *v, IrGraph *g, IrAttr *a,
                     const char *what)
{
    size_t n = json_array_size(v);
    if (n > INT32_MAX)
        return fe_jerr(s, p, 0, "%s has too many elements", what);
    size_t es = a->kind == IR_AK_INTS ? sizeof(int64_t) : a->kind == IR_AK_FLOATS ? sizeof(double)
                                                                                  : sizeof(char *);
    void *data = util_arena_array(&g->arena, n ? n : 1, es);
    if (!data)
        return fe_jerr(s, p, 0, "out of memory");
    a->n = (int)n;
    if (a->kind == IR_AK_INTS)
        a->v.ints = data;
    else if (a->kind == IR_AK_FLOATS)
        a->v.floats = data;
    else
        a->v.strings = data;
    char ewhat[160];
    snprintf(ewhat, sizeof ewhat, "an element of %s", what);
    for (size_t i = 0; i < n; i++) {
        FeJPath ep = FE_JIDX(p, i);
        const json_t *e = json_array_get(v, i);
        if (a->kind == IR_AK_STRINGS && !json_is_string(e))
            return fe_jerr(s, &ep, 0, "%s must be a string, not %s", ewhat, fe_jkind(e));
        if (attr_scalar(s, &ep, e, a->kind, ewhat, a, (int)i))
            return -1;
    }
    return 0;
}

/* Does the JSON type of v fit the declared kind? (Element types of lists and
 * number formats are checked while reading.) */
static int kind_fits(IrAttrKind k, const json_t *v)
{
    switch (k) {
    case IR_AK_INT: return json_is_integer(v) || json_is_string(v);
    case IR_AK_FLOAT: return json_is_number(v) || json_is_string(v);
    case IR_AK_STRING: return json_is_string(v);
    case IR_AK_INTS: case IR_AK_FLOATS: case IR_AK_STRINGS: return json_is_array(v);
    default: return json_is_object(v);
    }
}

int fe_json_attr(const FeJSrc *s, const FeJPath *p, IrOp op, const char *name, const json_t *v,
                 IrGraph *g, IrAttr *a)
{
    IrAttrKey key = ir_attr_from_name(name);
    IrAttrKind kind = key != IR_A_INVALID ? ir_op_attr_kind(op, key) : IR_AK_NONE;
    if (kind == IR_AK_NONE)
        return fe_jerr(s, p, 1, "operator %s has no attribute '%s'", ir_op_name(op), name);
    memset(a, 0, sizeof *a);
    a->key = key;
    a->kind = kind;
    char what[128];
    snprintf(what, sizeof what, "attribute '%s' of %s", name, ir_op_name(op));
    if (!kind_fits(kind, v))
        return fe_jerr(s, p, 0, "%s must be %s, not %s", what, kind_text(kind), fe_jkind(v));
    if (kind == IR_AK_TENSOR) {
        a->v.tensor = ir_alloc(g, sizeof *a->v.tensor);
        if (!a->v.tensor)
            return fe_jerr(s, p, 0, "out of memory");
        return fe_json_tensor(s, p, v, g, a->v.tensor);
    }
    if (kind == IR_AK_INTS || kind == IR_AK_FLOATS || kind == IR_AK_STRINGS)
        return attr_list(s, p, v, g, a, what);
    return attr_scalar(s, p, v, kind, what, a, 0);
}
