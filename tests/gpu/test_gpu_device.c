/* Device choice, capabilities, the device list, the self-check, and failing cleanly: without
 * any Vulkan driver, and (as proof the oracle works) on a deliberate validation error. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gpu/context.h"
#include "gpu/error.h"
#include "gpu/selftest.h"
#include "gpu/validation.h"

static bool power_of_two(uint64_t x)
{
    return x && !(x & (x - 1));
}

static struct gpu_context *create_default(void)
{
    struct gpu_context *ctx = NULL;
    int st = gpu_context_create(NULL, &ctx);
    if (st)
        fail_msg("gpu_context_create: %s", gpu_last_error());
    return ctx;
}

static void test_caps_are_sane(void **state)
{
    (void)state;
    struct gpu_context *ctx = create_default();
    const struct gpu_caps *c = gpu_context_caps(ctx);
    assert_true(c->device_name[0] != 0);
    assert_true(c->api_version >= VK_API_VERSION_1_1);
    assert_true(c->subgroup_size >= 1 && power_of_two(c->subgroup_size));
    assert_true(c->subgroup_ops & VK_SUBGROUP_FEATURE_BASIC_BIT);
    assert_true(c->max_storage_buffer_range >= (1u << 27)); /* Vulkan's minimum */
    assert_true(power_of_two(c->min_storage_buffer_offset_alignment));
    assert_true(c->min_storage_buffer_offset_alignment <= 256);
    assert_true(c->max_workgroup_invocations >= 128);
    assert_true(c->max_workgroup_size[0] >= 128);
    assert_true(c->max_shared_memory >= 16384);
    assert_true(c->max_push_constants >= 128);
    assert_true(c->memory.memoryTypeCount > 0 && c->memory.memoryHeapCount > 0);
    assert_true(c->device_local_bytes > 0);
    assert_true(c->min_subgroup_size <= c->subgroup_size && c->subgroup_size <= c->max_subgroup_size);
    if (c->timestamps)
        assert_true(c->timestamp_period > 0 && c->timestamp_valid_bits > 0);
    assert_true(c->coopmat_shape_count <= 16);
    if (c->coopmat_shape_count)
        assert_true(c->coopmat_khr || c->coopmat_nv);
    int uuid_nonzero = 0;
    for (unsigned i = 0; i < VK_UUID_SIZE; i++)
        uuid_nonzero |= c->device_uuid[i];
    assert_true(uuid_nonzero);
    assert_int_equal(c->is_cpu, c->kind == GPU_DEVICE_CPU);
    if (c->is_cpu)
        assert_false(gpu_prefers_fp16(ctx));
    if (gpu_prefers_fp16(ctx))
        assert_true(c->storage_16bit && c->shader_fp16);
    fprintf(stderr,
            "device: %s (%s), driver %s %s, subgroup %u, fp16 %d, 16-bit storage %d, "
            "push descriptors %d, unified memory %d, timestamps %d\n",
            c->device_name, gpu_device_kind_name(c->kind), c->driver_name, c->driver_info, c->subgroup_size,
            c->shader_fp16, c->storage_16bit, c->push_descriptors, c->unified_memory, c->timestamps);
    gpu_context_destroy(ctx);
    assert_int_equal(gpu_validation_message_count(), 0);
}

static void test_force_fp32_hides_fp16(void **state)
{
    (void)state;
    setenv("PPOCR_VK_FORCE_FP32", "1", 1);
    struct gpu_context *ctx = create_default();
    unsetenv("PPOCR_VK_FORCE_FP32");
    assert_false(gpu_context_caps(ctx)->shader_fp16);
    assert_false(gpu_context_caps(ctx)->storage_16bit);
    assert_false(gpu_prefers_fp16(ctx));
    gpu_context_destroy(ctx);

    struct gpu_options opt;
    gpu_options_default(&opt);
    opt.force_fp32 = true;
    assert_int_equal(gpu_context_create(&opt, &ctx), GPU_OK);
    assert_false(gpu_context_caps(ctx)->shader_fp16);
    assert_false(gpu_prefers_fp16(ctx));
    gpu_context_destroy(ctx);
    assert_int_equal(gpu_validation_message_count(), 0);
}

static void test_list_devices(void **state)
{
    (void)state;
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    assert_non_null(f);
    int n = gpu_list_devices(f);
    fclose(f);
    if (n < 0)
        fail_msg("gpu_list_devices: %s", gpu_last_error());
    assert_true(n >= 1);
    fprintf(stderr, "%s", text);
    /* one line per device, numbered from 0, naming type and memory */
    int lines = 0;
    for (char *line = text, *end; *line; line = end + 1, lines++) {
        end = strchr(line, '\n');
        assert_non_null(end);
        char prefix[16];
        snprintf(prefix, sizeof prefix, "%d: ", lines);
        assert_memory_equal(line, prefix, strlen(prefix));
        *end = 0;
        assert_non_null(strstr(line, "MiB device-local"));
        assert_true(strstr(line, "(cpu)") || strstr(line, "(discrete)") || strstr(line, "(integrated)") ||
                    strstr(line, "(virtual)") || strstr(line, "(other)"));
    }
    assert_int_equal(lines, n);
    free(text);
    assert_int_equal(gpu_validation_message_count(), 0);
}

static void test_device_index(void **state)
{
    (void)state;
    FILE *null = fopen("/dev/null", "w");
    int n = gpu_list_devices(null);
    fclose(null);
    assert_true(n >= 1);

    struct gpu_options opt;
    gpu_options_default(&opt);
    opt.device_index = n - 1;
    struct gpu_context *ctx = NULL;
    assert_int_equal(gpu_context_create(&opt, &ctx), GPU_OK);
    gpu_context_destroy(ctx);

    opt.device_index = n;
    assert_int_equal(gpu_context_create(&opt, &ctx), GPU_ERR_NO_DEVICE);
    assert_null(ctx);
    /* the count in words that agree with it: "there is only 1 device", "there are only 2 devices" */
    char count[64];
    if (n == 1)
        snprintf(count, sizeof count, "there is only 1 device, number 0");
    else
        snprintf(count, sizeof count, "there are only %d devices, numbered 0 to %d", n, n - 1);
    if (!strstr(gpu_last_error(), count))
        fail_msg("'%s' does not say '%s'", gpu_last_error(), count);
    assert_null(strchr(gpu_last_error(), '\n'));
    assert_int_equal(gpu_validation_message_count(), 0);
}

static void test_selftest(void **state)
{
    (void)state;
    struct gpu_context *ctx = create_default();
    int st = gpu_selftest(ctx);
    if (st)
        fail_msg("gpu_selftest: %s", gpu_last_error());
    gpu_context_destroy(ctx);
    assert_int_equal(gpu_validation_message_count(), 0);
}

/* --- child processes -------------------------------------------------------------------------*/

static const char *self_path;

/* Runs this program with `mode` and extra environment; returns its wait status and stderr. */
static int run_child(const char *mode, const char *const *env, char *err, size_t err_size)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(fds[1], 2);
        close(fds[0]);
        close(fds[1]);
        for (; env && *env; env += 2)
            setenv(env[0], env[1], 1);
        execl(self_path, self_path, mode, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    size_t used = 0;
    ssize_t got;
    while ((got = read(fds[0], err + used, err_size - 1 - used)) > 0)
        used += (size_t)got;
    err[used] = 0;
    close(fds[0]);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return status;
}

#define NO_DRIVER_EXIT 3
#define ERROR_TAG "context error: "

static int child_without_driver(void)
{
    struct gpu_context *ctx;
    int st = gpu_context_create(NULL, &ctx);
    if (st == GPU_OK) {
        gpu_context_destroy(ctx);
        return 0;
    }
    fprintf(stderr, ERROR_TAG "%s\n", gpu_last_error());
    return NO_DRIVER_EXIT;
}

static void test_no_driver_fails_cleanly(void **state)
{
    (void)state;
    static const char *const env[] = {"VK_ICD_FILENAMES", "/dev/null", "VK_DRIVER_FILES", "/dev/null", NULL};
    char err[8192];
    int status = run_child("--child-no-driver", env, err, sizeof err);
    fprintf(stderr, "child stderr: %s", err);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), NO_DRIVER_EXIT);
    const char *line = strstr(err, ERROR_TAG);
    assert_non_null(line);
    line += strlen(ERROR_TAG);
    const char *end = strchr(line, '\n');
    assert_non_null(end);
    assert_true(end - line > 10); /* a reason, not an empty line */
    assert_int_equal(gpu_validation_message_count(), 0);
}

/* Validation asked for but the layer cannot be found: an error, never a silent run without it. */
static void test_missing_layer_is_an_error(void **state)
{
    (void)state;
    static const char *const env[] = {"VK_LAYER_PATH",
                                      "/nonexistent",
                                      "VK_ADD_LAYER_PATH",
                                      "/nonexistent",
                                      "XDG_DATA_DIRS",
                                      "/nonexistent",
                                      "XDG_DATA_HOME",
                                      "/nonexistent",
                                      "XDG_CONFIG_DIRS",
                                      "/nonexistent",
                                      "PPOCR_VK_VALIDATE",
                                      "1",
                                      NULL};
    char err[8192];
    int status = run_child("--child-no-driver", env, err, sizeof err);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), NO_DRIVER_EXIT);
    assert_non_null(strstr(err, ERROR_TAG "validation was requested"));
    assert_non_null(strstr(err, "VK_LAYER_KHRONOS_validation is not installed"));
    assert_int_equal(gpu_validation_message_count(), 0);
}

/* Creating a zero-sized buffer is invalid: the layer must catch it and fail the process. */
static int child_with_validation_error(void)
{
    struct gpu_options opt;
    gpu_options_default(&opt);
    opt.validate = 1;
    opt.cache_dir = "";
    struct gpu_context *ctx;
    if (gpu_context_create(&opt, &ctx) != GPU_OK) {
        fprintf(stderr, "%s\n", gpu_last_error());
        return 2;
    }
    VkBufferCreateInfo bi = {
        .sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, .size = 0, .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT};
    VkBuffer b = VK_NULL_HANDLE;
    if (vkCreateBuffer(gpu_context_device(ctx), &bi, NULL, &b) == VK_SUCCESS && b)
        vkDestroyBuffer(gpu_context_device(ctx), b, NULL);
    unsigned seen = gpu_validation_message_count();
    gpu_context_destroy(ctx);
    fprintf(stderr, "messages seen: %u\n", seen);
    return seen > 0 ? 0 : 1; /* the exit hook must turn 0 into 86 */
}

static void test_validation_error_fails_process(void **state)
{
    (void)state;
    char err[16384];
    int status = run_child("--child-validation-error", NULL, err, sizeof err);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 86);
    assert_non_null(strstr(err, "vulkan error: "));
    assert_non_null(strstr(err, "messages seen: "));
    assert_int_equal(gpu_validation_message_count(), 0);
}

int main(int argc, char **argv)
{
    self_path = argv[0];
    if (argc > 1 && strcmp(argv[1], "--child-no-driver") == 0)
        return child_without_driver();
    if (argc > 1 && strcmp(argv[1], "--child-validation-error") == 0)
        return child_with_validation_error();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_caps_are_sane),
        cmocka_unit_test(test_force_fp32_hides_fp16),
        cmocka_unit_test(test_list_devices),
        cmocka_unit_test(test_device_index),
        cmocka_unit_test(test_selftest),
        cmocka_unit_test(test_no_driver_fails_cleanly),
        cmocka_unit_test(test_missing_layer_is_an_error),
        cmocka_unit_test(test_validation_error_fails_process),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
