/* api_endpoints: an account's webhook endpoints (/v1/webhook-endpoints):
 * created (the secret shown once), listed, read, changed, deleted, their
 * secret rotated, and a test ping sent at once. An account key manages its
 * own account's endpoints; a master key those of the account X-Account-ID
 * names. The bodies are read by pix/endpoint.c, the records kept by
 * store/endpoints.c, the ping sent by relay/ping.c; fanning events out to
 * endpoints is the scripts' (docs/event-layout.md, "Endpoints").
 */
#include "api_int.h"

#include "pixrelay/core/json.h"
#include "pixrelay/core/log.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/pix/endpoint.h"
#include "pixrelay/relay/ping.h"
#include "pixrelay/store/endpoints.h"

#include <stdlib.h>
#include <string.h>

/* Nonzero when the path names an endpoint id; else 404. */
static int endpoint_id_ok(struct http_req *req)
{
	if (!endpoint_valid_id(req->params[0])) {
		http_reply_error(req, 404, "webhook endpoint not found: %.40s", req->params[0]);
		return 0;
	}
	return 1;
}

/* The answer of a store call about one endpoint. */
static void on_endpoint(void *ud, int result, const char *json, const char *err)
{
	struct http_req *req = ud;
	struct api_caller *c = req->auth;

	if (result < 0) {
		api_reply_failure(req, err);
	} else if (result == ENDPOINTS_NOT_FOUND || result == ENDPOINTS_NO_ACCOUNT) {
		http_reply_error(req, 404, "webhook endpoint not found: %s", req->params[0]);
	} else {
		if (req->route->method != HTTP_GET)
			log_info("request %s: key %s changed webhook endpoint %s of account %s",
				 req->request_id, c->key.id, req->params[0], c->account);
		http_reply_data(req, 200, json, strlen(json));
	}
}

/* Read the body of a create or an update into *spec, checking a production
 * URL's address: 0, or -1 after answering 400. */
static int read_spec(struct http_req *req, int create, struct endpoint_spec *spec)
{
	struct app *app = app_of(req);
	struct api_caller *c = req->auth;
	yajl_val body = NULL;
	struct netaddr_list allow = {0, NULL};
	char err[1024];
	int rc = -1;

	if (json_parse_object(req->body, req->body_len, &body, err, sizeof(err)) < 0) {
		http_reply_error(req, 400, "%s", err);
		return -1;
	}
	if (endpoint_parse(body, create, spec, err, sizeof(err)) < 0) {
		http_reply_error(req, 400, "%s", err);
		goto done;
	}
	/* (destination-allow was checked when the process started) */
	if ((spec->given & ENDPOINT_URL) &&
	    (netaddr_list_parse(&allow, app->cfg->destination_allow, err, sizeof(err)) < 0 ||
	     endpoint_check_destination(spec->url, c->key.env, &allow, err, sizeof(err)) < 0)) {
		http_reply_error(req, 400, "%s", err);
		endpoint_spec_free(spec);
		goto done;
	}
	rc = 0;
done:
	netaddr_list_deinit(&allow);
	yajl_tree_free(body);
	return rc;
}

static void on_created(void *ud, int result, const char *json, const char *err)
{
	struct http_req *req = ud;
	struct api_caller *c = req->auth;

	if (result < 0) {
		api_reply_failure(req, err);
	} else if (result == ENDPOINTS_TOO_MANY) {
		http_reply_error(
		    req, 409,
		    "the account has %d webhook endpoints in %s, the most it may have; "
		    "delete one first",
		    ENDPOINT_MAX, env_name(c->key.env));
	} else if (result == ENDPOINTS_NO_ACCOUNT) {
		http_reply_error(req, 404, "account not found: %s", c->account);
	} else {
		log_info("request %s: key %s created a webhook endpoint for account %s",
			 req->request_id, c->key.id, c->account);
		http_reply_data(req, 200, json, strlen(json));
	}
}

/* POST /v1/webhook-endpoints {url, description?, eventTypes?, enabled?,
 * headers?}: the endpoint, with its signing secret shown this once. */
void api_handle_endpoint_create(struct http_req *req)
{
	struct app *app = app_of(req);
	struct api_caller *c = req->auth;
	struct endpoint_spec spec;

	if (read_spec(req, 1, &spec) < 0)
		return;
	endpoints_create(app->rds, app->cfg, c->key.env, c->account, &spec, on_created, req);
	endpoint_spec_free(&spec);
}

/* GET /v1/webhook-endpoints: every endpoint of the account, oldest first. */
void api_handle_endpoints_list(struct http_req *req)
{
	struct app *app = app_of(req);
	struct api_caller *c = req->auth;

	if (api_query_params(req, NULL, 0, NULL) < 0)
		return;
	endpoints_list(app->rds, app->cfg, c->key.env, c->account, api_on_json, req);
}

/* GET /v1/webhook-endpoints/{id} */
void api_handle_endpoint_get(struct http_req *req)
{
	struct app *app = app_of(req);
	struct api_caller *c = req->auth;

	if (!endpoint_id_ok(req))
		return;
	endpoints_get(app->rds, app->cfg, c->key.env, c->account, req->params[0], on_endpoint, req);
}

/* PATCH /v1/webhook-endpoints/{id}: any of url, description, eventTypes,
 * enabled, headers. enabled: true sends what it kept while disabled. */
void api_handle_endpoint_update(struct http_req *req)
{
	struct app *app = app_of(req);
	struct api_caller *c = req->auth;
	struct endpoint_spec spec;

	if (!endpoint_id_ok(req) || read_spec(req, 0, &spec) < 0)
		return;
	endpoints_update(app->rds, app->cfg, c->key.env, c->account, req->params[0], &spec,
			 on_endpoint, req);
	endpoint_spec_free(&spec);
}

/* DELETE /v1/webhook-endpoints/{id} */
void api_handle_endpoint_delete(struct http_req *req)
{
	struct app *app = app_of(req);
	struct api_caller *c = req->auth;

	if (!endpoint_id_ok(req))
		return;
	endpoints_delete(app->rds, app->cfg, c->key.env, c->account, req->params[0], on_endpoint,
			 req);
}

/* POST /v1/webhook-endpoints/{id}/rotate-secret {graceSeconds?}: a new
 * secret, shown once; the previous one signs beside it for the grace. */
void api_handle_endpoint_rotate(struct http_req *req)
{
	struct app *app = app_of(req);
	struct api_caller *c = req->auth;
	yajl_val body = NULL;
	char err[1024];
	long grace;

	if (!endpoint_id_ok(req))
		return;
	if (req->body_len &&
	    json_parse_object(req->body, req->body_len, &body, err, sizeof(err)) < 0) {
		http_reply_error(req, 400, "%s", err);
		return;
	}
	if (endpoint_parse_rotate(body, &grace, err, sizeof(err)) < 0)
		http_reply_error(req, 400, "%s", err);
	else
		endpoints_rotate(app->rds, app->cfg, c->key.env, c->account, req->params[0], grace,
				 on_endpoint, req);
	yajl_tree_free(body);
}

static void on_pinged(void *ud, const struct ping_result *r)
{
	struct http_req *req = ud;
	yajl_gen g = json_gen_new();

	json_open(g);
	json_str(g, "endpoint");
	json_str(g, req->params[0]);
	json_str(g, "id");
	json_str(g, r->id);
	json_str(g, "delivered");
	json_bool(g, r->delivered);
	json_str(g, "status");
	if (r->status > 0)
		json_int(g, r->status);
	else
		json_null(g);
	json_str(g, "durationMs");
	json_int(g, r->duration_ms);
	json_str(g, "error");
	json_str_or_null(g, r->error);
	json_str(g, "response");
	json_str_or_null(g, r->response);
	json_close(g);
	http_reply_gen(req, 200, g);
	yajl_gen_free(g);
}

static void on_target(void *ud, int result, const struct endpoint_target *t, const char *err)
{
	struct http_req *req = ud;
	struct app *app = app_of(req);
	struct api_caller *c = req->auth;

	if (result < 0)
		api_reply_failure(req, err);
	else if (result != 0)
		http_reply_error(req, 404, "webhook endpoint not found: %s", req->params[0]);
	else
		ping_send(app->pings, t, c->account, on_pinged, req);
}

/* POST /v1/webhook-endpoints/{id}/test: a signed EVENT:ENDPOINT_TEST sent
 * now (whether the endpoint is enabled or not), answered with what came of
 * it: {delivered, status, durationMs, error, response}. */
void api_handle_endpoint_test(struct http_req *req)
{
	struct app *app = app_of(req);
	struct api_caller *c = req->auth;

	if (!endpoint_id_ok(req))
		return;
	endpoints_target(app->rds, app->cfg, c->key.env, c->account, req->params[0], on_target,
			 req);
}
