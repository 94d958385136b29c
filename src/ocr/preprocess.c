/* Detection, classifier and recogniser input tensors as PaddleOCR 2.x builds them
 * (DetResizeForTest + NormalizeImage, resize_norm_img), in numpy's float32 arithmetic. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ocr/preprocess.h"

void ocr_det_resize_dims(int width, int height, int limit_side_len, int *out_w, int *out_h)
{
    double ratio = 1.;
    if ((width > height ? width : height) > limit_side_len)
        ratio = height > width ? (double)limit_side_len / height : (double)limit_side_len / width;
    int rh = (int)(height * ratio), rw = (int)(width * ratio);
    /* int(round(x / 32) * 32) with Python's round-half-to-even (rint in the default rounding mode) */
    rh = (int)rint(rh / 32.) * 32;
    rw = (int)rint(rw / 32.) * 32;
    *out_h = rh > 32 ? rh : 32;
    *out_w = rw > 32 ? rw : 32;
}

const float ocr_det_mean[3] = {0.485f, 0.456f, 0.406f}, ocr_det_std[3] = {0.229f, 0.224f, 0.225f};

void ocr_det_normalize(const uint8_t *bgr, int width, int height, float *out)
{
    const float scale = 1.f / 255.f, *mean = ocr_det_mean, *std = ocr_det_std;
    size_t plane = (size_t)width * height;
    for (size_t p = 0; p < plane; p++)
        for (int c = 0; c < 3; c++) {
            float v = (float)bgr[3 * p + c] * scale;
            v = v - mean[c];
            out[c * plane + p] = v / std[c];
        }
}

int ocr_det_preprocess(const struct ppocr_image *img, int limit_side_len, float *out)
{
    int w, h;
    ocr_det_resize_dims(img->width, img->height, limit_side_len, &w, &h);
    uint8_t *resized = malloc((size_t)w * h * 3);
    if (!resized)
        return -1;
    int rc = ocr_resize_linear(img->bgr, img->width, img->height, resized, w, h, 3);
    if (rc == 0)
        ocr_det_normalize(resized, w, h, out);
    free(resized);
    return rc;
}

int ocr_rec_resized_width(int width, int height, int target_h, int target_w)
{
    double ratio = (double)width / height; /* ratio first, then ceil(imgH * ratio), as PaddleOCR */
    double w = ceil(target_h * ratio);
    return w > target_w ? target_w : (int)w;
}

int ocr_rec_preprocess(const struct ppocr_image *crop, int target_h, int target_w, float *out)
{
    int rw = ocr_rec_resized_width(crop->width, crop->height, target_h, target_w);
    uint8_t *resized = malloc((size_t)rw * target_h * 3);
    if (!resized)
        return -1;
    if (ocr_resize_linear(crop->bgr, crop->width, crop->height, resized, rw, target_h, 3) != 0) {
        free(resized);
        return -1;
    }
    size_t plane = (size_t)target_h * target_w;
    memset(out, 0, 3 * plane * sizeof *out);
    for (int y = 0; y < target_h; y++)
        for (int x = 0; x < rw; x++)
            for (int c = 0; c < 3; c++) {
                float v = (float)resized[((size_t)y * rw + x) * 3 + c] / 255.f;
                v = v - 0.5f;
                out[c * plane + (size_t)y * target_w + x] = v / 0.5f;
            }
    free(resized);
    return 0;
}

int ocr_cls_preprocess(const struct ppocr_image *crop, float *out)
{
    return ocr_rec_preprocess(crop, OCR_CLS_HEIGHT, OCR_CLS_WIDTH, out);
}
