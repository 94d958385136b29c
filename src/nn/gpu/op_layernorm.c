/* LAYERNORM over the last axis: one workgroup per row, fp32 statistics; gamma/beta kept in fp32.
 * The workgroup is sized from the channel count (a model constant): rows of 120 do not need 256
 * invocations. */
#include <stdlib.h>

#include "nn/gpu/op_helpers.h"

struct layernorm_push {
    uint32_t rows, c, has_affine, act;
    float alpha, beta, eps;
    uint32_t x_off, y_off;
};

struct layernorm_state {
    struct nn_gpu_config cfg;
    const struct gpu_pipeline *p;
    struct gpu_buffer gamma, beta;
    int64_t c; /* 0: any (no gamma) */
};

static void layernorm_destroy(void *state)
{
    struct layernorm_state *s = state;
    if (!s)
        return;
    gpu_buffer_free(&s->gamma);
    gpu_buffer_free(&s->beta);
    free(s);
}

static int layernorm_create(const struct nn_gpu_config *cfg, const struct pvk_op *op, const struct nn_gpu_weights *w,
                            void **state, char *err, size_t err_len)
{
    struct layernorm_state *s = calloc(1, sizeof *s);
    if (!s)
        return nnh_fail(err, err_len, "out of memory");
    s->cfg = *cfg;
    int rc = 0;
    if (w && w->data[0]) {
        s->c = pvk_shape_numel(&w->shape[0]);
        float *zeros = NULL;
        const float *beta = w->data[1];
        if (!beta) {
            beta = zeros = calloc((size_t)s->c, sizeof(float));
            if (!zeros)
                rc = nnh_fail(err, err_len, "out of memory");
        } else if (pvk_shape_numel(&w->shape[1]) != s->c) {
            rc = nnh_fail(err, err_len, "%s: gamma and beta sizes differ", op->name);
        }
        if (!rc)
            rc = nnh_upload(cfg->ctx, w->data[0], (size_t)s->c, NN_F32, &s->gamma, err, err_len) ||
                 nnh_upload(cfg->ctx, beta, (size_t)s->c, NN_F32, &s->beta, err, err_len);
        free(zeros);
    } else {
        float one = 1.0f;
        rc = nnh_upload(cfg->ctx, &one, 1, NN_F32, &s->gamma, err, err_len);
    }
    uint32_t local = 32;
    while (local < NNH_WG_REDUCE && (s->c == 0 || local < (uint32_t)s->c))
        local *= 2;
    if (!rc)
        rc = nnh_pipeline(cfg->ctx, NNH_SHADERS_SG(layernorm), nnh_use_subgroups(cfg), cfg->act_dtype, local, NULL, 0,
                          4, sizeof(struct layernorm_push), &s->p, err, err_len);
    if (rc) {
        layernorm_destroy(s);
        return -1;
    }
    *state = s;
    return 0;
}

static int layernorm_record(void *state, const struct pvk_op *op, struct gpu_cmd *cmd, const struct nn_gpu_tensor *in,
                            int n_in, const struct nn_gpu_tensor *out, int n_out, char *err, size_t err_len)
{
    struct layernorm_state *s = state;
    if (n_in != 1 || n_out != 1)
        return nnh_fail(err, err_len, "%s: layernorm takes 1 input and 1 output", op->name);
    if (nnh_check_tensor(&in[0], s->cfg.act_dtype, false, "layernorm input", err, err_len) ||
        nnh_check_tensor(&out[0], s->cfg.act_dtype, false, "layernorm output", err, err_len))
        return -1;
    const struct pvk_shape *xs = &in[0].shape;
    int64_t c = xs->d[xs->ndim - 1];
    if (!pvk_shape_equal(xs, &out[0].shape) || (s->c && c != s->c))
        return nnh_fail(err, err_len, "%s: layernorm over %lld channels got another shape", op->name, (long long)s->c);
    struct layernorm_push pc = {.rows = (uint32_t)(pvk_shape_numel(xs) / c),
                                .c = (uint32_t)c,
                                .has_affine = s->c != 0,
                                .act = op->act,
                                .alpha = op->act_alpha,
                                .beta = op->act_beta,
                                .eps = op->attr.norm.eps,
                                .x_off = in[0].elem_offset,
                                .y_off = out[0].elem_offset};
    uint32_t groups[3];
    nnh_grid_1d(pc.rows, 1, groups);
    struct gpu_binding b[4] = {gpu_bind(in[0].buf), gpu_bind(&s->gamma), gpu_bind(s->c ? &s->beta : &s->gamma),
                               gpu_bind(out[0].buf)};
    return nnh_dispatch(cmd, s->p, b, &pc, groups, op->name, err, err_len);
}

const struct nn_gpu_op_impl nn_gpu_layernorm_impl = {
    .create = layernorm_create, .record = layernorm_record, .destroy = layernorm_destroy};
