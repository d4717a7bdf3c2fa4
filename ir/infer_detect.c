/* ir/infer_detect.c — shape and dtype rules of the detection operators: RoiAlign, DeformConv and
 * NonMaxSuppression
 * (ONNX opset 21 semantics; ir/infer_impl.h). */
#include "ir/infer_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------- detection */

int ir_infer_roialign(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = ir_in(g, n, 0), *rois = ir_in(g, n, 1), *bi = ir_in(g, n, 2);
    char s[160];
    if (ir_infer_expect_float(g, n, x, "input X", d) || ir_infer_expect_dtype(g, n, rois, "rois", x->v.dtype, d) ||
        ir_infer_expect_dtype(g, n, bi, "batch_indices", IR_DT_I64, d))
        return -1;
    if (x->v.shape.rank != 4)
        return ir_node_error(g, n, d, "input X %s must have rank 4 (N, C, H, W)", ir_infer_shape_s(&x->v.shape, s, sizeof s));
    if (rois->v.shape.rank != 2 || rois->v.shape.dims[1] != 4)
        return ir_node_error(g, n, d, "rois %s must have shape [num_rois, 4]", ir_infer_shape_s(&rois->v.shape, s, sizeof s));
    int64_t nr = rois->v.shape.dims[0];
    IrShape bw = { .rank = 1, .dims = { nr } };
    if (ir_infer_expect_shape(g, n, bi, "batch_indices", &bw, d))
        return -1;
    for (int64_t i = 0; bi->v.data && i < nr; i++) {
        int64_t v = ir_load_i64(bi->v.dtype, bi->v.data, i);
        if (v < 0 || v >= x->v.shape.dims[0])
            return ir_node_error(g, n, d, "batch_indices[%lld] = %lld is outside [0, %lld)", (long long)i,
                                 (long long)v, (long long)x->v.shape.dims[0]);
    }
    int64_t oh = ir_attr_int(n, IR_A_output_height), ow = ir_attr_int(n, IR_A_output_width);
    if (oh <= 0 || ow <= 0)
        return ir_node_error(g, n, d, "output_height and output_width must be positive, got %lld and %lld",
                             (long long)oh, (long long)ow);
    int64_t sr = ir_attr_int(n, IR_A_sampling_ratio);
    if (sr < 0)
        return ir_node_error(g, n, d, "sampling_ratio must be non-negative, got %lld", (long long)sr);
    if (sr > IR_ROIALIGN_MAX_SIDE)
        return ir_node_error(g, n, d, "sampling_ratio %lld exceeds %d samples per bin side (docs/limits.md)",
                             (long long)sr, IR_ROIALIGN_MAX_SIDE);
    const char *mode = ir_attr_str(n, IR_A_mode), *ctm = ir_attr_str(n, IR_A_coordinate_transformation_mode);
    if (strcmp(mode, "avg") && strcmp(mode, "max"))
        return ir_node_error(g, n, d, "unknown mode '%s' (expected avg or max)", mode);
    if (strcmp(ctm, "half_pixel") && strcmp(ctm, "output_half_pixel"))
        return ir_node_error(g, n, d, "unknown coordinate_transformation_mode '%s' (expected half_pixel or "
                             "output_half_pixel)", ctm);
    IrShape y = { .rank = 4, .dims = { nr, x->v.shape.dims[1], oh, ow } };
    ir_infer_set(g, n, 0, x->v.dtype, &y);
    return 0;
}

int ir_infer_deformconv(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *x = ir_in(g, n, 0), *w = ir_in(g, n, 1), *off = ir_in(g, n, 2), *b = ir_in(g, n, 3);
    const IrTensor *mask = ir_in(g, n, 4);
    IrWindow win;
    if (ir_infer_expect_float(g, n, x, "input X", d) || ir_infer_expect_dtype(g, n, w, "weight W", x->v.dtype, d) ||
        ir_infer_expect_dtype(g, n, off, "offset", x->v.dtype, d) || ir_window(g, n, &x->v.shape, &w->v.shape, &win, d))
        return -1;
    int64_t og = ir_attr_int(n, IR_A_offset_group), taps = 1;
    if (og <= 0 || win.channels_in % og)
        return ir_node_error(g, n, d, "offset_group %lld must be positive and divide the %lld input channels",
                             (long long)og, (long long)win.channels_in);
    for (int i = 0; i < win.rank; i++)
        taps *= win.kernel[i];
    IrShape want;
    ir_infer_window_shape(&win, &want);
    int64_t ogt;
    if (util_mul_overflow_i64(og, taps, &ogt) || util_mul_overflow_i64(ogt, win.rank, &want.dims[1]))
        return ir_node_error(g, n, d, "offset channel count overflows");
    if (ir_infer_expect_shape(g, n, off, "offset", &want, d))
        return -1;
    if (b) {
        IrShape bw = { .rank = 1, .dims = { win.channels_out } };
        if (ir_infer_expect_dtype(g, n, b, "bias B", x->v.dtype, d) || ir_infer_expect_shape(g, n, b, "bias B", &bw, d))
            return -1;
    }
    if (mask) {
        want.dims[1] = ogt;
        if (ir_infer_expect_dtype(g, n, mask, "mask", x->v.dtype, d) || ir_infer_expect_shape(g, n, mask, "mask", &want, d))
            return -1;
    }
    IrShape y;
    ir_infer_window_shape(&win, &y);
    ir_infer_set(g, n, 0, x->v.dtype, &y);
    return 0;
}

typedef struct NmsCand {
    float score;
    int64_t box;
} NmsCand;

static int nms_cmp(const void *pa, const void *pb)
{
    const NmsCand *a = pa, *b = pb;
    int na = a->score != a->score, nb = b->score != b->score;      /* NaN scores sort last */
    if (na != nb)
        return na - nb;
    if (!na && a->score != b->score)
        return a->score > b->score ? -1 : 1;            /* higher score first */
    return a->box < b->box ? -1 : a->box > b->box;      /* then lower index */
}

/* Corners (y1, x1, y2, x2 with y1 <= y2, x1 <= x2) of box k of batch bt. */
static void nms_box(const IrArray *boxes, int64_t base, int center, float c[4])
{
    float v[4];
    for (int i = 0; i < 4; i++)
        v[i] = (float)ir_load_f64(boxes->dtype, boxes->data, base + i);
    if (center) {                                       /* [x_center, y_center, width, height] */
        c[0] = v[1] - v[3] / 2;
        c[2] = v[1] + v[3] / 2;
        c[1] = v[0] - v[2] / 2;
        c[3] = v[0] + v[2] / 2;
    } else {                                            /* [y1, x1, y2, x2], any diagonal */
        c[0] = v[0] < v[2] ? v[0] : v[2];
        c[2] = v[0] < v[2] ? v[2] : v[0];
        c[1] = v[1] < v[3] ? v[1] : v[3];
        c[3] = v[1] < v[3] ? v[3] : v[1];
    }
}

/* IoU(a, b) > threshold, computed in float like onnxruntime. */
static int nms_suppresses(const float a[4], const float b[4], float thr)
{
    float iy1 = a[0] > b[0] ? a[0] : b[0], iy2 = a[2] < b[2] ? a[2] : b[2];
    float ix1 = a[1] > b[1] ? a[1] : b[1], ix2 = a[3] < b[3] ? a[3] : b[3];
    if (ix2 <= ix1 || iy2 <= iy1)
        return 0;
    float inter = (ix2 - ix1) * (iy2 - iy1);
    float area_a = (a[2] - a[0]) * (a[3] - a[1]), area_b = (b[2] - b[0]) * (b[3] - b[1]);
    float uni = area_a + area_b - inter;
    if (inter <= 0 || area_a <= 0 || area_b <= 0 || uni <= 0)
        return 0;
    return inter / uni > thr;
}

int64_t ir_nms(const IrArray *boxes, const IrArray *scores, int64_t max_per_class, double iou_threshold,
               const double *score_threshold, int center_point_box, int64_t *sel)
{
    int64_t nb = boxes->shape.dims[0], nbox = boxes->shape.dims[1], nc = scores->shape.dims[1], count = 0;
    if (max_per_class <= 0 || nbox == 0)
        return 0;
    NmsCand *cand = malloc((size_t)nbox * sizeof *cand);
    float(*corner)[4] = malloc((size_t)nbox * sizeof *corner);
    int64_t *kept = malloc((size_t)nbox * sizeof *kept);
    if (!cand || !corner || !kept) {
        free(cand);
        free(corner);
        free(kept);
        return -1;
    }
    float thr = (float)iou_threshold;
    for (int64_t bt = 0; bt < nb; bt++) {
        for (int64_t k = 0; k < nbox; k++)
            nms_box(boxes, (bt * nbox + k) * 4, center_point_box, corner[k]);
        for (int64_t c = 0; c < nc; c++) {
            int64_t ncand = 0, nk = 0;
            for (int64_t k = 0; k < nbox; k++) {
                float s = (float)ir_load_f64(scores->dtype, scores->data, (bt * nc + c) * nbox + k);
                if (!score_threshold || s > (float)*score_threshold)
                    cand[ncand++] = (NmsCand){ s, k };
            }
            qsort(cand, (size_t)ncand, sizeof *cand, nms_cmp);
            for (int64_t i = 0; i < ncand && nk < max_per_class; i++) {
                int keep = 1;
                for (int64_t j = 0; j < nk && keep; j++)
                    keep = !nms_suppresses(corner[kept[j]], corner[cand[i].box], thr);
                if (!keep)
                    continue;
                kept[nk++] = cand[i].box;
                if (sel) {
                    sel[count * 3] = bt;
                    sel[count * 3 + 1] = c;
                    sel[count * 3 + 2] = cand[i].box;
                }
                count++;
            }
        }
    }
    free(cand);
    free(corner);
    free(kept);
    return count;
}

int ir_infer_nms(IrGraph *g, IrNode *n, UtilDiag *d)
{
    const IrTensor *boxes = ir_in(g, n, 0), *scores = ir_in(g, n, 1);
    char s[160], t[160];
    if (ir_infer_expect_float(g, n, boxes, "boxes", d) || ir_infer_expect_float(g, n, scores, "scores", d))
        return -1;
    const IrShape *bs = &boxes->v.shape, *ss = &scores->v.shape;
    if (bs->rank != 3 || bs->dims[2] != 4)
        return ir_node_error(g, n, d, "boxes %s must have shape [batches, boxes, 4]", ir_infer_shape_s(bs, s, sizeof s));
    if (ss->rank != 3 || ss->dims[0] != bs->dims[0] || ss->dims[2] != bs->dims[1])
        return ir_node_error(g, n, d, "scores %s must have shape [batches, classes, boxes] matching boxes %s",
                             ir_infer_shape_s(ss, s, sizeof s), ir_infer_shape_s(bs, t, sizeof t));
    int64_t cpb = ir_attr_int(n, IR_A_center_point_box);
    if (cpb != 0 && cpb != 1)
        return ir_node_error(g, n, d, "center_point_box must be 0 or 1, got %lld", (long long)cpb);
    static const char *const what[] = { NULL, NULL, "max_output_boxes_per_class", "iou_threshold", "score_threshold" };
    double v[5] = { 0 };
    int have[5] = { 0 };
    for (int i = 2; i < n->n_in; i++) {
        const IrTensor *p = ir_in(g, n, i);
        if (!p)
            continue;
        if (i == 2 ? ir_infer_expect_dtype(g, n, p, what[i], IR_DT_I64, d) : ir_infer_expect_float(g, n, p, what[i], d))
            return -1;
        int64_t cnt = ir_shape_numel(&p->v.shape);
        if (cnt > 1)
            return ir_node_error(g, n, d, "%s '%s' must have one element", what[i], p->name);
        if (cnt == 1 && p->v.data) {
            have[i] = 1;
            v[i] = i == 2 ? (double)ir_load_i64(p->v.dtype, p->v.data, 0) : ir_load_f64(p->v.dtype, p->v.data, 0);
        }
    }
    for (int i = 0; i < n->n_in; i++) {
        const IrTensor *p = ir_in(g, n, i);
        if (p && !p->v.data && ir_shape_numel(&p->v.shape) > 0) {
            g->need_value = n->in[i];
            return ir_node_error(g, n, d, "data-dependent output shape is not supported by a static compiler: the "
                                 "number of selected boxes depends on the input values: '%s' must be a constant or "
                                 "computable at compile time", p->name);
        }
    }
    if (have[3] && (v[3] < 0 || v[3] > 1))
        return ir_node_error(g, n, d, "iou_threshold must be in [0, 1], got %g", v[3]);
    int64_t maxc = have[2] ? ir_load_i64(IR_DT_I64, ir_in(g, n, 2)->v.data, 0) : 0;
    int64_t cnt = ir_nms(&boxes->v, &scores->v, maxc, v[3], have[4] ? &v[4] : NULL, (int)cpb, NULL);
    if (cnt < 0)
        return ir_node_error(g, n, d, "out of memory");
    IrShape y = { .rank = 2, .dims = { cnt, 3 } };
    ir_infer_set(g, n, 0, IR_DT_I64, &y);
    return 0;
}
