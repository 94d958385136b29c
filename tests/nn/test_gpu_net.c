/* The real det, cls and rec nets on the GPU planner against the CPU reference executor, layer by
 * layer: the GPU plan keeps every intermediate (keep_all), the CPU run reports each op's output,
 * and the first op whose output differs is named. Then the same nets with liveness sharing on
 * must give the same output bit for bit, and memory sharing must actually share. Inputs are
 * random images in the nets' value range at small sizes, fp32 and (where the device has 16-bit
 * storage) fp16 storage. Plans recorded in lockstep must match plans recorded alone. */
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
#include "model/model.h"
#include "nn/cpu/cpu_exec.h"
#include "nn/gpu/net.h"
#include "support/gpu_group.h"
#include "support/test_env.h"
#include "support/test_parts.h"

static bool fp16_math; /* fp16 cases compute element-wise in fp16 too (the *_f16a shaders) */
static void load_model(const char *file, struct pvk_model *m)
{
    char path[1024], err[512];
    snprintf(path, sizeof path, "%s/%s", test_models_dir(), file);
    if (pvk_model_load(path, m, err, sizeof err))
        fail_msg("%s: %s (run tools/fetch-models.sh)", path, err);
}

/* What the CPU run saw, kept for the comparison after the GPU run. */
struct cpu_layers {
    const struct pvk_model *model;
    float **out; /* per tensor id: the CPU value, or NULL */
};

static int keep_layer(void *user, int op_index, const struct pvk_op *op, int slot, const struct pvk_shape *shape,
                      enum pvk_dtype dtype, const void *data)
{
    (void)op_index;
    struct cpu_layers *cl = user;
    int32_t id = op->outputs[slot];
    if (id < 0 || dtype != PVK_DTYPE_F32)
        return 0;
    size_t n = (size_t)pvk_shape_numel(shape);
    cl->out[id] = malloc(n * sizeof(float));
    if (!cl->out[id])
        return 1;
    memcpy(cl->out[id], data, n * sizeof(float));
    return 0;
}

/* fp32: the per-op bound. fp16: every layer here sees the GPU's own fp16 inputs, so rounding
 * compounds over some 80 layers; each op alone meets 1e-2 in its own test. */
static double tolerance(enum nn_dtype dt)
{
    return dt == NN_F16 ? 3e-2 : 1e-4;
}

static void run_net(const char *file, const int64_t in_shape[4], enum nn_dtype dt)
{
    struct pvk_model m;
    load_model(file, &m);
    size_t n_in = (size_t)(in_shape[0] * in_shape[1] * in_shape[2] * in_shape[3]);
    float *input = malloc(n_in * sizeof(float));
    assert_non_null(input);
    /* Inputs in the range the preprocessing gives each net: det normalises with ImageNet's mean
     * and deviation (about -2.1 to 2.6), cls and rec map pixels to [-1, 1]. Driving rec with
     * [-2, 2] as det overloaded its fp16 arithmetic: about one random seed in twelve failed. */
    const float range = m.net_kind == PVK_NET_DET ? 2.0f : 1.0f;
    test_fill_uniform(input, n_in, -range, range);

    /* CPU reference, every layer kept. */
    struct cpu_layers cl = {&m, calloc(m.n_tensors, sizeof(float *))};
    assert_non_null(cl.out);
    struct pvk_cpu_result cpu;
    char err[512];
    if (pvk_cpu_run(&m, input, in_shape, keep_layer, &cl, &cpu, err, sizeof err))
        fail_msg("cpu run of %s: %s", file, err);

    struct nn_gpu_config cfg = {.ctx = test_gpu,
                                .act_dtype = dt,
                                .fp16_math = dt == NN_F16 && fp16_math && gpu_context_caps(test_gpu)->shader_fp16};
    struct nn_gpu_net *net;
    if (nn_gpu_net_create(&cfg, &m, &net, err, sizeof err))
        fail_msg("%s: %s", file, err);

    /* Every real net has passes to fuse (learnable affines in all three, SE gates before 1x1
     * convolutions in cls and rec): the comparison below covers the fused kernels. */
    int fused = 0;
    for (uint32_t i = 0; i < m.n_ops; i++)
        fused += !nn_gpu_net_result_stored(net, (int)i);
    fprintf(stderr, "%s: %d of %u ops fused with their neighbour\n", file, fused, m.n_ops);
    assert_true(fused > 0);

    /* Every intermediate kept: compare op by op and name the first wrong one. */
    struct nn_gpu_plan_options keep = {.keep_all = true};
    struct nn_gpu_plan *plan;
    if (nn_gpu_plan_create(net, in_shape, &keep, &plan, err, sizeof err))
        fail_msg("%s: %s", file, err);
    assert_int_equal(nn_gpu_tensor_write(test_gpu, nn_gpu_plan_input(plan), input, err, sizeof err), 0);
    struct gpu_cmd *cmd;
    assert_int_equal(gpu_cmd_create(test_gpu, 0, &cmd), 0);
    assert_int_equal(gpu_cmd_begin(cmd), 0);
    if (nn_gpu_plan_record(plan, cmd, err, sizeof err))
        fail_msg("%s: %s", file, err);
    gpu_cmd_barrier(cmd, GPU_STAGE_COMPUTE, GPU_STAGE_HOST);
    assert_int_equal(gpu_cmd_end(cmd), 0);
    if (gpu_cmd_run(cmd))
        fail_msg("%s: %s", file, gpu_last_error());

    for (uint32_t i = 0; i < m.n_ops; i++) {
        const struct pvk_op *op = &m.ops[i];
        int32_t id = op->outputs[0];
        /* An op fused into its producer's epilogue: the tensor holds the later op's result. */
        if (id < 0 || !cl.out[id] || !nn_gpu_net_result_stored(net, (int)i))
            continue;
        const struct nn_gpu_tensor *t = nn_gpu_plan_tensor(plan, id);
        assert_non_null(t);
        size_t n = (size_t)pvk_shape_numel(&t->shape);
        float *got = malloc(n * sizeof(float));
        assert_non_null(got);
        assert_int_equal(nn_gpu_tensor_read(test_gpu, t, got, err, sizeof err), 0);
        double e = test_rel_l2(got, cl.out[id], n), peak = 1.0;
        for (size_t k = 0; k < n; k++) { /* not fmax: GCC 12 fails on that reduction for aarch64 */
            const double v = fabs((double)cl.out[id][k]);
            peak = v > peak ? v : peak;
        }
        /* Relative error, or absolute error against the layer's scale: fp16 stores values below
         * 6e-5 (a det map far from any text) as subnormals, exact to 6e-8 only. */
        if (!(e <= tolerance(dt)) && !(test_max_abs(got, cl.out[id], n) <= tolerance(dt) * peak)) {
            char sh[64];
            fail_msg("%s %s: first differing layer is op %u (%s '%s', shape %s): rel-L2 %g, max abs %g", file,
                     dt == NN_F16 ? fp16_math ? "fp16 arithmetic" : "fp16" : "fp32", i, pvk_op_type_name(op->type),
                     op->name, pvk_shape_str(&t->shape, sh, sizeof sh), e, test_max_abs(got, cl.out[id], n));
        }
        free(got);
    }

    /* Shared memory: same output, bit for bit, and less memory than one buffer per tensor. */
    size_t n_out = (size_t)pvk_shape_numel(&nn_gpu_plan_output(plan)->shape);
    float *kept_out = malloc(n_out * sizeof(float)), *shared_out = malloc(n_out * sizeof(float));
    assert_non_null(kept_out);
    assert_non_null(shared_out);
    assert_int_equal(nn_gpu_tensor_read(test_gpu, nn_gpu_plan_output(plan), kept_out, err, sizeof err), 0);

    struct nn_gpu_plan *shared;
    if (nn_gpu_plan_create(net, in_shape, NULL, &shared, err, sizeof err))
        fail_msg("%s: %s", file, err);
    assert_true(nn_gpu_plan_arena_bytes(shared) < nn_gpu_plan_unshared_bytes(shared));
    fprintf(stderr, "%s %s: activations %.2f MiB shared, %.2f MiB unshared\n", file, dt == NN_F16 ? "fp16" : "fp32",
            nn_gpu_plan_arena_bytes(shared) / 1048576.0, nn_gpu_plan_unshared_bytes(shared) / 1048576.0);
    assert_int_equal(nn_gpu_tensor_write(test_gpu, nn_gpu_plan_input(shared), input, err, sizeof err), 0);
    assert_int_equal(gpu_cmd_begin(cmd), 0);
    if (nn_gpu_plan_record(shared, cmd, err, sizeof err))
        fail_msg("%s: %s", file, err);
    gpu_cmd_barrier(cmd, GPU_STAGE_COMPUTE, GPU_STAGE_HOST);
    assert_int_equal(gpu_cmd_end(cmd), 0);
    /* Twice: a recording is replayed, not rebuilt. The input's memory is reused once the net has
     * read it, so it is written again before the replay, as the engine does for every image. */
    assert_int_equal(gpu_cmd_run(cmd), 0);
    assert_int_equal(nn_gpu_tensor_write(test_gpu, nn_gpu_plan_input(shared), input, err, sizeof err), 0);
    assert_int_equal(gpu_cmd_run(cmd), 0);
    assert_int_equal(nn_gpu_tensor_read(test_gpu, nn_gpu_plan_output(shared), shared_out, err, sizeof err), 0);
    assert_memory_equal(kept_out, shared_out, n_out * sizeof(float));

    gpu_cmd_destroy(cmd);
    nn_gpu_plan_destroy(shared);
    nn_gpu_plan_destroy(plan);
    nn_gpu_net_destroy(net);
    for (uint32_t t = 0; t < m.n_tensors; t++)
        free(cl.out[t]);
    free(cl.out);
    free(kept_out);
    free(shared_out);
    free(input);
    pvk_cpu_result_free(&cpu);
    pvk_model_free(&m);
}

static bool has_fp16_storage(void)
{
    return gpu_context_caps(test_gpu)->storage_16bit;
}

static void test_det_fp32(void **state)
{
    (void)state;
    run_net("det.pvk", (const int64_t[4]){1, 3, 96, 128}, NN_F32);
}

static void test_det_fp16(void **state)
{
    (void)state;
    if (has_fp16_storage())
        run_net("det.pvk", (const int64_t[4]){1, 3, 64, 96}, NN_F16);
}

static void test_cls_fp32(void **state)
{
    (void)state;
    run_net("cls.pvk", (const int64_t[4]){3, 3, 48, 192}, NN_F32);
}

static void test_rec_fp32(void **state)
{
    (void)state;
    run_net("rec.pvk", (const int64_t[4]){2, 3, 48, 200}, NN_F32);
}

static void test_rec_fp16(void **state)
{
    (void)state;
    if (has_fp16_storage())
        run_net("rec.pvk", (const int64_t[4]){1, 3, 48, 96}, NN_F16);
}

static void test_rec_fp16_math(void **state)
{
    (void)state;
    fp16_math = true;
    if (has_fp16_storage())
        run_net("rec.pvk", (const int64_t[4]){1, 3, 48, 96}, NN_F16);
    fp16_math = false;
}

/* A model loaded into m and created on the GPU in fp32. */
static struct nn_gpu_net *net_fp32(const char *file, struct pvk_model *m)
{
    load_model(file, m);
    struct nn_gpu_config cfg = {.ctx = test_gpu, .act_dtype = NN_F32};
    struct nn_gpu_net *net;
    char err[512];
    if (nn_gpu_net_create(&cfg, m, &net, err, sizeof err))
        fail_msg("%s: %s", file, err);
    return net;
}

static struct nn_gpu_net *rec_net_fp32(struct pvk_model *m)
{
    return net_fp32("rec.pvk", m);
}

/* Runs plan p (its input written first) alone and reads its output. */
static void run_alone(struct gpu_cmd *cmd, struct nn_gpu_plan *p, const float *input, float *output)
{
    char err[512];
    assert_int_equal(nn_gpu_tensor_write(test_gpu, nn_gpu_plan_input(p), input, err, sizeof err), 0);
    assert_int_equal(gpu_cmd_begin(cmd), 0);
    if (nn_gpu_plan_record(p, cmd, err, sizeof err))
        fail_msg("%s", err);
    gpu_cmd_barrier(cmd, GPU_STAGE_COMPUTE, GPU_STAGE_HOST);
    assert_int_equal(gpu_cmd_end(cmd), 0);
    assert_int_equal(gpu_cmd_run(cmd), 0);
    assert_int_equal(nn_gpu_tensor_read(test_gpu, nn_gpu_plan_output(p), output, err, sizeof err), 0);
}

/* Plans recorded in lockstep into one command buffer give, bit for bit, what each gives recorded
 * alone; with synchronization validation on, a missing barrier between their ops fails too. As
 * the engine groups lines: cls (fewer ops) first, then rec at three widths and batch sizes. */
static void test_rec_group(void **state)
{
    (void)state;
    struct pvk_model m, cls_m;
    struct nn_gpu_net *net = rec_net_fp32(&m), *cls_net = net_fp32("cls.pvk", &cls_m);
    char err[512];
    enum { GROUP = 4 };
    const int64_t shapes[GROUP][4] = {{2, 3, 48, 192}, {2, 3, 48, 96}, {1, 3, 48, 128}, {3, 3, 48, 64}};
    struct nn_gpu_plan *plans[GROUP];
    float *inputs[GROUP], *alone[GROUP];
    size_t n_out[GROUP];
    struct gpu_cmd *cmd;
    assert_int_equal(gpu_cmd_create(test_gpu, 0, &cmd), 0);
    for (int p = 0; p < GROUP; p++) {
        if (nn_gpu_plan_create(p ? net : cls_net, shapes[p], NULL, &plans[p], err, sizeof err))
            fail_msg("%s", err);
        size_t n_in = (size_t)(shapes[p][0] * shapes[p][1] * shapes[p][2] * shapes[p][3]);
        inputs[p] = malloc(n_in * sizeof(float));
        assert_non_null(inputs[p]);
        test_fill_uniform(inputs[p], n_in, -2.0f, 2.0f);
        n_out[p] = (size_t)pvk_shape_numel(&nn_gpu_plan_output(plans[p])->shape);
        alone[p] = malloc(n_out[p] * sizeof(float));
        assert_non_null(alone[p]);
        run_alone(cmd, plans[p], inputs[p], alone[p]);
    }
    for (int p = 0; p < GROUP; p++)
        assert_int_equal(nn_gpu_tensor_write(test_gpu, nn_gpu_plan_input(plans[p]), inputs[p], err, sizeof err), 0);
    assert_int_equal(gpu_cmd_begin(cmd), 0);
    if (nn_gpu_plan_record_group(plans, GROUP, cmd, err, sizeof err))
        fail_msg("%s", err);
    gpu_cmd_barrier(cmd, GPU_STAGE_COMPUTE, GPU_STAGE_HOST);
    assert_int_equal(gpu_cmd_end(cmd), 0);
    assert_int_equal(gpu_cmd_run(cmd), 0);
    for (int p = 0; p < GROUP; p++) {
        float *together = malloc(n_out[p] * sizeof(float));
        assert_non_null(together);
        assert_int_equal(nn_gpu_tensor_read(test_gpu, nn_gpu_plan_output(plans[p]), together, err, sizeof err), 0);
        assert_memory_equal(together, alone[p], n_out[p] * sizeof(float));
        free(together);
        free(inputs[p]);
        free(alone[p]);
        nn_gpu_plan_destroy(plans[p]);
    }
    gpu_cmd_destroy(cmd);
    nn_gpu_net_destroy(net);
    nn_gpu_net_destroy(cls_net);
    pvk_model_free(&m);
    pvk_model_free(&cls_m);
}

/* Plans without memory of their own, bound one after another to the same bytes (as the engine
 * runs det, cls and rec) and side by side in one buffer for a lockstep group, give bit for bit
 * what plans with their own memory give; recording before a bind, a misaligned offset and too
 * little memory are refused. */
static void test_external_memory(void **state)
{
    (void)state;
    struct pvk_model m;
    struct nn_gpu_net *net = rec_net_fp32(&m);
    char err[512];
    const int64_t shapes[2][4] = {{2, 3, 48, 96}, {1, 3, 48, 160}};
    const struct nn_gpu_plan_options ext = {.external_memory = true};
    struct nn_gpu_plan *own[2], *shared[2];
    float *inputs[2], *want[2], *got[2];
    size_t n_out[2];
    struct gpu_cmd *cmd;
    assert_int_equal(gpu_cmd_create(test_gpu, 0, &cmd), 0);
    uint64_t need[2], align = 0;
    for (int p = 0; p < 2; p++) {
        if (nn_gpu_plan_create(net, shapes[p], NULL, &own[p], err, sizeof err) ||
            nn_gpu_plan_create(net, shapes[p], &ext, &shared[p], err, sizeof err))
            fail_msg("%s", err);
        size_t n_in = (size_t)(shapes[p][0] * shapes[p][1] * shapes[p][2] * shapes[p][3]);
        inputs[p] = malloc(n_in * sizeof(float));
        assert_non_null(inputs[p]);
        test_fill_uniform(inputs[p], n_in, -2.0f, 2.0f);
        n_out[p] = (size_t)pvk_shape_numel(&nn_gpu_plan_output(own[p])->shape);
        want[p] = malloc(n_out[p] * sizeof(float));
        got[p] = malloc(n_out[p] * sizeof(float));
        assert_true(want[p] && got[p]);
        run_alone(cmd, own[p], inputs[p], want[p]);
        need[p] = nn_gpu_plan_arena_bytes(shared[p]);
        assert_int_equal(need[p], nn_gpu_plan_arena_bytes(own[p]));
        align = nn_gpu_plan_align(shared[p]);
    }
    /* not bound yet */
    assert_int_equal(gpu_cmd_begin(cmd), 0);
    assert_int_not_equal(nn_gpu_plan_record(shared[0], cmd, err, sizeof err), 0);
    assert_int_equal(gpu_cmd_end(cmd), 0);

    const uint64_t second = (need[0] + align - 1) / align * align;
    struct gpu_buffer memory;
    assert_int_equal(gpu_buffer_alloc(test_gpu, GPU_MEMORY_DEVICE, second + need[1], &memory), 0);
    assert_int_not_equal(nn_gpu_plan_bind(shared[1], &memory, second + align, err, sizeof err), 0);
    assert_int_not_equal(nn_gpu_plan_bind(shared[1], &memory, align / 2, err, sizeof err), 0);
    assert_int_not_equal(nn_gpu_plan_bind(own[0], &memory, 0, err, sizeof err), 0);

    /* one after another in the same bytes: 0, 1, then 0 again over what 1 left there */
    for (int k = 0; k < 3; k++) {
        int p = k % 2;
        assert_int_equal(nn_gpu_plan_bind(shared[p], &memory, 0, err, sizeof err), 0);
        run_alone(cmd, shared[p], inputs[p], got[p]);
        assert_memory_equal(got[p], want[p], n_out[p] * sizeof(float));
    }
    /* side by side, recorded in lockstep */
    assert_int_equal(nn_gpu_plan_bind(shared[0], &memory, 0, err, sizeof err), 0);
    assert_int_equal(nn_gpu_plan_bind(shared[1], &memory, second, err, sizeof err), 0);
    for (int p = 0; p < 2; p++)
        assert_int_equal(nn_gpu_tensor_write(test_gpu, nn_gpu_plan_input(shared[p]), inputs[p], err, sizeof err), 0);
    assert_int_equal(gpu_cmd_begin(cmd), 0);
    if (nn_gpu_plan_record_group(shared, 2, cmd, err, sizeof err))
        fail_msg("%s", err);
    gpu_cmd_barrier(cmd, GPU_STAGE_COMPUTE, GPU_STAGE_HOST);
    assert_int_equal(gpu_cmd_end(cmd), 0);
    assert_int_equal(gpu_cmd_run(cmd), 0);
    for (int p = 0; p < 2; p++) {
        assert_int_equal(nn_gpu_tensor_read(test_gpu, nn_gpu_plan_output(shared[p]), got[p], err, sizeof err), 0);
        assert_memory_equal(got[p], want[p], n_out[p] * sizeof(float));
        free(inputs[p]), free(want[p]), free(got[p]);
        nn_gpu_plan_destroy(own[p]);
        nn_gpu_plan_destroy(shared[p]);
    }
    gpu_buffer_free(&memory);
    gpu_cmd_destroy(cmd);
    nn_gpu_net_destroy(net);
    pvk_model_free(&m);
    assert_int_equal(gpu_validation_message_count(), 0);
}

int main(int argc, char **argv)
{
    test_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_det_fp32),  cmocka_unit_test(test_det_fp16),        cmocka_unit_test(test_cls_fp32),
        cmocka_unit_test(test_rec_fp32),  cmocka_unit_test(test_rec_fp16),        cmocka_unit_test(test_rec_fp16_math),
        cmocka_unit_test(test_rec_group), cmocka_unit_test(test_external_memory),
    };
    /* ctest's entries test_gpu_net_1 (det, cls) and test_gpu_net_2 (rec, whose fp32 pipelines the
     * last three tests share) */
    static const unsigned char parts[] = {1, 1, 1, 2, 2, 2, 2, 2};
    return TEST_RUN_PARTS("gpu_net", tests, parts, argc, argv, test_gpu_group_setup, test_gpu_group_teardown);
}
