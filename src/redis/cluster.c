/* cluster.c: Redis Cluster. Detecting one (the first node answers CLUSTER
 * SLOTS with a slot map, or "cluster support disabled"), keeping the slot
 * map (CLUSTER SLOTS again after MOVED, after a lost node and every few
 * seconds), and reading the error replies that mean "not here" or "not
 * now" (MOVED, ASK, TRYAGAIN, CLUSTERDOWN, LOADING; NOSCRIPT and READONLY
 * too, in every mode) into what to do with the command. Sending it again
 * is send.c and redis.c; the nodes of the map, node.c. */
#include "redis_int.h"

#include "pixrelay/core/mem.h"
#include "pixrelay/redis/rslot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define QUICK_REDIRECTS 2	/* then a pause before each next one */
#define REFRESH_HEALTHY_MS 5000 /* the slot map is asked again this often */
#define REFRESH_UNHEALTHY_MS 200

/* A CLUSTER SLOTS answer (asked of `from`) becomes the slot map: each
 * primary gets a node (connecting when new); a node no longer in the map
 * retires unless it is the address given. */
static void apply_map(struct rds *r, const redisReply *reply, struct node *from)
{
	struct rslot_range *rg = NULL;
	int count = rslot_parse_slots(reply, from->host[0] ? from->host : NULL, &rg), primaries = 0;
	int changed = 0;

	if (count < 0) {
		rds_node_error(from, "redis %s: unreadable CLUSTER SLOTS answer", from->name);
		return;
	}
	for (struct node *n = r->nodes; n; n = n->next)
		if (n->role == ROLE_DATA)
			n->in_map = -n->in_map; /* 0 or -1: in the previous map */
	memset(r->slots, 0, RSLOT_COUNT * sizeof(struct node *));
	for (int i = 0; i < count; i++) {
		struct node *n = rds_node_get(r, rg[i].host, rg[i].hostlen, rg[i].port);
		if (n->in_map <= 0) {
			changed |= n->in_map == 0; /* new in the map */
			n->in_map = 1;
			primaries++;
		}
		for (int s = rg[i].start; s <= rg[i].end; s++)
			r->slots[s] = n;
	}
	free(rg);
	r->covered = 1;
	for (int s = 0; s < RSLOT_COUNT && r->covered; s++)
		r->covered = r->slots[s] != NULL;
	for (struct node *n = r->nodes; n; n = n->next) {
		if (n->role != ROLE_DATA || n->in_map >= 0)
			continue;
		/* in the previous map, not in this one */
		changed = 1;
		n->in_map = 0;
		if (!n->seed)
			rds_node_retire(n);
	}
	if (changed)
		rds_note(r, "redis cluster: %d primaries%s", primaries,
			 r->covered ? "" : ", some slots without one");
	if (!r->covered)
		snprintf(r->last_error, sizeof(r->last_error),
			 "redis cluster: some slots have no primary");
	rds_update_ready(r);
	if (r->channel)
		rds_sub_retarget(r);
}

/* The first answer of the first node: a slot map (a cluster) or "cluster
 * support disabled" (one Redis). */
static void on_detect(struct cmd *c, redisReply *reply, const char *err)
{
	struct node *n = c->node;
	struct rds *r = n->r;

	if (n->ac != c->ac)
		return;
	if (err && reply && strstr(err, "cluster support disabled")) {
		r->mode = MODE_SINGLE;
		rds_note(r, "redis %s: one Redis (no cluster)", n->name);
	} else if (err) {
		rds_on_setup_reply(c, reply, err);
		return;
	} else if (r->addr.db) {
		rds_node_reset(n, "is a Redis Cluster, which has only database 0: remove the /db "
				  "from the redis setting");
		return;
	} else {
		r->mode = MODE_CLUSTER;
		r->slots = mem_calloc(RSLOT_COUNT, sizeof(struct node *));
		rds_note(r, "redis %s: a Redis Cluster", n->name);
		apply_map(r, reply, n);
	}
	rds_setup_data(n);
	if (--n->setup_left == 0)
		rds_node_ready(n);
}

/* Ask n, the first node, CLUSTER SLOTS: on_detect decides the mode. */
void rds_cluster_detect(struct node *n)
{
	const char *argv[] = {"CLUSTER", "SLOTS"};
	n->setup_left++;
	rds_internal_send(n, on_detect, 2, argv);
}

static void on_refresh_reply(struct cmd *c, redisReply *reply, const char *err)
{
	struct rds *r = c->r;

	r->refreshing = 0;
	if (!err)
		apply_map(r, reply, c->node);
	rds_refresh_soon(r, r->ready ? REFRESH_HEALTHY_MS : REFRESH_UNHEALTHY_MS);
}

void rds_on_refresh_timer(evutil_socket_t fd, short what, void *arg)
{
	struct rds *r = arg;
	struct node *n = rds_any_primary(r);

	if (!n)
		for (n = r->nodes; n && !(n->role == ROLE_DATA && n->ready); n = n->next)
			;
	if (!n) {
		/* no node to ask (a subscriber connects one at a time): connect
		 * one that is idle */
		for (n = r->nodes; n; n = n->next)
			if (n->role == ROLE_DATA && !n->ac && !n->retired &&
			    !evtimer_pending(n->reconnect_timer, NULL)) {
				rds_connect_now(n);
				break;
			}
		rds_refresh_soon(r, REFRESH_UNHEALTHY_MS);
		return;
	}
	{
		const char *argv[] = {"CLUSTER", "SLOTS"};
		r->refreshing = 1;
		rds_internal_send(n, on_refresh_reply, 2, argv);
	}
}

/* Ask for the slot map in delay_ms (sooner if already planned sooner). */
void rds_refresh_soon(struct rds *r, long delay_ms)
{
	uint64_t due = now_ms(r) + (uint64_t)delay_ms;

	if (r->mode != MODE_CLUSTER || r->closing || r->refreshing)
		return;
	if (evtimer_pending(r->refresh_timer, NULL) && r->refresh_due <= due)
		return;
	{
		struct timeval tv = tv_ms(delay_ms);
		evtimer_add(r->refresh_timer, &tv);
	}
	r->refresh_due = due;
}

/* A ready primary of the map, or NULL. */
struct node *rds_any_primary(struct rds *r)
{
	for (struct node *n = r->nodes; n; n = n->next)
		if (n->role == ROLE_DATA && n->in_map && n->ready)
			return n;
	return NULL;
}

/* ---- redirections ---- */

/* An error reply that may mean "not here" or "not now": plan what to do
 * with c. Returns 1 when c will be sent again (c->after says how), 0 when
 * the error is the answer. */
bool rds_redirect(struct cmd *c, const char *err, size_t len)
{
	struct rds *r = c->r;
	char host[NODE_HOST_MAX];
	int slot = 0, port = 0;
	enum rslot_error kind = rslot_parse_error(err, len, &slot, host, sizeof(host), &port);

	if (kind == RSLOT_ERR_OTHER || c->icb || r->closing)
		return false;
	if (kind == RSLOT_ERR_NOSCRIPT) {
		if (!c->script || c->reloaded)
			return false;
		c->reloaded = 1;
		c->after = AFTER_RELOAD;
		return true;
	}
	if (now_ms(r) >= c->deadline_ms)
		return false;
	if (c->redirects < 255)
		c->redirects++;
	switch (kind) {
	case RSLOT_ERR_MOVED:
	case RSLOT_ERR_ASK:
		if (r->mode != MODE_CLUSTER)
			return false;
		if (kind == RSLOT_ERR_ASK) {
			c->ask = rds_node_get(r, host, strlen(host), port);
			c->after = AFTER_ASK;
		} else {
			r->slots[slot] = rds_node_get(r, host, strlen(host), port);
			rds_refresh_soon(r, 0);
			c->after = AFTER_ROUTE;
		}
		if (c->redirects > QUICK_REDIRECTS) {
			/* nodes that disagree while a slot changes owner send a
			 * command back and forth: let them settle */
			c->why = "redis unavailable (a slot changing owner)";
			c->after = AFTER_RETRY;
		}
		return true;
	case RSLOT_ERR_READONLY:
		/* the node is a replica now: Sentinel or the map knows the master */
		if (r->mode == MODE_SENTINEL && c->node->ac == c->ac)
			rds_node_reset(c->node, "became a replica");
		if (r->mode == MODE_CLUSTER)
			rds_refresh_soon(r, 0);
		c->why = "redis unavailable (the node became a replica)";
		c->after = AFTER_RETRY;
		return true;
	default: /* RSLOT_ERR_RETRY */
		if (r->mode == MODE_CLUSTER)
			rds_refresh_soon(r, REFRESH_UNHEALTHY_MS);
		c->why = "redis unavailable (cluster down, slot being migrated, or loading)";
		c->after = AFTER_RETRY;
		return true;
	}
}

/* The error `text` is c's answer: a redirection or a "not now" that could
 * not be followed before the timeout reads as Redis being unavailable. */
void rds_give_up(struct cmd *c, redisReply *res, const char *text)
{
	int slot, port;
	char host[NODE_HOST_MAX], msg[160];
	enum rslot_error k =
	    rslot_parse_error(text, strlen(text), &slot, host, sizeof(host), &port);

	if (k == RSLOT_ERR_OTHER || k == RSLOT_ERR_NOSCRIPT) {
		rds_complete(c, res, text);
		return;
	}
	snprintf(msg, sizeof(msg), "redis unavailable: %.120s", text);
	rds_complete(c, NULL, msg);
}
