/* The OCR pipeline's own work around the nets on the CPU backend, the twin of ocr/gpu/ocr_gpu.h
 * behind ocr/net_io.h: the image kept in host memory framed by its margin, detection's input,
 * DB's bitmap and the text-line crops, made by the pipeline's CPU reference (ocr/preprocess.h,
 * ocr/contour.h), which the GPU kernels reproduce bit for bit. The record functions do their work
 * when the session calls them (nn/cpu/session_cpu.h), straight into the plans' host memory.
 *
 * Threads: one ocr_cpu belongs to one engine; ocr_cpu_set_crops may run for different batches on
 * several threads at once. */
#ifndef PPOCR_OCR_CPU_OCR_CPU_H
#define PPOCR_OCR_CPU_OCR_CPU_H

#include <stddef.h>
#include <stdint.h>

#include "nn/session.h"
#include "ocr/crop.h"

struct ocr_cpu;
struct ppocr_image;

int ocr_cpu_create(float db_thresh, struct ocr_cpu **out, char *err, size_t err_len);
void ocr_cpu_destroy(struct ocr_cpu *c);

/* As ocr_gpu_select_image: later uploads and detection use image slot `slot`. */
int ocr_cpu_select_image(struct ocr_cpu *c, int slot, char *err, size_t err_len);
/* Copies src into the current slot, framed by `margin` pixels of its border colour (ocr/pad.h). */
int ocr_cpu_upload(struct ocr_cpu *c, const struct ppocr_image *src, int margin, char *err, size_t err_len);
int ocr_cpu_margin(const struct ocr_cpu *c);

/* As ocr_gpu_det_prepare: det's input at det_w x det_h of the current slot's framed image
 * (img_w x img_h), the slot's bitmap of a map_w x map_h map; key gets key_len values describing
 * them. */
int ocr_cpu_det_prepare(struct ocr_cpu *c, int img_w, int img_h, int det_w, int det_h, int map_w, int map_h, int *key,
                        int key_len, char *err, size_t err_len);
/* As ocr_gpu_record_det_input and ocr_gpu_record_db_bitmap: plan k is that of slot slots[k]. */
int ocr_cpu_record_det_input(struct ocr_cpu *c, const int *slots, int n_slots, struct nn_plan *const *plans,
                             int n_plans, char *err, size_t err_len);
int ocr_cpu_record_db_bitmap(struct ocr_cpu *c, const int *slots, int n_slots, struct nn_plan *const *plans,
                             int n_plans, char *err, size_t err_len);
int8_t *ocr_cpu_db_work(struct ocr_cpu *c, int slot);

int ocr_cpu_set_crops(struct ocr_cpu *c, int batch, const struct image_crop *crops, int n, int target_h, int target_w,
                      char *err, size_t err_len);
int ocr_cpu_record_crops(struct ocr_cpu *c, const struct ocr_crop_runs *runs, struct nn_plan *const *plans, int n_plans,
                         char *err, size_t err_len);

#endif
