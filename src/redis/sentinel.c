/* sentinel.c: Redis Sentinel. Asking a sentinel where the master named in
 * the redis-sentinel:// address is (SENTINEL get-master-addr-by-name),
 * pointing the data node there, checking with ROLE that it is the master,
 * and trying the next sentinel when one is down or refuses. The
 * connections themselves are node.c. */
#include "redis_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Sentinel: the next connection of this sentinel node goes to the next
 * sentinel of the address (this one is down, or refused us). */
void rds_sentinel_next(struct node *n)
{
	struct rds *r = n->r;
	struct rds_hostport *s;

	if (n->role != ROLE_SENTINEL || r->addr.nsentinels < 2)
		return;
	r->sentinel_next = (r->sentinel_next + 1) % r->addr.nsentinels;
	s = &r->addr.sentinels[r->sentinel_next];
	rds_node_set_address(n, s->host, s->port, NULL);
}

/* Sentinel: the node must be the master. */
static void on_role(struct cmd *c, redisReply *reply, const char *err)
{
	if (!err && (reply->type != REDIS_REPLY_ARRAY || reply->elements < 1 ||
		     reply->element[0]->type != REDIS_REPLY_STRING ||
		     strcmp(reply->element[0]->str, "master") != 0))
		err = "it is not the master (asking Sentinel again)";
	rds_on_setup_reply(c, reply, err);
}

/* A setup step of the master's node: ROLE must say "master". */
void rds_sentinel_check_role(struct node *n)
{
	const char *argv[] = {"ROLE"};
	n->setup_left++;
	rds_internal_send(n, on_role, 1, argv);
}

static void on_master_addr(struct cmd *c, redisReply *reply, const char *err)
{
	struct rds *r = c->r;
	struct node *d = r->data;
	char msg[300];
	long port;

	r->resolving = 0;
	if (err || reply->type != REDIS_REPLY_ARRAY || reply->elements != 2 ||
	    reply->element[0]->type != REDIS_REPLY_STRING ||
	    reply->element[1]->type != REDIS_REPLY_STRING) {
		if (!err)
			snprintf(msg, sizeof(msg), "knows no master named '%.128s'",
				 r->addr.master);
		else
			snprintf(msg, sizeof(msg), "%.200s", err);
		rds_node_error(c->node, "redis sentinel %s: %s", c->node->name, msg);
		if (r->wake_on_ready)
			event_base_loopbreak(r->base);
		rds_schedule_reconnect(d);
		return;
	}
	port = strtol(reply->element[1]->str, NULL, 10);
	if (port < 1 || port > 65535) {
		rds_node_error(c->node, "redis sentinel %s: gave the port '%.20s'", c->node->name,
			       reply->element[1]->str);
		/* a blocking open (the CLI) hears it now, not at its timeout */
		if (r->wake_on_ready)
			event_base_loopbreak(r->base);
		rds_schedule_reconnect(d);
		return;
	}
	if (strcmp(d->host, reply->element[0]->str) != 0 || d->port != port) {
		rds_node_set_address(d, reply->element[0]->str, (int)port, NULL);
		rds_note(r, "redis sentinel: master '%s' is %s", r->addr.master, d->name);
		if (d->ac)
			rds_node_reset(d, "is not the master any more");
	}
	rds_connect_now(d);
}

/* Ask a sentinel where the master is, then connect there. */
void rds_sentinel_resolve(struct rds *r)
{
	struct node *s = r->sentinel;

	if (r->closing || r->resolving)
		return;
	if (!s->ready) {
		r->resolve_wanted = 1;
		if (!s->ac && !evtimer_pending(s->reconnect_timer, NULL))
			rds_connect_now(s);
		return;
	}
	r->resolve_wanted = 0;
	r->resolving = 1;
	{
		const char *argv[] = {"SENTINEL", "get-master-addr-by-name", r->addr.master};
		rds_internal_send(s, on_master_addr, 3, argv);
	}
}
