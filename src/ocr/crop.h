/* A text box's crop as the nets' input makers build it (ocr/net_io.h: the GPU's kernels or the
 * CPU's), in terms that name no backend, for the pipeline that plans the crops; and which crop
 * batches a run fills. */
#ifndef PPOCR_OCR_CROP_H
#define PPOCR_OCR_CROP_H

#include "nn/session.h"

struct image_crop {
    double src_from_dst[9]; /* ocr_crop_plan.src_from_dst */
    int width, height;      /* ocr_crop_plan.width / height: the size the warp produces */
    int rotate;             /* ocr_crop_plan.rotate: turn 90 degrees counter-clockwise */
    int flip;               /* then turn 180 degrees */
    int slot;               /* batch index in the destination */
};

/* PaddleOCR's resize_norm_img width: ceil(target_h w / h), at most target_w. */
int image_resized_width(int width, int height, int target_h, int target_w);

/* Crop batches an engine keeps: one per plan of a run. */
#define OCR_CROP_BATCHES NN_RUN_MAX_PLANS

/* What a run's crops callback fills: batch batch[k] into the input of plan plan[k] of the run, for
 * k below n, all of the uploaded image (its framed size img_w x img_h). */
struct ocr_crop_runs {
    int img_w, img_h;
    int n;
    int batch[OCR_CROP_BATCHES], plan[OCR_CROP_BATCHES];
};

#endif
