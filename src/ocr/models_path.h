/* Finding the folder of converted models (det.pvk, cls.pvk, rec.pvk). */
#ifndef PPOCR_OCR_MODELS_PATH_H
#define PPOCR_OCR_MODELS_PATH_H

#include <stddef.h>

/* `given` if set, else $PPOCR_MODELS if set (either must hold det.pvk), else the first of the
 * default places that holds det.pvk. Returns 0, or -1 with the folder that was expected in out. */
int ocr_find_models_dir(const char *given, char *out, size_t out_len);

#endif
