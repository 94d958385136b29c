/* The colour of the margin detection adds around an image, so that text touching the edges (word
 * crops, tight scans) sits inside the detector's field as it does on a page. The GPU reads the
 * margin itself (image_ops.h's frame): only its colour is computed on the host. */
#ifndef PPOCR_OCR_PAD_H
#define PPOCR_OCR_PAD_H

#include <stdint.h>

#include "img/image.h"

/* The margin's colour: the mean of img's outermost rows and columns, rounded. */
void ocr_border_colour(const struct ppocr_image *img, uint8_t bgr[3]);

#endif
