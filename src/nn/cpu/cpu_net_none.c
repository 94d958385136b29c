/* The CPU executor's calls in a build without oneDNN (libdnnl-dev was not found when the build
 * was configured, or -DPPOCR_CPU_BACKEND=OFF): each fails with the reason, so that the rest
 * builds and a caller can fall back to another backend. */
#include <stdio.h>

#include "nn/cpu/cpu_net.h"

static const char reason[] =
    "this build has no CPU executor (oneDNN, libdnnl-dev, was not found at configure time, or PPOCR_CPU_BACKEND=OFF)";

int cpu_net_available(char *err, size_t err_len)
{
    snprintf(err, err_len, "%s", reason);
    return -1;
}

int cpu_net_create(const struct pvk_model *model, const struct cpu_net_options *opt, struct cpu_net **out, char *err,
                   size_t err_len)
{
    (void)model;
    (void)opt;
    *out = NULL;
    return cpu_net_available(err, err_len);
}

void cpu_net_destroy(struct cpu_net *net)
{
    (void)net;
}

int cpu_net_plan(struct cpu_net *net, const int64_t input_nchw[4], const struct cpu_plan_options *opt,
                 struct cpu_plan **out, char *err, size_t err_len)
{
    (void)net;
    (void)input_nchw;
    (void)opt;
    *out = NULL;
    return cpu_net_available(err, err_len);
}

/* No plan exists in this build: the calls below are never reached with one. */
void cpu_plan_destroy(struct cpu_plan *plan)
{
    (void)plan;
}

const struct pvk_shape *cpu_plan_input_shape(const struct cpu_plan *plan)
{
    (void)plan;
    return NULL;
}

const struct pvk_shape *cpu_plan_output_shape(const struct cpu_plan *plan)
{
    (void)plan;
    return NULL;
}

enum pvk_dtype cpu_plan_output_dtype(const struct cpu_plan *plan)
{
    (void)plan;
    return PVK_DTYPE_F32;
}

size_t cpu_plan_workspace_bytes(const struct cpu_plan *plan)
{
    (void)plan;
    return 0;
}

size_t cpu_plan_unshared_bytes(const struct cpu_plan *plan)
{
    (void)plan;
    return 0;
}

int cpu_plan_run(struct cpu_plan *plan, const float *input, void *workspace, char *err, size_t err_len)
{
    (void)plan;
    (void)input;
    (void)workspace;
    return cpu_net_available(err, err_len);
}

const void *cpu_plan_output(const struct cpu_plan *plan)
{
    (void)plan;
    return NULL;
}

int cpu_plan_argmax(const struct cpu_plan *plan, int32_t *index, float *value, char *err, size_t err_len)
{
    (void)plan;
    (void)index;
    (void)value;
    return cpu_net_available(err, err_len);
}

int cpu_plan_read_tensor(const struct cpu_plan *plan, int32_t t, void *dst, char *err, size_t err_len)
{
    (void)plan;
    (void)t;
    (void)dst;
    return cpu_net_available(err, err_len);
}

int cpu_plan_run_timed(struct cpu_plan *plan, const float *input, void *workspace, double *step_ms, char *err,
                       size_t err_len)
{
    (void)step_ms;
    return cpu_plan_run(plan, input, workspace, err, err_len);
}

int cpu_plan_step_count(const struct cpu_plan *plan)
{
    (void)plan;
    return 0;
}

void cpu_plan_describe(const struct cpu_plan *plan, const double *step_ms, FILE *out)
{
    (void)plan;
    (void)step_ms;
    (void)out;
}

int cpu_plan_reference_steps(const struct cpu_plan *plan)
{
    (void)plan;
    return 0;
}

int cpu_net_threads(int threads)
{
    return threads > 0 ? threads : 1;
}

int cpu_net_self_check(int threads, FILE *out, char *err, size_t err_len)
{
    (void)threads;
    (void)out;
    return cpu_net_available(err, err_len);
}
