/* bankcreds: a bank connection's API credentials, in the clear, as the
 * bank client uses them and the CLI reads them from files (no I/O here).
 *
 * The connection keeps them in Redis with its secrets sealed (core/seal.h:
 * the client secret and the private key); store/banks.c opens them for a
 * call and wipes them after. docs/bank-api.md says what each one is.
 */
#ifndef PIXRELAY_BANKCREDS_H
#define PIXRELAY_BANKCREDS_H

#include <stdbool.h>
#include <stddef.h>

#define BANK_CREDS_URL_MAX 512
#define BANK_CREDS_ID_MAX 256	 /* client id, client secret */
#define BANK_CREDS_PEM_MAX 65536 /* certificate chain, key, CA */
#define BANK_CREDS_SCOPE_MAX 512 /* the OAuth2 scopes asked for, as text */
/* The standard's scopes of the calls pixrelay makes: PUT /cob (charges),
 * GET /pix and /pix/{e2eid} (the reconciliation), PUT /pix/{e2eid}/
 * devolucao/{id} (refunds), PUT and GET /webhook/{chave}. */
#define BANK_CREDS_SCOPES "cob.write cobv.write pix.read pix.write webhook.read webhook.write"
#define BANK_CREDS_EXTRA_MAX 8		/* extra headers; extra query parameters */
#define BANK_CREDS_EXTRA_NAME_MAX 64	/* characters of a header name or query key */
#define BANK_CREDS_EXTRA_VALUE_MAX 1024 /* characters of a value */

/* Strings owned; NULL when absent (bank_ca_pem: the system's trust store). */
struct bank_creds {
	char conn[40];	 /* the connection's id: tokens are kept per connection */
	char *api_url;	 /* "https://pix.bank.example/api/v2", no trailing slash */
	char *token_url; /* "https://pix.bank.example/oauth/token" */
	char *client_id;
	char *client_secret;
	char *cert_pem;	   /* the merchant's client certificate (chain) */
	char *key_pem;	   /* its private key */
	char *bank_ca_pem; /* the CA of the bank's server certificate, or NULL */
	char *scope;	   /* OAuth2 scopes asked for in the token request, space-separated;
			    * NULL or "": none asked (the bank's default) */
	char *headers;	   /* extra headers of every API call (not of the token's):
			    * "Name: value" lines, each ended by '\n'; NULL: none */
	char *query;	   /* extra query parameters of every API call (not of the
			    * token's): "k=v&k2=v2", escaped; NULL: none */
	char *key_header;  /* a provider's connection: the header its API token
			    * goes in, "Name: value" (Woovi: "Authorization:
			    * <AppID>"); every call carries it, no OAuth2 token
			    * nor client certificate is used. NULL: a bank's */
};

/* Wipe and free every string; the struct is zeroed. */
void bank_creds_wipe(struct bank_creds *c);
/* A deep copy of `from` into `to`. */
void bank_creds_copy(struct bank_creds *to, const struct bank_creds *from);

/* Check credentials before they are kept: https URLs of at most 512 bytes
 * (a trailing slash of api_url removed), a client id and secret of 1 to 256
 * printable characters, a certificate (chain) and a private key of PEM that
 * belong together (the key is the certificate's), a bank CA of PEM
 * certificates when given, scopes (when given) of RFC 6749 scope tokens
 * (runs of spaces made one). 0, or -1 with "field: rule" in err. */
int bank_creds_check(struct bank_creds *c, char *err, size_t errlen);

/* Check what a provider's connection takes: an https api_url of at most
 * 512 bytes (a trailing slash removed), `token` (NULL: none) of 1 to 256
 * printable characters, and bank_ca_pem (the CA of the provider's server)
 * of PEM certificates when given. 0, or -1 with "field: rule" in err (the
 * token is never quoted). */
int bank_creds_check_provider(struct bank_creds *c, const char *token, char *err, size_t errlen);

/* True when the connection has API credentials at all. */
bool bank_creds_present(const struct bank_creds *c);

/* Add an extra header, written "Name: value" by the operator, to
 * c->headers: a name of 1 to 64 token characters (RFC 9110), not one
 * pixrelay sets or that frames the request (Authorization, Content-Type,
 * Host, ...), not given twice; a value of 1 to 1024 printable ASCII
 * characters (no CR, LF or other control character; spaces around it
 * dropped). At most BANK_CREDS_EXTRA_MAX. 0, or -1 with "api-header: ..."
 * in err (the value is never quoted: it may be a secret). */
int bank_creds_add_header(struct bank_creds *c, const char *line, char *err, size_t errlen);
/* Add an extra query parameter, written "key=value", to c->query, both
 * percent-escaped: a key of 1 to 64 token characters (as a header
 * name's), not one
 * the standard's calls use (inicio, fim, paginacao.*, ...), not given
 * twice; a value of 0 to 1024 printable ASCII characters. At most
 * BANK_CREDS_EXTRA_MAX. 0, or -1 with "api-query: ..." in err. */
int bank_creds_add_query(struct bank_creds *c, const char *kv, char *err, size_t errlen);
/* The names of c's extra headers, or the keys of its query parameters
 * (unescaped), separated by commas, into out (size bytes, always
 * NUL-terminated; "" when none): what may be shown of them. */
void bank_creds_header_names(const struct bank_creds *c, char *out, size_t size);
void bank_creds_query_names(const struct bank_creds *c, char *out, size_t size);
/* `s` percent-escaped for a URL's query or a form: every byte but the
 * unreserved (A-Z a-z 0-9 - . _ ~) as %XX. malloc'd. */
char *bank_creds_escape(const char *s);

#endif
