#version 450
// conv_dw, fp32 storage (conv_dw.glsl).
#extension GL_GOOGLE_include_directive : require
#include "conv_dw.glsl"
