#version 450
// SE channel means, fp16 storage, fp32 sums (se_gate.glsl).
#extension GL_GOOGLE_include_directive : require
#define SE_MEAN
#define STORAGE_F16
#include "se_gate.glsl"
