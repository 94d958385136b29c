/* The pipeline cache: one process writes it, the next reuses it; a variant is built once per
 * context, also when threads ask for it at once; damaged, truncated or foreign cache files are
 * ignored and replaced; the variants one context used are built ahead by the next. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gpu/context.h"
#include "gpu/error.h"
#include "gpu/pipeline.h"
#include "gpu/selftest.h"
#include "gpu/validation.h"
#include "support/test_env.h"

#define CHECK(call)                                                                                                    \
    do {                                                                                                               \
        int st_ = (call);                                                                                              \
        if (st_ != GPU_OK)                                                                                             \
            fail_msg("%s -> %d: %s", #call, st_, gpu_last_error());                                                    \
    } while (0)

static const char *self_path;

/* A fresh, empty folder for this test under the build tree. */
static void fresh_dir(const char *name, char *dir, size_t size)
{
    snprintf(dir, size, "%s/test-cache/%s-%ld", test_binary_dir(), name, (long)getpid());
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

static void remove_dir(const char *dir)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

static void get_saxpy(struct gpu_context *ctx, uint32_t local)
{
    const struct gpu_pipeline *p;
    CHECK(gpu_pipeline_get(ctx,
                           &(struct gpu_pipeline_desc){.shader = GPU_SHADER_selftest_saxpy,
                                                       .spec = &local,
                                                       .spec_count = 1,
                                                       .buffer_count = 2,
                                                       .push_bytes = 8},
                           &p));
}

static void build_some_pipelines(struct gpu_context *ctx)
{
    for (uint32_t local = 16; local <= 64; local *= 2)
        get_saxpy(ctx, local);
}

/* Child: builds pipelines with the cache in $PPOCR_CACHE_DIR; exit status 10 + loaded. */
static int child_cache_user(void)
{
    struct gpu_context *ctx;
    if (gpu_context_create(NULL, &ctx) != GPU_OK) {
        fprintf(stderr, "%s\n", gpu_last_error());
        return 1;
    }
    struct gpu_pipeline_cache_info info;
    gpu_pipeline_cache_info(ctx, &info);
    build_some_pipelines(ctx);
    int loaded = info.loaded && info.loaded_bytes > 0;
    fprintf(stderr, "cache %s: loaded %d (%zu bytes)\n", info.path, loaded, info.loaded_bytes);
    gpu_context_destroy(ctx);
    return 10 + loaded;
}

static int run_child(const char *cache_dir)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        setenv("PPOCR_CACHE_DIR", cache_dir, 1);
        execl(self_path, self_path, "--child-cache-user", (char *)NULL);
        _exit(127);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    return WEXITSTATUS(status);
}

/* The one cache file in `dir` (beside its variants file, if any). */
static void cache_file(const char *dir, char *path, size_t size)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int found = 0;
    for (struct dirent *e; (e = readdir(d));)
        if (strncmp(e->d_name, "pipelines-", 10) == 0 && !strstr(e->d_name, ".variants")) {
            assert_non_null(strstr(e->d_name, ".bin"));
            assert_null(strstr(e->d_name, ".tmp")); /* the temporary file was renamed */
            snprintf(path, size, "%s/%s", dir, e->d_name);
            found++;
        }
    closedir(d);
    assert_int_equal(found, 1);
}

static void test_second_process_reuses_cache(void **state)
{
    (void)state;
    char dir[1024], path[1300];
    fresh_dir("two-processes", dir, sizeof dir);
    strcat(dir, "/nested/folder");        /* created on demand */
    assert_int_equal(run_child(dir), 10); /* nothing to load yet */
    cache_file(dir, path, sizeof path);
    struct stat first;
    assert_int_equal(stat(path, &first), 0);
    assert_true(first.st_size > 64);

    assert_int_equal(run_child(dir), 11); /* loaded what the first one wrote */
    struct stat second;
    assert_int_equal(stat(path, &second), 0);
    /* nothing new was compiled, so the file was left alone */
    assert_int_equal(first.st_ino, second.st_ino);
    assert_int_equal(first.st_mtime, second.st_mtime);
    *strstr(dir, "/nested/folder") = 0;
    remove_dir(dir);
    assert_int_equal(gpu_validation_message_count(), 0);
}

static struct gpu_context *create_in(const char *dir)
{
    struct gpu_options opt;
    gpu_options_default(&opt);
    opt.cache_dir = dir;
    struct gpu_context *ctx = NULL;
    CHECK(gpu_context_create(&opt, &ctx));
    return ctx;
}

static void test_variant_built_once(void **state)
{
    (void)state;
    struct gpu_context *ctx = create_in("");
    uint32_t spec[2] = {64, 7};
    struct gpu_pipeline_desc d = {
        .shader = GPU_SHADER_selftest_saxpy, .spec = spec, .spec_count = 1, .buffer_count = 2, .push_bytes = 8};
    const struct gpu_pipeline *a, *b, *c, *e;
    CHECK(gpu_pipeline_get(ctx, &d, &a));
    unsigned count = gpu_pipeline_count(ctx);
    uint32_t same[1] = {64}; /* equal values in another array */
    d.spec = same;
    CHECK(gpu_pipeline_get(ctx, &d, &b));
    assert_ptr_equal(a, b);
    assert_int_equal(gpu_pipeline_count(ctx), count);
    spec[0] = 32;
    d.spec = spec;
    CHECK(gpu_pipeline_get(ctx, &d, &c));
    assert_ptr_not_equal(a, c);
    d.push_bytes = 16; /* another layout is another pipeline */
    CHECK(gpu_pipeline_get(ctx, &d, &e));
    assert_ptr_not_equal(c, e);
    assert_int_equal(gpu_pipeline_count(ctx), count + 2);
    assert_string_equal(gpu_pipeline_shader(a), "selftest_saxpy");

    struct gpu_pipeline_cache_info info;
    gpu_pipeline_cache_info(ctx, &info);
    assert_string_equal(info.path, ""); /* disk cache off */
    assert_false(info.loaded);
    gpu_context_destroy(ctx);
    assert_int_equal(gpu_validation_message_count(), 0);
}

static unsigned char *read_all(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    *size = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *data = malloc(*size);
    assert_non_null(data);
    assert_int_equal(fread(data, 1, *size, f), *size);
    fclose(f);
    return data;
}

static void write_all(const char *path, const void *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, size, f), size);
    fclose(f);
}

/* Opens a context on `dir`, which must not have loaded; runs a shader; leaves a good file. */
static void expect_ignored(const char *dir, const char *what)
{
    struct gpu_context *ctx = create_in(dir);
    struct gpu_pipeline_cache_info info;
    gpu_pipeline_cache_info(ctx, &info);
    if (info.loaded)
        fail_msg("a %s cache file was loaded", what);
    build_some_pipelines(ctx);
    CHECK(gpu_selftest(ctx));
    gpu_context_destroy(ctx);
    /* and the file was replaced by a good one */
    ctx = create_in(dir);
    gpu_pipeline_cache_info(ctx, &info);
    if (!info.loaded)
        fail_msg("the cache was not rewritten after a %s file", what);
    gpu_context_destroy(ctx);
}

#define RACERS 8

struct racer {
    struct gpu_context *ctx;
    pthread_barrier_t *start;
    uint32_t spec; /* racers share a variant in pairs */
    const struct gpu_pipeline *got;
    int status;
};

static void *race(void *arg)
{
    struct racer *r = arg;
    struct gpu_pipeline_desc d = {
        .shader = GPU_SHADER_selftest_saxpy, .spec = &r->spec, .spec_count = 1, .buffer_count = 2, .push_bytes = 8};
    pthread_barrier_wait(r->start);
    r->status = gpu_pipeline_get(r->ctx, &d, &r->got);
    return NULL;
}

/* Threads asking for pipelines at once (nets are created side by side) each get one, a variant
 * asked for twice is kept once, and the pipelines work. */
static void test_variants_built_by_threads(void **state)
{
    (void)state;
    struct gpu_context *ctx = create_in("");
    unsigned count = gpu_pipeline_count(ctx);
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, RACERS);
    struct racer r[RACERS];
    pthread_t t[RACERS];
    for (int i = 0; i < RACERS; i++) {
        r[i] = (struct racer){.ctx = ctx, .start = &start, .spec = 32u << (i / 2)};
        assert_int_equal(pthread_create(&t[i], NULL, race, &r[i]), 0);
    }
    for (int i = 0; i < RACERS; i++)
        pthread_join(t[i], NULL);
    pthread_barrier_destroy(&start);
    for (int i = 0; i < RACERS; i++) {
        if (r[i].status != GPU_OK)
            fail_msg("racer %d: %s", i, gpu_last_error());
        assert_non_null(r[i].got);
        assert_ptr_equal(r[i].got, r[i ^ 1].got);
        if (i >= 2)
            assert_ptr_not_equal(r[i].got, r[i - 2].got);
    }
    assert_int_equal(gpu_pipeline_count(ctx), count + RACERS / 2);
    struct gpu_pipeline_desc d = {.shader = GPU_SHADER_selftest_saxpy,
                                  .spec = &r[RACERS - 1].spec,
                                  .spec_count = 1,
                                  .buffer_count = 2,
                                  .push_bytes = 8};
    const struct gpu_pipeline *again;
    CHECK(gpu_pipeline_get(ctx, &d, &again));
    assert_ptr_equal(again, r[RACERS - 1].got);
    gpu_context_destroy(ctx);
    assert_int_equal(gpu_validation_message_count(), 0);
}

static struct gpu_context *create_prebuilding(const char *dir, int prebuild)
{
    struct gpu_options opt;
    gpu_options_default(&opt);
    opt.cache_dir = dir;
    opt.prebuild = prebuild;
    struct gpu_context *ctx = NULL;
    CHECK(gpu_context_create(&opt, &ctx));
    gpu_pipeline_prebuild_wait(ctx);
    return ctx;
}

static int count_lines(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    int n = 0;
    for (int c; (c = fgetc(f)) != EOF;)
        n += c == '\n';
    fclose(f);
    return n;
}

/* The variants a context's callers used are written beside its cache, and the next context
 * builds them ahead (on its own threads) before anyone asks; a changed set is written again, one
 * unused for 8 runs is dropped, a damaged file or a line of another shader is passed over, and
 * without prebuild nothing is written. */
static void test_variants_built_ahead(void **state)
{
    (void)state;
    char dir[1024], bin[1300], variants[1300];
    fresh_dir("ahead", dir, sizeof dir);
    struct gpu_context *ctx = create_prebuilding(dir, 1);
    assert_int_equal(gpu_pipeline_count(ctx), 0);
    build_some_pipelines(ctx); /* local sizes 16, 32, 64 */
    gpu_context_destroy(ctx);
    cache_file(dir, bin, sizeof bin);
    snprintf(variants, sizeof variants, "%.*s.variants", (int)(strlen(bin) - 4), bin);
    assert_int_equal(count_lines(variants), 1 + 3);
    struct stat first;
    assert_int_equal(stat(variants, &first), 0);

    ctx = create_prebuilding(dir, 1);
    assert_int_equal(gpu_pipeline_count(ctx), 3); /* before anyone asked */
    build_some_pipelines(ctx);
    assert_int_equal(gpu_pipeline_count(ctx), 3);
    CHECK(gpu_selftest(ctx));
    gpu_context_destroy(ctx);
    struct stat second;
    assert_int_equal(stat(variants, &second), 0);
    assert_int_equal(first.st_ino, second.st_ino); /* the same set: left alone */

    /* a new variant is added; those built ahead but not asked for stay listed, one run older */
    ctx = create_prebuilding(dir, 1);
    get_saxpy(ctx, 32);
    get_saxpy(ctx, 128);
    gpu_context_destroy(ctx);
    assert_int_equal(count_lines(variants), 1 + 4);
    ctx = create_prebuilding(dir, 1);
    assert_int_equal(gpu_pipeline_count(ctx), 4);
    get_saxpy(ctx, 128);
    gpu_context_destroy(ctx);
    /* ... until AGE_MAX (8) runs have passed without them */
    for (int run = 0; run < 8; run++) {
        ctx = create_prebuilding(dir, 1);
        get_saxpy(ctx, 128);
        gpu_context_destroy(ctx);
    }
    assert_int_equal(count_lines(variants), 1 + 1);

    /* a line of a shader this program does not have, or has with other SPIR-V: passed over */
    FILE *f = fopen(variants, "a");
    assert_non_null(f);
    fprintf(f, "0 no_such_shader 0123456789abcdef 2 8 0 0 1 40\n");
    fprintf(f, "0 selftest_saxpy 0000000000000000 2 8 0 0 1 100\n");
    fclose(f);
    ctx = create_prebuilding(dir, 1);
    assert_int_equal(gpu_pipeline_count(ctx), 1);
    gpu_context_destroy(ctx);

    /* damaged: ignored as a whole */
    static const char *const damaged[] = {"", "ppocr-vk pipeline variants 1\n",
                                          "ppocr-vk pipeline variants 2\n0 selftest_saxpy zz 2 8 0 0 1 40\n",
                                          "ppocr-vk pipeline variants 2\n0 selftest_saxpy 1 2 8 0 0 40 1\n",
                                          "ppocr-vk pipeline variants 2\n9 selftest_saxpy 1 2 8 0 0 1 40\n"};
    for (size_t k = 0; k < sizeof damaged / sizeof *damaged; k++) {
        write_all(variants, damaged[k], strlen(damaged[k]));
        ctx = create_prebuilding(dir, 1);
        assert_int_equal(gpu_pipeline_count(ctx), 0);
        get_saxpy(ctx, 16);
        gpu_context_destroy(ctx);
        assert_int_equal(count_lines(variants), 1 + 1); /* and written again */
    }

    /* prebuild off: the file is neither read nor written */
    remove(variants);
    ctx = create_prebuilding(dir, 0);
    get_saxpy(ctx, 16);
    gpu_context_destroy(ctx);
    assert_int_equal(count_lines(variants), -1);
    remove_dir(dir);
    assert_int_equal(gpu_validation_message_count(), 0);
}

static void test_bad_cache_files_are_ignored(void **state)
{
    (void)state;
    char dir[1024], path[1300];
    fresh_dir("bad-files", dir, sizeof dir);
    struct gpu_context *ctx = create_in(dir);
    build_some_pipelines(ctx);
    gpu_context_destroy(ctx);
    cache_file(dir, path, sizeof path);
    size_t size;
    unsigned char *good = read_all(path, &size);
    unsigned char *bad = malloc(size + 1);
    assert_non_null(bad);

    write_all(path, "", 0);
    expect_ignored(dir, "empty");

    for (size_t i = 0; i < size; i++)
        bad[i] = (unsigned char)test_rand_u32();
    write_all(path, bad, size);
    expect_ignored(dir, "random");

    write_all(path, good, size / 2);
    expect_ignored(dir, "truncated");

    memcpy(bad, good, size);
    bad[size] = 0;
    write_all(path, bad, size + 1);
    expect_ignored(dir, "too long");

    memcpy(bad, good, size);
    bad[8] ^= 1; /* the device UUID in our header: another GPU's cache */
    write_all(path, bad, size);
    expect_ignored(dir, "foreign");

    memcpy(bad, good, size);
    bad[size - 1] ^= 0x40; /* the driver's data, caught by the checksum */
    write_all(path, bad, size);
    expect_ignored(dir, "corrupt");

    free(good);
    free(bad);
    remove_dir(dir);
    assert_int_equal(gpu_validation_message_count(), 0);
}

int main(int argc, char **argv)
{
    self_path = argv[0];
    if (argc > 1 && strcmp(argv[1], "--child-cache-user") == 0)
        return child_cache_user();
    test_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_second_process_reuses_cache),
        cmocka_unit_test(test_variant_built_once),
        cmocka_unit_test(test_variants_built_by_threads),
        cmocka_unit_test(test_bad_cache_files_are_ignored),
        cmocka_unit_test(test_variants_built_ahead),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
