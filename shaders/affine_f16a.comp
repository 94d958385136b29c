#version 450
// affine, fp16 storage and fp16 element-wise arithmetic, sums in fp32 (affine.glsl).
#extension GL_GOOGLE_include_directive : require
#define STORAGE_F16
#define MATH_F16
#include "affine.glsl"
