#version 450
// SE gate from the channel means, fp32 throughout (se_gate.glsl).
#extension GL_GOOGLE_include_directive : require
#define SE_FC
#include "se_gate.glsl"
