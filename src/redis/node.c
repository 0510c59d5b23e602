/* node.c: the nodes of a client, one connection to one Redis each: making
 * and finding them, connecting with a timeout, the setup each connection
 * runs before commands may go (AUTH, SELECT, ROLE, SCRIPT LOAD),
 * reconnecting with backoff, dropping a connection and retiring a node, and
 * the per-connection timer that fails a command older than the timeout.
 * What goes over a ready connection is send.c; which node a command goes
 * to, redis.c and cluster.c. */
#include "redis_int.h"

#include "pixrelay/core/log.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/core/metrics.h"
#include "pixrelay/pix/backoff.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define RECONNECT_MAX_MS 2000

/* A log line about the connections: info for a server's client, debug for
 * the command-line tools' (they report the reason themselves). */
void rds_note(const struct rds *r, const char *fmt, ...)
{
	char msg[300];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_msg(r->own_base ? LOG_DEBUG : LOG_INFO, "%s", msg);
}

/* A connection problem: logged (once while it lasts) and kept for
 * rds_last_error. */
void rds_node_error(struct node *n, const char *fmt, ...)
{
	struct rds *r = n->r;
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (strcmp(msg, r->last_error) != 0)
		log_msg(r->own_base ? LOG_DEBUG : LOG_WARN, "%s", msg);
	snprintf(r->last_error, sizeof(r->last_error), "%s", msg);
}

void rds_node_set_address(struct node *n, const char *host, int port, const char *path)
{
	snprintf(n->host, sizeof(n->host), "%s", host ? host : "");
	n->port = port;
	snprintf(n->path, sizeof(n->path), "%s", path ? path : "");
	if (n->path[0])
		snprintf(n->name, sizeof(n->name), "%s", n->path);
	else
		snprintf(n->name, sizeof(n->name), strchr(n->host, ':') ? "[%s]:%d" : "%s:%d",
			 n->host, n->port);
}

static void on_reconnect(evutil_socket_t fd, short what, void *arg);
static void on_connect_timeout(evutil_socket_t fd, short what, void *arg);
static void on_node_timer(evutil_socket_t fd, short what, void *arg);

struct node *rds_node_new(struct rds *r, enum role role, const char *host, int port,
			  const char *path)
{
	struct node *n = mem_new(struct node);

	n->r = r;
	n->role = role;
	n->backoff_ms = RECONNECT_MIN_MS;
	n->replicas = -1;
	rds_node_set_address(n, host, port, path);
	n->reconnect_timer = evtimer_new(r->base, on_reconnect, n);
	n->connect_timer = evtimer_new(r->base, on_connect_timeout, n);
	n->timer = evtimer_new(r->base, on_node_timer, n);
	n->next = r->nodes;
	r->nodes = n;
	return n;
}

/* The data node at host:port, made (and connecting) when new, revived when
 * retired. */
struct node *rds_node_get(struct rds *r, const char *host, size_t hostlen, int port)
{
	struct node *n;

	for (n = r->nodes; n; n = n->next)
		if (n->role == ROLE_DATA && !n->path[0] && n->port == port &&
		    strlen(n->host) == hostlen && memcmp(n->host, host, hostlen) == 0)
			break;
	if (!n) {
		char h[256];
		snprintf(h, sizeof(h), "%.*s", (int)hostlen, host);
		n = rds_node_new(r, ROLE_DATA, h, port, NULL);
	}
	if (n->retired) {
		n->retired = 0;
		n->backoff_ms = RECONNECT_MIN_MS;
	}
	/* a subscriber needs the map only: it keeps one connection for it */
	if (!n->ac && !evtimer_pending(n->reconnect_timer, NULL) && !r->channel)
		rds_connect_now(n);
	return n;
}

void rds_schedule_reconnect(struct node *n)
{
	struct timeval tv = tv_ms(n->backoff_ms);
	/* Sentinel's master: each try asks the sentinels first, so a promoted
	 * replica is found within half a second */
	long max = n->r->mode == MODE_SENTINEL ? RECONNECT_MAX_MS / 4 : RECONNECT_MAX_MS;

	if (n->r->closing || n->retired)
		return;
	evtimer_add(n->reconnect_timer, &tv);
	n->backoff_ms = backoff_double(n->backoff_ms, max);
}

/* The commands waiting for n, which will not be ready soon: elsewhere, later,
 * or failed. None of them was sent. */
void rds_requeue_waiting(struct node *n, const char *why)
{
	while (n->waiting) {
		struct cmd *c = n->waiting;
		rds_list_remove(&n->waiting, &n->waiting_tail, c);
		if (n->r->mode == MODE_CLUSTER)
			rds_retry_later(c, why);
		else
			rds_park(c, 0, why);
	}
}

/* n's connection is gone (or never came): commands waiting for it go
 * elsewhere or fail, a subscriber hears of it, and it reconnects later. */
static void node_down(struct node *n)
{
	struct rds *r = n->r;
	int was_subscribed = n->subscribed;

	n->ac = NULL;
	n->connected = 0;
	n->ready = 0;
	n->subscribed = 0;
	evtimer_del(n->connect_timer);
	if (r->closing)
		return;
	rds_requeue_waiting(n, "redis unavailable");
	if (was_subscribed && r->on_message)
		r->on_message(r->message_ud, RDS_SUB_LOST, NULL, 0);
	rds_update_ready(r);
	if (r->mode == MODE_CLUSTER && n->in_map > 0)
		rds_refresh_soon(r, 100);
	if (!n->retired)
		rds_schedule_reconnect(n);
}

/* Drop n's connection: every command sent there fails (hiredis calls their
 * callbacks with no reply, at once or when the callback running now
 * returns), the others wait for a reconnect. */
void rds_node_reset(struct node *n, const char *why)
{
	redisAsyncContext *ac = n->ac;

	if (!ac)
		return;
	rds_node_error(n, "redis %s: %s", n->name, why);
	ac->data = NULL; /* on_disconnect: handled here */
	redisAsyncFree(ac);
	node_down(n);
}

/* A node that owns no slot any more: closed once its commands are answered,
 * and not reconnected. */
void rds_node_retire(struct node *n)
{
	n->retired = 1;
	n->in_map = 0;
	evtimer_del(n->reconnect_timer);
	rds_requeue_waiting(n, "redis unavailable");
	if (n->ac) {
		n->ready = 0;
		redisAsyncDisconnect(n->ac);
	}
}

static void on_node_timer(evutil_socket_t fd, short what, void *arg)
{
	struct node *n = arg;
	struct cmd *head = n->sent;
	uint64_t now = now_ms(n->r);

	n->timer_armed = 0;
	if (n->held && (!head || n->held->sent_ms < head->sent_ms))
		head = n->held; /* answered, but its WAIT has not come back */
	if (!head)
		return;
	if (now >= head->sent_ms + (uint64_t)n->r->timeout_ms) {
		rds_complete(head, NULL, "redis command timed out");
		/* its reply may still come: the callbacks free it then */
		rds_node_reset(n, "command timed out");
		return;
	}
	{
		struct timeval tv = tv_ms((long)(head->sent_ms + (uint64_t)n->r->timeout_ms - now));
		evtimer_add(n->timer, &tv);
		n->timer_armed = 1;
	}
}

/* Start the timer that watches n's oldest command, unless it runs. */
void rds_node_arm(struct node *n)
{
	if (!n->timer_armed) {
		struct timeval tv = tv_ms(n->r->timeout_ms);
		evtimer_add(n->timer, &tv);
		n->timer_armed = 1;
	}
}

/* n's setup is done: the commands waiting for it go, and the client may
 * be ready. */
void rds_node_ready(struct node *n)
{
	struct rds *r = n->r;

	n->ready = 1;
	n->failed_tries = 0;
	n->backoff_ms = RECONNECT_MIN_MS;
	while (n->waiting && n->ready) {
		struct cmd *c = n->waiting;
		rds_list_remove(&n->waiting, &n->waiting_tail, c);
		rds_node_send(n, c);
	}
	if (n->role == ROLE_SENTINEL) {
		if (r->resolve_wanted)
			rds_sentinel_resolve(r);
		return;
	}
	rds_watch_node(n);
	if (r->mode == MODE_CLUSTER && n->in_map <= 0 && !n->seed)
		return;
	rds_update_ready(r);
	if (r->channel && r->mode != MODE_CLUSTER)
		rds_sub_retarget(r);
}

/* ---- connections ---- */

/* The answer to one setup command of n: n is ready after the last one; an
 * error drops the connection. */
void rds_on_setup_reply(struct cmd *c, redisReply *reply, const char *err)
{
	struct node *n = c->node;

	if (n->ac != c->ac)
		return; /* an answer about a connection that is gone */
	if (err) {
		char msg[200];
		n->failed_tries++;
		snprintf(msg, sizeof(msg), "setup failed: %.150s", err);
		rds_node_reset(n, msg);
		rds_sentinel_next(n);
		if (n->r->wake_on_ready && (n->seed || n->role == ROLE_SENTINEL))
			event_base_loopbreak(n->r->base);
		return;
	}
	if (--n->setup_left == 0)
		rds_node_ready(n);
}

static void setup(struct node *n, int argc, const char **argv)
{
	n->setup_left++;
	rds_internal_send(n, rds_on_setup_reply, argc, argv);
}

/* After AUTH (and the cluster question): what a data node needs before
 * commands may go. */
void rds_setup_data(struct node *n)
{
	struct rds *r = n->r;

	if (r->mode != MODE_CLUSTER && r->addr.db) {
		char db[16];
		const char *argv[] = {"SELECT", db};
		snprintf(db, sizeof(db), "%d", r->addr.db);
		setup(n, 2, argv);
	}
	if (r->mode == MODE_SENTINEL)
		rds_sentinel_check_role(n);
	for (int i = 0; !r->channel && i < SCRIPT_COUNT; i++) {
		const char *argv[] = {"SCRIPT", "LOAD", scripts_body((enum script_id)i)};
		setup(n, 3, argv);
	}
}

static void on_connect(const redisAsyncContext *ac, int status)
{
	struct node *n = ac->data;
	struct rds *r = n->r;

	evtimer_del(n->connect_timer);
	if (status != REDIS_OK) {
		/* hiredis frees the context after this callback */
		rds_node_error(n, "cannot connect to redis %s: %.150s", n->name, ac->errstr);
		n->failed_tries++;
		rds_sentinel_next(n);
		if (r->wake_on_ready && (n->seed || n->role == ROLE_SENTINEL))
			event_base_loopbreak(r->base);
		node_down(n);
		return;
	}
	n->connected = 1;
	rds_note(r, "redis %s connected", n->name);
	if (n->was_connected && !r->own_base)
		metrics_redis_reconnect();
	n->was_connected = 1;
	n->setup_left = 1; /* held until every setup command is queued */
	if (n->role == ROLE_SENTINEL ? r->addr.sentinel_password[0] != '\0'
				     : r->addr.password[0] != '\0') {
		const char *argv[] = {"AUTH", n->role == ROLE_SENTINEL ? r->addr.sentinel_password
								       : r->addr.password};
		setup(n, 2, argv);
	}
	if (n->role == ROLE_SUB) {
		rds_sub_subscribe(n);
		n->setup_left--;
		return; /* ready once subscribed */
	}
	if (n->role == ROLE_DATA) {
		if (r->mode == MODE_DETECT)
			rds_cluster_detect(n);
		else
			rds_setup_data(n);
	}
	if (--n->setup_left == 0)
		rds_node_ready(n);
}

static void on_disconnect(const redisAsyncContext *ac, int status)
{
	struct node *n = ac->data;

	if (!n || n->r->closing)
		return; /* dropped on purpose: node_reset or rds_free did the rest */
	if (status != REDIS_OK)
		rds_node_error(n, "redis %s disconnected: %s", n->name,
			       ac->errstr[0] ? ac->errstr : "connection lost");
	else if (!n->retired)
		rds_node_error(n, "redis %s disconnected", n->name);
	node_down(n);
}

static void on_connect_timeout(evutil_socket_t fd, short what, void *arg)
{
	struct node *n = arg;
	redisAsyncContext *ac = n->ac;

	if (!ac || n->connected)
		return;
	rds_node_error(n, "redis %s: connect timed out", n->name);
	n->failed_tries++;
	ac->data = NULL;
	redisAsyncFree(ac); /* no disconnect callback: it never connected */
	if (n->r->wake_on_ready && (n->seed || n->role == ROLE_SENTINEL))
		event_base_loopbreak(n->r->base);
	node_down(n);
}

static void on_reconnect(evutil_socket_t fd, short what, void *arg)
{
	struct node *n = arg;
	struct rds *r = n->r;

	if (n->role == ROLE_SUB)
		rds_sub_retarget(r);
	else if (n->role == ROLE_DATA && r->mode == MODE_SENTINEL)
		rds_sentinel_resolve(r);
	else
		rds_connect_now(n);
}

void rds_connect_now(struct node *n)
{
	struct rds *r = n->r;
	redisAsyncContext *ac;
	struct timeval tv = tv_ms(r->timeout_ms);

	if (n->ac || r->closing || n->retired || (!n->path[0] && !n->host[0]))
		return;
	evtimer_del(n->reconnect_timer);
	if (n->path[0])
		ac = redisAsyncConnectUnix(n->path);
	else
		ac = redisAsyncConnect(n->host, n->port);
	if (!ac)
		mem_oom(__FILE__, __LINE__);
	if (ac->err) {
		rds_node_error(n, "cannot connect to redis %s: %.150s", n->name, ac->errstr);
		n->failed_tries++;
		redisAsyncFree(ac);
		rds_schedule_reconnect(n);
		return;
	}
	ac->data = n;
	n->ac = ac;
	n->connected = 0;
	n->ready = 0;
	{
		struct rds_evio *e = rds_evio_attach(ac, r->base);

		if (n->role == ROLE_SUB && event_base_get_npriorities(r->base) > 1)
			/* announcements first: when one arrives together with a
			 * request, the request must not be served from what it
			 * announces as stale */
			event_priority_set(e->rev, 0);
	}
	redisAsyncSetConnectCallback(ac, on_connect);
	redisAsyncSetDisconnectCallback(ac, on_disconnect);
	evtimer_add(n->connect_timer, &tv);
}
