/* Unit tests of certcheck: certificates made here with OpenSSL (EC P-256):
 * a bank CA and its intermediate, client certificates (good, expired, not
 * yet valid, server-only purpose, of another CA), escaped as nginx's
 * $ssl_client_escaped_cert escapes them, each accepted or refused with its
 * reason; trust lists that are not one. Pins: RFC 4514 subjects read and
 * written back, or refused naming why; key pins; leaves of one CA told
 * apart by their subject (compared as names) and by their key. */
#include "check.h"

#include "pixrelay/core/base64.h"
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

/* ---- pins ---- */

static char normal[CERTCHECK_DN_MAX + 1];

static int subject(const char *dn)
{
	normal[0] = '\0';
	reason[0] = '\0';
	return certcheck_subject_normal(dn, normal, sizeof(normal), reason, sizeof(reason));
}

static void test_subjects(void)
{
	static const struct {
		const char *dn, *normal;
	} good[] = {
	    {"CN=webhook.bank.example,O=Banco Exemplo S.A.,C=BR",
	     "CN=webhook.bank.example,O=Banco Exemplo S.A.,C=BR"},
	    /* names in any case, spaces around separators */
	    {"cn = webhook.bank.example , o=Banco Exemplo S.A.,  c=BR ",
	     "CN=webhook.bank.example,O=Banco Exemplo S.A.,C=BR"},
	    /* every escape, and '=' that needs none */
	    {"CN=\\#x\\,y\\+z\\\"\\\\\\<\\>\\;\\=a=b", "CN=\\#x\\,y\\+z\\\"\\\\\\<\\>\\;=a=b"},
	    /* \XX bytes of UTF-8, and UTF-8 as is */
	    {"L=S\\C3\\A3o Paulo", "L=S\xc3\xa3o Paulo"},
	    {"L=S\xc3\xa3o Paulo", "L=S\xc3\xa3o Paulo"},
	    /* escaped spaces are kept, the others at a value's ends are not */
	    {"CN=\\ a \\ ", "CN=\\ a \\ "},
	    {"CN=a b  ", "CN=a b"},
	    /* '#' first is hex: the DER of a UTF8String, of a PrintableString */
	    {"CN=#0C03616263", "CN=abc"},
	    {"C=#13024252", "C=BR"},
	    {"CN=a #", "CN=a #"},
	    /* a lone '#' (OpenSSL's own writer leaves it unescaped) */
	    {"CN=\\#", "CN=\\#"},
	    /* control characters as \XX */
	    {"CN=a\\0Ab", "CN=a\\0Ab"},
	    /* multi-valued RDNs, OIDs, other names */
	    {"CN=a+OU=b,O=c", "CN=a+OU=b,O=c"},
	    {"2.5.4.3=x,2.5.4.10=y", "CN=x,O=y"},
	    {"1.2.3.4=z", "1.2.3.4=z"},
	    {"E=a@b.example,serialNumber=12345678000190,street=Rua A",
	     "emailAddress=a@b.example,serialNumber=12345678000190,street=Rua A"},
	    {"organizationName=o", "O=o"},
	    {"CN=", "CN="},
	};
	static const struct {
		const char *dn, *why;
	} bad[] = {
	    {"", "is empty"},
	    {"   ", "is empty"},
	    {"webhook.bank.example", "unknown attribute type 'webhook' (at character 1)"},
	    {"CN", "'=' expected after the attribute type (at character 3)"},
	    {"CN x", "'=' expected after the attribute type (at character 4)"},
	    {"XX=a", "unknown attribute type 'XX' (at character 1)"},
	    /* a name of OpenSSL's without an OID */
	    {"KxECDHE=a", "unknown attribute type 'KxECDHE' (at character 1)"},
	    {"=a", "an attribute type expected, like CN or 2.5.4.3 (at character 1)"},
	    {"/C=BR/O=Banco/CN=x",
	     "an RFC 4514 name is written CN=...,O=...,C=..., the most specific first, not "
	     "/C=.../CN=... (openssl x509 -noout -subject -nameopt RFC2253 writes it) (at "
	     "character 1)"},
	    {"2=x", "an attribute type is a name or a dotted OID, like CN or 2.5.4.3 (at "
		    "character 1)"},
	    {"2.05=x", "an OID's numbers are digits without leading zeros (at character 3)"},
	    {"CN=a,", "nothing after ',' (at character 5)"},
	    {"CN=a+ ", "nothing after '+' (at character 6)"},
	    {"CN=a;O=b",
	     "';' in a value is written \\; (RDNs are separated by ',') (at character 5)"},
	    {"CN=\"a\"", "'\"' in a value is written \\\" (at character 4)"},
	    {"CN=a<b", "'<' in a value is written \\< (at character 5)"},
	    {"CN=a\\x", "'\\' escapes one of \\ , + \" < > ; = # or a space, or two hex digits "
			"(at character 5)"},
	    {"CN=a\\", "'\\' escapes one of \\ , + \" < > ; = # or a space, or two hex digits "
		       "(at character 5)"},
	    {"CN=a\\00", "a value holds a NUL (\\00) (at character 5)"},
	    {"CN=\\FF", "a value that is not UTF-8 (at character 4)"},
	    {"CN=#",
	     "'#' begins a value of hex digit pairs (the DER of a string) (at character 5)"},
	    {"CN=#0C0", "'#' begins a value of hex digit pairs (the DER of a string) (at character "
			"7)"},
	    {"CN=#0203010001", "a '#' value is the DER of a string (UTF8String, PrintableString, "
			       "IA5String, ...) (at character 4)"},
	    {"CN=#0C05616263", "a '#' value is the DER of a string (UTF8String, PrintableString, "
			       "IA5String, ...) (at character 4)"},
	    {"CN=#0C0161 x", "',' or '+' expected after a value (at character 12)"},
	    {"CN=#0C0100", "a '#' value holds no text (or a NUL) (at character 4)"},
	};
	char big[CERTCHECK_DN_MAX + 2], out[8];

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		CHECK_INT(subject(good[i].dn), 0);
		CHECK_STR(normal, good[i].normal);
		/* what it writes reads back as itself */
		CHECK_INT(subject(good[i].normal), 0);
		CHECK_STR(normal, good[i].normal);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK_INT(subject(bad[i].dn), -1);
		CHECK_STR(reason, bad[i].why);
		CHECK_STR(normal, "");
	}
	/* 32 attributes, not 33 */
	big[0] = '\0';
	for (int i = 0; i < 33; i++)
		strcat(big, i ? ",O=x" : "O=x");
	CHECK_INT(subject(big), -1);
	CHECK_STR(reason, "more than 32 attributes (at character 129)");
	big[strlen(big) - 4] = '\0';
	CHECK_INT(subject(big), 0);
	/* 1,024 characters, and what fits out */
	memset(big, 'a', sizeof(big) - 1);
	memcpy(big, "CN=", 3);
	big[CERTCHECK_DN_MAX + 1] = '\0';
	CHECK_INT(subject(big), -1);
	CHECK_STR(reason, "longer than 1024 characters");
	big[CERTCHECK_DN_MAX] = '\0';
	CHECK_INT(subject(big), 0);
	CHECK_INT(strlen(normal), CERTCHECK_DN_MAX);
	/* an OID much longer written as its name: too long once written */
	big[0] = '\0';
	for (int i = 0; i < 32; i++)
		strcat(big, i ? ",2.5.29.14=x" : "2.5.29.14=x");
	CHECK_INT(subject(big), 0);
	CHECK_INT(certcheck_subject_normal("CN=abc", out, 6, reason, sizeof(reason)), -1);
	CHECK_STR(reason, "longer than 1024 characters once written out");
}

/* The pin of x's key, as `openssl pkey -pubin -outform der | openssl dgst
 * -sha256 -binary | base64` writes it after sha256/. */
static void pin_of(X509 *x, char out[CERTCHECK_PIN_LEN + 1])
{
	unsigned char *der = NULL, md[32];
	int len = i2d_X509_PUBKEY(X509_get_X509_PUBKEY(x), &der);
	unsigned int mdlen = 0;

	EVP_Digest(der, (size_t)len, md, &mdlen, EVP_sha256(), NULL);
	OPENSSL_free(der);
	memcpy(out, "sha256/", 7);
	base64_encode(md, sizeof(md), out + 7);
}

static void test_pin_lists(void)
{
	char list[CERTCHECK_PINS_TEXT] = "", err[256], one[CERTCHECK_PIN_LEN + 1];
	char curl[CERTCHECK_PIN_LEN + 2], want[CERTCHECK_PINS_TEXT] = "";
	unsigned char md[32];

	for (int i = 0; i < 8; i++) {
		memset(md, i, sizeof(md));
		memcpy(one, "sha256/", 7);
		base64_encode(md, sizeof(md), one + 7);
		if (i == 1) {
			/* curl's sha256// */
			snprintf(curl, sizeof(curl), "sha256//%s", one + 7);
			CHECK_INT(certcheck_pins_add(list, curl, err, sizeof(err)), 0);
		} else {
			CHECK_INT(certcheck_pins_add(list, one, err, sizeof(err)), 0);
		}
		strcat(want, i ? " " : "");
		strcat(want, one);
	}
	CHECK_STR(list, want);
	CHECK_INT(strlen(list), CERTCHECK_PINS_TEXT - 1);
	CHECK_INT(certcheck_pins_add(list, one, err, sizeof(err)), -1);
	CHECK_STR(err, "sha256/BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc= is given twice");
	memset(md, 9, sizeof(md));
	base64_encode(md, sizeof(md), one + 7);
	CHECK_INT(certcheck_pins_add(list, one, err, sizeof(err)), -1);
	CHECK_STR(err, "at most 8 pins");
	CHECK_STR(list, want);
	list[0] = '\0';
	for (size_t i = 0; i < 6; i++) {
		static const char *const wrong[] = {
		    "",
		    "sha256/",
		    "sha1/AAAAAAAAAAAAAAAAAAAAAAAAAAA=",
		    "SHA256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
		    "sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
		    "sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA-=",
		};
		CHECK_INT(certcheck_pins_add(list, wrong[i], err, sizeof(err)), -1);
		CHECK_STR(err, "must be sha256/ and the base64 of the SHA-256 of the certificate's "
			       "public key (its DER SubjectPublicKeyInfo): 44 characters");
	}
	CHECK_STR(list, "");
}

/* `c` with the subject `name` instead, signed again by `issuer`. */
static void rename_cert(struct cert *c, const struct cert *issuer, X509_NAME *name)
{
	X509_set_subject_name(c->x, name);
	if (!X509_sign(c->x, issuer->key, EVP_sha256()))
		abort();
	X509_NAME_free(name);
}

/* C=BR (PrintableString), O=org (UTF8String), CN=cn (UTF8String): X.509's
 * order, as openssl req writes /C=BR/O=.../CN=.... */
static X509_NAME *bank_name(const char *org, const char *cn)
{
	X509_NAME *n = X509_NAME_new();

	X509_NAME_add_entry_by_txt(n, "C", V_ASN1_PRINTABLESTRING, (const unsigned char *)"BR", -1,
				   -1, 0);
	X509_NAME_add_entry_by_txt(n, "O", V_ASN1_UTF8STRING, (const unsigned char *)org, -1, -1,
				   0);
	X509_NAME_add_entry_by_txt(n, "CN", V_ASN1_UTF8STRING, (const unsigned char *)cn, -1, -1,
				   0);
	return n;
}

static int verify_pinned(const char *list_pem, X509 *x, const char *dn, const char *pins)
{
	char err[256];
	struct certcheck *cc = certcheck_new(list_pem, strlen(list_pem), err, sizeof(err));
	int rc;

	if (!cc || certcheck_pin(cc, dn, pins, err, sizeof(err)) < 0) {
		snprintf(reason, sizeof(reason), "%s", err);
		certcheck_free(cc);
		return -2;
	}
	rc = verify(cc, x, NOW);
	certcheck_free(cc);
	return rc;
}

static void test_pinned_leaves(void)
{
	const char *client = "clientAuth";
	struct cert ca = make("ICP Test CA", NULL, 1, NULL, -DAY, 3650 * DAY);
	struct cert bank = make("x", &ca, 0, client, -DAY, 365 * DAY);
	struct cert other = make("x", &ca, 0, client, -DAY, 365 * DAY);
	struct cert multi = make("x", &ca, 0, client, -DAY, 365 * DAY);
	struct cert expired = make("x", &ca, 0, client, -400 * DAY, -DAY);
	char *list = pem(ca.x, NULL), bank_pin[CERTCHECK_PIN_LEN + 1];
	char other_pin[CERTCHECK_PIN_LEN + 1], pins[CERTCHECK_PINS_TEXT];
	const char *dn = "CN=webhook.bank.example,O=Banco Exemplo S.A.,C=BR";
	X509_NAME *m;

	rename_cert(&bank, &ca, bank_name("Banco Exemplo S.A.", "webhook.bank.example"));
	/* another customer of the same CA */
	rename_cert(&other, &ca, bank_name("Loja Qualquer Ltda", "webhook.bank.example"));
	rename_cert(&expired, &ca, bank_name("Banco Exemplo S.A.", "webhook.bank.example"));
	m = X509_NAME_new();
	X509_NAME_add_entry_by_txt(m, "O", MBSTRING_UTF8, (const unsigned char *)"Banco", -1, -1,
				   0);
	X509_NAME_add_entry_by_txt(m, "CN", MBSTRING_UTF8, (const unsigned char *)"hook", -1, -1,
				   0);
	X509_NAME_add_entry_by_txt(m, "OU", MBSTRING_UTF8, (const unsigned char *)"Pix", -1, -1,
				   -1);
	rename_cert(&multi, &ca, m);
	pin_of(bank.x, bank_pin);
	pin_of(other.x, other_pin);

	/* without pins the CA is all there is: both pass */
	CHECK_INT(verify_pinned(list, bank.x, NULL, NULL), 0);
	CHECK_INT(verify_pinned(list, other.x, "", ""), 0);
	/* the subject, compared as a name: case, spaces, string types */
	CHECK_INT(verify_pinned(list, bank.x, dn, NULL), 0);
	CHECK_INT(verify_pinned(list, bank.x,
				"cn=WEBHOOK.bank.example, o=banco  exemplo s.a. ,c=br", NULL),
		  0);
	CHECK_INT(verify_pinned(list, bank.x,
				"CN=webhook.bank.example,O=#0C1242616E636F204578656D"
				"706C6F20532E412E,C=BR",
				NULL),
		  0);
	CHECK_INT(verify_pinned(list, other.x, dn, NULL), -1);
	CHECK_STR(reason, "the certificate's subject is not the connection's pinned subject (it is "
			  "CN=webhook.bank.example,O=Loja Qualquer Ltda,C=BR)");
	/* X.509's order written as RFC 4514 is another name */
	CHECK_INT(
	    verify_pinned(list, bank.x, "C=BR,O=Banco Exemplo S.A.,CN=webhook.bank.example", NULL),
	    -1);
	CHECK_STR(reason, "the certificate's subject is not the connection's pinned subject (it is "
			  "CN=webhook.bank.example,O=Banco Exemplo S.A.,C=BR)");
	/* a part of the name is not the name */
	CHECK_INT(verify_pinned(list, bank.x, "CN=webhook.bank.example", NULL), -1);
	/* a multi-valued RDN, its attributes in either order (DER sorts them) */
	CHECK_INT(verify_pinned(list, multi.x, "CN=hook+OU=Pix,O=Banco", NULL), 0);
	CHECK_INT(verify_pinned(list, multi.x, "OU=pix + CN=hook,O=Banco", NULL), 0);
	CHECK_INT(verify_pinned(list, multi.x, "CN=hook,OU=Pix,O=Banco", NULL), -1);
	CHECK_STR(reason, "the certificate's subject is not the connection's pinned subject (it is "
			  "OU=Pix+CN=hook,O=Banco)");
	/* the chain first: an expired leaf with the right subject */
	CHECK_INT(verify_pinned(list, expired.x, dn, NULL), -1);
	CHECK_STR(reason, "certificate has expired");

	/* key pins: any one of them */
	CHECK_INT(verify_pinned(list, bank.x, NULL, bank_pin), 0);
	CHECK_INT(verify_pinned(list, other.x, NULL, bank_pin), -1);
	CHECK_STR(reason, "the certificate's key matches none of the connection's pins");
	pins[0] = '\0';
	CHECK_INT(certcheck_pins_add(pins, other_pin, reason, sizeof(reason)), 0);
	CHECK_INT(certcheck_pins_add(pins, bank_pin, reason, sizeof(reason)), 0);
	CHECK_INT(verify_pinned(list, bank.x, NULL, pins), 0);
	CHECK_INT(verify_pinned(list, other.x, NULL, pins), 0);
	CHECK_INT(verify_pinned(list, multi.x, NULL, pins), -1);
	/* both: each must hold */
	CHECK_INT(verify_pinned(list, bank.x, dn, pins), 0);
	CHECK_INT(verify_pinned(list, other.x, dn, pins), -1);
	CHECK_STR(reason, "the certificate's subject is not the connection's pinned subject (it is "
			  "CN=webhook.bank.example,O=Loja Qualquer Ltda,C=BR)");
	CHECK_INT(verify_pinned(list, bank.x, dn, other_pin), -1);
	CHECK_STR(reason, "the certificate's key matches none of the connection's pins");
	/* pins that do not read: refused before any certificate */
	CHECK_INT(verify_pinned(list, bank.x, "CN", NULL), -2);
	CHECK_STR(reason, "'=' expected after the attribute type (at character 3)");
	CHECK_INT(verify_pinned(list, bank.x, NULL, "sha256/x"), -2);
	CHECK_STR(reason, "the connection's key pins do not read");

	free(list);
	drop(&ca);
	drop(&bank);
	drop(&other);
	drop(&multi);
	drop(&expired);
}

int main(void)
{
	test_unescape();
	test_chains();
	test_lists();
	test_subjects();
	test_pin_lists();
	test_pinned_leaves();
	return check_finish("certcheck");
}
