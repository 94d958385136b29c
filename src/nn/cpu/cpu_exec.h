/* Runs a converted net on the CPU with the reference ops of ref_ops.h, op by op in fp32: the
 * ground truth the GPU executor is compared with, layer by layer. Intermediates are freed after
 * their last use, so peak memory is a few activations, not all of them. */
#ifndef PPOCR_NN_CPU_CPU_EXEC_H
#define PPOCR_NN_CPU_CPU_EXEC_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"
#include "nn/shape.h"

/* Called after op `op_index` for each output it writes (slot 0, and slot 1 for ARGMAX's max
 * value), with the output's data (F32, or I32 for ARGMAX's index). The data is valid only during
 * the call. Return 0 to go on, non-zero to stop the run (pvk_cpu_run then fails with "stopped"). */
typedef int (*pvk_cpu_layer_fn)(void *user, int op_index, const struct pvk_op *op, int output_slot,
                                const struct pvk_shape *shape, enum pvk_dtype dtype, const void *data);

struct pvk_cpu_result {
    struct pvk_shape shape;
    enum pvk_dtype dtype; /* F32, or I32 when the net's output is an ARGMAX index */
    void *data;           /* owned; release with pvk_cpu_result_free */
    size_t peak_bytes;    /* most activation bytes this run held at once (liveness at work) */
};

/* Runs `model` on `input` (float NCHW of shape input_nchw). on_layer may be NULL.
 * Returns 0 with the net's output in *out, or -1 with a one-line reason in err. */
int pvk_cpu_run(const struct pvk_model *model, const float *input, const int64_t input_nchw[4],
                pvk_cpu_layer_fn on_layer, void *user, struct pvk_cpu_result *out, char *err, size_t err_len);
void pvk_cpu_result_free(struct pvk_cpu_result *result);

#endif
