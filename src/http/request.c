/* request.c: a request of the HTTP server: the object the application
 * gets, its headers and query, the client address and scheme behind trusted
 * proxies (by address, or by uid on a Unix socket), the request id, the
 * route table (404, 405), and the way from a complete head to the handler
 * (413, 415, the auth hook). Its body is body.c, its answer reply.c or
 * stream.c, the connection it came on conn.c.
 */
#include "http_int.h"

#include "pixrelay/core/ids.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/core/netaddr.h"

#include <arpa/inet.h>
#include <event2/buffer.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

/* The first buffer of a chunked body; it grows as the chunks come. */
#define BODY_CHUNKED_START 4096

/* ---- names ---- */

const char *http_method_name(enum http_method m)
{
	switch (m) {
	case HTTP_GET:
		return "GET";
	case HTTP_POST:
		return "POST";
	case HTTP_HEAD:
		return "HEAD";
	case HTTP_PUT:
		return "PUT";
	case HTTP_DELETE:
		return "DELETE";
	case HTTP_OPTIONS:
		return "OPTIONS";
	case HTTP_TRACE:
		return "TRACE";
	case HTTP_CONNECT:
		return "CONNECT";
	case HTTP_PATCH:
		return "PATCH";
	}
	return "-";
}

enum http_method http_method_of(enum httpp_method m)
{
	switch (m) {
	case HTTPP_GET:
		return HTTP_GET;
	case HTTPP_HEAD:
		return HTTP_HEAD;
	case HTTPP_POST:
		return HTTP_POST;
	case HTTPP_PUT:
		return HTTP_PUT;
	case HTTPP_DELETE:
		return HTTP_DELETE;
	case HTTPP_OPTIONS:
		return HTTP_OPTIONS;
	case HTTPP_TRACE:
		return HTTP_TRACE;
	case HTTPP_CONNECT:
		return HTTP_CONNECT;
	case HTTPP_PATCH:
		return HTTP_PATCH;
	case HTTPP_UNKNOWN:
		break;
	}
	return (enum http_method)0;
}

/* ---- requests ---- */

struct req *http_req_new(struct conn *c)
{
	struct req *r = mem_new(struct req);

	r->conn = c;
	r->pub.srv = c->srv;
	r->pub.app = c->srv->app;
	r->pub.body = "";
	r->pub.start_us = c->req_start_us ? c->req_start_us : ids_now_us();
	snprintf(r->pub.client, sizeof(r->pub.client), "%s", c->peer);
	r->pub.peer_uid = c->peer_uid;
	r->pub.bank_proxy = c->bank_proxy;
	snprintf(r->pub.scheme, sizeof(r->pub.scheme), "http");
	return r;
}

void http_req_free(struct req *r)
{
	if (!r)
		return;
	http_body_release(r);
	for (unsigned i = 0; i < r->ncombined; i++)
		free(r->combined[i]);
	free(r->combined);
	free(r->hdrs);
	free(r->scratch);
	free(r->pub.auth);
	free(r);
}

static bool has_head(const struct req *r)
{
	return r->conn && r->conn->req == r && r->pub.path && r->conn->state != CS_HEAD;
}

const char *http_header(struct http_req *pub, const char *name)
{
	struct req *r = (struct req *)pub;
	const struct httpp_head *h;
	const struct httpp_header *first;
	unsigned count = 0;
	size_t n = 0, len = 0;
	char *joined;

	if (!has_head(r))
		return NULL;
	h = &r->conn->head;
	first = httpp_header(h, name, &count);
	if (count <= 1)
		return first ? first->value : NULL;
	/* a repeated field is its values joined by ", " (RFC 9110 5.3): a
	 * singleton such as Authorization then fails its own validation */
	n = strlen(name);
	for (unsigned i = 0; i < h->nheaders; i++)
		if (h->headers[i].name_len == n && strcasecmp(h->headers[i].name, name) == 0)
			len += h->headers[i].value_len + 2;
	joined = mem_alloc(len + 1);
	len = 0;
	for (unsigned i = 0; i < h->nheaders; i++) {
		if (h->headers[i].name_len != n || strcasecmp(h->headers[i].name, name) != 0)
			continue;
		if (len) {
			memcpy(joined + len, ", ", 2);
			len += 2;
		}
		memcpy(joined + len, h->headers[i].value, h->headers[i].value_len);
		len += h->headers[i].value_len;
	}
	joined[len] = '\0';
	r->combined = mem_realloc(r->combined, (r->ncombined + 1) * sizeof(*r->combined));
	r->combined[r->ncombined++] = joined;
	return joined;
}

const char *http_query_string(struct http_req *pub)
{
	struct req *r = (struct req *)pub;

	return has_head(r) ? r->conn->head.query : NULL;
}

char *http_query(struct http_req *pub, const char *name)
{
	struct req *r = (struct req *)pub;

	if (!has_head(r))
		return NULL;
	return httpp_query_value(r->conn->head.query, name);
}

static bool valid_request_id(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 64)
		return false;
	for (; *s; s++)
		if (!(('a' <= *s && *s <= 'z') || ('A' <= *s && *s <= 'Z') ||
		      ('0' <= *s && *s <= '9') || *s == '-' || *s == '_' || *s == '.' || *s == ':'))
			return false;
	return true;
}

/* Client address and scheme: the peer, unless the peer is a trusted proxy
 * (by address, or by uid on a Unix socket), in which case the right-most
 * X-Forwarded-For entry that is not itself a trusted proxy. */
static void resolve_client(struct http_req *req, const char *peer)
{
	struct http_server *srv = req->srv;
	const char *fwd, *proto;

	if (!req->bank_proxy && !netaddr_list_contains(&srv->trusted, peer))
		return;
	req->via_proxy = 1;
	proto = http_header(req, "X-Forwarded-Proto");
	if (proto && (strcasecmp(proto, "https") == 0 || strcasecmp(proto, "http") == 0))
		snprintf(req->scheme, sizeof(req->scheme), "%s",
			 strcasecmp(proto, "https") ? "http" : "https");
	fwd = http_header(req, "X-Forwarded-For");
	if (!fwd)
		return;
	{
		char *copy = mem_strdup(fwd), *end = copy + strlen(copy);
		while (end > copy) {
			char *start = end, *item;
			while (start > copy && start[-1] != ',')
				start--;
			*end = '\0';
			item = start;
			while (*item == ' ' || *item == '\t')
				item++;
			for (char *t = item + strlen(item);
			     t > item && (t[-1] == ' ' || t[-1] == '\t');)
				*--t = '\0';
			if (!netaddr_list_contains(&srv->trusted, item)) {
				unsigned char tmp[16];
				/* only an address is believed; anything else stops here */
				if (inet_pton(AF_INET, item, tmp) == 1 ||
				    inet_pton(AF_INET6, item, tmp) == 1)
					snprintf(req->client, sizeof(req->client), "%s", item);
				break;
			}
			snprintf(req->client, sizeof(req->client), "%s", item);
			end = start > copy ? start - 1 : copy;
		}
		free(copy);
	}
}

/* Match `path` against `pattern`; on success store where each {x} segment
 * is (offset and length in path). */
static bool match(const char *pattern, const char *path, size_t *off, size_t *len, int *np)
{
	const char *p = pattern, *s = path;
	int n = 0;

	while (*p && *s) {
		if (*p == '{') {
			size_t seg = strcspn(s, "/");
			if (seg == 0 || n >= HTTP_MAX_PARAMS)
				return false;
			off[n] = (size_t)(s - path);
			len[n] = seg;
			n++;
			s += seg;
			p = strchr(p, '}');
			if (!p)
				return false;
			p++;
			continue;
		}
		if (*p != *s)
			return false;
		p++;
		s++;
	}
	if (*p || *s)
		return false;
	*np = n;
	return true;
}

/* Find the route of the request; on a wrong method, `allow` lists the
 * methods of the path (and *path_known is set). */
static void route_find(struct req *r, char *allow, size_t allow_size, int *path_known)
{
	struct http_server *srv = r->pub.srv;
	const char *path = r->pub.path;
	enum http_method method = r->pub.method;
	size_t off[HTTP_MAX_PARAMS], len[HTTP_MAX_PARAMS];
	int np = 0, literal = 0;

	*path_known = 0;
	allow[0] = '\0';
	/* a literal route owns its path: GET /v1/charge/pix/create is a wrong
	 * method there, not a charge called "create" */
	for (size_t i = 0; i < srv->nroutes && !literal; i++)
		if (!strchr(srv->routes[i].pattern, '{') &&
		    match(srv->routes[i].pattern, path, off, len, &np))
			literal = 1;
	for (size_t i = 0; i < srv->nroutes; i++) {
		const struct http_route *rt = &srv->routes[i];
		if (literal && strchr(rt->pattern, '{'))
			continue;
		if (!match(rt->pattern, path, off, len, &np))
			continue;
		*path_known = 1;
		if (rt->method == method || (method == HTTP_HEAD && rt->method == HTTP_GET)) {
			r->pub.route = rt;
			if (np) {
				r->scratch = mem_strdup(path);
				for (int k = 0; k < np; k++) {
					r->scratch[off[k] + len[k]] = '\0';
					r->pub.params[k] = r->scratch + off[k];
				}
			}
			return;
		}
		if (!strstr(allow, http_method_name(rt->method)))
			snprintf(allow + strlen(allow), allow_size - strlen(allow), "%s%s",
				 allow[0] ? ", " : "", http_method_name(rt->method));
	}
}

static bool is_json_type(const char *ct)
{
	size_t n = strlen("application/json");

	if (!ct)
		return false;
	while (*ct == ' ')
		ct++;
	return strncasecmp(ct, "application/json", n) == 0 &&
	       (ct[n] == '\0' || ct[n] == ';' || ct[n] == ' ');
}

/* Hand the complete request to the application. */
void http_req_dispatch(struct conn *c)
{
	struct req *r = c->req;
	struct http_server *srv = c->srv;
	char allow[128];
	int path_known = 0;

	c->state = CS_APP;
	c->app_readable = 0;
	c->deadline = 0;
	c->idle_ms = 0;
	r->dispatched = 1;
	srv->inflight++;
	if (r->body) {
		r->body[r->pub.body_len] = '\0';
		r->pub.body = r->body;
	}
	if (!r->pub.route) {
		route_find(r, allow, sizeof(allow), &path_known);
		if (path_known) {
			http_add_header(&r->pub, "Allow", allow);
			http_reply_error(&r->pub, 405, "method %s not allowed on %s; allowed: %s",
					 http_method_name(r->pub.method), r->pub.path, allow);
		} else {
			http_reply_error(&r->pub, 404, "no such endpoint: %s %s",
					 http_method_name(r->pub.method), r->pub.path);
		}
		return;
	}
	if (r->pub.body_len > 0 && !is_json_type(http_header(&r->pub, "Content-Type"))) {
		http_reply_error(&r->pub, 415, "Content-Type must be application/json");
		return;
	}
	if (r->pub.route->flags & HTTP_AUTH)
		srv->auth(&r->pub);
	else
		r->pub.route->handler(&r->pub);
}

/* The head is in: set up the request and its body. */
void http_req_head_done(struct conn *c)
{
	struct http_server *srv = c->srv;
	const struct httpp_head *h = &c->head;
	struct req *r = http_req_new(c);
	const char *rid;
	char allow[128];
	int path_known;
	long cap;

	c->req = r;
	c->state = CS_BODY; /* has_head: the head is the request's from now on */
	c->pos = c->req_off + h->head_len;
	r->bytes_in = h->head_len;
	r->pub.method = http_method_of(h->method);
	r->pub.path = h->path;
	rid = http_header(&r->pub, "X-Request-Id");
	if (rid && valid_request_id(rid))
		snprintf(r->pub.request_id, sizeof(r->pub.request_id), "%s", rid);
	else
		ids_pooled_ulid_at(r->pub.request_id, ids_now_ms());
	resolve_client(&r->pub, c->peer);
	route_find(r, allow, sizeof(allow), &path_known);
	cap = r->pub.route && (r->pub.route->flags & HTTP_UPLOAD) ? srv->cfg->max_upload
								  : srv->cfg->max_body;
	if (h->content_length > cap) {
		http_reply_early_error(c, 413,
				       "request body too large: %lld bytes, the limit is %ld",
				       (long long)h->content_length, cap);
		return;
	}
	if (!h->chunked && h->content_length <= 0) {
		http_req_dispatch(c);
		return;
	}
	{
		size_t need = h->chunked ? BODY_CHUNKED_START : (size_t)h->content_length + 1;
		if (http_body_reserve(c, need) < 0)
			return;
		http_body_grow(r, need);
	}
	if (h->chunked)
		httpp_chunked_init(&c->chunk, (uint64_t)cap);
	if (h->expect_continue) {
		http_conn_out_mark(c);
		evbuffer_add(c->out, "HTTP/1.1 100 Continue\r\n\r\n", 25);
	}
	c->deadline = now_ms() + (uint64_t)srv->cfg->http_body_timeout * 1000u;
	c->idle_ms = (uint64_t)srv->cfg->http_timeout * 1000u;
}

void http_next(struct http_req *req)
{
	req->route->handler(req);
}
