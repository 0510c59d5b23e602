/* Unit tests of shardq: items of one loop turn reach their owner per shard,
 * oldest first, in calls of at most `max`, after the loop has run once (not
 * while they are added); a freed queue drops what waits. */
#include "check.h"

#include "pixrelay/redis/shardq.h"

#include <stdlib.h>

struct item {
	struct shardq_item link; /* first */
	int n;
};

static char calls[64][64]; /* "shard:n,n,n" per call, in order */
static int ncalls, dropped;

static void on_send(void *owner, int shard, struct shardq_item **items, unsigned n)
{
	char *out = calls[ncalls++];
	int at = snprintf(out, 64, "%d:", shard);

	for (unsigned i = 0; i < n; i++) {
		struct item *it = (struct item *)items[i];
		at += snprintf(out + at, (size_t)(64 - at), "%s%d", i ? "," : "", it->n);
		free(it);
	}
	free(items);
	(*(int *)owner)++;
}

static void on_drop(void *owner, struct shardq_item *link)
{
	dropped++;
	free(link);
}

static void add(struct shardq *q, int shard, int n)
{
	struct item *it = calloc(1, sizeof(*it));
	it->n = n;
	shardq_add(q, shard, &it->link);
}

int main(void)
{
	struct event_base *base = event_base_new();
	int sends = 0;
	struct shardq *q = shardq_new(base, 3, 0, on_send, on_drop, &sends);

	for (int i = 1; i <= 7; i++)
		add(q, 5, i);
	add(q, 1023, 100);
	add(q, 0, 50);
	add(q, 1023, 101);
	CHECK_INT(ncalls, 0); /* nothing goes out while the turn goes on */
	event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
	CHECK_INT(ncalls, 5);
	CHECK_STR(calls[0], "0:50");
	CHECK_STR(calls[1], "5:1,2,3");
	CHECK_STR(calls[2], "5:4,5,6");
	CHECK_STR(calls[3], "5:7");
	CHECK_STR(calls[4], "1023:100,101");
	CHECK_INT(sends, 5);

	/* the next turn starts afresh */
	add(q, 7, 1);
	event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
	CHECK_INT(ncalls, 6);
	CHECK_STR(calls[5], "7:1");

	/* what waits when the queue is freed is dropped, never sent */
	add(q, 2, 1);
	add(q, 3, 2);
	shardq_free(q);
	CHECK_INT(dropped, 2);
	CHECK_INT(ncalls, 6);

	/* with a depth of 1, what comes while a shard's call is under way waits,
	 * and goes in one call when it is done; other shards are not held */
	q = shardq_new(base, 100, 1, on_send, on_drop, &sends);
	add(q, 4, 1);
	event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
	CHECK_INT(ncalls, 7);
	CHECK_STR(calls[6], "4:1");
	add(q, 4, 2);
	event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
	add(q, 4, 3);
	add(q, 9, 1);
	event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
	CHECK_INT(ncalls, 8);
	CHECK_STR(calls[7], "9:1");
	shardq_done(q, 4);
	event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
	CHECK_INT(ncalls, 9);
	CHECK_STR(calls[8], "4:2,3");
	shardq_done(q, 4);
	event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
	CHECK_INT(ncalls, 9);
	shardq_free(q);
	event_base_free(base);
	return check_finish("shardq");
}
