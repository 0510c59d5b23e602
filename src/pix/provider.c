/* provider: the providers a connection may speak to (provider.h). */
#include "pixrelay/pix/provider.h"

#include "pixrelay/core/mem.h"

#include <string.h>

static const char *const names[] = {"api-pix", "woovi", "asaas"};

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
	return "api-pix, woovi, asaas";
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
	return NULL;
}

const char *provider_auth(enum provider p)
{
	return p == PROVIDER_WOOVI ? "woovi-rsa" : p == PROVIDER_ASAAS ? "asaas-token" : NULL;
}

char *provider_key_header(enum provider p, const char *token)
{
	/* Woovi: openpix-developers docs/apis/start-api-integration.md; Asaas:
	 * docs.asaas.com/docs/authentication-2 */
	return p == PROVIDER_ASAAS ? mem_printf("access_token: %s", token)
				   : mem_printf("Authorization: %s", token);
}
