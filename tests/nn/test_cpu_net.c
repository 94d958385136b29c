/* The oneDNN executor (nn/cpu/cpu_net.h) on the real det, cls and rec nets (models/, or
 * PPOCR_MODELS; skipped with a message when they are absent, or where the build has no CPU
 * executor): against the reference executor on random inputs at small sizes with batches (the
 * first op whose output differs is named, from a plan that keeps every intermediate), and
 * against onnxruntime on the real inputs of tests/data/parity, as test_cpu_parity checks the
 * reference. Plans share one NaN-poisoned workspace run after run, and liveness must share it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "nn/cpu/cpu_exec.h"
#include "nn/cpu/cpu_net.h"
#include "support/pvkt.h"
#include "support/test_env.h"
#include "support/test_model.h"

#define NET_TOL 1e-4  /* rel-L2 of a whole net against the reference (the GPU planner's fp32 bound) */
#define PROB_TOL 1e-4 /* against onnxruntime, as test_cpu_parity */

static struct cpu_net *make_net(const struct pvk_model *m, int threads)
{
    struct cpu_net *net;
    struct cpu_net_options opt = {threads};
    char err[256];
    if (cpu_net_create(m, &opt, &net, err, sizeof err)) {
        print_error("%s\n", err);
        fail();
    }
    return net;
}

static struct cpu_plan *make_plan(struct cpu_net *net, const int64_t shape[4], const struct cpu_plan_options *opt)
{
    struct cpu_plan *plan;
    char err[512];
    if (cpu_net_plan(net, shape, opt, &plan, err, sizeof err)) {
        print_error("%s\n", err);
        fail();
    }
    return plan;
}

static void run_plan(struct cpu_plan *plan, const float *x, void *ws)
{
    char err[512];
    if (cpu_plan_run(plan, x, ws, err, sizeof err)) {
        print_error("%s\n", err);
        fail();
    }
}

/* Every op's output as the reference computed it. */
struct layers {
    float **out;
};

static int keep_layer(void *user, int op_index, const struct pvk_op *op, int slot, const struct pvk_shape *shape,
                      enum pvk_dtype dtype, const void *data)
{
    (void)op_index;
    struct layers *l = user;
    int32_t id = op->outputs[slot];
    if (id < 0 || dtype != PVK_DTYPE_F32)
        return 0;
    size_t n = (size_t)pvk_shape_numel(shape);
    if (!(l->out[id] = malloc(n * sizeof(float))))
        return 1;
    memcpy(l->out[id], data, n * sizeof(float));
    return 0;
}

/* The first op whose output leaves the reference, from a keep_all plan. */
static void name_first_difference(const struct pvk_model *m, struct cpu_net *net, const int64_t shape[4],
                                  const float *x, const struct layers *ref)
{
    struct cpu_plan_options opt = {.keep_all = true};
    struct cpu_plan *plan = make_plan(net, shape, &opt);
    run_plan(plan, x, NULL);
    struct pvk_shape *shapes = calloc(m->n_tensors, sizeof *shapes);
    char err[256];
    assert_non_null(shapes);
    assert_int_equal(pvk_infer_shapes(m, shape, shapes, err, sizeof err), 0);
    for (uint32_t k = 0; k < m->n_ops; k++) {
        int32_t id = m->ops[k].outputs[0];
        size_t n = (size_t)pvk_shape_numel(&shapes[id]);
        float *got = malloc(n * sizeof(float));
        assert_non_null(got);
        if (ref->out[id] && !cpu_plan_read_tensor(plan, id, got, err, sizeof err)) {
            double rel = test_rel_l2(got, ref->out[id], n);
            if (rel > NET_TOL) {
                print_error("first difference: op %u (%s, %s): rel-L2 %.3g\n", k, m->ops[k].name,
                            pvk_op_type_name((enum pvk_op_type)m->ops[k].type), rel);
                free(got);
                break;
            }
        }
        free(got);
    }
    free(shapes);
    cpu_plan_destroy(plan);
}

/* `net` at `shape` on random input in the net's value range: the executor against the reference. */
static void check_against_reference(const char *file, const int64_t shape[4], int threads)
{
    struct pvk_model m;
    if (!test_load_cpu_model(file, &m))
        skip();
    size_t n_in = (size_t)(shape[0] * shape[1] * shape[2] * shape[3]);
    float *x = malloc(n_in * sizeof *x);
    assert_non_null(x);
    const float range = m.net_kind == PVK_NET_DET ? 2.0f : 1.0f;
    test_fill_uniform(x, n_in, -range, range);
    struct layers ref = {calloc(m.n_tensors, sizeof(float *))};
    assert_non_null(ref.out);
    struct pvk_cpu_result want;
    char err[512];
    if (pvk_cpu_run(&m, x, shape, keep_layer, &ref, &want, err, sizeof err)) {
        print_error("reference: %s\n", err);
        fail();
    }
    struct cpu_net *net = make_net(&m, threads);
    struct cpu_plan *plan = make_plan(net, shape, NULL);
    run_plan(plan, x, NULL);
    assert_true(pvk_shape_equal(cpu_plan_output_shape(plan), &want.shape));
    double rel = test_rel_l2(cpu_plan_output(plan), want.data, (size_t)pvk_shape_numel(&want.shape));
    char dims[64];
    print_message("%s %s, %d thread(s): rel-L2 %.3g against the reference; workspace %.2f MB of %.2f MB unshared, "
                  "%d reference-kernel steps\n",
                  file, pvk_shape_str(cpu_plan_input_shape(plan), dims, sizeof dims), threads, rel,
                  (double)cpu_plan_workspace_bytes(plan) / 1e6, (double)cpu_plan_unshared_bytes(plan) / 1e6,
                  cpu_plan_reference_steps(plan));
    if (rel > NET_TOL)
        name_first_difference(&m, net, shape, x, &ref);
    assert_true(rel <= NET_TOL);
    /* liveness shares the workspace: far less than every intermediate side by side */
    assert_true(cpu_plan_workspace_bytes(plan) * 2 < cpu_plan_unshared_bytes(plan));
    assert_int_equal(cpu_plan_reference_steps(plan), 0);
    for (uint32_t i = 0; i < m.n_tensors; i++)
        free(ref.out[i]);
    free(ref.out);
    cpu_plan_destroy(plan);
    cpu_net_destroy(net);
    pvk_cpu_result_free(&want);
    pvk_model_free(&m);
    free(x);
}

static void test_det(void **state)
{
    (void)state;
    check_against_reference("det", (int64_t[]){2, 3, 64, 96}, 1);
}

static void test_cls(void **state)
{
    (void)state;
    check_against_reference("cls", (int64_t[]){3, 3, 48, 192}, 2);
}

static void test_rec(void **state)
{
    (void)state;
    check_against_reference("rec", (int64_t[]){2, 3, 48, 88}, 1);
}

/* det and two rec plans take turns on one workspace poisoned with NaN before the first run: each
 * binds it again and writes before it reads, and gives what it gives on a workspace of its own. */
static void test_shared_workspace(void **state)
{
    (void)state;
    struct pvk_model det, rec;
    if (!test_load_cpu_model("det", &det))
        skip();
    if (!test_load_cpu_model("rec", &rec)) {
        pvk_model_free(&det);
        skip();
    }
    const int64_t ds[4] = {1, 3, 64, 64}, r1[4] = {1, 3, 48, 96}, r2[4] = {3, 3, 48, 64};
    struct cpu_net *dn = make_net(&det, 1), *rn = make_net(&rec, 1);
    struct cpu_plan *plans[3] = {make_plan(dn, ds, NULL), make_plan(rn, r1, NULL), make_plan(rn, r2, NULL)};
    const int64_t *shapes[3] = {ds, r1, r2};
    size_t ws_bytes = 0;
    float *inputs[3], *alone[3];
    for (int i = 0; i < 3; i++) {
        if (cpu_plan_workspace_bytes(plans[i]) > ws_bytes)
            ws_bytes = cpu_plan_workspace_bytes(plans[i]);
        size_t n = (size_t)(shapes[i][0] * shapes[i][1] * shapes[i][2] * shapes[i][3]);
        inputs[i] = malloc(n * sizeof(float));
        assert_non_null(inputs[i]);
        test_fill_uniform(inputs[i], n, -1, 1);
        run_plan(plans[i], inputs[i], NULL);
        size_t n_out = (size_t)pvk_shape_numel(cpu_plan_output_shape(plans[i]));
        alone[i] = malloc(n_out * sizeof(float));
        assert_non_null(alone[i]);
        memcpy(alone[i], cpu_plan_output(plans[i]), n_out * sizeof(float));
    }
    float *ws = aligned_alloc(CPU_PLAN_WORKSPACE_ALIGN, (ws_bytes + 63) / 64 * 64);
    assert_non_null(ws);
    test_fill_nan(ws, ws_bytes / sizeof(float));
    for (int round = 0; round < 2; round++)
        for (int i = 0; i < 3; i++) {
            run_plan(plans[i], inputs[i], ws);
            size_t n = (size_t)pvk_shape_numel(cpu_plan_output_shape(plans[i]));
            double rel = test_rel_l2(cpu_plan_output(plans[i]), alone[i], n);
            if (rel > 1e-6) {
                print_error("plan %d, round %d on the shared workspace: rel-L2 %.3g from its run alone\n", i, round,
                            rel);
                fail();
            }
        }
    for (int i = 0; i < 3; i++) {
        cpu_plan_destroy(plans[i]);
        free(inputs[i]);
        free(alone[i]);
    }
    free(ws);
    cpu_net_destroy(dn);
    cpu_net_destroy(rn);
    pvk_model_free(&det);
    pvk_model_free(&rec);
}

/* ---- onnxruntime's answers on real inputs -------------------------------------------------- */

static struct cpu_plan *run_fixture(struct cpu_net *net, const char *input, const struct cpu_plan_options *opt)
{
    struct pvkt_tensor in;
    pvkt_read(input, &in);
    assert_int_equal(in.shape.ndim, 4);
    struct cpu_plan *plan = make_plan(net, in.shape.d, opt);
    run_plan(plan, in.data, NULL);
    free(in.data);
    return plan;
}

static void test_det_against_onnxruntime(void **state)
{
    (void)state;
    struct pvk_model m;
    if (!test_load_cpu_model("det", &m))
        skip();
    struct cpu_net *net = make_net(&m, 1);
    struct cpu_plan *plan = run_fixture(net, "det_input.pvkt", NULL);
    struct pvkt_tensor want;
    pvkt_read("det_prob.pvkt", &want);
    assert_true(pvk_shape_equal(cpu_plan_output_shape(plan), &want.shape));
    double err = test_max_abs(cpu_plan_output(plan), want.data, (size_t)pvk_shape_numel(&want.shape));
    print_message("det: max abs error of the probability map against onnxruntime %.3g (tolerance %.0e)\n", err,
                  PROB_TOL);
    assert_true(err <= PROB_TOL);
    free(want.data);
    cpu_plan_destroy(plan);
    cpu_net_destroy(net);
    pvk_model_free(&m);
}

static void test_cls_against_onnxruntime(void **state)
{
    (void)state;
    struct pvk_model m;
    if (!test_load_cpu_model("cls", &m))
        skip();
    struct cpu_net *net = make_net(&m, 1);
    struct cpu_plan *plan = run_fixture(net, "cls_input.pvkt", NULL);
    struct pvkt_tensor want;
    pvkt_read("cls_prob.pvkt", &want);
    assert_true(pvk_shape_equal(cpu_plan_output_shape(plan), &want.shape));
    const float *got = cpu_plan_output(plan), *w = want.data;
    double err = test_max_abs(got, w, (size_t)pvk_shape_numel(&want.shape));
    print_message("cls: max abs error of the probabilities against onnxruntime %.3g\n", err);
    for (int64_t r = 0; r < want.shape.d[0]; r++)
        assert_int_equal(got[2 * r] > got[2 * r + 1], w[2 * r] > w[2 * r + 1]);
    assert_true(err <= PROB_TOL);
    free(want.data);
    cpu_plan_destroy(plan);
    cpu_net_destroy(net);
    pvk_model_free(&m);
}

/* rec planned without its final softmax (as the session asks for an argmax): the class of every
 * time step as onnxruntime's, its probability within PROB_TOL. */
static void rec_against_onnxruntime(const char *batch)
{
    struct pvk_model m;
    if (!test_load_cpu_model("rec", &m))
        skip();
    struct cpu_net *net = make_net(&m, 1);
    char name[64];
    snprintf(name, sizeof name, "%s_input.pvkt", batch);
    struct cpu_plan_options opt = {.leave_final_softmax = true};
    struct cpu_plan *plan = run_fixture(net, name, &opt);
    struct pvkt_tensor want_idx, want_max;
    snprintf(name, sizeof name, "%s_index.pvkt", batch);
    pvkt_read(name, &want_idx);
    snprintf(name, sizeof name, "%s_max.pvkt", batch);
    pvkt_read(name, &want_max);
    size_t rows = (size_t)pvk_shape_numel(&want_idx.shape);
    const struct pvk_shape *os = cpu_plan_output_shape(plan);
    assert_int_equal((size_t)(pvk_shape_numel(os) / os->d[os->ndim - 1]), rows);
    int32_t *idx = malloc(rows * sizeof *idx);
    float *mx = malloc(rows * sizeof *mx);
    char err[256];
    assert_non_null(idx);
    assert_non_null(mx);
    assert_int_equal(cpu_plan_argmax(plan, idx, mx, err, sizeof err), 0);
    size_t mismatched = 0;
    for (size_t i = 0; i < rows; i++)
        if (idx[i] != ((const int32_t *)want_idx.data)[i] && mismatched++ < 5)
            print_error("%s: step %zu: class %d, onnxruntime %d\n", batch, i, idx[i],
                        ((const int32_t *)want_idx.data)[i]);
    double e = test_max_abs(mx, want_max.data, rows);
    print_message("rec %s: %zu steps, %zu argmax mismatches, max abs error of the max prob %.3g\n", batch, rows,
                  mismatched, e);
    assert_int_equal(mismatched, 0);
    assert_true(e <= PROB_TOL);
    free(idx);
    free(mx);
    free(want_idx.data);
    free(want_max.data);
    cpu_plan_destroy(plan);
    cpu_net_destroy(net);
    pvk_model_free(&m);
}

static void test_rec_wide_line_against_onnxruntime(void **state)
{
    (void)state;
    rec_against_onnxruntime("rec_a");
}

static void test_rec_batch_against_onnxruntime(void **state)
{
    (void)state;
    rec_against_onnxruntime("rec_b");
}

/* OpenMP's idle threads are set to spin briefly where the user chose no wait policy
 * (nn/cpu/dnnl_api.c), as the program loads: already before main, and before oneDNN is loaded.
 * What the user chose is the environment the process was started with, /proc/self/environ. */
static int started_with(const char *name)
{
    FILE *f = fopen("/proc/self/environ", "rb");
    if (!f)
        return -1;
    const size_t len = strlen(name);
    char entry[4096];
    size_t n = 0;
    int found = 0, c;
    while ((c = fgetc(f)) != EOF && !found) {
        if (c != '\0') {
            if (n < sizeof entry - 1)
                entry[n++] = (char)c;
            continue;
        }
        entry[n] = '\0';
        found = n > len && strncmp(entry, name, len) == 0 && entry[len] == '=';
        n = 0;
    }
    fclose(f);
    return found;
}

static const char *spin_at_main; /* GOMP_SPINCOUNT as main found it */

static void test_short_openmp_spin(void **state)
{
    (void)state;
    const int policy = started_with("OMP_WAIT_POLICY"), spin = started_with("GOMP_SPINCOUNT");
    if (policy < 0 || spin < 0) {
        print_message("skipped: no /proc/self/environ to tell what the caller set\n");
        skip();
    }
    if (policy || spin) {
        print_message("skipped: OMP_WAIT_POLICY or GOMP_SPINCOUNT set by the caller\n");
        skip();
    }
    assert_non_null(spin_at_main);
    assert_true(atol(spin_at_main) > 0 && atol(spin_at_main) <= 100000);
    char err[256];
    if (cpu_net_available(err, sizeof err)) {
        print_message("loaded no oneDNN: %s\n", err);
        return;
    }
    assert_string_equal(getenv("GOMP_SPINCOUNT"), spin_at_main);
}

int main(void)
{
    spin_at_main = getenv("GOMP_SPINCOUNT");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_short_openmp_spin),
        cmocka_unit_test(test_det),
        cmocka_unit_test(test_cls),
        cmocka_unit_test(test_rec),
        cmocka_unit_test(test_shared_workspace),
        cmocka_unit_test(test_det_against_onnxruntime),
        cmocka_unit_test(test_cls_against_onnxruntime),
        cmocka_unit_test(test_rec_wide_line_against_onnxruntime),
        cmocka_unit_test(test_rec_batch_against_onnxruntime),
    };
    test_seed();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
