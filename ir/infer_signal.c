/* ir/infer_signal.c — shape and dtype rules of the signal operators: the Hann / Hamming / Blackman windows, DFT,
 * STFT and MelWeightMatrix
 * (ONNX opset 21 semantics; ir/infer_impl.h). */
#include "ir/infer_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ir_infer_window(IrGraph *g, IrNode *n, UtilDiag *d)
{
    int64_t size;
    if (ir_infer_const_scalar(g, n, 0, "size", &size, d))
        return -1;
    if (!ir_dtype_is_int(ir_in(g, n, 0)->v.dtype))
        return ir_node_error(g, n, d, "size must be an integer");
    if (size < 0 || size > IR_MAX_ELEMENTS)
        return ir_node_error(g, n, d, "size %lld is out of range", (long long)size);
    IrDType t = ir_infer_onnx_dtype_attr(g, n, IR_A_output_datatype, IR_DT_F32, d);
    if (t == IR_DT_UNDEF)
        return -1;
    if (t == IR_DT_BOOL)
        return ir_node_error(g, n, d, "output_datatype bool is not a numeric type");
    IrShape o = { .rank = 1, .dims = { size } };
    ir_infer_set(g, n, 0, t, &o);
    return 0;
}

int ir_dft_params(const IrGraph *g, const IrNode *n, const IrArray *x, const IrArray *len, const IrArray *axis_in,
                  int *axis, int64_t *length, UtilDiag *d)
{
    int r = x->shape.rank;
    if (r < 2 || (x->shape.dims[r - 1] != 1 && x->shape.dims[r - 1] != 2))
        return ir_node_error(g, n, d, "input must have rank >= 2 with a last dimension of 1 (real) or 2 (complex)");
    int64_t a;
    if (axis_in && ir_array_numel(axis_in) > 0) {
        if (!axis_in->data)
            return ir_node_error(g, n, d, "the axis input must be known at compile time");
        a = ir_load_i64(axis_in->dtype, axis_in->data, 0);
    } else {
        /* DFT-17's axis attribute (default 1) is moved to input 3 by fe_upgrade */
        a = ir_has_attr(n, IR_A_axis) ? ir_attr_int(n, IR_A_axis) : -2;
    }
    int64_t na = a < 0 ? a + r : a;
    if (na < 0 || na >= r - 1)
        return ir_node_error(g, n, d, "axis %lld must name a signal axis (not the last, real/imaginary one) of "
                             "rank %d", (long long)a, r);
    *axis = (int)na;
    *length = x->shape.dims[*axis];
    if (len && ir_array_numel(len) > 0) {
        if (!len->data)
            return ir_node_error(g, n, d, "the dft_length input must be known at compile time");
        *length = ir_load_i64(len->dtype, len->data, 0);
        if (*length < 1 || *length > IR_MAX_DFT_LENGTH)
            return ir_node_error(g, n, d, "dft_length %lld must be in 1..%lld", (long long)*length,
                                 (long long)IR_MAX_DFT_LENGTH);
    }
    return 0;
}

int ir_infer_dft(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = ir_in(g, n, 0), *l = ir_infer_present(n, 1) ? ir_in(g, n, 1) : NULL;
    const IrTensor *ax = ir_infer_present(n, 2) ? ir_in(g, n, 2) : NULL;
    if (ir_infer_need_float(g, n, 0, d))
        return -1;
    if ((l && (!ir_dtype_is_int(l->v.dtype) || ir_shape_numel(&l->v.shape) > 1)) ||
        (ax && (!ir_dtype_is_int(ax->v.dtype) || ir_shape_numel(&ax->v.shape) > 1)))
        return ir_node_error(g, n, d, "dft_length and axis must be integer scalars");
    const IrTensor *operands[2] = { l, ax };
    static const char *const what[2] = { "dft_length", "axis" };
    for (int i = 0; i < 2; i++)
        if (operands[i] && !operands[i]->v.data && ir_shape_numel(&operands[i]->v.shape) > 0) {
            g->need_value = n->in[1 + i];
            return ir_node_error(g, n, d, "the %s input '%s' must be a constant or computable at compile time "
                                 "(dlcc compiles static shapes)", what[i], operands[i]->name);
        }
    int axis;
    int64_t len;
    if (ir_dft_params(g, n, &x->v, l ? &l->v : NULL, ax ? &ax->v : NULL, &axis, &len, d))
        return -1;
    if (ir_attr_int(n, IR_A_onesided) && x->v.shape.dims[x->v.shape.rank - 1] == 2)
        return ir_node_error(g, n, d, "onesided=1 needs a real input (last dimension 1); a complex input has no "
                             "one-sided spectrum");
    IrShape o = x->v.shape;
    o.dims[axis] = ir_attr_int(n, IR_A_onesided) ? len / 2 + 1 : len;
    o.dims[o.rank - 1] = 2;
    ir_infer_set(g, n, 0, x->v.dtype, &o);
    return 0;
}

int ir_stft_params(const IrGraph *g, const IrNode *n, const IrShape *x, int64_t step, const IrShape *win,
                   const int64_t *frame_len, IrShape *out, UtilDiag *d)
{
    if (x->rank != 3 || (x->dims[2] != 1 && x->dims[2] != 2))
        return ir_node_error(g, n, d, "signal must be [batch, length, 1 or 2]");
    if (step < 1)
        return ir_node_error(g, n, d, "frame_step %lld must be positive", (long long)step);
    if (win && win->rank != 1)
        return ir_node_error(g, n, d, "window must be 1-D");
    int64_t fl = frame_len ? *frame_len : win ? win->dims[0] : x->dims[1];
    if (fl < 1 || fl > x->dims[1])
        return ir_node_error(g, n, d, "frame_length %lld must be in 1..%lld (the signal length)", (long long)fl,
                             (long long)x->dims[1]);
    if (fl > IR_MAX_DFT_LENGTH)
        return ir_node_error(g, n, d, "frame_length %lld exceeds %lld", (long long)fl, (long long)IR_MAX_DFT_LENGTH);
    if (win && win->dims[0] != fl)
        return ir_node_error(g, n, d, "window length %lld differs from frame_length %lld", (long long)win->dims[0],
                             (long long)fl);
    int onesided = ir_attr_int(n, IR_A_onesided) != 0;
    if (onesided && x->dims[2] == 2)
        return ir_node_error(g, n, d, "onesided=1 needs a real signal (last dimension 1)");
    *out = (IrShape){ .rank = 4, .dims = { x->dims[0], 1 + (x->dims[1] - fl) / step,
                                            onesided ? fl / 2 + 1 : fl, 2 } };
    return 0;
}

int ir_infer_stft(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = ir_in(g, n, 0), *w = ir_infer_present(n, 2) ? ir_in(g, n, 2) : NULL;
    int64_t step, fl;
    int has_fl = ir_infer_present(n, 3);
    if (ir_infer_need_float(g, n, 0, d) || ir_infer_const_scalar(g, n, 1, "frame_step", &step, d) ||
        (has_fl && ir_infer_const_scalar(g, n, 3, "frame_length", &fl, d)))
        return -1;
    if (w && ir_infer_same_dtype(g, n, 0, 2, d))
        return -1;
    IrShape o;
    if (ir_stft_params(g, n, &x->v.shape, step, w ? &w->v.shape : NULL, has_fl ? &fl : NULL, &o, d))
        return -1;
    ir_infer_set(g, n, 0, x->v.dtype, &o);
    return 0;
}

int ir_infer_melweightmatrix(IrGraph *g, IrNode *n, UtilDiag *d)
{
    int64_t bins, len;
    if (ir_infer_const_scalar(g, n, 0, "num_mel_bins", &bins, d) || ir_infer_const_scalar(g, n, 1, "dft_length", &len, d))
        return -1;
    for (int i = 0; i < 3; i++)
        if (!ir_dtype_is_int(ir_in(g, n, i)->v.dtype))
            return ir_node_error(g, n, d, "num_mel_bins, dft_length and sample_rate must be integers");
    for (int i = 3; i < 5; i++)
        if (ir_shape_numel(&ir_in(g, n, i)->v.shape) != 1 || !ir_dtype_is_float(ir_in(g, n, i)->v.dtype))
            return ir_node_error(g, n, d, "lower_edge_hertz and upper_edge_hertz must be float scalars");
    if (bins < 1 || len < 1)
        return ir_node_error(g, n, d, "num_mel_bins (%lld) and dft_length (%lld) must be positive",
                             (long long)bins, (long long)len);
    IrDType t = ir_infer_onnx_dtype_attr(g, n, IR_A_output_datatype, IR_DT_F32, d);
    if (t == IR_DT_UNDEF)
        return -1;
    IrShape o = { .rank = 2, .dims = { len / 2 + 1, bins } };
    ir_infer_set(g, n, 0, t, &o);
    return 0;
}
