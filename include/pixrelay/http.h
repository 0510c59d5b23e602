/* http: the evhttp server, one route table, the spec's response envelope.
 *
 * Every request gets a `struct http_req` that lives until its reply is sent.
 * The module matches the route (404/405), checks the body size (413) and
 * type (415), lets the application authenticate it, and calls the handler.
 * Handlers answer exactly once with http_reply_* (from any later callback).
 * One log line is written per request when its reply is sent.
 */
#ifndef PIXRELAY_HTTP_H
#define PIXRELAY_HTTP_H

#include "pixrelay/config.h"

#include <event2/event.h>
#include <event2/http.h>
#include <stddef.h>
#include <stdint.h>
#include <yajl/yajl_gen.h>

#define HTTP_MAX_PARAMS 4

struct http_req;
struct http_server;

enum http_route_flags {
	HTTP_AUTH = 1u << 0,	  /* needs a valid API key */
	HTTP_ACTS_AS = 1u << 1,	  /* master keys must name the account with X-Account-ID */
	HTTP_JSON_BODY = 1u << 2, /* the body must be a JSON object */
	HTTP_ENVELOPE = 1u << 3,  /* errors use the spec's envelope (all /v1 routes) */
	HTTP_UPLOAD = 1u << 4,	  /* the body may carry files: max-upload instead of max-body */
};

struct http_route {
	enum evhttp_cmd_type method;
	const char *pattern; /* "/v1/charge/pix/{id}": {x} matches one path segment */
	void (*handler)(struct http_req *req);
	unsigned flags;
};

/* Called before the handler of an HTTP_AUTH route; it must end with either
 * http_next(req) or an http_reply_*. */
typedef void (*http_auth_fn)(struct http_req *req);

struct http_req {
	struct evhttp_request *ev;
	struct http_server *srv;
	const struct http_route *route;
	const char *params[HTTP_MAX_PARAMS]; /* path parameters, in pattern order */
	char *path;			     /* decoded path, owned */
	const char *body;		     /* request body (NUL-terminated copy) */
	size_t body_len;
	char request_id[65];
	char client[64]; /* client address (X-Forwarded-For when from a trusted proxy) */
	char scheme[8];	 /* http or https (X-Forwarded-Proto when trusted) */
	uint64_t start_us;
	void *app;   /* application state given to http_new, borrowed */
	void *auth;  /* set by the auth hook; freed with free() after the reply */
	void *state; /* handler's own state; the handler frees it before replying */
	int replied;
};

/* Create the server and bind cfg->listen. Routes and app are borrowed for the
 * server's life. Returns NULL after logging why it could not bind. */
struct http_server *http_new(struct event_base *base, const struct config *cfg,
			     const struct http_route *routes, size_t nroutes, http_auth_fn auth,
			     void *app);
/* Stop accepting new connections (requests in flight go on). */
void http_stop_accepting(struct http_server *srv);
/* Requests received and not yet answered. */
unsigned http_inflight(const struct http_server *srv);
/* Client connections open now. */
unsigned http_connections(const struct http_server *srv);
/* The port actually bound (useful with port 0). */
int http_port(const struct http_server *srv);
void http_free(struct http_server *srv);

/* Continue to the route's handler after authentication. */
void http_next(struct http_req *req);

/* A request header, or NULL. Borrowed until the reply. */
const char *http_header(struct http_req *req, const char *name);
/* The decoded value of query parameter `name`, or NULL; owned by the caller. */
char *http_query(struct http_req *req, const char *name);

/* Reply with a JSON body exactly as given. */
void http_reply_raw(struct http_req *req, int status, const char *json, size_t len);
/* Reply with the envelope {"error":null,"status":<status>,"data":<data json>}. */
void http_reply_data(struct http_req *req, int status, const char *data_json, size_t len);
/* Reply with the envelope {"error":"<msg>","status":<status>,"data":[]}.
 * (Routes without HTTP_ENVELOPE get {"error":"<msg>","status":<status>}.) */
void http_reply_error(struct http_req *req, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Reply with a generator's buffer as the envelope's data; frees nothing. */
void http_reply_gen(struct http_req *req, int status, yajl_gen g);
/* Reply with other bytes (images): content type and cache header given. */
void http_reply_bytes(struct http_req *req, int status, const char *content_type,
		      const char *cache_control, const void *data, size_t len);
/* Add a response header before replying. */
void http_add_header(struct http_req *req, const char *name, const char *value);

#endif
