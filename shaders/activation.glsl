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

// 1 + erf(z), with erf's |error| < 1.5e-7 in fp32 (Abramowitz-Stegun 7.1.26: GLSL has no erf),
// and GELU (tanh form) through the sigmoid, 0.5 (1 + tanh(u)) = sigmoid(2u): both keep their
// relative precision where erf and tanh approach -1, which 1 + erf / 1 + tanh would cancel away
// in fp16 (GELU(-1.9) lost 1% of itself). T(c) casts each coefficient to the value type.
#define PPOCR_ACTIVATIONS(T)                                                                               \
    T act_one_plus_erf(T z)                                                                                \
    {                                                                                                      \
        T a = abs(z);                                                                                      \
        T t = T(1.0) / (T(1.0) + T(0.3275911) * a);                                                        \
        T tail = (((((T(1.061405429) * t - T(1.453152027)) * t) + T(1.421413741)) * t - T(0.284496736)) * t \
                  + T(0.254829592)) * t * exp(-a * a);                                                     \
        return mix(tail, T(2.0) - tail, step(T(0.0), z));                                                  \
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
        case ACT_GELU_ERF: return T(0.5) * x * act_one_plus_erf(x * T(0.70710678118654752));               \
        case ACT_GELU_TANH: return x * act_sigmoid(T(1.5957691216057308) * (x + T(0.044715) * x * x * x)); \
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
