/* api_common: what the handlers of the public API have in common.
 *
 * The replies to a failure (503 for storage that cannot be reached, 500
 * otherwise) and to a read of one thing, the authentication of a request
 * (Bearer key, then X-Account-ID, as the routes' http_auth_fn), and the query
 * parameters of listings. The route table is in api.c; the handlers are in
 * one file per resource (api_int.h lists them).
 */
#include "api_int.h"

#include "pixrelay/store/accounts.h"
#include "pixrelay/core/ids.h"
#include "pixrelay/core/json.h"
#include "pixrelay/core/log.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/http/httpparse.h"

#include <stdlib.h>
#include <string.h>

/* ---- replies ---- */

#define MSG_UNAVAILABLE "service unavailable: storage is unreachable; retry later"

void api_reply_unavailable(struct http_req *req)
{
	http_add_header(req, "Retry-After", "1");
	http_reply_error(req, 503, MSG_UNAVAILABLE);
}

static void reply_unauthorized(struct http_req *req, const char *msg)
{
	http_add_header(req, "WWW-Authenticate", "Bearer");
	http_reply_error(req, 401, "%s", msg);
}

void api_reply_failure(struct http_req *req, const char *err)
{
	/* not "ERR": a script's own error is a bug, not a reason to retry */
	static const char *const storage[] = {"redis",	  "OOM",     "LOADING",
					      "READONLY", "BUSY",    "MASTERDOWN",
					      "NOSCRIPT", "MISCONF", "TRYAGAIN"};

	for (size_t i = 0; i < sizeof(storage) / sizeof(storage[0]); i++) {
		if (strncmp(err, storage[i], strlen(storage[i])) == 0) {
			log_warn("request %s failed: %s", req->request_id, err);
			api_reply_unavailable(req);
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

void api_reply_read(struct http_req *req, int result, int not_found, const char *what,
		    const char *json, const char *err)
{
	if (result < 0)
		api_reply_failure(req, err);
	else if (result == not_found)
		http_reply_error(req, 404, "%s not found: %s", what, req->params[0]);
	else
		http_reply_data(req, 200, json, strlen(json));
}

void api_on_json(void *ud, int result, const char *json, const char *err)
{
	struct http_req *req = ud;

	if (result < 0)
		api_reply_failure(req, err);
	else
		http_reply_data(req, 200, json, strlen(json));
}

/* ---- authentication ---- */

static void on_account_checked(void *ud, int result, const struct accounts_info *info,
			       const char *err)
{
	struct http_req *req = ud;
	struct api_caller *caller = req->auth;

	if (result < 0) {
		api_reply_unavailable(req);
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
		api_reply_unavailable(req);
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
	if (!rds_serving(app->rds)) {
		api_reply_unavailable(req);
		return;
	}
	auth_lookup(app->rds, app->cache, app->cfg->prefix, token, len, on_key, req);
}

/* ---- query parameters of listings ---- */

/* The walk of api_query_params over the query string. */
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

int api_query_params(struct http_req *req, const char *const *names, size_t n, char **values)
{
	char allowed[128] = "";
	struct query_walk w = {req, names, n, values, allowed};

	if (n == 0)
		snprintf(allowed, sizeof(allowed), "none");
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

void api_query_free(char **values, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(values[i]);
}

int api_query_limit(struct http_req *req, const char *value, int def, int max, int *out)
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

int api_query_cursor(struct http_req *req, const char *value, const char *id_prefix,
		     struct page_cursor *out)
{
	page_cursor_start(out);
	if (value && page_parse_cursor(value, id_prefix, out) < 0) {
		http_reply_error(req, 400, "cursor: not a cursor this endpoint returned");
		return -1;
	}
	return 0;
}

bool api_env_scope(struct http_req *req)
{
	struct api_caller *c = req->auth;
	const char *acting = http_header(req, "X-Account-ID");

	return c->key.kind == AUTH_MASTER_KEY && (!acting || !*acting);
}
