/* tools/samples.c — the calibration samples of --calibrate DIR: every
 * `.npy` file of DIR, in name order, is one sample of the model's input
 * (docs/cli.md). */
#include "tools/tools.h"
#include "passes/passes.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int dlcc_read_samples(const IrGraph *g, const char *dir, IrArray **samples, int *n, UtilDiag *d)
{
    *samples = NULL;
    *n = 0;
    if (g->n_inputs != 1)
        return util_error(d, util_loc_file(dir), "--calibrate: the model has %d inputs; calibration takes a model "
                          "of one input for now", g->n_inputs);
    DIR *dh = opendir(dir);
    if (!dh)
        return util_error(d, util_loc_file(dir), "--calibrate: cannot read the folder");
    char **names = NULL;
    int cap = 0, rc = 0;
    for (struct dirent *e; rc == 0 && (e = readdir(dh)) != NULL;) {
        size_t l = strlen(e->d_name);
        if (l < 5 || strcmp(e->d_name + l - 4, ".npy") != 0)
            continue;
        if (*n == cap) {
            cap = cap ? 2 * cap : 64;
            char **nn = realloc(names, (size_t)cap * sizeof *nn);
            if (!nn) {
                rc = util_error(d, util_loc_file(dir), "out of memory");
                break;
            }
            names = nn;
        }
        size_t pl = strlen(dir) + l + 2;
        if (!(names[*n] = malloc(pl)))
            rc = util_error(d, util_loc_file(dir), "out of memory");
        else
            snprintf(names[(*n)++], pl, "%s/%s", dir, e->d_name);
    }
    closedir(dh);
    if (rc == 0 && *n == 0)
        rc = util_error(d, util_loc_file(dir), "--calibrate: no .npy file in the folder");
    if (rc == 0)
        qsort(names, (size_t)*n, sizeof *names, by_name);
    IrArray *s = rc == 0 ? calloc((size_t)*n, sizeof *s) : NULL;
    if (rc == 0 && !s)
        rc = util_error(d, util_loc_file(dir), "out of memory");
    const IrTensor *in = &g->tensors[g->inputs[0]];
    for (int i = 0; rc == 0 && i < *n; i++) {
        if ((rc = fe_npy_read(names[i], &s[i], d)) != 0)
            break;
        if (s[i].dtype != in->v.dtype || !ir_shape_equal(&s[i].shape, &in->v.shape)) {
            char a[160], b[160];
            ir_shape_str(&s[i].shape, a, sizeof a);
            ir_shape_str(&in->v.shape, b, sizeof b);
            rc = util_error(d, util_loc_file(names[i]), "--calibrate: the sample is %s %s, the input '%s' is %s %s",
                            ir_dtype_name(s[i].dtype), a, in->name, ir_dtype_name(in->v.dtype), b);
        }
    }
    for (int i = 0; i < *n; i++)
        free(names[i]);
    free(names);
    if (rc) {
        dlcc_free_samples(s, s ? *n : 0);
        *n = 0;
        return -1;
    }
    *samples = s;
    return 0;
}

void dlcc_free_samples(IrArray *s, int n)
{
    for (int i = 0; s && i < n; i++)
        free(s[i].data);
    free(s);
}

int dlcc_parse_calibration(const char *v, double *pct)
{
    char *end;
    if (strcmp(v, "minmax") == 0) {
        *pct = 0;
        return 0;
    }
    if (strcmp(v, "percentile") == 0) {
        *pct = 99.999;             /* ONNX Runtime's percentile calibrator's default */
        return 0;
    }
    if (strncmp(v, "percentile:", 11) == 0) {
        *pct = strtod(v + 11, &end);
        if (end != v + 11 && !*end && *pct >= 50 && *pct <= 100)
            return 0;
    }
    return dlcc_usage_error("--calibration wants minmax, percentile or percentile:P with 50 <= P <= 100, not '%s'",
                            v);
}

int dlcc_quantize_with(IrGraph *g, const char *dir, double pct, PassQuantReport *rep, UtilDiag *d)
{
    IrArray *s;
    int n;
    if (dlcc_read_samples(g, dir, &s, &n, d))
        return -1;
    int r = pass_quantize(g, s, n, pct, rep, d);
    dlcc_free_samples(s, n);
    return r < 0 ? -1 : 0;
}
