/* Result formats (text, JSON Lines, TSV; hOCR and ALTO in format_xml.h) rendered into memory,
 * and the writer that puts them on stdout (per-image files: cli/write.h). */
#ifndef PPOCR_CLI_OUTPUT_H
#define PPOCR_CLI_OUTPUT_H

#include <stddef.h>

#include "cli/args.h"
#include "cli/buffer.h"
#include "ppocr.h"

/* The TSV column header line. */
void cli_format_tsv_header(struct cli_buf *b);
/* One image's result in the chosen format. page: the page's number (from 1) when the image is a
 * page of a document (a PDF), 0 otherwise. */
void cli_format_result(struct cli_buf *b, const struct cli_args *args, const char *file, int page,
                       const struct ppocr_result *r);
/* One result as the JSON object --format json prints for it, without the newline; `lead` is put
 * first inside it: members already written as JSON, each followed by a comma ("\"id\":7,"), or "". */
void cli_format_json_object(struct cli_buf *b, const struct cli_args *args, const char *lead, const char *file,
                            int page, const struct ppocr_result *r);
/* File extension of the format: "txt", "json", "tsv", "hocr" or "xml" (ALTO). */
const char *cli_format_extension(enum cli_format format);

/* Writes all of data to stdout and flushes. Returns 0, or -1 with a reason (closed pipe, full disk). */
int cli_write_stdout(const char *data, size_t len, char *err, size_t err_len);

#endif
