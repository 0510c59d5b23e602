/* ids: identifiers and secrets from OpenSSL's CSPRNG.
 *
 * Every function aborts if the random generator fails: an id or key made from
 * predictable bytes would be worse than stopping.
 */
#ifndef PIXRELAY_IDS_H
#define PIXRELAY_IDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define IDS_ULID_LEN 26
/* The digits of a ULID: Crockford's base32, upper case, without I L O U. */
#define IDS_CROCKFORD "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
#define IDS_UUID_LEN 36

/* Fill `n` bytes with cryptographically strong random data. */
void ids_random(void *buf, size_t n);

/* Write a ULID (26 Crockford base32 chars + NUL) for `ms` milliseconds since the
 * epoch; `out` needs IDS_ULID_LEN + 1 bytes. */
void ids_ulid_at(char out[IDS_ULID_LEN + 1], uint64_t ms);
/* The same from a per-thread pool of random bytes (512 drawn at a time):
 * twenty times cheaper, for ids that are made at every request and need not
 * stay unguessable (event ids, request ids); never for a secret or an id
 * that opens something (charge ids open GET /v1/qrcode/{id}). */
void ids_pooled_ulid_at(char out[IDS_ULID_LEN + 1], uint64_t ms);
/* A ULID for the current time. */
void ids_ulid(char out[IDS_ULID_LEN + 1]);
/* True when `s` is exactly a canonical (upper-case) ULID. */
bool ids_is_ulid(const char *s);
/* The value (0..31) of ULID digit `c` (IDS_CROCKFORD), or -1 when it is none. */
int ids_crockval(char c);

/* Write a random (version 4) UUID in lower-case 8-4-4-4-12 form + NUL. */
void ids_uuid4(char out[IDS_UUID_LEN + 1]);

/* Write `nchars` random base62 characters + NUL (each char carries ~5.95 bits,
 * drawn without modulo bias). */
void ids_base62(char *out, size_t nchars);

/* Lower-case hex of `n` bytes into `out` (2n + 1 bytes). */
void ids_hex(char *out, const unsigned char *in, size_t n);
/* The value of hex digit `c` (either case), or -1 when it is none. */
int ids_hexval(char c);

/* SHA-256 of `len` bytes as 64 lower-case hex characters + NUL. */
void ids_sha256_hex(char out[65], const void *data, size_t len);
/* Whether the secret `token` (len bytes) is the one whose SHA-256 is
 * `sha_hex` (64 lower-case hex, as a secret is stored): the digests are
 * compared in constant time. False for an empty token and for a sha_hex
 * that is not 64 characters (no secret stored). Nothing is retained. */
bool ids_sha256_matches(const void *token, size_t len, const char *sha_hex);

/* Milliseconds since the Unix epoch (wall clock). */
uint64_t ids_now_ms(void);
/* Microseconds since the Unix epoch (wall clock): a request's or a
 * command's latency. */
uint64_t ids_now_us(void);

#endif
