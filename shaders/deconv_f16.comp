#version 450
// deconv, fp16 storage, fp32 arithmetic (deconv.glsl).
#extension GL_GOOGLE_include_directive : require
#define STORAGE_F16
#include "deconv.glsl"
