// The per-crop record of the crop kernels, CROP_WORDS uint words, written by image_ops.c
// (struct layout mirrored there as IMAGE_CROP_* offsets).
#ifndef PPOCR_CROP_PARAMS_GLSL
#define PPOCR_CROP_PARAMS_GLSL

#define CROP_WORDS 48u
#define CP_MATRIX 0u       // 9 + 9 floats: hi and lo parts of source-from-warp-output coordinates
#define CP_WARP_W 18u      // size warpPerspective produces
#define CP_WARP_H 19u
#define CP_ROTATE 20u      // turn 90 degrees counter-clockwise after the warp
#define CP_FLIP 21u        // then turn 180 degrees
#define CP_SCRATCH 22u     // first scratch pixel of this crop
#define CP_SLOT 23u        // batch index in the destination tensor
#define CP_RESIZED_W 24u   // width after the resize to the target height (rest is zero padding)
#define CP_RESIZE_MODE 25u // RESIZE_TABLE / RESIZE_HALF / RESIZE_COPY
#define CP_TABLE 26u       // first word of the resize table: RESIZED_W x-entries, then target_h y-entries
#define CP_MATRIX64 27u    // 9 doubles as (low word, high word): the exact matrix for f64emu.glsl
#define CP_BLOCK_W 45u     // width of OpenCV's warp blocks, which its rounding depends on

#endif
