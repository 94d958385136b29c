#version 450
// Register-tiled GEMM for CPU devices, fp32 storage (gemm.glsl).
#extension GL_GOOGLE_include_directive : require
#define GEMM_CPU
#include "gemm.glsl"
