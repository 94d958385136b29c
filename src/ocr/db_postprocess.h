/* DB post-processing (PaddleOCR 2.x DBPostProcess with score_mode "fast", no dilation, followed by
 * predict_det's filter_tag_det_res and predict_system's sorted_boxes): from the det net's text
 * probability map to quadrilaterals in the source image, in reading order. */
#ifndef PPOCR_OCR_DB_POSTPROCESS_H
#define PPOCR_OCR_DB_POSTPROCESS_H

#include <stddef.h>
#include <stdint.h>

struct ocr_workers;

struct db_params {
    float thresh;                /* a pixel is text when its probability > thresh (compared in float) */
    double box_thresh;           /* keep boxes whose mean probability is >= box_thresh, compared in double as
                          * PaddleOCR does: 0.6f widened is 0.6000000238, which drops boxes scoring
                          * in between; convert a float option by its decimal value */
    double unclip_ratio;         /* grow each box by area * ratio / perimeter */
    int max_candidates;          /* look at no more contours than this, in OpenCV's contour order */
    int min_size;                /* drop boxes whose short side is < min_size (< min_size + 2 after growing) */
    struct ocr_workers *workers; /* helper threads for the contours' boxes (ocr/workers.h), or NULL */
};

/* PaddleOCR's defaults: 0.3, 0.6, 1.5, 1000, 3; no helper threads. */
void db_params_default(struct db_params *params);

struct db_box {
    int pts[4][2]; /* x, y in source image pixels */
    double score;  /* mean probability inside the box before growing (box_score_fast) */
};

struct db_boxes {
    struct db_box *boxes;
    size_t count;
};

/* The whole chain: db_boxes_from_map, then db_boxes_filter, then db_boxes_sort. prob is the map,
 * map_h rows of map_w floats; src_w x src_h the image it was computed from (boxes are scaled by
 * src/map per axis). work: prob > params->thresh as the contour follower's work image
 * (contour.h), already built (by the GPU), which this overwrites; or NULL to build it here. On
 * success *out owns an array (free with db_boxes_free; count may be 0). Returns 0, or -1 with a
 * one-line reason in err. */
int db_postprocess(const float *prob, int8_t *work, int map_w, int map_h, int src_w, int src_h,
                   const struct db_params *params, struct db_boxes *out, char *err, size_t err_len);

/* DBPostProcess.boxes_from_bitmap alone: boxes in contour order, corners in get_mini_boxes order,
 * rounded half to even and clipped to [0, src_w] x [0, src_h]. */
int db_boxes_from_map(const float *prob, int8_t *work, int map_w, int map_h, int src_w, int src_h,
                      const struct db_params *params, struct db_boxes *out, char *err, size_t err_len);

/* filter_tag_det_res: corners clockwise from the top-left, clipped to [0, src_w - 1] x
 * [0, src_h - 1]; boxes with a side of 3 px or less are removed. In place. */
void db_boxes_filter(struct db_boxes *boxes, int src_w, int src_h);

/* sorted_boxes: by (y, x) of the first corner, then boxes less than 10 px apart vertically are
 * put left to right. In place, stable. */
void db_boxes_sort(struct db_boxes *boxes);

void db_boxes_free(struct db_boxes *boxes);

#endif
