/* server.c: the HTTP server object: listening (on TCP, or on a Unix
 * socket whose file it makes, replaces when stale and removes), accepting
 * (with a pause when descriptors run out), draining and freeing, and the
 * counters the application reads. A connection, from the socket accept() gives to its
 * close, is conn.c; requests are request.c and body.c; answers reply.c;
 * streams stream.c. What these files share is in http_int.h.
 */
#include "http_int.h"

#include "pixrelay/core/log.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/core/netaddr.h"
#include "pixrelay/core/unixid.h"

#include <arpa/inet.h>
#include <errno.h>
#include <event2/buffer.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* Connections taken per wake-up of the listening socket; when descriptors
 * run out, accepting pauses this long, with one log line per ACCEPT_LOG_MS. */
#define ACCEPT_BATCH 64
#define ACCEPT_PAUSE_MS 250
#define ACCEPT_LOG_MS 10000

static void accept_trouble(struct http_server *srv, int err)
{
	uint64_t now = now_ms();
	struct timeval tv = {0, ACCEPT_PAUSE_MS * 1000};

	/* out of descriptors (or memory): accept() would fail again at once,
	 * so stop watching the socket for a moment instead of spinning */
	srv->accept_errors++;
	if (!srv->last_accept_log || now - srv->last_accept_log >= ACCEPT_LOG_MS) {
		log_warn("cannot accept connections: %s (%u connections open); pausing accepts "
			 "for %d ms at a time (%u pauses since the last such line)",
			 strerror(err), srv->nconns, ACCEPT_PAUSE_MS, srv->accept_errors);
		srv->last_accept_log = now;
		srv->accept_errors = 0;
	}
	event_del(srv->lev);
	evtimer_add(srv->pause_timer, &tv);
	srv->paused = 1;
}

static void on_pause_end(evutil_socket_t fd, short what, void *arg)
{
	struct http_server *srv = arg;

	if (srv->paused && srv->lev) {
		srv->paused = 0;
		event_add(srv->lev, NULL);
	}
}

static void on_accept(evutil_socket_t lfd, short what, void *arg)
{
	struct http_server *srv = arg;

	for (int i = 0; i < ACCEPT_BATCH && srv->lev; i++) {
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		int fd = accept4(lfd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				accept_trouble(srv, errno);
			return;
		}
		http_conn_accepted(srv, fd, &ss);
	}
}

static int listen_on(const char *host, int port)
{
	struct addrinfo hints, *res = NULL, *ai;
	char portstr[16];
	int fd = -1, one = 1;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	snprintf(portstr, sizeof(portstr), "%d", port);
	if (getaddrinfo(*host ? host : NULL, portstr, &hints, &res) != 0)
		return -1;
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
			    ai->ai_protocol);
		if (fd < 0)
			continue;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, 1024) == 0)
			break;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	return fd;
}

/* What both kinds of listener share: the object and its trusted proxies.
 * NULL with why in err. */
static struct http_server *server_new(struct event_base *base, const struct config *cfg,
				      const struct http_route *routes, size_t nroutes,
				      http_auth_fn auth, void *app, char *err, size_t errlen)
{
	struct http_server *srv = mem_new(struct http_server);
	char why[256];

	srv->base = base;
	srv->cfg = cfg;
	srv->routes = routes;
	srv->nroutes = nroutes;
	srv->auth = auth;
	srv->app = app;
	srv->lfd = -1;
	if (netaddr_list_parse(&srv->trusted, cfg->trusted_proxies, why, sizeof(why)) < 0) {
		snprintf(err, errlen, "trusted-proxies: %s", why);
		http_free(srv);
		return NULL;
	}
	return srv;
}

/* The listening socket is ready: watch it. */
static void server_watch(struct http_server *srv)
{
	srv->lev = event_new(srv->base, srv->lfd, EV_READ | EV_PERSIST, on_accept, srv);
	srv->pause_timer = evtimer_new(srv->base, on_pause_end, srv);
	if (!srv->lev || !srv->pause_timer)
		mem_oom(__FILE__, __LINE__);
	event_add(srv->lev, NULL);
}

struct http_server *http_new(struct event_base *base, const struct config *cfg, const char *listen,
			     const struct http_route *routes, size_t nroutes, http_auth_fn auth,
			     void *app)
{
	struct http_server *srv;
	char host[256], err[320];
	int port = 0;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);

	srv = server_new(base, cfg, routes, nroutes, auth, app, err, sizeof(err));
	if (!srv) {
		log_error("%s", err);
		return NULL;
	}
	if (netaddr_split_hostport(listen, host, sizeof(host), &port) < 0) {
		log_error("listen: expected host:port, got '%s'", listen);
		goto fail;
	}
	srv->lfd = listen_on(host, port);
	if (srv->lfd < 0) {
		log_error("cannot listen on %s: %s", listen, strerror(errno));
		goto fail;
	}
	if (getsockname(srv->lfd, (struct sockaddr *)&ss, &sl) == 0) {
		if (ss.ss_family == AF_INET)
			srv->port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
		else if (ss.ss_family == AF_INET6)
			srv->port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	}
	server_watch(srv);
	return srv;
fail:
	http_free(srv);
	return NULL;
}

/* Make way for a Unix socket at `path`: nothing there, or a socket file
 * that no process listens on any more (removed). -1 with why in err for
 * anything else. */
static int unix_clear(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct stat st;
	int fd, rc, e;

	if (lstat(path, &st) < 0) {
		if (errno == ENOENT)
			return 0;
		snprintf(err, errlen, "cannot look at %s: %s", path, strerror(errno));
		return -1;
	}
	if (!S_ISSOCK(st.st_mode)) {
		snprintf(err, errlen,
			 "%s exists and is not a socket: remove it, or choose another path", path);
		return -1;
	}
	/* a socket file outlives its process: it is stale when nobody answers */
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "cannot make a socket: %s", strerror(errno));
		return -1;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	rc = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	e = errno;
	close(fd);
	if (rc == 0 || e == EAGAIN || e == EINPROGRESS) {
		snprintf(err, errlen,
			 "a process listens on %s already (another pixrelay serve with the same "
			 "path?)",
			 path);
		return -1;
	}
	if (e != ECONNREFUSED) {
		snprintf(err, errlen, "cannot tell whether a process listens on %s: %s", path,
			 strerror(e));
		return -1;
	}
	if (unlink(path) < 0 && errno != ENOENT) {
		snprintf(err, errlen, "cannot remove the stale socket %s: %s", path,
			 strerror(errno));
		return -1;
	}
	log_info("removed the stale socket %s (no process listened on it)", path);
	return 0;
}

struct http_server *http_new_unix(struct event_base *base, const struct config *cfg,
				  const char *path, const struct http_unix_opts *opts,
				  const struct http_route *routes, size_t nroutes,
				  http_auth_fn auth, void *app, char *err, size_t errlen)
{
	struct http_server *srv = NULL;
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	const char *group = opts && opts->group && opts->group[0] ? opts->group : NULL;
	gid_t gid = getegid();
	struct stat st;

	if (!*path || strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "a socket path must be 1 to %zu bytes",
			 sizeof(sa.sun_path) - 1);
		return NULL;
	}
	if (group && unixid_parse_gid(group, &gid, err, errlen) < 0)
		return NULL;
	if (unix_clear(path, err, errlen) < 0)
		return NULL;
	srv = server_new(base, cfg, routes, nroutes, auth, app, err, errlen);
	if (!srv)
		return NULL;
	if (opts && opts->proxies)
		srv->proxies = *opts->proxies;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	srv->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (srv->lfd < 0 || bind(srv->lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		snprintf(err, errlen, "cannot make the socket %s: %s", path, strerror(errno));
		goto fail;
	}
	/* ours from here on: removed again on every way out */
	if (lstat(path, &st) == 0) {
		srv->unix_path = mem_strdup(path);
		srv->unix_dev = st.st_dev;
		srv->unix_ino = st.st_ino;
	}
	/* mode and group before listen(): until then a connect is refused */
	if (chmod(path, 0660) < 0) {
		snprintf(err, errlen, "cannot make %s mode 0660: %s", path, strerror(errno));
		goto fail;
	}
	if (chown(path, (uid_t)-1, gid) < 0) {
		if (group)
			snprintf(err, errlen,
				 "cannot give %s the group %s: %s (the user this process runs as "
				 "must be a member of the group)",
				 path, group, strerror(errno));
		else
			snprintf(err, errlen, "cannot give %s this process's group: %s", path,
				 strerror(errno));
		goto fail;
	}
	if (listen(srv->lfd, 1024) < 0) {
		snprintf(err, errlen, "cannot listen on %s: %s", path, strerror(errno));
		goto fail;
	}
	server_watch(srv);
	return srv;
fail:
	http_free(srv);
	return NULL;
}

void http_set_observer(struct http_server *srv, http_observer_fn fn, void *arg)
{
	srv->observer = fn;
	srv->observer_arg = arg;
}

void http_stop_accepting(struct http_server *srv)
{
	struct conn *c, *next;

	if (srv->lev) {
		event_free(srv->lev);
		srv->lev = NULL;
	}
	if (srv->pause_timer)
		event_del(srv->pause_timer);
	srv->paused = 0;
	if (srv->lfd >= 0) {
		close(srv->lfd);
		srv->lfd = -1;
	}
	if (srv->unix_path) {
		struct stat st;
		/* not another process's socket that replaced ours meanwhile */
		if (lstat(srv->unix_path, &st) == 0 && S_ISSOCK(st.st_mode) &&
		    st.st_dev == srv->unix_dev && st.st_ino == srv->unix_ino)
			unlink(srv->unix_path);
		free(srv->unix_path);
		srv->unix_path = NULL;
	}
	srv->draining = 1;
	/* idle keep-alive connections would only hold the drain up */
	for (c = srv->conns; c; c = next) {
		next = c->next;
		if (!c->dead && c->state == CS_HEAD && c->ilen == c->req_off &&
		    evbuffer_get_length(c->out) == 0)
			http_conn_kill(c);
	}
}

unsigned http_inflight(const struct http_server *srv)
{
	return srv->inflight;
}

unsigned http_connections(const struct http_server *srv)
{
	return srv->nconns;
}

int http_port(const struct http_server *srv)
{
	return srv->port;
}

void http_free(struct http_server *srv)
{
	if (!srv)
		return;
	http_stop_accepting(srv);
	while (srv->conns) {
		struct conn *c = srv->conns;
		struct req *r = c->req;
		if (r && r->stream && !r->ended && r->gone_state != 2) {
			/* tell the application its stream is over; it may end it */
			http_conn_kill(c);
			http_stream_call_gone(c);
			continue;
		}
		http_conn_free(c);
	}
	if (srv->pause_timer)
		event_free(srv->pause_timer);
	netaddr_list_deinit(&srv->trusted);
	free(srv);
}
