#version 450
// Tiled GEMM with K slices per workgroup, fp32 storage (gemm.glsl).
#extension GL_GOOGLE_include_directive : require
#define GEMM_SLICED
#include "gemm.glsl"
