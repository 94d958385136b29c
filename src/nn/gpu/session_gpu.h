/* The Vulkan side of nn/device.h and nn/session.h, for the client's own GPU kernels (the OCR
 * pipeline's image kernels in src/ocr/gpu): the context to create them on, the command buffer of
 * a run being recorded, and where a plan's input and output tensors live. */
#ifndef PPOCR_NN_GPU_SESSION_GPU_H
#define PPOCR_NN_GPU_SESSION_GPU_H

#include "nn/device.h"
#include "nn/gpu/gpu_op.h"
#include "nn/session.h"

struct gpu_context *nn_gpu_device_context(const struct nn_device *dev);
/* The run's command buffer: a callback records its dispatches there (without a barrier before the
 * first: the session places the barriers between the client's work and the nets). */
struct gpu_cmd *nn_gpu_recorder_cmd(struct nn_recorder *rec);
const struct nn_gpu_tensor *nn_gpu_plan_input_tensor(const struct nn_plan *plan);
const struct nn_gpu_tensor *nn_gpu_plan_output_tensor(const struct nn_plan *plan);

#endif
