/* SE's gate, exposed so that the net can fold the channel scale into the consumer (a 1x1
 * convolution, see nn_gpu_op_record_se_gate): nn_gpu_se_record_gate writes g[n][c] into `gate`
 * (fp32, dense [N][C]) through the `sums` scratch (fp32, dense [N][C][parts], each channel's
 * plane summed in nn_gpu_se_sum_parts slices); y = x g (+ x) is then the consumer's business. */
#ifndef PPOCR_NN_GPU_OP_SE_H
#define PPOCR_NN_GPU_OP_SE_H

#include "nn/gpu/gpu_op.h"

/* Slices each plane of `plane` values is summed in on ctx's device: the sums scratch of an SE
 * over x is [N][C][nn_gpu_se_sum_parts(ctx, H W)]. */
int64_t nn_gpu_se_sum_parts(struct gpu_context *ctx, int64_t plane);

/* Records only the gate dispatches (sums, then the FC layers, with a barrier between) for x. */
int nn_gpu_se_record_gate(void *state, const struct pvk_op *op, struct gpu_cmd *cmd, const struct nn_gpu_tensor *x,
                          const struct nn_gpu_tensor *sums, const struct nn_gpu_tensor *gate, char *err,
                          size_t err_len);

#endif
