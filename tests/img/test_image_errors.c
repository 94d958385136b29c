/* Bad input gives a status naming the reason and a one-line message that starts with the file name;
 * nothing crashes, and oversized images are refused from their header, before any pixel allocation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "img/image.h"
#include "support/test_env.h"

static int setup(void **state)
{
    (void)state;
    return test_tmpdir_make("image_errors");
}

static int teardown(void **state)
{
    (void)state;
    return test_tmpdir_remove();
}

static size_t read_fixture(const char *name, uint8_t *buf, size_t cap)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/data/images/%s", test_data_dir(), name);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    size_t n = fread(buf, 1, cap, f);
    fclose(f);
    assert_true(n > 0 && n < cap);
    return n;
}

static void write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, n, f), n);
    fclose(f);
}

/* The status, and a message of one line starting with `name` and containing `needle`. */
static void expect_error(enum ppocr_status got, const char *err, enum ppocr_status want, const char *name,
                         const char *needle)
{
    if (got != want)
        fail_msg("status %d, expected %d (%s)", got, want, err);
    assert_null(strchr(err, '\n'));
    assert_int_equal(strncmp(err, name, strlen(name)), 0);
    if (!strstr(err, needle))
        fail_msg("'%s' does not say '%s'", err, needle);
    printf("%s\n", err);
}

static enum ppocr_status load_mem(const void *data, size_t n, char *err, size_t len)
{
    struct ppocr_image img;
    enum ppocr_status st = ppocr_image_load_memory(data, n, "mem", PPOCR_ALPHA_IGNORE, &img, err, len);
    if (st == PPOCR_OK)
        ppocr_image_free(&img);
    else
        assert_null(img.bgr);
    return st;
}

static enum ppocr_status load_path(const char *path, char *err, size_t len)
{
    struct ppocr_image img;
    enum ppocr_status st = ppocr_image_load_file(path, PPOCR_ALPHA_IGNORE, &img, err, len);
    if (st == PPOCR_OK)
        ppocr_image_free(&img);
    else
        assert_null(img.bgr);
    return st;
}

static void test_files_that_cannot_be_read(void **state)
{
    (void)state;
    char err[512];
    const char *missing = test_tmp_path("missing.png");
    expect_error(load_path(missing, err, sizeof err), err, PPOCR_ERR_NOT_FOUND, missing, "no such file");
    expect_error(load_path(test_tmpdir(), err, sizeof err), err, PPOCR_ERR_IS_DIRECTORY, test_tmpdir(),
                 "is a directory");
    const char *empty = test_tmp_path("empty.png");
    write_file(empty, "", 0);
    expect_error(load_path(empty, err, sizeof err), err, PPOCR_ERR_EMPTY, empty, "empty");
    const char *text = test_tmp_path("notes.png");
    const char words[] = "this is a text file with a .png name\n";
    write_file(text, words, sizeof words - 1);
    expect_error(load_path(text, err, sizeof err), err, PPOCR_ERR_UNKNOWN_FORMAT, text, "not an image");
}

/* Permission denied: as a normal user through chmod 000; as root (which reads anything) through a
 * child that drops to the nobody user first. */
static void test_permission_denied(void **state)
{
    (void)state;
    const char *secret = test_tmp_path("secret.png");
    uint8_t buf[4096];
    size_t n = read_fixture("rgb8.png", buf, sizeof buf);
    write_file(secret, buf, n);
    assert_int_equal(chmod(secret, 0), 0);
    char err[512];
    if (geteuid() != 0) {
        expect_error(load_path(secret, err, sizeof err), err, PPOCR_ERR_PERMISSION, secret, "permission denied");
        return;
    }
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (setgid(65534) != 0 || setuid(65534) != 0)
            _exit(77);
        struct ppocr_image img;
        enum ppocr_status st = ppocr_image_load_file(secret, PPOCR_ALPHA_IGNORE, &img, err, sizeof err);
        printf("as nobody: %s\n", err);
        fflush(stdout);
        _exit(st == PPOCR_ERR_PERMISSION && strstr(err, "permission denied") && !strchr(err, '\n') ? 0 : 1);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    if (WEXITSTATUS(status) == 77)
        skip(); /* no way to drop root here */
    assert_int_equal(WEXITSTATUS(status), 0);
}

/* A pipe is read to its end, as stdin is; one closed without data is an empty input. (A path
 * that names a FIFO is refused without being opened: tests/img/test_image_read.c.) */
static void test_pipe(void **state)
{
    (void)state;
    uint8_t buf[4096];
    size_t n = read_fixture("rgb8.png", buf, sizeof buf);
    for (int round = 0; round < 2; round++) {
        int fds[2];
        assert_int_equal(pipe(fds), 0);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            close(fds[0]);
            size_t todo = round == 0 ? n : 0, done = 0;
            while (done < todo) { /* in small pieces, so the reader sees several reads */
                ssize_t w = write(fds[1], buf + done, todo - done < 50 ? todo - done : 50);
                if (w <= 0)
                    _exit(1);
                done += (size_t)w;
            }
            close(fds[1]);
            _exit(0);
        }
        close(fds[1]);
        struct ppocr_image img;
        char err[512];
        enum ppocr_status st = ppocr_image_load_fd(fds[0], "pipe.png", PPOCR_ALPHA_IGNORE, &img, err, sizeof err);
        close(fds[0]);
        int status;
        waitpid(pid, &status, 0);
        if (round == 0) {
            assert_int_equal(st, PPOCR_OK);
            assert_int_equal(img.width, 7);
            ppocr_image_free(&img);
        } else {
            expect_error(st, err, PPOCR_ERR_EMPTY, "pipe.png", "empty");
        }
    }
}

static void test_truncated_files(void **state)
{
    (void)state;
    uint8_t buf[8192];
    char err[512];
    size_t n = read_fixture("rgb8.png", buf, sizeof buf);
    /* cut in the signature, in IHDR, in IDAT, in and before IEND (a PNG missing only IEND's CRC decodes) */
    const size_t png_cuts[] = {5, 20, n - 30, n - 8, n - 12};
    const enum ppocr_status png_want[] = {PPOCR_ERR_UNKNOWN_FORMAT, PPOCR_ERR_TRUNCATED, PPOCR_ERR_TRUNCATED,
                                          PPOCR_ERR_TRUNCATED, PPOCR_ERR_TRUNCATED};
    for (int i = 0; i < 5; i++)
        expect_error(load_mem(buf, png_cuts[i], err, sizeof err), err, png_want[i], "mem",
                     png_want[i] == PPOCR_ERR_TRUNCATED ? "truncated PNG" : "not an image");
    const char *jpegs[] = {"quad_baseline.jpg", "quad_progressive.jpg", "quad_exif6.jpg"};
    for (int k = 0; k < 3; k++) {
        n = read_fixture(jpegs[k], buf, sizeof buf);
        const size_t cuts[] = {3, 40, n / 2, n - 2};
        for (int i = 0; i < 4; i++)
            expect_error(load_mem(buf, cuts[i], err, sizeof err), err, PPOCR_ERR_TRUNCATED, "mem", "truncated JPEG");
    }
    const char *others[] = {"rgb.bmp", "rgb.tga", "rgb.ppm", "rgb16.ppm", "rgba_rle.tga", "two_frames.gif"};
    for (int k = 0; k < 6; k++) {
        n = read_fixture(others[k], buf, sizeof buf);
        /* GIF: cut inside the first frame's data (the second frame may be missing) */
        size_t cut = strstr(others[k], ".gif") ? 13 + 12 + 8 + 10 + 3 : n - 1;
        expect_error(load_mem(buf, cut, err, sizeof err), err, PPOCR_ERR_TRUNCATED, "mem", "truncated");
    }
}

static void test_corrupt_data(void **state)
{
    (void)state;
    uint8_t buf[8192];
    char err[512];
    size_t n = read_fixture("rgb8.png", buf, sizeof buf);
    /* IHDR length field wrong */
    uint8_t bad[8192];
    memcpy(bad, buf, n);
    bad[11] = 12;
    expect_error(load_mem(bad, n, err, sizeof err), err, PPOCR_ERR_CORRUPT, "mem", "corrupt PNG");
    /* deflate stream of IDAT damaged (the zlib header: bad compression method) */
    memcpy(bad, buf, n);
    size_t idat = 0;
    for (size_t i = 8; i + 4 < n; i++)
        if (memcmp(bad + i, "IDAT", 4) == 0)
            idat = i + 4;
    assert_true(idat > 0);
    bad[idat] = 0xFF, bad[idat + 1] = 0xFF;
    expect_error(load_mem(bad, n, err, sizeof err), err, PPOCR_ERR_CORRUPT, "mem", "corrupt PNG data");
    /* a JPEG whose first marker after SOI is garbage */
    const uint8_t jpeg_garbage[] = {0xFF, 0xD8, 0xFF, 0x00, 0x12, 0x34, 0x56, 0x78, 0xFF, 0xD9};
    enum ppocr_status st = load_mem(jpeg_garbage, sizeof jpeg_garbage, err, sizeof err);
    expect_error(st, err, PPOCR_ERR_CORRUPT, "mem", "corrupt JPEG");
    /* an unsupported bit depth in an otherwise valid IHDR */
    memcpy(bad, buf, n);
    bad[24] = 3;
    expect_error(load_mem(bad, n, err, sizeof err), err, PPOCR_ERR_CORRUPT, "mem", "PNG");
}

/* Inputs that stb_image 2.27 mishandles are checked before it sees them (and a JPEG DHT table that
 * libjpeg refuses too, named before any decoder runs). */
static void test_inputs_guarded_before_stb(void **state)
{
    (void)state;
    uint8_t buf[8192], edited[8192];
    char err[512];
    /* a DHT table declaring more than 256 codes (stb would write past its tables) */
    size_t n = read_fixture("quad_baseline.jpg", buf, sizeof buf);
    size_t dht = 0;
    for (size_t i = 2; i + 1 < n; i++)
        if (buf[i] == 0xFF && buf[i + 1] == 0xC4) {
            dht = i;
            break;
        }
    assert_true(dht > 0);
    memcpy(edited, buf, n);
    for (int i = 0; i < 16; i++)
        edited[dht + 5 + i] = 200; /* the 16 code counts of its first table */
    expect_error(load_mem(edited, n, err, sizeof err), err, PPOCR_ERR_CORRUPT, "mem", "Huffman");

    /* an empty IDAT before the real one is valid PNG: decoded, not refused */
    n = read_fixture("rgb8.png", buf, sizeof buf);
    size_t idat = 0;
    for (size_t i = 8; i + 4 < n; i++)
        if (memcmp(buf + i + 4, "IDAT", 4) == 0) {
            idat = i;
            break;
        }
    assert_true(idat > 0);
    const uint8_t empty_idat[12] = {0, 0, 0, 0, 'I', 'D', 'A', 'T', 0x35, 0xAF, 0x06, 0x1E};
    memcpy(edited, buf, idat);
    memcpy(edited + idat, empty_idat, 12);
    memcpy(edited + idat + 12, buf + idat, n - idat);
    struct ppocr_image img, want;
    assert_int_equal(ppocr_image_load_memory(edited, n + 12, "mem", PPOCR_ALPHA_IGNORE, &img, err, sizeof err),
                     PPOCR_OK);
    assert_int_equal(ppocr_image_load_memory(buf, n, "mem", PPOCR_ALPHA_IGNORE, &want, err, sizeof err), PPOCR_OK);
    assert_memory_equal(img.bgr, want.bgr, (size_t)want.width * want.height * 3);
    ppocr_image_free(&img);
    ppocr_image_free(&want);

    /* an IDAT whose length field claims 2 GB: refused from the chunk list, not allocated */
    memcpy(edited, buf, n);
    edited[idat] = 0x7F;
    expect_error(load_mem(edited, n, err, sizeof err), err, PPOCR_ERR_TRUNCATED, "mem", "truncated PNG");
}

static void test_unsupported_formats(void **state)
{
    (void)state;
    char err[512];
    const char webp[] = "RIFF\x10\0\0\0WEBPVP8 ";
    expect_error(load_mem(webp, sizeof webp - 1, err, sizeof err), err, PPOCR_ERR_UNSUPPORTED, "mem", "WebP");
    const char tiff[] = "II*\0\x08\0\0\0";
    expect_error(load_mem(tiff, sizeof tiff - 1, err, sizeof err), err, PPOCR_ERR_UNSUPPORTED, "mem", "TIFF");
    uint8_t buf[256];
    size_t n = read_fixture("ascii.pbm", buf, sizeof buf);
    expect_error(load_mem(buf, n, err, sizeof err), err, PPOCR_ERR_UNSUPPORTED, "mem", "P1-P4");
    /* an arithmetic-coded JPEG (SOF9) */
    const uint8_t sof9[] = {0xFF, 0xD8, 0xFF, 0xC9, 0, 11, 8, 0, 16, 0, 16, 1, 1, 0x11, 0, 0xFF, 0xD9};
    expect_error(load_mem(sof9, sizeof sof9, err, sizeof err), err, PPOCR_ERR_UNSUPPORTED, "mem", "arithmetic");
}

/* A PNG that is only a signature and an IHDR claiming w x h. */
static size_t png_header(uint8_t *out, uint32_t w, uint32_t h)
{
    const uint8_t sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    memcpy(out, sig, 8);
    const uint8_t ihdr[25] = {0,
                              0,
                              0,
                              13,
                              'I',
                              'H',
                              'D',
                              'R',
                              (uint8_t)(w >> 24),
                              (uint8_t)(w >> 16),
                              (uint8_t)(w >> 8),
                              (uint8_t)w,
                              (uint8_t)(h >> 24),
                              (uint8_t)(h >> 16),
                              (uint8_t)(h >> 8),
                              (uint8_t)h,
                              8,
                              2,
                              0,
                              0,
                              0,
                              0,
                              0,
                              0,
                              0}; /* CRC not checked by the decoder */
    memcpy(out + 8, ihdr, sizeof ihdr);
    return 8 + sizeof ihdr;
}

/* The limits are checked on the header: a 20000x20000 claim is refused as too large (had the decoder
 * been run it would have failed on the missing data instead, after allocating gigabytes). */
static void test_too_large_refused_from_header(void **state)
{
    (void)state;
    uint8_t png[64];
    char err[512];
    size_t n = png_header(png, 20000, 20000);
    expect_error(load_mem(png, n, err, sizeof err), err, PPOCR_ERR_TOO_LARGE, "mem", "20000x20000");
    n = png_header(png, 10001, 10000); /* just over 100 megapixels */
    expect_error(load_mem(png, n, err, sizeof err), err, PPOCR_ERR_TOO_LARGE, "mem", "too large");
    n = png_header(png, 32769, 1); /* a side over the limit */
    expect_error(load_mem(png, n, err, sizeof err), err, PPOCR_ERR_TOO_LARGE, "mem", "too large");
    n = png_header(png, 10000, 10000); /* exactly at the limit: accepted, then the data is missing */
    expect_error(load_mem(png, n, err, sizeof err), err, PPOCR_ERR_TRUNCATED, "mem", "truncated PNG");
    /* JPEG: SOF0 claiming 20000x20000, then the data stops */
    const uint8_t jpeg[] = {0xFF, 0xD8, 0xFF, 0xC0, 0, 17,   8, 0x4E, 0x20, 0x4E, 0x20,
                            3,    1,    0x11, 0,    2, 0x11, 0, 3,    0x11, 0};
    expect_error(load_mem(jpeg, sizeof jpeg, err, sizeof err), err, PPOCR_ERR_TOO_LARGE, "mem", "20000x20000");
    /* the same message through a file */
    const char *path = test_tmp_path("huge.png");
    n = png_header(png, 20000, 20000);
    write_file(path, png, n);
    expect_error(load_path(path, err, sizeof err), err, PPOCR_ERR_TOO_LARGE, path, "too large");
}

/* Random damage to a valid file never crashes (ASan/UBSan builds check memory errors too). */
static void test_random_damage_never_crashes(void **state)
{
    (void)state;
    const char *names[] = {"rgb8.png", "quad_baseline.jpg", "quad_progressive.jpg", "rgb.bmp",    "two_frames.gif",
                           "rgb.tga",  "rgb16.ppm",         "rgba_rle.tga",         "palette.png"};
    uint8_t buf[8192], bad[8192];
    char err[512];
    int failures = 0, runs = 0;
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        size_t n = read_fixture(names[k], buf, sizeof buf);
        for (int round = 0; round < 150; round++) {
            memcpy(bad, buf, n);
            int flips = 1 + (int)(test_rand_u32() % 4);
            for (int i = 0; i < flips; i++)
                bad[test_rand_u32() % n] = (uint8_t)test_rand_u32();
            size_t len = test_rand_u32() % 4 == 0 ? test_rand_u32() % n + 1 : n;
            struct ppocr_image img;
            enum ppocr_status st =
                ppocr_image_load_memory(bad, len, "fuzz", PPOCR_ALPHA_FLATTEN, &img, err, sizeof err);
            if (st == PPOCR_OK) {
                assert_true(img.width > 0 && img.height > 0 && img.bgr);
                ppocr_image_free(&img);
            } else {
                if (strchr(err, '\n') || strncmp(err, "fuzz: ", 6) != 0)
                    fail_msg("%s (round %d): not one line: [%s]", names[k], round, err);
                failures++;
            }
            runs++;
        }
    }
    printf("%d damaged inputs, %d refused\n", runs, failures);
    assert_true(failures > 0);
}

/* libjpeg's errors come back through longjmp: every damaged JPEG must give a status and one line,
 * never exit, and free all it allocated (the ASan build checks leaks and memory errors). Bit flips,
 * byte overwrites, cuts, and cuts with an end-of-image marker put back (so that the marker walk sees
 * a complete file and only libjpeg notices the missing data). */
static void test_damaged_jpegs_never_crash(void **state)
{
    (void)state;
    const char *names[] = {"quad_baseline.jpg", "quad_progressive.jpg", "quad_cmyk.jpg",
                           "quad_gray.jpg",     "quad_exif6.jpg",       "word_2.jpg"};
    static uint8_t buf[16384], bad[16384 + 2];
    char err[512];
    int runs = 0, ok = 0, truncated = 0, corrupt = 0, other = 0;
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        size_t n = read_fixture(names[k], buf, sizeof buf);
        for (int round = 0; round < 100; round++) {
            memcpy(bad, buf, n);
            size_t len = n;
            int kind = round % 4;
            if (kind == 0) { /* flip a few bits */
                for (int i = 0, flips = 1 + (int)(test_rand_u32() % 3); i < flips; i++)
                    bad[test_rand_u32() % n] ^= (uint8_t)(1u << (test_rand_u32() % 8));
            } else if (kind == 1) { /* overwrite a few bytes */
                for (int i = 0, hits = 1 + (int)(test_rand_u32() % 4); i < hits; i++)
                    bad[test_rand_u32() % n] = (uint8_t)test_rand_u32();
            } else { /* cut, and for kind 3 close the file again with EOI */
                len = 3 + test_rand_u32() % (n - 3);
                if (kind == 3)
                    bad[len] = 0xFF, bad[len + 1] = 0xD9, len += 2;
            }
            struct ppocr_image img;
            enum ppocr_status st = ppocr_image_load_memory(bad, len, "jpeg", PPOCR_ALPHA_IGNORE, &img, err, sizeof err);
            runs++;
            if (st == PPOCR_OK) {
                assert_true(img.width > 0 && img.height > 0 && img.bgr);
                ppocr_image_free(&img);
                ok++;
                continue;
            }
            assert_null(img.bgr);
            if (strchr(err, '\n') || strncmp(err, "jpeg: ", 6) != 0)
                fail_msg("%s (round %d): not one line: [%s]", names[k], round, err);
            if (st == PPOCR_ERR_TRUNCATED)
                truncated++;
            else if (st == PPOCR_ERR_CORRUPT)
                corrupt++;
            else
                other++;
            if (kind == 2 && st != PPOCR_ERR_TRUNCATED)
                fail_msg("%s cut at %zu: [%s]", names[k], len, err);
        }
    }
    printf("%d damaged JPEGs: %d decoded, %d truncated, %d corrupt, %d other\n", runs, ok, truncated, corrupt, other);
    assert_true(truncated > 0 && corrupt > 0);
}

/* A cut inside the tables after the frame header: libjpeg's own "premature end" warning is turned
 * into the truncation it is. */
static void test_jpeg_cut_inside_tables(void **state)
{
    (void)state;
    uint8_t buf[8192];
    char err[512];
    size_t n = read_fixture("quad_baseline.jpg", buf, sizeof buf);
    size_t sof = 0, dht = 0;
    for (size_t i = 2; i + 1 < n; i++) {
        if (buf[i] == 0xFF && buf[i + 1] == 0xC0 && !sof)
            sof = i;
        if (buf[i] == 0xFF && buf[i + 1] == 0xC4 && sof && !dht)
            dht = i;
    }
    assert_true(sof > 0 && dht > sof);
    expect_error(load_mem(buf, dht + 10, err, sizeof err), err, PPOCR_ERR_TRUNCATED, "mem", "truncated JPEG");
}

/* A progressive JPEG whose last scan repeats 600 times: each repeat is another pass over the whole
 * coefficient buffer, so scans are limited (libjpeg only warns about the bogus progression). */
static void test_jpeg_too_many_scans(void **state)
{
    (void)state;
    uint8_t buf[8192];
    char err[512];
    size_t n = read_fixture("quad_progressive.jpg", buf, sizeof buf);
    size_t last_sos = 0;
    for (size_t i = 2; i + 1 < n; i++)
        if (buf[i] == 0xFF && buf[i + 1] == 0xDA)
            last_sos = i;
    assert_true(last_sos > 0 && buf[n - 2] == 0xFF && buf[n - 1] == 0xD9);
    size_t scan = n - 2 - last_sos, repeats = 600, len = last_sos + scan * repeats + 2;
    uint8_t *many = malloc(len);
    assert_non_null(many);
    memcpy(many, buf, last_sos);
    for (size_t r = 0; r < repeats; r++)
        memcpy(many + last_sos + r * scan, buf + last_sos, scan);
    many[len - 2] = 0xFF, many[len - 1] = 0xD9;
    expect_error(load_mem(many, len, err, sizeof err), err, PPOCR_ERR_CORRUPT, "mem", "scans");
    /* a few repeats are only a warning: decoded, as cv2.imread does */
    len = last_sos + scan * 3 + 2;
    many[len - 2] = 0xFF, many[len - 1] = 0xD9;
    struct ppocr_image img;
    assert_int_equal(ppocr_image_load_memory(many, len, "mem", PPOCR_ALPHA_IGNORE, &img, err, sizeof err), PPOCR_OK);
    assert_int_equal(img.width, 32);
    ppocr_image_free(&img);
    free(many);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_files_that_cannot_be_read),
        cmocka_unit_test(test_permission_denied),
        cmocka_unit_test(test_pipe),
        cmocka_unit_test(test_truncated_files),
        cmocka_unit_test(test_corrupt_data),
        cmocka_unit_test(test_inputs_guarded_before_stb),
        cmocka_unit_test(test_unsupported_formats),
        cmocka_unit_test(test_too_large_refused_from_header),
        cmocka_unit_test(test_random_damage_never_crashes),
        cmocka_unit_test(test_damaged_jpegs_never_crash),
        cmocka_unit_test(test_jpeg_cut_inside_tables),
        cmocka_unit_test(test_jpeg_too_many_scans),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
