/* hOCR in the form Tesseract 5 writes it (its hocrrenderer), so that tools made for Tesseract's
 * hOCR (OCRmyPDF, hocr-tools) read it: ocr_page > ocr_carea (a block) > ocr_par > ppocr_line >
 * ocrx_word, ids numbered through the page, bbox corners in image pixels. No lang attribute: the
 * recogniser reads several scripts and does not know the language. */
#include <math.h>
#include <string.h>

#include "cli/format_xml.h"

static void put_bbox(struct cli_buf *b, struct xml_box box)
{
    cli_buf_printf(b, "bbox %d %d %d %d", box.x0, box.y0, box.x1, box.y1);
}

/* The line's box, then its baseline (as Tesseract writes it: slope and offset from the box's
 * bottom-left corner, y downwards) for a line read within 45 degrees of upright, where the
 * baseline is the lower edge of the line's box as read; else the quarter turn its text is read
 * at. x_size: the height of the line's box as read. */
static void put_line_title(struct cli_buf *b, const struct xml_line *xl, struct xml_box box)
{
    const double(*q)[2] = xl->quad;
    put_bbox(b, box);
    int turn = xml_quad_turn(q);
    double dx = q[2][0] - q[3][0];
    if (turn == 0 && dx > 0) {
        double slope = (q[2][1] - q[3][1]) / dx;
        double offset = (q[3][1] - box.y1) - slope * (q[3][0] - box.x0);
        cli_buf_printf(b, "; baseline ");
        xml_put_num(b, slope, 3);
        cli_buf_printf(b, " ");
        xml_put_num(b, offset, 3);
    } else if (turn != 0) {
        cli_buf_printf(b, "; textangle %d", turn);
    }
    double height = (hypot(q[3][0] - q[0][0], q[3][1] - q[0][1]) + hypot(q[2][0] - q[1][0], q[2][1] - q[1][1])) / 2;
    cli_buf_printf(b, "; x_size ");
    xml_put_num(b, height, 2);
}

static enum xml_dir paragraph_dir(const struct xml_page *p, const struct ppocr_span *par)
{
    for (int i = par->first; i < par->first + par->count; i++) {
        const char *t = p->lines[i].line->text;
        enum xml_dir d = t ? xml_text_dir(t, strlen(t)) : XML_DIR_NEUTRAL;
        if (d != XML_DIR_NEUTRAL)
            return d;
    }
    return XML_DIR_LTR;
}

void cli_format_hocr(struct cli_buf *b, const char *file, int page, const struct ppocr_result *r)
{
    struct xml_page p;
    if (xml_page_init(&p, r)) {
        b->failed = 1;
        return;
    }
    int page_id = page > 0 ? page : 1;
    size_t file_len = strlen(file);
    cli_buf_printf(b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                      "<!DOCTYPE html PUBLIC \"-//W3C//DTD XHTML 1.0 Transitional//EN\"\n"
                      "    \"http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd\">\n"
                      "<html xmlns=\"http://www.w3.org/1999/xhtml\">\n"
                      " <head>\n"
                      "  <title>");
    xml_put_text(b, file, file_len);
    cli_buf_printf(b,
                   "</title>\n"
                   "  <meta http-equiv=\"Content-Type\" content=\"text/html;charset=utf-8\"/>\n"
                   "  <meta name='ocr-system' content='ppocr-vk %s' />\n"
                   "  <meta name='ocr-capabilities' content='ocr_page ocr_carea ocr_par ppocr_line ocrx_word"
                   " ocrp_wconf ocrp_dir'/>\n"
                   " </head>\n"
                   " <body>\n",
                   PPOCR_VERSION);
    /* ppageno counts from 0, as Tesseract's does; the id from 1 */
    cli_buf_printf(b, "  <div class='ocr_page' id='page_%d' title='image \"", page_id);
    xml_put_text(b, file, file_len);
    cli_buf_printf(b, "\"; bbox 0 0 %d %d; ppageno %d'>\n", r->width, r->height, page > 0 ? page - 1 : 0);

    int n_block = 0, n_par = 0, n_line = 0, n_word = 0;
    for (int bi = 0; bi < p.n_blocks; bi++) {
        if (!xml_block_has_words(&p, bi))
            continue;
        const struct ppocr_span *block = &p.blocks[bi];
        cli_buf_printf(b, "   <div class='ocr_carea' id='block_%d_%d' title=\"", page_id, ++n_block);
        put_bbox(b, xml_span_box(block, r->width, r->height));
        cli_buf_printf(b, "\">\n");
        for (int pi = block->first; pi < block->first + block->count; pi++) {
            if (!xml_paragraph_has_words(&p, pi))
                continue;
            const struct ppocr_span *par = &p.paragraphs[pi];
            enum xml_dir dir = paragraph_dir(&p, par);
            cli_buf_printf(b, "    <p class='ocr_par'%s id='par_%d_%d' title=\"",
                           dir == XML_DIR_RTL ? " dir='rtl'" : "", page_id, ++n_par);
            put_bbox(b, xml_span_box(par, r->width, r->height));
            cli_buf_printf(b, "\">\n");
            for (int li = par->first; li < par->first + par->count; li++) {
                const struct xml_line *xl = &p.lines[li];
                if (!xl->n_words)
                    continue;
                cli_buf_printf(b, "     <span class='ppocr_line' id='line_%d_%d' title=\"", page_id, ++n_line);
                put_line_title(b, xl, xml_quad_box(xl->quad, r->width, r->height));
                cli_buf_printf(b, "\">\n");
                for (int wi = 0; wi < xl->n_words; wi++) {
                    const struct xml_word *w = &xl->words[wi];
                    cli_buf_printf(b, "      <span class='ocrx_word' id='word_%d_%d' title='", page_id, ++n_word);
                    put_bbox(b, xml_quad_box(w->quad, r->width, r->height));
                    long conf = lround(w->score * 100.0);
                    cli_buf_printf(b, "; x_wconf %ld'", conf < 0 ? 0 : conf > 100 ? 100 : conf);
                    enum xml_dir wd = xml_text_dir(w->text, w->len);
                    if (wd != XML_DIR_NEUTRAL && wd != dir)
                        cli_buf_printf(b, " dir='%s'", wd == XML_DIR_RTL ? "rtl" : "ltr");
                    cli_buf_printf(b, ">");
                    xml_put_text(b, w->text, w->len);
                    cli_buf_printf(b, "</span>\n");
                }
                cli_buf_printf(b, "     </span>\n");
            }
            cli_buf_printf(b, "    </p>\n");
        }
        cli_buf_printf(b, "   </div>\n");
    }
    cli_buf_printf(b, "  </div>\n </body>\n</html>\n");
    xml_page_free(&p);
}
