#version 450
// Direct convolution for CPU devices, fp16 storage, fp32 arithmetic (conv_direct.glsl).
#extension GL_GOOGLE_include_directive : require
#define STORAGE_F16
#include "conv_direct.glsl"
