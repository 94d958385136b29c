/* A margin around an image, in the colour of its border, so that text touching the edges (word
 * crops, tight scans) sits inside the detector's field as it does on a page. The engine has the
 * GPU read the margin (image_ops.h's frame) and only needs its colour; ocr_pad_image draws it on
 * the host. */
#ifndef PPOCR_OCR_PAD_H
#define PPOCR_OCR_PAD_H

#include <stdint.h>

#include "ocr/image.h"

/* out = img with `margin` pixels on every side, filled with the mean colour of img's outermost
 * rows and columns. Returns 0, or -1 when out of memory or too large. */
int ocr_pad_image(const struct ocr_image *img, int margin, struct ocr_image *out);

/* The margin's colour: the mean of img's outermost rows and columns, rounded. */
void ocr_border_colour(const struct ocr_image *img, uint8_t bgr[3]);

#endif
