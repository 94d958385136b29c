/* Reading an image file (src/img/image_read.c): a path must name a regular file, and what does not
 * (a FIFO, a device) is refused at once with one line, never read for ever or waited on; a pipe's
 * bytes still decode through ppocr_image_load_fd. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "img/image.h"
#include "support/test_env.h"

/* A 2 x 2 8-bit gray PNM: the smallest image every build decodes. */
static const char tiny_pnm[] = "P5\n2 2\n255\n\x10\x20\x30\x40";
#define TINY_PNM_BYTES (sizeof tiny_pnm - 1)

static int setup(void **state)
{
    (void)state;
    return test_tmpdir_make("image_read");
}

static int teardown(void **state)
{
    (void)state;
    return test_tmpdir_remove();
}

static void expect_refused(const char *path, enum ppocr_status want, const char *reason)
{
    struct ppocr_image img;
    char err[512] = "";
    enum ppocr_status st = ppocr_image_load_file(path, PPOCR_ALPHA_IGNORE, &img, err, sizeof err);
    if (st != want || strncmp(err, path, strlen(path)) != 0 || !strstr(err, reason))
        fail_msg("%s: status %d '%s', expected %d and '%s'", path, st, err, want, reason);
    assert_null(strchr(err, '\n'));
    assert_null(img.bgr);
}

static void test_special_files_refused(void **state)
{
    (void)state;
    /* a device with nothing in it, one that never ends */
    expect_refused("/dev/null", PPOCR_ERR_IO, "not a regular file (a character device)");
    expect_refused("/dev/zero", PPOCR_ERR_IO, "not a regular file (a character device)");
    /* a FIFO nobody writes to: a blocking open would wait for ever */
    const char *fifo = test_tmp_path("fifo.png");
    assert_int_equal(mkfifo(fifo, 0600), 0);
    expect_refused(fifo, PPOCR_ERR_IO, "not a regular file (a FIFO)");
    /* and with a writer holding it open */
    int writer = open(fifo, O_RDWR | O_NONBLOCK);
    assert_true(writer >= 0);
    expect_refused(fifo, PPOCR_ERR_IO, "not a regular file (a FIFO)");
    close(writer);
    expect_refused(test_tmpdir(), PPOCR_ERR_IS_DIRECTORY, "is a directory");
}

static void test_regular_file_and_pipe_read(void **state)
{
    (void)state;
    const char *path = test_tmp_path("tiny.pgm");
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(tiny_pnm, 1, TINY_PNM_BYTES, f), TINY_PNM_BYTES);
    assert_int_equal(fclose(f), 0);
    struct ppocr_image img;
    char err[512];
    assert_int_equal(ppocr_image_load_file(path, PPOCR_ALPHA_IGNORE, &img, err, sizeof err), PPOCR_OK);
    assert_int_equal(img.width, 2);
    assert_int_equal(img.height, 2);
    ppocr_image_free(&img);
    /* the same bytes from a pipe, as stdin gives them */
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    assert_int_equal(write(fds[1], tiny_pnm, TINY_PNM_BYTES), (ssize_t)TINY_PNM_BYTES);
    close(fds[1]);
    assert_int_equal(ppocr_image_load_fd(fds[0], "stdin", PPOCR_ALPHA_IGNORE, &img, err, sizeof err), PPOCR_OK);
    close(fds[0]);
    assert_int_equal(img.width, 2);
    assert_int_equal(img.height, 2);
    ppocr_image_free(&img);
}

int main(void)
{
    test_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_special_files_refused),
        cmocka_unit_test(test_regular_file_and_pipe_read),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
