#include "ocr/gpu/db_bitmap.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nn/gpu/op_helpers.h"

#define BITMAP_WG 256u

struct bitmap_push {
    uint32_t w, h, map_off, words;
    uint32_t thresh_bits; /* fp32 */
};

struct db_bitmap {
    enum nn_dtype map_dtype;
    const struct gpu_pipeline *pipeline;
};

size_t db_bitmap_bytes(int w, int h)
{
    return (((size_t)w + 2) * ((size_t)h + 2) + 3) & ~(size_t)3;
}

int db_bitmap_create(struct gpu_context *ctx, enum nn_dtype map_dtype, struct db_bitmap **out, char *err,
                     size_t err_len)
{
    *out = NULL;
    struct db_bitmap *b = calloc(1, sizeof *b);
    if (!b)
        return nnh_fail(err, err_len, "out of memory");
    b->map_dtype = map_dtype;
    if (nnh_pipeline(ctx, NNH_SHADERS(db_bitmap), false, map_dtype, BITMAP_WG, NULL, 0, 2, sizeof(struct bitmap_push),
                     &b->pipeline, err, err_len)) {
        free(b);
        return -1;
    }
    *out = b;
    return 0;
}

void db_bitmap_destroy(struct db_bitmap *bitmap)
{
    free(bitmap);
}

int db_bitmap_record(struct db_bitmap *bitmap, struct gpu_cmd *cmd, const struct nn_gpu_tensor *map, float thresh,
                     const struct gpu_buffer *dst, char *err, size_t err_len)
{
    const struct pvk_shape *s = &map->shape;
    if (nnh_check_tensor(map, bitmap->map_dtype, false, "det map", err, err_len))
        return -1;
    if (s->ndim != 4 || s->d[0] != 1 || s->d[1] != 1 || s->d[2] < 1 || s->d[3] < 1 || s->d[2] > 65535 ||
        s->d[3] > 65535)
        return nnh_fail(err, err_len, "det map must be [1, 1, h, w] with sides up to 65535");
    if ((uint64_t)s->d[2] * (uint64_t)s->d[3] + map->elem_offset > UINT32_MAX)
        return nnh_fail(err, err_len, "det map: too large for 32-bit indices");
    const int w = (int)s->d[3], h = (int)s->d[2];
    const size_t bytes = db_bitmap_bytes(w, h);
    if (dst->size < bytes)
        return nnh_fail(err, err_len, "db bitmap: %zu bytes of output for a %dx%d map, %zu needed", (size_t)dst->size,
                        w, h, bytes);
    struct bitmap_push pc = {(uint32_t)w, (uint32_t)h, map->elem_offset, (uint32_t)(bytes / 4), 0};
    memcpy(&pc.thresh_bits, &thresh, sizeof(thresh));
    struct gpu_binding b[2] = {gpu_bind(map->buf), gpu_bind(dst)};
    uint32_t groups[3];
    nnh_grid_1d(pc.words, BITMAP_WG, groups);
    return nnh_dispatch(cmd, bitmap->pipeline, b, &pc, groups, "db_bitmap", err, err_len);
}
