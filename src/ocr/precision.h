/* Storage precision of each net on a device, shared by the engine and --bench-ops.
 *
 * cls and rec use fp16 storage where the device computes fp16 natively (gpu_prefers_fp16): their
 * labels and argmax sequences are the same as in fp32 (test_gpu_parity). Detection stays fp32
 * whatever the device: its output is a probability map that is thresholded pixel by pixel, and
 * fp16 storage anywhere in the net moves its worst pixel by about 0.02 against onnxruntime, twice
 * the parity tolerance. Rounding only the net's input to fp16 already moves it by 0.012, so no
 * choice of a few fp32 tensors would meet it. */
#ifndef PPOCR_OCR_PRECISION_H
#define PPOCR_OCR_PRECISION_H

#include "gpu/context.h"
#include "nn/gpu/gpu_op.h"

static inline struct nn_gpu_config ocr_line_nets_config(struct gpu_context *ctx)
{
    return (struct nn_gpu_config){.ctx = ctx, .act_dtype = gpu_prefers_fp16(ctx) ? NN_F16 : NN_F32};
}

static inline struct nn_gpu_config ocr_det_config(struct gpu_context *ctx)
{
    return (struct nn_gpu_config){.ctx = ctx, .act_dtype = NN_F32};
}

#endif
