/* SE: y = x * gate(W2 relu(W1 mean_hw(x) + b1) + b2) [+ x] in three dispatches:
 *   se_mean   the channel sums, a few channels per workgroup, or for large planes slices of one
 *             (partial sums that se_fc adds up);
 *   se_fc     the gate from the sums (fp32, exposed through op_se.h), a block of gate rows per
 *             workgroup (shaders/se_gate.glsl says why the hidden layer is computed in each);
 *   affine    y = act(x (g[n][c] + residual)), the apply step, which can write into a channel
 *             slice of a concat. A 1x1 convolution after the SE can do this step instead.
 * The weights stay fp32 (W1, b1, W2, b2 packed in one buffer). The sums and the gate live in
 * fp32 [N][C][parts] and [N][C] outputs the caller provides (the net plans them like any tensor), so the op
 * keeps no per-run state and several plans of one net can be in flight together. */
#include <stdlib.h>
#include <string.h>

#include "gpu/context.h"
#include "gpu/error.h"
#include "gpu/transfer.h"
#include "nn/gpu/op_affine.h"
#include "nn/gpu/op_helpers.h"
#include "nn/gpu/op_se.h"

#define SE_WG 256u
/* Channels per se_mean workgroup: 8 (32 invocations a plane) for small planes, 1 (256 a plane)
 * from SE_MEAN_WIDE_PLANE on: det's 240 x 240 planes would otherwise take 1,800 loads each. */
#define SE_MEAN_CHANNELS 8u
#define SE_MEAN_WIDE_PLANE 2048u
/* Large planes are summed in slices of this many values, one workgroup each (16 loads an
 * invocation): det's 24 channels of 240 x 240 in 24 workgroups left most of a GPU idle. */
#define SE_MEAN_PART 4096u
/* Gate rows per workgroup. GPUs: 32, 8 invocations sharing each dot product, so many workgroups
 * read the weights contiguously. CPU devices: 256, one per invocation, since each workgroup
 * computes the hidden layer again and lavapipe pays for every barrier. */
#define SE_FC_ROWS 32u
#define SE_FC_ROWS_CPU 256u

struct se_mean_push {
    uint32_t c, plane, x_off, parts, part_len;
};

struct se_fc_push {
    uint32_t gate_act;
    float gate_alpha, gate_beta;
    uint32_t parts, plane;
};

int64_t nn_gpu_se_sum_parts(const struct nn_gpu_config *cfg, int64_t plane)
{
    /* CPU devices keep one workgroup per channel: lavapipe pays for every workgroup's reduction
     * barriers (det's SE over 96 x 240 x 240 is faster in one than in slices: BENCHMARKS.md). */
    if (gpu_context_caps(cfg->ctx)->is_cpu && !nnh_workgroup_reductions_forced(cfg))
        return 1;
    return plane >= SE_MEAN_WIDE_PLANE ? (plane + SE_MEAN_PART - 1) / SE_MEAN_PART : 1;
}

struct se_state {
    struct nn_gpu_config cfg;
    const struct gpu_pipeline *mean_p, *mean_wide_p, *fc_p;
    struct nnh_affine_pipes apply_p;
    struct gpu_buffer weights;
    int64_t c, cr;
    uint32_t fc_rows;
};

static void se_destroy(void *state)
{
    struct se_state *s = state;
    if (!s)
        return;
    gpu_buffer_free(&s->weights);
    free(s);
}

static int se_create(const struct nn_gpu_config *cfg, const struct pvk_op *op, const struct nn_gpu_weights *w,
                     void **state, char *err, size_t err_len)
{
    if (!w || !w->data[0] || !w->data[2] || w->shape[0].ndim != 2 || w->shape[2].ndim != 2)
        return nnh_fail(err, err_len, "%s: SE needs W1 [Cr][C] and W2 [C][Cr]", op->name);
    int64_t cr = w->shape[0].d[0], c = w->shape[0].d[1];
    if (w->shape[2].d[0] != c || w->shape[2].d[1] != cr || (w->data[1] && pvk_shape_numel(&w->shape[1]) != cr) ||
        (w->data[3] && pvk_shape_numel(&w->shape[3]) != c))
        return nnh_fail(err, err_len, "%s: SE weight shapes do not agree", op->name);
    if (op->attr.se.gate_act < 0 || op->attr.se.gate_act >= PVK_ACT_COUNT)
        return nnh_fail(err, err_len, "%s: unknown gate activation", op->name);
    struct se_state *s = calloc(1, sizeof *s);
    if (!s)
        return nnh_fail(err, err_len, "out of memory");
    s->cfg = *cfg;
    s->c = c;
    s->cr = cr;
    /* W1 [cr][c], b1 [cr], W2 [c][cr], b2 [c], each section from a multiple of 4 floats (where
     * shaders/se_gate.glsl reads them); missing biases and the gaps are zeros */
    const size_t b1_at = (size_t)(cr * c + 3) & ~(size_t)3, w2_at = (b1_at + (size_t)cr + 3) & ~(size_t)3;
    const size_t b2_at = w2_at + (size_t)(c * cr), total = b2_at + (size_t)c;
    float *packed = calloc(total, sizeof(float));
    if (!packed) {
        free(s);
        return nnh_fail(err, err_len, "out of memory");
    }
    memcpy(packed, w->data[0], sizeof(float) * (size_t)(cr * c));
    if (w->data[1])
        memcpy(packed + b1_at, w->data[1], sizeof(float) * (size_t)cr);
    memcpy(packed + w2_at, w->data[2], sizeof(float) * (size_t)(c * cr));
    if (w->data[3])
        memcpy(packed + b2_at, w->data[3], sizeof(float) * (size_t)c);
    int rc = nnh_upload(cfg->ctx, packed, total, NN_F32, &s->weights, err, err_len);
    free(packed);
    s->fc_rows = gpu_context_caps(cfg->ctx)->is_cpu ? SE_FC_ROWS_CPU : SE_FC_ROWS;
    const uint32_t mean_spec[1] = {SE_MEAN_CHANNELS}, wide_spec[1] = {1};
    const uint32_t fc_spec[3] = {(uint32_t)cr, (uint32_t)c, s->fc_rows};
    if (!rc)
        rc = nnh_pipeline(cfg->ctx, NNH_SHADERS(se_mean), false, cfg->act_dtype, SE_WG, mean_spec, 1, 2,
                          sizeof(struct se_mean_push), &s->mean_p, err, err_len);
    if (!rc)
        rc = nnh_pipeline(cfg->ctx, NNH_SHADERS(se_mean), false, cfg->act_dtype, SE_WG, wide_spec, 1, 2,
                          sizeof(struct se_mean_push), &s->mean_wide_p, err, err_len);
    if (!rc)
        rc = nnh_pipeline(cfg->ctx, NNH_SHADERS_F32(se_fc), false, NN_F32, SE_WG, fc_spec, 3, 3,
                          sizeof(struct se_fc_push), &s->fc_p, err, err_len);
    if (!rc)
        rc = nnh_affine_pipeline(cfg, &s->apply_p, err, err_len);
    if (rc) {
        se_destroy(s);
        return -1;
    }
    *state = s;
    return 0;
}

/* An fp32 [N][C] tensor (parts 0) or [N][C][parts] one at the start of its buffer. */
static int check_scratch(const struct nn_gpu_tensor *t, int64_t n, int64_t c, int64_t parts, const char *what,
                         char *err, size_t err_len)
{
    const int ndim = parts ? 3 : 2;
    if (t->dtype != NN_F32 || t->elem_offset || t->dst_channels || t->shape.ndim != ndim || t->shape.d[0] != n ||
        t->shape.d[1] != c || (parts && t->shape.d[2] != parts) ||
        t->buf->size < (VkDeviceSize)(n * c * (parts ? parts : 1)) * 4)
        return nnh_fail(err, err_len, "SE %s must be fp32 [%lld][%lld]%s from element 0", what, (long long)n,
                        (long long)c, parts ? "[parts]" : "");
    return 0;
}

int nn_gpu_se_record_gate_phase(void *state, const struct pvk_op *op, struct gpu_cmd *cmd, int phase,
                                const struct nn_gpu_tensor *x, const struct nn_gpu_tensor *sums,
                                const struct nn_gpu_tensor *gate, char *err, size_t err_len)
{
    struct se_state *s = state;
    const struct pvk_shape *xs = &x->shape;
    if (nnh_check_tensor(x, s->cfg.act_dtype, false, "SE input", err, err_len))
        return -1;
    if (xs->ndim != 4 || xs->d[1] != s->c)
        return nnh_fail(err, err_len, "%s: SE over %lld channels needs NCHW input with them", op->name,
                        (long long)s->c);
    const int64_t plane = xs->d[2] * xs->d[3], parts = nn_gpu_se_sum_parts(&s->cfg, plane);
    if (check_scratch(sums, xs->d[0], s->c, parts, "sums", err, err_len) ||
        check_scratch(gate, xs->d[0], s->c, 0, "gate", err, err_len))
        return -1;
    const uint32_t c = (uint32_t)s->c, n = (uint32_t)xs->d[0];
    const bool wide = plane >= SE_MEAN_WIDE_PLANE;
    struct se_mean_push mp = {.c = c,
                              .plane = (uint32_t)plane,
                              .x_off = x->elem_offset,
                              .parts = (uint32_t)parts,
                              .part_len = parts > 1 ? SE_MEAN_PART : (uint32_t)plane};
    if (phase == 0) {
        const uint32_t cpw = wide ? 1 : SE_MEAN_CHANNELS;
        uint32_t mean_groups[3] = {(c + cpw - 1) / cpw * mp.parts, n, 1};
        struct gpu_binding mb[2] = {gpu_bind(x->buf), gpu_bind(sums->buf)};
        return nnh_dispatch(cmd, wide ? s->mean_wide_p : s->mean_p, mb, &mp, mean_groups, "se_mean", err, err_len);
    }
    struct se_fc_push fp = {.gate_act = (uint32_t)op->attr.se.gate_act,
                            .gate_alpha = op->attr.se.gate_alpha,
                            .gate_beta = op->attr.se.gate_beta,
                            .parts = mp.parts,
                            .plane = mp.plane};
    uint32_t fc_groups[3] = {(c + s->fc_rows - 1) / s->fc_rows, n, 1};
    struct gpu_binding fb[3] = {gpu_bind(&s->weights), gpu_bind(sums->buf), gpu_bind(gate->buf)};
    return nnh_dispatch(cmd, s->fc_p, fb, &fp, fc_groups, "se_fc", err, err_len);
}

/* Phases: the sums, the gate, then y = x g (+ x). */
static int se_record_phase(void *state, const struct pvk_op *op, struct gpu_cmd *cmd, int phase,
                           const struct nn_gpu_tensor *in, int n_in, const struct nn_gpu_tensor *out, int n_out,
                           char *err, size_t err_len)
{
    struct se_state *s = state;
    if (n_in != 1 || n_out != 3)
        return nnh_fail(err, err_len, "%s: SE takes 1 input and 3 outputs (y, sums, gate)", op->name);
    if (nnh_check_tensor(&out[0], s->cfg.act_dtype, true, "SE output", err, err_len))
        return -1;
    if (!pvk_shape_equal(&in[0].shape, &out[0].shape))
        return nnh_fail(err, err_len, "%s: SE output shape differs from its input", op->name);
    if (phase < NN_GPU_SE_GATE_PHASES)
        return nn_gpu_se_record_gate_phase(state, op, cmd, phase, &in[0], &out[1], &out[2], err, err_len);
    return nnh_record_affine(cmd, &s->apply_p, &in[0], out[2].buf, (uint32_t)s->c, op->attr.se.residual ? 1.0f : 0.0f,
                             NULL, &out[0], op, "se_apply", err, err_len);
}

#define SE_PHASES (NN_GPU_SE_GATE_PHASES + 1)

static int se_record(void *state, const struct pvk_op *op, struct gpu_cmd *cmd, const struct nn_gpu_tensor *in,
                     int n_in, const struct nn_gpu_tensor *out, int n_out, char *err, size_t err_len)
{
    for (int phase = 0; phase < SE_PHASES; phase++) {
        if (phase)
            gpu_cmd_barrier(cmd, GPU_STAGE_COMPUTE, GPU_STAGE_COMPUTE);
        if (se_record_phase(state, op, cmd, phase, in, n_in, out, n_out, err, err_len))
            return -1;
    }
    return 0;
}

const struct nn_gpu_op_impl nn_gpu_se_impl = {.create = se_create,
                                              .record = se_record,
                                              .destroy = se_destroy,
                                              .phases = SE_PHASES,
                                              .record_phase = se_record_phase};
