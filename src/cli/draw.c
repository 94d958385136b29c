#include "cli/draw.h"

#include "cli/output.h"
#include "cli/write.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#pragma GCC diagnostic ignored "-Wsign-compare"
#define STB_IMAGE_WRITE_STATIC
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb_image_write.h>
#pragma GCC diagnostic pop

/* Line boxes are drawn in red, `thickness` pixels wide, so they show on black and white pages;
 * word boxes inside them in a thin blue. */
static const uint8_t line_colour[3] = {255, 0, 0}, word_colour[3] = {0, 110, 255};

static void plot(uint8_t *rgb, int w, int h, int x, int y, int thickness, const uint8_t colour[3])
{
    for (int dy = -thickness / 2; dy <= thickness / 2; dy++)
        for (int dx = -thickness / 2; dx <= thickness / 2; dx++) {
            int px = x + dx, py = y + dy;
            if (px < 0 || py < 0 || px >= w || py >= h)
                continue;
            uint8_t *p = rgb + ((size_t)py * w + px) * 3;
            p[0] = colour[0];
            p[1] = colour[1];
            p[2] = colour[2];
        }
}

static void line(uint8_t *rgb, int w, int h, int x0, int y0, int x1, int y1, int thickness, const uint8_t colour[3])
{
    int dx = abs(x1 - x0), sx = x0 < x1 ? 1 : -1, dy = -abs(y1 - y0), sy = y0 < y1 ? 1 : -1, e = dx + dy;
    for (;;) {
        plot(rgb, w, h, x0, y0, thickness, colour);
        if (x0 == x1 && y0 == y1)
            return;
        int e2 = 2 * e;
        if (e2 >= dy) {
            e += dy;
            x0 += sx;
        }
        if (e2 <= dx) {
            e += dx;
            y0 += sy;
        }
    }
}

/* stb's PNG writer hands its bytes here, into memory: its file writer ignores write errors, and
 * the file is written by the same atomic writer as -o's. */
static void append_png(void *ctx, void *data, int size)
{
    if (size > 0)
        cli_buf_append(ctx, data, (size_t)size);
}

int cli_draw_boxes(const char *dir, const char *name, const struct ppocr_image *img, const struct ppocr_result *r,
                   char *err, size_t err_len)
{
    size_t n = (size_t)img->width * img->height;
    uint8_t *rgb = malloc(n * 3);
    struct cli_buf png = {0};
    int rc = -1;
    if (!rgb) {
        snprintf(err, err_len, "out of memory drawing the boxes");
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        rgb[i * 3 + 0] = img->bgr[i * 3 + 2];
        rgb[i * 3 + 1] = img->bgr[i * 3 + 1];
        rgb[i * 3 + 2] = img->bgr[i * 3 + 0];
    }
    int thickness = (img->width > img->height ? img->width : img->height) > 1500 ? 3 : 1;
    for (int i = 0; i < r->n_lines; i++)
        for (int w = 0; w < r->lines[i].n_words; w++)
            for (int k = 0; k < 4; k++) {
                const int *a = r->lines[i].words[w].box[k], *b = r->lines[i].words[w].box[(k + 1) % 4];
                line(rgb, img->width, img->height, a[0], a[1], b[0], b[1], 1, word_colour);
            }
    for (int i = 0; i < r->n_lines; i++)
        for (int k = 0; k < 4; k++) {
            const int *a = r->lines[i].box[k], *b = r->lines[i].box[(k + 1) % 4];
            line(rgb, img->width, img->height, a[0], a[1], b[0], b[1], thickness, line_colour);
        }
    if (!stbi_write_png_to_func(append_png, &png, img->width, img->height, 3, rgb, img->width * 3) || png.failed) {
        snprintf(err, err_len, "out of memory encoding the drawn PNG");
        goto done;
    }
    rc = cli_write_file_atomic(dir, name, "png", png.data, png.len, err, err_len);
done:
    free(rgb);
    cli_buf_free(&png);
    return rc;
}
