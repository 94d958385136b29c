#version 450
#define STORAGE_F16
#define USE_SUBGROUP
#extension GL_GOOGLE_include_directive : require
#include "layernorm.glsl"
