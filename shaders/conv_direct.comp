#version 450
// Direct convolution for CPU devices, fp32 (conv_direct.glsl).
#extension GL_GOOGLE_include_directive : require
#include "conv_direct.glsl"
