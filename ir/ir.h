/* ir/ — the graph IR: tensors, nodes, typed attributes, the operator table,
 * verifier, shape/dtype inference, text and DOT printers.  Prefix: ir_ / Ir.
 *
 * A graph owns everything reachable from it through one arena.  Tensors and
 * nodes are referred to by index (int); pointers into g->tensors / g->nodes
 * are invalidated when tensors or nodes are added.
 */
#ifndef DLCC_IR_H
#define DLCC_IR_H

#include <stdint.h>
#include <stddef.h>

#include "util/util.h"

/* ---------------------------------------------------------------- dtypes */

typedef enum IrDType {
    IR_DT_UNDEF = 0,
#define DT(id, name, size, onnx, st, npy) IR_DT_##id,
#include "ir/dtypes.def"
#undef DT
    IR_DT_COUNT
} IrDType;

const char *ir_dtype_name(IrDType t);            /* "float32", ...; "undef" */
size_t      ir_dtype_size(IrDType t);            /* bytes per element; 0 for undef */
IrDType     ir_dtype_from_name(const char *s);   /* IR_DT_UNDEF if unknown */
IrDType     ir_dtype_from_onnx(int onnx);        /* TensorProto.DataType */
int         ir_dtype_to_onnx(IrDType t);
IrDType     ir_dtype_from_safetensors(const char *s);
const char *ir_dtype_safetensors(IrDType t);
const char *ir_dtype_numpy(IrDType t);           /* "<f4", ...; NULL if none */
int         ir_dtype_is_float(IrDType t);        /* F16 BF16 F32 F64 */
int         ir_dtype_is_int(IrDType t);          /* signed or unsigned integers (not bool) */
int         ir_dtype_is_signed(IrDType t);
void        ir_dtype_int_range(IrDType t, double *lo, double *hi);   /* an integer type's min and max */

/* Element access in the widest type of the class; for generic, naive code
 * (interpreter, constant folding, printers).  Index i is a flat element index. */
double  ir_load_f64(IrDType t, const void *data, int64_t i);
int64_t ir_load_i64(IrDType t, const void *data, int64_t i);
void    ir_store_f64(IrDType t, void *data, int64_t i, double v);   /* rounds/saturates per C casts */
void    ir_store_i64(IrDType t, void *data, int64_t i, int64_t v);
float   ir_f16_to_f32(uint16_t h);
uint16_t ir_f32_to_f16(float f);
float   ir_bf16_to_f32(uint16_t h);
uint16_t ir_f32_to_bf16(float f);

/* ---------------------------------------------------------------- shapes */

/* The limits of every tensor and every integer attribute (docs/limits.md).
 * Shape inference checks them for every tensor and attribute of a graph
 * (ir_check_tensor, ir_infer_node), so index arithmetic on a graph that
 * passed it — a position times a stride, an extent times an element
 * stride — stays far from int64 overflow: each factor is below 2^31. */
#define IR_MAX_RANK 8
#define IR_MAX_ELEMENTS (((int64_t)1 << 31) - 1)  /* elements of one tensor, and so any dimension */
#define IR_MAX_ELEMENTS_TEXT "2^31 - 1"           /* ... as diagnostics name it */
#define IR_MAX_TENSOR_BYTES ((int64_t)1 << 32)    /* bytes of one tensor (4 GiB, the largest file dlcc reads) */
#define IR_MAX_TENSOR_BYTES_TEXT "4 GiB"
#define IR_MAX_ATTR_INT IR_MAX_ELEMENTS           /* magnitude of an integer attribute (but the values: ir/infer.c) */

typedef struct IrShape {
    int rank;
    int64_t dims[IR_MAX_RANK];
} IrShape;

/* Element count; -1 when a dim is negative or the product of the dims, each
 * 0 counted as 1 (so that an empty tensor's dims and strides are bounded
 * too), exceeds IR_MAX_ELEMENTS.  A rank-0 shape has 1 element. */
int64_t ir_shape_numel(const IrShape *s);
int     ir_shape_equal(const IrShape *a, const IrShape *b);
/* "[1,3,224,224]" into buf. */
void    ir_shape_str(const IrShape *s, char *buf, size_t n);

/* A concrete tensor value: the interpreter's currency, constant data,
 * attribute tensors.  data is row-major, dtype elements. */
typedef struct IrArray {
    IrDType dtype;
    IrShape shape;
    void *data;
} IrArray;

int64_t ir_array_numel(const IrArray *a);
size_t  ir_array_bytes(const IrArray *a);

/* ------------------------------------------------------------ operators */

typedef enum IrOp {
    IR_OP_INVALID = 0,
#define OP(name, mi, ma, mo, mao, inf, ev, low, fl, doc) IR_OP_##name,
#include "ir/ops.def"
#undef OP
    IR_OP_COUNT
} IrOp;

enum {
    IR_OPF_EW   = 1 << 0,   /* elementwise (output element i depends on input element i) */
    IR_OPF_COMM = 1 << 1,   /* commutative in its inputs */
    IR_OPF_VIEW = 1 << 2,   /* output is the input's bytes reinterpreted (no copy needed) */
    IR_OPF_SHAPEVAL = 1 << 3, /* output value depends only on input shapes (known at compile time) */
    IR_OPF_FUSE = 1 << 4,   /* can be a fused group's member: one scalar function of its operands' elements
                             * at the output element (lowering applies it in the head's epilogue,
                             * lower/scalar.c); passes/fuse.c groups only these */
};

#define IR_VARIADIC 255

/* The newest default-domain ONNX opset the frontends accept.  The IR holds
 * opset-21 semantics; 22 to 24 only widened type lists and added operators. */
#define IR_MAX_OPSET 24

typedef struct IrOpInfo {
    const char *name;       /* ONNX name */
    int min_in, max_in, min_out, max_out;
    unsigned flags;
    const char *doc;        /* one-line semantics */
} IrOpInfo;

const IrOpInfo *ir_op_info(IrOp op);
const char     *ir_op_name(IrOp op);
IrOp            ir_op_from_name(const char *onnx_name);   /* IR_OP_INVALID if unknown */

/* ----------------------------------------------------------- attributes */

typedef enum IrAttrKey {
    IR_A_INVALID = 0,
#define AK(name) IR_A_##name,
#include "ir/attrs.def"
#undef AK
    IR_A_COUNT
} IrAttrKey;

typedef enum IrAttrKind {
    IR_AK_NONE = 0, IR_AK_INT, IR_AK_FLOAT, IR_AK_STRING,
    IR_AK_INTS, IR_AK_FLOATS, IR_AK_STRINGS, IR_AK_TENSOR
} IrAttrKind;

typedef struct IrAttr {
    IrAttrKey key;
    IrAttrKind kind;
    int n;                    /* element count for list kinds */
    union {
        int64_t i;
        double f;
        const char *s;
        int64_t *ints;
        double *floats;
        const char **strings;
        IrArray *tensor;
    } v;
} IrAttr;

const char *ir_attr_name(IrAttrKey k);
IrAttrKey   ir_attr_from_name(const char *s);
const char *ir_attr_kind_name(IrAttrKind k);
/* The kind operator `op` declares for `key` (ir/opattrs.def), IR_AK_NONE if
 * the operator does not accept it. */
IrAttrKind  ir_op_attr_kind(IrOp op, IrAttrKey key);
/* Calls fn for each attribute `op` accepts, in declaration order. */
void ir_op_attrs_foreach(IrOp op, void (*fn)(void *ctx, IrAttrKey key, IrAttrKind kind), void *ctx);

/* ---------------------------------------------------------------- graph */

typedef enum IrTensorKind {
    IR_TK_VALUE = 0,    /* produced by a node (data != NULL once its value is known) */
    IR_TK_INPUT,        /* graph input, supplied at run time */
    IR_TK_CONST,        /* initializer: data from the model */
} IrTensorKind;

/* What a model file declares about a graph output's type; checked after
 * inference by fe_check_declared_outputs.  Dims of -1 are unconstrained. */
typedef struct IrDeclared {
    IrDType dtype;          /* IR_DT_UNDEF when not declared */
    int has_shape;
    IrShape shape;
    UtilLoc loc;            /* the declaration in the model file */
} IrDeclared;

typedef struct IrTensor {
    const char *name;
    IrTensorKind kind;
    IrArray v;              /* dtype, shape (valid once known), data or NULL */
    int shape_known;        /* dtype and shape set (inputs, consts, inferred values) */
    int producer;           /* node index, or -1 */
    UtilLoc loc;
    const IrDeclared *declared; /* graph outputs: the model's declared type, or NULL */
} IrTensor;

typedef struct IrNode {
    IrOp op;
    const char *name;       /* may be "" */
    int n_in, n_out;
    int *in;                /* tensor indices; -1 = absent optional input */
    int *out;
    int n_attrs;
    IrAttr *attrs;
    UtilLoc loc;
    int dead;               /* removed by a pass; dropped by ir_graph_compact */
    int fused;              /* 1: computed in the kernel of the node before it (passes/fuse.c sets it;
                             * the lowering honours it where the group is valid, docs/passes.md) */
} IrNode;

typedef struct IrGraph {
    UtilArena arena;
    const char *name;
    const char *file;       /* model path, for diagnostics */
    int opset;
    IrTensor *tensors;
    int n_tensors, cap_tensors;
    IrNode *nodes;
    int n_nodes, cap_nodes;
    int *inputs, n_inputs, cap_inputs;     /* tensor indices */
    int *outputs, n_outputs, cap_outputs;
    /* name → tensor index hash (open addressing) */
    int *hash;
    int hash_cap;
    /* use lists, valid after ir_graph_build_uses until the next mutation */
    int *use_start;         /* n_tensors + 1 */
    int *use_node;          /* consumer node per use */
    int *use_slot;          /* input slot per use */
    int uses_valid;
    /* The tensor whose value inference needed at compile time when it last
     * failed for that reason (a Reshape's shape, a ReduceSum's axes, ...), else
     * -1: a caller that knows the values of runtime inputs binds those it
     * depends on and infers again (pass_infer_bound, `dlcc run`, --bind). */
    int need_value;
} IrGraph;

IrGraph *ir_graph_new(const char *name, const char *file);
void     ir_graph_free(IrGraph *g);
char    *ir_strdup(IrGraph *g, const char *s);       /* into the graph's arena */
void    *ir_alloc(IrGraph *g, size_t bytes);         /* zeroed, graph lifetime; NULL on OOM */

/* Adds a tensor; returns its index, or -1 (with diagnostic) on a duplicate
 * name or OOM. */
int  ir_add_tensor(IrGraph *g, const char *name, IrTensorKind kind, UtilLoc loc, UtilDiag *d);
/* Adds a tensor with a fresh name derived from `hint` (never fails but OOM). */
int  ir_add_temp(IrGraph *g, const char *hint);
int  ir_find_tensor(const IrGraph *g, const char *name);     /* -1 if none */
int  ir_add_input(IrGraph *g, int tensor);
int  ir_add_output(IrGraph *g, int tensor);
/* Sets a tensor's dtype/shape (shape_known = 1). */
void ir_set_type(IrGraph *g, int tensor, IrDType dt, const IrShape *shape);
/* Allocates (zeroed) data for a tensor of known type; returns it or NULL. */
void *ir_alloc_data(IrGraph *g, int tensor);

/* Adds a node; in/out copied.  Returns its index or -1 on OOM. Output
 * tensors get producer = node. */
int  ir_add_node(IrGraph *g, IrOp op, const char *name, int n_in, const int *in,
                 int n_out, const int *out, UtilLoc loc);
/* Sets (replacing) an attribute; list/tensor payloads are copied into the arena. */
int  ir_set_attr(IrGraph *g, int node, const IrAttr *a);
void ir_remove_attr(IrGraph *g, int node, IrAttrKey key);
/* Replaces a node's input list (e.g. when moving legacy attributes to inputs). */
int  ir_set_inputs(IrGraph *g, int node, int n_in, const int *in);

/* Attribute lookup; *_or return the opattrs.def default when absent. */
const IrAttr *ir_attr(const IrNode *n, IrAttrKey key);
int           ir_has_attr(const IrNode *n, IrAttrKey key);
int64_t       ir_attr_int(const IrNode *n, IrAttrKey key);      /* value or default (0 if none) */
double        ir_attr_float(const IrNode *n, IrAttrKey key);
const char   *ir_attr_str(const IrNode *n, IrAttrKey key);      /* value or default or "" */
/* Returns the list length (0 if absent) and stores the pointer. */
int           ir_attr_ints(const IrNode *n, IrAttrKey key, const int64_t **v);
int           ir_attr_floats(const IrNode *n, IrAttrKey key, const double **v);

/* Convenience: the tensor at input / output slot i, or NULL if absent. */
IrTensor *ir_in(const IrGraph *g, const IrNode *n, int i);
IrTensor *ir_out(const IrGraph *g, const IrNode *n, int i);

/* Records "node 'NAME' (Op): MSG" at the node's location. */
int ir_node_error(const IrGraph *g, const IrNode *n, UtilDiag *d, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Orders nodes so that every tensor is produced before it is used (stable:
 * keeps the given order where legal).  A cycle is an error naming a node on it. */
int  ir_toposort(IrGraph *g, UtilDiag *d);
/* Turns runtime input `t` (a tensor index) into a constant holding a copy of
 * v, whose dtype and shape must be the input's declared ones; t leaves
 * g->inputs.  A caller that knows an input's value binds it so that shape
 * inference can use it (`dlcc run`, --bind NAME=FILE.npy; docs/cli.md). */
int  ir_bind_input(IrGraph *g, int t, const IrArray *v, UtilDiag *d);
/* Sets mark[u] = 1 (mark: n_tensors entries) for t and every tensor t's value
 * is computed from, through the nodes producing them; the nodes must be in
 * topological order (ir_toposort). */
void ir_mark_ancestors(const IrGraph *g, int t, char *mark);
/* Drops dead nodes and tensors no longer referenced (inputs/outputs kept). */
void ir_compact(IrGraph *g);
int  ir_build_uses(IrGraph *g);          /* -1 on out of memory */
/* Number of uses of tensor t by live nodes, plus 1 if it is a graph output. */
int  ir_use_count(const IrGraph *g, int t);

/* Structural checks: defined-before-use, no cycles (topological order),
 * arity, unique names, attribute kinds and ranges, known dtypes/shapes. */
int  ir_verify(const IrGraph *g, UtilDiag *d);

/* -------------------------------------------------------- inference */

/* Infers dtype and shape of node's outputs from its inputs (and from the data
 * of inputs whose values are known: shape operands).  Validates attributes:
 * every integer attribute within +-IR_MAX_ATTR_INT before the rule runs, and
 * the outputs within the tensor limits after it (ir_check_tensor).  Errors
 * name the node. */
int  ir_infer_node(IrGraph *g, int node, UtilDiag *d);
/* Tensor t's shape and dtype within IR_MAX_ELEMENTS and IR_MAX_TENSOR_BYTES;
 * -1 with a diagnostic naming it (and node n, when not NULL) otherwise. */
int  ir_check_tensor(const IrGraph *g, const IrNode *n, int t, UtilDiag *d);

/* Resolve a possibly negative axis against rank; -1 (with diagnostic) if out
 * of range. */
int  ir_norm_axis(const IrGraph *g, const IrNode *n, int64_t axis, int rank, UtilDiag *d);
/* numpy broadcast of two shapes; -1 with diagnostic if incompatible. */
int  ir_broadcast_shapes(const IrGraph *g, const IrNode *n, const IrShape *a, const IrShape *b,
                         IrShape *out, UtilDiag *d);

/* Operand arithmetic shared by the data-movement shape rules and kernels
 * (ir/infer_data.c, interp/k_data.c). */

/* Slice on one axis of length dim (ONNX clamping; step != 0): first element
 * and element count. */
void ir_slice_axis(int64_t dim, int64_t start, int64_t end, int64_t step, int64_t *first, int64_t *count);
/* Resize geometry: per-axis scale and output dims of x.  Exactly one of
 * scales / sizes is non-NULL, with n values on axes[0..n) (normalized, or NULL
 * for axes 0..n-1); policy 0 = stretch, 1 = not_larger, 2 = not_smaller.
 * Axes not listed keep scale 1. */
void ir_resize_geometry(const IrShape *x, const double *scales, const int64_t *sizes, int n,
                        const int64_t *axes, int policy, double *scale, IrShape *out);
/* Sliding-window geometry of Conv, ConvTranspose, MaxPool, AveragePool and
 * LpPool (ir/infer_nn.c), shared by their shape rules and kernels so both
 * resolve auto_pad, ceil_mode and output_shape the same way.  Spatial dim i
 * relates input and output positions by
 *   Conv, pools:    in  = out * stride + k * dilation - pad_begin
 *   ConvTranspose:  out = in  * stride + k * dilation - pad_begin
 * (k in [0, kernel)); positions outside [0, size) are padding.  pad_begin /
 * pad_end may be negative only for ConvTranspose with output_shape/auto_pad. */
typedef struct IrWindow {
    int rank;                           /* spatial dims (input rank - 2) */
    int64_t batch, channels_in, channels_out, group;
    int64_t in[IR_MAX_RANK], out[IR_MAX_RANK];
    int64_t kernel[IR_MAX_RANK], stride[IR_MAX_RANK], dilation[IR_MAX_RANK];
    int64_t pad_begin[IR_MAX_RANK], pad_end[IR_MAX_RANK];
} IrWindow;
/* Validates the node's attributes against input shape x (and weight shape w
 * for Conv/ConvTranspose, NULL for pools) and fills win; -1 with a
 * diagnostic naming the node. */
int ir_window(const IrGraph *g, const IrNode *n, const IrShape *x, const IrShape *w, IrWindow *win,
              UtilDiag *d);

/* Einsum equation (ir/infer_linalg.c), shared by its shape rule and kernel.
 * Labels are numbered 0..n_labels-1: letters in order of first appearance,
 * then one label per ellipsis dim (broadcast numpy-style across inputs).
 * label[i][k] is the label of dim k of input i; a label repeated within an
 * input takes its diagonal.  size[l] is the extent of label l; an input dim of
 * extent 1 under an ellipsis label of larger extent broadcasts. */
#define IR_EINSUM_MAX_IN 16
#define IR_EINSUM_MAX_LABELS (52 + IR_MAX_RANK)
typedef struct IrEinsum {
    int n_in, n_labels;
    int rank[IR_EINSUM_MAX_IN];
    int label[IR_EINSUM_MAX_IN][IR_MAX_RANK];
    int out_rank;
    int out_label[IR_MAX_RANK];
    int64_t size[IR_EINSUM_MAX_LABELS];
} IrEinsum;
/* Parses the node's equation against the input shapes; -1 with a diagnostic
 * naming the node. */
int ir_einsum(const IrGraph *g, const IrNode *n, const IrShape *const *in, int n_in, IrEinsum *e,
              UtilDiag *d);

/* Recurrent and detection operators (ir/infer_rnn.c, ir/infer_detect.c),
 * shared by their shape rules and kernels. */

/* An RNN/GRU/LSTM activation function with its alpha/beta (ONNX defaults
 * where activation_alpha/activation_beta run out). */
typedef enum IrRnnAct {
    IR_RNN_RELU, IR_RNN_TANH, IR_RNN_SIGMOID, IR_RNN_AFFINE, IR_RNN_LEAKYRELU, IR_RNN_THRESHOLDEDRELU,
    IR_RNN_SCALEDTANH, IR_RNN_HARDSIGMOID, IR_RNN_ELU, IR_RNN_SOFTSIGN, IR_RNN_SOFTPLUS
} IrRnnAct;
typedef struct IrRnnActFn {
    IrRnnAct kind;
    double alpha, beta;
} IrRnnActFn;
#define IR_RNN_MAX_ACTS 6       /* 3 per direction (LSTM f, g, h) x 2 directions */
/* Resolves node n's activations (RNN f; GRU f, g; LSTM f, g, h; per
 * direction) into fns[dir * per_dir + k]; -1 with a diagnostic naming the
 * attribute. */
int ir_rnn_activations(const IrGraph *g, const IrNode *n, int dirs, IrRnnActFn *fns, UtilDiag *d);
/* Number of directions from the `direction` attribute (1 or 2), -1 with a
 * diagnostic if unknown. */
int ir_rnn_directions(const IrGraph *g, const IrNode *n, UtilDiag *d);

/* RoiAlign: at most this many samples per side of a bin (2^20 per bin).
 * The shape rule refuses a larger sampling_ratio; adaptive sampling
 * (sampling_ratio 0, from the rois at run time) is clamped to it by the
 * compiled code and refused beyond it by the interpreter. */
#define IR_ROIALIGN_MAX_SIDE 1024

/* NonMaxSuppression's greedy selection: boxes [B, N, 4], scores [B, C, N]
 * (float types); max_per_class <= 0 selects nothing; score_threshold NULL
 * keeps every box.  Writes (batch, class, box) triples into sel when non-NULL
 * (room for B * C * min(N, max_per_class) triples); returns the count, or -1
 * when out of memory. */
int64_t ir_nms(const IrArray *boxes, const IrArray *scores, int64_t max_per_class, double iou_threshold,
               const double *score_threshold, int center_point_box, int64_t *sel);

/* Operand arithmetic of the scatter, indexing, sampling and signal
 * operators, shared by their shape rules (ir/infer_scatter.c, infer_sample.c,
 * infer_signal.c) and kernels
 * (interp/k_scatter.c, k_sample.c, k_signal.c).  Each returns -1 with a
 * diagnostic naming the node on invalid operands. */

/* ScatterElements / ScatterND reduction: 0 none, 1 add, 2 mul, 3 max, 4 min;
 * -1 if unknown (Scatter: always 0). */
int ir_scatter_reduction(const IrNode *n);

/* Compress: number of true values of cond (bool, 1-D) selecting an element of
 * an axis of length dim; a true value beyond dim is an error. */
int64_t ir_compress_count(const IrGraph *g, const IrNode *n, const IrArray *cond, int64_t dim, UtilDiag *d);

/* Unique over x's slices along axis (axis < 0: x's elements, flattened),
 * ordered ascending (lexicographically over a slice's elements in row-major
 * order; NaN after every number and equal to NaN) when sorted, else by first
 * occurrence.  Returns the number u of distinct slices, or -1 when out of
 * memory.  Each non-NULL array receives: first[u] the index of each distinct
 * slice's first occurrence, inverse[n] (n slices) each slice's position among
 * the distinct ones, counts[u] their multiplicities. */
int64_t ir_unique(const IrArray *x, int axis, int sorted, int64_t *first, int64_t *inverse, int64_t *counts);

/* CenterCropPad: normalized axes (attribute, or 0..rank-1) into ax; count. */
int ir_centercrop_axes(const IrGraph *g, const IrNode *n, int rank, int *ax, UtilDiag *d);

/* MaxUnpool: the unpooled shape implied by kernel_shape/strides/pads (the
 * shape the flat indices address). */
int ir_maxunpool_shape(const IrGraph *g, const IrNode *n, const IrShape *x, IrShape *inferred, UtilDiag *d);

/* Col2Im geometry: image position of block element k at block position b on
 * axis i is  b * stride[i] - pad[i] + k * dil[i]. */
typedef struct IrColGeom {
    int rank;                          /* spatial axes */
    int64_t channels, kprod, blocks;   /* C, prod(block_shape), L */
    int64_t img[IR_MAX_RANK], blk[IR_MAX_RANK], dil[IR_MAX_RANK], stride[IR_MAX_RANK], pad[IR_MAX_RANK];
    int64_t cnt[IR_MAX_RANK];          /* blocks along each axis */
} IrColGeom;
int ir_col2im_geometry(const IrGraph *g, const IrNode *n, const IrShape *x, const int64_t *img,
                       const int64_t *blk, int sp, IrColGeom *c, UtilDiag *d);

/* GridSample: mode 0 nearest, 1 linear, 2 cubic; pad 0 zeros, 1 border,
 * 2 reflection (opset-16 names bilinear/bicubic accepted). */
int ir_gridsample_modes(const IrGraph *g, const IrNode *n, int *mode, int *pad, UtilDiag *d);

/* Longest DFT / STFT frame: k * t products of the direct sum stay in int64. */
#define IR_MAX_DFT_LENGTH ((int64_t)1 << 31)

/* DFT: the transformed axis and the DFT length (len / axis_in may be NULL or
 * empty: axis -2; DFT-17's axis attribute is read when fe_upgrade has not
 * moved it to input 3). */
int ir_dft_params(const IrGraph *g, const IrNode *n, const IrArray *x, const IrArray *len, const IrArray *axis_in,
                  int *axis, int64_t *length, UtilDiag *d);

/* STFT: output shape [batch, frames, bins, 2] from the signal shape, hop,
 * window shape (or NULL) and frame length (or NULL). */
int ir_stft_params(const IrGraph *g, const IrNode *n, const IrShape *x, int64_t step, const IrShape *win,
                   const int64_t *frame_len, IrShape *out, UtilDiag *d);

/* ------------------------------------------------------------ printers */

/* Stable, diffable text form (one line per node; constants summarized). */
void ir_print(const IrGraph *g, UtilBuf *out);
/* Graphviz DOT. */
void ir_print_dot(const IrGraph *g, UtilBuf *out);

/* Statistics for `dlcc info`. */
int64_t ir_node_flops(const IrGraph *g, const IrNode *n);   /* multiply-adds count 2 */

#endif
