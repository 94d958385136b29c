/* The buffer pool: alignment, reuse of freed ranges, the host pool's small first block, no growth
 * over many cycles, the byte cap, dedicated blocks, and data through both mapped memory and
 * staging copies. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "gpu/context.h"
#include "gpu/error.h"
#include "gpu/pool.h"
#include "gpu/transfer.h"
#include "gpu/validation.h"
#include "support/test_env.h"

static struct gpu_context *create(const struct gpu_options *opt)
{
    struct gpu_context *ctx = NULL;
    if (gpu_context_create(opt, &ctx) != GPU_OK)
        fail_msg("gpu_context_create: %s", gpu_last_error());
    return ctx;
}

static struct gpu_pool_stats stats(struct gpu_context *ctx, enum gpu_memory where)
{
    struct gpu_pool_stats s;
    gpu_pool_stats(ctx, where, &s);
    return s;
}

static void alloc_ok(struct gpu_context *ctx, enum gpu_memory where, VkDeviceSize size, struct gpu_buffer *b)
{
    if (gpu_buffer_alloc(ctx, where, size, b) != GPU_OK)
        fail_msg("gpu_buffer_alloc(%llu): %s", (unsigned long long)size, gpu_last_error());
}

static void test_alignment_and_no_overlap(void **state)
{
    (void)state;
    struct gpu_context *ctx = create(NULL);
    const struct gpu_caps *c = gpu_context_caps(ctx);
    static const VkDeviceSize sizes[] = {1, 3, 17, 255, 256, 257, 4096, 10007, 65536, 1 << 20};
    enum { N = sizeof sizes / sizeof sizes[0] };
    for (int w = 0; w < 2; w++) {
        struct gpu_buffer b[N];
        for (int i = 0; i < N; i++) {
            alloc_ok(ctx, (enum gpu_memory)w, sizes[i], &b[i]);
            assert_int_equal(b[i].offset % c->min_storage_buffer_offset_alignment, 0);
            assert_int_equal(b[i].size, sizes[i]);
            if (w == GPU_MEMORY_HOST) {
                assert_true(gpu_buffer_is_mapped(&b[i]));
                assert_int_equal(b[i].offset % c->non_coherent_atom_size, 0);
            }
            assert_int_equal(gpu_buffer_is_mapped(&b[i]), gpu_memory_is_mapped(ctx, (enum gpu_memory)w));
        }
        /* ranges of one VkBuffer must not overlap */
        for (int i = 0; i < N; i++)
            for (int j = 0; j < N; j++)
                if (i != j && b[i].buffer == b[j].buffer)
                    assert_true(b[i].offset + b[i].size <= b[j].offset || b[j].offset + b[j].size <= b[i].offset);
        /* and writing each through its own pointer leaves the others intact */
        if (gpu_memory_is_mapped(ctx, (enum gpu_memory)w)) {
            for (int i = 0; i < N; i++)
                memset(b[i].mapped, i + 1, sizes[i]);
            for (int i = 0; i < N; i++)
                for (VkDeviceSize k = 0; k < sizes[i]; k++)
                    if (((unsigned char *)b[i].mapped)[k] != i + 1)
                        fail_msg("buffer %d byte %llu overwritten", i, (unsigned long long)k);
        }
        struct gpu_pool_stats s = stats(ctx, (enum gpu_memory)w);
        assert_int_equal(s.allocations, N);
        assert_true(s.in_use >= 1 + 3 + 17 + 255 + 256 + 257 + 4096 + 10007 + 65536 + (1 << 20));
        assert_true(s.peak >= s.in_use);
        for (int i = 0; i < N; i++)
            gpu_buffer_free(&b[i]);
        assert_null(b[0].block); /* zeroed */
        gpu_buffer_free(&b[0]);  /* a freed buffer is ignored */
        s = stats(ctx, (enum gpu_memory)w);
        assert_int_equal(s.allocations, 0);
        assert_int_equal(s.in_use, 0);
    }
    gpu_context_destroy(ctx);
    assert_int_equal(gpu_validation_message_count(), 0);
}

static void test_freed_range_is_reused(void **state)
{
    (void)state;
    struct gpu_context *ctx = create(NULL);
    struct gpu_buffer a, b, c;
    alloc_ok(ctx, GPU_MEMORY_DEVICE, 1000, &a);
    alloc_ok(ctx, GPU_MEMORY_DEVICE, 1000, &b);
    VkDeviceSize a_offset = a.offset;
    VkBuffer a_buffer = a.buffer;
    gpu_buffer_free(&a);
    alloc_ok(ctx, GPU_MEMORY_DEVICE, 900, &c);
    assert_true(c.buffer == a_buffer);
    assert_int_equal(c.offset, a_offset);
    assert_int_equal(stats(ctx, GPU_MEMORY_DEVICE).blocks, 1);
    gpu_buffer_free(&b);
    gpu_buffer_free(&c);
    /* everything coalesced back: a whole block fits again without a new one */
    struct gpu_pool_stats s = stats(ctx, GPU_MEMORY_DEVICE);
    struct gpu_buffer whole;
    alloc_ok(ctx, GPU_MEMORY_DEVICE, s.block_size, &whole);
    assert_int_equal(stats(ctx, GPU_MEMORY_DEVICE).blocks, 1);
    assert_int_equal(stats(ctx, GPU_MEMORY_DEVICE).block_bytes, s.block_bytes);
    gpu_buffer_free(&whole);
    gpu_context_destroy(ctx);
    assert_int_equal(gpu_validation_message_count(), 0);
}

/* The host pool's first shared block is small (host memory is pinned as it is allocated); the
 * next ones, and the device pool's first, are whole blocks. */
static void test_host_first_block_small(void **state)
{
    (void)state;
    struct gpu_context *ctx = create(NULL);
    struct gpu_buffer a, b, c, d;
    alloc_ok(ctx, GPU_MEMORY_HOST, 1000, &a);
    const struct gpu_pool_stats first = stats(ctx, GPU_MEMORY_HOST);
    assert_int_equal(first.blocks, 1);
    assert_true(first.block_bytes >= 4u << 20 && first.block_bytes < first.block_size);
    alloc_ok(ctx, GPU_MEMORY_HOST, 100000, &b); /* fits beside a */
    assert_int_equal(stats(ctx, GPU_MEMORY_HOST).blocks, 1);
    alloc_ok(ctx, GPU_MEMORY_HOST, first.block_bytes, &c); /* does not: a whole block */
    struct gpu_pool_stats now = stats(ctx, GPU_MEMORY_HOST);
    assert_int_equal(now.blocks, 2);
    assert_int_equal(now.block_bytes, first.block_bytes + now.block_size);
    alloc_ok(ctx, GPU_MEMORY_DEVICE, 1000, &d);
    now = stats(ctx, GPU_MEMORY_DEVICE);
    assert_int_equal(now.block_bytes, now.block_size);
    gpu_buffer_free(&a);
    gpu_buffer_free(&b);
    gpu_buffer_free(&c);
    gpu_buffer_free(&d);
    gpu_context_destroy(ctx);
    assert_int_equal(gpu_validation_message_count(), 0);
}

#define CYCLES 10000

/* Like a net run per image: the same mixed set of tensors, allocated and freed in a different
 * order every time. After the first image the pool must not grow. */
static void test_no_growth_over_many_cycles(void **state)
{
    (void)state;
    struct gpu_context *ctx = create(NULL);
    static const VkDeviceSize sizes[] = {4,      100,     4096, 12345, 65536,   1 << 18, 3 << 20, 7 << 20,
                                         999999, 2 << 20, 64,   8192,  5 << 20, 131071,  1 << 20};
    enum { N = sizeof sizes / sizeof sizes[0] };
    struct gpu_buffer b[N];
    int order[N];
    uint64_t block_bytes = 0;
    unsigned blocks = 0;
    for (int cycle = 0; cycle < CYCLES; cycle++) {
        for (int i = 0; i < N; i++)
            order[i] = i;
        for (int i = N - 1; i > 0; i--) {
            int j = (int)(test_rand_u32() % (unsigned)(i + 1)), t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        for (int i = 0; i < N; i++)
            alloc_ok(ctx, GPU_MEMORY_DEVICE, sizes[order[i]], &b[order[i]]);
        for (int i = N - 1; i > 0; i--) {
            int j = (int)(test_rand_u32() % (unsigned)(i + 1)), t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        for (int i = 0; i < N; i++)
            gpu_buffer_free(&b[order[i]]);
        struct gpu_pool_stats s = stats(ctx, GPU_MEMORY_DEVICE);
        if (cycle == 0) {
            block_bytes = s.block_bytes;
            blocks = s.blocks;
        }
        if (s.block_bytes != block_bytes || s.blocks != blocks || s.in_use != 0)
            fail_msg("cycle %d: %u blocks, %llu bytes (first cycle: %u, %llu), %llu in use", cycle, s.blocks,
                     (unsigned long long)s.block_bytes, blocks, (unsigned long long)block_bytes,
                     (unsigned long long)s.in_use);
    }

    /* interleaved: a sliding window of live buffers of random sizes */
    enum { WINDOW = 24 };
    struct gpu_buffer live[WINDOW] = {0};
    for (int cycle = 0; cycle < CYCLES; cycle++) {
        int k = (int)(test_rand_u32() % WINDOW);
        gpu_buffer_free(&live[k]);
        VkDeviceSize size = 1 + test_rand_u32() % (1u << (test_rand_u32() % 21));
        alloc_ok(ctx, GPU_MEMORY_DEVICE, size, &live[k]);
    }
    for (int k = 0; k < WINDOW; k++)
        gpu_buffer_free(&live[k]);
    struct gpu_pool_stats s = stats(ctx, GPU_MEMORY_DEVICE);
    assert_int_equal(s.in_use, 0);
    assert_int_equal(s.allocations, 0);
    assert_true(s.blocks <= 2); /* at most 24 MiB live at once */
    /* coalescing left every block whole: one block-sized request needs no new memory */
    struct gpu_buffer whole;
    alloc_ok(ctx, GPU_MEMORY_DEVICE, s.block_size, &whole);
    assert_int_equal(stats(ctx, GPU_MEMORY_DEVICE).block_bytes, s.block_bytes);
    gpu_buffer_free(&whole);
    gpu_pool_trim(ctx);
    assert_int_equal(stats(ctx, GPU_MEMORY_DEVICE).blocks, 0);
    assert_int_equal(stats(ctx, GPU_MEMORY_DEVICE).block_bytes, 0);
    gpu_context_destroy(ctx);
    assert_int_equal(gpu_validation_message_count(), 0);
}

static void test_cap_gives_clean_out_of_memory(void **state)
{
    (void)state;
    struct gpu_options opt;
    gpu_options_default(&opt);
    opt.pool_cap = 1 << 20;
    struct gpu_context *ctx = create(&opt);
    struct gpu_buffer a, b;
    alloc_ok(ctx, GPU_MEMORY_DEVICE, 600 << 10, &a);
    assert_int_equal(gpu_buffer_alloc(ctx, GPU_MEMORY_DEVICE, 600 << 10, &b), GPU_ERR_OUT_OF_MEMORY);
    assert_null(b.block);
    assert_non_null(strstr(gpu_last_error(), "cap"));
    assert_null(strchr(gpu_last_error(), '\n'));
    assert_int_equal(stats(ctx, GPU_MEMORY_DEVICE).cap, 1 << 20);
    gpu_buffer_free(&a);
    alloc_ok(ctx, GPU_MEMORY_DEVICE, 1 << 20, &b);
    gpu_buffer_free(&b);
    gpu_context_destroy(ctx);

    setenv("PPOCR_VK_POOL_CAP", "65536", 1);
    ctx = create(NULL);
    unsetenv("PPOCR_VK_POOL_CAP");
    assert_int_equal(stats(ctx, GPU_MEMORY_HOST).cap, 65536);
    assert_int_equal(gpu_buffer_alloc(ctx, GPU_MEMORY_HOST, 65537, &b), GPU_ERR_OUT_OF_MEMORY);
    gpu_context_destroy(ctx);
    assert_int_equal(gpu_validation_message_count(), 0);
}

static void test_large_requests(void **state)
{
    (void)state;
    struct gpu_context *ctx = create(NULL);
    const struct gpu_caps *c = gpu_context_caps(ctx);
    struct gpu_pool_stats before = stats(ctx, GPU_MEMORY_DEVICE);
    assert_true(before.block_size <= c->max_storage_buffer_range);
    struct gpu_buffer b;
    assert_int_equal(gpu_buffer_alloc(ctx, GPU_MEMORY_DEVICE, c->max_storage_buffer_range + 1, &b), GPU_ERR);
    assert_non_null(strstr(gpu_last_error(), "maxStorageBufferRange"));
    if (before.block_size < c->max_storage_buffer_range) {
        struct gpu_buffer small;
        alloc_ok(ctx, GPU_MEMORY_DEVICE, 4096, &small);
        uint64_t shared = stats(ctx, GPU_MEMORY_DEVICE).block_bytes;
        VkDeviceSize big = before.block_size + 4096;
        alloc_ok(ctx, GPU_MEMORY_DEVICE, big, &b);
        assert_true(b.buffer != small.buffer); /* a dedicated block */
        assert_int_equal(b.offset, 0);
        assert_true(stats(ctx, GPU_MEMORY_DEVICE).block_bytes >= shared + big);
        gpu_buffer_free(&b);
        assert_int_equal(stats(ctx, GPU_MEMORY_DEVICE).block_bytes, shared); /* released at once */
        gpu_buffer_free(&small);
    }
    gpu_context_destroy(ctx);
    assert_int_equal(gpu_validation_message_count(), 0);
}

/* Data survives a trip through device memory, mapped where possible and by staging copies when
 * device memory is not mapped (as on discrete GPUs). */
static void round_trip(bool mapped_device)
{
    struct gpu_options opt;
    gpu_options_default(&opt);
    opt.no_mapped_device_memory = !mapped_device;
    struct gpu_context *ctx = create(&opt);
    if (!mapped_device)
        assert_false(gpu_memory_is_mapped(ctx, GPU_MEMORY_DEVICE));
    const size_t n = 3 * (16u << 20) / 4 + 13; /* more than one staging chunk, odd size */
    float *in = malloc(n * sizeof *in), *out = malloc(n * sizeof *out);
    assert_non_null(in);
    assert_non_null(out);
    test_fill_uniform(in, n, -10, 10);
    test_fill_nan(out, n);
    struct gpu_buffer b;
    alloc_ok(ctx, GPU_MEMORY_DEVICE, n * sizeof *in, &b);
    assert_int_equal(gpu_upload(ctx, &b, 0, in, n * sizeof *in), GPU_OK);
    assert_int_equal(gpu_download(ctx, &b, 0, out, n * sizeof *out), GPU_OK);
    assert_memory_equal(in, out, n * sizeof *in);
    /* partial ranges at odd offsets */
    assert_int_equal(gpu_upload(ctx, &b, 12, in + 1000, 4004), GPU_OK);
    assert_int_equal(gpu_download(ctx, &b, 12, out, 4004), GPU_OK);
    assert_memory_equal(in + 1000, out, 4004);
    assert_int_equal(gpu_upload(ctx, &b, n * sizeof *in - 3, in, 4), GPU_ERR);
    assert_non_null(strstr(gpu_last_error(), "outside"));
    gpu_buffer_free(&b);
    assert_int_equal(stats(ctx, GPU_MEMORY_HOST).in_use, 0); /* staging returned */
    free(in);
    free(out);
    gpu_context_destroy(ctx);
    assert_int_equal(gpu_validation_message_count(), 0);
}

static void test_round_trip_mapped(void **state)
{
    (void)state;
    round_trip(true);
}
static void test_round_trip_staging(void **state)
{
    (void)state;
    round_trip(false);
}

int main(void)
{
    test_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_alignment_and_no_overlap),
        cmocka_unit_test(test_freed_range_is_reused),
        cmocka_unit_test(test_host_first_block_small),
        cmocka_unit_test(test_no_growth_over_many_cycles),
        cmocka_unit_test(test_cap_gives_clean_out_of_memory),
        cmocka_unit_test(test_large_requests),
        cmocka_unit_test(test_round_trip_mapped),
        cmocka_unit_test(test_round_trip_staging),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
