#include "nn/gpu/strided.h"

#include <stdlib.h>

#include "nn/gpu/op_helpers.h"

void nnh_tensor_strides(const struct nn_gpu_tensor *t, int64_t strides[PVK_MAX_DIMS])
{
    int64_t s = 1;
    for (int d = t->shape.ndim - 1; d >= 0; d--) {
        strides[d] = s;
        s *= t->shape.d[d];
    }
    if (t->dst_channels && t->shape.ndim >= 2)
        strides[0] = t->dst_channels * strides[1];
}

void nnh_broadcast_strides(const struct pvk_shape *in, int out_ndim, const int64_t *out_dims,
                           int64_t strides[PVK_MAX_DIMS])
{
    int64_t s = 1;
    for (int d = out_ndim - 1; d >= 0; d--) {
        int k = d - (out_ndim - in->ndim);
        int64_t dim = k >= 0 ? in->d[k] : 1;
        strides[d] = dim == 1 && out_dims[d] != 1 ? 0 : s;
        s *= dim;
    }
}

void nnh_view_collapse(struct nnh_view *v)
{
    struct nnh_view o = {0};
    for (int d = 0; d < v->ndim; d++) {
        if (v->dims[d] == 1)
            continue;
        int j = o.ndim - 1;
        if (j >= 0 && o.stride[0][j] == v->stride[0][d] * v->dims[d] &&
            o.stride[1][j] == v->stride[1][d] * v->dims[d]) {
            o.dims[j] *= v->dims[d];
            o.stride[0][j] = v->stride[0][d];
            o.stride[1][j] = v->stride[1][d];
            continue;
        }
        o.dims[o.ndim] = v->dims[d];
        o.stride[0][o.ndim] = v->stride[0][d];
        o.stride[1][o.ndim] = v->stride[1][d];
        o.ndim++;
    }
    if (o.ndim == 0) {
        o.ndim = 1;
        o.dims[0] = 1;
    }
    *v = o;
}

struct copy_push {
    uint32_t n, ndim, act;
    float alpha, beta;
    uint32_t x_off, y_off;
    uint32_t dims[6], xs[6], ys[6];
};

int nnh_copy_pipeline(const struct nn_gpu_config *cfg, const struct gpu_pipeline **p, char *err, size_t err_len)
{
    return nnh_pipeline(cfg->ctx, NNH_SHADERS(copy), false, cfg->act_dtype, NNH_WG_ELEMENTWISE, NULL, 0, 2,
                        sizeof(struct copy_push), p, err, err_len);
}

int nnh_copy_state_create(const struct nn_gpu_config *cfg, void **state, char *err, size_t err_len)
{
    struct nnh_copy_state *s = calloc(1, sizeof *s);
    if (!s)
        return nnh_fail(err, err_len, "out of memory");
    s->cfg = *cfg;
    if (nnh_copy_pipeline(cfg, &s->p, err, err_len)) {
        free(s);
        return -1;
    }
    *state = s;
    return 0;
}

void nnh_copy_state_destroy(void *state)
{
    free(state);
}

int nnh_record_copy(struct gpu_cmd *cmd, const struct gpu_pipeline *p, const struct gpu_buffer *x, uint32_t x_off,
                    const struct gpu_buffer *y, uint32_t y_off, struct nnh_view *v, const struct pvk_op *op,
                    const char *label, char *err, size_t err_len)
{
    nnh_view_collapse(v);
    struct copy_push pc = {.ndim = (uint32_t)v->ndim,
                           .act = op->act,
                           .alpha = op->act_alpha,
                           .beta = op->act_beta,
                           .x_off = x_off,
                           .y_off = y_off};
    int64_t n = 1;
    for (int d = 0; d < v->ndim; d++) {
        pc.dims[d] = (uint32_t)v->dims[d];
        pc.xs[d] = (uint32_t)v->stride[0][d];
        pc.ys[d] = (uint32_t)v->stride[1][d];
        n *= v->dims[d];
    }
    pc.n = (uint32_t)n;
    uint32_t groups[3];
    nnh_grid_1d((uint64_t)n, NNH_WG_ELEMENTWISE, groups);
    struct gpu_binding b[2] = {gpu_bind(x), gpu_bind(y)};
    return nnh_dispatch(cmd, p, b, &pc, groups, label, err, err_len);
}
