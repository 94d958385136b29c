/* The recognition dictionary: a UTF-8 text file, one entry per line (PaddleOCR's
 * ppocr_keys_v1.txt), turned into the classes of the rec net: blank, the lines, then a space. */
#ifndef PPOCR_OCR_DICT_H
#define PPOCR_OCR_DICT_H

#include <stddef.h>

struct ocr_dict {
    size_t n_entries; /* lines of the file + the space; the net has n_entries + 1 classes */
    char **entries;   /* entries[k - 1] is the text of class k; the last one is " " */
    char *storage_;
};

/* Lines are split at '\n'; one '\r' at a line's end is dropped (CRLF files); an empty last line
 * (the file ends with a newline) is not an entry, other empty lines are, as in PaddleOCR.
 * Returns 0, or -1 with a one-line reason. */
int ocr_dict_load(const char *path, struct ocr_dict *dict, char *err, size_t err_len);

/* Same from a buffer in memory (the file's bytes). */
int ocr_dict_parse(const char *data, size_t size, struct ocr_dict *dict, char *err, size_t err_len);

/* Checks that a net with n_classes outputs (blank included) fits the dictionary.
 * Returns 0, or -1 with a reason naming both counts. */
int ocr_dict_check_classes(const struct ocr_dict *dict, size_t n_classes, char *err, size_t err_len);

void ocr_dict_free(struct ocr_dict *dict);

#endif
