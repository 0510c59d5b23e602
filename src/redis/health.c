/* health.c: what a client can tell about the Redis it serves from, for
 * /readyz, /metrics and the log: whether any of it is served (rds_serving:
 * requests go on while one primary of a cluster is missing), how much of the
 * keyspace (rds_slots_served), and its primaries with their replicas
 * (rds_primaries). The replicas are learnt by the watch of
 * rds_watch_replicas: ROLE on each primary's own connection when it becomes
 * ready, every 2 s, and when a WAIT there came back short; it logs once
 * when a primary falls below the rds_set_wait setting and once when it is
 * back. Whether the client is ready at all is redis.c (rds_ready); failing
 * the commands of a missing primary at once, redis.c's routing. */
#include "redis_int.h"

#include "pixrelay/core/log.h"
#include "pixrelay/redis/rslot.h"

#include <string.h>

#define WATCH_EVERY_MS 2000

bool rds_node_is_primary(const struct node *n)
{
	const struct rds *r = n->r;

	if (n->role != ROLE_DATA || r->channel)
		return false;
	if (r->mode == MODE_CLUSTER)
		return n->in_map > 0;
	return (r->mode == MODE_SINGLE || r->mode == MODE_SENTINEL) && n == r->data;
}

bool rds_serving(const struct rds *r)
{
	if (r->ready)
		return true;
	if (r->channel || r->mode != MODE_CLUSTER)
		return false;
	for (const struct node *n = r->nodes; n; n = n->next)
		if (n->ready && rds_node_is_primary(n))
			return true;
	return false;
}

int rds_slots_served(const struct rds *r)
{
	int served = 0;

	if (r->channel)
		return 0;
	if (r->mode != MODE_CLUSTER)
		return r->mode != MODE_DETECT && r->data && r->data->ready ? RSLOT_COUNT : 0;
	for (int s = 0; s < RSLOT_COUNT; s++)
		served += r->slots[s] && r->slots[s]->ready;
	return served;
}

int rds_primaries(const struct rds *r, struct rds_primary *out, int max)
{
	int count = 0;

	for (const struct node *n = r->nodes; n; n = n->next) {
		if (!rds_node_is_primary(n))
			continue;
		if (count < max) {
			struct rds_primary *p = &out[count];
			p->name = n->name;
			p->ready = n->ready;
			p->replicas = n->ready ? n->replicas : -1;
			p->below = n->ready && n->replicas >= 0 && n->replicas < r->wait_replicas;
		}
		count++;
	}
	return count;
}

/* ---- the watch ---- */

/* What ROLE says: a primary lists its replicas (those online, the ones WAIT
 * counts); a replica means the map is behind. Said in the log when the
 * count crosses the wait setting. */
static void on_role(struct cmd *c, redisReply *reply, const char *err)
{
	struct node *n = c->node;
	struct rds *r = c->r;
	int count, below;

	if (!n)
		return; /* never sent: role_asked_ms runs out */
	n->role_asked_ms = 0;
	if (err || r->closing || n->ac != c->ac || reply->type != REDIS_REPLY_ARRAY ||
	    reply->elements < 1 || reply->element[0]->type != REDIS_REPLY_STRING)
		return;
	if (strcmp(reply->element[0]->str, "master") != 0) {
		n->replicas = -1;
		rds_refresh_soon(r, 0);
		return;
	}
	if (reply->elements < 3 || reply->element[2]->type != REDIS_REPLY_ARRAY)
		return;
	count = (int)reply->element[2]->elements;
	n->replicas = count;
	below = count < r->wait_replicas;
	if (below && !n->replicas_short)
		log_warn("redis %s has %d replica%s, fewer than redis-wait-replicas (%d): its "
			 "writes are refused until enough replicas are back",
			 n->name, count, count == 1 ? "" : "s", r->wait_replicas);
	else if (!below && n->replicas_short)
		log_info("redis %s has %d replica%s again, as redis-wait-replicas (%d) asks",
			 n->name, count, count == 1 ? "" : "s", r->wait_replicas);
	n->replicas_short = below;
}

/* ROLE on n, unless one is on its way (or n is not a ready primary). */
static void ask_role(struct node *n)
{
	struct rds *r = n->r;
	uint64_t now = now_ms(r);
	const char *argv[] = {"ROLE"};

	if (!r->watch_replicas || r->wait_replicas <= 0 || r->closing || !n->ready || !n->ac ||
	    !rds_node_is_primary(n))
		return;
	if (n->role_asked_ms && now < n->role_asked_ms + (uint64_t)r->timeout_ms)
		return;
	n->role_asked_ms = now ? now : 1;
	rds_internal_send(n, on_role, 1, argv);
}

static void on_watch_timer(evutil_socket_t fd, short what, void *arg)
{
	struct rds *r = arg;

	for (struct node *n = r->nodes; n; n = n->next)
		ask_role(n);
}

void rds_watch_replicas(struct rds *r)
{
	struct timeval tv = tv_ms(WATCH_EVERY_MS);

	if (r->watch_replicas)
		return;
	r->watch_replicas = 1;
	r->watch_timer = event_new(r->base, -1, EV_PERSIST, on_watch_timer, r);
	evtimer_add(r->watch_timer, &tv);
	on_watch_timer(-1, 0, r);
}

void rds_watch_node(struct node *n)
{
	ask_role(n);
}

void rds_watch_doubt(struct node *n)
{
	if (n->replicas < 0 || n->replicas >= n->r->wait_replicas)
		ask_role(n);
}
