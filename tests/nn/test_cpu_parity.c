/* The converted nets (models/{det,cls,rec}.pvk) run by the CPU reference executor against
 * onnxruntime on real preprocessed inputs (tests/data/parity, made by
 * tools/ref/make-parity-fixtures.sh). A disagreement here means the converter or the reference
 * ops are wrong; PPOCR_PARITY_DUMP=DIR writes every layer's output for tools/ref/compare_layers.mjs. */
#include <errno.h>
#include <math.h>
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
#include "nn/cpu/ref_ops.h"
#include "support/pvkt.h"
#include "support/test_env.h"

#define PROB_TOL 1e-4

/* Loads models/<net>.pvk; a missing model fails the test (it never skips). */
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

/* With PPOCR_PARITY_DUMP=DIR: every op's output to DIR/<net>/NNNN[_1].pvkt and a line of
 * DIR/<net>/index.tsv (op index, op name, op type, output tensor name, file, shape). */
struct dump {
    char dir[900];
    FILE *index;
    const struct pvk_model *model;
    /* ARGMAX's max value when the net itself ends in ARGMAX */
    int32_t want_max_of;
    float *max_copy;
    size_t max_len;
};

static int on_layer(void *user, int op_index, const struct pvk_op *op, int slot, const struct pvk_shape *shape,
                    enum pvk_dtype dtype, const void *data)
{
    struct dump *d = user;
    size_t n = (size_t)pvk_shape_numel(shape);
    if (op->type == PVK_OP_ARGMAX && slot == 1 && op->outputs[0] == d->want_max_of) {
        free(d->max_copy);
        d->max_copy = malloc(n * sizeof(float));
        if (!d->max_copy)
            return 1;
        memcpy(d->max_copy, data, n * sizeof(float));
        d->max_len = n;
    }
    if (!d->index)
        return 0;
    char file[32], path[1024], dims[128];
    snprintf(file, sizeof file, slot ? "%04d_%d.pvkt" : "%04d.pvkt", op_index, slot);
    snprintf(path, sizeof path, "%s/%s", d->dir, file);
    FILE *f = fopen(path, "wb");
    if (!f)
        return 1;
    uint32_t head[2] = {(uint32_t)dtype, (uint32_t)shape->ndim};
    fwrite("PVKT", 1, 4, f);
    fwrite(head, 4, 2, f);
    fwrite(shape->d, 8, (size_t)shape->ndim, f);
    fwrite(data, 4, n, f);
    fclose(f);
    fprintf(d->index, "%d\t%s\t%s\t%s\t%s\t%s\n", op_index, op->name, pvk_op_type_name((enum pvk_op_type)op->type),
            d->model->tensors[op->outputs[slot]].name, file, pvk_shape_str(shape, dims, sizeof dims));
    return 0;
}

static void dump_open(struct dump *d, const struct pvk_model *m, const char *net)
{
    memset(d, 0, sizeof *d);
    d->model = m;
    d->want_max_of = -1;
    const char *root = getenv("PPOCR_PARITY_DUMP");
    if (!root || !*root)
        return;
    snprintf(d->dir, sizeof d->dir, "%s/%s", root, net);
    mkdir(root, 0755);
    mkdir(d->dir, 0755);
    char path[1024];
    snprintf(path, sizeof path, "%s/index.tsv", d->dir);
    d->index = fopen(path, "w");
    if (!d->index)
        print_message("cannot write %s; no layer dump\n", path);
}

static void dump_close(struct dump *d)
{
    if (d->index)
        fclose(d->index);
    free(d->max_copy);
}

/* Runs `m` on fixture `input` and returns its output (the test fails on an executor error). */
static void run_net(const struct pvk_model *m, const char *net, const char *input, struct pvk_cpu_result *out,
                    struct dump *d)
{
    struct pvkt_tensor in;
    char err[256];
    pvkt_read(input, &in);
    assert_int_equal(in.shape.ndim, 4);
    assert_int_equal(in.dtype, PVK_DTYPE_F32);
    dump_open(d, m, net);
    d->want_max_of = m->output;
    int rc = pvk_cpu_run(m, in.data, in.shape.d, on_layer, d, out, err, sizeof err);
    free(in.data);
    if (rc) {
        print_error("%s: %s\n", net, err);
        fail();
    }
}

static void expect_shape(const struct pvk_shape *got, const struct pvk_shape *want, const char *what)
{
    char a[96], b[96];
    if (!pvk_shape_equal(got, want)) {
        print_error("%s: output %s, onnxruntime %s\n", what, pvk_shape_str(got, a, sizeof a),
                    pvk_shape_str(want, b, sizeof b));
        fail();
    }
}

static void test_det_parity(void **state)
{
    (void)state;
    struct pvk_model m;
    struct pvk_cpu_result out;
    struct pvkt_tensor want;
    struct dump d;
    load_model("det", &m);
    run_net(&m, "det", "det_input.pvkt", &out, &d);
    pvkt_read("det_prob.pvkt", &want);
    assert_int_equal(out.dtype, PVK_DTYPE_F32);
    expect_shape(&out.shape, &want.shape, "det");
    size_t n = (size_t)pvk_shape_numel(&want.shape);
    double err = test_max_abs(out.data, want.data, n);
    char dims[64];
    print_message("det %s: max abs error of the probability map %.3g (tolerance %.0e)\n",
                  pvk_shape_str(&out.shape, dims, sizeof dims), err, PROB_TOL);
    dump_close(&d);
    pvk_cpu_result_free(&out);
    free(want.data);
    pvk_model_free(&m);
    assert_true(err <= PROB_TOL);
}

static void test_cls_parity(void **state)
{
    (void)state;
    struct pvk_model m;
    struct pvk_cpu_result out;
    struct pvkt_tensor want;
    struct dump d;
    load_model("cls", &m);
    run_net(&m, "cls", "cls_input.pvkt", &out, &d);
    pvkt_read("cls_prob.pvkt", &want);
    assert_int_equal(out.dtype, PVK_DTYPE_F32);
    expect_shape(&out.shape, &want.shape, "cls");
    int64_t rows = want.shape.d[0], c = want.shape.d[1];
    int32_t got_label[8], want_label[8];
    assert_true(rows <= 8);
    ref_argmax(out.data, rows, c, got_label, NULL);
    ref_argmax(want.data, rows, c, want_label, NULL);
    double err = test_max_abs(out.data, want.data, (size_t)(rows * c));
    print_message("cls: max abs error of the probabilities %.3g (tolerance %.0e)\n", err, PROB_TOL);
    for (int64_t r = 0; r < rows; r++) {
        print_message("cls crop %lld: label %d (onnxruntime %d)\n", (long long)r, got_label[r], want_label[r]);
        assert_int_equal(got_label[r], want_label[r]);
    }
    dump_close(&d);
    pvk_cpu_result_free(&out);
    free(want.data);
    pvk_model_free(&m);
    assert_true(err <= PROB_TOL);
}

/* rec: the argmax sequence per crop identical, its max probabilities within PROB_TOL. */
static void rec_parity(const char *batch)
{
    struct pvk_model m;
    struct pvk_cpu_result out;
    struct pvkt_tensor want_idx, want_max;
    struct dump d;
    char name[64];
    load_model("rec", &m);
    snprintf(name, sizeof name, "%s_input.pvkt", batch);
    run_net(&m, "rec", name, &out, &d);
    snprintf(name, sizeof name, "%s_index.pvkt", batch);
    pvkt_read(name, &want_idx);
    snprintf(name, sizeof name, "%s_max.pvkt", batch);
    pvkt_read(name, &want_max);
    size_t rows = (size_t)pvk_shape_numel(&want_idx.shape);
    int32_t *idx = malloc(rows * sizeof *idx);
    float *mx = malloc(rows * sizeof *mx);
    assert_non_null(idx);
    assert_non_null(mx);
    if (out.dtype == PVK_DTYPE_F32) { /* softmax [N, T, classes] */
        struct pvk_shape lead = out.shape;
        lead.ndim--;
        expect_shape(&lead, &want_idx.shape, batch);
        ref_argmax(out.data, (int64_t)rows, out.shape.d[out.shape.ndim - 1], idx, mx);
    } else { /* the converter ended the net with ARGMAX: the index is the output, the max comes via the callback */
        expect_shape(&out.shape, &want_idx.shape, batch);
        assert_non_null(d.max_copy);
        assert_int_equal(d.max_len, rows);
        memcpy(idx, out.data, rows * sizeof *idx);
        memcpy(mx, d.max_copy, rows * sizeof *mx);
    }
    const int32_t *wi = want_idx.data;
    size_t mismatched = 0;
    for (size_t i = 0; i < rows; i++)
        if (idx[i] != wi[i]) {
            if (mismatched++ < 5)
                print_error("%s: step %zu: class %d, onnxruntime %d\n", batch, i, idx[i], wi[i]);
        }
    double err = test_max_abs(mx, want_max.data, rows);
    print_message("rec %s: %zu steps, %zu argmax mismatches, max abs error of the max prob %.3g (tolerance %.0e)\n",
                  batch, rows, mismatched, err, PROB_TOL);
    free(idx);
    free(mx);
    free(want_idx.data);
    free(want_max.data);
    dump_close(&d);
    pvk_cpu_result_free(&out);
    pvk_model_free(&m);
    assert_int_equal(mismatched, 0);
    assert_true(err <= PROB_TOL);
}

static void test_rec_parity_wide_line(void **state)
{
    (void)state;
    rec_parity("rec_a");
}

static void test_rec_parity_batch_of_two(void **state)
{
    (void)state;
    rec_parity("rec_b");
}

int main(void)
{
    test_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_det_parity),
        cmocka_unit_test(test_cls_parity),
        cmocka_unit_test(test_rec_parity_wide_line),
        cmocka_unit_test(test_rec_parity_batch_of_two),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
