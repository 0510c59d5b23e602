/* provsig: how a payment provider's notification is proven to come from it,
 * as pure checks (no I/O): the header's signature or token against the key
 * or secret of the connection.
 *
 * - Woovi (OpenPix): `x-webhook-signature` is the base64 of an RSA PKCS#1
 *   v1.5 SHA-256 signature over the raw body bytes, by a key Woovi
 *   publishes (GET /api/v1/webhook/public-keys; a list, so that keys can
 *   rotate). Source: github Open-Pix/openpix-developers @ 76584f0,
 *   docs/webhook/seguranca/weebhook-signature-validation.mdx.
 * - Mercado Pago: `x-signature: ts=<seconds>,v1=<hex>` is the HMAC-SHA256
 *   (lower-case hex) of the manifest "id:<data.id>;request-id:<x-request-id>;
 *   ts:<ts>;" keyed with the application's secret key, a pair whose value is
 *   missing left out. Source: github mercadopago/sdk-nodejs
 *   src/utils/webhook/index.ts (data.id keeps its case since ac20999).
 * - Asaas: `asaas-access-token` is the token the merchant set on the
 *   webhook; pixrelay keeps its SHA-256 only.
 *
 * Every comparison of a secret is in constant time. The predicates say why
 * not in `why` (for the log: never for the caller, who learns only 401).
 */
#ifndef PIXRELAY_PROVSIG_H
#define PIXRELAY_PROVSIG_H

#include <stdbool.h>
#include <stddef.h>

#define PROVSIG_WOOVI_KEYS_MAX 8    /* public keys tried for one signature */
#define PROVSIG_WOOVI_SIG_MAX 1024  /* bytes of a decoded signature (RSA 8192) */
#define PROVSIG_PEM_MAX 65536	    /* bytes of the PEM text of the keys */
#define PROVSIG_WOOVI_KEY_BITS 2048 /* pixrelay's own sandbox key pair */

/* Whether `sig_b64` (the x-webhook-signature header: standard base64,
 * padding optional) is an RSA PKCS#1 v1.5 SHA-256 signature of the `len`
 * bytes of `body` by any of the RSA public keys of `pem_keys` (one or more
 * "-----BEGIN PUBLIC KEY-----" blocks, one after the other). False, with
 * the reason in `why`, for no or a malformed signature, one over
 * PROVSIG_WOOVI_SIG_MAX bytes, keys that are not PEM RSA public keys or
 * more than PROVSIG_WOOVI_KEYS_MAX of them, or a signature none made.
 * Nothing is retained. */
bool provsig_woovi_verify(const char *pem_keys, const char *body, size_t len, const char *sig_b64,
			  char *why, size_t whylen);

/* Whether `pem` holds 1 to PROVSIG_WOOVI_KEYS_MAX PEM RSA public keys and
 * nothing that fails to read as one: 0, or -1 with why (a connection takes
 * its provider's keys only when they read). */
int provsig_public_keys_check(const char *pem, char *why, size_t whylen);

/* The keys of `pem` read once (as provsig_woovi_verify reads them), for
 * a connection's view that judges many calls: NULL with why when they do
 * not read. provsig_keys_free frees (NULL is fine). */
struct provsig_keys;
struct provsig_keys *provsig_keys_new(const char *pem, char *why, size_t whylen);
void provsig_keys_free(struct provsig_keys *ks);
/* provsig_woovi_verify against keys read once. */
bool provsig_keys_verify(const struct provsig_keys *ks, const char *body, size_t len,
			 const char *sig_b64, char *why, size_t whylen);

/* Sign `len` bytes of `body` as Woovi does, with the PEM private key
 * `pem_private` (RSA, no passphrase): pixrelay's own sandbox key, so that
 * `trigger` sends notifications the connection verifies. 0 with a new
 * base64 text in *sig_b64 (the caller frees), or -1 when the key is not a
 * PEM RSA private key (*sig_b64 untouched). */
int provsig_woovi_sign(const char *pem_private, const char *body, size_t len, char **sig_b64);

/* A new RSA key pair of PROVSIG_WOOVI_KEY_BITS bits for the sandbox: the
 * private key as PKCS#8 PEM and the public key as SubjectPublicKeyInfo PEM
 * (the form Woovi publishes), both new strings the caller frees (the
 * private one with mem_free_wiped). Aborts when OpenSSL cannot make keys
 * (out of memory, no randomness). */
void provsig_woovi_keypair(char **priv_pem, char **pub_pem);

/* Whether the Mercado Pago notification is signed with `secret` (the
 * application's secret key): `x_signature` the x-signature header,
 * `x_request_id` the x-request-id header and `data_id` the data.id query
 * parameter (each NULL when absent; values are trimmed of white space and
 * an empty one counts as absent). The header is split on ',' into
 * key=value parts (trimmed, the key lower-cased; parts without '=' or
 * with an empty side ignored, a later key wins); `ts` must be digits; the
 * v1 hash is compared with the lower-case hex of the manifest's HMAC in
 * constant time. True with the header's ts (Unix seconds) in *ts when ts
 * is not NULL: how old a notification may be is the caller's choice.
 * False, with the reason in `why`, for no secret, no or a malformed header,
 * no ts, ts of more than 18 digits, no v1 hash, or a mismatch. */
bool provsig_mp_verify(const char *secret, const char *x_signature, const char *x_request_id,
		       const char *data_id, long long *ts, char *why, size_t whylen);

/* Whether the asaas-access-token header `token` is the token whose SHA-256
 * (64 lower-case hex) the connection keeps in `token_sha`, compared in
 * constant time (ids_sha256_matches). False, with the reason in `why`, for
 * no or an empty header, no digest kept, or another token. */
bool provsig_asaas_verify(const char *token_sha, const char *token, char *why, size_t whylen);

#endif
