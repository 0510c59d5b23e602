/* cache: what rarely changes, kept in the process so that a request need not
 * ask Redis — API keys (by the SHA-256 of their text), accounts (their
 * environment, ingest secret and Pix key) and what a bank's webhook call
 * needs of its connection (an object: its trust list already parsed) — and
 * forgotten at once when any process changes it.
 *
 * Changes are announced on the Redis channel <prefix>invalidate
 * (ks_invalidation_channel): "k:<sha256>" for a key, "a:<account id>" for an
 * account, "b:<connection id>" for a bank connection; the cache listens
 * with a subscriber client of its own. While that subscription is not
 * established (at start, after a lost connection) the cache holds and
 * returns nothing, so no announcement can be missed while an entry is in
 * use. A read that started before an announcement is never
 * stored after it (cache_ticket). Entries expire after a time given per
 * entry, and the table is bounded (CACHE_SLOTS entries; a new entry replaces
 * the one in its slot).
 *
 * A NULL cache is valid everywhere: it holds nothing (command-line tools).
 */
#ifndef PIXRELAY_CACHE_H
#define PIXRELAY_CACHE_H

#include "pixrelay/redis/redis.h"

#include <event2/event.h>
#include <stdint.h>

#define CACHE_SLOTS 16384

struct cache;

/* A cache listening on `channel` of the Redis at addr. Borrowed: base. */
struct cache *cache_new(struct event_base *base, const struct rds_addr *addr, long timeout_ms,
			const char *channel);
void cache_free(struct cache *c);

/* Take before reading from Redis what will be cached, and give to
 * cache_put: an announcement that came in between makes the put a no-op. */
uint64_t cache_ticket(const struct cache *c);

/* The value of `key`, borrowed until the next call on c, or NULL (absent,
 * expired, or the cache is not listening). */
const char *cache_get(struct cache *c, const char *key);

/* Remember key -> value for `ttl_ms`, unless an announcement came since
 * `ticket` or the cache is not listening. Copies both. */
void cache_put(struct cache *c, const char *key, const char *value, uint64_t ticket, long ttl_ms);

/* An object kept under `key`: its value, borrowed until the next call on c
 * (the entry may go then), or NULL (absent, expired, not an object, or the
 * cache is not listening). */
void *cache_get_obj(struct cache *c, const char *key);

/* What cache_put_obj may answer besides 0. */
enum cache_result {
	CACHE_NOT_KEPT = 1, /* not listening, or an announcement came since the ticket */
};

/* Keep `obj` under `key` for `ttl_ms`, unless an announcement came since
 * `ticket` or the cache is not listening. 0: the cache owns obj from then
 * on and frees it with obj_free when it drops the entry; CACHE_NOT_KEPT:
 * the caller still owns it. key is copied. */
int cache_put_obj(struct cache *c, const char *key, void *obj, void (*obj_free)(void *),
		  uint64_t ticket, long ttl_ms);

/* Forget `key` (what an announcement does). */
void cache_forget(struct cache *c, const char *key);

/* Hand every event of the cache's subscription (each announcement, and the
 * subscription established or lost) to `fn` too, after the cache has
 * handled it: what else must act when a key changes (api/evstream.c ends
 * the live streams of a revoked key). One watcher; fn NULL removes it.
 * Borrowed: ud, until removed or the cache is freed. NULL c is fine. */
void cache_watch(struct cache *c, rds_message_fn fn, void *ud);

/* Entries served and missed since the start (for metrics). */
void cache_counts(const struct cache *c, unsigned long long *hits, unsigned long long *misses);

#endif
