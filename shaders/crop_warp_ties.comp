#version 450
#define WARP_TIES
#extension GL_GOOGLE_include_directive : require
#include "crop_warp.glsl"
