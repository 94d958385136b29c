/* The OCR pipeline's own work around the nets, on the backend that runs them, behind calls that
 * name no backend: the image on the device (uploaded once, read framed by a margin), detection's
 * input and DB's bitmap, and the text-line crops that become the classifier's and the
 * recogniser's inputs. Vulkan: GPU kernels (ocr/gpu/ocr_gpu.h); the CPU backend: the pipeline's
 * CPU reference of the same arithmetic (ocr/cpu/ocr_cpu.h), so that a page never touches Vulkan
 * there. The record functions are the session's callbacks (nn/session.h).
 *
 * Threads: one ocr_net_io belongs to one engine; ocr_net_io_set_crops may run for different
 * batches on several threads at once. */
#ifndef PPOCR_OCR_NET_IO_H
#define PPOCR_OCR_NET_IO_H

#include <stddef.h>
#include <stdint.h>

#include "nn/session.h"
#include "ocr/crop.h"

struct nn_device;
struct ocr_net_io;
struct ppocr_image;
struct ocr_workers;

/* The length of the replay key that ocr_net_io_det_prepare fills. */
#define OCR_NET_IO_DET_KEY 7

/* DB's bitmap thresholds det's map at db_thresh. */
int ocr_net_io_create(struct nn_device *dev, float db_thresh, struct ocr_net_io **out, char *err, size_t err_len);
void ocr_net_io_destroy(struct ocr_net_io *io);

/* The backend holds OCR_IMAGE_SLOTS images (ocr/crop.h), so that one run crops lines of several:
 * later uploads and detection use slot `slot` (0 at first). */
int ocr_net_io_select_image(struct ocr_net_io *io, int slot, char *err, size_t err_len);
/* Puts src in the current slot, to be read framed by `margin` pixels of its border colour; large
 * images are copied on the helpers too (where there are any). */
int ocr_net_io_upload(struct ocr_net_io *io, const struct ppocr_image *src, int margin, struct ocr_workers *helpers,
                      char *err, size_t err_len);
int ocr_net_io_margin(const struct ocr_net_io *io);

/* ---- detection ------------------------------------------------------------------------------ */

/* Readies det's input of the current slot's image (its framed size img_w x img_h) at det_w x det_h and
 * the slot's bitmap of a map_w x map_h map, and fills key[OCR_NET_IO_DET_KEY]: what the two
 * callbacks below record for that slot alone, for the session's replay. */
int ocr_net_io_det_prepare(struct ocr_net_io *io, int img_w, int img_h, int det_w, int det_h, int map_w, int map_h,
                           int key[OCR_NET_IO_DET_KEY], char *err, size_t err_len);

/* The ctx of the two callbacks below: a run of n det plans, plan k that of the image in slot
 * slot[k] (each prepared). */
struct ocr_net_io_dets {
    struct ocr_net_io *io;
    int n;
    int slot[OCR_IMAGE_SLOTS];
};
/* nn_record_fn (ctx: a struct ocr_net_io_dets): resize + normalise into each det plan's input. */
int ocr_net_io_record_det_input(void *dets, struct nn_recorder *rec, struct nn_plan *const *plans, int n_plans,
                                char *err, size_t err_len);
/* nn_record_fn (ctx: a struct ocr_net_io_dets): each det plan's map thresholded into its slot's
 * bitmap. */
int ocr_net_io_record_db_bitmap(void *dets, struct nn_recorder *rec, struct nn_plan *const *plans, int n_plans,
                                char *err, size_t err_len);
/* Slot's bitmap after the run, the contour follower's work image (ocr/contour.h), host memory. */
int8_t *ocr_net_io_db_work(struct ocr_net_io *io, int slot);

/* ---- crops ---------------------------------------------------------------------------------- */

/* Packs n crops (slots 0..n-1) at target_h x target_w into batch `batch` (< OCR_CROP_BATCHES). */
int ocr_net_io_set_crops(struct ocr_net_io *io, int batch, const struct image_crop *crops, int n, int target_h,
                         int target_w, char *err, size_t err_len);

/* The ctx of ocr_net_io_record_crops. */
struct ocr_net_io_crops {
    struct ocr_net_io *io;
    struct ocr_crop_runs runs;
};
/* nn_record_fn (ctx: a struct ocr_net_io_crops): every batch's crops, side by side. */
int ocr_net_io_record_crops(void *crops, struct nn_recorder *rec, struct nn_plan *const *plans, int n_plans, char *err,
                            size_t err_len);

#endif
