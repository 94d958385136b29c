#include "nn/gpu/op_helpers.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/context.h"
#include "gpu/error.h"
#include "gpu/shaders.h"
#include "gpu/transfer.h"
#include "nn/half.h"

int nnh_fail(char *err, size_t err_len, const char *fmt, ...)
{
    if (err && err_len) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, err_len, fmt, ap);
        va_end(ap);
    }
    return -1;
}

bool nnh_use_subgroups(const struct nn_gpu_config *cfg)
{
    const struct gpu_caps *caps = gpu_context_caps(cfg->ctx);
    VkSubgroupFeatureFlags need = VK_SUBGROUP_FEATURE_BASIC_BIT | VK_SUBGROUP_FEATURE_ARITHMETIC_BIT;
    if (cfg->force.no_subgroups)
        return false;
    return (caps->subgroup_ops & need) == need && caps->subgroup_size >= 4 && caps->subgroup_size <= 128;
}

static int named_pipeline(struct gpu_context *ctx, enum gpu_shader_id shader, uint32_t local_x, const uint32_t *extra,
                          unsigned n_extra, unsigned buffers, unsigned push_bytes, const struct gpu_pipeline **out,
                          char *err, size_t err_len)
{
    const char *name = gpu_shader_name(shader);
    uint32_t spec[GPU_MAX_SPEC_CONSTANTS];
    if (n_extra + 1 > GPU_MAX_SPEC_CONSTANTS)
        return nnh_fail(err, err_len, "%s: too many specialisation constants", name);
    spec[0] = local_x;
    for (unsigned i = 0; i < n_extra; i++)
        spec[1 + i] = extra[i];
    struct gpu_pipeline_desc d = {
        .shader = shader, .spec = spec, .spec_count = n_extra + 1, .buffer_count = buffers, .push_bytes = push_bytes};
    if (gpu_pipeline_get(ctx, &d, out) != GPU_OK)
        return nnh_fail(err, err_len, "pipeline %s: %s", name, gpu_last_error());
    return 0;
}

bool nnh_workgroup_reductions_forced(const struct nn_gpu_config *cfg)
{
    return cfg->force.reduce == NN_REDUCE_WORKGROUP;
}

bool nnh_serial_reductions(const struct nn_gpu_config *cfg)
{
    if (cfg->force.reduce == NN_REDUCE_SERIAL)
        return true;
    if (nnh_workgroup_reductions_forced(cfg))
        return false;
    return gpu_context_caps(cfg->ctx)->is_cpu;
}

int nnh_pipeline(struct gpu_context *ctx, struct nnh_shaders v, bool subgroup, enum nn_dtype dtype, uint32_t local_x,
                 const uint32_t *extra, unsigned n_extra, unsigned buffers, unsigned push_bytes,
                 const struct gpu_pipeline **out, char *err, size_t err_len)
{
    if (dtype != NN_F32 && dtype != NN_F16)
        return nnh_fail(err, err_len, "%s: activations must be fp32 or fp16", gpu_shader_name(v.f32));
    enum gpu_shader_id shader = subgroup ? (dtype == NN_F16 ? v.sg_f16 : v.sg) : dtype == NN_F16 ? v.f16 : v.f32;
    if (shader == GPU_SHADER_NONE)
        return nnh_fail(err, err_len, "%s: no %s%s variant", gpu_shader_name(v.f32), subgroup ? "subgroup " : "",
                        dtype == NN_F16 ? "fp16" : "fp32");
    return named_pipeline(ctx, shader, local_x, extra, n_extra, buffers, push_bytes, out, err, err_len);
}

enum gpu_shader_id nnh_precision_shader(const struct nn_gpu_config *cfg, struct nnh_shaders v)
{
    if (cfg->act_dtype != NN_F16)
        return v.f32;
    return cfg->fp16_math && gpu_context_caps(cfg->ctx)->shader_fp16 ? v.f16a : v.f16;
}

int nnh_arith_pipeline(const struct nn_gpu_config *cfg, struct nnh_shaders v, uint32_t local_x, unsigned buffers,
                       unsigned push_bytes, const struct gpu_pipeline **out, char *err, size_t err_len)
{
    if (cfg->act_dtype != NN_F32 && cfg->act_dtype != NN_F16)
        return nnh_fail(err, err_len, "%s: activations must be fp32 or fp16", gpu_shader_name(v.f32));
    return named_pipeline(cfg->ctx, nnh_precision_shader(cfg, v), local_x, NULL, 0, buffers, push_bytes, out, err,
                          err_len);
}

int nnh_upload(struct gpu_context *ctx, const float *data, size_t n, enum nn_dtype dtype, struct gpu_buffer *out,
               char *err, size_t err_len)
{
    size_t es = dtype == NN_F16 ? 2 : 4;
    size_t bytes = n * es;
    /* never a zero-sized buffer: bindings need a range */
    if (gpu_buffer_alloc(ctx, GPU_MEMORY_DEVICE, bytes < 16 ? 16 : bytes, out) != GPU_OK)
        return nnh_fail(err, err_len, "weights (%zu bytes): %s", bytes, gpu_last_error());
    if (n == 0)
        return 0;
    int rc;
    if (dtype == NN_F16) {
        uint16_t *h = malloc(bytes);
        if (!h) {
            gpu_buffer_free(out);
            return nnh_fail(err, err_len, "out of host memory converting weights");
        }
        nn_floats_to_halves(data, h, n);
        rc = gpu_upload(ctx, out, 0, h, bytes);
        free(h);
    } else {
        rc = gpu_upload(ctx, out, 0, data, bytes);
    }
    if (rc != GPU_OK) {
        gpu_buffer_free(out);
        return nnh_fail(err, err_len, "uploading weights: %s", gpu_last_error());
    }
    return 0;
}

void nnh_grid_1d(uint64_t items, uint32_t local, uint32_t groups[3])
{
    uint64_t g = (items + local - 1) / local;
    if (g == 0)
        g = 1;
    if (g <= NNH_GRID_X) {
        groups[0] = (uint32_t)g, groups[1] = 1;
    } else {
        groups[0] = NNH_GRID_X;
        groups[1] = (uint32_t)((g + NNH_GRID_X - 1) / NNH_GRID_X);
    }
    groups[2] = 1;
}

int nnh_dispatch(struct gpu_cmd *cmd, const struct gpu_pipeline *p, const struct gpu_binding *b, const void *push,
                 const uint32_t groups[3], const char *label, char *err, size_t err_len)
{
    struct gpu_dispatch d = {
        .pipeline = p, .buffers = b, .push = push, .groups = {groups[0], groups[1], groups[2]}, .label = label};
    if (gpu_cmd_dispatch(cmd, &d) != GPU_OK)
        return nnh_fail(err, err_len, "%s: %s", label ? label : gpu_pipeline_shader(p), gpu_last_error());
    return 0;
}

int nnh_check_tensor(const struct nn_gpu_tensor *t, enum nn_dtype dtype, bool allow_channel_view, const char *what,
                     char *err, size_t err_len)
{
    if (!t->buf || !t->buf->buffer)
        return nnh_fail(err, err_len, "%s has no buffer", what);
    if (t->dtype != dtype)
        return nnh_fail(err, err_len, "%s is %s, the op was created for %s", what, t->dtype == NN_F16 ? "fp16" : "fp32",
                        dtype == NN_F16 ? "fp16" : "fp32");
    if (t->dst_channels) {
        if (!allow_channel_view)
            return nnh_fail(err, err_len, "%s: this op cannot write into a channel slice", what);
        if (t->shape.ndim < 2 || t->dst_channels < t->shape.d[1])
            return nnh_fail(err, err_len, "%s: channel view of %lld channels holds fewer than the tensor's", what,
                            (long long)t->dst_channels);
    }
    int64_t n = pvk_shape_numel(&t->shape);
    if (n <= 0 || n > UINT32_MAX)
        return nnh_fail(err, err_len, "%s: %lld elements is out of range", what, (long long)n);
    size_t es = t->dtype == NN_F16 ? 2 : 4;
    int64_t span = n;
    if (t->dst_channels)
        span = (t->shape.d[0] - 1) * t->dst_channels * nnh_prod(&t->shape, 2, t->shape.ndim) +
               nnh_prod(&t->shape, 1, t->shape.ndim);
    if ((uint64_t)(t->elem_offset + span) * es > t->buf->size)
        return nnh_fail(err, err_len, "%s: %lld elements from offset %u overrun its %llu-byte buffer", what,
                        (long long)span, t->elem_offset, (unsigned long long)t->buf->size);
    return 0;
}

void nnh_out_blocks(const struct nn_gpu_tensor *t, uint32_t *block, uint32_t *block_stride)
{
    int64_t n = pvk_shape_numel(&t->shape);
    if (!t->dst_channels || t->dst_channels == t->shape.d[1]) {
        *block = *block_stride = (uint32_t)n;
        return;
    }
    int64_t inner = nnh_prod(&t->shape, 2, t->shape.ndim);
    *block = (uint32_t)(t->shape.d[1] * inner);
    *block_stride = (uint32_t)(t->dst_channels * inner);
}

int64_t nnh_prod(const struct pvk_shape *s, int from, int to)
{
    int64_t p = 1;
    for (int i = from; i < to; i++)
        p *= s->d[i];
    return p;
}
