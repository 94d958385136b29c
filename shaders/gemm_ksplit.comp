#version 450
// K-split GEMM for few outputs with a long K, fp32 storage (gemm.glsl).
#extension GL_GOOGLE_include_directive : require
#define GEMM_KSPLIT
#include "gemm.glsl"
