/* nn/bench.h: --bench-ops forwarded to the backend of the device the options choose, and what the
 * backends' benchmarks share. */
#include "nn/bench.h"

#include <stdlib.h>

#include "nn/backend.h"

const struct nn_bench_net nn_bench_nets[] = {
    {"det.pvk", "detection at the 960 limit", {1, 3, 960, 960}},
    {"cls.pvk", "direction, a batch of 32 lines", {32, 3, 48, 192}},
    {"rec.pvk", "recognition, a batch of 32 lines", {32, 3, 48, 320}},
    {"rec.pvk", "recognition, one line", {1, 3, 48, 320}},
    /* batches as a page's lines give them, fewer and wider (BENCHMARKS.md) */
    {"rec.pvk", "recognition, 6 lines of 320", {6, 3, 48, 320}},
    {"rec.pvk", "recognition, 4 lines of 864", {4, 3, 48, 864}},
    {"rec.pvk", "recognition, one line of 1120", {1, 3, 48, 1120}},
};
const size_t nn_bench_net_count = sizeof nn_bench_nets / sizeof nn_bench_nets[0];

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double nn_bench_median(double *v, int n)
{
    if (n <= 0)
        return 0;
    qsort(v, (size_t)n, sizeof(*v), compare_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

void nn_bench_fill_input(float *x, size_t n)
{
    uint32_t seed = 12345;
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        x[i] = (float)(seed >> 8) / 16777216.0f * 2.0f - 1.0f;
    }
}

int nn_bench_ops(const struct nn_device_options *dev, const char *dir, bool fp16_math, int runs, FILE *out, char *err,
                 size_t err_len)
{
    const struct nn_backend *b;
    struct nn_device_options chosen;
    if (nn_backend_choose(dev, &b, &chosen, err, err_len))
        return -1;
    return b->bench_ops(&chosen, dir, fp16_math, runs > 0 ? runs : 1, out, err, err_len);
}
