/* base64: standard base64 (RFC 4648 section 4, alphabet A-Z a-z 0-9 + /) with no I/O.
 *
 * The encoder always pads with '='. The decoder is strict about what it reads
 * (no whitespace, no URL-safe alphabet, '=' only as final padding) but accepts
 * input with or without padding, because secrets and signatures are often
 * copied around with the padding dropped.
 */
#ifndef PIXRELAY_BASE64_H
#define PIXRELAY_BASE64_H

#include <stddef.h>

/* Length of the padded encoding of `n` bytes, without the terminating NUL:
 * 4 * ceil(n / 3). */
size_t base64_encoded_len(size_t n);

/* Encode `n` bytes of `in` (may be NULL when n is 0) into `out`, padded and
 * NUL-terminated; `out` needs base64_encoded_len(n) + 1 bytes. Cannot fail. */
void base64_encode(const void *in, size_t n, char *out);

/* Decode exactly `len` characters of `in`. Accepted: characters of the standard
 * alphabet, then either the padding that makes the length a multiple of 4 ("QQ==",
 * "QUI=") or no padding at all ("QQ", "QUI"). Refused (NULL): any other character
 * (whitespace, NUL, '-', '_'), '=' anywhere but the end, partial or excess padding
 * ("QQ=", "QUJD===="), and a final group of a single character ("QUJDR").
 * Non-zero unused bits in the last character are ignored ("QR==" decodes as "QQ==").
 * On success returns a new buffer that the caller frees, with its length in
 * `*outlen`; the buffer holds one extra NUL byte after the data, so decoded text
 * can be used as a C string. `*outlen` is written only on success. Empty input
 * decodes to an empty buffer (not NULL). */
unsigned char *base64_decode(const char *in, size_t len, size_t *outlen);

#endif
