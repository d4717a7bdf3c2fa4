/* tools/cmd_partition.c — dlcc partition: a model's kernels assigned to
 * CPU, GPU and FPGA devices for the least latency or the most throughput,
 * as text or JSON; dlcc calibrate: this machine's CPU as a device file
 * (docs/cli.md, docs/targets/hetero.md). */
#include "tools/tools.h"
#include "passes/passes.h"
#include "targets/targets.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int dlcc_partition_render(IrGraph *g, const TgtHeteroOptions *o, int json, UtilBuf *out, UtilDiag *d)
{
    PassOptions po = pass_options(o->opt_level);
    if (pass_run_pipeline(g, &po, d))
        return -1;
    TgtHeteroPlan *plan;
    if (tgt_hetero_partition(g, o, &plan, d))
        return -1;
    int rc = tgt_hetero_render(g, plan, json, out, d);
    tgt_hetero_plan_free(plan);
    return rc;
}

int dlcc_cmd_partition(int argc, char **argv)
{
    TgtHeteroOptions o = { .opt_level = 2, .time_limit_s = 10 };
    int json = 0;
    const char *v;
    DlccArgs a;
    dlcc_args_init(&a, argc, argv, "partition");
    for (; a.i < argc && !a.status; a.i++) {
        if (dlcc_arg_common(&a))
            continue;
        else if (dlcc_arg_flag(&a, "--json"))
            json = 1;
        else if (dlcc_arg_opt_level(argv[a.i]) >= 0)
            o.opt_level = dlcc_arg_opt_level(argv[a.i]);
        else if ((v = dlcc_arg_value(&a, "--devices")))
            o.devices = v;
        else if ((v = dlcc_arg_value(&a, "--device-file")))
            o.device_file = v;
        else if ((v = dlcc_arg_value(&a, "--objective"))) {
            if (!strcmp(v, "latency") || !strcmp(v, "throughput"))
                o.objective = !strcmp(v, "latency") ? TGT_HETERO_LATENCY : TGT_HETERO_THROUGHPUT;
            else
                a.status = dlcc_usage_error("unknown objective '%s' (latency or throughput)", v);
        } else if ((v = dlcc_arg_value(&a, "--time-limit"))) {
            char *end;
            o.time_limit_s = strtod(v, &end);
            if (end == v || *end || !(o.time_limit_s > 0 && o.time_limit_s <= 86400))
                a.status = dlcc_usage_error("--time-limit wants seconds in (0, 86400], not '%s'", v);
        } else
            dlcc_arg_unknown(&a);
    }
    if (!dlcc_args_finish(&a) && (!o.devices || !o.devices[0]))
        a.status = dlcc_usage_error("'dlcc partition' needs --devices, e.g. --devices cpu,gpu,fpga");
    IrGraph *g;
    int status = dlcc_args_load(&a, &g);
    if (status)
        return status;
    UtilDiag d;
    util_diag_init(&d);
    UtilBuf out;
    util_buf_init(&out);
    int rc = dlcc_partition_render(g, &o, json, &out, &d);
    if (!rc)
        rc = dlcc_write_stdout(&out, &d);
    util_buf_free(&out);
    ir_graph_free(g);
    return rc ? dlcc_report(&d) : 0;
}

/* Writes buf as `path` atomically (a temporary beside it, renamed). */
static int write_file(const char *path, const UtilBuf *buf, UtilDiag *d)
{
    const char *slash = strrchr(path, '/');
    char *dir = slash ? (slash == path ? strdup("/") : strndup(path, (size_t)(slash - path))) : strdup(".");
    if (!dir)
        return util_error(d, util_loc_file(path), "out of memory");
    UtilOutSet outs;
    util_outset_init(&outs);
    int rc = util_outset_write(&outs, dir, slash ? slash + 1 : path, buf->data, buf->len, d);
    if (!rc)
        rc = util_outset_commit(&outs, d);
    else
        util_outset_abort(&outs);
    free(dir);
    return rc;
}

int dlcc_cmd_calibrate(int argc, char **argv)
{
    const char *out_path = NULL, *name = "host-cpu", *v;
    int threads = 0;
    DlccArgs a;
    dlcc_args_init(&a, argc, argv, "calibrate");
    for (; a.i < argc && !a.status; a.i++) {
        if ((v = dlcc_arg_value(&a, "-o")))
            out_path = v;
        else if ((v = dlcc_arg_value(&a, "--name")))
            name = v;
        else if ((v = dlcc_arg_value(&a, "--threads"))) {
            char *end;
            long n = strtol(v, &end, 10);
            if (end == v || *end || n < 1 || n > 256)
                a.status = dlcc_usage_error("--threads wants a count in [1, 256], not '%s'", v);
            threads = (int)n;
        } else if (argv[a.i][0] != '-')
            a.status = dlcc_usage_error("'dlcc calibrate' takes no model ('%s')", argv[a.i]);
        else
            dlcc_arg_unknown(&a);
    }
    if (!a.status && (!out_path || !out_path[0]) && out_path)
        a.status = dlcc_usage_error("-o wants a file name");
    if (a.status)
        return a.status;
    size_t n = strlen(name);
    for (size_t i = 0; i < n; i++)
        if (!((name[i] >= 'a' && name[i] <= 'z') || (name[i] >= 'A' && name[i] <= 'Z') ||
              (name[i] >= '0' && name[i] <= '9') || strchr("._-", name[i])))
            n = 0;
    if (n == 0 || n > 63)
        return dlcc_usage_error("--name wants 1 to 63 letters, digits, '.', '-' or '_'");
    UtilDiag d;
    util_diag_init(&d);
    UtilBuf out;
    util_buf_init(&out);
    int rc = tgt_hetero_calibrate(threads, name, &out, &d);
    if (!rc)
        rc = out_path ? write_file(out_path, &out, &d) : dlcc_write_stdout(&out, &d);
    util_buf_free(&out);
    return rc ? dlcc_report(&d) : 0;
}
