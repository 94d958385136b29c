#include "convert/pb.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(char *err, size_t err_len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, err_len, fmt, ap);
    va_end(ap);
    return -1;
}

static int read_varint(struct pb_reader *r, uint64_t *out)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (r->p >= r->end)
            return -1;
        uint8_t b = *r->p++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *out = v;
            return 0;
        }
    }
    return -1; /* more than 10 bytes */
}

static uint64_t read_le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

int pb_next(struct pb_reader *r, struct pb_field *f, char *err, size_t err_len)
{
    if (r->p >= r->end)
        return 0;
    uint64_t key;
    if (read_varint(r, &key))
        return fail(err, err_len, "protobuf: truncated or overlong field key");
    f->number = (uint32_t)(key >> 3);
    f->wire = (enum pb_wire)(key & 7);
    if (f->number == 0 || key >> 3 > 0x1fffffff)
        return fail(err, err_len, "protobuf: invalid field number %llu", (unsigned long long)(key >> 3));
    f->value = 0;
    f->bytes.p = f->bytes.end = NULL;
    switch (f->wire) {
    case PB_VARINT:
        if (read_varint(r, &f->value))
            return fail(err, err_len, "protobuf: truncated varint in field %u", f->number);
        return 1;
    case PB_FIXED64:
    case PB_FIXED32: {
        int n = f->wire == PB_FIXED64 ? 8 : 4;
        if (r->end - r->p < n)
            return fail(err, err_len, "protobuf: truncated fixed%d in field %u", n * 8, f->number);
        f->value = read_le(r->p, n);
        r->p += n;
        return 1;
    }
    case PB_LEN: {
        uint64_t len;
        if (read_varint(r, &len))
            return fail(err, err_len, "protobuf: truncated length in field %u", f->number);
        if (len > (uint64_t)(r->end - r->p))
            return fail(err, err_len, "protobuf: field %u claims %llu bytes, only %zu left", f->number,
                        (unsigned long long)len, (size_t)(r->end - r->p));
        f->bytes.p = r->p;
        f->bytes.end = r->p + len;
        r->p += len;
        return 1;
    }
    default: return fail(err, err_len, "protobuf: unsupported wire type %d in field %u", (int)f->wire, f->number);
    }
}

int pb_repeated(const struct pb_field *f, int fixed_size, int (*add)(void *ctx, uint64_t v), void *ctx, char *err,
                size_t err_len)
{
    int want = fixed_size == 0 ? PB_VARINT : fixed_size == 4 ? PB_FIXED32 : PB_FIXED64;
    if ((int)f->wire == want)
        return add(ctx, f->value) ? fail(err, err_len, "protobuf: out of memory") : 0;
    if (f->wire != PB_LEN)
        return fail(err, err_len, "protobuf: field %u has wire type %d, expected %d or packed", f->number, (int)f->wire,
                    want);
    struct pb_reader r = f->bytes;
    while (r.p < r.end) {
        uint64_t v;
        if (fixed_size == 0) {
            if (read_varint(&r, &v))
                return fail(err, err_len, "protobuf: truncated packed varint in field %u", f->number);
        } else {
            if (r.end - r.p < fixed_size)
                return fail(err, err_len, "protobuf: packed field %u is not a multiple of %d bytes", f->number,
                            fixed_size);
            v = read_le(r.p, fixed_size);
            r.p += fixed_size;
        }
        if (add(ctx, v))
            return fail(err, err_len, "protobuf: out of memory");
    }
    return 0;
}

void pb_put_raw(struct pb_writer *w, const void *data, size_t len)
{
    if (w->failed || len == 0)
        return;
    if (w->len + len > w->cap) {
        size_t cap = w->cap ? w->cap : 256;
        while (cap < w->len + len)
            cap *= 2;
        uint8_t *p = realloc(w->data, cap);
        if (!p) {
            w->failed = 1;
            return;
        }
        w->data = p;
        w->cap = cap;
    }
    memcpy(w->data + w->len, data, len);
    w->len += len;
}

static void put_varint(struct pb_writer *w, uint64_t v)
{
    uint8_t buf[10];
    int n = 0;
    do {
        buf[n] = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v)
            buf[n] |= 0x80;
        n++;
    } while (v);
    pb_put_raw(w, buf, (size_t)n);
}

void pb_put_varint_field(struct pb_writer *w, uint32_t number, uint64_t v)
{
    put_varint(w, (uint64_t)number << 3 | PB_VARINT);
    put_varint(w, v);
}

void pb_put_fixed32_field(struct pb_writer *w, uint32_t number, uint32_t v)
{
    uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    put_varint(w, (uint64_t)number << 3 | PB_FIXED32);
    pb_put_raw(w, b, 4);
}

void pb_put_bytes_field(struct pb_writer *w, uint32_t number, const void *data, size_t len)
{
    put_varint(w, (uint64_t)number << 3 | PB_LEN);
    put_varint(w, len);
    pb_put_raw(w, data, len);
}

void pb_put_string_field(struct pb_writer *w, uint32_t number, const char *s)
{
    pb_put_bytes_field(w, number, s, strlen(s));
}

void pb_put_message_field(struct pb_writer *w, uint32_t number, struct pb_writer *sub)
{
    if (sub->failed)
        w->failed = 1;
    pb_put_bytes_field(w, number, sub->data, sub->len);
    pb_writer_free(sub);
}

void pb_writer_free(struct pb_writer *w)
{
    free(w->data);
    memset(w, 0, sizeof *w);
}
