/* JPEG marker walk, before libjpeg runs: finds the EXIF orientation (cv2.imread applies it; libjpeg
 * does not), the frame size (checked against the limits before libjpeg allocates anything) and a
 * file cut short (libjpeg only warns, and fills the missing part with gray). */
#include <string.h>

#include "img/image_internal.h"

static unsigned rd16(const uint8_t *p, int big_endian)
{
    return big_endian ? (unsigned)p[0] << 8 | p[1] : (unsigned)p[1] << 8 | p[0];
}

static uint32_t rd32(const uint8_t *p, int big_endian)
{
    return big_endian ? (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]
                      : (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

/* Orientation tag (0x0112) of IFD0 in an APP1 payload "Exif\0\0" + TIFF; 0 when not found. */
static int exif_orientation(const uint8_t *p, size_t n)
{
    if (n < 6 + 8 || memcmp(p, "Exif\0\0", 6) != 0)
        return 0;
    const uint8_t *tiff = p + 6;
    size_t tn = n - 6;
    int be;
    if (tiff[0] == 'I' && tiff[1] == 'I')
        be = 0;
    else if (tiff[0] == 'M' && tiff[1] == 'M')
        be = 1;
    else
        return 0;
    if (rd16(tiff + 2, be) != 42)
        return 0;
    uint32_t ifd = rd32(tiff + 4, be);
    if (ifd > tn || tn - ifd < 2)
        return 0;
    unsigned count = rd16(tiff + ifd, be);
    for (unsigned i = 0; i < count; i++) {
        size_t e = (size_t)ifd + 2 + (size_t)i * 12;
        if (e + 12 > tn)
            return 0;
        if (rd16(tiff + e, be) != 0x0112)
            continue;
        unsigned type = rd16(tiff + e + 2, be);
        unsigned v = type == 3 ? rd16(tiff + e + 8, be) : type == 4 ? (unsigned)rd32(tiff + e + 8, be) : 0;
        return v >= 1 && v <= 8 ? (int)v : 0;
    }
    return 0;
}

/* The tables of one DHT segment of n bytes: each a class/id byte, 16 code counts summing to at most
 * 256, then that many symbols. Only the first `avail` bytes may be there: the counts that are there
 * are checked all the same (a cut-off segment is otherwise left to the truncation check). libjpeg
 * refuses the same tables; checking here names the reason before any decoder runs. */
static int huffman_tables_ok(const uint8_t *p, size_t n, size_t avail)
{
    size_t pos = 0;
    while (pos < n) {
        if (n - pos < 17)
            return avail < n;
        size_t codes = 0;
        for (int i = 1; i <= 16; i++)
            codes += pos + i < avail ? p[pos + i] : 0;
        if (codes > 256)
            return 0;
        if (n - pos - 17 < codes)
            return avail < n;
        pos += 17 + codes;
    }
    return 1;
}

enum jpeg_walk_result jpeg_walk(const uint8_t *data, size_t size, int *orientation, struct jpeg_frame *frame)
{
    *orientation = 1;
    memset(frame, 0, sizeof *frame);
    int found_exif = 0;
    size_t pos = 2; /* after SOI */
    for (;;) {
        /* libjpeg skips stray bytes between segments to the next 0xFF (with a warning); so do we, so
         * that every segment it will read is checked here */
        while (pos < size && data[pos] != 0xFF)
            pos++;
        if (pos >= size)
            return JPEG_WALK_TRUNCATED;
        while (pos < size && data[pos] == 0xFF)
            pos++; /* fill bytes */
        if (pos >= size)
            return JPEG_WALK_TRUNCATED;
        uint8_t marker = data[pos++];
        if (marker == 0xD9)
            return JPEG_WALK_COMPLETE;
        if (marker < 0xC0 && marker != 0x01)
            continue; /* not a marker: more stray bytes */
        if (marker == 0x01 || (marker >= 0xD0 && marker <= 0xD7))
            continue; /* no length field */
        if (size - pos < 2)
            return JPEG_WALK_TRUNCATED;
        size_t len = (size_t)data[pos] << 8 | data[pos + 1];
        if (len < 2)
            return JPEG_WALK_MALFORMED;
        /* before the truncation check: a cut-off DHT's counts are refused as such */
        if (marker == 0xC4 && !huffman_tables_ok(data + pos + 2, len - 2, size - pos < len ? size - pos - 2 : len - 2))
            return JPEG_WALK_BAD_HUFFMAN;
        if (size - pos < len)
            return JPEG_WALK_TRUNCATED;
        int is_sof = marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC;
        if (is_sof && !frame->marker) {
            frame->marker = marker;
            if (len >= 7) { /* length, precision, height, width */
                frame->height = data[pos + 3] << 8 | data[pos + 4];
                frame->width = data[pos + 5] << 8 | data[pos + 6];
            }
        }
        if (marker == 0xE1 && !found_exif) {
            int o = exif_orientation(data + pos + 2, len - 2);
            if (o) {
                *orientation = o;
                found_exif = 1;
            }
        }
        pos += len;
        if (marker != 0xDA)
            continue;
        /* entropy-coded data runs to the next marker that is neither a stuffed 0xFF00 nor RSTn */
        for (;;) {
            if (pos + 1 >= size)
                return JPEG_WALK_TRUNCATED;
            if (data[pos] == 0xFF) {
                uint8_t m = data[pos + 1];
                if (m != 0x00 && m != 0xFF && !(m >= 0xD0 && m <= 0xD7))
                    break;
                pos += m == 0xFF ? 1 : 2;
            } else {
                pos++;
            }
        }
    }
}

int ocr_jpeg_exif_orientation(const uint8_t *data, size_t size)
{
    int orientation = 1;
    struct jpeg_frame frame;
    if (size >= 3 && data[0] == 0xFF && data[1] == 0xD8)
        jpeg_walk(data, size, &orientation, &frame);
    return orientation;
}
