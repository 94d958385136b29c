#version 450
#define CROP_FIX
#extension GL_GOOGLE_include_directive : require
#include "crop_warp.glsl"
