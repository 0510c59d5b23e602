/* api_keys: who the caller is (/v1/me) and the API keys of an account.
 *
 * Listing, creating and revoking keys (the dashboard's key management) call
 * the keys store; the authentication of a request by its key is in
 * api_common.c.
 */
#include "api_int.h"

#include "pixrelay/store/keys.h"
#include "pixrelay/core/json.h"
#include "pixrelay/core/log.h"
#include "pixrelay/core/validate.h"

#include <string.h>

/* GET /v1/me: who the key is, and on whose behalf it acts. */
void api_handle_me(struct http_req *req)
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

/* GET /v1/keys?limit=&cursor= : the keys of the acting account, or of the
 * whole environment for a master key without X-Account-ID; never a master
 * key for an account key (not even the platform account's). */
void api_handle_keys_list(struct http_req *req)
{
	static const char *const names[] = {"limit", "cursor"};
	struct app *app = app_of(req);
	struct api_caller *c = req->auth;
	char *v[2];
	struct page_cursor from;
	int limit;

	if (api_query_params(req, names, 2, v) < 0)
		return;
	if (api_query_limit(req, v[0], API_LIST_DEFAULT, 100, &limit) == 0 &&
	    api_query_cursor(req, v[1], "key_", &from) == 0)
		keys_page(app->rds, app->cfg->prefix, c->key.env,
			  api_env_scope(req) ? NULL : c->account, c->key.kind, &from, limit,
			  api_on_json, req);
	api_query_free(v, 2);
}

static void on_key_created(void *ud, int result, const char *json, const char *err)
{
	struct http_req *req = ud;
	struct api_caller *c = req->auth;

	if (result < 0) {
		api_reply_failure(req, err);
		return;
	}
	log_info("request %s: key %s created a key for account %s", req->request_id, c->key.id,
		 c->account);
	http_reply_data(req, 200, json, strlen(json));
}

/* POST /v1/keys {"description"}: a new account key of the acting account;
 * the answer is the only time its text is shown. */
void api_handle_keys_create(struct http_req *req)
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
		api_reply_failure(req, err);
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
 * key again answers it as it is. A key the caller may not see (another
 * account's, or a master key for an account key) is not found. */
void api_handle_key_revoke(struct http_req *req)
{
	struct app *app = app_of(req);
	struct api_caller *c = req->auth;

	if (!keys_valid_id(req->params[0])) {
		http_reply_error(req, 404, "key not found: %.40s", req->params[0]);
		return;
	}
	keys_revoke_async(app->rds, app->cache, app->cfg->prefix, c->key.env,
			  api_env_scope(req) ? NULL : c->account, c->key.kind, req->params[0],
			  on_key_revoked, req);
}
