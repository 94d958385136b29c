/* ARGMAX over the last axis: out0 int32 index of the first maximum, out1 the maximum or its softmax
 * probability (attr.argmax.value; in the storage precision), one workgroup per row. */
#include <stdlib.h>

#include "gpu/context.h"
#include "nn/gpu/op_helpers.h"

struct argmax_push {
    uint32_t rows, c, x_off, i_off, v_off;
};

struct argmax_state {
    struct nn_gpu_config cfg;
    const struct gpu_pipeline *p;
};

static int argmax_create(const struct nn_gpu_config *cfg, const struct pvk_op *op, const struct nn_gpu_weights *w,
                         void **state, char *err, size_t err_len)
{
    const int32_t value = op->attr.argmax.value;
    if (value != PVK_ARGMAX_VALUE_MAX && value != PVK_ARGMAX_VALUE_SOFTMAX)
        return nnh_fail(err, err_len, "%s: unknown argmax value %d", op->name, value);
    struct argmax_state *s = calloc(1, sizeof *s);
    if (!s)
        return nnh_fail(err, err_len, "out of memory");
    s->cfg = *cfg;
    const uint32_t softmax = value == PVK_ARGMAX_VALUE_SOFTMAX;
    if (nnh_pipeline(cfg->ctx, NNH_SHADERS_SG(argmax), nnh_use_subgroups(cfg), cfg->act_dtype, NNH_WG_REDUCE, &softmax,
                     1, 3, sizeof(struct argmax_push), &s->p, err, err_len)) {
        free(s);
        return -1;
    }
    *state = s;
    return 0;
}

static int argmax_record(void *state, const struct pvk_op *op, struct gpu_cmd *cmd, const struct nn_gpu_tensor *in,
                         int n_in, const struct nn_gpu_tensor *out, int n_out, char *err, size_t err_len)
{
    struct argmax_state *s = state;
    if (n_in != 1 || n_out != 2)
        return nnh_fail(err, err_len, "%s: argmax takes 1 input and 2 outputs (index, value)", op->name);
    if (nnh_check_tensor(&in[0], s->cfg.act_dtype, false, "argmax input", err, err_len) ||
        nnh_check_tensor(&out[0], NN_I32, false, "argmax index", err, err_len) ||
        nnh_check_tensor(&out[1], s->cfg.act_dtype, false, "argmax value", err, err_len))
        return -1;
    const struct pvk_shape *xs = &in[0].shape;
    int64_t c = xs->d[xs->ndim - 1], rows = pvk_shape_numel(xs) / c;
    if (pvk_shape_numel(&out[0].shape) != rows || pvk_shape_numel(&out[1].shape) != rows)
        return nnh_fail(err, err_len, "%s: argmax outputs must hold one element per row", op->name);
    struct argmax_push pc = {(uint32_t)rows, (uint32_t)c, in[0].elem_offset, out[0].elem_offset, out[1].elem_offset};
    uint32_t groups[3];
    nnh_grid_1d((uint64_t)rows, 1, groups);
    struct gpu_binding b[3] = {gpu_bind(in[0].buf), gpu_bind(out[0].buf), gpu_bind(out[1].buf)};
    /* Outputs that start on the device's storage offset alignment are bound as exactly their
     * rows, so that argmaxes into disjoint rows of one buffer need no barrier between them. */
    const uint64_t align = gpu_context_caps(s->cfg.ctx)->min_storage_buffer_offset_alignment;
    const VkDeviceSize value_size = out[1].dtype == NN_F16 ? 2 : 4, index_at = (VkDeviceSize)out[0].elem_offset * 4,
                       value_at = (VkDeviceSize)out[1].elem_offset * value_size;
    if (align && index_at % align == 0 && value_at % align == 0) {
        b[1] = gpu_bind_range(out[0].buf, index_at, (VkDeviceSize)rows * 4);
        b[2] = gpu_bind_range(out[1].buf, value_at, (VkDeviceSize)rows * value_size);
        pc.i_off = pc.v_off = 0;
    }
    return nnh_dispatch(cmd, s->p, b, &pc, groups, op->name, err, err_len);
}

static void argmax_destroy(void *state)
{
    free(state);
}

const struct nn_gpu_op_impl nn_gpu_argmax_impl = {
    .create = argmax_create, .record = argmax_record, .destroy = argmax_destroy};
