/* Protobuf wire-format reading and writing, just enough for ONNX: varints, fixed32/64 and
 * length-delimited fields. The reader never reads past `end`; every failure is a message. */
#ifndef PPOCR_CONVERT_PB_H
#define PPOCR_CONVERT_PB_H

#include <stddef.h>
#include <stdint.h>

enum pb_wire { PB_VARINT = 0, PB_FIXED64 = 1, PB_LEN = 2, PB_FIXED32 = 5 };

struct pb_reader {
    const uint8_t *p, *end;
};

/* One field of a message: its number, wire type and payload (value for VARINT/FIXED*,
 * bytes for LEN). */
struct pb_field {
    uint32_t number;
    enum pb_wire wire;
    uint64_t value;
    struct pb_reader bytes;
};

/* Returns 1 and the next field, 0 at the end of the message, -1 on malformed input (err set). */
int pb_next(struct pb_reader *r, struct pb_field *f, char *err, size_t err_len);

/* Decodes a repeated scalar field that may be packed (LEN) or not (one value); calls `add`
 * for each element. `fixed_size` is 0 for varints, 4 or 8 for fixed types. */
int pb_repeated(const struct pb_field *f, int fixed_size, int (*add)(void *ctx, uint64_t v), void *ctx, char *err,
                size_t err_len);

/* A growable output buffer for writing messages (used to build ONNX files in tests). */
struct pb_writer {
    uint8_t *data;
    size_t len, cap;
    int failed; /* out of memory: all later writes are ignored */
};

void pb_put_varint_field(struct pb_writer *w, uint32_t number, uint64_t v);
void pb_put_fixed32_field(struct pb_writer *w, uint32_t number, uint32_t v);
void pb_put_bytes_field(struct pb_writer *w, uint32_t number, const void *data, size_t len);
void pb_put_string_field(struct pb_writer *w, uint32_t number, const char *s);
/* Appends `sub` as a length-delimited field and frees it. */
void pb_put_message_field(struct pb_writer *w, uint32_t number, struct pb_writer *sub);
void pb_put_raw(struct pb_writer *w, const void *data, size_t len);
void pb_writer_free(struct pb_writer *w);

#endif
