/* Device listing and the device self-check, for the command's --list-devices and --self-check. */
#include <stdio.h>

#include "nn/device.h"
#include "ocr/engine_internal.h"
#include "ppocr.h"

int ppocr_list_devices(FILE *out, char *err, size_t err_len)
{
    return nn_list_devices(out, err, err_len);
}

int ppocr_vulkan_device_classes(enum ppocr_device_class *out, int max, char *err, size_t err_len)
{
    enum nn_device_class classes[64];
    const int n = nn_device_classes(NN_BACKEND_VULKAN, classes, max < 64 ? max : 64, err, err_len);
    static const enum ppocr_device_class public_class[] = {[NN_DEVICE_CPU] = PPOCR_DEVICE_CPU,
                                                           [NN_DEVICE_DISCRETE_GPU] = PPOCR_DEVICE_DISCRETE_GPU,
                                                           [NN_DEVICE_OTHER_GPU] = PPOCR_DEVICE_OTHER_GPU};
    for (int i = 0; i < n && i < max && i < 64; i++)
        out[i] = public_class[classes[i]];
    return n;
}

enum ppocr_status ppocr_self_check(const struct ppocr_options *opt, FILE *out, char *err, size_t err_len)
{
    const struct nn_device_options dev = ocr_device_options(opt);
    return nn_self_check(&dev, out, err, err_len) ? PPOCR_ERR_NO_DEVICE : PPOCR_OK;
}
