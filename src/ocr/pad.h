/* A margin around an image, in the colour of its border, so that text touching the edges (word
 * crops, tight scans) sits inside the detector's field as it does on a page. */
#ifndef PPOCR_OCR_PAD_H
#define PPOCR_OCR_PAD_H

#include "ocr/image.h"

/* out = img with `margin` pixels on every side, filled with the mean colour of img's outermost
 * rows and columns. Returns 0, or -1 when out of memory or too large. */
int ocr_pad_image(const struct ocr_image *img, int margin, struct ocr_image *out);

#endif
