/* frontend/fe_json.h — strict JSON reading with positioned diagnostics:
 * jansson parsing (duplicate keys, invalid UTF-8, trailing garbage and
 * excessive nesting refused) and typed member access whose errors carry
 * FILE:LINE:COL of the offending value or key.  The model reader, the
 * safetensors header reader and other readers of JSON files (the device
 * files of targets/hetero/) share it.  Prefix: fe_j.
 *
 * jansson does not keep source positions.  A semantic error therefore names
 * the offending value by its path from the root (FeJPath, a chain of
 * stack-allocated links: member name or array index) and fe_jloc re-locates
 * that path in the text, which jansson has already validated.  Locating costs
 * one scan of the text, so it is done on the error path only; the readers get
 * the positions of many array elements in one scan with fe_json_elements.
 */
#ifndef DLCC_FRONTEND_FE_JSON_H
#define DLCC_FRONTEND_FE_JSON_H

#include <jansson.h>

#include "frontend/frontend.h"

/* Integers in JSON are exact up to 2^53 in most producers (JavaScript,
 * double-based parsers); larger magnitudes are refused. */
#define FE_JSON_MAX_INT ((int64_t)1 << 53)

typedef struct FeJPath {
    const struct FeJPath *up;   /* NULL for the root value */
    const char *key;            /* member name; NULL for an array element */
    size_t index;               /* array index when key == NULL */
} FeJPath;

#define FE_JKEY(parent, k) ((FeJPath){ (parent), (k), 0 })
#define FE_JIDX(parent, i) ((FeJPath){ (parent), NULL, (size_t)(i) })

/* A JSON text and how its positions are reported: line:column for a text
 * file, or a byte offset (byte_base + offset in text) for JSON embedded in a
 * binary file such as a safetensors header. */
typedef struct FeJSrc {
    const char *path;
    const char *text;
    size_t len;
    int64_t byte_base;          /* < 0: text file */
    UtilDiag *d;
} FeJSrc;

/* ---- positions (json_pos.c) ---- */

/* Byte offset in text of the value at p, or of its member name when `key` is
 * set.  Falls back to the deepest part of the path that exists. */
size_t fe_json_locate(const char *text, size_t len, const FeJPath *p, int key);
/* Offsets of the first n elements of the array at p (0 for missing ones). */
void fe_json_elements(const char *text, size_t len, const FeJPath *p, size_t *offs, size_t n);
/* Offset of the first '[' or '{' nested deeper than max_depth, or SIZE_MAX. */
size_t fe_json_too_deep(const char *text, size_t len, int max_depth);
/* 1-based line and column (in code points) of byte offset off. */
void fe_json_linecol(const char *text, size_t off, int *line, int *col);

/* Converts increasing offsets to line:column in one pass over the text. */
typedef struct FeLineCounter {
    const char *text;
    size_t off;
    int line, col;
} FeLineCounter;
void    fe_line_counter_init(FeLineCounter *lc, const char *text);
UtilLoc fe_line_counter_loc(FeLineCounter *lc, const char *file, size_t off);

/* ---- parsing and typed access (json_util.c) ---- */

UtilLoc fe_jloc_at(const FeJSrc *s, size_t off);
UtilLoc fe_jloc(const FeJSrc *s, const FeJPath *p, int key);
/* Records an error at the value at p (or its key) and returns -1. */
int fe_jerr(const FeJSrc *s, const FeJPath *p, int key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Parses s->text with jansson after checking its nesting depth; duplicate
 * keys, invalid UTF-8 and trailing garbage are errors.  NULL on error. */
json_t *fe_json_parse(const FeJSrc *s);

/* "an object", "a string", "an integer", ... for messages. */
const char *fe_jkind(const json_t *v);
/* v must be an object whose member names are all in `allowed` (NULL-ended);
 * `what` names it in messages ("a node"). */
int fe_jobject(const FeJSrc *s, const FeJPath *p, const json_t *v, const char *const *allowed,
               const char *what);
/* v must be an array. */
int fe_jarray(const FeJSrc *s, const FeJPath *p, const json_t *v, const char *what);
/* Member `key` of object o; a missing required member is an error at o. */
int fe_jmember(const FeJSrc *s, const FeJPath *p, const json_t *o, const char *key, int required,
               json_t **out);
/* An integer in [lo, hi]: refuses floats and magnitudes beyond 2^53. */
int fe_jint(const FeJSrc *s, const FeJPath *p, const json_t *v, int64_t lo, int64_t hi, int64_t *out,
            const char *what);
int fe_jstr(const FeJSrc *s, const FeJPath *p, const json_t *v, const char **out, const char *what);
/* A number (integer or float) in [lo, hi]; NaN never passes. */
int fe_jnum(const FeJSrc *s, const FeJPath *p, const json_t *v, double lo, double hi, double *out,
            const char *what);
/* A boolean. */
int fe_jbool(const FeJSrc *s, const FeJPath *p, const json_t *v, int *out, const char *what);

#endif
