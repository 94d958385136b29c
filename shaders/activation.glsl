// Fused activations, numbered as enum pvk_act in src/model/ops.h, and the residual add around
// them in the convolution kernels. Written once as a macro over the value type, so the same
// formulas serve float and vec4, and float16_t and f16vec4 in shaders that compute in fp16
// (MATH_F16); alpha and beta arrive as fp32 and are cast to the value type.
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

// where a residual input is added, numbered as enum pvk_residual
#define RES_NONE 0u
#define RES_AFTER_ACT 1u
#define RES_BEFORE_ACT 2u

// erf with |error| < 1.5e-7 in fp32 (Abramowitz-Stegun 7.1.26): GLSL has no erf. T(c) casts each
// coefficient to the value type.
#define PPOCR_ACTIVATIONS(T)                                                                               \
    T act_erf(T x)                                                                                         \
    {                                                                                                      \
        T s = sign(x), a = abs(x);                                                                         \
        T t = T(1.0) / (T(1.0) + T(0.3275911) * a);                                                        \
        T y = T(1.0) - (((((T(1.061405429) * t - T(1.453152027)) * t) + T(1.421413741)) * t - T(0.284496736)) * t \
                        + T(0.254829592)) * t * exp(-a * a);                                               \
        return s * y;                                                                                      \
    }                                                                                                      \
    T act_sigmoid(T x) { return T(1.0) / (T(1.0) + exp(-x)); }                                             \
    T apply_act(T x, uint act, float alpha, float beta)                                                    \
    {                                                                                                      \
        switch (act) {                                                                                     \
        case ACT_RELU: return max(x, T(0.0));                                                              \
        case ACT_RELU6: return clamp(x, T(0.0), T(6.0));                                                   \
        case ACT_CLIP: return min(max(x, T(alpha)), T(beta));                                              \
        case ACT_HARDSWISH: return x * clamp(x + T(3.0), T(0.0), T(6.0)) * T(1.0 / 6.0);                   \
        case ACT_HARDSIGMOID: return clamp(T(alpha) * x + T(beta), T(0.0), T(1.0));                        \
        case ACT_SIGMOID: return act_sigmoid(x);                                                           \
        case ACT_SWISH: return x * act_sigmoid(x);                                                         \
        case ACT_GELU_ERF: return T(0.5) * x * (T(1.0) + act_erf(x * T(0.70710678118654752)));             \
        case ACT_GELU_TANH: return T(0.5) * x * (T(1.0) + tanh(T(0.7978845608028654) * (x + T(0.044715) * x * x * x))); \
        default: return x;                                                                                 \
        }                                                                                                  \
    }                                                                                                      \
    T residual_act(T x, T res, uint residual, uint act, float alpha, float beta)                           \
    {                                                                                                      \
        if (residual == RES_BEFORE_ACT)                                                                    \
            x += res;                                                                                      \
        x = apply_act(x, act, alpha, beta);                                                                \
        return residual == RES_AFTER_ACT ? x + res : x;                                                    \
    }

PPOCR_ACTIVATIONS(float)
PPOCR_ACTIVATIONS(vec4)
#ifdef MATH_F16
PPOCR_ACTIVATIONS(float16_t)
PPOCR_ACTIVATIONS(f16vec4)
#endif

#endif
