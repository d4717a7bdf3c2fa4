/* tools/dlcc.c — the dlcc command: subcommand dispatch, option scanning and
 * the compile command's option checking (docs/cli.md). */
#include "tools/tools.h"
#include "passes/passes.h"
#include "interp/interp.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char usage[] =
    "usage: dlcc MODEL [-t cpu|gpu|fpga|hetero] [-o OUTDIR] [--name NAME] [-O0|-O1|-O2|-O3] [--emit KINDS]\n"
    "                  [--triple T] [--mcpu CPU] [--mattr FEATURES] [--threads N] [--gpu-arch sm_XX]\n"
    "                  [--gpu-emulate] [--precision float32|fixed<W,I>|int8|bf16] [--calibrate DIR] [--calibration M]\n"
    "                  [--fpga-part PART] [--fpga-clock MHZ] [--fpga-multipliers N] [--fpga-onchip-kb N]\n"
    "                  [--fpga-io stream|parallel]\n"
    "                  [--print-after PASS|--print-after-all] [--time-passes]\n"
    "                  [-v] [--weights-section SECTION] [--static-workspace] [--workspace-section SECTION]\n"
    "                  [--no-libm] [--depfile FILE] [--kernel-symbols]\n"
    "       dlcc MODEL -t hetero --devices cpu,gpu,fpga [--device-file F] [--objective latency|throughput]\n"
    "                  [--time-limit SECONDS] [--emulate] [--nodes N] [--in-flight N] [-o OUTDIR] [--name NAME]\n"
    "       dlcc run MODEL -i NAME=FILE.npy ... [-o OUTDIR] [--backend interp|cpu|gpu-emulate] [-O|-O0..-O3]\n"
    "                [--precision float32|int8|bf16] [--calibrate DIR [--calibration M]]\n"
    "       dlcc info MODEL [-O0|-O1|-O2|-O3] [--json]\n"
    "       dlcc convert MODEL -o OUT.json|OUT.onnx\n"
    "       dlcc quantize MODEL --calibrate DIR [--calibration minmax|percentile[:P]] -o OUT.onnx\n"
    "       dlcc partition MODEL --devices cpu,gpu,fpga [--device-file F] [--objective latency|throughput]\n"
    "                      [--time-limit SECONDS] [-O0|-O1|-O2|-O3] [--json]\n"
    "       dlcc calibrate [-o FILE] [--name NAME] [--threads N]\n"
    "Common options: --input-shape NAME=D0,D1,... binds unknown input dims (default 1);\n"
    "                --bind NAME=FILE.npy freezes an input to the file's value (a shape, axes, scales ...).\n";

int dlcc_write_stdout(const UtilBuf *buf, UtilDiag *d)
{
    if (buf->oom)
        return util_error(d, util_loc_file(NULL), "out of memory");
    if ((buf->len && fwrite(buf->data, 1, buf->len, stdout) != buf->len) || fflush(stdout) != 0 || ferror(stdout))
        return util_error(d, util_loc_file(NULL), "cannot write to standard output: %s", strerror(errno));
    return 0;
}

int dlcc_report(const UtilDiag *d)
{
    char buf[UTIL_DIAG_MSG + 1024];
    util_diag_format(d, buf, sizeof buf);
    fprintf(stderr, "%s\n", buf);
    return 1;
}

int dlcc_usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "dlcc: error: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n%s", usage);
    va_end(ap);
    return 2;
}

int dlcc_parse_shape_override(char *arg, FeShapeOverride *o)
{
    char *eq = strrchr(arg, '=');
    if (!eq || eq == arg)
        return -1;
    *eq = 0;
    o->name = arg;
    o->shape.rank = 0;
    char *p = eq + 1;
    while (*p) {
        char *end;
        long long v = strtoll(p, &end, 10);
        if (end == p || v < 0 || o->shape.rank >= IR_MAX_RANK)
            return -1;
        o->shape.dims[o->shape.rank++] = v;
        if (*end == ',')
            end++;
        else if (*end)
            return -1;
        p = end;
    }
    return 0;
}

/* ------------------------------------------------------------ arguments */

void dlcc_args_init(DlccArgs *a, int argc, char **argv, const char *cmd)
{
    memset(a, 0, sizeof *a);
    a->argc = argc;
    a->argv = argv;
    a->i = 1;
    a->cmd = cmd;
}

const char *dlcc_arg_value(DlccArgs *a, const char *name)
{
    if (a->only_operands || a->status)
        return NULL;
    const char *arg = a->argv[a->i];
    size_t n = strlen(name);
    if (strncmp(arg, name, n) != 0)
        return NULL;
    if (arg[n] == 0) {
        if (a->i + 1 >= a->argc) {
            a->status = dlcc_usage_error("option '%s' needs a value", name);
            return NULL;
        }
        return a->argv[++a->i];
    }
    int is_short = name[1] != '-';
    if (is_short)
        return arg + n;                     /* -oDIR */
    if (arg[n] == '=')
        return arg + n + 1;                 /* --name=VALUE */
    return NULL;
}

int dlcc_arg_flag(const DlccArgs *a, const char *name)
{
    return !a->only_operands && !a->status && strcmp(a->argv[a->i], name) == 0;
}

static int add_shape(DlccShapes *sh, char *value)
{
    if (sh->n >= DLCC_MAX_SHAPES)
        return dlcc_usage_error("too many --input-shape options (at most %d)", DLCC_MAX_SHAPES);
    FeShapeOverride *o = &sh->s[sh->n];
    if (dlcc_parse_shape_override(value, o))
        return dlcc_usage_error("--input-shape wants NAME=D0,D1,... with non-negative dims (at most %d)",
                                IR_MAX_RANK);
    for (int i = 0; i < sh->n; i++)
        if (strcmp(sh->s[i].name, o->name) == 0)
            return dlcc_usage_error("--input-shape given twice for '%s'", o->name);
    sh->n++;
    return 0;
}

static int add_bind(DlccBinds *bs, char *value)
{
    char *eq = strchr(value, '=');
    if (!eq || eq == value || !eq[1])
        return dlcc_usage_error("--bind wants NAME=FILE.npy, not '%s'", value);
    if (bs->n >= DLCC_MAX_SHAPES)
        return dlcc_usage_error("too many --bind options (at most %d)", DLCC_MAX_SHAPES);
    *eq = 0;                                    /* split in place: NAME\0FILE */
    for (int i = 0; i < bs->n; i++)
        if (strcmp(bs->b[i].name, value) == 0)
            return dlcc_usage_error("--bind given twice for '%s'", value);
    bs->b[bs->n].name = value;
    bs->b[bs->n].file = eq + 1;
    bs->n++;
    return 0;
}

int dlcc_arg_common(DlccArgs *a)
{
    char *arg = a->argv[a->i];
    const char *v;
    if (!a->only_operands && strcmp(arg, "--") == 0) {
        a->only_operands = 1;
        return 1;
    }
    if (a->only_operands || arg[0] != '-' || arg[1] == 0) {
        if (a->model)
            a->status = dlcc_usage_error("more than one model given ('%s' and '%s')", a->model, arg);
        a->model = arg;
        return 1;
    }
    if ((v = dlcc_arg_value(a, "--input-shape"))) {
        a->status = add_shape(&a->shapes, (char *)v);
        return 1;
    }
    if ((v = dlcc_arg_value(a, "--bind"))) {
        a->status = add_bind(&a->binds, (char *)v);
        return 1;
    }
    return a->status != 0;
}

void dlcc_arg_unknown(DlccArgs *a)
{
    if (a->status)
        return;
    if (a->cmd)
        a->status = dlcc_usage_error("unknown option '%s' for 'dlcc %s'", a->argv[a->i], a->cmd);
    else
        a->status = dlcc_usage_error("unknown option '%s'", a->argv[a->i]);
}

int dlcc_args_finish(DlccArgs *a)
{
    if (!a->status && !a->model)
        a->status = a->cmd ? dlcc_usage_error("no model given to 'dlcc %s'", a->cmd)
                           : dlcc_usage_error("no model given");
    return a->status;
}

/* Binds each --bind input to its file's value. */
static int apply_binds(IrGraph *g, const DlccBinds *bs, UtilDiag *d)
{
    for (int i = 0; i < bs->n; i++) {
        int t = ir_find_tensor(g, bs->b[i].name);
        int k = 0;
        while (t >= 0 && k < g->n_inputs && g->inputs[k] != t)
            k++;
        if (t < 0 || k == g->n_inputs)
            return util_error(d, util_loc_file(g->file), "--bind %s: the model has no runtime input named '%s'",
                              bs->b[i].name, bs->b[i].name);
        IrArray v;
        if (fe_npy_read(bs->b[i].file, &v, d))
            return -1;
        int rc = ir_bind_input(g, t, &v, d);
        interp_array_free(&v);
        if (rc)
            return -1;
    }
    return 0;
}

/* After inference failed for want of a value (IrGraph.need_value): names the
 * runtime inputs that value is computed from, which --bind can freeze. */
static void hint_bind(const IrGraph *g, UtilDiag *d)
{
    if (g->need_value < 0)
        return;
    char *mark = calloc((size_t)g->n_tensors + 1, 1);
    if (!mark)
        return;
    ir_mark_ancestors(g, g->need_value, mark);
    size_t len = strlen(d->msg);
    int named = 0;
    for (int i = 0; i < g->n_inputs && len + 1 < sizeof d->msg; i++) {
        const char *nm = g->tensors[g->inputs[i]].name;
        if (!mark[g->inputs[i]])
            continue;
        int w = snprintf(d->msg + len, sizeof d->msg - len, "%s--bind %s=FILE.npy", named++ ? ", " : "; it is "
                         "computed from a runtime input: freeze it with ", nm);
        if (w < 0)
            break;
        len += (size_t)w < sizeof d->msg - len ? (size_t)w : sizeof d->msg - len - 1;
    }
    free(mark);
}

int dlcc_args_load_raw(DlccArgs *a, IrGraph **g)
{
    *g = NULL;
    if (dlcc_args_finish(a))
        return a->status;
    UtilDiag d;
    util_diag_init(&d);
    FeOptions opt = { a->shapes.n, a->shapes.s };
    *g = fe_load(a->model, &opt, &d);
    if (*g && apply_binds(*g, &a->binds, &d)) {
        ir_graph_free(*g);
        *g = NULL;
    }
    return *g ? 0 : dlcc_report(&d);
}

int dlcc_args_load(DlccArgs *a, IrGraph **g)
{
    int status = dlcc_args_load_raw(a, g);
    if (status)
        return status;
    UtilDiag d;
    util_diag_init(&d);
    if (pass_infer(*g, &d) || fe_check_declared_outputs(*g, &d)) {
        hint_bind(*g, &d);
        ir_graph_free(*g);
        *g = NULL;
        return dlcc_report(&d);
    }
    return 0;
}

int dlcc_arg_opt_level(const char *arg)
{
    if (arg[0] == '-' && arg[1] == 'O' && arg[2] >= '0' && arg[2] <= '3' && !arg[3])
        return arg[2] - '0';
    return -1;
}

int dlcc_prepare_dir(const char *dir, int *created, UtilDiag *d)
{
    struct stat st;
    *created = 0;
    if (stat(dir, &st) == 0) {
        if (!S_ISDIR(st.st_mode))
            return util_error(d, util_loc_file(dir), "the output location exists and is not a folder");
        return 0;
    }
    if (errno != ENOENT || mkdir(dir, 0777) != 0)
        return util_error(d, util_loc_file(dir), "cannot create the output folder: %s", strerror(errno));
    *created = 1;
    return 0;
}

int dlcc_main(int argc, char **argv)
{
    if (argc < 2)
        return dlcc_usage_error("no command or model given");
    for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(usage, stdout);
            return 0;
        }
    if (strcmp(argv[1], "--version") == 0) {
        puts("dlcc 0.1.0");
        return 0;
    }
    if (strcmp(argv[1], "run") == 0)
        return dlcc_cmd_run(argc - 1, argv + 1);
    if (strcmp(argv[1], "info") == 0)
        return dlcc_cmd_info(argc - 1, argv + 1);
    if (strcmp(argv[1], "convert") == 0)
        return dlcc_cmd_convert(argc - 1, argv + 1);
    if (strcmp(argv[1], "partition") == 0)
        return dlcc_cmd_partition(argc - 1, argv + 1);
    if (strcmp(argv[1], "calibrate") == 0)
        return dlcc_cmd_calibrate(argc - 1, argv + 1);
    if (strcmp(argv[1], "quantize") == 0)
        return dlcc_cmd_quantize(argc - 1, argv + 1);
    return dlcc_cmd_compile(argc, argv);
}
