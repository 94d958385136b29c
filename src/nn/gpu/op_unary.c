/* UNARY: y = act(x), e.g. a stand-alone Sigmoid; binary.glsl's copy mode. */
#include <stdlib.h>

#include "nn/gpu/op_binary.h"
#include "nn/gpu/op_helpers.h"

struct unary_state {
    struct nn_gpu_config cfg;
    struct nnh_binary_pipes p;
};

static int unary_create(const struct nn_gpu_config *cfg, const struct pvk_op *op, const struct nn_gpu_weights *w,
                        void **state, char *err, size_t err_len)
{
    if (op->act >= PVK_ACT_COUNT)
        return nnh_fail(err, err_len, "%s: unknown activation %u", op->name, op->act);
    struct unary_state *s = calloc(1, sizeof *s);
    if (!s)
        return nnh_fail(err, err_len, "out of memory");
    s->cfg = *cfg;
    if (nnh_binary_pipeline(cfg, &s->p, err, err_len)) {
        free(s);
        return -1;
    }
    *state = s;
    return 0;
}

static int unary_record(void *state, const struct pvk_op *op, struct gpu_cmd *cmd, const struct nn_gpu_tensor *in,
                        int n_in, const struct nn_gpu_tensor *out, int n_out, char *err, size_t err_len)
{
    struct unary_state *s = state;
    if (n_in != 1 || n_out != 1)
        return nnh_fail(err, err_len, "%s: unary takes 1 input and 1 output", op->name);
    if (nnh_check_tensor(&in[0], s->cfg.act_dtype, false, "unary input", err, err_len) ||
        nnh_check_tensor(&out[0], s->cfg.act_dtype, true, "unary output", err, err_len))
        return -1;
    if (pvk_shape_numel(&in[0].shape) != pvk_shape_numel(&out[0].shape))
        return nnh_fail(err, err_len, "%s: input and output sizes differ", op->name);
    return nnh_record_binary(cmd, &s->p, NNH_BINARY_COPY, &in[0], NULL, 0, NULL, &out[0], op, err, err_len);
}

static void unary_destroy(void *state)
{
    free(state);
}

const struct nn_gpu_op_impl nn_gpu_unary_impl = {
    .create = unary_create, .record = unary_record, .destroy = unary_destroy};
