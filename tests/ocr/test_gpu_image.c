/* The GPU image kernels (src/ocr/gpu/image_ops.h) against the CPU reference preprocessing
 * (src/ocr/preprocess.h, OpenCV's fixed-point arithmetic): the det input (resize + normalise) for
 * a downscale, an upscale, OpenCV's exact-2x path and a same-size copy, and batches of text-box
 * crops (perspective warps, tall boxes turned, lines turned over, cls 48x192 and rec 48xW inputs,
 * zero padding). Random-noise images, the hardest case for exactness: any difference in a
 * sampling coordinate or weight shows. Tolerance: max abs error 2/255 in normalised units. Both
 * also from framed images (a margin of one colour the buffer does not store), against the
 * reference on the image with its margin drawn in. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/cmd.h"
#include "gpu/context.h"
#include "gpu/error.h"
#include "gpu/transfer.h"
#include "gpu/validation.h"
#include "img/image.h"
#include "ocr/gpu/image_ops.h"
#include "ocr/preprocess.h"
#include "support/gpu_group.h"
#include "support/gpu_op_harness.h"
#include "support/test_env.h"

#define TOL (2.0 / 255.0)

static struct ppocr_image random_image(int w, int h)
{
    struct ppocr_image img = {.width = w, .height = h, .bgr = malloc((size_t)w * h * 3)};
    assert_non_null(img.bgr);
    /* noise over a few sharp-edged bars, so both flat and busy regions occur */
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            for (int c = 0; c < 3; c++) {
                uint8_t base = ((x / 7 + y / 5) % 3) * 100;
                img.bgr[((size_t)y * w + x) * 3 + c] = (uint8_t)(base + test_rand_u32() % 56);
            }
    return img;
}

/* img inside `margin` pixels of the colour fill: what the kernels should see of a framed upload. */
static struct ppocr_image framed_image(const struct ppocr_image *img, int margin, const uint8_t fill[3])
{
    int w = img->width + 2 * margin, h = img->height + 2 * margin;
    struct ppocr_image f = {.width = w, .height = h, .bgr = malloc((size_t)w * h * 3)};
    assert_non_null(f.bgr);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            int ix = x - margin, iy = y - margin;
            bool inside = ix >= 0 && ix < img->width && iy >= 0 && iy < img->height;
            for (int c = 0; c < 3; c++)
                f.bgr[((size_t)y * w + x) * 3 + c] =
                    inside ? img->bgr[((size_t)iy * img->width + ix) * 3 + c] : fill[c];
        }
    return f;
}

/* img's bytes, to be read framed by `margin` pixels of fill (image_ops.h); the buffer's bytes past
 * them are garbage, so that a kernel reading there shows. */
static void upload_image(struct harness *h, const struct ppocr_image *img, int margin, const uint8_t fill[3],
                         struct gpu_buffer *buf)
{
    size_t bytes = image_framed_buffer_bytes(img->width + 2 * margin, img->height + 2 * margin, margin);
    if (gpu_buffer_alloc(h->ctx, GPU_MEMORY_DEVICE, bytes, buf) != GPU_OK)
        fail_msg("alloc: %s", gpu_last_error());
    uint8_t *stored = malloc(bytes);
    for (size_t i = 0; i < bytes; i++)
        stored[i] = (uint8_t)test_rand_u32();
    memcpy(stored, img->bgr, (size_t)img->width * img->height * 3);
    if (margin)
        memcpy(stored + bytes - 4, fill, 3);
    if (gpu_upload(h->ctx, buf, 0, stored, bytes) != GPU_OK)
        fail_msg("upload: %s", gpu_last_error());
    free(stored);
}

static void random_fill(uint8_t fill[3])
{
    for (int c = 0; c < 3; c++)
        fill[c] = (uint8_t)test_rand_u32();
}

static struct gpu_cmd *begin(struct harness *h)
{
    struct gpu_cmd *cmd;
    if (gpu_cmd_create(h->ctx, 8, &cmd) != GPU_OK || gpu_cmd_begin(cmd) != GPU_OK)
        fail_msg("cmd: %s", gpu_last_error());
    gpu_cmd_barrier(cmd, GPU_STAGE_HOST, GPU_STAGE_COMPUTE);
    return cmd;
}

static double finish(struct gpu_cmd *cmd)
{
    gpu_cmd_barrier(cmd, GPU_STAGE_COMPUTE, GPU_STAGE_HOST);
    if (gpu_cmd_end(cmd) != GPU_OK || gpu_cmd_run(cmd) != GPU_OK || gpu_cmd_run(cmd) != GPU_OK)
        fail_msg("run: %s", gpu_last_error());
    const struct gpu_timing *t;
    unsigned n;
    gpu_cmd_timings(cmd, &t, &n);
    double us = 0;
    for (unsigned i = 0; i < n; i++)
        us += t[i].us;
    gpu_cmd_destroy(cmd);
    return us;
}

/* Max abs difference; counts elements off by more than 1e-5 (i.e. not bit-exact in uint8). */
static double compare(const float *got, const float *want, size_t n, size_t *off)
{
    double m = 0;
    *off = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)got[i] - want[i]);
        if (!(d <= 1e30))
            d = INFINITY;
        if (d > 1e-5 && !(got[i] == want[i])) {
            if (getenv("PPOCR_TEST_VERBOSE") && *off < 8)
                fprintf(stderr, "  [%zu] got %.6f want %.6f\n", i, (double)got[i], (double)want[i]);
            (*off)++;
        }
        if (d > m)
            m = d;
    }
    return m;
}

/* ---- det --------------------------------------------------------------------------------------- */

/* A w x ht image framed by `margin` (the source is then w + 2 margin wide) to dw x dh. */
static void det_case(struct harness *h, struct image_ops *ops, int iw, int ih, int margin, int dw, int dh)
{
    uint8_t fill[3];
    random_fill(fill);
    struct ppocr_image inner = random_image(iw, ih), img = framed_image(&inner, margin, fill);
    const int w = img.width, ht = img.height;
    size_t n = (size_t)3 * dw * dh;
    float *want = malloc(n * sizeof *want), *got = malloc(n * sizeof *got);
    uint8_t *resized = malloc((size_t)dw * dh * 3);
    assert_int_equal(ocr_resize_linear(img.bgr, w, ht, resized, dw, dh, 3), 0);
    ocr_det_normalize(resized, dw, dh, want);
    struct gpu_buffer buf;
    upload_image(h, &inner, margin, fill, &buf);
    struct image_det_job *job;
    char err[256];
    if (image_det_job_create(ops, w, ht, dw, dh, &job, err, sizeof err))
        fail_msg("%s", err);
    struct htensor y;
    struct pvk_shape s = SHAPE(1, 3, dh, dw);
    htensor_alloc(h, &y, &s, h->cfg.act_dtype, 3, 0);
    struct gpu_cmd *cmd = begin(h);
    if (image_det_record(ops, job, cmd, &buf, margin, &y.t, err, sizeof err))
        fail_msg("%s", err);
    double us = finish(cmd);
    htensor_read(h, &y, got);
    size_t off;
    double m = compare(got, want, n, &off);
    fprintf(stderr, "det %dx%d (margin %d) -> %dx%d (%s): max abs %.3g, %zu of %zu not exact, %.0f us\n", w, ht, margin,
            dw, dh, h->cfg.act_dtype == NN_F16 ? "fp16" : "fp32", m, off, n, us);
    if (!(m <= TOL))
        fail_msg("det %dx%d -> %dx%d: max abs error %g", w, ht, dw, dh, m);
    /* fp32 output: the resize is bit-exact, only the normalisation's division may round apart */
    if (h->cfg.act_dtype == NN_F32 && !(m <= 1e-5))
        fail_msg("det %dx%d -> %dx%d: not bit-exact (max abs %g)", w, ht, dw, dh, m);
    htensor_free(&y);
    gpu_buffer_free(&buf);
    image_det_job_destroy(job);
    free(img.bgr), free(inner.bgr), free(want), free(got), free(resized);
}

static void run_det(enum nn_dtype dt)
{
    struct harness h;
    if (!harness_init(&h, dt))
        return;
    struct image_ops *ops;
    char err[256];
    if (image_ops_create(h.ctx, dt, dt, &ops, err, sizeof err))
        fail_msg("%s", err);
    int dw, dh;
    ocr_det_resize_dims(1000, 700, OCR_DET_LIMIT_SIDE_LEN, &dw, &dh);
    det_case(&h, ops, 1000, 700, 0, dw, dh);
    det_case(&h, ops, 37, 23, 0, 64, 32);  /* upscale, odd source */
    det_case(&h, ops, 128, 64, 0, 64, 32); /* OpenCV's exact 2x box path */
    det_case(&h, ops, 33, 32, 0, 33, 32);  /* same size: copy */
    det_case(&h, ops, 1, 1, 0, 32, 32);
    det_case(&h, ops, 301, 97, 0, 96, 32);
    /* framed: the engine's 32-pixel margin, odd sizes, each resize path, a margin wider than the image */
    ocr_det_resize_dims(1000 + 64, 700 + 64, OCR_DET_LIMIT_SIDE_LEN, &dw, &dh);
    det_case(&h, ops, 1000, 700, 32, dw, dh);
    det_case(&h, ops, 37, 23, 5, 64, 32);
    det_case(&h, ops, 60, 28, 2, 32, 16);
    det_case(&h, ops, 31, 30, 1, 33, 32);
    det_case(&h, ops, 1, 1, 32, 64, 64);
    image_ops_destroy(ops);
    harness_done(&h);
    assert_int_equal(gpu_validation_message_count(), 0);
}

static void test_det_f32(void **s)
{
    (void)s;
    run_det(NN_F32);
}
static void test_det_f16(void **s)
{
    (void)s;
    run_det(NN_F16);
}

/* ---- crops ------------------------------------------------------------------------------------- */

/* A random quadrilateral: a rotated, slightly skewed rectangle, sometimes tall, sometimes
 * reaching past the image border (BORDER_REPLICATE); one in three is a text-line box with a
 * whole-pixel left edge (as the timing test's), which puts some sampling coordinates exactly on
 * OpenCV's rounding ties. */
static void random_box(int w, int h, float box[4][2])
{
    float cx = test_rand_uniform(0, (float)w), cy = test_rand_uniform(0, (float)h);
    bool tall = test_rand_u32() % 4 == 0;
    float bw = test_rand_uniform(8, tall ? 40.0f : 300.0f), bh = test_rand_uniform(6, tall ? 200.0f : 60.0f);
    if (test_rand_u32() % 3 == 0) {
        float x0 = floorf(cx), y0 = floorf(cy), sk = test_rand_uniform(-4, 4);
        const float b[4][2] = {{x0, y0}, {x0 + bw, y0 + sk}, {x0 + bw, y0 + sk + bh}, {x0, y0 + bh}};
        memcpy(box, b, sizeof b);
        return;
    }
    float a = test_rand_uniform(-0.4f, 0.4f), ca = cosf(a), sa = sinf(a);
    const float corners[4][2] = {{-1, -1}, {1, -1}, {1, 1}, {-1, 1}};
    for (int k = 0; k < 4; k++) {
        float x = corners[k][0] * bw / 2 + test_rand_uniform(-3, 3),
              y = corners[k][1] * bh / 2 + test_rand_uniform(-3, 3);
        box[k][0] = cx + x * ca - y * sa;
        box[k][1] = cy + x * sa + y * ca;
    }
}

/* One batch of a crops test: n random boxes of an image into slots of [batch][3][48][target_w]
 * (shuffled, one slot left free), and what the CPU reference makes of them. */
struct crop_job {
    int n, target_w, batch;
    size_t per; /* elements per slot */
    struct image_crop *crops;
    float *want; /* batch slots */
};

static struct crop_job crop_job_make(const struct ppocr_image *img, int n, int target_w)
{
    struct crop_job j = {n,   target_w, n + 1, (size_t)3 * 48 * target_w, calloc((size_t)n, sizeof(struct image_crop)),
                         NULL};
    j.want = malloc((size_t)j.batch * j.per * sizeof(float));
    assert_true(j.crops && j.want);
    struct image_crop *crops = j.crops;
    const int batch = j.batch;
    for (int i = 0; i < n; i++) {
        float box[4][2];
        struct ocr_crop_plan plan;
        do
            random_box(img->width, img->height, box);
        while (ocr_crop_plan_make(box, &plan) != 0);
        memcpy(crops[i].src_from_dst, plan.src_from_dst, sizeof plan.src_from_dst);
        crops[i].width = plan.width;
        crops[i].height = plan.height;
        crops[i].rotate = plan.rotate;
        crops[i].flip = test_rand_u32() % 3 == 0;
        crops[i].slot = (i * 7 + 3) % batch == n ? (i * 7 + 4) % batch : (i * 7 + 3) % batch;
        for (int k = 0; k < i; k++)
            if (crops[k].slot == crops[i].slot) /* keep slots distinct */
                crops[i].slot = -1;
        if (crops[i].slot < 0) {
            for (int sl = 0; sl < batch - 1; sl++) {
                bool used = false;
                for (int k = 0; k < i; k++)
                    used |= crops[k].slot == sl;
                if (!used) {
                    crops[i].slot = sl;
                    break;
                }
            }
        }
        struct ppocr_image crop;
        assert_int_equal(ocr_crop_box(img, box, &crop), 0);
        if (crops[i].flip)
            ocr_rotate180(&crop);
        assert_int_equal(ocr_rec_preprocess(&crop, 48, target_w, j.want + (size_t)crops[i].slot * j.per), 0);
        free(crop.bgr);
    }
    return j;
}

static void crop_job_free(struct crop_job *j)
{
    free(j->crops);
    free(j->want);
}

/* Checks the GPU's slots `got` against the reference; returns the worst error and adds the
 * elements that are not bit-exact to *off_total. */
static double crop_job_check(const struct harness *h, const struct crop_job *j, const float *got, size_t *off_total)
{
    double worst = 0;
    for (int i = 0; i < j->n; i++) {
        size_t at = (size_t)j->crops[i].slot * j->per, off;
        double m = compare(got + at, j->want + at, j->per, &off);
        *off_total += off;
        if (!(m <= TOL))
            fail_msg("crop %d (%dx%d rotate %d flip %d) into width %d: max abs error %g, %zu elements differ", i,
                     j->crops[i].width, j->crops[i].height, j->crops[i].rotate, j->crops[i].flip, j->target_w, m, off);
        if (m > worst)
            worst = m;
    }
    /* the free slot was not written */
    int free_slot = -1;
    for (int sl = 0; sl < j->batch && free_slot < 0; sl++) {
        bool used = false;
        for (int i = 0; i < j->n; i++)
            used |= j->crops[i].slot == sl;
        if (!used)
            free_slot = sl;
    }
    assert_true(free_slot >= 0);
    for (size_t k = 0; k < j->per; k++)
        if (!isnan(got[(size_t)free_slot * j->per + k]))
            fail_msg("crop kernel wrote into the unused slot %d", free_slot);
    (void)h;
    return worst;
}

/* Batches of crops of a w x h image framed by `margin` (boxes anywhere in the framed image, some
 * reaching past it), batch k: n[k] crops into 3 x 48 x target_w[k]. One batch goes through
 * image_crop_record; several through image_crop_record_many, into one buffer side by side. With
 * own_images, batch k is cut from an image of its own, (w + 13 k) x (ht + 5 k) framed by margin + k:
 * the lines of several images in one run. */
static void crops_batches_case(struct harness *h, struct image_ops *ops, int w, int ht, int margin, int n_jobs,
                               const int *n, const int *target_w, bool own_images, bool verbose)
{
    enum { MAX_JOBS = 4 };
    assert_true(n_jobs >= 1 && n_jobs <= MAX_JOBS);
    const int n_images = own_images ? n_jobs : 1;
    struct ppocr_image inner[MAX_JOBS], img[MAX_JOBS];
    struct gpu_buffer buf[MAX_JOBS];
    struct image_crop_source sources[MAX_JOBS];
    for (int m = 0; m < n_images; m++) {
        uint8_t fill[3];
        random_fill(fill);
        inner[m] = random_image(w + 13 * m, ht + 5 * m);
        img[m] = framed_image(&inner[m], margin + m, fill);
        upload_image(h, &inner[m], margin + m, fill, &buf[m]);
    }
    struct crop_job jobs[MAX_JOBS];
    struct image_crop_batch *cb[MAX_JOBS];
    struct nn_gpu_tensor views[MAX_JOBS];
    const struct nn_gpu_tensor *dsts[MAX_JOBS];
    size_t total = 0, at[MAX_JOBS];
    char err[256];
    for (int k = 0; k < n_jobs; k++) {
        const int m = own_images ? k : 0;
        jobs[k] = crop_job_make(&img[m], n[k], target_w[k]);
        sources[k] = (struct image_crop_source){&buf[m], img[m].width, img[m].height, margin + m};
        at[k] = total;
        total += (size_t)jobs[k].batch * jobs[k].per + 5; /* a gap that must stay NaN */
        if (image_crop_batch_create(ops, &cb[k], err, sizeof err) ||
            image_crop_batch_set(ops, cb[k], jobs[k].crops, n[k], 48, target_w[k], err, sizeof err))
            fail_msg("%s", err);
    }
    struct htensor y; /* every batch's destination, one after another in one buffer */
    struct pvk_shape s = SHAPE((int64_t)total);
    htensor_alloc(h, &y, &s, h->cfg.act_dtype, 1, 0);
    for (int k = 0; k < n_jobs; k++) {
        views[k] = y.t;
        views[k].elem_offset = y.t.elem_offset + (uint32_t)at[k];
        views[k].shape = SHAPE(jobs[k].batch, 3, 48, target_w[k]);
        dsts[k] = &views[k];
    }
    struct gpu_cmd *cmd = begin(h);
    int rc = n_jobs == 1 ? image_crop_record(ops, cb[0], cmd, &buf[0], img[0].width, img[0].height, margin, dsts[0],
                                             err, sizeof err)
                         : image_crop_record_many(ops, cb, dsts, sources, n_jobs, cmd, err, sizeof err);
    if (rc)
        fail_msg("%s", err);
    double us = finish(cmd);
    float *got = malloc(total * sizeof(float));
    assert_non_null(got);
    htensor_read(h, &y, got);
    double worst = 0;
    size_t off_total = 0;
    for (int k = 0; k < n_jobs; k++) {
        double m = crop_job_check(h, &jobs[k], got + at[k], &off_total);
        worst = m > worst ? m : worst;
        for (size_t g = at[k] + (size_t)jobs[k].batch * jobs[k].per;
             g < at[k] + (size_t)jobs[k].batch * jobs[k].per + 5; g++)
            if (!isnan(got[g]))
                fail_msg("crops of batch %d wrote past its destination", k);
    }
    /* with 64-bit integers the warp settles rounding ties in emulated double: bit-exact */
    if (h->cfg.act_dtype == NN_F32 && gpu_context_caps(h->ctx)->shader_int64 && off_total)
        fail_msg("%d batches: %zu elements not bit-exact (max abs %g)", n_jobs, off_total, worst);
    if (verbose || off_total)
        fprintf(stderr,
                "%d batches (%d crops first) of %d image(s), the first %dx%d (margin %d), widths %d..: max abs "
                "%.3g, %zu elements not exact, %.0f us\n",
                n_jobs, n[0], n_images, img[0].width, img[0].height, margin, target_w[0], worst, off_total, us);
    htensor_free(&y);
    for (int m = 0; m < n_images; m++) {
        gpu_buffer_free(&buf[m]);
        free(img[m].bgr), free(inner[m].bgr);
    }
    for (int k = 0; k < n_jobs; k++) {
        image_crop_batch_destroy(cb[k]);
        crop_job_free(&jobs[k]);
    }
    free(got);
}

/* n crops into 3 x 48 x target_w through image_crop_record. */
static void crops_case(struct harness *h, struct image_ops *ops, int w, int ht, int margin, int n, int target_w,
                       bool verbose)
{
    crops_batches_case(h, ops, w, ht, margin, 1, &n, &target_w, false, verbose);
}

static void run_crops(enum nn_dtype dt)
{
    struct harness h;
    if (!harness_init(&h, dt))
        return;
    struct image_ops *ops;
    char err[256];
    if (image_ops_create(h.ctx, dt, dt, &ops, err, sizeof err))
        fail_msg("%s", err);
    crops_case(&h, ops, 800, 600, 0, 30, 320, true); /* rec bucket */
    crops_case(&h, ops, 640, 480, 0, 6, 192, true);  /* cls input */
    crops_case(&h, ops, 97, 61, 0, 3, 100, false);
    for (int k = 0; k < 4; k++)
        crops_case(&h, ops, 300, 200, 0, 12, 320, false);
    /* framed: boxes across the margin and past it (BORDER_REPLICATE then repeats the margin) */
    crops_case(&h, ops, 640, 480, 32, 20, 320, true);
    crops_case(&h, ops, 97, 61, 7, 6, 192, false);
    crops_case(&h, ops, 23, 9, 32, 4, 100, false);
    /* several batches of different widths recorded side by side (a rec group and the classifier) */
    const int n4[4] = {7, 1, 12, 5}, w4[4] = {320, 448, 192, 992};
    crops_batches_case(&h, ops, 640, 480, 32, 4, n4, w4, false, true);
    const int n2[2] = {3, 2}, w2[2] = {100, 33};
    crops_batches_case(&h, ops, 97, 61, 3, 2, n2, w2, false, false);
    /* the same, each batch cut from an image of its own (lines of several images in one run) */
    crops_batches_case(&h, ops, 301, 97, 0, 4, n4, w4, true, true);
    crops_batches_case(&h, ops, 57, 23, 2, 2, n2, w2, true, false);
    image_ops_destroy(ops);
    harness_done(&h);
    assert_int_equal(gpu_validation_message_count(), 0);
}

static void test_crops_f32(void **s)
{
    (void)s;
    run_crops(NN_F32);
}
static void test_crops_f16(void **s)
{
    (void)s;
    run_crops(NN_F16);
}

int main(void)
{
    test_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_det_f32),
        cmocka_unit_test(test_det_f16),
        cmocka_unit_test(test_crops_f32),
        cmocka_unit_test(test_crops_f16),
    };
    return cmocka_run_group_tests(tests, test_gpu_group_setup, test_gpu_group_teardown);
}
