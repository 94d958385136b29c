#version 450
// K-split GEMM for few outputs with a long K, fp16 storage, fp32 accumulation (gemm.glsl).
#extension GL_GOOGLE_include_directive : require
#define GEMM_KSPLIT
#define STORAGE_F16
#include "gemm.glsl"
