/* api_events: the handlers of postback events.
 *
 * Reading one event, listing them, replaying one or many, and the entry of
 * the live stream (GET /v1/events/stream), whose connection evstream.c then
 * keeps. Delivery itself is the dispatcher's; these only kick it.
 */
#include "api_int.h"

#include "pixrelay/store/events.h"
#include "pixrelay/api/evstream.h"
#include "pixrelay/pix/keyspace.h"
#include "pixrelay/pix/reqbody.h"
#include "pixrelay/core/json.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/core/timefmt.h"

#include <stdlib.h>
#include <string.h>

static void on_event_read(void *ud, int result, const char *json, const char *err)
{
	api_reply_read(ud, result, EVENTS_NOT_FOUND, "event", json, err);
}

/* True when the path names an event id; else 404. */
static bool event_id_ok(struct http_req *req)
{
	if (strncmp(req->params[0], "evt_", 4) != 0 || ks_shard_of(req->params[0]) < 0) {
		http_reply_error(req, 404, "event not found: %.40s", req->params[0]);
		return false;
	}
	return true;
}

/* GET /v1/events/stream[?since=TIME|EVENT_ID]: the caller's account's events
 * as they are created, as Server-Sent Events; Last-Event-ID (or since)
 * resumes (evstream.h). */
void api_handle_events_stream(struct http_req *req)
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
	/* skip and the key's digest are copied at once */
	evstream_open(app->streams, req, c->key.env, c->account, c->key.sha256, from_ms, skip);
	free(since);
}

/* GET /v1/events/{id} */
void api_handle_event_get(struct http_req *req)
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
	yajl_val body = req->state;
	const char *asked = YAJL_GET_STRING(json_get(body, "destination"));

	req->state = NULL;
	if (result < 0) {
		api_reply_failure(req, err);
	} else if (result == EVENTS_NOT_FOUND) {
		http_reply_error(req, 404, "event not found: %s", req->params[0]);
	} else if (result == EVENTS_NO_DESTINATION) {
		http_reply_error(req, 404, "event %s has no delivery to webhook endpoint %s",
				 req->params[0], asked ? asked : "?");
	} else {
		yajl_gen g = json_gen_new();
		json_open(g);
		json_str(g, "id");
		json_str(g, req->params[0]);
		json_str(g, "requeued");
		json_bool(g, result == 0);
		/* where it goes again, when an endpoint is concerned (an event of an
		 * account without endpoints is answered as before) */
		if (asked || (json && strstr(json, "wep_"))) {
			json_str(g, "destinations");
			json_open_array(g);
			for (const char *at = json ? json : ""; *at;) {
				size_t n = strcspn(at, " ");
				json_strn(g, at, n);
				at += n + (at[n] == ' ');
			}
			json_close_array(g);
		}
		json_close(g);
		dispatch_kick(app->dispatch, req->params[0]);
		http_reply_gen(req, 200, g);
		yajl_gen_free(g);
	}
	yajl_tree_free(body);
}

/* POST /v1/events/{id}/replay [{"destination": "postback" | "wep_..."}]:
 * deliver again, same id, fresh attempt budget; by default wherever it is
 * dead (its postbackUrl when it is dead nowhere). */
void api_handle_event_replay(struct http_req *req)
{
	struct app *app = app_of(req);
	struct api_caller *c = req->auth;
	yajl_val body = NULL;
	const char *destination = NULL;
	char err[1024];

	if (!event_id_ok(req))
		return;
	if (req->body_len &&
	    json_parse_object(req->body, req->body_len, &body, err, sizeof(err)) < 0) {
		http_reply_error(req, 400, "%s", err);
		return;
	}
	if (reqbody_event_replay(body, &destination, err, sizeof(err)) < 0) {
		http_reply_error(req, 400, "%s", err);
		yajl_tree_free(body);
		return;
	}
	req->state = body;
	events_replay(app->rds, app->cfg, c->key.env, c->account, req->params[0], destination,
		      on_event_replayed, req);
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
		api_reply_failure(req, err);
	else
		http_reply_data(req, 200, json, strlen(json));
}

/* GET /v1/events?state=&type=&since=&until=&limit=&cursor= */
void api_handle_events_list(struct http_req *req)
{
	static const char *const names[] = {"state", "type", "since", "until", "limit", "cursor"};
	struct app *app = app_of(req);
	struct api_caller *c = req->auth;
	struct list_query *q = mem_new(struct list_query);
	struct event_filter f;

	memset(&f, 0, sizeof(f));
	f.limit = 20;
	/* like every listing: an unknown or repeated parameter is refused */
	if (api_query_params(req, names, 6, q->values) < 0) {
		free(q);
		return;
	}
	req->state = q;
	for (int i = 0; i < 6; i++) {
		char err[1024];

		if (reqbody_filter_field(names[i], q->values[i], &f, 100, err, sizeof(err)) < 0) {
			/* the reply ends req: state first */
			req->state = NULL;
			api_query_free(q->values, 6);
			free(q);
			http_reply_error(req, 400, "%s", err);
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
		api_reply_failure(req, err);
		return;
	}
	dispatch_kick(app_of(req)->dispatch, ((struct api_caller *)req->auth)->account);
	http_reply_data(req, 200, json, strlen(json));
}

/* POST /v1/events/replay {"state": "dead", "type", "since", "until", "limit"}:
 * deliver again every event that matches (state defaults to dead). */
void api_handle_events_replay(struct http_req *req)
{
	struct app *app = app_of(req);
	struct api_caller *c = req->auth;
	struct event_filter f;
	yajl_val body = NULL;
	char err[1024];

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
