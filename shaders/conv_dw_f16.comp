#version 450
// conv_dw, fp16 storage, fp32 arithmetic (conv_dw.glsl).
#extension GL_GOOGLE_include_directive : require
#define STORAGE_F16
#include "conv_dw.glsl"
