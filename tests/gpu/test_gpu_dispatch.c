/* Recording and running dispatches: a shader against C on random data of odd sizes, texel buffer
 * bindings, a chain of
 * dependent dispatches recorded once and replayed, timestamps, chains on several queues at once,
 * recording errors and fence timeouts. Every path runs with push descriptors (where the device has them), with descriptor
 * pools, and through staging copies as on discrete GPUs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpu/cmd.h"
#include "gpu/context.h"
#include "gpu/error.h"
#include "gpu/pipeline.h"
#include "gpu/pool.h"
#include "gpu/transfer.h"
#include "gpu/validation.h"
#include "support/test_env.h"

/* POLLED: every fence wait polls for a second before it blocks (on any device) */
enum mode { PUSH_DESCRIPTORS, DESCRIPTOR_POOLS, STAGING, POLLED };
static const char *const mode_names[] = {"push descriptors", "descriptor pools", "staging", "polled waits"};

static struct gpu_context *create(enum mode mode, uint32_t timeout_ms)
{
    struct gpu_options opt;
    gpu_options_default(&opt);
    opt.no_push_descriptors = mode == DESCRIPTOR_POOLS;
    opt.no_mapped_device_memory = mode == STAGING;
    opt.timeout_ms = timeout_ms;
    if (mode == POLLED)
        opt.spin_us = 1000000;
    struct gpu_context *ctx = NULL;
    if (gpu_context_create(&opt, &ctx) != GPU_OK)
        fail_msg("gpu_context_create: %s", gpu_last_error());
    if (mode == DESCRIPTOR_POOLS)
        assert_false(gpu_context_caps(ctx)->push_descriptors);
    fprintf(stderr, "mode: %s (push descriptors %d, device memory mapped %d)\n", mode_names[mode],
            gpu_context_caps(ctx)->push_descriptors, gpu_memory_is_mapped(ctx, GPU_MEMORY_DEVICE));
    return ctx;
}

#define CHECK(call)                                                                                                    \
    do {                                                                                                               \
        int st_ = (call);                                                                                              \
        if (st_ != GPU_OK)                                                                                             \
            fail_msg("%s -> %d: %s", #call, st_, gpu_last_error());                                                    \
    } while (0)

struct saxpy_push {
    uint32_t n;
    float a;
};

static void saxpy(enum mode mode)
{
    struct gpu_context *ctx = create(mode, 0);
    static const uint32_t counts[] = {1, 7, 63, 1000, 4099, 65537};
    static const uint32_t local_sizes[] = {1, 32, 64, 256};
    unsigned built = gpu_pipeline_count(ctx);
    for (unsigned c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        uint32_t n = counts[c];
        uint32_t local = local_sizes[c % 4];
        float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *got = malloc(n * sizeof *got),
              *want = malloc(n * sizeof *want);
        test_fill_uniform(x, n, -4, 4);
        test_fill_uniform(y, n, -4, 4);
        test_fill_nan(got, n);
        struct saxpy_push push = {n, test_rand_uniform(-2, 2)};
        for (uint32_t i = 0; i < n; i++)
            want[i] = push.a * x[i] + y[i];

        const struct gpu_pipeline *p;
        CHECK(gpu_pipeline_get(ctx,
                               &(struct gpu_pipeline_desc){.shader = GPU_SHADER_selftest_saxpy,
                                                           .spec = &local,
                                                           .spec_count = 1,
                                                           .buffer_count = 2,
                                                           .push_bytes = sizeof push},
                               &p));
        /* the buffers sit at non-zero offsets inside shared blocks */
        struct gpu_buffer pad, bx, by;
        CHECK(gpu_buffer_alloc(ctx, GPU_MEMORY_DEVICE, 3, &pad));
        CHECK(gpu_buffer_alloc(ctx, GPU_MEMORY_DEVICE, n * sizeof(float), &bx));
        CHECK(gpu_buffer_alloc(ctx, GPU_MEMORY_DEVICE, n * sizeof(float), &by));
        assert_true(bx.offset > 0);
        CHECK(gpu_upload(ctx, &bx, 0, x, n * sizeof(float)));
        CHECK(gpu_upload(ctx, &by, 0, y, n * sizeof(float)));

        struct gpu_cmd *cmd;
        CHECK(gpu_cmd_create(ctx, 0, &cmd));
        CHECK(gpu_cmd_begin(cmd));
        struct gpu_binding b[2] = {gpu_bind(&bx), gpu_bind(&by)};
        CHECK(gpu_cmd_dispatch(
            cmd,
            &(struct gpu_dispatch){.pipeline = p, .buffers = b, .push = &push, .groups = {(n + local - 1) / local}}));
        gpu_cmd_barrier(cmd, GPU_STAGE_COMPUTE, GPU_STAGE_HOST);
        CHECK(gpu_cmd_end(cmd));
        CHECK(gpu_cmd_run(cmd));
        CHECK(gpu_download(ctx, &by, 0, got, n * sizeof(float)));
        double err = test_rel_l2(got, want, n);
        if (!(err < 1e-6))
            fail_msg("saxpy n=%u local=%u (%s): rel-L2 %g", n, local, mode_names[mode], err);
        gpu_cmd_destroy(cmd);
        gpu_buffer_free(&pad);
        gpu_buffer_free(&bx);
        gpu_buffer_free(&by);
        free(x);
        free(y);
        free(got);
        free(want);
    }
    /* one pipeline per local size, never rebuilt for a repeated variant */
    assert_int_equal(gpu_pipeline_count(ctx), built + 4);
    gpu_context_destroy(ctx);
    assert_int_equal(gpu_validation_message_count(), 0);
}

struct gather_push {
    uint32_t n, off;
};

/* x bound as RGBA32F texels at odd sizes (the last texel past the bytes asked for), read from odd
 * element offsets; two texel bindings in one recording, then the recording made again. */
static void texel_gather(enum mode mode)
{
    struct gpu_context *ctx = create(mode, 0);
    const struct gpu_pipeline *p;
    CHECK(gpu_pipeline_get(ctx,
                           &(struct gpu_pipeline_desc){.shader = GPU_SHADER_selftest_texel_gather,
                                                       .buffer_count = 2,
                                                       .push_bytes = sizeof(struct gather_push),
                                                       .texel_mask = 1},
                           &p));
    static const uint32_t sizes[] = {1, 5, 4099, 65537};
    struct gpu_cmd *cmd;
    CHECK(gpu_cmd_create(ctx, 0, &cmd));
    for (unsigned c = 0; c < sizeof sizes / sizeof sizes[0]; c++) {
        const uint32_t total = sizes[c];
        struct gather_push push[2] = {{total, 0}, {total / 2 + 1, total / 2}};
        float *x = malloc(total * sizeof *x), *got = malloc(total * sizeof *got);
        test_fill_uniform(x, total, -4, 4);
        struct gpu_buffer pad, bx, by[2];
        CHECK(gpu_buffer_alloc(ctx, GPU_MEMORY_DEVICE, 3, &pad));
        CHECK(gpu_buffer_alloc(ctx, GPU_MEMORY_DEVICE, total * sizeof(float), &bx));
        assert_true(bx.offset > 0);
        CHECK(gpu_upload(ctx, &bx, 0, x, total * sizeof(float)));
        for (int k = 0; k < 2; k++)
            CHECK(gpu_buffer_alloc(ctx, GPU_MEMORY_DEVICE, push[k].n * sizeof(float), &by[k]));
        for (int rec = 0; rec < 2; rec++) {
            CHECK(gpu_cmd_begin(cmd));
            gpu_cmd_barrier(cmd, GPU_STAGE_TRANSFER, GPU_STAGE_COMPUTE);
            for (int k = 0; k < 2; k++) {
                CHECK(gpu_cmd_fill(cmd, &by[k], 0, push[k].n * sizeof(float), 0x7fc00000u));
                gpu_cmd_barrier(cmd, GPU_STAGE_TRANSFER, GPU_STAGE_COMPUTE);
                struct gpu_binding b[2] = {gpu_bind(&bx), gpu_bind(&by[k])};
                CHECK(gpu_cmd_dispatch(
                    cmd, &(struct gpu_dispatch){
                             .pipeline = p, .buffers = b, .push = &push[k], .groups = {(push[k].n + 63) / 64}}));
            }
            gpu_cmd_barrier(cmd, GPU_STAGE_COMPUTE, GPU_STAGE_HOST);
            CHECK(gpu_cmd_end(cmd));
            CHECK(gpu_cmd_run(cmd));
            for (int k = 0; k < 2; k++) {
                test_fill_nan(got, total);
                CHECK(gpu_download(ctx, &by[k], 0, got, push[k].n * sizeof(float)));
                if (memcmp(got, x + push[k].off, push[k].n * sizeof(float)))
                    fail_msg("texel gather of %u from %u (%s, recording %d): wrong values", push[k].n, push[k].off,
                             mode_names[mode], rec);
            }
        }
        for (int k = 0; k < 2; k++)
            gpu_buffer_free(&by[k]);
        gpu_buffer_free(&pad);
        gpu_buffer_free(&bx);
        free(x);
        free(got);
    }
    gpu_cmd_destroy(cmd);
    gpu_context_destroy(ctx);
    assert_int_equal(gpu_validation_message_count(), 0);
}

static void test_texel_gather_push_descriptors(void **s)
{
    (void)s;
    texel_gather(PUSH_DESCRIPTORS);
}
static void test_texel_gather_descriptor_pools(void **s)
{
    (void)s;
    texel_gather(DESCRIPTOR_POOLS);
}

static void test_saxpy_push_descriptors(void **s)
{
    (void)s;
    saxpy(PUSH_DESCRIPTORS);
}
static void test_saxpy_descriptor_pools(void **s)
{
    (void)s;
    saxpy(DESCRIPTOR_POOLS);
}
static void test_saxpy_staging(void **s)
{
    (void)s;
    saxpy(STAGING);
}

#define CHAIN 200
#define CHAIN_N 1031u

/* Records CHAIN dispatches of dst = src + 1, alternating between a and b; the result ends in a.
 * With marks, a timestamp after each half of the chain instead of one per dispatch. */
static void record_chain(struct gpu_cmd *cmd, const struct gpu_pipeline *p, const struct gpu_buffer *a,
                         const struct gpu_buffer *b, uint32_t n, char labels[][16], bool marks)
{
    gpu_cmd_time_dispatches(cmd, !marks);
    gpu_cmd_mark(cmd, "not recording"); /* ignored */
    CHECK(gpu_cmd_begin(cmd));
    gpu_cmd_barrier(cmd, GPU_STAGE_HOST, GPU_STAGE_COMPUTE);
    for (int k = 0; k < CHAIN; k++) {
        struct gpu_binding bind[2] = {gpu_bind(k % 2 ? b : a), gpu_bind(k % 2 ? a : b)};
        if (k > 0)
            gpu_cmd_barrier(cmd, GPU_STAGE_COMPUTE, GPU_STAGE_COMPUTE);
        if (labels)
            snprintf(labels[k], 16, "add_one #%d", k);
        CHECK(gpu_cmd_dispatch(cmd, &(struct gpu_dispatch){.pipeline = p,
                                                           .buffers = bind,
                                                           .push = &n,
                                                           .groups = {(n + 63) / 64},
                                                           .label = labels ? labels[k] : NULL}));
        if (marks && (k == CHAIN / 2 - 1 || k == CHAIN - 1))
            gpu_cmd_mark(cmd, k < CHAIN / 2 ? "first half" : "second half");
    }
    gpu_cmd_barrier(cmd, GPU_STAGE_COMPUTE, GPU_STAGE_HOST);
    CHECK(gpu_cmd_end(cmd));
}

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}

static void chain(enum mode mode, bool marks)
{
    struct gpu_context *ctx = create(mode, 0);
    const struct gpu_pipeline *p;
    CHECK(gpu_pipeline_get(
        ctx, &(struct gpu_pipeline_desc){.shader = GPU_SHADER_selftest_add_one, .buffer_count = 2, .push_bytes = 4},
        &p));
    uint32_t in[CHAIN_N], out[CHAIN_N];
    for (unsigned i = 0; i < CHAIN_N; i++)
        in[i] = test_rand_u32() >> 4;
    struct gpu_buffer a, b;
    CHECK(gpu_buffer_alloc(ctx, GPU_MEMORY_DEVICE, sizeof in, &a));
    CHECK(gpu_buffer_alloc(ctx, GPU_MEMORY_DEVICE, sizeof in, &b));
    CHECK(gpu_upload(ctx, &a, 0, in, sizeof in));

    const struct gpu_caps *caps = gpu_context_caps(ctx);
    struct gpu_cmd *cmd;
    CHECK(gpu_cmd_create(ctx, CHAIN + 10, &cmd));
    static char labels[CHAIN][16];
    record_chain(cmd, p, &a, &b, CHAIN_N, labels, marks);
    memset(labels, 0, sizeof labels); /* timings must keep their own copy */

    for (int run = 1; run <= 2; run++) {
        double t0 = now_us();
        CHECK(gpu_cmd_run(cmd));
        double wall = now_us() - t0;
        CHECK(gpu_download(ctx, &a, 0, out, sizeof out));
        for (unsigned i = 0; i < CHAIN_N; i++)
            if (out[i] != in[i] + (uint32_t)(run * CHAIN))
                fail_msg("run %d, element %u: %u, expected %u (%s)", run, i, out[i], in[i] + run * CHAIN,
                         mode_names[mode]);

        const struct gpu_timing *t;
        unsigned count;
        gpu_cmd_timings(cmd, &t, &count);
        if (!caps->timestamps) {
            assert_int_equal(count, 0);
            continue;
        }
        assert_int_equal(count, marks ? 2 : CHAIN);
        double total = 0;
        for (unsigned k = 0; k < count; k++) {
            char want[32];
            if (marks)
                snprintf(want, sizeof want, "%s", k ? "second half" : "first half");
            else
                snprintf(want, sizeof want, "add_one #%u", k);
            assert_string_equal(t[k].label, want);
            assert_true(t[k].us >= 0 && t[k].us < 1e6);
            total += t[k].us;
        }
        fprintf(stderr, "run %d: %d dispatches, %u timings, GPU %.0f us, wall %.0f us\n", run, CHAIN, count, total,
                wall);
        assert_true(total > 0);
        assert_true(total <= wall * 1.05 + 100); /* the GPU cannot take longer than the wait */
    }
    gpu_cmd_destroy(cmd);
    gpu_buffer_free(&a);
    gpu_buffer_free(&b);
    gpu_context_destroy(ctx);
    assert_int_equal(gpu_validation_message_count(), 0);
}

/* Chains on several compute queues, submitted together and then waited for: the queues asked
 * for are clamped to the family's and to GPU_MAX_QUEUES, handed out in turn, and work on each
 * runs (on a device with one queue, all of them on it). One queue unless asked. */
#define QUEUED_CHAINS 5
static void test_chains_on_queues(void **state)
{
    (void)state;
    struct gpu_context *ctx = create(PUSH_DESCRIPTORS, 0);
    assert_int_equal(gpu_context_caps(ctx)->queue_count, 1);
    gpu_context_destroy(ctx);

    struct gpu_options opt;
    gpu_options_default(&opt);
    opt.queues = GPU_MAX_QUEUES + 3;
    CHECK(gpu_context_create(&opt, &ctx));
    const uint32_t count = gpu_context_caps(ctx)->queue_count;
    uint32_t families = 0, most = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(gpu_context_physical_device(ctx), &families, NULL);
    VkQueueFamilyProperties props[16];
    families = families < 16 ? families : 16;
    vkGetPhysicalDeviceQueueFamilyProperties(gpu_context_physical_device(ctx), &families, props);
    for (uint32_t f = 0; f < families; f++)
        if (props[f].queueFlags & VK_QUEUE_COMPUTE_BIT && props[f].queueCount > most)
            most = props[f].queueCount;
    fprintf(stderr, "%u compute queues made (GPU_MAX_QUEUES %u, the largest compute family %u)\n", count,
            GPU_MAX_QUEUES, most);
    assert_true(count >= 1 && count <= GPU_MAX_QUEUES && count <= most);
    const unsigned first = gpu_context_take_queue(ctx);
    for (unsigned i = 1; i <= 2 * count; i++)
        assert_int_equal(gpu_context_take_queue(ctx), (first + i) % count);

    const struct gpu_pipeline *p;
    CHECK(gpu_pipeline_get(
        ctx, &(struct gpu_pipeline_desc){.shader = GPU_SHADER_selftest_add_one, .buffer_count = 2, .push_bytes = 4},
        &p));
    static uint32_t in[QUEUED_CHAINS][CHAIN_N], out[CHAIN_N];
    struct gpu_buffer a[QUEUED_CHAINS], b[QUEUED_CHAINS];
    struct gpu_cmd *cmd[QUEUED_CHAINS];
    for (int c = 0; c < QUEUED_CHAINS; c++) {
        for (unsigned i = 0; i < CHAIN_N; i++)
            in[c][i] = test_rand_u32() >> 4;
        CHECK(gpu_buffer_alloc(ctx, GPU_MEMORY_DEVICE, sizeof in[c], &a[c]));
        CHECK(gpu_buffer_alloc(ctx, GPU_MEMORY_DEVICE, sizeof in[c], &b[c]));
        CHECK(gpu_upload(ctx, &a[c], 0, in[c], sizeof in[c]));
        CHECK(gpu_cmd_create_on(ctx, gpu_context_take_queue(ctx), 0, &cmd[c]));
        record_chain(cmd[c], p, &a[c], &b[c], CHAIN_N, NULL, false);
    }
    for (int run = 1; run <= 2; run++) {
        for (int c = 0; c < QUEUED_CHAINS; c++)
            CHECK(gpu_cmd_submit(cmd[c]));
        for (int c = QUEUED_CHAINS - 1; c >= 0; c--)
            CHECK(gpu_cmd_wait(cmd[c]));
        for (int c = 0; c < QUEUED_CHAINS; c++) {
            CHECK(gpu_download(ctx, &a[c], 0, out, sizeof out));
            for (unsigned i = 0; i < CHAIN_N; i++)
                if (out[i] != in[c][i] + (uint32_t)(run * CHAIN))
                    fail_msg("run %d, chain %d, element %u: %u, expected %u", run, c, i, out[i],
                             in[c][i] + run * CHAIN);
        }
    }
    for (int c = 0; c < QUEUED_CHAINS; c++) {
        gpu_cmd_destroy(cmd[c]);
        gpu_buffer_free(&a[c]);
        gpu_buffer_free(&b[c]);
    }
    gpu_context_destroy(ctx);
    assert_int_equal(gpu_validation_message_count(), 0);
}

static void test_chain_push_descriptors(void **s)
{
    (void)s;
    chain(PUSH_DESCRIPTORS, false);
}
static void test_chain_descriptor_pools(void **s)
{
    (void)s;
    chain(DESCRIPTOR_POOLS, false);
}
static void test_chain_staging(void **s)
{
    (void)s;
    chain(STAGING, false);
}
static void test_chain_polled(void **s)
{
    (void)s;
    chain(POLLED, false);
}
static void test_chain_marks(void **s)
{
    (void)s;
    chain(PUSH_DESCRIPTORS, true);
}

/* Re-recording the same command buffer with other buffers, and fills and copies in a recording. */
static void test_rerecord_fill_copy(void **state)
{
    (void)state;
    struct gpu_context *ctx = create(DESCRIPTOR_POOLS, 0);
    const struct gpu_pipeline *p;
    CHECK(gpu_pipeline_get(
        ctx, &(struct gpu_pipeline_desc){.shader = GPU_SHADER_selftest_add_one, .buffer_count = 2, .push_bytes = 4},
        &p));
    const uint32_t n = 333;
    struct gpu_buffer a, b, c;
    CHECK(gpu_buffer_alloc(ctx, GPU_MEMORY_DEVICE, n * 4, &a));
    CHECK(gpu_buffer_alloc(ctx, GPU_MEMORY_DEVICE, n * 4, &b));
    CHECK(gpu_buffer_alloc(ctx, GPU_MEMORY_HOST, n * 4, &c));
    struct gpu_cmd *cmd;
    CHECK(gpu_cmd_create(ctx, 0, &cmd));
    for (uint32_t round = 0; round < 3; round++) {
        CHECK(gpu_cmd_begin(cmd));
        CHECK(gpu_cmd_fill(cmd, &a, 0, n * 4, 1000 * round));
        gpu_cmd_barrier(cmd, GPU_STAGE_TRANSFER, GPU_STAGE_COMPUTE);
        struct gpu_binding bind[2] = {gpu_bind(&a), gpu_bind(&b)};
        CHECK(gpu_cmd_dispatch(
            cmd, &(struct gpu_dispatch){.pipeline = p, .buffers = bind, .push = &n, .groups = {(n + 63) / 64}}));
        gpu_cmd_barrier(cmd, GPU_STAGE_COMPUTE, GPU_STAGE_TRANSFER);
        CHECK(gpu_cmd_copy(cmd, &b, 4, &c, 0, (n - 1) * 4));
        gpu_cmd_barrier(cmd, GPU_STAGE_TRANSFER, GPU_STAGE_HOST);
        CHECK(gpu_cmd_end(cmd));
        CHECK(gpu_cmd_run(cmd));
        const uint32_t *r = c.mapped;
        for (uint32_t i = 0; i < n - 1; i++)
            assert_int_equal(r[i], 1000 * round + 1);
    }
    gpu_cmd_destroy(cmd);
    gpu_buffer_free(&a);
    gpu_buffer_free(&b);
    gpu_buffer_free(&c);
    gpu_context_destroy(ctx);
    assert_int_equal(gpu_validation_message_count(), 0);
}

static void test_recording_errors(void **state)
{
    (void)state;
    struct gpu_context *ctx = create(PUSH_DESCRIPTORS, 0);
    const struct gpu_pipeline *p;
    assert_int_equal(gpu_pipeline_get(ctx, &(struct gpu_pipeline_desc){.shader = GPU_SHADER_NONE}, &p), GPU_ERR);
    assert_non_null(strstr(gpu_last_error(), "no embedded shader"));
    assert_int_equal(
        gpu_pipeline_get(
            ctx, &(struct gpu_pipeline_desc){.shader = GPU_SHADER_selftest_add_one, .buffer_count = 2, .push_bytes = 6},
            &p),
        GPU_ERR);
    CHECK(gpu_pipeline_get(
        ctx, &(struct gpu_pipeline_desc){.shader = GPU_SHADER_selftest_add_one, .buffer_count = 2, .push_bytes = 4},
        &p));
    struct gpu_buffer a;
    CHECK(gpu_buffer_alloc(ctx, GPU_MEMORY_DEVICE, 4096, &a));
    struct gpu_cmd *cmd;
    CHECK(gpu_cmd_create(ctx, 0, &cmd));
    assert_int_equal(gpu_cmd_submit(cmd), GPU_ERR); /* nothing recorded */
    CHECK(gpu_cmd_begin(cmd));
    uint32_t n = 16;
    struct gpu_binding bad[2] = {gpu_bind_range(&a, 1, 64), gpu_bind(&a)}; /* misaligned */
    assert_int_equal(gpu_cmd_dispatch(cmd, &(struct gpu_dispatch){.pipeline = p, .buffers = bad, .push = &n}), GPU_ERR);
    assert_non_null(strstr(gpu_last_error(), "binding 0"));
    const struct gpu_pipeline *gather;
    assert_int_equal(gpu_pipeline_get(ctx,
                                      &(struct gpu_pipeline_desc){.shader = GPU_SHADER_selftest_texel_gather,
                                                                  .buffer_count = 2,
                                                                  .push_bytes = 8,
                                                                  .texel_mask = 4},
                                      &gather),
                     GPU_ERR); /* no binding 2 */
    assert_non_null(strstr(gpu_last_error(), "texel"));
    CHECK(gpu_pipeline_get(
        ctx,
        &(struct gpu_pipeline_desc){
            .shader = GPU_SHADER_selftest_texel_gather, .buffer_count = 2, .push_bytes = 8, .texel_mask = 1},
        &gather));
    const uint32_t gather_push[2] = {4, 0};
    struct gpu_binding bad_texel[2] = {gpu_bind_range(&a, 4, 64), gpu_bind(&a)}; /* misaligned */
    assert_int_equal(
        gpu_cmd_dispatch(cmd, &(struct gpu_dispatch){.pipeline = gather, .buffers = bad_texel, .push = gather_push}),
        GPU_ERR);
    assert_non_null(strstr(gpu_last_error(), "texel binding 0"));
    assert_int_equal(gpu_cmd_copy(cmd, &a, 4000, &a, 0, 200), GPU_ERR);
    assert_int_equal(gpu_cmd_end(cmd), GPU_ERR); /* the recording is unusable */
    assert_int_equal(gpu_cmd_submit(cmd), GPU_ERR);
    gpu_cmd_destroy(cmd);
    gpu_buffer_free(&a);
    gpu_context_destroy(ctx);
    assert_int_equal(gpu_validation_message_count(), 0);
}

/* A wait that runs past the context's limit returns GPU_ERR_TIMEOUT instead of hanging, and the
 * work can still be waited for afterwards; polling stops at the limit too. */
static void fence_timeout(enum mode mode)
{
    struct gpu_context *ctx = create(mode, 1);
    const struct gpu_pipeline *p;
    CHECK(gpu_pipeline_get(
        ctx, &(struct gpu_pipeline_desc){.shader = GPU_SHADER_selftest_add_one, .buffer_count = 2, .push_bytes = 4},
        &p));
    const uint32_t n = 65535u * 64u; /* the most workgroups every device allows */
    struct gpu_buffer a, b;
    CHECK(gpu_buffer_alloc(ctx, GPU_MEMORY_DEVICE, n * 4, &a));
    CHECK(gpu_buffer_alloc(ctx, GPU_MEMORY_DEVICE, n * 4, &b));
    struct gpu_cmd *cmd;
    CHECK(gpu_cmd_create(ctx, 0, &cmd));
    CHECK(gpu_cmd_begin(cmd));
    CHECK(gpu_cmd_fill(cmd, &a, 0, n * 4, 0));
    gpu_cmd_barrier(cmd, GPU_STAGE_TRANSFER, GPU_STAGE_COMPUTE);
    /* 40 passes over 32 MiB take far longer than 1 ms on any GPU; on a CPU device 4 do, and the 40
     * took it tens of seconds */
    const int passes = gpu_context_caps(ctx)->is_cpu ? 4 : 40;
    for (int k = 0; k < passes; k++) {
        struct gpu_binding bind[2] = {gpu_bind(k % 2 ? &b : &a), gpu_bind(k % 2 ? &a : &b)};
        gpu_cmd_barrier(cmd, GPU_STAGE_COMPUTE, GPU_STAGE_COMPUTE);
        CHECK(gpu_cmd_dispatch(cmd,
                               &(struct gpu_dispatch){.pipeline = p, .buffers = bind, .push = &n, .groups = {n / 64}}));
    }
    CHECK(gpu_cmd_end(cmd));
    CHECK(gpu_cmd_submit(cmd));
    int st = gpu_cmd_wait(cmd);
    if (gpu_context_caps(ctx)->is_cpu) /* 4 passes over 32 MiB take far longer than 1 ms here */
        assert_int_equal(st, GPU_ERR_TIMEOUT);
    if (st == GPU_ERR_TIMEOUT) {
        assert_non_null(strstr(gpu_last_error(), "VK_TIMEOUT"));
        assert_int_equal(gpu_cmd_submit(cmd), GPU_ERR); /* still running */
        /* between the 1 ms waits, leave the cores to the device: on lavapipe, a spinning wait
         * (the polled mode's above all) takes a core from the work it waits for */
        while ((st = gpu_cmd_wait(cmd)) == GPU_ERR_TIMEOUT)
            nanosleep(&(struct timespec){.tv_nsec = 20 * 1000 * 1000}, NULL);
    }
    assert_int_equal(st, GPU_OK);
    gpu_cmd_destroy(cmd);
    gpu_buffer_free(&a);
    gpu_buffer_free(&b);
    gpu_context_destroy(ctx);
    assert_int_equal(gpu_validation_message_count(), 0);
}

static void test_fence_timeout(void **s)
{
    (void)s;
    fence_timeout(PUSH_DESCRIPTORS);
}
static void test_fence_timeout_polled(void **s)
{
    (void)s;
    fence_timeout(POLLED);
}

int main(void)
{
    test_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_saxpy_push_descriptors),
        cmocka_unit_test(test_saxpy_descriptor_pools),
        cmocka_unit_test(test_saxpy_staging),
        cmocka_unit_test(test_texel_gather_push_descriptors),
        cmocka_unit_test(test_texel_gather_descriptor_pools),
        cmocka_unit_test(test_chain_push_descriptors),
        cmocka_unit_test(test_chain_descriptor_pools),
        cmocka_unit_test(test_chain_staging),
        cmocka_unit_test(test_chain_polled),
        cmocka_unit_test(test_chain_marks),
        cmocka_unit_test(test_chains_on_queues),
        cmocka_unit_test(test_rerecord_fill_copy),
        cmocka_unit_test(test_recording_errors),
        cmocka_unit_test(test_fence_timeout),
        cmocka_unit_test(test_fence_timeout_polled),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
