/* Growing a closed integer polygon by a distance with round joins, as pyclipper / clipper-lib 6.4.2
 * do for PaddleOCR's unclip: ClipperOffset(miter_limit 2, arc_tolerance 0.25),
 * AddPath(JT_ROUND, ET_CLOSEDPOLYGON), Execute(delta). */
#ifndef PPOCR_OCR_POLYGON_OFFSET_H
#define PPOCR_OCR_POLYGON_OFFSET_H

#include <stddef.h>

#include "ocr/geometry.h"

/* Offsets path (n points) outward by delta >= 0. *out is allocated (free it), *n_out may be 0 when
 * the polygon has fewer than 3 distinct points. The result is the ring Clipper returns for a convex
 * path (the offset ring after Clipper's union pass: no repeated or collinear vertices, starting
 * after the top-most, then right-most, vertex). A concave path gets its offset ring without the
 * union's untangling. Returns 0, or -1 with a one-line reason. */
int polygon_offset_round(const struct geom_point *path, size_t n, double delta, struct geom_point **out, size_t *n_out,
                         char *err, size_t err_len);

#endif
