/* frontend/onnx_impl.h — private to frontend/: pieces of the ONNX reader
 * shared by onnx.c (graphs) and onnx_tensor.c (tensors, wire checks). */
#ifndef DLCC_FRONTEND_ONNX_IMPL_H
#define DLCC_FRONTEND_ONNX_IMPL_H

#include "frontend/frontend.h"
#include "frontend/onnx.pb-c.h"

/* Deepest message nesting accepted.  An ONNX model without subgraphs nests at
 * most about 8 deep (Model > Graph > ValueInfo > Type > Tensor > Shape > Dim);
 * protobuf-c itself recurses without a limit, so deeper input is refused
 * before it is handed to protobuf-c. */
#define FE_ONNX_MAX_DEPTH 48

/* Walks the protobuf wire structure of `bytes` as message `desc` without
 * decoding values: tags, wire types against the descriptor's field types,
 * lengths within bounds, nesting depth.  Errors carry the byte offset.  This
 * only guards protobuf-c (which decodes the message afterwards). */
int fe_onnx_check_wire(const char *path, const uint8_t *bytes, size_t len,
                       const ProtobufCMessageDescriptor *desc, UtilDiag *d);

/* Decodes a TensorProto into out (dtype, shape, data).  `what` names the
 * tensor in errors ("initializer 'w'").  External data is resolved beside
 * `model_path`.  Data is allocated in g's arena, or malloc'd when g is NULL. */
int fe_onnx_tensor(const Onnx__TensorProto *tp, const char *model_path, const char *what, IrGraph *g,
                   IrArray *out, UtilDiag *d);

/* "FLOAT", "INT64", ... for a TensorProto.DataType value; "unknown" if none. */
const char *fe_onnx_dtype_name(int v);

#endif
