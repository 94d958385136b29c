/* The net session and device (nn/session.h, nn/device.h) on the CPU backend, with the real det,
 * cls and rec nets (models/, or PPOCR_MODELS; skipped with a message when they are absent, or
 * where the build has no CPU executor): the plan cache (hits, pinning, least recently used
 * evicted, all pinned refused), a run of det and two rec batches whose read and argmax outputs
 * equal the executor's own (nn/cpu/cpu_net.h), the same small run against the Vulkan session
 * where a Vulkan device opens, callbacks' failures passed on, and bad shapes and runs refused
 * with one-line reasons. The nets run on one thread. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "nn/cpu/cpu_net.h"
#include "nn/cpu/session_cpu.h"
#include "nn/device.h"
#include "nn/gpu/net.h"
#include "nn/gpu/session_gpu.h"
#include "nn/session.h"
#include "support/test_env.h"
#include "support/test_model.h"

#define VULKAN_TOL 1e-3 /* rel-L2 of det's map, fp32 on both sides */

static const char *const net_files[NN_NET_COUNT] = {"det", "cls", "rec"};

static bool one_line(const char *s)
{
    return s[0] && !strchr(s, '\n');
}

static bool load_model(enum nn_net_id net, struct pvk_model *m)
{
    return test_load_cpu_model(net_files[net], m);
}

static struct nn_device *open_cpu(int threads)
{
    const struct nn_device_options opt = {.backend = NN_BACKEND_CPU, .threads = threads};
    struct nn_device *dev;
    char err[512];
    if (nn_device_open(&opt, &dev, err, sizeof err)) {
        print_error("%s\n", err);
        fail();
    }
    return dev;
}

/* A session of the nets in `want` (NULL where not wanted), with the final softmax left out of rec. */
static struct nn_session *open_session(struct nn_device *dev, struct pvk_model *models[NN_NET_COUNT])
{
    struct nn_session_options opt = {.leave_final_softmax = {[NN_NET_REC] = true}};
    for (int n = 0; n < NN_NET_COUNT; n++) {
        opt.models[n] = models[n];
        opt.names[n] = net_files[n];
    }
    struct nn_session *s;
    char err[512];
    if (nn_session_create(dev, &opt, &s, err, sizeof err)) {
        print_error("%s\n", err);
        fail();
    }
    return s;
}

static struct nn_plan *plan_of(struct nn_session *s, enum nn_net_id net, int64_t n, int64_t h, int64_t w)
{
    const int64_t shape[4] = {n, 3, h, w};
    char err[512];
    struct nn_plan *p = nn_session_plan(s, net, shape, err, sizeof err);
    if (!p) {
        print_error("%s\n", err);
        fail();
    }
    return p;
}

/* ---- the callbacks ---------------------------------------------------------------------------- */

struct feed {
    const float *inputs[NN_RUN_MAX_PLANS];
    struct gpu_context *gpu; /* NULL: the CPU backend */
    bool fail_inputs, fail_outputs;
    int inputs_calls, outputs_calls;
    bool outputs_seen;              /* in record_outputs, each plan's output was there but an argmax plan's */
    const enum nn_output_use *uses; /* the run's */
};

static int record_inputs(void *ctx, struct nn_recorder *rec, struct nn_plan *const *plans, int n, char *err,
                         size_t err_len)
{
    (void)rec;
    struct feed *f = ctx;
    f->inputs_calls++;
    if (f->fail_inputs) {
        snprintf(err, err_len, "inputs refused on purpose");
        return -1;
    }
    for (int k = 0; k < n; k++) {
        const size_t numel = (size_t)pvk_shape_numel(nn_plan_input_shape(plans[k]));
        if (f->gpu) {
            if (nn_gpu_tensor_write(f->gpu, nn_gpu_plan_input_tensor(plans[k]), f->inputs[k], err, err_len))
                return -1;
            continue;
        }
        float *dst = nn_cpu_plan_input_data(plans[k]);
        if (!dst || nn_cpu_plan_output_data(plans[k])) {
            snprintf(err, err_len, "plan %d: no input, or an output before the nets ran", k);
            return -1;
        }
        memcpy(dst, f->inputs[k], numel * sizeof(float));
    }
    return 0;
}

static int record_outputs(void *ctx, struct nn_recorder *rec, struct nn_plan *const *plans, int n, char *err,
                          size_t err_len)
{
    (void)rec;
    struct feed *f = ctx;
    f->outputs_calls++;
    if (f->fail_outputs) {
        snprintf(err, err_len, "outputs refused on purpose");
        return -1;
    }
    f->outputs_seen = true;
    for (int k = 0; k < n && !f->gpu; k++) /* an argmax plan's workspace was the next one's */
        f->outputs_seen &= (nn_cpu_plan_output_data(plans[k]) != NULL) == !(f->uses && f->uses[k] == NN_OUTPUT_ARGMAX);
    return 0;
}

/* A CPU plan's bytes before its own workspace: its fp32 input, aligned as the session places it. */
static uint64_t input_bytes(const struct nn_plan *plan)
{
    const uint64_t bytes = (uint64_t)pvk_shape_numel(nn_plan_input_shape(plan)) * sizeof(float);
    return (bytes + CPU_PLAN_WORKSPACE_ALIGN - 1) / CPU_PLAN_WORKSPACE_ALIGN * CPU_PLAN_WORKSPACE_ALIGN;
}

static float *random_input(const struct nn_plan *plan)
{
    const size_t n = (size_t)pvk_shape_numel(nn_plan_input_shape(plan));
    float *x = malloc(n * sizeof(float));
    assert_non_null(x);
    test_fill_uniform(x, n, -1.0f, 1.0f);
    return x;
}

/* ---- the executor's own answers ------------------------------------------------------------- */

struct own_result {
    float *output; /* fp32, numel of the output */
    int32_t *index;
    float *value; /* rows: numel / last dim */
};

/* On `threads` threads: the library's sums may be split otherwise on another count. */
static void own_run_threads(const struct pvk_model *m, bool leave_softmax, const struct pvk_shape *in, const float *x,
                            int threads, struct own_result *r)
{
    struct cpu_net *net;
    struct cpu_plan *plan;
    const struct cpu_net_options nopt = {threads};
    const struct cpu_plan_options popt = {.leave_final_softmax = leave_softmax};
    char err[512];
    assert_int_equal(cpu_net_create(m, &nopt, &net, err, sizeof err), 0);
    assert_int_equal(cpu_net_plan(net, in->d, &popt, &plan, err, sizeof err), 0);
    assert_int_equal(cpu_plan_run(plan, x, NULL, err, sizeof err), 0);
    const struct pvk_shape *o = cpu_plan_output_shape(plan);
    const size_t numel = (size_t)pvk_shape_numel(o), rows = numel / (size_t)o->d[o->ndim - 1];
    r->output = malloc(numel * sizeof(float));
    r->index = malloc(rows * sizeof(int32_t));
    r->value = malloc(rows * sizeof(float));
    assert_true(r->output && r->index && r->value);
    memcpy(r->output, cpu_plan_output(plan), numel * sizeof(float));
    assert_int_equal(cpu_plan_argmax(plan, r->index, r->value, err, sizeof err), 0);
    cpu_plan_destroy(plan);
    cpu_net_destroy(net);
}

static void own_run(const struct pvk_model *m, bool leave_softmax, const struct pvk_shape *in, const float *x,
                    struct own_result *r)
{
    own_run_threads(m, leave_softmax, in, x, 1, r);
}

static void own_free(struct own_result *r)
{
    free(r->output);
    free(r->index);
    free(r->value);
}

/* The last run's argmax of plan k (rec, its softmax left out) is the executor's own on `threads`
 * threads, index and probability alike. */
static void assert_argmax_is_own(const struct nn_session *s, int k, const struct pvk_model *rec,
                                 const struct nn_plan *plan, const float *input, int threads)
{
    const struct pvk_shape *o = nn_plan_output_shape(plan);
    const size_t rows = (size_t)o->d[0] * (size_t)o->d[1];
    const int32_t *index;
    const float *value;
    assert_int_equal(nn_session_argmax(s, k, &index, &value), 0);
    struct own_result own;
    own_run_threads(rec, true, nn_plan_input_shape(plan), input, threads, &own);
    assert_memory_equal(index, own.index, rows * sizeof(int32_t));
    assert_memory_equal(value, own.value, rows * sizeof(float));
    for (size_t r = 0; r < rows; r++)
        assert_true(value[r] > 0 && value[r] <= 1); /* a probability: the softmax was left out */
    own_free(&own);
}

/* ---- tests ---------------------------------------------------------------------------------- */

static void test_device(void **state)
{
    (void)state;
    char err[512];
    struct nn_device *dev;
    const struct nn_device_options one = {.backend = NN_BACKEND_CPU, .threads = 1};
    if (cpu_net_available(err, sizeof err)) {
        /* a build without oneDNN: the device is refused with the reason, and nothing else happens */
        char why[512];
        assert_int_equal(nn_device_open(&one, &dev, why, sizeof why), -1);
        assert_null(dev);
        assert_true(one_line(why) && strstr(why, err));
        assert_int_equal(nn_self_check(&one, stdout, why, sizeof why), -1);
        print_message("skipped: %s\n", err);
        skip();
    }
    dev = open_cpu(1);
    struct nn_device_info info;
    nn_device_info(dev, &info);
    assert_string_equal(info.description, "CPU (oneDNN, 1 thread), fp32");
    assert_int_equal(info.device_class, NN_DEVICE_CPU);
    assert_true(info.max_buffer_bytes > 0);
    assert_int_equal(nn_cpu_device_threads(dev), 1);
    struct nn_device_memory mem;
    nn_device_memory(dev, &mem);
    assert_true(mem.device_in_use == 0 && mem.device_peak == 0);
    nn_device_close(dev);

    const struct nn_device_options bad = {.backend = NN_BACKEND_CPU, .threads = -2};
    assert_int_equal(nn_device_open(&bad, &dev, err, sizeof err), -1);
    assert_null(dev);
    assert_true(one_line(err));
    const struct nn_device_options no_such = {.backend = (enum nn_backend_kind)7};
    assert_int_equal(nn_device_open(&no_such, &dev, err, sizeof err), -1);
    assert_true(one_line(err));

    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    assert_non_null(out);
    const struct nn_device_options two = {.backend = NN_BACKEND_CPU, .threads = 2};
    const int rc = nn_self_check(&two, out, err, sizeof err);
    fclose(out);
    if (rc)
        print_error("%s\n", err);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(text, "2 threads"));
    assert_non_null(strstr(text, "self-check: ok"));
    free(text);
}

static void test_plan_cache(void **state)
{
    (void)state;
    struct pvk_model m;
    if (!load_model(NN_NET_CLS, &m))
        skip();
    struct nn_device *dev = open_cpu(1);
    struct pvk_model *models[NN_NET_COUNT] = {[NN_NET_CLS] = &m};
    struct nn_session *s = open_session(dev, models);

    struct nn_plan *p = plan_of(s, NN_NET_CLS, 1, 48, 64);
    assert_ptr_equal(plan_of(s, NN_NET_CLS, 1, 48, 64), p); /* cached */
    const int64_t shape[4] = {1, 3, 48, 64};
    assert_true(nn_session_plan_bytes(s, NN_NET_CLS, shape) == nn_plan_bytes(p));
    assert_true(nn_plan_align(p) >= 1);
    nn_session_pin(s, p, true);
    struct nn_plan *q = plan_of(s, NN_NET_CLS, 1, 48, 64); /* a second of the pinned shape */
    assert_ptr_not_equal(q, p);
    struct nn_plan *pq[2] = {p, q};
    assert_true(nn_plans_bytes(pq, 2) >= 2 * nn_plan_bytes(p));
    nn_session_pin(s, p, false);

    /* 24 plans in all: p, q and 22 widths more, all used after q */
    struct nn_plan *all[24] = {p, q};
    for (int i = 2; i < 24; i++)
        all[i] = plan_of(s, NN_NET_CLS, 1, 48, 64 + 8 * i);
    assert_ptr_equal(plan_of(s, NN_NET_CLS, 1, 48, 64), p); /* p used again: q is the least recent */
    struct nn_plan *fresh = plan_of(s, NN_NET_CLS, 1, 48, 400);
    assert_ptr_equal(fresh, q); /* q's place, q given back */
    assert_int_equal(nn_plan_input_shape(fresh)->d[3], 400);
    assert_int_equal(nn_plan_output_shape(fresh)->d[0], 1);

    for (int i = 0; i < 24; i++)
        nn_session_pin(s, all[i], true);
    char err[512];
    const int64_t other[4] = {1, 3, 48, 480};
    assert_null(nn_session_plan(s, NN_NET_CLS, other, err, sizeof err));
    assert_string_equal(err, "cls: every cached plan is in use");
    nn_session_destroy(s);
    nn_device_close(dev);
    pvk_model_free(&m);
}

static void test_bad_shapes_and_runs(void **state)
{
    (void)state;
    struct pvk_model m;
    if (!load_model(NN_NET_REC, &m))
        skip();
    struct nn_device *dev = open_cpu(1);
    struct pvk_model *models[NN_NET_COUNT] = {[NN_NET_REC] = &m};
    struct nn_session *s = open_session(dev, models);
    char err[512];
    const int64_t shapes[][4] = {{1, 4, 48, 96}, {0, 3, 48, 96}, {1, 3, 48, -1}};
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
        err[0] = 0;
        assert_null(nn_session_plan(s, NN_NET_REC, shapes[i], err, sizeof err));
        print_message("refused: %s\n", err);
        assert_true(one_line(err));
        assert_true(strncmp(err, "rec: ", 5) == 0);
        assert_true(nn_session_plan_bytes(s, NN_NET_REC, shapes[i]) == UINT64_MAX);
    }
    assert_null(nn_session_plan(s, NN_NET_DET, shapes[0], err, sizeof err));
    assert_string_equal(err, "the session has no such net");

    struct nn_plan *p = plan_of(s, NN_NET_REC, 1, 48, 96);
    float *x = random_input(p), *y = random_input(p);
    struct feed f = {.inputs = {x, y}};
    struct nn_plan *two[2] = {p, p};
    struct nn_run run = {.plans = two, .n_plans = 2, .record_inputs = record_inputs, .ctx = &f};
    run.output[0] = run.output[1] = NN_OUTPUT_READ;
    assert_int_equal(nn_session_run(s, &run, err, sizeof err), -1); /* one plan twice */
    assert_true(one_line(err));
    nn_session_pin(s, p, true);
    two[1] = plan_of(s, NN_NET_REC, 1, 48, 96);
    nn_session_pin(s, p, false);
    /* two of its shape, each output read back: each its own input's */
    assert_int_equal(nn_session_run(s, &run, err, sizeof err), 0);
    for (int k = 0; k < 2; k++) {
        struct own_result own;
        own_run(&m, true, nn_plan_input_shape(two[k]), f.inputs[k], &own);
        float *copy = NULL;
        const float *out = nn_session_output(s, k, &copy, err, sizeof err);
        assert_non_null(out);
        assert_memory_equal(out, own.output, (size_t)pvk_shape_numel(nn_plan_output_shape(two[k])) * sizeof(float));
        free(copy);
        own_free(&own);
    }
    run.n_plans = 0;
    assert_int_equal(nn_session_run(s, &run, err, sizeof err), -1);
    assert_string_equal(err, "a run the session cannot make");

    /* the callbacks' failures come back as they said them, and the outputs are not readable */
    run.n_plans = 1;
    run.output[0] = NN_OUTPUT_ARGMAX;
    run.record_outputs = record_outputs;
    f.uses = run.output;
    f.fail_inputs = true;
    assert_int_equal(nn_session_run(s, &run, err, sizeof err), -1);
    assert_string_equal(err, "inputs refused on purpose");
    assert_int_equal(f.outputs_calls, 0);
    const int32_t *index;
    const float *value;
    assert_int_equal(nn_session_argmax(s, 0, &index, &value), -1);
    f.fail_inputs = false;
    f.fail_outputs = true;
    assert_int_equal(nn_session_run(s, &run, err, sizeof err), -1);
    assert_string_equal(err, "outputs refused on purpose");
    assert_int_equal(nn_session_argmax(s, 0, &index, &value), -1);
    /* and the session runs on */
    f.fail_outputs = false;
    assert_int_equal(nn_session_run(s, &run, err, sizeof err), 0);
    assert_true(f.outputs_seen);
    assert_int_equal(nn_session_argmax(s, 0, &index, &value), 0);
    float *owned;
    assert_null(nn_session_output(s, 0, &owned, err, sizeof err)); /* not NN_OUTPUT_READ */
    assert_string_equal(err, "that output of the run was not read back");
    free(x);
    free(y);
    nn_session_destroy(s);
    nn_device_close(dev);
    pvk_model_free(&m);
}

static void test_det_and_rec_run(void **state)
{
    (void)state;
    struct pvk_model det, rec;
    if (!load_model(NN_NET_DET, &det))
        skip();
    if (!load_model(NN_NET_REC, &rec)) {
        pvk_model_free(&det);
        skip();
    }
    struct nn_device *dev = open_cpu(1);
    struct pvk_model *models[NN_NET_COUNT] = {[NN_NET_DET] = &det, [NN_NET_REC] = &rec};
    struct nn_session *s = open_session(dev, models);
    struct nn_plan *plans[3] = {plan_of(s, NN_NET_DET, 1, 64, 96), plan_of(s, NN_NET_REC, 2, 48, 96),
                                plan_of(s, NN_NET_REC, 1, 48, 160)};
    struct feed f = {.inputs = {random_input(plans[0]), random_input(plans[1]), random_input(plans[2])}};
    struct nn_run run = {.plans = plans,
                         .n_plans = 3,
                         .output = {NN_OUTPUT_READ, NN_OUTPUT_ARGMAX, NN_OUTPUT_ARGMAX},
                         .record_inputs = record_inputs,
                         .record_outputs = record_outputs,
                         .ctx = &f};
    f.uses = run.output;
    char err[512];
    for (int round = 0; round < 2; round++) { /* the second in the workspace the first grew */
        if (nn_session_run(s, &run, err, sizeof err))
            print_error("%s\n", err);
        assert_int_equal(f.inputs_calls, round + 1);
        assert_int_equal(f.outputs_calls, round + 1);
        assert_true(f.outputs_seen);
    }
    assert_true(nn_session_gpu_ms(s) == 0); /* not profiled */
    /* the two rec plans took turns in one workspace: less than the three side by side, and at
     * least det's plan, the rec inputs and the larger rec workspace */
    const uint64_t ws1 = nn_plan_bytes(plans[1]) - input_bytes(plans[1]);
    const uint64_t ws2 = nn_plan_bytes(plans[2]) - input_bytes(plans[2]);
    assert_true(nn_session_memory_held(s) < nn_plans_bytes(plans, 3));
    assert_true(nn_session_memory_held(s) >=
                nn_plan_bytes(plans[0]) + input_bytes(plans[1]) + input_bytes(plans[2]) + (ws1 > ws2 ? ws1 : ws2));
    assert_true(nn_session_memory_held(s) <= nn_session_memory_limit(s));
    struct nn_device_memory mem;
    nn_device_memory(dev, &mem);
    assert_true(mem.device_in_use == nn_session_memory_held(s) && mem.device_peak >= mem.device_in_use);

    struct own_result own;
    own_run(&det, false, nn_plan_input_shape(plans[0]), f.inputs[0], &own);
    const size_t det_n = (size_t)pvk_shape_numel(nn_plan_output_shape(plans[0]));
    float *owned = NULL;
    const float *det_out = nn_session_output(s, 0, &owned, err, sizeof err);
    assert_non_null(det_out);
    assert_null(owned); /* in place: host memory */
    assert_memory_equal(det_out, own.output, det_n * sizeof(float));
    float *copy = malloc(det_n * sizeof(float));
    assert_non_null(copy);
    assert_int_equal(nn_session_read_output(s, 0, copy, err, sizeof err), 0);
    assert_memory_equal(copy, own.output, det_n * sizeof(float));
    free(copy);
    own_free(&own);
    for (int k = 1; k < 3; k++)
        assert_argmax_is_own(s, k, &rec, plans[k], f.inputs[k], 1);
    assert_int_equal(nn_session_argmax(s, 0, &(const int32_t *){NULL}, &(const float *){NULL}), -1);

    /* an argmax over det's map (rank 4) is refused */
    run.n_plans = 1;
    run.output[0] = NN_OUTPUT_ARGMAX;
    assert_int_equal(nn_session_run(s, &run, err, sizeof err), -1);
    assert_string_equal(err, "an argmax over an output of another precision or rank");
    for (int k = 0; k < 3; k++)
        free((float *)f.inputs[k]);
    nn_session_destroy(s);
    nn_device_memory(dev, &mem);
    assert_true(mem.device_in_use == 0);
    nn_device_close(dev);
    pvk_model_free(&det);
    pvk_model_free(&rec);
}

/* Plans made ahead on two threads, from nets whose weights are repacked by both at once, run as
 * the executor's own plans do; requests for what the session cannot make are passed over. */
static void test_plans_ahead(void **state)
{
    (void)state;
    struct pvk_model rec, cls;
    if (!load_model(NN_NET_REC, &rec))
        skip();
    if (!load_model(NN_NET_CLS, &cls)) {
        pvk_model_free(&rec);
        skip();
    }
    struct nn_device *dev = open_cpu(2);
    struct pvk_model *models[NN_NET_COUNT] = {[NN_NET_REC] = &rec, [NN_NET_CLS] = &cls};
    struct nn_session *s = open_session(dev, models);
    const struct nn_plan_request requests[] = {
        {NN_NET_CLS, {3, 3, 48, 192}}, {NN_NET_REC, {2, 3, 48, 96}}, {NN_NET_REC, {1, 3, 48, 160}},
        {NN_NET_REC, {2, 3, 48, 96}},  {NN_NET_REC, {0, 3, 48, 96}}, {NN_NET_DET, {1, 3, 64, 64}},
        {NN_NET_REC, {3, 3, 48, 128}},
    };
    nn_session_plan_ahead(s, requests, (int)(sizeof requests / sizeof *requests));
    nn_session_plan_ahead(s, requests, 0);
    struct nn_plan *plans[4] = {plan_of(s, NN_NET_CLS, 3, 48, 192), plan_of(s, NN_NET_REC, 2, 48, 96),
                                plan_of(s, NN_NET_REC, 1, 48, 160), plan_of(s, NN_NET_REC, 3, 48, 128)};
    struct feed f = {
        .inputs = {random_input(plans[0]), random_input(plans[1]), random_input(plans[2]), random_input(plans[3])}};
    struct nn_run run = {.plans = plans,
                         .n_plans = 4,
                         .output = {NN_OUTPUT_READ, NN_OUTPUT_ARGMAX, NN_OUTPUT_ARGMAX, NN_OUTPUT_ARGMAX},
                         .record_inputs = record_inputs,
                         .ctx = &f};
    char err[512];
    if (nn_session_run(s, &run, err, sizeof err))
        print_error("%s\n", err);
    struct own_result own;
    own_run_threads(&cls, false, nn_plan_input_shape(plans[0]), f.inputs[0], 2, &own);
    const size_t cls_n = (size_t)pvk_shape_numel(nn_plan_output_shape(plans[0]));
    float *owned = NULL;
    const float *cls_out = nn_session_output(s, 0, &owned, err, sizeof err);
    assert_non_null(cls_out);
    assert_memory_equal(cls_out, own.output, cls_n * sizeof(float));
    own_free(&own);
    for (int k = 1; k < 4; k++)
        assert_argmax_is_own(s, k, &rec, plans[k], f.inputs[k], 2);
    for (int k = 0; k < 4; k++)
        free((float *)f.inputs[k]);
    nn_session_destroy(s);
    nn_device_close(dev);
    pvk_model_free(&rec);
    pvk_model_free(&cls);
}

/* With profile, a run's wall time (nn_session_gpu_ms) is counted; the final softmax stays in cls. */
static void test_profiled_run(void **state)
{
    (void)state;
    struct pvk_model m;
    if (!load_model(NN_NET_CLS, &m))
        skip();
    struct nn_device *dev = open_cpu(1);
    const struct nn_session_options opt = {
        .models = {[NN_NET_CLS] = &m}, .names = {[NN_NET_CLS] = "cls"}, .profile = true};
    struct nn_session *s;
    char err[512];
    assert_int_equal(nn_session_create(dev, &opt, &s, err, sizeof err), 0);
    struct nn_plan *p = plan_of(s, NN_NET_CLS, 2, 48, 192);
    float *x = random_input(p);
    struct feed f = {.inputs = {x}};
    struct nn_run run = {
        .plans = &p, .n_plans = 1, .output = {NN_OUTPUT_READ}, .record_inputs = record_inputs, .ctx = &f};
    assert_int_equal(nn_session_run(s, &run, err, sizeof err), 0);
    assert_true(nn_session_gpu_ms(s) > 0);
    float out[4];
    assert_int_equal(nn_session_read_output(s, 0, out, err, sizeof err), 0);
    for (int r = 0; r < 2; r++) /* probabilities of the two classes */
        assert_true(fabsf(out[2 * r] + out[2 * r + 1] - 1.0f) < 1e-4f);
    free(x);
    nn_session_destroy(s);
    nn_device_close(dev);
    pvk_model_free(&m);
}

/* One run of det and one rec batch on a device of each backend. */
struct backend_run {
    float *det;     /* det's map */
    int32_t *index; /* rec's argmax */
    float *value;
    size_t det_n, rows;
};

static bool run_on(const struct nn_device_options *opt, struct pvk_model *models[NN_NET_COUNT], float *const inputs[2],
                   struct backend_run *out)
{
    struct nn_device *dev;
    char err[512];
    if (nn_device_open(opt, &dev, err, sizeof err)) {
        print_message("skipped: %s\n", err);
        return false;
    }
    struct nn_session *s = open_session(dev, models);
    struct nn_plan *plans[2] = {plan_of(s, NN_NET_DET, 1, 64, 64), plan_of(s, NN_NET_REC, 1, 48, 96)};
    struct feed f = {.inputs = {inputs[0], inputs[1]}, .gpu = nn_gpu_device_context(dev)};
    struct nn_run run = {.plans = plans,
                         .n_plans = 2,
                         .output = {NN_OUTPUT_READ, NN_OUTPUT_ARGMAX},
                         .record_inputs = record_inputs,
                         .ctx = &f};
    if (nn_session_run(s, &run, err, sizeof err))
        print_error("%s\n", err);
    out->det_n = (size_t)pvk_shape_numel(nn_plan_output_shape(plans[0]));
    const struct pvk_shape *o = nn_plan_output_shape(plans[1]);
    out->rows = (size_t)o->d[0] * (size_t)o->d[1];
    out->det = malloc(out->det_n * sizeof(float));
    out->index = malloc(out->rows * sizeof(int32_t));
    out->value = malloc(out->rows * sizeof(float));
    assert_true(out->det && out->index && out->value);
    assert_int_equal(nn_session_read_output(s, 0, out->det, err, sizeof err), 0);
    const int32_t *index;
    const float *value;
    assert_int_equal(nn_session_argmax(s, 1, &index, &value), 0);
    memcpy(out->index, index, out->rows * sizeof(int32_t));
    memcpy(out->value, value, out->rows * sizeof(float));
    nn_session_destroy(s);
    nn_device_close(dev);
    return true;
}

static void test_against_vulkan(void **state)
{
    (void)state;
    struct pvk_model det, rec;
    if (!load_model(NN_NET_DET, &det))
        skip();
    if (!load_model(NN_NET_REC, &rec)) {
        pvk_model_free(&det);
        skip();
    }
    struct pvk_model *models[NN_NET_COUNT] = {[NN_NET_DET] = &det, [NN_NET_REC] = &rec};
    float *inputs[2] = {malloc(64 * 64 * 3 * sizeof(float)), malloc(48 * 96 * 3 * sizeof(float))};
    assert_true(inputs[0] && inputs[1]);
    test_fill_uniform(inputs[0], 64 * 64 * 3, -1.0f, 1.0f);
    test_fill_uniform(inputs[1], 48 * 96 * 3, -1.0f, 1.0f);
    const struct nn_device_options cpu = {.backend = NN_BACKEND_CPU, .threads = 1};
    const struct nn_device_options vulkan = {.backend = NN_BACKEND_VULKAN, .index = -1, .force_fp32 = true};
    struct backend_run a, b;
    assert_true(run_on(&cpu, models, inputs, &a));
    if (run_on(&vulkan, models, inputs, &b)) {
        assert_int_equal(a.det_n, b.det_n);
        assert_int_equal(a.rows, b.rows);
        const double rel = test_rel_l2(a.det, b.det, a.det_n);
        print_message("det: rel-L2 %.3g between the backends\n", rel);
        assert_true(rel < VULKAN_TOL);
        for (size_t r = 0; r < a.rows; r++) {
            assert_true(fabsf(a.value[r] - b.value[r]) < 2e-3f);
            if (a.value[r] > 0.55f) /* a clear maximum: the same class */
                assert_int_equal(a.index[r], b.index[r]);
        }
        free(b.det);
        free(b.index);
        free(b.value);
    }
    free(a.det);
    free(a.index);
    free(a.value);
    free(inputs[0]);
    free(inputs[1]);
    pvk_model_free(&det);
    pvk_model_free(&rec);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_device),
        cmocka_unit_test(test_plan_cache),
        cmocka_unit_test(test_bad_shapes_and_runs),
        cmocka_unit_test(test_det_and_rec_run),
        cmocka_unit_test(test_plans_ahead),
        cmocka_unit_test(test_profiled_run),
        cmocka_unit_test(test_against_vulkan),
    };
    test_seed();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
