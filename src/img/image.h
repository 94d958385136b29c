/* Image decoding inside the library: what ppocr.h declares (the public types, the load calls and
 * the format list), and the decoder's own helpers. */
#ifndef PPOCR_IMG_IMAGE_H
#define PPOCR_IMG_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#include "ppocr.h"

/* EXIF orientation (1-8) of a JPEG's first APP1 Exif segment; 1 when absent or unreadable. */
int ocr_jpeg_exif_orientation(const uint8_t *data, size_t size);

#endif
