/* The three real PP-OCR models convert, and the op lists are what the graphs hold once fused.
 * The ONNX files come from tools/fetch-models.sh (test_models_dir()); missing files fail. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "convert/convert.h"
#include "model/model.h"
#include "support/test_env.h"

static uint8_t *read_model_file(const char *name, size_t *len, char *path, size_t path_len)
{
    snprintf(path, path_len, "%s/%s", test_models_dir(), name);
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("%s is missing: run tools/fetch-models.sh (or set PPOCR_MODELS)", path);
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *p = malloc(*len);
    assert_non_null(p);
    assert_int_equal(fread(p, 1, *len, f), *len);
    fclose(f);
    return p;
}

static void convert_and_load(const char *name, int kind, const char *dict, struct pvk_model *m)
{
    char path[4096], err[512];
    size_t len, out_len;
    uint8_t *onnx = read_model_file(name, &len, path, sizeof path), *out = NULL;
    struct pvkc_options opt = {kind, dict};
    int rc = pvkc_convert_memory(onnx, len, path, &opt, &out, &out_len, err, sizeof err);
    free(onnx);
    if (rc)
        fail_msg("%s", err);
    rc = pvk_model_load_memory(out, out_len, m, err, sizeof err);
    free(out);
    if (rc)
        fail_msg("%s", err);
}

/* The "op counts:" line of the dump. */
static void expect_counts(const struct pvk_model *m, const char *want)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    assert_non_null(f);
    pvkc_dump(m, f);
    fclose(f);
    const char *line = strstr(buf, "op counts:");
    assert_non_null(line);
    char got[512];
    snprintf(got, sizeof got, "%s", line);
    got[strcspn(got, "\n")] = 0;
    assert_string_equal(got, want);
    free(buf);
}

static void expect_shape(const struct pvk_tensor *t, int ndim, const int64_t *dims)
{
    assert_int_equal(t->ndim, ndim);
    for (int d = 0; d < ndim; d++)
        assert_int_equal(t->shape[d], dims[d]);
}

/* det: 62 Conv + 2 ConvTranspose in ONNX; the 10 SE blocks take 2 convs each (62 - 20 = 42);
 * every BN, HardSwish and conv-adjacent affine folds; 14 affines sit before padded convs. */
static void test_det(void **state)
{
    (void)state;
    struct pvk_model m;
    convert_and_load("ch_PP-OCRv4_det_infer.onnx", 0, NULL, &m);
    assert_int_equal(m.net_kind, PVK_NET_DET);
    expect_counts(&m, "op counts: CONV2D=42 CONV_TRANSPOSE2D=2 RESIZE=6 CONCAT=1 BINARY=3 AFFINE=14 SE=10");
    const int64_t in[] = {-1, 3, -1, -1}, out[] = {-1, 1, -1, -1};
    expect_shape(&m.tensors[m.input], 4, in);
    expect_shape(&m.tensors[m.output], 4, out);
    const struct pvk_op *last = &m.ops[m.n_ops - 1];
    assert_int_equal(last->type, PVK_OP_CONV_TRANSPOSE2D);
    assert_int_equal(last->act, PVK_ACT_SIGMOID);
    pvk_model_free(&m);
}

/* cls: 53 Conv - 2 x 9 SE = 35; MaxPool + GlobalAveragePool; the flatten is a RESHAPE [0, 200]. */
static void test_cls(void **state)
{
    (void)state;
    struct pvk_model m;
    convert_and_load("ch_ppocr_mobile_v2.0_cls_infer.onnx", 0, NULL, &m);
    assert_int_equal(m.net_kind, PVK_NET_CLS);
    expect_counts(&m, "op counts: CONV2D=35 POOL2D=2 SE=9 MATMUL=1 SOFTMAX=1 RESHAPE=1");
    const int64_t out[] = {-1, 2};
    expect_shape(&m.tensors[m.output], 2, out);
    for (uint32_t i = 0; i < m.n_ops; i++)
        if (m.ops[i].type == PVK_OP_RESHAPE) {
            assert_int_equal(m.ops[i].attr.reshape.ndim, 2);
            assert_int_equal(m.ops[i].attr.reshape.shape[0], 0);
            assert_int_equal(m.ops[i].attr.reshape.shape[1], 200);
        }
    pvk_model_free(&m);
}

/* rec: 38 Conv - 2 x 2 SE = 34; 13 MatMul - 2 x 2 inside attention = 9; 5 LayerNorms; the
 * dictionary (6623 lines) gives 6625 classes. */
static void test_rec(void **state)
{
    (void)state;
    struct pvk_model m;
    char dict[4096];
    snprintf(dict, sizeof dict, "%s/ppocr_keys_v1.txt", test_models_dir());
    convert_and_load("ch_PP-OCRv4_rec_infer.onnx", PVK_NET_REC, dict, &m);
    expect_counts(&m, "op counts: CONV2D=34 POOL2D=1 CONCAT=1 BINARY=4 AFFINE=16 SE=2 MATMUL=9 LAYERNORM=5 SOFTMAX=1 "
                      "ATTENTION=2 TRANSPOSE=3 RESHAPE=3");
    const int64_t in[] = {-1, 3, 48, -1}, out[] = {-1, -1, 6625};
    expect_shape(&m.tensors[m.input], 4, in);
    expect_shape(&m.tensors[m.output], 3, out);
    assert_int_equal(m.n_dict, 6624);
    assert_string_equal(m.dict[m.n_dict - 1], " ");
    FILE *f = fopen(dict, "rb");
    assert_non_null(f);
    char first[64];
    assert_non_null(fgets(first, sizeof first, f));
    fclose(f);
    first[strcspn(first, "\r\n")] = 0;
    assert_string_equal(m.dict[0], first);
    for (uint32_t i = 0; i < m.n_ops; i++)
        if (m.ops[i].type == PVK_OP_ATTENTION) {
            assert_int_equal(m.ops[i].attr.attention.heads, 8);
            assert_true(m.ops[i].attr.attention.scale > 0.2581f &&
                        m.ops[i].attr.attention.scale < 0.2583f); /* 15^-0.5 */
        }
    pvk_model_free(&m);
}

/* A dictionary of the wrong length is refused with both counts. */
static void test_rec_wrong_dictionary(void **state)
{
    (void)state;
    char path[4096], err[512], dict[] = "/tmp/ppocr-short-dict-XXXXXX";
    size_t len, out_len;
    int fd = mkstemp(dict);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "a\nb\n", 4), 4);
    close(fd);
    uint8_t *onnx = read_model_file("ch_PP-OCRv4_rec_infer.onnx", &len, path, sizeof path), *out = NULL;
    struct pvkc_options opt = {PVK_NET_REC, dict};
    int rc = pvkc_convert_memory(onnx, len, path, &opt, &out, &out_len, err, sizeof err);
    free(onnx);
    remove(dict);
    assert_int_equal(rc, -1);
    assert_non_null(strstr(err, "4 classes"));
    assert_non_null(strstr(err, "6625"));
}

int main(void)
{
    test_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_det),
        cmocka_unit_test(test_cls),
        cmocka_unit_test(test_rec),
        cmocka_unit_test(test_rec_wrong_dictionary),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
