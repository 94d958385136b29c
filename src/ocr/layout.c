#include "ocr/layout.h"

#include <limits.h>
#include <stdlib.h>

static void span_box(struct ocr_span *s, const struct ocr_line *lines)
{
    s->x0 = s->y0 = INT_MAX;
    s->x1 = s->y1 = INT_MIN;
    for (int i = s->first; i < s->first + s->count; i++)
        for (int k = 0; k < 4; k++) {
            const int *p = lines[i].box[k];
            s->x0 = p[0] < s->x0 ? p[0] : s->x0;
            s->y0 = p[1] < s->y0 ? p[1] : s->y0;
            s->x1 = p[0] > s->x1 ? p[0] : s->x1;
            s->y1 = p[1] > s->y1 ? p[1] : s->y1;
        }
    if (!s->count)
        s->x0 = s->y0 = s->x1 = s->y1 = 0;
}

int ocr_layout_single(struct ocr_result *r)
{
    struct ocr_span *par = calloc(1, sizeof(*par)), *block = calloc(1, sizeof(*block));
    if (!par || !block) {
        free(par);
        free(block);
        return -1;
    }
    free(r->paragraphs);
    free(r->blocks);
    *par = (struct ocr_span){.first = 0, .count = r->n_lines};
    span_box(par, r->lines);
    *block = *par;
    block->count = 1;
    r->paragraphs = par;
    r->blocks = block;
    r->n_paragraphs = r->n_blocks = 1;
    return 0;
}

int ocr_layout_page(struct ocr_result *r)
{
    return ocr_layout_single(r);
}
