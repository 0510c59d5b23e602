/* sign: Standard Webhooks signatures, HMAC-SHA256 with OpenSSL: making a
 * whsec_ secret, signing a postback (relay/delivery.c, api/evstream.c,
 * cli/listen.c) and verifying a provider's signed notification
 * (store/ingest.c), comparing in constant time. One MAC context per thread
 * is kept and re-keyed for each signature; decoded keys and MACs are wiped
 * after use. No I/O. */
#include "pixrelay/pix/sign.h"

#include "pixrelay/core/base64.h"
#include "pixrelay/core/ids.h"
#include "pixrelay/core/mem.h"

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SIGN_RANDOM_BYTES 32
#define SIGN_MAC_LEN 32
#define SIGN_MAC_B64_LEN 44 /* base64_encoded_len(SIGN_MAC_LEN) */

void sign_secret_new(char *out, size_t outlen)
{
	unsigned char key[SIGN_RANDOM_BYTES];
	const size_t plen = sizeof(SIGN_SECRET_PREFIX) - 1;

	if (outlen < SIGN_SECRET_LEN + 1)
		abort();
	ids_random(key, sizeof(key));
	memcpy(out, SIGN_SECRET_PREFIX, plen);
	base64_encode(key, sizeof(key), out + plen);
	mem_wipe(key, sizeof(key));
}

/* Decode the key of `secret`; the caller wipes and frees it. NULL when malformed
 * or empty. */
static unsigned char *secret_key(const char *secret, size_t *keylen)
{
	const size_t plen = sizeof(SIGN_SECRET_PREFIX) - 1;
	unsigned char *key;
	size_t n = 0;

	if (!secret)
		return NULL;
	if (strncmp(secret, SIGN_SECRET_PREFIX, plen) == 0)
		secret += plen;
	key = base64_decode(secret, strlen(secret), &n);
	if (key && n == 0) {
		free(key);
		key = NULL;
	}
	if (key)
		*keylen = n;
	return key;
}

/* The HMAC-SHA256 context, made once per thread: fetching the algorithm and
 * setting its digest cost more than the MAC of a 1 KB body (OpenSSL 3 takes
 * locks and searches parameters for each), so each signature only re-keys
 * it. Between signatures it holds the state keyed by the last secret used,
 * as the account cache holds the secrets themselves (docs/security.md). */
static EVP_MAC_CTX *mac_ctx(void)
{
	static __thread EVP_MAC_CTX *ctx;
	EVP_MAC *hmac;
	OSSL_PARAM params[] = {
	    OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, (char *)"SHA256", 0),
	    OSSL_PARAM_construct_end(),
	};

	if (ctx)
		return ctx;
	hmac = EVP_MAC_fetch(NULL, "HMAC", NULL);
	if (!hmac)
		mem_oom(__FILE__, __LINE__);
	ctx = EVP_MAC_CTX_new(hmac);
	EVP_MAC_free(hmac); /* the context keeps its own reference */
	if (!ctx || EVP_MAC_CTX_set_params(ctx, params) != 1)
		mem_oom(__FILE__, __LINE__);
	return ctx;
}

/* HMAC-SHA256 of "<msg_id>.<timestamp>.<body>" without copying the body. OpenSSL
 * failing here means it could not allocate, so it is treated as out of memory. */
static void mac_compute(const unsigned char *key, size_t keylen, const char *msg_id,
			long long timestamp, const void *body, size_t body_len,
			unsigned char mac[SIGN_MAC_LEN])
{
	EVP_MAC_CTX *ctx = mac_ctx();
	char ts[32];
	int tslen = snprintf(ts, sizeof(ts), ".%lld.", timestamp);
	size_t maclen = 0;

	/* a NULL key would make EVP_MAC_init keep the previous one */
	if (!key)
		abort();
	if (EVP_MAC_init(ctx, key, keylen, NULL) != 1 ||
	    EVP_MAC_update(ctx, (const unsigned char *)msg_id, strlen(msg_id)) != 1 ||
	    EVP_MAC_update(ctx, (const unsigned char *)ts, (size_t)tslen) != 1 ||
	    (body_len && EVP_MAC_update(ctx, body, body_len) != 1) ||
	    EVP_MAC_final(ctx, mac, &maclen, SIGN_MAC_LEN) != 1 || maclen != SIGN_MAC_LEN)
		mem_oom(__FILE__, __LINE__);
}

/* "v1," + base64 of the MAC into out (SIGN_SIGNATURE_LEN + 1 bytes). */
static void signature_with_key(const unsigned char *key, size_t keylen, const char *msg_id,
			       long long timestamp, const void *body, size_t body_len,
			       char out[SIGN_SIGNATURE_LEN + 1])
{
	unsigned char mac[SIGN_MAC_LEN];

	mac_compute(key, keylen, msg_id, timestamp, body, body_len, mac);
	memcpy(out, "v1,", 3);
	base64_encode(mac, sizeof(mac), out + 3);
	mem_wipe(mac, sizeof(mac));
}

int sign_signature(const char *secret, const char *msg_id, long long timestamp, const void *body,
		   size_t body_len, char *out, size_t outlen)
{
	unsigned char *key;
	size_t keylen = 0;

	if (outlen < SIGN_SIGNATURE_LEN + 1)
		abort();
	key = secret_key(secret, &keylen);
	if (!key)
		return SIGN_BAD_SECRET;
	signature_with_key(key, keylen, msg_id, timestamp, body, body_len, out);
	mem_wipe(key, keylen);
	free(key);
	return 0;
}

/* Constant-time comparison of two byte ranges; only a length mismatch returns early. */
static bool equal_span(const char *a, size_t alen, const char *b, size_t blen)
{
	if (alen != blen)
		return false;
	return CRYPTO_memcmp(a, b, alen) == 0;
}

bool sign_equal(const char *a, const char *b)
{
	return equal_span(a, strlen(a), b, strlen(b));
}

int sign_verify(const char *secret, const char *msg_id, long long timestamp, const void *body,
		size_t body_len, const char *header, long long now, long long tolerance_s)
{
	char want[SIGN_SIGNATURE_LEN + 1];
	const char *mac = want + 3;
	unsigned char *key = NULL;
	size_t keylen = 0;
	unsigned long long skew;
	int r;

	key = secret_key(secret, &keylen);
	if (!key) {
		r = SIGN_BAD_SECRET;
		goto done;
	}
	/* |now - timestamp| without signed overflow */
	skew = now >= timestamp ? (unsigned long long)now - (unsigned long long)timestamp
				: (unsigned long long)timestamp - (unsigned long long)now;
	if (skew > (unsigned long long)(tolerance_s > 0 ? tolerance_s : 0)) {
		r = SIGN_BAD_TIMESTAMP;
		goto done;
	}
	signature_with_key(key, keylen, msg_id, timestamp, body, body_len, want);

	r = SIGN_BAD_SIGNATURE;
	for (const char *p = header ? header : ""; *p;) {
		const char *end, *comma;

		while (*p == ' ')
			p++;
		end = p + strcspn(p, " ");
		comma = memchr(p, ',', (size_t)(end - p));
		if (comma && comma - p == 2 && memcmp(p, "v1", 2) == 0 &&
		    equal_span(comma + 1, (size_t)(end - comma - 1), mac, SIGN_MAC_B64_LEN)) {
			r = 0;
			break;
		}
		p = end;
	}
	mem_wipe(want, sizeof(want));
done:
	if (key)
		mem_wipe(key, keylen);
	free(key);
	return r;
}
