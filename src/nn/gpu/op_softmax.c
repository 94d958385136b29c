/* SOFTMAX over any axis: one workgroup per row of x viewed as [outer][len][inner]. */
#include <stdlib.h>

#include "nn/gpu/op_helpers.h"

struct softmax_push {
    uint32_t rows, len, inner, act;
    float alpha, beta;
    uint32_t x_off, y_off;
};

struct softmax_state {
    struct nn_gpu_config cfg;
    const struct gpu_pipeline *p;
};

static int softmax_create(const struct nn_gpu_config *cfg, const struct pvk_op *op, const struct nn_gpu_weights *w,
                          void **state, char *err, size_t err_len)
{
    struct softmax_state *s = calloc(1, sizeof *s);
    if (!s)
        return nnh_fail(err, err_len, "out of memory");
    s->cfg = *cfg;
    if (nnh_pipeline(cfg->ctx, NNH_SHADERS_SG(softmax), nnh_use_subgroups(cfg), cfg->act_dtype, NNH_WG_REDUCE, NULL, 0,
                     2, sizeof(struct softmax_push), &s->p, err, err_len)) {
        free(s);
        return -1;
    }
    *state = s;
    return 0;
}

static int softmax_record(void *state, const struct pvk_op *op, struct gpu_cmd *cmd, const struct nn_gpu_tensor *in,
                          int n_in, const struct nn_gpu_tensor *out, int n_out, char *err, size_t err_len)
{
    struct softmax_state *s = state;
    if (n_in != 1 || n_out != 1)
        return nnh_fail(err, err_len, "%s: softmax takes 1 input and 1 output", op->name);
    if (nnh_check_tensor(&in[0], s->cfg.act_dtype, false, "softmax input", err, err_len) ||
        nnh_check_tensor(&out[0], s->cfg.act_dtype, false, "softmax output", err, err_len))
        return -1;
    const struct pvk_shape *xs = &in[0].shape;
    int axis = op->attr.axis.axis;
    if (axis < 0 || axis >= xs->ndim || !pvk_shape_equal(xs, &out[0].shape))
        return nnh_fail(err, err_len, "%s: softmax axis %d or output shape does not fit", op->name, axis);
    int64_t outer = nnh_prod(xs, 0, axis), inner = nnh_prod(xs, axis + 1, xs->ndim);
    struct softmax_push pc = {.rows = (uint32_t)(outer * inner),
                              .len = (uint32_t)xs->d[axis],
                              .inner = (uint32_t)inner,
                              .act = op->act,
                              .alpha = op->act_alpha,
                              .beta = op->act_beta,
                              .x_off = in[0].elem_offset,
                              .y_off = out[0].elem_offset};
    uint32_t groups[3];
    nnh_grid_1d((uint64_t)pc.rows * NNH_WG_REDUCE, NNH_WG_REDUCE, groups);
    struct gpu_binding b[2] = {gpu_bind(in[0].buf), gpu_bind(out[0].buf)};
    return nnh_dispatch(cmd, s->p, b, &pc, groups, op->name, err, err_len);
}

static void softmax_destroy(void *state)
{
    free(state);
}

const struct nn_gpu_op_impl nn_gpu_softmax_impl = {
    .create = softmax_create, .record = softmax_record, .destroy = softmax_destroy};
