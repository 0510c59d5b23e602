/* reply.c: answers of the HTTP server: the head (status line, Date,
 * Content-Length, the request id, Cache-Control, the application's headers,
 * Connection), the http_reply_* of the application with JSON, envelope or
 * other bytes, the errors the server itself answers before the application
 * sees a request, and the log line and observation of each request. Streamed
 * answers are stream.c; keep-alive after an answer is conn.c.
 */
#include "http_int.h"

#include "pixrelay/core/ids.h"
#include "pixrelay/core/json.h"
#include "pixrelay/core/log.h"
#include "pixrelay/core/mem.h"

#include <event2/buffer.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

static const char *http_date(struct http_server *srv)
{
	time_t t = time(NULL);

	if (t != srv->date_sec) {
		struct tm tm;
		gmtime_r(&t, &tm);
		strftime(srv->date, sizeof(srv->date), "%a, %d %b %Y %H:%M:%S GMT", &tm);
		srv->date_sec = t;
	}
	return srv->date;
}

static const char *reason(int status)
{
	switch (status) {
	case 100:
		return "Continue";
	case 200:
		return "OK";
	case 201:
		return "Created";
	case 202:
		return "Accepted";
	case 204:
		return "No Content";
	case 400:
		return "Bad Request";
	case 401:
		return "Unauthorized";
	case 403:
		return "Forbidden";
	case 404:
		return "Not Found";
	case 405:
		return "Method Not Allowed";
	case 408:
		return "Request Timeout";
	case 409:
		return "Conflict";
	case 410:
		return "Gone";
	case 413:
		return "Content Too Large";
	case 414:
		return "URI Too Long";
	case 415:
		return "Unsupported Media Type";
	case 417:
		return "Expectation Failed";
	case 422:
		return "Unprocessable Content";
	case 429:
		return "Too Many Requests";
	case 431:
		return "Request Header Fields Too Large";
	case 500:
		return "Internal Server Error";
	case 501:
		return "Not Implemented";
	case 502:
		return "Bad Gateway";
	case 503:
		return "Service Unavailable";
	case 504:
		return "Gateway Timeout";
	case 505:
		return "HTTP Version Not Supported";
	}
	return "Status";
}

void http_reply_report(struct req *r)
{
	struct http_server *srv = r->pub.srv;
	uint64_t dur = ids_now_us() - r->pub.start_us;

	if (log_on(LOG_INFO)) {
		char path[1200] = "";

		log_escape(path, sizeof(path), r->pub.path ? r->pub.path : "-");
		log_info("request method=%s path=\"%s\" status=%d duration_ms=%.3f request_id=%s "
			 "client=%s",
			 http_method_name(r->pub.method), path, r->status, (double)dur / 1000.0,
			 r->pub.request_id, r->pub.client);
	}
	if (srv->observer) {
		struct http_observation o;
		o.route = r->pub.route ? r->pub.route->pattern : NULL;
		o.method = r->pub.method;
		o.status = r->status;
		o.duration_us = dur;
		o.request_bytes = r->bytes_in;
		o.response_bytes = r->bytes_out;
		srv->observer(srv->observer_arg, &o);
	}
}

/* Bytes build_head may write: the fixed lines (at most about 300), the
 * content type and the application's headers. */
static size_t head_room(const struct req *r, const char *ctype)
{
	return 400 + strlen(ctype) + r->hdrs_len;
}

/* Write the head of an answer into `h` (head_room bytes). */
static size_t build_head(struct req *r, char *h, int status, const char *ctype, long clen, int keep,
			 int chunked)
{
	struct conn *c = r->conn;
	size_t n;

	n = (size_t)sprintf(h, "HTTP/1.1 %d %s\r\nDate: %s\r\nContent-Type: %s\r\n", status,
			    reason(status), http_date(c->srv), ctype);
	if (clen >= 0)
		n += (size_t)sprintf(h + n, "Content-Length: %ld\r\n", clen);
	if (chunked)
		n += (size_t)sprintf(h + n, "Transfer-Encoding: chunked\r\n");
	n += (size_t)sprintf(h + n, "X-Request-Id: %s\r\n", r->pub.request_id);
	if (!r->has_cache_control)
		n += (size_t)sprintf(h + n, "Cache-Control: no-store\r\n");
	if (r->hdrs_len) {
		memcpy(h + n, r->hdrs, r->hdrs_len);
		n += r->hdrs_len;
	}
	if (!keep)
		n += (size_t)sprintf(h + n, "Connection: close\r\n");
	else if (c->head.minor == 0)
		n += (size_t)sprintf(h + n, "Connection: keep-alive\r\n");
	memcpy(h + n, "\r\n", 2);
	return n + 2;
}

void http_reply_queue_head(struct req *r, int status, const char *ctype, long clen, int keep,
			   int chunked)
{
	struct conn *c = r->conn;
	char fixed[768], *h = fixed;
	size_t n, need = head_room(r, ctype);

	if (need > sizeof(fixed))
		h = mem_alloc(need);
	n = build_head(r, h, status, ctype, clen, keep, chunked);
	http_conn_out_mark(c);
	evbuffer_add(c->out, h, n);
	if (h != fixed)
		free(h);
	r->bytes_out = n;
}

/* Queue an answer of `status` with the body pieces given (NULL ends). */
static void finish(struct req *r, int status, const char *ctype, const void *p1, size_t n1,
		   const void *p2, size_t n2, const void *p3, size_t n3)
{
	struct conn *c = r->conn;
	int keep;

	if (r->pub.replied) {
		log_error("BUG: second reply to request %s ignored", r->pub.request_id);
		return;
	}
	r->pub.replied = 1;
	r->status = status;
	keep = http_conn_may_keep(r);
	if (!c->dead) {
		long blen = (long)(n1 + n2 + n3);
		http_reply_queue_head(r, status, ctype, blen, keep && c->state != CS_BODY, 0);
		if (r->pub.method != HTTP_HEAD) {
			if (n1)
				evbuffer_add(c->out, p1, n1);
			if (n2)
				evbuffer_add(c->out, p2, n2);
			if (n3)
				evbuffer_add(c->out, p3, n3);
			r->bytes_out += (uint64_t)blen;
		}
	}
	http_reply_report(r);
	http_conn_request_done(c, r, keep);
}

void http_add_header(struct http_req *pub, const char *name, const char *value)
{
	struct req *r = (struct req *)pub;
	size_t nl = strlen(name), vl = strlen(value);

	if (strpbrk(name, "\r\n:") || strpbrk(value, "\r\n") || nl == 0) {
		log_error("BUG: response header %.64s refused (CR, LF or colon)", name);
		return;
	}
	if (strcasecmp(name, "Connection") == 0) {
		if (strcasecmp(value, "close") == 0)
			r->app_close = 1;
		return;
	}
	if (strcasecmp(name, "Cache-Control") == 0)
		r->has_cache_control = 1;
	if (r->hdrs_len + nl + vl + 5 > r->hdrs_cap) {
		r->hdrs_cap = (r->hdrs_len + nl + vl + 5) * 2;
		r->hdrs = mem_realloc(r->hdrs, r->hdrs_cap);
	}
	memcpy(r->hdrs + r->hdrs_len, name, nl);
	r->hdrs_len += nl;
	memcpy(r->hdrs + r->hdrs_len, ": ", 2);
	r->hdrs_len += 2;
	memcpy(r->hdrs + r->hdrs_len, value, vl);
	r->hdrs_len += vl;
	memcpy(r->hdrs + r->hdrs_len, "\r\n", 2);
	r->hdrs_len += 2;
}

void http_reply_bytes(struct http_req *req, int status, const char *content_type,
		      const char *cache_control, const void *data, size_t len)
{
	if (cache_control)
		http_add_header(req, "Cache-Control", cache_control);
	finish((struct req *)req, status, content_type, data, len, NULL, 0, NULL, 0);
}

void http_reply_raw(struct http_req *req, int status, const char *json, size_t len)
{
	finish((struct req *)req, status, "application/json; charset=utf-8", json, len, NULL, 0,
	       NULL, 0);
}

void http_reply_data(struct http_req *req, int status, const char *data_json, size_t len)
{
	char pre[64];
	int n = snprintf(pre, sizeof(pre), "{\"error\":null,\"status\":%d,\"data\":", status);

	finish((struct req *)req, status, "application/json; charset=utf-8", pre, (size_t)n,
	       data_json, len, "}", 1);
}

void http_reply_gen(struct http_req *req, int status, yajl_gen g)
{
	size_t len = 0;
	const char *s = json_buf(g, &len);

	http_reply_data(req, status, s, len);
}

void http_reply_error(struct http_req *req, int status, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	yajl_gen g = json_gen_new();
	size_t len = 0;
	const char *s;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	json_open(g);
	json_str(g, "error");
	json_str(g, msg);
	json_str(g, "status");
	json_int(g, status);
	if (!req->route || (req->route->flags & HTTP_ENVELOPE)) {
		json_str(g, "data");
		json_open_array(g);
		json_close_array(g);
	}
	json_close(g);
	s = json_buf(g, &len);
	http_reply_raw(req, status, s, len);
	yajl_gen_free(g);
}

/* Answer before the application saw the request (malformed, too large,
 * too slow, over capacity), then close the connection. */
void http_reply_early_error(struct conn *c, int status, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	struct req *r = c->req;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!r) {
		r = c->req = http_req_new(c);
		ids_pooled_ulid_at(r->pub.request_id, ids_now_ms());
		if (c->parser.stage == 1) {
			/* the request line was read: log its method and path */
			r->pub.method = http_method_of(c->parser.m);
			r->scratch = mem_strndup(c->ibuf + c->req_off + c->parser.path.off,
						 c->parser.path.len);
			r->pub.path = r->scratch;
		}
	}
	c->close_after = 1;
	if (status == 503)
		http_add_header(&r->pub, "Retry-After", "1");
	http_reply_error(&r->pub, status, "%s", msg);
}
