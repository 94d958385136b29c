#version 450
// Tiled GEMM with K slices per workgroup, fp16 storage and fp16 element-wise arithmetic, sums in
// fp32 (gemm.glsl).
#extension GL_GOOGLE_include_directive : require
#define STORAGE_F16
#define MATH_F16
#define GEMM_SLICED
#include "gemm.glsl"
