/* The engine's own checks of a model set, before it touches the device: a recogniser whose
 * dictionary does not match its class count is refused as unusable models (PPOCR_ERR_MODELS), even
 * when the file itself is valid (the converter refuses to write one; this one is altered after
 * conversion, checksum rewritten). The nets are the tiny ones of the fuzz seed corpus
 * (tests/fuzz/make_model_seeds.c): det, cls, and a rec with 5 classes and 4 dictionary entries. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/format.h"
#include "model/model.h"
#include "ppocr.h"
#include "support/test_env.h"

static char dir[256];

static uint8_t *read_seed(const char *name, size_t *size)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/fuzz/corpus_model/%s", test_data_dir(), name);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static uint8_t buf[1 << 16];
    *size = fread(buf, 1, sizeof buf, f);
    fclose(f);
    assert_true(*size > sizeof(struct pvk_file_header) && *size < sizeof buf);
    return buf;
}

static void write_model(const char *name, const uint8_t *data, size_t size)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, size, f), size);
    assert_int_equal(fclose(f), 0);
}

/* det.pvk and cls.pvk from the seeds; rec.pvk is the seed, or with its first two dictionary
 * entries ("a", "b") merged into one ("axb", same bytes), so that 5 classes meet 3 entries. */
static void make_model_dir(int merge_dict_entries)
{
    size_t size;
    uint8_t *p = read_seed("det_seed.pvk", &size);
    write_model("det.pvk", p, size);
    p = read_seed("cls_seed.pvk", &size);
    write_model("cls.pvk", p, size);
    p = read_seed("rec_seed.pvk", &size);
    if (merge_dict_entries) {
        struct pvk_file_header h;
        memcpy(&h, p, sizeof h);
        assert_int_equal(h.n_dict, 4);
        assert_memory_equal(p + h.dict_offset, "a\0b\0", 4);
        p[h.dict_offset + 1] = 'x';
        h.n_dict = 3;
        memcpy(p, &h, sizeof h);
        h.checksum = pvk_file_checksum(p, size);
        memcpy(p, &h, sizeof h);
    }
    write_model("rec.pvk", p, size);
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/ppocr_test_engine_models_XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    const char *names[] = {"det.pvk", "cls.pvk", "rec.pvk"};
    char path[512];
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        unlink(path);
    }
    return rmdir(dir);
}

static struct ppocr_engine *create(enum ppocr_status *status, char *err, size_t err_len)
{
    struct ppocr_options opt;
    ppocr_options_default(&opt);
    opt.models_dir = dir;
    struct ppocr_engine *e;
    *status = ppocr_engine_create(&opt, &e, err, err_len);
    return e;
}

/* The altered rec.pvk is a valid file: the refusal below is the engine's dictionary check. */
static void test_altered_dictionary_is_refused(void **state)
{
    (void)state;
    make_model_dir(1);
    char path[512], err[512];
    snprintf(path, sizeof path, "%s/rec.pvk", dir);
    struct pvk_model m;
    assert_int_equal(pvk_model_load(path, &m, err, sizeof err), 0);
    assert_int_equal(m.n_dict, 3);
    assert_string_equal(m.dict[0], "axb");
    pvk_model_free(&m);

    enum ppocr_status status;
    struct ppocr_engine *e = create(&status, err, sizeof err);
    assert_null(e);
    assert_int_equal(status, PPOCR_ERR_MODELS);
    if (!strstr(err, "5 classes") || !strstr(err, "3 entries"))
        fail_msg("message does not give the counts: %s", err);
    assert_null(strchr(err, '\n'));
    printf("%s\n", err);
}

/* The same set with the dictionary as converted passes that check (whatever happens on the
 * device afterwards), so the refusal above is the dictionary's doing. */
static void test_matching_dictionary_passes(void **state)
{
    (void)state;
    make_model_dir(0);
    char err[512] = "";
    enum ppocr_status status;
    struct ppocr_engine *e = create(&status, err, sizeof err);
    if (!e && status == PPOCR_ERR_MODELS)
        fail_msg("models refused: %s", err);
    ppocr_engine_destroy(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_altered_dictionary_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_matching_dictionary_passes, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
