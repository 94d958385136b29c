/* Fuzz target: image decoding (ppocr_image_load_memory) and the CPU preprocessing that follows it in
 * the engine (det resize + normalise at a small side limit, the crop of one box, the rec resize of
 * that crop). The last 8 bytes of the input choose the box, so the fuzzer can steer it; the
 * decoder sees every byte (formats ignore what trails their end marker). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "img/image.h"
#include "ocr/preprocess.h"

/* Under MemorySanitizer (fuzz_image_msan) every byte of a decoded image must have been written:
 * checked at once, since a pixel that was never written is only reported where a branch or an
 * address depends on it, which the preprocessing below may never do. */
#if defined(__has_feature)
#if __has_feature(memory_sanitizer)
#include <sanitizer/msan_interface.h>
#define CHECK_ALL_WRITTEN(p, n) __msan_check_mem_is_initialized((p), (n))
#endif
#endif
#ifndef CHECK_ALL_WRITTEN
#define CHECK_ALL_WRITTEN(p, n) ((void)(p), (void)(n))
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Small limits keep each run fast; the arithmetic is the same at any size. */
enum { DET_LIMIT = 64, REC_WIDTH = 96 };

/* A corner from two bytes: anywhere in [-w/4, 5w/4) x [-h/4, 5h/4), so that boxes reaching past
 * the border (the warp replicates it) are covered too. */
static void corner(const uint8_t b[2], int w, int h, float out[2])
{
    out[0] = (float)w * ((float)b[0] / 170.0f - 0.25f);
    out[1] = (float)h * ((float)b[1] / 170.0f - 0.25f);
}

static void crop_and_rec(const struct ppocr_image *img, const uint8_t *data, size_t size)
{
    if (size < 8)
        return;
    const uint8_t *tail = data + size - 8;
    float box[4][2];
    for (int k = 0; k < 4; k++)
        corner(tail + 2 * k, img->width, img->height, box[k]);
    /* A quad of arbitrary corners can ask for a crop far larger than the image (the engine's boxes
     * are rectangles inside it); over a megapixel the warp only costs time, at the same
     * arithmetic. */
    struct ocr_crop_plan plan;
    if (ocr_crop_plan_make(box, &plan) || (long long)plan.width * plan.height > (1 << 20))
        return; /* a degenerate or oversized box is refused, which is fine */
    struct ppocr_image crop;
    if (ocr_crop_box(img, box, &crop))
        return;
    float *rec = malloc(sizeof(float) * 3 * OCR_REC_HEIGHT * REC_WIDTH);
    if (rec)
        ocr_rec_preprocess(&crop, OCR_REC_HEIGHT, REC_WIDTH, rec);
    free(rec);
    ppocr_image_free(&crop);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct ppocr_image img;
    char err[256];
    if (ppocr_image_load_memory(data, size, "fuzz", PPOCR_ALPHA_FLATTEN, &img, err, sizeof err) != PPOCR_OK)
        return 0;
    CHECK_ALL_WRITTEN(img.bgr, (size_t)img.width * img.height * 3);
    int w, h;
    ocr_det_resize_dims(img.width, img.height, DET_LIMIT, &w, &h);
    float *det = malloc(sizeof(float) * 3 * (size_t)w * (size_t)h);
    if (det)
        ocr_det_preprocess(&img, DET_LIMIT, det);
    free(det);
    crop_and_rec(&img, data, size);
    ppocr_image_free(&img);
    return 0;
}
