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

/* Images a backend can hold at once (ocr/net_io.h's slots), so that one run's crops come from
 * several of them. */
#define OCR_IMAGE_SLOTS 8

/* Crop batches an engine keeps: one per plan of a run and image of its lines. */
#define OCR_CROP_BATCHES 48

/* What a run's crops callback fills: batch batch[k], cut from the image in slot image[k], into the
 * input of plan plan[k] of the run, for k below n. Several batches may fill one plan's input, each
 * its own slots of it. */
struct ocr_crop_runs {
    int n;
    int batch[OCR_CROP_BATCHES], plan[OCR_CROP_BATCHES], image[OCR_CROP_BATCHES];
};

#endif
