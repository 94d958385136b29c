/* BINARY: y = act(a (op) b) with numpy broadcasting; b is the second input or a constant (w[0]),
 * uploaded once in the storage precision. Also used by UNARY (op_unary.c) with no b. An ADD whose
 * operands the net fused from an SE's apply step and a nearest upsampling (w->gated_inputs,
 * w->upsampled_inputs) runs shaders/add_fused.glsl instead. */
#include <stdlib.h>

#include "nn/gpu/conv_gemm.h"
#include "nn/gpu/op_binary.h"
#include "nn/gpu/op_helpers.h"
#include "nn/gpu/strided.h"

struct binary_push {
    uint32_t n, ndim, op, act;
    float alpha, beta;
    uint32_t a_off, b_off, y_off, y_block, y_block_stride;
    uint32_t dims[6], as[6], bs[6];
};

struct binary_vec4_push {
    uint32_t n4, op, act, b_scalar;
    float alpha, beta;
    uint32_t a_off4, b_off, y_off4;
};

struct add_fused_push {
    uint32_t items, h, w;
    uint32_t a_off, b_off, y_off;
    uint32_t fh, fw, src_h, src_w;
    float residual;
    uint32_t y_block, y_block_stride;
    uint32_t use_vec4;
};

/* add_fused.glsl's operand numbers */
#define FUSED_NONE 0u
#define FUSED_A 1u
#define FUSED_B 2u

struct binary_state {
    struct nn_gpu_config cfg;
    struct nnh_binary_pipes p;
    struct gpu_buffer b_const; /* zeroed when b is an input */
    struct pvk_shape b_shape;
    /* an ADD with operands fused from their producers (shaders/add_fused.glsl) */
    const struct gpu_pipeline *fused;
    uint32_t gated, upsampled; /* FUSED_* */
    float gate_residual;
    uint32_t fh, fw;
};

/* The one input of a bit mask of inputs 0 and 1, as FUSED_A or FUSED_B (FUSED_NONE for none). */
static uint32_t fused_operand(uint8_t mask)
{
    return mask & 1u ? FUSED_A : mask & 2u ? FUSED_B : FUSED_NONE;
}

static int fused_create(const struct nn_gpu_config *cfg, const struct pvk_op *op, const struct nn_gpu_weights *w,
                        struct binary_state *s, char *err, size_t err_len)
{
    if (op->attr.binary.kind != PVK_BIN_ADD || op->n_inputs != 2 || (w->gated_inputs & ~3u) ||
        (w->upsampled_inputs & ~3u) || w->gated_inputs == 3 || w->upsampled_inputs == 3 ||
        (w->upsampled_inputs && (w->upsample_h < 1 || w->upsample_w < 1)))
        return nnh_fail(err, err_len, "%s: only an ADD of two inputs takes one gated and one upsampled operand",
                        op->name);
    s->gated = fused_operand(w->gated_inputs);
    s->upsampled = fused_operand(w->upsampled_inputs);
    s->gate_residual = w->gate_residual;
    s->fh = w->upsampled_inputs ? w->upsample_h : 1;
    s->fw = w->upsampled_inputs ? w->upsample_w : 1;
    const uint32_t spec[5] = {s->gated, s->upsampled, op->act, conv_float_bits(op->act_alpha),
                              conv_float_bits(op->act_beta)};
    return nnh_pipeline(cfg->ctx, NNH_SHADERS(add_fused), false, cfg->act_dtype, NNH_WG_ELEMENTWISE, spec, 5, 4,
                        sizeof(struct add_fused_push), &s->fused, err, err_len);
}

/* y = act(a' + b'): both NCHW of y's shape but the upsampled one, smaller by (fh, fw). */
static int fused_record(const struct binary_state *s, const struct pvk_op *op, struct gpu_cmd *cmd,
                        const struct nn_gpu_tensor *in, int n_in, const struct nn_gpu_tensor *y, char *err,
                        size_t err_len)
{
    if (n_in != 2 + (s->gated != FUSED_NONE))
        return nnh_fail(err, err_len, "%s: the fused add takes %d inputs", op->name, 2 + (s->gated != FUSED_NONE));
    const struct pvk_shape *ys = &y->shape;
    if (ys->ndim != 4)
        return nnh_fail(err, err_len, "%s: the fused add needs NCHW maps", op->name);
    for (int k = 0; k < 2; k++) {
        const struct pvk_shape *xs = &in[k].shape;
        const bool up = s->upsampled == (k ? FUSED_B : FUSED_A);
        if (xs->ndim != 4 || xs->d[0] != ys->d[0] || xs->d[1] != ys->d[1] || xs->d[2] * (up ? s->fh : 1) != ys->d[2] ||
            xs->d[3] * (up ? s->fw : 1) != ys->d[3] || (in[k].dst_channels && in[k].dst_channels != xs->d[1]))
            return nnh_fail(err, err_len, "%s: fused add operand %d does not match the output", op->name, k);
    }
    const struct nn_gpu_tensor *gate = s->gated != FUSED_NONE ? &in[2] : NULL;
    if (gate && (gate->dtype != NN_F32 || gate->elem_offset || gate->shape.ndim != 2 || gate->shape.d[0] != ys->d[0] ||
                 gate->shape.d[1] != ys->d[1]))
        return nnh_fail(err, err_len, "%s: the gate must be fp32 [N][C] from element 0", op->name);
    const struct pvk_shape *src = &in[s->upsampled == FUSED_B ? 1 : 0].shape;
    uint32_t y_block, y_block_stride;
    nnh_out_blocks(y, &y_block, &y_block_stride);
    const uint64_t n = (uint64_t)pvk_shape_numel(ys);
    if (n > UINT32_MAX / 2)
        return nnh_fail(err, err_len, "%s: the fused add's output is too large", op->name);
    /* 4-vectors where rows, the full-size operands and the output (its slice too) start on
     * multiples of 4 elements */
    const bool vec4 = ys->d[3] % 4 == 0 && (s->upsampled == FUSED_A || in[0].elem_offset % 4 == 0) &&
                      (s->upsampled == FUSED_B || in[1].elem_offset % 4 == 0) && y->elem_offset % 4 == 0 &&
                      y_block_stride % 4 == 0;
    struct add_fused_push pc = {
        .items = (uint32_t)(vec4 ? n / 4 : n),
        .h = (uint32_t)ys->d[2],
        .w = (uint32_t)ys->d[3],
        .a_off = in[0].elem_offset,
        .b_off = in[1].elem_offset,
        .y_off = y->elem_offset,
        .fh = s->fh,
        .fw = s->fw,
        .src_h = (uint32_t)src->d[2],
        .src_w = (uint32_t)src->d[3],
        .residual = s->gate_residual,
        .y_block = y_block,
        .y_block_stride = y_block_stride,
        .use_vec4 = vec4,
    };
    struct gpu_binding bind[4] = {gpu_bind(in[0].buf), gpu_bind(in[1].buf), gpu_bind(y->buf),
                                  gpu_bind(gate ? gate->buf : in[0].buf)};
    uint32_t groups[3];
    nnh_grid_1d(pc.items, NNH_WG_ELEMENTWISE, groups);
    return nnh_dispatch(cmd, s->fused, bind, &pc, groups, op->name, err, err_len);
}

int nnh_binary_pipeline(const struct nn_gpu_config *cfg, struct nnh_binary_pipes *p, char *err, size_t err_len)
{
    return nnh_arith_pipeline(cfg, NNH_SHADERS_F16A(binary), NNH_WG_ELEMENTWISE, 3, sizeof(struct binary_push),
                              &p->generic, err, err_len) ||
           nnh_arith_pipeline(cfg, NNH_SHADERS_F16A(binary_vec4), NNH_WG_ELEMENTWISE, 3,
                              sizeof(struct binary_vec4_push), &p->vec4, err, err_len);
}

int nnh_record_binary(struct gpu_cmd *cmd, const struct nnh_binary_pipes *p, uint32_t kind,
                      const struct nn_gpu_tensor *a, const struct gpu_buffer *b_buf, uint32_t b_off,
                      const struct pvk_shape *b_shape, const struct nn_gpu_tensor *y, const struct pvk_op *op,
                      char *err, size_t err_len)
{
    const struct pvk_shape *ys = &y->shape;
    struct nnh_view v = {.ndim = ys->ndim};
    for (int d = 0; d < ys->ndim; d++)
        v.dims[d] = ys->d[d];
    if (a->shape.ndim > ys->ndim || (b_shape && b_shape->ndim > ys->ndim))
        return nnh_fail(err, err_len, "%s: an input has more dims than the output", op->name);
    for (int d = 0; d < ys->ndim; d++) {
        int ka = d - (ys->ndim - a->shape.ndim);
        if (ka >= 0 && a->shape.d[ka] != 1 && a->shape.d[ka] != ys->d[d])
            return nnh_fail(err, err_len, "%s: input a does not broadcast to the output", op->name);
        if (b_shape) {
            int kb = d - (ys->ndim - b_shape->ndim);
            if (kb >= 0 && b_shape->d[kb] != 1 && b_shape->d[kb] != ys->d[d])
                return nnh_fail(err, err_len, "%s: input b does not broadcast to the output", op->name);
        }
    }
    nnh_broadcast_strides(&a->shape, ys->ndim, ys->d, v.stride[0]);
    if (b_shape)
        nnh_broadcast_strides(b_shape, ys->ndim, ys->d, v.stride[1]);
    nnh_view_collapse(&v);
    uint32_t n = (uint32_t)pvk_shape_numel(ys), y_block, y_block_stride;
    nnh_out_blocks(y, &y_block, &y_block_stride);
    struct gpu_binding bind[3] = {gpu_bind(a->buf), gpu_bind(b_buf ? b_buf : a->buf), gpu_bind(y->buf)};
    uint32_t groups[3];
    /* contiguous a and y, b contiguous, scalar or absent, all 4-aligned: four elements at a time */
    if (v.ndim == 1 && v.stride[0][0] == 1 && (!b_shape || v.stride[1][0] <= 1) && n % 4 == 0 &&
        a->elem_offset % 4 == 0 && y->elem_offset % 4 == 0 && y_block == y_block_stride) {
        struct binary_vec4_push pv = {.n4 = n / 4,
                                      .op = kind,
                                      .act = op->act,
                                      .b_scalar = b_shape && v.stride[1][0] == 0,
                                      .alpha = op->act_alpha,
                                      .beta = op->act_beta,
                                      .a_off4 = a->elem_offset / 4,
                                      .b_off = b_off,
                                      .y_off4 = y->elem_offset / 4};
        nnh_grid_1d(pv.n4, NNH_WG_ELEMENTWISE, groups);
        return nnh_dispatch(cmd, p->vec4, bind, &pv, groups, op->name, err, err_len);
    }
    struct binary_push pc = {.ndim = (uint32_t)v.ndim,
                             .op = kind,
                             .act = op->act,
                             .alpha = op->act_alpha,
                             .beta = op->act_beta,
                             .a_off = a->elem_offset,
                             .b_off = b_off,
                             .y_off = y->elem_offset};
    for (int d = 0; d < v.ndim; d++) {
        pc.dims[d] = (uint32_t)v.dims[d];
        pc.as[d] = (uint32_t)v.stride[0][d];
        pc.bs[d] = (uint32_t)v.stride[1][d];
    }
    pc.n = n;
    pc.y_block = y_block;
    pc.y_block_stride = y_block_stride;
    nnh_grid_1d(pc.n, NNH_WG_ELEMENTWISE, groups);
    return nnh_dispatch(cmd, p->generic, bind, &pc, groups, op->name, err, err_len);
}

static int binary_create(const struct nn_gpu_config *cfg, const struct pvk_op *op, const struct nn_gpu_weights *w,
                         void **state, char *err, size_t err_len)
{
    if (op->attr.binary.kind < PVK_BIN_ADD || op->attr.binary.kind > PVK_BIN_DIV)
        return nnh_fail(err, err_len, "%s: unknown binary kind %d", op->name, op->attr.binary.kind);
    struct binary_state *s = calloc(1, sizeof *s);
    if (!s)
        return nnh_fail(err, err_len, "out of memory");
    s->cfg = *cfg;
    if (w && (w->gated_inputs || w->upsampled_inputs)) {
        if (fused_create(cfg, op, w, s, err, err_len))
            goto fail;
        *state = s;
        return 0;
    }
    if (nnh_binary_pipeline(cfg, &s->p, err, err_len))
        goto fail;
    if (op->n_inputs < 2) {
        if (!w || !w->data[0])
            return free(s), nnh_fail(err, err_len, "%s: binary op without a second input or constant", op->name);
        s->b_shape = w->shape[0];
        if (nnh_upload(cfg->ctx, w->data[0], (size_t)pvk_shape_numel(&s->b_shape), cfg->act_dtype, &s->b_const, err,
                       err_len))
            goto fail;
    }
    *state = s;
    return 0;
fail:
    free(s);
    return -1;
}

static int binary_record(void *state, const struct pvk_op *op, struct gpu_cmd *cmd, const struct nn_gpu_tensor *in,
                         int n_in, const struct nn_gpu_tensor *out, int n_out, char *err, size_t err_len)
{
    struct binary_state *s = state;
    bool const_b = s->b_const.buffer != VK_NULL_HANDLE;
    if (s->fused) {
        if (n_out != 1 || nnh_check_tensor(&in[0], s->cfg.act_dtype, false, "add input a", err, err_len) ||
            nnh_check_tensor(&in[1], s->cfg.act_dtype, false, "add input b", err, err_len) ||
            nnh_check_tensor(&out[0], s->cfg.act_dtype, true, "add output", err, err_len))
            return n_out != 1 ? nnh_fail(err, err_len, "%s: the fused add has one output", op->name) : -1;
        return fused_record(s, op, cmd, in, n_in, &out[0], err, err_len);
    }
    if (n_in != (const_b ? 1 : 2) || n_out != 1)
        return nnh_fail(err, err_len, "%s: binary takes %d inputs and 1 output", op->name, const_b ? 1 : 2);
    enum nn_dtype dt = s->cfg.act_dtype;
    if (nnh_check_tensor(&in[0], dt, false, "binary input a", err, err_len) ||
        (!const_b && nnh_check_tensor(&in[1], dt, false, "binary input b", err, err_len)) ||
        nnh_check_tensor(&out[0], dt, true, "binary output", err, err_len))
        return -1;
    if (const_b)
        return nnh_record_binary(cmd, &s->p, (uint32_t)op->attr.binary.kind, &in[0], &s->b_const, 0, &s->b_shape,
                                 &out[0], op, err, err_len);
    return nnh_record_binary(cmd, &s->p, (uint32_t)op->attr.binary.kind, &in[0], in[1].buf, in[1].elem_offset,
                             &in[1].shape, &out[0], op, err, err_len);
}

static void binary_destroy(void *state)
{
    struct binary_state *s = state;
    if (!s)
        return;
    gpu_buffer_free(&s->b_const);
    free(s);
}

const struct nn_gpu_op_impl nn_gpu_binary_impl = {
    .create = binary_create, .record = binary_record, .destroy = binary_destroy};
