/* Inside the OCR engine: its constants, its state and the calls between its parts, one file per
 * job (the data flows down this list):
 *   page.c       - the page policy: preparation (scale, margin), a quarter turn for pages on their
 *                  side, words, reading order; ppocr_engine_run
 *   detect.c     - det + DB boxes, and small print read again in strips
 *   readings.c   - the lines' readings: the classifier beside or before recognition, lines read
 *                  both ways where their direction is a guess, the better reading kept
 *   recognize.c  - recognition batches by input width, lockstep groups, CTC
 *   classify.c   - the direction classifier on its own
 *   crops.c      - the text-box crops of a batch
 *   engine.c     - creation (models and their checks, the device, the net session), the rest of the
 *                  public interface
 * The nets run in a net session (nn/session.h); the OCR pipeline's work around them
 * (image, det input, DB bitmap, crops) is ocr/net_io.h: GPU kernels in ocr/gpu, their CPU twin in
 * ocr/cpu. */
#ifndef PPOCR_OCR_ENGINE_INTERNAL_H
#define PPOCR_OCR_ENGINE_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "model/model.h"
#include "nn/device.h"
#include "nn/session.h"
#include "ocr/crop.h"
#include "ocr/ctc.h"
#include "ocr/db_postprocess.h"
#include "ppocr.h"

/* ---- constants (the measurements behind them: BENCHMARKS.md, "the pipeline's constants") ---- */

#define REC_HEIGHT 48
#define REC_MIN_WIDTH 320 /* PaddleOCR's rec_image_shape width: shorter lines are padded to it */
/* Longer lines are padded to the next width of a ladder from REC_MIN_WIDTH, each width 1/8 more
 * than the last rounded up to a multiple of REC_WIDTH_STEP (320, 384, 448, 512, 576, 672, 768,
 * 864, 992, ...): at most about 1/6 of a line is padding, and a page's lines share fewer widths,
 * so fewer batches. */
#define REC_WIDTH_STEP 32
#define CLS_BATCH_MAX 32
/* Recognition batches (one plan per input width) recorded in lockstep into one run: up to
 * REC_GROUP_GROWN when they fit in the activation memory the session already holds or in
 * REC_GROUP_MEMORY, else REC_GROUP. Without the allowance, the memory det leaves would decide how
 * many of a page's widths share a run. */
#define REC_GROUP 4
#define REC_GROUP_GROWN 16
#define REC_GROUP_MEMORY ((uint64_t)64 << 20)
/* Plans recorded together: rec's batches and the direction classifier beside them */
#define GROUP_PLANS_MAX (REC_GROUP_GROWN + 1)
_Static_assert(GROUP_PLANS_MAX <= NN_RUN_MAX_PLANS, "a recognition group must fit in one run");
/* Detection's preparation (not in --paddle-parity): images with a shorter side below DET_MIN_SIDE
 * are scaled up to it, and every image gets DET_MARGIN pixels of its border colour around it, so
 * that word crops are found. */
#define DET_MIN_SIDE 48
#define DET_MARGIN 32
/* Threads that share the host's larger loops with the engine's own, where spare cores are likely:
 * the first engine on a GPU, with up to HELPERS of the CPUs the process may use beyond the first
 * (its siblings run beside other engines, and a CPU device uses every core already). The loops:
 * DB post-processing's boxes, the image's copy into mapped device memory, and a recognition
 * group's crop tables. */
#define HELPERS 3
/* Pixels of a scaled image (a very large one scaled down to ENGINE_MAX_PIXELS) from which an
 * engine without helpers starts threads of its own to share the scaling. */
#define SCALE_SHARED_MIN_PIXELS (4.0 * 1024 * 1024)
/* Pixels of the largest image (as detection sees it, margin included) that shares a run with
 * others (ppocr_engine_run_many): images of few lines gain, and each device slot holds one. */
#define SHARED_RUN_MAX_PIXELS (4.0 * 1024 * 1024)
/* Images detected in one run (ocr_detect_many): up to DET_GROUP_MAX, while their plans fit in the
 * activation memory the session already holds or in DET_GROUP_MEMORY. Small images' detection
 * is a chain of small dispatches, each behind a barrier: side by side, they share the barriers. */
#define DET_GROUP_MAX OCR_IMAGE_SLOTS
#define DET_GROUP_MEMORY ((uint64_t)256 << 20)
_Static_assert(DET_GROUP_MAX <= NN_RUN_MAX_PLANS, "a detection group must fit in one run");
/* Pixels of the largest image the engine works on; larger ones are scaled down to it. */
#define ENGINE_MAX_PIXELS (16.0 * 1024 * 1024)

/* ---- state ---------------------------------------------------------------------------------- */

struct ocr_workers;
struct ocr_net_io;

struct ppocr_engine {
    struct ppocr_options opt;
    struct nn_device *dev;
    bool shares_dev; /* a sibling's: the first engine owns and closes it */
    struct nn_device_info device;
    /* The models are read once, by the first engine; its siblings use them (destroyed before it). */
    struct pvk_model own_models[NN_NET_COUNT];
    const struct pvk_model *models; /* own_models, or the first engine's */
    struct nn_session *nets;
    struct ocr_net_io *io;       /* the image, det's input, DB's bitmap and the crops on the device */
    struct ocr_workers *helpers; /* threads beside this one for the host's larger loops (HELPERS) */
    struct ppocr_engine_startup startup;
};

/* One text line on its way through cls and rec. */
struct line {
    struct image_crop crop;
    int image; /* the image slot it is cropped from (ocr/net_io.h) */
    int box;   /* index in the DB boxes */
    int width; /* rec input width (bucket) */
    int twin;  /* a second reading: the index of the line it reads again */
    struct ctc_text text;
};

/* ---- calls between the parts ---------------------------------------------------------------- */

double ocr_now_ms(void);
/* The net device opt chooses (options.c). */
struct nn_device_options ocr_device_options(const struct ppocr_options *opt);
int ocr_fail(char *err, size_t err_len, const char *fmt, const char *detail);
/* Helper threads a host loop may take beside the engine's own: HELPERS, at most the CPUs the
 * process may use beyond the first. */
int ocr_helper_count(void);

/* detect.c: src in image slot `slot` of the device, framed by `margin` (ocr/net_io.h); its time
 * in r. */
int ocr_upload(struct ppocr_engine *e, int slot, const struct ppocr_image *src, int margin, struct ppocr_result *r,
               char *err, size_t err_len);
/* One image's detection among several (ocr_detect_many): the uploaded image in `slot` (img: its
 * framed size) at `limit`, its DB boxes grown by `unclip_ratio` into *boxes, its times added to r,
 * rc 0 or -1 with the reason in err. */
struct det_image {
    const struct ppocr_image *img;
    int slot;
    int limit;
    double unclip_ratio;
    struct db_boxes *boxes;
    struct ppocr_result *r;
    char *err;
    size_t err_len;
    int rc;
};
/* Detection of n uploaded images (resize + normalise, the det net, DB boxes), their nets in
 * lockstep in as few runs as DET_GROUP_MAX and DET_GROUP_MEMORY allow; an image whose run fails
 * is run again alone. Returns the count that failed. */
int ocr_detect_many(struct ppocr_engine *e, struct det_image *images, int n);
/* ocr_detect_many of one image. */
int ocr_detect(struct ppocr_engine *e, int slot, const struct ppocr_image *img, int limit, double unclip_ratio,
               struct db_boxes *boxes, struct ppocr_result *r, char *err, size_t err_len);
/* Small print (det_tiles.h): src framed by `margin` read again in strips through slot `slot`,
 * their boxes merged into `boxes`, and src uploaded again there for the crops. */
int ocr_detect_strips(struct ppocr_engine *e, int slot, const struct ppocr_image *src, int margin,
                      struct db_boxes *boxes, struct ppocr_result *r, char *err, size_t err_len);

/* crops.c: crops lines[0..n), all of one image, into slots first_slot.. of crop batch `batch` at
 * width target_w (turned over where use_flip and the line says so). */
int ocr_set_crops(struct ppocr_engine *e, int batch, struct line *const *lines, int n, int first_slot, int target_w,
                  int use_flip, char *err, size_t err_len);
/* One image's lines of a plan's input, as a task of ocr_set_crops_all. */
struct crop_set {
    int batch;
    struct line *const *lines;
    int n, first_slot, target_w, use_flip;
    int rc;
    char err[256];
};
/* The images among lines[0..n) (lines of one image next to each other): the crop sets they take. */
int ocr_crop_images(struct line *const *lines, int n);
/* Adds the crops of lines[0..n) into plan `plan`'s input, line i at slot i: one set, and one run
 * of `runs` (crop batch k for set k), per image among them. -1: more than OCR_CROP_BATCHES. */
int ocr_crop_sets_add(struct crop_set *sets, struct ocr_crop_runs *runs, int plan, struct line *const *lines, int n,
                      int target_w, int use_flip);
/* ocr_set_crops for n sets, on the helpers too. */
int ocr_set_crops_all(struct ppocr_engine *e, struct crop_set *sets, int n, char *err, size_t err_len);

/* classify.c: the classifier over every line; a line whose best label is 180 degrees with a score
 * above cls_thresh gets crop.flip set. */
int ocr_classify(struct ppocr_engine *e, struct line *lines, int n_lines, struct ppocr_result *r, char *err,
                 size_t err_len);
/* The classifier's verdicts on n lines from the last run's output k (plan: its plan): turn line i
 * over where its best label is 180 degrees with a score above cls_thresh. */
int ocr_read_directions(struct ppocr_engine *e, const struct nn_plan *plan, int k, int n, bool *turn, char *err,
                        size_t err_len);

/* recognize.c: the direction classifier recorded beside recognition's first run: its lines (up
 * to CLS_BATCH_MAX), cropped unturned, and its verdicts. */
struct cls_beside {
    struct line *const *lines;
    int n;
    bool *turn; /* out: the classifier turns line i over */
};
/* Recognition of n_lines lines (their text set), with `cls` beside it when not NULL. */
int ocr_recognize(struct ppocr_engine *e, struct line *lines, int n_lines, const struct cls_beside *cls,
                  struct ppocr_result *r, char *err, size_t err_len);

/* readings.c: every line read (classified first, or beside), the better of two readings kept where
 * its direction is a guess. lines has room for 2 n_lines + 1; *n_readings is the count used, whose
 * texts the caller frees beyond n_lines (and the first n_lines' too). */
int ocr_read_lines(struct ppocr_engine *e, struct line *lines, int n_lines, int *n_readings, struct ppocr_result *r,
                   char *err, size_t err_len);

#endif
