/* Strided views of up to PVK_MAX_DIMS dims for the elementwise and copy kernels (binary.glsl,
 * copy.glsl): element strides that honour channel views (dst_channels), broadcasting strides, and
 * the collapsing of dims that are contiguous in every view so that the shaders do as little index
 * arithmetic as possible. */
#ifndef PPOCR_NN_GPU_STRIDED_H
#define PPOCR_NN_GPU_STRIDED_H

#include <stdint.h>

#include "gpu/cmd.h"
#include "gpu/pipeline.h"
#include "nn/gpu/gpu_op.h"

struct nnh_view {
    int ndim;
    int64_t dims[PVK_MAX_DIMS];
    int64_t stride[2][PVK_MAX_DIMS]; /* two operands' element strides per dim */
};

/* Dense row-major strides of t's shape, except that axis 0 steps over dst_channels channels when t
 * is a channel view. */
void nnh_tensor_strides(const struct nn_gpu_tensor *t, int64_t strides[PVK_MAX_DIMS]);

/* Strides of `in` broadcast to `out_ndim` dims of `out_dims` (aligned at the last axis, 0 where
 * the input has 1 and the output more). */
void nnh_broadcast_strides(const struct pvk_shape *in, int out_ndim, const int64_t *out_dims,
                           int64_t strides[PVK_MAX_DIMS]);

/* Drops dims of size 1 and merges neighbours that are contiguous in both operands. */
void nnh_view_collapse(struct nnh_view *v);

/* copy.glsl in the config's storage precision. */
int nnh_copy_pipeline(const struct nn_gpu_config *cfg, const struct gpu_pipeline **p, char *err, size_t err_len);

/* The state of the ops that are copies (concat, reshape, slice, transpose): the config and the
 * copy pipeline. Create and destroy are those ops' own. */
struct nnh_copy_state {
    struct nn_gpu_config cfg;
    const struct gpu_pipeline *p;
};
int nnh_copy_state_create(const struct nn_gpu_config *cfg, void **state, char *err, size_t err_len);
void nnh_copy_state_destroy(void *state);

/* Records copy.glsl: y view <- act(x view); offsets in elements. */
int nnh_record_copy(struct gpu_cmd *cmd, const struct gpu_pipeline *p, const struct gpu_buffer *x, uint32_t x_off,
                    const struct gpu_buffer *y, uint32_t y_off, struct nnh_view *v, const struct pvk_op *op,
                    const char *label, char *err, size_t err_len);

#endif
