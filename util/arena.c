/* util/arena.c — bump allocator: chunks of 64 KiB, large requests alone. */
#include "util.h"

#include <stdlib.h>
#include <string.h>

struct UtilArenaChunk {
    UtilArenaChunk *next;
    size_t used, cap;
    _Alignas(16) unsigned char mem[];
};

enum { ARENA_CHUNK = 64 * 1024 };

void util_arena_init(UtilArena *a) { a->head = NULL; a->bytes = 0; }

void util_arena_free(UtilArena *a)
{
    UtilArenaChunk *c = a->head;
    while (c) {
        UtilArenaChunk *n = c->next;
        free(c);
        c = n;
    }
    a->head = NULL;
    a->bytes = 0;
}

void *util_arena_alloc(UtilArena *a, size_t size)
{
    size_t need = (size + 15u) & ~(size_t)15u;
    if (need < size)
        return NULL;
    UtilArenaChunk *c = a->head;
    if (!c || c->cap - c->used < need) {
        size_t cap = need > ARENA_CHUNK / 4 ? need : ARENA_CHUNK;
        if (cap > SIZE_MAX - sizeof(UtilArenaChunk))
            return NULL;
        UtilArenaChunk *n = malloc(sizeof(UtilArenaChunk) + cap);
        if (!n)
            return NULL;
        n->used = 0;
        n->cap = cap;
        if (cap == need && c) {      /* big block: keep filling the current chunk */
            n->next = c->next;
            c->next = n;
        } else {
            n->next = c;
            a->head = n;
        }
        c = n;
    }
    void *p = c->mem + c->used;
    c->used += need;
    a->bytes += need;
    memset(p, 0, need);
    return p;
}

void *util_arena_array(UtilArena *a, size_t count, size_t size)
{
    if (size && count > SIZE_MAX / size)
        return NULL;
    return util_arena_alloc(a, count && size ? count * size : 1);
}

char *util_arena_strndup(UtilArena *a, const char *s, size_t n)
{
    char *p = util_arena_alloc(a, n + 1);
    if (p) {
        memcpy(p, s, n);
        p[n] = 0;
    }
    return p;
}

char *util_arena_strdup(UtilArena *a, const char *s)
{
    return util_arena_strndup(a, s, strlen(s));
}
