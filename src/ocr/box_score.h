/* PaddleOCR's box_score_fast: the mean probability inside a quadrilateral. */
#ifndef PPOCR_OCR_BOX_SCORE_H
#define PPOCR_OCR_BOX_SCORE_H

#include "ocr/geometry.h"

/* Mean of map (w x h) over the pixels cv2.fillPoly sets for the box with its corners truncated
 * to integers, within the box's integer bounding box clipped to the map; the sum in double in
 * row order, as cv2.mean. 0 when no pixel is inside. Returns 0, or -1 when out of memory. */
int box_score_fast(const float *map, int w, int h, const struct geom_pointf box[4], double *score);

#endif
