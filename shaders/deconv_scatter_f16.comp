#version 450
// Transposed convolution, one input pixel per invocation, fp16 storage (deconv_scatter.glsl).
#define STORAGE_F16
#extension GL_GOOGLE_include_directive : require
#include "deconv_scatter.glsl"
