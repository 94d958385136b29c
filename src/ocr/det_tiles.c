#include "ocr/det_tiles.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Text heights in det pixels of a box (a DB box, grown beyond its glyphs): where the lowest tenth
 * of the first pass's boxes is below SMALL_TEXT, small print is likely missed; the strips scale it
 * to TARGET_TEXT, the height at which a paper page at the det limit reads well. Scaled further,
 * the detector's boxes fit the glyphs more tightly than the recogniser was trained on, and it
 * loses spaces between words. A second pass that would scale by less than MIN_GAIN is not worth
 * its time. */
#define SMALL_TEXT 11.0
#define TARGET_TEXT 16.0
#define MIN_GAIN 1.25
/* At the strips' scale the detector's text regions fit the glyphs more tightly than at the first
 * pass's: their boxes grow this much more, to the margins the recogniser was trained on (without
 * it, it reads the words of a line run together). */
#define STRIP_UNCLIP_GAIN 1.33
/* Neighbouring strips share OVERLAP_DET det pixels, and at least OVERLAP_LINES median lines. */
#define OVERLAP_DET 96
#define OVERLAP_LINES 4
/* A strip is the page's whole width: no wider than this many det limits. */
#define MAX_WIDTH_LIMITS 3
/* A cut edge cuts the boxes that reach within this many pixels of it. */
#define EDGE_SLACK 2

struct rect {
    int x0, y0, x1, y1;
};

static struct rect bounds(const struct db_box *b)
{
    struct rect r = {b->pts[0][0], b->pts[0][1], b->pts[0][0], b->pts[0][1]};
    for (int k = 1; k < 4; k++) {
        r.x0 = b->pts[k][0] < r.x0 ? b->pts[k][0] : r.x0;
        r.y0 = b->pts[k][1] < r.y0 ? b->pts[k][1] : r.y0;
        r.x1 = b->pts[k][0] > r.x1 ? b->pts[k][0] : r.x1;
        r.y1 = b->pts[k][1] > r.y1 ? b->pts[k][1] : r.y1;
    }
    return r;
}

/* A box's height: its shorter side (boxes of words standing on end included). */
static double box_height(const struct db_box *b)
{
    double a = hypot(b->pts[1][0] - b->pts[0][0], b->pts[1][1] - b->pts[0][1]);
    double c = hypot(b->pts[3][0] - b->pts[0][0], b->pts[3][1] - b->pts[0][1]);
    return a < c ? a : c;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

void det_tiling_plan(int page_w, int page_h, double first_scale, const struct db_boxes *first, int det_limit,
                     struct det_tiling *out)
{
    memset(out, 0, sizeof(*out));
    if (first_scale >= 1 || first->count < 3 || page_w < 1 || page_h < 1)
        return;
    double *h = malloc(first->count * sizeof(*h));
    if (!h)
        return; /* the first pass stands */
    for (size_t i = 0; i < first->count; i++)
        h[i] = box_height(&first->boxes[i]);
    qsort(h, first->count, sizeof(*h), compare_doubles);
    double low = h[first->count / 10], typical = h[first->count / 2];
    free(h);
    if (low * first_scale >= SMALL_TEXT || low <= 0)
        return;
    double scale = fmin(1.0, TARGET_TEXT / low);
    scale = fmin(scale, (double)MAX_WIDTH_LIMITS * det_limit / page_w);
    for (;;) {
        if (scale < first_scale * MIN_GAIN)
            return;
        /* page rows whose det input is no larger than the first pass's largest */
        double rows = (double)det_limit * det_limit / (page_w * scale * scale);
        int overlap = (int)ceil(fmax(OVERLAP_DET / scale, OVERLAP_LINES * typical));
        int n = rows >= page_h ? 1 : (int)ceil((page_h - overlap) / (rows - overlap));
        if (rows >= 3.0 * overlap && n <= DET_STRIPS_MAX) {
            out->scale = scale;
            out->unclip_gain = STRIP_UNCLIP_GAIN;
            out->overlap = n > 1 ? overlap : 0;
            out->n = n;
            double step = (double)(page_h - out->overlap) / n;
            int tallest = 0;
            for (int i = 0; i < n; i++) {
                struct det_strip *s = &out->strips[i];
                s->y0 = (int)lround(i * step);
                s->y1 = i + 1 < n ? (int)lround((i + 1) * step) + out->overlap : page_h;
                s->cut_above = i > 0;
                s->cut_below = i + 1 < n;
                tallest = s->y1 - s->y0 > tallest ? s->y1 - s->y0 : tallest;
            }
            out->limit = (int)ceil((page_w > tallest ? page_w : tallest) * scale);
            return;
        }
        scale *= 0.9;
    }
}

void det_strip_keep_whole(const struct det_tiling *t, int strip, struct db_boxes *boxes)
{
    const struct det_strip *s = &t->strips[strip];
    size_t kept = 0;
    for (size_t i = 0; i < boxes->count; i++) {
        struct rect r = bounds(&boxes->boxes[i]);
        int fits = r.y1 - r.y0 < t->overlap;
        int cut =
            fits && ((s->cut_above && r.y0 <= s->y0 + EDGE_SLACK) || (s->cut_below && r.y1 >= s->y1 - 1 - EDGE_SLACK));
        if (!cut)
            boxes->boxes[kept++] = boxes->boxes[i];
    }
    boxes->count = kept;
}

static double area(struct rect r)
{
    return r.x1 > r.x0 && r.y1 > r.y0 ? (double)(r.x1 - r.x0) * (r.y1 - r.y0) : 0;
}

static double overlap_area(struct rect a, struct rect b)
{
    struct rect i = {a.x0 > b.x0 ? a.x0 : b.x0, a.y0 > b.y0 ? a.y0 : b.y0, a.x1 < b.x1 ? a.x1 : b.x1,
                     a.y1 < b.y1 ? a.y1 : b.y1};
    return area(i);
}

int det_tiles_merge(struct db_boxes *first, struct db_boxes *strips)
{
    size_t n = strips->count;
    struct rect *rs = malloc((n + 1) * sizeof(*rs));
    struct db_box *out = malloc((n + first->count + 1) * sizeof(*out));
    if (!rs || !out) {
        free(rs);
        free(out);
        return -1;
    }
    size_t kept = 0;
    /* a line in the overlap of two strips is found by both: the first finding stands */
    for (size_t i = 0; i < n; i++) {
        struct rect r = bounds(&strips->boxes[i]);
        int twice = 0;
        for (size_t j = 0; j < kept && !twice; j++) {
            double inter = overlap_area(r, rs[j]);
            twice = inter > 0.5 * (area(r) + area(rs[j]) - inter);
        }
        if (!twice) {
            rs[kept] = r;
            out[kept++] = strips->boxes[i];
        }
    }
    size_t from_strips = kept;
    /* the first pass's boxes where the strips found nothing (large text, say) */
    for (size_t i = 0; i < first->count; i++) {
        struct rect r = bounds(&first->boxes[i]);
        double covered = 0;
        for (size_t j = 0; j < from_strips; j++)
            covered += overlap_area(r, rs[j]);
        if (covered < 0.5 * area(r))
            out[kept++] = first->boxes[i];
    }
    free(rs);
    db_boxes_free(first);
    db_boxes_free(strips);
    first->boxes = out;
    first->count = kept;
    return 0;
}
