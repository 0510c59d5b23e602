/* dispatch: delivers postbacks from the shards' delivery queues in Redis.
 *
 * The curl multi interface runs on the process's libevent loop (no threads):
 * curl tells which sockets to watch and when to wake, libevent calls back.
 * One curl multi handle (with its connection cache) per environment.
 *
 * Each shard (keyspace.h) is worked through with one script, event_settle,
 * which records the outcomes of finished attempts and leases the next due
 * events in one call. Hot path, per shard, at saturation:
 *   - one round trip per settle call, carrying every outcome recorded since
 *     the last one (up to 256) and leasing as many events as the process has
 *     room for (up to 256): well under one round trip per delivered event;
 *   - one fsync per settle call (the outcomes and leases are one write);
 *   - the event's payload and its account's signing secrets come back with
 *     the lease: nothing else is read to send it.
 * A shard is settled when outcomes wait, when this process wrote an event
 * there (dispatch_kick), after a lease that filled the batch (more may be
 * due), and otherwise every 200 ms (events written by other processes).
 *
 * Destinations: the queue of a shard is split by destination host, and the
 * lease asks each host for exactly as many events as this process lets it
 * have: twice its concurrency limit, minus what it holds. Each host's limit
 * adapts (AIMD): it starts at delivery-per-host, grows by one after as many
 * fast successes as the limit, up to delivery-per-host-max, and halves on a
 * timeout, a connection failure, a 429 or a 5xx. After 5 timeouts in a
 * row the host's circuit opens: none of its events is leased for a cool-down (5 s, doubling up to
 * 5 min), then one probe; an answer closes it. So a
 * slow or dead destination holds few slots, and a healthy one drains its
 * backlog as fast as it answers.
 *
 * A lease lasts longer than a request can (timeout plus a margin), so one
 * event is never in flight twice; if this process dies, its leases run out
 * and any process delivers the events again. Next to each dispatcher, a
 * janitor (janitor.h) runs the expiry of due charges and the recovery of
 * half-done transfers, per shard.
 *
 * The files: dispatch.c leases and settles; delivery.c makes one
 * delivery's request and judges its end; budget.c (budget.h) holds the
 * numbers of hosts, accounts and environments; lease.c (lease.h) writes
 * event_settle's arguments and reads its leases; curlev.c (curlev.h)
 * drives curl from libevent.
 */
#ifndef PIXRELAY_DISPATCH_H
#define PIXRELAY_DISPATCH_H

#include "pixrelay/core/config.h"
#include "pixrelay/redis/redis.h"

#include <event2/event.h>
#include <stddef.h>

struct dispatch;

/* Create a dispatcher; it starts working at once. Borrowed: base, r, cfg.
 * Returns NULL after logging when the settings cannot be used. */
struct dispatch *dispatch_new(struct event_base *base, struct rds *r, const struct config *cfg);
/* Something was just written in the shard that `id` names (an account,
 * charge or event id; NULL = every shard): look at it now. d may be NULL. */
void dispatch_kick(struct dispatch *d, const char *id);
/* Shard `shard` has new work (the janitor wrote events there): settle it
 * now. Unlike dispatch_kick, also once stopped (outcomes still go out, no
 * lease is taken). d may be NULL; a shard out of range is ignored. */
void dispatch_kick_shard(struct dispatch *d, int shard);
/* Stop leasing; deliveries in flight go on, their outcomes are recorded. */
void dispatch_stop(struct dispatch *d);
/* Deliveries, outcomes and leases not yet settled. */
unsigned dispatch_inflight(const struct dispatch *d);
/* What a dispatcher holds now (for /metrics). */
struct dispatch_stats {
	unsigned active;   /* requests in flight */
	unsigned waiting;  /* leased, waiting for a slot of their host */
	unsigned outcomes; /* recorded, not yet settled in Redis */
	unsigned hosts;	   /* destination hosts it knows */
	unsigned open;	   /* of which with an open circuit */
	unsigned tenants;  /* accounts holding deliveries */
};
/* All zero when d is NULL. */
void dispatch_stats(const struct dispatch *d, struct dispatch_stats *out);

/* Abandon what is in flight (its leases will run out) and free. */
void dispatch_free(struct dispatch *d);

/* Delivery outcome of one attempt (pure, for tests): given the HTTP status
 * (0 when none) and curl's result, is it a success, a stop (410), or a
 * failure to retry? */
enum dispatch_verdict { DISPATCH_OK = 0, DISPATCH_RETRY = 1, DISPATCH_STOP = 2 };
enum dispatch_verdict dispatch_judge(long http_status, int curl_ok);

/* The destination host of a URL as the delivery queues name it: the
 * authority after "scheme://" up to the first '/', '?' or '#', without user
 * info, lower-cased ("example.com:8443"). Same rule as url_host in
 * src/store/lua/lib/event.lua. Writes "" when it does not fit. */
void dispatch_url_host(const char *url, char *out, size_t size);

#endif
