#include "gpu/selftest.h"
#include "gpu/cmd.h"
#include "gpu/context.h"
#include "gpu/error.h"
#include "gpu/pipeline.h"
#include "gpu/pool.h"
#include "gpu/transfer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Not a multiple of any workgroup size, so the bounds check in the shader is exercised. */
#define COUNT 4099u
#define LOCAL_SIZE 64u

struct saxpy_push {
    uint32_t n;
    float a;
};

int gpu_selftest(struct gpu_context *ctx)
{
    float *x = malloc(COUNT * sizeof *x), *y = malloc(COUNT * sizeof *y), *got = malloc(COUNT * sizeof *got);
    struct gpu_buffer bx = {0}, by = {0};
    struct gpu_cmd *cmd = NULL;
    int st = GPU_OK;
    if (!x || !y || !got) {
        st = gpu_fail(GPU_ERR_OUT_OF_MEMORY, "GPU self-check: out of host memory");
        goto done;
    }
    uint32_t state = (uint32_t)time(NULL) | 1u;
    for (unsigned i = 0; i < COUNT; i++) {
        state = state * 1664525u + 1013904223u;
        x[i] = (float)(state >> 8) / 16777216.0f * 2.0f - 1.0f;
        state = state * 1664525u + 1013904223u;
        y[i] = (float)(state >> 8) / 16777216.0f * 2.0f - 1.0f;
    }
    const struct saxpy_push push = {COUNT, 0.75f};

    const uint32_t spec[] = {LOCAL_SIZE};
    const struct gpu_pipeline *p;
    st = gpu_pipeline_get(ctx,
                          &(struct gpu_pipeline_desc){.shader = GPU_SHADER_selftest_saxpy,
                                                      .spec = spec,
                                                      .spec_count = 1,
                                                      .buffer_count = 2,
                                                      .push_bytes = sizeof push},
                          &p);
    if (!st)
        st = gpu_buffer_alloc(ctx, GPU_MEMORY_DEVICE, COUNT * sizeof(float), &bx);
    if (!st)
        st = gpu_buffer_alloc(ctx, GPU_MEMORY_DEVICE, COUNT * sizeof(float), &by);
    if (!st)
        st = gpu_upload(ctx, &bx, 0, x, COUNT * sizeof(float));
    if (!st)
        st = gpu_upload(ctx, &by, 0, y, COUNT * sizeof(float));
    if (!st)
        st = gpu_cmd_create(ctx, 0, &cmd);
    if (!st)
        st = gpu_cmd_begin(cmd);
    if (st)
        goto done;
    struct gpu_binding bindings[2] = {gpu_bind(&bx), gpu_bind(&by)};
    gpu_cmd_barrier(cmd, GPU_STAGE_HOST, GPU_STAGE_COMPUTE);
    gpu_cmd_dispatch(
        cmd, &(struct gpu_dispatch){
                 .pipeline = p, .buffers = bindings, .push = &push, .groups = {(COUNT + LOCAL_SIZE - 1) / LOCAL_SIZE}});
    gpu_cmd_barrier(cmd, GPU_STAGE_COMPUTE, GPU_STAGE_HOST);
    st = gpu_cmd_end(cmd);
    if (!st)
        st = gpu_cmd_run(cmd);
    if (!st)
        st = gpu_download(ctx, &by, 0, got, COUNT * sizeof(float));
    if (st)
        goto done;
    for (unsigned i = 0; i < COUNT; i++) {
        float want = push.a * x[i] + y[i];
        if (!(fabsf(got[i] - want) <= 1e-5f * (1.0f + fabsf(want)))) {
            st = gpu_fail(GPU_ERR, "GPU self-check: saxpy element %u is %g, expected %g on %s", i, (double)got[i],
                          (double)want, gpu_context_caps(ctx)->device_name);
            break;
        }
    }
done:
    gpu_cmd_destroy(cmd);
    gpu_buffer_free(&bx);
    gpu_buffer_free(&by);
    free(x);
    free(y);
    free(got);
    return st;
}
