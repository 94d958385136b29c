/* Writes the model seed corpus of fuzz_model (tests/fuzz/corpus_model): one tiny net of each kind,
 * built with the converter's test ONNX builder and converted as ppocr-convert would, so that the
 * seeds are valid .pvk files of a few KB (the real nets are 0.5 to 10 MB).
 *   make_model_seeds OUT_DIR */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert/convert.h"
#include "convert/onnx_build.h"

static float weights[4096];

static int write_model(struct onnx_builder *b, const char *out_name, int ndim, const int64_t *dims,
                       const char *onnx_name, int kind, const char *dict, const char *dir)
{
    uint8_t *onnx, *file;
    size_t len, file_len;
    char err[512], path[1024];
    ob_output(b, out_name, ndim, dims);
    if (ob_finish(b, &onnx, &len))
        return -1;
    struct pvkc_options opt = {kind, dict};
    int rc = pvkc_convert_memory(onnx, len, onnx_name, &opt, &file, &file_len, err, sizeof err);
    free(onnx);
    if (rc) {
        fprintf(stderr, "make_model_seeds: %s\n", err);
        return -1;
    }
    snprintf(path, sizeof path, "%s/%s.pvk", dir, onnx_name);
    FILE *f = fopen(path, "wb");
    rc = f && fwrite(file, 1, file_len, f) == file_len ? 0 : -1;
    if (f && fclose(f))
        rc = -1;
    free(file);
    if (rc)
        fprintf(stderr, "make_model_seeds: cannot write %s\n", path);
    return rc;
}

/* det: x [1,3,H,W] -> Conv 3x3 (3->4) + Relu -> Conv 1x1 (4->1) -> Sigmoid. */
static int det_seed(const char *dir)
{
    struct onnx_builder b;
    int64_t xd[] = {1, 3, -1, -1}, w1d[] = {4, 3, 3, 3}, w2d[] = {1, 4, 1, 1}, yd[] = {1, 1, -1, -1},
            pads[] = {1, 1, 1, 1};
    ob_init(&b, 11);
    ob_input(&b, "x", 4, xd);
    ob_init_f32(&b, "w1", 4, w1d, weights);
    ob_init_f32(&b, "w2", 4, w2d, weights);
    ob_node(&b, "Conv", "conv1", "x,w1", "c1");
    ob_attr_ints(&b, "pads", 4, pads);
    ob_node(&b, "Relu", "relu", "c1", "r1");
    ob_node(&b, "Conv", "conv2", "r1,w2", "c2");
    ob_node(&b, "Sigmoid", "sig", "c2", "y");
    return write_model(&b, "y", 4, yd, "det_seed", PVK_NET_DET, NULL, dir);
}

/* cls: x [1,3,48,192] -> Conv 1x1 (3->2) -> GlobalAveragePool -> Flatten -> Softmax. */
static int cls_seed(const char *dir)
{
    struct onnx_builder b;
    int64_t xd[] = {1, 3, 48, 192}, wd[] = {2, 3, 1, 1}, yd[] = {1, 2};
    ob_init(&b, 11);
    ob_input(&b, "x", 4, xd);
    ob_init_f32(&b, "w", 4, wd, weights);
    ob_node(&b, "Conv", "conv", "x,w", "c");
    ob_node(&b, "GlobalAveragePool", "gap", "c", "p");
    ob_node(&b, "Flatten", "flat", "p", "f");
    ob_node(&b, "Softmax", "softmax", "f", "y");
    ob_attr_int(&b, "axis", 1);
    return write_model(&b, "y", 2, yd, "cls_seed", PVK_NET_CLS, NULL, dir);
}

/* rec: x [1,3,48,W] -> Conv 48x1 (3->4, height folded) -> Reshape [0,4,-1] -> Transpose to
 * [1,W,4] -> MatMul [4,5] -> Softmax: 5 classes = blank + 3 dictionary lines + space. */
static int rec_seed(const char *dir)
{
    char dict[1024];
    snprintf(dict, sizeof dict, "%s/.seed_dict.txt", dir);
    FILE *f = fopen(dict, "w");
    if (!f || fputs("a\nb\n\xc3\xa9\n", f) < 0 || fclose(f))
        return -1;
    struct onnx_builder b;
    int64_t xd[] = {1, 3, 48, -1}, wd[] = {4, 3, 48, 1}, sd[] = {3}, shape[] = {0, 4, -1}, md[] = {4, 5},
            yd[] = {1, -1, 5};
    int64_t perm[] = {0, 2, 1};
    ob_init(&b, 11);
    ob_input(&b, "x", 4, xd);
    ob_init_f32(&b, "w", 4, wd, weights);
    ob_init_i64(&b, "shape", 1, sd, shape);
    ob_init_f32(&b, "m", 2, md, weights);
    ob_node(&b, "Conv", "conv", "x,w", "c");
    ob_node(&b, "Reshape", "reshape", "c,shape", "r");
    ob_node(&b, "Transpose", "transpose", "r", "t");
    ob_attr_ints(&b, "perm", 3, perm);
    ob_node(&b, "MatMul", "matmul", "t,m", "l");
    ob_node(&b, "Softmax", "softmax", "l", "y");
    ob_attr_int(&b, "axis", 2);
    int rc = write_model(&b, "y", 3, yd, "rec_seed", PVK_NET_REC, dict, dir);
    remove(dict);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: make_model_seeds OUT_DIR\n");
        return 2;
    }
    for (int i = 0; i < (int)(sizeof weights / sizeof weights[0]); i++)
        weights[i] = (float)((i * 37 % 101) - 50) / 100.0f;
    return det_seed(argv[1]) || cls_seed(argv[1]) || rec_seed(argv[1]) ? 1 : 0;
}
