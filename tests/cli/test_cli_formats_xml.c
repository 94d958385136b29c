/* The hOCR and ALTO formats (src/cli/format_*.c) on results made by hand: blocks, paragraphs and
 * lines in order with Tesseract's ids, boxes, baselines and turns of skewed, upside-down and
 * vertical lines, the engine's words and the split of lines without words, escaping, CJK, a
 * right-to-left paragraph, lines and paragraphs without text left out, a result without a page
 * structure, and every document well-formed (xmllint) and ALTO valid against the 4.4 schema. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/format_xml.h"
#include "cli/output.h"
#include "support/test_env.h"

#define BOX(x0, y0, x1, y1, x2, y2, x3, y3)                                                                            \
    {                                                                                                                  \
        {x0, y0}, {x1, y1}, {x2, y2},                                                                                  \
        {                                                                                                              \
            x3, y3                                                                                                     \
        }                                                                                                              \
    }

/* Line 0: skewed, with the engine's words, text needing escapes. */
static struct ppocr_word words0[] = {
    {"Hello", 0.876f, BOX(10, 10, 60, 15, 58, 35, 8, 30)},
    {"<world>", 0.99f, BOX(70, 16, 120, 21, 118, 41, 68, 36)},
    {"&", 0.5f, BOX(130, 22, 140, 23, 138, 43, 128, 42)},
    {"\"friends\"", 1.0f, BOX(150, 24, 210, 30, 208, 50, 148, 44)},
};
/* Line 2: CJK, one word a character, no spaces between them. */
static struct ppocr_word words2[] = {
    {"\xe4\xb8\xad", 0.9f, BOX(400, 200, 420, 200, 420, 230, 400, 230)},
    {"\xe6\x96\x87", 0.8f, BOX(420, 200, 440, 200, 440, 230, 420, 230)},
    {"\xe5\xad\x97", 0.7f, BOX(440, 200, 460, 200, 460, 230, 440, 230)},
};

static void make_page(struct ppocr_result *r, struct ppocr_line *lines, struct ppocr_span *pars,
                      struct ppocr_span *blocks)
{
    memset(r, 0, sizeof(*r));
    r->width = 800;
    r->height = 600;
    lines[0] =
        (struct ppocr_line){"Hello <world> & \"friends\"", 0.9f, BOX(10, 10, 210, 30, 208, 50, 8, 30), 0, 4, words0};
    lines[1] = (struct ppocr_line){"ab cd\tef", 0.5f, BOX(100, 200, 300, 200, 300, 220, 100, 220), 0, 0, NULL};
    lines[2] = (struct ppocr_line){
        "\xe4\xb8\xad\xe6\x96\x87\xe5\xad\x97", 0.8f, BOX(400, 200, 460, 200, 460, 230, 400, 230), 0, 3, words2};
    lines[3] = (struct ppocr_line){"umop", 0.75f, BOX(100, 400, 300, 400, 300, 430, 100, 430), 1, 0, NULL};
    lines[4] = (struct ppocr_line){"ab cd", 0.6f, BOX(500, 100, 530, 100, 530, 300, 500, 300), 0, 0, NULL};
    lines[5] = (struct ppocr_line){" ", 0.6f, BOX(600, 500, 700, 500, 700, 520, 600, 520), 0, 0, NULL};
    r->lines = lines;
    r->n_lines = 6;
    pars[0] = (struct ppocr_span){0, 2, 8, 10, 300, 220};
    pars[1] = (struct ppocr_span){2, 1, 400, 200, 460, 230};
    pars[2] = (struct ppocr_span){3, 2, 100, 100, 530, 430};
    pars[3] = (struct ppocr_span){5, 1, 600, 500, 700, 520};
    blocks[0] = (struct ppocr_span){0, 2, 8, 10, 460, 230};
    blocks[1] = (struct ppocr_span){2, 1, 100, 100, 530, 430};
    blocks[2] = (struct ppocr_span){3, 1, 600, 500, 700, 520};
    r->paragraphs = pars;
    r->n_paragraphs = 4;
    r->blocks = blocks;
    r->n_blocks = 3;
}

static char *render(enum cli_format format, const char *file, int page, const struct ppocr_result *r)
{
    struct cli_args args;
    memset(&args, 0, sizeof(args));
    args.format = format;
    struct cli_buf b = {0};
    cli_format_result(&b, &args, file, page, r);
    assert_false(b.failed);
    assert_non_null(b.data);
    return b.data;
}

static int count(const char *s, const char *what)
{
    int n = 0;
    for (const char *p = strstr(s, what); p; p = strstr(p + 1, what))
        n++;
    return n;
}

static void expect_has(const char *doc, const char *what)
{
    if (!strstr(doc, what))
        fail_msg("missing: %s\nin:\n%s", what, doc);
}

/* The class and id of every element that has both, in document order: "ppocr_line:line_1_2 ...". */
static void element_sequence(const char *doc, char *out, size_t cap)
{
    out[0] = 0;
    for (const char *p = strstr(doc, "class='"); p; p = strstr(p + 1, "class='")) {
        const char *c = p + 7, *ce = strchr(c, '\'');
        const char *end = strchr(p, '>');
        const char *id = strstr(p, "id='");
        if (!ce || !end || !id || id > end)
            continue;
        id += 4;
        const char *ie = strchr(id, '\'');
        size_t n = strlen(out);
        snprintf(out + n, cap - n, "%s%.*s:%.*s", n ? " " : "", (int)(ce - c), c, (int)(ie - id), id);
    }
}

/* Runs xmllint on doc (with the ALTO schema when `schema`); fails the test when it objects. */
static void xmllint(const char *doc, int schema)
{
    assert_int_equal(system("xmllint --version >/dev/null 2>&1"), 0); /* tools/setup.sh installs libxml2-utils */
    char dir[] = "/tmp/ppocr-xml-XXXXXX", path[64], errs[64], cmd[1024];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/doc.xml", dir);
    snprintf(errs, sizeof(errs), "%s/errors", dir);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(doc, 1, strlen(doc), f), strlen(doc));
    assert_int_equal(fclose(f), 0);
    if (schema)
        snprintf(cmd, sizeof(cmd), "xmllint --noout --schema '%s/data/schemas/alto-4-4.xsd' '%s' 2>'%s'",
                 test_data_dir(), path, errs);
    else
        snprintf(cmd, sizeof(cmd), "xmllint --noout '%s' 2>'%s'", path, errs);
    int rc = system(cmd);
    char why[2048] = "";
    f = fopen(errs, "rb");
    if (f) {
        why[fread(why, 1, sizeof(why) - 1, f)] = 0;
        fclose(f);
    }
    unlink(path);
    unlink(errs);
    rmdir(dir);
    if (rc != 0)
        fail_msg("xmllint%s rejects the document: %s\n%s", schema ? " --schema" : "", why, doc);
}

static void test_hocr_structure(void **state)
{
    (void)state;
    struct ppocr_result r;
    struct ppocr_line lines[6];
    struct ppocr_span pars[4], blocks[3];
    make_page(&r, lines, pars, blocks);
    char *doc = render(CLI_FORMAT_HOCR, "scan <1>.png", 0, &r);

    assert_int_equal(strncmp(doc, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE html", 52), 0);
    const char *tail = "  </div>\n </body>\n</html>\n";
    size_t len = strlen(doc);
    assert_true(len > strlen(tail) && strcmp(doc + len - strlen(tail), tail) == 0);
    expect_has(doc, "<title>scan &lt;1&gt;.png</title>");
    expect_has(doc, "<meta name='ocr-system' content='ppocr-vk " PPOCR_VERSION "' />");
    expect_has(doc,
               "<div class='ocr_page' id='page_1' title='image \"scan &lt;1&gt;.png\"; bbox 0 0 800 600; ppageno 0'>");

    /* The empty block (its one line is a space) is left out, its ids not used. */
    char seq[4096];
    element_sequence(doc, seq, sizeof(seq));
    assert_string_equal(seq, "ocr_page:page_1 ocr_carea:block_1_1 ocr_par:par_1_1 ppocr_line:line_1_1 "
                             "ocrx_word:word_1_1 ocrx_word:word_1_2 ocrx_word:word_1_3 ocrx_word:word_1_4 "
                             "ppocr_line:line_1_2 ocrx_word:word_1_5 ocrx_word:word_1_6 ocrx_word:word_1_7 "
                             "ocr_par:par_1_2 ppocr_line:line_1_3 ocrx_word:word_1_8 ocrx_word:word_1_9 "
                             "ocrx_word:word_1_10 ocr_carea:block_1_2 ocr_par:par_1_3 ppocr_line:line_1_4 "
                             "ocrx_word:word_1_11 ppocr_line:line_1_5 ocrx_word:word_1_12 ocrx_word:word_1_13");
    assert_int_equal(count(doc, "</div>"), 3);
    assert_int_equal(count(doc, "</p>"), 3);
    assert_int_equal(count(doc, "</span>"), 5 + 13);

    expect_has(doc, "<div class='ocr_carea' id='block_1_1' title=\"bbox 8 10 460 230\">");
    expect_has(doc, "<p class='ocr_par' id='par_1_1' title=\"bbox 8 10 300 220\">");
    /* skewed line: the lower edge (8,30)-(208,50) from the box's bottom-left (8,50) */
    expect_has(doc, "id='line_1_1' title=\"bbox 8 10 210 50; baseline 0.1 -20; x_size 20.1\">");
    expect_has(doc, "id='word_1_1' title='bbox 8 10 60 35; x_wconf 88'>Hello</span>");
    expect_has(doc, "id='word_1_2' title='bbox 68 16 120 41; x_wconf 99'>&lt;world&gt;</span>");
    expect_has(doc, "id='word_1_3' title='bbox 128 22 140 43; x_wconf 50'>&amp;</span>");
    expect_has(doc, "id='word_1_4' title='bbox 148 24 210 50; x_wconf 100'>&quot;friends&quot;</span>");
    /* no words from the engine: split at the space and the tab, 8 characters over 200 pixels */
    expect_has(doc, "id='line_1_2' title=\"bbox 100 200 300 220; baseline 0 0; x_size 20\">");
    expect_has(doc, "id='word_1_5' title='bbox 100 200 150 220; x_wconf 50'>ab</span>");
    expect_has(doc, "id='word_1_6' title='bbox 175 200 225 220; x_wconf 50'>cd</span>");
    expect_has(doc, "id='word_1_7' title='bbox 250 200 300 220; x_wconf 50'>ef</span>");
    expect_has(doc, "id='word_1_9' title='bbox 420 200 440 230; x_wconf 80'>\xe6\x96\x87</span>");
    /* upside down: read right to left along the image; no baseline */
    expect_has(doc, "id='line_1_4' title=\"bbox 100 400 300 430; textangle 180; x_size 30\">");
    expect_has(doc, "id='word_1_11' title='bbox 100 400 300 430; x_wconf 75'>umop</span>");
    /* tall box: read top to bottom, the words one above the other */
    expect_has(doc, "id='line_1_5' title=\"bbox 500 100 530 300; textangle 270; x_size 30\">");
    expect_has(doc, "id='word_1_12' title='bbox 500 100 530 180; x_wconf 60'>ab</span>");
    expect_has(doc, "id='word_1_13' title='bbox 500 220 530 300; x_wconf 60'>cd</span>");
    assert_null(strstr(doc, "<world>"));
    assert_null(strstr(doc, "dir="));
    xmllint(doc, 0);
    free(doc);
}

static void test_hocr_page_number(void **state)
{
    (void)state;
    struct ppocr_result r;
    struct ppocr_line lines[6];
    struct ppocr_span pars[4], blocks[3];
    make_page(&r, lines, pars, blocks);
    char *doc = render(CLI_FORMAT_HOCR, "book.pdf", 3, &r);
    expect_has(doc, "<div class='ocr_page' id='page_3' title='image \"book.pdf\"; bbox 0 0 800 600; ppageno 2'>");
    expect_has(doc, "id='block_3_2'");
    expect_has(doc, "id='word_3_13'");
    assert_null(strstr(doc, "_1_"));
    free(doc);
}

static void test_alto_structure(void **state)
{
    (void)state;
    struct ppocr_result r;
    struct ppocr_line lines[6];
    struct ppocr_span pars[4], blocks[3];
    make_page(&r, lines, pars, blocks);
    char *doc = render(CLI_FORMAT_ALTO, "a&b.png", 0, &r);
    expect_has(doc, "<alto xmlns=\"http://www.loc.gov/standards/alto/ns-v4#\"");
    expect_has(doc, "<MeasurementUnit>pixel</MeasurementUnit>");
    expect_has(doc, "<fileName>a&amp;b.png</fileName>");
    expect_has(doc, "<softwareName>ppocr-vk</softwareName>");
    expect_has(doc, "<softwareVersion>" PPOCR_VERSION "</softwareVersion>");
    expect_has(doc, "<Page ID=\"page_1\" PHYSICAL_IMG_NR=\"1\" WIDTH=\"800\" HEIGHT=\"600\"");
    expect_has(doc, "<PrintSpace HPOS=\"0\" VPOS=\"0\" WIDTH=\"800\" HEIGHT=\"600\">");
    assert_int_equal(count(doc, "<ComposedBlock "), 2);
    assert_int_equal(count(doc, "<TextBlock "), 3);
    assert_int_equal(count(doc, "<TextLine "), 5);
    assert_int_equal(count(doc, "<String "), 13);
    /* white space: 3 between line 0's words, 2 in line 1, none between the CJK characters, 1 in
     * the vertical line */
    assert_int_equal(count(doc, "<SP "), 6);
    expect_has(doc, "<ComposedBlock ID=\"cblock_1_1\" HPOS=\"8\" VPOS=\"10\" WIDTH=\"452\" HEIGHT=\"220\">");
    expect_has(doc, "<TextBlock ID=\"block_1_2\" HPOS=\"400\" VPOS=\"200\" WIDTH=\"60\" HEIGHT=\"30\">");
    expect_has(
        doc, "<TextLine ID=\"line_1_1\" HPOS=\"8\" VPOS=\"10\" WIDTH=\"202\" HEIGHT=\"40\" BASELINE=\"8,30 208,50\">");
    expect_has(doc, "<String ID=\"string_1_1\" HPOS=\"8\" VPOS=\"10\" WIDTH=\"52\" HEIGHT=\"25\" WC=\"0.88\" "
                    "CONTENT=\"Hello\"/><SP HPOS=\"58\" VPOS=\"15\" WIDTH=\"12\" HEIGHT=\"21\"/>");
    expect_has(doc, "CONTENT=\"&lt;world&gt;\"");
    expect_has(doc, "WC=\"0.5\" CONTENT=\"&amp;\"");
    expect_has(doc, "WC=\"1\" CONTENT=\"&quot;friends&quot;\"/>\n");
    expect_has(doc, "<String ID=\"string_1_6\" HPOS=\"175\" VPOS=\"200\" WIDTH=\"50\" HEIGHT=\"20\" WC=\"0.5\" "
                    "CONTENT=\"cd\"/><SP HPOS=\"225\" VPOS=\"200\" WIDTH=\"25\" HEIGHT=\"20\"/>");
    expect_has(doc, "CONTENT=\"\xe4\xb8\xad\"/>\n");
    expect_has(doc, "<TextLine ID=\"line_1_4\" HPOS=\"100\" VPOS=\"400\" WIDTH=\"200\" HEIGHT=\"30\" "
                    "BASELINE=\"300,400 100,400\">");
    expect_has(doc, "<TextLine ID=\"line_1_5\" HPOS=\"500\" VPOS=\"100\" WIDTH=\"30\" HEIGHT=\"200\" "
                    "BASELINE=\"500,100 500,300\">");
    expect_has(doc, "CONTENT=\"ab\"/><SP HPOS=\"500\" VPOS=\"180\" WIDTH=\"30\" HEIGHT=\"40\"/>");
    assert_null(strstr(doc, "BASEDIRECTION"));
    xmllint(doc, 1);
    free(doc);

    doc = render(CLI_FORMAT_ALTO, "book.pdf", 7, &r);
    expect_has(doc, "<Page ID=\"page_7\" PHYSICAL_IMG_NR=\"7\"");
    expect_has(doc, "<String ID=\"string_7_13\"");
    xmllint(doc, 1);
    free(doc);
}

/* A right-to-left paragraph, an LTR word inside it, a file name that is not UTF-8 and text with
 * a control character. */
static void test_direction_and_bad_bytes(void **state)
{
    (void)state;
    const char *hebrew = "\xd7\xa9\xd7\x9c\xd7\x95\xd7\x9d abc\x01";
    struct ppocr_line line = {(char *)hebrew, 0.9f, BOX(10, 10, 110, 10, 110, 30, 10, 30), 0, 0, NULL};
    struct ppocr_span par = {0, 1, 10, 10, 110, 30}, block = {0, 1, 10, 10, 110, 30};
    struct ppocr_result r = {.width = 200,
                             .height = 100,
                             .n_lines = 1,
                             .lines = &line,
                             .n_paragraphs = 1,
                             .paragraphs = &par,
                             .n_blocks = 1,
                             .blocks = &block};
    const char *file = "bad\xff\xfe name\x1b.png";
    char *doc = render(CLI_FORMAT_HOCR, file, 0, &r);
    expect_has(doc, "<p class='ocr_par' dir='rtl' id='par_1_1'");
    expect_has(doc, "x_wconf 90' dir='ltr'>abc\xef\xbf\xbd</span>");
    expect_has(doc, "x_wconf 90'>\xd7\xa9\xd7\x9c\xd7\x95\xd7\x9d</span>");
    expect_has(doc, "<title>bad\xef\xbf\xbd\xef\xbf\xbd name\xef\xbf\xbd.png</title>");
    xmllint(doc, 0);
    free(doc);
    doc = render(CLI_FORMAT_ALTO, file, 0, &r);
    expect_has(
        doc, "<TextBlock ID=\"block_1_1\" HPOS=\"10\" VPOS=\"10\" WIDTH=\"100\" HEIGHT=\"20\" BASEDIRECTION=\"rtl\">");
    xmllint(doc, 1);
    free(doc);
}

/* No page structure (or one that does not cover the lines): one block of one paragraph around
 * every line. */
static void test_without_structure(void **state)
{
    (void)state;
    struct ppocr_result r;
    struct ppocr_line lines[6];
    struct ppocr_span pars[4], blocks[3];
    make_page(&r, lines, pars, blocks);
    r.n_blocks = 0;
    r.blocks = NULL;
    char *doc = render(CLI_FORMAT_HOCR, "x.png", 0, &r);
    assert_int_equal(count(doc, "class='ocr_carea'"), 1);
    assert_int_equal(count(doc, "class='ocr_par'"), 1);
    assert_int_equal(count(doc, "class='ppocr_line'"), 5);
    expect_has(doc, "<div class='ocr_carea' id='block_1_1' title=\"bbox 8 10 700 520\">");
    free(doc);
    make_page(&r, lines, pars, blocks);
    pars[1].count = 2; /* overlaps the next paragraph */
    doc = render(CLI_FORMAT_ALTO, "x.png", 0, &r);
    assert_int_equal(count(doc, "<TextBlock "), 1);
    assert_int_equal(count(doc, "<TextLine "), 5);
    xmllint(doc, 1);
    free(doc);
    make_page(&r, lines, pars, blocks);
    lines[5].text = "tail";
    pars[3].count = 0; /* the last line in no paragraph */
    doc = render(CLI_FORMAT_ALTO, "x.png", 0, &r);
    assert_int_equal(count(doc, "<TextBlock "), 1);
    assert_int_equal(count(doc, "<TextLine "), 6);
    expect_has(doc, "CONTENT=\"tail\"");
    free(doc);
}

static void test_empty_page(void **state)
{
    (void)state;
    struct ppocr_span par = {0, 0, 0, 0, 0, 0}, block = {0, 1, 0, 0, 0, 0};
    struct ppocr_result r = {
        .width = 64, .height = 32, .n_paragraphs = 1, .paragraphs = &par, .n_blocks = 1, .blocks = &block};
    char *doc = render(CLI_FORMAT_HOCR, "blank.png", 0, &r);
    expect_has(doc, "bbox 0 0 64 32; ppageno 0'>\n  </div>\n </body>\n</html>\n");
    assert_null(strstr(doc, "class='ocr_carea'"));
    xmllint(doc, 0);
    free(doc);
    doc = render(CLI_FORMAT_ALTO, "blank.png", 0, &r);
    expect_has(doc, "<PrintSpace HPOS=\"0\" VPOS=\"0\" WIDTH=\"64\" HEIGHT=\"32\">\n\t\t\t</PrintSpace>");
    xmllint(doc, 1);
    free(doc);
}

static void test_extensions(void **state)
{
    (void)state;
    assert_string_equal(cli_format_extension(CLI_FORMAT_HOCR), "hocr");
    assert_string_equal(cli_format_extension(CLI_FORMAT_ALTO), "xml");
    assert_string_equal(cli_format_extension(CLI_FORMAT_TEXT), "txt");
}

static void test_numbers(void **state)
{
    (void)state;
    const double v[] = {0.0, -0.0004, 0.1, -20.0, 20.0998, 1.23456, -7.5};
    const char *want[] = {"0", "0", "0.1", "-20", "20.1", "1.235", "-7.5"};
    const int decimals[] = {3, 3, 3, 3, 2, 3, 3};
    for (int i = 0; i < 7; i++) {
        struct cli_buf b = {0};
        xml_put_num(&b, v[i], decimals[i]);
        assert_string_equal(b.data, want[i]);
        cli_buf_free(&b);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hocr_structure),    cmocka_unit_test(test_hocr_page_number),
        cmocka_unit_test(test_alto_structure),    cmocka_unit_test(test_direction_and_bad_bytes),
        cmocka_unit_test(test_without_structure), cmocka_unit_test(test_empty_page),
        cmocka_unit_test(test_extensions),        cmocka_unit_test(test_numbers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
