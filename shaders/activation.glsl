// Fused activations, numbered as enum pvk_act in src/model/ops.h.
#ifndef PPOCR_ACTIVATION_GLSL
#define PPOCR_ACTIVATION_GLSL

#define ACT_NONE 0u
#define ACT_RELU 1u
#define ACT_RELU6 2u
#define ACT_CLIP 3u
#define ACT_HARDSWISH 4u
#define ACT_HARDSIGMOID 5u
#define ACT_SIGMOID 6u
#define ACT_SWISH 7u
#define ACT_GELU_ERF 8u
#define ACT_GELU_TANH 9u

// erf with |error| < 1.5e-7 (Abramowitz-Stegun 7.1.26): GLSL has no erf.
float act_erf(float x)
{
    float s = sign(x), a = abs(x);
    float t = 1.0 / (1.0 + 0.3275911 * a);
    float y = 1.0 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * exp(-a * a);
    return s * y;
}

float act_sigmoid(float x)
{
    return 1.0 / (1.0 + exp(-x));
}

float apply_act(float x, uint act, float alpha, float beta)
{
    switch (act) {
    case ACT_RELU: return max(x, 0.0);
    case ACT_RELU6: return clamp(x, 0.0, 6.0);
    case ACT_CLIP: return min(max(x, alpha), beta);
    case ACT_HARDSWISH: return x * clamp(x + 3.0, 0.0, 6.0) * (1.0 / 6.0);
    case ACT_HARDSIGMOID: return clamp(alpha * x + beta, 0.0, 1.0);
    case ACT_SIGMOID: return act_sigmoid(x);
    case ACT_SWISH: return x * act_sigmoid(x);
    case ACT_GELU_ERF: return 0.5 * x * (1.0 + act_erf(x * 0.70710678118654752));
    case ACT_GELU_TANH: return 0.5 * x * (1.0 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
    default: return x;
    }
}

#endif
