/* The protobuf wire decoder and the ONNX message decoder on hand-built byte strings. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "convert/onnx.h"
#include "convert/onnx_build.h"
#include "convert/pb.h"
#include "support/test_env.h"

static void test_varints(void **state)
{
    (void)state;
    /* field 1 varint 300 (0xac 0x02), field 2 varint 2^64-1 (10 bytes), field 3 varint 0 */
    const uint8_t bytes[] = {0x08, 0xac, 0x02, 0x10, 0xff, 0xff, 0xff, 0xff,
                             0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0x18, 0x00};
    struct pb_reader r = {bytes, bytes + sizeof bytes};
    struct pb_field f;
    char err[128];
    assert_int_equal(pb_next(&r, &f, err, sizeof err), 1);
    assert_int_equal(f.number, 1);
    assert_int_equal(f.wire, PB_VARINT);
    assert_int_equal(f.value, 300);
    assert_int_equal(pb_next(&r, &f, err, sizeof err), 1);
    assert_int_equal(f.number, 2);
    assert_true(f.value == UINT64_MAX);
    assert_int_equal(pb_next(&r, &f, err, sizeof err), 1);
    assert_int_equal(f.number, 3);
    assert_int_equal(f.value, 0);
    assert_int_equal(pb_next(&r, &f, err, sizeof err), 0);
}

static void test_writer_reader_round_trip(void **state)
{
    (void)state;
    struct pb_writer w = {0};
    uint64_t values[64];
    for (int k = 0; k < 64; k++) {
        values[k] = ((uint64_t)test_rand_u32() << 32 | test_rand_u32()) >> (test_rand_u32() % 64);
        pb_put_varint_field(&w, (uint32_t)(k % 7 + 1), values[k]);
    }
    struct pb_reader r = {w.data, w.data + w.len};
    struct pb_field f;
    char err[128];
    for (int k = 0; k < 64; k++) {
        assert_int_equal(pb_next(&r, &f, err, sizeof err), 1);
        assert_int_equal(f.number, k % 7 + 1);
        assert_true(f.value == values[k]);
    }
    assert_int_equal(pb_next(&r, &f, err, sizeof err), 0);
    pb_writer_free(&w);
}

static int collect(void *ctx, uint64_t v)
{
    uint64_t *a = ctx;
    a[++a[0]] = v;
    return 0;
}

static void test_packed_and_unpacked(void **state)
{
    (void)state;
    /* field 4 packed varints [1, 150, 3]; then field 4 unpacked 7; field 5 packed fixed32 */
    const uint8_t bytes[] = {0x22, 0x04, 0x01, 0x96, 0x01, 0x03, 0x20, 0x07, 0x2a, 0x08, 1, 0, 0, 0, 2, 0, 0, 0};
    struct pb_reader r = {bytes, bytes + sizeof bytes};
    struct pb_field f;
    char err[128];
    uint64_t got[16] = {0};
    assert_int_equal(pb_next(&r, &f, err, sizeof err), 1);
    assert_int_equal(pb_repeated(&f, 0, collect, got, err, sizeof err), 0);
    assert_int_equal(pb_next(&r, &f, err, sizeof err), 1);
    assert_int_equal(pb_repeated(&f, 0, collect, got, err, sizeof err), 0);
    assert_int_equal(got[0], 4);
    assert_int_equal(got[1], 1);
    assert_int_equal(got[2], 150);
    assert_int_equal(got[3], 3);
    assert_int_equal(got[4], 7);
    uint64_t fixed[8] = {0};
    assert_int_equal(pb_next(&r, &f, err, sizeof err), 1);
    assert_int_equal(pb_repeated(&f, 4, collect, fixed, err, sizeof err), 0);
    assert_int_equal(fixed[0], 2);
    assert_int_equal(fixed[1], 1);
    assert_int_equal(fixed[2], 2);
    /* a packed fixed32 run that is not a multiple of 4 bytes */
    const uint8_t bad[] = {0x2a, 0x03, 1, 0, 0};
    struct pb_reader rb = {bad, bad + sizeof bad};
    assert_int_equal(pb_next(&rb, &f, err, sizeof err), 1);
    assert_int_equal(pb_repeated(&f, 4, collect, fixed, err, sizeof err), -1);
    assert_non_null(strstr(err, "multiple"));
}

static void test_malformed(void **state)
{
    (void)state;
    char err[128];
    struct pb_field f;
    const uint8_t truncated_varint[] = {0x08, 0x80};
    const uint8_t overlong_varint[] = {0x08, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01};
    const uint8_t long_len[] = {0x0a, 0x05, 'a', 'b'};
    const uint8_t wire_group[] = {0x0b};
    const uint8_t field_zero[] = {0x00, 0x01};
    const uint8_t short_fixed[] = {0x0d, 1, 2};
    const struct {
        const uint8_t *p;
        size_t n;
    } cases[] = {
        {truncated_varint, sizeof truncated_varint},
        {overlong_varint, sizeof overlong_varint},
        {long_len, sizeof long_len},
        {wire_group, sizeof wire_group},
        {field_zero, sizeof field_zero},
        {short_fixed, sizeof short_fixed},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        struct pb_reader r = {cases[k].p, cases[k].p + cases[k].n};
        err[0] = 0;
        assert_int_equal(pb_next(&r, &f, err, sizeof err), -1);
        assert_true(strlen(err) > 0);
    }
}

/* A small model exercising initializers (raw and int64_data), a Constant node, attributes of
 * every kind used, and symbolic input dims. */
static void build_model(uint8_t **bytes, size_t *len)
{
    struct onnx_builder b;
    ob_init(&b, 13);
    int64_t in_dims[] = {-1, 3, 8, -1}, w_dims[] = {4, 3, 1, 1}, s_dims[] = {2};
    float w[12];
    for (int k = 0; k < 12; k++)
        w[k] = (float)k * 0.5f - 2.0f;
    int64_t shape[] = {0, -1};
    ob_input(&b, "x", 4, in_dims);
    ob_init_f32(&b, "w", 4, w_dims, w);
    ob_init_i64(&b, "shape", 1, s_dims, shape);
    ob_const_scalar(&b, "half", 0.5f);
    ob_node(&b, "Conv", "conv0", "x,w", "y");
    int64_t pads[] = {0, 0, 0, 0};
    ob_attr_ints(&b, "pads", 4, pads);
    ob_attr_int(&b, "group", 1);
    ob_node(&b, "Mul", "mul0", "y,half", "z");
    ob_node(&b, "Resize", "rs", "z,,scales", "out");
    ob_attr_string(&b, "mode", "nearest");
    ob_attr_float(&b, "extrapolation_value", 1.5f);
    int64_t out_dims[] = {-1, 4, 16, -1};
    ob_output(&b, "out", 4, out_dims);
    assert_int_equal(ob_finish(&b, bytes, len), 0);
}

static void test_onnx_model(void **state)
{
    (void)state;
    uint8_t *bytes;
    size_t len;
    build_model(&bytes, &len);
    struct onnx_model m;
    char err[256];
    assert_int_equal(onnx_parse(bytes, len, &m, err, sizeof err), 0);
    assert_int_equal(m.opset, 13);
    assert_int_equal(m.ir_version, 8);
    assert_int_equal(m.n_inputs, 1);
    assert_string_equal(m.inputs[0].name, "x");
    assert_int_equal(m.inputs[0].ndim, 4);
    assert_int_equal(m.inputs[0].dims[0], -1);
    assert_int_equal(m.inputs[0].dims[2], 8);
    assert_int_equal(m.n_initializers, 2);
    assert_string_equal(m.initializers[0].name, "w");
    assert_int_equal(m.initializers[0].numel, 12);
    assert_non_null(m.initializers[0].f);
    for (int k = 0; k < 12; k++)
        assert_true(m.initializers[0].f[k] == (double)((float)k * 0.5f - 2.0f));
    assert_non_null(m.initializers[1].i);
    assert_int_equal(m.initializers[1].i[0], 0);
    assert_int_equal(m.initializers[1].i[1], -1);
    assert_int_equal(m.n_nodes, 4);
    assert_string_equal(m.nodes[0].op_type, "Constant");
    const struct onnx_attr *v = onnx_attr_find(&m.nodes[0], "value");
    assert_non_null(v);
    assert_non_null(v->t);
    assert_true(v->t->f[0] == 0.5);
    const struct onnx_node *conv = &m.nodes[1];
    assert_string_equal(conv->op_type, "Conv");
    assert_int_equal(conv->n_inputs, 2);
    const struct onnx_attr *pads = onnx_attr_find(conv, "pads");
    assert_int_equal(pads->n_ints, 4);
    assert_int_equal(onnx_attr_int(conv, "group", 7), 1);
    const struct onnx_node *rs = &m.nodes[3];
    assert_int_equal(rs->n_inputs, 3);
    assert_string_equal(rs->inputs[1], "");
    assert_string_equal(onnx_attr_string(rs, "mode", ""), "nearest");
    assert_true(onnx_attr_float(rs, "extrapolation_value", 0) == 1.5);
    onnx_free(&m);
    free(bytes);
}

/* Every truncation of a valid model either still decodes (cut at a field boundary of the
 * outer message) or fails with a message; bit flips never crash. */
static void test_truncated_and_flipped(void **state)
{
    (void)state;
    uint8_t *bytes;
    size_t len;
    build_model(&bytes, &len);
    char err[256];
    int failures = 0;
    for (size_t n = 0; n < len; n++) {
        struct onnx_model m;
        err[0] = 0;
        if (onnx_parse(bytes, n, &m, err, sizeof err) == 0)
            onnx_free(&m);
        else {
            assert_true(strlen(err) > 0);
            failures++;
        }
    }
    assert_true(failures > (int)len / 2);
    uint8_t *copy = malloc(len);
    for (int t = 0; t < 2000; t++) {
        memcpy(copy, bytes, len);
        for (int k = 0; k < 3; k++)
            copy[test_rand_u32() % len] ^= (uint8_t)(1u << (test_rand_u32() % 8));
        struct onnx_model m;
        if (onnx_parse(copy, len, &m, err, sizeof err) == 0)
            onnx_free(&m);
    }
    free(copy);
    free(bytes);
}

static void test_tensor_size_mismatch(void **state)
{
    (void)state;
    /* TensorProto with dims [3] and raw_data of 8 bytes (float needs 12) */
    struct pb_writer t = {0}, g = {0}, m = {0}, n = {0};
    pb_put_varint_field(&t, 1, 3);
    pb_put_varint_field(&t, 2, ONNX_FLOAT);
    pb_put_string_field(&t, 8, "w");
    pb_put_bytes_field(&t, 9, "12345678", 8);
    pb_put_string_field(&n, 4, "Relu");
    pb_put_message_field(&g, 1, &n);
    pb_put_message_field(&g, 5, &t);
    pb_put_message_field(&m, 7, &g);
    struct onnx_model om;
    char err[256];
    assert_int_equal(onnx_parse(m.data, m.len, &om, err, sizeof err), -1);
    assert_non_null(strstr(err, "raw_data"));
    pb_writer_free(&m);
}

int main(void)
{
    test_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_varints),
        cmocka_unit_test(test_writer_reader_round_trip),
        cmocka_unit_test(test_packed_and_unpacked),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_onnx_model),
        cmocka_unit_test(test_truncated_and_flipped),
        cmocka_unit_test(test_tensor_size_mismatch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
