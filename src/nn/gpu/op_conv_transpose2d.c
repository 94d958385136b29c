/* CONV_TRANSPOSE2D, + bias + activation. With kernel == stride, no padding, no dilation and one
 * group (the det head's k=2 s=2 upsampling) every output pixel receives exactly one tap:
 *   y[oc][i KH + a][j KW + b] = sum_ic x[ic][i][j] W[ic][oc][a][b],
 * which is a GEMM (OC KH KW) x IC x (H W) whose result the kernel scatters into the upsampled
 * image; the weights are repacked to rows (oc, a, b) of IC. On GPUs, up to SCATTER_MAX_M such
 * rows (few output channels) run shaders/deconv_scatter.glsl instead, one input pixel per
 * invocation, the weights repacked to [IC][rows]. Every other configuration runs the gather
 * kernel of shaders/deconv.glsl on the weights as the model stores them. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/context.h"
#include "nn/gpu/conv_gemm.h"
#include "nn/gpu/gpu_op.h"
#include "nn/gpu/op_helpers.h"
#include "nn/shape.h"

#define GATHER_LX 64u
/* The scatter kernel keeps OC KH KW sums per invocation in registers, for few rows: the det
 * head's last one (24 -> 1 channel to 960 x 960, 4 rows) is faster scattering than through the
 * GEMM (16-row tiles for 4 rows, scattered stores), but the one before it (24 -> 24 channels,
 * 96 rows) is faster through the GEMM (BENCHMARKS.md). */
#define SCATTER_MAX_M 32u
#define SCATTER_LX 64u

struct deconv_state {
    struct nn_gpu_config cfg;
    bool one_tap;
    int ic, oc, ocg, group;
    struct gpu_buffer weight, bias;
    bool has_bias;
    struct conv_gemm gemm;              /* one_tap */
    const struct gpu_pipeline *scatter; /* one_tap on GPUs, instead of the GEMM */
    const struct gpu_pipeline *gather;  /* otherwise */
};

struct scatter_push {
    uint32_t items, hw, w, ic;
    uint32_t x_off, x_img;
    uint32_t y_off, y_img, ow, ohw;
};

/* The scatter kernel serves GPUs; PPOCR_VK_GEMM_KERNEL (the tests' switch, cfg->force) picks it on any device
 * with "gpudirect" or "gputile" and leaves it out with any other kernel. */
static bool use_scatter(const struct nn_gpu_config *cfg)
{
    const char *force = cfg->force.gemm_kernel;
    if (*force)
        return !strcmp(force, "gpudirect") || !strcmp(force, "gputile");
    return !gpu_context_caps(cfg->ctx)->is_cpu;
}

struct gather_push {
    uint32_t H, W, OH, OW;
    uint32_t icg, ocg, OC;
    uint32_t pad_t, pad_l;
    uint32_t x_off, x_img;
    uint32_t y_off, y_img;
};

static void deconv_destroy(void *state)
{
    struct deconv_state *s = state;
    if (!s)
        return;
    gpu_buffer_free(&s->weight);
    gpu_buffer_free(&s->bias);
    free(s);
}

static int deconv_create(const struct nn_gpu_config *cfg, const struct pvk_op *op, const struct nn_gpu_weights *w,
                         void **state, char *err, size_t err_len)
{
    *state = NULL;
    struct pvk_conv_params a;
    pvk_conv_params_from_op(op, &a);
    if (a.kh < 1 || a.kw < 1 || a.sh < 1 || a.sw < 1 || a.dh < 1 || a.dw < 1 || a.group < 1 || a.pad_t < 0 ||
        a.pad_l < 0 || a.pad_b < 0 || a.pad_r < 0 || op->act >= PVK_ACT_COUNT) {
        snprintf(err, err_len, "conv_transpose2d %s: unsupported attributes", op->name);
        return -1;
    }
    const struct pvk_shape *ws = &w->shape[0];
    if (!w->data[0] || ws->ndim != 4 || ws->d[2] != a.kh || ws->d[3] != a.kw || ws->d[0] % a.group) {
        snprintf(err, err_len, "conv_transpose2d %s: weight must be [IC][OC/g][%d][%d], IC a multiple of %d", op->name,
                 a.kh, a.kw, a.group);
        return -1;
    }
    struct deconv_state *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, err_len, "conv_transpose2d %s: out of memory", op->name);
        return -1;
    }
    s->cfg = *cfg;
    s->ic = (int)ws->d[0];
    s->ocg = (int)ws->d[1];
    s->group = a.group;
    s->oc = s->ocg * s->group;
    if (w->data[1] && (w->shape[1].ndim != 1 || w->shape[1].d[0] != s->oc)) {
        snprintf(err, err_len, "conv_transpose2d %s: bias must be [OC]", op->name);
        goto fail;
    }
    s->one_tap = s->group == 1 && a.kh == a.sh && a.kw == a.sw && a.dh == 1 && a.dw == 1 && !a.pad_t && !a.pad_l &&
                 !a.pad_b && !a.pad_r;
    const size_t taps = (size_t)a.kh * a.kw, wn = (size_t)s->ic * s->ocg * taps;
    const size_t m4 = ((size_t)s->oc * taps + 3) & ~(size_t)3;
    const bool scatter = s->one_tap && (size_t)s->oc * taps <= SCATTER_MAX_M && use_scatter(cfg);
    if (scatter) {
        /* [IC][rows (oc, a, b)], rows zero-padded to a multiple of 4: the model's own order */
        float *packed = calloc((size_t)s->ic * m4, sizeof *packed);
        if (!packed) {
            snprintf(err, err_len, "conv_transpose2d %s: out of memory", op->name);
            goto fail;
        }
        for (size_t i = 0; i < (size_t)s->ic; i++)
            memcpy(packed + i * m4, w->data[0] + i * (size_t)s->oc * taps, (size_t)s->oc * taps * sizeof *packed);
        int rc = conv_upload(cfg, packed, (size_t)s->ic * m4, false, &s->weight, err, err_len);
        free(packed);
        if (rc)
            goto fail;
    } else if (s->one_tap) {
        /* rows (oc, a, b) of IC, zero-padded to a multiple of 4 for aligned vec4 loads */
        const size_t row = conv_gemm_row((uint32_t)s->ic), rows = (size_t)s->oc * taps;
        float *packed = calloc(rows * row, sizeof *packed);
        if (!packed) {
            snprintf(err, err_len, "conv_transpose2d %s: out of memory", op->name);
            goto fail;
        }
        for (size_t i = 0; i < (size_t)s->ic; i++)
            for (size_t o = 0; o < rows; o++)
                packed[o * row + i] = w->data[0][i * rows + o];
        int rc = conv_upload(cfg, packed, rows * row, false, &s->weight, err, err_len);
        free(packed);
        if (rc)
            goto fail;
    } else if (conv_upload(cfg, w->data[0], wn, false, &s->weight, err, err_len)) {
        goto fail;
    }
    s->has_bias = w->data[1] != NULL;
    if (s->has_bias && conv_upload(cfg, w->data[1], (size_t)s->oc, true, &s->bias, err, err_len))
        goto fail;

    if (scatter) {
        const uint32_t spec[8] = {(uint32_t)m4,
                                  (uint32_t)s->oc,
                                  (uint32_t)a.kh,
                                  (uint32_t)a.kw,
                                  op->act,
                                  conv_float_bits(op->act_alpha),
                                  conv_float_bits(op->act_beta),
                                  s->has_bias};
        if (nnh_pipeline(cfg->ctx, NNH_SHADERS(deconv_scatter), false, cfg->act_dtype, SCATTER_LX, spec, 8, 4,
                         sizeof(struct scatter_push), &s->scatter, err, err_len))
            goto fail;
    } else if (s->one_tap) {
        struct conv_gemm_desc d = {
            .mode = CONV_GEMM_DECONV,
            .bias = s->has_bias ? CONV_GEMM_BIAS_ROW : CONV_GEMM_BIAS_NONE,
            .act = op->act,
            .act_alpha = op->act_alpha,
            .act_beta = op->act_beta,
            .kh = (uint32_t)a.kh,
            .kw = (uint32_t)a.kw,
            .sh = (uint32_t)a.sh,
            .sw = (uint32_t)a.sw,
            .dh = 1,
            .dw = 1,
            .m_hint = (uint32_t)(s->oc * taps),
        };
        if (conv_gemm_create(cfg, &d, &s->gemm, err, err_len))
            goto fail;
    } else {
        const uint32_t spec[10] = {(uint32_t)a.kh,
                                   (uint32_t)a.kw,
                                   (uint32_t)a.sh,
                                   (uint32_t)a.sw,
                                   (uint32_t)a.dh,
                                   (uint32_t)a.dw,
                                   op->act,
                                   conv_float_bits(op->act_alpha),
                                   conv_float_bits(op->act_beta),
                                   s->has_bias};
        if (nnh_pipeline(cfg->ctx, NNH_SHADERS(deconv), false, cfg->act_dtype, GATHER_LX, spec, 10, 4,
                         sizeof(struct gather_push), &s->gather, err, err_len))
            goto fail;
    }
    *state = s;
    return 0;
fail:
    deconv_destroy(s);
    return -1;
}

static int deconv_record(void *state, const struct pvk_op *op, struct gpu_cmd *cmd, const struct nn_gpu_tensor *in,
                         int n_in, const struct nn_gpu_tensor *out, int n_out, char *err, size_t err_len)
{
    struct deconv_state *s = state;
    struct pvk_conv_params a;
    pvk_conv_params_from_op(op, &a);
    if (n_in < 1 || n_out < 1) {
        snprintf(err, err_len, "conv_transpose2d %s: needs one input and one output", op->name);
        return -1;
    }
    const struct nn_gpu_tensor *x = &in[0], *y = &out[0];
    const int64_t n = x->shape.d[0], h = x->shape.d[2], wd = x->shape.d[3];
    int oh = 0, ow = 0;
    if (x->shape.ndim != 4 || x->shape.d[1] != s->ic || (x->dst_channels && x->dst_channels != s->ic) || h < 1 ||
        wd < 1 || h > INT32_MAX || wd > INT32_MAX || pvk_conv_transpose2d_out_hw((int)h, (int)wd, &a, &oh, &ow) ||
        y->shape.ndim != 4 || y->shape.d[0] != n || y->shape.d[1] != s->oc || y->shape.d[2] != oh ||
        y->shape.d[3] != ow) {
        snprintf(err, err_len, "conv_transpose2d %s: shapes do not match the weights and attributes", op->name);
        return -1;
    }
    if (x->dtype != s->cfg.act_dtype || y->dtype != s->cfg.act_dtype) {
        snprintf(err, err_len, "conv_transpose2d %s: tensors must be in the net's storage precision", op->name);
        return -1;
    }
    const int64_t dc = y->dst_channels ? y->dst_channels : s->oc;
    if (dc < s->oc) {
        snprintf(err, err_len, "conv_transpose2d %s: dst_channels %lld below OC %d", op->name, (long long)dc, s->oc);
        return -1;
    }
    const uint32_t hw = (uint32_t)(h * wd), ohw = (uint32_t)oh * (uint32_t)ow;
    const char *label = op->name[0] ? op->name : "conv_transpose2d";
    const struct gpu_buffer *bias = s->has_bias ? &s->bias : &s->weight;

    if (s->scatter) {
        const uint64_t items = (uint64_t)n * hw;
        if (items > UINT32_MAX / 2) {
            snprintf(err, err_len, "conv_transpose2d %s: %lld images of %u pixels are too many", op->name, (long long)n,
                     hw);
            return -1;
        }
        struct gpu_binding bind[4] = {gpu_bind(x->buf), gpu_bind(&s->weight), gpu_bind(y->buf), gpu_bind(bias)};
        struct scatter_push p = {
            .items = (uint32_t)items,
            .hw = hw,
            .w = (uint32_t)wd,
            .ic = (uint32_t)s->ic,
            .x_off = x->elem_offset,
            .x_img = (uint32_t)s->ic * hw,
            .y_off = y->elem_offset,
            .y_img = (uint32_t)dc * ohw,
            .ow = (uint32_t)ow,
            .ohw = ohw,
        };
        uint32_t groups[3];
        nnh_grid_1d(items, SCATTER_LX, groups);
        return nnh_dispatch(cmd, s->scatter, bind, &p, groups, label, err, err_len);
    }
    if (s->one_tap) {
        struct gpu_binding bind[6] = {gpu_bind(&s->weight), gpu_bind(x->buf),     gpu_bind(y->buf),
                                      gpu_bind(bias),       gpu_bind(&s->weight), gpu_bind(&s->weight)};
        struct conv_gemm_push p = {
            .M = (uint32_t)(s->oc * a.kh * a.kw),
            .N = hw,
            .K = (uint32_t)s->ic,
            .zdiv = 1,
            .a_sm = conv_gemm_row((uint32_t)s->ic),
            .b_off = x->elem_offset,
            .b_sk = hw,
            .b_sn = 1,
            .b_z1 = (uint32_t)s->ic * hw,
            .c_off = y->elem_offset,
            .c_sm = ohw,
            .c_z1 = (uint32_t)dc * ohw,
            .H = (uint32_t)h,
            .W = (uint32_t)wd,
            .OW = (uint32_t)ow,
        };
        return conv_gemm_record(&s->gemm, cmd, bind, &p, (uint32_t)n, label, err, err_len) ? -1 : 0;
    }
    struct gpu_binding bind[4] = {gpu_bind(x->buf), gpu_bind(&s->weight), gpu_bind(y->buf), gpu_bind(bias)};
    struct gather_push p = {
        .H = (uint32_t)h,
        .W = (uint32_t)wd,
        .OH = (uint32_t)oh,
        .OW = (uint32_t)ow,
        .icg = (uint32_t)(s->ic / s->group),
        .ocg = (uint32_t)s->ocg,
        .OC = (uint32_t)s->oc,
        .pad_t = (uint32_t)a.pad_t,
        .pad_l = (uint32_t)a.pad_l,
        .x_off = x->elem_offset,
        .x_img = (uint32_t)s->ic * hw,
        .y_off = y->elem_offset,
        .y_img = (uint32_t)dc * ohw,
    };
    const uint32_t groups[3] = {((uint32_t)ow + GATHER_LX - 1) / GATHER_LX, (uint32_t)oh, (uint32_t)(n * s->oc)};
    return nnh_dispatch(cmd, s->gather, bind, &p, groups, label, err, err_len);
}

const struct nn_gpu_op_impl nn_gpu_conv_transpose2d_impl = {
    .create = deconv_create, .record = deconv_record, .destroy = deconv_destroy};
