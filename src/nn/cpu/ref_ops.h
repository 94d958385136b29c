/* Plain fp32 reference implementations of the ops of src/model/ops.h: the ground truth for the
 * CPU executor and for the GPU op tests. Each op takes explicit shapes (no model structs), writes a
 * separate output buffer (never in place unless stated), and comes with its output shape rule.
 * Tensors are dense and row-major; 4-D activations are NCHW.
 *
 * Activations: only ref_conv2d applies the op's fused activation itself (because the residual may
 * be added before or after it); for every other op the caller applies ref_act to the result.
 * Shape rules return 0, or -1 when the configuration is impossible (empty or negative output,
 * mismatched dims); they never print. Call the rule first: an op given a configuration its rule
 * rejects writes nothing. */
#ifndef PPOCR_NN_CPU_REF_OPS_H
#define PPOCR_NN_CPU_REF_OPS_H

#include <stddef.h>
#include <stdint.h>

#include "model/ops.h"
#include "nn/shape.h"

/* ---- activations ------------------------------------------------------------------------- */

/* One element of enum pvk_act (alpha, beta: CLIP's min/max, HARDSIGMOID's slope/offset). */
float ref_act_scalar(enum pvk_act act, float alpha, float beta, float x);
/* In place over n elements. */
void ref_act(enum pvk_act act, float alpha, float beta, float *x, size_t n);

/* ---- convolution --------------------------------------------------------------------------- */

struct ref_conv_params {
    int kh, kw, sh, sw, dh, dw;
    int pad_t, pad_l, pad_b, pad_r;
    int group;
    enum pvk_act act; /* applied by ref_conv2d; ignored by ref_conv_transpose2d */
    float act_alpha, act_beta;
    enum pvk_residual residual; /* how ref_conv2d adds `residual` (NONE: it must be NULL) */
};

/* From a CONV2D / CONV_TRANSPOSE2D record (attr.conv and the op's fused activation). */
void ref_conv_params_from_op(const struct pvk_op *op, struct ref_conv_params *p);

/* oh = (h + pad_t + pad_b - dh (kh - 1) - 1) / sh + 1, likewise ow. */
int ref_conv2d_out_hw(int h, int w, const struct ref_conv_params *p, int *oh, int *ow);
/* x [n][c][h][w], weight [oc][c/group][kh][kw], bias [oc] or NULL, residual [n][oc][oh][ow] or
 * NULL -> y [n][oc][oh][ow]. Zero padding.
 * residual AFTER_ACT: y = act(conv) + r; BEFORE_ACT: y = act(conv + r). */
void ref_conv2d(const float *x, int n, int c, int h, int w, const float *weight, const float *bias, int oc,
                const struct ref_conv_params *p, const float *residual, float *y);

/* oh = (h - 1) sh - pad_t - pad_b + dh (kh - 1) + 1, likewise ow (no output padding). */
int ref_conv_transpose2d_out_hw(int h, int w, const struct ref_conv_params *p, int *oh, int *ow);
/* x [n][c][h][w], weight [c][oc/group][kh][kw] (ONNX ConvTranspose layout), bias [oc] or NULL
 * -> y [n][oc][oh][ow]: input pixel (iy, ix) scatters to (iy sh - pad_t + ky dh, ix sw - pad_l + kx dw). */
void ref_conv_transpose2d(const float *x, int n, int c, int h, int w, const float *weight, const float *bias, int oc,
                          const struct ref_conv_params *p, float *y);

/* ---- pooling ------------------------------------------------------------------------------- */

struct ref_pool_params {
    enum pvk_pool_kind kind;
    int kh, kw, sh, sw;
    int pad_t, pad_l, pad_b, pad_r;
    int count_include_pad; /* AVG: divide by kh kw (1) or by the in-image taps (0) */
    int ceil_mode;
};

/* From a POOL2D record. */
void ref_pool_params_from_op(const struct pvk_op *op, struct ref_pool_params *p);

/* GLOBAL_AVG: 1 x 1. Otherwise oh = floor-or-ceil((h + pad_t + pad_b - kh) / sh) + 1; in ceil mode
 * a last window that would start in the bottom padding is dropped (as onnxruntime and PyTorch). */
int ref_pool2d_out_hw(int h, int w, const struct ref_pool_params *p, int *oh, int *ow);
/* x [n][c][h][w] -> y [n][c][oh][ow]. MAX ignores padding; AVG windows are clipped to the padded
 * extent (h + pad_b) before counting when count_include_pad. */
void ref_pool2d(const float *x, int n, int c, int h, int w, const struct ref_pool_params *p, float *y);

/* ---- resize -------------------------------------------------------------------------------- */

/* oh = floor(h scale_h), ow = floor(w scale_w) (ONNX Resize with scales). */
int ref_resize_out_hw(int h, int w, float scale_h, float scale_w, int *oh, int *ow);
/* x [n][c][h][w] -> y [n][c][oh][ow]. Source coordinate of output index o:
 *   NEAREST (asymmetric, floor): floor(o / scale), clamped to the last row/column;
 *   BILINEAR_HALF_PIXEL: (o + 0.5) / scale - 0.5, clamped to [0, in - 1];
 *   BILINEAR_ALIGN_CORNERS: o (in - 1) / (out - 1) (0 when out == 1). */
void ref_resize(const float *x, int n, int c, int h, int w, enum pvk_resize_mode mode, float scale_h, float scale_w,
                int oh, int ow, float *y);

/* ---- layout ops ---------------------------------------------------------------------------- */

/* All inputs have the same rank and equal dims except on `axis`, which adds up. */
int ref_concat_out_shape(int n_in, const struct pvk_shape *in, int axis, struct pvk_shape *out);
void ref_concat(int n_in, const float *const *x, const struct pvk_shape *in, int axis, float *y);

/* out.d[i] = in.d[perm[i]]; perm is a permutation of 0..ndim-1 (ndim <= PVK_MAX_DIMS). */
int ref_transpose_out_shape(const struct pvk_shape *in, const int32_t *perm, struct pvk_shape *out);
void ref_transpose(const float *x, const struct pvk_shape *in, const int32_t *perm, float *y);

/* ONNX Reshape: spec[i] == 0 copies in.d[i], one spec[i] == -1 is inferred; element count kept.
 * The data does not move: a reshape is a copy. */
int ref_reshape_out_shape(const struct pvk_shape *in, int ndim, const int32_t *spec, struct pvk_shape *out);

/* Python-style slice on one axis: negative start/end count from the end, then clamp to
 * [0, dim]; step >= 1. *first gets the normalised start index. */
int ref_slice_out_shape(const struct pvk_shape *in, int axis, int64_t start, int64_t end, int64_t step,
                        struct pvk_shape *out, int64_t *first);
/* y takes in.d[axis] indices first, first + step, ... (out.d[axis] of them). */
void ref_slice(const float *x, const struct pvk_shape *in, int axis, int64_t first, int64_t step,
               const struct pvk_shape *out, float *y);

/* ---- elementwise --------------------------------------------------------------------------- */

/* numpy broadcasting: shapes aligned at the last axis, each pair of dims equal or one of them 1. */
int ref_broadcast_shape(const struct pvk_shape *a, const struct pvk_shape *b, struct pvk_shape *out);
/* y = a (op) b with broadcasting; `out` from ref_broadcast_shape. */
void ref_binary(enum pvk_binary_kind kind, const float *a, const struct pvk_shape *as, const float *b,
                const struct pvk_shape *bs, const struct pvk_shape *out, float *y);

/* y[o][c][i] = x[o][c][i] scale[c] + shift[c] for x viewed as [outer][c][inner] (axis 1 of NCHW:
 * outer = N, inner = H W). */
void ref_affine(const float *x, int64_t outer, int64_t c, int64_t inner, const float *scale, const float *shift,
                float *y);

/* Squeeze-and-excitation on x [n][c][h][w] with cr reduced channels:
 *   s = mean_hw(x); z = relu(w1 s + b1) (w1 [cr][c]); g = gate(w2 z + b2) (w2 [c][cr]);
 *   y = x g (+ x when residual). gate = ref_act_scalar(gate_act, gate_alpha, gate_beta, .).
 * b1, b2 may be NULL. Returns 0, or -1 when its small scratch cannot be allocated. */
int ref_se(const float *x, int n, int c, int h, int w, int cr, const float *w1, const float *b1, const float *w2,
           const float *b2, enum pvk_act gate_act, float gate_alpha, float gate_beta, int residual, float *y);

/* ---- matrix ops ---------------------------------------------------------------------------- */

/* a [.., M, K] times b [.., K, N] (trans_b: b [.., N, K]) -> [.., M, N]; batch dims broadcast
 * numpy-style (a constant B is simply b with rank 2). Both ranks >= 2. */
int ref_matmul_out_shape(const struct pvk_shape *a, const struct pvk_shape *b, int trans_b, struct pvk_shape *out);
/* bias [N] or NULL is added to every row. */
void ref_matmul(const float *a, const struct pvk_shape *as, const float *b, const struct pvk_shape *bs, int trans_b,
                const float *bias, const struct pvk_shape *out, float *y);

/* x viewed as [rows][c]: y = (x - mean) / sqrt(var + eps) gamma + beta per row (population
 * variance). gamma, beta [c] or NULL (1 and 0). */
void ref_layernorm(const float *x, int64_t rows, int64_t c, const float *gamma, const float *beta, float eps,
                   float *y);

/* Softmax over the middle axis of x viewed as [outer][len][inner] (axis a of a shape:
 * outer = prod d[0..a-1], len = d[a], inner = prod d[a+1..]). */
void ref_softmax(const float *x, int64_t outer, int64_t len, int64_t inner, float *y);

/* Multi-head self-attention on packed qkv [n][t][3 c] -> y [n][t][c], head dim dh = c / heads.
 * Packing, as PaddleOCR's SVTR Attention reshapes its qkv Linear (reshape [n, t, 3, heads, dh]):
 *   q(h, i, e) = qkv[i][0 c + h dh + e], k = qkv[i][1 c + h dh + e], v = qkv[i][2 c + h dh + e].
 * y[i][h dh + e] = sum_j softmax_j(scale sum_e' q(h,i,e') k(h,j,e')) v(h,j,e). */
void ref_attention(const float *qkv, int n, int t, int c, int heads, float scale, float *y);

/* Over the last axis of x viewed as [rows][c]: index of the first maximum and the maximum. */
void ref_argmax(const float *x, int64_t rows, int64_t c, int32_t *index, float *max_value);
/* The softmax probability of each row's maximum, 1 / sum_i exp(x_i - max) (summed in double). */
void ref_softmax_of_max(const float *x, int64_t rows, int64_t c, float *prob);

#endif
