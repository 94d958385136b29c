/* Running one GPU op (or image kernel) in a test: a context, tensors placed at odd offsets inside
 * their buffers and poisoned with NaN, fp32/fp16 conversion on upload and download, and a
 * create -> record -> run -> destroy cycle with timings. */
#ifndef PPOCR_TEST_GPU_OP_HARNESS_H
#define PPOCR_TEST_GPU_OP_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gpu/cmd.h"
#include "gpu/pool.h"
#include "nn/gpu/gpu_op.h"

struct harness {
    struct gpu_context *ctx;
    struct nn_gpu_config cfg;
};

/* Takes the group's context (support/gpu_group.h) when the program runs its tests in that group,
 * else creates one; returns false (and prints why) when `dtype` cannot be stored on it. */
bool harness_init(struct harness *h, enum nn_dtype dtype);
/* harness_init(h, NN_F16) with fp16 arithmetic on (the *_f16a shaders); false (and prints why)
 * when the device has no 16-bit storage or no shaderFloat16. */
bool harness_init_fp16_math(struct harness *h);
void harness_done(struct harness *h);

struct htensor {
    struct gpu_buffer buf;
    struct nn_gpu_tensor t;
};

/* A tensor of `shape` starting `lead` elements into its buffer; dst_channels as in
 * nn_gpu_tensor (0 dense). The whole buffer is filled with NaN (or 0x7fffffff for int32). */
void htensor_alloc(struct harness *h, struct htensor *t, const struct pvk_shape *shape, enum nn_dtype dtype,
                   uint32_t lead, int64_t dst_channels);
void htensor_free(struct htensor *t);
/* Dense fp32 host data in and out (converted from/to fp16; int32 read as floats). */
void htensor_write(struct harness *h, const struct htensor *t, const float *src);
void htensor_read(struct harness *h, const struct htensor *t, float *dst);
void htensor_read_i32(struct harness *h, const struct htensor *t, int32_t *dst);
/* Reads `count` elements of the buffer from element `start`, ignoring the shape (to check that a
 * channel view left the neighbouring channels alone). */
void htensor_read_raw(struct harness *h, const struct htensor *t, uint32_t start, size_t count, float *dst);

/* Rounds x through fp16 when dtype is NN_F16 (so that references see what the GPU saw). */
void harness_round(enum nn_dtype dtype, float *x, size_t n);

/* create + record (between host->compute and compute->host barriers) + run twice + destroy; fails the
 * test with the op's message on error. When us is not NULL it receives the summed GPU time. */
void harness_run_op(struct harness *h, const struct nn_gpu_op_impl *impl, const struct pvk_op *op,
                    const struct nn_gpu_weights *w, const struct htensor *in, int n_in, const struct htensor *out,
                    int n_out, double *us);

/* Tolerance of the storage precision: rel-L2 1e-4 (fp32) / 1e-2 (fp16). */
double harness_tolerance(enum nn_dtype dtype);

/* Fails the test (naming `what`, the precision and the first differing elements) unless got is
 * within harness_tolerance(dt) of want. */
void harness_check(const float *got, const float *want, size_t n, enum nn_dtype dt, const char *what);
/* n uniform values in [lo, hi), rounded through fp16 for NN_F16; free() them. */
float *harness_rand_vec(size_t n, float lo, float hi, enum nn_dtype dt);
/* An op record of `type` with its fused activation and ONNX-style name. */
struct pvk_op harness_op(enum pvk_op_type type, enum pvk_act act, float alpha, float beta, const char *name);

struct pvk_shape shape_of(int ndim, const int64_t *d);
#define SHAPE(...) shape_of(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t), (int64_t[]){__VA_ARGS__})

#endif
