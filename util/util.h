/* util/ — support code shared by every stage: arena allocation, diagnostics,
 * file reading and atomic output.  Prefix: util_ / Util.
 *
 * Nothing here holds global state: an arena or a diagnostic context is always
 * passed explicitly.
 */
#ifndef DLCC_UTIL_H
#define DLCC_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* ---------------------------------------------------------------- arena */

/* A bump allocator owning many small objects with one lifetime (a graph, a
 * parse).  Large requests get a chunk of their own.  Memory is zeroed. */
typedef struct UtilArenaChunk UtilArenaChunk;
typedef struct UtilArena {
    UtilArenaChunk *head;
    size_t bytes;          /* total bytes handed out, for statistics */
} UtilArena;

void  util_arena_init(UtilArena *a);
void  util_arena_free(UtilArena *a);
/* Returns zeroed memory aligned to 16 bytes, or NULL when out of memory or
 * when size overflows. */
void *util_arena_alloc(UtilArena *a, size_t size);
/* count * size with overflow check. */
void *util_arena_array(UtilArena *a, size_t count, size_t size);
char *util_arena_strdup(UtilArena *a, const char *s);
char *util_arena_strndup(UtilArena *a, const char *s, size_t n);

/* ---------------------------------------------------------- diagnostics */

/* Where something came from: a text file position (line/col, 1-based) or a
 * byte offset in a binary file.  line == 0 and offset < 0 mean "whole file". */
typedef struct UtilLoc {
    const char *file;   /* not owned; NULL = no file */
    int line, col;
    int64_t offset;     /* byte offset for binary files, -1 if none */
} UtilLoc;

#define UTIL_DIAG_MSG 1024

/* The first error wins; later ones are ignored so that the innermost, most
 * specific message is the one the user sees. */
typedef struct UtilDiag {
    int has_error;
    char file[512];
    int line, col;
    int64_t offset;
    char msg[UTIL_DIAG_MSG];
} UtilDiag;

void util_diag_init(UtilDiag *d);
/* Records an error (if none yet) and returns -1 so callers can write
 * `return util_error(d, loc, "...")`. */
int  util_error(UtilDiag *d, UtilLoc loc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int  util_verror(UtilDiag *d, UtilLoc loc, const char *fmt, va_list ap);
/* Formats "dlcc: FILE[:LINE:COL]: error: MSG" (or FILE:OFFSET for binary
 * positions as "FILE: error: at byte N: MSG") into buf. */
void util_diag_format(const UtilDiag *d, char *buf, size_t n);
UtilLoc util_loc_file(const char *file);
UtilLoc util_loc_line(const char *file, int line, int col);
UtilLoc util_loc_byte(const char *file, int64_t offset);

/* ---------------------------------------------------------------- files */

/* Opens a regular file for reading without blocking on FIFOs or devices:
 * returns the descriptor, or -1 with errno set (EINVAL when the path is not
 * a regular file). */
int util_open_regular(const char *path);

/* Reads a whole regular file (at most max_bytes).  Returns 0, or -1 with a
 * diagnostic.  The buffer is malloc'd, NUL-terminated (not counted in *len). */
int util_read_file(const char *path, size_t max_bytes, char **data, size_t *len,
                   UtilDiag *d);

/* Resolves `rel` (from a model file) against the folder of `model_path`.
 * Refuses absolute paths, `..` components, and results whose real path lies
 * outside the model's real folder (symlinks).  Returns a malloc'd path or NULL
 * with a diagnostic at `loc`. */
char *util_resolve_beside(const char *model_path, const char *rel, UtilLoc loc,
                          UtilDiag *d);

/* Atomic output: files are written as temporaries in the output folder and
 * renamed into place by util_outset_commit only when every one succeeded. */
typedef struct UtilOutSet {
    int n, cap;
    char **tmp;
    char **final;
} UtilOutSet;

void util_outset_init(UtilOutSet *s);
/* Writes data to a temporary beside dir/name; name must be a plain file name. */
int  util_outset_write(UtilOutSet *s, const char *dir, const char *name,
                       const void *data, size_t len, UtilDiag *d);
int  util_outset_commit(UtilOutSet *s, UtilDiag *d);
void util_outset_abort(UtilOutSet *s);   /* removes temporaries */

/* A growable byte buffer for emitters. */
typedef struct UtilBuf {
    char *data;
    size_t len, cap;
    int oom;
} UtilBuf;

void util_buf_init(UtilBuf *b);
void util_buf_free(UtilBuf *b);
void util_buf_put(UtilBuf *b, const void *p, size_t n);
void util_buf_printf(UtilBuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Replaces every character outside [A-Za-z0-9._-] (and a leading '.') by '_'
 * (docs/cli.md).  Returns a malloc'd string. */
char *util_sanitize_filename(const char *name);
/* Makes a C identifier: [A-Za-z_][A-Za-z0-9_]*; malloc'd. */
char *util_c_identifier(const char *name);

/* Checked arithmetic for sizes taken from untrusted files. */
int util_mul_overflow_i64(int64_t a, int64_t b, int64_t *r);
int util_add_overflow_i64(int64_t a, int64_t b, int64_t *r);

#endif
