/* CONV2D and CONV_TRANSPOSE2D on the GPU against the C reference (ref_conv2d,
 * ref_conv_transpose2d): every configuration of the three nets (shared/models.md) and a few more,
 * odd sizes, each activation, residual before/after the activation, writes into a channel slice
 * of a wider tensor at odd element offsets, in fp32 and fp16 storage. Outputs are poisoned with
 * NaN first; channels outside the slice must stay NaN. Each kernel takes the few runs that together
 * meet every feature of the cases it takes (support/coverage.h; a few packed cases hold most of
 * them), and every case runs at least once. Speed is bench_ops' (BENCHMARKS.md), not a test's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/cmd.h"
#include "gpu/context.h"
#include "gpu/error.h"
#include "gpu/pipeline.h"
#include "gpu/pool.h"
#include "gpu/transfer.h"
#include "gpu/validation.h"
#include "nn/cpu/ref_ops.h"
#include "nn/gpu/gpu_op.h"
#include "nn/half.h"
#include "support/coverage.h"
#include "support/test_env.h"
#include "support/test_parts.h"

static struct gpu_context *ctx;
static bool aligned_offsets; /* tensors start at multiples of 8 elements */
static bool fp16_math;       /* fp16 cases run the *_f16a shaders (where the device has shaderFloat16) */

static int setup(void **s)
{
    (void)s;
    struct gpu_options opt;
    gpu_options_default(&opt);
    if (gpu_context_create(&opt, &ctx) != GPU_OK) {
        fprintf(stderr, "gpu_context_create: %s\n", gpu_last_error());
        return -1;
    }
    const struct gpu_caps *caps = gpu_context_caps(ctx);
    fprintf(stderr, "device: %s (cpu %d, fp16 storage %d, coopmat nv %d)\n", caps->device_name, caps->is_cpu,
            caps->storage_16bit, caps->coopmat_nv);
    return 0;
}

static int teardown(void **s)
{
    (void)s;
    gpu_context_destroy(ctx);
    assert_int_equal(gpu_validation_message_count(), 0);
    return 0;
}

#define CHECK(call)                                                                                                    \
    do {                                                                                                               \
        int st_ = (call);                                                                                              \
        if (st_ != GPU_OK)                                                                                             \
            fail_msg("%s -> %d: %s", #call, st_, gpu_last_error());                                                    \
    } while (0)

static size_t esize(enum nn_dtype dt)
{
    return dt == NN_F16 ? 2 : 4;
}

/* A device buffer of `total` elements holding `src` (n floats) from element `offset`; the rest
 * NaN. fp16 tensors get the rounded values back in src so the reference sees what the GPU sees. */
static void upload_tensor(enum nn_dtype dt, float *src, size_t n, size_t offset, size_t total, struct gpu_buffer *b)
{
    CHECK(gpu_buffer_alloc(ctx, GPU_MEMORY_DEVICE, total * esize(dt), b));
    float *all = malloc(total * sizeof *all);
    test_fill_nan(all, total);
    if (dt == NN_F16) {
        for (size_t i = 0; i < n; i++)
            src[i] = nn_half_to_float(nn_float_to_half(src[i]));
    }
    memcpy(all + offset, src, n * sizeof *src);
    if (dt == NN_F16) {
        uint16_t *h = malloc(total * sizeof *h);
        nn_floats_to_halves(all, h, total);
        CHECK(gpu_upload(ctx, b, 0, h, total * 2));
        free(h);
    } else {
        CHECK(gpu_upload(ctx, b, 0, all, total * 4));
    }
    free(all);
}

static float *download_tensor(enum nn_dtype dt, const struct gpu_buffer *b, size_t total)
{
    float *all = malloc(total * sizeof *all);
    if (dt == NN_F16) {
        uint16_t *h = malloc(total * sizeof *h);
        CHECK(gpu_download(ctx, b, 0, h, total * 2));
        nn_halves_to_floats(h, all, total);
        free(h);
    } else {
        CHECK(gpu_download(ctx, b, 0, all, total * 4));
    }
    return all;
}

static struct pvk_shape shape4(int64_t a, int64_t b, int64_t c, int64_t d)
{
    return (struct pvk_shape){4, {a, b, c, d}};
}

struct conv_case {
    int n, c, h, w, oc;
    int kh, kw, sh, sw, dh, dw, pt, pl, pb, pr, group;
    enum pvk_act act;
    enum pvk_residual res;
    int no_bias;
    int slice_before, slice_after; /* output channels of a wider tensor around ours */
    int transpose;                 /* CONV_TRANSPOSE2D */
    int post_affine;               /* a per-channel affine fused into the epilogue */
    int gate;                      /* x scaled per (image, channel) by an SE gate input */
};

/* Records the op into one command buffer and runs it. */
static void run_op(const struct nn_gpu_op_impl *impl, void *state, const struct pvk_op *op,
                   const struct nn_gpu_tensor *in, int n_in, const struct nn_gpu_tensor *out)
{
    struct gpu_cmd *cmd;
    CHECK(gpu_cmd_create(ctx, 0, &cmd));
    CHECK(gpu_cmd_begin(cmd));
    char err[256] = "";
    if (impl->record(state, op, cmd, in, n_in, out, 1, err, sizeof err))
        fail_msg("record: %s", err);
    gpu_cmd_barrier(cmd, GPU_STAGE_COMPUTE, GPU_STAGE_HOST);
    CHECK(gpu_cmd_end(cmd));
    CHECK(gpu_cmd_run(cmd));
    gpu_cmd_destroy(cmd);
}

/* Runs one case (nothing in fp16 where the device has no fp16 storage). */
static void conv_case_run(const struct conv_case *cc, enum nn_dtype dt)
{
    const struct gpu_caps *caps = gpu_context_caps(ctx);
    if (dt == NN_F16 && !caps->storage_16bit)
        return;
    struct pvk_conv_params p = {cc->kh, cc->kw, cc->sh,    cc->sw,  cc->dh, cc->dw, cc->pt, cc->pl,
                                cc->pb, cc->pr, cc->group, cc->act, 0.2f,   0.5f,   cc->res};
    if (cc->act == PVK_ACT_CLIP) {
        p.act_alpha = -0.3f;
        p.act_beta = 0.4f;
    }
    int oh, ow;
    if (cc->transpose)
        assert_int_equal(pvk_conv_transpose2d_out_hw(cc->h, cc->w, &p, &oh, &ow), 0);
    else
        assert_int_equal(pvk_conv2d_out_hw(cc->h, cc->w, &p, &oh, &ow), 0);

    const size_t xn = (size_t)cc->n * cc->c * cc->h * cc->w, yn = (size_t)cc->n * cc->oc * oh * ow;
    const size_t wn = cc->transpose ? (size_t)cc->c * (cc->oc / cc->group) * cc->kh * cc->kw
                                    : (size_t)cc->oc * (cc->c / cc->group) * cc->kh * cc->kw;
    const int fan_in = (cc->c / cc->group) * cc->kh * cc->kw;
    float *x = malloc(xn * sizeof *x), *wt = malloc(wn * sizeof *wt), *bias = malloc(cc->oc * sizeof *bias);
    float *res = malloc(yn * sizeof *res), *want = malloc(yn * sizeof *want);
    test_fill_uniform(x, xn, -1, 1);
    float ws = 1.7f / sqrtf((float)fan_in);
    test_fill_uniform(wt, wn, -ws, ws);
    test_fill_uniform(bias, cc->oc, -0.5f, 0.5f);
    test_fill_uniform(res, yn, -1, 1);
    float *post = malloc(2 * (size_t)cc->oc * sizeof *post); /* scale[oc], shift[oc] */
    test_fill_uniform(post, 2 * (size_t)cc->oc, -1.5f, 1.5f);

    struct pvk_op op = {.type = cc->transpose ? PVK_OP_CONV_TRANSPOSE2D : PVK_OP_CONV2D,
                        .act = p.act,
                        .act_alpha = p.act_alpha,
                        .act_beta = p.act_beta};
    op.attr.conv.kh = cc->kh;
    op.attr.conv.kw = cc->kw;
    op.attr.conv.sh = cc->sh;
    op.attr.conv.sw = cc->sw;
    op.attr.conv.dh = cc->dh;
    op.attr.conv.dw = cc->dw;
    op.attr.conv.pad_t = cc->pt;
    op.attr.conv.pad_l = cc->pl;
    op.attr.conv.pad_b = cc->pb;
    op.attr.conv.pad_r = cc->pr;
    op.attr.conv.group = cc->group;
    op.attr.conv.residual = cc->res;
    snprintf(op.name, sizeof op.name, "%s", cc->transpose ? "conv_transpose" : "conv");
    struct nn_gpu_weights w = {0};
    w.data[0] = wt;
    w.shape[0] = cc->transpose ? shape4(cc->c, cc->oc / cc->group, cc->kh, cc->kw)
                               : shape4(cc->oc, cc->c / cc->group, cc->kh, cc->kw);
    if (!cc->no_bias) {
        w.data[1] = bias;
        w.shape[1] = (struct pvk_shape){1, {cc->oc}};
    }

    if (cc->post_affine) {
        w.post_scale = post;
        w.post_shift = post + cc->oc;
    }
    w.input_gate = cc->gate;

    const struct nn_gpu_op_impl *impl = cc->transpose ? &nn_gpu_conv_transpose2d_impl : &nn_gpu_conv2d_impl;
    const bool math = dt == NN_F16 && fp16_math && gpu_context_caps(ctx)->shader_fp16;
    struct nn_gpu_config cfg = {.ctx = ctx, .act_dtype = dt, .fp16_math = math, .force = nn_gpu_overrides_from_env()};
    void *state = NULL;
    char err[256] = "";
    if (impl->create(&cfg, &op, &w, &state, err, sizeof err))
        fail_msg("create: %s", err);

    /* tensors at odd element offsets (or at multiples of 8, where the GEMM loads vec4s and the
     * cooperative-matrix kernel groups of 8 halves); the output is a channel slice of a wider tensor */
    const size_t x_off = aligned_offsets ? 8 : 3, r_off = aligned_offsets ? 16 : 5, y_base = aligned_offsets ? 24 : 7;
    const int dc = cc->oc + cc->slice_before + cc->slice_after;
    const size_t ohw = (size_t)oh * ow, y_total = y_base + (size_t)cc->n * dc * ohw + 2;
    struct gpu_buffer bx, by, br = {0};
    upload_tensor(dt, x, xn, x_off, x_off + xn + 1, &bx);
    upload_tensor(dt, res, 0, 0, y_total, &by); /* all NaN */
    struct gpu_buffer bg = {0};
    struct nn_gpu_tensor in[3] = {
        {&bx, (uint32_t)x_off, dt, shape4(cc->n, cc->c, cc->h, cc->w), 0},
        {&br, (uint32_t)r_off, dt, shape4(cc->n, cc->oc, oh, ow), 0},
        {&bg, 0, NN_F32, {2, {cc->n, cc->c}}, 0},
    };
    int n_in = 1;
    if (cc->res != PVK_RESIDUAL_NONE) {
        upload_tensor(dt, res, yn, r_off, r_off + yn, &br);
        n_in = 2;
    }
    float *gate = malloc((size_t)cc->n * cc->c * sizeof *gate);
    if (cc->gate) {
        test_fill_uniform(gate, (size_t)cc->n * cc->c, 0, 1);
        upload_tensor(NN_F32, gate, (size_t)cc->n * cc->c, 0, (size_t)cc->n * cc->c, &bg);
        in[n_in++] = in[2];
    }
    struct nn_gpu_tensor out = {&by, (uint32_t)(y_base + cc->slice_before * ohw), dt, shape4(cc->n, cc->oc, oh, ow),
                                cc->slice_before || cc->slice_after ? dc : 0};
    /* ... and the reference sees the rounded weights too */
    if (dt == NN_F16) {
        for (size_t i = 0; i < wn; i++)
            wt[i] = nn_half_to_float(nn_float_to_half(wt[i]));
    }

    run_op(impl, state, &op, in, n_in, &out);
    if (cc->gate) /* the reference convolves the gated input */
        for (size_t i = 0; i < xn; i++)
            x[i] *= gate[i / ((size_t)cc->h * cc->w)];

    if (cc->transpose) {
        ref_conv_transpose2d(x, cc->n, cc->c, cc->h, cc->w, wt, cc->no_bias ? NULL : bias, cc->oc, &p, want);
        ref_act(p.act, p.act_alpha, p.act_beta, want, yn);
    } else {
        ref_conv2d(x, cc->n, cc->c, cc->h, cc->w, wt, cc->no_bias ? NULL : bias, cc->oc, &p,
                   cc->res != PVK_RESIDUAL_NONE ? res : NULL, want);
    }
    if (cc->post_affine)
        for (size_t i = 0; i < yn; i++) {
            size_t ch = i / ((size_t)oh * ow) % (size_t)cc->oc;
            want[i] = post[ch] * want[i] + post[cc->oc + ch];
        }
    float *all = download_tensor(dt, &by, y_total);
    float *got = malloc(yn * sizeof *got);
    for (int b = 0; b < cc->n; b++) {
        for (int ch = 0; ch < dc; ch++) {
            const float *src = all + y_base + ((size_t)b * dc + ch) * ohw;
            int own = ch - cc->slice_before;
            if (own >= 0 && own < cc->oc) {
                memcpy(got + ((size_t)b * cc->oc + own) * ohw, src, ohw * sizeof *got);
                continue;
            }
            for (size_t i = 0; i < ohw; i++)
                if (!isnan(src[i]))
                    fail_msg("image %d channel %d (outside the slice) was written", b, ch);
        }
    }
    for (size_t i = 0; i < y_base; i++)
        assert_true(isnan(all[i]));
    for (size_t i = y_base + (size_t)cc->n * dc * ohw; i < y_total; i++)
        assert_true(isnan(all[i]));
    double err_l2 = test_rel_l2(got, want, yn), tol = dt == NN_F16 ? 1e-2 : 1e-4;
    if (!(err_l2 <= tol))
        fail_msg("%s %s n%d c%d %dx%d -> oc%d k%dx%d s%d,%d d%d,%d pad %d,%d,%d,%d g%d act %d res %d affine %d: "
                 "rel-L2 %g",
                 cc->transpose ? "conv_transpose2d" : "conv2d",
                 math           ? "f16 arithmetic"
                 : dt == NN_F16 ? "f16"
                                : "f32",
                 cc->n, cc->c, cc->h, cc->w, cc->oc, cc->kh, cc->kw, cc->sh, cc->sw, cc->dh, cc->dw, cc->pt, cc->pl,
                 cc->pb, cc->pr, cc->group, cc->act, cc->res, cc->post_affine, err_l2);

    impl->destroy(state);
    gpu_buffer_free(&bx);
    gpu_buffer_free(&by);
    gpu_buffer_free(&br);
    gpu_buffer_free(&bg);
    free(gate);
    free(all);
    free(got);
    free(x);
    free(wt);
    free(bias);
    free(res);
    free(post);
    free(want);
}

/* What a run of a case exercises (support/coverage.h): its precision, its offsets' alignment and
 * the features of its shape and fusions. */
enum {
    F_F32,
    F_F16,
    F_F16_MATH,
    F_ALIGNED,
    F_ODD_OFFSETS,
    F_ODD_HW,
    F_BATCH,
    F_STRIDE,
    F_UNEVEN_STRIDE,
    F_DILATION,
    F_GROUPS,
    F_DEPTHWISE_MULT,
    F_PADDING,
    F_UNEVEN_PADDING,
    F_NO_BIAS,
    F_ACT,
    F_RES_BEFORE,
    F_RES_AFTER,
    F_SLICE,
    F_AFFINE,
    F_GATE,
    F_K_1024,
    F_K_ODD,
    F_OC_ODD,
    F_WIDE,
    F_OC_64,
    F_KERNEL_1X1,
    F_KERNEL_RECT,
    F_KERNEL_5,
    F_ONE_PIXEL,
    F_TRANSPOSE,
    F_VEC4_ROWS,
    F_COUNT
};
static const char *const feature_names[64] = {
    "fp32 storage",
    "fp16 storage",
    "fp16 arithmetic",
    "aligned offsets",
    "odd offsets",
    "odd height or width",
    "batch > 1",
    "stride > 1",
    "unequal strides",
    "dilation",
    "groups",
    "depthwise multiplier",
    "padding",
    "uneven padding",
    "no bias",
    "activation",
    "residual before the activation",
    "residual after the activation",
    "channel slice",
    "post affine",
    "input gate",
    "K >= 1024",
    "K not a multiple of 4",
    "OC not a multiple of 4",
    "more than 128 output columns",
    "OC > 64",
    "1x1 kernel",
    "non-square kernel",
    "kernel of 5 or more",
    "one-pixel input",
    "transposed",
    "vec4 rows (aligned offsets, H x W and OH x OW multiples of 4)",
};
#define BIT(f) ((uint64_t)1 << (f))

static bool is_depthwise(const struct conv_case *cc)
{
    return !cc->transpose && cc->group == cc->c && cc->oc == cc->c;
}

/* The features of case i (at the index that decides its offsets' alignment) in any precision. */
static uint64_t case_features(const struct conv_case *cc, size_t i)
{
    struct pvk_conv_params p = {cc->kh, cc->kw, cc->sh,    cc->sw, cc->dh, cc->dw, cc->pt, cc->pl,
                                cc->pb, cc->pr, cc->group, 0,      0,      0,      0};
    int oh = 0, ow = 0;
    if (cc->transpose)
        pvk_conv_transpose2d_out_hw(cc->h, cc->w, &p, &oh, &ow);
    else
        pvk_conv2d_out_hw(cc->h, cc->w, &p, &oh, &ow);
    const int k = (cc->c / cc->group) * cc->kh * cc->kw;
    uint64_t f = BIT((i / 2) % 2 ? F_ALIGNED : F_ODD_OFFSETS);
    f |= (cc->h % 2 || cc->w % 2) ? BIT(F_ODD_HW) : 0;
    f |= cc->n > 1 ? BIT(F_BATCH) : 0;
    f |= (cc->sh > 1 || cc->sw > 1) ? BIT(F_STRIDE) : 0;
    f |= cc->sh != cc->sw ? BIT(F_UNEVEN_STRIDE) : 0;
    f |= (cc->dh > 1 || cc->dw > 1) ? BIT(F_DILATION) : 0;
    f |= cc->group > 1 && cc->group != cc->c ? BIT(F_GROUPS) : 0;
    f |= cc->group > 1 && cc->group == cc->c && cc->oc != cc->c ? BIT(F_DEPTHWISE_MULT) : 0;
    f |= (cc->pt || cc->pl || cc->pb || cc->pr) ? BIT(F_PADDING) : 0;
    f |= (cc->pt != cc->pb || cc->pl != cc->pr || cc->pt != cc->pl) ? BIT(F_UNEVEN_PADDING) : 0;
    f |= cc->no_bias ? BIT(F_NO_BIAS) : 0;
    f |= cc->act != PVK_ACT_NONE ? BIT(F_ACT) : 0;
    f |= cc->res == PVK_RESIDUAL_BEFORE_ACT ? BIT(F_RES_BEFORE) : 0;
    f |= cc->res == PVK_RESIDUAL_AFTER_ACT ? BIT(F_RES_AFTER) : 0;
    f |= (cc->slice_before || cc->slice_after) ? BIT(F_SLICE) : 0;
    f |= cc->post_affine ? BIT(F_AFFINE) : 0;
    f |= cc->gate ? BIT(F_GATE) : 0;
    f |= k >= 1024 ? BIT(F_K_1024) : 0;
    f |= k % 4 ? BIT(F_K_ODD) : 0;
    f |= cc->oc % 4 ? BIT(F_OC_ODD) : 0;
    f |= (size_t)oh * ow > 128 ? BIT(F_WIDE) : 0;
    f |= cc->oc > 64 ? BIT(F_OC_64) : 0;
    f |= cc->kh == 1 && cc->kw == 1 ? BIT(F_KERNEL_1X1) : 0;
    f |= cc->kh != cc->kw ? BIT(F_KERNEL_RECT) : 0;
    f |= cc->kh >= 5 || cc->kw >= 5 ? BIT(F_KERNEL_5) : 0;
    f |= cc->h * cc->w == 1 ? BIT(F_ONE_PIXEL) : 0;
    f |= cc->transpose ? BIT(F_TRANSPOSE) : 0;
    f |= (i / 2) % 2 && cc->h * cc->w % 4 == 0 && oh * ow % 4 == 0 ? BIT(F_VEC4_ROWS) : 0;
    return f;
}

/* Roughly the work of a run (multiply-adds and elements), to prefer the smaller of two cases
 * that meet the same features. */
static double case_cost(const struct conv_case *cc)
{
    return (double)cc->n * cc->oc * cc->h * cc->w * (cc->c / cc->group) * cc->kh * cc->kw +
           (double)cc->n * cc->c * cc->h * cc->w;
}

/* n, c, h, w, oc, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr, group, act, res, no_bias, before, after, transpose,
 * post_affine, gate */
static const struct conv_case pointwise_cases[] = {
    {2, 16, 9, 13, 24, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, PVK_ACT_RELU6, 0, 0, 0, 0, 0, 0, 0},
    {1, 3, 1, 1, 5, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, PVK_ACT_NONE, 0, 0, 0, 0, 0, 0, 0},
    {1, 7, 1, 37, 70, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, PVK_ACT_HARDSWISH, 0, 1, 0, 0, 0, 0, 0},
    {3, 40, 5, 7, 9, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, PVK_ACT_NONE, 0, 0, 0, 0, 0, 0, 0},
    {1, 96, 17, 19, 130, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, PVK_ACT_RELU, 0, 0, 0, 0, 0, 0, 0},
    {1, 1, 4, 4, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, PVK_ACT_NONE, 0, 0, 0, 0, 0, 0, 0},
    /* H W a multiple of 4, at indices run_cases places at aligned offsets: vec4 B loads */
    {2, 12, 4, 6, 20, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, PVK_ACT_RELU, PVK_RESIDUAL_AFTER_ACT, 0, 0, 0, 0, 0, 0},
    {1, 33, 8, 9, 65, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, PVK_ACT_NONE, 0, 0, 0, 0, 0, 0, 0},
    /* wider than a CPU workgroup (128 columns): 8, 9 at odd offsets, 10, 11 aligned (vec4 C) */
    {1, 8, 12, 20, 9, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, PVK_ACT_NONE, 0, 0, 0, 0, 0, 0, 0},
    {2, 5, 16, 16, 7, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, PVK_ACT_RELU, PVK_RESIDUAL_BEFORE_ACT, 0, 0, 0, 0, 0, 0},
    {1, 24, 16, 20, 40, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, PVK_ACT_HARDSWISH, PVK_RESIDUAL_AFTER_ACT, 0, 0, 0, 0, 0, 0},
    {2, 7, 8, 32, 13, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, PVK_ACT_RELU6, PVK_RESIDUAL_BEFORE_ACT, 0, 0, 0, 0, 0, 0},
    /* the direct kernel's wider channel tiles for pointwise convolutions: 24 (two blocks) and 16 */
    {1, 20, 6, 10, 48, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, PVK_ACT_HARDSWISH, 0, 0, 0, 0, 0, 0, 0},
    {2, 9, 5, 8, 32, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, PVK_ACT_RELU, PVK_RESIDUAL_AFTER_ACT, 0, 0, 0, 0, 0, 0},
    /* cooperative matrices (where the device has them): K past the last 16-deep step and not a
     * multiple of 4, N not a multiple of 4 */
    {2, 101, 7, 9, 40, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, PVK_ACT_HARDSWISH, 0, 0, 0, 0, 0, 0, 0},
    {1, 160, 8, 8, 72, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, PVK_ACT_NONE, PVK_RESIDUAL_AFTER_ACT, 0, 0, 0, 0, 0, 0},
    /* K and N multiples of 8 but not of the tiles, gated; at odd offsets, then (18, 19) at
     * aligned ones, where cooperative matrices load whole groups of 8 */
    {2, 128, 10, 12, 48, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, PVK_ACT_RELU, PVK_RESIDUAL_AFTER_ACT, 0, 0, 0, 0, 0, 0},
    {1, 200, 6, 8, 33, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, PVK_ACT_NONE, 0, 0, 0, 0, 0, 0, 1},
    {2, 128, 10, 12, 48, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, PVK_ACT_RELU, PVK_RESIDUAL_AFTER_ACT, 0, 0, 0, 0, 0, 0},
    {1, 200, 6, 8, 33, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, PVK_ACT_NONE, 0, 0, 0, 0, 0, 0, 1},
};

static const struct conv_case depthwise_cases[] = {
    {2, 8, 11, 17, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 8, PVK_ACT_HARDSWISH, 0, 0, 0, 0, 0, 0, 0},
    {1, 5, 9, 10, 5, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 5, PVK_ACT_RELU6, 0, 0, 0, 0, 0, 0, 0},
    {1, 6, 8, 9, 6, 3, 3, 2, 1, 1, 1, 1, 1, 1, 1, 6, PVK_ACT_NONE, 0, 0, 0, 0, 0, 0, 0},
    {2, 6, 7, 12, 6, 3, 3, 1, 2, 1, 1, 1, 1, 1, 1, 6, PVK_ACT_NONE, 0, 1, 0, 0, 0, 0, 0},
    {1, 12, 13, 21, 12, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2, 12, PVK_ACT_HARDSWISH, 0, 0, 0, 0, 0, 0, 0},
    {1, 7, 12, 11, 7, 5, 5, 2, 2, 1, 1, 2, 2, 2, 2, 7, PVK_ACT_NONE, 0, 0, 0, 0, 0, 0, 0},
    {2, 4, 12, 15, 4, 5, 5, 2, 1, 1, 1, 2, 2, 2, 2, 4, PVK_ACT_RELU, 0, 0, 0, 0, 0, 0, 0},
    {1, 3, 19, 23, 3, 7, 7, 1, 1, 2, 2, 6, 6, 6, 6, 3, PVK_ACT_NONE, 0, 0, 0, 0, 0, 0, 0},
    {1, 3, 10, 9, 3, 3, 3, 1, 1, 2, 2, 2, 1, 0, 3, 3, PVK_ACT_NONE, 0, 0, 0, 0, 0, 0, 0},
    {1, 4, 1, 1, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 4, PVK_ACT_NONE, 0, 0, 0, 0, 0, 0, 0},
    {1, 2, 3, 3, 2, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2, 2, PVK_ACT_NONE, 0, 0, 0, 0, 0, 0, 0},
    {1, 5, 1, 300, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 5, PVK_ACT_NONE, 0, 0, 0, 0, 0, 0, 0},
    /* large enough for the GPU tiles' row blocks (4 rows at 5x5, 2 at 3x3), the last block short */
    {1, 96, 70, 90, 96, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2, 96, PVK_ACT_HARDSWISH, 0, 0, 0, 0, 0, 0, 0},
    {2, 64, 61, 75, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 64, PVK_ACT_RELU, PVK_RESIDUAL_AFTER_ACT, 0, 0, 0, 0, 0, 0},
    /* at aligned offsets (index 14), rows of 24: whole groups of 8 outputs and residuals, then a tail */
    {1, 16, 6, 24, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 16, PVK_ACT_RELU, PVK_RESIDUAL_BEFORE_ACT, 0, 0, 0, 0, 0, 0},
};

static const struct conv_case general_cases[] = {
    {1, 5, 10, 12, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, PVK_ACT_RELU, 0, 0, 0, 0, 0, 0, 0},
    {1, 3, 33, 31, 16, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, PVK_ACT_HARDSWISH, 0, 0, 0, 0, 0, 0, 0},
    {2, 12, 2, 20, 10, 1, 3, 1, 1, 1, 1, 0, 1, 0, 1, 1, PVK_ACT_NONE, 0, 0, 0, 0, 0, 0, 0},
    {1, 8, 9, 7, 12, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 4, PVK_ACT_NONE, 0, 0, 0, 0, 0, 0, 0},
    {1, 6, 8, 8, 4, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 2, PVK_ACT_NONE, 0, 1, 0, 0, 0, 0, 0},
    {1, 6, 9, 9, 4, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0, 1, PVK_ACT_NONE, 0, 0, 0, 0, 0, 0, 0},
    {1, 4, 6, 7, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 4, PVK_ACT_NONE, 0, 0, 0, 0, 0, 0, 0}, /* dw, multiplier 2 */
    {1, 70, 5, 6, 66, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 1, PVK_ACT_SWISH, 0, 0, 0, 0, 0, 0, 0},
    {1, 3, 1, 1, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, PVK_ACT_NONE, 0, 0, 0, 0, 0, 0, 0},
    {1, 2, 5, 4, 3, 2, 3, 3, 2, 1, 1, 0, 2, 1, 0, 1, PVK_ACT_NONE, 0, 0, 0, 0, 0, 0, 0},
    /* channel sums split 2, 4, 8 and 16 ways by the direct kernel's GPU tiles, channels left over */
    {2, 37, 6, 11, 24, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, PVK_ACT_RELU, 0, 0, 0, 0, 0, 0, 0},
    {1, 70, 7, 9, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, PVK_ACT_NONE, PVK_RESIDUAL_AFTER_ACT, 0, 0, 0, 0, 0, 0},
    {3, 130, 1, 13, 60, 1, 3, 1, 1, 1, 1, 0, 1, 0, 1, 1, PVK_ACT_HARDSWISH, 0, 0, 0, 0, 0, 0, 0},
    /* enough tiles that a GPU's own choice takes the direct kernel over the GEMM */
    {2, 64, 40, 41, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, PVK_ACT_RELU6, 0, 0, 0, 0, 0, 0, 0},
    /* K of 1,024 or more: cooperative matrices (where the device has them) in K slices, the
     * last round of steps part past K; at aligned offsets (14, 15), then at odd ones (16) */
    {2, 347, 1, 29, 60, 1, 3, 1, 1, 1, 1, 0, 1, 0, 1, 1, PVK_ACT_SWISH, 0, 0, 0, 0, 0, 0, 0},
    {1, 120, 9, 11, 33, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, PVK_ACT_HARDSWISH, PVK_RESIDUAL_AFTER_ACT, 0, 0, 0, 0, 0, 0},
    {3, 480, 1, 40, 60, 1, 3, 1, 1, 1, 1, 0, 1, 0, 1, 1, PVK_ACT_SWISH, 0, 0, 0, 0, 0, 0, 0},
    /* stride 2 beside a row of a multiple of 4; a 5 x 5 kernel over 24 channels, whose GPU
     * tiles would take more than 32 KiB of shared memory; a long kernel row, stride 2 */
    {1, 6, 9, 24, 12, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, PVK_ACT_RELU, 0, 0, 0, 0, 0, 0, 0},
    {2, 7, 11, 16, 24, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2, 1, PVK_ACT_HARDSWISH, PVK_RESIDUAL_AFTER_ACT, 0, 0, 0, 0, 0, 0},
    {1, 5, 6, 28, 8, 1, 7, 1, 2, 1, 1, 0, 3, 0, 3, 1, PVK_ACT_NONE, 0, 1, 0, 0, 0, 1, 0},
};

static const struct conv_case residual_cases[] = {
    {2, 16, 5, 6, 12, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, PVK_ACT_RELU, PVK_RESIDUAL_AFTER_ACT, 0, 0, 0, 0, 0, 0},
    {2, 16, 5, 6, 12, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, PVK_ACT_RELU, PVK_RESIDUAL_BEFORE_ACT, 0, 0, 0, 0, 0, 0},
    {1, 6, 9, 7, 6, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2, 6, PVK_ACT_HARDSWISH, PVK_RESIDUAL_AFTER_ACT, 0, 0, 0, 0, 0, 0},
    {1, 6, 9, 7, 6, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 6, PVK_ACT_RELU6, PVK_RESIDUAL_BEFORE_ACT, 0, 0, 0, 0, 0, 0},
    {1, 5, 6, 8, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, PVK_ACT_SIGMOID, PVK_RESIDUAL_BEFORE_ACT, 0, 0, 0, 0, 0, 0},
    {2, 4, 6, 8, 6, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2, PVK_ACT_RELU, PVK_RESIDUAL_AFTER_ACT, 0, 0, 0, 0, 0, 0},
};

static const struct conv_case concat_slice_cases[] = {
    {2, 8, 5, 7, 6, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, PVK_ACT_RELU, PVK_RESIDUAL_AFTER_ACT, 0, 3, 2, 0, 0, 0},
    {2, 5, 6, 9, 5, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 5, PVK_ACT_NONE, PVK_RESIDUAL_BEFORE_ACT, 0, 1, 4, 0, 0, 0},
    {2, 3, 7, 5, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, PVK_ACT_NONE, 0, 0, 2, 0, 0, 0, 0},
    {1, 3, 7, 5, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, PVK_ACT_NONE, 0, 0, 0, 3, 0, 0, 0},
    {2, 6, 3, 4, 5, 2, 2, 2, 2, 1, 1, 0, 0, 0, 0, 1, PVK_ACT_RELU, 0, 0, 2, 1, 1, 0, 0},
    {1, 4, 3, 4, 6, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, PVK_ACT_NONE, 0, 0, 1, 2, 1, 0, 0},
};

static const struct conv_case transpose_cases[] = {
    {1, 16, 5, 7, 8, 2, 2, 2, 2, 1, 1, 0, 0, 0, 0, 1, PVK_ACT_RELU, 0, 0, 0, 0, 1, 0, 0},
    {2, 3, 1, 1, 5, 2, 2, 2, 2, 1, 1, 0, 0, 0, 0, 1, PVK_ACT_NONE, 0, 1, 0, 0, 1, 0, 0},
    {1, 24, 9, 6, 70, 2, 2, 2, 2, 1, 1, 0, 0, 0, 0, 1, PVK_ACT_SIGMOID, 0, 0, 0, 0, 1, 0, 0},
    {1, 5, 4, 6, 3, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, PVK_ACT_NONE, 0, 0, 0, 0, 1, 0, 0},
    {2, 4, 5, 3, 6, 4, 4, 2, 2, 1, 1, 1, 1, 1, 1, 2, PVK_ACT_RELU6, 0, 0, 0, 0, 1, 0, 0},
    {1, 3, 4, 4, 2, 3, 2, 1, 3, 2, 1, 0, 1, 2, 0, 1, PVK_ACT_NONE, 0, 0, 0, 0, 1, 0, 0},
    {1, 4, 3, 5, 3, 3, 3, 3, 3, 1, 1, 0, 0, 0, 0, 1, PVK_ACT_NONE, 0, 0, 0, 0, 1, 0, 0},
    {2, 9, 4, 5, 6, 2, 2, 2, 2, 1, 1, 0, 0, 0, 0, 1, PVK_ACT_NONE, 0, 0, 0, 0, 1, 0, 0}, /* aligned: vec4 */
    /* 27 rows (oc, a, b), not a multiple of 4, into a channel slice */
    {2, 5, 3, 7, 3, 3, 3, 3, 3, 1, 1, 0, 0, 0, 0, 1, PVK_ACT_HARDSIGMOID, 0, 0, 2, 1, 1, 0, 0},
};

/* A learnable affine after the activation, applied in the epilogue of every convolution kernel
 * (GEMM tiles and vec4 stores, depthwise, im2col), with and without bias and residual. */
static const struct conv_case post_affine_cases[] = {
    {2, 16, 9, 13, 24, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, PVK_ACT_HARDSWISH, 0, 0, 0, 0, 0, 1, 0},
    {1, 7, 1, 37, 70, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, PVK_ACT_HARDSWISH, 0, 1, 0, 0, 0, 1, 0},
    {1, 8, 12, 20, 9, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, PVK_ACT_RELU, PVK_RESIDUAL_AFTER_ACT, 0, 0, 0, 0, 1, 0},
    {2, 12, 4, 6, 20, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, PVK_ACT_RELU, 0, 0, 2, 1, 0, 1, 0},
    {2, 8, 11, 17, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 8, PVK_ACT_HARDSWISH, 0, 0, 0, 0, 0, 1, 0},
    {1, 12, 13, 21, 12, 5, 5, 2, 2, 1, 1, 2, 2, 2, 2, 12, PVK_ACT_HARDSWISH, 0, 1, 0, 0, 0, 1, 0},
    {1, 5, 10, 12, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, PVK_ACT_RELU, 0, 0, 0, 0, 0, 1, 0},
    {1, 8, 9, 7, 12, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 4, PVK_ACT_NONE, 0, 0, 0, 0, 0, 1, 0},
};

/* An SE gate applied to the input rows of the 1x1 convolution's GEMM as they load, in every
 * GEMM kernel (tiles, vec4, register tiles) and the direct one, with the other epilogue fusions
 * around it. */
static const struct conv_case input_gate_cases[] = {
    {2, 16, 9, 13, 24, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, PVK_ACT_HARDSWISH, 0, 0, 0, 0, 0, 0, 1},
    {1, 7, 1, 37, 70, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, PVK_ACT_NONE, 0, 1, 0, 0, 0, 1, 1},
    {2, 12, 4, 6, 20, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, PVK_ACT_RELU, PVK_RESIDUAL_BEFORE_ACT, 0, 0, 0, 0, 0, 1},
    {3, 40, 5, 7, 9, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, PVK_ACT_NONE, 0, 0, 0, 0, 0, 0, 1},
    {1, 96, 17, 19, 130, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, PVK_ACT_HARDSWISH, 0, 0, 0, 0, 0, 1, 1},
    {2, 24, 16, 20, 40, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, PVK_ACT_HARDSWISH, 0, 0, 0, 0, 0, 1, 1},
    {2, 150, 5, 11, 36, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, PVK_ACT_NONE, 0, 0, 0, 0, 0, 0, 1},
};

/* Cases that each hold many features at once, so that every kernel meets them all in a few runs:
 * each run is mostly a pipeline of its own (fusions, kernel geometry and tile choices are
 * specialisation constants), and a pipeline compiles at its first dispatch, seconds each with
 * lavapipe's LLVM under ASan. Indices 0, 1 and 4, 5 run at odd offsets, 2, 3 and 6, 7 at aligned
 * ones; each family once with the residual before the activation and once after it. */
static const struct conv_case packed_cases[] = {
    /* pointwise, gated, no bias: K past 1,024 and odd, odd sides, more than 128 columns, OC past
     * 64 and odd, into a channel slice, with the affine */
    {2, 1031, 13, 11, 67, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, PVK_ACT_HARDSWISH, PVK_RESIDUAL_AFTER_ACT, 1, 2, 3, 0, 1, 1},
    /* a 5x3 kernel, strides 2 and 1, dilation 2, uneven padding, 2 groups, OC past 64 */
    {2, 6, 25, 23, 66, 5, 3, 2, 1, 2, 2, 3, 1, 2, 2, 2, PVK_ACT_RELU, PVK_RESIDUAL_BEFORE_ACT, 1, 1, 2, 0, 1, 0},
    /* the same at aligned offsets, the residuals swapped, with sides whose products are multiples of
     * 4 in and out (vec4 rows) */
    {2, 1031, 12, 11, 67, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, PVK_ACT_RELU6, PVK_RESIDUAL_BEFORE_ACT, 1, 2, 3, 0, 1, 1},
    {2, 6, 24, 25, 66, 5, 3, 2, 1, 2, 2, 3, 1, 2, 2, 2, PVK_ACT_HARDSWISH, PVK_RESIDUAL_AFTER_ACT, 1, 1, 2, 0, 1, 0},
    /* depthwise: 5x5, strides 2 and 1, dilation 2, uneven padding, 67 channels */
    {2, 67, 23, 21, 67, 5, 5, 2, 1, 2, 2, 4, 3, 4, 5, 67, PVK_ACT_HARDSWISH, PVK_RESIDUAL_AFTER_ACT, 1, 2, 1, 0, 1, 0},
    /* transposed, batched, one pixel, no bias, into a slice */
    {2, 5, 1, 1, 7, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, PVK_ACT_RELU, 0, 1, 1, 2, 1, 0, 0},
    {2, 67, 24, 21, 67, 5, 5, 2, 1, 2, 2, 4, 3, 4, 5, 67, PVK_ACT_RELU, PVK_RESIDUAL_BEFORE_ACT, 1, 2, 1, 0, 1, 0},
    {2, 5, 4, 5, 7, 2, 2, 2, 2, 1, 1, 0, 0, 0, 0, 1, PVK_ACT_HARDSWISH, 0, 0, 2, 1, 1, 0, 0},
};

/* Every case of every table, each at its index in its own table (which decides its offsets'
 * alignment: indices 2 and 3 of every 4 are aligned, see the comments of the tables). */
struct case_ref {
    const struct conv_case *cc;
    size_t index;
};
#define TABLE(t)                                                                                                       \
    {                                                                                                                  \
        t, sizeof t / sizeof t[0]                                                                                      \
    }
static const struct {
    const struct conv_case *cases;
    size_t count;
} tables[] = {TABLE(packed_cases),    TABLE(pointwise_cases),   TABLE(depthwise_cases),
              TABLE(general_cases),   TABLE(residual_cases),    TABLE(concat_slice_cases),
              TABLE(transpose_cases), TABLE(post_affine_cases), TABLE(input_gate_cases)};
enum { MAX_CASES = 160 };
static struct case_ref all_cases[MAX_CASES];
static size_t case_count;

static void list_cases(void)
{
    case_count = 0;
    for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++)
        for (size_t i = 0; i < tables[t].count && case_count < MAX_CASES; i++)
            all_cases[case_count++] = (struct case_ref){&tables[t].cases[i], i};
}

static bool aligned_at(size_t index)
{
    return (index / 2) % 2;
}

/* The kernels: the name PPOCR_VK_GEMM_KERNEL forces and the name coverage reports. Shared-memory
 * tiles for GPUs (big, small and sliced), K-split, register tiles for CPUs, direct convolutions
 * (register tiles for the rest; their subgroup variant where the device has one, then never that
 * variant), direct convolutions with GPU tiles and split channel sums, stride-1 convolutions
 * through shared-memory tiles (fp32 only: in fp16 that is the direct kernel again); then, only
 * where the device has cooperative matrices, "": its own choice, and each cooperative-matrix tile
 * forced. Depthwise convolutions take their own kernel whatever is forced, in three variants that
 * the forced name picks (GPU tiles, CPU tiles on texels in fp32 where the device has 64-bit
 * integers, CPU tiles on a storage buffer): they count as three more kernels. */
enum { COOPMAT_FIRST = 9, DEPTHWISE = 13, KERNELS = 16 };
static const char *const kernels[KERNELS] = {
    "tiled", "small",        "sliced",       "ksplit",         "cpu",   "direct", "direct1", "gpudirect", "gputile",
    "",      "coopmat32x64", "coopmat64x64", "coopmat128x128", "tiled", "cpu",    "direct1"};
static const char *const kernel_names[KERNELS] = {
    "tiled",          "small",         "sliced",        "ksplit",        "cpu",          "direct",
    "direct1",        "gpudirect",     "gputile",       "(own choice)",  "coopmat32x64", "coopmat64x64",
    "coopmat128x128", "depthwise gpu", "depthwise cpu", "depthwise cpu1"};
enum { KSPLIT = 3, GPUDIRECT = 7 };

static bool kernel_on_device(int kernel)
{
    return kernel < COOPMAT_FIRST || kernel >= DEPTHWISE || gpu_context_caps(ctx)->coopmat_nv;
}

/* The precisions a kernel runs in on this device (feature bits). */
static uint64_t kernel_precisions(int kernel)
{
    const struct gpu_caps *caps = gpu_context_caps(ctx);
    const bool f32_only = !strcmp(kernels[kernel], "gputile");
    const bool f16 = caps->storage_16bit && !f32_only, f16_math = f16 && caps->shader_fp16;
    return BIT(F_F32) | (f16 ? BIT(F_F16) : 0) | (f16_math ? BIT(F_F16_MATH) : 0);
}

struct conv_run {
    size_t case_number; /* into all_cases */
    int precision;      /* F_F32, F_F16 or F_F16_MATH */
    uint64_t features;
};

/* The runs of one kernel: a few (case, precision) pairs of the cases it takes that together meet
 * every feature those cases hold (support/coverage.h), offered to cov. Returns their count. */
static size_t pick_runs(int kernel, struct coverage *cov, struct conv_run *runs)
{
    const uint64_t precisions = kernel_precisions(kernel);
    coverage_applies(cov, kernel, ~(BIT(F_F32) | BIT(F_F16) | BIT(F_F16_MATH)) | precisions);
    struct conv_run *candidates = malloc(3 * case_count * sizeof *candidates);
    uint64_t *features = malloc(3 * case_count * sizeof *features);
    double *cost = malloc(3 * case_count * sizeof *cost);
    size_t *which = malloc(3 * case_count * sizeof *which);
    assert_true(candidates && features && cost && which);
    size_t count = 0;
    for (size_t c = 0; c < case_count; c++) {
        const struct case_ref *r = &all_cases[c];
        if (is_depthwise(r->cc) != (kernel >= DEPTHWISE))
            continue;
        const uint64_t f = case_features(r->cc, r->index);
        coverage_offer(cov, kernel, f | precisions);
        for (int pr = F_F32; pr <= F_F16_MATH; pr++)
            if (precisions >> pr & 1) {
                candidates[count] = (struct conv_run){c, pr, f | BIT(pr)};
                features[count] = f | BIT(pr);
                cost[count] = case_cost(r->cc);
                count++;
            }
    }
    const size_t n = count ? coverage_pick(features, cost, count, cov->held[kernel], which) : 0;
    for (size_t i = 0; i < n; i++)
        runs[i] = candidates[which[i]];
    free(candidates);
    free(features);
    free(cost);
    free(which);
    return n;
}

static void run_one(int kernel, const struct conv_run *r)
{
    const struct case_ref *c = &all_cases[r->case_number];
    setenv("PPOCR_VK_GEMM_KERNEL", kernels[kernel], 1);
    aligned_offsets = aligned_at(c->index);
    fp16_math = r->precision == F_F16_MATH;
    conv_case_run(c->cc, r->precision == F_F32 ? NN_F32 : NN_F16);
    unsetenv("PPOCR_VK_GEMM_KERNEL");
    aligned_offsets = false;
    fp16_math = false;
}

/* Each of the kernels [first, end) that the device has, through its picked runs; a kernel that
 * misses a feature of the cases it takes fails the test. */
static void run_kernels(int first, int end)
{
    struct coverage cov;
    coverage_init(&cov, feature_names, kernel_names, KERNELS);
    struct conv_run *runs = malloc(3 * case_count * sizeof *runs);
    assert_non_null(runs);
    size_t total = 0;
    for (int kernel = first; kernel < end; kernel++) {
        if (!kernel_on_device(kernel))
            continue;
        const size_t n = pick_runs(kernel, &cov, runs);
        for (size_t i = 0; i < n; i++) {
            run_one(kernel, &runs[i]);
            coverage_ran(&cov, kernel, runs[i].features);
        }
        total += n;
    }
    fprintf(stderr, "conv kernels %s..%s: %zu runs, %u pipelines built\n", kernel_names[first], kernel_names[end - 1],
            total, gpu_pipeline_count(ctx));
    free(runs);
    assert_int_equal(coverage_check(&cov, "conv cases"), 0);
}

static void test_tiled_small(void **s)
{
    (void)s;
    run_kernels(0, 2); /* tiled, small */
}

static void test_sliced_ksplit_cpu(void **s)
{
    (void)s;
    run_kernels(2, 5); /* sliced, ksplit, cpu */
}

static void test_direct(void **s)
{
    (void)s;
    run_kernels(5, COOPMAT_FIRST); /* direct, direct1, gpudirect, gputile */
}

static void test_coopmat(void **s)
{
    (void)s;
    if (!gpu_context_caps(ctx)->coopmat_nv)
        skip();
    run_kernels(COOPMAT_FIRST, DEPTHWISE);
}

static void test_depthwise(void **s)
{
    (void)s;
    run_kernels(DEPTHWISE, KERNELS);
}

/* Each case that no kernel's runs took, once: through the K-split and the direct kernels with GPU
 * tiles in turn (the cheapest to compile) or a depthwise variant, precisions alternating. */
static void test_every_case(void **s)
{
    (void)s;
    struct coverage scratch;
    coverage_init(&scratch, feature_names, kernel_names, KERNELS);
    struct conv_run *runs = malloc(3 * case_count * sizeof *runs);
    bool *ran = calloc(case_count, sizeof *ran);
    assert_true(runs && ran);
    for (int kernel = 0; kernel < KERNELS; kernel++) {
        if (!kernel_on_device(kernel))
            continue;
        const size_t n = pick_runs(kernel, &scratch, runs);
        for (size_t i = 0; i < n; i++)
            ran[runs[i].case_number] = true;
    }
    const struct gpu_caps *caps = gpu_context_caps(ctx);
    const bool f16 = caps->storage_16bit, f16_math = f16 && caps->shader_fp16;
    size_t count = 0;
    for (size_t c = 0; c < case_count; c++) {
        if (ran[c])
            continue;
        const bool dw = is_depthwise(all_cases[c].cc);
        const int kernel = dw ? DEPTHWISE + (int)(count % 3) : count % 2 ? GPUDIRECT : KSPLIT;
        const bool half = f16 && c % 2;
        const struct conv_run r = {c, !half ? F_F32 : f16_math && c % 4 == 3 ? F_F16_MATH : F_F16, 0};
        run_one(kernel, &r);
        count++;
    }
    fprintf(stderr, "conv cases no kernel's runs took: %zu of %zu, %u pipelines built\n", count, case_count,
            gpu_pipeline_count(ctx));
    free(runs);
    free(ran);
}

static void test_activations(void **s)
{
    (void)s;
    for (int act = 0; act < PVK_ACT_COUNT; act++) {
        struct conv_case pw = {1, 9, 3, 5, 6, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, (enum pvk_act)act, 0, 0, 0, 0, 0, 0, 0};
        struct conv_case dw = {1, 4, 5, 6, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 4, (enum pvk_act)act, 0, 0, 0, 0, 0, 0, 0};
        struct conv_case full = {1, 3, 5, 6, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, (enum pvk_act)act,
                                 0, 0, 0, 0, 0, 0, 0};
        setenv("PPOCR_VK_GEMM_KERNEL", act % 2 ? "tiled" : "cpu", 1);
        conv_case_run(&pw, NN_F32);
        conv_case_run(&dw, NN_F32);
        fp16_math = act % 4 < 2;
        conv_case_run(&full, NN_F16);
        fp16_math = false;
        unsetenv("PPOCR_VK_GEMM_KERNEL");
    }
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tiled_small), cmocka_unit_test(test_sliced_ksplit_cpu), cmocka_unit_test(test_direct),
        cmocka_unit_test(test_coopmat),     cmocka_unit_test(test_depthwise),         cmocka_unit_test(test_every_case),
        cmocka_unit_test(test_activations),
    };
    /* ctest's entries test_gpu_op_conv_1..3, of about equal length on lavapipe, where compiling
     * each run's kernels takes most of the time with Mesa's shader cache empty */
    static const unsigned char parts[] = {1, 1, 1, 2, 2, 3, 2};
    const char *filter = getenv("PPOCR_TEST_FILTER"); /* e.g. test_depthwise */
    if (filter && *filter)
        cmocka_set_test_filter(filter);
    list_cases();
    if (case_count == MAX_CASES) {
        fprintf(stderr, "test_gpu_op_conv: more cases than MAX_CASES\n");
        return 1;
    }
    return TEST_RUN_PARTS("gpu_op_conv", tests, parts, argc, argv, setup, teardown);
}
