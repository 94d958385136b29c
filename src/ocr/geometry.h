/* Plane geometry for DB post-processing, with OpenCV 4.6's numerical conventions (convexHull,
 * minAreaRect, boxPoints), so that boxes computed here match PaddleOCR's bit for bit. */
#ifndef PPOCR_OCR_GEOMETRY_H
#define PPOCR_OCR_GEOMETRY_H

#include <stddef.h>
#include <stdint.h>

struct geom_point {
    int32_t x, y;
};

struct geom_pointf {
    float x, y;
};

/* cv::RotatedRect: angle in degrees, as cv::minAreaRect returns it. */
struct geom_rotated_rect {
    float cx, cy;
    float width, height;
    float angle;
};

/* cv::convexHull(points, hull, clockwise, returnPoints = true) on integer points: the hull
 * vertices, starting where OpenCV starts (which depends on the input order). "Clockwise" is
 * OpenCV's word for y pointing up; on an image it is counter-clockwise. hull holds n points.
 * Returns the number of vertices (0 for n == 0), or -1 when out of memory. */
int geom_convex_hull(const struct geom_point *pts, size_t n, int clockwise, struct geom_point *hull);

/* cv::minAreaRect on integer points (via geom_convex_hull and OpenCV's rotating calipers).
 * Returns 0, or -1 when out of memory. */
int geom_min_area_rect(const struct geom_point *pts, size_t n, struct geom_rotated_rect *rect);

/* cv::boxPoints / RotatedRect::points, in float arithmetic as OpenCV does it. */
void geom_box_points(const struct geom_rotated_rect *rect, struct geom_pointf corners[4]);

#endif
