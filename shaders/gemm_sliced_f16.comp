#version 450
// Tiled GEMM with K slices per workgroup, fp16 storage (gemm.glsl).
#extension GL_GOOGLE_include_directive : require
#define STORAGE_F16
#define GEMM_SLICED
#include "gemm.glsl"
