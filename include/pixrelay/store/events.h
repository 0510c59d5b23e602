/* events: notifications about charges, and their delivery queues in Redis.
 *
 * An event is written by the same script as the state change that makes it,
 * into the shard of its account (see keyspace.h): its hash holds the payload
 * (stored once), and the shard's due set, lease set and per-order lists are
 * its delivery queue, which dispatch.c works through with event_settle.
 * Events of one order key (a charge) go out one after another. This module
 * reads, lists and replays them, in either layout (docs/event-layout.md: an
 * event with a destination is first an entry of its shard's stream, and a
 * hash only once it must wait), and trims the stream.
 */
#ifndef PIXRELAY_EVENTS_H
#define PIXRELAY_EVENTS_H

#include "pixrelay/store/store.h"
#include "pixrelay/store/auth.h"
#include "pixrelay/core/config.h"
#include "pixrelay/pix/event.h"
#include "pixrelay/pix/keyspace.h"
#include "pixrelay/redis/redis.h"

#include <stdint.h>
#include <yajl/yajl_gen.h>

/* Its calls answer through a store_fn: 0 with json, one of these, or -1. */
enum events_result { EVENTS_NOT_FOUND = 1, EVENTS_BUSY = 2, EVENTS_NO_DESTINATION = 3 };

/* An event of `account` in `env` with its attempt log, as JSON. */
void events_get(struct rds *r, const struct config *cfg, enum env env, const char *account,
		const char *id, store_fn cb, void *ud);

/* Deliver an event again (same id, fresh attempt budget) to `destination`:
 * "postback" (the charge's or the account's postbackUrl), an endpoint id
 * (its delivery to that webhook endpoint), or NULL: wherever it is dead,
 * and its postbackUrl when it is dead nowhere. result 0 when requeued, json
 * then the destinations requeued ("postback", endpoint ids, separated by
 * spaces); EVENTS_BUSY when it is already waiting or in flight there;
 * EVENTS_NO_DESTINATION when it has no delivery to that endpoint (or the
 * endpoint is deleted); EVENTS_NOT_FOUND. */
void events_replay(struct rds *r, const struct config *cfg, enum env env, const char *account,
		   const char *id, const char *destination, store_fn cb, void *ud);

/* Render event `id` (its HGETALL reply) as one JSON object into g, with its
 * attempt log when `log` (the LRANGE of its earlier attempts) is not NULL:
 * those, then the latest attempt, kept in the event itself. `leased` is
 * nonzero when the event is in its shard's lease set: a pending one then
 * reads as delivering (leasing writes nothing into the event). A field the
 * hash lacks is rendered as its default (state pending, attempts 0,
 * updatedAt and nextAttemptAt its creation; docs/event-layout.md).
 * `deliveries` (NULL: none) are its deliveries to webhook endpoints as
 * event_get.lua answers them, rendered as "endpoints" when there are any. */
void events_render(yajl_gen g, const char *id, const redisReply *event, const redisReply *log,
		   int leased, const redisReply *deliveries);

/* The events of `account`, newest first, as {"events": [...], "nextCursor": ...}.
 * When `ids_only` is nonzero, json is instead a space-separated list of ids
 * (for bulk replay). */
void events_list(struct rds *r, const struct config *cfg, enum env env, const char *account,
		 const struct event_filter *f, int ids_only, store_fn cb, void *ud);

/* Replay every event the filter selects (at most f->limit); json is
 * {"matched": n, "requeued": m}. */
void events_replay_many(struct rds *r, const struct config *cfg, enum env env, const char *account,
			const struct event_filter *f, store_fn cb, void *ud);

/* One event as a live stream sends it (evstream.h); strings borrowed for
 * the callback. */
struct events_item {
	const char *id, *type, *url, *body;
	long long created_ms;
};

#define EVENTS_AFTER_MAX 200

/* The events of `account` of `env` created at or after `from_ms`, oldest
 * first (events of one millisecond by id), skipping the first `offset` of
 * them, at most `limit` (1..EVENTS_AFTER_MAX). cb runs once, later: 0 with
 * the items (n of them; `more` is 1 when the page was full), or -1 with err.
 * Events already gone with the retention are left out. One round trip
 * (event_after.lua reads the index and every event of either layout). */
typedef void (*events_items_fn)(void *ud, int result, const struct events_item *items, size_t n,
				int more, const char *err);
void events_after(struct rds *r, const struct config *cfg, enum env env, const char *account,
		  long long from_ms, long offset, int limit, events_items_fn cb, void *ud);

/* How the delivery queue of a shard stands (shard_stats). */
struct events_stats {
	long long pending;	   /* due, or waiting for their next attempt */
	long long delivering;	   /* leased to a dispatcher now */
	long long dead;		   /* dead and still kept */
	long long earliest_due_ms; /* when the earliest pending event is due (0 = none) */
	/* by environment (enum env): */
	long long to_postback[2];     /* of pending: deliveries to postback URLs */
	long long to_endpoint[2];     /* and to webhook endpoints */
	long long held[2];	      /* deliveries waiting for a disabled endpoint */
	long long disabled[2];	      /* endpoints disabled by pixrelay (failing, 410) */
	long long disabled_by_req[2]; /* endpoints disabled by request */
};

/* Read how `shard`'s queue stands; cb runs once, later: 0 with st
 * (borrowed for the call), or -1 with err. */
void events_shard_stats(struct rds *r, const struct config *cfg, int shard,
			void (*cb)(void *ud, int result, const struct events_stats *st,
				   const char *err),
			void *ud);

/* Drop the entries of `shard`'s stream that no reader needs any more
 * (stream_trim.lua): older than the retention (cfg->event_retention_days
 * before now_ms), and never one not yet leased nor one leased now. done(ud,
 * n) runs once, later, with how many entries were dropped (-1 on failure).
 * For the janitor of a delivering process, every minute or so per shard. */
void events_trim(struct rds *r, const struct config *cfg, int shard, uint64_t now_ms,
		 void (*done)(void *ud, long long n), void *ud);

#endif
