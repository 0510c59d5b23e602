#include "pixrelay/api.h"

#include "pixrelay/ids.h"
#include "pixrelay/json.h"
#include "pixrelay/keys.h"
#include "pixrelay/log.h"
#include "pixrelay/mem.h"

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
			http_reply_error(req, 400,
					 "X-Account-ID header is required with a master key on this "
					 "operation");
			return;
		}
		http_next(req);
		return;
	}
	if (!ids_is_ulid(acting)) {
		http_reply_error(req, 400, "X-Account-ID must be an account id (a 26-character ULID)");
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
		reply_unauthorized(req,
				   "missing API key: send the header Authorization: Bearer <API key>");
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

const struct http_route api_routes[] = {
	{EVHTTP_REQ_GET, "/healthz", handle_healthz, 0},
	{EVHTTP_REQ_GET, "/readyz", handle_readyz, 0},
	{EVHTTP_REQ_GET, "/v1/me", handle_me, HTTP_AUTH | HTTP_ENVELOPE},
};

const size_t api_nroutes = sizeof(api_routes) / sizeof(api_routes[0]);
