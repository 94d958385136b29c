#version 450
// The fused add, fp16 storage (add_fused.glsl).
#define STORAGE_F16
#extension GL_GOOGLE_include_directive : require
#include "add_fused.glsl"
