/* Rasterising a polygon into a mask exactly as cv::fillPoly(mask, [poly], 1) does with the default
 * 8-connected lines and no sub-pixel shift: outline drawn with OpenCV's line iterator, inside
 * filled by its fixed-point scan conversion. */
#ifndef PPOCR_OCR_POLY_FILL_H
#define PPOCR_OCR_POLY_FILL_H

#include <stdint.h>

#include "ocr/geometry.h"

/* Sets to 1 the pixels of mask (w x h, row-major) that cv::fillPoly would set; n >= 1. */
void poly_fill_mask(uint8_t *mask, int w, int h, const struct geom_point *poly, int n);

#endif
