#version 450
// Register-tiled GEMM for CPU devices with subgroup shuffles, fp16 storage, fp32 accumulation
// (gemm.glsl).
#extension GL_GOOGLE_include_directive : require
#define STORAGE_F16
#define GEMM_CPU
#define GEMM_CPU_SG
#include "gemm.glsl"
