/* Unit tests of certcheck: certificates made here with OpenSSL (EC P-256):
 * a bank CA and its intermediate, client certificates (good, expired, not
 * yet valid, server-only purpose, of another CA), escaped as nginx's
 * $ssl_client_escaped_cert escapes them, each accepted or refused with its
 * reason; trust lists that are not one. */
#include "check.h"

#include "pixrelay/core/certcheck.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NOW 1795705200LL /* 2026-11-26T15:00:00Z */
#define DAY 86400L

struct cert {
	EVP_PKEY *key;
	X509 *x;
};

static long serial = 1;

static void ext(X509 *x, X509 *issuer, int nid, const char *value)
{
	X509V3_CTX ctx;
	X509_EXTENSION *e;

	X509V3_set_ctx(&ctx, issuer, x, NULL, NULL, 0);
	e = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
	if (!e || !X509_add_ext(x, e, -1))
		abort();
	X509_EXTENSION_free(e);
}

/* A certificate named `cn`, valid from NOW+from to NOW+to seconds, signed by
 * `issuer` (NULL: by itself); ca makes it an authority, eku its extended key
 * usage (NULL: none). */
static struct cert make(const char *cn, const struct cert *issuer, int ca, const char *eku,
			long from, long to)
{
	struct cert c;
	X509_NAME *name;

	c.key = EVP_EC_gen("P-256");
	c.x = X509_new();
	if (!c.key || !c.x)
		abort();
	X509_set_version(c.x, 2);
	ASN1_INTEGER_set(X509_get_serialNumber(c.x), serial++);
	X509_time_adj_ex(X509_getm_notBefore(c.x), 0, from, &(time_t){NOW});
	X509_time_adj_ex(X509_getm_notAfter(c.x), 0, to, &(time_t){NOW});
	X509_set_pubkey(c.x, c.key);
	name = X509_get_subject_name(c.x);
	X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1, 0);
	X509_set_issuer_name(c.x, issuer ? X509_get_subject_name(issuer->x) : name);
	ext(c.x, issuer ? issuer->x : c.x, NID_basic_constraints,
	    ca ? "critical,CA:TRUE" : "CA:FALSE");
	if (ca)
		ext(c.x, issuer ? issuer->x : c.x, NID_key_usage, "critical,keyCertSign,cRLSign");
	if (eku)
		ext(c.x, issuer ? issuer->x : c.x, NID_ext_key_usage, eku);
	if (!X509_sign(c.x, issuer ? issuer->key : c.key, EVP_sha256()))
		abort();
	return c;
}

static void drop(struct cert *c)
{
	X509_free(c->x);
	EVP_PKEY_free(c->key);
}

/* PEM of one or more certificates; the caller frees. */
static char *pem(X509 *a, X509 *b)
{
	BIO *bio = BIO_new(BIO_s_mem());
	char *data, *out;
	long n;

	PEM_write_bio_X509(bio, a);
	if (b)
		PEM_write_bio_X509(bio, b);
	n = BIO_get_mem_data(bio, &data);
	out = malloc((size_t)n + 1);
	memcpy(out, data, (size_t)n);
	out[n] = '\0';
	BIO_free(bio);
	return out;
}

/* As nginx's $ssl_client_escaped_cert: every byte but unreserved ones as %XX
 * (newlines, '+', '/', '=' among them). */
static char *escaped(X509 *x)
{
	char *p = pem(x, NULL), *out = malloc(strlen(p) * 3 + 1), *o = out;

	for (const char *s = p; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    c == '-' || c == '.' || c == '_' || c == '~')
			*o++ = (char)c;
		else
			o += sprintf(o, "%%%02X", c);
	}
	*o = '\0';
	free(p);
	return out;
}

static char reason[256];

static int verify(struct certcheck *cc, X509 *x, long long now)
{
	char *e = escaped(x);
	int rc;

	reason[0] = '\0';
	rc = certcheck_verify_escaped(cc, e, now, reason, sizeof(reason));
	free(e);
	return rc;
}

static void test_unescape(void)
{
	char out[16];

	CHECK_INT(certcheck_unescape("a%0Ab+c%2f", out, sizeof(out)), 6);
	CHECK_STR(out, "a\nb+c/");
	CHECK_INT(certcheck_unescape("%4", out, sizeof(out)), -1);
	CHECK_INT(certcheck_unescape("%zz", out, sizeof(out)), -1);
	CHECK_INT(certcheck_unescape("0123456789abcdef", out, sizeof(out)), -1); /* no room */
	CHECK_INT(certcheck_unescape("", out, sizeof(out)), 0);
}

static void test_chains(void)
{
	const char *client = "clientAuth", *server = "serverAuth";
	struct cert root = make("Bank Root CA", NULL, 1, NULL, -3650 * DAY, 3650 * DAY);
	struct cert inter = make("Bank Webhook CA", &root, 1, NULL, -365 * DAY, 3650 * DAY);
	struct cert good = make("webhook.bank.example", &inter, 0, client, -DAY, 365 * DAY);
	struct cert plain = make("no eku", &inter, 0, NULL, -DAY, 365 * DAY);
	struct cert expired = make("old", &inter, 0, client, -400 * DAY, -DAY);
	struct cert early = make("future", &inter, 0, client, DAY, 365 * DAY);
	struct cert srv = make("server only", &inter, 0, server, -DAY, 365 * DAY);
	struct cert other = make("Other CA", NULL, 1, NULL, -DAY, 3650 * DAY);
	struct cert stranger = make("webhook.bank.example", &other, 0, client, -DAY, 365 * DAY);
	char *list, err[256], fp[65];
	struct certcheck *cc;

	/* the root and its intermediate as the trust list */
	list = pem(root.x, inter.x);
	cc = certcheck_new(list, strlen(list), err, sizeof(err));
	CHECK(cc != NULL);
	CHECK_INT(certcheck_count(cc), 2);
	certcheck_fingerprint(cc, fp);
	CHECK_INT(strlen(fp), 64);
	CHECK_INT(verify(cc, good.x, NOW), 0);
	CHECK_INT(verify(cc, plain.x, NOW), 0);
	CHECK_INT(verify(cc, expired.x, NOW), -1);
	CHECK_STR(reason, "certificate has expired");
	CHECK_INT(verify(cc, early.x, NOW), -1);
	CHECK_STR(reason, "certificate is not yet valid");
	CHECK_INT(verify(cc, good.x, NOW + 366 * DAY),
		  -1); /* the clock decides, not the issue date */
	CHECK_STR(reason, "certificate has expired");
	CHECK_INT(verify(cc, srv.x, NOW), -1);
	CHECK_STR(reason, "unsuitable certificate purpose");
	CHECK_INT(verify(cc, stranger.x, NOW), -1);
	CHECK_STR(reason, "unable to get local issuer certificate");
	/* an authority's own certificate is no client certificate (key usage) */
	CHECK_INT(verify(cc, root.x, NOW), -1);
	CHECK_STR(reason, "unsuitable certificate purpose");
	certcheck_free(cc);
	free(list);

	/* only the intermediate: a pinned issuer is enough (partial chain) */
	list = pem(inter.x, NULL);
	cc = certcheck_new(list, strlen(list), err, sizeof(err));
	CHECK(cc != NULL);
	CHECK_INT(verify(cc, good.x, NOW), 0);
	CHECK_INT(verify(cc, stranger.x, NOW), -1);
	certcheck_free(cc);
	free(list);

	/* another CA's list lets none of the bank's certificates in */
	list = pem(other.x, NULL);
	cc = certcheck_new(list, strlen(list), err, sizeof(err));
	CHECK_INT(verify(cc, good.x, NOW), -1);
	CHECK_STR(reason, "unable to get local issuer certificate");
	CHECK_INT(verify(cc, stranger.x, NOW), 0);

	/* not certificates */
	CHECK_INT(certcheck_verify_escaped(cc, "", NOW, reason, sizeof(reason)), -1);
	CHECK_STR(reason, "not a percent-escaped PEM certificate");
	CHECK_INT(certcheck_verify_escaped(cc, "hello", NOW, reason, sizeof(reason)), -1);
	CHECK_STR(reason, "not a PEM certificate");
	CHECK_INT(certcheck_verify_escaped(cc, "%GG", NOW, reason, sizeof(reason)), -1);
	CHECK_STR(reason, "not a percent-escaped PEM certificate");
	{
		char *huge = malloc(CERTCHECK_ESCAPED_MAX + 2);
		memset(huge, 'A', CERTCHECK_ESCAPED_MAX + 1);
		huge[CERTCHECK_ESCAPED_MAX + 1] = '\0';
		CHECK_INT(certcheck_verify_escaped(cc, huge, NOW, reason, sizeof(reason)), -1);
		CHECK_STR(reason, "the certificate is too long");
		free(huge);
	}
	certcheck_free(cc);
	free(list);

	drop(&root);
	drop(&inter);
	drop(&good);
	drop(&plain);
	drop(&expired);
	drop(&early);
	drop(&srv);
	drop(&other);
	drop(&stranger);
}

static void test_lists(void)
{
	char err[256];
	struct cert ca = make("CA", NULL, 1, NULL, -DAY, DAY);
	char *one = pem(ca.x, NULL), *withkey;
	BIO *bio = BIO_new(BIO_s_mem());
	char *data;
	long n;

	CHECK(certcheck_new("", 0, err, sizeof(err)) == NULL);
	CHECK_STR(err, "the trust list must be 1 to 65536 bytes of PEM");
	CHECK(certcheck_new("hello", 5, err, sizeof(err)) == NULL);
	CHECK_STR(err, "no certificate in the PEM");
	/* a private key in the list is refused, not ignored */
	PEM_write_bio_X509(bio, ca.x);
	PEM_write_bio_PrivateKey(bio, ca.key, NULL, NULL, 0, NULL, NULL);
	n = BIO_get_mem_data(bio, &data);
	withkey = strndup(data, (size_t)n);
	CHECK(certcheck_new(withkey, strlen(withkey), err, sizeof(err)) == NULL);
	CHECK_STR(err, "the PEM holds something other than certificates");
	/* 17 certificates are too many */
	{
		size_t len = strlen(one);
		char *many = malloc(len * 17 + 1);
		for (int i = 0; i < 17; i++)
			memcpy(many + len * (size_t)i, one, len);
		many[len * 17] = '\0';
		CHECK(certcheck_new(many, len * 17, err, sizeof(err)) == NULL);
		CHECK_STR(err, "more than 16 certificates in the PEM");
		free(many);
	}
	BIO_free(bio);
	free(withkey);
	free(one);
	drop(&ca);
}

int main(void)
{
	test_unescape();
	test_chains();
	test_lists();
	return check_finish("certcheck");
}
