#version 450
#extension GL_GOOGLE_include_directive : require
#include "db_bitmap.glsl"
