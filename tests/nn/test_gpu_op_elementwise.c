/* GPU elementwise-family ops against the C reference ops: binary (broadcasting, constant b, and
 * the add fused with an SE's apply step and an upsampling), unary, affine, resize, pool2d and SE, in fp32 and fp16 storage, on odd shapes, with outputs
 * poisoned with NaN, placed at odd offsets and (for the concat-feeding ops) written into a channel
 * slice of a wider tensor whose other channels must stay untouched. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/validation.h"
#include "nn/cpu/ref_ops.h"
#include "nn/gpu/op_se.h"
#include "support/gpu_group.h"
#include "support/gpu_op_harness.h"
#include "support/test_env.h"

/* Checks a channel-view output: the slice [c0, c0 + c) of a [n][dc][inner] tensor holds `want`, the
 * rest is still NaN (poison). */
static void check_view(struct harness *h, const struct htensor *y, const float *want, enum nn_dtype dt, int64_t c0,
                       const char *what)
{
    const struct pvk_shape *s = &y->t.shape;
    size_t n = (size_t)pvk_shape_numel(s);
    float *got = malloc(n * sizeof *got);
    htensor_read(h, y, got);
    harness_check(got, want, n, dt, what);
    free(got);
    int64_t inner = 1;
    for (int i = 2; i < s->ndim; i++)
        inner *= s->d[i];
    size_t total = (size_t)(s->d[0] * y->t.dst_channels * inner);
    float *raw = malloc(total * sizeof *raw);
    htensor_read_raw(h, y, y->t.elem_offset - (uint32_t)(c0 * inner), total, raw);
    for (size_t i = 0; i < total; i++) {
        int64_t ch = (int64_t)(i / (size_t)inner) % y->t.dst_channels;
        bool inside = ch >= c0 && ch < c0 + s->d[1];
        if (!inside && !isnan(raw[i]))
            fail_msg("%s: element %zu outside the channel slice was written", what, i);
    }
    free(raw);
}

/* Checks an op's output: a channel view (view != 0) as check_view does, else its n dense values. */
static void check_output(struct harness *h, const struct htensor *y, const float *want, size_t n, enum nn_dtype dt,
                         int64_t view, int64_t c0, const char *what)
{
    if (view) {
        check_view(h, y, want, dt, c0, what);
        return;
    }
    float *got = malloc(n * sizeof *got);
    htensor_read(h, y, got);
    harness_check(got, want, n, dt, what);
    free(got);
}

/* ---- binary ---------------------------------------------------------------------------------- */

/* Element offsets of the operands in their buffers: odd ones take the general kernel, multiples of
 * 4 let contiguous cases take the four-at-a-time one. */
static uint32_t lead_a = 5, lead_b = 3, lead_y = 7;

static void binary_case(struct harness *h, enum pvk_binary_kind kind, struct pvk_shape as, struct pvk_shape bs,
                        bool const_b, enum pvk_act act, int64_t view_channels)
{
    enum nn_dtype dt = h->cfg.act_dtype;
    struct pvk_shape ys;
    assert_int_equal(pvk_broadcast_shape(&as, &bs, &ys), 0);
    size_t na = (size_t)pvk_shape_numel(&as), nb = (size_t)pvk_shape_numel(&bs), ny = (size_t)pvk_shape_numel(&ys);
    float *a = harness_rand_vec(na, -2, 2, dt), *b = harness_rand_vec(nb, 0.5f, 2, dt),
          *want = malloc(ny * sizeof *want);
    if (kind != PVK_BIN_DIV)
        for (size_t i = 0; i < nb; i++)
            b[i] = (i % 2) ? b[i] : -b[i];
    ref_binary(kind, a, &as, b, &bs, &ys, want);
    ref_act(act, 0.2f, 0.5f, want, ny);
    struct pvk_op op = harness_op(PVK_OP_BINARY, act, 0.2f, 0.5f, "binary");
    op.attr.binary.kind = kind;
    op.n_inputs = const_b ? 1 : 2;
    struct nn_gpu_weights w = {0};
    struct htensor in[2], y;
    htensor_alloc(h, &in[0], &as, dt, lead_a, 0);
    htensor_write(h, &in[0], a);
    if (const_b) {
        w.data[0] = b;
        w.shape[0] = bs;
    } else {
        htensor_alloc(h, &in[1], &bs, dt, lead_b, 0);
        htensor_write(h, &in[1], b);
    }
    /* a channel view writes channels [1, 1 + C) of a tensor with view_channels channels */
    int64_t c0 = view_channels ? 1 : 0, inner = ys.ndim > 2 ? pvk_shape_numel(&ys) / ys.d[0] / ys.d[1] : 1;
    htensor_alloc(h, &y, &ys, dt, lead_y + (uint32_t)(c0 * inner), view_channels);
    harness_run_op(h, &nn_gpu_binary_impl, &op, &w, in, const_b ? 1 : 2, &y, 1, NULL);
    char what[160], s1[64], s2[64];
    snprintf(what, sizeof what, "binary kind %d %s (op) %s%s act %d view %lld", kind, pvk_shape_str(&as, s1, 64),
             pvk_shape_str(&bs, s2, 64), const_b ? " const" : "", act, (long long)view_channels);
    check_output(h, &y, want, ny, dt, view_channels, c0, what);
    htensor_free(&in[0]);
    if (!const_b)
        htensor_free(&in[1]);
    htensor_free(&y);
    free(a);
    free(b);
    free(want);
}

/* fp16_math: dt is NN_F16, computed by the *_f16a shaders */
static void run_binary(enum nn_dtype dt, bool fp16_math)
{
    struct harness h;
    if (!(fp16_math ? harness_init_fp16_math(&h) : harness_init(&h, dt)))
        return;
    for (int k = PVK_BIN_ADD; k <= PVK_BIN_DIV; k++) {
        binary_case(&h, k, SHAPE(2, 5, 7, 3), SHAPE(2, 5, 7, 3), false, PVK_ACT_NONE, 0);
        binary_case(&h, k, SHAPE(1, 16, 9, 11), SHAPE(1, 16, 1, 1), false, PVK_ACT_RELU, 0);
        binary_case(&h, k, SHAPE(1, 1), SHAPE(1, 1), false, PVK_ACT_NONE, 0);
        binary_case(&h, k, SHAPE(3, 1, 5), SHAPE(4, 1), false, PVK_ACT_NONE, 0);
        binary_case(&h, k, SHAPE(1, 40, 120), SHAPE(1), true, PVK_ACT_NONE, 0);
    }
    /* the nets: HardSwish spelled out (x + 3, clip, * x, / 6), SE-like per-channel products */
    binary_case(&h, PVK_BIN_ADD, SHAPE(1, 24, 13, 17), SHAPE(1), true, PVK_ACT_RELU6, 0);
    binary_case(&h, PVK_BIN_MUL, SHAPE(1, 1, 13, 17), SHAPE(2, 6, 13, 17), false, PVK_ACT_HARDSIGMOID, 0);
    binary_case(&h, PVK_BIN_DIV, SHAPE(1, 40, 120), SHAPE(120), true, PVK_ACT_GELU_ERF, 0);
    binary_case(&h, PVK_BIN_SUB, SHAPE(2, 3, 1, 7), SHAPE(3, 5, 1), false, PVK_ACT_SWISH, 0);
    binary_case(&h, PVK_BIN_ADD, SHAPE(6, 1, 2, 3, 1, 5), SHAPE(4, 1, 3, 2, 5), false, PVK_ACT_NONE, 0);
    /* into channels [1, 1 + C) of a wider tensor */
    binary_case(&h, PVK_BIN_ADD, SHAPE(2, 3, 5, 7), SHAPE(2, 3, 5, 7), false, PVK_ACT_NONE, 6);
    /* 4-aligned contiguous operands: the four-at-a-time kernel (same shape, scalar b, b offset odd) */
    lead_a = 4, lead_b = 1, lead_y = 8;
    for (int k = PVK_BIN_ADD; k <= PVK_BIN_DIV; k++) {
        binary_case(&h, k, SHAPE(2, 6, 9, 10), SHAPE(2, 6, 9, 10), false, PVK_ACT_HARDSWISH, 0);
        binary_case(&h, k, SHAPE(1, 40, 120), SHAPE(1), true, PVK_ACT_NONE, 0);
        binary_case(&h, k, SHAPE(4), SHAPE(1, 1), false, PVK_ACT_SIGMOID, 0);
    }
    binary_case(&h, PVK_BIN_MUL, SHAPE(2, 4, 3, 4), SHAPE(4, 1, 1), false, PVK_ACT_NONE, 0); /* not contiguous */
    lead_a = 5, lead_b = 3, lead_y = 7;
    harness_done(&h);
    assert_int_equal(gpu_validation_message_count(), 0);
}

/* The ADD the net fuses with the ops before it (shaders/add_fused.glsl): one operand an SE's input
 * scaled by gate + residual, the other a nearest upsampling by integer factors of a smaller map,
 * each optional, on either side; the reference applies gate, resize and add one after another. */
static void fused_add_case(struct harness *h, int n, int c, int oh, int ow, int gated, int upsampled, int fh, int fw,
                           float residual, enum pvk_act act, int64_t view_channels)
{
    enum nn_dtype dt = h->cfg.act_dtype;
    const int up_h = upsampled ? oh / fh : oh, up_w = upsampled ? ow / fw : ow;
    struct pvk_shape ys = SHAPE(n, c, oh, ow), small = SHAPE(n, c, up_h, up_w), gs = SHAPE(n, c);
    const size_t ny = (size_t)(n * c * oh * ow), ns = (size_t)(n * c * up_h * up_w);
    float *operand[2], *want = malloc(ny * sizeof *want);
    float *gate = harness_rand_vec((size_t)(n * c), 0, 1, NN_F32);
    for (int k = 0; k < 2; k++)
        operand[k] = harness_rand_vec(upsampled == k + 1 ? ns : ny, -2, 2, dt);
    /* the reference: each operand as the unfused ops would have computed it */
    float *full[2];
    for (int k = 0; k < 2; k++) {
        full[k] = malloc(ny * sizeof(float));
        if (upsampled == k + 1)
            ref_resize(operand[k], n, c, up_h, up_w, PVK_RESIZE_NEAREST, (float)fh, (float)fw, oh, ow, full[k]);
        else
            memcpy(full[k], operand[k], ny * sizeof(float));
        if (gated == k + 1)
            for (size_t i = 0; i < ny; i++)
                full[k][i] *= gate[i / (size_t)(oh * ow)] + residual;
    }
    for (size_t i = 0; i < ny; i++)
        want[i] = full[0][i] + full[1][i];
    ref_act(act, 0.2f, 0.5f, want, ny);
    struct pvk_op op = harness_op(PVK_OP_BINARY, act, 0.2f, 0.5f, "fused add");
    op.attr.binary.kind = PVK_BIN_ADD;
    op.n_inputs = 2;
    struct nn_gpu_weights w = {.gated_inputs = gated ? (uint8_t)(1u << (gated - 1)) : 0,
                               .upsampled_inputs = upsampled ? (uint8_t)(1u << (upsampled - 1)) : 0,
                               .gate_residual = residual,
                               .upsample_h = (uint32_t)fh,
                               .upsample_w = (uint32_t)fw};
    struct htensor in[3], y;
    for (int k = 0; k < 2; k++) {
        htensor_alloc(h, &in[k], upsampled == k + 1 ? &small : &ys, dt, k ? lead_b : lead_a, 0);
        htensor_write(h, &in[k], operand[k]);
    }
    if (gated) {
        htensor_alloc(h, &in[2], &gs, NN_F32, 0, 0);
        htensor_write(h, &in[2], gate);
    }
    const int64_t c0 = view_channels ? 1 : 0;
    htensor_alloc(h, &y, &ys, dt, lead_y + (uint32_t)(c0 * oh * ow), view_channels);
    harness_run_op(h, &nn_gpu_binary_impl, &op, &w, in, gated ? 3 : 2, &y, 1, NULL);
    char what[160];
    snprintf(what, sizeof what, "fused add %dx%dx%dx%d gated %d upsampled %d by %dx%d residual %g act %d view %lld", n,
             c, oh, ow, gated, upsampled, fh, fw, (double)residual, act, (long long)view_channels);
    check_output(h, &y, want, ny, dt, view_channels, c0, what);
    for (int k = 0; k < (gated ? 3 : 2); k++)
        htensor_free(&in[k]);
    htensor_free(&y);
    for (int k = 0; k < 2; k++)
        free(operand[k]), free(full[k]);
    free(gate), free(want);
}

static void run_fused_add(enum nn_dtype dt)
{
    struct harness h;
    if (!harness_init(&h, dt))
        return;
    /* det's FPN: SE(x) with its residual + a map upsampled 2x */
    fused_add_case(&h, 1, 16, 12, 20, 1, 2, 2, 2, 1.0f, PVK_ACT_NONE, 0);
    /* odd widths (a last group of fewer than 4), factors 3 x 2, the sides swapped, no residual */
    fused_add_case(&h, 2, 5, 9, 14, 2, 1, 3, 2, 0.0f, PVK_ACT_RELU, 0);
    /* only one of the two fusions; then into channels [1, 1 + C) of a wider tensor */
    fused_add_case(&h, 1, 3, 7, 5, 0, 2, 7, 5, 0.0f, PVK_ACT_HARDSWISH, 0);
    fused_add_case(&h, 3, 4, 5, 11, 1, 0, 1, 1, 1.0f, PVK_ACT_NONE, 0);
    fused_add_case(&h, 2, 3, 6, 10, 2, 1, 2, 2, 1.0f, PVK_ACT_NONE, 7);
    /* rows of a multiple of 4 and operands on multiples of 4: four outputs at a time */
    lead_a = 4, lead_b = 8, lead_y = 4;
    fused_add_case(&h, 1, 16, 12, 20, 1, 2, 2, 2, 1.0f, PVK_ACT_NONE, 0);
    fused_add_case(&h, 2, 3, 6, 12, 2, 1, 3, 4, 0.0f, PVK_ACT_HARDSWISH, 5);
    fused_add_case(&h, 1, 5, 3, 8, 1, 0, 1, 1, 1.0f, PVK_ACT_RELU, 0);
    lead_a = 5, lead_b = 3, lead_y = 7;
    harness_done(&h);
    assert_int_equal(gpu_validation_message_count(), 0);
}

static void test_fused_add_f32(void **s)
{
    (void)s;
    run_fused_add(NN_F32);
}
static void test_fused_add_f16(void **s)
{
    (void)s;
    run_fused_add(NN_F16);
}

static void test_binary_f32(void **s)
{
    (void)s;
    run_binary(NN_F32, false);
}
static void test_binary_f16(void **s)
{
    (void)s;
    run_binary(NN_F16, false);
}
static void test_binary_f16_math(void **s)
{
    (void)s;
    run_binary(NN_F16, true);
}

/* ---- unary ----------------------------------------------------------------------------------- */

static void run_unary(enum nn_dtype dt, bool fp16_math)
{
    struct harness h;
    if (!(fp16_math ? harness_init_fp16_math(&h) : harness_init(&h, dt)))
        return;
    /* every activation on a block of values and on a single one (kept within [-2, 2] there: a lone
     * value deep in a tail, e.g. GELU(-5) ~ -1e-6, has no meaningful relative error) */
    for (int k = 0; k < 2 * PVK_ACT_COUNT; k++) {
        int act = k / 2;
        bool single = k % 2;
        struct pvk_shape s = single ? SHAPE(1, 1) : SHAPE(1, 7, 9, 12);
        size_t n = (size_t)pvk_shape_numel(&s);
        float *x = harness_rand_vec(n, single ? -2.0f : -5.0f, single ? 2.0f : 5.0f, dt),
              *want = malloc(n * sizeof *want), *got = malloc(n * sizeof *got);
        float alpha = act == PVK_ACT_CLIP ? -1.0f : 0.2f, beta = act == PVK_ACT_CLIP ? 2.0f : 0.5f;
        memcpy(want, x, n * sizeof *x);
        ref_act(act, alpha, beta, want, n);
        struct pvk_op op = harness_op(PVK_OP_UNARY, act, alpha, beta, "unary");
        op.n_inputs = 1;
        struct htensor in, y;
        /* odd offsets: general kernel; multiples of 4: the four-at-a-time one where n allows */
        uint32_t lead = act % 2 ? 4 : 1;
        htensor_alloc(&h, &in, &s, dt, lead, 0);
        htensor_write(&h, &in, x);
        htensor_alloc(&h, &y, &s, dt, 2 * lead, 0);
        harness_run_op(&h, &nn_gpu_unary_impl, &op, NULL, &in, 1, &y, 1, NULL);
        htensor_read(&h, &y, got);
        char what[64];
        snprintf(what, sizeof what, "unary %s", pvk_act_name(act));
        harness_check(got, want, n, dt, what);
        htensor_free(&in);
        htensor_free(&y);
        free(x);
        free(want);
        free(got);
    }
    harness_done(&h);
    assert_int_equal(gpu_validation_message_count(), 0);
}

static void test_unary_f32(void **s)
{
    (void)s;
    run_unary(NN_F32, false);
}
static void test_unary_f16(void **s)
{
    (void)s;
    run_unary(NN_F16, false);
}
static void test_unary_f16_math(void **s)
{
    (void)s;
    run_unary(NN_F16, true);
}

/* ---- affine ---------------------------------------------------------------------------------- */

static void run_affine(enum nn_dtype dt, bool fp16_math)
{
    struct harness h;
    if (!(fp16_math ? harness_init_fp16_math(&h) : harness_init(&h, dt)))
        return;
    /* the last two run four elements per invocation (inner and offsets multiples of 4) */
    const struct pvk_shape shapes[] = {SHAPE(2, 5, 7, 9), SHAPE(1, 1, 1, 1), SHAPE(3, 17), SHAPE(2, 6, 5, 4),
                                       SHAPE(1, 3, 8)};
    for (int k = 0; k < 5; k++) {
        const struct pvk_shape *s = &shapes[k];
        size_t n = (size_t)pvk_shape_numel(s);
        int64_t c = s->d[1], inner = (int64_t)n / s->d[0] / c;
        float *x = harness_rand_vec(n, -3, 3, dt), *sc = harness_rand_vec((size_t)c, -2, 2, NN_F32),
              *sh = harness_rand_vec((size_t)c, -1, 1, NN_F32), *want = malloc(n * sizeof *want);
        ref_affine(x, s->d[0], c, inner, sc, sh, want);
        enum pvk_act act = k == 0 || k == 3 ? PVK_ACT_HARDSWISH : PVK_ACT_NONE;
        ref_act(act, 0, 0, want, n);
        struct pvk_op op = harness_op(PVK_OP_AFFINE, act, 0, 0, "affine");
        op.n_inputs = 1;
        struct nn_gpu_weights w = {.data = {sc, sh}, .shape = {SHAPE(c), SHAPE(c)}};
        int64_t view = s->ndim == 4 && (k == 0 || k == 3) ? c + 3 : 0;
        struct htensor in, y;
        htensor_alloc(&h, &in, s, dt, k >= 3 ? 4 : 9, 0);
        htensor_write(&h, &in, x);
        htensor_alloc(&h, &y, s, dt, 0, view);
        harness_run_op(&h, &nn_gpu_affine_impl, &op, &w, &in, 1, &y, 1, NULL);
        check_output(&h, &y, want, n, dt, view, 0, view ? "affine into a channel slice" : "affine");
        htensor_free(&in);
        htensor_free(&y);
        free(x), free(sc), free(sh), free(want);
    }
    harness_done(&h);
    assert_int_equal(gpu_validation_message_count(), 0);
}

static void test_affine_f32(void **s)
{
    (void)s;
    run_affine(NN_F32, false);
}
static void test_affine_f16(void **s)
{
    (void)s;
    run_affine(NN_F16, false);
}
static void test_affine_f16_math(void **s)
{
    (void)s;
    run_affine(NN_F16, true);
}

/* ---- resize ---------------------------------------------------------------------------------- */

/* gated: 0 plain; 1 or 2 x an SE's input, each plane scaled by gate + (gated - 1) in the kernel */
static void resize_case(struct harness *h, enum pvk_resize_mode mode, int n, int c, int ih, int iw, float sh, float sw,
                        int64_t view, int gated)
{
    enum nn_dtype dt = h->cfg.act_dtype;
    int oh, ow;
    assert_int_equal(pvk_resize_out_hw(ih, iw, sh, sw, &oh, &ow), 0);
    struct pvk_shape is = SHAPE(n, c, ih, iw), os = SHAPE(n, c, oh, ow);
    size_t ni = (size_t)pvk_shape_numel(&is), no = (size_t)pvk_shape_numel(&os);
    float *x = harness_rand_vec(ni, -3, 3, dt), *want = malloc(no * sizeof *want);
    float *gate = harness_rand_vec((size_t)(n * c), 0, 1, NN_F32), *scaled = malloc(ni * sizeof *scaled);
    for (size_t i = 0; i < ni; i++)
        scaled[i] = gated ? x[i] * (gate[i / (size_t)(ih * iw)] + (float)(gated - 1)) : x[i];
    ref_resize(scaled, n, c, ih, iw, mode, sh, sw, oh, ow, want);
    ref_act(PVK_ACT_RELU6, 0, 0, want, no);
    struct pvk_op op = harness_op(PVK_OP_RESIZE, PVK_ACT_RELU6, 0, 0, "resize");
    op.n_inputs = 1;
    op.attr.resize.mode = mode;
    op.attr.resize.scale_h = sh;
    op.attr.resize.scale_w = sw;
    struct nn_gpu_weights w = {.input_gate = gated != 0, .gate_residual = (float)(gated ? gated - 1 : 0)};
    struct pvk_shape gs = SHAPE(n, c);
    struct htensor in[2], y;
    htensor_alloc(h, &in[0], &is, dt, 3, 0);
    htensor_write(h, &in[0], x);
    if (gated) {
        htensor_alloc(h, &in[1], &gs, NN_F32, 0, 0);
        htensor_write(h, &in[1], gate);
    }
    int64_t c0 = view ? 2 : 0;
    htensor_alloc(h, &y, &os, dt, 1 + (uint32_t)(c0 * oh * ow), view);
    harness_run_op(h, &nn_gpu_resize_impl, &op, &w, in, gated ? 2 : 1, &y, 1, NULL);
    char what[128];
    snprintf(what, sizeof what, "resize mode %d %dx%d by %gx%g view %lld gated %d", mode, ih, iw, sh, sw,
             (long long)view, gated);
    check_output(h, &y, want, no, dt, view, c0, what);
    htensor_free(&in[0]);
    if (gated)
        htensor_free(&in[1]);
    htensor_free(&y);
    free(x);
    free(want);
    free(gate);
    free(scaled);
}

static void run_resize(enum nn_dtype dt)
{
    struct harness h;
    if (!harness_init(&h, dt))
        return;
    /* the det FPN: nearest x2, x4, x8 (one into a concat slice) */
    resize_case(&h, PVK_RESIZE_NEAREST, 1, 5, 7, 9, 2, 2, 0, 0);
    resize_case(&h, PVK_RESIZE_NEAREST, 1, 3, 5, 3, 4, 4, 8, 0);
    resize_case(&h, PVK_RESIZE_NEAREST, 2, 2, 3, 5, 8, 8, 0, 0);
    resize_case(&h, PVK_RESIZE_NEAREST, 1, 1, 1, 1, 2, 2, 0, 0);
    resize_case(&h, PVK_RESIZE_NEAREST, 1, 2, 9, 7, 1.5f, 0.5f, 0, 0);
    resize_case(&h, PVK_RESIZE_NEAREST, 1, 2, 4, 5, 3, 2, 0, 0); /* integer, not a power of two */
    /* an SE's apply step fused in (det's neck: with its residual, into a concat slice) */
    resize_case(&h, PVK_RESIZE_NEAREST, 1, 6, 5, 7, 4, 4, 9, 2);
    resize_case(&h, PVK_RESIZE_BILINEAR_HALF_PIXEL, 2, 3, 5, 6, 1.7f, 0.6f, 0, 1);
    for (int m = PVK_RESIZE_BILINEAR_HALF_PIXEL; m <= PVK_RESIZE_BILINEAR_ALIGN_CORNERS; m++) {
        resize_case(&h, m, 1, 3, 7, 9, 2, 2, 0, 0);
        resize_case(&h, m, 2, 2, 5, 6, 1.7f, 0.6f, 0, 0);
        resize_case(&h, m, 1, 1, 1, 5, 3, 1, 4, 0);
    }
    harness_done(&h);
    assert_int_equal(gpu_validation_message_count(), 0);
}

static void test_resize_f32(void **s)
{
    (void)s;
    run_resize(NN_F32);
}
static void test_resize_f16(void **s)
{
    (void)s;
    run_resize(NN_F16);
}

/* ---- pool2d ---------------------------------------------------------------------------------- */

static void pool_case(struct harness *h, struct pvk_pool_params prm, int n, int c, int ih, int iw, int64_t view)
{
    enum nn_dtype dt = h->cfg.act_dtype;
    int oh, ow;
    assert_int_equal(pvk_pool2d_out_hw(ih, iw, &prm, &oh, &ow), 0);
    struct pvk_shape is = SHAPE(n, c, ih, iw), os = SHAPE(n, c, oh, ow);
    size_t ni = (size_t)pvk_shape_numel(&is), no = (size_t)pvk_shape_numel(&os);
    float *x = harness_rand_vec(ni, -3, 3, dt), *want = malloc(no * sizeof *want);
    ref_pool2d(x, n, c, ih, iw, &prm, want);
    struct pvk_op op = harness_op(PVK_OP_POOL2D, PVK_ACT_NONE, 0, 0, "pool");
    op.n_inputs = 1;
    op.attr.pool.kind = prm.kind;
    op.attr.pool.kh = prm.kh, op.attr.pool.kw = prm.kw, op.attr.pool.sh = prm.sh, op.attr.pool.sw = prm.sw;
    op.attr.pool.pad_t = prm.pad_t, op.attr.pool.pad_l = prm.pad_l;
    op.attr.pool.pad_b = prm.pad_b, op.attr.pool.pad_r = prm.pad_r;
    op.attr.pool.count_include_pad = prm.count_include_pad;
    op.attr.pool.ceil_mode = prm.ceil_mode;
    struct htensor in, y;
    htensor_alloc(h, &in, &is, dt, 2, 0);
    htensor_write(h, &in, x);
    htensor_alloc(h, &y, &os, dt, 5, view);
    harness_run_op(h, &nn_gpu_pool2d_impl, &op, NULL, &in, 1, &y, 1, NULL);
    char what[128];
    snprintf(what, sizeof what, "pool kind %d k %dx%d s %dx%d on %dx%dx%dx%d", prm.kind, prm.kh, prm.kw, prm.sh, prm.sw,
             n, c, ih, iw);
    check_output(h, &y, want, no, dt, view, 0, what);
    htensor_free(&in);
    htensor_free(&y);
    free(x);
    free(want);
}

static void run_pool(enum nn_dtype dt)
{
    struct harness h;
    if (!harness_init(&h, dt))
        return;
    /* cls: MaxPool 2x2 s2; rec: AveragePool (3,2) s(3,2) without padding counted */
    pool_case(&h, (struct pvk_pool_params){PVK_POOL_MAX, 2, 2, 2, 2, 0, 0, 0, 0, 0, 0}, 2, 5, 6, 24, 0);
    pool_case(&h, (struct pvk_pool_params){PVK_POOL_MAX, 2, 2, 2, 2, 0, 0, 0, 0, 0, 0}, 1, 3, 7, 9, 5);
    pool_case(&h, (struct pvk_pool_params){PVK_POOL_AVG, 3, 2, 3, 2, 0, 0, 0, 0, 0, 0}, 1, 7, 3, 40, 0);
    pool_case(&h, (struct pvk_pool_params){PVK_POOL_AVG, 3, 3, 2, 2, 1, 1, 1, 1, 1, 0}, 1, 2, 9, 8, 0);
    pool_case(&h, (struct pvk_pool_params){PVK_POOL_AVG, 3, 3, 2, 2, 1, 1, 1, 1, 0, 1}, 1, 2, 8, 9, 0);
    pool_case(&h, (struct pvk_pool_params){PVK_POOL_MAX, 3, 3, 2, 2, 1, 1, 1, 1, 0, 1}, 2, 3, 1, 1, 0);
    pool_case(&h, (struct pvk_pool_params){PVK_POOL_GLOBAL_AVG, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0}, 2, 3, 13, 17, 0);
    pool_case(&h, (struct pvk_pool_params){PVK_POOL_GLOBAL_AVG, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0}, 1, 5, 1, 1, 9);
    pool_case(&h, (struct pvk_pool_params){PVK_POOL_GLOBAL_AVG, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0}, 1, 2, 120, 120, 0);
    harness_done(&h);
    assert_int_equal(gpu_validation_message_count(), 0);
}

static void test_pool_f32(void **s)
{
    (void)s;
    run_pool(NN_F32);
}
static void test_pool_f16(void **s)
{
    (void)s;
    run_pool(NN_F16);
}

/* ---- SE -------------------------------------------------------------------------------------- */

static void se_case(struct harness *h, int n, int c, int cr, int ih, int iw, int residual, bool biases, int64_t view)
{
    enum nn_dtype dt = h->cfg.act_dtype;
    struct pvk_shape s = SHAPE(n, c, ih, iw);
    size_t nx = (size_t)pvk_shape_numel(&s);
    float *x = harness_rand_vec(nx, -2, 2, dt), *want = malloc(nx * sizeof *want);
    float *w1 = harness_rand_vec((size_t)(cr * c), -1, 1, NN_F32),
          *b1 = harness_rand_vec((size_t)cr, -0.5f, 0.5f, NN_F32);
    float *w2 = harness_rand_vec((size_t)(c * cr), -1, 1, NN_F32),
          *b2 = harness_rand_vec((size_t)c, -0.5f, 0.5f, NN_F32);
    float ga = 0.2f, gb = 0.5f;
    assert_int_equal(ref_se(x, n, c, ih, iw, cr, w1, biases ? b1 : NULL, w2, biases ? b2 : NULL, PVK_ACT_HARDSIGMOID,
                            ga, gb, residual, want),
                     0);
    ref_act(PVK_ACT_RELU, 0, 0, want, nx);
    struct pvk_op op = harness_op(PVK_OP_SE, PVK_ACT_RELU, 0, 0, "se");
    op.n_inputs = 1;
    op.attr.se.residual = residual;
    op.attr.se.gate_act = PVK_ACT_HARDSIGMOID;
    op.attr.se.gate_alpha = ga;
    op.attr.se.gate_beta = gb;
    struct nn_gpu_weights w = {.data = {w1, biases ? b1 : NULL, w2, biases ? b2 : NULL},
                               .shape = {SHAPE(cr, c), SHAPE(cr), SHAPE(c, cr), SHAPE(c)}};
    struct htensor in, out[3]; /* y, then the sums and the gate the net would plan */
    /* planes of a multiple of 4 take the four-at-a-time apply kernel when aligned */
    htensor_alloc(h, &in, &s, dt, (ih * iw) % 4 ? 1 : 0, 0);
    htensor_write(h, &in, x);
    htensor_alloc(h, &out[0], &s, dt, 4, view);
    struct pvk_shape nc = SHAPE(n, c), sums = {3, {n, c, nn_gpu_se_sum_parts(&h->cfg, (int64_t)ih * iw)}};
    htensor_alloc(h, &out[1], &sums, NN_F32, 0, 0);
    htensor_alloc(h, &out[2], &nc, NN_F32, 0, 0);
    harness_run_op(h, &nn_gpu_se_impl, &op, &w, &in, 1, out, 3, NULL);
    struct htensor y = out[0];
    char what[128];
    snprintf(what, sizeof what, "SE %dx%dx%dx%d cr %d residual %d", n, c, ih, iw, cr, residual);
    check_output(h, &y, want, nx, dt, view, 0, what);
    htensor_free(&in);
    for (int k = 0; k < 3; k++)
        htensor_free(&out[k]);
    free(x), free(want), free(w1), free(b1), free(w2), free(b2);
}

static void run_se(enum nn_dtype dt, bool fp16_math)
{
    struct harness h;
    if (!(fp16_math ? harness_init_fp16_math(&h) : harness_init(&h, dt)))
        return;
    se_case(&h, 1, 16, 4, 9, 11, 0, true, 0);
    se_case(&h, 3, 24, 6, 5, 40, 1, true, 0);
    se_case(&h, 2, 7, 1, 1, 1, 1, false, 10);
    se_case(&h, 1, 96, 24, 60, 60, 1, true, 0);
    /* planes summed in slices on GPUs (and with PPOCR_VK_REDUCE=workgroup): four, the last short */
    se_case(&h, 2, 5, 2, 97, 131, 1, true, 0);
    /* rec's widest: more channels than a workgroup, more hidden rows than one pass */
    se_case(&h, 2, 480, 120, 6, 80, 0, true, 0);
    se_case(&h, 3, 203, 51, 2, 5, 0, true, 0);
    /* rows of the hidden layer in 4-vectors, of the input channels not */
    se_case(&h, 1, 50, 12, 3, 7, 1, true, 0);
    harness_done(&h);
    assert_int_equal(gpu_validation_message_count(), 0);
}

static void test_se_f32(void **s)
{
    (void)s;
    run_se(NN_F32, false);
}
static void test_se_f16(void **s)
{
    (void)s;
    run_se(NN_F16, false);
}
static void test_se_f16_math(void **s)
{
    (void)s;
    run_se(NN_F16, true);
}

/* The reductions again through their shared-memory twins (devices without subgroup arithmetic). */
static void test_no_subgroups(void **s)
{
    (void)s;
    setenv("PPOCR_VK_NO_SUBGROUPS", "1", 1);
    setenv("PPOCR_VK_REDUCE", "workgroup", 1);
    run_pool(NN_F32);
    run_se(NN_F32, false);
    unsetenv("PPOCR_VK_REDUCE");
    unsetenv("PPOCR_VK_NO_SUBGROUPS");
}

/* Global pooling through each kind of reduction whatever the device: one invocation per plane (as
 * on CPU devices) and one workgroup per plane with subgroup arithmetic (as on GPUs). */
static void test_pool_reductions(void **s)
{
    (void)s;
    static const char *const kinds[] = {"serial", "workgroup"};
    for (int k = 0; k < 2; k++) {
        setenv("PPOCR_VK_REDUCE", kinds[k], 1);
        run_pool(NN_F32);
        run_pool(NN_F16);
    }
    unsetenv("PPOCR_VK_REDUCE");
}

int main(void)
{
    test_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_binary_f32),      cmocka_unit_test(test_binary_f16),
        cmocka_unit_test(test_binary_f16_math), cmocka_unit_test(test_fused_add_f32),
        cmocka_unit_test(test_fused_add_f16),   cmocka_unit_test(test_unary_f32),
        cmocka_unit_test(test_unary_f16),       cmocka_unit_test(test_unary_f16_math),
        cmocka_unit_test(test_affine_f32),      cmocka_unit_test(test_affine_f16),
        cmocka_unit_test(test_affine_f16_math), cmocka_unit_test(test_resize_f32),
        cmocka_unit_test(test_resize_f16),      cmocka_unit_test(test_pool_f32),
        cmocka_unit_test(test_pool_f16),        cmocka_unit_test(test_se_f32),
        cmocka_unit_test(test_se_f16),          cmocka_unit_test(test_se_f16_math),
        cmocka_unit_test(test_no_subgroups),    cmocka_unit_test(test_pool_reductions),
    };
    return cmocka_run_group_tests(tests, test_gpu_group_setup, test_gpu_group_teardown);
}
