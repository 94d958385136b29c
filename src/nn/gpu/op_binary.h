/* The broadcasting elementwise kernel (binary.glsl) shared by BINARY and UNARY. */
#ifndef PPOCR_NN_GPU_OP_BINARY_H
#define PPOCR_NN_GPU_OP_BINARY_H

#include "nn/gpu/gpu_op.h"

/* binary.glsl's operation codes: enum pvk_binary_kind, plus a plain copy (y = act(a)). */
#define NNH_BINARY_COPY 4u

/* The general broadcasting kernel and its four-at-a-time twin for contiguous operands. */
struct nnh_binary_pipes {
    const struct gpu_pipeline *generic, *vec4;
};

int nnh_binary_pipeline(const struct nn_gpu_config *cfg, struct nnh_binary_pipes *p, char *err, size_t err_len);

/* y = act(a kind b); b_shape NULL (and b_buf NULL) for NNH_BINARY_COPY. */
int nnh_record_binary(struct gpu_cmd *cmd, const struct nnh_binary_pipes *p, uint32_t kind,
                      const struct nn_gpu_tensor *a, const struct gpu_buffer *b_buf, uint32_t b_off,
                      const struct pvk_shape *b_shape, const struct nn_gpu_tensor *y, const struct pvk_op *op,
                      char *err, size_t err_len);

#endif
