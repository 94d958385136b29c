/* SE's gate, exposed so that the net can fold the channel scale into the consumer (a 1x1
 * convolution, see nn_gpu_op_record_phase): nn_gpu_se_record_gate_phase writes g[n][c] into `gate`
 * (fp32, dense [N][C]) through the `sums` scratch (fp32, dense [N][C][parts], each channel's
 * plane summed in nn_gpu_se_sum_parts slices); y = x g (+ x) is then the consumer's business. */
#ifndef PPOCR_NN_GPU_OP_SE_H
#define PPOCR_NN_GPU_OP_SE_H

#include "nn/gpu/gpu_op.h"

/* Slices each plane of `plane` values is summed in on ctx's device: the sums scratch of an SE
 * over x is [N][C][nn_gpu_se_sum_parts(cfg, H W)]. */
int64_t nn_gpu_se_sum_parts(const struct nn_gpu_config *cfg, int64_t plane);

/* The gate's dispatches come in two phases, a barrier between them: the sums, then the FC layers. */
#define NN_GPU_SE_GATE_PHASES 2

/* Records one phase of the gate for x, without the barrier before it. */
int nn_gpu_se_record_gate_phase(void *state, const struct pvk_op *op, struct gpu_cmd *cmd, int phase,
                                const struct nn_gpu_tensor *x, const struct nn_gpu_tensor *sums,
                                const struct nn_gpu_tensor *gate, char *err, size_t err_len);

#endif
