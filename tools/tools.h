/* tools/tools.h — private to the dlcc command: one function per subcommand.
 * Each returns the process exit status: 0 success, 1 error (diagnostic
 * printed), 2 usage error.  The work behind each subcommand is a function on
 * a loaded graph (dlcc_run_graph, dlcc_info_render, dlcc_convert_graph,
 * dlcc_partition_render) so
 * that unit tests can drive it without a model file. */
#ifndef DLCC_TOOLS_H
#define DLCC_TOOLS_H

#include "frontend/frontend.h"

int dlcc_cmd_run(int argc, char **argv);
int dlcc_cmd_info(int argc, char **argv);
int dlcc_cmd_convert(int argc, char **argv);
int dlcc_cmd_compile(int argc, char **argv);
int dlcc_cmd_partition(int argc, char **argv);
int dlcc_cmd_calibrate(int argc, char **argv);
int dlcc_cmd_quantize(int argc, char **argv);
int dlcc_main(int argc, char **argv);

/* Writes buf to standard output; a failed write (a full disk, a closed pipe)
 * is an error. */
int dlcc_write_stdout(const UtilBuf *buf, UtilDiag *d);
/* Prints the diagnostic as "dlcc: FILE[:LINE:COL]: error: MSG" and returns 1. */
int dlcc_report(const UtilDiag *d);
/* Prints "dlcc: error: MSG" plus a hint to --help, returns 2. */
int dlcc_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Parses NAME=d0,d1,... for --input-shape into o (the name points into arg). */
int dlcc_parse_shape_override(char *arg, FeShapeOverride *o);

/* ---- command-line scanning shared by the subcommands ---- */

/* --input-shape options of one command. */
#define DLCC_MAX_SHAPES 64
typedef struct DlccShapes {
    int n;
    FeShapeOverride s[DLCC_MAX_SHAPES];
} DlccShapes;

/* --bind NAME=FILE.npy options of one command: runtime inputs frozen to a
 * value before inference (docs/cli.md). */
typedef struct DlccBind {
    const char *name, *file;    /* point into the argument */
} DlccBind;
typedef struct DlccBinds {
    int n;
    DlccBind b[DLCC_MAX_SHAPES];
} DlccBinds;

typedef struct DlccArgs {
    int argc;
    char **argv;
    int i;              /* index of the argument being looked at */
    int status;         /* 2 once a usage error has been printed */
    int only_operands;  /* after "--" */
    const char *cmd;    /* "run", "info", "convert"; NULL for compiling */
    const char *model;  /* the MODEL operand */
    DlccShapes shapes;
    DlccBinds binds;
} DlccArgs;

void dlcc_args_init(DlccArgs *a, int argc, char **argv, const char *cmd);
/* Consumes what every command accepts: the MODEL operand, "--",
 * --input-shape NAME=D0,D1,... and --bind NAME=FILE.npy; returns 1 if argv[i]
 * was one of them (status is 2 if it was malformed), 0 otherwise. */
int dlcc_arg_common(DlccArgs *a);
/* If argv[i] is option `name` taking a value, returns the value and advances
 * past it; NULL otherwise.  Accepted spellings: "-o X" and "-oX" for short
 * options, "--name X" and "--name=X" for long ones.  A missing value prints a
 * usage error and sets status to 2. */
const char *dlcc_arg_value(DlccArgs *a, const char *name);
/* 1 if argv[i] is exactly the flag `name`. */
int dlcc_arg_flag(const DlccArgs *a, const char *name);
/* Prints "unknown option" for argv[i] and sets status to 2 (unless a usage
 * error was already printed). */
void dlcc_arg_unknown(DlccArgs *a);
/* After the scan: the status, or 2 with a usage error if no model was given
 * (printed once; calling again returns the same status). */
int dlcc_args_finish(DlccArgs *a);
/* dlcc_args_finish, then loads the model with the --input-shape bindings,
 * binds the --bind inputs to their values and runs inference.  Returns 0 with
 * *g set, 2 after a usage error, or 1 after reporting why the model did not
 * load (when inference needed the value of a runtime input, the message says
 * to --bind it). */
int dlcc_args_load(DlccArgs *a, IrGraph **g);
/* The same without inference (`dlcc run` infers knowing its inputs' values). */
int dlcc_args_load_raw(DlccArgs *a, IrGraph **g);
/* Parses -O0..-O3; returns the level or -1. */
int dlcc_arg_opt_level(const char *arg);

/* Makes sure `dir` exists as a folder, creating the last component when it
 * does not exist (*created = 1 then, so that a failed command can remove it
 * again with rmdir). */
int dlcc_prepare_dir(const char *dir, int *created, UtilDiag *d);

/* ---- the work behind each subcommand ---- */

typedef struct DlccInputFile {
    const char *name;       /* graph input name */
    const char *file;       /* .npy path */
} DlccInputFile;

/* dlcc run: reads each graph input from its .npy file (every graph input
 * exactly once; dtype and shape must match), runs the reference interpreter
 * and writes OUTDIR/<sanitized output name>.npy for every graph output, all
 * or nothing.  Appends a one-line summary per output to `summary`. */
/* dlcc_run_graph with a backend: 0 = reference interpreter, 1 = the CPU
 * pipeline compiled into this process (LLVM JIT), 2 = the GPU kernels emulated
 * on the host (--backend gpu-emulate). */
int dlcc_run_graph_on(const IrGraph *g, int cpu, int n_files, const DlccInputFile *files, const char *outdir,
                      UtilBuf *summary, UtilDiag *d);
int dlcc_run_graph(const IrGraph *g, int n_files, const DlccInputFile *files, const char *outdir,
                   UtilBuf *summary, UtilDiag *d);

/* dlcc info: runs the -O`opt_level` pipeline on g (g is the optimized graph
 * afterwards) and renders the statistics before and after it, as text or as
 * one JSON object (sorted keys, 2-space indent, trailing newline). */
int dlcc_info_render(IrGraph *g, int opt_level, int json, UtilBuf *out, UtilDiag *d);

/* dlcc partition: runs the -O`o->opt_level` pipeline on g, partitions it
 * (tgt_hetero_partition) and renders the plan as text or JSON. */
struct TgtHeteroOptions;
int dlcc_partition_render(IrGraph *g, const struct TgtHeteroOptions *o, int json, UtilBuf *out, UtilDiag *d);

/* dlcc convert: writes g as out_path (JSON v1) plus a .safetensors file
 * beside it (out_path with ".json" replaced), atomically. */
int dlcc_convert_graph(const IrGraph *g, const char *out_path, UtilDiag *d);

/* --calibrate DIR: every .npy file of DIR (name order) is one sample of g's
 * one input, of its dtype and shape (tools/samples.c).  0, or -1 with a
 * diagnostic; free with dlcc_free_samples. */
int dlcc_read_samples(const IrGraph *g, const char *dir, IrArray **samples, int *n, UtilDiag *d);
void dlcc_free_samples(IrArray *s, int n);
/* --calibrate DIR: g quantized (pass_quantize) with DIR's samples; rep
 * (may be NULL) receives the accuracy report.  0, or -1 with a diagnostic. */
struct PassQuantReport;
int dlcc_quantize_with(IrGraph *g, const char *dir, double percentile, struct PassQuantReport *rep, UtilDiag *d);
/* --calibration minmax|percentile|percentile:P: the percentile (0 for
 * min-max); 0, or a usage error's status. */
int dlcc_parse_calibration(const char *v, double *percentile);

#endif
