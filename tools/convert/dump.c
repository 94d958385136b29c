#include <stdio.h>

#include "convert/convert.h"

static void print_shape(FILE *out, const struct pvk_tensor *t)
{
    fputc('[', out);
    for (uint32_t d = 0; d < t->ndim; d++)
        fprintf(out, d ? ",%lld" : "%lld", (long long)t->shape[d]);
    fputc(']', out);
}

static void print_attrs(FILE *out, const struct pvk_op *op)
{
    const union pvk_op_attr *a = &op->attr;
    switch (op->type) {
    case PVK_OP_CONV2D:
    case PVK_OP_CONV_TRANSPOSE2D:
        fprintf(out, " k=%dx%d s=%dx%d d=%dx%d pads=%d,%d,%d,%d group=%d", a->conv.kh, a->conv.kw, a->conv.sh,
                a->conv.sw, a->conv.dh, a->conv.dw, a->conv.pad_t, a->conv.pad_l, a->conv.pad_b, a->conv.pad_r,
                a->conv.group);
        if (a->conv.residual)
            fprintf(out, " residual=%s", a->conv.residual == PVK_RESIDUAL_AFTER_ACT ? "after_act" : "before_act");
        break;
    case PVK_OP_POOL2D:
        if (a->pool.kind == PVK_POOL_GLOBAL_AVG)
            fprintf(out, " global_avg");
        else
            fprintf(out, " %s k=%dx%d s=%dx%d pads=%d,%d,%d,%d count_include_pad=%d ceil=%d",
                    a->pool.kind ? "avg" : "max", a->pool.kh, a->pool.kw, a->pool.sh, a->pool.sw, a->pool.pad_t,
                    a->pool.pad_l, a->pool.pad_b, a->pool.pad_r, a->pool.count_include_pad, a->pool.ceil_mode);
        break;
    case PVK_OP_RESIZE: {
        static const char *const modes[] = {"nearest", "bilinear_half_pixel", "bilinear_align_corners"};
        fprintf(out, " %s scale=%gx%g", a->resize.mode >= 0 && a->resize.mode < 3 ? modes[a->resize.mode] : "?",
                a->resize.scale_h, a->resize.scale_w);
    } break;
    case PVK_OP_CONCAT:
    case PVK_OP_SOFTMAX: fprintf(out, " axis=%d", a->axis.axis); break;
    case PVK_OP_BINARY: {
        static const char *const k[] = {"add", "sub", "mul", "div"};
        fprintf(out, " %s", a->binary.kind >= 0 && a->binary.kind < 4 ? k[a->binary.kind] : "?");
        break;
    }
    case PVK_OP_SE:
        fprintf(out, " gate=%s(%g,%g) residual=%d", pvk_act_name(a->se.gate_act), a->se.gate_alpha, a->se.gate_beta,
                a->se.residual);
        break;
    case PVK_OP_LAYERNORM: fprintf(out, " eps=%g", a->norm.eps); break;
    case PVK_OP_ATTENTION: fprintf(out, " heads=%d scale=%g", a->attention.heads, a->attention.scale); break;
    case PVK_OP_TRANSPOSE:
        fprintf(out, " perm=");
        for (int d = 0; d < a->transpose.ndim && d < PVK_MAX_DIMS; d++)
            fprintf(out, d ? ",%d" : "%d", a->transpose.perm[d]);
        break;
    case PVK_OP_RESHAPE:
        fprintf(out, " shape=");
        for (int d = 0; d < a->reshape.ndim && d < PVK_MAX_DIMS; d++)
            fprintf(out, d ? ",%d" : "%d", a->reshape.shape[d]);
        break;
    case PVK_OP_SLICE:
        fprintf(out, " axis=%d start=%d end=%d step=%d", a->slice.axis, a->slice.start, a->slice.end, a->slice.step);
        break;
    default: break;
    }
}

void pvkc_dump(const struct pvk_model *m, FILE *out)
{
    static const char *const kinds[] = {"?", "det", "cls", "rec"};
    fprintf(out, "net %s from %s: %u ops, %u tensors, input %d ", kinds[m->net_kind <= 3 ? m->net_kind : 0], m->source,
            m->n_ops, m->n_tensors, m->input);
    print_shape(out, &m->tensors[m->input]);
    fprintf(out, ", output %d ", m->output);
    print_shape(out, &m->tensors[m->output]);
    if (m->n_dict)
        fprintf(out, ", dictionary %u entries (%u classes)", m->n_dict, m->n_dict + 1);
    fputc('\n', out);
    unsigned counts[PVK_OP_COUNT] = {0};
    for (uint32_t i = 0; i < m->n_ops; i++) {
        const struct pvk_op *op = &m->ops[i];
        counts[op->type]++;
        fprintf(out, "%4u %-16s act=%s", i, pvk_op_type_name(op->type), pvk_act_name(op->act));
        if (op->act == PVK_ACT_CLIP || op->act == PVK_ACT_HARDSIGMOID)
            fprintf(out, "(%g,%g)", op->act_alpha, op->act_beta);
        fputs(" ", out);
        for (uint32_t k = 0; k < op->n_inputs; k++)
            fprintf(out, k ? ",%d" : "%d", op->inputs[k]);
        fputs(" ->", out);
        for (uint32_t k = 0; k < op->n_outputs; k++) {
            fprintf(out, " %d", op->outputs[k]);
            print_shape(out, &m->tensors[op->outputs[k]]);
        }
        print_attrs(out, op);
        for (int k = 0; k < PVK_MAX_WEIGHTS; k++)
            if (op->weights[k] >= 0) {
                fprintf(out, " w%d=", k);
                print_shape(out, &m->tensors[op->weights[k]]);
            }
        fprintf(out, "  (%s)\n", op->name);
    }
    fprintf(out, "op counts:");
    for (int t = 1; t < PVK_OP_COUNT; t++)
        if (counts[t])
            fprintf(out, " %s=%u", pvk_op_type_name((enum pvk_op_type)t), counts[t]);
    fputc('\n', out);
}
