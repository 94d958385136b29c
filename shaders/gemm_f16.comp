#version 450
// Tiled GEMM, fp16 storage, fp32 accumulation (gemm.glsl).
#extension GL_GOOGLE_include_directive : require
#define STORAGE_F16
#include "gemm.glsl"
