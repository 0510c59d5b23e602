#include "pixrelay/api/api.h"

#include "pixrelay/store/accounts.h"
#include "pixrelay/store/transfers.h"
#include "pixrelay/redis/cache.h"

#include "pixrelay/store/charges.h"
#include "pixrelay/api/dashboard.h"
#include "pixrelay/store/events.h"
#include "pixrelay/api/evstream.h"
#include "pixrelay/store/ingest.h"
#include "pixrelay/pix/qrpng.h"
#include "pixrelay/pix/reqbody.h"
#include "pixrelay/core/timefmt.h"
#include "pixrelay/core/validate.h"

#include "pixrelay/core/ids.h"
#include "pixrelay/core/json.h"
#include "pixrelay/store/keys.h"
#include "pixrelay/pix/keyspace.h"
#include "pixrelay/core/log.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/core/metrics.h"
#include "pixrelay/http/httpparse.h"
#include "pixrelay/pix/page.h"

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

static void on_account_checked(void *ud, int result, const struct accounts_info *info,
			       const char *err)
{
	struct http_req *req = ud;
	struct api_caller *caller = req->auth;

	if (result < 0) {
		reply_unavailable(req);
		return;
	}
	if (result != 0 || info->env != caller->key.env) {
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
	accounts_lookup(app->rds, app->cache, app->cfg, acting, on_account_checked, req);
}

void api_authenticate(struct http_req *req)
{
	struct app *app = app_of(req);
	const char *token = NULL;
	size_t len = 0;
	enum env env;

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
	auth_lookup(app->rds, app->cache, app->cfg->prefix, token, len, on_key, req);
}

/* ---- operational endpoints ---- */

static void handle_healthz(struct http_req *req)
{
	static const char body[] = "{\"status\":\"ok\"}";

	http_reply_raw(req, 200, body, sizeof(body) - 1);
}

/* docs/openapi.yaml, built in by tools/embed_file.py (meson.build) */
extern const char api_openapi_yaml[];
extern const size_t api_openapi_yaml_len;

/* GET /v1/openapi.yaml: the description of this API, as built into the
 * binary, so that it always matches the server answering. */
static void handle_openapi(struct http_req *req)
{
	http_reply_bytes(req, 200, "application/yaml", "no-cache", api_openapi_yaml,
			 api_openapi_yaml_len);
}

/* ---- metrics ---- */

/* The figures of /metrics that come from Redis: one shard_stats call per
 * shard, answered together. */
struct scrape {
	struct http_req *req;
	int left, failed;
	int nshards;
	struct events_stats *stats;
};

#define GAUGE(g, n, h, l, v)                                                                       \
	do {                                                                                       \
		(g)->name = (n);                                                                   \
		(g)->help = (h);                                                                   \
		(g)->labels = (l);                                                                 \
		(g)->value = (v);                                                                  \
		(g)++;                                                                             \
	} while (0)

static void scrape_done(struct scrape *sc)
{
	struct app *app = app_of(sc->req);
	struct dispatch_stats ds;
	unsigned long long hits, misses;
	size_t n = 12 + (size_t)sc->nshards * 5, len;
	struct metrics_gauge *gauges = mem_calloc(n, sizeof(*gauges)), *g = gauges;
	char(*labels)[48] = mem_calloc((size_t)sc->nshards * 4 + 1, sizeof(*labels));
	uint64_t now = ids_now_ms();
	char *text;

	dispatch_stats(app->dispatch, &ds);
	cache_counts(app->cache, &hits, &misses);
	GAUGE(g, "pixrelay_http_connections", "Client connections open.", "",
	      http_connections(app->http));
	GAUGE(g, "pixrelay_http_requests_in_flight", "Requests read and not yet answered.", "",
	      http_inflight(app->http));
	GAUGE(g, "pixrelay_deliveries_in_flight", "Postback requests in flight in this process.",
	      "", ds.active);
	GAUGE(g, "pixrelay_deliveries_waiting",
	      "Postbacks leased by this process, waiting for a slot of their destination.", "",
	      ds.waiting);
	GAUGE(g, "pixrelay_destinations_paused",
	      "Destination hosts whose circuit is open (paused after timeouts).", "", ds.open);
	GAUGE(g, "pixrelay_cache_hits", "Keys and accounts found in the process's cache.", "",
	      (double)hits);
	GAUGE(g, "pixrelay_cache_misses", "Keys and accounts read from Redis.", "", (double)misses);
	GAUGE(g, "pixrelay_redis_up", "1 when Redis answered this scrape, 0 when it did not.", "",
	      sc->failed ? 0 : 1);
	for (int st = 0; !sc->failed && st < 3; st++)
		for (int i = 0; i < sc->nshards; i++) {
			static const char *const names[] = {"pending", "delivering", "dead"};
			const struct events_stats *e = &sc->stats[i];
			char *l = labels[st * sc->nshards + i];
			snprintf(l, 48, "shard=\"%d\",state=\"%s\"", i, names[st]);
			GAUGE(g, "pixrelay_events",
			      "Events in the delivery queues, by shard and state (delivered ones "
			      "are not counted).",
			      l,
			      (double)(st == 0	 ? e->pending
				       : st == 1 ? e->delivering
						 : e->dead));
		}
	for (int i = 0; !sc->failed && i < sc->nshards; i++) {
		const struct events_stats *e = &sc->stats[i];
		char *l = labels[3 * sc->nshards + i];
		snprintf(l, 48, "shard=\"%d\"", i);
		GAUGE(g, "pixrelay_delivery_lag_seconds",
		      "How long the most overdue pending event of a shard has waited past its due "
		      "time (0 when none is overdue).",
		      l,
		      e->earliest_due_ms && (uint64_t)e->earliest_due_ms < now
			  ? (double)(now - (uint64_t)e->earliest_due_ms) / 1000.0
			  : 0);
	}
	text = metrics_render(gauges, (size_t)(g - gauges), &len);
	http_reply_bytes(sc->req, 200, "text/plain; version=0.0.4; charset=utf-8", "no-store", text,
			 len);
	free(text);
	free(labels);
	free(gauges);
	free(sc->stats);
	free(sc);
}

struct scrape_shard {
	struct scrape *sc;
	int shard;
};

static void on_shard_scraped(void *ud, int result, const struct events_stats *st, const char *err)
{
	struct scrape_shard *ss = ud;
	struct scrape *sc = ss->sc;

	if (result < 0)
		sc->failed = 1;
	else
		sc->stats[ss->shard] = *st;
	free(ss);
	if (--sc->left == 0)
		scrape_done(sc);
}

/* GET /metrics: the Prometheus text format (no key: serve it where only the
 * scraper reaches, see docs/metrics.md). */
static void handle_metrics(struct http_req *req)
{
	struct app *app = app_of(req);
	struct scrape *sc = mem_new(struct scrape);

	sc->req = req;
	sc->nshards = (int)app->cfg->shards;
	sc->stats = mem_calloc((size_t)sc->nshards, sizeof(*sc->stats));
	if (!rds_ready(app->rds)) {
		sc->failed = 1;
		scrape_done(sc);
		return;
	}
	/* one count more, held by this loop: an answer may come at once */
	sc->left = sc->nshards + 1;
	for (int i = 0; i < sc->nshards; i++) {
		struct scrape_shard *ss = mem_new(struct scrape_shard);
		ss->sc = sc;
		ss->shard = i;
		events_shard_stats(app->rds, app->cfg, i, on_shard_scraped, ss);
	}
	if (--sc->left == 0)
		scrape_done(sc);
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
	json_str(g, env_name(c->key.env));
	json_str(g, "account");
	json_str(g, c->key.account);
	json_close(g);
	json_str(g, "account");
	json_str(g, c->account);
	json_str(g, "environment");
	json_str(g, env_name(c->key.env));
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
	charges_create(app->rds, app->cache, app->cfg, c->key.env, c->account, &in,
		       on_charge_created, req);
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

/* A charge transition under way: what it does, and its event's id once made. */
struct transition {
	const char *verb;
	char event[EVENT_ID_MAX];
};

static void on_transitioned(void *ud, int result, const char *json, const char *err)
{
	struct http_req *req = ud;
	struct app *app = app_of(req);
	struct transition *t = req->state;
	const char *verb = t->verb;
	char event[EVENT_ID_MAX];

	snprintf(event, sizeof(event), "%s", t->event);
	free(t);
	req->state = NULL;
	switch (result) {
	case 0:
		dispatch_kick(app->dispatch, req->params[0]);
		/* the event it made, for tools (pixrelay trigger) */
		if (*event)
			http_add_header(req, "X-Event-Id", event);
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
		dispatch_kick(app->dispatch, req->params[0]);
		if (*event)
			http_add_header(req, "X-Event-Id", event);
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
	struct transition *t;

	if (c->key.env != ENV_SANDBOX) {
		http_reply_error(req, 403, "%s", refusal);
		return;
	}
	if (!charges_valid_id(req->params[0])) {
		http_reply_error(req, 404, "charge not found: %.40s", req->params[0]);
		return;
	}
	t = mem_new(struct transition);
	t->verb = verb;
	req->state = t;
	charges_transition(app->rds, app->cfg, c->key.env, c->account, req->params[0], action, NULL,
			   t->event, on_transitioned, req);
}

static void handle_simulate_payment(struct http_req *req)
{
	simulate(req, CHARGES_PAY,
		 "simulate-payment works with sandbox keys only; production charges are paid by "
		 "the payment provider's notification",
		 "paid");
}

/* Sandbox: the charge expires now, as it would at expiresAt (a charge
 * cannot expire sooner than 5 minutes after creation otherwise). */
static void handle_simulate_expiry(struct http_req *req)
{
	simulate(req, CHARGES_EXPIRE,
		 "simulate-expiry works with sandbox keys only; production charges expire at "
		 "their expiresAt",
		 "expired");
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
	struct transition *t;
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
	t = mem_new(struct transition);
	t->verb = "refunded";
	req->state = t;
	charges_transition(app->rds, app->cfg, c->key.env, c->account, req->params[0],
			   CHARGES_REFUND, amount[0] ? amount : NULL, t->event, on_transitioned,
			   req);
}

/* ---- events ---- */

static void on_event_read(void *ud, int result, const char *json, const char *err)
{
	reply_read(ud, result, EVENTS_NOT_FOUND, "event", json, err);
}

/* Nonzero when the path names an event id; else 404. */
static int event_id_ok(struct http_req *req)
{
	if (strncmp(req->params[0], "evt_", 4) != 0 || ks_shard_of(req->params[0]) < 0) {
		http_reply_error(req, 404, "event not found: %.40s", req->params[0]);
		return 0;
	}
	return 1;
}

/* GET /v1/events/stream[?since=TIME|EVENT_ID]: the caller's account's events
 * as they are created, as Server-Sent Events; Last-Event-ID (or since)
 * resumes (evstream.h). */
static void handle_events_stream(struct http_req *req)
{
	struct app *app = app_of(req);
	struct api_caller *c = req->auth;
	const char *last = http_header(req, "Last-Event-ID");
	char *since = http_query(req, "since");
	long long from_ms = 0;
	const char *skip = NULL;

	if (last && *last) {
		long long ms = evstream_id_ms(last);
		if (ms < 0 || ks_shard_of(last) != ks_shard_of(c->account)) {
			free(since);
			http_reply_error(
			    req, 400,
			    "Last-Event-ID: must be the id of an event of this account "
			    "(evt_...)");
			return;
		}
		from_ms = ms > EVSTREAM_RESUME_OVERLAP_MS ? ms - EVSTREAM_RESUME_OVERLAP_MS : 1;
		skip = last;
	} else if (since) {
		long long ms = evstream_id_ms(since);
		if (ms >= 0 && ks_shard_of(since) == ks_shard_of(c->account)) {
			from_ms =
			    ms > EVSTREAM_RESUME_OVERLAP_MS ? ms - EVSTREAM_RESUME_OVERLAP_MS : 1;
			skip = since;
		} else if (ms >= 0 || timefmt_parse(since, &from_ms) < 0) {
			free(since);
			http_reply_error(
			    req, 400,
			    "since: must be an event id of this account, Unix seconds, "
			    "'YYYY-MM-DD HH:MM:SS' (UTC) or RFC 3339");
			return;
		}
		if (from_ms <= 0)
			from_ms = 1;
	}
	/* skip is copied at once */
	evstream_open(app->streams, req, c->key.env, c->account, from_ms, skip);
	free(since);
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
		dispatch_kick(app->dispatch, req->params[0]);
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
	enum env env;
	char account[32];
	char event[EVENT_ID_MAX];
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

static const char *json_status_of(const char *charge_json, char *out, size_t size)
{
	const char *p = charge_json ? strstr(charge_json, "\"status\":\"") : NULL;

	if (!p)
		return NULL;
	p += 10;
	snprintf(out, size, "%.*s", (int)strcspn(p, "\""), p);
	return out;
}

static void on_ingested(void *ud, int result, const char *json, const char *err)
{
	struct http_req *req = ud;
	struct app *app = app_of(req);
	struct ingest_ctx *x = req->state;
	char status[16], why[96];

	metrics_ingest(result == 0 || result == CHARGES_EXPIRED ? "accepted"
		       : result == CHARGES_RELAYED		? "relayed"
		       : result == CHARGES_DUPLICATE		? "duplicate"
		       : result < 0				? "failed"
								: "ignored");
	switch (result) {
	case 0:
		dispatch_kick(app->dispatch, x->account);
		ingest_done(req, 200, x->event[0] ? x->event : NULL, 0, NULL,
			    json_status_of(json, status, sizeof(status)));
		return;
	case CHARGES_RELAYED:
		dispatch_kick(app->dispatch, x->account);
		ingest_done(req, 200, json, 0, NULL, NULL);
		return;
	case CHARGES_DUPLICATE:
		ingest_done(req, 200, json, 1, NULL, NULL);
		return;
	case CHARGES_REFUSED:
		snprintf(why, sizeof(why), "the charge is %s", json);
		log_warn("ingest %s: %s ignored: %s", req->request_id, x->note.event, why);
		ingest_done(req, 200, NULL, 0, why, json);
		return;
	case CHARGES_EXPIRED:
		dispatch_kick(app->dispatch, x->account);
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
	ingest_submit(app->ingest, x->env, x->account, &x->note, x->event, on_ingested, req);
}

static void on_ingest_account(void *ud, int result, const struct accounts_info *info,
			      const char *err)
{
	struct http_req *req = ud;
	struct ingest_ctx *x = req->state;

	if (result < 0) {
		free(x);
		req->state = NULL;
		reply_unavailable(req);
		return;
	}
	if (result != 0) {
		free(x);
		req->state = NULL;
		http_reply_error(req, 404, "account not found: %s", req->params[0]);
		return;
	}
	x->env = info->env;
	ingest_with_secret(req, info->ingest_secret);
}

/* POST /v1/webhooks/ingest/{accountId}: no API key; the account's ingest
 * secret authenticates the provider. */
static void handle_ingest(struct http_req *req)
{
	struct app *app = app_of(req);
	struct ingest_ctx *x;

	if (!ids_is_ulid(req->params[0]) || ks_shard_of(req->params[0]) < 0) {
		http_reply_error(req, 404, "account not found: %.40s", req->params[0]);
		return;
	}
	if (!rds_ready(app->rds)) {
		reply_unavailable(req);
		return;
	}
	x = mem_new(struct ingest_ctx);
	snprintf(x->account, sizeof(x->account), "%s", req->params[0]);
	req->state = x;
	accounts_lookup(app->rds, app->cache, app->cfg, x->account, on_ingest_account, req);
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
	struct event_filter f;

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
	dispatch_kick(app_of(req)->dispatch, ((struct api_caller *)req->auth)->account);
	http_reply_data(req, 200, json, strlen(json));
}

/* POST /v1/events/replay {"state": "dead", "type", "since", "until", "limit"}:
 * deliver again every event that matches (state defaults to dead). */
static void handle_events_replay(struct http_req *req)
{
	struct app *app = app_of(req);
	struct api_caller *c = req->auth;
	struct event_filter f;
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
	const struct config *cfg = app_of(req)->cfg;
	char wait[24];

	switch (result) {
	case 0:
		http_reply_data(req, 200, json, strlen(json));
		break;
	case ACCOUNTS_DUPLICATE:
		http_reply_error(
		    req, 400, "taxID: already registered in this environment (account %s)", json);
		break;
	case ACCOUNTS_RATE:
		/* whole seconds, rounded up: a retry after Retry-After succeeds */
		snprintf(wait, sizeof(wait), "%lld", (strtoll(json, NULL, 10) + 999) / 1000);
		http_add_header(req, "Retry-After", wait);
		http_reply_error(req, 429,
				 "too many accounts created with this API key: at most %ld in an "
				 "hour (max-accounts-per-key-hour); retry in %s s",
				 cfg->max_accounts_per_key_hour, wait);
		break;
	case ACCOUNTS_FULL:
		http_reply_error(req, 403,
				 "this environment holds the most business accounts it may "
				 "(max-accounts = %s); the operator must raise the limit",
				 json);
		break;
	case ACCOUNTS_STORAGE:
		http_reply_error(req, 403,
				 "this environment keeps the most account files it may "
				 "(max-stored-file-bytes = %ld, %s bytes kept); the operator must "
				 "raise the limit",
				 cfg->max_stored_file_bytes, json);
		break;
	default:
		reply_failure(req, err ? err : "account creation failed");
	}
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
	size_t files = 0, bytes = 0;

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
	/* what the account would keep, against the per-account quotas: sizes,
	 * 413 like a body over max-upload, before anything is stored */
	account_files_usage(&in, &files, &bytes);
	if (files > (size_t)app->cfg->max_account_files) {
		http_reply_error(req, 413,
				 "documents and pictures: %zu different files, more than the %ld "
				 "an account may keep (max-account-files)",
				 files, app->cfg->max_account_files);
	} else if (bytes > (size_t)app->cfg->max_account_bytes) {
		http_reply_error(req, 413,
				 "documents and pictures: %zu bytes in all, more than the %ld an "
				 "account may keep (max-account-bytes)",
				 bytes, app->cfg->max_account_bytes);
	} else {
		accounts_create(app->rds, app->cfg, c->key.env, c->account,
				c->key.kind == AUTH_MASTER_KEY ? NULL : c->key.id, &in,
				on_account_created, req);
	}
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
			dispatch_kick(app_of(req)->dispatch, NULL);
		/* spec 4.3: exactly two fields, no envelope */
		body = mem_printf("{\"amount\":%s,\"status\":\"DONE\"}", amount);
		http_reply_raw(req, 200, body, strlen(body));
		free(body);
		break;
	case ACCOUNTS_NOT_FOUND:
		http_reply_error(req, 404, "%s: no account has this Pix key", json);
		break;
	case ACCOUNTS_FORBIDDEN:
		/* only the caller's own review status is said, never another's */
		if (json && strcmp(json, "pending") == 0)
			http_reply_error(
			    req, 403,
			    "the accounts of from_key and to_key must both belong to the caller's "
			    "group, and the caller's account is waiting for the operator's KYC "
			    "review: until it is approved, its group is itself alone");
		else if (json && strcmp(json, "rejected") == 0)
			http_reply_error(
			    req, 403,
			    "the accounts of from_key and to_key must both belong to the caller's "
			    "group, and the caller's account was rejected in the operator's KYC "
			    "review: its group is itself alone");
		else
			http_reply_error(
			    req, 403,
			    "the accounts of from_key and to_key must both belong to the caller's "
			    "group: the caller's account, or an account of the same owner sharing "
			    "a member with it, both approved in the operator's KYC review");
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
	transfers_create(app->rds, app->cfg, c->key.env, c->account, from, to, amount, idem, fp,
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

/* ---- listings and key management (the dashboard's API) ---- */

/* Read the query parameters of a listing. Each must be one of `names` and
 * given once; values[i] gets the decoded value of names[i] (owned, NULL when
 * absent). Returns 0, or -1 after answering 400 (values all NULL then). */
struct query_walk {
	struct http_req *req;
	const char *const *names;
	size_t n;
	char **values;
	const char *allowed;
};

static int query_param(void *ud, const char *key, const char *value)
{
	struct query_walk *w = ud;
	size_t i;

	for (i = 0; i < w->n; i++)
		if (strcmp(key, w->names[i]) == 0)
			break;
	if (i == w->n) {
		char echo[JSON_ECHO_MAX + 1];

		http_reply_error(w->req, 400, "unknown query parameter '%s'; allowed: %s",
				 json_echo(echo, key), w->allowed);
		return -1;
	}
	if (w->values[i]) {
		http_reply_error(w->req, 400, "%s: given more than once", w->names[i]);
		return -1;
	}
	w->values[i] = mem_strdup(value);
	return 0;
}

static int query_params(struct http_req *req, const char *const *names, size_t n, char **values)
{
	char allowed[128] = "";
	struct query_walk w = {req, names, n, values, allowed};

	for (size_t i = 0; i < n; i++) {
		values[i] = NULL;
		snprintf(allowed + strlen(allowed), sizeof(allowed) - strlen(allowed), "%s%s",
			 i ? ", " : "", names[i]);
	}
	if (httpp_query_each(http_query_string(req), query_param, &w) != 0) {
		for (size_t i = 0; i < n; i++) {
			free(values[i]);
			values[i] = NULL;
		}
		return -1;
	}
	return 0;
}

static void query_free(char **values, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(values[i]);
}

/* `limit` (NULL: `def`) as a page size from 1 to `max`; 0, or -1 after answering 400. */
static int query_limit(struct http_req *req, const char *value, int def, int max, int *out)
{
	if (!value) {
		*out = def;
		return 0;
	}
	if (page_parse_limit(value, max, out) < 0) {
		http_reply_error(req, 400, "limit: must be an integer from 1 to %d", max);
		return -1;
	}
	return 0;
}

/* `cursor` (NULL: from the newest) for ids of `id_prefix`; 0, or -1 after answering 400. */
static int query_cursor(struct http_req *req, const char *value, const char *id_prefix,
			struct page_cursor *out)
{
	page_cursor_start(out);
	if (value && page_parse_cursor(value, id_prefix, out) < 0) {
		http_reply_error(req, 400, "cursor: not a cursor this endpoint returned");
		return -1;
	}
	return 0;
}

/* Nonzero when the whole environment is in view: a master key acting for no
 * particular account (no X-Account-ID). Otherwise the acting account is. */
static int env_scope(struct http_req *req)
{
	struct api_caller *c = req->auth;
	const char *acting = http_header(req, "X-Account-ID");

	return c->key.kind == AUTH_MASTER_KEY && (!acting || !*acting);
}

static void on_listed(void *ud, int result, const char *json, const char *err)
{
	struct http_req *req = ud;

	if (result < 0)
		reply_failure(req, err);
	else
		http_reply_data(req, 200, json, strlen(json));
}

#define LIST_DEFAULT 20

/* GET /v1/keys?limit=&cursor= : the keys of the acting account, or of the
 * whole environment for a master key without X-Account-ID. */
static void handle_keys_list(struct http_req *req)
{
	static const char *const names[] = {"limit", "cursor"};
	struct app *app = app_of(req);
	struct api_caller *c = req->auth;
	char *v[2];
	struct page_cursor from;
	int limit;

	if (query_params(req, names, 2, v) < 0)
		return;
	if (query_limit(req, v[0], LIST_DEFAULT, 100, &limit) == 0 &&
	    query_cursor(req, v[1], "key_", &from) == 0)
		keys_page(app->rds, app->cfg->prefix, c->key.env,
			  env_scope(req) ? NULL : c->account, &from, limit, on_listed, req);
	query_free(v, 2);
}

static void on_key_created(void *ud, int result, const char *json, const char *err)
{
	struct http_req *req = ud;
	struct api_caller *c = req->auth;

	if (result < 0) {
		reply_failure(req, err);
		return;
	}
	log_info("request %s: key %s created a key for account %s", req->request_id, c->key.id,
		 c->account);
	http_reply_data(req, 200, json, strlen(json));
}

/* POST /v1/keys {"description"}: a new account key of the acting account;
 * the answer is the only time its text is shown. */
static void handle_keys_create(struct http_req *req)
{
	struct app *app = app_of(req);
	struct api_caller *c = req->auth;
	yajl_val body = NULL, v;
	char err[512];
	long chars;

	if (json_parse_object(req->body, req->body_len, &body, err, sizeof(err)) < 0) {
		http_reply_error(req, 400, "%s", err);
		return;
	}
	for (size_t i = 0; i < body->u.object.len; i++) {
		if (strcmp(body->u.object.keys[i], "description") != 0) {
			char echo[JSON_ECHO_MAX + 1];

			http_reply_error(req, 400, "unknown field '%s'; allowed: description",
					 json_echo(echo, body->u.object.keys[i]));
			goto done;
		}
	}
	v = json_get(body, "description");
	if (!v || YAJL_IS_NULL(v)) {
		http_reply_error(req, 400,
				 "description: is required (what the key is for, 1 to %d "
				 "characters)",
				 KEYS_DESCRIPTION_MAX);
		goto done;
	}
	if (!YAJL_IS_STRING(v) || !v->u.string) {
		http_reply_error(req, 400, "description: must be a string");
		goto done;
	}
	chars = validate_utf8_chars(v->u.string, strlen(v->u.string));
	if (chars < 1 || chars > KEYS_DESCRIPTION_MAX) {
		http_reply_error(req, 400, "description: must be 1 to %d characters",
				 KEYS_DESCRIPTION_MAX);
		goto done;
	}
	if (validate_has_control(v->u.string)) {
		http_reply_error(req, 400, "description: must not contain control characters");
		goto done;
	}
	keys_create_async(app->rds, app->cfg->prefix, c->key.env, c->account, v->u.string,
			  on_key_created, req);
done:
	yajl_tree_free(body);
}

static void on_key_revoked(void *ud, int result, const char *json, const char *err)
{
	struct http_req *req = ud;
	struct api_caller *c = req->auth;

	if (result < 0) {
		reply_failure(req, err);
	} else if (result == KEYS_NOT_FOUND) {
		http_reply_error(req, 404, "key not found: %s", req->params[0]);
	} else {
		if (result == 0)
			log_info("request %s: key %s revoked key %s", req->request_id, c->key.id,
				 req->params[0]);
		http_reply_data(req, 200, json, strlen(json));
	}
}

/* POST /v1/keys/{id}/revoke: at once, for every process; revoking a revoked
 * key again answers it as it is. */
static void handle_key_revoke(struct http_req *req)
{
	struct app *app = app_of(req);
	struct api_caller *c = req->auth;

	if (!keys_valid_id(req->params[0])) {
		http_reply_error(req, 404, "key not found: %.40s", req->params[0]);
		return;
	}
	keys_revoke_async(app->rds, app->cache, app->cfg->prefix, c->key.env,
			  env_scope(req) ? NULL : c->account, req->params[0], on_key_revoked, req);
}

static const char *const charge_states[] = {"PENDING",	"PAID",	  "EXPIRED",
					    "REFUNDED", "FAILED", NULL};

static int one_of(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (strcmp(s, *list) == 0)
			return 1;
	return 0;
}

/* GET /v1/charges?status=&limit=&cursor= : the acting account's charges, newest first. */
static void handle_charges_list(struct http_req *req)
{
	static const char *const names[] = {"status", "limit", "cursor"};
	struct app *app = app_of(req);
	struct api_caller *c = req->auth;
	struct charges_filter f;
	char *v[3];

	if (query_params(req, names, 3, v) < 0)
		return;
	memset(&f, 0, sizeof(f));
	f.status = v[0];
	if (v[0] && !one_of(v[0], charge_states))
		http_reply_error(req, 400,
				 "status: must be PENDING, PAID, EXPIRED, REFUNDED or FAILED");
	else if (query_limit(req, v[1], LIST_DEFAULT, CHARGES_LIST_MAX, &f.limit) == 0 &&
		 query_cursor(req, v[2], "", &f.from) == 0)
		charges_list(app->rds, app->cfg, c->key.env, c->account, &f, on_listed, req);
	query_free(v, 3);
}

/* GET /v1/baas/accounts?limit=&cursor= : the environment's accounts (a master
 * key without X-Account-ID), else the acting account alone. */
static void handle_accounts_list(struct http_req *req)
{
	static const char *const names[] = {"limit", "cursor"};
	struct app *app = app_of(req);
	struct api_caller *c = req->auth;
	struct page_cursor from;
	char *v[2];
	int limit;

	if (query_params(req, names, 2, v) < 0)
		return;
	if (query_limit(req, v[0], LIST_DEFAULT, ACCOUNTS_LIST_MAX, &limit) == 0 &&
	    query_cursor(req, v[1], "", &from) == 0)
		accounts_list(app->rds, app->cfg, c->key.env, env_scope(req) ? NULL : c->account,
			      &from, limit, on_listed, req);
	query_free(v, 2);
}

/* Nonzero when the path's account is in the caller's view; else 404 answered. */
static int account_in_view(struct http_req *req)
{
	struct api_caller *c = req->auth;
	const char *id = req->params[0];

	if (!ids_is_ulid(id) || ks_shard_of(id) < 0) {
		http_reply_error(req, 404, "account not found: %.40s", id);
		return 0;
	}
	if (!env_scope(req) && strcmp(id, c->account) != 0) {
		http_reply_error(req, 404, "account not found: %s", id);
		return 0;
	}
	return 1;
}

static void on_account_read(void *ud, int result, const char *json, const char *err)
{
	reply_read(ud, result, ACCOUNTS_NO_ACCOUNT, "account", json, err);
}

/* GET /v1/baas/accounts/{id}?limit=&cursor= : an account with its balance,
 * postbackUrl and a page of its ledger (limit and cursor page the ledger). */
static void handle_account_get(struct http_req *req)
{
	static const char *const names[] = {"limit", "cursor"};
	struct app *app = app_of(req);
	struct api_caller *c = req->auth;
	char *v[2], pos[16] = "", fp[PAGE_FP_LEN + 1] = "";
	int limit;

	if (query_params(req, names, 2, v) < 0)
		return;
	if (query_limit(req, v[0], LIST_DEFAULT, ACCOUNTS_LEDGER_MAX, &limit) < 0)
		goto done;
	if (v[1] && page_parse_ledger_cursor(v[1], pos, fp) < 0) {
		http_reply_error(req, 400, "cursor: not a cursor this endpoint returned");
		goto done;
	}
	if (!account_in_view(req))
		goto done;
	accounts_show(app->rds, app->cfg, c->key.env, req->params[0], limit, pos, fp,
		      on_account_read, req);
done:
	query_free(v, 2);
}

static void on_secrets_read(void *ud, int result, const char *json, const char *err)
{
	struct http_req *req = ud;
	struct api_caller *c = req->auth;

	if (result == 0)
		log_info("request %s: key %s revealed the secrets of account %s", req->request_id,
			 c->key.id, req->params[0]);
	reply_read(req, result, ACCOUNTS_NO_ACCOUNT, "account", json, err);
}

/* POST /v1/baas/accounts/{id}/secrets/reveal: the account's webhook secrets,
 * for master keys only (the ingest secret can mark charges paid). */
static void handle_account_secrets(struct http_req *req)
{
	struct app *app = app_of(req);
	struct api_caller *c = req->auth;

	if (c->key.kind != AUTH_MASTER_KEY) {
		http_reply_error(req, 403,
				 "revealing an account's secrets needs a master key; an account "
				 "key cannot see them");
		return;
	}
	if (!account_in_view(req))
		return;
	accounts_secrets(app->rds, app->cfg, c->key.env, req->params[0], on_secrets_read, req);
}

const struct http_route api_routes[] = {
    {HTTP_GET, "/healthz", handle_healthz, 0},
    {HTTP_GET, "/readyz", handle_readyz, 0},
    {HTTP_GET, "/metrics", handle_metrics, 0},
    {HTTP_GET, "/v1/openapi.yaml", handle_openapi, HTTP_ENVELOPE},
    {HTTP_GET, "/dashboard", dashboard_redirect, 0},
    {HTTP_GET, "/dashboard/", dashboard_index, 0},
    {HTTP_GET, "/dashboard/{file}", dashboard_file, 0},
    {HTTP_GET, "/v1/me", handle_me, HTTP_AUTH | HTTP_ENVELOPE},
    {HTTP_POST, "/v1/charge/pix/create", handle_charge_create,
     HTTP_AUTH | HTTP_JSON_BODY | HTTP_ENVELOPE},
    {HTTP_GET, "/v1/charge/pix/{id}", handle_charge_get, HTTP_AUTH | HTTP_ENVELOPE},
    {HTTP_GET, "/v1/qrcode/{id}", handle_qrcode, HTTP_ENVELOPE},
    {HTTP_POST, "/v1/charge/pix/{id}/simulate-payment", handle_simulate_payment,
     HTTP_AUTH | HTTP_ENVELOPE},
    {HTTP_POST, "/v1/charge/pix/{id}/simulate-expiry", handle_simulate_expiry,
     HTTP_AUTH | HTTP_ENVELOPE},
    {HTTP_POST, "/v1/charge/pix/{id}/simulate-failure", handle_simulate_failure,
     HTTP_AUTH | HTTP_ENVELOPE},
    {HTTP_POST, "/v1/charge/{id}/refund", handle_refund, HTTP_AUTH | HTTP_ENVELOPE},
    {HTTP_GET, "/v1/events", handle_events_list, HTTP_AUTH | HTTP_ENVELOPE},
    {HTTP_GET, "/v1/events/stream", handle_events_stream, HTTP_AUTH | HTTP_ENVELOPE},
    {HTTP_POST, "/v1/events/replay", handle_events_replay, HTTP_AUTH | HTTP_ENVELOPE},
    {HTTP_GET, "/v1/events/{id}", handle_event_get, HTTP_AUTH | HTTP_ENVELOPE},
    {HTTP_POST, "/v1/events/{id}/replay", handle_event_replay, HTTP_AUTH | HTTP_ENVELOPE},
    {HTTP_POST, "/v1/webhooks/ingest/{id}", handle_ingest, HTTP_JSON_BODY | HTTP_ENVELOPE},
    {HTTP_POST, "/v1/baas/account/create", handle_account_create,
     HTTP_AUTH | HTTP_ACTS_AS | HTTP_JSON_BODY | HTTP_ENVELOPE | HTTP_UPLOAD},
    {HTTP_POST, "/v1/baas/internal-transfer", handle_transfer,
     HTTP_AUTH | HTTP_ACTS_AS | HTTP_JSON_BODY | HTTP_ENVELOPE},
    {HTTP_GET, "/v1/baas/balance", handle_balance, HTTP_AUTH | HTTP_ENVELOPE},
    {HTTP_GET, "/v1/keys", handle_keys_list, HTTP_AUTH | HTTP_ENVELOPE},
    {HTTP_POST, "/v1/keys", handle_keys_create, HTTP_AUTH | HTTP_JSON_BODY | HTTP_ENVELOPE},
    {HTTP_POST, "/v1/keys/{id}/revoke", handle_key_revoke, HTTP_AUTH | HTTP_ENVELOPE},
    {HTTP_GET, "/v1/charges", handle_charges_list, HTTP_AUTH | HTTP_ENVELOPE},
    {HTTP_GET, "/v1/baas/accounts", handle_accounts_list, HTTP_AUTH | HTTP_ENVELOPE},
    {HTTP_GET, "/v1/baas/accounts/{id}", handle_account_get, HTTP_AUTH | HTTP_ENVELOPE},
    {HTTP_POST, "/v1/baas/accounts/{id}/secrets/reveal", handle_account_secrets,
     HTTP_AUTH | HTTP_ENVELOPE},
};

const size_t api_nroutes = sizeof(api_routes) / sizeof(api_routes[0]);

const struct http_route api_metrics_routes[] = {
    {HTTP_GET, "/healthz", handle_healthz, 0},
    {HTTP_GET, "/readyz", handle_readyz, 0},
    {HTTP_GET, "/metrics", handle_metrics, 0},
};
const size_t api_metrics_nroutes = sizeof(api_metrics_routes) / sizeof(api_metrics_routes[0]);
