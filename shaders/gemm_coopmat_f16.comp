#version 450
// fp16 cooperative-matrix GEMM (NV), fp32 accumulation (gemm.glsl); only built into pipelines on
// devices that report GL_NV_cooperative_matrix with a 16x16x16 fp16 shape.
#extension GL_GOOGLE_include_directive : require
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_control_flow_attributes : require
#define GEMM_COOPMAT
#define STORAGE_F16
#define MATH_F16
#include "gemm.glsl"
