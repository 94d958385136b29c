// Storage precision of activations and weights. A shader compiled with STORAGE_F16 defined (its
// *_f16.comp twin) reads and writes 16-bit floats; arithmetic stays in fp32 unless it says otherwise.
// Its *_f16a.comp twin also defines MATH_F16: MFLOAT / MFLOAT4, the type of the element-wise
// arithmetic a shader chooses to do in the value type, become fp16 (sums over many terms stay fp32).
#ifndef PPOCR_STORAGE_GLSL
#define PPOCR_STORAGE_GLSL

#ifdef STORAGE_F16
// 16-bit storage alone (no Float16 capability) so that devices with storageBuffer16BitAccess but
// without shaderFloat16 can run it; a shader that computes in fp16 also defines MATH_F16.
#extension GL_EXT_shader_16bit_storage : require
#ifdef MATH_F16
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#endif
#define SFLOAT float16_t
#define SFLOAT4 f16vec4
#define TO_S(x) float16_t(x)
#define TO_S4(x) f16vec4(x)
#ifdef MATH_F16
#define MFLOAT float16_t
#define MFLOAT4 f16vec4
#else
#define MFLOAT float
#define MFLOAT4 vec4
#endif
#else
#define SFLOAT float
#define SFLOAT4 vec4
#define TO_S(x) (x)
#define TO_S4(x) (x)
#define MFLOAT float
#define MFLOAT4 vec4
#endif

#endif
