/* STUB: to be replaced by the implementation. */
#include "frontend/frontend.h"
int fe_st_open(FeSafetensors *st, const char *path, UtilDiag *d) { (void)st; return util_error(d, util_loc_file(path), "not implemented"); }
const FeStEntry *fe_st_find(const FeSafetensors *st, const char *name) { (void)st; (void)name; return 0; }
void fe_st_close(FeSafetensors *st) { (void)st; }
int fe_st_write(UtilBuf *out, int n, const char *const *names, const IrArray *arrays, UtilDiag *d)
{ (void)out; (void)n; (void)names; (void)arrays; return util_error(d, util_loc_file(0), "not implemented"); }
