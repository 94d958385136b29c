/* `ppocr-vk --bench-ops` on Vulkan: every op of the three nets at the shapes the pipeline uses
 * (nn/bench.h), timed on the GPU with timestamp queries; medians over several replays of one
 * recording, with the achieved GFLOP/s and GB/s. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/cmd.h"
#include "gpu/context.h"
#include "gpu/error.h"
#include "model/model.h"
#include "nn/backend.h"
#include "nn/bench.h"
#include "nn/gpu/net.h"
#include "nn/gpu/precision.h"

#define MAX_TIMED 1024

static int bench_one(struct gpu_context *ctx, const struct nn_gpu_config *cfg, const char *dir,
                     const struct nn_bench_net *bn, int runs, FILE *out, char *err, size_t err_len)
{
    char path[4096 + 64];
    snprintf(path, sizeof(path), "%s/%s", dir, bn->file);
    struct pvk_model m;
    if (pvk_model_load(path, &m, err, err_len))
        return -1;
    struct nn_gpu_net *net = NULL;
    struct nn_gpu_plan *plan = NULL;
    struct gpu_cmd *cmd = NULL, *whole = NULL;
    double *samples = NULL, *dispatch_samples = NULL, *totals = NULL, *wholes = NULL;
    float *input = NULL;
    int rc = -1;
    if (nn_gpu_net_create(cfg, &m, &net, err, err_len) || nn_gpu_plan_create(net, bn->shape, NULL, &plan, err, err_len))
        goto done;
    size_t n_in = (size_t)(bn->shape[0] * bn->shape[1] * bn->shape[2] * bn->shape[3]);
    input = malloc(n_in * sizeof(float));
    samples = calloc((size_t)m.n_ops * (size_t)runs + 1, sizeof(double));
    dispatch_samples = calloc((size_t)MAX_TIMED * (size_t)runs + 1, sizeof(double));
    totals = calloc((size_t)runs + 1, sizeof(double));
    wholes = calloc((size_t)runs + 1, sizeof(double));
    if (!input || !samples || !dispatch_samples || !totals || !wholes) {
        snprintf(err, err_len, "out of memory");
        goto done;
    }
    nn_bench_fill_input(input, n_in);
    /* the same recording twice: every op timed, and the net alone with a mark at its end */
    if (gpu_cmd_create(ctx, MAX_TIMED, &cmd) || gpu_cmd_create(ctx, 1, &whole)) {
        snprintf(err, err_len, "%s", gpu_last_error());
        goto done;
    }
    gpu_cmd_time_dispatches(whole, false);
    for (int k = 0; k < 2; k++) {
        struct gpu_cmd *c = k ? cmd : whole; /* cmd last: the op timings refer to it */
        if (gpu_cmd_begin(c)) {
            snprintf(err, err_len, "%s", gpu_last_error());
            goto done;
        }
        if (nn_gpu_plan_record(plan, c, err, err_len))
            goto done;
        if (c == whole)
            gpu_cmd_mark(c, "net");
        if (gpu_cmd_end(c)) {
            snprintf(err, err_len, "%s", gpu_last_error());
            goto done;
        }
    }
    for (int r = -1; r < runs; r++) { /* one warm-up */
        if (nn_gpu_tensor_write(ctx, nn_gpu_plan_input(plan), input, err, err_len))
            goto done;
        if (gpu_cmd_run(cmd) || gpu_cmd_run(whole)) {
            snprintf(err, err_len, "%s", gpu_last_error());
            goto done;
        }
        if (r < 0)
            continue;
        const struct gpu_timing *t;
        unsigned nt;
        gpu_cmd_timings(whole, &t, &nt);
        wholes[r] = nt ? t[0].us : 0;
        gpu_cmd_timings(cmd, &t, &nt);
        for (unsigned k = 0; k < nt && k < MAX_TIMED; k++)
            dispatch_samples[(size_t)k * runs + r] = t[k].us;
        for (uint32_t i = 0; i < m.n_ops; i++) {
            unsigned first, end;
            nn_gpu_plan_op_timings(plan, (int)i, &first, &end);
            double us = 0;
            for (unsigned k = first; k < end && k < nt; k++)
                us += t[k].us;
            samples[(size_t)i * runs + r] = us;
            totals[r] += us;
        }
    }

    char shape[64];
    const int64_t *s = bn->shape;
    snprintf(shape, sizeof(shape), "%lldx%lldx%lldx%lld", (long long)s[0], (long long)s[1], (long long)s[2],
             (long long)s[3]);
    fprintf(out, "\n%s %s (%s), %s storage, median of %d runs\n", bn->file, bn->what, shape,
            cfg->act_dtype == NN_F16 ? "fp16" : "fp32", runs);
    fprintf(out, "%4s  %-16s %-22s %-20s %10s %9s %8s\n", "op", "type", "name", "output", "GPU us", "GFLOP/s", "GB/s");
    double sum_flops = 0, sum_us = 0;
    for (uint32_t i = 0; i < m.n_ops; i++) {
        double us = nn_bench_median(&samples[(size_t)i * runs], runs), flops, bytes;
        nn_gpu_plan_op_cost(plan, (int)i, &flops, &bytes);
        if (us <= 0)
            continue; /* a view: nothing was recorded */
        char out_shape[64];
        pvk_shape_str(nn_gpu_plan_shape(plan, m.ops[i].outputs[0]), out_shape, sizeof(out_shape));
        fprintf(out, "%4u  %-16s %-22.22s %-20.20s %10.1f %9.1f %8.1f\n", i, pvk_op_type_name(m.ops[i].type),
                m.ops[i].name, out_shape, us, flops / us * 1e-3, bytes / us * 1e-3);
        /* an op of several dispatches: each one's median under it */
        unsigned first, end;
        nn_gpu_plan_op_timings(plan, (int)i, &first, &end);
        const struct gpu_timing *t;
        unsigned nt;
        gpu_cmd_timings(cmd, &t, &nt);
        for (unsigned k = first; end - first > 1 && k < end && k < nt && k < MAX_TIMED; k++)
            fprintf(out, "%4s  %-16s %-43.43s %10.1f\n", "", "", t[k].label,
                    nn_bench_median(&dispatch_samples[(size_t)k * runs], runs));
        sum_flops += flops;
        sum_us += us;
    }
    double total = nn_bench_median(totals, runs);
    fprintf(out, "total %.3f ms GPU, %.2f GFLOP, %.1f GFLOP/s; activations %.1f MiB (%.1f MiB unshared)\n",
            total * 1e-3, sum_flops * 1e-9, sum_us > 0 ? sum_flops / sum_us * 1e-3 : 0,
            nn_gpu_plan_arena_bytes(plan) / 1048576.0, nn_gpu_plan_unshared_bytes(plan) / 1048576.0);
    double net_us = nn_bench_median(wholes, runs);
    fprintf(out, "net alone %.3f ms GPU, %.1f GFLOP/s (timestamps at its start and end only)\n", net_us * 1e-3,
            net_us > 0 ? sum_flops / net_us * 1e-3 : 0);
    rc = 0;
done:
    gpu_cmd_destroy(cmd);
    gpu_cmd_destroy(whole);
    nn_gpu_plan_destroy(plan);
    nn_gpu_net_destroy(net);
    pvk_model_free(&m);
    free(input);
    free(samples);
    free(dispatch_samples);
    free(totals);
    free(wholes);
    return rc;
}

int nn_vulkan_bench_ops(const struct nn_device_options *dev, const char *dir, bool fp16_math, int runs, FILE *out,
                        char *err, size_t err_len)
{
    struct gpu_options gopt;
    gpu_options_default(&gopt);
    gopt.device_index = dev->index;
    gopt.force_fp32 = dev->force_fp32;
    struct gpu_context *ctx;
    if (gpu_context_create(&gopt, &ctx)) {
        snprintf(err, err_len, "%s", gpu_last_error());
        return -1;
    }
    const struct gpu_caps *c = gpu_context_caps(ctx);
    fprintf(out, "device: %s (%s), driver %s %s\n", c->device_name, gpu_device_kind_name(c->kind), c->driver_name,
            c->driver_info);
    const struct nn_gpu_config det_cfg = nn_det_config(ctx), line_cfg = nn_line_nets_config(ctx, fp16_math);
    int rc = 0;
    for (size_t i = 0; i < nn_bench_net_count && rc == 0; i++) {
        const struct nn_bench_net *bn = &nn_bench_nets[i];
        rc = bench_one(ctx, !strcmp(bn->file, "det.pvk") ? &det_cfg : &line_cfg, dir, bn, runs, out, err, err_len);
    }
    gpu_context_destroy(ctx);
    return rc;
}
