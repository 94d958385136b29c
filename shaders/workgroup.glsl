// The workgroup size as specialisation constant 0. Kernels use WG_SIZE rather than
// gl_WorkGroupSize.x: lavapipe (Mesa 22.3) reads the latter as the unspecialised default (1).
#ifndef PPOCR_WORKGROUP_GLSL
#define PPOCR_WORKGROUP_GLSL

layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG_SIZE = 64;

#endif
