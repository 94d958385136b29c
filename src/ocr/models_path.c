/* Where the converted models are: the --models folder, else $PPOCR_MODELS (either, when set, is
 * the only place looked at), else next to the executable (and ../share/ppocr-vk/models from it, for
 * an installed tree), the build's source tree, then the configured install folder. */
#include "ocr/models_path.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int has_models(const char *dir)
{
    char path[4096 + 16];
    snprintf(path, sizeof(path), "%s/det.pvk", dir);
    return access(path, R_OK) == 0;
}

int ocr_find_models_dir(const char *given, char *out, size_t out_len)
{
    /* a folder named by the user, on the command line or in the environment, is the one used:
     * a wrong one is an error, not a reason to take models from somewhere else */
    const char *env = getenv("PPOCR_MODELS");
    const char *named = given && *given ? given : env && *env ? env : NULL;
    if (named) {
        snprintf(out, out_len, "%s", named);
        return has_models(out) ? 0 : -1;
    }
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n > 0) {
        exe[n] = 0;
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = 0;
            static const char *const rel[] = {"models", "../models", "../share/ppocr-vk/models"};
            for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
                snprintf(out, out_len, "%s/%s", exe, rel[i]);
                if (has_models(out))
                    return 0;
            }
        }
    }
    static const char *const fixed[] = {PPOCR_BUILD_MODELS_DIR, PPOCR_INSTALL_MODELS_DIR};
    for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
        snprintf(out, out_len, "%s", fixed[i]);
        if (has_models(out))
            return 0;
    }
    snprintf(out, out_len, "%s", PPOCR_BUILD_MODELS_DIR);
    return -1;
}
