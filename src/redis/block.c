/* block.c: the blocking client, for the command-line tools and for
 * start-up work before the server's loop runs: rds_open makes the same
 * client as rds_new on a private loop and runs that loop until it is
 * ready; rds_call and rds_call_script send one command and run it until
 * the answer. The client itself is redis.c. */
#include "redis_int.h"

#include "pixrelay/core/mem.h"

#include <stdio.h>

static void on_open_timeout(evutil_socket_t fd, short what, void *arg)
{
	event_base_loopbreak(arg);
}

struct rds *rds_open(const struct rds_addr *addr, long timeout_ms, char *err, size_t errlen)
{
	struct event_base *base = event_base_new();
	struct event *t;
	struct timeval tv = tv_ms(timeout_ms);
	struct rds *r;

	if (!base)
		mem_oom(__FILE__, __LINE__);
	r = rds_create(base, addr, timeout_ms, NULL, NULL, NULL);
	r->own_base = 1;
	r->wake_on_ready = 1;
	t = evtimer_new(base, on_open_timeout, base);
	evtimer_add(t, &tv);
	if (!r->ready)
		event_base_dispatch(base);
	event_free(t);
	r->wake_on_ready = 0;
	if (!r->ready) {
		snprintf(err, errlen, "%s", r->last_error[0] ? r->last_error : "redis not ready");
		rds_free(r);
		return NULL;
	}
	return r;
}

struct event_base *rds_base(const struct rds *r)
{
	return r->own_base ? r->base : NULL;
}

struct call {
	int done;
	redisReply *reply;
	char err[256];
};

static void on_call(void *ud, redisReply *reply, const char *err)
{
	struct call *k = ud;

	k->done = 1;
	if (reply)
		k->reply = rds_reply_copy(reply);
	else
		snprintf(k->err, sizeof(k->err), "%s", err ? err : "no reply");
}

static redisReply *call_wait(struct rds *r, struct call *k, char *err, size_t errlen)
{
	while (!k->done)
		event_base_loop(r->base, EVLOOP_ONCE);
	if (!k->reply)
		snprintf(err, errlen, "%s", k->err);
	return k->reply;
}

redisReply *rds_call(struct rds *r, int argc, const char **argv, const size_t *lens, char *err,
		     size_t errlen)
{
	struct call k = {0, NULL, ""};

	rds_cmd_argv(r, on_call, &k, argc, argv, lens);
	return call_wait(r, &k, err, errlen);
}

redisReply *rds_call_script(struct rds *r, enum script_id id, int nkeys, int argc,
			    const char **argv, char *err, size_t errlen)
{
	struct call k = {0, NULL, ""};

	rds_script(r, on_call, &k, id, nkeys, argc, argv, NULL);
	return call_wait(r, &k, err, errlen);
}
