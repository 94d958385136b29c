/* The CPU executor's contract on the real converted nets: the layer callback sees every op once, in
 * order, with the shapes shape inference predicts; a callback can stop the run cleanly; bad input
 * shapes give a one-line error; intermediates are freed (peak well below the sum of all
 * activations); runs are deterministic. Parity itself is test_cpu_parity. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "model/model.h"
#include "nn/cpu/cpu_exec.h"
#include "support/test_env.h"

static void load_model(const char *net, struct pvk_model *m)
{
    char path[1024], err[256];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s.pvk", test_models_dir(), net);
    if (stat(path, &st) != 0) {
        print_error("%s is missing: run tools/fetch-models.sh (or set PPOCR_MODELS)\n", path);
        fail();
    }
    if (pvk_model_load(path, m, err, sizeof err)) {
        print_error("%s: %s\n", path, err);
        fail();
    }
}

/* A real input of the given shape: uniform noise in the normalised pixel range. */
static float *noise_input(const int64_t *s)
{
    size_t n = (size_t)(s[0] * s[1] * s[2] * s[3]);
    float *x = malloc(n * sizeof *x);
    assert_non_null(x);
    test_fill_uniform(x, n, -1, 1);
    return x;
}

struct trace {
    const struct pvk_model *model;
    const struct pvk_shape *expected;
    int next_op;
    int stop_at;
    int bad;
    void *last_output; /* copy of the data of the op writing the net output */
    size_t last_len;
};

static int on_layer(void *user, int op_index, const struct pvk_op *op, int slot, const struct pvk_shape *shape,
                    enum pvk_dtype dtype, const void *data)
{
    struct trace *t = user;
    char a[96], b[96];
    if (slot == 0) {
        if (op_index != t->next_op || op != &t->model->ops[op_index]) {
            print_error("callback for op %d, expected op %d\n", op_index, t->next_op);
            t->bad = 1;
        }
        t->next_op = op_index + 1;
    }
    const struct pvk_shape *want = &t->expected[op->outputs[slot]];
    if (!pvk_shape_equal(shape, want)) {
        print_error("op %d slot %d: shape %s, inference says %s\n", op_index, slot, pvk_shape_str(shape, a, sizeof a),
                    pvk_shape_str(want, b, sizeof b));
        t->bad = 1;
    }
    enum pvk_dtype want_dtype = op->type == PVK_OP_ARGMAX && slot == 0 ? PVK_DTYPE_I32 : PVK_DTYPE_F32;
    if (dtype != want_dtype) {
        print_error("op %d slot %d: dtype %d, expected %d\n", op_index, slot, dtype, want_dtype);
        t->bad = 1;
    }
    if (op->outputs[slot] == t->model->output) {
        t->last_len = (size_t)pvk_shape_numel(shape) * 4;
        free(t->last_output);
        t->last_output = malloc(t->last_len);
        if (t->last_output)
            memcpy(t->last_output, data, t->last_len);
    }
    return op_index == t->stop_at;
}

static void test_callback_sees_every_op_in_order(void **state)
{
    (void)state;
    struct pvk_model m;
    char err[256];
    load_model("rec", &m);
    const int64_t in[4] = {2, 3, 48, 200};
    struct pvk_shape *shapes = calloc(m.n_tensors, sizeof *shapes);
    assert_non_null(shapes);
    if (pvk_infer_shapes(&m, in, shapes, err, sizeof err)) {
        print_error("%s\n", err);
        fail();
    }
    float *x = noise_input(in);
    struct trace t = {&m, shapes, 0, -1, 0, NULL, 0};
    struct pvk_cpu_result out;
    if (pvk_cpu_run(&m, x, in, on_layer, &t, &out, err, sizeof err)) {
        print_error("%s\n", err);
        fail();
    }
    assert_false(t.bad);
    assert_int_equal(t.next_op, (int)m.n_ops);
    assert_true(pvk_shape_equal(&out.shape, &shapes[m.output]));
    /* what the callback saw of the output layer is what the run returns */
    assert_non_null(t.last_output);
    assert_int_equal(t.last_len, (size_t)pvk_shape_numel(&out.shape) * 4);
    assert_memory_equal(t.last_output, out.data, t.last_len);
    free(t.last_output);
    pvk_cpu_result_free(&out);
    free(x);
    free(shapes);
    pvk_model_free(&m);
}

static void test_callback_can_stop_the_run(void **state)
{
    (void)state;
    struct pvk_model m;
    char err[256] = "", want[32];
    load_model("cls", &m);
    const int64_t in[4] = {1, 3, 48, 192};
    struct pvk_shape *shapes = calloc(m.n_tensors, sizeof *shapes);
    assert_non_null(shapes);
    assert_int_equal(pvk_infer_shapes(&m, in, shapes, err, sizeof err), 0);
    float *x = noise_input(in);
    int stop = (int)m.n_ops / 2;
    struct trace t = {&m, shapes, 0, stop, 0, NULL, 0};
    struct pvk_cpu_result out;
    assert_int_equal(pvk_cpu_run(&m, x, in, on_layer, &t, &out, err, sizeof err), -1);
    print_message("stopped as asked: %s\n", err);
    snprintf(want, sizeof want, "op %d (", stop);
    assert_non_null(strstr(err, want));
    assert_non_null(strstr(err, "stopped"));
    assert_null(out.data);
    assert_int_equal(t.next_op, stop + 1);
    free(t.last_output);
    free(x);
    free(shapes);
    pvk_model_free(&m);
}

static void test_bad_input_shape_is_a_clean_error(void **state)
{
    (void)state;
    struct pvk_model m;
    char err[256] = "";
    load_model("det", &m);
    const int64_t in[4] = {1, 4, 64, 64};
    float *x = noise_input(in);
    struct pvk_cpu_result out;
    assert_int_equal(pvk_cpu_run(&m, x, in, NULL, NULL, &out, err, sizeof err), -1);
    print_message("as expected: %s\n", err);
    assert_non_null(strstr(err, "[1, 4, 64, 64]"));
    assert_null(strchr(err, '\n'));
    free(x);
    pvk_model_free(&m);
}

static void test_intermediates_are_freed(void **state)
{
    (void)state;
    struct pvk_model m;
    char err[256];
    load_model("det", &m);
    const int64_t in[4] = {1, 3, 128, 160};
    struct pvk_shape *shapes = calloc(m.n_tensors, sizeof *shapes);
    assert_non_null(shapes);
    assert_int_equal(pvk_infer_shapes(&m, in, shapes, err, sizeof err), 0);
    size_t total = 0;
    for (uint32_t i = 0; i < m.n_tensors; i++)
        if (m.tensors[i].kind == PVK_TENSOR_ACTIVATION && (int32_t)i != m.input)
            total += (size_t)pvk_shape_numel(&shapes[i]) * 4;
    float *x = noise_input(in);
    struct pvk_cpu_result out;
    if (pvk_cpu_run(&m, x, in, NULL, NULL, &out, err, sizeof err)) {
        print_error("%s\n", err);
        fail();
    }
    print_message("det 128x160: peak %zu KiB of activations held, %zu KiB in all\n", out.peak_bytes >> 10, total >> 10);
    assert_true(out.peak_bytes > 0);
    assert_true(out.peak_bytes * 4 < total);
    pvk_cpu_result_free(&out);
    free(x);
    free(shapes);
    pvk_model_free(&m);
}

static void test_runs_are_deterministic(void **state)
{
    (void)state;
    struct pvk_model m;
    char err[256];
    load_model("det", &m);
    const int64_t in[4] = {1, 3, 96, 64};
    float *x = noise_input(in);
    struct pvk_cpu_result a, b;
    assert_int_equal(pvk_cpu_run(&m, x, in, NULL, NULL, &a, err, sizeof err), 0);
    assert_int_equal(pvk_cpu_run(&m, x, in, NULL, NULL, &b, err, sizeof err), 0);
    assert_true(pvk_shape_equal(&a.shape, &b.shape));
    assert_memory_equal(a.data, b.data, (size_t)pvk_shape_numel(&a.shape) * 4);
    pvk_cpu_result_free(&a);
    pvk_cpu_result_free(&b);
    free(x);
    pvk_model_free(&m);
}

int main(void)
{
    test_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_callback_sees_every_op_in_order),
        cmocka_unit_test(test_callback_can_stop_the_run),
        cmocka_unit_test(test_bad_input_shape_is_a_clean_error),
        cmocka_unit_test(test_intermediates_are_freed),
        cmocka_unit_test(test_runs_are_deterministic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
