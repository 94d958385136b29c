/* The OCR engine's public interface: create it once from a model set and options, run it on
 * decoded images in memory, free each result. The command-line tool is one client of it. */
#ifndef PPOCR_OCR_ENGINE_H
#define PPOCR_OCR_ENGINE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "img/image.h" /* struct ocr_image: 8-bit BGR pixels */

struct ocr_options {
    const char *models_dir;  /* holds det.pvk, cls.pvk, rec.pvk; NULL: search the default places */
    int device_index;        /* -1: best device */
    int force_fp32;          /* never use fp16 storage or arithmetic */
    int fp16_math;           /* cls and rec: fp16 element-wise arithmetic over fp16 storage (precision.h) */
    int use_cls;             /* run the direction classifier */
    int det_limit_side_len;  /* 960 */
    float det_db_thresh;     /* 0.3 */
    double det_db_box_thresh; /* 0.6: the mean box score (a double) is compared with it */
    double det_db_unclip_ratio; /* 1.5 */
    float cls_thresh;        /* 0.9 */
    float drop_score;        /* 0.5 */
    int rec_batch_num;       /* 6 */
    int profile;             /* collect per-stage timings into each result */
    /* Reproduce PaddleOCR's pipeline exactly, limits included: recognition batches of
     * rec_batch_num lines sorted by aspect ratio, each padded to its widest line (so a line's
     * text depends on its batch), alpha dropped, no orientation check by the recogniser. */
    int paddle_parity;
};

/* PaddleOCR 2.x's defaults. */
void ocr_options_default(struct ocr_options *opt);

/* A word of a line (a character for CJK text): its text, the mean probability of its CTC steps,
 * and its box in the source image, clockwise from the top-left as the word is read. */
struct ocr_word {
    char *text;    /* UTF-8 */
    float score;
    int box[4][2];
};

struct ocr_line {
    char *text;        /* UTF-8; the segments of one row joined by a space, or a tab across a wide gap */
    float score;       /* mean probability of the kept CTC steps (of all its segments) */
    int box[4][2];     /* corners in the source image, clockwise from top-left */
    int upside_down;   /* the line was read turned 180 degrees from its box's orientation */
    int n_words;
    struct ocr_word *words; /* in reading order; NULL when n_words is 0 */
};

/* A run of consecutive items (lines of a paragraph, paragraphs of a block) and the axis-aligned
 * box around them in the source image, x0 <= x1 and y0 <= y1 inclusive. */
struct ocr_span {
    int first, count;
    int x0, y0, x1, y1;
};

enum ocr_stage {
    OCR_STAGE_UPLOAD, OCR_STAGE_DET_PRE, OCR_STAGE_DET, OCR_STAGE_DB, OCR_STAGE_CLS,
    OCR_STAGE_REC, OCR_STAGE_CTC, OCR_STAGE_LAYOUT, OCR_STAGE_COUNT
};

struct ocr_result {
    int width, height;
    int n_lines;
    struct ocr_line *lines; /* reading order */
    /* The page's structure over the lines: paragraphs are runs of lines, blocks (columns, headings,
     * captions, table cells, sidebars) runs of paragraphs; both cover every line in order. With
     * --paddle-parity the page is one block of one paragraph. */
    int n_paragraphs;
    struct ocr_span *paragraphs;
    int n_blocks;
    struct ocr_span *blocks;
    double wall_ms[OCR_STAGE_COUNT]; /* filled when options.profile is set */
    double gpu_ms[OCR_STAGE_COUNT];
};

struct ocr_engine;

/* Returns NULL with a one-line reason in err. *err_kind tells why: 1 = no usable Vulkan device,
 * 2 = unusable models, 0 = other. */
struct ocr_engine *ocr_engine_create(const struct ocr_options *opt, int *err_kind, char *err, size_t err_len);
/* Another engine on `first`'s device: the Vulkan device, its queue, the compiled pipelines and
 * the memory pools are shared, everything else (nets, plans, command buffers) is its own, so
 * each engine can run on its own thread. Destroy siblings before `first`. */
struct ocr_engine *ocr_engine_create_sibling(const struct ocr_engine *first, int *err_kind, char *err,
                                             size_t err_len);
/* Returns 0, or -1 with a one-line reason (the engine stays usable for the next image). */
int ocr_engine_run(struct ocr_engine *engine, const struct ocr_image *image, struct ocr_result *result,
                   char *err, size_t err_len);
void ocr_result_free(struct ocr_result *result);
void ocr_engine_destroy(struct ocr_engine *engine);

const char *ocr_stage_name(enum ocr_stage stage);

/* Where the engine's creation spent its time (wall ms): model files (mapping, checks), the
 * Vulkan instance and device (created meanwhile on another thread: this is what was left to wait
 * for), the nets (built side by side: pipelines from the cache or the compiler, weights uploaded)
 * and the rest (image kernels, buffers). */
struct ocr_engine_startup {
    double models_ms, device_ms, nets_ms, other_ms;
};
void ocr_engine_startup(const struct ocr_engine *engine, struct ocr_engine_startup *out);

/* GPU memory the engine holds, from its buffer pools: now and at the most since creation. */
struct ocr_engine_memory {
    uint64_t device_in_use, device_peak; /* device-local pool */
    uint64_t host_in_use, host_peak;     /* host-visible (staging) pool */
};
void ocr_engine_memory(const struct ocr_engine *engine, struct ocr_engine_memory *out);
/* Describes the device the engine runs on: "<name> (<kind>), <fp16|fp32>". */
const char *ocr_engine_device(const struct ocr_engine *engine);
/* What kind of device the engine runs on: a CPU device (lavapipe, which uses every core by
 * itself), a discrete GPU, or another GPU (integrated, virtual). */
enum ocr_device_class { OCR_DEVICE_CPU, OCR_DEVICE_DISCRETE_GPU, OCR_DEVICE_OTHER_GPU };
enum ocr_device_class ocr_engine_device_class(const struct ocr_engine *engine);

/* Prints every Vulkan device with its index (what --device takes). Returns the device count, or
 * -1 with a one-line reason. */
int ocr_list_devices(FILE *out, char *err, size_t err_len);
/* Opens the device the engine would use (opt->device_index, opt->force_fp32), prints which one and
 * its capabilities, runs a small computation on it and compares with the CPU.
 * Returns 0, or -1 with a one-line reason. */
int ocr_self_check(const struct ocr_options *opt, FILE *out, char *err, size_t err_len);

#endif
