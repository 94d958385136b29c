/* Device listing and the device self-check, for the command's --list-devices and --self-check. */
#include <stdio.h>

#include "nn/device.h"
#include "ppocr.h"

int ppocr_list_devices(FILE *out, char *err, size_t err_len)
{
    return nn_list_devices(out, err, err_len);
}

enum ppocr_status ppocr_self_check(const struct ppocr_options *opt, FILE *out, char *err, size_t err_len)
{
    const struct nn_device_options dev = {.index = opt->device_index, .force_fp32 = opt->force_fp32};
    return nn_self_check(&dev, out, err, err_len) ? PPOCR_ERR_NO_DEVICE : PPOCR_OK;
}
