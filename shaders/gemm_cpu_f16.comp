#version 450
// Register-tiled GEMM for CPU devices, fp16 storage, fp32 accumulation (gemm.glsl).
#extension GL_GOOGLE_include_directive : require
#define GEMM_CPU
#define STORAGE_F16
#include "gemm.glsl"
