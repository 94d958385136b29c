#include "ocr/word_boxes.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The first code point of a character's UTF-8 bytes (the dictionary's entries are one each). */
static unsigned code_point(const char *s, size_t len)
{
    const unsigned char *u = (const unsigned char *)s;
    if (len == 0)
        return 0;
    if (u[0] < 0x80 || len < 2)
        return u[0];
    if ((u[0] & 0xE0) == 0xC0)
        return (u[0] & 0x1Fu) << 6 | (u[1] & 0x3Fu);
    if ((u[0] & 0xF0) == 0xE0 && len >= 3)
        return (u[0] & 0x0Fu) << 12 | (u[1] & 0x3Fu) << 6 | (u[2] & 0x3Fu);
    if ((u[0] & 0xF8) == 0xF0 && len >= 4)
        return (u[0] & 0x07u) << 18 | (u[1] & 0x3Fu) << 12 | (u[2] & 0x3Fu) << 6 | (u[3] & 0x3Fu);
    return u[0];
}

static int is_space(unsigned cp)
{
    return cp == ' ' || cp == '\t' || cp == 0x3000; /* 0x3000: the ideographic space */
}

int ocr_word_is_cjk(unsigned cp)
{
    return (cp >= 0x1100 && cp <= 0x11FF) || /* hangul jamo */
           (cp >= 0x2E80 && cp <= 0x9FFF) || /* radicals, CJK punctuation, kana, bopomofo, ideographs */
           (cp >= 0xA960 && cp <= 0xA97F) || /* hangul jamo extended-A */
           (cp >= 0xAC00 && cp <= 0xD7FF) || /* hangul syllables, jamo extended-B */
           (cp >= 0xF900 && cp <= 0xFAFF) || /* compatibility ideographs */
           (cp >= 0xFE30 && cp <= 0xFE4F) || /* compatibility forms */
           (cp >= 0xFF00 && cp <= 0xFFEF) || /* half-width and full-width forms */
           (cp >= 0x20000 && cp <= 0x3FFFF); /* supplementary ideographs */
}

static unsigned char_cp(const struct ctc_text *t, size_t k)
{
    return code_point(t->text + t->chars[k].at, t->chars[k].len);
}

size_t ocr_word_spans(const struct ctc_text *t, struct word_span *spans)
{
    size_t n = 0;
    int open = 0; /* spans[n - 1] is a word of several characters still growing */
    for (size_t k = 0; k < t->n_chars; k++) {
        unsigned cp = char_cp(t, k);
        if (is_space(cp)) {
            open = 0;
        } else if (ocr_word_is_cjk(cp)) {
            spans[n++] = (struct word_span){k, 1, 1};
            open = 0;
        } else if (open) {
            spans[n - 1].count++;
        } else {
            spans[n++] = (struct word_span){k, 1, 0};
            open = 1;
        }
    }
    return n;
}

/* The crop as the recogniser reads it: turned, so its width runs along the text. */
static double read_width(const struct word_geometry *g)
{
    return g->rotate ? g->crop_h : g->crop_w;
}

static double read_height(const struct word_geometry *g)
{
    return g->rotate ? g->crop_w : g->crop_h;
}

/* Where step boundary s (step t covers [t, t + 1)) lies along the read crop. */
static double step_x(const struct ctc_text *t, const struct word_geometry *g, double s)
{
    double x = s * g->input_w / (double)t->steps * read_width(g) / g->resized_w;
    return fmin(fmax(x, 0.0), read_width(g));
}

static double step_center(const struct ctc_text *t, const struct word_geometry *g, size_t k)
{
    return step_x(t, g, 0.5 * (t->chars[k].first + t->chars[k].last + 1.0));
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The pitch of the line's CJK characters: the median distance between the centres of two that
 * follow each other, or the crop's height (CJK glyphs are about square) when none do. */
static double cjk_pitch(const struct ctc_text *t, const struct word_geometry *g)
{
    size_t n = 0;
    double *d = malloc((t->n_chars ? t->n_chars : 1) * sizeof(*d));
    for (size_t k = 0; d && k + 1 < t->n_chars; k++)
        if (ocr_word_is_cjk(char_cp(t, k)) && ocr_word_is_cjk(char_cp(t, k + 1)))
            d[n++] = step_center(t, g, k + 1) - step_center(t, g, k);
    double pitch = read_height(g);
    if (n) {
        qsort(d, n, sizeof(*d), compare_doubles);
        pitch = n % 2 ? d[n / 2] : 0.5 * (d[n / 2 - 1] + d[n / 2]);
    }
    free(d);
    return pitch;
}

void ocr_word_extents(const struct ctc_text *t, const struct word_span *spans, size_t n, const struct word_geometry *g,
                      double *x0, double *x1)
{
    double pitch = -1, prev_end = 0;
    for (size_t i = 0; i < n; i++) {
        const struct ctc_char *a = &t->chars[spans[i].first], *b = &t->chars[spans[i].first + spans[i].count - 1];
        /* the word's own steps, and the reach of its glyphs beyond them */
        double start = step_x(t, g, a->first), end = step_x(t, g, b->last + 1.0);
        if (spans[i].cjk) {
            if (pitch < 0)
                pitch = cjk_pitch(t, g);
            double c = step_center(t, g, spans[i].first);
            x0[i] = fmin(fmax(c - 0.5 * pitch, 0.0), start);
            x1[i] = fmax(fmin(c + 0.5 * pitch, read_width(g)), end);
        } else {
            x0[i] = step_x(t, g, a->first - OCR_WORD_REACH_BEFORE);
            x1[i] = step_x(t, g, b->last + 1.0 + OCR_WORD_REACH_AFTER);
        }
        if (i > 0) {
            double mid = 0.5 * (prev_end + start);
            x1[i - 1] = fmin(x1[i - 1], mid);
            x0[i] = fmax(x0[i], mid);
        }
        prev_end = end;
    }
}

/* A point of the read crop in the source image: undo the turns, then the warp. */
static void to_source(const struct word_geometry *g, double x, double y, int out[2])
{
    if (g->flip) {
        x = read_width(g) - x;
        y = read_height(g) - y;
    }
    double u = x, v = y;
    if (g->rotate) { /* the turn took warped (u, v) to (v, crop_w - u) */
        u = g->crop_w - y;
        v = x;
    }
    const double *m = g->src_from_dst;
    double w = m[6] * u + m[7] * v + m[8];
    if (w == 0)
        w = 1e-12;
    out[0] = (int)lround((m[0] * u + m[1] * v + m[2]) / w);
    out[1] = (int)lround((m[3] * u + m[4] * v + m[5]) / w);
}

void ocr_word_quad(const struct word_geometry *g, double x0, double x1, int box[4][2])
{
    double h = read_height(g);
    to_source(g, x0, 0, box[0]);
    to_source(g, x1, 0, box[1]);
    to_source(g, x1, h, box[2]);
    to_source(g, x0, h, box[3]);
}

int ocr_words_make(const struct ctc_text *t, const struct word_geometry *g, struct ppocr_word **words, int *n_words)
{
    *words = NULL;
    *n_words = 0;
    if (!t->n_chars || !t->steps || g->resized_w < 1)
        return 0;
    struct word_span *spans = malloc(t->n_chars * sizeof(*spans));
    double *x = malloc(2 * t->n_chars * sizeof(*x));
    if (!spans || !x) {
        free(spans);
        free(x);
        return -1;
    }
    size_t n = ocr_word_spans(t, spans);
    ocr_word_extents(t, spans, n, g, x, x + n);
    struct ppocr_word *w = n ? calloc(n, sizeof(*w)) : NULL;
    int rc = n && !w ? -1 : 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        const struct ctc_char *a = &t->chars[spans[i].first], *b = &t->chars[spans[i].first + spans[i].count - 1];
        size_t len = b->at + b->len - a->at;
        if (!(w[i].text = malloc(len + 1))) {
            rc = -1;
            break;
        }
        memcpy(w[i].text, t->text + a->at, len);
        w[i].text[len] = '\0';
        w[i].score = ctc_mean_prob(a, spans[i].count);
        ocr_word_quad(g, x[i], x[n + i], w[i].box);
    }
    if (rc) {
        for (size_t i = 0; w && i < n; i++)
            free(w[i].text);
        free(w);
    } else {
        *words = w;
        *n_words = (int)n;
    }
    free(spans);
    free(x);
    return rc;
}
