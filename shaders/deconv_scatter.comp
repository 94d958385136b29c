#version 450
// Transposed convolution, one input pixel per invocation, fp32 storage (deconv_scatter.glsl).
#extension GL_GOOGLE_include_directive : require
#include "deconv_scatter.glsl"
