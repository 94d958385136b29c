/* RESHAPE: data never moves. The planner aliases the output to the input's storage (same buffer
 * and elem_offset, another shape) when the op has no activation, and then this records nothing;
 * otherwise (separate storage, or a fused activation, then in place) it records one dense copy
 * y = act(x). */
#include <stdlib.h>

#include "nn/gpu/op_helpers.h"
#include "nn/gpu/strided.h"

static int reshape_create(const struct nn_gpu_config *cfg, const struct pvk_op *op, const struct nn_gpu_weights *w,
                          void **state, char *err, size_t err_len)
{
    return nnh_copy_state_create(cfg, state, err, err_len);
}

static int reshape_record(void *state, const struct pvk_op *op, struct gpu_cmd *cmd, const struct nn_gpu_tensor *in,
                          int n_in, const struct nn_gpu_tensor *out, int n_out, char *err, size_t err_len)
{
    struct nnh_copy_state *s = state;
    if (n_in != 1 || n_out != 1)
        return nnh_fail(err, err_len, "%s: reshape takes 1 input and 1 output", op->name);
    if (nnh_check_tensor(&in[0], s->cfg.act_dtype, false, "reshape input", err, err_len) ||
        nnh_check_tensor(&out[0], s->cfg.act_dtype, false, "reshape output", err, err_len))
        return -1;
    int64_t n = pvk_shape_numel(&in[0].shape);
    if (n != pvk_shape_numel(&out[0].shape))
        return nnh_fail(err, err_len, "%s: reshape changes the element count", op->name);
    bool aliased = in[0].buf->buffer == out[0].buf->buffer && in[0].buf->offset == out[0].buf->offset &&
                   in[0].elem_offset == out[0].elem_offset;
    if (aliased && op->act == PVK_ACT_NONE)
        return 0;
    /* aliased with an activation: each invocation reads and then writes only its own element, so
     * the copy runs in place */
    struct nnh_view v = {.ndim = 1, .dims = {n}, .stride = {{1}, {1}}};
    return nnh_record_copy(cmd, s->p, in[0].buf, in[0].elem_offset, out[0].buf, out[0].elem_offset, &v, op, op->name,
                           err, err_len);
}

const struct nn_gpu_op_impl nn_gpu_reshape_impl = {
    .create = reshape_create, .record = reshape_record, .destroy = nnh_copy_state_destroy};
