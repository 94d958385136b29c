/* SE's gate, exposed so that the net can fold the channel scale into the consumer (a 1x1
 * convolution, see nn_gpu_op_record_se_gate): after nn_gpu_se_record_gate, nn_gpu_se_gate holds
 * g[n][c] (fp32, dense [N][C]); y = x g (+ x) is then the consumer's business. The gate buffer
 * belongs to the op and lives until its destroy. */
#ifndef PPOCR_NN_GPU_OP_SE_H
#define PPOCR_NN_GPU_OP_SE_H

#include "nn/gpu/gpu_op.h"

/* Records only the gate dispatches (means, then the FC layers) for input x. */
int nn_gpu_se_record_gate(void *state, const struct pvk_op *op, struct gpu_cmd *cmd, const struct nn_gpu_tensor *x,
                          char *err, size_t err_len);
/* The gate buffer of the latest recording, [N][C] fp32. */
const struct gpu_buffer *nn_gpu_se_gate(const void *state);

#endif
