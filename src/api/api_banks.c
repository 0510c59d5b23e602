/* api_banks: bank connections and the bank's own webhook (docs/banks.md).
 *
 * POST /v1/webhooks/bank/{id}/pix (and /v1/webhooks/bank/{id}, for banks
 * that append /pix after a query string) needs no API key: the bank is
 * authenticated by the connection, with its client certificate as the proxy
 * forwards it on the bank door (X-Client-Cert, nginx's
 * $ssl_client_escaped_cert, believed only from root or bank-proxy-uids on
 * bank-listen, never on the API listener), or with the connection's URL
 * token (?hmac=, on either). Anything else is 401 and
 * nothing is stored. The Pix are parsed item by item (bankpix) and written
 * by the bank store before the answer; Redis out of reach is 503, so the
 * bank sends them again.
 *
 * /v1/bank/connections manages connections with an API key: an account key
 * its own account's, a master key any account's (X-Account-ID to create, or
 * the whole environment without it). In production a connection's Pix
 * credit its account with no money moving through pixrelay, so only a
 * master key makes, changes (PATCH) or disconnects one there; account keys
 * read theirs and ask for a reconciliation. simulate-pix (sandbox keys
 * only) runs a standard notification through the same path as a bank's.
 */
#include "api_int.h"

#include "pixrelay/core/certcheck.h"
#include "pixrelay/core/ids.h"
#include "pixrelay/core/json.h"
#include "pixrelay/core/log.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/core/metrics.h"
#include "pixrelay/pix/bankpix.h"
#include "pixrelay/pix/cobr.h"
#include "pixrelay/pix/keyspace.h"
#include "pixrelay/pix/recurrence.h"
#include "pixrelay/redis/cache.h"
#include "pixrelay/store/banks.h"
#include "pixrelay/store/banks_door.h"
#include "pixrelay/store/banks_receive.h"
#include "pixrelay/store/banks_recon.h"
#include "pixrelay/store/banks_report.h"
#include "pixrelay/store/banks_view.h"

#include <openssl/crypto.h>

#include <stdlib.h>
#include <string.h>

#define MSG_UNAUTHENTICATED "not authenticated as the bank of this connection"

/* A bank's call, from its connection's lookup to its answer. */
struct hook {
	struct bankpix_batch batch;
	int simulated;
	char conn[BANKS_ID_MAX];
};

static void hook_free(struct http_req *req)
{
	struct hook *h = req->state;

	if (!h)
		return;
	bankpix_batch_deinit(&h->batch);
	free(h);
	req->state = NULL;
}

static void refuse_unauthenticated(struct http_req *req, const char *id, const char *why)
{
	/* the reason goes to the log only: a caller who is not the bank learns
	 * nothing about the connection */
	log_warn("bank webhook %s: connection %.40s: %s", req->request_id, id, why);
	metrics_bank_call("unauthenticated");
	hook_free(req);
	http_reply_error(req, 401, MSG_UNAUTHENTICATED);
}

/* Whether the bank of connection `c` made this request; why not in `why`. */
static bool authentic(struct http_req *req, const struct banks_view *c, char *why, size_t whylen)
{
	if (c->auth == BANKS_URL_TOKEN) {
		char *token = http_query(req, "hmac");
		int ok;

		if (!token || !*token) {
			snprintf(why, whylen, "no hmac token in the URL");
			free(token);
			return false;
		}
		ok = ids_sha256_matches(token, strlen(token), c->token_sha);
		mem_wipe(token, strlen(token));
		free(token);
		if (!ok)
			snprintf(why, whylen, "wrong hmac token");
		return ok;
	} else {
		const char *cert = http_header(req, "X-Client-Cert");

		if (!req->bank_proxy) {
			/* only the proxy on the bank door, known by its uid, says what
			 * certificate the client had; never a peer of the API listener */
			if (req->peer_uid < 0)
				snprintf(why, whylen, "%s",
					 cert ? "X-Client-Cert on the API listener: ignored (mTLS "
						"banks come through bank-listen)"
					      : "no client certificate on the API listener (mTLS "
						"banks come through bank-listen)");
			else if (cert)
				snprintf(why, whylen,
					 "X-Client-Cert from uid %ld, not a bank proxy "
					 "(bank-proxy-uids): ignored",
					 req->peer_uid);
			else
				snprintf(why, whylen, "no client certificate");
			return false;
		}
		if (!cert || !*cert) {
			snprintf(why, whylen, "no client certificate");
			return false;
		}
		if (!c->trust) {
			/* its trust list or its pins do not read */
			snprintf(why, whylen, "%s", c->why);
			return false;
		}
		/* the chain to the trust list, and the leaf's pins */
		return certcheck_verify_escaped(c->trust, cert, (long long)(ids_now_ms() / 1000),
						why, whylen) == 0;
	}
}

static void on_received(void *ud, int result, const struct banks_received *got, const char *err)
{
	struct http_req *req = ud;
	struct hook *h = req->state;
	struct app *app = app_of(req);
	int simulated = h->simulated;

	if (result < 0) {
		hook_free(req);
		if (!simulated)
			metrics_bank_call("unavailable");
		api_reply_failure(req, err ? err : "bank notification failed");
		return;
	}
	dispatch_kick(app->dispatch, h->conn);
	/* every item is recorded, the refused ones too (each an event): 200,
	 * so that the bank does not send again what is taken */
	if (!simulated)
		metrics_bank_call("accepted");
	hook_free(req);
	http_reply_data(req, 200, got->json, strlen(got->json));
}

/* Parse the body and hand its Pix to the bank store. */
static void receive(struct http_req *req, const struct banks_ref *c)
{
	struct app *app = app_of(req);
	struct hook *h = req->state;
	char err[256];
	int rc;

	if (recurrence_is_callback(req->body, req->body_len)) {
		/* Pix Automático's /rec callback: the body's top key says so */
		int simulated = h->simulated;

		hook_free(req);
		api_bank_rec_receive(req, c, simulated);
		return;
	}
	if (cobr_is_callback(req->body, req->body_len)) {
		/* Pix Automático's /cobr callback: {"cobsr": [...]} */
		int simulated = h->simulated;

		hook_free(req);
		api_bank_cobr_receive(req, c, simulated);
		return;
	}
	rc = bankpix_parse(req->body, req->body_len, &h->batch, err, sizeof(err));
	if (rc != BANKPIX_OK) {
		if (!h->simulated)
			metrics_bank_call("malformed");
		log_warn("bank webhook %s: connection %s: %s", req->request_id, c->id, err);
		hook_free(req);
		http_reply_error(req, rc == BANKPIX_TOO_MANY ? 413 : 400, "%s", err);
		return;
	}
	snprintf(h->conn, sizeof(h->conn), "%s", c->id);
	for (size_t i = 0; i < h->batch.nrefused; i++)
		log_warn("bank webhook %s: connection %s: refused %s", req->request_id, c->id,
			 h->batch.refused[i].err);
	banks_receive(app->banks, c, BANKS_WEBHOOK, &h->batch, on_received, req);
}

static void on_hook_view(void *ud, int result, const struct banks_view *v, const char *err)
{
	struct http_req *req = ud;
	char why[256] = "";

	if (result < 0) {
		metrics_bank_call("unavailable");
		hook_free(req);
		api_reply_failure(req, err ? err : "bank connection lookup failed");
		return;
	}
	if (result != 0) {
		refuse_unauthenticated(req, req->params[0], "no such connection");
		return;
	}
	if (v->auth == BANKS_PROVIDER) {
		/* a payment provider's notification, in its own format */
		hook_free(req);
		api_provider_hook(req, v);
		return;
	}
	if (!authentic(req, v, why, sizeof(why))) {
		refuse_unauthenticated(req, v->ref.id, why);
		return;
	}
	receive(req, &v->ref);
}

void api_handle_bank_webhook(struct http_req *req)
{
	struct app *app = app_of(req);

	if (!rds_serving(app->rds)) {
		metrics_bank_call("unavailable");
		api_reply_unavailable(req);
		return;
	}
	req->state = mem_new(struct hook);
	banks_view_get(app->rds, app->cache, app->cfg, req->params[0], on_hook_view, req);
}

/* ---- simulate-pix (sandbox) ---- */

static void on_sim_view(void *ud, int result, const struct banks_view *v, const char *err)
{
	struct http_req *req = ud;
	struct api_caller *k = req->auth;

	if (result < 0) {
		hook_free(req);
		api_reply_failure(req, err ? err : "bank connection lookup failed");
		return;
	}
	if (result != 0 || v->ref.env != k->key.env ||
	    (!api_env_scope(req) && strcmp(v->ref.account, k->account) != 0)) {
		hook_free(req);
		http_reply_error(req, 404, "bank connection not found: %.40s", req->params[0]);
		return;
	}
	receive(req, &v->ref);
}

void api_handle_bank_simulate(struct http_req *req)
{
	struct app *app = app_of(req);
	struct api_caller *k = req->auth;
	struct hook *h;

	if (k->key.env != ENV_SANDBOX) {
		http_reply_error(req, 403,
				 "simulate-pix is for sandbox keys only; in production the bank "
				 "reports the Pix");
		return;
	}
	h = mem_new(struct hook);
	h->simulated = 1;
	req->state = h;
	banks_view_get(app->rds, app->cache, app->cfg, req->params[0], on_sim_view, req);
}

/* ---- reconcile now ---- */

static void on_reconcile_scheduled(void *ud, int result, const char *json, const char *err)
{
	struct http_req *req = ud;
	char body[96];
	int n;

	(void)json;
	if (result < 0) {
		api_reply_failure(req, err ? err : "scheduling the reconciliation failed");
		return;
	}
	n = snprintf(body, sizeof(body), "{\"id\":\"%s\",\"reconciliation\":\"scheduled\"}",
		     req->params[0]);
	http_reply_data(req, 202, body, (size_t)n);
}

static void on_reconcile_conn(void *ud, int result, const struct banks_conn *c, const char *err)
{
	struct http_req *req = ud;
	struct app *app = app_of(req);
	struct api_caller *k = req->auth;

	if (result < 0) {
		api_reply_failure(req, err ? err : "bank connection lookup failed");
		return;
	}
	if (result != 0 || c->env != k->key.env ||
	    (!api_env_scope(req) && strcmp(c->account, k->account) != 0)) {
		http_reply_error(req, 404, "bank connection not found: %.40s", req->params[0]);
		return;
	}
	if (!c->api.api_url) {
		http_reply_error(req, 409,
				 "bank connection %s has no API credentials: pixrelay cannot ask "
				 "its bank (pixrelay bank credentials gives them)",
				 c->id);
		return;
	}
	banks_recon_schedule(app->rds, app->cfg, c->env, c->id, on_reconcile_scheduled, req);
}

void api_handle_bank_reconcile(struct http_req *req)
{
	struct app *app = app_of(req);

	banks_get(app->rds, app->cfg, req->params[0], on_reconcile_conn, req);
}

/* ---- the day's report ---- */

static void on_report(void *ud, int result, const char *json, const char *err)
{
	struct http_req *req = ud;

	if (result < 0) {
		api_reply_failure(req, err ? err : "bank report failed");
		return;
	}
	if (result == BANKS_BAD_DATE) {
		http_reply_error(req, 400, "date: must be a day, YYYY-MM-DD (Brasilia time)");
		return;
	}
	if (result == BANKS_NOT_FOUND) {
		http_reply_error(req, 404, "bank connection not found");
		return;
	}
	http_reply_data(req, 200, json, strlen(json));
}

void api_handle_bank_report(struct http_req *req)
{
	static const char *const names[] = {"connection", "date"};
	struct app *app = app_of(req);
	struct api_caller *c = req->auth;
	char *values[2];

	if (api_query_params(req, names, 2, values) < 0)
		return;
	if (!values[0] || !values[0][0]) {
		http_reply_error(req, 400, "connection: is required (a bank connection id)");
	} else {
		banks_report(app->rds, app->cfg, c->key.env, api_env_scope(req) ? "" : c->account,
			     values[0], values[1], on_report, req);
	}
	api_query_free(values, 2);
}

/* ---- connections ---- */

static void on_banks_json(void *ud, int result, const char *json, const char *err)
{
	struct http_req *req = ud;

	if (result < 0) {
		api_reply_failure(req, err ? err : "bank store failed");
		return;
	}
	if (result == BANKS_NOT_FOUND) {
		http_reply_error(req, 404, "bank connection not found: %.40s", req->params[0]);
		return;
	}
	http_reply_data(req, 200, json, strlen(json));
}

/* The account in view: "" for the whole environment (a master key without
 * X-Account-ID). */
static const char *scope(struct http_req *req)
{
	struct api_caller *c = req->auth;

	return api_env_scope(req) ? "" : c->account;
}

void api_handle_banks_list(struct http_req *req)
{
	struct app *app = app_of(req);
	struct api_caller *c = req->auth;

	/* no paging (at most 1,000 and 20 an account): no parameter either */
	if (api_query_params(req, NULL, 0, NULL) < 0)
		return;
	banks_list(app->rds, app->cfg, c->key.env, scope(req), on_banks_json, req);
}

void api_handle_bank_get(struct http_req *req)
{
	struct app *app = app_of(req);
	struct api_caller *c = req->auth;

	banks_show(app->rds, app->cfg, c->key.env, scope(req), req->params[0], on_banks_json, req);
}

/* In production a connection's Pix credit its account: only a master key
 * (or the operator's CLI) makes (`done` "made", `verb` "connect"), changes
 * or disconnects one. 0 when the caller may; -1 after answering 403. */
static int may_change(struct http_req *req, const char *done, const char *verb)
{
	struct api_caller *c = req->auth;

	if (c->key.env != ENV_PRODUCTION || c->key.kind == AUTH_MASTER_KEY)
		return 0;
	http_reply_error(req, 403,
			 "in production a bank connection is %s only with a master key "
			 "(X-Account-ID: the account) or on the server with pixrelay bank %s: its "
			 "Pix credit the account; an account key may read its connections",
			 done, verb);
	return -1;
}

/* A change of `account`'s connections may change where its charges go
 * (docs/banks.md, "The key on the QR"): this process reads the account
 * again at its next charge, without waiting for the announcement that
 * every process gets ("" or NULL: not known here, the announcement only). */
static void forget_account(struct http_req *req, const char *account)
{
	char msg[64];

	if (!account || !*account)
		return;
	ks_invalidation_account_message(msg, sizeof(msg), account);
	cache_forget(app_of(req)->cache, msg);
}

static void on_disconnected(void *ud, int result, const char *json, const char *err)
{
	struct http_req *req = ud;

	if (result == 0) {
		forget_account(req, scope(req));
		banks_view_forget(app_of(req)->cache, req->params[0]);
	}
	on_banks_json(ud, result, json, err);
}

void api_handle_bank_disconnect(struct http_req *req)
{
	struct app *app = app_of(req);
	struct api_caller *c = req->auth;

	if (may_change(req, "disconnected", "disconnect") < 0)
		return;
	banks_disconnect(app->rds, app->cfg, c->key.env, scope(req), req->params[0],
			 on_disconnected, req);
}

void api_handle_bank_notifications(struct http_req *req)
{
	static const char *const names[] = {"limit"};
	struct app *app = app_of(req);
	struct api_caller *c = req->auth;
	char *values[1];
	int limit;

	if (api_query_params(req, names, 1, values) < 0)
		return;
	if (api_query_limit(req, values[0], 100, BANKS_LOG_MAX, &limit) < 0) {
		api_query_free(values, 1);
		return;
	}
	api_query_free(values, 1);
	banks_log(app->rds, app->cfg, c->key.env, scope(req), req->params[0], limit, on_banks_json,
		  req);
}

static void on_connected(void *ud, int result, const char *json, const char *err)
{
	struct http_req *req = ud;
	struct api_caller *c = req->auth;

	switch (result) {
	case 0:
		forget_account(req, c->account);
		http_reply_data(req, 200, json, strlen(json));
		return;
	case BANKS_NO_ACCOUNT:
		http_reply_error(req, 404, "account not found");
		return;
	case BANKS_LIMIT:
		http_reply_error(req, 409, "the account has %d bank connections already",
				 BANKS_PER_ACCOUNT);
		return;
	case BANKS_KEY_TAKEN:
		http_reply_error(req, 409, "pixKey: connected already by %s", json);
		return;
	default:
		api_reply_failure(req, err ? err : "bank connection failed");
	}
}

/* A body's fields, each one of `names` (NULL-terminated): 0, or -1 after
 * answering 400 naming the first other and those allowed. */
static int known_fields(struct http_req *req, yajl_val body, const char *const *names)
{
	for (size_t i = 0; i < body->u.object.len; i++) {
		const char *k = body->u.object.keys[i];
		const char *const *n = names;
		char echo[JSON_ECHO_MAX + 1], allowed[160] = "";

		while (*n && strcmp(*n, k) != 0)
			n++;
		if (*n)
			continue;
		for (n = names; *n; n++)
			snprintf(allowed + strlen(allowed), sizeof(allowed) - strlen(allowed),
				 "%s%s", n == names ? "" : ", ", *n);
		http_reply_error(req, 400, "unknown field '%s'; allowed: %s", json_echo(echo, k),
				 allowed);
		return -1;
	}
	return 0;
}

/* The trust list `ca` (a PEM string): 0, or -1 after answering 400. */
static int read_client_ca(struct http_req *req, yajl_val ca)
{
	char err[256];
	struct certcheck *cc;

	if (!YAJL_IS_STRING(ca)) {
		http_reply_error(req, 400, "clientCa: must be a string");
		return -1;
	}
	cc = certcheck_new(ca->u.string, strlen(ca->u.string), err, sizeof(err));
	if (!cc) {
		http_reply_error(req, 400, "clientCa: %s", err);
		return -1;
	}
	certcheck_free(cc);
	return 0;
}

/* The pins of a body: clientCertSubject (a string, or null: none) into
 * subject in the form kept ("" for none), clientCertPins (an array of pins)
 * into pins. Absent ones leave theirs NULL. 0, or -1 after answering 400
 * naming the field. */
static int read_pins(struct http_req *req, yajl_val body, char **subject, char **pins)
{
	yajl_val dn = json_get(body, "clientCertSubject"), list = json_get(body, "clientCertPins");
	char err[256];

	if (dn && !YAJL_IS_STRING(dn) && !YAJL_IS_NULL(dn)) {
		http_reply_error(req, 400,
				 "clientCertSubject: must be a string (an RFC 4514 name, "
				 "like CN=webhook.bank.example,O=Bank,C=BR) or null");
		return -1;
	}
	if (dn && YAJL_IS_STRING(dn)) {
		*subject = mem_alloc(CERTCHECK_DN_MAX + 1);
		if (certcheck_subject_normal(dn->u.string, *subject, CERTCHECK_DN_MAX + 1, err,
					     sizeof(err)) < 0) {
			http_reply_error(req, 400, "clientCertSubject: %s", err);
			return -1;
		}
	} else if (dn) {
		*subject = mem_strdup("");
	}
	if (list && !YAJL_IS_ARRAY(list)) {
		http_reply_error(req, 400,
				 "clientCertPins: must be an array of pins (\"sha256/<base64>\")");
		return -1;
	}
	if (list) {
		*pins = mem_alloc(CERTCHECK_PINS_TEXT);
		(*pins)[0] = '\0';
		for (size_t i = 0; i < list->u.array.len; i++) {
			yajl_val v = list->u.array.values[i];

			if (!YAJL_IS_STRING(v)) {
				http_reply_error(req, 400, "clientCertPins[%zu]: must be a string",
						 i);
				return -1;
			}
			if (certcheck_pins_add(*pins, v->u.string, err, sizeof(err)) < 0) {
				http_reply_error(req, 400, "clientCertPins[%zu]: %s", i, err);
				return -1;
			}
		}
	}
	return 0;
}

/* "default" of a body into *out (1, 0; untouched when absent): 0, or -1
 * after answering 400. */
static int read_default(struct http_req *req, yajl_val body, int *out)
{
	yajl_val v = json_get(body, "default");

	if (!v)
		return 0;
	if (!YAJL_IS_TRUE(v) && !YAJL_IS_FALSE(v)) {
		http_reply_error(req, 400, "default: must be true or false");
		return -1;
	}
	*out = YAJL_IS_TRUE(v);
	return 0;
}

/* "recebedor" of a body into *out (borrowed from body; conta "" for null,
 * a removal; out untouched and *given 0 when absent): 0, or -1 after
 * answering 400. */
static int read_recebedor(struct http_req *req, yajl_val body, struct banks_recebedor *out,
			  int *given)
{
	static const char *const names[] = {"agencia", "conta", "tipoConta"};
	yajl_val v = json_get(body, "recebedor");
	const char *f[3] = {NULL, NULL, NULL};
	struct banks_recebedor r;
	char err[256];

	if (!v)
		return 0;
	if (YAJL_IS_NULL(v)) {
		*out = (struct banks_recebedor){NULL, "", NULL};
		*given = 1;
		return 0;
	}
	if (!YAJL_IS_OBJECT(v)) {
		http_reply_error(
		    req, 400, "recebedor: must be an object {agencia, conta, tipoConta} or null");
		return -1;
	}
	for (size_t i = 0; i < v->u.object.len; i++) {
		size_t k = 0;

		while (k < 3 && strcmp(v->u.object.keys[i], names[k]) != 0)
			k++;
		if (k == 3) {
			http_reply_error(req, 400, "recebedor.%.40s: unknown field",
					 v->u.object.keys[i]);
			return -1;
		}
		if (!YAJL_IS_STRING(v->u.object.values[i]) &&
		    !(k == 0 && YAJL_IS_NULL(v->u.object.values[i]))) {
			http_reply_error(req, 400, "recebedor.%s: must be a string", names[k]);
			return -1;
		}
		f[k] = YAJL_GET_STRING(v->u.object.values[i]);
	}
	r = (struct banks_recebedor){f[0], f[1] ? f[1] : "", f[2]};
	if (!f[1] || !f[1][0]) {
		http_reply_error(req, 400, "recebedor.conta: is required (1 to %d digits)",
				 BANKS_CONTA_MAX);
		return -1;
	}
	if (banks_check_recebedor(&r, err, sizeof(err)) < 0) {
		http_reply_error(req, 400, "recebedor.%s", err);
		return -1;
	}
	*out = r;
	*given = 1;
	return 0;
}

void api_handle_bank_connect(struct http_req *req)
{
	struct app *app = app_of(req);
	struct api_caller *c = req->auth;
	yajl_val body = NULL, key, auth, ca, prov;
	enum banks_auth mode;
	char err[512], *subject = NULL, *pins = NULL;
	int make_default = 0, rcv_given = 0;
	struct banks_trust trust = {NULL, NULL, NULL};
	struct banks_recebedor rcv;

	if (may_change(req, "made", "connect") < 0)
		return;
	if (json_parse_object(req->body, req->body_len, &body, err, sizeof(err)) < 0) {
		http_reply_error(req, 400, "%s", err);
		return;
	}
	if (known_fields(req, body,
			 (const char *const[]){"pixKey", "auth", "clientCa", "clientCertSubject",
					       "clientCertPins", "default", "recebedor", "provider",
					       NULL}) < 0)
		goto done;
	prov = json_get(body, "provider");
	if (prov && (!YAJL_IS_STRING(prov) || strcmp(prov->u.string, "api-pix") != 0)) {
		/* its API token is a secret kept on the host, as a bank's
		 * credentials are: the CLI makes it */
		http_reply_error(req, 400,
				 "provider: only \"api-pix\" here; a payment provider's connection "
				 "is made with pixrelay bank connect --provider NAME "
				 "--api-token-file FILE on a host with the credentials key "
				 "(docs/providers.md)");
		goto done;
	}
	key = json_get(body, "pixKey");
	auth = json_get(body, "auth");
	ca = json_get(body, "clientCa");
	if (!key || !YAJL_IS_STRING(key)) {
		http_reply_error(req, 400, "pixKey: %s",
				 key ? "must be a string"
				     : "is required (the Pix key at the bank)");
		goto done;
	}
	if (banks_check_pix_key(key->u.string, err, sizeof(err)) < 0) {
		http_reply_error(req, 400, "pixKey: %s", err);
		goto done;
	}
	if (!auth || !YAJL_IS_STRING(auth) ||
	    (strcmp(auth->u.string, "mtls") && strcmp(auth->u.string, "url-token"))) {
		http_reply_error(req, 400, "auth: must be \"mtls\" or \"url-token\"");
		goto done;
	}
	mode = strcmp(auth->u.string, "mtls") == 0 ? BANKS_MTLS : BANKS_URL_TOKEN;
	if (mode == BANKS_MTLS) {
		if (!ca) {
			http_reply_error(req, 400,
					 "clientCa: is required with auth \"mtls\" (the PEM of the "
					 "CA that signs the bank's client certificates)");
			goto done;
		}
		if (read_client_ca(req, ca) < 0 || read_pins(req, body, &subject, &pins) < 0)
			goto done;
		if (!app->cfg->bank_listen[0]) {
			http_reply_error(req, 409,
					 "auth: \"mtls\" needs the bank door, and this "
					 "server has no bank-listen: " BANKS_DOOR_HINT);
			goto done;
		}
		trust = (struct banks_trust){ca->u.string, subject, pins};
	} else {
		static const char *const mtls_only[] = {"clientCa", "clientCertSubject",
							"clientCertPins"};

		for (size_t i = 0; i < 3; i++)
			if (json_get(body, mtls_only[i]) &&
			    !YAJL_IS_NULL(json_get(body, mtls_only[i]))) {
				http_reply_error(req, 400, "%s: only with auth \"mtls\"",
						 mtls_only[i]);
				goto done;
			}
	}
	if (read_default(req, body, &make_default) < 0 ||
	    read_recebedor(req, body, &rcv, &rcv_given) < 0)
		goto done;
	banks_connect(app->rds, app->cfg, c->key.env, c->account, key->u.string, mode,
		      mode == BANKS_MTLS ? &trust : NULL, rcv_given ? &rcv : NULL, make_default,
		      NULL, on_connected, req);
done:
	free(subject);
	free(pins);
	yajl_tree_free(body);
}

static void on_updated(void *ud, int result, const char *json, const char *err)
{
	struct http_req *req = ud;
	yajl_val v = NULL;
	char perr[64];

	switch (result) {
	case 0:
		/* the connection as shown names its account */
		if (json_parse_object(json, strlen(json), &v, perr, sizeof(perr)) == 0)
			forget_account(req, YAJL_GET_STRING(json_get(v, "account")));
		yajl_tree_free(v);
		banks_view_forget(app_of(req)->cache, req->params[0]);
		http_reply_data(req, 200, json, strlen(json));
		return;
	case BANKS_NOT_FOUND:
		http_reply_error(req, 404, "bank connection not found: %.40s", req->params[0]);
		return;
	case BANKS_NOT_MTLS:
		http_reply_error(req, 409,
				 "bank connection %.40s authenticates its bank with a URL token: "
				 "clientCa, clientCertSubject and clientCertPins are for auth "
				 "\"mtls\"",
				 req->params[0]);
		return;
	default:
		api_reply_failure(req, err ? err : "bank connection update failed");
	}
}

void api_handle_bank_update(struct http_req *req)
{
	static const char *const names[] = {"clientCa", "clientCertSubject", "clientCertPins",
					    "default",	"recebedor",	     NULL};
	struct app *app = app_of(req);
	struct api_caller *c = req->auth;
	yajl_val body = NULL, ca;
	char err[512], *subject = NULL, *pins = NULL;
	struct banks_change change = {NULL, NULL, NULL, -1, NULL};
	struct banks_recebedor rcv;
	int rcv_given = 0;

	if (may_change(req, "changed", "update") < 0)
		return;
	if (json_parse_object(req->body, req->body_len, &body, err, sizeof(err)) < 0) {
		http_reply_error(req, 400, "%s", err);
		return;
	}
	if (known_fields(req, body, names) < 0)
		goto done;
	if (body->u.object.len == 0) {
		http_reply_error(req, 400,
				 "nothing to change; fields: clientCa, clientCertSubject, "
				 "clientCertPins, default, recebedor");
		goto done;
	}
	ca = json_get(body, "clientCa");
	if (ca && read_client_ca(req, ca) < 0)
		goto done;
	if (read_pins(req, body, &subject, &pins) < 0 ||
	    read_default(req, body, &change.is_default) < 0 ||
	    read_recebedor(req, body, &rcv, &rcv_given) < 0)
		goto done;
	change.recebedor = rcv_given ? &rcv : NULL;
	change.client_ca = ca ? ca->u.string : NULL;
	change.subject = subject;
	change.pins = pins;
	banks_update(app->rds, app->cfg, c->key.env, scope(req), req->params[0], &change,
		     on_updated, req);
done:
	free(subject);
	free(pins);
	yajl_tree_free(body);
}
