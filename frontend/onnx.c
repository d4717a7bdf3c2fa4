/* STUB: to be replaced by the implementation. */
#include "frontend/frontend.h"
#include "frontend/onnx.pb-c.h"
IrGraph *fe_load_onnx(const char *path, const uint8_t *bytes, size_t len, const FeOptions *opt, UtilDiag *d)
{ (void)bytes; (void)len; (void)opt; util_error(d, util_loc_file(path), "ONNX reader not implemented"); return NULL; }
