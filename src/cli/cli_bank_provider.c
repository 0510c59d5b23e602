/* cli_bank_provider: `pixrelay bank connect --provider woovi ...`, a
 * connection to a payment provider (docs/providers.md): its API token read
 * from a file and tried at the provider, its base URL (the provider's own
 * by default), the public keys its notifications are signed with (the
 * provider's, fetched from its API or given as a file) and, in the sandbox,
 * a key pair of pixrelay's own so that `pixrelay trigger` can sign. The
 * other bank verbs are cli_bank.c's, for every provider. */
#include "cli_int.h"

#include "pixrelay/core/json.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/core/seal.h"
#include "pixrelay/pix/bankcreds.h"
#include "pixrelay/pix/provider.h"
#include "pixrelay/pix/provsig.h"
#include "pixrelay/pix/woovi.h"
#include "pixrelay/store/banks.h"
#include "pixrelay/store/banks_webhook.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KEYS_FILE_MAX 65536 /* bytes of a --webhook-public-key file */

/* The provider's published public keys: Woovi's GET
 * /api/v1/webhook/public-keys. 0 with *pem, or -1 with why printed. */
static int fetch_keys(const struct config *cfg, const struct bank_creds *creds, char **pem)
{
	char *body = NULL, err[320];
	long status =
	    cli_bank_api_get(cfg, creds, "/api/v1/webhook/public-keys", &body, err, sizeof(err));
	int rc = -1;

	if (status != 200) {
		if (status)
			fprintf(stderr,
				"pixrelay bank connect: Woovi's public keys: HTTP %ld; give them "
				"with --webhook-public-key FILE\n",
				status);
		else
			fprintf(stderr,
				"pixrelay bank connect: Woovi's public keys: %s; give them with "
				"--webhook-public-key FILE\n",
				err);
	} else if (woovi_public_keys(body, strlen(body), pem, err, sizeof(err)) < 0) {
		fprintf(stderr, "pixrelay bank connect: Woovi's public keys: %s\n", err);
	} else {
		rc = 0;
	}
	free(body);
	return rc;
}

/* The provider's name as its merchants write it. */
static const char *provider_title(enum provider p)
{
	return p == PROVIDER_ASAAS ? "Asaas" : p == PROVIDER_MERCADOPAGO ? "Mercado Pago" : "Woovi";
}

/* The API token tried at the provider: one page of one transaction (or
 * payment). 0, or -1 with why printed. */
static int try_token(const struct config *cfg, enum provider p, const struct bank_creds *creds)
{
	char *body = NULL, err[320], why[400];
	long status =
	    cli_bank_api_get(cfg, creds,
			     p == PROVIDER_ASAAS	 ? "/payments?limit=1"
			     : p == PROVIDER_MERCADOPAGO ? "/v1/payments/search?limit=1"
							 : "/api/v1/transaction?skip=0&limit=1",
			     &body, err, sizeof(err));

	free(body);
	if (status == 200)
		return 0;
	if (status)
		snprintf(why, sizeof(why), "HTTP %ld", status);
	else
		snprintf(why, sizeof(why), "%s", err);
	fprintf(stderr,
		"pixrelay bank connect: %s refused the API token (%s); nothing was connected "
		"(--no-check keeps it untried)\n",
		provider_title(p), why);
	return -1;
}

/* Asaas's webhook token (authToken: 32 to 255 printable characters, no
 * spaces; docs.asaas.com's webhook configuration) from --webhook-secret-file,
 * or, in the sandbox without one, a new random one. NULL with why printed. */
static char *webhook_secret(const char *file, enum env env, int *made)
{
	char *s;
	size_t n;

	*made = 0;
	if (!file) {
		if (env == ENV_PRODUCTION) {
			fprintf(stderr,
				"pixrelay bank connect: --webhook-secret-file FILE is required "
				"in production (the token Asaas sends in asaas-access-token)\n");
			return NULL;
		}
		s = mem_alloc(BANKS_TOKEN_LEN + 1);
		banks_make_token(s);
		*made = 1;
		return s;
	}
	if (!(s = cli_read_file("bank connect", "webhook-secret-file", file, 255, 1)))
		return NULL;
	n = strlen(s);
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] <= ' ' || (unsigned char)s[i] >= 0x7f)
			n = 0;
	if (n < 32) {
		fprintf(stderr,
			"pixrelay bank connect: --webhook-secret-file %s: must be 32 to 255 "
			"printable characters without spaces (Asaas's authToken)\n",
			file);
		mem_free_wiped(s);
		return NULL;
	}
	return s;
}

/* Woovi's events that pixrelay takes (docs/providers.md). */
static const char *const woovi_events[] = {"OPENPIX:CHARGE_COMPLETED",
					   "OPENPIX:TRANSACTION_RECEIVED",
					   "OPENPIX:TRANSACTION_REFUND_RECEIVED"};

/* Asaas's payment events that pixrelay takes (docs/providers.md). */
static const char *const asaas_events[] = {"PAYMENT_RECEIVED",
					   "PAYMENT_CONFIRMED",
					   "PAYMENT_REFUNDED",
					   "PAYMENT_PARTIALLY_REFUNDED",
					   "PAYMENT_REFUND_IN_PROGRESS",
					   "PAYMENT_OVERDUE",
					   "PAYMENT_DELETED"};

/* What register-webhook prints: the URL and what was made. */
static void say_registered(const char *who, const char *url, int made, int already, int json)
{
	if (json) {
		yajl_gen g = json_gen_new();
		size_t len;

		json_open(g);
		json_str(g, "webhookUrl");
		json_str(g, url);
		json_str(g, "registered");
		json_int(g, made);
		json_str(g, "already");
		json_int(g, already);
		json_close(g);
		printf("%s\n", json_buf(g, &len));
		yajl_gen_free(g);
	} else {
		printf("Registered %s at %s: %d webhook(s) made, %d there already\n", url, who,
		       made, already);
	}
}

/* Asaas: one webhook for the URL (POST /v3/webhooks) with the payment
 * events, its token the connection's, sent in sequence; one Asaas holds
 * for that URL already is left as it is. */
static int asaas_register(const struct config *cfg, const char *id, const struct cli_bank_conn *t,
			  const char *url, const char *email, int json)
{
	static const char cmd[] = "pixrelay bank register-webhook";
	char *body = NULL, err[320], *req, *out = NULL;
	yajl_val v = NULL, list;
	yajl_gen g;
	long status;
	int rc = 1;

	if (!t->own_secret) {
		fprintf(stderr,
			"%s: the connection's webhook token does not open here (the "
			"credentials key)\n",
			cmd);
		return 1;
	}
	status = cli_bank_api_get(cfg, &t->creds, "/webhooks?limit=100", &body, err, sizeof(err));
	if (status != 200 || json_parse_object(body, strlen(body), &v, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s: Asaas's webhooks: %s\n", cmd,
			status == 200 ? err
			: status      ? "refused"
				      : err);
		goto done;
	}
	list = json_get(v, "data");
	for (size_t i = 0; YAJL_IS_ARRAY(list) && i < list->u.array.len; i++) {
		const char *u = YAJL_GET_STRING(json_get(list->u.array.values[i], "url"));

		if (u && strcmp(u, url) == 0) {
			say_registered("Asaas", url, 0, 1, json);
			rc = 0;
			goto done;
		}
	}
	if (!email) {
		fprintf(stderr,
			"%s: Asaas asks for the e-mail it warns when it pauses the queue: "
			"--email ADDRESS\n",
			cmd);
		rc = 2;
		goto done;
	}
	g = json_gen_new();
	json_open(g);
	json_str(g, "name");
	json_str(g, id);
	json_str(g, "url");
	json_str(g, url);
	json_str(g, "email");
	json_str(g, email);
	json_str(g, "enabled");
	json_bool(g, 1);
	json_str(g, "interrupted");
	json_bool(g, 0);
	json_str(g, "authToken");
	json_str(g, t->own_secret);
	/* in order per charge: Asaas sends one at a time */
	json_str(g, "sendType");
	json_str(g, "SEQUENTIALLY");
	json_str(g, "events");
	json_open_array(g);
	for (size_t k = 0; k < sizeof(asaas_events) / sizeof(*asaas_events); k++)
		json_str(g, asaas_events[k]);
	json_close_array(g);
	json_close(g);
	req = json_take(g);
	status =
	    cli_bank_api_call(cfg, &t->creds, "POST", "/webhooks", req, &out, err, sizeof(err));
	mem_free_wiped(req);
	free(out);
	if (status != 200 && status != 201) {
		if (status)
			fprintf(stderr, "%s: Asaas refused the webhook: HTTP %ld\n", cmd, status);
		else
			fprintf(stderr, "%s: Asaas: %s\n", cmd, err);
		goto done;
	}
	say_registered("Asaas", url, 1, 0, json);
	rc = 0;
done:
	yajl_tree_free(v);
	free(body);
	return rc;
}

int cli_bank_provider_register(const struct config *cfg, const char *id,
			       const struct cli_bank_conn *t, const char *url, const char *email,
			       int json)
{
	static const char cmd[] = "pixrelay bank register-webhook";
	char *esc, *path;
	char *body = NULL, err[320];
	yajl_val v = NULL, list;
	long status;
	int have[3] = {0, 0, 0}, made = 0, rc = 1;

	if (t->provider == PROVIDER_ASAAS)
		return asaas_register(cfg, id, t, url, email, json);
	if (t->provider == PROVIDER_MERCADOPAGO) {
		/* Mercado Pago takes webhooks in its panel only */
		fprintf(stderr,
			"%s: Mercado Pago has no API for webhooks: paste %s in Your integrations > "
			"your application > Webhooks, topic Payments\n",
			cmd, url);
		return 1;
	}
	esc = bank_creds_escape(url);
	path = mem_printf("/api/v1/webhook?url=%s", esc);
	/* what Woovi holds for this URL already: registered once per event */
	status = cli_bank_api_get(cfg, &t->creds, path, &body, err, sizeof(err));
	if (status != 200 || json_parse_object(body, strlen(body), &v, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s: Woovi's webhooks: %s\n", cmd,
			status == 200 ? err
			: status      ? "refused"
				      : err);
		goto done;
	}
	list = json_get(v, "webhooks");
	for (size_t i = 0; YAJL_IS_ARRAY(list) && i < list->u.array.len; i++) {
		yajl_val w = list->u.array.values[i];
		const char *u = YAJL_GET_STRING(json_get(w, "url"));
		const char *e = YAJL_GET_STRING(json_get(w, "event"));

		for (int k = 0; k < 3; k++)
			if (u && e && strcmp(u, url) == 0 && strcmp(e, woovi_events[k]) == 0 &&
			    !YAJL_IS_FALSE(json_get(w, "isActive")))
				have[k] = 1;
	}
	for (int k = 0; k < 3; k++) {
		yajl_gen g;
		char *req, *out = NULL;

		if (have[k])
			continue;
		g = json_gen_new();
		json_open(g);
		json_str(g, "webhook");
		json_open(g);
		json_str(g, "name");
		json_str(g, id);
		json_str(g, "event");
		json_str(g, woovi_events[k]);
		json_str(g, "url");
		json_str(g, url);
		json_str(g, "isActive");
		json_bool(g, 1);
		json_close(g);
		json_close(g);
		req = json_take(g);
		status = cli_bank_api_call(cfg, &t->creds, "POST", "/api/v1/webhook", req, &out,
					   err, sizeof(err));
		free(req);
		free(out);
		if (status != 200 && status != 201) {
			fprintf(stderr, "%s: Woovi refused the webhook of %s: %s\n", cmd,
				woovi_events[k], status ? "HTTP error" : err);
			if (status)
				fprintf(stderr, "%s: HTTP %ld\n", cmd, status);
			goto done;
		}
		made++;
	}
	say_registered("Woovi", url, made, 3 - made, json);
	rc = 0;
done:
	yajl_tree_free(v);
	free(body);
	free(path);
	free(esc);
	return rc;
}

/* What connect prints: the connection, and what to do at the provider; a
 * webhook token pixrelay made (`made`, the sandbox's) shown this once. */
static void say_connected(const char *json, enum provider p, const char *made, int as_json)
{
	if (as_json) {
		if (made) {
			char *quoted = mem_printf("\"%s\"", made), *out;

			out = cli_json_with(json, "webhookToken", quoted);
			printf("%s\n", out);
			mem_free_wiped(out);
			mem_free_wiped(quoted);
		} else {
			printf("%s\n", json);
		}
		return;
	}
	cli_bank_print("connect", json);
	if (p == PROVIDER_MERCADOPAGO)
		printf("\nPaste the webhook URL above in Mercado Pago (Your integrations > your "
		       "application > Webhooks) for the Payments topic%s.\n",
		       strstr(json, "\"mp-fetch\"") ? "; without --webhook-secret-file its "
						      "notifications are taken unsigned, read back "
						      "with the access token"
						    : ", with the secret key it shows there");
	else if (p == PROVIDER_ASAAS)
		printf("\nRegister the webhook URL above in Asaas (Integrations > Webhooks, or "
		       "pixrelay "
		       "bank register-webhook ID) for the payment events, with the webhook "
		       "token%s%s.\n",
		       made ? " (shown this once): " : " of --webhook-secret-file",
		       made ? made : "");
	else
		printf("\nAdd the webhook URL above in Woovi (API/Plugins > Webhooks, or "
		       "pixrelay bank register-webhook ID) for the events "
		       "OPENPIX:CHARGE_COMPLETED, OPENPIX:TRANSACTION_RECEIVED and "
		       "OPENPIX:TRANSACTION_REFUND_RECEIVED.\n");
}

int cli_bank_provider_connect(const struct config *cfg, int argc, char **argv)
{
	static const struct option lo[] = {CLI_OPT_ENV,
					   CLI_OPT_ACCOUNT,
					   {"provider", required_argument, NULL, 'v'},
					   {"chave", required_argument, NULL, 'p'},
					   {"default", no_argument, NULL, 'D'},
					   {"api-token-file", required_argument, NULL, 'T'},
					   {"api-url", required_argument, NULL, 'A'},
					   {"api-ca", required_argument, NULL, 'B'},
					   {"webhook-public-key", required_argument, NULL, 'W'},
					   {"webhook-secret-file", required_argument, NULL, 'S'},
					   {"no-check", no_argument, NULL, 'n'},
					   CLI_OPT_JSON,
					   CLI_OPT_END};
	struct cli_args a;
	const char *name = NULL, *pix_key = "", *token_file = NULL, *url = NULL;
	const char *ca_file = NULL, *keys_file = NULL, *secret_file = NULL;
	int opt, rc = 2, no_check = 0, is_default = 0, secret_made = 0;
	char *secret = NULL;
	enum provider prov;
	enum env env;
	char err[320], acct[32] = "", *token = NULL, *keys = NULL, *priv = NULL, *pub = NULL;
	struct bank_creds creds = {0};
	struct seal_key skey;
	int have_key = 0;
	struct cli_redis cr;
	struct cli_call call;
	struct banks_provider_conn pc;

	cli_args_init(&a, argc, argv, lo, NULL, NULL);
	while ((opt = cli_args_next(&a)) >= 0) {
		switch (opt) {
		case 'v':
			name = optarg;
			break;
		case 'p':
			pix_key = optarg;
			break;
		case 'D':
			is_default = 1;
			break;
		case 'T':
			token_file = optarg;
			break;
		case 'A':
			url = optarg;
			break;
		case 'B':
			ca_file = optarg;
			break;
		case 'W':
			keys_file = optarg;
			break;
		case 'S':
			secret_file = optarg;
			break;
		case 'n':
			no_check = 1;
			break;
		}
	}
	if (opt == CLI_ARGS_EXIT)
		return a.exit_code;
	if (optind + 1 < argc)
		return cli_unexpected("bank", "connect", argv[optind + 1]);
	if (cli_env_required("bank", a.env, &env) < 0)
		return 2;
	if (!name || provider_parse(name, &prov) < 0 || prov == PROVIDER_API_PIX) {
		fprintf(stderr, "pixrelay bank connect: --provider must be one of %s\n",
			provider_names());
		return 2;
	}
	if (*pix_key && banks_check_pix_key(pix_key, err, sizeof(err)) < 0) {
		fprintf(stderr, "pixrelay bank connect: the Pix key %s\n", err);
		return 2;
	}
	if (!token_file && env == ENV_PRODUCTION) {
		fprintf(stderr, "pixrelay bank connect: --api-token-file FILE is required in "
				"production (the provider's API token: Woovi's AppID, Asaas's API "
				"key)\n");
		return 2;
	}
	if ((prov != PROVIDER_WOOVI && keys_file) || (prov == PROVIDER_WOOVI && secret_file)) {
		fprintf(stderr, "pixrelay bank connect: --webhook-public-key is Woovi's, "
				"--webhook-secret-file Asaas's and Mercado Pago's\n");
		return 2;
	}
	if (prov == PROVIDER_MERCADOPAGO && !token_file) {
		fprintf(stderr, "pixrelay bank connect: --api-token-file FILE is required: Mercado "
				"Pago's notification is only a pointer, read back with the access "
				"token\n");
		return 2;
	}
	if (!token_file && !*pix_key) {
		fprintf(stderr,
			"pixrelay bank connect: without --api-token-file (sandbox only) nothing is "
			"created at the provider: give --chave KEY, the key of the account's QR "
			"codes\n");
		return 2;
	}
	if (token_file && !(token = cli_read_file("bank connect", "api-token-file", token_file,
						  BANK_CREDS_ID_MAX, 1)))
		return 1;
	creds.api_url = mem_strdup(url ? url : provider_default_url(prov, env));
	if (ca_file && !(creds.bank_ca_pem = cli_read_file("bank connect", "api-ca", ca_file,
							   BANK_CREDS_PEM_MAX, 0))) {
		rc = 1;
		goto done;
	}
	if (bank_creds_check_provider(&creds, token, err, sizeof(err)) < 0) {
		fprintf(stderr, "pixrelay bank connect: --%s\n", err);
		goto done;
	}
	if (token)
		creds.key_header = provider_key_header(prov, token);
	snprintf(creds.conn, sizeof(creds.conn), "new");
	rc = 1;
	if (prov == PROVIDER_ASAAS) {
		if (!(secret = webhook_secret(secret_file, env, &secret_made))) {
			rc = 2;
			goto done;
		}
	} else if (prov == PROVIDER_MERCADOPAGO) {
		/* the secret key of Your integrations > Webhooks; without it
		 * (QR-code integrations: unsigned) the fetch is the only guard */
		if (secret_file && !(secret = cli_read_file("bank connect", "webhook-secret-file",
							    secret_file, 255, 1))) {
			rc = 1;
			goto done;
		}
	} else if (keys_file) {
		if (!(keys = cli_read_file("bank connect", "webhook-public-key", keys_file,
					   KEYS_FILE_MAX, 0)))
			goto done;
		if (provsig_public_keys_check(keys, err, sizeof(err)) < 0) {
			fprintf(stderr, "pixrelay bank connect: --webhook-public-key %s: %s\n",
				keys_file, err);
			rc = 2;
			goto done;
		}
	} else if (token && fetch_keys(cfg, &creds, &keys) < 0) {
		goto done;
	}
	if (token && !no_check && try_token(cfg, prov, &creds) < 0)
		goto done;
	if (env == ENV_SANDBOX && prov == PROVIDER_WOOVI)
		/* pixrelay's own pair: trigger signs what the provider would */
		provsig_woovi_keypair(&priv, &pub);
	if ((token || priv || secret) && cli_credentials_key("bank connect", cfg, 1, &skey) < 0)
		goto done;
	have_key = token || priv || secret;
	if (cli_open_account(cfg, env, a.account, &cr, acct) < 0)
		goto done;
	if (cli_call_open(&call, cfg, &cr) == 0) {
		pc = (struct banks_provider_conn){.provider = prov,
						  .api_url = creds.api_url,
						  .api_token = token,
						  .server_ca = creds.bank_ca_pem,
						  .public_keys = keys,
						  .private_key = priv,
						  .own_public_key = pub,
						  .webhook_secret = secret,
						  .key = have_key ? &skey : NULL};
		banks_connect(call.r, cfg, env, acct, pix_key, BANKS_PROVIDER, NULL, NULL,
			      is_default, &pc, cli_call_done, &call);
		cli_call_wait(&call);
		switch (call.result) {
		case 0:
			say_connected(call.json, prov, secret_made ? secret : NULL, a.json);
			rc = 0;
			break;
		case BANKS_NO_ACCOUNT:
			fprintf(stderr, "pixrelay bank connect: no account %s in %s\n", acct,
				env_name(env));
			break;
		case BANKS_LIMIT:
			fprintf(stderr,
				"pixrelay bank connect: the account has %d connections already\n",
				BANKS_PER_ACCOUNT);
			break;
		case BANKS_KEY_TAKEN:
			fprintf(stderr,
				"pixrelay bank connect: the Pix key %s is connected already (%s)\n",
				pix_key, call.json ? call.json : "");
			break;
		default:
			fprintf(stderr, "pixrelay bank connect: %s\n", call.err);
		}
	}
	cli_call_close(&call);
	cli_redis_close(&cr);
done:
	if (have_key)
		seal_key_wipe(&skey);
	mem_free_wiped(token);
	mem_free_wiped(priv);
	mem_free_wiped(secret);
	free(pub);
	free(keys);
	bank_creds_wipe(&creds);
	return rc;
}
