/* The whole page: its segments put in reading order (layout_cut.c, in the frame of layout_frame.c),
 * the segments of each row joined into one line, rows gathered into blocks (a column change, extra
 * space, a change of text height, no overlap with the row above) and blocks into paragraphs (a
 * first-line indent). */
#include "ocr/layout.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ocr/layout_internal.h"

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

/* ---- the whole page ------------------------------------------------------------------------ */

static void span_box(struct ppocr_span *s, const struct ppocr_line *lines)
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

int ocr_layout_single(struct ppocr_result *r)
{
    struct ppocr_span *par = calloc(1, sizeof(*par)), *block = calloc(1, sizeof(*block));
    if (!par || !block) {
        free(par);
        free(block);
        return -1;
    }
    free(r->paragraphs);
    free(r->blocks);
    *par = (struct ppocr_span){.first = 0, .count = r->n_lines};
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
        layout_from_frame(f, corners[k][0], corners[k][1], &x, &y);
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
static int reserve_row(const struct cut_ctx *c, const struct row *rw, const struct ppocr_line *lines,
                       struct ppocr_line *out)
{
    if (rw->count == 1)
        return 0;
    size_t len = 1, n_words = 0;
    for (int i = 0; i < rw->count; i++) {
        const struct ppocr_line *l = &lines[c->segs[c->order[rw->first + i]].line];
        len += strlen(l->text) + 1;
        n_words += (size_t)l->n_words;
    }
    out->text = malloc(len);
    out->words = n_words ? malloc(n_words * sizeof(*out->words)) : NULL;
    return out->text && (!n_words || out->words) ? 0 : -1;
}

/* Joins a row's segments into out (reserved by reserve_row), taking their texts and words. */
static void join_row(const struct frame *f, const struct cut_ctx *c, const struct row *rw, struct ppocr_line *lines,
                     int width, int height, struct ppocr_line *out)
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
        struct ppocr_line *l = &lines[s->line];
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

static int make_spans(struct ppocr_result *r, const struct row *rows, int n_rows)
{
    struct ppocr_span *pars = malloc((size_t)n_rows * sizeof(*pars));
    struct ppocr_span *blocks = malloc((size_t)n_rows * sizeof(*blocks));
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
            blocks[n_blocks++] = (struct ppocr_span){.first = n_pars};
        }
        if (block || indented(&rows[i - 1], &rows[i], next && !starts_block(&rows[i], next) ? next : NULL)) {
            pars[n_pars++] = (struct ppocr_span){.first = i};
            blocks[n_blocks - 1].count++;
        }
        pars[n_pars - 1].count++;
    }
    for (int i = 0; i < n_pars; i++)
        span_box(&pars[i], r->lines);
    for (int b = 0; b < n_blocks; b++) {
        struct ppocr_span lines_of = {.first = pars[blocks[b].first].first};
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
static int mostly_vertical(const struct ppocr_result *r)
{
    int tall = 0;
    for (int i = 0; i < r->n_lines; i++) {
        const int(*b)[2] = r->lines[i].box;
        tall += dist(b[0], b[3]) >= 1.5 * dist(b[0], b[1]);
    }
    return 2 * tall > r->n_lines;
}

int ocr_layout_page(struct ppocr_result *r)
{
    int n = r->n_lines;
    if (n < 2 || mostly_vertical(r))
        return ocr_layout_single(r);
    struct frame f;
    if (layout_make_frame(r, &f))
        return -1;
    struct seg *segs = malloc((size_t)n * sizeof(*segs));
    int *idx = malloc((size_t)n * sizeof(*idx)), *order = malloc((size_t)n * sizeof(*order));
    struct row *rows = malloc((size_t)n * sizeof(*rows));
    struct ppocr_line *lines = NULL;
    int rc = -1;
    if (!segs || !idx || !order || !rows)
        goto done;
    for (int i = 0; i < n; i++) {
        layout_make_seg(&f, &r->lines[i], i, &segs[i]);
        idx[i] = i;
    }
    struct cut_ctx c = {.segs = segs, .order = order, .rows = rows, .n_columns = 1};
    layout_cut(&c, idx, n, 0);
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
