#version 450
#extension GL_GOOGLE_include_directive : require
#include "crop_resize.glsl"
