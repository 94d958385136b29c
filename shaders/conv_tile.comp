#version 450
// Convolution of stride 1 through shared-memory tiles for GPUs, fp32 (conv_tile.glsl).
#extension GL_GOOGLE_include_directive : require
#include "conv_tile.glsl"
