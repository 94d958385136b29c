#version 450
#extension GL_GOOGLE_include_directive : require
#include "det_preprocess.glsl"
