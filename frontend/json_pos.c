/* frontend/json_pos.c — positions of values in a JSON text.
 *
 * jansson validates the text and builds the values; these functions only
 * walk text that jansson has already accepted (or, for fe_json_too_deep, scan
 * brackets before parsing), so they skip strings and values without
 * re-validating them.  Nothing here recurses: nesting depth cannot exhaust
 * the stack.
 */
#include "frontend/json_internal.h"

#include <string.h>

#define PATH_MAX_LINKS 128

static int is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

static size_t skip_ws(const char *t, size_t len, size_t i)
{
    while (i < len && is_ws(t[i]))
        i++;
    return i;
}

/* t[i] is '"'; returns the offset just after the closing quote. */
static size_t skip_string(const char *t, size_t len, size_t i)
{
    for (i++; i < len && t[i] != '"'; i++)
        if (t[i] == '\\')
            i++;
    return i < len ? i + 1 : len;
}

/* Returns the offset just after the value starting at i. */
static size_t skip_value(const char *t, size_t len, size_t i)
{
    if (i >= len)
        return len;
    if (t[i] == '"')
        return skip_string(t, len, i);
    if (t[i] != '{' && t[i] != '[') {
        while (i < len && !is_ws(t[i]) && t[i] != ',' && t[i] != '}' && t[i] != ']')
            i++;
        return i;
    }
    size_t depth = 0;
    while (i < len) {
        char c = t[i];
        if (c == '"') {
            i = skip_string(t, len, i);
            continue;
        }
        if (c == '{' || c == '[')
            depth++;
        else if ((c == '}' || c == ']') && --depth == 0)
            return i + 1;
        i++;
    }
    return len;
}

/* Does the string literal t[i..e) (with quotes) spell `key`?  Literals with
 * escapes are decoded by jansson. */
static int key_equals(const char *lit, size_t n, const char *key)
{
    size_t kl = strlen(key);
    if (n < 2)
        return 0;
    if (!memchr(lit, '\\', n))
        return n - 2 == kl && memcmp(lit + 1, key, kl) == 0;
    json_error_t err;
    json_t *s = json_loadb(lit, n, JSON_DECODE_ANY, &err);
    int eq = s && json_is_string(s) && json_string_length(s) == kl &&
             memcmp(json_string_value(s), key, kl) == 0;
    json_decref(s);
    return eq;
}

/* Finds member `key` of the object at i; returns the offset of its name
 * (*val = offset of its value), or SIZE_MAX. */
static size_t find_member(const char *t, size_t len, size_t i, const char *key, size_t *val)
{
    if (i >= len || t[i] != '{')
        return SIZE_MAX;
    for (i = skip_ws(t, len, i + 1); i < len && t[i] == '"';) {
        size_t k = i, ke = skip_string(t, len, i);
        size_t v = skip_ws(t, len, skip_ws(t, len, ke) + 1);     /* past ':' */
        if (key_equals(t + k, ke - k, key)) {
            *val = v;
            return k;
        }
        i = skip_ws(t, len, skip_value(t, len, v));
        if (i < len && t[i] == ',')
            i = skip_ws(t, len, i + 1);
    }
    return SIZE_MAX;
}

/* Offset of element `index` of the array at i, or SIZE_MAX. */
static size_t find_element(const char *t, size_t len, size_t i, size_t index)
{
    if (i >= len || t[i] != '[')
        return SIZE_MAX;
    i = skip_ws(t, len, i + 1);
    for (size_t k = 0; i < len && t[i] != ']'; k++) {
        if (k == index)
            return i;
        i = skip_ws(t, len, skip_value(t, len, i));
        if (i < len && t[i] == ',')
            i = skip_ws(t, len, i + 1);
    }
    return SIZE_MAX;
}

/* The value at p; *key_off receives the offset of its member name (or of
 * the value itself for array elements and the root). */
static size_t locate(const char *t, size_t len, const FeJPath *p, size_t *key_off)
{
    const FeJPath *links[PATH_MAX_LINKS];
    int n = 0;
    for (; p && p->up; p = p->up)            /* the root link carries no step */
        if (n < PATH_MAX_LINKS)
            links[n++] = p;
    size_t at = skip_ws(t, len, 0);
    *key_off = at;
    for (int k = n - 1; k >= 0; k--) {
        size_t next, name;
        if (links[k]->key) {
            name = find_member(t, len, at, links[k]->key, &next);
        } else {
            next = find_element(t, len, at, links[k]->index);
            name = next;
        }
        if (next == SIZE_MAX || name == SIZE_MAX)
            break;
        at = next;
        *key_off = name;
    }
    return at;
}

size_t fe_json_locate(const char *text, size_t len, const FeJPath *p, int key)
{
    size_t key_off;
    size_t v = locate(text, len, p, &key_off);
    return key ? key_off : v;
}

void fe_json_elements(const char *text, size_t len, const FeJPath *p, size_t *offs, size_t n)
{
    size_t key_off;
    size_t i = locate(text, len, p, &key_off);
    memset(offs, 0, n * sizeof *offs);
    if (i >= len || text[i] != '[')
        return;
    i = skip_ws(text, len, i + 1);
    for (size_t k = 0; k < n && i < len && text[i] != ']'; k++) {
        offs[k] = i;
        i = skip_ws(text, len, skip_value(text, len, i));
        if (i < len && text[i] == ',')
            i = skip_ws(text, len, i + 1);
    }
}

size_t fe_json_too_deep(const char *text, size_t len, int max_depth)
{
    int depth = 0;
    for (size_t i = 0; i < len;) {
        char c = text[i];
        if (c == '"') {
            i = skip_string(text, len, i);
            continue;
        }
        if ((c == '{' || c == '[') && ++depth > max_depth)
            return i;
        if ((c == '}' || c == ']') && depth > 0)
            depth--;
        i++;
    }
    return SIZE_MAX;
}

/* Columns count code points: UTF-8 continuation bytes do not advance. */
static void advance(const char *t, size_t from, size_t to, int *line, int *col)
{
    for (size_t i = from; i < to; i++) {
        unsigned char c = (unsigned char)t[i];
        if (c == '\n') {
            (*line)++;
            *col = 1;
        } else if ((c & 0xc0) != 0x80) {
            (*col)++;
        }
    }
}

void fe_json_linecol(const char *text, size_t off, int *line, int *col)
{
    *line = 1;
    *col = 1;
    advance(text, 0, off, line, col);
}

void fe_line_counter_init(FeLineCounter *lc, const char *text)
{
    lc->text = text;
    lc->off = 0;
    lc->line = 1;
    lc->col = 1;
}

UtilLoc fe_line_counter_loc(FeLineCounter *lc, const char *file, size_t off)
{
    if (off < lc->off)
        fe_line_counter_init(lc, lc->text);
    advance(lc->text, lc->off, off, &lc->line, &lc->col);
    lc->off = off;
    return util_loc_line(file, lc->line, lc->col);
}
