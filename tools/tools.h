/* tools/tools.h — private to the dlcc command: one function per subcommand.
 * Each returns the process exit status: 0 success, 1 error (diagnostic
 * printed), 2 usage error. */
#ifndef DLCC_TOOLS_H
#define DLCC_TOOLS_H

#include "frontend/frontend.h"

int dlcc_cmd_run(int argc, char **argv);
int dlcc_cmd_info(int argc, char **argv);
int dlcc_cmd_convert(int argc, char **argv);
int dlcc_cmd_compile(int argc, char **argv);

/* Prints the diagnostic as "dlcc: FILE[:LINE:COL]: error: MSG" and returns 1. */
int dlcc_report(const UtilDiag *d);
/* Prints "dlcc: error: MSG" plus a hint to --help, returns 2. */
int dlcc_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Loads MODEL and runs inference (pass_infer); NULL after printing nothing
 * (the caller reports d). */
IrGraph *dlcc_load_model(const char *path, const FeOptions *opt, UtilDiag *d);
/* Parses NAME=d0,d1,... for --input-shape into o (the name points into arg). */
int dlcc_parse_shape_override(char *arg, FeShapeOverride *o);

#endif
