/* tools/dlcc.c — the dlcc command: subcommand dispatch, option scanning and
 * the compile command's option checking (DESIGN.md §4). */
#include "tools/tools.h"
#include "passes/passes.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char usage[] =
    "usage: dlcc MODEL [-t cpu|gpu|fpga] [-o OUTDIR] [--name NAME] [-O0|-O1|-O2|-O3] [--emit KINDS]\n"
    "                  [--triple T] [--mcpu CPU] [--mattr FEATURES] [--threads N] [--gpu-arch sm_XX]\n"
    "                  [--gpu-emulate] [--precision float32|fixed<W,I>|int8] [--fpga-part PART]\n"
    "                  [--fpga-clock MHZ] [--print-after PASS|--print-after-all] [--time-passes] [-v]\n"
    "       dlcc run MODEL -i NAME=FILE.npy ... [-o OUTDIR] [--backend interp|cpu]\n"
    "       dlcc info MODEL [-O0|-O1|-O2|-O3] [--json]\n"
    "       dlcc convert MODEL -o OUT.json\n"
    "Common options: --input-shape NAME=D0,D1,... binds unknown input dims (default 1).\n";

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

IrGraph *dlcc_load_model(const char *path, const FeOptions *opt, UtilDiag *d)
{
    IrGraph *g = fe_load(path, opt, d);
    if (!g)
        return NULL;
    if (pass_infer(g, d) || fe_check_declared_outputs(g, d)) {
        ir_graph_free(g);
        return NULL;
    }
    return g;
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

int dlcc_args_load(DlccArgs *a, IrGraph **g)
{
    *g = NULL;
    if (dlcc_args_finish(a))
        return a->status;
    UtilDiag d;
    util_diag_init(&d);
    FeOptions opt = { a->shapes.n, a->shapes.s };
    *g = dlcc_load_model(a->model, &opt, &d);
    return *g ? 0 : dlcc_report(&d);
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

/* -------------------------------------------------------------- compile */

static int in_list(const char *s, const char *const *list)
{
    for (; *list; list++)
        if (strcmp(s, *list) == 0)
            return 1;
    return 0;
}

static int check_emit(const char *kinds)
{
    static const char *const known[] = { "obj", "asm", "llvm", "ptx", "hls", "c", "header", "graph",
                                         "report", NULL };
    char buf[256];
    if (!kinds[0] || strlen(kinds) >= sizeof buf)
        return dlcc_usage_error("--emit wants a comma-separated list of obj,asm,llvm,ptx,hls,c,header,graph,"
                                "report");
    strcpy(buf, kinds);
    for (char *tok = buf; tok;) {
        char *comma = strchr(tok, ',');
        if (comma)
            *comma = 0;
        if (!in_list(tok, known))
            return dlcc_usage_error("unknown --emit kind '%s' (obj, asm, llvm, ptx, hls, c, header, graph, "
                                    "report)", tok);
        tok = comma ? comma + 1 : NULL;
    }
    return 0;
}

static int parse_long(const char *s, long lo, long hi, long *v)
{
    char *end;
    errno = 0;
    long x = strtol(s, &end, 10);
    if (end == s || *end || errno || x < lo || x > hi)
        return -1;
    *v = x;
    return 0;
}

static int check_precision(const char *p)
{
    if (strcmp(p, "float32") == 0 || strcmp(p, "int8") == 0)
        return 0;
    int w, i, n = 0;
    if (sscanf(p, "fixed<%d,%d>%n", &w, &i, &n) == 2 && p[n] == 0 && w >= 2 && w <= 64 && i >= 1 && i <= w)
        return 0;
    return dlcc_usage_error("--precision wants float32, int8 or fixed<W,I> with 1 <= I <= W <= 64, not '%s'", p);
}

static int is_c_identifier(const char *s)
{
    if (!((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z') || s[0] == '_'))
        return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_'))
            return 0;
    return 1;
}

int dlcc_cmd_compile(int argc, char **argv)
{
    static const char *const value_opts[] = { "-o", "--triple", "--mcpu", "--mattr", "--fpga-part",
                                              "--print-after", NULL };
    static const char *const flags[] = { "--gpu-emulate", "--print-after-all", "--time-passes", "-v", NULL };
    const char *target = "cpu", *v;
    DlccArgs a;
    dlcc_args_init(&a, argc, argv, NULL);
    for (; a.i < argc && !a.status; a.i++) {
        const char *arg = argv[a.i];
        long n;
        if (dlcc_arg_common(&a)) {
            continue;
        } else if ((v = dlcc_arg_value(&a, "-t"))) {
            target = v;
            if (strcmp(v, "cpu") && strcmp(v, "gpu") && strcmp(v, "fpga"))
                a.status = dlcc_usage_error("unknown target '%s' (cpu, gpu or fpga)", v);
        } else if ((v = dlcc_arg_value(&a, "--name"))) {
            if (!is_c_identifier(v))
                a.status = dlcc_usage_error("--name wants a C identifier, not '%s'", v);
        } else if ((v = dlcc_arg_value(&a, "--emit"))) {
            a.status = check_emit(v);
        } else if ((v = dlcc_arg_value(&a, "--threads"))) {
            if (parse_long(v, 1, 1024, &n))
                a.status = dlcc_usage_error("--threads wants a number from 1 to 1024, not '%s'", v);
        } else if ((v = dlcc_arg_value(&a, "--gpu-arch"))) {
            if (strncmp(v, "sm_", 3) || parse_long(v + 3, 10, 999, &n))
                a.status = dlcc_usage_error("--gpu-arch wants sm_XX (e.g. sm_75), not '%s'", v);
        } else if ((v = dlcc_arg_value(&a, "--precision"))) {
            a.status = check_precision(v);
        } else if ((v = dlcc_arg_value(&a, "--fpga-clock"))) {
            char *end;
            double mhz = strtod(v, &end);
            if (end == v || *end || !(mhz > 0 && mhz <= 10000))
                a.status = dlcc_usage_error("--fpga-clock wants a frequency in MHz, not '%s'", v);
        } else if (dlcc_arg_opt_level(arg) >= 0 || in_list(arg, flags)) {
            ;
        } else if (!a.status) {
            int matched = 0;
            for (int k = 0; value_opts[k] && !matched && !a.status; k++)
                matched = dlcc_arg_value(&a, value_opts[k]) != NULL;
            if (!matched)
                dlcc_arg_unknown(&a);
        }
    }
    IrGraph *g;
    int status = dlcc_args_load(&a, &g);
    if (status)
        return status;
    ir_graph_free(g);
    UtilDiag d;
    util_diag_init(&d);
    util_error(&d, util_loc_file(a.model), "code generation for target '%s' is not available in this build "
               "yet; use 'dlcc run' (reference interpreter) or 'dlcc info'", target);
    return dlcc_report(&d);
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
    return dlcc_cmd_compile(argc, argv);
}
