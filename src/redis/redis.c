/* redis.c: the client (include/pixrelay/redis/redis.h): making and freeing
 * it, its readiness, taking commands and scripts from the domain modules,
 * routing each to the node it belongs on, and the parked commands that one
 * timer sends again or fails. The rest of the client is beside it: node.c
 * (nodes and their connections), send.c (sending, replies, WAIT), cluster.c
 * (the slot map, MOVED and ASK), sentinel.c, sub.c (the subscriber),
 * block.c (the blocking client), cmd.c (commands as RESP) and addr.c
 * (addresses); redis_int.h is what they share. */
#include "redis_int.h"

#include "pixrelay/core/mem.h"
#include "pixrelay/redis/rslot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RETRY_MIN_MS 10
#define RETRY_MAX_MS 200

static void on_park_timer(evutil_socket_t fd, short what, void *arg);

/* ---- the client ---- */

/* A client on base, connecting at once: rds_new, rds_new_subscriber (with
 * channel) and rds_open. */
struct rds *rds_create(struct event_base *base, const struct rds_addr *addr, long timeout_ms,
		       const char *channel, rds_message_fn cb, void *ud)
{
	struct rds *r = mem_new(struct rds);

	r->base = base;
	r->addr = *addr;
	r->timeout_ms = timeout_ms;
	r->refresh_timer = evtimer_new(base, rds_on_refresh_timer, r);
	r->park_timer = evtimer_new(base, on_park_timer, r);
	snprintf(r->last_error, sizeof(r->last_error), "redis not connected yet");
	if (channel) {
		r->channel = mem_strdup(channel);
		r->channel_slot = rslot_of(channel, strlen(channel));
		r->on_message = cb;
		r->message_ud = ud;
		r->sub = rds_node_new(r, ROLE_SUB, "", 0, NULL);
	}
	if (addr->master[0]) {
		r->mode = MODE_SENTINEL;
		r->sentinel = rds_node_new(r, ROLE_SENTINEL, addr->sentinels[0].host,
					   addr->sentinels[0].port, NULL);
		r->data = rds_node_new(r, ROLE_DATA, "", 0, NULL);
		r->resolve_wanted = 1;
		rds_connect_now(r->sentinel);
	} else {
		r->mode = MODE_DETECT;
		r->data = rds_node_new(r, ROLE_DATA, addr->host, addr->port, addr->path);
		r->data->seed = 1;
		rds_connect_now(r->data);
	}
	return r;
}

struct rds *rds_new(struct event_base *base, const struct rds_addr *addr, long timeout_ms)
{
	return rds_create(base, addr, timeout_ms, NULL, NULL, NULL);
}

void rds_set_wait(struct rds *r, int replicas)
{
	r->wait_replicas = replicas > 0 ? replicas : 0;
}

void rds_free(struct rds *r)
{
	struct event_base *own;

	if (!r)
		return;
	r->closing = 1;
	snprintf(r->last_error, sizeof(r->last_error), "redis client closed");
	for (struct node *n = r->nodes; n; n = n->next) {
		redisAsyncContext *ac = n->ac;
		rds_requeue_waiting(n, "redis client closed");
		if (ac) {
			n->ac = NULL;
			ac->data = NULL;
			redisAsyncFree(ac); /* callbacks run: "redis client closed" */
		}
	}
	while (r->parked) {
		struct cmd *c = r->parked;
		rds_list_remove(&r->parked, NULL, c);
		rds_complete(c, NULL, "redis client closed");
		rds_cmd_free(c);
	}
	while (r->nodes) {
		struct node *n = r->nodes;
		r->nodes = n->next;
		event_free(n->reconnect_timer);
		event_free(n->connect_timer);
		event_free(n->timer);
		free(n);
	}
	event_free(r->refresh_timer);
	event_free(r->park_timer);
	if (r->watch_timer)
		event_free(r->watch_timer);
	free(r->slots);
	free(r->channel);
	own = r->own_base ? r->base : NULL;
	mem_wipe(&r->addr, sizeof(r->addr)); /* its passwords */
	free(r);
	if (own)
		event_base_free(own);
}

bool rds_ready(const struct rds *r)
{
	return r->ready;
}

const char *rds_last_error(const struct rds *r)
{
	return r->last_error;
}

void rds_update_ready(struct rds *r)
{
	int ready = 0;

	if (r->channel) {
		ready = r->sub->subscribed;
	} else if (r->mode == MODE_CLUSTER) {
		ready = r->covered;
		for (struct node *n = r->nodes; n && ready; n = n->next)
			if (n->role == ROLE_DATA && n->in_map > 0 && !n->ready)
				ready = 0;
	} else if (r->mode != MODE_DETECT) {
		ready = r->data && r->data->ready;
	}
	if (ready == r->ready)
		return;
	r->ready = ready;
	if (ready) {
		r->last_error[0] = '\0';
		rds_note(r, "redis ready");
		if (r->wake_on_ready)
			event_base_loopbreak(r->base);
	} else if (!r->last_error[0]) {
		snprintf(r->last_error, sizeof(r->last_error), "redis not ready");
	}
}

/* ---- commands from the domain modules ---- */

static void submit(struct rds *r, struct cmd *c)
{
	if (r->closing) {
		/* the loop will not run again: answer now, so that nothing
		 * waiting on this callback is left behind */
		rds_complete(c, NULL, "redis client closed");
		rds_cmd_free(c);
		return;
	}
	c->deadline_ms = now_ms(r) + (uint64_t)r->timeout_ms;
	rds_route(c);
}

void rds_cmd_argv(struct rds *r, rds_reply_fn cb, void *ud, int argc, const char **argv,
		  const size_t *lens)
{
	submit(r, rds_cmd_new(r, cb, ud, 0, NULL, argc, argv, lens,
			      rslot_key_index(argc, argv, lens)));
}

void rds_script(struct rds *r, rds_reply_fn cb, void *ud, enum script_id id, int nkeys, int argc,
		const char **argv, const size_t *lens)
{
	char nk[16];
	const char *head[] = {"EVALSHA", scripts_sha(id), nk};
	struct cmd *c;

	snprintf(nk, sizeof(nk), "%d", nkeys);
	c = rds_cmd_new(r, cb, ud, 3, head, argc, argv, lens, nkeys > 0 ? 3 : -1);
	c->script = (int)id + 1;
	submit(r, c);
}

/* Send c where it belongs, or keep it until it can go, or fail it. */
void rds_route(struct cmd *c)
{
	struct rds *r = c->r;
	struct node *n;

	if (r->closing) {
		rds_complete(c, NULL, "redis client closed");
		rds_cmd_free(c);
		return;
	}
	if (r->mode != MODE_CLUSTER) {
		if (r->data && r->data->ready)
			rds_node_send(r->data, c);
		else
			rds_park(c, 0, c->why ? c->why : "redis unavailable");
		return;
	}
	n = c->slot >= 0 ? r->slots[c->slot] : rds_any_primary(r);
	if (!n) {
		rds_refresh_soon(r, 0);
		rds_retry_later(c, "redis unavailable (no primary for the slot)");
	} else if (n->ready) {
		rds_node_send(n, c);
	} else if (n->failed_tries > 0) {
		/* known to be down (its last connection attempt failed): say so
		 * now rather than at the timeout; the other slots are served */
		rds_park(c, 0, "redis unavailable (the primary of the slot is down)");
	} else if (n->ac) {
		rds_list_append(&n->waiting, &n->waiting_tail, c);
	} else {
		rds_retry_later(c, "redis unavailable");
	}
}

/* ---- parked commands: sent again (or failed) by one timer ---- */

/* Have the park timer fire at `due` unless it fires sooner already. */
static void park_arm(struct rds *r, uint64_t due)
{
	uint64_t now;

	if (r->park_armed && r->park_due <= due)
		return;
	now = now_ms(r);
	{
		struct timeval tv = tv_ms(due > now ? (long)(due - now) : 0);
		evtimer_add(r->park_timer, &tv);
	}
	r->park_armed = 1;
	r->park_due = due;
}

/* Park c: fail it with `fail` (not NULL) at the next turn of the loop, or
 * route it again after delay_ms. */
void rds_park(struct cmd *c, long delay_ms, const char *fail)
{
	struct rds *r = c->r;

	if (r->closing) {
		rds_complete(c, NULL, "redis client closed");
		rds_cmd_free(c);
		return;
	}
	c->fail = fail;
	c->due_ms = now_ms(r) + (uint64_t)delay_ms;
	c->prev = NULL;
	c->next = r->parked;
	if (r->parked)
		r->parked->prev = c;
	r->parked = c;
	park_arm(r, c->due_ms);
}

/* Try c again later, or fail it when its time is up. */
void rds_retry_later(struct cmd *c, const char *why)
{
	long delay = RETRY_MIN_MS << (c->tries < 5 ? c->tries : 5);

	c->why = why;
	c->tries++;
	if (c->icb || now_ms(c->r) + (uint64_t)delay >= c->deadline_ms)
		rds_park(c, 0, why);
	else
		rds_park(c, delay > RETRY_MAX_MS ? RETRY_MAX_MS : delay, NULL);
}

static void on_park_timer(evutil_socket_t fd, short what, void *arg)
{
	struct rds *r = arg;
	uint64_t now = now_ms(r);
	struct cmd *due = NULL;

	r->park_armed = 0;
	/* take the due ones out first: routing may park them again */
	for (struct cmd *c = r->parked, *next; c; c = next) {
		next = c->next;
		if (c->due_ms <= now) {
			rds_list_remove(&r->parked, NULL, c);
			c->next = due;
			due = c;
		}
	}
	while (due) {
		struct cmd *c = due;
		due = c->next;
		c->next = NULL;
		if (c->fail) {
			rds_complete(c, NULL, c->fail);
			rds_cmd_free(c);
		} else {
			rds_route(c);
		}
	}
	{
		uint64_t next = UINT64_MAX;
		for (struct cmd *c = r->parked; c; c = c->next)
			if (c->due_ms < next)
				next = c->due_ms;
		if (next != UINT64_MAX)
			park_arm(r, next);
	}
}
