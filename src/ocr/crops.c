/* The text-box crops of a batch: each line's crop (its warp, turns and size) packed for the GPU's
 * crop kernels. */
#include <stdlib.h>

#include "ocr/engine_internal.h"
#include "ocr/net_io.h"
#include "ocr/workers.h"

int ocr_set_crops(struct ppocr_engine *e, int batch, struct line *const *lines, int n, int first_slot, int target_w,
                  int use_flip, char *err, size_t err_len)
{
    struct image_crop *crops = malloc((size_t)n * sizeof(*crops) + 1);
    if (!crops)
        return ocr_fail(err, err_len, "%s", "out of memory");
    for (int i = 0; i < n; i++) {
        crops[i] = lines[i]->crop;
        crops[i].slot = first_slot + i;
        if (!use_flip)
            crops[i].flip = 0;
    }
    int rc = ocr_net_io_set_crops(e->io, batch, crops, n, REC_HEIGHT, target_w, err, err_len);
    free(crops);
    return rc;
}

int ocr_crop_images(struct line *const *lines, int n)
{
    int images = 0;
    for (int i = 0; i < n; i++)
        images += i == 0 || lines[i]->image != lines[i - 1]->image;
    return images;
}

int ocr_crop_sets_add(struct crop_set *sets, struct ocr_crop_runs *runs, int plan, struct line *const *lines, int n,
                      int target_w, int use_flip)
{
    for (int start = 0, end; start < n; start = end) {
        for (end = start + 1; end < n && lines[end]->image == lines[start]->image;)
            end++;
        if (runs->n >= OCR_CROP_BATCHES)
            return -1;
        const int k = runs->n++;
        sets[k] = (struct crop_set){.batch = k,
                                    .lines = lines + start,
                                    .n = end - start,
                                    .first_slot = start,
                                    .target_w = target_w,
                                    .use_flip = use_flip};
        runs->batch[k] = k;
        runs->plan[k] = plan;
        runs->image[k] = lines[start]->image;
    }
    return 0;
}

struct crop_set_job {
    struct ppocr_engine *e;
    struct crop_set *sets;
};

static void crop_set_task(void *arg, int i)
{
    struct crop_set_job *j = arg;
    struct crop_set *c = &j->sets[i];
    c->rc =
        ocr_set_crops(j->e, c->batch, c->lines, c->n, c->first_slot, c->target_w, c->use_flip, c->err, sizeof(c->err));
}

/* On the helpers too: a page's batches are packed before recognition's first run, the GPU
 * waiting. */
int ocr_set_crops_all(struct ppocr_engine *e, struct crop_set *sets, int n, char *err, size_t err_len)
{
    struct crop_set_job job = {e, sets};
    ocr_workers_run(e->helpers, n, crop_set_task, &job);
    for (int i = 0; i < n; i++)
        if (sets[i].rc)
            return ocr_fail(err, err_len, "%s", sets[i].err);
    return 0;
}
