#include "cli/check.h"
#include "cli/text_escape.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The diff's matrix of choices, one byte a cell: past this many cells (4096 lines on each side
 * after the common start and end), the two lists are too far apart for a diff to be read. */
#define ALIGN_MAX_CELLS (1L << 24)
/* Lines pair when the rectangles around their boxes overlap by this much (or every corner is
 * within the box limit, for a box of no area). */
#define PAIR_MIN_IOU 0.5
/* Comparisons of printed decimals: a golden number read back is not the double it was made from. */
#define NUMBER_SLACK 1e-9

enum step { PAIR, MISSING, EXTRA };

struct op {
    enum step step;
    int g, r; /* golden line, result line */
};

/* The score as --format json writes it (5 decimals), so that a golden made by this very build
 * compares equal even with --check-score 0. */
static double written_score(float score)
{
    char s[32];
    snprintf(s, sizeof(s), "%.5f", score);
    return strtod(s, NULL);
}

static int text_equal(const struct cli_golden_line *g, const char *text)
{
    return strlen(text) == g->text_len && !memcmp(text, g->text, g->text_len);
}

static double rect_iou(const double a[4][2], const int b[4][2])
{
    double ax0 = a[0][0], ax1 = a[0][0], ay0 = a[0][1], ay1 = a[0][1];
    double bx0 = b[0][0], bx1 = b[0][0], by0 = b[0][1], by1 = b[0][1];
    for (int k = 1; k < 4; k++) {
        ax0 = fmin(ax0, a[k][0]), ax1 = fmax(ax1, a[k][0]), ay0 = fmin(ay0, a[k][1]), ay1 = fmax(ay1, a[k][1]);
        bx0 = fmin(bx0, b[k][0]), bx1 = fmax(bx1, b[k][0]), by0 = fmin(by0, b[k][1]), by1 = fmax(by1, b[k][1]);
    }
    double iw = fmin(ax1, bx1) - fmax(ax0, bx0), ih = fmin(ay1, by1) - fmax(ay0, by0);
    if (iw <= 0 || ih <= 0)
        return 0;
    double inter = iw * ih, uni = (ax1 - ax0) * (ay1 - ay0) + (bx1 - bx0) * (by1 - by0) - inter;
    return uni > 0 ? inter / uni : 0;
}

/* The corner (0-3) farthest from the golden's, and how far: the larger of its x and y offsets. */
static double worst_corner(const double g[4][2], const int r[4][2], int *corner)
{
    double worst = -1;
    for (int k = 0; k < 4; k++) {
        double d = fmax(fabs(r[k][0] - g[k][0]), fabs(r[k][1] - g[k][1]));
        if (d > worst) {
            worst = d;
            *corner = k;
        }
    }
    return worst;
}

/* How well golden line g and result line r pair: 0 not at all, 2 by position, 3 by position and text. */
static int pair_weight(const struct cli_golden_line *g, const struct ppocr_line *r, const struct cli_check_limits *lim)
{
    int corner;
    if (rect_iou(g->box, r->box) < PAIR_MIN_IOU && worst_corner(g->box, r->box, &corner) > lim->box_px + NUMBER_SLACK)
        return 0;
    return 2 + text_equal(g, r->text);
}

/* Code points of s (a byte that is not well-formed UTF-8 counts as one). Returns the count, or
 * -1 when out of memory; *out to be freed. */
static long code_points(const char *s, size_t len, uint32_t **out)
{
    uint32_t *cp = malloc((len ? len : 1) * sizeof(*cp));
    if (!cp)
        return -1;
    long n = 0;
    const unsigned char *p = (const unsigned char *)s, *end = p + len;
    while (p < end) {
        size_t k = cli_utf8_next(p, end, &cp[n]);
        if (!k) {
            cp[n] = 0x80000000u | *p; /* apart from every code point */
            k = 1;
        }
        p += k;
        n++;
    }
    *out = cp;
    return n;
}

/* The Levenshtein distance in code points, or limit + 1 once it is known to exceed limit. */
static long edit_distance(const char *a, size_t a_len, const char *b, size_t b_len, long limit)
{
    uint32_t *x = NULL, *y = NULL;
    long *row = NULL, n = code_points(a, a_len, &x), m = code_points(b, b_len, &y), result = limit + 1;
    if (n < 0 || m < 0 || labs(n - m) > limit || !(row = malloc((size_t)(m + 1) * sizeof(*row))))
        goto done;
    for (long j = 0; j <= m; j++)
        row[j] = j;
    for (long i = 1; i <= n; i++) {
        long diag = row[0], best = row[0] = i;
        for (long j = 1; j <= m; j++) {
            long up = row[j];
            long d = diag + (x[i - 1] != y[j - 1]);
            d = d < up + 1 ? d : up + 1;
            d = d < row[j - 1] + 1 ? d : row[j - 1] + 1;
            row[j] = d;
            diag = up;
            best = d < best ? d : best;
        }
        if (best > limit) /* every later row only grows from here */
            goto done;
    }
    result = row[m] <= limit ? row[m] : limit + 1;
done:
    free(x);
    free(y);
    free(row);
    return result;
}

/* The diff of the two line lists: the common start and end, where lines pair with equal texts,
 * then the alignment of the rest that pairs the most lines (weighted by pair_weight). Returns the
 * number of steps in ops (room for n_golden + n_result), or -1 when the rest is too large to
 * align (or memory ran out). */
static int align_lines(const struct cli_golden_page *golden, const struct ppocr_result *result,
                       const struct cli_check_limits *lim, struct op *ops)
{
    const int n = golden->n_lines, m = result->n_lines;
    int head = 0, tail = 0;
    while (head < n && head < m && pair_weight(&golden->lines[head], &result->lines[head], lim) == 3)
        head++;
    while (tail < n - head && tail < m - head &&
           pair_weight(&golden->lines[n - 1 - tail], &result->lines[m - 1 - tail], lim) == 3)
        tail++;
    const long a = n - head - tail, b = m - head - tail;
    if (a * b > ALIGN_MAX_CELLS)
        return -1;
    unsigned char *choice = malloc(a * b > 0 ? (size_t)(a * b) : 1);
    long *prev = calloc((size_t)b + 1, sizeof(long)), *cur = calloc((size_t)b + 1, sizeof(long));
    int n_ops = -1;
    if (!choice || !prev || !cur)
        goto done;
    /* best[i][j]: the weight of the best alignment of the first i and j lines of the middle */
    for (long j = 0; j <= b; j++)
        prev[j] = 0;
    for (long i = 1; i <= a; i++) {
        cur[0] = 0;
        for (long j = 1; j <= b; j++) {
            int w = pair_weight(&golden->lines[head + i - 1], &result->lines[head + j - 1], lim);
            long best = prev[j];
            unsigned char pick = MISSING;
            if (cur[j - 1] > best) {
                best = cur[j - 1];
                pick = EXTRA;
            }
            if (w && prev[j - 1] + w >= best) {
                best = prev[j - 1] + w;
                pick = PAIR;
            }
            cur[j] = best;
            choice[(i - 1) * b + (j - 1)] = pick;
        }
        long *t = prev;
        prev = cur;
        cur = t;
    }
    /* the middle's steps, found backwards and written from the end of its room */
    n_ops = 0;
    for (int k = 0; k < head; k++)
        ops[n_ops++] = (struct op){PAIR, k, k};
    int end = n_ops + (int)(a + b), w = end;
    long i = a, j = b;
    while (i > 0 || j > 0) {
        enum step s = i == 0 ? EXTRA : j == 0 ? MISSING : (enum step)choice[(i - 1) * b + (j - 1)];
        ops[--w] = (struct op){s, s == EXTRA ? -1 : head + (int)i - 1, s == MISSING ? -1 : head + (int)j - 1};
        i -= s != EXTRA;
        j -= s != MISSING;
    }
    /* a pair is one step for two lines: close the gap the room left */
    memmove(&ops[n_ops], &ops[w], (size_t)(end - w) * sizeof(*ops));
    n_ops += end - w;
    for (int k = 0; k < tail; k++)
        ops[n_ops++] = (struct op){PAIR, n - tail + k, m - tail + k};
done:
    free(choice);
    free(prev);
    free(cur);
    return n_ops;
}

static void put_box_int(struct cli_buf *out, const int box[4][2])
{
    for (int k = 0; k < 4; k++)
        cli_buf_printf(out, "%s%d,%d", k ? " " : "", box[k][0], box[k][1]);
}

static void put_box_double(struct cli_buf *out, const double box[4][2])
{
    for (int k = 0; k < 4; k++)
        cli_buf_printf(out, "%s%g,%g", k ? " " : "", box[k][0], box[k][1]);
}

/* "LABEL: " at the start of a diff line */
static void begin(struct cli_buf *out, const char *label)
{
    cli_put_line_text(out, label);
    cli_buf_printf(out, ": ");
}

/* "line G" of the golden, with the result's number where it differs */
static void begin_line(struct cli_buf *out, const char *label, int g, int r)
{
    begin(out, label);
    cli_buf_printf(out, "line %d", g + 1);
    if (g != r)
        cli_buf_printf(out, " (line %d here)", r + 1);
    cli_buf_printf(out, ": ");
}

/* The golden's text as a JSON string: a \u0000 in it stays visible. */
static void put_golden_text(struct cli_buf *out, const struct cli_golden_line *g)
{
    if (strlen(g->text) == g->text_len) {
        cli_put_json_string(out, g->text);
        return;
    }
    cli_buf_printf(out, "\"");
    for (const char *p = g->text, *end = g->text + g->text_len; p < end; p += strlen(p) + 1) {
        struct cli_buf piece = {0};
        cli_put_json_string(&piece, p);
        if (piece.len >= 2)
            cli_buf_append(out, piece.data + 1, piece.len - 2);
        cli_buf_free(&piece);
        if (p + strlen(p) < end)
            cli_buf_printf(out, "\\u0000");
    }
    cli_buf_printf(out, "\"");
}

/* Compares one pair; returns the differences printed. */
static int compare_pair(struct cli_buf *out, const char *label, int gi, int ri, const struct cli_golden_line *g,
                        const struct ppocr_line *r, const struct cli_check_limits *lim, struct cli_check_stats *st)
{
    int diffs = 0;
    if (!text_equal(g, r->text)) {
        long edits =
            lim->text_edits ? edit_distance(g->text, g->text_len, r->text, strlen(r->text), lim->text_edits) : 1;
        if (edits <= lim->text_edits) {
            st->text_within++;
        } else {
            begin_line(out, label, gi, ri);
            cli_buf_printf(out, "text ");
            cli_put_json_string(out, r->text);
            cli_buf_printf(out, " != golden ");
            put_golden_text(out, g);
            if (lim->text_edits)
                cli_buf_printf(out, ": over %d edits", lim->text_edits);
            cli_buf_printf(out, "\n");
            diffs++;
        }
    }
    int corner = 0;
    double off = worst_corner(g->box, r->box, &corner);
    st->max_corner_px = fmax(st->max_corner_px, off);
    if (off > lim->box_px + NUMBER_SLACK) {
        begin_line(out, label, gi, ri);
        cli_buf_printf(out, "box corner %d at %d,%d != golden %g,%g: off by %g px (limit %g)\n", corner + 1,
                       r->box[corner][0], r->box[corner][1], g->box[corner][0], g->box[corner][1], off, lim->box_px);
        diffs++;
    }
    double score = written_score(r->score), score_off = fabs(score - g->score);
    st->max_score = fmax(st->max_score, score_off);
    if (score_off > lim->score + NUMBER_SLACK) {
        begin_line(out, label, gi, ri);
        cli_buf_printf(out, "score %.5f != golden %.5f: off by %.5f (limit %g)\n", score, g->score, score_off,
                       lim->score);
        diffs++;
    }
    st->lines_differing += diffs > 0;
    return diffs;
}

/* Whether a line of this score may be kept on one device and dropped on another. */
static int near_drop_score(double score, const struct cli_check_limits *lim)
{
    return score < lim->drop_score + lim->score;
}

static void add_stats(struct cli_check_stats *to, const struct cli_check_stats *s)
{
    to->images += s->images;
    to->matching += s->matching;
    to->differing += s->differing;
    to->lines_differing += s->lines_differing;
    to->missing += s->missing;
    to->extra += s->extra;
    to->borderline += s->borderline;
    to->text_within += s->text_within;
    to->max_corner_px = fmax(to->max_corner_px, s->max_corner_px);
    to->max_score = fmax(to->max_score, s->max_score);
}

int cli_check_page(struct cli_buf *out, const char *label, const struct cli_golden_page *golden,
                   const struct ppocr_result *result, const struct cli_check_limits *lim, struct cli_check_stats *stats)
{
    struct cli_check_stats st = {.images = 1};
    int diffs = 0;
    if (golden->width >= 0 && golden->height >= 0 &&
        (golden->width != result->width || golden->height != result->height)) {
        begin(out, label);
        cli_buf_printf(out, "image %dx%d != golden %dx%d\n", result->width, result->height, golden->width,
                       golden->height);
        diffs++;
    }
    struct op *ops = malloc(((size_t)golden->n_lines + (size_t)result->n_lines + 1) * sizeof(*ops));
    int n_ops = ops ? align_lines(golden, result, lim, ops) : -1;
    if (n_ops < 0) {
        begin(out, label);
        cli_buf_printf(out, "%d lines, golden %d: %s\n", result->n_lines, golden->n_lines,
                       ops ? "too different to align line by line" : "out of memory aligning them");
        diffs++;
    }
    for (int k = 0; k < n_ops; k++) {
        const struct op *op = &ops[k];
        if (op->step == PAIR) {
            diffs += compare_pair(out, label, op->g, op->r, &golden->lines[op->g], &result->lines[op->r], lim, &st);
            continue;
        }
        const int missing = op->step == MISSING;
        const double score = missing ? golden->lines[op->g].score : written_score(result->lines[op->r].score);
        if (near_drop_score(score, lim)) {
            st.borderline++;
            continue;
        }
        begin(out, label);
        if (missing) {
            const struct cli_golden_line *g = &golden->lines[op->g];
            cli_buf_printf(out, "line %d missing: golden ", op->g + 1);
            put_golden_text(out, g);
            cli_buf_printf(out, " (score %.5f, box ", g->score);
            put_box_double(out, g->box);
            st.missing++;
        } else {
            const struct ppocr_line *r = &result->lines[op->r];
            cli_buf_printf(out, "extra line ");
            cli_put_json_string(out, r->text);
            cli_buf_printf(out, " (line %d here, score %.5f, box ", op->r + 1, score);
            put_box_int(out, r->box);
            st.extra++;
        }
        cli_buf_printf(out, ")\n");
        diffs++;
    }
    free(ops);
    st.matching = diffs == 0;
    st.differing = diffs != 0;
    if (stats)
        add_stats(stats, &st);
    return diffs;
}

int cli_check_open(struct cli_check *c, const struct cli_args *args, char *err, size_t err_len)
{
    memset(c, 0, sizeof(*c));
    c->path = args->check_golden;
    c->limits = (struct cli_check_limits){
        .box_px = args->check_px >= 0 ? args->check_px : CLI_CHECK_DEFAULT_PX,
        .score = args->check_score >= 0 ? args->check_score : CLI_CHECK_DEFAULT_SCORE,
        .text_edits = args->check_edits >= 0 ? args->check_edits : CLI_CHECK_DEFAULT_EDITS,
        .drop_score = args->ocr.drop_score,
    };
    if (cli_golden_load(c->path, &c->golden, err, err_len))
        return -1;
    c->compared = calloc((size_t)c->golden.n + 1, 1);
    if (!c->compared) {
        snprintf(err, err_len, "out of memory");
        cli_golden_free(&c->golden);
        return -1;
    }
    return 0;
}

void cli_check_item(const struct cli_check *c, struct cli_buf *out, const char *file, int page,
                    const struct ppocr_result *result, struct cli_check_item *item)
{
    memset(item, 0, sizeof(*item));
    item->golden_index = cli_golden_find(&c->golden, file, page);
    struct cli_buf label = {0};
    cli_buf_printf(&label, "%s", file);
    if (page)
        cli_buf_printf(&label, " page %d", page);
    const char *name = label.data ? label.data : file;
    if (item->golden_index < 0) {
        cli_put_line_text(out, name);
        cli_buf_printf(out, ": %s\n",
                       item->golden_index == -1 ? "no golden entry"
                                                : "several golden entries match its name by suffix");
        item->stats.images = item->stats.differing = 1;
        item->golden_index = -1;
    } else {
        cli_check_page(out, name, &c->golden.pages[item->golden_index], result, &c->limits, &item->stats);
    }
    cli_buf_free(&label);
}

void cli_check_count(struct cli_check *c, const struct cli_check_item *item)
{
    if (!item->stats.images) /* the input failed before it was compared */
        return;
    if (item->golden_index >= 0)
        c->compared[item->golden_index] = 1;
    add_stats(&c->totals, &item->stats);
}

void cli_check_summary(const struct cli_check *c, int failed, struct cli_buf *out)
{
    const struct cli_check_stats *t = &c->totals;
    cli_buf_printf(out, "check: %d %s, %d differ%s, %d failed, against ", t->matching,
                   t->matching == 1 ? "image matches" : "images match", t->differing, t->differing == 1 ? "s" : "",
                   failed);
    cli_put_line_text(out, c->path);
    cli_buf_printf(out, " (box corners within %g px, scores within %g, ", c->limits.box_px, c->limits.score);
    if (c->limits.text_edits)
        cli_buf_printf(out, "texts within %d edit%s", c->limits.text_edits, c->limits.text_edits == 1 ? "" : "s");
    else
        cli_buf_printf(out, "texts exact");
    cli_buf_printf(out, "; largest seen: %g px, score %.5f)", t->max_corner_px, t->max_score);
    if (t->text_within)
        cli_buf_printf(out, "; %d line%s within --check-edits", t->text_within, t->text_within == 1 ? "" : "s");
    if (t->borderline)
        cli_buf_printf(out, "; %d line%s near --drop-score came or went (allowed)", t->borderline,
                       t->borderline == 1 ? "" : "s");
    int not_compared = 0;
    for (int i = 0; i < c->golden.n; i++)
        not_compared += !c->compared[i];
    if (not_compared)
        cli_buf_printf(out, "; %d golden entr%s not among the inputs", not_compared, not_compared == 1 ? "y" : "ies");
    cli_buf_printf(out, "\n");
}

int cli_check_all_matched(const struct cli_check *c)
{
    return c->totals.differing == 0;
}

void cli_check_close(struct cli_check *c)
{
    cli_golden_free(&c->golden);
    free(c->compared);
    memset(c, 0, sizeof(*c));
}
