#include "cli/format_xml.h"
#include "cli/text_escape.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int xml_char_allowed(uint32_t c)
{
    return c == 0x9 || c == 0xA || c == 0xD || (c >= 0x20 && c <= 0xD7FF) || (c >= 0xE000 && c <= 0xFFFD) ||
           (c >= 0x10000 && c <= 0x10FFFF);
}

void xml_put_text(struct cli_buf *b, const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + len, *run = p;
    while (p < end) {
        uint32_t c = 0;
        size_t n = cli_utf8_next(p, end, &c);
        const char *ref = NULL;
        if (n == 0 || !xml_char_allowed(c)) {
            ref = "\xEF\xBF\xBD";
            if (n == 0)
                n = 1;
        } else {
            switch (c) {
            case '&': ref = "&amp;"; break;
            case '<': ref = "&lt;"; break;
            case '>': ref = "&gt;"; break;
            case '"': ref = "&quot;"; break;
            case '\'': ref = "&#39;"; break;
            /* as references, so that attribute values keep them */
            case '\t': ref = "&#9;"; break;
            case '\n': ref = "&#10;"; break;
            case '\r': ref = "&#13;"; break;
            }
        }
        if (ref) {
            if (p > run)
                cli_buf_printf(b, "%.*s", (int)(p - run), (const char *)run);
            cli_buf_printf(b, "%s", ref);
            run = p + n;
        }
        p += n;
    }
    if (p > run)
        cli_buf_printf(b, "%.*s", (int)(p - run), (const char *)run);
}

void xml_put_num(struct cli_buf *b, double v, int decimals)
{
    double scale = pow(10.0, decimals);
    double r = isfinite(v) ? round(v * scale) / scale : 0.0;
    if (r == 0.0)
        r = 0.0; /* not -0 */
    char s[512]; /* room for any double in %f */
    snprintf(s, sizeof(s), "%.*f", decimals, r);
    if (strchr(s, '.')) {
        size_t n = strlen(s);
        while (s[n - 1] == '0')
            s[--n] = 0;
        if (s[n - 1] == '.')
            s[--n] = 0;
    }
    cli_buf_printf(b, "%s", s);
}

static int clampi(long v, int lo, int hi)
{
    return v < lo ? lo : v > hi ? hi : (int)v;
}

struct xml_box xml_quad_box(const xml_quad q, int width, int height)
{
    double x0 = q[0][0], y0 = q[0][1], x1 = x0, y1 = y0;
    for (int k = 1; k < 4; k++) {
        x0 = fmin(x0, q[k][0]);
        x1 = fmax(x1, q[k][0]);
        y0 = fmin(y0, q[k][1]);
        y1 = fmax(y1, q[k][1]);
    }
    return (struct xml_box){clampi(lround(x0), 0, width), clampi(lround(y0), 0, height), clampi(lround(x1), 0, width),
                            clampi(lround(y1), 0, height)};
}

struct xml_box xml_span_box(const struct ppocr_span *s, int width, int height)
{
    struct xml_box box = {clampi(s->x0, 0, width), clampi(s->y0, 0, height), clampi(s->x1, 0, width),
                          clampi(s->y1, 0, height)};
    if (box.x1 < box.x0)
        box.x1 = box.x0;
    if (box.y1 < box.y0)
        box.y1 = box.y0;
    return box;
}

int xml_quad_turn(const xml_quad q)
{
    double dx = (q[1][0] - q[0][0]) + (q[2][0] - q[3][0]);
    double dy = (q[1][1] - q[0][1]) + (q[2][1] - q[3][1]);
    if (dx == 0 && dy == 0)
        return 0;
    double deg = atan2(-dy, dx) * (180.0 / 3.14159265358979323846); /* y grows downwards */
    int turn = (int)lround(deg / 90.0) * 90;
    return (turn % 360 + 360) % 360;
}

static enum xml_dir char_dir(uint32_t c)
{
    if ((c >= 0x0590 && c <= 0x08FF) || (c >= 0xFB1D && c <= 0xFDFF) || (c >= 0xFE70 && c <= 0xFEFE) ||
        (c >= 0x10800 && c <= 0x10FFF) || (c >= 0x1E800 && c <= 0x1EFFF))
        return XML_DIR_RTL;
    if (c < 0x80)
        return ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') ? XML_DIR_LTR : XML_DIR_NEUTRAL;
    /* digits, punctuation, symbols and combining marks take the direction of their neighbours */
    if (c <= 0xBF || c == 0xD7 || c == 0xF7 || (c >= 0x0300 && c <= 0x036F) || (c >= 0x2000 && c <= 0x2BFF) ||
        (c >= 0x3000 && c <= 0x303F) || (c >= 0xFE30 && c <= 0xFE4F) || (c >= 0xFEFF && c <= 0xFF20) ||
        (c >= 0xFF3B && c <= 0xFF40) || (c >= 0xFF5B && c <= 0xFF65) || (c >= 0xFFF0 && c <= 0xFFFF))
        return XML_DIR_NEUTRAL;
    return XML_DIR_LTR;
}

enum xml_dir xml_text_dir(const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + len;
    while (p < end) {
        uint32_t c;
        size_t n = cli_utf8_next(p, end, &c);
        if (n == 0) {
            p++;
            continue;
        }
        enum xml_dir d = char_dir(c);
        if (d != XML_DIR_NEUTRAL)
            return d;
        p += n;
    }
    return XML_DIR_NEUTRAL;
}

/* Columns a character takes in the line, so that a fallback word's share of it follows its
 * characters: East Asian wide characters count twice, combining marks not at all. */
static int char_weight(uint32_t c)
{
    if (c >= 0x0300 && c <= 0x036F)
        return 0;
    if ((c >= 0x1100 && c <= 0x115F) || (c >= 0x2E80 && c <= 0x303E) || (c >= 0x3041 && c <= 0x33FF) ||
        (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0xA000 && c <= 0xA4CF) ||
        (c >= 0xAC00 && c <= 0xD7A3) || (c >= 0xF900 && c <= 0xFAFF) || (c >= 0xFE30 && c <= 0xFE4F) ||
        (c >= 0xFF00 && c <= 0xFF60) || (c >= 0xFFE0 && c <= 0xFFE6) || (c >= 0x20000 && c <= 0x3FFFD))
        return 2;
    return 1;
}

/* Weight of s[0..len), one per byte that is not well-formed UTF-8. */
static long text_weight(const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + len;
    long w = 0;
    while (p < end) {
        uint32_t c;
        size_t n = cli_utf8_next(p, end, &c);
        w += n ? char_weight(c) : 1;
        p += n ? n : 1;
    }
    return w;
}

static double dist(const int a[2], const int b[2])
{
    return hypot((double)a[0] - b[0], (double)a[1] - b[1]);
}

/* The line's corners as it was read. The recogniser reads a box at least 1.5 times as tall as
 * wide turned a quarter counter-clockwise (PaddleOCR's get_rotate_crop_image, in
 * ocr_crop_plan_make), so its reading top-left is the box's top-right; upside_down turns it half
 * a turn more. */
static void line_quad(const struct ppocr_line *l, xml_quad q)
{
    int w = (int)fmax(dist(l->box[0], l->box[1]), dist(l->box[2], l->box[3]));
    int h = (int)fmax(dist(l->box[0], l->box[3]), dist(l->box[1], l->box[2]));
    int tall = w >= 1 && (double)h / w >= 1.5;
    int shift = (tall ? 1 : 0) + (l->upside_down ? 2 : 0);
    for (int k = 0; k < 4; k++) {
        q[k][0] = l->box[(k + shift) % 4][0];
        q[k][1] = l->box[(k + shift) % 4][1];
    }
}

static int is_space(char c)
{
    return c == ' ' || c == '\t';
}

/* The engine's words; space_before from where each is found in the line's text. */
static int engine_words(struct xml_line *xl)
{
    const struct ppocr_line *l = xl->line;
    xl->words = calloc((size_t)l->n_words, sizeof(*xl->words));
    if (!xl->words)
        return -1;
    const char *cursor = l->text ? l->text : "";
    for (int i = 0; i < l->n_words; i++) {
        const struct ppocr_word *w = &l->words[i];
        if (!w->text || !w->text[0])
            continue;
        struct xml_word *o = &xl->words[xl->n_words];
        o->text = w->text;
        o->len = strlen(w->text);
        o->score = w->score;
        for (int k = 0; k < 4; k++) {
            o->quad[k][0] = w->box[k][0];
            o->quad[k][1] = w->box[k][1];
        }
        o->space_before = xl->n_words > 0;
        const char *at = strstr(cursor, w->text);
        if (at) {
            if (xl->n_words > 0) {
                o->space_before = 0;
                for (const char *c = cursor; c < at; c++)
                    o->space_before |= is_space(*c);
            }
            cursor = at + o->len;
        }
        xl->n_words++;
    }
    return 0;
}

/* The line's text split at spaces and tabs, each word given the part of the line's box that its
 * characters' share of the text takes along the reading direction, and the line's score. */
static int fallback_words(struct xml_line *xl)
{
    const char *s = xl->line->text ? xl->line->text : "";
    size_t len = strlen(s);
    long total = text_weight(s, len);
    int n = 0;
    for (size_t i = 0; i < len; i++)
        n += !is_space(s[i]) && (i == 0 || is_space(s[i - 1]));
    if (n == 0 || total <= 0)
        return 0;
    xl->words = calloc((size_t)n, sizeof(*xl->words));
    if (!xl->words)
        return -1;
    double(*q)[2] = xl->quad;
    long before = 0; /* weight of the text before position i */
    size_t i = 0;
    while (i < len) {
        if (is_space(s[i])) {
            before++;
            i++;
            continue;
        }
        size_t j = i;
        while (j < len && !is_space(s[j]))
            j++;
        long w = text_weight(s + i, j - i);
        double a = (double)before / total, z = (double)(before + w) / total;
        struct xml_word *o = &xl->words[xl->n_words];
        o->text = s + i;
        o->len = j - i;
        o->score = xl->line->score;
        o->space_before = xl->n_words > 0;
        for (int d = 0; d < 2; d++) {
            double top = q[1][d] - q[0][d], bottom = q[2][d] - q[3][d];
            o->quad[0][d] = q[0][d] + a * top;
            o->quad[1][d] = q[0][d] + z * top;
            o->quad[2][d] = q[3][d] + z * bottom;
            o->quad[3][d] = q[3][d] + a * bottom;
        }
        xl->n_words++;
        before += w;
        i = j;
    }
    return 0;
}

static int spans_cover(const struct ppocr_span *s, int n, int total)
{
    if (!s || n < 1)
        return 0;
    int next = 0;
    for (int i = 0; i < n; i++) {
        if (s[i].first != next || s[i].count < 0 || s[i].count > total - next)
            return 0;
        next += s[i].count;
    }
    return next == total;
}

int xml_page_init(struct xml_page *p, const struct ppocr_result *r)
{
    memset(p, 0, sizeof(*p));
    p->r = r;
    int n_lines = r->n_lines > 0 && r->lines ? r->n_lines : 0;
    p->n_lines = n_lines;
    p->lines = calloc((size_t)n_lines + 1, sizeof(*p->lines));
    if (!p->lines)
        return -1;
    for (int i = 0; i < n_lines; i++) {
        struct xml_line *xl = &p->lines[i];
        xl->line = &r->lines[i];
        line_quad(xl->line, xl->quad);
        int rc = xl->line->n_words > 0 && xl->line->words ? engine_words(xl) : 0;
        if (rc == 0 && xl->n_words == 0)
            rc = fallback_words(xl);
        if (rc) {
            xml_page_free(p);
            return -1;
        }
    }
    if (spans_cover(r->paragraphs, r->n_paragraphs, n_lines) && spans_cover(r->blocks, r->n_blocks, r->n_paragraphs)) {
        p->paragraphs = r->paragraphs;
        p->n_paragraphs = r->n_paragraphs;
        p->blocks = r->blocks;
        p->n_blocks = r->n_blocks;
        return 0;
    }
    struct ppocr_span all = {0, n_lines, 0, 0, 0, 0};
    for (int i = 0; i < n_lines; i++)
        for (int k = 0; k < 4; k++) {
            const int *pt = r->lines[i].box[k];
            if ((i == 0 && k == 0) || pt[0] < all.x0)
                all.x0 = pt[0];
            if ((i == 0 && k == 0) || pt[1] < all.y0)
                all.y0 = pt[1];
            if ((i == 0 && k == 0) || pt[0] > all.x1)
                all.x1 = pt[0];
            if ((i == 0 && k == 0) || pt[1] > all.y1)
                all.y1 = pt[1];
        }
    p->one_paragraph = all;
    p->one_block = all;
    p->one_block.count = 1;
    p->paragraphs = &p->one_paragraph;
    p->blocks = &p->one_block;
    p->n_paragraphs = p->n_blocks = 1;
    return 0;
}

void xml_page_free(struct xml_page *p)
{
    if (p->lines)
        for (int i = 0; i < p->n_lines; i++)
            free(p->lines[i].words);
    free(p->lines);
    memset(p, 0, sizeof(*p));
}

int xml_paragraph_has_words(const struct xml_page *p, int paragraph)
{
    const struct ppocr_span *s = &p->paragraphs[paragraph];
    for (int i = s->first; i < s->first + s->count; i++)
        if (p->lines[i].n_words)
            return 1;
    return 0;
}

int xml_block_has_words(const struct xml_page *p, int block)
{
    const struct ppocr_span *s = &p->blocks[block];
    for (int i = s->first; i < s->first + s->count; i++)
        if (xml_paragraph_has_words(p, i))
            return 1;
    return 0;
}
