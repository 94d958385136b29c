/* Shapes: the output-shape rule of each op, and shape inference over a converted net (given the
 * input's NCHW shape, the shape of every tensor of the model, checked op by op: channel counts,
 * reshape sizes, concat dims, broadcasting...). Shared by the GPU ops, the GPU planner and the
 * CPU reference. */
#ifndef PPOCR_NN_SHAPE_H
#define PPOCR_NN_SHAPE_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"

/* Most elements one tensor may have: the GPU path addresses elements with 32-bit offsets (and
 * 4-byte elements keep a tensor's byte size far from any overflow). */
#define PVK_SHAPE_MAX_NUMEL INT32_MAX

struct pvk_shape {
    int32_t ndim;
    int64_t d[PVK_MAX_DIMS];
};

int64_t pvk_shape_numel(const struct pvk_shape *s);
int pvk_shape_equal(const struct pvk_shape *a, const struct pvk_shape *b);
/* "[1, 3, 48, 320]" into buf (always terminated); returns buf. */
const char *pvk_shape_str(const struct pvk_shape *s, char *buf, size_t len);

/* ---- shape rules of single ops ----------------------------------------------------------------
 * Each returns 0, or -1 when the configuration is impossible (empty or negative output, mismatched
 * dims); they never print. */

struct pvk_conv_params {
    int kh, kw, sh, sw, dh, dw;
    int pad_t, pad_l, pad_b, pad_r;
    int group;
    enum pvk_act act; /* applied by the conv itself (ref_conv2d, the GPU conv2d); ignored by transposed convs */
    float act_alpha, act_beta;
    enum pvk_residual residual; /* how the conv adds its residual input (in[1]; NONE: there is none) */
};

/* From a CONV2D / CONV_TRANSPOSE2D record (attr.conv and the op's fused activation). */
void pvk_conv_params_from_op(const struct pvk_op *op, struct pvk_conv_params *p);

/* oh = (h + pad_t + pad_b - dh (kh - 1) - 1) / sh + 1, likewise ow. */
int pvk_conv2d_out_hw(int h, int w, const struct pvk_conv_params *p, int *oh, int *ow);

/* oh = (h - 1) sh - pad_t - pad_b + dh (kh - 1) + 1, likewise ow (no output padding). */
int pvk_conv_transpose2d_out_hw(int h, int w, const struct pvk_conv_params *p, int *oh, int *ow);

struct pvk_pool_params {
    enum pvk_pool_kind kind;
    int kh, kw, sh, sw;
    int pad_t, pad_l, pad_b, pad_r;
    int count_include_pad; /* AVG: divide by kh kw (1) or by the in-image taps (0) */
    int ceil_mode;
};

/* From a POOL2D record. */
void pvk_pool_params_from_op(const struct pvk_op *op, struct pvk_pool_params *p);

/* GLOBAL_AVG: 1 x 1. Otherwise oh = floor-or-ceil((h + pad_t + pad_b - kh) / sh) + 1; in ceil mode
 * a last window that would start in the bottom padding is dropped (as onnxruntime and PyTorch). */
int pvk_pool2d_out_hw(int h, int w, const struct pvk_pool_params *p, int *oh, int *ow);

/* oh = floor(h scale_h), ow = floor(w scale_w) (ONNX Resize with scales). */
int pvk_resize_out_hw(int h, int w, float scale_h, float scale_w, int *oh, int *ow);

/* All inputs have the same rank and equal dims except on `axis`, which adds up. */
int pvk_concat_out_shape(int n_in, const struct pvk_shape *in, int axis, struct pvk_shape *out);

/* out.d[i] = in.d[perm[i]]; perm is a permutation of 0..ndim-1 (ndim <= PVK_MAX_DIMS). */
int pvk_transpose_out_shape(const struct pvk_shape *in, const int32_t *perm, struct pvk_shape *out);

/* ONNX Reshape: spec[i] == 0 copies in.d[i], one spec[i] == -1 is inferred; element count kept.
 * The data does not move: a reshape is a copy. */
int pvk_reshape_out_shape(const struct pvk_shape *in, int ndim, const int32_t *spec, struct pvk_shape *out);

/* Python-style slice on one axis: negative start/end count from the end, then clamp to
 * [0, dim]; step >= 1. *first gets the normalised start index. */
int pvk_slice_out_shape(const struct pvk_shape *in, int axis, int64_t start, int64_t end, int64_t step,
                        struct pvk_shape *out, int64_t *first);

/* numpy broadcasting: shapes aligned at the last axis, each pair of dims equal or one of them 1. */
int pvk_broadcast_shape(const struct pvk_shape *a, const struct pvk_shape *b, struct pvk_shape *out);

/* a [.., M, K] times b [.., K, N] (trans_b: b [.., N, K]) -> [.., M, N]; batch dims broadcast
 * numpy-style (a constant B is simply b with rank 2). Both ranks >= 2. */
int pvk_matmul_out_shape(const struct pvk_shape *a, const struct pvk_shape *b, int trans_b, struct pvk_shape *out);

/* ---- shape inference over a net ------------------------------------------------------------- */

/* Fills shapes[0 .. model->n_tensors-1]: constants from the file, activations by running the
 * shape rules above over the op list from `input_nchw` (N, C, H, W).
 * A tensor no op produces (and that is not the input) keeps ndim 0. Every activation it fills has
 * dims >= 1 and at most PVK_SHAPE_MAX_NUMEL elements, however large the input or hostile the
 * model (whose attributes are in the ranges src/model/model.c checks on loading).
 * Returns 0, or -1 with a one-line reason naming the op (index, ONNX name, type) in err. */
int pvk_infer_shapes(const struct pvk_model *model, const int64_t input_nchw[4], struct pvk_shape *shapes, char *err,
                     size_t err_len);

#endif
