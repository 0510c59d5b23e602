#include "pixrelay/redis.h"

#include "pixrelay/log.h"
#include "pixrelay/mem.h"
#include "pixrelay/metrics.h"

#include <hiredis/adapters/libevent.h>
#include <hiredis/async.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#define RECONNECT_MIN_MS 50
#define RECONNECT_MAX_MS 2000

struct pending {
	struct rds *r;
	rds_reply_fn cb;
	void *ud;
	struct event *timer;
	int done;     /* the user callback has run */
	int internal; /* a setup command: SELECT, AUTH, SCRIPT LOAD */
	int script;   /* script id + 1 when this is an EVALSHA */
	int argc;     /* copied argv, kept for the NOSCRIPT retry */
	char **argv;
	uint64_t sent_us;
	size_t *lens;
	struct pending *prev, *next;
};

struct rds {
	struct event_base *base;
	struct rds_addr addr;
	long timeout_ms;
	redisAsyncContext *ac;
	int connected;
	int ready;
	int setup_left; /* setup commands still without reply */
	long backoff_ms;
	struct event *reconnect_timer;
	struct event *connect_timer;
	struct pending *pending; /* commands sent and not yet answered */
	char last_error[256];
	int closing;
	int was_connected; /* a connection was made before (the next is a reconnection) */
	/* a subscriber client (rds_new_subscriber): one channel, no scripts */
	char *channel;
	rds_message_fn on_message;
	void *message_ud;
	int subscribed; /* the SUBSCRIBE of this connection was confirmed */
};

static void connect_now(struct rds *r);

int rds_parse_addr(const char *url, struct rds_addr *out)
{
	struct rds_addr a;
	const char *p;

	memset(&a, 0, sizeof(a));
	if (url[0] == '/') {
		if (strlen(url) >= sizeof(a.path))
			return -1;
		strcpy(a.path, url);
	} else if (strncmp(url, "unix://", 7) == 0) {
		const char *q = strchr(url + 7, '?');
		size_t n = q ? (size_t)(q - url - 7) : strlen(url + 7);
		if (n == 0 || n >= sizeof(a.path) || url[7] != '/')
			return -1;
		memcpy(a.path, url + 7, n);
		if (q) {
			char *end = NULL;
			if (strncmp(q, "?db=", 4) != 0)
				return -1;
			a.db = (int)strtol(q + 4, &end, 10);
			if (end == q + 4 || *end || a.db < 0)
				return -1;
		}
	} else if (strncmp(url, "redis://", 8) == 0) {
		const char *at, *host, *slash, *colon;
		size_t hl;
		p = url + 8;
		at = strrchr(p, '@');
		if (at) {
			const char *pw = memchr(p, ':', (size_t)(at - p));
			pw = pw ? pw + 1 : p;
			if ((size_t)(at - pw) >= sizeof(a.password))
				return -1;
			memcpy(a.password, pw, (size_t)(at - pw));
			p = at + 1;
		}
		host = p;
		slash = strchr(p, '/');
		colon = memchr(p, ':', slash ? (size_t)(slash - p) : strlen(p));
		hl = colon ? (size_t)(colon - host) : slash ? (size_t)(slash - host) : strlen(host);
		if (hl == 0 || hl >= sizeof(a.host))
			return -1;
		memcpy(a.host, host, hl);
		a.port = 6379;
		if (colon) {
			char *end = NULL;
			long port = strtol(colon + 1, &end, 10);
			if (end == colon + 1 || (*end && *end != '/') || port < 1 || port > 65535)
				return -1;
			a.port = (int)port;
		}
		if (slash && slash[1]) {
			char *end = NULL;
			a.db = (int)strtol(slash + 1, &end, 10);
			if (end == slash + 1 || *end || a.db < 0)
				return -1;
		}
	} else {
		return -1;
	}
	*out = a;
	return 0;
}

static void pending_free(struct pending *p)
{
	if (p->timer)
		event_free(p->timer);
	for (int i = 0; i < p->argc; i++)
		free(p->argv[i]);
	free(p->argv);
	free(p->lens);
	free(p);
}

static void pending_unlink(struct pending *p)
{
	struct rds *r = p->r;

	if (p->prev)
		p->prev->next = p->next;
	else if (r->pending == p)
		r->pending = p->next;
	if (p->next)
		p->next->prev = p->prev;
	p->prev = p->next = NULL;
}

static void set_error(struct rds *r, const char *what)
{
	snprintf(r->last_error, sizeof(r->last_error), "%s", what);
}

static void schedule_reconnect(struct rds *r)
{
	struct timeval tv;

	if (r->closing)
		return;
	tv.tv_sec = r->backoff_ms / 1000;
	tv.tv_usec = (r->backoff_ms % 1000) * 1000;
	evtimer_add(r->reconnect_timer, &tv);
	r->backoff_ms = r->backoff_ms * 2 > RECONNECT_MAX_MS ? RECONNECT_MAX_MS : r->backoff_ms * 2;
}

/* Drop the connection (pending commands fail) and reconnect later. */
static void reset_connection(struct rds *r, const char *why)
{
	redisAsyncContext *ac = r->ac;

	if (!ac)
		return;
	log_warn("redis connection reset: %s", why);
	set_error(r, why);
	/* redisAsyncFree runs every pending callback with a NULL reply and then
	 * on_disconnect, which schedules the reconnect */
	redisAsyncFree(ac);
}

static void on_timeout(evutil_socket_t fd, short what, void *arg)
{
	struct pending *p = arg;
	struct rds *r = p->r;

	if (!p->done) {
		p->done = 1;
		if (p->cb)
			p->cb(p->ud, NULL, "redis command timed out");
	}
	/* the reply may still arrive; on_reply frees p then */
	reset_connection(r, "redis command timed out");
}

static void arm_timer(struct pending *p)
{
	struct timeval tv = {p->r->timeout_ms / 1000, (p->r->timeout_ms % 1000) * 1000};

	if (!p->timer)
		p->timer = evtimer_new(p->r->base, on_timeout, p);
	evtimer_add(p->timer, &tv);
}

static void on_reply(redisAsyncContext *ac, void *replyp, void *privdata);

static uint64_t now_us(void)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	return (uint64_t)tv.tv_sec * 1000000u + (uint64_t)tv.tv_usec;
}

static int send_pending(struct rds *r, struct pending *p)
{
	if (redisAsyncCommandArgv(r->ac, on_reply, p, p->argc, (const char **)p->argv, p->lens) !=
	    REDIS_OK)
		return -1;
	p->next = r->pending;
	if (r->pending)
		r->pending->prev = p;
	r->pending = p;
	arm_timer(p);
	p->sent_us = now_us();
	return 0;
}

static void on_subscription(redisAsyncContext *ac, void *replyp, void *privdata);

static void mark_ready(struct rds *r)
{
	if (r->channel && !r->subscribed) {
		/* ready once the subscription is confirmed (on_subscription) */
		const char *argv[] = {"SUBSCRIBE", r->channel};
		if (redisAsyncCommandArgv(r->ac, on_subscription, r, 2, argv, NULL) != REDIS_OK)
			reset_connection(r, "cannot subscribe");
		return;
	}
	r->ready = 1;
	r->backoff_ms = RECONNECT_MIN_MS;
	r->last_error[0] = '\0';
	log_info("redis ready");
}

static void on_setup_reply(void *ud, redisReply *reply, const char *err)
{
	struct rds *r = ud;

	if (err) {
		char msg[200];
		snprintf(msg, sizeof(msg), "redis setup failed: %.150s", err);
		if (r->ac && !r->closing)
			reset_connection(r, msg);
		return;
	}
	if (--r->setup_left == 0)
		mark_ready(r);
}

static struct pending *pending_new(struct rds *r, rds_reply_fn cb, void *ud, int argc,
				   const char **argv, const size_t *lens)
{
	struct pending *p = mem_new(struct pending);

	p->r = r;
	p->cb = cb;
	p->ud = ud;
	p->argc = argc;
	p->argv = mem_calloc((size_t)argc, sizeof(char *));
	p->lens = mem_calloc((size_t)argc, sizeof(size_t));
	for (int i = 0; i < argc; i++) {
		p->lens[i] = lens ? lens[i] : strlen(argv[i]);
		p->argv[i] = mem_strndup(argv[i], p->lens[i]);
	}
	return p;
}

static void send_setup(struct rds *r, int argc, const char **argv)
{
	struct pending *p = pending_new(r, on_setup_reply, r, argc, argv, NULL);

	p->internal = 1;
	r->setup_left++;
	if (send_pending(r, p) < 0) {
		pending_free(p);
		r->setup_left--;
	}
}

static void on_connect(const redisAsyncContext *ac, int status)
{
	struct rds *r = ac->data;

	evtimer_del(r->connect_timer);
	if (status != REDIS_OK) {
		char msg[200];
		snprintf(msg, sizeof(msg), "cannot connect to redis: %.150s", ac->errstr);
		if (strcmp(msg, r->last_error) != 0)
			log_warn("%s", msg);
		set_error(r, msg);
		r->ac = NULL; /* hiredis frees the context after this callback */
		schedule_reconnect(r);
		return;
	}
	r->connected = 1;
	log_info("redis connected");
	if (r->was_connected)
		metrics_redis_reconnect();
	r->was_connected = 1;
	r->setup_left = 1; /* held until every setup command is queued */
	if (r->addr.password[0]) {
		const char *argv[] = {"AUTH", r->addr.password};
		send_setup(r, 2, argv);
	}
	if (r->addr.db) {
		char db[16];
		const char *argv[] = {"SELECT", db};
		snprintf(db, sizeof(db), "%d", r->addr.db);
		send_setup(r, 2, argv);
	}
	for (int i = 0; !r->channel && i < SCRIPT_COUNT; i++) {
		const char *argv[] = {"SCRIPT", "LOAD", scripts_body((enum script_id)i)};
		send_setup(r, 3, argv);
	}
	if (--r->setup_left == 0)
		mark_ready(r);
}

static void on_disconnect(const redisAsyncContext *ac, int status)
{
	struct rds *r = ac->data;
	int was_subscribed = r->subscribed;

	r->ac = NULL;
	r->connected = 0;
	r->ready = 0;
	r->subscribed = 0;
	if (was_subscribed && !r->closing)
		r->on_message(r->message_ud, RDS_SUB_LOST, NULL, 0);
	if (status != REDIS_OK)
		set_error(r, ac->errstr[0] ? ac->errstr : "redis connection lost");
	else if (!r->last_error[0])
		set_error(r, "redis connection closed");
	if (!r->closing) {
		log_warn("redis disconnected: %s", r->last_error);
		schedule_reconnect(r);
	}
}

static void on_connect_timeout(evutil_socket_t fd, short what, void *arg)
{
	struct rds *r = arg;
	redisAsyncContext *ac = r->ac;

	if (!ac || r->connected)
		return;
	set_error(r, "redis connect timed out");
	log_warn("redis connect timed out");
	r->ac = NULL;
	redisAsyncFree(ac); /* no disconnect callback: it never connected */
	schedule_reconnect(r);
}

static void on_reconnect(evutil_socket_t fd, short what, void *arg)
{
	connect_now(arg);
}

static void connect_now(struct rds *r)
{
	redisAsyncContext *ac;
	struct timeval tv = {r->timeout_ms / 1000, (r->timeout_ms % 1000) * 1000};

	if (r->ac || r->closing)
		return;
	if (r->addr.path[0])
		ac = redisAsyncConnectUnix(r->addr.path);
	else
		ac = redisAsyncConnect(r->addr.host, r->addr.port);
	if (!ac)
		mem_oom(__FILE__, __LINE__);
	if (ac->err) {
		char msg[200];
		snprintf(msg, sizeof(msg), "cannot connect to redis: %.150s", ac->errstr);
		if (strcmp(msg, r->last_error) != 0)
			log_warn("%s", msg);
		set_error(r, msg);
		redisAsyncFree(ac);
		schedule_reconnect(r);
		return;
	}
	ac->data = r;
	r->ac = ac;
	r->connected = 0;
	redisLibeventAttach(ac, r->base);
	if (r->channel && event_base_get_npriorities(r->base) > 1) {
		/* announcements first: when one arrives together with a request, the
		 * request must not be served from what it announces as stale */
		redisLibeventEvents *e = ac->ev.data;
		event_priority_set(e->rev, 0);
	}
	redisAsyncSetConnectCallback(ac, on_connect);
	redisAsyncSetDisconnectCallback(ac, on_disconnect);
	evtimer_add(r->connect_timer, &tv);
}

static struct rds *create(struct event_base *base, const struct rds_addr *addr, long timeout_ms,
			  const char *channel, rds_message_fn cb, void *ud)
{
	struct rds *r = mem_new(struct rds);

	r->base = base;
	r->addr = *addr;
	r->timeout_ms = timeout_ms;
	r->backoff_ms = RECONNECT_MIN_MS;
	r->reconnect_timer = evtimer_new(base, on_reconnect, r);
	r->connect_timer = evtimer_new(base, on_connect_timeout, r);
	if (channel) {
		r->channel = mem_strdup(channel);
		r->on_message = cb;
		r->message_ud = ud;
	}
	set_error(r, "redis not connected yet");
	connect_now(r);
	return r;
}

struct rds *rds_new(struct event_base *base, const struct rds_addr *addr, long timeout_ms)
{
	return create(base, addr, timeout_ms, NULL, NULL, NULL);
}

/* Every reply on a subscribed connection: the confirmation, then messages.
 * A NULL reply comes when the connection goes; on_disconnect says so. */
static void on_subscription(redisAsyncContext *ac, void *replyp, void *privdata)
{
	struct rds *r = privdata;
	redisReply *reply = replyp;

	if (!reply || reply->type != REDIS_REPLY_ARRAY || reply->elements != 3 ||
	    reply->element[0]->type != REDIS_REPLY_STRING)
		return;
	if (strcmp(reply->element[0]->str, "subscribe") == 0) {
		r->subscribed = 1;
		mark_ready(r);
		r->on_message(r->message_ud, RDS_SUB_READY, NULL, 0);
	} else if (strcmp(reply->element[0]->str, "message") == 0 &&
		   reply->element[2]->type == REDIS_REPLY_STRING) {
		r->on_message(r->message_ud, RDS_SUB_MESSAGE, reply->element[2]->str,
			      reply->element[2]->len);
	}
}

struct rds *rds_new_subscriber(struct event_base *base, const struct rds_addr *addr,
			       long timeout_ms, const char *channel, rds_message_fn cb, void *ud)
{
	return create(base, addr, timeout_ms, channel, cb, ud);
}

void rds_free(struct rds *r)
{
	if (!r)
		return;
	r->closing = 1;
	set_error(r, "redis client closed");
	if (r->ac)
		redisAsyncFree(r->ac);
	event_free(r->reconnect_timer);
	event_free(r->connect_timer);
	free(r->channel);
	free(r);
}

int rds_ready(const struct rds *r)
{
	return r->ready;
}

const char *rds_last_error(const struct rds *r)
{
	return r->last_error;
}

static void on_reply(redisAsyncContext *ac, void *replyp, void *privdata)
{
	struct pending *p = privdata;
	struct rds *r = p->r;
	redisReply *reply = replyp;

	pending_unlink(p);
	if (p->timer)
		evtimer_del(p->timer);
	if (reply && !p->internal)
		metrics_redis((double)(now_us() - p->sent_us) / 1e6);
	if (p->done)
		goto done;
	if (reply && reply->type == REDIS_REPLY_ERROR && p->script &&
	    strncmp(reply->str, "NOSCRIPT", 8) == 0 && r->ac && !r->closing) {
		/* the script cache was flushed: send the body once with EVAL */
		enum script_id id = (enum script_id)(p->script - 1);
		free(p->argv[0]);
		free(p->argv[1]);
		p->argv[0] = mem_strdup("EVAL");
		p->argv[1] = mem_strdup(scripts_body(id));
		p->lens[0] = 4;
		p->lens[1] = strlen(p->argv[1]);
		p->script = 0;
		if (send_pending(r, p) == 0)
			return;
	}
	p->done = 1;
	if (!reply)
		p->cb(p->ud, NULL, r->closing ? "redis client closed" : "redis connection lost");
	else if (reply->type == REDIS_REPLY_ERROR)
		p->cb(p->ud, reply, reply->str);
	else
		p->cb(p->ud, reply, NULL);
done:
	pending_free(p);
}

struct deferred {
	rds_reply_fn cb;
	void *ud;
};

static void on_deferred_fail(evutil_socket_t fd, short what, void *arg)
{
	struct deferred *d = arg;

	d->cb(d->ud, NULL, "redis unavailable");
	free(d);
}

static void fail_later(struct rds *r, rds_reply_fn cb, void *ud)
{
	struct deferred *d = mem_new(struct deferred);
	struct timeval zero = {0, 0};

	d->cb = cb;
	d->ud = ud;
	if (event_base_once(r->base, -1, EV_TIMEOUT, on_deferred_fail, d, &zero) < 0)
		mem_oom(__FILE__, __LINE__);
}

static void submit(struct rds *r, struct pending *p)
{
	if (!r->ready || !r->ac || send_pending(r, p) < 0) {
		rds_reply_fn cb = p->cb;
		void *ud = p->ud;
		pending_free(p);
		if (r->closing)
			/* the loop will not run again: answer now, so that nothing
			 * waiting on this callback is left behind */
			cb(ud, NULL, "redis client closed");
		else
			fail_later(r, cb, ud);
	}
}

void rds_cmd_argv(struct rds *r, rds_reply_fn cb, void *ud, int argc, const char **argv,
		  const size_t *lens)
{
	submit(r, pending_new(r, cb, ud, argc, argv, lens));
}

void rds_script(struct rds *r, rds_reply_fn cb, void *ud, enum script_id id, int nkeys, int argc,
		const char **argv, const size_t *lens)
{
	const char **av = mem_calloc((size_t)argc + 3, sizeof(char *));
	size_t *lv = mem_calloc((size_t)argc + 3, sizeof(size_t));
	char nk[16];
	struct pending *p;

	snprintf(nk, sizeof(nk), "%d", nkeys);
	av[0] = "EVALSHA";
	av[1] = scripts_sha(id);
	av[2] = nk;
	for (int i = 0; i < 3; i++)
		lv[i] = strlen(av[i]);
	for (int i = 0; i < argc; i++) {
		av[i + 3] = argv[i];
		lv[i + 3] = lens ? lens[i] : strlen(argv[i]);
	}
	p = pending_new(r, cb, ud, argc + 3, av, lv);
	p->script = (int)id + 1;
	free(av);
	free(lv);
	submit(r, p);
}

redisContext *rds_sync_connect(const struct rds_addr *addr, long timeout_ms, char *err,
			       size_t errlen)
{
	struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
	redisContext *c;
	redisReply *reply;

	if (addr->path[0])
		c = redisConnectUnixWithTimeout(addr->path, tv);
	else
		c = redisConnectWithTimeout(addr->host, addr->port, tv);
	if (!c)
		mem_oom(__FILE__, __LINE__);
	if (c->err) {
		snprintf(err, errlen, "cannot connect to redis at %s: %s",
			 addr->path[0] ? addr->path : addr->host, c->errstr);
		goto fail;
	}
	redisSetTimeout(c, tv);
	if (addr->password[0]) {
		reply = redisCommand(c, "AUTH %s", addr->password);
		if (!reply || reply->type == REDIS_REPLY_ERROR) {
			snprintf(err, errlen, "redis AUTH failed");
			freeReplyObject(reply);
			goto fail;
		}
		freeReplyObject(reply);
	}
	if (addr->db) {
		reply = redisCommand(c, "SELECT %d", addr->db);
		if (!reply || reply->type == REDIS_REPLY_ERROR) {
			snprintf(err, errlen, "redis SELECT %d failed", addr->db);
			freeReplyObject(reply);
			goto fail;
		}
		freeReplyObject(reply);
	}
	return c;
fail:
	redisFree(c);
	return NULL;
}

redisReply *rds_sync_script(redisContext *c, enum script_id id, int nkeys, int argc,
			    const char **argv)
{
	const char **av = mem_calloc((size_t)argc + 3, sizeof(char *));
	char nk[16];
	redisReply *reply;

	snprintf(nk, sizeof(nk), "%d", nkeys);
	av[0] = "EVALSHA";
	av[1] = scripts_sha(id);
	av[2] = nk;
	memcpy(av + 3, argv, (size_t)argc * sizeof(char *));
	reply = redisCommandArgv(c, argc + 3, av, NULL);
	if (reply && reply->type == REDIS_REPLY_ERROR && strncmp(reply->str, "NOSCRIPT", 8) == 0) {
		freeReplyObject(reply);
		av[0] = "EVAL";
		av[1] = scripts_body(id);
		reply = redisCommandArgv(c, argc + 3, av, NULL);
	}
	free(av);
	return reply;
}

const char *rds_hash_field(const redisReply *h, const char *name)
{
	if (!h || h->type != REDIS_REPLY_ARRAY)
		return NULL;
	for (size_t i = 0; i + 1 < h->elements; i += 2)
		if (h->element[i]->type == REDIS_REPLY_STRING &&
		    strcmp(h->element[i]->str, name) == 0)
			return h->element[i + 1]->type == REDIS_REPLY_STRING
				   ? h->element[i + 1]->str
				   : "";
	return NULL;
}

redisReply *rds_reply_copy(const redisReply *r)
{
	redisReply *c = mem_new(redisReply);

	c->type = r->type;
	c->integer = r->integer;
	if (r->str) {
		c->str = mem_strndup(r->str, r->len);
		c->len = r->len;
	}
	if (r->elements) {
		c->element = mem_calloc(r->elements, sizeof(redisReply *));
		c->elements = r->elements;
		for (size_t i = 0; i < r->elements; i++)
			c->element[i] = rds_reply_copy(r->element[i]);
	}
	return c;
}
