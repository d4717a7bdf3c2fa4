/* STUB: to be replaced by the implementation. */
#include "frontend/frontend.h"
IrGraph *fe_load_json(const char *path, const char *text, size_t len, const FeOptions *opt, UtilDiag *d)
{ (void)text; (void)len; (void)opt; util_error(d, util_loc_file(path), "JSON reader not implemented"); return NULL; }
