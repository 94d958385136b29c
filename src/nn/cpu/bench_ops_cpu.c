/* `ppocr-vk --bench-ops` on the CPU backend: every step of the three nets' plans at the shapes of
 * nn/bench.h, each step's wall time on the backend's threads (the library's primitive, or one of
 * the executor's own kernels); medians over `runs` runs after a warm-up. */
#include <stdlib.h>
#include <time.h>

#include "model/model.h"
#include "nn/backend.h"
#include "nn/bench.h"
#include "nn/cpu/cpu_net.h"

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static int bench_one(const struct nn_bench_net *bn, const char *dir, int threads, int runs, FILE *out, char *err,
                     size_t err_len)
{
    char path[4096 + 64];
    snprintf(path, sizeof(path), "%s/%s", dir, bn->file);
    struct pvk_model m;
    if (pvk_model_load(path, &m, err, err_len))
        return -1;
    const struct cpu_net_options net_opt = {threads};
    struct cpu_net *net = NULL;
    struct cpu_plan *plan = NULL;
    const size_t n_in = (size_t)(bn->shape[0] * bn->shape[1] * bn->shape[2] * bn->shape[3]);
    float *input = malloc(n_in * sizeof(float));
    double *totals = calloc((size_t)runs, sizeof(double)), *column = calloc((size_t)runs, sizeof(double));
    double *steps = NULL, *step_ms = NULL;
    int rc = -1;
    if (!input || !totals || !column) {
        snprintf(err, err_len, "out of memory");
        goto done;
    }
    nn_bench_fill_input(input, n_in);
    const double t0 = now_ms();
    if (cpu_net_create(&m, &net_opt, &net, err, err_len) || cpu_net_plan(net, bn->shape, NULL, &plan, err, err_len))
        goto done;
    const double plan_ms = now_ms() - t0;
    const int n_steps = cpu_plan_step_count(plan);
    steps = calloc((size_t)runs * (size_t)n_steps + 1, sizeof(double));
    step_ms = calloc((size_t)n_steps + 1, sizeof(double));
    if (!steps || !step_ms) {
        snprintf(err, err_len, "out of memory");
        goto done;
    }
    /* whole runs (the first one repacks the weights and takes the workspace), then runs timed step
     * by step, whose clock reads between steps the whole runs do not pay */
    double first_ms = 0;
    for (int r = -1; r < runs; r++) {
        const double a = now_ms();
        if (cpu_plan_run(plan, input, NULL, err, err_len))
            goto done;
        if (r < 0)
            first_ms = now_ms() - a;
        else
            totals[r] = now_ms() - a;
    }
    for (int r = 0; r < runs; r++)
        if (cpu_plan_run_timed(plan, input, NULL, steps + (size_t)r * (size_t)n_steps, err, err_len))
            goto done;
    double sum_ms = 0;
    for (int i = 0; i < n_steps; i++) {
        for (int r = 0; r < runs; r++)
            column[r] = steps[(size_t)r * (size_t)n_steps + (size_t)i];
        step_ms[i] = nn_bench_median(column, runs);
        sum_ms += step_ms[i];
    }
    fprintf(out, "\n%s %s (%lldx%lldx%lldx%lld), fp32, median of %d runs\n", bn->file, bn->what,
            (long long)bn->shape[0], (long long)bn->shape[1], (long long)bn->shape[2], (long long)bn->shape[3], runs);
    fprintf(out, "%4s  %-6s %-22s %-10s %-24s %-20s %12s\n", "step", "op", "name", "what", "implementation", "output",
            "wall");
    cpu_plan_describe(plan, step_ms, out);
    fprintf(out,
            "total %.3f ms a run (its steps' medians add up to %.3f ms); plan %.1f ms, first run %.1f ms; "
            "workspace %.1f MiB (%.1f MiB unshared); %d of %d steps on the library's reference kernels\n",
            nn_bench_median(totals, runs), sum_ms, plan_ms, first_ms, cpu_plan_workspace_bytes(plan) / 1048576.0,
            cpu_plan_unshared_bytes(plan) / 1048576.0, cpu_plan_reference_steps(plan), n_steps);
    rc = 0;
done:
    cpu_plan_destroy(plan);
    cpu_net_destroy(net);
    pvk_model_free(&m);
    free(input);
    free(totals);
    free(column);
    free(steps);
    free(step_ms);
    return rc;
}

int nn_cpu_bench_ops(const struct nn_device_options *opt, const char *dir, bool fp16_math, int runs, FILE *out,
                     char *err, size_t err_len)
{
    (void)fp16_math; /* the CPU backend is fp32 */
    struct nn_device *dev;
    if (nn_cpu_device_open(opt, &dev, err, err_len))
        return -1;
    struct nn_device_info info;
    nn_cpu_device_info(dev, &info);
    nn_cpu_device_close(dev);
    fprintf(out, "device: %s\n", info.description);
    int rc = 0;
    for (size_t i = 0; i < nn_bench_net_count && rc == 0; i++)
        rc = bench_one(&nn_bench_nets[i], dir, opt->threads, runs, out, err, err_len);
    return rc;
}
