/* The command's escaping and file writing on their own: JSON strings and one-line text for bytes
 * that are not UTF-8, control characters and a broken sequence whose partial value is a backslash;
 * the atomic writer's file and sub-folders, a trailing slash, a name near NAME_MAX (the temporary
 * name fits whatever the name), a name past it (one line naming the file, nothing left), and no
 * new temporary file once a handler abandoned them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/output.h"
#include "cli/text_escape.h"
#include "cli/write.h"

static void expect_json(const char *in, const char *want)
{
    struct cli_buf b = {0};
    cli_put_json_string(&b, in);
    assert_non_null(b.data);
    assert_string_equal(b.data, want);
    cli_buf_free(&b);
}

static void expect_line(const char *in, const char *want)
{
    struct cli_buf b = {0};
    cli_put_line_text(&b, in);
    assert_string_equal(b.data ? b.data : "", want);
    cli_buf_free(&b);
}

static void json_strings(void **state)
{
    (void)state;
    expect_json("plain \xe4\xb8\xad.png", "\"plain \xe4\xb8\xad.png\"");
    expect_json("bad\xff\xfe.png", "\"bad\xef\xbf\xbd\xef\xbf\xbd.png\"");
    expect_json("q\"b\\n\nt\t\x01", "\"q\\\"b\\\\n\\nt\\t\\u0001\"");
    expect_json("\xe4\xb8", "\"\xef\xbf\xbd\xef\xbf\xbd\"");                 /* a sequence cut short */
    expect_json("\xed\xa0\x80", "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\""); /* a surrogate */
}

static void line_text(void **state)
{
    (void)state;
    expect_line("plain \xe4\xb8\xad.png", "plain \xe4\xb8\xad.png");
    expect_line("a\nb\tc\rd\\e", "a\\nb\\tc\\rd\\\\e");
    expect_line("esc\x1b[31mred", "esc\\x1B[31mred");
    expect_line("del\x7f c1\xc2\x9b", "del\\x7F c1\\xC2\\x9B");
    expect_line("bad\xff", "bad\\xFF");
    /* 0xE1 0x9C: a three-byte sequence whose partial value is 0x5C ('\\'), cut by 'x' */
    expect_line("\xe1\x9cx", "\\xE1\\x9Cx");
}

static char *read_all(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    static char buf[4096];
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = 0;
    return buf;
}

static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    return n;
}

static char root[256];

static int make_root(void **state)
{
    (void)state;
    snprintf(root, sizeof(root), "%s/ppocr-test-write.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    return mkdtemp(root) ? 0 : -1;
}

static int remove_root(void **state)
{
    (void)state;
    char cmd[512];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
    return system(cmd) == 0 ? 0 : -1;
}

static void atomic_files(void **state)
{
    (void)state;
    char dir[512], path[1024], err[1024];
    snprintf(dir, sizeof(dir), "%s/out/", root); /* a trailing slash: "out/x", not "out//x" */
    assert_int_equal(cli_write_file_atomic(dir, "sub/x.png", "json", "{}\n", 3, err, sizeof(err)), 0);
    snprintf(path, sizeof(path), "%s/out/sub/x.png.json", root);
    assert_string_equal(read_all(path), "{}\n");
    snprintf(path, sizeof(path), "%s/out/sub", root);
    assert_int_equal(count_entries(path), 1); /* no temporary file left */

    /* 250 bytes with the extension: within NAME_MAX, whatever the temporary name's length */
    char name[300];
    memset(name, 'n', 245);
    name[245] = 0;
    assert_int_equal(cli_write_file_atomic(dir, name, "json", "x", 1, err, sizeof(err)), 0);
    snprintf(path, sizeof(path), "%s/out/%s.json", root, name);
    assert_string_equal(read_all(path), "x");

    /* 256 bytes: one line naming the file, nothing left */
    memset(name, 'n', 251);
    name[251] = 0;
    assert_int_equal(cli_write_file_atomic(dir, name, "json", "x", 1, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "cannot write "));
    assert_non_null(strstr(err, "/out/nnnn"));
    assert_null(strchr(err, '\n'));
    snprintf(path, sizeof(path), "%s/out", root);
    assert_int_equal(count_entries(path), 2); /* sub/ and the 250-byte file */

    /* a folder in the way of a sub-folder */
    assert_int_equal(cli_write_file_atomic(dir, "sub/x.png.json/y", "json", "x", 1, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "cannot create the folder for "));

    /* after a handler abandoned the temporary files, no new one is made */
    cli_write_abandon();
    assert_int_equal(cli_write_file_atomic(dir, "late.png", "json", "x", 1, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "the run is stopping"));
    assert_int_equal(count_entries(path), 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(json_strings),
        cmocka_unit_test(line_text),
        cmocka_unit_test_setup_teardown(atomic_files, make_root, remove_root),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
