/* The GPU op table: how one op of src/model/ops.h becomes compute dispatches.
 *
 * Every op kind implements three functions, ggml-style, registered in one table
 * (src/nn/gpu/gpu_op.c):
 *   create  - once per model op: picks pipeline variants (from the device caps and the storage
 *             precision), packs and uploads the constant weights (fp32 data in, fp32 or fp16 on
 *             the device). Nothing here depends on the activation shapes.
 *   record  - once per input shape: records the op's dispatches into a command buffer, given the
 *             input and output tensors with their shapes (shapes travel as push constants: one
 *             pipeline per op variant, never per shape). It does NOT record the barrier before
 *             its own dispatches; the net planner puts barriers where a real dependency exists.
 *             An op that needs more than one dispatch records its internal barriers itself, and
 *             may also record one phase (the dispatches between two such barriers) at a time,
 *             so that plans recorded side by side share one barrier per phase (see phases).
 *   destroy - frees the weights.
 * Ops keep no per-run memory: SE takes two fp32 outputs besides y, its channel sums ([N][C][parts],
 * op_se.h) and its gate ([N][C]), which the net plans as it plans activations.
 * Activations on the GPU are dense row-major tensors in the net's storage precision; a tensor is
 * a pool buffer plus an element offset (so that producers can write straight into a slice of a
 * concat's output, and views need no copy). */
#ifndef PPOCR_NN_GPU_GPU_OP_H
#define PPOCR_NN_GPU_GPU_OP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gpu/cmd.h"
#include "gpu/pool.h"
#include "model/ops.h"
#include "nn/shape.h"

struct gpu_context;

enum nn_dtype { NN_F32 = 0, NN_F16 = 1, NN_I32 = 2 };

/* How reductions over a plane run: as the device class and the plane's size pick, or forced. */
enum nn_reduce { NN_REDUCE_AUTO = 0, NN_REDUCE_SERIAL, NN_REDUCE_WORKGROUP };

/* Kernel choices forced over the device's own, so that the tests run every kernel on any device
 * (and benchmarks compare them). All zero: none. The ops never read the environment: whoever
 * makes a config fills this once, from nn_gpu_overrides_from_env(). */
struct nn_gpu_overrides {
    char gemm_kernel[32];  /* PPOCR_VK_GEMM_KERNEL (conv_gemm.h, op_conv2d.c); "": the device's choice */
    bool no_subgroups;     /* PPOCR_VK_NO_SUBGROUPS=1: the reductions' shared-memory twins */
    enum nn_reduce reduce; /* PPOCR_VK_REDUCE=serial|workgroup */
};

/* PPOCR_VK_GEMM_KERNEL, PPOCR_VK_NO_SUBGROUPS and PPOCR_VK_REDUCE as they are now. */
struct nn_gpu_overrides nn_gpu_overrides_from_env(void);

/* Storage precision and arithmetic of a net on one device. */
struct nn_gpu_config {
    struct gpu_context *ctx;
    enum nn_dtype act_dtype; /* NN_F32, or NN_F16 when gpu_prefers_fp16() and not forced off */
    bool fp16_math;          /* with NN_F16 and shaderFloat16: element-wise arithmetic in fp16 (the *_f16a
                                shaders); sums over many terms stay fp32 */
    struct nn_gpu_overrides force;
};

struct nn_gpu_tensor {
    const struct gpu_buffer *buf; /* the allocation; bound whole */
    uint32_t elem_offset;         /* first element inside buf, in elements of dtype */
    enum nn_dtype dtype;
    struct pvk_shape shape;
    /* Optional strided view for producers writing into a concat along axis 1 of NCHW: the
     * destination's channel count (0 = dense, same as shape.d[1]). Record functions of ops that
     * may feed a concat honour it; others require 0. */
    int64_t dst_channels;
};

/* Constant inputs of one op, as in the model file: fp32 data with shapes (NULL if unused). */
struct nn_gpu_weights {
    const float *data[PVK_MAX_WEIGHTS];
    struct pvk_shape shape[PVK_MAX_WEIGHTS];
    /* CONV2D only: a per-output-channel affine the net fused from the op that follows,
     * y = post_scale[oc] * conv_result + post_shift[oc] (after bias, activation and residual);
     * both NULL when there is none. */
    const float *post_scale, *post_shift;
    /* Pointwise CONV2D and RESIZE: x is scaled per (image, input channel) by a gate passed as the
     * last input, fp32 [N][IC] (RESIZE: by gate + gate_residual): the apply step of the
     * squeeze-and-excitation block before it. */
    bool input_gate;
    /* BINARY ADD only: operands the net fused from the ops that produced them, bit k for input
     * k. A gated input is an SE's input x, to be scaled per (image, channel) by gate +
     * gate_residual, the gate passed as the last input (at most one input). An upsampled input
     * is a nearest RESIZE's input, read at (h / upsample_h, w / upsample_w) (at most one). */
    uint8_t gated_inputs, upsampled_inputs;
    float gate_residual;
    uint32_t upsample_h, upsample_w;
};

struct nn_gpu_op; /* opaque: per-kind state (pipelines, uploaded weights) */

/* Returns 0, or -1 with a one-line reason in err (unsupported attribute, out of memory...). */
int nn_gpu_op_create(const struct nn_gpu_config *cfg, const struct pvk_op *op, const struct nn_gpu_weights *w,
                     struct nn_gpu_op **out, char *err, size_t err_len);
int nn_gpu_op_record(struct nn_gpu_op *op, struct gpu_cmd *cmd, const struct nn_gpu_tensor *inputs, int n_inputs,
                     const struct nn_gpu_tensor *outputs, int n_outputs, char *err, size_t err_len);
void nn_gpu_op_destroy(struct nn_gpu_op *op);
/* Phases of nn_gpu_op_record, a barrier between each two: 1 for most ops. With gate_only (SE
 * only): of the gate's dispatches alone, for a consumer that applies the gate itself (see
 * input_gate). Plans recorded side by side (nn_gpu_plan_record_group) record phase 0 of an op
 * for every plan, one barrier, phase 1 for every plan, and so on, rather than one barrier per
 * plan and phase. */
int nn_gpu_op_phases(const struct nn_gpu_op *op, bool gate_only);
/* Records one phase alone, without the barrier before it. With gate_only, inputs[0] is x and
 * outputs[1] and [2] are SE's sums and gate (its second and third outputs). */
int nn_gpu_op_record_phase(struct nn_gpu_op *op, struct gpu_cmd *cmd, int phase, bool gate_only,
                           const struct nn_gpu_tensor *inputs, int n_inputs, const struct nn_gpu_tensor *outputs,
                           int n_outputs, char *err, size_t err_len);

/* The per-kind functions behind the calls above. */
struct nn_gpu_op_impl {
    int (*create)(const struct nn_gpu_config *cfg, const struct pvk_op *op, const struct nn_gpu_weights *w,
                  void **state, char *err, size_t err_len);
    int (*record)(void *state, const struct pvk_op *op, struct gpu_cmd *cmd, const struct nn_gpu_tensor *inputs,
                  int n_inputs, const struct nn_gpu_tensor *outputs, int n_outputs, char *err, size_t err_len);
    void (*destroy)(void *state);
    /* 0 or 1: the op records in one go. More: `record` is these phases with a barrier between,
     * and record_phase records one of them alone. */
    int phases;
    int (*record_phase)(void *state, const struct pvk_op *op, struct gpu_cmd *cmd, int phase,
                        const struct nn_gpu_tensor *inputs, int n_inputs, const struct nn_gpu_tensor *outputs,
                        int n_outputs, char *err, size_t err_len);
};

/* Each kind's implementation lives in its own file (src/nn/gpu/op_<name>.c): nn_gpu_<name>_impl for
 * every row of PVK_OPS. */
#define NN_GPU_IMPL_DECL(id, value, name, max_in, max_out) extern const struct nn_gpu_op_impl nn_gpu_##name##_impl;
PVK_OPS(NN_GPU_IMPL_DECL)
#undef NN_GPU_IMPL_DECL

#endif
