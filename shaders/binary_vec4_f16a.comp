#version 450
// binary_vec4, fp16 storage and fp16 element-wise arithmetic, sums in fp32 (binary_vec4.glsl).
#extension GL_GOOGLE_include_directive : require
#define STORAGE_F16
#define MATH_F16
#include "binary_vec4.glsl"
