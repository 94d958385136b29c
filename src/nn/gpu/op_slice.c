/* SLICE: one axis, positive step, as a strided copy. */
#include <stdlib.h>

#include "nn/gpu/op_helpers.h"
#include "nn/gpu/strided.h"
#include "nn/shape.h"

static int slice_create(const struct nn_gpu_config *cfg, const struct pvk_op *op, const struct nn_gpu_weights *w,
                        void **state, char *err, size_t err_len)
{
    if (op->attr.slice.step < 1)
        return nnh_fail(err, err_len, "%s: slice step %d (only positive steps)", op->name, op->attr.slice.step);
    return nnh_copy_state_create(cfg, state, err, err_len);
}

static int slice_record(void *state, const struct pvk_op *op, struct gpu_cmd *cmd, const struct nn_gpu_tensor *in,
                        int n_in, const struct nn_gpu_tensor *out, int n_out, char *err, size_t err_len)
{
    struct nnh_copy_state *s = state;
    if (n_in != 1 || n_out != 1)
        return nnh_fail(err, err_len, "%s: slice takes 1 input and 1 output", op->name);
    if (nnh_check_tensor(&in[0], s->cfg.act_dtype, false, "slice input", err, err_len) ||
        nnh_check_tensor(&out[0], s->cfg.act_dtype, true, "slice output", err, err_len))
        return -1;
    int axis = op->attr.slice.axis;
    struct pvk_shape want;
    int64_t first;
    if (axis < 0 || axis >= in[0].shape.ndim ||
        pvk_slice_out_shape(&in[0].shape, axis, op->attr.slice.start, op->attr.slice.end, op->attr.slice.step, &want,
                            &first) ||
        !pvk_shape_equal(&want, &out[0].shape))
        return nnh_fail(err, err_len, "%s: slice output shape does not match", op->name);
    int64_t xst[PVK_MAX_DIMS], yst[PVK_MAX_DIMS];
    nnh_tensor_strides(&in[0], xst);
    nnh_tensor_strides(&out[0], yst);
    struct nnh_view v = {.ndim = want.ndim};
    for (int d = 0; d < want.ndim; d++) {
        v.dims[d] = want.d[d];
        v.stride[0][d] = d == axis ? xst[d] * op->attr.slice.step : xst[d];
        v.stride[1][d] = yst[d];
    }
    uint32_t x_off = in[0].elem_offset + (uint32_t)(first * xst[axis]);
    return nnh_record_copy(cmd, s->p, in[0].buf, x_off, out[0].buf, out[0].elem_offset, &v, op, op->name, err, err_len);
}

const struct nn_gpu_op_impl nn_gpu_slice_impl = {
    .create = slice_create, .record = slice_record, .destroy = nnh_copy_state_destroy};
