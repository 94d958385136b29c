/* MATMUL: a [.., M, K] times a constant B (w[0]: [K][N], or [N][K] with trans_b) or a second input
 * b [.., K, N] ([.., N, K] with trans_b), + bias[N] (w[1]) + activation, on the GEMM kernel of the
 * convolutions (conv_gemm). A constant B is repacked to [K][N] (rows padded to a multiple of 4)
 * so the kernel reads it along N, and
 * every row of a, whatever its batch dims, is one row of a single GEMM. Two inputs: the batch dims
 * broadcast numpy-style; after merging dims that step alike they must fit the kernel's two batch
 * levels (z = z1 zdiv + z2). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "gpu/context.h"
#include "gpu/error.h"
#include "gpu/pipeline.h"
#include "nn/gpu/conv_gemm.h"
#include "nn/gpu/gpu_op.h"
#include "nn/shape.h"

struct matmul_state {
    struct nn_gpu_config cfg;
    bool const_b;
    int64_t k, n; /* of the constant B */
    struct gpu_buffer weight, bias;
    bool has_bias;
    struct conv_gemm gemm;
};

static void matmul_destroy(void *state)
{
    struct matmul_state *s = state;
    if (!s)
        return;
    gpu_buffer_free(&s->weight);
    gpu_buffer_free(&s->bias);
    free(s);
}

/* Rank of s once leading 1s are dropped (a constant B may come as [1, K, N]). */
static int squeezed_rank(const struct pvk_shape *s)
{
    int lead = 0;
    while (lead < s->ndim - 2 && s->d[lead] == 1)
        lead++;
    return s->ndim - lead;
}

static int matmul_create(const struct nn_gpu_config *cfg, const struct pvk_op *op, const struct nn_gpu_weights *w,
                         void **state, char *err, size_t err_len)
{
    *state = NULL;
    if (op->act >= PVK_ACT_COUNT) {
        snprintf(err, err_len, "matmul %s: unknown activation %u", op->name, op->act);
        return -1;
    }
    struct matmul_state *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, err_len, "matmul %s: out of memory", op->name);
        return -1;
    }
    s->cfg = *cfg;
    const int trans_b = op->attr.matmul.trans_b;
    s->const_b = w->data[0] != NULL;
    if (s->const_b) {
        const struct pvk_shape *bs = &w->shape[0];
        if (bs->ndim < 2 || squeezed_rank(bs) != 2) {
            snprintf(err, err_len, "matmul %s: constant B must be 2-D", op->name);
            goto fail;
        }
        int64_t r = bs->d[bs->ndim - 2], c = bs->d[bs->ndim - 1];
        s->k = trans_b ? c : r;
        s->n = trans_b ? r : c;
        /* [K][N] rows padded to a multiple of 4 with zeros, for aligned vec4 loads */
        const int64_t row = conv_gemm_row((uint32_t)s->n);
        size_t count = (size_t)(s->k * row);
        float *packed = calloc(count, sizeof *packed);
        if (!packed) {
            snprintf(err, err_len, "matmul %s: out of memory", op->name);
            goto fail;
        }
        for (int64_t i = 0; i < s->n; i++)
            for (int64_t q = 0; q < s->k; q++)
                packed[q * row + i] = trans_b ? w->data[0][i * s->k + q] : w->data[0][q * s->n + i];
        int rc = conv_upload(cfg, packed, count, false, &s->weight, err, err_len);
        free(packed);
        if (rc)
            goto fail;
    }
    s->has_bias = w->data[1] != NULL;
    if (s->has_bias) {
        if (w->shape[1].ndim != 1 || (s->const_b && w->shape[1].d[0] != s->n)) {
            snprintf(err, err_len, "matmul %s: bias must be [N]", op->name);
            goto fail;
        }
        if (conv_upload(cfg, w->data[1], (size_t)w->shape[1].d[0], true, &s->bias, err, err_len))
            goto fail;
    }
    struct conv_gemm_desc d = {
        .mode = CONV_GEMM_PLAIN,
        .bias = s->has_bias ? CONV_GEMM_BIAS_COL : CONV_GEMM_BIAS_NONE,
        .act = op->act,
        .act_alpha = op->act_alpha,
        .act_beta = op->act_beta,
        .kh = 1,
        .kw = 1,
        .sh = 1,
        .sw = 1,
        .dh = 1,
        .dw = 1,
        .allow_coopmat = true,
    };
    if (conv_gemm_create(cfg, &d, &s->gemm, err, err_len))
        goto fail;
    *state = s;
    return 0;
fail:
    matmul_destroy(s);
    return -1;
}

/* Batch dims of the output with the element steps of a, b and c along each. */
struct batch_dim {
    int64_t size, sa, sb, sc;
};

/* Drops size-1 dims and merges neighbours that step alike; returns how many remain. */
static int merge_batch_dims(struct batch_dim *d, int nd)
{
    int m = 0;
    for (int i = 0; i < nd; i++) {
        if (d[i].size == 1)
            continue;
        if (m > 0) {
            struct batch_dim *p = &d[m - 1];
            if (p->sa == d[i].sa * d[i].size && p->sb == d[i].sb * d[i].size && p->sc == d[i].sc * d[i].size) {
                p->size *= d[i].size;
                p->sa = d[i].sa;
                p->sb = d[i].sb;
                p->sc = d[i].sc;
                continue;
            }
        }
        d[m++] = d[i];
    }
    return m;
}

static int matmul_record(void *state, const struct pvk_op *op, struct gpu_cmd *cmd, const struct nn_gpu_tensor *in,
                         int n_in, const struct nn_gpu_tensor *out, int n_out, char *err, size_t err_len)
{
    struct matmul_state *s = state;
    const int trans_b = op->attr.matmul.trans_b;
    if (n_in < (s->const_b ? 1 : 2) || n_out < 1) {
        snprintf(err, err_len, "matmul %s: needs %d input(s) and one output", op->name, s->const_b ? 1 : 2);
        return -1;
    }
    const struct nn_gpu_tensor *a = &in[0], *b = s->const_b ? NULL : &in[1], *y = &out[0];
    struct pvk_shape bshape;
    if (s->const_b) {
        bshape.ndim = 2;
        bshape.d[0] = trans_b ? s->n : s->k;
        bshape.d[1] = trans_b ? s->k : s->n;
    } else {
        bshape = b->shape;
    }
    struct pvk_shape want;
    if (pvk_matmul_out_shape(&a->shape, &bshape, trans_b, &want) || !pvk_shape_equal(&want, &y->shape) ||
        y->dst_channels) {
        snprintf(err, err_len, "matmul %s: shapes do not match", op->name);
        return -1;
    }
    const enum nn_dtype dt = s->cfg.act_dtype;
    if (a->dtype != dt || y->dtype != dt || (b && b->dtype != dt)) {
        snprintf(err, err_len, "matmul %s: tensors must be in the net's storage precision", op->name);
        return -1;
    }
    const int64_t m = a->shape.d[a->shape.ndim - 2], k = a->shape.d[a->shape.ndim - 1];
    const int64_t n = y->shape.d[y->shape.ndim - 1];
    if (s->has_bias && (s->const_b ? s->n : n) != n) {
        snprintf(err, err_len, "matmul %s: bias length differs from N", op->name);
        return -1;
    }
    const char *label = op->name[0] ? op->name : "matmul";
    const struct gpu_buffer *own = s->const_b ? &s->weight : a->buf;
    struct gpu_binding bind[6] = {gpu_bind(a->buf), gpu_bind(s->const_b ? &s->weight : b->buf),
                                  gpu_bind(y->buf), gpu_bind(s->has_bias ? &s->bias : own),
                                  gpu_bind(own),    gpu_bind(own)};
    struct conv_gemm_push p = {
        .N = (uint32_t)n,
        .K = (uint32_t)k,
        .zdiv = 1,
        .a_off = a->elem_offset,
        .a_sm = (uint32_t)k,
        .b_off = b ? b->elem_offset : 0,
        .b_sk = trans_b && b ? 1 : (uint32_t)n,
        .b_sn = trans_b && b ? (uint32_t)k : 1,
        .c_off = y->elem_offset,
        .c_sm = (uint32_t)n,
    };
    if (s->const_b) {
        p.M = (uint32_t)(pvk_shape_numel(&a->shape) / k);
        p.b_sk = conv_gemm_row((uint32_t)n);
        return conv_gemm_record(&s->gemm, cmd, bind, &p, 1, label, err, err_len) ? -1 : 0;
    }

    p.M = (uint32_t)m;
    struct batch_dim dims[PVK_MAX_DIMS];
    const int nd = y->shape.ndim - 2;
    int64_t step_a = m * k, step_b = k * n, step_c = m * n;
    for (int i = nd - 1; i >= 0; i--) {
        int ia = i - (nd - (a->shape.ndim - 2)), ib = i - (nd - (b->shape.ndim - 2));
        int64_t da = ia >= 0 ? a->shape.d[ia] : 1, db = ib >= 0 ? b->shape.d[ib] : 1;
        dims[i] = (struct batch_dim){y->shape.d[i], da == 1 ? 0 : step_a, db == 1 ? 0 : step_b, step_c};
        step_a *= da;
        step_b *= db;
        step_c *= y->shape.d[i];
    }
    int nb = merge_batch_dims(dims, nd);
    if (nb > 2) {
        snprintf(err, err_len, "matmul %s: batch broadcasting needs %d levels, the kernel has 2", op->name, nb);
        return -1;
    }
    uint32_t z_count = 1;
    if (nb >= 1) {
        const struct batch_dim *inner = &dims[nb - 1];
        p.zdiv = (uint32_t)inner->size;
        p.a_z2 = (uint32_t)inner->sa;
        p.b_z2 = (uint32_t)inner->sb;
        p.c_z2 = (uint32_t)inner->sc;
        z_count = p.zdiv;
    }
    if (nb == 2) {
        p.a_z1 = (uint32_t)dims[0].sa;
        p.b_z1 = (uint32_t)dims[0].sb;
        p.c_z1 = (uint32_t)dims[0].sc;
        z_count *= (uint32_t)dims[0].size;
    }
    return conv_gemm_record(&s->gemm, cmd, bind, &p, z_count, label, err, err_len) ? -1 : 0;
}

const struct nn_gpu_op_impl nn_gpu_matmul_impl = {
    .create = matmul_create, .record = matmul_record, .destroy = matmul_destroy};
