#version 450
// Tiled GEMM, fp32 storage (gemm.glsl).
#extension GL_GOOGLE_include_directive : require
#include "gemm.glsl"
