/* GPU layout ops against the C reference ops: concat (the copy fallback, also into a channel
 * slice), transpose (every perm the rec net uses and random ones up to 6-D), reshape (nothing
 * recorded when aliased, a copy otherwise) and slice (one axis, steps), fp32 and fp16. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/validation.h"
#include "nn/cpu/ref_ops.h"
#include "support/gpu_group.h"
#include "support/gpu_op_harness.h"
#include "support/test_env.h"

/* ---- concat ---------------------------------------------------------------------------------- */

static void concat_case(struct harness *h, int n_in, const struct pvk_shape *shapes, int axis, int64_t view)
{
    enum nn_dtype dt = h->cfg.act_dtype;
    struct pvk_shape ys;
    assert_int_equal(pvk_concat_out_shape(n_in, shapes, axis, &ys), 0);
    size_t ny = (size_t)pvk_shape_numel(&ys);
    float *x[PVK_MAX_INPUTS], *want = malloc(ny * sizeof *want), *got = malloc(ny * sizeof *got);
    struct htensor in[PVK_MAX_INPUTS], y;
    for (int i = 0; i < n_in; i++) {
        x[i] = harness_rand_vec((size_t)pvk_shape_numel(&shapes[i]), -3, 3, dt);
        htensor_alloc(h, &in[i], &shapes[i], dt, (uint32_t)i, 0);
        htensor_write(h, &in[i], x[i]);
    }
    ref_concat(n_in, (const float *const *)x, shapes, axis, want);
    ref_act(PVK_ACT_RELU, 0, 0, want, ny);
    struct pvk_op op = harness_op(PVK_OP_CONCAT, PVK_ACT_RELU, 0, 0, "concat");
    op.n_inputs = (uint32_t)n_in;
    op.attr.axis.axis = axis;
    htensor_alloc(h, &y, &ys, dt, 5, view);
    harness_run_op(h, &nn_gpu_concat_impl, &op, NULL, in, n_in, &y, 1, NULL);
    htensor_read(h, &y, got);
    char what[96], sb[64];
    snprintf(what, sizeof what, "concat of %d into %s axis %d view %lld", n_in, pvk_shape_str(&ys, sb, 64), axis,
             (long long)view);
    harness_check(got, want, ny, dt, what);
    for (int i = 0; i < n_in; i++) {
        htensor_free(&in[i]);
        free(x[i]);
    }
    htensor_free(&y);
    free(want), free(got);
}

/* ---- transpose ------------------------------------------------------------------------------- */

static void transpose_case(struct harness *h, struct pvk_shape s, const int32_t *perm)
{
    enum nn_dtype dt = h->cfg.act_dtype;
    struct pvk_shape ys;
    assert_int_equal(pvk_transpose_out_shape(&s, perm, &ys), 0);
    size_t n = (size_t)pvk_shape_numel(&s);
    float *x = harness_rand_vec(n, -3, 3, dt), *want = malloc(n * sizeof *want), *got = malloc(n * sizeof *got);
    ref_transpose(x, &s, perm, want);
    struct pvk_op op = harness_op(PVK_OP_TRANSPOSE, PVK_ACT_NONE, 0, 0, "transpose");
    op.n_inputs = 1;
    op.attr.transpose.ndim = s.ndim;
    memcpy(op.attr.transpose.perm, perm, sizeof(int32_t) * (size_t)s.ndim);
    struct htensor in, y;
    htensor_alloc(h, &in, &s, dt, 3, 0);
    htensor_write(h, &in, x);
    htensor_alloc(h, &y, &ys, dt, 1, 0);
    harness_run_op(h, &nn_gpu_transpose_impl, &op, NULL, &in, 1, &y, 1, NULL);
    htensor_read(h, &y, got);
    char what[128], sb[64];
    int k = snprintf(what, sizeof what, "transpose %s perm", pvk_shape_str(&s, sb, 64));
    for (int i = 0; i < s.ndim; i++)
        k += snprintf(what + k, sizeof what - (size_t)k, " %d", perm[i]);
    harness_check(got, want, n, dt, what);
    htensor_free(&in), htensor_free(&y);
    free(x), free(want), free(got);
}

/* ---- reshape --------------------------------------------------------------------------------- */

static void reshape_case(struct harness *h, bool aliased, enum pvk_act act)
{
    enum nn_dtype dt = h->cfg.act_dtype;
    struct pvk_shape s = SHAPE(2, 3, 5, 7), ys = SHAPE(6, 35);
    size_t n = (size_t)pvk_shape_numel(&s);
    float *x = harness_rand_vec(n, -3, 3, dt), *want = malloc(n * sizeof *want), *got = malloc(n * sizeof *got);
    memcpy(want, x, n * sizeof *x);
    ref_act(act, 0, 0, want, n);
    /* in place, each replay applies the activation again (in a net the producer rewrites x
     * first); the harness replays twice */
    if (aliased && act != PVK_ACT_NONE)
        ref_act(act, 0, 0, want, n);
    struct pvk_op op = harness_op(PVK_OP_RESHAPE, act, 0, 0, "reshape");
    op.n_inputs = 1;
    op.attr.reshape.ndim = 2;
    op.attr.reshape.shape[0] = 6;
    op.attr.reshape.shape[1] = -1;
    struct htensor in, y;
    htensor_alloc(h, &in, &s, dt, 4, 0);
    htensor_write(h, &in, x);
    if (aliased) {
        y = in;
        y.t.shape = ys;
    } else {
        htensor_alloc(h, &y, &ys, dt, 2, 0);
    }
    harness_run_op(h, &nn_gpu_reshape_impl, &op, NULL, &in, 1, &y, 1, NULL);
    htensor_read(h, &y, got);
    harness_check(got, want, n, dt, aliased ? "reshape in place" : "reshape copy");
    htensor_free(&in);
    if (!aliased)
        htensor_free(&y);
    free(x), free(want), free(got);
}

/* ---- slice ----------------------------------------------------------------------------------- */

static void slice_case(struct harness *h, struct pvk_shape s, int axis, int start, int end, int step)
{
    enum nn_dtype dt = h->cfg.act_dtype;
    struct pvk_shape ys;
    int64_t first;
    assert_int_equal(pvk_slice_out_shape(&s, axis, start, end, step, &ys, &first), 0);
    size_t n = (size_t)pvk_shape_numel(&s), ny = (size_t)pvk_shape_numel(&ys);
    float *x = harness_rand_vec(n, -3, 3, dt), *want = malloc(ny * sizeof *want), *got = malloc(ny * sizeof *got);
    ref_slice(x, &s, axis, first, step, &ys, want);
    struct pvk_op op = harness_op(PVK_OP_SLICE, PVK_ACT_NONE, 0, 0, "slice");
    op.n_inputs = 1;
    op.attr.slice.axis = axis;
    op.attr.slice.start = start;
    op.attr.slice.end = end;
    op.attr.slice.step = step;
    struct htensor in, y;
    htensor_alloc(h, &in, &s, dt, 2, 0);
    htensor_write(h, &in, x);
    htensor_alloc(h, &y, &ys, dt, 3, 0);
    harness_run_op(h, &nn_gpu_slice_impl, &op, NULL, &in, 1, &y, 1, NULL);
    htensor_read(h, &y, got);
    char what[128], sb[64];
    snprintf(what, sizeof what, "slice %s axis %d [%d:%d:%d]", pvk_shape_str(&s, sb, 64), axis, start, end, step);
    harness_check(got, want, ny, dt, what);
    htensor_free(&in), htensor_free(&y);
    free(x), free(want), free(got);
}

static void run_all(enum nn_dtype dt)
{
    struct harness h;
    if (!harness_init(&h, dt))
        return;
    /* the det neck's concat on axis 1, the rec net's on axis 0, one into a channel slice */
    const struct pvk_shape c1[] = {SHAPE(1, 4, 5, 6), SHAPE(1, 3, 5, 6), SHAPE(1, 1, 5, 6), SHAPE(1, 4, 5, 6)};
    concat_case(&h, 4, c1, 1, 0);
    concat_case(&h, 2, c1, 1, 11);
    const struct pvk_shape c0[] = {SHAPE(1, 40, 120), SHAPE(2, 40, 120), SHAPE(1, 40, 120)};
    concat_case(&h, 3, c0, 0, 0);
    const struct pvk_shape c2[] = {SHAPE(2, 3, 1), SHAPE(2, 3, 4)};
    concat_case(&h, 2, c2, 2, 0);
    const struct pvk_shape one[] = {SHAPE(1, 1)};
    concat_case(&h, 1, one, 0, 0);
    /* the rec net's perms */
    transpose_case(&h, SHAPE(1, 40, 3, 8, 15), (const int32_t[]){2, 0, 3, 1, 4});
    transpose_case(&h, SHAPE(1, 8, 40, 15), (const int32_t[]){0, 1, 3, 2});
    transpose_case(&h, SHAPE(1, 8, 40, 15), (const int32_t[]){0, 2, 1, 3});
    transpose_case(&h, SHAPE(1, 120, 40), (const int32_t[]){0, 2, 1});
    transpose_case(&h, SHAPE(1, 120, 1, 40), (const int32_t[]){0, 3, 1, 2});
    transpose_case(&h, SHAPE(1), (const int32_t[]){0});
    /* random 6-D perms on odd dims */
    for (int k = 0; k < 4; k++) {
        int32_t perm[6] = {0, 1, 2, 3, 4, 5};
        for (int i = 5; i > 0; i--) {
            int j = (int)(test_rand_u32() % (uint32_t)(i + 1));
            int32_t t = perm[i];
            perm[i] = perm[j], perm[j] = t;
        }
        transpose_case(&h, SHAPE(2, 3, 1, 5, 2, 3), perm);
    }
    reshape_case(&h, true, PVK_ACT_NONE);
    reshape_case(&h, false, PVK_ACT_NONE);
    reshape_case(&h, true, PVK_ACT_SIGMOID);
    reshape_case(&h, false, PVK_ACT_HARDSWISH);
    /* the nets' slices on axis 0, and a few more */
    slice_case(&h, SHAPE(3, 1, 8, 40, 15), 0, 0, 1, 1);
    slice_case(&h, SHAPE(3, 1, 8, 40, 15), 0, 2, 3, 1);
    slice_case(&h, SHAPE(2, 7, 5), 1, 1, INT32_MAX, 2);
    slice_case(&h, SHAPE(4, 9), 1, -4, -1, 1);
    slice_case(&h, SHAPE(5, 6, 7), 2, 0, 7, 3);
    harness_done(&h);
    assert_int_equal(gpu_validation_message_count(), 0);
}

static void test_f32(void **s)
{
    (void)s;
    run_all(NN_F32);
}
static void test_f16(void **s)
{
    (void)s;
    run_all(NN_F16);
}

int main(void)
{
    test_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_f32),
        cmocka_unit_test(test_f16),
    };
    return cmocka_run_group_tests(tests, test_gpu_group_setup, test_gpu_group_teardown);
}
