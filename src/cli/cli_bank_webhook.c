/* cli_bank_webhook: a bank connection's webhook at its bank, through the
 * bank's API (the standard's PUT and GET /webhook/{chave}) with the
 * connection's API credentials: `pixrelay bank register-webhook`, the same
 * step of `bank connect --register-webhook`, and what `bank show` says the
 * bank holds. A URL-token connection's token is kept only as its SHA-256,
 * so registering its URL again takes a new token; it replaces the old one
 * only once the bank accepted the URL that carries it (banks_set_token).
 * The calls go out on the command's private loop (relay/bankapi.c); the
 * bank's answers are judged by store/banks_webhook.c; the rest of the
 * command is cli_bank.c. */
#include "cli_int.h"

#include "pixrelay/core/json.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/core/seal.h"
#include "pixrelay/core/timefmt.h"
#include "pixrelay/pix/bankcreds.h"
#include "pixrelay/pix/bankpix.h"
#include "pixrelay/relay/bankapi.h"
#include "pixrelay/store/banks_conn.h"
#include "pixrelay/store/banks_webhook.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define URL_MAX 2048

/* A bank's answer. */
struct answer {
	struct event_base *base;
	int done;
	long status;
	char *body;
	char err[400];
};

/* Read connection `id` of `env` into t (a connection as the calls to its
 * bank need it), its credentials opened with the credentials key when
 * there is one. 0; 1 when there is no such connection; -1 with the problem
 * printed. */
static int read_target(const char *cmd, struct cli_call *k, const struct config *cfg, enum env env,
		       const char *id, struct cli_bank_conn *t)
{
	struct seal_key key;
	char key_err[512], path[1024];
	int have;

	cli_credentials_key_path(cfg, path, sizeof(path));
	have = seal_key_load(path, &key, key_err, sizeof(key_err)) == 0;
	cli_bank_read_own(k, cfg, id, have ? &key : NULL, t);
	if (have)
		seal_key_wipe(&key);
	if (t->result < 0) {
		fprintf(stderr, "pixrelay %s: %s\n", cmd, t->why);
		return -1;
	}
	if (t->result != 0 || t->env != env)
		return 1;
	if (t->has_api && !have)
		snprintf(t->why, sizeof(t->why), "%s", key_err);
	return 0;
}

static void target_wipe(struct cli_bank_conn *t)
{
	mem_free_wiped(t->own_key);
	mem_free_wiped(t->own_secret);
	t->own_key = t->own_secret = NULL;
	bank_creds_wipe(&t->creds);
	mem_wipe(t->token_sha, sizeof(t->token_sha));
}

static void on_answer(void *ud, long status, const char *body, const char *err)
{
	struct answer *a = ud;

	a->done = 1;
	a->status = status;
	a->body = body ? mem_strdup(body) : NULL;
	snprintf(a->err, sizeof(a->err), "%s", err ? err : "");
	event_base_loopbreak(a->base);
}

/* `method` /webhook/{chave} at t's bank, with `body` (or NULL), on the
 * command's loop; the answer in a (free a->body). */
/* Call `method` on t's webhook at its bank: /webhook/{chave}, or `at`
 * when given (/webhookrec: one per API client, not per key). */
static void call_bank_at(struct cli_call *k, const struct config *cfg, struct cli_bank_conn *t,
			 const char *at, const char *method, const char *body, struct answer *a)
{
	struct bankapi *b = bankapi_new(k->base, cfg->bank_timeout_ms);
	char path[16 + 3 * BANKPIX_CHAVE_MAX + 1] = "/webhook/";
	size_t n = strlen(path);

	/* the key as one path segment: every byte but the unreserved escaped */
	for (const unsigned char *p = (const unsigned char *)t->pix_key; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || strchr("-._~", *p))
			path[n++] = (char)*p;
		else
			n += (size_t)snprintf(path + n, sizeof(path) - n, "%%%02X", *p);
	}
	path[n] = '\0';
	if (at)
		snprintf(path, sizeof(path), "%s", at);
	memset(a, 0, sizeof(*a));
	a->base = k->base;
	bankapi_call(b, &t->creds, method, path, body, on_answer, a);
	while (!a->done)
		event_base_dispatch(k->base);
	bankapi_free(b);
}

/* Put `url` as t's webhook at its bank (at `at`, NULL: /webhook/{chave}).
 * 0, or -1 with why in err: `sent` set when the bank may have taken it all
 * the same (no answer); `status` the bank's answer (0 none). */
static int put_webhook_at(struct cli_call *k, const struct config *cfg, struct cli_bank_conn *t,
			  const char *at, const char *url, int *sent, long *status, char *err,
			  size_t errlen)
{
	yajl_gen g = json_gen_new();
	struct answer a;
	char problem[512];
	char *body;
	int rc = -1;

	json_open(g);
	json_str(g, "webhookUrl");
	json_str(g, url);
	json_close(g);
	body = json_take(g);
	call_bank_at(k, cfg, t, at, "PUT", body, &a);
	mem_wipe(body, strlen(body));
	free(body);
	*sent = 0;
	if (a.status >= 200 && a.status < 300) {
		rc = 0;
	} else if (a.status == 0) {
		/* no answer; without a token (bankapi's "bank token: ...") the
		 * PUT never left */
		*sent = strncmp(a.err, "bank token:", 11) != 0;
		snprintf(err, errlen, "could not call the bank: %s", a.err);
	} else {
		*sent = a.status >= 500;
		bankapi_problem(problem, sizeof(problem), a.status, a.body);
		snprintf(err, errlen, "the bank refused the webhook: %s", problem);
	}
	*status = a.status;
	free(a.body);
	return rc;
}

static int put_webhook(struct cli_call *k, const struct config *cfg, struct cli_bank_conn *t,
		       const char *url, int *sent, char *err, size_t errlen)
{
	long status;

	return put_webhook_at(k, cfg, t, NULL, url, sent, &status, err, errlen);
}

/* Pix Automático's callbacks (docs/recurrences.md): the same URL put as
 * the API client's `at`, /webhookrec (recurrences) or /webhookcobr
 * (recurring charges). "registered"; "not_enabled" when the bank refuses
 * the client (403: its credentials lack webhookrec.write or
 * webhookcobr.write) or knows no such route (404): the bank or the client
 * has no Pix Automático, and nothing is wrong with the Pix webhook; else
 * "error" with why in err. */
static const char *put_webhook_also(struct cli_call *k, const struct config *cfg,
				    struct cli_bank_conn *t, const char *at, const char *url,
				    char *err, size_t errlen)
{
	long status = 0;
	int sent;

	if (put_webhook_at(k, cfg, t, at, url, &sent, &status, err, errlen) == 0)
		return "registered";
	return status == 403 || status == 404 ? "not_enabled" : "error";
}

/* What read_target found, for a command that needs the bank's API: 0, or
 * the exit code with the problem printed. */
static int usable(const char *cmd, int found, const struct cli_bank_conn *t, const char *id,
		  enum env env)
{
	if (found < 0)
		return 1;
	if (found > 0) {
		fprintf(stderr, "pixrelay %s: no connection %s in %s\n", cmd, id, env_name(env));
		return 1;
	}
	if (!t->has_api && t->provider != PROVIDER_API_PIX) {
		fprintf(stderr,
			"pixrelay %s: %s has no API token of its provider: register its webhookUrl "
			"in the provider's dashboard (docs/providers.md)\n",
			cmd, id);
		return 1;
	}
	if (!t->has_api) {
		fprintf(stderr,
			"pixrelay %s: %s has no API credentials of the bank: give them with "
			"pixrelay bank credentials %s, or register its webhookUrl in the bank's "
			"portal\n",
			cmd, id, id);
		return 1;
	}
	if (!t->opened) {
		fprintf(stderr, "pixrelay %s: %s: %s\n", cmd, id, t->why);
		return 1;
	}
	return 0;
}

int cli_bank_register_url(struct cli_call *k, const struct config *cfg, enum env env,
			  const char *id, const char *url)
{
	struct cli_bank_conn t;
	char err[700];
	int found = read_target("bank connect", k, cfg, env, id, &t), rc, sent;

	if ((rc = usable("bank connect", found, &t, id, env)) == 0 &&
	    put_webhook(k, cfg, &t, url, &sent, err, sizeof(err)) < 0) {
		fprintf(stderr, "pixrelay bank connect: %s\n", err);
		rc = 1;
	} else if (rc == 0) {
		static const char *const also[] = {"/webhookrec", "/webhookcobr"};

		for (size_t i = 0; i < 2 && rc == 0; i++)
			if (strcmp(put_webhook_also(k, cfg, &t, also[i], url, err, sizeof(err)),
				   "error") == 0) {
				fprintf(stderr,
					"pixrelay bank connect: Pix Automático's webhook (PUT "
					"%s): %s\n",
					also[i], err);
				rc = 1;
			}
	}
	target_wipe(&t);
	return rc ? -1 : 0;
}

static void print_registered(const char *id, const char *pix_key, const char *url, int new_token,
			     const char *rec, const char *cobr, int json)
{
	if (json) {
		yajl_gen g = json_gen_new();
		char *out;

		json_open(g);
		json_str(g, "id");
		json_str(g, id);
		json_str(g, "pixKey");
		json_str(g, pix_key);
		json_str(g, "webhookUrl");
		json_str(g, url);
		json_str(g, "newToken");
		json_bool(g, new_token);
		json_str(g, "webhookRec");
		json_str(g, rec);
		json_str(g, "webhookCobr");
		json_str(g, cobr);
		json_close(g);
		out = json_take(g);
		printf("%s\n", out);
		mem_wipe(out, strlen(out));
		free(out);
		return;
	}
	printf("Registered at the bank for the Pix key %s:\n  %s\n", pix_key, url);
	if (new_token)
		printf("It carries a new token, shown only this once; the connection's previous "
		       "token is refused from now on.\n");
	if (strcmp(rec, "registered") == 0)
		printf("The same URL is the API client's webhook of Pix Automático "
		       "(/webhookrec).\n");
	if (strcmp(cobr, "registered") == 0)
		printf("The same URL is the API client's webhook of its recurring charges "
		       "(/webhookcobr).\n");
}

int cli_bank_register_webhook(struct cli_call *k, const struct config *cfg, enum env env,
			      const char *id, const char *email, int json)
{
	static const char cmd[] = "bank register-webhook";
	struct cli_bank_conn t;
	char url[URL_MAX], err[700], rec_err[700] = "", cobr_err[700] = "";
	char token[BANKS_TOKEN_LEN + 1] = "";
	const char *rec, *cobr;
	int found, rc, sent;

	if (banks_webhook_https(cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "pixrelay %s: %s\n", cmd, err);
		return 1;
	}
	found = read_target(cmd, k, cfg, env, id, &t);
	if ((rc = usable(cmd, found, &t, id, env)) != 0)
		goto done;
	if (t.provider != PROVIDER_API_PIX) {
		/* a payment provider's own webhook API */
		banks_webhook_url(url, sizeof(url), cfg, id, NULL);
		rc = cli_bank_provider_register(cfg, id, &t, url, email, json);
		goto done;
	}
	rc = 1;
	/* a URL token is kept only as its SHA-256: the URL takes a new one */
	if (t.auth == BANKS_URL_TOKEN)
		banks_make_token(token);
	banks_webhook_url(url, sizeof(url), cfg, id, token[0] ? token : NULL);
	if (put_webhook(k, cfg, &t, url, &sent, err, sizeof(err)) < 0) {
		fprintf(stderr, "pixrelay %s: %s\n", cmd, err);
		if (token[0])
			fprintf(
			    stderr,
			    "pixrelay %s: nothing changed in pixrelay: the connection keeps its "
			    "token\n",
			    cmd);
		if (sent)
			fprintf(
			    stderr,
			    "pixrelay %s: the bank may have taken the URL all the same: run the "
			    "command again (pixrelay bank show %s says what the bank holds)\n",
			    cmd, id);
		goto done;
	}
	rec = put_webhook_also(k, cfg, &t, "/webhookrec", url, rec_err, sizeof(rec_err));
	cobr = put_webhook_also(k, cfg, &t, "/webhookcobr", url, cobr_err, sizeof(cobr_err));
	if (token[0]) {
		k->done = 0;
		banks_set_token(k->r, cfg, env, id, token, t.token_sha, cli_call_done, k);
		cli_call_wait(k);
		if (k->result != 0) {
			fprintf(
			    stderr,
			    "pixrelay %s: the bank took the URL with a new token, but pixrelay "
			    "could not keep it (%s): the bank's calls are refused until pixrelay "
			    "bank register-webhook %s succeeds\n",
			    cmd,
			    k->result == BANKS_CHANGED ? "the token changed meanwhile"
			    : k->result < 0	       ? k->err
						       : "the connection is gone",
			    id);
			goto done;
		}
	}
	print_registered(id, t.pix_key, url, token[0] != '\0', rec, cobr, json);
	rc = 0;
	if (strcmp(rec, "error") == 0) {
		/* the Pix webhook is registered; recurrences' callbacks are not */
		fprintf(stderr,
			"pixrelay %s: Pix Automático's webhook (PUT /webhookrec): %s; run "
			"the command again\n",
			cmd, rec_err);
		rc = 1;
	}
	if (strcmp(cobr, "error") == 0) {
		fprintf(stderr,
			"pixrelay %s: Pix Automático's webhook (PUT /webhookcobr): %s; run "
			"the command again\n",
			cmd, cobr_err);
		rc = 1;
	}
done:
	mem_wipe(url, sizeof(url));
	mem_wipe(token, sizeof(token));
	target_wipe(&t);
	return rc;
}

/* ---- what the bank holds ---- */

enum held { HELD_NONE = BANKS_HOOK_BAD + 1, HELD_ERROR, HELD_UNKNOWN, HELD_NOT_ENABLED };

/* What the bank holds as connection id's webhook: a banks_hook or a held
 * (HELD_UNKNOWN: no API credentials, nothing asked), with seen filled and,
 * for BANKS_HOOK_BAD and HELD_ERROR, why in err. */
static int ask_bank(struct cli_call *k, const struct config *cfg, enum env env, const char *id,
		    const char *at, struct banks_hook_seen *seen, char *err, size_t errlen)
{
	struct cli_bank_conn t;
	struct answer a = {0};
	char problem[512];
	int found = read_target("bank show", k, cfg, env, id, &t), held;

	memset(seen, 0, sizeof(*seen));
	if (found != 0 || !t.has_api) {
		held = found < 0 ? HELD_ERROR : HELD_UNKNOWN;
		if (found < 0)
			snprintf(err, errlen, "redis: %s", t.why);
		goto done;
	}
	if (!t.opened) {
		snprintf(err, errlen, "its API credentials cannot be used on this host: %s", t.why);
		held = HELD_ERROR;
		goto done;
	}
	call_bank_at(k, cfg, &t, at, "GET", NULL, &a);
	if (a.status == 200) {
		struct banks_conn c = {0};

		snprintf(c.id, sizeof(c.id), "%s", id);
		c.auth = t.auth;
		c.pix_key = t.pix_key;
		snprintf(c.token_sha, sizeof(c.token_sha), "%s", t.token_sha);
		banks_webhook_judge(&c, cfg, a.body, a.body ? strlen(a.body) : 0, seen);
		held = (int)seen->hook;
		snprintf(err, errlen, "%s", seen->err);
	} else if (a.status == 404) {
		held = HELD_NONE;
	} else if (at && a.status == 403) {
		/* /webhookrec refused to the client: no Pix Automático for it */
		held = HELD_NOT_ENABLED;
	} else if (a.status == 0) {
		snprintf(err, errlen, "could not call the bank: %s", a.err);
		held = HELD_ERROR;
	} else {
		bankapi_problem(problem, sizeof(problem), a.status, a.body);
		snprintf(err, errlen, "the bank answered %s", problem);
		held = HELD_ERROR;
	}
	free(a.body);
done:
	target_wipe(&t);
	return held;
}

static const char *held_name(int held)
{
	switch (held) {
	case BANKS_HOOK_THIS:
		return "registered";
	case BANKS_HOOK_OLD_TOKEN:
		return "old_token";
	case BANKS_HOOK_OTHER:
		return "other";
	case HELD_NONE:
		return "none";
	case HELD_NOT_ENABLED:
		return "not_enabled";
	default:
		return "error";
	}
}

char *cli_json_with(const char *json, const char *name, const char *value)
{
	yajl_val v = NULL;
	yajl_gen g;
	char err[128];

	if (json_parse_object(json, strlen(json), &v, err, sizeof(err)) < 0)
		return mem_strdup(json);
	g = json_gen_new();
	json_open(g);
	for (size_t i = 0; i < v->u.object.len; i++) {
		json_str(g, v->u.object.keys[i]);
		json_write_value(g, v->u.object.values[i]);
	}
	json_str(g, name);
	json_raw(g, value, strlen(value));
	json_close(g);
	yajl_tree_free(v);
	return json_take(g);
}

/* What the bank holds, as the JSON of show's "bankWebhook" (null when
 * nothing was asked). */
static char *held_json(int held, const struct banks_hook_seen *s, const char *err)
{
	yajl_gen g;
	char at[32];

	if (held == HELD_UNKNOWN)
		return mem_strdup("null");
	g = json_gen_new();
	json_open(g);
	json_str(g, "status");
	json_str(g, held_name(held));
	if (held == BANKS_HOOK_OTHER) {
		json_str(g, "host");
		json_str_or_null(g, s->host[0] ? s->host : NULL);
		json_str(g, "connection");
		json_str_or_null(g, s->conn[0] ? s->conn : NULL);
	}
	if (held <= BANKS_HOOK_OTHER) {
		json_str(g, "registeredAt");
		timefmt_rfc3339(at, (uint64_t)s->since_ms);
		json_str_or_null(g, s->since_ms ? at : NULL);
	}
	if (held == BANKS_HOOK_BAD || held == HELD_ERROR) {
		json_str(g, "error");
		json_str(g, err);
	}
	json_close(g);
	return json_take(g);
}

static void print_held(const char *id, int held, const struct banks_hook_seen *s, const char *err)
{
	char since[48] = "";

	if (s->since_ms) {
		char at[32];
		timefmt_rfc3339(at, (uint64_t)s->since_ms);
		snprintf(since, sizeof(since), ", since %s", at);
	}
	switch (held) {
	case BANKS_HOOK_THIS:
		printf("  at the bank  this connection's webhook URL%s\n", since);
		break;
	case BANKS_HOOK_OLD_TOKEN:
		printf("  at the bank  this connection's webhook URL with a token it no longer "
		       "takes%s: the bank's calls are refused (pixrelay bank register-webhook "
		       "%s)\n",
		       since, id);
		break;
	case BANKS_HOOK_OTHER:
		if (s->conn[0])
			printf("  at the bank  the URL of connection %s, on host %s%s: not this "
			       "one's (pixrelay bank register-webhook %s)\n",
			       s->conn, s->host[0] ? s->host : "-", since, id);
		else
			printf(
			    "  at the bank  another URL, on host %s%s: the bank's calls go there "
			    "(pixrelay bank register-webhook %s)\n",
			    s->host[0] ? s->host : "-", since, id);
		break;
	case HELD_NONE:
		printf("  at the bank  no webhook for the Pix key (pixrelay bank register-webhook "
		       "%s)\n",
		       id);
		break;
	case HELD_UNKNOWN:
		break;
	default:
		printf("  at the bank  cannot tell: %s\n", err);
	}
}

/* The line of what the bank holds as the API client's /webhookrec or
 * /webhookcobr: `label` the line's name, `cb` the callback ("/rec"). */
static void print_held_also(const char *id, const char *label, const char *cb, int held,
			    const struct banks_hook_seen *s, const char *err)
{
	switch (held) {
	case BANKS_HOOK_THIS:
		printf("  %-11s  the bank's %s callback: this connection's webhook URL\n", label,
		       cb);
		break;
	case BANKS_HOOK_OLD_TOKEN:
		printf("  %-11s  the bank's %s callback: this connection's URL with a token it no "
		       "longer takes (pixrelay bank register-webhook %s)\n",
		       label, cb, id);
		break;
	case BANKS_HOOK_OTHER:
		printf("  %-11s  the bank's %s callback goes to another URL, on host %s%s%s: not "
		       "this connection's (pixrelay bank register-webhook %s)\n",
		       label, cb, s->host[0] ? s->host : "-", s->conn[0] ? ", connection " : "",
		       s->conn, id);
		break;
	case HELD_NONE:
		printf("  %-11s  no %s callback registered (pixrelay bank register-webhook %s)\n",
		       label, cb, id);
		break;
	case HELD_UNKNOWN:
	case HELD_NOT_ENABLED:
		break;
	default:
		printf("  %-11s  cannot tell: %s\n", label, err);
	}
}

int cli_bank_show(struct cli_call *k, const struct config *cfg, enum env env, const char *id,
		  int json)
{
	struct banks_hook_seen seen, seen_rec, seen_cobr;
	char *conn = k->json, *out, why[700] = "", why_rec[700] = "", why_cobr[700] = "", err[128];
	int held, held_rec, held_cobr;
	yajl_val v = NULL;
	const char *last, *prov;

	k->json = NULL;
	if (json_parse_object(conn, strlen(conn), &v, err, sizeof(err)) == 0 &&
	    (prov = YAJL_GET_STRING(json_get(v, "provider"))) && strcmp(prov, "api-pix") != 0) {
		/* a payment provider's: no API Pix webhook to ask about */
		yajl_tree_free(v);
		if (json)
			printf("%s\n", conn);
		else
			cli_bank_print("show", conn);
		free(conn);
		return 0;
	}
	yajl_tree_free(v);
	v = NULL;
	held = ask_bank(k, cfg, env, id, NULL, &seen, why, sizeof(why));
	/* Pix Automático's callback, one per API client (docs/recurrences.md) */
	held_rec = held == HELD_UNKNOWN ? HELD_UNKNOWN
					: ask_bank(k, cfg, env, id, "/webhookrec", &seen_rec,
						   why_rec, sizeof(why_rec));
	held_cobr = held == HELD_UNKNOWN ? HELD_UNKNOWN
					 : ask_bank(k, cfg, env, id, "/webhookcobr", &seen_cobr,
						    why_cobr, sizeof(why_cobr));
	if (json) {
		char *value = held_json(held, &seen, why), *with;
		char *rec = held_json(held_rec, &seen_rec, why_rec), *with_rec;
		char *cobr = held_json(held_cobr, &seen_cobr, why_cobr);

		with = cli_json_with(conn, "bankWebhook", value);
		with_rec = cli_json_with(with, "bankWebhookRec", rec);
		out = cli_json_with(with_rec, "bankWebhookCobr", cobr);
		printf("%s\n", out);
		free(out);
		free(with);
		free(with_rec);
		free(value);
		free(rec);
		free(cobr);
	} else {
		cli_bank_print("show", conn);
		print_held(id, held, &seen, why);
		print_held_also(id, "recurrences", "/rec", held_rec, &seen_rec, why_rec);
		print_held_also(id, "cobr", "/cobr", held_cobr, &seen_cobr, why_cobr);
		if (json_parse_object(conn, strlen(conn), &v, err, sizeof(err)) == 0 &&
		    (last = YAJL_GET_STRING(json_get(v, "lastCallAt"))))
			printf("  last call    %s (the bank's last webhook call answered 200)\n",
			       last);
		else
			printf("  last call    none recorded\n");
		yajl_tree_free(v);
	}
	free(conn);
	/* and on stderr, why this host cannot use the API credentials */
	cli_bank_api_explain(k, cfg, id);
	return 0;
}
