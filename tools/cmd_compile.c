/* tools/cmd_compile.c — `dlcc MODEL [-t cpu|gpu|fpga|hetero] [-o OUTDIR] ...`:
 * compiles a model into the files of one target, or of several devices at
 * once with -t hetero (docs/cli.md). */
#include "tools/tools.h"
#include "passes/passes.h"
#include "targets/targets.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Parses --emit KINDS into TGT_EMIT_* bits; kinds of other targets are
 * accepted here and refused by the target that cannot make them. */
static int parse_emit(const char *kinds, unsigned *bits, unsigned *foreign)
{
    static const struct { const char *name; unsigned bit; } known[] = {
        { "obj", TGT_EMIT_OBJ }, { "asm", TGT_EMIT_ASM }, { "llvm", TGT_EMIT_LLVM }, { "header", TGT_EMIT_HEADER },
        { "graph", TGT_EMIT_GRAPH }, { "report", TGT_EMIT_REPORT }, { "ptx", TGT_EMIT_PTX }, { "hls", TGT_EMIT_HLS },
        { "c", TGT_EMIT_C },
    };
    char buf[256];
    if (!kinds[0] || strlen(kinds) >= sizeof buf)
        return dlcc_usage_error("--emit wants a comma-separated list of obj,asm,llvm,ptx,hls,c,header,graph,"
                                "report");
    strcpy(buf, kinds);
    *bits = 0;
    for (char *tok = buf; tok;) {
        char *comma = strchr(tok, ',');
        if (comma)
            *comma = 0;
        size_t k = 0;
        while (k < sizeof known / sizeof *known && strcmp(known[k].name, tok))
            k++;
        if (k == sizeof known / sizeof *known)
            return dlcc_usage_error("unknown --emit kind '%s' (obj, asm, llvm, ptx, hls, c, header, graph, "
                                    "report)", tok);
        *bits |= known[k].bit;
        if (!known[k].bit)
            *foreign = 1;
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
    if (strcmp(p, "float32") == 0 || strcmp(p, "int8") == 0 || strcmp(p, "bf16") == 0)
        return 0;
    int w, i, n = 0;
    if (sscanf(p, "fixed<%d,%d>%n", &w, &i, &n) == 2 && p[n] == 0 && w >= 2 && w <= 64 && i >= 1 && i <= w)
        return 0;
    return dlcc_usage_error("--precision wants float32, int8, bf16 or fixed<W,I> with 1 <= I <= W <= 64, not '%s'", p);
}

/* Does g hold a QuantizeLinear or DequantizeLinear (a model --precision int8
 * can keep in 8 bits)? */
static int quantized(const IrGraph *g)
{
    for (int i = 0; i < g->n_nodes; i++)
        if (g->nodes[i].op == IR_OP_QuantizeLinear || g->nodes[i].op == IR_OP_DequantizeLinear ||
            g->nodes[i].op == IR_OP_QLinearConv || g->nodes[i].op == IR_OP_QLinearMatMul)
            return 1;
    return 0;
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

/* Writes every file atomically into outdir: all or nothing.  -v lists them. */
static int write_files(const TgtFiles *fs, const char *outdir, int verbose, UtilDiag *d)
{
    int created;
    if (dlcc_prepare_dir(outdir, &created, d))
        return -1;
    UtilOutSet outs;
    util_outset_init(&outs);
    int rc = 0;
    for (int i = 0; i < fs->n && !rc; i++)
        rc = util_outset_write(&outs, outdir, fs->f[i].name, fs->f[i].data.data ? fs->f[i].data.data : "",
                               fs->f[i].data.len, d);
    if (!rc)
        rc = util_outset_commit(&outs, d);
    else
        util_outset_abort(&outs);
    if (rc && created)
        rmdir(outdir);
    for (int i = 0; !rc && verbose && i < fs->n; i++)
        fprintf(stderr, "dlcc: wrote %s/%s (%zu bytes)\n", outdir, fs->f[i].name, fs->f[i].data.len);
    return rc;
}

/* Appends a path to a Make-style depfile, escaping what Make and Ninja read
 * specially (spaces, '#', '$'). */
static void dep_path(UtilBuf *b, const char *path)
{
    for (const char *s = path; *s; s++) {
        if (*s == ' ' || *s == '#' || *s == '\\')
            util_buf_put(b, "\\", 1);
        if (*s == '$')
            util_buf_put(b, "$", 1);
        util_buf_put(b, s, 1);
    }
}

/* The files a compilation read: the model and, for the JSON format, the
 * weights file its "weights" key names (resolved beside the model). */
static char *weights_of(const char *model, UtilDiag *d)
{
    json_t *root = json_load_file(model, JSON_DISABLE_EOF_CHECK, NULL);
    json_t *w = json_is_object(root) ? json_object_get(root, "weights") : NULL;
    char *full = json_is_string(w) ? util_resolve_beside(model, json_string_value(w), util_loc_file(model), d)
                                   : NULL;
    json_decref(root);
    return full;
}

/* --depfile FILE: "OUTDIR/NAME.o: MODEL [WEIGHTS]", for build systems
 * (CMake's add_custom_command(DEPFILE), Meson's custom_target(depfile)).
 * Only the first file written (the object for cpu) is named as the target:
 * Ninja refuses depfiles that name outputs its rule did not declare. */
static int write_depfile(const char *path, const char *outdir, const TgtFiles *fs, const char *model, UtilDiag *d)
{
    UtilBuf b;
    util_buf_init(&b);
    dep_path(&b, outdir);
    util_buf_put(&b, "/", 1);
    dep_path(&b, fs->n ? fs->f[0].name : "");
    util_buf_put(&b, ":", 1);
    UtilDiag quiet;
    util_diag_init(&quiet);
    char *weights = weights_of(model, &quiet);
    const char *deps[2] = { model, weights };
    for (int i = 0; i < 2; i++)
        if (deps[i]) {
            util_buf_put(&b, " ", 1);
            dep_path(&b, deps[i]);
        }
    util_buf_put(&b, "\n", 1);
    free(weights);
    FILE *f = fopen(path, "wb");
    int rc = !f || fwrite(b.data, 1, b.len, f) != b.len;
    if (f && fclose(f))
        rc = 1;
    util_buf_free(&b);
    return rc ? util_error(d, util_loc_file(path), "cannot write the depfile: %s", strerror(errno)) : 0;
}

/* What -t hetero refuses: options of the single-device targets (each
 * partition is compiled with its device's defaults, float32), and a missing
 * --devices. */
static int hetero_checks(const TgtOptions *o, const TgtHeteroCompile *hc, const char *fpga_only,
                         const char *precision, int emit_given, const char *model, UtilDiag *d)
{
    const char *bad = fpga_only                                   ? fpga_only
                      : precision && strcmp(precision, "float32") ? "--precision"
                      : emit_given                                ? "--emit"
                      : o->gpu_emulate                            ? "--gpu-emulate (use --emulate)"
                      : o->threads > 1                            ? "--threads"
                      : o->static_workspace                       ? "--static-workspace"
                      : o->weights_section                        ? "--weights-section"
                      : o->no_libm                                ? "--no-libm"
                      : o->triple                                 ? "--triple (the host's objects only)"
                                                                  : NULL;
    if (bad)
        return util_error(d, util_loc_file(model), "%s does not apply to -t hetero", bad);
    if (!hc->plan.devices || !hc->plan.devices[0])
        return util_error(d, util_loc_file(model), "-t hetero needs --devices, e.g. --devices cpu,gpu,fpga");
    return 0;
}

int dlcc_cmd_compile(int argc, char **argv)
{
    const char *target = "cpu", *outdir = ".", *name = NULL, *unavailable = NULL, *depfile = NULL, *v;
    const char *fpga_only = NULL, *precision = NULL, *hetero_only = NULL, *calibrate = NULL;
    double pct = 0;
    int emit_given = 0;
    TgtHeteroCompile hc = { .plan = { .time_limit_s = 10 } };
    TgtOptions o = { .opt_level = 2, .emit = TGT_EMIT_DEFAULT_CPU };
    unsigned foreign = 0;
    PassOptions po = pass_options(2);
    int verbose = 0;
    DlccArgs a;
    dlcc_args_init(&a, argc, argv, NULL);
    for (; a.i < argc && !a.status; a.i++) {
        const char *arg = argv[a.i];
        long n;
        if (dlcc_arg_common(&a)) {
            continue;
        } else if ((v = dlcc_arg_value(&a, "-t"))) {
            target = v;
            if (strcmp(v, "cpu") && strcmp(v, "gpu") && strcmp(v, "fpga") && strcmp(v, "hetero"))
                a.status = dlcc_usage_error("unknown target '%s' (cpu, gpu, fpga or hetero)", v);
        } else if ((v = dlcc_arg_value(&a, "--devices"))) {
            hc.plan.devices = v;
            hetero_only = "--devices";
        } else if ((v = dlcc_arg_value(&a, "--device-file"))) {
            hc.plan.device_file = v;
            hetero_only = "--device-file";
        } else if ((v = dlcc_arg_value(&a, "--objective"))) {
            hetero_only = "--objective";
            if (!strcmp(v, "latency") || !strcmp(v, "throughput"))
                hc.plan.objective = !strcmp(v, "latency") ? TGT_HETERO_LATENCY : TGT_HETERO_THROUGHPUT;
            else
                a.status = dlcc_usage_error("unknown objective '%s' (latency or throughput)", v);
        } else if ((v = dlcc_arg_value(&a, "--time-limit"))) {
            char *end;
            hetero_only = "--time-limit";
            hc.plan.time_limit_s = strtod(v, &end);
            if (end == v || *end || !(hc.plan.time_limit_s > 0 && hc.plan.time_limit_s <= 86400))
                a.status = dlcc_usage_error("--time-limit wants seconds in (0, 86400], not '%s'", v);
        } else if (strcmp(arg, "--emulate") == 0) {
            hc.emulate = 1;
            hetero_only = "--emulate";
        } else if ((v = dlcc_arg_value(&a, "--nodes"))) {
            hetero_only = "--nodes";
            if (parse_long(v, 1, 1024, &n))
                a.status = dlcc_usage_error("--nodes wants a number of MPI ranks from 1 to 1024, not '%s'", v);
            else
                hc.nodes = (int)n;
        } else if ((v = dlcc_arg_value(&a, "--in-flight"))) {
            hetero_only = "--in-flight";
            if (parse_long(v, 1, 1024, &n))
                a.status = dlcc_usage_error("--in-flight wants a number from 1 to 1024, not '%s'", v);
            else
                hc.in_flight = (int)n;
        } else if ((v = dlcc_arg_value(&a, "-o"))) {
            outdir = v;
        } else if ((v = dlcc_arg_value(&a, "--name"))) {
            name = v;
            if (!is_c_identifier(v))
                a.status = dlcc_usage_error("--name wants a C identifier, not '%s'", v);
        } else if ((v = dlcc_arg_value(&a, "--emit"))) {
            a.status = parse_emit(v, &o.emit, &foreign);
            emit_given = 1;
        } else if ((v = dlcc_arg_value(&a, "--triple"))) {
            o.triple = v;
        } else if ((v = dlcc_arg_value(&a, "--mcpu"))) {
            o.cpu = v;
        } else if ((v = dlcc_arg_value(&a, "--mattr"))) {
            o.features = v;
        } else if ((v = dlcc_arg_value(&a, "--weights-section"))) {
            o.weights_section = v;
            if (!*v)
                a.status = dlcc_usage_error("--weights-section wants a section name");
        } else if ((v = dlcc_arg_value(&a, "--workspace-section"))) {
            o.workspace_section = v;
            o.static_workspace = 1;
            if (!*v)
                a.status = dlcc_usage_error("--workspace-section wants a section name");
        } else if (strcmp(arg, "--static-workspace") == 0) {
            o.static_workspace = 1;
        } else if (strcmp(arg, "--no-libm") == 0) {
            o.no_libm = 1;
        } else if (strcmp(arg, "--kernel-symbols") == 0) {
            o.kernel_symbols = 1;
        } else if ((v = dlcc_arg_value(&a, "--depfile"))) {
            depfile = v;
        } else if ((v = dlcc_arg_value(&a, "--threads"))) {
            if (parse_long(v, 1, 1024, &n))
                a.status = dlcc_usage_error("--threads wants a number from 1 to 1024, not '%s'", v);
            else
                o.threads = (int)n;
        } else if ((v = dlcc_arg_value(&a, "--gpu-arch"))) {
            if (strncmp(v, "sm_", 3) || parse_long(v + 3, 10, 999, &n))
                a.status = dlcc_usage_error("--gpu-arch wants sm_XX (e.g. sm_75), not '%s'", v);
            o.gpu_arch = v;
        } else if (strcmp(arg, "--gpu-emulate") == 0) {
            o.gpu_emulate = 1;
        } else if ((v = dlcc_arg_value(&a, "--precision"))) {
            a.status = check_precision(v);
            precision = v;
            o.precision = v;
        } else if ((v = dlcc_arg_value(&a, "--calibrate"))) {
            calibrate = v;
        } else if ((v = dlcc_arg_value(&a, "--calibration"))) {
            a.status = dlcc_parse_calibration(v, &pct);
        } else if ((v = dlcc_arg_value(&a, "--precision-file"))) {
            o.precision_file = v;
            fpga_only = "--precision-file";
        } else if ((v = dlcc_arg_value(&a, "--fpga-part"))) {
            o.fpga_part = v;
            fpga_only = "--fpga-part";
            if (!v[0] || strspn(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_") != strlen(v))
                a.status = dlcc_usage_error("--fpga-part wants a part name like xcu50-fsvh2104-2-e, not '%s'", v);
        } else if ((v = dlcc_arg_value(&a, "--fpga-clock"))) {
            char *end;
            double mhz = strtod(v, &end);
            if (end == v || *end || !(mhz > 0 && mhz <= 10000))
                a.status = dlcc_usage_error("--fpga-clock wants a frequency in MHz, not '%s'", v);
            o.fpga_clock_mhz = mhz;
            fpga_only = "--fpga-clock";
        } else if ((v = dlcc_arg_value(&a, "--fpga-multipliers"))) {
            char *end;
            long m = strtol(v, &end, 10);
            if (end == v || *end || m < 1 || m > 4096)
                a.status = dlcc_usage_error("--fpga-multipliers wants a count from 1 to 4096, not '%s'", v);
            o.fpga_multipliers = (int)m;
            fpga_only = "--fpga-multipliers";
        } else if ((v = dlcc_arg_value(&a, "--fpga-io"))) {
            if (strcmp(v, "stream") && strcmp(v, "parallel"))
                a.status = dlcc_usage_error("--fpga-io wants stream or parallel, not '%s'", v);
            o.fpga_io_parallel = strcmp(v, "parallel") == 0;
            fpga_only = "--fpga-io";
        } else if ((v = dlcc_arg_value(&a, "--fpga-onchip-kb"))) {
            char *end;
            long long kb = strtoll(v, &end, 10);
            if (end == v || *end || kb < 1 || kb > ((long long)1 << 30))
                a.status = dlcc_usage_error("--fpga-onchip-kb wants a size in KiB (1 or more), not '%s'", v);
            o.fpga_onchip_bytes = (int64_t)kb * 1024;
            fpga_only = "--fpga-onchip-kb";
        } else if (dlcc_arg_opt_level(arg) >= 0) {
            o.opt_level = dlcc_arg_opt_level(arg);
        } else if ((v = dlcc_arg_value(&a, "--print-after"))) {
            po.print_after = v;               /* checked against the pass names once the model loads */
        } else if (strcmp(arg, "--print-after-all") == 0) {
            po.print_after_all = 1;
        } else if (strcmp(arg, "--time-passes") == 0) {
            po.time_passes = 1;
        } else if (strcmp(arg, "-v") == 0) {
            verbose = 1;
        } else {
            dlcc_arg_unknown(&a);
        }
    }
    IrGraph *g;
    int status = dlcc_args_load(&a, &g);
    if (status)
        return status;
    UtilDiag d;
    util_diag_init(&d);
    char *cname = name ? NULL : util_c_identifier(g->name);
    o.name = name ? name : cname;
    TgtFiles files = { 0 };
    int rc, fpga = strcmp(target, "fpga") == 0, gpu = strcmp(target, "gpu") == 0, hetero = !strcmp(target, "hetero");
    if (fpga && !emit_given)
        o.emit = TGT_EMIT_DEFAULT_FPGA;
    if (gpu && !o.gpu_emulate && !emit_given)
        o.emit = TGT_EMIT_DEFAULT_GPU;
    o.model_file = a.model;
    int int8 = precision && strcmp(precision, "int8") == 0, bf16 = precision && strcmp(precision, "bf16") == 0;
    if (!fpga && precision && strcmp(precision, "float32") && !((int8 || bf16) && !gpu && !hetero))
        unavailable = int8   ? "--precision int8 on -t gpu and -t hetero"
                      : bf16 ? "--precision bf16 on -t gpu and -t hetero"
                             : "--precision other than float32 (outside -t fpga)";
    if (fpga && precision && strcmp(precision, "int8") == 0)
        unavailable = "--precision int8 on -t fpga (use fixed<8,I>)";
    if (fpga && bf16)
        unavailable = "--precision bf16 on -t fpga (use fixed<W,I>)";
    o.bf16 = bf16 && !fpga && !gpu && !hetero;
    if (hetero && hetero_checks(&o, &hc, fpga_only, precision, emit_given, a.model, &d))
        rc = -1;
    else if (!hetero && hetero_only)
        rc = util_error(&d, util_loc_file(a.model), "%s belongs to -t hetero", hetero_only);
    else if (!fpga && fpga_only)
        rc = util_error(&d, util_loc_file(a.model), "%s belongs to -t fpga", fpga_only);
    else if (o.gpu_emulate && !gpu)
        rc = util_error(&d, util_loc_file(a.model), "--gpu-emulate belongs to the gpu target (-t gpu)");
    else if (gpu && (o.static_workspace || o.workspace_section || o.weights_section || o.no_libm))
        rc = util_error(&d, util_loc_file(a.model), "--static-workspace, --workspace-section, --weights-section and "
                        "--no-libm belong to the cpu target");
    else if (o.threads > 1 && (gpu || fpga))
        rc = util_error(&d, util_loc_file(a.model), "--threads N > 1 belongs to the cpu target (-t %s runs "
                        "its own parallelism)", target);
    else if (o.threads > 1 && (o.static_workspace || o.no_libm))
        rc = util_error(&d, util_loc_file(a.model), "--threads N > 1 needs the Halide runtime's thread pool, "
                        "which firmware builds (--static-workspace, --no-libm) do not link");
    else if (unavailable)
        rc = util_error(&d, util_loc_file(a.model), "%s is not available in this build yet", unavailable);
    else if (!fpga && (foreign || (o.emit & (TGT_EMIT_HLS | TGT_EMIT_C)) || (!gpu && (o.emit & TGT_EMIT_PTX))))
        rc = util_error(&d, util_loc_file(a.model), "--emit ptx, hls and c belong to the gpu and fpga targets");
    else if (fpga && (foreign || (o.emit & (TGT_EMIT_OBJ | TGT_EMIT_ASM | TGT_EMIT_LLVM | TGT_EMIT_PTX))))
        rc = util_error(&d, util_loc_file(a.model), "--emit obj, asm, llvm and ptx belong to the cpu and gpu "
                        "targets (-t fpga writes hls, c, header, graph, report)");
    else if (!o.name)
        rc = util_error(&d, util_loc_file(a.model), "out of memory");
    else if (calibrate && (!int8 || fpga))
        rc = util_error(&d, util_loc_file(a.model), "--calibrate belongs to --precision int8 (-t cpu)");
    else if (int8 && !fpga && !calibrate && !quantized(g))
        rc = util_error(&d, util_loc_file(a.model), "--precision int8 needs a quantized model (QuantizeLinear / "
                        "DequantizeLinear, as ONNX Runtime's quantize_static writes), or --calibrate DIR with "
                        "samples of its input to quantize a float model");
    else {
        po.opt_level = o.opt_level;           /* graph passes of the -O level, then the target */
        po.int8 = int8 && !fpga;
        po.dot_i8 = !fpga && !gpu && !hetero ? tgt_cpu_dot_i8(&o, 0) : 0;
        rc = calibrate ? dlcc_quantize_with(g, calibrate, pct, NULL, &d) : 0;
        if (!rc)
            rc = pass_run_pipeline(g, &po, &d);
        if (!rc)
            rc = hetero ? tgt_hetero_compile(g, &o, &hc, &files, &d)
                 : gpu    ? tgt_gpu_compile(g, &o, &files, &d)
                 : fpga   ? tgt_fpga_compile(g, &o, &files, &d)
                          : tgt_cpu_compile(g, &o, &files, &d);
    }
    if (!rc)
        rc = write_files(&files, outdir, verbose, &d);
    if (!rc && depfile)   /* after: the depfile usually lives in OUTDIR, which write_files creates */
        rc = write_depfile(depfile, outdir, &files, a.model, &d);
    tgt_files_free(&files);
    free(cname);
    ir_graph_free(g);
    return rc ? dlcc_report(&d) : 0;
}
