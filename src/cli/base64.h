/* Base64 (RFC 4648) decoding, for image bytes sent inside JSON requests. */
#ifndef PPOCR_CLI_BASE64_H
#define PPOCR_CLI_BASE64_H

#include <stddef.h>

/* Decodes text in the standard or the URL-safe alphabet, padding optional, ASCII whitespace
 * (line breaks of wrapped base64) skipped. Returns 0 with *out (malloc'd, free it) and *out_len,
 * or -1 with a one-line reason in err: a byte outside the alphabet (its offset), a length that no
 * encoding has, or no memory. */
int cli_base64_decode(const char *text, size_t len, unsigned char **out, size_t *out_len, char *err, size_t err_len);

/* A data URL's header ("data:[<type>][;base64],", within its first 256 bytes), if text begins with
 * one: returns 1 with *payload / *payload_len set after the comma and *is_base64 said by the header;
 * 0 when text is no data URL. */
int cli_data_url_payload(const char *text, size_t len, const char **payload, size_t *payload_len, int *is_base64);

#endif
