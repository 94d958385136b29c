/* The per-channel scale kernel (affine.glsl) shared by AFFINE and SE's second dispatch. */
#ifndef PPOCR_NN_GPU_OP_AFFINE_H
#define PPOCR_NN_GPU_OP_AFFINE_H

#include "nn/gpu/gpu_op.h"

/* The kernel and its four-elements-per-invocation twin. */
struct nnh_affine_pipes {
    const struct gpu_pipeline *scalar, *vec4;
};

int nnh_affine_pipeline(const struct nn_gpu_config *cfg, struct nnh_affine_pipes *p, char *err, size_t err_len);

/* y = act(x (scale[n * scale_outer_stride + c] + scale_add) + shift[c]) over x as [N][C][rest];
 * scale and shift are fp32 buffers, shift may be NULL. */
int nnh_record_affine(struct gpu_cmd *cmd, const struct nnh_affine_pipes *p, const struct nn_gpu_tensor *x,
                      const struct gpu_buffer *scale, uint32_t scale_outer_stride, float scale_add,
                      const struct gpu_buffer *shift, const struct nn_gpu_tensor *y, const struct pvk_op *op,
                      const char *label, char *err, size_t err_len);

#endif
