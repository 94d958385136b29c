/* Hostile images, each built here byte by byte: files whose headers announce pixels the data does
 * not hold, palettes shorter than their indices, pixel offsets inside the header, deflate streams
 * with codes DEFLATE does not have or far more output than the image needs, and valid files at the
 * edges of the input contract (top-down BMPs, sides up to the 32768 limit). No pixel may come from
 * memory the decoder never wrote, and no decode may take more memory than the image needs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "img/image.h"

/* A growing byte buffer, and a bit writer on it for deflate streams (LSB first). */
struct bytes {
    uint8_t *p;
    size_t n, cap;
    uint32_t bits;
    int nbits;
};

static void put(struct bytes *b, const void *data, size_t n)
{
    if (n == 0)
        return;
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2 + 64;
        b->p = realloc(b->p, b->cap);
        assert_non_null(b->p);
    }
    memcpy(b->p + b->n, data, n);
    b->n += n;
}
static void put8(struct bytes *b, unsigned v)
{
    uint8_t c = (uint8_t)v;
    put(b, &c, 1);
}
static void put16le(struct bytes *b, unsigned v)
{
    put8(b, v & 0xFF);
    put8(b, v >> 8 & 0xFF);
}
static void put32le(struct bytes *b, uint32_t v)
{
    put16le(b, v & 0xFFFF);
    put16le(b, v >> 16);
}
static void put32be(struct bytes *b, uint32_t v)
{
    put8(b, v >> 24), put8(b, v >> 16 & 0xFF), put8(b, v >> 8 & 0xFF), put8(b, v & 0xFF);
}
static void put_bits(struct bytes *b, uint32_t v, int n)
{
    for (int i = 0; i < n; i++) {
        b->bits |= (v >> i & 1u) << b->nbits;
        if (++b->nbits == 8) {
            put8(b, b->bits);
            b->bits = 0, b->nbits = 0;
        }
    }
}
static void flush_bits(struct bytes *b)
{
    if (b->nbits)
        put8(b, b->bits);
    b->bits = 0, b->nbits = 0;
}
/* A Huffman code: its bits go most significant first. */
static void put_code(struct bytes *b, uint32_t code, int n)
{
    for (int i = n - 1; i >= 0; i--)
        put_bits(b, code >> i & 1u, 1);
}
/* Symbols of the fixed Huffman code (RFC 1951 3.2.6). */
static void fixed_literal(struct bytes *b, unsigned sym)
{
    if (sym < 144)
        put_code(b, 0x30 + sym, 8);
    else if (sym < 256)
        put_code(b, 0x190 + sym - 144, 9);
    else if (sym < 280)
        put_code(b, sym - 256, 7);
    else
        put_code(b, 0xC0 + sym - 280, 8);
}

static uint32_t crc32_of(const uint8_t *p, size_t n)
{
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++)
            c = c >> 1 ^ (0xEDB88320u & (0u - (c & 1u)));
    }
    return c ^ 0xFFFFFFFFu;
}
static uint32_t adler32_of(const uint8_t *p, size_t n)
{
    uint32_t a = 1, s = 0;
    for (size_t i = 0; i < n; i++)
        a = (a + p[i]) % 65521, s = (s + a) % 65521;
    return s << 16 | a;
}

static void png_chunk(struct bytes *b, const char *type, const uint8_t *data, size_t n)
{
    put32be(b, (uint32_t)n);
    size_t start = b->n;
    put(b, type, 4);
    put(b, data, n);
    put32be(b, crc32_of(b->p + start, n + 4));
}

/* A PNG of w x h pixels (`depth` bits, colour type `colour`, Adam7 if `interlaced`) whose IDAT holds
 * the zlib stream `z`. */
static struct bytes png_make(uint32_t w, uint32_t h, int depth, int colour, int interlaced, const struct bytes *z)
{
    struct bytes b = {0};
    put(&b, "\x89PNG\r\n\x1a\n", 8);
    uint8_t ihdr[13] = {0};
    for (int i = 0; i < 4; i++) {
        ihdr[i] = (uint8_t)(w >> (24 - 8 * i));
        ihdr[4 + i] = (uint8_t)(h >> (24 - 8 * i));
    }
    ihdr[8] = (uint8_t)depth, ihdr[9] = (uint8_t)colour, ihdr[12] = (uint8_t)interlaced;
    png_chunk(&b, "IHDR", ihdr, sizeof ihdr);
    png_chunk(&b, "IDAT", z->p, z->n);
    png_chunk(&b, "IEND", NULL, 0);
    return b;
}
static struct bytes png_with_zlib(uint32_t w, uint32_t h, int colour, const struct bytes *z)
{
    return png_make(w, h, 8, colour, 0, z);
}

/* A zlib stream of stored blocks holding `raw`. */
static struct bytes zlib_stored(const uint8_t *raw, size_t n)
{
    struct bytes z = {0};
    put8(&z, 0x78), put8(&z, 0x01);
    size_t done = 0;
    do {
        size_t len = n - done > 65535 ? 65535 : n - done;
        put8(&z, done + len == n); /* BFINAL, BTYPE 00 */
        put16le(&z, (unsigned)len);
        put16le(&z, (unsigned)len ^ 0xFFFF);
        put(&z, raw + done, len);
        done += len;
    } while (done < n);
    put32be(&z, adler32_of(raw, n));
    return z;
}

static enum ppocr_status load(const struct bytes *b, struct ppocr_image *img, char *err, size_t len)
{
    enum ppocr_status st = ppocr_image_load_memory(b->p, b->n, "mem", PPOCR_ALPHA_IGNORE, img, err, len);
    if (st != PPOCR_OK)
        assert_null(img->bgr);
    printf("%s\n", st == PPOCR_OK ? "decoded" : err);
    return st;
}

static void expect_refused(const struct bytes *b, enum ppocr_status want, const char *needle)
{
    struct ppocr_image img;
    char err[512];
    enum ppocr_status st = load(b, &img, err, sizeof err);
    if (st == PPOCR_OK) {
        ppocr_image_free(&img);
        fail_msg("decoded, expected status %d (%s)", want, needle);
    }
    if (st != want)
        fail_msg("status %d, expected %d: %s", st, want, err);
    assert_null(strchr(err, '\n'));
    if (!strstr(err, needle))
        fail_msg("'%s' does not say '%s'", err, needle);
}

/* Fills a stretch of the stack with a pattern, so that a decoder reading stack memory it never
 * wrote gives that pattern rather than whatever zeros happen to be there. */
static __attribute__((noinline)) void paint_stack(void)
{
    volatile uint8_t area[64 * 1024];
    for (size_t i = 0; i < sizeof area; i++)
        area[i] = 0xA5;
}

/* PNM: a header announcing pixels with none after it, and a maxval of 0 (which no PNM has). */
static void test_pnm_without_its_pixels(void **state)
{
    (void)state;
    struct bytes b = {0};
    put(&b, "P5 100 100 255", 14); /* not even the whitespace that ends the header */
    expect_refused(&b, PPOCR_ERR_TRUNCATED, "truncated PNM");
    b.n = 0;
    put(&b, "P6 100 100 255\n", 15);
    expect_refused(&b, PPOCR_ERR_TRUNCATED, "truncated PNM");
    b.n = 0;
    put(&b, "P5 4 4 0\n", 9);
    for (int i = 0; i < 16; i++)
        put8(&b, 0);
    expect_refused(&b, PPOCR_ERR_CORRUPT, "maxval");
    b.n = 0;
    put(&b, "P6 100 100 0", 12);
    expect_refused(&b, PPOCR_ERR_CORRUPT, "maxval");
    free(b.p);
}

/* A BMP: file and info header (40 bytes) of w x h at bpp, `palette` entries, pixel data at `offset`
 * (0: right after the palette); `rows` bytes of pixel data follow. */
static struct bytes bmp(int32_t w, int32_t h, int bpp, const uint8_t (*palette)[4], int entries, uint32_t offset,
                        const uint8_t *rows, size_t rows_len)
{
    struct bytes b = {0};
    uint32_t natural = 14 + 40 + 4 * (uint32_t)entries;
    put(&b, "BM", 2);
    put32le(&b, natural + (uint32_t)rows_len);
    put32le(&b, 0);
    put32le(&b, offset ? offset : natural);
    put32le(&b, 40);
    put32le(&b, (uint32_t)w), put32le(&b, (uint32_t)h);
    put16le(&b, 1), put16le(&b, (unsigned)bpp);
    put32le(&b, 0), put32le(&b, (uint32_t)rows_len), put32le(&b, 2835), put32le(&b, 2835);
    put32le(&b, (uint32_t)entries), put32le(&b, 0);
    for (int i = 0; i < entries; i++)
        put(&b, palette[i], 4);
    put(&b, rows, rows_len);
    return b;
}

/* A palette of 2 colours and pixel indices up to 255: the indices past the palette are black (what
 * OpenCV's decoder gives), never the decoder's uninitialised table. */
static void test_bmp_indices_past_a_short_palette(void **state)
{
    (void)state;
    const uint8_t palette[2][4] = {{10, 20, 30, 0}, {40, 50, 60, 0}}; /* B, G, R, unused */
    const uint8_t row[4] = {0, 1, 2, 255};
    struct bytes b = bmp(4, 1, 8, palette, 2, 0, row, sizeof row);
    struct ppocr_image img;
    char err[512];
    paint_stack();
    assert_int_equal(load(&b, &img, err, sizeof err), PPOCR_OK);
    const uint8_t want[12] = {10, 20, 30, 40, 50, 60, 0, 0, 0, 0, 0, 0}; /* BGR */
    assert_int_equal(img.width, 4);
    assert_memory_equal(img.bgr, want, sizeof want);
    ppocr_image_free(&img);
    free(b.p);
}

/* A pixel-data offset inside the headers: the "palette" would be the header itself, or less than
 * nothing (the decoder then read its colours from the uninitialised stack). */
static void test_bmp_pixel_offset_inside_the_header(void **state)
{
    (void)state;
    const uint8_t palette[2][4] = {{0, 0, 0, 0}, {255, 255, 255, 0}};
    const uint8_t rows[8] = {0, 1, 1, 0, 1, 0, 0, 1};
    for (uint32_t offset = 20; offset <= 54; offset += 34) {
        struct bytes b = bmp(4, 2, 8, palette, 2, offset, rows, sizeof rows);
        paint_stack();
        expect_refused(&b, PPOCR_ERR_CORRUPT, "offset");
        free(b.p);
    }
    /* 24 bits a pixel: no palette, the pixels cannot start inside the header either */
    struct bytes b = bmp(2, 1, 24, NULL, 0, 30, rows, sizeof rows);
    expect_refused(&b, PPOCR_ERR_CORRUPT, "offset");
    free(b.p);
}

/* A compression field of 2^31 or more is no compression BMP has (stb_image 2.27 read it as a
 * negative int and decoded the 59-byte file, claiming 48 MP, as uncompressed zeros; found by
 * fuzz_image). */
static void test_bmp_compression_over_2_to_the_31(void **state)
{
    (void)state;
    const uint8_t row[4] = {0, 1, 2, 3};
    struct bytes b = bmp(2052, 23555, 8, NULL, 0, 62, row, sizeof row);
    b.p[30 + 3] = 0xC8; /* compression 0xC8000000 */
    expect_refused(&b, PPOCR_ERR_UNSUPPORTED, "unsupported BMP");
    free(b.p);
}

/* An OS/2 BMP (12-byte core header): w x h (16 bits each), `entries` 3-byte palette entries. */
static struct bytes os2_bmp(unsigned w, unsigned h, int bpp, const uint8_t (*palette)[3], int entries,
                            const uint8_t *rows, size_t rows_len)
{
    struct bytes b = {0};
    uint32_t offset = 14 + 12 + 3 * (uint32_t)entries;
    put(&b, "BM", 2);
    put32le(&b, offset + (uint32_t)rows_len);
    put32le(&b, 0);
    put32le(&b, offset);
    put32le(&b, 12);
    put16le(&b, w), put16le(&b, h), put16le(&b, 1), put16le(&b, (unsigned)bpp);
    for (int i = 0; i < entries; i++)
        put(&b, palette[i], 3);
    put(&b, rows, rows_len);
    return b;
}

/* An OS/2 BMP of 126 bytes claiming 10000x10000 pixels is truncated, not 100 MP of zeros; a small
 * complete one decodes with its own palette. */
static void test_os2_bmp(void **state)
{
    (void)state;
    uint8_t zeros[100] = {0};
    struct bytes b = os2_bmp(10000, 10000, 24, NULL, 0, zeros, sizeof zeros);
    assert_int_equal(b.n, 126);
    expect_refused(&b, PPOCR_ERR_TRUNCATED, "truncated BMP");
    free(b.p);

    /* 1 bit a pixel, 2 rows of 8 (each padded to 4 bytes), bottom row first */
    const uint8_t palette[2][3] = {{0, 0, 255}, {255, 0, 0}}; /* B, G, R: red, blue */
    const uint8_t rows[8] = {0xF0, 0, 0, 0, 0x0F, 0, 0, 0};
    b = os2_bmp(8, 2, 1, palette, 2, rows, sizeof rows);
    struct ppocr_image img;
    char err[512];
    paint_stack();
    assert_int_equal(load(&b, &img, err, sizeof err), PPOCR_OK);
    assert_int_equal(img.width, 8);
    assert_int_equal(img.height, 2);
    for (int y = 0; y < 2; y++)
        for (int x = 0; x < 8; x++) {
            int index = y == 0 ? x >= 4 : x < 4; /* the top row is the second one stored */
            assert_memory_equal(img.bgr + (y * 8 + x) * 3, palette[index], 3);
        }
    ppocr_image_free(&img);
    free(b.p);
    /* and cut by one byte: truncated */
    b = os2_bmp(8, 2, 1, palette, 2, rows, sizeof rows - 1);
    expect_refused(&b, PPOCR_ERR_TRUNCATED, "truncated BMP");
    free(b.p);
}

/* A valid top-down BMP (negative height) decodes, as its bottom-up twin does. */
static void test_top_down_bmp(void **state)
{
    (void)state;
    const uint8_t top_row[8] = {1, 2, 3, 4, 5, 6, 0, 0}, bottom_row[8] = {7, 8, 9, 10, 11, 12, 0, 0};
    uint8_t top_down[16], bottom_up[16];
    memcpy(top_down, top_row, 8), memcpy(top_down + 8, bottom_row, 8);
    memcpy(bottom_up, bottom_row, 8), memcpy(bottom_up + 8, top_row, 8);
    struct bytes a = bmp(2, -2, 24, NULL, 0, 0, top_down, sizeof top_down);
    struct bytes b = bmp(2, 2, 24, NULL, 0, 0, bottom_up, sizeof bottom_up);
    struct ppocr_image img, want;
    char err[512];
    assert_int_equal(load(&a, &img, err, sizeof err), PPOCR_OK);
    assert_int_equal(load(&b, &want, err, sizeof err), PPOCR_OK);
    assert_int_equal(img.width, 2);
    assert_int_equal(img.height, 2);
    const uint8_t first[6] = {1, 2, 3, 4, 5, 6}; /* BMP stores BGR, as the output is */
    assert_memory_equal(img.bgr, first, 6);
    assert_memory_equal(img.bgr, want.bgr, 12);
    ppocr_image_free(&img);
    ppocr_image_free(&want);
    /* cut short, it is truncated like any other */
    a.n--;
    expect_refused(&a, PPOCR_ERR_TRUNCATED, "truncated BMP");
    free(a.p);
    free(b.p);
}

/* A colour-mapped TGA whose colour-map "first entry" field (which stb_image skips as bytes before
 * the palette) puts the palette and pixels past the end of the file: truncated, not zeros. */
static void test_tga_colour_map_past_the_end(void **state)
{
    (void)state;
    for (int rle = 0; rle < 2; rle++)
        for (int entry_bits = 16; entry_bits <= 24; entry_bits += 8) {
            struct bytes b = {0};
            put8(&b, 0), put8(&b, 1), put8(&b, rle ? 9 : 1); /* no id, colour map, indexed */
            put16le(&b, 600), put16le(&b, 2), put8(&b, (unsigned)entry_bits);
            put16le(&b, 0), put16le(&b, 0), put16le(&b, 4), put16le(&b, 4), put8(&b, 8), put8(&b, 0x20);
            for (int i = 0; i < 2 * entry_bits / 8; i++)
                put8(&b, 0x80);
            for (int i = 0; i < 16; i++) { /* 16 indices; in RLE, each a raw packet of one */
                if (rle)
                    put8(&b, 0);
                put8(&b, i & 1);
            }
            printf("RLE %d, %d-bit palette: ", rle, entry_bits);
            expect_refused(&b, PPOCR_ERR_TRUNCATED, "truncated TGA");
            free(b.p);
        }
}

/* A deflate stream with distance code 30 (or 31), which DEFLATE does not have: stb_image 2.27 read
 * its distance as 0 and copied bytes it had never written. */
static void test_png_distance_codes_30_and_31(void **state)
{
    (void)state;
    for (unsigned code = 30; code <= 31; code++) {
        struct bytes z = {0};
        put8(&z, 0x78), put8(&z, 0x01);
        put_bits(&z, 1, 1), put_bits(&z, 1, 2); /* BFINAL, fixed Huffman */
        fixed_literal(&z, 0);                   /* the row's filter byte */
        fixed_literal(&z, 77);
        fixed_literal(&z, 257); /* a match of length 3 ... */
        put_code(&z, code, 5);  /* ... at that distance */
        fixed_literal(&z, 256); /* end of block */
        flush_bits(&z);
        const uint8_t raw[5] = {0, 77, 0, 0, 0};
        put32be(&z, adler32_of(raw, sizeof raw));
        struct bytes png = png_with_zlib(4, 1, 0, &z);
        expect_refused(&png, PPOCR_ERR_CORRUPT, "corrupt PNG data");
        free(z.p);
        free(png.p);
    }
}

/* A 1x1 PNG whose deflate stream goes on for ~650 MB of output (4 MB of fixed-Huffman matches):
 * the image's 4 bytes are decoded and the rest is ignored, as libpng ignores it, without the
 * decoder's buffer growing to hold it (it took 1.37 GB for a 1 MB file). Measured as the peak
 * resident memory of a child that decodes it. */
static void test_png_output_bounded_by_the_image(void **state)
{
    (void)state;
    struct bytes z = {0};
    put8(&z, 0x78), put8(&z, 0x01);
    put_bits(&z, 1, 1), put_bits(&z, 1, 2);
    fixed_literal(&z, 0);   /* filter byte */
    fixed_literal(&z, 200); /* R */
    fixed_literal(&z, 100); /* G */
    fixed_literal(&z, 50);  /* B */
    while (z.n < (4u << 20)) {
        fixed_literal(&z, 285); /* length 258 */
        put_code(&z, 0, 5);     /* distance 1 */
    }
    fixed_literal(&z, 256);
    flush_bits(&z);
    put32be(&z, 0); /* the checksum of the 650 MB is not worth computing: nobody checks it */
    struct bytes png = png_with_zlib(1, 1, 2, &z);
    free(z.p);

    fflush(stdout);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) { /* its peak memory starts at what it has when forked */
        struct rusage before, after;
        struct ppocr_image img;
        char err[512];
        getrusage(RUSAGE_SELF, &before);
        enum ppocr_status st = ppocr_image_load_memory(png.p, png.n, "mem", PPOCR_ALPHA_IGNORE, &img, err, sizeof err);
        getrusage(RUSAGE_SELF, &after);
        long grown_mb = (after.ru_maxrss - before.ru_maxrss) / 1024;
        int pixel_ok = st == PPOCR_OK && img.width == 1 && img.height == 1 && img.bgr[0] == 50 && img.bgr[1] == 100 &&
                       img.bgr[2] == 200;
        printf("%s; the decode's peak memory: %ld MB more\n", st == PPOCR_OK ? "decoded" : err, grown_mb);
        fflush(stdout);
        _exit(!pixel_ok ? 1 : grown_mb >= 64 ? 2 : 0); /* the output would be 650 MB */
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    if (WEXITSTATUS(status) == 1)
        fail_msg("the 1x1 pixel was not decoded");
    if (WEXITSTATUS(status) == 2)
        fail_msg("the decode took memory for the stream's excess output");
    free(png.p);
}

/* The filtered rows (filter 0) of a w x h image of `n` samples a pixel at `depth` bits, whole or
 * pass by pass (Adam7), into out. Returns their size. */
static unsigned sample(int x, int y, int c, int depth)
{
    return (unsigned)(x * 7 + y * 13 + c * 5) & ((1u << depth) - 1);
}
static size_t png_rows(int w, int h, int n, int depth, int interlaced, uint8_t *out)
{
    static const int xorig[7] = {0, 4, 0, 2, 0, 1, 0}, yorig[7] = {0, 0, 4, 0, 2, 0, 1};
    static const int xspc[7] = {8, 8, 4, 4, 2, 2, 1}, yspc[7] = {8, 8, 8, 4, 4, 2, 2};
    size_t o = 0;
    for (int p = 0; p < (interlaced ? 7 : 1); p++) {
        int x0 = interlaced ? xorig[p] : 0, y0 = interlaced ? yorig[p] : 0;
        int dx = interlaced ? xspc[p] : 1, dy = interlaced ? yspc[p] : 1;
        int pw = (w - x0 + dx - 1) / dx, ph = (h - y0 + dy - 1) / dy;
        if (pw <= 0 || ph <= 0)
            continue;
        size_t row = ((size_t)pw * n * depth + 7) / 8;
        for (int j = 0; j < ph; j++) {
            out[o++] = 0;
            memset(out + o, 0, row);
            for (int i = 0, bit = 0; i < pw; i++)
                for (int c = 0; c < n; c++, bit += depth) {
                    unsigned v = sample(x0 + i * dx, y0 + j * dy, c, depth);
                    out[o + bit / 8] |= (uint8_t)(v << (8 - depth - bit % 8));
                }
            o += row;
        }
    }
    return o;
}

/* Interlaced PNGs decode to the pixels of their plain twins: the zlib output's bound (the exact
 * size of the filtered data, pass by pass) is neither short nor long at any small size; data past
 * it is ignored, and one byte short is refused. */
static void test_png_interlaced_at_the_bound(void **state)
{
    (void)state;
    static uint8_t raw[2][8192];
    const struct {
        int depth, colour, n;
    } kinds[] = {{8, 0, 1}, {8, 2, 3}, {1, 0, 1}, {4, 0, 1}};
    int checked = 0;
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
        for (int w = 1; w <= 17; w += 2)
            for (int h = 1; h <= 11; h += 3) {
                struct ppocr_image img[2];
                char err[512];
                for (int il = 0; il < 2; il++) {
                    size_t len = png_rows(w, h, kinds[k].n, kinds[k].depth, il, raw[il]);
                    memset(raw[il] + len, 0x55, 100); /* excess: ignored */
                    struct bytes z = zlib_stored(raw[il], len + (il ? 100 : 0));
                    struct bytes png = png_make((uint32_t)w, (uint32_t)h, kinds[k].depth, kinds[k].colour, il, &z);
                    enum ppocr_status st =
                        ppocr_image_load_memory(png.p, png.n, "mem", PPOCR_ALPHA_IGNORE, &img[il], err, sizeof err);
                    if (st != PPOCR_OK)
                        fail_msg("%dx%d, depth %d, interlaced %d: %s", w, h, kinds[k].depth, il, err);
                    free(z.p);
                    free(png.p);
                    if (il == 1) { /* one byte short */
                        z = zlib_stored(raw[il], len - 1);
                        png = png_make((uint32_t)w, (uint32_t)h, kinds[k].depth, kinds[k].colour, il, &z);
                        struct ppocr_image cut;
                        st = ppocr_image_load_memory(png.p, png.n, "mem", PPOCR_ALPHA_IGNORE, &cut, err, sizeof err);
                        if (st != PPOCR_ERR_CORRUPT)
                            fail_msg("%dx%d, depth %d, one byte short: status %d", w, h, kinds[k].depth, st);
                        free(z.p);
                        free(png.p);
                    }
                }
                assert_memory_equal(img[0].bgr, img[1].bgr, (size_t)w * h * 3);
                ppocr_image_free(&img[0]);
                ppocr_image_free(&img[1]);
                checked++;
            }
    printf("%d interlaced PNGs decoded as their plain twins\n", checked);
}

/* Sides up to the 32768 limit are inside the contract: a 32768x1 and a 1x32768 gray PNG decode, and
 * so do the BMP, PNM and TGA of 32768x1. */
static void test_sides_up_to_the_limit(void **state)
{
    (void)state;
    const uint32_t sides[] = {32704, 32705, 32767, 32768};
    for (size_t k = 0; k < sizeof sides / sizeof sides[0]; k++) {
        uint32_t side = sides[k];
        for (int tall = 0; tall < 2; tall++) {
            uint32_t w = tall ? 1 : side, h = tall ? side : 1;
            size_t raw_len = (size_t)(w + 1) * h;
            uint8_t *raw = calloc(raw_len, 1);
            assert_non_null(raw);
            for (uint32_t y = 0; y < h; y++)
                for (uint32_t x = 0; x < w; x++)
                    raw[y * (w + 1) + 1 + x] = (uint8_t)(x + y);
            struct bytes z = zlib_stored(raw, raw_len);
            struct bytes png = png_with_zlib(w, h, 0, &z);
            struct ppocr_image img;
            char err[512];
            printf("PNG %ux%u: ", w, h);
            assert_int_equal(load(&png, &img, err, sizeof err), PPOCR_OK);
            assert_int_equal(img.width, (int)w);
            assert_int_equal(img.height, (int)h);
            uint32_t last = tall ? h - 1 : w - 1;
            assert_int_equal(img.bgr[(size_t)last * 3], (uint8_t)last);
            ppocr_image_free(&img);
            free(raw);
            free(z.p);
            free(png.p);
        }
        struct bytes b = {0};
        char head[64];
        int len = snprintf(head, sizeof head, "P5 %u 1 255\n", side);
        put(&b, head, (size_t)len);
        for (uint32_t x = 0; x < side; x++)
            put8(&b, x & 0xFF);
        struct ppocr_image img;
        char err[512];
        printf("PNM %ux1: ", side);
        assert_int_equal(load(&b, &img, err, sizeof err), PPOCR_OK);
        assert_int_equal(img.width, (int)side);
        ppocr_image_free(&img);
        free(b.p);
        b = (struct bytes){0};
        put8(&b, 0), put8(&b, 0), put8(&b, 3); /* TGA, uncompressed gray */
        put16le(&b, 0), put16le(&b, 0), put8(&b, 0);
        put16le(&b, 0), put16le(&b, 0), put16le(&b, side), put16le(&b, 1), put8(&b, 8), put8(&b, 0);
        for (uint32_t x = 0; x < side; x++)
            put8(&b, x & 0xFF);
        printf("TGA %ux1: ", side);
        assert_int_equal(load(&b, &img, err, sizeof err), PPOCR_OK);
        assert_int_equal(img.width, (int)side);
        ppocr_image_free(&img);
        free(b.p);
        uint8_t *rows = calloc((size_t)side * 3 + 3, 1);
        assert_non_null(rows);
        b = bmp((int32_t)side, 1, 24, NULL, 0, 0, rows, ((size_t)side * 3 + 3) / 4 * 4);
        printf("BMP %ux1: ", side);
        assert_int_equal(load(&b, &img, err, sizeof err), PPOCR_OK);
        assert_int_equal(img.width, (int)side);
        ppocr_image_free(&img);
        free(b.p);
        free(rows);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pnm_without_its_pixels),
        cmocka_unit_test(test_bmp_indices_past_a_short_palette),
        cmocka_unit_test(test_bmp_pixel_offset_inside_the_header),
        cmocka_unit_test(test_bmp_compression_over_2_to_the_31),
        cmocka_unit_test(test_os2_bmp),
        cmocka_unit_test(test_top_down_bmp),
        cmocka_unit_test(test_tga_colour_map_past_the_end),
        cmocka_unit_test(test_png_distance_codes_30_and_31),
        cmocka_unit_test(test_png_output_bounded_by_the_image),
        cmocka_unit_test(test_png_interlaced_at_the_bound),
        cmocka_unit_test(test_sides_up_to_the_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
