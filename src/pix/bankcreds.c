/* bankcreds: a bank connection's API credentials as values: copied, wiped,
 * and checked before they are kept (https URLs, printable ids, a
 * certificate and the private key that belongs to it, PEM only). Sealing
 * them for Redis is store/banks.c's with core/seal; using them is
 * relay/bankapi.c's. */
#include "pixrelay/pix/bankcreds.h"

#include "pixrelay/core/certcheck.h"
#include "pixrelay/core/mem.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static void wipe_free(char *s)
{
	if (s) {
		mem_wipe(s, strlen(s));
		free(s);
	}
}

void bank_creds_wipe(struct bank_creds *c)
{
	wipe_free(c->api_url);
	wipe_free(c->token_url);
	wipe_free(c->client_id);
	wipe_free(c->client_secret);
	wipe_free(c->cert_pem);
	wipe_free(c->key_pem);
	wipe_free(c->bank_ca_pem);
	memset(c, 0, sizeof(*c));
}

static char *dup_or_null(const char *s)
{
	return s ? mem_strdup(s) : NULL;
}

void bank_creds_copy(struct bank_creds *to, const struct bank_creds *from)
{
	snprintf(to->conn, sizeof(to->conn), "%s", from->conn);
	to->api_url = dup_or_null(from->api_url);
	to->token_url = dup_or_null(from->token_url);
	to->client_id = dup_or_null(from->client_id);
	to->client_secret = dup_or_null(from->client_secret);
	to->cert_pem = dup_or_null(from->cert_pem);
	to->key_pem = dup_or_null(from->key_pem);
	to->bank_ca_pem = dup_or_null(from->bank_ca_pem);
}

int bank_creds_present(const struct bank_creds *c)
{
	return c->api_url && c->api_url[0];
}

static int check_url(char *u, const char *field, char *err, size_t errlen)
{
	size_t n;

	if (!u || strncasecmp(u, "https://", 8) != 0 || !u[8] || strlen(u) > BANK_CREDS_URL_MAX) {
		snprintf(err, errlen, "%s: must be an https:// URL of at most %d bytes", field,
			 BANK_CREDS_URL_MAX);
		return -1;
	}
	for (const char *p = u; *p; p++)
		if ((unsigned char)*p <= ' ' || (unsigned char)*p >= 0x7f || *p == '#') {
			snprintf(err, errlen,
				 "%s: must be an URL without spaces, fragments or "
				 "non-ASCII characters",
				 field);
			return -1;
		}
	for (n = strlen(u); n > 8 && u[n - 1] == '/'; n--)
		u[n - 1] = '\0';
	return 0;
}

static int check_text(const char *s, const char *field, char *err, size_t errlen)
{
	size_t n = s ? strlen(s) : 0;

	if (n < 1 || n > BANK_CREDS_ID_MAX) {
		snprintf(err, errlen, "%s: must be 1 to %d characters", field, BANK_CREDS_ID_MAX);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < ' ' || (unsigned char)s[i] >= 0x7f) {
			snprintf(err, errlen, "%s: must be printable ASCII", field);
			return -1;
		}
	return 0;
}

/* The first certificate and the private key of the PEM texts belong
 * together. 0, or -1 with why in err. */
static int check_pair(const char *cert_pem, const char *key_pem, char *err, size_t errlen)
{
	BIO *cb = NULL, *kb = NULL;
	X509 *x = NULL;
	EVP_PKEY *k = NULL;
	int rc = -1;

	if (!cert_pem || strlen(cert_pem) > BANK_CREDS_PEM_MAX || !key_pem ||
	    strlen(key_pem) > BANK_CREDS_PEM_MAX) {
		snprintf(err, errlen, "cert, key: both are required, PEM of at most %d bytes",
			 BANK_CREDS_PEM_MAX);
		return -1;
	}
	cb = BIO_new_mem_buf(cert_pem, (int)strlen(cert_pem));
	kb = BIO_new_mem_buf(key_pem, (int)strlen(key_pem));
	if (!cb || !kb)
		mem_oom(__FILE__, __LINE__);
	x = PEM_read_bio_X509(cb, NULL, NULL, NULL);
	if (!x) {
		snprintf(err, errlen, "cert: not a PEM certificate");
		goto done;
	}
	/* an encrypted key would need a passphrase no process has */
	k = PEM_read_bio_PrivateKey(kb, NULL, NULL, (void *)"");
	if (!k) {
		snprintf(err, errlen, "key: not a PEM private key without a passphrase");
		goto done;
	}
	if (X509_check_private_key(x, k) != 1) {
		snprintf(err, errlen, "key: not the private key of the certificate");
		goto done;
	}
	rc = 0;
done:
	EVP_PKEY_free(k);
	X509_free(x);
	BIO_free(cb);
	BIO_free(kb);
	ERR_clear_error();
	return rc;
}

int bank_creds_check(struct bank_creds *c, char *err, size_t errlen)
{
	struct certcheck *cc;

	if (check_url(c->api_url, "api-url", err, errlen) < 0 ||
	    check_url(c->token_url, "token-url", err, errlen) < 0 ||
	    check_text(c->client_id, "client-id", err, errlen) < 0 ||
	    check_text(c->client_secret, "client-secret", err, errlen) < 0 ||
	    check_pair(c->cert_pem, c->key_pem, err, errlen) < 0)
		return -1;
	if (c->bank_ca_pem) {
		char why[128];
		cc = certcheck_new(c->bank_ca_pem, strlen(c->bank_ca_pem), why, sizeof(why));
		if (!cc) {
			snprintf(err, errlen, "bank-ca: %s", why);
			return -1;
		}
		certcheck_free(cc);
	}
	return 0;
}
