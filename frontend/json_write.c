/* STUB: to be replaced by the implementation. */
#include "frontend/frontend.h"
int fe_write_json(const IrGraph *g, UtilOutSet *outs, const char *dir, const char *json_name,
                  const char *st_name, UtilDiag *d)
{ (void)g; (void)outs; (void)json_name; (void)st_name; return util_error(d, util_loc_file(dir), "not implemented"); }
