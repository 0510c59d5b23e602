/* certcheck: client certificates forwarded by a reverse proxy, checked
 * against one bank connection's own trust list with OpenSSL's verifier
 * (chain, dates, TLS-client purpose). Where the list comes from and which
 * connection a request names is the bank store's (src/store/banks.c). */
#include "pixrelay/core/certcheck.h"

#include "pixrelay/core/ids.h"
#include "pixrelay/core/mem.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct certcheck {
	X509_STORE *store;
	size_t n;
	unsigned char first_sha256[32];
};

static void set_err(char *err, size_t errlen, const char *msg)
{
	snprintf(err, errlen, "%s", msg);
}

struct certcheck *certcheck_new(const char *pem, size_t len, char *err, size_t errlen)
{
	struct certcheck *c = NULL;
	STACK_OF(X509_INFO) *infos = NULL;
	BIO *bio = NULL;
	size_t n = 0;

	if (len == 0 || len > CERTCHECK_PEM_MAX) {
		snprintf(err, errlen, "the trust list must be 1 to %d bytes of PEM",
			 CERTCHECK_PEM_MAX);
		goto fail;
	}
	bio = BIO_new_mem_buf(pem, (int)len);
	if (!bio)
		mem_oom(__FILE__, __LINE__);
	infos = PEM_X509_INFO_read_bio(bio, NULL, NULL, NULL);
	ERR_clear_error();
	if (!infos || sk_X509_INFO_num(infos) == 0) {
		set_err(err, errlen, "no certificate in the PEM");
		goto fail;
	}
	c = mem_new(struct certcheck);
	c->store = X509_STORE_new();
	if (!c->store)
		mem_oom(__FILE__, __LINE__);
	for (int i = 0; i < sk_X509_INFO_num(infos); i++) {
		X509_INFO *info = sk_X509_INFO_value(infos, i);

		if (!info->x509 || info->x_pkey || info->crl) {
			set_err(err, errlen, "the PEM holds something other than certificates");
			goto fail;
		}
		if (++n > CERTCHECK_CERTS_MAX) {
			snprintf(err, errlen, "more than %d certificates in the PEM",
				 CERTCHECK_CERTS_MAX);
			goto fail;
		}
		if (n == 1) {
			unsigned int mdlen = 0;
			X509_digest(info->x509, EVP_sha256(), c->first_sha256, &mdlen);
		}
		if (X509_STORE_add_cert(c->store, info->x509) != 1) {
			/* the same certificate twice is no harm */
			ERR_clear_error();
		}
	}
	c->n = n;
	X509_STORE_set_flags(c->store, X509_V_FLAG_PARTIAL_CHAIN);
	sk_X509_INFO_pop_free(infos, X509_INFO_free);
	BIO_free(bio);
	return c;
fail:
	if (infos)
		sk_X509_INFO_pop_free(infos, X509_INFO_free);
	BIO_free(bio);
	certcheck_free(c);
	ERR_clear_error();
	return NULL;
}

void certcheck_free(struct certcheck *c)
{
	if (!c)
		return;
	X509_STORE_free(c->store);
	free(c);
}

size_t certcheck_count(const struct certcheck *c)
{
	return c->n;
}

void certcheck_fingerprint(const struct certcheck *c, char out[65])
{
	ids_hex(out, c->first_sha256, sizeof(c->first_sha256));
}

static int hexval(char h)
{
	if (h >= '0' && h <= '9')
		return h - '0';
	if (h >= 'a' && h <= 'f')
		return h - 'a' + 10;
	if (h >= 'A' && h <= 'F')
		return h - 'A' + 10;
	return -1;
}

long certcheck_unescape(const char *in, char *out, size_t size)
{
	size_t o = 0;

	for (const char *p = in; *p; p++) {
		int c = (unsigned char)*p;

		if (c == '%') {
			int hi = hexval(p[1]), lo = hi < 0 ? -1 : hexval(p[2]);
			if (hi < 0 || lo < 0)
				return -1;
			c = hi * 16 + lo;
			p += 2;
		}
		if (o + 1 >= size)
			return -1;
		out[o++] = (char)c;
	}
	if (size == 0)
		return -1;
	out[o] = '\0';
	return (long)o;
}

int certcheck_verify_escaped(const struct certcheck *c, const char *escaped, long long now_s,
			     char *err, size_t errlen)
{
	char *pem = NULL;
	long len;
	BIO *bio = NULL;
	X509 *cert = NULL;
	X509_STORE_CTX *ctx = NULL;
	int rc = -1;

	if (strnlen(escaped, CERTCHECK_ESCAPED_MAX + 1) > CERTCHECK_ESCAPED_MAX) {
		set_err(err, errlen, "the certificate is too long");
		goto done;
	}
	pem = mem_alloc(CERTCHECK_ESCAPED_MAX + 1);
	len = certcheck_unescape(escaped, pem, CERTCHECK_ESCAPED_MAX + 1);
	if (len <= 0) {
		set_err(err, errlen, "not a percent-escaped PEM certificate");
		goto done;
	}
	bio = BIO_new_mem_buf(pem, (int)len);
	if (!bio)
		mem_oom(__FILE__, __LINE__);
	cert = PEM_read_bio_X509(bio, NULL, NULL, NULL);
	if (!cert) {
		set_err(err, errlen, "not a PEM certificate");
		goto done;
	}
	ctx = X509_STORE_CTX_new();
	if (!ctx || X509_STORE_CTX_init(ctx, c->store, cert, NULL) != 1)
		mem_oom(__FILE__, __LINE__);
	X509_STORE_CTX_set_purpose(ctx, X509_PURPOSE_SSL_CLIENT);
	X509_VERIFY_PARAM_set_time(X509_STORE_CTX_get0_param(ctx), (time_t)now_s);
	if (X509_verify_cert(ctx) != 1) {
		set_err(err, errlen, X509_verify_cert_error_string(X509_STORE_CTX_get_error(ctx)));
		goto done;
	}
	rc = 0;
done:
	X509_STORE_CTX_free(ctx);
	X509_free(cert);
	BIO_free(bio);
	free(pem);
	ERR_clear_error();
	return rc;
}
