/* ir/dtype.c — element types, generic element access, shapes. */
#include "ir/ir.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct DTypeInfo {
    const char *name;
    size_t size;
    int onnx;
    const char *st;
    const char *npy;
} DTypeInfo;

static const DTypeInfo dt_table[IR_DT_COUNT] = {
    [IR_DT_UNDEF] = { "undef", 0, 0, NULL, NULL },
#define DT(id, name, size, onnx, st, npy) [IR_DT_##id] = { name, size, onnx, st, npy },
#include "ir/dtypes.def"
#undef DT
};

static int dt_ok(IrDType t) { return t > IR_DT_UNDEF && t < IR_DT_COUNT; }

const char *ir_dtype_name(IrDType t) { return dt_ok(t) ? dt_table[t].name : "undef"; }
size_t ir_dtype_size(IrDType t) { return dt_ok(t) ? dt_table[t].size : 0; }
int ir_dtype_to_onnx(IrDType t) { return dt_ok(t) ? dt_table[t].onnx : 0; }
const char *ir_dtype_safetensors(IrDType t) { return dt_ok(t) ? dt_table[t].st : NULL; }
const char *ir_dtype_numpy(IrDType t) { return dt_ok(t) ? dt_table[t].npy : NULL; }

IrDType ir_dtype_from_name(const char *s)
{
    for (int i = 1; i < IR_DT_COUNT; i++)
        if (strcmp(dt_table[i].name, s) == 0)
            return (IrDType)i;
    return IR_DT_UNDEF;
}

IrDType ir_dtype_from_onnx(int onnx)
{
    for (int i = 1; i < IR_DT_COUNT; i++)
        if (dt_table[i].onnx == onnx)
            return (IrDType)i;
    return IR_DT_UNDEF;
}

IrDType ir_dtype_from_safetensors(const char *s)
{
    for (int i = 1; i < IR_DT_COUNT; i++)
        if (dt_table[i].st && strcmp(dt_table[i].st, s) == 0)
            return (IrDType)i;
    return IR_DT_UNDEF;
}

int ir_dtype_is_float(IrDType t)
{
    return t == IR_DT_F32 || t == IR_DT_F64 || t == IR_DT_F16 || t == IR_DT_BF16;
}

int ir_dtype_is_int(IrDType t)
{
    switch (t) {
    case IR_DT_I8: case IR_DT_U8: case IR_DT_I16: case IR_DT_U16:
    case IR_DT_I32: case IR_DT_U32: case IR_DT_I64: case IR_DT_U64:
        return 1;
    default:
        return 0;
    }
}

int ir_dtype_is_signed(IrDType t)
{
    return t == IR_DT_I8 || t == IR_DT_I16 || t == IR_DT_I32 || t == IR_DT_I64 || ir_dtype_is_float(t);
}

void ir_dtype_int_range(IrDType t, double *lo, double *hi)
{
    int bits = 8 * (int)ir_dtype_size(t);
    *lo = ir_dtype_is_signed(t) ? -ldexp(1, bits - 1) : 0;
    *hi = ldexp(1, ir_dtype_is_signed(t) ? bits - 1 : bits) - 1;
}

/* ---- half precision ---- */

float ir_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
    if (exp == 0) {
        if (man == 0) {
            bits = sign;
        } else {               /* subnormal: value = man * 2^-24 */
            float f = ldexpf((float)man, -24);
            return sign ? -f : f;
        }
    } else if (exp == 31) {
        bits = sign | 0x7f800000u | (man << 13);
    } else {
        bits = sign | ((exp + 112) << 23) | (man << 13);
    }
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

uint16_t ir_f32_to_f16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000;
    uint32_t absx = x & 0x7fffffffu;
    if (absx >= 0x7f800000u)                         /* inf / nan */
        return (uint16_t)(sign | 0x7c00 | (absx > 0x7f800000u ? 0x200 : 0));
    if (absx >= 0x477ff000u)                         /* rounds to >= 65520: inf */
        return (uint16_t)(sign | 0x7c00);
    if (absx < 0x38800000u) {                        /* below 2^-14: subnormal half */
        float a;
        memcpy(&a, &absx, 4);
        float scaled = a * 16777216.0f;              /* a / 2^-24 */
        uint32_t m = (uint32_t)nearbyintf(scaled);   /* round half to even (default mode) */
        return (uint16_t)(sign | m);
    }
    uint32_t exp = ((absx >> 23) - 112) << 10;
    uint32_t man = (absx >> 13) & 0x3ff;
    uint32_t rest = absx & 0x1fff;
    uint32_t h = exp | man;
    if (rest > 0x1000 || (rest == 0x1000 && (man & 1)))
        h++;
    return (uint16_t)(sign | h);
}

float ir_bf16_to_f32(uint16_t h)
{
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

uint16_t ir_f32_to_bf16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((x >> 16) | 0x40);
    uint32_t lsb = (x >> 16) & 1;
    x += 0x7fff + lsb;
    return (uint16_t)(x >> 16);
}

/* ---- generic element access ---- */

double ir_load_f64(IrDType t, const void *p, int64_t i)
{
    switch (t) {
    case IR_DT_F32: return ((const float *)p)[i];
    case IR_DT_F64: return ((const double *)p)[i];
    case IR_DT_F16: return ir_f16_to_f32(((const uint16_t *)p)[i]);
    case IR_DT_BF16: return ir_bf16_to_f32(((const uint16_t *)p)[i]);
    case IR_DT_I8: return ((const int8_t *)p)[i];
    case IR_DT_U8: return ((const uint8_t *)p)[i];
    case IR_DT_I16: return ((const int16_t *)p)[i];
    case IR_DT_U16: return ((const uint16_t *)p)[i];
    case IR_DT_I32: return ((const int32_t *)p)[i];
    case IR_DT_U32: return ((const uint32_t *)p)[i];
    case IR_DT_I64: return (double)((const int64_t *)p)[i];
    case IR_DT_U64: return (double)((const uint64_t *)p)[i];
    case IR_DT_BOOL: return ((const uint8_t *)p)[i] != 0;
    default: return 0.0;
    }
}

int64_t ir_load_i64(IrDType t, const void *p, int64_t i)
{
    switch (t) {
    case IR_DT_I8: return ((const int8_t *)p)[i];
    case IR_DT_U8: return ((const uint8_t *)p)[i];
    case IR_DT_I16: return ((const int16_t *)p)[i];
    case IR_DT_U16: return ((const uint16_t *)p)[i];
    case IR_DT_I32: return ((const int32_t *)p)[i];
    case IR_DT_U32: return ((const uint32_t *)p)[i];
    case IR_DT_I64: return ((const int64_t *)p)[i];
    case IR_DT_U64: return (int64_t)((const uint64_t *)p)[i];
    case IR_DT_BOOL: return ((const uint8_t *)p)[i] != 0;
    default: {
        double v = ir_load_f64(t, p, i);
        if (v != v)
            return 0;
        if (v >= 9.2233720368547758e18)
            return INT64_MAX;
        if (v <= -9.2233720368547758e18)
            return INT64_MIN;
        return (int64_t)v;
    }
    }
}

/* Float → integer conversion without undefined behaviour: truncation toward
 * zero, NaN → 0, out-of-range saturates (ONNX leaves it undefined). */
static int64_t f2i_sat(double v, double lo, double hi)
{
    if (v != v)
        return 0;
    if (v <= lo)
        return (int64_t)lo;
    if (v >= hi)
        return (int64_t)hi;
    return (int64_t)v;
}

void ir_store_f64(IrDType t, void *p, int64_t i, double v)
{
    switch (t) {
    case IR_DT_F32: ((float *)p)[i] = (float)v; break;
    case IR_DT_F64: ((double *)p)[i] = v; break;
    case IR_DT_F16: ((uint16_t *)p)[i] = ir_f32_to_f16((float)v); break;
    case IR_DT_BF16: ((uint16_t *)p)[i] = ir_f32_to_bf16((float)v); break;
    case IR_DT_I8: ((int8_t *)p)[i] = (int8_t)f2i_sat(v, -128.0, 127.0); break;
    case IR_DT_U8: ((uint8_t *)p)[i] = (uint8_t)f2i_sat(v, 0.0, 255.0); break;
    case IR_DT_I16: ((int16_t *)p)[i] = (int16_t)f2i_sat(v, -32768.0, 32767.0); break;
    case IR_DT_U16: ((uint16_t *)p)[i] = (uint16_t)f2i_sat(v, 0.0, 65535.0); break;
    case IR_DT_I32: ((int32_t *)p)[i] = (int32_t)f2i_sat(v, -2147483648.0, 2147483647.0); break;
    case IR_DT_U32: ((uint32_t *)p)[i] = (uint32_t)f2i_sat(v, 0.0, 4294967295.0); break;
    case IR_DT_I64:
        ((int64_t *)p)[i] = v != v ? 0 : v >= 9.2233720368547758e18 ? INT64_MAX
                          : v <= -9.2233720368547758e18 ? INT64_MIN : (int64_t)v;
        break;
    case IR_DT_U64:
        ((uint64_t *)p)[i] = v != v || v <= 0 ? 0 : v >= 1.8446744073709552e19 ? UINT64_MAX : (uint64_t)v;
        break;
    case IR_DT_BOOL: ((uint8_t *)p)[i] = v != 0.0; break;
    default: break;
    }
}

void ir_store_i64(IrDType t, void *p, int64_t i, int64_t v)
{
    switch (t) {
    case IR_DT_I8: ((int8_t *)p)[i] = (int8_t)v; break;     /* wraps, as C and numpy do */
    case IR_DT_U8: ((uint8_t *)p)[i] = (uint8_t)v; break;
    case IR_DT_I16: ((int16_t *)p)[i] = (int16_t)v; break;
    case IR_DT_U16: ((uint16_t *)p)[i] = (uint16_t)v; break;
    case IR_DT_I32: ((int32_t *)p)[i] = (int32_t)v; break;
    case IR_DT_U32: ((uint32_t *)p)[i] = (uint32_t)v; break;
    case IR_DT_I64: ((int64_t *)p)[i] = v; break;
    case IR_DT_U64: ((uint64_t *)p)[i] = (uint64_t)v; break;
    case IR_DT_BOOL: ((uint8_t *)p)[i] = v != 0; break;
    default: ir_store_f64(t, p, i, (double)v); break;
    }
}

/* ---- shapes ---- */

int64_t ir_shape_numel(const IrShape *s)
{
    int64_t n = 1, span = 1;
    for (int i = 0; i < s->rank; i++) {
        if (s->dims[i] < 0)
            return -1;
        if (__builtin_mul_overflow(span, s->dims[i] ? s->dims[i] : 1, &span) || span > IR_MAX_ELEMENTS)
            return -1;
        n *= s->dims[i];
    }
    return n;
}

int ir_shape_equal(const IrShape *a, const IrShape *b)
{
    if (a->rank != b->rank)
        return 0;
    for (int i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i])
            return 0;
    return 1;
}

void ir_shape_str(const IrShape *s, char *buf, size_t n)
{
    size_t o = 0;
    o += (size_t)snprintf(buf + o, o < n ? n - o : 0, "[");
    for (int i = 0; i < s->rank; i++)
        o += (size_t)snprintf(buf + o, o < n ? n - o : 0, i ? ",%lld" : "%lld", (long long)s->dims[i]);
    snprintf(buf + o, o < n ? n - o : 0, "]");
}

int64_t ir_array_numel(const IrArray *a) { return ir_shape_numel(&a->shape); }

size_t ir_array_bytes(const IrArray *a)
{
    int64_t n = ir_shape_numel(&a->shape);
    return n < 0 ? 0 : (size_t)n * ir_dtype_size(a->dtype);
}
