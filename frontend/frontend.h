/* frontend/ — model readers and writers: the dlcc JSON graph format v1 with
 * safetensors weights, ONNX (protobuf-c), .npy tensors, and the upgrade of
 * legacy operator forms to the IR's (newest) semantics.  Prefix: fe_.
 *
 * Every reader takes untrusted bytes: sizes are checked before use, errors
 * carry FILE:LINE:COL (text) or a byte offset (binary), and nothing crashes.
 * Limits are in docs/limits.md.
 */
#ifndef DLCC_FRONTEND_H
#define DLCC_FRONTEND_H

#include "ir/ir.h"

#define FE_MAX_MODEL_BYTES   ((size_t)4 << 30)     /* model file */
#define FE_MAX_JSON_DEPTH    64                    /* JSON nesting */
#define FE_MAX_ST_HEADER     ((uint64_t)100 << 20) /* safetensors header */
#define FE_MAX_NPY_HEADER    65536

/* Options shared by the model readers. */
typedef struct FeShapeOverride {
    const char *name;         /* graph input name */
    IrShape shape;
} FeShapeOverride;

typedef struct FeOptions {
    int n_shapes;
    const FeShapeOverride *shapes;   /* --input-shape NAME=d0,d1,... for unknown dims */
} FeOptions;

/* Loads a model, telling JSON from ONNX by content.  The result has tensors,
 * nodes (file order), graph inputs/outputs, initializer data and typed
 * attributes; legacy forms are upgraded (fe_upgrade).  Shapes of
 * intermediate tensors are not yet inferred (pass_infer does that).
 * Returns NULL with a diagnostic. */
IrGraph *fe_load(const char *path, const FeOptions *opt, UtilDiag *d);
IrGraph *fe_load_json(const char *path, const char *text, size_t len, const FeOptions *opt, UtilDiag *d);
IrGraph *fe_load_onnx(const char *path, const uint8_t *bytes, size_t len, const FeOptions *opt,
                      UtilDiag *d);

/* Reads a serialized ONNX TensorProto file (the input_K.pb / output_K.pb of
 * ONNX test data).  out->data is malloc'd. */
int fe_onnx_read_tensor(const char *path, IrArray *out, UtilDiag *d);

/* Rewrites legacy operator forms of opsets older than the IR's into the
 * current semantics (attributes moved to inputs, Upsample → Resize, 2-D
 * Softmax coercion, old broadcasting, ...), using g->opset. */
int fe_upgrade(IrGraph *g, UtilDiag *d);

/* Checks the dtype/shape a model declares for its graph outputs
 * (IrTensor.declared) against the inferred ones; call after pass_infer. */
int fe_check_declared_outputs(const IrGraph *g, UtilDiag *d);

/* ---- safetensors ---- */

typedef struct FeStEntry {
    char *name;
    IrDType dtype;
    IrShape shape;
    uint64_t begin, end;        /* byte range in the data section */
} FeStEntry;

typedef struct FeSafetensors {
    char *path;
    uint8_t *bytes;             /* whole file */
    size_t len;
    uint64_t data_start;        /* 8 + header length */
    int n;
    FeStEntry *entries;
} FeSafetensors;

/* Parses and validates a safetensors file (header size, JSON object, dtype,
 * shape × dtype size = byte span, offsets contiguous, non-overlapping and
 * covering the data section, no element-count overflow). */
int  fe_st_open(FeSafetensors *st, const char *path, UtilDiag *d);
/* The same on bytes already in memory (copied); path names them in diagnostics. */
int  fe_st_parse(FeSafetensors *st, const char *path, const uint8_t *bytes, size_t len, UtilDiag *d);
const FeStEntry *fe_st_find(const FeSafetensors *st, const char *name);
void fe_st_close(FeSafetensors *st);
/* Serializes tensors (names sorted for determinism) into a safetensors image. */
int  fe_st_write(UtilBuf *out, int n, const char *const *names, const IrArray *arrays, UtilDiag *d);

/* ---- dlcc convert ---- */

/* Writes g as JSON v1 (json_name) plus a safetensors file (st_name) for
 * initializers larger than 16 elements, both into the output set `dir`. */
int fe_write_json(const IrGraph *g, UtilOutSet *outs, const char *dir, const char *json_name,
                  const char *st_name, UtilDiag *d);

/* Serializes inferred graph g as an ONNX model (opset 21, the IR's
 * semantics): live nodes, the constants they read as initializers, inputs
 * and outputs with dtypes and shapes (frontend/onnx_write.c). */
int fe_write_onnx(const IrGraph *g, UtilBuf *out, UtilDiag *d);

/* ---- .npy ---- */

/* Reads a .npy file (version 1/2/3, C order, little-endian, dtypes float32
 * float64 float16 int8..int64 uint8..uint64 bool).  data is malloc'd. */
int fe_npy_read(const char *path, IrArray *out, UtilDiag *d);
int fe_npy_parse(const char *path, const uint8_t *bytes, size_t len, IrArray *out, UtilDiag *d);
/* Serializes an array as .npy version 1.0. */
int fe_npy_write(const IrArray *a, UtilBuf *out, UtilDiag *d);

#endif
