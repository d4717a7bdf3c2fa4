/* STUB: to be replaced by the implementation. */
#include "frontend/frontend.h"
int fe_npy_read(const char *path, IrArray *out, UtilDiag *d) { (void)out; return util_error(d, util_loc_file(path), "not implemented"); }
int fe_npy_parse(const char *path, const uint8_t *bytes, size_t len, IrArray *out, UtilDiag *d)
{ (void)bytes; (void)len; (void)out; return util_error(d, util_loc_file(path), "not implemented"); }
int fe_npy_write(const IrArray *a, UtilBuf *out, UtilDiag *d) { (void)a; (void)out; return util_error(d, util_loc_file(0), "not implemented"); }
