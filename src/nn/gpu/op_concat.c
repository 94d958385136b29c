/* CONCAT: the copy fallback, one dispatch per input writing its slab of the output. The planner
 * avoids it where producers write straight into channel slices (dst_channels). */
#include <stdlib.h>

#include "nn/gpu/op_helpers.h"
#include "nn/gpu/strided.h"

static int concat_create(const struct nn_gpu_config *cfg, const struct pvk_op *op, const struct nn_gpu_weights *w,
                         void **state, char *err, size_t err_len)
{
    return nnh_copy_state_create(cfg, state, err, err_len);
}

static int concat_record(void *state, const struct pvk_op *op, struct gpu_cmd *cmd, const struct nn_gpu_tensor *in,
                         int n_in, const struct nn_gpu_tensor *out, int n_out, char *err, size_t err_len)
{
    struct nnh_copy_state *s = state;
    int axis = op->attr.axis.axis;
    const struct nn_gpu_tensor *y = &out[0];
    if (n_in < 1 || n_out != 1)
        return nnh_fail(err, err_len, "%s: concat takes 1 or more inputs and 1 output", op->name);
    if (nnh_check_tensor(y, s->cfg.act_dtype, true, "concat output", err, err_len))
        return -1;
    if (axis < 0 || axis >= y->shape.ndim)
        return nnh_fail(err, err_len, "%s: concat axis %d out of range", op->name, axis);
    int64_t ys[PVK_MAX_DIMS], at = 0;
    nnh_tensor_strides(y, ys);
    for (int i = 0; i < n_in; i++) {
        const struct pvk_shape *xs = &in[i].shape;
        if (nnh_check_tensor(&in[i], s->cfg.act_dtype, false, "concat input", err, err_len))
            return -1;
        if (xs->ndim != y->shape.ndim)
            return nnh_fail(err, err_len, "%s: concat input %d has another rank", op->name, i);
        struct nnh_view v = {.ndim = xs->ndim};
        int64_t s1 = 1;
        for (int d = xs->ndim - 1; d >= 0; d--) {
            if (d != axis && xs->d[d] != y->shape.d[d])
                return nnh_fail(err, err_len, "%s: concat input %d differs off the axis", op->name, i);
            v.dims[d] = xs->d[d];
            v.stride[0][d] = s1;
            v.stride[1][d] = ys[d];
            s1 *= xs->d[d];
        }
        if (at + xs->d[axis] > y->shape.d[axis])
            return nnh_fail(err, err_len, "%s: concat inputs overrun the output", op->name);
        uint32_t y_off = y->elem_offset + (uint32_t)(at * ys[axis]);
        if (nnh_record_copy(cmd, s->p, in[i].buf, in[i].elem_offset, y->buf, y_off, &v, op, op->name, err, err_len))
            return -1;
        at += xs->d[axis];
    }
    if (at != y->shape.d[axis])
        return nnh_fail(err, err_len, "%s: concat inputs do not fill the output", op->name);
    return 0;
}

const struct nn_gpu_op_impl nn_gpu_concat_impl = {
    .create = concat_create, .record = concat_record, .destroy = nnh_copy_state_destroy};
