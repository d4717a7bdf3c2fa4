/* tools/cmd_run.c — dlcc run: graph inputs from .npy files, the reference
 * interpreter, graph outputs to OUTDIR/<sanitized name>.npy (all or nothing).
 * The interpreter runs the graph as the model file gives it; -O (= -O2) or
 * -O1..-O3 run that level's graph optimizations first (to check that they
 * keep the outputs). */
#include "tools/tools.h"
#include "targets/targets.h"
#include "interp/interp.h"
#include "passes/passes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SUMMARY_VALUES 8

static void summarize(UtilBuf *s, const char *name, const IrArray *a, const char *path)
{
    char shape[256];
    ir_shape_str(&a->shape, shape, sizeof shape);
    util_buf_printf(s, "%s: %s %s = [", name, ir_dtype_name(a->dtype), shape);
    int64_t n = ir_array_numel(a);
    for (int64_t i = 0; i < n && i < SUMMARY_VALUES; i++) {
        const char *sep = i ? ", " : "";
        if (ir_dtype_is_float(a->dtype))
            util_buf_printf(s, "%s%.6g", sep, ir_load_f64(a->dtype, a->data, i));
        else if (a->dtype == IR_DT_U64)
            util_buf_printf(s, "%s%llu", sep, (unsigned long long)((const uint64_t *)a->data)[i]);
        else
            util_buf_printf(s, "%s%lld", sep, (long long)ir_load_i64(a->dtype, a->data, i));
    }
    util_buf_printf(s, "%s] -> %s\n", n > SUMMARY_VALUES ? ", ..." : "", path);
}

static void list_inputs(const IrGraph *g, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = 0;
    for (int i = 0; i < g->n_inputs && len + 1 < n; i++) {
        int w = snprintf(buf + len, n - len, "%s'%s'", i ? ", " : "", g->tensors[g->inputs[i]].name);
        if (w < 0)
            break;
        len += (size_t)w;
    }
    if (!g->n_inputs)
        snprintf(buf, n, "none");
}

/* Maps each -i NAME to a graph input; every graph input exactly once. */
static int bind_inputs(const IrGraph *g, int n_files, const DlccInputFile *files, int *which, UtilDiag *d)
{
    for (int i = 0; i < g->n_inputs; i++)
        which[i] = -1;
    for (int f = 0; f < n_files; f++) {
        int k = 0;
        while (k < g->n_inputs && strcmp(g->tensors[g->inputs[k]].name, files[f].name) != 0)
            k++;
        if (k == g->n_inputs) {
            char names[512];
            list_inputs(g, names, sizeof names);
            return util_error(d, util_loc_file(g->file), "the model has no input named '%s' (its inputs: %s)",
                              files[f].name, names);
        }
        if (which[k] >= 0)
            return util_error(d, util_loc_file(files[f].file), "input '%s' is given twice", files[f].name);
        which[k] = f;
    }
    for (int i = 0; i < g->n_inputs; i++)
        if (which[i] < 0) {
            const IrTensor *t = &g->tensors[g->inputs[i]];
            char shape[256];
            ir_shape_str(&t->v.shape, shape, sizeof shape);
            return util_error(d, util_loc_file(g->file), "input '%s' (%s %s) is not given; pass -i %s=FILE.npy",
                              t->name, ir_dtype_name(t->v.dtype), shape, t->name);
        }
    return 0;
}

static int read_inputs(const IrGraph *g, const DlccInputFile *files, const int *which, IrArray *in, UtilDiag *d)
{
    for (int i = 0; i < g->n_inputs; i++) {
        const IrTensor *t = &g->tensors[g->inputs[i]];
        const char *file = files[which[i]].file;
        if (fe_npy_read(file, &in[i], d))
            return -1;
        if (in[i].dtype != t->v.dtype || !ir_shape_equal(&in[i].shape, &t->v.shape)) {
            char want[256], got[256];
            ir_shape_str(&t->v.shape, want, sizeof want);
            ir_shape_str(&in[i].shape, got, sizeof got);
            return util_error(d, util_loc_file(file), "input '%s' must be %s %s, but the file holds %s %s%s",
                              t->name, ir_dtype_name(t->v.dtype), want, ir_dtype_name(in[i].dtype), got,
                              in[i].dtype == t->v.dtype ? " (for a model with symbolic dims, bind them with "
                                                          "--input-shape NAME=D0,D1,...)" : "");
        }
    }
    return 0;
}

/* OUTDIR/<sanitized name>.npy for every output; two names that sanitize to
 * the same file are an error (docs/cli.md). */
static int output_names(const IrGraph *g, char **fname, UtilDiag *d)
{
    for (int o = 0; o < g->n_outputs; o++) {
        char *s = util_sanitize_filename(g->tensors[g->outputs[o]].name);
        fname[o] = s ? malloc(strlen(s) + 5) : NULL;
        if (!fname[o]) {
            free(s);
            return util_error(d, util_loc_file(g->file), "out of memory");
        }
        sprintf(fname[o], "%s.npy", s);
        free(s);
        for (int p = 0; p < o; p++)
            if (strcmp(fname[p], fname[o]) == 0)
                return util_error(d, util_loc_file(g->file), "outputs '%s' and '%s' would both be written to "
                                  "'%s'", g->tensors[g->outputs[p]].name, g->tensors[g->outputs[o]].name,
                                  fname[o]);
    }
    return 0;
}

static int write_outputs(const IrGraph *g, const IrArray *outv, char **fname, const char *outdir,
                         UtilBuf *summary, UtilDiag *d)
{
    int created;
    if (dlcc_prepare_dir(outdir, &created, d))
        return -1;
    UtilOutSet outs;
    util_outset_init(&outs);
    int rc = 0;
    for (int o = 0; o < g->n_outputs && !rc; o++) {
        UtilBuf b;
        util_buf_init(&b);
        rc = fe_npy_write(&outv[o], &b, d);
        if (!rc)
            rc = util_outset_write(&outs, outdir, fname[o], b.data, b.len, d);
        util_buf_free(&b);
    }
    if (!rc)
        rc = util_outset_commit(&outs, d);
    else
        util_outset_abort(&outs);
    if (rc) {
        if (created)
            rmdir(outdir);
        return -1;
    }
    for (int o = 0; o < g->n_outputs; o++) {
        size_t n = strlen(outdir) + strlen(fname[o]) + 2;
        char *path = malloc(n);
        if (path)
            snprintf(path, n, "%s/%s", outdir, fname[o]);
        summarize(summary, g->tensors[g->outputs[o]].name, &outv[o], path ? path : fname[o]);
        free(path);
    }
    return 0;
}

/* Runs g on `in` with the chosen backend: the reference interpreter (0), the
 * CPU pipeline compiled into this process (1), or the GPU kernels emulated
 * on the host (2). */
static int run_backend(const IrGraph *g, int cpu, const IrArray *in, IrArray *outv, UtilDiag *d)
{
    if (!cpu)
        return interp_run(g, in, outv, d);
    char *name = util_c_identifier(g->name);
    TgtOptions o = { .name = name ? name : "model", .opt_level = 2, .gpu_emulate = cpu == 2, .bf16 = cpu == 3 };
    TgtHostModel *m;
    int rc = tgt_host_jit(g, &o, &m, d);
    if (!rc)
        rc = tgt_host_run(m, in, outv, d);
    tgt_host_free(m);
    free(name);
    return rc;
}

int dlcc_run_graph(const IrGraph *g, int n_files, const DlccInputFile *files, const char *outdir,
                   UtilBuf *summary, UtilDiag *d)
{
    return dlcc_run_graph_on(g, 0, n_files, files, outdir, summary, d);
}

/* Runs the inferred graph g on `in` (one array per graph input) and writes
 * the outputs. */
static int run_arrays(const IrGraph *g, int cpu, const IrArray *in, const char *outdir, UtilBuf *summary,
                      UtilDiag *d)
{
    int no = g->n_outputs, rc = -1, ran = 0;
    IrArray *outv = calloc((size_t)no + 1, sizeof *outv);
    char **fname = calloc((size_t)no + 1, sizeof *fname);
    if (!outv || !fname)
        util_error(d, util_loc_file(g->file), "out of memory");
    else if (!output_names(g, fname, d) && !run_backend(g, cpu, in, outv, d)) {
        ran = 1;
        rc = write_outputs(g, outv, fname, outdir, summary, d);
    }
    for (int o = 0; ran && o < no; o++)
        interp_array_free(&outv[o]);
    for (int o = 0; fname && o < no; o++)
        free(fname[o]);
    free(outv);
    free(fname);
    return rc;
}

/* Reads every graph input of g from its -i file into in[] (g->n_inputs + 1
 * zeroed entries). */
static int read_files(const IrGraph *g, int n_files, const DlccInputFile *files, IrArray *in, UtilDiag *d)
{
    int *which = calloc((size_t)g->n_inputs + 1, sizeof *which);
    int rc = !which ? util_error(d, util_loc_file(g->file), "out of memory")
                    : bind_inputs(g, n_files, files, which, d) || read_inputs(g, files, which, in, d) ? -1 : 0;
    free(which);
    return rc;
}

static void free_arrays(IrArray *in, int n)
{
    for (int i = 0; in && i < n; i++)
        interp_array_free(&in[i]);
    free(in);
}

int dlcc_run_graph_on(const IrGraph *g, int cpu, int n_files, const DlccInputFile *files, const char *outdir,
                      UtilBuf *summary, UtilDiag *d)
{
    int ni = g->n_inputs, rc = -1;
    IrArray *in = calloc((size_t)ni + 1, sizeof *in);
    if (!in)
        util_error(d, util_loc_file(g->file), "out of memory");
    else if (!read_files(g, n_files, files, in, d))
        rc = run_arrays(g, cpu, in, outdir, summary, d);
    free_arrays(in, ni);
    return rc;
}

/* dlcc run's own loading: the inputs are read before inference, so that an
 * input whose value inference needs (a Reshape's shape, ...) is bound to it
 * (pass_infer_bound); the model then runs on the other inputs. */
static int infer_and_run(IrGraph *g, const PassOptions *po, const char *calibrate, double pct, int cpu, int n_files,
                         const DlccInputFile *files, const char *outdir, UtilBuf *summary, UtilDiag *d)
{
    int ni = g->n_inputs, rc = -1;
    IrArray *in = calloc((size_t)ni + 1, sizeof *in);
    char *bound = calloc((size_t)ni + 1, 1);
    if (!in || !bound)
        util_error(d, util_loc_file(g->file), "out of memory");
    else if (!read_files(g, n_files, files, in, d) && !pass_infer_bound(g, in, bound, d) &&
             !fe_check_declared_outputs(g, d) && !(calibrate && dlcc_quantize_with(g, calibrate, pct, NULL, d)) && !pass_run_pipeline(g, po, d)) {
        int k = 0;
        for (int i = 0; i < ni; i++) {        /* the unbound inputs, in order: g->inputs now */
            if (bound[i])
                interp_array_free(&in[i]);
            else
                in[k++] = in[i];
        }
        for (int i = k; i < ni; i++)
            in[i] = (IrArray){ 0 };
        rc = run_arrays(g, cpu, in, outdir, summary, d);
    }
    free_arrays(in, ni);
    free(bound);
    return rc;
}

int dlcc_cmd_run(int argc, char **argv)
{
    const char *outdir = ".", *backend = "interp", *calibrate = NULL, *v;
    int level = 0, int8 = 0, bf16 = 0;
    double pct = 0;
    DlccInputFile *files = calloc((size_t)argc, sizeof *files);
    int n_files = 0;
    DlccArgs a;
    dlcc_args_init(&a, argc, argv, "run");
    if (!files) {
        fprintf(stderr, "dlcc: error: out of memory\n");
        return 1;
    }
    for (; a.i < argc && !a.status; a.i++) {
        if (dlcc_arg_common(&a)) {
            continue;
        } else if ((v = dlcc_arg_value(&a, "-i")) || (v = dlcc_arg_value(&a, "--input"))) {
            const char *eq = strchr(v, '=');
            if (!eq || eq == v || !eq[1]) {
                a.status = dlcc_usage_error("-i wants NAME=FILE.npy, not '%s'", v);
                break;
            }
            ((char *)v)[eq - v] = 0;                     /* split in place: NAME\0FILE */
            files[n_files].name = v;
            files[n_files].file = eq + 1;
            for (int k = 0; k < n_files && !a.status; k++)
                if (strcmp(files[k].name, v) == 0)
                    a.status = dlcc_usage_error("input '%s' is given twice", v);
            n_files++;
        } else if ((v = dlcc_arg_value(&a, "-o"))) {
            outdir = v;
        } else if (strcmp(argv[a.i], "-O") == 0) {
            level = 2;
        } else if (dlcc_arg_opt_level(argv[a.i]) >= 0) {
            level = dlcc_arg_opt_level(argv[a.i]);
        } else if ((v = dlcc_arg_value(&a, "--calibrate"))) {
            calibrate = v;
        } else if ((v = dlcc_arg_value(&a, "--calibration"))) {
            a.status = dlcc_parse_calibration(v, &pct);
        } else if ((v = dlcc_arg_value(&a, "--precision"))) {
            if (strcmp(v, "int8") && strcmp(v, "float32") && strcmp(v, "bf16"))
                a.status = dlcc_usage_error("dlcc run: --precision wants float32, int8 or bf16, not '%s'", v);
            int8 = strcmp(v, "int8") == 0;
            bf16 = strcmp(v, "bf16") == 0;
        } else if ((v = dlcc_arg_value(&a, "--backend"))) {
            backend = v;
            if (strcmp(v, "interp") && strcmp(v, "cpu") && strcmp(v, "gpu-emulate"))
                a.status = dlcc_usage_error("unknown backend '%s' (interp, cpu or gpu-emulate)", v);
        } else {
            dlcc_arg_unknown(&a);
        }
    }
    int status = dlcc_args_finish(&a);
    if (status) {
        free(files);
        return status;
    }
    for (int f = 0; f < n_files && !status; f++)
        for (int b = 0; b < a.binds.n && !status; b++)
            if (strcmp(files[f].name, a.binds.b[b].name) == 0)
                status = dlcc_usage_error("input '%s' is given with both -i and --bind", files[f].name);
    UtilDiag d;
    util_diag_init(&d);
    IrGraph *g;
    int which_backend = strcmp(backend, "cpu") == 0 ? 1 : strcmp(backend, "gpu-emulate") == 0 ? 2 : 0;
    if (bf16 && which_backend != 1 && !status)
        status = dlcc_usage_error("dlcc run: --precision bf16 needs --backend cpu (the interpreter computes in float32)");
    if (status || (status = dlcc_args_load_raw(&a, &g))) {
        free(files);
        return status;
    }
    UtilBuf summary;
    util_buf_init(&summary);
    if (bf16 && which_backend == 1)
        which_backend = 3;                 /* the CPU backend, products in bfloat16 */
    PassOptions po = pass_options(level);
    po.int8 = int8;
    if (which_backend == 1 || which_backend == 3) {   /* the CPU backend: the host's dot products (the interpreter: none) */
        TgtOptions host = { 0 };
        po.dot_i8 = tgt_cpu_dot_i8(&host, 1);
    }
    int rc = calibrate && !int8 ? util_error(&d, util_loc_file(a.model), "--calibrate belongs to --precision int8")
           : infer_and_run(g, &po, calibrate, pct, which_backend, n_files, files, outdir, &summary, &d);
    if (!rc)
        rc = dlcc_write_stdout(&summary, &d);
    util_buf_free(&summary);
    ir_graph_free(g);
    free(files);
    return rc ? dlcc_report(&d) : 0;
}
