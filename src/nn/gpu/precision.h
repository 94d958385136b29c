/* Storage precision of each net on a device, shared by the net session and --bench-ops.
 *
 * cls and rec use fp16 storage where the device computes fp16 natively (gpu_prefers_fp16): their
 * labels and argmax sequences are the same as in fp32 (test_gpu_parity). Detection stays fp32
 * whatever the device: its output is a probability map that is thresholded pixel by pixel, and
 * fp16 storage anywhere in the net moves its worst pixel by about 0.02 against onnxruntime, twice
 * the parity tolerance. Rounding only the net's input to fp16 already moves it by 0.012, so no
 * choice of a few fp32 tensors would meet it.
 *
 * fp16_math (--fp16-math) makes the element-wise arithmetic over fp16 storage fp16 too
 * (activations, residual adds, the depthwise taps and epilogue, GEMM tiles), every sum over many
 * terms staying fp32. It is off by default: on the one GPU measured it made rec and cls slower
 * (BENCHMARKS.md) and moved one corpus line's score by 0.027 against PaddleOCR's; GPUs whose fp16
 * ALUs run at twice the fp32 rate are where it may pay. */
#ifndef PPOCR_NN_GPU_PRECISION_H
#define PPOCR_NN_GPU_PRECISION_H

#include "gpu/context.h"
#include "nn/gpu/gpu_op.h"

static inline struct nn_gpu_config nn_line_nets_config(struct gpu_context *ctx, bool fp16_math)
{
    const bool fp16 = gpu_prefers_fp16(ctx);
    return (struct nn_gpu_config){.ctx = ctx,
                                  .act_dtype = fp16 ? NN_F16 : NN_F32,
                                  .fp16_math = fp16 && fp16_math,
                                  .force = nn_gpu_overrides_from_env()};
}

static inline struct nn_gpu_config nn_det_config(struct gpu_context *ctx)
{
    return (struct nn_gpu_config){.ctx = ctx, .act_dtype = NN_F32, .force = nn_gpu_overrides_from_env()};
}

#endif
