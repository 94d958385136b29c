#version 450
#define AFFINE_VEC4
#extension GL_GOOGLE_include_directive : require
#include "affine.glsl"
