/* tests/unit/test_attrs.c — every integer attribute of every operator, and
 * every shape operand (the integer inputs a shape rule reads at compile
 * time: shapes, axes, pads, repeats, sizes, k, ...), set to extreme values
 * one at a time: 0, -1, 2^31, -2^31, 2^62 and -2^62, and +-(2^31 - 1), the
 * largest magnitude an attribute may have (docs/limits.md).
 *
 * One table of small valid single-node graphs (`cases`, shapes like those
 * of the ops and lowering tests) drives one function.  For each case and
 * each value of each attribute (INTS: each element, and the whole list;
 * absent ones as a one-element list) and each element of each shape operand:
 *   - shape inference (pass_infer) either refuses it with a diagnostic
 *     naming the node, or accepts it with outputs of at most 1 MiB (a larger
 *     one would be a huge shape the limits let through);
 *   - the variants inference accepts are compiled together, one node each
 *     in one graph, through the -O2 pipeline for the CPU (host JIT) and the
 *     emulated GPU, and each output must match the reference interpreter
 *     (floats within 1e-4 relative + 1e-5 absolute, NaN matching NaN;
 *     integers exactly).  A failure is narrowed to the variant that makes it.
 * Every operator with an integer attribute has a case; the ones that cannot
 * are listed in `excluded` with the reason.  A node whose inputs are all
 * constants (Range, the windows, MelWeightMatrix, NonMaxSuppression,
 * Compress, Unique, Constant, ConstantOfShape; Shape) is computed at compile time:
 * there inference and the interpreter's kernel are what is checked.  Run it
 * under ASan + UBSan (docs/limits.md gives the build) to catch overflow in
 * the rules' and the lowering's index arithmetic.
 * DLCC_TEST_VERBOSE=1 prints each variant before it is compiled;
 * DLCC_TEST_OP=Conv runs the cases of one operator. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interp/interp.h"
#include "targets/targets.h"
#include "tests/unit/lower_graph.h"

/* ---------------------------------------------------------------- the table */

#define MAX_IN 9
#define MAX_AT 9
#define NARG(...) ((int)(sizeof((int64_t[]){ __VA_ARGS__ }) / sizeof(int64_t)))
#define V(...) ((const double[]){ __VA_ARGS__ })

/* One input of a case's node. */
typedef struct Arg {
    IrDType dt;          /* IR_DT_UNDEF: no more inputs; ABSENT: an absent optional input */
    int rank;
    int64_t dims[5];
    const double *v;     /* a constant's values (row-major); NULL: a graph input (or `rnd`) */
    double lo, hi;       /* random values: floats in [lo, hi), integers lo..hi */
    int operand;         /* a shape operand: its values are mutated */
    int rnd;             /* a constant of random values (weights: the CPU's tiled Conv templates need them) */
    int relu;            /* a graph input read through a Relu: the node reads a tensor of the workspace */
} Arg;

#define ABSENT_DT IR_DT_COUNT
#define ABSENT { .dt = ABSENT_DT }
/* float32 graph input of the given dims, values in [-2, 2); read through a Relu; float32 constant of
 * random values in [-1, 1) */
#define IN(...) { IR_DT_F32, NARG(__VA_ARGS__), { __VA_ARGS__ }, NULL, -2, 2, 0, 0, 0 }
#define IN_RELU(...) { IR_DT_F32, NARG(__VA_ARGS__), { __VA_ARGS__ }, NULL, -2, 2, 0, 0, 1 }
#define KR(...) { IR_DT_F32, NARG(__VA_ARGS__), { __VA_ARGS__ }, NULL, -1, 1, 0, 1, 0 }
/* typed graph input with a value range */
#define INT(dt, lo, hi, ...) { dt, NARG(__VA_ARGS__), { __VA_ARGS__ }, NULL, lo, hi, 0 }
/* constant of the given values and dims (no dims: a scalar) */
#define K(dt, vals, ...) { dt, NARG(__VA_ARGS__), { __VA_ARGS__ }, vals, 0, 0, 0 }
#define K0(dt, v) { dt, 0, { 0 }, V(v), 0, 0, 0 }
/* int64 shape operands: 1-D, and scalar */
#define OPN(...) { IR_DT_I64, 1, { NARG(__VA_ARGS__) }, V(__VA_ARGS__), 0, 0, 1 }
#define OP0(v) { IR_DT_I64, 0, { 0 }, V(v), 0, 0, 1 }

typedef struct Att {
    IrAttrKey key;       /* IR_A_INVALID: no more attributes */
    IrAttrKind kind;
    int n;
    int64_t i[8];
    double f;
    const char *s;
} Att;

#define AI(k, v) { IR_A_##k, IR_AK_INT, 0, { v }, 0, NULL }
#define AL(k, ...) { IR_A_##k, IR_AK_INTS, NARG(__VA_ARGS__), { __VA_ARGS__ }, 0, NULL }
#define AF(k, v) { IR_A_##k, IR_AK_FLOAT, 0, { 0 }, v, NULL }
#define AS(k, v) { IR_A_##k, IR_AK_STRING, 0, { 0 }, 0, v }

typedef struct Case {
    IrOp op;
    int n_out;
    Arg in[MAX_IN];
    Att at[MAX_AT];
} Case;

#define U8 IR_DT_U8
#define I8 IR_DT_I8
#define I32 IR_DT_I32
#define I64 IR_DT_I64
#define F32 IR_DT_F32
#define BOOL IR_DT_BOOL

#define UNARY(op) { IR_OP_##op, 1, { IN(2, 3) }, { AL(consumed_inputs, 0) } }
#define BINARY(op, dt, lo, hi) { IR_OP_##op, 1, { INT(dt, lo, hi, 2, 3), INT(dt, lo, hi, 3) }, { AI(broadcast, 0) } }
#define REDUCE(op, lo) { IR_OP_##op, 1, { INT(F32, lo, 2, 2, 3, 4), OPN(1) }, \
                         { AI(keepdims, 1), AI(noop_with_empty_axes, 0) } }
#define WINDOW(op) { IR_OP_##op, 1, { OP0(5) }, { AI(output_datatype, 1), AI(periodic, 1) } }

static const Case cases[] = {
    /* elementwise (and the legacy attributes the frontends upgrade, which the IR ignores) */
    { IR_OP_IsInf, 1, { IN(2, 3) }, { AI(detect_negative, 1), AI(detect_positive, 1) } },
    { IR_OP_Cast, 1, { IN(2, 3) }, { AI(to, 10), AI(saturate, 1) } },
    { IR_OP_CastLike, 1, { IN(2, 3), INT(I32, 0, 1, 1) }, { AI(saturate, 1) } },
    { IR_OP_Dropout, 1, { IN(2, 3) }, { AI(seed, 3), AI(is_test, 1) } },
    { IR_OP_Mod, 1, { INT(I32, 1, 9, 2, 3), INT(I32, 1, 9, 3) }, { AI(fmod, 0) } },
    BINARY(Add, F32, -2, 2), BINARY(Sub, F32, -2, 2), BINARY(Mul, F32, -2, 2), BINARY(Div, F32, 1, 2),
    BINARY(Pow, F32, 0.5, 2), BINARY(Equal, I32, 0, 2), BINARY(Less, F32, -2, 2), BINARY(Greater, F32, -2, 2),
    BINARY(And, BOOL, 0, 1), BINARY(Or, BOOL, 0, 1), BINARY(Xor, BOOL, 0, 1),
    UNARY(Relu), UNARY(LeakyRelu), UNARY(Sigmoid), UNARY(Tanh), UNARY(Elu), UNARY(Selu), UNARY(HardSigmoid),
    UNARY(Abs), UNARY(Neg), UNARY(Exp), UNARY(Log), UNARY(Sqrt), UNARY(Reciprocal), UNARY(Floor), UNARY(Ceil),
    UNARY(Clip),
    { IR_OP_PRelu, 1, { IN(2, 3), IN(3) }, { AL(consumed_inputs, 0) } },
    /* reductions */
    REDUCE(ReduceSum, -2), REDUCE(ReduceMean, -2), REDUCE(ReduceMax, -2), REDUCE(ReduceMin, -2),
    REDUCE(ReduceProd, -2), REDUCE(ReduceL1, -2), REDUCE(ReduceL2, -2), REDUCE(ReduceSumSquare, -2),
    REDUCE(ReduceLogSum, 0.1), REDUCE(ReduceLogSumExp, -2),
    { IR_OP_ArgMax, 1, { IN(2, 3, 4) }, { AI(axis, 1), AI(keepdims, 1), AI(select_last_index, 0) } },
    { IR_OP_ArgMin, 1, { IN(2, 3, 4) }, { AI(axis, 1), AI(keepdims, 1), AI(select_last_index, 0) } },
    { IR_OP_Softmax, 1, { IN(2, 3, 4) }, { AI(axis, -1) } },
    { IR_OP_LogSoftmax, 1, { IN(2, 3, 4) }, { AI(axis, 1) } },
    { IR_OP_Hardmax, 1, { IN(2, 3, 4) }, { AI(axis, -1) } },
    /* normalization */
    { IR_OP_BatchNormalization, 1, { IN(1, 2, 3), IN(2), IN(2), IN(2), INT(F32, 0.5, 2, 2) },
      { AI(training_mode, 0), AI(spatial, 1), AI(is_test, 0), AL(consumed_inputs, 0) } },
    { IR_OP_InstanceNormalization, 1, { IN(1, 2, 3), IN(2), IN(2) }, { AL(consumed_inputs, 0) } },
    { IR_OP_LayerNormalization, 1, { IN(2, 3, 4), IN(4), IN(4) }, { AI(axis, -1), AI(stash_type, 1) } },
    { IR_OP_LpNormalization, 1, { IN(2, 3) }, { AI(axis, -1), AI(p, 2) } },
    /* convolution and pooling: with constant weights, the CPU's register-blocked templates
     * (lower/tile/: depthwise, direct, pointwise, Winograd for an input in the workspace, GEMM); the
     * generic loops for runtime weights, and on the GPU */
    { IR_OP_Conv, 1, { IN(1, 2, 5, 5), IN(3, 2, 3, 3), IN(3) },
      { AL(kernel_shape, 3, 3), AL(strides, 1, 1), AL(pads, 1, 1, 1, 1), AL(dilations, 1, 1), AI(group, 1) } },
    { IR_OP_Conv, 1, { IN(1, 4, 6, 8), KR(4, 1, 3, 3), KR(4) },
      { AL(strides, 1, 1), AL(pads, 1, 1, 1, 1), AL(dilations, 1, 1), AI(group, 4) } },
    { IR_OP_Conv, 1, { IN_RELU(1, 4, 7, 9), KR(4, 1, 3, 3) },
      { AL(strides, 2, 1), AL(pads, 1, 0, 1, 2), AL(dilations, 1, 2), AI(group, 4) } },
    { IR_OP_Conv, 1, { IN(1, 4, 8, 8), KR(8, 4, 3, 3), KR(8) },
      { AL(kernel_shape, 3, 3), AL(strides, 1, 1), AL(pads, 1, 1, 1, 1), AL(dilations, 1, 1), AI(group, 1) } },
    { IR_OP_Conv, 1, { IN_RELU(1, 8, 10, 10), KR(8, 8, 3, 3) },
      { AL(strides, 1, 1), AL(pads, 1, 1, 1, 1), AL(dilations, 1, 1) } },
    { IR_OP_Conv, 1, { IN_RELU(1, 8, 6, 6), KR(16, 8, 1, 1), KR(16) }, { AL(strides, 1, 1), AL(pads, 0, 0, 0, 0) } },
    { IR_OP_Conv, 1, { IN(1, 16, 9, 9), KR(8, 16, 3, 3) }, { AL(strides, 2, 2), AL(pads, 1, 1, 1, 1) } },
    { IR_OP_Conv, 1, { IN(2, 3, 9), IN(4, 3, 3) }, { AL(strides, 2), AL(pads, 2, 1), AL(dilations, 2) } },
    { IR_OP_ConvTranspose, 1, { IN(1, 2, 3, 3), IN(2, 3, 3, 3), IN(3) },
      { AL(strides, 2, 2), AL(pads, 1, 1, 1, 1), AL(output_padding, 1, 1), AL(dilations, 1, 1),
        AL(kernel_shape, 3, 3), AI(group, 1) } },
    { IR_OP_ConvTranspose, 1, { IN(1, 1, 5), IN(1, 2, 3) }, { AL(strides, 3), AL(output_shape, 16) } },
    { IR_OP_MaxPool, 2, { IN(1, 2, 6, 6) },
      { AL(kernel_shape, 3, 3), AL(strides, 2, 2), AL(pads, 1, 1, 1, 1), AL(dilations, 1, 1), AI(ceil_mode, 0),
        AI(storage_order, 0) } },
    { IR_OP_MaxPool, 1, { IN(1, 3, 7, 7) }, { AL(kernel_shape, 3, 3), AL(strides, 2, 2), AI(ceil_mode, 1) } },
    { IR_OP_MaxPool, 1, { IN_RELU(1, 3, 8, 9) },
      { AL(kernel_shape, 3, 3), AL(strides, 1, 1), AL(pads, 1, 1, 1, 1), AL(dilations, 1, 1), AI(ceil_mode, 0) } },
    { IR_OP_AveragePool, 1, { IN(1, 2, 7, 5) },
      { AL(kernel_shape, 3, 2), AL(strides, 2, 1), AL(pads, 1, 0, 2, 1), AL(dilations, 1, 1), AI(ceil_mode, 1),
        AI(count_include_pad, 0) } },
    { IR_OP_LpPool, 1, { IN(1, 2, 6, 6) },
      { AL(kernel_shape, 2, 2), AL(strides, 2, 2), AL(pads, 0, 0, 0, 0), AL(dilations, 1, 1), AI(ceil_mode, 0),
        AI(p, 2) } },
    { IR_OP_GlobalLpPool, 1, { IN(1, 2, 3, 3) }, { AI(p, 2) } },
    { IR_OP_Gemm, 1, { IN(3, 4), IN(4, 5), IN(5) }, { AI(transA, 0), AI(transB, 0), AI(broadcast, 0) } },
    { IR_OP_Gemm, 1, { IN(6, 8), KR(8, 8), KR(8) }, { AI(transA, 0), AI(transB, 1) } },
    /* shape and data movement */
    { IR_OP_Reshape, 1, { IN(2, 3, 4), OPN(4, -1) }, { AI(allowzero, 0) } },
    { IR_OP_Flatten, 1, { IN(2, 3, 4) }, { AI(axis, 1) } },
    { IR_OP_Squeeze, 1, { IN(2, 1, 3), OPN(1) } },
    { IR_OP_Unsqueeze, 1, { IN(2, 3), OPN(0, 3) } },
    { IR_OP_Transpose, 1, { IN(2, 3, 4) }, { AL(perm, 2, 0, 1) } },
    { IR_OP_Concat, 1, { IN(2, 3), IN(2, 2) }, { AI(axis, 1) } },
    { IR_OP_Split, 2, { IN(2, 6), OPN(2, 4) }, { AI(axis, 1) } },
    { IR_OP_Split, 3, { IN(2, 6) }, { AI(axis, 1), AI(num_outputs, 3) } },
    { IR_OP_Slice, 1, { IN(4, 5), OPN(1, 0), OPN(3, 5), OPN(0, 1), OPN(1, 2) } },
    { IR_OP_Slice, 1, { IN(6), OPN(-1), OPN(-7), OPN(0), OPN(-2) } },
    { IR_OP_Gather, 1, { IN(4, 5), K(I64, V(0, 3, -1, 2), 2, 2) }, { AI(axis, 0) } },
    { IR_OP_GatherElements, 1, { IN(3, 4), K(I64, V(0, 3, 1, 1, 2, 0), 3, 2) }, { AI(axis, 1) } },
    { IR_OP_GatherND, 1, { IN(2, 3, 4), K(I64, V(1, 0), 2, 1) }, { AI(batch_dims, 0) } },
    { IR_OP_Shape, 1, { IN(2, 3, 4) }, { AI(start, 1), AI(end, 3) } },
    { IR_OP_Constant, 1, { { 0 } }, { AL(value_ints, 1, 2, 3) } },
    { IR_OP_ConstantOfShape, 1, { OPN(2, 3) } },
    { IR_OP_Pad, 1, { IN(3, 4), OPN(1, 0, 2, 1), K0(F32, 0.5) }, { AS(mode, "constant") } },
    { IR_OP_Pad, 1, { IN(3, 4), OPN(1, 2, 0, -1), ABSENT, OPN(0, 1) }, { AS(mode, "reflect") } },
    { IR_OP_Pad, 1, { IN(3, 4), OPN(2, 1, 1, 3) }, { AS(mode, "wrap") } },
    { IR_OP_Expand, 1, { IN(3, 1), OPN(2, 1, 4) } },
    { IR_OP_Tile, 1, { IN(2, 3), OPN(2, 1) } },
    { IR_OP_Range, 1, { OP0(1), OP0(10), OP0(3) } },
    { IR_OP_DepthToSpace, 1, { IN(1, 8, 2, 3) }, { AI(blocksize, 2) } },
    { IR_OP_SpaceToDepth, 1, { IN(1, 2, 4, 6) }, { AI(blocksize, 2) } },
    { IR_OP_Resize, 1, { IN(1, 2, 4, 5), ABSENT, ABSENT, OPN(1, 2, 7, 3) },
      { AS(mode, "linear"), AI(antialias, 0), AI(exclude_outside, 0) } },
    { IR_OP_Resize, 1, { IN(1, 2, 4, 5), ABSENT, ABSENT, OPN(3, 8) },
      { AS(mode, "cubic"), AL(axes, 2, 3), AI(antialias, 1), AI(exclude_outside, 1) } },
    /* scatter, indexing, sampling, signal */
    { IR_OP_ScatterElements, 1, { IN(3, 4), K(I64, V(1, 0, 2, 1, 2, 1, 0, 0, 0, 2, 1, 2), 3, 4), IN(3, 4) },
      { AI(axis, 0) } },
    { IR_OP_Scatter, 1, { IN(3, 4), K(I64, V(3, 0, 2, 1, 1, 2), 3, 2), IN(3, 2) }, { AI(axis, 1) } },
    { IR_OP_OneHot, 1, { INT(I64, -5, 4, 2, 3), OP0(5), K(F32, V(-1, 3), 2) }, { AI(axis, -1) } },
    { IR_OP_EyeLike, 1, { IN(4, 6) }, { AI(k, 1), AI(dtype, 1) } },
    { IR_OP_Compress, 1, { K(F32, V(1, 2, 3, 4, 5, 6), 3, 2), K(BOOL, V(1, 0, 1), 3) }, { AI(axis, 0) } },
    { IR_OP_Unique, 4, { K(F32, V(2, 1, 1, 3, 2, 1), 3, 2) }, { AI(axis, 0), AI(sorted, 1) } },
    { IR_OP_ReverseSequence, 1, { IN(4, 3, 2), K(I64, V(4, 1, 2), 3) }, { AI(batch_axis, 1), AI(time_axis, 0) } },
    { IR_OP_CenterCropPad, 1, { IN(5, 4, 3), OPN(3, 6) }, { AL(axes, 0, -1) } },
    { IR_OP_MaxUnpool, 1, { IN(1, 1, 2, 2), K(I64, V(0, 3, 9, 15), 1, 1, 2, 2) },
      { AL(kernel_shape, 2, 2), AL(strides, 2, 2), AL(pads, 0, 0, 0, 0) } },
    { IR_OP_Col2Im, 1, { IN(1, 4, 4), OPN(3, 3), OPN(2, 2) },
      { AL(dilations, 1, 1), AL(pads, 0, 0, 0, 0), AL(strides, 1, 1) } },
    { IR_OP_GridSample, 1, { IN(1, 1, 3, 3), INT(F32, -1, 1, 1, 2, 2, 2) }, { AI(align_corners, 0) } },
    { IR_OP_AffineGrid, 1, { IN(1, 2, 3), OPN(1, 1, 3, 4) }, { AI(align_corners, 0) } },
    WINDOW(HannWindow), WINDOW(HammingWindow), WINDOW(BlackmanWindow),
    { IR_OP_DFT, 1, { IN(2, 5, 1), OP0(5), OP0(1) }, { AI(inverse, 0), AI(onesided, 0) } },
    { IR_OP_STFT, 1, { IN(1, 8, 1), OP0(2), ABSENT, OP0(4) }, { AI(onesided, 1) } },
    { IR_OP_MelWeightMatrix, 1, { OP0(3), OP0(8), OP0(16000), K0(F32, 0), K0(F32, 8000) },
      { AI(output_datatype, 1) } },
    { IR_OP_TensorScatter, 1, { IN(2, 2, 6, 3), IN(2, 2, 2, 3), K(I64, V(0, 3), 2) }, { AI(axis, -2) } },
    /* attention, normalization, losses, linear algebra */
    { IR_OP_Attention, 1, { IN(2, 3, 8), IN(2, 4, 8), IN(2, 4, 10) },
      { AI(q_num_heads, 2), AI(kv_num_heads, 2), AI(is_causal, 0), AI(qk_matmul_output_mode, 0),
        AI(softmax_precision, 1) } },
    { IR_OP_RotaryEmbedding, 1, { IN(2, 3, 16), IN(2, 3, 3), IN(2, 3, 3) },
      { AI(num_heads, 2), AI(rotary_embedding_dim, 6), AI(interleaved, 0) } },
    { IR_OP_RMSNormalization, 1, { IN(2, 3, 4), IN(4) }, { AI(axis, -1), AI(stash_type, 1) } },
    { IR_OP_GroupNormalization, 1, { IN(2, 6, 3, 2), IN(6), IN(6) }, { AI(num_groups, 3), AI(stash_type, 1) } },
    { IR_OP_LRN, 1, { IN(1, 5, 3, 3) }, { AI(size, 3) } },
    { IR_OP_MeanVarianceNormalization, 1, { IN(2, 3, 4, 2) }, { AL(axes, 0, 2, 3) } },
    { IR_OP_NegativeLogLikelihoodLoss, 1, { IN(3, 4), K(I64, V(1, 0, 3), 3) },
      { AI(ignore_index, 0), AS(reduction, "mean") } },
    { IR_OP_SoftmaxCrossEntropyLoss, 1, { IN(3, 4), K(I64, V(1, 0, 3), 3) },
      { AI(ignore_index, 3), AS(reduction, "sum") } },
    { IR_OP_Trilu, 1, { IN(2, 4, 5), OP0(1) }, { AI(upper, 1) } },
    { IR_OP_CumSum, 1, { IN(3, 5), OP0(1) }, { AI(exclusive, 0), AI(reverse, 0) } },
    { IR_OP_TopK, 2, { IN(4, 6), OPN(3) }, { AI(axis, -1), AI(largest, 1), AI(sorted, 1) } },
    /* recurrent, quantized, detection */
    { IR_OP_RNN, 2, { IN(2, 1, 3), IN(1, 2, 3), IN(1, 2, 2) },
      { AI(hidden_size, 2), AI(layout, 0), AI(output_sequence, 0) } },
    { IR_OP_GRU, 2, { IN(2, 1, 3), IN(1, 6, 3), IN(1, 6, 2) },
      { AI(hidden_size, 2), AI(layout, 0), AI(output_sequence, 0), AI(linear_before_reset, 0) } },
    { IR_OP_LSTM, 3, { IN(2, 1, 3), IN(1, 8, 3), IN(1, 8, 2) },
      { AI(hidden_size, 2), AI(layout, 0), AI(output_sequence, 0), AI(input_forget, 0) } },
    { IR_OP_RoiAlign, 1, { IN(1, 2, 4, 4), K(F32, V(0, 0, 3, 3, 0.5, 1, 2.5, 3.5), 2, 4), K(I64, V(0, 0), 2) },
      { AI(output_height, 2), AI(output_width, 2), AI(sampling_ratio, 2) } },
    { IR_OP_DeformConv, 1, { IN(1, 2, 5, 5), IN(3, 2, 3, 3), INT(F32, -1, 1, 1, 18, 3, 3) },
      { AL(kernel_shape, 3, 3), AL(strides, 1, 1), AL(pads, 0, 0, 0, 0), AL(dilations, 1, 1), AI(group, 1),
        AI(offset_group, 1) } },
    { IR_OP_NonMaxSuppression, 1,
      { K(F32, V(0, 0, 1, 1, 0, 0.1, 1, 1.1, 0, 2, 1, 3), 1, 3, 4), K(F32, V(0.9, 0.8, 0.7), 1, 1, 3), OPN(2),
        K0(F32, 0.5), K0(F32, 0.1) },
      { AI(center_point_box, 0) } },
    { IR_OP_QuantizeLinear, 1,
      { INT(F32, -12, 12, 3, 4), K(F32, V(0.1, 0.2, 0.05, 0.3), 4), K(U8, V(0, 10, 128, 255), 4) },
      { AI(axis, 1), AI(block_size, 0), AI(output_dtype, 0), AI(precision, 0), AI(saturate, 1) } },
    { IR_OP_QuantizeLinear, 1, { INT(F32, -12, 12, 3, 4), K(F32, V(0.1, 0.2, 0.05, 0.3, 0.4, 0.5), 3, 2) },
      { AI(axis, 1), AI(block_size, 2), AI(output_dtype, 3) } },
    { IR_OP_DequantizeLinear, 1,
      { INT(U8, 0, 255, 3, 4), K(F32, V(0.1, 0.2, 0.05, 0.3), 4), K(U8, V(0, 10, 128, 255), 4) },
      { AI(axis, 1), AI(block_size, 0), AI(output_dtype, 0) } },
    { IR_OP_ConvInteger, 1,
      { INT(U8, 0, 255, 1, 2, 5, 5), INT(U8, 0, 255, 3, 2, 3, 3), K0(U8, 7), K(U8, V(11, 12, 13), 3) },
      { AL(kernel_shape, 3, 3), AL(strides, 2, 1), AL(pads, 1, 0, 1, 2), AL(dilations, 1, 1), AI(group, 1) } },
    { IR_OP_QLinearConv, 1,
      { INT(U8, 0, 255, 1, 4, 6, 6), K0(F32, 0.02), K0(U8, 128), INT(I8, -128, 127, 4, 2, 3, 3),
        K(F32, V(0.01, 0.02, 0.01, 0.03), 4), K(I8, V(0, 0, 0, 0), 4), K0(F32, 0.05), K0(U8, 100),
        K(I32, V(-300, 0, 300, 7), 4) },
      { AL(kernel_shape, 3, 3), AL(strides, 1, 1), AL(pads, 1, 1, 1, 1), AL(dilations, 1, 1), AI(group, 2) } },
};

/* Operators with integer attributes and no case, with the reason (none
 * now: the entry is a placeholder, C has no empty arrays). */
static const struct {
    IrOp op;
    const char *why;
} excluded[] = {
    { IR_OP_INVALID, "no operator" },
};

/* The values every integer is set to: the extremes above, and the largest
 * magnitude the limits accept. */
static const int64_t values[] = { 0, -1, (int64_t)1 << 31, -((int64_t)1 << 31), (int64_t)1 << 62,
                                  -((int64_t)1 << 62), IR_MAX_ATTR_INT, -IR_MAX_ATTR_INT };
#define N_VALUES ((int)(sizeof values / sizeof values[0]))

/* Outputs of an accepted variant larger than this are a shape the limits
 * let through (the cases' outputs are a few hundred bytes). */
#define MAX_ACCEPTED_BYTES ((size_t)1 << 20)

/* ------------------------------------------------------------ mutations */

/* One variant: attribute `key` (or shape operand `input`), element `elem`
 * (-1: every element) set to v. */
typedef struct Mut {
    IrAttrKey key;       /* IR_A_INVALID: an operand */
    IrAttrKind kind;
    int input;
    int elem;
    int64_t v;
} Mut;

static const Att *case_attr(const Case *c, IrAttrKey key)
{
    for (int i = 0; i < MAX_AT && c->at[i].key != IR_A_INVALID; i++)
        if (c->at[i].key == key)
            return &c->at[i];
    return NULL;
}

static int n_inputs(const Case *c)
{
    int n = 0;
    while (n < MAX_IN && c->in[n].dt != IR_DT_UNDEF)
        n++;
    return n;
}

static int64_t arg_numel(const Arg *a)
{
    int64_t n = 1;
    for (int i = 0; i < a->rank; i++)
        n *= a->dims[i];
    return n;
}

typedef struct MutList {
    const Case *c;
    Mut *m;
    int n, cap;
} MutList;

/* Element-wise and whole-list variants of a list of len values. */
static void add_list(MutList *l, IrAttrKey key, IrAttrKind kind, int input, int64_t len)
{
    for (int64_t e = len > 1 ? -1 : 0; e < len; e++)
        for (int k = 0; k < N_VALUES; k++) {
            assert_true(l->n < l->cap);
            l->m[l->n++] = (Mut){ key, kind, input, (int)e, values[k] };
        }
}

static void add_attr(void *ctx, IrAttrKey key, IrAttrKind kind)
{
    MutList *l = ctx;
    if (kind != IR_AK_INT && kind != IR_AK_INTS)
        return;
    const Att *a = case_attr(l->c, key);
    add_list(l, key, kind, -1, kind == IR_AK_INT ? 1 : a ? a->n : 1);
}

static int mutations(const Case *c, Mut *m, int cap)
{
    MutList l = { c, m, 0, cap };
    ir_op_attrs_foreach(c->op, add_attr, &l);
    for (int i = 0; i < n_inputs(c); i++)
        if (c->in[i].operand)
            add_list(&l, IR_A_INVALID, IR_AK_NONE, i, arg_numel(&c->in[i]));
    return l.n;
}

static void mut_str(const Case *c, const Mut *m, char *buf, size_t cap)
{
    char el[24] = "";
    if (!m) {
        snprintf(buf, cap, "%s (as given)", ir_op_name(c->op));
        return;
    }
    if (m->kind == IR_AK_INT)
        ;
    else if (m->elem >= 0)
        snprintf(el, sizeof el, "[%d]", m->elem);
    else
        snprintf(el, sizeof el, "[*]");
    if (m->key != IR_A_INVALID)
        snprintf(buf, cap, "%s %s%s = %lld", ir_op_name(c->op), ir_attr_name(m->key), el, (long long)m->v);
    else
        snprintf(buf, cap, "%s input %d%s = %lld", ir_op_name(c->op), m->input + 1, el, (long long)m->v);
}

/* ------------------------------------------------------------- values */

static uint64_t rng_next(uint64_t *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return *s >> 11;
}

static void fill(IrArray *a, double lo, double hi, uint64_t *seed)
{
    for (int64_t i = 0; i < ir_array_numel(a); i++) {
        double u = (double)rng_next(seed) / 9007199254740992.0;   /* [0, 1) */
        if (ir_dtype_is_float(a->dtype))
            ir_store_f64(a->dtype, a->data, i, lo + u * (hi - lo));
        else
            ir_store_i64(a->dtype, a->data, i, (int64_t)floor(lo + u * (hi - lo + 1)));
    }
}

/* ------------------------------------------------------------- graphs */

static int graph_input(const Arg *a) { return a->dt != ABSENT_DT && !a->v && !a->rnd; }

/* The graph inputs of a case (shared by its variants): the tensor each Arg
 * reads (a Relu's output for IN_RELU), -1 for constants and absent inputs. */
static void make_inputs(TG *t, const Case *c, int *x)
{
    for (int i = 0; i < n_inputs(c); i++) {
        const Arg *a = &c->in[i];
        char name[16];
        snprintf(name, sizeof name, "x%d", i);
        x[i] = graph_input(a) ? tg_input(t, name, a->dt, a->rank, a->dims) : -1;
        if (a->relu) {
            snprintf(name, sizeof name, "relu%d", i);
            x[i] = tg_node(t, IR_OP_Relu, name, 1, &x[i], 1);
        }
    }
}

/* Adds node `name` of case c with mutation m (NULL: none) reading the
 * shared graph inputs x; its outputs become graph outputs. */
static void add_variant(TG *t, const Case *c, const Mut *m, const char *name, const int *x)
{
    int n_in = n_inputs(c), in[MAX_IN];
    for (int i = 0; i < n_in; i++) {
        const Arg *a = &c->in[i];
        in[i] = x[i];
        if (a->dt == ABSENT_DT || graph_input(a))
            continue;
        char cn[48];
        snprintf(cn, sizeof cn, "%s_c%d", name, i);
        static const double zeros[4096];
        assert_true(arg_numel(a) <= 4096);
        in[i] = tg_const(t, cn, a->dt, a->rank, a->dims, a->v ? a->v : zeros);
        if (a->rnd) {                                 /* the same values for every variant */
            uint64_t seed = 777 + (uint64_t)i;
            fill(&t->g->tensors[in[i]].v, a->lo, a->hi, &seed);
        }
        if (m && m->key == IR_A_INVALID && m->input == i)
            for (int64_t e = 0; e < arg_numel(a); e++)
                if (m->elem < 0 || m->elem == e)
                    ir_store_i64(a->dt, t->g->tensors[in[i]].v.data, e, m->v);
    }
    tg_node(t, c->op, name, n_in, in, c->n_out);
    for (int i = 0; i < MAX_AT && c->at[i].key != IR_A_INVALID; i++) {
        const Att *a = &c->at[i];
        IrAttr at = { .key = a->key, .kind = a->kind, .n = a->n };
        if (a->kind == IR_AK_INT)
            at.v.i = a->i[0];
        else if (a->kind == IR_AK_INTS)
            at.v.ints = (int64_t *)a->i;
        else if (a->kind == IR_AK_FLOAT)
            at.v.f = a->f;
        else
            at.v.s = a->s;
        ir_set_attr(t->g, t->node, &at);
    }
    if (m && m->key != IR_A_INVALID) {
        const Att *a = case_attr(c, m->key);
        int64_t list[8] = { 0 };
        IrAttr at = { .key = m->key, .kind = m->kind, .n = m->kind == IR_AK_INTS ? (a ? a->n : 1) : 0 };
        if (a && m->kind == IR_AK_INTS)
            memcpy(list, a->i, sizeof list);
        for (int e = 0; e < at.n; e++)
            if (m->elem < 0 || m->elem == e)
                list[e] = m->v;
        if (m->kind == IR_AK_INT)
            at.v.i = m->v;
        else
            at.v.ints = list;
        ir_set_attr(t->g, t->node, &at);
    }
    for (int k = 0; k < c->n_out; k++)
        tg_output(t, t->g->nodes[t->node].out[k]);
}

/* Findings so far; each is printed when found, and the test fails at the
 * end (one run reports every variant that misbehaves). */
static int failures;

static void finding(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void finding(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    failures++;
}

/* Shape inference of one variant alone: 1 when refused (with a diagnostic
 * naming the node), 0 when accepted (with outputs of a sane size); -1 and a
 * finding otherwise. */
static int refused(const Case *c, const Mut *m, char *msg, size_t cap)
{
    TG t;
    tg_start(&t, "attrs");
    int x[MAX_IN];
    make_inputs(&t, c, x);
    add_variant(&t, c, m, "op", x);
    char what[160];
    mut_str(c, m, what, sizeof what);
    int rc = pass_infer(t.g, &t.d) ? 1 : 0;
    msg[0] = 0;
    if (rc) {
        util_diag_format(&t.d, msg, cap);
        if (getenv("DLCC_TEST_VERBOSE"))
            printf("  %s: %s\n", what, msg);
        if (!strstr(msg, "node 'op' (")) {
            finding("%s: the diagnostic does not name the node: %s", what, msg);
            rc = -1;
        }
    } else {
        const IrNode *n = &t.g->nodes[t.node];
        size_t bytes = 0;
        for (int k = 0; k < n->n_out; k++)
            bytes += ir_array_bytes(&t.g->tensors[n->out[k]].v);
        if (bytes > MAX_ACCEPTED_BYTES) {
            finding("%s: accepted with %zu bytes of outputs", what, bytes);
            rc = -1;
        }
    }
    ir_graph_free(t.g);
    return rc;
}

/* ---------------------------------------------------------------- runs */

static int close_enough(double ref, double got)
{
    if (isnan(ref) || isnan(got))
        return isnan(ref) && isnan(got);
    if (isinf(ref) || isinf(got))
        return ref == got;
    return fabs(ref - got) <= 1e-5 + 1e-4 * fabs(ref);
}

static int fail_d(char *err, size_t cap, const char *what, const UtilDiag *d)
{
    char m[1200];
    util_diag_format(d, m, sizeof m);
    snprintf(err, cap, "%s: %s", what, m);
    return -1;
}

/* Variants ms[0..n) (NULL: the case as given) in one graph, node k named
 * "vK": infer, interpret, the -O2 pipeline, then the host JIT for the CPU and
 * the emulated GPU, outputs compared.  0, or -1 with a message in err. */
static int run_variants(const Case *c, const Mut *ms, int n, char *err, size_t cap)
{
    TG t;
    tg_start(&t, "attrs");
    int x[MAX_IN];
    make_inputs(&t, c, x);
    for (int k = 0; k < n; k++) {
        char name[16];
        snprintf(name, sizeof name, "v%d", k);
        add_variant(&t, c, ms ? &ms[k] : NULL, name, x);
    }
    IrGraph *g = t.g;
    int rc = 0, ni = g->n_inputs, no = g->n_outputs;
    IrArray *in = calloc((size_t)ni + 1, sizeof *in), *ref = calloc((size_t)no + 1, sizeof *ref);
    IrArray *got = calloc((size_t)no + 1, sizeof *got);
    assert_true(in && ref && got);
    UtilDiag d;
    util_diag_init(&d);
    if (pass_infer(g, &d)) {
        rc = fail_d(err, cap, "infer", &d);
        goto done;
    }
    uint64_t seed = 12345;
    for (int i = 0, j = 0; i < n_inputs(c); i++) {
        if (!graph_input(&c->in[i]))
            continue;
        in[j] = g->tensors[g->inputs[j]].v;
        in[j].data = calloc(ir_array_bytes(&in[j]) + 1, 1);
        fill(&in[j], c->in[i].lo, c->in[i].hi, &seed);
        j++;
    }
    if (interp_run(g, in, ref, &d)) {
        rc = fail_d(err, cap, "the interpreter", &d);
        goto done;
    }
    PassOptions po = pass_options(2);
    if (pass_run_pipeline(g, &po, &d)) {
        rc = fail_d(err, cap, "the -O2 pipeline", &d);
        goto done;
    }
    for (int emulate = 0; emulate < 2 && !rc; emulate++) {
        const char *tgt = emulate ? "gpu-emulate" : "cpu";
        TgtOptions o = { .name = "attrs", .opt_level = 0, .gpu_emulate = emulate };
        TgtHostModel *hm = NULL;
        if (tgt_host_jit(g, &o, &hm, &d) || tgt_host_run(hm, in, got, &d)) {
            rc = fail_d(err, cap, tgt, &d);
            tgt_host_free(hm);
            break;
        }
        tgt_host_free(hm);
        for (int k = 0; k < no && !rc; k++) {
            const IrArray *r = &ref[k];
            for (int64_t i = 0; i < ir_array_numel(r) && !rc; i++) {
                int fl = ir_dtype_is_float(r->dtype);
                double a = fl ? ir_load_f64(r->dtype, r->data, i) : (double)ir_load_i64(r->dtype, r->data, i);
                double b = fl ? ir_load_f64(r->dtype, got[k].data, i) : (double)ir_load_i64(r->dtype, got[k].data, i);
                if (fl ? !close_enough(a, b) : a != b) {
                    snprintf(err, cap, "%s: output '%s' element %lld: interpreter %.9g, compiled %.9g", tgt,
                             g->tensors[g->outputs[k]].name, (long long)i, a, b);
                    rc = -1;
                }
            }
        }
        for (int k = 0; k < no; k++)
            interp_array_free(&got[k]);
    }
done:
    for (int k = 0; k < no; k++)
        interp_array_free(&ref[k]);
    for (int i = 0; i < ni; i++)
        free(in[i].data);
    free(in);
    free(ref);
    free(got);
    ir_graph_free(g);
    return rc;
}

static void check_case(const Case *c)
{
    enum { CAP = 4096 };
    Mut *all = calloc(CAP, sizeof *all), *ok = calloc(CAP, sizeof *ok);
    assert_true(all && ok);
    char err[1400], what[160];
    if (refused(c, NULL, err, sizeof err)) {
        finding("%s: the case as given is refused: %s", ir_op_name(c->op), err);
        goto done;
    }
    int n = mutations(c, all, CAP), n_ok = 0;
    for (int k = 0; k < n; k++)
        if (!refused(c, &all[k], err, sizeof err))
            ok[n_ok++] = all[k];
    if (getenv("DLCC_TEST_VERBOSE")) {
        printf("%s: %d variants, %d accepted\n", ir_op_name(c->op), n, n_ok);
        for (int k = 0; k < n_ok; k++) {
            mut_str(c, &ok[k], what, sizeof what);
            printf("  v%d: %s\n", k, what);
        }
        fflush(stdout);
    }
    if (run_variants(c, NULL, 1, err, sizeof err))
        finding("%s as given: %s", ir_op_name(c->op), err);
    else if (n_ok && run_variants(c, ok, n_ok, err, sizeof err)) {
        /* narrow it down to the variants that fail alone */
        int alone = 0;
        for (int k = 0; k < n_ok; k++)
            if (run_variants(c, &ok[k], 1, err, sizeof err)) {
                mut_str(c, &ok[k], what, sizeof what);
                finding("%s: %s", what, err);
                alone++;
            }
        if (!alone)
            finding("%s: the accepted variants together: %s", ir_op_name(c->op), err);
    }
done:
    free(all);
    free(ok);
}

/* ---------------------------------------------------------------- tests */

static void test_cases(void **state)
{
    (void)state;
    const char *only = getenv("DLCC_TEST_OP");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (!only || !strcmp(only, ir_op_name(cases[i].op)))
            check_case(&cases[i]);
    if (failures)
        fail_msg("%d findings (above)", failures);
}

static void has_int_attr(void *ctx, IrAttrKey key, IrAttrKind kind)
{
    (void)key;
    *(int *)ctx |= kind == IR_AK_INT || kind == IR_AK_INTS;
}

/* Every operator with an integer attribute has a case or a reason. */
static void test_coverage(void **state)
{
    (void)state;
    for (int op = 1; op < IR_OP_COUNT; op++) {
        int has = 0, covered = 0;
        ir_op_attrs_foreach((IrOp)op, has_int_attr, &has);
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
            covered |= cases[i].op == (IrOp)op;
        for (size_t i = 0; i < sizeof excluded / sizeof excluded[0]; i++)
            covered |= excluded[i].op == (IrOp)op;
        if (has && !covered)
            fail_msg("%s has integer attributes but no case in test_attrs.c (and no reason in `excluded`)",
                     ir_op_name((IrOp)op));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_coverage),
        cmocka_unit_test(test_cases),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
