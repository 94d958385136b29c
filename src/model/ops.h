/* The operator table of a converted PP-OCR net. One table, shared by the converter (which writes
 * it), the CPU reference executor and the GPU planner (which read it). Every record is plain
 * fixed-size data so that a model file can be mapped and used in place.
 *
 * Tensors are row-major in the order their shape lists; activations are NCHW for 4-D values and
 * [N, T, C] for token sequences. Every op may apply one activation (`act`) to its result, and
 * CONV2D may then add a residual input.
 *
 * Conventions the converter follows (tools/convert, models/FORMAT.md):
 * - Tensor ids: activations first, numbered densely in order of first appearance (the net input
 *   is 0), then the constants. Constants are float32, folded in float64 before the cast.
 * - act_alpha/act_beta: CLIP min/max; HARDSIGMOID alpha/beta (0.2/0.5 or 1/6 and 0.5 in PP-OCR).
 * - CONV2D residual: AFTER_ACT y = act(conv(x) + bias) + r; BEFORE_ACT y = act(conv(x) + bias + r).
 *   BatchNorm and constant per-channel Mul/Add around convs are already folded into W and bias.
 * - POOL2D AVG divides by the window size clipped to the input unless count_include_pad;
 *   output size floor((in + pads - k) / s) + 1 (ceil with ceil_mode). GLOBAL_AVG ignores k/s/pads.
 * - RESIZE: out = floor(in * scale). NEAREST: src = min(floor(dst / scale), in - 1).
 *   BILINEAR_HALF_PIXEL: src = (dst + 0.5) / scale - 0.5 (clamped at 0); ALIGN_CORNERS:
 *   src = dst * (in - 1) / (out - 1).
 * - BINARY with a constant b (w[0]): b keeps its ONNX shape and broadcasts numpy-style; a
 *   constant first operand of Add/Mul is swapped into b; Sub/Div never have one.
 * - AFFINE: y[n,c,h,w] = scale[c] * x[n,c,h,w] + shift[c] (also a scalar Mul/Add on NCHW).
 * - SE: gate = gate_act(W2 relu(W1 mean_hw(x) + b1) + b2) per (n, c); y = x * gate [+ x];
 *   then `act`.
 * - MATMUL: y = a B + bias, then act; with in[1] instead of w[0] a batched a @ b whose leading
 *   dims broadcast numpy-style. trans_b is always 0.
 * - LAYERNORM: y = (x - mean) / sqrt(var + eps) * gamma + beta over the last axis; var is the
 *   biased mean of squared deviations.
 * - ATTENTION: qkv's last axis is [3][heads][C / heads] (q, then k, then v; each head's
 *   C / heads values contiguous), i.e. ONNX's Reshape(0, T, 3, heads, C / heads). Per head h:
 *   out[n, t, h * d + j] = sum_s softmax_s(scale * q[t] . k[s]) v[s][j], d = C / heads.
 * - RESHAPE: attr.reshape.ndim is the output rank; entry 0 copies the input dim at the same
 *   position (used for run-time sizes: batch, width), -1 (at most one) is inferred from the
 *   element count, any other value is that static size.
 * - SLICE: start/end are non-negative, end is clamped to the dim by the reader (INT32_MAX = to
 *   the end), step is 1.
 * - SOFTMAX/CONCAT axis is non-negative. ARGMAX is never written by the converter. */
#ifndef PPOCR_MODEL_OPS_H
#define PPOCR_MODEL_OPS_H

#include <stdint.h>

#define PVK_MAX_DIMS 6
#define PVK_MAX_INPUTS 8 /* CONCAT may have up to 8 inputs */
#define PVK_MAX_WEIGHTS 4
#define PVK_NAME_LEN 64

#include "model/op_table.h" /* enum pvk_op_type */

enum pvk_act {
    PVK_ACT_NONE = 0,
    PVK_ACT_RELU,
    PVK_ACT_RELU6,
    PVK_ACT_CLIP,        /* min(max(x, alpha), beta) */
    PVK_ACT_HARDSWISH,   /* x * relu6(x + 3) / 6 */
    PVK_ACT_HARDSIGMOID, /* max(0, min(1, alpha * x + beta)) */
    PVK_ACT_SIGMOID,
    PVK_ACT_SWISH,     /* x * sigmoid(x) */
    PVK_ACT_GELU_ERF,  /* 0.5 x (1 + erf(x / sqrt 2)) */
    PVK_ACT_GELU_TANH, /* 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) */
    PVK_ACT_COUNT
};

enum pvk_binary_kind { PVK_BIN_ADD = 0, PVK_BIN_SUB, PVK_BIN_MUL, PVK_BIN_DIV };
enum pvk_pool_kind { PVK_POOL_MAX = 0, PVK_POOL_AVG, PVK_POOL_GLOBAL_AVG };
enum pvk_resize_mode {
    PVK_RESIZE_NEAREST = 0, /* asymmetric coordinates, floor (ONNX export of paddle's upsample) */
    PVK_RESIZE_BILINEAR_HALF_PIXEL,
    PVK_RESIZE_BILINEAR_ALIGN_CORNERS
};
enum pvk_residual { PVK_RESIDUAL_NONE = 0, PVK_RESIDUAL_AFTER_ACT, PVK_RESIDUAL_BEFORE_ACT };

/* ARGMAX's second output: the maximum itself, or the probability softmax would give it,
 * 1 / sum(exp(x - max)) (for logits whose softmax is only needed at its maximum). */
enum pvk_argmax_value { PVK_ARGMAX_VALUE_MAX = 0, PVK_ARGMAX_VALUE_SOFTMAX };

union pvk_op_attr {
    struct {
        int32_t kh, kw, sh, sw, dh, dw;
        int32_t pad_t, pad_l, pad_b, pad_r;
        int32_t group;
        int32_t residual; /* enum pvk_residual; the residual is in[1] */
    } conv;
    struct {
        int32_t kind; /* enum pvk_pool_kind */
        int32_t kh, kw, sh, sw;
        int32_t pad_t, pad_l, pad_b, pad_r;
        int32_t count_include_pad;
        int32_t ceil_mode;
    } pool;
    struct {
        int32_t mode; /* enum pvk_resize_mode */
        float scale_h, scale_w;
    } resize;
    struct {
        int32_t axis; /* non-negative after conversion */
    } axis;
    struct {
        int32_t kind; /* enum pvk_binary_kind */
    } binary;
    struct {
        int32_t residual; /* SE adds its input back when 1 (RSE layers) */
        int32_t gate_act; /* enum pvk_act of the gate, normally HARDSIGMOID; alpha/beta below */
        float gate_alpha, gate_beta;
    } se;
    struct {
        int32_t trans_b;
    } matmul;
    struct {
        int32_t value; /* enum pvk_argmax_value */
    } argmax;
    struct {
        float eps;
    } norm;
    struct {
        int32_t heads;
        float scale;
    } attention;
    struct {
        int32_t ndim;
        int32_t perm[PVK_MAX_DIMS];
    } transpose;
    struct {
        int32_t ndim;
        int32_t shape[PVK_MAX_DIMS];
    } reshape;
    struct {
        int32_t axis, start, end, step; /* end clamped to the dim; INT32_MAX for "to the end" */
    } slice;
    int32_t raw[16];
};

struct pvk_op {
    uint32_t type; /* enum pvk_op_type */
    uint32_t act;  /* enum pvk_act applied to the result */
    float act_alpha, act_beta;
    uint32_t n_inputs, n_outputs;
    int32_t inputs[PVK_MAX_INPUTS];   /* tensor ids (activations); -1 unused */
    int32_t outputs[2];               /* tensor ids; -1 unused */
    int32_t weights[PVK_MAX_WEIGHTS]; /* tensor ids of constants; -1 unused */
    union pvk_op_attr attr;
    char name[PVK_NAME_LEN]; /* the ONNX node it came from, for error messages and layer dumps */
};

const char *pvk_op_type_name(enum pvk_op_type type);
/* The most activation inputs and outputs an op of `type` has (PVK_OPS); 0 for an unknown type. */
unsigned pvk_op_max_inputs(enum pvk_op_type type);
unsigned pvk_op_max_outputs(enum pvk_op_type type);
const char *pvk_act_name(enum pvk_act act);

#endif
