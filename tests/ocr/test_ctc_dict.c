/* Loading the recognition dictionary as PaddleOCR (and the reference's loadChars) reads it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ocr/dict.h"

static struct ocr_dict parse(const char *text, size_t size)
{
    struct ocr_dict d;
    char err[256];
    if (ocr_dict_parse(text, size, &d, err, sizeof(err)))
        fail_msg("dict: %s", err);
    return d;
}

static void assert_entries(const struct ocr_dict *d, const char *const *want, size_t n)
{
    assert_int_equal(d->n_entries, n);
    for (size_t i = 0; i < n; i++)
        assert_string_equal(d->entries[i], want[i]);
}

static void test_lines_then_space(void **state)
{
    (void)state;
    const char text[] = "a\nb\n\xe4\xb8\xad\n";
    struct ocr_dict d = parse(text, sizeof(text) - 1);
    const char *const want[] = {"a", "b", "\xe4\xb8\xad", " "};
    assert_entries(&d, want, 4);
    ocr_dict_free(&d);
}

static void test_crlf_and_missing_final_newline(void **state)
{
    (void)state;
    const char text[] = "a\r\nb\r\nc";
    struct ocr_dict d = parse(text, sizeof(text) - 1);
    const char *const want[] = {"a", "b", "c", " "};
    assert_entries(&d, want, 4);
    ocr_dict_free(&d);
}

static void test_empty_lines_are_entries_except_the_last(void **state)
{
    (void)state;
    /* an empty line inside the file is a class of its own (PaddleOCR keeps it); the newline that
     * ends the file does not start one more */
    const char text[] = "a\n\nb\n";
    struct ocr_dict d = parse(text, sizeof(text) - 1);
    const char *const want[] = {"a", "", "b", " "};
    assert_entries(&d, want, 4);
    ocr_dict_free(&d);

    d = parse("", 0);
    const char *const only_space[] = {" "};
    assert_entries(&d, only_space, 1);
    ocr_dict_free(&d);
}

static void test_class_count_check(void **state)
{
    (void)state;
    const char text[] = "a\nb\nc\n";
    struct ocr_dict d = parse(text, sizeof(text) - 1);
    char err[256] = "";
    assert_int_equal(ocr_dict_check_classes(&d, 5, err, sizeof(err)), 0); /* blank + 3 + space */
    assert_int_equal(ocr_dict_check_classes(&d, 6625, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "4 entries"));
    assert_non_null(strstr(err, "6625"));
    ocr_dict_free(&d);
}

static void test_load_from_file_and_errors(void **state)
{
    (void)state;
    char path[] = "/tmp/ppocr_dict_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    const char text[] = "x\r\ny\r\n";
    assert_int_equal(write(fd, text, sizeof(text) - 1), (ssize_t)(sizeof(text) - 1));
    close(fd);
    struct ocr_dict d;
    char err[256] = "";
    assert_int_equal(ocr_dict_load(path, &d, err, sizeof(err)), 0);
    const char *const want[] = {"x", "y", " "};
    assert_entries(&d, want, 3);
    ocr_dict_free(&d);

    const char binary[] = "a\0b\n";
    fd = open(path, O_WRONLY | O_TRUNC);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, binary, sizeof(binary) - 1), (ssize_t)(sizeof(binary) - 1));
    close(fd);
    assert_int_equal(ocr_dict_load(path, &d, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "NUL"));
    unlink(path);

    assert_int_equal(ocr_dict_load(path, &d, err, sizeof(err)), -1);
    assert_non_null(strstr(err, path));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lines_then_space),
        cmocka_unit_test(test_crlf_and_missing_final_newline),
        cmocka_unit_test(test_empty_lines_are_entries_except_the_last),
        cmocka_unit_test(test_class_count_check),
        cmocka_unit_test(test_load_from_file_and_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
