/* RESIZE: nearest (asymmetric, floor) and bilinear (half-pixel, align-corners) on NCHW planes.
 * With w->input_gate, x is an SE's input whose planes it scales by gate + w->gate_residual, the
 * gate ([N][C], fp32) passed as the last input: the SE's apply step, fused. */
#include <math.h>
#include <stdlib.h>

#include "nn/gpu/op_helpers.h"
#include "nn/shape.h"

struct resize_push {
    uint32_t h, w, oh, ow, mode;
    uint32_t int_mode, int_h, int_w;
    float scale_h, scale_w;
    uint32_t act;
    float alpha, beta;
    uint32_t x_off, y_off, c, y_block, y_block_stride;
    float residual;
};

/* workgroups of RESIZE_WG_X x RESIZE_WG_Y invocations, each writing 4 outputs of a row */
#define RESIZE_WG_X 64u
#define RESIZE_WG_Y 4u

struct resize_state {
    struct nn_gpu_config cfg;
    const struct gpu_pipeline *p;
    bool gated;
    float gate_residual;
};

static int resize_create(const struct nn_gpu_config *cfg, const struct pvk_op *op, const struct nn_gpu_weights *w,
                         void **state, char *err, size_t err_len)
{
    int mode = op->attr.resize.mode;
    if (mode != PVK_RESIZE_NEAREST && mode != PVK_RESIZE_BILINEAR_HALF_PIXEL &&
        mode != PVK_RESIZE_BILINEAR_ALIGN_CORNERS)
        return nnh_fail(err, err_len, "%s: unknown resize mode %d", op->name, mode);
    if (!(op->attr.resize.scale_h > 0) || !(op->attr.resize.scale_w > 0))
        return nnh_fail(err, err_len, "%s: resize scales must be positive", op->name);
    struct resize_state *s = calloc(1, sizeof *s);
    if (!s)
        return nnh_fail(err, err_len, "out of memory");
    s->cfg = *cfg;
    s->gated = w && w->input_gate;
    s->gate_residual = w ? w->gate_residual : 0.0f;
    const uint32_t spec[2] = {RESIZE_WG_Y, s->gated};
    if (nnh_pipeline(cfg->ctx, NNH_SHADERS(resize), false, cfg->act_dtype, RESIZE_WG_X, spec, 2, 3,
                     sizeof(struct resize_push), &s->p, err, err_len)) {
        free(s);
        return -1;
    }
    *state = s;
    return 0;
}

/* The scale as an integer when it is one (2, 4, 8 in the det FPN): nearest then takes the source
 * index by integer division, or by a shift for powers of two. */
static uint32_t integral(float scale)
{
    return scale >= 1.0f && scale == floorf(scale) && scale < 65536.0f ? (uint32_t)scale : 0;
}

static int resize_record(void *state, const struct pvk_op *op, struct gpu_cmd *cmd, const struct nn_gpu_tensor *in,
                         int n_in, const struct nn_gpu_tensor *out, int n_out, char *err, size_t err_len)
{
    struct resize_state *s = state;
    if (n_in != 1 + s->gated || n_out != 1)
        return nnh_fail(err, err_len, "%s: resize takes %d input(s) and 1 output", op->name, 1 + s->gated);
    if (nnh_check_tensor(&in[0], s->cfg.act_dtype, false, "resize input", err, err_len) ||
        nnh_check_tensor(&out[0], s->cfg.act_dtype, true, "resize output", err, err_len))
        return -1;
    const struct pvk_shape *is = &in[0].shape, *os = &out[0].shape;
    if (is->ndim != 4 || os->ndim != 4 || is->d[0] != os->d[0] || is->d[1] != os->d[1])
        return nnh_fail(err, err_len, "%s: resize needs NCHW input and output of the same N and C", op->name);
    const struct nn_gpu_tensor *gate = s->gated ? &in[1] : NULL;
    if (gate && (gate->dtype != NN_F32 || gate->elem_offset || gate->shape.ndim != 2 || gate->shape.d[0] != is->d[0] ||
                 gate->shape.d[1] != is->d[1]))
        return nnh_fail(err, err_len, "%s: the gate must be fp32 [N][C] from element 0", op->name);
    float sh = op->attr.resize.scale_h, sw = op->attr.resize.scale_w;
    uint32_t ih = op->attr.resize.mode == PVK_RESIZE_NEAREST ? integral(sh) : 0;
    uint32_t iw = op->attr.resize.mode == PVK_RESIZE_NEAREST ? integral(sw) : 0;
    uint32_t int_mode = ih && iw ? ((ih & (ih - 1)) == 0 && (iw & (iw - 1)) == 0 ? 1 : 2) : 0;
    if (int_mode == 1) { /* log2 */
        uint32_t a = 0, b = 0;
        while ((1u << a) < ih)
            a++;
        while ((1u << b) < iw)
            b++;
        ih = a, iw = b;
    }
    struct resize_push pc = {.h = (uint32_t)is->d[2],
                             .w = (uint32_t)is->d[3],
                             .oh = (uint32_t)os->d[2],
                             .ow = (uint32_t)os->d[3],
                             .mode = (uint32_t)op->attr.resize.mode,
                             .int_mode = int_mode,
                             .int_h = ih,
                             .int_w = iw,
                             .scale_h = sh,
                             .scale_w = sw,
                             .act = op->act,
                             .alpha = op->act_alpha,
                             .beta = op->act_beta,
                             .x_off = in[0].elem_offset,
                             .y_off = out[0].elem_offset,
                             .c = (uint32_t)is->d[1],
                             .residual = s->gate_residual};
    nnh_out_blocks(&out[0], &pc.y_block, &pc.y_block_stride);
    uint64_t planes = (uint64_t)is->d[0] * is->d[1];
    if (planes > 65535)
        return nnh_fail(err, err_len, "%s: %llu planes exceed the grid", op->name, (unsigned long long)planes);
    uint32_t groups[3] = {((pc.ow + 3) / 4 + RESIZE_WG_X - 1) / RESIZE_WG_X, (pc.oh + RESIZE_WG_Y - 1) / RESIZE_WG_Y,
                          (uint32_t)planes};
    struct gpu_binding b[3] = {gpu_bind(in[0].buf), gpu_bind(out[0].buf), gpu_bind(gate ? gate->buf : in[0].buf)};
    return nnh_dispatch(cmd, s->p, b, &pc, groups, op->name, err, err_len);
}

static void resize_destroy(void *state)
{
    free(state);
}

const struct nn_gpu_op_impl nn_gpu_resize_impl = {
    .create = resize_create, .record = resize_record, .destroy = resize_destroy};
