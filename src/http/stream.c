/* stream.c: streamed answers of the HTTP server (Server-Sent Events and
 * the like): the head, the body in chunks (or until the close for HTTP/1.0),
 * the bound on what waits for a slow client, the `gone` callback and the
 * end. Plain answers are reply.c; the connection under a stream is conn.c.
 */
#include "http_int.h"

#include "pixrelay/core/log.h"

#include <event2/buffer.h>
#include <stdio.h>

static void stream_finish(struct req *r);

void http_stream_call_gone(struct conn *c)
{
	struct req *r = c->req;

	r->gone_state = 2;
	if (r->gone) {
		r->in_gone = 1;
		r->gone(&r->pub, r->gone_arg);
		r->in_gone = 0;
	}
	if (r->ended)
		stream_finish(r);
}

int http_stream_begin(struct http_req *pub, int status, const char *content_type, http_gone_fn gone,
		      void *arg)
{
	struct req *r = (struct req *)pub;
	struct conn *c = r->conn;

	if (pub->replied) {
		log_error("BUG: stream begun on request %s, which was answered", pub->request_id);
		return -1;
	}
	pub->replied = 1;
	r->stream = 1;
	r->status = status;
	r->gone = gone;
	r->gone_arg = arg;
	c->srv->inflight--;
	if (c->dead) {
		r->gone_state = 1;
		event_active(&c->resume, EV_TIMEOUT, 1);
		return 0;
	}
	{
		int keep = http_conn_may_keep(r) && c->head.minor >= 1;
		if (!keep)
			r->app_close = 1;
		http_reply_queue_head(r, status, content_type, -1, keep, c->head.minor >= 1);
	}
	r->stream_head = pub->method == HTTP_HEAD;
	c->state = CS_STREAM;
	c->deadline = 0;
	c->idle_ms = 0;
	if (!c->processing)
		http_conn_settle(c);
	return 0;
}

long http_stream_write(struct http_req *pub, const void *data, size_t len)
{
	struct req *r = (struct req *)pub;
	struct conn *c = r->conn;
	size_t pending;

	if (!r->stream || r->ended) {
		log_error("BUG: stream write on request %s, which is not a stream",
			  pub->request_id);
		return -1;
	}
	if (c->dead || r->gone_state)
		return -1;
	if (r->stream_head)
		return 0;
	if (len) {
		http_conn_out_mark(c);
		if (c->head.minor >= 1) {
			char size[24];
			int n = snprintf(size, sizeof(size), "%zx\r\n", len);
			evbuffer_add(c->out, size, (size_t)n);
			evbuffer_add(c->out, data, len);
			evbuffer_add(c->out, "\r\n", 2);
			r->bytes_out += (uint64_t)n + len + 2;
		} else {
			evbuffer_add(c->out, data, len);
			r->bytes_out += len;
		}
	}
	pending = evbuffer_get_length(c->out);
	if (pending > HTTP_STREAM_MAX_PENDING) {
		log_info("stream of request %s: the client does not read; closing",
			 pub->request_id);
		http_conn_kill(c);
		return -1;
	}
	if (!c->processing) {
		http_conn_settle(c);
		if (c->dead)
			return -1;
	}
	return (long)evbuffer_get_length(c->out);
}

static void stream_finish(struct req *r)
{
	struct conn *c = r->conn;

	http_reply_report(r);
	if (!c->dead && c->head.minor >= 1 && !r->stream_head) {
		http_conn_out_mark(c);
		evbuffer_add(c->out, "0\r\n\r\n", 5);
		r->bytes_out += 5;
	}
	http_conn_request_done(c, r, !r->app_close && !c->close_after && c->head.minor >= 1);
}

void http_stream_end(struct http_req *pub)
{
	struct req *r = (struct req *)pub;

	if (!r->stream || r->ended) {
		log_error("BUG: stream end on request %s, which is not an open stream",
			  pub->request_id);
		return;
	}
	r->ended = 1;
	if (r->in_gone)
		return; /* http_stream_call_gone finishes it when the callback returns */
	stream_finish(r);
}
