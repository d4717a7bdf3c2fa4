/* STUB: to be replaced by the implementation. */
#include "tools/tools.h"
#include <stdio.h>
int dlcc_cmd_info(int argc, char **argv) { (void)argc; (void)argv; fprintf(stderr, "dlcc: error: 'info' not implemented\n"); return 1; }
