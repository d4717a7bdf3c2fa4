/* util/buf.c — growable byte buffer and name sanitizers. */
#include "util.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void util_buf_init(UtilBuf *b) { memset(b, 0, sizeof *b); }
void util_buf_free(UtilBuf *b) { free(b->data); memset(b, 0, sizeof *b); }

static int buf_reserve(UtilBuf *b, size_t extra)
{
    if (b->oom)
        return -1;
    if (b->len + extra + 1 <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra + 1) {
        if (cap > SIZE_MAX / 2) { b->oom = 1; return -1; }
        cap *= 2;
    }
    char *p = realloc(b->data, cap);
    if (!p) { b->oom = 1; return -1; }
    b->data = p;
    b->cap = cap;
    return 0;
}

void util_buf_put(UtilBuf *b, const void *p, size_t n)
{
    if (buf_reserve(b, n))
        return;
    memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = 0;
}

void util_buf_printf(UtilBuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || buf_reserve(b, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

char *util_sanitize_filename(const char *name)
{
    size_t n = strlen(name);
    char *s = malloc(n + 2);
    if (!s)
        return NULL;
    if (n == 0) {
        strcpy(s, "_");
        return s;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)name[i];
        int ok = (c < 128 && isalnum(c)) || c == '.' || c == '_' || c == '-';
        s[i] = ok && !(i == 0 && c == '.') ? (char)c : '_';
    }
    s[n] = 0;
    return s;
}

char *util_c_identifier(const char *name)
{
    size_t n = strlen(name);
    char *s = malloc(n + 2);
    if (!s)
        return NULL;
    size_t o = 0;
    if (n == 0 || isdigit((unsigned char)name[0]))
        s[o++] = '_';
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)name[i];
        s[o++] = (c < 128 && isalnum(c)) ? (char)c : '_';
    }
    s[o] = 0;
    return s;
}
