/* util/file.c — bounded file reading, safe relative paths, atomic outputs. */
#define _POSIX_C_SOURCE 200809L
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int util_open_regular(const char *path)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);    /* a FIFO must not block the open */
    if (fd < 0)
        return -1;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        errno = EINVAL;
        return -1;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    return fd;
}

int util_read_file(const char *path, size_t max_bytes, char **data, size_t *len, UtilDiag *d)
{
    *data = NULL;
    *len = 0;
    int fd = util_open_regular(path);
    if (fd < 0 && errno == EINVAL)
        return util_error(d, util_loc_file(path), "not a regular file");
    if (fd < 0)
        return util_error(d, util_loc_file(path), "cannot open: %s", strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        close(fd);
        return util_error(d, util_loc_file(path), "cannot read: %s", strerror(errno));
    }
    if ((uint64_t)st.st_size > max_bytes) {
        close(fd);
        return util_error(d, util_loc_file(path), "file is %lld bytes, larger than the limit of %zu",
                          (long long)st.st_size, max_bytes);
    }
    size_t n = (size_t)st.st_size;
    char *buf = malloc(n + 1);
    if (!buf) {
        close(fd);
        return util_error(d, util_loc_file(path), "out of memory reading %zu bytes", n);
    }
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, buf + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    if (got != n) {
        free(buf);
        return util_error(d, util_loc_file(path), "short read");
    }
    buf[n] = 0;
    *data = buf;
    *len = n;
    return 0;
}

char *util_resolve_beside(const char *model_path, const char *rel, UtilLoc loc, UtilDiag *d)
{
    if (!rel[0]) {
        util_error(d, loc, "empty file location");
        return NULL;
    }
    if (rel[0] == '/' || rel[0] == '\\') {
        util_error(d, loc, "file location '%s' is absolute; it must be relative to the model's folder", rel);
        return NULL;
    }
    /* refuse any '..' component and backslashes (no Windows-style escapes) */
    for (const char *p = rel; *p;) {
        const char *e = p;
        while (*e && *e != '/')
            e++;
        if (e - p == 2 && p[0] == '.' && p[1] == '.') {
            util_error(d, loc, "file location '%s' contains '..'; it must stay inside the model's folder", rel);
            return NULL;
        }
        p = *e ? e + 1 : e;
    }
    if (strchr(rel, '\\')) {
        util_error(d, loc, "file location '%s' contains a backslash", rel);
        return NULL;
    }
    const char *slash = strrchr(model_path, '/');
    size_t dl = slash ? (size_t)(slash - model_path) : 0;
    size_t n = dl + 1 + strlen(rel) + 1;
    char *full = malloc(n + 2);
    if (!full) {
        util_error(d, loc, "out of memory");
        return NULL;
    }
    if (slash)
        snprintf(full, n + 2, "%.*s/%s", (int)dl, model_path, rel);
    else
        snprintf(full, n + 2, "./%s", rel);
    char dir[PATH_MAX], real[PATH_MAX];
    char *dirpath = slash ? strndup(model_path, dl ? dl : 1) : strdup(".");
    if (!dirpath || !realpath(dirpath, dir)) {
        free(dirpath);
        free(full);
        util_error(d, loc, "cannot resolve the model's folder");
        return NULL;
    }
    free(dirpath);
    if (!realpath(full, real)) {
        util_error(d, loc, "cannot open '%s': %s", rel, strerror(errno));
        free(full);
        return NULL;
    }
    size_t dn = strlen(dir);
    int inside = strncmp(real, dir, dn) == 0 && (real[dn] == '/' || (dn == 1 && dir[0] == '/'));
    free(full);
    if (!inside) {
        util_error(d, loc, "file location '%s' resolves outside the model's folder (through a symbolic link)", rel);
        return NULL;
    }
    char *resolved = strdup(real);        /* the path that was checked, not one a swapped link could redirect */
    if (!resolved)
        util_error(d, loc, "out of memory");
    return resolved;
}

void util_outset_init(UtilOutSet *s) { memset(s, 0, sizeof *s); }

int util_outset_write(UtilOutSet *s, const char *dir, const char *name, const void *data, size_t len,
                      UtilDiag *d)
{
    if (s->n == s->cap) {
        int cap = s->cap ? s->cap * 2 : 8;
        char **t = realloc(s->tmp, (size_t)cap * sizeof *t);
        if (t)
            s->tmp = t;
        char **f = realloc(s->final, (size_t)cap * sizeof *f);
        if (f)
            s->final = f;
        if (!t || !f)
            return util_error(d, util_loc_file(dir), "out of memory");
        s->cap = cap;
    }
    if (!name[0] || strchr(name, '/') || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
        return util_error(d, util_loc_file(dir), "invalid output file name '%s'", name);
    size_t n = strlen(dir) + strlen(name) + 32;
    char *fin = malloc(n), *tmp = malloc(n + 16);
    if (!fin || !tmp) {
        free(fin);
        free(tmp);
        return util_error(d, util_loc_file(dir), "out of memory");
    }
    snprintf(fin, n, "%s/%s", dir, name);
    snprintf(tmp, n + 16, "%s/.%s.tmpXXXXXX", dir, name);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        int e = errno;
        free(fin);
        free(tmp);
        return util_error(d, util_loc_file(dir), "cannot create a file in the output folder: %s", strerror(e));
    }
    s->tmp[s->n] = tmp;
    s->final[s->n] = fin;
    s->n++;
    const char *p = data;
    size_t left = len;
    while (left) {
        ssize_t w = write(fd, p, left);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            close(fd);
            return util_error(d, util_loc_file(fin), "write failed: %s", strerror(errno));
        }
        p += w;
        left -= (size_t)w;
    }
    fchmod(fd, 0644);
    if (close(fd) != 0)
        return util_error(d, util_loc_file(fin), "write failed: %s", strerror(errno));
    return 0;
}

static void outset_release(UtilOutSet *s)
{
    for (int i = 0; i < s->n; i++) {
        free(s->tmp[i]);
        free(s->final[i]);
    }
    free(s->tmp);
    free(s->final);
    memset(s, 0, sizeof *s);
}

int util_outset_commit(UtilOutSet *s, UtilDiag *d)
{
    /* Everything that could make a rename fail is checked first, so that
     * either every file is replaced or none is. */
    for (int i = 0; i < s->n; i++) {
        struct stat st;
        if (lstat(s->final[i], &st) == 0 && !S_ISREG(st.st_mode)) {
            util_error(d, util_loc_file(s->final[i]), "exists and is not a regular file; nothing was written");
            util_outset_abort(s);
            return -1;
        }
    }
    for (int i = 0; i < s->n; i++) {
        if (rename(s->tmp[i], s->final[i]) != 0) {
            util_error(d, util_loc_file(s->final[i]), "cannot rename into place: %s", strerror(errno));
            for (int j = 0; j < i; j++)        /* take back the ones already renamed */
                unlink(s->final[j]);
            for (int j = i; j < s->n; j++)
                unlink(s->tmp[j]);
            outset_release(s);
            return -1;
        }
    }
    outset_release(s);
    return 0;
}

void util_outset_abort(UtilOutSet *s)
{
    for (int i = 0; i < s->n; i++)
        unlink(s->tmp[i]);
    outset_release(s);
}
