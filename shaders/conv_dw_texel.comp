#version 450
// conv_dw, fp32 storage, x read as RGBA32F texels (conv_dw.glsl).
#extension GL_GOOGLE_include_directive : require
#define X_TEXEL
#include "conv_dw.glsl"
