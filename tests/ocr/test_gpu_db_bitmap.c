/* DB's bitmap on the GPU (src/ocr/gpu/db_bitmap.h) against the host's work image
 * (contour_work_above in src/ocr/contour.h): random maps in fp32 and fp16 storage, odd sizes,
 * maps placed at odd offsets in NaN-filled buffers, many values exactly at the threshold and one
 * float above it, several thresholds. The work image must match byte for byte, the bytes up to
 * the whole word after it must be 0 and nothing past that may be written; the contours found in
 * it must be the host's. */
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
#include "gpu/validation.h"
#include "ocr/contour.h"
#include "ocr/gpu/db_bitmap.h"
#include "support/gpu_group.h"
#include "support/gpu_op_harness.h"
#include "support/test_env.h"

#define GUARD 64 /* bytes after the work image's words that must stay as they were */
#define POISON 0x5a

/* Values a GPU's float arithmetic may get wrong: denormals (fp32's and fp16's), signed zeros,
 * NaN, infinities, negatives. */
static const float specials[] = {1e-45f,   -1e-45f,   1e-40f, 0.0f,  -0.0f, NAN,    -NAN,
                                 INFINITY, -INFINITY, -0.5f,  6e-8f, 3e-5f, 6.1e-5f};

/* A map of blobs and noise whose values often sit exactly at thresh or one float above it. */
static float *random_map(int w, int h, float thresh, enum nn_dtype dt)
{
    float *m = malloc((size_t)w * h * sizeof(*m));
    assert_non_null(m);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            uint32_t r = test_rand_u32() % 8;
            float v = (float)(test_rand_u32() % 1000) / 1000.0f;
            if (r == 0)
                v = thresh;
            if (r == 1)
                v = nextafterf(thresh, 2.0f);
            if (r == 2)
                v = specials[test_rand_u32() % (sizeof(specials) / sizeof(specials[0]))];
            if (r <= 4 && (x / 9 + y / 4) % 3 == 0)
                v = 0.9f; /* bars: contours with holes */
            m[(size_t)y * w + x] = v;
        }
    harness_round(dt, m, (size_t)w * h);
    return m;
}

static void same_contours(const struct contour_list *got, const struct contour_list *want)
{
    assert_int_equal(got->count, want->count);
    assert_int_equal(got->n_points, want->n_points);
    for (size_t k = 0; k <= got->count; k++)
        assert_int_equal(got->start[k], want->start[k]);
    assert_memory_equal(got->points, want->points, got->n_points * sizeof(*got->points));
}

static void bitmap_case(struct harness *h, struct db_bitmap *bitmap, enum nn_dtype dt, int w, int h_, float thresh,
                        uint32_t lead)
{
    char err[256];
    float *map = random_map(w, h_, thresh, dt);
    struct htensor t;
    const struct pvk_shape shape = SHAPE(1, 1, h_, w);
    htensor_alloc(h, &t, &shape, dt, lead, 0);
    htensor_write(h, &t, map);

    const size_t bytes = db_bitmap_bytes(w, h_), work_bytes = contour_work_bytes(w, h_);
    assert_true(bytes >= work_bytes && bytes % 4 == 0 && bytes - work_bytes < 4);
    struct gpu_buffer dst;
    if (gpu_buffer_alloc(h->ctx, GPU_MEMORY_HOST, bytes + GUARD, &dst) != GPU_OK)
        fail_msg("alloc: %s", gpu_last_error());
    assert_true(gpu_buffer_is_mapped(&dst));
    int8_t *got = dst.mapped;
    memset(got, POISON, bytes + GUARD);

    struct gpu_cmd *cmd;
    if (gpu_cmd_create(h->ctx, 0, &cmd) != GPU_OK || gpu_cmd_begin(cmd) != GPU_OK)
        fail_msg("cmd: %s", gpu_last_error());
    gpu_cmd_barrier(cmd, GPU_STAGE_HOST, GPU_STAGE_COMPUTE);
    if (db_bitmap_record(bitmap, cmd, &t.t, thresh, &dst, err, sizeof err))
        fail_msg("%dx%d: %s", w, h_, err);
    gpu_cmd_barrier(cmd, GPU_STAGE_COMPUTE, GPU_STAGE_HOST);
    if (gpu_cmd_end(cmd) != GPU_OK || gpu_cmd_run(cmd) != GPU_OK)
        fail_msg("run: %s", gpu_last_error());
    gpu_cmd_destroy(cmd);

    int8_t *want = malloc(work_bytes);
    assert_non_null(want);
    contour_work_above(map, w, h_, thresh, want);
    for (size_t i = 0; i < work_bytes; i++)
        if (got[i] != want[i])
            fail_msg("%s %dx%d thresh %g: byte %zu (x %zu, y %zu) is %d, the host's %d", dt == NN_F16 ? "fp16" : "fp32",
                     w, h_, thresh, i, i % (size_t)(w + 2), i / (size_t)(w + 2), got[i], want[i]);
    for (size_t i = work_bytes; i < bytes; i++)
        assert_int_equal(got[i], 0);
    for (size_t i = bytes; i < bytes + GUARD; i++)
        assert_int_equal((uint8_t)got[i], POISON);

    struct contour_list from_gpu, from_host;
    assert_int_equal(contours_find_in_work(got, w, h_, &from_gpu, err, sizeof err), 0);
    assert_int_equal(contours_find_above(map, w, h_, thresh, &from_host, err, sizeof err), 0);
    same_contours(&from_gpu, &from_host);
    contour_list_free(&from_gpu);
    contour_list_free(&from_host);

    free(want);
    free(map);
    gpu_buffer_free(&dst);
    htensor_free(&t);
}

static void run_bitmap(enum nn_dtype dt)
{
    struct harness h;
    if (!harness_init(&h, dt))
        return;
    struct db_bitmap *bitmap;
    char err[256];
    if (db_bitmap_create(h.ctx, dt, &bitmap, err, sizeof err))
        fail_msg("%s", err);
    bitmap_case(&h, bitmap, dt, 1, 1, 0.3f, 0);
    bitmap_case(&h, bitmap, dt, 2, 1, 0.3f, 3);
    bitmap_case(&h, bitmap, dt, 3, 5, 0.3f, 1);
    bitmap_case(&h, bitmap, dt, 7, 2, 0.5f, 5);
    bitmap_case(&h, bitmap, dt, 33, 17, 0.3f, 7);
    bitmap_case(&h, bitmap, dt, 101, 63, 0.0f, 2);
    bitmap_case(&h, bitmap, dt, 5, 211, 0.7f, 0);
    bitmap_case(&h, bitmap, dt, 960, 544, 0.3f, 13); /* a det map's size */
    /* thresholds at denormals and signed zeros: compared as the host does, not flushed */
    bitmap_case(&h, bitmap, dt, 41, 29, 1e-45f, 1);
    bitmap_case(&h, bitmap, dt, 41, 29, -0.0f, 2);
    bitmap_case(&h, bitmap, dt, 41, 29, -0.5f, 3);
    bitmap_case(&h, bitmap, dt, 41, 29, 6e-8f, 4);
    bitmap_case(&h, bitmap, dt, 41, 29, 4e-8f, 5); /* between fp16's two smallest subnormals */
    bitmap_case(&h, bitmap, dt, 41, 29, 2e-5f, 6);
    db_bitmap_destroy(bitmap);
    harness_done(&h);
    assert_int_equal(gpu_validation_message_count(), 0);
}

static void test_bitmap_f32(void **s)
{
    (void)s;
    run_bitmap(NN_F32);
}
static void test_bitmap_f16(void **s)
{
    (void)s;
    run_bitmap(NN_F16);
}

/* Wrong map shapes and an output too small are refused with a reason, before any recording. */
static void test_bad_arguments(void **s)
{
    (void)s;
    struct harness h;
    if (!harness_init(&h, NN_F32))
        return;
    struct db_bitmap *bitmap;
    char err[256];
    if (db_bitmap_create(h.ctx, NN_F32, &bitmap, err, sizeof err))
        fail_msg("%s", err);
    struct htensor map, two_channels;
    const struct pvk_shape one = SHAPE(1, 1, 4, 6), two = SHAPE(1, 2, 4, 6);
    htensor_alloc(&h, &map, &one, NN_F32, 0, 0);
    htensor_alloc(&h, &two_channels, &two, NN_F32, 0, 0);
    struct gpu_buffer small;
    if (gpu_buffer_alloc(h.ctx, GPU_MEMORY_HOST, db_bitmap_bytes(6, 4) - 4, &small) != GPU_OK)
        fail_msg("alloc: %s", gpu_last_error());
    struct gpu_cmd *cmd;
    if (gpu_cmd_create(h.ctx, 0, &cmd) != GPU_OK || gpu_cmd_begin(cmd) != GPU_OK)
        fail_msg("cmd: %s", gpu_last_error());
    err[0] = 0;
    assert_int_equal(db_bitmap_record(bitmap, cmd, &map.t, 0.3f, &small, err, sizeof err), -1);
    assert_non_null(strstr(err, "needed"));
    err[0] = 0;
    assert_int_equal(db_bitmap_record(bitmap, cmd, &two_channels.t, 0.3f, &small, err, sizeof err), -1);
    assert_non_null(strstr(err, "[1, 1, h, w]"));
    if (gpu_cmd_end(cmd) != GPU_OK)
        fail_msg("end: %s", gpu_last_error());
    gpu_cmd_destroy(cmd);
    gpu_buffer_free(&small);
    htensor_free(&map);
    htensor_free(&two_channels);
    db_bitmap_destroy(bitmap);
    harness_done(&h);
    assert_int_equal(gpu_validation_message_count(), 0);
}

int main(void)
{
    test_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bitmap_f32),
        cmocka_unit_test(test_bitmap_f16),
        cmocka_unit_test(test_bad_arguments),
    };
    return cmocka_run_group_tests(tests, test_gpu_group_setup, test_gpu_group_teardown);
}
