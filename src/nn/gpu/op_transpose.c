/* TRANSPOSE: any permutation of up to 6 dims as one strided copy (dims that stay contiguous are
 * merged first, so e.g. [0, 2, 1, 3] runs as a 3-D copy). */
#include <stdlib.h>

#include "nn/gpu/op_helpers.h"
#include "nn/gpu/strided.h"

static int transpose_create(const struct nn_gpu_config *cfg, const struct pvk_op *op, const struct nn_gpu_weights *w,
                            void **state, char *err, size_t err_len)
{
    int nd = op->attr.transpose.ndim;
    unsigned seen = 0;
    if (nd < 1 || nd > PVK_MAX_DIMS)
        return nnh_fail(err, err_len, "%s: transpose of %d dims", op->name, nd);
    for (int i = 0; i < nd; i++) {
        int q = op->attr.transpose.perm[i];
        if (q < 0 || q >= nd || (seen & (1u << q)))
            return nnh_fail(err, err_len, "%s: transpose perm is not a permutation", op->name);
        seen |= 1u << q;
    }
    return nnh_copy_state_create(cfg, state, err, err_len);
}

static int transpose_record(void *state, const struct pvk_op *op, struct gpu_cmd *cmd, const struct nn_gpu_tensor *in,
                            int n_in, const struct nn_gpu_tensor *out, int n_out, char *err, size_t err_len)
{
    struct nnh_copy_state *s = state;
    if (n_in != 1 || n_out != 1)
        return nnh_fail(err, err_len, "%s: transpose takes 1 input and 1 output", op->name);
    if (nnh_check_tensor(&in[0], s->cfg.act_dtype, false, "transpose input", err, err_len) ||
        nnh_check_tensor(&out[0], s->cfg.act_dtype, true, "transpose output", err, err_len))
        return -1;
    const struct pvk_shape *xs = &in[0].shape, *ys = &out[0].shape;
    int nd = op->attr.transpose.ndim;
    if (xs->ndim != nd || ys->ndim != nd)
        return nnh_fail(err, err_len, "%s: transpose rank differs from its perm", op->name);
    int64_t xst[PVK_MAX_DIMS], yst[PVK_MAX_DIMS];
    nnh_tensor_strides(&in[0], xst);
    nnh_tensor_strides(&out[0], yst);
    struct nnh_view v = {.ndim = nd};
    for (int d = 0; d < nd; d++) {
        int q = op->attr.transpose.perm[d];
        if (ys->d[d] != xs->d[q])
            return nnh_fail(err, err_len, "%s: transpose output shape does not match", op->name);
        v.dims[d] = ys->d[d];
        v.stride[0][d] = xst[q];
        v.stride[1][d] = yst[d];
    }
    return nnh_record_copy(cmd, s->p, in[0].buf, in[0].elem_offset, out[0].buf, out[0].elem_offset, &v, op, op->name,
                           err, err_len);
}

const struct nn_gpu_op_impl nn_gpu_transpose_impl = {
    .create = transpose_create, .record = transpose_record, .destroy = nnh_copy_state_destroy};
