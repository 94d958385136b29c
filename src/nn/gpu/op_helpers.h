/* Small helpers shared by the non-convolution GPU ops (op_pool2d.c ... op_argmax.c, image_ops.c):
 * pipeline variant names, constant uploads in the storage precision, dispatch grids, error text. */
#ifndef PPOCR_NN_GPU_OP_HELPERS_H
#define PPOCR_NN_GPU_OP_HELPERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gpu/cmd.h"
#include "gpu/pipeline.h"
#include "gpu/pool.h"
#include "nn/gpu/gpu_op.h"

/* Threads per workgroup of the elementwise and copy kernels, and of the row reductions. */
#define NNH_WG_ELEMENTWISE 256u
#define NNH_WG_REDUCE 256u
/* Workgroups on x before a grid wraps onto y (Vulkan guarantees 65535 on each axis). */
#define NNH_GRID_X 65535u

/* Writes the one-line reason and returns -1. */
int nnh_fail(char *err, size_t err_len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Whether the reduction kernels can use their subgroup twins (*_sg): basic + arithmetic +
 * ballot-free ops in compute, and a subgroup of at least 4 lanes. */
bool nnh_use_subgroups(const struct nn_gpu_config *cfg);

/* Whether a reduction over a plane runs in one invocation (CPU devices: no barriers) rather than
 * a workgroup. cfg->force.reduce (PPOCR_VK_REDUCE) overrides the device class (the tests run both). */
bool nnh_serial_reductions(const struct nn_gpu_config *cfg);

/* Whether cfg->force.reduce (PPOCR_VK_REDUCE=workgroup) asks for workgroup reductions even where a
 * kernel would pick one invocation per plane for its size (small planes on GPUs). */
bool nnh_workgroup_reductions_forced(const struct nn_gpu_config *cfg);

/* One kernel's shaders: fp32, fp16 storage, fp16 arithmetic (the *_f16a twins), and the subgroup
 * twins (*_sg, *_sg_f16); GPU_SHADER_NONE where the kernel has no such variant. Written with the
 * macros below, so that a variant that does not exist fails the build. */
struct nnh_shaders {
    enum gpu_shader_id f32, f16, f16a, sg, sg_f16;
};
#define NNH_SHADERS_F32(base) ((struct nnh_shaders){.f32 = GPU_SHADER_##base})
#define NNH_SHADERS(base) ((struct nnh_shaders){.f32 = GPU_SHADER_##base, .f16 = GPU_SHADER_##base##_f16})
#define NNH_SHADERS_F16A(base)                                                                                         \
    ((struct nnh_shaders){.f32 = GPU_SHADER_##base, .f16 = GPU_SHADER_##base##_f16, .f16a = GPU_SHADER_##base##_f16a})
#define NNH_SHADERS_SG(base)                                                                                           \
    ((struct nnh_shaders){.f32 = GPU_SHADER_##base,                                                                    \
                          .f16 = GPU_SHADER_##base##_f16,                                                              \
                          .sg = GPU_SHADER_##base##_sg,                                                                \
                          .sg_f16 = GPU_SHADER_##base##_sg_f16})

/* The pipeline of v's variant for (subgroup, dtype) with spec constant 0 = local size x, then
 * `extra` constants. */
int nnh_pipeline(struct gpu_context *ctx, struct nnh_shaders v, bool subgroup, enum nn_dtype dtype, uint32_t local_x,
                 const uint32_t *extra, unsigned n_extra, unsigned buffers, unsigned push_bytes,
                 const struct gpu_pipeline **out, char *err, size_t err_len);

/* v's variant for cfg's precision: f16a when cfg stores fp16 and allows fp16 arithmetic, f16 for
 * fp16 storage alone, f32 for fp32. */
enum gpu_shader_id nnh_precision_shader(const struct nn_gpu_config *cfg, struct nnh_shaders v);

/* As nnh_pipeline (no subgroup twin) for the shader nnh_precision_shader(cfg, v). */
int nnh_arith_pipeline(const struct nn_gpu_config *cfg, struct nnh_shaders v, uint32_t local_x, unsigned buffers,
                       unsigned push_bytes, const struct gpu_pipeline **out, char *err, size_t err_len);

/* Uploads n floats to a new device buffer, converted to `dtype` (NN_F32 or NN_F16). */
int nnh_upload(struct gpu_context *ctx, const float *data, size_t n, enum nn_dtype dtype, struct gpu_buffer *out,
               char *err, size_t err_len);

/* A 1-D job of `items` work items over workgroups of `local` threads, folded onto y past
 * NNH_GRID_X workgroups; the shaders recover the linear group id from gl_NumWorkGroups.x. */
void nnh_grid_1d(uint64_t items, uint32_t local, uint32_t groups[3]);

int nnh_dispatch(struct gpu_cmd *cmd, const struct gpu_pipeline *p, const struct gpu_binding *b, const void *push,
                 const uint32_t groups[3], const char *label, char *err, size_t err_len);

/* Checks one activation tensor: dtype as expected, dense or (when allowed) a channel view. */
int nnh_check_tensor(const struct nn_gpu_tensor *t, enum nn_dtype dtype, bool allow_channel_view, const char *what,
                     char *err, size_t err_len);

/* The output addressing of a kernel that writes element i of a dense [N][C][...] result into a
 * tensor that may be a channel slice of a wider one: dst = (i / block) * block_stride + i % block.
 * For dense outputs block = block_stride = element count. */
void nnh_out_blocks(const struct nn_gpu_tensor *t, uint32_t *block, uint32_t *block_stride);

/* Product of dims [from, to). */
int64_t nnh_prod(const struct pvk_shape *s, int from, int to);

#endif
