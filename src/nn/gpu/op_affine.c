/* AFFINE: y = act(x scale[c] + shift[c]) on axis 1 (a folded BatchNorm standing alone). */
#include <stdlib.h>

#include "nn/gpu/op_affine.h"
#include "nn/gpu/op_helpers.h"

struct affine_push {
    uint32_t n, c, inner, act;
    float alpha, beta, scale_add;
    uint32_t has_shift, scale_outer_stride;
    uint32_t x_off, y_off, y_block, y_block_stride;
};

struct affine_state {
    struct nn_gpu_config cfg;
    struct nnh_affine_pipes p;
    struct gpu_buffer scale, shift;
    int64_t c;
};

int nnh_affine_pipeline(const struct nn_gpu_config *cfg, struct nnh_affine_pipes *p, char *err, size_t err_len)
{
    return nnh_arith_pipeline(cfg, NNH_SHADERS_F16A(affine), NNH_WG_ELEMENTWISE, 4, sizeof(struct affine_push),
                              &p->scalar, err, err_len) ||
           nnh_arith_pipeline(cfg, NNH_SHADERS_F16A(affine_vec4), NNH_WG_ELEMENTWISE, 4, sizeof(struct affine_push),
                              &p->vec4, err, err_len);
}

int nnh_record_affine(struct gpu_cmd *cmd, const struct nnh_affine_pipes *p, const struct nn_gpu_tensor *x,
                      const struct gpu_buffer *scale, uint32_t scale_outer_stride, float scale_add,
                      const struct gpu_buffer *shift, const struct nn_gpu_tensor *y, const struct pvk_op *op,
                      const char *label, char *err, size_t err_len)
{
    const struct pvk_shape *s = &x->shape;
    struct affine_push pc = {.n = (uint32_t)pvk_shape_numel(s),
                             .c = (uint32_t)s->d[1],
                             .inner = (uint32_t)nnh_prod(s, 2, s->ndim),
                             .act = op->act,
                             .alpha = op->act_alpha,
                             .beta = op->act_beta,
                             .scale_add = scale_add,
                             .has_shift = shift != NULL,
                             .scale_outer_stride = scale_outer_stride,
                             .x_off = x->elem_offset,
                             .y_off = y->elem_offset};
    nnh_out_blocks(y, &pc.y_block, &pc.y_block_stride);
    /* four elements of one channel per invocation when every index stays a multiple of 4 */
    const struct gpu_pipeline *pipe = p->scalar;
    if (pc.inner % 4 == 0 && pc.x_off % 4 == 0 && pc.y_off % 4 == 0 && pc.y_block % 4 == 0 &&
        pc.y_block_stride % 4 == 0) {
        pipe = p->vec4;
        pc.n /= 4, pc.x_off /= 4, pc.y_off /= 4, pc.y_block /= 4, pc.y_block_stride /= 4;
    }
    uint32_t groups[3];
    nnh_grid_1d(pc.n, NNH_WG_ELEMENTWISE, groups);
    struct gpu_binding b[4] = {gpu_bind(x->buf), gpu_bind(scale), gpu_bind(shift ? shift : scale), gpu_bind(y->buf)};
    return nnh_dispatch(cmd, pipe, b, &pc, groups, label, err, err_len);
}

static void affine_destroy(void *state)
{
    struct affine_state *s = state;
    if (!s)
        return;
    gpu_buffer_free(&s->scale);
    gpu_buffer_free(&s->shift);
    free(s);
}

static int affine_create(const struct nn_gpu_config *cfg, const struct pvk_op *op, const struct nn_gpu_weights *w,
                         void **state, char *err, size_t err_len)
{
    if (!w || !w->data[0] || !w->data[1])
        return nnh_fail(err, err_len, "%s: affine needs scale and shift", op->name);
    int64_t c = pvk_shape_numel(&w->shape[0]);
    if (c <= 0 || pvk_shape_numel(&w->shape[1]) != c)
        return nnh_fail(err, err_len, "%s: scale and shift sizes differ", op->name);
    struct affine_state *s = calloc(1, sizeof *s);
    if (!s)
        return nnh_fail(err, err_len, "out of memory");
    s->cfg = *cfg;
    s->c = c;
    if (nnh_affine_pipeline(cfg, &s->p, err, err_len) ||
        nnh_upload(cfg->ctx, w->data[0], (size_t)c, NN_F32, &s->scale, err, err_len) ||
        nnh_upload(cfg->ctx, w->data[1], (size_t)c, NN_F32, &s->shift, err, err_len)) {
        affine_destroy(s);
        return -1;
    }
    *state = s;
    return 0;
}

static int affine_record(void *state, const struct pvk_op *op, struct gpu_cmd *cmd, const struct nn_gpu_tensor *in,
                         int n_in, const struct nn_gpu_tensor *out, int n_out, char *err, size_t err_len)
{
    struct affine_state *s = state;
    if (n_in != 1 || n_out != 1)
        return nnh_fail(err, err_len, "%s: affine takes 1 input and 1 output", op->name);
    if (nnh_check_tensor(&in[0], s->cfg.act_dtype, false, "affine input", err, err_len) ||
        nnh_check_tensor(&out[0], s->cfg.act_dtype, true, "affine output", err, err_len))
        return -1;
    if (in[0].shape.ndim < 2 || in[0].shape.d[1] != s->c || !pvk_shape_equal(&in[0].shape, &out[0].shape))
        return nnh_fail(err, err_len, "%s: affine over %lld channels got another shape", op->name, (long long)s->c);
    return nnh_record_affine(cmd, &s->p, &in[0], &s->scale, 0, 0.0f, &s->shift, &out[0], op, op->name, err, err_len);
}

const struct nn_gpu_op_impl nn_gpu_affine_impl = {
    .create = affine_create, .record = affine_record, .destroy = affine_destroy};
