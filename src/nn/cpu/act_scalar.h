/* One element of enum pvk_act, as the model means it (alpha, beta: CLIP's min/max, HARDSIGMOID's
 * slope/offset). A header of its own so that the reference ops (ppocr_nn_ref, tests only) and the
 * oneDNN executor's own kernels (ppocr_nn_cpu) share one definition without the product linking
 * the test library. */
#ifndef PPOCR_NN_CPU_ACT_SCALAR_H
#define PPOCR_NN_CPU_ACT_SCALAR_H

#include <math.h>

#include "model/ops.h"

static inline float nn_relu6(float x)
{
    return fminf(fmaxf(x, 0.0f), 6.0f);
}

static inline float nn_act_scalar(enum pvk_act act, float alpha, float beta, float x)
{
    switch (act) {
    case PVK_ACT_NONE: return x;
    case PVK_ACT_RELU: return fmaxf(x, 0.0f);
    case PVK_ACT_RELU6: return nn_relu6(x);
    case PVK_ACT_CLIP: return fminf(fmaxf(x, alpha), beta);
    case PVK_ACT_HARDSWISH: return x * nn_relu6(x + 3.0f) / 6.0f;
    case PVK_ACT_HARDSIGMOID: return fmaxf(0.0f, fminf(1.0f, alpha * x + beta));
    case PVK_ACT_SIGMOID: return 1.0f / (1.0f + expf(-x));
    case PVK_ACT_SWISH: return x / (1.0f + expf(-x));
    case PVK_ACT_GELU_ERF: return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
    case PVK_ACT_GELU_TANH: return 0.5f * x * (1.0f + tanhf(0.79788456080286536f * (x + 0.044715f * x * x * x)));
    case PVK_ACT_COUNT: break;
    }
    return x;
}

#endif
