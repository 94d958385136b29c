/* The XML result formats, hOCR and ALTO, and what they share: XML escaping, the page's blocks
 * and paragraphs as both walk them, and every line's words (the engine's, or the line's text
 * split at its spaces and tabs when the engine gave none), with boxes turned the way each is read. */
#ifndef PPOCR_CLI_FORMAT_XML_H
#define PPOCR_CLI_FORMAT_XML_H

#include <stddef.h>

#include "cli/output.h"
#include "ppocr.h"

/* One complete XHTML hOCR document (Tesseract's form) / ALTO 4.4 document for one image. page:
 * the page's number (from 1) in a document, 0 for an image file. */
void cli_format_hocr(struct cli_buf *b, const char *file, int page, const struct ppocr_result *r);
void cli_format_alto(struct cli_buf *b, const char *file, int page, const struct ppocr_result *r);

/* Text for XML content and attribute values (quoted with ' or "): markup characters and tab,
 * newline, carriage return as references, bytes that are not well-formed UTF-8 and characters
 * XML 1.0 forbids as U+FFFD. */
void xml_put_text(struct cli_buf *b, const char *s, size_t len);
/* v rounded to `decimals` places, trailing zeros dropped, never "-0". */
void xml_put_num(struct cli_buf *b, double v, int decimals);

/* Points of a quadrilateral clockwise from the top-left as its text is read. */
typedef double xml_quad[4][2];

/* An axis-aligned box of integer corners inside the page, x0 <= x1, y0 <= y1. */
struct xml_box {
    int x0, y0, x1, y1;
};
struct xml_box xml_quad_box(const xml_quad q, int width, int height);
struct xml_box xml_span_box(const struct ppocr_span *s, int width, int height);
/* The quarter turn (0, 90, 180 or 270 degrees counter-clockwise) nearest to the direction a quad
 * is read in. */
int xml_quad_turn(const xml_quad q);
/* Direction of text, from its first character of strong direction. */
enum xml_dir { XML_DIR_NEUTRAL, XML_DIR_LTR, XML_DIR_RTL };
enum xml_dir xml_text_dir(const char *s, size_t len);

struct xml_word {
    const char *text; /* UTF-8, len bytes, not terminated */
    size_t len;
    float score;
    xml_quad quad;
    int space_before; /* white space in the line's text between this word and the one before */
};

struct xml_line {
    const struct ppocr_line *line;
    xml_quad quad;
    int n_words; /* 0: nothing to write (a line without text) */
    struct xml_word *words;
};

/* The page as the formats walk it: the result's paragraphs and blocks when they cover its lines
 * in order, else one block of one paragraph around all of them. */
struct xml_page {
    const struct ppocr_result *r;
    int n_lines;
    struct xml_line *lines; /* one per line of the result */
    int n_paragraphs, n_blocks;
    const struct ppocr_span *paragraphs, *blocks;
    struct ppocr_span one_paragraph, one_block;
};

/* Returns 0, or -1 when out of memory. */
int xml_page_init(struct xml_page *p, const struct ppocr_result *r);
void xml_page_free(struct xml_page *p);
/* Whether a paragraph / block has any word to write. */
int xml_paragraph_has_words(const struct xml_page *p, int paragraph);
int xml_block_has_words(const struct xml_page *p, int block);

#endif
