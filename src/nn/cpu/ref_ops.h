/* Plain fp32 reference implementations of the ops of src/model/ops.h: the ground truth for the
 * CPU executor and for the GPU op tests. Each op takes explicit shapes (no model structs), writes a
 * separate output buffer (never in place unless stated); its output shape rule is in nn/shape.h.
 * Tensors are dense and row-major; 4-D activations are NCHW.
 *
 * Activations: only ref_conv2d applies the op's fused activation itself (because the residual may
 * be added before or after it); for every other op the caller applies ref_act to the result.
 * Call the shape rule first: an op given a configuration its rule rejects writes nothing. */
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

/* x [n][c][h][w], weight [oc][c/group][kh][kw], bias [oc] or NULL, residual [n][oc][oh][ow] or
 * NULL (NULL exactly when p->residual is NONE) -> y [n][oc][oh][ow]. Zero padding.
 * residual AFTER_ACT: y = act(conv) + r; BEFORE_ACT: y = act(conv + r). */
void ref_conv2d(const float *x, int n, int c, int h, int w, const float *weight, const float *bias, int oc,
                const struct pvk_conv_params *p, const float *residual, float *y);

/* x [n][c][h][w], weight [c][oc/group][kh][kw] (ONNX ConvTranspose layout), bias [oc] or NULL
 * -> y [n][oc][oh][ow]: input pixel (iy, ix) scatters to (iy sh - pad_t + ky dh, ix sw - pad_l + kx dw). */
void ref_conv_transpose2d(const float *x, int n, int c, int h, int w, const float *weight, const float *bias, int oc,
                          const struct pvk_conv_params *p, float *y);

/* ---- pooling ------------------------------------------------------------------------------- */

/* x [n][c][h][w] -> y [n][c][oh][ow]. MAX ignores padding; AVG windows are clipped to the padded
 * extent (h + pad_b) before counting when count_include_pad. */
void ref_pool2d(const float *x, int n, int c, int h, int w, const struct pvk_pool_params *p, float *y);

/* ---- resize -------------------------------------------------------------------------------- */

/* x [n][c][h][w] -> y [n][c][oh][ow]. Source coordinate of output index o:
 *   NEAREST (asymmetric, floor): floor(o / scale), clamped to the last row/column;
 *   BILINEAR_HALF_PIXEL: (o + 0.5) / scale - 0.5, clamped to [0, in - 1];
 *   BILINEAR_ALIGN_CORNERS: o (in - 1) / (out - 1) (0 when out == 1). */
void ref_resize(const float *x, int n, int c, int h, int w, enum pvk_resize_mode mode, float scale_h, float scale_w,
                int oh, int ow, float *y);

/* ---- layout ops ---------------------------------------------------------------------------- */

/* y is the inputs one after another on `axis` (pvk_concat_out_shape). */
void ref_concat(int n_in, const float *const *x, const struct pvk_shape *in, int axis, float *y);

/* y is x with its axes in the order perm gives (pvk_transpose_out_shape). */
void ref_transpose(const float *x, const struct pvk_shape *in, const int32_t *perm, float *y);

/* y takes in.d[axis] indices first, first + step, ... (out.d[axis] of them). */
void ref_slice(const float *x, const struct pvk_shape *in, int axis, int64_t first, int64_t step,
               const struct pvk_shape *out, float *y);

/* ---- elementwise --------------------------------------------------------------------------- */

/* y = a (op) b with broadcasting; `out` from pvk_broadcast_shape. */
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

/* bias [N] or NULL is added to every row. */
void ref_matmul(const float *a, const struct pvk_shape *as, const float *b, const struct pvk_shape *bs, int trans_b,
                const float *bias, const struct pvk_shape *out, float *y);

/* x viewed as [rows][c]: y = (x - mean) / sqrt(var + eps) gamma + beta per row (population
 * variance). gamma, beta [c] or NULL (1 and 0). */
void ref_layernorm(const float *x, int64_t rows, int64_t c, const float *gamma, const float *beta, float eps, float *y);

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
