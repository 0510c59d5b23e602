/* Unit tests of bankcreds: what a connection's API credentials must be
 * before they are kept (each refusal's message), with a certificate and
 * keys made here (EC P-256). */
#include "check.h"

#include "pixrelay/pix/bankcreds.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <stdlib.h>
#include <string.h>

static char *pem_of(EVP_PKEY *key, X509 *x, int encrypted)
{
	BIO *b = BIO_new(BIO_s_mem());
	char *data, *out;
	long n;

	if (x)
		PEM_write_bio_X509(b, x);
	else if (encrypted)
		PEM_write_bio_PrivateKey(b, key, EVP_aes_256_cbc(), NULL, 0, NULL, (void *)"pw");
	else
		PEM_write_bio_PrivateKey(b, key, NULL, NULL, 0, NULL, NULL);
	n = BIO_get_mem_data(b, &data);
	out = strndup(data, (size_t)n);
	BIO_free(b);
	return out;
}

static X509 *self_signed(EVP_PKEY *key)
{
	X509 *x = X509_new();

	X509_set_version(x, 2);
	ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
	X509_gmtime_adj(X509_getm_notBefore(x), -3600);
	X509_gmtime_adj(X509_getm_notAfter(x), 86400);
	X509_set_pubkey(x, key);
	X509_NAME_add_entry_by_txt(X509_get_subject_name(x), "CN", MBSTRING_ASC,
				   (const unsigned char *)"loja", -1, -1, 0);
	X509_set_issuer_name(x, X509_get_subject_name(x));
	X509_sign(x, key, EVP_sha256());
	return x;
}

static char err[256];

static struct bank_creds good(const char *cert, const char *key)
{
	struct bank_creds c = {0};

	c.api_url = strdup("https://pix.banco.example/api/v2/");
	c.token_url = strdup("https://pix.banco.example/oauth/token");
	c.client_id = strdup("client-123");
	c.client_secret = strdup("s3cr3t");
	c.cert_pem = strdup(cert);
	c.key_pem = strdup(key);
	return c;
}

#define REFUSED(setup, msg)                                                                        \
	do {                                                                                       \
		struct bank_creds c_ = good(cert, key);                                            \
		setup;                                                                             \
		CHECK_INT(bank_creds_check(&c_, err, sizeof(err)), -1);                            \
		CHECK_STR(err, msg);                                                               \
		bank_creds_wipe(&c_);                                                              \
	} while (0)

/* The extras as the operator writes them: kept as curl sends them, names
 * shown, values never quoted in a refusal; the scopes made one line. */
static void test_extras(void)
{
	struct bank_creds c = {0};
	char names[256], *e;

	CHECK_INT(bank_creds_add_header(&c, "gw-dev-app-key:  s3cr3t value ", err, sizeof(err)), 0);
	CHECK_INT(bank_creds_add_header(&c, "X-Other:1", err, sizeof(err)), 0);
	CHECK_STR(c.headers, "gw-dev-app-key: s3cr3t value\nX-Other: 1\n");
	bank_creds_header_names(&c, names, sizeof(names));
	CHECK_STR(names, "gw-dev-app-key,X-Other");
	CHECK_INT(bank_creds_add_header(&c, "GW-DEV-APP-KEY: again", err, sizeof(err)), -1);
	CHECK_STR(err, "api-header: GW-DEV-APP-KEY is given twice");
	CHECK_INT(bank_creds_add_header(&c, "Authorization: Bearer x", err, sizeof(err)), -1);
	CHECK_STR(err, "api-header: Authorization is pixrelay's to send, not an extra");
	CHECK_INT(bank_creds_add_header(&c, "host: evil", err, sizeof(err)), -1);
	CHECK_STR(err, "api-header: host is pixrelay's to send, not an extra");
	CHECK_INT(bank_creds_add_header(&c, "Content-Type: text/plain", err, sizeof(err)), -1);
	CHECK_INT(bank_creds_add_header(&c, "X-Bad: a\r\nX-Injected: b", err, sizeof(err)), -1);
	CHECK_STR(err, "api-header: X-Bad: its value must be 1 to 1024 printable ASCII characters");
	CHECK(strstr(err, "Injected") == NULL);
	CHECK_INT(bank_creds_add_header(&c, "X-Empty:   ", err, sizeof(err)), -1);
	CHECK_INT(bank_creds_add_header(&c, "no colon", err, sizeof(err)), -1);
	CHECK_STR(err, "api-header: write it \"Name: value\", the name 1 to 64 letters, digits or "
		       "!#$%&'*+-.^_`|~");
	CHECK_INT(bank_creds_add_header(&c, "Bad Name: x", err, sizeof(err)), -1);
	CHECK_INT(bank_creds_add_header(&c, ": x", err, sizeof(err)), -1);
	CHECK_INT(bank_creds_add_header(&c, "X-\xC3\xA7: x", err, sizeof(err)), -1);
	CHECK_STR(c.headers, "gw-dev-app-key: s3cr3t value\nX-Other: 1\n");
	for (int i = 3; i <= 8; i++) {
		char h[32];
		snprintf(h, sizeof(h), "X-H%d: v", i);
		CHECK_INT(bank_creds_add_header(&c, h, err, sizeof(err)), 0);
	}
	CHECK_INT(bank_creds_add_header(&c, "X-H9: v", err, sizeof(err)), -1);
	CHECK_STR(err, "api-header: at most 8");

	CHECK_INT(bank_creds_add_query(&c, "gw-dev-app-key=a b&c=d", err, sizeof(err)), 0);
	CHECK_INT(bank_creds_add_query(&c, "empty=", err, sizeof(err)), 0);
	CHECK_STR(c.query, "gw-dev-app-key=a%20b%26c%3Dd&empty=");
	bank_creds_query_names(&c, names, sizeof(names));
	CHECK_STR(names, "gw-dev-app-key,empty");
	CHECK_INT(bank_creds_add_query(&c, "gw-dev-app-key=again", err, sizeof(err)), -1);
	CHECK_STR(err, "api-query: gw-dev-app-key is given twice");
	CHECK_INT(bank_creds_add_query(&c, "inicio=2020-01-01", err, sizeof(err)), -1);
	CHECK_STR(err, "api-query: inicio is a parameter of the standard's calls, not an extra");
	CHECK_INT(bank_creds_add_query(&c, "paginacao.paginaAtual=9", err, sizeof(err)), -1);
	CHECK_INT(bank_creds_add_query(&c, "novalue", err, sizeof(err)), -1);
	CHECK_INT(bank_creds_add_query(&c, "=v", err, sizeof(err)), -1);
	CHECK_INT(bank_creds_add_query(&c, "a,b=v", err, sizeof(err)), -1);
	CHECK_INT(bank_creds_add_query(&c, "k=a\nb", err, sizeof(err)), -1);
	CHECK_STR(err, "api-query: k: its value must be at most 1024 printable ASCII characters");
	CHECK_STR(c.query, "gw-dev-app-key=a%20b%26c%3Dd&empty=");
	for (int i = 3; i <= 8; i++) {
		char q[32];
		snprintf(q, sizeof(q), "q%d=v", i);
		CHECK_INT(bank_creds_add_query(&c, q, err, sizeof(err)), 0);
	}
	CHECK_INT(bank_creds_add_query(&c, "q9=v", err, sizeof(err)), -1);
	CHECK_STR(err, "api-query: at most 8");
	bank_creds_wipe(&c);
	CHECK(c.headers == NULL && c.query == NULL);
	/* no extras: no names */
	bank_creds_header_names(&c, names, sizeof(names));
	CHECK_STR(names, "");

	e = bank_creds_escape("cob.write pix.read~-_ /?&=%");
	CHECK_STR(e, "cob.write%20pix.read~-_%20%2F%3F%26%3D%25");
	free(e);
}

int main(void)
{
	EVP_PKEY *k1 = EVP_EC_gen("P-256"), *k2 = EVP_EC_gen("P-256");
	X509 *x1 = self_signed(k1);
	char *cert = pem_of(k1, x1, 0), *key = pem_of(k1, NULL, 0), *other = pem_of(k2, NULL, 0);
	char *locked = pem_of(k1, NULL, 1);
	struct bank_creds c = good(cert, key), d;

	CHECK(!bank_creds_present(&(struct bank_creds){0}));
	CHECK(bank_creds_present(&c));
	CHECK_INT(bank_creds_check(&c, err, sizeof(err)), 0);
	CHECK_STR(c.api_url, "https://pix.banco.example/api/v2"); /* trailing slash gone */
	c.bank_ca_pem = strdup(cert);
	CHECK_INT(bank_creds_check(&c, err, sizeof(err)), 0);
	bank_creds_copy(&d, &c);
	CHECK_STR(d.client_secret, "s3cr3t");
	CHECK(d.client_secret != c.client_secret);
	bank_creds_wipe(&d);
	CHECK(d.client_secret == NULL);
	bank_creds_wipe(&c);

	REFUSED(free(c_.api_url); c_.api_url = strdup("http://pix.banco.example/api"),
				  "api-url: must be an https:// URL of at most 512 bytes");
	REFUSED(free(c_.token_url);
		c_.token_url = NULL, "token-url: must be an https:// URL of at most 512 bytes");
	REFUSED(free(c_.api_url);
		c_.api_url = strdup("https://pix.banco.example/a b"),
		"api-url: must be an URL without spaces, fragments or non-ASCII characters");
	REFUSED(free(c_.client_id);
		c_.client_id = strdup(""), "client-id: must be 1 to 256 characters");
	REFUSED(free(c_.client_secret);
		c_.client_secret = strdup("a\nb"), "client-secret: must be printable ASCII");
	REFUSED(free(c_.cert_pem); c_.cert_pem = strdup("nope"), "cert: not a PEM certificate");
	REFUSED(free(c_.key_pem);
		c_.key_pem = strdup(other), "key: not the private key of the certificate");
	REFUSED(free(c_.key_pem);
		c_.key_pem = strdup(locked), "key: not a PEM private key without a passphrase");
	REFUSED(free(c_.key_pem);
		c_.key_pem = NULL, "cert, key: both are required, PEM of at most 65536 bytes");
	REFUSED(c_.bank_ca_pem = strdup("junk"), "bank-ca: no certificate in the PEM");
	REFUSED(c_.scope = strdup("cob.write \"pix\""),
		"scope: OAuth2 scopes are printable ASCII without quotes or backslashes, "
		"separated by spaces");

	/* scopes: runs of spaces made one; copied with the extras */
	c = good(cert, key);
	c.scope = strdup("  cob.write   pix.read ");
	CHECK_INT(bank_creds_check(&c, err, sizeof(err)), 0);
	CHECK_STR(c.scope, "cob.write pix.read");
	CHECK_INT(bank_creds_add_query(&c, "k=v", err, sizeof(err)), 0);
	bank_creds_copy(&d, &c);
	CHECK_STR(d.scope, "cob.write pix.read");
	CHECK_STR(d.query, "k=v");
	CHECK(d.headers == NULL);
	bank_creds_wipe(&d);
	bank_creds_wipe(&c);
	test_extras();

	free(cert);
	free(key);
	free(other);
	free(locked);
	X509_free(x1);
	EVP_PKEY_free(k1);
	EVP_PKEY_free(k2);
	return check_finish("bankcreds");
}
