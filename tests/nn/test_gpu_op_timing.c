/* GPU times (gpu_cmd_timings, second replay) of the non-convolution kernels at the sizes the nets
 * run them, printed as "timing: <kernel> <shape> <us> us" lines for the performance log, each
 * result checked against the C reference so that a fast but wrong kernel fails. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpu/cmd.h"
#include "gpu/context.h"
#include "gpu/error.h"
#include "gpu/transfer.h"
#include "gpu/validation.h"
#include "nn/cpu/ref_ops.h"
#include "nn/gpu/op_se.h"
#include "ocr/gpu/image_ops.h"
#include "ocr/preprocess.h"
#include "support/gpu_group.h"
#include "support/gpu_op_harness.h"
#include "support/test_env.h"

static struct pvk_op make_op(enum pvk_op_type type, const char *name)
{
    struct pvk_op op;
    memset(&op, 0, sizeof op);
    op.type = type;
    op.n_inputs = 1;
    op.n_outputs = 1;
    snprintf(op.name, sizeof op.name, "%s", name);
    return op;
}

/* Runs op on random x of shape xs into ys, checks against want(x) and prints the time. */
struct job {
    const char *label;
    const struct nn_gpu_op_impl *impl;
    struct pvk_op op;
    struct nn_gpu_weights w;
    struct pvk_shape xs, ys;
};

static float *run_job(struct harness *h, struct job *j, const float *x, double *us)
{
    size_t ny = (size_t)pvk_shape_numel(&j->ys);
    struct htensor in, out[3];
    htensor_alloc(h, &in, &j->xs, h->cfg.act_dtype, 0, 0);
    htensor_write(h, &in, x);
    htensor_alloc(h, &out[0], &j->ys, h->cfg.act_dtype, 0, 0);
    /* SE also writes its channel sums, fp32 [N][C][parts], and its gate, fp32 [N][C] */
    int n_out = j->op.type == PVK_OP_SE ? 3 : 1;
    struct pvk_shape nc = SHAPE(j->xs.d[0], j->xs.d[1]);
    struct pvk_shape sums = {3, {j->xs.d[0], j->xs.d[1], nn_gpu_se_sum_parts(&h->cfg, j->xs.d[2] * j->xs.d[3])}};
    if (n_out > 1) {
        htensor_alloc(h, &out[1], &sums, NN_F32, 0, 0);
        htensor_alloc(h, &out[2], &nc, NN_F32, 0, 0);
    }
    harness_run_op(h, j->impl, &j->op, &j->w, &in, 1, out, n_out, us);
    float *got = malloc(ny * sizeof *got);
    htensor_read(h, &out[0], got);
    htensor_free(&in);
    for (int k = 0; k < n_out; k++)
        htensor_free(&out[k]);
    return got;
}

static void report(const char *label, const struct pvk_shape *s, double us, double err)
{
    char sb[64];
    printf("timing: %-22s %-20s %9.1f us  (rel-L2 %.2g)\n", label, pvk_shape_str(s, sb, sizeof sb), us, err);
    if (!(err <= 1e-4))
        fail_msg("%s: rel-L2 %g", label, err);
}

static void test_ops(void **state)
{
    (void)state;
    struct harness h;
    harness_init(&h, NN_F32);
    double us;
    /* SE on 1x96x120x120, reduced to 24 */
    {
        int c = 96, cr = 24, hw = 120;
        struct job j = {.label = "se",
                        .impl = &nn_gpu_se_impl,
                        .op = make_op(PVK_OP_SE, "se"),
                        .xs = SHAPE(1, c, hw, hw),
                        .ys = SHAPE(1, c, hw, hw)};
        j.op.attr.se.residual = 1;
        j.op.attr.se.gate_act = PVK_ACT_HARDSIGMOID;
        j.op.attr.se.gate_alpha = 0.2f;
        j.op.attr.se.gate_beta = 0.5f;
        size_t n = (size_t)c * hw * hw;
        float *x = malloc(n * 4), *want = malloc(n * 4), *w1 = malloc((size_t)c * cr * 4),
              *w2 = malloc((size_t)c * cr * 4), *b1 = malloc((size_t)cr * 4), *b2 = malloc((size_t)c * 4);
        test_fill_uniform(x, n, -2, 2);
        test_fill_uniform(w1, (size_t)c * cr, -1, 1);
        test_fill_uniform(w2, (size_t)c * cr, -1, 1);
        test_fill_uniform(b1, (size_t)cr, -1, 1);
        test_fill_uniform(b2, (size_t)c, -1, 1);
        j.w = (struct nn_gpu_weights){.data = {w1, b1, w2, b2},
                                      .shape = {SHAPE(cr, c), SHAPE(cr), SHAPE(c, cr), SHAPE(c)}};
        ref_se(x, 1, c, hw, hw, cr, w1, b1, w2, b2, PVK_ACT_HARDSIGMOID, 0.2f, 0.5f, 1, want);
        float *got = run_job(&h, &j, x, &us);
        report("se (gate + apply)", &j.xs, us, test_rel_l2(got, want, n));
        free(x), free(want), free(w1), free(w2), free(b1), free(b2), free(got);
    }
    /* nearest x2 on 1x96x120x120 */
    {
        struct job j = {.label = "resize",
                        .impl = &nn_gpu_resize_impl,
                        .op = make_op(PVK_OP_RESIZE, "resize"),
                        .xs = SHAPE(1, 96, 120, 120),
                        .ys = SHAPE(1, 96, 240, 240)};
        j.op.attr.resize.mode = PVK_RESIZE_NEAREST;
        j.op.attr.resize.scale_h = j.op.attr.resize.scale_w = 2;
        size_t n = (size_t)pvk_shape_numel(&j.xs), no = (size_t)pvk_shape_numel(&j.ys);
        float *x = malloc(n * 4), *want = malloc(no * 4);
        test_fill_uniform(x, n, -2, 2);
        ref_resize(x, 1, 96, 120, 120, PVK_RESIZE_NEAREST, 2, 2, 240, 240, want);
        float *got = run_job(&h, &j, x, &us);
        report("resize nearest x2", &j.xs, us, test_rel_l2(got, want, no));
        free(x), free(want), free(got);
    }
    /* a plain activation over the same 5.5 M outputs, for comparison with the resize */
    {
        struct job j = {.label = "unary",
                        .impl = &nn_gpu_unary_impl,
                        .op = make_op(PVK_OP_UNARY, "relu"),
                        .xs = SHAPE(1, 96, 240, 240),
                        .ys = SHAPE(1, 96, 240, 240)};
        j.op.act = PVK_ACT_RELU;
        size_t n = (size_t)pvk_shape_numel(&j.xs);
        float *x = malloc(n * 4), *want = malloc(n * 4);
        test_fill_uniform(x, n, -2, 2);
        memcpy(want, x, n * 4);
        ref_act(PVK_ACT_RELU, 0, 0, want, n);
        float *got = run_job(&h, &j, x, &us);
        report("unary relu", &j.xs, us, test_rel_l2(got, want, n));
        free(x), free(want), free(got);
    }
    /* layernorm [1, 40, 120] */
    {
        struct job j = {.label = "layernorm",
                        .impl = &nn_gpu_layernorm_impl,
                        .op = make_op(PVK_OP_LAYERNORM, "layernorm"),
                        .xs = SHAPE(1, 40, 120),
                        .ys = SHAPE(1, 40, 120)};
        j.op.attr.norm.eps = 1e-6f;
        float *x = malloc(4800 * 4), *want = malloc(4800 * 4), *g = malloc(120 * 4), *b = malloc(120 * 4);
        test_fill_uniform(x, 4800, -2, 2);
        test_fill_uniform(g, 120, 0.5f, 1.5f);
        test_fill_uniform(b, 120, -1, 1);
        j.w = (struct nn_gpu_weights){.data = {g, b}, .shape = {SHAPE(120), SHAPE(120)}};
        ref_layernorm(x, 40, 120, g, b, 1e-6f, want);
        float *got = run_job(&h, &j, x, &us);
        report("layernorm", &j.xs, us, test_rel_l2(got, want, 4800));
        free(x), free(want), free(g), free(b), free(got);
    }
    /* softmax [1, 40, 6625] over the classes */
    {
        struct job j = {.label = "softmax",
                        .impl = &nn_gpu_softmax_impl,
                        .op = make_op(PVK_OP_SOFTMAX, "softmax"),
                        .xs = SHAPE(1, 40, 6625),
                        .ys = SHAPE(1, 40, 6625)};
        j.op.attr.axis.axis = 2;
        size_t n = 40 * 6625;
        float *x = malloc(n * 4), *want = malloc(n * 4);
        test_fill_uniform(x, n, -8, 8);
        ref_softmax(x, 40, 6625, 1, want);
        float *got = run_job(&h, &j, x, &us);
        report("softmax", &j.xs, us, test_rel_l2(got, want, n));
        free(x), free(want), free(got);
    }
    /* attention [1, 40, 360] -> [1, 40, 120], 8 heads */
    {
        struct job j = {.label = "attention",
                        .impl = &nn_gpu_attention_impl,
                        .op = make_op(PVK_OP_ATTENTION, "attention"),
                        .xs = SHAPE(1, 40, 360),
                        .ys = SHAPE(1, 40, 120)};
        j.op.attr.attention.heads = 8;
        j.op.attr.attention.scale = 1.0f / sqrtf(15.0f);
        float *x = malloc(40 * 360 * 4), *want = malloc(40 * 120 * 4);
        test_fill_uniform(x, 40 * 360, -2, 2);
        ref_attention(x, 1, 40, 120, 8, j.op.attr.attention.scale, want);
        float *got = run_job(&h, &j, x, &us);
        report("attention", &j.xs, us, test_rel_l2(got, want, 40 * 120));
        free(x), free(want), free(got);
    }
    /* argmax [1, 40, 6625] -> index + value */
    {
        struct pvk_op op = make_op(PVK_OP_ARGMAX, "argmax");
        op.n_outputs = 2;
        struct pvk_shape xs = SHAPE(1, 40, 6625), ys = SHAPE(1, 40);
        size_t n = 40 * 6625;
        float *x = malloc(n * 4), want_v[40], got_v[40];
        int32_t want_i[40], got_i[40];
        test_fill_uniform(x, n, 0, 1);
        ref_argmax(x, 40, 6625, want_i, want_v);
        struct htensor in, y[2];
        htensor_alloc(&h, &in, &xs, NN_F32, 0, 0);
        htensor_write(&h, &in, x);
        htensor_alloc(&h, &y[0], &ys, NN_I32, 0, 0);
        htensor_alloc(&h, &y[1], &ys, NN_F32, 0, 0);
        harness_run_op(&h, &nn_gpu_argmax_impl, &op, NULL, &in, 1, y, 2, &us);
        htensor_read_i32(&h, &y[0], got_i);
        htensor_read(&h, &y[1], got_v);
        assert_memory_equal(got_i, want_i, sizeof got_i);
        report("argmax", &xs, us, test_rel_l2(got_v, want_v, 40));
        htensor_free(&in), htensor_free(&y[0]), htensor_free(&y[1]);
        free(x);
    }
    harness_done(&h);
    assert_int_equal(gpu_validation_message_count(), 0);
}

static double run_cmd_twice(struct gpu_cmd *cmd, bool warm_up)
{
    gpu_cmd_barrier(cmd, GPU_STAGE_COMPUTE, GPU_STAGE_HOST);
    if (gpu_cmd_end(cmd) != GPU_OK || gpu_cmd_run(cmd) != GPU_OK || gpu_cmd_run(cmd) != GPU_OK)
        fail_msg("run: %s", gpu_last_error());
    /* GPUs: replay for 0.3 s so that clocks have ramped up before the timed run */
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    t1 = t0;
    while (warm_up && (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9 < 0.3) {
        if (gpu_cmd_run(cmd) != GPU_OK)
            fail_msg("run: %s", gpu_last_error());
        clock_gettime(CLOCK_MONOTONIC, &t1);
    }
    const struct gpu_timing *t;
    unsigned n;
    gpu_cmd_timings(cmd, &t, &n);
    double us = 0;
    for (unsigned i = 0; i < n; i++) {
        printf("  %-16s %9.1f us\n", t[i].label, t[i].us);
        us += t[i].us;
    }
    return us;
}

static void test_image(void **state)
{
    (void)state;
    struct harness h;
    harness_init(&h, NN_F32);
    char err[256];
    struct image_ops *ops;
    if (image_ops_create(h.ctx, NN_F32, NN_F32, &ops, err, sizeof err))
        fail_msg("%s", err);
    int iw = 1000, ih = 700;
    struct ppocr_image img = {.width = iw, .height = ih, .bgr = malloc((size_t)iw * ih * 3)};
    for (size_t i = 0; i < (size_t)iw * ih * 3; i++)
        img.bgr[i] = (uint8_t)(((i / 3) % (size_t)iw / 9 + (i / 3) / (size_t)iw / 13) % 2 * 160 + test_rand_u32() % 64);
    size_t bytes = image_bgr_buffer_bytes(iw, ih);
    struct gpu_buffer ib;
    if (gpu_buffer_alloc(h.ctx, GPU_MEMORY_DEVICE, bytes, &ib) != GPU_OK)
        fail_msg("%s", gpu_last_error());
    uint8_t *padded = calloc(bytes, 1);
    memcpy(padded, img.bgr, (size_t)iw * ih * 3);
    gpu_upload(h.ctx, &ib, 0, padded, bytes);
    free(padded);
    /* det 1000x700 -> 960x672 */
    int dw, dh;
    ocr_det_resize_dims(iw, ih, OCR_DET_LIMIT_SIDE_LEN, &dw, &dh);
    struct image_det_job *job;
    if (image_det_job_create(ops, iw, ih, dw, dh, &job, err, sizeof err))
        fail_msg("%s", err);
    struct pvk_shape ds = SHAPE(1, 3, dh, dw);
    struct htensor dt;
    htensor_alloc(&h, &dt, &ds, NN_F32, 0, 0);
    struct gpu_cmd *cmd;
    if (gpu_cmd_create(h.ctx, 8, &cmd) != GPU_OK || gpu_cmd_begin(cmd) != GPU_OK)
        fail_msg("%s", gpu_last_error());
    gpu_cmd_barrier(cmd, GPU_STAGE_HOST, GPU_STAGE_COMPUTE);
    if (image_det_record(ops, job, cmd, &ib, 0, &dt.t, err, sizeof err))
        fail_msg("%s", err);
    double us = run_cmd_twice(cmd, !gpu_context_caps(h.ctx)->is_cpu);
    gpu_cmd_destroy(cmd);
    size_t nd = (size_t)3 * dw * dh;
    float *want = malloc(nd * 4), *got = malloc(nd * 4);
    assert_int_equal(ocr_det_preprocess(&img, OCR_DET_LIMIT_SIDE_LEN, want), 0);
    htensor_read(&h, &dt, got);
    report("det preprocess", &ds, us, test_rel_l2(got, want, nd));
    free(want), free(got);
    htensor_free(&dt);
    image_det_job_destroy(job);
    /* 30 text-line crops (a few tall ones) into 30x3x48x320 */
    enum { N = 30 };
    struct image_crop crops[N];
    float(*boxes)[4][2] = malloc(sizeof(float[N][4][2]));
    for (int i = 0; i < N; i++) {
        bool tall = i % 10 == 9;
        float x0 = 20 + (float)(i % 3) * 320, y0 = 10 + (float)(i / 3) * 66;
        float bw = tall ? 30 : test_rand_uniform(120, 300), bh = tall ? 60 : test_rand_uniform(24, 40),
              sk = test_rand_uniform(-4, 4);
        float b[4][2] = {{x0, y0}, {x0 + bw, y0 + sk}, {x0 + bw, y0 + sk + bh}, {x0, y0 + bh}};
        memcpy(boxes[i], b, sizeof b);
        struct ocr_crop_plan plan;
        assert_int_equal(ocr_crop_plan_make(b, &plan), 0);
        crops[i] = (struct image_crop){
            .width = plan.width, .height = plan.height, .rotate = plan.rotate, .flip = i % 7 == 0, .slot = i};
        memcpy(crops[i].src_from_dst, plan.src_from_dst, sizeof plan.src_from_dst);
    }
    struct image_crop_batch *cb;
    if (image_crop_batch_create(ops, &cb, err, sizeof err) ||
        image_crop_batch_set(ops, cb, crops, N, 48, 320, err, sizeof err))
        fail_msg("%s", err);
    struct pvk_shape rs = SHAPE(N, 3, 48, 320);
    struct htensor rt;
    htensor_alloc(&h, &rt, &rs, NN_F32, 0, 0);
    if (gpu_cmd_create(h.ctx, 8, &cmd) != GPU_OK || gpu_cmd_begin(cmd) != GPU_OK)
        fail_msg("%s", gpu_last_error());
    gpu_cmd_barrier(cmd, GPU_STAGE_HOST, GPU_STAGE_COMPUTE);
    if (image_crop_record(ops, cb, cmd, &ib, iw, ih, 0, &rt.t, err, sizeof err))
        fail_msg("%s", err);
    us = run_cmd_twice(cmd, !gpu_context_caps(h.ctx)->is_cpu);
    gpu_cmd_destroy(cmd);
    size_t per = (size_t)3 * 48 * 320;
    want = malloc(N * per * 4), got = malloc(N * per * 4);
    htensor_read(&h, &rt, got);
    for (int i = 0; i < N; i++) {
        struct ppocr_image crop;
        assert_int_equal(ocr_crop_box(&img, boxes[i], &crop), 0);
        if (crops[i].flip) /* 180 degrees */
            for (size_t p = 0, np = (size_t)crop.width * crop.height; p < np / 2; p++)
                for (int c = 0; c < 3; c++) {
                    uint8_t t = crop.bgr[p * 3 + c];
                    crop.bgr[p * 3 + c] = crop.bgr[(np - 1 - p) * 3 + c];
                    crop.bgr[(np - 1 - p) * 3 + c] = t;
                }
        assert_int_equal(ocr_rec_preprocess(&crop, 48, 320, want + (size_t)i * per), 0);
        free(crop.bgr);
    }
    /* boxes with whole-pixel corners put some sampling coordinates exactly on OpenCV's rounding
     * ties, where its double arithmetic and the shader's float-float one may round apart (see
     * image_ops.h): allowed up to the 2/255 of the brief, and counted */
    size_t off = 0;
    double worst = 0;
    for (size_t k = 0; k < N * per; k++) {
        double d = fabs((double)got[k] - want[k]);
        off += d > 1e-5;
        worst = d > worst ? d : worst;
    }
    printf("  %zu of %zu elements off, max abs %.3g\n", off, (size_t)N * per, worst);
    if (!(worst <= 2.0 / 255 + 1e-6))
        fail_msg("crops: max abs error %g", worst);
    report("crops (30 lines)", &rs, us, off ? 0 : test_rel_l2(got, want, N * per));
    free(want), free(got), free(boxes), free(img.bgr);
    htensor_free(&rt);
    image_crop_batch_destroy(cb);
    gpu_buffer_free(&ib);
    image_ops_destroy(ops);
    harness_done(&h);
    assert_int_equal(gpu_validation_message_count(), 0);
}

int main(void)
{
    test_seed();
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_ops), cmocka_unit_test(test_image)};
    return cmocka_run_group_tests(tests, test_gpu_group_setup, test_gpu_group_teardown);
}
