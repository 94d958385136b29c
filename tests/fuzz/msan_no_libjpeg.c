/* libjpeg_decode for fuzz_image_msan, which is built without libjpeg-turbo: MemorySanitizer needs
 * every byte the code reads to be written by instrumented code, and the system's libjpeg is not
 * instrumented, so everything it writes (the decompressor's fields, each scanline) would read as
 * never written. Unpoisoning those outputs with __msan_unpoison would silence exactly the reads
 * MSan is there to catch (a row libjpeg left unwritten), so the JPEG decoder is left out instead:
 * a JPEG still goes through our own marker walk (image_jpeg.c, instrumented), then stops here.
 * fuzz_image covers libjpeg itself under ASan + UBSan. */
#include <stdio.h>

#include "img/image_internal.h"

enum ppocr_status libjpeg_decode(const uint8_t *data, size_t size, const char *name, int *w, int *h, uint8_t **rgb,
                                 char *err, size_t err_len)
{
    (void)data, (void)size, (void)w, (void)h, (void)rgb;
    snprintf(err, err_len, "%s: JPEG not decoded in the MemorySanitizer build", name);
    return PPOCR_ERR_UNSUPPORTED;
}
