/* POOL2D: max / average windows (pool.glsl, one invocation per output) and global average
 * (pool_global.glsl, one workgroup per plane, or one invocation per plane on CPU devices and for
 * small planes; fp32 accumulation). */
#include <stdlib.h>

#include "nn/gpu/op_helpers.h"
#include "nn/shape.h"

struct pool_push {
    uint32_t n, h, w, oh, ow;
    int32_t kh, kw, sh, sw, pad_t, pad_l, pad_b, pad_r;
    uint32_t is_max, count_include_pad, act;
    float alpha, beta;
    uint32_t x_off, y_off, y_block, y_block_stride;
};

struct global_push {
    uint32_t planes, plane_size, act;
    float alpha, beta;
    uint32_t x_off, y_off, y_block, y_block_stride;
};

/* Planes up to this size take one invocation each on GPUs too: a workgroup of 256 over cls's
 * 6,400 planes of 48 left 208 invocations of each idle, and was slower (BENCHMARKS.md). */
#define POOL_SERIAL_PLANE 128u

struct pool_state {
    struct nn_gpu_config cfg;
    struct pvk_pool_params prm;
    const struct gpu_pipeline *p;
    const struct gpu_pipeline *serial_p; /* global average, one invocation per plane */
    bool serial;                         /* global average: every plane serial */
    bool small_serial;                   /* global average: small planes serial */
};

static int pool_create(const struct nn_gpu_config *cfg, const struct pvk_op *op, const struct nn_gpu_weights *w,
                       void **state, char *err, size_t err_len)
{
    struct pool_state *s = calloc(1, sizeof *s);
    if (!s)
        return nnh_fail(err, err_len, "out of memory");
    s->cfg = *cfg;
    pvk_pool_params_from_op(op, &s->prm);
    int rc;
    if (s->prm.kind == PVK_POOL_GLOBAL_AVG) {
        s->serial = nnh_serial_reductions(cfg);
        s->small_serial = !nnh_workgroup_reductions_forced(cfg);
        bool sg = !s->serial && nnh_use_subgroups(cfg);
        rc = nnh_pipeline(cfg->ctx, NNH_SHADERS(pool_global_serial), false, cfg->act_dtype, NNH_WG_ELEMENTWISE, NULL, 0,
                          2, sizeof(struct global_push), &s->serial_p, err, err_len);
        if (!rc && !s->serial)
            rc = nnh_pipeline(cfg->ctx, NNH_SHADERS_SG(pool_global), sg, cfg->act_dtype, NNH_WG_REDUCE, NULL, 0, 2,
                              sizeof(struct global_push), &s->p, err, err_len);
    } else if (s->prm.kind == PVK_POOL_MAX || s->prm.kind == PVK_POOL_AVG) {
        if (s->prm.kh < 1 || s->prm.kw < 1 || s->prm.sh < 1 || s->prm.sw < 1)
            rc = nnh_fail(err, err_len, "%s: bad pooling window", op->name);
        else
            rc = nnh_pipeline(cfg->ctx, NNH_SHADERS(pool), false, cfg->act_dtype, NNH_WG_ELEMENTWISE, NULL, 0, 2,
                              sizeof(struct pool_push), &s->p, err, err_len);
    } else {
        rc = nnh_fail(err, err_len, "%s: unknown pooling kind %d", op->name, s->prm.kind);
    }
    if (rc) {
        free(s);
        return -1;
    }
    *state = s;
    return 0;
}

static int pool_record(void *state, const struct pvk_op *op, struct gpu_cmd *cmd, const struct nn_gpu_tensor *in,
                       int n_in, const struct nn_gpu_tensor *out, int n_out, char *err, size_t err_len)
{
    struct pool_state *s = state;
    if (n_in != 1 || n_out != 1)
        return nnh_fail(err, err_len, "%s: pool takes 1 input and 1 output", op->name);
    if (nnh_check_tensor(&in[0], s->cfg.act_dtype, false, "pool input", err, err_len) ||
        nnh_check_tensor(&out[0], s->cfg.act_dtype, true, "pool output", err, err_len))
        return -1;
    const struct pvk_shape *is = &in[0].shape, *os = &out[0].shape;
    int oh, ow;
    if (is->ndim != 4 || os->ndim != 4 || pvk_pool2d_out_hw((int)is->d[2], (int)is->d[3], &s->prm, &oh, &ow) ||
        os->d[0] != is->d[0] || os->d[1] != is->d[1] || os->d[2] != oh || os->d[3] != ow)
        return nnh_fail(err, err_len, "%s: pool output shape does not match its input", op->name);
    struct gpu_binding b[2] = {gpu_bind(in[0].buf), gpu_bind(out[0].buf)};
    uint32_t groups[3];
    if (s->prm.kind == PVK_POOL_GLOBAL_AVG) {
        struct global_push pc = {.planes = (uint32_t)(is->d[0] * is->d[1]),
                                 .plane_size = (uint32_t)(is->d[2] * is->d[3]),
                                 .act = op->act,
                                 .alpha = op->act_alpha,
                                 .beta = op->act_beta,
                                 .x_off = in[0].elem_offset,
                                 .y_off = out[0].elem_offset};
        nnh_out_blocks(&out[0], &pc.y_block, &pc.y_block_stride);
        if (s->serial || (s->small_serial && pc.plane_size <= POOL_SERIAL_PLANE)) {
            nnh_grid_1d(pc.planes, NNH_WG_ELEMENTWISE, groups);
            return nnh_dispatch(cmd, s->serial_p, b, &pc, groups, op->name, err, err_len);
        }
        nnh_grid_1d((uint64_t)pc.planes * NNH_WG_REDUCE, NNH_WG_REDUCE, groups);
        return nnh_dispatch(cmd, s->p, b, &pc, groups, op->name, err, err_len);
    }
    struct pool_push pc = {.n = (uint32_t)pvk_shape_numel(os),
                           .h = (uint32_t)is->d[2],
                           .w = (uint32_t)is->d[3],
                           .oh = (uint32_t)oh,
                           .ow = (uint32_t)ow,
                           .kh = s->prm.kh,
                           .kw = s->prm.kw,
                           .sh = s->prm.sh,
                           .sw = s->prm.sw,
                           .pad_t = s->prm.pad_t,
                           .pad_l = s->prm.pad_l,
                           .pad_b = s->prm.pad_b,
                           .pad_r = s->prm.pad_r,
                           .is_max = s->prm.kind == PVK_POOL_MAX,
                           .count_include_pad = s->prm.count_include_pad != 0,
                           .act = op->act,
                           .alpha = op->act_alpha,
                           .beta = op->act_beta,
                           .x_off = in[0].elem_offset,
                           .y_off = out[0].elem_offset};
    nnh_out_blocks(&out[0], &pc.y_block, &pc.y_block_stride);
    nnh_grid_1d(pc.n, NNH_WG_ELEMENTWISE, groups);
    return nnh_dispatch(cmd, s->p, b, &pc, groups, op->name, err, err_len);
}

static void pool_destroy(void *state)
{
    free(state);
}

const struct nn_gpu_op_impl nn_gpu_pool2d_impl = {
    .create = pool_create, .record = pool_record, .destroy = pool_destroy};
