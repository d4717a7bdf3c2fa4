/* util/diag.c — the first error of a run, and its one-line rendering. */
#include "util.h"

#include <stdio.h>
#include <string.h>

void util_diag_init(UtilDiag *d) { memset(d, 0, sizeof *d); d->offset = -1; }

UtilLoc util_loc_file(const char *file) { return (UtilLoc){ file, 0, 0, -1 }; }
UtilLoc util_loc_line(const char *file, int line, int col) { return (UtilLoc){ file, line, col, -1 }; }
UtilLoc util_loc_byte(const char *file, int64_t off) { return (UtilLoc){ file, 0, 0, off }; }

int util_verror(UtilDiag *d, UtilLoc loc, const char *fmt, va_list ap)
{
    if (!d || d->has_error)
        return -1;
    d->has_error = 1;
    snprintf(d->file, sizeof d->file, "%s", loc.file ? loc.file : "");
    d->line = loc.line;
    d->col = loc.col;
    d->offset = loc.offset;
    vsnprintf(d->msg, sizeof d->msg, fmt, ap);
    return -1;
}

int util_error(UtilDiag *d, UtilLoc loc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    util_verror(d, loc, fmt, ap);
    va_end(ap);
    return -1;
}

void util_diag_format(const UtilDiag *d, char *buf, size_t n)
{
    if (!d->file[0])
        snprintf(buf, n, "dlcc: error: %s", d->msg);
    else if (d->line > 0)
        snprintf(buf, n, "dlcc: %s:%d:%d: error: %s", d->file, d->line, d->col > 0 ? d->col : 1, d->msg);
    else if (d->offset >= 0)
        snprintf(buf, n, "dlcc: %s: error: at byte %lld: %s", d->file, (long long)d->offset, d->msg);
    else
        snprintf(buf, n, "dlcc: %s: error: %s", d->file, d->msg);
}

int util_mul_overflow_i64(int64_t a, int64_t b, int64_t *r) { return __builtin_mul_overflow(a, b, r); }
int util_add_overflow_i64(int64_t a, int64_t b, int64_t *r) { return __builtin_add_overflow(a, b, r); }
