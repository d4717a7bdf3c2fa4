/* tools/dlcc.c — the dlcc command: subcommand dispatch and shared helpers. */
#include "tools/tools.h"
#include "passes/passes.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: dlcc MODEL [-t cpu|gpu|fpga] [-o OUTDIR] [--name NAME] [-O0|-O1|-O2|-O3] [--emit KINDS]\n"
    "       dlcc run MODEL -i NAME=FILE.npy ... [-o OUTDIR] [--backend interp|cpu]\n"
    "       dlcc info MODEL [-O2] [--json]\n"
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
    if (pass_infer(g, d)) {
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

int dlcc_cmd_compile(int argc, char **argv)
{
    const char *model = NULL, *target = "cpu";
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-t") == 0 && i + 1 < argc)
            target = argv[++i];
        else if (argv[i][0] == '-' && argv[i][1])
            ;               /* compile options are parsed by the code generators (not yet built) */
        else if (!model)
            model = argv[i];
    }
    if (!model)
        return dlcc_usage_error("no model given");
    if (strcmp(target, "cpu") && strcmp(target, "gpu") && strcmp(target, "fpga"))
        return dlcc_usage_error("unknown target '%s' (cpu, gpu or fpga)", target);
    UtilDiag d;
    util_diag_init(&d);
    IrGraph *g = dlcc_load_model(model, NULL, &d);
    if (!g)
        return dlcc_report(&d);
    ir_graph_free(g);
    util_error(&d, util_loc_file(model), "code generation for target '%s' is not available in this build "
               "yet; use 'dlcc run' (reference interpreter) or 'dlcc info'", target);
    return dlcc_report(&d);
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return dlcc_usage_error("no command or model given");
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
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
