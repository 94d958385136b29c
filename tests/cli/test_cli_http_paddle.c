/* The HTTP server's PaddleOCR API without a server or an engine: JSON and form requests (the
 * file, each option, nulls, unknown fields, every refusal and its status) and the answers (read
 * back with the JSON reader: PaddleX's envelope, the pruned result's fields, dataInfo of an image
 * and of a PDF, errors with awkward messages, the log id). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/http_paddle.h"
#include "cli/json.h"

static struct http_paddle_limits limits(void)
{
    struct http_paddle_limits l = {
        .defaults = {.det_limit_side_len = 960,
                     .det_db_box_thresh = 0.6,
                     .det_db_unclip_ratio = 1.5,
                     .use_cls = 1,
                     .cls_thresh = 0.9f,
                     .drop_score = 0.5f},
        .det_db_thresh = 0.3f,
        .have_cls = 1,
    };
    return l;
}

static int parse(const char *json, struct http_paddle_request *req, char *err, size_t err_len)
{
    const struct http_paddle_limits l = limits();
    return http_paddle_parse_json(json, strlen(json), &l, req, err, err_len);
}

static void test_json_request(void **state)
{
    (void)state;
    struct http_paddle_request req;
    char err[512];
    /* "Zm9v" is "foo" */
    assert_int_equal(parse("{\"file\":\"Zm9v\",\"fileType\":1,\"textDetLimitSideLen\":640,\"textDetBoxThresh\":0.5,"
                           "\"textDetUnclipRatio\":2,\"textRecScoreThresh\":0.9,\"useTextlineOrientation\":false,"
                           "\"textDetThresh\":0.3,\"textDetLimitType\":\"max\",\"useDocUnwarping\":false,"
                           "\"visualize\":true,\"somethingElse\":[1,{}]}",
                           &req, err, sizeof(err)),
                     0);
    assert_int_equal(req.file_size, 3);
    assert_memory_equal(req.file, "foo", 3);
    assert_int_equal(req.file_type, HTTP_FILE_IMAGE);
    assert_int_equal(req.run.det_limit_side_len, 640);
    assert_true(req.run.det_db_box_thresh == 0.5);
    assert_true(req.run.det_db_unclip_ratio == 2.0);
    assert_true(req.run.drop_score == 0.9f);
    assert_int_equal(req.run.use_cls, 0);
    http_paddle_request_free(&req);

    /* nulls are the server's own values; fileType null is guessed; a data: URL's header is skipped */
    assert_int_equal(parse("{\"file\":\"data:image/png;base64,Zm9v\",\"fileType\":null,\"textDetLimitSideLen\":null,"
                           "\"useTextlineOrientation\":null,\"textDetThresh\":null}",
                           &req, err, sizeof(err)),
                     0);
    assert_memory_equal(req.file, "foo", 3);
    assert_int_equal(req.file_type, HTTP_FILE_GUESS);
    assert_int_equal(req.run.det_limit_side_len, 960);
    assert_int_equal(req.run.use_cls, 1);
    assert_true(req.run.drop_score == 0.5f);
    http_paddle_request_free(&req);

    assert_int_equal(parse("{\"file\":\"Zm9v\",\"fileType\":0}", &req, err, sizeof(err)), 0);
    assert_int_equal(req.file_type, HTTP_FILE_PDF);
    http_paddle_request_free(&req);
}

static void test_json_refusals(void **state)
{
    (void)state;
    const struct {
        const char *json;
        int status;
        const char *says;
    } cases[] = {
        {"{\"file\":", 400, "not JSON"},
        {"", 400, "not JSON"},
        {"{} []", 400, "not JSON"},
        {"[\"Zm9v\"]", 422, "JSON object"},
        {"{}", 422, "file: required"},
        {"{\"file\":null}", 422, "file: required"},
        {"{\"file\":12}", 422, "file: required"},
        {"{\"file\":\"\"}", 422, "file: empty"},
        {"{\"file\":\"Zm9v!\"}", 422, "not base64"},
        {"{\"file\":\"Z\"}", 422, "not base64"},
        {"{\"file\":\"http://example.com/a.png\"}", 422, "does not fetch URLs"},
        {"{\"file\":\"https://example.com/a.pdf\",\"fileType\":0}", 422, "does not fetch URLs"},
        {"{\"file\":\"Zm9v\",\"fileType\":2}", 422, "fileType"},
        {"{\"file\":\"Zm9v\",\"fileType\":\"1\"}", 422, "fileType"},
        {"{\"file\":\"Zm9v\",\"textDetLimitSideLen\":31}", 422, "textDetLimitSideLen"},
        {"{\"file\":\"Zm9v\",\"textDetLimitSideLen\":8193}", 422, "textDetLimitSideLen"},
        {"{\"file\":\"Zm9v\",\"textDetLimitSideLen\":960.5}", 422, "an integer"},
        {"{\"file\":\"Zm9v\",\"textDetLimitSideLen\":\"960\"}", 422, "textDetLimitSideLen"},
        {"{\"file\":\"Zm9v\",\"textDetLimitType\":\"min\"}", 422, "\"max\" only"},
        {"{\"file\":\"Zm9v\",\"textDetThresh\":0.5}", 422, "fixed at 0.3"},
        {"{\"file\":\"Zm9v\",\"textDetBoxThresh\":1.5}", 422, "textDetBoxThresh"},
        {"{\"file\":\"Zm9v\",\"textDetUnclipRatio\":-1}", 422, "textDetUnclipRatio"},
        {"{\"file\":\"Zm9v\",\"textRecScoreThresh\":true}", 422, "textRecScoreThresh"},
        {"{\"file\":\"Zm9v\",\"useTextlineOrientation\":1}", 422, "true, false or null"},
        {"{\"file\":\"Zm9v\",\"useDocOrientationClassify\":true}", 422, "no document preprocessor"},
        {"{\"file\":\"Zm9v\",\"useDocUnwarping\":true}", 422, "no document preprocessor"},
        {"{\"file\":\"Zm9v\",\"visualize\":\"yes\"}", 422, "visualize"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct http_paddle_request req;
        char err[512] = "";
        const int status = parse(cases[i].json, &req, err, sizeof(err));
        if (status != cases[i].status || !strstr(err, cases[i].says))
            fail_msg("%s: status %d, \"%s\"; expected %d saying \"%s\"", cases[i].json, status, err, cases[i].status,
                     cases[i].says);
        assert_null(req.file); /* nothing to free after a refusal */
    }
    /* the classifier asked of a server without it */
    struct http_paddle_limits l = limits();
    l.have_cls = 0;
    l.defaults.use_cls = 0;
    struct http_paddle_request req;
    char err[512];
    const char *json = "{\"file\":\"Zm9v\",\"useTextlineOrientation\":true}";
    assert_int_equal(http_paddle_parse_json(json, strlen(json), &l, &req, err, sizeof(err)), 422);
    assert_non_null(strstr(err, "--no-cls"));
}

/* A form field as the server gathers it: the value malloc'd with a NUL after it. */
static struct http_form_field field(const char *name, const char *value, size_t len, int is_upload)
{
    char *copy = malloc(len + 1);
    assert_non_null(copy);
    memcpy(copy, value, len);
    copy[len] = 0;
    return (struct http_form_field){(char *)name, copy, len, is_upload};
}

static void free_fields(struct http_form_field *f, int n)
{
    for (int i = 0; i < n; i++)
        free(f[i].value);
}

static void test_form_request(void **state)
{
    (void)state;
    const struct http_paddle_limits l = limits();
    struct http_paddle_request req;
    char err[512];
    /* an upload's bytes as they are (a NUL among them), options as JSON text or a bare string */
    struct http_form_field f[] = {field("textDetLimitSideLen", "640", 3, 0), field("file", "a\0b", 3, 1),
                                  field("useTextlineOrientation", "false", 5, 0),
                                  field("textDetLimitType", "max", 3, 0), field("fileType", "null", 4, 0)};
    const int n = sizeof(f) / sizeof(f[0]);
    assert_int_equal(http_paddle_parse_form(f, n, &l, &req, err, sizeof(err)), 0);
    assert_int_equal(req.file_size, 3);
    assert_memory_equal(req.file, "a\0b", 3);
    assert_null(f[1].value); /* taken over by the request */
    assert_int_equal(req.run.det_limit_side_len, 640);
    assert_int_equal(req.run.use_cls, 0);
    assert_int_equal(req.file_type, HTTP_FILE_GUESS);
    http_paddle_request_free(&req);
    free_fields(f, n);

    /* "file" as a text field is base64, as in JSON */
    struct http_form_field g[] = {field("file", "Zm9v", 4, 0)};
    assert_int_equal(http_paddle_parse_form(g, 1, &l, &req, err, sizeof(err)), 0);
    assert_memory_equal(req.file, "foo", 3);
    http_paddle_request_free(&req);
    free_fields(g, 1);

    struct http_form_field none[] = {field("fileType", "1", 1, 0)};
    assert_int_equal(http_paddle_parse_form(none, 1, &l, &req, err, sizeof(err)), 422);
    assert_non_null(strstr(err, "file: required"));
    free_fields(none, 1);
    struct http_form_field empty[] = {field("file", "", 0, 1)};
    assert_int_equal(http_paddle_parse_form(empty, 1, &l, &req, err, sizeof(err)), 422);
    free_fields(empty, 1);
    struct http_form_field bad[] = {field("file", "xyz", 3, 1), field("textDetLimitSideLen", "big", 3, 0)};
    assert_int_equal(http_paddle_parse_form(bad, 2, &l, &req, err, sizeof(err)), 422);
    assert_null(req.file);
    free_fields(bad, 2);
}

static const json_value *at(const json_value *v, size_t i)
{
    assert_non_null(v);
    assert_true(v->type == JSON_ARRAY && i < v->n_items);
    return &v->items[i];
}

static const json_value *get(const json_value *v, const char *key)
{
    const json_value *m = json_get(v, key);
    if (!m)
        fail_msg("no \"%s\"", key);
    return m;
}

static void test_answers(void **state)
{
    (void)state;
    struct ppocr_line lines[2] = {
        {.text = "He said \"hi\"\tthere", .score = 0.96875f, .box = {{36, 91}, {579, 92}, {579, 119}, {36, 118}}},
        {.text = "second", .score = 0.5f, .box = {{10, 20}, {5, 30}, {8, 40}, {2, 25}}, .upside_down = 1},
    };
    struct ppocr_result pages[2] = {{.width = 640, .height = 480, .n_lines = 2, .lines = lines},
                                    {.width = 100, .height = 50, .n_lines = 0}};
    struct ppocr_run_options run = limits().defaults;
    char log_id[37];
    http_paddle_log_id(log_id);
    assert_int_equal(strlen(log_id), 36);
    assert_true(log_id[8] == '-' && log_id[13] == '-' && log_id[14] == '4' && log_id[18] == '-' && log_id[23] == '-');

    struct cli_buf b = {0};
    http_paddle_format_result(&b, log_id, pages, 1, 0, &run, 0.3f);
    assert_false(b.failed);
    assert_true(b.len && b.data[b.len - 1] == '\n');
    json_value v;
    char err[256];
    if (json_parse(b.data, b.len, &v, err, sizeof(err)))
        fail_msg("not JSON: %s: %s", err, b.data);
    assert_string_equal(get(&v, "logId")->string, log_id);
    assert_true(get(&v, "errorCode")->number == 0);
    assert_string_equal(get(&v, "errorMsg")->string, "Success");
    const json_value *result = get(&v, "result");
    const json_value *page = at(get(result, "ocrResults"), 0);
    assert_true(get(page, "ocrImage")->type == JSON_NULL);
    const json_value *pruned = get(page, "prunedResult");
    assert_string_equal(at(get(pruned, "rec_texts"), 0)->string, "He said \"hi\"\tthere");
    assert_true(at(get(pruned, "rec_scores"), 0)->number == 0.96875);
    assert_true(at(at(at(get(pruned, "rec_polys"), 1), 3), 0)->number == 2);
    const json_value *box = at(get(pruned, "rec_boxes"), 1); /* the corners' bounds */
    assert_true(at(box, 0)->number == 2 && at(box, 1)->number == 20 && at(box, 2)->number == 10 &&
                at(box, 3)->number == 40);
    assert_int_equal(get(pruned, "dt_polys")->n_items, 2);
    assert_true(at(get(pruned, "textline_orientation_angles"), 1)->number == 1);
    assert_true(get(get(pruned, "text_det_params"), "limit_side_len")->number == 960);
    assert_true(get(pruned, "text_rec_score_thresh")->number == 0.5);
    assert_true(get(get(pruned, "model_settings"), "use_textline_orientation")->boolean);
    const json_value *info = get(result, "dataInfo");
    assert_string_equal(get(info, "type")->string, "image");
    assert_true(get(info, "width")->number == 640 && get(info, "height")->number == 480);
    json_free(&v);
    cli_buf_free(&b);

    /* a PDF's two pages, the classifier off: no angle told */
    run.use_cls = 0;
    http_paddle_format_result(&b, log_id, pages, 2, 1, &run, 0.3f);
    assert_int_equal(json_parse(b.data, b.len, &v, err, sizeof(err)), 0);
    result = get(&v, "result");
    assert_int_equal(get(result, "ocrResults")->n_items, 2);
    assert_true(
        at(get(get(at(get(result, "ocrResults"), 0), "prunedResult"), "textline_orientation_angles"), 0)->number == -1);
    info = get(result, "dataInfo");
    assert_string_equal(get(info, "type")->string, "pdf");
    assert_true(get(info, "numPages")->number == 2);
    assert_true(get(at(get(info, "pages"), 1), "width")->number == 100);
    json_free(&v);
    cli_buf_free(&b);

    http_paddle_format_status(&b, log_id, 422, "file: \"x\"\nnot \x01 an image \xff");
    assert_int_equal(json_parse(b.data, b.len, &v, err, sizeof(err)), 0);
    assert_true(get(&v, "errorCode")->number == 422);
    assert_non_null(strstr(get(&v, "errorMsg")->string, "\"x\"\nnot \x01 an image"));
    json_free(&v);
    cli_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_request),
        cmocka_unit_test(test_json_refusals),
        cmocka_unit_test(test_form_request),
        cmocka_unit_test(test_answers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
