/* ppocr-vk: PaddleOCR's PP-OCR pipeline (text detection, direction classification, recognition)
 * on Vulkan. This is the library's whole public interface; the command-line tool uses it alone.
 *
 * Use: decode an image (ppocr_image_load_*), make an engine once (ppocr_engine_create), run it on
 * images (ppocr_engine_run), free each result (ppocr_result_free) and the engine.
 *
 * Errors: every call that can fail returns an enum ppocr_status (PPOCR_OK = 0) and writes a
 * one-line reason, without a trailing newline, into the caller's err buffer.
 *
 * Threads: an engine is used by one thread at a time; engines made with ppocr_engine_create_sibling
 * share their first engine's device and run on threads of their own, one engine per thread at
 * once. Image decoding, ppocr_result_free, ppocr_status_name and ppocr_stage_name may be called
 * from any thread. ppocr_list_devices, ppocr_self_check and ppocr_bench_ops open a device of their
 * own. Results belong to the caller until freed.
 *
 * Images: decoding to the 8-bit BGR pixels PaddleOCR works on (what cv2.imread(path) returns).
 *
 * Formats: JPEG with libjpeg-turbo, the decoder of cv2.imread (baseline and progressive; gray, YCbCr,
 * CMYK/YCCK; EXIF orientation applied as cv2.imread does); with stb_image: PNG (1-16 bit; gray,
 * gray+alpha, palette, RGB, RGBA), BMP, GIF (first frame), binary PNM (P5/P6) and TGA. 16-bit samples
 * keep their high byte (cv2.IMREAD_COLOR). Gray is replicated to three channels.
 *
 * Limits, checked from the header before any pixel memory is allocated: a side of at most
 * PPOCR_IMAGE_MAX_SIDE and at most PPOCR_IMAGE_MAX_PIXELS pixels; files of at most
 * PPOCR_IMAGE_MAX_FILE_BYTES. Peak memory of a decode is the file bytes + the decoder's buffer
 * (up to 12 bytes a pixel for 16-bit RGBA PNG, 3-4 otherwise; a progressive JPEG adds its
 * coefficients, 2 bytes a sample) + the 3-byte BGR result.
 *
 * Fidelity to the reference decoder (ref_ocr.mjs, = cv2.imread): PNG, BMP, PNM, TGA, GIF and JPEG
 * pixels are identical (JPEG: the same libjpeg-turbo settings as cv2.imread, ISLOW IDCT and fancy
 * upsampling; checked byte for byte on every JPEG of tests/data). CMYK JPEG uses cv2's naive
 * CMYK -> BGR formula, not colour management.
 *
 * Truncated files are refused (libjpeg would fill the missing part of a JPEG with gray, stb_image
 * that of a BMP, TGA, GIF or PNM with zeros or leave it unset). Other JPEG damage that libjpeg only
 * warns about (corrupt entropy data, stray bytes) is decoded as cv2.imread decodes it.
 *
 * Every failure returns a status naming the reason and a one-line message; nothing aborts. */
#ifndef PPOCR_H
#define PPOCR_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The library is built with hidden symbols (-fvisibility=hidden): what is marked so is all that
 * libppocr-vk.so exports and all that libppocr-vk.a leaves global. */
#if defined(__GNUC__) || defined(__clang__)
#define PPOCR_API __attribute__((visibility("default")))
#else
#define PPOCR_API
#endif

/* ---- status --------------------------------------------------------------------------------- */

enum ppocr_status {
    /* decoding an image */
    PPOCR_OK = 0,
    PPOCR_ERR_NOT_FOUND,      /* no such file */
    PPOCR_ERR_PERMISSION,     /* permission denied */
    PPOCR_ERR_IS_DIRECTORY,   /* a directory was given */
    PPOCR_ERR_IO,             /* any other read error */
    PPOCR_ERR_EMPTY,          /* zero bytes */
    PPOCR_ERR_UNKNOWN_FORMAT, /* not an image this program knows */
    PPOCR_ERR_UNSUPPORTED, /* a known format or variant that cannot be decoded (WebP, TIFF, P1-P4 PNM, 12-bit JPEG...) */
    PPOCR_ERR_TRUNCATED,   /* the data ends early */
    PPOCR_ERR_CORRUPT,     /* the data is inconsistent */
    PPOCR_ERR_TOO_LARGE,   /* over the limits above */
    PPOCR_ERR_NO_MEMORY,
    /* the engine */
    PPOCR_ERR_NO_DEVICE, /* no usable device, or one that cannot run the nets: nothing can be processed */
    PPOCR_ERR_MODELS,    /* the models are missing, unreadable or not a matching set */
    PPOCR_ERR_FAILED,    /* this image could not be processed (the reason in err); the engine stays usable */
};

/* "ok", "not found", ..., "no device", "models", "failed". */
PPOCR_API const char *ppocr_status_name(enum ppocr_status status);

/* ---- images --------------------------------------------------------------------------------- */

#define PPOCR_IMAGE_MAX_SIDE 32768
#define PPOCR_IMAGE_MAX_PIXELS 100000000LL /* 100 megapixels */
#define PPOCR_IMAGE_MAX_FILE_BYTES (1LL << 30)

struct ppocr_image {
    int width, height;
    uint8_t *bgr;  /* width*height*3 bytes, rows top to bottom, no padding */
    int had_alpha; /* the file carried an alpha channel (or a tRNS transparent colour) */
};

enum ppocr_alpha_mode {
    /* Colour channels as stored, alpha ignored: exactly cv2.imread(path, IMREAD_COLOR). */
    PPOCR_ALPHA_IGNORE = 0,
    /* Flatten so that content carried by alpha stays visible: when the colour channels are one
     * constant colour wherever alpha > 0 (text drawn only in the alpha channel), alpha is the ink:
     * gray = 255 - alpha (dark ink on white). Otherwise the pixels are composited onto white, or
     * onto black when the alpha-weighted foreground is light (white text on transparent). */
    PPOCR_ALPHA_FLATTEN = 1,
};

/* Decodes `path`. `name` in messages is the path. Returns PPOCR_OK and fills `img` (free with
 * ppocr_image_free), or a status with a one-line reason in err (no trailing newline). */
PPOCR_API enum ppocr_status ppocr_image_load_file(const char *path, enum ppocr_alpha_mode alpha,
                                                  struct ppocr_image *img, char *err, size_t err_len);
/* Reads fd to its end (a pipe, stdin, a file) and decodes it; `name` is used in messages. Reads
 * interrupted by a signal are retried: a caller that must stop on one reads the bytes itself and
 * decodes them with ppocr_image_load_memory (as the CLI does for stdin). fd stays open. */
PPOCR_API enum ppocr_status ppocr_image_load_fd(int fd, const char *name, enum ppocr_alpha_mode alpha,
                                                struct ppocr_image *img, char *err, size_t err_len);
/* Decodes encoded bytes already in memory. */
PPOCR_API enum ppocr_status ppocr_image_load_memory(const void *data, size_t size, const char *name,
                                                    enum ppocr_alpha_mode alpha, struct ppocr_image *img, char *err,
                                                    size_t err_len);
PPOCR_API void ppocr_image_free(struct ppocr_image *img);

/* Whether a file name ends in the extension of a format decoded here (case-insensitive, image_formats.c):
 * the files a folder walk picks up. */
PPOCR_API int ppocr_image_has_known_extension(const char *name);

/* ---- the engine ----------------------------------------------------------------------------- */

/* Where the nets run. */
enum ppocr_backend {
    PPOCR_BACKEND_AUTO,   /* the best Vulkan GPU; else the CPU backend where it is built; else a
                           * Vulkan CPU driver (lavapipe) */
    PPOCR_BACKEND_VULKAN, /* a Vulkan device: device_index, else the best one (lavapipe on a machine without a GPU) */
    PPOCR_BACKEND_CPU,    /* the CPU backend (oneDNN, fp32) */
};

struct ppocr_options {
    const char *models_dir;     /* holds det.pvk, cls.pvk, rec.pvk; NULL: search the default places */
    int backend;                /* enum ppocr_backend: PPOCR_BACKEND_AUTO */
    int device_index;           /* Vulkan: -1: the best device */
    int threads;                /* CPU backend: threads of each engine's runs; 0: all cores, or OMP_NUM_THREADS */
    int force_fp32;             /* never use fp16 storage or arithmetic */
    int fp16_math;              /* cls and rec: fp16 element-wise arithmetic over fp16 storage  */
    int use_cls;                /* run the direction classifier */
    int det_limit_side_len;     /* 960 */
    float det_db_thresh;        /* 0.3 */
    double det_db_box_thresh;   /* 0.6: the mean box score (a double) is compared with it */
    double det_db_unclip_ratio; /* 1.5 */
    float cls_thresh;           /* 0.9 */
    float drop_score;           /* 0.5 */
    int rec_batch_num;          /* 6 */
    int profile;                /* collect per-stage timings into each result */
    /* Reproduce PaddleOCR's pipeline exactly, limits included: recognition batches of
     * rec_batch_num lines sorted by aspect ratio, each padded to its widest line (so a line's
     * text depends on its batch), alpha dropped, no orientation check by the recogniser. */
    int paddle_parity;
};

/* PaddleOCR 2.x's defaults. */
PPOCR_API void ppocr_options_default(struct ppocr_options *opt);

/* A word of a line (a character for CJK text): its text, the mean probability of its CTC steps,
 * and its box in the source image, clockwise from the top-left as the word is read. */
struct ppocr_word {
    char *text; /* UTF-8 */
    float score;
    int box[4][2];
};

struct ppocr_line {
    char *text;      /* UTF-8; the segments of one row joined by a space, or a tab across a wide gap */
    float score;     /* mean probability of the kept CTC steps (of all its segments) */
    int box[4][2];   /* corners in the source image, clockwise from top-left */
    int upside_down; /* the line was read turned 180 degrees from its box's orientation */
    int n_words;
    struct ppocr_word *words; /* in reading order; NULL when n_words is 0 */
};

/* A run of consecutive items (lines of a paragraph, paragraphs of a block) and the axis-aligned
 * box around them in the source image, x0 <= x1 and y0 <= y1 inclusive. */
struct ppocr_span {
    int first, count;
    int x0, y0, x1, y1;
};

enum ppocr_stage {
    PPOCR_STAGE_UPLOAD,
    PPOCR_STAGE_DET_PRE,
    PPOCR_STAGE_DET,
    PPOCR_STAGE_DB,
    PPOCR_STAGE_CLS,
    PPOCR_STAGE_REC,
    PPOCR_STAGE_CTC,
    PPOCR_STAGE_LAYOUT,
    PPOCR_STAGE_COUNT
};

struct ppocr_result {
    int width, height;
    int n_lines;
    struct ppocr_line *lines; /* reading order */
    /* The page's structure over the lines: paragraphs are runs of lines, blocks (columns, headings,
     * captions, table cells, sidebars) runs of paragraphs; both cover every line in order. With
     * --paddle-parity the page is one block of one paragraph. */
    int n_paragraphs;
    struct ppocr_span *paragraphs;
    int n_blocks;
    struct ppocr_span *blocks;
    double wall_ms[PPOCR_STAGE_COUNT]; /* filled when options.profile is set */
    double gpu_ms[PPOCR_STAGE_COUNT];
};

struct ppocr_engine;

/* Makes an engine: reads the models, opens the device, builds the nets. Returns PPOCR_OK with *out
 * set, or PPOCR_ERR_NO_DEVICE, PPOCR_ERR_MODELS or PPOCR_ERR_FAILED (out of memory, no thread) with
 * *out NULL and a one-line reason in err. */
PPOCR_API enum ppocr_status ppocr_engine_create(const struct ppocr_options *opt, struct ppocr_engine **out, char *err,
                                                size_t err_len);
/* Another engine on `first`'s device: the Vulkan device, its queue, the compiled pipelines and
 * the memory pools are shared, everything else (nets, plans, command buffers) is its own, so
 * each engine can run on its own thread. Destroy siblings before `first`. */
PPOCR_API enum ppocr_status ppocr_engine_create_sibling(const struct ppocr_engine *first, struct ppocr_engine **out,
                                                        char *err, size_t err_len);
/* OCR of one decoded image. Returns PPOCR_OK with *result filled (free it with ppocr_result_free), or
 * PPOCR_ERR_FAILED with a one-line reason (the engine stays usable for the next image). */
PPOCR_API enum ppocr_status ppocr_engine_run(struct ppocr_engine *engine, const struct ppocr_image *image,
                                             struct ppocr_result *result, char *err, size_t err_len);
/* OCR of n decoded images at once: small ones share the recogniser's batches (up to 8 images a
 * run), which keeps a GPU far busier than an image of a few lines alone. results[i] and status[i]
 * are images[i]'s: what ppocr_engine_run gives for it (the same lines and boxes; scores within the
 * rounding of the batch kernels), with a failed image's one-line reason at errs + i * err_len and
 * its result empty. One image's failure is not the others'. Returns PPOCR_OK when every image was
 * read. */
PPOCR_API enum ppocr_status ppocr_engine_run_many(struct ppocr_engine *engine, const struct ppocr_image *images, int n,
                                                  struct ppocr_result *results, enum ppocr_status *status, char *errs,
                                                  size_t err_len);
PPOCR_API void ppocr_result_free(struct ppocr_result *result);
PPOCR_API void ppocr_engine_destroy(struct ppocr_engine *engine);

/* The options a single run may change without making another engine (a server's per-request
 * options). det_db_thresh, the precision and the device are fixed when the engine is made. */
struct ppocr_run_options {
    int det_limit_side_len;     /* 32 to 8192 */
    double det_db_box_thresh;   /* 0 to 1 */
    double det_db_unclip_ratio; /* 0 to 100 */
    int use_cls;                /* 1 only on an engine made with use_cls (its classifier loaded) */
    float cls_thresh;           /* 0 to 1 */
    float drop_score;           /* 0 to 1 */
};
/* The engine's own values of those options (what ppocr_engine_run uses). */
PPOCR_API void ppocr_engine_run_options(const struct ppocr_engine *engine, struct ppocr_run_options *out);
/* ppocr_engine_run with those options for this image only. A value out of range, or use_cls on
 * an engine without its classifier, returns PPOCR_ERR_FAILED naming the option; nothing is run. */
PPOCR_API enum ppocr_status ppocr_engine_run_with(struct ppocr_engine *engine, const struct ppocr_image *image,
                                                  const struct ppocr_run_options *run, struct ppocr_result *result,
                                                  char *err, size_t err_len);

PPOCR_API const char *ppocr_stage_name(enum ppocr_stage stage);

/* Where the engine's creation spent its time (wall ms): model files (mapping, checks; read on
 * another thread while the device is opened: this is what was left to wait for), the Vulkan
 * instance and device (or the CPU backend), the nets (built side by side: pipelines from the
 * cache or the compiler, weights uploaded) and the rest (image kernels, buffers). */
struct ppocr_engine_startup {
    double models_ms, device_ms, nets_ms, other_ms;
};
PPOCR_API void ppocr_engine_startup(const struct ppocr_engine *engine, struct ppocr_engine_startup *out);

/* GPU memory the engine holds, from its buffer pools: now and at the most since creation. */
struct ppocr_engine_memory {
    uint64_t device_in_use, device_peak; /* device-local pool */
    uint64_t host_in_use, host_peak;     /* host-visible (staging) pool */
};
PPOCR_API void ppocr_engine_memory(const struct ppocr_engine *engine, struct ppocr_engine_memory *out);
/* Describes the device the engine runs on: "<name> (<kind>), <fp16|fp32>". */
PPOCR_API const char *ppocr_engine_device(const struct ppocr_engine *engine);
/* What kind of device the engine runs on: a CPU device (lavapipe, which uses every core by
 * itself), a discrete GPU, or another GPU (integrated, virtual). */
enum ppocr_device_class { PPOCR_DEVICE_CPU, PPOCR_DEVICE_DISCRETE_GPU, PPOCR_DEVICE_OTHER_GPU };
PPOCR_API enum ppocr_device_class ppocr_engine_device_class(const struct ppocr_engine *engine);

/* Prints every Vulkan device with its index (what --device takes), then the CPU backend as
 * "cpu: ..." where it is built. Returns the device count, or -1 with a one-line reason. */
PPOCR_API int ppocr_list_devices(FILE *out, char *err, size_t err_len);
/* The class of each Vulkan device, in the numbering of options.device_index and --list-devices,
 * into out[0..max). Returns the count (which may pass max), or -1 with a one-line reason. */
PPOCR_API int ppocr_vulkan_device_classes(enum ppocr_device_class *out, int max, char *err, size_t err_len);
/* Opens the device the engine would use (opt->backend, device_index, force_fp32), prints which one and
 * its capabilities, runs a small computation on it and compares with the CPU.
 * Returns PPOCR_OK, or PPOCR_ERR_NO_DEVICE with a one-line reason. */
PPOCR_API enum ppocr_status ppocr_self_check(const struct ppocr_options *opt, FILE *out, char *err, size_t err_len);

/* Benchmarks below the engine, for the command's --bench-ops: times every op of det
 * (1x3x960x960), cls (32x3x48x192) and rec (batches of 1-32 lines) on the device the engine would
 * use, `runs` replays after a warm-up, and prints a table per net. */
PPOCR_API enum ppocr_status ppocr_bench_ops(const struct ppocr_options *opt, int runs, FILE *out, char *err,
                                            size_t err_len);

#ifdef __cplusplus
}
#endif

#endif
