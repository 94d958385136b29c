/* ALTO 4.4 in pixels. ALTO has no paragraph level: as Tesseract does, a block is a ComposedBlock
 * and each of its paragraphs a TextBlock in it. Positions are the axis-aligned boxes around the
 * engine's quadrilaterals (HPOS, VPOS the top-left corner, WIDTH = x1 - x0); a line's BASELINE is
 * the lower edge of its box as read, from where reading starts to where it ends. */
#include <math.h>
#include <string.h>

#include "cli/format_xml.h"

static void put_pos(struct cli_buf *b, struct xml_box box)
{
    cli_buf_printf(b, "HPOS=\"%d\" VPOS=\"%d\" WIDTH=\"%d\" HEIGHT=\"%d\"", box.x0, box.y0, box.x1 - box.x0,
                   box.y1 - box.y0);
}

static int clamp_coord(double v, int hi)
{
    long r = lround(v);
    return r < 0 ? 0 : r > hi ? hi : (int)r;
}

/* The white space between two words of a line: from the end of the one to the start of the next. */
static struct xml_box gap_box(const struct xml_word *a, const struct xml_word *z, int width, int height)
{
    xml_quad q = {{a->quad[1][0], a->quad[1][1]},
                  {z->quad[0][0], z->quad[0][1]},
                  {z->quad[3][0], z->quad[3][1]},
                  {a->quad[2][0], a->quad[2][1]}};
    return xml_quad_box(q, width, height);
}

void cli_format_alto(struct cli_buf *b, const char *file, int page, const struct ppocr_result *r)
{
    struct xml_page p;
    if (xml_page_init(&p, r)) {
        b->failed = 1;
        return;
    }
    int page_id = page > 0 ? page : 1, W = r->width, H = r->height;
    cli_buf_printf(b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                      "<alto xmlns=\"http://www.loc.gov/standards/alto/ns-v4#\""
                      " xmlns:xlink=\"http://www.w3.org/1999/xlink\""
                      " xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\""
                      " xsi:schemaLocation=\"http://www.loc.gov/standards/alto/ns-v4#"
                      " http://www.loc.gov/standards/alto/v4/alto-4-4.xsd\">\n"
                      "\t<Description>\n"
                      "\t\t<MeasurementUnit>pixel</MeasurementUnit>\n"
                      "\t\t<sourceImageInformation>\n"
                      "\t\t\t<fileName>");
    xml_put_text(b, file, strlen(file));
    cli_buf_printf(b,
                   "</fileName>\n"
                   "\t\t</sourceImageInformation>\n"
                   "\t\t<OCRProcessing ID=\"OCR_0\">\n"
                   "\t\t\t<ocrProcessingStep>\n"
                   "\t\t\t\t<processingSoftware>\n"
                   "\t\t\t\t\t<softwareName>ppocr-vk</softwareName>\n"
                   "\t\t\t\t\t<softwareVersion>%s</softwareVersion>\n"
                   "\t\t\t\t</processingSoftware>\n"
                   "\t\t\t</ocrProcessingStep>\n"
                   "\t\t</OCRProcessing>\n"
                   "\t</Description>\n"
                   "\t<Layout>\n",
                   PPOCR_VERSION);
    cli_buf_printf(b,
                   "\t\t<Page ID=\"page_%d\" PHYSICAL_IMG_NR=\"%d\" WIDTH=\"%d\" HEIGHT=\"%d\" PROCESSING=\"OCR_0\">\n",
                   page_id, page_id, W, H);
    cli_buf_printf(b, "\t\t\t<PrintSpace HPOS=\"0\" VPOS=\"0\" WIDTH=\"%d\" HEIGHT=\"%d\">\n", W, H);

    int n_block = 0, n_par = 0, n_line = 0, n_word = 0;
    for (int bi = 0; bi < p.n_blocks; bi++) {
        if (!xml_block_has_words(&p, bi))
            continue;
        const struct ppocr_span *block = &p.blocks[bi];
        cli_buf_printf(b, "\t\t\t\t<ComposedBlock ID=\"cblock_%d_%d\" ", page_id, ++n_block);
        put_pos(b, xml_span_box(block, W, H));
        cli_buf_printf(b, ">\n");
        for (int pi = block->first; pi < block->first + block->count; pi++) {
            if (!xml_paragraph_has_words(&p, pi))
                continue;
            const struct ppocr_span *par = &p.paragraphs[pi];
            enum xml_dir dir = XML_DIR_NEUTRAL;
            for (int li = par->first; li < par->first + par->count && dir == XML_DIR_NEUTRAL; li++) {
                const char *t = p.lines[li].line->text;
                dir = t ? xml_text_dir(t, strlen(t)) : XML_DIR_NEUTRAL;
            }
            cli_buf_printf(b, "\t\t\t\t\t<TextBlock ID=\"block_%d_%d\" ", page_id, ++n_par);
            put_pos(b, xml_span_box(par, W, H));
            cli_buf_printf(b, "%s>\n", dir == XML_DIR_RTL ? " BASEDIRECTION=\"rtl\"" : "");
            for (int li = par->first; li < par->first + par->count; li++) {
                const struct xml_line *xl = &p.lines[li];
                if (!xl->n_words)
                    continue;
                cli_buf_printf(b, "\t\t\t\t\t\t<TextLine ID=\"line_%d_%d\" ", page_id, ++n_line);
                put_pos(b, xml_quad_box(xl->quad, W, H));
                cli_buf_printf(b, " BASELINE=\"%d,%d %d,%d\">\n", clamp_coord(xl->quad[3][0], W),
                               clamp_coord(xl->quad[3][1], H), clamp_coord(xl->quad[2][0], W),
                               clamp_coord(xl->quad[2][1], H));
                for (int wi = 0; wi < xl->n_words; wi++) {
                    const struct xml_word *w = &xl->words[wi];
                    if (wi > 0 && w->space_before) {
                        cli_buf_printf(b, "<SP ");
                        put_pos(b, gap_box(&xl->words[wi - 1], w, W, H));
                        cli_buf_printf(b, "/>");
                    }
                    cli_buf_printf(b, "%s\t\t\t\t\t\t\t<String ID=\"string_%d_%d\" ", wi ? "\n" : "", page_id,
                                   ++n_word);
                    put_pos(b, xml_quad_box(w->quad, W, H));
                    cli_buf_printf(b, " WC=\"");
                    xml_put_num(b, w->score < 0 ? 0 : w->score > 1 ? 1 : w->score, 2);
                    cli_buf_printf(b, "\" CONTENT=\"");
                    xml_put_text(b, w->text, w->len);
                    cli_buf_printf(b, "\"/>");
                }
                cli_buf_printf(b, "\n\t\t\t\t\t\t</TextLine>\n");
            }
            cli_buf_printf(b, "\t\t\t\t\t</TextBlock>\n");
        }
        cli_buf_printf(b, "\t\t\t\t</ComposedBlock>\n");
    }
    cli_buf_printf(b, "\t\t\t</PrintSpace>\n\t\t</Page>\n\t</Layout>\n</alto>\n");
    xml_page_free(&p);
}
