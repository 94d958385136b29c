/* Borders of a binary image, as cv::findContours(RETR_LIST, CHAIN_APPROX_SIMPLE) finds them in
 * OpenCV 4.6 (Suzuki-Abe border following): outer borders and hole borders alike, each as the
 * pixels where its direction changes, listed in OpenCV's order (the last border found first). */
#ifndef PPOCR_OCR_CONTOUR_H
#define PPOCR_OCR_CONTOUR_H

#include <stddef.h>
#include <stdint.h>

#include "ocr/geometry.h"

struct contour_list {
    size_t count;              /* number of contours */
    size_t *start;             /* contour k is points[start[k] .. start[k + 1]) */
    struct geom_point *points; /* all points, contour after contour */
    size_t n_points;
};

/* The work image the border following labels in place: (w + 2) x (h + 2) bytes, row-major, the
 * w x h bitmap (1 foreground, 0 background) inside a one-pixel border of background. The GPU
 * builds the same from det's map (src/ocr/gpu/db_bitmap.h). */
size_t contour_work_bytes(int w, int h);
/* Fills work (contour_work_bytes(w, h)) with map > thresh of a w x h float map. */
void contour_work_above(const float *map, int w, int h, float thresh, int8_t *work);

/* bitmap: w x h bytes, row-major, nonzero = foreground. Returns 0, or -1 with a one-line reason. */
int contours_find(const uint8_t *bitmap, int w, int h, struct contour_list *out, char *err, size_t err_len);
/* The same for the bitmap map > thresh of a w x h float map, without building it separately. */
int contours_find_above(const float *map, int w, int h, float thresh, struct contour_list *out, char *err,
                        size_t err_len);
/* The contours of a work image of a w x h bitmap, built by the caller; its bytes become labels. */
int contours_find_in_work(int8_t *work, int w, int h, struct contour_list *out, char *err, size_t err_len);
void contour_list_free(struct contour_list *list);

static inline size_t contour_length(const struct contour_list *list, size_t k)
{
    return list->start[k + 1] - list->start[k];
}

#endif
