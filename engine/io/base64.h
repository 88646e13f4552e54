/*
 * Internal: strict base64 (RFC 4648 standard alphabet, '=' padding, no line
 * breaks or whitespace) for the weight blobs of the model file. Decoding is
 * strict on purpose: a damaged file must fail loudly, not load garbage.
 */
#pragma once
#include <stdbool.h>
#include <stddef.h>

/* Length of the encoding of `n` bytes, without the NUL; false on overflow. */
bool base64_encoded_len(size_t n, size_t *out);
/* Writes the encoding of data[0..n) and a terminating NUL into dst, which
 * holds at least base64_encoded_len(n) + 1 bytes. */
void base64_encode(const void *data, size_t n, char *dst);

/* Decodes exactly `text_len` characters into `dst`, which must receive
 * exactly `dst_len` bytes. On failure returns false and writes why (naming
 * the offending character offset, or the expected and actual lengths). */
bool base64_decode_exact(const char *text, size_t text_len, void *dst, size_t dst_len, char *why, size_t why_size);
