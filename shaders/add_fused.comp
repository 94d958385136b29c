#version 450
// The fused add, fp32 storage (add_fused.glsl).
#extension GL_GOOGLE_include_directive : require
#include "add_fused.glsl"
