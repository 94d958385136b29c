/* A quick end-to-end check of the GPU for `ppocr-vk --self-check`: builds a pipeline, moves
 * random data through device memory, runs a shader and compares with C.
 *
 * Threads: as any user of the context: beside other threads using the same context. */
#ifndef PPOCR_GPU_SELFTEST_H
#define PPOCR_GPU_SELFTEST_H

struct gpu_context;

/* GPU_OK, or a status with gpu_last_error() saying what went wrong. */
int gpu_selftest(struct gpu_context *ctx);

#endif
