/* provider: who a connection speaks to (docs/providers.md). A connection
 * is either a bank in the Central Bank's API Pix standard (api-pix, the
 * default) or a payment provider with an API of its own. No I/O.
 */
#ifndef PIXRELAY_PROVIDER_H
#define PIXRELAY_PROVIDER_H

#include "pixrelay/pix/env.h"

#include <stdbool.h>

enum provider {
	PROVIDER_API_PIX = 0,	  /* a bank in the API Pix standard */
	PROVIDER_WOOVI = 1,	  /* Woovi (OpenPix) */
	PROVIDER_ASAAS = 2,	  /* Asaas */
	PROVIDER_MERCADOPAGO = 3, /* Mercado Pago */
};

/* The name the API, the CLI and the record use ("api-pix", "woovi"). */
const char *provider_name(enum provider p);
/* The provider named `name`; "" (a record written before providers) is
 * api-pix. 0 with *out, or -1 for a name that is none. */
int provider_parse(const char *name, enum provider *out);
/* The names accepted, for an error message: "api-pix, woovi, asaas,
 * mercadopago". */
const char *provider_names(void);

/* The provider's API base URL in `env` when it has a published one (no
 * trailing slash), or NULL (api-pix: the bank's, given by the merchant). */
const char *provider_default_url(enum provider p, enum env env);

/* How the provider's notifications are authenticated, as the record and
 * the API name it ("woovi-rsa", "asaas-token", Mercado Pago's
 * "mp-signature"; "mp-fetch" is Mercado Pago's without a secret, which
 * connect decides); NULL for api-pix (mtls or url-token). */
const char *provider_auth(enum provider p);

/* The header that carries the API token `token` on every call to the
 * provider, "Name: value" (Woovi: "Authorization: <AppID>", no Bearer;
 * Asaas: "access_token: <key>"; Mercado Pago: "Authorization: Bearer
 * <token>"), malloc'd; the caller frees it wiped. */
char *provider_key_header(enum provider p, const char *token);

#endif
