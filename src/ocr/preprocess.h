/* CPU reference of PaddleOCR's image preprocessing (det resize + normalise, text-box crops, cls/rec
 * resize + normalise), reproducing OpenCV 4.6's integer arithmetic so that the results are
 * pixel-identical to cv2.resize / cv2.warpPerspective as the reference (ref_ocr.mjs, opencv-js)
 * computes them. The GPU shaders are tested against these functions.
 *
 * Checked bit-identical to opencv-js 4.6 (the reference's OpenCV) on the fixtures of
 * tests/data/images, on all 25 corpus images (det resize) and on 200 random crops and 200 random
 * resizes of corpus images. Where OpenCV's SIMD and scalar code round differently, the SIMD result
 * is reproduced, as opencv-js computes it (see preprocess_resize.c); a native cv2 build was not
 * available to compare against.
 *
 * Images are 8-bit, interleaved, rows without padding; BGR for 3 channels. Output buffers are the
 * caller's unless a function says otherwise. */
#ifndef PPOCR_OCR_PREPROCESS_H
#define PPOCR_OCR_PREPROCESS_H

#include <stddef.h>
#include <stdint.h>

#include "img/image.h"

#define OCR_DET_LIMIT_SIDE_LEN 960
#define OCR_CLS_HEIGHT 48
#define OCR_CLS_WIDTH 192
#define OCR_REC_HEIGHT 48

/* ---- resizing ------------------------------------------------------------------------------ */

/* cv2.resize(src, (dst_w, dst_h)) with the default INTER_LINEAR on 8-bit data with 1-4 channels:
 * 11-bit fixed-point weights, including OpenCV's switch to a 2x2 box average when the source is
 * exactly twice the destination on both axes. Returns 0, or -1 for bad sizes or channel count. */
int ocr_resize_linear(const uint8_t *src, int src_w, int src_h, uint8_t *dst, int dst_w, int dst_h, int channels);

/* ocr_resize_linear, its rows shared with `workers` (ocr/workers.h; NULL: this thread alone): the
 * same bytes. */
struct ocr_workers;
int ocr_resize_linear_shared(const uint8_t *src, int src_w, int src_h, uint8_t *dst, int dst_w, int dst_h, int channels,
                             struct ocr_workers *workers);

/* ---- detection input ------------------------------------------------------------------------ */

/* PaddleOCR's DetResizeForTest, limit_type 'max': scale so that the longer side is at most
 * limit_side_len (never up), then round each side to a multiple of 32 (half to even, at least 32). */
void ocr_det_resize_dims(int width, int height, int limit_side_len, int *out_w, int *out_h);

/* The detector's input normalisation, PaddleOCR's ImageNet mean and std, applied to the B, G, R
 * channels in that order (its quirk: RGB constants on BGR data). The GPU kernel takes them too. */
extern const float ocr_det_mean[3], ocr_det_std[3];

/* (x/255 - mean) / std in float32 with ocr_det_mean and ocr_det_std, channels in the image's BGR
 * order, written as planar CHW: out[c*w*h + y*w + x]. */
void ocr_det_normalize(const uint8_t *bgr, int width, int height, float *out);

/* Resize (ocr_det_resize_dims) + normalise: out must hold 3*out_h*out_w floats, where out_w/out_h
 * come from ocr_det_resize_dims(img, limit_side_len). Returns 0, or -1 when out of memory. */
int ocr_det_preprocess(const struct ppocr_image *img, int limit_side_len, float *out);

/* ---- text-box crops (PaddleOCR get_rotate_crop_image) --------------------------------------- */

struct ocr_crop_plan {
    int width, height;         /* size warpPerspective produces */
    double dst_from_src[9];    /* cv2.getPerspectiveTransform(box -> crop rectangle), row-major */
    double src_from_dst[9];    /* its inverse as cv2.invert gives it: what a warp samples with */
    int rotate;                /* height/width >= 1.5: the crop is turned 90 degrees counter-clockwise */
    int out_width, out_height; /* final size, after the turn */
};

/* Plans the crop of a 4-point box (clockwise from top-left, as PaddleOCR orders them).
 * Returns 0, or -1 when the box is degenerate (a side shorter than 1 pixel, a singular matrix) or
 * its crop would exceed the image limits of img/image.h. */
int ocr_crop_plan_make(const float box[4][2], struct ocr_crop_plan *plan);

/* cv2.getPerspectiveTransform: the 3x3 matrix taking src[i] to dst[i], solved in double as OpenCV
 * does (8x8 LU with partial pivoting). Returns 0, or -1 when singular. */
int ocr_perspective_transform(const float src[4][2], const float dst[4][2], double m[9]);
/* cv2.invert of a 3x3 matrix (cofactors / determinant). Returns 0, or -1 when singular. */
int ocr_invert_3x3(const double m[9], double inv[9]);

/* cv2.warpPerspective(src, M, (dst_w, dst_h), INTER_CUBIC, BORDER_REPLICATE) on 3-channel 8-bit
 * data (all sizes > 0), given src_from_dst = inverse of M: coordinates quantised to 1/32 pixel and 15-bit
 * fixed-point cubic weights, in OpenCV's block order so the double rounding matches too. */
void ocr_warp_perspective_cubic(const uint8_t *src, int src_w, int src_h, const double src_from_dst[9], uint8_t *dst,
                                int dst_w, int dst_h);

/* np.rot90 (cv2.ROTATE_90_COUNTERCLOCKWISE) of a 3-channel image: dst is h wide and w high. */
void ocr_rotate90_ccw(const uint8_t *src, int w, int h, uint8_t *dst);

/* The whole get_rotate_crop_image: warp, then turn tall crops. `out` is allocated (ppocr_image_free).
 * Returns 0, or -1 for a degenerate box or when out of memory. */
int ocr_crop_box(const struct ppocr_image *img, const float box[4][2], struct ppocr_image *out);
/* Its second half, of a crop already planned: the width x height warp of img by src_from_dst,
 * turned 90 degrees counter-clockwise where `rotate`. `out` is allocated (ppocr_image_free).
 * Returns 0, or -1 when out of memory. */
int ocr_crop_warp(const struct ppocr_image *img, const double src_from_dst[9], int width, int height, int rotate,
                  struct ppocr_image *out);
/* The 180-degree turn of a 3-channel image, in place (a line the classifier turned over). */
void ocr_rotate180(struct ppocr_image *img);

/* ---- classifier and recogniser input ------------------------------------------------------- */

/* PaddleOCR resize_norm_img's width rule: ceil(target_h * w/h), at most target_w. */
int ocr_rec_resized_width(int width, int height, int target_h, int target_w);

/* cv2.resize of the crop to (ocr_rec_resized_width, target_h), then (x/255 - 0.5)/0.5 in float32,
 * planar CHW in BGR order, zero on the right up to target_w: out holds 3*target_h*target_w floats.
 * cls uses target 48x192; rec 48xW for a width bucket W. Returns 0, or -1 when out of memory. */
int ocr_rec_preprocess(const struct ppocr_image *crop, int target_h, int target_w, float *out);
/* ocr_rec_preprocess with the classifier's 48x192. */
int ocr_cls_preprocess(const struct ppocr_image *crop, float *out);

#endif
