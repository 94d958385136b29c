#version 450
// Register-tiled GEMM for CPU devices with subgroup shuffles, fp32 storage (gemm.glsl).
#extension GL_GOOGLE_include_directive : require
#define GEMM_CPU
#define GEMM_CPU_SG
#include "gemm.glsl"
