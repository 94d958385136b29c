#version 450
// binary, fp16 storage and fp16 element-wise arithmetic, sums in fp32 (binary.glsl).
#extension GL_GOOGLE_include_directive : require
#define STORAGE_F16
#define MATH_F16
#include "binary.glsl"
