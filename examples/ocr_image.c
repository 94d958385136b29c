/* The library in brief: OCR of one image file, each line's score and text printed.
 *   cc ocr_image.c $(pkg-config --cflags --libs ppocr-vk) -o ocr_image && ./ocr_image page.png */
#include <ppocr.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s IMAGE\n", argv[0]);
        return 2;
    }
    char err[512];
    struct ppocr_image image;
    enum ppocr_status status = ppocr_image_load_file(argv[1], PPOCR_ALPHA_IGNORE, &image, err, sizeof(err));
    if (status != PPOCR_OK) {
        fprintf(stderr, "ocr_image: %s\n", err); /* err names the file and the reason */
        return 1;
    }
    struct ppocr_options options;
    ppocr_options_default(&options); /* models_dir NULL: $PPOCR_MODELS, else the installed models */
    struct ppocr_engine *engine;
    status = ppocr_engine_create(&options, &engine, err, sizeof(err));
    if (status == PPOCR_OK) {
        struct ppocr_result result;
        status = ppocr_engine_run(engine, &image, &result, err, sizeof(err));
        if (status == PPOCR_OK) {
            for (int i = 0; i < result.n_lines; i++)
                printf("%.4f\t%s\n", result.lines[i].score, result.lines[i].text);
            ppocr_result_free(&result);
        }
        ppocr_engine_destroy(engine);
    }
    ppocr_image_free(&image);
    if (status != PPOCR_OK) {
        fprintf(stderr, "ocr_image: %s (%s)\n", err, ppocr_status_name(status));
        return 1;
    }
    return 0;
}
