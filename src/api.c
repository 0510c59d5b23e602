#include "pixrelay/api.h"

#include "pixrelay/accounts.h"

#include "pixrelay/charges.h"
#include "pixrelay/events.h"
#include "pixrelay/ingest.h"
#include "pixrelay/qrpng.h"
#include "pixrelay/reqbody.h"
#include "pixrelay/timefmt.h"
#include "pixrelay/validate.h"

#include "pixrelay/ids.h"
#include "pixrelay/json.h"
#include "pixrelay/keys.h"
#include "pixrelay/log.h"
#include "pixrelay/mem.h"

#include <stdint.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>

#define MSG_UNAVAILABLE "service unavailable: storage is unreachable; retry later"

static struct app *app_of(struct http_req *req)
{
	return req->app;
}

static void reply_unavailable(struct http_req *req)
{
	http_add_header(req, "Retry-After", "1");
	http_reply_error(req, 503, MSG_UNAVAILABLE);
}

static void reply_unauthorized(struct http_req *req, const char *msg)
{
	http_add_header(req, "WWW-Authenticate", "Bearer");
	http_reply_error(req, 401, "%s", msg);
}

/* ---- authentication ---- */

static void on_account_checked(void *ud, redisReply *reply, const char *err)
{
	struct http_req *req = ud;
	struct api_caller *caller = req->auth;

	if (err) {
		reply_unavailable(req);
		return;
	}
	if (reply->type != REDIS_REPLY_INTEGER || reply->integer != 1) {
		http_reply_error(req, 404, "account not found: X-Account-ID %s", caller->account);
		return;
	}
	http_next(req);
}

static void on_key(void *ud, int status, const struct auth_key *key, const char *err)
{
	struct http_req *req = ud;
	struct app *app = app_of(req);
	struct api_caller *caller;
	const char *acting = http_header(req, "X-Account-ID");
	char rkey[256];
	const char *argv[2];

	if (err) {
		log_warn("authentication failed for request %s: %s", req->request_id, err);
		reply_unavailable(req);
		return;
	}
	if (status == AUTH_REVOKED) {
		reply_unauthorized(req, "API key revoked");
		return;
	}
	if (status != AUTH_OK) {
		reply_unauthorized(req, "invalid API key");
		return;
	}
	caller = mem_new(struct api_caller);
	caller->key = *key;
	snprintf(caller->account, sizeof(caller->account), "%s", key->account);
	req->auth = caller;
	if (key->kind != AUTH_MASTER_KEY) {
		/* an account key acts for its own account only */
		if (acting && strcmp(acting, key->account) != 0) {
			http_reply_error(req, 403,
					 "X-Account-ID names another account; only master keys may "
					 "act on behalf of other accounts");
			return;
		}
		http_next(req);
		return;
	}
	if (!acting || !*acting) {
		if (req->route->flags & HTTP_ACTS_AS) {
			http_reply_error(
			    req, 400,
			    "X-Account-ID header is required with a master key on this "
			    "operation");
			return;
		}
		http_next(req);
		return;
	}
	if (!ids_is_ulid(acting)) {
		http_reply_error(req, 400,
				 "X-Account-ID must be an account id (a 26-character ULID)");
		return;
	}
	snprintf(caller->account, sizeof(caller->account), "%s", acting);
	keys_redis_account(rkey, sizeof(rkey), app->cfg->prefix, key->env, acting);
	argv[0] = "EXISTS";
	argv[1] = rkey;
	rds_cmd_argv(app->rds, on_account_checked, req, 2, argv, NULL);
}

void api_authenticate(struct http_req *req)
{
	struct app *app = app_of(req);
	const char *token = NULL;
	size_t len = 0;
	enum auth_env env;

	switch (auth_bearer(http_header(req, "Authorization"), &token, &len)) {
	case AUTH_MISSING:
		reply_unauthorized(
		    req, "missing API key: send the header Authorization: Bearer <API key>");
		return;
	case AUTH_MALFORMED:
		reply_unauthorized(req,
				   "malformed Authorization header: expected Bearer <API key>");
		return;
	default:
		break;
	}
	if (auth_token_env(token, len, &env) < 0) {
		reply_unauthorized(req, "invalid API key");
		return;
	}
	if (!rds_ready(app->rds)) {
		reply_unavailable(req);
		return;
	}
	auth_lookup(app->rds, app->cfg->prefix, token, len, on_key, req);
}

/* ---- operational endpoints ---- */

static void handle_healthz(struct http_req *req)
{
	static const char body[] = "{\"status\":\"ok\"}";

	http_reply_raw(req, 200, body, sizeof(body) - 1);
}

static void handle_readyz(struct http_req *req)
{
	struct app *app = app_of(req);
	int redis_ok = rds_ready(app->rds);
	int ready = redis_ok && !app->draining;
	yajl_gen g = json_gen_new();
	size_t len;
	const char *s;

	json_open(g);
	json_str(g, "ready");
	json_bool(g, ready);
	json_str(g, "redis");
	json_str(g, redis_ok ? "ok" : rds_last_error(app->rds));
	json_str(g, "draining");
	json_bool(g, app->draining);
	json_str(g, "connections");
	json_int(g, http_connections(app->http));
	json_str(g, "inflight");
	json_int(g, http_inflight(app->http));
	json_close(g);
	s = json_buf(g, &len);
	http_reply_raw(req, ready ? 200 : 503, s, len);
	yajl_gen_free(g);
}

/* ---- /v1 ---- */

/* GET /v1/me: who the key is, and on whose behalf it acts. */
static void handle_me(struct http_req *req)
{
	struct api_caller *c = req->auth;
	yajl_gen g = json_gen_new();

	json_open(g);
	json_str(g, "key");
	json_open(g);
	json_str(g, "id");
	json_str(g, c->key.id);
	json_str(g, "kind");
	json_str(g, auth_kind_name(c->key.kind));
	json_str(g, "environment");
	json_str(g, auth_env_name(c->key.env));
	json_str(g, "account");
	json_str(g, c->key.account);
	json_close(g);
	json_str(g, "account");
	json_str(g, c->account);
	json_str(g, "environment");
	json_str(g, auth_env_name(c->key.env));
	json_close(g);
	http_reply_gen(req, 200, g);
	yajl_gen_free(g);
}

/* ---- charges ---- */

/* Storage trouble (the connection, or Redis refusing for now) is a 503 the
 * client may retry; anything else is a 500. */
static void reply_failure(struct http_req *req, const char *err)
{
	/* not "ERR": a script's own error is a bug, not a reason to retry */
	static const char *const storage[] = {"redis",	  "OOM",     "LOADING",
					      "READONLY", "BUSY",    "MASTERDOWN",
					      "NOSCRIPT", "MISCONF", "TRYAGAIN"};

	for (size_t i = 0; i < sizeof(storage) / sizeof(storage[0]); i++) {
		if (strncmp(err, storage[i], strlen(storage[i])) == 0) {
			log_warn("request %s failed: %s", req->request_id, err);
			reply_unavailable(req);
			return;
		}
	}
	log_error("request %s failed: %s", req->request_id, err);
	/* a configuration problem is said as it is; other details stay in the log */
	if (strncmp(err, "cannot build", 12) == 0)
		http_reply_error(req, 500, "%s", err);
	else
		http_reply_error(req, 500,
				 "internal error; the log has the details under request id %s",
				 req->request_id);
}

static void on_charge_created(void *ud, int result, const char *json, const char *err)
{
	struct http_req *req = ud;

	if (result < 0) {
		reply_failure(req, err);
	} else if (result == CHARGES_CONFLICT) {
		http_reply_error(
		    req, 400,
		    "externalID: already used by charge %s with different data; send the "
		    "same request to get that charge again, or use a new externalID",
		    json);
	} else {
		http_reply_data(req, 200, json, strlen(json));
	}
}

/* POST /v1/charge/pix/create */
static void handle_charge_create(struct http_req *req)
{
	struct app *app = app_of(req);
	struct api_caller *c = req->auth;
	struct charge_limits lim = {app->cfg->default_expiration, app->cfg->max_expiration};
	struct charge_input in;
	yajl_val body = NULL;
	char err[512];

	if (json_parse_object(req->body, req->body_len, &body, err, sizeof(err)) < 0) {
		http_reply_error(req, 400, "%s", err);
		return;
	}
	if (charge_parse_create(body, &lim, &in, err, sizeof(err)) < 0) {
		yajl_tree_free(body);
		http_reply_error(req, 400, "%s", err);
		return;
	}
	yajl_tree_free(body);
	charges_create(app->rds, app->cfg, c->key.env, c->account, &in, on_charge_created, req);
	charge_input_deinit(&in);
}

/* The answer to a read of one thing named by the path's first parameter:
 * the data, 404 when `result` is the module's not-found code, or the failure. */
static void reply_read(struct http_req *req, int result, int not_found, const char *what,
		       const char *json, const char *err)
{
	if (result < 0)
		reply_failure(req, err);
	else if (result == not_found)
		http_reply_error(req, 404, "%s not found: %s", what, req->params[0]);
	else
		http_reply_data(req, 200, json, strlen(json));
}

static void on_charge_read(void *ud, int result, const char *json, const char *err)
{
	reply_read(ud, result, CHARGES_NOT_FOUND, "charge", json, err);
}

/* GET /v1/charge/pix/{id} */
static void handle_charge_get(struct http_req *req)
{
	struct app *app = app_of(req);
	struct api_caller *c = req->auth;

	if (!charges_valid_id(req->params[0])) {
		http_reply_error(req, 404, "charge not found: %.40s", req->params[0]);
		return;
	}
	charges_get(app->rds, app->cfg, c->key.env, c->account, req->params[0], on_charge_read,
		    req);
}

#define QR_DEFAULT_SCALE 8

static void on_qr_brcode(void *ud, int result, const char *brcode, const char *err)
{
	struct http_req *req = ud;
	unsigned char *png = NULL;
	size_t len = 0;
	long scale = (long)(intptr_t)req->state;

	req->state = NULL;
	if (result < 0) {
		reply_failure(req, err);
		return;
	}
	if (result == CHARGES_NOT_FOUND) {
		http_reply_error(req, 404, "QR code not found: %s", req->params[0]);
		return;
	}
	if (qrpng_render(brcode, (int)scale, &png, &len) < 0) {
		http_reply_error(req, 500, "cannot render the QR code");
		return;
	}
	/* a charge's BR Code never changes: the image may be cached for good */
	http_reply_bytes(req, 200, "image/png", "public, max-age=31536000, immutable", png, len);
	free(png);
}

/* GET /v1/qrcode/{id}[?size=N]: the PNG of a charge's BR Code, without a key
 * (shops put this address in an <img>); the id is the secret. */
static void handle_qrcode(struct http_req *req)
{
	struct app *app = app_of(req);
	char *size = http_query(req, "size");
	long scale = QR_DEFAULT_SCALE;
	const char *id = req->params[0];
	size_t n = strlen(id);

	if (size) {
		char *end = NULL;
		scale = strtol(size, &end, 10);
		if (end == size || *end || scale < QRPNG_MIN_SCALE || scale > QRPNG_MAX_SCALE) {
			free(size);
			http_reply_error(
			    req, 400, "size: must be an integer from %d to %d (pixels per module)",
			    QRPNG_MIN_SCALE, QRPNG_MAX_SCALE);
			return;
		}
		free(size);
	}
	/* accept an optional .png suffix, as image URLs often carry one */
	if (n > 4 && strcmp(id + n - 4, ".png") == 0)
		((char *)id)[n - 4] = '\0';
	if (!charges_valid_id(id)) {
		http_reply_error(req, 404, "QR code not found: %.40s", id);
		return;
	}
	if (!rds_ready(app->rds)) {
		reply_unavailable(req);
		return;
	}
	req->state = (void *)(intptr_t)scale;
	charges_find_brcode(app->rds, app->cfg, id, on_qr_brcode, req);
}

/* ---- charge lifecycle ---- */

static void on_transitioned(void *ud, int result, const char *json, const char *err)
{
	struct http_req *req = ud;
	struct app *app = app_of(req);
	const char *verb = req->state ? (const char *)req->state : "changed";

	req->state = NULL;
	switch (result) {
	case 0:
		dispatch_kick(app->dispatch);
		http_reply_data(req, 200, json, strlen(json));
		return;
	case CHARGES_NOT_FOUND:
		http_reply_error(req, 404, "charge not found: %s", req->params[0]);
		return;
	case CHARGES_REFUSED:
		http_reply_error(req, 400, "charge is %s; only a %s charge can be %s", json,
				 strcmp(verb, "refunded") == 0 ? "PAID" : "PENDING", verb);
		return;
	case CHARGES_EXPIRED:
		dispatch_kick(app->dispatch);
		http_reply_error(req, 400, "charge expired before the payment; it is EXPIRED now");
		return;
	case CHARGES_AMOUNT_MISMATCH:
		http_reply_error(
		    req, 400,
		    "amount: partial refunds are not supported; omit amount or send the "
		    "charge's amount (%s)",
		    json);
		return;
	case CHARGES_INSUFFICIENT:
		http_reply_error(req, 400, "insufficient balance for the refund (balance %s cents)",
				 json);
		return;
	default:
		reply_failure(req, err ? err : "charge transition failed");
	}
}

/* POST /v1/charge/pix/{id}/simulate-payment and .../simulate-failure:
 * sandbox only, they stand for what the payment provider reports in
 * production. */
static void simulate(struct http_req *req, enum charges_action action, const char *refusal,
		     const char *verb)
{
	struct app *app = app_of(req);
	struct api_caller *c = req->auth;

	if (c->key.env != AUTH_SANDBOX) {
		http_reply_error(req, 403, "%s", refusal);
		return;
	}
	if (!charges_valid_id(req->params[0])) {
		http_reply_error(req, 404, "charge not found: %.40s", req->params[0]);
		return;
	}
	req->state = (void *)verb;
	charges_transition(app->rds, app->cfg, c->key.env, c->account, req->params[0], action, NULL,
			   NULL, NULL, on_transitioned, req);
}

static void handle_simulate_payment(struct http_req *req)
{
	simulate(req, CHARGES_PAY,
		 "simulate-payment works with sandbox keys only; production charges are paid by "
		 "the payment provider's notification",
		 "paid");
}

static void handle_simulate_failure(struct http_req *req)
{
	simulate(req, CHARGES_FAIL,
		 "simulate-failure works with sandbox keys only; in production only the payment "
		 "provider's notification changes a charge",
		 "failed");
}

/* POST /v1/charge/{id}/refund: a full refund of a paid charge. The body is
 * optional: {"amount": <the charge's amount>, "reason": "..."}. */
static void handle_refund(struct http_req *req)
{
	struct app *app = app_of(req);
	struct api_caller *c = req->auth;
	yajl_val body = NULL;
	char err[512], amount[32] = "";
	int64_t n = 0;

	if (req->body_len > 0 &&
	    json_parse_object(req->body, req->body_len, &body, err, sizeof(err)) < 0) {
		http_reply_error(req, 400, "%s", err);
		return;
	}
	if (reqbody_refund(body, &n, err, sizeof(err)) < 0) {
		yajl_tree_free(body);
		http_reply_error(req, 400, "%s", err);
		return;
	}
	yajl_tree_free(body);
	if (n > 0)
		snprintf(amount, sizeof(amount), "%lld", (long long)n);
	if (!charges_valid_id(req->params[0])) {
		http_reply_error(req, 404, "charge not found: %.40s", req->params[0]);
		return;
	}
	req->state = (void *)"refunded";
	charges_transition(app->rds, app->cfg, c->key.env, c->account, req->params[0],
			   CHARGES_REFUND, NULL, amount[0] ? amount : NULL, NULL, on_transitioned,
			   req);
}

/* ---- events ---- */

static void on_event_read(void *ud, int result, const char *json, const char *err)
{
	reply_read(ud, result, EVENTS_NOT_FOUND, "event", json, err);
}

/* Nonzero when the path names an event id of one of our shards; else 404. */
static int event_id_ok(struct http_req *req)
{
	int shard = events_id_shard(req->params[0]);

	if (shard < 0 || shard >= app_of(req)->cfg->queue_shards) {
		http_reply_error(req, 404, "event not found: %.40s", req->params[0]);
		return 0;
	}
	return 1;
}

/* GET /v1/events/{id} */
static void handle_event_get(struct http_req *req)
{
	struct app *app = app_of(req);
	struct api_caller *c = req->auth;

	if (!event_id_ok(req))
		return;
	events_get(app->rds, app->cfg, c->key.env, c->account, req->params[0], on_event_read, req);
}

static void on_event_replayed(void *ud, int result, const char *json, const char *err)
{
	struct http_req *req = ud;
	struct app *app = app_of(req);

	if (result < 0) {
		reply_failure(req, err);
	} else if (result == EVENTS_NOT_FOUND) {
		http_reply_error(req, 404, "event not found: %s", req->params[0]);
	} else {
		yajl_gen g = json_gen_new();
		json_open(g);
		json_str(g, "id");
		json_str(g, req->params[0]);
		json_str(g, "requeued");
		json_bool(g, result == 0);
		json_close(g);
		dispatch_kick(app->dispatch);
		http_reply_gen(req, 200, g);
		yajl_gen_free(g);
	}
}

/* POST /v1/events/{id}/replay: deliver again, same id, fresh attempt budget. */
static void handle_event_replay(struct http_req *req)
{
	struct app *app = app_of(req);
	struct api_caller *c = req->auth;

	if (!event_id_ok(req))
		return;
	events_replay(app->rds, app->cfg, c->key.env, c->account, req->params[0], on_event_replayed,
		      req);
}

/* ---- ingest from an upstream provider ---- */

struct ingest_ctx {
	enum auth_env env;
	char account[32];
	char event[EVENTS_ID_MAX];
	struct ingest_note note;
};

static void ingest_done(struct http_req *req, int status, const char *event_id, int duplicate,
			const char *ignored, const char *charge_status)
{
	struct ingest_ctx *x = req->state;
	yajl_gen g = json_gen_new();

	/* event_id and charge_status may point into x: shape the reply first */
	json_open(g);
	json_str(g, "received");
	json_bool(g, 1);
	json_str(g, "duplicate");
	json_bool(g, duplicate);
	json_str(g, "event");
	json_str_or_null(g, event_id);
	json_str(g, "chargeStatus");
	json_str_or_null(g, charge_status);
	json_str(g, "ignored");
	json_str_or_null(g, ignored);
	json_close(g);
	ingest_note_deinit(&x->note);
	free(x);
	req->state = NULL;
	http_reply_gen(req, status, g);
	yajl_gen_free(g);
}

static void ingest_fail(struct http_req *req, const char *err)
{
	struct ingest_ctx *x = req->state;

	ingest_note_deinit(&x->note);
	free(x);
	req->state = NULL;
	reply_failure(req, err);
}

static void on_ingest_relayed(void *ud, int result, const char *evt, const char *err)
{
	struct http_req *req = ud;

	if (result < 0) {
		ingest_fail(req, err);
		return;
	}
	dispatch_kick(app_of(req)->dispatch);
	ingest_done(req, 200, evt, result == CHARGES_DUPLICATE, NULL, NULL);
}

static const char *json_status_of(const char *charge_json, char *out, size_t size)
{
	const char *p = charge_json ? strstr(charge_json, "\"status\":\"") : NULL;

	if (!p)
		return NULL;
	p += 10;
	snprintf(out, size, "%.*s", (int)strcspn(p, "\""), p);
	return out;
}

static void on_ingest_transition(void *ud, int result, const char *json, const char *err)
{
	struct http_req *req = ud;
	struct app *app = app_of(req);
	struct ingest_ctx *x = req->state;
	char status[16], why[96];

	switch (result) {
	case 0:
		dispatch_kick(app->dispatch);
		ingest_done(req, 200, x->event[0] ? x->event : NULL, 0, NULL,
			    json_status_of(json, status, sizeof(status)));
		return;
	case CHARGES_DUPLICATE:
		ingest_done(req, 200, json, 1, NULL, NULL);
		return;
	case CHARGES_NOT_FOUND:
		ingest_relay(app->rds, app->cfg, x->env, x->account, &x->note, on_ingest_relayed,
			     req);
		return;
	case CHARGES_REFUSED:
		snprintf(why, sizeof(why), "the charge is %s", json);
		log_warn("ingest %s: %s ignored: %s", req->request_id, x->note.event, why);
		ingest_done(req, 200, NULL, 0, why, json);
		return;
	case CHARGES_EXPIRED:
		dispatch_kick(app->dispatch);
		ingest_done(req, 200, NULL, 0, "the charge had expired; it is EXPIRED now",
			    "EXPIRED");
		return;
	case CHARGES_INSUFFICIENT:
		log_error("ingest %s: refund of a charge larger than the balance (%s)",
			  req->request_id, json);
		ingest_done(req, 200, NULL, 0, "insufficient balance for the refund", "PAID");
		return;
	default:
		ingest_fail(req, err ? err : "ingest failed");
	}
}

static void ingest_with_secret(struct http_req *req, const char *secret)
{
	struct app *app = app_of(req);
	struct ingest_ctx *x = req->state;
	char err[256];

	if (ingest_verify(
		secret, http_header(req, "webhook-id"), http_header(req, "webhook-timestamp"),
		http_header(req, "webhook-signature"), http_header(req, "signature"), req->body,
		req->body_len, (long long)(ids_now_ms() / 1000), err, sizeof(err)) < 0) {
		free(x);
		req->state = NULL;
		http_reply_error(req, 401, "%s", err);
		return;
	}
	if (ingest_parse(req->body, req->body_len, &x->note, err, sizeof(err)) < 0) {
		free(x);
		req->state = NULL;
		http_reply_error(req, 400, "%s", err);
		return;
	}
	if (!charges_valid_id(x->note.charge_id)) {
		ingest_relay(app->rds, app->cfg, x->env, x->account, &x->note, on_ingest_relayed,
			     req);
		return;
	}
	charges_transition(app->rds, app->cfg, x->env, x->account, x->note.charge_id,
			   ingest_action(x->note.event), x->note.id, NULL, x->event,
			   on_ingest_transition, req);
}

static void ingest_lookup(struct http_req *req);

static void on_ingest_account(void *ud, redisReply *reply, const char *err)
{
	struct http_req *req = ud;
	struct ingest_ctx *x = req->state;

	if (err) {
		free(x);
		req->state = NULL;
		reply_unavailable(req);
		return;
	}
	if (reply->type == REDIS_REPLY_STRING) {
		ingest_with_secret(req, reply->str);
		return;
	}
	if (x->env == AUTH_SANDBOX) {
		x->env = AUTH_PRODUCTION;
		ingest_lookup(req);
		return;
	}
	free(x);
	req->state = NULL;
	http_reply_error(req, 404, "account not found: %s", req->params[0]);
}

static void ingest_lookup(struct http_req *req)
{
	struct app *app = app_of(req);
	struct ingest_ctx *x = req->state;
	char k[256];
	const char *argv[] = {"HGET", k, "ingest_secret"};

	keys_redis_account(k, sizeof(k), app->cfg->prefix, x->env, x->account);
	rds_cmd_argv(app->rds, on_ingest_account, req, 3, argv, NULL);
}

/* POST /v1/webhooks/ingest/{accountId}: no API key; the account's ingest
 * secret authenticates the provider. */
static void handle_ingest(struct http_req *req)
{
	struct app *app = app_of(req);
	struct ingest_ctx *x;

	if (!ids_is_ulid(req->params[0])) {
		http_reply_error(req, 404, "account not found: %.40s", req->params[0]);
		return;
	}
	if (!rds_ready(app->rds)) {
		reply_unavailable(req);
		return;
	}
	x = mem_new(struct ingest_ctx);
	x->env = AUTH_SANDBOX;
	snprintf(x->account, sizeof(x->account), "%s", req->params[0]);
	req->state = x;
	ingest_lookup(req);
}

/* ---- event lists ---- */

struct list_query {
	char *values[6];
};

static void on_events_listed(void *ud, int result, const char *json, const char *err)
{
	struct http_req *req = ud;
	struct list_query *q = req->state;

	for (int i = 0; i < 6; i++)
		free(q->values[i]);
	free(q);
	req->state = NULL;
	if (result < 0)
		reply_failure(req, err);
	else
		http_reply_data(req, 200, json, strlen(json));
}

/* GET /v1/events?state=&type=&since=&until=&limit=&cursor= */
static void handle_events_list(struct http_req *req)
{
	static const char *const names[] = {"state", "type", "since", "until", "limit", "cursor"};
	struct app *app = app_of(req);
	struct api_caller *c = req->auth;
	struct list_query *q = mem_new(struct list_query);
	struct events_filter f;

	memset(&f, 0, sizeof(f));
	f.limit = 20;
	req->state = q;
	for (int i = 0; i < 6; i++) {
		char err[256];

		q->values[i] = http_query(req, names[i]);
		if (reqbody_filter_field(names[i], q->values[i], &f, 100, err, sizeof(err)) < 0) {
			http_reply_error(req, 400, "%s", err);
			for (int j = 0; j <= i; j++)
				free(q->values[j]);
			free(q);
			return;
		}
	}
	events_list(app->rds, app->cfg, c->key.env, c->account, &f, 0, on_events_listed, req);
}

static void on_bulk_replayed(void *ud, int result, const char *json, const char *err)
{
	struct http_req *req = ud;
	yajl_val body = req->state;

	yajl_tree_free(body);
	req->state = NULL;
	if (result < 0) {
		reply_failure(req, err);
		return;
	}
	dispatch_kick(app_of(req)->dispatch);
	http_reply_data(req, 200, json, strlen(json));
}

/* POST /v1/events/replay {"state": "dead", "type", "since", "until", "limit"}:
 * deliver again every event that matches (state defaults to dead). */
static void handle_events_replay(struct http_req *req)
{
	struct app *app = app_of(req);
	struct api_caller *c = req->auth;
	struct events_filter f;
	yajl_val body = NULL;
	char err[512];

	memset(&f, 0, sizeof(f));
	f.limit = 100;
	f.state = "dead";
	if (req->body_len &&
	    json_parse_object(req->body, req->body_len, &body, err, sizeof(err)) < 0) {
		http_reply_error(req, 400, "%s", err);
		return;
	}
	if (reqbody_replay(body, &f, err, sizeof(err)) < 0) {
		http_reply_error(req, 400, "%s", err);
		yajl_tree_free(body);
		return;
	}
	req->state = body;
	events_replay_many(app->rds, app->cfg, c->key.env, c->account, &f, on_bulk_replayed, req);
}

/* ---- banking as a service ---- */

static void on_account_created(void *ud, int result, const char *json, const char *err)
{
	struct http_req *req = ud;

	if (result < 0)
		reply_failure(req, err);
	else if (result == ACCOUNTS_DUPLICATE)
		http_reply_error(
		    req, 400, "taxID: already registered in this environment (account %s)", json);
	else
		http_reply_data(req, 200, json, strlen(json));
}

/* POST /v1/baas/account/create */
static void handle_account_create(struct http_req *req)
{
	struct app *app = app_of(req);
	struct api_caller *c = req->auth;
	struct account_limits lim = {(size_t)app->cfg->max_file};
	struct account_input in;
	yajl_val body = NULL;
	char err[512];
	time_t now = time(NULL);
	struct tm tm;

	if (json_parse_object(req->body, req->body_len, &body, err, sizeof(err)) < 0) {
		http_reply_error(req, 400, "%s", err);
		return;
	}
	gmtime_r(&now, &tm);
	if (account_parse_create(
		body, &lim, account_days_from_civil(tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday),
		&in, err, sizeof(err)) < 0) {
		yajl_tree_free(body);
		http_reply_error(req, 400, "%s", err);
		return;
	}
	yajl_tree_free(body);
	accounts_create(app->rds, app->cfg, c->key.env, c->account, &in, on_account_created, req);
	account_input_deinit(&in);
}

static void on_transfer(void *ud, int result, const char *json, const char *err)
{
	struct http_req *req = ud;
	char *amount = req->state;
	char *body;

	req->state = NULL;
	switch (result) {
	case 0:
	case ACCOUNTS_REPLAYED:
		if (result == 0)
			dispatch_kick(app_of(req)->dispatch);
		/* spec 4.3: exactly two fields, no envelope */
		body = mem_printf("{\"amount\":%s,\"status\":\"DONE\"}", amount);
		http_reply_raw(req, 200, body, strlen(body));
		free(body);
		break;
	case ACCOUNTS_NOT_FOUND:
		http_reply_error(req, 404, "%s: no account has this Pix key", json);
		break;
	case ACCOUNTS_FORBIDDEN:
		http_reply_error(
		    req, 403,
		    "the accounts of from_key and to_key must both belong to the caller's "
		    "group (the caller's account, or an account sharing a member with it)");
		break;
	case ACCOUNTS_SAME:
		http_reply_error(req, 400, "from_key and to_key belong to the same account");
		break;
	case ACCOUNTS_INSUFFICIENT:
		http_reply_error(req, 400, "insufficient balance: the source account has %s cents",
				 json);
		break;
	case ACCOUNTS_IDEM_CONFLICT:
		http_reply_error(req, 400,
				 "Idempotency-Key: already used with a different request");
		break;
	default:
		reply_failure(req, err ? err : "transfer failed");
	}
	free(amount);
}

/* POST /v1/baas/internal-transfer {"amount", "from_key", "to_key"} */
static void handle_transfer(struct http_req *req)
{
	struct app *app = app_of(req);
	struct api_caller *c = req->auth;
	const char *idem = http_header(req, "Idempotency-Key");
	const char *from, *to;
	struct reqbody_transfer t;
	yajl_val body = NULL;
	char err[512], fp[65];
	int64_t amount = 0;

	if (json_parse_object(req->body, req->body_len, &body, err, sizeof(err)) < 0) {
		http_reply_error(req, 400, "%s", err);
		return;
	}
	if (reqbody_transfer(body, &t, err, sizeof(err)) < 0) {
		http_reply_error(req, 400, "%s", err);
		goto done;
	}
	amount = t.amount;
	from = t.from_key;
	to = t.to_key;
	if (idem && (!*idem || strlen(idem) > 255)) {
		http_reply_error(req, 400, "Idempotency-Key: must be 1 to 255 characters");
		goto done;
	}
	{
		char *canon = mem_printf("%lld\n%s\n%s", (long long)amount, from, to);
		ids_sha256_hex(fp, canon, strlen(canon));
		free(canon);
	}
	req->state = mem_printf("%lld", (long long)amount);
	accounts_transfer(app->rds, app->cfg, c->key.env, c->account, from, to, amount, idem, fp,
			  on_transfer, req);
done:
	yajl_tree_free(body);
}

static void on_balance(void *ud, int result, const char *json, const char *err)
{
	struct http_req *req = ud;

	if (result < 0)
		reply_failure(req, err);
	else
		http_reply_data(req, 200, json, strlen(json));
}

/* GET /v1/baas/balance: the acting account's balance and latest ledger entries. */
static void handle_balance(struct http_req *req)
{
	struct app *app = app_of(req);
	struct api_caller *c = req->auth;

	accounts_balance(app->rds, app->cfg, c->key.env, c->account, 50, on_balance, req);
}

const struct http_route api_routes[] = {
    {EVHTTP_REQ_GET, "/healthz", handle_healthz, 0},
    {EVHTTP_REQ_GET, "/readyz", handle_readyz, 0},
    {EVHTTP_REQ_GET, "/v1/me", handle_me, HTTP_AUTH | HTTP_ENVELOPE},
    {EVHTTP_REQ_POST, "/v1/charge/pix/create", handle_charge_create,
     HTTP_AUTH | HTTP_JSON_BODY | HTTP_ENVELOPE},
    {EVHTTP_REQ_GET, "/v1/charge/pix/{id}", handle_charge_get, HTTP_AUTH | HTTP_ENVELOPE},
    {EVHTTP_REQ_GET, "/v1/qrcode/{id}", handle_qrcode, HTTP_ENVELOPE},
    {EVHTTP_REQ_POST, "/v1/charge/pix/{id}/simulate-payment", handle_simulate_payment,
     HTTP_AUTH | HTTP_ENVELOPE},
    {EVHTTP_REQ_POST, "/v1/charge/pix/{id}/simulate-failure", handle_simulate_failure,
     HTTP_AUTH | HTTP_ENVELOPE},
    {EVHTTP_REQ_POST, "/v1/charge/{id}/refund", handle_refund, HTTP_AUTH | HTTP_ENVELOPE},
    {EVHTTP_REQ_GET, "/v1/events", handle_events_list, HTTP_AUTH | HTTP_ENVELOPE},
    {EVHTTP_REQ_POST, "/v1/events/replay", handle_events_replay, HTTP_AUTH | HTTP_ENVELOPE},
    {EVHTTP_REQ_GET, "/v1/events/{id}", handle_event_get, HTTP_AUTH | HTTP_ENVELOPE},
    {EVHTTP_REQ_POST, "/v1/events/{id}/replay", handle_event_replay, HTTP_AUTH | HTTP_ENVELOPE},
    {EVHTTP_REQ_POST, "/v1/webhooks/ingest/{id}", handle_ingest, HTTP_JSON_BODY | HTTP_ENVELOPE},
    {EVHTTP_REQ_POST, "/v1/baas/account/create", handle_account_create,
     HTTP_AUTH | HTTP_ACTS_AS | HTTP_JSON_BODY | HTTP_ENVELOPE | HTTP_UPLOAD},
    {EVHTTP_REQ_POST, "/v1/baas/internal-transfer", handle_transfer,
     HTTP_AUTH | HTTP_ACTS_AS | HTTP_JSON_BODY | HTTP_ENVELOPE},
    {EVHTTP_REQ_GET, "/v1/baas/balance", handle_balance, HTTP_AUTH | HTTP_ENVELOPE},
};

const size_t api_nroutes = sizeof(api_routes) / sizeof(api_routes[0]);
