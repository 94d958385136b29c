#version 450
#define STORAGE_F16
#define AFFINE_VEC4
#extension GL_GOOGLE_include_directive : require
#include "affine.glsl"
