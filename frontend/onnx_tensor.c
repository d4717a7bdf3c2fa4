/* frontend/onnx_tensor.c — ONNX TensorProto decoding (raw_data, every typed
 * field, external data files), serialized tensor files (test data), and the
 * wire-structure check that guards protobuf-c against deep nesting. */
#define _POSIX_C_SOURCE 200809L
#include "frontend/onnx_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------ wire check */

typedef struct Wire {
    const char *path;
    const uint8_t *base;
    UtilDiag *d;
} Wire;

static int wire_varint(Wire *w, const uint8_t **p, const uint8_t *end, uint64_t *v)
{
    uint64_t r = 0;
    for (int shift = 0; shift < 70; shift += 7) {
        if (*p >= end)
            return util_error(w->d, util_loc_byte(w->path, *p - w->base), "truncated protobuf (varint runs past the end)");
        uint8_t b = *(*p)++;
        r |= (uint64_t)(b & 0x7f) << (shift < 64 ? shift : 63);
        if (!(b & 0x80)) {
            *v = r;
            return 0;
        }
    }
    return util_error(w->d, util_loc_byte(w->path, *p - w->base), "malformed protobuf varint (longer than 10 bytes)");
}

/* The wire type protobuf encodes field type t with (unpacked). */
static int wire_type_of(ProtobufCType t)
{
    switch (t) {
    case PROTOBUF_C_TYPE_SFIXED64: case PROTOBUF_C_TYPE_FIXED64: case PROTOBUF_C_TYPE_DOUBLE:
        return 1;
    case PROTOBUF_C_TYPE_SFIXED32: case PROTOBUF_C_TYPE_FIXED32: case PROTOBUF_C_TYPE_FLOAT:
        return 5;
    case PROTOBUF_C_TYPE_STRING: case PROTOBUF_C_TYPE_BYTES: case PROTOBUF_C_TYPE_MESSAGE:
        return 2;
    default:
        return 0;
    }
}

static int wire_message(Wire *w, const uint8_t *p, const uint8_t *end, const ProtobufCMessageDescriptor *desc,
                        int depth)
{
    if (depth > FE_ONNX_MAX_DEPTH)
        return util_error(w->d, util_loc_byte(w->path, p - w->base),
                          "protobuf messages nest deeper than %d levels (%s); subgraphs are not supported",
                          FE_ONNX_MAX_DEPTH, desc->name);
    while (p < end) {
        const uint8_t *start = p;
        uint64_t key, v;
        if (wire_varint(w, &p, end, &key))
            return -1;
        uint64_t num = key >> 3;
        int wt = (int)(key & 7);
        if (num == 0 || num > 0x1fffffff)
            return util_error(w->d, util_loc_byte(w->path, start - w->base), "malformed protobuf field number %llu in %s",
                              (unsigned long long)num, desc->name);
        const ProtobufCFieldDescriptor *f = protobuf_c_message_descriptor_get_field(desc, (unsigned)num);
        if (f) {
            int want = wire_type_of(f->type);
            int packed_ok = f->label == PROTOBUF_C_LABEL_REPEATED && want != 2 && wt == 2;
            if (wt != want && !packed_ok)
                return util_error(w->d, util_loc_byte(w->path, start - w->base),
                                  "wrong protobuf wire type %d for field '%s' of %s (expected %d)", wt, f->name,
                                  desc->name, want);
        }
        switch (wt) {
        case 0:
            if (wire_varint(w, &p, end, &v))
                return -1;
            break;
        case 1:
        case 5: {
            size_t n = wt == 1 ? 8 : 4;
            if ((size_t)(end - p) < n)
                return util_error(w->d, util_loc_byte(w->path, p - w->base), "truncated protobuf (fixed-size field of %s)",
                                  desc->name);
            p += n;
            break;
        }
        case 2:
            if (wire_varint(w, &p, end, &v))
                return -1;
            if (v > (uint64_t)(end - p))
                return util_error(w->d, util_loc_byte(w->path, p - w->base),
                                  "truncated protobuf (field '%s' of %s declares %llu bytes, %lld remain)",
                                  f ? f->name : "?", desc->name, (unsigned long long)v, (long long)(end - p));
            if (f && f->type == PROTOBUF_C_TYPE_MESSAGE &&
                wire_message(w, p, p + v, f->descriptor, depth + 1))
                return -1;
            p += v;
            break;
        default:
            return util_error(w->d, util_loc_byte(w->path, start - w->base),
                              "unsupported protobuf wire type %d in %s (groups are not used by ONNX)", wt, desc->name);
        }
    }
    return 0;
}

int fe_onnx_check_wire(const char *path, const uint8_t *bytes, size_t len, const ProtobufCMessageDescriptor *desc,
                       UtilDiag *d)
{
    Wire w = { path, bytes, d };
    return wire_message(&w, bytes, bytes + len, desc, 0);
}

/* ---------------------------------------------------------------- tensors */

const char *fe_onnx_dtype_name(int v)
{
    /* Types newer than the system's onnx.proto (ONNX 1.14 and later). */
    static const char *const newer[] = { "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ",
                                         "UINT4", "INT4", "FLOAT4E2M1", "FLOAT8E8M0" };
    const ProtobufCEnumValue *e = protobuf_c_enum_descriptor_get_value(&onnx__tensor_proto__data_type__descriptor, v);
    if (e)
        return e->name;
    return v >= 17 && v <= 24 ? newer[v - 17] : "unknown";
}

/* Turns n little-endian elements of size es (in place) into host order. */
static void fix_le(void *p, int64_t n, size_t es)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    uint8_t *b = p;
    for (int64_t i = 0; i < n; i++)
        for (size_t k = 0; k < es / 2; k++) {
            uint8_t t = b[i * es + k];
            b[i * es + k] = b[i * es + es - 1 - k];
            b[i * es + es - 1 - k] = t;
        }
#else
    (void)p; (void)n; (void)es;
#endif
}

/* Parses a non-negative decimal of external_data; -1 if malformed. */
static int64_t parse_count(const char *s)
{
    int64_t v = 0;
    if (!s || !*s)
        return -1;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || v > (INT64_MAX - 9) / 10)
            return -1;
        v = v * 10 + (*s - '0');
    }
    return v;
}

/* Opens a tensor's external data file and checks offset/length against the
 * file size and the bytes the shape needs; *fd is then ready for ext_read. */
static int ext_open(const Onnx__TensorProto *tp, const char *model_path, const char *what, size_t bytes, int *fdp,
                    int64_t *offp, UtilDiag *d)
{
    UtilLoc loc = util_loc_file(model_path);
    const char *location = NULL;
    int64_t offset = 0, length = -1;
    for (size_t i = 0; i < tp->n_external_data; i++) {
        const Onnx__StringStringEntryProto *e = tp->external_data[i];
        const char *k = e->key ? e->key : "";
        if (strcmp(k, "location") == 0)
            location = e->value;
        else if (strcmp(k, "offset") == 0 && (offset = parse_count(e->value)) < 0)
            return util_error(d, loc, "%s: external data offset '%s' is not a non-negative integer", what,
                              e->value ? e->value : "");
        else if (strcmp(k, "length") == 0 && (length = parse_count(e->value)) < 0)
            return util_error(d, loc, "%s: external data length '%s' is not a non-negative integer", what,
                              e->value ? e->value : "");
    }
    if (!location)
        return util_error(d, loc, "%s: external data without a 'location'", what);
    UtilDiag sub;
    util_diag_init(&sub);
    char *full = util_resolve_beside(model_path, location, loc, &sub);
    if (!full)
        return util_error(d, loc, "%s: %s", what, sub.msg);
    int fd = util_open_regular(full);
    free(full);
    if (fd < 0 && errno == EINVAL)
        return util_error(d, loc, "%s: external data '%s' is not a regular file", what, location);
    if (fd < 0)
        return util_error(d, loc, "%s: cannot open external data '%s': %s", what, location, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        close(fd);
        return util_error(d, loc, "%s: external data '%s' is not a regular file", what, location);
    }
    int64_t size = (int64_t)st.st_size, avail = offset <= size ? size - offset : -1;
    int rc = 0;
    if (avail < 0)
        rc = util_error(d, loc, "%s: external data offset %lld is past the end of '%s' (%lld bytes)", what,
                        (long long)offset, location, (long long)size);
    else if (length >= 0 && length > avail)
        rc = util_error(d, loc, "%s: external data range [%lld, +%lld) runs past the end of '%s' (%lld bytes)",
                        what, (long long)offset, (long long)length, location, (long long)size);
    else if ((length >= 0 && (uint64_t)length != bytes) || (length < 0 && (uint64_t)avail < bytes))
        rc = util_error(d, loc, "%s: external data holds %lld bytes; the declared shape needs %zu", what,
                        (long long)(length >= 0 ? length : avail), bytes);
    if (rc)
        close(fd);
    *fdp = rc ? -1 : fd;
    *offp = offset;
    return rc;
}

static int ext_read(int fd, int64_t offset, const char *model_path, const char *what, void *dst, size_t bytes,
                    size_t es, UtilDiag *d)
{
    size_t got = 0;
    int rc = 0;
    while (!rc && got < bytes) {
        ssize_t r = pread(fd, (char *)dst + got, bytes - got, (off_t)(offset + (int64_t)got));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            rc = util_error(d, util_loc_file(model_path), "%s: short read from its external data", what);
        else
            got += (size_t)r;
    }
    close(fd);
    if (!rc)
        fix_le(dst, (int64_t)(bytes / es), es);
    return rc;
}

/* Which typed field a dtype's values live in (ONNX TensorProto rules). */
typedef enum { TF_FLOAT, TF_INT32, TF_INT64, TF_DOUBLE, TF_UINT64 } TypedField;

static TypedField typed_field(IrDType t)
{
    switch (t) {
    case IR_DT_F32: return TF_FLOAT;
    case IR_DT_I64: return TF_INT64;
    case IR_DT_F64: return TF_DOUBLE;
    case IR_DT_U32: case IR_DT_U64: return TF_UINT64;
    default: return TF_INT32;   /* int32, int16, int8, uint16, uint8, bool, float16, bfloat16 */
    }
}

static const char *const typed_field_names[] = { "float_data", "int32_data", "int64_data", "double_data",
                                                 "uint64_data" };

/* Range of values an int32_data entry may hold for dtype t. */
static void int32_range(IrDType t, int64_t *lo, int64_t *hi)
{
    switch (t) {
    case IR_DT_I8:   *lo = INT8_MIN;  *hi = INT8_MAX; break;
    case IR_DT_U8:   *lo = 0;         *hi = UINT8_MAX; break;
    case IR_DT_I16:  *lo = INT16_MIN; *hi = INT16_MAX; break;
    case IR_DT_U16: case IR_DT_F16: case IR_DT_BF16: *lo = 0; *hi = UINT16_MAX; break;
    case IR_DT_BOOL: *lo = 0;         *hi = 1; break;
    default:         *lo = INT32_MIN; *hi = INT32_MAX; break;
    }
}

/* The typed field must be the dtype's and hold exactly numel values. */
static int check_typed(const Onnx__TensorProto *tp, const char *what, IrDType dt, int64_t numel, UtilLoc loc,
                       UtilDiag *d)
{
    size_t counts[] = { tp->n_float_data, tp->n_int32_data, tp->n_int64_data, tp->n_double_data,
                        tp->n_uint64_data };
    TypedField want = typed_field(dt);
    for (int f = 0; f < 5; f++)
        if (f != (int)want && counts[f])
            return util_error(d, loc, "%s: %s is given for a tensor of type %s", what, typed_field_names[f],
                              ir_dtype_name(dt));
    if ((uint64_t)counts[want] != (uint64_t)numel)
        return util_error(d, loc, "%s: declares %lld elements but %s holds %zu", what, (long long)numel,
                          typed_field_names[want], counts[want]);
    return 0;
}

static int fill_typed(const Onnx__TensorProto *tp, const char *what, IrDType dt, int64_t numel, void *dst,
                      UtilLoc loc, UtilDiag *d)
{
    TypedField want = typed_field(dt);
    for (int64_t i = 0; i < numel; i++) {
        switch (want) {
        case TF_FLOAT:  ir_store_f64(dt, dst, i, tp->float_data[i]); break;
        case TF_DOUBLE: ir_store_f64(dt, dst, i, tp->double_data[i]); break;
        case TF_INT64:  ir_store_i64(dt, dst, i, tp->int64_data[i]); break;
        case TF_UINT64:
            if (dt == IR_DT_U32 && tp->uint64_data[i] > UINT32_MAX)
                return util_error(d, loc, "%s: value %llu does not fit uint32", what,
                                  (unsigned long long)tp->uint64_data[i]);
            if (dt == IR_DT_U32)
                ((uint32_t *)dst)[i] = (uint32_t)tp->uint64_data[i];
            else
                ((uint64_t *)dst)[i] = tp->uint64_data[i];
            break;
        case TF_INT32: {
            int64_t v = tp->int32_data[i], lo, hi;
            int32_range(dt, &lo, &hi);
            if (v < lo || v > hi)
                return util_error(d, loc, "%s: int32_data value %lld is out of range for %s", what, (long long)v,
                                  ir_dtype_name(dt));
            if (dt == IR_DT_F16 || dt == IR_DT_BF16)
                ((uint16_t *)dst)[i] = (uint16_t)v;      /* the bits of the half-precision value */
            else
                ir_store_i64(dt, dst, i, v);
            break;
        }
        }
    }
    return 0;
}

int fe_onnx_tensor(const Onnx__TensorProto *tp, const char *model_path, const char *what, IrGraph *g,
                   IrArray *out, UtilDiag *d)
{
    UtilLoc loc = util_loc_file(model_path);
    memset(out, 0, sizeof *out);
    int onnx_dt = tp->has_data_type ? tp->data_type : 0;
    IrDType dt = ir_dtype_from_onnx(onnx_dt);
    if (dt == IR_DT_UNDEF) {
        const char *nm = fe_onnx_dtype_name(onnx_dt);
        if (strcmp(nm, "unknown") == 0)
            return util_error(d, loc, "%s has an unknown data type (%d)", what, onnx_dt);
        return util_error(d, loc, "%s has data type %s (%d), which dlcc does not support", what, nm, onnx_dt);
    }
    if (tp->segment)
        return util_error(d, loc, "%s is a segment of a larger tensor; segmented tensors are not supported", what);
    if (tp->n_dims > IR_MAX_RANK)
        return util_error(d, loc, "%s has rank %zu; at most %d is supported", what, tp->n_dims, IR_MAX_RANK);
    IrShape s = { .rank = (int)tp->n_dims };
    int64_t numel = 1;
    for (size_t i = 0; i < tp->n_dims; i++) {
        if (tp->dims[i] < 0)
            return util_error(d, loc, "%s has a negative dimension (%lld)", what, (long long)tp->dims[i]);
        s.dims[i] = tp->dims[i];
        if (util_mul_overflow_i64(numel, tp->dims[i], &numel) || numel > IR_MAX_ELEMENTS)
            return util_error(d, loc, "%s has too many elements (the product of its dimensions overflows "
                              "the limit of %lld)", what, (long long)IR_MAX_ELEMENTS);
    }
    size_t es = ir_dtype_size(dt), bytes = (size_t)numel * es;
    int external = tp->has_data_location && tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    int typed = tp->n_float_data || tp->n_int32_data || tp->n_int64_data || tp->n_double_data ||
                tp->n_uint64_data;
    if (tp->n_string_data)
        return util_error(d, loc, "%s has string_data for a tensor of type %s", what, ir_dtype_name(dt));
    if (external + (tp->has_raw_data ? 1 : 0) + (typed ? 1 : 0) > 1)
        return util_error(d, loc, "%s has its data in more than one place (raw_data, typed fields, external)",
                          what);
    if (tp->has_raw_data && tp->raw_data.len != bytes)
        return util_error(d, loc, "%s: raw_data has %zu bytes; %lld elements of %s need %zu", what,
                          tp->raw_data.len, (long long)numel, ir_dtype_name(dt), bytes);
    if (!external && !tp->has_raw_data && !typed && numel > 0)
        return util_error(d, loc, "%s declares %lld elements but holds no data", what, (long long)numel);
    int fd = -1;
    int64_t offset = 0;
    if (typed && check_typed(tp, what, dt, numel, loc, d))
        return -1;
    if (external && ext_open(tp, model_path, what, bytes, &fd, &offset, d))
        return -1;
    void *data = g ? ir_alloc(g, bytes ? bytes : 1) : calloc(1, bytes ? bytes : 1);
    if (!data) {
        if (fd >= 0)
            close(fd);
        return util_error(d, loc, "%s: out of memory for %zu bytes", what, bytes);
    }
    int rc = 0;
    if (external)
        rc = ext_read(fd, offset, model_path, what, data, bytes, es, d);
    else if (tp->has_raw_data && bytes) {
        memcpy(data, tp->raw_data.data, bytes);
        fix_le(data, numel, es);
    }
    else if (numel > 0)
        rc = fill_typed(tp, what, dt, numel, data, loc, d);
    if (rc) {
        if (!g)
            free(data);
        return -1;
    }
    out->dtype = dt;
    out->shape = s;
    out->data = data;
    return 0;
}

int fe_onnx_read_tensor(const char *path, IrArray *out, UtilDiag *d)
{
    char *bytes;
    size_t len;
    memset(out, 0, sizeof *out);
    if (util_read_file(path, FE_MAX_MODEL_BYTES, &bytes, &len, d))
        return -1;
    if (fe_onnx_check_wire(path, (const uint8_t *)bytes, len, &onnx__tensor_proto__descriptor, d)) {
        free(bytes);
        return -1;
    }
    Onnx__TensorProto *tp = onnx__tensor_proto__unpack(NULL, len, (const uint8_t *)bytes);
    free(bytes);
    if (!tp)
        return util_error(d, util_loc_file(path), "not a valid serialized ONNX TensorProto");
    char what[300];
    snprintf(what, sizeof what, "tensor '%.200s'", tp->name ? tp->name : "");
    int rc = fe_onnx_tensor(tp, path, what, NULL, out, d);
    onnx__tensor_proto__free_unpacked(tp, NULL);
    return rc;
}
