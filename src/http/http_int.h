/* http_int.h: what the files of src/http/ share, and nothing outside them sees.
 *
 * The server (server.c) owns its connections, in a list. A connection
 * (conn.c) owns its socket, its input buffer, its output evbuffer, its four
 * events and the one request it is on; pipelined requests wait in the input
 * buffer. A request is `struct req`, whose first member is the application's
 * `struct http_req`: it is made from its head and routed in request.c, its
 * body is kept in body.c, and it lives until its answer is queued (reply.c)
 * or its stream ends (stream.c). It may outlive its socket: the connection
 * is then `dead` and kept for it until the application lets go.
 */
#ifndef PIXRELAY_HTTP_INT_H
#define PIXRELAY_HTTP_INT_H

#include "pixrelay/core/netaddr.h"
#include "pixrelay/core/unixid.h"
#include "pixrelay/http/http.h"
#include "pixrelay/http/httpparse.h"

#include <event2/event.h>
#include <event2/event_struct.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/time.h>
#include <time.h>

enum cstate {
	CS_HEAD,    /* reading a request head (or idle between requests) */
	CS_BODY,    /* reading its body */
	CS_APP,	    /* the application has the request */
	CS_STREAM,  /* a streamed reply is going on */
	CS_CLOSING, /* sending the last answer, then closing */
	CS_LINGER,  /* answer sent, write side shut: dropping input until EOF */
};

struct conn;

/* A request: the public part and what only this module sees. */
struct req {
	struct http_req pub;
	struct conn *conn;
	char *scratch; /* path copy cut into segments for params */
	char *body;
	size_t body_cap;
	int body_mapped;
	size_t reserved; /* bytes counted in srv->body_bytes */
	char *hdrs;	 /* response headers added by the application */
	size_t hdrs_len, hdrs_cap;
	int has_cache_control, app_close;
	char **combined; /* values of repeated headers, joined with ", " */
	unsigned ncombined;
	int dispatched; /* handed to the application (counted in inflight) */
	int stream;
	int stream_head; /* HEAD on a stream: nothing but the head is sent */
	http_gone_fn gone;
	void *gone_arg;
	int gone_state; /* 0, 1 pending, 2 called */
	int in_gone;
	int ended;
	int status;
	uint64_t bytes_in, bytes_out;
};

struct conn {
	struct http_server *srv;
	struct conn *prev, *next;
	int fd;
	int refused; /* over max-connections: 503, then closed */
	enum cstate state;
	struct event rev, wev, tmo, resume;
	int rev_on, wev_on;
	int app_readable; /* readable while the application had the request */
	uint64_t tmo_at;  /* when the timer fires (ms), 0 = not armed */
	char *ibuf;
	size_t ilen;	/* bytes in ibuf */
	size_t req_off; /* the current request starts here */
	size_t pos;	/* next unconsumed byte (body phase and after) */
	struct evbuffer *out;
	struct httpp parser;
	struct httpp_head head;
	struct httpp_chunked chunk;
	struct req *req;
	char peer[64];	       /* its address, or "uid:N" on a Unix socket */
	long peer_uid;	       /* SO_PEERCRED's uid on a Unix socket; -1 on TCP */
	int bank_proxy;	       /* that uid is root or one of the listener's proxies */
	uint64_t deadline;     /* hard deadline of the phase (ms), 0 = none */
	uint64_t idle_ms;      /* read inactivity allowed in the phase, 0 = none */
	uint64_t send_by;      /* the queued answer must be sent by then, 0 = none */
	uint64_t last_in;      /* ms */
	uint64_t last_out;     /* ms */
	uint64_t req_start_us; /* first byte of the current request */
	int started;	       /* a byte of the current request arrived */
	int close_after;       /* close once the output is sent */
	int linger;	       /* ... after reading what the client still sends */
	int eof;	       /* the client sent its end: nothing more to read */
	int processing;	       /* inside conn_process */
	int dead;	       /* socket closed; kept for the application's request */
	int freeing;
	size_t lingered;
};

struct http_server {
	struct event_base *base;
	const struct config *cfg;
	const struct http_route *routes;
	size_t nroutes;
	http_auth_fn auth;
	void *app;
	struct netaddr_list trusted;
	char *unix_path; /* a Unix-socket listener's file, while it is ours; else NULL */
	dev_t unix_dev;	 /* ... and its identity, so that only ours is removed */
	ino_t unix_ino;
	struct unixid_uids proxies; /* a Unix-socket listener's proxies besides root */
	int lfd;
	struct event *lev, *pause_timer;
	int paused;
	uint64_t last_accept_log;
	unsigned accept_errors; /* since the last log line */
	struct conn *conns;
	unsigned nconns, nrefused, inflight;
	size_t body_bytes;
	int draining;
	int port;
	http_observer_fn observer;
	void *observer_arg;
	time_t date_sec;
	char date[40];
};

/* ---- time ---- */

static inline uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* ---- conn.c: a connection ---- */

/* A socket accept() gave: a new connection (answered 503 and closed when
 * over max-connections). Takes `fd`. */
void http_conn_accepted(struct http_server *srv, int fd, const struct sockaddr_storage *ss);
/* Free the connection and its request now. */
void http_conn_free(struct conn *c);
/* The socket is done (error, timeout, client gone): close it. The
 * connection is freed, unless the application holds its request: then it
 * stays, dead, until the answer (a stream's `gone` is called from the
 * loop). */
void http_conn_kill(struct conn *c);
/* After any work on a connection: send, close when due, update events and
 * the timer. The connection may be freed. */
void http_conn_settle(struct conn *c);
/* Note that output is about to be queued: an empty buffer starts the send
 * deadline. */
void http_conn_out_mark(struct conn *c);
/* True when the connection may carry another request after this one. */
bool http_conn_may_keep(struct req *r);
/* The request is answered: free it and make the connection ready for the
 * next one (or for closing). The connection may be freed. */
void http_conn_request_done(struct conn *c, struct req *r, int keep);

/* ---- request.c: requests, their heads and routes ---- */

/* The public method for the parser's; 0 when it was not understood. */
enum http_method http_method_of(enum httpp_method m);
/* A request on `c` (its start, client and scheme from the connection);
 * the caller attaches it as c->req. */
struct req *http_req_new(struct conn *c);
/* Free the request, its body and all it holds; NULL is fine. */
void http_req_free(struct req *r);
/* The head is in: set up the request and its body (or answer it). */
void http_req_head_done(struct conn *c);
/* Hand the complete request to the application (or answer 404, 405, 415). */
void http_req_dispatch(struct conn *c);

/* ---- body.c: request bodies ---- */

/* Make room for `cap` bytes of body, contents kept. */
void http_body_grow(struct req *r, size_t cap);
/* Return the body's memory and its share of max-body-memory. */
void http_body_release(struct req *r);
/* Count `n` more bytes of body against max-body-memory. Returns -1 when they
 * do not fit while other bodies are held (one body alone always fits). */
int http_body_budget(struct req *r, size_t n);
/* http_body_budget for the request of `c`, answering it 503 ("too many
 * request bodies in progress") when the bytes do not fit. Returns -1 then. */
int http_body_reserve(struct conn *c, size_t n);
/* Take body bytes from the input buffer. True when more are needed, false
 * when the request was dispatched or answered. */
bool http_body_take(struct conn *c);

/* ---- reply.c: answers ---- */

/* Queue the head of an answer of `status` (Content-Length `clen` unless it
 * is negative) and count it as the request's bytes_out. */
void http_reply_queue_head(struct req *r, int status, const char *ctype, long clen, int keep,
			   int chunked);
/* Log the request's line and tell the observer. */
void http_reply_report(struct req *r);
/* Answer before the application saw the request (malformed, too large,
 * too slow, over capacity), then close the connection. */
void http_reply_early_error(struct conn *c, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---- stream.c: streamed replies ---- */

/* Tell the application its stream's client is gone (and finish the stream
 * if it ended it meanwhile). */
void http_stream_call_gone(struct conn *c);

#endif
