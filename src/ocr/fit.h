/* How much of a stage's work fits the device at once. The engine's activations live in one
 * buffer, which no device makes larger than maxStorageBufferRange (128 MiB on lavapipe, the least
 * Vulkan allows): a recognition group of several batches, a batch of many lines, a very wide line
 * or a large detection input can need more. The engine then cuts the work: fewer batches in a
 * group, fewer lines in a batch, a narrower line, a smaller detection input, each the most that
 * fits. What fits is decided by the plans' own sizes against the device's limits, nothing else,
 * so the same image is cut the same way on the same device every time, and not at all on a device
 * where it fits. */
#ifndef PPOCR_OCR_FIT_H
#define PPOCR_OCR_FIT_H

#include <stdint.h>

/* The bytes that `count` units of work need at once (lines of a batch, steps of a width), or
 * UINT64_MAX when that much cannot be planned at all. */
typedef uint64_t (*fit_need_fn)(void *ctx, int count);

/* The largest count in [1, most] whose need is at most `limit`, for a need that does not shrink as
 * the count grows; 0 when even a count of 1 needs more (or most < 1). need is called about
 * log2(most) times (each call may plan a net), never with a count outside [1, most]. */
int fit_most(int most, uint64_t limit, fit_need_fn need, void *ctx);

#endif
