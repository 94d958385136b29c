#version 450
#extension GL_GOOGLE_include_directive : require
#include "binary_vec4.glsl"
