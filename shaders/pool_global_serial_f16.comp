#version 450
// pool_global.glsl, one invocation per plane (CPU devices), fp16 storage.
#extension GL_GOOGLE_include_directive : require
#define STORAGE_F16
#define POOL_SERIAL
#include "pool_global.glsl"
