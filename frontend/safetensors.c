/* frontend/safetensors.c — the safetensors weights format.
 *
 * Layout: an 8-byte little-endian header length N, N bytes of JSON header
 * (tensor name → {"dtype", "shape", "data_offsets": [begin, end]}, plus an
 * optional "__metadata__" object of strings), then the data section; offsets
 * are relative to the data section.  Sorted by begin, the tensors must tile
 * the data section exactly.  Errors carry the byte offset in the file.
 */
#include "frontend/json_internal.h"

#include <stdlib.h>
#include <string.h>

static const char *const entry_keys[] = { "dtype", "shape", "data_offsets", NULL };

static uint64_t le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static int check_metadata(const FeJSrc *s, const FeJPath *p, const json_t *v)
{
    const char *key;
    json_t *val;
    if (!json_is_object(v))
        return fe_jerr(s, p, 0, "'__metadata__' must be an object, not %s", fe_jkind(v));
    json_object_foreach((json_t *)v, key, val) {
        FeJPath kp = FE_JKEY(p, key);
        if (!json_is_string(val))
            return fe_jerr(s, &kp, 0, "'__metadata__' values must be strings, not %s", fe_jkind(val));
    }
    return 0;
}

static int read_offsets(const FeJSrc *s, const FeJPath *p, const json_t *v, uint64_t data_len,
                        FeStEntry *e)
{
    int64_t b, en;
    FeJPath bp = FE_JIDX(p, 0), ep = FE_JIDX(p, 1);
    if (fe_jarray(s, p, v, "'data_offsets'"))
        return -1;
    if (json_array_size(v) != 2)
        return fe_jerr(s, p, 0, "'data_offsets' must have 2 elements [begin, end], not %zu",
                       json_array_size(v));
    if (fe_jint(s, &bp, json_array_get(v, 0), 0, FE_JSON_MAX_INT, &b, "a data offset") ||
        fe_jint(s, &ep, json_array_get(v, 1), 0, FE_JSON_MAX_INT, &en, "a data offset"))
        return -1;
    if (en < b)
        return fe_jerr(s, p, 0, "tensor '%s': data_offsets end %lld is before begin %lld", e->name,
                       (long long)en, (long long)b);
    if ((uint64_t)en > data_len)
        return fe_jerr(s, p, 0, "tensor '%s': data_offsets end %lld is past the end of the data section "
                       "(%llu bytes)", e->name, (long long)en, (unsigned long long)data_len);
    e->begin = (uint64_t)b;
    e->end = (uint64_t)en;
    IrArray a = { .dtype = e->dtype, .shape = e->shape };
    uint64_t need = (uint64_t)ir_array_bytes(&a);
    if (need != e->end - e->begin)
        return fe_jerr(s, p, 0, "tensor '%s': shape and dtype need %llu bytes but data_offsets span %llu",
                       e->name, (unsigned long long)need, (unsigned long long)(e->end - e->begin));
    return 0;
}

static int read_entry(const FeJSrc *s, const FeJPath *p, const json_t *v, uint64_t data_len, FeStEntry *e)
{
    json_t *off;
    FeJPath op = FE_JKEY(p, "data_offsets");
    if (fe_jobject(s, p, v, entry_keys, "a safetensors entry") ||
        fe_jtyped(s, p, v, 1, 0, &e->dtype, &e->shape) || fe_jmember(s, p, v, "data_offsets", 1, &off))
        return -1;
    return read_offsets(s, &op, off, data_len, e);
}

static int by_begin(const void *a, const void *b)
{
    const FeStEntry *x = a, *y = b;
    if (x->begin != y->begin)
        return x->begin < y->begin ? -1 : 1;
    return x->end < y->end ? -1 : x->end > y->end;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const FeStEntry *)a)->name, ((const FeStEntry *)b)->name);
}

/* Sorted by begin, the tensors must cover [0, data_len) without gaps or
 * overlaps. */
static int check_tiling(const FeJSrc *s, const FeJPath *root, FeSafetensors *st, uint64_t data_len)
{
    qsort(st->entries, (size_t)st->n, sizeof *st->entries, by_begin);
    uint64_t at = 0;
    for (int i = 0; i < st->n; i++) {
        const FeStEntry *e = &st->entries[i];
        FeJPath ep = FE_JKEY(root, e->name), op = FE_JKEY(&ep, "data_offsets");
        if (e->begin > at)
            return fe_jerr(s, &op, 0, "tensor '%s' starts at %llu, leaving bytes %llu..%llu of the data section "
                           "unused", e->name, (unsigned long long)e->begin, (unsigned long long)at,
                           (unsigned long long)e->begin);
        if (e->begin < at)
            return fe_jerr(s, &op, 0, "tensor '%s' overlaps the bytes of another tensor (it starts at %llu, "
                           "before %llu)", e->name, (unsigned long long)e->begin, (unsigned long long)at);
        at = e->end;
    }
    if (at != data_len)
        return util_error(s->d, util_loc_byte(s->path, (int64_t)(st->data_start + at)),
                          "the data section has %llu bytes after the last tensor that no tensor uses",
                          (unsigned long long)(data_len - at));
    return 0;
}

static int parse_header(FeSafetensors *st, const FeJSrc *s, const json_t *root, uint64_t data_len)
{
    static const FeJPath top = { NULL, NULL, 0 };
    const char *key;
    json_t *val;
    if (!json_is_object(root))
        return fe_jerr(s, &top, 0, "the safetensors header must be a JSON object, not %s", fe_jkind(root));
    size_t n = json_object_size(root);
    st->entries = calloc(n ? n : 1, sizeof *st->entries);
    if (!st->entries)
        return fe_jerr(s, &top, 0, "out of memory");
    json_object_foreach((json_t *)root, key, val) {
        FeJPath p = FE_JKEY(&top, key);
        if (strcmp(key, "__metadata__") == 0) {
            if (check_metadata(s, &p, val))
                return -1;
            continue;
        }
        FeStEntry *e = &st->entries[st->n];
        if (!(e->name = strdup(key)))
            return fe_jerr(s, &p, 0, "out of memory");
        st->n++;
        if (read_entry(s, &p, val, data_len, e))
            return -1;
    }
    if (check_tiling(s, &top, st, data_len))
        return -1;
    qsort(st->entries, (size_t)st->n, sizeof *st->entries, by_name);
    return 0;
}

static int st_parse(FeSafetensors *st, UtilDiag *d)
{
    if (st->len < 8)
        return util_error(d, util_loc_byte(st->path, 0), "the file is %zu bytes, too short for a safetensors "
                          "header", st->len);
    uint64_t n = le64(st->bytes);
    if (n > FE_MAX_ST_HEADER)
        return util_error(d, util_loc_byte(st->path, 0), "the safetensors header length %llu exceeds the limit "
                          "of %llu bytes", (unsigned long long)n, (unsigned long long)FE_MAX_ST_HEADER);
    if (n > st->len - 8)
        return util_error(d, util_loc_byte(st->path, 0), "the safetensors header length %llu runs past the end "
                          "of the file (%zu bytes)", (unsigned long long)n, st->len);
    st->data_start = 8 + n;
    FeJSrc s = { st->path, (const char *)st->bytes + 8, (size_t)n, 8, d };
    json_t *root = fe_json_parse(&s);
    if (!root)
        return -1;
    int rc = parse_header(st, &s, root, st->len - st->data_start);
    json_decref(root);
    return rc;
}

int fe_st_open(FeSafetensors *st, const char *path, UtilDiag *d)
{
    char *data;
    size_t len;
    memset(st, 0, sizeof *st);
    if (util_read_file(path, FE_MAX_MODEL_BYTES, &data, &len, d))
        return -1;
    st->bytes = (uint8_t *)data;
    st->len = len;
    st->path = strdup(path);
    if (!st->path) {
        fe_st_close(st);
        return util_error(d, util_loc_file(path), "out of memory");
    }
    if (st_parse(st, d)) {
        fe_st_close(st);
        return -1;
    }
    return 0;
}

int fe_st_parse(FeSafetensors *st, const char *path, const uint8_t *bytes, size_t len, UtilDiag *d)
{
    memset(st, 0, sizeof *st);
    st->bytes = malloc(len ? len : 1);
    st->path = strdup(path);
    if (!st->bytes || !st->path) {
        fe_st_close(st);
        return util_error(d, util_loc_file(path), "out of memory");
    }
    if (len)
        memcpy(st->bytes, bytes, len);
    st->len = len;
    if (st_parse(st, d)) {
        fe_st_close(st);
        return -1;
    }
    return 0;
}

const FeStEntry *fe_st_find(const FeSafetensors *st, const char *name)
{
    FeStEntry key = { .name = (char *)name };
    if (!st->n)
        return NULL;
    return bsearch(&key, st->entries, (size_t)st->n, sizeof *st->entries, by_name);
}

void fe_st_close(FeSafetensors *st)
{
    for (int i = 0; i < st->n; i++)
        free(st->entries[i].name);
    free(st->entries);
    free(st->bytes);
    free(st->path);
    memset(st, 0, sizeof *st);
}

/* ---- writer ---- */

typedef struct StItem {
    const char *name;
    const IrArray *a;
} StItem;

static int item_by_name(const void *a, const void *b)
{
    return strcmp(((const StItem *)a)->name, ((const StItem *)b)->name);
}

static json_t *entry_json(const IrArray *a, uint64_t begin, uint64_t end)
{
    json_t *e = json_object(), *shape = json_array();
    if (!e || !shape) {
        json_decref(e);
        json_decref(shape);
        return NULL;
    }
    int bad = json_object_set_new(e, "dtype", json_string(ir_dtype_safetensors(a->dtype))) ||
              json_object_set_new(e, "shape", shape) ||
              json_object_set_new(e, "data_offsets", json_pack("[II]", (json_int_t)begin, (json_int_t)end));
    for (int i = 0; !bad && i < a->shape.rank; i++)
        bad = json_array_append_new(shape, json_integer(a->shape.dims[i]));
    if (bad) {
        json_decref(e);
        return NULL;
    }
    return e;
}

/* The JSON header for items (sorted), padded with spaces to a multiple of 8. */
static int st_header(json_t *hdr, const StItem *items, int n, UtilBuf *out, UtilDiag *d)
{
    uint64_t at = 0;
    for (int i = 0; i < n; i++) {
        const IrArray *a = items[i].a;
        if (!ir_dtype_safetensors(a->dtype) || ir_shape_numel(&a->shape) < 0)
            return util_error(d, util_loc_file(NULL), "tensor '%s' cannot be stored in safetensors",
                              items[i].name);
        if (i && strcmp(items[i - 1].name, items[i].name) == 0)
            return util_error(d, util_loc_file(NULL), "duplicate safetensors tensor name '%s'", items[i].name);
        uint64_t bytes = ir_array_bytes(a);
        json_t *e = entry_json(a, at, at + bytes);
        if (!e || json_object_set_new(hdr, items[i].name, e))
            return util_error(d, util_loc_file(NULL), "cannot encode tensor name '%s' (not valid UTF-8?)",
                              items[i].name);
        at += bytes;
    }
    char *text = json_dumps(hdr, JSON_COMPACT | JSON_SORT_KEYS);
    if (!text)
        return util_error(d, util_loc_file(NULL), "out of memory");
    size_t hl = strlen(text), padded = (hl + 7) / 8 * 8;
    uint8_t len8[8];
    for (int i = 0; i < 8; i++)
        len8[i] = (uint8_t)((uint64_t)padded >> (8 * i));
    util_buf_put(out, len8, 8);
    util_buf_put(out, text, hl);
    util_buf_put(out, "        ", padded - hl);
    free(text);
    return 0;
}

int fe_st_write(UtilBuf *out, int n, const char *const *names, const IrArray *arrays, UtilDiag *d)
{
    StItem *items = malloc((size_t)(n > 0 ? n : 1) * sizeof *items);
    json_t *hdr = json_object();
    if (!items || !hdr) {
        free(items);
        json_decref(hdr);
        return util_error(d, util_loc_file(NULL), "out of memory");
    }
    for (int i = 0; i < n; i++)
        items[i] = (StItem){ names[i], &arrays[i] };
    qsort(items, (size_t)n, sizeof *items, item_by_name);
    int rc = st_header(hdr, items, n, out, d);
    for (int i = 0; !rc && i < n; i++)
        util_buf_put(out, items[i].a->data, ir_array_bytes(items[i].a));
    free(items);
    json_decref(hdr);
    if (!rc && out->oom)
        rc = util_error(d, util_loc_file(NULL), "out of memory");
    return rc;
}
