/* MATMUL on the GPU against ref_matmul (+ ref_act): a constant B with bias and activation (plain
 * and trans_b), two inputs with broadcast batch dims (plain and trans_b), sizes off the tiles,
 * K = 1, a CTC-head-wide N at small M; fp32 and fp16 storage; the output poisoned with NaN at an
 * odd element offset. Each kernel takes the few runs that together meet every feature of the cases
 * (support/coverage.h; a few packed cases hold most of them), and every case runs at least once.
 * Speed is bench_ops' (BENCHMARKS.md), not a test's. */
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

static struct gpu_context *ctx;
static bool aligned_offsets; /* inputs start at multiples of 8 elements */

static int setup(void **s)
{
    (void)s;
    struct gpu_options opt;
    gpu_options_default(&opt);
    if (gpu_context_create(&opt, &ctx) != GPU_OK) {
        fprintf(stderr, "gpu_context_create: %s\n", gpu_last_error());
        return -1;
    }
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

/* `src` (n floats) at element `offset` of a NaN-filled device buffer; fp16 rounds src in place. */
static void upload_tensor(enum nn_dtype dt, float *src, size_t n, size_t offset, struct gpu_buffer *b)
{
    size_t total = offset + n + 1;
    CHECK(gpu_buffer_alloc(ctx, GPU_MEMORY_DEVICE, total * esize(dt), b));
    float *all = malloc(total * sizeof *all);
    test_fill_nan(all, total);
    if (dt == NN_F16)
        for (size_t i = 0; i < n; i++)
            src[i] = nn_half_to_float(nn_float_to_half(src[i]));
    if (n)
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

static void download_tensor(enum nn_dtype dt, const struct gpu_buffer *b, size_t offset, float *dst, size_t n)
{
    if (dt == NN_F16) {
        uint16_t *h = malloc(n * sizeof *h);
        CHECK(gpu_download(ctx, b, offset * 2, h, n * 2));
        nn_halves_to_floats(h, dst, n);
        free(h);
    } else {
        CHECK(gpu_download(ctx, b, offset * 4, dst, n * 4));
    }
}

struct mm_case {
    struct pvk_shape a, b; /* b: constant when const_b */
    int const_b, trans_b, bias;
    enum pvk_act act;
};

/* Runs one case (nothing in fp16 where the device has no fp16 storage). */
static void mm_run(const struct mm_case *mc, enum nn_dtype dt)
{
    if (dt == NN_F16 && !gpu_context_caps(ctx)->storage_16bit)
        return;
    struct pvk_shape ys;
    assert_int_equal(pvk_matmul_out_shape(&mc->a, &mc->b, mc->trans_b, &ys), 0);
    const size_t an = (size_t)pvk_shape_numel(&mc->a), bn = (size_t)pvk_shape_numel(&mc->b);
    const size_t yn = (size_t)pvk_shape_numel(&ys);
    const int64_t k = mc->a.d[mc->a.ndim - 1], n = ys.d[ys.ndim - 1];
    float *a = malloc(an * sizeof *a), *b = malloc(bn * sizeof *b), *bias = malloc(n * sizeof *bias);
    float *want = malloc(yn * sizeof *want), *got = malloc(yn * sizeof *got);
    test_fill_uniform(a, an, -1, 1);
    float scale = 1.7f / sqrtf((float)k);
    test_fill_uniform(b, bn, -scale, scale);
    test_fill_uniform(bias, n, -0.5f, 0.5f);

    struct pvk_op op = {.type = PVK_OP_MATMUL, .act = mc->act, .act_alpha = 0.2f, .act_beta = 0.5f};
    op.attr.matmul.trans_b = mc->trans_b;
    snprintf(op.name, sizeof op.name, "matmul");
    struct nn_gpu_weights w = {0};
    if (mc->const_b) {
        w.data[0] = b;
        w.shape[0] = mc->b;
    }
    if (mc->bias) {
        w.data[1] = bias;
        w.shape[1] = (struct pvk_shape){1, {n}};
    }
    struct nn_gpu_config cfg = {.ctx = ctx, .act_dtype = dt, .force = nn_gpu_overrides_from_env()};
    void *state = NULL;
    char err[256] = "";
    if (nn_gpu_matmul_impl.create(&cfg, &op, &w, &state, err, sizeof err))
        fail_msg("create: %s", err);
    if (dt == NN_F16 && mc->const_b) /* the device holds B in fp16: so does the reference */
        for (size_t i = 0; i < bn; i++)
            b[i] = nn_half_to_float(nn_float_to_half(b[i]));

    /* odd offsets, or multiples of 4 where the GEMM loads vec4s */
    const size_t a_off = aligned_offsets ? 8 : 1, b_off = aligned_offsets ? 16 : 6, y_off = aligned_offsets ? 8 : 5;
    struct gpu_buffer ba, bb = {0}, by;
    upload_tensor(dt, a, an, a_off, &ba);
    if (!mc->const_b)
        upload_tensor(dt, b, bn, b_off, &bb);
    upload_tensor(dt, NULL, 0, y_off + yn, &by);
    struct nn_gpu_tensor in[2] = {{&ba, (uint32_t)a_off, dt, mc->a, 0}, {&bb, (uint32_t)b_off, dt, mc->b, 0}};
    struct nn_gpu_tensor out = {&by, (uint32_t)y_off, dt, ys, 0};

    struct gpu_cmd *cmd;
    CHECK(gpu_cmd_create(ctx, 0, &cmd));
    CHECK(gpu_cmd_begin(cmd));
    if (nn_gpu_matmul_impl.record(state, &op, cmd, in, mc->const_b ? 1 : 2, &out, 1, err, sizeof err))
        fail_msg("record: %s", err);
    gpu_cmd_barrier(cmd, GPU_STAGE_COMPUTE, GPU_STAGE_HOST);
    CHECK(gpu_cmd_end(cmd));
    CHECK(gpu_cmd_run(cmd));

    ref_matmul(a, &mc->a, b, &mc->b, mc->trans_b, mc->bias ? bias : NULL, &ys, want);
    ref_act(mc->act, 0.2f, 0.5f, want, yn);
    download_tensor(dt, &by, y_off, got, yn);
    float edges[2];
    download_tensor(dt, &by, y_off - 1, edges, 1);
    download_tensor(dt, &by, y_off + yn, edges + 1, 1);
    assert_true(isnan(edges[0]) && isnan(edges[1]));
    double e = test_rel_l2(got, want, yn), tol = dt == NN_F16 ? 1e-2 : 1e-4;
    if (!(e <= tol)) {
        char sa[64], sb[64];
        fail_msg("matmul (kernel %s) %s a %s b %s const %d trans_b %d bias %d act %d: rel-L2 %g",
                 getenv("PPOCR_VK_GEMM_KERNEL") ? getenv("PPOCR_VK_GEMM_KERNEL") : "", dt == NN_F16 ? "f16" : "f32",
                 pvk_shape_str(&mc->a, sa, sizeof sa), pvk_shape_str(&mc->b, sb, sizeof sb), mc->const_b, mc->trans_b,
                 mc->bias, mc->act, e);
    }
    gpu_cmd_destroy(cmd);
    nn_gpu_matmul_impl.destroy(state);
    gpu_buffer_free(&ba);
    gpu_buffer_free(&bb);
    gpu_buffer_free(&by);
    free(a);
    free(b);
    free(bias);
    free(want);
    free(got);
}

#define S2(a, b) ((struct pvk_shape){2, {a, b}})
#define S3(a, b, c) ((struct pvk_shape){3, {a, b, c}})
#define S4(a, b, c, d) ((struct pvk_shape){4, {a, b, c, d}})

/* What a run of a case exercises (support/coverage.h). */
enum {
    F_F32,
    F_F16,
    F_ALIGNED,
    F_ODD_OFFSETS,
    F_CONST_B,
    F_TRANS_B,
    F_BIAS,
    F_ACT,
    F_BATCH,
    F_BROADCAST,
    F_K_1,
    F_M_ODD,
    F_N_ODD,
    F_K_ODD,
    F_N_256,
    F_M_64,
    F_K_100,
    F_VEC4,
};
static const char *const feature_names[64] = {
    "fp32 storage",
    "fp16 storage",
    "aligned offsets",
    "odd offsets",
    "constant B",
    "transposed B",
    "bias",
    "activation",
    "batch",
    "broadcast batch",
    "K = 1",
    "M not a multiple of 4",
    "N not a multiple of 4",
    "K not a multiple of 4",
    "N > 256",
    "M > 64",
    "K > 100",
    "vec4 rows (aligned offsets, K and N multiples of 4)",
};
#define BIT(f) ((uint64_t)1 << (f))

static uint64_t case_features(const struct mm_case *mc, size_t i, double *cost)
{
    struct pvk_shape ys;
    assert_int_equal(pvk_matmul_out_shape(&mc->a, &mc->b, mc->trans_b, &ys), 0);
    const int64_t k = mc->a.d[mc->a.ndim - 1], n = ys.d[ys.ndim - 1], m = ys.ndim > 1 ? ys.d[ys.ndim - 2] : 1;
    const int64_t batch = pvk_shape_numel(&ys) / (m * n);
    bool broadcast = mc->a.ndim != mc->b.ndim && !mc->const_b;
    for (int d = 0; d + 2 < mc->a.ndim && d + 2 < mc->b.ndim && !mc->const_b; d++)
        broadcast |= mc->a.d[mc->a.ndim - 3 - d] != mc->b.d[mc->b.ndim - 3 - d];
    *cost = (double)batch * m * n * k;
    uint64_t f = BIT((i / 2) % 2 ? F_ALIGNED : F_ODD_OFFSETS);
    f |= mc->const_b ? BIT(F_CONST_B) : 0;
    f |= mc->trans_b ? BIT(F_TRANS_B) : 0;
    f |= mc->bias ? BIT(F_BIAS) : 0;
    f |= mc->act != PVK_ACT_NONE ? BIT(F_ACT) : 0;
    f |= batch > 1 ? BIT(F_BATCH) : 0;
    f |= broadcast ? BIT(F_BROADCAST) : 0;
    f |= k == 1 ? BIT(F_K_1) : 0;
    f |= m % 4 ? BIT(F_M_ODD) : 0;
    f |= n % 4 ? BIT(F_N_ODD) : 0;
    f |= k % 4 ? BIT(F_K_ODD) : 0;
    f |= n > 256 ? BIT(F_N_256) : 0;
    f |= m > 64 ? BIT(F_M_64) : 0;
    f |= k > 100 ? BIT(F_K_100) : 0;
    f |= (i / 2) % 2 && k % 4 == 0 && n % 4 == 0 ? BIT(F_VEC4) : 0;
    return f;
}

/* Cases that each hold many features at once, so that every kernel meets them all in a few runs
 * (each distinct pipeline compiles at its first dispatch, seconds each with lavapipe's LLVM under
 * ASan): M past 64 and odd, K past 100, N past 256; with a constant B (bias, trans_b) and with two
 * inputs whose batch dims broadcast. 0, 1 at odd offsets; 2, 3 at aligned ones, K and N multiples
 * of 4 (vec4 rows). */
static const struct mm_case packed_cases[] = {
    {S3(2, 67, 101), S2(259, 101), 1, 1, 1, PVK_ACT_HARDSWISH},
    {S4(2, 3, 66, 102), S3(3, 102, 258), 0, 0, 1, PVK_ACT_RELU},
    {S3(2, 67, 104), S2(260, 104), 1, 1, 1, PVK_ACT_GELU_TANH},
    {S4(2, 3, 67, 104), S3(3, 104, 260), 0, 0, 1, PVK_ACT_NONE},
};

static const struct mm_case constant_b_cases[] = {
    {S3(2, 7, 20), S2(20, 33), 1, 0, 1, PVK_ACT_GELU_ERF},
    {S3(1, 40, 120), S2(120, 360), 1, 0, 1, PVK_ACT_NONE},
    {S3(3, 13, 120), S2(240, 120), 1, 1, 1, PVK_ACT_HARDSWISH},
    {S2(1, 200), S2(200, 2), 1, 0, 1, PVK_ACT_NONE},
    {S2(5, 1), S2(1, 9), 1, 0, 0, PVK_ACT_RELU},
    {S3(1, 1, 1), S2(1, 1), 1, 0, 1, PVK_ACT_SIGMOID},
    {S2(67, 65), S2(66, 65), 1, 1, 0, PVK_ACT_GELU_TANH},
    {S4(2, 1, 3, 17), S3(1, 17, 19), 1, 0, 1, PVK_ACT_SWISH},
    /* cooperative matrices: M, N and K past the tiles; at odd offsets, then (10, 11) at
     * aligned ones, where whole groups of 8 load at once */
    {S3(2, 37, 128), S2(128, 200), 1, 0, 1, PVK_ACT_RELU},
    {S3(1, 150, 96), S2(96, 136), 1, 0, 0, PVK_ACT_NONE},
    {S3(2, 37, 128), S2(128, 200), 1, 0, 1, PVK_ACT_RELU},
    {S3(1, 150, 96), S2(96, 136), 1, 0, 0, PVK_ACT_NONE},
};

static const struct mm_case wide_n_cases[] = {
    {S3(1, 3, 120), S2(120, 6625), 1, 0, 1, PVK_ACT_NONE},
    {S2(2, 96), S2(6625, 96), 1, 1, 1, PVK_ACT_NONE},
    /* at aligned offsets (indices 2, 3): vec4 loads and stores */
    {S3(2, 5, 40), S2(40, 300), 1, 0, 1, PVK_ACT_HARDSWISH},
    {S2(9, 64), S2(258, 64), 1, 1, 1, PVK_ACT_NONE},
};

static const struct mm_case two_inputs_cases[] = {
    {S3(2, 5, 8), S3(2, 8, 6), 0, 0, 0, PVK_ACT_NONE},
    {S4(2, 3, 5, 8), S3(3, 8, 6), 0, 0, 0, PVK_ACT_NONE},
    {S4(1, 4, 5, 8), S4(2, 1, 8, 6), 0, 0, 0, PVK_ACT_RELU},
    {S4(2, 3, 9, 16), S4(2, 3, 7, 16), 0, 1, 0, PVK_ACT_NONE},
    {S3(4, 70, 1), S2(1, 67), 0, 0, 1, PVK_ACT_NONE},
    {S2(3, 4), S4(2, 2, 4, 5), 0, 0, 0, PVK_ACT_NONE},
    {S4(2, 8, 40, 15), S4(2, 8, 40, 15), 0, 1, 0, PVK_ACT_NONE},
};

/* Every case of every table, each at its index in its own table (which decides its offsets'
 * alignment: indices 2 and 3 of every 4 are aligned). */
struct case_ref {
    const struct mm_case *mc;
    size_t index;
};
#define TABLE(t)                                                                                                       \
    {                                                                                                                  \
        t, sizeof t / sizeof t[0]                                                                                      \
    }
static const struct {
    const struct mm_case *cases;
    size_t count;
} tables[] = {TABLE(packed_cases), TABLE(constant_b_cases), TABLE(wide_n_cases), TABLE(two_inputs_cases)};
enum { MAX_CASES = 64 };
static struct case_ref all_cases[MAX_CASES];
static size_t case_count;

static void list_cases(void)
{
    case_count = 0;
    for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++)
        for (size_t i = 0; i < tables[t].count && case_count < MAX_CASES; i++)
            all_cases[case_count++] = (struct case_ref){&tables[t].cases[i], i};
}

/* The GEMM kernels: shared-memory tiles for GPUs (big, small and sliced), K-split, register tiles
 * for CPUs (their subgroup variant where the device has one, then never that variant); then, only
 * where the device has cooperative matrices, "": its own choice, and each cooperative-matrix tile
 * forced. */
static const char *const kernels[] = {"tiled", "small", "sliced",       "ksplit",       "cpu",
                                      "cpu1",  "",      "coopmat32x64", "coopmat64x64", "coopmat128x128"};
enum { KSPLIT = 3, KERNELS = sizeof kernels / sizeof kernels[0] };

static int kernels_on_device(void)
{
    return gpu_context_caps(ctx)->coopmat_nv ? KERNELS : 6;
}

/* The candidates: each case in each precision the device has (2 * case_count entries). */
static void candidates(uint64_t *features, double *cost, uint64_t *held)
{
    const bool f16 = gpu_context_caps(ctx)->storage_16bit;
    *held = 0;
    for (size_t c = 0; c < case_count; c++) {
        const uint64_t f = case_features(all_cases[c].mc, all_cases[c].index, &cost[2 * c]);
        cost[2 * c + 1] = cost[2 * c];
        features[2 * c] = f | BIT(F_F32);
        features[2 * c + 1] = f | (f16 ? BIT(F_F16) : BIT(F_F32));
        *held |= features[2 * c] | features[2 * c + 1];
    }
}

static void run_one(int kernel, size_t candidate)
{
    const struct case_ref *c = &all_cases[candidate / 2];
    setenv("PPOCR_VK_GEMM_KERNEL", kernels[kernel], 1);
    aligned_offsets = (c->index / 2) % 2;
    mm_run(c->mc, candidate % 2 && gpu_context_caps(ctx)->storage_16bit ? NN_F16 : NN_F32);
    unsetenv("PPOCR_VK_GEMM_KERNEL");
    aligned_offsets = false;
}

/* Each kernel through the few runs that together meet every feature of the cases, in each
 * precision the device has (support/coverage.h; a kernel that misses one fails the test). */
static void test_kernels(void **s)
{
    (void)s;
    uint64_t features[2 * MAX_CASES], held;
    double cost[2 * MAX_CASES];
    size_t which[2 * MAX_CASES];
    candidates(features, cost, &held);
    struct coverage cov;
    coverage_init(&cov, feature_names, kernels, kernels_on_device());
    size_t total = 0;
    for (int kernel = 0; kernel < kernels_on_device(); kernel++) {
        coverage_offer(&cov, kernel, held);
        const size_t runs = coverage_pick(features, cost, 2 * case_count, held, which);
        for (size_t r = 0; r < runs; r++) {
            run_one(kernel, which[r]);
            coverage_ran(&cov, kernel, features[which[r]]);
        }
        total += runs;
    }
    fprintf(stderr, "matmul kernels: %zu runs, %u pipelines built\n", total, gpu_pipeline_count(ctx));
    assert_int_equal(coverage_check(&cov, "matmul cases"), 0);
}

/* Each case that no kernel's runs took, once, through the K-split kernel (the cheapest to
 * compile), precisions alternating. */
static void test_every_case(void **s)
{
    (void)s;
    uint64_t features[2 * MAX_CASES], held;
    double cost[2 * MAX_CASES];
    size_t which[2 * MAX_CASES];
    bool ran[MAX_CASES] = {false};
    candidates(features, cost, &held);
    const size_t runs = coverage_pick(features, cost, 2 * case_count, held, which);
    for (size_t r = 0; r < runs; r++)
        ran[which[r] / 2] = true;
    size_t count = 0;
    for (size_t c = 0; c < case_count; c++)
        if (!ran[c]) {
            run_one(KSPLIT, 2 * c + c % 2);
            count++;
        }
    fprintf(stderr, "matmul cases no kernel's runs took: %zu of %zu\n", count, case_count);
}

static void test_activations(void **s)
{
    (void)s;
    for (int act = 0; act < PVK_ACT_COUNT; act++) {
        struct mm_case mc = {S2(9, 11), S2(11, 10), 1, 0, 1, (enum pvk_act)act};
        setenv("PPOCR_VK_GEMM_KERNEL", act % 2 ? "tiled" : "cpu", 1);
        mm_run(&mc, NN_F32);
        unsetenv("PPOCR_VK_GEMM_KERNEL");
    }
}

/* Three batch levels that do not merge: a clear error, not a wrong result. */
static void test_unsupported_broadcast(void **s)
{
    (void)s;
    struct pvk_op op = {.type = PVK_OP_MATMUL};
    snprintf(op.name, sizeof op.name, "mm3");
    struct nn_gpu_weights w = {0};
    struct nn_gpu_config cfg = {.ctx = ctx, .act_dtype = NN_F32};
    void *state = NULL;
    char err[256] = "";
    assert_int_equal(nn_gpu_matmul_impl.create(&cfg, &op, &w, &state, err, sizeof err), 0);
    struct gpu_buffer ba, bb, by;
    CHECK(gpu_buffer_alloc(ctx, GPU_MEMORY_DEVICE, 4096, &ba));
    CHECK(gpu_buffer_alloc(ctx, GPU_MEMORY_DEVICE, 4096, &bb));
    CHECK(gpu_buffer_alloc(ctx, GPU_MEMORY_DEVICE, 4096, &by));
    struct nn_gpu_tensor in[2] = {{&ba, 0, NN_F32, {5, {2, 1, 3, 2, 2}}, 0}, {&bb, 0, NN_F32, {5, {1, 4, 1, 2, 2}}, 0}};
    struct nn_gpu_tensor out = {&by, 0, NN_F32, {5, {2, 4, 3, 2, 2}}, 0};
    struct gpu_cmd *cmd;
    CHECK(gpu_cmd_create(ctx, 0, &cmd));
    CHECK(gpu_cmd_begin(cmd));
    assert_int_equal(nn_gpu_matmul_impl.record(state, &op, cmd, in, 2, &out, 1, err, sizeof err), -1);
    assert_non_null(strstr(err, "mm3"));
    fprintf(stderr, "expected error: %s\n", err);
    /* a wrong output shape is refused too */
    out.shape.d[1] = 5;
    assert_int_equal(nn_gpu_matmul_impl.record(state, &op, cmd, in, 2, &out, 1, err, sizeof err), -1);
    CHECK(gpu_cmd_end(cmd));
    gpu_cmd_destroy(cmd);
    nn_gpu_matmul_impl.destroy(state);
    gpu_buffer_free(&ba);
    gpu_buffer_free(&bb);
    gpu_buffer_free(&by);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kernels),
        cmocka_unit_test(test_every_case),
        cmocka_unit_test(test_activations),
        cmocka_unit_test(test_unsupported_broadcast),
    };
    const char *filter = getenv("PPOCR_TEST_FILTER"); /* e.g. test_wide_n */
    if (filter && *filter)
        cmocka_set_test_filter(filter);
    list_cases();
    if (case_count == MAX_CASES) {
        fprintf(stderr, "test_gpu_op_matmul: more cases than MAX_CASES\n");
        return 1;
    }
    return cmocka_run_group_tests_name("gpu_op_matmul", tests, setup, teardown);
}
