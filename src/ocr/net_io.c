/* ocr/net_io.h: each call forwarded to the twin of the device's backend. */
#include "ocr/net_io.h"

#include <stdlib.h>

#include "nn/device.h"
#include "ocr/cpu/ocr_cpu.h"
#include "ocr/gpu/ocr_gpu.h"

_Static_assert(OCR_NET_IO_DET_KEY == OCR_GPU_DET_KEY, "the replay key of the Vulkan side");

/* One of the two is set. */
struct ocr_net_io {
    struct ocr_gpu *gpu;
    struct ocr_cpu *cpu;
};

int ocr_net_io_create(struct nn_device *dev, float db_thresh, struct ocr_net_io **out, char *err, size_t err_len)
{
    struct ocr_net_io *io = calloc(1, sizeof(*io));
    *out = NULL;
    if (!io) {
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    const int rc = nn_device_backend(dev) == NN_BACKEND_CPU ? ocr_cpu_create(db_thresh, &io->cpu, err, err_len)
                                                            : ocr_gpu_create(dev, db_thresh, &io->gpu, err, err_len);
    if (rc) {
        free(io);
        return -1;
    }
    *out = io;
    return 0;
}

void ocr_net_io_destroy(struct ocr_net_io *io)
{
    if (!io)
        return;
    ocr_gpu_destroy(io->gpu);
    ocr_cpu_destroy(io->cpu);
    free(io);
}

int ocr_net_io_select_image(struct ocr_net_io *io, int slot, char *err, size_t err_len)
{
    return io->cpu ? ocr_cpu_select_image(io->cpu, slot, err, err_len)
                   : ocr_gpu_select_image(io->gpu, slot, err, err_len);
}

int ocr_net_io_upload(struct ocr_net_io *io, const struct ppocr_image *src, int margin, struct ocr_workers *helpers,
                      char *err, size_t err_len)
{
    return io->cpu ? ocr_cpu_upload(io->cpu, src, margin, err, err_len)
                   : ocr_gpu_upload(io->gpu, src, margin, helpers, err, err_len);
}

int ocr_net_io_margin(const struct ocr_net_io *io)
{
    return io->cpu ? ocr_cpu_margin(io->cpu) : ocr_gpu_margin(io->gpu);
}

int ocr_net_io_det_prepare(struct ocr_net_io *io, int img_w, int img_h, int det_w, int det_h, int map_w, int map_h,
                           int key[OCR_NET_IO_DET_KEY], char *err, size_t err_len)
{
    return io->cpu ? ocr_cpu_det_prepare(io->cpu, img_w, img_h, det_w, det_h, map_w, map_h, key, OCR_NET_IO_DET_KEY,
                                         err, err_len)
                   : ocr_gpu_det_prepare(io->gpu, img_w, img_h, det_w, det_h, map_w, map_h, key, err, err_len);
}

int ocr_net_io_record_det_input(void *ctx, struct nn_recorder *rec, struct nn_plan *const *plans, int n_plans,
                                char *err, size_t err_len)
{
    const struct ocr_net_io_dets *d = ctx;
    return d->io->cpu ? ocr_cpu_record_det_input(d->io->cpu, d->slot, d->n, plans, n_plans, err, err_len)
                      : ocr_gpu_record_det_input(d->io->gpu, d->slot, d->n, rec, plans, n_plans, err, err_len);
}

int ocr_net_io_record_db_bitmap(void *ctx, struct nn_recorder *rec, struct nn_plan *const *plans, int n_plans,
                                char *err, size_t err_len)
{
    const struct ocr_net_io_dets *d = ctx;
    return d->io->cpu ? ocr_cpu_record_db_bitmap(d->io->cpu, d->slot, d->n, plans, n_plans, err, err_len)
                      : ocr_gpu_record_db_bitmap(d->io->gpu, d->slot, d->n, rec, plans, n_plans, err, err_len);
}

int8_t *ocr_net_io_db_work(struct ocr_net_io *io, int slot)
{
    return io->cpu ? ocr_cpu_db_work(io->cpu, slot) : ocr_gpu_db_work(io->gpu, slot);
}

int ocr_net_io_set_crops(struct ocr_net_io *io, int batch, const struct image_crop *crops, int n, int target_h,
                         int target_w, char *err, size_t err_len)
{
    return io->cpu ? ocr_cpu_set_crops(io->cpu, batch, crops, n, target_h, target_w, err, err_len)
                   : ocr_gpu_set_crops(io->gpu, batch, crops, n, target_h, target_w, err, err_len);
}

int ocr_net_io_record_crops(void *ctx, struct nn_recorder *rec, struct nn_plan *const *plans, int n_plans, char *err,
                            size_t err_len)
{
    const struct ocr_net_io_crops *c = ctx;
    return c->io->cpu ? ocr_cpu_record_crops(c->io->cpu, &c->runs, plans, n_plans, err, err_len)
                      : ocr_gpu_record_crops(c->io->gpu, &c->runs, rec, plans, n_plans, err, err_len);
}
