/* --serve's request reading without an engine: base64 (both alphabets, padding, whitespace,
 * every bad length), request lines (paths, JSON objects, ids, options, each kind of refusal), and
 * the line reader on a pipe (CRLF, a last line without newline, a line over the limit dropped
 * with the next one read, the stop flag on a quiet pipe). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/base64.h"
#include "cli/serve_request.h"
#include "cli/stream.h"

static void test_base64(void **state)
{
    (void)state;
    unsigned char *out;
    size_t n;
    char err[256];
    const struct {
        const char *text, *bytes;
    } good[] = {{"", ""},         {"Zg==", "f"},         {"Zm8=", "fo"},    {"Zm9v", "foo"},
                {"Zg", "f"},      {"Zm8", "fo"},         {"Zm9vYg==", "foob"}, {"Zm9v\nYmFy\r\n", "foobar"},
                {" Zm 9v ", "foo"}, {"-_-_", "\xfb\xff\xbf"}, {"+/+/", "\xfb\xff\xbf"}};
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        assert_int_equal(cli_base64_decode(good[i].text, strlen(good[i].text), &out, &n, err, sizeof(err)), 0);
        assert_int_equal(n, strlen(good[i].bytes));
        assert_memory_equal(out, good[i].bytes, n);
        free(out);
    }
    /* every byte value survives */
    unsigned char all[256];
    for (int i = 0; i < 256; i++)
        all[i] = (unsigned char)i;
    static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char text[400];
    size_t t = 0;
    for (size_t i = 0; i < 256; i += 3) {
        uint32_t v = (uint32_t)all[i] << 16 | (i + 1 < 256 ? (uint32_t)all[i + 1] << 8 : 0) |
                     (i + 2 < 256 ? all[i + 2] : 0);
        const size_t digits = i + 2 < 256 ? 4 : i + 1 < 256 ? 3 : 2;
        for (size_t d = 0; d < digits; d++)
            text[t++] = alphabet[(v >> (18 - 6 * d)) & 63];
    }
    assert_int_equal(cli_base64_decode(text, t, &out, &n, err, sizeof(err)), 0);
    assert_int_equal(n, 256);
    assert_memory_equal(out, all, 256);
    free(out);

    const char *bad[] = {"Z", "Zm9vY", "Zg=", "Zg===", "Z===", "Zg==Zg==", "Zm9v!", "Zm\0v"};
    const size_t bad_len[] = {1, 5, 3, 5, 4, 8, 5, 4};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err[0] = 0;
        assert_int_equal(cli_base64_decode(bad[i], bad_len[i], &out, &n, err, sizeof(err)), -1);
        assert_null(out);
        assert_non_null(strstr(err, "base64"));
    }
}

static struct ppocr_run_options defaults(void)
{
    return (struct ppocr_run_options){.det_limit_side_len = 960,
                                      .det_db_box_thresh = 0.6,
                                      .det_db_unclip_ratio = 1.5,
                                      .use_cls = 1,
                                      .cls_thresh = 0.9f,
                                      .drop_score = 0.5f};
}

static void parse(const char *line, struct serve_request *req)
{
    const struct ppocr_run_options d = defaults();
    assert_int_equal(serve_request_parse(line, strlen(line), &d, req), 0);
}

static void test_paths_and_objects(void **state)
{
    (void)state;
    struct serve_request r;
    parse("some dir/a file.png", &r);
    assert_null(r.error);
    assert_string_equal(r.path, "some dir/a file.png");
    assert_string_equal(r.name, "some dir/a file.png");
    assert_null(r.id);
    serve_request_free(&r);

    parse("{\"id\":\"a\\\"b\\n\",\"path\":\"x.png\",\"drop_score\":0.25,\"det_limit_side_len\":640,"
          "\"use_cls\":false,\"cls_thresh\":0.5,\"det_db_box_thresh\":0.7,\"det_db_unclip_ratio\":2}",
          &r);
    assert_null(r.error);
    assert_string_equal(r.id, "\"a\\\"b\\n\"");
    assert_string_equal(r.path, "x.png");
    assert_true(fabsf(r.run.drop_score - 0.25f) < 1e-7f);
    assert_int_equal(r.run.det_limit_side_len, 640);
    assert_int_equal(r.run.use_cls, 0);
    assert_true(fabsf(r.run.cls_thresh - 0.5f) < 1e-7f);
    assert_true(fabs(r.run.det_db_box_thresh - 0.7) < 1e-12);
    assert_true(fabs(r.run.det_db_unclip_ratio - 2) < 1e-12);
    serve_request_free(&r);

    parse("{\"id\":12345678901,\"image\":\"Zm9v\",\"name\":\"n.png\"}", &r);
    assert_null(r.error);
    assert_string_equal(r.id, "12345678901");
    assert_null(r.path);
    assert_int_equal(r.n_bytes, 3);
    assert_memory_equal(r.bytes, "foo", 3);
    assert_string_equal(r.name, "n.png");
    /* options not given keep the engine's own */
    assert_int_equal(r.run.det_limit_side_len, 960);
    assert_true(fabsf(r.run.drop_score - 0.5f) < 1e-7f);
    serve_request_free(&r);

    parse("{\"id\":-2.5,\"image\":\"data:image/png;base64,Zm9v\"}", &r);
    assert_null(r.error);
    assert_string_equal(r.id, "-2.5");
    assert_string_equal(r.name, "-");
    assert_int_equal(r.n_bytes, 3);
    serve_request_free(&r);
}

static void test_refusals(void **state)
{
    (void)state;
    const struct {
        const char *line, *error_part, *id;
    } cases[] = {
        {"{\"path\":", "not a JSON request: line 1, column", NULL},
        {"{\"id\":1}", "either \"path\" or \"image\"", "1"},
        {"{\"id\":1,\"path\":\"a\",\"image\":\"Zm9v\"}", "either \"path\" or \"image\"", "1"},
        {"{\"id\":1,\"path\":\"\"}", "\"path\" is empty", "1"},
        {"{\"id\":1,\"path\":3}", "\"path\" must be a string", "1"},
        {"{\"id\":1,\"path\":\"a\\u0000b\"}", "\"path\" must be a string", "1"},
        {"{\"id\":{},\"path\":\"a\"}", "\"id\" must be a string", NULL},
        {"{\"id\":1,\"path\":\"a\",\"colour\":1}", "unknown member \"colour\"", "1"},
        {"{\"id\":1,\"path\":\"a\",\"drop_score\":\"x\"}", "\"drop_score\" must be a number", "1"},
        {"{\"id\":1,\"path\":\"a\",\"use_cls\":1}", "\"use_cls\" must be true or false", "1"},
        {"{\"id\":1,\"path\":\"a\",\"det_limit_side_len\":100.5}", "whole number from 32 to 8192", "1"},
        {"{\"id\":1,\"path\":\"a\",\"det_limit_side_len\":16}", "whole number from 32 to 8192", "1"},
        {"{\"id\":1,\"path\":\"a\",\"det_db_thresh\":0.1}", "fixed when the engines are made", "1"},
        {"{\"id\":1,\"image\":\"Zm9v!\"}", "base64", "1"},
        {"{\"id\":1,\"image\":\"data:image/png,Zm9v\"}", "data URL that is not base64", "1"},
        {"[\"a\"]", NULL, NULL}, /* not an object: a path */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct serve_request r;
        parse(cases[i].line, &r);
        if (cases[i].error_part) {
            assert_non_null(r.error);
            if (!strstr(r.error, cases[i].error_part))
                fail_msg("%s: error \"%s\" lacks \"%s\"", cases[i].line, r.error, cases[i].error_part);
        } else {
            assert_null(r.error);
            assert_string_equal(r.path, cases[i].line);
        }
        if (cases[i].id)
            assert_string_equal(r.id, cases[i].id);
        else
            assert_null(r.id);
        serve_request_free(&r);
    }
}

struct writer {
    int fd;
    const char *text;
    size_t len;
};

static void *write_all(void *arg)
{
    struct writer *w = arg;
    for (size_t at = 0; at < w->len;) {
        ssize_t n = write(w->fd, w->text + at, w->len - at);
        if (n <= 0)
            break;
        at += (size_t)n;
    }
    close(w->fd);
    return NULL;
}

static void test_line_reader(void **state)
{
    (void)state;
    /* a line over the limit arrives across many reads (larger than the pipe's buffer) */
    const size_t long_len = 200000;
    char *text = malloc(long_len + 64);
    size_t len = (size_t)sprintf(text, "first\r\n\nsecond\n");
    memset(text + len, 'x', long_len);
    len += long_len;
    len += (size_t)sprintf(text + len, "\nafter\nlast");
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    struct writer w = {fds[1], text, len};
    pthread_t thread;
    assert_int_equal(pthread_create(&thread, NULL, write_all, &w), 0);
    struct cli_line_reader r = {.fd = fds[0]};
    atomic_int stop = 0;
    char *line, err[256];
    size_t n;
    const char *want[] = {"first", "", "second", NULL, "after", "last"};
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        enum cli_line_status st = cli_read_line(&r, 1000, &stop, &line, &n, err, sizeof(err));
        if (!want[i]) {
            assert_int_equal(st, CLI_LINE_TOO_LONG);
            assert_non_null(strstr(err, "more than 1000 bytes (200000)"));
            continue;
        }
        assert_int_equal(st, CLI_LINE_OK);
        assert_string_equal(line, want[i]);
        assert_int_equal(n, strlen(want[i]));
    }
    assert_int_equal(cli_read_line(&r, 1000, &stop, &line, &n, err, sizeof(err)), CLI_LINE_END);
    pthread_join(thread, NULL);
    close(fds[0]);
    cli_line_reader_free(&r);
    free(text);

    /* a quiet pipe: the stop flag ends the wait */
    assert_int_equal(pipe(fds), 0);
    struct cli_line_reader quiet = {.fd = fds[0]};
    stop = 1;
    assert_int_equal(cli_read_line(&quiet, 1000, &stop, &line, &n, err, sizeof(err)), CLI_LINE_END);
    close(fds[0]);
    close(fds[1]);
    cli_line_reader_free(&quiet);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_base64),
        cmocka_unit_test(test_paths_and_objects),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_line_reader),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
