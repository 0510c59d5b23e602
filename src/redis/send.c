/* send.c: one command on one node, and its replies. Sending it (after
 * ASKING when asked to; a script of a cluster inside MULTI, the migration
 * guard's EXISTS and EXEC), reading the reply of each part, deciding what
 * follows (answer, route again, ASK, retry, load the script again), and the
 * WAIT batching of rds_set_wait: scripts answered on a connection are held
 * until one WAIT confirms their replicas have them. What an error reply
 * means (MOVED, ASK, TRYAGAIN...) is cluster.c; the connection, node.c. */
#include "redis_int.h"

#include "pixrelay/core/ids.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/core/metrics.h"
#include "pixrelay/redis/rslot.h"

#include <stdio.h>
#include <string.h>

static const char ASKING[] = "*1\r\n$6\r\nASKING\r\n";
static const char MULTI[] = "*1\r\n$5\r\nMULTI\r\n";
static const char EXEC[] = "*1\r\n$4\r\nEXEC\r\n";

static void on_result(redisAsyncContext *ac, void *replyp, void *privdata);
static void on_part(redisAsyncContext *ac, void *replyp, void *privdata);
static void node_wait(struct node *n);

static int put(redisAsyncContext *ac, redisCallbackFn *fn, struct cmd *c, const char *buf,
	       size_t len)
{
	if (redisAsyncFormattedCommand(ac, fn, fn ? c : NULL, buf, len) != REDIS_OK)
		return -1;
	if (fn)
		c->parts++;
	return 0;
}

/* Send c on n as it is now (ready, or during its setup): with ASKING when
 * asked to, a script of a cluster inside its migration guard, a WAIT behind
 * a script when the client wants one. */
void rds_node_send(struct node *n, struct cmd *c)
{
	struct rds *r = n->r;
	redisAsyncContext *ac = n->ac;
	char guard[768];
	size_t glen = 0;
	int rc = 0;

	c->node = n;
	c->ac = ac;
	c->parts = 0;
	c->part_error = 0;
	c->after = AFTER_FREE;
	c->guard_sent = r->mode == MODE_CLUSTER && c->script && c->keylen &&
			rds_guard_format(c, guard, sizeof(guard), &glen) == 0;
	if (c->held) {
		freeReplyObject(c->held);
		c->held = NULL;
	}
	if (!ac) {
		rc = -1;
	} else if (c->asking) {
		/* the first write fails when the context is going away; then
		 * nothing was queued */
		rc = put(ac, NULL, c, ASKING, sizeof(ASKING) - 1);
		c->asking = 0;
	}
	if (rc == 0 && c->guard_sent) {
		if (put(ac, NULL, c, MULTI, sizeof(MULTI) - 1) < 0)
			rc = -1;
		else if (put(ac, on_part, c, guard, glen) < 0 ||
			 put(ac, on_part, c, c->buf, c->len) < 0 ||
			 put(ac, on_result, c, EXEC, sizeof(EXEC) - 1) < 0)
			mem_oom(__FILE__, __LINE__);
	} else if (rc == 0 && put(ac, on_result, c, c->buf, c->len) < 0) {
		rc = -1;
	}
	if (rc == 0 && c->script)
		c->wseq = ++n->wseq;
	if (rc < 0) {
		/* the connection is going away: not sent */
		n->ready = 0;
		c->node = NULL;
		if (c->icb || r->mode != MODE_CLUSTER)
			rds_park(c, 0, c->icb ? "redis connection lost" : "redis unavailable");
		else
			rds_retry_later(c, "redis unavailable");
		return;
	}
	c->sent_ms = now_ms(r);
	if (!c->icb)
		c->sent_us = ids_now_us();
	rds_list_append(&n->sent, &n->sent_tail, c);
	rds_node_arm(n);
}

/* A command of the layer itself on node n, answered to fn. */
void rds_internal_send(struct node *n, internal_fn fn, int argc, const char **argv)
{
	struct cmd *c = rds_cmd_new(n->r, NULL, NULL, 0, NULL, argc, argv, NULL, -1);

	c->icb = fn;
	c->deadline_ms = now_ms(n->r) + (uint64_t)n->r->timeout_ms;
	rds_node_send(n, c);
}

/* ---- replies ---- */

/* The last reply of one send of c is in: do what was decided. */
static void finish(struct cmd *c)
{
	struct node *n = c->node;

	rds_list_remove(&n->sent, &n->sent_tail, c);
	if (c->done || c->after == AFTER_FREE) {
		rds_cmd_free(c);
		return;
	}
	switch (c->after) {
	case AFTER_HOLD:
		rds_list_append(&n->held, &n->held_tail, c);
		rds_node_arm(n);
		node_wait(n);
		break;
	case AFTER_ROUTE:
		rds_route(c);
		break;
	case AFTER_ASK:
		c->asking = 1;
		if (c->ask->ready)
			rds_node_send(c->ask, c);
		else
			rds_retry_later(c, "redis unavailable");
		break;
	case AFTER_RELOAD:
		if (n->ready && n->ac) {
			const char *argv[] = {"SCRIPT", "LOAD",
					      scripts_body((enum script_id)(c->script - 1))};
			if (redisAsyncCommandArgv(n->ac, NULL, NULL, 3, argv, NULL) == REDIS_OK) {
				rds_node_send(n, c);
				break;
			}
		}
		rds_retry_later(c, "redis unavailable");
		break;
	default:
		rds_retry_later(c, c->why);
		break;
	}
}

/* A reply to a part of a guarded script (EXISTS, the queued EVALSHA): an
 * error there aborts the transaction; remember the first one. */
static void on_part(redisAsyncContext *ac, void *replyp, void *privdata)
{
	struct cmd *c = privdata;
	redisReply *reply = replyp;

	if (reply && reply->type == REDIS_REPLY_ERROR && !c->part_error) {
		enum rslot_error k =
		    rslot_parse_error(reply->str, reply->len, &c->part_slot, c->part_text,
				      sizeof(c->part_text), &c->part_port);
		c->part_error = (unsigned char)(k + 1);
		if (k != RSLOT_ERR_MOVED && k != RSLOT_ERR_ASK)
			snprintf(c->part_text, sizeof(c->part_text), "%s", reply->str);
	}
	if (--c->parts == 0)
		finish(c);
}

static void on_result(redisAsyncContext *ac, void *replyp, void *privdata)
{
	struct cmd *c = privdata;
	struct rds *r = c->r;
	redisReply *reply = replyp, *res = reply;

	c->after = AFTER_FREE;
	if (reply && !c->icb)
		metrics_redis((double)(ids_now_us() - c->sent_us) / 1e6);
	if (c->done)
		goto out;
	if (!reply) {
		rds_complete(c, NULL, r->closing ? "redis client closed" : "redis connection lost");
		goto out;
	}
	if (c->icb) {
		rds_complete(c, reply, reply->type == REDIS_REPLY_ERROR ? reply->str : NULL);
		goto out;
	}
	if (c->guard_sent) {
		/* EXEC: [EXISTS, the script], or an abort after an error above */
		if (reply->type == REDIS_REPLY_ARRAY && reply->elements == 2) {
			res = reply->element[1];
		} else if (c->part_error) {
			enum rslot_error k = (enum rslot_error)(c->part_error - 1);
			char text[128];
			if (k == RSLOT_ERR_MOVED || k == RSLOT_ERR_ASK)
				snprintf(text, sizeof(text), "%s %d %s:%d",
					 k == RSLOT_ERR_MOVED ? "MOVED" : "ASK", c->part_slot,
					 c->part_text, c->part_port);
			else
				snprintf(text, sizeof(text), "%s", c->part_text);
			if (!rds_redirect(c, text, strlen(text)))
				rds_give_up(c, NULL, text);
			goto out;
		}
	}
	if (res->type == REDIS_REPLY_ERROR) {
		if (!rds_redirect(c, res->str, res->len))
			rds_give_up(c, res, res->str);
		goto out;
	}
	if (r->wait_replicas > 0 && c->script) {
		c->held = rds_reply_copy(res);
		c->after = AFTER_HOLD;
	} else {
		rds_complete(c, res, NULL);
	}
out:
	if (--c->parts == 0)
		finish(c);
}

/* ---- WAIT ---- */

/* The answer to a WAIT: the scripts it covers are confirmed (or not). With
 * no reply (the connection is gone) none can be confirmed any more. */
static void on_node_wait(redisAsyncContext *ac, void *replyp, void *privdata)
{
	struct node *n = privdata;
	struct rds *r = n->r;
	redisReply *reply = replyp;
	int ok = reply && reply->type == REDIS_REPLY_INTEGER && reply->integer >= r->wait_replicas;
	char msg[120];

	n->wait_inflight = 0;
	if (reply && !ok)
		rds_watch_doubt(n);
	snprintf(msg, sizeof(msg), "redis: the change reached %lld of %d replicas in time",
		 reply && reply->type == REDIS_REPLY_INTEGER ? reply->integer : 0LL,
		 r->wait_replicas);
	while (n->held && (!reply || n->held->wseq <= n->wait_covers)) {
		struct cmd *c = n->held;
		rds_list_remove(&n->held, &n->held_tail, c);
		if (ok)
			rds_complete(c, c->held, NULL);
		else
			rds_complete(c, NULL,
				     reply	  ? msg
				     : r->closing ? "redis client closed"
						  : "redis connection lost");
		rds_cmd_free(c);
	}
	if (reply)
		node_wait(n);
}

/* One WAIT for every script answered on n and not confirmed yet, unless one
 * is on its way already: a WAIT covers every write sent before it on the
 * connection, so while it waits the next answers gather for the next one
 * (and Redis, blocked on it, lets the commands behind it queue). */
static void node_wait(struct node *n)
{
	struct rds *r = n->r;
	char w[64];
	int wl;

	if (!n->held || n->wait_inflight)
		return;
	if (!n->ac) {
		on_node_wait(NULL, NULL, n);
		return;
	}
	wl = snprintf(w, sizeof(w), "*3\r\n$4\r\nWAIT\r\n$%zu\r\n%d\r\n$%zu\r\n%ld\r\n",
		      rds_digits((size_t)r->wait_replicas), r->wait_replicas,
		      rds_digits((size_t)(r->timeout_ms / 2)), r->timeout_ms / 2);
	if (redisAsyncFormattedCommand(n->ac, on_node_wait, n, w, (size_t)wl) != REDIS_OK) {
		on_node_wait(NULL, NULL, n);
		return;
	}
	n->wait_inflight = 1;
	n->wait_covers = n->wseq;
}
