/* A text box's crop as the GPU kernels make it (ocr/gpu/image_ops.h), in terms that need no GPU
 * header, for the pipeline that plans the crops. */
#ifndef PPOCR_OCR_GPU_CROP_H
#define PPOCR_OCR_GPU_CROP_H

struct image_crop {
    double src_from_dst[9]; /* ocr_crop_plan.src_from_dst */
    int width, height;      /* ocr_crop_plan.width / height: the size the warp produces */
    int rotate;             /* ocr_crop_plan.rotate: turn 90 degrees counter-clockwise */
    int flip;               /* then turn 180 degrees */
    int slot;               /* batch index in the destination */
};

/* PaddleOCR's resize_norm_img width: ceil(target_h w / h), at most target_w. */
int image_resized_width(int width, int height, int target_h, int target_w);

#endif
