#include "cli/output.h"
#include "cli/format_xml.h"
#include "cli/text_escape.h"
#include "cli/write.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void put_tsv_field(struct cli_buf *b, const char *s)
{
    for (const char *p = s; *p; p++) {
        switch (*p) {
        case '\t': cli_buf_printf(b, "\\t"); break;
        case '\n': cli_buf_printf(b, "\\n"); break;
        case '\r': cli_buf_printf(b, "\\r"); break;
        case '\\': cli_buf_printf(b, "\\\\"); break;
        default: cli_buf_printf(b, "%c", *p);
        }
    }
}

void cli_format_tsv_header(struct cli_buf *b)
{
    cli_buf_printf(b, "file\tline\tscore\tx1\ty1\tx2\ty2\tx3\ty3\tx4\ty4\ttext\n");
}

static void put_json_quad(struct cli_buf *b, const int q[4][2])
{
    cli_buf_printf(b, "[[%d,%d],[%d,%d],[%d,%d],[%d,%d]]", q[0][0], q[0][1], q[1][0], q[1][1], q[2][0], q[2][1],
                   q[3][0], q[3][1]);
}

void cli_format_json_object(struct cli_buf *b, const struct cli_args *args, const char *lead, const char *file,
                            int page, const struct ppocr_result *r)
{
    cli_buf_printf(b, "{%s\"file\":", lead);
    cli_put_json_string(b, file);
    if (page)
        cli_buf_printf(b, ",\"page\":%d", page);
    cli_buf_printf(b, ",\"width\":%d,\"height\":%d,\"lines\":[", r->width, r->height);
    for (int i = 0; i < r->n_lines; i++) {
        const struct ppocr_line *l = &r->lines[i];
        cli_buf_printf(b, "%s{\"text\":", i ? "," : "");
        cli_put_json_string(b, l->text);
        cli_buf_printf(b, ",\"score\":%.5f,\"box\":", l->score);
        put_json_quad(b, l->box);
        cli_buf_printf(b, ",\"words\":[");
        for (int w = 0; w < l->n_words; w++) {
            cli_buf_printf(b, "%s{\"text\":", w ? "," : "");
            cli_put_json_string(b, l->words[w].text);
            cli_buf_printf(b, ",\"score\":%.5f,\"box\":", l->words[w].score);
            put_json_quad(b, l->words[w].box);
            cli_buf_printf(b, "}");
        }
        cli_buf_printf(b, "]}");
    }
    /* the structure over the lines: blocks of paragraphs of lines, by their index in "lines" */
    cli_buf_printf(b, "],\"blocks\":[");
    for (int k = 0; k < r->n_blocks; k++) {
        const struct ppocr_span *bl = &r->blocks[k];
        cli_buf_printf(b, "%s{\"bbox\":[%d,%d,%d,%d],\"paragraphs\":[", k ? "," : "", bl->x0, bl->y0, bl->x1, bl->y1);
        for (int p = bl->first; p < bl->first + bl->count; p++) {
            const struct ppocr_span *par = &r->paragraphs[p];
            cli_buf_printf(b, "%s{\"bbox\":[%d,%d,%d,%d],\"lines\":[", p > bl->first ? "," : "", par->x0, par->y0,
                           par->x1, par->y1);
            for (int i = par->first; i < par->first + par->count; i++)
                cli_buf_printf(b, "%s%d", i > par->first ? "," : "", i);
            cli_buf_printf(b, "]}");
        }
        cli_buf_printf(b, "]}");
    }
    cli_buf_printf(b, "]");
    if (args->ocr.profile) {
        cli_buf_printf(b, ",\"timings_ms\":{");
        for (int s = 0; s < PPOCR_STAGE_COUNT; s++)
            cli_buf_printf(b, "%s\"%s\":{\"wall\":%.3f,\"gpu\":%.3f}", s ? "," : "", ppocr_stage_name(s), r->wall_ms[s],
                           r->gpu_ms[s]);
        cli_buf_printf(b, "}");
    }
    cli_buf_printf(b, "}");
}

void cli_format_result(struct cli_buf *b, const struct cli_args *args, const char *file, int page,
                       const struct ppocr_result *r)
{
    switch (args->format) {
    case CLI_FORMAT_HOCR: cli_format_hocr(b, file, page, r); break;
    case CLI_FORMAT_ALTO: cli_format_alto(b, file, page, r); break;
    case CLI_FORMAT_JSON:
        cli_format_json_object(b, args, "", file, page, r);
        cli_buf_printf(b, "\n");
        break;
    case CLI_FORMAT_TSV:
        for (int i = 0; i < r->n_lines; i++) {
            const struct ppocr_line *l = &r->lines[i];
            put_tsv_field(b, file);
            if (page) /* a page of a PDF: "doc.pdf#3", the number after the last '#' */
                cli_buf_printf(b, "#%d", page);
            cli_buf_printf(b, "\t%d\t%.5f", i + 1, l->score);
            for (int k = 0; k < 4; k++)
                cli_buf_printf(b, "\t%d\t%d", l->box[k][0], l->box[k][1]);
            cli_buf_printf(b, "\t");
            put_tsv_field(b, l->text);
            cli_buf_printf(b, "\n");
        }
        break;
    case CLI_FORMAT_TEXT:
        for (int i = 0, par = 0; i < r->n_lines; i++) {
            const struct ppocr_line *l = &r->lines[i];
            /* plain text: a blank line between paragraphs (and so between blocks); with --boxes
             * every output line stays one record */
            for (; par < r->n_paragraphs && i >= r->paragraphs[par].first + r->paragraphs[par].count; par++)
                if (!args->boxes)
                    cli_buf_printf(b, "\n");
            if (args->boxes)
                cli_buf_printf(b, "%d,%d %d,%d %d,%d %d,%d\t%.4f\t", l->box[0][0], l->box[0][1], l->box[1][0],
                               l->box[1][1], l->box[2][0], l->box[2][1], l->box[3][0], l->box[3][1], l->score);
            cli_buf_printf(b, "%s\n", l->text);
        }
        break;
    }
}

const char *cli_format_extension(enum cli_format format)
{
    switch (format) {
    case CLI_FORMAT_JSON: return "json";
    case CLI_FORMAT_TSV: return "tsv";
    case CLI_FORMAT_HOCR: return "hocr";
    case CLI_FORMAT_ALTO: return "xml"; /* Tesseract's and most tools' name for ALTO files */
    case CLI_FORMAT_TEXT: break;
    }
    return "txt";
}

int cli_write_stdout(const char *data, size_t len, char *err, size_t err_len)
{
    /* past stdio, whose fwrite gives up on EINTR: a stop signal that lands while a slow reader
     * holds the pipe full must not lose the result being delivered */
    if (fflush(stdout) != 0 || cli_write_all(STDOUT_FILENO, data, len) != 0) {
        snprintf(err, err_len, "cannot write to standard output: %s", strerror(errno));
        return -1;
    }
    return 0;
}
