/* provider: the providers a connection may speak to (provider.h). */
#include "pixrelay/pix/provider.h"

#include "pixrelay/core/mem.h"

#include <string.h>

static const char *const names[] = {"api-pix", "woovi", "asaas", "mercadopago"};

const char *provider_name(enum provider p)
{
	return (unsigned)p < sizeof(names) / sizeof(names[0]) ? names[p] : "api-pix";
}

int provider_parse(const char *name, enum provider *out)
{
	if (!name[0]) {
		*out = PROVIDER_API_PIX;
		return 0;
	}
	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (strcmp(name, names[i]) == 0) {
			*out = (enum provider)i;
			return 0;
		}
	}
	return -1;
}

const char *provider_names(void)
{
	return "api-pix, woovi, asaas, mercadopago";
}

const char *provider_default_url(enum provider p, enum env env)
{
	/* Woovi's hosts: github Open-Pix/openpix-developers,
	 * src/swaggers/openpix.yml (servers) and
	 * docs/webhook/seguranca/webhook-public-keys.md */
	if (p == PROVIDER_WOOVI)
		return env == ENV_PRODUCTION ? "https://api.woovi.com"
					     : "https://api.woovi-sandbox.com";
	/* Asaas's: docs.asaas.com/docs/authentication-2 ("choose the correct
	 * environment") */
	if (p == PROVIDER_ASAAS)
		return env == ENV_PRODUCTION ? "https://api.asaas.com/v3"
					     : "https://api-sandbox.asaas.com/v3";
	/* Mercado Pago's one host: sandbox is test credentials (MP-REF) */
	if (p == PROVIDER_MERCADOPAGO)
		return "https://api.mercadopago.com";
	return NULL;
}

const char *provider_auth(enum provider p)
{
	switch (p) {
	case PROVIDER_WOOVI:
		return "woovi-rsa";
	case PROVIDER_ASAAS:
		return "asaas-token";
	case PROVIDER_MERCADOPAGO:
		return "mp-signature";
	default:
		return NULL;
	}
}

char *provider_key_header(enum provider p, const char *token)
{
	/* Woovi: openpix-developers docs/apis/start-api-integration.md; Asaas:
	 * docs.asaas.com/docs/authentication-2 */
	if (p == PROVIDER_ASAAS)
		return mem_printf("access_token: %s", token);
	if (p == PROVIDER_MERCADOPAGO)
		/* MP-REF: Authorization: Bearer <access token> */
		return mem_printf("Authorization: Bearer %s", token);
	return mem_printf("Authorization: %s", token);
}
