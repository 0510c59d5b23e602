/* http: pixrelay's HTTP/1.1 server, one route table, the spec's response envelope.
 *
 * A small server on libevent (a listening socket, and per connection a read
 * event, a write event and one timer) with the request parser of httpparse.
 * Every connection counts against max-connections from accept. A request
 * head must arrive within http-header-timeout and its body within
 * http-body-timeout, a response must be taken within http-send-timeout, and
 * a client silent for http-timeout is cut off; the route's body cap
 * (max-body, or max-upload for HTTP_UPLOAD routes) is applied from
 * Content-Length before a byte of the body is read, and to chunked bodies as
 * they arrive. Bodies over all connections are bounded by max-body-memory,
 * and large ones live in their own mappings, returned at once when the
 * request ends. Requests on a connection are read one at a time and answered
 * in order (pipelining works, and a client that does not read its answers
 * stops being read). When file descriptors run out, accepting pauses for a
 * moment instead of spinning, with one log line per 10 s at most.
 *
 * Every request gets a `struct http_req` that lives until its reply is sent.
 * The module refuses malformed requests (400, 414, 431, 417, 501, 505),
 * matches the route (404/405), checks the body size (413) and type (415),
 * lets the application authenticate it, and calls the handler. Handlers
 * answer exactly once with http_reply_* or a stream (from any later
 * callback). Every error answer is JSON: the envelope, or {error,status} on
 * routes without HTTP_ENVELOPE. HEAD is answered like GET without the body.
 * One log line is written per request when its reply is sent.
 */
#ifndef PIXRELAY_HTTP_H
#define PIXRELAY_HTTP_H

#include "pixrelay/core/config.h"
#include "pixrelay/core/unixid.h"

#include <event2/event.h>
#include <stddef.h>
#include <stdint.h>
#include <yajl/yajl_gen.h>

/* A request's method, one bit each, so that a route names the methods it
 * serves as a mask. 0: a method the parser did not know. */
enum http_method {
	HTTP_GET = 1 << 0,
	HTTP_POST = 1 << 1,
	HTTP_HEAD = 1 << 2,
	HTTP_PUT = 1 << 3,
	HTTP_DELETE = 1 << 4,
	HTTP_OPTIONS = 1 << 5,
	HTTP_TRACE = 1 << 6,
	HTTP_CONNECT = 1 << 7,
	HTTP_PATCH = 1 << 8,
};

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
	enum http_method method;
	const char *pattern; /* "/v1/charge/pix/{id}": {x} matches one path segment */
	void (*handler)(struct http_req *req);
	unsigned flags;
};

/* Called before the handler of an HTTP_AUTH route; it must end with either
 * http_next(req) or an http_reply_*. */
typedef void (*http_auth_fn)(struct http_req *req);

struct http_req {
	struct http_server *srv;
	const struct http_route *route;	     /* NULL until a route matched */
	enum http_method method;	     /* 0 when it was not understood */
	const char *params[HTTP_MAX_PARAMS]; /* path parameters, in pattern order */
	const char *path; /* the path as sent (percent-escapes kept), NULL if unparsed */
	const char *body; /* request body, NUL-terminated; "" when none */
	size_t body_len;
	char request_id[65];
	char client[64]; /* client address (X-Forwarded-For when from a trusted proxy) */
	char scheme[8];	 /* http or https (X-Forwarded-Proto when trusted) */
	int via_proxy;	 /* the peer is a trusted proxy: what it says of the client is believed */
	long peer_uid;	 /* a Unix-socket peer's uid (SO_PEERCRED); -1 on TCP */
	int bank_proxy;	 /* on the Unix-socket listener (the bank door), the peer is root or one
			    of its proxy uids: what it says of the client (X-Forwarded-For,
			    X-Client-Cert) may be believed; never on TCP */
	uint64_t start_us;
	void *app;   /* application state given to http_new, borrowed */
	void *auth;  /* set by the auth hook; freed with free() after the reply */
	void *state; /* handler's own state; the handler frees it before replying */
	int replied;
};

/* Create the server and bind `listen` (host:port). Routes and app are
 * borrowed for the server's life. Returns NULL after logging why it could not
 * bind. */
struct http_server *http_new(struct event_base *base, const struct config *cfg, const char *listen,
			     const struct http_route *routes, size_t nroutes, http_auth_fn auth,
			     void *app);
/* What a listener on a Unix socket needs besides http_new's arguments. */
struct http_unix_opts {
	const char *group; /* the socket file's group, a name or a number; "" or NULL: this
			      process's (changing it needs membership, or root) */
	const struct unixid_uids *proxies; /* peers marked bank_proxy besides root; NULL:
					      root alone; copied */
};

/* Create a server on a Unix socket at `path`, mode 0660 and the group of
 * `opts`, that knows each peer's uid (SO_PEERCRED). A socket file that no
 * process listens on is replaced; anything else at `path` (a socket in use,
 * another file) is refused. The file is removed when the server stops
 * accepting (unless another has replaced it meanwhile). Returns NULL with
 * why in err. */
struct http_server *http_new_unix(struct event_base *base, const struct config *cfg,
				  const char *path, const struct http_unix_opts *opts,
				  const struct http_route *routes, size_t nroutes,
				  http_auth_fn auth, void *app, char *err, size_t errlen);
/* Stop accepting new connections (requests in flight go on; idle keep-alive
 * connections are closed, later replies close theirs). */
void http_stop_accepting(struct http_server *srv);
/* Requests received and not yet answered (streams excluded). */
unsigned http_inflight(const struct http_server *srv);
/* Client connections open now. */
unsigned http_connections(const struct http_server *srv);
/* The port actually bound (useful with port 0); 0 on a Unix socket. */
int http_port(const struct http_server *srv);
/* Close every connection and free the server. Requests not yet answered are
 * freed too (the application must not touch them afterwards); streams get
 * their `gone` callback first. */
void http_free(struct http_server *srv);

/* Continue to the route's handler after authentication. */
void http_next(struct http_req *req);

/* A request header, or NULL. Borrowed until the reply. */
const char *http_header(struct http_req *req, const char *name);
/* The decoded value of query parameter `name`, or NULL; owned by the caller. */
char *http_query(struct http_req *req, const char *name);
/* The query string as sent (after '?', escapes kept), or NULL; borrowed
 * until the reply. httpp_query_each walks it. */
const char *http_query_string(struct http_req *req);

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
/* "GET", "POST", ... for a method; "-" when not understood (0). */
const char *http_method_name(enum http_method m);

/* Add a response header before replying. A name or value with CR, LF or
 * NUL is refused (logged as a bug). "Connection: close" closes the
 * connection after the reply. */
void http_add_header(struct http_req *req, const char *name, const char *value);

/* ---- streamed replies (Server-Sent Events and the like) ---- */

/* Bytes a stream may have waiting for its client; a write beyond them ends
 * the stream (the client is too slow). */
#define HTTP_STREAM_MAX_PENDING (1024 * 1024)

/* Called once, from the event loop, when a stream's client went away (closed
 * the connection, failed a write, left HTTP_STREAM_MAX_PENDING unread, or
 * made no progress for http-timeout while data waited), or when the server
 * is freed. The application must then call http_stream_end (here or later);
 * after http_stream_end it is not called. */
typedef void (*http_gone_fn)(struct http_req *req, void *arg);

/* Answer `status` with a body that follows in pieces: HTTP/1.1 clients get
 * chunked transfer coding, HTTP/1.0 clients a body ended by closing. The
 * request stays owned by the application until http_stream_end; it is exempt
 * from the request deadlines (and from http_inflight) but bounded by its
 * write buffer. `gone` may be NULL. Returns 0, or -1 when the request was
 * already answered (a bug, logged). */
int http_stream_begin(struct http_req *req, int status, const char *content_type, http_gone_fn gone,
		      void *arg);
/* Queue `len` bytes of the stream and start sending them. Returns the bytes
 * now waiting for the client (backpressure: the application may skip or
 * coalesce while this is high), or -1 when the client is gone (and `gone` is
 * or was called). HEAD requests: nothing is sent, 0 is returned. */
long http_stream_write(struct http_req *req, const void *data, size_t len);
/* End the stream and release the request (the connection may carry another
 * request). Always call it exactly once after http_stream_begin; `req` is
 * invalid afterwards. */
void http_stream_end(struct http_req *req);

/* ---- observation (metrics) ---- */

/* One answered request. */
struct http_observation {
	const char *route;	 /* the route's pattern, or NULL when none matched */
	enum http_method method; /* 0 when the method was not understood */
	int status;
	uint64_t duration_us;	 /* first byte of the request to the reply queued (streams:
				    to their end) */
	uint64_t request_bytes;	 /* head and body as received (chunk framing included) */
	uint64_t response_bytes; /* head and body as queued */
};
typedef void (*http_observer_fn)(void *arg, const struct http_observation *o);

/* Call `fn(arg, ...)` once per answered request (every status, parse errors
 * included), after its reply was queued. NULL stops observing. */
void http_set_observer(struct http_server *srv, http_observer_fn fn, void *arg);

#endif
