/* Device listing and the device self-check, for the command's --list-devices and --self-check. */
#include <stdio.h>

#include "nn/device.h"
#include "ocr/engine.h"

int ocr_list_devices(FILE *out, char *err, size_t err_len)
{
    return nn_list_devices(out, err, err_len);
}

int ocr_self_check(const struct ocr_options *opt, FILE *out, char *err, size_t err_len)
{
    const struct nn_device_options dev = {.index = opt->device_index, .force_fp32 = opt->force_fp32};
    return nn_self_check(&dev, out, err, err_len);
}
