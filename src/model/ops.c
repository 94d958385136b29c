#include "model/ops.h"

const char *pvk_op_type_name(enum pvk_op_type type)
{
    static const char *const names[PVK_OP_COUNT] = {
        [PVK_OP_CONV2D] = "CONV2D", [PVK_OP_CONV_TRANSPOSE2D] = "CONV_TRANSPOSE2D", [PVK_OP_POOL2D] = "POOL2D",
        [PVK_OP_RESIZE] = "RESIZE", [PVK_OP_CONCAT] = "CONCAT", [PVK_OP_BINARY] = "BINARY", [PVK_OP_UNARY] = "UNARY",
        [PVK_OP_AFFINE] = "AFFINE", [PVK_OP_SE] = "SE", [PVK_OP_MATMUL] = "MATMUL", [PVK_OP_LAYERNORM] = "LAYERNORM",
        [PVK_OP_SOFTMAX] = "SOFTMAX", [PVK_OP_ATTENTION] = "ATTENTION", [PVK_OP_TRANSPOSE] = "TRANSPOSE",
        [PVK_OP_RESHAPE] = "RESHAPE", [PVK_OP_SLICE] = "SLICE", [PVK_OP_ARGMAX] = "ARGMAX",
    };
    return (unsigned)type < PVK_OP_COUNT && names[type] ? names[type] : "?";
}

const char *pvk_act_name(enum pvk_act act)
{
    static const char *const names[PVK_ACT_COUNT] = {
        [PVK_ACT_NONE] = "none", [PVK_ACT_RELU] = "relu", [PVK_ACT_RELU6] = "relu6", [PVK_ACT_CLIP] = "clip",
        [PVK_ACT_HARDSWISH] = "hardswish", [PVK_ACT_HARDSIGMOID] = "hardsigmoid", [PVK_ACT_SIGMOID] = "sigmoid",
        [PVK_ACT_SWISH] = "swish", [PVK_ACT_GELU_ERF] = "gelu_erf", [PVK_ACT_GELU_TANH] = "gelu_tanh",
    };
    return (unsigned)act < PVK_ACT_COUNT && names[act] ? names[act] : "?";
}
