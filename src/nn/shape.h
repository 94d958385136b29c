/* Shape inference over a converted net: given the input's NCHW shape, the shape of every tensor
 * of the model, checked op by op (channel counts, reshape sizes, concat dims, broadcasting...).
 * Shared by the CPU reference executor and the GPU planner. */
#ifndef PPOCR_NN_SHAPE_H
#define PPOCR_NN_SHAPE_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"

/* Most elements one tensor may have: the GPU path addresses elements with 32-bit offsets (and
 * 4-byte elements keep a tensor's byte size far from any overflow). */
#define PVK_SHAPE_MAX_NUMEL INT32_MAX

struct pvk_shape {
    int32_t ndim;
    int64_t d[PVK_MAX_DIMS];
};

int64_t pvk_shape_numel(const struct pvk_shape *s);
int pvk_shape_equal(const struct pvk_shape *a, const struct pvk_shape *b);
/* "[1, 3, 48, 320]" into buf (always terminated); returns buf. */
const char *pvk_shape_str(const struct pvk_shape *s, char *buf, size_t len);

/* Fills shapes[0 .. model->n_tensors-1]: constants from the file, activations by running the
 * shape rules of src/nn/cpu/ref_ops.h over the op list from `input_nchw` (N, C, H, W).
 * A tensor no op produces (and that is not the input) keeps ndim 0. Every activation it fills has
 * dims >= 1 and at most PVK_SHAPE_MAX_NUMEL elements, however large the input or hostile the
 * model (whose attributes are in the ranges src/model/model.c checks on loading).
 * Returns 0, or -1 with a one-line reason naming the op (index, ONNX name, type) in err. */
int pvk_infer_shapes(const struct pvk_model *model, const int64_t input_nchw[4], struct pvk_shape *shapes,
                     char *err, size_t err_len);

#endif
