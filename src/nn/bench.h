/* Benchmarks of the nets' ops, for the command's --bench-ops. */
#ifndef PPOCR_NN_BENCH_H
#define PPOCR_NN_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "nn/device.h"

/* Times every op of det (1x3x960x960), cls (32x3x48x192) and rec (32x3x48x320, 1x3x48x320 and a
 * page's batch shapes: nn_bench_nets) of the models in dir on the device dev chooses, `runs`
 * replays after a warm-up, and prints a table per net: on Vulkan each op's GPU time from
 * timestamps, on the CPU backend each step's wall time. Returns 0, or -1 with a one-line reason. */
int nn_bench_ops(const struct nn_device_options *dev, const char *dir, bool fp16_math, int runs, FILE *out, char *err,
                 size_t err_len);

/* The nets and input shapes the backends' benchmarks time, in this order. */
struct nn_bench_net {
    const char *file, *what;
    int64_t shape[4];
};
extern const struct nn_bench_net nn_bench_nets[];
extern const size_t nn_bench_net_count;

/* The median of v[0..n) (sorted in place); 0 for n = 0. */
double nn_bench_median(double *v, int n);
/* The benchmarks' input: the same pseudo-random values in [-1, 1) on every backend. */
void nn_bench_fill_input(float *x, size_t n);

#endif
