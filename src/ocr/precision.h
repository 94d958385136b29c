/* Storage precision of each net on a device, shared by the engine and --bench-ops.
 *
 * cls and rec use fp16 storage where the device computes fp16 natively (gpu_prefers_fp16): their
 * labels and argmax sequences are the same as in fp32 (test_gpu_parity). Detection stays fp32
 * whatever the device: its output is a probability map that is thresholded pixel by pixel, and
 * fp16 storage anywhere in the net moves its worst pixel by about 0.02 against onnxruntime, twice
 * the parity tolerance. Rounding only the net's input to fp16 already moves it by 0.012, so no
 * choice of a few fp32 tensors would meet it.
 *
 * With fp16 storage, the element-wise arithmetic (activations, residual adds, the depthwise
 * epilogue, GEMM tiles) is fp16 too, sums over many terms staying fp32; PPOCR_VK_FP16_MATH=0 keeps
 * it in fp32, to measure what it buys. */
#ifndef PPOCR_OCR_PRECISION_H
#define PPOCR_OCR_PRECISION_H

#include <stdlib.h>
#include <string.h>

#include "gpu/context.h"
#include "nn/gpu/gpu_op.h"

static inline struct nn_gpu_config ocr_line_nets_config(struct gpu_context *ctx)
{
    const bool fp16 = gpu_prefers_fp16(ctx);
    const char *math = getenv("PPOCR_VK_FP16_MATH");
    return (struct nn_gpu_config){.ctx = ctx, .act_dtype = fp16 ? NN_F16 : NN_F32,
                                  .fp16_math = fp16 && !(math && !strcmp(math, "0"))};
}

static inline struct nn_gpu_config ocr_det_config(struct gpu_context *ctx)
{
    return (struct nn_gpu_config){.ctx = ctx, .act_dtype = NN_F32};
}

#endif
