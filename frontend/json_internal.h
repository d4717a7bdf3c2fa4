/* frontend/json_internal.h — private helpers shared by the JSON graph reader
 * and the safetensors header reader: shapes, dtypes, tensor values and
 * attributes, on top of the positioned JSON access of frontend/fe_json.h.
 */
#ifndef DLCC_FRONTEND_JSON_INTERNAL_H
#define DLCC_FRONTEND_JSON_INTERNAL_H

#include "frontend/fe_json.h"

/* A shape: array of at most IR_MAX_RANK dims >= 0 whose product is at most
 * IR_MAX_ELEMENTS.  With allow_unknown, a dim may be a string (symbol) or
 * null and is stored as -1. */
int fe_jshape(const FeJSrc *s, const FeJPath *p, const json_t *v, int allow_unknown, IrShape *out);

/* A dtype name: the JSON format's ("float32") or, with st, safetensors' ("F32"). */
int fe_jdtype(const FeJSrc *s, const FeJPath *p, const json_t *v, int st, IrDType *out);
/* The required "dtype" and "shape" members of object o. */
int fe_jtyped(const FeJSrc *s, const FeJPath *p, const json_t *o, int st, int allow_unknown, IrDType *dt,
              IrShape *shape);

/* ---- values and attributes (json_values.c) ---- */

/* Reads a flat row-major `values` array for a->dtype/a->shape into a->data,
 * allocated in g's arena once the count is known to match. */
int fe_json_values(const FeJSrc *s, const FeJPath *p, const json_t *v, IrGraph *g, IrArray *a);
/* Reads a tensor object {"dtype","shape","values"} into the graph's arena. */
int fe_json_tensor(const FeJSrc *s, const FeJPath *p, const json_t *v, IrGraph *g, IrArray *out);
/* Reads attribute `name` (p is its path) of a node of operator op into *a;
 * payloads live in g's arena. */
int fe_json_attr(const FeJSrc *s, const FeJPath *p, IrOp op, const char *name, const json_t *v,
                 IrGraph *g, IrAttr *a);

#endif
