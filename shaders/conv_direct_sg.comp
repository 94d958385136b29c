#version 450
// Direct convolution for CPU devices with subgroup shuffles and 64-bit integers, fp32
// (conv_direct.glsl, DIRECT_SUBGROUP).
#extension GL_GOOGLE_include_directive : require
#define DIRECT_SUBGROUP
#include "conv_direct.glsl"
