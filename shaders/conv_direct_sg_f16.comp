#version 450
// Direct convolution for CPU devices with subgroup shuffles, fp16 storage, fp32 arithmetic
// (conv_direct.glsl, DIRECT_SUBGROUP).
#extension GL_GOOGLE_include_directive : require
#define STORAGE_F16
#define DIRECT_SUBGROUP
#include "conv_direct.glsl"
