#version 450
#define STORAGE_F16
#extension GL_GOOGLE_include_directive : require
#include "db_bitmap.glsl"
