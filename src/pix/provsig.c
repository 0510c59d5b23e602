/* provsig: the payment providers' notification checks with OpenSSL, no I/O:
 * Woovi's RSA-SHA256 signature tried against each key of a short list
 * (EVP_DigestVerify), pixrelay's own sandbox key pair and its signatures,
 * Mercado Pago's x-signature header and HMAC-SHA256 manifest, and Asaas's
 * access token against its stored SHA-256 (core/ids.c). Who calls them:
 * the bank door's handlers and `trigger`; what is stored is the stores'.
 */
#include "pixrelay/pix/provsig.h"

#include "pixrelay/core/base64.h"
#include "pixrelay/core/ids.h"
#include "pixrelay/core/mem.h"

#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Woovi ---- */

#define PEM_PUBKEY_BEGIN "-----BEGIN PUBLIC KEY-----"

/* The public keys of `pem` into keys[] (at most PROVSIG_WOOVI_KEYS_MAX),
 * each "-----BEGIN PUBLIC KEY-----" block in turn (text around and
 * between them is ignored): how many, or -1 with why, for a block that
 * does not decode or a key that is not RSA. */
static int keys_read(const char *pem, EVP_PKEY **keys, char *why, size_t whylen)
{
	size_t len = pem ? strlen(pem) : 0;
	const char *p = pem;
	int n = 0, rc = -1;

	if (len == 0 || len > PROVSIG_PEM_MAX) {
		snprintf(why, whylen, "keys: %s",
			 len ? "more than 64 KiB of PEM" : "none configured");
		return -1;
	}
	while ((p = strstr(p, PEM_PUBKEY_BEGIN))) {
		BIO *b;
		EVP_PKEY *k;

		if (n == PROVSIG_WOOVI_KEYS_MAX) {
			snprintf(why, whylen, "keys: more than %d", PROVSIG_WOOVI_KEYS_MAX);
			goto done;
		}
		b = BIO_new_mem_buf(p, (int)(len - (size_t)(p - pem)));
		if (!b)
			mem_oom(__FILE__, __LINE__);
		k = PEM_read_bio_PUBKEY(b, NULL, NULL, NULL);
		BIO_free(b);
		if (!k) {
			snprintf(why, whylen, "keys: key %d is not a PEM public key", n + 1);
			goto done;
		}
		keys[n++] = k;
		if (EVP_PKEY_get_base_id(k) != EVP_PKEY_RSA) {
			snprintf(why, whylen, "keys: key %d is not an RSA key", n);
			goto done;
		}
		p += sizeof(PEM_PUBKEY_BEGIN) - 1;
	}
	if (n == 0) {
		snprintf(why, whylen, "keys: no PEM public key");
		goto done;
	}
	rc = n;
done:
	if (rc < 0)
		while (n > 0)
			EVP_PKEY_free(keys[--n]);
	ERR_clear_error();
	return rc;
}

static bool rsa_sha256_verify(EVP_PKEY *k, const char *body, size_t len, const unsigned char *sig,
			      size_t siglen)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	EVP_PKEY_CTX *pctx = NULL;
	bool ok;

	if (!ctx)
		mem_oom(__FILE__, __LINE__);
	ok = EVP_DigestVerifyInit(ctx, &pctx, EVP_sha256(), NULL, k) == 1 &&
	     EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PADDING) == 1 &&
	     EVP_DigestVerify(ctx, sig, siglen, (const unsigned char *)body, len) == 1;
	EVP_MD_CTX_free(ctx);
	ERR_clear_error();
	return ok;
}

int provsig_public_keys_check(const char *pem, char *why, size_t whylen)
{
	EVP_PKEY *keys[PROVSIG_WOOVI_KEYS_MAX];
	int n = keys_read(pem, keys, why, whylen);

	if (n < 0)
		return -1;
	while (n > 0)
		EVP_PKEY_free(keys[--n]);
	return 0;
}

struct provsig_keys {
	EVP_PKEY *k[PROVSIG_WOOVI_KEYS_MAX];
	int n;
};

struct provsig_keys *provsig_keys_new(const char *pem, char *why, size_t whylen)
{
	struct provsig_keys *ks = mem_new(struct provsig_keys);

	ks->n = keys_read(pem, ks->k, why, whylen);
	if (ks->n < 0) {
		free(ks);
		return NULL;
	}
	return ks;
}

void provsig_keys_free(struct provsig_keys *ks)
{
	if (!ks)
		return;
	for (int i = 0; i < ks->n; i++)
		EVP_PKEY_free(ks->k[i]);
	free(ks);
}

bool provsig_keys_verify(const struct provsig_keys *ks, const char *body, size_t len,
			 const char *sig_b64, char *why, size_t whylen)
{
	unsigned char *sig = NULL;
	size_t siglen = 0, b64len = sig_b64 ? strlen(sig_b64) : 0;
	bool ok = false;

	if (b64len == 0) {
		snprintf(why, whylen, "no x-webhook-signature");
		goto done;
	}
	if (b64len > base64_encoded_len(PROVSIG_WOOVI_SIG_MAX)) {
		snprintf(why, whylen, "x-webhook-signature: more than %d bytes",
			 PROVSIG_WOOVI_SIG_MAX);
		goto done;
	}
	sig = base64_decode(sig_b64, b64len, &siglen);
	if (!sig || siglen == 0) {
		snprintf(why, whylen, "x-webhook-signature: not base64");
		goto done;
	}
	if (siglen > PROVSIG_WOOVI_SIG_MAX) {
		snprintf(why, whylen, "x-webhook-signature: more than %d bytes",
			 PROVSIG_WOOVI_SIG_MAX);
		goto done;
	}
	for (int i = 0; i < ks->n && !ok; i++)
		ok = rsa_sha256_verify(ks->k[i], body, len, sig, siglen);
	if (!ok)
		snprintf(why, whylen, "x-webhook-signature: made by none of the %d key%s", ks->n,
			 ks->n == 1 ? "" : "s");
done:
	free(sig);
	return ok;
}

bool provsig_woovi_verify(const char *pem_keys, const char *body, size_t len, const char *sig_b64,
			  char *why, size_t whylen)
{
	struct provsig_keys *ks;
	bool ok;

	if (!sig_b64 || !*sig_b64) {
		snprintf(why, whylen, "no x-webhook-signature");
		return false;
	}
	if (!(ks = provsig_keys_new(pem_keys, why, whylen)))
		return false;
	ok = provsig_keys_verify(ks, body, len, sig_b64, why, whylen);
	provsig_keys_free(ks);
	return ok;
}

int provsig_woovi_sign(const char *pem_private, const char *body, size_t len, char **sig_b64)
{
	BIO *b = NULL;
	EVP_PKEY *k = NULL;
	EVP_MD_CTX *ctx = NULL;
	EVP_PKEY_CTX *pctx = NULL;
	unsigned char *sig = NULL;
	size_t siglen = 0, plen = pem_private ? strlen(pem_private) : 0;
	char *out;
	int rc = -1;

	if (plen == 0 || plen > PROVSIG_PEM_MAX)
		goto done;
	b = BIO_new_mem_buf(pem_private, (int)plen);
	if (!b)
		mem_oom(__FILE__, __LINE__);
	/* an encrypted key would need a passphrase no process has */
	k = PEM_read_bio_PrivateKey(b, NULL, NULL, (void *)"");
	if (!k || EVP_PKEY_get_base_id(k) != EVP_PKEY_RSA)
		goto done;
	ctx = EVP_MD_CTX_new();
	if (!ctx)
		mem_oom(__FILE__, __LINE__);
	if (EVP_DigestSignInit(ctx, &pctx, EVP_sha256(), NULL, k) != 1 ||
	    EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PADDING) != 1 ||
	    EVP_DigestSign(ctx, NULL, &siglen, (const unsigned char *)body, len) != 1)
		goto done;
	sig = mem_alloc(siglen);
	if (EVP_DigestSign(ctx, sig, &siglen, (const unsigned char *)body, len) != 1)
		goto done;
	out = mem_alloc(base64_encoded_len(siglen) + 1);
	base64_encode(sig, siglen, out);
	*sig_b64 = out;
	rc = 0;
done:
	free(sig);
	EVP_MD_CTX_free(ctx);
	EVP_PKEY_free(k);
	BIO_free(b);
	ERR_clear_error();
	return rc;
}

/* The text a memory BIO holds, as a new string; the BIO freed. */
static char *bio_take(BIO *b)
{
	char *data = NULL, *out;
	long n = BIO_get_mem_data(b, &data);

	if (n <= 0 || !data)
		mem_oom(__FILE__, __LINE__);
	out = mem_strndup(data, (size_t)n);
	BIO_free_all(b);
	return out;
}

void provsig_woovi_keypair(char **priv_pem, char **pub_pem)
{
	EVP_PKEY *k = EVP_RSA_gen(PROVSIG_WOOVI_KEY_BITS);
	BIO *priv = BIO_new(BIO_s_secmem()), *pub = BIO_new(BIO_s_mem());

	if (!k || !priv || !pub ||
	    PEM_write_bio_PrivateKey(priv, k, NULL, NULL, 0, NULL, NULL) != 1 ||
	    PEM_write_bio_PUBKEY(pub, k) != 1)
		mem_oom(__FILE__, __LINE__);
	EVP_PKEY_free(k);
	*priv_pem = bio_take(priv);
	*pub_pem = bio_take(pub);
}

/* ---- Mercado Pago ---- */

#define MP_WHITE " \t\r\n\v\f"
#define MP_TS_DIGITS 18

/* [s, s + n) without white space at either end. */
static void trim(const char **s, size_t *n)
{
	while (*n && strchr(MP_WHITE, (*s)[0]))
		(*s)++, (*n)--;
	while (*n && strchr(MP_WHITE, (*s)[*n - 1]))
		(*n)--;
}

/* A header or parameter, trimmed; n = 0 for absent or empty. */
static const char *normalise(const char *s, size_t *n)
{
	*n = s ? strlen(s) : 0;
	if (s)
		trim(&s, n);
	return s;
}

/* Whether `key` (n bytes) is "v" and digits, in any case. */
static bool version_key(const char *key, size_t n)
{
	if (n < 2 || (key[0] != 'v' && key[0] != 'V'))
		return false;
	for (size_t i = 1; i < n; i++)
		if (key[i] < '0' || key[i] > '9')
			return false;
	return true;
}

/* The parts of x-signature the SDK reads: the last ts= and the last v1=
 * (each trimmed, NULL when absent), and whether any vN= is there. */
struct mp_header {
	const char *ts, *v1;
	size_t tslen, v1len;
	bool any_hash;
};

static void mp_header_read(const char *h, size_t hlen, struct mp_header *out)
{
	const char *end = h + hlen;

	memset(out, 0, sizeof(*out));
	while (h < end) {
		const char *comma = memchr(h, ',', (size_t)(end - h)), *stop = comma ? comma : end;
		const char *eq = memchr(h, '=', (size_t)(stop - h)), *key = h, *val;
		size_t klen, vlen;

		h = comma ? comma + 1 : end;
		if (!eq)
			continue;
		klen = (size_t)(eq - key);
		val = eq + 1;
		vlen = (size_t)(stop - val);
		trim(&key, &klen);
		trim(&val, &vlen);
		if (!klen || !vlen)
			continue;
		if (klen == 2 && strncasecmp(key, "ts", 2) == 0) {
			out->ts = val;
			out->tslen = vlen;
		} else if (version_key(key, klen)) {
			out->any_hash = true;
			if (klen == 2 && key[1] == '1') {
				out->v1 = val;
				out->v1len = vlen;
			}
		}
	}
}

/* HMAC-SHA256 of the manifest, as 64 lower-case hex, into hex. */
static void mp_mac(const char *secret, const char *id, size_t idlen, const char *rid, size_t ridlen,
		   const char *ts, size_t tslen, char hex[65])
{
	size_t cap = idlen + ridlen + tslen + 32, n = 0, maclen = 0;
	char *m = mem_alloc(cap);
	unsigned char mac[32];

	if (idlen)
		n += (size_t)snprintf(m + n, cap - n, "id:%.*s;", (int)idlen, id);
	if (ridlen)
		n += (size_t)snprintf(m + n, cap - n, "request-id:%.*s;", (int)ridlen, rid);
	n += (size_t)snprintf(m + n, cap - n, "ts:%.*s;", (int)tslen, ts);
	if (!EVP_Q_mac(NULL, "HMAC", NULL, "SHA256", NULL, secret, strlen(secret),
		       (const unsigned char *)m, n, mac, sizeof(mac), &maclen) ||
	    maclen != sizeof(mac))
		mem_oom(__FILE__, __LINE__);
	ids_hex(hex, mac, sizeof(mac));
	OPENSSL_cleanse(mac, sizeof(mac));
	free(m);
}

bool provsig_mp_verify(const char *secret, const char *x_signature, const char *x_request_id,
		       const char *data_id, long long *ts, char *why, size_t whylen)
{
	struct mp_header h;
	const char *sig, *rid, *id;
	size_t siglen, ridlen, idlen;
	char want[65];
	long long t = 0;
	bool ok;

	if (!secret || !*secret) {
		snprintf(why, whylen, "no secret key configured");
		return false;
	}
	sig = normalise(x_signature, &siglen);
	rid = normalise(x_request_id, &ridlen);
	id = normalise(data_id, &idlen);
	if (!siglen) {
		snprintf(why, whylen, "no x-signature");
		return false;
	}
	mp_header_read(sig, siglen, &h);
	if (!h.ts && !h.any_hash) {
		snprintf(why, whylen, "x-signature: not ts=...,v1=...");
		return false;
	}
	if (!h.ts) {
		snprintf(why, whylen, "x-signature: no ts");
		return false;
	}
	for (size_t i = 0; i < h.tslen; i++) {
		if (h.ts[i] < '0' || h.ts[i] > '9' || i >= MP_TS_DIGITS) {
			snprintf(why, whylen, "x-signature: ts must be 1 to %d digits",
				 MP_TS_DIGITS);
			return false;
		}
		t = t * 10 + (h.ts[i] - '0');
	}
	if (!h.v1) {
		snprintf(why, whylen, "x-signature: no v1 hash");
		return false;
	}
	mp_mac(secret, id, idlen, rid, ridlen, h.ts, h.tslen, want);
	ok = h.v1len == 64 && CRYPTO_memcmp(want, h.v1, 64) == 0;
	OPENSSL_cleanse(want, sizeof(want));
	if (!ok) {
		snprintf(why, whylen, "x-signature: v1 is not the manifest's HMAC");
		return false;
	}
	if (ts)
		*ts = t;
	return true;
}

/* ---- Asaas ---- */

bool provsig_asaas_verify(const char *token_sha, const char *token, char *why, size_t whylen)
{
	if (!token || !*token) {
		snprintf(why, whylen, "no asaas-access-token");
		return false;
	}
	if (!token_sha || strlen(token_sha) != 64) {
		snprintf(why, whylen, "no access token configured");
		return false;
	}
	if (!ids_sha256_matches(token, strlen(token), token_sha)) {
		snprintf(why, whylen, "wrong asaas-access-token");
		return false;
	}
	return true;
}
