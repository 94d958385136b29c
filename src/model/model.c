/* Reads a .pvk file into memory and checks every byte that the rest of the program will trust: a corrupt
 * or truncated file gives a one-line error, never an out-of-bounds read. */
#include "model/model.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/format.h"

_Static_assert(sizeof(struct pvk_tensor) == 144, "pvk_tensor is part of the file format");
_Static_assert(sizeof(struct pvk_op) == 208, "pvk_op is part of the file format");
_Static_assert(sizeof(struct pvk_file_header) % 8 == 0, "header keeps 8-byte alignment");

struct model_impl {
    void *base;
    size_t size;
    const char **dict;
};

#define FNV_OFFSET_BASIS 0xcbf29ce484222325ull
#define FNV_PRIME 0x100000001b3ull
#define CHECKSUM_LANES 4
#define CHECKSUM_BLOCK (CHECKSUM_LANES * 8)

static uint64_t fnv1a64_bytes(uint64_t h, const uint8_t *p, size_t len)
{
    for (size_t i = 0; i < len; i++)
        h = (h ^ p[i]) * FNV_PRIME;
    return h;
}

static void checksum_block(uint64_t lane[CHECKSUM_LANES], const uint8_t *block)
{
    for (int k = 0; k < CHECKSUM_LANES; k++) {
        uint64_t word;
        memcpy(&word, block + 8 * k, 8); /* little-endian hosts only, as the whole format */
        lane[k] = (lane[k] ^ word) * FNV_PRIME;
    }
}

uint64_t pvk_file_checksum(const void *file, uint64_t size)
{
    const uint8_t *p = file;
    uint64_t lane[CHECKSUM_LANES];
    for (int k = 0; k < CHECKSUM_LANES; k++)
        lane[k] = FNV_OFFSET_BASIS ^ (uint64_t)k;
    /* the first block with the checksum field as zero, then the rest in place, the last block
     * padded with zeros */
    enum { FIELD = offsetof(struct pvk_file_header, checksum) };
    _Static_assert(FIELD + 8 <= CHECKSUM_BLOCK, "the checksum field lies in the first block");
    uint8_t block[CHECKSUM_BLOCK];
    uint64_t at = 0;
    for (; at + CHECKSUM_BLOCK <= size; at += CHECKSUM_BLOCK) {
        if (at == 0) {
            memcpy(block, p, CHECKSUM_BLOCK);
            memset(block + FIELD, 0, 8);
            checksum_block(lane, block);
        } else {
            checksum_block(lane, p + at);
        }
    }
    if (at < size) { /* a file shorter than one block has no checksum field to clear */
        memset(block, 0, sizeof block);
        memcpy(block, p + at, (size_t)(size - at));
        if (at == 0 && size >= FIELD + 8)
            memset(block + FIELD, 0, 8);
        checksum_block(lane, block);
    }
    uint8_t tail[CHECKSUM_BLOCK + 8];
    memcpy(tail, lane, CHECKSUM_BLOCK);
    memcpy(tail + CHECKSUM_BLOCK, &size, 8);
    return fnv1a64_bytes(FNV_OFFSET_BASIS, tail, sizeof tail);
}

static int fail(char *err, size_t err_len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, err_len, fmt, ap);
    va_end(ap);
    return -1;
}

static int terminated(const char *s, size_t n)
{
    return memchr(s, 0, n) != NULL;
}

/* [off, off+len) inside [0, size) without overflow. */
static int in_file(uint64_t off, uint64_t len, uint64_t size)
{
    return off <= size && len <= size - off;
}

static int valid_utf8(const unsigned char *s)
{
    while (*s) {
        int n = *s < 0x80 ? 0 : (*s >> 5) == 6 ? 1 : (*s >> 4) == 14 ? 2 : (*s >> 3) == 30 ? 3 : -1;
        if (n < 0)
            return 0;
        unsigned cp = n == 0 ? *s : *s & (0x3f >> n);
        for (int k = 1; k <= n; k++) {
            if ((s[k] & 0xc0) != 0x80)
                return 0;
            cp = cp << 6 | (s[k] & 0x3f);
        }
        static const unsigned min_cp[] = {0, 0x80, 0x800, 0x10000};
        if (cp < min_cp[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
            return 0;
        s += n + 1;
    }
    return 1;
}

static int64_t dtype_size(uint32_t dtype)
{
    return dtype == PVK_DTYPE_F16 ? 2 : dtype == PVK_DTYPE_F32 || dtype == PVK_DTYPE_I32 ? 4 : 0;
}

static int check_tensor(const struct pvk_file_header *h, const struct pvk_tensor *t, int id, char *err, size_t err_len)
{
    if (!terminated(t->name, sizeof t->name))
        return fail(err, err_len, "tensor %d: name is not NUL-terminated", id);
    if (t->kind > PVK_TENSOR_ACTIVATION || !dtype_size(t->dtype) || t->layout != PVK_LAYOUT_ROW_MAJOR ||
        t->ndim > PVK_MAX_DIMS)
        return fail(err, err_len, "tensor %d (%s): invalid kind, dtype, layout or ndim", id, t->name);
    int64_t numel = 1;
    for (uint32_t d = 0; d < t->ndim; d++) {
        int64_t s = t->shape[d];
        if (s < (t->kind == PVK_TENSOR_ACTIVATION ? -1 : 0) || s > ((int64_t)1 << 31))
            return fail(err, err_len, "tensor %d (%s): invalid dimension %lld", id, t->name, (long long)s);
        /* compared before multiplying: numel (up to 2^40) times s (up to 2^31) overflows int64 */
        if (s > 0 && numel > ((int64_t)1 << 40) / s)
            return fail(err, err_len, "tensor %d (%s): too large", id, t->name);
        if (s > 0)
            numel *= s;
    }
    if (t->kind == PVK_TENSOR_ACTIVATION)
        return t->nbytes || t->offset ? fail(err, err_len, "tensor %d (%s): an activation with data", id, t->name) : 0;
    if ((uint64_t)(numel * dtype_size(t->dtype)) != t->nbytes)
        return fail(err, err_len, "tensor %d (%s): %llu bytes do not match its shape", id, t->name,
                    (unsigned long long)t->nbytes);
    if (t->offset % PVK_FILE_ALIGN || t->offset < h->data_offset ||
        !in_file(t->offset - h->data_offset, t->nbytes, h->data_bytes))
        return fail(err, err_len, "tensor %d (%s): data offset %llu is misaligned or outside the data section", id,
                    t->name, (unsigned long long)t->offset);
    return 0;
}

static int check_ref(const struct pvk_file_header *h, const struct pvk_tensor *tensors, int32_t id, uint32_t kind)
{
    return id >= 0 && (uint32_t)id < h->n_tensors && tensors[id].kind == kind;
}

/* Kernel sizes, strides, dilations and pads: far above any real net's (PP-OCR's are under 10), and
 * low enough that the shape arithmetic in int (pads + dilation * (kernel - 1)) cannot overflow. */
#define PVK_ATTR_MAX 4096

/* Every one of the n ints at v is in [lo, PVK_ATTR_MAX]. */
static int all_in_range(const int32_t *v, int n, int32_t lo)
{
    for (int i = 0; i < n; i++)
        if (v[i] < lo || v[i] > PVK_ATTR_MAX)
            return 0;
    return 1;
}

/* Attribute checks, one per op type (check_<name> of PVK_OPS): 1 when the record is usable. */
static int check_conv(const struct pvk_op *op)
{
    const union pvk_op_attr *a = &op->attr;
    const int32_t sizes[] = {a->conv.kh, a->conv.kw, a->conv.sh, a->conv.sw, a->conv.dh, a->conv.dw};
    const int32_t pads[] = {a->conv.pad_t, a->conv.pad_l, a->conv.pad_b, a->conv.pad_r};
    if (!all_in_range(sizes, 6, 1) || !all_in_range(pads, 4, 0) || a->conv.group < 1 || a->conv.residual < 0 ||
        a->conv.residual > PVK_RESIDUAL_BEFORE_ACT)
        return 0;
    return (a->conv.residual != PVK_RESIDUAL_NONE) == (op->n_inputs == 2) && op->weights[0] >= 0;
}

static int check_conv2d(const struct pvk_op *op)
{
    return check_conv(op);
}
static int check_conv_transpose2d(const struct pvk_op *op)
{
    return check_conv(op);
}

static int check_pool2d(const struct pvk_op *op)
{
    const union pvk_op_attr *a = &op->attr;
    const int32_t sizes[] = {a->pool.kh, a->pool.kw, a->pool.sh, a->pool.sw};
    const int32_t pads[] = {a->pool.pad_t, a->pool.pad_l, a->pool.pad_b, a->pool.pad_r};
    return a->pool.kind >= 0 && a->pool.kind <= PVK_POOL_GLOBAL_AVG &&
           (a->pool.kind == PVK_POOL_GLOBAL_AVG || (all_in_range(sizes, 4, 1) && all_in_range(pads, 4, 0)));
}

static int check_resize(const struct pvk_op *op)
{
    const union pvk_op_attr *a = &op->attr;
    return a->resize.mode >= 0 && a->resize.mode <= PVK_RESIZE_BILINEAR_ALIGN_CORNERS && a->resize.scale_h > 0 &&
           a->resize.scale_w > 0;
}

static int check_axis(const struct pvk_op *op)
{
    return op->attr.axis.axis >= 0 && op->attr.axis.axis < PVK_MAX_DIMS;
}
static int check_concat(const struct pvk_op *op)
{
    return check_axis(op);
}
static int check_softmax(const struct pvk_op *op)
{
    return check_axis(op);
}

static int check_binary(const struct pvk_op *op)
{
    return op->attr.binary.kind >= 0 && op->attr.binary.kind <= PVK_BIN_DIV &&
           (op->n_inputs == 2) != (op->weights[0] >= 0);
}

static int check_unary(const struct pvk_op *op)
{
    return 1;
}
static int check_affine(const struct pvk_op *op)
{
    return op->weights[0] >= 0 && op->weights[1] >= 0;
}
static int check_layernorm(const struct pvk_op *op)
{
    return op->weights[0] >= 0 && op->weights[1] >= 0;
}

static int check_se(const struct pvk_op *op)
{
    const union pvk_op_attr *a = &op->attr;
    return op->weights[0] >= 0 && op->weights[1] >= 0 && op->weights[2] >= 0 && op->weights[3] >= 0 &&
           (a->se.residual == 0 || a->se.residual == 1) && a->se.gate_act >= 0 && a->se.gate_act < PVK_ACT_COUNT;
}

static int check_matmul(const struct pvk_op *op)
{
    return (op->n_inputs == 2) != (op->weights[0] >= 0);
}
static int check_attention(const struct pvk_op *op)
{
    return op->attr.attention.heads > 0;
}

static int check_transpose(const struct pvk_op *op)
{
    const union pvk_op_attr *a = &op->attr;
    if (a->transpose.ndim < 1 || a->transpose.ndim > PVK_MAX_DIMS)
        return 0;
    int seen = 0;
    for (int d = 0; d < a->transpose.ndim; d++) {
        if (a->transpose.perm[d] < 0 || a->transpose.perm[d] >= a->transpose.ndim || (seen >> a->transpose.perm[d] & 1))
            return 0;
        seen |= 1 << a->transpose.perm[d];
    }
    return 1;
}

static int check_reshape(const struct pvk_op *op)
{
    const union pvk_op_attr *a = &op->attr;
    if (a->reshape.ndim < 0 || a->reshape.ndim > PVK_MAX_DIMS)
        return 0;
    int inferred = 0;
    for (int d = 0; d < a->reshape.ndim; d++)
        if (a->reshape.shape[d] < -1 || (a->reshape.shape[d] == -1 && inferred++))
            return 0;
    return 1;
}

static int check_slice(const struct pvk_op *op)
{
    const union pvk_op_attr *a = &op->attr;
    return a->slice.axis >= 0 && a->slice.axis < PVK_MAX_DIMS && a->slice.step >= 1 && a->slice.start >= 0 &&
           a->slice.end >= a->slice.start;
}

static int check_argmax(const struct pvk_op *op)
{
    return 1;
}

#define CHECK_ROW(id, value, name, max_in, max_out) [PVK_OP_##id] = check_##name,
static int (*const check_attr[PVK_OP_COUNT])(const struct pvk_op *op) = {PVK_OPS(CHECK_ROW)};
#undef CHECK_ROW

static int check_op(const struct pvk_file_header *h, const struct pvk_tensor *tensors, const struct pvk_op *op, int i,
                    char *err, size_t err_len)
{
    if (!terminated(op->name, sizeof op->name))
        return fail(err, err_len, "op %d: name is not NUL-terminated", i);
    if (op->type < 1 || op->type >= PVK_OP_COUNT || op->act >= PVK_ACT_COUNT)
        return fail(err, err_len, "op %d (%s): invalid op type %u or activation %u", i, op->name, op->type, op->act);
    if (op->n_inputs < 1 || op->n_inputs > PVK_MAX_INPUTS || op->n_outputs < 1 || op->n_outputs > 2)
        return fail(err, err_len, "op %d (%s): invalid input or output count", i, op->name);
    for (uint32_t k = 0; k < PVK_MAX_INPUTS; k++)
        if (k < op->n_inputs ? !check_ref(h, tensors, op->inputs[k], PVK_TENSOR_ACTIVATION) : op->inputs[k] != -1)
            return fail(err, err_len, "op %d (%s): input %u is not a valid activation id", i, op->name, k);
    for (uint32_t k = 0; k < 2; k++)
        if (k < op->n_outputs ? !check_ref(h, tensors, op->outputs[k], PVK_TENSOR_ACTIVATION) : op->outputs[k] != -1)
            return fail(err, err_len, "op %d (%s): output %u is not a valid activation id", i, op->name, k);
    for (int k = 0; k < PVK_MAX_WEIGHTS; k++)
        if (op->weights[k] != -1 && !check_ref(h, tensors, op->weights[k], PVK_TENSOR_CONSTANT))
            return fail(err, err_len, "op %d (%s): weight %d is not a valid constant id", i, op->name, k);
    /* Inputs each op type reads: a reader may rely on them being there. */
    if (op->n_inputs > pvk_op_max_inputs(op->type) || op->n_outputs > pvk_op_max_outputs(op->type))
        return fail(err, err_len, "op %d (%s): too many inputs or outputs for %s", i, op->name,
                    pvk_op_type_name(op->type));
    if (!check_attr[op->type](op))
        return fail(err, err_len, "op %d (%s): invalid attributes for %s", i, op->name, pvk_op_type_name(op->type));
    return 0;
}

static int validate(const uint8_t *base, size_t size, struct pvk_model *m, struct model_impl *impl, char *err,
                    size_t err_len)
{
    struct pvk_file_header h;
    if (size < sizeof h)
        return fail(err, err_len, "file too small (%zu bytes) for a model header", size);
    memcpy(&h, base, sizeof h);
    if (memcmp(h.magic, PVK_FILE_MAGIC, 8))
        return fail(err, err_len, "not a ppocr-vk model (bad magic)");
    if (h.endian_tag != PVK_FILE_ENDIAN_TAG)
        return fail(err, err_len, "model was written with another byte order");
    if (h.version != PVK_FILE_VERSION)
        return fail(err, err_len, "model format version %u, this build reads %u (re-run tools/fetch-models.sh)",
                    h.version, PVK_FILE_VERSION);
    if (h.header_size != sizeof h || h.tensor_size != sizeof(struct pvk_tensor) || h.op_size != sizeof(struct pvk_op))
        return fail(err, err_len, "model header, tensor or op record size does not match this build");
    if (h.file_size != size)
        return fail(err, err_len, "file is %zu bytes, header says %llu (truncated?)", size,
                    (unsigned long long)h.file_size);
    if (pvk_file_checksum(base, size) != h.checksum)
        return fail(err, err_len, "checksum mismatch: the model file is corrupt");
    if (h.net_kind < PVK_NET_DET || h.net_kind > PVK_NET_REC)
        return fail(err, err_len, "invalid net kind %u", h.net_kind);
    if (!terminated(h.source, sizeof h.source))
        return fail(err, err_len, "source name is not NUL-terminated");
    if (h.n_tensors == 0 || h.n_ops == 0 || h.n_tensors > (1u << 24) || h.n_ops > (1u << 24))
        return fail(err, err_len, "invalid tensor or op count");
    if (h.tensors_offset % PVK_FILE_ALIGN || h.ops_offset % PVK_FILE_ALIGN || h.data_offset % PVK_FILE_ALIGN ||
        !in_file(h.tensors_offset, (uint64_t)h.n_tensors * sizeof(struct pvk_tensor), size) ||
        !in_file(h.ops_offset, (uint64_t)h.n_ops * sizeof(struct pvk_op), size) ||
        !in_file(h.dict_offset, h.dict_bytes, size) || !in_file(h.data_offset, h.data_bytes, size) ||
        h.tensors_offset < sizeof h || h.ops_offset < sizeof h || (h.dict_bytes && h.dict_offset < sizeof h) ||
        h.data_offset < sizeof h)
        return fail(err, err_len, "a section lies outside the file or is misaligned");
    const struct pvk_tensor *tensors = (const struct pvk_tensor *)(base + h.tensors_offset);
    const struct pvk_op *ops = (const struct pvk_op *)(base + h.ops_offset);
    for (uint32_t i = 0; i < h.n_tensors; i++)
        if (check_tensor(&h, &tensors[i], (int)i, err, err_len))
            return -1;
    for (uint32_t i = 0; i < h.n_ops; i++)
        if (check_op(&h, tensors, &ops[i], (int)i, err, err_len))
            return -1;
    if (!check_ref(&h, tensors, h.input, PVK_TENSOR_ACTIVATION) ||
        !check_ref(&h, tensors, h.output, PVK_TENSOR_ACTIVATION))
        return fail(err, err_len, "input or output is not a valid activation id");
    if ((h.net_kind == PVK_NET_REC) != (h.n_dict > 0) || h.n_dict > (1u << 24))
        return fail(err, err_len, "a recognizer needs a dictionary and other nets have none");
    if (h.n_dict) {
        if (!(impl->dict = malloc(h.n_dict * sizeof *impl->dict)))
            return fail(err, err_len, "out of memory");
        const char *p = (const char *)base + h.dict_offset, *end = p + h.dict_bytes;
        for (uint32_t k = 0; k < h.n_dict; k++) {
            const char *nul = p < end ? memchr(p, 0, (size_t)(end - p)) : NULL;
            if (!nul)
                return fail(err, err_len, "dictionary entry %u is not NUL-terminated", k);
            if (nul == p || !valid_utf8((const unsigned char *)p))
                return fail(err, err_len, "dictionary entry %u is empty or not valid UTF-8", k);
            impl->dict[k] = p;
            p = nul + 1;
        }
        if (p != end)
            return fail(err, err_len, "dictionary section has trailing bytes");
    }
    m->net_kind = h.net_kind;
    m->n_tensors = h.n_tensors;
    m->n_ops = h.n_ops;
    m->tensors = tensors;
    m->ops = ops;
    m->input = h.input;
    m->output = h.output;
    m->n_dict = h.n_dict;
    m->dict = impl->dict;
    m->source = ((const struct pvk_file_header *)base)->source;
    return 0;
}

static int finish(struct pvk_model *m, struct model_impl *impl, char *err, size_t err_len)
{
    m->impl_ = impl;
    if (validate(impl->base, impl->size, m, impl, err, err_len)) {
        pvk_model_free(m);
        return -1;
    }
    return 0;
}

/* Reads all of fd into a PVK_FILE_ALIGN-aligned allocation. Returns 0, or -1 with errno set. */
static int read_whole(int fd, size_t size, void **out)
{
    size_t alloc = (size + PVK_FILE_ALIGN - 1) / PVK_FILE_ALIGN * PVK_FILE_ALIGN;
    uint8_t *buf = aligned_alloc(PVK_FILE_ALIGN, alloc);
    if (!buf)
        return -1;
    size_t got = 0;
    while (got < size) {
        ssize_t n = read(fd, buf + got, size - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            int e = n < 0 ? errno : 0;
            free(buf);
            errno = e;
            return -1; /* errno 0: the file shrank while it was read */
        }
        got += (size_t)n;
    }
    *out = buf;
    return 0;
}

int pvk_model_load(const char *path, struct pvk_model *model, char *err, size_t err_len)
{
    memset(model, 0, sizeof *model);
    /* O_NONBLOCK: a FIFO named det.pvk is refused below instead of waiting for a writer */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return fail(err, err_len, "%s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st)) {
        int e = errno;
        close(fd);
        return fail(err, err_len, "%s: %s", path, strerror(e));
    }
    if (!S_ISREG(st.st_mode) || st.st_size <= 0 || st.st_size > PVK_MODEL_MAX_FILE_BYTES) {
        close(fd);
        if (!S_ISREG(st.st_mode))
            return fail(err, err_len, "%s: not a regular file", path);
        if (st.st_size > PVK_MODEL_MAX_FILE_BYTES)
            return fail(err, err_len, "%s: file too large (%lld bytes, the limit is %lld)", path, (long long)st.st_size,
                        PVK_MODEL_MAX_FILE_BYTES);
        return fail(err, err_len, "%s: empty or unreadable", path);
    }
    /* read, not mapped: the file may be overwritten in place while the engine runs (cp truncates
     * and rewrites), and a mapping would then fault (SIGBUS) or change under the loaded nets */
    void *base;
    int read_rc = read_whole(fd, (size_t)st.st_size, &base);
    int read_errno = errno;
    close(fd);
    if (read_rc)
        return fail(err, err_len, "%s: cannot read: %s", path,
                    read_errno ? strerror(read_errno) : "the file changed while it was read");
    struct model_impl *impl = calloc(1, sizeof *impl);
    if (!impl) {
        free(base);
        return fail(err, err_len, "out of memory");
    }
    impl->base = base;
    impl->size = (size_t)st.st_size;
    char inner[256];
    if (finish(model, impl, inner, sizeof inner))
        return fail(err, err_len, "%s: %s", path, inner);
    return 0;
}

int pvk_model_load_memory(const void *data, size_t size, struct pvk_model *model, char *err, size_t err_len)
{
    memset(model, 0, sizeof *model);
    struct model_impl *impl = calloc(1, sizeof *impl);
    size_t alloc = (size + PVK_FILE_ALIGN - 1) / PVK_FILE_ALIGN * PVK_FILE_ALIGN;
    void *copy = impl ? aligned_alloc(PVK_FILE_ALIGN, alloc ? alloc : PVK_FILE_ALIGN) : NULL;
    if (!copy) {
        free(impl);
        return fail(err, err_len, "out of memory");
    }
    if (size)
        memcpy(copy, data, size);
    impl->base = copy;
    impl->size = size;
    return finish(model, impl, err, err_len);
}

void pvk_model_free(struct pvk_model *model)
{
    struct model_impl *impl = model->impl_;
    if (impl) {
        free(impl->base);
        free(impl->dict);
        free(impl);
    }
    memset(model, 0, sizeof *model);
}

const void *pvk_tensor_data(const struct pvk_model *model, int32_t tensor_id)
{
    const struct model_impl *impl = model->impl_;
    if (!impl || tensor_id < 0 || (uint32_t)tensor_id >= model->n_tensors ||
        model->tensors[tensor_id].kind != PVK_TENSOR_CONSTANT)
        return NULL;
    return (const uint8_t *)impl->base + model->tensors[tensor_id].offset;
}

int64_t pvk_tensor_numel(const struct pvk_tensor *t)
{
    int64_t n = 1;
    for (uint32_t d = 0; d < t->ndim && d < PVK_MAX_DIMS; d++)
        n *= t->shape[d];
    return n;
}
