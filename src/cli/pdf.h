/* PDF input: a document becomes one image per page, each rasterised when its turn comes by
 * poppler's pdftoppm (Debian package poppler-utils), which runs as a child process in a private
 * temporary folder, so that a document's pages are never all in memory at once. */
#ifndef PPOCR_CLI_PDF_H
#define PPOCR_CLI_PDF_H

#include <stddef.h>

#include "ppocr.h"

#define CLI_PDF_DEFAULT_DPI 300

/* Whether the file begins with the PDF signature "%PDF-"; 0 when it cannot be read (the image
 * loader then says why). */
int cli_pdf_is_pdf(const char *path);
/* Whether a folder walk picks the name up as a PDF (".pdf", any case). */
int cli_pdf_is_pdf_name(const char *name);
/* The document's page count (pdfinfo). Returns 0, or -1 with a one-line reason that does not
 * name the file: poppler-utils missing, or poppler's first complaint about a damaged or encrypted
 * document. */
int cli_pdf_page_count(const char *path, int *pages, char *err, size_t err_len);
/* Rasterises page `page` (from 1) at `dpi`, lowered where the page would pass the image loader's
 * limits, and decodes it. `label` names the page in messages ("doc.pdf page 3"). Returns 0, or -1
 * with a one-line reason that begins with the label. */
int cli_pdf_load_page(const char *path, int page, double dpi, const char *label, struct ppocr_image *img, char *err,
                      size_t err_len);
/* Kills the poppler tools running and removes their scratch folders: for a signal handler about
 * to end the process (async-signal-safe). */
void cli_pdf_abandon(void);

#endif
