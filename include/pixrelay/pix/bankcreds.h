/* bankcreds: a bank connection's API credentials, in the clear, as the
 * bank client uses them and the CLI reads them from files (no I/O here).
 *
 * The connection keeps them in Redis with its secrets sealed (core/seal.h:
 * the client secret and the private key); store/banks.c opens them for a
 * call and wipes them after. docs/banks.md says what each one is.
 */
#ifndef PIXRELAY_BANKCREDS_H
#define PIXRELAY_BANKCREDS_H

#include <stddef.h>

#define BANK_CREDS_URL_MAX 512
#define BANK_CREDS_ID_MAX 256	 /* client id, client secret */
#define BANK_CREDS_PEM_MAX 65536 /* certificate chain, key, CA */

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
};

/* Wipe and free every string; the struct is zeroed. */
void bank_creds_wipe(struct bank_creds *c);
/* A deep copy of `from` into `to`. */
void bank_creds_copy(struct bank_creds *to, const struct bank_creds *from);

/* Check credentials before they are kept: https URLs of at most 512 bytes
 * (a trailing slash of api_url removed), a client id and secret of 1 to 256
 * printable characters, a certificate (chain) and a private key of PEM that
 * belong together (the key is the certificate's), a bank CA of PEM
 * certificates when given. 0, or -1 with "field: rule" in err. */
int bank_creds_check(struct bank_creds *c, char *err, size_t errlen);

/* Nonzero when the connection has API credentials at all. */
int bank_creds_present(const struct bank_creds *c);

#endif
