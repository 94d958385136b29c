#include "model/ops.h"

const char *pvk_op_type_name(enum pvk_op_type type)
{
    /* a switch, so that two rows of PVK_OPS with one value do not compile */
    switch (type) {
#define NAME_CASE(id, value, name, max_in, max_out)                                                                    \
    case PVK_OP_##id: return #id;
        PVK_OPS(NAME_CASE)
#undef NAME_CASE
    case PVK_OP_COUNT: break;
    }
    return "?";
}

/* Every value below PVK_OP_COUNT: a row whose value is past the count does not compile. */
#define INPUTS_ROW(id, value, name, max_in, max_out) [PVK_OP_##id] = max_in,
static const unsigned char max_inputs[PVK_OP_COUNT] = {PVK_OPS(INPUTS_ROW)};
#undef INPUTS_ROW
#define OUTPUTS_ROW(id, value, name, max_in, max_out) [PVK_OP_##id] = max_out,
static const unsigned char max_outputs[PVK_OP_COUNT] = {PVK_OPS(OUTPUTS_ROW)};
#undef OUTPUTS_ROW

unsigned pvk_op_max_inputs(enum pvk_op_type type)
{
    return (unsigned)type < PVK_OP_COUNT ? max_inputs[type] : 0;
}

unsigned pvk_op_max_outputs(enum pvk_op_type type)
{
    return (unsigned)type < PVK_OP_COUNT ? max_outputs[type] : 0;
}

const char *pvk_act_name(enum pvk_act act)
{
    static const char *const names[PVK_ACT_COUNT] = {
        [PVK_ACT_NONE] = "none",           [PVK_ACT_RELU] = "relu",           [PVK_ACT_RELU6] = "relu6",
        [PVK_ACT_CLIP] = "clip",           [PVK_ACT_HARDSWISH] = "hardswish", [PVK_ACT_HARDSIGMOID] = "hardsigmoid",
        [PVK_ACT_SIGMOID] = "sigmoid",     [PVK_ACT_SWISH] = "swish",         [PVK_ACT_GELU_ERF] = "gelu_erf",
        [PVK_ACT_GELU_TANH] = "gelu_tanh",
    };
    return (unsigned)act < PVK_ACT_COUNT && names[act] ? names[act] : "?";
}
