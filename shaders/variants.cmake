# The shaders that are one body (shaders/<body>.glsl) compiled with some macros defined: each
# row makes <build>/shaders/<name>.comp (#version 450, then the defines, then #include "<body>.glsl"),
# compiled and embedded like shaders/*.comp, and named GPU_SHADER_<name> in code. Shaders with code
# of their own stay shaders/*.comp.
#
# Macros most bodies take: STORAGE_F16 (fp16 storage), MATH_F16 (fp16 element-wise arithmetic,
# sums still fp32), USE_SUBGROUP (subgroup arithmetic in reductions); the others are the body's own.
#
# ppocr_shader_variant(<name> <body> [<macro>...])

# The fused add, fp32 storage (add_fused.glsl).
ppocr_shader_variant(add_fused              add_fused)
# The fused add, fp16 storage (add_fused.glsl).
ppocr_shader_variant(add_fused_f16          add_fused STORAGE_F16)

ppocr_shader_variant(affine                 affine)
ppocr_shader_variant(affine_f16             affine STORAGE_F16)
# affine, fp16 storage and fp16 element-wise arithmetic, sums in fp32 (affine.glsl).
ppocr_shader_variant(affine_f16a            affine STORAGE_F16 MATH_F16)
ppocr_shader_variant(affine_vec4            affine AFFINE_VEC4)
ppocr_shader_variant(affine_vec4_f16        affine STORAGE_F16 AFFINE_VEC4)
# affine_vec4, fp16 storage and fp16 element-wise arithmetic, sums in fp32 (affine.glsl).
ppocr_shader_variant(affine_vec4_f16a       affine STORAGE_F16 MATH_F16 AFFINE_VEC4)

ppocr_shader_variant(argmax                 argmax)
ppocr_shader_variant(argmax_f16             argmax STORAGE_F16)
ppocr_shader_variant(argmax_sg              argmax USE_SUBGROUP)
ppocr_shader_variant(argmax_sg_f16          argmax STORAGE_F16 USE_SUBGROUP)

ppocr_shader_variant(attention              attention)
ppocr_shader_variant(attention_f16          attention STORAGE_F16)

ppocr_shader_variant(binary                 binary)
ppocr_shader_variant(binary_f16             binary STORAGE_F16)
# binary, fp16 storage and fp16 element-wise arithmetic, sums in fp32 (binary.glsl).
ppocr_shader_variant(binary_f16a            binary STORAGE_F16 MATH_F16)

ppocr_shader_variant(binary_vec4            binary_vec4)
ppocr_shader_variant(binary_vec4_f16        binary_vec4 STORAGE_F16)
# binary_vec4, fp16 storage and fp16 element-wise arithmetic, sums in fp32 (binary_vec4.glsl).
ppocr_shader_variant(binary_vec4_f16a       binary_vec4 STORAGE_F16 MATH_F16)

# Direct convolution for CPU devices, fp32 (conv_direct.glsl).
ppocr_shader_variant(conv_direct            conv_direct)
# Direct convolution for CPU devices, fp16 storage, fp32 arithmetic (conv_direct.glsl).
ppocr_shader_variant(conv_direct_f16        conv_direct STORAGE_F16)
# Direct convolution for CPU devices with subgroup shuffles and 64-bit integers, fp32 (conv_direct.glsl,
# DIRECT_SUBGROUP).
ppocr_shader_variant(conv_direct_sg         conv_direct DIRECT_SUBGROUP)
# Direct convolution for CPU devices with subgroup shuffles, fp16 storage, fp32 arithmetic (conv_direct.glsl,
# DIRECT_SUBGROUP).
ppocr_shader_variant(conv_direct_sg_f16     conv_direct STORAGE_F16 DIRECT_SUBGROUP)

# conv_dw, fp32 storage (conv_dw.glsl).
ppocr_shader_variant(conv_dw                conv_dw)
# conv_dw, fp16 storage, fp32 arithmetic (conv_dw.glsl).
ppocr_shader_variant(conv_dw_f16            conv_dw STORAGE_F16)
# conv_dw, fp16 storage and fp16 element-wise arithmetic, sums in fp32 (conv_dw.glsl).
ppocr_shader_variant(conv_dw_f16a           conv_dw STORAGE_F16 MATH_F16)
# conv_dw, fp32 storage, x read as RGBA32F texels (conv_dw.glsl).
ppocr_shader_variant(conv_dw_texel          conv_dw X_TEXEL)

# Convolution of stride 1 through shared-memory tiles for GPUs, fp32 (conv_tile.glsl).
ppocr_shader_variant(conv_tile              conv_tile)

ppocr_shader_variant(copy                   copy)
ppocr_shader_variant(copy_f16               copy STORAGE_F16)

ppocr_shader_variant(crop_resize            crop_resize)
ppocr_shader_variant(crop_resize_f16        crop_resize STORAGE_F16)

ppocr_shader_variant(crop_fix               crop_warp CROP_FIX)
ppocr_shader_variant(crop_warp              crop_warp)
ppocr_shader_variant(crop_warp_ties         crop_warp WARP_TIES)

ppocr_shader_variant(db_bitmap              db_bitmap)
ppocr_shader_variant(db_bitmap_f16          db_bitmap STORAGE_F16)

# deconv, fp32 storage (deconv.glsl).
ppocr_shader_variant(deconv                 deconv)
# deconv, fp16 storage, fp32 arithmetic (deconv.glsl).
ppocr_shader_variant(deconv_f16             deconv STORAGE_F16)

# Transposed convolution, one input pixel per invocation, fp32 storage (deconv_scatter.glsl).
ppocr_shader_variant(deconv_scatter         deconv_scatter)
# Transposed convolution, one input pixel per invocation, fp16 storage (deconv_scatter.glsl).
ppocr_shader_variant(deconv_scatter_f16     deconv_scatter STORAGE_F16)

ppocr_shader_variant(det_preprocess         det_preprocess)
ppocr_shader_variant(det_preprocess_f16     det_preprocess STORAGE_F16)

# Tiled GEMM, fp32 storage (gemm.glsl).
ppocr_shader_variant(gemm                   gemm)
# Register-tiled GEMM for CPU devices, fp32 storage (gemm.glsl).
ppocr_shader_variant(gemm_cpu               gemm GEMM_CPU)
# Register-tiled GEMM for CPU devices, fp16 storage, fp32 accumulation (gemm.glsl).
ppocr_shader_variant(gemm_cpu_f16           gemm GEMM_CPU STORAGE_F16)
# Register-tiled GEMM for CPU devices with subgroup shuffles, fp32 storage (gemm.glsl).
ppocr_shader_variant(gemm_cpu_sg            gemm GEMM_CPU GEMM_CPU_SG)
# Register-tiled GEMM for CPU devices with subgroup shuffles, fp16 storage, fp32 accumulation (gemm.glsl).
ppocr_shader_variant(gemm_cpu_sg_f16        gemm STORAGE_F16 GEMM_CPU GEMM_CPU_SG)
# Tiled GEMM, fp16 storage, fp32 accumulation (gemm.glsl).
ppocr_shader_variant(gemm_f16               gemm STORAGE_F16)
# gemm, fp16 storage and fp16 element-wise arithmetic, sums in fp32 (gemm.glsl).
ppocr_shader_variant(gemm_f16a              gemm STORAGE_F16 MATH_F16)
# K-split GEMM for few outputs with a long K, fp32 storage (gemm.glsl).
ppocr_shader_variant(gemm_ksplit            gemm GEMM_KSPLIT)
# K-split GEMM for few outputs with a long K, fp16 storage, fp32 accumulation (gemm.glsl).
ppocr_shader_variant(gemm_ksplit_f16        gemm GEMM_KSPLIT STORAGE_F16)
# Tiled GEMM with K slices per workgroup, fp32 storage (gemm.glsl).
ppocr_shader_variant(gemm_sliced            gemm GEMM_SLICED)
# Tiled GEMM with K slices per workgroup, fp16 storage (gemm.glsl).
ppocr_shader_variant(gemm_sliced_f16        gemm STORAGE_F16 GEMM_SLICED)
# Tiled GEMM with K slices per workgroup, fp16 storage and fp16 element-wise arithmetic, sums in fp32 (gemm.glsl).
ppocr_shader_variant(gemm_sliced_f16a       gemm STORAGE_F16 MATH_F16 GEMM_SLICED)

ppocr_shader_variant(layernorm              layernorm)
ppocr_shader_variant(layernorm_f16          layernorm STORAGE_F16)
ppocr_shader_variant(layernorm_sg           layernorm USE_SUBGROUP)
ppocr_shader_variant(layernorm_sg_f16       layernorm STORAGE_F16 USE_SUBGROUP)

ppocr_shader_variant(pool                   pool)
ppocr_shader_variant(pool_f16               pool STORAGE_F16)

ppocr_shader_variant(pool_global            pool_global)
ppocr_shader_variant(pool_global_f16        pool_global STORAGE_F16)
# pool_global.glsl, one invocation per plane (CPU devices).
ppocr_shader_variant(pool_global_serial     pool_global POOL_SERIAL)
# pool_global.glsl, one invocation per plane (CPU devices), fp16 storage.
ppocr_shader_variant(pool_global_serial_f16 pool_global STORAGE_F16 POOL_SERIAL)
ppocr_shader_variant(pool_global_sg         pool_global USE_SUBGROUP)
ppocr_shader_variant(pool_global_sg_f16     pool_global STORAGE_F16 USE_SUBGROUP)

ppocr_shader_variant(resize                 resize)
ppocr_shader_variant(resize_f16             resize STORAGE_F16)

# SE gate from the channel means, fp32 throughout (se_gate.glsl).
ppocr_shader_variant(se_fc                  se_gate SE_FC)
# SE channel means, fp32 storage (se_gate.glsl).
ppocr_shader_variant(se_mean                se_gate SE_MEAN)
# SE channel means, fp16 storage, fp32 sums (se_gate.glsl).
ppocr_shader_variant(se_mean_f16            se_gate SE_MEAN STORAGE_F16)

ppocr_shader_variant(softmax                softmax)
ppocr_shader_variant(softmax_f16            softmax STORAGE_F16)
ppocr_shader_variant(softmax_sg             softmax USE_SUBGROUP)
ppocr_shader_variant(softmax_sg_f16         softmax STORAGE_F16 USE_SUBGROUP)
