/* sign: Standard Webhooks signatures (HMAC-SHA256), no I/O.
 *
 * A delivery carries `webhook-id`, `webhook-timestamp` (Unix seconds of this
 * attempt) and `webhook-signature`, a space-separated list of "v1,<base64 MAC>"
 * entries (several while a secret rotates). The MAC is HMAC-SHA256 over
 * "<webhook-id>.<webhook-timestamp>.<raw body>", keyed with the base64-decoded
 * part of the secret after "whsec_".
 */
#ifndef PIXRELAY_SIGN_H
#define PIXRELAY_SIGN_H

#include <stdbool.h>
#include <stddef.h>

#define SIGN_SECRET_PREFIX "whsec_"
/* "whsec_" + base64 of 32 bytes, without the NUL */
#define SIGN_SECRET_LEN 50
/* "v1," + base64 of a 32-byte MAC, without the NUL */
#define SIGN_SIGNATURE_LEN 47

/* Negative results of sign_signature and sign_verify. */
enum sign_error {
	SIGN_BAD_SECRET = -1,	 /* secret is not base64, or decodes to no bytes */
	SIGN_BAD_SIGNATURE = -2, /* no "v1" entry of the header matches */
	SIGN_BAD_TIMESTAMP = -3, /* timestamp further than the tolerance from now */
};

/* Write a new secret, "whsec_" + base64 of 32 CSPRNG bytes, NUL-terminated, into
 * `out`; `outlen` must be at least SIGN_SECRET_LEN + 1 (64 is plenty). Aborts
 * when `outlen` is too small or the random generator fails; never returns short. */
void sign_secret_new(char *out, size_t outlen);

/* Write "v1,<base64 HMAC-SHA256(key, msg_id "." timestamp "." body)>" into `out`
 * (NUL-terminated, SIGN_SIGNATURE_LEN characters). The key is the base64 decoding
 * of what follows "whsec_" in `secret`, or of the whole secret when it has no
 * prefix (padding optional). `body` is borrowed and may hold any bytes (NULL
 * when body_len is 0). Returns 0, or SIGN_BAD_SECRET (-1) when the secret does
 * not decode to at least one byte; `out` is written only on success. `outlen`
 * must be at least SIGN_SIGNATURE_LEN + 1 (48): a shorter buffer is a programming
 * error and aborts. */
int sign_signature(const char *secret, const char *msg_id, long long timestamp, const void *body,
		   size_t body_len, char *out, size_t outlen);

/* Check a `webhook-signature` header value against `secret` for this message.
 * Entries are separated by one or more spaces; entries whose version is not "v1"
 * (or that have no comma) are ignored; each "v1" entry is compared with the
 * expected signature in constant time. Returns 0 when one entry matches, else,
 * checked in this order: SIGN_BAD_SECRET when the secret is malformed,
 * SIGN_BAD_TIMESTAMP when |now - timestamp| > tolerance_s (both in Unix
 * seconds; a negative tolerance counts as 0), SIGN_BAD_SIGNATURE when no entry
 * matches (also for a NULL or empty header). Nothing is retained. */
int sign_verify(const char *secret, const char *msg_id, long long timestamp, const void *body,
		size_t body_len, const char *header, long long now, long long tolerance_s);

/* Compare two NUL-terminated strings; the time taken may reveal whether the
 * lengths differ, but not where the contents differ. True when equal. */
bool sign_equal(const char *a, const char *b);

#endif
