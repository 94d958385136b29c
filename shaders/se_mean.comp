#version 450
// SE channel means, fp32 storage (se_gate.glsl).
#extension GL_GOOGLE_include_directive : require
#define SE_MEAN
#include "se_gate.glsl"
