/* Suzuki-Abe border following in OpenCV 4.6's legacy form (cvFindNextContour and icvFetchContour in
 * contours.cpp), for RETR_LIST and CHAIN_APPROX_SIMPLE. The image is padded with one background
 * pixel on each side, as cv::findContours does, so borders at the image edge are followed too.
 * Labels in the work image: 0 background, 1 unvisited foreground, 2 visited border pixel,
 * -126 (2 | 0x80) visited pixel whose right neighbour is background: a hole cannot start there. */
#include "ocr/contour.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LABEL_VISITED 2
#define LABEL_RIGHT_EDGE (-126)

/* Chain code directions, counter-clockwise from +x with y pointing down. */
static const int dir_dx[8] = {1, 1, 0, -1, -1, -1, 0, 1};
static const int dir_dy[8] = {0, -1, -1, -1, 0, 1, 1, 1};

struct point_buffer {
    struct geom_point *data;
    size_t len, cap;
};

static int push_point(struct point_buffer *b, int x, int y)
{
    if (b->len == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 1024;
        struct geom_point *d = realloc(b->data, cap * sizeof(*d));
        if (!d)
            return -1;
        b->data = d;
        b->cap = cap;
    }
    b->data[b->len++] = (struct geom_point){x, y};
    return 0;
}

/* Follows one border from pixel `start` (at padded coordinates x, y); appends its points,
 * shifted back to image coordinates. */
static int follow_border(int8_t *img, ptrdiff_t start, int x, int y, int is_hole, const ptrdiff_t deltas[16],
                         struct point_buffer *pts)
{
    ptrdiff_t i0 = start, i1, i3, i4 = 0;
    int s, s_end, prev_s;
    x -= 1;
    y -= 1;

    s_end = s = is_hole ? 0 : 4;
    do {
        s = (s - 1) & 7;
        i1 = i0 + deltas[s];
    } while (img[i1] == 0 && s != s_end);

    if (s == s_end) { /* a single pixel */
        img[i0] = LABEL_RIGHT_EDGE;
        return push_point(pts, x, y);
    }

    i3 = i0;
    prev_s = s ^ 4;
    for (;;) {
        s_end = s;
        while (s < 15) {
            i4 = i3 + deltas[++s];
            if (img[i4] != 0)
                break;
        }
        s &= 7;
        if ((unsigned)(s - 1) < (unsigned)s_end)
            img[i3] = LABEL_RIGHT_EDGE;
        else if (img[i3] == 1)
            img[i3] = LABEL_VISITED;

        if (s != prev_s) {
            if (push_point(pts, x, y))
                return -1;
            prev_s = s;
        }
        x += dir_dx[s];
        y += dir_dy[s];
        if (i4 == i0 && i3 == i1)
            break;
        i3 = i4;
        s = (s + 4) & 7;
    }
    return 0;
}

size_t contour_work_bytes(int w, int h)
{
    return ((size_t)w + 2) * ((size_t)h + 2);
}

/* The work image's border rows and columns; the caller fills the rest. */
static void clear_border(int8_t *img, int w, int h)
{
    size_t step = (size_t)w + 2;
    memset(img, 0, step);
    memset(img + step * ((size_t)h + 1), 0, step);
    for (int y = 1; y <= h; y++)
        img[(size_t)y * step] = img[(size_t)y * step + w + 1] = 0;
}

void contour_work_above(const float *map, int w, int h, float thresh, int8_t *work)
{
    clear_border(work, w, h);
    for (int y = 0; y < h; y++) {
        int8_t *row = work + (size_t)(y + 1) * ((size_t)w + 2) + 1;
        const float *m = map + (size_t)y * w;
        for (int x = 0; x < w; x++)
            row[x] = m[x] > thresh;
    }
}

static int find_in(int8_t *img, int w, int h, struct contour_list *out, char *err, size_t err_len);

/* Whether the 32 bytes at p all equal the byte repeated in run. */
static int same_bytes32(const int8_t *p, uint64_t run)
{
    uint64_t v[4];
    memcpy(v, p, sizeof(v));
    return ((v[0] ^ run) | (v[1] ^ run) | (v[2] ^ run) | (v[3] ^ run)) == 0;
}

static int bad_size(int w, int h, struct contour_list *out, char *err, size_t err_len)
{
    memset(out, 0, sizeof(*out));
    if (w > 0 && h > 0)
        return 0;
    snprintf(err, err_len, "contours: empty image %dx%d", w, h);
    return -1;
}

static int out_of_memory(int w, int h, char *err, size_t err_len)
{
    snprintf(err, err_len, "contours: out of memory for a %dx%d map", w, h);
    return -1;
}

/* The contours in a w x h work image built here from a bitmap (nonzero) or, with bitmap NULL,
 * from map > thresh. */
static int find_built(const uint8_t *bitmap, const float *map, float thresh, int w, int h, struct contour_list *out,
                      char *err, size_t err_len)
{
    if (bad_size(w, h, out, err, err_len))
        return -1;
    int8_t *img = malloc(contour_work_bytes(w, h));
    if (!img)
        return out_of_memory(w, h, err, err_len);
    if (bitmap) {
        clear_border(img, w, h);
        for (int y = 0; y < h; y++) {
            int8_t *row = img + (size_t)(y + 1) * ((size_t)w + 2) + 1;
            for (int x = 0; x < w; x++)
                row[x] = bitmap[(size_t)y * w + x] != 0;
        }
    } else {
        contour_work_above(map, w, h, thresh, img);
    }
    int rc = find_in(img, w, h, out, err, err_len);
    free(img);
    return rc;
}

int contours_find(const uint8_t *bitmap, int w, int h, struct contour_list *out, char *err, size_t err_len)
{
    return find_built(bitmap, NULL, 0, w, h, out, err, err_len);
}

int contours_find_above(const float *map, int w, int h, float thresh, struct contour_list *out, char *err,
                        size_t err_len)
{
    return find_built(NULL, map, thresh, w, h, out, err, err_len);
}

int contours_find_in_work(int8_t *work, int w, int h, struct contour_list *out, char *err, size_t err_len)
{
    if (bad_size(w, h, out, err, err_len))
        return -1;
    return find_in(work, w, h, out, err, err_len);
}

/* Finds the contours of the work image img, labelling it. */
static int find_in(int8_t *img, int w, int h, struct contour_list *out, char *err, size_t err_len)
{
    ptrdiff_t step = (ptrdiff_t)w + 2;
    struct point_buffer pts = {0};
    size_t *starts = NULL, n_contours = 0, cap_contours = 0;

    ptrdiff_t deltas[16];
    for (int s = 0; s < 8; s++)
        deltas[s] = deltas[s + 8] = dir_dy[s] * step + dir_dx[s];

    for (int y = 1; y <= h; y++) {
        int8_t *row = img + y * step;
        int prev = 0;
        for (int x = 1; x <= w; x++) {
            int p = row[x];
            if (p == prev) {
                /* most of a map is runs of one value: skip them 32, then 8 pixels at a time */
                const uint64_t run = 0x0101010101010101ull * (uint8_t)prev;
                while (x + 32 <= w && same_bytes32(row + x + 1, run))
                    x += 32;
                uint64_t next;
                while (x + 8 <= w && (memcpy(&next, row + x + 1, 8), next == run))
                    x += 8;
                continue;
            }
            int is_hole = 0;
            if (!(prev == 0 && p == 1)) {
                if (p != 0 || prev < 1) {
                    prev = p;
                    continue;
                }
                is_hole = 1;
            }
            if (n_contours + 1 >= cap_contours) {
                size_t cap = cap_contours ? cap_contours * 2 : 256;
                size_t *s = realloc(starts, cap * sizeof(*s));
                if (!s)
                    goto oom;
                starts = s;
                cap_contours = cap;
            }
            starts[n_contours++] = pts.len;
            if (follow_border(img, y * step + x - is_hole, x - is_hole, y, is_hole, deltas, &pts))
                goto oom;
            prev = row[x]; /* OpenCV resumes after re-reading the (now labelled) pixel */
        }
    }
    /* OpenCV links each new contour in front of the previous ones: reverse the discovery order. */
    out->points = malloc((pts.len ? pts.len : 1) * sizeof(*out->points));
    out->start = malloc((n_contours + 1) * sizeof(*out->start));
    if (!out->points || !out->start)
        goto oom;
    size_t pos = 0;
    for (size_t k = 0; k < n_contours; k++) {
        size_t src = n_contours - 1 - k;
        size_t begin = starts[src], end = src + 1 < n_contours ? starts[src + 1] : pts.len;
        out->start[k] = pos;
        memcpy(out->points + pos, pts.data + begin, (end - begin) * sizeof(*pts.data));
        pos += end - begin;
    }
    out->start[n_contours] = pos;
    out->count = n_contours;
    out->n_points = pos;
    free(pts.data);
    free(starts);
    return 0;

oom:
    free(pts.data);
    free(starts);
    contour_list_free(out);
    return out_of_memory(w, h, err, err_len);
}

void contour_list_free(struct contour_list *list)
{
    free(list->start);
    free(list->points);
    memset(list, 0, sizeof(*list));
}
