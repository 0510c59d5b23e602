/* sub.c: the pub/sub subscriber (rds_new_subscriber): one connection that
 * SUBSCRIBEs to a channel, on the one Redis or on the primary of the
 * channel's slot in a cluster, hands each message to its callback and
 * moves when that slot does. The slot map it follows is cluster.c; its
 * connection is a node of node.c. */
#include "redis_int.h"

#include <string.h>

static void on_subscription(redisAsyncContext *ac, void *replyp, void *privdata)
{
	struct node *n = privdata;
	struct rds *r = n->r;
	redisReply *reply = replyp;

	if (!reply || reply->type != REDIS_REPLY_ARRAY || reply->elements != 3 ||
	    reply->element[0]->type != REDIS_REPLY_STRING || r->closing)
		return;
	if (strcmp(reply->element[0]->str, "subscribe") == 0) {
		n->subscribed = 1;
		n->ready = 1;
		n->backoff_ms = RECONNECT_MIN_MS;
		rds_update_ready(r);
		r->on_message(r->message_ud, RDS_SUB_READY, NULL, 0);
	} else if (strcmp(reply->element[0]->str, "message") == 0 &&
		   reply->element[2]->type == REDIS_REPLY_STRING) {
		r->on_message(r->message_ud, RDS_SUB_MESSAGE, reply->element[2]->str,
			      reply->element[2]->len);
	}
}

/* SUBSCRIBE on n, the subscriber's connection; reset it when that cannot
 * be queued. */
void rds_sub_subscribe(struct node *n)
{
	const char *argv[] = {"SUBSCRIBE", n->r->channel};
	if (redisAsyncCommandArgv(n->ac, on_subscription, n, 2, argv, NULL) != REDIS_OK)
		rds_node_reset(n, "cannot subscribe");
}

/* Point the subscription at the node it belongs on: the primary of the
 * channel's slot, or the one Redis. */
void rds_sub_retarget(struct rds *r)
{
	struct node *s = r->sub, *t = NULL;

	if (r->closing)
		return;
	if (r->mode == MODE_CLUSTER)
		t = r->slots[r->channel_slot];
	else if (r->mode != MODE_DETECT)
		t = r->data && r->data->ready ? r->data : NULL;
	if (!t) {
		if (!s->ac && !evtimer_pending(s->reconnect_timer, NULL))
			rds_schedule_reconnect(s); /* look again later */
		return;
	}
	if (strcmp(s->host, t->host) != 0 || s->port != t->port || strcmp(s->path, t->path) != 0) {
		rds_node_set_address(s, t->host, t->port, t->path);
		if (s->ac)
			rds_node_reset(s, "the channel's slot moved");
	}
	if (!s->ac && !evtimer_pending(s->reconnect_timer, NULL))
		rds_connect_now(s);
}

struct rds *rds_new_subscriber(struct event_base *base, const struct rds_addr *addr,
			       long timeout_ms, const char *channel, rds_message_fn cb, void *ud)
{
	return rds_create(base, addr, timeout_ms, channel, cb, ud);
}
