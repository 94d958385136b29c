#version 450
#define USE_SUBGROUP
#extension GL_GOOGLE_include_directive : require
#include "softmax.glsl"
