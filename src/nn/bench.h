/* Benchmarks of the nets' ops, for the command's --bench-ops. */
#ifndef PPOCR_NN_BENCH_H
#define PPOCR_NN_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "nn/device.h"

/* Times every op of det (1x3x960x960), cls (32x3x48x192) and rec (32x3x48x320, 1x3x48x320 and a
 * page's batch shapes) of the models in dir on the device dev chooses, `runs` replays after a
 * warm-up, and prints a table per net. Returns 0, or -1 with a one-line reason. */
int nn_bench_ops(const struct nn_device_options *dev, const char *dir, bool fp16_math, int runs, FILE *out, char *err,
                 size_t err_len);

#endif
