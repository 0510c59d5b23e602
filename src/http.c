#include "pixrelay/http.h"

#include "pixrelay/ids.h"
#include "pixrelay/json.h"
#include "pixrelay/log.h"
#include "pixrelay/mem.h"
#include "pixrelay/metrics.h"
#include "pixrelay/netaddr.h"

#include <arpa/inet.h>
#include <event2/buffer.h>
#include <sys/queue.h>
#include <event2/keyvalq_struct.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>

struct http_server {
	struct evhttp *http;
	struct evhttp_bound_socket *bound;
	const struct config *cfg;
	const struct http_route *routes;
	size_t nroutes;
	http_auth_fn auth;
	void *app;
	struct netaddr_list trusted;
	unsigned inflight;
	/* client connections seen, to bound their number; an entry leaves in
	 * the connection's close callback */
	struct evhttp_connection **conns;
	size_t nconns, capconns;
	int port;
};

static uint64_t now_us(void)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	return (uint64_t)tv.tv_sec * 1000000u + (uint64_t)tv.tv_usec;
}

static const char *method_name(enum evhttp_cmd_type m)
{
	switch (m) {
	case EVHTTP_REQ_GET:
		return "GET";
	case EVHTTP_REQ_POST:
		return "POST";
	case EVHTTP_REQ_HEAD:
		return "HEAD";
	case EVHTTP_REQ_PUT:
		return "PUT";
	case EVHTTP_REQ_DELETE:
		return "DELETE";
	case EVHTTP_REQ_OPTIONS:
		return "OPTIONS";
	case EVHTTP_REQ_TRACE:
		return "TRACE";
	case EVHTTP_REQ_CONNECT:
		return "CONNECT";
	case EVHTTP_REQ_PATCH:
		return "PATCH";
	}
	return "?";
}

/* Match `path` against `pattern`; on success store the {x} segments (borrowed
 * pointers into `scratch`, a copy of path with '/' turned to NUL). */
static int match(const char *pattern, const char *path, char *scratch, const char **params)
{
	int np = 0;
	const char *p = pattern, *s = path;

	strcpy(scratch, path);
	while (*p && *s) {
		if (*p == '{') {
			size_t seglen = strcspn(s, "/");
			if (seglen == 0 || np >= HTTP_MAX_PARAMS)
				return 0;
			params[np++] = scratch + (s - path);
			scratch[(s - path) + (long)seglen] = '\0';
			s += seglen;
			p = strchr(p, '}');
			if (!p)
				return 0;
			p++;
			continue;
		}
		if (*p != *s)
			return 0;
		p++;
		s++;
	}
	return *p == '\0' && *s == '\0';
}

static void conn_forget(struct http_server *srv, struct evhttp_connection *evcon)
{
	for (size_t i = 0; i < srv->nconns; i++) {
		if (srv->conns[i] == evcon) {
			srv->conns[i] = srv->conns[--srv->nconns];
			return;
		}
	}
}

static void on_conn_close(struct evhttp_connection *evcon, void *arg)
{
	conn_forget(arg, evcon);
}

/* Track the request's connection. Returns -1 when it is new and the limit
 * is reached. */
static int conn_admit(struct http_server *srv, struct evhttp_connection *evcon)
{
	for (size_t i = 0; i < srv->nconns; i++)
		if (srv->conns[i] == evcon)
			return 0;
	if (srv->nconns >= (size_t)srv->cfg->max_connections)
		return -1;
	if (srv->nconns == srv->capconns) {
		srv->capconns = srv->capconns ? srv->capconns * 2 : 64;
		srv->conns = mem_realloc(srv->conns, srv->capconns * sizeof(*srv->conns));
	}
	srv->conns[srv->nconns++] = evcon;
	evhttp_connection_set_closecb(evcon, on_conn_close, srv);
	return 0;
}

static int valid_request_id(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 64)
		return 0;
	for (; *s; s++)
		if (!(('a' <= *s && *s <= 'z') || ('A' <= *s && *s <= 'Z') ||
		      ('0' <= *s && *s <= '9') || *s == '-' || *s == '_' || *s == '.' || *s == ':'))
			return 0;
	return 1;
}

/* Client address and scheme: the peer, unless the peer is a trusted proxy,
 * in which case the right-most X-Forwarded-For entry that is not itself a
 * trusted proxy. */
static void resolve_client(struct http_req *req)
{
	struct http_server *srv = req->srv;
	struct evhttp_connection *evcon = evhttp_request_get_connection(req->ev);
	const char *fwd, *proto;
	char *peer = NULL;
	ev_uint16_t port = 0;

	snprintf(req->scheme, sizeof(req->scheme), "http");
	if (evcon)
		evhttp_connection_get_peer(evcon, &peer, &port);
	snprintf(req->client, sizeof(req->client), "%s", peer ? peer : "-");
	if (!peer || !netaddr_list_contains(&srv->trusted, peer))
		return;
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

const char *http_header(struct http_req *req, const char *name)
{
	return evhttp_find_header(evhttp_request_get_input_headers(req->ev), name);
}

char *http_query(struct http_req *req, const char *name)
{
	const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(req->ev);
	const char *q = uri ? evhttp_uri_get_query(uri) : NULL;
	struct evkeyvalq params;
	const char *v;
	char *out = NULL;

	if (!q)
		return NULL;
	TAILQ_INIT(&params);
	if (evhttp_parse_query_str(q, &params) == 0) {
		v = evhttp_find_header(&params, name);
		if (v)
			out = mem_strdup(v);
	}
	evhttp_clear_headers(&params);
	return out;
}

void http_add_header(struct http_req *req, const char *name, const char *value)
{
	evhttp_add_header(evhttp_request_get_output_headers(req->ev), name, value);
}

static void finish(struct http_req *req, int status, struct evbuffer *buf, const char *ctype)
{
	struct http_server *srv = req->srv;
	struct evkeyvalq *out = evhttp_request_get_output_headers(req->ev);
	char line[1200] = "";
	uint64_t dur;

	if (req->replied) {
		log_error("BUG: second reply to request %s ignored", req->request_id);
		return;
	}
	req->replied = 1;
	evhttp_add_header(out, "Content-Type", ctype);
	evhttp_add_header(out, "X-Request-Id", req->request_id);
	if (!evhttp_find_header(out, "Cache-Control"))
		evhttp_add_header(out, "Cache-Control", "no-store");
	evhttp_send_reply(req->ev, status, NULL, buf);
	dur = now_us() - req->start_us;
	log_escape(line, sizeof(line), req->path ? req->path : "-");
	log_info("request method=%s path=\"%s\" status=%d duration_ms=%.3f request_id=%s client=%s",
		 method_name(evhttp_request_get_command(req->ev)), line, status,
		 (double)dur / 1000.0, req->request_id, req->client);
	metrics_http(req->route ? req->route->pattern : "",
		     method_name(evhttp_request_get_command(req->ev)), status, (double)dur / 1e6);
	srv->inflight--;
	free(req->auth);
	free(req->path);
	free(req);
}

void http_reply_bytes(struct http_req *req, int status, const char *content_type,
		      const char *cache_control, const void *data, size_t len)
{
	struct evbuffer *buf = evbuffer_new();

	if (!buf)
		mem_oom(__FILE__, __LINE__);
	if (cache_control)
		http_add_header(req, "Cache-Control", cache_control);
	evbuffer_add(buf, data, len);
	finish(req, status, buf, content_type);
	evbuffer_free(buf);
}

void http_reply_raw(struct http_req *req, int status, const char *json, size_t len)
{
	http_reply_bytes(req, status, "application/json; charset=utf-8", NULL, json, len);
}

void http_reply_data(struct http_req *req, int status, const char *data_json, size_t len)
{
	struct evbuffer *buf = evbuffer_new();

	if (!buf)
		mem_oom(__FILE__, __LINE__);
	evbuffer_add_printf(buf, "{\"error\":null,\"status\":%d,\"data\":", status);
	evbuffer_add(buf, data_json, len);
	evbuffer_add(buf, "}", 1);
	finish(req, status, buf, "application/json; charset=utf-8");
	evbuffer_free(buf);
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

void http_next(struct http_req *req)
{
	req->route->handler(req);
}

static int is_json_type(const char *ct)
{
	size_t n = strlen("application/json");

	if (!ct)
		return 0;
	while (*ct == ' ')
		ct++;
	return strncasecmp(ct, "application/json", n) == 0 &&
	       (ct[n] == '\0' || ct[n] == ';' || ct[n] == ' ');
}

static void on_request(struct evhttp_request *ev, void *arg)
{
	struct http_server *srv = arg;
	struct http_req *req = mem_new(struct http_req);
	const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(ev);
	enum evhttp_cmd_type method = evhttp_request_get_command(ev);
	struct evbuffer *in = evhttp_request_get_input_buffer(ev);
	const struct http_route *path_match = NULL;
	const char *rid, *raw_path;
	char *scratch;
	size_t plen;
	int literal = 0;
	char allow[128] = "";

	req->ev = ev;
	req->srv = srv;
	req->app = srv->app;
	req->start_us = now_us();
	srv->inflight++;
	rid = http_header(req, "X-Request-Id");
	if (rid && valid_request_id(rid))
		snprintf(req->request_id, sizeof(req->request_id), "%s", rid);
	else
		ids_ulid(req->request_id);
	resolve_client(req);
	/* one buffer: the path, then a copy cut into segments for the params */
	raw_path = uri ? evhttp_uri_get_path(uri) : NULL;
	if (!raw_path || !*raw_path)
		raw_path = "/";
	plen = strlen(raw_path);
	req->path = mem_alloc(2 * plen + 2);
	memcpy(req->path, raw_path, plen + 1);
	scratch = req->path + plen + 1;

	if (evhttp_request_get_connection(ev) &&
	    conn_admit(srv, evhttp_request_get_connection(ev)) < 0) {
		http_add_header(req, "Connection", "close");
		http_add_header(req, "Retry-After", "1");
		http_reply_error(req, 503, "too many connections; retry shortly");
		return;
	}
	/* a literal route owns its path: GET /v1/charge/pix/create is a wrong
	 * method there, not a charge called "create" */
	for (size_t i = 0; i < srv->nroutes; i++) {
		const struct http_route *rt = &srv->routes[i];
		const char *params[HTTP_MAX_PARAMS];
		if (strchr(rt->pattern, '{') || !match(rt->pattern, req->path, scratch, params))
			continue;
		literal = 1;
		break;
	}
	for (size_t i = 0; i < srv->nroutes; i++) {
		const struct http_route *rt = &srv->routes[i];
		const char *params[HTTP_MAX_PARAMS];
		if (literal && strchr(rt->pattern, '{'))
			continue;
		if (!match(rt->pattern, req->path, scratch, params))
			continue;
		path_match = rt;
		if (rt->method == method ||
		    (method == EVHTTP_REQ_HEAD && rt->method == EVHTTP_REQ_GET)) {
			req->route = rt;
			memcpy(req->params, params, sizeof(params));
			break;
		}
		if (!strstr(allow, method_name(rt->method)))
			snprintf(allow + strlen(allow), sizeof(allow) - strlen(allow), "%s%s",
				 allow[0] ? ", " : "", method_name(rt->method));
	}
	if (!req->route) {
		if (path_match) {
			http_add_header(req, "Allow", allow);
			http_reply_error(req, 405, "method %s not allowed on %s; allowed: %s",
					 method_name(method), req->path, allow);
		} else {
			http_reply_error(req, 404, "no such endpoint: %s %s", method_name(method),
					 req->path);
		}
		return;
	}
	req->body_len = evbuffer_get_length(in);
	{
		long limit =
		    (req->route->flags & HTTP_UPLOAD) ? srv->cfg->max_upload : srv->cfg->max_body;
		if ((long)req->body_len > limit) {
			http_add_header(req, "Connection", "close");
			http_reply_error(req, 413,
					 "request body too large: %zu bytes, the limit is %ld",
					 req->body_len, limit);
			return;
		}
	}
	if (req->body_len > 0 && !is_json_type(http_header(req, "Content-Type"))) {
		http_reply_error(req, 415, "Content-Type must be application/json");
		return;
	}
	req->body = req->body_len ? (const char *)evbuffer_pullup(in, -1) : "";
	if (req->route->flags & HTTP_AUTH)
		srv->auth(req);
	else
		req->route->handler(req);
}

struct http_server *http_new(struct event_base *base, const struct config *cfg,
			     const struct http_route *routes, size_t nroutes, http_auth_fn auth,
			     void *app)
{
	struct http_server *srv = mem_new(struct http_server);
	char host[256], err[256];
	int port = 0;
	evutil_socket_t fd;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);

	srv->cfg = cfg;
	srv->routes = routes;
	srv->nroutes = nroutes;
	srv->auth = auth;
	srv->app = app;
	if (netaddr_list_parse(&srv->trusted, cfg->trusted_proxies, err, sizeof(err)) < 0) {
		log_error("trusted-proxies: %s", err);
		goto fail;
	}
	if (netaddr_split_hostport(cfg->listen, host, sizeof(host), &port) < 0) {
		log_error("listen: expected host:port, got '%s'", cfg->listen);
		goto fail;
	}
	srv->http = evhttp_new(base);
	if (!srv->http)
		mem_oom(__FILE__, __LINE__);
	evhttp_set_allowed_methods(srv->http, EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_HEAD |
						  EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE |
						  EVHTTP_REQ_OPTIONS | EVHTTP_REQ_PATCH);
	/* bodies up to this cap are read and refused with the envelope;
	 * larger ones are refused by evhttp before they are read */
	evhttp_set_max_body_size(
	    srv->http, (ev_ssize_t)(cfg->max_body * 2 > cfg->max_upload + cfg->max_upload / 4
					? cfg->max_body * 2
					: cfg->max_upload + cfg->max_upload / 4));
	evhttp_set_max_headers_size(srv->http, 16384);
	evhttp_set_timeout(srv->http, (int)cfg->http_timeout);
	evhttp_set_gencb(srv->http, on_request, srv);
	srv->bound = evhttp_bind_socket_with_handle(srv->http, host, (ev_uint16_t)port);
	if (!srv->bound) {
		log_error("cannot listen on %s", cfg->listen);
		goto fail;
	}
	fd = evhttp_bound_socket_get_fd(srv->bound);
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0) {
		if (ss.ss_family == AF_INET)
			srv->port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
		else if (ss.ss_family == AF_INET6)
			srv->port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	}
	return srv;
fail:
	http_free(srv);
	return NULL;
}

void http_stop_accepting(struct http_server *srv)
{
	if (srv->bound) {
		evhttp_del_accept_socket(srv->http, srv->bound);
		srv->bound = NULL;
	}
}

unsigned http_inflight(const struct http_server *srv)
{
	return srv->inflight;
}

unsigned http_connections(const struct http_server *srv)
{
	return (unsigned)srv->nconns;
}

int http_port(const struct http_server *srv)
{
	return srv->port;
}

void http_free(struct http_server *srv)
{
	if (!srv)
		return;
	if (srv->http)
		evhttp_free(srv->http);
	netaddr_list_deinit(&srv->trusted);
	free(srv->conns);
	free(srv);
}
