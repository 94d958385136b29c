/* The GPU nets against onnxruntime on real preprocessed inputs (tests/data/parity): det's
 * probability map within 1e-3 (fp32), cls labels identical and rec argmax sequences identical in
 * fp32 and fp16 storage (and with --fp16-math's fp16 arithmetic), on the GPU path as the engine runs it (planner with liveness sharing,
 * argmax on the GPU for rec). Each check prints its figures: together they are the parity table.
 * det in fp16 storage is held only to a loose 0.05: fp16 storage anywhere in the net moves the
 * map's worst pixel by about 0.02 (rounding the input alone by 0.012), so the engine runs det in
 * fp32 on every device (src/ocr/precision.h) and its tolerance is the fp32 one; the fp16 run is
 * there for work on a GPU's det precision and is skipped on CPU drivers, where it would only
 * compile every det kernel a second time for a path the engine never takes (each fp16 kernel has
 * its own op test). */
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
#include "model/model.h"
#include "nn/gpu/net.h"
#include "support/gpu_group.h"
#include "support/pvkt.h"
#include "support/test_env.h"

/* Runs models/<net>.pvk on the fixture input; with `argmax`, the rec way: the plan leaves the
 * final softmax out and an ARGMAX op after it writes int32 indices and the maximum's softmax
 * probability. out receives the net output (or those probabilities), index the argmax indices. */

static bool fp16_math; /* fp16 cases compute element-wise in fp16 too (the *_f16a shaders) */
static void run(const char *net, const char *input, enum nn_dtype dt, int argmax, float **out, size_t *n_out,
                int32_t **index)
{
    char path[1024], err[512];
    snprintf(path, sizeof path, "%s/%s.pvk", test_models_dir(), net);
    struct pvk_model m;
    if (pvk_model_load(path, &m, err, sizeof err))
        fail_msg("%s: %s (run tools/fetch-models.sh)", path, err);
    struct pvkt_tensor in;
    pvkt_read(input, &in);
    assert_int_equal(in.shape.ndim, 4);

    struct nn_gpu_config cfg = {.ctx = test_gpu,
                                .act_dtype = dt,
                                .fp16_math = dt == NN_F16 && fp16_math && gpu_context_caps(test_gpu)->shader_fp16};
    struct nn_gpu_net *g;
    struct nn_gpu_plan *plan;
    const struct nn_gpu_plan_options opt = {.leave_final_softmax = argmax};
    if (nn_gpu_net_create(&cfg, &m, &g, err, sizeof err) ||
        nn_gpu_plan_create(g, in.shape.d, &opt, &plan, err, sizeof err))
        fail_msg("%s: %s", net, err);
    if (argmax)
        assert_true(nn_gpu_plan_left_softmax(plan));
    assert_int_equal(nn_gpu_tensor_write(test_gpu, nn_gpu_plan_input(plan), in.data, err, sizeof err), 0);
    struct gpu_cmd *cmd;
    assert_int_equal(gpu_cmd_create(test_gpu, 0, &cmd), 0);
    assert_int_equal(gpu_cmd_begin(cmd), 0);
    if (nn_gpu_plan_record(plan, cmd, err, sizeof err))
        fail_msg("%s: %s", net, err);

    const struct nn_gpu_tensor *o = nn_gpu_plan_output(plan);
    struct nn_gpu_op *am = NULL;
    struct gpu_buffer ib = {0}, vb = {0};
    struct nn_gpu_tensor am_out[2];
    size_t rows = 0;
    if (argmax) {
        struct pvk_op op;
        memset(&op, 0, sizeof op);
        op.type = PVK_OP_ARGMAX;
        op.n_inputs = 1;
        op.n_outputs = 2;
        op.attr.argmax.value = PVK_ARGMAX_VALUE_SOFTMAX;
        struct nn_gpu_weights none;
        memset(&none, 0, sizeof none);
        assert_int_equal(nn_gpu_op_create(&cfg, &op, &none, &am, err, sizeof err), 0);
        struct pvk_shape lead = o->shape;
        lead.ndim--;
        rows = (size_t)pvk_shape_numel(&lead);
        assert_int_equal(gpu_buffer_alloc(test_gpu, GPU_MEMORY_HOST, rows * 4, &ib), 0);
        assert_int_equal(gpu_buffer_alloc(test_gpu, GPU_MEMORY_HOST, rows * 4, &vb), 0);
        am_out[0] = (struct nn_gpu_tensor){&ib, 0, NN_I32, lead, 0};
        am_out[1] = (struct nn_gpu_tensor){&vb, 0, dt, lead, 0};
        gpu_cmd_barrier(cmd, GPU_STAGE_COMPUTE, GPU_STAGE_COMPUTE);
        if (nn_gpu_op_record(am, cmd, o, 1, am_out, 2, err, sizeof err))
            fail_msg("argmax: %s", err);
    }
    gpu_cmd_barrier(cmd, GPU_STAGE_COMPUTE, GPU_STAGE_HOST);
    assert_int_equal(gpu_cmd_end(cmd), 0);
    if (gpu_cmd_run(cmd))
        fail_msg("%s: %s", net, gpu_last_error());

    if (argmax) {
        *n_out = rows;
        *out = malloc(rows * sizeof(float));
        *index = malloc(rows * sizeof(int32_t));
        assert_non_null(*out);
        assert_non_null(*index);
        assert_int_equal(nn_gpu_tensor_read(test_gpu, &am_out[1], *out, err, sizeof err), 0);
        assert_int_equal(gpu_download(test_gpu, &ib, 0, *index, rows * 4), 0);
    } else {
        *n_out = (size_t)pvk_shape_numel(&o->shape);
        *out = malloc(*n_out * sizeof(float));
        assert_non_null(*out);
        assert_int_equal(nn_gpu_tensor_read(test_gpu, o, *out, err, sizeof err), 0);
    }
    gpu_buffer_free(&ib);
    gpu_buffer_free(&vb);
    nn_gpu_op_destroy(am);
    gpu_cmd_destroy(cmd);
    nn_gpu_plan_destroy(plan);
    nn_gpu_net_destroy(g);
    pvk_model_free(&m);
    free(in.data);
}

static const char *dt_name(enum nn_dtype dt)
{
    return dt == NN_F16 ? fp16_math ? "fp16 arithmetic" : "fp16" : "fp32";
}

static int dtype_available(enum nn_dtype dt)
{
    return dt == NN_F32 || gpu_context_caps(test_gpu)->storage_16bit;
}

static void det_parity(enum nn_dtype dt)
{
    if (!dtype_available(dt))
        return;
    float *got;
    size_t n;
    run("det", "det_input.pvkt", dt, 0, &got, &n, NULL);
    struct pvkt_tensor want;
    pvkt_read("det_prob.pvkt", &want);
    assert_int_equal(n, (size_t)pvk_shape_numel(&want.shape));
    double err = test_max_abs(got, want.data, n), tol = dt == NN_F32 ? 1e-3 : 0.05;
    print_message("parity det %s: probability map max abs error %.3g (tolerance %g)\n", dt_name(dt), err, tol);
    free(got);
    free(want.data);
    assert_true(err <= tol);
}

static void cls_parity(enum nn_dtype dt)
{
    if (!dtype_available(dt))
        return;
    float *got;
    size_t n;
    run("cls", "cls_input.pvkt", dt, 0, &got, &n, NULL);
    struct pvkt_tensor want;
    pvkt_read("cls_prob.pvkt", &want);
    assert_int_equal(n, (size_t)pvk_shape_numel(&want.shape));
    const float *w = want.data;
    int differ = 0;
    for (size_t i = 0; i + 1 < n; i += 2)
        differ += (got[i + 1] > got[i]) != (w[i + 1] > w[i]);
    print_message("parity cls %s: %zu crops, %d labels differ, probability max abs error %.3g\n", dt_name(dt), n / 2,
                  differ, test_max_abs(got, w, n));
    free(got);
    free(want.data);
    assert_int_equal(differ, 0);
}

static void rec_parity(const char *batch, enum nn_dtype dt)
{
    if (!dtype_available(dt))
        return;
    char name[64];
    float *max;
    int32_t *index;
    size_t rows;
    snprintf(name, sizeof name, "%s_input.pvkt", batch);
    run("rec", name, dt, 1, &max, &rows, &index);
    struct pvkt_tensor want_idx, want_max;
    snprintf(name, sizeof name, "%s_index.pvkt", batch);
    pvkt_read(name, &want_idx);
    snprintf(name, sizeof name, "%s_max.pvkt", batch);
    pvkt_read(name, &want_max);
    assert_int_equal(rows, (size_t)pvk_shape_numel(&want_idx.shape));
    const int32_t *wi = want_idx.data;
    size_t differ = 0;
    for (size_t i = 0; i < rows; i++)
        differ += index[i] != wi[i];
    print_message("parity rec %s %s: %zu steps, %zu argmax differ, max prob max abs error %.3g\n", batch, dt_name(dt),
                  rows, differ, test_max_abs(max, want_max.data, rows));
    free(max);
    free(index);
    free(want_idx.data);
    free(want_max.data);
    assert_int_equal(differ, 0);
}

static void test_cls_fp16_math(void **state)
{
    (void)state;
    fp16_math = true;
    cls_parity(NN_F16);
    fp16_math = false;
}
static void test_rec_fp16_math(void **state)
{
    (void)state;
    fp16_math = true;
    rec_parity("rec_a", NN_F16);
    rec_parity("rec_b", NN_F16);
    fp16_math = false;
}

static void test_det_fp32(void **state)
{
    (void)state;
    det_parity(NN_F32);
}
static void test_det_fp16(void **state)
{
    (void)state;
    if (gpu_context_caps(test_gpu)->is_cpu) {
        print_message("parity det fp16: skipped on a CPU driver (the engine runs det in fp32)\n");
        skip();
    }
    det_parity(NN_F16);
}
static void test_cls_fp32(void **state)
{
    (void)state;
    cls_parity(NN_F32);
}
static void test_cls_fp16(void **state)
{
    (void)state;
    cls_parity(NN_F16);
}
static void test_rec_fp32(void **state)
{
    (void)state;
    rec_parity("rec_a", NN_F32);
    rec_parity("rec_b", NN_F32);
}
static void test_rec_fp16(void **state)
{
    (void)state;
    rec_parity("rec_a", NN_F16);
    rec_parity("rec_b", NN_F16);
}

int main(void)
{
    test_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_det_fp32),      cmocka_unit_test(test_det_fp16),      cmocka_unit_test(test_cls_fp32),
        cmocka_unit_test(test_cls_fp16),      cmocka_unit_test(test_rec_fp32),      cmocka_unit_test(test_rec_fp16),
        cmocka_unit_test(test_cls_fp16_math), cmocka_unit_test(test_rec_fp16_math),
    };
    const char *filter = getenv("PPOCR_TEST_FILTER"); /* e.g. test_det_fp32 */
    if (filter && *filter)
        cmocka_set_test_filter(filter);
    return cmocka_run_group_tests(tests, test_gpu_group_setup, test_gpu_group_teardown);
}
