/* conn.c: one client connection of the HTTP server: reading into its input
 * buffer, the parse loop over pipelined requests (one at a time, in order,
 * and only while the client takes its answers), writing, the read and write
 * events, the one timer for every deadline (head, body, send, idle),
 * keep-alive, lingering after the last answer, and closing; on a Unix
 * socket, the peer's uid. The request itself is request.c (its head, route
 * and dispatch) and body.c (its body); answers are reply.c and stream.c;
 * accepting is server.c.
 */
#include "http_int.h"

#include "pixrelay/core/ids.h"
#include "pixrelay/core/log.h"
#include "pixrelay/core/mem.h"

#include <arpa/inet.h>
#include <errno.h>
#include <event2/buffer.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* Input buffer of a connection: room for a whole head wherever the request
 * starts in it, and for reading a chunked body after the head. */
#define HEAD_MAX 16384
#define BODY_ROOM 16384
#define IBUF_SIZE (2 * HEAD_MAX + BODY_ROOM)
/* The next pipelined request is taken only while less than this waits to
 * be sent, so a client that does not read cannot make the server buffer. */
#define OUT_LOW_WATER (64 * 1024)
/* Requests handled in one go on a connection before others get a turn. */
#define REQUESTS_PER_TURN 16
/* After the last answer: how long and how much to read (and drop) before
 * closing, so the answer is not destroyed by a reset. */
#define LINGER_MS 2000
#define LINGER_BYTES (1024 * 1024)
/* Connections over max-connections answered 503 at the same time; more are
 * closed without an answer. */
#define REFUSED_MAX 64

/* Note that output is about to be queued: an empty buffer starts the send
 * deadline. */
void http_conn_out_mark(struct conn *c)
{
	if (evbuffer_get_length(c->out) == 0) {
		uint64_t now = now_ms();
		c->send_by = now + (uint64_t)c->srv->cfg->http_send_timeout * 1000u;
		c->last_out = now;
	}
}

bool http_conn_may_keep(struct req *r)
{
	struct conn *c = r->conn;

	return c->state != CS_HEAD && c->head.keep_alive && !c->close_after && !r->app_close &&
	       !c->srv->draining;
}

/* Free a connection now, or once conn_process is off the stack. */
static void conn_release(struct conn *c);

/* The request is answered: free it and make the connection ready for the
 * next one (or for closing). */
void http_conn_request_done(struct conn *c, struct req *r, int keep)
{
	struct http_server *srv = c->srv;

	if (r->dispatched && !r->stream)
		srv->inflight--;
	http_req_free(r);
	c->req = NULL;
	if (c->dead) {
		conn_release(c);
		return;
	}
	if (!keep || c->state == CS_BODY) {
		/* linger only when the client may still be sending: a request
		 * refused before its end (or not parsed), or bytes after it */
		c->linger = c->close_after || c->state == CS_BODY || c->pos < c->ilen;
		c->close_after = 1;
		c->state = CS_CLOSING;
		c->deadline = 0;
		c->idle_ms = 0;
	} else {
		c->req_off = c->pos;
		if (c->req_off == c->ilen) {
			c->req_off = c->ilen = 0;
		} else if (c->req_off > IBUF_SIZE - HEAD_MAX - BODY_ROOM) {
			memmove(c->ibuf, c->ibuf + c->req_off, c->ilen - c->req_off);
			c->ilen -= c->req_off;
			c->req_off = 0;
		}
		c->pos = c->req_off;
		httpp_init(&c->parser, NULL);
		c->state = CS_HEAD;
		c->started = 0;
		c->req_start_us = 0;
		c->deadline = 0;
		c->idle_ms = (uint64_t)srv->cfg->http_timeout * 1000u;
		c->last_in = now_ms();
	}
	if (!c->processing) {
		/* answered from a later callback: send now, and take the next
		 * pipelined request on the next turn of the loop */
		if (c->state == CS_HEAD && c->ilen > c->req_off)
			event_active(&c->resume, EV_TIMEOUT, 1);
		http_conn_settle(c);
	}
}

static void conn_events(struct conn *c)
{
	int want_r = 0, want_w = 0;

	if (!c->dead) {
		size_t pending = evbuffer_get_length(c->out);
		switch (c->state) {
		case CS_HEAD:
			want_r = pending < OUT_LOW_WATER && !c->eof;
			break;
		case CS_BODY:
			want_r = !c->eof;
			break;
		case CS_STREAM:
		case CS_LINGER:
			want_r = 1;
			break;
		case CS_APP:
			/* reading stays armed while the application works (two
			 * epoll_ctl calls less per request); only bytes or an end
			 * that arrive meanwhile turn it off until the answer */
			want_r = c->rev_on && !c->app_readable;
			break;
		case CS_CLOSING:
			break;
		}
		want_w = pending > 0 && c->state != CS_LINGER;
	}
	if (want_r != c->rev_on) {
		if (want_r)
			event_add(&c->rev, NULL);
		else
			event_del(&c->rev);
		c->rev_on = want_r;
	}
	if (want_w != c->wev_on) {
		if (want_w)
			event_add(&c->wev, NULL);
		else
			event_del(&c->wev);
		c->wev_on = want_w;
	}
}

/* Arm the timer for the earliest deadline that applies now. */
static void conn_arm(struct conn *c)
{
	uint64_t t = 0, now;
	size_t pending;

#define EARLIEST(x)                                                                                \
	do {                                                                                       \
		uint64_t x_ = (x);                                                                 \
		if (x_ && (!t || x_ < t))                                                          \
			t = x_;                                                                    \
	} while (0)
	if (!c->dead) {
		pending = evbuffer_get_length(c->out);
		EARLIEST(c->deadline);
		if (c->idle_ms)
			EARLIEST(c->last_in + c->idle_ms);
		if (pending) {
			if (c->state != CS_STREAM)
				EARLIEST(c->send_by);
			EARLIEST(c->last_out + (uint64_t)c->srv->cfg->http_timeout * 1000u);
		}
	}
#undef EARLIEST
	if (!t) {
		if (c->tmo_at)
			event_del(&c->tmo);
		c->tmo_at = 0;
		return;
	}
	if (c->tmo_at && c->tmo_at <= t)
		return; /* it fires earlier and looks again */
	now = now_ms();
	{
		uint64_t ms = t > now ? t - now : 0;
		struct timeval tv = {(time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000};
		event_add(&c->tmo, &tv);
	}
	c->tmo_at = t;
}

void http_conn_free(struct conn *c)
{
	struct http_server *srv = c->srv;

	if (c->req) {
		if (c->req->dispatched && !c->req->stream)
			srv->inflight--;
		http_req_free(c->req);
	}
	if (c->prev)
		c->prev->next = c->next;
	else
		srv->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	event_del(&c->rev);
	event_del(&c->wev);
	event_del(&c->tmo);
	event_del(&c->resume);
	if (c->fd >= 0)
		close(c->fd);
	if (c->refused)
		srv->nrefused--;
	else
		srv->nconns--;
	free(c->ibuf);
	if (c->out)
		evbuffer_free(c->out);
	free(c);
	if (srv->paused && srv->lev) {
		/* a descriptor was freed: try accepting again at once */
		srv->paused = 0;
		event_del(srv->pause_timer);
		event_add(srv->lev, NULL);
	}
}

static void conn_release(struct conn *c)
{
	if (c->processing) {
		c->freeing = 1;
		return;
	}
	http_conn_free(c);
}

/* The socket is done (error, timeout, client gone). A request the
 * application holds keeps the connection object until it is answered; a
 * stream's `gone` is called from the loop. */
void http_conn_kill(struct conn *c)
{
	struct req *r = c->req;

	if (!c->dead) {
		c->dead = 1;
		event_del(&c->rev);
		event_del(&c->wev);
		event_del(&c->tmo);
		c->rev_on = c->wev_on = 0;
		c->tmo_at = 0;
		close(c->fd);
		c->fd = -1;
	}
	if (r && r->dispatched) {
		if (r->stream && !r->ended && r->gone_state == 0) {
			r->gone_state = 1;
			event_active(&c->resume, EV_TIMEOUT, 1);
		}
		return;
	}
	conn_release(c);
}

/* Write what is queued. Returns -1 when the socket failed. */
static int conn_flush(struct conn *c)
{
	while (evbuffer_get_length(c->out) > 0) {
		int n = evbuffer_write(c->out, c->fd);
		if (n > 0) {
			c->last_out = now_ms();
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0 || errno == EAGAIN || errno == EWOULDBLOCK)
			return 0;
		return -1;
	}
	c->send_by = 0;
	return 0;
}

/* After any work on a connection: send, close when due, update events and
 * the timer. The connection may be freed. */
void http_conn_settle(struct conn *c)
{
	if (c->dead) {
		if (!c->req || !c->req->dispatched)
			conn_release(c);
		return;
	}
	if (conn_flush(c) < 0) {
		http_conn_kill(c);
		return;
	}
	if (c->state == CS_CLOSING && evbuffer_get_length(c->out) == 0) {
		if (!c->linger) {
			http_conn_kill(c);
			return;
		}
		/* the last answer is out: shut the write side and read what the
		 * client still sends until it closes, so that a reset does not
		 * destroy the answer before it is read */
		shutdown(c->fd, SHUT_WR);
		c->state = CS_LINGER;
		c->deadline = now_ms() + LINGER_MS;
		c->idle_ms = 0;
	}
	conn_events(c);
	conn_arm(c);
}

/* A new request begins on the connection. */
static void request_begin(struct conn *c)
{
	uint64_t now = now_ms();

	c->started = 1;
	c->req_start_us = ids_now_us();
	if (c->deadline == 0)
		c->deadline = now + (uint64_t)c->srv->cfg->http_header_timeout * 1000u;
	c->idle_ms = (uint64_t)c->srv->cfg->http_timeout * 1000u;
}

/* Work through what was read. Returns -1 when the connection was freed. */
static int conn_process(struct conn *c)
{
	int turns = REQUESTS_PER_TURN;

	c->processing = 1;
	while (!c->dead && !c->freeing) {
		if (c->state == CS_HEAD) {
			int rc;
			if (c->ilen == c->req_off && c->eof) {
				c->state = CS_CLOSING;
				c->linger = 0;
				break;
			}
			if (c->ilen == c->req_off || evbuffer_get_length(c->out) >= OUT_LOW_WATER)
				break;
			if (!c->started) {
				if (turns-- == 0) {
					event_active(&c->resume, EV_TIMEOUT, 1);
					break;
				}
				request_begin(c);
			}
			rc = httpp_parse_head(&c->parser, c->ibuf + c->req_off,
					      c->ilen - c->req_off, &c->head);
			if (rc == HTTPP_AGAIN && c->eof) {
				/* a request cut short by the client's end */
				c->state = CS_CLOSING;
				c->linger = 0;
				break;
			}
			if (rc == HTTPP_AGAIN)
				break;
			if (rc == HTTPP_ERROR)
				http_reply_early_error(c, c->parser.status, "%s", c->parser.error);
			else
				http_req_head_done(c);
			continue;
		}
		if (c->state == CS_BODY) {
			if (!http_body_take(c))
				continue;
			if (c->eof) {
				c->state = CS_CLOSING;
				c->linger = 0;
			}
			break;
		}
		break;
	}
	c->processing = 0;
	if (c->freeing) {
		http_conn_free(c);
		return -1;
	}
	return 0;
}

/* Read once from the socket. Returns the bytes read, 0 at end of input,
 * -1 when nothing is there, -2 on error. */
static ssize_t conn_read(struct conn *c)
{
	struct req *r = c->req;
	char *dst;
	size_t room;
	ssize_t n;
	int direct = 0;

	if (!c->ibuf)
		c->ibuf = mem_alloc(IBUF_SIZE);
	if (c->state == CS_BODY && !c->head.chunked && c->pos == c->ilen) {
		/* straight into the body: its bytes are copied only once */
		dst = r->body + r->pub.body_len;
		room = (size_t)c->head.content_length - r->pub.body_len;
		direct = 1;
	} else {
		if (c->state == CS_BODY && c->pos == c->ilen)
			c->ilen = c->pos = c->req_off + c->head.head_len;
		dst = c->ibuf + c->ilen;
		room = IBUF_SIZE - c->ilen;
	}
	if (room == 0) {
		/* cannot happen: the head fits and bodies are taken as they come */
		log_error("BUG: no room to read on a connection");
		return -2;
	}
	n = read(c->fd, dst, room);
	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? -1 : -2;
	if (n == 0)
		return 0;
	c->last_in = now_ms();
	if (direct) {
		r->pub.body_len += (size_t)n;
		r->bytes_in += (uint64_t)n;
	} else {
		c->ilen += (size_t)n;
	}
	return n;
}

static void on_read(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;
	ssize_t n;

	if (c->state == CS_LINGER || c->state == CS_STREAM) {
		char sink[16384];
		n = read(fd, sink, sizeof(sink));
		if (n > 0 && c->state == CS_LINGER && (c->lingered += (size_t)n) < LINGER_BYTES)
			return;
		if (n > 0 && c->state == CS_STREAM) {
			/* a stream is the last exchange of its connection */
			c->close_after = 1;
			if (c->req)
				c->req->app_close = 1;
			return;
		}
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		http_conn_kill(c);
		return;
	}
	if (c->state == CS_APP) {
		c->app_readable = 1; /* read once the answer is out */
		conn_events(c);
		return;
	}
	if (c->state != CS_HEAD && c->state != CS_BODY)
		return;
	n = conn_read(c);
	if (n == -1)
		return;
	if (n == -2 || (n == 0 && c->ilen == c->req_off && evbuffer_get_length(c->out) == 0)) {
		/* the client left (or is done, and nothing is owed to it) */
		http_conn_kill(c);
		return;
	}
	if (n == 0) {
		/* a half-close: what was read is still answered, then the
		 * connection closes */
		c->eof = 1;
	}
	if (conn_process(c) < 0)
		return;
	http_conn_settle(c);
}

static void on_write(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;

	if (conn_flush(c) < 0) {
		http_conn_kill(c);
		return;
	}
	if (c->state == CS_HEAD && c->ilen > c->req_off && conn_process(c) < 0)
		return;
	http_conn_settle(c);
}

static void on_resume(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;

	if (c->dead) {
		if (c->req && c->req->gone_state == 1)
			http_stream_call_gone(c);
		return;
	}
	if (conn_process(c) < 0)
		return;
	http_conn_settle(c);
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;
	struct http_server *srv = c->srv;
	uint64_t now = now_ms(), idle = (uint64_t)srv->cfg->http_timeout * 1000u;
	int late_in;

	c->tmo_at = 0;
	if (evbuffer_get_length(c->out) > 0 &&
	    ((c->state != CS_STREAM && c->send_by && now >= c->send_by) ||
	     now >= c->last_out + idle)) {
		/* the client does not take its answer */
		http_conn_kill(c);
		return;
	}
	late_in =
	    (c->deadline && now >= c->deadline) || (c->idle_ms && now >= c->last_in + c->idle_ms);
	if (late_in) {
		if (!(c->state == CS_HEAD && c->started && c->ilen > c->req_off) &&
		    c->state != CS_BODY) {
			/* idle between requests, or lingering: close quietly */
			http_conn_kill(c);
			return;
		}
		c->processing = 1;
		http_reply_early_error(c, 408, "request %s not received in time",
				       c->state == CS_BODY ? "body" : "head");
		c->processing = 0;
		if (c->freeing) {
			http_conn_free(c);
			return;
		}
	}
	http_conn_settle(c);
}

/* A Unix-socket peer is known by its uid, as the kernel saw it at connect
 * (SO_PEERCRED), never by what it says: root and the listener's proxies are
 * bank proxies. */
static void peer_credentials(struct conn *c, const struct http_server *srv)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (getsockopt(c->fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || len != sizeof(cred)) {
		snprintf(c->peer, sizeof(c->peer), "uid:?");
		return;
	}
	c->peer_uid = (long)cred.uid;
	c->bank_proxy = cred.uid == 0 || unixid_has_uid(&srv->proxies, cred.uid);
	snprintf(c->peer, sizeof(c->peer), "uid:%ld", c->peer_uid);
}

void http_conn_accepted(struct http_server *srv, int fd, const struct sockaddr_storage *ss)
{
	struct conn *c;
	int one = 1, refused = srv->nconns >= (unsigned)srv->cfg->max_connections;

	if (refused && srv->nrefused >= REFUSED_MAX) {
		close(fd);
		return;
	}
	c = mem_new(struct conn);
	c->peer_uid = -1;
	if (ss->ss_family != AF_UNIX)
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	c->srv = srv;
	c->fd = fd;
	c->refused = refused;
	c->out = evbuffer_new();
	if (!c->out)
		mem_oom(__FILE__, __LINE__);
	httpp_init(&c->parser, NULL);
	if (ss->ss_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)ss)->sin_addr, c->peer,
			  sizeof(c->peer));
	else if (ss->ss_family == AF_INET6)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)ss)->sin6_addr, c->peer,
			  sizeof(c->peer));
	else if (ss->ss_family == AF_UNIX)
		peer_credentials(c, srv);
	else
		snprintf(c->peer, sizeof(c->peer), "-");
	event_assign(&c->rev, srv->base, fd, EV_READ | EV_PERSIST, on_read, c);
	event_assign(&c->wev, srv->base, fd, EV_WRITE | EV_PERSIST, on_write, c);
	evtimer_assign(&c->tmo, srv->base, on_timer, c);
	event_assign(&c->resume, srv->base, -1, 0, on_resume, c);
	c->next = srv->conns;
	if (srv->conns)
		srv->conns->prev = c;
	srv->conns = c;
	c->last_in = now_ms();
	c->state = CS_HEAD;
	if (refused) {
		srv->nrefused++;
		c->processing = 1;
		http_reply_early_error(c, 503, "too many connections; retry shortly");
		c->processing = 0;
	} else {
		srv->nconns++;
		/* the first request's head is due from the connection's start */
		c->deadline = c->last_in + (uint64_t)srv->cfg->http_header_timeout * 1000u;
		c->idle_ms = (uint64_t)srv->cfg->http_timeout * 1000u;
	}
	http_conn_settle(c);
}
