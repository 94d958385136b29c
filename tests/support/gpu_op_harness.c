#include "support/gpu_op_harness.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpu/context.h"
#include "gpu/error.h"
#include "gpu/transfer.h"
#include "nn/half.h"
#include "support/gpu_group.h"
#include "support/test_env.h"

bool harness_init(struct harness *h, enum nn_dtype dtype)
{
    memset(h, 0, sizeof *h);
    h->ctx = test_gpu;
    if (!h->ctx && gpu_context_create(NULL, &h->ctx) != GPU_OK)
        fail_msg("gpu_context_create: %s", gpu_last_error());
    const struct gpu_caps *caps = gpu_context_caps(h->ctx);
    if (dtype == NN_F16 && !caps->storage_16bit) {
        fprintf(stderr, "%s has no 16-bit storage: fp16 case skipped\n", caps->device_name);
        harness_done(h);
        return false;
    }
    h->cfg = (struct nn_gpu_config){
        .ctx = h->ctx, .act_dtype = dtype, .fp16_math = false, .force = nn_gpu_overrides_from_env()};
    return true;
}

bool harness_init_fp16_math(struct harness *h)
{
    if (!harness_init(h, NN_F16))
        return false;
    const struct gpu_caps *caps = gpu_context_caps(h->ctx);
    if (!caps->shader_fp16) {
        fprintf(stderr, "%s has no shaderFloat16: fp16 arithmetic case skipped\n", caps->device_name);
        harness_done(h);
        return false;
    }
    h->cfg.fp16_math = true;
    return true;
}

void harness_done(struct harness *h)
{
    if (h->ctx != test_gpu)
        gpu_context_destroy(h->ctx);
    h->ctx = NULL;
}

static size_t esize(enum nn_dtype d)
{
    return d == NN_F16 ? 2 : 4;
}

static size_t span_of(const struct pvk_shape *s, int64_t dst_channels)
{
    int64_t n = pvk_shape_numel(s);
    if (!dst_channels || s->ndim < 2)
        return (size_t)n;
    int64_t inner = 1;
    for (int i = 2; i < s->ndim; i++)
        inner *= s->d[i];
    return (size_t)(s->d[0] * dst_channels * inner);
}

void htensor_alloc(struct harness *h, struct htensor *t, const struct pvk_shape *shape, enum nn_dtype dtype,
                   uint32_t lead, int64_t dst_channels)
{
    memset(t, 0, sizeof *t);
    size_t count = lead + span_of(shape, dst_channels) + 3; /* a few poisoned elements after it too */
    size_t bytes = count * esize(dtype);
    if (gpu_buffer_alloc(h->ctx, GPU_MEMORY_DEVICE, bytes, &t->buf) != GPU_OK)
        fail_msg("gpu_buffer_alloc %zu: %s", bytes, gpu_last_error());
    void *poison = malloc(bytes);
    assert_non_null(poison);
    if (dtype == NN_F16) {
        for (size_t i = 0; i < count; i++)
            ((uint16_t *)poison)[i] = 0x7e00u;
    } else if (dtype == NN_I32) {
        for (size_t i = 0; i < count; i++)
            ((int32_t *)poison)[i] = 0x7fffffff;
    } else {
        for (size_t i = 0; i < count; i++)
            ((float *)poison)[i] = NAN;
    }
    if (gpu_upload(h->ctx, &t->buf, 0, poison, bytes) != GPU_OK)
        fail_msg("gpu_upload: %s", gpu_last_error());
    free(poison);
    t->t = (struct nn_gpu_tensor){
        .buf = &t->buf, .elem_offset = lead, .dtype = dtype, .shape = *shape, .dst_channels = dst_channels};
}

void htensor_free(struct htensor *t)
{
    gpu_buffer_free(&t->buf);
}

/* Element offsets of the dense index i inside a possibly channel-viewed tensor. */
static size_t place(const struct nn_gpu_tensor *t, size_t i)
{
    if (!t->dst_channels)
        return t->elem_offset + i;
    size_t block = (size_t)(pvk_shape_numel(&t->shape) / t->shape.d[0]);
    size_t stride = block / (size_t)t->shape.d[1] * (size_t)t->dst_channels;
    return t->elem_offset + i / block * stride + i % block;
}

void htensor_write(struct harness *h, const struct htensor *t, const float *src)
{
    size_t n = (size_t)pvk_shape_numel(&t->t.shape), es = esize(t->t.dtype);
    size_t bytes = t->buf.size;
    unsigned char *all = malloc(bytes);
    assert_non_null(all);
    if (gpu_download(h->ctx, &t->buf, 0, all, bytes) != GPU_OK)
        fail_msg("gpu_download: %s", gpu_last_error());
    for (size_t i = 0; i < n; i++) {
        size_t at = place(&t->t, i) * es;
        if (t->t.dtype == NN_F16) {
            uint16_t v = nn_float_to_half(src[i]);
            memcpy(all + at, &v, 2);
        } else if (t->t.dtype == NN_I32) {
            int32_t v = (int32_t)src[i];
            memcpy(all + at, &v, 4);
        } else {
            memcpy(all + at, &src[i], 4);
        }
    }
    if (gpu_upload(h->ctx, &t->buf, 0, all, bytes) != GPU_OK)
        fail_msg("gpu_upload: %s", gpu_last_error());
    free(all);
}

static unsigned char *download_all(struct harness *h, const struct htensor *t)
{
    unsigned char *all = malloc(t->buf.size);
    assert_non_null(all);
    if (gpu_download(h->ctx, &t->buf, 0, all, t->buf.size) != GPU_OK)
        fail_msg("gpu_download: %s", gpu_last_error());
    return all;
}

static float element(const struct htensor *t, const unsigned char *all, size_t at)
{
    if (t->t.dtype == NN_F16) {
        uint16_t v;
        memcpy(&v, all + at * 2, 2);
        return nn_half_to_float(v);
    }
    if (t->t.dtype == NN_I32) {
        int32_t v;
        memcpy(&v, all + at * 4, 4);
        return (float)v;
    }
    float v;
    memcpy(&v, all + at * 4, 4);
    return v;
}

void htensor_read(struct harness *h, const struct htensor *t, float *dst)
{
    unsigned char *all = download_all(h, t);
    size_t n = (size_t)pvk_shape_numel(&t->t.shape);
    for (size_t i = 0; i < n; i++)
        dst[i] = element(t, all, place(&t->t, i));
    free(all);
}

void htensor_read_i32(struct harness *h, const struct htensor *t, int32_t *dst)
{
    unsigned char *all = download_all(h, t);
    size_t n = (size_t)pvk_shape_numel(&t->t.shape);
    for (size_t i = 0; i < n; i++)
        memcpy(&dst[i], all + (t->t.elem_offset + i) * 4, 4);
    free(all);
}

void htensor_read_raw(struct harness *h, const struct htensor *t, uint32_t start, size_t count, float *dst)
{
    unsigned char *all = download_all(h, t);
    for (size_t i = 0; i < count; i++)
        dst[i] = element(t, all, start + i);
    free(all);
}

void harness_round(enum nn_dtype dtype, float *x, size_t n)
{
    if (dtype != NN_F16)
        return;
    for (size_t i = 0; i < n; i++)
        x[i] = nn_half_to_float(nn_float_to_half(x[i]));
}

void harness_run_op(struct harness *h, const struct nn_gpu_op_impl *impl, const struct pvk_op *op,
                    const struct nn_gpu_weights *w, const struct htensor *in, int n_in, const struct htensor *out,
                    int n_out, double *us)
{
    char err[256] = "";
    void *state = NULL;
    struct nn_gpu_tensor ti[PVK_MAX_INPUTS], to[3];
    for (int i = 0; i < n_in; i++)
        ti[i] = in[i].t;
    if (n_in > PVK_MAX_INPUTS || n_out > 3)
        fail_msg("%s: at most %d inputs and 3 outputs", op->name, PVK_MAX_INPUTS);
    for (int i = 0; i < n_out; i++)
        to[i] = out[i].t;
    if (impl->create(&h->cfg, op, w, &state, err, sizeof err))
        fail_msg("create %s: %s", op->name, err);
    struct gpu_cmd *cmd;
    if (gpu_cmd_create(h->ctx, 16, &cmd) != GPU_OK || gpu_cmd_begin(cmd) != GPU_OK)
        fail_msg("gpu_cmd: %s", gpu_last_error());
    gpu_cmd_barrier(cmd, GPU_STAGE_HOST, GPU_STAGE_COMPUTE);
    if (impl->record(state, op, cmd, ti, n_in, to, n_out, err, sizeof err))
        fail_msg("record %s: %s", op->name, err);
    gpu_cmd_barrier(cmd, GPU_STAGE_COMPUTE, GPU_STAGE_HOST);
    /* run twice: a recording must replay, and the second run's timings leave first-run costs out */
    if (gpu_cmd_end(cmd) != GPU_OK || gpu_cmd_run(cmd) != GPU_OK || gpu_cmd_run(cmd) != GPU_OK)
        fail_msg("run %s: %s", op->name, gpu_last_error());
    if (us && !gpu_context_caps(h->ctx)->is_cpu) {
        /* GPUs: replay for 0.3 s first so that clocks have ramped up before the timed run */
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        do {
            if (gpu_cmd_run(cmd) != GPU_OK)
                fail_msg("run %s: %s", op->name, gpu_last_error());
            clock_gettime(CLOCK_MONOTONIC, &t1);
        } while ((t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9 < 0.3);
    }
    if (us) {
        const struct gpu_timing *tm;
        unsigned nt;
        gpu_cmd_timings(cmd, &tm, &nt);
        *us = 0;
        for (unsigned i = 0; i < nt; i++)
            *us += tm[i].us;
    }
    gpu_cmd_destroy(cmd);
    impl->destroy(state);
}

double harness_tolerance(enum nn_dtype dtype)
{
    return dtype == NN_F16 ? 1e-2 : 1e-4;
}

struct pvk_shape shape_of(int ndim, const int64_t *d)
{
    struct pvk_shape s = {.ndim = ndim};
    for (int i = 0; i < ndim; i++)
        s.d[i] = d[i];
    return s;
}

void harness_check(const float *got, const float *want, size_t n, enum nn_dtype dt, const char *what)
{
    double e = test_rel_l2(got, want, n);
    if (!(e <= harness_tolerance(dt))) {
        for (size_t i = 0, shown = 0; i < n && shown < 6; i++)
            if (!(fabsf(got[i] - want[i]) <= 1e-2f * (1 + fabsf(want[i]))))
                fprintf(stderr, "  [%zu] got %g want %g\n", i, (double)got[i], (double)want[i]), shown++;
        fail_msg("%s (%s): rel-L2 %g, max abs %g", what, dt == NN_F16 ? "fp16" : "fp32", e, test_max_abs(got, want, n));
    }
}

float *harness_rand_vec(size_t n, float lo, float hi, enum nn_dtype dt)
{
    float *x = malloc(n * sizeof *x);
    assert_non_null(x);
    test_fill_uniform(x, n, lo, hi);
    harness_round(dt, x, n);
    return x;
}

struct pvk_op harness_op(enum pvk_op_type type, enum pvk_act act, float alpha, float beta, const char *name)
{
    struct pvk_op op;
    memset(&op, 0, sizeof op);
    op.type = type;
    op.act = act;
    op.act_alpha = alpha;
    op.act_beta = beta;
    snprintf(op.name, sizeof op.name, "%s", name);
    return op;
}
