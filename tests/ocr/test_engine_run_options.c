/* ppocr_engine_run_with: one run's options, on the real models and the sample. The engine's own
 * values give exactly ppocr_engine_run's result; a changed value changes that run only (the next
 * plain run is the first result again); values out of range and use_cls on an engine without its
 * classifier are refused before anything runs, and the engine stays usable. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ppocr.h"
#include "support/test_env.h"

static struct ppocr_engine *engine;
static struct ppocr_image sample;

static int setup(void **state)
{
    (void)state;
    struct ppocr_options opt;
    ppocr_options_default(&opt);
    opt.models_dir = test_models_dir();
    char err[512], path[1024];
    snprintf(path, sizeof(path), "%s/data/sample.png", test_data_dir());
    if (ppocr_image_load_file(path, PPOCR_ALPHA_FLATTEN, &sample, err, sizeof(err)) != PPOCR_OK) {
        fprintf(stderr, "%s\n", err);
        return -1;
    }
    ppocr_engine_create(&opt, &engine, err, sizeof(err));
    if (!engine)
        fprintf(stderr, "engine: %s\n", err);
    return engine ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    ppocr_engine_destroy(engine);
    ppocr_image_free(&sample);
    return 0;
}

static void assert_same_result(const struct ppocr_result *a, const struct ppocr_result *b)
{
    assert_int_equal(a->n_lines, b->n_lines);
    for (int i = 0; i < a->n_lines; i++) {
        assert_string_equal(a->lines[i].text, b->lines[i].text);
        assert_memory_equal(a->lines[i].box, b->lines[i].box, sizeof(a->lines[i].box));
        assert_true(a->lines[i].score == b->lines[i].score);
    }
}

static void run_plain(struct ppocr_result *r)
{
    char err[512];
    if (ppocr_engine_run(engine, &sample, r, err, sizeof(err)))
        fail_msg("%s", err);
}

static void test_own_values_give_the_plain_result(void **state)
{
    (void)state;
    struct ppocr_run_options o;
    ppocr_engine_run_options(engine, &o);
    assert_int_equal(o.det_limit_side_len, 960);
    assert_true(fabs(o.drop_score - 0.5f) < 1e-6);
    struct ppocr_result plain, with;
    char err[512];
    run_plain(&plain);
    assert_int_equal(ppocr_engine_run_with(engine, &sample, &o, &with, err, sizeof(err)), PPOCR_OK);
    assert_true(plain.n_lines > 3);
    assert_same_result(&plain, &with);
    ppocr_result_free(&plain);
    ppocr_result_free(&with);
}

static void test_changed_values_hold_for_one_run(void **state)
{
    (void)state;
    struct ppocr_run_options o;
    ppocr_engine_run_options(engine, &o);
    struct ppocr_result plain, strict, after;
    char err[512];
    run_plain(&plain);
    float lowest = 1;
    for (int i = 0; i < plain.n_lines; i++)
        lowest = fminf(lowest, plain.lines[i].score);
    o.drop_score = lowest + 1e-4f; /* drops the weakest line at least */
    assert_int_equal(ppocr_engine_run_with(engine, &sample, &o, &strict, err, sizeof(err)), PPOCR_OK);
    assert_true(strict.n_lines < plain.n_lines);
    for (int i = 0; i < strict.n_lines; i++)
        assert_true(strict.lines[i].score >= o.drop_score);
    run_plain(&after);
    assert_same_result(&plain, &after);
    ppocr_result_free(&strict);
    ppocr_result_free(&after);

    /* detection at a small side finds fewer or other boxes: not the 960 result */
    ppocr_engine_run_options(engine, &o);
    o.det_limit_side_len = 96;
    struct ppocr_result small;
    assert_int_equal(ppocr_engine_run_with(engine, &sample, &o, &small, err, sizeof(err)), PPOCR_OK);
    int differs = small.n_lines != plain.n_lines;
    for (int i = 0; !differs && i < small.n_lines; i++)
        differs = memcmp(small.lines[i].box, plain.lines[i].box, sizeof(small.lines[i].box)) != 0 ||
                  strcmp(small.lines[i].text, plain.lines[i].text) != 0;
    assert_true(differs);
    ppocr_result_free(&small);
    ppocr_result_free(&plain);
}

static void test_bad_values_are_refused(void **state)
{
    (void)state;
    struct ppocr_run_options own, o;
    ppocr_engine_run_options(engine, &own);
    struct ppocr_result r;
    char err[512];
    o = own;
    o.det_limit_side_len = 31;
    assert_int_equal(ppocr_engine_run_with(engine, &sample, &o, &r, err, sizeof(err)), PPOCR_ERR_FAILED);
    assert_non_null(strstr(err, "det_limit_side_len"));
    assert_int_equal(r.n_lines, 0);
    o = own;
    o.drop_score = NAN;
    assert_int_equal(ppocr_engine_run_with(engine, &sample, &o, &r, err, sizeof(err)), PPOCR_ERR_FAILED);
    assert_non_null(strstr(err, "drop_score"));
    o = own;
    o.det_db_unclip_ratio = 101;
    assert_int_equal(ppocr_engine_run_with(engine, &sample, &o, &r, err, sizeof(err)), PPOCR_ERR_FAILED);
    assert_non_null(strstr(err, "det_db_unclip_ratio"));
    o = own;
    o.cls_thresh = -0.1f;
    assert_int_equal(ppocr_engine_run_with(engine, &sample, &o, &r, err, sizeof(err)), PPOCR_ERR_FAILED);
    assert_non_null(strstr(err, "cls_thresh"));
    o = own;
    o.det_db_box_thresh = 1.5;
    assert_int_equal(ppocr_engine_run_with(engine, &sample, &o, &r, err, sizeof(err)), PPOCR_ERR_FAILED);
    assert_non_null(strstr(err, "det_db_box_thresh"));
    /* still usable */
    assert_int_equal(ppocr_engine_run_with(engine, &sample, &own, &r, err, sizeof(err)), PPOCR_OK);
    assert_true(r.n_lines > 3);
    ppocr_result_free(&r);
}

static void test_cls_needs_the_classifier(void **state)
{
    (void)state;
    struct ppocr_options opt;
    ppocr_options_default(&opt);
    opt.models_dir = test_models_dir();
    opt.use_cls = 0;
    struct ppocr_engine *no_cls;
    char err[512];
    ppocr_engine_create(&opt, &no_cls, err, sizeof(err));
    if (!no_cls)
        fail_msg("engine: %s", err);
    struct ppocr_run_options o;
    ppocr_engine_run_options(no_cls, &o);
    assert_int_equal(o.use_cls, 0);
    o.use_cls = 1;
    struct ppocr_result r;
    assert_int_equal(ppocr_engine_run_with(no_cls, &sample, &o, &r, err, sizeof(err)), PPOCR_ERR_FAILED);
    assert_non_null(strstr(err, "use_cls"));
    ppocr_engine_destroy(no_cls);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_own_values_give_the_plain_result),
        cmocka_unit_test(test_changed_values_hold_for_one_run),
        cmocka_unit_test(test_bad_values_are_refused),
        cmocka_unit_test(test_cls_needs_the_classifier),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
