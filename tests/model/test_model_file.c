/* The .pvk file: write, load, read back identical tensors and ops; truncated and corrupted
 * files give a clean one-line error and never a crash (run this under ASan too); a loaded model
 * outlives its file being rewritten; what is not a regular file is refused without blocking. */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "convert/convert.h"
#include "convert/onnx_build.h"
#include "model/format.h"
#include "model/model.h"
#include "support/test_env.h"

enum { CH = 6, CLASSES = 4 };

static char dir[64];
static float conv_w[CH * 3 * 9], fc_w[CH * CLASSES], fc_b[CLASSES];

static void write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

static uint8_t *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *p = malloc(*len);
    assert_int_equal(fread(p, 1, *len, f), *len);
    fclose(f);
    return p;
}

/* A tiny recognizer: x [N, 3, 1, W] -> conv -> relu -> squeeze -> transpose -> fc -> softmax,
 * with a 2-line dictionary (blank + 2 + space = 4 classes). */
static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/ppocr-model-test-XXXXXX");
    assert_non_null(mkdtemp(dir));
    for (int k = 0; k < CH * 3 * 9; k++)
        conv_w[k] = test_rand_uniform(-1, 1);
    for (int k = 0; k < CH * CLASSES; k++)
        fc_w[k] = test_rand_uniform(-1, 1);
    for (int k = 0; k < CLASSES; k++)
        fc_b[k] = test_rand_uniform(-1, 1);
    struct onnx_builder b;
    int64_t xd[] = {-1, 3, 1, -1}, wd[] = {CH, 3, 3, 3}, fd[] = {CH, CLASSES}, bd[] = {CLASSES},
            yd[] = {-1, -1, CLASSES};
    int64_t pads[] = {1, 1, 1, 1}, sq[] = {2}, perm[] = {0, 2, 1};
    ob_init(&b, 11);
    ob_input(&b, "x", 4, xd);
    ob_init_f32(&b, "conv_w", 4, wd, conv_w);
    ob_init_f32(&b, "fc_w", 2, fd, fc_w);
    ob_init_f32(&b, "fc_b", 1, bd, fc_b);
    ob_node(&b, "Conv", "conv", "x,conv_w", "c");
    ob_attr_ints(&b, "pads", 4, pads);
    ob_node(&b, "Relu", "relu", "c", "r");
    ob_node(&b, "Squeeze", "squeeze", "r", "s");
    ob_attr_ints(&b, "axes", 1, sq);
    ob_node(&b, "Transpose", "tr", "s", "t");
    ob_attr_ints(&b, "perm", 3, perm);
    ob_node(&b, "MatMul", "fc", "t,fc_w", "f");
    ob_node(&b, "Add", "fc_bias", "f,fc_b", "fb");
    ob_node(&b, "Softmax", "softmax", "fb", "y");
    ob_attr_int(&b, "axis", 2);
    ob_output(&b, "y", 3, yd);
    uint8_t *onnx;
    size_t len;
    assert_int_equal(ob_finish(&b, &onnx, &len), 0);
    char path[128];
    snprintf(path, sizeof path, "%s/tiny_rec.onnx", dir);
    write_file(path, onnx, len);
    free(onnx);
    snprintf(path, sizeof path, "%s/dict.txt", dir);
    write_file(path, "a\r\n\xc3\xa9\n", 6);
    snprintf(path, sizeof path, "%s/dict3.txt", dir);
    write_file(path, "a\nb\nc\n", 6);
    snprintf(path, sizeof path, "%s/dict_bad.txt", dir);
    write_file(path, "a\n\xff\n", 4);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    const char *names[] = {"tiny_rec.onnx", "dict.txt", "dict3.txt",    "dict_bad.txt", "a.pvk",
                           "b.pvk",         "c.pvk",    "cls_copy.pvk", "fifo.pvk",     "huge.pvk"};
    char path[128];
    for (int k = 0; k < (int)(sizeof names / sizeof names[0]); k++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[k]);
        remove(path);
    }
    rmdir(dir);
    return 0;
}

static void convert_to(const char *out_name)
{
    char in[128], out[128], dict[128], err[512];
    snprintf(in, sizeof in, "%s/tiny_rec.onnx", dir);
    snprintf(out, sizeof out, "%s/%s", dir, out_name);
    snprintf(dict, sizeof dict, "%s/dict.txt", dir);
    struct pvkc_options opt = {0, dict}; /* kind from the name */
    int rc = pvkc_convert_file(in, out, &opt, err, sizeof err);
    if (rc)
        print_error("%s\n", err);
    assert_int_equal(rc, 0);
}

static void test_round_trip(void **state)
{
    (void)state;
    convert_to("a.pvk");
    convert_to("b.pvk");
    char pa[128], pb[128], err[512];
    snprintf(pa, sizeof pa, "%s/a.pvk", dir);
    snprintf(pb, sizeof pb, "%s/b.pvk", dir);
    size_t la, lb;
    uint8_t *a = read_file(pa, &la), *b = read_file(pb, &lb);
    assert_int_equal(la, lb); /* conversion is deterministic */
    assert_memory_equal(a, b, la);
    free(b);

    struct pvk_model from_file, mem;
    assert_int_equal(pvk_model_load(pa, &from_file, err, sizeof err), 0);
    assert_int_equal(pvk_model_load_memory(a, la, &mem, err, sizeof err), 0);
    free(a);
    assert_int_equal(from_file.net_kind, PVK_NET_REC);
    assert_string_equal(from_file.source, "tiny_rec.onnx");
    assert_int_equal(from_file.n_ops, mem.n_ops);
    assert_int_equal(from_file.n_tensors, mem.n_tensors);
    assert_memory_equal(from_file.ops, mem.ops, from_file.n_ops * sizeof *from_file.ops);
    assert_memory_equal(from_file.tensors, mem.tensors, from_file.n_tensors * sizeof *from_file.tensors);
    for (uint32_t t = 0; t < from_file.n_tensors; t++) {
        if (from_file.tensors[t].kind != PVK_TENSOR_CONSTANT) {
            assert_null(pvk_tensor_data(&from_file, (int32_t)t));
            continue;
        }
        assert_int_equal((uintptr_t)pvk_tensor_data(&from_file, (int32_t)t) % 64, 0);
        assert_memory_equal(pvk_tensor_data(&from_file, (int32_t)t), pvk_tensor_data(&mem, (int32_t)t),
                            from_file.tensors[t].nbytes);
    }
    /* conv -> relu -> reshape -> transpose -> matmul(+bias) -> softmax */
    const enum pvk_op_type want[] = {PVK_OP_CONV2D, PVK_OP_RESHAPE, PVK_OP_TRANSPOSE, PVK_OP_MATMUL, PVK_OP_SOFTMAX};
    assert_int_equal(from_file.n_ops, 5);
    for (int k = 0; k < 5; k++)
        assert_int_equal(from_file.ops[k].type, want[k]);
    assert_int_equal(from_file.ops[0].act, PVK_ACT_RELU);
    assert_memory_equal(pvk_tensor_data(&from_file, from_file.ops[0].weights[0]), conv_w, sizeof conv_w);
    assert_memory_equal(pvk_tensor_data(&from_file, from_file.ops[3].weights[0]), fc_w, sizeof fc_w);
    assert_memory_equal(pvk_tensor_data(&from_file, from_file.ops[3].weights[1]), fc_b, sizeof fc_b);
    assert_int_equal(from_file.input, 0);
    assert_int_equal(from_file.tensors[from_file.input].shape[3], -1);
    assert_int_equal(from_file.n_dict, 3);
    assert_string_equal(from_file.dict[0], "a");
    assert_string_equal(from_file.dict[1], "\xc3\xa9");
    assert_string_equal(from_file.dict[2], " ");
    pvk_model_free(&from_file);
    pvk_model_free(&mem);
}

static void test_dictionary_mismatch(void **state)
{
    (void)state;
    char in[128], out[128], dict[128], err[512];
    snprintf(in, sizeof in, "%s/tiny_rec.onnx", dir);
    snprintf(out, sizeof out, "%s/b.pvk", dir);
    snprintf(dict, sizeof dict, "%s/dict3.txt", dir);
    struct pvkc_options opt = {PVK_NET_REC, dict};
    assert_int_equal(pvkc_convert_file(in, out, &opt, err, sizeof err), -1);
    assert_non_null(strstr(err, "dict3.txt"));
    assert_non_null(strstr(err, "outputs 4"));
    snprintf(dict, sizeof dict, "%s/dict_bad.txt", dir);
    assert_int_equal(pvkc_convert_file(in, out, &opt, err, sizeof err), -1);
    assert_non_null(strstr(err, "UTF-8"));
    struct pvkc_options no_dict = {PVK_NET_REC, NULL};
    assert_int_equal(pvkc_convert_file(in, out, &no_dict, err, sizeof err), -1);
    assert_non_null(strstr(err, "--dict"));
}

static void expect_clean_error(const uint8_t *data, size_t len)
{
    struct pvk_model m;
    char err[512];
    err[0] = 0;
    assert_int_equal(pvk_model_load_memory(data, len, &m, err, sizeof err), -1);
    assert_true(strlen(err) > 0);
    assert_null(strchr(err, '\n'));
    assert_null(m.impl_);
}

static void reseal(uint8_t *p, size_t len)
{
    uint64_t sum = pvk_file_checksum(p, len);
    memcpy(p + offsetof(struct pvk_file_header, checksum), &sum, 8);
}

/* Touches every byte the model claims, so that ASan sees a lie about bounds. */
static void touch_everything(const struct pvk_model *m)
{
    volatile uint8_t sink = 0;
    for (uint32_t t = 0; t < m->n_tensors; t++) {
        const uint8_t *p = pvk_tensor_data(m, (int32_t)t);
        for (uint64_t k = 0; p && k < m->tensors[t].nbytes; k += 61)
            sink ^= p[k];
        if (p && m->tensors[t].nbytes)
            sink ^= p[m->tensors[t].nbytes - 1];
    }
    for (uint32_t k = 0; k < m->n_dict; k++)
        sink ^= (uint8_t)strlen(m->dict[k]);
    (void)sink;
}

static void test_corrupt_files(void **state)
{
    (void)state;
    convert_to("a.pvk");
    char path[128];
    snprintf(path, sizeof path, "%s/a.pvk", dir);
    size_t len;
    uint8_t *good = read_file(path, &len), *p = malloc(len);
    /* truncations: every length below the header, then random ones */
    for (size_t n = 0; n < 200; n++)
        expect_clean_error(good, n);
    for (int k = 0; k < 200; k++)
        expect_clean_error(good, test_rand_u32() % len);
    /* bit flips anywhere: the checksum catches every one */
    for (int k = 0; k < 300; k++) {
        memcpy(p, good, len);
        p[test_rand_u32() % len] ^= (uint8_t)(1u << (test_rand_u32() % 8));
        expect_clean_error(p, len);
    }
    /* bit flips in the header, tensor and op tables with a valid checksum: the structural checks
     * must hold on their own; a file that still loads must not lie about its bounds */
    const struct pvk_file_header *h = (const struct pvk_file_header *)good;
    size_t tables_end = (size_t)h->dict_offset + (size_t)h->dict_bytes;
    int loaded = 0, refused = 0;
    for (int k = 0; k < 600; k++) {
        memcpy(p, good, len);
        int flips = 1 + (int)(test_rand_u32() % 3);
        for (int f = 0; f < flips; f++)
            p[test_rand_u32() % tables_end] ^= (uint8_t)(1u << (test_rand_u32() % 8));
        reseal(p, len);
        struct pvk_model m;
        char err[512];
        if (pvk_model_load_memory(p, len, &m, err, sizeof err) == 0) {
            touch_everything(&m);
            pvk_model_free(&m);
            loaded++;
        } else {
            assert_true(strlen(err) > 0);
            refused++;
        }
    }
    assert_true(refused > 0);
    (void)loaded;
    /* the dictionary must be valid UTF-8 */
    memcpy(p, good, len);
    uint8_t *d = p + h->dict_offset + 2; /* "a\0" then the two bytes of e-acute */
    d[0] = 0xc3;
    d[1] = 0x28;
    reseal(p, len);
    struct pvk_model m;
    char err[512];
    assert_int_equal(pvk_model_load_memory(p, len, &m, err, sizeof err), -1);
    assert_non_null(strstr(err, "UTF-8"));
    /* a missing file */
    assert_int_equal(pvk_model_load("/nonexistent/x.pvk", &m, err, sizeof err), -1);
    assert_non_null(strstr(err, "/nonexistent/x.pvk"));
    free(p);
    free(good);
}

/* `cp other.pvk rec.pvk` during a run truncates the file the engine loaded and writes it anew:
 * the model loaded from `path` must keep its own bytes. A mapping of the file would read zeros
 * past the new end in its last page and fault (SIGBUS) in the pages after it. */
static void expect_survives_rewrite(const char *path)
{
    char err[512];
    size_t len;
    uint8_t *original = read_file(path, &len);
    struct pvk_model loaded, expected;
    assert_int_equal(pvk_model_load(path, &loaded, err, sizeof err), 0);
    assert_int_equal(pvk_model_load_memory(original, len, &expected, err, sizeof err), 0);
    write_file(path, "another file", 12); /* as cp does: truncate, then write something else */
    assert_int_equal(loaded.n_tensors, expected.n_tensors);
    assert_memory_equal(loaded.tensors, expected.tensors, loaded.n_tensors * sizeof *loaded.tensors);
    assert_memory_equal(loaded.ops, expected.ops, loaded.n_ops * sizeof *loaded.ops);
    for (uint32_t t = 0; t < loaded.n_tensors; t++)
        if (loaded.tensors[t].kind == PVK_TENSOR_CONSTANT)
            assert_memory_equal(pvk_tensor_data(&loaded, (int32_t)t), pvk_tensor_data(&expected, (int32_t)t),
                                loaded.tensors[t].nbytes);
    assert_int_equal(loaded.n_dict, expected.n_dict);
    for (uint32_t k = 0; k < loaded.n_dict; k++)
        assert_string_equal(loaded.dict[k], expected.dict[k]);
    assert_string_equal(loaded.source, expected.source);
    pvk_model_free(&loaded);
    pvk_model_free(&expected);
    free(original);
}

static void test_file_rewritten_while_loaded(void **state)
{
    (void)state;
    /* the real classifier, many pages long: a copy of it */
    char cls[4096], path[128];
    snprintf(cls, sizeof cls, "%s/cls.pvk", test_models_dir());
    if (access(cls, R_OK) != 0)
        fail_msg("%s is missing: run tools/fetch-models.sh (or set PPOCR_MODELS)", cls);
    size_t len;
    uint8_t *bytes = read_file(cls, &len);
    snprintf(path, sizeof path, "%s/cls_copy.pvk", dir);
    write_file(path, bytes, len);
    free(bytes);
    expect_survives_rewrite(path);
    /* the tiny recogniser, one page: its dictionary too */
    convert_to("c.pvk");
    snprintf(path, sizeof path, "%s/c.pvk", dir);
    expect_survives_rewrite(path);
}

static void expect_load_error(const char *path, const char *reason)
{
    struct pvk_model m;
    char err[512] = "";
    assert_int_equal(pvk_model_load(path, &m, err, sizeof err), -1);
    if (!strstr(err, reason) || !strstr(err, path))
        fail_msg("%s: '%s' does not name the file and '%s'", path, err, reason);
    assert_null(strchr(err, '\n'));
    assert_null(m.impl_);
}

/* A FIFO, a device or an oversized file as a model: refused at once, never read or waited on. */
static void test_not_a_model_file(void **state)
{
    (void)state;
    char path[128];
    snprintf(path, sizeof path, "%s/fifo.pvk", dir);
    assert_int_equal(mkfifo(path, 0600), 0);
    /* first with a writer holding it open, so that a loader that waits for data still returns */
    int writer = open(path, O_RDWR | O_NONBLOCK);
    assert_true(writer >= 0);
    expect_load_error(path, "not a regular file");
    close(writer);
    /* then as a user leaves it: nobody writing, where a blocking open would wait for ever */
    expect_load_error(path, "not a regular file");
    expect_load_error("/dev/zero", "not a regular file");
    /* over the size limit: a sparse file, refused from its size before anything is read */
    snprintf(path, sizeof path, "%s/huge.pvk", dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, (off_t)PVK_MODEL_MAX_FILE_BYTES + 1), 0);
    close(fd);
    expect_load_error(path, "too large");
}

int main(void)
{
    test_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),       cmocka_unit_test(test_dictionary_mismatch),
        cmocka_unit_test(test_corrupt_files),    cmocka_unit_test(test_file_rewritten_while_loaded),
        cmocka_unit_test(test_not_a_model_file),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
