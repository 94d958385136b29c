/* Reading order by a recursive XY-cut over the line segments, in the page's own frame (turned
 * 180 degrees when most lines were read upside down, and deskewed by the lines' median angle):
 *
 *   1. A region is split into columns at vertical gutters: runs of x that no segment crosses,
 *      with column text on both sides (long lines, or lines that do not pair up row by row, as a
 *      table's or a receipt's do). A gutter that a few segments cross (a title, an abstract, a
 *      footnote over both columns) still counts: those segments then cut the region into bands,
 *      read top to bottom, each band split into its columns in turn.
 *   2. A region without a gutter is split at its widest horizontal gap, top part first.
 *   3. What neither splits is a row: its segments are read left to right as one line.
 *
 * Rows then gather into blocks (a column change, extra space, a change of text height, no
 * overlap with the row above) and blocks into paragraphs (a first-line indent). Lengths are
 * measured in text heights (a DB box's height), so the rules hold at any resolution. */
#include "ocr/layout.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Two segments share a row when their heights overlap by this share of the smaller one. */
#define ROW_OVERLAP 0.5
/* Horizontal gaps are looked for between the segments' cores: their middle, this share of their
 * height either side of the centre, since neighbouring lines' boxes touch or overlap. */
#define CORE_HALF 0.25
/* The narrowest column gutter. */
#define GUTTER_MIN 0.25
/* Column text: its segments are at least this long, as a median. */
#define COLUMN_LINE_MIN 8.0
/* Segments of one row further apart than this are joined by a tab instead of a space: fields (a
 * table's cells, a receipt's price). Nearer ones are words the detector split, whose boxes touch
 * or overlap, since a DB box reaches beyond its glyphs; but a segment of one character is a field
 * wherever it stands. */
#define TAB_GAP 0.75
/* A block ends where the next row starts further below than this, where the text height changes by
 * more than BLOCK_HEIGHT_RATIO, or where the next row does not overlap it horizontally. */
#define BLOCK_GAP 0.5
#define BLOCK_HEIGHT_RATIO 1.4
/* A paragraph starts at a row indented by more than this from the rows around it. */
#define INDENT 0.6
/* Skew below this (radians) is left alone, and above MAX_SKEW the lines' angles are not a skew. */
#define MIN_SKEW 0.002
#define MAX_SKEW 0.26

struct frame {
    int flip;           /* turned 180 degrees */
    double w, h;        /* the page's size */
    double cos_a, sin_a; /* the skew undone */
};

struct seg {
    double x0, x1, y0, y1; /* in the frame: x0..x1 along the line, y0..y1 = centre +- h/2 */
    double cy, h;
    int line;              /* index in the result's lines */
};

struct row {
    int first, count; /* in the ordered segment list */
    int column;       /* the column (XY-cut branch) it was read in */
    double x0, x1, y0, y1, h;
};

struct cut_ctx {
    const struct seg *segs;
    int *order;    /* segments in reading order, rows contiguous */
    int n_ordered;
    struct row *rows;
    int n_rows;
    int n_columns;
    int failed;
};

static void to_frame(const struct frame *f, double x, double y, double *u, double *v)
{
    if (f->flip) {
        x = f->w - 1 - x;
        y = f->h - 1 - y;
    }
    double dx = x - f->w / 2, dy = y - f->h / 2;
    *u = f->w / 2 + dx * f->cos_a + dy * f->sin_a;
    *v = f->h / 2 - dx * f->sin_a + dy * f->cos_a;
}

static void from_frame(const struct frame *f, double u, double v, double *x, double *y)
{
    double du = u - f->w / 2, dv = v - f->h / 2;
    *x = f->w / 2 + du * f->cos_a - dv * f->sin_a;
    *y = f->h / 2 + du * f->sin_a + dv * f->cos_a;
    if (f->flip) {
        *x = f->w - 1 - *x;
        *y = f->h - 1 - *y;
    }
}

static double dist(const int a[2], const int b[2])
{
    return hypot(a[0] - b[0], a[1] - b[1]);
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The median of n values, which it sorts. */
static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(*v), compare_doubles);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The frame the page is read in: turned over when most lines were read upside down, and turned
 * back by the median angle of its longer lines. */
static int make_frame(const struct ocr_result *r, struct frame *f)
{
    int upside_down = 0;
    for (int i = 0; i < r->n_lines; i++)
        upside_down += r->lines[i].upside_down != 0;
    *f = (struct frame){.flip = 2 * upside_down > r->n_lines, .w = r->width, .h = r->height, .cos_a = 1};
    double *angles = malloc(((size_t)r->n_lines + 1) * sizeof(*angles));
    if (!angles)
        return -1;
    int n = 0;
    for (int i = 0; i < r->n_lines; i++) {
        const int(*b)[2] = r->lines[i].box;
        double len = dist(b[0], b[1]), h = (dist(b[0], b[3]) + dist(b[1], b[2])) / 2;
        if (len < 3 * h)
            continue; /* too short for its angle to mean much */
        double a = atan2(b[1][1] - b[0][1], b[1][0] - b[0][0]);
        if (fabs(a) <= MAX_SKEW)
            angles[n++] = a;
    }
    if (n) {
        double a = median(angles, n);
        if (fabs(a) >= MIN_SKEW) {
            /* in the turned frame the same lines slope the same way */
            f->cos_a = cos(a);
            f->sin_a = sin(a);
        }
    }
    free(angles);
    return 0;
}

static void make_seg(const struct frame *f, const struct ocr_line *l, int index, struct seg *s)
{
    double u0 = INFINITY, u1 = -INFINITY, v0 = INFINITY, v1 = -INFINITY;
    for (int k = 0; k < 4; k++) {
        double u, v;
        to_frame(f, l->box[k][0], l->box[k][1], &u, &v);
        u0 = fmin(u0, u);
        u1 = fmax(u1, u);
        v0 = fmin(v0, v);
        v1 = fmax(v1, v);
    }
    s->h = fmax(1.0, (dist(l->box[0], l->box[3]) + dist(l->box[1], l->box[2])) / 2);
    s->cy = (v0 + v1) / 2;
    s->x0 = u0;
    s->x1 = u1;
    s->y0 = s->cy - s->h / 2;
    s->y1 = s->cy + s->h / 2;
    s->line = index;
}

static int same_row(const struct seg *a, const struct seg *b)
{
    double overlap = fmin(a->y1, b->y1) - fmax(a->y0, b->y0);
    return overlap >= ROW_OVERLAP * fmin(a->h, b->h);
}

/* ---- sorting segment indices by a key ------------------------------------------------------ */

/* qsort has no context argument: the segments being sorted, per thread (engines lay out their
 * pages side by side). */
static _Thread_local const struct seg *sort_segs;

static int by_x0(const void *a, const void *b)
{
    const struct seg *p = &sort_segs[*(const int *)a], *q = &sort_segs[*(const int *)b];
    return p->x0 < q->x0 ? -1 : p->x0 > q->x0 ? 1 : p->line - q->line;
}

static int by_cy(const void *a, const void *b)
{
    const struct seg *p = &sort_segs[*(const int *)a], *q = &sort_segs[*(const int *)b];
    return p->cy < q->cy ? -1 : p->cy > q->cy ? 1 : p->line - q->line;
}

static void sort_idx(const struct seg *segs, int *idx, int n, int by_x)
{
    sort_segs = segs;
    qsort(idx, (size_t)n, sizeof(*idx), by_x ? by_x0 : by_cy);
}

/* ---- columns ------------------------------------------------------------------------------- */

static double median_length(const struct seg *segs, const int *idx, int n, double *scratch)
{
    for (int i = 0; i < n; i++)
        scratch[i] = (segs[idx[i]].x1 - segs[idx[i]].x0) / segs[idx[i]].h;
    return median(scratch, n);
}

/* Whether the segments left and right of a gap read as two columns rather than as the cells of
 * rows (a table's, a receipt's item and price, a form's label and value). */
static int columns_apart(const struct seg *segs, const int *left, int n_left, const int *right, int n_right,
                         double *scratch)
{
    if (!n_left || !n_right)
        return 0;
    int long_left = median_length(segs, left, n_left, scratch) >= COLUMN_LINE_MIN;
    int long_right = median_length(segs, right, n_right, scratch) >= COLUMN_LINE_MIN;
    if (long_left && long_right)
        return 1;
    if (!(long_left || long_right) || n_left < 3 || n_right < 3)
        return 0;
    /* one side column text, the other not: columns when their rows do not pair up */
    const int *few = n_left <= n_right ? left : right, *many = n_left <= n_right ? right : left;
    int n_few = n_left <= n_right ? n_left : n_right, n_many = n_left <= n_right ? n_right : n_left;
    int paired = 0;
    for (int i = 0; i < n_few; i++)
        for (int j = 0; j < n_many; j++)
            if (same_row(&segs[few[i]], &segs[many[j]])) {
                paired++;
                break;
            }
    return 2 * paired < n_few;
}

struct gutter {
    double a, b; /* the run of x between the columns */
};

/* Runs of x at least GUTTER_MIN text heights wide that at most k segments cover at any point,
 * with segments on both sides; left to right, at most max_runs. sorted: idx sorted by x0. */
static int low_runs(const struct seg *segs, const int *sorted, int n, double hm, int k, struct gutter *runs,
                    int max_runs, double *ends)
{
    for (int i = 0; i < n; i++)
        ends[i] = segs[sorted[i]].x1;
    qsort(ends, (size_t)n, sizeof(*ends), compare_doubles);
    int i = 0, j = 0, cover = 0, n_runs = 0;
    double run_start = NAN;
    while (j < n) {
        int starts = i < n && segs[sorted[i]].x0 < ends[j];
        double x = starts ? segs[sorted[i]].x0 : ends[j];
        cover += starts ? 1 : -1;
        starts ? i++ : j++;
        if (cover <= k) {
            if (isnan(run_start) && i < n)
                run_start = x;
        } else if (!isnan(run_start)) {
            if (x - run_start >= GUTTER_MIN * hm && n_runs < max_runs)
                runs[n_runs++] = (struct gutter){run_start, x};
            run_start = NAN;
        }
    }
    return n_runs;
}

/* ---- the recursive cut --------------------------------------------------------------------- */

static double region_height(const struct seg *segs, const int *idx, int n, double *scratch)
{
    for (int i = 0; i < n; i++)
        scratch[i] = segs[idx[i]].h;
    return median(scratch, n);
}

static void cut(struct cut_ctx *c, int *idx, int n, int column);

/* The region's rows when nothing splits it: segments grouped by shared height, rows top to
 * bottom, each left to right. */
static void read_rows(struct cut_ctx *c, int *idx, int n, int column)
{
    const struct seg *segs = c->segs;
    sort_idx(segs, idx, n, 0);
    int done = 0;
    while (done < n) {
        /* the row of the highest segment left: every later segment that shares its height */
        int count = 1;
        for (int i = done + 1; i < n; i++)
            if (same_row(&segs[idx[done]], &segs[idx[i]])) {
                int t = idx[i];
                memmove(&idx[done + count + 1], &idx[done + count], (size_t)(i - done - count) * sizeof(*idx));
                idx[done + count++] = t;
            }
        sort_idx(segs, &idx[done], count, 1);
        struct row *rw = &c->rows[c->n_rows++];
        *rw = (struct row){.first = c->n_ordered, .count = count, .column = column,
                           .x0 = INFINITY, .x1 = -INFINITY, .y0 = INFINITY, .y1 = -INFINITY};
        double hsum = 0;
        for (int i = 0; i < count; i++) {
            const struct seg *s = &segs[idx[done + i]];
            c->order[c->n_ordered++] = idx[done + i];
            rw->x0 = fmin(rw->x0, s->x0);
            rw->x1 = fmax(rw->x1, s->x1);
            rw->y0 = fmin(rw->y0, s->y0);
            rw->y1 = fmax(rw->y1, s->y1);
            hsum += s->h;
        }
        rw->h = hsum / count;
        done += count;
    }
}

/* Splits at the widest gap between the segments' cores; 0 when there is none. */
static int cut_rows_apart(struct cut_ctx *c, int *idx, int n, int column)
{
    const struct seg *segs = c->segs;
    sort_idx(segs, idx, n, 0);
    /* sorted by centre, a gap lies between a prefix whose cores all end above the rest's start */
    double best = 0, reach = -INFINITY;
    int at = 0;
    double *top = malloc((size_t)n * sizeof(*top));
    if (!top) {
        c->failed = 1;
        return 1;
    }
    /* the lowest core top of every suffix */
    top[n - 1] = segs[idx[n - 1]].cy - CORE_HALF * segs[idx[n - 1]].h;
    for (int i = n - 1; i-- > 0;)
        top[i] = fmin(top[i + 1], segs[idx[i]].cy - CORE_HALF * segs[idx[i]].h);
    for (int i = 0; i + 1 < n; i++) {
        reach = fmax(reach, segs[idx[i]].cy + CORE_HALF * segs[idx[i]].h);
        if (top[i + 1] - reach > best) {
            best = top[i + 1] - reach;
            at = i + 1;
        }
    }
    free(top);
    if (!at)
        return 0;
    cut(c, idx, at, column);
    cut(c, idx + at, n - at, column);
    return 1;
}

/* The first of idx[from..n), sorted by x0, that starts at or after x. */
static int first_from(const struct seg *segs, const int *idx, int from, int n, double x)
{
    while (from < n && segs[idx[from]].x0 < x)
        from++;
    return from;
}

/* Splits into columns at every gutter that no segment crosses; 0 when there is none. */
static int cut_columns(struct cut_ctx *c, int *idx, int n, double hm, int *cuts, double *scratch,
                       struct gutter *runs, int max_runs)
{
    const struct seg *segs = c->segs;
    sort_idx(segs, idx, n, 1);
    int n_runs = low_runs(segs, idx, n, hm, 0, runs, max_runs, scratch);
    int n_cuts = 0, start = 0;
    for (int g = 0; g < n_runs; g++) {
        /* nothing crosses a run: sorted by x0, its left side is a prefix */
        int end = first_from(segs, idx, start, n, runs[g].b);
        int next = g + 1 < n_runs ? first_from(segs, idx, end, n, runs[g + 1].b) : n;
        if (end > start && next > end &&
            columns_apart(segs, &idx[start], end - start, &idx[end], next - end, scratch)) {
            cuts[n_cuts++] = end;
            start = end;
        }
    }
    if (!n_cuts)
        return 0;
    for (int p = 0, from = 0; p <= n_cuts; p++) {
        int to = p < n_cuts ? cuts[p] : n;
        cut(c, idx + from, to - from, c->n_columns++);
        from = to;
    }
    return 1;
}

/* tmp holds the region's segments left of a gutter (nl), crossing it (nc), then right of it. The
 * crossing segments cut the region into bands: what lies above the first, the first, what lies
 * between it and the next, ..., consecutive crossing segments with nothing between them making one
 * band. Each band is cut in turn, top to bottom. */
static int cut_at_crossings(struct cut_ctx *c, int *idx, int n, int *tmp, int nl, int nc, int column)
{
    const struct seg *segs = c->segs;
    int n_keys = 2 * nc + 1;
    int *key = malloc((size_t)n * sizeof(*key)), *count = calloc((size_t)n_keys, sizeof(*count));
    int *group = malloc((size_t)n_keys * sizeof(*group));
    if (!key || !count || !group) {
        free(key);
        free(count);
        free(group);
        c->failed = 1;
        return 1;
    }
    int *cross = &tmp[nl];
    sort_idx(segs, cross, nc, 0);
    /* band 2m: above crossing segment m (in order of height); band 2m + 1: segment m */
    for (int i = 0; i < n; i++) {
        if (i >= nl && i < nl + nc) {
            key[i] = 2 * (i - nl) + 1;
        } else {
            int m = 0;
            while (m < nc && segs[cross[m]].cy < segs[tmp[i]].cy)
                m++;
            key[i] = 2 * m;
        }
        count[key[i]]++;
    }
    int n_groups = 0, last_crossing = 0;
    for (int b = 0; b < n_keys; b++) {
        if (!count[b]) {
            group[b] = -1;
            continue;
        }
        int crossing = b % 2;
        group[b] = crossing && last_crossing ? n_groups - 1 : n_groups++;
        last_crossing = crossing;
    }
    int out = 0;
    for (int g = 0; g < n_groups; g++) {
        int from = out;
        for (int i = 0; i < n; i++)
            if (group[key[i]] == g)
                idx[out++] = tmp[i];
        cut(c, idx + from, out - from, column);
    }
    free(key);
    free(count);
    free(group);
    return 1;
}

/* Whether a segment crossing a gutter has both columns' text close above and below it: a line of
 * one column that runs into the gutter, or that the detector joined with its neighbour across it,
 * not a title or a footnote over both. */
static int inside_columns(const struct seg *segs, const int *side, int n_side, const struct seg *s)
{
    int above = 0, below = 0;
    for (int i = 0; i < n_side && !(above && below); i++) {
        const struct seg *t = &segs[side[i]];
        double reach = 1.5 * fmax(s->h, t->h);
        above |= t->cy < s->cy && s->y0 - t->y1 < reach;
        below |= t->cy > s->cy && t->y0 - s->y1 < reach;
    }
    return above && below;
}

/* tmp: *nl segments left of a gutter at x = a, *nc crossing it, nr right of it. The crossing
 * segments that sit inside the columns' text join the column they start in: tmp is sorted into
 * left, still crossing, right again, with *nl and *nc updated. */
static void keep_crossing_bands(const struct seg *segs, int *tmp, int *nl_io, int *nc_io, int nr, double a)
{
    const int nl = *nl_io, nc = *nc_io, n = nl + nc + nr;
    const int *left = tmp, *cross = tmp + nl, *right = tmp + nl + nc;
    int *sorted = malloc((size_t)n * sizeof(*sorted)), *joins = malloc((size_t)nc * sizeof(*joins));
    if (!sorted || !joins) {
        free(sorted);
        free(joins);
        return; /* all stay bands: that is still a reading order */
    }
    for (int i = 0; i < nc; i++) {
        const struct seg *s = &segs[cross[i]];
        joins[i] = inside_columns(segs, left, nl, s) && inside_columns(segs, right, nr, s) ? (s->x0 < a ? 1 : 2) : 0;
    }
    int at = 0;
    for (int i = 0; i < nl; i++)
        sorted[at++] = left[i];
    for (int kind = 1; kind >= 0; kind--) /* joining the left column, then still crossing */
        for (int i = 0; i < nc; i++)
            if (joins[i] == kind)
                sorted[at++] = cross[i];
    *nc_io = at;
    for (int i = 0; i < nc; i++)
        if (joins[i] == 2)
            sorted[at++] = cross[i];
    for (int i = 0; i < nr; i++)
        sorted[at++] = right[i];
    int joined_left = 0;
    for (int i = 0; i < nc; i++)
        joined_left += joins[i] == 1;
    *nl_io = nl + joined_left;
    *nc_io -= *nl_io;
    memcpy(tmp, sorted, (size_t)n * sizeof(*tmp));
    free(sorted);
    free(joins);
}

/* Splits at a gutter that a few segments cross: those cut the region into bands, read top to
 * bottom (each band split into its columns in turn); 0 when there is no such gutter. */
static int cut_bands(struct cut_ctx *c, int *idx, int n, double hm, int *tmp, double *scratch,
                     struct gutter *runs, int max_runs, int column)
{
    const struct seg *segs = c->segs;
    int max_cross = n / 4 < 24 ? n / 4 : 24;
    for (int k = 1; k <= max_cross; k++) {
        sort_idx(segs, idx, n, 1);
        int n_runs = low_runs(segs, idx, n, hm, k, runs, max_runs, scratch);
        for (int g = 0; g < n_runs; g++) {
            /* idx: left of the run, crossing it, right of it */
            int count[3] = {0}, at = 0;
            for (int side = 0; side < 3; side++)
                for (int i = 0; i < n; i++) {
                    const struct seg *s = &segs[idx[i]];
                    if ((s->x1 <= runs[g].a ? 0 : s->x0 >= runs[g].b ? 2 : 1) == side) {
                        tmp[at++] = idx[i];
                        count[side]++;
                    }
                }
            int nl = count[0], nc = count[1], nr = count[2];
            int fewer = nl < nr ? nl : nr;
            if (!nc || 2 * nc > fewer || !columns_apart(segs, tmp, nl, &tmp[nl + nc], nr, scratch))
                continue;
            keep_crossing_bands(segs, tmp, &nl, &nc, nr, runs[g].a);
            if (nc)
                return cut_at_crossings(c, idx, n, tmp, nl, nc, column);
            /* every crossing segment belonged to a column: the gutter splits the region */
            memcpy(idx, tmp, (size_t)n * sizeof(*idx));
            cut(c, idx, nl, c->n_columns++);
            cut(c, idx + nl, n - nl, c->n_columns++);
            return 1;
        }
    }
    return 0;
}

static void cut(struct cut_ctx *c, int *idx, int n, int column)
{
    if (c->failed || n == 0)
        return;
    if (n == 1) {
        read_rows(c, idx, n, column);
        return;
    }
    int max_runs = n + 1;
    int *tmp = malloc((size_t)n * sizeof(*tmp));
    double *scratch = malloc((size_t)n * sizeof(*scratch));
    struct gutter *runs = malloc((size_t)max_runs * sizeof(*runs));
    if (!tmp || !scratch || !runs) {
        c->failed = 1;
    } else {
        double hm = region_height(c->segs, idx, n, scratch);
        if (!cut_columns(c, idx, n, hm, tmp, scratch, runs, max_runs) &&
            !cut_bands(c, idx, n, hm, tmp, scratch, runs, max_runs, column) && !cut_rows_apart(c, idx, n, column))
            read_rows(c, idx, n, column);
    }
    free(tmp);
    free(scratch);
    free(runs);
}

/* ---- the whole page ------------------------------------------------------------------------ */

static void span_box(struct ocr_span *s, const struct ocr_line *lines)
{
    s->x0 = s->y0 = INT_MAX;
    s->x1 = s->y1 = INT_MIN;
    for (int i = s->first; i < s->first + s->count; i++)
        for (int k = 0; k < 4; k++) {
            const int *p = lines[i].box[k];
            s->x0 = p[0] < s->x0 ? p[0] : s->x0;
            s->y0 = p[1] < s->y0 ? p[1] : s->y0;
            s->x1 = p[0] > s->x1 ? p[0] : s->x1;
            s->y1 = p[1] > s->y1 ? p[1] : s->y1;
        }
    if (!s->count)
        s->x0 = s->y0 = s->x1 = s->y1 = 0;
}

int ocr_layout_single(struct ocr_result *r)
{
    struct ocr_span *par = calloc(1, sizeof(*par)), *block = calloc(1, sizeof(*block));
    if (!par || !block) {
        free(par);
        free(block);
        return -1;
    }
    free(r->paragraphs);
    free(r->blocks);
    *par = (struct ocr_span){.first = 0, .count = r->n_lines};
    span_box(par, r->lines);
    *block = *par;
    block->count = 1;
    r->paragraphs = par;
    r->blocks = block;
    r->n_paragraphs = r->n_blocks = 1;
    return 0;
}

/* ---- rows into lines ----------------------------------------------------------------------- */

static size_t code_points(const char *s, size_t len)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++)
        n += ((unsigned char)s[i] & 0xc0) != 0x80;
    return n;
}

/* The quad around a row in the frame, in the image's coordinates, clockwise from its top-left. */
static void row_box(const struct frame *f, const struct row *rw, int width, int height, int box[4][2])
{
    const double corners[4][2] = {{rw->x0, rw->y0}, {rw->x1, rw->y0}, {rw->x1, rw->y1}, {rw->x0, rw->y1}};
    int pts[4][2], first = 0;
    for (int k = 0; k < 4; k++) {
        double x, y;
        from_frame(f, corners[k][0], corners[k][1], &x, &y);
        long xi = lround(x), yi = lround(y);
        pts[k][0] = (int)(xi < 0 ? 0 : xi >= width ? width - 1 : xi);
        pts[k][1] = (int)(yi < 0 ? 0 : yi >= height ? height - 1 : yi);
        if (pts[k][0] + pts[k][1] < pts[first][0] + pts[first][1])
            first = k;
    }
    for (int k = 0; k < 4; k++) {
        box[k][0] = pts[(first + k) % 4][0];
        box[k][1] = pts[(first + k) % 4][1];
    }
}

/* The room a row's joined line needs, allocated before any segment is taken so that a failure
 * leaves the result as it was. A row of one segment needs none: the segment's line is moved. */
static int reserve_row(const struct cut_ctx *c, const struct row *rw, const struct ocr_line *lines,
                       struct ocr_line *out)
{
    if (rw->count == 1)
        return 0;
    size_t len = 1, n_words = 0;
    for (int i = 0; i < rw->count; i++) {
        const struct ocr_line *l = &lines[c->segs[c->order[rw->first + i]].line];
        len += strlen(l->text) + 1;
        n_words += (size_t)l->n_words;
    }
    out->text = malloc(len);
    out->words = n_words ? malloc(n_words * sizeof(*out->words)) : NULL;
    return out->text && (!n_words || out->words) ? 0 : -1;
}

/* Joins a row's segments into out (reserved by reserve_row), taking their texts and words. */
static void join_row(const struct frame *f, const struct cut_ctx *c, const struct row *rw, struct ocr_line *lines,
                     int width, int height, struct ocr_line *out)
{
    const struct seg *segs = c->segs;
    const int *order = &c->order[rw->first];
    if (rw->count == 1) {
        *out = lines[segs[order[0]].line];
        memset(&lines[segs[order[0]].line], 0, sizeof(*lines));
        /* without the spaces the recogniser may read at its ends, as a joined row */
        size_t n = strlen(out->text), skip = strspn(out->text, " ");
        while (n > skip && out->text[n - 1] == ' ')
            n--;
        memmove(out->text, out->text + skip, n - skip);
        out->text[n - skip] = 0;
        return;
    }
    char *text = out->text;
    double score = 0, weight = 0;
    int upside_down = 0;
    size_t at = 0, prev_chars = 0;
    out->n_words = 0;
    for (int i = 0; i < rw->count; i++) {
        const struct seg *s = &segs[order[i]];
        struct ocr_line *l = &lines[s->line];
        /* the segment's text without the spaces the recogniser may read at its ends */
        const char *from = l->text;
        size_t n = strlen(from);
        while (n && *from == ' ') {
            from++;
            n--;
        }
        while (n && from[n - 1] == ' ')
            n--;
        if (n && at) {
            const struct seg *prev = &segs[order[i - 1]];
            /* a lone character is a field of its own: a mark, a checkbox, a count in a column */
            int lone = code_points(from, n) == 1 || prev_chars == 1;
            text[at++] = lone || s->x0 - prev->x1 > TAB_GAP * fmax(s->h, prev->h) ? '\t' : ' ';
        }
        memcpy(text + at, from, n);
        at += n;
        size_t chars = code_points(from, n);
        if (n)
            prev_chars = chars;
        double w = (double)chars;
        score += l->score * w;
        weight += w;
        upside_down += l->upside_down != 0;
        if (l->n_words)
            memcpy(&out->words[out->n_words], l->words, (size_t)l->n_words * sizeof(*l->words));
        out->n_words += l->n_words;
        if (i == 0)
            out->score = l->score;
        free(l->text);
        free(l->words);
        memset(l, 0, sizeof(*l));
    }
    text[at] = 0;
    if (weight > 0)
        out->score = (float)(score / weight);
    out->upside_down = 2 * upside_down > rw->count;
    row_box(f, rw, width, height, out->box);
}

/* ---- paragraphs and blocks ----------------------------------------------------------------- */

static int starts_block(const struct row *p, const struct row *q)
{
    double h = fmax(p->h, q->h);
    return q->column != p->column || q->y0 - p->y1 > BLOCK_GAP * h || q->y1 < p->y0 ||
           h > BLOCK_HEIGHT_RATIO * fmin(p->h, q->h) || fmin(p->x1, q->x1) <= fmax(p->x0, q->x0);
}

/* A first-line indent: q sits further right than the row before it and the row after it. */
static int indented(const struct row *p, const struct row *q, const struct row *next)
{
    double h = fmax(p->h, q->h);
    return q->x0 - p->x0 > INDENT * h && next && !starts_block(q, next) && q->x0 - next->x0 > INDENT * h;
}

static int make_spans(struct ocr_result *r, const struct row *rows, int n_rows)
{
    struct ocr_span *pars = malloc((size_t)n_rows * sizeof(*pars));
    struct ocr_span *blocks = malloc((size_t)n_rows * sizeof(*blocks));
    if (!pars || !blocks) {
        free(pars);
        free(blocks);
        return -1;
    }
    int n_pars = 0, n_blocks = 0;
    for (int i = 0; i < n_rows; i++) {
        const struct row *next = i + 1 < n_rows ? &rows[i + 1] : NULL;
        int block = i == 0 || starts_block(&rows[i - 1], &rows[i]);
        if (block) {
            blocks[n_blocks++] = (struct ocr_span){.first = n_pars};
        }
        if (block || indented(&rows[i - 1], &rows[i], next && !starts_block(&rows[i], next) ? next : NULL)) {
            pars[n_pars++] = (struct ocr_span){.first = i};
            blocks[n_blocks - 1].count++;
        }
        pars[n_pars - 1].count++;
    }
    for (int i = 0; i < n_pars; i++)
        span_box(&pars[i], r->lines);
    for (int b = 0; b < n_blocks; b++) {
        struct ocr_span lines_of = {.first = pars[blocks[b].first].first};
        for (int i = 0; i < blocks[b].count; i++)
            lines_of.count += pars[blocks[b].first + i].count;
        span_box(&lines_of, r->lines);
        blocks[b].x0 = lines_of.x0;
        blocks[b].y0 = lines_of.y0;
        blocks[b].x1 = lines_of.x1;
        blocks[b].y1 = lines_of.y1;
    }
    free(r->paragraphs);
    free(r->blocks);
    r->paragraphs = pars;
    r->n_paragraphs = n_pars;
    r->blocks = blocks;
    r->n_blocks = n_blocks;
    return 0;
}

/* Text running up or down the page (most boxes taller than wide by half): its order is left as
 * the pipeline gave it. */
static int mostly_vertical(const struct ocr_result *r)
{
    int tall = 0;
    for (int i = 0; i < r->n_lines; i++) {
        const int(*b)[2] = r->lines[i].box;
        tall += dist(b[0], b[3]) >= 1.5 * dist(b[0], b[1]);
    }
    return 2 * tall > r->n_lines;
}

int ocr_layout_page(struct ocr_result *r)
{
    int n = r->n_lines;
    if (n < 2 || mostly_vertical(r))
        return ocr_layout_single(r);
    struct frame f;
    if (make_frame(r, &f))
        return -1;
    struct seg *segs = malloc((size_t)n * sizeof(*segs));
    int *idx = malloc((size_t)n * sizeof(*idx)), *order = malloc((size_t)n * sizeof(*order));
    struct row *rows = malloc((size_t)n * sizeof(*rows));
    struct ocr_line *lines = NULL;
    int rc = -1;
    if (!segs || !idx || !order || !rows)
        goto done;
    for (int i = 0; i < n; i++) {
        make_seg(&f, &r->lines[i], i, &segs[i]);
        idx[i] = i;
    }
    struct cut_ctx c = {.segs = segs, .order = order, .rows = rows, .n_columns = 1};
    cut(&c, idx, n, 0);
    if (c.failed)
        goto done;
    lines = calloc((size_t)c.n_rows, sizeof(*lines));
    if (!lines)
        goto done;
    for (int i = 0; i < c.n_rows; i++)
        if (reserve_row(&c, &rows[i], r->lines, &lines[i])) {
            for (int j = 0; j <= i; j++) {
                free(lines[j].text);
                free(lines[j].words);
            }
            free(lines);
            goto done;
        }
    for (int i = 0; i < c.n_rows; i++)
        join_row(&f, &c, &rows[i], r->lines, r->width, r->height, &lines[i]);
    free(r->lines);
    r->lines = lines;
    r->n_lines = c.n_rows;
    rc = make_spans(r, rows, c.n_rows);
done:
    free(segs);
    free(idx);
    free(order);
    free(rows);
    return rc;
}
