/* ppocr-convert: ONNX PP-OCR models -> ppocr-vk's .pvk model files. */
#include <stdio.h>
#include <string.h>

#include "convert/convert.h"

static int usage(void)
{
    fprintf(stderr, "usage: ppocr-convert [--kind det|cls|rec] [--dict FILE] [--dump] INPUT.onnx OUTPUT.pvk\n"
                    "       ppocr-convert --dump MODEL.pvk\n");
    return 2;
}

static int dump_file(const char *path)
{
    struct pvk_model m;
    char err[512];
    if (pvk_model_load(path, &m, err, sizeof err)) {
        fprintf(stderr, "ppocr-convert: %s\n", err);
        return 1;
    }
    pvkc_dump(&m, stdout);
    pvk_model_free(&m);
    return 0;
}

int main(int argc, char **argv)
{
    struct pvkc_options opt = {0};
    const char *files[2];
    int n_files = 0, dump = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--dump")) {
            dump = 1;
        } else if (!strcmp(argv[i], "--kind") && i + 1 < argc) {
            const char *k = argv[++i];
            opt.net_kind = !strcmp(k, "det")   ? PVK_NET_DET
                           : !strcmp(k, "cls") ? PVK_NET_CLS
                           : !strcmp(k, "rec") ? PVK_NET_REC
                                               : -1;
            if (opt.net_kind < 0) {
                fprintf(stderr, "ppocr-convert: unknown kind '%s' (det, cls or rec)\n", k);
                return 2;
            }
        } else if (!strcmp(argv[i], "--dict") && i + 1 < argc) {
            opt.dict_path = argv[++i];
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return usage();
        } else if (n_files < 2) {
            files[n_files++] = argv[i];
        } else {
            return usage();
        }
    }
    if (n_files == 1 && dump)
        return dump_file(files[0]);
    if (n_files != 2)
        return usage();
    char err[512];
    if (pvkc_convert_file(files[0], files[1], &opt, err, sizeof err)) {
        fprintf(stderr, "ppocr-convert: %s\n", err);
        return 1;
    }
    return dump ? dump_file(files[1]) : 0;
}
