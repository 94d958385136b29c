/* The OCR pipeline's own GPU work around the nets, behind calls that name no GPU type, so that the
 * rest of src/ocr knows only the net session: the image on the device (uploaded once, read framed
 * by a margin: image_ops.h), detection's input and DB's bitmap, and the text-line crops that
 * become the classifier's and the recogniser's inputs: the Vulkan side of ocr/net_io.h, which
 * forwards to it. The record functions do the work of the session's callbacks (nn/session.h).
 *
 * Threads: one ocr_gpu belongs to one engine; ocr_gpu_set_crops may run for different batches on
 * several threads at once. */
#ifndef PPOCR_OCR_GPU_OCR_GPU_H
#define PPOCR_OCR_GPU_OCR_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "nn/session.h"
#include "ocr/crop.h"

struct nn_device;
struct ocr_gpu;
struct ppocr_image;
struct ocr_workers;

/* The length of the replay key that ocr_gpu_det_prepare fills. */
#define OCR_GPU_DET_KEY 7

/* DB's bitmap thresholds det's map at db_thresh. */
int ocr_gpu_create(struct nn_device *dev, float db_thresh, struct ocr_gpu **out, char *err, size_t err_len);
void ocr_gpu_destroy(struct ocr_gpu *g);

/* Later uploads and detection use image slot `slot` (< OCR_IMAGE_SLOTS; 0 at first); crops name
 * their slot. */
int ocr_gpu_select_image(struct ocr_gpu *g, int slot, char *err, size_t err_len);
/* Puts src in the current slot, to be read framed by `margin` pixels of its border colour (no
 * padded copy is made, nor uploaded); large images are copied on the helpers too. */
int ocr_gpu_upload(struct ocr_gpu *g, const struct ppocr_image *src, int margin, struct ocr_workers *helpers, char *err,
                   size_t err_len);
int ocr_gpu_margin(const struct ocr_gpu *g);

/* ---- detection ------------------------------------------------------------------------------ */

/* Readies det's input of the current slot's image (its framed size img_w x img_h) at det_w x det_h and
 * the slot's bitmap of a map_w x map_h map, and fills key[OCR_GPU_DET_KEY]: what the two
 * callbacks below record for that slot alone, for the session's replay. */
int ocr_gpu_det_prepare(struct ocr_gpu *g, int img_w, int img_h, int det_w, int det_h, int map_w, int map_h,
                        int key[OCR_GPU_DET_KEY], char *err, size_t err_len);
/* The session's callbacks for a run of det plans, plan k that of slot slots[k] (n_slots of them):
 * resize + normalise each slot's image into its plan's input; each plan's map thresholded into its
 * slot's bitmap. */
int ocr_gpu_record_det_input(struct ocr_gpu *g, const int *slots, int n_slots, struct nn_recorder *rec,
                             struct nn_plan *const *plans, int n_plans, char *err, size_t err_len);
int ocr_gpu_record_db_bitmap(struct ocr_gpu *g, const int *slots, int n_slots, struct nn_recorder *rec,
                             struct nn_plan *const *plans, int n_plans, char *err, size_t err_len);
/* Slot's bitmap after the run, the contour follower's work image (db_bitmap.h), host memory. */
int8_t *ocr_gpu_db_work(struct ocr_gpu *g, int slot);

/* ---- crops ---------------------------------------------------------------------------------- */

/* Packs n crops (slots 0..n-1) at target_h x target_w into batch `batch`. */
int ocr_gpu_set_crops(struct ocr_gpu *g, int batch, const struct image_crop *crops, int n, int target_h, int target_w,
                      char *err, size_t err_len);

/* The work of an nn_record_fn: every batch's crops of `runs`, side by side. */
int ocr_gpu_record_crops(struct ocr_gpu *g, const struct ocr_crop_runs *runs, struct nn_recorder *rec,
                         struct nn_plan *const *plans, int n_plans, char *err, size_t err_len);

#endif
