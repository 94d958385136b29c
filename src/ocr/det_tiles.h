/* Small print on large pages: detection read again in strips at a higher resolution.
 *
 * A page larger than the det limit is shrunk for detection, and text that comes out only a few
 * pixels high there is found badly or not at all. After the first, whole-page pass, the text
 * heights it found decide: where the smallest of them are near that floor, the page is read
 * again in full-width strips, scaled so that the small text reaches a height the detector reads
 * well, each strip's det input no larger than the whole page's was (so no more memory). Strips
 * overlap by several lines: a line cut by one strip's edge lies whole in its neighbour, and only
 * the whole one is kept. The boxes of the first pass stay where the strips found nothing. */
#ifndef PPOCR_OCR_DET_TILES_H
#define PPOCR_OCR_DET_TILES_H

#include "ocr/db_postprocess.h"

#define DET_STRIPS_MAX 16

struct det_strip {
    int y0, y1;    /* the rows of the page it covers */
    int cut_above; /* y0 cuts through the page (another strip lies above) */
    int cut_below; /* likewise y1 */
};

struct det_tiling {
    double scale;       /* det pixels per page pixel in the strips */
    int limit;          /* det limit of every strip: its longer side at `scale`, rounded up */
    int overlap;        /* rows shared by neighbouring strips */
    double unclip_gain; /* the strips' DB boxes grow by the unclip ratio times this */
    int n;              /* 0: the first pass stands */
    struct det_strip strips[DET_STRIPS_MAX];
};

/* Plans the strips of a page_w x page_h page whose first pass ran at first_scale (det pixels per
 * page pixel) and found `first`. det_limit: the det limit of the first pass. */
void det_tiling_plan(int page_w, int page_h, double first_scale, const struct db_boxes *first, int det_limit,
                     struct det_tiling *out);

/* Drops the boxes of a strip (in page coordinates) that its cut edges cut: the neighbouring strip
 * holds them whole. A box taller than the overlap is kept, as no strip holds it whole. */
void det_strip_keep_whole(const struct det_tiling *t, int strip, struct db_boxes *boxes);

/* The page's boxes: every strip's (in page coordinates, each strip's kept boxes one after the
 * other in `strips`), a box found twice in the overlap of two strips once, and the first pass's
 * boxes that the strips' boxes do not cover. Replaces *first; strips is emptied. Returns 0, or -1
 * when out of memory (both are left as they were). */
int det_tiles_merge(struct db_boxes *first, struct db_boxes *strips);

#endif
