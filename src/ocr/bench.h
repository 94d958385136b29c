/* Benchmarks below the engine's interface, for the command's --bench-ops. */
#ifndef PPOCR_OCR_BENCH_H
#define PPOCR_OCR_BENCH_H

#include <stddef.h>
#include <stdio.h>

#include "ocr/engine.h"

/* Times every op of det (1x3x960x960), cls (32x3x48x192) and rec (32x3x48x320 and 1x3x48x320)
 * on the device the engine would use, `runs` replays after a warm-up, and prints a table per net.
 * Returns 0, or -1 with a one-line reason. */
int ocr_bench_ops(const struct ocr_options *opt, int runs, FILE *out, char *err, size_t err_len);

#endif
