/* bankcreds: a bank connection's API credentials as values: copied, wiped,
 * and checked before they are kept (https URLs, printable ids, a
 * certificate and the private key that belongs to it, PEM only), the
 * OAuth2 scopes, and the extra headers and query parameters some banks want
 * on every call. Sealing them for Redis is store/banks.c's with core/seal;
 * using them is relay/bankapi.c's. */
#include "pixrelay/pix/bankcreds.h"

#include "pixrelay/core/certcheck.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/core/validate.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void bank_creds_wipe(struct bank_creds *c)
{
	mem_free_wiped(c->api_url);
	mem_free_wiped(c->token_url);
	mem_free_wiped(c->client_id);
	mem_free_wiped(c->client_secret);
	mem_free_wiped(c->cert_pem);
	mem_free_wiped(c->key_pem);
	mem_free_wiped(c->bank_ca_pem);
	mem_free_wiped(c->scope);
	mem_free_wiped(c->headers);
	mem_free_wiped(c->query);
	mem_free_wiped(c->key_header);
	memset(c, 0, sizeof(*c));
}

void bank_creds_copy(struct bank_creds *to, const struct bank_creds *from)
{
	snprintf(to->conn, sizeof(to->conn), "%s", from->conn);
	to->api_url = mem_strdup_or_null(from->api_url);
	to->token_url = mem_strdup_or_null(from->token_url);
	to->client_id = mem_strdup_or_null(from->client_id);
	to->client_secret = mem_strdup_or_null(from->client_secret);
	to->cert_pem = mem_strdup_or_null(from->cert_pem);
	to->key_pem = mem_strdup_or_null(from->key_pem);
	to->bank_ca_pem = mem_strdup_or_null(from->bank_ca_pem);
	to->scope = mem_strdup_or_null(from->scope);
	to->headers = mem_strdup_or_null(from->headers);
	to->query = mem_strdup_or_null(from->query);
	to->key_header = mem_strdup_or_null(from->key_header);
}

bool bank_creds_present(const struct bank_creds *c)
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

/* RFC 6749 3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ), separated by
 * one space; runs of spaces (and spaces around) are made so in place. */
static int check_scope(char *s, char *err, size_t errlen)
{
	size_t n = 0;

	for (const char *p = s; *p; p++) {
		unsigned char ch = (unsigned char)*p;

		if (ch == ' ') {
			if (n > 0 && s[n - 1] != ' ')
				s[n++] = ' ';
			continue;
		}
		if (ch < 0x21 || ch > 0x7e || ch == '"' || ch == '\\') {
			snprintf(err, errlen,
				 "scope: OAuth2 scopes are printable ASCII without quotes or "
				 "backslashes, separated by spaces");
			return -1;
		}
		s[n++] = *p;
	}
	while (n > 0 && s[n - 1] == ' ')
		n--;
	s[n] = '\0';
	if (n > BANK_CREDS_SCOPE_MAX) {
		snprintf(err, errlen, "scope: at most %d characters", BANK_CREDS_SCOPE_MAX);
		return -1;
	}
	return 0;
}

int bank_creds_check(struct bank_creds *c, char *err, size_t errlen)
{
	struct certcheck *cc;

	if (c->scope && check_scope(c->scope, err, errlen) < 0)
		return -1;
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

int bank_creds_check_provider(struct bank_creds *c, const char *token, char *err, size_t errlen)
{
	if (check_url(c->api_url, "api-url", err, errlen) < 0 ||
	    (token && check_text(token, "api-token", err, errlen) < 0))
		return -1;
	if (c->bank_ca_pem) {
		char why[128];
		struct certcheck *cc =
		    certcheck_new(c->bank_ca_pem, strlen(c->bank_ca_pem), why, sizeof(why));

		if (!cc) {
			snprintf(err, errlen, "api-ca: %s", why);
			return -1;
		}
		certcheck_free(cc);
	}
	return 0;
}

/* ---- extra headers and query parameters ---- */

/* Query keys of the standard's calls that pixrelay makes (GET /pix). */
static const char *const reserved_keys[] = {"inicio",
					    "fim",
					    "txid",
					    "txIdPresente",
					    "devolucaoPresente",
					    "cpf",
					    "cnpj",
					    "paginacao.paginaAtual",
					    "paginacao.itensPorPagina",
					    NULL};

/* How many items `list` holds, `sep` ending or separating them. */
static size_t count_items(const char *list, char sep)
{
	size_t n = 0;

	for (const char *p = list; p && *p; p++)
		n += *p == sep;
	return n;
}

/* `list` with `item` appended after `sep` (list NULL: item alone);
 * the old list wiped and freed. */
static char *append(char *list, const char *sep, const char *item)
{
	char *out = mem_printf("%s%s%s", list ? list : "", list ? sep : "", item);

	mem_free_wiped(list);
	return out;
}

/* The name before `sep` in s (1 to BANK_CREDS_EXTRA_NAME_MAX tchars) into
 * out: 0, or -1 with "<opt>: write it \"<form>\", ..." in err. */
static int take_name(const char *s, char sep, char out[BANK_CREDS_EXTRA_NAME_MAX + 1],
		     const char *opt, const char *form, const char *what, char *err, size_t errlen)
{
	const char *end = strchr(s, sep);
	size_t n = end ? (size_t)(end - s) : 0;

	if (!validate_header_name(s, n))
		n = 0;
	if (n == 0 || n > BANK_CREDS_EXTRA_NAME_MAX) {
		snprintf(err, errlen,
			 "%s: write it \"%s\", the %s 1 to %d letters, digits or "
			 "!#$%%&'*+-.^_`|~",
			 opt, form, what, BANK_CREDS_EXTRA_NAME_MAX);
		return -1;
	}
	memcpy(out, s, n);
	out[n] = '\0';
	return 0;
}

/* Whether `name` is in the NULL-ended `list` (letter case ignored when
 * nocase). */
static bool listed(const char *const *list, const char *name, int nocase)
{
	for (size_t i = 0; list[i]; i++)
		if ((nocase ? strcasecmp(name, list[i]) : strcmp(name, list[i])) == 0)
			return true;
	return false;
}

/* Whether header `name` (n bytes) is among the "Name: value\n" lines. */
static bool has_header(const char *lines, const char *name, size_t n)
{
	for (const char *p = lines; p && *p;) {
		const char *colon = strchr(p, ':'), *end = strchr(p, '\n');

		if (colon && (size_t)(colon - p) == n && strncasecmp(p, name, n) == 0)
			return true;
		if (!end)
			break;
		p = end + 1;
	}
	return false;
}

int bank_creds_add_header(struct bank_creds *c, const char *line, char *err, size_t errlen)
{
	const char *v;
	size_t n, vn;
	char name[BANK_CREDS_EXTRA_NAME_MAX + 1], *item;

	if (take_name(line, ':', name, "api-header", "Name: value", "name", err, errlen) < 0)
		return -1;
	n = strlen(name);
	if (validate_header_reserved(name)) {
		snprintf(err, errlen, "api-header: %s is pixrelay's to send, not an extra", name);
		return -1;
	}
	if (has_header(c->headers, name, n)) {
		snprintf(err, errlen, "api-header: %s is given twice", name);
		return -1;
	}
	if (count_items(c->headers, '\n') >= BANK_CREDS_EXTRA_MAX) {
		snprintf(err, errlen, "api-header: at most %d", BANK_CREDS_EXTRA_MAX);
		return -1;
	}
	for (v = line + n + 1; *v == ' ' || *v == '\t'; v++)
		;
	for (vn = strlen(v); vn > 0 && (v[vn - 1] == ' ' || v[vn - 1] == '\t'); vn--)
		;
	if (vn == 0 || vn > BANK_CREDS_EXTRA_VALUE_MAX || !validate_printable(v, vn)) {
		snprintf(err, errlen,
			 "api-header: %s: its value must be 1 to %d printable ASCII characters",
			 name, BANK_CREDS_EXTRA_VALUE_MAX);
		return -1;
	}
	item = mem_printf("%s: %.*s\n", name, (int)vn, v);
	c->headers = append(c->headers, "", item);
	mem_free_wiped(item);
	return 0;
}

char *bank_creds_escape(const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = strlen(s), o = 0;
	char *out = mem_alloc(3 * n + 1);

	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || strchr("-._~", *p)) {
			out[o++] = (char)*p;
		} else {
			out[o++] = '%';
			out[o++] = hex[*p >> 4];
			out[o++] = hex[*p & 15];
		}
	}
	out[o] = '\0';
	return out;
}

/* The unescaped text of `s` (n bytes of bank_creds_escape's) into out. */
static void unescape(const char *s, size_t n, char *out, size_t size)
{
	size_t o = 0;

	for (size_t i = 0; i < n && o + 1 < size; i++) {
		unsigned v;

		if (s[i] == '%' && i + 2 < n && sscanf(s + i + 1, "%2x", &v) == 1) {
			out[o++] = (char)v;
			i += 2;
		} else {
			out[o++] = s[i];
		}
	}
	out[o] = '\0';
}

int bank_creds_add_query(struct bank_creds *c, const char *kv, char *err, size_t errlen)
{
	const char *eq = strchr(kv, '=');
	size_t n, vn = eq ? strlen(eq + 1) : 0;
	char key[BANK_CREDS_EXTRA_NAME_MAX + 1], names[BANK_CREDS_EXTRA_MAX * 200];
	char *k, *v, *item;

	if (take_name(kv, '=', key, "api-query", "key=value", "key", err, errlen) < 0)
		return -1;
	n = strlen(key);
	if (listed(reserved_keys, key, 0)) {
		snprintf(err, errlen,
			 "api-query: %s is a parameter of the standard's calls, not an extra", key);
		return -1;
	}
	bank_creds_query_names(c, names, sizeof(names));
	for (char *p = names, *q; *p; p = q ? q + 1 : p + strlen(p)) {
		q = strchr(p, ',');
		if ((q ? (size_t)(q - p) : strlen(p)) == n && strncmp(p, key, n) == 0) {
			snprintf(err, errlen, "api-query: %s is given twice", key);
			return -1;
		}
	}
	if (c->query && count_items(c->query, '&') + 1 >= BANK_CREDS_EXTRA_MAX) {
		snprintf(err, errlen, "api-query: at most %d", BANK_CREDS_EXTRA_MAX);
		return -1;
	}
	if (vn > BANK_CREDS_EXTRA_VALUE_MAX || !validate_printable(eq + 1, vn)) {
		snprintf(err, errlen,
			 "api-query: %s: its value must be at most %d printable ASCII characters",
			 key, BANK_CREDS_EXTRA_VALUE_MAX);
		return -1;
	}
	k = bank_creds_escape(key);
	v = bank_creds_escape(eq + 1);
	item = mem_printf("%s=%s", k, v);
	c->query = append(c->query, "&", item);
	mem_free_wiped(item);
	mem_free_wiped(v);
	free(k);
	return 0;
}

/* The part before `stop` of each item of `list` (items end with, or are
 * separated by, `sep`), unescaped when `esc`, joined by commas. */
static void names_of(const char *list, char sep, char stop, int esc, char *out, size_t size)
{
	size_t o = 0;

	if (size == 0)
		return;
	out[0] = '\0';
	for (const char *p = list; p && *p;) {
		const char *end = strchr(p, sep), *cut = strchr(p, stop);
		size_t n;
		char one[BANK_CREDS_EXTRA_NAME_MAX * 3 + 1];

		if (!end)
			end = p + strlen(p);
		n = (size_t)((cut && cut < end ? cut : end) - p);
		if (esc)
			unescape(p, n, one, sizeof(one));
		else
			snprintf(one, sizeof(one), "%.*s", (int)n, p);
		o += (size_t)snprintf(out + o, o < size ? size - o : 0, "%s%s", o ? "," : "", one);
		if (o >= size) {
			out[size - 1] = '\0';
			return;
		}
		p = *end ? end + 1 : end;
	}
}

void bank_creds_header_names(const struct bank_creds *c, char *out, size_t size)
{
	names_of(c->headers, '\n', ':', 0, out, size);
}

void bank_creds_query_names(const struct bank_creds *c, char *out, size_t size)
{
	names_of(c->query, '&', '=', 1, out, size);
}
