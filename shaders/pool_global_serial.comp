#version 450
// pool_global.glsl, one invocation per plane (CPU devices).
#extension GL_GOOGLE_include_directive : require
#define POOL_SERIAL
#include "pool_global.glsl"
