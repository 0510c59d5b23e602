/* shardq: what arrives during one turn of the event loop, gathered per
 * shard and written with one script call per shard.
 *
 * Writes that must be durable before their answer (an upstream's
 * notification, a bank's Pix) cost one round trip and one fsync per call,
 * however many items the call carries. So items are not sent as they come:
 * each is added to its shard's list, and a zero-delay timer, run once the
 * loop has read everything that was ready, hands each shard's items to the
 * owner's send function in calls of at most `max` items, oldest first.
 * The owner packs its script's arguments and answers its items when the
 * reply comes; shardq never sees Redis.
 *
 * With a depth, a shard has at most that many calls under way: what comes
 * meanwhile waits and goes in the next call, once the owner says one is
 * done (shardq_done). A call waiting for Redis' fsync then gathers the
 * items of many turns of the loop (group commit): fewer, larger calls, and
 * fewer fsyncs per item, for at most one call's wait more.
 */
#ifndef PIXRELAY_SHARDQ_H
#define PIXRELAY_SHARDQ_H

#include "pixrelay/pix/keyspace.h"

#include <event2/event.h>

/* An item: embed it first in the owner's struct. */
struct shardq_item {
	struct shardq_item *next;
};

/* Send `n` items of `shard` (oldest first; the array is the owner's to
 * free, and so are the items) as one call. */
typedef void (*shardq_send_fn)(void *owner, int shard, struct shardq_item **items, unsigned n);
/* Answer an item that will never be sent (the queue is freed) and free it. */
typedef void (*shardq_drop_fn)(void *owner, struct shardq_item *item);

struct shardq;

/* A queue that sends through `send`, at most `max` items a call and, when
 * `depth` > 0, at most `depth` calls of one shard under way. Borrowed:
 * base, owner. */
struct shardq *shardq_new(struct event_base *base, unsigned max, unsigned depth,
			  shardq_send_fn send, shardq_drop_fn drop, void *owner);
/* One call of `shard` sent is done (its reply came, or failed): with a
 * depth, what waits may go. Call it once per call sent. */
void shardq_done(struct shardq *q, int shard);
/* Drop every item still waiting, then free. */
void shardq_free(struct shardq *q);

/* Add `item` (taken) to `shard` (0 .. KS_SHARDS_MAX-1); it goes out at the
 * end of this turn of the loop. */
void shardq_add(struct shardq *q, int shard, struct shardq_item *item);

#endif
