#include "nn/gpu/gpu_op.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/gpu/op_se.h"

/* The one op table: enum pvk_op_type -> implementation. */
#define IMPL_ROW(id, value, name, max_in, max_out) [PVK_OP_##id] = &nn_gpu_##name##_impl,
static const struct nn_gpu_op_impl *const impls[PVK_OP_COUNT] = {PVK_OPS(IMPL_ROW)};
#undef IMPL_ROW

struct nn_gpu_overrides nn_gpu_overrides_from_env(void)
{
    struct nn_gpu_overrides o = {{0}, false, NN_REDUCE_AUTO};
    const char *kernel = getenv("PPOCR_VK_GEMM_KERNEL");
    const char *no_subgroups = getenv("PPOCR_VK_NO_SUBGROUPS");
    const char *reduce = getenv("PPOCR_VK_REDUCE");
    if (kernel)
        snprintf(o.gemm_kernel, sizeof o.gemm_kernel, "%s", kernel);
    o.no_subgroups = no_subgroups && no_subgroups[0] == '1';
    if (reduce && !strcmp(reduce, "serial"))
        o.reduce = NN_REDUCE_SERIAL;
    else if (reduce && !strcmp(reduce, "workgroup"))
        o.reduce = NN_REDUCE_WORKGROUP;
    return o;
}

struct nn_gpu_op {
    const struct nn_gpu_op_impl *impl;
    const struct pvk_op *op;
    void *state;
};

int nn_gpu_op_create(const struct nn_gpu_config *cfg, const struct pvk_op *op, const struct nn_gpu_weights *w,
                     struct nn_gpu_op **out, char *err, size_t err_len)
{
    *out = NULL;
    if (op->type >= PVK_OP_COUNT || !impls[op->type]) {
        snprintf(err, err_len, "op type %u has no GPU implementation", op->type);
        return -1;
    }
    /* Fusions exist only where a kernel implements them. */
    if (((w->post_scale || w->post_shift) && op->type != PVK_OP_CONV2D) ||
        (w->input_gate && op->type != PVK_OP_CONV2D && op->type != PVK_OP_RESIZE) ||
        ((w->gated_inputs || w->upsampled_inputs) && op->type != PVK_OP_BINARY)) {
        snprintf(err, err_len, "%s cannot apply a fused affine, gate or upsampling", pvk_op_type_name(op->type));
        return -1;
    }
    struct nn_gpu_op *g = calloc(1, sizeof(*g));
    if (!g) {
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    g->impl = impls[op->type];
    g->op = op;
    if (g->impl->create(cfg, op, w, &g->state, err, err_len)) {
        free(g);
        return -1;
    }
    *out = g;
    return 0;
}

int nn_gpu_op_record(struct nn_gpu_op *op, struct gpu_cmd *cmd, const struct nn_gpu_tensor *inputs, int n_inputs,
                     const struct nn_gpu_tensor *outputs, int n_outputs, char *err, size_t err_len)
{
    return op->impl->record(op->state, op->op, cmd, inputs, n_inputs, outputs, n_outputs, err, err_len);
}

int nn_gpu_op_phases(const struct nn_gpu_op *op, bool gate_only)
{
    if (gate_only)
        return NN_GPU_SE_GATE_PHASES;
    return op->impl->phases > 1 ? op->impl->phases : 1;
}

int nn_gpu_op_record_phase(struct nn_gpu_op *op, struct gpu_cmd *cmd, int phase, bool gate_only,
                           const struct nn_gpu_tensor *inputs, int n_inputs, const struct nn_gpu_tensor *outputs,
                           int n_outputs, char *err, size_t err_len)
{
    if (phase < 0 || phase >= nn_gpu_op_phases(op, gate_only)) {
        snprintf(err, err_len, "%s has no phase %d", pvk_op_type_name(op->op->type), phase);
        return -1;
    }
    if (gate_only) {
        if (op->op->type != PVK_OP_SE || n_inputs < 1 || n_outputs < 3) {
            snprintf(err, err_len, "%s has no SE gate", pvk_op_type_name(op->op->type));
            return -1;
        }
        return nn_gpu_se_record_gate_phase(op->state, op->op, cmd, phase, &inputs[0], &outputs[1], &outputs[2], err,
                                           err_len);
    }
    if (op->impl->phases > 1)
        return op->impl->record_phase(op->state, op->op, cmd, phase, inputs, n_inputs, outputs, n_outputs, err,
                                      err_len);
    return op->impl->record(op->state, op->op, cmd, inputs, n_inputs, outputs, n_outputs, err, err_len);
}

void nn_gpu_op_destroy(struct nn_gpu_op *op)
{
    if (!op)
        return;
    op->impl->destroy(op->state);
    free(op);
}
