/* DB's bitmap on the GPU: det's probability map thresholded straight into the work image that the
 * contour follower (src/ocr/contour.h) labels in place, so that the host neither reads the whole
 * fp32 map nor compares it pixel by pixel. The work image of a w x h map is (w + 2) x (h + 2)
 * bytes, row-major: 1 where prob > thresh (fp32), 0 elsewhere and on a one-pixel border. */
#ifndef PPOCR_OCR_GPU_DB_BITMAP_H
#define PPOCR_OCR_GPU_DB_BITMAP_H

#include <stddef.h>

#include "gpu/cmd.h"
#include "gpu/pool.h"
#include "nn/gpu/gpu_op.h"

struct gpu_context;
struct db_bitmap;

/* Bytes of the buffer that takes the work image of a w x h map: (w + 2) (h + 2) rounded up to
 * whole 32-bit words (the kernel writes words). */
size_t db_bitmap_bytes(int w, int h);

/* The kernel for maps stored in map_dtype (NN_F32 or NN_F16). */
int db_bitmap_create(struct gpu_context *ctx, enum nn_dtype map_dtype, struct db_bitmap **out, char *err,
                     size_t err_len);
void db_bitmap_destroy(struct db_bitmap *bitmap);

/* Records one dispatch: map, a dense [1][1][h][w] tensor (its elem_offset honoured), into dst
 * (at least db_bitmap_bytes(w, h), from its start). */
int db_bitmap_record(struct db_bitmap *bitmap, struct gpu_cmd *cmd, const struct nn_gpu_tensor *map, float thresh,
                     const struct gpu_buffer *dst, char *err, size_t err_len);

#endif
