/* Driver for tools/ref/db-crosscheck.mjs: DB post-processing of one raw float32 map.
 * Usage: db_crosscheck MAP.f32 MAP_W MAP_H SRC_W SRC_H; prints one box per line,
 * "x0 y0 x1 y1 x2 y2 x3 y3 score" (boxes_from_bitmap order, before filtering). */
#include <stdio.h>
#include <stdlib.h>

#include "ocr/db_postprocess.h"

int main(int argc, char **argv)
{
    if (argc != 6) {
        fprintf(stderr, "usage: %s MAP.f32 MAP_W MAP_H SRC_W SRC_H\n", argv[0]);
        return 2;
    }
    int w = atoi(argv[2]), h = atoi(argv[3]), src_w = atoi(argv[4]), src_h = atoi(argv[5]);
    if (w <= 0 || h <= 0) {
        fprintf(stderr, "bad map size %dx%d\n", w, h);
        return 2;
    }
    size_t n = (size_t)w * (size_t)h;
    float *map = malloc(n * sizeof(*map));
    FILE *f = fopen(argv[1], "rb");
    if (!map || !f || fread(map, sizeof(*map), n, f) != n) {
        fprintf(stderr, "cannot read %zu floats from %s\n", n, argv[1]);
        return 2;
    }
    fclose(f);
    struct db_params params;
    db_params_default(&params);
    struct db_boxes boxes;
    char err[256];
    if (db_boxes_from_map(map, NULL, w, h, src_w, src_h, &params, &boxes, err, sizeof(err))) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    for (size_t i = 0; i < boxes.count; i++) {
        const struct db_box *b = &boxes.boxes[i];
        printf("%d %d %d %d %d %d %d %d %.17g\n", b->pts[0][0], b->pts[0][1], b->pts[1][0], b->pts[1][1], b->pts[2][0],
               b->pts[2][1], b->pts[3][0], b->pts[3][1], b->score);
    }
    db_boxes_free(&boxes);
    free(map);
    return 0;
}
