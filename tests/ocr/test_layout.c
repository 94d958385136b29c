/* The page layout step (ocr/layout.h) on pages built here: columns, bands over columns, receipt
 * rows, tables, skewed and upside-down pages, words and scores of joined rows, blocks and
 * paragraphs, and that every segment's text comes out once whatever the page. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ocr/layout.h"
#include "support/test_env.h"

#define MAX_LINES 512

/* A page under construction: segments as the pipeline gives them, in an order of our choosing. */
struct page {
    struct ppocr_result r;
    double angle; /* radians: every box turned about the page's centre */
    int upside_down;
};

static void page_init(struct page *p, int w, int h)
{
    memset(p, 0, sizeof(*p));
    p->r.width = w;
    p->r.height = h;
    p->r.lines = calloc(MAX_LINES, sizeof(*p->r.lines));
    assert_non_null(p->r.lines);
}

static void turn(const struct page *p, double x, double y, int out[2])
{
    double cx = p->r.width / 2.0, cy = p->r.height / 2.0, c = cos(p->angle), s = sin(p->angle);
    double u = cx + (x - cx) * c - (y - cy) * s, v = cy + (x - cx) * s + (y - cy) * c;
    if (p->upside_down) {
        u = p->r.width - 1 - u;
        v = p->r.height - 1 - v;
    }
    out[0] = (int)lround(u);
    out[1] = (int)lround(v);
}

/* A segment of text from (x0, y0) to (x1, y1) on the upright page, with one word per
 * space-separated token, boxes split evenly. */
static void add(struct page *p, int x0, int y0, int x1, int y1, const char *text)
{
    assert_true(p->r.n_lines < MAX_LINES);
    struct ppocr_line *l = &p->r.lines[p->r.n_lines++];
    l->text = strdup(text);
    l->score = 0.9f;
    l->upside_down = p->upside_down;
    int c[4][2];
    turn(p, x0, y0, c[0]);
    turn(p, x1, y0, c[1]);
    turn(p, x1, y1, c[2]);
    turn(p, x0, y1, c[3]);
    /* the pipeline gives corners clockwise from the image's top-left */
    int first = 0;
    for (int k = 1; k < 4; k++)
        if (c[k][0] + c[k][1] < c[first][0] + c[first][1])
            first = k;
    for (int k = 0; k < 4; k++) {
        l->box[k][0] = c[(first + k) % 4][0];
        l->box[k][1] = c[(first + k) % 4][1];
    }
    int n_words = 1;
    for (const char *s = text; *s; s++)
        n_words += *s == ' ';
    l->words = calloc((size_t)n_words, sizeof(*l->words));
    assert_non_null(l->words);
    const char *s = text;
    for (int w = 0; w < n_words; w++) {
        const char *e = strchr(s, ' ');
        size_t n = e ? (size_t)(e - s) : strlen(s);
        l->words[w].text = strndup(s, n);
        l->words[w].score = 0.9f;
        memcpy(l->words[w].box, l->box, sizeof(l->box));
        s += n + (e != NULL);
    }
    l->n_words = n_words;
}

/* Swaps the segments into a scrambled order, so that the layout cannot lean on the input order. */
static void scramble(struct page *p, unsigned seed)
{
    srand(seed);
    for (int i = p->r.n_lines - 1; i > 0; i--) {
        int j = rand() % (i + 1);
        struct ppocr_line t = p->r.lines[i];
        p->r.lines[i] = p->r.lines[j];
        p->r.lines[j] = t;
    }
}

/* The page's text: lines joined by '\n', a blank line between paragraphs, "|" for a block
 * boundary at the start of a line's paragraph, tabs as "<TAB>". */
static char *page_text(const struct ppocr_result *r)
{
    size_t cap = 64;
    for (int i = 0; i < r->n_lines; i++)
        cap += strlen(r->lines[i].text) * 5 + 8;
    char *out = calloc(cap, 1);
    assert_non_null(out);
    size_t at = 0;
    for (int i = 0; i < r->n_lines; i++) {
        if (i)
            out[at++] = '\n';
        for (const char *s = r->lines[i].text; *s; s++) {
            if (*s == '\t') {
                memcpy(out + at, "<TAB>", 5);
                at += 5;
            } else {
                out[at++] = *s;
            }
        }
    }
    return out;
}

static void check_spans(const struct ppocr_result *r)
{
    int line = 0, par = 0;
    assert_true(r->n_blocks >= 1);
    for (int b = 0; b < r->n_blocks; b++) {
        assert_int_equal(r->blocks[b].first, par);
        assert_true(r->blocks[b].count >= 1);
        for (int k = 0; k < r->blocks[b].count; k++, par++) {
            const struct ppocr_span *p = &r->paragraphs[par];
            assert_int_equal(p->first, line);
            assert_true(p->count >= 1);
            for (int i = p->first; i < p->first + p->count; i++)
                for (int c = 0; c < 4; c++) {
                    assert_in_range(r->lines[i].box[c][0], p->x0, p->x1);
                    assert_in_range(r->lines[i].box[c][1], p->y0, p->y1);
                    assert_in_range(r->lines[i].box[c][0], r->blocks[b].x0, r->blocks[b].x1);
                }
            line += p->count;
        }
    }
    assert_int_equal(par, r->n_paragraphs);
    assert_int_equal(line, r->n_lines);
}

static char *laid_out(struct page *p)
{
    assert_int_equal(ocr_layout_page(&p->r), 0);
    check_spans(&p->r);
    return page_text(&p->r);
}

/* Two columns of 12 lines under a full-width title and above a full-width footnote; the columns'
 * lines share their baselines, as a two-column paper's do. Scanned turned by `angle`, and upside
 * down when asked. */
static void two_column_page(struct page *p, double angle, int upside_down)
{
    page_init(p, 1700, 2200);
    p->angle = angle;
    p->upside_down = upside_down;
    add(p, 300, 100, 1400, 140, "A Title Over Both Columns Of The Page");
    char text[64];
    for (int i = 0; i < 12; i++) {
        int y = 300 + i * 40;
        snprintf(text, sizeof(text), "left column line number %02d of the text", i);
        add(p, 150, y, 820, y + 32, text);
        snprintf(text, sizeof(text), "right column line number %02d of the text", i);
        add(p, 860, y, 1530, y + 32, text);
    }
    add(p, 150, 900, 1530, 932, "a footnote that runs under both of the columns");
}

static void check_two_columns(const char *t)
{
    char want[4096] = "A Title Over Both Columns Of The Page";
    char line[64];
    for (int side = 0; side < 2; side++)
        for (int i = 0; i < 12; i++) {
            snprintf(line, sizeof(line), "\n%s column line number %02d of the text", side ? "right" : "left", i);
            strcat(want, line);
        }
    strcat(want, "\na footnote that runs under both of the columns");
    assert_string_equal(t, want);
}

static void test_two_columns_read_column_by_column(void **state)
{
    (void)state;
    for (unsigned seed = 1; seed <= 5; seed++) {
        struct page p;
        two_column_page(&p, 0, 0);
        scramble(&p, seed);
        char *t = laid_out(&p);
        check_two_columns(t);
        /* the title, each column and the footnote are blocks of their own */
        assert_int_equal(p.r.n_blocks, 4);
        free(t);
        ppocr_result_free(&p.r);
    }
}

/* A line of the left column that the detector joined with its neighbour across the gutter, in
 * the middle of both columns: it is read with the left column, not taken for a title that cuts
 * the columns into bands. */
static void test_a_line_run_into_the_gutter_stays_in_its_column(void **state)
{
    (void)state;
    struct page p;
    page_init(&p, 1700, 2200);
    char text[64];
    for (int i = 0; i < 12; i++) {
        int y = 300 + i * 40;
        snprintf(text, sizeof(text), "left column line number %02d of the text", i);
        if (i == 6) {
            add(&p, 150, y, 1530, y + 32, "left 06 joined with right 06");
            continue;
        }
        add(&p, 150, y, 820, y + 32, text);
        snprintf(text, sizeof(text), "right column line number %02d of the text", i);
        add(&p, 860, y, 1530, y + 32, text);
    }
    scramble(&p, 4);
    char *t = laid_out(&p);
    char want[4096] = "";
    for (int side = 0; side < 2; side++)
        for (int i = 0; i < 12; i++) {
            if (i == 6 && side)
                continue;
            if (i == 6)
                snprintf(text, sizeof(text), "left 06 joined with right 06");
            else
                snprintf(text, sizeof(text), "%s column line number %02d of the text", side ? "right" : "left", i);
            if (*want)
                strcat(want, "\n");
            strcat(want, text);
        }
    assert_string_equal(t, want);
    free(t);
    ppocr_result_free(&p.r);
}

static void test_skewed_two_columns(void **state)
{
    (void)state;
    for (int sign = -1; sign <= 1; sign += 2) {
        struct page p;
        two_column_page(&p, sign * 0.05, 0); /* about 3 degrees */
        scramble(&p, 7);
        char *t = laid_out(&p);
        check_two_columns(t);
        free(t);
        ppocr_result_free(&p.r);
    }
}

static void test_upside_down_page_reads_first_line_first(void **state)
{
    (void)state;
    struct page p;
    two_column_page(&p, 0, 1);
    scramble(&p, 3);
    char *t = laid_out(&p);
    check_two_columns(t);
    free(t);
    ppocr_result_free(&p.r);
}

/* A receipt: a centred header, item rows with the price far right, label/value rows; upright, and
 * scanned a little askew (an item's price then sits a line's height lower than its label). */
static void receipt(double angle)
{
    struct page p;
    page_init(&p, 460, 800);
    p.angle = angle;
    add(&p, 150, 20, 310, 40, "SHOP NAME");
    add(&p, 120, 45, 340, 65, "NO. 1, SOME STREET");
    add(&p, 20, 100, 200, 120, "CROCS 300X17 TUBES");
    add(&p, 380, 101, 440, 121, "20.00");
    add(&p, 20, 125, 150, 145, "SUB TOTAL :");
    add(&p, 380, 124, 440, 144, "20.00");
    add(&p, 20, 150, 250, 170, "ROUNDING ADJUSTMENT :");
    add(&p, 390, 151, 440, 171, "0.00");
    add(&p, 20, 175, 90, 195, "CASH");
    add(&p, 164, 176, 196, 196, "1");
    add(&p, 380, 175, 440, 195, "20.00");
    add(&p, 120, 240, 340, 260, "THANK YOU");
    scramble(&p, 11);
    char *t = laid_out(&p);
    assert_string_equal(t, "SHOP NAME\nNO. 1, SOME STREET\nCROCS 300X17 TUBES<TAB>20.00\nSUB TOTAL :<TAB>20.00\n"
                           "ROUNDING ADJUSTMENT :<TAB>0.00\nCASH<TAB>1<TAB>20.00\nTHANK YOU");
    free(t);
    /* a joined row: its words in order, its box around its segments, its score by characters */
    const struct ppocr_line *row = &p.r.lines[2];
    assert_int_equal(row->n_words, 4);
    assert_string_equal(row->words[0].text, "CROCS");
    assert_string_equal(row->words[3].text, "20.00");
    int corner[2];
    turn(&p, 20, 100, corner);
    assert_in_range(row->box[0][0], corner[0] - 2, corner[0] + 2);
    assert_in_range(row->box[0][1], corner[1] - 2, corner[1] + 2);
    turn(&p, 440, 121, corner);
    assert_in_range(row->box[2][0], corner[0] - 2, corner[0] + 2);
    assert_in_range(row->box[2][1], corner[1] - 2, corner[1] + 2);
    ppocr_result_free(&p.r);
}

static void test_receipt_rows_join_item_and_price(void **state)
{
    (void)state;
    receipt(0);
    receipt(0.05);
    receipt(-0.05);
}

/* Words split by the detector join with a space, and a segment read as nothing but a space adds
 * none. */
static void test_near_segments_join_with_a_space(void **state)
{
    (void)state;
    struct page p;
    page_init(&p, 1000, 400);
    add(&p, 100, 100, 300, 130, "the quick");
    add(&p, 320, 101, 600, 131, "brown fox jumps");
    add(&p, 602, 100, 640, 130, " "); /* a space read alone: nothing to join */
    add(&p, 100, 140, 600, 170, "over the lazy dog, quickly and then");
    p.r.lines[0].score = 1.0f;
    p.r.lines[1].score = 0.5f;
    scramble(&p, 5);
    char *t = laid_out(&p);
    assert_string_equal(t, "the quick brown fox jumps\nover the lazy dog, quickly and then");
    free(t);
    /* (9 * 1.0 + 15 * 0.5) / 24 */
    assert_float_equal(p.r.lines[0].score, (9 * 1.0 + 15 * 0.5) / 24, 1e-6);
    ppocr_result_free(&p.r);
}

/* A gap in the text and a change of height start blocks; a first-line indent a paragraph. */
static void test_blocks_and_paragraphs(void **state)
{
    (void)state;
    struct page p;
    page_init(&p, 1000, 1000);
    add(&p, 100, 50, 500, 100, "A Heading");
    add(&p, 140, 130, 900, 160, "An indented first line of a paragraph of text,");
    add(&p, 100, 165, 900, 195, "its second line running to the right margin,");
    add(&p, 100, 200, 500, 230, "and its last line.");
    add(&p, 140, 235, 900, 265, "A second paragraph starts indented like this");
    add(&p, 100, 270, 700, 300, "and ends on its second line.");
    add(&p, 100, 400, 900, 430, "After a gap, a new block of text on one line");
    scramble(&p, 9);
    char *t = laid_out(&p);
    assert_string_equal(t, "A Heading\nAn indented first line of a paragraph of text,\n"
                           "its second line running to the right margin,\nand its last line.\n"
                           "A second paragraph starts indented like this\nand ends on its second line.\n"
                           "After a gap, a new block of text on one line");
    free(t);
    assert_int_equal(p.r.n_blocks, 3);
    assert_int_equal(p.r.n_paragraphs, 4);
    assert_int_equal(p.r.paragraphs[1].first, 1);
    assert_int_equal(p.r.paragraphs[1].count, 3);
    assert_int_equal(p.r.paragraphs[2].first, 4);
    assert_int_equal(p.r.blocks[1].count, 2);
    ppocr_result_free(&p.r);
}

/* Text running down the page keeps the pipeline's order, as one block. */
static void test_vertical_text_keeps_its_order(void **state)
{
    (void)state;
    struct page p;
    page_init(&p, 600, 800);
    add(&p, 500, 50, 540, 700, "first");
    add(&p, 400, 50, 440, 600, "second");
    add(&p, 300, 50, 340, 650, "third");
    char *t = laid_out(&p);
    assert_string_equal(t, "first\nsecond\nthird");
    assert_int_equal(p.r.n_blocks, 1);
    free(t);
    ppocr_result_free(&p.r);
}

static int compare_strings(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Whatever the boxes, every segment's text comes out exactly once, and the structure covers the
 * lines. */
static void test_random_pages_keep_every_segment(void **state)
{
    (void)state;
    for (unsigned seed = 1; seed <= 200; seed++) {
        srand(seed * 7919);
        struct page p;
        page_init(&p, 200 + rand() % 3000, 200 + rand() % 3000);
        int n = 1 + rand() % 120;
        char **want = calloc((size_t)n, sizeof(*want));
        assert_non_null(want);
        for (int i = 0; i < n; i++) {
            int x0 = rand() % p.r.width, y0 = rand() % p.r.height;
            int x1 = x0 + 4 + rand() % 600, y1 = y0 + 4 + rand() % 60;
            char text[16];
            snprintf(text, sizeof(text), "s%03d", i);
            add(&p, x0, y0, x1, y1, text);
            want[i] = strdup(text);
        }
        assert_int_equal(ocr_layout_page(&p.r), 0);
        check_spans(&p.r);
        char **got = calloc((size_t)n, sizeof(*got));
        int n_got = 0;
        for (int i = 0; i < p.r.n_lines; i++) {
            char *copy = strdup(p.r.lines[i].text), *save = NULL;
            for (char *tok = strtok_r(copy, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
                assert_true(n_got < n);
                got[n_got++] = strdup(tok);
            }
            free(copy);
        }
        assert_int_equal(n_got, n);
        qsort(want, (size_t)n, sizeof(*want), compare_strings);
        qsort(got, (size_t)n, sizeof(*got), compare_strings);
        for (int i = 0; i < n; i++) {
            assert_string_equal(got[i], want[i]);
            free(got[i]);
            free(want[i]);
        }
        free(got);
        free(want);
        ppocr_result_free(&p.r);
    }
}

static void test_single_keeps_order(void **state)
{
    (void)state;
    struct page p;
    two_column_page(&p, 0, 0);
    int n = p.r.n_lines;
    char *before = page_text(&p.r);
    assert_int_equal(ocr_layout_single(&p.r), 0);
    char *after = page_text(&p.r);
    assert_string_equal(before, after);
    assert_int_equal(p.r.n_blocks, 1);
    assert_int_equal(p.r.n_paragraphs, 1);
    assert_int_equal(p.r.paragraphs[0].count, n);
    free(before);
    free(after);
    ppocr_result_free(&p.r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_columns_read_column_by_column),
        cmocka_unit_test(test_a_line_run_into_the_gutter_stays_in_its_column),
        cmocka_unit_test(test_skewed_two_columns),
        cmocka_unit_test(test_upside_down_page_reads_first_line_first),
        cmocka_unit_test(test_receipt_rows_join_item_and_price),
        cmocka_unit_test(test_near_segments_join_with_a_space),
        cmocka_unit_test(test_blocks_and_paragraphs),
        cmocka_unit_test(test_vertical_text_keeps_its_order),
        cmocka_unit_test(test_random_pages_keep_every_segment),
        cmocka_unit_test(test_single_keeps_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
