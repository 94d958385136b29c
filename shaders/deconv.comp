#version 450
// deconv, fp32 storage (deconv.glsl).
#extension GL_GOOGLE_include_directive : require
#include "deconv.glsl"
