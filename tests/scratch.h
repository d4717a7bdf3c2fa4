/* tests/scratch.h — scratch folders for tests that write files. */
#ifndef DLCC_TESTS_SCRATCH_H
#define DLCC_TESTS_SCRATCH_H

#include "frontend/frontend.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Removes dir and everything below it (no symlinks are followed). */
static inline void scratch_rm_tree(const char *dir)
{
    DIR *dp = opendir(dir);
    if (!dp)
        return;
    for (struct dirent *e; (e = readdir(dp));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char p[512];
        if ((size_t)snprintf(p, sizeof p, "%s/%s", dir, e->d_name) >= sizeof p)
            continue;
        struct stat st;
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
            scratch_rm_tree(p);
        else
            unlink(p);
    }
    closedir(dp);
    rmdir(dir);
}

/* Entries in dir (hidden temporaries included), or -1 if it does not exist. */
static inline int scratch_count_files(const char *dir)
{
    DIR *dp = opendir(dir);
    if (!dp)
        return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(dp));)
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(dp);
    return n;
}

/* Writes a .npy file of the given array; 0 or -1. */
static inline int scratch_write_npy(const char *path, IrDType dt, int rank, const int64_t *dims, const void *v)
{
    IrArray a = { .dtype = dt, .shape = { .rank = rank }, .data = (void *)v };
    memcpy(a.shape.dims, dims, (size_t)rank * sizeof *dims);
    UtilBuf b;
    util_buf_init(&b);
    UtilDiag d;
    util_diag_init(&d);
    FILE *f = fe_npy_write(&a, &b, &d) ? NULL : fopen(path, "wb");
    int ok = f && fwrite(b.data, 1, b.len, f) == b.len;
    if (f)
        ok &= fclose(f) == 0;
    util_buf_free(&b);
    return ok ? 0 : -1;
}

#endif
