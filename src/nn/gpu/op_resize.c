/* RESIZE: nearest (asymmetric, floor) and bilinear (half-pixel, align-corners) on NCHW planes. */
#include <math.h>
#include <stdlib.h>

#include "nn/cpu/ref_ops.h"
#include "nn/gpu/op_helpers.h"

struct resize_push {
    uint32_t h, w, oh, ow, mode;
    uint32_t int_scale_h, int_scale_w;
    float scale_h, scale_w;
    uint32_t act;
    float alpha, beta;
    uint32_t x_off, y_off, c, y_block, y_block_stride;
};

/* 2-D workgroups: 32 columns x 4 rows (one row of 32 where rows are short) */
#define RESIZE_WG_X 64u
#define RESIZE_WG_Y 1u

struct resize_state {
    struct nn_gpu_config cfg;
    const struct gpu_pipeline *p;
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
    uint32_t wg_y = RESIZE_WG_Y;
    if (nnh_pipeline(cfg->ctx, "resize", false, cfg->act_dtype, RESIZE_WG_X, &wg_y, 1, 2,
                     sizeof(struct resize_push), &s->p, err, err_len)) {
        free(s);
        return -1;
    }
    *state = s;
    return 0;
}

/* The scale as an integer when it is one (2, 4, 8 in the det FPN): nearest then copies each input
 * pixel to a block of outputs. */
static uint32_t integral(float scale)
{
    return scale >= 1.0f && scale == floorf(scale) && scale < 65536.0f ? (uint32_t)scale : 0;
}

static int resize_record(void *state, const struct pvk_op *op, struct gpu_cmd *cmd, const struct nn_gpu_tensor *in,
                         int n_in, const struct nn_gpu_tensor *out, int n_out, char *err, size_t err_len)
{
    struct resize_state *s = state;
    if (n_in != 1 || n_out != 1)
        return nnh_fail(err, err_len, "%s: resize takes 1 input and 1 output", op->name);
    if (nnh_check_tensor(&in[0], s->cfg.act_dtype, false, "resize input", err, err_len) ||
        nnh_check_tensor(&out[0], s->cfg.act_dtype, true, "resize output", err, err_len))
        return -1;
    const struct pvk_shape *is = &in[0].shape, *os = &out[0].shape;
    if (is->ndim != 4 || os->ndim != 4 || is->d[0] != os->d[0] || is->d[1] != os->d[1])
        return nnh_fail(err, err_len, "%s: resize needs NCHW input and output of the same N and C", op->name);
    float sh = op->attr.resize.scale_h, sw = op->attr.resize.scale_w;
    bool blocks = op->attr.resize.mode == PVK_RESIZE_NEAREST && integral(sh) && integral(sw);
    struct resize_push pc = {.h = (uint32_t)is->d[2], .w = (uint32_t)is->d[3], .oh = (uint32_t)os->d[2],
                             .ow = (uint32_t)os->d[3], .mode = (uint32_t)op->attr.resize.mode,
                             .int_scale_h = blocks ? integral(sh) : 0, .int_scale_w = blocks ? integral(sw) : 0,
                             .scale_h = sh, .scale_w = sw, .act = op->act, .alpha = op->act_alpha,
                             .beta = op->act_beta, .x_off = in[0].elem_offset, .y_off = out[0].elem_offset,
                             .c = (uint32_t)is->d[1]};
    nnh_out_blocks(&out[0], &pc.y_block, &pc.y_block_stride);
    uint32_t gx = blocks ? pc.w : pc.ow, gy = blocks ? pc.h : pc.oh;
    uint64_t planes = (uint64_t)is->d[0] * is->d[1];
    if (planes > 65535)
        return nnh_fail(err, err_len, "%s: %llu planes exceed the grid", op->name, (unsigned long long)planes);
    uint32_t groups[3] = {(gx + RESIZE_WG_X - 1) / RESIZE_WG_X, (gy + RESIZE_WG_Y - 1) / RESIZE_WG_Y,
                          (uint32_t)planes};
    struct gpu_binding b[2] = {gpu_bind(in[0].buf), gpu_bind(out[0].buf)};
    return nnh_dispatch(cmd, s->p, b, &pc, groups, op->name, err, err_len);
}

static void resize_destroy(void *state) { free(state); }

const struct nn_gpu_op_impl nn_gpu_resize_impl = {resize_create, resize_record, resize_destroy};
