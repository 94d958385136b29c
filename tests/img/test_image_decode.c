/* Every supported format and pixel layout decodes to the BGR pixels cv2.imread gives. Fixtures in
 * tests/data/images (make.sh) carry a known pattern, recomputed here. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STB_IMAGE_WRITE_STATIC
#include <stb_image_write.h>
#pragma GCC diagnostic pop

#include "img/image.h"
#include "support/test_env.h"

/* The pattern of make.mjs: 7x5 pixels. */
#define PW 7
#define PH 5
static int pat(int x, int y, int c)
{
    const int v[3] = {(10 + 30 * x) & 255, (20 + 40 * y) & 255, (37 * x + 53 * y) & 255};
    return v[c]; /* R, G, B */
}
static int pat_gray(int x, int y)
{
    return (31 * x + 17 * y + 3) & 255;
}

static char *fixture(const char *name)
{
    static char path[1024];
    snprintf(path, sizeof path, "%s/data/images/%s", test_data_dir(), name);
    return path;
}

static void load(const char *name, enum ppocr_alpha_mode alpha, struct ppocr_image *img)
{
    char err[256];
    enum ppocr_status st = ppocr_image_load_file(fixture(name), alpha, img, err, sizeof err);
    if (st != PPOCR_OK)
        fail_msg("%s", err);
}

static const uint8_t *px(const struct ppocr_image *img, int x, int y)
{
    return img->bgr + ((size_t)y * img->width + x) * 3;
}

static void expect_rgb_pattern(const char *name, int had_alpha)
{
    struct ppocr_image img;
    load(name, PPOCR_ALPHA_IGNORE, &img);
    assert_int_equal(img.width, PW);
    assert_int_equal(img.height, PH);
    if (img.had_alpha != had_alpha)
        fail_msg("%s: had_alpha %d", name, img.had_alpha);
    for (int y = 0; y < PH; y++)
        for (int x = 0; x < PW; x++) {
            const uint8_t *p = px(&img, x, y);
            if (p[0] != pat(x, y, 2) || p[1] != pat(x, y, 1) || p[2] != pat(x, y, 0))
                fail_msg("%s (%d,%d): BGR %d,%d,%d, expected %d,%d,%d", name, x, y, p[0], p[1], p[2], pat(x, y, 2),
                         pat(x, y, 1), pat(x, y, 0));
        }
    ppocr_image_free(&img);
}

static void expect_gray_pattern(const char *name, int had_alpha)
{
    struct ppocr_image img;
    load(name, PPOCR_ALPHA_IGNORE, &img);
    assert_int_equal(img.width, PW);
    assert_int_equal(img.height, PH);
    assert_int_equal(img.had_alpha, had_alpha);
    for (int y = 0; y < PH; y++)
        for (int x = 0; x < PW; x++)
            for (int c = 0; c < 3; c++)
                if (px(&img, x, y)[c] != pat_gray(x, y))
                    fail_msg("%s (%d,%d)[%d]: %d, expected %d", name, x, y, c, px(&img, x, y)[c], pat_gray(x, y));
    ppocr_image_free(&img);
}

/* 16-bit samples are (v << 8) | 0xF0+x: the high byte must come out (cv2 shifts, it does not round). */
static void test_png_layouts(void **state)
{
    (void)state;
    expect_gray_pattern("gray8.png", 0);
    expect_gray_pattern("gray16.png", 0);
    expect_gray_pattern("graya8.png", 1);
    expect_rgb_pattern("rgb8.png", 0);
    expect_rgb_pattern("rgb16.png", 0);
    expect_rgb_pattern("rgba8.png", 1); /* colour as stored, alpha ignored */
    expect_rgb_pattern("rgba16.png", 1);
}

static void test_png_palette_and_1bit(void **state)
{
    (void)state;
    struct ppocr_image img;
    load("palette.png", PPOCR_ALPHA_IGNORE, &img);
    const int pal[4][3] = {{200, 10, 10}, {10, 200, 10}, {10, 10, 200}, {250, 250, 250}};
    assert_int_equal(img.had_alpha, 1); /* tRNS */
    for (int y = 0; y < PH; y++)
        for (int x = 0; x < PW; x++) {
            const int *rgb = pal[(x + y) % 4];
            assert_int_equal(px(&img, x, y)[0], rgb[2]);
            assert_int_equal(px(&img, x, y)[2], rgb[0]);
        }
    ppocr_image_free(&img);
    load("gray1.png", PPOCR_ALPHA_IGNORE, &img); /* rows 0xA5, 0x0F; bit 1 -> 255 */
    assert_int_equal(img.width, 8);
    for (int y = 0; y < 2; y++)
        for (int x = 0; x < 8; x++) {
            int bit = ((y ? 0x0F : 0xA5) >> (7 - x)) & 1;
            assert_int_equal(px(&img, x, y)[1], bit ? 255 : 0);
        }
    ppocr_image_free(&img);
}

/* palette_short.png (tests/data/images/palette_short.py): two entries (red, green) and pixels with indices 0, 1, 5, 200. Indices past the
 * palette read black, as libpng gives them, every time (stb_image alone would read its own
 * uninitialised table). */
static void test_png_short_palette(void **state)
{
    (void)state;
    struct ppocr_image img;
    load("palette_short.png", PPOCR_ALPHA_IGNORE, &img);
    assert_int_equal(img.width, 4);
    assert_int_equal(img.height, 2);
    const int bgr[4][3] = {{0, 0, 255}, {0, 255, 0}, {0, 0, 0}, {0, 0, 0}};
    for (int y = 0; y < 2; y++)
        for (int x = 0; x < 4; x++)
            for (int c = 0; c < 3; c++)
                assert_int_equal(px(&img, x, y)[c], bgr[x][c]);
    ppocr_image_free(&img);
}

static void test_other_formats(void **state)
{
    (void)state;
    expect_rgb_pattern("rgb.bmp", 0);
    expect_rgb_pattern("rgb.ppm", 0);
    expect_rgb_pattern("rgb16.ppm", 0); /* big-endian 16-bit samples */
    expect_gray_pattern("gray.pgm", 0);
    expect_rgb_pattern("rgb.tga", 0);

    /* RLE TGA, 32-bit, bottom-up; the last two pixels of each row repeat pixel PW-2 */
    struct ppocr_image img;
    load("rgba_rle.tga", PPOCR_ALPHA_IGNORE, &img);
    assert_int_equal(img.had_alpha, 1);
    for (int y = 0; y < PH; y++)
        for (int x = 0; x < PW; x++) {
            int sx = x < PW - 2 ? x : PW - 2;
            assert_int_equal(px(&img, x, y)[0], pat(sx, y, 2));
            assert_int_equal(px(&img, x, y)[2], pat(sx, y, 0));
        }
    ppocr_image_free(&img);

    /* GIF: the first of two frames, palette black/red/green/blue, index (x + 2y) % 4 */
    load("two_frames.gif", PPOCR_ALPHA_IGNORE, &img);
    const int pal[4][3] = {{0, 0, 0}, {255, 0, 0}, {0, 255, 0}, {0, 0, 255}};
    assert_int_equal(img.width, PW);
    assert_int_equal(img.height, PH);
    assert_int_equal(img.had_alpha, 0); /* no transparent index */
    for (int y = 0; y < PH; y++)
        for (int x = 0; x < PW; x++)
            for (int c = 0; c < 3; c++)
                assert_int_equal(px(&img, x, y)[c], pal[(x + 2 * y) % 4][2 - c]);
    ppocr_image_free(&img);
}

/* JPEG quadrants (stored): red top-left, green top-right, blue bottom-left, white bottom-right. */
enum { RED, GREEN, BLUE, WHITE };
static void expect_quadrants(const char *name, int w, int h, const int q[4])
{
    static const int bgr[4][3] = {{0, 0, 255}, {0, 255, 0}, {255, 0, 0}, {255, 255, 255}};
    struct ppocr_image img;
    load(name, PPOCR_ALPHA_IGNORE, &img);
    if (img.width != w || img.height != h)
        fail_msg("%s: %dx%d, expected %dx%d", name, img.width, img.height, w, h);
    /* the centre of each quadrant, away from the lossy edges */
    const int cx[4] = {w / 4, 3 * w / 4, w / 4, 3 * w / 4}, cy[4] = {h / 4, h / 4, 3 * h / 4, 3 * h / 4};
    for (int k = 0; k < 4; k++)
        for (int c = 0; c < 3; c++) {
            int v = px(&img, cx[k], cy[k])[c];
            if (abs(v - bgr[q[k]][c]) > 24)
                fail_msg("%s quadrant %d channel %d: %d, expected about %d", name, k, c, v, bgr[q[k]][c]);
        }
    ppocr_image_free(&img);
}

static void test_jpeg_variants(void **state)
{
    (void)state;
    const int upright[4] = {RED, GREEN, BLUE, WHITE};
    expect_quadrants("quad_baseline.jpg", 32, 24, upright);
    expect_quadrants("quad_progressive.jpg", 32, 24, upright);
    /* Adobe CMYK, written through an ICC profile: libjpeg's CMYK samples through cv2.imread's naive
     * formula (icvCvt_CMYK2BGR_8u_C4C3R, no colour management), exact values at the quadrant centres */
    struct ppocr_image img;
    load("quad_cmyk.jpg", PPOCR_ALPHA_IGNORE, &img);
    assert_int_equal(img.width, 32);
    assert_int_equal(img.height, 24);
    const int cmyk_bgr[4][3] = {{1, 1, 255}, {1, 255, 196}, {255, 61, 18}, {255, 255, 255}};
    const int qx[4] = {8, 24, 8, 24}, qy[4] = {6, 6, 18, 18};
    for (int k = 0; k < 4; k++)
        for (int c = 0; c < 3; c++)
            assert_int_equal(px(&img, qx[k], qy[k])[c], cmyk_bgr[k][c]);
    ppocr_image_free(&img);

    load("quad_gray.jpg", PPOCR_ALPHA_IGNORE, &img);
    assert_int_equal(img.width, 32);
    const uint8_t *p = px(&img, 8, 6);
    assert_true(p[0] == p[1] && p[1] == p[2]);
    ppocr_image_free(&img);
}

/* EXIF orientations: where each stored quadrant ends up once displayed (TIFF 6.0 / EXIF 2.3). */
static void test_exif_orientations(void **state)
{
    (void)state;
    const int shown[9][4] = {
        {0},
        {RED, GREEN, BLUE, WHITE}, /* 1 */
        {GREEN, RED, WHITE, BLUE}, /* 2 mirrored */
        {WHITE, BLUE, GREEN, RED}, /* 3 180 degrees */
        {BLUE, WHITE, RED, GREEN}, /* 4 flipped */
        {RED, BLUE, GREEN, WHITE}, /* 5 transposed */
        {BLUE, RED, WHITE, GREEN}, /* 6 turned clockwise */
        {WHITE, GREEN, BLUE, RED}, /* 7 transversed */
        {GREEN, WHITE, RED, BLUE}, /* 8 turned counter-clockwise */
    };
    for (int o = 1; o <= 8; o++) {
        char name[64];
        snprintf(name, sizeof name, "quad_exif%d.jpg", o);
        expect_quadrants(name, o >= 5 ? 24 : 32, o >= 5 ? 32 : 24, shown[o]);
        FILE *f = fopen(fixture(name), "rb");
        assert_non_null(f);
        uint8_t buf[4096];
        size_t n = fread(buf, 1, sizeof buf, f);
        fclose(f);
        assert_int_equal(ocr_jpeg_exif_orientation(buf, n), o);
    }
}

/* A big-endian ("MM") Exif block spliced into a JPEG after SOI: orientation 6. */
static void test_exif_big_endian(void **state)
{
    (void)state;
    FILE *f = fopen(fixture("quad_baseline.jpg"), "rb");
    assert_non_null(f);
    uint8_t jpg[8192];
    size_t n = fread(jpg, 1, sizeof jpg, f);
    fclose(f);
    const uint8_t app1[] = {0xFF, 0xE1, 0, 34, 'E', 'x', 'i', 'f', 0, 0, 'M', 'M', 0, 42, 0, 0, 0, 8, /* IFD0 at 8 */
                            0,    1,                                                                  /* one entry */
                            0x01, 0x12, 0, 3,  0,   0,   0,   1,   0, 6, 0,   0, /* orientation 6 */
                            0,    0,    0, 0};                                   /* no next IFD */
    uint8_t *spliced = malloc(n + sizeof app1);
    memcpy(spliced, jpg, 2);
    memcpy(spliced + 2, app1, sizeof app1);
    memcpy(spliced + 2 + sizeof app1, jpg + 2, n - 2);
    assert_int_equal(ocr_jpeg_exif_orientation(spliced, n + sizeof app1), 6);
    struct ppocr_image img;
    char err[256];
    assert_int_equal(
        ppocr_image_load_memory(spliced, n + sizeof app1, "spliced", PPOCR_ALPHA_IGNORE, &img, err, sizeof err),
        PPOCR_OK);
    assert_int_equal(img.width, 24);
    assert_int_equal(img.height, 32);
    assert_true(px(&img, 6, 8)[0] > 200 && px(&img, 6, 8)[2] < 60); /* blue top-left, as orientation 6 shows it */
    ppocr_image_free(&img);
    free(spliced);
}

/* A real photo JPEG against the reference decoder's bytes (word_2.jpg.bgr, libjpeg-turbo through
 * sharp, = cv2.imread): the same library with the same settings, so not one level of difference. */
static void test_jpeg_equals_reference_decoder(void **state)
{
    (void)state;
    struct ppocr_image img;
    load("word_2.jpg", PPOCR_ALPHA_IGNORE, &img);
    assert_int_equal(img.width, 323);
    assert_int_equal(img.height, 25);
    size_t n = (size_t)img.width * img.height * 3;
    uint8_t *ref = malloc(n);
    FILE *f = fopen(fixture("word_2.jpg.bgr"), "rb");
    assert_non_null(f);
    assert_int_equal(fread(ref, 1, n, f), n);
    fclose(f);
    int worst = 0;
    for (size_t i = 0; i < n; i++) {
        int d = abs(img.bgr[i] - ref[i]);
        worst = d > worst ? d : worst;
    }
    printf("word_2.jpg vs libjpeg-turbo: max |diff| %d\n", worst);
    assert_int_equal(worst, 0);
    free(ref);
    ppocr_image_free(&img);
}

/* FNV-1a, 64 bits: the checksum jpeg_ref.mjs writes. */
static uint64_t fnv1a64(const uint8_t *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

/* Every JPEG of tests/data (the corpus pages and the fixtures: baseline, progressive, 4:2:0, gray,
 * CMYK, all EXIF orientations) decodes to exactly the BGR bytes of cv2.imread, whose checksums
 * jpeg_ref.mjs took from the reference's own decode (jpeg_ref.txt). */
static void test_every_jpeg_equals_reference_checksum(void **state)
{
    (void)state;
    char path[1024], line[512];
    snprintf(path, sizeof path, "%s/data/images/jpeg_ref.txt", test_data_dir());
    FILE *list = fopen(path, "r");
    assert_non_null(list);
    int checked = 0, corpus = 0;
    while (fgets(line, sizeof line, list)) {
        if (line[0] == '#')
            continue;
        char name[256];
        int w, h;
        unsigned long long want;
        assert_int_equal(sscanf(line, "%255s %d %d %llx", name, &w, &h, &want), 4);
        snprintf(path, sizeof path, "%s/data/%s", test_data_dir(), name);
        struct ppocr_image img;
        char err[256];
        enum ppocr_status st = ppocr_image_load_file(path, PPOCR_ALPHA_IGNORE, &img, err, sizeof err);
        if (st != PPOCR_OK)
            fail_msg("%s", err);
        if (img.width != w || img.height != h)
            fail_msg("%s: %dx%d, reference %dx%d", name, img.width, img.height, w, h);
        uint64_t got = fnv1a64(img.bgr, (size_t)w * h * 3);
        if (got != want)
            fail_msg("%s: BGR checksum %016llx, reference %016llx", name, (unsigned long long)got, want);
        ppocr_image_free(&img);
        checked++;
        corpus += strncmp(name, "corpus/", 7) == 0;
    }
    fclose(list);
    printf("%d JPEGs (%d from the corpus) identical to the reference decode\n", checked, corpus);
    assert_true(checked >= 24 && corpus >= 11);
}

/* PPOCR_ALPHA_FLATTEN keeps what alpha carries; PPOCR_ALPHA_IGNORE is cv2.imread. */
static void test_alpha_flatten(void **state)
{
    (void)state;
    struct ppocr_image img;
    /* black everywhere, the text (column 3, row 2) only in alpha */
    load("alpha_ink.png", PPOCR_ALPHA_IGNORE, &img);
    for (int i = 0; i < PW * PH * 3; i++)
        assert_int_equal(img.bgr[i], 0); /* the text vanishes */
    ppocr_image_free(&img);
    load("alpha_ink.png", PPOCR_ALPHA_FLATTEN, &img);
    for (int y = 0; y < PH; y++)
        for (int x = 0; x < PW; x++)
            assert_int_equal(px(&img, x, y)[1], (x == 3 || y == 2) ? 0 : 255);
    ppocr_image_free(&img);

    /* light, slightly varying text on a transparent white canvas: composited onto black */
    uint8_t rgba[8 * 4 * 4];
    for (int i = 0; i < 32; i++) {
        int text = i % 8 == 2 || i % 8 == 5;
        uint8_t v = text ? (uint8_t)(240 + i % 3 * 5) : 255;
        rgba[4 * i] = rgba[4 * i + 1] = rgba[4 * i + 2] = v;
        rgba[4 * i + 3] = text ? 255 : 0;
    }
    int len = 0;
    unsigned char *png = stbi_write_png_to_mem(rgba, 8 * 4, 8, 4, 4, &len);
    char err[256];
    assert_int_equal(ppocr_image_load_memory(png, (size_t)len, "light", PPOCR_ALPHA_FLATTEN, &img, err, sizeof err),
                     PPOCR_OK);
    for (int i = 0; i < 32; i++) {
        int text = i % 8 == 2 || i % 8 == 5;
        if (text)
            assert_true(img.bgr[3 * i] >= 240);
        else
            assert_int_equal(img.bgr[3 * i], 0);
    }
    ppocr_image_free(&img);
    STBIW_FREE(png);

    /* dark text in two colours, half-transparent edge, on transparent black: onto white */
    for (int i = 0; i < 32; i++) {
        int x = i % 8;
        rgba[4 * i] = x == 1 ? 200 : 0, rgba[4 * i + 1] = 0, rgba[4 * i + 2] = x == 1 ? 0 : 40;
        rgba[4 * i + 3] = x == 1 || x == 2 ? 255 : x == 3 ? 128 : 0;
    }
    png = stbi_write_png_to_mem(rgba, 8 * 4, 8, 4, 4, &len);
    assert_int_equal(ppocr_image_load_memory(png, (size_t)len, "dark", PPOCR_ALPHA_FLATTEN, &img, err, sizeof err),
                     PPOCR_OK);
    assert_int_equal(px(&img, 0, 0)[1], 255);                                /* transparent -> white */
    assert_int_equal(px(&img, 1, 0)[2], 200);                                /* opaque red as is */
    assert_int_equal(px(&img, 2, 0)[0], 40);                                 /* opaque blue-black as is */
    assert_int_equal(px(&img, 3, 0)[0], (40 * 128 + 255 * 127 + 127) / 255); /* half-way to white */
    ppocr_image_free(&img);
    STBIW_FREE(png);

    /* no alpha: both modes are the same */
    load("rgb8.png", PPOCR_ALPHA_FLATTEN, &img);
    assert_int_equal(px(&img, 1, 1)[2], pat(1, 1, 0));
    ppocr_image_free(&img);
}

/* Thin and tiny images decode (PNG written in memory). */
static void test_extreme_shapes(void **state)
{
    (void)state;
    const int shapes[][2] = {{1, 1}, {1, 5000}, {5000, 1}};
    for (size_t k = 0; k < 3; k++) {
        int w = shapes[k][0], h = shapes[k][1];
        uint8_t *rgb = malloc((size_t)w * h * 3);
        for (int i = 0; i < w * h; i++)
            rgb[3 * i] = (uint8_t)i, rgb[3 * i + 1] = (uint8_t)(i >> 8), rgb[3 * i + 2] = 7;
        int len = 0;
        unsigned char *png = stbi_write_png_to_mem(rgb, w * 3, w, h, 3, &len);
        struct ppocr_image img;
        char err[256];
        assert_int_equal(ppocr_image_load_memory(png, (size_t)len, "thin", PPOCR_ALPHA_IGNORE, &img, err, sizeof err),
                         PPOCR_OK);
        assert_int_equal(img.width, w);
        assert_int_equal(img.height, h);
        for (int i = 0; i < w * h; i++) {
            assert_int_equal(img.bgr[3 * i + 2], (uint8_t)i);
            assert_int_equal(img.bgr[3 * i + 1], (uint8_t)(i >> 8));
            assert_int_equal(img.bgr[3 * i], 7);
        }
        ppocr_image_free(&img);
        STBIW_FREE(png);
        free(rgb);
    }
}

/* Bytes from a pipe (stdin in the CLI) decode like the file. */
static void test_load_from_pipe(void **state)
{
    (void)state;
    FILE *f = fopen(fixture("rgb8.png"), "rb");
    assert_non_null(f);
    uint8_t buf[4096];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    assert_int_equal(write(fds[1], buf, n), (ssize_t)n); /* fits in the pipe buffer */
    close(fds[1]);
    struct ppocr_image img;
    char err[256];
    assert_int_equal(ppocr_image_load_fd(fds[0], "<stdin>", PPOCR_ALPHA_IGNORE, &img, err, sizeof err), PPOCR_OK);
    close(fds[0]);
    assert_int_equal(img.width, PW);
    assert_int_equal(px(&img, 2, 3)[0], pat(2, 3, 2));
    ppocr_image_free(&img);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_png_layouts),
        cmocka_unit_test(test_png_palette_and_1bit),
        cmocka_unit_test(test_png_short_palette),
        cmocka_unit_test(test_other_formats),
        cmocka_unit_test(test_jpeg_variants),
        cmocka_unit_test(test_exif_orientations),
        cmocka_unit_test(test_exif_big_endian),
        cmocka_unit_test(test_jpeg_equals_reference_decoder),
        cmocka_unit_test(test_every_jpeg_equals_reference_checksum),
        cmocka_unit_test(test_alpha_flatten),
        cmocka_unit_test(test_extreme_shapes),
        cmocka_unit_test(test_load_from_pipe),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
