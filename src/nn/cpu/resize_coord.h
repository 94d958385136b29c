/* The source coordinate of output index o on one axis of a resize (in, out: the axis's input and
 * output extents; as ref_ops.h states it). A header of its own so that the reference ops
 * (ppocr_nn_ref, tests only) and the oneDNN executor's own resize (ppocr_nn_cpu) share one
 * definition without the product linking the test library. */
#ifndef PPOCR_NN_CPU_RESIZE_COORD_H
#define PPOCR_NN_CPU_RESIZE_COORD_H

#include <math.h>
#include <stdint.h>

#include "model/ops.h"

static inline float nn_resize_src(enum pvk_resize_mode mode, int64_t o, int64_t in, int64_t out, float scale)
{
    switch (mode) {
    case PVK_RESIZE_NEAREST: return (float)o / scale;
    case PVK_RESIZE_BILINEAR_HALF_PIXEL: {
        float s = ((float)o + 0.5f) / scale - 0.5f;
        return fminf(fmaxf(s, 0.0f), (float)(in - 1));
    }
    case PVK_RESIZE_BILINEAR_ALIGN_CORNERS: return out > 1 ? (float)o * (float)(in - 1) / (float)(out - 1) : 0.0f;
    }
    return 0.0f;
}

#endif
