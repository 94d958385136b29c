/* Size checks on container layouts: stb_image reads missing bytes of BMP, TGA and PNM files as
 * zeros (or leaves them unwritten), so a cut-off file would decode "successfully" to garbage. */
#include <limits.h>
#include <string.h>

#include "img/image_internal.h"

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}
static unsigned le16(const uint8_t *p)
{
    return (unsigned)p[1] << 8 | p[0];
}

enum png_walk_result png_walk(const uint8_t *p, size_t n, int *needs_rewrite)
{
    size_t pos = 8;
    int palette_image = 0, has_palette = 0;
    *needs_rewrite = 0;
    for (;;) {
        if (n - pos < 8)
            return PNG_WALK_TRUNCATED;
        size_t len = be32(p + pos);
        const uint8_t *type = p + pos + 4;
        for (int i = 0; i < 4; i++)
            if (!((type[i] | 0x20) >= 'a' && (type[i] | 0x20) <= 'z'))
                return PNG_WALK_CORRUPT;
        if (memcmp(type, "IHDR", 4) == 0 && len != 13)
            return PNG_WALK_CORRUPT;
        if (memcmp(type, "IHDR", 4) == 0 && n - pos >= 8 + 13)
            palette_image = p[pos + 8 + 9] == 3;
        if (memcmp(type, "PLTE", 4) == 0) {
            /* at most one (as libpng insists): png_rewrite_for_stb pads one short palette */
            if (has_palette)
                return PNG_WALK_CORRUPT;
            has_palette = 1;
            if (len < 768 && len % 3 == 0)
                *needs_rewrite = 1; /* indices past it: see png_rewrite_for_stb */
        }
        /* stb_image would read a palette image's colours from an uninitialised table */
        if (memcmp(type, "IDAT", 4) == 0 && palette_image && !has_palette)
            return PNG_WALK_CORRUPT;
        if (memcmp(type, "IEND", 4) == 0)
            return PNG_WALK_COMPLETE; /* its CRC may be missing */
        if (memcmp(type, "IDAT", 4) == 0 && len == 0)
            *needs_rewrite = 1;
        if (n - pos - 8 < len || n - pos - 8 - len < 4)
            return PNG_WALK_TRUNCATED;
        pos += 12 + len;
    }
}

size_t png_rewrite_for_stb(const uint8_t *p, size_t n, uint8_t *out)
{
    memcpy(out, p, 8);
    size_t pos = 8, o = 8;
    while (n - pos >= 8) {
        size_t len = be32(p + pos);
        int last = memcmp(p + pos + 4, "IEND", 4) == 0 || n - pos - 8 < len || n - pos - 8 - len < 4;
        if (last)
            break; /* IEND and whatever follows: copied as is below */
        if (memcmp(p + pos + 4, "PLTE", 4) == 0 && len < 768 && len % 3 == 0) {
            /* 256 entries, the missing ones black as libpng leaves them (stb_image skips CRCs) */
            static const uint8_t full[4] = {0, 0, 3, 0};
            memcpy(out + o, full, 4);
            memcpy(out + o + 4, p + pos + 4, 4 + len);
            memset(out + o + 8 + len, 0, 768 - len);
            memcpy(out + o + 8 + 768, p + pos + 8 + len, 4);
            o += 12 + 768;
        } else if (!(len == 0 && memcmp(p + pos + 4, "IDAT", 4) == 0)) {
            memcpy(out + o, p + pos, 12 + len);
            o += 12 + len;
        }
        pos += 12 + len;
    }
    memcpy(out + o, p + pos, n - pos);
    return o + (n - pos);
}

enum bmp_layout_result bmp_layout(const uint8_t *p, size_t n)
{
    if (n < 26)
        return BMP_LAYOUT_TRUNCATED;
    uint32_t offset = le32(p + 10), header = le32(p + 14);
    unsigned long long headers = 14ull + header; /* file header, info header (and masks) */
    long long w, h;
    unsigned bpp;
    uint32_t compression = 0;
    if (header == 12) { /* OS/2 core header: 16-bit sizes, no compression */
        w = le16(p + 18), h = le16(p + 20), bpp = le16(p + 24);
    } else if (header >= 40) {
        if (n < 34)
            return BMP_LAYOUT_TRUNCATED;
        w = (int32_t)le32(p + 18), h = (int32_t)le32(p + 22), bpp = le16(p + 28);
        compression = le32(p + 30);
        if (header == 40 && compression == 3)
            headers += 12; /* the three colour masks follow the header */
    } else {
        return BMP_LAYOUT_OK; /* not a header size stb_image knows: it refuses it */
    }
    /* pixels starting inside the headers would make stb_image read a palette of less than nothing
     * (its colours then came from uninitialised stack memory); a palette image needs one entry */
    int palette = header == 12 ? bpp < 24 : bpp < 16;
    if (n >= headers && offset < headers + (palette ? (header == 12 ? 3 : 4) : 0))
        return BMP_LAYOUT_BAD_OFFSET;
    if (compression != 0 && compression != 3)
        return BMP_LAYOUT_OK; /* RLE, JPEG, PNG: refused by stb_image */
    if (w < 0)
        w = -w;
    if (h < 0)
        h = -h; /* a top-down BMP */
    unsigned long long stride = ((unsigned long long)w * bpp + 31) / 32 * 4;
    unsigned long long end = (offset > headers ? offset : headers) + stride * (unsigned long long)h;
    return (unsigned long long)n < end ? BMP_LAYOUT_TRUNCATED : BMP_LAYOUT_OK;
}

int tga_truncated(const uint8_t *p, size_t n)
{
    if (n < 18)
        return 1;
    unsigned type = p[2];
    unsigned long long pixels = (unsigned long long)le16(p + 12) * le16(p + 14), bytes = (p[16] + 7ull) / 8;
    /* id field, then the colour map as stb_image reads it: it skips the "first entry index" field
     * as that many bytes before the entries */
    unsigned long long pos = 18ull + p[0] + (p[1] ? le16(p + 3) + le16(p + 5) * ((p[7] + 7ull) / 8) : 0);
    if (type == 1 || type == 2 || type == 3)
        return n < pos + pixels * bytes;
    if (type != 9 && type != 10 && type != 11)
        return 0;
    /* RLE: count the pixels the packets cover */
    for (unsigned long long got = 0; got < pixels;) {
        if (pos >= n)
            return 1;
        unsigned c = p[pos++];
        unsigned long long count = (c & 0x7F) + 1ull;
        pos += c & 0x80 ? bytes : count * bytes; /* a run stores one pixel, a raw packet all of them */
        got += count;
    }
    return pos > n;
}

/* The first image of a GIF (the one decoded) must be complete up to its data's terminating
 * zero-length sub-block. */
int gif_truncated(const uint8_t *p, size_t n)
{
    if (n < 13)
        return 1;
    size_t pos = 13 + (p[10] & 0x80 ? 3u << ((p[10] & 7) + 1) : 0); /* screen descriptor, global palette */
    for (;;) {
        if (pos >= n)
            return 1;
        uint8_t block = p[pos++];
        if (block == 0x3B)
            return 0;        /* trailer before any image: stb decides */
        if (block == 0x21) { /* extension: label, then sub-blocks */
            pos++;
        } else if (block == 0x2C) { /* image descriptor, local palette, LZW code size */
            if (n - pos < 9)
                return 1;
            uint8_t flags = p[pos + 8];
            pos += 9 + (flags & 0x80 ? 3u << ((flags & 7) + 1) : 0) + 1;
        } else {
            return 0; /* not a GIF block: damage, stb decides */
        }
        for (;;) { /* sub-blocks: a length byte, then that many bytes; 0 ends them */
            if (pos >= n)
                return 1;
            uint8_t len = p[pos++];
            if (len == 0)
                break;
            pos += len;
        }
        if (block == 0x2C)
            return 0;
    }
}

/* Skips whitespace and '#' comments, then reads a decimal number; -1 when there is none. */
static long long pnm_number(const uint8_t *p, size_t n, size_t *pos)
{
    while (*pos < n) {
        if (p[*pos] == '#') {
            while (*pos < n && p[*pos] != '\n' && p[*pos] != '\r')
                (*pos)++;
        } else if (strchr(" \t\r\n\v\f", p[*pos]) && p[*pos]) {
            (*pos)++;
        } else {
            break;
        }
    }
    long long v = -1;
    while (*pos < n && p[*pos] >= '0' && p[*pos] <= '9' && v < (1ll << 40))
        v = (v < 0 ? 0 : v * 10) + (p[(*pos)++] - '0');
    return v;
}

int pnm_layout(const uint8_t *p, size_t n, struct pnm_layout *out)
{
    memset(out, 0, sizeof *out);
    if (n < 3 || p[0] != 'P' || (p[1] != '5' && p[1] != '6'))
        return -1;
    size_t pos = 2;
    long long w = pnm_number(p, n, &pos), h = pnm_number(p, n, &pos), maxval = pnm_number(p, n, &pos);
    if (w <= 0 || h <= 0 || maxval > 65535)
        return -1;                              /* stb_image refuses these itself */
    out->maxval = maxval < 0 ? 0 : (int)maxval; /* a missing number reads as 0 in stb_image */
    out->channels = p[1] == '6' ? 3 : 1;
    out->bytes_per_sample = maxval > 255 ? 2 : 1;
    out->data_offset = pos < n ? pos + 1 : n; /* one whitespace byte ends the header, if it is there */
    out->data_bytes = (unsigned long long)w * h * out->channels * out->bytes_per_sample;
    return 0;
}

int pnm_number_overflows(const uint8_t *p, size_t n)
{
    if (n < 3 || p[0] != 'P' || (p[1] != '5' && p[1] != '6'))
        return 0;
    size_t pos = 2; /* the numbers are read as stb_image reads them: same spaces and comments */
    for (int i = 0; i < 3; i++)
        if (pnm_number(p, n, &pos) > INT_MAX)
            return 1;
    return 0;
}
