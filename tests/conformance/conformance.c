/* tests/conformance/conformance.c — runs the ONNX backend test data through
 * the ONNX frontend, shape inference and the reference interpreter.
 *
 *   conformance ROOT... [--node-dir DIR]... [--expected FILE] [--update-expected]
 *               [--report FILE.md] [--filter SUBSTRING] [--timeout SECONDS]
 *               [--backend interp|cpu|gpu-emulate] [--roundtrip] [--opt N] [-v]
 *
 * --roundtrip loads each model through the JSON format (fe_write_json, as
 * `dlcc convert` writes it) to check that conversion is lossless.
 * --backend cpu compiles each case for the host CPU (the whole CPU pipeline,
 * loaded with LLVM's JIT) instead of running the reference interpreter.
 * --opt N runs the graph passes of -O N (with the checks between passes)
 * after inference, before the interpreter or the CPU pipeline: the outputs
 * must stay within the same tolerance, and at N >= 2 no foldable
 * BatchNormalization, Identity, Dropout, Shape, Size or ConstantOfShape node
 * may remain.
 *
 * A case is a folder holding model.onnx and test_data_set_N/{input,output}_K.pb,
 * or (the light/ models) light_X.onnx beside light_X_output_0.pb, whose input
 * is arange(n).reshape(shape) / n in float32.  Each case runs in a child
 * process (a crashing kernel fails one case, not the run) and ends as
 *   pass         every output within tolerance,
 *   unsupported  loading or running stopped at an unsupported operator or a
 *                part not implemented yet (the operator is recorded),
 *   fail         anything else.
 * The runner exits 1 only when a case listed in the expected-pass file did not
 * pass (a regression); 77 (skipped) when no root exists.
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "frontend/frontend.h"
#include "frontend/onnx.pb-c.h"
#include "interp/interp.h"
#include "passes/passes.h"
#include "targets/targets.h"

enum { ST_PASS, ST_FAIL, ST_UNSUP };
static const char *const st_names[] = { "pass", "fail", "unsupported" };

/* Tolerances that differ from the default (rtol 1e-3, atol 1e-5), first match
 * wins; a name ending in '/' matches a whole root.  Why: ONNX's own runner
 * uses these for the light models (constant weights, deep graphs; atol 1e-7),
 * and DenseNet-121 accumulates more float error over its 121 layers. */
typedef struct Tol {
    const char *name;
    double rtol, atol;
} Tol;
static const Tol tolerances[] = {
    { "light/light_densenet121", 2e-3, 1e-7 },
    { "light/", 1e-3, 1e-7 },
};
#define DEFAULT_RTOL 1e-3
#define DEFAULT_ATOL 1e-5

typedef struct Result {
    int status;
    char op[64];         /* operator blamed (unsupported / failing node), "" if none */
    int bound;           /* runtime inputs bound to the test's values (static shapes) */
    char msg[UTIL_DIAG_MSG + 200];
} Result;

typedef struct Case {
    char *name;          /* "root/case" */
    char *model;
    char *dir;           /* folder with test_data_set_N (NULL for light models) */
    char *light_out;     /* light_X_output_0.pb */
    Result res;
    char **ops;          /* distinct operators of the model */
    int n_ops;
    int plain;           /* every graph input/output is float32, int64, int32 or bool */
    int backend_cpu;     /* 1: compiled for the host CPU, 2: GPU kernels emulated on the host */
    int roundtrip;       /* load through `dlcc convert`'s JSON + safetensors */
    int opt;             /* -O level of the graph passes run before the interpreter */
} Case;

typedef struct Run {
    int opt;             /* --opt N: graph passes before the interpreter */
    Case *cases;
    int n, cap;
    const char *filter;
    unsigned timeout;
    int verbose;
    int backend_cpu;
    int roundtrip;
} Run;

static void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q) {
        fprintf(stderr, "conformance: out of memory\n");
        exit(2);
    }
    return q;
}

static char *xstrdup(const char *s) { return strcpy(xrealloc(NULL, strlen(s) + 1), s); }

static char *path_join(const char *a, const char *b)
{
    size_t n = strlen(a) + strlen(b) + 2;
    char *p = xrealloc(NULL, n);
    snprintf(p, n, "%s/%s", a, b);
    return p;
}

static int is_file(const char *p) { struct stat st; return stat(p, &st) == 0 && S_ISREG(st.st_mode); }
static int is_dir(const char *p) { struct stat st; return stat(p, &st) == 0 && S_ISDIR(st.st_mode); }
static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Sorted entry names of a folder. */
static char **list_dir(const char *dir, int *n)
{
    DIR *d = opendir(dir);
    char **v = NULL;
    *n = 0;
    if (!d)
        return NULL;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        v = xrealloc(v, (size_t)(*n + 1) * sizeof *v);
        v[(*n)++] = xstrdup(e->d_name);
    }
    closedir(d);
    if (*n)
        qsort(v, (size_t)*n, sizeof *v, cmp_str);
    return v;
}

static void free_list(char **v, int n)
{
    for (int i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

/* ------------------------------------------------------------ comparing */

static void tolerance_for(const char *name, double *rtol, double *atol)
{
    *rtol = DEFAULT_RTOL;
    *atol = DEFAULT_ATOL;
    for (size_t i = 0; i < sizeof tolerances / sizeof tolerances[0]; i++) {
        const char *t = tolerances[i].name;
        size_t n = strlen(t);
        if (t[n - 1] == '/' ? strncmp(name, t, n) == 0 : strcmp(name, t) == 0) {
            *rtol = tolerances[i].rtol;
            *atol = tolerances[i].atol;
            return;
        }
    }
}

/* 0 when got matches want; else a message in msg. */
static int compare(const char *tname, const IrArray *got, const IrArray *want, double rtol, double atol, char *msg,
                   size_t n)
{
    char a[160], b[160];
    if (got->dtype != want->dtype || !ir_shape_equal(&got->shape, &want->shape)) {
        ir_shape_str(&got->shape, a, sizeof a);
        ir_shape_str(&want->shape, b, sizeof b);
        snprintf(msg, n, "output '%s' is %s %s, expected %s %s", tname, ir_dtype_name(got->dtype), a,
                 ir_dtype_name(want->dtype), b);
        return -1;
    }
    int64_t cnt = ir_array_numel(want), bad = 0, first = -1;
    double fg = 0, fw = 0;
    int isf = ir_dtype_is_float(want->dtype);
    for (int64_t i = 0; i < cnt; i++) {
        int ok;
        double g, w;
        if (isf) {
            g = ir_load_f64(got->dtype, got->data, i);
            w = ir_load_f64(want->dtype, want->data, i);
            ok = (isnan(g) && isnan(w)) || g == w || fabs(g - w) <= atol + rtol * fabs(w);
        } else {
            int64_t gi = ir_load_i64(got->dtype, got->data, i), wi = ir_load_i64(want->dtype, want->data, i);
            ok = gi == wi;
            g = (double)gi;
            w = (double)wi;
        }
        if (!ok && bad++ == 0) {
            first = i;
            fg = g;
            fw = w;
        }
    }
    if (!bad)
        return 0;
    snprintf(msg, n, "output '%s': %lld of %lld elements differ; first at %lld: got %.9g, expected %.9g "
             "(rtol %g, atol %g)", tname, (long long)bad, (long long)cnt, (long long)first, fg, fw, rtol, atol);
    return -1;
}

/* ------------------------------------------------------------ one case */

static void classify_error(Result *r, const UtilDiag *d)
{
    snprintf(r->msg, sizeof r->msg, "%s", d->msg);
    const char *u = strstr(d->msg, "unsupported operator '");
    /* Features dlcc declines by design, each named in its diagnostic: other
     * element types (string, float8, ...), sequences / optionals / maps,
     * training mode, data-dependent output shapes, operators not in the
     * table, newer opsets (docs/ops.md lists them with the reasons). */
    static const char *const unsupported_phrases[] = {
        "unsupported", "not supported", "does not support", "not implemented", "is not a tensor",
        "training mode", "unknown operator",
    };
    int unsup = 0;
    for (size_t i = 0; i < sizeof unsupported_phrases / sizeof *unsupported_phrases; i++)
        unsup |= strstr(d->msg, unsupported_phrases[i]) != NULL;
    r->status = unsup ? ST_UNSUP : ST_FAIL;
    r->op[0] = 0;
    if (u) {
        u += strlen("unsupported operator '");
        const char *e = strchr(u, '\'');
        snprintf(r->op, sizeof r->op, "%.*s", (int)(e ? e - u : 0), u);
    } else if (strncmp(d->msg, "node ", 5) == 0) {
        const char *p = strstr(d->msg, " ("), *e = p ? strstr(p, "): ") : NULL;
        if (p && e)
            snprintf(r->op, sizeof r->op, "%.*s", (int)(e - p - 2), p + 2);
    }
}

static void fail(Result *r, const char *fmt, const char *a, const char *b)
{
    r->status = ST_FAIL;
    snprintf(r->msg, sizeof r->msg, fmt, a, b);
}

/* A node -O2 should have removed: Shape / Size (static shapes), an
 * inference Dropout, an Identity not copying a graph input, a
 * BatchNormalization with constant parameters, a ConstantOfShape that fits
 * the folding limit.  (An Identity or Dropout from a graph input to a graph
 * output stays: the output needs a buffer of its own.)  Returns the first such node or NULL. */
static const IrNode *left_over(const IrGraph *g)
{
    for (int i = 0; i < g->n_nodes; i++) {
        const IrNode *n = &g->nodes[i];
        const IrTensor *x = ir_in(g, n, 0), *y = ir_out(g, n, 0);
        int bad = 0;
        switch (n->op) {
        case IR_OP_Shape: case IR_OP_Size: bad = 1; break;
        case IR_OP_Dropout:
            bad = (n->n_in < 3 || n->in[2] < 0) && x->kind != IR_TK_INPUT; break;
        case IR_OP_Identity: bad = x && x->kind != IR_TK_INPUT; break;
        case IR_OP_ConstantOfShape: bad = y && (int64_t)ir_array_bytes(&y->v) <= PASS_FOLD_MAX_BYTES; break;
        case IR_OP_BatchNormalization:
            bad = !ir_attr_int(n, IR_A_training_mode) && ir_dtype_is_float(x->v.dtype) && x->v.shape.rank >= 2;
            for (int k = 1; k < 5 && bad; k++)
                bad = g->tensors[n->in[k]].v.data != NULL;
            for (int k = 1; k < n->n_out && bad; k++)
                bad = n->out[k] < 0;
            break;
        default: break;
        }
        if (bad)
            return n;
    }
    return NULL;
}

/* The -O passes of the case (none at 0); fills r on failure. */
static int optimize(const Case *c, IrGraph *g, Result *r)
{
    if (!c->opt)
        return 0;
    UtilDiag d;
    util_diag_init(&d);
    PassOptions po = pass_options(c->opt);
    po.verify = 1;
    if (pass_run_pipeline(g, &po, &d)) {
        classify_error(r, &d);
        r->status = ST_FAIL;                  /* an optimizer error is never "unsupported" */
        return -1;
    }
    const IrNode *n = c->opt >= 2 ? left_over(g) : NULL;
    if (n) {
        fail(r, "-O2 left a foldable %s node ('%s')", ir_op_name(n->op), n->name);
        return -1;
    }
    return 0;
}

/* Loads the case's model; with --roundtrip, writes it as JSON + safetensors
 * (fe_write_json, what `dlcc convert` does) into a scratch folder and loads
 * that instead, so every case also checks that conversion is lossless. */
static IrGraph *load_model(const Case *c, UtilDiag *d)
{
    IrGraph *g = fe_load(c->model, NULL, d);
    if (!g || !c->roundtrip)
        return g;
    char dir[] = "/tmp/dlcc-conformance-XXXXXX";
    if (!mkdtemp(dir)) {
        ir_graph_free(g);
        util_error(d, util_loc_file(c->model), "cannot make a scratch folder");
        return NULL;
    }
    UtilOutSet outs;
    util_outset_init(&outs);
    int rc = fe_write_json(g, &outs, dir, "model.json", "model.safetensors", d);
    rc = rc ? (util_outset_abort(&outs), -1) : util_outset_commit(&outs, d);
    ir_graph_free(g);
    g = NULL;
    char json[sizeof dir + 32], st[sizeof dir + 32];
    snprintf(json, sizeof json, "%s/model.json", dir);
    snprintf(st, sizeof st, "%s/model.safetensors", dir);
    if (!rc)
        g = fe_load(json, NULL, d);
    unlink(json);
    unlink(st);
    rmdir(dir);
    return g;
}

/* The reference interpreter, or the CPU pipeline compiled in-process. */
static int run_backend(int cpu, const IrGraph *g, const IrArray *ins, IrArray *outs, UtilDiag *d)
{
    if (!cpu)
        return interp_run(g, ins, outs, d);
    TgtOptions o = { .name = "conformance_model", .opt_level = 2, .gpu_emulate = cpu == 2 };
    TgtHostModel *m;
    int rc = tgt_host_jit(g, &o, &m, d);
    if (!rc)
        rc = tgt_host_run(m, ins, outs, d);
    tgt_host_free(m);
    return rc;
}

/* Runs graph g on inputs and compares with expected outputs; fills r. */
static int run_and_compare(const Case *c, IrGraph *g, IrArray *ins, IrArray *want, int n_want, Result *r)
{
    UtilDiag d;
    util_diag_init(&d);
    if (optimize(c, g, r))
        return -1;
    if (n_want != g->n_outputs) {
        char a[32], b[32];
        snprintf(a, sizeof a, "%d", n_want);
        snprintf(b, sizeof b, "%d", g->n_outputs);
        fail(r, "the test data has %s outputs, the graph %s", a, b);
        return -1;
    }
    IrArray *outs = calloc((size_t)g->n_outputs + 1, sizeof *outs);
    if (!outs || run_backend(c->backend_cpu, g, ins, outs, &d)) {
        free(outs);
        classify_error(r, &d);
        return -1;
    }
    double rtol, atol;
    tolerance_for(c->name, &rtol, &atol);
    int rc = 0;
    for (int o = 0; o < g->n_outputs; o++) {
        if (!rc && compare(g->tensors[g->outputs[o]].name, &outs[o], &want[o], rtol, atol, r->msg, sizeof r->msg)) {
            r->status = ST_FAIL;
            rc = -1;
        }
        interp_array_free(&outs[o]);
    }
    free(outs);
    return rc;
}

static void free_arrays(IrArray *a, int n)
{
    for (int i = 0; i < n; i++)
        free(a[i].data);
    free(a);
}

/* Reads prefix_0.pb, prefix_1.pb, ... from dir; returns the count or -1. */
static int read_pbs(const char *dir, const char *prefix, IrArray **out, Result *r)
{
    int n = 0;
    IrArray *v = NULL;
    for (;; n++) {
        char name[64];
        snprintf(name, sizeof name, "%s_%d.pb", prefix, n);
        char *p = path_join(dir, name);
        if (!is_file(p)) {
            free(p);
            break;
        }
        v = xrealloc(v, (size_t)(n + 1) * sizeof *v);
        UtilDiag d;
        util_diag_init(&d);
        int rc = fe_onnx_read_tensor(p, &v[n], &d);
        free(p);
        if (rc) {
            classify_error(r, &d);     /* an element type dlcc lacks is 'unsupported' */
            snprintf(r->msg, sizeof r->msg, "reading test data: %s", d.msg);
            free_arrays(v, n);
            return -1;
        }
    }
    *out = v;
    return n;
}

/* ONNX's numpy-based test data stores bfloat16 tensors as their uint16 bit
 * patterns (numpy has no bfloat16): read them as the bfloat16 the graph says. */
static void bf16_quirk(IrArray *a, IrDType want)
{
    if (want == IR_DT_BF16 && a->dtype == IR_DT_U16)
        a->dtype = IR_DT_BF16;
}

/* One test_data_set: loads the model, infers it knowing the test's inputs
 * (pass_infer_bound: an input that inference needs as a compile-time value, a
 * Reshape shape or Resize scales, is bound to the test's value, as `dlcc run`
 * does; r->bound counts them), runs, compares. */
static void run_set(const Case *c, IrArray *ins, int ni, IrArray *want, int no, Result *r)
{
    UtilDiag d;
    util_diag_init(&d);
    IrGraph *g = load_model(c, &d);
    if (!g) {
        classify_error(r, &d);
        return;
    }
    if (ni != g->n_inputs) {
        char a[32], b[32];
        snprintf(a, sizeof a, "%d", ni);
        snprintf(b, sizeof b, "%d", g->n_inputs);
        fail(r, "the test data has %s inputs, the graph %s runtime inputs", a, b);
        ir_graph_free(g);
        return;
    }
    for (int i = 0; i < ni; i++)
        bf16_quirk(&ins[i], g->tensors[g->inputs[i]].v.dtype);
    char *bound = xrealloc(NULL, (size_t)ni + 1);
    IrArray *run_in = xrealloc(NULL, (size_t)(ni + 1) * sizeof *run_in);
    if (pass_infer_bound(g, ins, bound, &d)) {
        classify_error(r, &d);
    } else {
        int keep = 0;
        for (int i = 0; i < ni; i++)
            if (!bound[i])
                run_in[keep++] = ins[i];
        r->bound = ni - keep;
        for (int o = 0; o < no && o < g->n_outputs; o++)
            bf16_quirk(&want[o], g->tensors[g->outputs[o]].v.dtype);
        run_and_compare(c, g, run_in, want, no, r);
    }
    free(run_in);
    free(bound);
    ir_graph_free(g);
}

static void run_case(const Case *c, Result *r)
{
    UtilDiag d;
    util_diag_init(&d);
    r->status = ST_PASS;
    if (!c->dir) {                             /* light model: arange input */
        IrGraph *g = load_model(c, &d);
        if (!g || pass_infer(g, &d)) {
            classify_error(r, &d);
            ir_graph_free(g);
            return;
        }
        if (g->n_inputs != 1) {
            fail(r, "a light model must have one runtime input%s%s", "", "");
            ir_graph_free(g);
            return;
        }
        const IrTensor *x = &g->tensors[g->inputs[0]];
        IrArray in = { IR_DT_F32, x->v.shape, NULL };
        int64_t n = ir_shape_numel(&x->v.shape);
        float *p = malloc((size_t)(n ? n : 1) * sizeof(float));
        for (int64_t i = 0; p && i < n; i++)
            p[i] = (float)i / (float)n;
        in.data = p;
        IrArray *want = xrealloc(NULL, sizeof *want);
        util_diag_init(&d);
        if (x->v.dtype != IR_DT_F32 || !p)
            fail(r, "the light model's input is not float32%s%s", "", "");
        else if (fe_onnx_read_tensor(c->light_out, want, &d))
            fail(r, "reading test data: %s%s", d.msg, "");
        else {
            run_and_compare(c, g, &in, want, 1, r);
            free(want->data);
        }
        free(want);
        free(p);
        ir_graph_free(g);
        return;
    }
    IrGraph *g0 = load_model(c, &d);    /* a model dlcc cannot read needs no test data */
    if (!g0) {
        classify_error(r, &d);
        return;
    }
    ir_graph_free(g0);
    int nsets;
    char **sets = list_dir(c->dir, &nsets);
    int ran = 0;
    for (int s = 0; s < nsets && r->status == ST_PASS; s++) {
        if (strncmp(sets[s], "test_data_set_", 14) != 0)
            continue;
        char *sd = path_join(c->dir, sets[s]);
        IrArray *ins = NULL, *want = NULL;
        int ni = read_pbs(sd, "input", &ins, r), no = ni < 0 ? -1 : read_pbs(sd, "output", &want, r);
        free(sd);
        if (ni >= 0 && no >= 0) {
            run_set(c, ins, ni, want, no, r);
            ran++;
        }
        if (ni >= 0)
            free_arrays(ins, ni);
        if (no >= 0)
            free_arrays(want, no);
    }
    if (r->status == ST_PASS && !ran) {
        /* no test data: at least load and infer */
        IrGraph *g = load_model(c, &d);
        if (!g || pass_infer(g, &d))
            classify_error(r, &d);
        else
            fail(r, "no test_data_set_N folder%s%s", "", "");
        ir_graph_free(g);
    }
    free_list(sets, nsets);
}

/* Runs the case in a child so that a crash or a hang fails only this case. */
static void run_isolated(const Run *run, Case *c)
{
    int fds[2];
    memset(&c->res, 0, sizeof c->res);
    if (pipe(fds) != 0) {
        run_case(c, &c->res);
        return;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        if (run->timeout)
            alarm(run->timeout);
        Result r;
        memset(&r, 0, sizeof r);
        run_case(c, &r);
        ssize_t w = write(fds[1], &r, sizeof r);
        _exit(w == (ssize_t)sizeof r ? 0 : 3);
    }
    close(fds[1]);
    Result r;
    size_t got = 0;
    while (pid > 0 && got < sizeof r) {
        ssize_t k = read(fds[0], (char *)&r + got, sizeof r - got);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        got += (size_t)k;
    }
    close(fds[0]);
    int status = 0;
    if (pid > 0)
        waitpid(pid, &status, 0);
    if (pid > 0 && got == sizeof r) {
        c->res = r;
    } else {
        c->res.status = ST_FAIL;
        if (pid < 0)
            snprintf(c->res.msg, sizeof c->res.msg, "cannot fork: %s", strerror(errno));
        else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
            snprintf(c->res.msg, sizeof c->res.msg, "timed out after %u s", run->timeout);
        else if (WIFSIGNALED(status))
            snprintf(c->res.msg, sizeof c->res.msg, "crashed (signal %d)", WTERMSIG(status));
        else
            snprintf(c->res.msg, sizeof c->res.msg, "the case process ended without a result (status %d)",
                     WEXITSTATUS(status));
    }
}

/* The distinct operator types in a model, for the per-operator report. */
static void model_ops(Case *c)
{
    char *bytes;
    size_t len;
    UtilDiag d;
    util_diag_init(&d);
    if (util_read_file(c->model, FE_MAX_MODEL_BYTES, &bytes, &len, &d))
        return;
    Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, len, (const uint8_t *)bytes);
    free(bytes);
    if (!m)
        return;
    c->plain = m->graph != NULL;
    for (int io = 0; io < 2 && m->graph; io++) {
        size_t n = io ? m->graph->n_output : m->graph->n_input;
        Onnx__ValueInfoProto **v = io ? m->graph->output : m->graph->input;
        for (size_t i = 0; i < n; i++) {
            const Onnx__TypeProto *t = v[i]->type;
            int et = t && t->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE && t->tensor_type
                         ? t->tensor_type->elem_type : -1;
            if (et != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT && et != ONNX__TENSOR_PROTO__DATA_TYPE__INT64 &&
                et != ONNX__TENSOR_PROTO__DATA_TYPE__INT32 && et != ONNX__TENSOR_PROTO__DATA_TYPE__BOOL)
                c->plain = 0;
        }
    }
    for (size_t i = 0; m->graph && i < m->graph->n_node; i++) {
        const char *op = m->graph->node[i]->op_type ? m->graph->node[i]->op_type : "?";
        int seen = 0;
        for (int k = 0; k < c->n_ops && !seen; k++)
            seen = strcmp(c->ops[k], op) == 0;
        if (!seen) {
            c->ops = xrealloc(c->ops, (size_t)(c->n_ops + 1) * sizeof *c->ops);
            c->ops[c->n_ops++] = xstrdup(op);
        }
    }
    onnx__model_proto__free_unpacked(m, NULL);
}

/* ------------------------------------------------------------ discovery */

static void add_case(Run *run, const char *name, char *model, char *dir, char *light_out)
{
    if (run->filter && !strstr(name, run->filter)) {
        free(model); free(dir); free(light_out);
        return;
    }
    if (run->n == run->cap) {
        run->cap = run->cap ? run->cap * 2 : 64;
        run->cases = xrealloc(run->cases, (size_t)run->cap * sizeof *run->cases);
    }
    Case *c = &run->cases[run->n++];
    memset(c, 0, sizeof *c);
    c->name = xstrdup(name);
    c->model = model;
    c->dir = dir;
    c->light_out = light_out;
    c->backend_cpu = run->backend_cpu;
    c->roundtrip = run->roundtrip;
    c->opt = run->opt;
}

static int scan_root(Run *run, const char *root)
{
    if (!is_dir(root)) {
        printf("conformance: %s is absent; skipped\n", root);
        return 0;
    }
    const char *base = strrchr(root, '/');
    base = base && base[1] ? base + 1 : root;
    int n;
    char **ents = list_dir(root, &n);
    for (int i = 0; i < n; i++) {
        char *p = path_join(root, ents[i]);
        char name[600];
        size_t l = strlen(ents[i]);
        if (is_dir(p)) {
            char *model = path_join(p, "model.onnx");
            snprintf(name, sizeof name, "%s/%s", base, ents[i]);
            if (is_file(model))
                add_case(run, name, model, xstrdup(p), NULL);
            else
                free(model);
        } else if (l > 5 && strcmp(ents[i] + l - 5, ".onnx") == 0) {
            char outn[600];
            snprintf(outn, sizeof outn, "%.*s_output_0.pb", (int)(l - 5), ents[i]);
            char *out = path_join(root, outn);
            snprintf(name, sizeof name, "%s/%.*s", base, (int)(l - 5), ents[i]);
            if (is_file(out))
                add_case(run, name, xstrdup(p), NULL, out);
            else
                free(out);
        }
        free(p);
    }
    free_list(ents, n);
    return 1;
}

/* ------------------------------------------------------------ reporting */

typedef struct OpRow {
    const char *op;
    int cases, pass, fail, unsup, blamed;
} OpRow;

static int cmp_row(const void *a, const void *b) { return strcmp(((const OpRow *)a)->op, ((const OpRow *)b)->op); }

static void md_escape(FILE *f, const char *s)
{
    for (; *s; s++)
        fputs(*s == '|' ? "\\|" : *s == '\n' ? " " : (char[2]){ *s, 0 }, f);
}

static int write_report(const Run *run, const char *path, int np, int nf, int nu)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "conformance: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    OpRow *rows = NULL;
    int nr = 0;
    for (int i = 0; i < run->n; i++) {
        const Case *c = &run->cases[i];
        for (int k = 0; k < c->n_ops; k++) {
            int j = 0;
            while (j < nr && strcmp(rows[j].op, c->ops[k]) != 0)
                j++;
            if (j == nr) {
                rows = xrealloc(rows, (size_t)(nr + 1) * sizeof *rows);
                memset(&rows[nr], 0, sizeof rows[nr]);
                rows[nr++].op = c->ops[k];
            }
            rows[j].cases++;
            rows[j].pass += c->res.status == ST_PASS;
            rows[j].fail += c->res.status == ST_FAIL;
            rows[j].unsup += c->res.status == ST_UNSUP;
            rows[j].blamed += c->res.status != ST_PASS && strcmp(c->res.op, c->ops[k]) == 0;
        }
    }
    if (nr)
        qsort(rows, (size_t)nr, sizeof *rows, cmp_row);
    fprintf(f, "# ONNX conformance (reference interpreter)\n\n");
    fprintf(f, "conformance: %d passed, %d failed, %d unsupported\n\n", np, nf, nu);
    fprintf(f, "## Per operator\n\nCases using the operator, by outcome; *blamed*: non-passing cases whose error "
               "names this operator.\n\n| operator | cases | pass | fail | unsupported | blamed |\n"
               "|---|---:|---:|---:|---:|---:|\n");
    for (int j = 0; j < nr; j++)
        fprintf(f, "| %s | %d | %d | %d | %d | %d |\n", rows[j].op, rows[j].cases, rows[j].pass, rows[j].fail,
                rows[j].unsup, rows[j].blamed);
    fprintf(f, "\n## Cases not passing\n\n| case | outcome | operator | message |\n|---|---|---|---|\n");
    for (int i = 0; i < run->n; i++) {
        const Case *c = &run->cases[i];
        if (c->res.status == ST_PASS)
            continue;
        fprintf(f, "| %s | %s | %s | ", c->name, st_names[c->res.status], c->res.op[0] ? c->res.op : "");
        md_escape(f, c->res.msg);
        fprintf(f, " |\n");
    }
    fprintf(f, "\n## Cases run with inputs bound to the test's values\n\ndlcc compiles static shapes: a runtime "
               "input that inference needs at compile time (a Reshape shape, Resize scales, ...) is bound to the "
               "test data's value.\n\n");
    for (int i = 0; i < run->n; i++)
        if (run->cases[i].res.bound)
            fprintf(f, "- %s (%s, %d inputs bound)\n", run->cases[i].name, st_names[run->cases[i].res.status],
                    run->cases[i].res.bound);
    free(rows);
    return fclose(f) == 0 ? 0 : -1;
}

/* ------------------------------------------------------------ expected list */

static char **read_expected(const char *path, int *n)
{
    *n = 0;
    FILE *f = path ? fopen(path, "r") : NULL;
    if (!f)
        return NULL;
    char **v = NULL, line[1024];
    while (fgets(line, sizeof line, f)) {
        size_t l = strcspn(line, "\r\n");
        line[l] = 0;
        while (l && (line[l - 1] == ' ' || line[l - 1] == '\t'))
            line[--l] = 0;
        if (!l || line[0] == '#')
            continue;
        v = xrealloc(v, (size_t)(*n + 1) * sizeof *v);
        v[(*n)++] = xstrdup(line);
    }
    fclose(f);
    return v;
}

static const Case *find_case(const Run *run, const char *name)
{
    for (int i = 0; i < run->n; i++)
        if (strcmp(run->cases[i].name, name) == 0)
            return &run->cases[i];
    return NULL;
}

static int write_expected(const Run *run, const char *path, char **old, int n_old)
{
    char **v = NULL;
    int n = 0;
    for (int i = 0; i < n_old; i++)
        if (!find_case(run, old[i])) {          /* not run this time (e.g. node suite absent): kept */
            v = xrealloc(v, (size_t)(n + 1) * sizeof *v);
            v[n++] = old[i];
        }
    for (int i = 0; i < run->n; i++)
        if (run->cases[i].res.status == ST_PASS) {
            v = xrealloc(v, (size_t)(n + 1) * sizeof *v);
            v[n++] = run->cases[i].name;
        }
    if (n)
        qsort(v, (size_t)n, sizeof *v, cmp_str);
    FILE *f = fopen(path, "w");
    if (!f) {
        free(v);
        fprintf(stderr, "conformance: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    fprintf(f, "# Conformance cases that pass through the reference interpreter; a case listed here\n"
               "# that stops passing fails the test.  Rewrite with: conformance ... --update-expected\n");
    for (int i = 0; i < n; i++)
        fprintf(f, "%s\n", v[i]);
    free(v);
    return fclose(f) == 0 ? 0 : -1;
}

/* ------------------------------------------------------------ main */

static void usage(void)
{
    fprintf(stderr, "usage: conformance ROOT... [--node-dir DIR] [--expected FILE] [--update-expected]\n"
                    "                   [--report FILE.md] [--filter SUBSTRING] [--timeout SECONDS]\n"
                    "                   [--backend interp|cpu|gpu-emulate] [--roundtrip] [--opt N] [-v]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    Run run = { 0 };
    const char *report = NULL, *expected = NULL;
    int update = 0, roots = 0, found = 0;
    const char **rootv = calloc((size_t)argc + 1, sizeof *rootv);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--node-dir") == 0 && i + 1 < argc)
            rootv[roots++] = argv[++i];
        else if (strcmp(a, "--report") == 0 && i + 1 < argc)
            report = argv[++i];
        else if (strcmp(a, "--expected") == 0 && i + 1 < argc)
            expected = argv[++i];
        else if (strcmp(a, "--filter") == 0 && i + 1 < argc)
            run.filter = argv[++i];
        else if (strcmp(a, "--timeout") == 0 && i + 1 < argc)
            run.timeout = (unsigned)strtoul(argv[++i], NULL, 10);
        else if (strcmp(a, "--opt") == 0 && i + 1 < argc)
            run.opt = (int)strtol(argv[++i], NULL, 10);
        else if (strcmp(a, "--update-expected") == 0)
            update = 1;
        else if (strcmp(a, "-v") == 0)
            run.verbose = 1;
        else if (strcmp(a, "--roundtrip") == 0)
            run.roundtrip = 1;
        else if (strcmp(a, "--backend") == 0 && i + 1 < argc) {
            const char *b = argv[++i];
            if (strcmp(b, "cpu") && strcmp(b, "interp") && strcmp(b, "gpu-emulate"))
                usage();
            run.backend_cpu = strcmp(b, "cpu") == 0 ? 1 : strcmp(b, "gpu-emulate") == 0 ? 2 : 0;
        }
        else if (a[0] == '-')
            usage();
        else
            rootv[roots++] = a;
    }
    if (!roots)
        usage();
    for (int i = 0; i < roots; i++)
        found += scan_root(&run, rootv[i]);
    free(rootv);
    if (!found) {
        printf("conformance: no test data found; skipped\n");
        return 77;
    }
    int np = 0, nf = 0, nu = 0;
    for (int i = 0; i < run.n; i++) {
        Case *c = &run.cases[i];
        model_ops(c);
        run_isolated(&run, c);
        np += c->res.status == ST_PASS;
        nf += c->res.status == ST_FAIL;
        nu += c->res.status == ST_UNSUP;
        if (c->res.status == ST_FAIL)
            printf("FAIL %s: %s\n", c->name, c->res.msg);
        else if (c->res.status == ST_UNSUP)
            printf("UNSUPPORTED %s (%s): %s\n", c->name, c->res.op[0] ? c->res.op : "?", c->res.msg);
        else if (run.verbose)
            printf("PASS %s%s\n", c->name, c->res.bound ? " (shape inputs bound to the test's values)" : "");
        fflush(stdout);
    }
    int n_exp, regress = 0, not_run = 0;
    char **exp = read_expected(expected, &n_exp);
    for (int i = 0; i < n_exp; i++) {
        const Case *c = find_case(&run, exp[i]);
        if (!c)
            not_run++;
        else if (c->res.status != ST_PASS) {
            printf("REGRESSION %s (listed in the expected-pass file): %s\n", c->name, c->res.msg);
            regress++;
        }
    }
    if (not_run)
        printf("conformance: %d listed cases were not run (their data is absent or filtered out)\n", not_run);
    int rc = regress ? 1 : 0;
    if (report && write_report(&run, report, np, nf, nu))
        rc = 2;
    if (update && expected && write_expected(&run, expected, exp, n_exp))
        rc = 2;
    int node_n = 0, node_p = 0, plain_n = 0, plain_p = 0;
    for (int i = 0; i < run.n; i++) {
        const Case *c = &run.cases[i];
        if (strncmp(c->name, "node/", 5) != 0)
            continue;
        node_n++;
        node_p += c->res.status == ST_PASS;
        plain_n += c->plain;
        plain_p += c->plain && c->res.status == ST_PASS;
    }
    if (node_n)
        printf("conformance: node suite: %d of %d cases pass; of the %d whose tensors are float32/int64/int32/bool, "
               "%d pass (%.1f%%)\n", node_p, node_n, plain_n, plain_p, plain_n ? 100.0 * plain_p / plain_n : 0.0);
    printf("conformance: %d passed, %d failed, %d unsupported\n", np, nf, nu);
    for (int i = 0; i < run.n; i++) {
        Case *c = &run.cases[i];
        free(c->name); free(c->model); free(c->dir); free(c->light_out);
        free_list(c->ops, c->n_ops);
    }
    free(run.cases);
    free_list(exp, n_exp);
    return rc;
}
