/* GPU row-reduction ops against the C reference ops: layernorm, softmax (any axis), argmax
 * (index + value) and attention, in fp32 and fp16 storage, through the subgroup and the
 * shared-memory reductions, on odd shapes and the rec net's ones, outputs poisoned with NaN. */
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

/* ---- layernorm ------------------------------------------------------------------------------- */

static void layernorm_case(struct harness *h, struct pvk_shape s, bool affine, enum pvk_act act)
{
    enum nn_dtype dt = h->cfg.act_dtype;
    size_t n = (size_t)pvk_shape_numel(&s);
    int64_t c = s.d[s.ndim - 1];
    float *x = harness_rand_vec(n, -3, 5, dt), *g = harness_rand_vec((size_t)c, 0.5f, 1.5f, NN_F32),
          *b = harness_rand_vec((size_t)c, -1, 1, NN_F32), *want = malloc(n * sizeof *want),
          *got = malloc(n * sizeof *got);
    float eps = 1e-6f;
    ref_layernorm(x, (int64_t)n / c, c, affine ? g : NULL, affine ? b : NULL, eps, want);
    ref_act(act, 0, 0, want, n);
    struct pvk_op op = harness_op(PVK_OP_LAYERNORM, act, 0, 0, "layernorm");
    op.n_inputs = 1;
    op.attr.norm.eps = eps;
    struct nn_gpu_weights w = {.data = {affine ? g : NULL, affine ? b : NULL}, .shape = {SHAPE(c), SHAPE(c)}};
    struct htensor in, y;
    htensor_alloc(h, &in, &s, dt, 3, 0);
    htensor_write(h, &in, x);
    htensor_alloc(h, &y, &s, dt, 1, 0);
    harness_run_op(h, &nn_gpu_layernorm_impl, &op, &w, &in, 1, &y, 1, NULL);
    htensor_read(h, &y, got);
    char what[96], sb[64];
    snprintf(what, sizeof what, "layernorm %s affine %d", pvk_shape_str(&s, sb, 64), affine);
    harness_check(got, want, n, dt, what);
    htensor_free(&in), htensor_free(&y);
    free(x), free(g), free(b), free(want), free(got);
}

/* ---- softmax --------------------------------------------------------------------------------- */

static void softmax_case(struct harness *h, struct pvk_shape s, int axis)
{
    enum nn_dtype dt = h->cfg.act_dtype;
    size_t n = (size_t)pvk_shape_numel(&s);
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < axis; i++)
        outer *= s.d[i];
    for (int i = axis + 1; i < s.ndim; i++)
        inner *= s.d[i];
    float *x = harness_rand_vec(n, -8, 8, dt), *want = malloc(n * sizeof *want), *got = malloc(n * sizeof *got);
    ref_softmax(x, outer, s.d[axis], inner, want);
    struct pvk_op op = harness_op(PVK_OP_SOFTMAX, PVK_ACT_NONE, 0, 0, "softmax");
    op.n_inputs = 1;
    op.attr.axis.axis = axis;
    struct htensor in, y;
    htensor_alloc(h, &in, &s, dt, 2, 0);
    htensor_write(h, &in, x);
    htensor_alloc(h, &y, &s, dt, 6, 0);
    harness_run_op(h, &nn_gpu_softmax_impl, &op, NULL, &in, 1, &y, 1, NULL);
    htensor_read(h, &y, got);
    char what[96], sb[64];
    snprintf(what, sizeof what, "softmax %s axis %d", pvk_shape_str(&s, sb, 64), axis);
    harness_check(got, want, n, dt, what);
    htensor_free(&in), htensor_free(&y);
    free(x), free(want), free(got);
}

/* ---- argmax ---------------------------------------------------------------------------------- */

/* softmax: x are logits and the value is the maximum's softmax probability */
static void argmax_case(struct harness *h, int64_t rows, int64_t c, bool ties, bool softmax)
{
    enum nn_dtype dt = h->cfg.act_dtype;
    size_t n = (size_t)(rows * c);
    float *x = harness_rand_vec(n, -4, 4, dt), *want_v = malloc((size_t)rows * sizeof(float)),
          *got_v = malloc((size_t)rows * sizeof(float));
    int32_t *want_i = malloc((size_t)rows * sizeof(int32_t)), *got_i = malloc((size_t)rows * sizeof(int32_t));
    if (ties) /* the maximum repeated on purpose: the first one must win */
        for (int64_t r = 0; r < rows; r++) {
            int64_t a = (int64_t)(test_rand_u32() % (uint32_t)c), b = (int64_t)(test_rand_u32() % (uint32_t)c);
            x[r * c + a] = x[r * c + b] = 9.0f;
        }
    ref_argmax(x, rows, c, want_i, want_v);
    if (softmax)
        ref_softmax_of_max(x, rows, c, want_v);
    struct pvk_op op = harness_op(PVK_OP_ARGMAX, PVK_ACT_NONE, 0, 0, "argmax");
    op.n_inputs = 1;
    op.n_outputs = 2;
    op.attr.argmax.value = softmax ? PVK_ARGMAX_VALUE_SOFTMAX : PVK_ARGMAX_VALUE_MAX;
    struct pvk_shape s = SHAPE(1, rows, c), os = SHAPE(1, rows);
    struct htensor in, y[2];
    htensor_alloc(h, &in, &s, dt, 1, 0);
    htensor_write(h, &in, x);
    htensor_alloc(h, &y[0], &os, NN_I32, 3, 0);
    htensor_alloc(h, &y[1], &os, dt, 5, 0);
    harness_run_op(h, &nn_gpu_argmax_impl, &op, NULL, &in, 1, y, 2, NULL);
    htensor_read_i32(h, &y[0], got_i);
    htensor_read(h, &y[1], got_v);
    /* the maximum is copied exactly; a probability is a sum of exponentials in another order, and
     * stored in the storage precision */
    const double tol = !softmax ? 0.0 : dt == NN_F16 ? 1e-3 : 1e-5;
    for (int64_t r = 0; r < rows; r++) {
        if (got_i[r] != want_i[r] || !(fabs((double)got_v[r] - want_v[r]) <= tol * fabs((double)want_v[r])))
            fail_msg("argmax %lldx%lld row %lld: got %d (%g), want %d (%g)", (long long)rows, (long long)c,
                     (long long)r, got_i[r], (double)got_v[r], want_i[r], (double)want_v[r]);
    }
    htensor_free(&in), htensor_free(&y[0]), htensor_free(&y[1]);
    free(x), free(want_v), free(got_v), free(want_i), free(got_i);
}

/* ---- attention ------------------------------------------------------------------------------- */

static void attention_case(struct harness *h, int n, int t, int c, int heads)
{
    enum nn_dtype dt = h->cfg.act_dtype;
    struct pvk_shape is = SHAPE(n, t, 3 * c), os = SHAPE(n, t, c);
    size_t ni = (size_t)pvk_shape_numel(&is), no = (size_t)pvk_shape_numel(&os);
    float *x = harness_rand_vec(ni, -2, 2, dt), *want = malloc(no * sizeof *want), *got = malloc(no * sizeof *got);
    float scale = 1.0f / sqrtf((float)(c / heads));
    ref_attention(x, n, t, c, heads, scale, want);
    struct pvk_op op = harness_op(PVK_OP_ATTENTION, PVK_ACT_NONE, 0, 0, "attention");
    op.n_inputs = 1;
    op.attr.attention.heads = heads;
    op.attr.attention.scale = scale;
    struct htensor in, y;
    htensor_alloc(h, &in, &is, dt, 7, 0);
    htensor_write(h, &in, x);
    htensor_alloc(h, &y, &os, dt, 2, 0);
    harness_run_op(h, &nn_gpu_attention_impl, &op, NULL, &in, 1, &y, 1, NULL);
    htensor_read(h, &y, got);
    char what[96];
    snprintf(what, sizeof what, "attention n %d t %d c %d heads %d", n, t, c, heads);
    harness_check(got, want, no, dt, what);
    htensor_free(&in), htensor_free(&y);
    free(x), free(want), free(got);
}

static void run_all(enum nn_dtype dt)
{
    struct harness h;
    if (!harness_init(&h, dt))
        return;
    layernorm_case(&h, SHAPE(1, 40, 120), true, PVK_ACT_NONE);
    layernorm_case(&h, SHAPE(2, 3, 7), false, PVK_ACT_NONE);
    layernorm_case(&h, SHAPE(1, 1), true, PVK_ACT_NONE);
    layernorm_case(&h, SHAPE(3, 1000), true, PVK_ACT_GELU_TANH);
    softmax_case(&h, SHAPE(1, 40, 6625), 2);
    softmax_case(&h, SHAPE(2, 8, 40, 40), 3);
    softmax_case(&h, SHAPE(3, 2), 1);
    softmax_case(&h, SHAPE(2, 5, 3, 7), 1);
    softmax_case(&h, SHAPE(1, 1), 1);
    softmax_case(&h, SHAPE(5, 1, 3), 0);
    for (int softmax = 0; softmax < 2; softmax++) {
        argmax_case(&h, 40, 6625, false, softmax);
        argmax_case(&h, 3, 1, false, softmax);
        argmax_case(&h, 7, 300, true, softmax);
        argmax_case(&h, 1, 17, true, softmax);
    }
    attention_case(&h, 1, 40, 120, 8);
    attention_case(&h, 2, 7, 24, 3);
    attention_case(&h, 1, 1, 8, 2);
    attention_case(&h, 1, 100, 128, 2);
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

/* The shared-memory twins of the reductions (devices without subgroup arithmetic). */
static void test_no_subgroups(void **s)
{
    (void)s;
    setenv("PPOCR_VK_NO_SUBGROUPS", "1", 1);
    run_all(NN_F32);
    unsetenv("PPOCR_VK_NO_SUBGROUPS");
}

int main(void)
{
    test_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_f32),
        cmocka_unit_test(test_f16),
        cmocka_unit_test(test_no_subgroups),
    };
    return cmocka_run_group_tests(tests, test_gpu_group_setup, test_gpu_group_teardown);
}
