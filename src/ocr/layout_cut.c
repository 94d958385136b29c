/* Reading order by a recursive XY-cut over the line segments, in the page's own frame:
 *
 *   1. A region is split into columns at vertical gutters: runs of x that no segment crosses,
 *      with column text on both sides (long lines, or lines that do not pair up row by row, as a
 *      table's or a receipt's do). A gutter that a few segments cross (a title, an abstract, a
 *      footnote over both columns) still counts: those segments then cut the region into bands,
 *      read top to bottom, each band split into its columns in turn.
 *   2. A region without a gutter is split at its widest horizontal gap, top part first.
 *   3. What neither splits is a row: its segments are read left to right as one line.
 *
 * The rows come out in reading order, each tagged with the column (the branch of the cut) it was
 * read in. */
#include "ocr/layout_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Horizontal gaps are looked for between the segments' cores: their middle, this share of their
 * height either side of the centre, since neighbouring lines' boxes touch or overlap. */
#define CORE_HALF 0.25
/* The narrowest column gutter. */
#define GUTTER_MIN 0.25
/* Column text: its segments are at least this long, as a median. */
#define COLUMN_LINE_MIN 8.0

/* ---- columns ------------------------------------------------------------------------------- */

static double median_length(const struct seg *segs, const int *idx, int n, double *scratch)
{
    for (int i = 0; i < n; i++)
        scratch[i] = (segs[idx[i]].x1 - segs[idx[i]].x0) / segs[idx[i]].h;
    return layout_median(scratch, n);
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
    return layout_median(scratch, n);
}

/* The region's rows when nothing splits it: segments grouped by shared height, rows top to
 * bottom, each left to right. */
static void read_rows(struct cut_ctx *c, int *idx, int n, int column)
{
    const struct seg *segs = c->segs;
    layout_sort_idx(segs, idx, n, 0);
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
        layout_sort_idx(segs, &idx[done], count, 1);
        struct row *rw = &c->rows[c->n_rows++];
        *rw = (struct row){.first = c->n_ordered,
                           .count = count,
                           .column = column,
                           .x0 = INFINITY,
                           .x1 = -INFINITY,
                           .y0 = INFINITY,
                           .y1 = -INFINITY};
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
    layout_sort_idx(segs, idx, n, 0);
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
    layout_cut(c, idx, at, column);
    layout_cut(c, idx + at, n - at, column);
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
static int cut_columns(struct cut_ctx *c, int *idx, int n, double hm, int *cuts, double *scratch, struct gutter *runs,
                       int max_runs)
{
    const struct seg *segs = c->segs;
    layout_sort_idx(segs, idx, n, 1);
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
        layout_cut(c, idx + from, to - from, c->n_columns++);
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
    layout_sort_idx(segs, cross, nc, 0);
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
        layout_cut(c, idx + from, out - from, column);
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
static int cut_bands(struct cut_ctx *c, int *idx, int n, double hm, int *tmp, double *scratch, struct gutter *runs,
                     int max_runs, int column)
{
    const struct seg *segs = c->segs;
    int max_cross = n / 4 < 24 ? n / 4 : 24;
    for (int k = 1; k <= max_cross; k++) {
        layout_sort_idx(segs, idx, n, 1);
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
            layout_cut(c, idx, nl, c->n_columns++);
            layout_cut(c, idx + nl, n - nl, c->n_columns++);
            return 1;
        }
    }
    return 0;
}

void layout_cut(struct cut_ctx *c, int *idx, int n, int column)
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
