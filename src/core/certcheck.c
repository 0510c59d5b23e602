/* certcheck: client certificates forwarded by a reverse proxy, checked
 * against one bank connection's own trust list with OpenSSL's verifier
 * (chain, dates, TLS-client purpose), then against its pins: the leaf's
 * subject (an RFC 4514 name read here into an X509_NAME) and the SHA-256
 * of its public key. Where the list and the pins come from and which
 * connection a request names is the bank store's (src/store/banks.c). */
#include "pixrelay/core/certcheck.h"

#include "pixrelay/core/base64.h"
#include "pixrelay/core/ids.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/core/validate.h"

#include <openssl/asn1.h>
#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/objects.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/sha.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct certcheck {
	X509_STORE *store;
	size_t n;
	unsigned char first_sha256[32];
	X509_NAME *subject; /* the leaf's pinned subject; NULL: any */
	unsigned char pins[CERTCHECK_PINS_MAX][32];
	size_t npins; /* 0: any key */
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
	X509_NAME_free(c->subject);
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

long certcheck_unescape(const char *in, char *out, size_t size)
{
	size_t o = 0;

	for (const char *p = in; *p; p++) {
		int c = (unsigned char)*p;

		if (c == '%') {
			int hi = ids_hexval(p[1]), lo = hi < 0 ? -1 : ids_hexval(p[2]);
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

/* ---- subjects: RFC 4514 names ---- */

/* Attribute types taken in any case: RFC 4514's (section 3) and a few that
 * certificates often carry. Other names are OpenSSL's short or long names
 * as it spells them, or dotted OIDs. */
static const struct {
	const char *name;
	int nid;
} dn_types[] = {
    {"CN", NID_commonName},
    {"L", NID_localityName},
    {"ST", NID_stateOrProvinceName},
    {"O", NID_organizationName},
    {"OU", NID_organizationalUnitName},
    {"C", NID_countryName},
    {"STREET", NID_streetAddress},
    {"DC", NID_domainComponent},
    {"UID", NID_userId},
    {"SERIALNUMBER", NID_serialNumber},
    {"EMAILADDRESS", NID_pkcs9_emailAddress},
    {"E", NID_pkcs9_emailAddress},
    {"TITLE", NID_title},
    {"SN", NID_surname},
    {"GN", NID_givenName},
    {"GIVENNAME", NID_givenName},
    {"ORGANIZATIONIDENTIFIER", NID_organizationIdentifier},
    {"BUSINESSCATEGORY", NID_businessCategory},
};

/* The string types a #hex value may hold: those X509_NAME_cmp folds. */
#define DN_HEX_TYPES                                                                               \
	(B_ASN1_UTF8STRING | B_ASN1_PRINTABLESTRING | B_ASN1_IA5STRING | B_ASN1_T61STRING |        \
	 B_ASN1_BMPSTRING | B_ASN1_UNIVERSALSTRING | B_ASN1_VISIBLESTRING)

/* A name being read: the text, where we are, and the first error. */
struct dn_reader {
	const char *s;
	size_t i, n;
	char *err;
	size_t errlen;
};

static int dn_fail(struct dn_reader *r, size_t at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int dn_fail(struct dn_reader *r, size_t at, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(r->err, r->errlen, fmt, ap);
	va_end(ap);
	if (n >= 0 && (size_t)n < r->errlen)
		snprintf(r->err + n, r->errlen - (size_t)n, " (at character %zu)", at + 1);
	return -1;
}

static bool is_alpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static void dn_spaces(struct dn_reader *r)
{
	while (r->i < r->n && r->s[r->i] == ' ')
		r->i++;
}

/* The NID of keystring `name`, as dn_type reads it; NID_undef when none. */
static int dn_nid(const char *name)
{
	int nid;

	for (size_t i = 0; i < sizeof(dn_types) / sizeof(dn_types[0]); i++)
		if (strcasecmp(name, dn_types[i].name) == 0)
			return dn_types[i].nid;
	nid = OBJ_sn2nid(name);
	return nid != NID_undef ? nid : OBJ_ln2nid(name);
}

/* An attribute type at r->i: a keystring (a letter, then letters, digits
 * and '-') or a numericoid (numbers without leading zeros joined by '.').
 * The object (the caller frees), or NULL with the error set. */
static ASN1_OBJECT *dn_type(struct dn_reader *r)
{
	size_t at = r->i, len;
	char name[65];
	ASN1_OBJECT *obj = NULL;

	if (is_alpha(r->s[r->i])) {
		while (r->i < r->n &&
		       (is_alpha(r->s[r->i]) || is_digit(r->s[r->i]) || r->s[r->i] == '-'))
			r->i++;
	} else if (is_digit(r->s[r->i])) {
		int dots = 0;

		for (;;) {
			size_t from = r->i;

			while (r->i < r->n && is_digit(r->s[r->i]))
				r->i++;
			if (r->i == from || (r->i - from > 1 && r->s[from] == '0')) {
				dn_fail(r, from,
					"an OID's numbers are digits without leading zeros");
				return NULL;
			}
			if (r->i >= r->n || r->s[r->i] != '.')
				break;
			r->i++;
			dots++;
		}
		if (!dots) {
			dn_fail(r, at,
				"an attribute type is a name or a dotted OID, like CN or 2.5.4.3");
			return NULL;
		}
	} else {
		dn_fail(r, at,
			r->s[at] == '/' && at == 0
			    ? "an RFC 4514 name is written CN=...,O=...,C=..., the most specific "
			      "first, not /C=.../CN=... (openssl x509 -noout -subject -nameopt "
			      "RFC2253 writes it)"
			    : "an attribute type expected, like CN or 2.5.4.3");
		return NULL;
	}
	len = r->i - at;
	if (len >= sizeof(name)) {
		dn_fail(r, at, "an attribute type longer than %zu characters", sizeof(name) - 1);
		return NULL;
	}
	memcpy(name, r->s + at, len);
	name[len] = '\0';
	if (is_digit(name[0])) {
		obj = OBJ_txt2obj(name, 1);
		ERR_clear_error();
		if (!obj)
			dn_fail(r, at, "'%s' is not an OID", name);
	} else {
		int nid = dn_nid(name);
		const ASN1_OBJECT *known = nid == NID_undef ? NULL : OBJ_nid2obj(nid);

		/* some of OpenSSL's names have no OID (KxECDHE): no attribute */
		obj = known && OBJ_length(known) > 0 ? OBJ_dup(known) : NULL;
		if (!obj)
			dn_fail(r, at, "unknown attribute type '%s'", name);
	}
	return obj;
}

static bool dn_special(char c)
{
	return c && strchr(" \"#+,;<=>\\", c) != NULL;
}

/* A #hex value at r->i ('#' read): the DER of a string of DN_HEX_TYPES.
 * The entry of type `obj`, or NULL with the error set. */
static X509_NAME_ENTRY *dn_hex_value(struct dn_reader *r, const ASN1_OBJECT *obj, size_t at)
{
	unsigned char *der = mem_alloc(r->n / 2 + 1), *utf8 = NULL;
	const unsigned char *p;
	size_t len = 0;
	ASN1_TYPE *t = NULL;
	X509_NAME_ENTRY *e = NULL;
	int hi, lo, u;

	while (r->i + 1 < r->n && (hi = ids_hexval(r->s[r->i])) >= 0 &&
	       (lo = ids_hexval(r->s[r->i + 1])) >= 0) {
		der[len++] = (unsigned char)(hi * 16 + lo);
		r->i += 2;
	}
	if (len == 0 || (r->i < r->n && !strchr(" ,+", r->s[r->i]))) {
		dn_fail(r, r->i, "'#' begins a value of hex digit pairs (the DER of a string)");
		goto done;
	}
	p = der;
	t = d2i_ASN1_TYPE(NULL, &p, (long)len);
	if (!t || p != der + len || t->type < 0 || t->type > 30 ||
	    !(ASN1_tag2bit(t->type) & DN_HEX_TYPES)) {
		dn_fail(r, at,
			"a '#' value is the DER of a string (UTF8String, PrintableString, "
			"IA5String, ...)");
		goto done;
	}
	u = ASN1_STRING_to_UTF8(&utf8, t->value.asn1_string);
	if (u < 0 || memchr(utf8, '\0', (size_t)u)) {
		dn_fail(r, at, "a '#' value holds no text (or a NUL)");
		goto done;
	}
	e = X509_NAME_ENTRY_create_by_OBJ(NULL, obj, t->type, t->value.asn1_string->data,
					  t->value.asn1_string->length);
	if (!e)
		mem_oom(__FILE__, __LINE__);
done:
	OPENSSL_free(utf8);
	ASN1_TYPE_free(t);
	free(der);
	ERR_clear_error();
	return e;
}

/* A value at r->i (after '=' and spaces), up to an unescaped ',' or '+' or
 * the end, unescaped spaces at its end left out: the entry of type `obj`,
 * or NULL with the error set. */
static X509_NAME_ENTRY *dn_value(struct dn_reader *r, const ASN1_OBJECT *obj)
{
	unsigned char *buf;
	size_t at = r->i, len = 0, keep = 0;
	X509_NAME_ENTRY *e = NULL;

	if (r->i < r->n && r->s[r->i] == '#') {
		r->i++;
		return dn_hex_value(r, obj, at);
	}
	buf = mem_alloc(r->n + 1);
	while (r->i < r->n && r->s[r->i] != ',' && r->s[r->i] != '+') {
		char c = r->s[r->i];
		int hi, lo;

		if (c == '\\') {
			/* the text ends in a NUL: s[i + 2] is there when s[i + 1]
			 * is a hex digit */
			if ((hi = ids_hexval(r->s[r->i + 1])) >= 0 &&
			    (lo = ids_hexval(r->s[r->i + 2])) >= 0) {
				if (hi == 0 && lo == 0) {
					dn_fail(r, r->i, "a value holds a NUL (\\00)");
					goto done;
				}
				buf[len++] = (unsigned char)(hi * 16 + lo);
				r->i += 3;
			} else if (dn_special(r->s[r->i + 1])) {
				buf[len++] = (unsigned char)r->s[r->i + 1];
				r->i += 2;
			} else {
				dn_fail(r, r->i,
					"'\\' escapes one of \\ , + \" < > ; = # or a space, or "
					"two hex digits");
				goto done;
			}
			keep = len;
			continue;
		}
		if (c == '"' || c == ';' || c == '<' || c == '>') {
			dn_fail(r, r->i, "'%c' in a value is written \\%c%s", c, c,
				c == ';' ? " (RDNs are separated by ',')" : "");
			goto done;
		}
		buf[len++] = (unsigned char)c;
		if (c != ' ')
			keep = len;
		r->i++;
	}
	len = keep;
	if (validate_utf8_chars((const char *)buf, len) < 0) {
		dn_fail(r, at, "a value that is not UTF-8");
		goto done;
	}
	e = X509_NAME_ENTRY_create_by_OBJ(NULL, obj, V_ASN1_UTF8STRING, buf, (int)len);
	if (!e)
		mem_oom(__FILE__, __LINE__);
done:
	free(buf);
	return e;
}

/* Read `dn` into a new X509_NAME (the caller frees), X.509's order: RFC
 * 4514 writes the most specific RDN first, X.509 the least. NULL with why
 * in err. */
static X509_NAME *dn_parse(const char *dn, char *err, size_t errlen)
{
	struct dn_reader r = {dn, 0, strnlen(dn, CERTCHECK_DN_MAX + 1), err, errlen};
	X509_NAME_ENTRY *entries[CERTCHECK_DN_ATTRS];
	int rdn[CERTCHECK_DN_ATTRS];
	size_t n = 0;
	int nrdn = 0;
	char sep = 0;
	X509_NAME *name = NULL;

	if (r.n > CERTCHECK_DN_MAX) {
		snprintf(err, errlen, "longer than %d characters", CERTCHECK_DN_MAX);
		return NULL;
	}
	dn_spaces(&r);
	if (r.i == r.n) {
		snprintf(err, errlen, "is empty");
		return NULL;
	}
	for (;;) {
		ASN1_OBJECT *obj;
		X509_NAME_ENTRY *e;

		if (n == CERTCHECK_DN_ATTRS) {
			dn_fail(&r, r.i, "more than %d attributes", CERTCHECK_DN_ATTRS);
			goto fail;
		}
		dn_spaces(&r);
		if (r.i == r.n) {
			dn_fail(&r, r.i - 1, "nothing after '%c'", sep);
			goto fail;
		}
		if (!(obj = dn_type(&r)))
			goto fail;
		dn_spaces(&r);
		if (r.i == r.n || dn[r.i] != '=') {
			dn_fail(&r, r.i, "'=' expected after the attribute type");
			ASN1_OBJECT_free(obj);
			goto fail;
		}
		r.i++;
		dn_spaces(&r);
		e = dn_value(&r, obj);
		ASN1_OBJECT_free(obj);
		if (!e)
			goto fail;
		rdn[n] = nrdn;
		entries[n++] = e;
		dn_spaces(&r);
		if (r.i == r.n)
			break;
		sep = dn[r.i];
		if (sep != ',' && sep != '+') {
			dn_fail(&r, r.i, "',' or '+' expected after a value");
			goto fail;
		}
		nrdn += sep == ',';
		r.i++;
	}
	name = X509_NAME_new();
	if (!name)
		mem_oom(__FILE__, __LINE__);
	for (int k = nrdn; k >= 0; k--) {
		int first = 1;

		for (size_t j = 0; j < n; j++) {
			if (rdn[j] != k)
				continue;
			if (!X509_NAME_add_entry(name, entries[j], -1, first ? 0 : -1)) {
				snprintf(err, errlen, "a value that cannot be encoded");
				X509_NAME_free(name);
				name = NULL;
				goto fail;
			}
			first = 0;
		}
	}
	/* the canonical form X509_NAME_cmp compares, made now */
	if (i2d_X509_NAME(name, NULL) <= 0) {
		snprintf(err, errlen, "a value that cannot be encoded");
		X509_NAME_free(name);
		name = NULL;
	}
fail:
	for (size_t j = 0; j < n; j++)
		X509_NAME_ENTRY_free(entries[j]);
	ERR_clear_error();
	return name;
}

/* An attribute type as dn_type reads it back: its short name when that
 * leads there again, else its dotted OID. */
static void dn_type_text(BIO *b, const ASN1_OBJECT *obj)
{
	int nid = OBJ_obj2nid(obj);
	const char *sn = nid != NID_undef ? OBJ_nid2sn(nid) : NULL;
	char oid[128];
	int keystring = sn && is_alpha(sn[0]);

	for (const char *p = sn; keystring && *p; p++)
		keystring = is_alpha(*p) || is_digit(*p) || *p == '-';
	if (keystring && strlen(sn) < 65 && dn_nid(sn) == nid) {
		BIO_puts(b, sn);
		return;
	}
	OBJ_obj2txt(oid, sizeof(oid), obj, 1);
	BIO_puts(b, oid);
}

/* A value written as RFC 4514 text: its UTF-8 with '\' before the
 * characters dn_value would read otherwise (", + , ; < > \, '#' or a space
 * first, a space last) and control characters as \XX; a value that is no
 * text as '#' and the hex of its DER. (OpenSSL's own writer leaves a lone
 * '#' unescaped.) -1 when it cannot be encoded at all. */
static int dn_value_text(BIO *b, const ASN1_STRING *v)
{
	unsigned char *utf8 = NULL, *der = NULL;
	int n = ASN1_STRING_to_UTF8(&utf8, v), rc = 0;

	ERR_clear_error();
	if (n < 0) {
		ASN1_TYPE t = {.type = ASN1_STRING_type(v)};
		int len;

		t.value.asn1_string = (ASN1_STRING *)v;
		len = i2d_ASN1_TYPE(&t, &der);
		if (len <= 0) {
			rc = -1;
		} else {
			BIO_puts(b, "#");
			for (int i = 0; i < len; i++)
				BIO_printf(b, "%02X", der[i]);
		}
		OPENSSL_free(der);
		ERR_clear_error();
		return rc;
	}
	for (int i = 0; i < n; i++) {
		unsigned char c = utf8[i];

		if (c < 0x20 || c == 0x7f)
			BIO_printf(b, "\\%02X", c);
		else if (strchr("\"+,;<>\\", c) || (i == 0 && (c == '#' || c == ' ')) ||
			 (i == n - 1 && c == ' '))
			BIO_printf(b, "\\%c", c);
		else
			BIO_write(b, &utf8[i], 1);
	}
	OPENSSL_free(utf8);
	return 0;
}

/* `name` written as RFC 4514 text into out (`size` bytes): the most
 * specific RDN first. 0, or -1 when it does not fit or a value cannot be
 * written. */
static int dn_text(const X509_NAME *name, char *out, size_t size)
{
	BIO *b = BIO_new(BIO_s_mem());
	int end = X509_NAME_entry_count(name) - 1, rc = -1;
	char *data;
	long len;

	if (!b)
		mem_oom(__FILE__, __LINE__);
	while (end >= 0) {
		int set = X509_NAME_ENTRY_set(X509_NAME_get_entry(name, end)), start = end;

		while (start > 0 &&
		       X509_NAME_ENTRY_set(X509_NAME_get_entry(name, start - 1)) == set)
			start--;
		for (int i = start; i <= end; i++) {
			const X509_NAME_ENTRY *e = X509_NAME_get_entry(name, i);

			if (i > start)
				BIO_puts(b, "+");
			else if (end != X509_NAME_entry_count(name) - 1)
				BIO_puts(b, ",");
			dn_type_text(b, X509_NAME_ENTRY_get_object(e));
			BIO_puts(b, "=");
			if (dn_value_text(b, X509_NAME_ENTRY_get_data(e)) < 0)
				goto done;
		}
		end = start - 1;
	}
	len = BIO_get_mem_data(b, &data);
	if (len < 0 || (size_t)len >= size)
		goto done;
	memcpy(out, data, (size_t)len);
	out[len] = '\0';
	rc = 0;
done:
	BIO_free(b);
	ERR_clear_error();
	return rc;
}

int certcheck_subject_text(const struct x509_st *x, char *out, size_t size)
{
	if (size)
		out[0] = '\0';
	if (dn_text(X509_get_subject_name(x), out, size) < 0) {
		if (size)
			out[0] = '\0';
		return -1;
	}
	return 0;
}

int certcheck_subject_normal(const char *dn, char *out, size_t size, char *err, size_t errlen)
{
	X509_NAME *name = dn_parse(dn, err, errlen);
	char *text;
	int rc = -1;

	if (!name)
		return -1;
	text = mem_alloc(CERTCHECK_DN_MAX + 1);
	if (dn_text(name, text, CERTCHECK_DN_MAX + 1) < 0 || strlen(text) >= size) {
		snprintf(err, errlen, "longer than %d characters once written out",
			 CERTCHECK_DN_MAX);
		goto done;
	}
	memcpy(out, text, strlen(text) + 1);
	rc = 0;
done:
	free(text);
	X509_NAME_free(name);
	return rc;
}

/* ---- key pins ---- */

#define PIN_PREFIX "sha256/"

/* One pin (its text up to `len` bytes) into its digest; 0, or -1. */
static int pin_digest(const char *pin, size_t len, unsigned char out[32])
{
	const size_t plen = sizeof(PIN_PREFIX) - 1;
	unsigned char *raw;
	size_t rawlen = 0;

	if (len < plen || memcmp(pin, PIN_PREFIX, plen) != 0)
		return -1;
	pin += plen;
	len -= plen;
	/* curl's sha256//: base64 of 32 bytes is 44 characters, so a 45th
	 * that is a leading '/' is the form's second slash */
	if (len == 45 && pin[0] == '/') {
		pin++;
		len--;
	}
	if (len != 44 || !(raw = base64_decode(pin, len, &rawlen)))
		return -1;
	if (rawlen == 32)
		memcpy(out, raw, 32);
	free(raw);
	return rawlen == 32 ? 0 : -1;
}

int certcheck_pins_add(char list[CERTCHECK_PINS_TEXT], const char *pin, char *err, size_t errlen)
{
	unsigned char md[32];
	char text[CERTCHECK_PIN_LEN + 1];
	size_t have = strlen(list), count = have ? 1 : 0;

	if (pin_digest(pin, strlen(pin), md) < 0) {
		snprintf(err, errlen,
			 "must be sha256/ and the base64 of the SHA-256 of the certificate's "
			 "public key (its DER SubjectPublicKeyInfo): 44 characters");
		return -1;
	}
	memcpy(text, PIN_PREFIX, sizeof(PIN_PREFIX) - 1);
	base64_encode(md, sizeof(md), text + sizeof(PIN_PREFIX) - 1);
	for (const char *p = list; *p; p++)
		count += *p == ' ';
	for (const char *p = list; *p;) {
		size_t n = strcspn(p, " ");

		if (n == strlen(text) && memcmp(p, text, n) == 0) {
			snprintf(err, errlen, "%s is given twice", text);
			return -1;
		}
		p += n + (p[n] == ' ');
	}
	if (count >= CERTCHECK_PINS_MAX) {
		snprintf(err, errlen, "at most %d pins", CERTCHECK_PINS_MAX);
		return -1;
	}
	snprintf(list + have, CERTCHECK_PINS_TEXT - have, "%s%s", have ? " " : "", text);
	return 0;
}

int certcheck_pin(struct certcheck *c, const char *subject, const char *pins, char *err,
		  size_t errlen)
{
	X509_NAME *name = NULL;
	unsigned char mds[CERTCHECK_PINS_MAX][32];
	size_t n = 0;

	if (subject && *subject && !(name = dn_parse(subject, err, errlen)))
		return -1;
	for (const char *p = pins ? pins : ""; *p;) {
		size_t len = strcspn(p, " ");

		if (n == CERTCHECK_PINS_MAX || pin_digest(p, len, mds[n]) < 0) {
			snprintf(err, errlen, "the connection's key pins do not read");
			X509_NAME_free(name);
			return -1;
		}
		n++;
		p += len + (p[len] == ' ');
	}
	X509_NAME_free(c->subject);
	c->subject = name;
	memcpy(c->pins, mds, sizeof(mds));
	c->npins = n;
	return 0;
}

/* Whether `cert` matches the pins of c; why not in err. */
static int pinned(const struct certcheck *c, X509 *cert, char *err, size_t errlen)
{
	unsigned char *der = NULL, md[32];
	int len, match = 0;

	if (c->subject && X509_NAME_cmp(X509_get_subject_name(cert), c->subject) != 0) {
		char text[512];

		if (dn_text(X509_get_subject_name(cert), text, sizeof(text)) < 0)
			snprintf(text, sizeof(text), "a name too long to show");
		snprintf(err, errlen,
			 "the certificate's subject is not the connection's pinned subject (it is "
			 "%s)",
			 text);
		return 0;
	}
	if (!c->npins)
		return 1;
	len = i2d_X509_PUBKEY(X509_get_X509_PUBKEY(cert), &der);
	if (len <= 0) {
		snprintf(err, errlen, "the certificate's key cannot be read");
		return 0;
	}
	SHA256(der, (size_t)len, md);
	OPENSSL_free(der);
	/* every pin compared, in constant time */
	for (size_t i = 0; i < c->npins; i++)
		match |= CRYPTO_memcmp(md, c->pins[i], sizeof(md)) == 0;
	if (!match)
		snprintf(err, errlen,
			 "the certificate's key matches none of the connection's pins");
	return match;
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
	if (!pinned(c, cert, err, errlen))
		goto done;
	rc = 0;
done:
	X509_STORE_CTX_free(ctx);
	X509_free(cert);
	BIO_free(bio);
	free(pem);
	ERR_clear_error();
	return rc;
}
