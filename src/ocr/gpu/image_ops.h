/* Image preprocessing on the GPU (not model ops): the decoded 8-bit BGR image is uploaded once as
 * packed bytes, and these kernels build the nets' inputs from it, reproducing src/ocr/preprocess.h
 * (OpenCV's fixed-point arithmetic) so that GPU and CPU inputs agree:
 *   det   cv2.resize INTER_LINEAR to the det size + (x/255 - mean)/std into [1][3][H][W];
 *   crops cv2.warpPerspective INTER_CUBIC + BORDER_REPLICATE of every text box of the image, the
 *         90-degree turn of tall boxes, an optional 180-degree turn (lines the classifier turned
 *         over), cv2.resize to the target height and (x/255 - 0.5)/0.5 with zero padding, straight
 *         into batch slots of the cls input [N][3][48][192] or the rec input [N][3][48][W]; all
 *         crops of an image in two dispatches.
 * Exactness: the det resize and the crop resize use OpenCV's fixed-point coefficients, computed on
 * the host in double exactly as src/ocr/preprocess.c does, and its integer arithmetic: bit-exact.
 * The crop warp computes OpenCV's double-precision coordinates in float-float, lists the pixels
 * whose coordinates land within a hair of a rounding tie, and a small second pass recomputes those
 * in emulated double when the device has 64-bit integers: bit-exact as well. Without 64-bit
 * integers a tie may round the other way: a sample 1/32 pixel off, a level or two of difference.
 * Outputs are fp32 or fp16 (the nets' storage precision). The image buffer holds the packed BGR
 * bytes rounded up to whole 32-bit words (image_bgr_buffer_bytes); shaders read words and unpack,
 * so devices without 8-bit storage run the same code.
 * A frame: the kernels may read a w x h image of which the buffer holds only the pixels at least
 * `margin` from every edge, (w - 2 margin) x (h - 2 margin), followed by one word with the colour of
 * the rest (image_framed_buffer_bytes): the engine's margin around every image then costs neither a
 * padded copy on the host nor its upload. */
#ifndef PPOCR_OCR_GPU_IMAGE_OPS_H
#define PPOCR_OCR_GPU_IMAGE_OPS_H

#include <stddef.h>
#include <stdint.h>

#include "gpu/cmd.h"
#include "gpu/pool.h"
#include "nn/gpu/gpu_op.h"
#include "ocr/crop.h"

struct gpu_context;
struct image_ops;
struct image_det_job;
struct image_crop_batch;

/* Bytes of the buffer that holds a w x h BGR image (w h 3 rounded up to a multiple of 4). */
size_t image_bgr_buffer_bytes(int width, int height);

/* Bytes of the buffer that holds a w x h image framed by `margin` pixels of one colour: its inner
 * pixels as image_bgr_buffer_bytes, then, with a margin, the colour's B, G, R in the low three
 * bytes of the word at image_bgr_buffer_bytes(w - 2 margin, h - 2 margin). */
size_t image_framed_buffer_bytes(int width, int height, int margin);

/* Pipelines writing the det input in `det_dtype` and crops in `crop_dtype` (NN_F32 / NN_F16: the
 * storage precision of the nets that read them), and the cubic weight table. */
int image_ops_create(struct gpu_context *ctx, enum nn_dtype det_dtype, enum nn_dtype crop_dtype, struct image_ops **out,
                     char *err, size_t err_len);
void image_ops_destroy(struct image_ops *ops);

/* ---- detection input ------------------------------------------------------------------------ */

/* The resize of a src_w x src_h image to dst_w x dst_h: OpenCV's per-column and per-row
 * coefficients, computed on the host in double as cv::resize does, uploaded once. */
int image_det_job_create(struct image_ops *ops, int src_w, int src_h, int dst_w, int dst_h, struct image_det_job **out,
                         char *err, size_t err_len);
void image_det_job_destroy(struct image_det_job *job);

/* Records one dispatch: bgr (the job's source size, framed by `margin`) -> dst [1][3][dst_h][dst_w]
 * (dense; its elem_offset honoured). ocr_det_mean and ocr_det_std (ocr/preprocess.h) apply. */
int image_det_record(struct image_ops *ops, const struct image_det_job *job, struct gpu_cmd *cmd,
                     const struct gpu_buffer *bgr, int margin, const struct nn_gpu_tensor *dst, char *err,
                     size_t err_len);

/* ---- text-box crops -------------------------------------------------------------------------- */

int image_crop_batch_create(struct image_ops *ops, struct image_crop_batch **out, char *err, size_t err_len);
void image_crop_batch_destroy(struct image_crop_batch *batch);

/* Host side, per image: packs the crops (and their resize coefficients to target_h x target_w,
 * width ceil(target_h w/h) capped at target_w as PaddleOCR's resize_norm_img) into the batch's
 * parameter buffer and sizes its scratch. No recording that uses the batch may be in flight; the
 * buffers may be reallocated, so record again after every set. */
int image_crop_batch_set(struct image_ops *ops, struct image_crop_batch *batch, const struct image_crop *crops, int n,
                         int target_h, int target_w, char *err, size_t err_len);

/* Records the dispatches (warp + turn into scratch, the tie fix-up where the device has 64-bit
 * integers (after zeroing its list with a transfer), resize + normalise into dst) for
 * the crops of the last set: bgr is the src_w x src_h image framed by `margin`, dst
 * [N][3][target_h][target_w] with every crop's slot < N. Slots without a crop are left as they were. */
int image_crop_record(struct image_ops *ops, struct image_crop_batch *batch, struct gpu_cmd *cmd,
                      const struct gpu_buffer *bgr, int src_w, int src_h, int margin, const struct nn_gpu_tensor *dst,
                      char *err, size_t err_len);

/* The framed image a crop batch is cut from: bgr holds a src_w x src_h image framed by `margin`. */
struct image_crop_source {
    const struct gpu_buffer *bgr;
    int src_w, src_h, margin;
};

/* image_crop_record for n_batches batches (each set, each with its own destination and source)
 * side by side: each pass for every batch, then one barrier, so that the batches' passes do not
 * wait on each other. Destinations may share a tensor (batches of lines of several images filling
 * one input) but no two crops may write the same slot of it. */
int image_crop_record_many(struct image_ops *ops, struct image_crop_batch *const *batches,
                           const struct nn_gpu_tensor *const *dsts, const struct image_crop_source *sources,
                           int n_batches, struct gpu_cmd *cmd, char *err, size_t err_len);

#endif
