/* shardq: items gathered per shard during one turn of the event loop and
 * handed to their owner in calls of a bounded size, oldest first, so that
 * many durable writes share one script call (the ingest of upstream
 * notifications, a bank's Pix). */
#include "pixrelay/redis/shardq.h"

#include "pixrelay/core/mem.h"

#include <stdlib.h>

struct shardq {
	struct event *flush;
	unsigned max;
	shardq_send_fn send;
	shardq_drop_fn drop;
	void *owner;
	struct shardq_item *items[KS_SHARDS_MAX]; /* per shard, newest first */
	unsigned count[KS_SHARDS_MAX];
	unsigned depth;		      /* calls of one shard under way, at most (0: any) */
	unsigned busy[KS_SHARDS_MAX]; /* calls under way */
	int pending;		      /* the timer is armed */
};

/* Hand up to max of shard's items, oldest first, to the owner. */
static void send_some(struct shardq *q, int shard)
{
	unsigned n = q->count[shard] < q->max ? q->count[shard] : q->max;
	struct shardq_item **items = mem_calloc(n, sizeof(*items));
	struct shardq_item **pp = &q->items[shard];

	/* the list is newest first: take the n oldest, its tail */
	for (unsigned skip = q->count[shard] - n; skip; skip--)
		pp = &(*pp)->next;
	for (unsigned i = n; i-- > 0;) {
		items[i] = *pp;
		*pp = (*pp)->next;
		items[i]->next = NULL;
	}
	q->count[shard] -= n;
	q->busy[shard]++;
	q->send(q->owner, shard, items, n);
}

static void on_flush(evutil_socket_t fd, short what, void *arg)
{
	struct shardq *q = arg;

	q->pending = 0;
	for (int s = 0; s < KS_SHARDS_MAX; s++)
		while (q->count[s] && (!q->depth || q->busy[s] < q->depth))
			send_some(q, s);
}

static void arm(struct shardq *q)
{
	if (!q->pending) {
		struct timeval zero = {0, 0};
		q->pending = 1;
		evtimer_add(q->flush, &zero);
	}
}

void shardq_done(struct shardq *q, int shard)
{
	if (q->busy[shard])
		q->busy[shard]--;
	if (q->count[shard])
		arm(q);
}

struct shardq *shardq_new(struct event_base *base, unsigned max, unsigned depth,
			  shardq_send_fn send, shardq_drop_fn drop, void *owner)
{
	struct shardq *q = mem_new(struct shardq);

	q->max = max ? max : 1;
	q->depth = depth;
	q->send = send;
	q->drop = drop;
	q->owner = owner;
	q->flush = evtimer_new(base, on_flush, q);
	if (!q->flush)
		mem_oom(__FILE__, __LINE__);
	return q;
}

void shardq_free(struct shardq *q)
{
	if (!q)
		return;
	for (int s = 0; s < KS_SHARDS_MAX; s++)
		while (q->items[s]) {
			struct shardq_item *it = q->items[s];
			q->items[s] = it->next;
			q->drop(q->owner, it);
		}
	event_free(q->flush);
	free(q);
}

void shardq_add(struct shardq *q, int shard, struct shardq_item *item)
{
	item->next = q->items[shard];
	q->items[shard] = item;
	q->count[shard]++;
	arm(q);
}
