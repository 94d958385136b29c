/* Device listing and the device self-check, for the command's --list-devices and --self-check. */
#include <stdio.h>

#include "nn/device.h"
#include "ocr/engine_internal.h"
#include "ppocr.h"

int ppocr_list_devices(FILE *out, char *err, size_t err_len)
{
    return nn_list_devices(out, err, err_len);
}

enum ppocr_status ppocr_self_check(const struct ppocr_options *opt, FILE *out, char *err, size_t err_len)
{
    const struct nn_device_options dev = ocr_device_options(opt);
    return nn_self_check(&dev, out, err, err_len) ? PPOCR_ERR_NO_DEVICE : PPOCR_OK;
}
