/* cli_trigger_prov: `pixrelay trigger woovi.paid|asaas.paid`
 * (docs/providers.md). Woovi: a
 * sandbox charge of the account (--charge, else a new one made through the
 * API of --base-url), then Woovi's OPENPIX:CHARGE_COMPLETED notification of
 * its payment, in the shape of Woovi's published example, signed as Woovi
 * signs (RSA-SHA256 of the raw body, base64, x-webhook-signature) with the
 * connection's own sandbox key, POSTed to the connection's webhook URL on
 * that server: the provider receiver's own path, so that its one event
 * reaches the postbackUrl and every `pixrelay listen`. Asaas: its
 * PAYMENT_RECEIVED with the connection's webhook token, for a sandbox
 * connection without an API key (one with a key reads the payment back at
 * Asaas). The rest of `trigger` is cli_trigger.c. */
#include "cli_int.h"

#include "pixrelay/cli/listen.h"
#include "pixrelay/core/ids.h"
#include "pixrelay/core/json.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/core/seal.h"
#include "pixrelay/core/timefmt.h"
#include "pixrelay/pix/asaas.h"
#include "pixrelay/pix/bankday.h"
#include "pixrelay/pix/provsig.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The account's first connection to provider `name` (--connection given:
 * that one). */
static int provider_connection(const char *base, const char *key, const char *account,
			       const char *name, const char *given, char out[64])
{
	yajl_val data = NULL, list;
	int rc = -1;

	if (given) {
		snprintf(out, 64, "%s", given);
		return 0;
	}
	if (cli_trigger_step(base, key, account, "GET", "/bank/connections", NULL, NULL, &data) < 0)
		return -1;
	list = json_get(data, "connections");
	for (size_t i = 0; YAJL_IS_ARRAY(list) && i < list->u.array.len; i++) {
		yajl_val c = list->u.array.values[i];
		const char *p = YAJL_GET_STRING(json_get(c, "provider"));

		if (p && strcmp(p, name) == 0 && YAJL_GET_STRING(json_get(c, "id"))) {
			snprintf(out, 64, "%s", YAJL_GET_STRING(json_get(c, "id")));
			rc = 0;
			break;
		}
	}
	if (rc < 0)
		fprintf(stderr,
			"pixrelay trigger: the account has no Woovi connection: pixrelay bank "
			"connect --provider woovi ... (docs/providers.md)\n");
	yajl_tree_free(data);
	return rc;
}

/* OPENPIX:CHARGE_COMPLETED of charge `cid` paid `cents` now. */
static char *completed_body(const char *cid, long cents)
{
	char tx[33], e2e[33], at[32];
	yajl_gen g = json_gen_new();

	ids_base62(tx, 32);
	tx[32] = '\0';
	/* E, an ISPB (8 digits), the minute and 11 letters or digits */
	memcpy(e2e, "E54811417", 9);
	ids_base62(e2e + 9, 23);
	e2e[32] = '\0';
	timefmt_rfc3339(at, ids_now_ms());
	json_open(g);
	json_str(g, "event");
	json_str(g, "OPENPIX:CHARGE_COMPLETED");
	json_str(g, "charge");
	json_open(g);
	json_str(g, "value");
	json_int(g, cents);
	json_str(g, "transactionID");
	json_str(g, tx);
	json_str(g, "status");
	json_str(g, "COMPLETED");
	json_str(g, "correlationID");
	json_str(g, cid);
	json_str(g, "paidAt");
	json_str(g, at);
	json_close(g);
	json_str(g, "pix");
	json_open(g);
	json_str(g, "value");
	json_int(g, cents);
	json_str(g, "time");
	json_str(g, at);
	json_str(g, "endToEndId");
	json_str(g, e2e);
	json_str(g, "transactionID");
	json_str(g, tx);
	json_str(g, "infoPagador");
	json_str(g, "pixrelay trigger");
	json_str(g, "type");
	json_str(g, "PAYMENT");
	json_close(g);
	json_str(g, "company");
	json_open(g);
	json_close(g);
	json_str(g, "account");
	json_open(g);
	json_close(g);
	json_close(g);
	return json_take(g);
}

/* Asaas's PAYMENT_RECEIVED of charge `cid` paid `cents` today, in the shape
 * of docs.asaas.com's webhook example (a Pix payment). */
static char *received_body(const char *cid, long cents)
{
	char pay[24], evt[24], reais[24], day[11], at[24];
	long long now = (long long)ids_now_ms();
	yajl_gen g = json_gen_new();

	memcpy(pay, "pay_", 4);
	ids_base62(pay + 4, 16);
	pay[20] = '\0';
	memcpy(evt, "evt_", 4);
	ids_base62(evt + 4, 16);
	evt[20] = '\0';
	bankpix_cents_text(cents, reais);
	bankday_date(day, now);
	snprintf(at, sizeof(at), "%s 12:00:00", day);
	json_open(g);
	json_str(g, "id");
	json_str(g, evt);
	json_str(g, "event");
	json_str(g, "PAYMENT_RECEIVED");
	json_str(g, "dateCreated");
	json_str(g, at);
	json_str(g, "payment");
	json_open(g);
	json_str(g, "object");
	json_str(g, "payment");
	json_str(g, "id");
	json_str(g, pay);
	json_str(g, "dateCreated");
	json_str(g, day);
	json_str(g, "value");
	json_raw(g, reais, strlen(reais));
	json_str(g, "billingType");
	json_str(g, "PIX");
	json_str(g, "status");
	json_str(g, "RECEIVED");
	json_str(g, "paymentDate");
	json_str(g, day);
	json_str(g, "clientPaymentDate");
	json_str(g, day);
	json_str(g, "externalReference");
	json_str(g, cid);
	json_close(g);
	json_close(g);
	return json_take(g);
}

/* The connection's own sandbox key, read from Redis and opened. */
static char *own_key(const struct config *cfg, const char *conn, enum provider want)
{
	struct cli_redis cr;
	struct cli_call call;
	struct cli_bank_conn c = {0};
	struct seal_key key;
	char *out = NULL;

	if (cli_credentials_key("trigger", cfg, 0, &key) < 0)
		return NULL;
	if (cli_redis_open(cfg, &cr) < 0) {
		seal_key_wipe(&key);
		return NULL;
	}
	if (cli_call_open(&call, cfg, &cr) == 0) {
		cli_bank_read_own(&call, cfg, conn, &key, &c);
		if (c.result < 0)
			fprintf(stderr, "pixrelay trigger: %s\n", c.why);
		else if (c.result != 0 || c.provider != want)
			fprintf(stderr, "pixrelay trigger: no %s connection %s\n",
				provider_name(want), conn);
		else if (c.env != ENV_SANDBOX)
			fprintf(stderr, "pixrelay trigger: connection %s is of production\n", conn);
		else if (want == PROVIDER_ASAAS && c.has_api)
			/* Asaas's token is Asaas's too: a notification with it is
			 * read back at Asaas, which does not know this payment */
			fprintf(stderr,
				"pixrelay trigger: connection %s has an API key: its notifications "
				"are read back at Asaas; use asaas.paid on a sandbox connection "
				"without one (docs/providers.md)\n",
				conn);
		else if (want == PROVIDER_ASAAS && c.own_secret)
			out = c.own_secret, c.own_secret = NULL;
		else if (want == PROVIDER_WOOVI && c.own_key)
			out = c.own_key, c.own_key = NULL;
		else
			fprintf(stderr,
				"pixrelay trigger: connection %s has no sandbox key of pixrelay's "
				"own\n",
				conn);
		if (c.opened)
			bank_creds_wipe(&c.creds);
		mem_free_wiped(c.own_key);
		mem_free_wiped(c.own_secret);
	}
	cli_call_close(&call);
	cli_redis_close(&cr);
	seal_key_wipe(&key);
	return out;
}

int cli_trigger_provider(const struct config *cfg, const struct cli_args *a, const char *key,
			 enum provider prov, const char *charge_id, long amount,
			 const char *connection)
{
	char base[512], conn[64], cid[64], err[512], *priv = NULL, *body = NULL, *sig = NULL;
	char *url = NULL, *out = NULL;
	yajl_val data = NULL, v = NULL, pix, one;
	long status;
	int rc = 1;

	cli_base_url(cfg, base, sizeof(base));
	if (provider_connection(base, key, a->account, provider_name(prov), connection, conn) < 0)
		return 1;
	/* the key it signs with first: nothing is made for a connection that
	 * cannot be triggered */
	if (!(priv = own_key(cfg, conn, prov)))
		return 1;
	if (charge_id) {
		char *path = mem_printf("/charge/pix/%s", charge_id);
		int got = cli_trigger_step(base, key, a->account, "GET", path, NULL, NULL, &data);

		free(path);
		if (got < 0)
			goto done;
		if (json_get(data, "amount") && YAJL_IS_INTEGER(json_get(data, "amount")))
			amount = (long)YAJL_GET_INTEGER(json_get(data, "amount"));
	} else {
		char *req = mem_printf("{\"amount\":%ld}", amount);
		int made = cli_trigger_step(base, key, a->account, "POST", "/charge/pix/create",
					    req, NULL, &data);

		free(req);
		if (made < 0)
			goto done;
	}
	if (!YAJL_GET_STRING(json_get(data, "id"))) {
		fprintf(stderr, "pixrelay trigger: the charge has no id\n");
		goto done;
	}
	snprintf(cid, sizeof(cid), "%s", YAJL_GET_STRING(json_get(data, "id")));
	if (prov == PROVIDER_ASAAS) {
		/* the webhook token, as Asaas sends it */
		body = received_body(cid, amount);
		sig = mem_strdup(priv);
	} else {
		body = completed_body(cid, amount);
		if (provsig_woovi_sign(priv, body, strlen(body), &sig) < 0) {
			fprintf(stderr, "pixrelay trigger: the sandbox key does not sign\n");
			goto done;
		}
	}
	url = mem_printf("%s/webhooks/bank/%s", base, conn);
	status = listen_post_signed(
	    url, body, prov == PROVIDER_ASAAS ? "asaas-access-token" : "x-webhook-signature", sig,
	    30000, &out, err, sizeof(err));
	if (status != 200) {
		fprintf(stderr, "pixrelay trigger: POST %s answered %ld: %s\n", url, status,
			status ? (out ? out : "") : err);
		goto done;
	}
	if (json_parse_object(out, strlen(out), &v, err, sizeof(err)) < 0) {
		fprintf(stderr, "pixrelay trigger: the answer: %s\n", err);
		goto done;
	}
	pix = json_get(json_get(v, "data") ? json_get(v, "data") : v, "pix");
	one = YAJL_IS_ARRAY(pix) && pix->u.array.len == 1 ? pix->u.array.values[0] : NULL;
	if (a->json) {
		yajl_gen g = json_gen_new();
		size_t len;

		json_open(g);
		json_str(g, "connection");
		json_str(g, conn);
		json_str(g, "charge");
		json_str(g, cid);
		for (int i = 0; i < 3; i++) {
			static const char *const f[] = {"outcome", "reason", "event"};
			json_str(g, f[i]);
			json_write_value(g, one ? json_get(one, f[i]) : NULL);
		}
		json_close(g);
		printf("%s\n", json_buf(g, &len));
		yajl_gen_free(g);
	} else {
		const char *outcome = one ? YAJL_GET_STRING(json_get(one, "outcome")) : NULL;
		const char *event = one ? YAJL_GET_STRING(json_get(one, "event")) : NULL;

		printf("%s of charge %s through %s: %s\n",
		       prov == PROVIDER_ASAAS ? "Asaas PAYMENT_RECEIVED"
					      : "Woovi OPENPIX:CHARGE_COMPLETED",
		       cid, conn, outcome ? outcome : "?");
		if (event)
			printf("event %s\n", event);
	}
	rc = 0;
done:
	yajl_tree_free(data);
	yajl_tree_free(v);
	mem_free_wiped(priv);
	free(body);
	mem_free_wiped(sig);
	free(url);
	free(out);
	return rc;
}
