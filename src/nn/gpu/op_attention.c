/* ATTENTION: packed qkv [N][T][3C] -> [N][T][C], softmax(q k^T scale) v per head. One workgroup per
 * (block of ATT_WG query rows, head, n) with keys and values staged in shared memory; head dims up
 * to ATT_HD_MAX (the rec net: C = 120, 8 heads, hd = 15). The head dim is a specialisation constant:
 * it follows from the model's qkv width, which the op only learns from its first recording, so the
 * pipeline is picked there (one per head dim, i.e. one per op in practice, never per input shape). */
#include <stdlib.h>

#include "nn/gpu/op_helpers.h"

#define ATT_WG 64u
#define ATT_HD_MAX 64u

struct attention_push {
    uint32_t t, c, act;
    float scale, alpha, beta;
    uint32_t x_off, y_off;
};

struct attention_state {
    struct nn_gpu_config cfg;
    const struct gpu_pipeline *p;
    uint32_t hd; /* of p; 0 before the first recording */
};

static int attention_create(const struct nn_gpu_config *cfg, const struct pvk_op *op, const struct nn_gpu_weights *w,
                            void **state, char *err, size_t err_len)
{
    if (op->attr.attention.heads < 1)
        return nnh_fail(err, err_len, "%s: attention with %d heads", op->name, op->attr.attention.heads);
    struct attention_state *s = calloc(1, sizeof *s);
    if (!s)
        return nnh_fail(err, err_len, "out of memory");
    s->cfg = *cfg;
    *state = s;
    return 0;
}

static int attention_record(void *state, const struct pvk_op *op, struct gpu_cmd *cmd, const struct nn_gpu_tensor *in,
                            int n_in, const struct nn_gpu_tensor *out, int n_out, char *err, size_t err_len)
{
    struct attention_state *s = state;
    if (n_in != 1 || n_out != 1)
        return nnh_fail(err, err_len, "%s: attention takes 1 input and 1 output", op->name);
    if (nnh_check_tensor(&in[0], s->cfg.act_dtype, false, "attention input", err, err_len) ||
        nnh_check_tensor(&out[0], s->cfg.act_dtype, false, "attention output", err, err_len))
        return -1;
    const struct pvk_shape *xs = &in[0].shape, *ys = &out[0].shape;
    int heads = op->attr.attention.heads;
    if (xs->ndim != 3 || ys->ndim != 3 || xs->d[2] % 3 || ys->d[0] != xs->d[0] || ys->d[1] != xs->d[1] ||
        ys->d[2] * 3 != xs->d[2] || ys->d[2] % heads)
        return nnh_fail(err, err_len, "%s: attention needs qkv [N, T, 3C] -> [N, T, C] with C a multiple of %d heads",
                        op->name, heads);
    int64_t hd = ys->d[2] / heads;
    if (hd > ATT_HD_MAX)
        return nnh_fail(err, err_len, "%s: head dim %lld exceeds the kernel's %u", op->name, (long long)hd, ATT_HD_MAX);
    if (s->hd != (uint32_t)hd) {
        uint32_t spec = (uint32_t)hd;
        if (nnh_pipeline(s->cfg.ctx, NNH_SHADERS(attention), false, s->cfg.act_dtype, ATT_WG, &spec, 1, 2,
                         sizeof(struct attention_push), &s->p, err, err_len))
            return -1;
        s->hd = spec;
    }
    struct attention_push pc = {.t = (uint32_t)xs->d[1],
                                .c = (uint32_t)ys->d[2],
                                .act = op->act,
                                .scale = op->attr.attention.scale,
                                .alpha = op->act_alpha,
                                .beta = op->act_beta,
                                .x_off = in[0].elem_offset,
                                .y_off = out[0].elem_offset};
    uint32_t groups[3] = {(pc.t + ATT_WG - 1) / ATT_WG, (uint32_t)heads, (uint32_t)xs->d[0]};
    struct gpu_binding b[2] = {gpu_bind(in[0].buf), gpu_bind(out[0].buf)};
    return nnh_dispatch(cmd, s->p, b, &pc, groups, op->name, err, err_len);
}

static void attention_destroy(void *state)
{
    free(state);
}

const struct nn_gpu_op_impl nn_gpu_attention_impl = {
    .create = attention_create, .record = attention_record, .destroy = attention_destroy};
